"""Every verb fences the clone it works on: relay's own process never runs a program from a
folder of that clone (a kept ``bin/git`` the person's PATH names) nor imports a module from
it (a ``src/`` on the PYTHONPATH holding an optional module a library tries), while a
signed TASK's steps keep the PATH as it was.

Each check runs the installed `relay` command as a process, in the clone, with the clone's
``bin`` first on the PATH and ``src`` on the PYTHONPATH, offline against the session's hub.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from worlds import Node, World

ROOT = Path(__file__).resolve().parents[2]

# GitPython's gitdb tries `from gitdb_speedups._perf import ...` at import (not installed)
KEPT_MODULE = "gitdb_speedups"


def plant(clone: Path, marks: Path) -> None:
    """What a maker could have written and relay kept: a ``bin/git`` that marks ``marks``
    and runs the real git, and ``src/gitdb_speedups/_perf.py`` that marks it on import."""
    real = shutil.which("git")
    assert real is not None
    git = clone / "bin" / "git"
    git.parent.mkdir(exist_ok=True)
    git.write_text(f'#!/bin/sh\necho "git $*" >> {marks}\nexec {real} "$@"\n')
    git.chmod(0o755)
    package = clone / "src" / KEPT_MODULE
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "_perf.py").write_text(
        f"with open({str(marks)!r}, 'a') as f:\n    f.write('imported _perf\\n')\n"
    )


def relay_command() -> list[str]:
    """The installed `relay` command (the console script), else the module with ``-P``."""
    script = Path(sys.executable).parent / "relay"
    return [str(script)] if script.is_file() else [sys.executable, "-P", "-m", "relay.cli"]


def run_in(node: Node, *args: str, repo_dir: bool = False) -> subprocess.CompletedProcess[str]:
    """`relay ARGS` in ``node``'s clone, its ``bin`` first on the PATH and ``src`` (as the
    person typed it: relative) on the PYTHONPATH."""
    clone = node.clone
    path = os.pathsep.join([str(clone / "bin"), os.environ.get("PATH", "")])
    env = node.env(PATH=path, PYTHONPATH="src")
    where = ["--repo-dir", str(clone)] if repo_dir else []
    return subprocess.run(
        [*relay_command(), *args, *where],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_no_verb_runs_a_kept_git_or_imports_a_kept_module(world: World, tmp_path: Path) -> None:
    worker = world.worker
    marks = tmp_path / "marks"
    plant(worker.clone, marks)
    # the planted pair works: the person's own shell finds both (this test can fail)
    shell = run_in(worker, "--version")
    assert shell.returncode == 0, shell.stderr
    probe = subprocess.run(
        ["git", "--version"],
        env={**os.environ, "PATH": f"{worker.clone / 'bin'}{os.pathsep}{os.environ['PATH']}"},
        capture_output=True,
        check=True,
    )
    assert probe.returncode == 0 and "git --version" in marks.read_text()
    marks.unlink()

    for verb, by_dir in (
        (("status",), False),
        (("nodes",), False),
        (("doctor",), False),
        (("watch", "--once"), False),
        (("status",), True),
        (("watch", "--once"), True),
    ):
        done = run_in(worker, *verb, repo_dir=by_dir)
        assert "Traceback" not in done.stderr, done.stderr
        ran = marks.read_text() if marks.exists() else ""
        assert ran == "", f"relay {' '.join(verb)} (--repo-dir: {by_dir}) ran: {ran}"


def test_relay_keeps_its_own_folder_and_drops_a_handed_one(world: World, tmp_path: Path) -> None:
    """PYTHONPATH naming relay's own folder (as the tests and a developer's clone do) and
    the interpreter's site-packages keeps them; a clone's ``src`` goes, and the step of a
    signed TASK still finds the clone's ``bin`` where the person's PATH put it."""
    worker = world.worker
    marks = tmp_path / "marks"
    plant(worker.clone, marks)
    out = tmp_path / "path.json"
    code = (
        "import json, os, sys\n"
        "from relay.edges.ownpath import fence_start, box_environ\n"
        "fence_start(None)\n"
        f"json.dump({{'sys_path': sys.path, 'path': os.environ['PATH'],"
        f" 'box_path': box_environ()['PATH']}}, open({str(out)!r}, 'w'))\n"
    )
    site = [p for p in sys.path if p.endswith("site-packages")]
    bin_dir = str(worker.clone / "bin")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), "src", *site]),
        "PATH": os.pathsep.join([bin_dir, os.environ["PATH"]]),
    }
    subprocess.run([sys.executable, "-c", code], cwd=worker.clone, env=env, check=True, timeout=60)
    found = json.loads(out.read_text())
    assert str(ROOT) in found["sys_path"]
    assert all(p in found["sys_path"] for p in site)
    clone = str(worker.clone.resolve())
    assert [p for p in found["sys_path"] if p in ("", "src") or p.startswith(clone)] == []
    assert bin_dir not in found["path"].split(os.pathsep)
    assert found["box_path"].split(os.pathsep)[0] == bin_dir


@pytest.mark.parametrize("where", ["home", "root"])
def test_a_folder_outside_every_clone_is_never_fenced_whole(where: str, tmp_path: Path) -> None:
    """Run from the home folder or ``/`` (no work tree), relay keeps the PATH it was given."""
    cwd = tmp_path if where == "home" else Path("/")
    code = (
        "import os\n"
        "before = os.environ['PATH']\n"
        "from relay.edges.ownpath import fence_start\n"
        "fence_start(None)\n"
        "assert os.environ['PATH'] == before, os.environ['PATH']\n"
    )
    inside = tmp_path / "bin"
    inside.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env["PATH"] = os.pathsep.join([str(inside), env["PATH"]])
    subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, check=True, timeout=60)
