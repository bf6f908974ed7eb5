"""The five labels relay puts on a job issue: three batons and two flags.

Exactly one baton label is on an open job; the flags ride beside it. The enum values are
the wire strings, so ``Label.WORKING == "working"`` and a label name read from GitHub
compares equal without conversion.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import NamedTuple


class Label(StrEnum):
    """A relay label; the value is the label's name on GitHub."""

    AWAITING_WORKER = "awaiting:worker"
    WORKING = "working"
    AWAITING_CONTROLLER = "awaiting:controller"
    NEEDS_HUMAN = "needs:human"
    RESOLVED = "resolved"


BATONS: frozenset[Label] = frozenset(
    {Label.AWAITING_WORKER, Label.WORKING, Label.AWAITING_CONTROLLER}
)
FLAGS: frozenset[Label] = frozenset({Label.NEEDS_HUMAN, Label.RESOLVED})


class LabelSpec(NamedTuple):
    """What `relay init` creates: name, colour (6 hex digits, no '#'), description."""

    label: Label
    color: str
    description: str


LABEL_SPECS: tuple[LabelSpec, ...] = (
    LabelSpec(Label.AWAITING_WORKER, "fbca04", "relay baton: the worker's turn"),
    LabelSpec(Label.WORKING, "1d76db", "relay baton: the worker has claimed the task"),
    LabelSpec(Label.AWAITING_CONTROLLER, "5319e7", "relay baton: the controller's turn"),
    LabelSpec(Label.NEEDS_HUMAN, "d93f0b", "relay: parked until a person decides"),
    LabelSpec(Label.RESOLVED, "0e8a16", "relay: the job is done"),
)


def batons_in(names: Iterable[str]) -> frozenset[Label]:
    """The baton labels among label names read from GitHub (other labels are ignored)."""
    return frozenset(Label(n) for n in names if n in {b.value for b in BATONS})


def with_baton(names: Iterable[str], baton: Label | None) -> tuple[str, ...]:
    """The full label set after moving the baton: every baton removed, ``baton`` added.

    The driver sends this with the replace-all-labels request, so no moment has two batons.
    """
    kept = [n for n in names if n not in {b.value for b in BATONS}]
    if baton is not None:
        kept.append(baton.value)
    return tuple(dict.fromkeys(kept))
