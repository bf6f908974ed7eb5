"""`relay job repair` posts again a TASK whose comment is gone and that never ran."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_relay_trust import appends, as_login, mallory, runs
from worlds import STRANGER, World, git

from relay.protocol import log_path


def test_a_log_planted_on_her_branch_does_not_block_repair(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """She deletes the TASK before the worker sees it and pushes, on a branch of her own,
    a log file at its path: repair refuses to post it again, and it never runs."""
    eve = mallory(world, monkeypatch)
    marker = tmp_path / "RAN"
    world.controller.call("task", str(job), "--step", appends(marker))
    for comment in world.comments(job):
        if comment["body"].startswith("### TASK"):
            world.api(f"/issues/comments/{comment['id']}", "DELETE", login=STRANGER)
    planted = eve.clone / log_path(job, 1)
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.write_text("nothing ran\n")
    git("checkout", "-qb", "notes", cwd=eve.clone)
    git("add", "-A", cwd=eve.clone)
    git("commit", "-qm", "notes", cwd=eve.clone)
    as_login(world, STRANGER, "push", "-q", "origin", "notes", cwd=eve.clone)
    world.controller.run("watch", "--once")  # the controller's pass fetches
    repaired = world.controller.run("job", "repair", str(job))
    world.worker.call("watch", "--once")
    assert runs(marker) == 1, repaired.stdout + repaired.stderr
