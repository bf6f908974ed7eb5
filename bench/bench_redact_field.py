"""Recall and false alarms on the field's test data, written anew (``redact_field_corpus``):
every self-identifying format of the public rule sets in every kind of line, webhook URLs,
connection strings, named values in every syntax, this node's secret in its transforms,
and lines from real code and logs that hold none.

Each case is redacted on its own, as ``relay redact`` would a log holding it; a secret is
caught when no part of it survives: no run of ``LEAK`` characters of it (of its text, or of
the part of an encoding that only it makes) is in the output, but for runs the line holds
outside the secret too (a partial leak is a miss). A clean line is a false alarm when it
comes out changed at all.

Run: ``python -m bench redact_field`` (``--misses`` lists every miss and false alarm); it
exits non-zero when a goal is missed.
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict

from bench.redact_field_corpus import OWN_SECRET, clean_lines, secret_cases
from relay.redact import MachineFacts, Redactor

FACTS = MachineFacts(
    user="runner", home="/home/runner", hosts=("fv-az123-456",), secrets=(OWN_SECRET,)
)
RECALL_GOAL = 0.99
FALSE_ALARM_GOAL = 10
# The shortest part of a secret that counts as a leak when it survives.
LEAK = 4


def leaked(secret: str, text: str, out: str) -> list[str]:
    """The runs of ``LEAK`` characters of ``secret`` that survive in ``out`` (or in it with
    its line breaks out, for a secret that was wrapped), less those that the line holds
    outside the secret or that a placeholder spells (``[redacted:secret]`` has ``secr``)."""
    flat_text = text.replace("\n", "")
    if secret in text:
        context = text.replace(secret, "\0")
    elif secret in flat_text:  # wrapped over lines
        context = flat_text.replace(secret, "\0")
    else:  # not written in one piece (a dump's groups): every run of it counts
        context = ""
    context += " [redacted:] <email> <ip> <host> <user> <home>"
    flat = out.replace("\n", "")
    runs = {secret[i : i + LEAK] for i in range(len(secret) - LEAK + 1)}
    kept = [r for r in runs if (r in out or r in flat) and r not in context]
    return [r for r in kept if not _in_a_placeholder(r, out)]


def _in_a_placeholder(run: str, out: str) -> bool:
    """Every place ``run`` occurs in ``out`` is inside a ``[redacted:…]`` stamp."""
    at = out.find(run)
    while at >= 0:
        opened = out.rfind("[redacted:", 0, at + 1)
        closed = out.find("]", opened) if opened >= 0 else -1
        if not (opened >= 0 and at + len(run) <= closed + 1):
            return False
        at = out.find(run, at + 1)
    return True


def measure() -> dict[str, object]:
    """Redact every case and clean line; count by kind and by family."""
    redactor = Redactor(FACTS, max_redacted_share=1.0)
    caught: Counter[str] = Counter()
    total: Counter[str] = Counter()
    missed: dict[str, list[str]] = defaultdict(list)
    for case in secret_cases():
        out = redactor.redact(case.text + "\n")
        total[case.kind] += 1
        parts = [run for secret in case.secrets for run in leaked(secret, case.text, out)]
        if parts:
            missed[case.kind].append(f"{case.family}: {case.text[:160]} (kept {parts[:3]})")
        else:
            caught[case.kind] += 1
    alarms: Counter[str] = Counter()
    lines: Counter[str] = Counter()
    flagged: list[str] = []
    for clean in clean_lines():
        lines[clean.family] += 1  # each line once: ``clean_lines`` draws no line twice
        out = redactor.redact(clean.text + "\n")
        if out != clean.text + "\n":
            alarms[clean.family] += 1
            flagged.append(f"{clean.family}: {clean.text[:120]} -> {out.strip()[:120]}")
    found, cases = sum(caught.values()), sum(total.values())
    return {
        "recall": round(found / cases, 4),
        "secrets": cases,
        "caught": found,
        "recall_by_kind": {
            k: f"{caught[k]}/{total[k]} ({caught[k] / total[k]:.1%})" for k in sorted(total)
        },
        "clean_lines": sum(lines.values()),
        "false_alarms": sum(alarms.values()),
        "false_alarms_by_family": {f: f"{alarms[f]}/{lines[f]}" for f in sorted(lines)},
        "_missed": dict(missed),
        "_flagged": flagged,
    }


def goals_met(figures: dict[str, object]) -> tuple[bool, bool]:
    """Whether recall reaches ``RECALL_GOAL`` and false alarms stay within the goal."""
    recall = float(figures["recall"])  # type: ignore[arg-type]
    alarms = int(figures["false_alarms"])  # type: ignore[call-overload]
    return recall >= RECALL_GOAL, alarms <= FALSE_ALARM_GOAL


def main() -> int:
    """Print the figures, the verdicts, and (with ``--misses``) every miss; 1 when a goal
    is missed (recall under ``RECALL_GOAL`` or more than ``FALSE_ALARM_GOAL`` alarms)."""
    figures = measure()
    missed = figures.pop("_missed")
    flagged = figures.pop("_flagged")
    print("bench_redact_field:", json.dumps(figures, indent=2))
    recall_met, alarms_met = goals_met(figures)
    print(f"  {'met' if recall_met else 'MISSED'}: recall at least {RECALL_GOAL:.0%}")
    print(f"  {'met' if alarms_met else 'MISSED'}: at most {FALSE_ALARM_GOAL} false alarms")
    if "--misses" in sys.argv:
        print("misses and false alarms:")
        for kind, items in missed.items():  # type: ignore[attr-defined]
            for item in items:
                print(f"MISS {kind} {item}")
        for item in flagged:  # type: ignore[attr-defined]
            print(f"FALSE {item}")
    return 0 if recall_met and alarms_met else 1


if __name__ == "__main__":
    sys.exit(main())
