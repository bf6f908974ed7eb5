"""The verifier judges the candidate's code by the baseline's tests and gate configuration.
On a real repository with real pytest and ruff as gates and makers that are scripts: a
test module the maker adds that switches pytest's test runs off (which relay's pytest
plugin refuses in the candidate's own run already), or that patches the code
under test before the real tests import it, a new pytest.ini that deselects a baseline
test, a new ruff.toml that selects nothing, and a file-wide ``# ruff: noqa`` are never
kept; a baseline test that did not run counts as failing; a genuine fix with a new test in
an existing test file still is kept."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from loop_project import CALC, CALC_MUL, PY, TEST_GATE, Project, make_project
from test_loop_ratchet import failures


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


BROKEN = CALC.replace("a + b", "a - b")
# the goals' own acceptance: mul is written (so no goal is done before its maker runs)
HAS_MUL = f"{PY} -c " + shlex.quote(
    "import sys; sys.path.insert(0, 'src'); import calc; assert calc.mul(2, 3) == 6"
)
MUL_BROKEN = CALC_MUL.replace("a + b", "a - b")
PUT_BROKEN = f"put('src/calc.py', {MUL_BROKEN!r})\n"
TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
MORE_TESTS = TEST_CALC + "\n\ndef test_add_zero():\n    assert add(0, 5) == 5\n"
# collected first (its name sorts first), it switches every test's run off at import
PLUGIN = "import _pytest.python\n\n_pytest.python.Function.runtest = lambda self: None\n"
# collected before tests/test_calc.py, it mends the code under test for the real tests
SETUP = "import calc\n\ncalc.add = lambda a, b: a + b\n\n\ndef test_setup():\n    pass\n"
SWITCHED_OFF = "the test run was tampered with: _pytest.python.Function.runtest was replaced"
DESELECT = "[pytest]\npythonpath = src\naddopts = --deselect tests/test_calc.py::test_add\n"


def goals(project: Project, *titles: str, accept: str = HAS_MUL) -> None:
    for n, title in enumerate(titles, start=1):
        added = project.loop("goal", "add", title, "--accept", accept)
        assert added.data == {"goal": f"G{n}"}, added


def by_goal(cases: dict[str, str]) -> str:
    """A maker's body: each goal (its brief's first line starts ``# G<n>``) does its own."""
    body = ""
    for goal, does in cases.items():
        body += f"if BRIEF.startswith('# {goal}:'):\n" + "".join(
            f"    {line}\n" for line in does.splitlines()
        )
    return body


def test_test_modules_the_maker_adds_cannot_pass_the_baselines_tests(tmp_path: Path) -> None:
    project = make_project(tmp_path, accept=None, retries=0, gates=(TEST_GATE,))
    goals(project, "Plugin", "Setup")
    maker = project.script(
        "maker",
        by_goal(
            {
                "G1": PUT_BROKEN + f"put('tests/test_0_plugin.py', {PLUGIN!r})",
                "G2": PUT_BROKEN + f"put('tests/test_aaa_setup.py', {SETUP!r})",
            }
        ),
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [], ran
    assert project.read("src/calc.py") == CALC and project.clean()
    assert [(g, c) for g, _, c in failures(project)] == [("G1", "test"), ("G2", "test")]
    text = project.read("docs/loop/state/failures.md")
    assert f"{SWITCHED_OFF}\n" in text, text
    assert "the goal's new `tests/test_aaa_setup.py` left out: test" in text, text
    assert "FAILED tests/test_calc.py::test_add" in text
    assert (project.root / "tests/test_calc.py").read_text() == TEST_CALC


def test_a_red_test_is_not_passed_by_a_plugin_and_a_real_fix_with_a_new_test_is_kept(
    tmp_path: Path,
) -> None:
    """On a red baseline (test_add fails), a plugin module the maker adds makes the whole
    suite pass on the candidate: relay's pytest plugin sees pytest switched off, not kept.
    The real fix, with a new test in the existing test file, is kept."""
    project = make_project(tmp_path, accept=None, retries=0, gates=(TEST_GATE,))
    project.write("src/calc.py", BROKEN)
    project.git("commit", "-qam", "add is broken")
    goals(project, "Mend add with a plugin", "Mend add", accept=TEST_GATE)
    maker = project.script(
        "maker",
        by_goal(
            {
                "G1": f"put('tests/test_0_plugin.py', {PLUGIN!r})",
                "G2": f"put('src/calc.py', {CALC!r})\nput('tests/test_calc.py', {MORE_TESTS!r})",
            }
        ),
    )
    ran = project.loop("run", "--maker", maker)
    assert [k["goal"] for k in ran.data["kept"]] == ["G2"], ran
    assert [(g, c) for g, _, c in failures(project)] == [("G1", "test")]
    text = project.read("docs/loop/state/failures.md")
    assert f"{SWITCHED_OFF}\n" in text, text
    assert project.read("src/calc.py") == CALC and project.read("tests/test_calc.py") == MORE_TESTS
    assert not (project.root / "tests/test_0_plugin.py").exists() and project.clean()


def test_new_gate_configuration_and_suppressions_are_refused_and_an_unrun_test_fails(
    tmp_path: Path,
) -> None:
    """A new pytest.ini that deselects a baseline test, a new ruff.toml that selects
    nothing and a file-wide ``# ruff: noqa`` are refused as they are; a goal that declared
    --may-edit-tests may add a pytest.ini, but the baseline test it deselects did not run,
    and a test that did not run is failing."""
    project = make_project(tmp_path, accept=None, retries=0, gates=(TEST_GATE,))
    project.write("tests/test_calc.py", MORE_TESTS)  # deselecting test_add leaves one test
    project.git("commit", "-qam", "one more test")
    goals(project, "Deselect", "Select nothing", "No lint here")
    unused = "import os\n\n\n" + MUL_BROKEN
    maker = project.script(
        "maker",
        by_goal(
            {
                "G1": f"put('src/calc.py', {MUL_BROKEN!r})\nput('pytest.ini', {DESELECT!r})",
                "G2": f"put('src/calc.py', {unused!r})\nput('ruff.toml', 'lint.select = []\\n')",
                "G3": f"put('src/calc.py', '# ruff: noqa\\n' + {unused!r})",
                "G4": f"put('src/calc.py', {MUL_BROKEN!r})\nput('pytest.ini', {DESELECT!r})",
            }
        ),
    )
    added = project.loop("goal", "add", "Deselect, declared", "--accept", HAS_MUL,
                         "--may-edit-tests")  # fmt: skip
    assert added.data == {"goal": "G4"}, added
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [], ran
    assert project.read("src/calc.py") == CALC and project.clean()
    assert not (project.root / "pytest.ini").exists() and not (project.root / "ruff.toml").exists()
    found = failures(project)
    assert [(g, c) for g, _, c in found] == [
        ("G1", "protected path touched"),
        ("G2", "protected path touched"),
        ("G3", "protected path touched"),
        ("G4", "test"),
    ], found
    text = project.read("docs/loop/state/failures.md")
    assert "`pytest.ini` is a new file that defines how the gates run" in text
    assert "`ruff.toml` is a new file that defines how the gates run" in text
    assert "`src/calc.py` gained `# ruff: noqa`" in text
    assert "test tests/test_calc.py::test_add did not run (it passed at the baseline)" in text, text
