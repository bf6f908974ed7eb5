"""The controller's verbs: job open, hypothesis, strike, resolve, status."""

from __future__ import annotations

import re
import subprocess

from relay_world import hook_script, one_line_error
from worlds import CONTROLLER, OWNER, WORKER, World, data_of, git


def human(body: str) -> str:
    """A body without its hidden machine block."""
    return body.split("<!-- relay:", 1)[0]


def test_job_open_prints_the_number_and_binds_the_nodes(world: World) -> None:
    c = world.controller
    opened = c.json("job", "open", "--worker", WORKER, "--title", "Slow CI", "--objective", "Why?")
    assert set(opened) == {"issue"} and isinstance(opened["issue"], int)
    number = opened["issue"]
    issue = world.issue(number)
    assert issue["title"] == "Slow CI" and issue["state"] == "open"
    assert f"controller: `{CONTROLLER}`" in issue["body"]
    assert f"worker: `{WORKER}`" in issue["body"]
    assert "Why?" in issue["body"]
    assert world.labels(number) == {"awaiting:controller"}
    out = c.call("job", "open", "--worker", WORKER, "--title", "Second", "--objective", "More.")
    assert out.startswith(f"opened job #{number + 1}: {CONTROLLER} controls, {WORKER} works")


def test_a_job_for_a_worker_not_in_the_table_is_refused(world: World) -> None:
    before = world.frozen()
    line = one_line_error(
        world.controller.run(
            "job", "open", "--worker", "nobody", "--title", "T", "--objective", "O"
        )
    )
    assert "nobody" in line
    assert world.frozen() == before
    assert world.api("/issues?state=all") == []


def test_hypothesis_goes_into_the_body(world: World, job: int) -> None:
    c = world.controller
    assert c.json("hypothesis", str(job), "the cache is stale") == {
        "issue": job,
        "outcome": "untested",
    }
    assert "the cache is stale" in world.issue(job)["body"]
    c.call("hypothesis", str(job), "the cache is stale", "--outcome", "refuted")
    body = human(world.issue(job)["body"])
    assert body.count("the cache is stale") == 1 and "refuted" in body
    before = world.frozen(job)
    line = one_line_error(world.worker.run("hypothesis", str(job), "the disk is full"))
    assert "controller" in line
    assert world.frozen(job) == before


def test_the_third_strike_parks_the_job_on_needs_human(world: World, job: int) -> None:
    c = world.controller
    c.call("hypothesis", str(job), "the compiler is stale")
    for _ in range(2):
        assert data_of(c.call("strike", str(job), "--json")) == {"issue": job, "parked": False}
    assert "needs:human" not in world.labels(job)
    assert c.ok("strike", str(job)).strip() == f"#{job}: parked on needs:human"
    assert "needs:human" in world.labels(job)
    escalation = world.comments(job)[-1]["body"]
    assert f"@{OWNER}" in escalation
    before = world.frozen(job)
    line = one_line_error(c.run("task", str(job), "--step", "git --version"))
    assert "relay status" in line or "needs" in line
    assert world.frozen(job) == before
    rows = data_of(c.call("status", "--json"))["jobs"]
    assert [(r["issue"], r["baton"], r["parked"]) for r in rows] == [
        (job, "awaiting:controller", True)
    ]
    assert "PARKED on needs:human" in c.call("status")


def test_resolve_writes_the_handover_and_closes(world: World, job: int) -> None:
    c = world.controller
    assert (
        c.json("resolve", str(job), "--summary", "The cache was stale.", "--force", "t")["issue"]
        == job
    )
    issue = world.issue(job)
    assert issue["state"] == "closed" and "resolved" in world.labels(job)
    assert "The cache was stale." in issue["body"]
    assert "The cache was stale." in world.comments(job)[-1]["body"]
    handover = world.remote_file("docs/loop/handover.md")
    assert f"## #{job} Build fails" in handover and "The cache was stale." in handover
    assert c.call("status").startswith("no open jobs")


def test_resolve_by_the_worker_is_refused(world: World, job: int) -> None:
    before = world.frozen(job)
    line = one_line_error(world.worker.run("resolve", str(job), "--summary", "mine"))
    assert "controller" in line
    assert world.frozen(job) == before


def test_resolve_with_a_refused_push_changes_nothing_and_can_be_rerun(
    world: World, job: int
) -> None:
    c = world.controller
    refuse = world.bare / "hooks" / "pre-receive"
    hook_script(refuse, "echo 'pushes are frozen' >&2\nexit 1\n")
    mine = c.clone / "my-notes.txt"  # untracked work of the person at this machine
    mine.write_text("keep me\n")
    before = world.frozen(job)
    line = one_line_error(c.run("resolve", str(job), "--summary", "Found it.", "--force", "t"))
    assert "push" in line
    assert world.frozen(job) == before
    assert git("status", "--porcelain", cwd=c.clone) == "?? my-notes.txt\n"
    assert mine.read_text() == "keep me\n"
    refuse.unlink()
    c.call("resolve", str(job), "--summary", "Found it.", "--force", "t")
    handover = world.remote_file("docs/loop/handover.md")
    assert handover.count(f"## #{job} ") == 1
    assert world.issue(job)["state"] == "closed"


def test_status_lists_jobs_then_nodes(world: World, job: int) -> None:
    c, w = world.controller, world.worker
    c.call("task", str(job), "--step", "git --version")
    out = c.ok("status")
    assert out.splitlines()[0] == "jobs:"
    line = out.splitlines()[1]
    assert line.startswith(f"  #{job} Build fails: {CONTROLLER} -> {WORKER}, baton awaiting:worker")
    assert re.search(r", TASK 1 \(\d+s ago\)$", line), line
    assert f"  {CONTROLLER} (" in out and f"  {WORKER} (" in out
    w.call("watch", "--once")
    data = data_of(w.call("status", "--json"))
    assert data["jobs"][0]["baton"] == "awaiting:controller"
    assert data["last_pass"]["node"] == WORKER and data["last_pass"]["outcome"] == "acted"


def test_the_worker_pass_is_seen_by_git_and_by_the_api_alike(world: World, job: int) -> None:
    world.controller.call("task", str(job), "--step", "git --version")
    world.worker.call("watch", "--once")
    files = git("ls-tree", "-r", "--name-only", "main", cwd=world.bare).splitlines()
    assert f"docs/loop/relay/{job}/logs/result-001.log" in files
    assert (
        subprocess.run(
            ["git", "-C", str(world.worker.clone), "status", "--porcelain"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        == ""
    )
