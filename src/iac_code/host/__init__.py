"""The session host: the one owner of a session's life, whatever the protocol (see README.md)."""
