"""relay hashes a maker's files with no filter driver, yet stores them as the person's git
would: end-of-line conversion (``core.autocrlf``, ``text``/``eol``/``crlf`` attributes) and
``ident`` done in-process as git's convert.c does them, and with ``core.fileMode=false`` an
executable bit the maker flipped is no change. Each shape is checked against what ``git
add`` itself stores, in the maker's own clone with the same configuration."""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import pytest
from loop_project import CALC_MUL, TEST_GATE, TEST_MUL, git, make_project, maker_pair

from relay.edges.worktree import WorkTree

# the files a maker writes: text with CRLF, mixed ends, a lone CR, binary holding CRLF, an
# ident, nothing at all, and a file whose base copy already holds CRLF
CONTENTS = {
    "crlf.txt": b"one\r\ntwo\r\n",
    "mixed.txt": b"one\r\ntwo\nthree\r\n",
    "lonecr.txt": b"one\rtwo\r\n",
    "nul.txt": b"one\0\r\ntwo\r\n",
    "ident.txt": b"$Id: 0123 $\r\nkeep $Id$ and $Id: x\n$\r\n",
    "empty.txt": b"",
    "eof.txt": b"text\r\n\x1a",
    "kept.txt": b"was crlf\r\nstill\r\n",
}
BASE = {"app.py": "x = 1\n", "kept.txt": "was crlf\r\nnow more\r\n"}
ATTRIBUTES = (
    "",
    "* text=auto\n",
    "*.txt text\n",
    "*.txt -text\n",
    "*.txt eol=crlf\n",
    "*.txt text=auto eol=lf\n",
    "*.txt crlf\n",
    "*.txt -crlf\n",
    "*.txt crlf=input\n",
    "*.txt ident\n* text=auto\n",
    "*.txt binary\n",
)


def stored_by_git(maker: Path, settings: dict[str, str], path: str) -> str:
    """The blob id ``git add`` gives ``path`` in the maker's own clone under ``settings``."""
    config = [f for k, v in settings.items() for f in ("-c", f"{k}={v}")]
    git(*config, "add", "-A", cwd=maker)
    return git(*config, "rev-parse", f":{path}", cwd=maker).strip()


@pytest.mark.parametrize("autocrlf", ["false", "true", "input"])
def test_a_makers_files_are_stored_as_git_add_stores_them(tmp_path: Path, autocrlf: str) -> None:
    for number, attributes in enumerate(ATTRIBUTES):
        here = tmp_path / str(number)
        here.mkdir()
        clone, maker = maker_pair(here, BASE)
        tree = WorkTree.open(clone)
        git("config", "core.autocrlf", autocrlf, cwd=clone)
        if attributes:
            (maker / ".gitattributes").write_text(attributes)
        for name, data in CONTENTS.items():
            (maker / name).write_bytes(data)
        _, made = tree.taken_from(maker, tree.head())
        for name in CONTENTS:
            ours = git("rev-parse", f"{made}:{name}", cwd=clone).strip()
            theirs = stored_by_git(maker, {"core.autocrlf": autocrlf}, name)
            assert ours == theirs, (attributes, autocrlf, name, blob(clone, ours))


def blob(clone: Path, sha: str) -> bytes:
    return subprocess.run(
        ["git", "cat-file", "blob", sha], cwd=clone, capture_output=True, check=True
    ).stdout


def test_autocrlf_stores_a_crlf_file_with_lf_and_runs_no_filter(tmp_path: Path) -> None:
    """The person's autocrlf=true, and a filter driver the maker's attributes name: the
    CRLF file is stored with LF (git's own conversion), the driver never runs."""
    clone, maker = maker_pair(tmp_path, {"app.py": "x = 1\n"})
    tree = WorkTree.open(clone)
    mark = Path("/tmp") / f"x-{uuid.uuid4().hex}"
    git("config", "core.autocrlf", "true", cwd=clone)
    git("config", "filter.evil.clean", f"sh -c 'touch {mark}; cat'", cwd=clone)
    (maker / ".gitattributes").write_text("*.md filter=evil\n")
    (maker / "app.py").write_bytes(b"x = 2\r\ny = 3\r\n")
    (maker / "notes.md").write_bytes(b"a\r\n")
    try:
        paths, made = tree.taken_from(maker, tree.head())
        assert not mark.exists()
    finally:
        mark.unlink(missing_ok=True)
    assert paths == [".gitattributes", "app.py", "notes.md"]
    assert blob(clone, f"{made}:app.py") == b"x = 2\ny = 3\n"
    assert blob(clone, f"{made}:notes.md") == b"a\n"  # converted, never filtered
    # a file the maker left as the base has it is no change, whatever its line ends
    (maker / "app.py").write_bytes(b"x = 1\r\n")
    assert tree.taken_from(maker, tree.head())[0] == [".gitattributes", "notes.md"]


def test_a_mode_only_change_is_none_where_the_clone_trusts_no_exec_bit(tmp_path: Path) -> None:
    clone, maker = maker_pair(tmp_path, {"app.py": "x = 1\n", "run.sh": "#!/bin/sh\n"})
    git("update-index", "--chmod=+x", "run.sh", cwd=clone)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "exec", cwd=clone)
    git("pull", "-q", cwd=maker)
    tree = WorkTree.open(clone)
    (maker / "app.py").chmod(0o755)
    (maker / "run.sh").chmod(0o644)
    (maker / "new.sh").write_text("#!/bin/sh\n")
    (maker / "new.sh").chmod(0o755)
    paths, made = tree.taken_from(maker, tree.head())
    assert paths == ["app.py", "new.sh", "run.sh"]  # git trusts the bit by default
    git("config", "core.fileMode", "false", cwd=clone)
    paths, made = tree.taken_from(maker, tree.head())
    assert paths == ["new.sh"]
    listed = dict((p, m) for p, m in WorkTree.open(clone).listing(made))
    assert listed == {"app.py": "100644", "new.sh": "100644", "run.sh": "100755"}
    for name in ("app.py", "run.sh", "new.sh"):  # as git add itself stores them
        assert git("rev-parse", f"{made}:{name}", cwd=clone).strip() == stored_by_git(
            maker, {"core.fileMode": "false"}, name
        )
    for spelled in ("no", "0", "OFF", ""):  # git's other ways of saying false
        git("config", "core.fileMode", spelled, cwd=clone)
        assert tree.taken_from(maker, tree.head())[0] == ["new.sh"], spelled
    git("config", "--add", "core.fileMode", "yes", cwd=clone)  # the last value counts
    assert tree.taken_from(maker, tree.head())[0] == ["app.py", "new.sh", "run.sh"]
    git("config", "--replace-all", "core.fileMode", "false", cwd=clone)
    (clone / ".git" / "config").write_text(
        (clone / ".git" / "config").read_text() + "[core]\n\tfileMode\n"
    )  # a key with no value is true
    assert tree.taken_from(maker, tree.head())[0] == ["app.py", "new.sh", "run.sh"]


def test_a_real_run_with_autocrlf_keeps_the_change_with_lf(tmp_path: Path) -> None:
    """A person on autocrlf=true; the maker writes its files with CRLF: the kept commit
    holds them as the person's git would (LF), and the tree is clean after."""
    project = make_project(tmp_path, retries=0, gates=(TEST_GATE,))
    project.git("config", "core.autocrlf", "true")
    crlf = {
        "src/calc.py": CALC_MUL.replace("\n", "\r\n"),
        "tests/test_mul.py": TEST_MUL.replace("\n", "\r\n"),
    }
    body = "".join(
        f"open({name!r}, 'w', newline='').write({text!r})\n" for name, text in crlf.items()
    )
    ran = project.loop("run", "--maker", project.script("maker", body))
    assert ran.status == 0, ran
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    for name, text in crlf.items():
        stored = subprocess.run(
            ["git", "cat-file", "blob", f"HEAD:{name}"],
            cwd=project.root,
            capture_output=True,
            check=True,
        ).stdout
        assert stored == text.replace("\r\n", "\n").encode(), name
    assert project.clean(), project.git("status", "--porcelain")
    assert os.path.exists(project.root / "src/calc.py")


def test_a_file_the_clone_reencodes_is_refused_not_stored_raw(tmp_path: Path) -> None:
    """``working-tree-encoding``: git add re-encodes the file to UTF-8; relay does not, so
    a candidate changing such a file is refused, as a filtered one is."""
    clone, maker = maker_pair(tmp_path, {"app.py": "x = 1\n"})
    tree = WorkTree.open(clone)
    for where in (clone, maker):
        (where / ".gitattributes").write_text("*.txt working-tree-encoding=UTF-16\n")
    (maker / "utf16.txt").write_bytes("hi\n".encode("utf-16"))
    taken = tree.take(maker, tree.head())
    assert taken.refused == (
        "`utf16.txt` is re-encoded by this clone's `working-tree-encoding=UTF-16` (its"
        " .gitattributes): relay does not re-encode a maker's files, so it cannot store it as"
        " git would"
    )
