"""relay: machines hand work to each other through a repository's issues."""

__version__ = "0.1.0"

# How relay starts itself (scheduler entries, its own verbs as processes): ``-P`` keeps
# the working directory off sys.path, so a clone's own ``relay/`` (or a module named like
# one relay imports) is never imported in relay's place (Python >= 3.11).
RELAY_MODULE = ("-P", "-m", "relay.cli")
