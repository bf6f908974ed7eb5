"""The roster a node trusts: read from the branch, checked against the one it accepted.

Every verb that opens a clone as a node comes through :func:`establish`: it reads the
roster document where relay keeps its spine, moves the node's accepted revision forward
only along a chain that verifies (:func:`relay.protocol.roster.advance`), and returns the
master section the node acts on — the accepted revision's trust data laid over the file,
with the repository and API saved at join. What the branch says and the node does not
follow (a refused revision, a hand-edited table, another API URL) comes back as notes, said
by `relay status`, `relay doctor` and once in the thread of each job the node binds.

The first roster is trusted on first use: at `relay join` (shown to the person with each
key's fingerprint), when pinned (`relay join --trust FINGERPRINT`, ``RELAY_TRUST``), and
nothing else: a clone that trusts no revision yet takes none from the branch until
`relay join` or a pin, and one that joined before (it joined under an earlier relay, or its
accepted file was removed) only pinned: that is no first use. A
spine with no roster yet (set up by an earlier relay) is migrated by `relay join --trust`
with the node's own key's fingerprint (a person checked the table and vouches for it): the
node table becomes revision 1, signed by this node, unless the roster is in the clone's
history or another was published meanwhile.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from relay.edges.local import NodeConfig, NodeState
from relay.errors import ConfigError
from relay.node.spine import read_spine_file
from relay.protocol import Master
from relay.protocol.roster import (
    ROSTER_PATH,
    Revision,
    RosterRejected,
    advance,
    differences,
    fingerprint,
    from_master,
    matches_fingerprint,
    overlay,
    parse_chain,
    render_chain,
    sign_revision,
    signed_by_fingerprint,
)
from relay.protocol.signatures import public_key_of

if TYPE_CHECKING:
    from relay.node.apply import Edit
    from relay.node.context import NodeContext

TRUST_ENV = "RELAY_TRUST"  # a pinned fingerprint, for a runner that starts with nothing


@dataclass
class Trust:
    """What a node trusts now: the accepted revision (None: none yet), what the branch says
    that is not followed (``notes``), and what to tell the person now (``said``)."""

    revision: Revision | None
    notes: list[str] = field(default_factory=list)
    said: list[str] = field(default_factory=list)


def accepted(state: NodeState) -> Revision | None:
    """The revision this node accepted, None before the first; ConfigError when the file
    is not one (delete it and join again)."""
    raw = state.accepted_roster()
    if raw is None:
        return None
    try:
        return Revision.model_validate(raw)
    except ValueError:
        raise ConfigError(
            f"the accepted roster in {state.roster_path} is unreadable",
            hint="delete it and run `relay join --trust FINGERPRINT` with the admin key's"
            " fingerprint (`relay nodes` on an admin node shows it)",
        ) from None


def read_chain(root: Path, *, branch: str | None) -> tuple[tuple[Revision, ...], str | None]:
    """The roster chain on the branch (empty when there is none) and, when it cannot be
    read, why (it is data)."""
    text = read_spine_file(root, ROSTER_PATH, branch=branch)
    if text is None:
        return (), None
    try:
        return parse_chain(text), None
    except RosterRejected as err:
        return (), f"the roster on the branch cannot be read: {err.reason}"


def describe(revision: Revision) -> str:
    """The members of a revision with each key's fingerprint, for a person to check."""
    parts = []
    for member in revision.members:
        key = member.current_key
        print_ = fingerprint(key) if key else "no key"
        parts.append(f"{member.name} ({print_}{', admin' if member.admin else ''})")
    return "; ".join(parts)


def establish(
    root: Path,
    state: NodeState,
    config: NodeConfig | None,
    file_master: Master,
    *,
    node: str,
    first_use: bool = False,
    pin: str | None = None,
) -> Trust:
    """The roster this node trusts after reading the branch (see the module docstring)."""
    pin = pin or os.environ.get(TRUST_ENV) or None
    mine = accepted(state)
    branch = mine.data_branch if mine is not None else file_master.data_branch
    chain, unreadable = read_chain(root, branch=branch)
    trust = Trust(mine, notes=[unreadable] if unreadable else [])
    if mine is not None and not chain and unreadable is None:
        trust.notes.append(
            f"the roster is gone from the branch (this node keeps revision {mine.revision});"
            f" new machines cannot join until {ROSTER_PATH} is restored from the history"
        )
    legacy = unreadable is None and config is not None and bool(file_master.node(config.node))
    if mine is None and not (first_use or pin):
        # Nothing on the branch vouches for itself to a clone that trusts no revision yet:
        # a roster there (or a node table to migrate) is anyone's with push access, and a
        # public key it lists proves nothing. Only a person at `relay join`, shown each
        # key's fingerprint, or a pinned fingerprint starts the chain.
        if chain or legacy:
            trust.notes.append(
                "this clone has not accepted a roster yet: run `relay join` (it shows each"
                f" key's fingerprint) or `relay join --trust FINGERPRINT` (or set {TRUST_ENV})"
                " with the admin key's fingerprint"
            )
        return trust
    if mine is None and chain and not pin and config is not None:
        # A clone that joined before and trusts no revision now (an upgrade, or its
        # accepted file removed) is no first use: a roster a pusher planted meanwhile, with
        # this node's public key in it, would be taken at its next `relay join`.
        trust.notes.append(
            "this clone joined before and trusts no roster now, and the one on the branch"
            " is anyone's with push access: pin the admin key's fingerprint with `relay join"
            " --trust FINGERPRINT` (`relay nodes` on an admin node shows it)"
        )
        return trust
    if mine is None and not chain:
        if legacy and first_use and config is not None:
            held = state.signing_key(config.node) or state.new_signing_key(config.node)
            own = fingerprint(public_key_of(held))
            if not pin or not matches_fingerprint(public_key_of(held), pin):
                # the table is anyone's with push access, and what this clone fetched says
                # nothing of what was pushed and rewritten since: a person who checked it
                # vouches for it, as its admin, by naming this node's own key
                trust.notes.append(
                    "this spine has no signed roster yet: check LOOP.md's node table, then on"
                    " the node that is to be its admin run `relay join --trust FINGERPRINT`"
                    f" with that node's own key's fingerprint (this node's: {own}): the table"
                    " becomes revision 1, signed by it"
                )
                return trust
            if roster_ever(root):
                # a roster was there and is gone: a pusher's deletion, not an earlier relay's
                # spine; the table she may have edited since is not signed as revision 1
                trust.notes.append(
                    f"the roster is gone from the branch but is in its history: restore"
                    f" {ROSTER_PATH} from the history, then `relay join --trust FINGERPRINT`"
                )
                return trust
            return migrate(root, state, config, file_master)
        return trust
    moved = advance(mine, chain)
    trust.notes += list(moved.refused)
    if mine is None and moved.accepted is not None:
        if pin and not signed_by_fingerprint(chain, moved.accepted.revision, pin):
            raise ConfigError(
                f"the roster of {moved.accepted.repository} is not signed by the key {pin}",
                hint="check the fingerprint with `relay nodes` on an admin node",
            )
        how = "as pinned" if pin else "on first use"
        trust.said.append(
            f"trusted the roster of {moved.accepted.repository} {how}: revision"
            f" {moved.accepted.revision}, signed by {moved.accepted.signed_by}; nodes:"
            f" {describe(moved.accepted)}"
        )
    if moved.moved and moved.accepted is not None:
        state.save_roster(moved.accepted.payload())
    trust.revision = moved.accepted
    return trust


def roster_ever(root: Path) -> bool:
    """Whether the roster document is in the history of any ref the clone has: a spine
    that an earlier relay set up never held one."""
    from relay.node.spine import in_history

    return in_history(root, ROSTER_PATH)


def migrate(root: Path, state: NodeState, config: NodeConfig, file_master: Master) -> Trust:
    """A spine set up by an earlier relay: its node table becomes roster revision 1, signed
    by this node (which holds a key from now on), published and accepted."""
    from relay.edges.git import Clone
    from relay.node.apply import publish_edits
    from relay.protocol.signatures import NodeKeys, parse_keys, render_keys

    node = config.node
    key = state.signing_key(node) or state.new_signing_key(node)
    public = public_key_of(key)
    keys = parse_keys(file_master.node(node).public_key)  # type: ignore[union-attr]
    if keys.current != public:
        keys = NodeKeys(current=public, retired=keys.retired)
    rows = tuple(
        n.model_copy(update={"public_key": render_keys(keys)}) if n.name == node else n
        for n in file_master.nodes
    )
    # the connection facts this node saved at join, not the file's (a pusher may have
    # changed them before the upgrade)
    master = file_master.model_copy(
        update={
            "nodes": rows,
            "api_url": config.api_url,
            "repository": config.repo or file_master.repository,
        }
    )
    first = sign_revision(
        from_master(master, signed_by=node, at=datetime.now(UTC), admins={node}), private_key=key
    )

    def edit(old: str | None) -> str:
        if old is not None:  # another node migrated first: keep its roster
            return old
        return render_chain((first,))

    clone = Clone.open(root)
    publish_edits(
        clone,
        {Path(ROSTER_PATH): edit},
        f"relay: the node table becomes a signed roster ({node})",
        branch=file_master.data_branch,
    )
    clone.refresh()
    chain, _ = read_chain(root, branch=file_master.data_branch)
    won = advance(None, chain).accepted
    if won is None:
        raise ConfigError("the roster just published cannot be read back", hint="run again")
    if won.payload() != first.payload():  # another roster got there first: not this one
        return Trust(
            None,
            notes=[
                "a roster was published while this node migrated the table, and it is not the"
                " one this node signed: pin the admin key's fingerprint with `relay join"
                " --trust FINGERPRINT`"
            ],
        )
    state.save_roster(won.payload())
    said = (
        f"migrated the node table to a signed roster: revision 1, signed by {won.signed_by}"
        f" ({describe(won)})"
    )
    return Trust(won, said=[said])


def effective(
    file_master: Master, trust: Trust, *, repository: str, api_url: str, config: NodeConfig | None
) -> Master:
    """The master section a node acts on: the trusted roster over the file (no node at all
    before a roster is trusted), with the repository and API saved at join; what differs
    is added to ``trust.notes``."""
    from relay.edges.github.credentials import api_base_url

    if config is not None or trust.revision is not None:
        named = api_base_url(file_master.api_url)
        if named.rstrip("/") != api_url.rstrip("/"):
            trust.notes.append(
                f"LOOP.md names the API {file_master.api_url}, but this node talks to"
                f" {api_url} (saved at join, or the signed roster's); it is not followed: run"
                " `relay join --api URL` to change it"
            )
        if file_master.repository.lower() != repository.lower():
            trust.notes.append(
                f"LOOP.md names the repository {file_master.repository}, but this node"
                f" works on {repository} (saved at join, or the signed roster's); it is not"
                " followed"
            )
    if trust.revision is None:
        return file_master.model_copy(
            update={"repository": repository, "api_url": api_url, "nodes": ()}
        )
    trust.notes += [
        f"{said}: the node table in LOOP.md is not followed; an admin node signs a hand"
        " edit with `relay nodes sign`"
        for said in differences(file_master, trust.revision)
    ]
    return overlay(file_master, trust.revision, repository=repository, api_url=api_url)


def publish_revision(
    ctx: NodeContext,
    change: Callable[[Revision], Revision],
    message: str,
    *,
    also: Mapping[Path, Edit] | None = None,
) -> Revision:
    """Sign the revision ``change`` makes of the roster's tip with this node's key and
    publish it (with the edits ``also``, the node table people read, in the same commit).
    The tip must be the revision this node trusts (another node's newer revision that this
    node can verify is taken as the base on a rejected push). Returns the new revision.

    Raises ConfigError when this node trusts no roster, holds no key, or the branch's
    roster is not one it trusts."""
    from relay.node.apply import publish_edits

    key = ctx.state.signing_key(ctx.node)
    if ctx.trust.revision is None or key is None:
        raise ConfigError(
            f"{ctx.node} trusts no roster or holds no key", hint="run `relay join` first"
        )
    made: list[Revision] = []
    mine = ctx.trust.revision

    def edit(old: str | None) -> str:
        chain = parse_chain(old) if old else ()
        base = advance(mine, chain)
        if base.refused or base.accepted is None or base.accepted.revision != len(chain):
            why = "; ".join(base.refused) or "it holds no revision this node trusts"
            raise ConfigError(f"the roster on the branch is not one {ctx.node} trusts: {why}")
        new = sign_revision(change(base.accepted), private_key=key)
        made[:] = [new]
        return render_chain((*chain, new))

    edits: dict[Path, Edit] = {Path(ROSTER_PATH): edit, **(also or {})}
    publish_edits(ctx.clone, edits, message, branch=mine.data_branch)
    ctx.reload_master()
    return made[0]
