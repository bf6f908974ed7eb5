"""The scheduler-neutral spec of one watcher entry, and the rules that keep it safe.

An entry runs one ``relay watch --once`` for one clone and node. Its label is derived from
both, so two clones on one machine (or two nodes in one clone) never collide. An entry
never carries a token: the environment keeps only harmless variables, and anything
token-shaped in the argv or the environment is refused outright. A scheduled pass finds
its token at run time.

The entry's command line carries the registration's nonce (``--nonce``; Task Scheduler
has no environment to carry it), kept in the node's private state beside the record of
the entry: a pass counts as the scheduler's only when it presents the nonce of the
registration in place, so a person's ``relay watch --once --scheduled`` cannot pose as
the scheduler's heartbeat.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from relay import RELAY_MODULE
from relay.errors import LocalUsageError

DEFAULT_INTERVAL = 300
LABEL_PREFIX = "relay-watch"
NONCE_FLAG = "--nonce"  # the registration's own word on the entry's command line

# Variables worth carrying into a scheduled pass; every other one stays behind.
# What a scheduled pass runs besides the interpreter (crontab: a pass may remove its own
# line), and the system directories after them.
PATH_TOOLS = ("git", "gh", "crontab")
WINDOWS_PYTHONS = ("python.exe", "pythonw.exe")
POSIX_SYSTEM_PATH = ("/usr/local/bin", "/usr/bin", "/bin")
WINDOWS_SYSTEM_PATH = ("C:\\Windows\\system32", "C:\\Windows")
_KEPT_NAMES = frozenset({"PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ"})
_SECRET_NAME = re.compile(r"TOKEN|SECRET|PASS|CREDENTIAL|KEY|AUTH|COOKIE|SESSION", re.I)
_SECRET_VALUE = re.compile(
    r"gh[pousr]_[A-Za-z0-9_]{16,}"  # GitHub tokens, including ghs_APPID_JWT
    r"|github_pat_[A-Za-z0-9_]{16,}"
    r"|eyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]*"  # JWTs
    r"|AKIA[0-9A-Z]{16}|xox[abprs]-[\w-]{10,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY"
    r"|://[^/\s:@]+:[^/\s@]+@"  # credentials in a URL
)


@dataclass(frozen=True)
class Entry:
    """One scheduled watcher: what to run, where, how often, and where its output goes.

    Paths are native path strings of the target OS, so a Windows entry can be rendered
    (and tested) on Linux and the other way round.
    """

    label: str
    argv: tuple[str, ...]
    working_dir: str
    stdout_log: str
    stderr_log: str
    interval_seconds: int = DEFAULT_INTERVAL
    environment: tuple[tuple[str, str], ...] = field(default=())
    description: str = "relay watcher"

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z0-9][a-z0-9.-]{0,99}", self.label):
            raise LocalUsageError(f"scheduler label {self.label!r} is not [a-z0-9.-]")
        if not self.argv:
            raise LocalUsageError("a scheduler entry needs a command to run")
        if self.interval_seconds < 60 or self.interval_seconds > 86400:
            raise LocalUsageError(
                f"interval {self.interval_seconds}s is out of range",
                hint="pick --interval between 60 and 86400 seconds",
            )
        words = (*self.argv, self.working_dir, self.stdout_log, self.stderr_log, self.description)
        if any("\n" in w or "\r" in w or "\0" in w for w in words):
            raise LocalUsageError("a scheduler entry cannot hold line breaks or NUL characters")
        if not all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) for name, _ in self.environment):
            raise LocalUsageError("scheduler entry variable names must be [A-Za-z_][A-Za-z0-9_]*")
        _refuse_secrets(self)

    @property
    def env(self) -> dict[str, str]:
        """The environment as a dict, in the order it was given."""
        return dict(self.environment)

    @classmethod
    def create(
        cls,
        *,
        clone: Path,
        node: str,
        state_dir: Path,
        python: Path | None = None,
        argv: Sequence[str] | None = None,
        interval_seconds: int = DEFAULT_INTERVAL,
        environ: Mapping[str, str] | None = None,
        nonce: str | None = None,
    ) -> Entry:
        """The entry `relay join` registers for ``clone`` and ``node``.

        ``argv`` defaults to ``default_argv``; ``environ`` (default ``os.environ``) is
        filtered by ``safe_environment``; ``nonce`` is the registration's (see
        :func:`entry_nonce`). Raises LocalUsageError on unsafe input.
        """
        clone, state_dir = clone.resolve(), state_dir.resolve()
        interpreter = str((python or Path(sys.executable)).absolute())
        log = str(state_dir / "watch.log")
        words = (
            tuple(argv)
            if argv is not None
            else default_argv(interpreter, clone, node, log=log, nonce=nonce)
        )
        source = os.environ if environ is None else environ
        return cls(
            label=label_for(clone=clone, node=node),
            argv=words,
            working_dir=str(clone),
            stdout_log=log,
            stderr_log=str(state_dir / "watch.err.log"),
            interval_seconds=interval_seconds,
            environment=safe_environment(source, interpreter=interpreter),
            description=f"relay watcher for node {node} in {clone}",
        )


def default_argv(
    python: str, clone: Path, node: str, *, log: str | None = None, nonce: str | None = None
) -> tuple[str, ...]:
    """One scheduled pass: ``python -P -m relay.cli watch --once --scheduled`` for this clone
    and node, with the registration's ``nonce``. On Windows the windowless ``pythonw.exe``
    beside the interpreter runs it (no console flashes up) and the pass appends its own
    lines to ``log``, because Task Scheduler keeps no output of its own."""
    program: str = python
    extra: tuple[str, ...] = ()
    if Path(python).name.lower() in WINDOWS_PYTHONS:
        program = windowless_python(python) or python
        extra = ("--log", log) if log else extra
    words = ("watch", "--once", "--scheduled", "--repo-dir", str(clone), "--node", node)
    proof = (NONCE_FLAG, nonce) if nonce else ()
    return (program, *RELAY_MODULE, *words, *proof, *extra)


def new_nonce() -> str:
    """A registration's nonce: 128 random bits, as hex."""
    import secrets

    return secrets.token_hex(16)


def entry_nonce(argv: Sequence[str]) -> str | None:
    """The nonce an entry's command line carries (None: an entry of an older relay)."""
    words = list(argv)
    for at, word in enumerate(words[:-1]):
        if word == NONCE_FLAG:
            return words[at + 1]
    return None


def windowless_python(python: str) -> str | None:
    """``pythonw.exe`` beside a Windows ``python.exe`` when it exists, else None."""
    path = Path(python)
    if path.name.lower() != "python.exe":
        return None
    beside = path.with_name("pythonw.exe")
    return str(beside) if beside.is_file() else None


def label_for(*, clone: Path, node: str) -> str:
    """A label unique per (clone, node), readable enough to find in a scheduler's list."""
    slug = re.sub(r"[^a-z0-9]+", "-", node.lower()).strip("-")[:32] or "node"
    digest = hashlib.sha256(f"{clone}\0{node}".encode()).hexdigest()[:12]
    return f"{LABEL_PREFIX}-{slug}-{digest}"


# Choices made when joining, not settings a pass needs: the entry must not change with
# the shell that joins (a changed launchd entry is booted out and restarted).
_JOIN_TIME = frozenset({"RELAY_SCHEDULER", "RELAY_NODE", "RELAY_TOKEN"})


def safe_environment(
    environ: Mapping[str, str], *, interpreter: str
) -> tuple[tuple[str, str], ...]:
    """The variables a pass needs (a PATH led by the interpreter's directory), nothing secret."""
    kept: dict[str, str] = {}
    for name, value in environ.items():
        wanted = (name in _KEPT_NAMES or name.startswith("RELAY_")) and name not in _JOIN_TIME
        if wanted and not _SECRET_NAME.search(name) and not _SECRET_VALUE.search(value):
            kept[name] = value
    kept["PATH"] = _path_for(interpreter, kept.get("PATH", ""))
    return tuple(kept.items())


def _path_for(interpreter: str, inherited: str) -> str:
    """A minimal PATH: the interpreter's directory, the directories of git, gh and crontab
    (found on the inherited PATH, kept in its order), then the system's. Never the whole
    inherited PATH: it can be long enough for crontab to refuse the line ("command too
    long")."""
    system: tuple[str, ...]
    if "\\" in interpreter and "/" not in interpreter:  # a Windows entry
        sep, head, system = ";", interpreter.rsplit("\\", 1)[0], WINDOWS_SYSTEM_PATH
    else:
        sep, head, system = ":", interpreter.rsplit("/", 1)[0], POSIX_SYSTEM_PATH
    # In the inherited order: each tool then resolves to the very program join found.
    found = [t for t in (_tool_dir(name, inherited, sep) for name in PATH_TOOLS) if t]
    order = inherited.split(sep)
    tools = sorted(dict.fromkeys(found), key=lambda d: order.index(d) if d in order else len(order))
    parts = [head, *tools, *system]
    absolute = [p for p in parts if p.startswith("/") or re.match(r"[A-Za-z]:\\", p)]
    return sep.join(dict.fromkeys(absolute))


def _tool_dir(name: str, inherited: str, sep: str) -> str | None:
    """The directory ``name`` is found in on ``inherited`` (only for this OS's PATHs)."""
    import shutil

    if not inherited or sep != os.pathsep:
        return None
    found = shutil.which(name, path=inherited)
    return str(Path(found).parent) if found else None


def looks_secret(name: str, value: str) -> bool:
    """Whether a variable's name or value looks like a credential (never for an entry)."""
    return bool(_SECRET_NAME.search(name) or _SECRET_VALUE.search(value))


def _refuse_secrets(entry: Entry) -> None:
    """Raise when anything token-shaped would be written into a scheduler definition."""
    for name, value in entry.environment:
        if _SECRET_NAME.search(name) or _SECRET_VALUE.search(value):
            raise LocalUsageError(
                f"variable {name} looks like a secret and cannot go into a scheduler entry",
                hint="a scheduled pass finds its token at run time",
            )
    if any(_SECRET_VALUE.search(word) for word in entry.argv):
        raise LocalUsageError(
            "the watcher command holds something token-shaped",
            hint="a scheduled pass finds its token at run time; never pass it on the command line",
        )
