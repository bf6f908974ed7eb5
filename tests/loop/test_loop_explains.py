"""The spine explains itself, on real repositories with scripted makers: the maker's
account of what changed and why reaches the handover and the commit, an unexplained
change is a failure of its own, a failed attempt leaves its diagnosis and next hypothesis
in handover.md, a kept goal says on which attempt it was kept, and what was learned names
its teacher. Step 0 proposes the security-critical areas for a person to confirm, and a
goal whose declared paths fall in one is security-critical before its maker runs."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from loop_project import CALC_MUL, TEST_MUL, Project, make_project

from relay.loop.goals import parse_goals
from relay.loop.records import handover_entries, parse_failures, parse_rules
from relay.loop.risks import area_paths


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def rules(project: Project) -> list[tuple[str, str, int, str]]:
    _, entries = parse_rules(project.read("docs/loop/state/learned-rules.md"))
    return [(r.category, r.goal, r.attempt, r.title) for r in entries]


def entries(project: Project) -> list[str]:
    return handover_entries(project.read("docs/loop/handover.md"))


def test_an_unexplained_change_fails_and_the_healed_one_carries_its_account(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path)
    maker = project.script(
        "maker",
        f"""
        n = count("maker")
        put("src/calc.py", {CALC_MUL!r})
        put("tests/test_mul.py", {TEST_MUL!r})
        if n == 1:
            UNEXPLAINED = True
        else:
            explain("Added mul(a, b) beside add, with tests/test_mul.py to prove it.\\n"
                    "The goal asks for multiplication; nothing else changed.\\n")
        """,
    )
    checker = project.script(
        "checker",
        'count("checker")\nprint(cite())\nprint(\'{"verdict": "approve", "findings": []}\')\n',
    )
    ran = project.loop("run", "--maker", maker, "--checker", checker)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    assert project.calls("checker") == 1  # the unexplained change never reached the panel
    review = project.seen("checker", 1)
    assert "## What the maker says it changed and why" in review
    assert "Added mul(a, b) beside add" in review
    brief = project.seen("maker", 1)
    assert "## Say what changed and why" in brief
    where = brief.split("write two or three lines to `", 1)[1].split("`", 1)[0]
    # in the maker's own tree (a CLI confined to its workspace can write it), never taken
    assert where.endswith("/tree/.relay-explain.md")
    assert not Path(where).is_relative_to(project.root)
    assert ".relay-explain.md" not in project.git("log", "--name-only", "--format=")
    _, [failed] = parse_failures(project.read("docs/loop/state/failures.md"))
    assert (failed.goal, failed.attempt, failed.category) == ("G1", 1, "unexplained")
    assert failed.what == "the maker left no account of what it changed and why"
    assert "- Category: unexplained" in project.seen("maker", 2)
    # the self-heal taught the rule, credited to the attempt that failed
    assert rules(project) == [("unexplained", "G1", 1, "Explain every change")]
    learned = project.read("docs/loop/state/learned-rules.md")
    assert "- Source: iteration 2, goal G1, attempt 1\n" in learned
    assert "attempt 2 healed it with the diagnosis" in learned
    *_, fail, kept, report = entries(project)
    assert fail.startswith("## G1 attempt 1 failed (unexplained) (")
    assert "Next hypothesis: attempt 2 heals this on the same tree" in fail
    assert kept.startswith("## G1 Multiply (")
    assert "Kept on attempt 2 in iteration 2; `" in kept
    assert "- Gates: 3/3 gates pass (was 2/3)" in kept and "- Line coverage: not measured" in kept
    assert "Added mul(a, b) beside add" in kept and "nothing else changed" in kept
    assert report.startswith("## Loop run report")
    body = project.git("log", "-1", "--format=%B", "HEAD~1")
    assert body.startswith("G1: Multiply\n\nAdded mul(a, b) beside add")
    assert "Kept by relay loop on attempt 2: 3/3 gates pass" in body
    assert project.clean()


def test_a_goal_kept_on_its_fourth_attempt_says_so_and_its_failures_reach_handover(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path, retries=1)
    maker = project.script(
        "maker",
        f"""
        n = count("maker")
        body = {CALC_MUL!r} if n == 4 else "import os\\n" + {CALC_MUL!r}
        put("src/calc.py", body)
        put("tests/test_mul.py", {TEST_MUL!r})
        explain(f"Attempt {{n}}: added mul() and its test.")
        """,
    )
    first = project.loop("run", "--maker", maker)
    assert first.data["kept"] == [] and first.data["reverted"], first
    # the pass's two lint failures taught one rule, credited to G1's second attempt
    assert rules(project) == [("lint/format", "G1", 2, "Lint and format before finishing")]
    log = entries(project)
    one = next(e for e in log if e.startswith("## G1 attempt 1 failed (lint/format)"))
    assert "F401" in one and "What the maker said it changed and why" in one
    assert "Attempt 1: added mul() and its test." in one
    assert "Next hypothesis: attempt 2 heals this on the same tree" in one
    two = next(e for e in log if e.startswith("## G1 attempt 2 failed (lint/format)"))
    assert "Next hypothesis: the goal's changes are reverted and the goal is set aside" in two
    second = project.loop("run", "--maker", maker)
    assert [k["goal"] for k in second.data["kept"]] == ["G1"], second
    kept = next(e for e in entries(project) if e.startswith("## G1 Multiply ("))
    assert "Kept on attempt 4 (2 in this pass) in iteration 4;" in kept
    assert "Attempt 4: added mul() and its test." in kept
    # lint already had its rule: the heal taught nothing new
    assert rules(project) == [("lint/format", "G1", 2, "Lint and format before finishing")]
    assert project.clean()


AUTH = "def login(user, password):\n    return user == 'admin' and password == 's3cret'\n"


def test_init_proposes_the_areas_a_person_confirms_and_a_goal_in_one_is_critical_before_the_maker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path, accept=None)
    project.write("src/app/auth/login.py", AUTH)
    project.write("migrations/0001_users.sql", "create table users (name text);\n")
    project.write(
        "AGENTS.md", "# Agents\n\nThe login code in `src/app/auth/` is security-critical.\n"
    )
    project.git("add", "-A")
    project.git("commit", "-qm", "Fix an auth bypass in login")
    project.git("rm", "-q", "docs/loop/LOOP.md")
    project.git("commit", "-qm", "start LOOP.md again")
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\nn\n"))  # authentication yes, migrations no
    ran = project.loop("init")
    assert ran.status == 0, ran
    [area] = ran.data["security_areas"]
    assert (area["name"], area["paths"]) == ("authentication", ["src/app/auth/"])
    assert "AGENTS.md line 3" in area["found"]
    assert any(f.startswith("commit ") and "Fix an auth bypass" in f for f in area["found"])
    loop = project.read("docs/loop/LOOP.md")
    assert area_paths(loop) == ("src/app/auth/",)
    assert "- authentication: `src/app/auth/` (found in the file names; AGENTS.md line 3;" in loop
    assert "migrations/" not in loop and project.clean()
    # a goal declaring a path in the area is security-critical when it is added
    added = project.loop(
        "goal", "add", "Hash passwords", "--accept", "false", "--path", "src/app/auth/login.py"
    )
    assert added.data["security_critical"] == [
        "`src/app/auth/login.py` is in a security-critical area (`src/app/auth/`)"
    ]
    [goal] = parse_goals(project.read("docs/loop/GOALS.md")).goals
    assert goal.security and goal.paths == ("src/app/auth/login.py",)
    assert "- Paths: `src/app/auth/login.py`" in project.read("docs/loop/GOALS.md")
    maker = project.script("maker", "count('maker')\n")
    ran = project.loop("run", "--maker", maker)
    assert ran.status == 1 and ran.data["stopped"].startswith("escalation: G1 is security-critical")
    assert project.calls("maker") == 0 and project.clean()
    # --yes takes every area found; one already listed is not asked again
    project.git("rm", "-q", "docs/loop/LOOP.md")
    project.git("commit", "-qm", "once more")
    again = project.loop("init", "--yes")
    assert [a["name"] for a in again.data["security_areas"]] == ["authentication", "migrations"]
    assert project.loop("init").data["security_areas"] == []  # nothing new: no question


def test_a_goal_whose_path_an_area_later_covers_is_critical_before_its_maker_runs(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path, accept=None)
    added = project.loop("goal", "add", "Tidy", "--accept", "false", "--path", "./src/calc.py")
    assert added.data == {"goal": "G1"}  # no area yet
    loop = project.read("docs/loop/LOOP.md").replace(
        "## Stopping conditions",
        "- money: `src/calc.py` (found in a review)\n\n## Stopping conditions",
    )
    project.write("docs/loop/LOOP.md", loop)
    project.git("commit", "-qam", "calc handles money")
    maker = project.script("maker", "count('maker')\n")
    ran = project.loop("run", "--maker", maker)
    assert ran.data["stopped"] == (
        "escalation: G1 is security-critical (`src/calc.py` is in a security-critical area"
        " (`src/calc.py`)) and there is no checker panel (--checker)"
    )
    assert project.calls("maker") == 0 and project.clean()
    bad = project.loop("goal", "add", "Out", "--accept", "true", "--path", "../elsewhere")
    assert bad.status != 0 and "is not a path inside the repository" in bad.errors[0]["message"]


def test_an_agent_confined_to_its_workspace_explains_itself_in_its_final_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A built-in agent that writes no explanation file (a CLI sandboxed to its workspace,
    or one that only answers) is explained by its final message, read from its structured
    output; the kept entry and commit carry it."""
    from test_loop_agents import claude_stream, on_path, stand_in

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    monkeypatch.setenv("PATH", f"{on_path(bin_dir)}:{__import__('os').environ['PATH']}")
    stand_in(
        bin_dir,
        "claude",
        f"""
        put("src/calc.py", {CALC_MUL!r})
        put("tests/test_mul.py", {TEST_MUL!r})
        print({claude_stream("Added mul(a, b) beside add, with its own test.", tools=3)!r})
        """,
    )
    project = make_project(tmp_path)
    ran = project.loop("run", "--maker", "claude")
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    message = project.git("log", "-1", "--format=%B", "--grep", "^G1: ")
    assert "Added mul(a, b) beside add, with its own test." in message
    [kept] = [e for e in entries(project) if "Kept on attempt 1" in e]
    assert "Added mul(a, b) beside add, with its own test." in kept
