"""A maker on another node is answered only by its node's signed RESULT: through a real
`relay hub`, with no worker running, an unsigned RESULT and a RESULT the worker signed for
another job (replayed on this one) are posted by the worker's own account on the loop's
job; the loop takes neither, keeps nothing, and says the node did not answer."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from loop_project import node_maker_project
from worlds import WORKER, HubLike, Tokens, World, data_of, git, loop_world

from relay.protocol import render_message
from relay.protocol.messages import ResultMsg

PY_ACCEPT = "grep -q 'def mul' src/calc.py"


@pytest.fixture(scope="module")
def tokens(git_hub: HubLike) -> Tokens:
    return Tokens(git_hub)


@pytest.fixture
def world(
    tmp_path: Path, git_hub: HubLike, tokens: Tokens, unique: str, monkeypatch: pytest.MonkeyPatch
) -> World:
    made = loop_world(tmp_path, git_hub, tokens, name=f"forged-{unique}", monkeypatch=monkeypatch)
    made.init()
    made.join_both()
    return made


def result(issue: int, summary: str) -> str:
    """A RESULT 1 saying done, as the worker would post it (before any signature)."""
    return render_message(
        ResultMsg(issue=issue, node=WORKER, task=1, status="done", summary=summary)
    )


@pytest.fixture
def forger(world: World) -> Iterator[list[int]]:
    """Once the loop's TASK is on its job: an unsigned RESULT, then one the worker signed
    for another job, replayed here; the jobs it answered."""
    other = world.open_job(title="Another job")
    replay = world.signed(world.worker, result(other, "made on another job"))
    answered: list[int] = []
    stop = threading.Event()

    def forge() -> None:
        while not stop.is_set():
            jobs = [i for i in world.api("/issues?state=all") if "maker" in i["title"]]
            for job in jobs:
                number = job["number"]
                if number in answered or not any(
                    h.startswith("### TASK 1") for h in world.heads(number)
                ):
                    continue
                world.api(f"/issues/{number}/comments", "POST",
                          {"body": result(number, "made, unsigned")})  # fmt: skip
                moved = replay.replace(f'"issue":{other}', f'"issue":{number}')
                assert moved != replay
                world.api(f"/issues/{number}/comments", "POST", {"body": moved})
                answered.append(number)
            stop.wait(0.5)

    thread = threading.Thread(target=forge, daemon=True)
    thread.start()
    yield answered
    stop.set()
    thread.join(timeout=30)


@pytest.mark.timeout(300)
def test_an_unsigned_or_replayed_result_is_never_taken(world: World, forger: list[int]) -> None:
    c = world.controller
    root = c.clone
    node_maker_project(world, f"- maker: node {WORKER}\n\n")
    c.call("loop", "goal", "add", "Multiply", "--accept", PY_ACCEPT)
    c.timeout = 200
    started = time.monotonic()
    done = c.run("loop", "run", "--verify-wait", "12s", "--json")
    assert done.returncode == 0, (done.stdout, done.stderr)
    report = data_of(done.stdout)
    assert report["kept"] == [], report
    [job] = forger  # both forgeries were on the loop's job before it stopped waiting
    heads = world.heads(job)
    assert sum(h.startswith("### RESULT 1") for h in heads) == 2, heads
    board = (root / "docs/loop/BOARD.md").read_text()
    g1 = next(line for line in board.splitlines() if line.startswith("| G1 "))
    assert f"the maker on {WORKER}" in g1 and "no result for TASK 1" in g1, g1
    assert "def mul" not in (root / "src/calc.py").read_text()
    assert time.monotonic() - started < 180
    assert git("status", "--porcelain", "--untracked-files=no", cwd=root) == ""
