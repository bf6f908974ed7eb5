"""The redaction benches as ``python -m bench`` runs them: their flags reach them, and a
missed goal is a non-zero exit, so that a script or CI can gate on them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.bench_redact_field import FALSE_ALARM_GOAL, RECALL_GOAL, goals_met

ROOT = Path(__file__).resolve().parents[2]


def bench(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "bench", *args]
    return subprocess.run(
        command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=300, check=False
    )


def test_the_field_bench_takes_misses_through_the_runner_and_exits_zero_when_met() -> None:
    done = bench("redact_field", "--misses")
    assert done.returncode == 0, done.stderr
    assert "met: recall at least 99%" in done.stdout
    assert "misses and false alarms:" in done.stdout  # the flag reached the module


def test_an_unknown_bench_is_one_line_and_a_non_zero_exit() -> None:
    done = bench("no_such_bench")
    assert done.returncode != 0
    assert "no benchmark 'no_such_bench'" in done.stderr


@pytest.mark.parametrize(
    ("recall", "alarms", "met"),
    [
        (RECALL_GOAL, FALSE_ALARM_GOAL, (True, True)),
        (RECALL_GOAL - 0.0001, 0, (False, True)),
        (1.0, FALSE_ALARM_GOAL + 1, (True, False)),
    ],
)
def test_the_field_goals_are_recall_at_least_and_alarms_at_most(
    recall: float, alarms: int, met: tuple[bool, bool]
) -> None:
    assert goals_met({"recall": recall, "false_alarms": alarms}) == met
