"""The worker's seal on a task's log: its memory that the task ran, which a file at the
log's path written by anyone else (on any branch) is not. Pure: no git, no clock."""

from __future__ import annotations

import pytest
from test_protocol_signatures import new_key

from relay.protocol.signatures import public_key_of, sign_body
from relay.protocol.work import seal_line, sealed_by

REPO = "acme/widgets"


def sealed(log: str, key: bytes, *, issue: int = 7, task: int = 2, node: str = "w") -> bytes:
    body, line = seal_line(log, issue=issue, task=task, node=node)
    return (body + sign_body(line, repo=REPO, private_key=key).rstrip("\n") + "\n").encode()


def check(data: bytes, key: bytes, *, issue: int = 7, task: int = 2, node: str = "w") -> bool:
    keys = (public_key_of(key),)
    return sealed_by(data, repo=REPO, issue=issue, task=task, node=node, keys=keys)


@pytest.mark.parametrize("log", ["relay TASK 2 of #7 on w\n\n$ make\nok\n", "no newline", ""])
def test_a_log_the_worker_sealed_is_its_own_for_that_task_only(log: str) -> None:
    key = new_key()
    data = sealed(log, key)
    assert data.decode().startswith(log)
    assert check(data, key)
    assert not check(data, key, task=3)  # copied to the next task's path
    assert not check(data, key, issue=8)
    assert not check(data, key, node="other")
    assert not check(data, new_key())  # another node's key, or hers
    keys = (public_key_of(key),)
    assert not sealed_by(data, repo="acme/other", issue=7, task=2, node="w", keys=keys)


def test_a_sealed_log_edited_or_cut_or_unsigned_says_nothing() -> None:
    key = new_key()
    data = sealed("$ make\nok\n", key)
    assert not check(data.replace(b"ok", b"no"), key)  # the lines above the seal changed
    assert not check(b"$ evil\n" + data, key)  # a line put in front
    assert not check(data.rstrip(b"\n"), key)  # the seal is a whole last line
    assert not check(data + b"more\n", key)  # the seal is the last line
    body, line = seal_line("$ make\nok\n", issue=7, task=2, node="w")
    assert not check((body + line + "\n").encode(), key)  # never signed
    assert not check(b"nothing ran\n", key)  # the file she plants
    assert not check(b"\xff\xfe" + data, key)
