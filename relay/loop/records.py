"""The loop's history under ``docs/loop/state/``: the iteration log, the failures, the
learned rules and the baseline figures; and the entries the loop adds to handover.md.

Ground rules: the log, the failures and the rules are append-only (relay adds entries and
never rewrites one); each is parsed into models and rendered back exactly (round-trip
tested); a person's edits to the text around the entries are kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from relay.errors import SpineFileError
from relay.loop.classify import is_finding
from relay.loop.markdown import (
    Section,
    body_lines,
    code_span,
    fenced,
    is_rule_row,
    parse_code_span,
    row,
    sections,
    split_row,
    table_rows,
    unfence,
)

STATE = "docs/loop/state"
LOG_NAME = f"{STATE}/iteration-log.md"
FAILURES_NAME = f"{STATE}/failures.md"
RULES_NAME = f"{STATE}/learned-rules.md"
BASELINE_NAME = f"{STATE}/baseline.md"
HANDOVER_NAME = "docs/loop/handover.md"
EXPERIMENTS_NAME = "docs/loop/EXPERIMENTS.md"  # relay.loop.metric's ledger

LOG_HEAD = """\
# Iteration log

One row per iteration of `relay loop run` (one maker attempt judged), newest last.

"""
LOG_COLUMNS = ("iteration", "goal", "attempt", "outcome", "category", "base", "coverage", "at")
FAILURES_HEAD = """\
# Failures

Every failed attempt, newest last: what failed, its category and the diagnosis the maker
was given on its next attempt. Append-only.
"""
RULES_HEAD = """\
# Learned rules

Rules the loop drew from failures that happened twice, or from a failure the maker's next
attempt healed, handed to every maker as a do-not-repeat checklist. `Source:` names the
iteration that learned the rule and the goal and attempt that taught it. Append-only: add
your own in the same shape.
"""
BASELINE_HEAD = """\
# Baseline

The figures the ratchet compares a goal's candidate against, recorded before the maker
runs and updated when a change is kept.
"""


# --- the iteration log ---


@dataclass(frozen=True)
class Iteration:
    """One row of the iteration log."""

    iteration: int
    goal: str
    attempt: int
    outcome: str
    category: str = ""
    commit: str = ""
    coverage: str = ""
    at: str = ""


def parse_log(text: str, *, name: str = LOG_NAME) -> tuple[str, tuple[Iteration, ...]]:
    """The text before the table and its rows."""
    head, found = table_rows(text, LOG_COLUMNS, name=name)
    rows = []
    for number, cells in found:
        if len(cells) != len(LOG_COLUMNS) or not (cells[0].isdigit() and cells[2].isdigit()):
            raise SpineFileError(name, number, f"a row has {len(LOG_COLUMNS)} cells, numbered")
        rows.append(Iteration(int(cells[0]), cells[1], int(cells[2]), *cells[3:]))
    return head, tuple(rows)


def render_log(head: str, rows: tuple[Iteration, ...]) -> str:
    """The iteration log's text."""
    table = [row(list(LOG_COLUMNS)), "| " + " | ".join("---" for _ in LOG_COLUMNS) + " |"]
    table += [
        row(
            [
                str(r.iteration),
                r.goal,
                str(r.attempt),
                r.outcome,
                r.category,
                r.commit,
                r.coverage,
                r.at,
            ]
        )
        for r in rows
    ]
    return head + "\n".join(table) + "\n"


# --- failures ---


@dataclass(frozen=True)
class Failure:
    """One failed attempt."""

    number: int
    goal: str
    attempt: int
    iteration: int
    category: str
    what: str
    diagnosis: str


def parse_failures(text: str, *, name: str = FAILURES_NAME) -> tuple[str, tuple[Failure, ...]]:
    """The text before the entries and the entries."""
    parts = sections(text)
    head = _head(parts)
    found = []
    for part in parts:
        if part.heading is None:
            continue
        match = re.fullmatch(r"F(\d+): (G\d+) attempt (\d+), iteration (\d+)", part.heading)
        if match is None:
            raise SpineFileError(
                name,
                part.first_line,
                "a failure's heading reads `## F<n>: G<n> attempt <n>, iteration <n>`",
            )
        fields, diagnosis = _fields_and_fence(body_lines(part), name)
        for key in ("Category", "What failed"):
            if key not in fields:
                raise SpineFileError(name, part.first_line, f"failure lacks `- {key}:`")
        number, goal, attempt, iteration = match.groups()
        found.append(
            Failure(
                int(number),
                goal,
                int(attempt),
                int(iteration),
                fields["Category"],
                fields["What failed"],
                diagnosis,
            )
        )
    return head, tuple(found)


def _head(parts: list[Section]) -> str:
    """The text before the entries, ending in one newline (entries start with a blank)."""
    return "".join(p.text for p in parts if p.heading is None).rstrip("\n") + "\n"


def _fields_and_fence(lines: list[tuple[int, str]], name: str) -> tuple[dict[str, str], str]:
    fields: dict[str, str] = {}
    diagnosis = ""
    index = 0
    while index < len(lines):
        number, line = lines[index]
        item = re.fullmatch(r"- ([A-Za-z ]+): (.*)", line)
        if not line.strip() or line.strip() == "Diagnosis:":
            index += 1
        elif item:
            fields[item.group(1)] = item.group(2)
            index += 1
        else:
            block = unfence(lines, index)
            if block is None:
                raise SpineFileError(name, number, "expected `- Name: value` or a fenced block")
            diagnosis, index = block
    return fields, diagnosis


def render_failure(failure: Failure) -> str:
    """One failure entry."""
    return (
        f"\n## F{failure.number}: {failure.goal} attempt {failure.attempt},"
        f" iteration {failure.iteration}\n\n"
        f"- Category: {failure.category}\n- What failed: {' '.join(failure.what.split())}\n\n"
        f"Diagnosis:\n\n{fenced(failure.diagnosis)}"
    )


def render_failures(head: str, entries: tuple[Failure, ...]) -> str:
    """failures.md's text."""
    return head.rstrip("\n") + "\n" + "".join(render_failure(f) for f in entries)


# --- learned rules ---


@dataclass(frozen=True)
class Rule:
    """A rule learned from a failure that happened twice, or that a self-heal fixed:
    ``iteration`` learned it, ``goal``'s attempt ``attempt`` taught it (0: not recorded,
    as in a rule a person wrote without one)."""

    number: int
    title: str
    iteration: int
    goal: str
    category: str
    pattern: str
    rule: str
    attempt: int = 0


def parse_rules(text: str, *, name: str = RULES_NAME) -> tuple[str, tuple[Rule, ...]]:
    """The text before the rules and the rules."""
    parts = sections(text)
    head = _head(parts)
    found = []
    for part in parts:
        if part.heading is None:
            continue
        match = re.fullmatch(r"R(\d+): (.+)", part.heading)
        if match is None:
            raise SpineFileError(name, part.first_line, "a rule's heading reads `## R<n>: title`")
        fields, _ = _fields_and_fence(body_lines(part), name)
        source = re.fullmatch(
            r"iteration (\d+), goal (G\d+)(?:,? attempt (\d+))?", fields.get("Source", "")
        )
        if source is None:
            raise SpineFileError(
                name,
                part.first_line,
                "a rule has `- Source: iteration <n>, goal G<n>, attempt <n>`",
            )
        for key in ("Category", "Pattern", "Rule"):
            if key not in fields:
                raise SpineFileError(name, part.first_line, f"rule lacks `- {key}:`")
        found.append(
            Rule(
                int(match.group(1)),
                match.group(2),
                int(source.group(1)),
                source.group(2),
                fields["Category"],
                fields["Pattern"],
                fields["Rule"],
                int(source.group(3) or 0),
            )
        )
    return head, tuple(found)


def render_rule(rule: Rule) -> str:
    """One rule entry."""
    return (
        f"\n## R{rule.number}: {' '.join(rule.title.split())}\n\n"
        f"- Source: iteration {rule.iteration}, goal {rule.goal}"
        f"{f', attempt {rule.attempt}' if rule.attempt else ''}\n"
        f"- Category: {rule.category}\n"
        f"- Pattern: {' '.join(rule.pattern.split())}\n"
        f"- Rule: {' '.join(rule.rule.split())}\n"
    )


def render_rules(head: str, entries: tuple[Rule, ...]) -> str:
    """learned-rules.md's text."""
    return head.rstrip("\n") + "\n" + "".join(render_rule(r) for r in entries)


# --- the baseline figures ---


@dataclass(frozen=True)
class GateResult:
    """How one gate (or the acceptance command) ended on one tree."""

    name: str
    command: str
    passed: bool
    seconds: float = 0.0


@dataclass(frozen=True)
class Baseline:
    """What a goal started from, so that a resumed run knows what to put back."""

    goal: str = ""
    commit: str = ""
    at: str = ""
    coverage: float | None = None
    untracked: tuple[str, ...] = ()
    gates: tuple[GateResult, ...] = ()


def render_baseline(base: Baseline) -> str:
    """baseline.md's text."""
    if not base.commit:
        return BASELINE_HEAD + "\nNot measured yet: `relay loop run` records it before each goal.\n"
    coverage = "(not measured)" if base.coverage is None else f"{base.coverage:.2f}%"
    untracked = ", ".join(code_span(p) for p in base.untracked) or "(none)"
    lines = [
        BASELINE_HEAD,
        f"- Goal: {base.goal}",
        f"- Commit: {base.commit}",
        f"- Recorded: {base.at}",
        f"- Line coverage: {coverage}",
        f"- Untracked at start: {untracked}",
        "",
        row(["gate", "command", "result", "seconds"]),
        "| --- | --- | --- | --- |",
        *(
            row([g.name, code_span(g.command), "pass" if g.passed else "fail", f"{g.seconds:.1f}"])
            for g in base.gates
        ),
    ]
    return "\n".join(lines) + "\n"


def parse_baseline(text: str, *, name: str = BASELINE_NAME) -> Baseline:
    """baseline.md as a model (an unmeasured baseline is the empty one)."""
    fields: dict[str, str] = {}
    gates = []
    for number, line in enumerate(text.splitlines(), start=1):
        item = re.fullmatch(r"- ([A-Za-z ]+): (.*)", line)
        cells = split_row(line)
        if item:
            fields[item.group(1)] = item.group(2).strip()
        elif cells and not is_rule_row(cells) and cells[0] != "gate":
            command = parse_code_span(cells[1]) if len(cells) == 4 else None
            if command is None or cells[2] not in ("pass", "fail"):
                raise SpineFileError(name, number, "a gate row reads | name | `cmd` | pass |")
            gates.append(GateResult(cells[0], command, cells[2] == "pass", float(cells[3])))
    if "Commit" not in fields:
        return Baseline()
    coverage = fields.get("Line coverage", "")
    spans = re.findall(r"`+[^`]+`+", fields.get("Untracked at start", ""))
    return Baseline(
        goal=fields.get("Goal", ""),
        commit=fields["Commit"],
        at=fields.get("Recorded", ""),
        coverage=float(coverage.rstrip("%")) if re.fullmatch(r"[\d.]+%", coverage) else None,
        untracked=tuple(p for s in spans if (p := parse_code_span(s)) is not None),
        gates=tuple(gates),
    )


# --- handover.md ---


def handover_entries(text: str) -> list[str]:
    """The handover's entries (each ``## `` section's text), oldest first."""
    return [p.text.strip("\n") for p in sections(text) if p.heading is not None]


def goal_entry(*, goal: str, title: str, what: str, when: str) -> str:
    """What a kept goal appends to handover.md: its 2–3 lines of what changed and why."""
    return f"\n## {goal} {' '.join(title.split())} ({when})\n\n{what.strip()}\n"


HANDOVER_DIAGNOSIS_LINES = 12


def failed_entry(failure: Failure, *, tried: str, hypothesis: str, when: str) -> str:
    """What a failed attempt appends to handover.md: what failed, the diagnosis (its first
    lines, fenced: it is data), what the maker said it tried, and the next hypothesis."""
    lines = failure.diagnosis.strip("\n").splitlines()
    shown = lines[:HANDOVER_DIAGNOSIS_LINES]
    if len(lines) > len(shown):  # the lines that name a finding say the most
        findings = [line for line in lines if is_finding(line)]
        shown = (findings or lines)[:HANDOVER_DIAGNOSIS_LINES]
        shown.append(
            f"... ({len(lines) - len(shown)} more lines in {FAILURES_NAME}, F{failure.number})"
        )
    body = [
        f"- What failed: {' '.join(failure.what.split())}",
        f"- Category: {failure.category} (iteration {failure.iteration},"
        f" F{failure.number} in {FAILURES_NAME})",
        "",
        "Diagnosis:",
        "",
        fenced("\n".join(shown)).rstrip("\n"),
    ]
    if tried.strip():
        body += ["", "What the maker said it changed and why:", "", fenced(tried).rstrip("\n")]
    body += ["", f"Next hypothesis: {hypothesis}"]
    title = f"{failure.goal} attempt {failure.attempt} failed ({failure.category})"
    return f"\n## {title} ({when})\n\n" + "\n".join(body) + "\n"


def kept_entry(
    *,
    goal: str,
    title: str,
    accept: str,
    attempt: int,
    first: int,
    iteration: int,
    gates: str,
    coverage: str,
    metric: str = "",
    explanation: str,
    when: str,
) -> str:
    """What a kept goal appends to handover.md: the true attempt count, the gate, coverage
    and metric deltas, and the maker's own account of what changed and why."""
    this_pass = attempt - first + 1
    count = f"attempt {attempt}" + (f" ({this_pass} in this pass)" if this_pass != attempt else "")
    lines = [
        f"Kept on {count} in iteration {iteration}"
        + (f"; `{accept}` now passes." if accept else "."),
        f"- Gates: {gates}",
        f"- Line coverage: {coverage}",
        *([f"- Metric: {metric}"] if metric else []),
        "",
        "What changed and why (the maker's words):",
        "",
        fenced(explanation).rstrip("\n"),
    ]
    return f"\n## {goal} {' '.join(title.split())} ({when})\n\n" + "\n".join(lines) + "\n"
