"""relay: machines hand work to each other through a repository's issues."""

__version__ = "0.1.0"
