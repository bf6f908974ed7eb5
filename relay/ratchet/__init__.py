"""The ratchet's driver: it reads the spine from disk, runs the maker, the gates, the
checkers and the verifier as processes, and carries out what ``relay.loop`` decides, with
git through ``relay.edges.worktree``."""
