"""A small Python project in a real temporary git repository, with pytest, ruff and (when
asked) coverage as its gates, for `relay loop` to work on; and scripted makers and
checkers, small Python scripts written by the test.

The gates run this interpreter's own pytest, ruff and coverage (``sys.executable -m``), so
the tests need nothing installed beyond the test extra. Commands run in-process through
``relay.cli.main`` (fast) or as a process (:meth:`Project.spawn`, for the kill test).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from relay.ratchet.sandbox import BOX_ID

if TYPE_CHECKING:
    from worlds import World

PY = shlex.quote(sys.executable)
TEST_GATE = f"{PY} -m pytest -q -p no:cacheprovider"
LINT_GATE = f"{PY} -m ruff check --no-cache ."
COVERAGE_GATES = (
    f"test: {PY} -m coverage run -m pytest -q -p no:cacheprovider",
    f"coverage: {PY} -m coverage json -q -o coverage.json",
)
# The goal's acceptance: tests/test_mul.py's test, run by this interpreter without pytest
# (its start-up, with relay's guard, is a third of a CPU-second, and the acceptance runs in
# every attempt and at every baseline); the gates above are pytest's, and the tests of the
# acceptance's pytest (tests/loop/test_loop_pytest_guard.py, test_loop_red_baseline.py)
# name a pytest acceptance of their own.
ACCEPT_MUL = (
    f"{PY} -I -S -c \"import runpy, sys; sys.path[:0] = ['src'];"
    " runpy.run_path('tests/test_mul.py')['test_mul']()\""
)

CALC = "def add(a, b):\n    return a + b\n"
CALC_MUL = CALC + "\n\ndef mul(a, b):\n    return a * b\n"
TEST_MUL = "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"
FILES = {
    "src/calc.py": CALC,
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    "pyproject.toml": textwrap.dedent(
        """\
        [project]
        name = "calc"
        version = "0.1.0"

        [tool.pytest.ini_options]
        pythonpath = ["src"]

        [tool.ruff]
        line-length = 100

        [tool.coverage.run]
        source = ["src"]
        """
    ),
    ".gitignore": ".coverage\ncoverage.json\n__pycache__/\n.pytest_cache/\nbuild/\n",
}


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def for_boxes(path: Path) -> Path:
    """``path`` (in a shared folder) given to the boxes' user, as a person gives a folder
    they share: a relay run as root runs its boxes as BOX_ID, who writes nothing of
    root's."""
    if os.getuid() == 0:
        os.chown(path, BOX_ID, -1)
    return path


def share_with_boxes(folder: Path) -> None:
    """Name ``folder`` in RELAY_SANDBOX_SHARE, writable by the boxes' user as a person is told
    to make it (a relay run as root runs its boxes as BOX_ID; the loop tests' conftest puts
    the variable back after each test)."""
    for_boxes(folder)
    for name in ("RELAY_SANDBOX_SHARE", "RELAY_SANDBOX_SHARE_JUDGES"):  # judges' too: probes
        shared = os.environ.get(name, "")  # report through it
        os.environ[name] = os.pathsep.join(filter(None, [shared, str(folder)]))


def maker_pair(tmp_path: Path, files: dict[str, str]) -> tuple[Path, Path]:
    """A person's clone of one commit holding ``files``, and a maker's copy of it three
    folders below ``tmp_path`` (``box/tree``, as a box folder holds it)."""
    clone = tmp_path / "clone"
    for name, text in files.items():
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        (clone / name).write_text(text)
    git("init", "-q", "-b", "main", cwd=clone)
    git("add", "-A", cwd=clone)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base", cwd=clone)
    maker = tmp_path / "box" / "tree"
    maker.parent.mkdir()
    git("clone", "-q", str(clone), str(maker), cwd=tmp_path)
    return clone, maker


@dataclass
class Ran:
    """One relay invocation: exit status, the --json envelope's data and errors, stderr."""

    status: int
    data: dict[str, Any]
    errors: list[dict[str, Any]]
    stderr: str


@dataclass
class Project:
    root: Path
    scripts: Path

    def git(self, *args: str) -> str:
        return git(*args, cwd=self.root)

    def read(self, name: str) -> str:
        return (self.root / name).read_text(encoding="utf-8")

    def write(self, name: str, text: str) -> None:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def subjects(self) -> list[str]:
        """Commit subjects, oldest first."""
        return self.git("log", "--reverse", "--format=%s").splitlines()

    def clean(self) -> bool:
        return self.git("status", "--porcelain") == ""

    def loop(self, *args: str) -> Ran:
        """`relay loop ARGS --json` in this process."""
        from relay.cli import main

        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(["loop", *args, "--repo-dir", str(self.root), "--json"])
        doc = json.loads(out.getvalue())
        assert doc["exit_code"] == status, doc
        return Ran(status, doc["data"], doc["errors"], err.getvalue())

    def spawn(self, *args: str) -> subprocess.Popen[str]:
        """`relay loop ARGS` as a process of its own."""
        return subprocess.Popen(
            [sys.executable, "-m", "relay.cli", "loop", *args, "--repo-dir", str(self.root)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def script(self, name: str, body: str) -> str:
        """Write a maker or checker script outside the repository and every share (relay
        refuses a judge's program kept in one: every maker's box writes there); the
        command to run it. It counts its calls in the shared scripts folder."""
        programs = self.scripts.parent / "programs"
        programs.mkdir(exist_ok=True)
        path = programs / f"{name}.py"
        path.write_text(
            "import os, pathlib, sys\n"
            f"SCRIPTS = pathlib.Path({str(self.scripts)!r})\n"
            "BRIEF = pathlib.Path(sys.argv[-1]).read_text()\n"
            "def count(name):\n"
            "    f = SCRIPTS / (name + '.count')\n"
            "    n = int(f.read_text()) + 1 if f.exists() else 1\n"
            "    f.write_text(str(n))\n"
            "    (SCRIPTS / f'{name}.{n}.md').write_text(BRIEF)\n"
            "    return n\n"
            "def put(path, text):\n"
            "    p = pathlib.Path(path)\n"
            "    p.parent.mkdir(parents=True, exist_ok=True)\n"
            "    p.write_text(text)\n"
            "def cite():\n"  # a review cites the change: the first file and line of its diff
            "    import re\n"
            "    hunk = r'^\\+\\+\\+ b/(\\S+)\\n@@ -\\d+(?:,\\d+)? \\+(\\d+)'\n"
            "    m = re.search(hunk, BRIEF, re.M)\n"
            "    return f'read {m.group(1)}:{m.group(2)}' if m else ''\n"
            "WHY = os.environ.get('RELAY_LOOP_EXPLAIN')\n"
            "UNEXPLAINED = False  # a maker that leaves no account of its change\n"
            "def explain(text):\n"
            "    pathlib.Path(WHY).write_text(text)\n"
            "def _account():\n"
            "    if WHY and not UNEXPLAINED and not pathlib.Path(WHY).exists():\n"
            "        import subprocess\n"
            "        st = subprocess.run(['git', 'status', '--porcelain'], capture_output=True,"
            " text=True).stdout.split()\n"
            "        explain('Changed ' + ' '.join(st[1::2]) + ' to reach the goal.\\n')\n"
            "import atexit\n"
            "atexit.register(_account)\n" + textwrap.dedent(body),
            encoding="utf-8",
        )
        return f"{PY} {shlex.quote(str(path))}"

    def report_coverage(self, floor: int | None = None) -> None:
        """Name `coverage.json` as the contract's coverage report (and ``floor`` as its
        coverage floor, in percent); written, not committed."""
        contract = self.read("docs/loop/CONTRACT.md")
        if floor is not None:
            floored = f"- Coverage floor: {floor}%\n- Iterations:"
            contract = contract.replace("- Iterations:", floored)
        contract = contract.replace(
            "## Coverage report\n\n(none)", "## Coverage report\n\n`coverage.json`"
        )
        assert "`coverage.json`" in contract and (floor is None or f"{floor}%" in contract)
        self.write("docs/loop/CONTRACT.md", contract)

    def held(self, said: str, goal: str = "G1") -> None:
        """Assert ``goal`` is blocked, held for a person for what ``said`` names, and
        struck nothing (a hold is not a strike)."""
        row = next(r for r in self.read("docs/loop/BOARD.md").splitlines() if f"| {goal} " in r)
        assert "| blocked |" in row and "held for a person" in row, row
        assert said in row, row
        assert goal not in self.read("docs/loop/state/failures.md")

    def seen(self, name: str, n: int) -> str:
        """The brief (or review file) script ``name`` got on its ``n``-th call."""
        return (self.scripts / f"{name}.{n}.md").read_text(encoding="utf-8")

    def calls(self, name: str) -> int:
        path = self.scripts / f"{name}.count"
        return int(path.read_text()) if path.exists() else 0


def make_project(
    tmp_path: Path,
    *,
    gates: tuple[str, ...] = (TEST_GATE, LINT_GATE),
    retries: int = 1,
    coverage: bool = False,
    accept: str | None = ACCEPT_MUL,
    protect: tuple[str, ...] = (),
) -> Project:
    """The project, committed, with the loop set up and (unless ``accept`` is None) one
    goal: add ``mul`` with a test."""
    root, scripts = tmp_path / "calc", tmp_path / "scripts"
    root.mkdir()
    scripts.mkdir(exist_ok=True)
    # the scripts share their folder with the boxes (as a person shares one); the loop
    # tests' conftest puts the variable back after each test
    share_with_boxes(scripts)
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    git("init", "-q", "-b", "main", cwd=root)
    git("config", "user.name", "Loop Test", cwd=root)
    git("config", "user.email", "loop@example.invalid", cwd=root)
    git("add", "-A", cwd=root)
    git("commit", "-q", "-m", "the calc project", cwd=root)
    project = Project(root, scripts)
    args = ["init", "--retries", str(retries)]
    for gate in (*COVERAGE_GATES, LINT_GATE) if coverage else gates:
        args += ["--gate", gate]
    for path in protect:
        args += ["--protect", path]
    if coverage:
        args += ["--coverage-report", "coverage.json"]
    ran = project.loop(*args)
    assert ran.status == 0, ran
    contract = project.read("docs/loop/CONTRACT.md")
    project.write("docs/loop/CONTRACT.md", contract.replace("backoff: 30s", "backoff: 10ms"))
    project.git("commit", "-q", "-am", "a fast back-off for the tests")
    if accept is not None:
        assert project.loop("goal", "add", "Multiply", "--accept", accept).data == {"goal": "G1"}
    return project


def goals_project(
    tmp_path: Path, goals: list[tuple[str, str, tuple[str, ...], str | None]]
) -> Project:
    """The project with only the test gate, no retries, and these goals: (title, accept
    command, dependencies, group or None)."""
    from dataclasses import replace

    from relay.loop.goals import render_goals as _render_goals
    from relay.ratchet.files import Spine as _Spine

    project = make_project(tmp_path, gates=(TEST_GATE,), retries=0, accept=None)
    for title, accept, deps, _ in goals:
        args = ["goal", "add", title, "--accept", accept]
        for dep in deps:
            args += ["--depends", dep]
        assert project.loop(*args).status == 0
    doc = _Spine(project.root).goals()
    groups = [group for _, _, _, group in goals]
    grouped = tuple(replace(g, group=groups[i]) for i, g in enumerate(doc.goals))
    text = _render_goals(replace(doc, goals=grouped))  # `- Group:` as a person writes it
    project.write("docs/loop/GOALS.md", text)
    if any(groups):
        project.git("commit", "-q", "-am", "goals grouped")
    return project


def board_rows(project: Project) -> dict[str, tuple[Any, str]]:
    """Each goal's state and notes on the board."""
    from relay.ratchet.files import Spine as _Spine

    spine = _Spine(project.root)
    board = spine.board()
    return {g.id: (board.row_of(g).state, board.row_of(g).notes) for g in spine.goals().goals}


def node_maker_project(world: World, roster: str) -> Path:
    """The calc project in the controller's clone, ``relay loop init`` with the test gate,
    a contract that lets relay push and open jobs (a short back-off), ``roster`` (the
    ``## Roles`` lines naming nodes as makers) in LOOP.md, pushed: where a node makes."""
    from worlds import git as world_git

    c = world.controller
    root = c.clone
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    world_git("add", "-A", cwd=root)
    world_git("commit", "-qm", "the calc project", cwd=root)
    c.call("loop", "init", "--gate", TEST_GATE, "--retries", "0")
    contract = (root / "docs/loop/CONTRACT.md").read_text()
    contract = contract.replace("backoff: 30s", "backoff: 10ms").replace(
        "## Authorised irreversible actions\n\n(none)",
        "## Authorised irreversible actions\n\n- push\n- open a relay job",
    )
    (root / "docs/loop/CONTRACT.md").write_text(contract)
    loop = (root / "docs/loop/LOOP.md").read_text()
    (root / "docs/loop/LOOP.md").write_text(
        loop.replace("## Iteration\n", roster + "## Iteration\n", 1)
    )
    world_git("commit", "-qam", "the makers are nodes", cwd=root)
    world_git("push", "-q", "origin", "HEAD:main", cwd=root, auth=world.git_auth())
    return root
