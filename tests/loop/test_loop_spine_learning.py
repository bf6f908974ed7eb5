"""What the loop learns and what its spine says, decided purely: a rule is credited to the
goal and attempt that taught it; a self-heal teaches; a failed attempt's handover entry
carries the diagnosis and the next hypothesis, a kept one the maker's account and the true
attempt count; and Step 0's security-critical areas, found in file names, instruction
files and history, written to LOOP.md and read back as paths."""

from __future__ import annotations

from relay.loop.classify import Category
from relay.loop.ratchet import (
    EndPass,
    Progress,
    Retry,
    learn,
    learn_from_heal,
    next_hypothesis,
)
from relay.loop.records import (
    RULES_HEAD,
    Failure,
    Rule,
    failed_entry,
    handover_entries,
    kept_entry,
    parse_rules,
    render_rules,
)
from relay.loop.risks import Commit, area_paths, critical_areas, propose_areas, with_areas
from relay.loop.spine import extend_loop


def failure(n: int, category: str, goal: str, attempt: int) -> Failure:
    return Failure(
        n,
        goal,
        attempt,
        n,
        category,
        f"lint (`ruff check .`) exited 1 [{n}]",
        "x.py:1:1: F401 unused",
    )


def test_a_rule_is_credited_to_the_goal_and_attempt_whose_failure_taught_it() -> None:
    # G1 failed lint twice and healed without a rule; G2's pass ends on one test failure
    failures = [
        failure(1, "lint/format", "G1", 1),
        failure(2, "lint/format", "G1", 2),
        failure(3, "test", "G2", 1),
    ]
    rule = learn(failures, [], goal="G2", iteration=3)
    assert rule is not None and rule.category == "lint/format"
    assert (rule.goal, rule.attempt, rule.iteration) == ("G1", 2, 3)
    assert rule.pattern.startswith("lint/format failed 2 times, last in G1 attempt 2:")
    assert "`ruff check .`" in rule.rule


def test_a_self_heal_that_worked_teaches_a_rule_once() -> None:
    last = failure(1, "lint/format", "G1", 1)
    rule = learn_from_heal(last, [], goal="G1", healed_by=2, iteration=2)
    assert rule is not None and (rule.goal, rule.attempt, rule.category) == ("G1", 1, "lint/format")
    assert "attempt 2 healed it with the diagnosis" in rule.pattern
    assert "F401" in rule.pattern
    assert learn_from_heal(last, [rule], goal="G1", healed_by=2, iteration=2) is None  # known
    assert learn_from_heal(last, [], goal="G2", healed_by=2, iteration=2) is None  # not its heal
    assert learn_from_heal(None, [], goal="G1", healed_by=1, iteration=1) is None
    crash = failure(1, Category.CRASH, "G1", 1)
    assert learn_from_heal(crash, [], goal="G1", healed_by=2, iteration=2) is None


def test_rules_name_their_attempt_and_round_trip_and_old_entries_still_read() -> None:
    rule = Rule(1, "Lint first", 3, "G1", "lint/format", "p", "Run ruff.", 2)
    text = render_rules(RULES_HEAD, (rule,))
    assert "- Source: iteration 3, goal G1, attempt 2\n" in text
    assert parse_rules(text)[1] == (rule,)
    old = text.replace(", attempt 2", "")
    assert parse_rules(old)[1] == (Rule(1, "Lint first", 3, "G1", "lint/format", "p", "Run ruff."),)


def test_the_next_hypothesis_says_what_the_run_tries_next() -> None:
    heal = next_hypothesis("lint/format", Retry(Progress(failed=1), rewind=False), attempt=1)
    assert heal.startswith("attempt 2 heals this on the same tree") and "lint gate" in heal
    angle = next_hypothesis("test", Retry(Progress(failed=2), rewind=True), attempt=2)
    assert "another angle" in angle and "never by weakening a test" in angle
    assert "blocked" in next_hypothesis("test", EndPass(block=True), attempt=3)
    assert "set aside" in next_hypothesis("test", EndPass(block=False), attempt=3)


def test_handover_entries_carry_the_diagnosis_the_account_and_the_true_count() -> None:
    f = Failure(
        4, "G2", 3, 7, "test", "test (`pytest`) exited 1", "\n".join(f"line {n}" for n in range(30))
    )
    entry = failed_entry(
        f, tried="Rewrote mul with a loop.", hypothesis="attempt 4 heals it.", when="T"
    )
    [parsed] = handover_entries(entry)
    assert parsed.startswith("## G2 attempt 3 failed (test) (T)")
    assert "line 11\n" in entry and "line 12\n" not in entry and "18 more lines" in entry
    noisy = Failure(
        5, "G2", 4, 8, "lint/format", "lint", "\n".join(["noise"] * 20 + ["x.py:3:1: F401"])
    )
    assert "x.py:3:1: F401" in failed_entry(noisy, tried="", hypothesis="h", when="T")
    assert "Rewrote mul with a loop." in entry and "Next hypothesis: attempt 4 heals it." in entry
    kept = kept_entry(
        goal="G2",
        title="Multiply",
        accept="pytest -q",
        attempt=4,
        first=3,
        iteration=9,
        gates="3/3 gates pass (was 2/3)",
        coverage="90.00% -> 91.00% (+1.00)",
        explanation="## Added mul()\nbecause the goal asks for it",
        when="T",
    )
    [parsed] = handover_entries(kept)  # a heading in the maker's words stays inside
    assert "Kept on attempt 4 (2 in this pass) in iteration 9; `pytest -q` now passes." in kept
    assert "- Gates: 3/3 gates pass (was 2/3)" in kept and "- Line coverage: 90.00%" in kept
    assert "## Added mul()" in parsed


FILES = [
    "src/shop/auth/login.py",
    "src/shop/auth/tokens.py",
    "src/shop/billing.py",
    "src/shop/views.py",
    "src/shop/util.py",
    "migrations/0001_initial.py",
    ".github/workflows/ci.yml",
    "Dockerfile",
    "tests/test_auth.py",
    "README.md",
]


def test_step_0_finds_the_areas_in_names_instructions_and_history() -> None:
    docs = {
        "AGENTS.md": "# Agents\n\nNever change `src/shop/util.py` without review: it handles"
        " the session secret.\nRun the tests.\n"
    }
    history = [
        Commit("a" * 40, "Fix a payment rounding leak", ("src/shop/views.py", "tests/x.py")),
        Commit("b" * 40, "Tidy the README", ("README.md",)),
    ]
    areas = {a.name: a for a in propose_areas(FILES, docs, history)}
    assert areas["authentication"].paths == ("src/shop/auth/", "src/shop/util.py")
    assert "AGENTS.md line 3" in areas["authentication"].found
    assert areas["money"].paths == ("src/shop/billing.py", "src/shop/views.py")
    assert any(f.startswith("commit aaaaaaaaaa") for f in areas["money"].found)
    assert areas["migrations"].paths == ("migrations/",)
    assert areas["workflows"].paths == (".github/workflows/",)
    assert areas["deploy"].paths == ("Dockerfile",)
    assert "tenancy" not in areas  # nothing found, nothing proposed
    assert all("tests/" not in p for a in areas.values() for p in a.paths)


def test_confirmed_areas_are_written_to_loop_md_and_read_back_as_paths() -> None:
    areas = propose_areas(FILES, {}, [])
    loop = with_areas(extend_loop(None), areas)
    assert "## Security-critical areas" in loop
    assert "- authentication: `src/shop/auth/` (found in the file names)" in loop
    paths = area_paths(loop)
    assert "src/shop/auth/" in paths and "--security" not in paths and "Dockerfile" in paths
    assert with_areas(loop, areas) == loop  # listed once
    assert loop.index("## Security-critical areas") < loop.index("## Stopping conditions")
    assert critical_areas(("src/shop/auth/login.py",), loop) == [
        "`src/shop/auth/login.py` is in a security-critical area (`src/shop/auth/`)"
    ]
    assert critical_areas(("src/shop/util.py",), loop) == []
    assert critical_areas(("src/",), loop)  # a goal over a whole tree takes in an area
    assert critical_areas(("lib/x.py",), loop, ["lib/"])  # the contract's paths count too
