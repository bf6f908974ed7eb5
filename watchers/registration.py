"""A node's durable watcher: register it and prove it exists, tear it down, bring it back.

Ground rules: the scheduler column of the node table is written only after the OS
scheduler confirmed the entry (``verify``), never on the strength of our own write. The
entry that was registered is remembered in the node state (``watcher.json``), so teardown,
doctor and a re-registration act on exactly that entry, whatever the environment of the
process that acts later.

Teardown order: the column is committed and pushed first, and the jobs are checked
again; then, with SIGTERM held off, the entry is removed, the record marked inactive (only
once the removal succeeded; a failed removal puts the column back), and the jobs checked
once more. launchd answers ``bootout`` of the job a pass runs in with SIGTERM to that pass
(SIGKILL only after its ExitTimeOut, 20 s), so holding SIGTERM for these few steps lets
the pass finish them; a job that appeared meanwhile brings the entry (and the column)
back, so a task that arrives during a teardown is not lost.

Each registration has its nonce (on the entry's command line, and in the record, 0600):
a pass is recorded as the scheduler's only when it presents the nonce of the entry in
place (:func:`started_by`); a rejoin keeps it, so an unchanged entry stays unchanged.

A scheduled pass tears down only when decide() says so: a watcher registered before its
node's first job waits for that job, but not forever (``FIRST_JOB_GRACE`` in
:mod:`relay.protocol.decide`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from relay.edges.local import NodeState, read_versioned, write_versioned
from relay.errors import RelayError
from relay.node.context import LOOP_PATH, NodeContext, client
from relay.schedulers import (
    CommandRunner,
    Entry,
    Scheduler,
    SchedulerError,
    Verification,
    choose,
    declined,
    entry_nonce,
    new_nonce,
    run_command,
)

DECLINED = "none (declined)"
RECORD_FILE = "watcher.json"


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
    at_boot: bool = False  # `relay join --at-boot`: a LaunchDaemon, lingering asked for

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

    def backend(self, name: str, *, at_boot: bool = False) -> Scheduler:
        """The backend a column value (or ``--scheduler`` word) names."""
        return choose(override=name, runner=self.runner, home=self.home, at_boot=at_boot)

    def of(self, record: WatcherRecord) -> Scheduler:
        """The backend that registered ``record``."""
        return self.backend(record.scheduler, at_boot=record.at_boot)


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


def started_by(state: NodeState, node: str, nonce: str | None) -> str:
    """Who started a pass given ``--scheduled``: the scheduler only when it presents the
    nonce of ``node``'s registration in place; anyone else (a person who typed the flag,
    an entry left from an earlier registration) is a person."""
    import hmac

    from relay.edges.local import SCHEDULER

    record = load(state, node)
    if not nonce or record is None or not record.active:
        return "person"
    expected = entry_nonce(record.spec().argv)
    if expected is None or not hmac.compare_digest(nonce.encode(), expected.encode()):
        return "person"
    return SCHEDULER


def records(state: NodeState) -> list[WatcherRecord]:
    """Every node's watcher record in this clone."""
    doc = read_versioned(record_path(state)) or {}
    return [WatcherRecord.model_validate(raw) for raw in doc.get("watchers", {}).values()]


def set_column(ctx: NodeContext, column: str, message: str) -> bool:
    """Pull, set this node's scheduler cell, commit and push; False when it already said so."""
    from relay.node.apply import publish_edit
    from relay.protocol import set_scheduler

    def edit(old: str | None) -> str:
        return set_scheduler(old or "", node=ctx.node, scheduler=column)

    pushed = publish_edit(ctx.clone, LOOP_PATH, edit, message, branch=ctx.master.data_branch)
    ctx.reload_master()
    return pushed


def install(sched: Scheduler, entry: Entry) -> Verification:
    """Register ``entry`` and ask the OS whether it is there; SchedulerError when not.
    An entry in place that nothing will run (no cron daemon) is kept: ``blocked`` says so.

    Whatever failed (the OS refused, or did not keep it), what was written is removed
    again, best effort, so no plist or unit is left behind."""
    try:
        sched.register(entry)
        check = sched.verify(entry)
    except RelayError:
        _quietly(sched.teardown, entry)
        raise
    if not check.ok:
        _quietly(sched.teardown, entry)
        raise SchedulerError(
            f"{sched.describe()} did not keep the watcher: {check.detail}",
            hint=f"{sched.fix()}; or join with --scheduler none and run `relay watch`",
        )
    return check


def verified_lines(check: Verification, interval: int) -> tuple[str, ...]:
    """What join says of an installed entry: verified, or in place but not running."""
    if check.blocked:
        return (f"warning: registered but NOT running: {check.detail}; {check.blocked}",)
    return (f"verified: {check.detail} (every {interval}s)",)


def _quietly(step: Any, entry: Entry) -> None:
    """Best-effort cleanup: the error being raised already says what went wrong."""
    with contextlib.suppress(RelayError):
        step(entry)


def plan(
    ctx: NodeContext,
    *,
    override: str | None,
    interval: int,
    environ: Mapping[str, str] | None = None,
    seam: Seam | None = None,
    at_boot: bool = False,
) -> tuple[Scheduler, Entry] | None:
    """The backend and entry `relay join` would register (None: declined), rendered once,
    so a bad name, interval or path is refused before anything is committed or pushed."""
    if declined(override=override, environ=environ):
        return None
    seam = seam or Seam()
    sched = choose(
        override=override, environ=environ, runner=seam.runner, home=seam.home, at_boot=at_boot
    )
    old = load(ctx.state, ctx.node)
    kept = entry_nonce(old.spec().argv) if old is not None and old.active else None
    entry = Entry.create(
        clone=ctx.root,
        node=ctx.node,
        state_dir=ctx.state.root,
        interval_seconds=interval,
        environ=environ,
        nonce=kept or new_nonce(),  # the registration in place keeps its own
    )
    sched.render(entry)  # pure; raises LocalUsageError on what this scheduler cannot take
    return sched, entry


def register(
    ctx: NodeContext,
    *,
    override: str | None,
    interval: int,
    environ: Mapping[str, str] | None = None,
    seam: Seam | None = None,
    at_boot: bool = False,
) -> tuple[str, tuple[str, ...]]:
    """Register and verify this node's watcher; returns the column and lines to print.

    ``none`` (flag or RELAY_SCHEDULER) declines, removing an entry registered before. A
    new backend is installed and verified before the old one is retired. Raises
    SchedulerError when the OS refuses or does not keep the entry.
    """
    seam = seam or Seam()
    old = load(ctx.state, ctx.node)
    target = plan(
        ctx, override=override, interval=interval, environ=environ, seam=seam, at_boot=at_boot
    )
    if target is None:
        lines = retire(ctx, old, seam)
        return DECLINED, (*lines, "no watcher: passes run only when you run `relay watch`")
    sched, entry = target
    check = install(sched, entry)
    said: tuple[str, ...] = ()
    before = None if old is None else (old.scheduler, old.entry["label"], old.at_boot)
    if old is not None and before != (sched.describe(), entry.label, at_boot):
        said = _retire_after(ctx, old, seam)  # another backend (or clone path) than before
    unchanged = old is not None and old.active and not said and old.spec() == entry
    record = _record(ctx.node, sched.describe(), entry, active=True, at_boot=at_boot)
    if unchanged and old is not None:  # a rejoin keeps the time the wait for a job began
        record = record.model_copy(update={"registered_at": old.registered_at})
    save(ctx.state, record)
    lines = verified_lines(check, entry.interval_seconds)
    return sched.describe(), (*lines, *said, *sched.advice(entry))


def _retire_after(ctx: NodeContext, old: WatcherRecord, seam: Seam) -> tuple[str, ...]:
    """Retire the earlier entry once the new one is in place; a failure is reported."""
    try:
        return retire(ctx, old, seam)
    except RelayError as err:
        return (f"could not remove the earlier {old.scheduler} watcher ({err}); remove it by hand",)


def retire(ctx: NodeContext, old: WatcherRecord | None, seam: Seam) -> tuple[str, ...]:
    """Remove an entry registered earlier (another backend, or now declined)."""
    if old is None or not old.active:
        return ()
    seam.of(old).teardown(old.spec())
    save(ctx.state, old.model_copy(update={"active": False, "torn_down_at": datetime.now(UTC)}))
    return (f"removed the earlier {old.scheduler} watcher",)


async def bound_jobs(ctx: NodeContext) -> list[int]:
    """The open relay jobs that bind this node, asked of the API now."""
    from relay.protocol.thread import binds

    async with client(ctx) as gh:
        found = await gh.list_issues(state="open")
    return [
        i.number
        for i in found
        if not i.is_pull_request
        and binds(i.body, ctx.node, author=i.user.id, master=ctx.master, issue=i.number)
    ]


async def tear_down(
    ctx: NodeContext,
    *,
    recheck: bool = True,
    seam: Seam | None = None,
    unattended: bool = False,
) -> Teardown:
    """Remove this node's entry, column first; with ``recheck``, keep or bring it back when
    a job binds the node after all. Doing it again changes nothing. ``unattended`` (a
    scheduled pass) leaves an entry only an administrator may remove, and says so."""
    seam = seam or Seam()
    record = load(ctx.state, ctx.node)
    if record is None or not record.active:
        return Teardown(removed=False, reinstated=False, lines=())
    if unattended and not seam.of(record).unattended_teardown():
        line = (
            f"no open job binds {ctx.node}, but its {record.scheduler} entry at boot needs an"
            " administrator to remove: run `relay leave` in a terminal (sudo asks)"
        )
        return Teardown(removed=False, reinstated=False, lines=(line,))
    column = torn_down(datetime.now(UTC).date())
    note = f"relay: {ctx.node} watcher torn down (no open job binds it)"
    await asyncio.to_thread(set_column, ctx, column, note)
    if recheck and await bound_jobs(ctx):  # a job arrived while the column was pushed
        return await _reinstate(ctx, record, seam, removed=False)
    with sigterm_held():  # launchd's bootout of our own job SIGTERMs this very pass
        return await _remove(ctx, record, seam, column=column, recheck=recheck)


async def _remove(
    ctx: NodeContext, record: WatcherRecord, seam: Seam, *, column: str, recheck: bool
) -> Teardown:
    """Remove the entry; only then mark the record inactive; check the jobs once more."""
    if inside_own_job(record):
        return await _remove_own_launchd_job(ctx, record, seam, column=column, recheck=recheck)
    sched = seam.of(record)
    try:
        await asyncio.to_thread(sched.teardown, record.spec())
    except RelayError:
        note = f"relay: {ctx.node} watcher is {record.scheduler} again (its removal failed)"
        await asyncio.to_thread(set_column, ctx, record.scheduler, note)
        raise
    save(ctx.state, record.model_copy(update={"active": False, "torn_down_at": datetime.now(UTC)}))
    if recheck and await bound_jobs(ctx):
        return await _reinstate(ctx, record, seam, removed=True)
    line = f"watcher torn down: the {record.scheduler} entry is removed; column says {column}"
    return Teardown(removed=True, reinstated=False, lines=(line,))


async def _remove_own_launchd_job(
    ctx: NodeContext, record: WatcherRecord, seam: Seam, *, column: str, recheck: bool
) -> Teardown:
    """The pass runs as the very launchd job it removes. launchd will not take the label
    back while this process still runs ("5: Input/output error" while it drains), so the
    order is: plist away (nothing loads at the next login), check the jobs once more (a
    late job gets the plist back and the job stays loaded), record, and boot out last —
    which may end this pass."""
    from relay.schedulers.launchd import LaunchdScheduler

    sched = seam.of(record)
    assert isinstance(sched, LaunchdScheduler)
    entry = record.spec()
    plist = sched.plist_path(entry)
    kept = plist.read_bytes() if plist.is_file() else None
    sched.remove_plist(entry)
    if recheck and await bound_jobs(ctx):
        if kept is not None:
            plist.write_bytes(kept)
        note = f"relay: {ctx.node} watcher is {record.scheduler} again (a job arrived)"
        await asyncio.to_thread(set_column, ctx, record.scheduler, note)
        line = "a job arrived during the teardown: the launchd watcher stays"
        return Teardown(removed=False, reinstated=True, lines=(line,))
    save(ctx.state, record.model_copy(update={"active": False, "torn_down_at": datetime.now(UTC)}))
    line = f"watcher torn down: the launchd entry is removed; column says {column}"
    await asyncio.to_thread(sched.teardown, entry)  # launchd may end this pass here
    return Teardown(removed=True, reinstated=False, lines=(line,))


def inside_own_job(record: WatcherRecord) -> bool:
    """Whether this process is the launchd job of ``record`` (launchd sets the label)."""
    return (
        record.scheduler == "launchd"
        and not record.at_boot  # a daemon's plist is root's: put back only by an administrator
        and os.environ.get("XPC_SERVICE_NAME") == record.spec().label
    )


@contextlib.contextmanager
def sigterm_held() -> Iterator[list[int]]:
    """Hold SIGTERM off (POSIX, main thread) for a few steps; yields the signals that came.

    A Python handler, not SIG_IGN, so the processes started meanwhile keep the default."""
    import signal
    import threading

    came: list[int] = []
    if os.name == "nt" or threading.current_thread() is not threading.main_thread():
        yield came
        return
    previous = signal.signal(signal.SIGTERM, lambda signum, _frame: came.append(signum))
    try:
        yield came
    finally:
        signal.signal(signal.SIGTERM, previous)


async def _reinstate(
    ctx: NodeContext, record: WatcherRecord, seam: Seam, *, removed: bool
) -> Teardown:
    """A job appeared during the teardown: register the same entry again, column back.

    Registering an entry that is still in place changes nothing (no launchd bootout)."""
    sched = seam.of(record)
    await asyncio.to_thread(install, sched, record.spec())
    again = _record(ctx.node, record.scheduler, record.spec(), active=True, at_boot=record.at_boot)
    save(ctx.state, again)
    note = f"relay: {ctx.node} watcher is {record.scheduler} again (a job arrived)"
    await asyncio.to_thread(set_column, ctx, record.scheduler, note)
    line = f"a job arrived during the teardown: the {record.scheduler} watcher is registered again"
    return Teardown(removed=removed, reinstated=True, lines=(line,))


async def on_teardown(ctx: NodeContext) -> list[str]:
    """The hook a scheduled pass hands to ``run_pass`` (decide said TearDown; the grace a
    new watcher gets for its first job is decide()'s rule, see ``FIRST_JOB_GRACE``)."""
    record = load(ctx.state, ctx.node)
    if record is None or not record.active:
        return []
    try:
        return list((await tear_down(ctx, unattended=True)).lines)
    except RelayError as err:
        return [f"the watcher could not be torn down: {err}"]


def _record(
    node: str, scheduler: str, entry: Entry, *, active: bool, at_boot: bool = False
) -> WatcherRecord:
    return WatcherRecord(
        node=node,
        scheduler=scheduler,
        entry=dataclasses.asdict(entry),
        active=active,
        registered_at=datetime.now(UTC),
        at_boot=at_boot,
    )
