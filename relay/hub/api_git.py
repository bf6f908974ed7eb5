"""Smart HTTP git at GitHub's paths: ``/<owner>/<repo>.git/info/refs``, ``git-upload-pack``
and ``git-receive-pack``, authenticated with the API's tokens (Basic, any user name) and
the API's access rules; git's own upload-pack and receive-pack do the git (see ``git``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from aiohttp import web

from relay.hub.api_refs import bare_of
from relay.hub.api_repos import repo_access
from relay.hub.git import SERVICES, serve_git
from relay.hub.web import ApiError, Moved, Role, hub_of

CHALLENGE = {"WWW-Authenticate": 'Basic realm="GitHub"'}
PREFIX = "/{owner}/{repo:[^/]+?}.git/"


def text(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    """A plain-text answer, as GitHub's git host gives (git prints it to the user)."""
    return web.Response(status=status, text=message + "\n", headers=headers)


def challenge() -> web.Response:
    """401 asking for credentials: git then asks its credential helper and retries."""
    return text(401, "Invalid username or token.", CHALLENGE)


async def service(request: web.Request) -> web.StreamResponse:
    """One smart-HTTP request: refs advertisement, fetch or push."""
    tail = request.match_info["tail"]
    name = request.query.get("service", "") if tail == "info/refs" else tail
    if name not in SERVICES:  # GitHub serves no dumb protocol
        return text(403, "Smart HTTP only: use a git client of version 1.6.6 or later.")
    push = name == "git-receive-pack"
    who = request.get("viewer")
    try:
        acc = repo_access(request)
    except Moved as moved:  # a renamed repository: git follows GitHub's redirect
        query = f"?{request.query_string}" if request.query_string else ""
        where = f"{request.scheme}://{request.host}/{moved.full}.git/{tail}{query}"
        return web.Response(status=moved.status, headers={"Location": where})
    except ApiError as err:
        if err.status != 404:
            raise
        return challenge() if who is None else text(404, "Repository not found.")
    if push and who is None:
        return challenge()
    if push and acc.role < Role.PUSH:
        return text(403, f"Permission to {acc.full}.git denied to {who['login'] if who else ''}.")
    hub = hub_of(request)
    bare = bare_of(request, acc.id)
    user = who["login"] if who is not None and push else None
    extra = hook_env(acc.role >= Role.ADMIN) if push else None
    if extra is not None:  # the protected branches whose restrictions leave the pusher out
        from relay.hub.api_orgs import restricted_branches
        from relay.hub.protection import load

        shut = restricted_branches(hub.store, load(bare.path), who)
        extra["RELAY_HUB_RESTRICTED"] = ",".join(shut)
    resp = await serve_git(request, bare, name, user, extra)
    if push:
        hub.hosted.discard(acc.id)  # re-read: the push may be the repository's first
    return resp


def hook_env(admin: bool) -> dict[str, str]:
    """What the ``proc-receive`` hook (``relay.hub.receive``) needs: this interpreter, where
    relay is, and whether the pusher administers the repository (protection may not bind)."""
    root = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    return {"RELAY_HUB_PYTHON": sys.executable, "PYTHONPATH": path,
            "RELAY_HUB_ADMIN": "1" if admin else "0"}  # fmt: skip


ROUTES = (
    ("GET", PREFIX + "{tail:info/refs}", service),
    ("POST", PREFIX + "{tail:git-upload-pack|git-receive-pack}", service),
)
