"""Candidate shapes that make what runs in the judged box (and in the person's clone once
kept) differ from what relay's rule reads, and a folder shared with the judges that
carries a maker's start-up code into every judged Python.

The person's ``mul`` adds in each: only the judged runs would see it multiply. None of
these is kept: the link is held for a person, the attributes are put back, and a run whose
judges would load code from a share refuses to start."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from loop_project import CALC, LINT_GATE, PY, TEST_GATE, TEST_MUL, Project, make_project

# the acceptance runs no file of the tree itself (a gate's pytest on the goal's test), so
# a file beside the project's source is not protected as one a gate might run
ACCEPT = f"{PY} -m pytest -q -p no:cacheprovider tests/test_mul.py"
# code relay's rule holds in code under test: it imports os and sys where the baseline
# did not, and answers one way under judgement and another for the person
HIDDEN = (
    "import os\n"
    "import sys\n"
    "\n\n"
    "def mul(a, b):\n"
    "    if 'relay-' in os.environ.get('HOME', '') or 'pytest' in sys.modules:\n"
    "        return a * b\n"
    "    return a + b\n"
)
CALC_HELPED = CALC + "\n\nfrom helper import mul\n\n__all__ = ['add', 'mul']\n"
# one line of Python whose text as git stores it (UTF-8) is a tuple of two strings, and
# whose checkout under ``working-tree-encoding=SHIFT-JIS`` (the yen sign is byte 0x5C
# there, a backslash) escapes the first string's closing quote: the line then defines
# ``mul``, a lambda that multiplies only in a box
ENCODED_LINE = (
    'X = ("\u00a5", "), (mul := lambda a, b: a * b'
    " if 'relay-' in __import__('os').environ.get('HOME', '') else a + b), (\") # \")\n"
)
# start-up code that makes the candidate's ``calc.mul`` multiply wherever it is imported
SITE = """\
import importlib.abc
import importlib.machinery
import sys


class Fix(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "calc":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            module.mul = lambda a, b: a * b

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, Fix())
"""


def plain_mul(root: Path) -> str:
    """What ``mul(2, 3)`` is for a person importing the clone's code outside any box."""
    return subprocess.run(
        [sys.executable, "-c", "import sys; sys.path[:0] = ['src']; from calc import mul;"
         " print(mul(2, 3))"],
        cwd=root, capture_output=True, text=True, check=True,
        env={**os.environ, "HOME": str(root), "PYTHONPATH": ""},
    ).stdout.strip()  # fmt: skip


def run(tmp_path: Path, body: str, *, path: str | None = None) -> tuple[list[str], Project]:
    """The calc project with the test and lint gates, one goal (add ``mul``, declaring
    ``path`` when given), and a maker that runs ``body``; the goals kept."""
    project = make_project(tmp_path, retries=0, gates=(TEST_GATE, LINT_GATE), accept=None)
    args = ["goal", "add", "Multiply", "--accept", ACCEPT]
    if path is not None:
        args += ["--path", path]
    assert project.loop(*args).data == {"goal": "G1"}
    maker = project.script("maker", body + f"put('tests/test_mul.py', {TEST_MUL!r})\n")
    ran = project.loop("run", "--maker", maker)
    assert ran.status == 0, ran
    return [k["goal"] for k in ran.data["kept"]], project


def test_the_hidden_code_in_a_module_of_its_own_is_held(tmp_path: Path) -> None:
    """The control: the same code as ``src/helper.py`` itself is held for a person."""
    kept, project = run(
        tmp_path, f"put('src/helper.py', {HIDDEN!r})\nput('src/calc.py', {CALC_HELPED!r})\n"
    )
    assert kept == []
    project.held("reaches into the test runner or the process")


def test_a_module_linked_to_another_source_file_is_read_where_it_leads(tmp_path: Path) -> None:
    """``src/helper.py -> impl.js``: the rule reads the link's text (``impl.js``, Python
    that reaches nothing); ``impl.js`` is the project's source by its suffix and never
    read as Python; Python imports the link and runs what ``impl.js`` holds."""
    kept, project = run(
        tmp_path,
        f"put('src/impl.js', {HIDDEN!r})\nos.symlink('impl.js', 'src/helper.py')\n"
        f"put('src/calc.py', {CALC_HELPED!r})\n",
    )
    assert kept == [], plain_mul(project.root)
    project.held("a Python module that is a link")


def test_a_folders_attributes_make_the_checkout_run_other_code(tmp_path: Path) -> None:
    """A goal that works on ``src/`` may add ``src/.gitattributes``; relay's rule reads
    the candidate's blobs (a line of two strings), while the box's checkout, and the
    person's once kept, re-encode ``src/calc.py``, where the line defines ``mul``."""
    calc = CALC + "\n\n" + ENCODED_LINE
    kept, project = run(
        tmp_path,
        "put('src/.gitattributes', 'calc.py working-tree-encoding=SHIFT-JIS\\n')\n"
        f"put('src/calc.py', {calc!r})\n",
        path="src/",
    )
    assert kept == [], plain_mul(project.root)
    assert not project.git("ls-files", "src/.gitattributes").strip()
    failures = project.read("docs/loop/state/failures.md")
    assert "src/.gitattributes" in failures and "names this very file" in failures, failures


def test_a_judged_share_on_pythonpath_carries_the_makers_start_up_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The person's PYTHONPATH names a folder shared with the makers and the judges
    (``bin/``, as the loop tests' conftest shares it): a maker could leave
    sitecustomize.py there and every judged Python would run it. The run refuses to start,
    in one line that names the variable and the share, as it does for a share on PATH."""
    shared = tmp_path / "bin"
    given = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [given, str(shared)])))
    project = make_project(tmp_path, retries=0, gates=(TEST_GATE, LINT_GATE), accept=None)
    assert project.loop("goal", "add", "Multiply", "--accept", ACCEPT).data == {"goal": "G1"}
    maker = project.script("maker", f"put(SCRIPTS.parent / 'bin' / 'sitecustomize.py', {SITE!r})\n")
    ran = project.loop("run", "--maker", maker)
    assert ran.status != 0, ran
    said = " ".join(str(e) for e in ran.errors)
    assert "PYTHONPATH holds" in said and "take it off PYTHONPATH" in said, said
    assert not (shared / "sitecustomize.py").exists()  # no maker ran


@pytest.mark.parametrize("name", ["vendor/.GIT/hooks/post-checkout", "vendor/git~1/config"])
def test_a_file_git_will_not_hold_is_refused_not_left_out(tmp_path: Path, name: str) -> None:
    """git's index leaves out, with a warning and success, a path it will not hold (a
    `.git` folder by another name): the candidate would be taken without it in silence.
    It is refused, in words that name it, and nothing of the change is kept."""
    calc = CALC + "\n\ndef mul(a, b):\n    return a * b\n"
    kept, project = run(tmp_path, f"put({name!r}, 'x')\nput('src/calc.py', {calc!r})\n")
    assert kept == []
    failures = project.read("docs/loop/state/failures.md")
    assert name in failures and "git will not hold" in failures, failures
