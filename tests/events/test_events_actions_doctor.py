"""`relay doctor` in a GitHub Actions job says whether the node key is out of a pusher's
reach: run as the workflow's step runs it (a process with GITHUB_ACTIONS=true, the
environment the job names in RELAY_ENVIRONMENT, the job's own token as GITHUB_TOKEN, the
node's as RELAY_TOKEN) against the hub's environments, set up as a repository admin would."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from test_events_appauth import exchange, new_key, register
from worlds import WORKER, World, data_of

from relay.edges.github.appauth import AppAuth
from relay.edges.local import NodeState

ENV = "relay-node"
CUSTOM = {"protected_branches": False, "custom_branch_policies": True}
PR_ONLY = {
    "required_status_checks": None, "enforce_admins": True, "restrictions": None,
    "required_pull_request_reviews": {"required_approving_review_count": 1},
}  # fmt: skip


def doctor(world: World, **env: str) -> tuple[int, dict[str, Any]]:
    """`relay doctor --json` as the workflow's step runs it: exit status and its key check."""
    key = NodeState.for_clone(world.worker.clone).signing_key_path(WORKER).read_text()
    base = {k: v for k, v in os.environ.items() if k not in ("RELAY_TOKEN", "GITHUB_TOKEN")}
    base.update(
        GITHUB_ACTIONS="true", GITHUB_REPOSITORY=world.repo, GITHUB_API_URL=world.hub.url,
        RELAY_API_URL=world.hub.url, RELAY_TOKEN=world.worker.token,
        GITHUB_TOKEN=world.worker.token, RELAY_NODE_KEY=key.strip(), RELAY_ENVIRONMENT=ENV,
    )  # fmt: skip
    base.update(env)
    argv = [sys.executable, "-m", "relay.cli", "doctor", "--json", "--node", WORKER]
    argv += ["--repo-dir", str(world.worker.clone)]
    done = subprocess.run(argv, env={k: v for k, v in base.items() if v}, capture_output=True,
                          text=True, timeout=120, check=False)  # fmt: skip
    checks = {c["name"]: c for c in data_of(done.stdout)["checks"]}
    assert checks["token"]["status"] == "ok", checks  # the other checks are unaffected
    assert done.returncode == 0 or checks["node key"]["status"] == "fail", checks
    return done.returncode, checks["node key"]


def test_a_job_that_names_no_environment_fails_when_it_has_the_key(world: World) -> None:
    status, check = doctor(world, RELAY_ENVIRONMENT="")
    assert (status, check["status"]) == (1, "fail"), check
    assert "names no environment" in check["detail"] and "relay-node" in check["fix"]
    status, check = doctor(world, RELAY_ENVIRONMENT="", RELAY_NODE_KEY="")
    assert (status, check["status"]) == (0, "warn"), check


def test_an_environment_every_branch_may_use_fails_with_how_to_restrict_it(world: World) -> None:
    world.api(f"/environments/{ENV}", "PUT", {})
    status, check = doctor(world)
    assert (status, check["status"]) == (1, "fail"), check
    assert "lets every branch deploy" in check["detail"]
    assert f"Settings → Environments → {ENV}" in check["fix"] and "only main" in check["fix"]


def test_an_environment_only_the_protected_default_branch_may_use_is_ok(world: World) -> None:
    world.api(f"/environments/{ENV}", "PUT", {"deployment_branch_policy": CUSTOM})
    world.api(f"/environments/{ENV}/deployment-branch-policies", "POST", {"name": "main"})
    status, check = doctor(world)
    assert check["status"] == "warn" and "main is not protected" in check["detail"], check
    world.api("/branches/main/protection", "PUT", PR_ONLY)
    status, check = doctor(world)
    assert (status, check["status"]) == (0, "ok"), check
    assert check["detail"] == f"only main may use environment {ENV}"
    world.api(f"/environments/{ENV}/deployment-branch-policies", "POST", {"name": "*"})
    status, check = doctor(world)
    assert (status, check["status"]) == (1, "fail") and "pattern `*`" in check["detail"]


def test_a_required_reviewer_keeps_the_key_whatever_the_branches(world: World) -> None:
    owner = world.api("")["owner"]["id"]
    world.api(f"/environments/{ENV}", "PUT", {"reviewers": [{"type": "User", "id": owner}]})
    status, check = doctor(world)
    assert (status, check["status"]) == (0, "ok") and "reviewer" in check["detail"], check


def test_a_token_that_may_not_read_environments_warns_with_the_permission_it_needs(
    world: World, unique: str
) -> None:
    """An App installation without the Actions permission gets GitHub's 403."""
    world.api(f"/environments/{ENV}", "PUT", {})
    private, public = new_key()
    app = register(world, f"envdoc-{unique}", public)
    auth = AppAuth(app_id=str(app["app_id"]), installation_id=app["installation_id"],
                   private_key=private)  # fmt: skip
    status, check = doctor(world, GITHUB_TOKEN=exchange(world.hub.url, auth))
    assert (status, check["status"]) == (0, "warn"), check
    assert f"cannot read environment {ENV}" in check["detail"]
    assert "actions: read" in check["fix"]
