"""Conformance: every route's answers, and every webhook payload, parse with the models
githubkit generates from GitHub's OpenAPI description, and the table below lists every
route the hub serves (adding a route without listing it here fails the first test).

Both API versions GitHub serves are checked, each with its own description's models
(the hub serves the same shapes for both).
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from gidgethub.aiohttp import GitHubAPI
from githubkit_schemas.v2022_11_28 import models as m2022
from githubkit_schemas.v2022_11_28.webhooks import WebhookNamespace as w2022
from githubkit_schemas.v2026_03_10 import models as m2026
from githubkit_schemas.v2026_03_10.webhooks import WebhookNamespace as w2026
from hubcalls import Answer, get_text, git, git_url, push_commit
from pydantic import TypeAdapter
from test_hub_hooks import Receiver, hook_body
from test_hub_tokens import _key_pair

from relay.edges.github.appauth import AppAuth
from relay.hub.app import build_app
from relay.hub.hooks import DELIVERED

NO_CONTENT = "204: no body"
GIT = "git smart HTTP: checked by running git"
PAGE = "a web page: HTML for people (tests/hub/test_hub_pages.py reads them in a browser)"
PAGE_GETS = (
    "/", "/-/relay.css", "/login", "/{owner}/{repo}", "/{owner}/{repo}/issues",
    "/{owner}/{repo}/issues/{number}", "/{owner}/{repo}/tree/{tail}",
    "/{owner}/{repo}/blob/{tail}", "/{owner}/{repo}/raw/{tail}", "/{login}",
)  # fmt: skip
R = "/repos/{owner}/{repo}"
ISSUE = R + "/issues/{number}"
COMMENT = R + "/issues/comments/{comment_id}"
HOOK = R + "/hooks/{hook_id}"
ENV = R + "/environments/{environment_name}"
EVENTS = "issue events: each by its own model"
GHES = "/api/v3"
BY_ID = "/repositories/{repository_id}"
INVITES = "invitations: test_invitation_routes_answer_in_githubs_shapes (a hub that invites)"
GRAPHQL = "GraphQL: GitHub's schema, checked by tests/hub/test_hub_graphql.py"

TABLE: dict[tuple[str, str], Any] = {
    ("GET", "/user"): "PrivateUser",
    ("GET", "/users/{login}"): "PublicUser",
    ("POST", "/user/repos"): "FullRepository",
    ("GET", "/user/repos"): "[Repository]",
    ("GET", "/rate_limit"): "RateLimitOverview",
    ("GET", R): "FullRepository",
    ("PATCH", R): "FullRepository",
    ("GET", R + "/collaborators/{user}/permission"): "RepositoryCollaboratorPermission",
    ("PUT", R + "/collaborators/{user}"): "RepositoryInvitation",
    ("GET", R + "/collaborators"): "[Collaborator]",
    ("GET", R + "/collaborators/{user}"): NO_CONTENT,
    ("DELETE", R + "/collaborators/{user}"): NO_CONTENT,
    ("GET", R + "/labels"): "[Label]",
    ("POST", R + "/labels"): "Label",
    ("GET", R + "/labels/{name}"): "Label",
    ("PATCH", R + "/labels/{name}"): "Label",
    ("DELETE", R + "/labels/{name}"): NO_CONTENT,
    ("GET", R + "/issues"): "[Issue]",
    ("POST", R + "/issues"): "Issue",
    ("GET", R + "/issues/comments"): "[IssueComment]",
    ("GET", R + "/issues/events/{event_id}"): "IssueEvent",
    ("GET", COMMENT): "IssueComment",
    ("PATCH", COMMENT): "IssueComment",
    ("DELETE", COMMENT): NO_CONTENT,
    ("GET", COMMENT + "/reactions"): "[Reaction]",
    ("POST", COMMENT + "/reactions"): "Reaction",
    ("DELETE", COMMENT + "/reactions/{reaction_id}"): NO_CONTENT,
    ("GET", ISSUE): "Issue",
    ("PATCH", ISSUE): "Issue",
    ("GET", ISSUE + "/labels"): "[Label]",
    ("POST", ISSUE + "/labels"): "[Label]",
    ("PUT", ISSUE + "/labels"): "[Label]",
    ("DELETE", ISSUE + "/labels"): NO_CONTENT,
    ("DELETE", ISSUE + "/labels/{name}"): "[Label]",
    ("PUT", ISSUE + "/lock"): NO_CONTENT,
    ("DELETE", ISSUE + "/lock"): NO_CONTENT,
    ("GET", ISSUE + "/comments"): "[IssueComment]",
    ("POST", ISSUE + "/comments"): "IssueComment",
    ("GET", ISSUE + "/events"): EVENTS,
    ("GET", ISSUE + "/reactions"): "[Reaction]",
    ("POST", ISSUE + "/reactions"): "Reaction",
    ("DELETE", ISSUE + "/reactions/{reaction_id}"): NO_CONTENT,
    ("POST", R + "/git/refs"): "GitRef",
    ("GET", R + "/git/ref/{ref}"): "GitRef",
    ("GET", R + "/git/refs"): "[GitRef]",
    ("GET", R + "/git/refs/{ref}"): "GitRef",
    ("GET", R + "/git/matching-refs/{ref}"): "[GitRef]",
    ("GET", R + "/git/matching-refs/"): "[GitRef]",
    ("GET", R + "/readme"): "ContentFile",
    ("GET", R + "/contents/{path}"): "ContentFile",
    ("GET", R + "/contents/"): "[ContentDirectoryItems]",
    ("PATCH", R + "/git/refs/{ref}"): "GitRef",
    ("DELETE", R + "/git/refs/{ref}"): NO_CONTENT,
    ("GET", R + "/branches"): "[ShortBranch]",
    ("GET", R + "/branches/{branch}"): "BranchWithProtection",
    ("GET", R + "/branches/{branch}/protection"): "BranchProtection",
    ("PUT", R + "/branches/{branch}/protection"): "ProtectedBranch",
    ("DELETE", R + "/branches/{branch}/protection"): NO_CONTENT,
    ("GET", R + "/hooks"): "[Hook]",
    ("POST", R + "/hooks"): "Hook",
    ("GET", HOOK): "Hook",
    ("PATCH", HOOK): "Hook",
    ("DELETE", HOOK): NO_CONTENT,
    ("GET", R + "/environments"): "ReposOwnerRepoEnvironmentsGetResponse200",
    ("GET", ENV): "Environment",
    ("PUT", ENV): "Environment",
    ("DELETE", ENV): NO_CONTENT,
    ("GET", ENV + "/deployment-branch-policies"): (
        "ReposOwnerRepoEnvironmentsEnvironmentNameDeploymentBranchPoliciesGetResponse200"
    ),
    ("POST", ENV + "/deployment-branch-policies"): "DeploymentBranchPolicy",
    ("GET", ENV + "/deployment-branch-policies/{policy_id}"): "DeploymentBranchPolicy",
    ("GET", "/app"): "Integration",
    ("POST", "/app/installations/{installation_id}/access_tokens"): "InstallationToken",
    ("GET", "/{owner}/{repo}.git/{tail}"): GIT,
    ("POST", "/{owner}/{repo}.git/{tail}"): GIT,
    **{("GET", path): PAGE for path in PAGE_GETS},
    ("POST", "/session"): PAGE,
    ("POST", "/logout"): PAGE,
    ("POST", "/graphql"): GRAPHQL,
    ("POST", "/api/graphql"): GRAPHQL,
    ("GET", GHES): "Root",
    ("GET", GHES + "/"): "Root",
    ("GET", R + "/git/refs/"): "[GitRef]",
    ("POST", "/admin/organizations"): "OrganizationSimple",
    ("GET", "/orgs/{org}"): "OrganizationFull",
    ("GET", "/orgs/{org}/members"): "[SimpleUser]",
    ("GET", "/orgs/{org}/memberships/{username}"): "OrgMembership",
    ("PUT", "/orgs/{org}/memberships/{username}"): "OrgMembership",
    ("DELETE", "/orgs/{org}/memberships/{username}"): NO_CONTENT,
    ("GET", "/user/memberships/orgs"): "[OrgMembership]",
    ("GET", "/user/memberships/orgs/{org}"): "OrgMembership",
    ("PATCH", "/user/memberships/orgs/{org}"): "OrgMembership",
    ("POST", "/orgs/{org}/repos"): "FullRepository",
    ("GET", "/orgs/{org}/repos"): "[MinimalRepository]",
    ("POST", "/orgs/{org}/teams"): "TeamFull",
    ("GET", "/orgs/{org}/teams"): "[Team]",
    ("GET", "/orgs/{org}/teams/{team_slug}"): "TeamFull",
    ("PUT", "/orgs/{org}/teams/{team_slug}/memberships/{username}"): "TeamMembership",
    ("PUT", "/orgs/{org}/teams/{team_slug}/repos/{owner}/{repo}"): NO_CONTENT,
    ("GET", R + "/invitations"): INVITES,
    ("PATCH", R + "/invitations/{invitation_id}"): INVITES,
    ("DELETE", R + "/invitations/{invitation_id}"): INVITES,
    ("GET", "/user/repository_invitations"): INVITES,
    ("PATCH", "/user/repository_invitations/{invitation_id}"): INVITES,
    ("DELETE", "/user/repository_invitations/{invitation_id}"): INVITES,
}
INVITATION_MODELS = {
    ("GET", R + "/invitations"): "[RepositoryInvitation]",
    ("PATCH", R + "/invitations/{invitation_id}"): "RepositoryInvitation",
    ("DELETE", R + "/invitations/{invitation_id}"): NO_CONTENT,
    ("GET", "/user/repository_invitations"): "[RepositoryInvitation]",
    ("PATCH", "/user/repository_invitations/{invitation_id}"): NO_CONTENT,
    ("DELETE", "/user/repository_invitations/{invitation_id}"): NO_CONTENT,
    ("PUT", R + "/collaborators/{user}"): "RepositoryInvitation",
}
EVENT_MODELS: dict[str, Any] = {
    "labeled": "LabeledIssueEvent",
    "unlabeled": "UnlabeledIssueEvent",
    "closed": "StateChangeIssueEvent",
    "reopened": "StateChangeIssueEvent",
    "renamed": "RenamedIssueEvent",
    "locked": "LockedIssueEvent",
    "unlocked": "IssueEvent",
}
ERRORS = {404: "BasicError", 403: "BasicError", 409: "BasicError", 422: "ValidationError"}
VERSIONS = {"2022-11-28": (m2022, w2022), "2026-03-10": (m2026, w2026)}


def model_of(spec: str, models: Any) -> Any:
    """The type a spec names in one version's models: ``Label`` or ``[Label]`` (a list)."""
    if spec.startswith("["):
        return list[getattr(models, spec.strip("[]"))]  # type: ignore[misc]
    return getattr(models, spec)


def served_routes(data: Path) -> set[tuple[str, str]]:
    """``(method, path)`` of every public route of a hub application (HEAD mirrors GET);
    a route under GitHub Enterprise Server's ``/api/v3`` counts as its api.github.com twin,
    which must exist (the Enterprise shape serves the same API, nothing less or more), and
    a route under ``/repositories/{repository_id}`` as its ``/repos/{owner}/{repo}`` twin."""
    app = build_app(data)
    found, enterprise, by_id = set(), set(), set()
    for route in app.router.routes():
        path = route.resource.canonical if route.resource is not None else ""
        if route.method == "HEAD" or path.startswith("/_hub/"):
            continue
        if path.startswith(GHES + "/") and path not in (GHES + "/",):
            enterprise.add((route.method, path.removeprefix(GHES)))
        elif path.startswith(BY_ID):
            by_id.add((route.method, R + path.removeprefix(BY_ID)))
        else:
            found.add((route.method, path))
    rest = {(m, p) for m, p in found if not p.startswith(("/{owner}", "/api/", "/graphql"))}
    rest |= {(m, BY_ID + p.removeprefix(R)) for m, p in by_id}
    assert enterprise == rest - {(m, p) for m, p in rest if TABLE.get((m, p)) == PAGE}
    # every route of a repository by name is served by its id too, and nothing else
    assert by_id == {(m, p) for m, p in found if p == R or p.startswith(R + "/")}
    return found


def test_every_route_is_in_the_conformance_table(tmp_path: Path) -> None:
    served = served_routes(tmp_path / "data")
    assert served - set(TABLE) == set(), "add these routes to TABLE (and to the flow below)"
    assert set(TABLE) - served == set(), "TABLE lists routes the hub no longer serves"


class Checker:
    """Calls the hub, checks each answer against its route's model, remembers the routes."""

    def __init__(self, api: Any, token: str, version: str) -> None:
        self.api, self.token, self.version = api, token, version
        self.models, self.seen = VERSIONS[version][0], set[tuple[str, str]]()
        self.models_by_route: dict[tuple[str, str], str] = {}

    def parse(self, spec: str, body: Any) -> None:
        """Validate ``body`` with the model ``spec`` names in this version's description."""
        TypeAdapter(model_of(spec, self.models)).validate_python(body)

    def __call__(
        self, method: str, route: str, path: str, body: Any = None, *, status: int = 200,
        token: str | None = None,
    ) -> Any:  # fmt: skip
        version = {"X-GitHub-Api-Version": self.version}
        answer: Answer = self.api(token or self.token, method, path, body, version)
        assert answer.status == status, (method, path, answer.body)
        model = self.models_by_route.get((method, route)) or TABLE[(method, route)]
        if status >= 400:
            self.parse(ERRORS[status], answer.body)
            assert answer.body["documentation_url"].startswith("https://docs.github.com/rest/")
            return answer.body
        if model == NO_CONTENT:
            assert answer.body is None
        elif model == EVENTS:
            for event in answer.body:
                self.parse(EVENT_MODELS[event["event"]], event)
        else:
            self.parse(model, answer.body)
        self.seen.add((method, route))
        return answer.body


def installation_token(hub: Any, full: str) -> tuple[dict[str, Any], AppAuth]:
    private, public = _key_pair()
    made = hub.admin("POST", "/_hub/apps", {
        "slug": f"conform-{full.split('/')[1]}", "public_key": public, "repositories": [full],
    })  # fmt: skip
    auth = AppAuth(app_id=str(made["app_id"]), installation_id=made["installation_id"],
                   private_key=private)  # fmt: skip
    return made, auth


@pytest.fixture
def sink() -> Iterator[Receiver]:
    """A webhook receiver on loopback."""
    made = Receiver().start()
    yield made
    made.stop()


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_every_route_answers_in_githubs_shapes(
    hub: Any,
    api: Any,
    alice: str,
    bob: str,
    unique: str,
    tmp_path: Path,
    sink: Receiver,
    version: str,
) -> None:
    name = f"conform-{unique}"
    full = f"alice/{name}"
    r, check = f"/repos/{full}", Checker(api, alice, version)
    check("GET", "/user", "/user")
    bob_user = check("GET", "/users/{login}", "/users/bob")
    check("GET", "/rate_limit", "/rate_limit")
    for root in (GHES, GHES + "/"):  # GitHub Enterprise Server's API root
        assert check("GET", root, root)["repository_url"].endswith("/api/v3/repos/{owner}/{repo}")
    check("POST", "/user/repos", "/user/repos", {"name": name}, status=201)
    check("GET", "/user/repos", "/user/repos")
    check("GET", R, r)
    check("PATCH", R, r, {"description": "conformance"})
    check("PUT", R + "/collaborators/{user}", f"{r}/collaborators/bob", {}, status=201)
    check("GET", R + "/collaborators/{user}/permission", f"{r}/collaborators/bob/permission")
    check("GET", R + "/collaborators", f"{r}/collaborators")
    check("GET", R + "/collaborators/{user}", f"{r}/collaborators/bob", status=204)
    check("GET", R + "/collaborators/{user}", f"{r}/collaborators/nobody-{unique}", status=404)
    hook = check("POST", R + "/hooks", f"{r}/hooks",
                 hook_body(sink.url, ["issues", "issue_comment"]), status=201)  # fmt: skip
    check("GET", R + "/hooks", f"{r}/hooks")
    check("GET", HOOK, f"{r}/hooks/{hook['id']}")
    check("PATCH", HOOK, f"{r}/hooks/{hook['id']}", {"active": True})

    label = {"name": "awaiting:worker", "color": "0e8a16", "description": "d"}
    check("POST", R + "/labels", f"{r}/labels", label, status=201)
    check("POST", R + "/labels", f"{r}/labels", {**label, "description": "x" * 101}, status=422)
    check("GET", R + "/labels", f"{r}/labels")
    check("GET", R + "/labels/{name}", f"{r}/labels/awaiting:worker")
    check("PATCH", R + "/labels/{name}", f"{r}/labels/awaiting:worker", {"color": "ededed"})
    check("POST", R + "/labels", f"{r}/labels", {"name": "gone"}, status=201)
    check("DELETE", R + "/labels/{name}", f"{r}/labels/gone", status=204)

    issue = check("POST", R + "/issues", f"{r}/issues", {"title": "t", "body": "b"}, status=201)
    i = f"{r}/issues/{issue['number']}"
    check("GET", ISSUE, f"{r}/issues/404", status=404)
    check("GET", R + "/issues", f"{r}/issues")
    check("PATCH", ISSUE, i, {"title": "renamed", "body": "edited"})
    check("POST", ISSUE + "/labels", f"{i}/labels", {"labels": ["awaiting:worker", "x"]})
    check("PUT", ISSUE + "/labels", f"{i}/labels", {"labels": ["awaiting:worker", "y"]})
    check("DELETE", ISSUE + "/labels/{name}", f"{i}/labels/y")
    check("GET", ISSUE + "/labels", f"{i}/labels")
    check("DELETE", ISSUE + "/labels", f"{i}/labels", status=204)
    comment = check("POST", ISSUE + "/comments", f"{i}/comments", {"body": "c"}, status=201)
    c = f"{r}/issues/comments/{comment['id']}"
    check("GET", ISSUE + "/comments", f"{i}/comments")
    check("GET", R + "/issues/comments", f"{r}/issues/comments")
    check("GET", COMMENT, c)
    check("PATCH", COMMENT, c, {"body": "c2"})
    for base, route in ((c, COMMENT), (i, ISSUE)):
        made = check("POST", route + "/reactions", f"{base}/reactions", {"content": "eyes"},
                     status=201)  # fmt: skip
        check("GET", route + "/reactions", f"{base}/reactions")
        check("DELETE", route + "/reactions/{reaction_id}", f"{base}/reactions/{made['id']}",
              status=204)  # fmt: skip
    check("PUT", ISSUE + "/lock", f"{i}/lock", {"lock_reason": "resolved"}, status=204)
    check("DELETE", ISSUE + "/lock", f"{i}/lock", status=204)
    check("PATCH", ISSUE, i, {"state": "closed"})
    check("PATCH", ISSUE, i, {"state": "open"})
    check("GET", ISSUE, i)
    events = check("GET", ISSUE + "/events", f"{i}/events")
    kinds = {e["event"] for e in events}
    assert kinds == {"labeled", "unlabeled", "renamed", "locked", "unlocked", "closed", "reopened"}
    check("GET", R + "/issues/events/{event_id}", f"{r}/issues/events/{events[0]['id']}")
    rest = check("GET", ISSUE, i)
    for path in ("/graphql", "/api/graphql"):  # api.github.com's path and GHES's
        query = "query($id: ID!) { node(id: $id) { ... on Issue { number title body } } }"
        got = api(alice, "POST", path, {"query": query, "variables": {"id": rest["node_id"]}})
        assert got.status == 200 and got.headers["x-ratelimit-resource"] == "graphql"
        assert got.body == {"data": {"node": {k: rest[k] for k in ("number", "title", "body")}}}
        check.seen.add(("POST", path))
    check("DELETE", COMMENT, c, status=204)

    sha = push_commit(hub.url, alice, full, tmp_path)
    assert "refs/heads/main" in git("ls-remote", git_url(hub.url, full, alice)).stdout
    check.seen |= {("GET", "/{owner}/{repo}.git/{tail}"), ("POST", "/{owner}/{repo}.git/{tail}")}
    pages = {
        "/": "/", "/-/relay.css": "/-/relay.css", "/login": "/login", "/{owner}/{repo}": f"/{full}",
        "/{owner}/{repo}/issues": f"/{full}/issues", "/{owner}/{repo}/issues/{number}": i[6:],
        "/{owner}/{repo}/tree/{tail}": f"/{full}/tree/{sha}",
        "/{owner}/{repo}/blob/{tail}": f"/{full}/blob/{sha}/README",  # a log link's shape
        "/{owner}/{repo}/raw/{tail}": f"/{full}/raw/{sha}/README",
        "/{login}": f"/{full.split('/')[0]}",  # every user's html_url
    }  # fmt: skip
    for route, path in pages.items():
        status, kind, _ = get_text(hub.url, path, alice)
        assert status == 200 and kind.startswith(("text/html", "text/css", "text/plain")), path
        check.seen.add(("GET", route))
    check.seen |= {("POST", "/session"), ("POST", "/logout")}  # signing in: test_hub_pages
    protect = f"{r}/branches/main/protection"
    check("GET", R + "/branches/{branch}/protection", protect, status=404)
    rules = {"required_status_checks": {"strict": True, "contexts": ["ci"]},
             "enforce_admins": True, "restrictions": None,
             "required_pull_request_reviews": {"required_approving_review_count": 1}}  # fmt: skip
    check("PUT", R + "/branches/{branch}/protection", protect, rules)
    check("PUT", R + "/branches/{branch}/protection", protect, {}, status=422)
    users = {**rules, "restrictions": {"users": ["bob"], "teams": []}}  # a user's repository
    refused = check("PUT", R + "/branches/{branch}/protection", protect, users, status=422)
    assert (
        refused["message"] == "Only organization repositories can have users and team restrictions"
    )
    check("GET", R + "/branches/{branch}/protection", protect)
    check("GET", R + "/branches", f"{r}/branches")
    assert check("GET", R + "/branches/{branch}", f"{r}/branches/main")["protected"] is True
    check("DELETE", R + "/branches/{branch}/protection", protect, status=204)
    env, policies = f"{r}/environments/relay-node", ENV + "/deployment-branch-policies"
    check("GET", ENV, env, status=404)
    check("PUT", ENV, env, {}, status=403, token=bob)
    check("PUT", ENV, env, {})
    custom = {"protected_branches": False, "custom_branch_policies": True}
    check("PUT", ENV, env, {"wait_timer": 5, "deployment_branch_policy": custom,
                            "reviewers": [{"type": "User", "id": bob_user["id"]}]})  # fmt: skip
    check("PUT", ENV, env, {"deployment_branch_policy": {**custom, "protected_branches": True}},
          status=422)  # fmt: skip
    made = check("POST", policies, f"{env}/deployment-branch-policies", {"name": "main"})
    check("GET", policies + "/{policy_id}", f"{env}/deployment-branch-policies/{made['id']}")
    check("GET", policies, f"{env}/deployment-branch-policies")
    kinds = {rule["type"] for rule in check("GET", ENV, env)["protection_rules"]}
    assert kinds == {"wait_timer", "required_reviewers", "branch_policy"}
    check("GET", R + "/environments", f"{r}/environments")
    check("DELETE", ENV, env, status=204)
    refs = f"{r}/git/refs"
    check("POST", R + "/git/refs", refs, {"ref": "refs/relay/claims/1", "sha": "a" * 40},
          status=422)  # fmt: skip
    check("POST", R + "/git/refs", refs, {"ref": "refs/relay/claims/1", "sha": sha}, status=201)
    check("GET", R + "/git/ref/{ref}", f"{r}/git/ref/relay/claims/1")
    check("GET", R + "/git/refs", refs)
    assert check("GET", R + "/git/refs/", refs + "/") == check("GET", R + "/git/refs", refs)
    check("GET", R + "/git/refs/{ref}", f"{refs}/relay/claims/1")
    check("GET", R + "/git/matching-refs/{ref}", f"{r}/git/matching-refs/relay/")
    every = check("GET", R + "/git/matching-refs/", f"{r}/git/matching-refs/")
    assert every == check("GET", R + "/git/refs", refs)  # an empty prefix matches every ref
    assert {x["ref"] for x in every} >= {"refs/heads/main", "refs/relay/claims/1"}
    check("PATCH", R + "/git/refs/{ref}", f"{refs}/relay/claims/1", {"sha": sha})
    check("DELETE", R + "/git/refs/{ref}", f"{refs}/relay/claims/1", status=204)
    readme = check("GET", R + "/readme", f"{r}/readme")
    assert readme["path"] == "README" and readme["encoding"] == "base64"
    assert base64.b64decode(readme["content"]).decode().startswith(full)  # push_commit wrote it
    assert check("GET", R + "/contents/{path}", f"{r}/contents/README") == readme
    listed = check("GET", R + "/contents/", f"{r}/contents/")
    assert [(x["name"], x["type"], x["sha"]) for x in listed] == [("README", "file", readme["sha"])]
    check("GET", R + "/contents/{path}", f"{r}/contents/nothing-here", status=404)

    check_organisations(check, hub, tmp_path, unique, alice, bob)
    app, auth = installation_token(hub, full)

    async def exchange() -> dict[str, Any]:
        async with aiohttp.ClientSession() as session:
            gh = GitHubAPI(session, "conformance", base_url=hub.url)
            jwt = auth.jwt()
            path = f"/app/installations/{app['installation_id']}/access_tokens"
            made: dict[str, Any] = await gh.post(path, data={}, jwt=jwt)
            return made

    async def whoami() -> dict[str, Any]:
        async with aiohttp.ClientSession() as session:
            gh = GitHubAPI(session, "conformance", base_url=hub.url)
            found: dict[str, Any] = await gh.getitem("/app", jwt=auth.jwt())
            return found

    check.parse("InstallationToken", asyncio.run(exchange()))
    check.seen.add(("POST", "/app/installations/{installation_id}/access_tokens"))
    me = asyncio.run(whoami())
    check.parse("Integration", me)
    assert me["slug"] == app["slug"] and me["owner"]["login"] == hub_owner(full)
    check.seen.add(("GET", "/app"))
    check("DELETE", HOOK, f"{r}/hooks/{hook['id']}", status=204)
    # the twins: by id (/repositories/{id}/...) and in the Enterprise shape (/api/v3/...)
    # answer in the same shapes as the routes they mirror
    ident = check("GET", R, r)["id"]
    for twin in (f"/repositories/{ident}", f"{GHES}{r}"):
        assert check("GET", R, twin)["id"] == ident
        check("GET", R + "/issues", f"{twin}/issues")
        check("GET", ISSUE, f"{twin}/issues/{issue['number']}")
        check("GET", R + "/labels", f"{twin}/labels")
        check("GET", R + "/git/refs", f"{twin}/git/refs")
        check("POST", ISSUE + "/comments", f"{twin}/issues/{issue['number']}/comments",
              {"body": "twin"}, status=201)  # fmt: skip
        check("GET", ISSUE, f"{twin}/issues/999999", status=404)
    check("GET", "/user", f"{GHES}/user")
    check("GET", "/rate_limit", f"{GHES}/rate_limit")
    check("DELETE", R + "/collaborators/{user}", f"{r}/collaborators/bob", status=204)
    check("GET", R + "/collaborators/{user}", f"{r}/collaborators/bob", status=404)
    check.seen |= {route for route, spec in TABLE.items() if spec == INVITES}
    assert check.seen == set(TABLE), set(TABLE) - check.seen
    check_payloads(sink, VERSIONS[version][1], repo_id=check("GET", R, r)["id"])


def check_organisations(
    check: Checker, hub: Any, tmp_path: Path, unique: str, alice: str, bob: str
) -> None:
    """An organisation made by the hub's admin, its members and a team, a repository it
    owns, and branch protection restricted to a user and a team of it."""
    org = f"org-{unique}-{check.version[:4]}"
    body = {"login": org, "admin": "alice"}
    check("POST", "/admin/organizations", "/admin/organizations", body, status=404, token=alice)
    check("POST", "/admin/organizations", "/admin/organizations", body, status=201,
          token=hub.admin_token)  # fmt: skip
    o = f"/orgs/{org}"
    assert check("GET", "/orgs/{org}", o)["login"] == org
    check("GET", "/orgs/{org}/memberships/{username}", f"{o}/memberships/bob", status=404)
    made = check("PUT", "/orgs/{org}/memberships/{username}", f"{o}/memberships/bob",
                 {"role": "member"})  # fmt: skip
    assert (made["state"], made["role"]) == ("pending", "member")  # invited, as on GitHub
    assert [u["login"] for u in check("GET", "/orgs/{org}/members", f"{o}/members")] == ["alice"]
    mine = check("GET", "/user/memberships/orgs", "/user/memberships/orgs?state=pending",
                 token=bob)  # fmt: skip
    assert [m["organization"]["login"] for m in mine] == [org]
    check("GET", "/user/memberships/orgs/{org}", f"/user/memberships/orgs/{org}", token=bob)
    accepted = check("PATCH", "/user/memberships/orgs/{org}", f"/user/memberships/orgs/{org}",
                     {"state": "active"}, token=bob)  # fmt: skip
    assert accepted["state"] == "active"
    check("GET", "/orgs/{org}/memberships/{username}", f"{o}/memberships/bob")
    assert [u["login"] for u in check("GET", "/orgs/{org}/members", f"{o}/members")] == [
        "alice", "bob",
    ]  # fmt: skip
    team = check("POST", "/orgs/{org}/teams", f"{o}/teams", {"name": "Relay Nodes"}, status=201)
    assert team["slug"] == "relay-nodes"
    check("GET", "/orgs/{org}/teams", f"{o}/teams")
    t = f"{o}/teams/relay-nodes"
    check("GET", "/orgs/{org}/teams/{team_slug}", t)
    check("PUT", "/orgs/{org}/teams/{team_slug}/memberships/{username}", f"{t}/memberships/bob",
          {"role": "member"})  # fmt: skip
    repo = check("POST", "/orgs/{org}/repos", f"{o}/repos", {"name": "work", "private": True},
                 status=201)  # fmt: skip
    assert repo["organization"]["login"] == org and repo["owner"]["type"] == "Organization"
    check("GET", "/orgs/{org}/repos", f"{o}/repos")
    check("PUT", "/orgs/{org}/teams/{team_slug}/repos/{owner}/{repo}",
          f"{t}/repos/{org}/work", {"permission": "push"}, status=204)  # fmt: skip
    bob_sees = check.api(bob, "GET", f"/repos/{org}/work")
    assert bob_sees.status == 200 and bob_sees.body["permissions"]["push"] is True
    push_commit(hub.url, alice, f"{org}/work", tmp_path / "org")
    protect = f"/repos/{org}/work/branches/main/protection"
    rules = {"required_status_checks": None, "enforce_admins": False,
             "required_pull_request_reviews": None,
             "restrictions": {"users": ["bob"], "teams": ["relay-nodes"]}}  # fmt: skip
    put = check("PUT", R + "/branches/{branch}/protection", protect, rules)
    assert [u["login"] for u in put["restrictions"]["users"]] == ["bob"]
    assert [x["slug"] for x in put["restrictions"]["teams"]] == ["relay-nodes"]
    got = check("GET", R + "/branches/{branch}/protection", protect)
    assert got["restrictions"] == put["restrictions"]
    wrong = {**rules, "restrictions": {"users": [], "teams": ["nobody"]}}
    check("PUT", R + "/branches/{branch}/protection", protect, wrong, status=422)
    check("DELETE", "/orgs/{org}/memberships/{username}", f"{o}/memberships/bob", status=204)
    assert check.api(bob, "GET", f"/repos/{org}/work").status == 404


def hub_owner(full: str) -> str:
    """The owner of ``owner/name``."""
    return full.split("/", 1)[0]


def check_payloads(sink: Receiver, parser: Any, *, repo_id: int) -> None:
    """Every delivery parses as GitHub's webhook event of its name, and between them they
    cover every event and action the hub delivers."""
    expected = {("issues", a) for a in DELIVERED["issues"]}
    expected |= {("issue_comment", a) for a in DELIVERED["issue_comment"]} | {("ping", None)}
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        got = {(d.headers["X-GitHub-Event"], json.loads(d.body).get("action")) for d in sink.got}
        if expected <= got:
            break
        time.sleep(0.05)
    for delivery in sink.got:
        event = delivery.headers["X-GitHub-Event"]
        parser.parse(event, delivery.body)
        assert delivery.headers["X-GitHub-Hook-Installation-Target-ID"] == str(repo_id)
    assert expected <= got, expected - got
    edited = [json.loads(d.body) for d in sink.got if b'"action":"edited"' in d.body]
    assert {json.dumps(e["changes"], sort_keys=True) for e in edited} == {
        json.dumps({"title": {"from": "t"}, "body": {"from": "b"}}, sort_keys=True),
        json.dumps({"body": {"from": "c"}}, sort_keys=True),
    }


@pytest.mark.parametrize("version", ["2022-11-28", "2026-03-10"])
def test_the_known_api_versions_are_served(api: Any, alice: str, version: str) -> None:
    got = api(alice, "GET", "/user", headers={"X-GitHub-Api-Version": version})
    assert got.status == 200 and got.headers["x-github-api-version-selected"] == version


def test_githubkits_typed_client_works_against_the_hub(
    hub: Any, alice: str, unique: str, tmp_path: Path
) -> None:
    """githubkit, strict and typed from GitHub's description, runs relay's kind of flow."""
    from githubkit import GitHub

    gh = GitHub(alice, base_url=hub.url)
    name = f"kit-{unique}"
    me = gh.rest.users.get_authenticated().parsed_data
    repo = gh.rest.repos.create_for_authenticated_user(name=name).parsed_data
    assert (me.login, repo.full_name) == ("alice", f"alice/{name}")
    gh.rest.issues.create_label("alice", name, name="awaiting:worker", color="0e8a16")
    issue = gh.rest.issues.create("alice", name, title="TASK", body="do it").parsed_data
    labels = gh.rest.issues.add_labels("alice", name, issue.number, labels=["awaiting:worker"])
    assert [lab.name for lab in labels.parsed_data] == ["awaiting:worker"]
    comment = gh.rest.issues.create_comment("alice", name, issue.number, body="claim").parsed_data
    reaction = gh.rest.reactions.create_for_issue_comment(
        "alice", name, comment.id, content="eyes"
    ).parsed_data
    assert reaction.content == "eyes"
    sha = push_commit(hub.url, alice, f"alice/{name}", tmp_path)
    ref = gh.rest.git.create_ref("alice", name, ref="refs/relay/claims/1/1", sha=sha).parsed_data
    assert (ref.ref, ref.object_.sha) == ("refs/relay/claims/1/1", sha)
    listed = gh.rest.issues.list_for_repo("alice", name, labels="awaiting:worker").parsed_data
    assert [i.number for i in listed] == [issue.number]
    events = gh.rest.issues.list_events("alice", name, issue.number).parsed_data
    assert [e.event for e in events] == ["labeled"]  # the description's union for this
    # endpoint lacks closed/reopened events (GitHub sends them): checked in EVENT_MODELS
    closed = gh.rest.issues.update("alice", name, issue.number, state="closed").parsed_data
    assert (closed.state, closed.closed_by and closed.closed_by.login) == ("closed", "alice")


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_invitation_routes_answer_in_githubs_shapes(
    hub_factory: Any, http: Any, version: str
) -> None:
    hub = hub_factory(extra=("--invitations",))
    owner, guest = hub.token("owner"), hub.token("guest")

    def api(token: str, method: str, path: str, body: Any = None, headers: Any = None) -> Answer:
        return http(hub.url, token, method, path, body, headers)

    check = Checker(api, owner, version)
    check.models_by_route = INVITATION_MODELS
    r = "/repos/owner/invited"
    assert api(owner, "POST", "/user/repos", {"name": "invited", "private": True}).status == 201
    made = check("PUT", R + "/collaborators/{user}", f"{r}/collaborators/guest", {}, status=201)
    listed = check("GET", R + "/invitations", f"{r}/invitations")
    assert [i["id"] for i in listed] == [made["id"]]
    one = f"{r}/invitations/{made['id']}"
    changed = check("PATCH", R + "/invitations/{invitation_id}", one, {"permissions": "maintain"})
    assert changed["permissions"] == "maintain"
    mine = check("GET", "/user/repository_invitations", "/user/repository_invitations", token=guest)
    assert [i["id"] for i in mine] == [made["id"]]
    route = "/user/repository_invitations/{invitation_id}"
    assert api(guest, "GET", r).status == 404  # a pending invitation gives nothing yet
    check("PATCH", route, f"/user/repository_invitations/{made['id']}", status=204, token=guest)
    seen = api(guest, "GET", r)  # accepted: the private repository, with the invited role
    assert seen.status == 200 and seen.body["permissions"]["maintain"] is True
    assert seen.body["permissions"]["admin"] is False
    again = check("PUT", R + "/collaborators/{user}", f"{r}/collaborators/bystander-{version}",
                  {}, status=404)  # fmt: skip
    assert again["message"] == "Not Found"
    hub.token(f"third-{version}")
    third = check("PUT", R + "/collaborators/{user}", f"{r}/collaborators/third-{version}", {},
                  status=201)  # fmt: skip
    check("DELETE", R + "/invitations/{invitation_id}", f"{r}/invitations/{third['id']}",
          status=204)  # fmt: skip
    hub.token(f"fourth-{version}")
    fourth = check("PUT", R + "/collaborators/{user}", f"{r}/collaborators/fourth-{version}", {},
                   status=201)  # fmt: skip
    fourth_user = hub.token(f"fourth-{version}")
    check("DELETE", route, f"/user/repository_invitations/{fourth['id']}", status=204,
          token=fourth_user)  # fmt: skip
    assert api(fourth_user, "GET", r).status == 404  # declined: still no access
    assert api(fourth_user, "GET", "/user/repository_invitations").body == []
    assert api(owner, "GET", f"{r}/invitations").body == []
    assert check.seen >= {route for route, spec in TABLE.items() if spec == INVITES}
