"""A TASK that names the commit its branch must be at (``relay task --commit``), and one
whose steps run in the worker's judged box (``--boxed``), against a real hub: what a
collaborator who can push branches and edit comments can make the worker run. The
commit is signed with the TASK; the worker runs nothing when the branch is elsewhere
(one line in its RESULT), and its RESULT names the commit it ran at."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from worlds import STRANGER, World, data_of, git

from relay.protocol import TaskMsg, render_message
from relay.protocol.wire import decode_block, encode_block
from relay.ratchet.sandbox import NAMESPACES, level

PY = Path(sys.executable).as_posix()

needs_namespaces = pytest.mark.skipif(
    level() != NAMESPACES, reason="this machine cannot make user and mount namespaces"
)


def writes(marker: Path) -> str:
    return f'"{PY}" -c "open({str(marker)!r}, \'w\')"'


def pushed_over(world: World, branch: str) -> str:
    """Someone who may push branches puts a commit of hers on ``branch``; its sha."""
    theirs = world.clone("theirs")
    (theirs / "theirs.txt").write_text("not the controller's\n")
    git("add", "theirs.txt", cwd=theirs)
    git("commit", "-qm", "theirs", cwd=theirs)
    git("push", "-q", "--force", "origin", f"HEAD:{branch}", cwd=theirs, auth=world.git_auth())
    return git("rev-parse", "HEAD", cwd=theirs).strip()


def newest_result(world: World, job: int) -> dict[str, object]:
    result: dict[str, object] = data_of(world.controller.ok("result", str(job), "--json"))
    return result


def test_a_branch_pushed_over_after_the_task_runs_nothing_and_says_so_in_one_line(
    world: World, job: int, tmp_path: Path
) -> None:
    c, w = world.controller, world.worker
    git("push", "-q", "origin", "main:feature", cwd=c.clone, auth=world.git_auth())
    pinned = git("rev-parse", "main", cwd=c.clone).strip()
    marker = tmp_path / "RAN"
    c.call("task", str(job), "--step", writes(marker), "--checkout", "feature", "--commit", pinned)
    theirs = pushed_over(world, "feature")
    assert w.invoke("watch", "--once").returncode == 0
    assert not marker.exists()  # no step ran
    body = world.comments(job)[-1]["body"]
    assert body.startswith("### RESULT 1 · blocked"), body
    data = newest_result(world, job)
    result = data["result"]
    assert isinstance(result, dict)
    summary = str(result["summary"])
    assert summary == (
        f"Not run: branch `feature` is at {theirs[:12]}, not at {pinned[:12]}, the commit this"
        " TASK names (pushed over since it was posted?)."
    )
    assert result["commit"] is None  # it vouches for no commit
    log = world.remote_file(f"docs/loop/relay/{job}/logs/result-001.log")
    assert "[no step ran]" in log


def test_a_branch_at_its_commit_runs_and_the_result_names_the_commit(
    world: World, job: int
) -> None:
    c, w = world.controller, world.worker
    git("push", "-q", "origin", "main:feature", cwd=c.clone, auth=world.git_auth())
    pinned = git("rev-parse", "main", cwd=c.clone).strip()
    pin = ("--checkout", "feature", "--commit", pinned)
    c.call("task", str(job), "--step", "git rev-parse HEAD", *pin)
    task = world.comments(job)[-1]["body"]
    assert f"**Check out:** `feature` at `{pinned}`" in task
    assert w.invoke("watch", "--once").returncode == 0
    result = newest_result(world, job)["result"]
    assert isinstance(result, dict)
    assert (result["status"], result["commit"]) == ("done", pinned)
    assert f"**Commit:** `{pinned}`" in world.comments(job)[-1]["body"]
    assert pinned in world.remote_file(f"docs/loop/relay/{job}/logs/result-001.log")


def test_a_commit_without_its_branch_and_a_box_without_its_commit_are_refused(
    world: World, job: int
) -> None:
    c = world.controller
    sha = git("rev-parse", "main", cwd=c.clone).strip()
    alone = c.invoke("task", str(job), "--step", "true", "--commit", sha)
    assert alone.returncode != 0 and "names the branch it is on (--checkout)" in alone.stderr
    bare = c.invoke("task", str(job), "--step", "true", "--checkout", "main", "--boxed")
    assert bare.returncode != 0 and "names the commit its box is a clone of" in bare.stderr
    short = c.invoke("task", str(job), "--step", "true", "--checkout", "main", "--commit", sha[:7])
    assert short.returncode != 0 and "--commit" in short.stderr
    assert not world.comments(job)


def test_a_task_whose_commit_a_collaborator_edited_is_never_run(
    world: World, job: int, tmp_path: Path
) -> None:
    world.tokens(STRANGER)
    world.api(f"/collaborators/{STRANGER}", "PUT", {})
    c = world.controller
    git("push", "-q", "origin", "main:feature", cwd=c.clone, auth=world.git_auth())
    pinned = git("rev-parse", "main", cwd=c.clone).strip()
    marker = tmp_path / "RAN"
    task = TaskMsg(
        issue=job, node=c.name, task=1, objective="Check.", steps=(writes(marker),),
        checkout="feature", commit=pinned,
    )  # fmt: skip
    signed = world.signed(c, render_message(task))
    theirs = pushed_over(world, "feature")
    # her edit names her commit and keeps the controller's real signature
    evil = render_message(task.model_copy(update={"commit": theirs}))
    payload = {**decode_block(evil), "sig": decode_block(signed)["sig"]}
    tampered = evil[: evil.rindex("<!-- relay:")] + encode_block(payload) + "\n"
    for _ in range(10):  # until the edit lands in the second the comment was made
        made = world.api(f"/issues/{job}/comments", "POST", {"body": signed})
        path = f"/issues/comments/{made['id']}"
        edited = world.api(path, "PATCH", {"body": tampered}, login=STRANGER)
        if edited["updated_at"] == edited["created_at"]:
            break
        world.api(path, "DELETE")
    assert edited["body"] == tampered
    world.api(f"/issues/{job}/labels", "PUT", {"labels": ["awaiting:worker"]})
    out = world.worker.ok("watch", "--once", "--verbose")
    assert "does not verify by" in out
    assert not marker.exists()
    assert not any("### RESULT" in c["body"] for c in world.comments(job))


@needs_namespaces
def test_a_boxed_task_runs_in_a_judged_box_never_beside_the_workers_clone(
    world: World, job: int
) -> None:
    c, w = world.controller, world.worker
    git("push", "-q", "origin", "main:feature", cwd=c.clone, auth=world.git_auth())
    pinned = git("rev-parse", "main", cwd=c.clone).strip()
    host = os.readlink("/proc/self/ns/mnt")
    # what the step reaches, said in words the log keeps (paths may be redacted)
    probe = (
        f"if [ -e {w.clone}/.git/relay ]; then echo CLONE-SEEN; else echo CLONE-HIDDEN; fi;"
        f' if [ "$(readlink /proc/self/ns/mnt)" = "{host}" ]; then echo HOST-MOUNTS;'
        " else echo OWN-MOUNTS; fi;"
        f' if [ "$HOME" = "{os.environ["HOME"]}" ]; then echo REAL-HOME; else echo OTHER-HOME; fi;'
        " git rev-parse HEAD"
    )
    pin = ("--checkout", "feature", "--commit", pinned)
    c.call("task", str(job), "--step", probe, *pin, "--boxed")
    assert "**Boxed:**" in world.comments(job)[-1]["body"]
    assert w.invoke("watch", "--once").returncode == 0
    result = newest_result(world, job)["result"]
    assert isinstance(result, dict)
    assert (result["status"], result["commit"]) == ("done", pinned), result
    assert f"judged box of {pinned[:12]} (namespaces)" in str(result["observations"])
    log = world.remote_file(f"docs/loop/relay/{job}/logs/result-001.log")
    assert "CLONE-HIDDEN" in log and "OWN-MOUNTS" in log and "OTHER-HOME" in log, log
    assert f"\n{pinned}\n" in log  # a clone of the commit the TASK names
    # the same step, not boxed, runs beside the clone: what the probe tells apart is real
    c.call("task", str(job), "--step", probe, *pin)
    assert w.invoke("watch", "--once").returncode == 0
    log = world.remote_file(f"docs/loop/relay/{job}/logs/result-002.log")
    assert "CLONE-SEEN" in log and "HOST-MOUNTS" in log and "REAL-HOME" in log, log
