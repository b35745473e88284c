"""The infrastructure guard: shims for the infrastructure CLIs first on PATH of every command the agent runs
(and, where Linux allows, bound over the real binaries in a mount namespace of the command's own), asking
the agent over a private Unix socket whether each exact argv may run. See README.md.

Nothing is imported here: the start-up installs the guard (install.py) before the rest of it has loaded."""
