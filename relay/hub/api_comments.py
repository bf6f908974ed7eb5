"""Issue comments, reactions (on comments and on issues) and issue events.

A new comment bumps its issue's ``comments`` count and ``updated_at``, as GitHub does, so
a client polling issues with ``since`` notices it. Reactions answer 201 when new and 200
when that user already left that reaction. Issue events are read from the store's journal.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from relay.hub import hooks, render
from relay.hub.api_issues import reaction_counts, render_issues
from relay.hub.api_labels import issue_row
from relay.hub.api_repos import RepoAccess, repo_access
from relay.hub.store import Store, now_us
from relay.hub.web import (
    ApiError,
    Role,
    api_path,
    check_body,
    hub_of,
    invalid,
    json_answer,
    no_content,
    not_found,
    one_row,
    paged,
    paging,
    parse_since,
    path_int,
    read_object,
    reply,
    viewer,
)

_COMMENT_SELECT = "SELECT c.*, i.number FROM comments c JOIN issues i ON i.id = c.issue_id"
_ISSUE_REF = "SELECT id, number FROM issues WHERE repo_id = ? AND number = ?"  # all a comment needs
EVENT_ACTIONS = ("labeled", "unlabeled", "closed", "reopened", "renamed", "locked", "unlocked")


def render_comments(
    request: web.Request, acc: RepoAccess, rows: list[dict[str, Any]], *, new: bool = False
) -> list[dict[str, Any]]:
    """Comment objects, with reaction counts batched (``new``: made just now, so none)."""
    store = hub_of(request).store
    counts = {} if new else reaction_counts(store, "comment", [row["id"] for row in rows])
    out = []
    for row in rows:
        author = store.user(row["user_id"])
        out.append(
            render.comment(
                acc.base,
                acc.full,
                row,
                number=row["number"],
                author=author,
                association=acc.association(request, author["id"]),
                reactions=counts.get(row["id"]),
            )
        )
    return out


def _list(
    request: web.Request, acc: RepoAccess, where: str, args: list[Any], *, sortable: bool = False
) -> web.Response:
    since = parse_since(request)
    if since is not None:
        where += " AND c.updated_at >= ?"
        args.append(since)
    order = "c.id"
    sort = request.query.get("sort") if sortable else None
    if sort is not None:  # GitHub: direction is ignored without sort
        if sort not in ("created", "updated"):
            raise invalid("IssueComment", "sort", "invalid", "sort must be created or updated")
        column = "c.created_at" if sort == "created" else "c.updated_at"
        direction = "asc" if request.query.get("direction") == "asc" else "desc"
        order = f"{column} {direction}, c.id {direction}"
    page, per_page = paging(request)
    db = hub_of(request).store.db
    total = db.execute(f"SELECT COUNT(*) FROM comments c WHERE {where}", args).fetchone()[0]
    rows = db.execute(
        f"{_COMMENT_SELECT} WHERE {where} ORDER BY {order} LIMIT ? OFFSET ?",
        (*args, per_page, (page - 1) * per_page),
    )
    return paged(request, render_comments(request, acc, [dict(r) for r in rows]), total)


async def list_comments(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/issues/{n}/comments`` (``since``, paging; oldest first)."""
    acc = repo_access(request)
    issue = issue_row(request, acc)
    return _list(request, acc, "c.issue_id = ?", [issue["id"]])


async def list_repo_comments(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/issues/comments`` (``since``, ``sort`` and, with it,
    ``direction``, paging; by id, oldest first, without ``sort``)."""
    acc = repo_access(request)
    return _list(request, acc, "c.repo_id = ?", [acc.id], sortable=True)


async def create_comment(request: web.Request) -> web.Response:
    """``POST /repos/{o}/{r}/issues/{n}/comments``: 201, or 422 for a missing or oversize
    body."""
    acc = repo_access(request)
    me = viewer(request)
    issue = one_row(request, _ISSUE_REF, (acc.id, path_int(request, "number")))
    data = await read_object(request)
    if data.get("body") is None:
        raise invalid("IssueComment", "body", "missing_field")
    body = check_body("IssueComment", data["body"])
    row = add_comment(hub_of(request).store, acc, me, issue, body or "")
    resp = comment_answer(request, acc, row, 201, new=True)
    resp.headers["Location"] = f"{acc.base}/repos/{acc.full}/issues/comments/{row['id']}"
    return resp


def comment_answer(
    request: web.Request, acc: RepoAccess, row: dict[str, Any], status: int, *, new: bool = False
) -> web.Response:
    """One comment's answer: :func:`render_comments`' object, its bytes written directly
    (``new``: made just now, so no reactions to count)."""
    store = hub_of(request).store
    counts = None if new else reaction_counts(store, "comment", [row["id"]]).get(row["id"])
    author = store.user(row["user_id"])
    body = render.comment_json(
        acc.base, acc.full, row, number=row["number"], author=author,
        association=acc.association(request, author["id"]), reactions=counts,
    )  # fmt: skip
    return json_answer(body, render.stamp(row["updated_at"]), status)


def add_comment(
    store: Store, acc: RepoAccess, me: dict[str, Any], issue: dict[str, Any], body: str
) -> dict[str, Any]:
    """Comment on an issue as ``me`` and record it (the issue's count and ``updated_at``
    move); the comment's row. The REST route and GraphQL's ``addComment`` come here."""
    now = now_us()
    with store.write() as db:
        cur = db.execute(
            "INSERT INTO comments (repo_id, issue_id, user_id, body, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (acc.id, issue["id"], me["id"], body, now, now),
        )
        db.execute(
            "UPDATE issues SET comments = comments + 1, updated_at = ? WHERE id = ?",
            (now, issue["id"]),
        )
        store.record(
            "issue_comment", "created", actor_id=me["id"], repo_id=acc.id,
            issue_id=issue["id"], comment_id=cur.lastrowid,
        )  # fmt: skip
    return {
        "id": cur.lastrowid, "repo_id": acc.id, "issue_id": issue["id"], "user_id": me["id"],
        "body": body, "created_at": now, "updated_at": now, "number": issue["number"],
    }  # fmt: skip


def comment_row(request: web.Request, acc: RepoAccess) -> dict[str, Any]:
    """The comment ``{comment_id}`` of the repository, or 404."""
    sql = f"{_COMMENT_SELECT} WHERE c.id = ? AND c.repo_id = ?"
    return one_row(request, sql, (path_int(request, "comment_id"), acc.id))


async def get_comment(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/issues/comments/{id}``."""
    acc = repo_access(request)
    return comment_answer(request, acc, comment_row(request, acc), 200)


def _own_or_push(request: web.Request, acc: RepoAccess, row: dict[str, Any]) -> int:
    me = viewer(request)
    if row["user_id"] != me["id"] and acc.role < Role.PUSH:
        raise ApiError(403, "Must have push access to this repository.")
    return int(me["id"])


async def update_comment(request: web.Request) -> web.Response:
    """``PATCH /repos/{o}/{r}/issues/comments/{id}``: the author or push+ may edit."""
    acc = repo_access(request)
    row = comment_row(request, acc)
    actor = _own_or_push(request, acc, row)
    data = await read_object(request)
    if data.get("body") is None:
        raise invalid("IssueComment", "body", "missing_field")
    body, store, now = check_body("IssueComment", data["body"]), hub_of(request).store, now_us()
    with store.write() as db:
        db.execute(
            "UPDATE comments SET body = ?, updated_at = ? WHERE id = ?", (body, now, row["id"])
        )
        store.record(
            "issue_comment", "edited", actor_id=actor, repo_id=acc.id,
            issue_id=row["issue_id"], comment_id=row["id"],
            detail=json.dumps({"body": {"from": row["body"]}}),
        )  # fmt: skip
    return comment_answer(request, acc, {**row, "body": body, "updated_at": now}, 200)


async def delete_comment(request: web.Request) -> web.Response:
    """``DELETE /repos/{o}/{r}/issues/comments/{id}``: 204."""
    acc = repo_access(request)
    row = comment_row(request, acc)
    actor = _own_or_push(request, acc, row)
    hooks.snapshot_comment(request, row)
    store = hub_of(request).store
    with store.write() as db:
        db.execute("DELETE FROM comments WHERE id = ?", (row["id"],))
        db.execute(
            "DELETE FROM reactions WHERE subject = 'comment' AND subject_id = ?", (row["id"],)
        )
        db.execute("UPDATE issues SET comments = comments - 1 WHERE id = ?", (row["issue_id"],))
        store.record(
            "issue_comment", "deleted", actor_id=actor, repo_id=acc.id,
            issue_id=row["issue_id"], comment_id=row["id"],
        )  # fmt: skip
    return no_content()


# --- reactions ----------------------------------------------------------------------------


def _subject(request: web.Request, acc: RepoAccess) -> tuple[str, dict[str, Any]]:
    if "comment_id" in request.match_info:
        return "comment", comment_row(request, acc)
    return "issue", issue_row(request, acc)


async def list_reactions(request: web.Request) -> web.Response:
    """``GET .../issues/comments/{id}/reactions`` and ``GET .../issues/{n}/reactions``."""
    acc = repo_access(request)
    subject, row = _subject(request, acc)
    where, args = "subject = ? AND subject_id = ?", [subject, row["id"]]
    if "content" in request.query:
        where += " AND content = ?"
        args.append(request.query["content"])
    page, per_page = paging(request)
    store = hub_of(request).store
    total = store.db.execute(f"SELECT COUNT(*) FROM reactions WHERE {where}", args).fetchone()[0]
    rows = store.db.execute(
        f"SELECT * FROM reactions WHERE {where} ORDER BY id LIMIT ? OFFSET ?",
        (*args, per_page, (page - 1) * per_page),
    )
    items = [render.reaction(acc.base, dict(r), store.user(r["user_id"])) for r in rows]
    return paged(request, items, total)


async def create_reaction(request: web.Request) -> web.Response:
    """``POST .../reactions``: 201 when new, 200 when this user already left it."""
    acc = repo_access(request)
    me = viewer(request)
    subject, row = _subject(request, acc)
    content = (await read_object(request)).get("content")
    if not isinstance(content, str) or content not in render.REACTIONS:
        raise invalid("Reaction", "content", "invalid")
    found, existing = react(hub_of(request).store, acc, me, subject, row, content)
    resp = reply(render.reaction(acc.base, found, me), 200 if existing else 201)
    if not existing:  # GitHub names the new reaction, as for every 201
        where = api_path(request.path.rstrip("/"))  # the base has GHES's prefix, if any
        resp.headers["Location"] = f"{acc.base}{where}/{found['id']}"
    return resp


def react(
    store: Store,
    acc: RepoAccess,
    me: dict[str, Any],
    subject: str,
    row: dict[str, Any],
    content: str,
) -> tuple[dict[str, Any], bool]:
    """Leave ``me``'s reaction on an issue or comment (``subject``) and record it when new;
    the reaction's row and whether it was there already. REST and GraphQL's
    ``addReaction`` both come here."""
    find = (
        "SELECT * FROM reactions WHERE subject = ? AND subject_id = ? AND user_id = ?"
        " AND content = ?"
    )
    key = (subject, row["id"], me["id"], content)
    with store.write() as db:
        existing = db.execute(find, key).fetchone()
        if existing is None:
            db.execute(
                "INSERT INTO reactions (subject, subject_id, user_id, content, created_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (*key, now_us()),
            )
            issue_id = row["id"] if subject == "issue" else row["issue_id"]
            comment_id = row["id"] if subject == "comment" else None
            store.record(
                "reaction", "created", actor_id=me["id"], repo_id=acc.id,
                issue_id=issue_id, comment_id=comment_id, detail=content,
            )  # fmt: skip
        found = dict(db.execute(find, key).fetchone())
    return found, existing is not None


async def delete_reaction(request: web.Request) -> web.Response:
    """``DELETE .../reactions/{reaction_id}``: 204 (the reactor or an admin)."""
    acc = repo_access(request)
    me = viewer(request)
    subject, row = _subject(request, acc)
    store = hub_of(request).store
    with store.write() as db:
        gone = db.execute(
            "DELETE FROM reactions WHERE id = ? AND subject = ? AND subject_id = ?"
            " AND (user_id = ? OR ?)",
            (
                path_int(request, "reaction_id"), subject, row["id"], me["id"],
                acc.role >= Role.ADMIN,
            ),
        ).rowcount  # fmt: skip
    if not gone:
        raise not_found()
    return no_content()


# --- issue events -------------------------------------------------------------------------


async def list_events(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/issues/{n}/events``: labeled, unlabeled, closed, reopened."""
    acc = repo_access(request)
    issue = issue_row(request, acc)
    where = f"issue_id = ? AND kind = 'issues' AND action IN {EVENT_ACTIONS!r}"
    page, per_page = paging(request)
    store = hub_of(request).store
    count = f"SELECT COUNT(*) FROM journal WHERE {where}"
    total = store.db.execute(count, (issue["id"],)).fetchone()[0]
    rows = store.db.execute(
        f"SELECT * FROM journal WHERE {where} ORDER BY id LIMIT ? OFFSET ?",
        (issue["id"], per_page, (page - 1) * per_page),
    )
    items = [render.event(acc.base, acc.full, dict(r), store.user(r["actor_id"])) for r in rows]
    return paged(request, items, total)


async def get_event(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/issues/events/{id}``: one event, with its issue embedded."""
    acc = repo_access(request)
    store = hub_of(request).store
    where = f"id = ? AND repo_id = ? AND kind = 'issues' AND action IN {EVENT_ACTIONS!r}"
    event_id = path_int(request, "event_id")
    row = one_row(request, f"SELECT * FROM journal WHERE {where}", (event_id, acc.id))
    issue = dict(
        store.db.execute("SELECT * FROM issues WHERE id = ?", (row["issue_id"],)).fetchone()
    )
    out = render.event(acc.base, acc.full, row, store.user(row["actor_id"]))
    return reply({**out, "issue": render_issues(request, acc, [issue])[0]})
