"""The issue body: the living summary of one job.

Ground rules: the body's block is authoritative. Relay rewrites the whole body from the
model whenever it changes the job (a hypothesis, a strike, the closure), so a person's
edits to the markdown are shown until then but never read. The binding (controller and
worker) is set when the job is opened and every planner carries it over unchanged.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator

from relay.protocol.master import NAME_RE, InvalidValue
from relay.protocol.messages import Kind, Text, assemble, model_from_payload, payload_of
from relay.protocol.wire import MessageRejected, code_span, decode_block, neutralise, one_line

STRIKE_LIMIT = 3


class Outcome(StrEnum):
    """What testing a hypothesis showed so far."""

    UNTESTED = "untested"
    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    INCONCLUSIVE = "inconclusive"


class Hypothesis(BaseModel):
    """One hypothesis tried on the job, with its outcome and strikes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    number: int = Field(gt=0)
    text: str = Field(min_length=1, max_length=500)
    outcome: Outcome = Outcome.UNTESTED
    # past the limit once a person unparked the job and the controller struck again
    strikes: int = Field(default=0, ge=0, le=1000)


class JobBody(BaseModel):
    """What the issue body holds."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    controller: str = Field(pattern=NAME_RE)
    worker: str = Field(pattern=NAME_RE)
    # what kind of job this is; the worker takes only the kinds the master section lists
    # as delegable ("Delegable jobs")
    kind: str = Field(default="diagnostics", pattern=r"^[A-Za-z0-9][A-Za-z0-9 _.-]{0,60}$")
    objective: Text = Field(min_length=1)
    state: Text = "Opened; no task yet."
    hypotheses: tuple[Hypothesis, ...] = Field(default=(), max_length=50)
    resolution: Text = ""
    # the number of the newest TASK the controller posted: a number is used once, even when
    # every comment that names it has been made unreadable
    tasks: int = Field(default=0, ge=0)
    # rises by one each time the controller writes the body: a node refuses a body older
    # than the newest it has seen (an old signed body put back rewinds nothing)
    revision: int = Field(default=0, ge=0)

    @model_validator(mode="after")
    def _consistent(self) -> JobBody:
        if self.controller == self.worker:
            raise ValueError("the controller and the worker must be different nodes")
        numbers = [h.number for h in self.hypotheses]
        if numbers != list(range(1, len(numbers) + 1)):
            raise ValueError("hypotheses are numbered 1, 2, 3, ... in order")
        return self


def _hypotheses_md(job: JobBody) -> list[str]:
    if not job.hypotheses:
        return ["None yet.", ""]
    rows = [
        f"| H{h.number} | {one_line(h.text)} | {h.outcome.value} | {h.strikes} of {STRIKE_LIMIT} |"
        for h in job.hypotheses
    ]
    return ["| # | hypothesis | outcome | strikes |", "| --- | --- | --- | --- |", *rows, ""]


def render_body(job: JobBody) -> str:
    """The issue body for a job: markdown for people, then the hidden block.

    Raises InvalidValue when the body would be too long for GitHub.
    """
    lines = [
        f"**Relay job** · {code_span(job.kind)} · controller: {code_span(job.controller)} ·"
        f" worker: {code_span(job.worker)} (fixed for the job's life)",
        "",
        "### Objective",
        "",
        neutralise(job.objective).strip() or "(not stated)",
        "",
        "### Current state",
        "",
        neutralise(job.state).strip() or "(not stated)",
        "",
        "### Hypotheses tried",
        "",
        *_hypotheses_md(job),
    ]
    if job.resolution.strip():
        lines += ["### Resolution", "", neutralise(job.resolution).strip(), ""]
    return assemble(lines, payload_of(job, Kind.JOB))


def parse_body(body: str) -> JobBody:
    """The job an issue body describes; raises MessageRejected when it is not a job body."""
    payload = decode_block(body)
    if payload.get("kind") != Kind.JOB.value:
        raise MessageRejected("the issue body's block is not a job")
    job = model_from_payload(payload, {Kind.JOB: JobBody})
    assert isinstance(job, JobBody)
    return job


def brief(text: str, limit: int = 200) -> str:
    """``text`` folded to one line and cut to ``limit`` characters, for the state line."""
    folded = " ".join(text.split())
    return folded if len(folded) <= limit else folded[: limit - 1] + "…"


def restate(job: JobBody, state: str) -> str | None:
    """The body with a new "Current state" (cut to fit), or None when it cannot be
    rendered within GitHub's limits (the old body then stays)."""
    try:
        return render_body(
            job.model_copy(update={"state": brief(state, 1000), "revision": job.revision + 1})
        )
    except InvalidValue:
        return None
