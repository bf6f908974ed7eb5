"""`relay doctor`: is this node's watcher alive? Each check says what is wrong and what to do.

Checks, in order: the entry exists and something will run it (the OS scheduler is asked,
never our own files: a cron line no daemon reads fails; an entry that waits for a login
after a reboot warns); the last pass the scheduler started is recent (within three
intervals) and succeeded — a pass a person started (`relay watch --once`) is not the
watcher's heartbeat, so it cannot hide a dead watcher; a scheduled pass will find a token;
the token works (``GET /user``); the five relay labels exist; in a GitHub Actions job, the
node key is out of a pusher's reach (``relay.watchers.actions_environment``); in a clone
that runs the loop, its pending resume, and every gate run once as the loop's scheduler
will run it (cron's minimal environment, then the recorded env file), and for a relay run
as root whether each share can be bound in a box through an idmapped mount. Any failure
makes the exit status non-zero (a warning does not); `--json` gives the same checks as data.
"""

from __future__ import annotations

import argparse
import enum
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from relay.commands.common import add_common, context, run_async
from relay.commands.output import Output
from relay.errors import RelayError, RemoteUnavailable

if TYPE_CHECKING:  # loaded when the verb runs, after the fetch: not on its way to the wire
    from relay.node.context import NodeContext
    from relay.watchers.registration import Seam, WatcherRecord

STALE_INTERVALS = 3  # a pass older than this many intervals means the scheduler stopped
DUE_SLACK = 60  # seconds a fresh watcher's first pass may come after its interval


class Status(enum.StrEnum):
    """How one check came out."""

    OK = "ok"
    FAIL = "fail"
    SKIP = "skip"
    PENDING = "pending"  # not yet due (a fresh watcher before its first pass)
    WARN = "warn"  # works, with a caveat (passes wait for a login after a reboot)


@dataclass(frozen=True)
class Check:
    """One check: its name, how it came out, what was found, and what to do about it."""

    name: str
    status: Status
    detail: str
    fix: str = ""

    def line(self) -> str:
        """The check for people."""
        text = f"{self.status.value.upper():4}  {self.name}: {self.detail}"
        return f"{text}\n      fix: {self.fix}" if self.fix else text


def register(sub: Any) -> None:
    """Add `doctor`."""
    p: argparse.ArgumentParser = sub.add_parser("doctor", help="check this node's watcher")
    p.add_argument(
        "--fix",
        action="store_true",
        help="mend what can be mended here: re-create a watcher entry the scheduler lost",
    )
    add_common(p)
    p.set_defaults(func=run)


def check_entry(
    ctx: NodeContext, record: WatcherRecord | None, *, seam: Seam | None = None
) -> Check:
    """The OS scheduler holds the entry this clone registered, and something runs it."""
    from relay.watchers.registration import DECLINED, Seam

    row = ctx.master.node(ctx.node)
    if record is None or not record.active:
        if row is not None and row.scheduler == DECLINED:
            return Check("watcher", Status.SKIP, "declined: passes run only with `relay watch`")
        if record is not None and record.torn_down_at is not None:
            when = f"{record.torn_down_at:%Y-%m-%d}"
            detail = f"torn down on {when}; `relay join` registers it again"
            return Check("watcher", Status.SKIP, detail)
        return Check(
            "watcher",
            Status.FAIL,
            f"no watcher is registered for {ctx.node} in this clone",
            fix="run `relay join` (or `relay join --scheduler none` to go without one)",
        )
    try:
        sched = (seam or Seam()).of(record)
        found = sched.verify(record.spec())
        caveats = sched.advice(record.spec()) if found.ok and not found.blocked else ()
    except RelayError as err:
        return Check("watcher", Status.FAIL, err.message, fix=err.hint or "run `relay join`")
    if found.ok and found.blocked:
        why, _, fix = found.blocked.partition(": ")
        return Check("watcher", Status.FAIL, f"{found.detail}, but {why}", fix=fix or why)
    warnings = [c.removeprefix("warning: ") for c in caveats if c.startswith("warning: ")]
    if found.ok and warnings:
        return Check("watcher", Status.WARN, f"{found.detail}; {'; '.join(warnings)}")
    if found.ok:
        return Check("watcher", Status.OK, found.detail)
    return Check(
        "watcher",
        Status.FAIL,
        found.detail,
        fix="run `relay join` again: it registers the entry and verifies it",
    )


def check_last_pass(ctx: NodeContext, record: WatcherRecord | None, now: datetime) -> Check:
    """The node's newest pass in this clone is recent and succeeded: with a watcher, the
    newest the scheduler started (a person's `relay watch --once` is no heartbeat)."""
    from relay.commands.status import age
    from relay.edges.local import SCHEDULER
    from relay.schedulers import entry_nonce

    active = record is not None and record.active
    logs = f"; its errors go to {error_log(record)}" if record else ""
    passes = [p for p in ctx.state.passes() if p.node == ctx.node]
    beats = [p for p in passes if p.started_by == SCHEDULER] if active else passes
    manual = ""
    if active and passes and (not beats or passes[-1].at > beats[-1].at):
        by = passes[-1].started_by or "an older relay"
        manual = f" (a pass started by {by} at {passes[-1].at:%H:%M:%S} UTC does not count)"
    if not beats and record is not None and active:
        due = record.registered_at + timedelta(seconds=record.interval + DUE_SLACK)
        if now < due:
            detail = f"no scheduled pass yet; the first is due by {due:%H:%M:%S} UTC{manual}"
            return Check("last pass", Status.PENDING, detail)
    if not beats:
        status = Status.FAIL if active else Status.SKIP
        fix = (
            f"the {record.scheduler} entry has not run; check {record.scheduler}{logs}"
            if (record is not None and active)
            else ""
        )
        if record is not None and active and entry_nonce(record.spec().argv) is None:
            fix = (
                "run `relay join` again: the entry was registered by an older relay, whose"
                " passes cannot show they are the scheduler's"
            )
        said = f"no {'scheduled ' if active else ''}pass of {ctx.node} recorded yet{manual}"
        return Check("last pass", status, said, fix=fix)
    beat = beats[-1]
    when = f"{beat.at:%Y-%m-%d %H:%M:%S} UTC ({age(beat.at, now)} ago)"
    if beat.outcome == "error" or beat.outcome.startswith("error:"):
        fix = f"run `relay watch --once` to see the error{logs}"
        said = beat.outcome.removeprefix("error").lstrip(": ")
        detail = f"the last pass, at {when}, failed" + (f": {said}" if said else "")
        return Check("last pass", Status.FAIL, detail, fix=fix)
    if record is not None and active:
        limit = STALE_INTERVALS * record.interval
        if (now - beat.at).total_seconds() > limit:
            detail = f"the last scheduled pass was at {when}: more than {STALE_INTERVALS} intervals"
            fix = f"the {record.scheduler} entry is not running; check {record.scheduler}{logs}"
            return Check("last pass", Status.FAIL, f"{detail} ({limit}s){manual}", fix=fix)
    return Check("last pass", Status.OK, f"{when}: {beat.outcome}{manual}")


def error_log(record: WatcherRecord) -> str:
    """Where a scheduled pass's errors end up: its own --log (Task Scheduler), else stderr."""
    argv = list(record.entry["argv"])
    if "--log" in argv[:-1]:
        return str(argv[argv.index("--log") + 1])
    return str(record.entry["stderr_log"])


def check_scheduled_token(ctx: NodeContext, record: WatcherRecord | None) -> Check:
    """A scheduled pass (which carries no token) will find one at run time."""
    from relay.watchers.scheduled_token import token_route

    if record is None or not record.active:
        return Check("token for scheduled passes", Status.SKIP, "no watcher registered")
    ok, said = token_route(ctx, record)
    if ok:
        return Check("token for scheduled passes", Status.OK, said)
    return Check(
        "token for scheduled passes",
        Status.FAIL,
        said,
        fix="run `relay join --save-token` with the token set as you run relay now",
    )


async def api_checks(ctx: NodeContext, record: WatcherRecord | None) -> list[Check]:
    """The token works (GET /user; an App: GET /app) and the five labels exist. With a
    watcher, the token checked is the one its scheduled passes will find, not this shell's."""
    from relay.node.context import client
    from relay.protocol.labels import Label
    from relay.watchers.scheduled_token import pass_token

    skipped = Check("labels", Status.SKIP, "needs a working token")
    scheduled = record is not None and record.active
    try:
        token = pass_token(ctx, record) if scheduled else ctx.token()
        async with client(ctx, token=token) as gh:
            user = await gh.current_user()
            whose = "scheduled passes' token" if scheduled else "token"
            asked = "GET /app" if gh.app is not None else "GET /user"
            said = f"the {whose} from {token.source} works ({asked}: {user.login})"
            checks = [Check("token", Status.OK, said)]
            names = {label.name for label in await gh.list_labels()}
    except RemoteUnavailable as err:  # the hub or GitHub is down: the token is not to blame
        fix = f"start the hub or check the network to {ctx.api_url}, then run doctor again"
        down = Check("hub/API", Status.FAIL, f"hub/API unreachable: {err.message}", fix=fix)
        return [down, Check("token", Status.SKIP, "needs a reachable hub/API"), skipped]
    except RelayError as err:
        fix = err.hint or "set RELAY_TOKEN (or `relay join --save-token`) to a working token"
        return [Check("token", Status.FAIL, err.message, fix=fix), skipped]
    missing = [label.value for label in Label if label.value not in names]
    if not missing:
        return [*checks, Check("labels", Status.OK, "all five relay labels exist")]
    fix = "create them in the repository (its Labels page, or `gh label create NAME`)"
    return [*checks, Check("labels", Status.FAIL, f"missing: {', '.join(missing)}", fix=fix)]


def loop_checks(root: Path) -> list[tuple[str, str, str, str]]:
    """The loop's checks: its pending resume, then each gate run the scheduler's way, then
    (relay run as root) each share's idmapping."""
    from relay.commands.loop_env import schedule_checks
    from relay.commands.loop_unattended import resume_checks

    found = [*resume_checks(root), *schedule_checks(root)]
    return [*found, *share_checks()] if found else found


def share_checks() -> list[tuple[str, str, str, str]]:
    """For a relay run as root, each share (``RELAY_SANDBOX_SHARE``): whether a box's set-up
    can bind it through an idmapped mount (tried with the set-up's own calls), so that
    each box runs as a user of its own; where one cannot, every box runs as the boxes'
    shared user, and that is said with what to do."""
    from relay.ratchet.sandbox import (
        BOX_ID,
        NAMESPACES,
        SHARE_ENV,
        _as_root,
        _own_users,
        idmap_probe,
        level,
        named_shares,
    )

    if level() != NAMESPACES or not _as_root():
        return []
    shares = [s for s in named_shares() if s.is_dir()]
    shared_user = (
        f"every box runs as the boxes' shared user ({BOX_ID}), so a box (or a local account"
        " that became that user through one) can signal the other running boxes and read"
        " their files through /proc"
    )
    if shares and not _own_users():
        why = f"this user namespace does not map the boxes' own users: {shared_user}"
        fix = "run relay where the users below 2147352576 are mapped (the machine's own namespace)"
        return [("loop box users", "warn", why, fix)]
    found: list[tuple[str, str, str, str]] = []
    for share, why in idmap_probe(shares).items():
        name = f"loop share {share}"
        if not why:
            said = "bound through an idmapped mount: each box runs as a user of its own"
            found.append((name, "ok", said, ""))
            continue
        fix = (
            "keep the share on a file system that supports idmapped mounts (ext4, xfs, btrfs,"
            f" tmpfs on Linux 6.3 or later), or take it out of {SHARE_ENV}"
        )
        said = f"cannot be bound through an idmapped mount ({why}): {shared_user}"
        found.append((name, "warn", said, fix))
    return found


def loop_only(args: argparse.Namespace) -> Output | None:
    """The doctor of a clone that runs only the loop (no `## Relay` section): the relay
    part is said to be not set up, without failing, and the loop's resume is checked."""
    from pathlib import Path

    from relay.edges.local import clone_root
    from relay.node.context import read_loop
    from relay.protocol import has_section

    try:
        root = clone_root((args.repo_dir or Path.cwd()).resolve())
        text = read_loop(root)
    except RelayError:
        return None
    if text is not None and has_section(text):
        return None
    loop = [Check(n, Status(s), d, f) for n, s, d, f in loop_checks(root)]
    if not loop:
        return None
    fix = "run `relay init` (then `relay join`) to use the relay here too"
    checks = [Check("relay", Status.SKIP, "not set up here: no `## Relay` section", fix), *loop]
    failed = [c.name for c in checks if c.status is Status.FAIL]
    lines = [c.line() for c in checks]
    lines.append(f"{len(failed)} check(s) failed" if failed else "the loop: all checks passed")
    data = {"node": None, "ok": not failed, "checks": [asdict(c) for c in checks]}
    return Output(lines=tuple(lines), data=data, exit_status=1 if failed else 0)


def _joined(args: argparse.Namespace) -> bool:
    """Whether the clone has joined as a node (its saved config), found without loading
    the node: a joined clone is fetched before anything else."""
    from relay.edges.statefile import clone_root, git_dir

    try:
        return (git_dir(clone_root(args.repo_dir or Path.cwd())) / "relay/config.json").is_file()
    except RelayError:
        return False


def _fetch_quietly(args: argparse.Namespace) -> None:
    """Fetch when the remote answers; the checks below say what is wrong when it does not."""
    from pathlib import Path

    from relay.errors import RelayError
    from relay.node.clone import open_clone

    try:
        open_clone((args.repo_dir or Path.cwd()).resolve(), api=args.api).refresh()
    except RelayError:
        return


def check_roster(ctx: NodeContext) -> Check:
    """The roster this node trusts, and what the branch says that it does not follow (a
    refused revision, a hand-edited table, another API URL): a warning each, said once."""
    revision = ctx.trust.revision
    if revision is None:
        fix = "run `relay join` (or set RELAY_TRUST to the admin key's fingerprint)"
        return Check("roster", Status.FAIL, "this clone trusts no roster", fix=fix)
    member = revision.member(ctx.node)
    said = f"revision {revision.revision}" + ("" if member else f"; {ctx.node} is not a member")
    if ctx.trust.notes:
        return Check("roster", Status.WARN, f"{said}; not followed: {'; '.join(ctx.trust.notes)}")
    if member is None:
        fix = (
            f"an admin node runs `relay nodes approve {ctx.node} --fingerprint FP`"
            " (FP: what `relay nodes key` prints here)"
        )
        return Check("roster", Status.FAIL, said, fix=fix)
    return Check("roster", Status.OK, said)


def check_git() -> Check:
    """Every pass runs git (fetch, worktree, push): a node without it cannot work."""
    import shutil

    found = shutil.which("git")
    if found is None:
        fix = "install git (git-scm.com; apt-get install git, brew install git) and run again"
        return Check("git", Status.FAIL, "git is not installed or not on the PATH", fix=fix)
    return Check("git", Status.OK, found)


def run(args: argparse.Namespace) -> Output:
    """Run every check; non-zero exit when any fails."""
    joined = _joined(args)
    if joined:  # the fetch first: the checks' modules load after it
        _fetch_quietly(args)  # the roster as the remote has it now (an admission since join)
    only = loop_only(args)
    if only is not None:
        return only
    import os

    from relay.watchers.actions_environment import in_actions, key_reach
    from relay.watchers.registration import load

    if not joined:
        _fetch_quietly(args)
    ctx = context(args)
    record = load(ctx.state, ctx.node)
    mended = mend_entry(ctx, record) if args.fix else []
    actions = [run_async(lambda: key_reach(ctx))] if in_actions(os.environ) else []
    checks = [
        check_git(),
        check_roster(ctx),
        check_entry(ctx, record),
        check_last_pass(ctx, record, datetime.now(UTC)),
        check_scheduled_token(ctx, record),
        *run_async(lambda: api_checks(ctx, record)),
        *(Check(n, Status(s), d, f) for n, s, d, f in actions),
        *(Check(n, Status(s), d, f) for n, s, d, f in loop_checks(ctx.root)),
    ]
    failed = [c.name for c in checks if c.status is Status.FAIL]
    lines = [*mended, *(c.line() for c in checks)]
    lines.append(f"{len(failed)} check(s) failed" if failed else f"{ctx.node}: all checks passed")
    data = {
        "node": ctx.node,
        "ok": not failed,
        "checks": [asdict(c) for c in checks],
        "fixed": mended,
    }
    return Output(lines=tuple(lines), data=data, exit_status=1 if failed else 0)


def mend_entry(
    ctx: NodeContext, record: WatcherRecord | None, seam: Seam | None = None
) -> list[str]:
    """`relay doctor --fix`: the entry this clone registered (and did not tear down) is
    gone from the OS scheduler: register exactly that entry again (its nonce and all, so
    its passes still count as the scheduler's) and verify it. What was done, in words;
    nothing when there was nothing to mend."""
    from relay.watchers.registration import Seam, install

    if record is None or not record.active:
        return []
    sched = (seam or Seam()).of(record)
    try:
        if sched.verify(record.spec()).ok:
            return []
        check = install(sched, record.spec())
    except RelayError as err:
        return [f"fix: could not re-create the {record.scheduler} entry of {ctx.node}: {err}"]
    return [
        f"fixed: re-created the {record.scheduler} entry of {ctx.node} (every"
        f" {record.interval}s): {check.detail}"
    ]
