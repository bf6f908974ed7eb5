"""The task runner: a TASK's steps run one after another in the platform shell.

Ground rules: each step gets a timeout, and on timeout the step's whole process tree dies
(POSIX: the step leads its own session and the group is signalled; Windows: ``taskkill /T
/F``), so no grandchild outlives its task; what a step leaves running in the background is
ended when the step ends. Output (stdout and stderr interleaved, as a person would see them
in a terminal) is captured with bounded memory: the head and the tail are kept and the
middle is counted. The first failing step stops the task. Steps read no stdin and do not
see ``RELAY_TOKEN``. Nothing here decides what may run; the protocol does.

A person's Ctrl-C (or a scheduler's SIGTERM) never reaches a step by itself, since it
leads its own session: :func:`request_stop` passes it on to the running step's group,
which is killed if it still runs a few seconds later (:func:`stop_grace`); the run ends
``stopped``, the later steps never start, and its RESULT is posted as for any other run.
"""

from __future__ import annotations

import contextlib
import enum
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

DEFAULT_CAP = 256 * 1024  # bytes of output kept per step (head + tail)
KILL_GRACE = 2.0  # seconds between the polite signal and the kill on POSIX
STOP_GRACE = 3.0  # seconds a step has to end after a Ctrl-C passed on to it
STOP_GRACE_ENV = "RELAY_STOP_GRACE"  # another number of seconds for that (0 to 300)
_POLL = 0.1  # seconds between two looks for a stop while a step runs
# relay's own credentials, wherever it found them: a TASK's steps come from another
# machine and get none of them (a step that needs a token is given one by its node's owner)
HIDDEN_ENV = (
    "RELAY_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "RELAY_GIT_TOKEN",
    "RELAY_APP_PRIVATE_KEY",
    "RELAY_APP_PRIVATE_KEY_FILE",
    "RELAY_WEBHOOK_SECRET",
    "RELAY_NODE_KEY",  # a step holding it could sign as the node
)
TASK_FILE_ENV = "RELAY_TASK_FILE"


class RunStatus(enum.StrEnum):
    """How a task run ended; the values are the RESULT's status words."""

    DONE = "done"
    FAILED = "failed"
    STOPPED = "stopped"  # relay was stopped (Ctrl-C, SIGTERM) while the steps ran


@dataclass(frozen=True)
class StepOutcome:
    """What one step did: its exit code (None if killed), its output, what was cut."""

    command: str
    exit_code: int | None
    timed_out: bool
    duration: float
    output: str
    truncated_bytes: int
    stopped: bool = False  # relay was stopped while it ran, and passed the stop on

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.stopped


@dataclass(frozen=True)
class RunOutcome:
    """The steps that ran (the failing one last) and the overall status."""

    status: RunStatus
    steps: tuple[StepOutcome, ...]

    @property
    def failed_step(self) -> int | None:
        """The 1-based number of the step that failed (or was interrupted), or None when
        all passed or the stop came between two steps."""
        if self.status is RunStatus.DONE:
            return None
        if self.status is RunStatus.STOPPED and (not self.steps or self.steps[-1].ok):
            return None
        return len(self.steps)


class _Stop:
    """A stop asked of this process (a signal's number), and whether it was asked twice."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.signum = 0
        self.force = False


_STOP = _Stop()


def request_stop(signum: int, *, force: bool = False) -> None:
    """Stop the steps this process runs: the running step's group gets ``signum`` (and is
    killed :func:`stop_grace` seconds later), or with ``force`` is killed at once; no later
    step starts. Meant for a signal handler: it only sets a flag (the step's own thread
    passes the signal on), and sends the kill of ``force``."""
    _STOP.signum = _STOP.signum or signum
    _STOP.force = _STOP.force or force
    _STOP.asked.set()
    if force:  # at once, not at the runner's next look
        for proc in list(_LIVE):
            if os.name != "nt":
                _signal_group(proc.pid, signal.SIGKILL)


def stop_grace() -> float:
    """Seconds a stopped step has to end before it is killed: STOP_GRACE, or
    RELAY_STOP_GRACE when it holds a number from 0 to 300."""
    try:
        value = float(os.environ.get(STOP_GRACE_ENV, ""))
    except ValueError:
        return STOP_GRACE
    return value if 0 <= value <= 300 else STOP_GRACE


def stop_requested() -> int:
    """The signal that asked this process to stop (0: none)."""
    return _STOP.signum if _STOP.asked.is_set() else 0


def reset_stop() -> None:
    """Forget a stop (a new command in the same process starts unstopped)."""
    _STOP.asked.clear()
    _STOP.signum, _STOP.force = 0, False


def steps_running() -> bool:
    """Whether a step of this process runs now."""
    return bool(_LIVE)


class _Capture:
    """Keeps the first and last ``cap // 2`` bytes of a stream and counts the rest."""

    def __init__(self, cap: int) -> None:
        self.half = max(cap // 2, 1)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.half:
                del self.tail[: len(self.tail) - self.half]

    def text(self) -> tuple[str, int]:
        """The kept output as text, with a marker where bytes were dropped, and their count.

        The cut falls on line ends: a secret that straddled the cut would otherwise survive
        in pieces too short for redaction to recognise, so the partial lines at both edges
        are dropped with the rest.
        """
        from relay.edges.console import console_codepages, decode, decode_wide, sniff, wide_order

        head, tail = bytes(self.head), bytes(self.tail)
        pages = console_codepages()
        if self.total - len(head) - len(tail) <= 0:
            return decode(head + tail, codepages=pages), 0
        wide = sniff(head)
        if wide is not None and wide.startswith("utf-16"):  # two bytes a unit: cut as text
            if (self.total - len(tail)) % 2:
                tail = tail[1:]
            order = wide_order(head, wide)
            text = decode(head[: len(head) - len(head) % 2])
            text = text[: text.rfind("\n") + 1].rstrip("\n")
            rest = decode_wide(tail, order)
            rest = rest[rest.find("\n") + 1 :] if "\n" in rest else ""
            dropped = self.total - len(head) - len(tail)  # (and the partial lines at the cut)
            return f"{text}\n[... {dropped} bytes of output omitted ...]\n{rest}", dropped
        head = head[: head.rfind(b"\n") + 1]
        tail = tail[tail.find(b"\n") + 1 :] if b"\n" in tail else b""
        dropped = self.total - len(head) - len(tail)
        text = decode(head, codepages=pages).rstrip("\n")
        rest = decode(tail, codepages=pages)
        return f"{text}\n[... {dropped} bytes of output omitted ...]\n{rest}", dropped


def child_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a step sees: ``base`` (default: ours, with the PATH as it was
    before relay fenced its own: a signed TASK's step is the person's) without relay's
    own token."""
    from relay.edges.ownpath import box_environ

    env = dict(box_environ() if base is None else base)
    for name in HIDDEN_ENV:
        env.pop(name, None)
    return env


def run_step(
    command: str,
    *,
    cwd: Path,
    timeout: float,
    cap: int = DEFAULT_CAP,
    env: Mapping[str, str] | None = None,
    grace: float = KILL_GRACE,
    on_start: Callable[[int], None] | None = None,
    shell: str | None = None,
) -> StepOutcome:
    """Run one shell command (in ``shell`` when named; a shell missing on this machine is
    a failed step saying so); on timeout kill its whole process tree. ``on_start`` hears
    the step's process group (its leader's pid) before it runs on, so that a node killed
    meanwhile can find and stop it on its next pass."""
    from relay.edges.winjob import contain, release

    started = time.monotonic()
    try:
        with _SPAWNING:  # a step another thread sweeps after never takes this one for its own
            proc = _spawn(command, cwd=cwd, env=child_env(env), shell=shell)
            _LIVE.add(proc)
    except FileNotFoundError:
        said = f"relay: the shell {shell!r} is not installed on this node (not on its PATH)\n"
        return StepOutcome(
            command=command, exit_code=127, timed_out=False,
            duration=time.monotonic() - started, output=said, truncated_bytes=0,
        )  # fmt: skip
    job = contain(proc)  # Windows: the step's tree dies with this pass, whatever ends it
    adopting = adopt_orphans()  # Linux: what the step detaches becomes our child
    before = children() if adopting else set()
    if on_start is not None:
        on_start(proc.pid)
    capture = _Capture(cap)
    reader = threading.Thread(target=_pump, args=(proc, capture), daemon=True)
    reader.start()
    timed_out = stopped = False
    try:
        ended = _wait(proc, until=started + timeout)
        if ended is None:
            timed_out = True
            _kill_tree(proc, grace=grace)
        elif ended:
            _end_leftovers(proc)
        else:
            stopped = True
            _stop_tree(proc)
    finally:
        _LIVE.discard(proc)
        release(job)
    with _SPAWNING:
        live = {p.pid for p in _LIVE}
        swept = sweep_detached(before, keep=live, group=proc.pid) if adopting else []
    reader.join(timeout=max(grace, 1.0))  # an escaped daemon may hold the pipe; don't wait
    output, dropped = capture.text()
    if swept:
        pids = ", ".join(str(pid) for pid in swept)
        output += f"\n[relay stopped what the step had detached from itself: pid {pids}]\n"
    return StepOutcome(
        command=command,
        exit_code=None if timed_out else proc.returncode,
        timed_out=timed_out,
        duration=time.monotonic() - started,
        output=output,
        truncated_bytes=dropped,
        stopped=stopped,
    )


def _wait(proc: subprocess.Popen[bytes], *, until: float) -> bool | None:
    """Wait for the step to end: True when it did, None when ``until`` (its timeout)
    passed, False when a stop was asked meanwhile (the step may still run)."""
    ended = _ended_fd(proc)
    try:
        while True:
            if _STOP.asked.is_set():
                return False
            left = until - time.monotonic()
            if left <= 0:
                return None
            if ended is not None:  # woken the moment the step ends, not at the next look
                with contextlib.suppress(OSError):
                    ended.poll(min(left, _POLL) * 1000)
                if proc.poll() is None:
                    continue
            else:
                try:
                    proc.wait(timeout=min(left, _POLL))
                except subprocess.TimeoutExpired:
                    continue
            # a step that failed as a stop came was ended by it (a second Ctrl-C kills the
            # group at once, perhaps before this thread looked); one that succeeded is done
            return not (_STOP.asked.is_set() and proc.returncode != 0)
    finally:
        if ended is not None:
            ended.close()


class _Ended:
    """A process's pidfd (Linux), readable once the process has ended: a wait on it ends
    when the step does, where ``Popen.wait(timeout)`` looks again only every 50 ms."""

    def __init__(self, fd: int) -> None:
        import select

        self.fd = fd
        self.poller = select.poll()
        self.poller.register(fd, select.POLLIN)

    def poll(self, milliseconds: float) -> None:
        self.poller.poll(max(1, int(milliseconds)))

    def close(self) -> None:
        os.close(self.fd)


def _ended_fd(proc: subprocess.Popen[bytes]) -> _Ended | None:
    """A pidfd of ``proc`` to wait on, None where the platform has none."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None or proc.returncode is not None:
        return None
    try:
        return _Ended(opener(proc.pid))
    except OSError:
        return None


def _stop_tree(proc: subprocess.Popen[bytes]) -> None:
    """Pass a stop on to the step's group (the signal relay got), give it STOP_GRACE
    seconds to end, then kill what is left; a second stop (``force``) kills at once."""
    if os.name == "nt" or _STOP.force:
        _kill_tree(proc, grace=0)
        return
    _signal_group(proc.pid, signal.Signals(_STOP.signum or signal.SIGTERM))
    deadline = time.monotonic() + stop_grace()
    while proc.poll() is None and not _STOP.force and time.monotonic() < deadline:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=_POLL)
    _signal_group(proc.pid, signal.SIGKILL)  # the step, and whatever it left in its group
    proc.wait()


def run_steps(
    steps: Sequence[str],
    *,
    cwd: Path,
    timeout: float,
    cap: int = DEFAULT_CAP,
    env: Mapping[str, str] | None = None,
    grace: float = KILL_GRACE,
    on_start: Callable[[int], None] | None = None,
    shell: str | None = None,
    wrap: Callable[[str], str] | None = None,
) -> RunOutcome:
    """Run the steps in order, each with ``timeout`` seconds; stop at the first failure,
    or when relay is asked to stop (the steps after the interrupted one never start).
    ``wrap``: what each step runs as (a box around it); its outcome names the step."""
    done: list[StepOutcome] = []
    for command in steps:
        if _STOP.asked.is_set():
            return RunOutcome(RunStatus.STOPPED, tuple(done))
        outcome = run_step(
            wrap(command) if wrap else command, cwd=cwd, timeout=timeout, cap=cap, env=env,
            grace=grace, on_start=on_start, shell=shell,
        )  # fmt: skip
        if wrap is not None:
            outcome = replace(outcome, command=command)
        done.append(outcome)
        if outcome.stopped:
            return RunOutcome(RunStatus.STOPPED, tuple(done))
        if not outcome.ok:
            return RunOutcome(RunStatus.FAILED, tuple(done))
    return RunOutcome(RunStatus.DONE, tuple(done))


def run_executor(
    command: str,
    *,
    task_text: str,
    cwd: Path,
    timeout: float,
    cap: int = DEFAULT_CAP,
    env: Mapping[str, str] | None = None,
    grace: float = KILL_GRACE,
    on_start: Callable[[int], None] | None = None,
) -> RunOutcome:
    """Hand a TASK to an agent command: the task file's path is its last argument and is
    in ``RELAY_TASK_FILE``; its output is the log and its exit code the status."""
    with tempfile.TemporaryDirectory(prefix="relay-task-") as tmp:
        task_file = Path(tmp) / "TASK.md"
        task_file.write_text(task_text, encoding="utf-8")
        full = f"{command} {quote_arg(str(task_file))}"
        step_env = child_env(env)
        step_env[TASK_FILE_ENV] = str(task_file)
        outcome = run_step(
            full, cwd=cwd, timeout=timeout, cap=cap, env=step_env, grace=grace, on_start=on_start
        )
    if outcome.stopped:
        return RunOutcome(RunStatus.STOPPED, (outcome,))
    status = RunStatus.DONE if outcome.ok else RunStatus.FAILED
    return RunOutcome(status, (outcome,))


def quote_arg(arg: str) -> str:
    """One argument quoted for the platform shell."""
    return subprocess.list2cmdline([arg]) if os.name == "nt" else shlex.quote(arg)


_LIVE: set[subprocess.Popen[bytes]] = set()


def kill_running_steps() -> None:
    """Kill every step this process is running, with its whole tree.

    Steps run in sessions of their own, so a relay pass that is stopped (a scheduler's
    SIGTERM, Ctrl-C) would leave them running unsupervised after its half-done report;
    the watch verb calls this from its signal handlers and at exit.
    """
    for proc in list(_LIVE):
        _kill_tree(proc, grace=0.2)
        _LIVE.discard(proc)


SHELLS: dict[str, tuple[str, ...]] = {
    "sh": ("sh", "-c"),
    "bash": ("bash", "-c"),
    "cmd": ("cmd.exe", "/d", "/s", "/c"),
    "powershell": ("powershell", "-NoLogo", "-NoProfile", "-NonInteractive", "-Command"),
    "pwsh": ("pwsh", "-NoLogo", "-NoProfile", "-NonInteractive", "-Command"),
}
"""How each shell a TASK may name (``relay task --shell``) runs one command."""


def shell_argv(command: str, shell: str | None) -> str | list[str]:
    """What to start for ``command``: itself for the platform shell (``shell=True``), or
    the named shell's argv. ValueError for a shell relay does not know."""
    if shell is None:
        return command
    if shell not in SHELLS:
        raise ValueError(f"unknown shell {shell!r}")
    return [*SHELLS[shell], command]


def _spawn(
    command: str, *, cwd: Path, env: dict[str, str], shell: str | None = None
) -> subprocess.Popen[bytes]:
    """Start ``command`` in the platform shell (or the named one), as the leader of a new
    process group."""
    windows = os.name == "nt"
    argv = shell_argv(command, shell)
    return subprocess.Popen(
        argv,
        shell=isinstance(argv, str),
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=not windows,
        creationflags=getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0) if windows else 0,
    )


def _pump(proc: subprocess.Popen[bytes], capture: _Capture) -> None:
    """Copy the merged output into the capture until every writer has closed the pipe."""
    assert proc.stdout is not None
    read = getattr(proc.stdout, "read1", proc.stdout.read)
    while chunk := read(65536):
        capture.feed(chunk)


def _kill_tree(proc: subprocess.Popen[bytes], *, grace: float) -> None:
    """Kill the step and every process it started."""
    if os.name == "nt":
        subprocess.run(
            ["taskkill", "/T", "/F", "/PID", str(proc.pid)],
            capture_output=True,
            check=False,
        )
        proc.wait()
        return
    _signal_group(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace)
    _signal_group(proc.pid, signal.SIGKILL)  # also reaches grandchildren that ignored TERM
    proc.wait()


_SPAWNING = threading.Lock()  # a step's start, and the sweep after another ends
_SUBREAPER: list[bool] = []  # once per process: whether it could become a subreaper


def adopt_orphans() -> bool:
    """Make this process a child subreaper (Linux ``prctl(PR_SET_CHILD_SUBREAPER)``): a
    process a step detaches (``setsid``, a double fork) is then re-parented to this one,
    not to init, so it can be found and stopped when the step ends. False elsewhere."""
    if not _SUBREAPER:
        ok = False
        if sys.platform.startswith("linux"):
            import ctypes

            try:
                ok = ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0
            except (OSError, AttributeError):
                ok = False
        _SUBREAPER.append(ok)
    return _SUBREAPER[0]


def children(*, zombies: bool = True) -> set[int]:
    """This process's children, from ``/proc`` (Linux); ``zombies``: with those that ended
    and wait to be reaped."""
    return {pid for pid, state in _child_states().items() if zombies or state != "Z"}


def _child_states() -> dict[int, str]:
    """This process's children and their states (``Z``: ended, not yet reaped), in one
    reading of ``/proc``."""
    me = os.getpid()
    return {pid: state for pid, (parent, state) in _processes().items() if parent == me}


def descendants(root: int) -> list[int]:
    """The processes ``root`` started and theirs, parents before children, from one
    reading of ``/proc`` (Linux), else of ``ps`` (macOS, BSD); none where neither answers."""
    by_parent: dict[int, list[int]] = {}
    for pid, (parent, _) in (_processes() or _processes_of_ps()).items():
        by_parent.setdefault(parent, []).append(pid)
    found = [root]
    for pid in found:  # (the list grows as each one's children are found)
        found += by_parent.get(pid, [])
    return found[1:]


def _processes() -> dict[int, tuple[int, str]]:
    """Every process's parent and state, in one reading of ``/proc`` (each process's stat
    read as bytes by one system call: a step reads it twice, and a machine runs hundreds of
    processes); empty where there is no ``/proc``."""
    found: dict[int, tuple[int, str]] = {}
    try:
        pids = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return found
    # A process may end between the listing and the read (its entry is gone, or says
    # ESRCH): it is no child any more. Path.glob would raise on the latter.
    for pid in pids:
        try:
            fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
            try:
                stat = os.read(fd, 4096)
            finally:
                os.close(fd)
            fields = stat.rsplit(b")", 1)[1].split()
            found[int(pid)] = (int(fields[1]), fields[0].decode("ascii", "replace"))
        except (OSError, IndexError, ValueError):
            continue
    return found


def _processes_of_ps() -> dict[int, tuple[int, str]]:
    """Every process's parent, as ``ps`` lists them (no state: ``?``)."""
    from relay.edges.ownpath import own_argv

    try:
        listed = subprocess.run(
            own_argv(["ps", "-A", "-o", "pid=", "-o", "ppid="]), capture_output=True, check=False
        ).stdout
    except OSError:
        return {}
    rows = (line.split() for line in listed.splitlines())
    return {
        int(row[0]): (int(row[1]), "?")
        for row in rows
        if len(row) == 2 and row[0].isdigit() and row[1].isdigit()
    }


def sweep_detached(before: set[int], *, keep: set[int], group: int | None = None) -> list[int]:
    """Stop the processes a finished step detached from itself: children this process
    gained during the step (adopted as their subreaper) that are in a session other than
    its own. Returns their pids. A process still in the step's own ``group`` (a ``&`` job,
    killed with the group a moment ago but not yet gone) is reaped, not reported: it did
    not detach."""
    mine = os.getsid(0)
    states = _child_states()  # one reading of /proc for both sets
    gained = set(states) - before - keep
    alive = {pid for pid, state in states.items() if state != "Z"}
    stopped, ended = [], [pid for pid in gained if pid not in alive and _other_session(pid, mine)]
    leftovers: list[int] = []
    for pid in sorted(gained & alive):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if os.getsid(pid) == mine:
                continue  # started by this process itself, not by the step
            if group is not None and os.getpgid(pid) == group:
                os.kill(pid, signal.SIGKILL)  # the group's kill may not have landed yet
                leftovers.append(pid)
                continue
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(os.getpgid(pid), signal.SIGKILL)
            os.kill(pid, signal.SIGKILL)
            stopped.append(pid)
    for pid in [*stopped, *ended, *leftovers]:  # reaped: adopted ones leave no zombie
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
    return stopped


def _other_session(pid: int, mine: int) -> bool:
    """Whether an ended child was in a session other than this process's: only such a one
    was detached by a step; one of ours (another thread's git) is reaped by its own wait."""
    try:
        return os.getsid(pid) != mine
    except (ProcessLookupError, PermissionError):
        return False


def _end_leftovers(proc: subprocess.Popen[bytes]) -> None:
    """Kill what a finished step left running in its group (a backgrounded `&` job)."""
    if os.name != "nt":
        _signal_group(proc.pid, signal.SIGKILL)


def group_alive(pgid: int) -> bool:
    """Whether a step's process group (from an earlier, killed pass) still runs."""
    if os.name == "nt":  # no process groups to ask; Windows steps end with their console
        return False
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, under another user: not ours to kill, but alive
    return True


def kill_group(pgid: int, *, grace: float = KILL_GRACE) -> None:
    """Stop a step's whole process group: TERM, a grace period, then KILL."""
    if os.name == "nt":
        subprocess.run(
            ["taskkill", "/T", "/F", "/PID", str(pgid)], capture_output=True, check=False
        )
        return
    _signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    _signal_group(pgid, signal.SIGKILL)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
