"""The HTTP+SSE transport: the Starlette app, its connections, their event streams and who may call it (auth.py)."""
