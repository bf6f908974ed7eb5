"""One pass: observe -> decide -> apply, under the node's lock. Every watcher calls this.

The scheduler entry, the foreground loop, the webhook receiver and the Actions adapter
all end here, so a turn is taken the same way whoever noticed it. A pass is idempotent:
firing it twice, or with nothing to do, changes nothing. An idle pass does no git work
and costs one request, answered 304 (the issue list; see relay/node/observe.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from relay.edges.github import GitHubClient
from relay.edges.github.credentials import Token
from relay.edges.local import PassRecord
from relay.errors import ConfigError, RelayError
from relay.node.apply import Applier
from relay.node.context import NodeContext, client
from relay.node.execute import TaskBox, run_limits
from relay.node.observe import closed_since, observe, refresh, to_user
from relay.node.redaction import redact_lines
from relay.protocol import (
    Action,
    ExecuteTask,
    Ignore,
    KeepWatcher,
    Snapshot,
    TearDown,
    User,
    Wait,
    WatcherFacts,
    baton_events_wanted,
    claim_edits_wanted,
    decide,
    wants_ended_check,
)
from relay.protocol.decide import high_water
from relay.watchers import quiet
from relay.watchers.report import PassReport as PassReport

TeardownHook = Callable[[NodeContext], Awaitable[list[str]]]
_QUIET = (Ignore, Wait, TearDown, KeepWatcher)


def busy(actions: list[Action]) -> bool:
    """Whether any action changes something (so the clone must be fresh first)."""
    return any(not isinstance(a, _QUIET) for a in actions)


async def run_pass(
    ctx: NodeContext,
    *,
    issue: int | None = None,
    token: Token | None = None,
    on_teardown: TeardownHook | None = None,
    verbose: bool = False,
    find_account: bool = False,
    started_by: str | None = None,
) -> PassReport:
    """Run one pass for ``ctx.node`` (only over ``issue`` when given) and log it, saying who
    started it (``started_by``: see PassRecord; only the scheduler's passes are heartbeats).
    ``find_account``: the token may not be the node's own account (an Actions run with the
    workflow's token), so ask whose it is, and act only if the job's nodes trust it.

    The token is found once (``token`` when the caller has one) and serves the API, the
    claim and the redaction of everything the pass publishes or prints."""
    started = time.monotonic()
    report = PassReport(node=ctx.node, started_by=started_by)
    counts: list[str] = []  # composed by relay from issue numbers alone: nothing to redact
    steady = Steady()
    with ctx.state.pass_lock(ctx.node) as lock:
        try:
            if not lock.held:
                report.outcome = "busy"
                report.lines.append(lock.busy_message(ctx.node))
                return report
            steady.before = quiet.inputs_digest(ctx.root, ctx.state.root)
            exchanged = ctx.app.requests if ctx.app is not None else 0
            token = token or ctx.token()
            if ctx.app is not None:  # an App's token exchange is part of the pass's cost
                report.requests += ctx.app.requests - exchanged
            counts = await _pass(
                ctx,
                report,
                issue=issue,
                token=token,
                on_teardown=on_teardown,
                verbose=verbose,
                find_account=find_account,
                steady=steady,
            )
        except RelayError as err:  # the heartbeat says why, for `relay doctor`
            report.outcome = f"error: {err}"[:300]
            raise
        except BaseException:
            report.outcome = "error"
            raise
        finally:
            secret = token.value if token is not None else ""
            report.lines = [*counts, *redact_lines(ctx, report.lines, token=secret)]
            if report.outcome.startswith("error: "):
                report.outcome = redact_lines(ctx, [report.outcome], token=secret)[0]
            report.seconds = time.monotonic() - started
            # a clone that never joined (no config, no roster) has no node to record for
            if lock.held and (ctx.config is not None or ctx.trust.revision is not None):
                ctx.state.log_pass(_record(report))
                with contextlib.suppress(Exception):  # a marker is a shortcut, never a failure
                    quiet.remember(
                        ctx,
                        report,
                        before=steady.before,
                        until=steady.until,
                        token=secret,
                        eligible=issue is None and not verbose and not find_account,
                    )
    return report


@dataclass
class Steady:
    """What the idle pass's marker needs of a full pass: the digest of its inputs before it
    ran, and until when its quiet decision holds (None: it acted, or it will change)."""

    before: str | None = None
    until: datetime | None = None


def steady_until(
    snapshot: Snapshot, node: str, actions: list[Action], now: datetime
) -> datetime | None:
    """Until when a quiet decision stays the same, asking nothing more: decide() at a later
    moment gives the same actions and wants no more facts (see quiet.holds_until)."""

    def same(later: datetime) -> bool:
        return (
            decide(snapshot, node, later) == actions
            and not wants_ended_check(snapshot, node, later)
            and not baton_events_wanted(snapshot, node, later)
            and not claim_edits_wanted(snapshot, node, later)
        )

    return quiet.holds_until(same, now)


async def _pass(
    ctx: NodeContext,
    report: PassReport,
    *,
    issue: int | None,
    token: Token,
    on_teardown: TeardownHook | None,
    verbose: bool,
    find_account: bool = False,
    steady: Steady | None = None,
    settle_by: datetime | None = None,
) -> list[str]:
    """Observe, decide, apply; returns the lines that count comments taken as data. A
    bare claim ref this pass saw is waited out here, its issue passed again every few
    seconds (``SETTLE_STEP``) until the ref is claimed or may be taken over, and no later
    than ``settle_by``: a runner with no records (an Actions runner) would otherwise see it
    anew, bare for no time, at every pass, and a worker that passes on events alone would
    not pass again at all. Another runner that is claiming is seen within a step."""
    if ctx.master.node(ctx.node) is None:
        # not in the roster this clone trusts (yet): an admin may have admitted it since
        # the clone last fetched, so fetch once and read the roster again
        with contextlib.suppress(ConfigError):
            await asyncio.to_thread(ctx.clone.refresh)
            ctx.reload_master()
        if ctx.trust.revision is None and ctx.master.node(ctx.node) is None:
            raise ConfigError(  # the file's table may name it: no table is followed yet
                f"this clone trusts no roster yet, so node {ctx.node!r} cannot act in it",
                hint=f"run `relay join --node {ctx.node}` in {ctx.root}",
            )
    async with client(ctx, token=token) as gh:
        try:
            read_now: set[int] = set()
            snapshot = await _observe(gh, ctx, issue=issue, read_now=read_now)
            if find_account:
                snapshot = snapshot.model_copy(update={"acting": await acting_account(gh)})
            decided_at = datetime.now(UTC)
            actions = decide(snapshot, ctx.node, decided_at)
            ctx.state.record_seen(*high_water(snapshot, ctx.node))
            if busy(actions):
                # act on threads read now, not on the cache (an edit may not show in the list)
                acted_on = {getattr(a, "issue", 0) for a in actions if not isinstance(a, _QUIET)}
                acted_on -= read_now
                snapshot = await refresh(
                    gh, snapshot, state=ctx.state, node=ctx.node, numbers=acted_on
                )
                try:
                    # fetch, and fast-forward the person's clone only when that is safe:
                    # their commits and edits are theirs (steps run in relay's worktree)
                    await asyncio.to_thread(ctx.clone.refresh)
                except ConfigError as err:  # the clone cannot be fetched: nothing runs now
                    from relay.node.redaction import redactor_for

                    why = redactor_for(ctx, token.value).redact(err.message).rstrip(".")
                    unable = f"this node cannot update its clone: {why}"[:1000]
                    snapshot = snapshot.model_copy(update={"unable": unable})
                    actions = decide(snapshot, ctx.node, datetime.now(UTC))
                else:
                    # decide again with the master section just pulled: an account
                    # removed from the node table a moment ago gives no more instructions
                    master = ctx.reload_master()
                    ran = await asyncio.to_thread(ran_already, ctx, snapshot)
                    snapshot = snapshot.model_copy(update={"master": master, "ran": ran})
                    actions = decide(snapshot, ctx.node, datetime.now(UTC))
            applier = Applier(gh, ctx, snapshot, token=token.value, verbose=verbose, boxer=task_box)
            await applier.apply(actions)
            report.lines += applier.lines
            report.tasks += applier.tasks
            report.outcome = "acted" if busy(actions) else "idle"
            if steady is not None and not busy(actions):
                steady.until = steady_until(snapshot, ctx.node, actions, decided_at)
            if applier.teardown and on_teardown is not None:
                report.teardown = True
                report.lines += await on_teardown(ctx)
            now = datetime.now(UTC)
            settle = _settle(actions) or _lost(applier.lost, now)
            if settle is None or (settle_by is not None and now >= settle_by):
                return applier.ignored_lines()
        finally:
            stats = gh.stats
            report.requests += stats.requests
            report.not_modified = stats.not_modified
            report.writes = stats.writes
            report.retries = stats.retries
            report.lost_answers_found = stats.found_after_loss
            if verbose and stats.retries:
                report.lines.append(
                    f"wire: {stats.retries} retries, {stats.found_after_loss} lost answers found"
                    f" (of {stats.lost_answers} lost), {stats.requests} requests"
                )

    from relay.protocol.work import BARE_GRACE, BARE_SETTLE

    number, until = settle
    now = datetime.now(UTC)
    if settle_by is None:  # (a bare ref is taken over within these of the first sighting)
        settle_by = now + BARE_GRACE + BARE_SETTLE + SETTLE_STEP
    await asyncio.sleep(min(max(0.0, (until - now).total_seconds()) + 1, SETTLE_STEP.seconds))
    return await _pass(
        ctx, report, issue=number, token=token, on_teardown=on_teardown, verbose=verbose,
        find_account=find_account, settle_by=settle_by,
    )  # fmt: skip


# How often a pass that waits a bare claim ref out reads its issue again.
SETTLE_STEP = timedelta(seconds=5)


def _lost(issues: list[int], now: datetime) -> tuple[int, datetime] | None:
    """The first issue whose TASK this pass found claimed as it claimed, read again a step
    on: another runner's claim shows by then (and nothing is left to do), or the ref that
    beat it is bare, hers, made again after this pass read it absent, and is waited out
    as any bare ref (a worker that passes on events alone would not pass again)."""
    return (issues[0], now + SETTLE_STEP) if issues else None


def _settle(actions: list[Action]) -> tuple[int, datetime] | None:
    """The first bare claim ref this pass waits out: its issue, and when it may be taken
    over."""
    soon = sorted((a.until, a.issue) for a in actions if isinstance(a, Wait) and a.bare)
    return (soon[0][1], soon[0][0]) if soon else None


def task_box(root: Path, commit: str) -> AbstractContextManager[TaskBox]:
    """The box a boxed TASK's steps run in: the loop's judged box of ``commit`` (loaded
    only when such a TASK comes: an idle pass never imports the loop)."""
    from relay.ratchet.measure import task_box as judged_box

    return judged_box(root, commit)


def ran_already(ctx: NodeContext, snapshot: Snapshot) -> frozenset[tuple[int, int]]:
    """The tasks this node is about to run whose log, sealed by this node's key (its own,
    or one the roster lists for it that was valid when the TASK was posted), is in the
    repository's history: the data branch's first, then any branch's as fetched. They
    ran, whatever comment or ref was deleted since; a log file anyone else wrote there
    says nothing. Only for those. (History a pusher rewrote hides a log: the issue's
    events, which nobody deletes, still hold this node's `working` for each claim.)"""
    from relay.node.spine import versions_in_history
    from relay.protocol import claim_refs_wanted, log_path
    from relay.protocol.decide import bound_threads
    from relay.protocol.signatures import parse_keys, public_key_of
    from relay.protocol.work import SEALED_LOG_BYTES, sealed_by

    wanted = claim_refs_wanted(snapshot, ctx.node)
    if not wanted:
        return frozenset()
    own = ctx.signing_key
    row = ctx.master.node(ctx.node)
    listed = parse_keys(row.public_key) if row is not None else None
    posted = {
        (thread.issue.number, task): entry.comment.created_at
        for thread in bound_threads(snapshot, ctx.node)
        if (entry := thread.task_entry(task := thread.last_task)) is not None
    }
    branch = ctx.master.data_branch or ctx.clone.current_branch()
    ran = set()
    for issue, task in wanted:
        at = posted.get((issue, task))
        # (a second later: REST's times are whole seconds, and a key retired within the
        # second the TASK was posted may not have sealed its log)
        late = at + timedelta(seconds=1) if at is not None else None
        valid = listed.valid_at(late) if listed is not None and late is not None else ()
        keys = (*((public_key_of(own),) if own is not None else ()), *valid)
        path = log_path(issue, task)
        for data in versions_in_history(ctx.root, path, first=branch, largest=SEALED_LOG_BYTES):
            if keys and sealed_by(
                data, repo=ctx.repo, issue=issue, task=task, node=ctx.node, keys=keys
            ):
                ran.add((issue, task))
                break
    return frozenset(ran)


async def _observe(
    gh: GitHubClient, ctx: NodeContext, *, issue: int | None, read_now: set[int]
) -> Snapshot:
    """The snapshot, with this node's run limits and its registered watcher; asks whether a
    bound job ended only when the teardown rule wants to know."""
    from relay.watchers.registration import load

    record = load(ctx.state, ctx.node)
    watcher = WatcherFacts(registered_at=record.registered_at) if record and record.active else None
    snapshot = await observe(
        gh,
        master=ctx.master,
        state=ctx.state,
        node=ctx.node,
        only=issue,
        limits=run_limits(ctx),
        watcher=watcher,
        read_now=read_now,
        trust_notes=tuple(ctx.trust.notes),
    )
    if watcher and wants_ended_check(snapshot, ctx.node, datetime.now(UTC)):
        closed = await closed_since(gh, since=watcher.registered_at)
        facts = watcher.model_copy(update={"closed_since": closed})
        snapshot = snapshot.model_copy(update={"watcher": facts})
    return snapshot


ACTIONS_BOT = "github-actions[bot]"  # the account the workflow's GITHUB_TOKEN acts as


async def acting_account(gh: GitHubClient) -> User:
    """The account a token acts as: ``GET /user``; GitHub answers an installation token
    (the workflow's GITHUB_TOKEN) with 403, and that token acts as github-actions[bot].
    Any other failure (the API down, a rate limit) fails the pass: it is not a verdict on
    the account."""
    found = await gh.token_user()
    return to_user(found if found is not None else await gh.get_user(ACTIONS_BOT))


def _record(report: PassReport) -> PassRecord:
    return PassRecord(
        at=datetime.now(UTC),
        node=report.node,
        outcome=report.outcome,
        requests=report.requests,
        not_modified=report.not_modified,
        writes=report.writes,
        seconds=round(report.seconds, 3),
        started_by=report.started_by,
    )


def executes(actions: list[Action]) -> bool:
    """Whether a pass's actions run a task (used by the loop to report progress)."""
    return any(isinstance(a, ExecuteTask) for a in actions)


Printer = Callable[[PassReport], None]


def print_report(report: PassReport) -> None:
    """Print a pass's lines (they carry no secrets) and flush, for scheduler logs."""
    from relay.commands.output import for_people

    if sys.stdout is None:  # pythonw has none
        return
    for line in report.lines:
        print(for_people(line))
    sys.stdout.flush()
