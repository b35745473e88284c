"""Code that runs inside the warm worker processes (standard library plus the tool it wraps, nothing of iac_code)."""
