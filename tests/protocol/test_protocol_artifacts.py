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
