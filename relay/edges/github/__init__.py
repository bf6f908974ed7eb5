"""The GitHub edge: ``GitHubClient`` and the models it returns.

``relay.edges.github`` is the only door to the API; the protocol never imports it. Layers:
``transport`` (the wire: retries, counters), ``cache`` (the ETag cache on disk),
``session`` (one aiohttp session, errors, parsing), ``client`` (the typed calls).
"""

from relay.edges.github.client import GitHubClient
from relay.edges.github.models import (
    Comment,
    Issue,
    IssueEvent,
    Label,
    Permission,
    Reaction,
    Ref,
    Repo,
    User,
)
from relay.edges.github.transport import RetryPolicy, WireStats

__all__ = [
    "Comment",
    "GitHubClient",
    "Issue",
    "IssueEvent",
    "Label",
    "Permission",
    "Reaction",
    "Ref",
    "Repo",
    "RetryPolicy",
    "User",
    "WireStats",
]
