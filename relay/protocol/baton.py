"""The baton as an explicit transition table, keyed by (state, event, role).

Ground rules: a job's state is read from its labels (and whether the issue is closed);
every legal move is one row of :data:`TABLE`; a missing key *is* the illegality check and
raises :class:`IllegalTransition` naming all three. The diagram in PROTOCOL.md is
generated from the table by :func:`mermaid`, never drawn by hand.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from relay.errors import LocalUsageError
from relay.protocol.labels import BATONS, Label


class State(StrEnum):
    """Where a job is. ``parked`` is the controller's baton plus ``needs:human``."""

    NEW = "new"
    AWAITING_WORKER = "awaiting-worker"
    WORKING = "working"
    AWAITING_CONTROLLER = "awaiting-controller"
    PARKED = "parked"
    RESOLVED = "resolved"
    INCONSISTENT = "inconsistent"


class Event(StrEnum):
    """Something a role does to a job."""

    OPEN = "open"
    POST_TASK = "post-task"
    DECLINE = "decline"
    CLAIM = "claim"
    POST_RESULT = "post-result"
    REPORT_HALF_DONE = "report-half-done"
    RECORD_HYPOTHESIS = "record-hypothesis"
    STRIKE = "strike"
    ESCALATE = "escalate"
    UNPARK = "unpark"
    RESOLVE = "resolve"
    RECLAIM = "reclaim"  # the worker's claim lapsed unanswered: the controller takes it back


class Role(StrEnum):
    """Who acts: the job's two nodes, or a person."""

    CONTROLLER = "controller"
    WORKER = "worker"
    HUMAN = "human"


# what each event is, in the words of the thread a person reads
EVENT_WORDS = {
    "post-task": "post a TASK",
    "post-result": "post a RESULT",
    "claim": "claim the TASK",
    "report-half-done": "report a half-done TASK",
    "record-hypothesis": "record a hypothesis",
    "strike": "strike a hypothesis",
    "escalate": "escalate to a person",
    "reclaim": "take back a lapsed claim",
    "open": "open the job",
    "unpark": "unpark the job",
}


def _where(state: State) -> str:
    """Where the job is, by the labels a person sees on the issue (``awaiting:worker``)."""
    labels = sorted(str(label) for label in labels_for(state))
    if not labels:
        return f"is {state.value.replace('-', ' ')}"
    return "carries " + " and ".join(f"`{label}`" for label in labels)


class IllegalTransition(LocalUsageError):
    """No row of the table allows this event by this role in this state."""

    code = "illegal-transition"

    def __init__(self, state: State, event: Event, role: Role) -> None:
        self.state, self.event, self.role = state, event, role
        super().__init__(
            f"the {role.value} cannot {EVENT_WORDS.get(event, event.value.replace('-', ' '))}"
            f" while the job {_where(state)}",
            hint=(
                "a person decides first: remove the `needs:human` label to unpark it"
                if state == State.PARKED
                else "run `relay status` to see whose turn it is"
            ),
        )


_S, _E, _R = State, Event, Role
TABLE: dict[tuple[State, Event, Role], State] = {
    (_S.NEW, _E.OPEN, _R.CONTROLLER): _S.AWAITING_CONTROLLER,
    (_S.AWAITING_CONTROLLER, _E.POST_TASK, _R.CONTROLLER): _S.AWAITING_WORKER,
    (_S.AWAITING_CONTROLLER, _E.RECORD_HYPOTHESIS, _R.CONTROLLER): _S.AWAITING_CONTROLLER,
    (_S.AWAITING_CONTROLLER, _E.STRIKE, _R.CONTROLLER): _S.AWAITING_CONTROLLER,
    (_S.AWAITING_CONTROLLER, _E.ESCALATE, _R.CONTROLLER): _S.PARKED,
    (_S.AWAITING_CONTROLLER, _E.RESOLVE, _R.CONTROLLER): _S.RESOLVED,
    (_S.AWAITING_CONTROLLER, _E.REPORT_HALF_DONE, _R.WORKER): _S.AWAITING_CONTROLLER,
    (_S.AWAITING_WORKER, _E.CLAIM, _R.WORKER): _S.WORKING,
    (_S.AWAITING_WORKER, _E.DECLINE, _R.WORKER): _S.AWAITING_CONTROLLER,
    (_S.AWAITING_WORKER, _E.POST_RESULT, _R.WORKER): _S.AWAITING_CONTROLLER,
    (_S.AWAITING_WORKER, _E.REPORT_HALF_DONE, _R.WORKER): _S.AWAITING_CONTROLLER,
    (_S.WORKING, _E.POST_RESULT, _R.WORKER): _S.AWAITING_CONTROLLER,
    (_S.WORKING, _E.REPORT_HALF_DONE, _R.WORKER): _S.AWAITING_CONTROLLER,
    (_S.WORKING, _E.RECLAIM, _R.CONTROLLER): _S.AWAITING_CONTROLLER,
    (_S.AWAITING_WORKER, _E.RECLAIM, _R.CONTROLLER): _S.AWAITING_CONTROLLER,
    (_S.PARKED, _E.RECORD_HYPOTHESIS, _R.CONTROLLER): _S.PARKED,
    (_S.PARKED, _E.UNPARK, _R.HUMAN): _S.AWAITING_CONTROLLER,
    (_S.PARKED, _E.RESOLVE, _R.CONTROLLER): _S.RESOLVED,
}

_BATON_OF: dict[State, Label | None] = {
    State.AWAITING_WORKER: Label.AWAITING_WORKER,
    State.WORKING: Label.WORKING,
    State.AWAITING_CONTROLLER: Label.AWAITING_CONTROLLER,
    State.PARKED: Label.AWAITING_CONTROLLER,
    State.RESOLVED: None,
}


def transition(state: State, event: Event, role: Role) -> State:
    """The state after ``event`` by ``role``; raises IllegalTransition if not in the table."""
    try:
        return TABLE[(state, event, role)]
    except KeyError:
        raise IllegalTransition(state, event, role) from None


def state_of(labels: Iterable[str], *, closed: bool) -> State:
    """A job's state from its label names and whether the issue is closed."""
    names = set(labels)
    if closed or Label.RESOLVED in names:
        return State.RESOLVED
    batons = [b for b in BATONS if b in names]
    if len(batons) != 1:
        return State.INCONSISTENT
    if batons[0] == Label.AWAITING_CONTROLLER and Label.NEEDS_HUMAN in names:
        return State.PARKED
    return {
        Label.AWAITING_WORKER: State.AWAITING_WORKER,
        Label.WORKING: State.WORKING,
        Label.AWAITING_CONTROLLER: State.AWAITING_CONTROLLER,
    }[batons[0]]


def baton_of(state: State) -> Label | None:
    """The one baton label a job in ``state`` carries; None for a state with no single
    baton: ``new``, ``resolved`` and ``inconsistent`` (zero or several baton labels, which
    a person can cause and :func:`baton_problem` names). Total: never raises."""
    return _BATON_OF.get(state)


def baton_problem(labels: Iterable[str]) -> str | None:
    """What is wrong with a job's baton labels, in words; None when there is exactly one."""
    names = set(labels)
    batons = sorted(b.value for b in BATONS if b in names)
    if len(batons) == 1:
        return None
    if not batons:
        return "no baton label"
    return "several baton labels (" + ", ".join(f"`{b}`" for b in batons) + ")"


def move(state: State, event: Event, role: Role) -> tuple[Label, Label]:
    """The baton a move expects and the one it leaves, both read from :data:`TABLE`.

    Raises IllegalTransition when the table has no such row, or when either end of the row
    has no single baton (a move is always from one baton to one baton)."""
    target = transition(state, event, role)
    expect, to = baton_of(state), baton_of(target)
    if expect is None or to is None:
        raise IllegalTransition(state, event, role)
    return expect, to


def labels_for(state: State) -> frozenset[Label]:
    """The relay labels (baton and flags) a job in ``state`` carries."""
    if state == State.RESOLVED:
        return frozenset({Label.RESOLVED})
    baton = baton_of(state)
    flags = {Label.NEEDS_HUMAN} if state == State.PARKED else set()
    return frozenset({baton} | flags) if baton else frozenset(flags)


def mermaid() -> str:
    """The table as a mermaid state diagram (one edge per row, in table order)."""
    lines = ["stateDiagram-v2"]
    for state in State:
        if state not in (State.NEW, State.INCONSISTENT):
            lines.append(f'    state "{_shown(state)}" as {_id(state)}')
    for (state, event, role), target in TABLE.items():
        source = "[*]" if state == State.NEW else _id(state)
        lines.append(f"    {source} --> {_id(target)}: {role.value} {event.value}")
    lines.append(f"    {_id(State.RESOLVED)} --> [*]")
    return "\n".join(lines) + "\n"


def _id(state: State) -> str:
    return state.value.replace("-", "_")


def _shown(state: State) -> str:
    """A state as people see it on the issue: its labels."""
    return " + ".join(sorted(label.value for label in labels_for(state)))
