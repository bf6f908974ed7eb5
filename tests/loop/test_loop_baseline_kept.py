"""The baseline's gates run once per tree: a kept candidate's green run (its gates in a
fresh clone of that tree) is the next goal's baseline, in this run and the next, so a kept
iteration runs the gates once. Only a green measure is kept on disk, inside the git
directory no maker sees, and only for the same tree and the same gates."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from loop_project import PY, TEST_GATE, Project, make_project

from relay.loop.checks import GateChecks
from relay.loop.classify import Category
from relay.loop.ratchet import Failed
from relay.loop.records import GateResult
from relay.ratchet.judge import MEASURED_FILE
from relay.ratchet.measure import Measure


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def has(name: str) -> str:
    """A goal's acceptance: calc has the function ``name``."""
    code = f"import sys; sys.path.insert(0, 'src'); import calc; assert calc.{name}"
    return f"{PY} -c {shlex.quote(code)}"


def adds(project: Project, name: str) -> str:
    """A maker that adds the function ``name`` to calc (no test file: one gate run)."""
    return project.script(
        f"maker-{name}",
        "src = pathlib.Path('src/calc.py')\n"
        f"put('src/calc.py', src.read_text() + '\\n\\ndef {name}(a, b):\\n    return a\\n')\n",
    )


def run_logs(project: Project) -> list[list[str]]:
    """Each run's gate logs by gate name, oldest run first."""
    runs = sorted((project.root / "docs/loop/state/gates").glob("run-*"))
    return [[p.stem.partition("-")[2] for p in sorted(r.glob("*.log"))] for r in runs]


def test_a_kept_candidates_gates_are_the_next_baselines_across_runs(tmp_path: Path) -> None:
    project = make_project(tmp_path, gates=(TEST_GATE,), retries=0, accept=has("mul"))
    first = project.loop("run", "--maker", adds(project, "mul"))
    assert [k["goal"] for k in first.data["kept"]] == ["G1"], first
    assert project.loop("goal", "add", "Subtract", "--accept", has("sub")).status == 0
    second = project.loop("run", "--maker", adds(project, "sub"))
    assert [k["goal"] for k in second.data["kept"]] == ["G2"], second
    assert second.data["kept"][0]["gates"] == "2/2 gates pass (was 1/2)"
    # the first run measured the baseline and the candidate; the second run's baseline is
    # the first one's kept candidate: only the goal's own acceptance runs on it
    assert run_logs(project) == [["accept", "test", "accept", "test"], ["accept", "accept", "test"]]
    kept = project.root / ".git/relay/loop" / MEASURED_FILE
    entries = json.loads(kept.read_text())["measured"]
    assert entries and all(all(r[2] for r in e["results"]) for e in entries)

    # a person's commit makes another tree (a red one): its baseline is measured again,
    # and only green measures are kept on disk
    project.write("src/calc.py", project.read("src/calc.py").replace("a + b", "a - b"))
    project.git("commit", "-qam", "add subtracts (test_add fails)")
    assert project.loop("goal", "add", "Divide", "--accept", has("div")).status == 0
    third = project.loop("run", "--maker", adds(project, "div"))
    assert [k["goal"] for k in third.data["kept"]] == ["G3"], third  # no worse than it was
    assert run_logs(project)[-1] == ["accept", "test", "accept", "test"]
    entries = json.loads(kept.read_text())["measured"]
    assert len(entries) == 3 and all(all(r[2] for r in e["results"]) for e in entries)


def test_only_a_green_measure_reads_back_from_disk() -> None:
    checks = GateChecks("test", True, True, (), "", False, (("tests/t.py::test_a", "passed"),))
    green = Measure((GateResult("test", "pytest", True, 1.5),), None, 87.5, (checks,))
    assert green.green and Measure.from_json(json.loads(json.dumps(green.to_json()))) == green
    red = Measure((GateResult("test", "pytest", False, 1.5),), None, None, (checks,))
    assert not red.green and Measure.from_json(red.to_json()) is None
    failed = Measure(green.results, Failed(Category.TEST, "test failed", "why"), None, ())
    assert not failed.green
    assert Measure.from_json({"results": "nonsense"}) is None
    assert Measure.from_json(["not", "a", "measure"]) is None


def loose(project: Project) -> int:
    """The clone's loose objects (``git count-objects``)."""
    return int(project.git("count-objects").split()[0])


def test_a_run_packs_a_clones_many_loose_objects_before_its_boxes(tmp_path: Path) -> None:
    """Each box's repository is packed from the clone's objects: a run finding more than
    LOOSE_CAP loose ones packs them first (and writes down what stays loose, objects no
    ref reaches); a run finding a few leaves them as they are."""
    from relay.ratchet.judge import LOOSE_CAP, LOOSE_FILE

    project = make_project(tmp_path, gates=(TEST_GATE,), retries=0, accept=has("mul"))
    made = "".join(f"object {n}\n" for n in range(LOOSE_CAP + 20))
    for line in made.splitlines():  # loose objects a ref reaches: notes on HEAD
        project.git("notes", "append", "-m", line)
    before = loose(project)
    assert before > LOOSE_CAP
    first = project.loop("run", "--maker", adds(project, "mul"))
    assert [k["goal"] for k in first.data["kept"]] == ["G1"], first
    after = loose(project)
    assert after < LOOSE_CAP, f"{before} loose objects before the run, {after} after it"
    kept = (project.root / ".git/relay/loop" / LOOSE_FILE).read_text()
    assert 0 <= int(kept) < LOOSE_CAP
    # nothing else of the git directory changed: no server information in its info folder
    # (relay holds that folder unchanged around an attempt, a parallel one's too)
    assert not (project.root / ".git/info/refs").exists()
    assert project.loop("goal", "add", "Subtract", "--accept", has("sub")).status == 0
    now = loose(project)
    second = project.loop("run", "--maker", adds(project, "sub"))
    assert [k["goal"] for k in second.data["kept"]] == ["G2"], second
    assert loose(project) > now, "a few loose objects are left as they are"
