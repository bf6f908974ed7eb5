"""Each run's role transcripts are kept under the spine's state, one folder a run named as
its gate logs' folder (git ignores it), and linked from the run's report in handover.md;
relay's own copy in its git directory stays where it was."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from loop_project import make_project
from test_loop_ratchet import GOOD, approve

from relay.ratchet.measure import KEEP_LOGS, TRANSCRIPT_LOGS


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def test_a_runs_transcripts_are_kept_under_the_state_and_linked(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    maker = project.script("maker", "print('the maker says hello')\n" + GOOD)
    checker = project.script("checker", "print('the checker read it')\n" + approve("checker"))
    ran = project.loop("run", "--maker", maker, "--checker", checker)
    assert ran.status == 0, ran
    folder = ran.data["transcripts"]
    gate_run = Path(ran.data["gate_logs"]).name
    assert folder == f"{TRANSCRIPT_LOGS}/{gate_run}", ran.data
    kept = project.root / folder
    made = (kept / "G1-attempt-1-maker.log").read_text()
    assert made.startswith("$ ") and "the maker says hello" in made
    reviews = [p for p in kept.glob("*.log") if "checker" in p.name]
    assert reviews and "the checker read it" in reviews[0].read_text()
    # the report links the folder, relative to handover.md
    handover = project.read("docs/loop/handover.md")
    [link] = re.findall(r"Transcripts: \[(state/transcripts/run-[^\]]+/)\]\(\1\)", handover)
    assert (project.root / "docs/loop" / link / "G1-attempt-1-maker.log").is_file()
    # git ignores the folder; relay's own copy is where it was
    assert project.git("status", "--porcelain") == ""
    assert (project.root / ".git/relay/loop/transcripts/G1-attempt-1-maker.log").is_file()

    # a run whose roles run nothing new links none; the next run's folder holds its own alone
    again = project.loop("run", "--maker", maker)
    assert again.status == 0 and again.data["transcripts"] is None, again
    assert (
        "Transcripts:" not in project.read("docs/loop/handover.md").split("## Loop run report")[-1]
    )


def test_transcript_folders_are_kept_as_long_as_gate_logs(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    old = project.root / TRANSCRIPT_LOGS
    for n in range(KEEP_LOGS + 3):
        (old / f"run-20260101T0000{n:02d}.000000Z").mkdir(parents=True)
    maker = project.script("maker", GOOD)
    ran = project.loop("run", "--maker", maker)
    assert ran.status == 0, ran
    folders = sorted(p.name for p in old.iterdir() if p.is_dir())
    assert len(folders) == KEEP_LOGS and folders[-1] == Path(ran.data["transcripts"]).name
