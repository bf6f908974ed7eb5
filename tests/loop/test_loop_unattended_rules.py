"""The unattended loop's decisions as pure functions: metrics and thresholds, ideas and
the ledger, reset times from a maker's output, the resume record, triage's findings, the
LOOP.md guard, proposals for What works here, the security panel and the verification
job's record."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from relay.errors import SpineFileError
from relay.loop.classify import Review, Verdict
from relay.loop.goals import Goal, GoalsFile, parse_goals, render_goals
from relay.loop.jobs import Answer, Job, judged, not_run, open_job, parse_jobs, with_job
from relay.loop.metric import (
    EXPERIMENTS_HEAD,
    Experiment,
    append,
    discarded,
    median,
    metric_value,
    movement,
    normalise,
    parse_experiments,
    stated_idea,
)
from relay.loop.ratchet import Progress, Suspend, Wall, after_attempt
from relay.loop.records import Failure, Iteration, Rule
from relay.loop.resume import (
    PendingResume,
    parse_record,
    record_problems,
    render_record,
    resume_args,
    resume_time,
    usage_wall,
)
from relay.loop.revise import (
    Ballot,
    loop_md_touched,
    outside_works_here,
    proposals,
    security_verdict,
    with_entries,
)
from relay.loop.triage import (
    coverage_findings,
    enqueue,
    failing_tests,
    lint_findings,
    marker_findings,
    new_findings,
    type_findings,
)

NOW = datetime(2026, 12, 2, 3, 30, tzinfo=UTC)


def test_a_metric_is_the_number_on_the_last_line_and_runs_count_by_median() -> None:
    assert metric_value("warming up\n12.5\n\n") == 12.5
    assert metric_value("1e3") == 1000.0
    assert metric_value("12.5 ms") is None and metric_value("") is None
    assert metric_value("3\nthen some text") is None
    assert median([5.0, 1.0, 100.0]) == 5.0 and median([1.0, 2.0]) == 1.5
    with pytest.raises(ValueError):
        median([])


@pytest.mark.parametrize(
    ("base", "result", "direction", "threshold", "improved"),
    [
        (100.0, 80.0, "down", 10.0, True),  # 20% faster
        (100.0, 95.0, "down", 10.0, False),  # too little
        (100.0, 120.0, "down", 10.0, False),  # the wrong way
        (100.0, 110.0, "up", 10.0, True),  # exactly the threshold counts
        (100.0, 100.0, "up", 0.0, False),  # no movement is no improvement
        (0.0, 1.0, "up", 50.0, True),
        (-10.0, -5.0, "up", 40.0, True),
    ],
)
def test_a_result_must_move_past_the_threshold_the_right_way(
    base: float, result: float, direction: str, threshold: float, improved: bool
) -> None:
    moved = movement(base, result, direction=direction, threshold=threshold)
    assert moved.improved is improved
    assert moved.text.startswith(f"{base:.6g} -> {result:.6g} (")


def test_an_idea_is_stated_on_its_line_and_a_discarded_one_is_recognised() -> None:
    assert stated_idea("work\nIDEA: Cache  the parser\nmore") == "Cache the parser"
    assert stated_idea("idea: first\nIDEA: second") == "second"
    assert stated_idea("no idea here") is None
    assert normalise("Cache the PARSER!!") == normalise("cache, the   parser") == "cache the parser"
    ledger = [
        Experiment(1, "G1", "Cache the parser", "10", "9.9", "reverted", "too little"),
        Experiment(2, "G1", "Use a table", "10", "5", "kept", "-50%"),
        Experiment(3, "G2", "Inline it", "10", "11", "reverted", "slower"),
    ]
    assert discarded("cache the parser.", ledger, goal="G1") == ledger[0]
    assert discarded("Use a table", ledger, goal="G1") is None  # kept ideas may be built on
    assert discarded("Inline it", ledger, goal="G1") is None  # another goal's
    assert discarded("!!!", ledger, goal="G1") is None


def test_the_ledger_is_appended_to_and_reads_back() -> None:
    text, first = append(None, Experiment(0, "G1", "A | B", "10", "9", "reverted", "small"))
    text, second = append(text, Experiment(0, "G1", "C", "10", "5", "kept", "big"))
    assert (first.number, second.number) == (1, 2)
    head, rows = parse_experiments(text)
    assert head == EXPERIMENTS_HEAD and rows == (first, second)
    assert text.startswith(EXPERIMENTS_HEAD)
    with pytest.raises(SpineFileError):
        parse_experiments(text + "stray words\n")


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("Error: usage limit reached. Your limit resets at 5am (UTC).", "2026-12-02 05:00"),
        ("HTTP 429 Too Many Requests\nRetry-After: 120", "2026-12-02 03:32"),
        ("Retry-After: Wed, 02 Dec 2026 06:00:00 GMT\nrate limited", "2026-12-02 06:00"),
        ("rate limit; try again in 2 hours and 5 minutes", "2026-12-02 05:35"),
        ("usage limit; resets at 2026-12-02T06:15:00Z", "2026-12-02 06:15"),
        ("quota exceeded, resets 17:30", "2026-12-02 17:30"),
        ("usage limit reached, resets at 1am", "2026-12-03 01:00"),  # tomorrow's
        # a date and time is read in the zone named after it, never as UTC
        ("usage limit; resets at 2026-12-02 09:00 Europe/Rome", "2026-12-02 08:00"),
        ("usage limit; resets at 2026-12-02 01:00 PST", "2026-12-02 09:00"),
        ("usage limit; resets at 2026-12-02T06:00:00+01:00[Europe/Rome]", "2026-12-02 05:00"),
        ("usage limit; resets at 2026-12-02 13:00 (Asia/Tokyo)", "2026-12-02 04:00"),
        ("usage limit until 2026-12-02 06:00 and/or later", "2026-12-02 06:00"),  # no zone
    ],
)
def test_a_wall_with_a_reset_time_is_told_apart(output: str, expected: str) -> None:
    until = usage_wall(exit_code=1, output=output, now=NOW)
    assert until is not None and until.astimezone(UTC).strftime("%Y-%m-%d %H:%M") == expected


@pytest.mark.parametrize(
    ("exit_code", "output"),
    [
        (0, "usage limit reached; resets at 5am"),  # it succeeded
        (1, "rate limit reached"),  # no time to tell: an ordinary transient failure
        (1, "test_reset at line 5:30 failed"),  # no wall at all
        (1, "rate limit; Retry-After: 9999999"),  # beyond the horizon
        (1, "usage limit; resets at 2026-12-01T01:00:00Z"),  # in the past
        (1, "usage limit; resets at 2026-12-02 09:00 Mars/Olympus"),  # a zone not known
    ],
)
def test_no_wall_without_a_believable_reset_time(exit_code: int, output: str) -> None:
    assert usage_wall(exit_code=exit_code, output=output, now=NOW) is None


def test_a_wall_suspends_the_run_at_no_cost() -> None:
    until = NOW + timedelta(hours=1)
    decision = after_attempt(
        Progress(failed=2), Wall(until, "limit"), retries=3, failed_passes=0, backoff=1
    )
    assert decision == Suspend(until, "limit")


def test_the_resume_fires_just_past_the_reset_with_the_same_arguments() -> None:
    assert resume_time(datetime(2026, 12, 2, 5, 0, tzinfo=UTC)) == datetime(
        2026, 12, 2, 5, 1, tzinfo=UTC
    )
    assert resume_time(datetime(2026, 12, 2, 5, 0, 30, tzinfo=UTC)) == datetime(
        2026, 12, 2, 5, 2, tzinfo=UTC
    )
    args = ("loop", "run", "--maker", "m", "--resume", "--checker", "c")
    assert resume_args(args) == ("loop", "run", "--maker", "m", "--checker", "c", "--resume")


def test_the_pending_resume_reads_back_and_says_what_is_wrong() -> None:
    record = PendingResume("relay-resume-x", "cron", "2026-12-02T05:01:00+00:00", ("p",), "G1", "t")
    assert parse_record(render_record(record)) == record
    assert parse_record("{}") is None and parse_record("not json") is None
    fine = record_problems(record, present=True, detail="", now=NOW)
    assert fine == []
    missing = record_problems(record, present=False, detail="no line", now=NOW)
    assert missing == ["the resume for 2026-12-02T05:01:00+00:00 is not registered (no line)"]
    late = record_problems(record, present=True, detail="", now=NOW + timedelta(hours=3))
    assert len(late) == 1 and "overdue" in late[0]


PYTEST_OUT = """\
FAILED tests/test_calc.py::test_add - assert 3 == 4
ERROR tests/test_io.py::test_read - FileNotFoundError
FAILED tests/test_calc.py::test_add - assert 3 == 4
2 failed, 1 error in 0.12s
"""


def test_triage_reads_failing_tests_lint_types_and_markers() -> None:
    tests = failing_tests(PYTEST_OUT, gate="python -m pytest -q")
    assert [f.key for f in tests] == [
        "test tests/test_calc.py::test_add",
        "test tests/test_io.py::test_read",
        "test tests/test_calc.py::test_add",
    ]
    assert tests[0].accept == "python -m pytest -q tests/test_calc.py::test_add"
    lint = lint_findings(
        "src/a.py:3:1: F401 `os` imported but unused\nsrc/a.py:9:1: F401 x\n", gate="ruff check"
    )
    assert [(f.key, f.accept) for f in lint] == [
        ("lint src/a.py F401", "ruff check --select F401 src/a.py")
    ]
    types = type_findings("src/a.py:4: error: Incompatible types  [assignment]\n", gate="mypy")
    assert [f.key for f in types] == ["type src/a.py"]
    marks = marker_findings({"src/a.py": "x = 1  # TODO: speed this up\n", "img.png": "TODO"})
    assert [f.title for f in marks] == ["Resolve the TODO at src/a.py:1"]
    assert marks[0].accept == "! grep -qF -- 'x = 1  # TODO: speed this up' src/a.py"


def test_a_finding_is_enqueued_once_whatever_its_goal_became() -> None:
    found = failing_tests(PYTEST_OUT, gate="pytest")
    doc = GoalsFile("", "", (Goal("G1", "Old", "true"),))
    made = enqueue(doc, found)
    assert [(g.id, g.finding) for g in made] == [
        ("G2", "test tests/test_calc.py::test_add"),
        ("G3", "test tests/test_io.py::test_read"),
    ]
    again = GoalsFile("", "", (*doc.goals, *made))
    assert new_findings(found, again.goals) == [] and enqueue(again, found) == ()
    text = render_goals(again)
    assert parse_goals(text).goals == again.goals  # the key survives the file


def test_goals_with_metrics_and_nodes_read_back() -> None:
    goal = Goal(
        "G1",
        "Faster",
        "",
        metric="python bench.py",
        direction="down",
        threshold=5.0,
        runs=3,
        verify_on="win-box",
    )
    text = render_goals(GoalsFile("", "", (goal,)))
    assert "- Metric: `python bench.py`\n- Direction: down\n- Threshold: 5%\n- Runs: 3\n" in text
    assert parse_goals(text).goals == (goal,)
    with pytest.raises(SpineFileError, match="Direction"):
        parse_goals(text.replace("Direction: down", "Direction: sideways"))
    with pytest.raises(SpineFileError, match="Runs"):
        parse_goals(text.replace("Runs: 3", "Runs: 0"))


LOOP = """\
# Loop

## Guardrails

- Tests never break.

## What works here

Found so far.
"""


def test_only_what_works_here_may_change_in_loop_md_and_only_on_relays_path() -> None:
    assert loop_md_touched(LOOP, LOOP) is None
    grown = with_entries(LOOP, ["- Run ruff first [R1]"])
    assert grown == LOOP + "- Run ruff first [R1]\n"
    assert outside_works_here(LOOP, grown) is None  # relay's own self-revision
    # a maker that writes the section itself is refused: rules come through the panel
    said = loop_md_touched(LOOP, grown)
    assert said is not None and "a maker never writes it" in said
    weakened = LOOP.replace("Tests never break.", "Tests may break.")
    for why in (loop_md_touched(LOOP, weakened), outside_works_here(LOOP, weakened)):
        assert why is not None and "`## Guardrails`" in why
    assert loop_md_touched(LOOP, None) is not None
    bare = with_entries("# Loop\n", ["- x"])
    assert bare == "# Loop\n\n## What works here\n\n- x\n"


def test_a_rule_is_proposed_once_it_has_prevented_a_repeat_and_its_goal_is_done() -> None:
    rule = Rule(1, "Lint first", 2, "G1", "lint/format", "lint failed twice", "Run ruff.", 2)
    failures = [
        Failure(1, "G1", 1, 1, "lint/format", "lint", ""),
        Failure(2, "G1", 2, 2, "lint/format", "lint", ""),
    ]
    log = [Iteration(1, "G1", 1, "failed"), Iteration(2, "G1", 2, "failed")]
    done = {"G1", "G2"}
    assert proposals([rule], log, failures, works_here="", done=done) == []  # nothing held yet
    held = [*log, Iteration(3, "G2", 1, "kept")]
    [proposal] = proposals([rule], held, failures, works_here="", done=done)
    assert (proposal.taught, proposal.held) == ((1, 2), 3)
    assert proposal.entry() == (
        "- Run ruff. [R1] (taught by G1 attempt 2, iterations 1, 2; held in iteration 3)"
    )
    assert proposals([rule], held, failures, works_here=proposal.entry(), done=done) == []
    repeat = [*failures, Failure(3, "G2", 1, 3, "lint/format", "lint", "")]
    again = [*log, Iteration(3, "G2", 1, "failed"), Iteration(4, "G2", 2, "kept")]
    assert proposals([rule], again, repeat, works_here="", done=done) == []  # not prevented
    # a rule whose goal ended blocked (or is still open) is never proposed, however it held
    assert proposals([rule], held, failures, works_here="", done={"G2"}) == []


def ballot(who: str, role: str, verdict: Verdict) -> Ballot:
    return Ballot(who, role, Review(verdict, ("found",) if verdict is Verdict.BLOCK else ()))


def test_the_security_panel_needs_every_checker_and_a_red_team_majority() -> None:
    ok, no = Verdict.APPROVE, Verdict.BLOCK
    passed = security_verdict(
        [
            ballot("c1", "checker", ok),
            ballot("r1", "red team", ok),
            ballot("r2", "red team", no),
            ballot("r3", "red team", ok),
        ]
    )
    assert passed.passed and passed.why.endswith("2 of 3 red team clear")
    breach = security_verdict([ballot("c1", "checker", ok), ballot("r1", "red team", no)])
    assert not breach.passed and "found a breach (r1" in breach.why
    tie = security_verdict(
        [ballot("c1", "checker", ok), ballot("r1", "red team", ok), ballot("r2", "red team", no)]
    )
    assert not tie.passed  # half is no majority
    assert not security_verdict([ballot("c1", "checker", no), ballot("r1", "red team", ok)]).passed
    assert "red team" in security_verdict([ballot("c1", "checker", ok)]).why
    assert "checker" in security_verdict([ballot("r1", "red team", ok)]).why


BOARD = "# Board\n\n## Goals\n\n| goal | title |\n\n## Notes\n\nmine\n"


def test_the_verification_job_is_recorded_on_the_board_and_reused() -> None:
    goal = Goal("G1", "T", "make test", verify_on="win")
    text = with_job(BOARD, Job("G1", "win", 12, "relay-loop/g1"))
    assert "| G1 | win | #12 | relay-loop/g1 | open |" in text and "mine\n" in text
    assert open_job(parse_jobs(text), goal) == Job("G1", "win", 12, "relay-loop/g1")
    closed = with_job(text, Job("G1", "win", 12, "relay-loop/g1", "resolved"))
    assert parse_jobs(closed) == (Job("G1", "win", 12, "relay-loop/g1", "resolved"),)
    assert open_job(parse_jobs(closed), goal) is None
    assert closed.count("## Verification jobs") == 1


def test_a_result_done_is_the_pass_anything_else_a_diagnosed_failure() -> None:
    assert judged(Answer(12, 1, "done", "All 1 step(s) succeeded."), node="win")[0]
    passed, what, why = judged(
        Answer(12, 2, "failed", "Step 1 failed.", "E assert 1 == 2"), node="win"
    )
    assert not passed and what == "win answered failed (job #12, RESULT 2)"
    assert why == "Step 1 failed.\n\nE assert 1 == 2"


def test_a_result_that_ran_nothing_goes_to_a_person_not_against_the_maker() -> None:
    """A worker that finds the branch pushed over (or cannot make its box) answers
    ``blocked`` and runs nothing: no step judged the maker's change."""
    said = "Not run: branch `relay-loop/g1` is at bbbbbbbbbbbb, not at aaaaaaaaaaaa."
    held = not_run(Answer(12, 2, "blocked", said, asked=2), node="win")
    assert held == f"win ran nothing (job #12, RESULT 2): {said}"
    for status in ("done", "failed", "partial", "stopped"):
        assert not_run(Answer(12, 2, status, "Step 1 failed."), node="win") is None
    # relay itself failed before any job answered: said as such, by ``judged``
    assert not_run(Answer(0, 0, "blocked", "no relay"), node="win") is None


def test_a_done_counts_only_for_the_task_posted_and_the_candidates_commit() -> None:
    sha, other = "a" * 40, "b" * 40
    ok = Answer(12, 2, "done", "All 1 step(s) succeeded.", commit=sha, asked=2)
    assert judged(ok, node="win", commit=sha) == (
        True,
        "win verified it (job #12, RESULT 2)",
        "",
    )
    # a RESULT for another commit: the branch was pushed over, or an old one replayed
    passed, what, why = judged(replace(ok, commit=other), node="win", commit=sha)
    assert not passed
    assert what == (
        "win answered done at bbbbbbbbbbbb, not at the candidate aaaaaaaaaaaa (job #12, RESULT 2)"
    )
    assert "only a RESULT for the candidate's own commit keeps it" in why
    passed, what, _ = judged(replace(ok, commit=""), node="win", commit=sha)
    assert not passed and "answered done at no commit it names" in what
    # the newest RESULT of the job answers an older TASK (the one posted was made unreadable)
    passed, what, _ = judged(replace(ok, task=1), node="win", commit=sha)
    assert not passed and what == "win answered TASK 1, not TASK 2 (job #12)"


def test_a_file_below_the_coverage_floor_is_a_finding_whose_check_is_real(tmp_path: Path) -> None:
    import json
    import subprocess

    found = coverage_findings({"src/a.py": 50.0, "src/b.py": 90.0}, floor=80, report_gate="")
    assert [(f.key, f.title) for f in found] == [
        ("coverage src/a.py", "Cover src/a.py to 80% (now 50%)")
    ]
    report = tmp_path / "coverage.json"
    for percent, status in ((50.0, 1), (85.0, 0)):
        report.write_text(
            json.dumps({"files": {"src/a.py": {"summary": {"percent_covered": percent}}}})
        )
        done = subprocess.run(found[0].accept, shell=True, cwd=tmp_path, check=False)
        assert done.returncode == status


def test_a_gate_gets_no_credential_and_a_role_only_its_agents_key_and_what_it_was_passed() -> None:
    """A gate runs the candidate's code: the person's other logins (a package index's
    password, a registry token, cloud keys) stayed in its environment and could be sent
    anywhere. Names are read by shape; what the person passed stays."""
    from relay.loop.runenv import credential_names

    names = [
        "TWINE_PASSWORD", "NPM_TOKEN", "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID",
        "GITLAB_TOKEN", "MY_SERVICE_API_KEY", "ANTHROPIC_API_KEY", "DB_PASS", "PGPASSWORD",
        "MYSQL_PWD",
        "PATH", "HOME", "PWD", "LANG", "DATABASE_URL", "KEYBOARD_LAYOUT", "TOKENIZERS_PARALLELISM",
        "BYPASS_CACHE", "VIRTUAL_ENV", "PYTEST_ADDOPTS",
    ]  # fmt: skip
    logins = {
        "TWINE_PASSWORD", "NPM_TOKEN", "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID",
        "GITLAB_TOKEN", "MY_SERVICE_API_KEY", "DB_PASS", "PGPASSWORD", "MYSQL_PWD",
    }  # fmt: skip
    logins |= {"PWD"}  # not a credential, but the person's folder: never a box's
    assert set(credential_names(names, role="gate")) == logins | {"ANTHROPIC_API_KEY"}
    assert set(credential_names(names, role="maker", agent="claude")) == logins
    assert set(credential_names(names, role="maker")) == logins | {"ANTHROPIC_API_KEY"}
    passed = credential_names(names, role="gate", passed=["AWS_SECRET_ACCESS_KEY"])
    assert "AWS_SECRET_ACCESS_KEY" not in passed and "NPM_TOKEN" in passed


def test_one_rule_withholds_relays_tokens_and_gits_ways_from_every_role_and_gate() -> None:
    """The rule the roles and the gates share: relay's own and the forges' tokens (every
    name relay's steps hide), git's and ssh's ways to a credential and another repository,
    and the agent CLIs' folders are withheld whatever the person passed; an agent's own key
    goes to a role, never a gate; what she passed by name goes where she passed it."""
    from relay.edges.steps import HIDDEN_ENV
    from relay.loop.runenv import credential_names

    never = [
        *HIDDEN_ENV, "GH_ENTERPRISE_TOKEN", "RELAY_FOO_SECRET", "GIT_ASKPASS", "SSH_AUTH_SOCK",
        "GIT_SSH_COMMAND", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0",
        "GIT_DIR", "GIT_CONFIG_GLOBAL", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "OLDPWD",
    ]  # fmt: skip
    for role in ("maker", "checker", "gate"):
        assert credential_names(never, role=role, passed=never) == never, role
    keys = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"]
    assert credential_names(keys, role="maker", agent="aider") == []
    assert credential_names(keys, role="checker", agent="claude") == ["OPENAI_API_KEY"]
    assert credential_names(keys, role="gate", agent="claude") == keys
    assert credential_names(["DEPLOY_KEY", "PIP_INDEX_URL"], role="gate") == ["DEPLOY_KEY"]
    assert credential_names(["DEPLOY_KEY"], role="maker", passed=["DEPLOY_KEY"]) == []


def test_an_agents_key_goes_to_its_own_adapters_role_alone() -> None:
    """A plain command maker (``sh tools/m.sh``) got every agent CLI's key, and a claude
    role got OpenAI's: each adapter's role keeps its own CLI's keys, nothing else does,
    unless the person passed the key to it by name."""
    from relay.loop.runenv import AGENT_KEYS, credential_names

    keys = sorted(AGENT_KEYS)
    assert credential_names(keys, role="maker") == keys  # a plain command
    claude = {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"}
    assert set(keys) - set(credential_names(keys, role="maker", agent="claude")) == claude
    codex = {"OPENAI_API_KEY", "CODEX_API_KEY", "AZURE_OPENAI_API_KEY"}
    assert set(keys) - set(credential_names(keys, role="verifier", agent="codex")) == codex
    gemini = {"GEMINI_API_KEY", "GOOGLE_API_KEY"}
    assert set(keys) - set(credential_names(keys, role="red-team", agent="gemini")) == gemini
    assert credential_names(keys, role="gate", agent="aider") == keys
    mine = credential_names(keys, role="maker", passed=["ANTHROPIC_API_KEY"])
    assert "ANTHROPIC_API_KEY" not in mine and "OPENAI_API_KEY" in mine


def test_a_credential_carried_by_value_or_by_a_word_in_the_name_is_withheld() -> None:
    """Names that do not end like a credential reached the maker and the gates with one
    in them: a package index's, a database's and a proxy's URL with a password, the CI's
    signed tokens, an error tracker's DSN. A value with a user in its URL, a JWT or a
    known token's prefix is withheld whatever its name; an honest gate's variables stay;
    what the person passed by name stays."""
    from relay.loop.runenv import credential_names

    jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJyZXBvOnggIn0.c2lnbmF0dXJl"
    values = {
        "PIP_INDEX_URL": "https://me:s3cret@pypi.example.com/simple",
        "PIP_EXTRA_INDEX_URL": "https://pypi.org/simple https://tok@corp.example/simple",
        "DATABASE_URL": "postgres://app:hunter2@db:5432/app",
        "HTTPS_PROXY": "http://u:p@proxy:3128",
        "ALL_PROXY": "socks5://u:p@proxy:1080",
        "REDIS_URL": "redis://:pw@cache:6379/0",
        "ID_TOKEN_VALUE": jwt,
        "BUILD_NOTE": "pushed with ghp_" + "a1B2" * 9,
        "AWS_ID": "AKIA" + "ABCDEFGHIJKLMNOP",
        "CI_JOB_JWT": "x", "CI_JOB_JWT_V2": "x", "SENTRY_DSN": "x", "APP_DSN": "x",
        "SESSION_COOKIE_VALUE": "x", "BROWSER_SESSION": "x", "JWT_SIGNING": "x",
        "ACTIONS_ID_TOKEN_REQUEST_URL": "https://pipelines.example/idtoken",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "x", "ACTIONS_RUNTIME_TOKEN": "x",
        "AZURE_STORAGE_CONNECTION_STRING": "DefaultEndpointsProtocol=https;AccountKey=x",
    }  # fmt: skip
    honest = {
        "PATH": "/usr/bin:/bin", "HOME": "/tmp/box-home", "LANG": "C.UTF-8",
        "PIP_INDEX_URL_PLAIN": "https://pypi.org/simple", "NO_PROXY": "localhost,127.0.0.1",
        "HTTP_PROXY_PLAIN": "http://proxy:3128", "VIRTUAL_ENV": "/srv/p/.venv",
        "PYTEST_ADDOPTS": "-q", "PS1": "\\u@\\h:\\w$ ", "EMAIL": "me@example.com",
        "SSH_URL": "ssh-keygen is not a url", "SK": "sk-short",
    }  # fmt: skip
    every = {**values, **honest}
    for role, agent in (("gate", None), ("maker", None), ("checker", "claude")):
        withheld = credential_names(list(every), role=role, agent=agent, values=every)
        assert set(withheld) == set(values), role
    kept = credential_names(list(values), role="gate", passed=["PIP_INDEX_URL"], values=values)
    assert "PIP_INDEX_URL" not in kept and "DATABASE_URL" in kept


def test_every_box_hides_the_other_tools_logins_in_home_and_where_xdg_puts_them(
    tmp_path: Path,
) -> None:
    """The maker read a Copilot login (a gho_ token that can push), pip's and poetry's
    index passwords, keyrings.alt's plaintext keyring, rclone's, Firebase's, opencode's
    and s3cmd's logins: none was on the list. Each is hidden in HOME, where
    XDG_CONFIG_HOME/XDG_DATA_HOME put it, and where its own variable does."""
    from relay.ratchet.sandbox import hidden_paths

    home, config, data, cargo = (tmp_path / n for n in ("home", "cfg", "data", "cargo"))
    in_home = [
        ".config/github-copilot/hosts.json", ".config/github-copilot/apps.json",
        ".pip/pip.conf", ".config/pip/pip.conf", ".config/pypoetry/auth.toml",
        ".local/share/python_keyring/keyring_pass.cfg", ".config/rclone/rclone.conf",
        ".config/configstore/firebase-tools.json", ".local/share/opencode/auth.json", ".s3cfg",
        ".config/hub", ".git-credentials", ".config/gcloud/credentials.db", ".azure/x",
        ".aws/credentials", ".docker/config.json", ".terraform.d/credentials.tfrc.json",
        ".config/helm/registry/config.json", ".vault-token", ".cargo/credentials.toml",
        ".cargo/credentials", ".gem/credentials", ".m2/settings.xml",
        ".gradle/gradle.properties", ".netrc", ".config/op/config", ".password-store/a.gpg",
        ".gnupg/private-keys-v1.d/k.key", ".boto",
    ]  # fmt: skip
    in_config = ["github-copilot/hosts.json", "pip/pip.conf", "pypoetry/auth.toml", "rclone/x"]
    in_data = ["python_keyring/keyring_pass.cfg", "opencode/auth.json", "keyrings/login"]
    everything = [
        *(home / n for n in in_home), *(config / n for n in in_config),
        *(data / n for n in in_data), cargo / "credentials.toml", tmp_path / "rclone.conf",
    ]  # fmt: skip
    kept = [home / ".cargo/registry/index", home / ".local/share/virtualenvs/x", cargo / "bin/x"]
    kept += [home / ".config/pip/other.conf", home / ".gradle/caches/x", config / "git2/x"]
    for path in [*everything, *kept]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("secret")
    clone = tmp_path / "clone"
    environ = {
        "HOME": str(home), "XDG_CONFIG_HOME": str(config), "XDG_DATA_HOME": str(data),
        "CARGO_HOME": str(cargo), "RCLONE_CONFIG": str(tmp_path / "rclone.conf"),
    }  # fmt: skip
    hidden = hidden_paths(clone, clone / ".git", [], environ)

    def covered(path: Path) -> bool:
        return any(path.resolve().is_relative_to(h) for h in hidden)

    assert [p for p in everything if not covered(p)] == []
    assert [p for p in kept if covered(p)] == []


def test_credentials_inside_a_tool_folder_a_box_shows_whole_are_hidden(tmp_path: Path) -> None:
    """A box shows ~/.pyenv, ~/.nvm, ~/.cargo whole: cargo's registry token in its
    config.toml, a prefix's site-wide pip.conf with an index password, nvm's node's
    etc/npmrc were readable inside. They are hidden by name at any depth, the rest of
    the folder (its interpreters, registries and packages) is not, and the walk skips
    the bulk folders (a certifi bundle under lib/ is nobody's login)."""
    from relay.ratchet.sandbox import hidden_paths, tool_secrets

    home = tmp_path / "home"
    secrets = [
        ".cargo/config.toml", ".cargo/config", ".cargo/credentials.toml",
        ".pyenv/versions/3.11.7/pip.conf", ".pyenv/versions/3.11.7/etc/pip.ini",
        ".nvm/versions/node/v20.1.0/etc/npmrc", ".nvm/.npmrc", ".volta/tools/.pypirc",
        ".local/pipx/venvs/x/auth.json", ".asdf/installs/x/client.pem", ".bun/id.key",
        ".rustup/.netrc", ".sdkman/etc/.git-credentials",
    ]  # fmt: skip
    kept = [
        ".pyenv/versions/3.11.7/bin/python", ".cargo/registry/index/config.toml",
        ".pyenv/versions/3.11.7/lib/python3.11/site-packages/certifi/cacert.pem",
        ".nvm/versions/node/v20.1.0/lib/node_modules/npm/npmrc", ".pyenv/version",
        ".rustup/settings.toml", "projects/pip.conf",
    ]  # fmt: skip
    for name in [*secrets, *kept]:
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text("token = secret\n")
    assert sorted(tool_secrets(home)) == sorted(home / n for n in secrets)
    hidden = hidden_paths(tmp_path / "clone", tmp_path / "clone/.git", [], {"HOME": str(home)})

    def covered(name: str) -> bool:
        return any((home / name).resolve().is_relative_to(h) for h in hidden)

    assert [n for n in secrets if not covered(n)] == []
    assert [n for n in kept if covered(n)] == []
    # the walk is bounded: a huge tool folder costs at most the cap
    many = home / ".pyenv/plugins"
    many.mkdir(parents=True)
    for i in range(50):
        (many / f"p{i}").mkdir()
    assert len(tool_secrets(home, cap=20)) < len(secrets)


def test_a_home_relay_cannot_read_leaves_nothing_to_hide_and_no_traceback(tmp_path: Path) -> None:
    """A HOME relay cannot stat (a user's without `su -`: HOME=/root, EACCES) is as
    unreadable to the box, run as relay: nothing of it to hide, and no traceback. As root
    no folder refuses, so a name too long to stat stands in (the same OSError path)."""
    import os

    from relay.ratchet.sandbox import hidden_paths

    clone = tmp_path / "clone"
    clone.mkdir()
    locked = tmp_path / "locked"
    (locked / ".netrc").parent.mkdir()
    (locked / ".netrc").write_text("machine x password y\n")
    locked.chmod(0)
    try:
        for home in (locked, tmp_path / ("h" * 300)):
            hidden = hidden_paths(clone, clone / ".git", [], {"HOME": str(home)})
            assert hidden[0] == clone.resolve(), hidden
            unseen = [h for h in hidden if h.is_relative_to(home) and os.geteuid() != 0]
            assert unseen == [], hidden
    finally:
        locked.chmod(0o700)


def test_a_box_gets_only_the_variables_on_its_list_what_was_passed_and_its_agents_own() -> None:
    """The deny-lists kept missing logins (a DSN, a CI token, a variable named after
    nothing): a box gets an allow-list of ours instead, PATH, the locale, Python's and
    relay's own for the role; the names the person passed; an agent role its own CLI's
    settings and key, no other's; a gate never an agent's."""
    from relay.loop.runenv import box_names

    names = [
        "PATH", "HOME", "LANG", "LC_ALL", "TERM", "TZ", "USER", "TMPDIR", "VIRTUAL_ENV",
        "PYTHONPATH", "PYTHONSTARTUP", "PYTEST_ADDOPTS", "RELAY_LOOP_BRIEF",
        "DATABASE_URL", "SENTRY_DSN", "SOME_RANDOM_SECRETLESS_NAME", "XDG_CONFIG_HOME",
        "CALC_MODE", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY",
        "RELAY_SANDBOX_SHARE", "AWS_PROFILE", "PYENV_ROOT", "CARGO_REGISTRY_TOKEN",
    ]  # fmt: skip
    ours = [
        "PATH", "HOME", "LANG", "LC_ALL", "TERM", "TZ", "USER", "TMPDIR", "VIRTUAL_ENV",
        "PYTHONPATH", "PYTEST_ADDOPTS", "RELAY_LOOP_BRIEF", "PYENV_ROOT",
    ]  # fmt: skip
    assert box_names(names, role="gate") == ours
    assert box_names(names, role="gate", agent="claude") == ours
    assert box_names(names, role="maker") == ours
    passed = box_names(names, role="gate", passed=["CALC_MODE"])
    assert passed == [*ours[:12], "CALC_MODE", "PYENV_ROOT"]  # in the order they came
    claude = box_names(names, role="maker", agent="claude")
    assert claude == [*ours[:12], "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "PYENV_ROOT"]
    codex = box_names(names, role="checker", agent="codex")
    assert codex == [*ours[:12], "OPENAI_API_KEY", "PYENV_ROOT"]
