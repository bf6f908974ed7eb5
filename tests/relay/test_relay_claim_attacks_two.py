"""More attacks on "a TASK never runs twice, and an honest TASK is never refused or
stalled", against a real hub: the events read a claim makes once its baton is moved, and
two runners of one worker at once. Each test asserts what relay promises; those that do
not hold yet are strict xfails."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from test_relay_seal_breaks import forget
from test_relay_trust import appends, mallory, runs
from worlds import STRANGER, Node, World

PY = Path(sys.executable).as_posix()


def test_an_events_read_that_fails_after_the_claim_never_loses_an_honest_task(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The claim comment is posted and the baton is `working`; the one GET of the issue's
    events that follows fails (GitHub answers 500 for a while, as it does). The exception
    leaves the pass with the claim recorded and nothing run: the next pass of the same
    runner reads its own claim as a pass that died and answers the TASK half-done, and a
    runner with no records waits out the claim and does the same. The honest TASK, which
    nobody else claimed, never runs."""
    import relay.node.execute as execute

    marker = tmp_path / "RAN"
    world.controller.call("task", str(job), "--step", appends(marker))
    move = execute.comment_then_move

    async def then_fail(*args: object, **kwargs: object) -> execute.Posted:
        posted = await move(*args, **kwargs)  # type: ignore[arg-type]
        if kwargs.get("to") == "working":
            world.hub.set_faults("500=1,on=GET:/events")  # type: ignore[attr-defined]
        return posted

    monkeypatch.setattr(execute, "comment_then_move", then_fail)
    try:
        first = world.worker.invoke("watch", "--once", "--verbose")
    finally:
        world.hub.clear_faults()  # type: ignore[attr-defined]
        monkeypatch.setattr(execute, "comment_then_move", move)
    said = first.stdout + first.stderr
    for _ in range(2):
        said += world.worker.call("watch", "--once", "--verbose")
        said += world.controller.call("watch", "--once", "--verbose")
    assert runs(marker) == 1, said + "\n".join(world.heads(job))


PAUSED = """
import pathlib, sys, time
import relay.node.execute as ex
ready, go = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
move = ex.comment_then_move
async def paused(*args, **kwargs):
    if kwargs.get("to") == "working":
        ready.write_text("x")
        while not go.exists():
            time.sleep(0.05)
    return await move(*args, **kwargs)
ex.comment_then_move = paused
from relay.cli import main
sys.exit(main(sys.argv[3:]))
"""


def slow_step(tmp_path: Path, marker: Path, started: Path, seconds: int) -> str:
    """A step that says it started, runs ``seconds``, then adds a line to ``marker``."""
    script = tmp_path / "slow.py"
    script.write_text(
        "import time\n"
        f"open({str(started)!r}, 'a').write('x')\n"
        f"time.sleep({seconds})\n"
        f"open({str(marker)!r}, 'a').write('ran\\n')\n"
    )
    return f'"{PY}" "{script.as_posix()}"'


def wait_for(path: Path, seconds: float = 60) -> None:
    end = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < end, f"{path.name} never came"
        time.sleep(0.05)


def test_the_runner_that_stands_down_never_leaves_its_claim_as_the_tasks_claim(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """She deletes the `working` label from the repository (push access): a claim's
    GraphQL mutation needs the label's id, so every claim goes over REST, its comment and
    its baton move two requests. Two runners of the worker pass at once, and she deletes
    runner A's claim ref so that runner B's is made too. A posts its claim comment; B
    posts its own, moves the baton and reads the events (only its own `working`: it runs);
    then A moves the baton, reads both, and stands down, as rule 1 says. But the thread
    counts the first claim comment of a TASK, A's, which nobody beats: B's heartbeat edits
    a comment read as "a second CLAIM". Once A's claim's `alive_until` is past, the
    controller says the worker "looks gone" and takes the baton back from a task that is
    running. (Heartbeats every second, the reclaim grace cut to nothing.)"""
    import importlib

    decide = importlib.import_module("relay.protocol.decide")
    procs, started, marker, said = two_runners_race(world, job, monkeypatch, tmp_path)
    try:
        check_stand_down(world, job, procs, started, marker, said, decide, monkeypatch)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def two_runners_race(
    world: World,
    job: int,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    claims: list[str] | None = None,
) -> tuple[list[subprocess.Popen[str]], Path, Path, str]:
    """The race of the test above, run to where runner B runs TASK 1 and runner A stood
    down: her `working` label deleted (every claim over REST), A's claim ref deleted while
    A is about to post its claim, B (another clone of the worker, a process) passing then;
    A posts its comment, B claims, moves and reads one `working`, and A moves and reads
    two. B's process, whether the step started, the step's marker, and what A said.
    ``claims``: A's signed claim body is added to it, as she can read it."""
    import relay.node.execute as execute

    mallory(world, monkeypatch)
    world.api("/labels/working", "DELETE", login=STRANGER)
    marker, started = tmp_path / "RAN", tmp_path / "STARTED"
    ready, go = tmp_path / "READY", tmp_path / "GO"
    w = world.worker
    runner_b = Node(w.name, world.root / "runner-b", w.token, w.monkeypatch)
    shutil.copytree(w.clone, runner_b.clone, symlinks=True)
    world.controller.call("task", str(job), "--step", slow_step(tmp_path, marker, started, 20))
    argv = [PY, "-c", PAUSED, str(ready), str(go), "watch", "--once", "--verbose"]
    argv += ["--repo-dir", str(runner_b.clone)]
    procs: list[subprocess.Popen[str]] = []
    comment_then_move, move_baton = execute.comment_then_move, execute.move_baton

    async def first_a(*args: object, **kwargs: object) -> execute.Posted:
        if kwargs.get("to") == "working" and not procs:  # A holds its ref; B is passing
            if claims is not None:
                claims.append(str(args[2]))
            world.api(f"/git/refs/relay/claims/{job}/1", "DELETE", login=STRANGER)
            env = runner_b.env(RELAY_HEARTBEAT_SECONDS="1")
            procs.append(
                subprocess.Popen(
                    argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
                )
            )
            wait_for(ready)  # B decided to run TASK 1 and made its ref
        return await comment_then_move(*args, **kwargs)  # type: ignore[arg-type]

    async def then_b(*args: object, **kwargs: object) -> bool:
        if kwargs.get("to") == "working" and procs and not go.exists():
            go.write_text("x")  # A's comment is posted: B claims, moves and reads now
            wait_for(started)
        return await move_baton(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(execute, "comment_then_move", first_a)
    monkeypatch.setattr(execute, "move_baton", then_b)
    try:
        said = w.invoke("watch", "--once", "--verbose", RELAY_HEARTBEAT_SECONDS="1").stdout
    finally:
        monkeypatch.setattr(execute, "comment_then_move", comment_then_move)
        monkeypatch.setattr(execute, "move_baton", move_baton)
    return procs, started, marker, said


def check_stand_down(
    world: World,
    job: int,
    procs: list[subprocess.Popen[str]],
    started: Path,
    marker: Path,
    said: str,
    decide: object,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert procs and started.exists(), said
    bodies = [c["body"] for c in world.comments(job)]
    assert sum("claimed by two runners" in b for b in bodies) == 1, world.heads(job)
    time.sleep(4)  # A's claim said it was alive for three heartbeats; B is still running
    monkeypatch.setattr(decide, "RECLAIM_GRACE", timedelta(0))
    said += world.controller.call("watch", "--once", "--verbose")
    out, _ = procs[0].communicate(timeout=60)
    said += out
    assert runs(marker) == 1, said
    gone = [b for b in (c["body"] for c in world.comments(job)) if "looks gone" in b]
    assert not gone, said + "\n".join(world.heads(job))


SETTLES = """
import sys
from datetime import timedelta
import importlib
decide = importlib.import_module("relay.protocol.decide")
work = importlib.import_module("relay.protocol.work")
decide.BARE_GRACE = timedelta(seconds=1)
decide.BARE_SETTLE = work.BARE_SETTLE = timedelta(seconds=6)
from relay.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_runner_mid_claim_is_never_taken_over_so_that_nobody_runs_the_task(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No attacker: two runners of the worker with no records pass at once (on Actions, a
    pass for a comment and a scheduled one), on a TASK posted longer ago than the bare ref
    grace (one that waited for a person's approval, or for the schedule). Runner A
    creates the claim ref; runner B reads the thread then: a bare ref. Taken over at once,
    both would claim, both count two `working` and stand down, and nobody runs the honest
    TASK. B waits the ref out within its pass instead (a settle, cut here to six seconds;
    the grace to one), and reads again: A's claim is there, and only A runs the TASK."""
    import relay.node.execute as execute
    from relay.edges.local import NodeState

    marker = tmp_path / "RAN"
    w = world.worker
    runner_b = Node(w.name, world.root / "runner-b", w.token, w.monkeypatch)
    shutil.copytree(w.clone, runner_b.clone, symlinks=True)
    world.controller.call("task", str(job), "--step", appends(marker))
    time.sleep(1.5)  # the TASK is older than the grace
    argv = [PY, "-c", SETTLES, "watch", "--once", "--verbose", "--repo-dir", str(runner_b.clone)]
    procs: list[subprocess.Popen[str]] = []
    comment_then_move = execute.comment_then_move
    b_state = NodeState.for_clone(runner_b.clone)

    async def first_a(*args: object, **kwargs: object) -> execute.Posted:
        if kwargs.get("to") == "working" and not procs:  # A holds its ref: B passes now
            procs.append(
                subprocess.Popen(
                    argv, env=runner_b.env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                    text=True,
                )
            )  # fmt: skip
            end = time.monotonic() + 60
            while not b_state.bare_seen():  # B saw the bare ref, and waits it out
                assert procs[0].poll() is None and time.monotonic() < end, "B never saw it"
                time.sleep(0.05)
        return await comment_then_move(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(execute, "comment_then_move", first_a)
    said = ""
    try:
        said += w.invoke("watch", "--once", "--verbose").stdout
    finally:
        monkeypatch.setattr(execute, "comment_then_move", comment_then_move)
        for proc in procs:
            if proc.poll() is None:
                said += proc.communicate(timeout=90)[0]
    forget(world)
    said += w.call("watch", "--once", "--verbose")
    assert runs(marker) == 1, said + "\n".join(world.heads(job))
    bodies = [c["body"] for c in world.comments(job)]
    assert not any("takes the task over" in b or "two runners" in b for b in bodies), said
