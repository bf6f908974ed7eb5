"""The clone opened before its node context, with git given the node's token: what a verb
that fetches first needs, without the node's models, roster or protocol (they load after
the fetch, while nothing waits on the network)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from relay.edges.git import Clone


def open_clone(path: Path, *, api: str | None = None) -> Clone:
    """The clone at ``path`` opened before its node context (`init`, `join`'s first pull,
    `doctor`'s fetch). Git gets the node's token (any route, a GitHub App's included) for
    the API that ``--api``, ``RELAY_API_URL``, the saved node config or the clone's master
    section names; when none does (a fresh clone's first join), ``RELAY_TOKEN`` for the
    origin."""
    from relay.edges.git import Clone
    from relay.edges.github.credentials import api_base_url, find_token
    from relay.edges.statefile import git_dir, read_versioned
    from relay.errors import ConfigError

    clone = Clone.open_local(path)  # (GitPython is not loaded for the fetch)
    state = git_dir(clone.root) / "relay"
    url = api or os.environ.get("RELAY_API_URL")
    if not url:
        saved = ((read_versioned(state / "config.json") or {}).get("config") or {}).get("api_url")
        if saved is not None and not isinstance(saved, str):  # the models say what is wrong
            from relay.edges.local import NodeState

            config = NodeState(state).load_config()
            saved = config.api_url if config else None
        url = saved
    if not url:
        from relay.node.spine import read_master

        try:
            url = read_master(clone.root).api_url
        except (ConfigError, ValueError):
            return clone
    api_url = api_base_url(url)
    app = None
    if os.environ.get("RELAY_APP_ID", "").strip():  # a GitHub App (appauth loads asyncio)
        from relay.edges.github.appauth import from_env

        app = from_env()
    token_path = state / "token"

    def token() -> str | None:
        try:
            return find_token(api_url=api_url, token_file=token_path, app=app).value
        except ConfigError:
            return None

    clone.token = token
    clone.token_scope = web_base(api_url)
    return clone


def web_base(api_url: str) -> str:
    """Where people read what the API serves: github.com for the cloud, /api/v3 cut for GHES."""
    parts = urlsplit(api_url.rstrip("/"))
    if parts.hostname == "api.github.com":
        return "https://github.com"
    if parts.path.endswith("/api/v3"):
        return f"{parts.scheme}://{parts.netloc}{parts.path[: -len('/api/v3')]}"
    return api_url.rstrip("/")
