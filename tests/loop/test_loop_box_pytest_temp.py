"""pytest in a box keeps its temporary folders in the box's own, whatever root the person
set for pytest's (PYTEST_DEBUG_TEMPROOT, which pytest prefers to TMPDIR): a root outside
the box is a folder the box cannot see, where every gate test that asks for a temporary
folder failed, and one other runs share, whose older folders each pytest run removes."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from loop_project import CALC_MUL, TEST_GATE, TEST_MUL, make_project
from test_loop_box_agents import needs_namespaces


def _test_tmp(shared: Path) -> str:
    """A test of the candidate's that asks pytest for a temporary folder: not one in
    ``shared``, and no root for pytest's folders but the box's own."""
    return (
        "import os\n\nfrom calc import mul\n\n\ndef test_mul_in_a_folder(tmp_path):\n"
        "    (tmp_path / 'made').write_text('x')\n"
        "    assert 'PYTEST_DEBUG_TEMPROOT' not in os.environ\n"
        f"    assert not str(tmp_path).startswith({str(shared)!r})\n"
        "    assert mul(2, 3) == 6\n"
    )


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


@pytest.fixture
def shared() -> Iterator[Path]:
    """A root for pytest's folders in the machine's temporary folder, as a person sets one."""
    root = Path(tempfile.mkdtemp(prefix="relay-test-pytest-root-"))
    yield root
    shutil.rmtree(root, ignore_errors=True)


@needs_namespaces
def test_a_gates_tmp_path_is_the_boxs_own_whatever_root_pytest_was_given(
    tmp_path: Path, shared: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_DEBUG_TEMPROOT", str(shared))
    project = make_project(tmp_path, retries=0, gates=(TEST_GATE,))
    maker = project.script(
        "maker",
        f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
        f"put('tests/test_tmp.py', {_test_tmp(shared)!r})\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    assert list(shared.iterdir()) == []  # nothing of the box's in the shared root
