"""relay's host-side reads of a tree's files (`relay loop init`'s instruction files,
triage, the roster's instructions) follow a link of the person's own clone that stays in
it (``CLAUDE.md -> AGENTS.md``): resolved by relay one component at a time against the
folders it holds open, the kernel following none. A link that leads out of the tree, even
through another link, into its ``.git``, round in a loop, or to anything but a regular
file reads as nothing; a link swapped while relay reads leads it nowhere else."""

from __future__ import annotations

import io
import os
import sys
import threading
import uuid
from pathlib import Path

import pytest
from loop_project import make_project

from relay.edges.treefiles import read_tree_file

AGENTS = "# Agents\n\nThe login code in `src/app/auth/` is security-critical.\n"
SECRET = "TODO: leak-91ab the host's private note\n"


def tree_with_links(tmp_path: Path) -> Path:
    top = tmp_path / "top"
    (top / "docs" / "deep").mkdir(parents=True)
    (top / ".git").mkdir()
    (top / ".git" / "config").write_text("[core]\n")
    (top / "AGENTS.md").write_text(AGENTS)
    (tmp_path / "secret.md").write_text(SECRET)
    links = {
        # inside: read
        "CLAUDE.md": "AGENTS.md",
        "docs/guide.md": "../AGENTS.md",
        "docs/deep/up": "..",
        "docs/via.md": "deep/up/guide.md",  # a link through two others, all inside
        "chain.md": "docs/via.md",
        "docsdir": "docs",
        # out of the tree, into .git, round, or at no file: nothing
        "out.md": "../secret.md",
        "abs.md": str(tmp_path / "secret.md"),
        "docs/deep/top": "../..",
        "through.md": "docs/deep/top/../secret.md",  # inside by its text, out by the link
        "conf": ".git/config",
        "gitdir": ".git",
        "viagit": "gitdir/config",
        "loop1": "loop2",
        "loop2": "loop1",
        "self": "self",
        "dir.md": "docs",
        "top.md": ".",
    }
    for name, target in links.items():
        os.symlink(target, top / name)
    os.mkfifo(top / "pipe")
    os.symlink("pipe", top / "pipe.md")
    return top


def test_a_link_that_stays_in_the_tree_is_read_and_any_other_is_not(tmp_path: Path) -> None:
    top = tree_with_links(tmp_path)
    for name in ("CLAUDE.md", "docs/guide.md", "docs/via.md", "chain.md", "docsdir/guide.md"):
        assert read_tree_file(top, name) == AGENTS.encode(), name
    assert read_tree_file(top, "docs/deep/up/guide.md") == AGENTS.encode()
    for name in (
        "out.md", "abs.md", "through.md", "docs/deep/top/secret.md", "conf", "viagit",
        "gitdir/config", "loop1", "self", "dir.md", "top.md", "pipe.md", "docs/deep/up/../x",
    ):  # fmt: skip
        assert read_tree_file(top, name) is None, name
    assert (top / "through.md").read_text() == SECRET  # the kernel would have read it


def test_a_link_swapped_during_the_reads_never_leads_out(tmp_path: Path) -> None:
    """``d`` flips between a link to a folder inside and one to a folder outside, as fast
    as it can, while relay reads ``notes.md -> d/f.md``: each read is the inside file or
    nothing, never the outside one."""
    top = tmp_path / "top"
    (top / "real").mkdir(parents=True)
    (top / "real" / "f.md").write_text("inside\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "f.md").write_text(SECRET)
    os.symlink("real", top / "d")
    os.symlink("d/f.md", top / "notes.md")
    stop = threading.Event()

    def swap() -> None:
        turn = 0
        while not stop.is_set():
            spare = top / f".swap-{uuid.uuid4().hex}"
            os.symlink("real" if turn % 2 else "../outside", spare)
            os.replace(spare, top / "d")
            turn += 1

    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    try:
        seen = {read_tree_file(top, "notes.md") for _ in range(3000)}
    finally:
        stop.set()
        swapper.join()
    assert seen <= {b"inside\n", None}, seen
    assert (top / "notes.md").read_text() in ("inside\n", SECRET)


def test_init_reads_an_instructions_file_that_links_inside_the_clone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``CLAUDE.md -> docs/agents-guide.md``, both the person's: `relay loop init` reads it
    and proposes the area it names; ``AGENTS.md`` linking out of the clone is not read."""
    project = make_project(tmp_path, accept=None)
    project.write("src/app/auth/login.py", "def login():\n    return False\n")
    project.write("docs/agents-guide.md", AGENTS)
    os.symlink("docs/agents-guide.md", project.root / "CLAUDE.md")
    (project.root.parent / "secret.md").write_text("The `src/app/billing/` code is money.\n")
    os.symlink("../secret.md", project.root / "AGENTS.md")
    project.git("add", "-A")
    project.git("commit", "-qm", "instructions, one a link")
    project.git("rm", "-q", "docs/loop/LOOP.md")
    project.git("commit", "-qm", "start LOOP.md again")
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))
    ran = project.loop("init")
    assert ran.status == 0, ran
    [area] = ran.data["security_areas"]
    assert (area["name"], area["paths"]) == ("authentication", ["src/app/auth/"])
    assert "CLAUDE.md line 3" in area["found"], area
    assert "billing" not in project.read("docs/loop/LOOP.md")


def test_the_roster_and_triage_read_a_link_inside_the_clone(tmp_path: Path) -> None:
    """The roster's maker names ``docs/loop/roles/maker.md``, a link to the person's
    ``AGENTS.md``: its brief carries the instructions. Triage reads a marker once, under
    the name of the file that holds it, not again under a link's (``CLAUDE.md``)."""
    from loop_project import CALC_MUL, TEST_GATE, TEST_MUL

    project = make_project(tmp_path, gates=(TEST_GATE,), retries=0)
    project.write("AGENTS.md", "Keep functions small.\n\nTODO: the person's own marker\n")
    os.symlink("AGENTS.md", project.root / "CLAUDE.md")
    (project.root / "docs/loop/roles").mkdir(parents=True)
    os.symlink("../../../AGENTS.md", project.root / "docs/loop/roles/maker.md")
    body = f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
    maker = project.script("maker", "count('maker')\n" + body)
    loop = project.read("docs/loop/LOOP.md")
    roster = f"- maker: command `{maker}`\n  - Instructions: `docs/loop/roles/maker.md`\n"
    project.write(
        "docs/loop/LOOP.md", loop.replace("## Iteration\n", roster + "\n## Iteration\n", 1)
    )
    project.git("add", "-A")
    project.git("commit", "-qm", "the roster's maker, its instructions a link")
    ran = project.loop("run", "--max-iterations", "1")
    assert project.calls("maker") == 1, ran
    assert "Keep functions small." in project.seen("maker", 1)
    assert project.loop("triage").status == 0
    goals = project.read("docs/loop/GOALS.md")
    assert "Resolve the TODO at AGENTS.md:3" in goals, goals
    assert "CLAUDE.md" not in goals, goals
