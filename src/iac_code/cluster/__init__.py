"""Primitives for several instances serving as one on a shared PostgreSQL (see README.md)."""
