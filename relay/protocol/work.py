"""The worker's rules, pure: where a task's log lives and how the worker seals it, which
ref claims it, how long a claim's lease lasts, and what status its RESULT carries.

Ground rules: no clock, no disk. The node's run limits come in through the snapshot
(:class:`RunLimits`), so the lease another runner of the same node waits out is computed
here, from the same numbers the steps will run under.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Collection
from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict, Field

from relay.protocol.logs import MAX_LOG_CHARS
from relay.protocol.messages import MAX_ALIVE_FOR, ClaimMsg, Status, TaskMsg
from relay.protocol.signatures import Verdict, verify_payload
from relay.protocol.wire import MessageRejected, decode_block, encode_block

LOG_DIR = "docs/loop/relay"
LEASE = timedelta(hours=2)  # the shortest lease: what a claim with no known limits gets
LEASE_MARGIN = timedelta(minutes=10)  # beyond the worst case, to push the log and answer
DEFAULT_STEP_TIMEOUT = 600.0  # seconds, when the node's config does not say
DEFAULT_HEARTBEAT = 300.0  # seconds between two heartbeats of a running claim
MISSED_BEATS = 4  # a claim whose heartbeat is this many intervals late has lapsed
BARE_GRACE = timedelta(minutes=3)  # a claim ref with no claim comment, before a takeover
# ...and at least as long seen bare by the runner that takes it over: a runner that made
# the ref posts its claim within seconds (a pass waits this out rather than end)
BARE_SETTLE = timedelta(minutes=1)


class RunLimits(BaseModel):
    """How a node runs a task: each step's timeout, and whether an agent command
    (``executor``) takes the whole TASK as one run instead of its steps."""

    model_config = ConfigDict(frozen=True)

    step_timeout: float = Field(default=DEFAULT_STEP_TIMEOUT, gt=0)
    executor: bool = False
    heartbeat: float = Field(default=DEFAULT_HEARTBEAT, gt=0)


def log_path(issue: int, task: int) -> str:
    """Where a task's full log lives in the repository (a path with forward slashes)."""
    return f"{LOG_DIR}/{issue}/logs/result-{task:03d}.log"


LOG_KIND = "log"  # the block that seals a log: no message kind, so no comment is one
# the most bytes a sealed log can be: a capped log's characters at four bytes each, with
# the cut's marker line and the seal (a larger file at a log's path is no log of relay's)
SEALED_LOG_BYTES = 4 * MAX_LOG_CHARS + 64 * 1024


def seal_line(log: str, *, issue: int, task: int, node: str) -> tuple[str, str]:
    """The log as published, without its last line, and that line unsigned (the node
    signs it): a block naming the task and the digest of the lines above it. A log the
    worker's own key sealed is its memory that the task ran, wherever the file is found;
    anyone with push access can write a file at that path, none can seal it."""
    body = log if log.endswith("\n") or not log else log + "\n"
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
    fields = {"sha256": digest}
    block = {"kind": LOG_KIND, "issue": issue, "task": task, "node": node, "fields": fields}
    return body, encode_block(block)


def sealed_by(
    data: bytes, *, repo: str, issue: int, task: int, node: str, keys: tuple[str, ...]
) -> bool:
    """Whether ``data`` (a log file's bytes) ends with the seal of TASK ``task`` on
    ``issue`` by ``node``, signed by one of ``keys``, over exactly the lines above it."""
    text = data.decode("utf-8", errors="replace")
    if not text.endswith("\n"):
        return False
    head, _, last = text[:-1].rpartition("\n")
    body = head + "\n" if head else ""
    try:
        payload = decode_block(last)
    except MessageRejected:
        return False
    fields = payload.get("fields")
    return (
        payload.get("kind") == LOG_KIND
        and payload.get("issue") == issue
        and payload.get("task") == task
        and payload.get("node") == node
        and isinstance(fields, dict)
        and fields == {"sha256": hashlib.sha256(body.encode("utf-8")).hexdigest()}
        and verify_payload(payload, repo=repo, public_keys=keys) == Verdict.VALID
    )


def artifact_path(issue: int, task: int, path: str) -> str:
    """Where a TASK's artifact (``path`` inside the worker's clone) is committed."""
    return f"{LOG_DIR}/{issue}/artifacts/{task:03d}/{path}"


_UNSAFE = re.compile(r"[^A-Za-z0-9._ -]")  # what a RESULT's artifact path may not hold
MAX_NAME = 300


def safe_artifact_name(path: str, *, number: int, taken: Collection[str] = ()) -> str:
    """The name an artifact travels under: its own path when a RESULT can carry it, else
    each part with any other character replaced by ``_`` (``TEST-a.Outer$Inner.xml`` is
    ``TEST-a.Outer_Inner.xml``), made unique with the artifact's ``number`` when the
    plain name is taken or too long, so no file name can lose a RESULT."""
    parts = [_UNSAFE.sub("_", part) for part in path.split("/")]
    name = "/".join("_" + p if p in ("", ".", "..", ".git") else p for p in parts)
    last = name.rsplit("/", 1)[-1]
    dot = last.rfind(".")
    suffix = last[dot:] if dot > 0 and len(last) - dot <= 20 else ""
    stem = name[: len(name) - len(suffix)]
    candidates = [name, f"{stem}-{number}{suffix}", f"artifact-{number}{suffix}"]
    for candidate in candidates:
        if candidate not in taken and len(candidate) <= MAX_NAME:
            return candidate
    return f"artifact-{number}-{len(taken)}{suffix}"  # every name above is another's


def claim_ref(issue: int, task: int) -> str:
    """The ref whose creation is the atomic claim of a task."""
    return f"refs/relay/claims/{issue}/{task}"


def lease_until(claimed_at: datetime, *, steps: int, limits: RunLimits) -> datetime:
    """When a claim taken at ``claimed_at`` expires: long enough for every step to run to
    its timeout (one run for an agent command) plus a margin, and never under LEASE, so a
    long task is never reported half-done while it still runs."""
    runs = 1 if limits.executor else max(steps, 1)
    worst = claimed_at + timedelta(seconds=runs * limits.step_timeout) + LEASE_MARGIN
    return max(claimed_at + LEASE, worst)


def beat_window(limits: RunLimits) -> int:
    """How many seconds a claim stays alive without another heartbeat: a few intervals,
    so one lost beat (the API down for a minute) is not taken for a dead worker."""
    return min(MAX_ALIVE_FOR, max(1, math.ceil(limits.heartbeat * MISSED_BEATS)))


def alive_until(now: datetime, limits: RunLimits) -> datetime:
    """When a claim beaten at ``now`` lapses without another beat (:func:`beat_window`)."""
    return now + timedelta(seconds=beat_window(limits))


def lapses(claim: ClaimMsg) -> datetime:
    """When a claim ends if nothing more is heard from its worker: the lease, or earlier
    when the claim carries a heartbeat and the beats stopped."""
    if claim.alive_until is None:
        return claim.lease_until
    return min(claim.lease_until, claim.alive_until)


def claim_lapses(claim: ClaimMsg, edited_at: datetime) -> datetime:
    """:func:`lapses` for a claim as its comment shows it (``edited_at``: the comment's
    ``updated_at``): every edit counts as a beat. A worker's beat says it is alive for its
    window from the beat, so its newest text and its comment's last edit agree; a text
    put back by someone else (an older beat of the worker's, signed, edited in by anyone
    who can edit comments) says less than the edit that put it there, and a live worker
    beats again within that window. So a claim lives its window (:func:`claim_window`:
    what it signed, ``alive_for``) from its last edit, or to its
    ``alive_until`` if later, never past its lease: a beat put back never takes a running
    task away. Where GitHub's edit history of the comment was read, ``edited_at`` is the
    newest version its worker wrote (:func:`relay.protocol.decide.claim_entry_lapses`, which
    reads that version's own text where it can), so her edits hold it no longer."""
    lapsed = lapses(claim)
    if claim.alive_until is None:
        return lapsed
    return max(lapsed, min(claim.lease_until, edited_at + claim_window(claim)))


def made_at(claim: ClaimMsg, now: datetime) -> ClaimMsg:
    """``claim`` made at ``now``, when it is posted, not when the pass decided it (a pass
    that ran another task first, a machine that slept between): its lease and heartbeat
    move with it, so its comment is posted as its claim is made (a beat whose text she
    removed counts only in such a comment: :func:`relay.protocol.decide._posted_with`)."""
    late = now - claim.claimed_at
    if late <= timedelta(0):
        return claim
    moved = {"claimed_at": now, "lease_until": claim.lease_until + late}
    if claim.alive_until is not None:
        moved["alive_until"] = claim.alive_until + late
    return claim.model_copy(update=moved)


def claim_window(claim: ClaimMsg) -> timedelta:
    """How long one beat keeps ``claim`` alive: what the worker signed at the claim
    (``alive_for``), or, for a claim that does not say (an older relay's), its text's
    ``alive_until - claimed_at``, which grows with every beat."""
    if claim.alive_for is not None:
        return timedelta(seconds=claim.alive_for)
    if claim.alive_until is None:  # no heartbeat: it lives to its lease
        return claim.lease_until - claim.claimed_at
    return claim.alive_until - claim.claimed_at


class StepEnd(BaseModel):
    """How the last step of a failed run ended, as the RESULT's summary needs it."""

    model_config = ConfigDict(frozen=True)

    number: int
    command: str
    timed_out: bool = False
    exit_code: int | None = None


def stopped_summary(
    task: TaskMsg, *, ran: int, interrupted: StepEnd | None, by: str, executor: bool = False
) -> tuple[Status, str, int | None]:
    """The RESULT of a run stopped on the worker (``by``: "Ctrl-C", "SIGTERM"): the step
    it interrupted (None: the stop came between two steps, after ``ran`` of them) and the
    steps that never ran, by number and command. ``executor``: one agent command ran the
    whole TASK, so no step of it can be named."""
    if executor:
        return Status.STOPPED, f"Stopped on the node ({by}) while its agent command ran.", 1
    count = len(task.steps)
    first_unrun = interrupted.number + 1 if interrupted is not None else ran + 1
    where = (
        f"during step {interrupted.number} of {count} (`{interrupted.command[:120]}`)"
        if interrupted is not None
        else f"before step {ran + 1} of {count}"
    )
    rest = [f"step {n} (`{task.steps[n - 1][:120]}`)" for n in range(first_unrun, count + 1)]
    never = f"; never ran: {', '.join(rest)}" if rest else "; no step was left to run"
    summary = f"Stopped on the node ({by}) {where}{never}."
    if len(summary) > 3000:  # room for redaction's markers within a summary's 4000
        summary = summary[:2996] + "...."
    return Status.STOPPED, summary, interrupted.number if interrupted is not None else None


def run_summary(
    task: TaskMsg, *, checkout_failed: bool, failed: StepEnd | None, refused: str | None = None
) -> tuple[Status, str, int | None]:
    """The RESULT's status, one-line summary and failed step, from how the run ended: the
    worker refused to run it (``refused``, why: the branch is not at the commit the TASK
    names), the branch could not be checked out (no step ran either way), a step failed
    (``failed``), or every step succeeded."""
    if refused is not None:
        return Status.BLOCKED, f"Not run: {' '.join(refused.split())}.", None
    if checkout_failed:
        return (
            Status.FAILED,
            f"Branch `{task.checkout}` could not be checked out; no step ran.",
            None,
        )
    count = len(task.steps)
    if failed is None:
        return Status.DONE, f"All {count} step(s) succeeded.", None
    why = "timed out" if failed.timed_out else f"exited with {failed.exit_code}"
    summary = f"Step {failed.number} of {count} {why}: `{failed.command[:120]}`."
    return Status.FAILED, summary, failed.number


def result_status(ran: Status, *, log_pushed: bool | None) -> Status:
    """The status a RESULT reports: a run that succeeded but whose log could not be pushed
    (``log_pushed`` False) is only partial — the controller has no evidence to read. None:
    no log was to be pushed (it was withheld as unsafe), which the observations say."""
    if ran == Status.DONE and log_pushed is False:
        return Status.PARTIAL
    return ran
