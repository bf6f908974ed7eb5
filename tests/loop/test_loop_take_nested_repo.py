"""A git repository of its own inside a maker's tree (``git init`` or ``git clone`` in a
folder of it). ``git add`` would store it as a gitlink: a commit id only, of a commit
that only the maker's box held (the box is gone once the take ends), so the kept tree
would name a commit nobody can fetch and the gates would have run on an empty folder.
The take no longer drops it unsaid either: it refuses the candidate with one line."""

from __future__ import annotations

import subprocess
from pathlib import Path

from loop_project import CALC_MUL, TEST_GATE, TEST_MUL, git, make_project, maker_pair

from relay.edges.worktree import WorkTree

NESTED = (
    "`vendor/lib` is a git repository of its own: relay records no gitlink to a commit"
    " that only the maker's box held (copy its files in without .git)"
)


def nested_repository(where: Path) -> None:
    (where / "vendor" / "lib").mkdir(parents=True)
    (where / "vendor" / "lib" / "lib.py").write_text("y = 1\n")
    git("init", "-q", cwd=where / "vendor" / "lib")
    git("add", "-A", cwd=where / "vendor" / "lib")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x", cwd=where / "vendor/lib")


def test_a_nested_repository_is_refused_not_dropped_unsaid(tmp_path: Path) -> None:
    clone, maker = maker_pair(tmp_path, {"app.py": "x = 1\n"})
    tree = WorkTree.open(clone)
    nested_repository(maker)
    (maker / "app.py").write_text("x = 2\n")
    taken = tree.take(maker, tree.head())
    assert taken.paths == ["app.py", "vendor/lib"]
    assert taken.refused == NESTED
    assert "vendor/lib" not in tree.files_at(taken.tree)  # nothing of it hashed, no gitlink
    # its files without .git are an ordinary change, taken
    subprocess.run(["rm", "-rf", str(maker / "vendor" / "lib" / ".git")], check=True)
    taken = tree.take(maker, tree.head())
    assert taken.paths == ["app.py", "vendor/lib/lib.py"] and taken.refused is None


def test_a_run_whose_maker_clones_a_repository_into_the_tree_keeps_nothing(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path, retries=0, gates=(TEST_GATE,))
    maker = project.script(
        "maker",
        "import subprocess\n"
        "pathlib.Path('vendor/lib').mkdir(parents=True)\n"
        "put('vendor/lib/lib.py', 'y = 1\\n')\n"
        "subprocess.run(['git', 'init', '-q', 'vendor/lib'], check=True)\n"
        f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.status == 0 and ran.data["kept"] == [], ran
    failures = project.read("docs/loop/state/failures.md")
    assert NESTED in failures, failures
    assert not (project.root / "vendor").exists() and project.clean()
