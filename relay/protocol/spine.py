"""The spine `relay init` writes into a repository, and the generated part of PROTOCOL.md.

These strings are the one source of truth: ``docs/loop/templates/`` in the relay project
holds copies rendered by :func:`render_spine` from :data:`EXAMPLE_MASTER`, and a test
fails when the copies go stale. The same goes for the baton diagram in PROTOCOL.md,
which :func:`with_generated` rewrites between its markers.
"""

from __future__ import annotations

from relay.protocol.baton import TABLE, State, mermaid
from relay.protocol.master import Master, render_master

EXAMPLE_MASTER = Master(repository="OWNER/NAME")
BEGIN = "<!-- generated from relay/protocol/baton.py: begin -->"
END = "<!-- generated from relay/protocol/baton.py: end -->"

LOOP_HEAD = """\
# Loop

How work on this repository moves between people, agents and machines. The goals are in
[GOALS.md](GOALS.md), the work in flight on [BOARD.md](BOARD.md), and what each finished
piece of work left behind in [handover.md](handover.md).

"""

GOALS = """\
# Goals

What this repository is for, and how we will know it is done. Keep it short; each goal is
one line that someone could check.

- (goal) — (how we check it)
"""

BOARD = """\
# Board

Work in flight. Relay jobs are issues labelled with one of `awaiting:worker`, `working`
or `awaiting:controller`; `relay status` lists them with whose turn it is.

| job | what | who | state |
| --- | --- | --- | --- |
"""

HANDOVER = """\
# Handover

What finished work left behind: one entry per resolved job, newest last, written by
`relay resolve` from its closure summary.
"""


def render_spine(master: Master) -> dict[str, str]:
    """The files `relay init` writes under ``docs/loop/``, keyed by file name."""
    return {
        "LOOP.md": LOOP_HEAD + render_master(master),
        "GOALS.md": GOALS,
        "BOARD.md": BOARD,
        "handover.md": HANDOVER,
    }


def transitions_table() -> str:
    """The baton table as a markdown table, one row per legal move."""
    rows = [
        f"| {state.value} | {role.value} | {event.value} | {target.value} |"
        for (state, event, role), target in TABLE.items()
    ]
    head = ["| state | who | does | new state |", "| --- | --- | --- | --- |"]
    return "\n".join([*head, *rows]) + "\n"


def generated_block() -> str:
    """What sits between the markers in PROTOCOL.md."""
    states = ", ".join(f"`{s.value}`" for s in State)
    return (
        f"{BEGIN}\n\n```mermaid\n{mermaid()}```\n\n{transitions_table()}\n"
        f"States: {states}. Any (state, event, who) not in this table is refused.\n\n{END}"
    )


def with_generated(doc: str) -> str:
    """PROTOCOL.md's text with the generated block brought up to date.

    Raises ValueError when the markers are missing or out of order.
    """
    start, end = doc.find(BEGIN), doc.find(END)
    if start < 0 or end < start:
        raise ValueError("PROTOCOL.md lacks the generated-block markers")
    return doc[:start] + generated_block() + doc[end + len(END) :]
