"""The soak (bench/soak.py) at a small size: a real hub faulting a fifth of the requests,
one job of two TASKs for a worker with two watchers racing on its clone, passes SIGKILLed
at random. What must hold, holds. The soak's CPU grows with its length and its watchers
(each passes all along), so the test keeps one worker: two workers with two watchers
each cost twice the CPU (measured 37 against 19 CPU-s) and are what `make soak` runs, at
full size (20 jobs of 5 TASKs, 3 workers)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench.soak import Size, soak


@pytest.mark.skipif(os.name == "nt", reason="the soak kills passes with SIGKILL")
@pytest.mark.timeout(600)  # about 40 s alone; several times that on a loaded machine
def test_a_small_soak_loses_nothing_and_runs_nothing_twice(tmp_path: Path) -> None:
    size = Size(jobs=1, tasks=2, workers=1, watchers=2, kill_chance=0.4, seed=3, timeout=240)
    report = soak(tmp_path, size)
    assert report.problems == [], "\n".join(report.lines())
    assert report.tasks == 2 and report.answered == 2 and report.stalled == 0
    assert report.results + report.half_done == 2, "exactly one answer a TASK"
    assert report.ran_twice == 0 and report.duplicate_comments == 0
    assert report.baton_violations == 0 and report.observations > 0
    assert report.lost_commits == 0
    assert sum(report.faults.values()) > 0, "the hub did inject faults"
    assert report.settle_seconds < 120
