"""The per-user warm process: `iac-code acp` on stdio hands its stdio to a process that has already
imported everything, which forks a child to serve it (README.md)."""
