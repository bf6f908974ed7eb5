"""Code under test cannot change what a later reader of its tree reads. The acceptance and
each gate run one after another in one judged tree; a candidate's module, imported while
pytest collects an earlier test file, rewrote a later baseline test file before pytest read
it (a broken function kept, its test green), or left a `.ignore` that made the lint gate
skip every file (a new finding kept). relay looks at the tree before and after each run:
a tracked file written (even when put back as it was), an entry left that the baseline's
run of that gate does not leave, or a folder whose entries came and went, is a gate that
does not pass. On a real repository with real pytest and ruff as gates; an honest change
(its gates leave pytest's and ruff's outputs as the baseline's do) is kept."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest
from loop_project import CALC_MUL, LINT_GATE, PY, TEST_GATE, make_project

from relay.loop.checks import TreeState, tree_marks, unexplained
from relay.loop.records import parse_failures

BASE_CALC = "def add(a, b):\n    return a + b\n\n\ndef neg(a):\n    return -a\n"
BASE_TEST = "from calc import neg\n\n\ndef test_neg():\n    assert neg(2) == -2\n"
HAS_MUL = f"{PY} -c " + shlex.quote(
    "import sys; sys.path.insert(0, 'src'); import calc; assert calc.mul(2, 3) == 6"
)
# every attack's calc: neg is broken (the baseline's test_neg fails), mul is there
BROKEN = BASE_CALC.replace("return -a", "return a") + "\n\ndef mul(a, b):\n    return a * b\n"
PASSING = "def test_neg():\n    assert True\n"
ATTACKS = {
    # rewrites the baseline's test file before pytest collects it
    "G1": f"\n\nwith open('tests/test_zneg.py', 'w') as out:\n    out.write({PASSING!r})\n",
    # the same by a new file put in its place, the old one put back by the candidate's own
    # test once pytest has read the new (its inode, name and text as they were)
    "G2": (
        "\n\nfrom pathlib import Path\n\nPath('tests/test_zneg.py').rename('tests/was')\n"
        f"Path('tests/test_zneg.py').write_text({PASSING!r})\n"
    ),
    # leaves a file the lint gate reads next: ruff skips every Python file
    "G3": "\n\nwith open('.ignore', 'w') as out:\n    out.write('*.py\\n')\n",
}
# G3 keeps neg and adds a lint finding instead (an unused variable)
LINTED = BASE_CALC + "\n\ndef mul(a, b):\n    unused = 1\n    return a * b\n"
HONEST_CALC = BASE_CALC + "\n\ndef mul(a, b):\n    return a * b\n"
RESTORES = (
    "from pathlib import Path\n\nfrom calc import mul\n\n\ndef test_mul():\n"
    "    Path('tests/was').replace('tests/test_zneg.py')\n    assert mul(2, 3) == 6\n"
)
HONEST_TEST = (
    BASE_TEST + "\n\ndef test_mul():\n    from calc import mul\n\n    assert mul(2, 3) == 6\n"
)
CHANGED = "the code judged changed the tree it was judged in"


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def test_code_under_test_that_changes_its_tree_is_never_kept_and_an_honest_change_is(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path, accept=None, retries=0, gates=(TEST_GATE, LINT_GATE))
    project.write("src/calc.py", BASE_CALC)
    project.write("tests/test_zneg.py", BASE_TEST)
    project.git("add", "-A")
    project.git("commit", "-qm", "neg, tested")
    body = ""
    for goal, attack in ATTACKS.items():
        calc = (LINTED if goal == "G3" else BROKEN) + attack
        body += f"if BRIEF.startswith('# {goal}:'):\n    put('src/calc.py', {calc!r})\n"
        if goal == "G2":
            body += f"    put('tests/test_mul.py', {RESTORES!r})\n"
    body += (
        "if BRIEF.startswith('# G4:'):\n"
        f"    put('src/calc.py', {HONEST_CALC!r})\n"
        f"    put('tests/test_zneg.py', {HONEST_TEST!r})\n"
    )
    for n in range(1, 5):
        added = project.loop("goal", "add", f"Goal {n}", "--accept", HAS_MUL)
        assert added.data == {"goal": f"G{n}"}, added
    ran = project.loop("run", "--maker", project.script("maker", body))
    assert [k["goal"] for k in ran.data["kept"]] == ["G4"], ran
    assert project.read("src/calc.py") == HONEST_CALC and project.clean()
    assert not (project.root / ".ignore").exists()
    _, entries = parse_failures(project.read("docs/loop/state/failures.md"))
    seen = {f.goal: f for f in entries}
    assert sorted(seen) == ["G1", "G2", "G3"], entries
    # written in place: a relay run as root keeps the files it checked out its own, so the
    # write itself fails; otherwise it is seen
    g1 = seen["G1"]
    assert (CHANGED in g1.what and "changed tests/test_zneg.py" in g1.what) or (
        os.geteuid() == 0 and "Permission denied" in g1.diagnosis
    ), g1
    g2 = seen["G2"]  # renamed aside: the tree's folders are sticky, root's, under root
    assert (CHANGED in g2.what and "changed tests/test_zneg.py" in g2.what) or (
        os.geteuid() == 0 and "Operation not permitted" in g2.diagnosis
    ), g2
    assert CHANGED in seen["G3"].what and "left .ignore" in seen["G3"].what, seen["G3"]


def state(
    files: dict[str, tuple[int, int, int] | None], **folders: tuple[int, int, set[str]] | None
) -> TreeState:
    return TreeState(
        files,
        {
            k.replace("_", "/").strip("/"): None if v is None else (v[0], v[1], frozenset(v[2]))
            for k, v in folders.items()
        },
    )


def test_what_a_run_did_is_read_from_the_tree_before_and_after() -> None:
    files = {"src/a.py": (1, 10, 5), "tests/t.py": (2, 10, 5)}
    top = {"src", "tests", ".git"}
    before = state(files, _=(9, 1, top), src=(7, 1, {"a.py"}), tests=(8, 1, {"t.py"}))
    # nothing moved: only what was there, untracked, is "left"
    assert tree_marks(before, before) == {"left .git"}
    # a test rewritten and put back (its change time moved), a file left, a folder stirred
    after = state(
        {**files, "tests/t.py": (2, 11, 5)},
        _=(9, 2, top | {".ignore"}),
        src=(7, 2, {"a.py"}),
        tests=(8, 1, {"t.py"}),
    )
    marks = tree_marks(before, after)
    assert marks == {
        "left .git", "left .ignore", "changed tests/t.py", "touched ", "touched src", "stirred src",
    }  # fmt: skip
    # judged against a baseline whose run left .coverage at the top and touched it
    base = frozenset({"left .git", "left .coverage", "touched "})
    assert unexplained(marks, before, [base]) == [
        "changed tests/t.py", "left .ignore", "stirred src",
    ]  # fmt: skip
    # what the baseline's run does too (a file of the same kind anywhere, a folder it
    # touches) or what was there before the run is no finding
    same = state(
        files, _=(9, 2, top | {".coverage.host.1.x"}), src=(7, 1, {"a.py"}), tests=(8, 1, {"t.py"})
    )
    assert unexplained(tree_marks(before, same), before, [base]) == []
    deeper = state(files, _=(9, 1, top), src=(7, 2, {"a.py", ".coverage"}), tests=(8, 1, {"t.py"}))
    assert unexplained(tree_marks(before, deeper), before, [base]) == []
    assert unexplained(marks, before, [base | {"touched src", "left .ignore"}]) == [
        "changed tests/t.py"
    ]
    # a tracked file removed, a folder replaced by another (same entries) or by a link
    gone = state(
        {**files, "src/a.py": None}, _=(9, 1, top), src=(7, 2, set()), tests=(8, 1, {"t.py"})
    )
    assert "changed src/a.py" in unexplained(tree_marks(before, gone), before, [base])
    swapped = state(files, _=(9, 1, top), src=(7, 1, {"a.py"}), tests=(80, 1, {"t.py"}))
    assert unexplained(tree_marks(before, swapped), before, [base]) == ["changed tests/"]
    linked = state({**files, "src/a.py": None}, _=(9, 1, top), src=None, tests=(8, 1, {"t.py"}))
    assert unexplained(tree_marks(before, linked), before, [base]) == [
        "changed src/",
        "changed src/a.py",
    ]


COST_PY = "import sys\n\nsys.path[:0] = ['src']\nimport calc  # noqa: E402\n\nprint(calc.cost())\n"
COST = "def add(a, b):\n    return a + b\n\n\ndef cost():\n    return 100\n"
# a candidate no faster on a cold run (95: 5%, under the goal's 10%) that leaves itself the
# answer in its tree: its later runs say 40
WARMED = (
    "def add(a, b):\n    return a + b\n\n\n"
    "def cost():\n"
    "    try:\n"
    "        with open('.warm') as seen:\n"
    "            return int(seen.read())\n"
    "    except FileNotFoundError:\n"
    "        with open('.warm', 'w') as out:\n"
    "            out.write('40')\n"
    "        return 95\n"
)


def test_a_metric_that_warms_itself_in_its_tree_is_not_kept(tmp_path: Path) -> None:
    from relay.loop.metric import parse_experiments

    project = make_project(tmp_path, accept=None, retries=0)
    project.write("bench/cost.py", COST_PY)
    project.write("src/calc.py", COST)
    project.git("add", "-A")
    project.git("commit", "-qm", "the metric")
    added = project.loop(
        "goal", "add", "Cheaper", "--metric", f"{PY} bench/cost.py",
        "--direction", "down", "--threshold", "10", "--runs", "3",
    )  # fmt: skip
    assert added.data == {"goal": "G1"}, added
    maker = f"put('src/calc.py', {WARMED!r})\nprint('IDEA: remember the answer')\n"
    project.loop("run", "--maker", project.script("maker", maker))
    _, rows = parse_experiments(project.read("docs/loop/EXPERIMENTS.md"))
    assert rows and all(r.outcome != "kept" for r in rows), rows
    assert any(CHANGED in r.why and "left .warm" in r.why for r in rows), rows
    assert project.read("src/calc.py") == COST


SWAP = """

import shutil as _sh
from pathlib import Path as _P


def _swap():
    if _P('tests/unit_was').exists():
        return
    _sh.copystat('tests', 'stamp')
    _P('tests/unit').rename('tests/unit_was')
    _P('tests/unit').mkdir()
    _P('tests/unit/test_neg.py').write_text('def test_neg():\\n    assert True\\n')


def _back():
    if _P('tests/unit_was').is_dir():
        _sh.rmtree('tests/unit')
        _P('tests/unit_was').rename('tests/unit')
        _sh.copystat('stamp', 'tests')


_P('stamp').touch()
_swap()
"""
# a linter's exclude file written in the judged tree's git folder: ruff skips every file
EXCLUDE = (
    "\n\nfrom pathlib import Path as _P\n\n_P('.git/info/x').write_text('*.py\\n')\n"
    "_P('.git/info/x').replace('.git/info/exclude')\n"
)
# the source folder made a link to a host folder once the acceptance has read it
LINKED = (
    "\n\nfrom pathlib import Path as _P\n\n_P('src').rename('moved')\n_P('src').symlink_to({!r})\n"
)


@pytest.mark.parametrize("attack", ["swap", "exclude", "link"])
def test_what_persists_outside_the_files_is_never_kept_either(tmp_path: Path, attack: str) -> None:
    """A tracked folder swapped for a stand-in and put back (its parent's times put back
    too), an exclude file in the tree's git folder, and the source folder made a link to a
    host folder: none is kept, and relay neither lists nor removes anything behind the
    link."""
    victim = tmp_path / "victim"
    (victim / "__pycache__").mkdir(parents=True)
    (victim / "secret-name").write_text("x")
    project = make_project(tmp_path, accept=None, retries=0, gates=(TEST_GATE, LINT_GATE))
    project.write("src/calc.py", BASE_CALC)
    project.write(
        "tests/test_add.py",
        "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    )
    project.write("tests/unit/test_neg.py", BASE_TEST)
    project.git("add", "-A")
    project.git("commit", "-qm", "neg, tested in a folder")
    if attack == "swap":
        calc = BROKEN.replace("def add(a, b):\n", "def add(a, b):\n    _back()\n") + SWAP
    elif attack == "exclude":
        calc = LINTED + EXCLUDE
    else:
        calc = BROKEN + LINKED.format(str(victim))
    assert project.loop("goal", "add", "Goal 1", "--accept", HAS_MUL).data == {"goal": "G1"}
    ran = project.loop("run", "--maker", project.script("maker", f"put('src/calc.py', {calc!r})\n"))
    assert ran.data["kept"] == [], ran
    assert project.read("src/calc.py") == BASE_CALC
    assert (victim / "__pycache__").is_dir()
    assert "secret-name" not in project.read("docs/loop/state/failures.md")


def test_outputs_named_anew_each_run_are_of_one_kind_with_the_baselines(tmp_path: Path) -> None:
    """Coverage in parallel mode leaves `.coverage.<host>.<pid>.<random>` for a later
    `coverage combine` gate: a name no run repeats, of the kind the baseline's run leaves.
    An honest change is kept."""
    gates = (
        f"test: {PY} -m coverage run -p -m pytest -q -p no:cacheprovider",
        f"coverage: {PY} -m coverage combine -q",
    )
    project = make_project(tmp_path, accept=None, retries=0, gates=gates)
    assert project.loop("goal", "add", "Goal 1", "--accept", HAS_MUL).data == {"goal": "G1"}
    honest = f"put('src/calc.py', {CALC_MUL!r})\n"
    ran = project.loop("run", "--maker", project.script("maker", honest))
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran


def test_a_gate_that_rewrites_a_tracked_file_and_puts_it_back_is_seen(tmp_path: Path) -> None:
    """Where nothing stops the write (a relay not run as root, whose boxes are the person's
    user), the tree's change times still say it: a gate's run that rewrites a tracked file
    and puts its text back, or makes and removes a file in a tracked folder, fails; the
    same run on the baseline's side, or a run that only leaves an output of the baseline's
    kind, does not."""
    from relay.loop.contract import Gate
    from relay.ratchet.measure import measure

    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    (tree / "tests" / "t.py").write_text("x = 1\n")
    for args in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "t"],
    ):
        subprocess.run(["git", *args], cwd=tree, check=True)
    output = Gate("test", f"{PY} -c \"open('.coverage', 'w').write('1')\"")
    base = measure(tree, [output], timeout=60, coverage_report=None, stop_at_failure=False)
    assert base.failure is None
    rewrite = (
        "import pathlib; p = pathlib.Path('tests/t.py'); t = p.read_text();"
        " p.write_text('x = 2'); p.write_text(t); open('.coverage.2', 'w').write('1')"
    )
    stir = "import os; open('tests/tmp', 'w').close(); os.remove('tests/tmp')"
    for command, mark in ((rewrite, "changed tests/t.py"), (stir, "stirred tests")):
        got = measure(
            tree, [Gate("test", f"{PY} -c {shlex.quote(command)}")], timeout=60,
            coverage_report=None, stop_at_failure=False, against=base,
        )  # fmt: skip
        assert got.failure is not None and CHANGED in got.failure.what, got
        said = got.failure.what.split(CHANGED)[1]
        assert mark in said and ".coverage" not in said, got.failure
        assert (tree / "tests" / "t.py").read_text() == "x = 1\n"
    again = measure(
        tree, [output], timeout=60, coverage_report=None, stop_at_failure=False, against=base
    )
    assert again.failure is None, again.failure


def test_a_gate_writes_no_compiled_file_where_relay_does_not_sweep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person's PYTHONPYCACHEPREFIX (a relative one lies in the judged tree) would be a
    place relay never sweeps, where one gate's code leaves a forged compiled file for the
    next gate to load: a gate runs without it."""
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", ".compiled")
    seen = f"{PY} -c " + shlex.quote(
        "import os; print('prefix:', os.environ.get('PYTHONPYCACHEPREFIX'))"
    )
    project = make_project(tmp_path, accept=None, retries=0, gates=(seen,))
    assert project.loop("goal", "add", "Goal 1", "--accept", HAS_MUL).data == {"goal": "G1"}
    honest = f"put('src/calc.py', {CALC_MUL!r})\n"
    ran = project.loop("run", "--maker", project.script("maker", honest))
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    logs = sorted((project.root / "docs/loop/state/gates").rglob("*.log"))
    said = [
        line for log in logs for line in log.read_text().splitlines() if line.startswith("prefix:")
    ]
    assert said and all(line.endswith("prefix: None") for line in said), said
