"""One failing test named by the JUnit report and by pytest's summary under ids that differ
(a parametrized id holding `` - ``, a rootdir other than the working directory)."""

from __future__ import annotations

from relay.loop.checks import read_gate, worse

XML = """<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="2" failures="1">
<testcase classname="tests.test_a" name="test_x[a - b]" file="tests/test_a.py">
<failure message="boom">x</failure></testcase>
<testcase classname="tests.test_a" name="test_y" file="tests/test_a.py"/>
</testsuite></testsuites>"""
SUMMARY = "FAILED tests/test_a.py::test_x[a - b] - AssertionError: boom\n"
CWD_SUMMARY = "FAILED test_a.py::test_x[a - b] - AssertionError: boom\n"  # run from tests/


def _gate(output: str, cut: int = 0):  # type: ignore[no-untyped-def]
    return read_gate("pytest", output=output, exit_code=1, timed_out=False, junit=XML, cut=cut)


def test_one_failure_is_one_check() -> None:
    assert len(_gate(SUMMARY).failing) == 1
    assert len(_gate(CWD_SUMMARY).failing) == 1


def test_the_same_failure_is_not_worse_when_the_baselines_summary_was_cut() -> None:
    base = _gate("... output ...", cut=50_000)  # its summary in the middle relay left out
    now = _gate(SUMMARY)
    assert worse(base, now) == []
