"""Frozen results returned by CLI verbs, rendered for people or as JSON in one place.

Under ``--json`` every verb prints one envelope, success or failure alike, so a script
reads one shape whatever happened::

    {"version": 1, "command": "status", "ok": true, "exit_code": 0,
     "data": {...}, "errors": [{"code": "config", "message": "...", "hint": "..."}]}

``version`` rises only when a key of the envelope changes meaning; the keys of ``data``
are each verb's own, pinned by the contract test.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from relay.errors import RelayError

ENVELOPE_VERSION = 1
# What relay's own lines hold beyond printable ASCII: newlines and tabs (kept as they are),
# the dash between an error and its hint, arrows and the times sign; none is a control or an
# invisible character
_OWN_LAYOUT = str.maketrans("", "", "\n\t\u2014\u2192\u00d7")


@dataclass(frozen=True)
class Output:
    """What a verb produced: lines for people, data for `--json`, and an exit status."""

    lines: tuple[str, ...] = ()
    data: dict[str, Any] = field(default_factory=dict)
    exit_status: int = 0
    # the envelope already went out as the verb ran (`relay hub --json` says its URL the
    # moment it serves): nothing more is printed under --json
    announced: bool = False


def envelope(
    command: str, *, data: dict[str, Any], exit_code: int, errors: list[dict[str, Any]]
) -> dict[str, Any]:
    """The one JSON shape every verb prints under ``--json``."""
    return {
        "version": ENVELOPE_VERSION,
        "command": command,
        "ok": exit_code == 0 and not errors,
        "exit_code": exit_code,
        "data": data,
        "errors": errors,
    }


def error_entry(err: RelayError, message: str, hint: str | None) -> dict[str, Any]:
    """An error as the envelope lists it: its stable code, the message and the hint (both
    already redacted: they may quote paths and command output)."""
    return {"code": err.code, "message": message, "hint": hint}


def for_people(text: str) -> str:
    """``text`` as a terminal may show it: every control character but the newlines and
    tabs of relay's own layout written out (``\\x1b``), every bidirectional or zero-width
    one as ``[U+XXXX]``. A job title, a comment or a step's output comes from outside:
    it may not recolour, retitle or clear the terminal, nor read backwards. The one door
    every line meant for a person goes through (JSON escapes them itself). A line of
    printable ASCII, with relay's own layout and punctuation (the dash between an error and
    its hint), has none of them, and is printed without loading the protocol."""
    plain = text.translate(_OWN_LAYOUT)
    if plain.isascii() and plain.isprintable():
        return text
    from relay.protocol.wire import show_controls

    return show_controls(text, keep="\n\t")


def say(text: str, *, stream: TextIO | None = None) -> None:
    """Print one line for a person on ``stream`` (stderr when None), through
    :func:`for_people`, flushed; nothing where there is no such stream (pythonw)."""
    out = stream if stream is not None else sys.stderr
    if out is None:
        return
    print(for_people(text), file=out, flush=True)


def render(result: Output, *, json_output: bool, command: str = "") -> None:
    """Print a result: its envelope as one JSON document, or its lines for a person.

    Under ``pythonw`` (a scheduled pass on Windows) there is no stdout at all.
    """
    if json_output:
        if result.announced:
            return
        document = envelope(command, data=result.data, exit_code=result.exit_status, errors=[])
        write_json(document)
        return
    if sys.stdout is None:
        return
    for line in result.lines:
        print(for_people(line))
    sys.stdout.flush()


def write_json(document: dict[str, Any]) -> None:
    """One JSON document on stdout (nothing where there is no stdout)."""
    if sys.stdout is None:
        return
    json.dump(document, sys.stdout, indent=2, sort_keys=True, default=str)
    sys.stdout.write("\n")
    sys.stdout.flush()
