"""The checkers behind iac_check, the workspace summary, and the warm workers they run in (see README.md)."""
