"""Secrets handed to a program on its command line, in the program's own spelling.

``--password VALUE`` and ``KEY=VALUE`` are found by the shared rules (``assignments``); these
are the common tools whose flags name no secret: ``mysql -pSECRET`` (the value glued to
``-p``), ``docker login -p VALUE`` (and podman, nerdctl, buildah, skopeo, helm registry,
oras), ``sshpass -pVALUE`` and ``sshpass -p VALUE``, and ``aws configure set
aws_secret_access_key VALUE``. The ``-p`` forms ride on the shared dash rule (``tokens``),
which already stops at every dash, and then look back along the line for the tool;
``configure set`` is a rule of its own, anchored on words that ordinary build output seldom
holds (see ``rules`` for why that is cheap). Only the value is replaced.
"""

from __future__ import annotations

import re

from relay.redact.assignments import stands_in, value_end
from relay.redact.rules import Kind, Rule, rule

_VALUE = rb"(?P<pw>[^\s'\"\-][^\s'\"]{0,4095})"
# Without the leading dash: the shared dash rule supplies it. ``pgap`` tells ``-pVALUE``
# (mysql) from ``-p VALUE`` (a registry login); a bare ``-p`` asks at the prompt.
# Refused inside the regex, so that build logs cost no Python check each: a dash inside a
# word (``site-packages``) and the compilers' and find's own -p flags.
P_FLAG = (
    rb"(?<=[\s'\"(]-)p(?!thread|ipe|edantic|ie\b|ic\b|g\b|rint|rune|ath|refix|rofile|ython)"
    rb"(?P<pgap>[ \t]*)['\"]?" + _VALUE
)
# The command, as a word of its own on the line (not ``-I/usr/include/mysql``).
_MYSQL = re.compile(rb"(?:^|[^\w\-./])(?:[^\s\-]\S*/)?mysql[a-z]*[ \t]")
_LOGIN = re.compile(
    rb"(?:^|[^\w\-.])(?:docker|podman|nerdctl|buildah|skopeo|helm[ \t]+registry|oras)"
    rb"[ \t]+login[ \t]"
)

# sshpass takes the password glued or apart (``sshpass -pVALUE ssh …``, ``sshpass -p VALUE``),
# as its own option: between it and ``-p`` only its other options (a later ``-p`` is ssh's port).
_SSHPASS = re.compile(
    rb"(?:^|[^\w\-.])(?:[^\s\-]\S*/)?sshpass(?:[ \t]+-[dfpev]\S*+(?:[ \t]+[^\s\-]\S*+)?)*+[ \t]+\Z"
)


_QUOTED = {39: "sq", 34: "dq"}  # ', "


def _value(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """The password, to its closing quote when quoted (``-p 'two words'``): the regex
    reads one word of it."""
    start, end = m.span("pw")
    quote = _QUOTED.get(block[start - 1]) if start > 0 else None
    if quote is not None:
        end = value_end(block, quote, start, end)
    return None if stands_in(block, start, end) else (start, end)


def p_flag_span(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """``-pSECRET`` after ``mysql``; ``-p SECRET`` after ``docker login`` and its kin."""
    # At most 300 bytes back: on a line with no break in sight, the whole block before each
    # -p would make a log of dashes quadratic.
    floor = max(0, m.start() - 300)
    line = max(block.rfind(b"\n", floor, m.start()) + 1, floor)
    head = block[line : m.start()].lower()
    command = _LOGIN if m.group("pgap") else _MYSQL
    if command.search(head) or (b"sshpass" in head and _SSHPASS.search(head)):
        return _value(block, m)
    return None


SHELL_RULES: tuple[Rule, ...] = (
    rule(
        Kind.SECRET,
        rb"configure[ \t]+set[ \t]+(?:[a-z0-9_\-]+\.){0,4}"
        rb"[a-z0-9_]{0,40}(?:secret|token|password|key)[a-z0-9_]{0,40}[ \t]+['\"]?" + _VALUE,
        lower=True,
        check=_value,
        gate=rb"configure[ \t]+set[ \t]",
    ),
)
