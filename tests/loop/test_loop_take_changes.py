"""What a candidate changes against HEAD, when it is the tree a take made on HEAD, is the
take's own diff (git is not asked again); against another base, or once HEAD has moved,
it is git's answer as ever."""

from __future__ import annotations

from pathlib import Path

import pytest
from loop_project import git, maker_pair

from relay.edges.git import GitFailed
from relay.edges.worktree import WorkTree


def edited(tmp_path: Path) -> tuple[WorkTree, Path]:
    """A person's clone and a maker's copy of it that changes one file, adds one and
    removes one."""
    clone, maker = maker_pair(tmp_path, {"app.py": "x = 1\n", "b.py": "b = 1\n"})
    (maker / "app.py").write_text("x = 2\n")
    (maker / "new.py").write_text("n = 1\n")
    (maker / "b.py").unlink()
    return WorkTree.open(clone), maker


def test_a_candidate_on_head_changes_what_its_take_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree, maker = edited(tmp_path)
    head = tree.head()
    paths, made = tree.taken_from(maker, head)
    commit = tree.commit_tree(made, head, "taken")
    assert WorkTree.open(tree.root).changed_in(commit) == ["app.py", "b.py", "new.py"]
    with monkeypatch.context() as no_git:  # every git command of the clone fails now
        no_git.setenv("GIT_CONFIG_COUNT", "not a count")
        with pytest.raises(GitFailed):
            WorkTree.open(tree.root).changed_in(commit)
        assert tree.changed_in(commit) == paths == ["app.py", "b.py", "new.py"]
    # HEAD moved on: git is asked, against the new HEAD
    (tree.root / "b.py").unlink()
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "b", cwd=tree.root)
    assert tree.changed_in(commit) == ["app.py", "new.py"]


def test_a_take_on_another_base_is_no_answer_for_a_commit_on_head(tmp_path: Path) -> None:
    tree, maker = edited(tmp_path)
    first = tree.head()
    (tree.root / "app.py").write_text("x = 2\n")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "x", cwd=tree.root)
    head = tree.head()
    paths, made = tree.taken_from(maker, first)  # the goal's work so far: an older base
    assert paths == ["app.py", "b.py", "new.py"]
    commit = tree.commit_tree(made, head, "taken")
    assert tree.changed_in(commit) == ["b.py", "new.py"]  # app.py is as HEAD has it
