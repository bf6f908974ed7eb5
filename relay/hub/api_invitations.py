"""Repository invitations: the repository's side (list, change, withdraw) and the invitee's
(``/user/repository_invitations``: list, accept, decline).

On GitHub ``PUT /repos/{o}/{r}/collaborators/{user}`` invites; the user collaborates once
they accept. A hub started with ``--invitations`` does the same; by default the invitation is
made and accepted at once (the suites and the demo act as the invitee straight away): the
201 answers a real invitation, none is ever pending, so these lists are empty.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from relay.hub import render
from relay.hub.api_repos import RepoAccess, repo_access, repo_object
from relay.hub.store import now_us
from relay.hub.web import (
    Role,
    hub_of,
    invalid,
    no_content,
    not_found,
    paged,
    paging,
    path_int,
    read_object,
    reply,
    viewer,
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS invitations (
  id INTEGER PRIMARY KEY AUTOINCREMENT, repo_id INTEGER NOT NULL, invitee_id INTEGER NOT NULL,
  inviter_id INTEGER NOT NULL, permission TEXT NOT NULL, created_at INTEGER NOT NULL,
  UNIQUE (repo_id, invitee_id));
"""
# An invitation names roles as the web UI does; a collaborator's row as the API's roles.
AS_INVITATION = {"pull": "read", "push": "write", "triage": "triage", "maintain": "maintain",
                 "admin": "admin"}  # fmt: skip
AS_ROLE = {"read": "pull", "write": "push", "triage": "triage", "maintain": "maintain",
           "admin": "admin"}  # fmt: skip


def invitation_object(request: web.Request, acc: RepoAccess, row: dict[str, Any]) -> dict[str, Any]:
    """GitHub's repository-invitation object."""
    store = hub_of(request).store
    return {
        "id": row["id"],
        "node_id": render.node_id("RepositoryInvitation", row["id"]),
        "repository": repo_object(request, acc, permissions=False),
        "invitee": render.user_row(acc.base, store.user(row["invitee_id"])),
        "inviter": render.user_row(acc.base, store.user(row["inviter_id"])),
        "permissions": AS_INVITATION.get(row["permission"], row["permission"]),
        "created_at": render.stamp(row["created_at"]),
        "expired": False,
        "url": f"{acc.base}/user/repository_invitations/{row['id']}",
        "html_url": f"{render.web_of(acc.base)}/{acc.full}/invitations",
    }


def invite(
    request: web.Request, acc: RepoAccess, target: dict[str, Any], permission: str
) -> dict[str, Any]:
    """Invite ``target`` (or change the pending invitation's role); its row."""
    store, me = hub_of(request).store, viewer(request)
    with store.write() as db:
        db.execute(
            "INSERT INTO invitations (repo_id, invitee_id, inviter_id, permission, created_at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (repo_id, invitee_id)"
            " DO UPDATE SET permission = excluded.permission",
            (acc.id, target["id"], me["id"], permission, now_us()),
        )
        store.record("member", "invited", actor_id=me["id"], repo_id=acc.id)
    row = store.db.execute(
        "SELECT * FROM invitations WHERE repo_id = ? AND invitee_id = ?", (acc.id, target["id"])
    ).fetchone()
    return dict(row)


def _pending(request: web.Request, where: str, args: tuple[Any, ...]) -> list[dict[str, Any]]:
    rows = hub_of(request).store.db.execute(
        f"SELECT * FROM invitations WHERE {where} ORDER BY id", args
    )
    return [dict(r) for r in rows]


def _page(request: web.Request, items: list[dict[str, Any]]) -> web.Response:
    page, per_page = paging(request)
    return paged(request, items[(page - 1) * per_page : page * per_page], len(items))


async def list_invitations(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/invitations`` (admin): the pending invitations."""
    acc = repo_access(request, Role.ADMIN)
    rows = _pending(request, "repo_id = ?", (acc.id,))
    return _page(request, [invitation_object(request, acc, row) for row in rows])


def _repo_invitation(request: web.Request, acc: RepoAccess) -> dict[str, Any]:
    rows = _pending(request, "id = ? AND repo_id = ?", (path_int(request, "invitation_id"), acc.id))
    if not rows:
        raise not_found()
    return rows[0]


async def update_invitation(request: web.Request) -> web.Response:
    """``PATCH /repos/{o}/{r}/invitations/{id}`` ``{"permissions": "write"}`` (admin)."""
    acc = repo_access(request, Role.ADMIN)
    row = _repo_invitation(request, acc)
    wanted = (await read_object(request)).get("permissions")
    if wanted not in AS_ROLE:
        raise invalid("RepositoryInvitation", "permissions", "invalid")
    store = hub_of(request).store
    with store.write() as db:
        db.execute(
            "UPDATE invitations SET permission = ? WHERE id = ?", (AS_ROLE[wanted], row["id"])
        )
    row["permission"] = AS_ROLE[wanted]
    return reply(invitation_object(request, acc, row))


async def delete_invitation(request: web.Request) -> web.Response:
    """``DELETE /repos/{o}/{r}/invitations/{id}`` (admin): withdraw it."""
    acc = repo_access(request, Role.ADMIN)
    row = _repo_invitation(request, acc)
    store = hub_of(request).store
    with store.write() as db:
        db.execute("DELETE FROM invitations WHERE id = ?", (row["id"],))
    return no_content()


def _repo_of(request: web.Request, row: dict[str, Any]) -> RepoAccess:
    """The invitation's repository, as its invitee sees it (by id: they may not see it yet)."""
    store = hub_of(request).store
    repo = store.db.execute("SELECT * FROM repos WHERE id = ?", (row["repo_id"],)).fetchone()
    if repo is None:
        raise not_found()
    owner = store.user(repo["owner_id"])
    data = {**dict(repo), "permission": None}
    from relay.hub.web import origin

    return RepoAccess(data, owner, Role.PULL, origin(request))


async def list_mine(request: web.Request) -> web.Response:
    """``GET /user/repository_invitations``: the caller's pending invitations."""
    me = viewer(request)
    rows = _pending(request, "invitee_id = ?", (me["id"],))
    return _page(request, [invitation_object(request, _repo_of(request, r), r) for r in rows])


def _mine(request: web.Request) -> dict[str, Any]:
    me = viewer(request)
    ident = path_int(request, "invitation_id")
    rows = _pending(request, "id = ? AND invitee_id = ?", (ident, me["id"]))
    if not rows:
        raise not_found()
    return rows[0]


async def accept(request: web.Request) -> web.Response:
    """``PATCH /user/repository_invitations/{id}``: collaborate, with the invited role."""
    row, me = _mine(request), viewer(request)
    store = hub_of(request).store
    with store.write() as db:
        db.execute("DELETE FROM invitations WHERE id = ?", (row["id"],))
        db.execute(
            "INSERT OR REPLACE INTO collaborators VALUES (?, ?, ?)",
            (row["repo_id"], me["id"], row["permission"]),
        )
        store.record("member", "added", actor_id=me["id"], repo_id=row["repo_id"])
    return no_content()


async def decline(request: web.Request) -> web.Response:
    """``DELETE /user/repository_invitations/{id}``: refuse it."""
    row = _mine(request)
    store = hub_of(request).store
    with store.write() as db:
        db.execute("DELETE FROM invitations WHERE id = ?", (row["id"],))
    return no_content()


def install(store: Any) -> None:
    """Create the table (idempotent)."""
    store.db.executescript(SCHEMA)


R = "/repos/{owner}/{repo}"
ROUTES = (
    ("GET", R + "/invitations", list_invitations),
    ("PATCH", R + r"/invitations/{invitation_id:\d+}", update_invitation),
    ("DELETE", R + r"/invitations/{invitation_id:\d+}", delete_invitation),
    ("GET", "/user/repository_invitations", list_mine),
    ("PATCH", r"/user/repository_invitations/{invitation_id:\d+}", accept),
    ("DELETE", r"/user/repository_invitations/{invitation_id:\d+}", decline),
)
DOC_PAGES: dict[object, str] = {
    list_invitations: "collaborators/invitations#list-repository-invitations",
    update_invitation: "collaborators/invitations#update-a-repository-invitation",
    delete_invitation: "collaborators/invitations#delete-a-repository-invitation",
    list_mine: "collaborators/invitations#list-repository-invitations-for-the-authenticated-user",
    accept: "collaborators/invitations#accept-a-repository-invitation",
    decline: "collaborators/invitations#decline-a-repository-invitation",
}
