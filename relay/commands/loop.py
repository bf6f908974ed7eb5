"""`relay loop`: the build loop around the relay — the spine, the goals, the run contract
and the ratchet.

``init`` writes what the spine lacks and proposes the project's own gates; ``goal add``
appends a goal; ``status`` shows the board; ``next`` names the next goal; ``check`` reads
the contract; ``run`` works the goals with a maker, checkers and a verifier.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from relay.commands.bounds import whole
from relay.commands.output import Output, say
from relay.commands.repos import add_repo_flag
from relay.edges.treefiles import read_tree_text
from relay.edges.worktree import WorkTree
from relay.errors import ConfigError, LocalUsageError, RelayError
from relay.loop.contract import (
    CONTRACT_NAME,
    DEFAULT_PROTECTED,
    Budget,
    Contract,
    Gate,
    check,
    gate_command,
    gate_name,
    seconds,
)
from relay.loop.goals import (
    BOARD_NAME,
    GOAL_ID,
    GOALS_NAME,
    BoardRow,
    Goal,
    GoalState,
    next_goal,
    next_id,
    plan_order,
    render_board,
    render_goals,
)
from relay.loop.parallel import makers_for
from relay.loop.ratchet import refuse_bad_panel
from relay.loop.risks import (
    HISTORY_DEPTH,
    INSTRUCTION_FILES,
    Area,
    Commit,
    area_paths,
    critical_areas,
    propose_areas,
    with_areas,
)
from relay.loop.roster import (
    LOOP_NAME,
    MANAGED_BACKEND,
    MANAGED_MODEL,
    Roster,
    RunPanel,
    applies_text,
    check_roster,
    parse_roster,
    role_settings,
    run_panel,
)
from relay.ratchet.engine import NOTHING_TO_RESUME, Ratchet, contract_ready
from relay.ratchet.files import Spine
from relay.ratchet.judge import Options

if TYPE_CHECKING:
    from relay.loop.spine import Proposal

PROJECT_FILES = ("pyproject.toml", "Makefile", "package.json", "Cargo.toml", "go.mod")


def percent(text: str) -> int:
    """argparse type: a whole percentage, 0 to 100."""
    value = whole(0)(text)
    if value > 100:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage (0 to 100)")
    return value


def register(sub: Any) -> None:
    """Add `loop` and its sub-verbs."""
    p: argparse.ArgumentParser = sub.add_parser("loop", help="work a backlog of goals")
    verbs = p.add_subparsers(dest="loop_verb", metavar="SUB-VERB")
    verbs.required = True

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument("--repo-dir", type=Path, default=None, help="the clone (default: here)")
        add_repo_flag(q)
        q.add_argument("--json", action="store_true", help="machine-readable output")

    q = verbs.add_parser("init", help="write the loop's spine under docs/loop/")
    q.add_argument("--gate", action="append", default=[], metavar="CMD", help="a gate command")
    q.add_argument("--protect", action="append", default=[], metavar="PATH", help="protect PATH")
    q.add_argument("--objective", default=None, help="the run's objective, in one sentence")
    q.add_argument(
        "--coverage-report",
        default=None,
        metavar="PATH",
        help="coverage.py's JSON report, written by a gate",
    )
    q.add_argument("--iterations", type=whole(1), default=None, help="iterations per run")
    q.add_argument("--wall-clock", default=None, metavar="DURATION", help="wall clock per run")
    q.add_argument("--retries", type=whole(0), default=None, help="retries per failure")
    q.add_argument(
        "--coverage-floor", type=percent, default=None, metavar="PCT", help="triage: files below"
    )
    q.add_argument("--yes", action="store_true", help="take the proposed gates without asking")
    env_flags(q)
    common(q)
    q.set_defaults(func=run_init)

    goal = verbs.add_parser("goal", help="goals: `relay loop goal add`")
    goal_verbs = goal.add_subparsers(dest="goal_verb", metavar="ACTION")
    goal_verbs.required = True
    q = goal_verbs.add_parser("add", help="append a goal to GOALS.md")
    q.add_argument("title", help="what the goal achieves")
    q.add_argument("--accept", default=None, metavar="CMD", help="the acceptance command")
    q.add_argument("--metric", default=None, metavar="CMD", help="prints a number, last line")
    q.add_argument("--direction", choices=("up", "down"), default=None, help="of the metric")
    q.add_argument("--threshold", default=None, metavar="PCT", help="percent to beat (5 or 5%%)")
    q.add_argument(
        "--runs",
        type=whole(1),
        default=None,
        metavar="N",
        help="runs of each arm; the median counts (default: the contract's Metric runs)",
    )
    q.add_argument(
        "--metric-files",
        action="append",
        default=[],
        metavar="GLOB",
        help="files the metric reads; an attempt that changes one is refused (repeatable)",
    )
    q.add_argument("--verify-on", default=None, metavar="NODE", help="the node that verifies")
    q.add_argument("--depends", action="append", default=[], metavar="ID", help="a goal first")
    q.add_argument("--security", action="store_true", help="the goal is security-critical")
    q.add_argument(
        "--may-edit-tests",
        action="store_true",
        help="the goal may change existing tests, not only add new ones",
    )
    q.add_argument(
        "--path",
        action="append",
        default=[],
        metavar="PATH",
        help="a path the goal works on (repeatable); one in a security-critical area makes"
        " the goal security-critical",
    )
    common(q)
    q.set_defaults(func=run_goal_add)

    q = verbs.add_parser("status", help="the board: each goal's state")
    common(q)
    q.set_defaults(func=run_status)
    q = verbs.add_parser("next", help="the next unblocked goal, or why there is none")
    common(q)
    q.set_defaults(func=run_next)
    q = verbs.add_parser("check", help="check the run contract")
    common(q)
    q.set_defaults(func=run_check)

    q = verbs.add_parser("run", help="work the goals: maker, gates, checkers, verifier")
    q.add_argument(
        "--maker", default=None, metavar="CMD", help="the maker's command (default: the roster's)"
    )
    q.add_argument("--checker", action="append", default=[], metavar="CMD", help="a checker")
    q.add_argument("--verifier", default=None, metavar="CMD", help="judges the stop condition")
    q.add_argument("--goal", default=None, metavar="ID", help="work only this goal")
    q.add_argument("--max-iterations", type=whole(1), default=None, metavar="N")
    q.add_argument("--wall-clock", default=None, metavar="DURATION", help="e.g. 30m, 8h")
    q.add_argument("--dry-run", action="store_true", help="print the plan; run nothing")
    q.add_argument("--red-team", action="append", default=[], metavar="CMD", help="red team")
    q.add_argument("--resume", action="store_true", help="a scheduled resume: no-op when done")
    q.add_argument("--scheduler", default=None, help="the scheduler a resume is registered with")
    q.add_argument("--verify-wait", default="30m", metavar="DURATION", help="wait for a RESULT")
    q.add_argument("--env-file", default=None, help=argparse.SUPPRESS)  # a scheduler entry's
    q.add_argument(
        "--parallel",
        type=whole(1),
        default=None,
        metavar="N",
        help="makers at once, each goal in its own worktree (default: Concurrent makers)",
    )
    q.add_argument("--group", default=None, metavar="G", help="work one group of GOALS.md")
    q.add_argument("--backend", default=None, choices=("managed-agents",), help="who makes")
    q.add_argument("--ask-on", type=whole(1), default=None, metavar="JOB", help="the relay job")
    q.add_argument("--ask-wait", type=float, default=1800.0, metavar="SECONDS", help="for a person")
    q.add_argument(
        "--allow-env-only",
        action="store_true",
        help="start a maker even where its boundary is env-level only (no namespaces)",
    )
    common(q)
    q.set_defaults(func=run_run)
    roster = verbs.add_parser("roster", help="the roster's agents: `relay loop roster create`")
    roster_verbs = roster.add_subparsers(dest="roster_verb", metavar="ACTION")
    roster_verbs.required = True
    q = roster_verbs.add_parser("create", help="create one agent per role and a coordinator")
    q.add_argument("--backend", required=True, choices=(MANAGED_BACKEND,))
    q.add_argument("--model", default=None, help=f"the coordinator's model ({MANAGED_MODEL})")
    common(q)
    q.set_defaults(func=run_roster_create)

    q = verbs.add_parser("roles", help="the roster: each role's backend, model and tools")
    common(q)
    q.set_defaults(func=run_roles)
    q = verbs.add_parser("make-here", help="on a node: run its maker on a goal (a TASK's step)")
    q.add_argument("goal", help="the goal's id")
    q.add_argument("--timeout", default="1800", help="seconds the maker may take")
    common(q)
    q.set_defaults(func=run_make_here)
    q = verbs.add_parser("interrupt", help="stop one role's work; the run goes on")
    q.add_argument("role", help="the role (maker, code-reviewer, ...)")
    q.add_argument("--goal", default=None, metavar="ID", help="only its work on this goal")
    common(q)
    q.set_defaults(func=run_interrupt)

    q = verbs.add_parser("triage", help="run the gates, scan, and enqueue what needs doing")
    common(q)
    q.set_defaults(func=run_triage)
    q = verbs.add_parser("schedule", help="run triage and the loop every day at HH:MM")
    q.add_argument("--at", default=None, metavar="HH:MM", help="the time of day (local)")
    q.add_argument("--max-iterations", type=whole(1), default=None, metavar="N")
    q.add_argument("--remove", action="store_true", help="remove the scheduled entry")
    q.add_argument("--scheduler", default=None, help="launchd, task-scheduler, cron, systemd")
    backend_flags(q)
    env_flags(q)
    common(q)
    q.set_defaults(func=run_schedule)
    q = verbs.add_parser("scheduled", help="what the schedule runs: triage, then a bounded run")
    q.add_argument("--max-iterations", type=whole(1), default=None, metavar="N")
    q.add_argument("--env-file", default=None, metavar="PATH", help="the recorded environment")
    backend_flags(q)
    common(q)
    q.set_defaults(func=run_scheduled)


def backend_flags(q: argparse.ArgumentParser) -> None:
    """Who makes in a scheduled run: the contract's run command, or the managed roster."""
    q.add_argument(
        "--backend",
        default=None,
        choices=("managed-agents",),
        help="fired runs use the Managed Agents roster (`relay loop roster create`)",
    )
    q.add_argument(
        "--ask-on",
        type=whole(1),
        default=None,
        metavar="JOB",
        help="the relay job a managed run asks a person on (permission requests)",
    )


def env_flags(q: argparse.ArgumentParser) -> None:
    """What a scheduled run takes from this shell besides the PATH its commands need."""
    q.add_argument(
        "--pass-env",
        action="append",
        default=[],
        metavar="NAME",
        help="pass this variable to scheduled runs (kept in the env file)",
    )
    q.add_argument(
        "--pass-secret",
        action="append",
        default=[],
        metavar="NAME[:ROLE]",
        help="a secret for one role (maker by default; checker, verifier, red-team), kept in"
        " the OS keyring or a 0600 file, never in the scheduler entry",
    )


def refuse_above_ceiling(asked: int | None, contract: Contract) -> None:
    """--max-iterations above the ceiling is refused, saying how to raise it."""
    from relay.loop.contract import ceiling_message

    if asked is not None and asked > contract.budget.iteration_ceiling():
        raise LocalUsageError(ceiling_message(asked, contract.budget, "--max-iterations"))


def _root(args: argparse.Namespace) -> WorkTree:
    """The clone the command works on; from now on relay's own process never searches a
    folder of it for a program (its gates and roles still do)."""
    from relay.edges.ownpath import fence

    where = (args.repo_dir or Path.cwd()).resolve()
    fence(where)  # before git runs there
    return WorkTree.open(where)


# --- init ---


def _project_files(root: Path) -> dict[str, str]:
    files = {}
    for name in PROJECT_FILES:
        text = read_tree_text(root, name, errors="replace")  # never out of the tree
        if text is not None:
            files[name] = text
    if (root / "tests").is_dir():
        files["tests/"] = ""
    return files


def _python(root: Path) -> str:
    venv = root / ".venv" / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    return ".venv/bin/python" if venv.exists() and os.name != "nt" else "python3"


def _choose_gates(args: argparse.Namespace, proposals: list[Proposal]) -> tuple[Gate, ...]:
    if args.gate:
        gates: list[Gate] = []
        for given in args.gate:
            name = gate_name(given, taken=[g.name for g in gates])
            gates.append(Gate(name, gate_command(given)))
        return tuple(gates)
    chosen = []
    for proposal in proposals:
        if args.yes or _ask_yes(
            f"gate {proposal.gate.name}: `{proposal.gate.command}` (from {proposal.source})?"
        ):
            chosen.append(proposal.gate)
    return tuple(chosen)


def _ask_yes(question: str, hint: str = "pass --yes, or name the gates with --gate CMD") -> bool:
    sys.stderr.write(f"{question} [Y/n]: ")
    sys.stderr.flush()
    try:
        answer = input().strip().lower()
    except EOFError:
        sys.stderr.write("\n")
        raise LocalUsageError("no answer on standard input", hint=hint) from None
    return answer in ("", "y", "yes")


def _instruction_docs(root: Path) -> dict[str, str]:
    """The project's instruction files that exist, by path."""
    docs = {}
    for name in INSTRUCTION_FILES:
        text = read_tree_text(root, name, errors="replace")  # never out of the tree
        if text is not None:
            docs[name] = text
    return docs


def _history(tree: WorkTree) -> list[Commit]:
    """The recent commits, each with the files it touched."""
    if not tree.has_commits():
        return []
    text = tree.git(
        "log", f"-n{HISTORY_DEPTH}", "--no-renames", "--format=%x1e%H%x1f%s", "--name-only"
    )
    commits = []
    for record in text.split("\x1e")[1:]:
        head, _, names = record.partition("\n")
        sha, _, subject = head.partition("\x1f")
        commits.append(Commit(sha, subject, tuple(n for n in names.splitlines() if n.strip())))
    return commits


def _choose_areas(args: argparse.Namespace, tree: WorkTree, loop_text: str) -> list[Area]:
    """The security-critical areas found in the project, each confirmed by the person
    (``--yes`` takes them all); those LOOP.md already lists are not asked again."""
    files = tree.files_at("HEAD") if tree.has_commits() else []
    listed = set(area_paths(loop_text))
    found = [
        a
        for a in propose_areas(files, _instruction_docs(tree.root), _history(tree))
        if not set(a.paths) <= listed
    ]
    return [
        a
        for a in found
        if args.yes
        or _ask_yes(
            f"security-critical area {a.name}: {', '.join(a.paths)}"
            f" (found in {'; '.join(a.found)})?",
            hint="pass --yes to take the proposed areas, or answer on a terminal",
        )
    ]


def run_init(args: argparse.Namespace) -> Output:
    """Write what the spine lacks; never overwrite."""
    from relay.commands.loop_env import check_passed
    from relay.loop.spine import extend_board, extend_goals, extend_loop, fresh_files, propose_gates

    check_passed(args.pass_env, args.pass_secret, os.environ)  # refused before any write
    tree = _root(args)
    root = tree.root
    spine = Spine(root)
    proposals = propose_gates(_project_files(root), python=_python(root))
    has_contract = spine.read(CONTRACT_NAME) is not None  # kept as it is: nothing to ask
    gates = () if has_contract else _choose_gates(args, proposals)
    budget = Budget()
    if args.iterations is not None:
        budget = replace(budget, iterations=args.iterations)
    if args.retries is not None:
        budget = replace(budget, retries=args.retries)
    if args.coverage_floor is not None:
        if not 0 <= args.coverage_floor <= 100:
            raise LocalUsageError("--coverage-floor is a percentage from 0 to 100")
        budget = replace(budget, coverage_floor=args.coverage_floor)
    if args.wall_clock is not None:
        if seconds(args.wall_clock) is None:
            raise LocalUsageError(f"--wall-clock {args.wall_clock!r} is not a duration (30m, 8h)")
        budget = replace(budget, wall_clock=args.wall_clock)
    contract = Contract(
        gates=gates,
        protected=(*DEFAULT_PROTECTED, *args.protect),
        coverage_report=args.coverage_report,
        budget=budget,
        **({"objective": args.objective} if args.objective else {}),
    )
    areas = _choose_areas(args, tree, spine.read(LOOP_NAME) or "")
    written: list[str] = []
    kept: list[str] = []
    edits = {
        LOOP_NAME: lambda old: with_areas(extend_loop(old), areas),
        GOALS_NAME: extend_goals,
        BOARD_NAME: extend_board,
    }
    for name, edit in edits.items():
        old = spine.read(name)
        new = edit(old)
        (kept if new == old else written).append(name)
        if new != old:
            if old is None:
                spine.write(name, new)
            else:
                spine.extend(name, old, new)
    for name, text in fresh_files(contract).items():
        if spine.read(name) is None:
            spine.write(name, text)
            written.append(name)
        else:
            kept.append(name)
    sha = tree.commit(written, "loop: set up the loop spine") if written else None
    final = spine.contract()
    problems = check(final, exists=spine.exists(final))
    from relay.commands.loop_env import env_path, record_env

    recorded = record_env(root, final, pass_env=args.pass_env, pass_secret=args.pass_secret)
    lines = [f"wrote {n}" for n in written] + [f"kept {n} as it was" for n in kept]
    lines += [f"gate {g.name}: {g.command}" for g in final.gates] or [
        "no gates: name them with --gate CMD, or edit CONTRACT.md"
    ]
    lines += [f"security-critical area {a.name}: {', '.join(a.paths)}" for a in areas]
    lines += [f"contract: {p.field}: {p.message}" for p in problems]
    lines += [f"scheduled runs' environment: {env_path(root)}"]
    lines += [f"  {name}: not found here" for name, where in recorded.resolved if not where]
    if has_contract and (args.gate or args.protect):
        lines.append(f"{CONTRACT_NAME} exists and was kept: edit its gates there by hand")
    lines.append(
        "next: `relay loop goal add TITLE --accept CMD`, then `relay loop run --maker CMD`"
    )
    return Output(
        lines=tuple(lines),
        data={
            "written": written,
            "kept": kept,
            "gates": [{"name": g.name, "command": g.command} for g in final.gates],
            "proposed": [
                {"name": p.gate.name, "command": p.gate.command, "source": p.source}
                for p in proposals
            ],
            "security_areas": [
                {"name": a.name, "paths": list(a.paths), "found": list(a.found)} for a in areas
            ],
            "commit": sha,
            "problems": [{"field": p.field, "message": p.message} for p in problems],
        },
    )


# --- goals ---


def run_goal_add(args: argparse.Namespace) -> Output:
    """Append a goal; print its id."""
    tree = _root(args)
    spine = Spine(tree.root)
    if spine.read(CONTRACT_NAME) is None:  # no spine: nothing is written, nothing committed
        raise ConfigError(
            f"no loop in this clone yet ({CONTRACT_NAME} is missing)",
            hint="run `relay loop init` first, then add the goal",
        )
    doc = spine.goals()
    title = " ".join(args.title.split())
    accept = (args.accept or "").strip()
    metric = (args.metric or "").strip() or None
    if not title or not (accept or metric):
        raise LocalUsageError("a goal needs a title and an --accept command (or a --metric)")
    if metric is None and (
        any(v is not None for v in (args.direction, args.threshold, args.runs)) or args.metric_files
    ):
        raise LocalUsageError(
            "--direction, --threshold, --runs and --metric-files go with --metric CMD"
        )
    if metric is not None and (args.direction is None or args.threshold is None):
        raise LocalUsageError(
            "an optimisation goal needs --direction up|down and --threshold PCT",
            hint='e.g. --metric "./bench.sh" --direction down --threshold 5',
        )
    if args.verify_on is not None and (not accept or metric is not None):
        raise LocalUsageError(
            "--verify-on needs an --accept command for the node to run (and no --metric)"
        )
    threshold = 0.0
    if args.threshold is not None:
        try:
            threshold = float(str(args.threshold).removesuffix("%"))
        except ValueError:
            threshold = -1.0
        if threshold < 0:
            raise LocalUsageError(f"--threshold {args.threshold!r} is not a percentage (5 or 5%)")
    if args.runs is not None and args.runs < 1:
        raise LocalUsageError("--runs must be at least 1")
    deps = tuple(d.strip() for d in args.depends if d.strip())
    for dep in deps:
        if not GOAL_ID.fullmatch(dep) or doc.get(dep) is None:
            raise LocalUsageError(f"--depends {dep}: there is no such goal in {GOALS_NAME}")
    paths = goal_paths(args.path)
    contract_paths = (
        spine.contract().security_critical if spine.read(CONTRACT_NAME) is not None else ()
    )
    critical = critical_areas(paths, spine.read(LOOP_NAME) or "", contract_paths)
    goal = Goal(
        next_id(doc),
        title,
        accept,
        deps,
        args.security or bool(critical),
        metric=metric,
        direction=args.direction or "up",
        threshold=threshold,
        runs=args.runs,
        metric_files=tuple(g for m in args.metric_files for g in m.split()),
        verify_on=(args.verify_on or "").strip() or None,
        may_edit_tests=args.may_edit_tests,
        paths=paths,
    )
    spine.write(GOALS_NAME, render_goals(replace(doc, goals=(*doc.goals, goal))))
    board = spine.board()
    spine.write(BOARD_NAME, render_board(board.with_row(BoardRow(goal.id, goal.title))))
    tree.commit([GOALS_NAME, BOARD_NAME], f"loop: add goal {goal.id}: {goal.title}")
    lines = [goal.id]
    data: dict[str, Any] = {"goal": goal.id}
    if critical:
        lines.append(f"{goal.id} is security-critical: {'; '.join(critical)}")
        data["security_critical"] = critical
    return Output(lines=tuple(lines), data=data)


def goal_paths(given: list[str]) -> tuple[str, ...]:
    """The paths a goal declares, as the repository names them; refused when one cannot
    be (absolute, outside the clone, or with a space)."""
    paths: list[str] = []
    for raw in given:
        path = raw.strip().removeprefix("./")
        if not path or path.startswith("/") or ".." in Path(path).parts or len(path.split()) > 1:
            raise LocalUsageError(
                f"--path {raw!r} is not a path inside the repository",
                hint="give it relative to the clone's root, without spaces (src/app/auth/)",
            )
        paths.append(path)
    return tuple(dict.fromkeys(paths))


def _goal_data(goal: Goal, row: BoardRow) -> dict[str, Any]:
    return {
        "id": goal.id,
        "title": goal.title,
        "state": row.state.value,
        "attempts": row.attempts,
        "failed_passes": row.failed_passes,
        "last_verdict": row.verdict,
        "notes": row.notes,
        "depends": list(goal.depends),
        "security": goal.security,
        "accept": goal.accept,
        "metric": goal.metric,
        "verify_on": goal.verify_on,
        "may_edit_tests": goal.may_edit_tests,
    }


def run_status(args: argparse.Namespace) -> Output:
    """The board."""
    spine = Spine(_root(args).root)
    goals, board = spine.goals().goals, spine.board()
    rows = [_goal_data(g, board.row_of(g)) for g in goals]
    lines = [
        f"{r['id']:<4} {r['state']:<11} attempts {r['attempts']}"
        f"  {r['last_verdict'] or '-'}  {r['title']}" + (f"  ({r['notes']})" if r["notes"] else "")
        for r in rows
    ] or ["no goals yet: `relay loop goal add TITLE --accept CMD`"]
    counts = {s.value: sum(r["state"] == s.value for r in rows) for s in GoalState}
    lines.append(", ".join(f"{n} {s}" for s, n in counts.items()))
    threads = _threads(spine.root)
    if threads:
        lines.append("threads:")
        lines += [
            f"  {t['role']:<17} {t['goal']:<5} {t['state']:<8} {t['last'] or '-'}" for t in threads
        ]
    from relay.commands.loop_unattended import resume_state

    record, problems = resume_state(spine.root)
    resume: dict[str, Any] | None = None
    if record is not None:
        resume = {
            "at": record.at,
            "scheduler": record.scheduler,
            "label": record.label,
            "reason": record.reason,
            "problems": problems,
        }
        lines.append(f"resume pending: {record.scheduler} at {record.at} ({record.reason})")
        lines += [f"  problem: {p}" for p in problems]
    from relay.commands.loop_managed import status_threads

    said, managed = status_threads(spine.root)
    lines += said
    data = {
        "goals": rows,
        "counts": counts,
        "resume": resume,
        "threads": threads,
        "managed_threads": managed,
    }
    return Output(lines=tuple(lines), data=data)


def _threads(root: Path) -> list[dict[str, Any]]:
    """Each role's thread on each goal: running, idle or waiting, with its last line."""
    from relay.loop.threads import thread_keys
    from relay.ratchet.threads import ThreadStore

    store = ThreadStore.of(root)
    store.reconcile(root)  # a fresh clone's threads are the spine's
    statuses = store.statuses()
    found = [
        {
            "role": s.role,
            "goal": s.goal,
            "state": s.state.value,
            "since": s.since,
            "last": store.read(s.role, s.goal).last_line()[:100],
        }
        for s in statuses
    ]
    seen = {(s.role, s.goal) for s in statuses}
    keys = thread_keys([(g.id, g.group) for g in Spine(root).goals().goals])
    found += [  # threads with no work recorded on this machine: idle
        {
            "role": role,
            "goal": goal,
            "state": "idle",
            "since": "",
            "last": store.read(role, goal).last_line()[:100],
        }
        for role, goal in store.threads()
        if (role, goal) not in seen and goal in keys
    ]
    return found


def run_next(args: argparse.Namespace) -> Output:
    """The next goal, or why there is none."""
    spine = Spine(_root(args).root)
    goals, board = spine.goals().goals, spine.board()
    chosen = next_goal(goals, board)
    if chosen.goal is None:
        return Output(
            lines=(f"no goal to work: {chosen.reason}",),
            data={"goal": None, "title": None, "reason": chosen.reason},
        )
    g = chosen.goal
    return Output(
        lines=(f"{g.id}: {g.title} (accept: {g.accept})", chosen.reason),
        data={"goal": g.id, "title": g.title, "reason": chosen.reason},
    )


def run_check(args: argparse.Namespace) -> Output:
    """Check the run contract; refuse it naming the field that is wrong."""
    spine = Spine(_root(args).root)
    contract = contract_ready(spine)
    roster = _roster(spine.root)
    b = contract.budget
    return Output(
        lines=(
            f"{CONTRACT_NAME} holds: {len(contract.gates)} gate(s), "
            f"{b.iterations} iterations, {b.wall_clock} wall clock, {b.retries} retries",
        ),
        data={
            "ok": True,
            "gates": [{"name": g.name, "command": g.command} for g in contract.gates],
            "protected": list(contract.protected),
            "budget": {
                "iterations": b.iterations,
                "wall_clock": b.wall_clock,
                "retries": b.retries,
                "concurrent_makers": b.makers,
            },
            "authorised": list(contract.authorised),
            "roles": [r.name for r in roster.roles],
        },
    )


# --- run ---


def _roster(root: Path) -> Roster:
    """The roster LOOP.md declares, refused (naming the role) when it cannot run."""
    spine = Spine(root)
    roster = parse_roster(spine.read(LOOP_NAME))
    exists = {
        r.instructions: (root / r.instructions).is_file() for r in roster.roles if r.instructions
    }
    problems = check_roster(roster, exists=exists, root=str(root), nodes=_node_names(root, roster))
    if problems:
        raise ConfigError(
            f"the roster in {LOOP_NAME} cannot run: " + "; ".join(map(str, problems)),
            hint="fix the ## Roles section by hand, then run `relay loop check`",
        )
    return roster


def _node_names(root: Path, roster: Roster) -> frozenset[str] | None:
    """The node table's names when a role runs on a node (None when none does): a node
    the table does not list is refused before anything is pushed; no relay set up here
    is an empty table."""
    if not any(r.nodes() for r in roster.roles):
        return None
    from relay.node.spine import read_master

    try:
        master = read_master(root)
    except RelayError:
        return frozenset()
    return frozenset(n.name for n in master.nodes)


def _roster_panel(args: argparse.Namespace) -> RunPanel:
    """The roles a run takes from the roster; refused when there is no maker at all."""
    root = _root(args).root
    panel = run_panel(_roster(root))
    if args.maker is None and panel.maker is None and panel.maker_node is None:
        raise LocalUsageError(
            "no maker: pass --maker CMD, or declare one in LOOP.md's ## Roles"
            " (- maker: command `CMD`, agent claude or node NAME), or run with"
            " --backend managed-agents"
        )
    return panel


def run_interrupt(args: argparse.Namespace) -> Output:
    """Stop one role's work (its process group, or its node's job) without stopping the
    run; the run goes on and the goal is taken up again from the spine, open, with no
    attempt counted against it (a person's stop is not a failure)."""
    import signal

    from relay.loop.threads import to_interrupt
    from relay.ratchet.threads import ThreadStore

    root = _root(args).root
    from relay.commands.loop_managed import managed_interrupt

    managed = managed_interrupt(root, args.role)  # a managed thread: interrupt and archive
    if managed is not None:
        return managed
    store = ThreadStore.of(root)
    found = to_interrupt(store.statuses(), args.role, args.goal)
    stopped: list[dict[str, Any]] = []
    for status in found:
        if status.job is not None and status.pgid is None:
            stopped.append(_stop_node_job(root, store, status))
            continue
        if status.pgid is None:
            continue
        store.interrupt(status.role, status.goal)  # read as a person's stop, not a failure
        try:
            os.killpg(status.pgid, signal.SIGTERM)
        except ProcessLookupError:
            continue
        except PermissionError as err:
            raise ConfigError(
                f"cannot stop the {status.role} on {status.goal} (group {status.pgid}): {err}",
                hint="stop it as the user who runs the loop",
            ) from None
        stopped.append({"role": status.role, "goal": status.goal, "pgid": status.pgid})
    if not stopped:
        where = f" on {args.goal}" if args.goal else ""
        raise LocalUsageError(
            f"the {args.role} is not running{where}; `relay loop status` shows each role's thread"
        )
    lines = [
        f"stopped the {s['role']} on {s['goal']} "
        + (
            f"(job #{s['job']}: the run stops waiting for it and closes it when its node answers)"
            if "job" in s
            else f"(process group {s['pgid']})"
        )
        for s in stopped
    ]
    return Output(lines=tuple(lines), data={"stopped": stopped})


def _stop_node_job(root: Path, store: Any, status: Any) -> dict[str, Any]:
    """Stop a role's job on another node: the run stops waiting for it now and reads it as
    a person's stop; a claimed step is its worker's until it answers (the baton), so the
    run closes the job with the person's reason once its node answers, taking nothing
    from that answer."""
    store.interrupt(status.role, status.goal)
    return {"role": status.role, "goal": status.goal, "job": int(status.job)}


def run_roster_create(args: argparse.Namespace) -> Output:
    """`relay loop roster create`: its module (the Managed Agents client's) is loaded
    only when it runs, not by every loop verb's parser."""
    from relay.commands.loop_managed import run_roster_create as create

    return create(args)


def run_roles(args: argparse.Namespace) -> Output:
    """The roster: each role's backend, model, instructions, tools and limits."""
    root = _root(args).root
    roster = parse_roster(Spine(root).read(LOOP_NAME))
    exists = {
        r.instructions: (root / r.instructions).is_file() for r in roster.roles if r.instructions
    }
    nodes = _node_names(root, roster)
    problems = [str(p) for p in check_roster(roster, exists=exists, root=str(root), nodes=nodes)]
    applies = role_settings(roster)
    rows = [
        {
            "applies": applies_text(applies[r.name]) if r.name in applies else "",
            "name": r.name,
            "backend": r.backend.value,
            "target": r.target,
            "model": r.model,
            "instructions": r.instructions,
            "tools": list(r.tools),
            "limits": dict(r.limits.items()),
            "grades": r.grades,
        }
        for r in roster.roles
    ]
    lines = [
        f"{r.name:<17} {r.backend_text()}"
        + (f"  model {r.model}" if r.model else "")
        + (f"  instructions {r.instructions}" if r.instructions else "")
        + (f"  tools {', '.join(r.tools)}" if r.tools else "")
        + (
            f"  limits {', '.join(f'{k} {v}' for k, v in r.limits.items())}"
            if r.limits.items()
            else ""
        )
        + (f"\n{'':<17} applies: {applies_text(applies[r.name])}" if r.name in applies else "")
        for r in roster.roles
    ] or [f"no roster in {LOOP_NAME}: the roles come from `relay loop run --maker/--checker`"]
    lines += [f"problem: {p}" for p in problems]
    return Output(
        lines=tuple(lines),
        data={"roles": rows, "problems": problems},
        exit_status=1 if problems else 0,
    )


def run_make_here(args: argparse.Namespace) -> Output:
    """`relay loop make-here` (its module, and the parallel machinery it loads, are
    loaded when it runs, not when any loop verb's parser is built)."""
    from relay.commands.loop_nodes import run_make_here as make_here

    return make_here(args)


def run_run(args: argparse.Namespace) -> Output:
    """Run the ratchet (or print its plan under --dry-run)."""
    from relay.edges.ownpath import fence

    fence((args.repo_dir or Path.cwd()).resolve())  # before any git, crontab or managed run
    if getattr(args, "backend", None) == "managed-agents":
        from relay.commands.loop_managed import run_managed

        return run_managed(args)
    wall = None
    if args.wall_clock is not None:
        wall = seconds(args.wall_clock)
        if wall is None:
            raise LocalUsageError(f"--wall-clock {args.wall_clock!r} is not a duration (30m, 8h)")
    if args.max_iterations is not None and args.max_iterations < 1:
        raise LocalUsageError("--max-iterations must be at least 1")
    from relay.commands import loop_unattended as u

    if args.resume and not args.dry_run:
        # whatever happens next (even a clone that is gone), the entry that started this
        # run is removed first
        try:
            u.remove_own_resume(
                (args.repo_dir or Path.cwd()).resolve(), getattr(args, "scheduler", None)
            )
        except RelayError as err:
            say(f"relay loop: could not remove the resume entry: {err.message}")
    root = _root(args).root
    if getattr(args, "env_file", None):
        from relay.commands.loop_env import apply_env

        apply_env(root, Path(args.env_file))
    contract = contract_ready(Spine(root))
    refuse_above_ceiling(args.max_iterations, contract)
    from relay.loop.parallel import unknown_group

    no_group = unknown_group(Spine(root).goals().goals, getattr(args, "group", None))
    if no_group:
        raise LocalUsageError(no_group)
    panel = _roster_panel(args)
    options = Options(
        maker=args.maker or "",
        checkers=tuple(args.checker),
        verifier=args.verifier,
        goal=args.goal,
        max_iterations=args.max_iterations,
        wall_clock=wall,
        red_team=tuple(args.red_team),
        resume=args.resume,
    )
    if not args.maker:
        options = _with_roster(options, panel, args)
    refuse_shared_judges(Spine(root), contract, options)
    nodes = () if args.maker else panel.maker_nodes
    node = nodes[0] if nodes else None
    if args.dry_run:
        refuse_bad_panel(options, root=str(root))
        from relay.ratchet.roles import check_commands, role_commands

        check_commands(
            role_commands(options.maker, options.checkers, options.verifier, options.red_team),
            cwd=root,
        )
        return _plan(root, options)
    if not nodes:
        refuse_env_only(args, contract)
        from relay.ratchet.sandbox import box_users_soon

        box_users_soon()  # the run's bounds say it; its probe runs beside the start-up
    verify_wait = seconds(args.verify_wait)
    if verify_wait is None:
        raise LocalUsageError(f"--verify-wait {args.verify_wait!r} is not a duration (30m)")

    def tell(line: str) -> None:
        if not args.json:
            say(f"relay loop: {line}")

    try:
        ratchet = Ratchet(
            root,
            options,
            say=tell,
            remote=u.RelayJobs(root, wait=verify_wait),
            suspend=u.Resumer(root, u.run_args(args), scheduler=args.scheduler),
        )
        makers = makers_for(getattr(args, "parallel", None), ratchet.contract.budget.makers)
        group = getattr(args, "group", None)
        if nodes:
            from relay.loop.parallel import node_makers as node_slots

            asked = getattr(args, "parallel", None) or ratchet.contract.budget.makers
            makers = node_slots(asked or len(nodes), nodes)
        from relay.loop.roster import makers_allowed

        roster = parse_roster(Spine(root).read(LOOP_NAME))
        makers, capped = makers_allowed(roster, makers, maker=None if nodes else options.maker)
        if capped:
            tell(capped)
        if not args.maker and makers == 1 and group is None and node is None:
            ratchet.roster_roles = _roster_roles(root, args)
        if makers > 1 or group is not None or node is not None:
            from relay.ratchet.parallel import Fanout

            make: Any = None
            if node is not None:
                from relay.commands.loop_nodes import node_makers
                from relay.loop.jobs import unauthorised

                missing = unauthorised(ratchet.contract.authorised)
                if missing:
                    said = " and ".join(f"`{m}`" for m in missing)
                    raise ConfigError(
                        f"the maker is the node {', '.join(nodes)}, but the contract does not"
                        f" authorise {said}",
                        hint="add them under ## Authorised irreversible actions in CONTRACT.md",
                    )

                make = node_makers(root, ratchet, nodes, wait=verify_wait)
            settle = make.settle if make is not None else None
            fanout = Fanout(ratchet, makers=makers, group=group, make=make, settle=settle)
            report = ratchet.run(fanout.loop)
        else:
            report = ratchet.run()
    except ConfigError as err:
        if args.resume and "in progress on this clone" in err.message:
            return Output(lines=(), data={"resumed": False, "why": err.message})
        raise
    if args.resume and report.stopped == NOTHING_TO_RESUME:
        return Output(lines=(), data={**report.data(), "resumed": False})
    status = 1 if report.stopped.startswith("escalation") else 0
    return Output(lines=tuple(report.lines()), data=report.data(), exit_status=status)


def _roster_roles(root: Path, args: argparse.Namespace) -> Callable[[Options], Options]:
    """The run's roles as LOOP.md's roster names them when asked (before each iteration),
    with the roles the command line adds; RelayError when they cannot be taken mid-run."""

    def roles(current: Options) -> Options:
        panel = run_panel(_roster(root))
        if panel.maker_nodes:
            raise ConfigError("a maker on a node counts from the next run")
        if panel.maker is None:
            raise ConfigError(f"{LOOP_NAME}'s roster names no maker")
        options = _with_roster(current, panel, args)
        if options != current:
            spine = Spine(root)
            refuse_shared_judges(spine, spine.contract(), options)
        return options

    return roles


def _with_roster(options: Options, panel: RunPanel, args: argparse.Namespace) -> Options:
    """``options`` with the roles LOOP.md's roster names (``panel``), beside the checkers,
    verifier and red team the command line adds."""
    return replace(
        options,
        maker=panel.maker or "",
        checkers=(*panel.checkers, *args.checker),
        verifier=args.verifier or panel.verifier,
        red_team=(*panel.red_team, *args.red_team),
        checker_names=panel.checker_names,
    )


def refuse_shared_judges(spine: Spine, contract: Contract, options: Options) -> None:
    """LocalUsageError, before anything runs, where what judges a candidate (a gate, an
    acceptance, a metric, a checker, the verifier, a red team) runs a file from a folder
    shared with the boxes (a maker's box could change it), or loads code from a judged share
    by itself (PYTHONPATH), or where RELAY_SANDBOX_SHARE_JUDGES names a folder that is no
    share."""
    from relay.ratchet.sandbox import (
        SharedLookups,
        refuse_shared_imports,
        refuse_shared_programs,
        refuse_unnamed_judged_shares,
    )

    refuse_unnamed_judged_shares()
    path = os.environ.get("PATH", "")
    seen = SharedLookups()  # every goal's command is checked: each place asked once
    refuse_shared_imports(os.environ, seen)
    for gate in contract.gates:
        refuse_shared_programs(gate.command, path, lookups=seen)
    for goal in spine.goals().goals:
        refuse_shared_programs(goal.accept, path, f"{goal.id}'s acceptance", lookups=seen)
        if goal.metric:
            refuse_shared_programs(goal.metric, path, f"{goal.id}'s metric", lookups=seen)
    roles = [("the checker", c) for c in options.checkers]
    roles += [("the verifier", options.verifier)] if options.verifier else []
    roles += [("the red team", c) for c in options.red_team]
    for what, command in roles:
        refuse_shared_programs(command, path, what, role=True, lookups=seen)


def refuse_env_only(args: argparse.Namespace, contract: Contract) -> None:
    """Refuse to start a maker behind an env-level-only boundary unless the person said
    so: --allow-env-only by hand; the contract's authorisation for a run nobody starts by
    hand (a scheduled run's parser has no such flag; a resume is unattended)."""
    from relay.loop.guard import env_only_refusal
    from relay.ratchet.sandbox import ENV_ONLY, level

    why = env_only_refusal(
        level() == ENV_ONLY,
        allowed=bool(getattr(args, "allow_env_only", False)),
        authorised=contract.authorised,
        unattended=bool(args.resume) or not hasattr(args, "allow_env_only"),
    )
    if why is not None:
        raise ConfigError(why)


# --- triage and the schedule ---


def run_triage(args: argparse.Namespace) -> Output:
    """Run the gates, scan the repository, and enqueue each new finding as a goal."""
    from relay.commands.loop_unattended import triage
    from relay.loop.triage import enqueue, retired, with_unknown
    from relay.ratchet.measure import gate_log

    tree = _root(args)
    spine = Spine(tree.root)
    contract = contract_ready(spine)
    doc = spine.goals()
    with gate_log(tree.root, "triage") as log:
        found, unknown, cleared = triage(tree.root, contract, doc.goals)
    made = enqueue(doc, found)
    board = spine.board()
    gone = retired(found, doc.goals, {r.goal: r for r in board.rows}, unknown, cleared)
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%SZ")
    noted = with_unknown(board, unknown, when=when)
    if made or gone or noted.after != board.after:
        if made:
            spine.write(GOALS_NAME, render_goals(replace(doc, goals=(*doc.goals, *made))))
        board = noted
        for goal in made:
            board = board.with_row(BoardRow(goal.id, goal.title))
        for row in gone:
            board = board.with_row(row)
        spine.write(BOARD_NAME, render_board(board))
        said = [f"enqueued {', '.join(g.id for g in made)}"] if made else []
        said += [f"retired {', '.join(r.goal for r in gone)}"] if gone else []
        said += [f"{', '.join(sorted(unknown))} unknown"] if unknown else []
        said = said or ["every gate ran"]
        tree.commit([GOALS_NAME, BOARD_NAME], f"loop: triage {'; '.join(said)}")
    lines = [f"{g.id}: {g.title} (accept: {g.accept})" for g in made]
    lines += [f"{r.goal}: {r.notes}" for r in gone]
    lines += [f"{kind}: unknown ({why})" for kind, why in sorted(unknown.items())]
    lines.append(f"triage: {len(found)} finding(s), {len(made)} new goal(s)")
    if log.written:
        lines.append(f"gate logs: {log.folder}/")
    return Output(
        lines=tuple(lines),
        data={
            "gate_logs": log.folder if log.written else None,
            "findings": [f.data() for f in found],
            "enqueued": [{"goal": g.id, "title": g.title, "finding": g.finding} for g in made],
            "retired": [{"goal": r.goal, "why": r.notes} for r in gone],
            "unknown": unknown,
        },
    )


def run_schedule(args: argparse.Namespace) -> Output:
    """Register (or remove) the daily entry: triage, then a bounded run, in the environment
    recorded now (the env file the entry names)."""
    from relay.commands import loop_unattended as u
    from relay.commands.loop_env import env_path, record_env
    from relay.schedulers import choose
    from relay.schedulers.oneshot import When, parse_hhmm, timed

    root = _root(args).root
    if args.remove:
        saved = u.saved_schedule(root)
        entry, at = saved or (u.schedule_entry(root, max_iterations=args.max_iterations), "00:00")
        backend = timed(choose(override=args.scheduler), When(daily=parse_hhmm(at)))
        had = backend.verify(entry).ok
        backend.teardown(entry)
        gone = not backend.verify(entry).ok
        if gone:
            u.forget_schedule(root)
        said = "removed the schedule" if had else "there was no schedule to remove:"
        return Output(
            lines=(f"{said} {entry.label} ({backend.describe()})",),
            data={
                "removed": gone,
                "had": had,
                "label": entry.label,
                "scheduler": backend.describe(),
            },
            exit_status=0 if gone else 1,
        )
    if args.at is None:
        raise LocalUsageError("say when: --at HH:MM (or --remove)")
    if args.max_iterations is not None and args.max_iterations < 1:
        raise LocalUsageError("--max-iterations must be at least 1")
    contract = contract_ready(Spine(root))
    managed = args.backend == "managed-agents"
    if managed:  # the managed roster makes: its record and its key, checked now
        from relay.commands.loop_managed import schedule_ready

        schedule_ready(root, args.pass_secret)
        if args.ask_on:  # the person it asks is reachable: checked now, not mid-session
            from relay.commands.loop_managed import JobComments

            JobComments(root, args.ask_on, wait=0).ready()
    else:
        u.contract_run_args(contract)  # refused now, not at 3 a.m.
    from relay.commands.loop_env import check_passed, scheduled_roles
    from relay.ratchet.roles import check_commands

    roles = scheduled_roles(root, contract)
    if not managed and not any(role == "maker" for role, _ in roles):
        try:
            _roster_panel(argparse.Namespace(maker=None, repo_dir=root))  # a node maker
        except LocalUsageError:
            raise LocalUsageError(
                "no maker: the contract's `## Run command` names no --maker and LOOP.md's"
                " ## Roles none",
                hint="put `--maker CMD` in docs/loop/CONTRACT.md's `## Run command`, or a"
                " `- maker:` line in LOOP.md's ## Roles (command `CMD`, agent claude or node NAME)",
            ) from None
    check_commands(roles, cwd=root)  # a role that cannot start: not tonight

    check_passed(args.pass_env, args.pass_secret, os.environ)
    refuse_above_ceiling(args.max_iterations, contract)
    when = When(daily=parse_hhmm(args.at))
    backend = timed(choose(override=args.scheduler), when)
    recorded = record_env(root, contract, pass_env=args.pass_env, pass_secret=args.pass_secret)
    entry = u.schedule_entry(
        root, max_iterations=args.max_iterations, backend=args.backend, ask_on=args.ask_on
    )
    old = u.saved_schedule(root)
    if old is not None and old[0].label == entry.label and old[0] != entry:
        backend.teardown(old[0])  # the same label, another rendering: replaced, not doubled
    backend.register(entry)
    found = backend.verify(entry)
    if not found.ok:
        backend.teardown(entry)
        raise ConfigError(f"the schedule was not registered: {found.detail}")
    at = f"{when.daily[0]:02d}:{when.daily[1]:02d}" if when.daily else ""
    u.save_schedule(root, entry, at, backend.describe())
    missing = [name for name, where in recorded.resolved if not where]
    lines = [f"{backend.describe()} runs triage and the loop {when.describe()} ({found.detail})"]
    lines.append(f"its environment: {env_path(root)} (`relay doctor` runs the gates in it)")
    lines += [f"warning: `{n}` is not found here, nor by a scheduled run" for n in missing]
    return Output(
        lines=tuple(lines),
        data={
            "label": entry.label,
            "scheduler": backend.describe(),
            "at": args.at,
            "backend": args.backend,
            "argv": list(entry.argv),
            "env_file": str(env_path(root)),
            "path": list(recorded.path),
            "passed": [n for n, _ in recorded.variables],
            "secrets": {s.name: list(s.roles) for s in recorded.secrets},
            "unresolved": missing,
        },
    )


def run_scheduled(args: argparse.Namespace) -> Output:
    """What the schedule runs: triage, then `relay loop run` with the contract's maker and
    checkers, bounded by --max-iterations."""
    from relay.commands.loop_unattended import contract_run_args, refresh_schedule

    root = _root(args).root
    if args.env_file:
        from relay.commands.loop_env import apply_env

        apply_env(root, Path(args.env_file))
    refreshed = refresh_schedule(
        root,
        max_iterations=args.max_iterations,
        backend=getattr(args, "backend", None),
        ask_on=getattr(args, "ask_on", None),
    )
    contract = contract_ready(Spine(root))
    managed = getattr(args, "backend", None) == "managed-agents"
    if managed:  # the managed roster makes: the run command's bounds, if it has any
        try:
            words = contract_run_args(contract)
        except LocalUsageError:
            words = []
    else:
        words = contract_run_args(contract)
    refuse_above_ceiling(args.max_iterations, contract)
    triaged = run_triage(args)
    parser = argparse.ArgumentParser(prog="relay loop run", add_help=False)
    sub = parser.add_subparsers()
    register_run = sub.add_parser("run")
    for flag in ("--maker", "--verifier", "--goal", "--wall-clock", "--scheduler"):
        register_run.add_argument(flag, default=None)
    for flag in ("--checker", "--red-team"):
        register_run.add_argument(flag, action="append", default=[])
    register_run.add_argument("--max-iterations", type=int, default=None)
    register_run.add_argument("--verify-wait", default="30m")
    register_run.add_argument("--parallel", type=int, default=None)
    register_run.add_argument("--group", default=None)
    register_run.add_argument("--backend", default=None, choices=("managed-agents",))
    register_run.add_argument("--ask-on", type=int, default=None)
    register_run.add_argument("--ask-wait", type=float, default=1800.0)
    try:
        given = parser.parse_args(["run", *words])
    except SystemExit:
        raise LocalUsageError(
            "the contract's `## Run command` has flags `run` does not take"
        ) from None
    given.backend = getattr(args, "backend", None) or given.backend
    given.ask_on = getattr(args, "ask_on", None) or given.ask_on
    given.max_iterations = args.max_iterations or given.max_iterations
    for name, value in (("repo_dir", args.repo_dir), ("json", args.json), ("dry_run", False)):
        setattr(given, name, value)
    if not given.maker and given.backend is None:
        _roster_panel(given)  # the roster's maker, else refused in one line
    given.resume = False
    given.scheduled = True  # nobody watches it: a managed run without a checker is refused
    if managed:
        given.maker = None  # the managed roster makes; the run command gives the rest
    given.env_file = None  # applied above, once
    ran = run_run(given)
    return Output(
        lines=(*([refreshed] if refreshed else []), *triaged.lines, *ran.lines),
        data={"triage": triaged.data, "run": ran.data, "schedule": refreshed},
        exit_status=ran.exit_status,
    )


def _network_plan(root: Path, options: Options) -> list[str]:
    """Where each role's box may go out to: its agent CLI's API hosts and the contract's
    ``## Network access`` (every box has loopback alone besides)."""
    from relay.loop.agents import parse_role
    from relay.ratchet.roles import egress_hosts

    lines = ["network (each box loopback only; HTTPS out through relay's proxy to):"]
    roles = [("maker", options.maker), *(("checker", c) for c in options.checkers)]
    roles += [("verifier", options.verifier)] if options.verifier else []
    roles += [("red team", c) for c in options.red_team]
    for role, command in roles:
        agent = parse_role(command)
        hosts = egress_hosts(root, role, agent.name if agent else None, None)
        lines.append(f"  {role} ({command}): {', '.join(hosts) or 'nothing'}")
    return lines


def _plan(root: Path, options: Options) -> Output:
    spine = Spine(root)
    contract = contract_ready(spine)
    goals, board = spine.goals().goals, spine.board()
    order, pending = plan_order(goals, board, only=options.goal)
    b = contract.budget
    iterations = options.max_iterations or b.iterations
    wall = f"{options.wall_clock:.0f}s" if options.wall_clock else b.wall_clock
    lines = ["plan (dry run; nothing runs):", "goals, in order:"]
    lines += [f"  {g.id}: {g.title} (accept: {g.accept})" for g in order] or ["  (none)"]
    lines += [f"  {g.id}: not reachable (blocked or in a cycle)" for g in pending]
    lines += ["gates:", *(f"  {g.name}: {g.command}" for g in contract.gates)]
    lines += [f"budget: {iterations} iterations, {wall} wall clock, {b.retries} retries"]
    lines += [f"maker: {options.maker}", *(f"checker: {c}" for c in options.checkers)]
    lines += _network_plan(root, options)
    return Output(
        lines=tuple(lines),
        data={
            "plan": {
                "goals": [{"id": g.id, "title": g.title, "accept": g.accept} for g in order],
                "unreachable": [g.id for g in pending],
                "gates": [{"name": g.name, "command": g.command} for g in contract.gates],
                "budget": {"iterations": iterations, "wall_clock": wall, "retries": b.retries},
                "maker": options.maker,
                "checkers": list(options.checkers),
            }
        },
    )
