"""What judges a candidate never runs from a folder shared with every box
(``RELAY_SANDBOX_SHARE``): a maker's box writes there too, so a gate's script kept in a
share could be rewritten by the maker whose change it judges. relay stops before any
maker runs, in one line naming the file, the share and what to do."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from loop_project import PY, TEST_GATE, Ran, make_project
from test_loop_box_removed import PERSONS_BOX, in_a_persons_box

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
    # named through the home folder or a variable, as an option's value, inside code
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("SHARED_TOOLS", str(share / "bin"))
    for named in ("sh ~/share/bin/lint", "sh $HOME/share/bin/lint", "sh ${SHARED_TOOLS}/lint"):
        assert shared_programs(named, "/usr/bin:/bin") == [(tool, share)], named
    script = share / "bin" / "check.py"  # a script named inside a word
    for named in (f"tool --run={script}", f"{PY} -c 'import runpy; runpy.run_path(\"{script}\")'"):
        assert shared_programs(named, "/usr/bin:/bin") == [(script, share)], named
    # data named inside a word (a log a metric appends to) is not a program run
    assert shared_programs(f'{PY} -c \'open("{share}/metric.log", "a")\'', "/bin") == []
    assert shared_programs(f"{PY} -m pytest -q", "/usr/bin:/bin") == []
    assert shared_programs("python -m pytest", path) == []
    with pytest.raises(LocalUsageError, match=rf"runs {tool}, in {share}.*move it out"):
        refuse_shared_programs(f"sh {tool}", "/usr/bin:/bin")
    with pytest.raises(LocalUsageError, match=rf"PATH holds {share / 'bin'}, in {share}.*list"):
        refuse_shared_programs("python -m pytest", path)  # a judge would not find its tools
    monkeypatch.setenv(JUDGED_SHARE_ENV, str(share))  # the person's word: no judge's code there
    refuse_shared_programs("python -m pytest", path)  # so a judge's PATH may hold it
    with pytest.raises(LocalUsageError, match=rf"runs {tool}, in {share}.*{JUDGED_SHARE_ENV}"):
        refuse_shared_programs("lint", path)  # but a judge that runs a file there breaks it
    with pytest.raises(LocalUsageError, match=rf"PATH holds {share / 'bin'}.*take it off PATH"):
        refuse_shared_programs("python -m pytest", path, "the checker", role=True)
    with pytest.raises(LocalUsageError, match=rf"runs {tool}, in {share}"):
        refuse_shared_programs("lint-link", f"{elsewhere}:/bin", "the checker", role=True)
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
    folder of its own unless the person lists it in RELAY_SANDBOX_SHARE_JUDGES. That
    folder takes what the judge writes (a tool's cache kept there works), which never
    reaches the share."""
    judges = tmp_path / "judges"
    judges.mkdir()
    seen = judges / "seen.py"
    scripts = tmp_path / "scripts"
    seen.write_text(
        "import pathlib, sys\n"
        f"share = pathlib.Path({str(scripts)!r})\n"
        "touched = '# touched' in pathlib.Path('src/calc.py').read_text()\n"
        "empty = not list(share.glob('*'))\n"
        "(share / 'cache').mkdir()\n"
        "(share / 'cache' / 'entry').write_text('cached by a judge')\n"
        "kept = (share / 'cache' / 'entry').read_text() == 'cached by a judge'\n"
        "sys.exit(0 if touched and empty and kept else 1)\n"
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
    assert not (scripts / "cache").exists()  # the judge's writes went with its box


def refused(ran: Ran) -> str:
    assert ran.status != 0, ran
    return " ".join(e.get("message", "") for e in ran.errors) or ran.stderr


@pytest.mark.parametrize("role", ["--checker", "--verifier", "--red-team"])
def test_a_role_kept_in_a_share_the_judges_see_stops_the_run_before_any_maker(
    tmp_path: Path, role: str
) -> None:
    """A checker, the verifier or a red team reads the change a maker made; kept in a share
    (which every maker's box writes, whatever RELAY_SANDBOX_SHARE_JUDGES says) the maker
    could rewrite it to approve its own change."""
    project = make_project(tmp_path)
    scripts = tmp_path / "scripts"
    assert str(scripts) in os.environ[JUDGED_SHARE_ENV].split(os.pathsep)
    review = scripts / "review.py"
    review.write_text('print(\'{"verdict": "approve", "findings": []}\')\n')
    maker = project.script("maker", "count('maker')\n")
    before = project.subjects()
    said = refused(project.loop("run", "--maker", maker, role, f"{PY} {review}"))
    assert f"runs {review}, in {scripts}" in said and "move it out of the share" in said, said
    assert project.calls("maker") == 0
    assert project.subjects() == before and project.clean()


def test_a_checker_whose_path_holds_a_share_stops_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--checker codex:review` with a share on PATH: a maker could put a `codex` there
    (none lies there yet) and review its own change."""
    project = make_project(tmp_path)
    shared_bin = tmp_path / "bin"  # shared with every box, judges' too (conftest)
    monkeypatch.setenv("PATH", f"{shared_bin}{os.pathsep}{os.environ['PATH']}")
    maker = project.script("maker", "count('maker')\n")
    said = refused(project.loop("run", "--maker", maker, "--checker", "codex:review"))
    assert f"PATH holds {shared_bin}, in {shared_bin}" in said, said
    assert "the checker `codex:review`" in said and "take it off PATH" in said, said
    assert project.calls("maker") == 0


def test_a_gate_in_a_share_listed_for_the_judges_stops_the_run(tmp_path: Path) -> None:
    """RELAY_SANDBOX_SHARE_JUDGES is the person's word that no code a judge runs lies in
    the share: a gate kept there contradicts it, and a maker could rewrite the gate."""
    scripts = tmp_path / "scripts"
    scripts.mkdir(exist_ok=True)
    gate = scripts / "lint.sh"
    gate.write_text("#!/bin/sh\nexit 0\n")
    project = make_project(tmp_path, gates=(TEST_GATE, f"sh {gate}"))
    assert str(scripts) in os.environ[JUDGED_SHARE_ENV].split(os.pathsep)
    maker = project.script("maker", "count('maker')\n")
    said = refused(project.loop("run", "--maker", maker))
    assert f"runs {gate}, in {scripts}, which {JUDGED_SHARE_ENV} lists" in said, said
    assert "move it out of the share" in said, said
    assert project.calls("maker") == 0


def test_a_judges_share_that_is_no_share_stops_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A typo in RELAY_SANDBOX_SHARE_JUDGES (or a folder never shared) would leave the
    judges without what the person meant them to see, silently."""
    project = make_project(tmp_path)
    typo = tmp_path / "scirpts"
    listed = os.environ[JUDGED_SHARE_ENV]
    monkeypatch.setenv(JUDGED_SHARE_ENV, os.pathsep.join([listed, str(typo)]))
    maker = project.script("maker", "count('maker')\n")
    said = refused(project.loop("run", "--maker", maker))
    assert f"{JUDGED_SHARE_ENV} names {typo}, which {SHARE_ENV} does not share" in said, said
    assert project.calls("maker") == 0
    monkeypatch.setenv(JUDGED_SHARE_ENV, listed)  # the entries that are shares: no refusal
    assert project.loop("run", "--maker", maker, "--dry-run").status == 0


# a judged box of an ordinary user's relay writes where a share it does not see lies
HIDDEN = (
    PERSONS_BOX
    + """
box = replace(box, shared=False)
ran(f"ls -A {share} && mkdir {share}/cache && echo hit > {share}/cache/entry"
    f" && cat {share}/cache/entry")
"""
)


def test_a_judged_box_of_an_ordinary_user_writes_an_unseen_share_of_its_own() -> None:
    """The same empty, writable folder of the box's own for a relay not run as root (its
    set-up is root only in a user namespace of its own)."""
    work = Path(tempfile.mkdtemp(prefix="relay-test-unseen-"))
    try:
        for each in ("tmp", "share"):
            (work / each).mkdir()
        (work / "share" / "from-maker").write_text("a maker was here")
        [said] = in_a_persons_box(HIDDEN, work)
        assert said[1] == "0" and said[2].startswith("['hit'] "), said  # nothing else
        assert sorted(p.name for p in (work / "share").iterdir()) == ["from-maker"]
    finally:
        subprocess.run(["rm", "-rf", str(work)], check=False)
