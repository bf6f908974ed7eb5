"""Every path that turns a maker's files into a candidate goes through the take's one
refusal (:meth:`WorkTree.take`): the optimiser's (a metric goal) and a node maker's
(`relay loop make-here`, whose diff another node judges) as the ratchet's own. A FIFO in
place of a tracked file was taken as its deletion, a file the clone's attributes put
through a filter was stored raw, a link leading out was stored, a FIFO named
``.gitignore`` held the take for ever (git blocks opening it): each is refused there,
nothing kept and no diff handed back."""

from __future__ import annotations

from pathlib import Path

import pytest
from loop_project import CALC_MUL, PY, TEST_GATE, TEST_MUL, Project, make_project

from relay.ratchet import sandbox

needs_namespaces = pytest.mark.skipif(
    sandbox.level() != sandbox.NAMESPACES, reason="no user namespaces here"
)

# what a maker leaves, and the refusal it meets
SHAPES = {
    "fifo": (
        "os.remove('notes.txt')\nos.mkfifo('notes.txt')\n",
        "`notes.txt` is neither a file, a link nor a folder in the candidate",
    ),
    "filtered": (
        "put('data.bin', 'the maker raw bytes\\n')\n",
        "`data.bin` goes through this clone's `filter=evil` (its .gitattributes)",
    ),
    "fifo .gitignore": (  # git blocked for ever opening it
        # (its account written first: the maker's own `git status` would block on it)
        "if WHY:\n    explain('a FIFO\\n')\n"
        "os.makedirs('sub', exist_ok=True)\nos.mkfifo('sub/.gitignore')\n",
        "`sub/.gitignore` is neither a file, a link nor a folder in the candidate",
    ),
    "link out": (
        "os.symlink('../../../../../../../../../../../../etc/hostname', 'out.md')\n",
        "`out.md` is a link to `../../../../../../../../../../../../etc/hostname`, out of",
    ),
}


def with_shapes_to_refuse(project: Project) -> None:
    """A tracked notes file, and an LFS-style file the project's attributes filter."""
    project.write("notes.txt", "the person's notes\n")
    project.write(".gitattributes", "*.bin filter=evil\n")
    project.write("data.bin", "pointer\n")
    project.git("add", "-A")
    project.git("commit", "-qm", "notes and a filtered file")


@pytest.mark.parametrize("shape", SHAPES)
def test_the_optimiser_refuses_what_the_take_refuses(tmp_path: Path, shape: str) -> None:
    project = make_project(tmp_path, accept=None, retries=0, gates=(TEST_GATE,))
    project.write(
        "bench/cost.py", "import pathlib\n\nprint(pathlib.Path('cost.txt').read_text())\n"
    )
    project.write("cost.txt", "100\n")
    with_shapes_to_refuse(project)
    args = ("--metric", f"{PY} bench/cost.py", "--direction", "down", "--threshold", "10")
    assert project.loop("goal", "add", "Cheaper", *args).data == {"goal": "G1"}
    body, refusal = SHAPES[shape]
    maker = project.script(
        "maker", f'put("cost.txt", "60\\n")\n{body}print("IDEA: cheaper, and {shape}")\n'
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [], ran
    assert project.read("cost.txt") == "100\n" and project.read("notes.txt")
    assert project.read("data.bin") == "pointer\n" and not (project.root / "out.md").exists()
    said = project.read("docs/loop/state/failures.md") + project.read("docs/loop/BOARD.md")
    assert refusal in said, said
    assert project.clean()


@needs_namespaces
@pytest.mark.parametrize("shape", SHAPES)
def test_a_node_maker_hands_back_no_diff_the_take_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: str
) -> None:
    project = make_project(tmp_path)
    with_shapes_to_refuse(project)
    body, refusal = SHAPES[shape]
    maker = project.script(
        "maker", f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n{body}"
    )
    monkeypatch.setenv("RELAY_LOOP_MAKER", maker)
    ran = project.loop("make-here", "G1")
    assert ran.status != 0, ran
    errors = " ".join(map(str, ran.errors))
    assert "relay cannot take the maker's tree" in errors and refusal in errors, errors
    assert not (project.root / "relay-loop-G1.diff").exists()
    # an honest maker's tree is taken, and its diff handed back
    honest = project.script(
        "honest", f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
    )
    monkeypatch.setenv("RELAY_LOOP_MAKER", honest)
    ran = project.loop("make-here", "G1")
    assert ran.status == 0, ran
    assert "def mul" in (project.root / "relay-loop-G1.diff").read_text()


@pytest.mark.timeout(120)
def test_a_fifo_git_reads_in_the_tree_stops_no_run(tmp_path: Path) -> None:
    """The ratchet's own take: a ``.gitattributes`` FIFO (git opens it to read attributes)
    is refused, and the run goes on to its end."""
    project = make_project(tmp_path, retries=0, gates=(TEST_GATE,))
    body = f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
    # (the maker writes its account itself: its own `git status` would block on the FIFO)
    maker = project.script("maker", "explain('a FIFO\\n')\nos.mkfifo('.gitattributes')\n" + body)
    ran = project.loop("run", "--maker", maker)
    assert ran.status == 0 and ran.data["kept"] == [], ran
    failures = project.read("docs/loop/state/failures.md")
    assert "`.gitattributes` is neither a file, a link nor a folder" in failures, failures
    assert project.clean()
