"""LOOP.md's roles are read again before every iteration of a run that takes its roles
from the roster: a person who names another maker between iterations has it run from the
next one; a role that cannot run is said, and the run keeps the roles it had; a run whose
roles are fixed (given on the command line) says so on the board."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from loop_project import CALC_MUL, TEST_MUL, Project, make_project
from test_loop_ratchet import GOOD
from test_loop_roster_limits import with_roles

from relay.commands.loop import _roster_roles
from relay.ratchet.engine import Ratchet
from relay.ratchet.judge import Options


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def name_maker(project: Project, old: str, new: str, message: str) -> None:
    """A person names another maker in LOOP.md's roster, between iterations."""
    text = project.read("docs/loop/LOOP.md")
    assert f"`{old}`" in text
    project.write("docs/loop/LOOP.md", text.replace(f"`{old}`", f"`{new}`"))
    project.git("commit", "-q", "-m", message, "docs/loop/LOOP.md")


def test_a_maker_named_in_loop_md_mid_run_runs_from_the_next_iteration(tmp_path: Path) -> None:
    project = make_project(tmp_path, retries=3)
    # the first maker leaves the test out every time: its attempts fail
    weak = project.script("weak", f"count('weak')\nput('src/calc.py', {CALC_MUL!r})\n")
    good = project.script("good", "count('good')\n" + GOOD)
    missing = str(tmp_path / "no-such-maker")
    with_roles(project, f"- maker: command `{weak}`\n")
    heard: list[str] = []

    def say(line: str) -> None:
        heard.append(line)
        if "attempt 1 failed" in line:  # a maker that cannot run: the run keeps its own
            name_maker(project, weak, missing, "a maker that is not there")
        if "attempt 2 failed" in line:
            name_maker(project, missing, good, "another maker")

    ratchet = Ratchet(project.root, Options(maker=weak), say=say)
    args = argparse.Namespace(checker=[], verifier=None, red_team=[])
    ratchet.roster_roles = _roster_roles(project.root, args)
    report = ratchet.run()
    assert [k.goal for k in report.kept] == ["G1"], (report, heard)
    assert project.calls("weak") == 2 and project.calls("good") == 1, heard
    assert any(
        line.startswith("LOOP.md's roles changed but cannot be taken (")
        and "no-such-maker" in line
        and line.endswith("the run keeps the roles it had")
        for line in heard
    ), heard
    assert "LOOP.md's roles changed; this iteration runs under them" in heard
    board = project.read("docs/loop/BOARD.md")
    assert f"- Roles: maker `{good}` (LOOP.md's ## Roles, read again before every iteration)" in (
        board
    )
    assert project.read("tests/test_mul.py") == TEST_MUL and project.clean()


def test_a_run_from_loop_md_alone_reads_its_roles_again(tmp_path: Path) -> None:
    """`relay loop run` with no --maker takes the roster's roles, re-read; with --maker the
    board says they are fixed for the run."""
    project = make_project(tmp_path)
    good = project.script("good", "count('good')\n" + GOOD)
    with_roles(project, f"- maker: command `{good}`\n")
    ran = project.loop("run")
    assert ran.status == 0 and [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    assert "read again before every iteration)" in project.read("docs/loop/BOARD.md")

    (tmp_path / "other").mkdir()
    other = make_project(tmp_path / "other")
    maker = other.script("good", "count('good')\n" + GOOD)
    ran = other.loop("run", "--maker", maker)
    assert ran.status == 0, ran
    assert f"- Roles: maker `{maker}` (fixed for the run: given on the command line" in (
        other.read("docs/loop/BOARD.md")
    )
