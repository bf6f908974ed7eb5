"""The Managed Agents backend, decided purely: the agents a roster becomes, the coordinator
whose ``multiagent`` roster lists them, which session events reach the board, how a
worker thread's ``always_ask`` permission request is routed to a person and read back,
what a coordinator's claim that a goal is done carries, and each thread's status.

Ground rules: no roster agent holds a shipping tool (push, merge, deploy) — the topology,
not a rule to remember; the roster is at most 20 agents and a session runs at most 25
threads at once (the documented limits of ``managed-agents-2026-04-01``); a coordinator's
claim is only a claim: relay's own gates judge the diff it carries. Everything here works
on plain JSON data (what the SDK's models dump), so nothing imports the SDK.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from relay.loop.markdown import code_span, find, row, sections
from relay.loop.roster import MANAGED_BACKEND, MANAGED_MODEL
from relay.loop.tools import runs_commands, ships

BETA = "managed-agents-2026-04-01"
TOOLSET = "agent_toolset_20260401"
MAX_ROSTER = 20  # a coordinator's `multiagent.agents`: 1-20 entries
MAX_THREADS = 25  # session threads running at once
STATE_NAME = "docs/loop/state/managed.json"
BACKEND = MANAGED_BACKEND
# the tools of agent_toolset_20260401 a role may be given
AGENT_TOOLS = ("bash", "edit", "read", "write", "glob", "grep", "web_fetch", "web_search")
DEFAULT_MODEL = MANAGED_MODEL
SESSION_SECTION = "Managed session"
THREADS_SECTION = "Managed threads"
THREADS_HEAD = ("role", "thread", "status", "last")
BOARD_LINES_KEPT = 40
CLAIM = re.compile(r"^\s*DONE\s+(G\d+)\b(.*)$", re.MULTILINE)
_DIFF = re.compile(r"^```diff\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)
_ANSWER = re.compile(r"^\s*(allow|deny)\s+(\S+?)(?:\s*:\s*(.*))?\s*$", re.MULTILINE | re.IGNORECASE)


@dataclass(frozen=True)
class ManagedRole:
    """One role as a managed agent: its model, its instructions (the system prompt), the
    agent tools it gets and those of them that wait for a person (``always_ask``)."""

    name: str
    model: str = DEFAULT_MODEL
    instructions: str = ""
    tools: tuple[str, ...] = ("read", "grep", "glob")
    ask: tuple[str, ...] = ()
    grades: bool = False  # a checking role: it must never be the maker's agent


_REVIEW = ("read", "grep", "glob")
DEFAULT_ROLES: tuple[ManagedRole, ...] = (
    ManagedRole(
        "maker",
        instructions="You make one goal's change in the repository and report it as a diff.",
        tools=("read", "grep", "glob", "edit", "write", "bash"),
        ask=("bash",),
    ),
    ManagedRole(
        "code-reviewer",
        instructions="You review a change for correctness and say what blocks it.",
        tools=_REVIEW,
        grades=True,
    ),
    ManagedRole(
        "security-auditor",
        instructions="You audit a change for security problems.",
        tools=_REVIEW,
        grades=True,
    ),
    ManagedRole(
        "test-engineer",
        instructions="You check that a change's tests test what the goal asks.",
        tools=_REVIEW,
        grades=True,
    ),
    ManagedRole(
        "red-team",
        instructions="You try to break a change: inputs, edge cases, misuse.",
        tools=_REVIEW,
        grades=True,
    ),
    ManagedRole(
        "verifier",
        instructions="You judge whether the goal's stopping condition holds.",
        tools=("read", "grep", "glob", "bash"),
        ask=("bash",),
        grades=True,
    ),
)


class SpecLike(Protocol):
    """What a role of LOOP.md's ``## Roles`` (relay.loop.roster's RoleSpec) carries."""

    @property
    def name(self) -> str: ...
    @property
    def backend(self) -> Any: ...
    @property
    def model(self) -> str | None: ...
    @property
    def instructions(self) -> str | None: ...
    @property
    def tools(self) -> tuple[str, ...]: ...


MANAGED_KIND = "managed-agent"  # the backend a role of the roster names for this


def from_specs(
    specs: Sequence[SpecLike], instructions: Mapping[str, str]
) -> tuple[tuple[ManagedRole, ...], str | None]:
    """The managed roles a roster declares (each with the text of its instructions file,
    when ``instructions`` has it), and the coordinator's model; no managed role: relay's
    default roster. A tool is an agent tool's name, ``(ask)`` or ``ask`` after it putting
    it under ``always_ask``, as is any tool that runs commands (``bash``: it could push);
    a shipping word is refused whoever holds it."""
    by_name = {r.name: r for r in DEFAULT_ROLES}
    roles: list[ManagedRole] = []
    coordinator_model: str | None = None
    for spec in specs:
        if str(spec.backend) != MANAGED_KIND:
            continue
        if spec.name == "coordinator":
            coordinator_model = spec.model
            continue
        base = by_name.get(spec.name, ManagedRole(spec.name, grades=spec.name != "maker"))
        tools: list[str] = []
        ask: list[str] = []
        for entry in spec.tools:
            words = entry.lower().replace("(", " ").replace(")", " ").replace(":", " ").split()
            if not words:
                continue
            tool = words[0]
            if ships(entry):
                raise RosterError(
                    f"role {spec.name}: {entry!r} ships; push, merge and deploy are given to"
                    " no managed agent (shipping stays a person's, through relay)"
                )
            tools.append(tool)
            if "ask" in words[1:] or runs_commands(tool):
                ask.append(tool)
        text = instructions.get(spec.instructions or "", "") if spec.instructions else ""
        roles.append(
            replace(
                base,
                model=spec.model or base.model,
                instructions=text or base.instructions,
                tools=tuple(tools) or base.tools,
                ask=tuple(ask) if tools else base.ask,
            )
        )
    return (tuple(roles) or DEFAULT_ROLES), coordinator_model


COORDINATOR_SYSTEM = """\
You coordinate relay's build loop. The spine (LOOP.md, GOALS.md, CONTRACT.md) is in the
first message. Delegate each goal to the maker (several maker threads for independent
goals), and its review to the checking roles; never grade a change with the agent that
made it. When a goal's change is ready, answer with a message whose first line is
`DONE <goal id>` followed by the whole change as one ```diff fenced block (git diff
format, paths relative to the repository root). relay runs its own gates on that diff and
answers with its verdict; a claim is not a verdict. You cannot push, merge or deploy:
shipping is a person's, through relay."""


class RosterError(ValueError):
    """A roster the Managed Agents API or relay's rules would refuse; the message says why."""


def shipping_tools(names: Iterable[str]) -> list[str]:
    """The names among ``names`` that ship (push, merge, deploy and the like): the roster
    check's own rule (relay.loop.tools.ships)."""
    return [n for n in names if ships(n)]


def toolset(role: ManagedRole) -> dict[str, Any]:
    """The agent toolset a role gets: every tool off but its own, those it must ask for
    under ``always_ask``, the rest ``always_allow``."""
    unknown = [t for t in (*role.tools, *role.ask) if t not in AGENT_TOOLS]
    if unknown:
        raise RosterError(
            f"role {role.name}: no agent tool named {', '.join(unknown)}"
            f" (the toolset has {', '.join(AGENT_TOOLS)})"
        )
    asked = {*role.ask, *(t for t in role.tools if runs_commands(t))}
    configs = [
        {
            "name": name,
            "enabled": True,
            "permission_policy": {"type": "always_ask" if name in asked else "always_allow"},
        }
        for name in role.tools
    ]
    return {
        "type": TOOLSET,
        "default_config": {"enabled": False, "permission_policy": {"type": "always_ask"}},
        "configs": configs,
    }


def agent_params(role: ManagedRole) -> dict[str, Any]:
    """The body of ``agents.create`` for one role."""
    return {
        "name": f"relay {role.name}",
        "model": role.model,
        "description": f"relay loop role: {role.name}",
        "system": role.instructions or None,
        "tools": [toolset(role)],
        "metadata": {"relay-role": role.name},
    }


def coordinator_params(
    agent_ids: Mapping[str, str], *, model: str = DEFAULT_MODEL, parallel: bool = True
) -> dict[str, Any]:
    """The body of ``agents.create`` for the coordinator: its roster is every role's agent
    (by id) and, for parallel work, ``{"type": "self"}`` — copies of itself."""
    roster: list[Any] = [{"type": "agent", "id": agent_ids[name]} for name in agent_ids]
    if parallel:
        roster.append({"type": "self"})
    params = {
        "name": "relay coordinator",
        "model": model,
        "description": "relay loop coordinator: owns the spine and the stopping condition",
        "system": COORDINATOR_SYSTEM,
        "tools": [toolset(ManagedRole("coordinator", tools=("read", "grep", "glob")))],
        "multiagent": {"type": "coordinator", "agents": roster},
        "metadata": {"relay-role": "coordinator"},
    }
    check_roster([params])
    return params


def tool_names(params: Mapping[str, Any]) -> list[str]:
    """Every tool an agent's parameters (or the API's agent) enable, by name: the toolset's
    enabled configs, custom tools, MCP toolsets and their configs, MCP servers."""
    names: list[str] = []
    for tool in params.get("tools") or []:
        kind = tool.get("type")
        if kind == TOOLSET:
            default = (tool.get("default_config") or {}).get("enabled", True)
            configs = {c["name"]: c.get("enabled", True) for c in tool.get("configs") or []}
            for name in AGENT_TOOLS:
                if configs.get(name, default) is not False:
                    names.append(name)
        elif kind == "custom":
            names.append(str(tool.get("name", "")))
        elif kind == "mcp_toolset":
            names.append(str(tool.get("mcp_server_name", "")))
            names += [str(c.get("name", "")) for c in tool.get("configs") or []]
    names += [str(s.get("name", "")) for s in params.get("mcp_servers") or []]
    return names


def check_roster(agents: Sequence[Mapping[str, Any]]) -> None:
    """Refuse what the API refuses of a coordinator's roster (1-20 entries, distinct
    agents, at most one ``self``) and what relay refuses of any agent: a shipping tool."""
    for params in agents:
        ships = shipping_tools(tool_names(params))
        if ships:
            raise RosterError(
                f"agent {params.get('name')!r} would hold a shipping tool ({', '.join(ships)}):"
                " push, merge and deploy are given to no roster agent"
            )
        multi = params.get("multiagent")
        if not multi:
            continue
        entries = list(multi.get("agents") or [])
        if not 1 <= len(entries) <= MAX_ROSTER:
            raise RosterError(
                f"a coordinator's roster holds 1 to {MAX_ROSTER} agents, not {len(entries)}:"
                " merge roles or drop some"
            )
        ids = [e if isinstance(e, str) else e.get("id") or e.get("type") for e in entries]
        if len(set(ids)) != len(ids):
            raise RosterError("a coordinator's roster names an agent twice (`self` at most once)")


def roster_ids(params: Mapping[str, Any]) -> list[str]:
    """The agent ids a coordinator's roster names (``self`` as "self")."""
    multi = params.get("multiagent") or {}
    out = []
    for e in multi.get("agents") or []:
        out.append(e if isinstance(e, str) else str(e.get("id") or e.get("type")))
    return out


def maker_grades(agent_ids: Mapping[str, str], roles: Sequence[ManagedRole]) -> list[str]:
    """The grading roles whose agent is the maker's own (maker ≠ checker)."""
    maker = agent_ids.get("maker")
    return [r.name for r in roles if r.grades and maker and agent_ids.get(r.name) == maker]


# --- the state under the spine ---


@dataclass
class Thread:
    """A session thread as `relay loop status` shows it."""

    id: str
    role: str
    status: str = "running"
    last: str = ""


@dataclass
class State:
    """What relay keeps of the backend in ``docs/loop/state/managed.json``."""

    environment: str = ""
    coordinator: str = ""
    agents: dict[str, str] = field(default_factory=dict)
    session: str = ""
    threads: dict[str, Thread] = field(default_factory=dict)
    ask_job: int = 0

    def dump(self) -> str:
        doc = {
            "environment": self.environment,
            "coordinator": self.coordinator,
            "agents": self.agents,
            "session": self.session,
            "ask_job": self.ask_job,
            "threads": {
                t.id: {"role": t.role, "status": t.status, "last": t.last}
                for t in self.threads.values()
            },
        }
        return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def load_state(text: str | None) -> State:
    """The recorded state (empty when there is none)."""
    if not text:
        return State()
    doc = json.loads(text)
    threads = {
        tid: Thread(tid, str(t.get("role", "")), str(t.get("status", "")), str(t.get("last", "")))
        for tid, t in (doc.get("threads") or {}).items()
    }
    return State(
        environment=str(doc.get("environment", "")),
        coordinator=str(doc.get("coordinator", "")),
        agents={str(k): str(v) for k, v in (doc.get("agents") or {}).items()},
        session=str(doc.get("session", "")),
        threads=threads,
        ask_job=int(doc.get("ask_job") or 0),
    )


def role_of_agent(name: str) -> str:
    """The role an agent's name (``relay maker``) stands for."""
    return name.removeprefix("relay ").strip() or name


# --- events ---


def _text(event: Mapping[str, Any]) -> str:
    return "".join(
        str(b.get("text", "")) for b in event.get("content") or [] if b.get("type") == "text"
    )


def _first_line(text: str, width: int = 120) -> str:
    line = next((x.strip() for x in text.splitlines() if x.strip()), "")
    return line if len(line) <= width else line[: width - 1] + "…"


def _stop(event: Mapping[str, Any]) -> str:
    return str((event.get("stop_reason") or {}).get("type", ""))


def board_line(event: Mapping[str, Any]) -> str | None:
    """What the board says of one event of the primary thread's stream, or None for the
    events that are only traffic (thinking, deltas, spans, usage)."""
    kind = event.get("type", "")
    who = event.get("agent_name") or "coordinator"
    if kind == "agent.message":
        return f"coordinator: {_first_line(_text(event))}"
    if kind == "session.thread_created":
        return f"{role_of_agent(who)} thread {event.get('session_thread_id')} started"
    if kind == "session.thread_status_idle":
        return f"{role_of_agent(who)} thread idle ({_stop(event)})"
    if kind == "session.thread_status_terminated":
        return f"{role_of_agent(who)} thread terminated"
    if kind in ("agent.tool_use", "agent.mcp_tool_use") and event.get("evaluated_permission") == (
        "ask"
    ):
        where = event.get("session_thread_id") or "the primary thread"
        return f"permission asked in {where}: {event.get('name')} {_summary(event)}"
    if kind == "user.tool_confirmation":
        return f"person answered {event.get('result')} to {event.get('tool_use_id')}"
    if kind == "user.interrupt":
        return f"interrupt sent to {event.get('session_thread_id') or 'every thread'}"
    if kind == "session.status_idle":
        return f"session idle ({_stop(event)})"
    if kind == "session.status_terminated":
        return "session terminated"
    if kind == "session.error":
        return f"session error: {_first_line(json.dumps(event.get('error') or {}))}"
    return None


def _summary(event: Mapping[str, Any]) -> str:
    data = event.get("input") or {}
    text = data.get("command") if isinstance(data, dict) else None
    return _first_line(str(text if text is not None else json.dumps(data, sort_keys=True)), 80)


@dataclass(frozen=True)
class Request:
    """A tool call waiting for a person's confirmation."""

    tool_use_id: str
    thread: str  # "" for the primary thread
    tool: str
    summary: str

    def ask_text(self) -> str:
        """The request as a person reads it (a job comment or a terminal prompt)."""
        where = f"thread {self.thread}" if self.thread else "the coordinator"
        return (
            f"**Permission asked** by {where}: {code_span(self.tool)} —"
            f" {code_span(self.summary)}\n\n"
            f"Answer with a comment `allow {self.tool_use_id}` or"
            f" `deny {self.tool_use_id}: why`."
        )


def permission_request(event: Mapping[str, Any]) -> Request | None:
    """The request an event of the primary stream carries: a tool use whose policy asked
    (a worker thread's is cross-posted there, its thread named)."""
    if event.get("type") not in ("agent.tool_use", "agent.mcp_tool_use"):
        return None
    if event.get("evaluated_permission") != "ask":
        return None
    return Request(
        tool_use_id=str(event.get("id")),
        thread=str(event.get("session_thread_id") or ""),
        tool=str(event.get("name")),
        summary=_summary(event),
    )


def confirmation(request: Request, answer: tuple[str, str] | None) -> dict[str, Any]:
    """The ``user.tool_confirmation`` event a person's answer becomes (no answer: deny)."""
    result, why = answer or ("deny", "no person answered")
    event: dict[str, Any] = {
        "type": "user.tool_confirmation",
        "tool_use_id": request.tool_use_id,
        "result": result,
    }
    if result == "deny" and why:
        event["deny_message"] = why
    return event


def parse_answer(body: str, tool_use_id: str) -> tuple[str, str] | None:
    """A person's answer to ``tool_use_id`` in a comment or a typed line: ("allow", "") or
    ("deny", why); None when the text answers something else."""
    for match in _ANSWER.finditer(body):
        if match.group(2).strip("`") == tool_use_id:
            return match.group(1).lower(), (match.group(3) or "").strip().strip("`")
    return None


@dataclass(frozen=True)
class Claim:
    """A coordinator's claim that a goal is done, with the change it carries."""

    goal: str
    diff: str
    said: str


def claim(event: Mapping[str, Any]) -> Claim | None:
    """The claim an ``agent.message`` of the primary thread makes, if it makes one."""
    if event.get("type") != "agent.message" or event.get("session_thread_id"):
        return None
    text = _text(event)
    done = CLAIM.search(text)
    if done is None:
        return None
    fence = _DIFF.search(text)
    said = CLAIM.sub("", _DIFF.sub("", text)).strip() or f"the coordinator's change for {done[1]}"
    return Claim(goal=done.group(1), diff=fence.group(1) if fence else "", said=said)


def not_judged(
    found: Claim,
    *,
    only: str | None,
    judged: int,
    budget: int | None,
    known: bool = True,
    pending: Sequence[str] = (),
) -> str:
    """Why a claim is refused before relay judges it ("" when it is judged): another goal
    than the run's ``--goal``, a goal GOALS.md does not have (``known``), a goal held at
    the barrier (``pending``: its dependencies not done on the board), the run's
    judgements spent, no diff to judge."""
    if only is not None and found.goal != only:
        return f"this run works only {only}"
    if not known:
        return f"there is no goal {found.goal} in GOALS.md"
    if pending:
        return (
            f"{found.goal} waits on {', '.join(pending)}: a goal is judged only when every"
            " goal it depends on is done"
        )
    if budget is not None and judged >= budget:
        return f"this run judges at most {budget} claim(s) (--max-iterations)"
    if not found.diff.strip():
        return "the claim carried no diff"
    return ""


def verdict_message(goal: str, kept: bool, why: str) -> dict[str, Any]:
    """relay's verdict on a claim, as the user.message the coordinator reads."""
    text = f"relay kept {goal}: its gates passed." if kept else f"relay did not keep {goal}: {why}"
    return {"type": "user.message", "content": [{"type": "text", "text": text}]}


THREAD_STATUS = {
    "session.thread_created": "running",
    "session.thread_status_running": "running",
    "session.thread_status_idle": "idle",
    "session.thread_status_rescheduled": "running",
    "session.thread_status_terminated": "terminated",
}


def thread_update(state: State, event: Mapping[str, Any]) -> bool:
    """Mirror a thread event into ``state.threads``; True when something changed. An idle
    thread waiting on a person is ``waiting``."""
    kind = str(event.get("type", ""))
    tid = str(event.get("session_thread_id") or "")
    if not tid:
        return False
    if kind in THREAD_STATUS:
        known = state.threads.get(tid) or Thread(tid, role_of_agent(str(event.get("agent_name"))))
        if known.status == "archived":
            return False  # an archived thread's last events change nothing
        status = THREAD_STATUS[kind]
        if status == "idle" and _stop(event) == "requires_action":
            status = "waiting"
        known.status = status
        state.threads[tid] = known
        return True
    line = board_line(event)
    if line is not None and tid in state.threads:
        state.threads[tid].last = line
        return True
    return False


def running_threads(state: State) -> int:
    return sum(t.status in ("running", "waiting") for t in state.threads.values())


MAKING = ("maker", "coordinator")  # a maker's threads: its agent's, and the coordinator's copies


def over_copies(state: State, copies: int) -> list[str]:
    """The making threads past the maker's ``copies`` (its roster limit; at most
    MAX_THREADS - 1 beside the primary thread): the newest running ones beyond the cap,
    which relay interrupts so that no more than ``copies`` make at once."""
    cap = max(1, min(copies, MAX_THREADS - 1))
    making = [t.id for t in state.threads.values() if t.role in MAKING]
    running = [tid for tid in making if state.threads[tid].status in ("running", "waiting")]
    return running[cap:]


def threads_of(state: State, role: str) -> list[Thread]:
    """The role's threads still open (not archived, not terminated), newest last."""
    return [t for t in state.threads.values() if t.role == role and t.status != "archived"]


# --- the board ---


def _with_section(text: str, heading: str, body: str) -> str:
    section = f"## {heading}\n\n{body.rstrip()}\n"
    parts = sections(text)
    at = find(parts, heading)
    if at is None:
        return text.rstrip("\n") + "\n\n" + section
    rest = "".join(p.text for p in parts[at + 1 :])
    return "".join(p.text for p in parts[:at]) + section + ("\n" + rest if rest else "")


def session_lines(text: str) -> list[str]:
    """The event lines the board's session section holds."""
    parts = sections(text)
    at = find(parts, SESSION_SECTION)
    if at is None:
        return []
    return [ln[2:] for ln in parts[at].text.splitlines() if ln.startswith("- ")]


def with_session(text: str, session: str, lines: Sequence[str]) -> str:
    """BOARD.md with the session's section: its id and the last events, newest last."""
    kept = list(lines)[-BOARD_LINES_KEPT:]
    body = (
        f"Session `{session}` of the Managed Agents coordinator (the primary thread's"
        f" events, the last {BOARD_LINES_KEPT}).\n\n" + "\n".join(f"- {ln}" for ln in kept)
    )
    return _with_section(text, SESSION_SECTION, body)


def with_threads(text: str, state: State) -> str:
    """BOARD.md with each session thread's role, status and last line."""
    table = [row(list(THREADS_HEAD)), "| " + " | ".join("---" for _ in THREADS_HEAD) + " |"]
    table += [row([t.role, t.id, t.status, t.last or "-"]) for t in state.threads.values()]
    body = f"Session threads of `{state.session}`, mirrored as relay reads them.\n\n"
    return _with_section(text, THREADS_SECTION, body + "\n".join(table))


# --- what a managed run takes from `relay loop run`'s flags ---


def run_flags_refused(*, maker: str | None, parallel: int | None, group: str | None) -> str:
    """Why `relay loop run --backend managed-agents` refuses its flags ("" when it takes
    them): the coordinator makes, so --maker names nobody; it fans goals out to its own
    copies (LOOP.md's ``Limits: copies N`` on the maker), so --parallel cannot be honoured;
    it works every open goal, so --group cannot be honoured either. A flag relay cannot
    honour is refused, never dropped."""
    if maker:
        return (
            "--maker cannot be given with --backend managed-agents: the managed coordinator"
            " makes; drop --maker"
        )
    if parallel is not None:
        return (
            "--parallel cannot be given with --backend managed-agents: the coordinator runs"
            " its maker copies (set `Limits: copies N` on the maker in LOOP.md); drop --parallel"
        )
    if group is not None:
        return (
            "--group cannot be given with --backend managed-agents: the coordinator works"
            " every open goal; use --goal ID for one goal, or run without the backend"
        )
    return ""


def unjudged(checkers: Sequence[str], verifier: str | None) -> str:
    """What a managed run says when no grading role relay runs itself judges the
    coordinator's claims ("" when one does): the roster's managed reviewers are the
    coordinator's own agents, so a claim would be judged by the gates alone."""
    if checkers or verifier:
        return ""
    return (
        "no checker or verifier that relay runs itself judges the coordinator's claims (the"
        " roster's managed reviewers are the coordinator's own agents): only the gates judge"
        " them; give --checker/--verifier or a command/agent role in LOOP.md's ## Roles"
    )
