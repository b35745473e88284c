"""The databases' plumbing: the embedded SQLite file (sqlite.py) and PostgreSQL (pool, migrations), shared by
the session stores and the cluster."""
