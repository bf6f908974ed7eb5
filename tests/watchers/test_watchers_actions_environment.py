"""The verdict on an Actions node's key, decided from what the API said about the
environment (the hub-backed cases are in tests/events/test_events_actions_doctor.py)."""

from __future__ import annotations

from typing import Any

import pytest

from relay.edges.github.models import BranchPattern, Environment
from relay.watchers.actions_environment import verdict
from relay.watchers.github_actions import key_exposed

CUSTOM = {"protected_branches": False, "custom_branch_policies": True}


def env(policy: dict[str, bool] | None, *rules: dict[str, Any]) -> Environment:
    return Environment.model_validate(
        {"name": "relay-node", "protection_rules": list(rules), "deployment_branch_policy": policy}
    )


def judge(found: Environment | None, *patterns: tuple[str, str], protected: bool = True) -> str:
    listed = [BranchPattern(name=n, type=t) for t, n in patterns]
    return verdict(environment="relay-node", has_key=True, found=found, patterns=listed,
                   default_branch="trunk", default_protected=protected)[1]  # fmt: skip


@pytest.mark.parametrize(
    ("found", "patterns", "status"),
    [
        (env({"protected_branches": True, "custom_branch_policies": False}), (), "ok"),
        (env(None, {"type": "wait_timer", "wait_timer": 30}), (), "fail"),  # a timer is no gate
        (env(None, {"type": "required_reviewers", "reviewers": [{"type": "User"}]}), (), "ok"),
        (env(None, {"type": "required_reviewers", "reviewers": []}), (), "fail"),
        (env(CUSTOM), (("branch", "trunk"),), "ok"),
        (env(CUSTOM), (("branch", "main"),), "warn"),  # not the default branch
        (env(CUSTOM), (("branch", "trunk"), ("branch", "release/*")), "warn"),
        (env(CUSTOM), (("branch", "trunk"), ("tag", "v*")), "warn"),  # any pusher pushes tags
        (env(CUSTOM), (("branch", "**"),), "fail"),
        (env(CUSTOM), (), "ok"),  # no branch at all may use it
    ],
)
def test_who_may_use_the_environment_decides(
    found: Environment, patterns: tuple[tuple[str, str], ...], status: str
) -> None:
    assert judge(found, *patterns) == status


def test_patterns_or_environments_it_could_not_read_warn() -> None:
    assert judge(None) == "warn"
    unread = verdict(environment="relay-node", has_key=True, found=env(CUSTOM), patterns=None)
    assert unread[1] == "warn" and "Actions read" in unread[3]


def test_the_default_branch_alone_is_not_enough_when_anyone_may_push_to_it() -> None:
    _, status, detail, fix = verdict(
        environment="relay-node", has_key=True, found=env(CUSTOM),
        patterns=[BranchPattern(name="trunk")], default_branch="trunk", default_protected=False,
    )  # fmt: skip
    assert status == "warn" and "trunk is not protected" in detail and "protect trunk" in fix


def test_a_pass_warns_when_the_key_reaches_a_job_without_an_environment() -> None:
    said = key_exposed({"RELAY_NODE_KEY": "k"})
    assert said is not None and "names no environment" in said and "relay-node" in said
    assert key_exposed({"RELAY_NODE_KEY": "k", "RELAY_ENVIRONMENT": "relay-node"}) is None
    assert key_exposed({}) is None
