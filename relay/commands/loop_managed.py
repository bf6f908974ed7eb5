"""`relay loop roster create --backend managed-agents`, `relay loop run --backend
managed-agents` and a managed thread's interrupt: the HTTP around relay.loop.managed's
decisions, through the official ``anthropic`` SDK (the ``relay-bot[agents]`` extra),
imported only when one of these runs.

A run starts one session of the coordinator, gives it the spine and the contract, and
reads the primary thread's events: each worth saying goes to BOARD.md, each thread's
status is mirrored for `relay loop status`, a worker's ``always_ask`` request goes to a
person (a comment on the relay job ``--ask-on`` names, or the terminal) and their answer
back as the tool confirmation, and a claim that a goal is done is judged by relay's own
ratchet — gates, ratchet, spine — like any maker's change, its verdict sent back.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from relay.commands.output import Output, say
from relay.edges.treefiles import read_tree_text
from relay.errors import ConfigError, LocalUsageError
from relay.loop import managed as m
from relay.loop.contract import CONTRACT_NAME
from relay.loop.goals import BOARD_NAME, GOALS_NAME
from relay.loop.roster import LOOP_NAME

if TYPE_CHECKING:
    from anthropic import Anthropic

KEY_ENV = "ANTHROPIC_API_KEY"
SDK_HINT = "install the extra: pip install 'relay-bot[agents]'"
# the maker the ratchet runs for a claim: apply the coordinator's diff, say what it was
APPLY = (
    "import os, shutil, subprocess, sys\n"
    "subprocess.run(['git', 'apply', '--whitespace=nowarn', sys.argv[1]], check=True)\n"
    "shutil.copyfile(sys.argv[2], os.environ['RELAY_LOOP_EXPLAIN'])\n"
)


def sdk_client() -> Anthropic:
    """The SDK's client (ANTHROPIC_BASE_URL, when set, is where it goes). The key is this
    shell's, or in a scheduled run the secret handed to the maker (`relay loop schedule
    --pass-secret ANTHROPIC_API_KEY`): the managed roster is the maker, and the key never
    enters the environment the gates inherit."""
    from relay.ratchet.measure import role_secrets

    key = os.environ.get(KEY_ENV) or role_secrets("maker").get(KEY_ENV)
    if not key:
        raise ConfigError(
            f"{KEY_ENV} is not set", hint="set it to a Claude API key to use managed agents"
        )
    try:
        import anthropic
    except ImportError:
        raise ConfigError("the anthropic SDK is not installed", hint=SDK_HINT) from None
    return anthropic.Anthropic(api_key=key, max_retries=2)


def schedule_ready(root: Path, pass_secret: Sequence[str]) -> None:
    """A schedule whose runs use the managed roster is refused now, not at 3 a.m., when no
    roster is recorded or its key would not reach the fired run (a secret of the maker's,
    named now or recorded by an earlier schedule)."""
    from relay.commands.loop_env import read_env
    from relay.loop.runenv import parse_secret

    if not _state(root).coordinator:
        raise ConfigError(
            "no managed roster is recorded",
            hint="run `relay loop roster create --backend managed-agents` first",
        )
    named = [parse_secret(s) for s in pass_secret]
    recorded = read_env(root)
    named += list(recorded.secrets) if recorded is not None else []
    if not any(s.name == KEY_ENV and "maker" in s.roles for s in named):
        raise LocalUsageError(
            f"a scheduled managed run needs {KEY_ENV}, and it is not passed",
            hint=f"add --pass-secret {KEY_ENV} (kept in the OS keyring or a 0600 file, for the"
            " managed roster alone)",
        )


def _state(root: Path) -> m.State:
    return m.load_state(read_tree_text(root, m.STATE_NAME))


def _save(root: Path, state: m.State) -> None:
    from relay.edges.files import write_atomic

    path = root / m.STATE_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, state.dump().encode("utf-8"))


def _locked(root: Path) -> Any:
    """The lock of the state file: the run and `relay loop interrupt` both rewrite it."""
    from filelock import FileLock

    git = root / ".git"
    where = git if git.is_dir() else root / m.STATE_NAME.rpartition("/")[0]
    where.mkdir(parents=True, exist_ok=True)
    return FileLock(str(where / "relay-managed.lock"), timeout=60)


def _api(what: str, call: Callable[[], Any]) -> Any:
    """One SDK call; its failure as a one-line error naming what was asked."""
    import anthropic

    try:
        return call()
    except anthropic.APIStatusError as err:
        raise ConfigError(f"the Managed Agents API refused {what}: {err.message}") from None
    except anthropic.APIConnectionError:
        base = os.environ.get("ANTHROPIC_BASE_URL", "the Claude API")
        raise ConfigError(f"could not reach {base} to {what}") from None


# --- the roster ---


def roles_for(root: Path) -> tuple[tuple[m.ManagedRole, ...], str | None]:
    """The roles to make agents of (LOOP.md's ``## Roles`` when it names managed ones,
    else relay's default roster) and the coordinator's model when the roster names one."""
    import importlib

    try:
        roster = importlib.import_module("relay.loop.roster")
    except ImportError:  # no roster in this relay: the default one
        return m.DEFAULT_ROLES, None
    specs = roster.parse_roster(read_tree_text(root, LOOP_NAME)).roles
    texts: dict[str, str] = {}
    for spec in specs:
        text = read_tree_text(root, spec.instructions) if spec.instructions else None
        if spec.instructions and text is not None:  # never read through a link
            texts[spec.instructions] = text
    try:
        return m.from_specs(specs, texts)
    except m.RosterError as err:
        raise ConfigError(str(err), hint=f"edit `## Roles` in {LOOP_NAME}") from None


def run_roster_create(args: argparse.Namespace) -> Output:
    """One agent per role, a coordinator whose roster lists them, an environment; their
    ids recorded in the spine's state."""
    if args.backend != m.BACKEND:
        raise LocalUsageError(f"--backend {args.backend!r}: only {m.BACKEND} makes agents")
    root = _root(args)
    roles, model = roles_for(root)
    try:  # everything refused before anything is created
        for role in roles:
            m.check_roster([m.agent_params(role)])
        m.coordinator_params({r.name: f"agent_{n}" for n, r in enumerate(roles)})
    except m.RosterError as err:
        raise ConfigError(str(err), hint=f"edit `## Roles` in {LOOP_NAME}") from None
    client = sdk_client()
    state = _state(root)
    env = _api(
        "to create an environment",
        lambda: client.beta.environments.create(
            name="relay loop", description="where relay's roster works"
        ),
    )
    ids: dict[str, str] = {}
    made: list[Any] = []
    for role in roles:
        params = m.agent_params(role)
        agent = _api(
            f"to create the {role.name} agent",
            lambda params=params: client.beta.agents.create(**params),  # type: ignore[misc]
        )
        ids[role.name] = agent.id
        made.append(agent)
    bad = m.maker_grades(ids, roles)
    if bad:
        raise ConfigError(f"the maker's agent also grades as {', '.join(bad)}")
    params = m.coordinator_params(ids, model=args.model or model or m.DEFAULT_MODEL)
    coordinator = _api("to create the coordinator", lambda: client.beta.agents.create(**params))
    held = [a.name for a in [*made, coordinator] if m.shipping_tools(m.tool_names(a.model_dump()))]
    if held:  # what the API made is checked too, not only what was asked
        raise ConfigError(f"{', '.join(held)} came back holding a shipping tool")
    state.environment, state.coordinator, state.agents = env.id, coordinator.id, ids
    state.session, state.threads = "", {}
    _save(root, state)
    from relay.edges.worktree import WorkTree

    # committed at once: the ids are the spine's, and a later run refuses a dirty tree
    WorkTree.open(root).commit([m.STATE_NAME], "loop: the managed roster's agents")
    lines = [f"{name}: {agent}" for name, agent in ids.items()]
    lines.append(f"coordinator: {coordinator.id} (roster of {len(m.roster_ids(params))})")
    lines.append(f"recorded in {m.STATE_NAME} and committed")
    return Output(
        lines=tuple(lines),
        data={
            "agents": ids,
            "coordinator": coordinator.id,
            "environment": env.id,
            "roster": m.roster_ids(params),
        },
    )


def _root(args: argparse.Namespace) -> Path:
    from relay.edges.worktree import WorkTree

    try:
        return WorkTree.open((args.repo_dir or Path.cwd()).resolve()).root
    except Exception:
        raise ConfigError("not inside a git clone", hint="run it in the project's clone") from None


# --- a person's answer ---


class Asker(Protocol):
    def ask(self, request: m.Request) -> tuple[str, str] | None: ...


class NoPerson:
    """No person to ask: the request is denied, saying so."""

    def ask(self, request: m.Request) -> tuple[str, str] | None:
        return ("deny", "no person to ask: run with --ask-on JOB or in a terminal")


class Terminal:
    """An interactive run: the request is printed and the answer read from the terminal."""

    def ask(self, request: m.Request) -> tuple[str, str] | None:
        print(request.ask_text(), file=sys.stderr)
        print("allow or deny[: why]? ", end="", file=sys.stderr, flush=True)
        line = sys.stdin.readline().strip()
        if not line:
            return None
        word, _, why = line.partition(":")
        word = word.strip().lower()
        if word in ("allow", "deny"):
            return word, why.strip()
        return m.parse_answer(line, request.tool_use_id)


class JobComments:
    """The request as a comment on a relay job; the answer is the first later comment that
    answers it by an account that gives this node instructions (the trusted roster's
    instruction accounts, by numeric id: a collaborator who may merely write is not one)."""

    def __init__(self, root: Path, issue: int, *, wait: float, poll: float = 1.0) -> None:
        self.root, self.issue, self.wait, self.poll = root, issue, wait, poll

    def ready(self) -> tuple[Any, Any]:
        """This clone's node and its row in the node table: refused (before a session, or
        when the run is scheduled) if the clone is no node of the relay."""
        from relay.errors import RelayError
        from relay.node.context import open_node

        why = ""
        try:
            ctx = open_node(repo_dir=self.root, node=None, api=None, need_node=False)
            row = ctx.master.node(ctx.node) if ctx.node else None
        except RelayError as err:
            row, why = None, f" ({err.message})"
        if row is None:
            raise ConfigError(
                f"--ask-on {self.issue}: this clone is not a node of the relay, so no person"
                f" can be asked on a job{why}",
                hint="run `relay join` here, or run interactively without --ask-on",
            )
        return ctx, row

    def ask(self, request: m.Request) -> tuple[str, str] | None:
        from relay.commands.common import run_async
        from relay.node.context import client
        from relay.node.redaction import redactor_for

        ctx, row = self.ready()

        async def go() -> tuple[str, str] | None:
            import asyncio

            async with client(ctx) as gh:
                said = redactor_for(ctx, ctx.token().value).redact(request.ask_text())
                posted = await gh.create_comment(self.issue, said)
                until = time.monotonic() + self.wait
                while time.monotonic() < until:
                    for c in await gh.list_comments(self.issue):
                        if c.id <= posted.id or not row.trusts(c.user.id):
                            continue
                        found = m.parse_answer(c.body, request.tool_use_id)
                        if found is not None:
                            return found
                    await asyncio.sleep(self.poll)
            return None

        return run_async(go)


# --- the run ---


def maker_copies(root: Path) -> int:
    """How many making threads may run at once: the roster maker's ``Limits: copies N``,
    else as many as a session runs beside its primary thread."""
    from relay.loop.roster import MAKER, parse_roster

    roster = parse_roster(read_tree_text(root, LOOP_NAME))
    maker = roster.get(MAKER)
    copies = maker.limits.copies if maker is not None else None
    return min(copies or m.MAX_THREADS - 1, m.MAX_THREADS - 1)


def _first_message(root: Path, only: str | None = None) -> str:
    """The spine and the contract, as the coordinator's first message."""
    parts = ["Work the goals of this loop. The spine follows."]
    if only:
        parts[0] = f"Work only goal {only} of this loop. The spine follows."
    copies = maker_copies(root)
    parts[0] += (
        f" At most {copies} maker threads (the maker's agent or copies of yourself) may work"
        " at once; relay interrupts any beyond."
    )
    for name in (LOOP_NAME, GOALS_NAME, CONTRACT_NAME):
        text = read_tree_text(root, name)
        if text is not None:
            parts.append(f"## {name}\n\n{text}")
    return "\n\n".join(parts)


class ManagedRun:
    """One session of the coordinator, followed until its work has ended."""

    def __init__(
        self,
        root: Path,
        client: Anthropic,
        asker: Asker,
        *,
        tell: Callable[[str], None],
        wall_clock: float | None = None,
        goal: str | None = None,
        max_claims: int | None = None,
        checkers: Sequence[str] = (),
        verifier: str | None = None,
        red_team: Sequence[str] = (),
        unattended: bool = False,
    ) -> None:
        from relay.edges.worktree import WorkTree
        from relay.ratchet.files import Spine

        self.root, self.client, self.asker, self.tell = root, client, asker, tell
        self.tree = WorkTree.open(root)
        self.spine = Spine(root)
        self.state = _state(root)
        self.lines: list[str] = []
        self.deadline = time.monotonic() + (wall_clock or float("inf"))
        self.goal, self.max_claims, self.judged = goal, max_claims, 0
        self.redactor: Any = None
        self.kept: list[str] = []
        self.refused: list[str] = []
        self.asked: list[dict[str, str]] = []
        self.copies = maker_copies(root)
        self.capped: list[str] = []  # making threads relay interrupted past the copies
        self.panel: Any = None
        # the run's own --checker, --verifier and --red-team, beside the roster's
        self.extra = (tuple(checkers), verifier, tuple(red_team))
        self.unattended = unattended
        self.unjudged = ""

    def run(self) -> Output:
        st = self.state
        if not st.coordinator or not st.environment:
            raise ConfigError(
                "no managed roster is recorded",
                hint="run `relay loop roster create --backend managed-agents` first",
            )
        self.panel = self._full_panel()  # a roster that cannot run is refused before a session
        sessions = self.client.beta.sessions
        session = _api(
            "to start a session",
            lambda: sessions.create(
                agent=st.coordinator,
                environment_id=st.environment,
                title=f"relay loop {self.root.name}",
                metadata={"relay": "loop"},
            ),
        )
        st.session, st.threads = session.id, {}
        self._save()
        self.tell(f"session {session.id} started")
        # the stream is open before the first message, so that no event is missed
        stream = _api("to stream the session", lambda: sessions.events.stream(session.id))
        self._send(
            {
                "type": "user.message",
                "content": [{"type": "text", "text": _first_message(self.root, self.goal)}],
            }
        )
        import anthropic

        turns = 1
        ended = False
        try:
            with stream:
                for event in stream:
                    data = event.model_dump(mode="json")
                    turns += self._handle(data)
                    kind = data.get("type")
                    stop = (data.get("stop_reason") or {}).get("type")
                    if kind == "session.status_idle" and stop == "end_turn":
                        turns -= 1
                    if turns <= 0 or kind in ("session.status_terminated", "session.deleted"):
                        ended = True
                        break
                    if time.monotonic() > self.deadline:
                        self.tell("the wall clock is spent: every thread is interrupted")
                        break
                    if self.max_claims is not None and self.judged >= self.max_claims:
                        self.tell("--max-iterations claims judged: every thread is interrupted")
                        break
        except anthropic.APIError as err:
            raise ConfigError(
                f"the session's stream broke: {err}",
                hint="`relay loop status` shows where it stood; run it again",
            ) from None
        finally:
            if not ended:  # stopped early (the wall clock, an error): nothing works on
                with contextlib.suppress(ConfigError):
                    self._send({"type": "user.interrupt"})
        self._reconcile()
        self._save(commit="loop: the managed session's board")
        return Output(
            lines=(
                f"session {session.id}: kept {', '.join(self.kept) or 'nothing'}",
                *[f"not kept: {r}" for r in self.refused],
            ),
            data={
                "session": session.id,
                "kept": self.kept,
                "refused": self.refused,
                "asked": self.asked,
                "capped": self.capped,
                "unjudged": self.unjudged,
                "threads": {t.id: t.status for t in st.threads.values()},
            },
        )

    def _full_panel(self) -> Any:
        """The roster's roles relay runs itself and the run's own flags: what judges each
        claim. With none (every reviewer a managed agent, the coordinator's own), an
        unattended run is refused before a session starts; an attended one is told."""
        from dataclasses import replace

        panel = _panel(self.root)
        checkers, verifier, red = self.extra
        panel = replace(
            panel,
            checkers=(*panel.checkers, *checkers),
            verifier=verifier or panel.verifier,
            red_team=(*panel.red_team, *red),
        )
        why = m.unjudged(panel.checkers, panel.verifier)
        if why and self.unattended:
            raise ConfigError(f"an unattended managed run is refused: {why}")
        if why and not self.unjudged:
            self.unjudged = why
            self.tell(why)
        return panel

    def _redact(self, text: str) -> str:
        """``text`` through relay's redaction (this machine's facts and secrets, and the
        repository's own patterns), built once a run."""
        if self.redactor is None:
            from relay.node.redaction import redactor_here

            self.redactor = redactor_here(self.root)
        return str(self.redactor.redact(text))

    def _reconcile(self) -> None:
        """Each thread's status as the API lists it at the end (what the stream's condensed
        view left out: a thread made or archived outside it)."""
        sid = self.state.session
        listed = _api(
            "to list the threads", lambda: list(self.client.beta.sessions.threads.list(sid))
        )
        for thread in listed:
            if thread.parent_thread_id is None:
                continue  # the primary thread is the coordinator's, the board's own section
            name = getattr(thread.agent, "name", "") or str(thread.agent.type)
            known = self.state.threads.setdefault(
                thread.id, m.Thread(thread.id, m.role_of_agent(name))
            )
            known.status = "archived" if thread.archived_at is not None else str(thread.status)

    def _send(self, event: dict[str, Any]) -> None:
        sid = self.state.session
        _api(
            f"to send {event['type']}",
            lambda: self.client.beta.sessions.events.send(sid, events=[event]),  # type: ignore[list-item]
        )

    def _handle(self, data: dict[str, Any]) -> int:
        """One event of the primary thread; the new turns it started (a verdict sent)."""
        line = m.board_line(data)
        if line is not None:  # the board is committed, and may be pushed: no secret on it
            line = self._redact(line)
        changed = m.thread_update(self.state, data)
        if data.get("type") == "session.thread_created":
            for tid in m.over_copies(self.state, self.copies):
                if tid in self.capped:
                    continue
                self.capped.append(tid)
                self.tell(
                    f"thread {tid} interrupted: the maker runs at most {self.copies} copies at"
                    f" once (LOOP.md's roster: Limits: copies {self.copies})"
                )
                self._send({"type": "user.interrupt", "session_thread_id": tid})
        mine = self.state.threads.get(str(data.get("session_thread_id") or ""))
        if changed and mine is not None and mine.last:
            mine.last = self._redact(mine.last)
        if line is not None:
            self.lines.append(line)
            self.tell(line)
        if line is not None or changed:
            self._save()
        request = m.permission_request(data)
        if request is not None:
            answer = self.asker.ask(request)
            event = m.confirmation(request, answer)
            self.asked.append(
                {
                    "tool_use_id": request.tool_use_id,
                    "thread": request.thread,
                    "result": str(event["result"]),
                }
            )
            self._send(event)
        found = m.claim(data)
        if found is None:
            return 0
        from relay.loop.parallel import waits_on

        goals = self.spine.goals().goals
        goal = next((g for g in goals if g.id == found.goal), None)
        why = m.not_judged(
            found, only=self.goal, judged=self.judged, budget=self.max_claims,
            known=goal is not None,
            pending=waits_on(goal, goals, self.spine.board()) if goal is not None else (),
        )  # fmt: skip
        kept = False
        if not why:
            self.judged += 1
            kept, why = self._judge(found)
        (self.kept if kept else self.refused).append(found.goal if kept else f"{found.goal}: {why}")
        self._send(m.verdict_message(found.goal, kept, why))
        return 1

    def _save(self, commit: str | None = None) -> None:
        """The state and the board as they stand; committed before relay's ratchet judges
        (it refuses a dirty tree) and when the run ends. A thread `relay loop interrupt`
        archived meanwhile (the file says so) stays archived."""
        with _locked(self.root):
            for tid, t in _state(self.root).threads.items():
                if t.status == "archived" and tid in self.state.threads:
                    self.state.threads[tid].status = "archived"
            _save(self.root, self.state)
        board = self.spine.need(BOARD_NAME)
        board = m.with_threads(m.with_session(board, self.state.session, self.lines), self.state)
        self.spine.write(BOARD_NAME, board)
        if commit:
            self.tree.commit([BOARD_NAME, m.STATE_NAME], commit)

    def _judge(self, found: m.Claim) -> tuple[bool, str]:
        """A claim judged by relay's own ratchet: its diff is the maker's change."""
        from relay.ratchet.engine import Ratchet
        from relay.ratchet.judge import Options
        from relay.ratchet.sandbox import showing

        self._save(commit=f"loop: {found.goal} claimed done by the managed coordinator")
        import shutil
        import tempfile

        # outside the clone: the maker's sandbox hides the person's clone, .git and all
        work = Path(tempfile.mkdtemp(prefix="relay-managed-"))
        try:
            patch, said = work / f"{found.goal}.diff", work / f"{found.goal}.said"
            patch.write_text(found.diff, encoding="utf-8")
            said.write_text(found.said + "\n", encoding="utf-8")
            maker = shlex.join([sys.executable, "-P", "-c", APPLY, str(patch), str(said)])
            # the same panel as any maker's: the roster's checkers, verifier and red team
            panel = self.panel or self._full_panel()
            options = Options(
                maker=maker, goal=found.goal, max_iterations=1, checkers=panel.checkers,
                verifier=panel.verifier, red_team=panel.red_team,
                checker_names=panel.checker_names,
            )  # fmt: skip
            with showing(work):  # a box's /tmp is its own: shown read-only in the boxes
                report = Ratchet(self.root, options, say=self.tell).run()
        finally:
            shutil.rmtree(work, ignore_errors=True)
        if any(k.goal == found.goal for k in report.kept):
            return True, ""
        row = next((r for r in self.spine.board().rows if r.goal == found.goal), None)
        board = f"{row.verdict}: {row.notes}".strip(": ") if row is not None and row.verdict else ""
        why = next((r for r in report.reverted if found.goal in r), board or report.stopped)
        return False, why


def _panel(root: Path) -> Any:
    """The roster's roles relay runs itself (its checkers, verifier and red team), which
    judge a coordinator's claim like any maker's work."""
    from relay.commands.loop import _roster
    from relay.loop.roster import run_panel

    return run_panel(_roster(root))


def run_managed(args: argparse.Namespace) -> Output:
    """`relay loop run --backend managed-agents`."""
    root = _root(args)
    refused = m.run_flags_refused(
        maker=getattr(args, "maker", None),
        parallel=getattr(args, "parallel", None),
        group=getattr(args, "group", None),
    )
    if refused:
        raise LocalUsageError(refused)
    if args.ask_on:
        on_job = JobComments(root, args.ask_on, wait=args.ask_wait)
        if not args.dry_run:
            on_job.ready()  # a person can be asked: checked before a session starts
        asker: Asker = on_job
    elif sys.stdin.isatty() and not args.json:
        asker = Terminal()
    else:
        asker = NoPerson()

    def tell(line: str) -> None:
        if not args.json:
            say(f"relay loop: {line}")

    wall = None
    if args.wall_clock is not None:
        from relay.loop.contract import seconds

        wall = seconds(args.wall_clock)
        if wall is None:
            raise LocalUsageError(f"--wall-clock {args.wall_clock!r} is not a duration (30m, 8h)")
    if args.dry_run:
        state = _state(root)
        if not state.coordinator:
            raise ConfigError(
                "no managed roster is recorded",
                hint="run `relay loop roster create --backend managed-agents` first",
            )
        lines = [f"a session of coordinator {state.coordinator} in {state.environment}"]
        lines += [f"  {name}: {agent}" for name, agent in state.agents.items()]
        lines.append("nothing is started under --dry-run")
        return Output(
            lines=tuple(lines),
            data={"coordinator": state.coordinator, "agents": state.agents, "started": False},
        )
    run = ManagedRun(
        root,
        sdk_client(),
        asker,
        tell=tell,
        wall_clock=wall,
        goal=args.goal,
        max_claims=args.max_iterations,
        checkers=tuple(getattr(args, "checker", None) or ()),
        verifier=getattr(args, "verifier", None),
        red_team=tuple(getattr(args, "red_team", None) or ()),
        unattended=bool(getattr(args, "resume", False) or getattr(args, "scheduled", False)),
    )
    return run.run()


# --- interrupt ---


def interrupt_managed(root: Path, role: str) -> Output:
    """Stop one role's managed thread(s) without stopping the run: ``user.interrupt``
    naming the thread, then the thread archived."""
    state = _state(root)
    if not state.session:
        raise ConfigError("no managed session is recorded", hint="start one with `relay loop run`")
    threads = [t for t in m.threads_of(state, role) if t.status not in ("terminated", "archived")]
    if not threads:
        raise LocalUsageError(f"no open thread of {role} in session {state.session}")
    client = sdk_client()
    sessions = client.beta.sessions
    done = []
    for t in threads:
        event = {"type": "user.interrupt", "session_thread_id": t.id}
        _api(
            f"to interrupt {t.id}",
            lambda event=event: sessions.events.send(state.session, events=[event]),  # type: ignore[misc]
        )
        archived = None
        until = time.monotonic() + 30
        while time.monotonic() < until:  # an interrupted thread goes idle; then it is archived
            got = _api(
                f"to read {t.id}",
                lambda t=t: sessions.threads.retrieve(t.id, session_id=state.session),  # type: ignore[misc]
            )
            if got.status != "running":
                archived = _api(
                    f"to archive {t.id}",
                    lambda t=t: sessions.threads.archive(t.id, session_id=state.session),  # type: ignore[misc]
                )
                break
            time.sleep(0.2)
        done.append({"thread": t.id, "status": "archived" if archived else "interrupted"})
    with _locked(root):  # the run writes this file too: change only these threads
        latest = _state(root)
        for d in done:
            if d["thread"] in latest.threads:
                latest.threads[d["thread"]].status = d["status"]
        _save(root, latest)
    return Output(
        lines=tuple(f"{role}: {d['thread']} {d['status']}" for d in done),
        data={"role": role, "session": state.session, "threads": done},
    )


def status_threads(root: Path) -> tuple[list[str], list[dict[str, str]]]:
    """The managed threads `relay loop status` shows: role, status, last line."""
    path = root / m.STATE_NAME
    if not path.exists():
        return [], []
    state = _state(root)
    rows = [
        {"role": t.role, "thread": t.id, "status": t.status, "last": t.last}
        for t in state.threads.values()
    ]
    lines = [f"  {r['role']:<16} {r['status']:<10} {r['thread']}  {r['last']}" for r in rows]
    return (["managed threads:", *lines] if lines else []), rows


def managed_interrupt(root: Path, role: str) -> Output | None:
    """`relay loop interrupt ROLE`'s managed branch: the role's open threads in the
    recorded session interrupted and archived; None when the role has none there (its work
    is a local process, a node's job, or not running)."""
    state = _state(root)
    if not state.session or not [
        t for t in m.threads_of(state, role) if t.status not in ("terminated", "archived")
    ]:
        return None
    return interrupt_managed(root, role)
