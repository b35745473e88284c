"""The HTTP+SSE transport: the Starlette app, its connections, their event streams and the request guard."""
