"""What judges a candidate never runs from a folder shared with every box
(``RELAY_SANDBOX_SHARE``): a maker's box writes there too, so a gate's script kept in a
share could be rewritten by the maker whose change it judges. relay stops before any
maker runs, in one line naming the file, the share and what to do."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from loop_project import PY, TEST_GATE, make_project

from relay.errors import LocalUsageError
from relay.ratchet.sandbox import (
    JUDGED_SHARE_ENV,
    SHARE_ENV,
    refuse_shared_programs,
    shared_programs,
)


def test_a_program_found_through_a_shared_folder_or_named_in_one_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    share = tmp_path / "share"
    (share / "bin").mkdir(parents=True)
    tool = share / "bin" / "lint"
    tool.write_text("#!/bin/sh\nexit 0\n")
    tool.chmod(0o755)
    elsewhere = tmp_path / "other-bin"
    elsewhere.mkdir()
    (elsewhere / "lint-link").symlink_to(tool)
    monkeypatch.setenv(SHARE_ENV, str(share))
    path = f"{share / 'bin'}:/usr/bin:/bin"
    assert shared_programs("lint --strict", path) == [(tool, share)]
    assert shared_programs(f"sh {share}/bin/lint", "/usr/bin:/bin") == [(tool, share)]
    assert shared_programs("X=1 lint && true", path) == [(tool, share)]
    assert shared_programs("lint-link", f"{elsewhere}:/bin") == [(tool, share)]
    assert shared_programs(f"{PY} -m pytest -q", "/usr/bin:/bin") == []
    assert shared_programs("python -m pytest", path) == []
    with pytest.raises(LocalUsageError, match=rf"runs {tool}, in {share}.*move it out"):
        refuse_shared_programs(f"sh {tool}", "/usr/bin:/bin")
    with pytest.raises(LocalUsageError, match=rf"PATH holds {share / 'bin'}, in {share}.*list"):
        refuse_shared_programs("python -m pytest", path)  # a judge would not find its tools
    monkeypatch.setenv(JUDGED_SHARE_ENV, str(share))  # the person vouches: a judge sees it
    refuse_shared_programs("lint", path)
    monkeypatch.delenv(SHARE_ENV)
    assert shared_programs("lint", path) == []


def test_a_run_whose_gate_lies_in_a_share_stops_before_any_maker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scripts = tmp_path / "scripts"  # the loop tests' shared folder (see conftest)
    scripts.mkdir(exist_ok=True)
    gate = scripts / "lint.sh"
    gate.write_text("#!/bin/sh\nexit 0\n")
    gate.chmod(0o755)
    project = make_project(tmp_path, gates=(TEST_GATE, f"sh {gate}"))
    assert str(scripts) in os.environ[SHARE_ENV].split(os.pathsep)
    monkeypatch.delenv(JUDGED_SHARE_ENV)  # (listed there, the person vouches for it)
    maker = project.script("maker", "count('maker')\n")
    before = project.subjects()
    ran = project.loop("run", "--maker", maker)
    assert ran.status != 0, ran
    said = " ".join(e.get("message", "") for e in ran.errors) or ran.stderr
    assert f"runs {gate}, in {scripts}" in said and "move it out of the share" in said, ran
    assert project.calls("maker") == 0
    assert project.subjects() == before and project.clean()


def test_what_judges_a_candidate_sees_no_share_a_maker_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The maker's box writes the share; the candidate's acceptance (kept out of the share,
    as relay asks) finds nothing there: a judged box has each share behind an empty
    folder unless the person lists it in RELAY_SANDBOX_SHARE_JUDGES."""
    judges = tmp_path / "judges"
    judges.mkdir()
    seen = judges / "seen.py"
    scripts = tmp_path / "scripts"
    seen.write_text(
        "import pathlib, sys\n"
        f"share = pathlib.Path({str(scripts)!r})\n"
        "touched = '# touched' in pathlib.Path('src/calc.py').read_text()\n"
        "sys.exit(0 if touched and not list(share.glob('*')) else 1)\n"
    )
    project = make_project(tmp_path, accept=f"{PY} {seen}")
    monkeypatch.delenv(JUDGED_SHARE_ENV)
    maker = project.script(
        "maker",
        "count('maker')\n"
        "(SCRIPTS / 'from-maker').write_text('a maker was here')\n"
        "put('src/calc.py', open('src/calc.py').read() + '\\n# touched\\n')\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.status == 0, ran
    assert project.calls("maker") >= 1, ran
    assert (scripts / "from-maker").exists(), ran
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
