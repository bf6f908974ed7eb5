"""Threads that remember, on a real project: a reviewer's thread carries the finding it
flagged into its next brief on the same goal (and is kept under the spine's state), and
`relay loop interrupt maker --goal G1` stops that maker mid-goal while the run goes on (a
person's stop, not a failed attempt)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from loop_project import CALC_MUL, PY, TEST_GATE, TEST_MUL, make_project

from relay.loop.threads import parse_thread

GOOD = f"""
put("src/calc.py", {CALC_MUL!r})
put("tests/test_mul.py", {TEST_MUL!r})
"""


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def test_a_reviewers_thread_carries_its_earlier_finding_into_its_next_brief(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path, gates=(TEST_GATE,), retries=1)
    checker = project.script(
        "checker",
        'n = count("checker")\nprint(cite())\n'
        'print(\'{"verdict": "block", "findings": ["mul has no docstring"]}\' if n == 1 else'
        ' \'{"verdict": "approve", "findings": []}\')\n',
    )
    ran = project.loop("run", "--maker", project.script("maker", GOOD), "--checker", checker)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    assert project.calls("checker") == 2
    first, second = project.seen("checker", 1), project.seen("checker", 2)
    assert "Your thread on G1 so far" not in first
    assert "Your thread on G1 so far" in second
    earlier = second.split("Your thread on G1 so far", 1)[1]
    assert "Flagged at step" in earlier and "mul has no docstring" in earlier
    # the maker's thread says what it was asked and answered; both are in the kept commit
    thread = parse_thread(project.read("docs/loop/state/threads/checker-1/G1.md"))
    assert [e.kind for e in thread.entries] == [
        "asked", "answered", "flagged", "asked", "answered"
    ]  # fmt: skip
    assert thread.flagged()[0].text == "mul has no docstring"
    assert "docs/loop/state/threads/maker/G1.md" in project.git("ls-files")
    assert project.clean()
    status = project.loop("status")
    threads = {(t["role"], t["goal"]): t for t in status.data["threads"]}
    assert threads[("checker-1", "G1")]["state"] == "idle"
    assert threads[("maker", "G1")]["state"] == "idle"
    assert threads[("maker", "G1")]["last"].startswith("answered: done")


TEST_NEG = "from neg import neg\n\n\ndef test_neg():\n    assert neg(1) == -1\n"
SLOW_FIRST = f"""
import re, time
goal = re.search(r"^# (G[0-9]+):", BRIEF, re.M).group(1)
n = count(goal)
if goal == "G1" and n == 1:
    put(SCRIPTS / "g1-started", "")
    time.sleep(120)  # stopped by `relay loop interrupt maker --goal G1`
if goal == "G1":
    put("src/calc.py", {CALC_MUL!r})
    put("tests/test_mul.py", {TEST_MUL!r})
else:
    put("src/neg.py", "def neg(a):\\n    return -a\\n")
    put("tests/test_neg.py", {TEST_NEG!r})
"""


def test_interrupt_stops_one_role_mid_goal_and_the_run_goes_on(tmp_path: Path) -> None:
    project = make_project(tmp_path, gates=(TEST_GATE,), retries=1)
    accept = f"{PY} -m pytest -q -p no:cacheprovider tests/test_neg.py"
    assert project.loop("goal", "add", "Negate", "--accept", accept).status == 0
    assert project.loop("interrupt", "maker").status != 0  # nothing runs yet: said so
    run = project.spawn("run", "--maker", project.script("maker", SLOW_FIRST))
    try:
        deadline = time.monotonic() + 60
        while not (project.scripts / "g1-started").exists():
            assert run.poll() is None and time.monotonic() < deadline, run.communicate()
            time.sleep(0.1)
        status = project.loop("status")
        running = [t for t in status.data["threads"] if t["state"] == "running"]
        assert [(t["role"], t["goal"]) for t in running] == [("maker", "G1")]
        stopped = project.loop("interrupt", "maker", "--goal", "G1")
        assert stopped.status == 0, stopped
        assert [s["goal"] for s in stopped.data["stopped"]] == ["G1"]
        _, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 0, err
    # a person's stop is not a failed attempt: the goal is open again, no strike counted
    assert "G1: attempt 1 failed" not in err, err
    assert "G1: a person stopped it (relay loop interrupt); open again" in err, err
    assert "loop: G1 interrupted" in project.subjects()
    # the goal was taken up again from the spine: G1 kept on its next attempt, G2 too
    assert project.calls("G1") == 2 and project.calls("G2") == 1
    subjects = project.subjects()
    assert "G1: Multiply" in subjects and "G2: Negate" in subjects
    assert project.clean()
