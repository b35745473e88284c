# Fixtures every test package may use: a throwaway PostgreSQL server and its databases.
pytest_plugins = ["tests.pg.fixtures"]
