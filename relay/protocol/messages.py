"""The messages of a job thread: TASK, RESULT, claim, half-done, escalation, closure.

Ground rules: each message is a frozen model; :func:`render_message` turns it into
markdown a person reads, followed by the one hidden block the program reads. Parsing
(:func:`parse_message`) trusts the block and then demands that the whole body is exactly
what rendering the block gives, so a comment whose markdown was edited, or that was
written by hand to look like a message, is rejected as data. Who may send which message
is decided in :mod:`relay.protocol.thread`, not here.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from relay.protocol.logs import EXCERPT_LINES
from relay.protocol.master import NAME_RE, InvalidValue
from relay.protocol.wire import (
    MAX_BLOCK,
    MAX_BODY,
    MessageRejected,
    code_span,
    decode_block,
    encode_block,
    fenced,
    neutralise,
)


def _utc(value: datetime) -> datetime:
    return value.astimezone(UTC)


def _one_line(value: str) -> str:
    if "\n" in value or "\r" in value:
        raise ValueError("must be a single line")
    return value


def excerpt_lines(value: str) -> list[str]:
    """The lines of an excerpt as markdown sees them (only CR and LF break a line)."""
    text = value.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n")
    return text.split("\n") if text else []


def _excerpt(value: str) -> str:
    if len(excerpt_lines(value)) > EXCERPT_LINES:
        raise ValueError(f"an excerpt has at most {EXCERPT_LINES} lines")
    return value


Text = Annotated[str, Field(max_length=4000)]
When = Annotated[datetime, AfterValidator(_utc)]
Step = Annotated[str, Field(min_length=1, max_length=1000), AfterValidator(_one_line)]
Url = Annotated[str, Field(pattern=r"^https?://[^\s()<>`]+$", max_length=1000)]
Excerpt = Annotated[str, Field(max_length=8000), AfterValidator(_excerpt)]
Login = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9-]{0,38}$")]


def _relative(value: str) -> str:
    parts = value.split("/")
    if value.startswith("/") or any(p in ("", ".", "..", ".git") for p in parts):
        raise ValueError("must be a path inside the clone (no '..', '.git' or leading '/')")
    return value


CHECKOUT_RE = r"^[A-Za-z0-9._/-]{1,200}$"
COMMIT_RE = r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$"  # a full object name (SHA-1 or SHA-256)


def _branch_name(value: str | None) -> str | None:
    """git's own rules for a branch name (``git check-ref-format --branch``), checked up
    front so that a TASK git would refuse is never posted."""
    if value is None:
        return value
    parts = value.split("/")
    if (
        ".." in value
        or value.startswith("-")
        or value.endswith(".")
        or value == "@"
        or any(not p or p.startswith(".") or p.endswith(".lock") for p in parts)
    ):
        raise ValueError(
            f"{value[:60]!r} is not a branch name git accepts (no '..', no part that is"
            " empty, starts with '.' or ends with '.lock', no leading '-' or trailing '.')"
        )
    return value


# a file or glob inside the worker's clone, with forward slashes (``dist/*.whl``, ``**/*.xml``)
ArtifactGlob = Annotated[
    str, Field(pattern=r"^[A-Za-z0-9._*?\[\]/ -]{1,200}$"), AfterValidator(_relative)
]
ArtifactPath = Annotated[
    str, Field(pattern=r"^[A-Za-z0-9._/ -]{1,300}$"), AfterValidator(_relative)
]


class Artifact(BaseModel):
    """One file a TASK asked for, as its RESULT lists it: text is redacted and committed
    (``url``); anything else is recorded by size and sha256, and committed only when the
    master section allows binary artifacts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: ArtifactPath
    size: int = Field(ge=0)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")  # of the file as the worker found it
    text: bool
    url: Url | None = None
    note: Annotated[str, Field(max_length=300), AfterValidator(_one_line)] = ""


class Kind(StrEnum):
    """What a relay block holds; the value is written in the block."""

    JOB = "job"
    TASK = "task"
    RESULT = "result"
    CLAIM = "claim"
    HALF_DONE = "half-done"
    ESCALATION = "escalation"
    CLOSURE = "closure"


class Status(StrEnum):
    """How a task went, as the worker reports it."""

    DONE = "done"
    FAILED = "failed"
    PARTIAL = "partial"
    BLOCKED = "blocked"
    STOPPED = "stopped"  # the worker's owner stopped relay while a step ran (Ctrl-C, SIGTERM)


class Message(BaseModel):
    """Fields every message has: the issue it belongs to and the node that sent it."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=False)
    kind: ClassVar[Kind]

    issue: int = Field(gt=0)
    node: str = Field(pattern=NAME_RE)


# The most steps a TASK holds: the longest lease any TASK can be given is this many
# steps' (what a runner waits out for a claim it cannot read, its TASK unreadable too).
MAX_STEPS = 30


class TaskMsg(Message):
    """TASK n: controller to worker."""

    kind = Kind.TASK
    task: int = Field(gt=0)
    objective: Text
    steps: tuple[Step, ...] = Field(min_length=1, max_length=MAX_STEPS)
    capture: Text = ""
    scope: str = Field(default="diagnostics", pattern=r"^[A-Za-z0-9][A-Za-z0-9 _.-]{0,60}$")
    authorized_by_human: bool = False
    fallback: Text = ""
    checkout: Annotated[
        str | None, Field(default=None, pattern=CHECKOUT_RE), AfterValidator(_branch_name)
    ] = None
    # the shell the worker runs each step in; None: the platform's (sh on POSIX, cmd.exe
    # on Windows)
    shell: Literal["sh", "bash", "cmd", "powershell", "pwsh"] | None = None
    # the job's stopping condition: a `done` RESULT of the newest such TASK lets it resolve
    verification: bool = False
    # files (globs) the worker brings back with the RESULT besides the log
    artifacts: tuple[ArtifactGlob, ...] = Field(default=(), max_length=20)
    # the commit the checked-out branch must be at: signed with the TASK, so a branch
    # pushed over meanwhile is refused by the worker (no step runs), never run in its place
    commit: str | None = Field(default=None, pattern=COMMIT_RE)
    # the steps run in the worker's judged box (a standalone clone of ``commit`` behind the
    # maker's boundary), never in relay's worktree beside the node's clone and secrets:
    # for code nobody on the worker vouches for, such as a loop's candidate
    boxed: bool = False

    @model_validator(mode="after")
    def _pinned(self) -> TaskMsg:
        if self.commit is not None and self.checkout is None:
            raise ValueError("a TASK that names a commit names the branch it is on (--checkout)")
        if self.boxed and self.commit is None:
            raise ValueError("a boxed TASK names the commit its box is a clone of (--commit)")
        if self.boxed and self.shell not in (None, "sh"):
            raise ValueError("a boxed TASK runs its steps in sh (no --shell of another kind)")
        return self


class ResultMsg(Message):
    """RESULT n: worker to controller."""

    kind = Kind.RESULT
    task: int = Field(gt=0)
    status: Status
    summary: Text
    log_url: Url | None = None
    excerpt: Excerpt = ""
    observations: Text = ""
    failed_step: int | None = Field(default=None, gt=0)
    artifacts: tuple[Artifact, ...] = Field(default=(), max_length=50)
    # the digest of the TASK this answers (task_digest): an old RESULT never answers a
    # new TASK that happens to carry the same number
    task_digest: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    # the commit the steps ran at, for a TASK that names one: set only once the worker
    # found the branch there, so the controller keeps nothing a RESULT for another
    # commit vouches for
    commit: str | None = Field(default=None, pattern=COMMIT_RE)


MAX_ALIVE_FOR = 7 * 24 * 3600  # seconds: the longest window a claim's beat may sign


class ClaimMsg(Message):
    """The worker took TASK n and is running it until ``lease_until`` at the latest.

    ``nonce`` is the claiming attempt's own (recorded locally before the claim ref was
    created), so a claim this node made is told apart from another runner's;
    ``alive_until`` is the heartbeat: while the steps run, the worker pushes it forward,
    and a claim whose heartbeat stopped lapses then, not at the end of the lease;
    ``alive_for`` is how many seconds each beat keeps it alive, signed at the claim, so a
    beat whose text is gone (or an edit that is no beat) is given that window, never one
    that grew with every beat."""

    kind = Kind.CLAIM
    task: int = Field(gt=0)
    claimed_at: When
    lease_until: When
    nonce: str | None = Field(default=None, pattern=r"^[0-9a-f]{8,64}$")
    alive_until: When | None = None
    alive_for: int | None = Field(default=None, gt=0, le=MAX_ALIVE_FOR)
    # the digest of the TASK claimed, and the person whose approval it acted on (a TASK
    # that needed one): the record of what was approved is signed with the claim
    task_digest: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    approved_by: Login | None = None


class HalfDoneMsg(Message):
    """A claim found with no RESULT: reported, never re-run."""

    kind = Kind.HALF_DONE
    task: int = Field(gt=0)
    known: Text
    reported_at: When


class EscalationMsg(Message):
    """The job is parked on needs:human."""

    kind = Kind.ESCALATION
    hypothesis: int = Field(gt=0)
    strikes: int = Field(gt=0)
    mentions: tuple[Login, ...] = ()
    reason: Text


class ClosureMsg(Message):
    """The job is resolved and closed."""

    kind = Kind.CLOSURE
    summary: Text
    resolved_at: When
    # why the job was resolved without a passing verification TASK (`relay resolve --force`)
    forced: Text = ""


AnyMessage = TaskMsg | ResultMsg | ClaimMsg | HalfDoneMsg | EscalationMsg | ClosureMsg
MESSAGE_TYPES: dict[Kind, type[AnyMessage]] = {
    t.kind: t for t in (TaskMsg, ResultMsg, ClaimMsg, HalfDoneMsg, EscalationMsg, ClosureMsg)
}


def _stamp(value: datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC")


def _field(label: str, value: str) -> list[str]:
    return [f"**{label}:** {neutralise(value).strip()}", ""] if value.strip() else []


def _task_md(m: TaskMsg) -> list[str]:
    steps = [f"{i}. {code_span(step)}" for i, step in enumerate(m.steps, 1)]
    authorized = "yes" if m.authorized_by_human else "no"
    lines = [f"### TASK {m.task} · from {code_span(m.node)}", ""]
    lines += _field("Objective", m.objective)
    lines += ["**Steps** (in order; the first failure stops the task):", "", *steps, ""]
    lines += _field("Capture", m.capture)
    lines += [f"**Scope:** {code_span(m.scope)} · **authorized-by-human:** {authorized}", ""]
    lines += _field("Fallback", m.fallback)
    if m.checkout:
        at = f" at {code_span(m.commit)}" if m.commit else ""
        lines += [f"**Check out:** {code_span(m.checkout)}{at}", ""]
    if m.boxed:
        lines += ["**Boxed:** the steps run in the worker's judged box, not in its clone.", ""]
    if m.artifacts:
        lines += ["**Artifacts:** " + ", ".join(code_span(a) for a in m.artifacts), ""]
    if m.verification:
        lines += ["**Verification:** a `done` RESULT of this TASK lets the job resolve.", ""]
    return lines + ([f"**Shell:** {code_span(m.shell)}", ""] if m.shell else [])


def task_digest(task: TaskMsg) -> str:
    """The hex SHA-256 of a TASK's content (its block without the signature): what a
    claim, a RESULT and a person's approval name, so each binds to exactly that TASK."""
    import hashlib
    import json

    text = json.dumps(payload_of(task, Kind.TASK), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def task_markdown(task: TaskMsg) -> str:
    """A TASK as people read it (its markdown, without the hidden block)."""
    return "\n".join(_task_md(task)).rstrip("\n")


def _result_md(m: ResultMsg) -> list[str]:
    log = f"[result log]({m.log_url})" if m.log_url else "not committed"
    lines = [f"### RESULT {m.task} · {m.status.value}", ""]
    verb = "did not run" if m.status == Status.BLOCKED else "ran"
    lines += [f"{code_span(m.node)} {verb} TASK {m.task}. **Log:** {log}", ""]
    lines += [f"**Commit:** {code_span(m.commit)}", ""] if m.commit else []
    lines += _field("Summary", m.summary)
    if m.failed_step is not None:
        label = "Interrupted step" if m.status == Status.STOPPED else "Failed step"
        lines += [f"**{label}:** {m.failed_step}", ""]
    if m.excerpt.strip():
        lines += [f"**Excerpt** (at most {EXCERPT_LINES} lines):", "", fenced(m.excerpt), ""]
    lines += _artifacts_md(m.artifacts)
    return lines + _field("Observations", m.observations)


def _artifacts_md(found: tuple[Artifact, ...]) -> list[str]:
    if not found:
        return []
    lines = ["**Artifacts:**", ""]
    for a in found:
        what = "text, redacted" if a.text else f"binary, sha256 {code_span(a.sha256)}"
        link = f" · [file]({a.url})" if a.url else ""
        note = f" · {neutralise(a.note).strip()}" if a.note.strip() else ""
        lines.append(f"- {code_span(a.path)}: {a.size} bytes, {what}{link}{note}")
    return [*lines, ""]


def _claim_md(m: ClaimMsg) -> list[str]:
    approved: list[str] = []
    if m.approved_by and m.task_digest:
        digest = code_span(m.task_digest[:12])
        approved = [f"Approved by @{m.approved_by} for the TASK with digest {digest}.", ""]
    return [
        f"### Claim · TASK {m.task}",
        "",
        f"{code_span(m.node)} claimed TASK {m.task} at {_stamp(m.claimed_at)} and is running"
        f" it; the claim lapses at {_stamp(m.lease_until)}.",
        "",
        *(
            [f"Still running; the next sign of life is due by {_stamp(m.alive_until)}.", ""]
            if m.alive_until is not None and m.alive_until < m.lease_until
            else []
        ),
        *approved,
    ]


def _half_done_md(m: HalfDoneMsg) -> list[str]:
    return [
        f"### Half-done · TASK {m.task}",
        "",
        f"{code_span(m.node)} claimed TASK {m.task} but no result was posted. The task will"
        " not be re-run; post a new TASK to try again.",
        "",
        *_field("What is known", m.known),
    ]


def _escalation_md(m: EscalationMsg) -> list[str]:
    who = " ".join(f"@{login}" for login in m.mentions) or "Instruction accounts"
    return [
        "### Needs a human",
        "",
        f"{who}: hypothesis H{m.hypothesis} has {m.strikes} strikes. The job is parked on"
        " `needs:human`; remove that label to hand the baton back to the controller.",
        "",
        *_field("Why", m.reason),
    ]


def _closure_md(m: ClosureMsg) -> list[str]:
    return [
        "### Resolved",
        "",
        *_field("Summary", m.summary),
        *_field("Resolved without a passing verification", m.forced),
        f"Closed by {code_span(m.node)} at {_stamp(m.resolved_at)}. The other nodes of this"
        " job tear their watchers down on their next pass, unless another open job binds"
        " them.",
        "",
    ]


_MARKDOWN: dict[Kind, Callable[[Any], list[str]]] = {
    Kind.TASK: _task_md,
    Kind.RESULT: _result_md,
    Kind.CLAIM: _claim_md,
    Kind.HALF_DONE: _half_done_md,
    Kind.ESCALATION: _escalation_md,
    Kind.CLOSURE: _closure_md,
}


# Fields added to a message after relays were out there: left out of the block while
# unset, so a message an older relay signed renders (and so verifies) byte for byte.
_LATER_FIELDS = ("alive_for",)


def payload_of(model: BaseModel, kind: Kind) -> dict[str, Any]:
    """The block payload for a model: kind, issue, task, node, and the other fields."""
    data = model.model_dump(mode="json")
    for later in _LATER_FIELDS:  # unset, as a relay from before them wrote no key
        if later in data and data[later] is None:
            del data[later]
    head = {k: data.pop(k, None) for k in ("issue", "task", "node")}
    return {"kind": kind.value, **head, "fields": data}


def assemble(markdown: list[str], payload: dict[str, Any]) -> str:
    """Markdown lines plus the block; raises InvalidValue when it would be too long."""
    block = encode_block(payload)
    body = "\n".join(markdown).rstrip("\n") + "\n\n" + block + "\n"
    if len(block) > MAX_BLOCK or len(body) > MAX_BODY:
        raise InvalidValue(
            f"the {payload['kind']} message is too long ({len(body)} characters)",
            hint="shorten its text; full output belongs in the committed log",
        )
    return body


def render_message(message: AnyMessage) -> str:
    """The comment body for a message: markdown for people, then the hidden block.

    Raises InvalidValue when the body would exceed GitHub's or relay's size limits.
    """
    return assemble(_MARKDOWN[message.kind](message), payload_of(message, message.kind))


def model_from_payload(payload: dict[str, Any], kinds: dict[Kind, type[BaseModel]]) -> BaseModel:
    """Validate a block payload into the model of its kind; raises MessageRejected."""
    try:
        kind = Kind(str(payload.get("kind")))
        model = kinds[kind]
    except (ValueError, KeyError):
        raise MessageRejected(f"unknown kind {str(payload.get('kind'))[:40]!r}") from None
    fields = payload.get("fields")
    if not isinstance(fields, dict):
        raise MessageRejected("the block has no fields object")
    if set(payload) - {"kind", "issue", "task", "node", "fields", "sig"}:
        raise MessageRejected("the block has unknown keys")
    head = {k: payload[k] for k in ("issue", "task", "node") if payload.get(k) is not None}
    if set(head) & set(fields):
        raise MessageRejected("the block repeats a key inside its fields")
    try:
        return model.model_validate({**fields, **head})
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise MessageRejected(f"{kind.value} block: {where}: {first['msg']}") from None


def unsigned(body: str) -> str:
    """The body without its signature (see :mod:`relay.protocol.signatures`)."""
    from relay.protocol.signatures import unsigned as strip

    return strip(body)


def parse_message(body: str, *, issue: int) -> AnyMessage:
    """The message a comment body carries, or MessageRejected saying why it is data."""
    message = model_from_payload(decode_block(body), dict(MESSAGE_TYPES))
    assert isinstance(message, AnyMessage)
    if message.issue != issue:
        raise MessageRejected(f"the block belongs to issue {message.issue}, not {issue}")
    try:
        expected = render_message(message)
    except InvalidValue:
        raise MessageRejected("the message is longer than relay would ever write") from None
    if unsigned(body.replace("\r\n", "\n")) != expected:
        raise MessageRejected("the markdown does not match its block (edited by hand?)")
    return message
