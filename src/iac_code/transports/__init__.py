"""How bytes reach the ACP layer: stdio (newline-delimited JSON-RPC) and HTTP+SSE.

Kept import-free so `iac-code --help` stays fast.
"""
