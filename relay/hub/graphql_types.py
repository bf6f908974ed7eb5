"""The objects GraphQL answers with: one class per GitHub type the hub serves, named as the
type, each field a property or a method (``field(info, **arguments)``) over the store's rows.

Reads only: the mutations live in ``api_graphql`` and write through the REST handlers' own
functions. Global ids are GitHub's legacy ones (``base64("0<len>:<Type><id>")``), the very
``node_id`` the REST answers carry, so an id read over REST names the same node here.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from aiohttp import web
from graphql import FieldNode, GraphQLError, GraphQLResolveInfo

from relay.hub import render
from relay.hub.api_labels import labels_of
from relay.hub.api_refs import bare_of
from relay.hub.api_repos import RepoAccess, repo_access
from relay.hub.store import Store
from relay.hub.web import ApiError, Role, hub_of, origin

MAX_PAGE = 100
Info = GraphQLResolveInfo[Any]  # resolvers get the request's Ctx as context
_LEGACY_ID = re.compile(r"^0(\d+):([A-Za-z]+)(\d+)$")
# GitHub's enum names for the REST reaction contents, in the order GitHub lists the groups
REACTION_ENUM = {
    "+1": "THUMBS_UP", "-1": "THUMBS_DOWN", "laugh": "LAUGH", "hooray": "HOORAY",
    "confused": "CONFUSED", "heart": "HEART", "rocket": "ROCKET", "eyes": "EYES",
}  # fmt: skip
REACTION_REST = {v: k for k, v in REACTION_ENUM.items()}
_PERMISSION = {
    Role.PULL: "READ", Role.TRIAGE: "TRIAGE", Role.PUSH: "WRITE", Role.MAINTAIN: "MAINTAIN",
    Role.ADMIN: "ADMIN",
}  # fmt: skip
TIMELINE_ACTIONS = {
    "labeled": "LABELED_EVENT", "unlabeled": "UNLABELED_EVENT", "closed": "CLOSED_EVENT",
    "reopened": "REOPENED_EVENT", "renamed": "RENAMED_TITLE_EVENT", "locked": "LOCKED_EVENT",
    "unlocked": "UNLOCKED_EVENT",
}  # fmt: skip


def node_id(kind: str, ident: int) -> str:
    """The global id of a node: the REST answers' ``node_id``."""
    return render.node_id(kind, ident)


def parse_id(text: str) -> tuple[str, int] | None:
    """``(type, database id)`` of a global id, or None when it names nothing the hub knows."""
    try:
        raw = base64.b64decode(text, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    match = _LEGACY_ID.match(raw)
    if match is None or int(match[1]) != len(match[2]):
        return None
    return match[2], int(match[3])


def not_found(message: str) -> GraphQLError:
    """GitHub's ``NOT_FOUND`` error (its ``type`` is moved to the top level on the way out)."""
    return GraphQLError(message, extensions={"type": "NOT_FOUND"})


def no_node(text: str) -> GraphQLError:
    """GitHub's answer for a global id that names nothing the caller may see."""
    return not_found(f"Could not resolve to a node with the global id of '{text}'")


def stamp(us: int | None) -> str | None:
    """A ``DateTime``: ISO 8601 in UTC, to the second, as GitHub answers."""
    return render.stamp(us)


@dataclass
class Ctx:
    """One GraphQL request: who asks, through which origin, and the repositories seen."""

    request: web.Request
    me: dict[str, Any]
    repos: dict[int, RepoAccess | None] = field(default_factory=dict)

    @property
    def store(self) -> Store:
        """The hub's store."""
        return hub_of(self.request).store

    @property
    def base(self) -> str:
        """The origin the client used (URLs point back at it)."""
        return origin(self.request)

    def repo(self, owner: str, name: str) -> RepoAccess | None:
        """The repository as the caller sees it, or None when it is missing or hidden."""
        try:
            acc = repo_access(self.request, owner=owner, name=name)
        except ApiError:
            return None
        self.repos[acc.id] = acc
        return acc

    def renamed(self, owner: str, name: str) -> RepoAccess | None:
        """The repository an old ``owner/name`` now redirects to (GitHub follows a rename
        for ``repository(followRenames: true)``, the default), if the caller may see it."""
        row = self.store.db.execute(
            "SELECT m.repo_id FROM repo_redirects m JOIN users u ON u.id = m.owner_id"
            " WHERE u.login = ? AND m.name = ?",
            (owner, name),
        ).fetchone()
        return None if row is None else self.repo_by_id(int(row[0]))

    def repo_by_id(self, repo_id: int) -> RepoAccess | None:
        """The repository with this database id, if the caller may see it."""
        if repo_id not in self.repos:
            row = self.store.db.execute(
                "SELECT r.name, u.login FROM repos r JOIN users u ON u.id = r.owner_id"
                " WHERE r.id = ?",
                (repo_id,),
            ).fetchone()
            self.repos[repo_id] = None if row is None else self.repo(row["login"], row["name"])
        return self.repos[repo_id]

    def actor(self, user_id: int | None) -> User | Bot | Organization | None:
        """The ``Actor`` for an account id: a ``Bot`` for an App's installation, an
        ``Organization`` for an organisation, else a ``User``."""
        if user_id is None:
            return None
        row = self.store.user(user_id)
        if row["type"] == "Bot":
            return Bot(self, row)
        return Organization(self, row) if row["type"] == "Organization" else User(self, row)


def _int_arg(value: Any, name: str, what: str) -> int | None:
    if value is None:
        return None
    if value < 0:
        raise GraphQLError(f"`{name}` on the `{what}` connection cannot be less than zero.")
    if value > MAX_PAGE:
        raise GraphQLError(
            f"Requesting {value} records on the `{what}` connection exceeds the `{name}` limit"
            f" of {MAX_PAGE} records.",
            extensions={"type": "EXCESSIVE_PAGINATION"},
        )
    return int(value)


def _cursor(offset: int) -> str:
    return base64.b64encode(f"cursor:v2:{offset}".encode()).decode()


def _offset(cursor: str | None) -> int | None:
    if cursor is None:
        return None
    try:
        text = base64.b64decode(cursor, validate=True).decode()
        return int(text.removeprefix("cursor:v2:"))
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise GraphQLError(f"`{cursor}` does not appear to be a valid cursor.") from None


def _wants_items(info: Info) -> bool:
    """Whether the selection asks for ``nodes`` or ``edges`` (not only counts)."""
    for node in info.field_nodes:
        for sel in node.selection_set.selections if node.selection_set else ():
            if not isinstance(sel, FieldNode) or sel.name.value in ("nodes", "edges"):
                return True  # a fragment may hold them
    return False


def window(info: Info, total: int, args: dict[str, Any]) -> tuple[int, int]:
    """``(offset, limit)`` of the page ``first``/``after``/``last``/``before`` ask for over
    ``total`` items; GitHub's errors for a missing or oversize page."""
    what = info.field_name
    first = _int_arg(args.get("first"), "first", what)
    last = _int_arg(args.get("last"), "last", what)
    if first is not None and last is not None:
        raise GraphQLError(
            f"Passing both `first` and `last` to paginate the `{what}` connection is not supported."
        )
    if first is None and last is None:
        if _wants_items(info):
            raise GraphQLError(
                f"You must provide a `first` or `last` value to properly paginate the `{what}`"
                " connection.",
                extensions={"type": "MISSING_PAGINATION_BOUNDARIES"},
            )
        return 0, 0
    after, before = _offset(args.get("after")), _offset(args.get("before"))
    start = 0 if after is None else after + 1
    end = total if before is None else min(before, total)
    start = min(start, end)
    if first is not None:
        end = min(end, start + first)
    if last is not None:
        start = max(start, end - last)
    return start, end - start


@dataclass
class PageInfo:
    """GitHub's ``PageInfo``."""

    startCursor: str | None
    endCursor: str | None
    hasNextPage: bool
    hasPreviousPage: bool


@dataclass
class Edge:
    """An edge of any connection: the item and its cursor."""

    cursor: str
    node: Any


@dataclass
class Connection:
    """Any of GitHub's ``...Connection`` types: one page of items and the total."""

    items: list[Any]
    offset: int
    totalCount: int

    @property
    def nodes(self) -> list[Any]:
        """The page's items."""
        return self.items

    @property
    def edges(self) -> list[Edge]:
        """The page's items with their cursors."""
        return [Edge(_cursor(self.offset + i), item) for i, item in enumerate(self.items)]

    @property
    def pageInfo(self) -> PageInfo:
        """Where this page sits in the list."""
        end = self.offset + len(self.items)
        return PageInfo(
            startCursor=_cursor(self.offset) if self.items else None,
            endCursor=_cursor(end - 1) if self.items else None,
            hasNextPage=end < self.totalCount,
            hasPreviousPage=self.offset > 0,
        )


def paginate(info: Info, items: list[Any], args: dict[str, Any]) -> Connection:
    """A connection over a list already in memory."""
    offset, limit = window(info, len(items), args)
    return Connection(items[offset : offset + limit], offset, len(items))


class Actor:
    """What ``User`` and ``Bot`` share."""

    def __init__(self, ctx: Ctx, row: dict[str, Any]) -> None:
        self.ctx, self.row = ctx, row

    @property
    def id(self) -> str:
        """Global id."""
        return node_id(self.row["type"], self.row["id"])

    @property
    def databaseId(self) -> int:
        """The REST ``id``."""
        return int(self.row["id"])

    @property
    def login(self) -> str:
        """The login."""
        return str(self.row["login"])

    @property
    def url(self) -> str:
        """The profile page."""
        return f"{self.ctx.base}/{self.row['login']}"

    @property
    def createdAt(self) -> str | None:
        """When the account was made."""
        return stamp(self.row["created_at"])

    def avatarUrl(self, _info: Info, size: int | None = None) -> str:
        """The avatar (as the REST ``avatar_url``, sized when asked)."""
        url = f"{self.ctx.base}/avatars/u/{self.row['id']}"
        return url if size is None else f"{url}?s={size}"


class User(Actor):
    """GitHub's ``User``."""

    name = None  # the hub keeps no display names


class Bot(Actor):
    """GitHub's ``Bot``: an App installation's actor."""


class Organization(Actor):
    """GitHub's ``Organization``: the owner of org-owned repositories."""

    name = None  # the hub keeps no display names


class Ref:
    """A branch, as ``defaultBranchRef`` names it."""

    prefix = "refs/heads/"

    def __init__(self, full: str, name: str) -> None:
        self.name, self.full = name, full

    @property
    def id(self) -> str:
        """Global id (the REST ref's ``node_id``)."""
        return str(render.ref("", self.full, self.prefix + self.name, "")["node_id"])


class Label:
    """GitHub's ``Label``."""

    def __init__(self, store: Store, acc: RepoAccess, row: dict[str, Any]) -> None:
        self.store, self.acc, self.row = store, acc, row

    @property
    def isDefault(self) -> bool:
        """Whether it is one of the labels GitHub gives every new repository."""
        return bool(self.row.get("is_default"))

    @property
    def id(self) -> str:
        """Global id."""
        return node_id("Label", self.row["id"])

    @property
    def name(self) -> str:
        """The name."""
        return str(self.row["name"])

    @property
    def color(self) -> str:
        """Six hex digits, no ``#``."""
        return str(self.row["color"])

    @property
    def description(self) -> str | None:
        """The description, if any."""
        return self.row.get("description")

    @property
    def createdAt(self) -> str | None:
        """When it was made through the labels API (null for one made by naming it on an
        issue: the hub keeps no time for those)."""
        row = self.store.db.execute(
            "SELECT created_at FROM journal WHERE repo_id = ? AND kind = 'label'"
            " AND action = 'created' AND label_name = ? ORDER BY id DESC LIMIT 1",
            (self.acc.id, self.name),
        ).fetchone()
        return stamp(row[0]) if row else None

    @property
    def url(self) -> str:
        """The label's page (issues carrying it)."""
        return f"{self.acc.base}/{self.acc.full}/labels/{quote(self.name, safe='')}"


_LABEL_ORDER = {"NAME": "name COLLATE NOCASE", "CREATED_AT": "id"}


class Repository:
    """GitHub's ``Repository``."""

    def __init__(self, ctx: Ctx, acc: RepoAccess) -> None:
        self.ctx, self.acc, self.row = ctx, acc, acc.row

    @property
    def id(self) -> str:
        """Global id."""
        return node_id("Repository", self.acc.id)

    @property
    def databaseId(self) -> int:
        """The REST ``id``."""
        return self.acc.id

    @property
    def name(self) -> str:
        """The name."""
        return str(self.row["name"])

    @property
    def nameWithOwner(self) -> str:
        """``owner/name``."""
        return self.acc.full

    @property
    def owner(self) -> User | Organization:
        """The owning user or organisation."""
        if self.acc.owner["type"] == "Organization":
            return Organization(self.ctx, self.acc.owner)
        return User(self.ctx, self.acc.owner)

    @property
    def url(self) -> str:
        """The repository's page."""
        return f"{self.acc.base}/{self.acc.full}"

    @property
    def isPrivate(self) -> bool:
        """Whether only collaborators see it."""
        return bool(self.row["private"])

    @property
    def visibility(self) -> str:
        """``PRIVATE`` or ``PUBLIC``."""
        return "PRIVATE" if self.row["private"] else "PUBLIC"

    @property
    def description(self) -> str | None:
        """The description."""
        return self.row.get("description")

    @property
    def hasIssuesEnabled(self) -> bool:
        """Whether issues are on."""
        return bool(self.row.get("has_issues", 1))

    hasWikiEnabled = True  # as the REST repository's has_wiki
    parent = None  # the hub has no forks
    # GitHub's defaults for a new repository (the hub merges no pull requests)
    mergeCommitAllowed = rebaseMergeAllowed = squashMergeAllowed = True

    @property
    def createdAt(self) -> str | None:
        """When it was made."""
        return stamp(self.row["created_at"])

    @property
    def updatedAt(self) -> str | None:
        """When it last changed."""
        return stamp(self.row["updated_at"])

    @property
    def viewerPermission(self) -> str | None:
        """The caller's role, in GitHub's names."""
        return _PERMISSION.get(self.acc.role)

    @property
    def defaultBranchRef(self) -> Ref | None:
        """The default branch, once it exists in the hosted git (null before, as GitHub)."""
        branch = self.row["default_branch"]
        heads = bare_of(self.ctx.request, self.acc.id).refs(f"refs/heads/{branch}")
        if not any(name == f"refs/heads/{branch}" for name, _ in heads):
            return None
        return Ref(self.acc.full, branch)

    def _numbered(self, number: int) -> Issue | None:
        """The issue with this number; none while issues are off (REST answers 410)."""
        if not self.hasIssuesEnabled:
            return None
        row = self.ctx.store.db.execute(
            "SELECT * FROM issues WHERE repo_id = ? AND number = ?", (self.acc.id, number)
        ).fetchone()
        return None if row is None else Issue(self.ctx, self.acc, dict(row))

    def issue(self, _info: Info, number: int) -> Issue:
        """The issue with this number."""
        found = self._numbered(number)
        if found is None:
            raise not_found(f"Could not resolve to an Issue with the number of {number}.")
        return found

    def issueOrPullRequest(self, _info: Info, number: int) -> Issue:
        """The issue with this number (the hub has no pull requests)."""
        found = self._numbered(number)
        if found is None:
            raise not_found(
                f"Could not resolve to an issue or pull request with the number of {number}."
            )
        return found

    def pullRequest(self, _info: Info, number: int) -> None:
        """Never found: the hub has no pull requests."""
        raise not_found(f"Could not resolve to a PullRequest with the number of {number}.")

    def issues(self, info: Info, **args: Any) -> Connection:
        """Issues, filtered by ``states``, ``labels`` (all must match) and ``filterBy``,
        ordered by ``orderBy`` (creation, oldest first, when not given: GitHub's order)."""
        filters = args.get("filterBy") or {}
        where, params = ["repo_id = ?"], list[Any]([self.acc.id])
        if not self.hasIssuesEnabled:
            where.append("0")
        states = args.get("states") or filters.get("states")
        if states:
            where.append(f"state IN ({','.join('?' * len(states))})")
            params += [s.lower() for s in states]
        for name in (args.get("labels") or []) + (filters.get("labels") or []):
            where.append(
                "EXISTS (SELECT 1 FROM issue_labels il JOIN labels l ON l.id = il.label_id"
                " WHERE il.issue_id = issues.id AND l.name = ?)"
            )
            params.append(name)
        if filters.get("createdBy"):
            where.append("user_id = (SELECT id FROM users WHERE login = ?)")
            params.append(filters["createdBy"])
        if filters.get("since"):
            where.append("updated_at >= ?")
            params.append(_since_us(filters["since"]))
        if filters.get("mentioned"):  # in the body or any comment, as @login
            where.append(
                "(body LIKE ? OR EXISTS (SELECT 1 FROM comments c WHERE c.issue_id = issues.id"
                " AND c.body LIKE ?))"
            )
            params += [f"%@{filters['mentioned']}%"] * 2
        if filters.get("assignee") or filters.get("milestone") not in (None, "none"):
            where.append("0")  # no issue on the hub has an assignee or a milestone
        order = args.get("orderBy") or {"field": "CREATED_AT", "direction": "ASC"}
        column = {"CREATED_AT": "created_at", "UPDATED_AT": "updated_at", "COMMENTS": "comments"}
        direction = "DESC" if order["direction"] == "DESC" else "ASC"
        clause = " AND ".join(where)
        db = self.ctx.store.db
        total = db.execute(f"SELECT COUNT(*) FROM issues WHERE {clause}", params).fetchone()[0]
        offset, limit = window(info, total, args)
        rows = db.execute(
            f"SELECT * FROM issues WHERE {clause}"
            f" ORDER BY {column[order['field']]} {direction}, id {direction} LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )
        items = [Issue(self.ctx, self.acc, dict(r)) for r in rows]
        return Connection(items, offset, total)

    def labels(self, info: Info, **args: Any) -> Connection:
        """The repository's labels (``query`` matches names and descriptions)."""
        where, params = "repo_id = ?", list[Any]([self.acc.id])
        if args.get("query"):
            where += " AND (name LIKE ? OR description LIKE ?)"
            params += [f"%{args['query']}%"] * 2
        order = args.get("orderBy") or {"field": "CREATED_AT", "direction": "ASC"}
        direction = "DESC" if order["direction"] == "DESC" else "ASC"
        db = self.ctx.store.db
        total = db.execute(f"SELECT COUNT(*) FROM labels WHERE {where}", params).fetchone()[0]
        offset, limit = window(info, total, args)
        rows = db.execute(
            f"SELECT * FROM labels WHERE {where} ORDER BY {_LABEL_ORDER[order['field']]}"
            f" {direction} LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )
        return Connection([Label(self.ctx.store, self.acc, dict(r)) for r in rows], offset, total)

    def label(self, _info: Info, name: str) -> Label | None:
        """The label with this name (any case), or null."""
        row = self.ctx.store.db.execute(
            "SELECT * FROM labels WHERE repo_id = ? AND name = ?", (self.acc.id, name)
        ).fetchone()
        return None if row is None else Label(self.ctx.store, self.acc, dict(row))


def _since_us(value: str) -> int:
    from datetime import UTC, datetime

    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1_000_000)


@dataclass
class UserContentEdit:
    """One edit of a body: who, when, and the body it left (``diff``)."""

    ctx: Ctx
    ident: int
    at: int
    editor_id: int
    diff: str | None

    @property
    def id(self) -> str:
        """Global id."""
        return node_id("UserContentEdit", self.ident)

    @property
    def editor(self) -> User | Bot | Organization | None:
        """Who made the edit."""
        return self.ctx.actor(self.editor_id)

    @property
    def createdAt(self) -> str | None:
        """When the edit was made."""
        return stamp(self.at)

    editedAt = createdAt
    updatedAt = createdAt


class Commented:
    """What issues and comments share: a body with an edit history, an author, reactions."""

    subject = ""  # the reactions table's name for it

    def __init__(self, ctx: Ctx, acc: RepoAccess, row: dict[str, Any]) -> None:
        self.ctx, self.acc, self.row = ctx, acc, row
        self._edits: list[UserContentEdit] | None = None

    def _journal_edits(self) -> list[dict[str, Any]]:
        """The journal's entries for edits of the body, oldest first."""
        raise NotImplementedError

    def _creation(self) -> int:
        """The journal id of the creation (the creation's edit's id)."""
        raise NotImplementedError

    @property
    def databaseId(self) -> int:
        """The REST ``id``: past 2**31 GraphQL's Int refuses it, an error and null in the
        answer, as on github.com (whose ids are past it)."""
        return int(self.row["id"])

    @property
    def fullDatabaseId(self) -> int:
        """The REST ``id`` as a ``BigInt`` (GitHub's answer to ids past 2**31)."""
        return int(self.row["id"])

    @property
    def body(self) -> str:
        """The markdown body (empty when none)."""
        return str(self.row["body"] or "")

    @property
    def author(self) -> User | Bot | Organization | None:
        """Who wrote it."""
        return self.ctx.actor(self.row["user_id"])

    @property
    def authorAssociation(self) -> str:
        """The author's relation to the repository."""
        return self.acc.association(self.ctx.request, self.row["user_id"])

    @property
    def createdAt(self) -> str | None:
        """When it was written."""
        return stamp(self.row["created_at"])

    @property
    def updatedAt(self) -> str | None:
        """When it last changed."""
        return stamp(self.row["updated_at"])

    def edits(self) -> list[UserContentEdit]:
        """The body's edits, newest first, ending with the creation once it was edited (as
        GitHub's ``userContentEdits``); each knows its editor from the store's journal."""
        if self._edits is None:
            rows = self._journal_edits()
            out: list[UserContentEdit] = []
            after = self.body
            for row in reversed(rows):  # newest first; each entry holds the body it replaced
                out.append(UserContentEdit(self.ctx, row["id"], row["created_at"],
                                           row["actor_id"], after))  # fmt: skip
                after = json.loads(row["detail"])["body"]["from"] or ""
            if rows:  # the creation, as GitHub lists it once a body was edited
                out.append(UserContentEdit(self.ctx, self._creation(), self.row["created_at"],
                                           self.row["user_id"], after))  # fmt: skip
            self._edits = out
        return self._edits

    @property
    def editor(self) -> User | Bot | Organization | None:
        """Who last edited the body (null when nobody has)."""
        edits = self.edits()
        return edits[0].editor if edits else None

    @property
    def lastEditedAt(self) -> str | None:
        """When the body was last edited (null when never)."""
        edits = self.edits()
        return edits[0].createdAt if edits else None

    @property
    def includesCreatedEdit(self) -> bool:
        """Whether the edits include the creation (they do once the body was edited)."""
        return bool(self.edits())

    def userContentEdits(self, info: Info, **args: Any) -> Connection:
        """The body's edit history, newest first."""
        return paginate(info, self.edits(), args)

    @property
    def viewerDidAuthor(self) -> bool:
        """Whether the caller wrote it."""
        return bool(self.row["user_id"] == self.ctx.me["id"])

    @property
    def reactionGroups(self) -> list[ReactionGroup]:
        """One group per reaction content, in GitHub's order, empty ones included."""
        rows = self.ctx.store.db.execute(
            "SELECT * FROM reactions WHERE subject = ? AND subject_id = ? ORDER BY id",
            (self.subject, self.row["id"]),
        ).fetchall()
        return [
            ReactionGroup(self.ctx, content, [dict(r) for r in rows if r["content"] == rest])
            for rest, content in REACTION_ENUM.items()
        ]


class Issue(Commented):
    """GitHub's ``Issue``."""

    subject = "issue"

    def _journal_edits(self) -> list[dict[str, Any]]:
        rows = self.ctx.store.db.execute(
            "SELECT * FROM journal WHERE issue_id = ? AND kind = 'issues' AND action = 'edited'"
            " AND comment_id IS NULL ORDER BY id",
            (self.row["id"],),
        )
        return [dict(r) for r in rows if "body" in json.loads(r["detail"] or "{}")]

    def _creation(self) -> int:
        row = self.ctx.store.db.execute(
            "SELECT id FROM journal WHERE issue_id = ? AND kind = 'issues' AND action = 'opened'",
            (self.row["id"],),
        ).fetchone()
        return int(row[0]) if row else 0

    @property
    def id(self) -> str:
        """Global id."""
        return node_id("Issue", self.row["id"])

    @property
    def number(self) -> int:
        """The number in its repository."""
        return int(self.row["number"])

    @property
    def title(self) -> str:
        """The title."""
        return str(self.row["title"])

    @property
    def state(self) -> str:
        """``OPEN`` or ``CLOSED``."""
        return str(self.row["state"]).upper()

    def stateReason(self, _info: Info, enableDuplicate: bool = False) -> str | None:
        """Why it was closed or reopened (``DUPLICATE`` reads ``NOT_PLANNED`` unless
        ``enableDuplicate``, as on GitHub)."""
        reason = self.row["state_reason"]
        if reason is None:
            return None
        value = str(reason).upper()
        return "NOT_PLANNED" if value == "DUPLICATE" and not enableDuplicate else value

    @property
    def closed(self) -> bool:
        """Whether it is closed."""
        return bool(self.row["state"] == "closed")

    @property
    def closedAt(self) -> str | None:
        """When it was last closed."""
        return stamp(self.row["closed_at"])

    @property
    def locked(self) -> bool:
        """Whether conversation is locked."""
        return bool(self.row.get("locked"))

    @property
    def url(self) -> str:
        """The issue's page."""
        return f"{self.acc.base}/{self.acc.full}/issues/{self.row['number']}"

    @property
    def repository(self) -> Repository:
        """Its repository."""
        return Repository(self.ctx, self.acc)

    milestone = None  # the hub has no milestones
    isPinned = False  # nor pinned issues

    def assignees(self, info: Info, **args: Any) -> Connection:
        """Nobody: the hub has no assignees (REST's ``assignees`` is ``[]`` too)."""
        return paginate(info, [], args)

    def projectCards(self, info: Info, **args: Any) -> Connection:
        """None: the hub has no projects."""
        return paginate(info, [], args)

    def labels(self, info: Info, **args: Any) -> Connection:
        """Its labels (by name, or by when each label was made)."""
        rows = labels_of(self.ctx.store, [self.row["id"]])[self.row["id"]]
        order = args.get("orderBy") or {"field": "CREATED_AT", "direction": "ASC"}
        if order["field"] == "CREATED_AT":
            rows = sorted(rows, key=lambda r: r["id"])
        if order["direction"] == "DESC":
            rows = rows[::-1]
        return paginate(info, [Label(self.ctx.store, self.acc, r) for r in rows], args)

    def comments(self, info: Info, **args: Any) -> Connection:
        """Its comments, oldest first."""
        db = self.ctx.store.db
        total = db.execute(
            "SELECT COUNT(*) FROM comments WHERE issue_id = ?", (self.row["id"],)
        ).fetchone()[0]
        offset, limit = window(info, total, args)
        rows = db.execute(
            "SELECT * FROM comments WHERE issue_id = ? ORDER BY id LIMIT ? OFFSET ?",
            (self.row["id"], limit, offset),
        )
        items = [IssueComment(self.ctx, self.acc, dict(r), issue=self) for r in rows]
        return Connection(items, offset, total)

    def timelineItems(self, info: Info, **args: Any) -> Connection:
        """Label, close, reopen and rename events and comments, oldest first."""
        wanted = set(args.get("itemTypes") or [*TIMELINE_ACTIONS.values(), "ISSUE_COMMENT"])
        since = _since_us(args["since"]) if args.get("since") else None
        items: list[tuple[int, int, Any]] = []
        db = self.ctx.store.db
        actions = tuple(a for a, kind in TIMELINE_ACTIONS.items() if kind in wanted)
        if actions:
            rows = db.execute(
                f"SELECT * FROM journal WHERE issue_id = ? AND kind = 'issues'"
                f" AND action IN ({','.join('?' * len(actions))}) ORDER BY id",
                (self.row["id"], *actions),
            )
            items += [(r["created_at"], 0, event(self, dict(r))) for r in rows]
        if "ISSUE_COMMENT" in wanted:
            rows = db.execute("SELECT * FROM comments WHERE issue_id = ?", (self.row["id"],))
            items += [
                (r["created_at"], 1, IssueComment(self.ctx, self.acc, dict(r), issue=self))
                for r in rows
            ]
        items.sort(key=lambda t: (t[0], t[1]))
        kept = [item for at, _, item in items if since is None or at >= since]
        return paginate(info, kept, args)


class IssueComment(Commented):
    """GitHub's ``IssueComment``."""

    subject = "comment"

    def __init__(
        self, ctx: Ctx, acc: RepoAccess, row: dict[str, Any], issue: Issue | None = None
    ) -> None:
        super().__init__(ctx, acc, row)
        self._issue = issue

    def _journal_edits(self) -> list[dict[str, Any]]:
        rows = self.ctx.store.db.execute(
            "SELECT * FROM journal WHERE comment_id = ? AND kind = 'issue_comment'"
            " AND action = 'edited' ORDER BY id",
            (self.row["id"],),
        )
        return [dict(r) for r in rows]

    def _creation(self) -> int:
        row = self.ctx.store.db.execute(
            "SELECT id FROM journal WHERE comment_id = ? AND kind = 'issue_comment'"
            " AND action = 'created'",
            (self.row["id"],),
        ).fetchone()
        return int(row[0]) if row else 0

    @property
    def id(self) -> str:
        """Global id."""
        return node_id("IssueComment", self.row["id"])

    @property
    def issue(self) -> Issue:
        """The issue it is on."""
        if self._issue is None:
            row = self.ctx.store.db.execute(
                "SELECT * FROM issues WHERE id = ?", (self.row["issue_id"],)
            ).fetchone()
            self._issue = Issue(self.ctx, self.acc, dict(row))
        return self._issue

    isMinimized = False  # the hub hides no comment
    minimizedReason = None

    @property
    def url(self) -> str:
        """The comment's anchor on its issue's page."""
        return f"{self.issue.url}#issuecomment-{self.row['id']}"


class Reaction:
    """GitHub's ``Reaction``."""

    def __init__(self, ctx: Ctx, row: dict[str, Any]) -> None:
        self.ctx, self.row = ctx, row

    @property
    def id(self) -> str:
        """Global id."""
        return node_id("Reaction", self.row["id"])

    @property
    def databaseId(self) -> int:
        """The REST ``id``."""
        return int(self.row["id"])

    @property
    def content(self) -> str:
        """The emoji, in GitHub's enum."""
        return REACTION_ENUM[self.row["content"]]

    @property
    def createdAt(self) -> str | None:
        """When it was left."""
        return stamp(self.row["created_at"])

    @property
    def user(self) -> User | Bot | Organization | None:
        """Who left it."""
        return self.ctx.actor(self.row["user_id"])


@dataclass
class ReactionGroup:
    """The reactions of one content on an issue or comment."""

    ctx: Ctx
    content: str
    rows: list[dict[str, Any]]

    @property
    def createdAt(self) -> str | None:
        """When the first of them was left."""
        return stamp(self.rows[0]["created_at"]) if self.rows else None

    @property
    def viewerHasReacted(self) -> bool:
        """Whether the caller is among them."""
        return any(r["user_id"] == self.ctx.me["id"] for r in self.rows)

    def reactors(self, info: Info, **args: Any) -> Connection:
        """Who reacted."""
        return paginate(info, [self.ctx.actor(r["user_id"]) for r in self.rows], args)

    def users(self, info: Info, **args: Any) -> Connection:
        """Who reacted (GitHub's older field; its nodes are users)."""
        return self.reactors(info, **args)


class Event:
    """What the timeline's events share: the journal row, its actor and issue."""

    def __init__(self, issue: Issue, row: dict[str, Any]) -> None:
        self.issue, self.row, self.ctx = issue, row, issue.ctx

    @property
    def id(self) -> str:
        """Global id (the event's type and its journal id)."""
        return node_id(type(self).__name__, self.row["id"])

    @property
    def actor(self) -> User | Bot | Organization | None:
        """Who did it."""
        return self.ctx.actor(self.row["actor_id"])

    @property
    def createdAt(self) -> str | None:
        """When."""
        return stamp(self.row["created_at"])


class LabeledEvent(Event):
    """A label added."""

    @property
    def label(self) -> Label:
        """The label (as it is now, or as it was when since deleted)."""
        row = self.ctx.store.db.execute(
            "SELECT * FROM labels WHERE repo_id = ? AND name = ?",
            (self.issue.acc.id, self.row["label_name"]),
        ).fetchone()
        gone = {"id": 0, "name": self.row["label_name"], "color": self.row["label_color"]}
        return Label(
            self.ctx.store, self.issue.acc, dict(row) if row else {**gone, "description": None}
        )

    @property
    def labelable(self) -> Issue:
        """The issue."""
        return self.issue


class UnlabeledEvent(LabeledEvent):
    """A label removed."""


class ClosedEvent(Event):
    """The issue closed."""

    @property
    def stateReason(self) -> str | None:
        """Why, as this close said (null for a close recorded before reasons were kept)."""
        reason = self.row.get("detail")
        return reason.upper() if reason else None


class LockedEvent(Event):
    """The conversation locked."""

    @property
    def lockReason(self) -> str | None:
        """Why, if a reason was given (``too heated`` is ``TOO_HEATED``)."""
        reason = self.row.get("detail")
        return reason.upper().replace(" ", "_").replace("-", "_") if reason else None


class UnlockedEvent(Event):
    """The conversation unlocked."""


class ReopenedEvent(Event):
    """The issue reopened."""

    stateReason = "REOPENED"


class RenamedTitleEvent(Event):
    """The title changed."""

    @property
    def previousTitle(self) -> str:
        """The title before."""
        return str(json.loads(self.row["detail"])["from"])

    @property
    def currentTitle(self) -> str:
        """The title after."""
        return str(json.loads(self.row["detail"])["to"])


_EVENTS: dict[str, type[Event]] = {
    "labeled": LabeledEvent, "unlabeled": UnlabeledEvent, "closed": ClosedEvent,
    "reopened": ReopenedEvent, "renamed": RenamedTitleEvent, "locked": LockedEvent,
    "unlocked": UnlockedEvent,
}  # fmt: skip


def event(issue: Issue, row: dict[str, Any]) -> Event:
    """The timeline event a journal row records."""
    return _EVENTS[row["action"]](issue, row)


def find_node(ctx: Ctx, text: str) -> Any:
    """The node a global id names, if the caller may see it; None otherwise."""
    parsed = parse_id(text)
    if parsed is None:
        return None
    kind, ident = parsed
    db = ctx.store.db
    if kind in ("User", "Bot", "Organization"):
        row = db.execute("SELECT type FROM users WHERE id = ?", (ident,)).fetchone()
        return None if row is None or row[0] != kind else ctx.actor(ident)
    if kind == "UserContentEdit":
        return _content_edit(ctx, ident)
    table = {"Repository": "repos", "Issue": "issues", "IssueComment": "comments",
             "Label": "labels"}.get(kind)  # fmt: skip
    if kind in _EVENT_KINDS or kind == "IssueEvent":
        table = "journal"
    elif kind == "Reaction":
        table = "reactions"
    if table is None:
        return None
    row = db.execute(f"SELECT * FROM {table} WHERE id = ?", (ident,)).fetchone()
    if row is None:
        return None
    found = dict(row)
    if table == "reactions":
        found_in = "issues" if found["subject"] == "issue" else "comments"
        parent = db.execute(f"SELECT repo_id FROM {found_in} WHERE id = ?", (found["subject_id"],))
        parent_row = parent.fetchone()
        on = None if parent_row is None else ctx.repo_by_id(parent_row[0])
        if on is None or not on.row.get("has_issues", 1):
            return None
        return Reaction(ctx, found)
    repo_id = found["id"] if table == "repos" else found["repo_id"]
    acc = ctx.repo_by_id(repo_id) if repo_id is not None else None
    if acc is None:
        return None
    if table == "repos":
        return Repository(ctx, acc)
    if table != "labels" and not acc.row.get("has_issues", 1):
        return None  # issues, comments and events hide while issues are off
    if table == "issues":
        return Issue(ctx, acc, found)
    if table == "comments":
        return IssueComment(ctx, acc, found)
    if table == "labels":
        return Label(ctx.store, acc, found)
    if found["kind"] != "issues" or found["action"] not in _EVENTS:
        return None
    made = _EVENTS[found["action"]]
    if kind != "IssueEvent" and made.__name__ != kind:
        return None
    issue_row = db.execute("SELECT * FROM issues WHERE id = ?", (found["issue_id"],)).fetchone()
    return made(Issue(ctx, acc, dict(issue_row)), found)


_EVENT_KINDS = frozenset(cls.__name__ for cls in _EVENTS.values())


def _content_edit(ctx: Ctx, ident: int) -> UserContentEdit | None:
    """The version of an issue's or a comment's body that journal entry ``ident`` made (an
    edit, or the posting once the body was edited), as its ``userContentEdits`` lists it,
    if the caller may see the issue or comment."""
    row = ctx.store.db.execute(
        "SELECT kind, issue_id, comment_id FROM journal WHERE id = ?", (ident,)
    ).fetchone()
    if row is None:
        return None
    kind, issue_id, comment_id = row
    if kind == "issue_comment" and comment_id is not None:
        parent = find_node(ctx, node_id("IssueComment", comment_id))
    elif kind == "issues" and issue_id is not None:
        parent = find_node(ctx, node_id("Issue", issue_id))
    else:
        return None
    if not isinstance(parent, Commented):
        return None
    return next((e for e in parent.edits() if e.ident == ident), None)


# --- search (issues only) ----------------------------------------------------------------

_SEARCH_SORTS = {"created": "i.created_at", "updated": "i.updated_at", "comments": "i.comments"}


@dataclass
class SearchFilter:
    """A GitHub issue-search text, taken apart (``repo:o/r is:open label:a,b words``)."""

    repos: list[str] = field(default_factory=list)
    where: list[str] = field(default_factory=list)
    params: list[Any] = field(default_factory=list)
    order: str = "i.created_at DESC, i.id DESC"
    nothing: bool = False  # a qualifier no issue on the hub can meet (is:pr, assignee:x)


_RANGE = re.compile(r"^(>=|<=|>|<)?(.+)$")


def _bounds(value: str, parse: Callable[[str, bool], int | None]) -> list[tuple[str, int]] | None:
    """GitHub's range syntax (``N``, ``>N``, ``>=N``, ``<N``, ``<=N``, ``A..B``, ``A..*``,
    ``*..B``) as SQL comparisons; None when it is not one. ``parse(text, end)`` reads one
    bound (``end``: the bound closes a range, so a day means the day's last moment)."""
    if ".." in value:
        low, _, high = value.partition("..")
        out = []
        for text, op, end in ((low, ">=", False), (high, "<=", True)):
            if text != "*":
                got = parse(text, end)
                if got is None:
                    return None
                out.append((op, got))
        return out
    match = _RANGE.match(value)
    if match is None:
        return None
    op, text = match[1], match[2]
    if op is None:  # one value: for a day, that whole day
        start, stop = parse(text, False), parse(text, True)
        if start is None or stop is None:
            return None
        return [(">=", start), ("<=", stop)]
    got = parse(text, op in (">", "<="))
    return None if got is None else [(op, got)]


def _count(text: str, _end: bool) -> int | None:
    return int(text) if text.isdigit() else None


def _moment(text: str, end: bool) -> int | None:
    """A search date (``YYYY-MM-DD`` or an ISO 8601 time) in microseconds since the epoch;
    a bare date closing a range is its day's last microsecond."""
    from datetime import UTC, datetime, timedelta

    try:
        if len(text) == 10:
            day = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
            when = day + timedelta(days=1) - timedelta(microseconds=1) if end else day
        else:
            when = datetime.fromisoformat(text.replace("Z", "+00:00"))
            if when.tzinfo is None:
                when = when.replace(tzinfo=UTC)
    except ValueError:
        return None
    return int(when.timestamp() * 1_000_000)


_DATES = {"created": "i.created_at", "updated": "i.updated_at", "closed": "i.closed_at"}
_USER_ID = "(SELECT id FROM users WHERE login = ?)"


def parse_search(text: str, me: str = "") -> SearchFilter:
    """The SQL conditions (over ``issues i``) an issue search asks for, with the qualifiers
    gh and people use: repo:, user:/org: (the owner), is:/type: (issue, pr, open, closed,
    locked, unlocked), state:, reason:, label: (commas: any of), no:label, no:assignee,
    author:, assignee:, mentions:, commenter:, involves: (``@me``: the caller), in:title/
    body/comments, comments: and created:/updated:/closed: with GitHub's ranges, and
    sort:FIELD-DIRECTION; a leading ``-`` negates a qualifier. Anything else (an unknown
    qualifier too, as GitHub reads it) is a word every match must hold."""
    import shlex

    try:
        tokens = shlex.split(text)
    except ValueError:
        tokens = text.split()
    found = SearchFilter()
    words, fields = list[str](), ["i.title", "i.body"]
    label_sql = (
        "EXISTS (SELECT 1 FROM issue_labels il JOIN labels l ON l.id = il.label_id"
        " WHERE il.issue_id = i.id AND l.name IN ({}))"
    )
    commented = "EXISTS (SELECT 1 FROM comments c WHERE c.issue_id = i.id AND c.user_id = "

    def add(clause: str, params: list[Any], negate: bool) -> None:
        found.where.append(f"NOT ({clause})" if negate else clause)
        found.params.extend(params)

    for token in tokens:
        key, colon, value = token.partition(":")
        key = key.lower()
        negate = key.startswith("-")
        key = key.removeprefix("-")
        login = me if value.lower() == "@me" else value
        lowered = value.lower()
        if not colon or not value:
            words.append(token)
        elif key == "repo" and not negate:
            found.repos.append(value)
        elif key in ("user", "org"):
            add("i.repo_id IN (SELECT r.id FROM repos r JOIN users u ON u.id = r.owner_id"
                " WHERE u.login = ?)", [login], negate)  # fmt: skip
        elif key in ("is", "type", "state") and lowered in ("open", "closed"):
            add("i.state = ?", [lowered], negate)
        elif key == "is" and lowered in ("locked", "unlocked"):
            add("i.locked = ?", [int(lowered == "locked")], negate)
        elif key in ("is", "type") and lowered in ("pr", "pull-request", "merged", "unmerged"):
            found.nothing = found.nothing or not negate
        elif key in ("is", "type") and lowered == "issue":
            found.nothing = found.nothing or negate
        elif key == "reason":
            reason = lowered.replace(" ", "_").replace('"', "")
            add("coalesce(i.state_reason, '') = ?", [reason], negate)
        elif key == "label":
            names = [v for v in value.split(",") if v]
            add(label_sql.format(",".join("?" * len(names))), names, negate)
        elif key == "no" and lowered == "label":
            add("NOT EXISTS (SELECT 1 FROM issue_labels il WHERE il.issue_id = i.id)", [], negate)
        elif key == "no" and lowered in ("assignee", "milestone", "project"):
            found.nothing = found.nothing or negate  # the hub assigns nobody
        elif key == "author":
            add(f"i.user_id = {_USER_ID}", [login], negate)
        elif key == "assignee":
            found.nothing = found.nothing or not negate  # the hub assigns nobody
        elif key == "mentions":
            add("(i.body LIKE ? OR EXISTS (SELECT 1 FROM comments c WHERE c.issue_id = i.id"
                " AND c.body LIKE ?))", [f"%@{login}%"] * 2, negate)  # fmt: skip
        elif key == "commenter":
            add(commented + f"{_USER_ID})", [login], negate)
        elif key == "involves":
            add(f"(i.user_id = {_USER_ID} OR {commented}{_USER_ID}) OR i.body LIKE ?)",
                [login, login, f"%@{login}%"], negate)  # fmt: skip
        elif key == "comments" and (bounds := _bounds(value, _count)) is not None:
            for op, number in bounds:
                add(f"i.comments {op} ?", [number], negate)
        elif key in _DATES and (bounds := _bounds(value, _moment)) is not None:
            clause = " AND ".join(f"{_DATES[key]} {op} ?" for op, _ in bounds)
            add(f"({clause})", [moment for _, moment in bounds], negate)
        elif key == "sort":
            name, _, direction = lowered.partition("-")
            if name in _SEARCH_SORTS:
                way = "ASC" if direction == "asc" else "DESC"
                found.order = f"{_SEARCH_SORTS[name]} {way}, i.id {way}"
        elif key == "in":
            fields = [f"i.{v}" for v in lowered.split(",") if v in ("title", "body", "comments")]
        else:
            words.append(token)
    for word in words:
        either = " OR ".join(
            "EXISTS (SELECT 1 FROM comments c WHERE c.issue_id = i.id AND"
            " instr(lower(c.body), lower(?)) > 0)"
            if f == "i.comments"
            else f"instr(lower(coalesce({f}, '')), lower(?)) > 0"
            for f in fields
        )
        found.where.append(f"({either or '0'})")
        found.params += [word] * len(fields)
    return found


class SearchResultItemConnection(Connection):
    """A page of search results, with GitHub's count of matching issues."""

    @property
    def issueCount(self) -> int:
        """How many issues match."""
        return self.totalCount


def search(ctx: Ctx, info: Info, query: str, args: dict[str, Any]) -> Connection:
    """Issues the caller may see that match a GitHub search text, newest first unless
    ``sort:`` says otherwise."""
    found = parse_search(query, ctx.me["login"])
    repos: list[RepoAccess] = []
    if found.repos:
        for full in found.repos:
            owner, _, name = full.partition("/")
            acc = ctx.repo(owner, name)
            if acc is None:  # GitHub: the search fails on a repository it cannot see
                raise GraphQLError(
                    "The listed users and repositories cannot be searched either because the"
                    " resources do not exist or you do not have permission to view them.",
                    extensions={"type": "INVALID"},
                )
            repos.append(acc)
    else:
        rows = ctx.store.db.execute(
            "SELECT r.name, u.login FROM repos r JOIN users u ON u.id = r.owner_id ORDER BY r.id"
        ).fetchall()
        repos = [a for r in rows if (a := ctx.repo(r["login"], r["name"])) is not None]
    repos = [a for a in repos if a.row.get("has_issues", 1)]
    if found.nothing or not repos:
        return SearchResultItemConnection([], 0, 0)
    by_id = {a.id: a for a in repos}
    where = [f"i.repo_id IN ({','.join('?' * len(by_id))})", *found.where]
    params = [*by_id, *found.params]
    clause = " AND ".join(where)
    db = ctx.store.db
    total = db.execute(f"SELECT COUNT(*) FROM issues i WHERE {clause}", params).fetchone()[0]
    offset, limit = window(info, total, args)
    page = db.execute(
        f"SELECT i.* FROM issues i WHERE {clause} ORDER BY {found.order} LIMIT ? OFFSET ?",
        (*params, limit, offset),
    )
    items = [Issue(ctx, by_id[r["repo_id"]], dict(r)) for r in page]
    return SearchResultItemConnection(items, offset, total)
