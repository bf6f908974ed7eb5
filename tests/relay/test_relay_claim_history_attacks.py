"""Attacks on "a dead worker's claim is not kept alive by her", against a real hub:
mallory (push access, in no row of the roster) edits a dead worker's claim comment, and
the controller reads the comment's edit history (GraphQL's ``userContentEdits``, the
versions a hundred a page, back to the worker's newest) to tell her edits from the
worker's beats. Each test asserts what relay promises."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from test_relay_claim_attacks_three import RUN, her_edits_of_a_dead_claim
from test_relay_claim_attacks_two import PY, slow_step, wait_for
from test_relay_run_twice_attacks import short_grace
from test_relay_trust import mallory, runs
from worlds import STRANGER, Node, World


def test_a_hundred_edits_of_hers_never_make_her_edits_beats_again(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The worker claims a TASK and its machine goes off mid-step (the pass killed). She
    puts the same signed claim text back into its comment a hundred times in a row (the
    newest hundred versions GraphQL lists are then all hers), then once each second. The
    controller's pass reads the comment's history from the hub, back a page past her
    hundred to the worker's versions: the claim lapsed when its text said, before nearly
    all of her edits, and the baton is back with the controller ("looks gone").
    (Heartbeats every second, no reclaim grace.)"""
    her_edits_of_a_dead_claim(world, job, monkeypatch, tmp_path, burst=100)


def test_her_garbling_of_a_running_claim_never_has_it_answered_half_done(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A TASK runs on the worker, beating every eight seconds. Right after its claim she
    edits the claim comment into any text; a second runner of the worker with no local
    records (a twin clone) passes then. It reads `working` and no claim: not a bare ref to
    take over (within a second here) but a claim no comment holds, which the comments'
    edit histories (the worker's claim) keep alive, so it answers nothing; the first
    runner's beat puts the claim back and its RESULT follows, the only answer."""
    mallory(world, monkeypatch)
    short_grace(monkeypatch, grace=1)  # a bare ref would be taken over within a second
    w = world.worker
    twin = Node(w.name, world.root / "worker-twin", w.token, w.monkeypatch)
    shutil.copytree(w.clone, twin.clone, symlinks=True)  # no records of this claim
    marker, started = tmp_path / "RAN", tmp_path / "STARTED"
    world.controller.call("task", str(job), "--step", slow_step(tmp_path, marker, started, 14))
    argv = [PY, "-c", RUN, "watch", "--once", "--verbose", "--repo-dir", str(w.clone)]
    env = w.env(RELAY_HEARTBEAT_SECONDS="8")  # its first beat eight seconds on
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        wait_for(started)
        claim = next(
            c for c in world.comments(job) if "CLAIM" in c["body"].split("\n", 1)[0].upper()
        )
        world.api(f"/issues/comments/{claim['id']}", "PATCH", {"body": "thanks!"}, login=STRANGER)
        said = twin.call("watch", "--once", "--verbose")
        out, _ = proc.communicate(timeout=90)
        said += out
        heads = world.heads(job)
        assert not any(h.startswith("### Half-done") for h in heads), said + "\n".join(heads)
        assert sum(h.startswith("### RESULT 1") for h in heads) == 1, said + "\n".join(heads)
        assert runs(marker) == 1, said
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
