"""`relay demo` end to end, and the relay bench's round trips, both built on relay.commands.demo.

Both run the real CLI as processes against their own `relay hub`, everything in tmp_path.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from bench import bench_relay
from relay.commands import demo as d


def test_the_demo_runs_the_main_job_and_times_its_round_trips(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    said: list[str] = []
    timings = d.run_demo(said.append, keep=tmp_path / "demo")
    text = "\n".join(said)
    assert f"{d.CONTROLLER} opened job #1; {d.WORKER} is its worker" in text
    assert "relay is set up in" in text and "registered win-desktop" in text
    assert "compiler check: ok" in text and "[closed]" in text
    loops = [s for what, s in timings.items() if what.startswith("round trip")]
    assert len(loops) == 3 and all(0 < s < 60 for s in loops), timings


def test_the_bench_round_trips_go_through_both_watch_loops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bench_relay, "ROUND_TRIPS", 2)
    with d.running_hub(tmp_path / "hub") as hub:
        demo = d.setup(tmp_path, hub, lambda _line: None)
        d.set_up_relay(demo)
        seconds = bench_relay.round_trips(demo)
        assert len(seconds) == 2 and all(0 < s < 60 for s in seconds), seconds
        assert d.wait_for(demo.baton_home, timeout=60) >= 0
        assert demo.comments()[-1]["body"].startswith("### RESULT 2 ")
