"""Guarded self-revision and security-critical goals, decided purely.

Ground rules: ``## What works here`` is the only part of LOOP.md the loop may change, and
only through the checker panel, on relay's own path; a maker's change to LOOP.md, that
section included, is reverted whatever else it does (every later brief carries the
file, so a maker that wrote a rule there would brief the makers and checkers after it).
A learned rule is proposed there once it has prevented a repeat (a later goal was kept
with the rule in its brief and without failing in the rule's category again) and the
goal that taught it ended done: a goal that ended blocked or is still open has not
shown that what it taught works here. A security-critical goal needs every checker to
approve and a majority of the red team to find no breach, and leaves an audit artifact
saying what was checked, by whom, and how each answered.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from relay.loop.classify import Review, Verdict
from relay.loop.contract import is_within
from relay.loop.markdown import sections
from relay.loop.records import Failure, Iteration, Rule

LOOP_FILE = "docs/loop/LOOP.md"
WORKS_HERE = "What works here"
AUDITS = "docs/loop/audits"


def loop_md_touched(before: str | None, after: str | None) -> str | None:
    """Why a maker's change to LOOP.md must be reverted, or None when it did not change
    it: a maker never writes it, ``## What works here`` included (rules get there only
    from goals that ended done, through the checker panel: ``outside_works_here``)."""
    if before == after:
        return None
    outside = outside_works_here(before, after)
    if outside is not None:
        return outside
    return (
        f"`{LOOP_FILE}`'s `## {WORKS_HERE}` is written by relay alone, from goals that ended"
        " done and through the checker panel; a maker never writes it"
    )


def outside_works_here(before: str | None, after: str | None) -> str | None:
    """Why a change to LOOP.md reaches past ``## What works here`` (the only section
    relay's own self-revision may change), or None."""
    if before == after:
        return None
    if before is None or after is None:
        return f"`{LOOP_FILE}` was {'created' if before is None else 'deleted'}"
    old = {p.heading: p.text for p in sections(before)}
    new = {p.heading: p.text for p in sections(after)}
    changed = [
        h for h in dict.fromkeys([*old, *new]) if h != WORKS_HERE and old.get(h) != new.get(h)
    ]
    if not changed:
        return None
    names = ", ".join(f"`## {h}`" if h else "the text before the first section" for h in changed)
    return f"`{LOOP_FILE}` changed outside `## {WORKS_HERE}` ({names}); only that section may"


# --- self-revision ---


@dataclass(frozen=True)
class Proposal:
    """A learned rule proposed for ``## What works here``, citing its iterations."""

    rule: Rule
    taught: tuple[int, ...]  # the iterations whose failures taught it
    held: int  # the later iteration that passed with it in the brief

    def tag(self) -> str:
        """What marks the entry as this rule's, so that it is proposed once."""
        return f"[R{self.rule.number}]"

    def entry(self) -> str:
        taught = ", ".join(str(i) for i in self.taught)
        source = self.rule.goal + (f" attempt {self.rule.attempt}" if self.rule.attempt else "")
        return (
            f"- {' '.join(self.rule.rule.split())} {self.tag()} (taught by {source},"
            f" iterations {taught}; held in iteration {self.held})"
        )


def proposals(
    rules: Sequence[Rule],
    log: Sequence[Iteration],
    failures: Sequence[Failure],
    *,
    works_here: str,
    done: Collection[str],
) -> list[Proposal]:
    """Each rule that has prevented a repeat and is not yet in ``works_here``: a goal kept
    after the rule was learned, none of whose attempts since failed in its category; and
    only a rule whose teaching goal is in ``done`` (it ended done)."""
    found = []
    for rule in rules:
        probe = Proposal(rule, (), 0)
        if probe.tag() in works_here or rule.goal not in done:
            continue
        taught = tuple(sorted(f.iteration for f in failures if f.category == rule.category))
        for entry in log:
            if entry.outcome != "kept" or entry.iteration <= rule.iteration:
                continue
            repeats = [
                f
                for f in failures
                if f.goal == entry.goal
                and f.category == rule.category
                and rule.iteration < f.iteration < entry.iteration
            ]
            if not repeats:
                found.append(Proposal(rule, taught, entry.iteration))
                break
    return found


def with_entries(loop_text: str, entries: Sequence[str]) -> str:
    """LOOP.md with ``entries`` appended to ``## What works here`` (the section added at the
    end when absent); every other byte kept."""
    parts = sections(loop_text)
    out = []
    done = False
    for part in parts:
        if not done and (part.heading or "").lower() == WORKS_HERE.lower():
            body = part.text.rstrip("\n")
            out.append(body + "\n" + "".join(f"{e}\n" for e in entries))
            tail = part.text[len(part.text.rstrip("\n")) :]
            if len(tail) > 1:
                out.append(tail[1:])
            done = True
        else:
            out.append(part.text)
    text = "".join(out)
    if not done:
        text = text.rstrip("\n") + f"\n\n## {WORKS_HERE}\n\n" + "".join(f"{e}\n" for e in entries)
    return text


# --- security-critical goals ---


def is_security_critical(security: bool, changes: Sequence[str], critical: Sequence[str]) -> bool:
    """Whether a goal needs the security panel: marked so, or touching a listed path."""
    return security or any(is_within(c, p) for c in changes for p in critical)


@dataclass(frozen=True)
class Ballot:
    """One voice of the security panel: who, as what, and what they answered."""

    who: str
    role: str  # checker or red team
    review: Review


@dataclass(frozen=True)
class SecurityVerdict:
    """Whether the security panel lets the change in, and why not."""

    passed: bool
    why: str


def security_verdict(ballots: Sequence[Ballot]) -> SecurityVerdict:
    """Every checker approves, there is a red team, and a strict majority of it finds no
    breach (a red-team ``block`` is a breach found)."""
    checkers = [b for b in ballots if b.role == "checker"]
    team = [b for b in ballots if b.role == "red team"]
    if not checkers:
        return SecurityVerdict(False, "a security-critical goal needs every checker (--checker)")
    blocked = [b.who for b in checkers if b.review.verdict is not Verdict.APPROVE]
    if blocked:
        return SecurityVerdict(False, f"{', '.join(blocked)} did not approve")
    if not team:
        return SecurityVerdict(False, "a security-critical goal needs a red team (--red-team)")
    clear = sum(b.review.verdict is Verdict.APPROVE for b in team)
    if clear * 2 <= len(team):
        breaches = [b.who for b in team if b.review.verdict is not Verdict.APPROVE]
        return SecurityVerdict(
            False,
            f"the red team found a breach ({', '.join(breaches)}; {clear} of {len(team)} clear)",
        )
    return SecurityVerdict(True, f"every checker approved; {clear} of {len(team)} red team clear")


def audit_path(goal: str) -> str:
    return f"{AUDITS}/{goal}.md"


def render_audit(
    *,
    goal: str,
    title: str,
    invariant: str,
    changes: Sequence[str],
    gates: Sequence[str],
    ballots: Sequence[Ballot],
    verdict: SecurityVerdict,
    when: str,
) -> str:
    """The audit artifact committed with a security-critical change."""
    lines = [
        f"# Audit: {goal} {title}",
        "",
        f"Recorded {when} by relay loop. Verdict: {'passed' if verdict.passed else 'blocked'}"
        f" ({verdict.why}).",
        "",
        "## What was checked",
        "",
        f"- Invariant: {invariant}",
        *(f"- Changed: `{c}`" for c in changes),
        "",
        "## Evidence (the gates, re-run by relay)",
        "",
        *(gates or ["- (none)"]),
        "",
        "## Verdicts",
        "",
        "| who | role | verdict | findings |",
        "| --- | --- | --- | --- |",
    ]
    for b in ballots:
        said = b.review.verdict.value if b.review.verdict else f"discarded: {b.review.discarded}"
        findings = "; ".join(b.review.findings).replace("|", "\\|") or "-"
        lines.append(f"| {b.who} | {b.role} | {said} | {findings} |")
    return "\n".join(lines) + "\n"
