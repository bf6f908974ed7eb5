"""The GitHub edge: ``GitHubClient`` and the models it returns.

``relay.edges.github`` is the only door to the API; the protocol never imports it. Layers:
``transport`` (the wire: retries, counters), ``cache`` (the ETag cache on disk),
``session`` (one aiohttp session, errors, parsing), ``client`` (the typed calls).

The names below load on first use: importing ``relay.edges.github.credentials`` (all an
idle pass needs of this package) must not load aiohttp and the models.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_MODELS = ("Comment", "Issue", "IssueEvent", "Label", "Permission", "Reaction", "Ref", "Repo")
_HOME: dict[str, str] = {
    "GitHubClient": "relay.edges.github.client",
    **{name: "relay.edges.github.models" for name in (*_MODELS, "User")},
    "RetryPolicy": "relay.edges.github.transport",
    "WireStats": "relay.edges.github.transport",
    "models": "relay.edges.github.models",
}


def __getattr__(name: str) -> Any:
    """Load a name of the package (its module) when first asked for."""
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(home)
    return module if name == "models" else getattr(module, name)


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
