"""The parsers a pass runs on what anyone can write, as one list: the fuzz test and the
fuzz benchmark feed each the same garbage, and each must answer with data or a
RemoteProtocolError (MessageRejected, MasterSectionError…), never anything else.

Ground rule: no target may raise any other exception on any input.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from relay.errors import LocalUsageError, RemoteProtocolError
from relay.protocol.body import parse_body
from relay.protocol.master import Master
from relay.protocol.master_text import parse_master
from relay.protocol.messages import parse_message
from relay.protocol.signatures import parse_keys, unsigned
from relay.protocol.snapshot import Comment, Issue, User
from relay.protocol.thread import NotAJob, read_thread
from relay.protocol.wire import decode_block

_WHEN = datetime(2026, 1, 1, tzinfo=UTC)
_SOMEONE = User(id=1, login="someone")


def _thread(text: str) -> object:
    """A whole thread: the text as the issue body and as a comment on it."""
    comment = Comment(id=1, author=_SOMEONE, created_at=_WHEN, updated_at=_WHEN, body=text)
    issue = Issue(number=1, author=_SOMEONE, body=text, comments=(comment,))
    return read_thread(issue, Master(repository="o/r"))


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
