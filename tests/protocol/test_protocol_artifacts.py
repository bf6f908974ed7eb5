"""Artifacts in messages: what a TASK may name, and how a RESULT lists them."""

from __future__ import annotations

import pytest

from relay.protocol import Artifact, ResultMsg, Status, TaskMsg, parse_message, render_message
from relay.protocol.master import InvalidValue, build


def test_a_task_names_files_and_globs_inside_the_clone_only() -> None:
    task = TaskMsg(issue=1, node="c", task=1, objective="o", steps=("x",),
                   artifacts=("dist/*.whl", "build/**/report.xml"))  # fmt: skip
    assert parse_message(render_message(task), issue=1) == task
    assert "**Artifacts:** `dist/*.whl`, `build/**/report.xml`" in render_message(task)
    for bad in ("../secret", "/etc/passwd", ".git/config", "a//b", "x\ny"):
        with pytest.raises(InvalidValue):
            build(TaskMsg, issue=1, node="c", task=1, objective="o", steps=("x",), artifacts=(bad,))


def test_a_result_lists_its_artifacts_and_reads_back() -> None:
    url = "https://h/o/r/blob/1/docs/loop/relay/1/artifacts/001/out/r.txt"
    text = Artifact(path="out/r.txt", size=12, sha256="a" * 64, text=True, url=url)
    blob = Artifact(path="core.bin", size=1024, sha256="b" * 64, text=False)
    result = ResultMsg(issue=1, node="w", task=1, status=Status.DONE, summary="s",
                       artifacts=(text, blob))  # fmt: skip
    body = render_message(result)
    assert f"- `out/r.txt`: 12 bytes, text, redacted · [file]({text.url})" in body
    assert f"- `core.bin`: 1024 bytes, binary, sha256 `{'b' * 64}`" in body
    assert parse_message(body, issue=1) == result


def test_any_file_name_travels_under_a_name_a_result_can_carry() -> None:
    """JUnit's nested classes, non-ASCII and non-UTF-8 names are brought back under safe,
    unique names; a name the RESULT carries already is kept."""
    from relay.protocol.work import safe_artifact_name

    not_utf8 = b"b\xff.txt".decode("utf-8", "surrogateescape")
    assert safe_artifact_name("out/r.txt", number=1) == "out/r.txt"
    assert safe_artifact_name("TEST-a.Outer$Inner.xml", number=1) == "TEST-a.Outer_Inner.xml"
    assert safe_artifact_name("ü.txt", number=2) == "_.txt"
    assert safe_artifact_name(not_utf8, number=3) == "b_.txt"
    assert safe_artifact_name("a$.txt", number=4, taken={"a_.txt"}) == "a_-4.txt"
    assert safe_artifact_name("x" * 400 + "$.log", number=5) == "artifact-5.log"
    for name in ("TEST-a.Outer$Inner.xml", "ü.txt", not_utf8, "x" * 400, "d/.git/f\n"):
        safe = safe_artifact_name(name, number=1)
        Artifact(path=safe, size=0, sha256="a" * 64, text=True)  # a RESULT carries it


def test_controls_and_invisible_characters_are_shown_not_obeyed() -> None:
    from relay.protocol.wire import show_controls

    raw = "a\x1b]0;owned\x07b\x9b2J\u202ec\u200bd\x7f" + b"\xff".decode("utf-8", "surrogateescape")
    shown = show_controls(raw)
    assert shown == "a\\x1b]0;owned\\x07b\\x9b2J[U+202E]c[U+200B]d\\x7f\\xff"
    assert show_controls("a\nb\tc\r") == "a\\nb\\tc\\r"
    assert show_controls("a\nb\tc\r", keep="\n\t") == "a\nb\tc\\r"
