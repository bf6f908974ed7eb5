"""The worker's turn under pressure: trust revoked mid-pass, labels added while a task
runs, a pass stopped by its scheduler, a branch that is not there, unpushed local work.

The passes whose process is the point (its output, a pass running beside the test, a pass
stopped by a signal) run as processes; the others' verdicts are what the pass posts, and
they run in this process (``Node.invoke``: a process costs half a CPU-second to start)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from worlds import WORKER, Node, World, git

PY = Path(sys.executable).as_posix()


def start(node: Node, *args: str) -> subprocess.Popen[str]:
    """A verb as a process that the test does not wait for."""
    return subprocess.Popen(
        node.argv(*args),
        env=node.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )


def test_an_account_removed_from_the_table_gives_no_more_instructions(
    world: World, job: int
) -> None:
    c, w = world.controller, world.worker
    c.call("task", str(job), "--step", "echo STALE-TRUST-RAN")
    # the worker's clone has not pulled yet; the table on the remote no longer trusts octo
    loop = c.clone / "docs/loop/LOOP.md"
    text = loop.read_text()
    row = next(line for line in text.splitlines() if line.startswith(f"| {WORKER} |"))
    cells = row.split("|")
    cells[3] = "  "  # the instruction accounts column
    loop.write_text(text.replace(row, "|".join(cells)))
    git("commit", "-qam", "untrust the controller", cwd=c.clone)
    git("push", "-q", "origin", "HEAD:main", cwd=c.clone, auth=world.git_auth())
    c.ok("nodes", "sign", "--yes")  # the admin signs the edit: a new roster revision

    done = w.run("watch", "--once")
    assert done.returncode == 0, done.stderr
    assert not any(h.startswith("### RESULT") for h in world.heads(job))
    assert not world.claim_refs()
    assert "STALE-TRUST-RAN" not in done.stdout


def test_labels_added_while_a_task_runs_are_kept(world: World, job: int) -> None:
    c, w = world.controller, world.worker
    c.call("task", str(job), "--step", f'"{PY}" -c "import time; time.sleep(2)"')
    proc = start(w, "watch", "--once")
    deadline = time.monotonic() + 30
    while "working" not in world.labels(job) and time.monotonic() < deadline:
        time.sleep(0.05)
    world.api(f"/issues/{job}/labels", "POST", {"labels": ["priority-high"]})
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert world.labels(job) == {"priority-high", "awaiting:controller"}


def test_a_stopped_pass_takes_its_running_step_with_it(
    world: World, job: int, tmp_path: Path
) -> None:
    c, w = world.controller, world.worker
    marker = tmp_path / "after-the-step"
    step = f'"{PY}" -c "import time; time.sleep(3); open({str(marker)!r}, \'w\')"'
    c.call("task", str(job), "--step", step)
    proc = start(w, "watch", "--once")
    deadline = time.monotonic() + 30
    while "working" not in world.labels(job) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # the step has started
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    assert proc.returncode != 0
    time.sleep(4)
    assert not marker.exists(), "the step ran on after its pass was stopped"


def test_a_missing_branch_fails_the_task_with_a_result(world: World, job: int) -> None:
    c, w = world.controller, world.worker
    c.call("task", str(job), "--step", "git --version", "--checkout", "no-such-branch")
    done = w.invoke("watch", "--once")
    assert done.returncode == 0, done.stderr
    result = world.comments(job)[-1]["body"]
    assert result.startswith("### RESULT 1 · failed"), result
    assert "could not be checked out; no step ran" in result
    assert "no-such-branch" in result
    assert world.labels(job) == {"awaiting:controller"}


def test_a_branch_task_leaves_the_clone_on_its_own_branch(world: World, job: int) -> None:
    c, w = world.controller, world.worker
    git("push", "-q", "origin", "main:feature", cwd=c.clone, auth=world.git_auth())
    c.call("task", str(job), "--step", "git rev-parse --abbrev-ref HEAD", "--checkout", "feature")
    assert w.invoke("watch", "--once").returncode == 0
    log = world.remote_file(f"docs/loop/relay/{job}/logs/result-001.log")
    assert "\nfeature\n" in log
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=w.clone).strip() == "main"


def test_unpushed_local_work_is_never_published_by_a_pass(world: World, job: int) -> None:
    c, w = world.controller, world.worker
    (w.clone / "local.txt").write_text("a person's work in progress\n")
    git("add", "local.txt", cwd=w.clone)
    git("commit", "-qm", "local work", cwd=w.clone)
    c.call("task", str(job), "--step", "test ! -e local.txt")
    done = w.invoke("watch", "--once")
    assert done.returncode == 0, done.stderr
    result = world.comments(job)[-1]["body"]
    assert result.startswith("### RESULT 1 · done"), result  # ran at the remote's commit
    assert "local work" not in git("log", "--format=%s", "main", cwd=world.bare)
    assert git("log", "-1", "--format=%s", cwd=w.clone).strip() == "local work"


def test_a_task_that_leaves_tracked_files_modified_says_so(world: World, job: int) -> None:
    c, w = world.controller, world.worker
    c.call("task", str(job), "--step", "echo scribble >> README.md")
    assert w.invoke("watch", "--once").returncode == 0
    result = world.comments(job)[-1]["body"]
    assert result.startswith("### RESULT 1 · done"), result
    assert "left tracked files modified (README.md) in relay's own worktree" in result
    assert "scribble" not in (w.clone / "README.md").read_text()  # the person's tree
    # the scribble is dropped before the next TASK, which runs
    c.call("watch", "--once")
    time.sleep(1.1)  # a whole task cycle within one second reads as the next TASK's claim
    c.call("task", str(job), "--step", "! grep -q scribble README.md")
    done = w.invoke("watch", "--once")
    assert done.returncode == 0, done.stderr
    second = world.comments(job)[-1]["body"]
    assert second.startswith("### RESULT 2 · done"), second
    assert world.labels(job) == {"awaiting:controller"}


def test_the_claims_lease_covers_every_step_running_to_its_timeout(world: World, job: int) -> None:
    """A second runner of the node waits a claim's lease out before it reports the task
    half-done; the lease must outlast the longest run this node allows."""
    from datetime import timedelta

    from relay.protocol import ClaimMsg, parse_message

    c, w = world.controller, world.worker
    w.call("join", "--step-timeout", "3600")
    c.call("task", str(job), "--step", "true", "--step", "true", "--step", "true")
    assert w.invoke("watch", "--once").returncode == 0
    bodies = [x["body"] for x in world.comments(job) if x["body"].startswith("### Claim")]
    assert len(bodies) == 1
    claim = parse_message(bodies[0], issue=job)
    assert isinstance(claim, ClaimMsg)
    assert claim.lease_until - claim.claimed_at >= timedelta(hours=3)


def test_a_fourth_strike_after_unparking_parks_again_and_every_verb_still_reads_it(
    world: World, job: int
) -> None:
    c = world.controller
    c.call("hypothesis", str(job), "The toolchain is stale.")
    for _ in range(3):
        c.call("strike", str(job))
    assert "needs:human" in world.labels(job)
    world.api(f"/issues/{job}/labels/needs:human", "DELETE")  # a person unparks it
    c.call("strike", str(job))  # the fourth
    assert world.labels(job) == {"awaiting:controller", "needs:human"}, "parked again"
    body = world.issue(job)["body"]
    assert "4 of 3" in body and "past the limit" in body
    status = c.call("status")
    assert f"#{job}" in status and "cannot be read" not in status
    for node in (c, world.worker):  # passes read it too (call fails the test on an error)
        assert "cannot be read" not in node.call("watch", "--once", "--verbose")
