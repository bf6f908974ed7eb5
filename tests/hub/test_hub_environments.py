"""Deployment environments on the hub, as GitHub serves them: what a reader may see, what
only an admin may change, the protection rules its settings make, its branch policies,
and the 403 an App installation without the Actions permission gets."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
from gidgethub.aiohttp import GitHubAPI
from test_hub_tokens import _key_pair

from relay.edges.github.appauth import AppAuth

CUSTOM = {"protected_branches": False, "custom_branch_policies": True}
PROTECTED = {"protected_branches": True, "custom_branch_policies": False}


def _repo(api: Any, alice: str, bob: str, name: str, *, private: bool = False) -> str:
    """alice's repository with bob as a collaborator who may push."""
    assert api(alice, "POST", "/user/repos", {"name": name, "private": private}).status == 201
    assert api(alice, "PUT", f"/repos/alice/{name}/collaborators/bob", {}).status == 201
    return f"/repos/alice/{name}/environments"


def test_an_admin_makes_an_environment_that_readers_see_and_only_admins_change(
    hub: Any, api: Any, alice: str, bob: str, unique: str
) -> None:
    envs = _repo(api, alice, bob, f"env-{unique}")
    missing = api(alice, "GET", f"{envs}/relay-node")
    assert missing.status == 404 and missing.body["documentation_url"].endswith(
        "deployments/environments#get-an-environment"
    )
    refused = api(bob, "PUT", f"{envs}/relay-node", {})
    assert (refused.status, refused.body["message"]) == (
        403,
        "Must have admin rights to Repository.",
    )
    made = api(alice, "PUT", f"{envs}/relay-node", {})
    assert made.status == 200
    assert (made.body["name"], made.body["protection_rules"]) == ("relay-node", [])
    assert made.body["deployment_branch_policy"] is None  # every branch may deploy
    assert made.body["url"] == f"{hub.url}{envs}/relay-node"
    seen = api(bob, "GET", f"{envs}/RELAY-NODE")  # names are case-insensitive, as on GitHub
    assert seen.status == 200 and seen.body["id"] == made.body["id"]
    listed = api(bob, "GET", envs).body
    assert listed["total_count"] == 1 and [e["name"] for e in listed["environments"]] == [
        "relay-node"
    ]
    assert api(bob, "DELETE", f"{envs}/relay-node").status == 403
    assert api(alice, "DELETE", f"{envs}/relay-node").status == 204
    assert api(alice, "GET", f"{envs}/relay-node").status == 404
    assert api(alice, "DELETE", f"{envs}/relay-node").status == 404


def test_settings_become_protection_rules_and_a_put_keeps_what_it_leaves_out(
    api: Any, alice: str, bob: str, unique: str
) -> None:
    envs = _repo(api, alice, bob, f"rules-{unique}")
    bob_id = api(bob, "GET", "/user").body["id"]
    body = {"wait_timer": 30, "reviewers": [{"type": "User", "id": bob_id}],
            "prevent_self_review": True, "deployment_branch_policy": PROTECTED}  # fmt: skip
    got = api(alice, "PUT", f"{envs}/prod", body).body
    rules = {rule["type"]: rule for rule in got["protection_rules"]}
    assert set(rules) == {"wait_timer", "required_reviewers", "branch_policy"}
    assert rules["wait_timer"]["wait_timer"] == 30
    (reviewer,) = rules["required_reviewers"]["reviewers"]
    assert (reviewer["type"], reviewer["reviewer"]["login"]) == ("User", "bob")
    assert rules["required_reviewers"]["prevent_self_review"] is True
    assert got["deployment_branch_policy"] == PROTECTED
    kept = api(alice, "PUT", f"{envs}/prod", {"wait_timer": 0}).body
    assert {rule["type"] for rule in kept["protection_rules"]} == {
        "required_reviewers",
        "branch_policy",
    }
    opened = api(
        alice, "PUT", f"{envs}/prod", {"reviewers": None, "deployment_branch_policy": None}
    )
    assert opened.body["protection_rules"] == [] and opened.body["deployment_branch_policy"] is None


def test_wrong_settings_are_422(api: Any, alice: str, bob: str, unique: str) -> None:
    envs = _repo(api, alice, bob, f"bad-{unique}")
    for body in (
        {"deployment_branch_policy": {**CUSTOM, "protected_branches": True}},
        {"deployment_branch_policy": {"protected_branches": False}},
        {"wait_timer": 43201},
        {"reviewers": [{"type": "Team", "id": 1}]},
        {"reviewers": [{"type": "User", "id": 10**9}]},
    ):
        refused = api(alice, "PUT", f"{envs}/prod", body)
        assert (refused.status, refused.body["message"]) == (422, "Validation Failed"), body
    assert api(alice, "GET", f"{envs}/prod").status == 404  # nothing was made


def test_custom_branch_policies_are_listed_and_go_with_the_custom_policy(
    api: Any, alice: str, bob: str, unique: str
) -> None:
    envs = _repo(api, alice, bob, f"custom-{unique}")
    policies = f"{envs}/prod/deployment-branch-policies"
    api(alice, "PUT", f"{envs}/prod", {"deployment_branch_policy": PROTECTED})
    assert api(alice, "POST", policies, {"name": "main"}).status == 404  # not a custom policy
    api(alice, "PUT", f"{envs}/prod", {"deployment_branch_policy": CUSTOM})
    made = api(alice, "POST", policies, {"name": "main"})
    assert made.status == 200 and (made.body["name"], made.body["type"]) == ("main", "branch")
    assert api(bob, "POST", policies, {"name": "release/*"}).status == 403
    again = api(alice, "POST", policies, {"name": "main"})  # 303 to the one there, followed
    assert again.status == 200 and again.body["id"] == made.body["id"]
    api(alice, "POST", policies, {"name": "v*", "type": "tag"})
    listed = api(bob, "GET", policies).body
    assert listed["total_count"] == 2
    assert [(p["name"], p["type"]) for p in listed["branch_policies"]] == [
        ("main", "branch"),
        ("v*", "tag"),
    ]
    api(alice, "PUT", f"{envs}/prod", {"deployment_branch_policy": None})
    assert api(alice, "GET", policies).body == {"total_count": 0, "branch_policies": []}


def test_a_private_repositorys_environments_are_hidden_from_strangers(
    hub: Any, api: Any, alice: str, bob: str, unique: str
) -> None:
    envs = _repo(api, alice, bob, f"hidden-{unique}", private=True)
    api(alice, "PUT", f"{envs}/prod", {})
    stranger = hub.token(f"stranger-{unique}")
    assert api(stranger, "GET", f"{envs}/prod").status == 404
    assert api(bob, "GET", f"{envs}/prod").status == 200


def test_an_app_installation_without_the_actions_permission_is_refused(
    hub: Any, api: Any, alice: str, bob: str, unique: str
) -> None:
    name = f"appenv-{unique}"
    envs = _repo(api, alice, bob, name)
    api(alice, "PUT", f"{envs}/prod", {})
    private, public = _key_pair()
    body = {"slug": f"envapp-{unique}", "public_key": public, "repositories": [f"alice/{name}"]}
    made = hub.admin("POST", "/_hub/apps", body)
    auth = AppAuth(app_id=str(made["app_id"]), installation_id=made["installation_id"],
                   private_key=private)  # fmt: skip

    async def exchange() -> str:
        async with aiohttp.ClientSession() as session:
            return str(await auth.installation_token(GitHubAPI(session, "t", base_url=hub.url)))

    token = asyncio.run(exchange())
    refused = api(token, "GET", f"{envs}/prod")
    assert (refused.status, refused.body["message"]) == (
        403,
        "Resource not accessible by integration",
    )
    assert api(token, "GET", f"/repos/alice/{name}/labels").status == 200  # it reads the rest
