"""The event-driven round-trip benchmark runs, here with two round trips in tmp_path.

The figures it prints are for people (``make bench``); this test only checks that every
round trip completed through deliveries alone and that the report says so.
"""

from __future__ import annotations

from pathlib import Path

from bench import bench_events


def test_the_event_bench_measures_round_trips_and_takes_a_turn_apart(tmp_path: Path) -> None:
    figures = bench_events.measure(tmp_path, runs=2)
    text = bench_events.report(figures)
    print(text)
    assert len(figures.seconds) == 2 and all(0 < s < 10 for s in figures.seconds), text
    assert "median of 2" in text
    assert 0 < figures.turn < 10
    assert len(figures.phases["git commit + push (log)"]) == 1  # one log per task
    assert figures.phases["run the steps"] and figures.phases["API POST/PATCH/PUT"]
