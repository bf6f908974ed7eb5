"""A JUnit report the code under test rewrote after pytest wrote it, for a test whose JUnit
id is not its pytest node id (a doctest in a folder: ``docs.usage.md::usage.md``)."""

from __future__ import annotations

import hashlib
import hmac
import json

from relay.loop.checks import read_gate, worse
from relay.loop.tamper import CANARY_OK, GuardKeys, tampered

KEYS = GuardKeys(key="k", token="t")


def _verdict(failed: list[str]) -> str:
    body = json.dumps(
        {"token": "t", "state": "finished", "canary": CANARY_OK, "failed": failed, "pid": 1}
    )
    return body + "\n" + hmac.new(b"k", body.encode(), hashlib.sha256).hexdigest()


REWRITTEN = """<testsuites><testsuite name="pytest">
<testcase classname="docs.usage.md" name="usage.md" file="docs/usage.md"/>
<testcase classname="tests.test_calc" name="test_sub" file="tests/test_calc.py">
<failure message="x"/></testcase>
</testsuite></testsuites>"""


def test_a_report_saying_a_failed_doctest_passed_is_tampering() -> None:
    """relay's plugin saw docs/usage.md::usage.md fail; the report says it passed, and the
    output's summary (pushed into the middle relay leaves out) says nothing of it."""
    failed = ["docs/usage.md::usage.md", "tests/test_calc.py::test_sub"]
    why = tampered(
        [_verdict(failed)],
        KEYS,
        command="pytest",
        exit_code=1,
        timed_out=False,
        wrote_junit=True,
        junit=REWRITTEN,
    )
    said = "FAILED tests/test_calc.py::test_sub\n"
    base = read_gate("tests", output=said, exit_code=1, timed_out=False, junit=REWRITTEN)
    now = read_gate(
        "tests", output=said, exit_code=1, timed_out=False, junit=REWRITTEN, cut=500_000
    )
    assert why or worse(base, now)
