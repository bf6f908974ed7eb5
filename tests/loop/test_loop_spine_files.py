"""The spine files as relay reads and writes them: each round-trips exactly, a hand edit
relay cannot read names the file and the line, and `relay loop init`'s extensions keep
every byte of what `relay init` wrote."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from relay.errors import SpineFileError
from relay.loop.contract import Budget, Contract, Gate, parse_contract, render_contract
from relay.loop.goals import (
    Board,
    BoardRow,
    Goal,
    GoalsFile,
    GoalState,
    parse_board,
    parse_goals,
    render_board,
    render_goals,
)
from relay.loop.markdown import code_span, parse_code_span, row, sections, split_row
from relay.loop.records import (
    FAILURES_HEAD,
    LOG_HEAD,
    RULES_HEAD,
    Baseline,
    Failure,
    GateResult,
    Iteration,
    Rule,
    parse_baseline,
    parse_failures,
    parse_log,
    parse_rules,
    render_baseline,
    render_failures,
    render_log,
    render_rules,
)
from relay.loop.spine import LOOP_SECTIONS, extend_board, extend_goals, extend_loop
from relay.protocol.master import Master
from relay.protocol.spine import BOARD, GOALS, render_spine

words = (
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")),
        min_size=1,
        max_size=30,
    )
    .map(lambda t: " ".join(t.split()))
    .filter(bool)
)
commands = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=40
).filter(lambda t: t.strip() == t and t)
ids = st.integers(min_value=1, max_value=999).map(lambda n: f"G{n}")


@st.composite
def goal_lists(draw: st.DrawFn) -> tuple[Goal, ...]:
    numbers = draw(st.lists(st.integers(1, 500), unique=True, max_size=5))
    goals = []
    for n in numbers:
        deps = tuple(draw(st.lists(ids, max_size=2, unique=True)))
        goals.append(Goal(f"G{n}", draw(words), draw(commands), deps, draw(st.booleans())))
    return tuple(goals)


# --- markdown pieces ---


@given(commands)
def test_a_code_span_reads_back_whatever_it_holds(text: str) -> None:
    assert parse_code_span(code_span(text)) == text


@given(st.lists(words, min_size=1, max_size=5))
def test_a_table_row_reads_back_its_cells(cells: list[str]) -> None:
    assert split_row(row(cells)) == cells


def test_sections_join_back_to_the_text_and_skip_fenced_headings() -> None:
    text = "# T\n\nintro\n\n## A\n\n```\n## not a heading\n```\n\n## B\nb\n"
    parts = sections(text)
    assert "".join(p.text for p in parts) == text
    assert [p.heading for p in parts] == [None, "A", "B"]
    assert parts[2].first_line == 11


# --- GOALS.md and BOARD.md ---


@given(goal_lists())
def test_goals_round_trip(goals: tuple[Goal, ...]) -> None:
    doc = GoalsFile(before=GOALS, intro="Intro line.\n", goals=goals)
    text = render_goals(doc)
    assert parse_goals(text).goals == goals
    assert render_goals(parse_goals(text)) == text
    assert text.startswith(GOALS)  # relay init's GOALS.md, every byte


def test_a_goal_relay_cannot_read_names_the_file_and_line() -> None:
    text = render_goals(GoalsFile(GOALS, "", (Goal("G1", "One", "true"),)))
    broken = text.replace("- Accept: `true`", "- Acept: `true`")
    with pytest.raises(SpineFileError) as caught:
        parse_goals(broken)
    line = broken.splitlines().index("- Acept: `true`") + 1
    assert str(caught.value).startswith(f"docs/loop/GOALS.md:{line}: ")
    twice = text + "\n### G1: Again\n\n- Accept: `true`\n"
    with pytest.raises(SpineFileError, match="G1 appears twice"):
        parse_goals(twice)
    with pytest.raises(SpineFileError, match="no `- Accept:`"):
        parse_goals(text.replace("- Accept: `true`\n", ""))


states = st.sampled_from(list(GoalState))


@given(
    st.lists(
        st.tuples(ids, words, states, st.integers(0, 99), st.integers(0, 3), words, words),
        unique_by=lambda t: t[0],
        max_size=5,
    )
)
def test_board_round_trip(rows: list[tuple[str, str, GoalState, int, int, str, str]]) -> None:
    board = Board(before=BOARD, rows=tuple(BoardRow(*r) for r in rows))
    text = render_board(board)
    assert parse_board(text).rows == board.rows
    assert render_board(parse_board(text)) == text
    assert text.startswith(BOARD)


def test_a_board_row_relay_cannot_read_names_the_line() -> None:
    text = render_board(Board(BOARD, (BoardRow("G1", "One", GoalState.DONE, 2),)))
    broken = text.replace("| done |", "| finished |")
    line = next(i for i, t in enumerate(broken.splitlines(), 1) if "finished" in t)
    with pytest.raises(SpineFileError, match=rf"BOARD.md:{line}: 'finished' is not a state"):
        parse_board(broken)


# --- CONTRACT.md ---


@given(
    st.lists(
        st.tuples(st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True), commands), max_size=3
    ),
    st.lists(st.from_regex(r"[a-z][a-z0-9_/.-]{0,15}", fullmatch=True), max_size=3),
    st.one_of(st.none(), st.integers(0, 50)),
    st.sampled_from([(), ("push",), ("push", "open a relay job")]),
)
def test_contract_round_trip(
    gates: list[tuple[str, str]],
    protect: list[str],
    iterations: int | None,
    authorised: tuple[str, ...],
) -> None:
    contract = Contract(
        gates=tuple(Gate(n, c) for n, c in gates),
        protected=("docs/loop/CONTRACT.md", *protect),
        budget=Budget(iterations=iterations, makers=1),
        authorised=authorised,
        coverage_report="coverage.json",
    )
    text = render_contract(contract)
    assert parse_contract(text) == contract
    assert render_contract(parse_contract(text)) == text


def test_the_default_contract_reads_well_and_back() -> None:
    text = render_contract(Contract())
    assert max(len(line) for line in text.splitlines()) <= 100
    assert parse_contract(text) == Contract()
    assert "## Authorised irreversible actions\n\n(none)\n" in text


def test_a_contract_relay_cannot_read_names_the_field_and_line() -> None:
    text = render_contract(Contract(gates=(Gate("test", "pytest"),)))
    broken = text.replace("- Iterations: 20", "- Iterations: twenty")
    line = broken.splitlines().index("- Iterations: twenty") + 1
    with pytest.raises(SpineFileError, match=rf"CONTRACT.md:{line}: Iterations is a whole number"):
        parse_contract(broken)
    with pytest.raises(SpineFileError, match="no `## Budget` section"):
        parse_contract(text.replace("## Budget", "## Money"))
    with pytest.raises(SpineFileError, match="a gate reads"):
        parse_contract(text.replace("- test: `pytest`", "- test: pytest"))


# --- the state files ---


@given(
    st.lists(
        st.tuples(
            words,
            st.sampled_from(["test", "lint/format", "coverage drop"]),
            words,
            st.text(max_size=200),
        ),
        max_size=4,
    )
)
def test_failures_round_trip(items: list[tuple[str, str, str, str]]) -> None:
    entries = tuple(
        Failure(n, f"G{n}", n + 1, n * 2, category, what, diag.replace("\r", ""))
        for n, (_, category, what, diag) in enumerate(items, start=1)
    )
    normal = tuple(
        Failure(
            f.number,
            f.goal,
            f.attempt,
            f.iteration,
            f.category,
            f.what,
            "\n".join(f.diagnosis.splitlines()),
        )
        for f in entries
    )
    text = render_failures(FAILURES_HEAD, normal)
    assert parse_failures(text) == (FAILURES_HEAD, normal)
    assert render_failures(*parse_failures(text)) == text


def test_a_diagnosis_holding_a_fence_survives() -> None:
    failure = Failure(1, "G1", 1, 1, "test", "pytest failed", "```\n## F9: fake\n```")
    text = render_failures(FAILURES_HEAD, (failure,))
    assert parse_failures(text)[1] == (failure,)


@given(st.lists(st.tuples(words, words, words), max_size=4))
def test_rules_round_trip(items: list[tuple[str, str, str]]) -> None:
    rules = tuple(
        Rule(n, title, n, f"G{n}", "test", pattern, rule)
        for n, (title, pattern, rule) in enumerate(items, start=1)
    )
    text = render_rules(RULES_HEAD, rules)
    assert parse_rules(text) == (RULES_HEAD, rules)
    assert render_rules(*parse_rules(text)) == text


def test_log_and_baseline_round_trip() -> None:
    rows = (Iteration(1, "G1", 1, "failed", "test", "abc", "", "t"), Iteration(2, "G1", 2, "kept"))
    text = render_log(LOG_HEAD, rows)
    assert parse_log(text) == (LOG_HEAD, rows)
    assert render_log(*parse_log(text)) == text
    base = Baseline(
        "G2",
        "f" * 40,
        "now",
        87.5,
        ("notes.txt", "a b"),
        (GateResult("accept", "pytest -k x", False, 0.5),),
    )
    assert parse_baseline(render_baseline(base)) == base
    assert parse_baseline(render_baseline(Baseline())) == Baseline()


# --- what relay init wrote is kept ---


def test_loop_init_keeps_every_byte_relay_init_wrote() -> None:
    spine = render_spine(Master(repository="o/n"))
    loop = extend_loop(spine["LOOP.md"])
    assert loop.startswith(spine["LOOP.md"])  # the ## Relay section above all
    assert all(f"\n## {h}\n" in loop for h, _ in LOOP_SECTIONS)
    assert extend_loop(loop) == loop  # nothing twice
    goals = extend_goals(spine["GOALS.md"])
    assert goals.startswith(spine["GOALS.md"]) and "## Backlog" in goals
    assert extend_goals(goals) == goals
    board = extend_board(spine["BOARD.md"])
    assert board.startswith(spine["BOARD.md"]) and "## Goals" in board
    assert extend_board(board) == board
    hand_edited = spine["LOOP.md"] + "\n## Guardrails\n\nMine.\n"
    assert extend_loop(hand_edited).count("## Guardrails") == 1
    assert "Mine." in extend_loop(hand_edited)
