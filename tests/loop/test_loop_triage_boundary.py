"""Triage and `relay doctor` run the gates on HEAD, which holds kept changes a maker
wrote: they run them in a sandboxed clone of HEAD behind the maker's boundary, never in
the person's clone. A kept test that acts only where relay's token is (the person's
clone, where triage and the doctor used to run it) reaches nothing of the person's."""

from __future__ import annotations

import io
import json
import shlex
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from loop_project import CALC_MUL, TEST_GATE, TEST_MUL, for_boxes, make_project
from test_loop_judged_boundary import NOTHING, VICTIM, held, reach, with_origin_and_token

from relay.ratchet.sandbox import NAMESPACES, level

needs_namespaces = pytest.mark.skipif(
    level() != NAMESPACES, reason="this machine cannot make user and mount namespaces"
)


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    VICTIM.write_text("the person's file\n")  # what held() reads: no write followed a link


def reached(where: Path) -> list[dict[str, object]]:
    """What every import of the kept test reached, one record an import."""
    return [json.loads(p.read_text()) for p in sorted(where.glob("*.json"))]


@needs_namespaces
def test_a_kept_test_reaches_nothing_when_triage_and_doctor_run_the_gates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, real_crontab: None
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("# the person's\n")
    monkeypatch.setenv("HOME", str(home))
    project = make_project(tmp_path, retries=0, gates=(TEST_GATE,))
    origin, before = with_origin_and_token(project, tmp_path)
    out = project.scripts / "reached"  # shared with the boxes (the loop tests' conftest)
    out.mkdir()
    for_boxes(out)
    # an honest-looking test whose import tries every way out, and acts where relay's
    # token is beside it (the person's clone)
    probe = reach(project, origin, home, Path("FOUND"), "kept").replace(
        "pathlib.Path('FOUND')", f"(pathlib.Path({str(out)!r}) / (uuid.uuid4().hex + '.json'))"
    )
    beside = "got['beside_token'] = os.path.exists('.git/relay/token')\n"
    module = (
        "import uuid\n"
        + probe.replace("got = {}\n", "got = {}\n" + beside)
        + "\n\nfrom calc import add\n\n\ndef test_add_more():\n    assert add(2, 2) == 4\n"
    )
    maker = project.script(
        "maker",
        f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
        f"put('tests/test_more.py', {module!r})\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    assert "tests/test_more.py" in project.git("ls-files")
    # the clone path shows relay's own clone in the box, its git folder read-only
    nothing = {**NOTHING, "beside_token": False}
    seen = len(reached(out))
    assert seen >= 1 and all(r == nothing for r in reached(out)), reached(out)

    triaged = project.loop("triage")
    assert triaged.status == 0, triaged
    assert len(reached(out)) > seen and all(r == nothing for r in reached(out)), reached(out)
    held(project, origin, before, home)
    seen = len(reached(out))

    contract = project.read("docs/loop/CONTRACT.md")
    line = next(x for x in contract.splitlines() if x.startswith("`relay loop run"))
    run = f"`` relay loop run --maker {shlex.quote(maker)} ``"
    project.write("docs/loop/CONTRACT.md", contract.replace(line, run))
    project.git("commit", "-qam", "the run command the schedule uses")
    assert project.loop("schedule", "--at", "04:00", "--scheduler", "cron").status == 0
    from relay.cli import main

    got = io.StringIO()
    with redirect_stdout(got), redirect_stderr(io.StringIO()):
        status = main(["doctor", "--repo-dir", str(project.root), "--json"])
    checks = {c["name"]: c for c in json.loads(got.getvalue())["data"]["checks"]}
    assert checks["loop gate test"]["status"] == "ok", checks
    assert status == 0, checks
    assert len(reached(out)) > seen and all(r == nothing for r in reached(out)), reached(out)
    held(project, origin, before, home)
    assert project.clean()
