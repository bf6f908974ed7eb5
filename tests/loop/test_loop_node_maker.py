"""A maker on another node, through a real `relay hub` and two clones: LOOP.md's roster
says `- maker: node worker`; the loop pushes the base commit to a branch of its own, opens
a relay job and posts a signed TASK whose step runs the worker's own maker
(RELAY_LOOP_MAKER) in the worker's clone; the worker's RESULT brings the diff back as a
redacted artifact, and the loop applies it and judges it with its own gates. A diff that
is not the file the signed RESULT names (here: redaction changed it) is refused."""

from __future__ import annotations

import os
import shlex
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from loop_project import CALC_MUL, TEST_MUL, node_maker_project
from worlds import WORKER, HubLike, Tokens, World, data_of, git, loop_world

from relay.commands.loop_nodes import taken_artifact

PY = shlex.quote(sys.executable)
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
TOKEN_PY = f"TOKEN = {SECRET!r}\n"


def test_an_artifact_is_taken_only_as_the_signed_result_hashed_it() -> None:
    import hashlib

    data = b"diff --git a/x b/x\n"
    record = {"path": "relay-loop-G1.diff", "sha256": hashlib.sha256(data).hexdigest()}
    assert taken_artifact(record, data) is None
    assert "sha256 differs" in (taken_artifact(record, data + b"+evil\n") or "")
    assert "did not come back" in (taken_artifact({**record, "note": "withheld"}, None) or "")


@pytest.fixture(scope="module")
def tokens(git_hub: HubLike) -> Tokens:
    return Tokens(git_hub)


@pytest.fixture
def world(
    tmp_path: Path, git_hub: HubLike, tokens: Tokens, unique: str, monkeypatch: pytest.MonkeyPatch
) -> World:
    made = loop_world(
        tmp_path, git_hub, tokens, name=f"nodemaker-{unique}", monkeypatch=monkeypatch
    )
    made.init()
    made.join_both()
    return made


def worker_maker(tmp_path: Path) -> str:
    """The worker's own maker: G1 adds mul() and its test; G2 leaves a token-shaped string
    in its change, which the worker's redaction changes on the way back."""
    script = tmp_path / "scripts" / "worker-maker.py"  # shared with the boxes (conftest)
    script.parent.mkdir(exist_ok=True)
    script.write_text(
        "import os, pathlib, re, sys\n"
        "brief = pathlib.Path(sys.argv[-1]).read_text()\n"
        "goal = re.search(r'^# (G[0-9]+):', brief, re.M).group(1)\n"
        "if goal == 'G1':\n"
        f"    pathlib.Path('src/calc.py').write_text({CALC_MUL!r})\n"
        f"    pathlib.Path('tests/test_mul.py').write_text({TEST_MUL!r})\n"
        "else:\n"
        f"    pathlib.Path('src/token.py').write_text({TOKEN_PY!r})\n"
        "pathlib.Path(os.environ['RELAY_LOOP_EXPLAIN']).write_text(f'{goal}: made on the worker')\n"
    )
    return f"{PY} {shlex.quote(str(script))}"


@pytest.fixture
def worker_passes(world: World, tmp_path: Path) -> Iterator[None]:
    """The worker's watcher, a person's foreground `relay watch` passing every 2 s, with
    its own maker and relay on its PATH."""
    stop = threading.Event()
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    env = world.worker.env(RELAY_LOOP_MAKER=worker_maker(tmp_path), PATH=path)

    thread = threading.Thread(target=world.worker.watch_until, args=(stop, env), daemon=True)
    thread.start()
    yield
    stop.set()
    thread.join(timeout=120)


@pytest.mark.timeout(600)  # real worker passes, on a machine that may be busy
def test_a_maker_on_another_node_brings_back_a_diff_that_is_judged_here(
    world: World, worker_passes: None
) -> None:
    c = world.controller
    root = c.clone
    node_maker_project(world, f"- maker: node {WORKER}\n\n")
    accept = f"{PY} -m pytest -q -p no:cacheprovider tests/test_mul.py"
    c.call("loop", "goal", "add", "Multiply", "--accept", accept)
    c.call("loop", "goal", "add", "Token", "--accept", f"{PY} -c 'import src.token'")
    roles = data_of(c.call("loop", "roles", "--json"))
    assert [(r["name"], r["backend"], r["target"]) for r in roles["roles"]] == [
        ("maker", "node", WORKER)
    ]
    c.timeout = 500
    done = c.run("loop", "run", "--verify-wait", "240s", "--json")
    assert done.returncode == 0, (done.stdout, done.stderr)
    report = data_of(done.stdout)
    assert [k["goal"] for k in report["kept"]] == ["G1"], (report["reverted"], report["questions"])
    # G1: made on the worker, judged and kept here as one commit
    assert (root / "src/calc.py").read_text() == CALC_MUL
    assert (root / "tests/test_mul.py").read_text() == TEST_MUL
    log = git("log", "--format=%s", cwd=root).splitlines()
    assert "G1: Multiply" in log
    # the brief went out as a TASK on a job for the worker, the diff came back as artifacts
    jobs = [i for i in world.api("/issues?state=all") if "maker" in i["title"]]
    by_title = {i["title"]: i["number"] for i in jobs}
    g1 = by_title["relay loop G1 maker: Multiply"]
    heads = world.heads(g1)
    assert any(h.startswith("### TASK 1") for h in heads)
    assert any(h.startswith("### RESULT 1") for h in heads)
    task = world.comments(g1)[0]["body"]
    assert "relay loop make-here G1" in task and "relay-loop-G1.diff" in task
    # G2: its diff came back redacted, not the file the signed RESULT hashed: refused
    assert not (root / "src/token.py").exists()
    assert SECRET not in git("log", "-p", cwd=root)
    board = (root / "docs/loop/BOARD.md").read_text()
    g2 = next(line for line in board.splitlines() if line.startswith("| G2 "))
    assert "not the file the signed RESULT names" in g2 or "did not come back" in g2, g2
    assert git("status", "--porcelain", "--untracked-files=no", cwd=root) == ""
    # once judged (kept or refused), each maker job ends as every finished job does:
    # a closure, the resolved label, closed; no job is left to keep the worker's watcher
    g2_job = by_title["relay loop G2 maker: Token"]
    for number, verdict in ((g1, "kept as"), (g2_job, "not kept")):
        job = world.issue(number)
        assert job["state"] == "closed", (number, world.heads(number))
        assert "resolved" in world.labels(number), world.labels(number)
        [closure] = [c["body"] for c in world.comments(number) if "### Resolved" in c["body"]]
        assert verdict in closure, closure
    assert not [i for i in world.api("/issues?state=open") if "maker" in i["title"]]


def slow_worker_maker(tmp_path: Path) -> str:
    """A worker maker whose first run on G1 takes long (a person stops it); later runs
    add mul() and its test at once."""
    script = tmp_path / "scripts" / "slow-worker-maker.py"  # shared with the boxes (conftest)
    script.parent.mkdir(exist_ok=True)
    started = tmp_path / "scripts" / "slow-started"
    script.write_text(
        "import os, pathlib, sys, time\n"
        f"started = pathlib.Path({str(started)!r})\n"
        "if not started.exists():\n"
        "    started.write_text('')\n"
        "    time.sleep(25)\n"
        f"pathlib.Path('src/calc.py').write_text({CALC_MUL!r})\n"
        f"pathlib.Path('tests/test_mul.py').write_text({TEST_MUL!r})\n"
        "pathlib.Path(os.environ['RELAY_LOOP_EXPLAIN']).write_text('G1: made on the worker')\n"
    )
    return f"{PY} {shlex.quote(str(script))}"


@pytest.mark.timeout(600)
def test_interrupting_a_maker_on_a_node_closes_its_job_and_the_run_goes_on(
    world: World, tmp_path: Path
) -> None:
    import subprocess
    import time

    c = world.controller
    root = c.clone
    node_maker_project(world, f"- maker: node {WORKER}\n\n")
    accept = f"{PY} -m pytest -q -p no:cacheprovider tests/test_mul.py"
    c.call("loop", "goal", "add", "Multiply", "--accept", accept)

    stop = threading.Event()
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    env = world.worker.env(RELAY_LOOP_MAKER=slow_worker_maker(tmp_path), PATH=path)

    worker = threading.Thread(target=world.worker.watch_until, args=(stop, env), daemon=True)
    worker.start()
    run = subprocess.Popen(
        c.argv("loop", "run", "--verify-wait", "240s", "--json"),
        env=c.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 240
        while not (tmp_path / "scripts" / "slow-started").exists():
            assert run.poll() is None and time.monotonic() < deadline, run.communicate()
            time.sleep(0.2)
        status = data_of(c.call("loop", "status", "--json"))
        running = [t for t in status["threads"] if t["state"] == "running"]
        assert [(t["role"], t["goal"]) for t in running] == [("maker", "G1")], status
        stopped = c.run("loop", "interrupt", "maker", "--goal", "G1", "--json")
        assert stopped.returncode == 0, (stopped.stdout, stopped.stderr)
        (first,) = data_of(stopped.stdout)["stopped"]
        assert first["goal"] == "G1" and first["job"] > 0
        out, err = run.communicate(timeout=500)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        stop.set()
        worker.join(timeout=120)
    assert run.returncode == 0, (out, err)
    report = data_of(out)
    # the run went on: G1 was sent again, made and kept; the stop counted as no attempt
    assert [k["goal"] for k in report["kept"]] == ["G1"], report
    log = git("log", "--format=%s", cwd=root).splitlines()
    assert "loop: G1 interrupted" in log and "G1: Multiply" in log
    assert report["reverted"] == [] and report["blocked"] == [], report  # no failure counted
    # the stopped job is closed with the person's reason
    job = world.api(f"/issues/{first['job']}")
    assert job["state"] == "closed", (world.heads(first["job"]), err[-3000:])
    assert (root / "src/calc.py").read_text() == CALC_MUL
