"""How relay reads its pytest plugin's verdicts against a gate's exit (pure): a pytest
gate with no signed verdict, a verdict that is forged, cut short, names a change to
pytest's workings or a canary that passed, or a clean exit that pytest's own status
contradicts, is tampered with; a gate that runs no pytest, or timed out, is not judged."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from relay.loop.checks import read_gate, worse
from relay.loop.tamper import GuardKeys, names_pytest, tamper_line, tampered

KEYS = GuardKeys(key="k" * 64, token="t" * 32)
PYTEST = "python -m pytest -q"
FINE = {"state": "finished", "canary": "failed as it must", "problems": [], "exitstatus": 0}


def verdict(key: str = KEYS.key, token: str = KEYS.token, **record: object) -> str:
    body = json.dumps({"pid": 7, "token": token, **record})
    return body + "\n" + hmac.new(key.encode(), body.encode(), hashlib.sha256).hexdigest() + "\n"


def judge(files: list[str], command: str = PYTEST, exit_code: int = 0, **more: bool) -> str:
    args = {"timed_out": False, "wrote_junit": False, **more}
    return tampered(files, KEYS, command=command, exit_code=exit_code, **args)


def test_an_honest_run_and_gates_that_run_no_pytest_are_not_tampered_with() -> None:
    assert judge([verdict(**FINE)]) == ""
    assert judge([verdict(**FINE), verdict(**FINE, worker="gw0")]) == ""
    assert judge([], command="ruff check .") == ""
    assert judge([], timed_out=True) == ""
    no_tests = {**FINE, "canary": "not needed (no test runs)"}
    assert judge([verdict(**no_tests)], command="pytest --co") == ""
    # `pytest || true`: the exit is the shell's, not pytest's
    assert judge([verdict(**{**FINE, "exitstatus": 1})], command="pytest || true") == ""


@pytest.mark.parametrize(
    ("files", "command", "wrote_junit", "said"),
    [
        ([], PYTEST, False, "pytest ran without relay's guard plugin"),
        ([], "coverage run -m pytest", False, "pytest ran without relay's guard plugin"),
        ([], "make test", True, "a JUnit report was written, but relay's plugin signed off"),
        ([verdict(key="x" * 64, **FINE)], PYTEST, False, "forged or altered"),
        ([verdict(token="x", **FINE)], PYTEST, False, "forged or altered"),
        ([verdict(**FINE)[:-3] + "00\n"], PYTEST, False, "forged or altered"),
        ([verdict(state="started")], PYTEST, False, "ended before its session finished"),
        (
            [verdict(**FINE), verdict(state="started", worker="gw1")],
            PYTEST,
            False,
            "ended before its session finished",
        ),
        (
            [verdict(**FINE, handed=["gw0", "gw1"]), verdict(**FINE, worker="gw0")],
            PYTEST,
            False,
            "xdist's worker gw1 ran without relay's guard plugin",
        ),
        (
            [verdict(**{**FINE, "problems": ["_pytest.runner.call_and_report was replaced"]})],
            PYTEST,
            False,
            "_pytest.runner.call_and_report was replaced",
        ),
        (
            [verdict(**{**FINE, "canary": "passed"})],
            PYTEST,
            False,
            "relay's canary test (which must fail) passed",
        ),
        (
            [verdict(**{**FINE, "exitstatus": 1})],
            PYTEST,
            False,
            "exit status 1 but the process exited 0",
        ),
    ],
)
def test_what_relay_refuses(files: list[str], command: str, wrote_junit: bool, said: str) -> None:
    got = judge(files, command, wrote_junit=wrote_junit)
    assert got.startswith("the test run was tampered with: ") and said in got, got


def test_a_gate_that_replaces_pythonpath_is_told_how_to_let_the_plugin_load() -> None:
    said = 'ERROR: Error importing plugin "_relay_guard_ab12": No module named ...'  # pytest's
    got = tampered([], KEYS, command="PYTHONPATH=src pytest", exit_code=4, timed_out=False,
                   wrote_junit=False, output=said, module="_relay_guard_ab12")  # fmt: skip
    assert got.startswith("relay's pytest plugin could not be imported") and "$PYTHONPATH" in got


def test_a_gate_that_runs_pytest_twice_is_told_to_give_each_run_a_gate() -> None:
    from relay.loop.tamper import SETTINGS_TAKEN
    from relay.ratchet.guard_run import SOURCE

    assert SETTINGS_TAKEN in SOURCE.read_text(encoding="utf-8")  # what the plugin says
    said = f'ERROR: Error importing plugin "_relay_guard_ab12": {SETTINGS_TAKEN}: this gate ...'
    twice = f"{PYTEST} && {PYTEST}"
    got = tampered([verdict(**FINE)], KEYS, command=twice, exit_code=4, timed_out=False,
                   wrote_junit=False, output=said, module="_relay_guard_ab12")  # fmt: skip
    assert "runs pytest more than once" in got and "a gate of its own" in got, got
    assert judge([verdict(**FINE, handed=["gw0"]), verdict(**FINE, worker="gw0")]) == ""


def test_names_pytest() -> None:
    assert names_pytest("/v/bin/python -m pytest -q")
    assert names_pytest(".venv/bin/pytest tests")
    assert names_pytest("py.test")
    assert not names_pytest("ruff check tests/test_pytest_things.py")
    assert not names_pytest("mypy")


def test_a_tampered_gate_is_failing_and_worse_whatever_it_exited() -> None:
    why = tamper_line("_pytest.python.Function.runtest was replaced")
    assert why == "the test run was tampered with: _pytest.python.Function.runtest was replaced"
    now = read_gate("test", output="2 passed", exit_code=0, timed_out=False, tampered=why)
    assert not now.passed and not now.known and now.tampered == why
    base = read_gate("test", output="2 passed", exit_code=0, timed_out=False)
    assert worse(base, now) == [f"test: {why}"]
