"""Users, repositories, collaborators and ``/rate_limit``; and the access check every
repository-scoped handler starts with (:func:`repo_access`)."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from relay.hub import render
from relay.hub.git import Bare, bare_path
from relay.hub.store import Store, now_us
from relay.hub.web import (
    GRAPHQL_KEY,
    ISSUES_DOCS,
    ROLE_NAMES,
    SEARCH_KEY,
    ApiError,
    Role,
    api_path,
    check_text,
    created,
    hub_of,
    invalid,
    moved_to,
    need,
    no_content,
    not_found,
    one_row,
    origin,
    paged,
    paging,
    path_int,
    read_object,
    reply,
    route_path,
    viewer,
)

# The labels GitHub gives every new repository (name, color, description), ``default: true``.
DEFAULT_LABELS = (
    ("bug", "d73a4a", "Something isn't working"),
    ("documentation", "0075ca", "Improvements or additions to documentation"),
    ("duplicate", "cfd3d7", "This issue or pull request already exists"),
    ("enhancement", "a2eeef", "New feature or request"),
    ("good first issue", "7057ff", "Good for newcomers"),
    ("help wanted", "008672", "Extra attention is needed"),
    ("invalid", "e4e669", "This doesn't seem right"),
    ("question", "d876e3", "Further information is requested"),
    ("wontfix", "ffffff", "This will not be worked on"),
)
LOGIN_RULE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$")  # GitHub's
USER_DOCS = "https://docs.github.com/rest/users/users#get-the-authenticated-user"
_REPO_NAME = re.compile(r"^[A-Za-z0-9._-]{1,100}$")
_LEGACY = {"push": "write", "maintain": "write", "triage": "read", "pull": "read"}
_ROLE_NAME = {"pull": "read", "push": "write"}


@dataclass
class RepoAccess:
    """A repository as one caller sees it: its row, its owner and the caller's role."""

    row: dict[str, Any]
    owner: dict[str, Any]
    role: Role
    base: str
    _collaborators: dict[int, str] | None = field(default=None, repr=False)

    @property
    def id(self) -> int:
        """The repository id."""
        return int(self.row["id"])

    @property
    def full(self) -> str:
        """``owner/name``."""
        return f"{self.owner['login']}/{self.row['name']}"

    def association(self, request: web.Request, user_id: int) -> str:
        """``author_association`` of a user in this repository."""
        if user_id == self.owner["id"]:
            return "OWNER"
        if self._collaborators is None:
            rows = hub_of(request).store.db.execute(
                "SELECT user_id, permission FROM collaborators WHERE repo_id = ?", (self.id,)
            )
            self._collaborators = {r[0]: r[1] for r in rows}
        return "COLLABORATOR" if user_id in self._collaborators else "NONE"

    def permissions(self) -> dict[str, bool]:
        """The ``permissions`` object GitHub adds for an authenticated caller."""
        return {name: self.role >= role for name, role in ROLE_NAMES.items()}


def repo_access(
    request: web.Request,
    wanted: Role = Role.PULL,
    *,
    owner: str | None = None,
    name: str | None = None,
    ident: int | None = None,
) -> RepoAccess:
    """Resolve ``{owner}/{repo}`` (or ``/repositories/{id}``) for the caller: 404 if hidden,
    403 if the role is short; a repository's old name (it was renamed) is GitHub's redirect."""
    who: dict[str, Any] | None = request.get("viewer")
    me = who["id"] if who else None
    if ident is None and owner is None and name is None and "repository_id" in request.match_info:
        ident = path_int(request, "repository_id")
    hub = hub_of(request)
    store = hub.store
    if ident is not None:
        data, role = _access_row(
            store, me, one_row(request, _ACCESS + " WHERE r.id = ?", (me, ident))
        )
    else:
        owner = owner or request.match_info["owner"]
        name = name or request.match_info["repo"]
        watched = store.watched
        if hub.access_at != watched:
            hub.access.clear()
            hub.access_at = watched
        key = (me, owner, name)
        kept = hub.access.get(key)
        if kept is None:
            found = store.db.execute(
                _ACCESS + " WHERE u.login = ? AND r.name = ?", (me, owner, name)
            )
            row = found.fetchone()
            if row is None:
                raise _moved_or_missing(request, owner, name)
            kept = _access_row(store, me, dict(row))
            if store.watched_committed:  # only what is committed is kept
                if len(hub.access) >= _ACCESS_KEPT:
                    hub.access.clear()
                hub.access[key] = kept
        data, role = dict(kept[0]), kept[1]
    if role == Role.NONE:
        raise not_found()
    if not data["has_issues"] and _is_issue_route(request):
        raise ApiError(410, "Issues are disabled for this repo", docs=ISSUES_DOCS)
    if wanted > Role.PULL:
        viewer(request)
        need(role, wanted)
    return RepoAccess(data, store.user(data["owner_id"]), role, origin(request))


_ACCESS = (
    "SELECT r.*, c.permission FROM repos r JOIN users u ON u.id = r.owner_id"
    " LEFT JOIN collaborators c ON c.repo_id = r.id AND c.user_id = ?"
)
_ACCESS_KEPT = 4096  # past this many (caller, repository) pairs, all are forgotten
ACCESS_TABLES = (
    "users", "repos", "collaborators", "org_members", "teams", "team_members", "team_repos",
)  # fmt: skip
"""The tables a repository's row and a caller's role on it are read from: ``repo_access``
keeps its answers until one of them changes (:meth:`relay.hub.store.Store.watch`)."""


def _access_row(store: Store, me: int | None, data: dict[str, Any]) -> tuple[dict[str, Any], Role]:
    """A repository's row and the caller's role on it (NONE: hidden from the caller)."""
    if me is not None and me == data["owner_id"]:
        role = Role.ADMIN
    elif data["permission"] is not None:
        role = ROLE_NAMES[data["permission"]]
    else:
        role = Role.NONE if data["private"] else Role.PULL
    if store.user(data["owner_id"])["type"] == "Organization":  # its owners, members, teams
        from relay.hub.api_orgs import org_role, team_role

        role = max(role, org_role(store, data["owner_id"], me), team_role(store, data["id"], me))
    return data, role


def _moved_or_missing(request: web.Request, owner: str, name: str) -> ApiError:
    """GitHub's redirect for a repository's old name (301 for a read, 307 for a write, to
    ``/repositories/{id}/...``), or 404; a hidden repository is 404 under any name."""
    moved = (
        hub_of(request)
        .store.db.execute(
            "SELECT m.repo_id FROM repo_redirects m JOIN users u ON u.id = m.owner_id"
            " WHERE u.login = ? AND m.name = ?",
            (owner, name),
        )
        .fetchone()
    )
    if moved is None or "owner" not in request.match_info:
        return not_found()
    ident = int(moved[0])
    try:
        now = repo_access(request, ident=ident)
    except ApiError:
        return not_found()
    prefix = f"/repos/{request.match_info['owner']}/{request.match_info['repo']}"
    rest = api_path(request.path).removeprefix(prefix)
    query = f"?{request.query_string}" if request.query_string else ""
    return moved_to(request, f"{origin(request)}/repositories/{ident}{rest}{query}", now.full)


def _is_issue_route(request: web.Request) -> bool:
    """Whether the route is one of the ``/repos/{o}/{r}/issues...`` family."""
    return route_path(request).startswith("/repos/{owner}/{repo}/issues")


async def get_user(request: web.Request) -> web.Response:
    """``GET /user``; an App installation's token is refused, as GitHub refuses it (an
    installation is not a user)."""
    me = viewer(request)
    if me["type"] == "Bot" and not hub_of(request).app_user:
        raise ApiError(403, "Resource not accessible by integration", docs=USER_DOCS)
    public, private = _repo_counts(request, me["id"])
    user = render.private_user(origin(request), me, public_repos=public, private_repos=private)
    return reply(user)


def _repo_counts(request: web.Request, user_id: int) -> tuple[int, int]:
    """How many public and private repositories the user owns."""
    rows = hub_of(request).store.db.execute(
        "SELECT private, COUNT(*) FROM repos WHERE owner_id = ? GROUP BY private", (user_id,)
    )
    counts = {bool(r[0]): r[1] for r in rows}
    return counts.get(False, 0), counts.get(True, 0)


async def get_other_user(request: web.Request) -> web.Response:
    """``GET /users/{login}``."""
    found = hub_of(request).store.user_by_login(request.match_info["login"])
    if found is None:
        raise not_found()
    public, _private = _repo_counts(request, found["id"])
    return reply(render.public_user(origin(request), found, public_repos=public))


_RESERVED = (".", "..")  # the directory itself and its parent: GitHub reserves them


def _reserved(name: str) -> ApiError | None:
    """422 Validation Failed for a name GitHub reserves (``.``, ``..``), else None."""
    if name not in _RESERVED:
        return None
    return invalid("Repository", "name", "custom", f"The repository {name} is reserved")


def _creation_failed(code: str, message: str | None = None) -> ApiError:
    error = {"resource": "Repository", "code": code, "field": "name"}
    if message:
        error["message"] = message
    return ApiError(422, "Repository creation failed.", errors=[error])


async def create_repo(request: web.Request) -> web.Response:
    """``POST /user/repos``: 201, or 422 when the name is missing, malformed or taken."""
    return await create_owned_repo(request, viewer(request))


async def create_owned_repo(request: web.Request, owner: dict[str, Any]) -> web.Response:
    """Create a repository ``owner`` (the caller, or an organisation) owns: 201, or 422
    when the name is missing, malformed or taken."""
    me = viewer(request)
    data = await read_object(request)
    name = data.get("name")
    if not isinstance(name, str) or not _REPO_NAME.match(name):
        raise _creation_failed("missing_field")
    if refused := _reserved(name):
        raise refused
    description = check_text("Repository", "description", data.get("description"))
    store, now = hub_of(request).store, now_us()
    with store.write() as db:
        taken = "SELECT 1 FROM repos WHERE owner_id = ? AND name = ?"
        if db.execute(taken, (owner["id"], name)).fetchone():
            raise _creation_failed("custom", "name already exists on this account")
        cur = db.execute(
            "INSERT INTO repos (owner_id, name, private, description, default_branch,"
            " created_at, updated_at) VALUES (?, ?, ?, ?, 'main', ?, ?)",
            (owner["id"], name, int(bool(data.get("private"))), description, now, now),
        )
        store.record("repository", "created", actor_id=me["id"], repo_id=cur.lastrowid)
        db.executemany(
            "INSERT INTO labels (repo_id, name, color, description, is_default)"
            " VALUES (?, ?, ?, ?, 1)",
            [(cur.lastrowid, *label) for label in DEFAULT_LABELS],
        )
    acc = repo_access(request, owner=owner["login"], name=name)
    bare = Bare(bare_path(hub_of(request).data_dir, acc.id)).ensure()
    if data.get("auto_init"):  # GitHub's first commit: a README named after the repository
        bare.seed_readme(name, author=me["login"], email=f"{me['login']}@users.noreply.hub")
        hub_of(request).hosted.discard(acc.id)
    return created(repo_object(request, acc))


async def list_my_repos(request: web.Request) -> web.Response:
    """``GET /user/repos``: the repositories the caller owns or collaborates on, by full
    name (GitHub's default sort)."""
    me = viewer(request)
    page, per_page = paging(request)
    db = hub_of(request).store.db
    mine = (
        "FROM repos r JOIN users u ON u.id = r.owner_id WHERE r.owner_id = ?"
        " OR r.id IN (SELECT repo_id FROM collaborators WHERE user_id = ?)"
    )
    total = db.execute(f"SELECT COUNT(*) {mine}", (me["id"], me["id"])).fetchone()[0]
    rows = db.execute(
        f"SELECT u.login, r.name {mine} ORDER BY u.login COLLATE NOCASE, r.name LIMIT ? OFFSET ?",
        (me["id"], me["id"], per_page, (page - 1) * per_page),
    ).fetchall()
    items = [
        repo_object(request, repo_access(request, owner=login, name=name)) for login, name in rows
    ]
    return paged(request, items, total)


def repo_object(
    request: web.Request, acc: RepoAccess, *, permissions: bool = True
) -> dict[str, Any]:
    """The REST repository object; ``permissions`` adds the caller's (a webhook payload's
    repository has none)."""
    row = dict(acc.row)
    row["open_issues"] = (
        hub_of(request)
        .store.db.execute(
            "SELECT COUNT(*) FROM issues WHERE repo_id = ? AND state = 'open'", (acc.id,)
        )
        .fetchone()[0]
    )
    perms = acc.permissions() if permissions and request.get("viewer") else None
    return render.repo(acc.base, row, acc.owner, perms)


async def get_repo(request: web.Request) -> web.Response:
    """``GET /repos/{owner}/{repo}``."""
    return reply(repo_object(request, repo_access(request)))


_FLAGS = ("has_issues", "private")


def _repo_changes(data: dict[str, Any]) -> dict[str, Any]:
    """Columns a ``PATCH /repos/{o}/{r}`` body sets; 422 for a wrongly typed field or a
    name GitHub would refuse (a rename)."""
    changes: dict[str, Any] = {}
    if "name" in data:
        name = data["name"]
        if not isinstance(name, str) or not _REPO_NAME.match(name):
            raise invalid("Repository", "name", "invalid", "name is not a repository name")
        if refused := _reserved(name):
            raise refused
        changes["name"] = name
    for flag in _FLAGS:
        if flag in data:
            if not isinstance(data[flag], bool):
                raise invalid("Repository", flag, "invalid", f"{flag} must be a boolean")
            changes[flag] = int(data[flag])
    if "description" in data:
        changes["description"] = check_text("Repository", "description", data["description"])
    settings = {}
    for key, default in render.MERGE_SETTINGS.items():
        if key not in data:
            continue
        value = data[key]
        if isinstance(default, bool) and not isinstance(value, bool):
            raise invalid("Repository", key, "invalid", f"{key} must be a boolean")
        if isinstance(default, str) and value not in _SETTING_CHOICES[key]:
            raise invalid("Repository", key, "invalid", f"{key} is not one of the choices")
        settings[key] = value
    if settings:
        changes["settings"] = settings
    return changes


_SETTING_CHOICES = {
    "squash_merge_commit_title": ("PR_TITLE", "COMMIT_OR_PR_TITLE"),
    "squash_merge_commit_message": ("PR_BODY", "COMMIT_MESSAGES", "BLANK"),
    "merge_commit_title": ("PR_TITLE", "MERGE_MESSAGE"),
    "merge_commit_message": ("PR_BODY", "PR_TITLE", "BLANK"),
}


async def update_repo(request: web.Request) -> web.Response:
    """``PATCH /repos/{owner}/{repo}`` (admin): ``has_issues``, ``private``, ``description``
    and ``name`` (a rename; the git stays where it is, kept by id). With ``has_issues``
    false every issue endpoint answers 410, as on GitHub."""
    acc = repo_access(request, Role.ADMIN)
    changes = _repo_changes(await read_object(request))
    name = str(changes.get("name", acc.row["name"]))
    if name == acc.row["name"]:
        changes.pop("name", None)
    store = hub_of(request).store
    if "settings" in changes:
        old = json.loads(acc.row.get("settings") or "{}")
        changes["settings"] = json.dumps({**old, **changes["settings"]}, sort_keys=True)
    if changes:
        changes["updated_at"] = now_us()
        cols = ", ".join(f"{column} = ?" for column in changes)
        with store.write() as db:
            taken = "SELECT 1 FROM repos WHERE owner_id = ? AND name = ? AND id != ?"
            if "name" in changes and db.execute(taken, (acc.owner["id"], name, acc.id)).fetchone():
                raise invalid("Repository", "name", "custom", "name already exists on this account")
            db.execute(f"UPDATE repos SET {cols} WHERE id = ?", (*changes.values(), acc.id))
            # the old name now redirects, as on GitHub (a change of case needs none: names
            # are found whatever their case)
            if "name" in changes and name.lower() != acc.row["name"].lower():
                db.execute(
                    "INSERT OR REPLACE INTO repo_redirects VALUES (?, ?, ?)",
                    (acc.owner["id"], acc.row["name"], acc.id),
                )
            store.record("repository", "edited", actor_id=viewer(request)["id"], repo_id=acc.id)
    fresh = repo_access(request, owner=acc.owner["login"], name=name)
    return reply(repo_object(request, fresh))


def _target_user(request: web.Request) -> dict[str, Any]:
    found = hub_of(request).store.user_by_login(request.match_info["user"])
    if found is None:
        raise not_found()
    return found


def _role_of(request: web.Request, acc: RepoAccess, target: dict[str, Any]) -> str:
    """The target user's role name: admin, maintain, push, triage, pull, read or none."""
    if target["id"] == acc.owner["id"]:
        return "admin"
    row = (
        hub_of(request)
        .store.db.execute(
            "SELECT permission FROM collaborators WHERE repo_id = ? AND user_id = ?",
            (acc.id, target["id"]),
        )
        .fetchone()
    )
    if row is not None:
        return str(row[0])
    return "none" if acc.row["private"] else "read"


async def get_permission(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/collaborators/{user}/permission``."""
    acc = repo_access(request)
    target = _target_user(request)
    role_name = _role_of(request, acc, target)
    role = _ROLE_NAME.get(role_name, role_name)
    rank = ROLE_NAMES.get(role_name, Role.PULL if role_name == "read" else Role.NONE)
    user = {
        **render.user_row(acc.base, target),
        "permissions": {n: rank >= r for n, r in ROLE_NAMES.items()},
        "role_name": role,
    }
    return reply({"permission": _LEGACY.get(role_name, role_name), "role_name": role, "user": user})


PUSH_TO_VIEW = "Must have push access to view repository collaborators."


def _access_of(request: web.Request, acc: RepoAccess, user: dict[str, Any]) -> Role:
    """The role ``user`` has on the repository (owner, collaborator, organisation, team);
    NONE when only a public repository's read access is theirs."""
    if user["id"] == acc.owner["id"]:
        return Role.ADMIN
    store = hub_of(request).store
    row = store.db.execute(
        "SELECT permission FROM collaborators WHERE repo_id = ? AND user_id = ?",
        (acc.id, user["id"]),
    ).fetchone()
    role = ROLE_NAMES.get(row[0], Role.NONE) if row else Role.NONE
    if acc.owner["type"] == "Organization":
        from relay.hub.api_orgs import org_role, team_role

        role = max(role, org_role(store, acc.owner["id"], user["id"]),
                   team_role(store, acc.id, user["id"]))  # fmt: skip
    return role


_ROLE_OF_RANK = {Role.ADMIN: "admin", Role.MAINTAIN: "maintain", Role.PUSH: "write",
                 Role.TRIAGE: "triage", Role.PULL: "read"}  # fmt: skip


def _collaborator(acc: RepoAccess, user: dict[str, Any], role: Role) -> dict[str, Any]:
    """GitHub's collaborator object: the user, its permissions and its role's name."""
    return {
        **render.user_row(acc.base, user),
        "permissions": {n: role >= r for n, r in ROLE_NAMES.items()},
        "role_name": _ROLE_OF_RANK[role],
    }


_AFFILIATIONS = ("outside", "direct", "all")


async def list_collaborators(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/collaborators`` (push access): everyone with access beyond a
    public repository's read, the owner first, then by login; ``affiliation`` (``all``,
    ``direct``: added to the repository itself, ``outside``: direct and not a member of the
    owning organisation) and ``permission`` (the least role) filter it."""
    acc = repo_access(request)
    if acc.role < Role.PUSH:
        raise ApiError(403, PUSH_TO_VIEW)
    affiliation = request.query.get("affiliation", "all")
    if affiliation not in _AFFILIATIONS:
        raise invalid("Collaborator", "affiliation", "invalid")
    wanted = request.query.get("permission")
    if wanted is not None and wanted not in ROLE_NAMES:
        raise invalid("Collaborator", "permission", "invalid")
    store = hub_of(request).store
    direct = [r[0] for r in store.db.execute(
        "SELECT user_id FROM collaborators WHERE repo_id = ?", (acc.id,))]  # fmt: skip
    ids: list[int] = list(direct)
    members: set[int] = set()
    if acc.owner["type"] == "Organization":
        members = {r[0] for r in store.db.execute(
            "SELECT user_id FROM org_members WHERE org_id = ? AND state = 'active'",
            (acc.owner["id"],))}  # fmt: skip
        teams = store.db.execute(
            "SELECT tm.user_id FROM team_members tm JOIN team_repos tr ON tr.team_id = tm.team_id"
            " WHERE tr.repo_id = ?", (acc.id,))  # fmt: skip
        ids += [*members, *(r[0] for r in teams)]
    else:
        ids.insert(0, acc.owner["id"])
    if affiliation != "all":
        ids = [i for i in direct if affiliation == "direct" or i not in members]
    found = []
    for ident in dict.fromkeys(ids):
        user = store.user(ident)
        role = _access_of(request, acc, user)
        if role > Role.NONE and (wanted is None or role >= ROLE_NAMES[wanted]):
            found.append((ident != acc.owner["id"], user["login"].lower(), user, role))
    found.sort(key=lambda f: (f[0], f[1]))
    page, per_page = paging(request)
    chosen = found[(page - 1) * per_page : page * per_page]
    return paged(request, [_collaborator(acc, u, r) for _, _, u, r in chosen], len(found))


async def check_collaborator(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/collaborators/{user}`` (push access): 204 when the user has
    access beyond a public repository's read, else 404."""
    acc = repo_access(request)
    if acc.role < Role.PUSH:
        raise ApiError(403, PUSH_TO_VIEW)
    target = hub_of(request).store.user_by_login(request.match_info["user"])
    if target is None or _access_of(request, acc, target) == Role.NONE:
        raise not_found()
    return no_content()


async def remove_collaborator(request: web.Request) -> web.Response:
    """``DELETE /repos/{o}/{r}/collaborators/{user}`` (admin, or the collaborator leaving):
    204; the user's pending invitation to the repository is withdrawn too."""
    acc = repo_access(request)
    me = viewer(request)
    target = _target_user(request)
    if target["id"] != me["id"]:
        need(acc.role, Role.ADMIN)
    store = hub_of(request).store
    with store.write() as db:
        gone = db.execute(
            "DELETE FROM collaborators WHERE repo_id = ? AND user_id = ?", (acc.id, target["id"])
        ).rowcount
        db.execute(
            "DELETE FROM invitations WHERE repo_id = ? AND invitee_id = ?", (acc.id, target["id"])
        )
        if gone:
            store.record("member", "removed", actor_id=me["id"], repo_id=acc.id)
    return no_content()


async def put_collaborator(request: web.Request) -> web.Response:
    """``PUT /repos/{o}/{r}/collaborators/{user}``: 201 with the (auto-accepted)
    invitation when new, 204 when the user already collaborates."""
    acc = repo_access(request, Role.ADMIN)
    target = _target_user(request)
    data = await read_object(request)
    permission = data.get("permission", "push")
    if not isinstance(permission, str):
        raise invalid("Collaborator", "permission", "invalid", "permission must be a string")
    if permission not in ROLE_NAMES:
        raise ApiError(422, f"Invalid permission: {permission}")
    if target["id"] == acc.owner["id"]:
        raise ApiError(422, "Repository owner cannot be a collaborator")
    from relay.hub.api_invitations import invitation_object, invite

    store, me = hub_of(request).store, viewer(request)
    if (
        hub_of(request).invitations
        and _role_of(request, acc, target) in ("none", "read")
        and not (
            store.db.execute(
                "SELECT 1 FROM collaborators WHERE repo_id = ? AND user_id = ?",
                (acc.id, target["id"]),
            ).fetchone()
        )
    ):  # GitHub's way: an invitation, pending until the invitee accepts it
        return created(invitation_object(request, acc, invite(request, acc, target, permission)))
    existed = store.db.execute(
        "SELECT 1 FROM collaborators WHERE repo_id = ? AND user_id = ?", (acc.id, target["id"])
    ).fetchone()
    if existed:
        with store.write() as db:
            db.execute(
                "UPDATE collaborators SET permission = ? WHERE repo_id = ? AND user_id = ?",
                (permission, acc.id, target["id"]),
            )
        return no_content()
    # by default the invitation is real (its id is the invitations table's) and accepted
    # at once, as if the invitee had accepted it straight away
    row = invite(request, acc, target, permission)
    with store.write() as db:
        db.execute("DELETE FROM invitations WHERE id = ?", (row["id"],))
        db.execute(
            "INSERT OR REPLACE INTO collaborators VALUES (?, ?, ?)",
            (acc.id, target["id"], permission),
        )
        store.record("member", "added", actor_id=me["id"], repo_id=acc.id)
    return created(invitation_object(request, acc, row))


async def rate_limit(request: web.Request) -> web.Response:
    """``GET /rate_limit`` (not charged; the middleware knows)."""
    key = request.get("rate_key", "")
    windows = {"core": hub_of(request).window(key)}
    windows["graphql"] = hub_of(request).window(GRAPHQL_KEY + key)
    windows["search"] = hub_of(request).window(SEARCH_KEY + key)
    resources = {
        name: {"limit": win.limit, "used": win.used, "remaining": win.limit - win.used,
               "reset": win.reset, "resource": name}
        for name, win in windows.items()
    }  # fmt: skip
    core = resources["core"]
    reset = int(time.time()) + 60
    for name, limit in _OTHER_LIMITS.items():  # the hub serves none of these; full budgets
        resources[name] = {"limit": limit, "used": 0, "remaining": limit, "reset": reset,
                           "resource": name}  # fmt: skip
    return reply({"resources": resources, "rate": core})


_OTHER_LIMITS = {
    "integration_manifest": 5000, "source_import": 100,
    "code_scanning_upload": 1000, "code_scanning_autofix": 10, "actions_runner_registration": 10000,
    "scim": 15000, "dependency_snapshots": 100, "dependency_sbom": 100, "audit_log": 1750,
    "audit_log_streaming": 15, "code_search": 10,
}  # fmt: skip


_ROOT_LINKS = {
    "current_user_url": "/user",
    "current_user_authorizations_html_url": "@/settings/connections/applications{/client_id}",
    "authorizations_url": "/authorizations",
    "code_search_url": "/search/code?q={query}{&page,per_page,sort,order}",
    "commit_search_url": "/search/commits?q={query}{&page,per_page,sort,order}",
    "emails_url": "/user/emails",
    "emojis_url": "/emojis",
    "events_url": "/events",
    "feeds_url": "/feeds",
    "followers_url": "/user/followers",
    "following_url": "/user/following{/target}",
    "gists_url": "/gists{/gist_id}",
    "hub_url": "/hub",
    "issue_search_url": "/search/issues?q={query}{&page,per_page,sort,order}",
    "issues_url": "/issues",
    "keys_url": "/user/keys",
    "label_search_url": "/search/labels?q={query}&repository_id={repository_id}{&page,per_page}",
    "notifications_url": "/notifications",
    "organization_url": "/orgs/{org}",
    "organization_repositories_url": "/orgs/{org}/repos{?type,page,per_page,sort}",
    "organization_teams_url": "/orgs/{org}/teams",
    "public_gists_url": "/gists/public",
    "rate_limit_url": "/rate_limit",
    "repository_url": "/repos/{owner}/{repo}",
    "repository_search_url": "/search/repositories?q={query}{&page,per_page,sort,order}",
    "current_user_repositories_url": "/user/repos{?type,page,per_page,sort}",
    "starred_url": "/user/starred{/owner}{/repo}",
    "starred_gists_url": "/gists/starred",
    "topic_search_url": "/search/topics?q={query}{&page,per_page}",
    "user_url": "/users/{user}",
    "user_organizations_url": "/user/orgs",
    "user_repositories_url": "/users/{user}/repos{?type,page,per_page,sort}",
    "user_search_url": "/search/users?q={query}{&page,per_page,sort,order}",
}


async def root(request: web.Request) -> web.Response:
    """``GET /api/v3/``: a GitHub Enterprise Server's API root, the URL templates of its
    API (``@`` marks a page's URL); `gh auth status` reads its token's scopes here."""
    base = origin(request)
    web_base = render.web_of(base)
    links = {
        key: web_base + path[1:] if path.startswith("@") else base + path
        for key, path in _ROOT_LINKS.items()
    }
    return reply(links)
