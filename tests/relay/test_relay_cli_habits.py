"""gh's habits against a real hub, and errors that say what is true: `-R OWNER/NAME` finds
the clone; an issue is `12`, `#12` or its URL; a token without access, a name that does
not resolve, a wrong issue number and a clone that never joined are each said as they
are — one line, the exit status, nothing written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from relay_world import one_line_error
from worlds import STRANGER, WORKER, World, git

from relay.edges.local import NodeState


def relay_in(where: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The CLI run in ``where`` exactly as typed (no --repo-dir added)."""
    return subprocess.run(
        [sys.executable, "-m", "relay.cli", *args],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


def test_dash_r_finds_this_clone_or_one_that_joined(world: World, job: int, tmp_path: Path) -> None:
    c = world.controller
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    here = relay_in(c.clone, "status", "-R", world.repo, env=c.env())
    assert here.returncode == 0 and f"#{job} " in here.stdout, here.stderr
    # from a folder that is no clone: a clone that joined is found (status only reads)
    there = relay_in(elsewhere, "status", "--repo", world.repo, env=c.env())
    assert there.returncode == 0 and f"#{job} " in there.stdout, there.stderr
    assert list(elsewhere.iterdir()) == []


def test_dash_r_with_two_joined_clones_names_them_instead_of_guessing(
    world: World, job: int, tmp_path: Path
) -> None:
    """Was: the clone that joined last was taken, whichever node the verb needed."""
    c, w = world.controller, world.worker
    before = world.frozen(job)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    task = ("task", str(job), "-R", world.repo, "--step", "echo picked")
    done = relay_in(elsewhere, *task, env=c.env())
    assert done.returncode == 2
    error = one_line_error(done)
    assert error.startswith(f"relay: 2 clones of {world.repo} joined on this machine: "), error
    assert f"{c.clone} (node {c.name})" in error and f"{w.clone} (node {w.name})" in error
    assert (
        error.endswith("run relay in the clone you mean, or pass --repo-dir PATH")
        and f"add --node {c.name}" in error
    ), error
    assert world.frozen(job) == before and list(elsewhere.iterdir()) == []
    wrong = relay_in(elsewhere, *task, "--node", "nobody", env=c.env())
    assert wrong.returncode == 2
    assert one_line_error(wrong).startswith(
        f"relay: no clone of {world.repo} joined on this machine as node 'nobody': "
    )
    assert world.frozen(job) == before
    chosen = relay_in(elsewhere, *task, "--node", c.name, env=c.env())
    assert chosen.returncode == 0, chosen.stderr
    assert world.heads(job)[-1].startswith("### TASK ")
    assert list(elsewhere.iterdir()) == []


def test_dash_r_of_a_repository_with_no_clone_here_says_what_to_do(world: World, job: int) -> None:
    c = world.controller
    before = world.frozen(job)
    done = relay_in(c.clone, "task", str(job), "-R", "octo/elsewhere", "--step", "ls", env=c.env())
    assert done.returncode == 2
    assert one_line_error(done) == (
        f"relay: no clone of octo/elsewhere here or joined on this machine (this clone is"
        f" {world.repo.lower()}) — clone octo/elsewhere and run relay in it (`relay join` there"
        " lets -R find it), or pass --repo-dir PATH"
    )
    assert world.frozen(job) == before


def test_an_issue_is_taken_as_hash_number_and_as_its_url(world: World, job: int) -> None:
    c = world.controller
    url = f"{world.hub.url}/{world.repo}/issues/{job}"
    c.call("task", url, "--step", "echo hi")
    assert world.heads(job)[-1].startswith("### TASK 1 ")
    done = c.run("result", f"#{job}")
    assert done.returncode == 1 and done.stdout.strip() == f"#{job}: TASK 1 has no result yet"


def test_an_issue_url_of_another_repository_is_refused(world: World, job: int) -> None:
    c = world.controller
    before = world.frozen(job)
    other = f"{world.hub.url}/octo/elsewhere/issues/{job}"
    done = relay_in(c.clone, "task", other, "--step", "ls", env=c.env())
    assert done.returncode == 2
    assert one_line_error(done).startswith(
        "relay: no clone of octo/elsewhere here or joined on this machine"
    )
    given = c.run("task", other, "--step", "ls")  # --repo-dir CLONE
    assert given.returncode == 2
    assert one_line_error(given) == (
        f"relay: issue {other} is in octo/elsewhere, but {c.clone} is a clone of"
        f" {world.repo.lower()} — give an issue of {world.repo.lower()} (its number, or its URL)"
    )
    both = c.run("task", other, "-R", world.repo, "--step", "ls")
    assert both.returncode == 2
    assert one_line_error(both) == (
        f"relay: issue {other} is in octo/elsewhere, not in {world.repo}"
        f" — give -R octo/elsewhere, or that repository's issue number"
    )
    assert world.frozen(job) == before


def test_a_token_without_access_is_said_so(world: World, job: int) -> None:
    """git's own "repository ... not found" and exit 4 ("unreachable") were what came."""
    c = world.controller
    before = world.frozen(job)
    head = git("rev-parse", "HEAD", cwd=c.clone)
    done = c.run("task", str(job), "--step", "ls", env=c.env(token=world.tokens(STRANGER)))
    assert done.returncode == 2
    assert one_line_error(done) == (
        f"relay: the token has no access to {world.repo} — use a token of an account that can"
        f" read {world.repo} (RELAY_TOKEN), or check the remote's name (`git remote -v`)"
    )
    assert world.frozen(job) == before and git("rev-parse", "HEAD", cwd=c.clone) == head


def test_every_verb_says_a_token_has_no_access(world: World, job: int) -> None:
    """`watch --once`, `result` and `doctor` said "not found ...; check the repository name"."""
    c, w = world.controller, world.worker
    before = world.frozen(job)
    stranger = world.tokens(STRANGER)
    said = f"the token has no access to {world.repo}"
    for n, (node, verb) in enumerate(((w, ("watch", "--once")), (c, ("result", str(job))))):
        # the first as a process; the other in this process (a start-up is half a CPU-s)
        done = (
            node.run(*verb, env=node.env(token=stranger))
            if n == 0
            else node.invoke(*verb, token=stranger)
        )
        assert done.returncode == 2, (verb, done.stdout, done.stderr)
        assert one_line_error(done).startswith(f"relay: {said} — "), verb
    doctor = c.invoke("doctor", token=stranger)
    assert doctor.returncode != 0
    assert said in doctor.stdout + doctor.stderr, doctor.stdout + doctor.stderr
    assert "check the repository name" not in doctor.stdout + doctor.stderr
    assert world.frozen(job) == before


def test_a_name_that_does_not_resolve_is_said_so(world: World, job: int) -> None:
    """Was "cannot reach the API ... (unknown error -2)"."""
    c = world.controller
    api = c.run("status", env=c.env(RELAY_API_URL="http://relay-test.invalid:8080"))
    assert api.returncode == 4
    assert one_line_error(api) == (
        "relay: cannot resolve relay-test.invalid: no address for the API at"
        " http://relay-test.invalid:8080 — check the URL (--api, RELAY_API_URL) and this"
        " machine's network"
    )
    before = world.frozen(job)
    git("remote", "set-url", "origin", "http://relay-test.invalid/octo/x.git", cwd=c.clone)
    remote = c.run("task", str(job), "--step", "ls")
    assert remote.returncode == 4
    assert one_line_error(remote) == (
        "relay: git fetch: cannot resolve relay-test.invalid — check the remote's URL"
        " (`git remote -v`) and this machine's network"
    )
    assert world.frozen(job) == before


def test_a_wrong_issue_number_is_said_so(world: World, job: int) -> None:
    """Was "not found in OWNER/NAME ...; check the repository name"."""
    c = world.controller
    before = world.frozen(job)
    for n, args in enumerate(
        (("result", "999"), ("task", "#999", "--step", "ls"), ("strike", "999"))
    ):
        done = c.run(*args) if n == 0 else c.invoke(*args)  # the first as a process
        assert done.returncode == 2, args
        assert one_line_error(done) == (
            f"relay: no issue #999 in {world.repo} — `relay status` lists its open jobs"
        )
    assert world.frozen(job) == before


def test_a_failed_pass_in_a_clone_that_never_joined_is_no_node(blank: World) -> None:
    """`relay status` used to list it as node `?`."""
    blank.init()
    w = blank.worker
    git("pull", "-q", "origin", "main", cwd=w.clone, auth=blank.git_auth())
    done = w.run("watch", "--once")
    assert done.returncode == 2 and "which node is this clone?" in one_line_error(done)
    assert NodeState.for_clone(w.clone).passes() == []  # no pass of no node recorded
    said = w.call("status")
    assert "this clone has not joined: run `relay join` to make it a node" in said
    assert "?:" not in said and "  ?" not in said


def test_a_fresh_clone_says_it_trusts_no_roster_yet(world: World, job: int) -> None:
    """In a clone that never joined, `relay status` called every job "opened by octo, not
    an instruction account" (octo is one), and `relay watch --once --node NAME` said NAME
    "is not in the node table" (it is); that pass then showed in status."""
    fresh = world.clone("fresh-clone")
    w = world.worker
    env = w.env()
    status = relay_in(fresh, "status", env=env)
    assert status.returncode == 0, status.stderr
    assert f"#{job} " in status.stdout
    assert "not an instruction account" not in status.stdout, status.stdout
    assert "this clone trusts no roster yet — run `relay join`" in status.stdout
    done = relay_in(fresh, "watch", "--once", "--node", w.name, env=env)
    assert done.returncode == 2
    assert one_line_error(done) == (
        f"relay: this clone trusts no roster yet, so node {w.name!r} cannot act in it"
        f" — run `relay join --node {w.name}` in {fresh}"
    )
    assert NodeState.for_clone(fresh).passes() == []  # no pass recorded for it
    again = relay_in(fresh, "status", env=env)
    assert w.name + ":" not in again.stdout.split("roster:")[-1], again.stdout


def test_watch_interval_below_the_floor_is_refused(world: World) -> None:
    """`relay watch --interval 0` used to send thousands of requests a minute."""
    w = world.worker
    passes = NodeState.for_clone(w.clone).passes()
    for n, (interval, api, floor, where) in enumerate(
        (
            ("0", None, "1", "a hub on this machine"),
            ("0.5", None, "1", "a hub on this machine"),
            ("-3", None, "1", "a hub on this machine"),
            ("2", "https://api.github.com", "5", "https://api.github.com"),
        )
    ):
        args = ["watch", f"--interval={interval}", "--node", WORKER]
        args += ["--api", api] if api else []
        done = w.run(*args) if n == 0 else w.invoke(*args)  # the first as a process
        assert done.returncode == 2, done.stderr
        hint = f"give --interval {floor} or more"
        hint += " (or `relay watch --webhook` to hear at once)" if api else ""
        assert one_line_error(done) == (
            f"relay: --interval {float(interval):g} is too short: at least {floor} s between"
            f" polls of {where} — {hint}"
        )
    webhook = w.run("watch", "--webhook", "--listen", "127.0.0.1:0", "--reconcile", "0")
    assert webhook.returncode == 2
    assert one_line_error(webhook) == (
        "relay: --reconcile 0 is too short: at least 1 s between polls of a hub on this machine"
        " — give --reconcile 1 or more"
    )
    assert NodeState.for_clone(w.clone).passes() == passes  # refused before any pass ran
