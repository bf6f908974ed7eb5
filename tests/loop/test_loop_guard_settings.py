"""What relay hands its pytest plugin (the key that signs its verdicts, the canary's token)
is gone before any code of the project runs. The environment carries only the path of a
one-shot file the plugin reads and removes at load; the kernel's copy of the start-up
environment (``/proc/self/environ``, and a child's ``/proc/<ppid>/environ``) holds no key
and no token, in pytest's process, in xdist's workers, in a box and out of one. Code
under test that reads all of it and forges a signed verdict with what it found fails the
gate as tampered; a second pytest in one gate finds the settings taken and says so; a
file no pytest claimed is removed by relay."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from loop_project import CALC, FILES, PY, git

from relay.loop.contract import Gate
from relay.loop.tamper import tampered
from relay.ratchet.guard_run import ENV, pytest_guard
from relay.ratchet.measure import gate_env, head_box, measure

PLAIN = f"{PY} -m pytest -q -p no:cacheprovider"
TAMPERED = "the test run was tampered with"
# what code under test can read of relay's settings: its own and its parent's start-up
# environment, and the file the variable names; one record per process, in the tree
LOOK = """\
import json
import os


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError as error:
        return f"unreadable: {type(error).__name__}"


def look():
    seen = {"self": _read("/proc/self/environ"), "parent": _read(f"/proc/{os.getppid()}/environ")}
    found = None
    for text in (seen["self"], seen["parent"]):
        for entry in text.split("\\0"):
            if entry.startswith("RELAY_PYTEST_GUARD="):
                value = entry.split("=", 1)[1]
                seen["value"] = value
                try:
                    found = json.loads(value)  # the settings themselves
                except ValueError:
                    seen["file"] = _read(value)  # the file that holds them
                    try:
                        found = json.loads(seen["file"])
                    except ValueError:
                        pass
    with open(f"look-{os.getpid()}.json", "w") as out:
        json.dump(seen, out)
    return found if isinstance(found, dict) and "key" in found else None
"""
# ... and with what it found, a clean signed verdict for its own process, then a clean
# exit before any test runs (add is broken: the baseline's test fails)
FORGE = (
    LOOK
    + """

import hashlib
import hmac

_found = look()
if _found is not None:
    _body = json.dumps({
        "pid": os.getpid(), "state": "finished", "token": _found["token"],
        "canary": "failed as it must", "problems": [], "exitstatus": 0,
        "testsfailed": 0, "collected": 1, "worker": "",
    })
    _mac = hmac.new(_found["key"].encode(), _body.encode(), hashlib.sha256).hexdigest()
    _name = os.path.join(_found["folder"], f"{_found['name']}-{os.getpid()}.json")
    with open(_name, "w") as _out:
        _out.write(_body + "\\n" + _mac + "\\n")
os._exit(0)


def add(a, b):
    return 42
"""
)
LOOK_TEST = "def test_look_{}():\n    look()\n    assert add(1, 2) == 3\n\n\n"
LOOKING_TESTS = "from calc import add\nfrom looking import look\n\n\n" + "".join(
    LOOK_TEST.format(n) for n in range(4)
)


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def project(root: Path, files: dict[str, str]) -> Path:
    for name, text in {**FILES, **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def looks(where: Path) -> list[dict[str, str]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(where.glob("look-*.json"))]


def test_no_process_of_a_guarded_run_can_read_the_key_or_the_token(tmp_path: Path) -> None:
    """pytest's process and xdist's workers read their own and their parent's start-up
    environment and the file the variable names: no key, no token, the file gone; the
    run is signed off as honest all the same."""
    tree = project(tmp_path / "calc", {"src/looking.py": LOOK, "tests/test_calc.py": LOOKING_TESTS})
    for extra, processes in (("", 1), ("-p xdist -n 2", 3)):
        command = f"{PLAIN} {extra}".strip()
        with pytest_guard(tmp_path) as guard:
            settings = guard.settings
            assert settings.is_file() and settings.stat().st_mode & 0o777 == 0o600
            env = guard.env(gate_env(None))
            assert env[ENV] == str(settings)  # a path: never the key or the token
            done = subprocess.run(
                command, shell=True, cwd=tree, env=env, capture_output=True, text=True, check=False
            )
            assert done.returncode == 0, done.stdout + done.stderr
            assert not settings.exists()  # read once and removed at load
            files = guard.written()
            keys = guard.keys
        assert len(files) == processes, files
        why = tampered(files, keys, command=command, exit_code=0, timed_out=False,
                       wrote_junit=False, output=done.stdout)  # fmt: skip
        assert why == "", why
        seen = looks(tree)
        assert seen, done.stdout
        for each in seen:
            text = json.dumps(each)
            assert keys.key not in text and keys.token not in text, each
            assert each["value"] == str(settings), each
            assert each["file"] == "unreadable: FileNotFoundError", each
        for path in tree.glob("look-*.json"):
            path.unlink()


def test_code_under_test_that_forges_a_verdict_with_what_it_reads_fails_the_gate(
    tmp_path: Path,
) -> None:
    """The code under test reads the start-up environments and the settings file, signs a
    clean verdict with whatever key it found, and ends the run with a clean exit before
    any test: in a box and out of one, the gate is tampered with."""
    tree = project(tmp_path / "calc", {"src/calc.py": FORGE})
    gates = [Gate("test", PLAIN)]
    got = measure(tree, gates, timeout=120, coverage_report=None, stop_at_failure=False)
    assert got.failure is not None and TAMPERED in got.failure.what, got.failure
    assert "ended before its session finished" in got.failure.what, got.failure
    [seen] = looks(tree)  # the variable names a file that is gone
    assert seen["value"].startswith("/") and seen["file"] == "unreadable: FileNotFoundError"

    for path in tree.glob("look-*.json"):
        path.unlink()
    git("init", "-q", "-b", "main", cwd=tree)
    git("add", "-A", cwd=tree)
    git("-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-qm", "calc", cwd=tree)
    for level in ("", "env"):  # in namespaces where the machine has them; env-level only
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("RELAY_SANDBOX", level)
            with head_box(tree) as box:
                got = measure(box.tree, gates, timeout=120, coverage_report=None,
                              stop_at_failure=False, box=box)  # fmt: skip
                [seen] = looks(box.tree)
        assert got.failure is not None and TAMPERED in got.failure.what, (level, got.failure)
        assert "ended before its session finished" in got.failure.what, got.failure
        assert seen["value"].startswith(str(box.folder)), seen  # the box's own folder
        assert seen["file"] == "unreadable: FileNotFoundError", seen


def test_a_second_pytest_in_one_gate_finds_the_settings_taken_and_a_leftover_goes(
    tmp_path: Path,
) -> None:
    tree = project(tmp_path / "calc", {"src/calc.py": CALC})
    twice = f"{PLAIN} && {PLAIN}"
    got = measure(tree, [Gate("twice", twice)], timeout=120, coverage_report=None,
                  stop_at_failure=False)  # fmt: skip
    assert got.failure is not None, got
    assert "runs pytest more than once" in got.failure.what, got.failure

    (tmp_path / "box").mkdir()
    with pytest_guard(tmp_path / "box") as guard:
        settings = guard.settings
        done = subprocess.run(
            f"{PY} -c 'import sys; sys.exit(3)'", shell=True, env=guard.env(gate_env(None)),
            cwd=tree, check=False,
        )  # fmt: skip
        assert done.returncode == 3 and settings.exists()  # no pytest claimed it
    assert not settings.exists()
