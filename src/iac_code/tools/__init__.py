"""Tools the model can call. Each is small; see base.py for the contract."""
