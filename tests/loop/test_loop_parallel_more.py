"""Parallel runs on a real project, beyond the five-goal run: a goal already met at the
baseline counts as done, so its dependents start; a candidate that applies on the moved
main line but fails its gates there is made again, never landed; the contract's
"Concurrent makers" fans out without `--parallel`."""

from __future__ import annotations

from pathlib import Path

import pytest
from loop_project import PY, board_rows, goals_project

from relay.loop.goals import GoalState


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def _accept(name: str) -> str:
    return f"{PY} -m pytest -q -p no:cacheprovider tests/test_{name}.py"


ALREADY_MAKER = """
import re
goal = re.search(r"^# (G[0-9]+):", BRIEF, re.M).group(1)
count(goal)
put("tests/test_sub.py", "from calc import add\\n\\n\\ndef test_sub():\\n"
    "    assert add(3, -1) == 2\\n")
"""


@pytest.mark.timeout(300)
def test_a_goal_already_met_counts_as_done_so_its_dependents_start(tmp_path: Path) -> None:
    project = goals_project(
        tmp_path,
        [
            ("Has add", "grep -q add src/calc.py", (), None),
            ("Sub test", _accept("sub"), ("G1",), None),
        ],
    )
    maker = project.script("maker", ALREADY_MAKER)
    ran = project.loop("run", "--maker", maker, "--parallel", "2")
    assert ran.status == 0, ran
    rows = board_rows(project)
    assert rows["G1"][0] is GoalState.DONE and "already met" in rows["G1"][1], rows
    assert rows["G2"][0] is GoalState.DONE, rows
    assert project.calls("G1") == 0 and project.calls("G2") == 1
    assert project.clean()


# G1 adds a policy test (no test but test_calc calls add); G2 adds a test of add in a file
# of its own: G2's candidate applies on the main line that holds G1, and fails there
POLICY = (
    "import pathlib\n\n\ndef test_policy():\n"
    "    for p in pathlib.Path('tests').glob('test_*.py'):\n"
    "        if p.name not in ('test_calc.py', 'test_policy.py'):\n"
    "            assert 'add(' not in p.read_text(), p\n"
)
POLICY_MAKER = f"""
import re, time, pathlib
goal = re.search(r"^# (G[0-9]+):", BRIEF, re.M).group(1)
n = count(goal)
if goal == "G1":
    put("tests/test_policy.py", {POLICY!r})
else:
    time.sleep(1.5 if n == 1 else 0)  # G1 lands first
    body = "    assert 2 * 2 == 4\\n" if pathlib.Path("tests/test_policy.py").exists() else (
        "    assert add(2, 2) == 4\\n")
    put("tests/test_twice.py", "from calc import add\\n\\n\\ndef test_twice():\\n" + body)
"""


@pytest.mark.timeout(300)
def test_a_candidate_that_applies_but_fails_on_the_new_baseline_is_made_again(
    tmp_path: Path,
) -> None:
    project = goals_project(
        tmp_path,
        [
            ("Policy", _accept("policy"), (), None),
            ("Twice", _accept("twice"), (), None),
        ],
    )
    # "Concurrent makers: 2" in the contract fans out without --parallel
    contract = project.read("docs/loop/CONTRACT.md")
    assert "- Concurrent makers: 1\n" in contract
    contract = contract.replace("- Concurrent makers: 1\n", "- Concurrent makers: 2\n")
    project.write("docs/loop/CONTRACT.md", contract)
    project.git("commit", "-q", "-am", "two makers at once")
    maker = project.script("maker", POLICY_MAKER)
    ran = project.loop("run", "--maker", maker)
    assert ran.status == 0, ran
    assert sorted(k["goal"] for k in ran.data["kept"]) == ["G1", "G2"], ran
    assert project.calls("G2") == 2  # its first candidate failed on the new baseline
    assert "assert 2 * 2 == 4" in project.read("tests/test_twice.py")
    # two makers ran at once: G2's first brief was written before G1 was kept
    assert "G1: Policy" not in project.seen("G2", 1).split("\n## ")[0]
    subjects = project.subjects()
    assert subjects.index("G1: Policy") < subjects.index("G2: Twice")
    assert project.clean()
