"""Issues: create, list (``state``, ``labels``, ``since``, ``sort``, ``direction``, paging),
get and update (title, body, state, state_reason, labels).

Numbers come from the repository row inside the write transaction, and the server has one
writer, so two concurrent creates can never share a number.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from relay.hub import render
from relay.hub.api_labels import ensure_labels, issue_row, label_names, labels_of, set_labels
from relay.hub.api_repos import RepoAccess, repo_access
from relay.hub.store import Store, now_us
from relay.hub.web import (
    ApiError,
    Role,
    check_body,
    created,
    hub_of,
    invalid,
    no_content,
    paged,
    paging,
    parse_since,
    read_object,
    reply,
    viewer,
)

_SORTS = {"created": "created_at", "updated": "updated_at", "comments": "comments"}
_STATE_REASONS = {"completed", "not_planned", "reopened", "duplicate", None}


def reaction_counts(store: Store, subject: str, ids: list[int]) -> dict[int, dict[str, int]]:
    """Reaction counts by content for several issues or comments, in one query."""
    out: dict[int, dict[str, int]] = {}
    if not ids:
        return out
    marks = ",".join("?" * len(ids))
    rows = store.db.execute(
        f"SELECT subject_id, content, COUNT(*) FROM reactions WHERE subject = ?"
        f" AND subject_id IN ({marks}) GROUP BY subject_id, content",
        (subject, *ids),
    )
    for subject_id, content, count in rows:
        out.setdefault(subject_id, {})[content] = count
    return out


def render_issues(
    request: web.Request, acc: RepoAccess, rows: list[dict[str, Any]], *, single: bool = False
) -> list[dict[str, Any]]:
    """Issue objects for rows of one repository, with labels and reactions batched."""
    store = hub_of(request).store
    ids = [row["id"] for row in rows]
    labels, reactions = labels_of(store, ids), reaction_counts(store, "issue", ids)
    out = []
    for row in rows:
        author = store.user(row["user_id"])
        closer = store.user(row["closed_by"]) if single and row["closed_by"] else None
        out.append(
            render.issue(
                acc.base,
                acc.full,
                row,
                labels=labels[row["id"]],
                author=author,
                association=acc.association(request, author["id"]),
                reactions=reactions.get(row["id"]),
                closed_by=closer,
                single=single,
            )
        )
    return out


def _filters(request: web.Request, acc: RepoAccess) -> tuple[str, list[Any]]:
    query = request.query
    where: list[str] = ["repo_id = ?"]
    args: list[Any] = [acc.id]
    state = query.get("state", "open")
    if state not in ("open", "closed", "all"):
        raise invalid("Issue", "state", "invalid")
    if state != "all":
        where.append("state = ?")
        args.append(state)
    since = parse_since(request)
    if since is not None:
        where.append("updated_at >= ?")
        args.append(since)
    for name in filter(None, (n.strip() for n in query.get("labels", "").split(","))):
        where.append(
            "EXISTS (SELECT 1 FROM issue_labels il JOIN labels l ON l.id = il.label_id"
            " WHERE il.issue_id = issues.id AND l.name = ?)"
        )
        args.append(name)
    return " AND ".join(where), args


async def list_issues(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/issues``; every name in ``labels`` must match."""
    acc = repo_access(request)
    where, args = _filters(request, acc)
    sort = _SORTS.get(request.query.get("sort", "created"))
    direction = request.query.get("direction", "desc").lower()
    if sort is None or direction not in ("asc", "desc"):
        raise invalid("Issue", "sort", "invalid")
    page, per_page = paging(request)
    db = hub_of(request).store.db
    total = db.execute(f"SELECT COUNT(*) FROM issues WHERE {where}", args).fetchone()[0]
    rows = db.execute(
        f"SELECT * FROM issues WHERE {where} ORDER BY {sort} {direction}, id {direction}"
        " LIMIT ? OFFSET ?",
        (*args, per_page, (page - 1) * per_page),
    )
    return paged(request, render_issues(request, acc, [dict(r) for r in rows]), total)


async def get_issue(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/issues/{n}``."""
    acc = repo_access(request)
    return reply(render_issues(request, acc, [issue_row(request, acc)], single=True)[0])


MAX_TITLE = 256  # GitHub refuses a longer issue title with a 422


def check_title(value: Any) -> str:
    """An issue title: a non-blank string (or number) of at most 256 characters (422)."""
    if not isinstance(value, str | int) or not str(value).strip():
        raise invalid("Issue", "title", "missing_field")
    if len(str(value)) > MAX_TITLE:
        raise invalid(
            "Issue", "title", "custom", f"title is too long (maximum is {MAX_TITLE} characters)"
        )
    return str(value)


def _reload(store: Store, issue_id: int) -> dict[str, Any]:
    return dict(store.db.execute("SELECT * FROM issues WHERE id = ?", (issue_id,)).fetchone())


async def create_issue(request: web.Request) -> web.Response:
    """``POST /repos/{o}/{r}/issues``: 201; labels apply only for triage access or more
    (GitHub silently drops them otherwise)."""
    acc = repo_access(request)
    me = viewer(request)
    data = await read_object(request)
    title, body = check_title(data.get("title")), check_body("Issue", data.get("body"))
    names = label_names(data) if acc.role >= Role.TRIAGE else []
    issue = open_issue(hub_of(request).store, acc, me, title, body, names)
    return created(render_issues(request, acc, [issue], single=True)[0])


def open_issue(
    store: Store,
    acc: RepoAccess,
    me: dict[str, Any],
    title: str,
    body: str | None,
    names: list[Any],
) -> dict[str, Any]:
    """Open an issue with these labels (created when new) and record it: the one way an
    issue is made, for the REST route and GraphQL's ``createIssue`` alike."""
    now = now_us()
    with store.write() as db:
        number = db.execute(
            "UPDATE repos SET next_number = next_number + 1 WHERE id = ? RETURNING next_number - 1",
            (acc.id,),
        ).fetchone()[0]
        cur = db.execute(
            "INSERT INTO issues (repo_id, number, title, body, user_id, state, created_at,"
            " updated_at) VALUES (?, ?, ?, ?, ?, 'open', ?, ?)",
            (acc.id, number, title, body, me["id"], now, now),
        )
        issue = _reload(store, cur.lastrowid or 0)
        store.record("issues", "opened", actor_id=me["id"], repo_id=acc.id, issue_id=issue["id"])
        if names:
            wanted = ensure_labels(store, acc.id, names)
            set_labels(store, issue, wanted, actor_id=me["id"], replace=False)
        return _reload(store, issue["id"])


def _state_change(issue: dict[str, Any], data: dict[str, Any], actor_id: int) -> dict[str, Any]:
    """The columns a state change sets (empty when the state stays)."""
    state, reason = data.get("state", issue["state"]), data.get("state_reason")
    if not isinstance(state, str) or state not in ("open", "closed"):
        raise invalid("Issue", "state", "invalid", "state must be open or closed")
    if not (reason is None or isinstance(reason, str)) or reason not in _STATE_REASONS:
        raise invalid("Issue", "state_reason", "invalid", "state_reason is not a known reason")
    if state == issue["state"]:
        keep_reason = "state_reason" in data and state == "closed"
        return {"state_reason": reason} if keep_reason else {}
    if state == "closed":
        return {
            "state": "closed",
            "state_reason": reason or "completed",
            "closed_at": now_us(),
            "closed_by": actor_id,
        }
    return {"state": "open", "state_reason": "reopened", "closed_at": None}


async def update_issue(request: web.Request) -> web.Response:
    """``PATCH /repos/{o}/{r}/issues/{n}``: the author or triage+ may edit."""
    acc = repo_access(request)
    issue = issue_row(request, acc)
    may_edit(acc, viewer(request), issue)
    data = await read_object(request)
    issue = edit_issue(hub_of(request).store, acc, viewer(request), issue, data)
    return reply(render_issues(request, acc, [issue], single=True)[0])


def may_edit(acc: RepoAccess, me: dict[str, Any], issue: dict[str, Any]) -> None:
    """403 unless ``me`` wrote the issue or has triage access."""
    if acc.role < Role.TRIAGE and issue["user_id"] != me["id"]:
        raise ApiError(403, "Must have triage access to this repository.")


def edit_issue(
    store: Store, acc: RepoAccess, me: dict[str, Any], issue: dict[str, Any], data: dict[str, Any]
) -> dict[str, Any]:
    """Apply a PATCH-shaped change (title, body, state, state_reason, labels) as ``me`` and
    record it; the issue afterwards. The author or triage+ may edit; labels change only for
    triage+. The REST route and GraphQL's issue mutations all come here."""
    may_edit(acc, me, issue)
    changes: dict[str, Any] = {}
    if "title" in data:
        changes["title"] = check_title(data["title"])
    if "body" in data:
        changes["body"] = check_body("Issue", data["body"])
    changes.update(_state_change(issue, data, me["id"]))
    with store.write():
        _apply(store, issue, changes, actor_id=me["id"])
        if "labels" in data and acc.role >= Role.TRIAGE:
            wanted = ensure_labels(store, acc.id, label_names(data))
            set_labels(store, issue, wanted, actor_id=me["id"], replace=True)
        return _reload(store, issue["id"])


def _apply(store: Store, issue: dict[str, Any], changes: dict[str, Any], *, actor_id: int) -> None:
    if not changes:
        return
    changes["updated_at"] = now_us()
    cols = ", ".join(f"{name} = ?" for name in changes)
    store.db.execute(f"UPDATE issues SET {cols} WHERE id = ?", (*changes.values(), issue["id"]))
    where = {"repo_id": issue["repo_id"], "issue_id": issue["id"]}
    edits = {
        k: {"from": issue[k]} for k in ("title", "body") if changes.get(k, issue[k]) != issue[k]
    }
    state = changes.get("state")
    if edits or state not in ("open", "closed"):  # the webhook's ``changes`` say what was
        store.record("issues", "edited", actor_id=actor_id, detail=json.dumps(edits), **where)
    if "title" in edits:  # GitHub's issue event for a new title
        rename = json.dumps({"from": issue["title"], "to": changes["title"]})
        store.record("issues", "renamed", actor_id=actor_id, detail=rename, **where)
    if state in ("open", "closed"):
        action = "closed" if state == "closed" else "reopened"
        reason = changes.get("state_reason") if state == "closed" else None
        store.record("issues", action, actor_id=actor_id, detail=reason, **where)


LOCK_REASONS = ("off-topic", "too heated", "resolved", "spam")


async def lock_issue(request: web.Request) -> web.Response:
    """``PUT /repos/{o}/{r}/issues/{n}/lock`` (``lock_reason``): 204; push access needed."""
    acc = repo_access(request, Role.PUSH)
    issue = issue_row(request, acc)
    reason = (await read_object(request)).get("lock_reason")
    if reason is not None and reason not in LOCK_REASONS:
        raise invalid("Issue", "lock_reason", "invalid")
    await _set_lock(request, acc, issue, locked=True, reason=reason)
    return no_content()


async def unlock_issue(request: web.Request) -> web.Response:
    """``DELETE /repos/{o}/{r}/issues/{n}/lock``: 204 (404 when it is not locked)."""
    acc = repo_access(request, Role.PUSH)
    issue = issue_row(request, acc)
    if not issue["locked"]:
        raise ApiError(404, "Not Found")
    await _set_lock(request, acc, issue, locked=False, reason=None)
    return no_content()


async def _set_lock(
    request: web.Request,
    acc: RepoAccess,
    issue: dict[str, Any],
    *,
    locked: bool,
    reason: str | None,
) -> None:
    store, me = hub_of(request).store, viewer(request)
    with store.write() as db:
        db.execute(
            "UPDATE issues SET locked = ?, lock_reason = ?, updated_at = ? WHERE id = ?",
            (int(locked), reason, now_us(), issue["id"]),
        )
        action = "locked" if locked else "unlocked"
        store.record(
            "issues", action, actor_id=me["id"], repo_id=acc.id, issue_id=issue["id"],
            detail=reason,
        )  # fmt: skip
