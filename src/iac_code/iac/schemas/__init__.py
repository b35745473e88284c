"""Provider schemas pinned to a module's lock file: `terraform providers schema -json`, kept per type (README.md)."""
