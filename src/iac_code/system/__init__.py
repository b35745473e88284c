"""What the agent asks of the operating system, for every layer above: child processes (and the reaper
that ends what they leave behind), a pool of daemon threads for blocking calls, the bundled ripgrep."""
