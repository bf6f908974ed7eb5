"""The Actions adapter, fed the way Actions feeds it: an event file and the variables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from relay.errors import ConfigError, RemoteProtocolError
from relay.watchers import github_actions as actions

EVENTS = Path(__file__).parent / "events"
ROOT = Path(__file__).resolve().parents[2]


def actions_env(event_name: str, event_file: Path, **extra: str) -> dict[str, str]:
    """The variables a GitHub-hosted runner sets for a job (the ones relay reads)."""
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(event_file),
        "GITHUB_REPOSITORY": "octo-lab/relay-demo",
        "GITHUB_API_URL": "http://127.0.0.1:8765/",
        "GITHUB_TOKEN": "ghs_runner_token_for_this_job",
        **extra,
    }


def variant(tmp_path: Path, name: str, change: Any) -> Path:
    """A copy of a recorded event file with one change applied, as a new file."""
    data = json.loads((EVENTS / name).read_text())
    change(data)
    target = tmp_path / f"variant-{name}"
    target.write_text(json.dumps(data))
    return target


def test_issues_labeled_with_a_baton_names_its_issue() -> None:
    ctx = actions.read_context(actions_env("issues", EVENTS / "issues_labeled.json"))
    assert (ctx.issue_number, ctx.concerns_relay, ctx.full_pass) == (7, True, False)
    assert (ctx.owner, ctx.repo, ctx.api_url) == ("octo-lab", "relay-demo", "http://127.0.0.1:8765")
    assert ctx.sender_login == "ada-controller"
    assert ctx.reason == "issues.labeled on #7"
    assert "ghs_runner_token" not in repr(ctx)


def test_a_label_that_is_not_relays_is_skipped(tmp_path: Path) -> None:
    def to_bug(data: dict[str, Any]) -> None:
        data["label"] = {"id": 1, "name": "bug", "color": "d73a4a"}

    path = variant(tmp_path, "issues_labeled.json", to_bug)
    ctx = actions.read_context(actions_env("issues", path))
    assert (ctx.issue_number, ctx.concerns_relay) == (7, False)
    assert "'bug' is not a relay label" in ctx.reason


def test_an_issue_without_relays_block_is_skipped(tmp_path: Path) -> None:
    def plain(data: dict[str, Any]) -> None:
        data["issue"]["body"] = "Just a bug report, nothing for relay."

    for name, event in (
        ("issues_labeled.json", "issues"),
        ("issue_comment_created.json", "issue_comment"),
    ):
        ctx = actions.read_context(actions_env(event, variant(tmp_path, name, plain)))
        assert (ctx.issue_number, ctx.concerns_relay) == (7, False)
        assert ctx.reason.endswith("#7: not a relay job")


def test_a_comment_on_a_job_names_its_issue_and_one_on_a_pull_request_does_not(
    tmp_path: Path,
) -> None:
    ctx = actions.read_context(actions_env("issue_comment", EVENTS / "issue_comment_created.json"))
    assert (ctx.issue_number, ctx.concerns_relay, ctx.reason) == (
        7,
        True,
        "issue_comment.created on #7",
    )

    def on_pull(data: dict[str, Any]) -> None:
        data["issue"]["pull_request"] = {"url": "http://127.0.0.1/repos/o/r/pulls/7"}

    pull = actions.read_context(
        actions_env("issue_comment", variant(tmp_path, "issue_comment_created.json", on_pull))
    )
    assert pull.concerns_relay is False and "pull request #7" in pull.reason


@pytest.mark.parametrize("name", ["schedule", "workflow_dispatch"])
def test_schedule_and_dispatch_mean_a_full_pass(name: str) -> None:
    ctx = actions.read_context(actions_env(name, EVENTS / f"{name}.json"))
    assert (ctx.issue_number, ctx.concerns_relay, ctx.full_pass) == (None, True, True)


def test_a_bare_schedule_payload_still_works(tmp_path: Path) -> None:
    """Older runs carried only the cron string; the repository comes from the variables."""
    bare = tmp_path / "event.json"
    bare.write_text(json.dumps({"schedule": "3-58/5 * * * *"}))
    ctx = actions.read_context(actions_env("schedule", bare))
    assert ctx.full_pass and ctx.repository == "octo-lab/relay-demo" and ctx.sender_login is None


def test_other_events_do_not_concern_relay() -> None:
    ctx = actions.read_context(actions_env("push", EVENTS / "workflow_dispatch.json"))
    assert (ctx.concerns_relay, ctx.full_pass) == (False, False)


def test_event_path_argument_overrides_the_variable(tmp_path: Path) -> None:
    env = actions_env("schedule", tmp_path / "missing.json")
    ctx = actions.read_context(env, event_path=EVENTS / "schedule.json")
    assert ctx.full_pass


def test_api_url_defaults_to_github_when_unset() -> None:
    env = actions_env("schedule", EVENTS / "schedule.json")
    del env["GITHUB_API_URL"]
    assert actions.read_context(env).api_url == actions.DEFAULT_API_URL


@pytest.mark.parametrize(
    "missing", ["GITHUB_EVENT_NAME", "GITHUB_REPOSITORY", "GITHUB_TOKEN", "GITHUB_EVENT_PATH"]
)
def test_missing_variables_are_config_errors(missing: str) -> None:
    env = actions_env("schedule", EVENTS / "schedule.json")
    del env[missing]
    with pytest.raises(ConfigError, match=missing):
        actions.read_context(env)


def test_unreadable_or_malformed_event_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the event file"):
        actions.read_context(actions_env("issues", tmp_path / "absent.json"))
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(RemoteProtocolError, match="not JSON"):
        actions.read_context(actions_env("issues", broken))
    listed = tmp_path / "list.json"
    listed.write_text("[]")
    with pytest.raises(RemoteProtocolError, match="JSON object"):
        actions.read_context(actions_env("issues", listed))
    with pytest.raises(ConfigError, match="OWNER/NAME"):
        env = actions_env("schedule", EVENTS / "schedule.json", GITHUB_REPOSITORY="no-slash")
        actions.read_context(env)


def test_step_summary_is_appended_only_when_actions_gives_a_file(tmp_path: Path) -> None:
    summary = tmp_path / "step_summary.md"
    env = {"GITHUB_STEP_SUMMARY": str(summary)}
    assert actions.write_step_summary("first line", env)
    assert actions.write_step_summary("| a | b |\n", env)
    assert summary.read_text(encoding="utf-8") == "first line\n| a | b |\n"
    assert actions.write_step_summary("nowhere", {}) is False


def test_adapter_run_as_a_separate_process_with_the_real_environment(tmp_path: Path) -> None:
    """As a workflow step runs it: a fresh interpreter whose os.environ Actions filled."""
    summary = tmp_path / "summary.md"
    summary.write_text("")
    env = {
        **os.environ,
        **actions_env("issues", EVENTS / "issues_labeled.json", GITHUB_STEP_SUMMARY=str(summary)),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    script = (
        "from relay.watchers import github_actions as actions\n"
        "ctx = actions.read_context()\n"
        "actions.write_step_summary(actions.summary_line(ctx, node='ci-linux'))\n"
        "print(ctx.issue_number, ctx.concerns_relay)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["7", "True"]
    assert summary.read_text(encoding="utf-8") == (
        "**relay node `ci-linux`** (octo-lab/relay-demo): handled: issues.labeled on #7\n"
    )


def test_the_node_key_secret_is_installed_once_and_a_bad_one_refused(tmp_path: Path) -> None:
    import base64

    from relay.edges.local import NodeState

    state = NodeState(tmp_path / "state")
    with pytest.raises(ConfigError, match="RELAY_NODE_KEY does not hold a signing key"):
        actions.install_node_key(state, "ci", {"RELAY_NODE_KEY": "bm90IGEga2V5"})
    assert not state.signing_key_path("ci").exists()
    key = base64.b64encode(bytes(range(32))).decode()
    assert actions.install_node_key(state, "ci", {"RELAY_NODE_KEY": key})
    assert state.signing_key("ci") == bytes(range(32))
    assert not actions.install_node_key(state, "ci", {"RELAY_NODE_KEY": key}), "kept"
    assert not actions.install_node_key(state, "ci", {})
