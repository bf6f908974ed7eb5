"""Breaks of the worker's memory that a task ran (the log its key sealed, and the issue's
label events), against a real hub: a collaborator with push access who is in no row of
the roster (mallory), and a worker that starts with no local records (as an Actions
runner does). Each test asserts what relay promises; those that do not hold yet are
strict xfails."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from test_relay_trust import PY, appends, as_login, mallory, runs
from worlds import STRANGER, WORKER, World, git

from relay.edges.local import NodeState
from relay.protocol import log_path

LOST = ("claims.json", "seen.json", "attempts.json", "notices.json", "threads.json")


def forget(world: World) -> None:
    """The worker's local records gone (a fresh runner, a wiped machine)."""
    state = NodeState.for_clone(world.worker.clone)
    for name in LOST:
        (state.root / name).unlink(missing_ok=True)


def delete_evidence(world: World, job: int, task: int) -> None:
    """Her deletions: the claim and the RESULT of ``task``, and its claim ref."""
    for comment in world.comments(job):
        if comment["body"].startswith(("### Claim", f"### RESULT {task}")):
            world.api(f"/issues/comments/{comment['id']}", "DELETE", login=STRANGER)
    world.api(f"/git/refs/relay/claims/{job}/{task}", "DELETE", login=STRANGER)


def bury(world: World, clone: Path, path: str, count: int = 20) -> None:
    """Her branch: ``count`` commits, each changing ``path``, newer than the worker's (the
    dates only stand for time passing: the test's commits share one second)."""
    as_login(world, STRANGER, "fetch", "-q", "origin", cwd=clone)
    git("checkout", "-qB", "notes", "origin/main", cwd=clone)
    target = clone / path
    target.parent.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        target.write_text(f"note {n}\n")
        git("add", "-A", cwd=clone)
        env = {**os.environ, "GIT_COMMITTER_DATE": f"@{4_000_000_000 + n} +0000"}
        subprocess.run(["git", "commit", "-qm", f"note {n}"], cwd=clone, env=env, check=True)
    as_login(world, STRANGER, "push", "-q", "-f", "origin", "notes", cwd=clone)


def push_attributes(world: World, clone: Path, rule: str) -> None:
    """Her `.gitattributes` on main, which relay's worktree checks out to publish logs."""
    as_login(world, STRANGER, "pull", "-q", "--ff-only", cwd=clone)
    (clone / ".gitattributes").write_text(rule)
    git("add", ".gitattributes", cwd=clone)
    git("commit", "-qm", "attributes", cwd=clone)
    as_login(world, STRANGER, "push", "-q", "origin", "HEAD:main", cwd=clone)


def answered_as_already_ran(world: World, job: int) -> str:
    result = next(c for c in world.comments(job) if c["body"].startswith("### RESULT 1"))
    return str(result["body"])


def asked_again(world: World, job: int, marker: Path) -> None:
    """Her `working` on the job (not followed: the baton reads as the worker's), and a
    worker with no local records asked again: the TASK does not run a second time."""
    world.api(f"/issues/{job}/labels", "PUT", {"labels": ["working"]}, login=STRANGER)
    forget(world)
    out = world.worker.call("watch", "--once", "--verbose")
    assert runs(marker) == 1, out


def remembered(world: World, job: int, marker: Path) -> None:
    """Her deletions of TASK 1's claim, RESULT and ref, the worker's records gone, the baton
    put back by the job's owner: the worker answers from its sealed log, and runs nothing."""
    delete_evidence(world, job, 1)
    forget(world)
    world.api(f"/issues/{job}/labels", "PUT", {"labels": ["awaiting:worker"]})
    out = world.worker.call("watch", "--once", "--verbose")
    assert runs(marker) == 1, out
    assert "already ran" in answered_as_already_ran(world, job)


def test_twenty_commits_on_her_branch_do_not_hide_the_sealed_log(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Twenty commits of hers at the log's path, on a branch of her own and newer than the
    worker's, do not push its genuine log out of what it reads: the data branch's history
    is read first, oldest first, and the worker answers from its log."""
    eve = mallory(world, monkeypatch)
    marker = tmp_path / "RAN"
    world.controller.call("task", str(job), "--step", appends(marker))
    world.worker.call("watch", "--once")
    world.controller.call("watch", "--once")
    delete_evidence(world, job, 1)
    bury(world, eve.clone, log_path(job, 1))
    forget(world)
    world.api(f"/issues/{job}/labels", "PUT", {"labels": ["awaiting:worker"]})
    out = world.worker.call("watch", "--once", "--verbose")
    assert runs(marker) == 1, out
    assert "already ran" in answered_as_already_ran(world, job)


@pytest.mark.parametrize("hide", ["none", "bury", "attributes"])
def test_her_working_label_and_a_hidden_log_never_run_a_task_twice(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, hide: str
) -> None:
    """She puts `working` on the TASK before the worker's pass. The worker does not follow
    her label and runs the TASK, but its claim's baton move finds `working` there already,
    so no node's account sets `working` for this TASK: the events count no claim. She
    deletes the claim, the RESULT and the claim ref before the controller's next pass, and
    hides the sealed log (20 commits on a branch of hers, or a `.gitattributes` of hers
    that changes the bytes git stores for it). The controller, which never saw a claim,
    hands the baton back by itself, and a worker with no local records runs the TASK
    again."""
    eve = mallory(world, monkeypatch)
    if hide == "attributes":
        push_attributes(world, eve.clone, "docs/loop/relay/** working-tree-encoding=UTF-16LE\n")
    marker = tmp_path / "RAN"
    world.controller.call("task", str(job), "--step", appends(marker))
    world.api(f"/issues/{job}/labels", "PUT", {"labels": ["working"]}, login=STRANGER)
    world.worker.call("watch", "--once")
    assert runs(marker) == 1
    delete_evidence(world, job, 1)
    if hide == "bury":
        bury(world, eve.clone, log_path(job, 1))
    handed = world.controller.call("watch", "--once", "--verbose")
    forget(world)
    out = world.worker.call("watch", "--once", "--verbose")
    assert runs(marker) == 1, handed + out


def test_a_log_with_crlf_output_is_still_the_workers_memory(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A step prints CRLF line ends (any Windows program) on a machine whose git has
    `core.autocrlf=input`: git stores the log with LF, the seal's digest was over CRLF,
    and the worker no longer knows its own log. (With `false` the same test passes.)"""
    mallory(world, monkeypatch)
    git("config", "core.autocrlf", "input", cwd=world.worker.clone)
    marker = tmp_path / "RAN"
    crlf = f'"{PY}" -c "import sys; sys.stdout.buffer.write(bytes([111, 107, 13, 10]))"'
    world.controller.call("task", str(job), "--step", appends(marker), "--step", crlf)
    world.worker.call("watch", "--once")
    world.controller.call("watch", "--once")
    remembered(world, job, marker)


def test_a_log_sealed_before_a_key_rotation_is_still_the_workers_memory(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The worker rotates its key (the roster keeps the old one, retired): the logs its old
    key sealed are still its own."""
    mallory(world, monkeypatch)
    marker = tmp_path / "RAN"
    world.controller.call("task", str(job), "--step", appends(marker))
    world.worker.call("watch", "--once")
    world.controller.call("watch", "--once")
    time.sleep(1.1)  # a key counts for TASKs posted a second or more before it was retired
    said = world.worker.call("join", "--node", WORKER, "--scheduler", "none", "--rotate-key")
    assert "signing key rotated" in said
    remembered(world, job, marker)


def test_copies_larger_than_a_sealed_log_are_never_read(tmp_path: Path) -> None:
    """Her copies at a log's path may be huge (and compress to nothing in git): the worker
    skips any blob larger than a sealed log can be and reads the rest one at a time, the
    data branch's first."""
    from relay.node.spine import versions_in_history

    repo = tmp_path / "r"
    repo.mkdir()
    git("init", "-q", "-b", "main", cwd=repo)
    path = "docs/loop/relay/1/logs/result-001.log"
    target = repo / path
    target.parent.mkdir(parents=True)
    for n, data in enumerate([b"mine\n", b"\0" * 3_000_000 + b"x", b"small copy\n"]):
        target.write_bytes(data)
        git("add", "-A", cwd=repo)
        git("commit", "-qm", f"v{n}", cwd=repo)
        git("update-ref", f"refs/remotes/origin/{'main' if n == 0 else f'b{n}'}", "HEAD", cwd=repo)
    read = list(versions_in_history(repo, path, first="main", largest=1_000_000))
    assert read == [b"mine\n", b"small copy\n"]
