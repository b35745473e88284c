"""Session persistence: the SessionStore protocol (store.py) and its JSONL-on-disk default (files.py)."""
