"""Races a person cannot arrange by hand: two passes at once, a waiting reader, a push refused."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from relay_world import hook_script
from worlds import Node, World, data_of

PY = Path(sys.executable).as_posix()


def counting_step(tally: Path) -> str:
    """A step that appends one line to ``tally`` each time it runs, slowly enough to overlap."""
    return f"\"{PY}\" -c \"import time; open({str(tally)!r}, 'a').write('ran\\n'); time.sleep(1)\""


def start(node: Node, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        node.argv(*args), env=node.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err


def test_two_passes_of_one_node_run_the_task_once(world: World, job: int, tmp_path: Path) -> None:
    """The same clone fired twice (lock) and a second runner of the same node (claim ref)."""
    w = world.worker
    tally = tmp_path / "tally"
    world.controller.call("task", str(job), "--step", counting_step(tally))
    twin = Node(w.name, world.root / "win-desktop-twin", w.token, w.monkeypatch)
    shutil.copytree(w.clone, twin.clone, symlinks=True)
    procs = [
        start(w, "watch", "--once"),
        start(w, "watch", "--once"),
        start(twin, "watch", "--once"),
    ]
    answers = [finish(p) for p in procs]
    assert all(code == 0 for code, _, _ in answers), answers
    assert tally.read_text() == "ran\n"
    heads = world.heads(job)
    assert sum(h.startswith("### RESULT 1") for h in heads) == 1, heads
    assert list(world.claim_refs()) == [f"refs/relay/claims/{job}/1"]
    assert world.labels(job) == {"awaiting:controller"}


def test_result_wait_returns_when_the_worker_answers(world: World, job: int) -> None:
    c, w = world.controller, world.worker
    c.call("task", str(job), "--step", "git --version")
    waiter = start(c, "result", str(job), "--wait", "--poll", "0.2", "--timeout", "30", "--json")
    time.sleep(0.5)
    assert waiter.poll() is None  # still waiting: no answer yet
    w.call("watch", "--once")
    code, out, err = finish(waiter)
    assert code == 0, err
    assert data_of(out)["result"]["status"] == "done"


def test_result_wait_gives_up_with_one_line(world: World, job: int) -> None:
    c = world.controller
    c.call("task", str(job), "--step", "git --version")
    done = c.run("result", str(job), "--wait", "--poll", "0.1", "--timeout", "0.3")
    assert done.returncode == 4
    # the seconds it really waited: past the timeout by a look, longer on a loaded machine
    [line] = done.stderr.strip().splitlines()
    assert re.fullmatch(
        rf"relay: no result for TASK 1 on #{job} after \d+s"
        " — is the worker's watcher running\\? see `relay status`",
        line,
    ), line


def test_a_refused_log_push_still_answers_as_partial(world: World, job: int) -> None:
    """The worker must answer even when git refuses its log: the RESULT says so."""
    c, w = world.controller, world.worker
    c.call("task", str(job), "--step", "git --version")
    hook_script(world.bare / "hooks" / "pre-receive", "echo 'pushes are frozen' >&2\nexit 1\n")
    report = data_of(w.call("watch", "--once", "--json"))
    assert [(t["status"], t["log_url"]) for t in report["tasks"]] == [("partial", None)]
    result = world.comments(job)[-1]["body"]
    assert result.startswith("### RESULT 1") and "could not be pushed" in result
    assert world.labels(job) == {"awaiting:controller"}


def test_a_claim_ref_taken_by_another_runner_is_waited_for_not_retried(
    world: World, job: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another runner of the node took the ref and has not commented yet (or died doing
    so): the pass that sees it changes nothing while it waits the grace out (a runner that
    was claiming would have claimed by then), then reads again and takes the task over,
    once. (The grace and the settle cut to three seconds.)"""
    import importlib
    from datetime import timedelta

    for name in ("relay.protocol.decide", "relay.protocol.work"):
        module = importlib.import_module(name)
        monkeypatch.setattr(module, "BARE_GRACE", timedelta(seconds=3))
        monkeypatch.setattr(module, "BARE_SETTLE", timedelta(seconds=3))
    tally = tmp_path / "tally"
    world.controller.call("task", str(job), "--step", counting_step(tally))
    sha = world.remote_refs().split()[1]
    world.api("/git/refs", "POST", {"ref": f"refs/relay/claims/{job}/1", "sha": sha})
    before = world.frozen(job)
    seen: list[object] = []
    import relay.watchers.once as once

    settle = once._settle

    def looked(*args: object) -> object:  # the thread as the pass left it while it waits
        found = settle(*args)  # type: ignore[arg-type]
        if found is not None and not seen:
            seen.append(world.frozen(job))
        return found

    monkeypatch.setattr(once, "_settle", looked)
    started = time.monotonic()
    out = world.worker.call("watch", "--once")
    assert f"#{job}: TASK 1 has a claim ref but no claim yet" in out, out
    assert seen == [before], "the waiting pass changed the thread"
    assert time.monotonic() - started >= 2, "the grace was not waited out"
    assert tally.read_text().splitlines() == ["ran"], out
