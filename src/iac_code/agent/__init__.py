"""The agent runtime: the turn loop (loop.py) and what it yields (events.py)."""
