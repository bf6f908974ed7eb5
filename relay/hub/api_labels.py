"""Repository labels and the labels on an issue.

Labels are relay's baton, so the details follow GitHub: names are unique regardless of
case, at most 50 characters, a duplicate is 422 ``already_exists``; adding an unknown label
to an issue creates it; every change records a ``labeled``/``unlabeled`` issue event with
its actor and moves the issue's ``updated_at`` (``since`` polling depends on it).
"""

from __future__ import annotations

import re
from typing import Any

from aiohttp import web

from relay.hub import render
from relay.hub.api_repos import RepoAccess, repo_access
from relay.hub.store import Store, now_us
from relay.hub.web import (
    MAX_LABEL,
    MAX_LABEL_DESCRIPTION,
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
    read_json,
    read_object,
    reply,
    viewer,
)

_COLOR = re.compile(r"^[0-9a-fA-F]{6}$")
DEFAULT_COLOR = "ededed"
REMOVE_DOCS = "https://docs.github.com/rest/issues/labels#remove-a-label-from-an-issue"


def check_name(name: Any) -> str:
    """A label name: a non-empty string of at most 50 characters (422 otherwise)."""
    if not isinstance(name, str) or not name.strip():
        raise invalid("Label", "name", "missing_field")
    if len(name) > MAX_LABEL:
        message = f"name is too long (maximum is {MAX_LABEL} characters)"
        raise invalid("Label", "name", "invalid", message)
    return name


def check_description(value: Any) -> str | None:
    """A label description: a string of at most 100 characters, or null (422 otherwise)."""
    description = check_text("Label", "description", value)
    if description is not None and len(description) > MAX_LABEL_DESCRIPTION:
        message = f"description is too long (maximum is {MAX_LABEL_DESCRIPTION} characters)"
        raise invalid("Label", "description", "custom", message)
    return description


def check_color(color: Any) -> str:
    """A six-digit hex colour, with or without the leading ``#``."""
    if color is None:
        return DEFAULT_COLOR
    if not isinstance(color, str) or not _COLOR.match(color.lstrip("#")):
        raise invalid("Label", "color", "invalid")
    return color.lstrip("#").lower()


def find_label(store: Store, repo_id: int, name: str) -> dict[str, Any] | None:
    """The repository's label with this name (case-insensitive), or None."""
    row = store.db.execute(
        "SELECT * FROM labels WHERE repo_id = ? AND name = ?", (repo_id, name)
    ).fetchone()
    return None if row is None else dict(row)


def labels_of(store: Store, issue_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """The labels of several issues in one query, each list sorted by name."""
    out: dict[int, list[dict[str, Any]]] = {i: [] for i in issue_ids}
    if not issue_ids:
        return out
    marks = ",".join("?" * len(issue_ids))
    rows = store.db.execute(
        f"SELECT il.issue_id, l.* FROM issue_labels il JOIN labels l ON l.id = il.label_id"
        f" WHERE il.issue_id IN ({marks}) ORDER BY l.name COLLATE NOCASE",
        issue_ids,
    )
    for row in rows:
        out[row["issue_id"]].append(dict(row))
    return out


def ensure_labels(store: Store, repo_id: int, names: list[Any]) -> list[dict[str, Any]]:
    """The labels with these names, creating the missing ones (inside a transaction)."""
    found: dict[int, dict[str, Any]] = {}  # by id: "Dup" and "dup" are one label
    for name in [check_name(n) for n in names]:
        label = find_label(store, repo_id, name)
        if label is None:
            store.db.execute(
                "INSERT INTO labels (repo_id, name, color) VALUES (?, ?, ?)",
                (repo_id, name, DEFAULT_COLOR),
            )
            label = find_label(store, repo_id, name)
            assert label is not None
        found.setdefault(label["id"], label)
    return list(found.values())


def set_labels(
    store: Store,
    issue: dict[str, Any],
    wanted: list[dict[str, Any]],
    *,
    actor_id: int,
    replace: bool,
) -> None:
    """Add (or replace with) labels on an issue, recording one event per change."""
    current = {lab["id"]: lab for lab in labels_of(store, [issue["id"]])[issue["id"]]}
    wanted_ids = {lab["id"] for lab in wanted}
    added = [lab for lab in wanted if lab["id"] not in current]
    removed = [lab for i, lab in current.items() if replace and i not in wanted_ids]
    for lab in added:
        store.db.execute("INSERT INTO issue_labels VALUES (?, ?)", (issue["id"], lab["id"]))
        _journal(store, issue, lab, "labeled", actor_id)
    for lab in removed:
        store.db.execute(
            "DELETE FROM issue_labels WHERE issue_id = ? AND label_id = ?",
            (issue["id"], lab["id"]),
        )
        _journal(store, issue, lab, "unlabeled", actor_id)
    if added or removed:
        store.db.execute("UPDATE issues SET updated_at = ? WHERE id = ?", (now_us(), issue["id"]))


def _journal(
    store: Store, issue: dict[str, Any], lab: dict[str, Any], action: str, actor_id: int
) -> None:
    store.record(
        "issues",
        action,
        actor_id=actor_id,
        repo_id=issue["repo_id"],
        issue_id=issue["id"],
        label_name=lab["name"],
        label_color=lab["color"],
    )


def label_names(data: Any) -> list[Any]:
    """Label names from ``{"labels": [...]}`` or a bare list, of strings or ``{"name"}``."""
    items = data.get("labels", []) if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise invalid("Label", "labels", "invalid")
    return [item.get("name") if isinstance(item, dict) else item for item in items]


def issue_row(request: web.Request, acc: RepoAccess) -> dict[str, Any]:
    """The issue ``{number}`` of the repository, or 404."""
    sql = "SELECT * FROM issues WHERE repo_id = ? AND number = ?"
    return one_row(request, sql, (acc.id, path_int(request, "number")))


# --- repository labels -------------------------------------------------------------------


async def list_labels(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/labels``."""
    acc = repo_access(request)
    page, per_page = paging(request)
    db = hub_of(request).store.db
    total = db.execute("SELECT COUNT(*) FROM labels WHERE repo_id = ?", (acc.id,)).fetchone()[0]
    rows = db.execute(
        "SELECT * FROM labels WHERE repo_id = ? ORDER BY name COLLATE NOCASE LIMIT ? OFFSET ?",
        (acc.id, per_page, (page - 1) * per_page),
    )
    return paged(request, [render.label(acc.base, acc.full, dict(r)) for r in rows], total)


async def create_label(request: web.Request) -> web.Response:
    """``POST /repos/{o}/{r}/labels``: 201, or 422 ``already_exists``."""
    acc = repo_access(request, Role.PUSH)
    data = await read_object(request)
    name, color = check_name(data.get("name")), check_color(data.get("color"))
    description = check_description(data.get("description"))
    store = hub_of(request).store
    with store.write() as db:
        if find_label(store, acc.id, name) is not None:
            raise invalid("Label", "name", "already_exists")
        db.execute(
            "INSERT INTO labels (repo_id, name, color, description) VALUES (?, ?, ?, ?)",
            (acc.id, name, color, description),
        )
        store.record(
            "label", "created", actor_id=viewer(request)["id"], repo_id=acc.id,
            label_name=name, label_color=color,
        )  # fmt: skip
    label = find_label(store, acc.id, name)
    assert label is not None
    return created(render.label(acc.base, acc.full, label))


def _named_label(request: web.Request, acc: RepoAccess) -> dict[str, Any]:
    label = find_label(hub_of(request).store, acc.id, request.match_info["name"])
    if label is None:
        raise not_found()
    return label


async def get_label(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/labels/{name}``."""
    acc = repo_access(request)
    return reply(render.label(acc.base, acc.full, _named_label(request, acc)))


async def update_label(request: web.Request) -> web.Response:
    """``PATCH /repos/{o}/{r}/labels/{name}`` (``new_name``, ``color``, ``description``)."""
    acc = repo_access(request, Role.PUSH)
    label = _named_label(request, acc)
    data = await read_object(request)
    name = check_name(data.get("new_name", label["name"]))
    color = check_color(data.get("color", label["color"]))
    description = check_description(data.get("description", label["description"]))
    store = hub_of(request).store
    with store.write() as db:
        clash = find_label(store, acc.id, name)
        if clash is not None and clash["id"] != label["id"]:
            raise invalid("Label", "name", "already_exists")
        db.execute(
            "UPDATE labels SET name = ?, color = ?, description = ? WHERE id = ?",
            (name, color, description, label["id"]),
        )
        store.record(
            "label", "edited", actor_id=viewer(request)["id"], repo_id=acc.id,
            label_name=name, label_color=color,
        )  # fmt: skip
    changed = {**label, "name": name, "color": color, "description": description}
    return reply(render.label(acc.base, acc.full, changed))


async def delete_label(request: web.Request) -> web.Response:
    """``DELETE /repos/{o}/{r}/labels/{name}``: 204; the label leaves every issue too."""
    acc = repo_access(request, Role.PUSH)
    label = _named_label(request, acc)
    store = hub_of(request).store
    with store.write() as db:
        db.execute("DELETE FROM issue_labels WHERE label_id = ?", (label["id"],))
        db.execute("DELETE FROM labels WHERE id = ?", (label["id"],))
        store.record(
            "label", "deleted", actor_id=viewer(request)["id"], repo_id=acc.id,
            label_name=label["name"], label_color=label["color"],
        )  # fmt: skip
    return no_content()


# --- labels on an issue -------------------------------------------------------------------


def _issue_labels(request: web.Request, acc: RepoAccess, issue_id: int) -> web.Response:
    labels = labels_of(hub_of(request).store, [issue_id])[issue_id]
    return reply([render.label(acc.base, acc.full, lab) for lab in labels])


async def list_issue_labels(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/issues/{n}/labels``."""
    acc = repo_access(request)
    issue = issue_row(request, acc)
    labels = labels_of(hub_of(request).store, [issue["id"]])[issue["id"]]
    page, per_page = paging(request)
    window = labels[(page - 1) * per_page : page * per_page]
    items = [render.label(acc.base, acc.full, lab) for lab in window]
    return paged(request, items, len(labels))


async def _change_issue_labels(request: web.Request, *, replace: bool) -> web.Response:
    acc = repo_access(request, Role.TRIAGE)
    issue = issue_row(request, acc)
    names = label_names(await read_json(request))
    store = hub_of(request).store
    with store.write():
        wanted = ensure_labels(store, acc.id, names)
        set_labels(store, issue, wanted, actor_id=viewer(request)["id"], replace=replace)
    return _issue_labels(request, acc, issue["id"])


async def add_issue_labels(request: web.Request) -> web.Response:
    """``POST /repos/{o}/{r}/issues/{n}/labels``: adds; answers every label on the issue."""
    return await _change_issue_labels(request, replace=False)


async def set_issue_labels(request: web.Request) -> web.Response:
    """``PUT /repos/{o}/{r}/issues/{n}/labels``: replaces all labels."""
    return await _change_issue_labels(request, replace=True)


async def clear_issue_labels(request: web.Request) -> web.Response:
    """``DELETE /repos/{o}/{r}/issues/{n}/labels``: 204."""
    acc = repo_access(request, Role.TRIAGE)
    issue = issue_row(request, acc)
    store = hub_of(request).store
    with store.write():
        set_labels(store, issue, [], actor_id=viewer(request)["id"], replace=True)
    return no_content()


async def remove_issue_label(request: web.Request) -> web.Response:
    """``DELETE /repos/{o}/{r}/issues/{n}/labels/{name}``: the remaining labels, or 404
    "Label does not exist" when the issue does not carry it. The name must match the
    label's case exactly here, unlike everywhere else labels are named."""
    acc = repo_access(request, Role.TRIAGE)
    issue = issue_row(request, acc)
    store = hub_of(request).store
    current = labels_of(store, [issue["id"]])[issue["id"]]
    wanted = request.match_info["name"]
    if not any(lab["name"] == wanted for lab in current):
        raise ApiError(404, "Label does not exist", docs=REMOVE_DOCS)
    keep = [lab for lab in current if lab["name"] != wanted]
    with store.write():
        set_labels(store, issue, keep, actor_id=viewer(request)["id"], replace=True)
    return _issue_labels(request, acc, issue["id"])
