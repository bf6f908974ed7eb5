"""Attacks on "a dead worker's claim is not kept alive by her", against a real hub:
mallory (push access, in no row of the roster) edits a dead worker's claim comment, and
the controller reads the comment's edit history (GraphQL's ``userContentEdits``, the
versions a hundred a page, back to the worker's newest) to tell her edits from the
worker's beats. Each test asserts what relay promises."""

from __future__ import annotations

import subprocess
import time
from datetime import timedelta
from pathlib import Path

import pytest
from test_relay_claim_attacks_three import RUN
from test_relay_claim_attacks_two import PY, slow_step, wait_for
from test_relay_trust import mallory
from worlds import STRANGER, World


def test_a_hundred_edits_of_hers_never_make_her_edits_beats_again(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The worker claims a TASK and its machine goes off mid-step (the pass killed). She
    puts the same signed claim text back into its comment a hundred times in a row (the
    newest hundred versions GraphQL lists are then all hers), then once each second. The
    controller's pass reads the comment's history from the hub: it is read in part and
    holds none of the worker's versions. The claim lapsed when its text said, before
    nearly all of her edits; the baton should be back with the controller ("looks
    gone"). (Heartbeats every second, no reclaim grace.)"""
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
        for _ in range(100):  # hers, in a row: the newest hundred versions
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
