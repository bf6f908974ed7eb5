"""A node's durable watcher: register it and prove it exists, tear it down, bring it back.

Ground rules: the scheduler column of the node table is written only after the OS
scheduler confirmed the entry (``verify``), never on the strength of our own write. The
entry that was registered is remembered in the node state (``watcher.json``), so teardown,
doctor and a re-registration act on exactly that entry, whatever the environment of the
process that acts later.

Teardown order, safe on every backend: commit and push the column first, then remove the
entry. launchd's ``bootout`` may end the very pass that asked for it, so nothing durable is
left for after the removal. The jobs are checked just before the removal and again after
it; a job that appeared meanwhile brings the entry (and the column) back, so a task that
arrives during a teardown is not lost.

A scheduled pass tears down only when no open job binds its node *any more*: a watcher
registered before the node's first job (the usual order: join, then the controller opens
a job) waits for that job instead of removing itself at its first tick.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from relay.node import LOOP_PATH, NodeContext, client, read_loop
from relay.state import NodeState, read_versioned, write_versioned
from schedulers import (
    CommandRunner,
    Entry,
    Scheduler,
    SchedulerError,
    choose,
    declined,
    run_command,
)

DECLINED = "none (declined)"
RECORD_FILE = "watcher.json"
SKEW_SECONDS = 5  # how far this machine's clock may run ahead of the API's


def torn_down(day: date) -> str:
    """The scheduler column of a node whose watcher was removed on ``day``."""
    return f"none (torn down {day:%Y-%m-%d})"


class WatcherRecord(BaseModel):
    """The entry this clone registered for its node, and whether it is still registered."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    node: str
    scheduler: str  # the column value: launchd, Task Scheduler, cron, systemd
    entry: dict[str, Any]
    active: bool
    registered_at: datetime
    torn_down_at: datetime | None = None

    @property
    def interval(self) -> int:
        """Seconds between scheduled passes."""
        return int(self.entry["interval_seconds"])

    def spec(self) -> Entry:
        """The registered entry, rebuilt exactly."""
        raw = dict(self.entry)
        raw["argv"] = tuple(raw["argv"])
        raw["environment"] = tuple((str(k), str(v)) for k, v in raw["environment"])
        return Entry(**raw)


@dataclass(frozen=True)
class Seam:
    """How the OS scheduler is reached: the real commands unless a test records them."""

    runner: CommandRunner = run_command
    home: Path | None = None

    def backend(self, name: str) -> Scheduler:
        """The backend a column value (or ``--scheduler`` word) names."""
        return choose(override=name, runner=self.runner, home=self.home)


@dataclass(frozen=True)
class Teardown:
    """What a teardown did: removed the entry, and brought it back if a job appeared."""

    removed: bool
    reinstated: bool
    lines: tuple[str, ...]


def record_path(state: NodeState) -> Path:
    """Where the registered entry is remembered (inside .git, never committed)."""
    return state.root / RECORD_FILE


def load(state: NodeState, node: str) -> WatcherRecord | None:
    """The watcher this clone registered for ``node``, or None."""
    doc = read_versioned(record_path(state))
    raw = None if doc is None else doc.get("watchers", {}).get(node)
    return None if raw is None else WatcherRecord.model_validate(raw)


def save(state: NodeState, record: WatcherRecord) -> None:
    """Remember ``record`` beside the other nodes' records of this clone."""
    doc = read_versioned(record_path(state)) or {}
    watchers = dict(doc.get("watchers", {}))
    watchers[record.node] = record.model_dump(mode="json")
    write_versioned(record_path(state), {"watchers": watchers})


def records(state: NodeState) -> list[WatcherRecord]:
    """Every node's watcher record in this clone."""
    doc = read_versioned(record_path(state)) or {}
    return [WatcherRecord.model_validate(raw) for raw in doc.get("watchers", {}).values()]


def set_column(ctx: NodeContext, column: str, message: str) -> bool:
    """Pull, set this node's scheduler cell, commit and push; False when it already said so."""
    from relay.protocol import set_scheduler

    ctx.clone.pull_rebase()
    text = read_loop(ctx.root) or ""
    changed = set_scheduler(text, node=ctx.node, scheduler=column)
    if changed == text:
        return False
    (ctx.root / LOOP_PATH).write_text(changed, encoding="utf-8")
    pushed = ctx.clone.commit_and_push([ctx.root / LOOP_PATH], message) is not None
    ctx.reload_master()
    return pushed


def install(sched: Scheduler, entry: Entry) -> str:
    """Register ``entry`` and ask the OS whether it is there; SchedulerError when not."""
    sched.register(entry)
    check = sched.verify(entry)
    if not check.ok:
        sched.teardown(entry)
        raise SchedulerError(
            f"{sched.describe()} did not keep the watcher: {check.detail}",
            hint=f"{sched.remedy}; or join with --scheduler none and run `relay watch`",
        )
    return check.detail


def register(
    ctx: NodeContext,
    *,
    override: str | None,
    interval: int,
    environ: Mapping[str, str] | None = None,
    seam: Seam | None = None,
) -> tuple[str, tuple[str, ...]]:
    """Register and verify this node's watcher; returns the column and lines to print.

    ``none`` (flag or RELAY_SCHEDULER) declines, removing an entry registered before.
    Raises SchedulerError when the OS refuses or does not keep the entry.
    """
    seam = seam or Seam()
    old = load(ctx.state, ctx.node)
    if declined(override=override, environ=environ):
        lines = retire(ctx, old, seam)
        return DECLINED, (*lines, "no watcher: passes run only when you run `relay watch`")
    sched = choose(override=override, environ=environ, runner=seam.runner, home=seam.home)
    entry = Entry.create(
        clone=ctx.root,
        node=ctx.node,
        state_dir=ctx.state.root,
        interval_seconds=interval,
        environ=environ,
    )
    if old is not None and (old.scheduler, old.entry["label"]) != (sched.describe(), entry.label):
        retire(ctx, old, seam)  # another backend (or clone path) than before
    detail = install(sched, entry)
    save(ctx.state, _record(ctx.node, sched.describe(), entry, active=True))
    every = f"every {entry.interval_seconds}s"
    return sched.describe(), (f"verified: {detail} ({every})", *sched.advice(entry))


def retire(ctx: NodeContext, old: WatcherRecord | None, seam: Seam) -> tuple[str, ...]:
    """Remove an entry registered earlier (another backend, or now declined)."""
    if old is None or not old.active:
        return ()
    seam.backend(old.scheduler).teardown(old.spec())
    save(ctx.state, old.model_copy(update={"active": False, "torn_down_at": datetime.now(UTC)}))
    return (f"removed the earlier {old.scheduler} watcher",)


async def bound_jobs(ctx: NodeContext) -> list[int]:
    """The open relay jobs that bind this node, asked of the API now."""
    from relay.observe import binds

    async with client(ctx) as gh:
        found = await gh.list_issues(state="open")
    return [i.number for i in found if not i.is_pull_request and binds(i.body, ctx.node)]


async def tear_down(
    ctx: NodeContext, *, recheck: bool = True, seam: Seam | None = None
) -> Teardown:
    """Remove this node's entry, column first; with ``recheck``, keep or bring it back when
    a job binds the node after all. Doing it again changes nothing."""
    seam = seam or Seam()
    record = load(ctx.state, ctx.node)
    if record is None or not record.active:
        return Teardown(removed=False, reinstated=False, lines=())
    column = torn_down(datetime.now(UTC).date())
    note = f"relay: {ctx.node} watcher torn down (no open job binds it)"
    await asyncio.to_thread(set_column, ctx, column, note)
    save(ctx.state, record.model_copy(update={"active": False, "torn_down_at": datetime.now(UTC)}))
    if recheck and await bound_jobs(ctx):  # a job arrived while the column was pushed
        return await _reinstate(ctx, record, seam, removed=False)
    sched = seam.backend(record.scheduler)
    await asyncio.to_thread(sched.teardown, record.spec())  # launchd may end this pass here
    line = f"watcher torn down: the {record.scheduler} entry is removed; column says {column}"
    if recheck and await bound_jobs(ctx):
        return await _reinstate(ctx, record, seam, removed=True)
    return Teardown(removed=True, reinstated=False, lines=(line,))


async def _reinstate(
    ctx: NodeContext, record: WatcherRecord, seam: Seam, *, removed: bool
) -> Teardown:
    """A job appeared during the teardown: register the same entry again, column back."""
    sched = seam.backend(record.scheduler)
    await asyncio.to_thread(install, sched, record.spec())
    save(ctx.state, _record(ctx.node, record.scheduler, record.spec(), active=True))
    note = f"relay: {ctx.node} watcher is {record.scheduler} again (a job arrived)"
    await asyncio.to_thread(set_column, ctx, record.scheduler, note)
    line = f"a job arrived during the teardown: the {record.scheduler} watcher is registered again"
    return Teardown(removed=removed, reinstated=True, lines=(line,))


def token_route(ctx: NodeContext, record: WatcherRecord | None) -> tuple[bool, str]:
    """How a scheduled pass will find its token (it carries none), and whether it will."""
    import shutil

    from relay.errors import ConfigError
    from relay.token import read_token_file

    path = ctx.state.token_path
    entry_path = dict(record.entry["environment"]).get("PATH") if record else None
    gh = shutil.which("gh", path=entry_path)
    try:
        in_file = read_token_file(path) is not None
    except ConfigError as err:
        return False, f"scheduled passes cannot use the token file: {err}"
    from relay.token import keyring_token

    if keyring_token(ctx.api_url) is not None:
        return True, "scheduled passes find their token in the OS keyring"
    if in_file:
        first = "`gh auth token`, then " if gh else ""
        return True, f"scheduled passes find their token through {first}the token file {path}"
    if gh:
        return True, "scheduled passes ask `gh auth token` for their token (keep gh logged in)"
    return False, (
        "a scheduled pass will find no token: run `relay join --save-token` (keeps the token"
        f" relay uses now in {path}, readable by you only) or log in with `gh auth login`"
    )


async def job_ended_since(ctx: NodeContext, since: datetime) -> bool:
    """Whether a job that bound this node was closed after ``since`` (less a few seconds
    of clock skew between this machine and the API)."""
    from relay.observe import binds

    start = since.replace(microsecond=0) - timedelta(seconds=SKEW_SECONDS)
    async with client(ctx) as gh:
        closed = await gh.list_issues(state="closed", since=start)
    return any(
        i.closed_at is not None and i.closed_at >= start and binds(i.body, ctx.node) for i in closed
    )


async def on_teardown(ctx: NodeContext) -> list[str]:
    """The hook a scheduled pass hands to ``run_pass`` (decide said TearDown).

    A watcher registered before its node's first job waits for that job: it is torn down
    only once a job that bound the node has ended since it was registered.
    """
    record = load(ctx.state, ctx.node)
    if record is None or not record.active:
        return []
    if not await job_ended_since(ctx, record.registered_at):
        return [f"no open job binds {ctx.node} yet; its watcher stays for the first one"]
    return list((await tear_down(ctx)).lines)


def _record(node: str, scheduler: str, entry: Entry, *, active: bool) -> WatcherRecord:
    return WatcherRecord(
        node=node,
        scheduler=scheduler,
        entry=dataclasses.asdict(entry),
        active=active,
        registered_at=datetime.now(UTC),
    )
