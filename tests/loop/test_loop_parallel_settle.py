"""A maker's node job is ended even when the run breaks: a parallel run whose one maker
fails with an error while another goal's maker (a node's, under a relay job) is still
working waits for it, then ends that job with relay's word that the run stopped before
judging it, and the error still ends the run."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from loop_project import goals_project
from test_loop_parallel_group import _accept

from relay.loop.goals import Goal
from relay.ratchet.engine import Ratchet
from relay.ratchet.judge import Options
from relay.ratchet.parallel import Candidate, Fanout


@pytest.mark.timeout(120)
def test_a_running_node_job_is_settled_when_the_run_raises(tmp_path: Path) -> None:
    project = goals_project(
        tmp_path, [("Mul", _accept("mul"), (), None), ("Beta", _accept("beta"), (), None)]
    )
    ratchet = Ratchet(project.root, Options(maker="true"), say=lambda line: None)
    settled: list[tuple[str, int, str]] = []

    def make(goal: Goal, base: str) -> Candidate:
        """G1's node is gone after a moment; G2's node hands back its candidate later."""
        if goal.id == "G1":
            time.sleep(0.5)
            raise RuntimeError("the hub went away")
        time.sleep(1.5)
        row = ratchet.spine.board().row_of(goal)
        return Candidate(goal.id, base, row, patch="", explanation="", stopped="", job=42)

    def settle(candidate: Candidate, verdict: str) -> None:
        settled.append((candidate.goal, candidate.job, verdict))

    fanout = Fanout(ratchet, makers=2, make=make, settle=settle)
    said: list[str] = []
    ratchet.say = said.append
    with pytest.raises(RuntimeError, match="the hub went away"):
        ratchet.run(fanout.loop)
    assert settled == [("G2", 42, "the run stopped before judging it")], said
    assert project.clean(), project.git("status", "--short")
