"""The pytest plugin relay loads into a gate's pytest (``-p``, before any conftest or test
module is imported): it keeps code under test from switching pytest's verdicts off.

relay copies this file, under a random module name, into a read-only folder outside the
judged tree and names it in the gate's environment; it imports nothing of relay's (it runs
in the project's interpreter). Without ``RELAY_PYTEST_GUARD`` in the environment (a pytest
that a test starts) it does nothing. With it, it removes the variable from the process's
environment at load, reads relay's settings from the one-shot file the variable names and
removes that file, before any conftest or test module is imported: the environment (and
the kernel's copy of it, ``/proc/<pid>/environ``, which keeps what ``os.environ`` lost)
never holds the key or the token, only the path of a file that is gone. A second pytest
started with the same environment (two in one gate) finds the file gone and refuses to
run. xdist's workers get the settings from their main process in ``workerinput`` (sent
over xdist's own channel, never in an environment or a file), and the main process's
verdict names each worker it handed them to. Then it:

- records what pytest and pluggy define (each function and class attribute, each
  function's code) and every plugin registered, with where it was registered from; at the
  session's end anything replaced, a hook implementation added behind pluggy's back, a
  plugin registered by the code under test (not a test, a conftest.py or a test helper:
  relay's re-run takes those from the baseline) or one of pytest's own plugins
  unregistered is tampering;
- runs a canary test with a random name (among the session's items while it runs) under
  the session before the first test, and under each test folder's first module that no
  mark of its own skips, xfails or re-runs just before that module's first test runs in
  this process (every conftest.py above that folder's tests hooks into its run as into
  theirs; what the two share stays set up, as between two tests), through pytest's own run
  functions but reported nowhere (not in the output, the counts or any JUnit report): it
  must fail with a random token, else pytest's runs were switched off. A canary a hook
  skips or fails in its setup (a folder that needs a database) leaves a folder to its
  next module, and no test of that module (of the session, for the session's) may pass;
- keeps each test's report as pytest made it (its own wrappers of the call and of the
  report run before any conftest's that is not tryfirst): a report changed before it is
  logged, or a call that raised reported as passed, is tampering (a conftest.py that
  rewrites every report but the canary's is seen so; one that also wraps the call inside
  relay's wrappers is not);
- names the tests reported failed in its verdict (up to ``FAILED_CAP``): a JUnit report
  rewritten after pytest wrote it cannot say they passed;
- writes a signed verdict (an HMAC of relay's key) to a file in a folder only relay knows,
  once at load ("started") and again at the session's end: a run cut short at import
  (``os._exit``) leaves only the first.

Code under test runs in the same process and can in principle find and undo any of this;
the plugin raises the cost of tampering and makes the usual ways of it visible.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import importlib
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

ENV = "RELAY_PYTEST_GUARD"
CANARY_OK = "failed as it must"  # the canary's one good end (relay.loop.tamper reads it)

# what pytest and pluggy run a test and report it with: every function and class
# attribute of these modules is recorded at load and compared at the session's end
WATCHED = (
    "_pytest.runner",
    "_pytest.reports",
    "_pytest.python",
    "_pytest.main",
    "_pytest.nodes",
    "_pytest.terminal",
    "_pytest.junitxml",
    "_pytest.skipping",
    "_pytest.outcomes",
    "_pytest.unittest",
    "_pytest.fixtures",
    "_pytest.config",
    "pluggy._hooks",
    "pluggy._manager",
    "pluggy._callers",
)
# pytest's own plugins that count and report outcomes: unregistering one is tampering
CORE_PLUGINS = frozenset(
    {"_pytest.runner", "_pytest.python", "_pytest.main", "_pytest.reports", "_pytest.skipping"}
)
CORE_TYPES = ("Session", "TerminalReporter", "LogXML")

_MISSING = object()
_CANARY = "def canary():\n    raise AssertionError(token)\n"


RERUN = ("failed", "rerun")  # what pytest-rerunfailures does to a report it runs again
FAILED_CAP = 200  # failed tests a verdict names (a JUnit report must not say they passed)
WORKER_KEY = "relay_pytest_guard"  # in xdist's workerinput: the settings, for a worker
TAKEN = "relay's pytest guard settings were already taken: this gate runs pytest more than once"
SETTINGS_CAP = 64 * 1024


def _claim(path: str) -> str | None:
    """The settings relay wrote to ``path``, read once: the file is removed before it is
    read (a regular file only; None when it is gone or is none)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        with contextlib.suppress(OSError):
            os.unlink(path)  # gone before any of the project's code runs
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = b""
        while len(data) < SETTINGS_CAP:
            chunk = os.read(fd, SETTINGS_CAP - len(data))
            if not chunk:
                break
            data += chunk
        return data.decode("utf-8", errors="replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def _from_xdist() -> str | None:
    """In an xdist worker: the settings its main process put in ``workerinput``, taken out
    of it. The plugin is imported while xdist's worker code (run as ``__channelexec__``)
    reads its arguments, before it hands ``workerinput`` to pytest's config."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return None
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__") == "__channelexec__":
            given = frame.f_globals.get("workerinput")
            if isinstance(given, dict):
                raw = given.pop(WORKER_KEY, None)
                return raw if isinstance(raw, str) else None
        frame = frame.f_back  # type: ignore[assignment]
    return None


def _load(raw: str | None) -> dict[str, Any] | None:
    """relay's settings for this process; None when relay set none."""
    if not raw:
        return None
    try:
        settings = json.loads(raw)
    except ValueError:
        return None
    return settings if isinstance(settings, dict) else None


_PATH = os.environ.pop(ENV, None)  # a pytest a test starts runs unguarded
_RAW = _claim(_PATH) if _PATH else _from_xdist()
if _PATH and _RAW is None:
    # another pytest of the same gate took them (or something before pytest did): this
    # run could not be signed off, so it does not run at all
    raise ImportError(f"{TAKEN}; give each pytest run a gate of its own")
_SETTINGS = _load(_RAW)


def _sign(key: str, body: str) -> str:
    return hmac.new(key.encode(), body.encode(), hashlib.sha256).hexdigest()


def _snapshot() -> dict[tuple[str, str], tuple[Any, Any]]:
    """Every function and class attribute of the watched modules, and each function's
    code: (module, dotted name) -> (object, code)."""
    found: dict[tuple[str, str], tuple[Any, Any]] = {}
    for name in WATCHED:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        for attr, value in list(vars(module).items()):
            if callable(value) and getattr(value, "__module__", None) == name:
                found[(name, attr)] = (value, getattr(value, "__code__", None))
                if isinstance(value, type):
                    for key, member in list(vars(value).items()):
                        if not callable(member) and not hasattr(type(member), "__get__"):
                            continue  # data, which pytest itself sets (a warning shown)
                        func = getattr(member, "__func__", getattr(member, "fget", member))
                        found[(name, f"{attr}.{key}")] = (member, getattr(func, "__code__", None))
    return found


def _live(key: tuple[str, str]) -> tuple[Any, Any]:
    """What ``key`` (module, dotted name) holds now, and its code; _MISSING when gone."""
    module = sys.modules.get(key[0])
    owner: Any = module
    *path, last = key[1].split(".")
    for part in path:
        owner = vars(owner).get(part, _MISSING) if owner is not None else _MISSING
        if owner is _MISSING:
            return _MISSING, None
    value = vars(owner).get(last, _MISSING) if owner is not None else _MISSING
    func = getattr(value, "__func__", getattr(value, "fget", value))
    return value, getattr(func, "__code__", None)


def _changed(before: dict[tuple[str, str], tuple[Any, Any]]) -> list[str]:
    """What of ``before`` was replaced or removed, or added to a watched class, since."""
    found = []
    for key, (value, code) in before.items():
        now, now_code = _live(key)
        if now is _MISSING:
            found.append(f"{key[0]}.{key[1]} was removed")
        elif now is not value or now_code is not code:
            found.append(f"{key[0]}.{key[1]} was replaced")
    classes = {(m, n.split(".")[0]) for m, n in before if "." in n}
    for key in _snapshot():
        if key not in before and "." in key[1] and (key[0], key[1].split(".")[0]) in classes:
            found.append(f"{key[0]}.{key[1]} was added")
    return found


def _test_or_installed(path: str) -> bool:
    """Whether ``path`` (in the project) is a test (in a tests folder, or named like one,
    a conftest.py included) or an installed package's (a virtualenv in the project)."""
    parts = Path(path).parts
    name = parts[-1]
    if any(p in ("site-packages", "dist-packages") for p in parts):
        return True
    if any(p in ("tests", "test", "__tests__") for p in parts[:-1]):  # as relay's guard reads
        return True
    return name == "conftest.py" or name.startswith("test_") or name.endswith("_test.py")


class Guard:
    """The plugin's state for one pytest process."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.folder = Path(str(settings["folder"]))
        self.name = str(settings["name"])
        self.key = str(settings["key"])
        self.token = str(settings["token"])
        self.canary_name = str(settings["canary"])
        self.raw = json.dumps(settings)  # what xdist's workers are handed
        self.handed: list[str] = []  # the workers handed it
        self.here = os.path.realpath(__file__)
        self.before = _snapshot()
        self.impls: dict[int, tuple[Any, Any]] = {}  # each hook implementation registered
        self.suspect: dict[int, str] = {}  # plugin id -> where in the project it came from
        self.core: dict[int, str] = {}  # pytest's own counting plugins at the start
        self.root = os.path.realpath(os.getcwd())
        self.canary = "did not run"
        self.armed = False  # the session's canary ran: each folder's runs before its tests
        self.folders: set[Path] = set()  # the folders a canary ran in
        # where a hook stopped the canary in its setup (a module's node id; "" for the
        # session): no test there may pass
        self.stopped: set[str] = set()
        self.problems: list[str] = []
        self.hooks: dict[str, Any] = {}
        self.manager: Any = None
        self.collectonly = False
        self.inner: Any = None
        self.made: dict[int, tuple[Any, str]] = {}  # each report as pytest made it, until logged
        self.rewritten: list[str] = []  # reports changed (said after the canary's end)
        self.raised: set[str] = set()  # the tests whose call raised (no skip, no xfail)
        self.failed: set[str] = set()  # the tests reported failed (up to FAILED_CAP)
        self.subfailed: set[str] = set()  # the tests a subtest of which failed
        self.write("started")

    # --- the verdict ---

    def write(self, state: str, **more: Any) -> None:
        body = json.dumps({"pid": os.getpid(), "state": state, "token": self.token, **more})
        path = self.folder / f"{self.name}-{os.getpid()}.json"
        temp = self.folder / f".{self.name}-{os.getpid()}.tmp"
        with contextlib.suppress(OSError):
            temp.write_text(body + "\n" + _sign(self.key, body) + "\n", encoding="utf-8")
            os.replace(temp, path)

    # --- plugins ---

    def registered(self, plugin: object, manager: Any) -> None:
        """Record ``plugin``'s hook implementations, and where in the project (outside a
        conftest.py) the code that registered it lies, if anywhere."""
        if self.manager is None:
            self.manager = manager
            self.inner = getattr(manager, "_inner_hookexec", None)
        for caller in manager.get_hookcallers(plugin) or ():
            for impl in caller.get_hookimpls():
                if impl.plugin is plugin:
                    self.impls[id(impl)] = (impl, impl.function)
        where = self.registered_from()
        if where:
            self.suspect[id(plugin)] = where

    def registered_from(self) -> str:
        """The first frame on the stack in the project's code under test (not its tests
        and their helpers, which relay's re-run takes from the baseline, nor an installed
        package): where a plugin was registered from, if from there."""
        frame = sys._getframe(2)
        while frame is not None:
            file = frame.f_code.co_filename
            if not file.startswith("<"):  # code with no file: execnet's, frozen importlib
                real = os.path.realpath(file)
                inside = real.startswith(self.root + os.sep)
                if inside and real != self.here:
                    where = os.path.relpath(real, self.root)
                    if not _test_or_installed(where):
                        return where
            frame = frame.f_back  # type: ignore[assignment]
        return ""

    def start(self, config: pytest.Config) -> None:
        """What the run starts with (before any conftest or test module is imported)."""
        manager = config.pluginmanager
        self.manager = manager
        self.inner = getattr(manager, "_inner_hookexec", None)
        self.hooks = dict(vars(manager.hook))
        self.before = _snapshot()
        self.collectonly = bool(getattr(config.known_args_namespace, "collectonly", False))
        for plugin in manager.get_plugins():
            name = getattr(plugin, "__name__", "") or type(plugin).__name__
            if name in CORE_PLUGINS or type(plugin).__name__ in CORE_TYPES:
                self.core[id(plugin)] = name

    def hook_problems(self) -> list[str]:
        manager = self.manager
        if manager is None:
            return ["pytest's plugin manager was never seen"]
        found = []
        if getattr(manager, "_inner_hookexec", None) is not self.inner:
            found.append("pluggy's hook runner was replaced")
        now = vars(manager.hook)
        for name, caller in self.hooks.items():
            if now.get(name) is not caller:
                found.append(f"the hook {name} was replaced")
        plugins = {id(p) for p in manager.get_plugins()}
        for ident, name in self.core.items():
            if ident not in plugins:
                found.append(f"pytest's {name} plugin was unregistered")
        for name, caller in now.items():
            for impl in caller.get_hookimpls():
                seen = self.impls.get(id(impl))
                if seen is None or seen[0] is not impl or seen[1] is not impl.function:
                    found.append(f"an implementation of {name} was added behind pytest's back")
                elif id(impl.plugin) in self.suspect:
                    where = self.suspect[id(impl.plugin)]
                    found.append(f"{where} registered a plugin that implements {name}")
        return found

    def hand_over(self, node: Any) -> None:
        """An xdist worker about to start: its settings go in its ``workerinput``."""
        given = getattr(node, "workerinput", None)
        if isinstance(given, dict):
            given[WORKER_KEY] = self.raw
            self.handed.append(str(given.get("workerid", "")))

    # --- the reports ---

    def called(self, item: Any, excinfo: Any) -> None:
        """A test's call ended (seen outside any conftest's wrapper that is not tryfirst):
        whether it raised what fails a test (a skip or an xfail does not)."""
        error = excinfo[1] if excinfo else None
        if error is not None and not isinstance(
            error, (pytest.skip.Exception, pytest.xfail.Exception)
        ):
            self.raised.add(str(item.nodeid))

    def made_report(self, item: Any, call: Any, report: Any) -> None:
        """A test's report as pytest's run made it (outside any conftest's wrapper that is
        not tryfirst): a call that raised is no pass, nor one in a module whose canary a
        hook skipped, and the outcome must reach the report's readers (the terminal,
        JUnit) as made here. A failed one is named in the verdict (relay holds the JUnit
        report to it) until its test's call passes."""
        node = str(report.nodeid)
        if node.rpartition("::")[2] == self.canary_name:
            return  # the canary's end is judged on its own
        outcome = str(getattr(report, "outcome", ""))
        if getattr(call, "when", "") == "call":
            raised = call.excinfo is not None or node in self.raised
            self.raised.discard(node)
            if raised and outcome == "passed":
                self.rewritten.append(f"the report of {node}, whose call raised, says passed")
            module = item.getparent(pytest.Module)
            where = {"", str(module.nodeid) if module is not None else ""}
            if outcome == "passed" and where & self.stopped:
                self.rewritten.append(
                    f"{node} passed, but a hook stopped relay's canary in its setup there"
                )
        if report.failed and len(self.failed) < FAILED_CAP:
            self.failed.add(node)
        self.made[id(report)] = (report, outcome)

    def logged(self, report: Any) -> None:
        """A report about to be read: changed since it was made is tampering, but a failed
        one marked for a re-run (pytest-rerunfailures' "rerun": the test runs again, and
        stays named failed in the verdict unless its call then passes). A test a subtest
        of which failed stays named failed (its own report is made failed when shown)."""
        node, outcome = str(report.nodeid), str(report.outcome)
        made = self.made.pop(id(report), None)
        if made is None:  # made in an xdist worker, which judges it there
            if report.failed and len(self.failed) < FAILED_CAP:
                self.failed.add(node)
        elif made[0] is report and made[1] != outcome and (made[1], outcome) != RERUN:
            self.rewritten.append(
                f"the report of {node} was changed from {made[1]} to {outcome} after pytest made it"
            )
        if "subtest" in type(report).__name__.lower():  # one of the test's subtests
            if report.failed:
                self.subfailed.add(node)
        elif getattr(report, "when", "") == "call" and outcome == "passed":
            # (a test a subtest of which failed: pytest fails it later, when it is shown)
            self.failed -= {node} - self.subfailed

    # --- the canary ---

    def loop_starts(self, session: pytest.Session) -> None:
        """Before the first test: the canary runs (unless no test will)."""
        option = session.config.option
        if bool(option.collectonly) != self.collectonly:
            self.problems.append("pytest was switched to collecting only")
        if option.collectonly or (session.testsfailed and not option.continue_on_collection_errors):
            self.canary = "not needed (no test runs)"
        else:
            # torn down whole: an xdist worker runs the tests it is sent, in no order
            # known here (each folder's canary runs before its first test, below)
            found = self.run_canary(session, self.canary_item(session), None)
            if found == STOPPED:  # a conftest.py that skips every test where a need is unmet
                self.stopped.add("")
            self.canary = CANARY_OK if found == STOPPED else found
            self.armed = True

    def test_starts(self, item: pytest.Item) -> None:
        """Before a test: the canary runs under its module, if none ran in its folder yet
        and its module's own marks skip, xfail or re-run nothing (the hooks of every
        conftest.py above the folder apply to it as to the test), as if the test came
        next: what the two share stays set up, as pytest leaves it between two tests. A
        canary a hook skips or fails in its setup (a conftest.py that skips what needs a
        database) leaves the folder to its next module; the module's tests must not pass."""
        module = item.getparent(pytest.Module)
        if not self.armed or module is None or module.path.parent in self.folders:
            return
        if str(module.nodeid) in self.stopped or any(
            mark.name in _SKIPPING for mark in module.own_markers
        ):
            return
        found = self.run_canary(item.session, self.canary_item(module), item)
        if found == STOPPED:
            self.stopped.add(str(module.nodeid))
            return
        self.folders.add(module.path.parent)
        if found != CANARY_OK and self.canary == CANARY_OK:
            self.canary = found

    def canary_item(self, parent: pytest.Session | pytest.Module) -> pytest.Function:
        """The canary test under ``parent``: it fails with the token."""
        token = self.token
        # a function of no file: the report of its failure reads no source (a function of
        # this module had pytest parse the whole module to show its two lines, a third of
        # what the plugin adds to a gate's pytest)
        scope: dict[str, Any] = {"token": token}
        exec(compile(_CANARY, "<relay's canary>", "exec"), scope)
        canary = scope["canary"]
        canary.__name__ = self.canary_name
        item = pytest.Function.from_parent(parent, name=self.canary_name, callobj=canary)
        item.fixturenames = []  # none of the project's fixtures, autouse ones included
        return item

    def run_canary(self, session: pytest.Session, item: pytest.Function, following: Any) -> str:
        """Run the canary ``item`` through pytest's own run functions, reported nowhere
        (``following``: the item that runs next): how it ended, which must be failing with
        the token (CANARY_OK)."""
        from _pytest.runner import runtestprotocol

        # among the session's items while it runs, as every test is: a hook that rewrites
        # only the reports of the session's items rewrites the canary's too
        session.items.insert(0, item)
        try:
            reports = runtestprotocol(item, log=False, nextitem=following)
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # pytest's outcomes are BaseExceptions: a finding
            return f"raised {type(error).__name__}"
        finally:
            if session.items and session.items[0] is item:
                del session.items[0]
            else:
                self.problems.append("the session's items were changed under the canary")
        calls = [r for r in reports if getattr(r, "when", "") == "call"]
        setup = [r for r in reports if getattr(r, "when", "") == "setup"]
        if not calls and setup and (setup[0].skipped or setup[0].failed):
            return STOPPED
        if not calls:
            return "did not run"
        if not calls[0].failed:
            return str(calls[0].outcome)
        if self.token not in str(calls[0].longrepr):
            return "failed without its token"
        return CANARY_OK

    def finish(self, session: pytest.Session, exitstatus: int) -> None:
        problems = [*self.problems, *_changed(self.before), *self.hook_problems()]
        self.write(
            "finished",
            canary=self.canary,
            problems=problems[:20],
            rewritten=self.rewritten[:20],
            failed=sorted(self.failed),
            exitstatus=int(exitstatus),
            testsfailed=int(getattr(session, "testsfailed", 0)),
            collected=len(getattr(session, "items", ()) or ()),
            worker=os.environ.get("PYTEST_XDIST_WORKER", ""),
            handed=self.handed,
        )


# a module's own marks that would make the canary skip, xfail or re-run there (honestly)
_SKIPPING = frozenset({"skip", "skipif", "xfail", "flaky"})
STOPPED = "stopped in its setup"  # a hook skipped or failed the canary's setup


GUARD = Guard(_SETTINGS) if _SETTINGS is not None else None


if GUARD is not None:
    _guard = GUARD

    @pytest.hookimpl(tryfirst=True)
    def pytest_plugin_registered(plugin: object, manager: Any) -> None:
        _guard.registered(plugin, manager)

    def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
        # after pytest's own early patches (tryfirst), before the conftests (trylast)
        _guard.start(early_config)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtestloop(session: pytest.Session) -> Any:
        _guard.loop_starts(session)
        yield

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_protocol(item: pytest.Item, nextitem: Any) -> Any:
        _guard.test_starts(item)
        yield

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_call(item: pytest.Item) -> Any:
        called = yield
        _guard.called(item, called.excinfo)

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Any:
        made = yield
        with contextlib.suppress(BaseException):
            _guard.made_report(item, call, made.get_result())

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(report: Any) -> None:
        _guard.logged(report)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(node: Any) -> None:
        # xdist (main process): a worker is set up
        _guard.hand_over(node)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
        _guard.finish(session, exitstatus)
