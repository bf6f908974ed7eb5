"""More breaks of the worker's memory that a task ran, against a real hub: mallory (push
access, in no row of the roster), and a worker with no local records (an Actions
runner). Each test asserts what relay promises."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from test_relay_seal_breaks import asked_again, delete_evidence, forget
from test_relay_trust import appends, as_login, mallory, runs
from worlds import OWNER, STRANGER, WORKER, World, git

from relay.edges.local import NodeState
from relay.protocol import log_path


def result_body(world: World, job: int, task: int) -> str:
    found = [c for c in world.comments(job) if c["body"].startswith(f"### RESULT {task}")]
    return str(found[0]["body"]) if found else ""


def test_deleting_an_answered_tasks_claim_refuses_every_later_task(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """TASK 1 ran and was answered. She deletes only its claim comment (the RESULT stays).
    The events hold one `working` of the node's and the thread one claim fewer, so a worker
    with no local records counts the honest TASK 2 as claimed before and never runs it
    (nor any TASK after it)."""
    mallory(world, monkeypatch)
    first, second = tmp_path / "ONE", tmp_path / "TWO"
    world.controller.call("task", str(job), "--step", appends(first))
    world.worker.call("watch", "--once")
    world.controller.call("watch", "--once")
    assert runs(first) == 1
    for comment in world.comments(job):
        if comment["body"].startswith("### Claim"):
            world.api(f"/issues/comments/{comment['id']}", "DELETE", login=STRANGER)
    time.sleep(1.1)  # a whole task cycle within one second is read as the next TASK's claim
    world.controller.call("task", str(job), "--step", appends(second))
    forget(world)
    out = world.worker.call("watch", "--once", "--verbose")
    assert runs(second) == 1, out + result_body(world, job, 2)


def drop_newest_log(world: World, clone: Path, job: int, task: int = 1) -> None:
    """Her force-push: main without its newest commit (the worker's log of ``task``); and
    the worker's clone as a fresh runner's (none of its refs or relay's tree hold it)."""
    as_login(world, STRANGER, "fetch", "-q", "origin", cwd=clone)
    assert log_path(job, task) in git("log", "-1", "--name-only", "origin/main", cwd=clone)
    git("checkout", "-qB", "rewrite", "origin/main~1", cwd=clone)
    as_login(world, STRANGER, "push", "-q", "-f", "origin", "rewrite:main", cwd=clone)
    mine = world.worker.clone
    git("worktree", "remove", "--force", str(mine / ".git" / "relay" / "worktree"), cwd=mine)
    as_login(world, OWNER, "fetch", "-q", "--prune", "origin", cwd=mine)
    git("reset", "-q", "--hard", "origin/main", cwd=mine)
    git("reflog", "expire", "--expire=now", "--all", cwd=mine)
    git("gc", "-q", "--prune=now", cwd=mine)
    assert not git("log", "--all", "--oneline", "--", log_path(job, task), cwd=mine).strip()


def test_her_working_label_then_a_rewritten_branch_never_run_a_task_twice(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The attack the reclaim answers, with the log hidden the way nothing else stops (the
    data branch rewritten without it): the events still hold the node's claim."""
    eve = mallory(world, monkeypatch)
    marker = tmp_path / "RAN"
    world.controller.call("task", str(job), "--step", appends(marker))
    world.api(f"/issues/{job}/labels", "PUT", {"labels": ["working"]}, login=STRANGER)
    world.worker.call("watch", "--once")
    assert runs(marker) == 1
    delete_evidence(world, job, 1)
    drop_newest_log(world, eve.clone, job)
    asked_again(world, job, marker)


def test_her_working_label_put_on_during_the_claim_never_runs_a_task_twice(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """She adds `working` (leaving `awaiting:worker`) after the worker's pass read the
    labels and before its claim moves the baton: the move finds `working` on already, so
    the node's account sets no `working` and the events hold no claim of TASK 1. She
    deletes claim, RESULT and ref, rewrites the data branch without the log, and a worker
    with no local records runs TASK 1 again."""
    import relay.node.execute as execute

    eve = mallory(world, monkeypatch)
    marker = tmp_path / "RAN"
    world.controller.call("task", str(job), "--step", appends(marker))
    move = execute.comment_then_move

    async def raced(*args: object, **kwargs: object) -> execute.Posted:
        if kwargs.get("to") == "working" and "working" not in world.labels(job):
            both = {"labels": ["awaiting:worker", "working"]}
            world.api(f"/issues/{job}/labels", "PUT", both, login=STRANGER)
        return await move(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(execute, "comment_then_move", raced)
    world.worker.call("watch", "--once")
    monkeypatch.setattr(execute, "comment_then_move", move)
    assert runs(marker) == 1
    delete_evidence(world, job, 1)
    drop_newest_log(world, eve.clone, job)
    asked_again(world, job, marker)


def test_a_retired_key_cannot_make_the_worker_refuse_a_later_task(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The worker rotated its key (the old one leaked: that is why). Whoever holds the old
    key seals a log for a TASK not even posted yet and pushes it on a branch of her own:
    the worker answers that TASK 'already ran' when it comes. A key retired before the
    TASK was posted cannot have sealed its log."""
    from relay.protocol.signatures import sign_body
    from relay.protocol.work import seal_line

    eve = mallory(world, monkeypatch)
    old = NodeState.for_clone(world.worker.clone).signing_key(WORKER)
    assert old is not None
    world.worker.call("join", "--node", WORKER, "--scheduler", "none", "--rotate-key")
    body, line = seal_line("nothing ran\n", issue=job, task=1, node=WORKER)
    forged = body + sign_body(line, repo=world.repo, private_key=old).rstrip("\n") + "\n"
    as_login(world, STRANGER, "fetch", "-q", "origin", cwd=eve.clone)
    git("checkout", "-qB", "notes", "origin/main", cwd=eve.clone)
    target = eve.clone / log_path(job, 1)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(forged.encode())
    git("add", "-A", cwd=eve.clone)
    git("commit", "-qm", "notes", cwd=eve.clone)
    as_login(world, STRANGER, "push", "-q", "origin", "notes", cwd=eve.clone)
    marker = tmp_path / "RAN"
    world.controller.call("task", str(job), "--step", appends(marker))
    out = world.worker.call("watch", "--once", "--verbose")
    assert runs(marker) == 1, out + result_body(world, job, 1)


def test_a_publish_leaves_relays_tree_clean(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """relay's tree commits a log without writing it: its files stay at the old commit, so
    the next TASK that does not check the tree out (a boxed one, a branch that is not
    there) is told it 'left tracked files modified': the previous task's log."""
    mallory(world, monkeypatch)
    marker = tmp_path / "RAN"
    world.controller.call("task", str(job), "--step", appends(marker))
    world.worker.call("watch", "--once")
    world.controller.call("watch", "--once")
    world.controller.call("task", str(job), "--step", appends(marker), "--checkout", "nowhere")
    world.worker.call("watch", "--once")
    said = result_body(world, job, 2)
    assert said and "left tracked files modified" not in said, said


def test_her_copies_on_the_data_branch_cost_a_pass_a_bounded_number_of_git_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Her commits on the data branch itself, each a small copy at a log's path (cheap to
    push): a pass reads a bounded number of them (200, the branch's oldest first, where
    the worker's own log is), in a few git processes, not one process a copy."""
    from relay.node.spine import versions_in_history

    repo = tmp_path / "r"
    git("init", "-q", "-b", "main", str(repo), cwd=tmp_path)
    path = log_path(1, 1)
    stream = []
    for n in range(300):
        data = f"copy {n}\n".encode()
        stream.append(b"commit refs/remotes/origin/main\ncommitter m <m@x> %d +0000\n" % n)
        stream.append(
            b"data 1\nx\nM 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data)
        )
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, input=b"".join(stream), check=True)
    spawned = []
    run = subprocess.run

    def counted(*args: object, **kwargs: object) -> object:
        spawned.append(args[0])
        return run(*args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(subprocess, "run", counted)
    read = list(versions_in_history(repo, path, first="main", largest=1_000_000))
    assert len(read) == 200 and read[0] == b"copy 0\n", read[:3]
    assert len(spawned) <= 10, f"{len(spawned)} git processes for one log's path"


def test_a_merge_that_drops_the_log_does_not_hide_it(tmp_path: Path) -> None:
    """No force-push needed (a protected data branch allows merges): she merges the data
    branch into a branch of hers that never had the log, drops the log in the merge and
    pushes the merge as the data branch. The merge is the same as her side at the log's
    path, so `git log -- PATH` follows her side only and never reaches the worker's
    commit, though it is still in the branch's history."""
    from relay.node.spine import versions_in_history

    repo = tmp_path / "r"
    git("init", "-q", "-b", "main", str(repo), cwd=tmp_path)
    (repo / "README").write_text("base\n")
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "base", cwd=repo)
    git("branch", "her", cwd=repo)
    path = log_path(1, 1)
    (repo / path).parent.mkdir(parents=True)
    (repo / path).write_text("sealed\n")
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "relay: log of TASK 1", cwd=repo)
    git("checkout", "-q", "her", cwd=repo)
    (repo / "hers").write_text("x\n")
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "hers", cwd=repo)
    git("merge", "-q", "--no-ff", "--no-commit", "main", cwd=repo)
    git("rm", "-qf", path, cwd=repo)
    git("commit", "-qm", "merge", cwd=repo)
    git("update-ref", "refs/remotes/origin/main", "HEAD", cwd=repo)
    git("checkout", "-q", "--detach", cwd=repo)
    git("branch", "-qD", "main", "her", cwd=repo)
    assert "relay: log of TASK 1" in git("log", "--format=%s", "origin/main", cwd=repo)
    read = list(versions_in_history(repo, path, first="main", largest=1_000_000))
    assert read == [b"sealed\n"]
