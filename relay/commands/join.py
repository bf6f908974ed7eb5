"""`relay join`: make this clone a node — register it in the node table and say its roles.

Join first checks every input (scheduler name, interval, the paths the scheduler must
take), so a bad one changes nothing anywhere. Then it pulls, reads the master file, adds
this node's row if it is new (commit and push; a rejected push is pulled, rebased and
retried), registers the node's durable watcher with the OS scheduler and asks the
scheduler whether it is there (only then is the scheduler column written, committed and
pushed), records the node's local settings, and lists the open jobs that bind it. The
entry carries no token: join says how a scheduled pass will find one (`--save-token`
keeps the current one in the node's 0600 token file). Joining twice changes nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from relay.commands.bounds import number, whole
from relay.commands.common import run_async
from relay.commands.init import default_node_name, os_name, words
from relay.commands.output import Output
from relay.commands.repos import add_repo_flag, remember_clone
from relay.edges.github import GitHubClient
from relay.edges.local import NodeConfig
from relay.errors import ConfigError, LocalUsageError
from relay.node.apply import publish_edits
from relay.node.context import LOOP_PATH, NodeContext, client, open_clone, open_node
from relay.node.trust import publish_revision
from relay.protocol import Account, Master, Node, add_node, parse_body
from relay.protocol.master import build
from relay.protocol.master_text import set_accounts, set_public_key
from relay.protocol.roster import (
    Revision,
    RosterRejected,
    fingerprint,
    next_revision,
    parse_request,
    with_member,
)
from relay.protocol.signatures import (
    parse_keys,
    public_key_of,
    render_keys,
    rotated,
    unsigned,
)
from relay.protocol.thread import binds
from relay.protocol.wire import MARKER, MessageRejected
from relay.watchers.registration import DECLINED, WatcherRecord
from relay.watchers.scheduled_token import token_route

MIN_INTERVAL, MAX_INTERVAL = 60, 86400  # seconds between scheduled passes


def register(sub: Any) -> None:
    """Add `join`."""
    p: argparse.ArgumentParser = sub.add_parser("join", help="make this clone a relay node")
    p.add_argument("--repo-dir", type=Path, default=None, help="the clone (default: here)")
    add_repo_flag(p)
    p.add_argument("--node", default=None, help="this node's name (default: the host name)")
    p.add_argument("--api", default=None, help="API base URL (default: RELAY_API_URL or master)")
    p.add_argument("--accounts", default=None, help="logins whose TASKs this node obeys")
    p.add_argument("--scheduler", default=None, help="watcher backend, or `none` to decline")
    p.add_argument(
        "--interval",
        type=whole(MIN_INTERVAL, MAX_INTERVAL),
        default=None,
        help=f"seconds between scheduled passes (300; from {MIN_INTERVAL} to {MAX_INTERVAL})",
    )
    p.add_argument(
        "--at-boot",
        action="store_true",
        help="run passes from boot with nobody logged in: on macOS a LaunchDaemon (needs an"
        " administrator: sudo is asked), with systemd lingering",
    )
    p.add_argument(
        "--save-token",
        nargs="?",
        const="file",
        choices=("file", "keyring"),
        default=None,
        help="keep the token relay finds now for scheduled passes: in the node's token file"
        " (0600, the default) or in the OS keyring (needs the keyring package)",
    )
    p.add_argument("--executor", default=None, help="hand tasks to this agent command")
    p.add_argument(
        "--rotate-key",
        action="store_true",
        help="make a new signing key; the old one stays valid for messages posted before",
    )
    p.add_argument(
        "--trust",
        default=None,
        metavar="FINGERPRINT",
        help="trust the repository's roster only if a key with this fingerprint signed it"
        " (the admin's, from `relay nodes`); without it the first roster is trusted on first"
        " use and shown",
    )
    p.add_argument("--on-result", default=None, help="controller's hook when a result returns")
    p.add_argument(
        "--step-timeout",
        type=number(0, unit="s", above=True),
        default=None,
        help="seconds a step may run",
    )
    p.add_argument(
        "--webhook",
        default=None,
        metavar="URL",
        help="deliver issue events to URL (watch --webhook)",
    )
    p.add_argument(
        "--no-turn",
        action="store_true",
        help="only list the open jobs; leave a turn that waits for this node to its watcher",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


async def my_accounts(gh: GitHubClient, ctx: NodeContext, flag: str | None) -> tuple[Account, ...]:
    """Whose instructions this node obeys: --accounts, else everyone already listed plus me."""
    from relay.commands.init import resolve_accounts

    user = await gh.current_user()
    me = Account(id=user.id, login=user.login)
    if flag:
        return await resolve_accounts(gh, words(flag), me)
    known = {a.id: a for n in ctx.master.nodes for a in n.accounts}
    known.setdefault(me.id, me)
    return tuple(known.values())


async def roles(gh: GitHubClient, node: str, master: Master) -> list[str]:
    """One line per open job that binds ``node``."""
    lines = []
    for issue in await gh.list_issues(state="open"):
        if issue.is_pull_request or not binds(
            issue.body, node, author=issue.user.id, master=master, issue=issue.number
        ):
            continue
        job = parse_body(issue.body)
        role = "controller" if job.controller == node else "worker"
        lines.append(f"  #{issue.number} {issue.title} — {role}")
    return lines


def run(args: argparse.Namespace) -> Output:
    """Join, idempotently."""
    clone = open_clone((args.repo_dir or Path.cwd()).resolve(), api=args.api)
    clone.refresh()  # every branch: relay's own may keep the node table (a protected default)
    ctx = open_node(
        repo_dir=clone.root,
        node=args.node,
        api=args.api,
        need_node=False,
        first_use=True,
        pin=args.trust,
    )
    ctx.node = args.node or ctx.node or default_node_name()
    return run_async(lambda: join(args, ctx))


async def join(args: argparse.Namespace, ctx: NodeContext) -> Output:
    """Register the row and the local settings, then report roles.

    Every input is checked (scheduler name, interval, paths the scheduler must take)
    before anything is committed or pushed."""
    from relay.watchers import registration

    override, interval = choice(args, ctx)
    boot = at_boot(args, ctx)
    await asyncio.to_thread(
        registration.plan, ctx, override=override, interval=interval, at_boot=boot
    )
    check_inputs(args)
    from relay.watchers import registration

    lines: list[str] = [*ctx.trust.said]
    async with client(ctx) as gh:
        member = ctx.trust.revision.member(ctx.node) if ctx.trust.revision else None
        if ctx.trust.revision is None:
            raise ConfigError(
                f"{ctx.repo} has no signed roster this clone can trust yet"
                + (f" ({'; '.join(ctx.trust.notes)})" if ctx.trust.notes else ""),
                hint="pin the admin key's fingerprint (`relay join --trust FINGERPRINT`); with"
                " no roster yet, the same with a node's own key's fingerprint signs the checked"
                " node table as the first roster, and `relay init` starts a new repository",
            )
        if member is None:
            lines += await request_membership(gh, ctx, args)
            row = ctx.file_master.node(ctx.node) if ctx.file_master else None
            row = row or build(Node, name=ctx.node, os=os_name(), scheduler="none")
        else:
            own_row(ctx, member.current_key, rotate=args.rotate_key)
            row = ctx.master.node(ctx.node) or build(Node, name=ctx.node)
            if ctx.file_master is not None and ctx.file_master.node(ctx.node) is None:
                listed = row.model_copy(update={"os": os_name()})
                await asyncio.to_thread(
                    publish_edits,
                    ctx.clone,
                    {LOOP_PATH: lambda old: with_row(old or "", listed)},
                    f"relay: {ctx.node} joins",
                    branch=ctx.master.data_branch,
                )
                ctx.reload_master()
                lines.append(f"registered {ctx.node} in {LOOP_PATH}")
            lines.append(f"{ctx.node} is already in the node table (a member of the roster)")
            lines += await publish_key(gh, ctx, row, node_key(ctx, rotate=args.rotate_key))
            if args.accounts:
                row, changed = await update_accounts(gh, ctx, row, args.accounts)
                lines += changed
        scheduler, said = await watcher(args, ctx)
        lines += said
        if scheduler != row.scheduler:
            message = f"relay: {ctx.node} watcher is {scheduler}"
            await asyncio.to_thread(registration.set_column, ctx, scheduler, message)
        lines.append(f"watcher: {scheduler}")
        save_config(args, ctx, scheduler, account=(await gh.current_user()).id)
        remember_clone(ctx.root, ctx.repo)  # so `-R OWNER/NAME` finds it from anywhere
        if args.webhook:
            from relay.edges.github.webhooks import register_webhook

            lines += await register_webhook(
                state=ctx.state,
                api_url=ctx.api_url,
                token=ctx.token().value,
                repo=ctx.repo,
                url=args.webhook,
            )
        found = await roles(gh, ctx.node, ctx.master)
    lines += ["open jobs:", *found] if found else ["no open job binds this node yet"]
    taken = 0
    if found and not args.no_turn and member is not None:
        taken, turns = await take_turns(ctx)
        lines += turns
    return Output(
        lines=tuple(lines),
        data={"node": ctx.node, "scheduler": scheduler, "jobs": len(found), "turns": taken},
    )


async def take_turns(ctx: NodeContext) -> tuple[int, list[str]]:
    """Take the turns already waiting for this node (a TASK posted before it joined, or
    while its watcher was away): one pass, the same a watcher would run next."""
    from relay.watchers.once import run_pass

    report = await run_pass(ctx)
    return len(report.tasks), [f"took its turn: {line}" for line in report.lines]


async def update_accounts(
    gh: GitHubClient, ctx: NodeContext, row: Node, flag: str
) -> tuple[Node, list[str]]:
    """``--accounts`` on a node already in the roster: its instruction accounts become
    exactly those given, in a roster revision this node signs (and in its table row for
    people, in the same commit); the same list again changes nothing."""
    accounts = await my_accounts(gh, ctx, flag)
    if {a.id for a in accounts} == {a.id for a in row.accounts}:
        return row, []

    change = own_row_change(ctx.node, accounts=accounts)
    table = {LOOP_PATH: lambda old: set_accounts(old or "", node=ctx.node, accounts=accounts)}
    await asyncio.to_thread(
        publish_revision, ctx, change, f"relay: {ctx.node} instruction accounts", also=table
    )
    fresh = ctx.master.node(ctx.node) or row
    said = ", ".join(str(a) for a in fresh.accounts)
    return fresh, [f"instruction accounts of {ctx.node}: {said}"]


def own_row_change(node: str, **update: object) -> Callable[[Revision], Revision]:
    """The roster revision that changes only ``node``'s own row (its accounts, its keys),
    signed by that node: the one change a member may make without an admin."""

    def change(base: Revision) -> Revision:
        member = base.member(node)
        assert member is not None
        placed = with_member(base, member.model_copy(update=update))
        return next_revision(base, signed_by=node, at=datetime.now(UTC), members=placed)

    return change


def own_row(ctx: NodeContext, listed: str | None, *, rotate: bool) -> None:
    """Refuse to act for a roster row whose key this clone does not hold: a node's row
    changes only by its own key (or an admin's revision), so `relay join --node X` on
    another machine can neither take X's place nor lock X out."""
    held = ctx.state.signing_key(ctx.node)
    if listed is not None and held is not None and public_key_of(held) == listed:
        return
    raise LocalUsageError(
        f"node {ctx.node} is in the roster with a key this clone does not hold"
        f" ({fingerprint(listed) if listed else 'no key'})",
        hint="join under another --node name, or run this on the machine that holds"
        f" {ctx.node}'s key",
    )


async def request_membership(
    gh: GitHubClient, ctx: NodeContext, args: argparse.Namespace
) -> list[str]:
    """A node the roster does not list asks to join: its request (name, accounts, the key
    it made, signed by that key) is committed; an admin node admits it with `relay nodes
    approve NAME`, and until then nothing it says counts."""
    from relay.protocol.roster import JoinRequest, request_path, sign_request

    key = ctx.state.signing_key(ctx.node) or ctx.state.new_signing_key(ctx.node)
    public = public_key_of(key)
    accounts = await my_accounts(gh, ctx, args.accounts)
    request = JoinRequest(
        name=ctx.node,
        repository=ctx.repo,
        accounts=accounts,
        key=public,
        os=os_name(),
        at=datetime.now(UTC),
    )
    text = sign_request(request, private_key=key)
    row = build(Node, name=ctx.node, os=os_name(), accounts=accounts, public_key=public)

    def table(old: str | None) -> str:
        return with_row(old or "", row)

    def ask(old: str | None) -> str:
        if old is not None:
            with contextlib.suppress(RosterRejected):
                if parse_request(old).key == public:
                    return old  # asked already with this key: nothing changes
                raise LocalUsageError(  # never swap the key an admin is about to admit
                    f"a request to join as {ctx.node} with another key"
                    f" ({fingerprint(parse_request(old).key)}) is waiting already",
                    hint="join under another --node name, or ask the admin to remove"
                    f" {request_path(ctx.node)} if that request is not yours",
                )
        return text

    edits = {LOOP_PATH: table, Path(request_path(ctx.node)): ask}
    message = f"relay: {ctx.node} joins (asks the roster's admins)"
    await asyncio.to_thread(publish_edits, ctx.clone, edits, message, branch=ctx.master.data_branch)
    return [
        f"registered {ctx.node} in {LOOP_PATH}, asking to join the roster",
        f"{ctx.node} asked to join the roster with key {fingerprint(public)}; an admin node"
        f" admits it with `relay nodes approve {ctx.node} --fingerprint {fingerprint(public)}`"
        " (read it out to them: `relay nodes key` prints it again), and until then no node acts"
        " on what it says",
    ]


def with_row(text: str, row: Node) -> str:
    """LOOP.md with ``row`` in its node table for people, unless a row of that name is
    there already (what a node obeys is the roster's, not the table's)."""
    from relay.protocol import parse_master

    return text if parse_master(text).node(row.name) is not None else add_node(text, row)


def node_key(ctx: NodeContext, *, rotate: bool) -> str:
    """This node's public key: the one it holds, or (``rotate``) a new one, kept beside
    the current key until the roster revision that names it (signed by the old key) is
    published; the private key never leaves the node's state."""
    if not rotate:
        return public_key_of(ctx.state.signing_key(ctx.node) or b"")
    return public_key_of(ctx.state.next_signing_key(ctx.node))


async def publish_key(gh: GitHubClient, ctx: NodeContext, row: Node, public: str) -> list[str]:
    """Rotate: put ``public`` in the node's roster row in a revision signed by the old key
    (so the new one is vouched for), then keep the new private key; the old public key is
    retired now (it stays valid for messages posted before), and the bodies of this node's
    open jobs are signed again with the new key."""
    keys = parse_keys(row.public_key)
    if keys.current == public:
        return []
    # the next whole second: a message of the old key posted in this very second still counts
    now = (datetime.now(UTC) + timedelta(seconds=1)).replace(microsecond=0)
    cell = render_keys(rotated(keys, public, at=now))

    change = own_row_change(ctx.node, keys=cell)
    table = {LOOP_PATH: lambda old: set_public_key(old or "", node=ctx.node, keys=cell)}
    try:
        await asyncio.to_thread(
            publish_revision, ctx, change, f"relay: {ctx.node} signing key rotated", also=table
        )
    except BaseException:
        ctx.state.drop_next_signing_key(ctx.node)
        raise
    ctx.state.promote_next_signing_key(ctx.node)
    ctx.__dict__.pop("signing_key", None)  # the cached one is the old key
    ctx.reload_master()
    signed = await resign_bodies(gh, ctx, previous=keys.current, row=row)
    said = f"signing key rotated: {fingerprint(public)}"
    return [said + (f" (job bodies signed again: {signed})" if signed else "")]


async def resign_bodies(
    gh: GitHubClient, ctx: NodeContext, *, previous: str | None, row: Node
) -> int:
    """Sign the bodies of the open jobs this node controls with its current key — only
    those it trusted before: signed by its ``previous`` key, or, when it had none, opened
    by one of its own accounts. A body someone else changed is never blessed."""
    from relay.protocol.signatures import Verdict, verify_payload
    from relay.protocol.wire import decode_block

    own = {a.id for a in row.accounts}
    count = 0
    for issue in await gh.list_issues(state="open"):
        if issue.is_pull_request or MARKER not in issue.body:
            continue
        try:
            job = parse_body(issue.body)
        except MessageRejected:
            continue
        if job.controller != ctx.node:
            continue
        if previous is not None:
            check = verify_payload(
                decode_block(issue.body), repo=ctx.repo, public_keys=(previous,), issue=issue.number
            )
            if check is not Verdict.VALID:
                continue
        elif issue.user.id not in own:
            continue
        fresh = ctx.sign(unsigned(issue.body), issue=issue.number)
        if fresh != issue.body:
            await gh.update_issue(issue.number, body=fresh)
            count += 1
    return count


async def watcher(args: argparse.Namespace, ctx: NodeContext) -> tuple[str, tuple[str, ...]]:
    """Register the durable watcher, verified by the OS; returns the column and what to say.

    Without --scheduler or RELAY_SCHEDULER a rejoin keeps what this clone chose before, so
    joining twice changes nothing. The token a scheduled pass needs is found at run time.
    """
    from relay.watchers import registration

    override, interval = choice(args, ctx)
    boot = at_boot(args, ctx)
    if boot and (override or "launchd") == "launchd" and sys.platform == "darwin":
        print(
            "relay: a LaunchDaemon needs an administrator: sudo may ask for your password",
            file=sys.stderr,
        )
    column, lines = await asyncio.to_thread(
        registration.register, ctx, override=override, interval=interval, at_boot=boot
    )
    said = list(lines)
    if args.save_token:
        said.append(save_token(ctx, where=args.save_token))
    if column != DECLINED:
        said.append(token_route(ctx, registration.load(ctx.state, ctx.node))[1])
    return column, tuple(said)


def check_inputs(args: argparse.Namespace) -> None:
    """Refuse, before anything is pushed or registered, what join could not finish."""
    from urllib.parse import urlsplit

    if args.webhook:
        parts = urlsplit(args.webhook)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise LocalUsageError(
                f"--webhook {args.webhook!r} is not an http(s) URL",
                hint="give the URL your `relay watch --webhook` receiver answers on",
            )
    if args.save_token == "keyring":
        from relay.edges.github.credentials import usable_keyring

        if usable_keyring() is None:
            raise ConfigError(
                "no usable OS keyring here (the `keyring` package is missing or has no backend)",
                hint="use --save-token file",
            )


def choice(args: argparse.Namespace, ctx: NodeContext) -> tuple[str | None, int]:
    """The scheduler asked for (flag, RELAY_SCHEDULER, else this clone's earlier choice)
    and the interval; LocalUsageError for an interval no scheduler should take."""
    from relay.schedulers import DEFAULT_INTERVAL, requested
    from relay.watchers import registration

    record = registration.load(ctx.state, ctx.node)
    override = args.scheduler or requested() or earlier_choice(record, ctx)
    interval = args.interval or (record.interval if record else DEFAULT_INTERVAL)
    if not MIN_INTERVAL <= interval <= MAX_INTERVAL:
        raise LocalUsageError(
            f"--interval {interval} is out of range",
            hint=f"pick --interval between {MIN_INTERVAL} and {MAX_INTERVAL} seconds",
        )
    return override or None, interval


def at_boot(args: argparse.Namespace, ctx: NodeContext) -> bool:
    """--at-boot, or what this clone chose before (a rejoin changes nothing)."""
    from relay.watchers import registration

    record = registration.load(ctx.state, ctx.node)
    return bool(args.at_boot or (record and record.active and record.at_boot))


def earlier_choice(record: WatcherRecord | None, ctx: NodeContext) -> str:
    """The scheduler this clone chose for the node before ("" when it never chose)."""
    if record is not None and record.active:
        return record.scheduler
    if ctx.config is not None and ctx.config.scheduler == DECLINED:
        return "none"
    return ""


def save_token(ctx: NodeContext, *, where: str = "file") -> str:
    """Store the token relay finds now in the node's token file (readable by this user
    only) or in the OS keyring."""
    token = ctx.token()
    if where == "keyring":
        from relay.edges.github.credentials import save_keyring_token

        if not save_keyring_token(ctx.api_url, token.value):
            raise ConfigError(
                "no usable OS keyring: install the `keyring` package (pip install keyring)",
                hint="or use --save-token file",
            )
        return f"saved the token from {token.source} in the OS keyring"
    path = ctx.state.token_path
    if token.source == f"token file {path}":
        return f"the token file {path} already holds the token"
    ctx.state.save_token(token.value)
    return f"saved the token from {token.source} in {path} (readable by you only)"


def save_config(
    args: argparse.Namespace, ctx: NodeContext, scheduler: str, *, account: int | None = None
) -> None:
    """Keep the node's settings in the clone's .git/relay/config.json, with the account it
    acts as (whose approval of a TASK is never a person's)."""
    old = ctx.config
    config = NodeConfig(
        node=ctx.node,
        repo=ctx.repo,
        api_url=ctx.api_url,
        executor=args.executor or (old.executor if old else None),
        on_result=args.on_result or (old.on_result if old else None),
        scheduler=scheduler,
        step_timeout=args.step_timeout or (old.step_timeout if old else 600.0),
        account_id=account if account is not None else (old.account_id if old else None),
    )
    ctx.state.save_config(config)
    ctx.config = config
