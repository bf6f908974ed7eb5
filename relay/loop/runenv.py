"""The environment a scheduled run needs, decided: which programs a gate or role command
runs, the PATH that finds them, the variables and secrets the person named, the file
that holds what is not secret, and the bounds a run applies (written to BOARD.md).

Ground rules: pure. Recording (``which``, the environment, the secret store) and applying
(the process environment, a role's) are the commands layer's; this module only says what
to record and what a scheduled process's environment becomes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from relay.errors import LocalUsageError
from relay.loop.contract import DEFAULT_CEILING, Contract
from relay.loop.markdown import find, sections
from relay.loop.ratchet import BLOCK_AFTER_PASSES, MAX_TRANSIENT, REWIND_AFTER
from relay.loop.resume import HORIZON

ENV_FILE = "loop-env.json"  # in the loop's work directory (inside .git): this machine's
SECRETS_FILE = "loop-secrets.json"  # beside it, 0600, when no OS keyring is usable
ROLES = ("maker", "checker", "verifier", "red-team")
SYSTEM_PATH = ("/usr/local/bin", "/usr/bin", "/bin")
# what cron gives a job (Debian's, and most others'): relay's doctor runs the gates so
CRON_PATH = "/usr/bin:/bin"
_SHELL_WORDS = frozenset({"env", "exec", "time", "nohup", "command", "builtin", "then", "do"})
_OPERATORS = frozenset({"&&", "||", ";", "|", "&", "(", ")", "{", "}", "!"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*")
# recorded whatever the person names: the project's PYTHONPATH (the boxed gates' and
# roles' alone: relay's own process never takes a PYTHON* variable of the env file), the
# locale, and the folders the person shares with the boxes, kept as they are
_RELAY_OWN = ("PYTHONPATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "RELAY_SANDBOX_SHARE")


# a variable whose name says it holds a credential: the name's last words, by shape
_CREDENTIAL_NAME = re.compile(
    r"(?:(?:TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIALS?)"  # PGPASSWORD too
    r"|(?:^|_)(?:PASS|PWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|AUTH|PAT|COOKIE|KEY))"
    r"(?:_[A-Z0-9]+)?$",
    re.IGNORECASE,
)
# never a role's nor a gate's, whatever the person passed: relay's own and the forges'
# tokens (relay.edges.steps' HIDDEN_ENV among them), every way git or ssh could be handed
# a credential or pointed at another repository, the session's bus, the shell's folders
NEVER_PASSED = frozenset(
    {
        "RELAY_TOKEN",
        "RELAY_GIT_TOKEN",
        "RELAY_APP_PRIVATE_KEY",
        "RELAY_APP_PRIVATE_KEY_FILE",
        "RELAY_WEBHOOK_SECRET",
        "RELAY_NODE_KEY",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "GH_ENTERPRISE_TOKEN",
        "GITHUB_ENTERPRISE_TOKEN",
        "GIT_ASKPASS",
        "SSH_ASKPASS",
        "SSH_AUTH_SOCK",
        "SSH_AGENT_PID",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_COMMON_DIR",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_CREDENTIAL_HELPER",
        "DBUS_SESSION_BUS_ADDRESS",
        "PWD",
        "OLDPWD",
        # the agent CLIs' own folders (hidden in a box; an agent role's points at its copy)
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
    }
)
# relay's own secrets by shape, and git configuration handed through the environment
_NEVER_SHAPE = re.compile(
    r"^RELAY_.*(?:TOKEN|SECRET|KEY)|^GIT_CONFIG_(?:KEY|VALUE)_\d+$|^GIT_CONFIG_COUNT$"
)
# the agent CLIs' own logins: an agent role needs its provider's key to work at all
AGENT_KEYS = frozenset(
    {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "OPENAI_API_KEY",
        "CODEX_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "OPENROUTER_API_KEY",
        "MISTRAL_API_KEY",
        "DEEPSEEK_API_KEY",
        "GROQ_API_KEY",
        "AZURE_OPENAI_API_KEY",
    }
)
# whose key is whose: a role gets its own adapter's alone (aider speaks to every provider)
AGENT_KEYS_OF = {
    "claude": frozenset({"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"}),
    "codex": frozenset({"OPENAI_API_KEY", "CODEX_API_KEY", "AZURE_OPENAI_API_KEY"}),
    "gemini": frozenset({"GEMINI_API_KEY", "GOOGLE_API_KEY"}),
    "aider": AGENT_KEYS,
}
# a name that says it holds a login wherever the word stands: a signed token, a database's
# or an error tracker's connection string, a cookie, a session
_CREDENTIAL_WORD = re.compile(
    r"JWT|DSN|COOKIE|SESSION|BEARER|CONNECTION_?STRING|CONN_?STR", re.IGNORECASE
)
# the CI's logins whose names say nothing: the workflow's OIDC token and the runner's own
CREDENTIAL_NAMES = frozenset(
    {
        "ACTIONS_ID_TOKEN_REQUEST_URL",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
        "ACTIONS_RUNTIME_TOKEN",
        "ACTIONS_RUNTIME_URL",
        "ACTIONS_RESULTS_URL",
        "ACTIONS_CACHE_URL",
    }
)
# a value that carries a login whatever its name: a URL with a user (and a password) in
# it (``PIP_INDEX_URL``, ``DATABASE_URL``, ``HTTPS_PROXY``), a JWT, a token by its prefix
_CREDENTIAL_VALUE = re.compile(
    r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#@\s]+@"
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\."
    r"|(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|glpat-[A-Za-z0-9_-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|sk-ant-[A-Za-z0-9_-]{20,}"
    r"|sk-[A-Za-z0-9_-]{32,}|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|npm_[A-Za-z0-9]{30,}"
    r"|pypi-[A-Za-z0-9_-]{50,})"
)


# the variables of relay's environment that pass into a box (a role's or a gate's): the
# system's and the locale's, the terminal's, Python's and pytest's, relay's own for the
# role; every other is dropped unless the person passed it by name (``--pass-env``), so a
# login no list foresaw never reaches one. HOME and the temporary folders are the box's.
BOX_NAMES = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LANGUAGE",
        "TERM",
        "COLORTERM",
        "NO_COLOR",
        "FORCE_COLOR",
        "COLUMNS",
        "LINES",
        "TZ",
        "TMPDIR",
        "TMP",
        "TEMP",
        "VIRTUAL_ENV",
        "SOURCE_DATE_EPOCH",
        # where the machine's certificates are, and its proxy (one with a login in its
        # URL is withheld by value: :func:`credential_names`)
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
        "NODE_EXTRA_CA_CERTS",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "no_proxy",
        "all_proxy",
    }
)
# where a version manager or a toolchain lies (a box shows its folder when it is in HOME)
TOOL_VARIABLES = frozenset(
    {
        "PYENV_ROOT",
        "PYENV_VERSION",
        "RBENV_ROOT",
        "NODENV_ROOT",
        "NVM_DIR",
        "NVM_BIN",
        "VOLTA_HOME",
        "BUN_INSTALL",
        "CARGO_HOME",
        "RUSTUP_HOME",
        "RUSTUP_TOOLCHAIN",
        "GOROOT",
        "GOPATH",
        "GOMODCACHE",
        "JAVA_HOME",
        "ASDF_DIR",
        "ASDF_DATA_DIR",
        "SDKMAN_DIR",
        "CONDA_PREFIX",
        "CONDA_DEFAULT_ENV",
    }
)
BOX_NAMES = BOX_NAMES | TOOL_VARIABLES
BOX_PREFIXES = ("LC_", "PYTHON", "PYTEST_", "COVERAGE_", "RELAY_LOOP_")
BOX_REFUSED = frozenset({"PYTHONSTARTUP"})  # a file of HOME's an interactive Python runs
# what an agent CLI reads of its own besides its key (its endpoint, model, options): for
# its adapter's role alone (its keys among them: :data:`AGENT_KEYS_OF`)
AGENT_PREFIXES = {
    "claude": ("ANTHROPIC_", "CLAUDE_"),
    "codex": ("OPENAI_", "CODEX_", "AZURE_OPENAI_"),
    "gemini": ("GEMINI_", "GOOGLE_"),
    "aider": ("AIDER_", "ANTHROPIC_", "OPENAI_", "GEMINI_", "GOOGLE_", "OPENROUTER_"),
}


def box_names(
    names: Sequence[str], *, role: str, passed: Sequence[str] = (), agent: str | None = None
) -> list[str]:
    """The variables of ``names`` that pass into a ``role``'s box (``"gate"``: the
    candidate's code): :data:`BOX_NAMES` and :data:`BOX_PREFIXES`' (never
    :data:`BOX_REFUSED`), those the person passed for it (``passed``), and, for a role
    run by an agent CLI's adapter (``agent``; never a gate), that CLI's own
    (:data:`AGENT_PREFIXES`, :data:`AGENT_KEYS_OF`). An allow-list: what it keeps still
    goes through :func:`credential_names`."""
    mine = AGENT_PREFIXES.get(agent or "", ()) if role != "gate" else ()
    keys = AGENT_KEYS_OF.get(agent or "", frozenset()) if role != "gate" else frozenset()
    given = set(passed)
    return [
        n
        for n in names
        if n in given
        or n in keys
        or (n not in BOX_REFUSED and (n in BOX_NAMES or n.startswith(BOX_PREFIXES)))
        or (bool(mine) and n.startswith(mine))
    ]


def credential_names(
    names: Sequence[str],
    *,
    role: str,
    passed: Sequence[str] = (),
    agent: str | None = None,
    values: Mapping[str, str] | None = None,
) -> list[str]:
    """The variables of ``names`` a ``role``'s process (``"gate"``: the candidate's code)
    must not get. The one rule for every box: relay's and the forges' tokens and git's
    and ssh's ways to a credential (:data:`NEVER_PASSED`, ``RELAY_*TOKEN|SECRET|KEY``,
    ``GIT_CONFIG_*``) always; every other credential but those the person handed it
    (``passed``: her ``--pass-env``/``--pass-secret`` names for it) and, for a role run
    by an agent CLI's adapter (``agent``; never a gate, nor a plain command), that CLI's
    own keys. A credential is a name shaped like one (``TWINE_PASSWORD``, ``NPM_TOKEN``,
    ``AWS_SECRET_ACCESS_KEY``, ``SENTRY_DSN``, ``CI_JOB_JWT``), the CI's own logins, or
    a value (``values``) that carries one: a URL with a user in it, a JWT, a known
    token's prefix. PATH-like and relay's own names are no credentials (``PASS`` alone is
    a count)."""
    own = AGENT_KEYS_OF.get(agent or "", frozenset()) if role != "gate" else frozenset()
    keep = set(passed) | own
    given = values or {}
    return [
        n
        for n in names
        if n in NEVER_PASSED
        or _NEVER_SHAPE.match(n)
        or (
            n not in keep
            and (
                n in AGENT_KEYS
                or n in CREDENTIAL_NAMES
                or _CREDENTIAL_NAME.search(n)
                or _CREDENTIAL_WORD.search(n)
                or _CREDENTIAL_VALUE.search(given.get(n, ""))
            )
        )
    ]


def programs(command: str) -> list[str]:
    """The programs a shell command runs: the first word of each simple command (read as
    :mod:`relay.loop.programs` reads a role's line), after any ``NAME=value`` assignments,
    options and ``env``/``exec``/``time``; in order, once each, as typed (the PATH finds
    them so)."""
    from relay.loop.programs import simple_commands

    found: list[str] = []
    for words in simple_commands(command):
        first = next(
            (w for w in words if not _ASSIGNMENT.fullmatch(w) and w not in _SHELL_WORDS
             and not w.startswith("-") and w not in _OPERATORS),
            None,
        )  # fmt: skip
        if first is not None and first not in found:
            found.append(first)
    return found


@dataclass(frozen=True)
class Secret:
    """A variable the person named secret and the roles it is handed to."""

    name: str
    roles: tuple[str, ...]


def parse_secret(text: str) -> Secret:
    """``NAME`` (the maker's) or ``NAME:ROLE[,ROLE]``; LocalUsageError naming what is wrong."""
    name, _, roles = text.strip().partition(":")
    if not _NAME.fullmatch(name):
        raise LocalUsageError(
            f"{name!r} is not a variable name (given to --pass-secret as {text!r})",
            hint="give it as NAME or NAME:ROLE (roles: " + ", ".join(ROLES) + ")",
        )
    chosen = tuple(dict.fromkeys(r.strip() for r in roles.split(",") if r.strip())) or ("maker",)
    unknown = [r for r in chosen if r not in ROLES]
    if unknown:
        raise LocalUsageError(
            f"{unknown[0]!r} is not a role (given to --pass-secret as {text!r})",
            hint="roles: " + ", ".join(ROLES),
        )
    return Secret(name, chosen)


@dataclass(frozen=True)
class RunEnv:
    """What a scheduled run's process gets, recorded where the gates work: a PATH, the
    variables the person passed (and relay's own few), the names of the secrets and
    their roles (never their values), and how each command resolved."""

    path: tuple[str, ...]
    variables: tuple[tuple[str, str], ...] = ()
    secrets: tuple[Secret, ...] = ()
    resolved: tuple[tuple[str, str], ...] = ()  # (program, where it was found, or "")
    recorded: str = ""

    def environment(self, base: Mapping[str, str], *, sep: str = ":") -> dict[str, str]:
        """``base`` (a scheduler's minimal environment) with the recorded PATH (joined by
        ``sep``, the OS's) and variables; secrets stay out (they go to their roles alone)."""
        env = dict(base)
        env.update(self.variables)
        env["PATH"] = sep.join(self.path)
        return env

    def for_role(self, role: str, values: Mapping[str, str]) -> dict[str, str]:
        """The secrets handed to ``role`` (from ``values``, the store's)."""
        mine = [s.name for s in self.secrets if role in s.roles]
        return {name: values[name] for name in mine if name in values}

    def render(self) -> str:
        return (
            json.dumps(
                {
                    "path": list(self.path),
                    "variables": dict(self.variables),
                    "secrets": {s.name: list(s.roles) for s in self.secrets},
                    "resolved": dict(self.resolved),
                    "recorded": self.recorded,
                },
                indent=2,
            )
            + "\n"
        )


def parse_runenv(text: str) -> RunEnv | None:
    """The env file as a model; None when it cannot be read (the caller says so)."""
    try:
        doc = json.loads(text)
        return RunEnv(
            path=tuple(str(p) for p in doc["path"]),
            variables=tuple((str(k), str(v)) for k, v in doc.get("variables", {}).items()),
            secrets=tuple(
                Secret(str(k), tuple(str(r) for r in v)) for k, v in doc.get("secrets", {}).items()
            ),
            resolved=tuple((str(k), str(v)) for k, v in doc.get("resolved", {}).items()),
            recorded=str(doc.get("recorded", "")),
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def record(
    commands: Sequence[str],
    *,
    environ: Mapping[str, str],
    which: Mapping[str, str | None],
    pass_env: Sequence[str] = (),
    secrets: Sequence[Secret] = (),
    when: str = "",
    sep: str = ":",
) -> RunEnv:
    """The RunEnv for ``commands`` (gates and roles), given where each of their programs
    resolves now (``which``: program -> absolute path or None). The PATH is the
    directories those programs were found in, in the inherited PATH's order, then the
    system's: never the whole inherited PATH, nor relay's own interpreter's folder (a gate
    must run the project's tools, not relay's; relay starts itself by its full path)."""
    inherited = [p for p in environ.get("PATH", "").split(sep) if p]
    found: list[str] = []
    resolved: list[tuple[str, str]] = []
    for command in commands:
        for program in programs(command):
            if any(p == program for p, _ in resolved):
                continue
            where = which.get(program)
            resolved.append((program, where or ""))
            if where and "/" not in program and "\\" not in program:  # PATH must find it
                found.append(re.split(r"[/\\](?=[^/\\]*$)", where)[0])
    order = {d: i for i, d in enumerate(inherited)}
    dirs = sorted(dict.fromkeys(found), key=lambda d: order.get(d, len(order)))
    system = SYSTEM_PATH if sep == ":" else ()  # Windows: its own folders are on PATH
    path = tuple(dict.fromkeys([*dirs, *system]))
    missing = [n for n in pass_env if n not in environ]
    if missing:
        raise LocalUsageError(
            f"{missing[0]} is not set in this shell (named by --pass-env)",
            hint="set it in this shell (where the gates work), then run this again",
        )
    named = {s.name for s in secrets}
    both = [n for n in pass_env if n in named]
    if both:
        raise LocalUsageError(f"{both[0]} is named by --pass-env and --pass-secret: pick one")
    unset = [s.name for s in secrets if s.name not in environ]
    if unset:
        raise LocalUsageError(
            f"{unset[0]} is not set in this shell (named by --pass-secret)",
            hint="set it in this shell, then run this again (relay keeps it for the role)",
        )
    variables = [(n, environ[n]) for n in _RELAY_OWN if n in environ and n not in pass_env]
    variables += [(n, environ[n]) for n in pass_env]
    return RunEnv(
        path=path,
        variables=tuple(variables),
        secrets=tuple(secrets),
        resolved=tuple(resolved),
        recorded=when,
    )


def merge_secrets(old: Sequence[Secret], new: Sequence[Secret]) -> tuple[Secret, ...]:
    """The secrets recorded before, with those named now in their place."""
    names = {s.name for s in new}
    return (*(s for s in old if s.name not in names), *new)


# --- the bounds a run applies, on BOARD.md ---

BOUNDS_SECTION = "Bounds of the last run"
BOUNDS_INTRO = (
    "Every limit the last `relay loop run` applied, and where it came from: nothing caps a"
    " run that is not listed here."
)


@dataclass(frozen=True)
class Bound:
    name: str
    value: str
    source: str


@dataclass(frozen=True)
class Bounds:
    bounds: tuple[Bound, ...] = field(default_factory=tuple)

    def render(self) -> str:
        lines = [f"- {b.name}: {b.value} ({b.source})" for b in self.bounds]
        return f"## {BOUNDS_SECTION}\n\n{BOUNDS_INTRO}\n\n" + "\n".join(lines) + "\n"


def with_bounds(text: str, bounds: Bounds) -> str:
    """BOARD.md with its bounds section replaced (or added at the end)."""
    section = bounds.render()
    parts = sections(text)
    at = find(parts, BOUNDS_SECTION)
    if at is None:
        return text.rstrip("\n") + "\n\n" + section
    rest = "".join(p.text for p in parts[at + 1 :])
    return "".join(p.text for p in parts[:at]) + section + ("\n" + rest if rest else "")


# relay's own limit on output (relay.edges.steps' DEFAULT_CAP), said on the board like the others
LOGS_KEPT = 30  # relay.ratchet.measure's KEEP_LOGS
BOX_USERS_SOURCE = (
    "relay run as root: each box a user of its own where every share can be bound through"
    " an idmapped mount; `relay doctor` says which share cannot"
)
BOUNDARY_SOURCE = (
    "relay: the maker, the gates and the grading roles each in a clone of relay's own, no"
    " credential and only an allow-list of variables in their environment; namespaces also"
    " hide the person's clone, its remotes and the agent CLIs' folders, show the real HOME"
    " empty but for what a role runs from, give each box a /tmp of its own"
    " and make the rest read-only; env-level only cannot"
)
OUTPUT_KEPT = "256 KiB of each command's output (its head and tail)"


def run_bounds(
    contract: Contract,
    *,
    max_iterations: int | None,
    wall_clock: float | None,
    boundary: str = "",
    boxes: Sequence[Bound] = (),
    box_users: str = "",
    goal_runs: Sequence[tuple[str, int]] = (),
    roles: tuple[str, str] | None = None,
) -> Bounds:
    """Every bound a run under ``contract`` applies, and where each comes from
    (``box_users``: who a root relay's boxes run as, where they share one user;
    ``goal_runs``: the optimisation goals that name their own run count)."""
    b = contract.budget
    runs_source = (
        "the contract's `Metric runs:`"
        if b.metric_runs is not None
        else "relay's default: the contract has no `Metric runs:` line (add one to change it)"
    )
    iterations = (
        (str(max_iterations), "--max-iterations")
        if max_iterations
        else (str(b.iterations), "the contract's `Iterations:`")
    )
    ceiling = (
        (str(b.ceiling), f"the contract: {b.ceiling_reason or 'lowered'}")
        if b.ceiling is not None
        else (str(DEFAULT_CEILING), "relay's default; the contract may raise it with a reason")
    )
    wall = (
        (f"{wall_clock:.0f}s", "--wall-clock")
        if wall_clock
        else (b.wall_clock or "none", "the contract's `Wall clock:`")
    )
    found = [
        Bound("Iterations", *iterations),
        Bound("Iteration ceiling", *ceiling),
        Bound("Wall clock", *wall),
        Bound("Retries per failure", str(b.retries), "the contract"),
        Bound("Maker timeout", b.maker_timeout, "the contract"),
        Bound("Gate timeout", b.gate_timeout, "the contract"),
        Bound("Checker timeout", b.checker_timeout, "the contract"),
        Bound("Trial wall clock", b.trial, "the contract"),
        Bound("Metric runs", metric_runs_said(b.runs()), runs_source),
        *(
            Bound(f"Metric runs of {goal}", metric_runs_said(n), "the goal's `Runs:` (--runs)")
            for goal, n in goal_runs
        ),
        Bound("Transient backoff", b.backoff, "the contract; doubled each time"),
        Bound("Transient failures in a row", str(MAX_TRANSIENT), "relay: then it escalates"),
        Bound("Failed passes before a goal is blocked", str(BLOCK_AFTER_PASSES), "relay"),
        Bound(
            "Back to the goal's baseline after",
            f"{REWIND_AFTER} failed attempts in a row on a broken tree",
            "relay",
        ),
        Bound(
            "Usage-limit reset believed within",
            f"{HORIZON.days} days",
            "relay: a later one is an ordinary transient failure",
        ),
        Bound("Output kept", OUTPUT_KEPT, "relay; the gate logs hold the same"),
        Bound("Gate logs kept", f"the last {LOGS_KEPT} runs' folders", "relay; older ones go"),
    ]
    if roles is not None:
        found.append(Bound("Roles", *roles))
    if boundary:
        found.append(Bound("Maker boundary", boundary, BOUNDARY_SOURCE))
        found.append(network_bound(contract, boxed=boundary == "namespaces"))
    if box_users:
        found.append(Bound("Box users", box_users, BOX_USERS_SOURCE))
    return Bounds((*found, *boxes))


def metric_runs_said(runs: int) -> str:
    """A metric's run count as the board says it: one run measures no noise."""
    if runs == 1:
        return "1 of the baseline and 1 of the candidate; noise not measured"
    return f"{runs} of the baseline and {runs} of the candidate, interleaved; medians and spread"


def box_bounds(
    *,
    boxed: bool,
    as_root: bool,
    procs: int,
    tmpfs: str,
    inodes: int,
    file_cap: str,
    total_cap: str,
) -> list[Bound]:
    """What bounds each box and what relay takes from a maker's tree: a root relay's
    boxes' processes, every box's scratch tmpfs (namespaces alone), the file and total
    bounds of a candidate (always)."""
    found = []
    if boxed and as_root:
        found.append(
            Bound("Box processes", f"{procs} each (RLIMIT_NPROC)", "relay; RELAY_BOX_PROCS")
        )
    elif boxed:
        found.append(
            Bound("Box processes", "none set", "relay: a box is the person's own user here")
        )
    if boxed:
        where = "/dev/shm, /var/tmp, HOME, a judge's unseen shares"
        value = f"size={tmpfs},nr_inodes={inodes} each ({where})"
        found.append(Bound("Box scratch tmpfs", value, "relay; RELAY_BOX_TMPFS"))
    found.append(Bound("Candidate file", f"{file_cap} at most", "relay; RELAY_CANDIDATE_FILE_MAX"))
    found.append(
        Bound(
            "Candidate new and resized files",
            f"{total_cap} in all",
            "relay; RELAY_CANDIDATE_TOTAL_MAX",
        )
    )
    return found


def network_bound(contract: Contract, *, boxed: bool) -> Bound:
    """Where the roles' boxes may reach: loopback alone, and out through relay's egress
    proxy to an agent CLI's own API and the hosts the contract lists per role."""
    if not boxed:
        return Bound("Network", "the machine's (env-level only)", "relay: no namespaces here")
    listed = "; ".join(f"{who}: {', '.join(hosts)}" for who, hosts in contract.network)
    value = (
        "each box its own, loopback only; HTTPS out through relay's proxy to an agent CLI's"
        " own API hosts" + (f" and {listed}" if listed else "")
    )
    return Bound("Network", value, "relay; the contract's `## Network access`")
