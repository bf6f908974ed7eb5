"""A gate's pytest and coverage keep their temporary folders and data in its box's own,
whatever the person's environment names for them: PYTEST_DEBUG_TEMPROOT (which pytest
prefers to TMPDIR), a --basetemp in PYTEST_ADDOPTS (read by every pytest a gate runs), an
absolute COVERAGE_FILE. In a box in namespaces such a folder is one it cannot see: every
gate test asking for tmp_path failed, coverage wrote no data and nothing was kept. In a
box of the environment alone it is one every box of a run shares, and pytest empties a
--basetemp it is given as it starts: the person's folder."""

from __future__ import annotations

import shlex
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from loop_project import CALC_MUL, TEST_GATE, TEST_MUL, Project, make_project
from test_loop_box_agents import needs_namespaces

from relay.loop.guard import ALLOW_ENV_ONLY
from relay.ratchet.sandbox import without_basetemp


def _test_tmp(shared: Path) -> str:
    """A test of the candidate's that asks pytest for a temporary folder, not one in
    ``shared``."""
    return (
        "from calc import mul\n\n\ndef test_mul_in_a_folder(tmp_path):\n"
        "    (tmp_path / 'made').write_text('x')\n"
        f"    assert not str(tmp_path).startswith({str(shared)!r})\n"
        "    assert mul(2, 3) == 6\n"
    )


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder in the machine's temporary folder, as a person names one for pytest."""
    root = Path(tempfile.mkdtemp(prefix="relay-test-pytest-root-"))
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _maker(project: Project, shared: Path) -> str:
    return project.script(
        "maker",
        f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
        f"put('tests/test_tmp.py', {_test_tmp(shared)!r})\n",
    )


@needs_namespaces
@pytest.mark.parametrize("how", ["temproot", "basetemp"])
def test_a_gates_tmp_path_is_the_boxs_own_whatever_root_pytest_was_given(
    tmp_path: Path, shared: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    if how == "temproot":
        monkeypatch.setenv("PYTEST_DEBUG_TEMPROOT", str(shared))
    else:
        monkeypatch.setenv("PYTEST_ADDOPTS", f"-q --basetemp={shared / 'base'}")
    project = make_project(tmp_path, retries=0, gates=(TEST_GATE,))
    ran = project.loop("run", "--maker", _maker(project, shared))
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    assert list(shared.iterdir()) == []


@pytest.mark.parametrize("how", ["temproot", "basetemp"])
def test_an_env_level_boxs_pytest_root_is_its_own_and_the_persons_folder_is_left(
    tmp_path: Path, shared: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    monkeypatch.setenv("RELAY_SANDBOX", "env")
    if how == "temproot":
        monkeypatch.setenv("PYTEST_DEBUG_TEMPROOT", str(shared))
    else:
        monkeypatch.setenv("PYTEST_ADDOPTS", f"--basetemp {shlex.quote(str(shared / 'base'))}")
        (shared / "base").mkdir()
        (shared / "base" / "the-persons").write_text("kept")
    project = make_project(tmp_path, retries=0, gates=(TEST_GATE,))
    ran = project.loop("run", "--maker", _maker(project, shared), ALLOW_ENV_ONLY)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    if how == "temproot":
        assert list(shared.iterdir()) == []
    else:
        assert [p.name for p in shared.rglob("*")] == ["base", "the-persons"]


@needs_namespaces
def test_a_coverage_data_file_outside_the_box_is_not_the_gates(
    tmp_path: Path, shared: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COVERAGE_FILE", str(shared / ".coverage"))
    project = make_project(tmp_path, retries=0, coverage=True)
    maker = project.script(
        "maker", f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
    )
    ran = project.loop("run", "--maker", maker)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    assert list(shared.iterdir()) == []


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("-q --basetemp=/tmp/x -x", "-q -x"),
        ("--basetemp /tmp/x -q", "-q"),
        ("--basetemp '/tmp/a b' -k 'a and b'", "-k 'a and b'"),
        ("-q -x", "-q -x"),  # as given, not re-quoted
        ("-k 'open", "-k 'open"),  # pytest says what is wrong with it
        ("--basetemp", ""),
    ],
)
def test_only_basetemp_is_taken_out_of_pytests_options(given: str, kept: str) -> None:
    assert without_basetemp(given) == kept
