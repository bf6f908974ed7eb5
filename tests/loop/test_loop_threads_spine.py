"""The roles' threads come from the spine: a fresh clone shows the threads its history
committed (and the next brief would carry them); a goal id used again for another goal,
after the history was reset, inherits none of the old goal's thread, and the spine it
commits holds no thread of another history."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from loop_project import CALC_MUL, TEST_GATE, TEST_MUL, make_project

from relay.ratchet.threads import ThreadStore

GOOD = f"""
put("src/calc.py", {CALC_MUL!r})
put("tests/test_mul.py", {TEST_MUL!r})
"""
NEG = """
import pathlib
count("neg")
calc = pathlib.Path("src/calc.py")
calc.write_text(calc.read_text() + "\\n\\ndef neg(a):\\n    return -a\\n")
put("tests/test_neg.py",
    "from calc import neg\\n\\n\\ndef test_neg():\\n    assert neg(1) == -1\\n")
"""
FLAG_ONCE = (
    'n = count("checker")\nprint(cite())\n'
    'print(\'{"verdict": "block", "findings": ["mul has no docstring"]}\' if n == 1 else'
    ' \'{"verdict": "approve", "findings": []}\')\n'
)


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


@pytest.mark.timeout(300)
def test_threads_are_read_back_from_the_spine_and_a_reused_id_inherits_none(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path, gates=(TEST_GATE,), retries=1, accept=None)
    start = project.git("rev-parse", "HEAD").strip()
    accept = "grep -q 'def mul' src/calc.py"
    assert project.loop("goal", "add", "Multiply", "--accept", accept).status == 0
    checker = project.script("checker", FLAG_ONCE)
    ran = project.loop("run", "--maker", project.script("maker", GOOD), "--checker", checker)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    assert "mul has no docstring" in project.read("docs/loop/state/threads/checker-1/G1.md")

    # a fresh clone: its threads are the ones its history committed
    clone = tmp_path / "fresh"
    subprocess.run(["git", "clone", "-q", str(project.root), str(clone)], check=True)
    assert ThreadStore.of(clone).threads() == []
    from loop_project import Project

    fresh = Project(clone, project.scripts)
    status = fresh.loop("status")
    threads = {(t["role"], t["goal"]): t for t in status.data["threads"]}
    assert threads[("checker-1", "G1")]["state"] == "idle", status
    assert threads[("checker-1", "G1")]["last"].startswith("answered:")
    flagged = ThreadStore.of(clone).read("checker-1", "G1").flagged()
    assert [e.text for e in flagged] == ["mul has no docstring"]

    # the history reset to before G1, and G1 used again for another goal
    project.git("reset", "-q", "--hard", start)
    assert project.loop("goal", "add", "Negate", "--accept", "grep -q 'def neg' src/calc.py")
    approve = project.script(
        "approver", 'count("approver")\nprint(cite())\nprint(\'{"verdict": "approve"}\')\n'
    )
    again = project.loop("run", "--maker", project.script("neg", NEG), "--checker", approve)
    assert [k["goal"] for k in again.data["kept"]] == ["G1"], again
    assert "Your thread on G1 so far" not in project.seen("approver", 1)
    assert "Multiply" not in project.seen("neg", 1).split("## Your thread", 1)[-1]
    thread = project.read("docs/loop/state/threads/checker-1/G1.md")
    assert "mul has no docstring" not in thread
    maker = project.read("docs/loop/state/threads/maker/G1.md")
    assert "Multiply" not in maker and "Negate" in maker
    assert project.clean()


@pytest.mark.timeout(300)
def test_a_thread_of_a_history_reset_away_is_dropped_for_the_same_goal(tmp_path: Path) -> None:
    project = make_project(tmp_path, gates=(TEST_GATE,), retries=1, accept=None)
    accept = "grep -q 'def mul' src/calc.py"
    assert project.loop("goal", "add", "Multiply", "--accept", accept).status == 0
    added = project.git("rev-parse", "HEAD").strip()
    checker = project.script("checker", FLAG_ONCE)
    ran = project.loop("run", "--maker", project.script("maker", GOOD), "--checker", checker)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    assert "mul has no docstring" in project.read("docs/loop/state/threads/checker-1/G1.md")

    # the same goal, its history reset to where it was added: that review never happened
    project.git("reset", "-q", "--hard", added)
    status = project.loop("status")
    assert ("checker-1", "G1") not in {(t["role"], t["goal"]) for t in status.data["threads"]}
    approve = project.script(
        "approver", 'count("approver")\nprint(cite())\nprint(\'{"verdict": "approve"}\')\n'
    )
    again = project.loop("run", "--maker", project.script("maker2", GOOD), "--checker", approve)
    assert [k["goal"] for k in again.data["kept"]] == ["G1"], again
    assert "mul has no docstring" not in project.seen("approver", 1)
    assert "mul has no docstring" not in project.read("docs/loop/state/threads/checker-1/G1.md")
    assert project.clean()
