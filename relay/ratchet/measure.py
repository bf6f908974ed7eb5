"""Running what judges a candidate: the acceptance command and the gates (in the clone or
in a fresh worktree), the coverage report, the maker, and the checkers' reviews.

Every command runs through ``relay.edges.steps`` (the platform shell, a timeout that kills
the whole tree, bounded output, no relay token). A command handed a file gets its path as
its last argument and in an environment variable.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from relay.edges.steps import StepOutcome, group_alive, kill_group, run_step
from relay.loop.checks import (
    MOVED,
    NOT_RUN_MARK,
    PYCACHE,
    GateChecks,
    TreeState,
    moved_line,
    read_gate,
    tree_marks,
    unexplained,
    worse,
)
from relay.loop.classify import Category, classify_gate, diagnosis
from relay.loop.contract import Gate
from relay.loop.guard import orphan_group
from relay.loop.ratchet import Failed
from relay.loop.records import GateResult
from relay.loop.tamper import tampered

if TYPE_CHECKING:
    from relay.ratchet.sandbox import Sandbox

BRIEF_ENV = "RELAY_LOOP_BRIEF"
REVIEW_ENV = "RELAY_LOOP_REVIEW"
MAKER_PID = "maker.pid"  # the running maker's process group, in the loop's work directory
GATE_LOGS = "docs/loop/state/gates"  # each run's gate output, one folder a run (git ignores it)
# each run's role transcripts (the maker's, the checkers'...), one folder a run named as its
# gate logs' folder, kept as long; relay's own copy stays in .git/relay/loop/transcripts/
TRANSCRIPT_LOGS = "docs/loop/state/transcripts"
COVERAGE_CAP = 256 * 1024 * 1024  # what relay reads of a coverage report
KEEP_LOGS = 30  # folders of each kind (run, triage, doctor) kept; said on BOARD.md's bounds

# The secrets a scheduled run hands to each role (loaded from the node's store by
# `relay loop scheduled` or a resume); never in this process's environment, so no gate sees one.
_ROLE_SECRETS: dict[str, dict[str, str]] = {}


def hand_to_roles(secrets: Mapping[str, Mapping[str, str]]) -> None:
    """Keep ``secrets`` (role -> name -> value) for the roles' commands this process runs."""
    _ROLE_SECRETS.clear()
    _ROLE_SECRETS.update({role: dict(values) for role, values in secrets.items()})


def role_secrets(role: str) -> dict[str, str]:
    """The secrets the person handed to ``role`` (for its command alone)."""
    return dict(_ROLE_SECRETS.get(role, {}))


# pytest stops at a test file it cannot import unless told to go on: told so, that file
# is one failing check (its ERROR line) and every other test still runs and is compared
GO_ON = "--continue-on-collection-errors"


JUNIT_CAP = 32 * 1024 * 1024  # what relay reads of a gate's JUnit XML report
# pytest's word when a project's configuration turned its junitxml plugin off (-p no:junitxml)
_NO_JUNIT = "unrecognized arguments: --junitxml"


def gate_env(junit: Path | None = None, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a gate runs in: ours (or ``base``, the scheduler's), with pytest
    told to go on past a file it cannot collect and, given ``junit``, to write there which
    tests it ran (a JUnit XML report that names each test's file) (PYTEST_ADDOPTS;
    harmless to every other tool)."""
    from relay.edges.ownpath import box_environ

    env = dict(box_environ() if base is None else base)
    opts = env.get("PYTEST_ADDOPTS", "")
    if GO_ON not in opts.split():
        opts = f"{opts} {GO_ON}".strip()
    if junit is not None:
        opts += f" --junitxml={junit} -o junit_family=xunit1"
    env["PYTEST_ADDOPTS"] = opts
    return env


def read_junit(path: Path) -> str | None:
    """The JUnit XML report a gate's pytest wrote at ``path``, None when it wrote none (or
    left something else there: a link, a FIFO; the candidate's code wrote it)."""
    from relay.ratchet.sandbox import read_regular

    data = read_regular(path, JUNIT_CAP + 1)
    if not data or len(data) > JUNIT_CAP:
        return None
    return data.decode("utf-8", errors="replace")


def boxed_env(
    box: Sandbox, work: Path, junit: Path | None = None, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment a gate runs in behind the boundary: :func:`gate_env` (of ``base``
    when given) without any credential or named secret (as a role runs without them),
    with the box's scratch HOME and git refusing every transport."""
    from relay.ratchet.roles import role_env

    env = role_env(box.tree, work, gate_env(junit, base), role="gate", home=box.home)
    env = box.env(env)  # XDG_* are not passed: the tools' caches are in the box's HOME
    # compiled files only where relay sweeps them, in the tree's __pycache__ (:func:`swept`):
    # a prefix of the person's (a relative one lies in the tree) is a place relay does not
    # sweep, where one gate's code (a `python -I` run writes them still) would leave a
    # forged file for the next to load
    env.pop("PYTHONPYCACHEPREFIX", None)
    # no compiled file written into the tree (a command run with `python -I` writes them
    # still: each run's are removed after it, see :func:`swept`)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


@contextlib.contextmanager
def head_box(root: Path) -> Iterator[Sandbox]:
    """A sandboxed clone of ``root``'s HEAD behind the maker's boundary: where triage and
    `relay doctor` run the gates. What HEAD holds is code a maker wrote (a kept change),
    so it never runs in the person's clone, beside relay's token, the remotes and the
    real HOME's credentials."""
    from relay.ratchet.sandbox import hidden_for, judged

    done = subprocess.run(
        ["git", "-c", f"core.hooksPath={os.devnull}", "rev-parse", "--verify", "HEAD"],
        cwd=root, capture_output=True, text=True, check=True,
    )  # fmt: skip
    with judged(root, done.stdout.strip(), hidden=hidden_for(root)) as box:
        yield box


@dataclass(frozen=True)
class TaskBox:
    """A judged box a worker runs a boxed TASK's steps in (``relay.node.execute``'s
    ``TaskBox``): a clone of the TASK's commit behind the maker's boundary, each step in
    :func:`boxed_env` as a gate runs."""

    box: Sandbox
    env: dict[str, str]

    @property
    def tree(self) -> Path:
        return self.box.tree

    @property
    def level(self) -> str:
        return self.box.level

    @property
    def namespaces(self) -> bool:
        from relay.ratchet.sandbox import NAMESPACES

        return self.box.level == NAMESPACES

    def wrap(self, command: str) -> str:
        return self.box.wrap(command, self.env)


@contextlib.contextmanager
def task_box(root: Path, commit: str) -> Iterator[TaskBox]:
    """The judged box of ``commit`` of the clone at ``root``, where a worker runs what a
    boxed TASK (a loop's candidate, verified on another node) asks: never beside the
    node's clone, its git directory, relay's token or the real HOME's credentials."""
    from relay.edges.local import git_dir
    from relay.ratchet.sandbox import hidden_for, judged

    with judged(root, commit, hidden=hidden_for(root)) as box:
        yield TaskBox(box, boxed_env(box, git_dir(root) / "relay" / "loop"))


def handed_secrets() -> dict[str, list[str]]:
    """The names of the secrets handed to each role (role -> names), never their values."""
    return {role: list(values) for role, values in _ROLE_SECRETS.items()}


def role_of(env_name: str, who: str = "") -> str:
    """The role a command handed a file runs as: the maker gets the brief; a review goes
    to a checker, the verifier or the red team."""
    if env_name == BRIEF_ENV:
        return "maker"
    if "verifier" in who:
        return "verifier"
    return "red-team" if "red team" in who else "checker"


@dataclass
class GateLog:
    """The output of every gate a run (or triage, or the doctor) runs, one file each,
    under the spine's state; git ignores the folder (a log can hold anything a tool prints)."""

    root: Path
    run: str
    count: int = 0
    written: list[str] = field(default_factory=list)

    @property
    def folder(self) -> str:
        """The folder, relative to the clone."""
        return f"{GATE_LOGS}/{self.run}"

    def write(self, gate: Gate, done: StepOutcome, *, where: Path) -> str:
        """Keep one gate's output; its path relative to the clone."""
        self.count += 1
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", gate.name).strip("-") or "gate"
        name = f"{self.folder}/{self.count:03d}-{slug}.log"
        path = self.root / name
        ignored_folder(self.root, GATE_LOGS, self.folder)
        how = "timed out" if done.timed_out else f"exit {done.exit_code}"
        head = (
            f"gate: {gate.name}\ncommand: {gate.command}\nin: {where}\n"
            f"result: {'passed' if done.ok else 'failed'} ({how}, {done.duration:.1f}s)\n"
            + (f"left out: {done.truncated_bytes} bytes\n" if done.truncated_bytes else "")
            + "\n"
        )
        path.write_text(head + done.output, encoding="utf-8", errors="replace")
        self.written.append(name)
        return name


_GATE_LOG: contextvars.ContextVar[GateLog | None] = contextvars.ContextVar("gate_log", default=None)


@contextlib.contextmanager
def gate_log(root: Path, kind: str) -> Iterator[GateLog]:
    """Keep the output of every gate run within: ``docs/loop/state/gates/<kind>-<UTC time>/``."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    log = GateLog(root, f"{kind}-{stamp}")
    prune_logs(root / GATE_LOGS, kind, keep=KEEP_LOGS - 1)
    prune_logs(root / TRANSCRIPT_LOGS, kind, keep=KEEP_LOGS - 1)
    token = _GATE_LOG.set(log)
    try:
        yield log
    finally:
        _GATE_LOG.reset(token)


def prune_logs(folder: Path, kind: str, *, keep: int) -> None:
    """Remove all but the newest ``keep`` folders of ``kind`` (their names sort by time)."""
    import shutil

    try:
        old = sorted(p for p in folder.iterdir() if p.is_dir() and p.name.startswith(kind + "-"))
    except OSError:
        return
    for path in old[: max(0, len(old) - keep)]:
        shutil.rmtree(path, ignore_errors=True)


def ignored_folder(root: Path, top: str, folder: str) -> str:
    """``folder`` (relative to the clone, under ``top``) made, and ``top`` ignored by git
    as a whole (its own ``.gitignore``: the person's stays untouched); ``folder``."""
    (root / folder).mkdir(parents=True, exist_ok=True)
    ignore = root / top / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n", encoding="utf-8")
    return folder


Seen = dict[str, tuple[int, int]]


def transcripts_seen(source: Path) -> Seen:
    """Each transcript in ``source`` as (modified, size): what a run found there."""
    seen: Seen = {}
    with contextlib.suppress(OSError):
        for path in source.glob("*.log"):
            info = path.stat()
            seen[path.name] = (info.st_mtime_ns, info.st_size)
    return seen


def keep_transcripts(source: Path, root: Path, run: str, *, before: Seen) -> str:
    """The transcripts written in ``source`` since ``before`` was seen, copied under the
    spine's state as ``docs/loop/state/transcripts/<run>/`` (git ignores the folder, as
    the gate logs'); the folder relative to the clone, or "" when there were none."""
    now = transcripts_seen(source)
    new = sorted(name for name, mark in now.items() if before.get(name) != mark)
    if not new:
        return ""
    folder = ignored_folder(root, TRANSCRIPT_LOGS, f"{TRANSCRIPT_LOGS}/{run}")
    for name in new:
        with contextlib.suppress(OSError):
            shutil.copyfile(source / name, root / folder / name)
    return folder


def log_gate(gate: Gate, done: StepOutcome, *, where: Path) -> None:
    """Keep ``done``'s output in the gate log in force, if any."""
    log = _GATE_LOG.get()
    if log is not None:
        log.write(gate, done, where=where)


@dataclass(frozen=True)
class Measure:
    """The gates' results on one tree, the first failure, the line coverage, and what
    each gate that ran names as failing."""

    results: tuple[GateResult, ...]
    failure: Failed | None
    coverage: float | None
    checks: tuple[GateChecks, ...] = ()
    measured: frozenset[str] | None = None  # the files the coverage report names

    def checks_of(self, name: str) -> GateChecks | None:
        return next((c for c in self.checks if c.gate == name), None)

    def then(self, rest: Measure) -> Measure:
        """This measure's gates followed by ``rest``'s (run apart, on the same commit):
        the first failure in that order, ``rest``'s coverage when it read one."""
        return Measure(
            self.results + rest.results,
            self.failure or rest.failure,
            rest.coverage if rest.coverage is not None else self.coverage,
            self.checks + rest.checks,
            rest.measured if rest.coverage is not None else self.measured,
        )

    @property
    def green(self) -> bool:
        """Every gate ran and passed (what a baseline may be kept as, on disk)."""
        return self.failure is None and all(r.passed for r in self.results)

    def to_json(self) -> dict[str, object]:
        """A green measure as JSON (see :meth:`from_json`)."""
        return {
            "results": [[r.name, r.command, r.passed, r.seconds] for r in self.results],
            "coverage": self.coverage,
            "checks": [
                [c.gate, c.ran, c.passed, [list(f) for f in c.failing], c.why, c.partial,
                 None if c.tests is None else [list(t) for t in c.tests], sorted(c.marks)]
                for c in self.checks
            ],
        }  # fmt: skip

    @classmethod
    def from_json(cls, doc: object) -> Measure | None:
        """A green measure written by :meth:`to_json`, or None for anything else."""
        try:
            assert isinstance(doc, dict)
            results = tuple(
                GateResult(str(n), str(c), bool(p), float(t)) for n, c, p, t in doc["results"]
            )
            checks = tuple(
                GateChecks(
                    str(g), bool(r), bool(p), tuple((str(i), int(k)) for i, k in f), str(w),
                    bool(part), None if t is None else tuple((str(a), str(b)) for a, b in t),
                    marks=frozenset(str(m) for m in marks),
                )
                for g, r, p, f, w, part, t, marks in doc["checks"]
            )  # fmt: skip
            cov = doc["coverage"]
            got = cls(results, None, None if cov is None else float(cov), checks)
        except (AssertionError, KeyError, TypeError, ValueError):
            return None
        return got if got.green else None


def process_start(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, from /proc), None when it is
    gone or the platform does not say."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else None


def maker_record(pgid: int) -> str:
    """What is written down about a running maker: its process group and start time."""
    return f"{pgid} {process_start(pgid) or '-'}\n"


def stop_orphan(record: Path) -> int | None:
    """Stop the maker a killed run left running (its whole group); the group, if any."""
    try:
        text = record.read_text(encoding="utf-8")
    except OSError:
        return None
    pgid = orphan_group(text, process_start(int(text.split()[0])) if text[:1].isdigit() else None)
    if pgid is not None and group_alive(pgid):
        kill_group(pgid, grace=0.5)
    record.unlink(missing_ok=True)
    return pgid


def measure(
    where: Path,
    gates: Sequence[Gate],
    *,
    timeout: float,
    coverage_report: str | None,
    stop_at_failure: bool,
    against: Measure | None = None,
    new_tests: Sequence[str] = (),
    also: Measure | None = None,
    excused_gone: Sequence[str] = (),
    box: Sandbox | None = None,
    work: Path | None = None,
    files: Sequence[str] | None = None,
) -> Measure:
    """Run the gates in order in ``where``; the coverage report is read afterwards. In a
    ``box`` (``where`` is its tree) each gate runs behind the box's boundary, in an
    environment with no credential (``work``: the loop's, for the secrets named there).
    ``files``: the files git tracks in ``where``, where the caller knows them (the
    listing of the commit it checked out there), else asked of git.

    Without ``against`` a gate fails when it does not pass. With it (the baseline's
    measure) the acceptance command must pass and every other gate fails only when it is
    worse than at the baseline: a new failing check (but for ``new_tests``, the candidate's
    own tests in a run that judges the baseline's), a test the baseline ran that did not
    run (but for ``excused_gone``), or a gate that cannot be compared. With ``also`` (the
    candidate's own run) a gate is worse, too, where it fails a check that run passed."""
    report = where / coverage_report if coverage_report else None
    if report is not None:
        report.unlink(missing_ok=True)  # a stale report must not pass for a fresh one
    results: list[GateResult] = []
    checks: list[GateChecks] = []
    failure: Failed | None = None
    runs = judged_runs(where, gates, timeout=timeout, box=box, work=work, files=files,
                       report=coverage_report)  # fmt: skip
    for run in runs:
        gate, done, tamper, report_text = run.gate, run.done, run.tamper, run.junit
        marks, before = run.marks, run.before
        if against is not None and not tamper:
            base = against.checks_of(gate.name)
            moved = unexplained(
                marks, before, [c.marks for c in ([base] if base else against.checks)]
            )
            if moved:
                tamper = moved_line(moved)
        if tamper:
            said = f"{done.output.rstrip()}\n\n[relay] {tamper}\n"
            done = replace(done, output=said)
        log_gate(gate, done, where=where)
        results.append(GateResult(gate.name, gate.command, done.ok and not tamper, done.duration))
        now = read_gate(
            gate.name,
            output=done.output,
            exit_code=done.exit_code,
            timed_out=done.timed_out,
            timeout=timeout,
            junit=report_text,
            tampered=tamper,
            cut=done.truncated_bytes,
        )
        checks.append(replace(now, marks=marks))
        if failure is not None:
            continue
        if tamper and tamper.startswith(MOVED):
            failure = moved_failure(gate, done, tamper)
        elif tamper:
            failure = tamper_failure(gate, done, tamper)
        elif against is None or gate.name == "accept":
            if not done.ok:
                failure = gate_failure(gate, done, timeout=timeout)
        else:
            base = against.checks_of(gate.name)
            new = worse(base, now, new_tests=new_tests, excused_gone=excused_gone)
            own = also.checks_of(gate.name) if also is not None else None
            if own is not None and own.known:
                new += [w for w in worse(own, now) if w not in new and NOT_RUN_MARK not in w]
            plain = not done.ok and (base is None or base.passed)
            if new and plain and not any(NOT_RUN_MARK in w for w in new):
                failure = gate_failure(gate, done, timeout=timeout)
            elif new:
                failure = gate_failure(gate, done, timeout=timeout, worse=new)
        if failure is not None and stop_at_failure:
            break
    line, measured = read_report(report)
    return Measure(tuple(results), failure, line, tuple(checks), measured)


@dataclass(frozen=True)
class GateRun:
    """One gate's judged run: its outcome, why its test run cannot be trusted ("" when it
    can), the JUnit report its pytest wrote (None when none), and what it did to the tree."""

    gate: Gate
    done: StepOutcome
    tamper: str
    junit: str | None
    marks: frozenset[str]
    before: TreeState
    dropped: tuple[str, ...] = ()  # coverage's outputs it wrote, removed (it runs no coverage)


def judged_runs(
    where: Path,
    gates: Sequence[Gate],
    *,
    timeout: float,
    box: Sandbox | None = None,
    work: Path | None = None,
    base: Mapping[str, str] | None = None,
    files: Sequence[str] | None = None,
    report: str | None = None,
) -> Iterator[GateRun]:
    """Each gate run in turn in ``where`` as the ratchet judges it: from an empty scratch
    (in a ``box``), with relay's pytest plugin and a JUnit report, the tree looked at before
    and after. Lazy: the caller looks at each run before the next starts (``base``: the
    scheduler's environment, when given; ``files``: the tree's tracked files, when the
    caller has them already).

    Coverage's data is what the code it measures could write too, so only a run that
    writes it may leave it for a later gate (:func:`relay.loop.triage.leaves_coverage`):
    in a box, the data files the commit tracks are removed before the first gate; after a
    run that writes none (a plain pytest run, a linter), the data files and the coverage
    ``report`` it made or changed are removed, and its log says so."""
    from relay.loop.triage import coverage_moved, leaves_coverage

    files = tuple(files) if files is not None else tracked_files(where)
    if box is not None:
        drop_tracked_coverage(where, files)
    configured = pytest_covers(where, files)
    for gate in gates:
        before = tree_state(where, files)
        had = coverage_outputs(where, before, report)
        # in a box, the report's folder is the box's (the gate's process writes it there)
        folder = Path(tempfile.mkdtemp(prefix="relay-junit-", dir=box.folder if box else None))
        try:
            junit = folder / "report.xml"
            done, tamper = _guarded(gate, where, junit, timeout=timeout, box=box, work=work,
                                    base=base)  # fmt: skip
            if not done.ok and _NO_JUNIT in done.output:  # the project turned junitxml off
                done, tamper = _guarded(gate, where, None, timeout=timeout, box=box, work=work,
                                        base=base)  # fmt: skip
            report_text = read_junit(junit)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        marks, gone = moves(where, files, before), []
        if not leaves_coverage(gate.name, gate.command, configured=configured):
            now = coverage_outputs(where, tree_state(where, files), report)
            gone = [p for p in coverage_moved(had, now) if _removed(where / p)]
            if gone:  # what no run that writes coverage wrote is never read as its
                said = f"removed {', '.join(gone)}: coverage's, written by a run that runs none"
                done = replace(done, output=f"{done.output.rstrip()}\n\n[relay] {said}\n")
        yield GateRun(gate, done, tamper, report_text, marks, before, tuple(gone))


def drop_tracked_coverage(where: Path, files: Sequence[str]) -> None:
    """Coverage's data files the commit tracks removed from a judged clone before any gate
    runs: `coverage combine` (and pytest-cov's) would merge them with what the gates
    measure, lines no test ran among them."""
    from relay.loop.triage import is_coverage_data

    for name in files:
        if is_coverage_data(name.rpartition("/")[2]) and _real_folders(where, name.split("/")[:-1]):
            _removed(where / name)


def pytest_covers(where: Path, files: Sequence[str]) -> bool:
    """Whether the project's pytest configuration (or the environment's PYTEST_ADDOPTS)
    turns pytest-cov on: a plain ``pytest`` gate then writes coverage's data."""
    from relay.loop.guard import PYTEST_CONFIGS
    from relay.loop.triage import RUNS_COVERAGE
    from relay.ratchet.sandbox import read_regular

    texts = [os.environ.get("PYTEST_ADDOPTS", "")]
    for name in dict.fromkeys([*(n for n, _ in PYTEST_CONFIGS), "pytest.toml", ".pytest.toml"]):
        if name in files:
            with contextlib.suppress(OSError):
                texts.append(read_regular(where / name, 1 << 20).decode("utf-8", "replace"))
    return any(RUNS_COVERAGE.search(t) for t in texts)


def coverage_outputs(where: Path, state: TreeState, report: str | None) -> dict[str, str]:
    """Coverage's data files in the tree's folders (``state``'s: those that hold tracked
    files) and its report, each one's identity: its inode, size and a digest of what it
    holds (a box's start gives what its runs made to its user, which moves their change
    time; a run can set a modification time back)."""
    from relay.loop.triage import is_coverage_data
    from relay.ratchet.sandbox import read_regular

    names = [
        f"{folder}/{name}" if folder else name
        for folder, seen in state.folders.items()
        if seen is not None
        for name in seen[2]
        if is_coverage_data(name)
    ]
    found: dict[str, str] = {}
    for name in [*names, *([report] if report else [])]:
        try:
            st = os.lstat(where / name)
        except OSError:
            continue
        digest = ""
        if stat.S_ISREG(st.st_mode):
            with contextlib.suppress(OSError):
                digest = hashlib.sha256(read_regular(where / name, COVERAGE_CAP)).hexdigest()
        found[name] = f"{st.st_mode} {st.st_ino} {st.st_size} {digest}"
    return found


def _removed(path: Path) -> bool:
    """``path`` removed (a folder, never followed through a link, or a file): whether it was."""
    from relay.ratchet.sandbox import remove_tree

    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            remove_tree(path)
        else:
            path.unlink()
    except OSError:
        return False
    return True


def tracked_files(where: Path) -> tuple[str, ...]:
    """The files git tracks in ``where`` (none when it is not a git tree): the tree a gate
    judges, whose files and folders are looked at before and after each gate's run."""
    done = subprocess.run(
        ["git", "-c", f"core.hooksPath={os.devnull}", "ls-files", "-z"],
        cwd=where, capture_output=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        return ()
    return tuple(os.fsdecode(p) for p in done.stdout.split(b"\0") if p)


def untracked(where: Path, *, ignored: bool = False) -> frozenset[str] | None:
    """The entries git neither tracks nor ignores in ``where`` (a folder that holds only
    such, once, as ``folder/``); with ``ignored``, those git ignores instead; None when git
    cannot say."""
    which = ["--ignored"] if ignored else []
    try:
        done = subprocess.run(
            ["git", "-c", f"core.hooksPath={os.devnull}", "ls-files", "-z", "--others",
             *which, "--exclude-standard", "--directory", "--no-empty-directory"],
            cwd=where, capture_output=True, check=False, timeout=120,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0:
        return None
    return frozenset(os.fsdecode(p) for p in done.stdout.split(b"\0") if p)


@dataclass(frozen=True)
class Checkout:
    """A judged tree as its checkout left it, before any gate ran: what each run since
    left there for a later one to read is said against it (:meth:`since`)."""

    where: Path
    files: tuple[str, ...]
    state: TreeState
    others: frozenset[str]
    ignored: frozenset[str] = frozenset()

    @classmethod
    def of(cls, where: Path) -> Checkout:
        files = tracked_files(where)
        others = untracked(where) or frozenset()
        ignored = untracked(where, ignored=True) or frozenset()
        return cls(where, files, tree_state(where, files), others, ignored)

    def sweep(self, *, spared: str | None = None) -> list[str]:
        """Remove what the runs since the checkout left that git ignores (but coverage's
        data and ``spared``: :func:`relay.loop.triage.to_sweep`), never through a link
        (an entry under a folder that is no real folder is left, and a later look sees
        that folder changed); what was removed."""
        from relay.loop.triage import to_sweep
        from relay.ratchet.sandbox import remove_tree

        now = untracked(self.where, ignored=True)
        if now is None:
            return []
        gone = []
        for entry in to_sweep(now - self.ignored, spared=spared):
            path = entry.rstrip("/")
            parts = path.split("/")
            if not _real_folders(self.where, parts[:-1]):
                continue
            at = self.where / path
            with contextlib.suppress(OSError):
                if stat.S_ISDIR(os.lstat(at).st_mode):
                    remove_tree(at)
                else:
                    at.unlink()
                gone.append(entry)
        return gone

    def since(self, *, spared: str | None = None) -> list[str]:
        """What the tree holds now that its checkout did not, and a later run could read
        (:func:`relay.loop.triage.left_for_later`; ``spared``: the coverage report)."""
        from relay.loop.triage import left_for_later

        now = untracked(self.where)
        if now is None:
            return ["git could not list the tree's untracked entries"]
        marks = tree_marks(self.state, tree_state(self.where, self.files))
        return left_for_later(marks, now - self.others, spared=spared)


@dataclass(frozen=True)
class HeadRun:
    """One gate's run on HEAD as triage and the doctor read it: the judged run, its
    outcome with what relay says of it appended, and why it cannot be trusted ("" when
    it can: its test run was tampered with, or an earlier run left the tree changed)."""

    run: GateRun
    done: StepOutcome
    distrust: str
    moved: str  # why no gate from the one that changed the tree on is trusted


def head_runs(
    box: Sandbox,
    gates: Sequence[Gate],
    *,
    timeout: float,
    work: Path,
    spared: str | None,
    base: Mapping[str, str] | None = None,
) -> Iterator[HeadRun]:
    """HEAD's gates judged in ``box`` (:func:`judged_runs`), each logged: with no
    baseline to compare with, the tree HEAD's checkout left is theirs, so a run that
    writes a tracked file or leaves an entry git does not ignore makes it and every later
    run untrusted; what a run leaves that git ignores is removed after the caller has
    read it (``spared``: the coverage report, which a gate writes for a later one)."""
    from relay.loop.triage import moved_why

    drop_tracked_coverage(box.tree, tracked_files(box.tree))  # before the checkout is looked at
    checkout, moved = Checkout.of(box.tree), ""
    runs = judged_runs(box.tree, gates, timeout=timeout, box=box, work=work, base=base,
                       files=checkout.files, report=spared)  # fmt: skip
    for run in runs:
        left = checkout.since(spared=spared)
        if left and not moved:
            moved = moved_why(run.gate.name, left)
        distrust, done = run.tamper or moved, run.done
        if distrust:
            done = replace(done, output=f"{done.output.rstrip()}\n\n[relay] {distrust}\n")
        log_gate(run.gate, done, where=box.tree)
        yield HeadRun(run, done, distrust, moved)
        checkout.sweep(spared=spared)


def _real_folders(where: Path, parts: Sequence[str]) -> bool:
    """Whether each folder on the way from ``where`` down ``parts`` is a real folder."""
    at = where
    for part in parts:
        at = at / part
        try:
            if not stat.S_ISDIR(os.lstat(at).st_mode):
                return False
        except OSError:
            return False
    return True


def tree_state(where: Path, files: Sequence[str]) -> TreeState:
    """``where`` as :class:`TreeState` sees it: the tracked ``files`` and their folders,
    each reached through real folders only (a link put in a folder's place is seen as
    such, never followed: what lies behind it is the host's)."""
    folders: dict[str, tuple[int, int, frozenset[str]] | None] = {"": None}
    for name in files:
        folder = name.rpartition("/")[0]
        while folder not in folders:
            folders[folder] = None
            folder = folder.rpartition("/")[0]
    real: set[str] = set()
    # joined as text (git's paths, relative and plain): a Path made of each tracked file
    # was most of the walk, which runs twice for every gate
    top = os.fspath(where)
    at = top if top.endswith("/") else top + "/"
    for folder in sorted(folders, key=lambda f: (f.count("/"), f)):
        parent = folder.rpartition("/")[0]
        if folder and parent not in real:
            continue  # under a link or a folder gone: not looked into
        path = at + folder if folder else top
        with contextlib.suppress(OSError):
            st = os.lstat(path)
            if stat.S_ISDIR(st.st_mode):
                folders[folder] = (st.st_ino, st.st_ctime_ns, frozenset(os.listdir(path)))
                real.add(folder)
    state: dict[str, tuple[int, int, int] | None] = {}
    for name in files:
        state[name] = None
        if name.rpartition("/")[0] in real:
            with contextlib.suppress(OSError):
                st = os.lstat(at + name)
                state[name] = (st.st_ino, st.st_ctime_ns, st.st_size)
    return TreeState(state, folders)


def moves(where: Path, files: Sequence[str], before: TreeState) -> frozenset[str]:
    """What a run did to ``where`` since ``before`` (:func:`tree_marks`; nothing where no
    file is tracked), the compiled files it left swept away."""
    if not files:
        return frozenset()
    after = tree_state(where, files)
    swept(where, after)
    return tree_marks(before, after)


def swept(where: Path, state: TreeState) -> None:
    """Python's compiled files a run left in the tree's folders removed (a link put in the
    place of one is removed, never followed): the next run compiles what it imports from
    the tree as it is, never loads what code judged before it wrote there."""
    for folder, seen in state.folders.items():
        if seen is None or PYCACHE not in seen[2]:
            continue
        cache = where / folder / PYCACHE
        with contextlib.suppress(OSError):
            if cache.is_symlink() or not cache.is_dir():
                cache.unlink()
            else:
                shutil.rmtree(cache)


def _guarded(
    gate: Gate,
    where: Path,
    junit: Path | None,
    *,
    timeout: float,
    box: Sandbox | None,
    work: Path | None,
    base: Mapping[str, str] | None = None,
) -> tuple[StepOutcome, str]:
    """``gate`` run once with relay's pytest plugin loaded into any pytest it runs (its
    module read-only in the box); its outcome, and why its test run cannot be trusted
    ("" when it can, or it ran no pytest)."""
    from relay.ratchet.guard_run import pytest_guard

    if box is not None:  # each gate starts from an empty scratch: one run leaves nothing
        box.fresh_scratch()
    with pytest_guard(box.folder if box else None) as guard:
        if box is not None:
            # its writable places in the box folder: the guard's verdicts, the report's folder
            places = [guard.verdicts, *([junit.parent] if junit is not None else [])]
            runner = replace(
                box,
                read_only=(*box.read_only, guard.plugin_dir),
                writable=(*box.writable, *places),
            )
            env = guard.env(boxed_env(box, work or where, junit, base))
            command = runner.wrap(gate.command, env)
        else:
            command, env = gate.command, guard.env(gate_env(junit, base))
        done = run_step(command, cwd=where, timeout=timeout, env=env)
        done = replace(done, command=gate.command)
        files = guard.written()
    wrote = junit is not None and os.path.lexists(junit)  # only pytest writes one there
    why = tampered(
        files,
        guard.keys,
        command=gate.command,
        exit_code=done.exit_code,
        timed_out=done.timed_out,
        wrote_junit=wrote,
        output=done.output,
        module=guard.module,
        junit=read_junit(junit) if wrote and junit is not None else None,
    )
    return done, why


def tamper_failure(gate: Gate, done: StepOutcome, why: str) -> Failed:
    """A gate whose test run was tampered with, as a failure: whatever it exited, it did
    not pass, and the person reads why in one line."""
    how = f"exited {done.exit_code}"
    what = f"{gate.name} (`{gate.command}`) {how}, but {why}"
    said = (
        f"{why}.\nrelay's pytest plugin saw the code under test change how pytest runs or"
        " reports tests (or end the run early), or could not vouch for the run; the gate"
        " does not pass, and the change is not kept. Leave pytest's own workings alone.\n\n"
        + diagnosis(done.output)
    )
    return Failed(Category.TEST, what, said)


def moved_failure(gate: Gate, done: StepOutcome, why: str) -> Failed:
    """A run that changed the tree it was judged in, as a failure: whatever it exited, it
    did not pass (a later run would have read what it left)."""
    said = (
        f"{why}.\nThe acceptance, the gates and the metric run one after another in one tree,"
        " and a run may leave there only what the baseline's run of that gate leaves: code"
        " under test writes no tracked file and leaves nothing a later run could read."
        " Write what a test needs under its own temporary folder (pytest's tmp_path).\n\n"
        + diagnosis(done.output)
    )
    return Failed(
        Category.TEST, f"{gate.name} (`{gate.command}`) exited {done.exit_code}, but {why}", said
    )


def gate_failure(
    gate: Gate, done: StepOutcome, *, timeout: float, worse: Sequence[str] = ()
) -> Failed:
    """A failed gate as a classified failure with its diagnosis (with ``worse``, what is
    worse than at the baseline comes first: the gate failed there too)."""
    category = classify_gate(
        name=gate.name, command=gate.command, output=done.output, timed_out=done.timed_out
    )
    how = f"ran past {timeout:.0f}s" if done.timed_out else f"exited {done.exit_code}"
    what = f"{gate.name} (`{gate.command}`) {how}"
    said = diagnosis(done.output)
    if worse:
        what += f", worse than the baseline ({len(worse)} new: {worse[0]})"
        head = "Worse than the baseline (the baseline's own failures do not count):\n"
        said = head + "\n".join(f"- {w}" for w in worse[:20]) + "\n\n" + said
    return Failed(category, what, said)


def read_report(report: Path | None) -> tuple[float | None, frozenset[str] | None]:
    """Line coverage from coverage.py's JSON report and the files it names, None for
    both when there is none."""
    if report is None:
        return None, None
    from relay.ratchet.sandbox import read_regular

    try:  # a regular file only: the candidate's code wrote it (a link or FIFO reads nothing)
        doc = json.loads(read_regular(report, COVERAGE_CAP).decode("utf-8", errors="replace"))
        totals = doc["totals"]
        covered, statements = totals["covered_lines"], totals["num_statements"]
        line = 100.0 if statements == 0 else round(100.0 * covered / statements, 2)
    except (OSError, ValueError, KeyError, TypeError):
        return None, None
    files = doc.get("files") if isinstance(doc, dict) else None
    return line, frozenset(str(p) for p in files) if isinstance(files, dict) else frozenset()


def unmeasured_failure(
    added: Sequence[str], measured: frozenset[str] | None, *, judged: bool
) -> Failed | None:
    """A Python module the change added (``added``: new non-test files of the candidate)
    that the coverage report does not name though it lies in a folder (below the top)
    where the report names others, as a failure: coverage finds a file no test imports
    only in a package (a folder with an ``__init__.py``), so untested code in a new
    folder without one would leave coverage where it was. ``judged``: the contract
    reads a coverage report and the baseline wrote one."""
    if not judged or not measured:
        return None
    areas = {str(a) for m in measured for a in PurePosixPath(m).parents if str(a) != "."}
    missed = [
        p
        for p in added
        if p.endswith(".py")
        and p not in measured
        and any(str(a) in areas for a in PurePosixPath(p).parents if str(a) != ".")
    ]
    if not missed:
        return None
    what = f"coverage did not measure {missed[0]}" + (
        f" (and {len(missed) - 1} more)" if len(missed) > 1 else ""
    )
    why = (
        f"{what}, a module the change added beside code coverage measures: coverage finds"
        " a module no test imports only in a package, so its lines count nowhere; make its"
        " folder a package (an __init__.py) and test it"
    )
    return Failed(Category.COVERAGE, what, why)


def coverage_failure(before: float | None, after: float | None) -> Failed | None:
    """A coverage drop (or a report that went missing) as a failure, else None."""
    if before is None:
        return None
    if after is None:
        return Failed(Category.COVERAGE, "the coverage report was not written", "")
    if after < before - 0.005:
        what = f"line coverage fell from {before:.2f}% to {after:.2f}%"
        return Failed(Category.COVERAGE, what, f"{what}; add tests for the lines you added")
    return None
