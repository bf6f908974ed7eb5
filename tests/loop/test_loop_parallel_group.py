"""`relay loop run --group a` on a real project: it works the group's goals alone, and
after they pass the checker panel reviews the group's whole change once more; a block
takes the group's change back in one commit and reopens its goals, the board saying why
and the finding in each checker's thread on each goal, which its next brief carries."""

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


MAKER = """
import re
goal = re.search(r"^# (G[0-9]+):", BRIEF, re.M).group(1)
count(goal)
name = {"G1": "mul", "G2": "beta", "G3": "delta"}[goal]
put(f"src/{name}.py", f"def {name}():\\n    return {name!r}\\n")
put(f"tests/test_{name}.py", f"from {name} import {name}\\n\\n\\ndef test_{name}():\\n"
    f"    assert {name}() == {name!r}\\n")
"""
# approves each goal's change; blocks the group's whole change once
CHECKER = """
first = BRIEF.splitlines()[0]
n = count("group" if "group a:" in first else "goal")
print(cite())
if "group a:" in first:
    print('{"verdict": "block", "findings": ["the group duplicates a helper"]}')
else:
    print('{"verdict": "approve", "findings": []}')
"""


@pytest.mark.timeout(300)
def test_group_runs_its_goals_and_a_blocked_group_review_takes_them_back(
    tmp_path: Path,
) -> None:
    project = goals_project(
        tmp_path,
        [
            ("Mul", _accept("mul"), (), "a"),
            ("Beta", _accept("beta"), (), "a"),
            ("Delta", _accept("delta"), (), None),
        ],
    )
    start = project.git("rev-parse", "HEAD").strip()
    maker, checker = project.script("maker", MAKER), project.script("checker", CHECKER)
    ran = project.loop(
        "run", "--maker", maker, "--checker", checker, "--parallel", "2", "--group", "a"
    )
    assert ran.status == 1, ran  # an escalation: a person decides
    assert "the checker panel blocks group a's whole change" in ran.data["stopped"], ran
    assert project.calls("G1") == 1 and project.calls("G2") == 1
    assert project.calls("G3") == 0  # not in the group
    # each goal's change reviewed (the second again on the moved main line), the group once
    assert project.calls("group") == 1 and project.calls("goal") in (2, 3)
    reviews = project.calls("goal")
    # the group's goals are open again, the board says why, its change is taken back
    rows = board_rows(project)
    assert rows["G1"][0] is GoalState.OPEN and "taken back" in rows["G1"][1]
    assert rows["G2"][0] is GoalState.OPEN and "taken back" in rows["G2"][1]
    assert rows["G3"][0] is GoalState.OPEN
    assert not (project.root / "src/mul.py").exists()
    assert not (project.root / "src/beta.py").exists()
    subjects = project.subjects()
    back = subjects.index("loop: group a taken back (the checker panel blocks its whole change)")
    assert back > max(subjects.index("G1: Mul"), subjects.index("G2: Beta"))
    code = project.git("diff", "--name-only", start, "HEAD", "--", "src", "tests").split()
    assert code == []
    assert ran.data["kept"] == []
    assert project.clean()
    # the finding is in the checker's thread on each goal, and its next brief carries it
    for goal in ("G1", "G2"):
        thread = project.read(f"docs/loop/state/threads/checker-1/{goal}.md")
        assert "the group duplicates a helper" in thread
    again = project.loop("run", "--maker", maker, "--checker", checker, "--goal", "G1")
    assert again.status == 0, again
    assert "the group duplicates a helper" in project.seen("goal", reviews + 1)
