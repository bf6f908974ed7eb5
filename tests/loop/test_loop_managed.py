"""The Managed Agents backend end to end, against the stand-in of the API run as its own
process (every request checked against the official SDK's parameter types, every answer
against its models), with the agents' behaviour scripted by each test: the roster and
the coordinator created as the SDK accepts them, a run whose events reach the board and
whose claim is judged by relay's own gates, a role interrupted and its thread archived,
and an ``always_ask`` request answered by a person through a relay job comment on a real
`relay hub`."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from loop_project import CALC_MUL, TEST_GATE, TEST_MUL, make_project
from worlds import OWNER, HubLike, Tokens, World, data_of, git, make_world

from relay.loop import managed as m

KEY = "sk-test-standin"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Standin:
    """The stand-in process and the SDK client the test reads it with."""

    def __init__(self, url: str) -> None:
        self.url = url

    def client(self) -> Any:
        import anthropic

        return anthropic.Anthropic(base_url=self.url, api_key=KEY)

    def requests(self) -> list[dict[str, Any]]:
        """The event bodies relay sent (the stand-in's window for tests)."""
        ask = urllib.request.Request(
            f"{self.url}/_standin/requests",
            headers={"anthropic-beta": m.BETA, "x-api-key": KEY},
        )
        with urllib.request.urlopen(ask, timeout=10) as answer:
            found: list[dict[str, Any]] = json.loads(answer.read())
        return found

    def sent(self, kind: str) -> list[dict[str, Any]]:
        return [e for r in self.requests() for e in r["events"] if e["type"] == kind]


@pytest.fixture
def standin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[list[list[dict[str, Any]]]], Standin]]:
    """``standin(turns)`` starts the stand-in with the agents' scripted turns and points
    relay at it (ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY)."""
    procs: list[subprocess.Popen[str]] = []

    def start(turns: list[list[dict[str, Any]]]) -> Standin:
        script = tmp_path / "agents.json"
        script.write_text(json.dumps({"turns": turns}))
        port = free_port()
        argv = [sys.executable, "-m", "relay.hub.agents_standin", "--port", str(port)]
        argv += ["--script", str(script), "--api-key", KEY]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(proc)
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("listening"), proc.stderr
        url = f"http://127.0.0.1:{port}"
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        return Standin(url)

    yield start
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def mul_diff(root: Path) -> str:
    """The change that makes G1 pass, as a coordinator's diff (made in the clone, then
    undone, so the tree is as it was)."""
    (root / "src/calc.py").write_text(CALC_MUL)
    (root / "tests/test_mul.py").write_text(TEST_MUL)
    git("add", "-N", "tests/test_mul.py", cwd=root)
    diff = git("diff", cwd=root)
    git("reset", "-q", cwd=root)
    (root / "tests/test_mul.py").unlink()
    git("checkout", "-q", "--", "src/calc.py", cwd=root)
    return diff


def done(goal: str, diff: str) -> dict[str, str]:
    return {"say": f"DONE {goal}\nAdded mul() and its test.\n```diff\n{diff}```\n"}


def test_the_roster_is_created_as_the_sdk_accepts_it(
    tmp_path: Path, standin: Callable[..., Standin]
) -> None:
    project = make_project(tmp_path, gates=(TEST_GATE,))
    api = standin([])
    ran = project.loop("roster", "create", "--backend", "managed-agents")
    assert ran.status == 0, ran
    ids, coordinator = ran.data["agents"], ran.data["coordinator"]
    assert set(ids) == {r.name for r in m.DEFAULT_ROLES}
    state = m.load_state(project.read(m.STATE_NAME))  # recorded in the spine's state
    assert (state.agents, state.coordinator) == (ids, coordinator)
    client = api.client()
    made = client.beta.agents.retrieve(coordinator)
    assert made.multiagent is not None and made.multiagent.type == "coordinator"
    roster = [a.id for a in made.multiagent.agents]
    assert sorted(roster[:-1]) == sorted(ids.values())
    assert roster[-1] == coordinator  # `self`, resolved to the coordinator itself
    assert len(roster) <= m.MAX_ROSTER
    agents = list(client.beta.agents.list())
    assert len(agents) == len(ids) + 1
    for agent in agents:  # as the API holds them: no agent may ship
        names = m.tool_names(agent.model_dump(mode="json"))
        assert m.shipping_tools(names) == [], (agent.name, names)
        assert agent.multiagent is None or agent.id == coordinator
    maker = client.beta.agents.retrieve(ids["maker"])
    [toolset] = maker.tools
    policies = {c.name: c.permission_policy.type for c in toolset.configs}  # type: ignore[union-attr]
    assert policies["bash"] == "always_ask" and policies["edit"] == "always_allow"


def test_without_a_key_or_a_roster_the_run_says_what_to_do(
    tmp_path: Path, standin: Callable[..., Standin], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path, gates=(TEST_GATE,))
    standin([])
    ran = project.loop("run", "--backend", "managed-agents")
    assert ran.status != 0 and "roster create --backend managed-agents" in str(ran.errors)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    ran = project.loop("roster", "create", "--backend", "managed-agents")
    assert ran.status != 0 and "ANTHROPIC_API_KEY is not set" in ran.errors[0]["message"]
    assert not (project.root / m.STATE_NAME).exists()  # nothing half-written


def test_a_run_streams_to_the_board_and_its_claim_is_judged_by_relays_gates(
    tmp_path: Path, standin: Callable[..., Standin]
) -> None:
    project = make_project(tmp_path, gates=(TEST_GATE,))
    diff = mul_diff(project.root)
    api = standin(
        [
            [
                {"spawn": "maker", "as": "m1"},
                {"in": "m1", "say": "adding mul"},
                {"in": "m1", "tool": "bash", "input": {"command": "git push origin main"}},
                {"in": "m1", "idle": True},
                {"say": "DONE G1\nno diff this time"},
            ],
            [done("G1", diff)],
            [{"say": "All goals are done."}],
        ]
    )
    assert project.loop("roster", "create", "--backend", "managed-agents").status == 0
    before = project.subjects()
    ran = project.loop("run", "--backend", "managed-agents")
    assert ran.status == 0, ran
    assert ran.data["kept"] == ["G1"]
    assert ran.data["refused"] == ["G1: the claim carried no diff"]  # a claim is no verdict
    # no person to ask (not a terminal, no --ask-on): the push is denied, saying why
    [asked] = ran.data["asked"]
    assert asked["result"] == "deny" and asked["thread"].startswith("sthr_")
    [denial] = api.sent("user.tool_confirmation")
    assert denial["tool_use_id"] == asked["tool_use_id"] and "no person" in denial["deny_message"]
    verdicts = [e["content"][0]["text"] for e in api.sent("user.message")[1:]]
    assert verdicts == [
        "relay did not keep G1: the claim carried no diff",
        "relay kept G1: its gates passed.",
    ]
    board = project.read("docs/loop/BOARD.md")
    lines = m.session_lines(board)
    assert "coordinator: DONE G1" in lines and "coordinator: All goals are done." in lines
    assert any(ln.startswith("maker thread sthr_") for ln in lines)
    assert any("permission asked in sthr_" in ln and "git push" in ln for ln in lines)
    assert "| G1 | Multiply | done |" in board
    after = project.subjects()[len(before) :]
    assert any(s.startswith("loop: G1") or "G1" in s for s in after), after
    assert (project.root / "tests/test_mul.py").read_text() == TEST_MUL
    assert project.clean()
    status = project.loop("status")
    [thread] = status.data["managed_threads"]
    assert (thread["role"], thread["status"]) == ("maker", "idle")


def test_interrupt_stops_one_role_and_archives_its_thread(
    tmp_path: Path, standin: Callable[..., Standin]
) -> None:
    project = make_project(tmp_path, gates=(TEST_GATE,))
    api = standin(
        [
            [
                {"spawn": "code-reviewer", "as": "r1"},
                {"spawn": "maker", "as": "m1"},
                {"in": "r1", "say": "reviewing"},
                {"in": "r1", "hold": True},
                {"in": "m1", "idle": True},
                {"say": "the reviewer stopped; carrying on"},
            ]
        ]
    )
    assert project.loop("roster", "create", "--backend", "managed-agents").status == 0
    run = project.spawn("run", "--backend", "managed-agents", "--json")
    try:
        state = m.State()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            path = project.root / m.STATE_NAME
            state = m.load_state(path.read_text())
            if any(t.role == "code-reviewer" for t in state.threads.values()):
                break
            time.sleep(0.2)
        [reviewer] = [t for t in state.threads.values() if t.role == "code-reviewer"]
        assert reviewer.status == "running"
        stopped = project.loop("interrupt", "code-reviewer")
        assert stopped.status == 0, stopped
        assert stopped.data["threads"] == [{"thread": reviewer.id, "status": "archived"}]
        out, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert run.returncode == 0, err
    data = data_of(out)
    assert data["threads"][reviewer.id] == "idle"  # the run went on to its end
    [interrupt] = api.sent("user.interrupt")
    assert interrupt == {"type": "user.interrupt", "session_thread_id": reviewer.id}
    client = api.client()
    got = client.beta.sessions.threads.retrieve(reviewer.id, session_id=data["session"])
    assert got.archived_at is not None
    others = [t for t in client.beta.sessions.threads.list(data["session"]) if t.id != reviewer.id]
    assert others and all(t.archived_at is None for t in others)  # only that role stopped
    board = project.read("docs/loop/BOARD.md")
    assert "coordinator: the reviewer stopped; carrying on" in m.session_lines(board)


# --- a person answers through a relay job on a real hub ---


@pytest.fixture(scope="module")
def tokens(git_hub: HubLike) -> Tokens:
    return Tokens(git_hub)


@pytest.fixture
def world(
    tmp_path: Path,
    git_hub: HubLike,
    tokens: Tokens,
    unique: str,
    monkeypatch: pytest.MonkeyPatch,
) -> World:
    for name in ("RELAY_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "RELAY_API_URL", "RELAY_NODE"):
        monkeypatch.delenv(name, raising=False)
    empty = tmp_path / "gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    made = make_world(tmp_path, git_hub, tokens, name=f"managed-{unique}", monkeypatch=monkeypatch)
    made.init()
    made.join_both()
    return made


@pytest.mark.timeout(300)
def test_a_permission_request_reaches_a_person_through_a_relay_job(
    world: World, standin: Callable[..., Standin]
) -> None:
    c = world.controller
    root = c.clone
    from loop_project import FILES

    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git("add", "-A", cwd=root)
    git("commit", "-qm", "the calc project", cwd=root)
    c.call("loop", "init", "--gate", TEST_GATE, "--retries", "0")  # commits the spine
    job = world.open_job(title="Permissions of the managed run", objective="Answer them.")
    api = standin(
        [
            [
                {"spawn": "maker", "as": "m1"},
                {"in": "m1", "tool": "bash", "input": {"command": "pytest -q"}},
                {"in": "m1", "idle": True},
                {"say": "done asking"},
            ]
        ]
    )
    env = c.env(ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY=KEY)
    made = subprocess.run(
        c.argv("loop", "roster", "create", "--backend", "managed-agents", "--json"),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    run = subprocess.Popen(
        c.argv("loop", "run", "--backend", "managed-agents", "--ask-on", str(job), "--json"),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    answered = threading.Event()

    def person() -> None:
        """The person reads the job, answers the request it names (a stranger's answer,
        and one to another request, are not taken)."""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not answered.is_set():
            for comment in world.comments(job):
                if comment["body"].startswith("**Permission asked**"):
                    tool_use_id = comment["body"].split("`allow ", 1)[1].split("`", 1)[0]
                    world.stranger_comment(job, f"allow {tool_use_id}")
                    world.api(
                        f"/issues/{job}/comments", "POST", {"body": "allow sevt_not_this_one"}
                    )
                    world.api(
                        f"/issues/{job}/comments",
                        "POST",
                        {"body": f"deny {tool_use_id}: tests only"},
                    )
                    answered.set()
                    return
            time.sleep(0.5)

    helper = threading.Thread(target=person, daemon=True)
    helper.start()
    try:
        out, err = run.communicate(timeout=240)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
        answered.set()
        helper.join(timeout=10)
    assert run.returncode == 0, err
    data = data_of(out)
    [asked] = data["asked"]
    assert asked["result"] == "deny"
    [sent] = api.sent("user.tool_confirmation")
    assert sent == {
        "type": "user.tool_confirmation",
        "tool_use_id": asked["tool_use_id"],
        "result": "deny",
        "deny_message": "tests only",
    }
    [posted] = [x for x in world.comments(job) if x["body"].startswith("**Permission asked**")]
    assert "thread sthr_" in posted["body"] and "`bash`" in posted["body"]
    assert posted["user"]["login"] == OWNER  # the controller node acts with its person's token
    # the worker thread's tool result is the person's denial
    client = api.client()
    events = client.beta.sessions.threads.events.list(asked["thread"], session_id=data["session"])
    [result] = [e for e in events if e.type == "agent.tool_result"]
    assert result.is_error and "tests only" in str(result.content)
