"""The HTTP server's connections shared by every instance of a database (`ClusterBackend`, backend.py):
the HTTP transport's `Backend` built on the cluster's tables. It sits above both: the transport only
moves bytes and knows nothing of the database, the cluster knows nothing of HTTP."""
