"""`relay nodes`: the signed roster — who takes part, their keys, who waits to join.

`relay nodes` lists the members of the roster this node trusts (each key's fingerprint,
the admins), the join requests waiting, and what the branch says that is not followed.
An admin node admits a request (`relay nodes approve NAME`), or signs a hand edit of the
node table and shared scope in LOOP.md (`relay nodes sign`): either is a new revision of
the roster, signed by its key, that every node verifies before it follows it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from relay.commands.common import add_common, context
from relay.commands.output import Output
from relay.edges.ownpath import program
from relay.errors import ConfigError, LocalUsageError

if TYPE_CHECKING:  # loaded when the verb runs, after the fetch: not on its way to the wire
    from relay.node.context import NodeContext
    from relay.protocol.roster import JoinRequest, Revision


def register(sub: Any) -> None:
    """Add `nodes`, `nodes approve` and `nodes sign`."""
    p: argparse.ArgumentParser = sub.add_parser(
        "nodes", help="the signed roster: members, keys, join requests"
    )
    add_common(p)
    p.set_defaults(func=run_list)
    verbs = p.add_subparsers(dest="nodes_verb", metavar="ACTION")
    ap = verbs.add_parser("approve", help="admit a node that asked to join (an admin node)")
    ap.add_argument("name", help="the node that asked to join")
    ap.add_argument(
        "--fingerprint",
        default=None,
        help="the fingerprint `relay join` printed on the new machine: the request is admitted"
        " only if its key has it (without it, relay asks at a terminal and refuses elsewhere)",
    )
    ap.add_argument("--admin", action="store_true", help="the new node may admit others too")
    add_common(ap)
    ap.set_defaults(func=run_approve)
    sp = verbs.add_parser(
        "sign", help="sign the node table and shared scope of LOOP.md as the next revision"
    )
    sp.add_argument(
        "--yes",
        nargs="?",
        const="",
        default=None,
        metavar="DIGEST",
        help="sign the differences listed (without it they are only listed: anyone with push"
        " access may have edited LOOP.md, so read them first); with the change set's DIGEST"
        " the listing printed, only while LOOP.md and the roster still give that change set",
    )
    add_common(sp)
    sp.set_defaults(func=run_sign)
    kp = verbs.add_parser(
        "key", help="this node's key fingerprint (read it out to the admin who admits it)"
    )
    add_common(kp)
    kp.set_defaults(func=run_key)


def run_key(args: argparse.Namespace) -> Output:
    """The fingerprint of the key this clone holds for its node: what the admin passes to
    `relay nodes approve NAME --fingerprint` after reading it out on this machine."""
    from relay.protocol.roster import fingerprint
    from relay.protocol.signatures import public_key_of

    ctx = context(args)
    key = ctx.state.signing_key(ctx.node)
    if key is None:
        raise ConfigError(f"this clone holds no key for {ctx.node}", hint="run `relay join`")
    shown = fingerprint(public_key_of(key))
    return Output(lines=(shown,), data={"node": ctx.node, "fingerprint": shown})


def requests(ctx: NodeContext) -> list[JoinRequest]:
    """The join requests on the branch whose node the roster does not list (or lists with
    no key), each verified against the key it carries; unreadable ones are skipped."""
    from relay.protocol.roster import REQUESTS_DIR, RosterRejected, parse_request

    branch = ctx.master.data_branch
    ref = f"refs/remotes/origin/{branch or 'HEAD'}"
    listed = subprocess.run(
        [program("git"), "ls-tree", "--name-only", f"{ref}:{REQUESTS_DIR}"],
        cwd=ctx.root, capture_output=True, text=True, check=False,
    )  # fmt: skip
    names = [n.removesuffix(".json") for n in listed.stdout.split() if n.endswith(".json")]
    found = []
    for name in names[:200]:
        try:
            request = parse_request(_request_text(ctx, name) or "")
        except RosterRejected:
            continue
        member = ctx.trust.revision.member(request.name) if ctx.trust.revision else None
        if request.name == name and (member is None or member.current_key is None):
            found.append(request)
    return found


def _request_text(ctx: NodeContext, name: str) -> str | None:
    from relay.node.spine import read_spine_file
    from relay.protocol.roster import request_path

    return read_spine_file(ctx.root, request_path(name), branch=ctx.master.data_branch)


def run_list(args: argparse.Namespace) -> Output:
    """The roster this node trusts, the requests waiting and what is not followed."""
    ctx = context(args, need_node=False, pull=True)  # the fetch first: the roster's after it
    from relay.protocol.roster import fingerprint

    revision = ctx.trust.revision
    if revision is None:
        lines = ["this clone trusts no roster yet: run `relay join`", *ctx.trust.notes]
        return Output(lines=tuple(lines), data={"revision": None, "members": []}, exit_status=1)
    lines = [f"roster of {revision.repository}, revision {revision.revision}"]
    members = []
    for m in revision.members:
        key = m.current_key
        shown = fingerprint(key) if key else "no key (its messages are data)"
        role = ", admin" if m.admin else ""
        accounts = ", ".join(str(a) for a in m.accounts) or "none"
        lines.append(f"  {m.name}{role}: key {shown}; instruction accounts: {accounts}")
        members.append({"name": m.name, "admin": m.admin, "fingerprint": key and fingerprint(key)})
    waiting = requests(ctx)
    for r in waiting:
        lines.append(
            f"  asks to join: {r.name}, key {fingerprint(r.key)}, accounts"
            f" {', '.join(str(a) for a in r.accounts) or 'none'}"
            f" — `relay nodes approve {r.name} --fingerprint FP` on an admin node, FP read out"
            f" on {r.name}"
        )
    lines += [f"not followed: {note}" for note in ctx.trust.notes]
    data = {
        "revision": revision.revision,
        "members": members,
        "requests": [r.name for r in waiting],
        "notes": list(ctx.trust.notes),
    }
    return Output(lines=tuple(lines), data=data)


def _admin(ctx: NodeContext) -> Revision:
    revision = ctx.trust.revision
    me = revision.member(ctx.node) if revision else None
    if revision is None or me is None or not me.admin:
        raise LocalUsageError(
            f"{ctx.node} is not an admin of the roster, so it cannot sign this",
            hint="run it on the node that ran `relay init` (`relay nodes` lists the admins)",
        )
    return revision


def run_approve(args: argparse.Namespace) -> Output:
    """Admit the node that asked to join: a revision adding it, signed by this admin."""
    ctx = context(args, pull=True)  # the fetch first: the roster's modules load after it
    from relay.node.context import LOOP_PATH
    from relay.node.trust import publish_revision
    from relay.protocol import Node, add_node, has_section, parse_master
    from relay.protocol.roster import (
        Member,
        RosterRejected,
        fingerprint,
        next_revision,
        parse_request,
        with_member,
    )

    _admin(ctx)
    text = _request_text(ctx, args.name)
    if text is None:
        raise ConfigError(
            f"no join request from {args.name}", hint=f"run `relay join --node {args.name}` there"
        )
    try:
        request = parse_request(text)
    except RosterRejected as err:
        raise ConfigError(err.reason, hint="ask the node to run `relay join` again") from None
    if request.name != args.name or request.repository.lower() != ctx.repo.lower():
        raise ConfigError(f"the join request of {args.name} names another node or repository")
    known = ctx.trust.revision.member(args.name) if ctx.trust.revision else None
    if known is not None and known.current_key is not None:
        raise LocalUsageError(
            f"{args.name} is a member already; its row changes only by its own key",
            hint=f"`relay join --accounts` or `--rotate-key` on {args.name}",
        )
    if not args.fingerprint and not _confirmed(request):
        raise ConfigError(
            f"admitting {args.name} needs the fingerprint its `relay join` printed (anyone with"
            " push access can replace a waiting request)",
            hint=f"run `relay nodes approve {args.name} --fingerprint FP` with FP read out on"
            f" {args.name}",
        )
    if args.fingerprint and fingerprint(request.key) != args.fingerprint.strip():
        raise ConfigError(
            f"the request of {args.name} has key {fingerprint(request.key)}, not"
            f" {args.fingerprint}",
            hint="do not admit it: someone else may have written it",
        )
    member = Member(
        name=request.name, accounts=request.accounts, keys=request.key, admin=args.admin
    )

    def change(base: Revision) -> Revision:
        placed = with_member(base, member)
        return next_revision(base, signed_by=ctx.node, at=datetime.now(UTC), members=placed)

    row = Node(name=request.name, os=request.os, accounts=request.accounts, public_key=request.key)

    def table(old: str | None) -> str:
        text = old or ""
        listed = parse_master(text).node(request.name) if has_section(text) else None
        return text if listed is not None else add_node(text, row)

    also = {LOOP_PATH: table}
    made = publish_revision(ctx, change, f"relay: {ctx.node} admits {args.name}", also=also)
    checked = "checked" if args.fingerprint else "confirmed at the terminal"
    lines = (
        f"admitted {args.name} (key {fingerprint(request.key)}, {checked}; accounts"
        f" {', '.join(str(a) for a in request.accounts) or 'none'}): roster revision"
        f" {made.revision}",
    )
    return Output(lines=lines, data={"node": args.name, "revision": made.revision})


def _confirmed(request: JoinRequest) -> bool:
    """A person at a terminal says the request's key is the one its `relay join` printed
    (False with no terminal: a script names the fingerprint)."""
    from relay.protocol.roster import fingerprint

    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return False
    accounts = ", ".join(str(a) for a in request.accounts) or "none"
    sys.stderr.write(
        f"{request.name} asks to join with key {fingerprint(request.key)} (accounts {accounts}).\n"
        f"Is that the fingerprint `relay join` printed on {request.name}? [y/N]: "
    )
    sys.stderr.flush()
    try:
        return input().strip().lower() in ("y", "yes")
    except EOFError:
        return False


def run_sign(args: argparse.Namespace) -> Output:
    """Sign what a person edited in LOOP.md's node table (instruction accounts, admins are
    not read from it) and shared scope as the next revision; keys come only from the roster
    and the nodes themselves. The listing names every change and a digest of the set;
    ``--yes DIGEST`` signs only that set, so an edit pushed after the listing is not signed
    unread."""
    ctx = context(args, pull=True)  # the fetch first: the roster's modules load after it
    from relay.node.trust import publish_revision
    from relay.protocol.roster import change_digest, differences, next_revision

    base = _admin(ctx)
    file_master = ctx.file_master
    if file_master is None:
        raise ConfigError("LOOP.md cannot be read", hint="run `relay init` first")
    said = differences(file_master, base)
    if not said:
        return Output(lines=("the node table and scope match the signed roster",), data={})
    listed = change_digest(base, said)
    expected: str | None = args.yes
    if expected is None:
        lines = (
            f"LOOP.md differs from the signed roster; change set {listed} would be signed:",
            *(f"  {s}" for s in said),
            "read them (anyone with push access can edit LOOP.md), then run"
            f" `relay nodes sign --yes {listed}`",
        )
        data: dict[str, object] = {"revision": None, "differences": said, "digest": listed}
        return Output(lines=lines, data=data, exit_status=1)
    if expected and expected != listed:
        raise ConfigError(
            f"LOOP.md or the roster changed since change set {expected} was listed"
            f" (it is {listed} now); nothing was signed",
            hint="run `relay nodes sign` again and read what it lists",
        )

    def change(tip: Revision) -> Revision:
        if change_digest(tip, differences(file_master, tip)) != listed:
            raise ConfigError(
                f"the roster moved on while change set {listed} was being signed; nothing"
                " was signed",
                hint="run `relay nodes sign` again and read what it lists",
            )
        rows = {n.name: n for n in file_master.nodes}
        members = tuple(
            m.model_copy(update={"accounts": rows[m.name].accounts}) if m.name in rows else m
            for m in tip.members
            if m.name in rows
        )
        return next_revision(
            tip,
            signed_by=ctx.node,
            at=datetime.now(UTC),
            members=members,
            scope=file_master.scope,
            data_branch=file_master.data_branch,
            watcher_prompt=file_master.watcher_prompt,
        )

    made = publish_revision(ctx, change, f"relay: {ctx.node} signs the node table")
    lines = (
        f"signed roster revision {made.revision}, change set {listed}:",
        *(f"  {s}" for s in said),
    )
    return Output(
        lines=lines, data={"revision": made.revision, "differences": said, "digest": listed}
    )
