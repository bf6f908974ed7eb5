"""Verification on another node, decided purely: the relay job each goal verified with
``--verify-on`` has (BOARD.md's ``## Verification jobs`` table), the branch its candidate
goes to, the TASK's steps, and what a RESULT means for the attempt.

Ground rules: the controller (the loop) authors the change; the worker only checks out
the branch, runs the acceptance command and reports. RESULT ``done`` is the pass,
``blocked`` (the worker ran nothing: its branch pushed over, no box) goes to a person with
no strike, any other status is a failure whose diagnosis is the RESULT's summary and
excerpt. Nothing is
pushed and no job is opened unless the contract authorises both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from relay.errors import SpineFileError
from relay.loop.goals import BOARD_NAME, Goal
from relay.loop.markdown import body_lines, find, is_rule_row, row, sections, split_row

SECTION = "Verification jobs"
HEAD = ("goal", "node", "job", "branch", "state")
INTRO = "The relay job each goal verified on another node uses; resolved with the goal.\n"
NEEDS = ("push", "open a relay job")


@dataclass(frozen=True)
class Job:
    """A goal's verification job."""

    goal: str
    node: str
    issue: int
    branch: str
    state: str = "open"  # open or resolved


def branch_for(goal: Goal) -> str:
    """The branch a goal's candidate is pushed to."""
    return f"relay-loop/{goal.id.lower()}"


def unauthorised(authorised: Sequence[str]) -> list[str]:
    """The irreversible actions verification needs that the contract does not authorise."""
    return [a for a in NEEDS if a not in authorised]


def parse_jobs(text: str, *, name: str = BOARD_NAME) -> tuple[Job, ...]:
    """The verification jobs on the board (none when it has no such section)."""
    parts = sections(text)
    at = find(parts, SECTION)
    if at is None:
        return ()
    found = []
    for number, line in body_lines(parts[at]):
        cells = split_row(line)
        if cells is None or is_rule_row(cells) or cells == list(HEAD):
            continue
        issue = cells[2].lstrip("#") if len(cells) == len(HEAD) else ""
        if not issue.isdigit():
            raise SpineFileError(name, number, "a verification job reads | G1 | node | #12 | ...")
        found.append(Job(cells[0], cells[1], int(issue), cells[3], cells[4]))
    return tuple(found)


def open_job(jobs: Sequence[Job], goal: Goal) -> Job | None:
    """The goal's open job on its node, to be reused."""
    return next(
        (j for j in jobs if j.goal == goal.id and j.node == goal.verify_on and j.state == "open"),
        None,
    )


def with_job(text: str, job: Job) -> str:
    """BOARD.md with ``job``'s row in place (or appended; the section added at the end)."""
    jobs = list(parse_jobs(text))
    key = (job.goal, job.issue)
    if any((j.goal, j.issue) == key for j in jobs):
        jobs = [job if (j.goal, j.issue) == key else j for j in jobs]
    else:
        jobs.append(job)
    table = [row(list(HEAD)), "| " + " | ".join("---" for _ in HEAD) + " |"]
    table += [row([j.goal, j.node, f"#{j.issue}", j.branch, j.state]) for j in jobs]
    section = f"## {SECTION}\n\n{INTRO}\n" + "\n".join(table) + "\n"
    parts = sections(text)
    at = find(parts, SECTION)
    if at is None:
        return text.rstrip("\n") + "\n\n" + section
    rest = "".join(p.text for p in parts[at + 1 :])
    return "".join(p.text for p in parts[:at]) + section + ("\n" + rest if rest else "")


@dataclass(frozen=True)
class Answer:
    """A RESULT as the loop reads it: ``task`` the TASK it answers, ``commit`` the commit
    its worker found the branch at and ran (signed with it; "" when it names none), and
    ``asked`` the TASK the loop posted for this candidate (0: the same as ``task``)."""

    issue: int
    task: int
    status: str
    summary: str
    excerpt: str = ""
    commit: str = ""
    asked: int = 0


def judged(answer: Answer, *, node: str, commit: str | None = None) -> tuple[bool, str, str]:
    """(passed, what, diagnosis) of a RESULT: ``done`` for the TASK the loop posted, run at
    the candidate's ``commit``, passes; a ``done`` for another TASK or another commit (a
    replayed RESULT, a branch pushed over) fails saying so; anything else fails with the
    RESULT's summary and excerpt as the diagnosis."""
    asked = answer.asked or answer.task
    if answer.status == "done" and answer.task != asked:
        what = f"{node} answered TASK {answer.task}, not TASK {asked} (job #{answer.issue})"
        return False, what, f"{what}: a RESULT for another TASK vouches for nothing here"
    if answer.status == "done" and commit is not None and answer.commit != commit:
        ran = f"at {answer.commit[:12]}" if answer.commit else "at no commit it names"
        what = (
            f"{node} answered done {ran}, not at the candidate {commit[:12]}"
            f" (job #{answer.issue}, RESULT {answer.task})"
        )
        return False, what, f"{what}: only a RESULT for the candidate's own commit keeps it"
    if answer.status == "done":
        return True, f"{node} verified it (job #{answer.issue}, RESULT {answer.task})", ""
    if answer.issue <= 0:  # no job answered: relay itself failed before or while asking
        what = f"no verification on {node}: {' '.join(answer.summary.split())}"
        return False, what, answer.summary.strip()
    what = f"{node} answered {answer.status} (job #{answer.issue}, RESULT {answer.task})"
    diagnosis = answer.summary.strip()
    if answer.excerpt.strip():
        diagnosis += "\n\n" + answer.excerpt.strip()
    return False, what, diagnosis


def not_run(answer: Answer, *, node: str) -> str | None:
    """Why a RESULT goes to a person rather than counting against the maker, or None: a
    ``blocked`` one says the worker ran nothing (the branch pushed over since the TASK was
    posted, a box it cannot make, a TASK it declined, an answer edited after posting), so
    nothing in it judges the maker's change, and a branch someone else pushed over is for
    a person to look into, not a strike nor a rule to learn."""
    if answer.status != "blocked" or answer.issue <= 0:
        return None
    said = " ".join(answer.summary.split()) or "it gave no reason"
    return f"{node} ran nothing (job #{answer.issue}, RESULT {answer.task}): {said}"


def task_steps(goal: Goal) -> tuple[str, ...]:
    """What the worker runs on the checked-out branch: the acceptance command."""
    return (goal.accept,)
