"""A verb's first GETs, sent as it starts: they travel while the client, the models and the
protocol load, and the client takes their answers as its own (:mod:`relay.edges.github.primed`).

A verb that reads before it acts (`relay status`, `result`, `resolve`) spends a third of a
second loading what it needs to understand the answer; the request itself needs only the
API, the repository and the token. When those are found the cheap way — the API by
``--api``, ``RELAY_API_URL`` or the clone's saved config (as :func:`relay.node.context.open_node`
chooses it), the repository saved at join, the token in a variable (as the first routes of
:func:`relay.edges.github.credentials.find_token`) — the GETs go out at once, conditional on
the ETag cache as the client's would be; otherwise (a GitHub App, a token in the keyring or
from gh, a clone not joined) nothing is sent early and the verb asks as it always has. The
client takes an early answer only when it would have asked the same (same token, same
conditional headers) and it came back 200 or 304; anything else it asks again.

Only the standard library and relay's light modules load here: what the verb has loaded by
its first request is held by tests/relay/test_relay_startup.py.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote, urljoin

CONNECT_WAIT = 5.0  # seconds the verb waits for its early GETs' sockets before loading on
# the open-issue list's first page as the client asks for it (a pass, `relay status`)
OPEN_ISSUES = "/issues?state=open&sort=updated&direction=desc&per_page=100"


def api_url_of(api_url: str, path: str) -> str:
    """``path`` under ``api_url`` as gidgethub joins them (``format_url``)."""
    return urljoin(api_url.removesuffix("/") + "/", path.removeprefix("/"))


def repo_path(repo: str) -> str:
    """The repository's API path as ``ApiSession`` quotes it."""
    owner, _, name = repo.partition("/")
    return f"/repos/{quote(owner, safe='')}/{quote(name, safe='')}"


def issue_paths(number: int) -> tuple[str, str]:
    """An issue and its comments, as ``load_issue`` asks for them (under the repository)."""
    return f"/issues/{number}", f"/issues/{number}/comments?per_page=100"


def start(args: argparse.Namespace, *paths: str, top: Sequence[str] = ()) -> None:
    """GET each of ``paths`` (under the repository's API path) and of ``top`` (under the
    API's) at once, in a thread each; return once their sockets are connected. Never
    fails: anything unusual is the verb's to find and say, as it would without this."""
    try:
        found = _facts(args)
    except Exception:
        return
    if found is None:
        return
    api_url, repo, token, state = found
    from relay import __version__
    from relay.edges.github.cache import EtagCache, cache_owner
    from relay.edges.github.primed import fetch_early, request_headers

    owner = cache_owner(api_url=api_url.rstrip("/"), token=token)
    cache = EtagCache.load(state / "etag-cache.json", owner=owner)
    waits = []
    for path in [repo_path(repo) + p for p in paths] + list(top):
        url = api_url_of(api_url, path)
        etag, modified = (cache._entries.get(url) or (None, None, None, None))[:2]
        headers = request_headers(
            token, etag=etag, last_modified=modified, agent=f"relay/{__version__}"
        )
        waits.append(fetch_early(url, headers))
    for connected in waits:
        connected.wait(CONNECT_WAIT)


def _facts(args: argparse.Namespace) -> tuple[str, str, str, Path] | None:
    """The API, repository, token and state directory, when found the cheap way."""
    from relay.edges.github.credentials import TOKEN_ENV_VARS, api_base_url
    from relay.edges.statefile import clone_root, git_dir, read_versioned

    if os.environ.get("RELAY_APP_ID", "").strip():  # an App's token is bought: the verb's
        return None
    token = next((v for n in TOKEN_ENV_VARS if (v := os.environ.get(n, "").strip())), None)
    if token is None:
        return None
    root = clone_root(getattr(args, "repo_dir", None) or Path.cwd())
    state = git_dir(root) / "relay"
    config = (read_versioned(state / "config.json") or {}).get("config") or {}
    if not isinstance(config, dict):
        return None
    chosen = getattr(args, "api", None) or os.environ.get("RELAY_API_URL") or config.get("api_url")
    repo = config.get("repo")
    if not chosen or not isinstance(chosen, str) or not repo or not isinstance(repo, str):
        return None
    return api_base_url(chosen), repo, token, state
