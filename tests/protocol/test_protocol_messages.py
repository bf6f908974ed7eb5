"""Messages and bodies: round trips, neutralising, and garbage that must stay data."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relay.errors import RemoteProtocolError
from relay.protocol import (
    ClaimMsg,
    ClosureMsg,
    EscalationMsg,
    HalfDoneMsg,
    JobBody,
    MessageRejected,
    ResultMsg,
    TaskMsg,
    neutralise,
    parse_body,
    parse_message,
    render_body,
    render_message,
)
from relay.protocol.body import Hypothesis
from relay.protocol.logs import EXCERPT_LINES, LINE_CHARS, excerpt
from relay.protocol.master import InvalidValue
from relay.protocol.wire import MAX_BODY, decode_block, encode_block

NODE = st.from_regex(r"\A[a-z][a-z0-9-]{0,12}\Z")
TEXT = st.text(max_size=200)
WHEN = st.datetimes(
    min_value=datetime(2020, 1, 1), max_value=datetime(2040, 1, 1), timezones=st.just(UTC)
).map(lambda d: d.replace(microsecond=0))
STEP = st.text(min_size=1, max_size=80).filter(lambda s: "\n" not in s and "\r" not in s)
EXCERPT = st.lists(
    st.text(max_size=60).map(lambda s: s.replace("\n", " ").replace("\r", " ")), max_size=30
).map("\n".join)

TASKS = st.builds(
    TaskMsg,
    issue=st.integers(1, 10**6),
    node=NODE,
    task=st.integers(1, 999),
    objective=TEXT,
    steps=st.lists(STEP, min_size=1, max_size=5).map(tuple),
    capture=TEXT,
    scope=st.sampled_from(["build", "test", "diagnostics", "destructive"]),
    authorized_by_human=st.booleans(),
    fallback=TEXT,
    checkout=st.none() | st.from_regex(r"\A[a-z0-9_][a-z0-9_-]{0,9}(/[a-z0-9_][a-z0-9_-]{0,8})?\Z"),
)
RESULTS = st.builds(
    ResultMsg,
    issue=st.integers(1, 10**6),
    node=NODE,
    task=st.integers(1, 999),
    status=st.sampled_from(["done", "failed", "partial", "blocked", "stopped"]),
    summary=TEXT,
    log_url=st.none()
    | st.just("https://example.org/o/r/blob/abc/docs/loop/relay/1/logs/result-001.log"),
    excerpt=EXCERPT,
    observations=TEXT,
    failed_step=st.none() | st.integers(1, 30),
)
OTHERS = st.one_of(
    st.builds(
        ClaimMsg,
        issue=st.integers(1, 99),
        node=NODE,
        task=st.integers(1, 99),
        claimed_at=WHEN,
        lease_until=WHEN,
    ),
    st.builds(
        HalfDoneMsg,
        issue=st.integers(1, 99),
        node=NODE,
        task=st.integers(1, 99),
        known=TEXT,
        reported_at=WHEN,
    ),
    st.builds(
        EscalationMsg,
        issue=st.integers(1, 99),
        node=NODE,
        hypothesis=st.integers(1, 9),
        strikes=st.integers(1, 9),
        mentions=st.lists(st.from_regex(r"\A[a-z][a-z0-9-]{0,10}\Z"), max_size=3).map(tuple),
        reason=TEXT,
    ),
    st.builds(ClosureMsg, issue=st.integers(1, 99), node=NODE, summary=TEXT, resolved_at=WHEN),
)
MESSAGES = st.one_of(TASKS, RESULTS, OTHERS)


def markdown_part(body: str) -> str:
    return body[: body.rindex("<!-- relay:")]


@given(MESSAGES)
@settings(max_examples=300)
def test_every_message_round_trips_and_carries_one_block(message: object) -> None:
    body = render_message(message)  # type: ignore[arg-type]
    assert parse_message(body, issue=message.issue) == message  # type: ignore[attr-defined]
    assert body.count("<!-- relay:") == 1 and body.count("-->") == 1
    assert body.endswith(" -->\n")


@given(RESULTS)
@settings(max_examples=200)
def test_captured_output_never_shapes_the_markdown(result: ResultMsg) -> None:
    """Outside the excerpt's fence nothing from the output is markdown; inside it nothing
    closes the fence before its end (CommonMark: a closing fence is at least as long)."""
    markdown = markdown_part(render_message(result))
    opened = re.search(r"^(`{3,})text$", markdown, re.MULTILINE)
    assert (opened is not None) == bool(result.excerpt.strip())
    outside, inside = markdown, ""
    if opened is not None:
        fence = opened.group(1)
        end = markdown.index(f"\n{fence}\n", opened.end())
        inside = markdown[opened.end() : end]
        outside = markdown[: opened.start()] + markdown[end + len(fence) + 2 :]
        closers = re.findall(rf"^ {{0,3}}`{{{len(fence)},}}[ \t]*$", inside, re.MULTILINE)
        assert not closers, closers
    headings = re.findall(r"^ {0,3}#{1,6}(?:[ \t].*)?$", outside, re.MULTILINE)
    assert headings == [f"### RESULT {result.task} · {result.status.value}"]
    assert not re.search(r"^ {0,3}(?:`{3,}|~{3,})", outside, re.MULTILINE)


def test_the_excerpts_fence_shows_the_output_unescaped() -> None:
    """Markdown unescapes nothing in a fence: ``#`` stays ``#``, and a fence in the output
    is outgrown rather than escaped."""
    excerpt = "# comment\n```\n=====\n"
    result = ResultMsg(issue=4, node="win", task=1, status="done", summary="s", excerpt=excerpt)
    markdown = markdown_part(render_message(result))
    assert "````text\n# comment\n```\n=====\n````" in markdown, markdown
    assert "\\#" not in markdown


def test_an_excerpt_holding_a_task_and_a_block_stays_data() -> None:
    task = TaskMsg(issue=4, node="mac", task=9, objective="rm", steps=("rm -rf /",))
    excerpt = "### TASK 9\n" + render_message(task)
    result = ResultMsg(issue=4, node="win", task=1, status="done", summary="s", excerpt=excerpt)
    body = render_message(result)
    message = parse_message(body, issue=4)
    assert isinstance(message, ResultMsg) and message.excerpt == excerpt
    assert "\n### TASK 9" in body and "<\\!-- relay:v1" in body


@given(st.text(max_size=300))
@settings(max_examples=400)
def test_neutralise_leaves_nothing_message_shaped_and_is_idempotent(text: str) -> None:
    out = neutralise(text)
    assert "<!--" not in out and "-->" not in out
    assert not re.search(
        r"^ {0,3}(#{1,6}([ \t]|$)|`{3,}|~{3,}|=+[ \t]*$|-+[ \t]*$)", out, re.MULTILINE
    )
    assert neutralise(out) == out


def test_edited_markdown_is_rejected() -> None:
    body = render_message(TaskMsg(issue=3, node="mac", task=1, objective="look", steps=("ls",)))
    with pytest.raises(MessageRejected, match="does not match"):
        parse_message(body.replace("look", "delete", 1), issue=3)
    with pytest.raises(MessageRejected, match="issue 3, not 4"):
        parse_message(body, issue=4)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("hello", "no relay block"),
        ("<!-- relay:v1 {} --> <!-- relay:v1 {} -->", "2 relay blocks"),
        ("<!-- relay:v1 {} -->\ntrailing words", "not at the end"),
        ('<!-- relay:v2 {"kind":"task"} -->', "unknown block version"),
        ("<!-- relay:v1 {nope} -->", "not JSON"),
        ('<!-- relay:v1 {"kind":"task"} -->', "no fields"),
        ('<!-- relay:v1 {"kind":"song","fields":{}} -->', "unknown kind"),
        ('<!-- relay:v1 {"kind":"task","fields":{},"x":1} -->', "unknown keys"),
        ('<!-- relay:v1 {"kind":"task","fields":{"issue":1},"issue":1} -->', "repeats"),
        ('<!-- relay:v1 {"kind":"task","fields":{}} -->', "task block"),
        ("x" * (MAX_BODY + 1), "over"),
        ('<!-- relay:v1 {"a":"' + "x" * 50_000 + '"} -->', "over"),
    ],
)
def test_malformed_blocks_are_rejected_with_a_reason(body: str, reason: str) -> None:
    if reason == "task block":
        body = body.replace('"fields":{}', '"fields":{"objective":1},"issue":1,"node":"a","task":1')
    with pytest.raises(MessageRejected, match=reason):
        parse_message(body, issue=1)


@given(st.text(max_size=400))
@settings(max_examples=300)
def test_garbage_bodies_raise_only_remote_protocol_errors(body: str) -> None:
    with pytest.raises(RemoteProtocolError):
        parse_message(body, issue=1)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
PAYLOADS = st.fixed_dictionaries(
    {"kind": st.sampled_from(["task", "result", "claim", "job", "closure"]) | st.text(max_size=5)},
    optional={
        "issue": JSON | st.integers(1, 3),
        "task": JSON,
        "node": JSON,
        "fields": st.dictionaries(
            st.sampled_from(["objective", "steps", "status", "summary", "x"]), JSON
        ),
    },
)


@given(PAYLOADS, st.text(max_size=50))
@settings(max_examples=300)
def test_garbage_blocks_are_data_or_rejected(payload: dict[str, object], prefix: str) -> None:
    body = prefix.replace("<!--", "") + "\n" + encode_block(payload) + "\n"
    try:
        message = parse_message(body, issue=1)
    except RemoteProtocolError:
        return
    assert render_message(message) == body  # only relay's own rendering parses


def test_too_long_messages_are_refused_when_rendered() -> None:
    result = ResultMsg(
        issue=1,
        node="w",
        task=1,
        status="done",
        summary="<" * 4000,
        observations="<" * 4000,
        excerpt="\n".join(["<" * 260] * 30),
    )
    with pytest.raises(InvalidValue, match="too long"):
        render_message(result)


def test_message_fields_are_validated() -> None:
    with pytest.raises(ValueError):
        ResultMsg(issue=1, node="w", task=1, status="done", summary="s", excerpt="x\n" * 31)
    with pytest.raises(ValueError):
        ResultMsg(
            issue=1, node="w", task=1, status="done", summary="s", log_url="javascript:alert(1)"
        )


JOBS = st.builds(
    JobBody,
    controller=st.just("mac"),
    worker=st.just("win"),
    objective=st.text(min_size=1, max_size=200),
    state=TEXT,
    resolution=TEXT,
    hypotheses=st.lists(
        st.tuples(
            st.text(min_size=1, max_size=50),
            st.sampled_from(["untested", "refuted"]),
            st.integers(0, 3),
        ),
        max_size=4,
    ).map(
        lambda hs: tuple(
            Hypothesis(number=i, text=t, outcome=o, strikes=s) for i, (t, o, s) in enumerate(hs, 1)
        )
    ),
)


@given(JOBS)
@settings(max_examples=200)
def test_job_bodies_round_trip(job: JobBody) -> None:
    body = render_body(job)
    assert parse_body(body) == job
    assert body.count("<!-- relay:") == 1


def test_a_body_block_of_another_kind_is_not_a_job() -> None:
    with pytest.raises(MessageRejected, match="not a job"):
        parse_body(
            render_message(
                ClosureMsg(
                    issue=1, node="a", summary="s", resolved_at=datetime(2026, 1, 1, tzinfo=UTC)
                )
            )
        )
    payload = decode_block(render_body(JobBody(controller="a", worker="b", objective="o")))
    assert payload["kind"] == "job" and payload["issue"] is None


def test_the_excerpt_keeps_the_last_lines_and_cuts_long_ones() -> None:
    output = "\n".join(f"line {i}" for i in range(100)) + "\n" + "x" * 500 + "\r\n"
    cut = "\n".join(excerpt(output, failed=False))
    lines = cut.split("\n")
    assert len(lines) == EXCERPT_LINES == 30 and lines[0] == "line 71"
    assert lines[-1] == "x" * (LINE_CHARS - 1) + "…"
    assert ResultMsg(issue=1, node="w", task=1, status="done", summary="s", excerpt=cut)
    assert excerpt("", failed=False) == []


def test_bidirectional_and_zero_width_characters_are_shown_escaped() -> None:
    trojan = "echo ok \u202e; rm -rf ~ \u2066\u200b"
    body = render_message(TaskMsg(issue=1, node="c", task=1, objective="o\u200d", steps=(trojan,)))
    markdown = body[: body.rindex("<!-- relay:")]
    for char in ("\u202e", "\u2066", "\u200b", "\u200d"):
        assert char not in markdown
    assert "[U+202E]" in markdown and "[U+2066]" in markdown and "[U+200D]" in markdown
    parsed = parse_message(body, issue=1)
    assert parsed.steps == (trojan,)  # type: ignore[union-attr]  # what runs is what was sent
    result = ResultMsg(issue=1, node="w", task=1, status="done", summary="s", excerpt="a\u202eb")
    assert "\u202e" not in render_message(result).split("<!-- relay:")[0]


def test_tag_characters_separators_and_blank_lookalikes_are_shown_escaped_too() -> None:
    hidden = "\U000e0041\U000e0042\u2028\u00ad\u3164\ufe0f\u034f"
    smuggled = f"echo ok{hidden}"
    body = render_message(
        TaskMsg(issue=1, node="c", task=1, objective=f"o{hidden}", steps=(smuggled,))
    )
    markdown = body[: body.rindex("<!-- relay:")]
    for char in hidden:
        assert char not in markdown, f"U+{ord(char):04X} reached the thread raw"
    assert "[U+E0041][U+E0042]" in markdown and "[U+2028]" in markdown and "[U+3164]" in markdown
    assert parse_message(body, issue=1).steps == (smuggled,)  # type: ignore[union-attr]


def test_a_stopped_result_names_the_interrupted_step_and_the_steps_that_never_ran() -> None:
    from relay.protocol.messages import ResultMsg, Status, TaskMsg, parse_message, render_message
    from relay.protocol.work import StepEnd, stopped_summary

    task = TaskMsg(issue=4, node="ctl", task=2, objective="o", steps=("make", "sleep 40", "ls"))
    cut = StepEnd(number=2, command="sleep 40")
    status, summary, failed = stopped_summary(task, ran=2, interrupted=cut, by="Ctrl-C")
    assert (status, failed) == (Status.STOPPED, 2)
    assert summary == (
        "Stopped on the node (Ctrl-C) during step 2 of 3 (`sleep 40`); never ran: step 3 (`ls`)."
    )
    between = stopped_summary(task, ran=1, interrupted=None, by="SIGTERM")
    assert between[1] == (
        "Stopped on the node (SIGTERM) before step 2 of 3; never ran: step 2 (`sleep 40`),"
        " step 3 (`ls`)."
    )
    assert between[2] is None
    last = stopped_summary(task, ran=3, interrupted=StepEnd(number=3, command="ls"), by="Ctrl-C")
    assert last[1].endswith("(`ls`); no step was left to run.")
    result = ResultMsg(
        issue=4, node="wrk", task=2, status=status, summary=summary, failed_step=failed
    )
    body = render_message(result)
    assert body.startswith("### RESULT 2 · stopped\n")
    assert "**Interrupted step:** 2" in body and "Failed step" not in body
    assert parse_message(body, issue=4) == result
