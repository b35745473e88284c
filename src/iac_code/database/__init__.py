"""PostgreSQL plumbing shared by the session store and the cluster: the pool and the schema migrations."""
