"""The GitHub edge: ``GitHubClient`` and the models it returns.

``relay.github`` is the only door to the API; the protocol never imports it. Layers:
``transport`` (the wire: retries, counters), ``cache`` (the ETag cache on disk),
``session`` (one aiohttp session, errors, parsing), ``client`` (the typed calls).
"""

from relay.github.client import GitHubClient
from relay.github.models import (
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
from relay.github.transport import RetryPolicy, WireStats

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
