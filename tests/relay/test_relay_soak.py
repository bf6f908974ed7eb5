"""The soak (bench/soak.py) at a small size: a real hub faulting a fifth of the requests,
two workers with two watchers each, passes SIGKILLed at random. What must hold, holds.
Two TASKs a job: the soak's CPU grows with its length (four watchers pass all along);
`make soak` runs the full size."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench.soak import Size, soak


@pytest.mark.skipif(os.name == "nt", reason="the soak kills passes with SIGKILL")
@pytest.mark.timeout(600)  # about 70 s alone; several times that on a loaded machine
def test_a_small_soak_loses_nothing_and_runs_nothing_twice(tmp_path: Path) -> None:
    size = Size(jobs=2, tasks=2, workers=2, watchers=2, kill_chance=0.4, seed=3, timeout=240)
    report = soak(tmp_path, size)
    assert report.problems == [], "\n".join(report.lines())
    assert report.tasks == 4 and report.answered == 4 and report.stalled == 0
    assert report.results + report.half_done == 4, "exactly one answer a TASK"
    assert report.ran_twice == 0 and report.duplicate_comments == 0
    assert report.baton_violations == 0 and report.observations > 0
    assert report.lost_commits == 0
    assert sum(report.faults.values()) > 0, "the hub did inject faults"
    assert report.settle_seconds < 120
