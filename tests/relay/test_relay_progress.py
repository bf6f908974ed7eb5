"""Long waits say what they wait for: `relay result --wait` (the claim, then the steps'
elapsed time), a long step inside `relay watch --once` (which step, for how long); and the
status line itself: in place on a terminal, plain lines at a low rate otherwise."""

from __future__ import annotations

import io
import subprocess
import time

from worlds import WORKER, World

from relay.node.progress import Progress, duration


def test_plain_lines_come_at_a_low_rate_and_at_once_on_a_new_phase() -> None:
    now = [0.0]
    out = io.StringIO()
    progress = Progress(out, tty=False, every=60, clock=lambda: now[0])
    for second in range(0, 130, 5):
        now[0] = float(second)
        progress.say("unclaimed", f"waiting {second}")
    now[0] = 131.0
    progress.say("claimed", "claimed")
    progress.close()
    assert out.getvalue().splitlines() == ["waiting 0", "waiting 60", "waiting 120", "claimed"]


def test_a_terminal_line_updates_in_place_and_is_cleared() -> None:
    out = io.StringIO()
    progress = Progress(out, tty=True)
    progress.say("a", "one")
    progress.say("a", "two")
    progress.close()
    assert out.getvalue() == "\r\033[Kone\r\033[Ktwo\r\033[K"
    assert [duration(s) for s in (5, 185, 3720)] == ["5s", "3m05s", "1h02m"]


def test_result_wait_and_a_long_step_say_what_they_wait_for(world: World, job: int) -> None:
    c, w = world.controller, world.worker
    # the step line goes to a terminal or a scheduler log: redacted like the rest
    step = "sleep 12; true password=Hunter2Secret"
    c.ok("task", str(job), "--step", step, "--scope", "diagnostics")
    waiting = subprocess.Popen(
        c.argv("result", str(job), "--wait", "--poll", "0.5"),
        env=c.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(4)  # past the quiet start: the wait says it waits for the claim
    worked = w.run("watch", "--once")
    out, err = waiting.communicate(timeout=60)
    assert worked.returncode == 0, worked.stderr
    said = f"#{job} TASK 1: step 1/1 `sleep 12; true password=[redacted:secret]` running for 1"
    assert said in worked.stderr, worked.stderr
    assert "Hunter2Secret" not in worked.stderr
    assert waiting.returncode == 0, err
    assert f"#{job}: waiting for {WORKER} to claim TASK 1 (baton awaiting:worker" in err
    assert f"#{job}: {WORKER} claimed TASK 1; its steps have run for" in err
    assert f"#{job} RESULT 1: done" in out
    # not a terminal: a line per phase, not one a poll
    assert len(err.splitlines()) <= 4, err


def test_the_default_wait_covers_the_claims_lease() -> None:
    """Before a claim: the pick-up time from the TASK's posting; once claimed: the claim's
    lease (every step to its timeout, at least two hours) and a margin — never the 600 s
    that a default step timeout alone would give."""
    from datetime import UTC, datetime, timedelta
    from types import SimpleNamespace
    from typing import Any

    from relay.commands.result import ANSWER_MARGIN, PICK_UP, wait_deadline
    from relay.protocol.messages import ClaimMsg, TaskMsg
    from relay.protocol.thread import Entry, Thread
    from relay.protocol.work import RunLimits, lease_until

    posted = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    comment: Any = SimpleNamespace(created_at=posted)
    task = TaskMsg.model_construct(task=1, steps=("make", "make test"))
    none: Any = None
    thread = Thread(issue=none, job=none, state=none, tasks={1: Entry(task, comment)})
    assert wait_deadline(thread, 1, posted) == posted + timedelta(seconds=PICK_UP)
    later = posted + timedelta(hours=1)  # a wait begun long after: pick-up from then
    assert wait_deadline(thread, 1, later) == later + timedelta(seconds=PICK_UP)
    claimed_at = posted + timedelta(minutes=3)
    lease = lease_until(claimed_at, steps=2, limits=RunLimits())
    claim = ClaimMsg.model_construct(task=1, claimed_at=claimed_at, lease_until=lease)
    thread.claims[1] = Entry(claim, comment)
    deadline = wait_deadline(thread, 1, posted)
    assert deadline == lease + timedelta(seconds=ANSWER_MARGIN)
    assert deadline - claimed_at > timedelta(seconds=2 * 600)
