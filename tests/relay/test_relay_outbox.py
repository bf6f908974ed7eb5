"""A finished task's RESULT is never lost: kept before it is posted, finished by the next
pass after a hub outage, and a log that cannot be written is said in the RESULT."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from worlds import World, git

from relay.edges.local import NodeState
from relay.protocol.wire import decode_block

PY = Path(sys.executable).as_posix()


def outage_step(world: World) -> str:
    """A step that takes the hub down (every request answers 500) as the run ends."""
    hub = world.hub
    call = (
        "import json,urllib.request as u;"
        f"r=u.Request({hub.url + '/_hub/faults'!r},json.dumps({{'spec':'500=1'}}).encode(),"
        f"{{'Authorization':'token {hub.admin_token}'}},method='POST');u.urlopen(r)"  # type: ignore[attr-defined]
    )
    return f'"{PY}" -c "{call}"'


def test_a_result_kept_through_an_outage_is_posted_by_the_next_pass(world: World, job: int) -> None:
    c, w = world.controller, world.worker
    c.call("task", str(job), "--step", "python -V", "--step", outage_step(world))
    try:
        failed = w.run("watch", "--once")
    finally:
        world.hub.clear_faults()  # type: ignore[attr-defined]
    assert failed.returncode != 0  # the RESULT could not be posted
    state = NodeState.for_clone(w.clone)
    assert state.outbox() == {(job, 1)}
    kept = state.outbox_body(issue=job, task=1)
    assert kept is not None and decode_block(kept)["fields"]["status"] == "done"
    assert not any(c_["body"].startswith("### RESULT") for c_ in world.comments(job))
    out = w.call("watch", "--once")
    assert "the kept RESULT 1 was posted and handed back" in out and state.outbox() == set()
    results = [c_ for c_ in world.comments(job) if c_["body"].startswith("### RESULT 1")]
    assert len(results) == 1 and world.labels(job) == {"awaiting:controller"}
    assert "RESULT 1 is back: done" in c.call("watch", "--once")
    assert not any("half-done" in c_["body"].lower() for c_ in world.comments(job))
    log = json.dumps(world.comments(job))
    assert log.count("### RESULT 1") == 1


def test_a_log_that_cannot_be_written_is_said_in_the_result(world: World, job: int) -> None:
    c, w = world.controller, world.worker
    # relay writes logs in its own worktree at the remote's tip: block it there, in git
    blocker = c.clone / "docs" / "loop" / "relay" / str(job)
    blocker.parent.mkdir(parents=True, exist_ok=True)
    blocker.write_text("a file where the log folder should be\n")
    git("add", str(blocker), cwd=c.clone)
    git("commit", "-qm", "a file in the way", cwd=c.clone)
    git("push", "-q", "origin", "HEAD:main", cwd=c.clone, auth=world.git_auth())
    c.call("task", str(job), "--step", "python -V")
    out = w.call("watch", "--once")
    assert "RESULT 1 posted (partial" in out
    result = world.comments(job)[-1]["body"]
    assert "The log could not be written" in result and "Traceback" not in result


def test_a_pass_killed_while_pushing_the_log_loses_nothing(world: World, job: int) -> None:
    """The run finished; the pass dies inside `git push` of its log. The next pass pushes
    the kept log and posts the RESULT the run earned — not a half-done report."""
    import os
    import signal
    import subprocess
    import time

    flag = world.root / "pushing"
    hook = world.bare / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\ntouch {flag}\nsleep 20\n")
    hook.chmod(0o755)
    effect = world.root / "ran"
    step = f"\"{PY}\" -c \"open({str(effect)!r}, 'a').write('x')\""
    world.controller.call("task", str(job), "--step", step)
    w = world.worker
    proc = subprocess.Popen(w.argv("watch", "--once"), env=w.env(), start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        for _ in range(600):
            if flag.exists() or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert flag.exists(), "the pass never reached the push"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        hook.unlink()
    assert effect.read_text() == "x"
    out = w.call("watch", "--once")
    assert "the kept RESULT 1 was posted" in out, out
    [result] = [c for c in world.comments(job) if c["body"].startswith("### RESULT 1")]
    assert "### RESULT 1 · done" in result["body"] and "[result log](" in result["body"]
    assert not any(c["body"].startswith("### Half-done") for c in world.comments(job))
    assert effect.read_text() == "x", "the step ran once"
    import re

    sha = re.search(r"/blob/([0-9a-f]{40})/", result["body"])
    assert sha is not None
    on_main = subprocess.run(
        ["git", "merge-base", "--is-ancestor", sha.group(1), "main"], cwd=world.bare
    )
    assert on_main.returncode == 0, "the linked log is on the remote's main"
    state = NodeState.for_clone(w.clone)
    assert state.outbox() == set()
