"""Shared fixtures: a REAL `relay hub` process on a free port over a temporary data dir.

Use ``hub`` (one process for the whole session: give each test its own repository name,
e.g. from ``unique``; ``git_hub`` is the same with ``--strict-git``) or ``fresh_hub`` (a
process of its own, for restarts and faults).
Both yield a :class:`HubProcess`:

- ``.url`` — the API base URL (``http://127.0.0.1:PORT``); ``.data_dir`` — its data dir;
- ``.token(login, admin=False)`` — runs ``relay hub token`` and returns the fresh token;
- ``.admin(method, path, body=None)`` — calls an admin endpoint (``/_hub/...``);
- ``.set_faults(spec)``, ``.clear_faults()``, ``.requests()``, ``.reset_requests()``,
  ``.count(method=..., path=..., status=...)`` — faults and request counters;
- ``.stop()`` and ``.restart()`` (same data dir, new port).

``hub_factory(faults=...)`` starts extra hubs (e.g. with ``--faults``), stopped at teardown.
Other suites (the relay, the watchers) reuse these; :func:`start_hub` starts one by hand.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from browser import Browser, chromium
from hypothesis import HealthCheck, settings
from hypothesis.configuration import set_hypothesis_home_dir
from worlds import stop_process

# Hypothesis would otherwise keep its example database and its constants cache in
# ``.hypothesis/`` of the working tree; the examples worth keeping are pinned in the tests.
# No deadline and no "too slow" health check: on a loaded machine (two cores, every test
# file's worker busy) a slow draw is the machine's, not a failure of the code under test.
settings.register_profile(
    "relay-tests",
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("relay-tests")

# A suite started in the background by a shell (`make test &`) inherits SIGINT ignored, and
# every process it starts would too: the Ctrl-C tests would then test nothing of relay's.
# Ctrl-C is restored here, before the workers and the processes under test are started.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True, scope="session")
def _hypothesis_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Point hypothesis's storage at a session temporary directory: the tests write
    nothing outside pytest's temporary directory."""
    home = tmp_path_factory.mktemp("hypothesis")
    set_hypothesis_home_dir(home)
    yield home
    set_hypothesis_home_dir(None)


@pytest.fixture(autouse=True, scope="session")
def _own_data_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The user data directory (where a hub without --data keeps its database and every
    hub leaves its record while it runs, the clones `relay join` remembers for `-R`) is the
    session's own: no test reads or writes the person's."""
    home = tmp_path_factory.mktemp("data-home")
    with _session_env("XDG_DATA_HOME", str(home)):
        yield home


@pytest.fixture(autouse=True, scope="session")
def _own_pytest_temproot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The pytest runs the tests start outside a box (a gate measured in a test's folder)
    keep their temporary folders in the session's own: each such run deletes all but the
    newest three of its root's numbered folders as it ends, and under the machine's shared
    root those were this suite's earlier sessions, whose thousands of files took a gate
    of one second past two minutes to remove. (A box gives pytest its own folder.)"""
    root = tmp_path_factory.mktemp("pytest-temproot")
    with _session_env("PYTEST_DEBUG_TEMPROOT", str(root)):
        yield root


@pytest.fixture(autouse=True, scope="session")
def _pytest_without_installed_plugins() -> Iterator[None]:
    """The pytest runs the tests start (a loop's gates, in a box or not) load no plugin
    installed around this suite (hypothesis, xdist, pytest-timeout): a gate that names one
    loads it itself, and autoloading them cost each such run 0.3 CPU-s, half its time,
    hundreds of runs a suite. (This session's own plugins are loaded already.)"""
    with _session_env("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1"):
        yield


@contextlib.contextmanager
def _session_env(name: str, value: str) -> Iterator[None]:
    """``name`` set to ``value`` in this process's environment (and so its children's) for
    the session, as it was afterwards."""
    import os

    was = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if was is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = was


@pytest.fixture(autouse=True, scope="session")
def _not_in_actions() -> Iterator[None]:
    """The suite runs alike on a CI runner and anywhere else: relay behaves differently in
    a GitHub Actions job (doctor adds a check), so a test that wants that says so itself."""
    import os

    was = os.environ.pop("GITHUB_ACTIONS", None)
    yield
    if was is not None:
        os.environ["GITHUB_ACTIONS"] = was


@pytest.fixture(autouse=True)
def _own_sigterm() -> Iterator[None]:
    """relay.cli.main run in the test's process (an in-process verb, a hub's token) sets a
    SIGTERM handler of its own: each test leaves the process's handler as it found it."""
    handler = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, handler)


@pytest.fixture(autouse=True)
def _fresh_keyring() -> None:
    """keyring picks its backend once a process (PYTHON_KEYRING_BACKEND read then): a verb
    run in the test's process left the choice of an earlier test's environment, where a
    relay process reads its own."""
    import sys

    core = sys.modules.get("keyring.core")
    if core is not None:
        core._keyring_backend = None  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """A real headless Chromium (from the OS packages; `make tools` installs it)."""
    if chromium() is None:
        pytest.skip("no chromium on PATH: `make tools` installs it (apt-get install chromium)")
    found = Browser(tmp_path_factory.mktemp("chromium"))
    yield found
    found.close()


_counter = itertools.count(1)


def relay_command(*args: str) -> list[str]:
    """argv running the `relay` CLI with this interpreter (no installed script needed)."""
    return [sys.executable, "-m", "relay.cli", *args]


@dataclass
class HubProcess:
    """A running `relay hub` subprocess and helpers to drive it."""

    data_dir: Path
    faults: str = ""
    # The suites create content far faster than GitHub's secondary limit (80 a minute)
    # allows; a test of that limit starts a hub of its own with the default.
    content_limit: str = "0/0"
    # ``--app-user`` (GET /user answers an App's token, where GitHub answers 403); relay
    # no longer needs it, so no hub of the suites passes it
    app_user: bool = False
    # The API suites make refs at shas no git holds, as a client of an API-only hub may (a
    # remote elsewhere); the end-to-end suites use ``git_hub``, whose refs are git's.
    api_only: bool = True
    extra: tuple[str, ...] = ()  # more `relay hub` options
    url: str = ""
    proc: subprocess.Popen[str] | None = None
    admin_token: str = ""
    log: Path = field(init=False)

    def __post_init__(self) -> None:
        self.log = self.data_dir.parent / f"{self.data_dir.name}.log"

    def start(self) -> HubProcess:
        """Start the process and read the base URL from its first line."""
        argv = relay_command("hub", "--port", "0", "--data", str(self.data_dir))
        if self.faults:
            argv += ["--faults", self.faults]
        argv += ["--content-limit", self.content_limit]
        argv += ["--app-user"] if self.app_user else []
        argv += ["--api-only"] if self.api_only else []
        argv += list(self.extra)
        with self.log.open("a") as err:
            self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, text=True)
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline()
        scheme = "https://" if "https://" in first else "http://"  # https: `relay hub --tls`
        if scheme not in first:
            self.stop()
            raise RuntimeError(f"hub did not start: {first!r}; log: {self.log.read_text()}")
        self.url = first[first.index(scheme) :].split()[0]
        if not self.admin_token:
            self.admin_token = self.token("hub-admin", admin=True)
        return self

    def stop(self) -> None:
        """Stop the process (SIGTERM, then kill if it lingers)."""
        if self.proc is None:
            return
        stop_process(self.proc)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self.proc = None

    def restart(self) -> HubProcess:
        """Stop and start again on the same data directory."""
        self.stop()
        return self.start()

    def token(self, login: str, *, admin: bool = False) -> str:
        """A fresh token for ``login`` from `relay hub token` (creating the user if new),
        run in this process: a setup step every hub and world takes, where a process would
        cost its start-up each time (tests/hub runs the verb as a process)."""
        import contextlib
        import io

        from relay.cli import main

        argv = ["hub", "token", login, "--data", str(self.data_dir)]
        argv += ["--admin"] if admin else []
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(argv)
        assert status == 0, f"relay hub token {login} -> {status}: {err.getvalue()}"
        return out.getvalue().strip()

    def admin(self, method: str, path: str, body: Any = None) -> Any:
        """Call an admin endpoint and return its JSON (None for 204)."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"token {self.admin_token}"}
        req = urllib.request.Request(f"{self.url}{path}", data, headers, method=method)
        with urllib.request.urlopen(req, timeout=10) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    def set_faults(self, spec: str) -> dict[str, Any]:
        """Replace the hub's faults (see `relay hub --help`)."""
        result: dict[str, Any] = self.admin("POST", "/_hub/faults", {"spec": spec})
        return result

    def clear_faults(self) -> None:
        """No more faults."""
        self.admin("DELETE", "/_hub/faults")

    def requests(self) -> list[dict[str, Any]]:
        """Counted requests: ``[{"method", "path", "status", "count"}]``."""
        rows: list[dict[str, Any]] = self.admin("GET", "/_hub/requests")["requests"]
        return rows

    def reset_requests(self) -> None:
        """Zero the request counters."""
        self.admin("DELETE", "/_hub/requests")

    def count(
        self, *, method: str | None = None, path: str | None = None, status: int | None = None
    ) -> int:
        """How many requests matched all the given criteria."""
        return sum(
            r["count"]
            for r in self.requests()
            if (method is None or r["method"] == method)
            and (path is None or r["path"] == path)
            and (status is None or r["status"] == status)
        )


def start_hub(data_dir: Path, *, faults: str = "", **options: Any) -> HubProcess:
    """Start a hub on a free port over ``data_dir``; the caller must ``stop()`` it
    (``options``: other :class:`HubProcess` fields, e.g. ``content_limit="80/500"``)."""
    return HubProcess(data_dir=data_dir, faults=faults, **options).start()


@pytest.fixture(scope="session")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    """One hub for the whole session (share it: use unique repository names)."""
    proc = start_hub(tmp_path_factory.mktemp("hub") / "data")
    yield proc
    proc.stop()


@pytest.fixture(scope="session")
def git_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    """One hub as `relay hub` starts by default: every repository's refs are its git's
    from the start, as on GitHub. The end-to-end suites (tests/relay, tests/events,
    tests/watchers_e2e) use it as their ``hub``, their remote being its git; the API
    suites keep ``hub``, whose repositories nobody pushes to accept refs at any sha."""
    proc = start_hub(tmp_path_factory.mktemp("git-hub") / "data", api_only=False)
    yield proc
    proc.stop()


@pytest.fixture(scope="session")
def tls_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    """One `relay hub --tls` (HTTPS with its own CA in DATA/tls/ca.pem), refs its git's: a
    GitHub Enterprise Server's shape, its API also at ``URL/api/v3`` (gh, relay --api)."""
    proc = start_hub(tmp_path_factory.mktemp("tls-hub") / "data", api_only=False, extra=("--tls",))
    yield proc
    proc.stop()


@pytest.fixture
def fresh_hub(tmp_path: Path) -> Iterator[HubProcess]:
    """A hub of the test's own (for restarts, faults and counters)."""
    proc = start_hub(tmp_path / "data")
    yield proc
    proc.stop()


@pytest.fixture
def unique() -> str:
    """A name no other test in this session uses (for repositories and logins)."""
    return f"t{next(_counter)}"


@pytest.fixture
def hub_factory(tmp_path: Path) -> Iterator[Callable[..., HubProcess]]:
    """``hub_factory(faults="", **options)`` starts more hubs (each on its own data dir;
    ``options`` as for :func:`start_hub`); all are stopped at the end of the test."""
    started: list[HubProcess] = []

    def factory(*, faults: str = "", **options: Any) -> HubProcess:
        proc = start_hub(tmp_path / f"data{len(started)}", faults=faults, **options)
        started.append(proc)
        return proc

    yield factory
    for proc in started:
        proc.stop()


_SCHED = Path(__file__).resolve().parent / "schedulers"


def _scheduler_fixtures() -> object:
    """The scheduler suite's conftest as a module (its helpers importable first)."""
    import importlib.util

    if str(_SCHED) not in sys.path:
        sys.path.insert(0, str(_SCHED))
    spec = importlib.util.spec_from_file_location("_sched_conftest", _SCHED / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The one crontab fixture, the scheduler suite's own (tests/schedulers/conftest.py), for
# every suite that touches a crontab: the stand-in unless CI or RELAY_TEST_CRONTAB=1 asks
# for the user's real table (then saved byte for byte and restored under a shared lock).
real_crontab = getattr(_scheduler_fixtures(), "real_crontab")  # noqa: B009


# The files that take longest start first: the suite runs one file per worker at a time
# (`--dist loadfile`, `--no-loadscope-reorder` so that xdist keeps this order), so a slow
# file handed out last would run alone at the end while the other workers wait. Ordered
# by each file's wall time in a whole run on 2 cores (mostly waits on hubs and passes);
# the rest keep their order.
SLOW_FIRST = (
    "relay/test_relay_trust.py",
    "relay/test_relay_seed.py",
    "relay/test_relay_soak.py",
    "watchers_e2e/test_watchers_e2e_review.py",
    "relay/test_relay_own_tree.py",
    "relay/test_relay_hardening.py",
    "loop/test_loop_parallel.py",
    "protocol/test_protocol_interleavings.py",
    "watchers_e2e/test_watchers_e2e_doctor.py",
    "relay/test_relay_demo.py",
    "events/test_events_actions.py",
    "relay/test_relay_attack_review.py",
    "relay/test_relay_ctrl_c.py",
    "loop/test_loop_node_maker.py",
    "loop/test_loop_node_makers_two.py",
    "relay/test_relay_cli_habits.py",
    "relay/test_relay_controller.py",
    "relay/test_relay_newcomer_errors.py",
    "loop/test_loop_ratchet.py",
    "events/test_events_bench.py",
    "watchers_e2e/test_watchers_e2e_cron.py",
    "events/test_events_webhook_e2e.py",
    "relay/test_relay_watch.py",
    "loop/test_loop_third_party.py",
    "loop/test_loop_verify_on.py",
    "relay/test_relay_bad_inputs.py",
    "loop/test_loop_red_baseline.py",
    "relay/test_relay_setup.py",
    "loop/test_loop_guards.py",
    "watchers_e2e/test_watchers_e2e_join.py",
    "loop/test_loop_unattended.py",
    "loop/test_loop_agents.py",
)
WORLDS_FIRST = ("loop", "relay", "watchers_e2e", "events", "hub", "edges", "watchers")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Order the files slowest first (see SLOW_FIRST); tests within a file keep theirs."""

    def weight(item: pytest.Item) -> tuple[int, int]:
        path = item.path.as_posix()
        named = next((i for i, f in enumerate(SLOW_FIRST) if path.endswith(f)), None)
        if named is not None:
            return (0, named)
        folder = item.path.parent.name
        return (1, WORLDS_FIRST.index(folder) if folder in WORLDS_FIRST else len(WORLDS_FIRST))

    items.sort(key=weight)
