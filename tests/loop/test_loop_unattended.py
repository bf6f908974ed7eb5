"""The unattended loop on real repositories with scripted makers: an optimisation goal
whose attempts are kept, reverted (too little; a broken test) and refused (an idea
already discarded), each in a throwaway worktree and each a ledger row; a maker edit to
LOOP.md's guardrails reverted; a security goal blocked by the red team, and one let in
with its audit; a rule that held proposed for What works here through the checkers; and
triage enqueuing a failing test and a TODO exactly once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from loop_project import CALC, PY, TEST_GATE, Project, make_project

from relay.loop.goals import GoalState, parse_board, parse_goals
from relay.loop.metric import parse_experiments
from relay.loop.records import parse_failures, parse_rules


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


METRIC = f"{PY} -c \"print('measuring'); print(open('cost.txt').read().strip())\""
BROKEN = CALC.replace("a + b", "a - b")


def with_cost(project: Project, cost: str = "100") -> None:
    project.write("cost.txt", cost + "\n")
    project.git("add", "cost.txt")
    project.git("commit", "-qm", "the cost the metric reads")


def approve(name: str) -> str:
    verdict = '{"verdict": "approve", "findings": []}'
    return f'count("{name}")\nprint(cite())\nprint({verdict!r})\n'


def block(name: str, finding: str) -> str:
    verdict = json.dumps({"verdict": "block", "findings": [finding]})
    return f'count("{name}")\nprint(cite())\nprint({verdict!r})\n'


def test_an_optimisation_goal_keeps_only_a_real_improvement(tmp_path: Path) -> None:
    project = make_project(tmp_path, accept=None, retries=3)
    with_cost(project)
    added = project.loop(
        "goal",
        "add",
        "Cheaper",
        "--metric",
        METRIC,
        "--direction",
        "down",
        "--threshold",
        "10",
        "--runs",
        "3",
    )
    assert added.data == {"goal": "G1"}, added
    maker = project.script(
        "maker",
        f"""
        n = count("maker")
        if n == 1:
            put("cost.txt", "95\\n")  # better, but by less than the threshold
            print("IDEA: Cache the parser")
        elif n == 2:
            put("cost.txt", "50\\n")  # never measured: the idea was discarded
            print("IDEA: cache  the PARSER!")
        elif n == 3:
            put("cost.txt", "40\\n")  # much better, and a test broken
            put("src/calc.py", {BROKEN!r})
            print("IDEA: Skip the addition")
        else:
            put("cost.txt", "60\\n")
            print("IDEA: Use a lookup table")
            print("METRIC: 1")  # what a maker reports is not taken on faith
        """,
    )
    checker = project.script("checker", approve("checker"))
    ran = project.loop("run", "--maker", maker, "--checker", checker)
    assert ran.status == 0, ran
    [kept] = ran.data["kept"]
    assert kept["goal"] == "G1" and kept["gates"].startswith("metric 100 -> 60 (-40.00%")
    _, rows = parse_experiments(project.read("docs/loop/EXPERIMENTS.md"))
    assert [(r.idea, r.baseline, r.result, r.outcome) for r in rows] == [
        ("Cache the parser", "100", "95", "reverted"),
        ("cache the PARSER!", "100", "-", "refused"),
        ("Skip the addition", "100", "-", "reverted"),
        ("Use a lookup table", "100", "60", "kept"),
    ]
    assert "needed -10% down" in rows[0].why
    assert rows[1].why.startswith("refused: the idea 'cache the PARSER!' was already discarded")
    assert "a change that breaks a gate is a regression" in rows[2].why
    assert project.read("cost.txt") == "60\n" and project.read("src/calc.py") == CALC
    assert project.clean() and project.git("worktree", "list").count("\n") == 1
    assert project.calls("checker") == 1  # only the candidate that moved and passed
    brief = project.seen("maker", 2)
    assert "IDEA: <your idea in one line>" in brief and "- Cache the parser" in brief
    assert "Baseline (measured by relay, median of 3 run(s)): 100" in brief
    board = parse_board(project.read("docs/loop/BOARD.md")).rows[0]
    assert board.state is GoalState.DONE and board.verdict == "kept"
    subject = [s for s in project.subjects() if s.startswith("G1")]
    assert subject == ["G1: Cheaper"]
    assert "cost.txt" in project.git("show", "--name-only", "--format=", "HEAD~1")
    _, failed = parse_failures(project.read("docs/loop/state/failures.md"))
    assert [f.category for f in failed] == ["no improvement", "no improvement", "test"]


def test_a_metric_goal_that_never_moves_enough_is_reverted(tmp_path: Path) -> None:
    project = make_project(tmp_path, accept=None, retries=0)
    with_cost(project)
    project.loop(
        "goal", "add", "Cheaper", "--metric", METRIC, "--direction", "down", "--threshold", "10"
    )
    maker = project.script("maker", 'count("maker")\nput("cost.txt", "99\\n")\nprint("IDEA: a")\n')
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [] and project.read("cost.txt") == "100\n" and project.clean()
    assert ran.data["reverted"][0].startswith("G1 pass 1: reverted after attempt 1 (no improvement")


def test_a_maker_edit_to_the_guardrails_is_reverted(tmp_path: Path) -> None:
    project = make_project(tmp_path, retries=0)
    loop = project.read("docs/loop/LOOP.md")
    maker = project.script(
        "maker",
        GOOD
        + "p = pathlib.Path('docs/loop/LOOP.md')\n"
        + "p.write_text(p.read_text().replace('A run stops when', 'A run never stops when'))\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [] and project.read("docs/loop/LOOP.md") == loop
    _, [entry] = parse_failures(project.read("docs/loop/state/failures.md"))
    assert entry.category == "protected path touched"
    assert "docs/loop/LOOP.md" in entry.what and "Stopping conditions" in entry.what
    assert project.clean() and not (project.root / "tests/test_mul.py").exists()


MUL = CALC + "\n\ndef mul(a, b):\n    return a * b\n"
TEST_MUL = "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"
GOOD = f"""
count("maker")
put("src/calc.py", {MUL!r})
put("tests/test_mul.py", {TEST_MUL!r})
"""


def test_a_security_goal_is_blocked_by_a_red_team_breach(tmp_path: Path) -> None:
    project = make_project(tmp_path, accept=None, retries=0)
    accept = f"{PY} -m pytest -q -p no:cacheprovider tests/test_mul.py"
    project.loop("goal", "add", "Guarded mul", "--accept", accept, "--security")
    maker = project.script("maker", GOOD)
    checker = project.script("checker", approve("checker"))
    none = project.loop("run", "--maker", maker, "--checker", checker)
    assert none.status == 1 and "no red team (--red-team)" in none.data["stopped"]
    assert project.calls("maker") == 0
    red = project.script("red", block("red", "mul(2**64, 2) overflows the guard"))
    ran = project.loop("run", "--maker", maker, "--checker", checker, "--red-team", red)
    assert ran.data["kept"] == [] and project.clean(), ran
    _, [entry] = parse_failures(project.read("docs/loop/state/failures.md"))
    assert entry.category == "checker block"
    assert entry.what.startswith("security panel: the red team found a breach (red team 1")
    assert "overflows the guard" in entry.diagnosis
    assert "You are the red team" in project.seen("red", 1)
    assert not (project.root / "docs/loop/audits").exists()
    fine = project.script("fine", approve("fine"))
    let_in = project.loop(
        "run",
        "--maker",
        maker,
        "--checker",
        checker,
        "--red-team",
        fine,
        "--red-team",
        red,
        "--red-team",
        fine,
    )
    assert [k["goal"] for k in let_in.data["kept"]] == ["G1"], let_in
    audit = project.read("docs/loop/audits/G1.md")
    assert "Verdict: passed (every checker approved; 2 of 3 red team clear)" in audit
    assert "| red team 2 | red team | block | mul(2**64, 2) overflows the guard |" in audit
    shown = project.git("show", "--name-only", "--format=", "HEAD~1").split()
    assert "docs/loop/audits/G1.md" in shown and "src/calc.py" in shown


def test_a_rule_joins_what_works_here_only_once_its_goal_is_done_and_the_checkers_agree(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path, retries=1)
    for n in (2, 3):
        project.loop("goal", "add", f"Goal {n}", "--accept", f"test -f tests/test_g{n}.py")
    test = "def test_it():\n    assert True\n"
    maker = project.script(
        "maker",
        f"""
        goal = BRIEF.split(":", 1)[0].removeprefix("# ").lower()
        if goal == "g1":
            healed = (SCRIPTS / "heal").exists()
            put("src/calc.py", ("" if healed else "import os\\n") + {MUL!r})
            put("tests/test_mul.py", {TEST_MUL!r})
        else:
            put(f"tests/test_{{goal}}.py", {test!r})
        """,
    )
    picky = project.script(
        "picky",
        'count("picky")\nprint(cite())\n'
        "said = 'block' if 'What works here' in BRIEF else 'approve'\n"
        'print(\'{"verdict": "\' + said + \'", "findings": []}\')\n',
    )
    loop = project.read("docs/loop/LOOP.md")
    ran = project.loop("run", "--maker", maker, "--checker", picky)
    assert [k["goal"] for k in ran.data["kept"]] == ["G2", "G3"], ran
    # R1 was taught by G1, which has not ended done: it is not even proposed
    [rule] = parse_rules(project.read("docs/loop/state/learned-rules.md"))[1]
    assert (rule.goal, rule.attempt, rule.category) == ("G1", 2, "lint/format")
    assert "- Source: iteration 2, goal G1, attempt 2\n" in project.read(
        "docs/loop/state/learned-rules.md"
    )
    assert project.calls("picky") == 2
    assert all("What works here" not in project.seen("picky", n) for n in (1, 2))
    assert project.read("docs/loop/LOOP.md") == loop and project.clean()
    # G1 ends done in a later run: now R1 is proposed, and the picky panel keeps it out
    (project.scripts / "heal").write_text("")
    again = project.loop("run", "--maker", maker, "--checker", picky)
    assert [k["goal"] for k in again.data["kept"]] == ["G1"], again
    proposal = project.seen("picky", 4)
    assert "# Review R1: What works here: Lint and format before finishing" in proposal
    assert "[R1] (taught by G1 attempt 2, iterations 1, 2; held in iteration 3)" in proposal
    assert project.read("docs/loop/LOOP.md") == loop and project.clean()
    handover = project.read("docs/loop/handover.md")
    assert "Kept on attempt 3 (1 in this pass) in iteration 5;" in handover
    # an approving panel lets it in, once
    project.loop("goal", "add", "Goal 4", "--accept", "test -f tests/test_g4.py")
    checker = project.script("checker", approve("checker"))
    project.loop("run", "--maker", maker, "--checker", checker, "--goal", "G4")
    works = project.read("docs/loop/LOOP.md").split("## What works here", 1)[1]
    assert works.count("[R1] (taught by G1 attempt 2, iterations 1, 2; held in iteration 3)") == 1
    assert any(s.startswith("loop: What works here gains R1") for s in project.subjects())
    assert project.clean()


def test_triage_enqueues_a_failing_test_and_a_todo_exactly_once(tmp_path: Path) -> None:
    project = make_project(tmp_path, accept=None, gates=(TEST_GATE,))
    project.write("tests/test_broken.py", "def test_broken():\n    assert 1 + 1 == 3\n")
    project.write("src/calc.py", CALC + "# TODO: support floats\n")
    project.git("add", "-A")
    project.git("commit", "-qm", "a broken test and a marker")
    first = project.loop("triage")
    assert first.status == 0, first
    assert [(e["goal"], e["finding"]) for e in first.data["enqueued"]] == [
        ("G1", "test tests/test_broken.py::test_broken"),
        ("G2", "marker src/calc.py # TODO: support floats"),
    ]
    goals = parse_goals(project.read("docs/loop/GOALS.md")).goals
    assert goals[0].accept == f"{TEST_GATE} tests/test_broken.py::test_broken"
    assert goals[1].title == "Resolve the TODO at src/calc.py:3"
    assert project.clean() and project.subjects()[-1] == "loop: triage enqueued G1, G2"
    again = project.loop("triage")
    assert again.data["enqueued"] == [] and len(again.data["findings"]) == 2
    assert len(parse_goals(project.read("docs/loop/GOALS.md")).goals) == 2
    # the acceptance commands are real: they fail now and pass once the finding is gone
    import subprocess

    for goal in goals:
        assert subprocess.run(goal.accept, shell=True, cwd=project.root).returncode != 0
    project.write("tests/test_broken.py", "def test_broken():\n    assert 1 + 1 == 2\n")
    project.write("src/calc.py", CALC)
    for goal in goals:
        assert subprocess.run(goal.accept, shell=True, cwd=project.root).returncode == 0


def test_a_security_critical_path_puts_an_optimisation_before_the_red_team(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path, accept=None, retries=0)
    with_cost(project)
    contract = project.read("docs/loop/CONTRACT.md")
    project.write(
        "docs/loop/CONTRACT.md",
        contract.replace(
            "## Security-critical paths\n\n(none)", "## Security-critical paths\n\n- `cost.txt`"
        ),
    )
    project.git("commit", "-qam", "cost.txt is security-critical")
    project.loop(
        "goal", "add", "Cheaper", "--metric", METRIC, "--direction", "down", "--threshold", "10"
    )
    maker = project.script(
        "maker",
        'n = count("maker")\nput("cost.txt", "50\\n")\nprint(f"IDEA: halve it, take {n}")\n',
    )
    checker = project.script("checker", approve("checker"))
    red = project.script("red", block("red", "the cost can be forged"))
    ran = project.loop("run", "--maker", maker, "--checker", checker, "--red-team", red)
    assert ran.data["kept"] == [] and project.read("cost.txt") == "100\n", ran
    assert "security panel: the red team found a breach" in ran.data["reverted"][0]
    fine = project.script("fine", approve("fine"))
    kept = project.loop("run", "--maker", maker, "--checker", checker, "--red-team", fine)
    assert [k["goal"] for k in kept.data["kept"]] == ["G1"], kept
    assert "Verdict: passed" in project.read("docs/loop/audits/G1.md")
    assert "docs/loop/audits/G1.md" in project.git("show", "--name-only", "--format=", "HEAD~1")


def test_verification_on_a_node_needs_the_contract_to_authorise_it(tmp_path: Path) -> None:
    project = make_project(tmp_path, accept=None)
    project.loop("goal", "add", "Elsewhere", "--accept", "true", "--verify-on", "win-box")
    maker = project.script("maker", GOOD)
    ran = project.loop("run", "--maker", maker)
    assert ran.status == 1 and project.calls("maker") == 0 and project.clean()
    assert ran.data["stopped"] == (
        "escalation: G1 must be verified on win-box, but the contract does not authorise"
        " `push` and `open a relay job`"
    )
    metric = project.loop("goal", "add", "X", "--metric", "true", "--verify-on", "n")
    assert metric.status == 2 and "--direction" in metric.errors[0]["message"]
    both = project.loop(
        "goal",
        "add",
        "X",
        "--metric",
        "true",
        "--direction",
        "up",
        "--threshold",
        "1",
        "--verify-on",
        "n",
    )
    assert both.status == 2 and "--verify-on needs an --accept" in both.errors[0]["message"]
