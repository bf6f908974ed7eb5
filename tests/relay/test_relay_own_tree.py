"""relay in a person's working clone, on a protected repository, with nodes joining at once.

Real hub, real git, real processes: relay commits only from its own worktree (under the
clone's git directory) and runs a worker's steps there, so a person's uncommitted edits
neither stop the controller nor spend the worker's TASK, and are left as they were; a
protected default branch sends relay to a branch of its own, which every node finds; two
joins at once each land their row.

Each verb the file is about runs as a process in one test at least (the worker's pass in a
dirty clone, the joins at once, init on a protected branch and with --data-branch, the
late join refused, the controller's task, job open, status); the passes and joins that
only set a test up, or whose verdict is what they pushed, run in this process
(``Node.call``: a process costs half a CPU-second to start).
"""

from __future__ import annotations

import subprocess
from typing import Any

from relay_world import one_line_error
from worlds import CONTROLLER, OWNER, WORKER, Node, World, api, git, key_of

from relay.protocol import parse_master

LOOP = "docs/loop/LOOP.md"
PR_ONLY = {
    "required_status_checks": None,
    "enforce_admins": True,
    "required_pull_request_reviews": {"required_approving_review_count": 1},
    "restrictions": None,
}


def _dirty(clone: Any) -> dict[str, str]:
    """A person's work in progress: a tracked file edited, a new file; what to expect."""
    (clone / "README.md").write_text("a person's edit, not committed\n")
    (clone / "scratch.txt").write_text("untracked notes\n")
    return {"README.md": "a person's edit, not committed\n", "scratch.txt": "untracked notes\n"}


def _untouched(clone: Any, expected: dict[str, str]) -> None:
    for name, text in expected.items():
        assert (clone / name).read_text() == text, name
    status = git("status", "--porcelain", cwd=clone)
    assert " M README.md" in status and "?? scratch.txt" in status, status


def test_a_dirty_working_clone_on_both_sides(world: World, job: int) -> None:
    c, w = world.controller, world.worker
    mine, theirs = _dirty(c.clone), _dirty(w.clone)
    c.call("task", str(job), "--step", "cat README.md", "--step", "test ! -e scratch.txt")
    done = w.run("watch", "--once")
    assert done.returncode == 0, done.stderr
    result = world.comments(job)[-1]["body"]
    assert result.startswith("### RESULT 1 · done"), result  # not `blocked`
    log = world.remote_file(f"docs/loop/relay/{job}/logs/result-001.log")
    assert "a person's edit" not in log  # the steps ran at the commit, not in the person's tree
    c.call("watch", "--once")
    assert world.labels(job) == {"awaiting:controller"}
    _untouched(c.clone, mine)
    _untouched(w.clone, theirs)
    tree = w.clone / ".git" / "relay" / "worktree"
    assert (tree / ".git").is_file() and not (tree / "scratch.txt").exists()
    # the person's clone followed what relay pushed, around their edits
    assert git("rev-parse", "HEAD", cwd=w.clone).strip() == world.remote_head()


def _extra_node(world: World, name: str) -> Node:
    clone = world.clone(name)
    c = world.controller
    return Node(name, clone, c.token, c.monkeypatch, c.as_node, c.timeout)


def test_concurrent_joins_each_add_their_row(world: World) -> None:
    nodes = [_extra_node(world, f"n{i}") for i in range(3)]
    procs = [
        subprocess.Popen(
            n.argv("join", "--node", n.name, "--scheduler", "none"),
            env=n.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in nodes
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    for proc, (_out, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, err
        assert "merge by hand" not in err
    table = parse_master(world.remote_file(LOOP))
    assert {n.name for n in table.nodes} == {CONTROLLER, WORKER, "n0", "n1", "n2"}
    subjects = git("log", "--format=%s", "main", cwd=world.bare)
    assert all(f"relay: n{i} joins" in subjects for i in range(3)), subjects


def test_a_protected_default_branch_sends_relay_to_its_own_branch(blank: World) -> None:
    world, c, w = blank, blank.controller, blank.worker
    first = world.remote_head()
    protect = f"{world.hub.url}/repos/{world.repo}/branches/main/protection"
    api(protect, world.tokens(OWNER), "PUT", PR_ONLY)
    said = c.run("init", "--yes", "--node", CONTROLLER, "--repo", world.repo,
                 "--api", world.hub.url)  # fmt: skip
    assert said.returncode == 0, said.stderr
    assert "main is a protected branch" in said.stderr
    assert "relay's branch: relay-data" in said.stdout
    data = git("show", f"relay-data:{LOOP}", cwd=world.bare)
    assert parse_master(data).data_branch == "relay-data"
    w.call("join", "--node", WORKER, "--scheduler", "none")  # finds the branch by itself
    c.call("join", "--node", CONTROLLER, "--scheduler", "none")
    c.call("nodes", "approve", WORKER, "--fingerprint", key_of(w, WORKER))  # on relay's branch too
    job = world.open_job()
    c.call("task", str(job), "--step", "git --version")
    done = w.invoke("watch", "--once")
    assert done.returncode == 0, done.stderr
    result = world.comments(job)[-1]["body"]
    assert result.startswith("### RESULT 1 · done"), result
    tip = git("rev-parse", "relay-data", cwd=world.bare).strip()
    assert f"/blob/{tip}/docs/loop/relay/{job}/logs/result-001.log" in result
    assert world.remote_head() == first  # main never moved: relay's commits are on its branch
    table = parse_master(git("show", f"relay-data:{LOOP}", cwd=world.bare))
    assert {n.name for n in table.nodes} == {CONTROLLER, WORKER}
    assert git("config", "relay.dataBranch", cwd=w.clone).strip() == "relay-data"


def test_init_data_branch_on_an_unprotected_repository(blank: World) -> None:
    world, c = blank, blank.controller
    c.ok("init", "--yes", "--node", CONTROLLER, "--repo", world.repo, "--api", world.hub.url,
         "--data-branch", "relay/spine")  # fmt: skip
    assert parse_master(git("show", f"relay/spine:{LOOP}", cwd=world.bare)).data_branch == (
        "relay/spine"
    )
    assert LOOP not in git("ls-tree", "-r", "--name-only", "main", cwd=world.bare)
    c.call("join", "--node", CONTROLLER, "--scheduler", "none")
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=c.clone).strip() == "main"


def test_a_branch_protected_after_init_is_named_with_the_way_out(world: World) -> None:
    protect = f"{world.hub.url}/repos/{world.repo}/branches/main/protection"
    api(protect, world.tokens(OWNER), "PUT", PR_ONLY)
    extra = _extra_node(world, "late")
    before = world.remote_head()
    done = extra.run("join", "--node", "late", "--scheduler", "none")
    assert done.returncode != 0
    line = one_line_error(done)
    assert "main is a protected branch" in line and "--data-branch" in line, line
    assert world.remote_head() == before


def _local_commit(clone: Any) -> str:
    """A person's own commit, not pushed; its sha."""
    (clone / "notes.md").write_text("a person's commit, not pushed\n")
    git("add", "notes.md", cwd=clone)
    git("commit", "-qm", "a person's work", cwd=clone)
    return git("rev-parse", "HEAD", cwd=clone).strip()


def test_an_unpushed_commit_and_an_edit_do_not_block_the_controller_nor_get_rebased(
    world: World, job: int
) -> None:
    """The remote moves (the worker's RESULT pushes its log) while the controller's person
    holds a commit of their own and an uncommitted edit: every verb still works, and
    their commit is never rewritten."""
    c, w = world.controller, world.worker
    mine = _local_commit(c.clone)
    edits = _dirty(c.clone)
    c.call("task", str(job), "--step", "git --version")
    assert w.invoke("watch", "--once").returncode == 0
    c.call("watch", "--once")
    said = c.run("task", str(job), "--step", "true")
    assert said.returncode == 0, said.stderr
    assert git("rev-parse", "HEAD", cwd=c.clone).strip() == mine, "the commit was rebased"
    _untouched(c.clone, edits)


def test_a_clean_clone_with_one_local_commit_is_not_rebased(world: World, job: int) -> None:
    c, w = world.controller, world.worker
    mine = _local_commit(c.clone)
    c.call("task", str(job), "--step", "git --version")
    assert w.invoke("watch", "--once").returncode == 0  # the remote moves on: a log
    c.call("watch", "--once")
    c.call("task", str(job), "--step", "true")
    assert git("rev-parse", "HEAD", cwd=c.clone).strip() == mine, "the commit was rebased"
    assert git("rev-parse", "HEAD~1", cwd=c.clone).strip() != world.remote_head()


def test_an_edit_to_the_spine_does_not_block_job_open_and_status_reads_the_fresh_tip(
    world: World,
) -> None:
    """A node joins from another clone while this person edits LOOP.md by hand: `job open`
    for the new node works (the spine is read at the remote's tip) and `status` lists it."""
    c = world.controller
    (c.clone / LOOP).write_text((c.clone / LOOP).read_text() + "\na person's note\n")
    n9 = _extra_node(world, "n9")
    n9.call("join", "--node", "n9", "--scheduler", "none")
    c.call("nodes", "approve", "n9", "--fingerprint", key_of(n9, "n9"))
    said = c.run("job", "open", "--worker", "n9", "--title", "T", "--objective", "O")
    assert said.returncode == 0, said.stderr
    assert "a person's note" in (c.clone / LOOP).read_text(), "the edit is left as it was"
    status = c.run("status")
    assert status.returncode == 0, status.stderr
    assert "  n9 (" in status.stdout, status.stdout
