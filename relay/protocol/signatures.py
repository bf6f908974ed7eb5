"""Signed messages: which node wrote a block, proven by an Ed25519 signature.

Ground rules: a signature covers a canonical form that binds the repository, the issue,
the task number, the kind and the whole content of the block (its ``kind``, ``issue``,
``task``, ``node`` and ``fields``), so a block copied to another issue, another task or
another repository, or changed in any field, no longer verifies. The signature rides in
the block itself (``"sig": {"alg", "key", "value"}``) and is left out of the canonical
form. Keys are written ``ed25519:<base64 of the 32 raw bytes>`` in the node table's
``public key`` column. Nothing here reads a clock or a file: the private key is handed in.

Trust never rests on timestamps or on who edited a comment last: a block that verifies
against the key of the node whose role it claims counts, edited or not, because its
content is what was signed; a block that does not is data.
"""

from __future__ import annotations

import base64
import binascii
import json
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from relay.protocol.wire import MessageRejected, decode_block, encode_block

ALGORITHM = "ed25519"
PREFIX = f"{ALGORITHM}:"
SIG_KEY = "sig"


class Verdict(StrEnum):
    """What checking a block's signature found."""

    VALID = "valid"
    MISSING = "missing"
    BAD = "bad"


def canonical(payload: dict[str, Any], *, repo: str, issue: int | None = None) -> bytes:
    """The bytes a signature covers: the block without its signature, the repository, and
    for a job body (whose block names no issue: it is written before the issue exists)
    the issue it was signed for, so a body copied to another issue no longer verifies."""
    content = {k: v for k, v in payload.items() if k != SIG_KEY}
    document: dict[str, Any] = {"repo": repo.lower(), "block": content}
    if payload.get("kind") == "job":
        document["issue"] = issue
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def public_key_text(raw: bytes) -> str:
    """How a public key is written in the node table."""
    return PREFIX + base64.b64encode(raw).decode()


def key_bytes(text: str) -> bytes | None:
    """The 32 raw bytes of a key as the node table writes it; None when it is not one."""
    if not text.startswith(PREFIX):
        return None
    try:
        raw = base64.b64decode(text[len(PREFIX) :], validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw if len(raw) == 32 else None


def public_key_of(private_key: bytes) -> str:
    """The node-table text of the public half of a private key (32 raw bytes)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    public = Ed25519PrivateKey.from_private_bytes(private_key).public_key()
    return public_key_text(public.public_bytes(Encoding.Raw, PublicFormat.Raw))


def key_id(public: str) -> str:
    """A short name for a key (its first 12 base64 characters), to say which one signed."""
    return public[len(PREFIX) : len(PREFIX) + 12]


def sign_bytes(data: bytes, *, private_key: bytes) -> dict[str, str]:
    """The signature block (``alg``, ``key``, ``value``) of ``private_key`` (32 raw bytes)
    over ``data``: the one way anything relay writes is signed — messages, bodies, roster
    revisions and join requests, each over its own canonical form."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    key = Ed25519PrivateKey.from_private_bytes(private_key)
    public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return {
        "alg": ALGORITHM,
        "key": key_id(public_key_text(public)),
        "value": base64.b64encode(key.sign(data)).decode(),
    }


def check_bytes(sig: object, data: bytes, public_keys: tuple[str, ...]) -> Verdict:
    """Whether the signature block ``sig`` is one of ``public_keys`` over ``data``."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    if sig is None:
        return Verdict.MISSING
    if not isinstance(sig, dict) or sig.get("alg") != ALGORITHM:
        return Verdict.BAD
    try:
        value = base64.b64decode(str(sig.get("value", "")), validate=True)
    except (binascii.Error, ValueError):
        return Verdict.BAD
    for text in public_keys:
        raw = key_bytes(text)
        if raw is None:
            continue
        try:
            Ed25519PublicKey.from_public_bytes(raw).verify(value, data)
        except (InvalidSignature, ValueError):
            continue
        return Verdict.VALID
    return Verdict.BAD


def sign_body(body: str, *, repo: str, private_key: bytes, issue: int | None = None) -> str:
    """``body`` with its block signed by ``private_key`` (32 raw bytes); a body with no
    block is returned as it is. Any earlier signature is replaced. A job body is signed
    for ``issue``."""
    try:
        payload = decode_block(body)
    except MessageRejected:
        return body
    payload.pop(SIG_KEY, None)
    data = canonical(payload, repo=repo, issue=issue)
    payload[SIG_KEY] = sign_bytes(data, private_key=private_key)
    return _with_block(body, payload)


def verify_payload(
    payload: dict[str, Any],
    *,
    repo: str,
    public_keys: tuple[str, ...],
    issue: int | None = None,
) -> Verdict:
    """Whether ``payload`` carries a signature by one of ``public_keys`` over its content
    (a job body: signed for ``issue``)."""
    data = canonical(payload, repo=repo, issue=issue)
    return check_bytes(payload.get(SIG_KEY), data, public_keys)


def unsigned(body: str) -> str:
    """``body`` with the signature taken out of its block (what relay rendered before
    signing); a body without a readable block is returned as it is."""
    try:
        payload = decode_block(body)
    except MessageRejected:
        return body
    if SIG_KEY not in payload:
        return body
    payload.pop(SIG_KEY)
    return _with_block(body, payload)


def _with_block(body: str, payload: dict[str, Any]) -> str:
    start = body.rindex("<!-- relay:")
    return body[:start] + encode_block(payload) + "\n"


RETIRED = "retired:"


class NodeKeys(BaseModel):
    """The keys of one node as its ``public key`` cell lists them: the current one, and
    retired ones, each valid for messages posted before its rotation (``until``)."""

    model_config = ConfigDict(frozen=True)

    current: str | None = None
    retired: tuple[tuple[str, datetime], ...] = ()

    def valid_at(self, posted: datetime) -> tuple[str, ...]:
        """The keys that may have signed a message posted at ``posted``."""
        old = tuple(key for key, until in self.retired if posted < until)
        return ((self.current,) if self.current else ()) + old


def parse_keys(cell: str) -> NodeKeys:
    """A node's keys from its table cell (``ed25519:K`` then ``retired:ed25519:K@ISO``
    words); words that are not keys are left out, so a bad cell means no key, not an error."""
    current: str | None = None
    retired: list[tuple[str, datetime]] = []
    for word in cell.split():
        if word.startswith(RETIRED):
            key, _, when = word[len(RETIRED) :].partition("@")
            until = _when(when)
            if key_bytes(key) is not None and until is not None:
                retired.append((key, until))
        elif current is None and key_bytes(word) is not None:
            current = word
    return NodeKeys(current=current, retired=tuple(retired))


def render_keys(keys: NodeKeys) -> str:
    """The table cell for a node's keys."""
    words = [keys.current] if keys.current else []
    words += [f"{RETIRED}{key}@{until:%Y-%m-%dT%H:%M:%SZ}" for key, until in keys.retired]
    return " ".join(words)


def rotated(keys: NodeKeys, new: str, *, at: datetime) -> NodeKeys:
    """The keys after a rotation at ``at``: ``new`` is current, the old one retired then."""
    old = ((keys.current, at),) if keys.current and keys.current != new else ()
    return NodeKeys(current=new, retired=(*old, *keys.retired))


def _when(text: str) -> datetime | None:
    try:
        moment = datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC)
