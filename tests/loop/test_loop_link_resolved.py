"""A candidate's link is judged where it really leads, every link on the way followed
within the maker's tree: a link whose text stays in the tree but that passes through
another link leading elsewhere (``L -> ../../../../..`` deep down, then
``notes.md -> d1/.../L/../../../secret``) is refused; a link to the tree's own top or to
``.`` is inside, and refused by no crash. Whatever the person's clone holds, relay's
host-side readers of its files (triage's markers, init's project and instruction files)
read no file through a link that leads out of it (tests/loop/test_loop_tree_links.py: the
links that stay inside are read)."""

from __future__ import annotations

import os
from pathlib import Path

from loop_project import CALC_MUL, PY, TEST_GATE, TEST_MUL, make_project, maker_pair

from relay.edges.treefiles import read_tree_file
from relay.edges.worktree import WorkTree

SECRET = "TODO: leak-7c1e the host's private note\n"
DEEP = "d1/d2/d3/d4/d5/d6"


def pair(tmp_path: Path) -> tuple[WorkTree, Path]:
    """A person's clone and a maker's copy of it, three folders below ``tmp_path``."""
    clone, maker = maker_pair(tmp_path, {"app.py": "x = 1\n"})
    return WorkTree.open(clone), maker


def chained(maker: Path) -> None:
    """``L`` (lexically and really ``d1``) and ``notes.md``, whose text normalises to
    ``d1/d2/d3/d4/secret.md`` but which leads to ``../../secret.md`` through ``L``."""
    (maker / DEEP).mkdir(parents=True)
    (maker / DEEP / "keep.txt").write_text("x\n")
    os.symlink("../../../../..", maker / DEEP / "L")
    os.symlink(f"{DEEP}/L/../../../secret.md", maker / "notes.md")


def test_a_link_through_another_link_is_judged_where_it_leads(tmp_path: Path) -> None:
    tree, maker = pair(tmp_path)
    (tmp_path / "secret.md").write_text(SECRET)
    chained(maker)
    assert (maker / "notes.md").read_text() == SECRET  # it really leads out
    assert os.path.normpath(os.readlink(maker / "notes.md")) == "d1/d2/d3/d4/secret.md"
    taken = tree.take(maker, tree.head()).paths
    assert set(taken) == {f"{DEEP}/keep.txt", f"{DEEP}/L", "notes.md"}
    said = tree.refusal(maker, taken)
    assert said == (
        f"`notes.md` is a link to `{DEEP}/L/../../../secret.md`, out of the tree or into .git"
    )
    assert tree.refusal(maker, [f"{DEEP}/L", f"{DEEP}/keep.txt"]) is None  # L itself: d1


def test_links_to_the_top_or_into_git_through_a_link(tmp_path: Path) -> None:
    tree, maker = pair(tmp_path)
    (maker / "sub").mkdir()
    os.symlink("..", maker / "sub" / "top")
    os.symlink(".", maker / "here")
    os.symlink("sub/top/.git/config", maker / "conf")
    os.symlink("loop", maker / "loop")
    assert tree.refusal(maker, ["sub/top", "here"]) is None  # the top is inside
    assert tree.refusal(maker, ["conf"]) == (
        "`conf` is a link to `sub/top/.git/config`, out of the tree or into .git"
    )
    assert (
        tree.refusal(maker, ["loop"]) == "`loop` is a link to `loop`, out of the tree or into .git"
    )


def test_the_loop_keeps_no_link_that_leads_out_through_another(tmp_path: Path) -> None:
    """A real run: the maker's candidate holds the chained link; it is refused, nothing of
    it kept, and the link's target read by no later step."""
    project = make_project(tmp_path, retries=0, gates=(TEST_GATE,))
    (project.root.parent / "secret.md").write_text(SECRET)
    # twenty folders deep: `..` above / stays at /, so the link leads to the secret from
    # wherever the clone is, while its text normalises to a place inside the tree
    deep = "/".join(f"d{i}" for i in range(1, 21))
    target = f"{deep}/L/" + "../" * 20 + str(project.root.parent / "secret.md").lstrip("/")
    links = (
        "import os\n"
        f"os.makedirs({deep!r}, exist_ok=True)\n"
        f"open({deep + '/keep.txt'!r}, 'w').write('x\\n')\n"
        f"os.symlink({'../' * 19!r}, {deep + '/L'!r})\n"
        f"os.symlink({target!r}, 'notes.md')\n"
    )
    body = f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
    ran = project.loop("run", "--maker", project.script("maker", links + body))
    assert ran.status == 0 and ran.data["kept"] == [], ran
    assert not os.path.normpath(target).startswith("..")  # the old, lexical check passed it
    failures = project.read("docs/loop/state/failures.md")
    assert "`notes.md` is a link to" in failures and "out of the tree" in failures, failures
    assert not (project.root / "notes.md").is_symlink()
    assert project.loop("triage").status == 0
    assert "leak-7c1e" not in project.read("docs/loop/GOALS.md")


def test_a_link_to_the_top_stops_no_run(tmp_path: Path) -> None:
    """A real run whose candidate holds ``dist/top -> ..``: inside the tree, kept (the
    lexical check crashed the run on it, leaving the goal in progress). (An acceptance
    that runs the tree's own files, inline code, would hold any file but source and
    tests: this one names the test it runs.)"""
    accept = f"{PY} -m pytest -q -p no:cacheprovider tests/test_mul.py"
    project = make_project(tmp_path, retries=0, gates=(TEST_GATE,), accept=accept)
    top = project.script(
        "top",
        "import os\nos.makedirs('dist', exist_ok=True)\nos.symlink('..', 'dist/top')\n"
        f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n",
    )
    ran = project.loop("run", "--maker", top)
    assert ran.status == 0, ran
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    assert os.readlink(project.root / "dist" / "top") == ".."
    assert project.clean()


def test_triage_reads_no_tracked_file_through_a_link(tmp_path: Path) -> None:
    """The person's clone holds committed links out of it (however they got there):
    triage's marker scan reads none of their targets into the spine."""
    project = make_project(tmp_path, retries=0, gates=(TEST_GATE,))
    secret = project.root.parent / "secret.md"
    secret.write_text(SECRET)
    (project.root / "d1").mkdir()
    os.symlink("..", project.root / "d1" / "up")
    os.symlink(f"d1/up/../{secret.name}", project.root / "notes.md")  # lexically ../secret.md
    os.symlink(str(secret), project.root / "abs.md")
    project.write("own.md", "TODO: the person's own marker\n")
    project.git("add", "-A")
    project.git("commit", "-qm", "links")
    assert (project.root / "notes.md").read_text() == SECRET
    triaged = project.loop("triage")
    assert triaged.status == 0, triaged
    spine = project.read("docs/loop/GOALS.md") + project.read("docs/loop/BOARD.md")
    assert "the person's own marker" in spine  # triage did read the tracked files
    assert "leak-7c1e" not in spine


def test_a_tree_file_is_read_through_no_link(tmp_path: Path) -> None:
    top = tmp_path / "top"
    (top / "real").mkdir(parents=True)
    (top / "real" / "f.toml").write_text("mine\n")
    (tmp_path / "out.toml").write_text("host\n")
    os.symlink("../out.toml", top / "f.toml")
    os.symlink("real", top / "via")
    os.mkfifo(top / "pipe")
    assert read_tree_file(top, "real/f.toml") == b"mine\n"
    assert read_tree_file(top, "f.toml") is None
    assert read_tree_file(top, "via/f.toml") == b"mine\n"  # a link inside the tree is read
    assert read_tree_file(top, "pipe") is None  # and no hang
    assert read_tree_file(top, "../out.toml") is None
    assert read_tree_file(top, "real/f.toml", cap=2) is None


def test_a_roles_instructions_file_is_read_through_no_link(tmp_path: Path) -> None:
    """The roster's maker names an instructions file that is a link to a host file: the
    maker's brief (which the maker reads in its box) carries none of the host file."""
    project = make_project(tmp_path, gates=(TEST_GATE,), retries=0)
    secret = project.root.parent / "secret.md"
    secret.write_text(SECRET)
    body = f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
    maker = project.script("maker", "count('maker')\n" + body)
    (project.root / "docs/loop/roles").mkdir(parents=True)
    os.symlink("../../../../secret.md", project.root / "docs/loop/roles/maker.md")
    assert (project.root / "docs/loop/roles/maker.md").read_text() == SECRET
    loop = project.read("docs/loop/LOOP.md")
    roster = f"- maker: command `{maker}`\n  - Instructions: `docs/loop/roles/maker.md`\n"
    project.write(
        "docs/loop/LOOP.md", loop.replace("## Iteration\n", roster + "\n## Iteration\n", 1)
    )
    project.git("add", "-A")
    project.git("commit", "-qm", "the roster's maker")
    ran = project.loop("run", "--max-iterations", "1")
    assert project.calls("maker") == 1, ran
    assert "leak-7c1e" not in project.seen("maker", 1)
