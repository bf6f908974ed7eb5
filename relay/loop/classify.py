"""What failed and into which category; whether a maker's failure was only transient; and
what a checker said, read as untrusted data.

Ground rules: everything a maker, a gate or a checker prints is data. A review is trusted
only as a JSON verdict on its last line, and not at all when it carries text shaped like
an instruction to whoever reads it (a reader that obeys such text is the attack).
"""

from __future__ import annotations

import enum
import json
import re
from dataclasses import dataclass

from relay.loop.patterns import later

DIAGNOSIS_LINES = 40
DIAGNOSIS_CHARS = 4000
TRANSIENT_EXIT = 75  # EX_TEMPFAIL
_IMPORT = re.compile(
    r"ModuleNotFoundError|ImportError|cannot import name|No module named", re.IGNORECASE
)
_FINDING = later(
    r"^[A-Z]{1,4}\d{2,4}\b|^\S+:\d+(:\d+)?[: ]|^\s*--> |\b(error|Error|FAILED|failed)\b|^E\s{2,}"
)
_INSTRUCTION = later(
    r"^\s*(system|assistant|developer)\s*:"
    r"|ignore\s+(all\s+|any\s+)?(the\s+)?(previous|prior|above|earlier)\s+(instructions|prompts?)"
    r"|disregard\s+(all\s+|any\s+)?(the\s+)?(previous|prior|above|earlier)"
    r"|\byou\s+must\s+(now\s+)?(run|execute|delete|remove|push|commit|install|curl|approve)\b"
    r"|<\|im_start\|>|\bnew\s+instructions\s*:",
    re.IGNORECASE | re.MULTILINE,
)


class Category(enum.StrEnum):
    """What kind of failure an attempt had; the values are the words in failures.md."""

    LINT = "lint/format"
    TYPE = "type"
    TEST = "test"
    IMPORT = "import"
    PROTECTED = "protected path touched"
    COVERAGE = "coverage drop"
    CHECKER = "checker block"
    CRASH = "runtime crash"
    TIMEOUT = "timeout"
    METRIC = "no improvement"
    VERIFY = "remote verification"
    UNEXPLAINED = "unexplained"  # a passing change without the maker's what-changed-and-why


_KINDS = (
    (Category.LINT, ("ruff", "lint", "format", "flake8", "eslint", "prettier", "black", "clippy")),
    (Category.TYPE, ("mypy", "pyright", "tsc", "typecheck", "type")),
)


def classify_gate(*, name: str, command: str, output: str, timed_out: bool) -> Category:
    """The category of a failed gate (or acceptance command), from how it ended, its
    output and the kind of tool it is."""
    if timed_out:
        return Category.TIMEOUT
    if _IMPORT.search(output):
        return Category.IMPORT
    words = f"{name} {command}".lower()
    for category, marks in _KINDS:
        if any(mark in words for mark in marks):
            return category
    return Category.TEST


def is_transient(*, exit_code: int | None) -> bool:
    """Whether a plain command's failure is an interruption: it exited 75. What it printed
    never decides it (a maker working on a rate limiter prints "rate limit"); a built-in
    agent's own signals are read by its adapter (``relay.loop.agents``)."""
    return exit_code == TRANSIENT_EXIT


def diagnosis(output: str) -> str:
    """The part of a failure's output a maker needs, bounded: the head, the tail, and
    between them the lines that name a finding (a rule code, a path:line, an error)."""
    lines = [line.rstrip() for line in output.strip("\n").splitlines()]
    if len(lines) > DIAGNOSIS_LINES:
        edge = DIAGNOSIS_LINES // 4
        middle = lines[edge:-edge]
        keys = [line for line in middle if _FINDING().search(line)][: DIAGNOSIS_LINES - 2 * edge]
        cut = len(middle) - len(keys)
        lines = [*lines[:edge], *keys, f"... ({cut} lines cut) ...", *lines[-edge:]]
    text = "\n".join(lines)
    return text if len(text) <= DIAGNOSIS_CHARS else text[:DIAGNOSIS_CHARS] + "\n... (cut)"


def is_finding(line: str) -> bool:
    """Whether an output line names a finding: a rule code, a path:line, an error."""
    return bool(_FINDING().search(line))


def instruction_shaped(text: str, *, quoted: str = "") -> str | None:
    """The first instruction-shaped phrase in ``text``, or None. A phrase on a line that
    ``quoted`` (the diff under review) holds too is the reviewer quoting the change, not an
    instruction: a diff that adds ``System:`` to a prompt template may be discussed."""
    said = {_bare(line) for line in quoted.splitlines()} - {""}
    diff = _squash(" ".join(said))
    for match in _INSTRUCTION().finditer(text):
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.end())
        line = _bare(text[start : len(text) if end < 0 else end])
        if said and any(line in q or q in line for q in said if len(q) >= 8 or q == line):
            continue
        # part of a line quoted: the phrase and what follows it, to the closing quote or
        # an ellipsis, is the diff's own text
        rest = text[match.start() : len(text) if end < 0 else end]
        fragment = _squash(_QUOTE_END().split(rest, maxsplit=1)[0])
        if diff and len(fragment) >= 8 and fragment in diff:
            continue
        return match.group(0).strip()
    return None


_QUOTE_END = later(r"[\"'`\u201d\u2019\u2026]|\.\.\.")


def _squash(text: str) -> str:
    """Text compared as words: lower case, one space between words."""
    return " ".join(text.lower().split())


def _bare(line: str) -> str:
    """A line without what quoting adds: a diff's +/- mark, a markdown quote, backticks."""
    return line.strip().lstrip("+-> ").strip().strip("`").strip()


class Verdict(enum.StrEnum):
    APPROVE = "approve"
    BLOCK = "block"


@dataclass(frozen=True)
class Review:
    """What a checker's output amounts to: a verdict and findings, or why it was discarded."""

    verdict: Verdict | None
    findings: tuple[str, ...] = ()
    discarded: str | None = None


def parse_review(output: str, *, quoted: str = "") -> Review:
    """A checker's output as a review: the JSON verdict on its last line; discarded when
    there is none or when the output carries instruction-shaped text that is not quoted
    from ``quoted`` (the diff it reviews)."""
    shaped = instruction_shaped(output, quoted=quoted)
    if shaped is not None:
        return Review(None, discarded=f"instruction-shaped text ({shaped!r})")
    lines = [line for line in output.strip().splitlines() if line.strip()]
    if not lines:
        return Review(None, discarded="no output, so no verdict")
    try:
        doc = json.loads(lines[-1])
    except ValueError:
        return Review(None, discarded="the last line is not a JSON verdict")
    if not isinstance(doc, dict) or doc.get("verdict") not in ("approve", "block"):
        return Review(None, discarded='the last line has no "verdict" of approve or block')
    findings = doc.get("findings", [])
    if not isinstance(findings, list):
        return Review(None, discarded='"findings" is not a list')
    return Review(Verdict(doc["verdict"]), tuple(str(f) for f in findings))
