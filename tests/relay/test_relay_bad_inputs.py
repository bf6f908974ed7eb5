"""Bad inputs: each is refused with one line that says what to do, and changes nothing.

After every refusal the issue (body, state, labels, comments), the hub's claim refs and
the remote's refs are compared with a picture taken before. The refusals of `task` run in
this process (``Node.invoke``: a process costs half a CPU-second to start); the same
one line from a `task` process is checked in each of the first three tests, and a verb
outside a clone runs as a process too.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path

from relay_world import one_line_error
from worlds import WORKER, World

PY = Path(sys.executable).as_posix()


def verbs(issue: int) -> list[tuple[str, ...]]:
    """A call of every verb that talks to the API."""
    n = str(issue)
    return [
        ("task", n, "--step", "git --version"),
        ("watch", "--once"),
        ("job", "open", "--worker", WORKER, "--title", "T", "--objective", "O"),
        ("result", n),
        ("hypothesis", n, "the cache is stale"),
        ("strike", n),
        ("resolve", n, "--summary", "done"),
        ("status",),
        ("join",),
    ]


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def refused_everywhere(world: World, job: int, *, token: str | None = None, api: str = "") -> str:
    """Every verb refuses (in-process, fast), and `task` as a real process says the same;
    nothing changes. Returns the process's one line."""
    node, before = world.controller, world.frozen(job)
    extra = ("--api", api) if api else ()
    lines = {one_line_error(node.invoke(*a, *extra, token=token)) for a in verbs(job)}
    env = node.env(token=token)
    line = one_line_error(node.run("task", str(job), "--step", "git --version", *extra, env=env))
    assert lines == {line}, lines
    assert world.frozen(job) == before
    return line


def test_no_token(world: World, job: int) -> None:
    line = refused_everywhere(world, job, token="")
    assert "no API token" in line and "RELAY_TOKEN" in line and "relay hub token" in line


def test_a_wrong_token(world: World, job: int) -> None:
    line = refused_everywhere(world, job, token="ghp_" + "x" * 36)
    assert "rejected the token" in line and "set RELAY_TOKEN" in line
    assert "x" * 36 not in line


def test_an_unreachable_hub(world: World, job: int) -> None:
    api = f"http://127.0.0.1:{closed_port()}"
    line = refused_everywhere(world, job, api=api)
    assert f"cannot reach the API at {api}" in line and "relay hub" in line


def test_task_from_a_node_that_is_not_the_controller(world: World, job: int) -> None:
    before = world.frozen(job)
    line = one_line_error(world.worker.invoke("task", str(job), "--step", "git --version"))
    assert "controller" in line
    assert world.frozen(job) == before


def test_a_second_task_while_one_is_outstanding(world: World, job: int) -> None:
    world.controller.call("task", str(job), "--step", "git --version")
    before = world.frozen(job)
    line = one_line_error(world.controller.invoke("task", str(job), "--step", "git --version"))
    assert "`awaiting:worker`" in line and "relay status" in line
    assert world.frozen(job) == before


def test_a_task_while_the_worker_holds_the_baton(world: World, job: int) -> None:
    world.api(f"/issues/{job}/labels", "PUT", {"labels": ["working"]})
    before = world.frozen(job)
    line = one_line_error(world.controller.invoke("task", str(job), "--step", "git --version"))
    assert "working" in line and "relay status" in line
    assert world.frozen(job) == before


def test_a_task_on_an_issue_that_is_no_job(world: World) -> None:
    plain = world.api("/issues", "POST", {"title": "a bug", "body": "no relay here"})["number"]
    before = world.frozen(plain)
    line = one_line_error(world.controller.invoke("task", str(plain), "--step", "git --version"))
    assert f"#{plain}" in line or "job" in line
    assert world.frozen(plain) == before


def test_task_needs_a_joined_node(world: World, job: int, tmp_path: Path) -> None:
    fresh = world.clone("unjoined")
    node = world.controller
    before = world.frozen(job)
    argv = ("task", str(job), "--step", "git --version")
    moved = type(node)(node.name, fresh, node.token, node.monkeypatch)
    line = one_line_error(moved.invoke(*argv))
    assert "--node" in line
    assert world.frozen(job) == before


def test_a_verb_outside_a_clone(world: World, tmp_path: Path) -> None:
    nowhere = tmp_path / "not-a-clone"
    nowhere.mkdir()
    node = type(world.controller)(
        world.controller.name, nowhere, world.controller.token, world.controller.monkeypatch
    )
    line = one_line_error(node.run("watch", "--once"))
    assert "not inside a git clone" in line
    for args in (("status",), ("join",), ("init", "--yes"), ("task", "1", "--step", "x")):
        line = one_line_error(node.invoke(*args))
        assert "not inside a git clone" in line, args
