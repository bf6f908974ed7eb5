"""The Actions adapter run the way a workflow step runs it, against the hub.

Each case writes an event payload file of GitHub's shape (the issue, label, comment,
repository and sender objects are the hub's own REST objects) and runs
``python -m relay.cli watch --once --event PATH`` as a process whose environment holds
what Actions sets: GITHUB_EVENT_NAME, GITHUB_EVENT_PATH, GITHUB_REPOSITORY,
GITHUB_API_URL, GITHUB_TOKEN and GITHUB_STEP_SUMMARY, and no RELAY_TOKEN.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from worlds import OWNER, WORKER, Node, World, api

PY = Path(sys.executable).as_posix()


def open_job(world: World, worker: str = WORKER) -> int:
    return world.open_job(worker=worker, title="On Actions", objective="Run it.")


def payload(world: World, event: str, number: int | None, **extra: Any) -> dict[str, Any]:
    """A webhook payload of GitHub's shape built from the hub's REST objects."""
    sender = api(f"{world.hub.url}/users/{OWNER}", world.tokens(OWNER))
    data: dict[str, Any] = {"repository": world.api(""), "sender": sender, **extra}
    if number is not None:
        data["issue"] = world.issue(number)
    return data


def run_adapter(
    world: World,
    tmp_path: Path,
    event: str,
    data: dict[str, Any],
    token: str | None = None,
    clone: Path | None = None,
    extra_env: dict[str, str] | None = None,
    *,
    in_process: bool = False,
) -> tuple[subprocess.CompletedProcess[str], str]:
    """One workflow step: the event file, Actions' variables, the CLI as a process (or, with
    ``in_process``, relay.cli.main in this one, for a run that only takes a turn the test
    reads)."""
    path = tmp_path / f"{event}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    summary = tmp_path / "summary.md"
    summary.write_text("", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "RELAY_TOKEN"}
    env.update(
        GITHUB_ACTIONS="true", GITHUB_EVENT_NAME=event, GITHUB_EVENT_PATH=str(path),
        GITHUB_REPOSITORY=world.repo, GITHUB_API_URL=world.hub.url,
        GITHUB_TOKEN=token or world.worker.token, GITHUB_STEP_SUMMARY=str(summary),
        RELAY_TRUST=admin_fingerprint(world),  # the repository variable the workflow reads
    )  # fmt: skip
    env.update(extra_env or {})
    args = ["watch", "--once", "--event", str(path), "--node", WORKER]
    if in_process:
        assert clone is None, "in-process runs are the worker's clone's"
        actions = {k: v for k, v in env.items() if os.environ.get(k) != v}
        done = world.worker.invoke(*args, token="", **actions)
    else:
        argv = [sys.executable, "-m", "relay.cli", *args]
        argv += ["--repo-dir", str(clone or world.worker.clone)]
        done = subprocess.run(
            argv, env=env, capture_output=True, text=True, timeout=90, check=False
        )
    assert done.returncode == 0, done.stderr
    return done, summary.read_text(encoding="utf-8")


def admin_fingerprint(world: World) -> str:
    """The fingerprint of the roster admin's key, as `relay nodes` shows it."""
    from relay.edges.local import NodeState
    from relay.protocol.roster import fingerprint
    from relay.protocol.signatures import public_key_of

    key = NodeState.for_clone(world.controller.clone).signing_key(world.controller.name)
    assert key is not None
    return fingerprint(public_key_of(key))


def requests_for(hub: Any, repo: str) -> int:
    """API requests the hub answered about this repository (admin counters)."""
    return sum(r["count"] for r in hub.requests() if f"/repos/{repo}" in r["path"])


def test_events_that_do_not_concern_this_node_end_at_once_without_a_request(
    world: World, tmp_path: Path
) -> None:
    third = Node("linux-box", world.clone("linux-box"), world.worker.token,
                 world.worker.monkeypatch)  # fmt: skip
    third.call("join", "--node", third.name, "--scheduler", "none")
    key = third.call("nodes", "key", "--node", third.name).strip()
    world.controller.call(
        "nodes", "approve", third.name, "--node", world.controller.name, "--fingerprint", key
    )
    mine, others = open_job(world), open_job(world, worker=third.name)
    world.controller.call("task", str(mine), "--step", f'"{PY}" -c "print(1)"')
    label = {"label": world.api("/labels/awaiting:worker")}
    cases = [
        ("issues", payload(world, "issues", mine, action="labeled", label={"name": "bug"})),
        ("issues", payload(world, "issues", others, action="labeled", **label)),
        ("push", {"ref": "refs/heads/main", "repository": world.api("")}),
    ]
    before = requests_for(world.hub, world.repo)
    summaries = []
    for event, data in cases:
        done, summary = run_adapter(world, tmp_path, event, data)
        assert "nothing to do" in done.stdout
        assert summary.startswith(f"**relay node `{WORKER}`** ({world.repo}): skipped: ")
        summaries.append(summary)
    assert requests_for(world.hub, world.repo) == before  # not one request was sent
    assert "'bug' is not a relay label" in summaries[0]
    assert f"#{others} is a job of other nodes" in summaries[1]
    assert "push events do not concern relay" in summaries[2]
    assert world.labels(mine) == {"awaiting:worker"}  # untouched


def test_labeled_and_commented_events_handle_only_their_issue_then_schedule_sweeps(
    world: World, tmp_path: Path
) -> None:
    first, second = open_job(world), open_job(world)
    for number in (first, second):
        world.controller.call("task", str(number), "--step", f'"{PY}" -c "print(40 + 2)"')
    label = world.api("/labels/awaiting:worker")
    data = payload(world, "issues", first, action="labeled", label=label)
    _, summary = run_adapter(world, tmp_path, "issues", data)
    assert world.heads(first)[-1].startswith("### RESULT 1")
    assert not any(h.startswith("### RESULT") for h in world.heads(second))  # only #first
    assert summary.startswith(
        f"**relay node `{WORKER}`** ({world.repo}): handled: issues.labeled on #{first}\n"
    )
    assert f"#{first}" in summary

    task = world.comments(second)[-1]
    data = payload(world, "issue_comment", second, action="created", comment=task)
    run_adapter(world, tmp_path, "issue_comment", data)
    assert world.heads(second)[-1].startswith("### RESULT 1")

    for number in (first, second):
        world.controller.call("task", str(number), "--step", "git --version")
    run_adapter(world, tmp_path, "workflow_dispatch", payload(world, "", None, inputs={}))
    for number in (first, second):  # a full pass took both turns
        assert world.heads(number)[-1].startswith("### RESULT 2"), world.heads(number)
    _, summary = run_adapter(world, tmp_path, "schedule", {"schedule": "3-58/5 * * * *"})
    assert "handled: schedule: full pass" in summary


def test_a_run_acting_as_an_account_the_job_does_not_trust_does_nothing_and_says_how_to_fix(
    world: World, tmp_path: Path
) -> None:
    """The workflow's own token is not an instruction account: its RESULT would be data to
    the controller and the job would stall. The run does nothing, says so once in the
    thread, and the job summary says how to fix it."""
    number = open_job(world)
    world.controller.call("task", str(number), "--step", f'"{PY}" -c "print(1)"')
    bot = "ci-bot"
    token = world.tokens(bot)  # the account exists once it has a token
    world.api(f"/collaborators/{bot}", "PUT", {})
    label = world.api("/labels/awaiting:worker")
    data = payload(world, "issues", number, action="labeled", label=label)
    for _ in range(2):
        _, summary = run_adapter(world, tmp_path, "issues", data, token=token)
    assert not any(h.startswith(("### Claim", "### RESULT")) for h in world.heads(number))
    assert world.labels(number) == {"awaiting:worker"}, "the baton stays with the worker"
    said = [c for c in world.comments(number) if "not an instruction account" in c["body"]]
    assert len(said) == 1, "said once, not on every run"
    assert said[0]["user"]["login"] == bot and "relay join" in said[0]["body"]
    assert "do not trust, so it did nothing" in summary and "GITHUB_TOKEN" in summary
    # the same run with the node's own account takes the turn
    run_adapter(world, tmp_path, "issues", data, in_process=True)
    assert world.heads(number)[-1].startswith("### RESULT 1")


def test_an_untrusted_token_on_fresh_runners_says_so_once_in_the_thread_and_every_summary(
    world: World, tmp_path: Path
) -> None:
    """Each Actions run starts from a fresh checkout with no local state: the thread,
    not the runner, remembers that the notice was posted. Every run's job summary says
    which account it acted as and how to fix it."""
    number = open_job(world)
    world.controller.call("task", str(number), "--step", f'"{PY}" -c "print(1)"')
    bot = "ci-bot"
    token = world.tokens(bot)
    world.api(f"/collaborators/{bot}", "PUT", {})
    label = world.api("/labels/awaiting:worker")
    data = payload(world, "issues", number, action="labeled", label=label)
    summaries = []
    for run in range(3):
        fresh = world.clone(f"runner-{run}")  # a new runner: a checkout, nothing else
        _, summary = run_adapter(world, tmp_path, "issues", data, token=token, clone=fresh)
        summaries.append(summary)
    said = [c for c in world.comments(number) if "not an instruction account" in c["body"]]
    assert len(said) == 1, [c["body"][:80] for c in said]
    for summary in summaries:
        assert f"acted as `{bot}`" in summary and "GitHub App" in summary
        assert f"relay join --node {WORKER} --accounts" in summary
    assert world.labels(number) == {"awaiting:worker"}
    assert not any(h.startswith(("### Claim", "### RESULT")) for h in world.heads(number))


def test_a_fresh_runner_signs_with_the_node_key_from_its_secret(
    world: World, tmp_path: Path
) -> None:
    """The worker's row has a public key, so its RESULTs must verify; a runner has no
    state, and RELAY_NODE_KEY brings the key. The controller accepts the RESULT."""
    from relay.edges.local import NodeState

    number = open_job(world)
    world.controller.call("task", str(number), "--step", f'"{PY}" -c "print(7)"')
    key = NodeState.for_clone(world.worker.clone).signing_key_path(WORKER).read_text()
    label = world.api("/labels/awaiting:worker")
    data = payload(world, "issues", number, action="labeled", label=label)
    fresh = world.clone("runner-keyed")
    done, summary = run_adapter(
        world, tmp_path, "issues", data, clone=fresh, extra_env={"RELAY_NODE_KEY": key}
    )
    # this job names no environment, so any pusher's workflow could read the key: said
    assert "::warning::RELAY_NODE_KEY reaches this job, which names no environment" in done.stdout
    assert "**Warning:** RELAY_NODE_KEY reaches this job" in summary
    key_file = NodeState.for_clone(fresh).signing_key_path(WORKER)
    assert key_file.read_text() == key and key_file.stat().st_mode & 0o077 == 0
    said = world.controller.call("result", str(number))
    assert said.startswith(f"#{number} RESULT 1: done"), said


def test_an_api_failure_asking_whose_token_it_is_is_no_verdict_on_the_account(
    world: World, tmp_path: Path
) -> None:
    """GET /user failing (the API down) fails the run; it never makes the node's own
    account look untrusted in the thread."""
    number = open_job(world)
    world.controller.call("task", str(number), "--step", f'"{PY}" -c "print(1)"')
    label = world.api("/labels/awaiting:worker")
    data = payload(world, "issues", number, action="labeled", label=label)
    world.hub.set_faults("500=1,on=GET:/user")  # type: ignore[attr-defined]
    try:
        path = tmp_path / "issues.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if k != "RELAY_TOKEN"}
        env.update(
            GITHUB_ACTIONS="true", GITHUB_EVENT_NAME="issues", GITHUB_EVENT_PATH=str(path),
            GITHUB_REPOSITORY=world.repo, GITHUB_API_URL=world.hub.url,
            GITHUB_TOKEN=world.worker.token, GITHUB_STEP_SUMMARY=str(tmp_path / "s.md"),
        )  # fmt: skip
        argv = [sys.executable, "-m", "relay.cli", "watch", "--once", "--event", str(path)]
        argv += ["--node", WORKER, "--repo-dir", str(world.worker.clone)]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    finally:
        world.hub.clear_faults()  # type: ignore[attr-defined]
    assert done.returncode != 0
    assert not any("not an instruction account" in c["body"] for c in world.comments(number))
    run_adapter(world, tmp_path, "issues", data, in_process=True)  # the API back: turn taken
    assert world.heads(number)[-1].startswith("### RESULT 1")
