"""The ACP face of iac-code: JSON-RPC methods, session updates and permissions over a transport.

Kept import-free so `iac-code --help` stays fast; the SDK is loaded by `server.serve`.
"""
