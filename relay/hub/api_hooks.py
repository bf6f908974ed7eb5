"""``/repos/{o}/{r}/hooks``: list, create (with its ``ping``), get, update and delete a
repository webhook, admin only, with GitHub's shapes and 422 texts. Deliveries: ``hooks``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from aiohttp import web

from relay.hub import render
from relay.hub.hooks import HOOKS, ZEN, Delivery, hook_rows, render_hook, repository_object
from relay.hub.store import now_us
from relay.hub.web import (
    ApiError,
    Role,
    check_text,
    created,
    hub_of,
    invalid,
    no_content,
    not_found,
    one_row,
    paged,
    paging,
    path_int,
    read_object,
    reply,
    viewer,
)

if TYPE_CHECKING:
    from relay.hub.api_repos import RepoAccess

_CONTENT_TYPES = ("json", "form")


def _check(data: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
    """The hook's columns from a create or update body (422 as GitHub words it)."""
    config = data.get("config", {} if old else None)
    if not isinstance(config, dict):
        raise invalid("Hook", "config", "missing_field")
    url = config.get("url", old["url"] if old else None)
    parts = urlsplit(url) if isinstance(url, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ApiError(422, "Validation Failed", errors=[{"resource": "Hook", "code": "custom",
                       "message": "Config must contain URL for webhooks"}])  # fmt: skip
    content_type = config.get("content_type", old["content_type"] if old else "form")
    if content_type not in _CONTENT_TYPES:
        raise invalid("Hook", "content_type", "invalid")
    events = data.get("events", json.loads(old["events"]) if old else ["push"])
    if not isinstance(events, list) or not all(isinstance(e, str) for e in events) or not events:
        raise invalid("Hook", "events", "invalid")
    secret = check_text("Hook", "secret", config.get("secret", old["secret"] if old else None))
    return {
        "url": url, "content_type": content_type, "secret": secret or None,
        "insecure_ssl": str(config.get("insecure_ssl", old["insecure_ssl"] if old else "0")),
        "events": json.dumps(sorted(set(events))),
        "active": int(bool(data.get("active", old["active"] if old else True))),
    }  # fmt: skip


def _admin_access(request: web.Request) -> RepoAccess:
    from relay.hub.api_repos import repo_access

    acc = repo_access(request)
    viewer(request)
    if acc.role < Role.ADMIN:  # GitHub hides hooks from anyone short of admin
        raise not_found()
    return acc


def _hook(request: web.Request, acc: RepoAccess) -> dict[str, Any]:
    sql = "SELECT * FROM hooks WHERE id = ? AND repo_id = ?"
    return one_row(request, sql, (path_int(request, "hook_id"), acc.id))


async def list_hooks(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/hooks`` (admin only)."""
    acc = _admin_access(request)
    rows = hook_rows(hub_of(request).store, acc.id)
    page, per_page = paging(request)
    window = rows[(page - 1) * per_page : page * per_page]
    return paged(request, [render_hook(acc.base, acc.full, r) for r in window], len(rows))


async def get_hook(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/hooks/{id}``."""
    acc = _admin_access(request)
    return reply(render_hook(acc.base, acc.full, _hook(request, acc)))


async def create_hook(request: web.Request) -> web.Response:
    """``POST /repos/{o}/{r}/hooks``: 201 and a ``ping``; 422 when that URL is hooked."""
    acc = _admin_access(request)
    cols = _check(await read_object(request), None)
    store, now = hub_of(request).store, now_us()
    if any(r["url"] == cols["url"] for r in hook_rows(store, acc.id)):
        raise ApiError(422, "Validation Failed", errors=[{"resource": "Hook", "code": "custom",
                       "message": "Hook already exists on this repository"}])  # fmt: skip
    with store.write() as db:
        cur = db.execute(
            "INSERT INTO hooks (repo_id, url, content_type, secret, insecure_ssl, events,"
            " active, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?)",
            (acc.id, *cols.values(), now, now),
        )
    request.app[HOOKS].forget()
    row = dict(store.db.execute("SELECT * FROM hooks WHERE id = ?", (cur.lastrowid,)).fetchone())
    hook = render_hook(acc.base, acc.full, row)
    ping = {
        "zen": ZEN, "hook_id": row["id"], "hook": hook,
        "repository": repository_object(request, acc),
        "sender": render.user_row(acc.base, viewer(request)),
    }  # fmt: skip
    if row["active"]:
        request.app[HOOKS].enqueue(
            Delivery(
                row["id"],
                row["url"],
                row["content_type"],
                row["secret"],
                "ping",
                ping,
                target_id=acc.id,
            )
        )
    return created(hook)


async def update_hook(request: web.Request) -> web.Response:
    """``PATCH /repos/{o}/{r}/hooks/{id}``: change the config, events or ``active``."""
    acc = _admin_access(request)
    old = _hook(request, acc)
    cols = _check(await read_object(request), old)
    store = hub_of(request).store
    with store.write() as db:
        sets = ", ".join(f"{name} = ?" for name in cols)
        db.execute(
            f"UPDATE hooks SET {sets}, updated_at = ? WHERE id = ?",
            (*cols.values(), now_us(), old["id"]),
        )
    request.app[HOOKS].forget()
    return reply(render_hook(acc.base, acc.full, _hook(request, acc)))


async def delete_hook(request: web.Request) -> web.Response:
    """``DELETE /repos/{o}/{r}/hooks/{id}``: 204."""
    acc = _admin_access(request)
    row = _hook(request, acc)
    with hub_of(request).store.write() as db:
        db.execute("DELETE FROM hooks WHERE id = ?", (row["id"],))
    request.app[HOOKS].forget()
    return no_content()


R = "/repos/{owner}/{repo}/hooks"
ROUTES = (
    ("GET", R, list_hooks),
    ("POST", R, create_hook),
    ("GET", R + r"/{hook_id:\d+}", get_hook),
    ("PATCH", R + r"/{hook_id:\d+}", update_hook),
    ("DELETE", R + r"/{hook_id:\d+}", delete_hook),
)
