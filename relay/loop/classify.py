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

DIAGNOSIS_LINES = 40
DIAGNOSIS_CHARS = 4000
TRANSIENT_EXIT = 75  # EX_TEMPFAIL
# a status code counts only where it is said to be one: "HTTP 529", "status 503",
# "529 Overloaded", "Error code: 429", "code": 529 -- never a line number or a count
_CODE = r"(?:429|503|529)"
_TRANSIENT = re.compile(
    rf"\b(?:https?(?:/[\d.]+)?|status(?:[ _-]?code)?|error[ _-]?code|code|response)"
    rf"[\"']?\s*[:=]?\s*\(?{_CODE}\b"
    rf"|\b{_CODE}\s*[:-]?\s*(?:overloaded|too many requests|service unavailable|rate)"
    rf"|\berror\s*:?\s*{_CODE}\b"
    r"|overloaded|rate[ _-]?limit|too many requests|temporarily unavailable",
    re.IGNORECASE,
)
_IMPORT = re.compile(
    r"ModuleNotFoundError|ImportError|cannot import name|No module named", re.IGNORECASE
)
_FINDING = re.compile(
    r"^[A-Z]{1,4}\d{2,4}\b|^\S+:\d+(:\d+)?[: ]|^\s*--> |\b(error|Error|FAILED|failed)\b|^E\s{2,}"
)
_INSTRUCTION = re.compile(
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


def is_transient(*, exit_code: int | None, output: str) -> bool:
    """Whether a maker's failure is an interruption, not a failure: it exited 75, or it
    failed saying 429, 503 or 529 as an HTTP status, overloaded or rate limit."""
    if exit_code == 0:
        return False
    return exit_code == TRANSIENT_EXIT or bool(_TRANSIENT.search(output))


def diagnosis(output: str) -> str:
    """The part of a failure's output a maker needs, bounded: the head, the tail, and
    between them the lines that name a finding (a rule code, a path:line, an error)."""
    lines = [line.rstrip() for line in output.strip("\n").splitlines()]
    if len(lines) > DIAGNOSIS_LINES:
        edge = DIAGNOSIS_LINES // 4
        middle = lines[edge:-edge]
        keys = [line for line in middle if _FINDING.search(line)][: DIAGNOSIS_LINES - 2 * edge]
        cut = len(middle) - len(keys)
        lines = [*lines[:edge], *keys, f"... ({cut} lines cut) ...", *lines[-edge:]]
    text = "\n".join(lines)
    return text if len(text) <= DIAGNOSIS_CHARS else text[:DIAGNOSIS_CHARS] + "\n... (cut)"


def is_finding(line: str) -> bool:
    """Whether an output line names a finding: a rule code, a path:line, an error."""
    return bool(_FINDING.search(line))


def instruction_shaped(text: str) -> str | None:
    """The first instruction-shaped phrase in ``text``, or None."""
    match = _INSTRUCTION.search(text)
    return None if match is None else match.group(0).strip()


class Verdict(enum.StrEnum):
    APPROVE = "approve"
    BLOCK = "block"


@dataclass(frozen=True)
class Review:
    """What a checker's output amounts to: a verdict and findings, or why it was discarded."""

    verdict: Verdict | None
    findings: tuple[str, ...] = ()
    discarded: str | None = None


def parse_review(output: str) -> Review:
    """A checker's output as a review: the JSON verdict on its last line; discarded when
    there is none or when the output carries instruction-shaped text."""
    shaped = instruction_shaped(output)
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
