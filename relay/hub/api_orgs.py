"""Organisations: made by an admin of the hub (GitHub Enterprise Server's
``POST /admin/organizations``), their members, their teams (as far as branch-protection
restrictions and repository access need them) and the repositories they own.

Membership follows GitHub: an owner's ``PUT .../memberships/{user}`` (or adding an outsider
to a team) invites; the membership is ``pending``, gives nothing, and turns ``active`` when
the user accepts it (``PATCH /user/memberships/orgs/{org}`` ``{"state": "active"}``).
Memberships are concealed: outsiders see no members.

An organisation is an account (a ``users`` row of type ``Organization``), so its
repositories are ``/repos/{org}/{name}`` like anyone's. Access follows GitHub: an owner
(``admin`` member) administers every repository of the organisation, a member reads them
(the default base permission, ``read``), a team's members have the role the team was
given on a repository, and outsiders see only public ones.
"""

from __future__ import annotations

import re
from typing import Any

from aiohttp import web

from relay.hub import render
from relay.hub.api_repos import LOGIN_RULE, RepoAccess, create_owned_repo, repo_access, repo_object
from relay.hub.store import Store, now_us
from relay.hub.web import (
    ROLE_NAMES,
    ApiError,
    Role,
    created,
    hub_of,
    invalid,
    no_content,
    not_found,
    origin,
    paged,
    paging,
    read_object,
    reply,
    viewer,
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS org_members (
  org_id INTEGER NOT NULL, user_id INTEGER NOT NULL, role TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'active', PRIMARY KEY (org_id, user_id));
CREATE TABLE IF NOT EXISTS teams (
  id INTEGER PRIMARY KEY AUTOINCREMENT, org_id INTEGER NOT NULL, name TEXT NOT NULL,
  slug TEXT NOT NULL COLLATE NOCASE, description TEXT, privacy TEXT NOT NULL,
  created_at INTEGER NOT NULL, UNIQUE (org_id, slug));
CREATE TABLE IF NOT EXISTS team_members (
  team_id INTEGER NOT NULL, user_id INTEGER NOT NULL, role TEXT NOT NULL,
  PRIMARY KEY (team_id, user_id));
CREATE TABLE IF NOT EXISTS team_repos (
  team_id INTEGER NOT NULL, repo_id INTEGER NOT NULL, permission TEXT NOT NULL,
  PRIMARY KEY (team_id, repo_id));
"""
ORG_DOCS = "https://docs.github.com/rest/orgs/"


def install(store: Store) -> None:
    """Create the tables (idempotent; an older data folder's members are all active)."""
    store.db.executescript(SCHEMA)
    columns = {r[1] for r in store.db.execute("PRAGMA table_info(org_members)")}
    if "state" not in columns:
        store.db.execute("ALTER TABLE org_members ADD COLUMN state TEXT NOT NULL DEFAULT 'active'")


def org_role(store: Store, org_id: int, user_id: int | None) -> Role:
    """What an organisation's membership gives on every repository it owns: an owner
    administers, a member reads, anyone else nothing (beyond a public repository)."""
    if user_id is None:
        return Role.NONE
    row = store.db.execute(
        "SELECT role FROM org_members WHERE org_id = ? AND user_id = ? AND state = 'active'",
        (org_id, user_id),
    ).fetchone()
    if row is None:
        return Role.NONE
    return Role.ADMIN if row[0] == "admin" else Role.PULL


def team_role(store: Store, repo_id: int, user_id: int | None) -> Role:
    """The best role any of the user's teams has on the repository."""
    if user_id is None:
        return Role.NONE
    rows = store.db.execute(
        "SELECT tr.permission FROM team_repos tr JOIN team_members tm ON tm.team_id = tr.team_id"
        " JOIN teams t ON t.id = tr.team_id JOIN org_members m ON m.org_id = t.org_id"
        " AND m.user_id = tm.user_id AND m.state = 'active'"
        " WHERE tr.repo_id = ? AND tm.user_id = ?",
        (repo_id, user_id),
    )
    return max((ROLE_NAMES.get(r[0], Role.NONE) for r in rows), default=Role.NONE)


def _org(request: web.Request) -> dict[str, Any]:
    found = hub_of(request).store.user_by_login(request.match_info["org"])
    if found is None or found["type"] != "Organization":
        raise not_found()
    return found


def _need_owner(request: web.Request, org: dict[str, Any]) -> None:
    me = viewer(request)
    if org_role(hub_of(request).store, org["id"], me["id"]) < Role.ADMIN:
        raise ApiError(403, "You must be an admin to do that.")


def org_object(request: web.Request, org: dict[str, Any], *, full: bool) -> dict[str, Any]:
    """GitHub's organization-simple, or with ``full`` organization-full."""
    base = origin(request)
    api = f"{base}/orgs/{org['login']}"
    out: dict[str, Any] = {
        "login": org["login"], "id": org["id"],
        "node_id": render.node_id("Organization", org["id"]), "url": api,
        "repos_url": f"{api}/repos", "events_url": f"{api}/events", "hooks_url": f"{api}/hooks",
        "issues_url": f"{api}/issues", "members_url": f"{api}/members{{/member}}",
        "public_members_url": f"{api}/public_members{{/member}}",
        "avatar_url": f"{render.web_of(base)}/avatars/u/{org['id']}", "description": None,
    }  # fmt: skip
    if full:
        db = hub_of(request).store.db
        public = db.execute(
            "SELECT COUNT(*) FROM repos WHERE owner_id = ? AND private = 0", (org["id"],)
        ).fetchone()[0]
        out.update({
            "name": org["login"], "company": None, "blog": "", "location": None, "email": None,
            "twitter_username": None, "is_verified": False,
            "has_organization_projects": True, "has_repository_projects": True,
            "public_repos": public, "public_gists": 0, "followers": 0, "following": 0,
            "html_url": f"{render.web_of(base)}/{org['login']}",
            "created_at": render.stamp(org["created_at"]),
            "updated_at": render.stamp(org["created_at"]), "archived_at": None,
            "type": "Organization",
        })  # fmt: skip
    return out


async def create_org(request: web.Request) -> web.Response:
    """``POST /admin/organizations`` ``{"login", "admin"}``: only an admin of the hub (a
    site administrator, as on GitHub Enterprise Server); ``admin`` becomes its owner."""
    viewer(request)
    if not request.get("admin"):
        raise not_found()  # as every admin endpoint to anyone else
    data = await read_object(request)
    login, owner = data.get("login"), data.get("admin")
    if not isinstance(login, str) or not LOGIN_RULE.match(login):
        raise invalid("Organization", "login", "invalid")
    store = hub_of(request).store
    first = store.user_by_login(owner) if isinstance(owner, str) else None
    if first is None:
        raise invalid("Organization", "admin", "invalid", "admin must be an existing user")
    if store.user_by_login(login) is not None:
        raise invalid("Organization", "login", "already_exists", "login is taken")
    with store.write() as db:
        cur = db.execute(
            "INSERT INTO users (login, type, created_at) VALUES (?, 'Organization', ?)",
            (login, now_us()),
        )
        db.execute(
            "INSERT INTO org_members (org_id, user_id, role) VALUES (?, ?, 'admin')",
            (cur.lastrowid, first["id"]),
        )
    org = store.user_by_login(login)
    assert org is not None
    return created(org_object(request, org, full=False))


async def get_org(request: web.Request) -> web.Response:
    """``GET /orgs/{org}``."""
    return reply(org_object(request, _org(request), full=True))


def _member_row(store: Store, org_id: int, user_id: int) -> dict[str, Any] | None:
    """The membership row (role and state, active or pending), or None."""
    row = store.db.execute(
        "SELECT role, state FROM org_members WHERE org_id = ? AND user_id = ?", (org_id, user_id)
    ).fetchone()
    return None if row is None else dict(row)


def _membership(request: web.Request, org: dict[str, Any], user: dict[str, Any]) -> dict[str, Any]:
    row = _member_row(hub_of(request).store, org["id"], user["id"]) or {}
    base = origin(request)
    return {
        "url": f"{base}/orgs/{org['login']}/memberships/{user['login']}",
        "state": row.get("state", "active"), "role": row.get("role", "member"),
        "organization_url": f"{base}/orgs/{org['login']}",
        "organization": org_object(request, org, full=False),
        "user": render.user_row(base, user),
    }  # fmt: skip


def _user(request: web.Request) -> dict[str, Any]:
    found = hub_of(request).store.user_by_login(request.match_info["username"])
    if found is None or found["type"] == "Organization":
        raise not_found()
    return found


async def get_membership(request: web.Request) -> web.Response:
    """``GET /orgs/{org}/memberships/{username}``: 404 for a non-member."""
    org, user = _org(request), _user(request)
    me = viewer(request)
    store = hub_of(request).store
    if _member_row(store, org["id"], user["id"]) is None:
        raise not_found()
    if me["id"] != user["id"] and org_role(store, org["id"], me["id"]) == Role.NONE:
        raise not_found()  # memberships are concealed from outsiders
    return reply(_membership(request, org, user))


async def set_membership(request: web.Request) -> web.Response:
    """``PUT /orgs/{org}/memberships/{username}`` ``{"role": "member"|"admin"}`` (owners)."""
    org, user = _org(request), _user(request)
    _need_owner(request, org)
    role = (await read_object(request)).get("role", "member")
    if role not in ("member", "admin"):
        raise invalid("Membership", "role", "invalid")
    store = hub_of(request).store
    with store.write() as db:  # a new member is invited (pending); a member's role changes
        db.execute(
            "INSERT INTO org_members (org_id, user_id, role, state) VALUES (?, ?, ?, 'pending')"
            " ON CONFLICT (org_id, user_id) DO UPDATE SET role = excluded.role",
            (org["id"], user["id"], role),
        )
    return reply(_membership(request, org, user))


async def my_memberships(request: web.Request) -> web.Response:
    """``GET /user/memberships/orgs`` (``state``: active or pending): the caller's."""
    me = viewer(request)
    state = request.query.get("state")
    if state not in (None, "active", "pending"):
        raise invalid("Membership", "state", "invalid")
    store = hub_of(request).store
    rows = store.db.execute(
        "SELECT org_id FROM org_members WHERE user_id = ? AND (? IS NULL OR state = ?)"
        " ORDER BY org_id",
        (me["id"], state, state),
    ).fetchall()
    items = [_membership(request, store.user(r[0]), me) for r in rows]
    page, per_page = paging(request)
    return paged(request, items[(page - 1) * per_page : page * per_page], len(items))


def _my_membership(request: web.Request) -> tuple[dict[str, Any], dict[str, Any]]:
    org, me = _org(request), viewer(request)
    if _member_row(hub_of(request).store, org["id"], me["id"]) is None:
        raise not_found()
    return org, me


async def my_membership(request: web.Request) -> web.Response:
    """``GET /user/memberships/orgs/{org}``: the caller's membership (404: none)."""
    org, me = _my_membership(request)
    return reply(_membership(request, org, me))


async def accept_membership(request: web.Request) -> web.Response:
    """``PATCH /user/memberships/orgs/{org}`` ``{"state": "active"}``: accept the invitation."""
    org, me = _my_membership(request)
    if (await read_object(request)).get("state") != "active":
        raise invalid("Membership", "state", "invalid")
    store = hub_of(request).store
    with store.write() as db:
        db.execute(
            "UPDATE org_members SET state = 'active' WHERE org_id = ? AND user_id = ?",
            (org["id"], me["id"]),
        )
    return reply(_membership(request, org, me))


async def remove_membership(request: web.Request) -> web.Response:
    """``DELETE /orgs/{org}/memberships/{username}`` (owners)."""
    org, user = _org(request), _user(request)
    _need_owner(request, org)
    store = hub_of(request).store
    with store.write() as db:
        db.execute(
            "DELETE FROM org_members WHERE org_id = ? AND user_id = ?", (org["id"], user["id"])
        )
        db.execute(
            "DELETE FROM team_members WHERE user_id = ? AND team_id IN"
            " (SELECT id FROM teams WHERE org_id = ?)",
            (user["id"], org["id"]),
        )
    return no_content()


async def list_members(request: web.Request) -> web.Response:
    """``GET /orgs/{org}/members``, by login."""
    org = _org(request)
    store = hub_of(request).store
    me = request.get("viewer")
    if me is None or org_role(store, org["id"], me["id"]) == Role.NONE:
        rows = []  # outsiders see public members only, and every membership is concealed
    else:
        rows = store.db.execute(
            "SELECT u.* FROM org_members m JOIN users u ON u.id = m.user_id WHERE m.org_id = ?"
            " AND m.state = 'active' ORDER BY u.login COLLATE NOCASE",
            (org["id"],),
        ).fetchall()
    page, per_page = paging(request)
    base = origin(request)
    items = [render.user_row(base, dict(r)) for r in rows]
    return paged(request, items[(page - 1) * per_page : page * per_page], len(items))


async def create_org_repo(request: web.Request) -> web.Response:
    """``POST /orgs/{org}/repos``: a member creates a repository the organisation owns."""
    org = _org(request)
    me = viewer(request)
    if org_role(hub_of(request).store, org["id"], me["id"]) == Role.NONE:
        raise not_found()
    return await create_owned_repo(request, org)


async def list_org_repos(request: web.Request) -> web.Response:
    """``GET /orgs/{org}/repos``: those the caller may see, by full name."""
    org = _org(request)
    rows = (
        hub_of(request)
        .store.db.execute(
            "SELECT name FROM repos WHERE owner_id = ? ORDER BY name COLLATE NOCASE", (org["id"],)
        )
        .fetchall()
    )
    items = []
    for row in rows:
        try:
            items.append(
                repo_object(request, repo_access(request, owner=org["login"], name=row[0]))
            )
        except ApiError:
            continue
    page, per_page = paging(request)
    return paged(request, items[(page - 1) * per_page : page * per_page], len(items))


# --- teams ---------------------------------------------------------------------------


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9_]+", "-", name.lower()).strip("-") or "team"


def team_object(request: web.Request, org: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    """GitHub's team object (the full one's fields that a team of the hub has)."""
    base = origin(request)
    api = f"{base}/orgs/{org['login']}/teams/{row['slug']}"
    db = hub_of(request).store.db
    count = db.execute("SELECT COUNT(*) FROM team_members WHERE team_id = ?", (row["id"],))
    repos = db.execute("SELECT COUNT(*) FROM team_repos WHERE team_id = ?", (row["id"],))
    return {
        "id": row["id"], "node_id": render.node_id("Team", row["id"]), "url": api,
        "html_url": f"{render.web_of(base)}/orgs/{org['login']}/teams/{row['slug']}",
        "name": row["name"], "slug": row["slug"], "description": row["description"],
        "privacy": row["privacy"], "notification_setting": "notifications_enabled",
        "permission": "pull", "members_url": f"{api}/members{{/member}}",
        "repositories_url": f"{api}/repos", "parent": None, "type": "organization",
        "organization_id": org["id"],
        "members_count": count.fetchone()[0], "repos_count": repos.fetchone()[0],
        "created_at": render.stamp(row["created_at"]),
        "updated_at": render.stamp(row["created_at"]),
        "organization": org_object(request, org, full=True),
    }  # fmt: skip


def _team(request: web.Request, org: dict[str, Any]) -> dict[str, Any]:
    row = (
        hub_of(request)
        .store.db.execute(
            "SELECT * FROM teams WHERE org_id = ? AND slug = ?",
            (org["id"], request.match_info["team_slug"]),
        )
        .fetchone()
    )
    if row is None:
        raise not_found()
    return dict(row)


async def create_team(request: web.Request) -> web.Response:
    """``POST /orgs/{org}/teams`` ``{"name", "description", "privacy"}`` (owners); the
    creator maintains it, as on GitHub."""
    org = _org(request)
    _need_owner(request, org)
    data = await read_object(request)
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise invalid("Team", "name", "missing_field")
    privacy = data.get("privacy", "secret")
    if privacy not in ("secret", "closed"):
        raise invalid("Team", "privacy", "invalid")
    store, me = hub_of(request).store, viewer(request)
    slug = _slug(name)
    with store.write() as db:
        taken = "SELECT 1 FROM teams WHERE org_id = ? AND slug = ?"
        if db.execute(taken, (org["id"], slug)).fetchone():
            raise invalid("Team", "name", "already_exists", "Name must be unique for this org")
        cur = db.execute(
            "INSERT INTO teams (org_id, name, slug, description, privacy, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (org["id"], name, slug, data.get("description"), privacy, now_us()),
        )
        db.execute(
            "INSERT INTO team_members VALUES (?, ?, 'maintainer')", (cur.lastrowid, me["id"])
        )
    return created(team_object(request, org, _team_by_slug(request, org, slug)))


def _team_by_slug(request: web.Request, org: dict[str, Any], slug: str) -> dict[str, Any]:
    row = (
        hub_of(request)
        .store.db.execute("SELECT * FROM teams WHERE org_id = ? AND slug = ?", (org["id"], slug))
        .fetchone()
    )
    return dict(row)


async def get_team(request: web.Request) -> web.Response:
    """``GET /orgs/{org}/teams/{team_slug}`` (members of the organisation)."""
    org = _org(request)
    if org_role(hub_of(request).store, org["id"], viewer(request)["id"]) == Role.NONE:
        raise not_found()
    return reply(team_object(request, org, _team(request, org)))


async def list_teams(request: web.Request) -> web.Response:
    """``GET /orgs/{org}/teams`` (members of the organisation)."""
    org = _org(request)
    if org_role(hub_of(request).store, org["id"], viewer(request)["id"]) == Role.NONE:
        raise not_found()
    rows = (
        hub_of(request)
        .store.db.execute(
            "SELECT * FROM teams WHERE org_id = ? ORDER BY name COLLATE NOCASE", (org["id"],)
        )
        .fetchall()
    )
    items = [team_object(request, org, dict(r)) for r in rows]
    page, per_page = paging(request)
    return paged(request, items[(page - 1) * per_page : page * per_page], len(items))


async def set_team_membership(request: web.Request) -> web.Response:
    """``PUT /orgs/{org}/teams/{team_slug}/memberships/{username}`` ``{"role"}`` (owners);
    a user outside the organisation joins it as a member, as on GitHub."""
    org = _org(request)
    _need_owner(request, org)
    team, user = _team(request, org), _user(request)
    role = (await read_object(request)).get("role", "member")
    if role not in ("member", "maintainer"):
        raise invalid("TeamMembership", "role", "invalid")
    store = hub_of(request).store
    with store.write() as db:
        db.execute(
            "INSERT OR IGNORE INTO org_members (org_id, user_id, role, state)"
            " VALUES (?, ?, 'member', 'pending')",
            (org["id"], user["id"]),
        )
        db.execute(
            "INSERT OR REPLACE INTO team_members VALUES (?, ?, ?)", (team["id"], user["id"], role)
        )
    url = f"{origin(request)}/teams/{team['id']}/memberships/{user['login']}"
    state = (_member_row(store, org["id"], user["id"]) or {}).get("state", "active")
    return reply({"url": url, "role": role, "state": state})


async def set_team_repo(request: web.Request) -> web.Response:
    """``PUT /orgs/{org}/teams/{team_slug}/repos/{owner}/{repo}`` ``{"permission"}``
    (owners): the team's role on one of the organisation's repositories."""
    org = _org(request)
    _need_owner(request, org)
    team = _team(request, org)
    acc = repo_access(request, Role.ADMIN)
    if acc.owner["id"] != org["id"]:
        raise ApiError(422, "Validation Failed", errors=[
            {"resource": "Team", "code": "custom", "field": "repo",
             "message": "Repository must be owned by the organization"}])  # fmt: skip
    permission = (await read_object(request)).get("permission", "push")
    if permission not in ROLE_NAMES:
        raise invalid("Team", "permission", "invalid")
    store = hub_of(request).store
    with store.write() as db:
        db.execute(
            "INSERT OR REPLACE INTO team_repos VALUES (?, ?, ?)", (team["id"], acc.id, permission)
        )
    return no_content()


def restriction_names(store: Store, acc: RepoAccess, restrictions: Any) -> dict[str, list[str]]:
    """A protection's ``restrictions`` checked against the organisation: every user and
    team must exist (GitHub's 422 otherwise); ValueError says which does not."""
    if not isinstance(restrictions, dict):
        raise ValueError("Invalid request.\n\nFor 'properties/restrictions', not an object.")
    out: dict[str, list[str]] = {}
    for key in ("users", "teams", "apps"):
        names = restrictions.get(key, [])
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ValueError(f"Invalid request.\n\nFor 'properties/{key}', not an array.")
        out[key] = names
    for login in out["users"]:
        if store.user_by_login(login) is None:
            raise ValueError(f"Validation Failed: user {login} does not exist")
    for slug in out["teams"]:
        found = store.db.execute(
            "SELECT 1 FROM teams WHERE org_id = ? AND slug = ?", (acc.owner["id"], slug)
        ).fetchone()
        if found is None:
            raise ValueError(f"Validation Failed: team {slug} does not exist")
    return out


def may_push(store: Store, user: dict[str, Any] | None, names: dict[str, list[str]]) -> bool:
    """Whether a protection's ``restrictions`` let ``user`` push: they are named, or are in
    a named team of the organisation."""
    if user is None:
        return False
    if user["login"].lower() in {n.lower() for n in names.get("users", [])}:
        return True
    teams = names.get("teams", [])
    if not teams:
        return False
    marks = ",".join("?" * len(teams))
    row = store.db.execute(
        f"SELECT 1 FROM team_members tm JOIN teams t ON t.id = tm.team_id"
        f" WHERE tm.user_id = ? AND t.slug IN ({marks})",
        (user["id"], *teams),
    ).fetchone()
    return row is not None


def restricted_branches(
    store: Store, branches: dict[str, Any], user: dict[str, Any] | None
) -> list[str]:
    """The protected branches whose restrictions leave ``user`` out."""
    return sorted(
        name for name, settings in branches.items()
        if settings.get("restrictions") and not may_push(store, user, settings["restrictions"])
    )  # fmt: skip


def render_restrictions(
    request: web.Request, acc: RepoAccess, url: str, names: dict[str, list[str]]
) -> dict[str, Any]:
    """The ``restrictions`` object of a protection: its users, teams and apps."""
    store = hub_of(request).store
    users = [store.user_by_login(login) for login in names.get("users", [])]
    teams = [
        store.db.execute(
            "SELECT * FROM teams WHERE org_id = ? AND slug = ?", (acc.owner["id"], slug)
        ).fetchone()
        for slug in names.get("teams", [])
    ]
    team_rows = [dict(t) for t in teams if t is not None]
    return {
        "url": url, "users_url": f"{url}/users", "teams_url": f"{url}/teams",
        "apps_url": f"{url}/apps",
        "users": [render.user_row(acc.base, u) for u in users if u is not None],
        "teams": [
            {k: v for k, v in team_object(request, acc.owner, t).items()
             if k not in ("members_count", "repos_count", "organization", "created_at",
                          "updated_at")}
            for t in team_rows
        ],
        "apps": [],
    }  # fmt: skip


ROUTES = (
    ("POST", "/admin/organizations", create_org),
    ("GET", "/orgs/{org}", get_org),
    ("GET", "/orgs/{org}/members", list_members),
    ("GET", "/orgs/{org}/memberships/{username}", get_membership),
    ("PUT", "/orgs/{org}/memberships/{username}", set_membership),
    ("DELETE", "/orgs/{org}/memberships/{username}", remove_membership),
    ("GET", "/user/memberships/orgs", my_memberships),
    ("GET", "/user/memberships/orgs/{org}", my_membership),
    ("PATCH", "/user/memberships/orgs/{org}", accept_membership),
    ("POST", "/orgs/{org}/repos", create_org_repo),
    ("GET", "/orgs/{org}/repos", list_org_repos),
    ("POST", "/orgs/{org}/teams", create_team),
    ("GET", "/orgs/{org}/teams", list_teams),
    ("GET", "/orgs/{org}/teams/{team_slug}", get_team),
    ("PUT", "/orgs/{org}/teams/{team_slug}/memberships/{username}", set_team_membership),
    ("PUT", "/orgs/{org}/teams/{team_slug}/repos/{owner}/{repo}", set_team_repo),
)
DOC_PAGES: dict[object, str] = {
    create_org: "enterprise-admin/orgs#create-an-organization",
    get_org: "orgs/orgs#get-an-organization",
    list_members: "orgs/members#list-organization-members",
    get_membership: "orgs/members#get-organization-membership-for-a-user",
    set_membership: "orgs/members#set-organization-membership-for-a-user",
    remove_membership: "orgs/members#remove-organization-membership-for-a-user",
    my_memberships: "orgs/members#list-organization-memberships-for-the-authenticated-user",
    my_membership: "orgs/members#get-an-organization-membership-for-the-authenticated-user",
    accept_membership: (
        "orgs/members#update-an-organization-membership-for-the-authenticated-user"
    ),
    create_org_repo: "repos/repos#create-an-organization-repository",
    list_org_repos: "repos/repos#list-organization-repositories",
    create_team: "teams/teams#create-a-team",
    list_teams: "teams/teams#list-teams",
    get_team: "teams/teams#get-a-team-by-name",
    set_team_membership: "teams/members#add-or-update-team-membership-for-a-user",
    set_team_repo: "teams/teams#add-or-update-team-repository-permissions",
}
