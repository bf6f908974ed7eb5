"""What a command loads before it answers: the idle pass, `relay --version`, `relay --help`.

Not timed (bench/bench_startup.py measures): each runs as a real process under a probe that
records, at exit, every module the process imported and every TLS context it made. A later
change that pulls a heavy module onto one of these paths (the aiohttp client, the pydantic
models, the git library, a verb's module) fails here, naming it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from worlds import Node, World

from relay.edges.local import NodeState

# Run the CLI, then write what the process loaded: the modules, and the TLS contexts made
# (ssl.SSLContext is counted from the start, before relay is imported).
PROBE = """
import atexit, json, os, ssl, sys
made = []
original = ssl.SSLContext.__new__
def counted(cls, *args, **kwargs):
    made.append(cls.__name__)
    return original(cls, *args, **kwargs)
ssl.SSLContext.__new__ = counted
def report():
    with open(os.environ["STARTUP_PROBE_OUT"], "w") as out:
        json.dump({"modules": sorted(sys.modules), "tls_contexts": len(made)}, out)
atexit.register(report)
from relay.cli import main
sys.exit(main(sys.argv[1:]))
"""

# What no idle pass may load: the API client and its TLS set-up, the models, git, asyncio
HEAVY = (
    "aiohttp",
    "gidgethub",
    "yarl",
    "multidict",
    "pydantic",
    "pydantic_core",
    "git",  # GitPython
    "filelock",
    "asyncio",
    "relay.protocol",
    "relay.edges.local",
    "relay.edges.git",
    "relay.edges.github.client",
    "relay.edges.github.session",
    "relay.edges.github.transport",
    "relay.node.context",
    "relay.node.observe",
    "relay.watchers.once",
    "relay.watchers.registration",
)


def probe(
    tmp_path: Path, *args: str, env: dict[str, str], ok: bool = True
) -> tuple[dict[str, Any], str]:
    """Run `relay ARGS` under the probe; what it loaded, and what it printed (``ok``: it
    must succeed; else what it printed on both streams)."""
    out = tmp_path / f"probe-{len(list(tmp_path.glob('probe-*')))}.json"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        env={**env, "STARTUP_PROBE_OUT": str(out)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if not ok:
        return json.loads(out.read_text()), done.stdout + done.stderr
    assert done.returncode == 0, f"relay {args}: {done.stderr} {done.stdout}"
    return json.loads(out.read_text()), done.stdout


def loaded(found: dict[str, Any], names: tuple[str, ...]) -> list[str]:
    """The modules of ``names`` (or under them) that the process imported."""
    modules: list[str] = found["modules"]
    return [m for m in modules if any(m == n or m.startswith(f"{n}.") for n in names)]


def idle_pass(tmp_path: Path, node: Node, *flags: str, **env: str) -> tuple[dict[str, Any], str]:
    args = ("watch", "--once", *flags, "--repo-dir", str(node.clone))
    return probe(tmp_path, *args, env={**node.env(), **env})


def last_pass(node: Node) -> dict[str, Any]:
    record = NodeState.for_clone(node.clone).heartbeat()
    assert record is not None
    return record.model_dump(mode="json")


# What an idle pass may load beyond the standard library: relay's own modules on its path,
# by name. A module not listed (a keyring, a YAML parser, relay's redaction) fails the test,
# so a later import that pulls one onto the idle path is seen, whatever its weight.
IDLE_MAY_LOAD = set(
    [
        "relay",
        "relay.cli",
        "relay.commands",
        "relay.commands.common",
        "relay.commands.helptext",
        "relay.commands.output",
        "relay.commands.repos",
        "relay.commands.watch",
        "relay.edges",
        "relay.edges.files",
        "relay.edges.github",
        "relay.edges.github.cache",
        "relay.edges.github.credentials",
        "relay.edges.github.primed",
        "relay.edges.ownpath",
        "relay.edges.statefile",
        "relay.errors",
        "relay.watchers",
        "relay.watchers.quiet",
        "relay.watchers.report",
    ]
)


def beyond_stdlib(found: dict[str, Any]) -> set[str]:
    """The loaded modules outside the standard library (relay's own, and any other)."""
    modules: list[str] = found["modules"]
    return {
        m
        for m in modules
        if m.split(".")[0] not in sys.stdlib_module_names and not m.startswith("_")
    }


def list_requests(world: World) -> int:
    """How many GETs of the issue list the hub has answered for this repository."""
    path = f"/repos/{world.repo}/issues"
    rows = world.hub.requests()  # type: ignore[attr-defined]  # the session's HubProcess
    return sum(r["count"] for r in rows if r["method"] == "GET" and r["path"] == path)


def test_an_idle_pass_loads_neither_the_client_nor_the_models_nor_git(
    world: World, job: int, tmp_path: Path
) -> None:
    """One world, in order: the full pass; the idle pass after an idle one (the lock and one
    304); a scheduler's flags; a changed input (a variable the protocol reads, a state
    file) making the next pass a full one; news read by the full pass with the answer the
    idle check got."""
    worker = world.worker
    full, said = idle_pass(tmp_path, worker)
    assert "nothing to do" in said
    # the probe sees what a full pass loads: this test can fail
    assert loaded(full, ("aiohttp", "pydantic", "relay.protocol"))
    assert full["tls_contexts"] >= 1, "aiohttp makes its contexts as it loads (trust: later)"
    idle_pass(tmp_path, worker)  # an idle pass after an idle one: the marker is left
    state = NodeState.for_clone(worker.clone)
    assert (state.root / "quiet.json").is_file()

    quick, said = idle_pass(tmp_path, worker)
    assert said.strip() == f"{worker.name}: nothing to do"
    assert loaded(quick, HEAVY) == [], "the idle pass loaded them"
    assert beyond_stdlib(quick) <= IDLE_MAY_LOAD, " ".join(sorted(beyond_stdlib(quick)))
    assert quick["tls_contexts"] == 0, "no TLS context for an http API, none at import"
    record = last_pass(worker)
    assert (record["outcome"], record["requests"], record["not_modified"]) == ("idle", 1, 1)
    assert record["started_by"] == "person"

    # `--scheduled` with no registration in place is a person's pass, fast or full
    quick, _ = idle_pass(tmp_path, worker, "--scheduled", "--nonce", "x")
    assert loaded(quick, HEAVY) == []
    assert last_pass(worker)["started_by"] == "person"

    # the marker stands for the inputs it was made from
    beat = {"RELAY_HEARTBEAT_SECONDS": "120"}
    changed, said = idle_pass(tmp_path, worker, **beat)
    assert "nothing to do" in said
    assert loaded(changed, ("pydantic",)), "a changed variable is a full pass"
    state.mark_notice(issue=job, key="probe", now=datetime.now(UTC))
    changed, _ = idle_pass(tmp_path, worker, **beat)
    assert loaded(changed, ("pydantic",)), "a changed state file is a full pass"
    assert (state.root / "quiet.json").is_file()

    # news: the check gets a 200, which the full pass takes as its own answer
    world.controller.ok("task", str(job), "--step", "echo hello")
    before = list_requests(world)
    full, said = idle_pass(tmp_path, worker, **beat)
    assert "RESULT 1 posted" in said, said
    assert list_requests(world) == before + 1, "the list was asked once, not twice"
    assert last_pass(worker)["outcome"] == "acted"
    assert not (state.root / "quiet.json").exists(), "an acting pass leaves no marker"


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_version_and_help_load_no_verb(flag: str, tmp_path: Path) -> None:
    found, said = probe(tmp_path, flag, env=dict(os.environ))
    assert said.startswith("relay ") or "usage: relay" in said
    verbs = [m for m in loaded(found, ("relay.commands",)) if m != "relay.commands.helptext"]
    assert verbs in ([], ["relay.commands"]), f"`relay {flag}` loaded {verbs}"
    assert loaded(found, HEAVY) == []
    assert found["tls_contexts"] == 0
    if flag == "--help":
        for verb in ("watch", "task", "loop", "hub"):
            assert f"    {verb}" in said


def test_a_usage_error_with_its_hint_loads_no_models_or_protocol(tmp_path: Path) -> None:
    """A refused line says its error and the way out (`relay: ... — hint`) without loading
    the client, the models or the protocol to print that dash."""
    found, said = probe(tmp_path, "hub", "repo", "create", "bad", env=dict(os.environ), ok=False)
    assert "is not OWNER/NAME \u2014 name it as OWNER/NAME" in said, said
    heavy = ("aiohttp", "gidgethub", "pydantic", "git", "asyncio", "relay.protocol")
    assert loaded(found, heavy) == [], " ".join(loaded(found, heavy))


def test_the_top_level_help_says_what_each_verb_module_says() -> None:
    """The summaries `relay --help` lists without loading the verbs are the verbs' own."""
    import argparse

    from relay.cli import SUMMARIES, VERBS, build_parser

    whole = build_parser([])
    sub = next(a for a in whole._actions if isinstance(a, argparse._SubParsersAction))
    own = {choice.dest: choice.help for choice in sub._choices_actions}
    assert set(SUMMARIES) == set(VERBS)
    assert own == SUMMARIES
    lazy = build_parser(["--help"], lazy=True)
    assert lazy.format_help() == whole.format_help()


# Run the CLI; at its first request (an API connection, or a git that talks to the remote)
# write what the process had loaded by then. The verb then goes on as it would.
FIRST_REQUEST_PROBE = """
import json, os, sys
NETWORK_GIT = {"fetch", "pull", "push", "ls-remote", "clone"}
seen = []
def hook(event, args):
    if seen:
        return
    if event == "socket.connect" or (
        event == "subprocess.Popen" and NETWORK_GIT & set(map(str, args[1] or ()))
    ):
        seen.append(event)
        with open(os.environ["STARTUP_PROBE_OUT"], "w") as out:
            json.dump({"modules": sorted(sys.modules), "event": event}, out)
sys.addaudithook(hook)
from relay.cli import main
sys.exit(main(sys.argv[1:]))
"""

# What a verb that fetches first (the clone pulled, then the node opened) may have loaded by
# its fetch: git's library and its lock, not the API client, the models or the protocol.
# git's library is not loaded for the fetch either: relay runs git itself (GitPython cost a
# verb some 40 ms before its first request); its lock and relay's git edge are
BEFORE_THE_FETCH = tuple(n for n in HEAVY if n not in ("filelock", "relay.edges.git"))


def first_request(
    tmp_path: Path, node: Node, *args: str, ok: bool = True
) -> tuple[dict[str, Any], str]:
    """Run `relay ARGS` in ``node``'s clone under the probe; what it loaded by its first
    request, and what it printed (``ok``: the verb must succeed)."""
    out = tmp_path / f"first-{len(list(tmp_path.glob('first-*')))}.json"
    done = subprocess.run(
        [sys.executable, "-c", FIRST_REQUEST_PROBE, *args, "--repo-dir", str(node.clone)],
        env={**node.env(), "STARTUP_PROBE_OUT": str(out)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 or not ok, f"relay {args}: {done.stderr} {done.stdout}"
    return json.loads(out.read_text()), done.stdout


def test_a_verb_that_fetches_first_loads_no_client_models_or_protocol_before_it(
    world: World, job: int, tmp_path: Path
) -> None:
    """`relay hypothesis`, `strike`, `task` and `job open` pull the clone before anything
    else: by that fetch they have loaded relay's git edge, not git's library (GitPython)
    nor the rest (which loads while nothing waits on the network). Each verb then does its
    work as always."""
    controller, n = world.controller, str(job)
    for args, done in (
        (("hypothesis", n, "the cache is stale"), "hypothesis recorded"),
        (("strike", n), "strike counted"),
        (("task", n, "--step", "true"), f"posted TASK 1 on #{job}"),
        (("job", "open", "--worker", world.worker.name, "--title", "t", "--objective", "o"),
         "opened job #"),
    ):  # fmt: skip
        found, said = first_request(tmp_path, controller, *args)
        assert done in said, said
        assert found["event"] == "subprocess.Popen", f"`relay {args[0]}` fetches first"
        assert loaded(found, BEFORE_THE_FETCH) == [], f"`relay {' '.join(args[:2])}`"
        assert loaded(found, ("relay.edges.git",)), "the probe lists what was loaded by then"


def test_the_hypothesis_parser_offers_the_protocols_outcomes() -> None:
    """`relay hypothesis --outcome` lists its choices without loading the protocol."""
    from relay.commands.hypothesis import OUTCOMES
    from relay.protocol import Outcome

    assert tuple(o.value for o in Outcome) == OUTCOMES


# What a verb that reads first (`status`, `result`, `resolve`) may have loaded when its first
# GET goes out (sent as it starts, from a thread, with the standard library): relay's light
# modules, by name; not the client, the models, the protocol, git, or asyncio.
EARLY_MAY_LOAD = IDLE_MAY_LOAD - {"relay.commands.watch", "relay.watchers", "relay.watchers.quiet",
                                  "relay.watchers.report"} | {
    "relay.commands.early",
    "relay.commands.bounds",
    "relay.commands.result",
    "relay.commands.resolve",
    "relay.commands.status",
}  # fmt: skip


def gets(world: World, path: str) -> int:
    """How many GETs of ``path`` (under the repository) the hub has answered."""
    full = f"/repos/{world.repo}{path}"
    rows = world.hub.requests()  # type: ignore[attr-defined]  # the session's HubProcess
    return sum(r["count"] for r in rows if r["method"] == "GET" and r["path"] == full)


def test_a_verb_that_reads_first_sends_its_gets_before_loading_the_client(
    world: World, job: int, tmp_path: Path
) -> None:
    """`relay status`, `result` and `resolve` send their first GETs as they start, before
    the client, the models and the protocol load; the client takes those answers as its own
    (each asked once, not twice), and each verb does its work as always. `relay nodes` and
    `relay doctor` fetch the clone first, with relay's git edge only (not git's library)."""
    controller, worker, n = world.controller, world.worker, str(job)
    controller.ok("task", n, "--step", "echo hello")
    worker.ok("watch", "--once")
    issue, comments = f"/issues/{job}", f"/issues/{job}/comments"
    for args, done, asked in (
        (("status",), f"#{job} ", ("/issues",)),
        (("result", n), f"#{job} RESULT 1: done", (issue, comments)),
        (("resolve", n, "--summary", "done", "--force", "a probe"), "resolved and closed",
         (issue, comments)),
    ):  # fmt: skip
        before = {path: gets(world, path) for path in asked}
        found, said = first_request(tmp_path, controller, *args)
        assert done in said, said
        assert found["event"] == "socket.connect", f"`relay {args[0]}` asks the API first"
        assert loaded(found, HEAVY) == [], f"`relay {args[0]}`"
        extra = beyond_stdlib(found) - EARLY_MAY_LOAD
        assert not extra, f"`relay {args[0]}` loaded {' '.join(sorted(extra))}"
        for path in asked:  # the early answer was the client's: one request, not two
            assert gets(world, path) == before[path] + 1, (args[0], path)
    for node, args in ((controller, ("nodes",)), (worker, ("doctor",))):
        found, said = first_request(tmp_path, node, *args, ok=False)
        assert "roster" in said, said
        assert found["event"] == "subprocess.Popen", f"`relay {args[0]}` fetches first"
        assert loaded(found, BEFORE_THE_FETCH) == [], f"`relay {args[0]}`"
        assert loaded(found, ("relay.edges.git",)), "the probe lists what was loaded by then"


# What a full pass (`relay watch --once` with work, or --verbose) may have loaded when its
# first GET, the open-issue list, goes out: the idle pass's modules and the early GETs' ones.
FULL_PASS_MAY_LOAD = IDLE_MAY_LOAD | {"relay.commands.early"}


def test_a_full_pass_sends_the_list_before_loading_the_client(
    world: World, job: int, tmp_path: Path
) -> None:
    """A pass with work to do sends the open-issue list as it starts, before the client,
    the models and the protocol load; the client takes that answer as its own (the list
    asked once per pass, not twice) and the pass does its work as always. A pass looking
    at one issue, or one that finds another pass holding the lock, sends nothing early."""
    controller, worker = world.controller, world.worker
    controller.ok("task", str(job), "--step", "echo hello")
    before = gets(world, "/issues")
    found, said = first_request(tmp_path, worker, "watch", "--once", "--verbose")
    assert "RESULT 1 posted" in said, said
    assert found["event"] == "socket.connect", "the pass asks the API first"
    assert loaded(found, HEAVY) == [], "the list went out after the client loaded"
    extra = beyond_stdlib(found) - FULL_PASS_MAY_LOAD
    assert not extra, f"loaded {' '.join(sorted(extra))}"
    assert gets(world, "/issues") == before + 1, "the list was asked once, not twice"
    assert last_pass(worker)["outcome"] == "acted"

    # nothing to do now: the same
    before = gets(world, "/issues")
    found, said = first_request(tmp_path, worker, "watch", "--once", "--verbose")
    assert "nothing to do" in said, said
    assert loaded(found, HEAVY) == []
    assert gets(world, "/issues") == before + 1
    assert last_pass(worker)["requests"] >= 1, "the early answer is counted as the pass's"

    # one issue: that issue is what the pass asks for, so nothing goes early
    found, said = first_request(tmp_path, worker, "watch", "--once", "--issue", str(job))
    assert loaded(found, ("aiohttp",)), "the probe sees the client by the first request"

    # another pass holds the lock: this one is busy and asks for nothing, early or late
    import fcntl

    lock = NodeState.for_clone(worker.clone).root / "locks" / f"{worker.name}.lock"
    before = gets(world, "/issues")
    with lock.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        done = subprocess.run(
            [sys.executable, "-m", "relay.cli", "watch", "--once", "--verbose",
             "--repo-dir", str(worker.clone)],
            env=worker.env(), capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    assert "another relay pass is running" in done.stdout + done.stderr, done
    assert gets(world, "/issues") == before, "a busy pass asked for the list"
