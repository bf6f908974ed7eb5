"""What a goal verified on another node (``--verify-on``) lets through, against a real
`relay hub`, two clones and the worker's real passes: the candidate's code runs on the
worker inside the worker's own judged box (as the controller's gates run it), never
beside its clone, its git directory or its HOME; and a collaborator who can push
branches, and pushes hers over the candidate's branch the moment the loop pushes it,
runs nothing on the worker and gets nothing kept: the TASK is signed with the
candidate's commit, the worker refuses any other tip in one line, and the loop keeps a
candidate only on a RESULT that names its commit; a worker that ran nothing sends the goal
to a person, never a strike against the maker."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from loop_project import CALC_MUL, TEST_MUL
from test_loop_verify_on import set_up_project, tokens, worker_passes, world
from worlds import WORKER, World, data_of

from relay.loop.goals import GoalState, parse_board
from relay.loop.jobs import parse_jobs
from relay.loop.records import parse_failures
from relay.ratchet.sandbox import NAMESPACES, level

__all__ = ["tokens", "worker_passes", "world"]  # the fixtures, shared with the happy path

PY = shlex.quote(sys.executable)
NODE = "RELAY_LOOP_TEST_NODE"  # says which node runs the candidate's test (boxes pass it)

needs_namespaces = pytest.mark.skipif(
    level() != NAMESPACES, reason="this machine cannot make user and mount namespaces"
)


def probe(seen: Path, clone: Path) -> str:
    """Test code that, run on the worker, writes down what it reached: the worker's clone
    (relay's state in its git directory: its worktree, its token), the host's mounts, the
    real HOME (and who it runs as, for the record)."""
    return (
        "import os as _o\n"
        f"if _o.environ.get({NODE!r}) == 'worker':\n"
        f"    with open({str(seen)!r}, 'a') as _f:\n"
        "        _f.write('clone=%s mnt=%s home=%s uid=%s\\n' % (\n"
        f"            _o.path.exists({str(clone / '.git' / 'relay')!r}),\n"
        "            _o.readlink('/proc/self/ns/mnt'), _o.environ.get('HOME'), _o.getuid()))\n\n\n"
    )


def maker(tmp_path: Path, test_text: str) -> str:
    script = tmp_path / "scripts" / "maker.py"  # shared with the boxes (conftest)
    script.parent.mkdir(exist_ok=True)
    script.write_text(
        "import os, pathlib\n"
        f"pathlib.Path('src/calc.py').write_text({CALC_MUL!r})\n"
        f"pathlib.Path('tests/test_mul.py').write_text({test_text!r})\n"
        "pathlib.Path(os.environ['RELAY_LOOP_EXPLAIN']).write_text('Added mul() and its test.')\n"
    )
    return f"{PY} {shlex.quote(str(script))}"


def loop_run(world: World, command: str) -> dict[str, object]:
    c = world.controller
    c.timeout = 400
    done = c.run("loop", "run", "--maker", command, "--verify-wait", "240s", "--json")
    report: dict[str, object] = data_of(done.stdout)
    return report


@needs_namespaces
@pytest.mark.timeout(600)
def test_the_worker_runs_the_candidate_in_its_judged_box(
    world: World, worker_passes: dict[str, str], tmp_path: Path
) -> None:
    root = set_up_project(world)
    seen = tmp_path / "scripts" / "seen.txt"  # a folder every box shares (conftest)
    worker_passes[NODE] = "worker"
    report = loop_run(world, maker(tmp_path, probe(seen, world.worker.clone) + TEST_MUL))
    kept = report["kept"]
    assert isinstance(kept, list) and [k["goal"] for k in kept] == ["G1"], report
    assert seen.exists(), "the candidate's test never ran on the worker"
    host = os.readlink("/proc/self/ns/mnt")
    for line in seen.read_text().splitlines():
        facts = dict(word.split("=", 1) for word in line.split())
        # the worker's clone: where it was, the box's own tree (relay's state not in it)
        assert facts["clone"] == "False", line
        assert facts["mnt"] != host, line  # mounts of its own
        assert facts["home"] != os.environ["HOME"], line  # a scratch HOME
    [job] = parse_jobs((root / "docs/loop/BOARD.md").read_text())
    [result] = [c["body"] for c in world.comments(job.issue) if c["body"].startswith("### RESULT")]
    assert "judged box of" in result and "(namespaces)" in result, result


COLLAB = "import os as _o\nopen({marker!r}, 'a').write('her code ran on the worker\\n')\n"


def swap_branch(bare: Path, text: str, stop: threading.Event, done: list[str]) -> None:
    """A collaborator (may push branches, not in the roster) puts a commit of hers on
    relay-loop/g1 the moment the controller pushes it, before the worker checks it out:
    her tests/test_mul.py on top of the candidate."""

    def g(*args: str, **extra: str) -> str:
        env = {**os.environ, **extra}
        return subprocess.run(
            ["git", *args], cwd=bare, capture_output=True, text=True, check=True, env=env
        ).stdout.strip()

    while not stop.is_set():
        try:
            tip = g("rev-parse", "--verify", "-q", "refs/heads/relay-loop/g1")
        except subprocess.CalledProcessError:
            time.sleep(0.05)
            continue
        blob = subprocess.run(
            ["git", "hash-object", "-w", "--stdin"],
            cwd=bare, input=text, capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        index = {"GIT_INDEX_FILE": str(bare / "theirs-index")}
        g("read-tree", tip, **index)
        g("update-index", "--add", "--cacheinfo", f"100644,{blob},tests/test_mul.py", **index)
        tree = g("write-tree", **index)
        who = ("-c", "user.name=collab", "-c", "user.email=c@example.invalid")
        commit = g(*who, "commit-tree", tree, "-p", tip, "-m", "theirs")
        g("update-ref", "refs/heads/relay-loop/g1", commit, tip)
        done.append(commit)
        return


@pytest.mark.timeout(600)
def test_a_branch_pushed_over_runs_nothing_on_the_worker_and_keeps_nothing(
    world: World, worker_passes: dict[str, str], tmp_path: Path
) -> None:
    root = set_up_project(world)
    marker = tmp_path / "scripts" / "collab-ran.txt"  # writable from any box as well
    stop, done = threading.Event(), list[str]()
    theirs = COLLAB.format(marker=str(marker)) + "\n\ndef test_mul():\n    pass\n"
    swapper = threading.Thread(target=swap_branch, args=(world.bare, theirs, stop, done))
    swapper.start()
    try:
        report = loop_run(world, maker(tmp_path, TEST_MUL))
    finally:
        stop.set()
        swapper.join(timeout=30)
    assert done, "the branch was never pushed over"
    assert not marker.exists(), marker.read_text()  # her code never ran
    assert report["kept"] == [], report
    # no step judged the maker's change: it goes to a person, with no strike and no rule
    assert report["reverted"] == [], report
    [blocked] = report["blocked"]
    assert isinstance(blocked, dict) and blocked["goal"] == "G1", report
    why = str(blocked["blocker"])
    assert why.startswith(f"held for a person: {WORKER} ran nothing (job #"), why
    assert f"is at {done[0][:12]}, not at" in why, why
    board = (root / "docs/loop/BOARD.md").read_text()
    assert parse_board(board).rows[0].state is GoalState.BLOCKED
    failures = root / "docs/loop/state/failures.md"  # what rules are learned from
    assert not failures.exists() or parse_failures(failures.read_text())[1] == ()
    log = subprocess.run(
        ["git", "log", "--format=%s"], cwd=root, capture_output=True, text=True, check=True
    ).stdout
    assert "G1: Multiply" not in log.splitlines()
    [job] = parse_jobs(board)
    [result] = [c["body"] for c in world.comments(job.issue) if c["body"].startswith("### RESULT")]
    assert result.startswith("### RESULT 1 · blocked"), result
    assert f"Not run: branch `relay-loop/g1` is at {done[0][:12]}, not at" in result, result
