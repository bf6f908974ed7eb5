"""Relay's compiled files for a judged tree (relay/ratchet/bytecode.py): what a gate's run
imported is learned from the names of the compiled files it wrote, the next judged tree of
the project gets them from relay's cache before that gate runs (compiled by relay from the
commit's blobs, hash-checked), and Python loads them only where the source beside them is
the one they were compiled from. Nothing is written through a link, over an existing
file, or for a path the commit does not hold as a Python file; a source whose compiling
warns is left to the gate, and a gate's first run (which writes compiled files) touches no
folder of the tree; on a real repository and a real interpreter."""

from __future__ import annotations

import importlib.util
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pytest
from loop_project import PY, TEST_GATE, Project, make_project

from relay.edges.worktree import WorkTree
from relay.loop.checks import PYCACHE
from relay.ratchet.bytecode import (
    SUFFIX,
    TAG,
    Primer,
    by_folder,
    learned_now,
    sources_left,
)
from relay.ratchet.measure import tree_state

pytestmark = pytest.mark.skipif(not TAG, reason="this interpreter keeps no compiled files")

COMMAND = "python -m pytest -q"


def test_the_sources_a_run_read_are_its_plain_compiled_files_names() -> None:
    names = [
        f"calc{SUFFIX}",
        f"calc.{TAG}.opt-1.pyc",  # optimised: another run's kind
        f"test_calc.{TAG}-pytest-8.3.2.pyc",  # pytest's rewritten test
        "notes.txt",
        SUFFIX,  # no stem
    ]
    assert sources_left("src/pkg", names) == ["src/pkg/calc.py"]
    assert sources_left("", [f"setup{SUFFIX}"]) == ["setup.py"]


def test_what_a_command_reads_is_kept_in_order_and_only_the_commits_own_files() -> None:
    sources = {"a.py": "1" * 40, "pkg/b.py": "2" * 40, "pkg/c.py": "3" * 40}
    seen = ["pkg/c.py", "../../etc/x.py", "gone.py", "a.py"]
    assert learned_now(["pkg/b.py"], seen, sources) == ["pkg/b.py", "a.py", "pkg/c.py"]
    assert by_folder(["a.py", "pkg/b.py", "pkg/c.py"]) == {"": ["a.py"], "pkg": ["b.py", "c.py"]}


def _repo(root: Path, files: dict[str, str]) -> tuple[WorkTree, str]:
    from relay.edges.git import Clone, LocalRepo

    root.mkdir(parents=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    for args in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "t"],
    ):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, check=True, capture_output=True, text=True
    ).stdout.strip()
    return WorkTree(Clone(LocalRepo(root))), head


def _checkout(repo: Path, into: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(repo), str(into)], check=True, capture_output=True)
    return into


def _import(tree: Path, module: str) -> str:
    """What ``module`` says of itself, imported in a fresh interpreter in ``tree`` that
    writes no compiled file (so only relay's can be loaded)."""
    code = (
        f"import sys, importlib.util; sys.path.insert(0, '.'); import {module} as m; print(m.WHO)"
    )
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONVERBOSE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip() + "\n" + done.stderr


def _accept_z(n: int) -> str:
    """A goal's acceptance: ``calc`` has ``Z<n>``."""
    code = "import sys; sys.path.insert(0, 'src'); import calc;"
    code += f" sys.exit(not hasattr(calc, 'Z{n}'))"
    return f"{PY} -c {shlex.quote(code)}"


def _kept_one_goal(project: Project) -> list[str]:
    """One goal (``calc`` gets ``Z1``) added and run by a maker that adds it: the goals kept."""
    assert project.loop("goal", "add", "Goal 1", "--accept", _accept_z(1)).data == {"goal": "G1"}
    maker = project.script(
        "maker", "put('src/calc.py', pathlib.Path('src/calc.py').read_text() + 'Z1 = 1\\n')\n"
    )
    ran = project.loop("run", "--maker", maker)
    return [k["goal"] for k in ran.data["kept"]]


def test_a_learned_gate_gets_relays_checked_compiled_files_and_python_uses_them(
    tmp_path: Path,
) -> None:
    files = {"pkg/__init__.py": "WHO = 'first'\n", "pkg/util.py": "X = 1\n", "README": "r\n"}
    tree, head = _repo(tmp_path / "repo", files)
    work = tmp_path / "work"
    primer = Primer(work, tree.python_sources(head), tree.blobs)
    assert set(primer.sources) == {"pkg/__init__.py", "pkg/util.py"}

    # a run that wrote pkg/__init__'s compiled file (and a forged name) teaches the command
    first = _checkout(tmp_path / "repo", tmp_path / "first")
    (first / "pkg" / PYCACHE).mkdir()
    (first / "pkg" / PYCACHE / f"__init__{SUFFIX}").write_bytes(b"not read")
    (first / "pkg" / PYCACHE / f"elsewhere{SUFFIX}").write_bytes(b"no such source")
    listed = ["pkg/__init__.py", "pkg/util.py", "README"]
    primer.learn(first, COMMAND, tree_state(first, listed))
    assert primer.prime(first, "another command") == 0

    # the next tree of the commit gets relay's compiled file before the gate runs
    second = _checkout(tmp_path / "repo", tmp_path / "second")
    assert primer.prime(second, COMMAND) == 1
    written = second / "pkg" / PYCACHE / f"__init__{SUFFIX}"
    data = written.read_bytes()
    assert data[:4] == importlib.util.MAGIC_NUMBER
    assert int.from_bytes(data[4:8], "little") == 0b11  # hash-based, checked
    assert primer.compiled == 1 and primer.primed == 1
    said = _import(second, "pkg")
    assert said.startswith("first\n")
    assert f"matches {second / 'pkg' / '__init__.py'}" in said, said  # loaded, not compiled

    # a source changed in the tree is compiled again: the compiled file is not its
    (second / "pkg" / "__init__.py").write_text("WHO = 'changed'\n")
    said = _import(second, "pkg")
    assert said.startswith("changed\n"), said

    # a third tree is primed from the cache: nothing compiled again, nothing overwritten
    third = _checkout(tmp_path / "repo", tmp_path / "third")
    (third / "pkg" / PYCACHE).mkdir()
    kept = third / "pkg" / PYCACHE / f"__init__{SUFFIX}"
    kept.write_bytes(b"already here")
    assert primer.prime(third, COMMAND) == 0
    assert kept.read_bytes() == b"already here"
    assert primer.compiled == 1


def test_nothing_is_written_through_a_link_put_in_a_folders_place(tmp_path: Path) -> None:
    tree, head = _repo(tmp_path / "repo", {"src/calc.py": "WHO = 1\n"})
    primer = Primer(tmp_path / "work", tree.python_sources(head), tree.blobs)
    first = _checkout(tmp_path / "repo", tmp_path / "first")
    (first / "src" / PYCACHE).mkdir()
    (first / "src" / PYCACHE / f"calc{SUFFIX}").write_bytes(b"x")
    primer.learn(first, COMMAND, tree_state(first, ["src/calc.py"]))

    victim = tmp_path / "victim"
    victim.mkdir()
    second = _checkout(tmp_path / "repo", tmp_path / "second")
    (second / "src").rename(second / "moved")
    (second / "src").symlink_to(victim, target_is_directory=True)
    assert primer.prime(second, COMMAND) == 0
    assert list(victim.iterdir()) == []

    third = _checkout(tmp_path / "repo", tmp_path / "third")
    (third / "src" / PYCACHE).symlink_to(victim, target_is_directory=True)
    assert primer.prime(third, COMMAND) == 0
    assert list(victim.iterdir()) == []


def test_a_source_that_does_not_compile_is_left_to_python(tmp_path: Path) -> None:
    tree, head = _repo(tmp_path / "repo", {"bad.py": "def (:\n", "good.py": "WHO = 2\n"})
    primer = Primer(tmp_path / "work", tree.python_sources(head), tree.blobs)
    first = _checkout(tmp_path / "repo", tmp_path / "first")
    (first / PYCACHE).mkdir()
    for name in ("bad", "good"):
        (first / PYCACHE / f"{name}{SUFFIX}").write_bytes(b"x")
    primer.learn(first, COMMAND, tree_state(first, ["bad.py", "good.py"]))
    second = _checkout(tmp_path / "repo", tmp_path / "second")
    assert primer.prime(second, COMMAND) == 1
    assert sorted(p.name for p in (second / PYCACHE).iterdir()) == [f"good{SUFFIX}"]


def test_the_loops_gates_learn_and_a_later_judged_tree_is_primed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two goals kept one after the other: the first's gates teach relay what they import,
    and the compiled files of the project's module come from relay's cache thereafter."""
    written: list[tuple[str, Path, int]] = []
    prime = Primer.prime

    def counted(self: Primer, where: Path, command: str) -> int:
        got = prime(self, where, command)
        written.append((command, where, got))
        return got

    monkeypatch.setattr(Primer, "prime", counted)
    project = make_project(tmp_path, accept=None, retries=0, gates=(TEST_GATE,))
    for n in (1, 2):
        added = project.loop("goal", "add", f"Goal {n}", "--accept", _accept_z(n))
        assert added.data == {"goal": f"G{n}"}
    maker = project.script(
        "maker",
        "n = count('maker')\n"
        "put('src/calc.py', pathlib.Path('src/calc.py').read_text() + f'\\nZ{n} = {n}\\n')\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1", "G2"], ran
    folder = project.root / ".git" / "relay" / "loop" / "bytecode"
    learned = (folder / "learned.json").read_text()
    assert "src/calc.py" in learned, learned
    assert list((folder / TAG).rglob("*.pyc")), "nothing compiled into relay's cache"
    # judged trees got them: the test gate's, learned at the first baseline, in later trees
    assert [c for c, _, n in written if n and c == TEST_GATE], written


def test_a_source_whose_compiling_warns_or_a_stricter_gate_refuses_is_left_to_the_gate(
    tmp_path: Path,
) -> None:
    """A compiled file loaded says nothing of what compiling its source said: a gate run with
    -W error (or PYTHONWARNINGS, or a lower int_max_str_digits) fails on the source as it
    did before relay compiled anything; such a blob is marked and never compiled again."""
    files = {
        "pkg/__init__.py": "",
        "pkg/escape.py": 'PATTERN = "\\d+"\n',  # an invalid escape: compiling it warns
        "pkg/digits.py": f"BIG = {'7' * 1000}\n",  # refused where int_max_str_digits < 1000
        "pkg/plain.py": "WHO = 'plain'\n",
    }
    tree, head = _repo(tmp_path / "repo", files)
    asked: list[str] = []

    def read(shas: Sequence[str]) -> dict[str, bytes]:
        asked.extend(shas)
        return tree.blobs(shas)

    primer = Primer(tmp_path / "work", tree.python_sources(head), read)
    first = _checkout(tmp_path / "repo", tmp_path / "first")
    (first / "pkg" / PYCACHE).mkdir()
    for name in ("escape", "digits", "plain"):
        (first / "pkg" / PYCACHE / f"{name}{SUFFIX}").write_bytes(b"x")
    primer.learn(first, COMMAND, tree_state(first, list(files)))

    second = _checkout(tmp_path / "repo", tmp_path / "second")
    assert primer.prime(second, COMMAND) == 1
    assert sorted(p.name for p in (second / "pkg" / PYCACHE).iterdir()) == [f"plain{SUFFIX}"]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    for module, settings in (
        ("escape", ["-W", "error"]),
        ("digits", ["-X", "int_max_str_digits=640"]),
    ):
        done = subprocess.run(
            [sys.executable, *settings, "-c", f"import pkg.{module}"],
            cwd=second, env=env, capture_output=True, text=True,
        )  # fmt: skip
        assert done.returncode == 1 and "SyntaxError" in done.stderr, (module, done.stderr)
    plain = subprocess.run(
        [sys.executable, "-W", "error", "-c", "import pkg.plain"],
        cwd=second, env={**env, "PYTHONVERBOSE": "1"}, capture_output=True, text=True,
    )  # fmt: skip
    assert f"matches {second / 'pkg' / 'plain.py'}" in plain.stderr, plain.stderr  # relay's

    # the next tree reads no blob again: the plain one is cached, the others marked
    third = _checkout(tmp_path / "repo", tmp_path / "third")
    before = len(asked)
    assert primer.prime(third, COMMAND) == 1
    assert len(asked) == before and primer.compiled == 1


def test_relay_compiles_into_its_cache_from_a_temporary_folder_on_another_file_system(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A /tmp in memory is another file system than the clone's: the compiled files are
    made beside relay's cache, else none is ever moved into it."""
    memory = Path("/dev/shm")
    if not memory.is_dir() or not os.access(memory, os.W_OK):
        pytest.skip("no second file system to put the temporary folder on")
    if memory.stat().st_dev == tmp_path.stat().st_dev:
        pytest.skip("/dev/shm is the tests' own file system here")
    tree, head = _repo(tmp_path / "repo", {"calc.py": "WHO = 3\n"})
    primer = Primer(tmp_path / "work", tree.python_sources(head), tree.blobs)
    first = _checkout(tmp_path / "repo", tmp_path / "first")
    (first / PYCACHE).mkdir()
    (first / PYCACHE / f"calc{SUFFIX}").write_bytes(b"x")
    primer.learn(first, COMMAND, tree_state(first, ["calc.py"]))
    with tempfile.TemporaryDirectory(dir=memory) as elsewhere:
        monkeypatch.setattr(tempfile, "tempdir", elsewhere)
        second = _checkout(tmp_path / "repo", tmp_path / "second")
        assert primer.prime(second, COMMAND) == 1
    assert primer.compiled == 1


def test_a_first_run_writing_compiled_files_leaves_no_folder_touched_to_excuse_a_stir(
    tmp_path: Path,
) -> None:
    """The baseline's first run of a gate writes compiled files (relay learns from their
    names); the ``__pycache__`` it would make leaves its folder touched, which excuses a
    candidate's run that made and removed an entry there (a file a later reader reads,
    gone by the run's end). Relay makes those folders before the run: the candidate's
    stir is seen, as when no run wrote any."""
    project = make_project(tmp_path, accept=None, retries=0, gates=(TEST_GATE,))
    assert project.loop("goal", "add", "Goal 1", "--accept", _accept_z(1)).data == {"goal": "G1"}
    stir = (
        "import os\n\n"
        "_AT = os.path.join(os.path.dirname(__file__), 'conftest.py')\n"
        "open(_AT, 'w').close()\n"
        "os.remove(_AT)\n\n\n"
        "def test_z1():\n"
        "    assert True\n"
    )
    maker = project.script(
        "maker",
        "put('src/calc.py', pathlib.Path('src/calc.py').read_text() + 'Z1 = 1\\n')\n"
        f"put('tests/test_z1.py', {stir!r})\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [], ran
    assert "(stirred tests) where the baseline's run did not" in ran.data["reverted"][0], ran


@pytest.mark.parametrize(
    ("gitignore", "primes"),
    [
        ("__pycache__/\n.pytest_cache/\n", True),
        ("build/\n*.py[cod]\n", True),
        ("**/__pycache__\n", True),
        (None, False),  # none
        ("build/\n", False),  # compiled files not ignored
        ("src/__pycache__/\n", False),  # in one folder only
        ("__pycache__/\n!src/__pycache__/\n", False),  # one taken back
    ],
)
def test_relay_primes_only_a_tree_that_ignores_compiled_files(
    gitignore: str | None, primes: bool
) -> None:
    from relay.ratchet.bytecode import ignores_compiled

    assert ignores_compiled(gitignore) is primes


def test_a_gate_that_asks_for_a_clean_tree_is_judged_as_before_where_pycache_is_not_ignored(
    tmp_path: Path,
) -> None:
    """A project that does not ignore ``__pycache__`` and has a gate that asks git for a
    clean tree after its tests: relay writes no compiled file there (its own or a learning
    run's would be untracked files the gate sees), and the change is kept."""
    clean = f'{TEST_GATE} && test -z "$(git status --porcelain)"'
    project = make_project(tmp_path, accept=None, retries=0, gates=(clean,))
    project.write(".gitignore", ".pytest_cache/\n")
    project.git("add", "-A")
    project.git("commit", "-qm", "compiled files not ignored")
    assert _kept_one_goal(project) == ["G1"]
    assert not (project.root / ".git" / "relay" / "loop" / "bytecode").exists()


def test_a_gate_writes_its_compiled_files_where_relay_sweeps_them_whatever_the_prefix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person's PYTHONPYCACHEPREFIX (a relative one lies in the judged tree) would be a
    place relay never sweeps, where one gate's code leaves a forged compiled file for the
    next: a gate runs without it."""
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", ".compiled")
    seen = (
        f"{PY} -c 'import os, sys; sys.exit(1 if os.environ.get(\"PYTHONPYCACHEPREFIX\") else 0)'"
    )
    project = make_project(tmp_path, accept=None, retries=0, gates=(seen,))
    assert _kept_one_goal(project) == ["G1"]
