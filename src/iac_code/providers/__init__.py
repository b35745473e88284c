"""Model providers: each streams one model call as `ProviderEvent`s (see base.py)."""
