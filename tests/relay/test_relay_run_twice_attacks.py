"""Attacks on "a TASK never runs twice, and an honest TASK is never refused", against a
real hub: mallory (push access, in no row of the roster) and workers with no local
records (Actions runners). Each test asserts what relay promises; those that do not hold
yet are strict xfails."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_relay_seal_breaks import forget
from test_relay_trust import appends, mallory, runs
from worlds import STRANGER, Node, World


def test_her_awaiting_worker_taken_off_and_put_back_never_stalls_an_honest_task(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The controller posts TASK 1 and hands the baton to the worker itself. She takes
    `awaiting:worker` off and puts it back (two clicks; no race). The newest `labeled
    awaiting:worker` event is now hers, so the worker reads the baton as the state before
    her move, `awaiting:controller`, and does nothing; the controller reads the labels,
    `awaiting:worker`, and waits for the worker. `relay task` refuses a new TASK (the
    baton is not the controller's) and `relay job repair` has nothing to repost: the
    honest TASK never runs, until a person of the job moves the label by hand."""
    mallory(world, monkeypatch)
    marker = tmp_path / "RAN"
    world.controller.call("task", str(job), "--step", appends(marker))
    assert world.labels(job) == {"awaiting:worker"}
    world.api(f"/issues/{job}/labels/awaiting:worker", "DELETE", login=STRANGER)
    world.api(f"/issues/{job}/labels", "POST", {"labels": ["awaiting:worker"]}, login=STRANGER)
    said = ""
    for _ in range(2):
        said += world.worker.call("watch", "--once", "--verbose")
        said += world.controller.call("watch", "--once", "--verbose")
    assert runs(marker) == 1, said


def test_a_claim_ref_deleted_between_two_runners_never_runs_a_task_twice(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Two runners of the worker with no local records pass at once (on Actions, an
    `issues` pass and a full pass are in different concurrency groups; she starts them
    with a comment and a `workflow_dispatch`). Both read the TASK unclaimed and decide to
    run it. Runner A creates the claim ref first; she, polling the refs, deletes it before
    runner B (still pulling its clone) creates its own, which now succeeds. Nothing
    after the ref looks again: B claims and runs TASK 1, and A, whose ref creation
    succeeded, claims and runs it too. (Here B's whole pass comes between A's ref and A's
    claim comment: the same two runs.)"""
    import relay.node.execute as execute

    mallory(world, monkeypatch)
    marker = tmp_path / "RAN"
    w = world.worker
    runner_b = Node(w.name, world.root / "runner-b", w.token, w.monkeypatch)
    shutil.copytree(w.clone, runner_b.clone, symlinks=True)
    world.controller.call("task", str(job), "--step", appends(marker))
    move = execute.comment_then_move
    outs: list[str] = []

    async def raced(*args: object, **kwargs: object) -> execute.Posted:
        if kwargs.get("to") == "working" and not outs:  # runner A holds the ref now
            world.api(f"/git/refs/relay/claims/{job}/1", "DELETE", login=STRANGER)
            done = runner_b.run("watch", "--once", "--verbose")
            outs.append(done.stdout + done.stderr)
        return await move(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(execute, "comment_then_move", raced)
    said = w.call("watch", "--once", "--verbose")
    monkeypatch.setattr(execute, "comment_then_move", move)
    assert outs, said
    assert runs(marker) == 1, said + "".join(outs) + "\n".join(world.heads(job))
    # the runner that stood down says so in the thread
    bodies = [c["body"] for c in world.comments(job)]
    assert sum("claimed by two runners" in b for b in bodies) == 1, world.heads(job)


def short_grace(monkeypatch: pytest.MonkeyPatch, *, grace: float) -> None:
    """The bare claim ref's grace cut to ``grace`` seconds, its settle to one."""
    import importlib
    from datetime import timedelta

    decide = importlib.import_module("relay.protocol.decide")
    work = importlib.import_module("relay.protocol.work")
    for module in (decide, work):  # (a pass reads them from work, decide has its own)
        monkeypatch.setattr(module, "BARE_GRACE", timedelta(seconds=grace))
        monkeypatch.setattr(module, "BARE_SETTLE", timedelta(seconds=1))


def test_her_bare_claim_ref_on_a_young_task_is_waited_out_within_one_pass(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """She makes the claim ref as the TASK appears. A worker that passes on events alone
    (an Actions node with no schedule) passes once, while the TASK is younger than the
    grace: the pass waits the grace out and takes the task over, for nothing would wake
    the worker again. (The grace cut to four seconds, the settle to one.)"""
    mallory(world, monkeypatch)
    short_grace(monkeypatch, grace=4)
    marker = tmp_path / "RAN"
    world.controller.call("task", str(job), "--step", appends(marker))
    ref = {"ref": f"refs/relay/claims/{job}/1", "sha": world.remote_head()}
    world.api("/git/refs", "POST", ref, login=STRANGER)
    forget(world)
    said = world.worker.call("watch", "--once", "--verbose")
    assert runs(marker) == 1, said + "\n".join(world.heads(job))
    assert sum("takes the task over" in c["body"] for c in world.comments(job)) == 1


def test_her_bare_claim_ref_never_stalls_a_worker_with_no_records(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """She creates `refs/relay/claims/N/1` (push access; the number is easy to foresee).
    A runner that sees a bare claim ref waits a grace from when it first saw it, then
    takes the task over; but that sighting is a local record, and an Actions runner starts
    with none each time: every pass waits anew, says nothing in the thread, and the honest
    TASK never runs. (The grace is cut to a second here.)"""
    import time

    mallory(world, monkeypatch)
    short_grace(monkeypatch, grace=1)
    marker = tmp_path / "RAN"
    world.controller.call("task", str(job), "--step", appends(marker))
    sha = world.remote_head()
    ref = {"ref": f"refs/relay/claims/{job}/1", "sha": sha}
    world.api("/git/refs", "POST", ref, login=STRANGER)
    said = ""
    for _ in range(3):
        forget(world)
        said += world.worker.call("watch", "--once", "--verbose")
        time.sleep(1.5)
    said += world.controller.call("watch", "--once", "--verbose")
    assert runs(marker) == 1, said + "\n".join(world.heads(job))
