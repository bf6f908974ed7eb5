"""A goal verified on a second node through a real `relay hub` and two clones: the loop
(the controller) pushes its candidate to a branch, opens a relay job for the worker, posts
a TASK to check out the branch and run the acceptance command, and waits for the RESULT
while the worker's real passes run. A failed RESULT reverts the attempt with the RESULT's
summary as its diagnosis and keeps the job open; the next run reuses that job, and a RESULT
done keeps the change and resolves the job with the goal."""

from __future__ import annotations

import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from loop_project import CALC_MUL, FILES, TEST_GATE, TEST_MUL
from worlds import WORKER, HubLike, Tokens, World, data_of, git, loop_world, stop_process

from relay.loop.goals import GoalState, parse_board
from relay.loop.jobs import Job, parse_jobs
from relay.loop.records import parse_failures

PY = shlex.quote(sys.executable)
# passes here, fails on a node whose environment says it is the worker: "works on my machine"
# (a RELAY_LOOP_ variable: the worker's box, like a gate's, passes only what a box needs)
ON_WORKER = "RELAY_LOOP_TEST_ON_WORKER"
ACCEPT = (
    f"{PY} -c \"import os, sys; sys.exit(1 if os.environ.get('{ON_WORKER}') else 0)\""
    f" && {PY} -m pytest -q -p no:cacheprovider tests/test_mul.py"
)


@pytest.fixture(scope="module")
def tokens(git_hub: HubLike) -> Tokens:
    return Tokens(git_hub)


@pytest.fixture
def world(
    tmp_path: Path,
    git_hub: HubLike,
    tokens: Tokens,
    unique: str,
    monkeypatch: pytest.MonkeyPatch,
) -> World:
    made = loop_world(tmp_path, git_hub, tokens, name=f"loop-{unique}", monkeypatch=monkeypatch)
    made.init()
    made.join_both()
    return made


@pytest.fixture
def worker_passes(world: World) -> Iterator[dict[str, str]]:
    """The worker's watcher: real passes, a second apart, until the test is done. The dict
    is the extra environment of its passes. One foreground `relay watch` serves many
    passes (a process a pass would cost its start-up each second); it is started again
    when it ends (no open job binds the node) or the environment changes (between
    rounds, when the worker has nothing to do)."""
    extra: dict[str, str] = {}
    stop = threading.Event()

    def passes() -> None:
        while not stop.is_set():
            seen = dict(extra)
            proc = subprocess.Popen(
                world.worker.argv("watch", "--interval", "1"),
                env=world.worker.env(**seen),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            while proc.poll() is None and not stop.wait(0.2) and extra == seen:
                pass
            if proc.poll() is None:
                stop_process(proc)
            stop.wait(0.5)

    thread = threading.Thread(target=passes, daemon=True)
    thread.start()
    yield extra
    stop.set()
    thread.join(timeout=120)


def set_up_project(world: World) -> Path:
    c = world.controller
    root = c.clone
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git("add", "-A", cwd=root)
    git("commit", "-qm", "the calc project", cwd=root)
    git("push", "-q", "origin", "HEAD:main", cwd=root, auth=world.git_auth())
    c.call("loop", "init", "--gate", TEST_GATE, "--retries", "0")
    contract = (root / "docs/loop/CONTRACT.md").read_text()
    contract = contract.replace("backoff: 30s", "backoff: 10ms").replace(
        "## Authorised irreversible actions\n\n(none)",
        "## Authorised irreversible actions\n\n- push\n- open a relay job",
    )
    (root / "docs/loop/CONTRACT.md").write_text(contract)
    git("commit", "-qam", "the loop may push and open relay jobs", cwd=root)
    git("push", "-q", "origin", "HEAD:main", cwd=root, auth=world.git_auth())
    c.call("loop", "goal", "add", "Multiply", "--accept", ACCEPT, "--verify-on", WORKER)
    return root


def maker(tmp_path: Path) -> str:
    script = tmp_path / "scripts" / "maker.py"  # shared with the boxes (conftest)
    script.parent.mkdir(exist_ok=True)
    script.write_text(
        "import os, pathlib\n"
        f"pathlib.Path('src/calc.py').write_text({CALC_MUL!r})\n"
        f"pathlib.Path('tests/test_mul.py').write_text({TEST_MUL!r})\n"
        "pathlib.Path(os.environ['RELAY_LOOP_EXPLAIN']).write_text('Added mul() and its test.')\n"
    )
    return f"{PY} {shlex.quote(str(script))}"


def loop_run(world: World, tmp_path: Path) -> dict[str, object]:
    c = world.controller
    c.timeout = 400
    done = c.run("loop", "run", "--maker", maker(tmp_path), "--verify-wait", "240s", "--json")
    report: dict[str, object] = data_of(done.stdout)
    return report


@pytest.mark.timeout(600)  # two real worker passes a round, on a machine that may be busy
def test_a_goal_is_verified_on_the_worker_fail_then_pass(
    world: World, worker_passes: dict[str, str], tmp_path: Path
) -> None:
    root = set_up_project(world)
    worker_passes[ON_WORKER] = "1"
    first = loop_run(world, tmp_path)
    assert first["kept"] == [], first
    [reverted] = first["reverted"]
    assert isinstance(reverted, str)
    assert f"remote verification: {WORKER} answered failed (job #" in reverted
    board = (root / "docs/loop/BOARD.md").read_text()
    [job] = parse_jobs(board)
    assert (job.goal, job.node, job.branch, job.state) == ("G1", WORKER, "relay-loop/g1", "open")
    _, [failure] = parse_failures((root / "docs/loop/state/failures.md").read_text())
    assert failure.category == "remote verification"
    assert "Step 1 failed" in failure.diagnosis or "exited" in failure.diagnosis, failure
    assert world.issue(job.issue)["state"] == "open"
    heads = world.heads(job.issue)
    assert heads[0].startswith("### TASK 1") and heads[-1].startswith("### RESULT 1")
    task = world.comments(job.issue)[0]["body"]
    assert "relay-loop/g1" in task and "tests/test_mul.py" in task
    candidate = git("rev-parse", "relay-loop/g1", cwd=world.bare).strip()
    assert f"**Check out:** `relay-loop/g1` at `{candidate}`" in task  # signed with it
    assert "**Boxed:**" in task
    pushed = git("show", "relay-loop/g1:tests/test_mul.py", cwd=world.bare)
    assert pushed == TEST_MUL  # the candidate, on its branch
    assert not (root / "tests/test_mul.py").exists()  # and not kept here
    assert git("status", "--porcelain", "--untracked-files=no", cwd=root) == ""

    worker_passes.pop(ON_WORKER)
    second = loop_run(world, tmp_path)
    kept = second["kept"]
    assert isinstance(kept, list) and [k["goal"] for k in kept] == ["G1"], second
    assert second["questions"] == [], second
    board = (root / "docs/loop/BOARD.md").read_text()
    assert parse_jobs(board) == (Job("G1", WORKER, job.issue, "relay-loop/g1", "resolved"),)
    row = parse_board(board).rows[0]
    assert row.state is GoalState.DONE
    heads = world.heads(job.issue)  # the same job: a second TASK, its RESULT, then closed
    assert [h.split(" ·")[0] for h in heads if h.startswith(("### TASK", "### RESULT"))][-2:] == [
        "### TASK 2",
        "### RESULT 2",
    ]
    deadline = time.monotonic() + 30
    while world.issue(job.issue)["state"] != "closed" and time.monotonic() < deadline:
        time.sleep(0.5)
    assert world.issue(job.issue)["state"] == "closed"
    assert (root / "src/calc.py").read_text() == CALC_MUL
    log = subprocess.run(
        ["git", "log", "--format=%s"], cwd=root, capture_output=True, text=True, check=True
    ).stdout
    assert "G1: Multiply" in log.splitlines()
    doctor = world.controller.run("doctor")
    assert "loop resume: no resume pending" in doctor.stdout, doctor.stdout
