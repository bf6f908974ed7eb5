"""The loop unattended: verification on another node through the relay's own verbs, the
one-shot resume after a usage limit, triage, the daily schedule, and what `relay loop
status` and `relay doctor` say about a pending resume.

Ground rules: the decisions are relay.loop's; this module only carries them out. The
relay's verbs run as processes (`python -m relay.cli ...`), exactly as a person would run
them, so verification goes through the ordinary machinery. Scheduler entries go through
``schedulers`` (the same seam, verification by query and teardown as watchers).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from relay import RELAY_MODULE
from relay.edges.ownpath import program
from relay.edges.statefile import git_dir
from relay.edges.treefiles import read_tree_text
from relay.errors import ConfigError, LocalUsageError, RelayError
from relay.loop.contract import CONTRACT_NAME, Contract
from relay.loop.goals import Goal
from relay.loop.resume import (
    RECORD_NAME,
    PendingResume,
    parse_record,
    record_problems,
    render_record,
    resume_args,
    resume_time,
)

if TYPE_CHECKING:
    from relay.loop.jobs import Answer

VERB_TIMEOUT = 120.0
ENTRY_NAME = "resume.entry.json"  # the registered entry as it was rendered, to verify it


def work_dir(root: Path) -> Path:
    """Where the loop keeps what belongs to this machine (the lock, the resume record)."""
    return git_dir(root) / "relay" / "loop"


# --- verification on another node ---


class RelayJobs:
    """:class:`relay.ratchet.engine.RemoteVerifier` through the relay's verbs."""

    def __init__(self, root: Path, *, wait: float, poll: float = 2.0) -> None:
        self.root = root
        self.wait = wait
        self.poll = poll

    def _verb(self, *args: str, timeout: float = VERB_TIMEOUT) -> Any:
        argv = [sys.executable, *RELAY_MODULE, *args, "--repo-dir", str(self.root), "--json"]
        try:
            done = subprocess.run(
                argv, capture_output=True, text=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired:
            raise ConfigError(f"`relay {args[0]}` gave no answer within {timeout:.0f}s") from None
        try:
            doc = json.loads(done.stdout)
        except ValueError:
            raise ConfigError(f"`relay {args[0]}` failed: {done.stderr.strip()[:300]}") from None
        if doc.get("exit_code") != 0:
            said = "; ".join(e.get("message", "") for e in doc.get("errors", [])) or done.stderr
            raise ConfigError(f"`relay {' '.join(args[:2])}` failed: {said.strip()[:300]}")
        return doc["data"]

    def open(self, goal: Goal) -> int:
        data = self._verb(
            "job",
            "open",
            "--worker",
            goal.verify_on or "",
            "--title",
            f"relay loop {goal.id}: {goal.title}",
            "--objective",
            f"Verify {goal.id} ({goal.title}) on {goal.verify_on}: check out the candidate"
            f" branch and run `{goal.accept}`.",
            "--kind",
            "verification",
        )
        return int(data["issue"])

    def verify(self, goal: Goal, *, job: int, commit: str, branch: str) -> Answer:
        from relay.loop.jobs import Answer, task_steps
        from relay.node.context import open_node

        ctx = open_node(repo_dir=self.root, node=None, api=None, need_node=False)
        # a force push to the loop's own branch: each candidate replaces the last
        ctx.clone._network("push", "--force", "origin", f"{commit}:refs/heads/{branch}")
        steps: list[str] = []
        for step in task_steps(goal):
            steps += ["--step", step]
        posted = self._verb(
            "task",
            str(job),
            *steps,
            "--checkout",
            branch,
            # signed with the TASK: the worker runs nothing when the branch is not there
            "--commit",
            commit,
            # the candidate's code runs in the worker's judged box, never beside its clone
            "--boxed",
            "--scope",
            "test",
            "--verification",  # the job's stopping condition: its RESULT lets resolve close it
            "--objective",
            f"Check out {branch} ({commit[:10]}) and run the acceptance command of {goal.id}.",
        )
        data = self._verb(
            "result",
            str(job),
            "--wait",
            "--timeout",
            str(self.wait),
            "--poll",
            str(self.poll),
            timeout=self.wait + VERB_TIMEOUT,
        )
        result = data.get("result") or {}
        return Answer(
            issue=job,
            task=int(result.get("task") or data.get("task") or 0),
            status=str(result.get("status", "half-done")),
            summary=str(result.get("summary", result.get("known", ""))),
            excerpt=str(result.get("excerpt", "")),
            commit=str(result.get("commit") or ""),
            asked=int(posted["task"]),
        )

    def resolve(self, job: int, summary: str) -> None:
        self._verb("resolve", str(job), "--summary", summary)


# --- the one-shot resume ---


def run_args(args: argparse.Namespace) -> list[str]:
    """`relay loop run`'s arguments as given (for the resume to run them again)."""
    words = ["loop", "run", *(["--maker", args.maker] if args.maker else [])]
    for command in args.checker:
        words += ["--checker", command]
    for command in getattr(args, "red_team", []) or []:
        words += ["--red-team", command]
    for flag, value in (
        ("--verifier", args.verifier),
        ("--goal", args.goal),
        ("--max-iterations", args.max_iterations),
        ("--wall-clock", args.wall_clock),
        ("--scheduler", getattr(args, "scheduler", None)),
        ("--verify-wait", getattr(args, "verify_wait", None)),
        ("--parallel", getattr(args, "parallel", None)),
        ("--group", getattr(args, "group", None)),
    ):
        if value is not None:
            words += [flag, str(value)]
    return words


def _backend(name: str | None, when: Any) -> Any:
    from relay.schedulers import choose
    from relay.schedulers.oneshot import timed

    return timed(choose(override=name), when)


class Resumer:
    """:class:`relay.ratchet.engine.Suspender`: register the one-shot resume, verify it by
    asking the scheduler, and write the record `relay loop status` shows."""

    def __init__(self, root: Path, args: Sequence[str], *, scheduler: str | None) -> None:
        self.root = root
        self.args = list(args)
        self.scheduler = scheduler

    def __call__(self, until: datetime, reason: str) -> str:
        from relay.commands.loop_env import env_path, read_env, record_env
        from relay.ratchet.files import Spine
        from relay.schedulers.oneshot import RESUME_PREFIX, When, timed_entry

        at = resume_time(until)
        if read_env(self.root) is None:  # a run started by hand: its shell is the gates'
            record_env(self.root, Spine(self.root).contract())
        words = [*resume_args(self.args), "--repo-dir", str(self.root)]
        words += ["--env-file", str(env_path(self.root))]
        entry = timed_entry(
            prefix=RESUME_PREFIX,
            clone=self.root,
            args=words,
            state_dir=work_dir(self.root),
            description=f"relay loop resume in {self.root}",
        )
        backend = _backend(self.scheduler, When(at=at))
        backend.register(entry)
        found = backend.verify(entry)
        if not found.ok:
            backend.teardown(entry)
            raise ConfigError(
                f"the resume was not registered: {found.detail}",
                hint="run `relay loop run --resume` by hand after the reset",
            )
        record = PendingResume(
            label=entry.label,
            scheduler=backend.describe(),
            at=at.isoformat(),
            argv=entry.argv,
            reason=reason,
            registered=datetime.now(UTC).isoformat(),
        )
        path = work_dir(self.root) / RECORD_NAME
        path.parent.mkdir(parents=True, exist_ok=True)
        spec = {
            "working_dir": entry.working_dir,
            "stdout_log": entry.stdout_log,
            "stderr_log": entry.stderr_log,
            "environment": [list(pair) for pair in entry.environment],
            "description": entry.description,
        }
        (work_dir(self.root) / ENTRY_NAME).write_text(json.dumps(spec), encoding="utf-8")
        path.write_text(render_record(record), encoding="utf-8")
        return f"resume registered with {backend.describe()} for {at:%Y-%m-%d %H:%M} UTC"


def pending(root: Path) -> PendingResume | None:
    """The pending resume of this clone, if any."""
    try:
        text = (work_dir(root) / RECORD_NAME).read_text(encoding="utf-8")
    except OSError:
        return None
    return parse_record(text)


def _entry_of(root: Path, record: PendingResume) -> Any:
    from relay.schedulers import Entry

    work = work_dir(root)
    try:
        spec = json.loads((work / ENTRY_NAME).read_text(encoding="utf-8"))
        return Entry(
            label=record.label,
            argv=record.argv,
            working_dir=str(spec["working_dir"]),
            stdout_log=str(spec["stdout_log"]),
            stderr_log=str(spec["stderr_log"]),
            environment=tuple((str(k), str(v)) for k, v in spec["environment"]),
            description=str(spec["description"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return Entry(
            label=record.label,
            argv=record.argv,
            working_dir=str(root),
            stdout_log=str(work / "relay-resume.log"),
            stderr_log=str(work / "relay-resume.err.log"),
        )


def _timed_for(record: PendingResume) -> Any:
    from relay.schedulers.oneshot import When

    return _backend(record.scheduler, When(at=datetime.fromisoformat(record.at)))


def remove_resume(root: Path) -> str | None:
    """Remove this clone's one-shot entry and its record (absent is fine); what was removed."""
    record = pending(root)
    if record is None:
        return None
    try:
        _timed_for(record).teardown(_entry_of(root, record))
    finally:
        (work_dir(root) / RECORD_NAME).unlink(missing_ok=True)
        (work_dir(root) / ENTRY_NAME).unlink(missing_ok=True)
    return f"removed the resume entry {record.label} ({record.scheduler})"


def remove_own_resume(repo: Path, scheduler: str | None) -> str | None:
    """What a resume does first, whatever else happens: remove the entry that started it.
    With the record, as :func:`remove_resume`; without it (resume.json lost, or the clone
    itself gone), the entry the resume's own arguments name: its label is the clone's path."""
    from relay.schedulers import Entry
    from relay.schedulers.oneshot import RESUME_PREFIX, When, timed_label

    try:
        if pending(repo) is not None:
            return remove_resume(repo)
    except RelayError:
        pass  # no clone there any more: the label alone names the entry
    label = timed_label(RESUME_PREFIX, repo.resolve())
    entry = Entry(
        label=label,
        argv=(sys.executable, *RELAY_MODULE, "loop", "run", "--resume"),  # not run
        working_dir=str(repo),
        stdout_log=os.devnull,
        stderr_log=os.devnull,
    )
    _backend(scheduler, When(at=datetime.now(UTC))).teardown(entry)
    return f"removed the resume entry {label} (named by the resume's arguments)"


def resume_state(root: Path) -> tuple[PendingResume | None, list[str]]:
    """The pending resume and what is wrong with it (asked of the scheduler)."""
    record = pending(root)
    if record is None:
        return None, []
    try:
        found = _timed_for(record).verify(_entry_of(root, record))
        present, detail = found.ok, found.detail
    except RelayError as err:
        present, detail = False, err.message
    return record, record_problems(record, present=present, detail=detail, now=datetime.now(UTC))


def resume_checks(root: Path) -> list[tuple[str, str, str, str]]:
    """`relay doctor`'s check of the loop's pending resume: (name, status, detail, fix);
    none at all in a clone that does not run the loop."""
    if pending(root) is None and not (root / CONTRACT_NAME).is_file():
        return []
    try:
        record, problems = resume_state(root)
    except RelayError as err:
        return [("loop resume", "fail", err.message, "")]
    if record is None:
        return [("loop resume", "skip", "no resume pending", "")]
    if problems:
        fix = "run `relay loop run --resume` by hand (it removes the entry)"
        return [("loop resume", "fail", "; ".join(problems), fix)]
    return [("loop resume", "ok", f"{record.scheduler} resumes the run at {record.at}", "")]


# --- triage ---


def triage(
    root: Path, contract: Contract, goals: Sequence[Goal]
) -> tuple[list[Any], dict[str, str], frozenset[str]]:
    """Run the gates (in a sandboxed clone of HEAD behind the maker's boundary: HEAD
    holds kept changes a maker wrote, whose code never runs in the person's clone) and
    scan the repository; every finding (new or not), and the kinds of finding triage
    could not observe (a gate that did not run, failed naming nothing, whose test run was
    tampered with, or that ran in a tree a run changed: unknown, never read as fixed).

    Each gate runs as the ratchet judges it (:func:`relay.ratchet.measure.judged_runs`:
    from an empty scratch, with relay's pytest plugin and a JUnit report); after each, the
    tree is looked at against HEAD's checkout: a run that wrote a tracked file or left an
    entry git does not ignore could change what a later gate reads, so from it on no gate
    is trusted; what a run left that git ignores (HEAD's ``.gitignore`` is a maker's too)
    is removed before the next gate runs, but coverage's data (which only a run that runs
    coverage may leave: :func:`relay.ratchet.measure.judged_runs`). The coverage report is
    read only where a run wrote it last that no untrusted run came before, and only where
    HEAD's test code does not reach coverage's machinery (``reach.coverage_reaches``: it
    could mark lines run that no test ran). Also returned: the
    failing-test findings observed gone (:func:`relay.loop.triage.tests_cleared`)."""
    from relay.loop import triage as t
    from relay.loop.checks import junit_tests
    from relay.ratchet.measure import head_box, head_runs

    found: list[t.Finding] = []
    unknown: dict[str, str] = {}
    timeout = 600.0
    files: dict[str, float] | None = None
    lines: dict[str, tuple[int, int]] = {}
    report = contract.coverage_report
    tainted = ""  # the first untrusted run's why: what it left (coverage's data) may be read
    tests: list[tuple[str, str]] = []  # the tests trusted runs' JUnit reports name
    with head_box(root) as box:
        if report:
            (box.tree / report).unlink(missing_ok=True)  # HEAD's copy is no run's report
        seen, spoilt = _identity(box.tree, report), ""
        runs = head_runs(box, contract.gates, timeout=timeout, work=work_dir(root), spared=report)
        for head in runs:
            gate, run, distrust = head.run.gate, head.run, head.distrust
            kind, got, why = t.judged_findings(
                gate.name, gate.command, output=run.done.output, passed=run.done.ok,
                exit_code=run.done.exit_code, timed_out=run.done.timed_out, timeout=timeout,
                junit=run.junit, tampered=run.tamper, moved=head.moved,
            )  # fmt: skip
            found += got
            if why:
                unknown[kind] = why
            elif kind == "test" and not distrust and run.junit is not None:
                tests += junit_tests(run.junit) or ()
            tainted = tainted or distrust
            now = _identity(box.tree, report)
            if report and report in run.dropped:  # written by a run that runs no coverage
                seen, spoilt = now, tainted or f"the run of {gate.name}, which runs no coverage"
            elif now != seen:  # this run wrote the report (last, so far)
                seen, spoilt = now, tainted
        if report and seen is not None and not spoilt:
            files, lines = _coverage_files(box.tree / report)
    floor = contract.budget.coverage_floor
    texts = _texts(root)
    if report and floor is not None:
        if files is None:
            unknown["coverage"] = _coverage_unknown(report, seen, spoilt)
        elif reached := _covering(texts):  # read only where there are figures to doubt
            more = f" and {len(reached) - 1} more" if len(reached) > 1 else ""
            unknown["coverage"] = (
                f"HEAD's test code reaches into coverage's machinery ({reached[0].said()}{more}),"
                " so what its run measured may hold lines no test ran"
            )
        elif hidden := _hidden(texts):
            more = f" and {len(hidden) - 1} more" if len(hidden) > 1 else ""
            unknown["coverage"] = (
                f"HEAD's code is written so that coverage leaves out code that runs ({hidden[0]}"
                f"{more}), so its figures may leave out lines no test ran"
            )
        else:
            runner = " && ".join(g.command for g in contract.gates if "coverage" in g.command)
            bounds = {
                key.removeprefix("coverage "): bound
                for g in goals
                if (key := g.finding or "").startswith("coverage ")
                and (bound := t.coverage_bound(g.accept)) is not None
            }
            found += t.coverage_findings(
                files, floor=floor, report_gate=runner, lines=lines, bounds=bounds
            )
    found += t.marker_findings(texts)
    return found, unknown, t.tests_cleared(goals, tests, texts)


def _covering(texts: Mapping[str, str]) -> list[Any]:
    """What HEAD's test code does with coverage's machinery (``reach.coverage_reaches``;
    sqlite3 counts where the project's own code imports none)."""
    from relay.loop.reach import Plain, coverage_reaches, imported_stdlib, lines_of

    lines = [(p, line) for p, text in texts.items() for line in lines_of(text)
             if line.lstrip().startswith(("import", "from"))]  # fmt: skip
    plain = Plain(uses=imported_stdlib(lines))
    return [r for p, text in sorted(texts.items()) for r in coverage_reaches(p, text, plain)]


def _hidden(texts: Mapping[str, str]) -> list[str]:
    """Where HEAD's Python code (not its tests) hides code that runs from coverage's
    figures (``relay/loop/excluded.py``), as ``path:line: what``."""
    from relay.loop.excluded import config_texts, exclusion_patterns, hidden_from_coverage
    from relay.loop.reach import is_test_code

    patterns = exclusion_patterns(config_texts(texts))
    return [
        f"{p}:{h.line}: {h.what}"
        for p, text in sorted(texts.items())
        if p.endswith(".py") and not is_test_code(p)
        for h in hidden_from_coverage(text, patterns)
    ]


def _identity(tree: Path, report: str | None) -> tuple[int, int, int] | None:
    """The coverage report's identity in ``tree`` (inode, change time, size), None when
    there is none: a run that writes it changes it."""
    if not report:
        return None
    try:
        st = os.lstat(tree / report)
    except OSError:
        return None
    return (st.st_ino, st.st_ctime_ns, st.st_size)


def _coverage_unknown(report: str, seen: tuple[int, int, int] | None, spoilt: str) -> str:
    """Why the coverage triage reads is unknown (its goals neither enqueued nor retired)."""
    if spoilt:
        return f"{report} was last written by a run that cannot be trusted: {spoilt}"
    if seen is None:
        return f"no gate wrote {report}"
    return f"{report} is no coverage.py JSON report relay can read"


def _coverage_files(report: Path) -> tuple[dict[str, float] | None, dict[str, tuple[int, int]]]:
    """Each file's coverage in the report the gates wrote, None when it cannot be read (a
    regular file only: the candidate's code wrote it; a link or a FIFO reads as nothing),
    and each file's statements and missing lines where the report gives them."""
    from relay.ratchet.sandbox import read_regular

    try:
        doc = json.loads(read_regular(report, 256 * 1024 * 1024).decode("utf-8", "replace"))
        files = {p: float(f["summary"]["percent_covered"]) for p, f in doc["files"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None, {}
    lines: dict[str, tuple[int, int]] = {}
    for path, f in doc["files"].items():
        summary = f.get("summary") if isinstance(f, dict) else None
        if not isinstance(summary, dict):
            continue
        statements, missing = summary.get("num_statements"), summary.get("missing_lines")
        if type(statements) is int and type(missing) is int:
            lines[path] = (statements, missing)
    return files, lines


def _texts(root: Path) -> dict[str, str]:
    """The tracked files' texts, the loop's own spine left out (its goals name markers).
    A tracked link is not read under its own name: the file it leads to, when it is one
    of the tree's, is read under its own (one marker, one goal); nothing is read out of
    the tree (:func:`read_tree_text`)."""
    done = subprocess.run(
        [program("git"), "ls-files", "-s", "-z"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    texts = {}
    for entry in (e for e in done.stdout.split("\0") if e):
        meta, _, path = entry.partition("\t")  # "mode sha stage\tpath"
        if path.startswith("docs/loop/") or meta.startswith(("120000 ", "160000 ")):
            continue
        text = read_tree_text(root, path)
        if text is not None:
            texts[path] = text
    return texts


# --- the daily schedule ---


def contract_run_args(contract: Contract) -> list[str]:
    """The maker and checkers from the contract's `## Run command` (what a scheduled run
    works with); LocalUsageError when it still holds the placeholders."""
    words = shlex.split(contract.run_command or "")
    if words[:3] != ["relay", "loop", "run"]:
        raise LocalUsageError(
            "the contract's `## Run command` is not a `relay loop run ...` command",
            hint="edit docs/loop/CONTRACT.md: the scheduled run takes its maker from there",
        )
    rest = words[3:]
    if any("AGENT-COMMAND" in w for w in rest):
        raise LocalUsageError(
            "the contract's `## Run command` still names AGENT-COMMAND",
            hint="put your maker and checkers in docs/loop/CONTRACT.md's `## Run command`",
        )
    return rest


def schedule_entry(
    root: Path,
    *,
    max_iterations: int | None,
    backend: str | None = None,
    ask_on: int | None = None,
) -> Any:
    """The daily entry: `relay loop scheduled` in ``root``, in the recorded environment
    (the env file it names); with ``backend`` (managed-agents) the fired run uses it, and
    asks a person on the relay job ``ask_on``."""
    from relay.commands.loop_env import env_path
    from relay.schedulers.oneshot import DAILY_PREFIX, timed_entry

    words = ["loop", "scheduled", "--repo-dir", str(root), "--env-file", str(env_path(root))]
    if max_iterations is not None:
        words += ["--max-iterations", str(max_iterations)]
    if backend is not None:
        words += ["--backend", backend]
    if ask_on is not None:
        words += ["--ask-on", str(ask_on)]
    return timed_entry(
        prefix=DAILY_PREFIX,
        clone=root,
        args=words,
        state_dir=work_dir(root),
        description=f"relay loop nightly run in {root}",
    )


SCHEDULE_NAME = "schedule.json"  # the daily entry as registered, to verify and remove it


def save_schedule(root: Path, entry: Any, at: str, scheduler: str = "") -> None:
    """Keep the daily entry as registered (`relay loop schedule --remove` names it exactly)
    and the scheduler that holds it."""
    spec = {
        "at": at,
        "scheduler": scheduler,
        "label": entry.label,
        "argv": list(entry.argv),
        "working_dir": entry.working_dir,
        "stdout_log": entry.stdout_log,
        "stderr_log": entry.stderr_log,
        "environment": [list(pair) for pair in entry.environment],
        "description": entry.description,
    }
    path = work_dir(root) / SCHEDULE_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(spec), encoding="utf-8")


def saved_schedule(root: Path) -> tuple[Any, str] | None:
    """The daily entry as registered and its time (HH:MM), None when none was kept."""
    from relay.schedulers import Entry

    try:
        spec = json.loads((work_dir(root) / SCHEDULE_NAME).read_text(encoding="utf-8"))
        entry = Entry(
            label=str(spec["label"]),
            argv=tuple(str(w) for w in spec["argv"]),
            working_dir=str(spec["working_dir"]),
            stdout_log=str(spec["stdout_log"]),
            stderr_log=str(spec["stderr_log"]),
            environment=tuple((str(k), str(v)) for k, v in spec["environment"]),
            description=str(spec["description"]),
        )
        return entry, str(spec["at"])
    except (OSError, ValueError, KeyError, TypeError, RelayError):
        return None


def saved_scheduler(root: Path) -> str | None:
    """The scheduler the daily entry was registered with; None for a record that predates
    keeping it (the scheduler is then chosen as `relay loop schedule` chose it)."""
    try:
        spec = json.loads((work_dir(root) / SCHEDULE_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    said = spec.get("scheduler") if isinstance(spec, dict) else None
    return said if isinstance(said, str) and said else None


# schedulers whose register replaces an entry without stopping the pass it is running
# (a crontab line and its script written anew; systemd's units rewritten and reloaded);
# launchd's bootout and Task Scheduler's /F would end the very pass that re-registers
REPLACED_IN_PASS = frozenset({"cron", "systemd"})


def refresh_schedule(
    root: Path, *, max_iterations: int | None, backend: str | None, ask_on: int | None
) -> str | None:
    """What a fired daily pass does first: when its own entry (as `relay loop schedule`
    registered it) runs another command line than relay registers now (an entry made
    before relay started itself with ``python -P -m relay.cli``), register it again with
    today's, its environment as it was; the one line the pass logs says so (None when
    nothing differs, or when this scheduler does not hold the entry). Where registering
    would end this pass, the line says to run `relay loop schedule` again instead."""
    from dataclasses import replace

    from relay.schedulers.oneshot import When, parse_hhmm

    saved = saved_schedule(root)
    if saved is None:
        return None
    entry, at = saved
    now = schedule_entry(root, max_iterations=max_iterations, backend=backend, ask_on=ask_on)
    wanted = replace(entry, argv=(entry.argv[0], *now.argv[1:]))
    if now.label != entry.label or wanted.argv == entry.argv:
        return None
    name = saved_scheduler(root)
    sched = _backend(name, When(daily=parse_hhmm(at)))
    if not sched.verify(entry).ok:
        return None  # not the entry this scheduler holds (or gone): left as it is
    if sched.describe() not in REPLACED_IN_PASS:
        return (
            f"the schedule {entry.label} runs an older command line; run `relay loop schedule"
            f" --at {at}` again to register `{' '.join(now.argv[1:4])}`"
        )
    sched.register(wanted)
    if not sched.verify(wanted).ok:
        return f"the schedule {entry.label} runs an older command line; re-registering it failed"
    save_schedule(root, wanted, at, sched.describe())
    return f"re-registered the schedule {entry.label} to start relay as `{' '.join(now.argv[1:4])}`"


def forget_schedule(root: Path) -> None:
    (work_dir(root) / SCHEDULE_NAME).unlink(missing_ok=True)


def environment_scheduler() -> str | None:
    return os.environ.get("RELAY_SCHEDULER") or None
