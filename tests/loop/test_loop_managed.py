"""The Managed Agents backend end to end, against the stand-in of the API run as its own
process (every request checked against the official SDK's parameter types, every answer
against its models), with the agents' behaviour scripted by each test: the roster and
the coordinator created as the SDK accepts them, a run whose events reach the board and
whose claim is judged by relay's own gates, a role interrupted and its thread archived,
and an ``always_ask`` request answered by a person through a relay job comment on a real
`relay hub`."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import managed_standin
import pytest
from loop_project import CALC_MUL, TEST_GATE, TEST_MUL, make_project
from managed_standin import Standin
from worlds import data_of, git

from relay.loop import managed as m

standin_process = managed_standin.standin_process  # the fixtures, shared
standin = managed_standin.standin


LEAK = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a token-shaped secret an agent says


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
    agents = [a for a in client.beta.agents.list() if a.id in {*ids.values(), coordinator}]
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
            [{"say": f"All goals are done; pushed with {LEAK}"}],
        ]
    )
    assert project.loop("roster", "create", "--backend", "managed-agents").status == 0
    plan = project.loop("run", "--backend", "managed-agents", "--dry-run")
    assert plan.status == 0 and plan.data["started"] is False
    before = project.subjects()
    ran = project.loop("run", "--backend", "managed-agents")
    assert ran.status == 0, ran
    assert ran.data["kept"] == ["G1"], (ran.data, project.read("docs/loop/handover.md")[-1500:])
    assert ran.data["refused"] == ["G1: the claim carried no diff"]  # a claim is no verdict
    # no person to ask (not a terminal, no --ask-on): the push is denied, saying why
    [asked] = ran.data["asked"]
    assert asked["result"] == "deny" and asked["thread"].startswith("sthr_")
    session = ran.data["session"]
    [denial] = api.sent("user.tool_confirmation", session)
    assert denial["tool_use_id"] == asked["tool_use_id"] and "no person" in denial["deny_message"]
    verdicts = [e["content"][0]["text"] for e in api.sent("user.message", session)[1:]]
    assert verdicts == [
        "relay did not keep G1: the claim carried no diff",
        "relay kept G1: its gates passed.",
    ]
    board = project.read("docs/loop/BOARD.md")
    lines = m.session_lines(board)
    assert "coordinator: DONE G1" in lines
    [last] = [ln for ln in lines if ln.startswith("coordinator: All goals are done")]
    assert LEAK not in board and LEAK[:8] not in last  # redacted, as any text relay posts
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
    assert data["threads"][reviewer.id] in ("idle", "archived")  # the run went on to its end
    status = project.loop("status").data["managed_threads"]
    assert {t["thread"]: t["status"] for t in status}[reviewer.id] == "archived"
    [interrupt] = api.sent("user.interrupt", data["session"])
    assert interrupt == {"type": "user.interrupt", "session_thread_id": reviewer.id}
    client = api.client()
    got = client.beta.sessions.threads.retrieve(reviewer.id, session_id=data["session"])
    assert got.archived_at is not None
    others = [t for t in client.beta.sessions.threads.list(data["session"]) if t.id != reviewer.id]
    assert others and all(t.archived_at is None for t in others)  # only that role stopped
    board = project.read("docs/loop/BOARD.md")
    assert "coordinator: the reviewer stopped; carrying on" in m.session_lines(board)
    again = project.loop("interrupt", "code-reviewer")  # archived: nothing left to stop
    assert again.status != 0 and "is not running" in again.errors[0]["message"]


# --- the stand-in holds the documented limits (a difference from the API is a bug) ---


def roster_of(client: Any, n: int) -> list[str]:
    made = [client.beta.agents.create(**m.agent_params(m.ManagedRole(f"r{i}"))) for i in range(n)]
    return [a.id for a in made]


def test_the_standin_refuses_what_the_api_refuses(standin: Callable[..., Standin]) -> None:
    import anthropic

    api = standin([])
    client = api.client()
    ids = roster_of(client, 21)
    coordinator = {"name": "c", "model": m.DEFAULT_MODEL}
    with pytest.raises(anthropic.BadRequestError, match="1-20"):
        client.beta.agents.create(**coordinator, multiagent={"type": "coordinator", "agents": ids})
    lead = client.beta.agents.create(
        **coordinator, multiagent={"type": "coordinator", "agents": ids[:2]}
    )
    with pytest.raises(anthropic.BadRequestError, match="may not itself have multiagent"):
        client.beta.agents.create(
            **coordinator, multiagent={"type": "coordinator", "agents": [lead.id]}
        )
    with pytest.raises(anthropic.BadRequestError, match="not distinct"):
        client.beta.agents.create(
            **coordinator, multiagent={"type": "coordinator", "agents": [ids[0], ids[0]]}
        )
    with pytest.raises(anthropic.BadRequestError, match="Extra inputs"):
        client.beta.agents.create(**coordinator, extra_body={"callable_agents": ids[:1]})
    with pytest.raises(anthropic.BadRequestError, match="beta header"):
        client.beta.agents.create(**coordinator, extra_headers={"anthropic-beta": "other"})
    with pytest.raises(anthropic.AuthenticationError):
        client.with_options(api_key="wrong").beta.agents.retrieve(lead.id)


def test_the_standin_holds_the_thread_limit_and_the_archive_rules(
    standin: Callable[..., Standin],
) -> None:
    import anthropic

    api = standin([[{"spawn": "r0", "as": f"m{i}"} for i in range(26)]])
    client = api.client()
    [maker] = roster_of(client, 1)  # named "relay r0"
    lead = client.beta.agents.create(
        name="c", model=m.DEFAULT_MODEL, multiagent={"type": "coordinator", "agents": [maker]}
    )
    env = client.beta.environments.create(name="limits")
    session = client.beta.sessions.create(agent=lead.id, environment_id=env.id)
    seen: list[Any] = []
    with client.beta.sessions.events.stream(session.id) as stream:
        client.beta.sessions.events.send(
            session.id,
            events=[{"type": "user.message", "content": [{"type": "text", "text": "go"}]}],
        )
        for event in stream:
            seen.append(event)
            if event.type == "session.status_idle":
                break
    created = [e for e in seen if e.type == "session.thread_created"]
    threads = list(client.beta.sessions.threads.list(session.id))
    assert len(created) == m.MAX_THREADS - 1  # the primary is the 25th running thread
    assert len(threads) == m.MAX_THREADS
    primary = next(t for t in threads if t.parent_thread_id is None)
    running = next(t for t in threads if t.parent_thread_id is not None)
    assert running.status == "running"
    with pytest.raises(anthropic.BadRequestError, match="primary"):
        client.beta.sessions.threads.archive(primary.id, session_id=session.id)
    with pytest.raises(anthropic.BadRequestError, match="interrupt it first"):
        client.beta.sessions.threads.archive(running.id, session_id=session.id)


def test_an_interactive_run_asks_on_the_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io

    from relay.commands.loop_managed import NoPerson, Terminal

    request = m.Request("sevt_7", "sthr_3", "bash", "make deploy")
    for typed, expected in (
        ("allow\n", ("allow", "")),
        ("deny: not tonight\n", ("deny", "not tonight")),
        ("deny sevt_7: later\n", ("deny", "later")),
        ("\n", None),  # no answer: the confirmation denies, saying nobody answered
    ):
        monkeypatch.setattr("sys.stdin", io.StringIO(typed))
        assert Terminal().ask(request) == expected
        assert "`make deploy`" in capsys.readouterr().err
    assert NoPerson().ask(request) == (
        "deny",
        "no person to ask: run with --ask-on JOB or in a terminal",
    )


def test_the_roster_in_loop_md_decides_the_agents(
    tmp_path: Path, standin: Callable[..., Standin]
) -> None:
    project = make_project(tmp_path, gates=(TEST_GATE,))
    project.write("agents/maker.md", "Make the goal's test pass; report the diff.\n")
    loop = project.read("docs/loop/LOOP.md")
    roles = (
        "- maker: managed-agent\n  - Model: claude-sonnet-5\n"
        "  - Instructions: `agents/maker.md`\n  - Tools: read, edit, write, bash (ask)\n"
        "- code-reviewer: managed-agent\n  - Tools: read, grep\n"
        "- coordinator: managed-agent\n  - Model: claude-opus-5\n"
    )
    head, _, rest = loop.partition("## Roles\n")
    body, sep, tail = rest.partition("\n## ")
    project.write(  # the roles after the section's prose
        "docs/loop/LOOP.md", f"{head}## Roles\n{body.rstrip()}\n\n{roles}\n{sep.lstrip()}{tail}"
    )
    api = standin([])
    ran = project.loop("roster", "create", "--backend", "managed-agents")
    assert ran.status == 0, ran
    assert set(ran.data["agents"]) == {"maker", "code-reviewer"}
    client = api.client()
    maker = client.beta.agents.retrieve(ran.data["agents"]["maker"])
    assert (
        maker.model.id == "claude-sonnet-5"
        and maker.system == "Make the goal's test pass; report the diff.\n"
    )
    [toolset] = maker.tools
    policies = {c.name: c.permission_policy.type for c in toolset.configs}  # type: ignore[union-attr]
    assert policies == {
        "read": "always_allow",
        "edit": "always_allow",
        "write": "always_allow",
        "bash": "always_ask",
    }
    assert client.beta.agents.retrieve(ran.data["coordinator"]).model.id == "claude-opus-5"
    project.write(
        "docs/loop/LOOP.md",
        project.read("docs/loop/LOOP.md").replace("read, grep", "read, git-push"),
    )
    refused = project.loop("roster", "create", "--backend", "managed-agents")
    assert refused.status != 0 and "ships" in refused.errors[0]["message"]
