"""The environment of the loop's scheduled runs: recorded where the gates work, applied
where the scheduler starts relay, and proved by `relay doctor`.

`relay loop init` and `relay loop schedule` record how each gate and role command resolves
(its program's directory goes on the PATH), the variables the person names with
``--pass-env NAME`` and the names of the secrets named with ``--pass-secret NAME[:ROLE]``
into the env file, ``.git/relay/loop/loop-env.json``, which every scheduler entry names
(``--env-file``). A secret's value is kept in the OS keyring when one is usable, else in
``.git/relay/loop/loop-secrets.json`` (0600), and handed to its role's command alone:
never to a gate, never into a scheduler entry. `relay doctor` runs every gate once as
the scheduler will: cron's minimal environment, then the env file.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from relay.edges.files import write_private, write_state
from relay.errors import ConfigError, LocalUsageError, RelayError
from relay.loop.contract import Contract
from relay.loop.runenv import (
    CRON_PATH,
    ENV_FILE,
    ROLES,
    SECRETS_FILE,
    RunEnv,
    Secret,
    merge_secrets,
    parse_runenv,
    parse_secret,
    record,
)

KEYRING_SERVICE = "relay-loop"
ROLE_FLAGS = {"--maker": "maker", "--checker": "checker", "--verifier": "verifier"}
ROLE_FLAGS["--red-team"] = "red-team"
DOCTOR_GATE_TIMEOUT = 600.0
# the recorded variables relay's own process never takes, the boxes' alone: those that
# steer which code a program loads (an interpreter's path, the dynamic linker's, git's own
# programs and configuration, a shell's start-up file), and any whose value names a file or
# folder of the clone (:func:`_own_variable`) — either could make relay's own programs run
# a file a maker wrote; the rest (a service's base URL, the locale) relay's process takes
LOADERS = ("PYTHON", "LD_", "DYLD_", "GIT_", "PERL", "RUBY", "NODE_", "GCONV_", "BASH_")
LOADER_NAMES = frozenset({"ENV", "SHELLOPTS", "PS4", "LOCPATH", "NLSPATH"})


def _own_variable(name: str, value: str, root: Path) -> bool:
    """Whether relay's own process takes the recorded ``name=value`` (see
    :data:`LOADERS`)."""
    from relay.edges.ownpath import fenced_at, work_tree_top

    if name.startswith(LOADERS) or name in LOADER_NAMES:
        return False
    top = [work_tree_top(root.resolve())]
    return not any(os.path.isabs(p) and fenced_at(p, top) for p in value.split(os.pathsep))


def env_path(root: Path) -> Path:
    """The env file of this clone's scheduled runs (this machine's: inside .git)."""
    from relay.commands.loop_unattended import work_dir

    return work_dir(root) / ENV_FILE


def role_commands(contract: Contract) -> list[tuple[str, str]]:
    """(role, command) from the contract's `## Run command` (none while it holds the
    placeholders: the schedule refuses those itself)."""
    import shlex

    try:
        words = shlex.split(contract.run_command or "")
    except ValueError:
        return []
    if any("AGENT-COMMAND" in w for w in words):
        return []
    found = []
    for at, word in enumerate(words[:-1]):
        if word in ROLE_FLAGS:
            found.append((ROLE_FLAGS[word], words[at + 1]))
    return found


def scheduled_roles(root: Path, contract: Contract) -> list[tuple[str, str]]:
    """(role, command) a scheduled run starts itself: the contract's run command's, and
    for each role it does not name, the roster's in LOOP.md's ``## Roles`` (with a roster
    the run command needs no ``--maker``); a roster relay cannot read adds none (the run
    refuses it in one line)."""
    from relay.errors import SpineFileError
    from relay.loop.roster import LOOP_NAME, parse_roster, run_panel
    from relay.ratchet.files import Spine

    found = role_commands(contract)
    try:
        panel = run_panel(parse_roster(Spine(root).read(LOOP_NAME)))
    except SpineFileError:
        return found
    named = {role for role, _ in found}
    roster = [
        ("maker", panel.maker),
        *(("checker", c) for c in panel.checkers),
        ("verifier", panel.verifier),
        *(("red-team", r) for r in panel.red_team),
    ]
    return found + [(role, c) for role, c in roster if c and role not in named]


def _role_program(command: str) -> str:
    """What a role's command runs: an agent adapter's spec (`codex:review`) runs that
    CLI (`codex`), which the scheduled run's PATH must find; any other command as it is."""
    from relay.loop.agents import parse_role

    agent = parse_role(command)
    return agent.name if agent is not None else command


def _which(programs: Sequence[str], *, root: Path, path: str) -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for program in programs:
        if "/" in program:  # a path: relative ones are the clone's
            full = Path(program) if Path(program).is_absolute() else root / program
            found[program] = str(full) if os.access(full, os.X_OK) else None
        else:
            found[program] = shutil.which(program, path=path)
    return found


def check_passed(
    pass_env: Sequence[str], pass_secret: Sequence[str], environ: Mapping[str, str]
) -> list[Secret]:
    """The --pass-env and --pass-secret names refused before anything is written: unset
    here, named twice, or a secret passed as a plain variable; the secrets as parsed."""
    from relay.schedulers.entry import looks_secret

    secrets = [parse_secret(s) for s in pass_secret]
    for name in pass_env:
        if looks_secret(name, environ.get(name, "")):
            raise LocalUsageError(
                f"{name} looks like a secret (named by --pass-env); the env file is not for"
                " secrets",
                hint=f"name {name} with --pass-secret instead (NAME[:ROLE]): kept for that role"
                " alone",
            )
    record([], environ=environ, which={}, pass_env=pass_env, secrets=secrets)
    return secrets


def record_env(
    root: Path,
    contract: Contract,
    *,
    pass_env: Sequence[str] = (),
    pass_secret: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
) -> RunEnv:
    """Record the env file (and keep the named secrets) from ``environ``, the shell where
    the gates work; what was recorded. Names passed before stay passed."""
    from relay.edges.ownpath import box_environ
    from relay.loop.runenv import programs

    # the shell's own PATH, as the boxes get it (relay's own has no folder of the clone)
    source = dict(box_environ() if environ is None else environ)
    secrets = check_passed(pass_env, pass_secret, source)
    old = read_env(root)
    kept_vars = [n for n, _ in (old.variables if old else ()) if n in source]
    names = list(dict.fromkeys([*kept_vars, *pass_env]))
    commands = [g.command for g in contract.gates] + [
        _role_program(c) for _, c in scheduled_roles(root, contract)
    ]
    commands.append("git")  # relay runs git itself
    words = [p for c in commands for p in programs(c)]
    which = _which(words, root=root, path=source.get("PATH", ""))
    runenv = record(
        commands,
        environ=source,
        which=which,
        pass_env=[n for n in names if n not in {s.name for s in secrets}],
        secrets=secrets,
        when=datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%SZ"),
        sep=os.pathsep,
    )

    runenv = replace(runenv, secrets=merge_secrets(old.secrets if old else (), secrets))
    store = SecretStore(root)
    for secret in secrets:
        store.put(secret.name, source[secret.name])
    write_state(env_path(root), runenv.render().encode("utf-8"), top=env_path(root).parent)
    return runenv


def read_env(root: Path, path: Path | None = None) -> RunEnv | None:
    """The recorded env file, None when there is none; ConfigError when unreadable."""
    where = path or env_path(root)
    try:
        text = where.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as err:
        raise ConfigError(f"cannot read the env file {where}: {err.strerror}") from None
    found = parse_runenv(text)
    if found is None:
        raise ConfigError(
            f"the env file {where} is not one relay wrote",
            hint="run `relay loop schedule --at HH:MM` again where the gates work",
        )
    return found


def apply_env(root: Path, path: Path) -> RunEnv:
    """What a scheduled process does first: the recorded PATH and variables become the
    environment of the boxed gates and roles, and each role's secrets are handed to it.
    Relay's own process takes the recorded variables but those that steer which code a
    program loads or name the clone's files (:data:`LOADERS`), and the PATH without any
    folder of the clone (:mod:`relay.edges.ownpath`): a kept ``bin/git``, a ``src/keyring``
    on PYTHONPATH or a library on LD_LIBRARY_PATH of the project's never runs as relay on
    the host."""
    from relay.edges.ownpath import fence, hand_to_boxes, own_path
    from relay.ratchet.measure import hand_to_roles

    fence(root)  # before anything recorded applies
    runenv = read_env(root, path)
    if runenv is None:
        raise ConfigError(
            f"the env file {path} is missing",
            hint="run `relay loop schedule --at HH:MM` again where the gates work",
        )
    recorded = runenv.environment(os.environ, sep=os.pathsep)
    named = {n for n, _ in runenv.variables}
    boxed = {
        n: v
        for n, v in recorded.items()
        if n == "PATH" or (n in named and not _own_variable(n, v, root))
    }
    os.environ.update({n: v for n, v in recorded.items() if n not in boxed})
    os.environ["PATH"] = own_path(recorded["PATH"])
    hand_to_boxes(boxed)
    values = SecretStore(root).values([s.name for s in runenv.secrets])
    missing = [s.name for s in runenv.secrets if s.name not in values]
    if missing:
        raise ConfigError(
            f"the secret {missing[0]} the schedule passes is not kept on this machine",
            hint=f"run `relay loop schedule --at HH:MM` again, naming {missing[0]} with"
            " --pass-secret",
        )
    hand_to_roles({role: runenv.for_role(role, values) for role in ROLES})
    return runenv


class SecretStore:
    """The node's secrets for the loop's roles: the OS keyring when one is usable, else a
    0600 file inside .git."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def file(self) -> Path:
        from relay.commands.loop_unattended import work_dir

        return work_dir(self.root) / SECRETS_FILE

    def _key(self, name: str) -> str:
        return f"{self.root}:{name}"

    def _file_values(self) -> dict[str, str]:
        try:
            doc = json.loads(self.file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {str(k): str(v) for k, v in doc.items()} if isinstance(doc, dict) else {}

    def put(self, name: str, value: str) -> str:
        """Keep ``value``; where it went."""
        from relay.edges.github.credentials import usable_keyring

        backend = usable_keyring()
        if backend is not None:
            try:
                backend.set_password(KEYRING_SERVICE, self._key(name), value)
                return "the OS keyring"
            except Exception:  # a locked keychain: the file, as with no keyring at all
                pass
        values = {**self._file_values(), name: value}
        write_private(self.file, json.dumps(values).encode("utf-8"))
        return str(self.file)

    def values(self, names: Sequence[str]) -> dict[str, str]:
        """The kept values of ``names`` (those kept)."""
        from relay.edges.github.credentials import usable_keyring

        found = {n: v for n, v in self._file_values().items() if n in names}
        backend = usable_keyring()
        for name in names:
            if name in found or backend is None:
                continue
            try:
                value = backend.get_password(KEYRING_SERVICE, self._key(name))
            except Exception:
                value = None
            if value:
                found[name] = value
        return found


# --- the doctor's proof ---


def cron_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """What cron gives a job: HOME, LOGNAME, SHELL=/bin/sh and PATH=/usr/bin:/bin."""
    import getpass

    source = os.environ if environ is None else environ
    home = source.get("HOME") or str(Path.home())
    user = source.get("LOGNAME") or source.get("USER") or getpass.getuser()
    return {"HOME": home, "LOGNAME": user, "SHELL": "/bin/sh", "PATH": CRON_PATH}


def gate_checks(root: Path, contract: Contract | None) -> list[tuple[str, str, str, str]]:
    """`relay doctor`'s proof of the schedule: each gate run once as the scheduler will
    (cron's minimal environment, then the env file, then the maker's boundary, in a
    sandboxed clone of HEAD), as (name, status, detail, fix)."""
    if os.name == "nt":
        return []
    try:
        runenv = read_env(root)
    except RelayError as err:
        return [("loop env", "fail", err.message, err.hint or "")]
    if runenv is None or contract is None:
        return []
    from relay.commands.loop_unattended import pending, saved_schedule

    if saved_schedule(root) is None and pending(root) is None:
        said = "nothing scheduled; `relay loop schedule` registers a run, then doctor runs them"
        return [("loop gates", "skip", said, "")]
    from relay.commands.loop_unattended import work_dir
    from relay.ratchet.measure import gate_log, head_box, head_runs

    env = runenv.environment(cron_environment())
    checks = role_checks(root, contract, env)
    redo = "run `relay loop schedule --at HH:MM` again from the shell the gates work in"
    # as a scheduled run's gates run: in the scheduler's environment, then behind the
    # maker's boundary, in a sandboxed clone of HEAD (kept changes are a maker's code),
    # each as triage runs it (:func:`head_runs`); a gate that runs in a tree an earlier
    # run changed is not said to run: what it read was not HEAD's
    with gate_log(root, "doctor") as log, head_box(root) as box:
        runs = head_runs(box, contract.gates, timeout=DOCTOR_GATE_TIMEOUT, work=work_dir(root),
                         spared=contract.coverage_report, base=env)  # fmt: skip
        for head in runs:
            run, done, distrust = head.run, head.done, head.distrust
            gate = run.gate
            name = f"loop gate {gate.name}"
            if done.ok and not distrust:
                said = f"runs the scheduler's way ({done.duration:.1f}s)"
                checks.append((name, "ok", said, ""))
                continue
            how = "ran past its time" if done.timed_out else f"exited {done.exit_code}"
            last = _last_line(run.done.output)
            said = f" ({last})" if last else ""
            said += f"; output in {log.written[-1]}"
            if not done.ok and cannot_run(done.exit_code, done.output):
                said = f"`{gate.command}` cannot run the scheduler's way: {how}{said}"
                fix = f"{redo}, naming what the gate needs with --pass-env NAME"
                checks.append((name, "fail", said, fix))
            elif distrust:  # what it read was not HEAD's, or its test run was tampered with
                checks.append((name, "warn", f"ran, but {distrust}: {how}{said}", ""))
            else:  # it ran: a red gate is triage's to work, not the schedule's to fix
                said = f"ran the scheduler's way and failed: {how}{said}"
                checks.append((name, "warn", said, ""))
    return checks


def role_checks(
    root: Path, contract: Contract, env: Mapping[str, str]
) -> list[tuple[str, str, str, str]]:
    """Each role the scheduled run starts (the run command's, else the roster's), looked
    up as the fired run will: on the env file's PATH; one that will not be found fails."""
    from relay.ratchet.roles import command_problem

    checks: list[tuple[str, str, str, str]] = []
    for role, command in scheduled_roles(root, contract):
        name = f"loop role {role}"
        problem = command_problem(command, cwd=root, path=env.get("PATH", ""))
        if problem is None:
            checks.append((name, "ok", f"`{command}` resolves the scheduler's way", ""))
            continue
        said = f"the {role} command `{command}` cannot run the scheduler's way: {problem}"
        fix = (
            "run `relay loop schedule --at HH:MM` again from a shell whose PATH finds it,"
            " or name it by its full path"
        )
        checks.append((name, "fail", said, fix))
    return checks


_CANNOT_RUN = ("not found", "No module named", "Permission denied", "cannot execute")


def cannot_run(exit_code: int | None, output: str) -> bool:
    """Whether a failed gate never got to run its checks (its program or a module it
    needs is missing), as opposed to a gate that ran and found something."""
    return exit_code in (126, 127) or any(s in output for s in _CANNOT_RUN)


def _last_line(output: str) -> str:
    """The line that says why: the first saying something is missing, else the last."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    why = [line for line in lines if any(s in line for s in _CANNOT_RUN)]
    return (why or lines or [""])[0 if why else -1][:160]


def schedule_checks(root: Path) -> list[tuple[str, str, str, str]]:
    """`relay doctor`'s checks of the loop's schedule: every gate run the scheduler's way
    (none in a clone with no recorded environment)."""
    from relay.ratchet.files import Spine
    from relay.ratchet.sandbox import NAMESPACES, level

    try:
        contract: Contract | None = Spine(root).contract()
    except RelayError:
        contract = None
    if contract is None:
        return gate_checks(root, contract)
    if level() == NAMESPACES:
        said = "namespaces: the maker cannot see this clone, its remotes or HOME's credentials"
        boundary = ("loop maker boundary", "ok", said, "")
    else:
        said = (
            "env-level only: no user namespace here, so a maker that looks can reach this"
            " clone and HOME's files (it still runs in a clone of its own, without credentials)"
        )
        fix = "allow unprivileged user namespaces (kernel.unprivileged_userns_clone=1) for more"
        boundary = ("loop maker boundary", "warn", said, fix)
    return [boundary, *gate_checks(root, contract)]
