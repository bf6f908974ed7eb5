"""Taking a candidate into the person's clone never writes or removes through a link: a
candidate that turns a tracked folder into a link out of the tree (``data -> ../victim``)
is refused before anything is written, as is a write under a link the person's clone
holds; a link that stays inside the tree is not refused."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from loop_project import TEST_GATE, git, make_project, maker_pair

from relay.edges.worktree import WorkTree
from relay.errors import ConfigError


def pair(tmp_path: Path) -> tuple[WorkTree, Path]:
    """A person's clone tracking data/keep.txt, and a maker's copy of it."""
    clone, maker = maker_pair(tmp_path, {"data/keep.txt": "kept\n", "app.py": "x = 1\n"})
    return WorkTree.open(clone), maker


def test_a_folder_turned_into_a_link_out_of_the_tree_is_refused_with_nothing_written(
    tmp_path: Path,
) -> None:
    tree, maker = pair(tmp_path)
    victim = maker.parent / "victim"  # ../victim from the maker's tree
    victim.mkdir()
    (victim / "keep.txt").write_text("echo payload\n")
    subprocess.run(["rm", "-rf", str(maker / "data")], check=True)
    (maker / "data").symlink_to("../victim")
    (maker / "app.py").write_text("x = 2\n")
    taken = tree.take(maker, tree.head()).paths
    assert set(taken) == {"app.py", "data", "data/keep.txt"}
    beside = tmp_path / "victim"  # ../victim from the person's clone
    assert (
        tree.refusal(maker, taken)
        == "`data` is a link to `../victim`, out of the tree or into .git"
    )
    assert not beside.exists() and not os.path.islink(tree.root / "data")
    assert (tree.root / "data" / "keep.txt").read_text() == "kept\n"
    assert (tree.root / "app.py").read_text() == "x = 1\n"  # nothing half-written
    assert git("status", "--porcelain", cwd=tree.root) == ""


def test_a_write_or_removal_under_a_link_the_clone_holds_is_refused(tmp_path: Path) -> None:
    tree, maker = pair(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("the person's\n")
    (tree.root / ".git" / "info" / "exclude").write_text("/build\n")
    (tree.root / "build").symlink_to(outside)  # the person's own, ignored
    (maker / "build").mkdir()
    (maker / "build" / "keep.txt").write_text("payload\n")
    said = "`build` is a link in the clone: relay writes nothing through it"
    assert tree.refusal(maker, ["build/keep.txt"]) == said
    assert tree.refusal(tmp_path / "empty", ["build/keep.txt"]) == said  # a removal through it
    assert (outside / "keep.txt").read_text() == "the person's\n"


def test_a_link_inside_the_tree_and_a_file_into_a_new_folder_are_not_refused(
    tmp_path: Path,
) -> None:
    tree, maker = pair(tmp_path)
    subprocess.run(["rm", "-rf", str(maker / "data")], check=True)
    (maker / "store").mkdir()
    (maker / "store" / "keep.txt").write_text("moved\n")
    (maker / "data").symlink_to("store")
    (maker / "run.sh").write_text("#!/bin/sh\n")
    (maker / "run.sh").chmod(0o755)
    taken = tree.take(maker, tree.head()).paths
    assert set(taken) == {"data", "data/keep.txt", "store/keep.txt", "run.sh"}
    assert tree.refusal(maker, taken) is None
    # a folder the candidate replaces with a file is refused while it holds others
    (tree.root / "run.sh").mkdir()
    (tree.root / "run.sh" / "mine.txt").write_text("the person's\n")
    said = "`run.sh` replaces a folder that still holds `run.sh/mine.txt`"
    assert tree.refusal(maker, ["run.sh"]) == said


def test_the_loop_refuses_a_candidate_that_links_a_tracked_folder_out_of_the_clone(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path, retries=0, gates=(TEST_GATE,), accept=None)
    project.write("data/keep.txt", "kept\n")
    project.git("add", "-A")
    project.git("commit", "-qm", "data")
    added = project.loop("goal", "add", "Touch", "--accept", "test -f src/extra.py")
    assert added.data == {"goal": "G1"}
    maker = project.script(
        "maker",
        "import shutil\n"
        "shutil.rmtree('data')\n"
        "os.symlink('../victim', 'data')\n"
        "put('src/extra.py', 'Y = 1\\n')\n",
    )
    victim = tmp_path / "victim"  # beside the clone: where a write through the link lands
    victim.mkdir()
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [], ran
    assert list(victim.iterdir()) == []  # relay wrote nothing through the maker's link
    assert not (project.root / "data").is_symlink()
    assert project.read("data/keep.txt") == "kept\n"
    assert not (project.root / "src" / "extra.py").exists()
    assert "relay cannot take the candidate" in project.read("docs/loop/state/failures.md"), ran
    assert project.clean()


def test_a_makers_tree_swapped_for_a_link_is_hashed_by_no_caller(tmp_path: Path) -> None:
    """Whatever calls it, relay hashes a maker's tree only as the folder it is: one
    swapped for a link to a host folder is refused, nothing of that folder taken."""
    tree, maker = pair(tmp_path)
    host = tmp_path / "host-keys"
    host.mkdir()
    (host / "id_key").write_text("HOST-KEY\n")
    maker.rename(maker.parent / "tree.old")
    maker.symlink_to(host)
    head = tree.head()
    with pytest.raises(ConfigError, match="not a folder"):
        tree.taken_from(maker, head)
    with pytest.raises(ConfigError, match="not a folder"):
        tree.take(maker, head)
