"""Deployment environments: ``/repos/{o}/{r}/environments[/{name}]`` and an environment's
custom deployment branch policies, in GitHub's shapes, so that `relay doctor` can ask
whether a workflow on any branch could read an environment's secrets.

Reading needs read access to the repository (an App installation also needs the Actions
permission, which the hub's Apps lack: 403 "Resource not accessible by integration", as
GitHub answers); writing needs admin. An environment's ``protection_rules`` are what its
settings make them: ``wait_timer`` when the timer is set, ``required_reviewers`` when it
has reviewers (users only: the hub has no teams) and ``branch_policy`` when a deployment
branch policy restricts it; a ``deployment_branch_policy`` of ``null`` lets every branch
deploy. A branch policy's ``POST`` repeated answers 303 to the one there, as GitHub does.
Known difference: an environment's ``html_url`` names GitHub's page, which the hub does not
serve.

GitHub docs: "REST API endpoints for deployment environments", "REST API endpoints for
deployment branch policies".
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from aiohttp import web

from relay.hub import render
from relay.hub.api_repos import RepoAccess, repo_access
from relay.hub.store import Store, now_us
from relay.hub.web import (
    ApiError,
    Role,
    hub_of,
    invalid,
    no_content,
    not_found,
    one_row,
    paging,
    path_int,
    read_object,
    reply,
    viewer,
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS environments (
  id INTEGER PRIMARY KEY AUTOINCREMENT, repo_id INTEGER NOT NULL,
  name TEXT NOT NULL COLLATE NOCASE, wait_timer INTEGER NOT NULL DEFAULT 0,
  prevent_self_review INTEGER NOT NULL DEFAULT 0, reviewers TEXT NOT NULL DEFAULT '[]',
  branch_policy TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
  UNIQUE (repo_id, name));
CREATE TABLE IF NOT EXISTS branch_policies (
  id INTEGER PRIMARY KEY AUTOINCREMENT, environment_id INTEGER NOT NULL,
  name TEXT NOT NULL, type TEXT NOT NULL, UNIQUE (environment_id, name, type));
"""
DOCS = "https://docs.github.com/rest/deployments/environments"
POLICY_DOCS = "https://docs.github.com/rest/deployments/branch-policies"
MAX_WAIT = 43200  # minutes: thirty days
MAX_REVIEWERS = 6
_RULE_KINDS = ("wait_timer", "required_reviewers", "branch_policy")


def install(store: Store) -> None:
    """Create the tables (idempotent)."""
    store.db.executescript(SCHEMA)


def _access(request: web.Request, wanted: Role = Role.PULL) -> RepoAccess:
    """The repository; an App installation lacks the Actions permission environments need,
    and anyone short of admin may not change them."""
    acc = repo_access(request)
    me = request.get("viewer")
    if me is not None and me["type"] == "Bot":
        raise ApiError(403, "Resource not accessible by integration")
    if wanted >= Role.ADMIN:
        viewer(request)
        if acc.role < Role.ADMIN:
            raise ApiError(403, "Must have admin rights to Repository.")
    return acc


def _name(request: web.Request) -> str:
    return request.match_info["environment_name"]


def _row(request: web.Request, acc: RepoAccess) -> dict[str, Any] | None:
    row = (
        hub_of(request)
        .store.db.execute(
            "SELECT * FROM environments WHERE repo_id = ? AND name = ?", (acc.id, _name(request))
        )
        .fetchone()
    )
    return None if row is None else dict(row)


def _existing(request: web.Request, acc: RepoAccess) -> dict[str, Any]:
    row = _row(request, acc)
    if row is None:
        raise not_found()
    return row


def render_environment(
    request: web.Request, acc: RepoAccess, row: dict[str, Any]
) -> dict[str, Any]:
    """GitHub's environment object for one row."""
    base, ident = acc.base, int(row["id"])

    def rule(kind: str) -> dict[str, Any]:
        rule_id = ident * len(_RULE_KINDS) + _RULE_KINDS.index(kind)
        return {"id": rule_id, "node_id": render.node_id("Gate", rule_id), "type": kind}

    rules: list[dict[str, Any]] = []
    if row["wait_timer"]:
        rules.append({**rule("wait_timer"), "wait_timer": row["wait_timer"]})
    reviewers = json.loads(row["reviewers"])
    if reviewers:
        store = hub_of(request).store
        people = [
            {"type": "User", "reviewer": render.user_row(base, store.user(uid))}
            for uid in reviewers
        ]
        rules.append({**rule("required_reviewers"),
                      "prevent_self_review": bool(row["prevent_self_review"]),
                      "reviewers": people})  # fmt: skip
    policy = row["branch_policy"]
    if policy is not None:
        rules.append(rule("branch_policy"))
    name, web = quote(row["name"], safe=""), render.web_of(base)
    return {
        "id": ident, "node_id": render.node_id("Environment", ident), "name": row["name"],
        "url": f"{base}/repos/{acc.full}/environments/{name}",
        "html_url": f"{web}/{acc.full}/deployments/activity_log?environments_filter={name}",
        "created_at": render.stamp(row["created_at"]),
        "updated_at": render.stamp(row["updated_at"]),
        "protection_rules": rules,
        "deployment_branch_policy": None if policy is None else {
            "protected_branches": policy == "protected",
            "custom_branch_policies": policy == "custom",
        },
    }  # fmt: skip


async def list_environments(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/environments``: ``{total_count, environments}``, one page."""
    acc = _access(request)
    rows = (
        hub_of(request)
        .store.db.execute("SELECT * FROM environments WHERE repo_id = ? ORDER BY name", (acc.id,))
        .fetchall()
    )
    page, per_page = paging(request)
    window = rows[(page - 1) * per_page : page * per_page]
    items = [render_environment(request, acc, dict(r)) for r in window]
    return reply({"total_count": len(rows), "environments": items})


async def get_environment(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/environments/{name}``: 404 when there is none of that name."""
    acc = _access(request)
    return reply(render_environment(request, acc, _existing(request, acc)))


def _settings(request: web.Request, acc: RepoAccess, data: dict[str, Any]) -> dict[str, Any]:
    """The columns a ``PUT`` body sets (those it leaves out stay); 422 as GitHub words it."""
    out: dict[str, Any] = {}
    if "wait_timer" in data:
        wait = data["wait_timer"]
        if not isinstance(wait, int) or isinstance(wait, bool) or not 0 <= wait <= MAX_WAIT:
            raise invalid("Environment", "wait_timer", "invalid",
                          f"wait_timer must be an integer between 0 and {MAX_WAIT}")  # fmt: skip
        out["wait_timer"] = wait
    if "prevent_self_review" in data:
        if not isinstance(data["prevent_self_review"], bool):
            raise invalid("Environment", "prevent_self_review", "invalid")
        out["prevent_self_review"] = int(data["prevent_self_review"])
    if "reviewers" in data:
        out["reviewers"] = json.dumps(_reviewers(request, acc, data["reviewers"]))
    if "deployment_branch_policy" in data:
        out["branch_policy"] = _policy(data["deployment_branch_policy"])
    return out


def _reviewers(request: web.Request, acc: RepoAccess, given: Any) -> list[int]:
    """User ids of the reviewers; each must exist and be able to read the repository."""
    if given is None:
        return []
    if not isinstance(given, list) or len(given) > MAX_REVIEWERS:
        raise invalid("Environment", "reviewers", "invalid",
                      f"reviewers must be a list of at most {MAX_REVIEWERS}")  # fmt: skip
    ids: list[int] = []
    for item in given:
        kind = item.get("type") if isinstance(item, dict) else None
        uid = item.get("id") if isinstance(item, dict) else None
        if kind != "User" or not isinstance(uid, int) or isinstance(uid, bool):
            raise invalid("Environment", "reviewers", "invalid",
                          "a reviewer is {\"type\": \"User\", \"id\": N}")  # fmt: skip
        if not _can_read(request, acc, uid):
            raise invalid("Environment", "reviewers", "invalid",
                          f"reviewer {uid} cannot read the repository")  # fmt: skip
        ids.append(uid)
    return list(dict.fromkeys(ids))


def _can_read(request: web.Request, acc: RepoAccess, uid: int) -> bool:
    db = hub_of(request).store.db
    if db.execute("SELECT 1 FROM users WHERE id = ?", (uid,)).fetchone() is None:
        return False
    if uid == acc.owner["id"] or not acc.row["private"]:
        return True
    sql = "SELECT 1 FROM collaborators WHERE repo_id = ? AND user_id = ?"
    return db.execute(sql, (acc.id, uid)).fetchone() is not None


def _policy(given: Any) -> str | None:
    """``null`` (every branch), ``protected`` or ``custom``: exactly one flag must be true."""
    if given is None:
        return None
    flags = ("protected_branches", "custom_branch_policies")
    if not isinstance(given, dict) or not all(isinstance(given.get(f), bool) for f in flags):
        raise invalid("Environment", "deployment_branch_policy", "invalid",
                      "protected_branches and custom_branch_policies must be booleans")  # fmt: skip
    if given["protected_branches"] == given["custom_branch_policies"]:
        raise invalid("Environment", "deployment_branch_policy", "invalid",
                      "exactly one of protected_branches and custom_branch_policies"
                      " must be true")  # fmt: skip
    return "protected" if given["protected_branches"] else "custom"


async def put_environment(request: web.Request) -> web.Response:
    """``PUT /repos/{o}/{r}/environments/{name}`` (admin): create or update, 200."""
    acc = _access(request, Role.ADMIN)
    name = _name(request)
    if not name.strip() or len(name) > 255 or "," in name:
        raise invalid("Environment", "name", "invalid")
    cols = _settings(request, acc, await read_object(request))
    store, now, old = hub_of(request).store, now_us(), _row(request, acc)
    with store.write() as db:
        if old is None:
            db.execute("INSERT INTO environments (repo_id, name, created_at, updated_at)"
                       " VALUES (?, ?, ?, ?)", (acc.id, name, now, now))  # fmt: skip
        sets = "".join(f", {column} = ?" for column in cols)
        db.execute(
            f"UPDATE environments SET updated_at = ?{sets} WHERE repo_id = ? AND name = ?",
            (now, *cols.values(), acc.id, name),
        )
        if "branch_policy" in cols and cols["branch_policy"] != "custom":
            db.execute("DELETE FROM branch_policies WHERE environment_id IN (SELECT id FROM"
                       " environments WHERE repo_id = ? AND name = ?)", (acc.id, name))  # fmt: skip
    return reply(render_environment(request, acc, _existing(request, acc)))


async def delete_environment(request: web.Request) -> web.Response:
    """``DELETE /repos/{o}/{r}/environments/{name}`` (admin): 204, its policies with it."""
    acc = _access(request, Role.ADMIN)
    row = _existing(request, acc)
    with hub_of(request).store.write() as db:
        db.execute("DELETE FROM branch_policies WHERE environment_id = ?", (row["id"],))
        db.execute("DELETE FROM environments WHERE id = ?", (row["id"],))
    return no_content()


def _render_policy(row: dict[str, Any]) -> dict[str, Any]:
    ident = int(row["id"])
    return {"id": ident, "node_id": render.node_id("DeploymentBranchPolicy", ident),
            "name": row["name"], "type": row["type"]}  # fmt: skip


async def list_branch_policies(request: web.Request) -> web.Response:
    """``GET .../environments/{name}/deployment-branch-policies``: the name patterns."""
    acc = _access(request)
    env = _existing(request, acc)
    rows = (
        hub_of(request)
        .store.db.execute(
            "SELECT * FROM branch_policies WHERE environment_id = ? ORDER BY id", (env["id"],)
        )
        .fetchall()
    )
    page, per_page = paging(request)
    items = [_render_policy(dict(r)) for r in rows[(page - 1) * per_page : page * per_page]]
    return reply({"total_count": len(rows), "branch_policies": items})


async def get_branch_policy(request: web.Request) -> web.Response:
    """``GET .../deployment-branch-policies/{id}``: one name pattern (where a repeated
    ``POST`` is sent)."""
    acc = _access(request)
    env = _existing(request, acc)
    sql = "SELECT * FROM branch_policies WHERE id = ? AND environment_id = ?"
    return reply(_render_policy(one_row(request, sql, (path_int(request, "policy_id"), env["id"]))))


async def create_branch_policy(request: web.Request) -> web.Response:
    """``POST .../deployment-branch-policies`` (admin) ``{"name", "type"}``: 200; 404 unless
    the environment's policy is custom; 303 to the policy when that pattern exists."""
    acc = _access(request, Role.ADMIN)
    env = _existing(request, acc)
    if env["branch_policy"] != "custom":
        raise not_found()
    data = await read_object(request)
    name, kind = data.get("name"), data.get("type", "branch")
    if not isinstance(name, str) or not name.strip():
        raise invalid("DeploymentBranchPolicy", "name", "missing_field")
    if kind not in ("branch", "tag"):
        raise invalid("DeploymentBranchPolicy", "type", "invalid")
    store = hub_of(request).store
    sql = "SELECT * FROM branch_policies WHERE environment_id = ? AND name = ? AND type = ?"
    found = store.db.execute(sql, (env["id"], name, kind)).fetchone()
    policies = f"{acc.base}/repos/{acc.full}/environments/{quote(env['name'], safe='')}"
    if found is not None:
        location = f"{policies}/deployment-branch-policies/{found['id']}"
        return web.Response(status=303, headers={"Location": location})
    with store.write() as db:
        db.execute("INSERT INTO branch_policies (environment_id, name, type) VALUES (?, ?, ?)",
                   (env["id"], name, kind))  # fmt: skip
    return reply(_render_policy(dict(store.db.execute(sql, (env["id"], name, kind)).fetchone())))


E = "/repos/{owner}/{repo}/environments"
P = E + "/{environment_name}/deployment-branch-policies"
ROUTES = (
    ("GET", E, list_environments),
    ("GET", P, list_branch_policies),
    ("POST", P, create_branch_policy),
    ("GET", P + r"/{policy_id:\d+}", get_branch_policy),
    ("GET", E + "/{environment_name}", get_environment),
    ("PUT", E + "/{environment_name}", put_environment),
    ("DELETE", E + "/{environment_name}", delete_environment),
)
DOC_PAGES: dict[object, str] = {
    list_environments: "deployments/environments#list-environments",
    get_environment: "deployments/environments#get-an-environment",
    put_environment: "deployments/environments#create-or-update-an-environment",
    delete_environment: "deployments/environments#delete-an-environment",
    list_branch_policies: "deployments/branch-policies#list-deployment-branch-policies",
    create_branch_policy: "deployments/branch-policies#create-a-deployment-branch-policy",
    get_branch_policy: "deployments/branch-policies#get-a-deployment-branch-policy",
}
