"""Redaction: nothing secret or personal leaves the worker's machine.

``Redactor`` (pure) replaces token-shaped secrets, this node's own secret values, and
personal and machine data with named placeholders; ``gather_facts`` (the one edge) reads
the machine's user, home, host names and secret environment variables to hand to it.

Where the finds come from: ``formats`` (the table of self-identifying token formats, one
RE2 pass), ``named`` and ``assignments`` (values a name calls secret, in every syntax),
``tokens``, ``shell`` and ``commands`` (headers, URLs, key blocks, command lines, multi-line
strings), ``network`` (addresses), ``literals`` (this node's own values, in every encoding)
and ``disguises`` (the same values spaced, folded, reversed, re-cased, wrapped; a long one
by its pieces, ``runs``), all found by one search of a block's canonical text (``canon``);
``placeholders`` says what only looks like a secret, ``values`` and ``expressions`` what a
named value's shape and the code around it say. ``prefilter`` picks, in one RE2 pass, the
lines any rule but the table could match, so that the rules read only those. The package
imports nothing of relay but ``relay.errors``.
"""

from __future__ import annotations

from relay.redact.engine import DEFAULT_ALLOWED
from relay.redact.facts import gather_facts
from relay.redact.literals import MachineFacts
from relay.redact.redactor import MAX_REDACTED_SHARE, RedactedStream, Redactor
from relay.redact.rules import Kind, placeholder
from relay.redact.stream import RedactionReport, StreamRedactor

__all__ = [
    "DEFAULT_ALLOWED",
    "MAX_REDACTED_SHARE",
    "Kind",
    "MachineFacts",
    "RedactedStream",
    "RedactionReport",
    "Redactor",
    "StreamRedactor",
    "gather_facts",
    "placeholder",
]
