"""The run contract, ``docs/loop/CONTRACT.md``: what a run may do, stated before it runs.

Ground rules: the contract is sections of markdown a person reads and edits; each field is
one ``## `` section (free text, a list of backticked paths, or ``- Name: value`` lines).
:func:`check` is the gate before any run: no verifiable gate or metric, a protected path
that does not exist, or a missing budget is refused, naming the field.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from relay.errors import SpineFileError
from relay.loop.hosts import parse_entry
from relay.loop.markdown import Section, body_lines, code_span, parse_code_span, sections

CONTRACT_NAME = "docs/loop/CONTRACT.md"
CONTRACT_PATH = "docs/loop/CONTRACT.md"
NONE = "(none)"
WIDTH = 88
TITLE = "# Run contract\n"
INTRO = (
    "Stated before anything runs. `relay loop check` reads it and `relay loop run` will not\n"
    "start until it holds; no maker may change it (it is a protected path).\n"
)
# the guardrail parts of LOOP.md: a path with `#Heading` protects one section
GUARDRAIL_SECTIONS = ("Roles", "Guardrails", "Security-critical areas", "Stopping conditions")
DEFAULT_PROTECTED = (
    CONTRACT_PATH,
    *(f"docs/loop/LOOP.md#{name}" for name in GUARDRAIL_SECTIONS),
    "docs/loop/state/",
)
ROLES = ("maker", "checker", "verifier", "red team")
# "maker credentials": the maker keeps the tokens, credential helpers and SSH agent every
# role is otherwise run without (relay still refuses what it does not commit itself)
# "env-level only maker": a run with no person there to say --allow-env-only (scheduled,
# resumed, a node's) may start a maker where namespaces cannot be made
ENV_ONLY_MAKER = "env-level only maker"
AUTHORISABLE = (
    "push",
    "open a relay job",
    *(f"{role} credentials" for role in ROLES),
    ENV_ONLY_MAKER,
)
# a run's iterations are capped here unless the contract raises the ceiling with a reason
DEFAULT_CEILING = 50
# how many times an optimisation goal's metric runs on the baseline and on the candidate
# (interleaved), unless the contract or the goal says otherwise: with one run the noise of
# the machine is not measured, and a slower change can measure faster
DEFAULT_METRIC_RUNS = 5
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


@dataclass(frozen=True)
class Gate:
    """A named command whose exit status is the verdict."""

    name: str
    command: str


@dataclass(frozen=True)
class Budget:
    """How much a run may spend; None is unset (and refused by :func:`check`)."""

    iterations: int | None = 20
    wall_clock: str | None = "8h"
    retries: int | None = 3
    makers: int | None = 1
    maker_timeout: str = "30m"
    gate_timeout: str = "10m"
    backoff: str = "30s"
    checker_timeout: str = "10m"
    trial: str = "10m"  # one run of an optimisation goal's metric, the same every time
    coverage_floor: int | None = None  # triage: a file below this line coverage is a finding
    ceiling: int | None = None  # the iteration ceiling, when the contract raises or lowers it
    ceiling_reason: str = ""  # why (needed to raise it above DEFAULT_CEILING)
    metric_runs: int | None = DEFAULT_METRIC_RUNS  # None: a contract written before the line

    def runs(self) -> int:
        """How many runs of a metric each arm takes (a goal's own `Runs:` overrides it)."""
        return self.metric_runs if self.metric_runs is not None else DEFAULT_METRIC_RUNS

    def iteration_ceiling(self) -> int:
        """The most iterations any run may take, whatever --max-iterations asks."""
        return self.ceiling if self.ceiling is not None else DEFAULT_CEILING


@dataclass(frozen=True)
class Contract:
    """The run contract's fields, in the order the file states them."""

    objective: str = "Leave the repository better, one goal at a time, and never worse."
    mutable: tuple[str, ...] = (".",)
    protected: tuple[str, ...] = DEFAULT_PROTECTED
    gates: tuple[Gate, ...] = ()
    metric: str | None = None
    coverage_report: str | None = None
    run_command: str = 'relay loop run --maker "AGENT-COMMAND" --checker "OTHER-AGENT-COMMAND"'
    keep_rule: str = (
        "A goal's change is kept (one commit) only when its acceptance command, every gate,"
        " the coverage comparison, the protected-path check, the checker panel and the"
        " verifier's fresh re-run all pass; otherwise it is reverted, and the repository is"
        " left exactly as the goal found it."
    )
    crash_policy: str = (
        "A maker that fails for a transient reason (429, 503, 529, overloaded, rate limit,"
        " exit 75) is retried after an exponential back-off, at no cost; a crash or timeout"
        " is a failed attempt. A killed run resumes from the spine and git when run again."
    )
    history: str = (
        "Each iteration in docs/loop/state/iteration-log.md, each failure in"
        " docs/loop/state/failures.md, the rules learned in docs/loop/state/learned-rules.md,"
        " each kept change in git and docs/loop/handover.md."
    )
    escalation: tuple[str, ...] = (
        "a gate cannot run on the baseline, or fails naming no check (unknown)",
        "a security-critical goal with no checker panel",
        "the maker fails transiently six times in a row",
    )
    exhaustion: str = (
        "Every goal done or blocked, or the budget spent; the report says which and why."
    )
    budget: Budget = field(default_factory=Budget)
    authorised: tuple[str, ...] = ()
    security_critical: tuple[str, ...] = ()
    network: tuple[tuple[str, tuple[str, ...]], ...] = ()  # each role's egress hosts
    extra: tuple[str, ...] = ()

    def hosts_for(self, role: str) -> tuple[str, ...]:
        """The hosts the contract lets ``role`` (``maker``, ``red team``…) reach from its
        box, beyond its agent CLI's own."""
        role = role.replace("-", " ")
        return tuple(h for who, hosts in self.network if who == role for h in hosts)


_FIELDS = (
    "Objective",
    "Mutable paths",
    "Protected paths",
    "Gates",
    "Metric",
    "Coverage report",
    "Run command",
    "Keep or revert",
    "Crash policy",
    "History",
    "Escalation",
    "Exhaustion",
    "Budget",
    "Authorised irreversible actions",
)
# written by relay since optimisation goals; a contract without it reads as none listed
SECURITY_PATHS = "Security-critical paths"
# which hosts a role's box may reach (every box has a network of its own, loopback alone;
# an agent CLI's role reaches its own API hosts without being listed here)
NETWORK = "Network access"
_OPTIONAL = (SECURITY_PATHS, NETWORK)
_BUDGET = {
    "Iterations": "iterations",
    "Wall clock": "wall_clock",
    "Retries per failure": "retries",
    "Concurrent makers": "makers",
    "Maker timeout": "maker_timeout",
    "Gate timeout": "gate_timeout",
    "Transient backoff": "backoff",
    "Checker timeout": "checker_timeout",
    "Trial wall clock": "trial",
    "Coverage floor": "coverage_floor",
    "Iteration ceiling": "ceiling",
    "Metric runs": "metric_runs",
}


def seconds(text: str) -> float | None:
    """A duration such as ``90s``, ``30m``, ``8h``, ``1h30m`` or ``250ms`` in seconds."""
    text = text.strip().replace(" ", "")
    if not text:
        return None
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * _UNITS[u] for n, u in parts)


# --- reading ---


def parse_contract(text: str, *, name: str = CONTRACT_NAME) -> Contract:
    """CONTRACT.md as a model; SpineFileError names the line relay cannot read."""
    parts = {p.heading: p for p in sections(text) if p.heading is not None}
    missing = [f for f in _FIELDS if f not in parts]
    if missing:
        raise SpineFileError(name, 1, f"the contract has no `## {missing[0]}` section")
    extra = tuple(p.text for h, p in parts.items() if h not in (*_FIELDS, *_OPTIONAL))
    security = parts.get(SECURITY_PATHS)
    network = parts.get(NETWORK)
    return Contract(
        objective=_prose(parts["Objective"]),
        mutable=_paths(parts["Mutable paths"], name),
        protected=_paths(parts["Protected paths"], name),
        gates=_gates(parts["Gates"], name),
        metric=_optional(parts["Metric"]),
        coverage_report=_optional_code(parts["Coverage report"], name),
        run_command=_optional_code(parts["Run command"], name) or "",
        keep_rule=_prose(parts["Keep or revert"]),
        crash_policy=_prose(parts["Crash policy"]),
        history=_prose(parts["History"]),
        escalation=_bullets(parts["Escalation"], name),
        exhaustion=_prose(parts["Exhaustion"]),
        budget=_budget(parts["Budget"], name),
        authorised=_bullets(parts["Authorised irreversible actions"], name),
        security_critical=_paths(security, name) if security is not None else (),
        network=_network(network, name) if network is not None else (),
        extra=extra,
    )


def _prose(part: Section) -> str:
    """A free-text field: its paragraphs, each as one line of words."""
    text = "\n".join(line for _, line in body_lines(part)).strip()
    return "\n\n".join(" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip())


def wrap(text: str) -> str:
    """Free text as paragraphs wrapped for reading."""
    import textwrap  # for writing a contract, never for reading one

    return "\n\n".join(
        textwrap.fill(p, WIDTH, break_on_hyphens=False, break_long_words=False)
        for p in text.split("\n\n")
    )


def _optional(part: Section) -> str | None:
    text = _prose(part)
    return None if text in ("", NONE) else text


def _optional_code(part: Section, name: str) -> str | None:
    text = _optional(part)
    if text is None:
        return None
    value = parse_code_span(text)
    if value is None:
        raise SpineFileError(name, part.first_line + 2, f"`## {part.heading}` goes in backticks")
    return value


def _lines(part: Section) -> list[tuple[int, str]]:
    found = [(n, line.strip()) for n, line in body_lines(part) if line.strip()]
    return [] if [line for _, line in found] == [NONE] else found


def _bullets(part: Section, name: str) -> tuple[str, ...]:
    items = []
    for number, line in _lines(part):
        if not line.startswith("- "):
            raise SpineFileError(name, number, f"`## {part.heading}` is a list of `- ` lines")
        items.append(line[2:].strip())
    return tuple(items)


def _paths(part: Section, name: str) -> tuple[str, ...]:
    paths = []
    for number, line in _lines(part):
        value = parse_code_span(line[2:]) if line.startswith("- ") else None
        if value is None:
            raise SpineFileError(name, number, f"`## {part.heading}` lists paths as - `path`")
        paths.append(value)
    return tuple(paths)


def _gates(part: Section, name: str) -> tuple[Gate, ...]:
    gates = []
    for number, line in _lines(part):
        match = re.fullmatch(r"- ([A-Za-z0-9_.-]+): (.+)", line)
        command = parse_code_span(match.group(2)) if match else None
        if match is None or command is None:
            raise SpineFileError(name, number, "a gate reads - name: `command`")
        gates.append(Gate(match.group(1), command))
    return tuple(gates)


def _network(part: Section, name: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``- role: host, host:port, *.host`` lines (hosts in backticks or bare)."""
    found: list[tuple[str, tuple[str, ...]]] = []
    for number, line in _lines(part):
        match = re.fullmatch(r"- ([a-z ]+): (.+)", line)
        if match is None or match.group(1) not in ROLES:
            raise SpineFileError(
                name,
                number,
                f"`## {NETWORK}` reads - role: `host`, `host:port` ({', '.join(ROLES)})",
            )
        hosts = tuple(h.strip().strip("`").strip() for h in match.group(2).split(","))
        for host in hosts:
            if parse_entry(host) is None:
                raise SpineFileError(
                    name, number, f"{host!r} is not a host (name, *.name, name:port or an address)"
                )
        found.append((match.group(1), hosts))
    return tuple(found)


def _budget(part: Section, name: str) -> Budget:
    values: dict[str, object] = {key: None for key in ("iterations", "wall_clock", "retries")}
    values["makers"] = None
    values["metric_runs"] = None
    for number, line in _lines(part):
        match = re.fullmatch(r"- ([A-Za-z ]+): (.+)", line)
        if match is None or match.group(1) not in _BUDGET:
            known = ", ".join(_BUDGET)
            raise SpineFileError(name, number, f"a budget line is - Name: value ({known})")
        key, value = _BUDGET[match.group(1)], match.group(2).strip()
        if key == "ceiling":
            limit = re.fullmatch(r"(\d+)\s*(?:\((.*)\))?", value)
            if limit is None:
                raise SpineFileError(name, number, "Iteration ceiling reads N (why)")
            reason = (limit.group(2) or "").strip()
            values["ceiling"], values["ceiling_reason"] = int(limit.group(1)), reason
            if int(limit.group(1)) > DEFAULT_CEILING and not reason:
                raise SpineFileError(
                    name,
                    number,
                    f"an Iteration ceiling above {DEFAULT_CEILING} needs its reason:"
                    f" - Iteration ceiling: {limit.group(1)} (why)",
                )
        elif key == "coverage_floor":
            digits = value.removesuffix("%")
            if not digits.isdigit() or int(digits) > 100:
                raise SpineFileError(name, number, "Coverage floor is a percentage (80%)")
            values[key] = int(digits)
        elif key in ("iterations", "retries", "makers"):
            if not value.isdigit():
                raise SpineFileError(name, number, f"{match.group(1)} is a whole number")
            values[key] = int(value)
        elif key == "metric_runs":
            if not value.isdigit() or int(value) < 1:
                raise SpineFileError(name, number, "Metric runs is a whole number of at least 1")
            values[key] = int(value)
        else:
            if seconds(value) is None:
                raise SpineFileError(name, number, f"{match.group(1)} is a duration (30m, 8h)")
            values[key] = value
    return replace(Budget(), **values)  # type: ignore[arg-type]


# --- writing ---


def render_contract(contract: Contract) -> str:
    """CONTRACT.md's text."""
    b = contract.budget
    budget = [
        ("Iterations", b.iterations),
        ("Wall clock", b.wall_clock),
        ("Retries per failure", b.retries),
        ("Concurrent makers", b.makers),
        ("Maker timeout", b.maker_timeout),
        ("Gate timeout", b.gate_timeout),
        ("Transient backoff", b.backoff),
        ("Checker timeout", b.checker_timeout),
        ("Trial wall clock", b.trial),
        ("Coverage floor", None if b.coverage_floor is None else f"{b.coverage_floor}%"),
        ("Iteration ceiling", _ceiling(b)),
        ("Metric runs", b.metric_runs),
    ]
    bodies = {
        "Objective": wrap(contract.objective),
        "Mutable paths": _list(f"- {code_span(p)}" for p in contract.mutable),
        "Protected paths": _list(f"- {code_span(p)}" for p in contract.protected),
        "Gates": _list(f"- {g.name}: {code_span(g.command)}" for g in contract.gates),
        "Metric": contract.metric or NONE,
        "Coverage report": code_span(contract.coverage_report)
        if contract.coverage_report
        else NONE,
        "Run command": code_span(contract.run_command) if contract.run_command else NONE,
        "Keep or revert": wrap(contract.keep_rule),
        "Crash policy": wrap(contract.crash_policy),
        "History": wrap(contract.history),
        "Escalation": _list(f"- {e}" for e in contract.escalation),
        "Exhaustion": wrap(contract.exhaustion),
        "Budget": _list(f"- {k}: {v}" for k, v in budget if v is not None),
        "Authorised irreversible actions": _list(f"- {a}" for a in contract.authorised),
        SECURITY_PATHS: _list(f"- {code_span(p)}" for p in contract.security_critical),
        NETWORK: _list(
            f"- {who}: {', '.join(code_span(h) for h in hosts)}" for who, hosts in contract.network
        ),
    }
    text = TITLE + "\n" + INTRO
    for heading in (*_FIELDS, *_OPTIONAL):
        if heading == NETWORK and not contract.network:
            continue  # written once a person lists a host
        text += f"\n## {heading}\n\n{bodies[heading] or NONE}\n"
    return text + "".join("\n" + e.rstrip("\n") + "\n" for e in contract.extra)


def _ceiling(b: Budget) -> str | None:
    if b.ceiling is None:
        return None
    return f"{b.ceiling} ({b.ceiling_reason})" if b.ceiling_reason else str(b.ceiling)


def _list(lines: Iterable[str]) -> str:
    return "\n".join(lines)


# --- the check before a run ---


@dataclass(frozen=True)
class Problem:
    """One field of the contract that is wrong, and what is wrong with it."""

    field: str
    message: str


def check(contract: Contract, *, exists: Mapping[str, bool]) -> list[Problem]:
    """What is wrong with the contract; ``exists`` says which protected paths exist."""
    problems = []
    if not any(g.command.strip() for g in contract.gates) and not contract.metric:
        problems.append(Problem("Gates", "there is no verifiable gate (a command) or metric"))
    for path in contract.protected:
        if not exists.get(path, False):
            problems.append(Problem("Protected paths", f"`{path}` does not exist"))
    if CONTRACT_PATH not in contract.protected:
        problems.append(Problem("Protected paths", f"`{CONTRACT_PATH}` must be protected"))
    b = contract.budget
    for label, value in (("Iterations", b.iterations), ("Retries per failure", b.retries)):
        if value is None:
            problems.append(Problem("Budget", f"no `{label}:` line"))
    if b.wall_clock is None:
        problems.append(Problem("Budget", "no `Wall clock:` line"))
    if b.iterations == 0:
        problems.append(Problem("Budget", "`Iterations:` is 0; nothing could run"))
    if b.iterations is not None and b.iterations > b.iteration_ceiling():
        problems.append(Problem("Budget", ceiling_message(b.iterations, b, "`Iterations:`")))
    if b.makers == 0:
        problems.append(Problem("Budget", "`Concurrent makers:` is 0; nothing could run"))
    if not contract.objective.strip():
        problems.append(Problem("Objective", "the objective is empty; state it in one sentence"))
    for action in contract.authorised:
        if action not in AUTHORISABLE:
            known = ", ".join(AUTHORISABLE)
            problems.append(
                Problem("Authorised irreversible actions", f"{action!r} is not one of {known}")
            )
    return problems


def ceiling_message(asked: int, budget: Budget, what: str) -> str:
    """Why ``asked`` iterations are refused: above the ceiling, and how to raise it."""
    where = (
        f"the contract's ceiling of {budget.ceiling}"
        if budget.ceiling is not None
        else f"the ceiling of {DEFAULT_CEILING}"
    )
    return (
        f"{what} {asked} is above {where}; to raise it, add `- Iteration ceiling: {asked}"
        " (why)` to the contract's `## Budget`"
    )


def gate_name(command: str, *, taken: Sequence[str] = ()) -> str:
    """A name for a gate given as a bare command: ``name: command`` keeps its name, else
    the kind of tool it runs (test, lint, format, typecheck, build), else ``gate``."""
    match = re.fullmatch(r"([a-z][a-z0-9-]*): (.+)", command.strip())
    if match:
        return match.group(1)
    lowered = command.lower()
    kinds = (
        ("format", ("format", "fmt", "prettier", "black")),
        ("lint", ("ruff", "lint", "flake8", "eslint", "clippy", "vet")),
        ("typecheck", ("mypy", "pyright", "tsc", "typecheck")),
        ("coverage", ("coverage json", "coverage report")),
        ("test", ("pytest", "test", "unittest")),
        ("build", ("build",)),
    )
    base = next((k for k, words in kinds if any(w in lowered for w in words)), "gate")
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    return name


def gate_command(command: str) -> str:
    """The command of a gate given as ``name: command`` or as a bare command."""
    match = re.fullmatch(r"([a-z][a-z0-9-]*): (.+)", command.strip())
    return match.group(2) if match else command.strip()


# --- what a goal may touch ---


def is_within(path: str, prefix: str) -> bool:
    """Whether repository path ``path`` is ``prefix`` or under it (``.`` is everything)."""
    prefix = prefix.rstrip("/")
    if prefix in ("", "."):
        return True
    return path == prefix or path.startswith(prefix + "/")


def section_of(text: str | None, heading: str) -> str | None:
    """The text of one ``## `` section of a markdown file, or None when absent."""
    if text is None:
        return None
    parts = sections(text)
    at = next(
        (i for i, p in enumerate(parts) if (p.heading or "").lower() == heading.lower()), None
    )
    return None if at is None else parts[at].text


def split_protected(entry: str) -> tuple[str, str | None]:
    """A protected entry as (path, section heading or None): ``LOOP.md#Guardrails``."""
    path, _, heading = entry.partition("#")
    return path, heading or None


def touched(
    changes: Sequence[str],
    contract: Contract,
    *,
    texts: Mapping[str, tuple[str | None, str | None]],
) -> list[tuple[str, str]]:
    """(path, why) for each protected entry the changes touch and each changed path outside
    the mutable ones. ``texts`` holds (before, after) for the changed files that a
    ``#section`` entry names, so that editing elsewhere in such a file stays allowed."""
    found: list[tuple[str, str]] = []
    for entry in contract.protected:
        path, heading = split_protected(entry)
        if heading is None:
            found += [(c, f"`{c}` is protected (`{entry}`)") for c in changes if is_within(c, path)]
        elif path in changes:
            before, after = texts.get(path, (None, None))
            if section_of(before, heading) != section_of(after, heading):
                found.append((path, f"`{path}` section {heading!r} is protected (`{entry}`)"))
    outside = [c for c in changes if not any(is_within(c, m) for m in contract.mutable)]
    found += [(c, f"`{c}` is outside the mutable paths") for c in outside]
    return found
