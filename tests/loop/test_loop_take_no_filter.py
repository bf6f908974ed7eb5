"""Relay hashes a maker's tree with no filter of the person's git: whatever attributes
the maker's tree declares (``*.bin filter=evil``, git-lfs's ``filter=lfs``), no clean
filter the person's configuration defines runs on the host; the candidate holds the
maker's bytes as git would store them with no driver run (a link as its text, an
executable bit kept, line ends as git's own text rules say)."""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import pytest
from loop_project import CALC_MUL, TEST_GATE, TEST_MUL, git, make_project, maker_pair

from relay.edges.worktree import FILE_CAP_ENV, TOTAL_CAP_ENV, WorkTree
from relay.errors import ConfigError

PAYLOAD = "maker-chosen bytes\r\n"


def blob(clone: Path, where: str) -> bytes:
    return subprocess.run(
        ["git", "cat-file", "blob", where], cwd=clone, capture_output=True, check=True
    ).stdout


def evil_filter(clone: Path, mark: Path) -> None:
    """The person's repository configures a clean filter (as ``git lfs install`` does) that
    leaves ``mark`` when it runs; also end-of-line conversion for text files."""
    command = f"sh -c 'touch {mark}; cat'"
    git("config", "filter.evil.clean", command, cwd=clone)
    git("config", "core.autocrlf", "input", cwd=clone)


def pair(tmp_path: Path) -> tuple[WorkTree, Path]:
    """A person's clone and a maker's copy of it."""
    clone, maker = maker_pair(tmp_path, {"app.py": "x = 1\n"})
    return WorkTree.open(clone), maker


def test_taking_a_makers_tree_runs_no_filter_of_the_persons(tmp_path: Path) -> None:
    tree, maker = pair(tmp_path)
    mark = Path("/tmp") / f"x-{uuid.uuid4().hex}"
    evil_filter(tree.root, mark)
    (maker / ".gitattributes").write_text("*.bin filter=evil\n* filter=evil text\n")
    (maker / "payload.bin").write_text(PAYLOAD)
    (maker / "app.py").write_text("x = 2\r\n")
    (maker / "run.sh").write_text("#!/bin/sh\n")
    (maker / "run.sh").chmod(0o755)
    os.symlink("app.py", maker / "alias.py")
    try:
        paths, made = tree.taken_from(maker, tree.head())
        commit = tree.commit_tree(made, tree.head(), "taken")
        assert not mark.exists()
    finally:
        mark.unlink(missing_ok=True)
    assert paths == [".gitattributes", "alias.py", "app.py", "payload.bin", "run.sh"]
    # the maker's `* text` and the person's autocrlf: git's own end-of-line conversion
    # (done in-process, no program run), as git add stores them; never the filter's
    assert blob(tree.root, f"{made}:payload.bin") == PAYLOAD.replace("\r\n", "\n").encode()
    assert blob(tree.root, f"{made}:app.py") == b"x = 2\n"
    listed = {p: mode for p, mode in tree.listing(commit)}
    assert listed["alias.py"] == "120000" and listed["run.sh"] == "100755"
    assert blob(tree.root, f"{made}:alias.py") == b"app.py"
    # what the maker removed, or turned into a folder, is gone from the candidate
    (maker / "payload.bin").unlink()
    (maker / "app.py").unlink()
    (maker / "app.py").mkdir()
    (maker / "app.py" / "inner.py").write_text("y = 1\n")
    paths, made = tree.taken_from(maker, tree.head())
    assert "app.py/inner.py" in paths and "app.py" in paths
    assert "payload.bin" not in tree.files_at(made) and "app.py/inner.py" in tree.files_at(made)


def test_a_real_run_hashes_the_makers_tree_with_no_filter(tmp_path: Path) -> None:
    """A real `relay loop run` whose maker declares ``*.bin filter=evil`` and writes a
    .bin (no candidate needs to keep it: hashing is where the filter ran)."""
    project = make_project(tmp_path, retries=0, gates=(TEST_GATE,))
    mark = Path("/tmp") / f"x-{uuid.uuid4().hex}"
    evil_filter(project.root, mark)
    maker = project.script(
        "maker",
        "put('.gitattributes', '*.bin filter=evil\\n')\n"
        f"put('payload.bin', {PAYLOAD!r})\n"
        f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n",
    )
    try:
        ran = project.loop("run", "--maker", maker)
        assert ran.status == 0, ran
        assert not mark.exists()
    finally:
        mark.unlink(missing_ok=True)
    assert not (project.root / ".gitattributes").exists()


def test_a_file_the_persons_attributes_filter_is_refused_not_stored_raw(tmp_path: Path) -> None:
    """An LFS-style project (its own .gitattributes put ``*.bin`` through a filter): the
    person's git would store what the filter makes of the maker's bytes (a pointer), relay
    runs no filter, so a candidate that changes such a file is refused, not kept raw."""
    tree, maker = pair(tmp_path)
    mark = Path("/tmp") / f"x-{uuid.uuid4().hex}"
    for where in (tree.root, maker):
        (where / ".gitattributes").write_text("*.bin filter=evil\n")
        (where / "data.bin").write_text("pointer\n")
    git("add", "-A", cwd=tree.root)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "lfs", cwd=tree.root)
    evil_filter(tree.root, mark)
    (maker / "data.bin").write_text(PAYLOAD)
    (maker / "app.py").write_text("x = 3\n")
    try:
        taken = tree.take(maker, tree.head()).paths
        assert taken == ["app.py", "data.bin"]
        assert tree.refusal(maker, taken) == (
            "`data.bin` goes through this clone's `filter=evil` (its .gitattributes): relay"
            " runs no filter on a maker's files, so it cannot store it as git would"
        )
        assert tree.refusal(maker, ["app.py"]) is None
        (maker / "data.bin").unlink()  # a removal goes through no filter
        assert tree.refusal(maker, tree.take(maker, tree.head()).paths) is None
        assert not mark.exists()
    finally:
        mark.unlink(missing_ok=True)


def test_a_tracked_file_turned_into_a_fifo_is_refused_not_a_crash(tmp_path: Path) -> None:
    """``git add`` failed on it (the run died); relay's own hashing leaves it out of the
    candidate and the take refuses it."""
    tree, maker = pair(tmp_path)
    (maker / "app.py").unlink()
    os.mkfifo(maker / "app.py")
    paths, made = tree.taken_from(maker, tree.head())
    assert paths == ["app.py"] and "app.py" not in tree.files_at(made)
    assert tree.refusal(maker, paths) == (
        "`app.py` is neither a file, a link nor a folder in the candidate"
    )


def test_a_file_over_the_cap_is_refused_before_it_is_hashed(tmp_path: Path) -> None:
    """A maker's sparse file of gigabytes costs its box nothing; relay read it all (minutes)
    and committed it. A file over the cap is never hashed: the candidate leaves it out (a
    tracked file grown over it is refused), and the take's refusal names it."""
    tree, maker = pair(tmp_path)
    for name in ("big.dat", "app.py"):
        with (maker / name).open("ab") as big:
            big.truncate(8 * 1024**3)  # sparse: no disk used
    paths, made = tree.taken_from(maker, tree.head())
    assert paths == ["app.py"] and not {"big.dat", "app.py"} & set(tree.files_at(made))
    for name in ("big.dat", "app.py"):
        assert tree.refusal(maker, [name]) == (
            f"`{name}` is 8 GiB, over the 100 MiB a file of a candidate may be (GitHub refuses"
            " a bigger one in a push): it was not hashed into the repository; if it belongs"
            " there, raise the bound with RELAY_CANDIDATE_FILE_MAX=SIZE (such as 200m)"
        )


def test_the_file_bound_is_the_persons_to_raise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree, maker = pair(tmp_path)
    (maker / "data.bin").write_bytes(os.urandom(100 * 1024))
    monkeypatch.setenv(FILE_CAP_ENV, "64k")
    taken = tree.take(maker, tree.head())
    assert taken.paths == [] and not has_blob(tree, maker / "data.bin")
    assert tree.refusal(maker, ["data.bin"]) == (
        "`data.bin` is 100 KiB, over the 64 KiB a file of a candidate may be (GitHub refuses"
        " a bigger one in a push): it was not hashed into the repository; if it belongs"
        " there, raise the bound with RELAY_CANDIDATE_FILE_MAX=SIZE (such as 200m)"
    )
    monkeypatch.setenv(FILE_CAP_ENV, "1m")
    taken = tree.take(maker, tree.head())
    assert taken.paths == ["data.bin"] and taken.refused is None
    monkeypatch.setenv(FILE_CAP_ENV, "lots")
    with pytest.raises(ConfigError, match=r"^RELAY_CANDIDATE_FILE_MAX='lots' is not a size"):
        tree.take(maker, tree.head())


def has_blob(tree: WorkTree, path: Path) -> bool:
    """Whether the clone's object store holds ``path``'s bytes as a blob."""
    sha = subprocess.run(
        ["git", "hash-object", "--no-filters", str(path)],
        cwd=tree.root, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    return subprocess.run(["git", "cat-file", "-e", sha], cwd=tree.root).returncode == 0


def test_a_tree_whose_new_files_are_over_the_total_is_refused_before_any_is_hashed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each file under the file bound, thousands of them would still fill the person's
    .git/objects: what a candidate adds or resizes is bounded in all, refused in one line
    before anything is hashed. A file the base holds at its size counts nothing."""
    clone, maker = maker_pair(tmp_path, {"app.py": "x = 1\n"})
    (clone / "kept.bin").write_bytes(os.urandom(700 * 1024))  # the base's own, unchanged
    git("add", "kept.bin", cwd=clone)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "data", cwd=clone)
    git("pull", "-q", cwd=maker)
    tree = WorkTree.open(clone)
    monkeypatch.setenv(TOTAL_CAP_ENV, "1m")
    (maker / "small.bin").write_bytes(os.urandom(200 * 1024))
    taken = tree.take(maker, tree.head())
    assert taken.paths == ["small.bin"] and taken.refused is None
    for i in range(4):
        (maker / f"gen{i}.bin").write_bytes(os.urandom(300 * 1024))
    (maker / "app.py").write_bytes(os.urandom(300 * 1024))
    taken = tree.take(maker, tree.head())
    assert taken.refused == (
        "the candidate adds or resizes 6 files of 1.7 MiB in all (the largest `app.py`,"
        " 300 KiB), over the 1 MiB relay takes from a maker's tree: none was hashed into the"
        " repository; list what is not to be committed in .gitignore, or raise the bound"
        " with RELAY_CANDIDATE_TOTAL_MAX=SIZE (such as 2g)"
    ), taken.refused
    assert taken.paths == ["app.py", "gen0.bin", "gen1.bin", "gen2.bin", "gen3.bin", "small.bin"]
    assert taken.tree == tree.tree_of(tree.head())
    # (small.bin went in with the first take)
    assert not any(has_blob(tree, maker / n) for n in taken.paths if n != "small.bin")
    monkeypatch.setenv(TOTAL_CAP_ENV, "2m")
    taken = tree.take(maker, tree.head())
    assert taken.refused is None and len(taken.paths) == 6
