"""The baton table, the labels, and the generated docs that must never go stale."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import pytest
from regen_docs import expected_files

from relay.protocol import Event, IllegalTransition, Label, Role, State, transition, with_baton
from relay.protocol.baton import (
    EVENT_WORDS,
    TABLE,
    baton_of,
    baton_problem,
    labels_for,
    mermaid,
    move,
    state_of,
)
from relay.protocol.labels import BATONS, LABEL_SPECS
from relay.protocol.spine import EXAMPLE_MASTER, render_spine, with_generated

PACKAGE = Path(__file__).resolve().parents[2] / "relay" / "protocol"


def test_every_missing_key_raises_naming_state_event_and_role() -> None:
    for state, event, role in itertools.product(State, Event, Role):
        if (state, event, role) in TABLE:
            assert transition(state, event, role) == TABLE[(state, event, role)]
            continue
        with pytest.raises(IllegalTransition) as caught:
            transition(state, event, role)
        assert (caught.value.state, caught.value.event, caught.value.role) == (state, event, role)
        text, labels = str(caught.value), labels_for(state)
        assert role.value in text
        assert (EVENT_WORDS.get(event) or event.value.replace("-", " ")) in text
        assert all(f"`{label}`" in text for label in labels)
        assert labels or state.value.replace("-", " ") in text


def test_only_the_baton_holder_moves_it() -> None:
    # one exception: the controller takes back the baton of a worker whose claim lapsed
    # unanswered (decide() asks for it only then: see test_protocol_decide's lapse tests)
    for (state, event, role), target in TABLE.items():
        if state in (State.AWAITING_WORKER, State.WORKING) and event != Event.RECLAIM:
            assert role == Role.WORKER
        if event == Event.RECLAIM:
            assert (role, target) == (Role.CONTROLLER, State.AWAITING_CONTROLLER)
        if state == State.PARKED:
            assert role in (Role.CONTROLLER, Role.HUMAN)
    assert not any(s in (State.RESOLVED, State.INCONSISTENT) for s, _, _ in TABLE)


@pytest.mark.parametrize("state", [s for s in State if s not in (State.NEW, State.INCONSISTENT)])
def test_labels_and_states_agree(state: State) -> None:
    labels = labels_for(state)
    assert state_of([*labels, "bug"], closed=False) == state
    assert len(labels & BATONS) == (0 if state == State.RESOLVED else 1)
    assert baton_of(state) in (labels | {None})


def test_label_sets_that_are_not_one_baton_are_inconsistent() -> None:
    assert state_of([], closed=False) == State.INCONSISTENT
    assert state_of(["working", "awaiting:worker"], closed=False) == State.INCONSISTENT
    assert state_of(["working"], closed=True) == State.RESOLVED
    # total: a state with no single baton has none, and the problem is named in words
    assert baton_of(State.INCONSISTENT) is None and baton_of(State.NEW) is None
    assert baton_problem([]) == "no baton label"
    assert baton_problem(["working", "bug", "awaiting:worker"]) == (
        "several baton labels (`awaiting:worker`, `working`)"
    )
    assert baton_problem(["working", "needs:human"]) is None


def test_every_move_reads_its_labels_from_the_table() -> None:
    for (state, event, role), target in TABLE.items():
        if baton_of(state) is None or baton_of(target) is None:
            with pytest.raises(IllegalTransition):
                move(state, event, role)
        else:
            assert move(state, event, role) == (baton_of(state), baton_of(target))
    with pytest.raises(IllegalTransition):
        move(State.WORKING, Event.CLAIM, Role.WORKER)


def test_with_baton_replaces_every_baton_and_keeps_other_labels() -> None:
    assert with_baton(["bug", "working", "awaiting:worker"], Label.AWAITING_CONTROLLER) == (
        "bug",
        "awaiting:controller",
    )
    assert with_baton(["needs:human", "working"], None) == ("needs:human",)


def test_label_specs_cover_every_label_with_a_colour() -> None:
    assert [spec.label for spec in LABEL_SPECS] == list(Label)
    assert all(len(spec.color) == 6 and int(spec.color, 16) >= 0 for spec in LABEL_SPECS)
    assert all(0 < len(spec.description) <= 100 for spec in LABEL_SPECS)


def test_the_diagram_has_one_edge_per_row() -> None:
    edges = [line for line in mermaid().splitlines() if "-->" in line]
    assert len(edges) == len(TABLE) + 1
    for (state, event, role), _ in TABLE.items():
        assert any(f": {role.value} {event.value}" in e for e in edges), (state, event, role)


def test_generated_docs_and_templates_are_current() -> None:
    stale = [
        str(p)
        for p, text in expected_files().items()
        if not p.exists() or p.read_text(encoding="utf-8") != text
    ]
    assert stale == [], f"stale: {stale}; run `python tests/protocol/regen_docs.py`"


def test_staleness_is_detected() -> None:
    protocol = next(p for p in expected_files() if p.name == "PROTOCOL.md")
    current = protocol.read_text(encoding="utf-8")
    assert with_generated(current) == current
    broken = current.replace("worker claim", "worker grab")
    assert with_generated(broken) != broken
    with pytest.raises(ValueError, match="markers"):
        with_generated("# no markers\n")


def test_the_spine_holds_a_loop_file_with_a_relay_section() -> None:
    spine = render_spine(EXAMPLE_MASTER)
    assert sorted(spine) == ["BOARD.md", "GOALS.md", "LOOP.md", "handover.md"]
    assert "\n## Relay\n" in spine["LOOP.md"]


IO_MODULES = {
    "os",
    "pathlib",
    "subprocess",
    "socket",
    "aiohttp",
    "git",
    "time",
    "io",
    "shutil",
    "sqlite3",
    "urllib",
    "http",
    "asyncio",
    "requests",
    "tempfile",
    "glob",
    "sys",
}
CLOCK_READS = {"now", "utcnow", "today", "time", "monotonic", "perf_counter"}


def test_the_protocol_package_imports_nothing_that_does_io() -> None:
    for path in sorted(PACKAGE.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in {"open", "input", "print"}, path.name
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                assert node.func.attr not in CLOCK_READS, f"{path.name} reads the clock"
            for name in names:
                assert name.split(".")[0] not in IO_MODULES, f"{path.name} imports {name}"
                assert not name.startswith("relay.") or name.startswith(
                    ("relay.protocol", "relay.errors")
                ), name


def test_a_turn_refusal_says_the_event_in_words_and_the_real_label() -> None:
    err = IllegalTransition(State.AWAITING_WORKER, Event.POST_TASK, Role.CONTROLLER)
    assert (
        err.message == "the controller cannot post a TASK while the job carries `awaiting:worker`"
    )
