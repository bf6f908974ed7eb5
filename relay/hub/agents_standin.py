"""A stand-in of the part of the Managed Agents API (``managed-agents-2026-04-01``) relay
uses, since the hosted API cannot be reached from a test machine: agents, environments,
sessions, session events and their stream, session threads (list, retrieve, archive,
their streams) and ``user.interrupt``.

Ground rules: every request body is validated against the official SDK's own parameter
types (``anthropic.types.beta.*_params``, unknown keys refused) and every answer is built
as data the SDK's own response models accept (validated before it is sent), the way the
hub is held to githubkit's models. The documented limits hold: a coordinator's roster is
1-20 distinct agents (at most one ``self``, none itself a coordinator), a session runs at
most 25 threads at once, a worker thread's ``always_ask`` tool use is cross-posted to the
primary thread, a thread is archived only when idle and never the primary one. The
agents' behaviour is scripted (``--script FILE``): each user message starts the next
turn's steps — spawn a thread, say something, use a tool (asking when its policy says
so), hold until interrupted, go idle. Every difference from the documented API is a bug.

Run it as ``python -m relay.hub.agents_standin --port N --script FILE``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import secrets
import sys
import warnings
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from aiohttp import web

BETA = "managed-agents-2026-04-01"
MAX_ROSTER = 20
MAX_THREADS = 25
ROUTES_KEY = web.AppKey("standin", object)


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(12)}"


class ApiError(Exception):
    """An error the API answers with its documented body."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message

    def response(self) -> web.Response:
        body = {"type": "error", "error": {"type": self.kind, "message": self.message}}
        return web.json_response(body, status=self.status)


# --- validation against the SDK's own types ---


@cache
def _params(name: str) -> Any:
    """A validator of the SDK's parameter TypedDict ``name`` that refuses unknown keys."""
    from typing import List  # noqa: UP035  (pydantic needs a type to hang the config on)

    from anthropic.types.beta import agent_create_params, environment_create_params
    from anthropic.types.beta import session_create_params as sessions
    from anthropic.types.beta.sessions import event_send_params
    from pydantic import ConfigDict, TypeAdapter

    kinds: dict[str, Any] = {
        "agent": agent_create_params.AgentCreateParams,
        "environment": environment_create_params.EnvironmentCreateParams,
        "session": sessions.SessionCreateParams,
        "events": event_send_params.EventSendParams,
    }
    with warnings.catch_warnings():  # a JSON schema param allows extra keys, as it should
        warnings.simplefilter("ignore")
        return TypeAdapter(List[kinds[name]], config=ConfigDict(extra="forbid"))  # type: ignore[valid-type]  # noqa: UP006


def _materialise(value: Any) -> Any:
    """Walk what pydantic validated lazily (an ``Iterable`` field is validated as it is
    iterated), so that an invalid item deep inside is refused now."""
    if isinstance(value, dict):
        return {k: _materialise(v) for k, v in value.items()}
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return value
    return [_materialise(v) for v in value]


def validate_params(name: str, body: Any) -> dict[str, Any]:
    """``body`` as the SDK's ``name`` parameters accept it; 400 invalid_request_error when
    they do not (the fields that are headers in the SDK, ``betas`` and ``workspace_id``,
    are never in a body)."""
    from pydantic import ValidationError

    if not isinstance(body, dict) or "betas" in body or "workspace_id" in body:
        raise ApiError(400, "invalid_request_error", "the body is not a JSON object of params")
    try:
        [valid] = _materialise(_params(name).validate_python([body]))
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"][1:])
        raise ApiError(400, "invalid_request_error", f"{where}: {first['msg']}") from None
    return dict(valid)


@cache
def _models() -> dict[str, Any]:
    from anthropic.types.beta import (
        BetaEnvironment,
        BetaManagedAgentsAgent,
        BetaManagedAgentsSession,
    )
    from anthropic.types.beta.sessions import (
        BetaManagedAgentsSendSessionEvents,
        BetaManagedAgentsSessionEvent,
        BetaManagedAgentsSessionThread,
        BetaManagedAgentsStreamSessionEvents,
    )
    from pydantic import TypeAdapter

    return {
        "agent": BetaManagedAgentsAgent,
        "environment": BetaEnvironment,
        "session": BetaManagedAgentsSession,
        "thread": BetaManagedAgentsSessionThread,
        "sent": BetaManagedAgentsSendSessionEvents,
        "event": TypeAdapter(BetaManagedAgentsStreamSessionEvents),
        "listed": TypeAdapter(BetaManagedAgentsSessionEvent),
    }


def _extras(model: Any, where: str = "") -> list[str]:
    """Fields a model accepted without declaring them (the SDK's models allow extras,
    which would hide a misspelt field)."""
    from pydantic import BaseModel

    found: list[str] = []
    if isinstance(model, BaseModel):
        found += [f"{where}.{k}" for k in (model.model_extra or {})]
        for name in type(model).model_fields:
            found += _extras(getattr(model, name), f"{where}.{name}")
    elif isinstance(model, list):
        for i, item in enumerate(model):
            found += _extras(item, f"{where}[{i}]")
    return found


def answer(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` once the SDK's ``kind`` model accepts it whole (no undeclared field)."""
    adapter = _models()[kind]
    adapted = kind in ("event", "listed")
    model = adapter.validate_python(data) if adapted else adapter.model_validate(data)
    extra = _extras(model)
    if extra:
        raise AssertionError(f"the stand-in answered fields the SDK does not know: {extra}")
    return data


def page(kind: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"data": [answer(kind, i) for i in items], "next_page": None}


# --- the resources ---


def _toolset_out(tool: dict[str, Any]) -> dict[str, Any]:
    """A toolset as the API answers it: the default config filled in."""
    if tool.get("type") != "agent_toolset_20260401":
        return tool
    default = dict(tool.get("default_config") or {})
    policy = default.get("permission_policy") or {"type": "always_allow"}
    configs = []
    for c in tool.get("configs") or []:
        configs.append(
            {
                "name": c["name"],
                "type": c["name"],
                "enabled": c.get("enabled", default.get("enabled", True)),
                "permission_policy": c.get("permission_policy") or policy,
            }
        )
    return {
        "type": "agent_toolset_20260401",
        "configs": configs,
        "default_config": {"enabled": default.get("enabled", True), "permission_policy": policy},
    }


def policy_of(agent: dict[str, Any], tool: str) -> str | None:
    """The permission policy of ``tool`` on ``agent`` (None: not enabled)."""
    for t in agent.get("tools") or []:
        if t.get("type") != "agent_toolset_20260401":
            continue
        for c in t["configs"]:
            if c["name"] == tool:
                return str(c["permission_policy"]["type"]) if c["enabled"] else None
        if t["default_config"]["enabled"]:
            return str(t["default_config"]["permission_policy"]["type"])
    return None


@dataclass
class ThreadSim:
    id: str
    agent: dict[str, Any]
    parent: str | None
    status: str = "idle"
    archived_at: str | None = None
    created_at: str = field(default_factory=_now)
    updated_at: str = field(default_factory=_now)
    events: list[dict[str, Any]] = field(default_factory=list)
    watchers: list[asyncio.Queue[dict[str, Any] | None]] = field(default_factory=list)
    interrupted: asyncio.Event = field(default_factory=asyncio.Event)

    def thread_agent(self) -> dict[str, Any]:
        return thread_agent(self.agent)


def thread_agent(a: dict[str, Any]) -> dict[str, Any]:
    """An agent's snapshot as a thread (or a session's roster) shows it."""
    keys = ("id", "description", "execution_identity", "mcp_servers", "model", "name")
    out = {k: a[k] for k in keys}
    return {
        **out,
        "skills": a["skills"],
        "system": a["system"],
        "tools": a["tools"],
        "type": "agent",
        "version": a["version"],
    }


@dataclass
class SessionSim:
    id: str
    data: dict[str, Any]
    coordinator: dict[str, Any]
    primary: ThreadSim
    threads: dict[str, ThreadSim] = field(default_factory=dict)
    inbox: asyncio.Queue[dict[str, Any]] = field(default_factory=asyncio.Queue)
    pending: dict[str, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    runner: asyncio.Task[None] | None = None
    script: dict[str, Any] = field(default_factory=dict)  # the turns it was created under


class Standin:
    """The API's state and the scripted agents' behaviour."""

    def __init__(self, script: dict[str, Any], api_key: str | None) -> None:
        self.script = script
        self.api_key = api_key
        self.agents: dict[str, dict[str, Any]] = {}
        self.environments: dict[str, dict[str, Any]] = {}
        self.sessions: dict[str, SessionSim] = {}
        self.requests: list[dict[str, Any]] = []  # what relay sent, for the tests to read

    # --- agents ---

    def create_agent(self, body: dict[str, Any]) -> dict[str, Any]:
        params = validate_params("agent", body)
        multi = params.get("multiagent")
        now = _now()
        agent_id = _id("agent")
        resolved = None
        if multi is not None:
            resolved = self._resolve_roster(multi, agent_id)
        model = params["model"]
        agent = {
            "id": agent_id,
            "archived_at": None,
            "created_at": now,
            "description": params.get("description"),
            "execution_identity": {"type": "service_account"},
            "mcp_servers": [],
            "metadata": params.get("metadata") or {},
            "model": {"id": model} if isinstance(model, str) else model,
            "multiagent": resolved,
            "name": params["name"],
            "skills": [],
            "system": params.get("system"),
            "tools": [_toolset_out(t) for t in params.get("tools") or []],
            "type": "agent",
            "updated_at": now,
            "version": 1,
        }
        answer("agent", agent)
        self.agents[agent_id] = agent
        return agent

    def _resolve_roster(self, multi: dict[str, Any], own: str) -> dict[str, Any]:
        if multi.get("type") != "coordinator":
            raise ApiError(400, "invalid_request_error", "multiagent.type: only coordinator")
        entries = list(multi["agents"])
        if not 1 <= len(entries) <= MAX_ROSTER:
            raise ApiError(
                400, "invalid_request_error", f"multiagent.agents: 1-{MAX_ROSTER} entries"
            )
        refs: list[dict[str, Any]] = []
        seen: set[str] = set()
        selves = 0
        for e in entries:
            if isinstance(e, str):
                e = {"type": "agent", "id": e}
            if e.get("type") == "self":
                selves += 1
                ident = own
            elif e.get("type") == "agent":
                ident = e["id"]
                target = self.agents.get(ident)
                if target is None or target["archived_at"] is not None:
                    raise ApiError(
                        400, "invalid_request_error", f"multiagent.agents: no agent {ident}"
                    )
                if target["multiagent"] is not None:
                    raise ApiError(
                        400,
                        "invalid_request_error",
                        "multiagent.agents: a roster agent may not itself have multiagent",
                    )
            else:
                raise ApiError(400, "invalid_request_error", "multiagent.agents: unknown entry")
            if ident in seen or selves > 1:
                raise ApiError(400, "invalid_request_error", "multiagent.agents: not distinct")
            seen.add(ident)
            refs.append({"type": "agent", "id": ident, "version": int(e.get("version") or 1)})
        return {"type": "coordinator", "agents": refs}

    # --- environments ---

    def create_environment(self, body: dict[str, Any]) -> dict[str, Any]:
        params = validate_params("environment", body)
        now = _now()
        env = {
            "id": _id("env"),
            "archived_at": None,
            "config": {
                "type": "cloud",
                "networking": {"type": "unrestricted"},
                "packages": {"apt": [], "cargo": [], "gem": [], "go": [], "npm": [], "pip": []},
            },
            "created_at": now,
            "description": params.get("description"),
            "metadata": params.get("metadata") or {},
            "name": params["name"],
            "type": "environment",
            "updated_at": now,
        }
        answer("environment", env)
        self.environments[env["id"]] = env
        return env

    # --- sessions ---

    def create_session(self, body: dict[str, Any]) -> dict[str, Any]:
        params = validate_params("session", body)
        ref = params["agent"]
        agent_id = ref if isinstance(ref, str) else ref["id"]
        agent = self.agents.get(agent_id)
        if agent is None:
            raise ApiError(404, "not_found_error", f"agent {agent_id} not found")
        if params["environment_id"] not in self.environments:
            raise ApiError(404, "not_found_error", f"environment {params['environment_id']}")
        sid = _id("sesn")
        now = _now()
        session_agent = {
            k: agent[k]
            for k in ("id", "description", "execution_identity", "mcp_servers", "model", "name")
        }
        roster = agent["multiagent"]
        if roster is not None:  # the session shows each roster agent's snapshot
            roster = {
                "type": "coordinator",
                "agents": [thread_agent(self.agents[r["id"]]) for r in roster["agents"]],
            }
        session_agent.update(
            multiagent=roster,
            skills=agent["skills"],
            system=agent["system"],
            tools=agent["tools"],
            type="agent",
            version=agent["version"],
        )
        data = {
            "id": sid,
            "agent": session_agent,
            "archived_at": None,
            "created_at": now,
            "environment_id": params["environment_id"],
            "metadata": params.get("metadata") or {},
            "outcome_evaluations": [],
            "resources": [],
            "stats": {},
            "status": "idle",
            "title": params.get("title"),
            "type": "session",
            "updated_at": now,
            "usage": {},
            "vault_ids": list(params.get("vault_ids") or []),
        }
        answer("session", data)
        primary = ThreadSim(_id("sthr"), agent, None)
        sim = SessionSim(sid, data, agent, primary, {primary.id: primary}, script=self.script)
        self.sessions[sid] = sim
        sim.runner = asyncio.get_running_loop().create_task(self._run(sim))
        for event in params.get("initial_events") or []:
            self._user_event(sim, event)
        return data

    def session(self, sid: str) -> SessionSim:
        sim = self.sessions.get(sid)
        if sim is None:
            raise ApiError(404, "not_found_error", f"session {sid} not found")
        return sim

    def session_data(self, sim: SessionSim) -> dict[str, Any]:
        running = any(t.status == "running" for t in sim.threads.values())
        sim.data["status"] = "running" if running else "idle"
        return answer("session", sim.data)

    def thread_data(self, t: ThreadSim, sim: SessionSim) -> dict[str, Any]:
        return answer(
            "thread",
            {
                "id": t.id,
                "agent": t.thread_agent(),
                "archived_at": t.archived_at,
                "created_at": t.created_at,
                "parent_thread_id": t.parent,
                "session_id": sim.id,
                "status": t.status,
                "type": "session_thread",
                "updated_at": t.updated_at,
            },
        )

    def thread(self, sim: SessionSim, tid: str) -> ThreadSim:
        t = sim.threads.get(tid)
        if t is None:
            raise ApiError(404, "not_found_error", f"thread {tid} not found in {sim.id}")
        return t

    def archive(self, sim: SessionSim, tid: str) -> dict[str, Any]:
        t = self.thread(sim, tid)
        if t.parent is None:
            raise ApiError(400, "invalid_request_error", "the primary thread cannot be archived")
        if t.status != "idle" and t.archived_at is None:
            raise ApiError(
                400, "invalid_request_error", f"thread {tid} is {t.status}: interrupt it first"
            )
        t.archived_at = t.archived_at or _now()
        return self.thread_data(t, sim)

    # --- events ---

    def emit(self, sim: SessionSim, where: ThreadSim, data: dict[str, Any]) -> dict[str, Any]:
        """Record an event on ``where``'s stream (and, for what the primary thread shows of a
        worker's, cross-post it there)."""
        event = answer("event", {"id": _id("sevt"), "processed_at": _now(), **data})
        where.events.append(event)
        for q in where.watchers:
            q.put_nowait(event)
        return event

    def cross_post(self, sim: SessionSim, t: ThreadSim, data: dict[str, Any]) -> None:
        self.emit(sim, t, data)
        if t.parent is not None:
            self.emit(sim, sim.primary, {**data, "session_thread_id": t.id})

    def send_events(self, sim: SessionSim, body: dict[str, Any]) -> dict[str, Any]:
        params = validate_params("events", body)
        self.requests.append({"session": sim.id, **params})
        sent = [self._user_event(sim, e) for e in params["events"]]
        return answer("sent", {"data": sent})

    def _user_event(self, sim: SessionSim, event: dict[str, Any]) -> dict[str, Any]:
        kind = event["type"]
        if kind == "user.tool_confirmation":
            future = sim.pending.pop(event["tool_use_id"], None)
            if future is None:
                raise ApiError(
                    400, "invalid_request_error", f"no tool use {event['tool_use_id']} waits"
                )
            target = self._owner(sim, event["tool_use_id"])
            out = self.emit(sim, target, dict(event))
            if target.parent is not None:  # routed to the worker; the primary shows where
                out = self.emit(sim, sim.primary, {**event, "session_thread_id": target.id})
            future.set_result(out)
            return out
        if kind == "user.interrupt":
            tid = event.get("session_thread_id")
            targets = [self.thread(sim, tid)] if tid else list(sim.threads.values())
            for t in targets:
                if t.archived_at is None:
                    t.interrupted.set()
            for tool_use_id, future in list(sim.pending.items()):
                if self._owner(sim, tool_use_id) in targets and not future.done():
                    future.set_result({"result": "interrupted"})
                    sim.pending.pop(tool_use_id)
            return self.emit(sim, sim.primary, dict(event))
        if kind == "user.message":
            out = self.emit(sim, sim.primary, dict(event))
            sim.inbox.put_nowait(out)
            return out
        raise ApiError(400, "invalid_request_error", f"the stand-in does not script {kind}")

    def _owner(self, sim: SessionSim, event_id: str) -> ThreadSim:
        """The thread an event is its own (a worker's, not the primary's cross-post)."""
        for t in sim.threads.values():
            if t.parent is not None and any(e["id"] == event_id for e in t.events):
                return t
        return sim.primary

    # --- the scripted agents ---

    async def _run(self, sim: SessionSim) -> None:
        """Each user message starts the next turn of the script."""
        turns = list(sim.script.get("turns") or [])
        names: dict[str, ThreadSim] = {}
        for turn in turns:
            await sim.inbox.get()
            self._status(sim, sim.primary, "running")
            for step in turn:
                await self._step(sim, names, step)
            self._status(sim, sim.primary, "idle", {"type": "end_turn"})
        while True:  # nothing more scripted: each further message ends its turn at once
            await sim.inbox.get()
            self._status(sim, sim.primary, "running")
            self._status(sim, sim.primary, "idle", {"type": "end_turn"})

    def _status(
        self, sim: SessionSim, t: ThreadSim, status: str, stop: dict[str, Any] | None = None
    ) -> None:
        t.status = status
        t.updated_at = _now()
        if t.parent is None:
            data: dict[str, Any] = {"type": f"session.status_{status}"}
            if stop is not None:
                data["stop_reason"] = stop
            self.emit(sim, t, data)
            return
        data = {
            "type": f"session.thread_status_{status}",
            "agent_name": t.agent["name"],
            "session_thread_id": t.id,
        }
        if stop is not None:
            data["stop_reason"] = stop
        self.emit(sim, t, data)
        self.emit(sim, sim.primary, data)

    async def _step(
        self, sim: SessionSim, names: dict[str, ThreadSim], step: dict[str, Any]
    ) -> None:
        if "spawn" in step:
            roster = [r["id"] for r in (sim.coordinator["multiagent"] or {}).get("agents", [])]
            wanted = str(step["spawn"])
            agent = next(
                (
                    self.agents[a]
                    for a in roster
                    if self.agents[a]["name"] in (wanted, f"relay {wanted}")
                ),
                None,
            )
            if agent is None:
                raise RuntimeError(f"script: {wanted} is not on the coordinator's roster")
            running = sum(
                t.status == "running" and t.archived_at is None for t in sim.threads.values()
            )
            if running >= MAX_THREADS:  # the coordinator's spawn fails; no thread is made
                return
            t = ThreadSim(_id("sthr"), agent, sim.primary.id)
            sim.threads[t.id] = t
            names[str(step.get("as", wanted))] = t
            self.emit(
                sim,
                sim.primary,
                {
                    "type": "session.thread_created",
                    "agent_name": agent["name"],
                    "session_thread_id": t.id,
                },
            )
            self._status(sim, t, "running")
            return
        if "in" in step and step["in"] not in names:
            return  # its spawn was refused
        where = names[step["in"]] if "in" in step else sim.primary
        if where.interrupted.is_set():
            return
        if "say" in step:
            self.emit(
                sim,
                where,
                {"type": "agent.message", "content": [{"type": "text", "text": str(step["say"])}]},
            )
        elif "tool" in step:
            await self._tool(sim, where, str(step["tool"]), dict(step.get("input") or {}))
        elif step.get("hold"):
            await where.interrupted.wait()
            self._status(sim, where, "idle", {"type": "end_turn"})
        elif step.get("idle"):
            self._status(sim, where, "idle", {"type": "end_turn"})

    async def _tool(self, sim: SessionSim, t: ThreadSim, name: str, data: dict[str, Any]) -> None:
        policy = policy_of(t.agent, name)
        evaluated = {"always_ask": "ask", "always_allow": "allow"}.get(policy or "", "deny")
        use: dict[str, Any] = {
            "type": "agent.tool_use",
            "name": name,
            "input": data,
            "evaluated_permission": evaluated,
        }
        if policy in ("always_ask", "always_allow"):
            use["evaluation"] = {"type": policy}
        event = self.emit(sim, t, use)
        if evaluated == "deny":
            self._result(sim, t, event["id"], f"tool {name} is not enabled", error=True)
            return
        if evaluated == "ask":
            if t.parent is not None:  # cross-posted so the client sees it on the primary
                self.emit(sim, sim.primary, {**use, "id": event["id"], "session_thread_id": t.id})
            future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
            sim.pending[event["id"]] = future
            stop = {"type": "requires_action", "event_ids": [event["id"]]}
            self._status(sim, t, "idle", stop)
            busy = any(w.status == "running" for w in sim.threads.values() if w.parent is not None)
            if t.parent is not None and not busy:  # the session is idle once no worker runs
                self.emit(sim, sim.primary, {"type": "session.status_idle", "stop_reason": stop})
            got = await future
            if got.get("result") == "interrupted":
                self._result(
                    sim,
                    t,
                    event["id"],
                    "Tool execution was interrupted before completion. Please retry.",
                    error=True,
                )
                self._status(sim, t, "idle", {"type": "end_turn"})
                return
            self._status(sim, t, "running")
            if got.get("result") != "allow":
                self._result(
                    sim, t, event["id"], str(got.get("deny_message") or "denied"), error=True
                )
                return
        self._result(sim, t, event["id"], f"ran {name}")

    def _result(
        self, sim: SessionSim, t: ThreadSim, use: str, text: str, *, error: bool = False
    ) -> None:
        self.emit(
            sim,
            t,
            {
                "type": "agent.tool_result",
                "tool_use_id": use,
                "is_error": error,
                "content": [{"type": "text", "text": text}],
            },
        )


# --- HTTP ---


def _standin(request: web.Request) -> Standin:
    found = request.app[ROUTES_KEY]
    assert isinstance(found, Standin)
    return found


@web.middleware
async def _guard(request: web.Request, handler: Any) -> web.StreamResponse:
    """The beta header and an API key on every request; errors in the API's shape."""
    s = _standin(request)
    try:
        betas = [b.strip() for b in request.headers.get("anthropic-beta", "").split(",")]
        if BETA not in betas:
            raise ApiError(
                400, "invalid_request_error", f"this endpoint needs the {BETA} beta header"
            )
        bearer = request.headers.get("Authorization", "")
        key = request.headers.get("x-api-key") or bearer.removeprefix("Bearer ").strip()
        if not key or (s.api_key is not None and key != s.api_key):
            raise ApiError(401, "authentication_error", "invalid API key")
        response: web.StreamResponse = await handler(request)
        return response
    except ApiError as err:
        return err.response()


async def _body(request: web.Request) -> Any:
    try:
        return await request.json()
    except ValueError:
        raise ApiError(400, "invalid_request_error", "the body is not JSON") from None


async def post_agent(request: web.Request) -> web.Response:
    return web.json_response(_standin(request).create_agent(await _body(request)))


async def get_agent(request: web.Request) -> web.Response:
    agent = _standin(request).agents.get(request.match_info["agent_id"])
    if agent is None:
        raise ApiError(404, "not_found_error", "agent not found")
    return web.json_response(answer("agent", agent))


async def list_agents(request: web.Request) -> web.Response:
    return web.json_response(page("agent", list(_standin(request).agents.values())))


async def post_environment(request: web.Request) -> web.Response:
    return web.json_response(_standin(request).create_environment(await _body(request)))


async def post_session(request: web.Request) -> web.Response:
    return web.json_response(_standin(request).create_session(await _body(request)))


async def get_session(request: web.Request) -> web.Response:
    s = _standin(request)
    return web.json_response(s.session_data(s.session(request.match_info["session_id"])))


async def post_events(request: web.Request) -> web.Response:
    s = _standin(request)
    sim = s.session(request.match_info["session_id"])
    return web.json_response(s.send_events(sim, await _body(request)))


async def list_threads(request: web.Request) -> web.Response:
    s = _standin(request)
    sim = s.session(request.match_info["session_id"])
    wanted = request.query.getall("statuses[]", []) or request.query.getall("statuses", [])
    found = [t for t in sim.threads.values() if not wanted or t.status in wanted]
    return web.json_response({"data": [s.thread_data(t, sim) for t in found], "next_page": None})


async def get_thread(request: web.Request) -> web.Response:
    s = _standin(request)
    sim = s.session(request.match_info["session_id"])
    return web.json_response(s.thread_data(s.thread(sim, request.match_info["thread_id"]), sim))


async def list_events(request: web.Request) -> web.Response:
    """A session's (the primary thread's) or one thread's events so far, oldest first."""
    s = _standin(request)
    sim = s.session(request.match_info["session_id"])
    tid = request.match_info.get("thread_id")
    t = s.thread(sim, tid) if tid else sim.primary
    return web.json_response({"data": [answer("listed", e) for e in t.events], "next_page": None})


async def archive_thread(request: web.Request) -> web.Response:
    s = _standin(request)
    sim = s.session(request.match_info["session_id"])
    return web.json_response(s.archive(sim, request.match_info["thread_id"]))


async def _sse(request: web.Request, t: ThreadSim) -> web.StreamResponse:
    """The thread's events from now on, as server-sent events, until the client goes."""
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
    t.watchers.append(queue)
    try:
        while True:
            try:
                event = await asyncio.wait_for(queue.get(), timeout=5)
            except TimeoutError:
                await response.write(b"event: ping\ndata: {}\n\n")
                continue
            if event is None:
                break
            line = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
            await response.write(line.encode())
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        t.watchers.remove(queue)
    return response


async def session_stream(request: web.Request) -> web.StreamResponse:
    s = _standin(request)
    return await _sse(request, s.session(request.match_info["session_id"]).primary)


async def thread_stream(request: web.Request) -> web.StreamResponse:
    s = _standin(request)
    sim = s.session(request.match_info["session_id"])
    return await _sse(request, s.thread(sim, request.match_info["thread_id"]))


async def _script(request: web.Request) -> web.Response:
    """Script the agents of the sessions created from now on (not part of the API)."""
    _standin(request).script = dict(await _body(request))
    return web.json_response({})


async def _requests(request: web.Request) -> web.Response:
    """What relay sent (the tests' window onto the stand-in; not part of the API)."""
    return web.json_response(_standin(request).requests)


def make_app(script: dict[str, Any], *, api_key: str | None = None) -> web.Application:
    app = web.Application(middlewares=[_guard])
    app[ROUTES_KEY] = Standin(script, api_key)
    r = app.router
    r.add_post("/v1/agents", post_agent)
    r.add_get("/v1/agents", list_agents)
    r.add_get("/v1/agents/{agent_id}", get_agent)
    r.add_post("/v1/environments", post_environment)
    r.add_post("/v1/sessions", post_session)
    r.add_get("/v1/sessions/{session_id}", get_session)
    r.add_post("/v1/sessions/{session_id}/events", post_events)
    r.add_get("/v1/sessions/{session_id}/events/stream", session_stream)
    r.add_get("/v1/sessions/{session_id}/threads", list_threads)
    r.add_get("/v1/sessions/{session_id}/threads/{thread_id}", get_thread)
    r.add_get("/v1/sessions/{session_id}/events", list_events)
    r.add_get("/v1/sessions/{session_id}/threads/{thread_id}/events", list_events)
    r.add_post("/v1/sessions/{session_id}/threads/{thread_id}/archive", archive_thread)
    r.add_get("/v1/sessions/{session_id}/threads/{thread_id}/stream", thread_stream)
    r.add_get("/_standin/requests", _requests)
    r.add_post("/_standin/script", _script)
    return app


async def _serve(port: int, script: dict[str, Any], api_key: str | None) -> None:
    runner = web.AppRunner(make_app(script, api_key=api_key))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    print(f"listening on http://127.0.0.1:{port}", flush=True)
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.Event().wait()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m relay.hub.agents_standin")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--script", type=Path, default=None, help="the agents' scripted turns")
    p.add_argument("--api-key", default=None, help="the one key accepted (default: any)")
    args = p.parse_args(argv)
    script = json.loads(args.script.read_text()) if args.script else {}
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(args.port, script, args.api_key))
    return 0


if __name__ == "__main__":
    sys.exit(main())
