"""The roster: the loop's roles as the ``## Roles`` section of LOOP.md declares them, each
with its backend, model, instructions file, tools and limits; read and written purely, and
checked before a run (the maker never grades, every role has a backend, and only the
coordinator may hold a shipping permission).

Ground rules: the section is for people first. Its prose is carried through as it is;
a role is one list item ``- NAME: BACKEND`` (a lower-case name, then ``command `CMD```,
``agent claude``, ``node NAME`` (several: ``node a, node b``) or ``managed-agent [ID]``)
followed by indented
``  - Field: value`` lines. A section with no role item is an empty roster (the roles come
from the command line, as before). :func:`render_section` of a parsed section is the text
it was read from when that text is in the canonical shape.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

from relay.errors import SpineFileError
from relay.loop.agents import parse_role
from relay.loop.markdown import Section, body_lines, code_span, find, parse_code_span, sections
from relay.loop.programs import program_of, same_program, shared_program

LOOP_NAME = "docs/loop/LOOP.md"
HEADING = "Roles"
# the Managed Agents backend (relay.loop.managed's BACKEND and DEFAULT_MODEL): named here,
# where `relay loop`'s parser reads them without loading that module on every loop verb
MANAGED_BACKEND = "managed-agents"
MANAGED_MODEL = "claude-opus-4-8"
# the roles the design names, in the order they are shown; a person may add any other
COORDINATOR = "coordinator"
MAKER = "maker"
KNOWN_ROLES = (
    COORDINATOR,
    MAKER,
    "code-reviewer",
    "security-auditor",
    "test-engineer",
    "red-team",
    "verifier",
)
# roles that never grade: the maker makes, the coordinator owns the spine
NOT_GRADING = frozenset({COORDINATOR, MAKER})
# permissions that ship (relay.loop.tools.ships): only the coordinator may hold one,
# behind a person's confirmation
_ROLE = re.compile(r"^- ([a-z][a-z0-9-]*):(?: (.*))?$")
# a known role written in another shape (``- Maker: …``, ``* maker: …``): refused, never prose
# a role in another shape: another bullet or a numbered item, any case, spaces around
_ROLE_LIKE = re.compile(r"^\s*(?:[-*+]|\d+[.)]) +([A-Za-z][A-Za-z0-9_-]*) *:(.*)$")
_BACKEND_LIKE = re.compile(r"^\s*(?:command\b|agent\b|node\b|managed-agent\b|\(none\))")
_FIELD = re.compile(r"^ {2,}- ([A-Za-z][A-Za-z ]*): (.*)$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_DURATION = re.compile(r"^\d+(?:\.\d+)?(?:ms|s|m|h|d)$")
FIELDS = ("Model", "Instructions", "Tools", "Limits")
LIMIT_KEYS = ("timeout", "retries", "turns", "copies")


class BackendKind(enum.StrEnum):
    """What runs a role."""

    COMMAND = "command"  # any command: the brief's path is its last argument
    AGENT = "agent"  # one of the built-in agent adapters (claude, codex, gemini, aider)
    NODE = "node"  # another relay node, sent the brief as a TASK
    MANAGED = "managed-agent"  # a Managed Agents agent (its id once created)
    NONE = "none"  # declared with no backend: refused by :func:`check_roster`


@dataclass(frozen=True)
class Limits:
    """How far one role may go: a timeout per run (a duration), retries per goal, agent
    turns, and how many copies of it may run at once (parallel makers)."""

    timeout: str | None = None
    retries: int | None = None
    turns: int | None = None
    copies: int | None = None

    def items(self) -> list[tuple[str, str]]:
        """The limits that are set, as (key, value) in a fixed order."""
        found = [(k, getattr(self, k)) for k in LIMIT_KEYS]
        return [(k, str(v)) for k, v in found if v is not None]


@dataclass(frozen=True)
class RoleSpec:
    """One role of the roster: its name, what runs it (``backend`` and its ``target``: the
    command line, the adapter spec, the node's name or the managed agent's id, empty when
    not created yet), the model where the backend has one, the instructions file, the
    tools or permissions it is given, and its limits."""

    name: str
    backend: BackendKind
    target: str = ""
    model: str | None = None
    instructions: str | None = None
    tools: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)

    def nodes(self) -> tuple[str, ...]:
        """The nodes a node-backed role runs on (``node a, node b``), in the order given."""
        if self.backend is not BackendKind.NODE:
            return ()
        return tuple(n.strip() for n in self.target.split(",") if n.strip())

    @property
    def grades(self) -> bool:
        """Whether the role judges a maker's work (every role but maker and coordinator)."""
        return self.name not in NOT_GRADING

    def identity(self, *, root: str = "") -> tuple[str, str] | None:
        """What the role *is*, for the maker-also-grades rule: the same program (a command
        however spelt, ``sh tools/m.sh`` or ``./tools//m.sh``; an agent adapter, whatever
        its mode, is its CLI's program), the same node or the same managed agent id.
        ``root``: the clone's absolute path, where a script's absolute path is relative."""
        if self.backend is BackendKind.NONE:
            return None
        if self.backend in (BackendKind.COMMAND, BackendKind.AGENT):
            return ("program", program_of(self.target, root=root))
        if self.backend is BackendKind.MANAGED and not self.target:
            return None  # not created yet: each role becomes its own agent
        return (self.backend.value, self.target)

    def backend_text(self) -> str:
        """The backend as the roster line states it."""
        if self.backend is BackendKind.NONE:
            return "(none)"
        if self.backend is BackendKind.COMMAND:
            return f"command {code_span(self.target)}"
        if self.backend is BackendKind.NODE:
            return ", ".join(f"node {n}" for n in self.nodes())
        return f"{self.backend.value} {self.target}".rstrip()


@dataclass(frozen=True)
class Roster:
    """The ``## Roles`` section: its prose (kept as written) and its roles in order."""

    intro: str = ""
    roles: tuple[RoleSpec, ...] = ()

    def get(self, name: str) -> RoleSpec | None:
        """The role named ``name``, or None."""
        return next((r for r in self.roles if r.name == name), None)

    def grading(self) -> tuple[RoleSpec, ...]:
        """The roles that judge the maker's work."""
        return tuple(r for r in self.roles if r.grades)

    def with_role(self, role: RoleSpec) -> Roster:
        """The roster with ``role`` replacing the one of its name, or appended."""
        if self.get(role.name) is None:
            return replace(self, roles=(*self.roles, role))
        return replace(self, roles=tuple(role if r.name == role.name else r for r in self.roles))


# --- reading ---


def parse_backend(text: str, *, name: str = LOOP_NAME, line: int = 1) -> tuple[BackendKind, str]:
    """A roster line's backend: ``command `CMD```, ``agent SPEC``, ``node NAME``,
    ``managed-agent [ID]`` or ``(none)``."""
    text = text.strip()
    if text in ("(none)", "none", ""):
        return BackendKind.NONE, ""
    word, _, rest = text.partition(" ")
    rest = rest.strip()
    if word == "command":
        command = parse_code_span(rest)
        if command is None or not command.strip():
            raise SpineFileError(name, line, "a command backend reads command `CMD`")
        return BackendKind.COMMAND, command
    if word == "agent":
        if parse_role(rest) is None:
            raise SpineFileError(
                name, line, "an agent backend names an adapter: claude, codex, gemini or aider"
            )
        return BackendKind.AGENT, rest
    if word == "node":
        # several nodes make at once: ``node a, node b`` (each goal goes to one free node)
        names = [p.strip().removeprefix("node ").strip() for p in f"node {rest}".split(",")]
        if not all(_NAME.match(n) for n in names) or not all(
            p.strip().startswith("node ") for p in f"node {rest}".split(",")
        ):
            raise SpineFileError(name, line, "a node backend reads node NAME (or node A, node B)")
        if len(set(names)) != len(names):
            raise SpineFileError(name, line, "a node backend names each node once")
        return BackendKind.NODE, ", ".join(names)
    if word == BackendKind.MANAGED.value:
        if rest and not _NAME.match(rest):
            raise SpineFileError(name, line, "a managed agent backend reads managed-agent [ID]")
        return BackendKind.MANAGED, rest
    raise SpineFileError(
        name,
        line,
        "a role's backend is command `CMD`, agent NAME, node NAME, managed-agent [ID] or (none)",
    )


def parse_limits(text: str, *, name: str = LOOP_NAME, line: int = 1) -> Limits:
    """``timeout 30m, retries 3, turns 40, copies 3`` as limits."""
    values: dict[str, object] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part or part == "(none)":
            continue
        key, _, value = part.partition(" ")
        value = value.strip()
        if key not in LIMIT_KEYS or key in values:
            raise SpineFileError(
                name, line, f"a limit is one of {', '.join(LIMIT_KEYS)}, each once: {part}"
            )
        if key == "timeout":
            if not _DURATION.match(value):
                raise SpineFileError(name, line, "timeout is a duration (30m, 2h)")
            values[key] = value
        else:
            if not value.isdigit() or int(value) < (1 if key == "copies" else 0):
                raise SpineFileError(name, line, f"{key} is a whole number")
            values[key] = int(value)
    return replace(Limits(), **values)  # type: ignore[arg-type]


def parse_roster_section(part: Section, *, name: str = LOOP_NAME) -> Roster:
    """The roster a ``## Roles`` section declares (prose kept as the intro)."""
    lines = body_lines(part)
    for number, text in lines:
        like = _ROLE_LIKE.match(text)
        named = like is not None and (
            like.group(1).lower() in KNOWN_ROLES or _BACKEND_LIKE.match(like.group(2))
        )
        if like is not None and named and not _ROLE.match(text):
            raise SpineFileError(
                name, number, f"a role reads `- {like.group(1).lower()}: BACKEND` (a dash, the"
                " name in lower case); write it so, or it is no role"
            )  # fmt: skip
    start = next((i for i, (_, text) in enumerate(lines) if _ROLE.match(text)), len(lines))
    intro = "\n".join(text for _, text in lines[:start])
    roles: list[RoleSpec] = []
    current: dict[str, object] | None = None
    for number, text in lines[start:]:
        role = _ROLE.match(text)
        if role is not None:
            if current is not None:
                roles.append(_role(current))
            if any(r.name == role.group(1) for r in roles):
                raise SpineFileError(name, number, f"the role {role.group(1)} is declared twice")
            kind, target = parse_backend(role.group(2) or "", name=name, line=number)
            current = {"name": role.group(1), "backend": kind, "target": target}
            continue
        if not text.strip():
            continue
        found = _FIELD.match(text)
        if found is None or current is None or found.group(1) not in FIELDS:
            raise SpineFileError(
                name,
                number,
                "after the first role, the roster has only roles (- name: backend) and"
                f" their fields (  - {': ...,  - '.join(FIELDS)}: ...)",
            )
        key, value = found.group(1).lower(), found.group(2).strip()
        if key in current:
            raise SpineFileError(name, number, f"{found.group(1)} is given twice")
        if key == "instructions":
            path = parse_code_span(value)
            if path is None:
                raise SpineFileError(name, number, "Instructions is a path in backticks")
            current[key] = path
        elif key == "tools":
            current[key] = tuple(t.strip() for t in value.split(",") if t.strip() != "(none)")
            if any(not t for t in current[key]):  # type: ignore[attr-defined]
                raise SpineFileError(name, number, "Tools is a comma-separated list")
        elif key == "limits":
            current[key] = parse_limits(value, name=name, line=number)
        else:
            current[key] = value or None
    if current is not None:
        roles.append(_role(current))
    return Roster(intro=intro.strip("\n"), roles=tuple(roles))


def _role(values: dict[str, object]) -> RoleSpec:
    return RoleSpec(**values)  # type: ignore[arg-type]


def parse_roster(loop_text: str | None, *, name: str = LOOP_NAME) -> Roster:
    """The roster LOOP.md declares; an absent file or section is an empty roster."""
    parts = sections(loop_text or "")
    index = find(parts, HEADING)
    return Roster() if index is None else parse_roster_section(parts[index], name=name)


# --- writing ---


def render_role(role: RoleSpec) -> str:
    """One role's list item."""
    lines = [f"- {role.name}: {role.backend_text()}"]
    if role.model:
        lines.append(f"  - Model: {role.model}")
    if role.instructions:
        lines.append(f"  - Instructions: {code_span(role.instructions)}")
    if role.tools:
        lines.append(f"  - Tools: {', '.join(role.tools)}")
    limits = role.limits.items()
    if limits:
        lines.append(f"  - Limits: {', '.join(f'{k} {v}' for k, v in limits)}")
    return "\n".join(lines) + "\n"


def render_section(roster: Roster) -> str:
    """The whole ``## Roles`` section."""
    parts = ["## Roles\n"]
    if roster.intro:
        parts.append(f"\n{roster.intro}\n")
    if roster.roles:
        parts.append("\n" + "".join(render_role(r) for r in roster.roles))
    return "".join(parts)


def with_roster(loop_text: str, roster: Roster) -> str:
    """LOOP.md with its ``## Roles`` section replaced by ``roster`` (appended when it has
    none); every other section kept byte for byte."""
    parts = sections(loop_text)
    index = find(parts, HEADING)
    body = render_section(roster)
    if index is None:
        text = loop_text if loop_text.endswith("\n") or not loop_text else loop_text + "\n"
        return f"{text}\n{body}"
    after = "".join(p.text for p in parts[index + 1 :])
    return "".join(p.text for p in parts[:index]) + body + ("\n" if after else "") + after


# --- checking ---


@dataclass(frozen=True)
class RosterProblem:
    """Why a roster cannot run: the role and what is wrong with it."""

    role: str
    problem: str

    def __str__(self) -> str:
        return f"{self.role}: {self.problem}"


def check_roster(
    roster: Roster,
    *,
    exists: Mapping[str, bool] | None = None,
    root: str = "",
    nodes: Collection[str] | None = None,
) -> list[RosterProblem]:
    """What keeps the roster from running: a role with no backend, a grading role that is
    the maker (the same program however spelt, agent adapter, node or agent id; ``root``
    is the clone's absolute path), a shipping permission on any role but the coordinator,
    an instructions file that does not exist (when ``exists`` says so), a node that is
    not in the node table (when ``nodes`` lists it), and limits that cannot hold
    (:func:`check_limits`)."""
    found: list[RosterProblem] = []
    for role in roster.roles:
        if role.backend is BackendKind.NONE:
            found.append(RosterProblem(role.name, "it has no backend; name a command, an"
                                       " agent, a node or a managed agent"))  # fmt: skip
        from relay.loop.tools import shipping as shipping_tools

        shipping = sorted(shipping_tools(role.tools))
        if shipping and role.name != COORDINATOR:
            found.append(RosterProblem(
                role.name,
                f"it holds a shipping permission ({', '.join(shipping)}); only the"
                " coordinator may, behind a person's confirmation",
            ))  # fmt: skip
        if role.instructions and exists is not None and not exists.get(role.instructions, True):
            found.append(RosterProblem(
                role.name, f"its instructions file {role.instructions} does not exist"
            ))  # fmt: skip
        unknown = [n for n in role.nodes() if nodes is not None and n not in nodes]
        if unknown:
            found.append(RosterProblem(
                role.name,
                f"{', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not in the node"
                " table; run `relay join` on that machine, or name a node `relay nodes` lists",
            ))  # fmt: skip
    maker = roster.get(MAKER)
    mine = maker.identity(root=root) if maker is not None else None
    if mine is not None:
        for role in roster.grading():
            # a node among the maker's nodes is the maker, whatever else is listed
            shared = sorted(set(role.nodes()) & set(maker.nodes() if maker else ()))
            same = ("node", ", ".join(shared)) if shared else mine
            theirs = role.identity(root=root)
            if maker is not None and mine[0] == "program" and theirs and theirs[0] == "program":
                # any program of the grader's line that the maker's runs (wrapped or not)
                program = shared_program(maker.target, role.target, root=root)
                same, theirs = ("program", program or ""), mine if program else theirs
            if theirs == mine or shared:
                found.append(RosterProblem(
                    role.name,
                    f"it is the maker ({same[0]} {same[1]}) and would grade its own work;"
                    " give it another backend",
                ))  # fmt: skip
    return found + check_limits(roster)


# the documented limits of managed-agents-2026-04-01 (relay.loop.managed holds them too)
MANAGED_ROSTER = 20  # agents in a coordinator's roster
MANAGED_THREADS = 25  # session threads at once: the primary thread and its workers


def check_limits(roster: Roster) -> list[RosterProblem]:
    """What is wrong with the roster's limits: ``turns 0`` (the role could never run),
    ``copies`` on a role that does not make (only makers run in copies), a maker on
    nodes with more copies than nodes (a node works one goal at a time), a managed maker
    with more copies than a session runs threads beside its primary thread, and a managed
    roster of more agents than a coordinator's roster holds (its maker's ``self`` counted)."""
    found: list[RosterProblem] = []
    for role in roster.roles:
        turns, copies = role.limits.turns, role.limits.copies
        if turns == 0:
            found.append(RosterProblem(role.name, "turns 0: it could never run; give it 1 or more"))
        if copies is None:
            continue
        if role.name != MAKER:
            found.append(RosterProblem(
                role.name, f"copies {copies}: only the maker runs in copies (parallel makers)"
            ))  # fmt: skip
        elif role.backend is BackendKind.NODE and copies > len(role.nodes()):
            found.append(RosterProblem(
                role.name,
                f"copies {copies} on {len(role.nodes())} node(s): a node makes one goal at a"
                " time; list more nodes or lower copies",
            ))  # fmt: skip
        elif role.backend is BackendKind.MANAGED and copies > MANAGED_THREADS - 1:
            found.append(RosterProblem(
                role.name,
                f"copies {copies}: a Managed Agents session runs at most {MANAGED_THREADS}"
                f" threads at once, its primary thread one of them (at most"
                f" {MANAGED_THREADS - 1} copies)",
            ))  # fmt: skip
    managed = [r for r in roster.roles if r.backend is BackendKind.MANAGED]
    agents = len([r for r in managed if r.name != COORDINATOR])
    maker = roster.get(MAKER)
    selves = 1 if maker is not None and maker.backend is BackendKind.MANAGED else 0
    if agents + selves > MANAGED_ROSTER:
        found.append(RosterProblem(
            COORDINATOR,
            f"its Managed Agents roster would hold {agents + selves} agents ({agents} roles"
            f"{' and the maker as self' if selves else ''}); a coordinator's roster holds at"
            f" most {MANAGED_ROSTER}: merge roles",
        ))  # fmt: skip
    return found


def makers_allowed(roster: Roster, asked: int, *, maker: str | None = None) -> tuple[int, str]:
    """How many makers work at once under the maker's ``copies`` limit, and the line that
    says so when it lowers ``asked`` ("" when it does not). ``maker`` is the command the
    run's maker is (a ``--maker`` given on the command line is not the roster's: its limit
    does not apply); None for the roster's own maker (a node or a managed agent)."""
    role = roster.get(MAKER)
    if role is None or role.limits.copies is None:
        return asked, ""
    if maker is not None and not same_program(maker, role.target):
        return asked, ""
    copies = role.limits.copies
    if asked <= copies:
        return asked, ""
    return copies, (
        f"{copies} makers at once, not {asked}: the roster's maker runs at most"
        f" {copies} copies (Limits: copies {copies})"
    )


def turns_spent(
    roster: Roster, asked: Mapping[str, int], *, goal: str, running: Sequence[str]
) -> str | None:
    """Why the goal cannot be worked again (None: it can): the first role, in the roster's
    order, among those the run runs (``running``: their names) whose ``turns`` limit is
    used up on this goal (``asked``: how many times each was asked on it, from its
    thread). A turn is one time the role is asked on the goal; the count lives with the
    role's thread, so it holds across runs."""
    for role in roster.roles:
        limit = role.limits.turns
        if limit is None or role.name not in running:
            continue
        used = asked.get(role.name, 0)
        if used >= limit:
            return (
                f"{role.name} has used its {limit} turn{'s' if limit != 1 else ''} on {goal}"
                f" ({used} asked; LOOP.md's roster: Limits: turns {limit}): raise the limit"
                " or split the goal"
            )
    return None


def roles_named(roster: Roster, names: Sequence[str]) -> tuple[RoleSpec, ...]:
    """The roster's roles among ``names``, in the roster's order."""
    return tuple(r for r in roster.roles if r.name in names)


# --- the run's panel, from the roster ---

CHECKER_ROLES = ("code-reviewer", "security-auditor", "test-engineer")


@dataclass(frozen=True)
class RunPanel:
    """What `relay loop run` takes from the roster when no ``--maker`` is given: the
    maker's local command or its node, the checkers, the verifier, the red team."""

    maker: str | None
    maker_node: str | None  # the first of maker_nodes
    checkers: tuple[str, ...]
    verifier: str | None
    red_team: tuple[str, ...]
    checker_names: tuple[str, ...] = ()
    maker_nodes: tuple[str, ...] = ()  # every node the maker runs on (``node a, node b``)


def _local(role: RoleSpec | None) -> str | None:
    if role is None or role.backend not in (BackendKind.COMMAND, BackendKind.AGENT):
        return None
    return role.target


def run_panel(roster: Roster) -> RunPanel:
    """The roles relay runs itself (a command or an agent adapter), by what they do: every
    grading role but the verifier and the red team checks; a maker on a node is sent there."""
    maker = roster.get(MAKER)
    nodes = maker.nodes() if maker is not None else ()
    node = nodes[0] if nodes else None
    checkers = [
        (r.name, _local(r)) for r in roster.grading() if r.name not in ("verifier", "red-team")
    ]  # fmt: skip
    red = _local(roster.get("red-team"))
    return RunPanel(
        maker=_local(maker),
        maker_node=node,
        checkers=tuple(c for _, c in checkers if c),
        verifier=_local(roster.get("verifier")),
        red_team=(red,) if red else (),
        checker_names=tuple(n for n, c in checkers if c),
        maker_nodes=nodes,
    )


# --- what applies to each role's runs ---


@dataclass(frozen=True)
class RoleSettings:
    """What the roster sets for one role's runs: the model passed to its agent adapter,
    the instructions file whose text heads its brief, its timeout in seconds, its
    retries per goal (None: the contract's), its turns on a goal and its copies."""

    model: str | None = None
    instructions: str | None = None
    timeout: float | None = None
    retries: int | None = None
    turns: int | None = None  # times it is asked on one goal, at most
    copies: int | None = None  # makers at once, at most


def duration_seconds(text: str) -> float:
    """A limit's duration (``20m``, ``1.5h``, ``500ms``) in seconds."""
    found = re.match(r"^(\d+(?:\.\d+)?)(ms|s|m|h|d)$", text.strip())
    if found is None:
        raise ValueError(f"not a duration: {text}")
    scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}[found.group(2)]
    return float(found.group(1)) * scale


def role_settings(roster: Roster) -> dict[str, RoleSettings]:
    """Each role's settings, by the name its thread carries (``maker``, ``code-reviewer``):
    only the roles that set something."""
    found: dict[str, RoleSettings] = {}
    for role in roster.roles:
        timeout = role.limits.timeout
        settings = RoleSettings(
            model=role.model,
            instructions=role.instructions,
            timeout=duration_seconds(timeout) if timeout else None,
            retries=role.limits.retries,
            turns=role.limits.turns,
            copies=role.limits.copies,
        )
        if settings != RoleSettings():
            found[role.name] = settings
    return found


def applies_text(settings: RoleSettings) -> str:
    """What applies to a role's runs, in one line for `relay loop roles`."""
    parts = []
    if settings.model:
        parts.append(f"model {settings.model} (to its agent)")
    if settings.instructions:
        parts.append(f"{settings.instructions} heads its brief")
    if settings.timeout is not None:
        parts.append(f"each run stopped after {settings.timeout:g}s")
    if settings.retries is not None:
        parts.append(f"{settings.retries} retries per goal")
    if settings.turns is not None:
        parts.append(f"asked at most {settings.turns} times on a goal, then the goal is blocked")
    if settings.copies is not None:
        parts.append(f"at most {settings.copies} at once")
    return "; ".join(parts)


def settings_for(roster: Roster, name: str, spec: str) -> RoleSettings | None:
    """The settings that apply when the role ``name`` runs ``spec``: the roster's role of
    that name when ``spec`` is what the roster says it runs (a ``--maker`` given on the
    command line is not the roster's maker), or when the role is a node's (on the node,
    its own maker runs the role); None otherwise."""
    role = roster.get(name)
    if role is None:
        return None
    same = same_program(spec, role.target)
    if not same and role.backend is not BackendKind.NODE:
        return None
    return role_settings(Roster(roles=(role,))).get(name, RoleSettings())
