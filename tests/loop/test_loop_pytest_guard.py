"""Code under test cannot switch pytest off from inside. On a real repository with real
pytest as the gate and a maker script, each goal's maker breaks ``add`` and, in the code
under test itself (src/calc.py, imported by the baseline's own test module), switches
pytest's verdicts off at import: it replaces how a test runs, how a call's result is
taken or a report is made, registers a plugin that rewrites reports or skips the test
call, ends the process with a clean exit, or writes a passing JUnit report first and then
exits. relay's pytest plugin sees each; the gate does not pass, the change is not kept,
and the diagnosis says why. An honest change (a new function and a new test in the
existing test file) is kept, and relay's canary test shows up nowhere."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from loop_project import CALC, PY, TEST_GATE, Project, make_project

from relay.loop.records import parse_failures

TAMPERED = "the test run was tampered with"
HAS_MUL = f"{PY} -c " + shlex.quote(
    "import sys; sys.path.insert(0, 'src'); import calc; assert calc.mul(2, 3) == 6"
)
# every attack's calc: add is broken (the baseline's test_add fails), mul is there
BROKEN = "\n\ndef add(a, b):\n    return 42\n\n\ndef mul(a, b):\n    return a * b\n"
RUNTEST = "import _pytest.python\n\n_pytest.python.Function.runtest = lambda self: None\n"
CALL_AND_REPORT = """\
import _pytest.runner

_real = _pytest.runner.call_and_report


def _passing(item, when, log=True, **kwargs):
    report = _real(item, when, log=False, **kwargs)
    report.outcome, report.longrepr = "passed", None
    if log:
        item.ihook.pytest_runtest_logreport(report=report)
    return report


_pytest.runner.call_and_report = _passing
"""
FROM_CALL = """\
from _pytest.runner import CallInfo

_real = CallInfo.from_call.__func__


def _from_call(cls, func, when, reraise=None):
    try:
        func()
    except Exception:
        pass
    return _real(cls, lambda: None, when, reraise)


CallInfo.from_call = classmethod(_from_call)
"""
MAKE_REPORT = """\
from _pytest.reports import TestReport

_real = TestReport.from_item_and_call.__func__


def _made(cls, item, call):
    report = _real(cls, item, call)
    report.outcome, report.longrepr = "passed", None
    return report


TestReport.from_item_and_call = classmethod(_made)
"""
# a plugin registered with pytest's own plugin manager, found through the garbage collector
GC_WRAPPER = """\
import gc

import pytest


class _Pass:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        report.outcome, report.longrepr = "passed", None


for _each in gc.get_objects():
    if type(_each).__name__ == "PytestPluginManager":
        _each.register(_Pass())
        break
"""
# ... and through the stack (the module importing this one has a config at hand)
STACK_WRAPPER = """\
import sys

import pytest


class _Skip:
    @pytest.hookimpl(tryfirst=True)
    def pytest_pyfunc_call(self, pyfuncitem):
        return True


_frame = sys._getframe()
while _frame is not None:
    _config = getattr(_frame.f_locals.get("self"), "config", None)
    if _config is not None and hasattr(_config, "pluginmanager"):
        _config.pluginmanager.register(_Skip())
        break
    _frame = _frame.f_back
"""
EXIT = "import os\n\nos._exit(0)\n"
FAKE_JUNIT = """\
import os
import re
import sys

_path = re.search(r"--junitxml=(\\S+)", os.environ.get("PYTEST_ADDOPTS", ""))
if _path and "pytest" in sys.modules:
    with open(_path.group(1), "w") as _out:
        _out.write(
            '<testsuites><testsuite name="pytest" tests="1">'
            '<testcase classname="tests.test_calc" name="test_add" file="tests/test_calc.py"/>'
            "</testsuite></testsuites>"
        )
    print("1 passed")
    os._exit(0)
"""
ATTACKS = {
    "G1": (RUNTEST, "_pytest.python.Function.runtest was replaced"),
    "G2": (CALL_AND_REPORT, "_pytest.runner.call_and_report was replaced"),
    "G3": (FROM_CALL, "_pytest.runner.CallInfo.from_call was replaced"),
    "G4": (MAKE_REPORT, "_pytest.reports.TestReport.from_item_and_call was replaced"),
    "G5": (GC_WRAPPER, "src/calc.py registered a plugin that implements pytest_runtest_makereport"),
    "G6": (STACK_WRAPPER, "src/calc.py registered a plugin that implements pytest_pyfunc_call"),
    "G7": (EXIT, "ended before its session finished"),
    "G8": (FAKE_JUNIT, "ended before its session finished"),
}
HONEST_CALC = CALC + "\n\ndef mul(a, b):\n    return a * b\n"
HONEST_TESTS = (
    "from calc import add, mul\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
    "def test_mul():\n    assert mul(2, 3) == 6\n"
)


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def maker(project: Project) -> str:
    """Each goal (its brief's first line starts ``# G<n>:``) does its own: an attack, or
    (G9) the honest change."""
    body = ""
    for goal, (attack, _) in ATTACKS.items():
        body += f"if BRIEF.startswith('# {goal}:'):\n    put('src/calc.py', {attack + BROKEN!r})\n"
    body += (
        "if BRIEF.startswith('# G9:'):\n"
        f"    put('src/calc.py', {HONEST_CALC!r})\n"
        f"    put('tests/test_calc.py', {HONEST_TESTS!r})\n"
    )
    return project.script("maker", body)


def test_code_under_test_that_switches_pytest_off_is_never_kept_and_an_honest_change_is(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path, accept=None, retries=0, gates=(TEST_GATE,))
    for n, goal in enumerate([*ATTACKS, "G9"], start=1):
        added = project.loop("goal", "add", f"Goal {n}", "--accept", HAS_MUL)
        assert added.data == {"goal": goal}, added
    ran = project.loop("run", "--maker", maker(project))
    assert [k["goal"] for k in ran.data["kept"]] == ["G9"], ran
    assert project.read("src/calc.py") == HONEST_CALC and project.clean()
    _, entries = parse_failures(project.read("docs/loop/state/failures.md"))
    seen = {f.goal: f for f in entries}
    assert sorted(seen) == sorted(ATTACKS), entries
    for goal, (_, reason) in ATTACKS.items():
        failure = seen[goal]
        assert failure.category == "test", failure
        assert TAMPERED in failure.what and reason in failure.what, (goal, failure.what)
        assert "Leave pytest's own workings alone" in failure.diagnosis, failure
    # the honest change's runs (its own tests, then the baseline's): relay's canary, which
    # failed in each, is in no count and no line of their output
    logs = sorted((project.root / "docs/loop/state/gates").glob("run-*/*-test.log"))
    outputs = [log.read_text(encoding="utf-8").split("\n\n", 1)[1] for log in logs[-2:]]
    assert sorted(o.strip().splitlines()[-1].split(" in ")[0] for o in outputs) == [
        "1 passed",
        "2 passed",
    ], outputs
    assert not any("fail" in o or "test_" in o or "relay" in o for o in outputs), outputs


CONFTEST = """\
import pytest

SEEN = []


@pytest.fixture(autouse=True)
def _counted():
    SEEN.append(1)
    yield


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: item.name)
"""
TESTS = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n" + (
    "def test_add_zero():\n    assert add(0, 5) == 5\n"
)
PLAIN = f"{PY} -m pytest -q -p no:cacheprovider"


def tree(root: Path, calc: str) -> Path:
    from loop_project import FILES

    for name, text in {**FILES, "tests/test_calc.py": TESTS, "tests/conftest.py": CONFTEST,
                       "src/calc.py": calc}.items():  # fmt: skip
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_honest_runs_pass_as_they_are_and_a_tampered_xdist_worker_does_not(tmp_path: Path) -> None:
    """A conftest.py with an autouse fixture and a hook of its own, xdist's workers,
    coverage.py running pytest, the person's own --junitxml and a gate that is no pytest
    all pass as they are, with the canary in no count, output or report; a red test is
    the one failing check; a command that replaces PYTHONPATH is told what to do; the
    code patching pytest under xdist is caught in the worker that ran it."""
    from loop_project import LINT_GATE

    from relay.loop.contract import Gate
    from relay.ratchet.measure import measure

    honest = tree(tmp_path / "honest", CALC)
    gates = [
        Gate("plain", PLAIN),
        Gate("xdist", f"{PLAIN} -p xdist -n 2"),
        Gate("coverage", f"{PY} -m coverage run -m pytest -q -p no:cacheprovider"),
        Gate("own-junit", f"{PLAIN} --junitxml=own.xml"),
        Gate("lint", LINT_GATE),
    ]
    got = measure(honest, gates, timeout=120, coverage_report=None, stop_at_failure=False)
    assert got.failure is None, got.failure
    assert [(c.gate, c.passed, c.tampered) for c in got.checks] == [
        (g.name, True, "") for g in gates
    ]
    own = (honest / "own.xml").read_text(encoding="utf-8")
    assert 'tests="2"' in own and own.count("<testcase") == 2 and "relay" not in own, own
    assert got.checks[0].tests == (
        ("tests/test_calc.py::test_add", "passed"),
        ("tests/test_calc.py::test_add_zero", "passed"),
    )

    red = tree(tmp_path / "red", CALC.replace("a + b", "a + b + (a == 1)"))
    got = measure(red, gates[:1], timeout=120, coverage_report=None, stop_at_failure=False)
    for checks in got.checks:
        assert not checks.tampered and checks.failing == (
            ("test tests/test_calc.py::test_add", 1),
        ), checks

    # a command that replaces PYTHONPATH is told how to let relay's plugin load
    own_path = [Gate("own-path", f"PYTHONPATH=src {PLAIN}")]
    got = measure(honest, own_path, timeout=120, coverage_report=None, stop_at_failure=False)
    assert got.failure is not None and "PYTHONPATH=src:$PYTHONPATH" in got.failure.what, got

    patched = tree(tmp_path / "patched", RUNTEST + BROKEN)
    got = measure(patched, gates[1:2], timeout=120, coverage_report=None, stop_at_failure=False)
    assert got.failure is not None and TAMPERED in got.failure.what, got.failure
    assert "_pytest.python.Function.runtest was replaced" in got.checks[0].tampered
