"""The roster: who takes part and whom each node obeys, as a signed, versioned document.

Ground rules: the trust root is on the nodes, never in what a collaborator can write. The
roster's data (the nodes, their keys, their instruction accounts, who may admit others,
the shared scope and the agent's instructions) lives in ``docs/loop/relay/roster.json``
as a chain of revisions, each signed by a node that the revision before it trusts, each
naming the digest of the one before. Every node keeps the newest revision it accepted
(:mod:`relay.node.trust` stores it) and moves forward only along a chain that verifies
from there; a revision that is unsigned, badly signed, forked or older is data, and the
node says so. The node table in LOOP.md is the roster rendered for people: a hand edit of
it changes nothing until an admin node signs it (``relay nodes sign``).

Who may sign the next revision: an *admin* node of the current one may change anything
(admit a node, change a row, the scope); any other member may change only its own row's
accounts and key (a rotation is signed by the old key, so the new one is vouched for).

Theory of operation: :func:`advance` takes the accepted revision (None before the first)
and the chain read from the branch and returns the newest revision it may accept, with
what it refused and why. Nothing here reads a file, a clock or the network.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from relay.protocol.master import DEFAULT_WATCHER_PROMPT, NAME_RE, Account, Master, Node, Scope
from relay.protocol.signatures import (
    SIG_KEY,
    Verdict,
    check_bytes,
    key_bytes,
    parse_keys,
    sign_bytes,
)

ROSTER_PATH = "docs/loop/relay/roster.json"
REQUESTS_DIR = "docs/loop/relay/requests"
FORMAT = "relay-roster"
MAX_REVISIONS = 10_000


class Member(BaseModel):
    """One node of the roster: its name, the accounts it obeys, its keys (the node table's
    ``public key`` cell: current, then retired ones) and whether it may admit others."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=NAME_RE)
    accounts: tuple[Account, ...] = ()
    keys: str = Field(default="", max_length=2000)
    admin: bool = False

    @field_validator("keys")
    @classmethod
    def _one_line(cls, value: str) -> str:
        if "\n" in value or "|" in value or "`" in value:
            raise ValueError("keys are one line of key words")
        return value.strip()

    @property
    def current_key(self) -> str | None:
        """The key this member signs with now."""
        return parse_keys(self.keys).current


class Revision(BaseModel):
    """One revision of the roster, as signed (``sig`` is left out of what it covers)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    revision: int = Field(ge=1)
    repository: str = Field(pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
    previous: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    members: tuple[Member, ...] = Field(min_length=1, max_length=500)
    scope: Scope = Scope()
    data_branch: str | None = Field(default=None, pattern=r"^[A-Za-z0-9._/-]+$")
    watcher_prompt: str | None = Field(default=None, max_length=20_000)
    # the API the nodes talk to, as the admin set it up: what a node that has saved none
    # (a fresh runner, a first join) talks to, never LOOP.md's
    api_url: str | None = Field(default=None, pattern=r"^https?://[^\s`]+$", max_length=500)
    signed_by: str = Field(pattern=NAME_RE)
    at: datetime
    sig: dict[str, str] | None = None

    @field_validator("members")
    @classmethod
    def _unique(cls, members: tuple[Member, ...]) -> tuple[Member, ...]:
        names = [m.name for m in members]
        if len(set(names)) != len(names):
            raise ValueError("member names must be unique")
        return members

    def member(self, name: str) -> Member | None:
        """The member called ``name``, if there is one."""
        return next((m for m in self.members if m.name == name), None)

    def payload(self) -> dict[str, Any]:
        """The revision as JSON data, signature included when it has one."""
        data = self.model_dump(mode="json", exclude_none=False)
        if data.get(SIG_KEY) is None:
            data.pop(SIG_KEY, None)
        return data

    def trust_data(self) -> dict[str, Any]:
        """What a revision says about trust: all but its number, links and signature."""
        data = self.payload()
        for key in ("revision", "previous", "signed_by", "at", SIG_KEY):
            data.pop(key, None)
        return data


def canonical(payload: dict[str, Any]) -> bytes:
    """The bytes a revision's signature covers: the revision without its signature."""
    content = {k: v for k, v in payload.items() if k != SIG_KEY}
    doc = {"roster": content}
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def digest(revision: Revision) -> str:
    """The hex SHA-256 of a signed revision: what the next one names as ``previous``."""
    text = json.dumps(revision.payload(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def fingerprint(public: str) -> str:
    """How a person reads a key aloud: ``SHA256:`` and the base64 of its digest (as ssh)."""
    raw = key_bytes(public) or public.encode()
    return "SHA256:" + base64.b64encode(hashlib.sha256(raw).digest()).decode().rstrip("=")


def matches_fingerprint(public: str, given: str) -> bool:
    """Whether ``given`` (a whole fingerprint, or its first 12 characters or more after
    ``SHA256:``) names ``public``."""
    want = given.strip().removeprefix("SHA256:")
    have = fingerprint(public).removeprefix("SHA256:")
    return len(want) >= 12 and have.startswith(want)


def sign_revision(revision: Revision, *, private_key: bytes) -> Revision:
    """``revision`` signed by ``private_key`` (32 raw bytes)."""
    bare = revision.model_copy(update={"sig": None})
    return bare.model_copy(
        update={"sig": sign_bytes(canonical(bare.payload()), private_key=private_key)}
    )


def _verify(payload: dict[str, Any], public: str) -> Verdict:
    """A revision's (or request's) signature checked against one key."""
    return check_bytes(payload.get(SIG_KEY), canonical(payload), (public,))


class RosterRejected(Exception):
    """A roster document that cannot be read at all (it is data)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def parse_chain(text: str) -> tuple[Revision, ...]:
    """The revisions of a roster document, oldest first; RosterRejected when unreadable."""
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        raise RosterRejected("the roster is not JSON") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("version") != 1:
        raise RosterRejected("the roster is not a relay roster of version 1")
    raw = doc.get("revisions")
    if not isinstance(raw, list) or not raw or len(raw) > MAX_REVISIONS:
        raise RosterRejected("the roster holds no list of revisions")
    try:
        return tuple(Revision.model_validate(item) for item in raw)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise RosterRejected(f"a roster revision is malformed at {where}") from None


def render_chain(chain: tuple[Revision, ...]) -> str:
    """The roster document for ``chain`` (stable bytes: one revision a line)."""
    lines = [json.dumps(r.payload(), sort_keys=True, ensure_ascii=False) for r in chain]
    body = ",\n  ".join(lines)
    return f'{{"format": "{FORMAT}", "version": 1, "revisions": [\n  {body}\n]}}\n'


def step_refusal(old: Revision, new: Revision) -> str | None:
    """Why ``new`` may not follow ``old`` (None when it may): the next number, naming
    ``old``'s digest, for the same repository, signed by a member of ``old`` with the key
    ``old`` lists for it; an admin may change anything, any other member only its own row's
    accounts and keys."""
    where = f"roster revision {new.revision}"
    if new.revision != old.revision + 1 or new.previous != digest(old):
        return f"{where} does not follow revision {old.revision} (rolled back or rewritten?)"
    if new.repository.lower() != old.repository.lower():
        return f"{where} names another repository ({new.repository})"
    signer = old.member(new.signed_by)
    if signer is None or signer.current_key is None:
        return f"{where} is signed by {new.signed_by}, which revision {old.revision} does not trust"
    if _verify(new.payload(), signer.current_key) is not Verdict.VALID:
        return f"{where} does not verify against {new.signed_by}'s key"
    if signer.admin:
        return None
    mine = new.member(signer.name)
    others_old = [m for m in old.members if m.name != signer.name]
    others_new = [m for m in new.members if m.name != signer.name]
    rest_old = {k: v for k, v in old.trust_data().items() if k != "members"}
    rest_new = {k: v for k, v in new.trust_data().items() if k != "members"}
    if others_old != others_new or rest_old != rest_new or mine is None or mine.admin:
        return f"{where} by {signer.name} changes more than {signer.name}'s own row"
    return None


def first_refusal(first: Revision) -> str | None:
    """Why a chain's first revision cannot be a roster at all: it must be revision 1,
    signed by an admin it lists itself."""
    signer = first.member(first.signed_by)
    if first.revision != 1 or first.previous is not None:
        return f"the roster starts at revision {first.revision}, not 1"
    if signer is None or not signer.admin or signer.current_key is None:
        return f"roster revision 1 is signed by {first.signed_by}, not an admin it lists"
    if _verify(first.payload(), signer.current_key) is not Verdict.VALID:
        return f"roster revision 1 does not verify against {first.signed_by}'s key"
    return None


@dataclass(frozen=True)
class Advance:
    """What reading a chain gave: the newest revision to trust (None: none at all), whether
    it is newer than the one accepted before, and what was refused, in words."""

    accepted: Revision | None
    moved: bool = False
    refused: tuple[str, ...] = field(default=())


def advance(accepted: Revision | None, chain: tuple[Revision, ...]) -> Advance:
    """The newest revision a node that trusts ``accepted`` may trust after reading
    ``chain`` (the roster on the branch). With nothing accepted yet the whole chain must
    verify from its first revision (trust on first use: the caller shows it to a person,
    or checks a pinned fingerprint with :func:`signed_by_fingerprint`)."""
    if not chain:
        return Advance(accepted)
    if accepted is None:
        problem = first_refusal(chain[0])
        if problem is not None:
            return Advance(None, refused=(problem,))
        start, base = 1, chain[0]
    else:
        index = accepted.revision - 1
        if index >= len(chain) or digest(chain[index]) != digest(accepted):
            newest = chain[-1].revision
            why = (
                f"the roster on the branch ends at revision {newest}, older than the accepted"
                f" revision {accepted.revision} (rolled back?)"
                if newest < accepted.revision
                else f"the roster on the branch does not hold the accepted revision"
                f" {accepted.revision} (rewritten?)"
            )
            return Advance(accepted, refused=(why,))
        start, base = index + 1, accepted
    current = base
    for revision in chain[start:]:
        problem = step_refusal(current, revision)
        if problem is not None:
            moved = accepted is None or current.revision != accepted.revision
            return Advance(current, moved=moved, refused=(problem,))
        current = revision
    return Advance(current, moved=accepted is None or current.revision != accepted.revision)


def signed_by_fingerprint(chain: tuple[Revision, ...], upto: int, given: str) -> bool:
    """Whether a revision of ``chain`` up to revision ``upto`` was signed by the key a
    person pinned (``relay join --trust``): such a signature can only come from that key's
    holder, and it vouches for every revision before it."""
    for revision in chain[:upto]:
        signer = revision.member(revision.signed_by)
        keys = parse_keys(signer.keys) if signer else None
        if keys is None:
            continue
        for public in (keys.current, *(k for k, _ in keys.retired)):
            if (
                public
                and matches_fingerprint(public, given)
                and _verify(revision.payload(), public) is Verdict.VALID
            ):
                return True
    return False


def next_revision(base: Revision, *, signed_by: str, at: datetime, **changes: Any) -> Revision:
    """The revision after ``base`` with ``changes`` (unsigned: sign it with
    :func:`sign_revision`)."""
    fields = {**base.model_dump(), **changes}
    fields.update(revision=base.revision + 1, previous=digest(base), signed_by=signed_by, at=at)
    fields["sig"] = None
    return Revision.model_validate(fields)


def with_member(revision: Revision, member: Member) -> tuple[Member, ...]:
    """The members with ``member`` added, or put in place of the one of its name."""
    kept = [m for m in revision.members if m.name != member.name]
    placed = [member if m.name == member.name else m for m in revision.members]
    return tuple(placed) if len(kept) != len(revision.members) else (*revision.members, member)


def from_master(master: Master, *, signed_by: str, at: datetime, admins: set[str]) -> Revision:
    """Revision 1 from a master section's node table and scope (``relay init``, and the
    migration of a clone set up by an earlier relay): ``admins`` may admit others."""
    members = tuple(
        Member(name=n.name, accounts=n.accounts, keys=n.public_key, admin=n.name in admins)
        for n in master.nodes
    )
    return Revision(
        revision=1,
        repository=master.repository,
        members=members,
        scope=master.scope,
        data_branch=master.data_branch,
        watcher_prompt=master.watcher_prompt,
        api_url=master.api_url,
        signed_by=signed_by,
        at=at,
    )


def overlay(master: Master, revision: Revision, *, repository: str, api_url: str) -> Master:
    """The master section a node acts on: the trust data of the accepted ``revision``, the
    repository and API saved at join, and only the people's text (the protocol) and the
    non-trust columns (OS, scheduler) from the file."""
    rows = {n.name: n for n in master.nodes}
    nodes = tuple(
        Node(
            name=m.name,
            os=rows[m.name].os if m.name in rows else "",
            accounts=m.accounts,
            scheduler=rows[m.name].scheduler if m.name in rows else "none",
            public_key=m.keys,
        )
        for m in revision.members
    )
    return master.model_copy(
        update={
            "repository": repository,
            "api_url": api_url,
            "data_branch": revision.data_branch,
            "nodes": nodes,
            "scope": revision.scope,
            "watcher_prompt": signed_prompt(revision),
        }
    )


def signed_prompt(revision: Revision) -> str:
    """The watcher instructions a revision's signers vouch for: its own, else (a revision
    written before it held them) relay's default, never the file's, which any pusher
    edits: an agent executor follows them."""
    return revision.watcher_prompt or DEFAULT_WATCHER_PROMPT


def differences(master: Master, revision: Revision) -> list[str]:
    """How the file's section differs from the signed roster, in words that name each
    change: the accounts added and removed (login and id), the scope entries, the lines of
    the instructions. ``relay nodes sign`` signs exactly these, so an admin reads what a
    pusher's edit brings along (each difference is data: it is shown, never followed)."""
    said: list[str] = []
    rows = {n.name: n for n in master.nodes}
    for member in revision.members:
        row = rows.pop(member.name, None)
        if row is None:
            admin = " (an admin)" if member.admin else ""
            said.append(
                f"{member.name}{admin} is missing from the node table: signing removes it"
                " from the roster"
            )
            continue
        ids = {a.id for a in member.accounts}
        if {a.id for a in row.accounts} != ids:
            added = [f"{a.login} ({a.id})" for a in row.accounts if a.id not in ids]
            now = {a.id for a in row.accounts}
            removed = [f"{a.login} ({a.id})" for a in member.accounts if a.id not in now]
            said.append(
                f"{member.name}'s instruction accounts differ from the signed roster:"
                + _changes(added, removed)
            )
        if parse_keys(row.public_key) != parse_keys(member.keys):
            said.append(
                f"{member.name}'s public key differs from the signed roster (not signed: keys"
                " come from the roster and the nodes themselves)"
            )
    # a row the roster does not list grants nothing (a machine waiting to be admitted)
    for setting in Scope.model_fields:
        old, new = getattr(revision.scope, setting), getattr(master.scope, setting)
        if old == new:
            continue
        if isinstance(old, tuple) and isinstance(new, tuple):
            added = [repr(v) for v in new if v not in old]
            removed = [repr(v) for v in old if v not in new]
            change = _changes(added, removed) if added or removed else f" reordered as {new!r}"
        else:
            change = f" {_word(old)} becomes {_word(new)}"
        said.append(f"the shared scope's {setting} differs from the signed roster:{change}")
    if (master.data_branch or None) != revision.data_branch:
        said.append(
            "the data branch differs from the signed roster:"
            f" {revision.data_branch or '(none)'} becomes {master.data_branch or '(none)'}"
        )
    if master.watcher_prompt != signed_prompt(revision):
        old_lines = signed_prompt(revision).splitlines()
        new_lines = (master.watcher_prompt or "").splitlines()
        added = [repr(line) for line in new_lines if line not in old_lines]
        removed = [repr(line) for line in old_lines if line not in new_lines]
        change = _changes(added, removed) if added or removed else " its lines are reordered"
        said.append(f"the watcher instructions differ from the signed roster:{change}")
    return said


def _changes(added: list[str], removed: list[str]) -> str:
    """`` adds a, b; removes c`` (each part only when it has entries)."""
    parts = [f"{verb} {', '.join(items)}" for verb, items in (("adds", added), ("removes", removed))
             if items]  # fmt: skip
    return " " + "; ".join(parts)


def _word(value: object) -> str:
    """A scope setting as LOOP.md writes it (an enum by its value)."""
    return str(getattr(value, "value", value))


def change_digest(base: Revision, said: list[str]) -> str:
    """A short name for one change set: the differences listed against ``base``. ``relay
    nodes sign --yes DIGEST`` signs only while LOOP.md and the roster still give this one."""
    text = json.dumps([digest(base), said], separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


REQUEST_FORMAT = "relay-join-request"


class JoinRequest(BaseModel):
    """A machine's request to join (`relay join` by a node the roster does not list):
    data until an admin node signs a revision that admits it (`relay nodes approve`). It
    is signed by the key it asks to be trusted with, so the admin admits the key that
    wrote it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=NAME_RE)
    repository: str = Field(pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
    accounts: tuple[Account, ...] = ()
    key: str = Field(max_length=200)
    os: str = Field(default="", max_length=80)
    at: datetime
    sig: dict[str, str] | None = None


def request_path(name: str) -> str:
    """Where a node's join request is kept on the branch."""
    return f"{REQUESTS_DIR}/{name}.json"


def sign_request(request: JoinRequest, *, private_key: bytes) -> str:
    """The request's document, signed by the key it asks to be trusted with."""
    bare = request.model_copy(update={"sig": None}).model_dump(mode="json")
    bare.pop(SIG_KEY, None)
    sig = sign_bytes(canonical(bare), private_key=private_key)
    doc = {"format": REQUEST_FORMAT, "version": 1, "request": {**bare, SIG_KEY: sig}}
    return json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def parse_request(text: str) -> JoinRequest:
    """A join request whose signature verifies against the key it carries; RosterRejected
    otherwise."""
    try:
        doc = json.loads(text)
        raw = doc["request"] if doc.get("format") == REQUEST_FORMAT else None
        request = JoinRequest.model_validate(raw)
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        raise RosterRejected("the join request cannot be read") from None
    payload = request.model_dump(mode="json")
    if key_bytes(request.key) is None or _verify(payload, request.key) is not Verdict.VALID:
        raise RosterRejected(f"the join request of {request.name} is not signed by its key")
    return request
