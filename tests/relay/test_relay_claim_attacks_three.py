"""Attacks on "a running task is never taken away from a live worker", against a real
hub: mallory (push access, in no row of the roster) edits the worker's own comments into
a signed claim it posted. Each test asserts what relay promises; those that do not hold
yet are strict xfails."""

from __future__ import annotations

import subprocess
import time
from datetime import timedelta
from pathlib import Path

import pytest
from test_relay_claim_attacks_two import PY, slow_step, two_runners_race, wait_for
from test_relay_trust import appends, mallory, runs
from worlds import STRANGER, World


def test_a_stood_down_claim_edited_back_never_takes_the_running_task_away(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Two runners of the worker, her claim ref deleted between them, as in the stand-down
    test: runner A posts its claim comment first, runner B claims, reads one `working` and
    runs; A reads two and edits its claim comment into a notice, so B's is the thread's
    claim. She then edits A's comment back to the signed claim it held (its text is in
    the comment's edit history; a claim is the one message read after an edit). The
    thread counts a TASK's first claim again, A's, which nobody beats: once its
    `alive_until` is past, the controller says the worker "looks gone" and takes the baton
    back from the task B is running. (Heartbeats every second, no reclaim grace.)"""
    import importlib

    decide = importlib.import_module("relay.protocol.decide")
    bodies: list[str] = []
    procs, started, marker, said = two_runners_race(world, job, monkeypatch, tmp_path, bodies)
    try:
        assert procs and started.exists() and bodies, said
        notice = [c for c in world.comments(job) if "claimed by two runners" in c["body"]]
        assert len(notice) == 1, world.heads(job)
        # hers: the stood-down runner's signed claim put back in its comment
        world.api(
            f"/issues/comments/{notice[0]['id']}", "PATCH", {"body": bodies[0]}, login=STRANGER
        )
        time.sleep(4)  # A's claim said it was alive for a few beats; B is still running
        monkeypatch.setattr(decide, "RECLAIM_GRACE", timedelta(0))
        said += world.controller.call("watch", "--once", "--verbose")
        out, _ = procs[0].communicate(timeout=60)
        said += out
        assert runs(marker) == 1, said
        gone = [b for b in (c["body"] for c in world.comments(job)) if "looks gone" in b]
        assert not gone, said + "\n".join(world.heads(job))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


RUN = """
import sys
from relay.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_running_claim_copied_into_an_older_comment_never_takes_the_task_away(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No second runner: TASK 1 ran and was answered; TASK 2 runs, its worker alive and
    beating. She edits the worker's RESULT 1 comment into a copy of TASK 2's claim, as
    signed (edited, it still counts: a claim is read whatever its `updated_at`). The older
    comment is the TASK's first claim, and the worker's heartbeat edits only its own: the
    copy lapses, and the controller takes the baton back from the running task."""
    import importlib

    decide = importlib.import_module("relay.protocol.decide")
    mallory(world, monkeypatch)
    w = world.worker
    first = tmp_path / "FIRST"
    world.controller.call("task", str(job), "--step", appends(first))
    w.call("watch", "--once", "--verbose")
    world.controller.call("watch", "--once", "--verbose")
    time.sleep(1.1)  # (a whole task cycle within one second reads as the next's claim)
    marker, started = tmp_path / "RAN", tmp_path / "STARTED"
    world.controller.call("task", str(job), "--step", slow_step(tmp_path, marker, started, 20))
    argv = [PY, "-c", RUN, "watch", "--once", "--verbose", "--repo-dir", str(w.clone)]
    env = w.env(RELAY_HEARTBEAT_SECONDS="1")
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        wait_for(started)
        comments = world.comments(job)
        result = next(c for c in comments if c["body"].startswith("### RESULT 1"))
        claim = next(c for c in comments if "CLAIM" in c["body"].split("\n", 1)[0].upper()
                     and "TASK 2" in c["body"].split("\n", 1)[0].upper())  # fmt: skip
        world.api(
            f"/issues/comments/{result['id']}", "PATCH", {"body": claim["body"]}, login=STRANGER
        )
        time.sleep(5)  # the copy said it was alive for a few beats; the task still runs
        monkeypatch.setattr(decide, "RECLAIM_GRACE", timedelta(0))
        said = world.controller.call("watch", "--once", "--verbose")
        out, _ = proc.communicate(timeout=60)
        said += out
        assert runs(marker) == 1, said
        gone = [b for b in (c["body"] for c in world.comments(job)) if "looks gone" in b]
        assert not gone, said + "\n".join(world.heads(job))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_her_edits_of_a_dead_workers_claim_never_hold_the_task_back(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The worker claims a TASK and its machine goes off mid-step (the pass killed): its
    claim said it was alive a few beats on. She (push access, no node) keeps editing the
    claim comment, putting the same signed text back each second, so its last edit is
    always new. The controller's pass reads the comment's edit history from the hub:
    her versions are no beats, the claim lapsed when its text said, and the baton is back
    with the controller. (Heartbeats every second, no reclaim grace.)"""
    her_edits_of_a_dead_claim(world, job, monkeypatch, tmp_path, burst=0)


def her_edits_of_a_dead_claim(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *, burst: int
) -> None:
    """The worker claims a TASK (heartbeats every second) and its machine goes off
    mid-step (the pass killed). She puts the claim comment's signed text back ``burst``
    times in a row, then once a second, past the claim's own few beats, and once more
    right before the controller's pass: with no reclaim grace, that pass must take the
    baton back ("looks gone")."""
    import importlib
    import os
    import signal

    decide = importlib.import_module("relay.protocol.decide")
    mallory(world, monkeypatch)
    w = world.worker
    marker, started = tmp_path / "RAN", tmp_path / "STARTED"
    world.controller.call("task", str(job), "--step", slow_step(tmp_path, marker, started, 60))
    argv = [PY, "-c", RUN, "watch", "--once", "--verbose", "--repo-dir", str(w.clone)]
    env = w.env(RELAY_HEARTBEAT_SECONDS="1")
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        wait_for(started)
        os.killpg(proc.pid, signal.SIGKILL)  # the machine is off: no beat, no RESULT
        proc.wait(timeout=30)
        claim = next(
            c for c in world.comments(job) if "CLAIM" in c["body"].split("\n", 1)[0].upper()
        )
        path = f"/issues/comments/{claim['id']}"
        for _ in range(burst):  # hers, in a row
            world.api(path, "PATCH", {"body": claim["body"]}, login=STRANGER)
        deadline = time.monotonic() + 6  # past the claim's own few beats
        while time.monotonic() < deadline:
            world.api(path, "PATCH", {"body": claim["body"]}, login=STRANGER)
            time.sleep(1)
        world.api(path, "PATCH", {"body": claim["body"]}, login=STRANGER)
        monkeypatch.setattr(decide, "RECLAIM_GRACE", timedelta(0))
        said = world.controller.call("watch", "--once", "--verbose")
        gone = [b for b in (c["body"] for c in world.comments(job)) if "looks gone" in b]
        assert gone, said + "\n".join(world.heads(job))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
