"""`relay loop run --parallel 3` on a real project: five goals (two independent pairs and
one that needs two of them), scripted makers, each goal in its own worktree; one candidate
conflicts with one kept before it and is made again on the new baseline; the barrier goal
starts only after both its dependencies are kept; the main line holds one commit per
kept goal, in dependency order, each of which passes the gates."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from loop_project import PY, TEST_GATE, Project, make_project

# what each goal's maker writes; G1 and G3 both append to src/calc.py (the conflict)
WRITES = {
    "G1": {"tests/test_mul.py": "from calc import mul\n\n\ndef test_mul():\n"
        "    assert mul(2, 3) == 6\n"},
    "G3": {"tests/test_neg.py": "from calc import neg\n\n\ndef test_neg():\n"
        "    assert neg(2) == -2\n"},
    "G2": {
        "src/beta.py": "def beta():\n    return 'beta'\n",
        "tests/test_beta.py": "from beta import beta\n\n\ndef test_beta():\n"
        "    assert beta() == 'beta'\n",
    },
    "G4": {
        "src/delta.py": "def delta():\n    return 'delta'\n",
        "tests/test_delta.py": "from delta import delta\n\n\ndef test_delta():\n"
        "    assert delta() == 'delta'\n",
    },
    "G5": {
        "src/both.py": "from beta import beta\nfrom delta import delta\n\n\ndef both():\n"
        "    return beta() + delta()\n",
        "tests/test_both.py": "from both import both\n\n\ndef test_both():\n"
        "    assert both() == 'betadelta'\n",
    },
}  # fmt: skip
APPENDS = {"G1": "\n\ndef mul(a, b):\n    return a * b\n", "G3": "\n\ndef neg(a):\n    return -a\n"}
MAKER = f"""
import re, time, subprocess
WRITES = {WRITES!r}
APPENDS = {APPENDS!r}
goal = re.search(r"^# (G[0-9]+):", BRIEF, re.M).group(1)
n = count(goal)
head = subprocess.run(["git", "log", "--format=%s"], capture_output=True, text=True).stdout
with open(SCRIPTS / "starts.log", "a") as f:
    f.write(f"{{goal}} {{n}} {{time.monotonic():.3f}} " + "|".join(head.splitlines()) + "\\n")
time.sleep({{"G1": 0.2, "G3": 1.5}}.get(goal, 0))  # G1 is kept before G3's candidate lands
if goal == "G5" and not all(pathlib.Path(p).exists() for p in ("src/beta.py", "src/delta.py")):
    sys.exit("G5 started before both its dependencies were kept")
if goal in APPENDS:
    calc = pathlib.Path("src/calc.py")
    calc.write_text(calc.read_text() + APPENDS[goal])
for path, text in WRITES[goal].items():
    put(path, text)
"""


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def _accept(name: str) -> str:
    return f"{PY} -m pytest -q -p no:cacheprovider tests/test_{name}.py"


def five_goals(tmp_path: Path) -> Project:
    project = make_project(tmp_path, gates=(TEST_GATE,), retries=1, accept=None)
    for title, name, deps in (
        ("Multiply", "mul", ()),
        ("Beta", "beta", ()),
        ("Negate", "neg", ()),
        ("Delta", "delta", ()),
        ("Both", "both", ("G2", "G4")),
    ):
        args = ["goal", "add", title, "--accept", _accept(name)]
        for dep in deps:
            args += ["--depends", dep]
        assert project.loop(*args).status == 0
    assert project.clean()
    return project


@pytest.mark.timeout(400)
def test_parallel_makers_land_in_dependency_order_and_nothing_untested(tmp_path: Path) -> None:
    project = five_goals(tmp_path)
    start = project.git("rev-parse", "HEAD").strip()
    maker = project.script("maker", MAKER)
    ran = project.loop("run", "--maker", maker, "--parallel", "3")
    assert ran.status == 0, ran
    kept = [k["goal"] for k in ran.data["kept"]]
    assert sorted(kept) == ["G1", "G2", "G3", "G4", "G5"], ran
    assert project.clean()
    # one commit per kept goal (the rest is bookkeeping), G5 after both its dependencies
    goal_commits = [s for s in project.subjects() if s.split(":")[0] in kept]
    assert sorted(goal_commits) == sorted(
        ["G1: Multiply", "G2: Beta", "G3: Negate", "G4: Delta", "G5: Both"]
    )
    order = [s.split(":")[0] for s in goal_commits]
    assert order.index("G5") > max(order.index("G2"), order.index("G4"))
    # the conflicting candidate was made again on the baseline that holds the other: G1 is
    # meant to land first (its maker is quicker), but on a loaded machine G3's may
    first, second = sorted(("G1", "G3"), key=order.index)
    assert project.calls(first) == 1 and project.calls(second) == 2, ran.stderr
    starts = {}
    for line in (project.scripts / "starts.log").read_text().splitlines():
        goal, n, _, subjects = line.split(" ", 3)
        starts[f"{goal} {n}"] = subjects.split("|")
    kept_first = next(s for s in goal_commits if s.startswith(f"{first}:"))
    assert kept_first in starts[f"{second} 2"]
    assert kept_first not in starts[f"{second} 1"]
    # the barrier: G5's maker ran once, after G2 and G4 were on the main line
    assert project.calls("G5") == 1
    assert "G2: Beta" in starts["G5 1"] and "G4: Delta" in starts["G5 1"]
    # three makers ran at once: G1, G2 and G3 started before any goal was kept
    first = list(starts)[:3]
    assert sorted(first) == ["G1 1", "G2 1", "G3 1"]
    assert not any(s.startswith("G") for key in first for s in starts[key]), starts
    # nothing untested on the main line: every commit since the start passes the gates
    commits = project.git("rev-list", "--reverse", f"{start}..HEAD").split()
    for commit in commits:
        check = tmp_path / "check"
        subprocess.run(["git", "worktree", "add", "-q", "--detach", str(check), commit],
                       cwd=project.root, check=True)  # fmt: skip
        try:
            done = subprocess.run(TEST_GATE, shell=True, cwd=check, capture_output=True, text=True)
            assert done.returncode in (0, 5), (commit, done.stdout)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(check)],
                           cwd=project.root, check=True)  # fmt: skip
    # the goals' worktrees and branches are gone
    assert "relay-loop/parallel" not in project.git("branch", "--list")
    assert len(project.git("worktree", "list").splitlines()) == 1
