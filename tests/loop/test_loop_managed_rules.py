"""The Managed Agents backend's pure decisions: the agents a roster becomes (as the SDK's
own parameter types accept them), the coordinator's roster and its limits, no shipping
tool on any roster agent, which events reach the board, how a permission request is read
and answered, a coordinator's claim, and each thread's mirrored status."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from relay.hub.agents_standin import ApiError, validate_params
from relay.loop import managed as m

IDS = {r.name: f"agent_{i:02d}" for i, r in enumerate(m.DEFAULT_ROLES)}


def test_each_role_and_the_coordinator_are_params_the_sdk_accepts() -> None:
    for role in m.DEFAULT_ROLES:
        params = m.agent_params(role)
        assert validate_params("agent", params)["name"] == f"relay {role.name}"
    coordinator = m.coordinator_params(IDS)
    valid = validate_params("agent", coordinator)
    roster = valid["multiagent"]["agents"]
    assert roster[:-1] == [{"type": "agent", "id": IDS[name]} for name in IDS]
    assert roster[-1] == {"type": "self"}  # copies of itself, for parallel work
    assert m.roster_ids(coordinator) == [*IDS.values(), "self"]


def test_the_sdk_params_refuse_what_they_do_not_declare() -> None:
    params = m.agent_params(m.DEFAULT_ROLES[0])
    with pytest.raises(ApiError, match="Extra inputs"):
        validate_params("agent", {**params, "callable_agents": ["agent_1"]})
    bad_tool = {**params, "tools": [{**params["tools"][0], "configs": [{"name": "bash", "x": 1}]}]}
    with pytest.raises(ApiError):  # deep inside an Iterable, validated as it is walked
        validate_params("agent", bad_tool)


def test_no_roster_agent_holds_a_shipping_tool() -> None:
    pushing = {
        "name": "relay maker",
        "model": m.DEFAULT_MODEL,
        "tools": [
            {
                "type": "custom",
                "name": "git_push",
                "description": "push",
                "input_schema": {"type": "object"},
            }
        ],
    }
    with pytest.raises(m.RosterError, match="shipping tool"):
        m.check_roster([pushing])
    mcp = {"name": "x", "model": "m", "mcp_servers": [{"name": "deployer", "type": "url"}]}
    with pytest.raises(m.RosterError, match="deployer"):
        m.check_roster([mcp])
    for role in m.DEFAULT_ROLES:
        assert m.shipping_tools(m.tool_names(m.agent_params(role))) == []
        assert "bash" not in m.tool_names(m.agent_params(role)) or "bash" in role.ask
    coordinator = m.coordinator_params(IDS)
    assert m.tool_names(coordinator) == ["read", "glob", "grep"]


def test_a_roster_past_twenty_or_naming_an_agent_twice_is_refused() -> None:
    many = {f"role{i}": f"agent_{i}" for i in range(20)}
    with pytest.raises(m.RosterError, match="1 to 20"):
        m.coordinator_params(many)  # twenty roles and `self` make 21
    assert len(m.roster_ids(m.coordinator_params(many, parallel=False))) == 20
    with pytest.raises(m.RosterError, match="twice"):
        m.coordinator_params({"maker": "agent_1", "code-reviewer": "agent_1"})
    assert m.maker_grades({"maker": "agent_1", "verifier": "agent_1"}, m.DEFAULT_ROLES) == [
        "verifier"
    ]


def test_an_unknown_tool_is_named() -> None:
    with pytest.raises(m.RosterError, match="no agent tool named git"):
        m.toolset(m.ManagedRole("maker", tools=("read", "git")))


def ask_event(thread: str = "sthr_1") -> dict[str, Any]:
    return {
        "type": "agent.tool_use",
        "id": "sevt_42",
        "name": "bash",
        "input": {"command": "pytest -q"},
        "evaluated_permission": "ask",
        "session_thread_id": thread,
    }


def test_which_events_reach_the_board() -> None:
    said = {"type": "agent.message", "content": [{"type": "text", "text": "Working G1\nmore"}]}
    assert m.board_line(said) == "coordinator: Working G1"
    assert m.board_line(ask_event()) == "permission asked in sthr_1: bash pytest -q"
    created = {"type": "session.thread_created", "agent_name": "relay maker"}
    assert m.board_line({**created, "session_thread_id": "sthr_2"}) == (
        "maker thread sthr_2 started"
    )
    for quiet in ("agent.thinking", "span.model_request_start", "session.usage", "agent.delta"):
        assert m.board_line({"type": quiet}) is None
    allowed = {**ask_event(), "evaluated_permission": "allow"}
    assert m.board_line(allowed) is None and m.permission_request(allowed) is None


def test_a_permission_request_is_routed_and_its_answer_read() -> None:
    request = m.permission_request(ask_event())
    assert request == m.Request("sevt_42", "sthr_1", "bash", "pytest -q")
    assert "`allow sevt_42`" in request.ask_text() and "thread sthr_1" in request.ask_text()
    assert m.parse_answer("allow sevt_42", "sevt_42") == ("allow", "")
    assert m.parse_answer("ok then\ndeny `sevt_42`: not on main", "sevt_42") == (
        "deny",
        "not on main",
    )
    assert m.parse_answer("allow sevt_41", "sevt_42") is None
    assert m.confirmation(request, ("allow", "")) == {
        "type": "user.tool_confirmation",
        "tool_use_id": "sevt_42",
        "result": "allow",
    }
    denied = m.confirmation(request, None)  # nobody answered: denied, saying why
    assert denied["result"] == "deny" and denied["deny_message"] == "no person answered"
    validate_params("events", {"events": [denied, m.verdict_message("G1", False, "red")]})


def test_a_claim_carries_its_goal_and_diff() -> None:
    text = "DONE G3\nAdded mul.\n```diff\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n```\n"
    found = m.claim({"type": "agent.message", "content": [{"type": "text", "text": text}]})
    assert found == m.Claim("G3", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", "Added mul.")
    worker = {"type": "agent.message", "session_thread_id": "sthr_1", "content": []}
    assert m.claim(worker) is None  # only the coordinator's primary thread claims
    said = {"type": "agent.message", "content": [{"type": "text", "text": "G3 is nearly DONE"}]}
    assert m.claim(said) is None


def test_thread_status_is_mirrored() -> None:
    state = m.State(session="sesn_1")
    created = {"type": "session.thread_created", "agent_name": "relay code-reviewer"}
    assert m.thread_update(state, {**created, "session_thread_id": "sthr_9"})
    assert state.threads["sthr_9"].role == "code-reviewer"
    idle = {"type": "session.thread_status_idle", "session_thread_id": "sthr_9"}
    m.thread_update(state, {**idle, "stop_reason": {"type": "requires_action", "event_ids": []}})
    assert state.threads["sthr_9"].status == "waiting"
    m.thread_update(state, ask_event("sthr_9"))
    assert state.threads["sthr_9"].last.startswith("permission asked in sthr_9")
    assert m.load_state(state.dump()) == state
    board = m.with_threads(m.with_session("# Board\n", "sesn_1", ["a", "b"]), state)
    assert m.session_lines(board) == ["a", "b"]
    again = m.with_session(board, "sesn_1", ["a", "b", "c"])
    assert m.session_lines(again) == ["a", "b", "c"] and again.count("## Managed threads") == 1
    assert "| code-reviewer | sthr_9 | waiting |" in again


@dataclass(frozen=True)
class Spec:
    """A role of LOOP.md's ``## Roles`` as the roster reads it."""

    name: str
    backend: str
    model: str | None = None
    instructions: str | None = None
    tools: tuple[str, ...] = ()


def test_the_roster_in_the_spine_decides_the_managed_roles() -> None:
    specs = [
        Spec("coordinator", "managed-agent", model="claude-opus-5"),
        Spec(
            "maker",
            "managed-agent",
            "claude-sonnet-5",
            "agents/maker.md",
            ("read", "edit", "write", "bash (ask)"),
        ),
        Spec("code-reviewer", "managed-agent", tools=("read", "grep")),
        Spec("red-team", "command", tools=("read",)),  # not a managed agent: left out
    ]
    roles, model = m.from_specs(specs, {"agents/maker.md": "Make the goal pass."})
    assert model == "claude-opus-5"
    maker, reviewer = roles
    assert (maker.name, maker.model, maker.instructions) == (
        "maker",
        "claude-sonnet-5",
        "Make the goal pass.",
    )
    assert maker.tools == ("read", "edit", "write", "bash") and maker.ask == ("bash",)
    assert reviewer.grades and not maker.grades and reviewer.model == m.DEFAULT_MODEL
    params = m.agent_params(maker)
    validate_params("agent", params)
    assert m.tool_names(params) == ["bash", "edit", "read", "write"]
    with pytest.raises(m.RosterError, match="ships"):
        m.from_specs([Spec("maker", "managed-agent", tools=("read", "git-push"))], {})
    assert m.from_specs([Spec("maker", "command")], {}) == (m.DEFAULT_ROLES, None)


def test_which_claims_relay_judges() -> None:
    found = m.Claim("G2", "--- a/x\n+++ b/x\n", "said")
    assert m.not_judged(found, only=None, judged=0, budget=None) == ""
    assert m.not_judged(found, only="G1", judged=0, budget=None) == "this run works only G1"
    assert "at most 2 claim(s)" in m.not_judged(found, only=None, judged=2, budget=2)
    empty = m.Claim("G2", "  \n", "said")
    assert m.not_judged(empty, only="G2", judged=0, budget=3) == "the claim carried no diff"
