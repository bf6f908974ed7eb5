"""I/O, one outside world a module: GitHub, git, task steps, the node's local state, files."""
