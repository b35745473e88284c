"""Session persistence: the SessionStore protocol (store.py), its SQLite default (sqlite.py), PostgreSQL
(postgres.py), chosen by open.py; the legacy file store (files.py), imported once (import_files.py)."""
