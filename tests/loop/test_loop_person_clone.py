"""The person's clone while `relay loop run` judges a candidate: its work tree, index, HEAD
and branch are exactly as before, and stay so when the candidate is refused. Only a kept
change reaches it (one commit, made by relay).

The clone is read from outside the run: the run is a process of its own, and the goal's
acceptance command, when it judges a candidate, signals the test and waits; the test reads
the clone with git and its files, then lets the gate go on."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from loop_project import CALC, CALC_MUL, LINT_GATE, PY, TEST_GATE, TEST_MUL, Project, make_project

from relay.loop.goals import GoalState, parse_board


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def accept_that_waits(project: Project) -> str:
    """An acceptance command that fails at the baseline (no ``mul``) and, on a candidate,
    says so in the shared scripts folder and waits for the test's go before running the
    goal's test."""
    judges = project.scripts.parent / "judges"  # never in a share: every box writes there
    judges.mkdir(exist_ok=True)
    path = judges / "accept_wait.py"
    path.write_text(
        "import pathlib, subprocess, sys, time\n"
        f"SCRIPTS = pathlib.Path({str(project.scripts)!r})\n"
        "src = pathlib.Path('src/calc.py')\n"
        "if 'def mul' not in (src.read_text() if src.exists() else ''):\n"
        "    sys.exit(1)\n"
        "(SCRIPTS / 'judging').write_text(str(pathlib.Path.cwd()))\n"
        "deadline = time.monotonic() + 120\n"
        "while not (SCRIPTS / 'go').exists() and time.monotonic() < deadline:\n"
        "    time.sleep(0.05)\n"
        "sys.exit(subprocess.call([sys.executable, '-m', 'pytest', '-q',"
        " '-p', 'no:cacheprovider', 'tests/test_mul.py']))\n",
        encoding="utf-8",
    )
    return f"{PY} {path}"


def clone_state(project: Project) -> dict[str, str]:
    """What a person sees of their clone: status, index, HEAD, branch, the project's files."""
    return {
        "status": project.git("status", "--porcelain=v1", "--untracked-files=all"),
        "index": project.git("ls-files", "--stage", "--", ".", ":!docs/loop"),
        "head": project.git("rev-parse", "HEAD").strip(),
        "branch": project.git("symbolic-ref", "HEAD"),
        "src/calc.py": project.read("src/calc.py"),
        "mine.txt": project.read("mine.txt"),
        "test_mul": str((project.root / "tests/test_mul.py").exists()),
    }


def judged_run(project: Project, maker: str) -> tuple[dict[str, str], dict[str, str], str]:
    """Run the loop as a process; the clone's state when the goal started and while its
    candidate was judged, and the run's stderr."""
    proc = project.spawn("run", "--maker", maker)
    try:
        flag = project.scripts / "judging"
        deadline = time.monotonic() + 120
        while not flag.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert flag.exists(), proc.communicate()
        during = clone_state(project)
        (project.scripts / "go").write_text("go")
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    started = project.git("log", "--format=%H", "--grep", "loop: G1 in progress").split()[0]
    return during, {"head": started}, err


def setup(tmp_path: Path, gate: str) -> tuple[Project, dict[str, str]]:
    project = make_project(tmp_path, retries=0, accept=None, gates=(gate,))
    accept = accept_that_waits(project)
    assert project.loop("goal", "add", "Multiply", "--accept", accept).status == 0
    project.write("mine.txt", "the person's own untracked notes\n")
    return project, clone_state(project)


def test_the_clone_is_untouched_while_a_candidate_is_judged_and_moves_when_kept(
    tmp_path: Path,
) -> None:
    project, before = setup(tmp_path, TEST_GATE)
    maker = project.script(
        "maker", f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
    )
    during, started, err = judged_run(project, maker)
    # while judged: only relay's "in progress" bookkeeping commit; nothing of the candidate
    assert during == {**before, "head": started["head"]}, err
    assert project.git("diff", "--name-only", before["head"], started["head"]).split() == [
        "docs/loop/BOARD.md",
        "docs/loop/handover.md",
        "docs/loop/state/baseline.md",
    ]
    # kept: one commit holds the change, the tree and index are the branch's
    assert project.read("src/calc.py") == CALC_MUL and project.read("tests/test_mul.py")
    assert project.git("status", "--porcelain") == "?? mine.txt\n"
    assert [s for s in project.subjects() if s.startswith("G1:")] == ["G1: Multiply"]
    assert project.git("symbolic-ref", "HEAD") == before["branch"]
    row = next(r for r in parse_board(project.read("docs/loop/BOARD.md")).rows if r.goal == "G1")
    assert row.state is GoalState.DONE


def test_a_refused_candidate_never_reaches_the_clone(tmp_path: Path) -> None:
    project, before = setup(tmp_path, LINT_GATE)
    lint = CALC_MUL.replace("def add", "import os\n\n\ndef add")  # an unused import: ruff fails
    maker = project.script(
        "maker", f"put('src/calc.py', {lint!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
    )
    during, started, err = judged_run(project, maker)
    assert during == {**before, "head": started["head"]}, err
    after = clone_state(project)
    # refused: relay's records moved on (the board, the failure), the project did not
    assert {**after, "head": ""} == {**before, "head": ""}
    assert project.read("src/calc.py") == CALC
    changed = project.git("diff", "--name-only", before["head"], "HEAD").split()
    assert changed and all(p.startswith("docs/loop/") for p in changed), changed
    staged = subprocess.run(
        ["git", "diff", "--cached", "--name-only"], cwd=project.root, capture_output=True, text=True
    )
    assert staged.stdout == ""
    row = next(r for r in parse_board(project.read("docs/loop/BOARD.md")).rows if r.goal == "G1")
    assert row.state is not GoalState.DONE and row.verdict == "lint/format", row


def test_the_clones_state_tells_every_change_but_the_persons_own_untracked_files(
    tmp_path: Path,
) -> None:
    """What relay compares before and after a maker runs, and after a candidate is judged:
    one `git status`, with the content of what is changed."""
    from relay.edges.worktree import WorkTree

    root = tmp_path / "clone"
    root.mkdir()
    (root / "a b.py").write_text("x = 1\n")
    for args in (("init", "-q", "-b", "main"), ("add", "-A")):
        subprocess.run(["git", *args], cwd=root, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"],
        cwd=root,
        check=True,
    )
    (root / "notes.txt").write_text("mine\n")
    tree = WorkTree.open(root)
    clean = tree.state(skip=["notes.txt"])
    assert tree.state(skip=["notes.txt"]) == clean
    (root / "notes.txt").write_text("still mine\n")  # the person's own: not the goal's
    assert tree.state(skip=["notes.txt"]) == clean
    (root / "a b.py").write_text("x = 2\n")
    edited = tree.state(skip=["notes.txt"])
    assert edited != clean
    (root / "a b.py").write_text("x = 3\n")  # a changed file changed again
    assert tree.state(skip=["notes.txt"]) not in (clean, edited)
    (root / "a b.py").write_text("x = 1\n")
    (root / "new.py").write_text("")
    assert tree.state(skip=["notes.txt"]) != clean
    (root / "new.py").unlink()
    assert tree.state(skip=["notes.txt"]) == clean
