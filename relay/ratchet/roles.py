"""Running a role (the maker, a checker, the verifier, the red team): its command or its
built-in agent adapter, in an environment that holds no way to ship, with its transcript
kept; and checking before anything is committed that every role's command exists.

Ground rules: only relay commits and only relay pushes. A role gets no relay token, no
GitHub token, no git credential helper or askpass, no SSH agent, no ``gh`` login, and git
in its environment refuses every transport (so ``git push`` to any remote, a local bare
one included, fails); each remote's push URL points nowhere. What the role prints is kept
under the loop's state (``.git/relay/loop/transcripts/``), never in the work tree.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from relay.edges.ownpath import program
from relay.edges.steps import StepOutcome, quote_arg, run_step
from relay.edges.treefiles import read_tree_text
from relay.errors import ConfigError
from relay.loop.agents import (
    CANNOT_ENV,
    Reading,
    Signal,
    api_hosts,
    command_line,
    invocation,
    mode_for,
    parse_role,
    program_of,
    read_run,
    review_cites,
    script_of,
)
from relay.loop.briefs import EXPLAIN_ENV
from relay.loop.classify import Review, Verdict, parse_review
from relay.loop.hosts import network_note
from relay.loop.roster import RoleSettings
from relay.loop.threads import ThreadState, brief_part, role_word
from relay.ratchet.egress import SOCKET_NAME, EgressProxy, proxy_env, without_proxies
from relay.ratchet.measure import handed_secrets, role_of, role_secrets
from relay.ratchet.sandbox import (
    NAMESPACES,
    Sandbox,
    agent_login,
    clone_secrets,
    hand_in,
    own_folder,
    put_text,
    read_own,
    read_private,
    read_regular,
)
from relay.ratchet.threads import ThreadStore

TRANSCRIPTS = "transcripts"
NO_PUSH_URL = "relay-loop-no-push://a-role-cannot-push"


@dataclass(frozen=True)
class RoleRun:
    """One run of a role: the step as it ran and what it amounts to."""

    done: StepOutcome
    reading: Reading
    transcript: Path


def named_secrets(work: Path) -> dict[str, tuple[str, ...]]:
    """Every secret the person named for a role (``--pass-secret NAME[:ROLE]``), and the
    roles it is for: the recorded env file's and those handed to this process."""
    from relay.loop.runenv import ENV_FILE, parse_runenv

    found: dict[str, tuple[str, ...]] = {}
    try:
        recorded = parse_runenv((work / ENV_FILE).read_text(encoding="utf-8"))
    except OSError:
        recorded = None
    for secret in recorded.secrets if recorded else ():
        found[secret.name] = secret.roles
    for role, names in handed_secrets().items():
        for name in names:
            found[name] = tuple(dict.fromkeys([*found.get(name, ()), role]))
    return found


def passed_variables(work: Path) -> list[str]:
    """The variables the person passed for the gates (``--pass-env NAME``, recorded in
    the env file): hers to hand on, whatever their names say."""
    from relay.loop.runenv import ENV_FILE, parse_runenv

    try:
        recorded = parse_runenv((work / ENV_FILE).read_text(encoding="utf-8"))
    except OSError:
        return []
    return [name for name, _ in recorded.variables] if recorded else []


def role_env(
    cwd: Path,
    work: Path,
    base: Mapping[str, str] | None = None,
    *,
    role: str = "maker",
    home: Path | None = None,
    agent: str | None = None,
) -> dict[str, str]:
    """The environment a role runs in: of ours only what a box needs, what the person
    passed and the role's own agent's (:func:`relay.loop.runenv.box_names`), without any
    credential (nor another role's named secret:
    :func:`relay.loop.runenv.credential_names`), a scratch HOME with an
    empty git configuration and nothing of the real one's (``home``; one under ``work``
    when not given), git refusing every transport and every remote's push URL
    pointing nowhere, and ``gh`` pointed at an empty configuration. ``agent``: the
    adapter the role runs by (its CLI's own key stays), None for a plain command."""
    from relay.edges.ownpath import box_environ
    from relay.loop.runenv import box_names, credential_names
    from relay.ratchet.sandbox import scratch_home

    source = box_environ() if base is None else base
    named = named_secrets(work)
    passed = [*(n for n, roles in named.items() if role in roles), *passed_variables(work)]
    # an allow-list: what a box needs, what the person passed, the role's own agent's
    kept = box_names(list(source), role=role, passed=passed, agent=agent)
    env = {name: source[name] for name in kept}
    for name, roles in named.items():
        if role not in roles:
            env.pop(name, None)
    for name in credential_names(list(env), role=role, passed=passed, agent=agent, values=env):
        del env[name]  # relay's tokens, git's and ssh's ways, the person's other logins
    home = scratch_home(home or work / "role-home")
    config: list[tuple[str, str]] = [
        ("credential.helper", ""),  # an empty value clears every helper configured before
        ("core.askPass", ""),
        ("protocol.allow", "never"),
        # a judged tree's folders are root's, not the box user's (see sandbox.open_folders):
        # git would call it another user's repository and refuse to read it
        ("safe.directory", "*"),
        *((f"remote.{name}.pushurl", NO_PUSH_URL) for name in _remotes(cwd)),
    ]
    env["GIT_CONFIG_COUNT"] = str(len(config))
    for number, (key, value) in enumerate(config):
        env[f"GIT_CONFIG_KEY_{number}"] = key
        env[f"GIT_CONFIG_VALUE_{number}"] = value
    env["HOME"] = str(home)
    env["GIT_CONFIG_GLOBAL"] = str(home / ".gitconfig")
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["GIT_ALLOW_PROTOCOL"] = "relay-loop-none"  # git's own list: no transport at all
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_SSH_COMMAND"] = "false"
    env["GH_CONFIG_DIR"] = str(home / ".config" / "gh")
    env["GH_PROMPT_DISABLED"] = "1"
    return env


_REMOTES: dict[tuple[bytes, tuple[tuple[str, str], ...]], list[str]] = {}
_REMOTES_LOCK = threading.Lock()


def _remotes(cwd: Path) -> list[str]:
    """The remotes git names in ``cwd``. Asked of git once a run for each content of the
    clone's own configuration file (every box's clone relay made holds the same, and a
    box's git reads no other: its global and system configuration are none); where that
    file includes another, or is no regular file of the clone's own, git is asked each
    time."""
    key = _config_key(cwd)
    with _REMOTES_LOCK:  # (parallel makers are threads of one run)
        known = _REMOTES.get(key) if key is not None else None
    if known is not None:
        return list(known)
    done = subprocess.run(
        [program("git"), "remote"], cwd=cwd, capture_output=True, text=True, check=False
    )
    found = [r for r in done.stdout.split() if r] if done.returncode == 0 else []
    if key is not None and done.returncode == 0:
        with _REMOTES_LOCK:
            if len(_REMOTES) > 16:
                _REMOTES.clear()
            _REMOTES[key] = found
    return list(found)


def _config_key(cwd: Path) -> tuple[bytes, tuple[tuple[str, str], ...]] | None:
    """What git's answer about ``cwd``'s remotes rests on: its clone's configuration file
    (read through no link) and git's variables in our environment; None where that file
    names another (an include, a worktree's own configuration) or cannot be read."""
    most = 1 << 20
    data = read_regular(cwd / ".git" / "config", most)
    lowered = data.lower()
    if not data or len(data) >= most or b"include" in lowered or b"worktreeconfig" in lowered:
        return None  # (a file read to the cap may go on past it)
    if os.path.lexists(cwd / ".git" / "commondir"):
        return None  # its remotes may be another repository's configuration's
    return data, tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("GIT_")))


def run_role(
    spec: str,
    path: Path,
    *,
    maker: bool,
    env_name: str,
    cwd: Path,
    timeout: float,
    work: Path,
    label: str,
    on_start: Callable[[int], None] | None = None,
    cannot: Path | None = None,
    credentials: bool = False,
    role: str | None = None,
    explain: Path | None = None,
    sandbox: Sandbox | None = None,
    thread: tuple[str, str] | None = None,
    threads_root: Path | None = None,
) -> RoleRun:
    """Run one role on its file (the brief, the review file, the evidence): a built-in
    agent through its adapter, any other command with the file as its last argument and
    in ``env_name``. The maker may leave its reason for not doing the goal in ``cannot``
    (the file the brief and ``RELAY_LOOP_CANNOT`` name). With ``credentials`` (the
    contract authorises them for this role) it runs in relay's own environment, less
    relay's token. In a ``sandbox`` (the maker's) its scratch HOME is the role's, and its
    process runs behind the sandbox's boundary (``Sandbox.wrap``). With ``thread`` (the
    role's name and the goal) the file carries the role's thread on the goal, and what it
    was asked and answered is added to it; the threads live with ``threads_root``'s clone
    (the person's, never the maker's own)."""
    agent = parse_role(spec)
    role = role or ("maker" if maker else "checker")
    settings = roster_settings(threads_root or cwd, thread[0] if thread else role, spec)
    if settings is not None and settings.timeout is not None:
        timeout = min(timeout, settings.timeout)
    if settings is not None and settings.instructions:
        # the role's instructions file heads its brief (read from the person's clone)
        # never out of the tree: a kept change could have made the file a link to a host file
        given = read_tree_text(threads_root or cwd, settings.instructions, errors="replace")
        if given is not None:
            said = given.strip()
            asked = read_own(path)
            put_text(path, f"## Your instructions ({settings.instructions})\n\n{said}\n\n{asked}")
    store = ThreadStore.of(threads_root or cwd) if thread is not None else None
    notify = on_start
    if store is not None and thread is not None:
        earlier = brief_part(store.read(*thread))
        asked = read_own(path)
        if earlier:
            put_text(path, asked.rstrip("\n") + "\n\n" + earlier)
        store.append(*thread, "asked", _gist(asked))
        where, named = store, thread

        def record(pgid: int) -> None:
            where.set(*named, ThreadState.RUNNING, pgid=pgid)
            if on_start is not None:
                on_start(pgid)

        notify = record

    transcripts = work / TRANSCRIPTS
    transcripts.mkdir(parents=True, exist_ok=True)
    scratch: Path | None = None
    if sandbox is None and agent is not None and not credentials:  # its login's copy goes
        scratch = Path(tempfile.mkdtemp(prefix="relay-role-home-"))
    home = sandbox.home if sandbox else scratch
    if sandbox is not None and not path.resolve().is_relative_to(sandbox.folder.resolve()):
        # the role's file as its process can read it: a copy in its box (the original
        # lies in the person's git directory, which the box hides)
        handed = sandbox.folder / path.name
        hand_in(path, handed)  # a link an earlier ask's box left there is not followed
        path = handed
    from relay.edges.ownpath import box_environ

    env = (
        box_environ()
        if credentials
        else role_env(cwd, work, role=role, home=home, agent=agent.name if agent else None)
    )
    if sandbox is not None and not credentials:
        env = sandbox.env(env)  # env-level only: the candidate's code before the person's
    if agent is not None and not credentials:  # a copy of its own CLI's login, no other's
        env.update(agent_login(Path(env["HOME"]), agent.name, os.environ))
    env.update(role_secrets(role))  # that role's alone
    env[env_name] = str(path)
    # a box folder whose tree an earlier box swapped for a link is read nothing through
    intact = sandbox is None or sandbox.intact() is None
    if cannot is not None:
        if intact:
            cannot.unlink(missing_ok=True)
        env[CANNOT_ENV] = str(cannot)
    if explain is not None:  # where the maker says what it changed and why
        env[EXPLAIN_ENV] = str(explain)
    if agent is None:
        command = f"{spec} {quote_arg(str(path))}"
    else:
        agent = mode_for(agent, maker=maker)
        if sandbox is not None:
            history = own_folder(own_folder(sandbox.history) / f"{label}.history")
            sandbox = replace(sandbox, writable=(*sandbox.writable, history))
        else:
            history = transcripts / f"{label}.history"
            history.mkdir(parents=True, exist_ok=True)
        model = settings.model if settings is not None else None
        command = command_line(invocation(agent, str(path), history=str(history), model=model))
    proxy: EgressProxy | None = None
    boxed = sandbox
    if sandbox is not None and not credentials and sandbox.level == NAMESPACES:
        # its own network, loopback alone: out only to its hosts, through relay's proxy
        env = without_proxies(env)
        model = settings.model if settings is not None else None
        hosts = egress_hosts(threads_root or cwd, role, agent.name if agent else None, model)
        if maker:  # the brief says so: no attempt spent finding out
            asked = read_own(path)
            put_text(path, asked.rstrip("\n") + "\n\n" + network_note(hosts))
        if hosts:
            proxy = EgressProxy(sandbox.folder / SOCKET_NAME, hosts, who=f"the {role}").start()
            env.update(proxy_env())
            boxed = replace(sandbox, egress=proxy.path)
    wrapped = boxed.wrap(command, env) if boxed and not credentials else command
    try:
        done = run_step(wrapped, cwd=cwd, timeout=timeout, env=env, on_start=notify)
    finally:
        if proxy is not None:
            proxy.close()
        if store is not None and thread is not None:
            store.set(*thread, ThreadState.IDLE)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    transcript = transcripts / f"{label}.log"
    refused = "".join(f"{line}\n" for line in proxy.log) if proxy is not None else ""
    transcript.write_text(f"$ {command}\n{done.output}{refused}", encoding="utf-8")
    reason = None
    if cannot is not None and (sandbox is None or sandbox.intact() is None):
        # read only as a regular file of the maker's own, redacted
        kept = clone_secrets((threads_root / ".git") if threads_root else Path(os.devnull))
        reason = read_private(cannot, [*kept, *role_secrets(role).values()]) or None
        with contextlib.suppress(OSError):  # a folder there is the maker's, left as it is
            cannot.unlink(missing_ok=True)
    if store is not None and thread is not None and store.interrupted(*thread):
        reading = Reading(Signal.STOPPED, "a person stopped it (relay loop interrupt)")
    elif done.timed_out:
        reading = Reading(Signal.FAILED, "it ran past its timeout", text=done.output)
    else:
        reading = read_run(
            agent,
            exit_code=done.exit_code,
            output=done.output,
            cannot=reason,
            now=datetime.now(UTC),
            local=datetime.now().astimezone().tzinfo or UTC,
        )
    if store is not None and thread is not None:
        said = reading.text if agent is not None else done.output
        store.append(*thread, "answered", f"{reading.signal.value}: {reading.what}\n{_tail(said)}")
    return RoleRun(done, reading, transcript)


def egress_hosts(root: Path, role: str, agent: str | None, model: str | None) -> tuple[str, ...]:
    """The hosts ``role``'s box may reach: its agent CLI's own (``agent``, running
    ``model``; none for a plain command) and those ``root``'s contract lists for it."""
    from relay.errors import SpineFileError
    from relay.loop.contract import CONTRACT_NAME, parse_contract

    found = list(api_hosts(agent, os.environ, model=model)) if agent else []
    with contextlib.suppress(OSError, SpineFileError):
        text = (root / CONTRACT_NAME).read_text(encoding="utf-8")
        found += parse_contract(text).hosts_for(role)
    return tuple(dict.fromkeys(found))


def roster_settings(root: Path, name: str, spec: str) -> RoleSettings | None:
    """What the roster in ``root``'s LOOP.md sets for the role ``name`` running ``spec``
    (None: no roster, no such role, or a roster relay cannot read, which the run itself
    refuses before any role runs)."""
    from relay.errors import SpineFileError
    from relay.loop.roster import LOOP_NAME, parse_roster, settings_for

    text = read_tree_text(root, LOOP_NAME, errors="replace")
    if text is None:
        return None
    try:
        roster = parse_roster(text)
    except SpineFileError:
        return None
    return settings_for(roster, role_word(name), spec)


def _gist(text: str, lines: int = 6) -> str:
    """What a role was asked, in short: the brief's first lines."""
    kept = [ln for ln in text.splitlines() if ln.strip()][:lines]
    return "\n".join(kept)


def _tail(text: str, lines: int = 12) -> str:
    """What a role said last."""
    return "\n".join(text.rstrip().splitlines()[-lines:])


def review(
    command: str,
    write: Callable[[bool], Path],
    *,
    cwd: Path,
    timeout: float,
    who: str,
    work: Path,
    diff: str | None,
    env_name: str,
    credentials: bool = False,
    thread: tuple[str, str] | None = None,
    sandbox: Sandbox | None = None,
    threads_root: Path | None = None,
) -> tuple[Review, int]:
    """Ask one checker (or the verifier, or a red-team member) for a verdict. A review is
    discarded when it has no verdict, carries instruction-shaped text that is not quoted
    from the diff, cites nothing of the diff (``diff``: the change it reviews), or comes
    from an agent that reports using no tools; a discarded review is asked once more with
    the ignore note, and a second bad one is a block. In a ``sandbox`` (a clone of the
    candidate, ``cwd`` its tree) the role runs behind its boundary; its thread and the
    roster live with ``threads_root`` (the person's clone)."""
    last = "no verdict"
    for asked in (1, 2):
        path = write(asked == 2)
        label = f"{who.replace(' ', '-')}-{asked}"
        ran = run_role(
            command, path, maker=False, env_name=env_name, cwd=cwd, timeout=timeout,
            work=work, label=label, credentials=credentials, role=role_of(env_name, who),
            thread=thread, sandbox=sandbox, threads_root=threads_root,
        )  # fmt: skip
        reading = ran.reading
        if reading.signal is not Signal.DONE and parse_role(command) is not None:
            last = f"the agent did not finish ({reading.what})"
            continue
        said = reading.text if parse_role(command) is not None else ran.done.output
        got = parse_review(said, quoted=diff or "")
        if got.verdict is not None and reading.tools == 0:
            got = Review(None, discarded="the agent reports using no tools: it read no code")
        if got.verdict is not None and diff is not None and not review_cites(said, diff):
            got = Review(None, discarded="it cites no file and line of the diff")
        if got.verdict is not None:
            if thread is not None and got.findings:
                store = ThreadStore.of(threads_root or cwd)
                store.append(*thread, "flagged", "\n".join(got.findings))
            return got, asked
        last = got.discarded or "no verdict"
    return Review(Verdict.BLOCK, (f"{who}'s review was discarded twice: {last}",)), 2


def check_commands(commands: Sequence[tuple[str, str]], *, cwd: Path) -> None:
    """Every role's command resolves: its program is on PATH, or a path (from ``cwd``)
    to an executable file. ConfigError naming the first that does not, before anything
    runs or is committed."""
    for role, command in commands:
        problem = command_problem(command, cwd=cwd)
        if problem is not None:
            raise ConfigError(
                f"the {role} command `{command}` cannot run: {problem}",
                hint="fix --" + role.replace(" ", "-") + " (a program on PATH, an executable"
                " path, or claude, codex, gemini, aider)",
            )


def command_problem(command: str, *, cwd: Path, path: str | None = None) -> str | None:
    """Why a role's command cannot start, or None; ``path`` is the PATH it is looked up
    on (the boxes' when not given)."""
    agent = parse_role(command)
    try:
        program = agent.name if agent else program_of(command)
    except ValueError as err:
        return f"it cannot be read as a command line ({err})"
    if program is None:
        return None
    script = script_of(command) if agent is None else None
    if script is not None:
        where = Path(script) if Path(script).is_absolute() else cwd / script
        if not where.is_file():
            return f"{script} (the script {Path(program).name} is handed) does not exist"
    if os.sep in program or (os.altsep and os.altsep in program):
        where = (cwd / program).resolve() if not Path(program).is_absolute() else Path(program)
        if not where.exists():
            return f"{program} does not exist"
        if not where.is_file() or not os.access(where, os.X_OK):
            return f"{program} is not an executable file"
        return None
    from relay.edges.ownpath import box_environ

    lookup = box_environ().get("PATH") if path is None else path  # as its box finds it
    if shutil.which(program, path=lookup) is None:
        return f"{program} is not on PATH"
    return None


def role_commands(
    maker: str, checkers: Sequence[str], verifier: str | None, red_team: Sequence[str]
) -> list[tuple[str, str]]:
    """Each role's name and command, as ``check_commands`` takes them."""
    found = [("maker", maker)]
    found += [("checker", c) for c in checkers]
    found += [("verifier", verifier)] if verifier else []
    found += [("red team", c) for c in red_team]
    return found
