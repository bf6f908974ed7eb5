"""A collaborator with push access deletes a TASK before the worker sees it and puts, on a
branch of her own, a log at the path of that TASK and of the next numbers: repair posts the
TASK again, and the worker runs the repost: a log file is the worker's memory that a task
ran only when the worker's own key sealed it."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_relay_trust import appends, as_login, mallory, runs
from worlds import STRANGER, World, git

from relay.protocol import log_path


def test_logs_planted_for_the_next_numbers_do_not_stop_the_repost(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    eve = mallory(world, monkeypatch)
    marker = tmp_path / "RAN"
    world.controller.call("task", str(job), "--step", appends(marker))
    for comment in world.comments(job):
        if comment["body"].startswith("### TASK"):
            world.api(f"/issues/comments/{comment['id']}", "DELETE", login=STRANGER)
    for task in range(1, 6):
        planted = eve.clone / log_path(job, task)
        planted.parent.mkdir(parents=True, exist_ok=True)
        planted.write_text("nothing ran\n")
    git("checkout", "-qb", "notes", cwd=eve.clone)
    git("add", "-A", cwd=eve.clone)
    git("commit", "-qm", "notes", cwd=eve.clone)
    as_login(world, STRANGER, "push", "-q", "origin", "notes", cwd=eve.clone)
    world.controller.run("watch", "--once")
    repaired = world.controller.run("job", "repair", str(job))
    done = world.worker.run("watch", "--once")
    assert runs(marker) == 1, repaired.stdout + repaired.stderr + done.stdout + done.stderr
