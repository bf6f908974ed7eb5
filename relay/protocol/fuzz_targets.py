"""The parsers a pass runs on what anyone can write, as one list: the fuzz test and the
fuzz benchmark feed each the same garbage, and each must answer with data or a
RemoteProtocolError (MessageRejected, MasterSectionError…), never anything else.

Ground rule: no target may raise any other exception on any input.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import UTC, datetime

from relay.errors import LocalUsageError, RemoteProtocolError
from relay.protocol.body import JobBody, parse_body, render_body
from relay.protocol.destructive import classify
from relay.protocol.master import Account, Master, Node
from relay.protocol.master_text import parse_master
from relay.protocol.messages import parse_message
from relay.protocol.signatures import parse_keys, unsigned
from relay.protocol.snapshot import Comment, Issue, User
from relay.protocol.thread import NotAJob, read_thread
from relay.protocol.wire import decode_block

_WHEN = datetime(2026, 1, 1, tzinfo=UTC)
_SOMEONE = User(id=1, login="someone")


# A repository with two nodes that trust the same account, the worker with a key: a
# garbage comment on a real job gets as far as the trust rules and the signature check.
_ACCOUNTS = (Account(id=1, login="someone"),)
_WORKER_KEY = "ed25519:" + "A" * 43 + "="
_MASTER = Master(
    repository="o/r",
    nodes=(
        Node(name="ctl", accounts=_ACCOUNTS),
        Node(name="wrk", accounts=_ACCOUNTS, public_key=_WORKER_KEY),
    ),
)
_JOB = render_body(JobBody(controller="ctl", worker="wrk", objective="fuzz"))


def _thread(text: str) -> object:
    """Whole threads: the text as the body of an issue (with itself as a comment), and
    as comments on a well-formed job — as the TASK's author would post them, and edited."""
    comment = Comment(id=1, author=_SOMEONE, created_at=_WHEN, updated_at=_WHEN, body=text)
    later = _WHEN.replace(second=1)
    edited = comment.model_copy(update={"id": 2, "updated_at": later})
    with contextlib.suppress(RemoteProtocolError, NotAJob):
        read_thread(Issue(number=1, author=_SOMEONE, body=text, comments=(comment,)), _MASTER)
    job = Issue(number=1, author=_SOMEONE, body=_JOB, comments=(comment, edited))
    return read_thread(job, _MASTER)


# What each target may raise on garbage: the repository's own file (the master section)
# answers with the error that tells its people what to fix; everything else is remote data.
DATA_ERRORS: tuple[type[Exception], ...] = (RemoteProtocolError, NotAJob)
MASTER_ERRORS: tuple[type[Exception], ...] = (RemoteProtocolError, LocalUsageError)

TARGETS: dict[str, Callable[[str], object]] = {
    "decode_block": decode_block,
    "parse_message": lambda text: parse_message(text, issue=1),
    "parse_body": parse_body,
    "parse_master": parse_master,
    "parse_keys": parse_keys,
    "unsigned": unsigned,
    "read_thread": _thread,
    "classify": classify,  # a TASK's step, read by every worker whatever scope it names
}
ALLOWED: dict[str, tuple[type[Exception], ...]] = {
    name: MASTER_ERRORS if name == "parse_master" else DATA_ERRORS for name in TARGETS
}


def garbage_kinds() -> tuple[str, ...]:
    """Fragments garbage is built from: relay's own markers, JSON and markdown shapes."""
    return (
        "<!-- relay:v1 ", " -->", "<!-- relay:v2 {} -->", '{"kind":"task","issue":1,',
        '"fields":{', '"steps":["x"]', '"sig":{"alg":"ed25519","value":"', "}", "]", "\\u0000",
        "### TASK 1", "## Relay", "| node | OS | instruction accounts | scheduler |",
        "| --- | --- | --- | --- |", "ed25519:", "retired:ed25519:", "@2026-01-01T00:00:00Z",
        "\u202e", "\r\n", "```", "\n", "💥", "9" * 30,
    )  # fmt: skip
