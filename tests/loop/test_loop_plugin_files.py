"""A candidate cannot switch pytest off with files pytest loads of its own accord: a new
distribution's metadata in the clone (``python -m pytest`` puts the clone on sys.path, so
its entry_points.txt's [pytest11] plugin would load before any test) is a file that
defines how the gates run, refused without --may-edit-tests, with nothing kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from loop_project import CALC, TEST_MUL, make_project

PLUGIN = (
    '"""Helpers."""\nimport _pytest.python\n\n_pytest.python.Function.runtest = lambda self: None\n'
)


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    """The gates' pytest loads plugins of its own accord here, as a person's does: the
    attack is one such plugin."""
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)


def test_a_new_pytest_plugin_entry_point_is_refused(tmp_path: Path) -> None:
    project = make_project(tmp_path, retries=0)
    broken = CALC + "\n\ndef mul(a, b):\n    return 0\n"
    maker = project.script(
        "maker",
        "put('calc_tools-0.1.dist-info/METADATA', 'Metadata-Version: 2.1\\nName: calc-tools\\n"
        "Version: 0.1\\n')\n"
        "put('calc_tools-0.1.dist-info/entry_points.txt',"
        " '[pytest11]\\ncalc_tools = calc_tools\\n')\n"
        f"put('calc_tools.py', {PLUGIN!r})\n"
        f"put('src/calc.py', {broken!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [], ran
    failures = project.read("docs/loop/state/failures.md")
    assert "calc_tools-0.1.dist-info/entry_points.txt" in failures, failures
    assert "defines how the gates run" in failures
    assert project.read("src/calc.py") == CALC and project.clean()
