"""The hidden block every relay comment and issue body ends with, and text neutralising.

Ground rules: a body is a message only if it ends with exactly one block
``<!-- relay:v1 {json} -->`` and contains no other ``<!-- relay:`` marker. The JSON is
written canonically (sorted keys, ``<``/``>``/``&`` escaped) so that it can never close
the HTML comment and so that rendering the same model twice gives the same bytes. Every
free text that goes into the markdown passes through :func:`neutralise`, so captured
output can look like nothing but data.
"""

from __future__ import annotations

import json
import re
from typing import Any

from relay.errors import RemoteProtocolError

VERSION = 1
MARKER = "<!-- relay:"
MAX_BODY = 65_536  # GitHub rejects a longer comment body.
MAX_BLOCK = 48_000

_BLOCK_RE = re.compile(r"<!-- relay:v(\d+) (\{.*\}) -->\n?\Z", re.DOTALL)
_HEADING_RE = re.compile(r"^( {0,3})(#{1,6})(?=[ \t]|$)", re.MULTILINE)
# Code fences, and the underlines that make the line above a (setext) heading.
_FENCE_RE = re.compile(r"^( {0,3})(`{3,}|~{3,}|=+[ \t]*$|-+[ \t]*$)", re.MULTILINE)


# Characters that change how text reads without showing themselves: bidirectional
# controls (a "Trojan Source" step reads differently from what runs), zero-width and
# blank-looking ones (soft hyphen, combining grapheme joiner, Hangul fillers), variation
# selectors, the line and paragraph separators, and the tag characters U+E0000-E007F
# (text an agent reads that a person does not see).
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
    "\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)


def show_invisible(text: str) -> str:
    """``text`` with every bidirectional or zero-width character written out as ``[U+XXXX]``,
    so a person reads exactly what the program reads."""
    return _INVISIBLE.sub(lambda m: f"[U+{ord(m.group()):04X}]", text)


# C0, DEL and C1 (what moves a terminal), and lone surrogates (a file name that is not
# UTF-8, which no terminal, JSON body or comment can carry)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def show_controls(text: str, *, keep: str = "") -> str:
    """``text`` with every C0/C1 control but those in ``keep`` written out (``\\x1b``,
    ``\\n``) and every invisible one as ``[U+XXXX]``: text from outside cannot move a
    terminal's cursor, retitle its window or read backwards to the person."""

    def one(match: re.Match[str]) -> str:
        char = match.group()
        if char in keep:
            return char
        code = ord(char) - 0xDC00 if 0xDC80 <= ord(char) <= 0xDCFF else ord(char)
        return _NAMED.get(char, f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}")

    return show_invisible(_CONTROL.sub(one, text))


class MessageRejected(RemoteProtocolError):
    """A body that is not a well-formed relay message; it is data, never an instruction."""

    code = "message-rejected"

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"not a relay message: {reason}", hint="it is treated as data")


def encode_block(payload: dict[str, Any]) -> str:
    """Render the hidden block for a payload (kind, issue, task, node, fields)."""
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    text = text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    return f"<!-- relay:v{VERSION} {text} -->"


def decode_block(body: str) -> dict[str, Any]:
    """The payload of the one block ``body`` ends with.

    Raises MessageRejected when the block is missing, repeated, of an unknown version,
    too large, or not a JSON object.
    """
    if len(body) > MAX_BODY:
        raise MessageRejected(f"body is {len(body)} characters, over {MAX_BODY}")
    count = body.count(MARKER)
    if count != 1:
        raise MessageRejected("no relay block" if count == 0 else f"{count} relay blocks")
    match = _BLOCK_RE.search(body)
    if match is None:
        raise MessageRejected("the relay block is not at the end or is malformed")
    if match.group(1) != str(VERSION):
        raise MessageRejected(f"unknown block version v{match.group(1)[:10]}")
    if len(match.group(2)) > MAX_BLOCK:
        raise MessageRejected(f"relay block over {MAX_BLOCK} characters")
    try:
        payload = json.loads(match.group(2))
    except (ValueError, RecursionError) as err:
        raise MessageRejected(f"relay block is not JSON ({type(err).__name__})") from None
    if not isinstance(payload, dict):
        raise MessageRejected("relay block is not a JSON object")
    return payload


def neutralise(text: str) -> str:
    """Make text from outside (captured output, summaries) unable to pass for a message.

    Headings lose their heading syntax, HTML comment delimiters are broken, and code
    fences are escaped so the text cannot close the fence it is shown in. Idempotent.
    """
    text = show_invisible(text.replace("\r\n", "\n").replace("\r", "\n"))
    text = text.replace("<!--", "<\\!--").replace("-->", "--\\>")
    text = _HEADING_RE.sub(lambda m: f"{m.group(1)}\\{m.group(2)}", text)
    return _FENCE_RE.sub(lambda m: f"{m.group(1)}\\{m.group(2)}", text)


def one_line(text: str) -> str:
    """Neutralised text folded to a single line, for table cells."""
    return neutralise(" ".join(text.split())).replace("|", "\\|")


def code_span(text: str) -> str:
    """An inline code span holding ``text`` (folded to one line, neutralised)."""
    text = neutralise(" ".join(text.split()))
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def fenced(text: str) -> str:
    """A fenced code block showing ``text`` as it is. Markdown renders nothing inside a
    fence and unescapes nothing either, so headings and underlines are left alone (an
    escape would show as ``\\#``); what could close the fence cannot, because the fence
    is longer than any run of backticks in the text, and comment delimiters are still
    broken so the text cannot pass for a message's block."""
    body = show_invisible(text.replace("\r\n", "\n").replace("\r", "\n")).rstrip("\n")
    body = body.replace("<!--", "<\\!--").replace("-->", "--\\>")
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{body}\n{fence}" if body else f"{fence}text\n{fence}"
