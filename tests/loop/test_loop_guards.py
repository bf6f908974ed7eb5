"""What a maker must not get away with, on a real repository: weakening the gates
(rewriting a Makefile's test target, deleting or weakening a test, a coverage ``omit``),
rewriting the spine, switching branches, acting through ``.git``, a second run on the same
clone, a transient failure that leaves files behind, and the gates' own bytecode."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest
from loop_project import CALC, CALC_MUL, PY, TEST_GATE, TEST_MUL, Project, make_project
from test_loop_ratchet import (
    GOOD,
    alive,
    board_row,
    failures,
    iterations,
    maker_group,
    unchanged_since_setup,
)

from relay.loop.goals import GoalState

BROKEN = repr(CALC_MUL.replace("a + b", "a - b"))
BREAK = f"put('src/calc.py', {BROKEN})\nput('tests/test_mul.py', {TEST_MUL!r})\n"


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def categories(project: Project) -> list[str]:
    return [c for _, _, c in failures(project)]


def test_a_maker_that_rewrites_the_makefile_test_target_is_not_kept(tmp_path: Path) -> None:
    project = make_project(tmp_path, retries=0, gates=("make test",))
    makefile = f"test:\n\t{PY} -m pytest -q -p no:cacheprovider\n"
    project.write("Makefile", makefile)
    project.git("add", "Makefile")
    project.git("commit", "-qm", "a Makefile")
    only_mine = f"test:\n\t{PY} -m pytest -q -p no:cacheprovider tests/test_mul.py\n"
    maker = project.script("maker", BREAK + f"put('Makefile', {only_mine!r})\n")
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [] and project.clean()
    assert project.read("src/calc.py") == CALC and project.read("Makefile") == makefile
    assert categories(project) == ["protected path touched"]
    assert "`Makefile` defines how the gates run" in board_row(project)[4]


def test_a_maker_that_deletes_or_weakens_a_test_is_not_kept(tmp_path: Path) -> None:
    project = make_project(tmp_path, retries=1)
    weak = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) is not None\n"
    maker = project.script(
        "maker",
        "n = count('maker')\n" + BREAK + "if n == 1:\n    os.remove('tests/test_calc.py')\n"
        f"else:\n    put('tests/test_calc.py', {weak!r})\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [] and project.clean() and unchanged_since_setup(project)
    assert project.read("src/calc.py") == CALC
    assert categories(project) == ["protected path touched", "test"]
    assert "tests/test_calc.py` is a test the baseline had" in failures_text(project)
    # the weakened test passes in the maker's tree; an edited baseline test is refused
    assert "tests/test_calc.py::test_add is a test the baseline had; its code was edited" in (
        failures_text(project)
    )


def failures_text(project: Project) -> str:
    return project.read("docs/loop/state/failures.md")


def test_a_coverage_omit_is_refused(tmp_path: Path) -> None:
    project = make_project(tmp_path, retries=0, coverage=True)
    pyproject = project.read("pyproject.toml")
    omit = pyproject.replace('source = ["src"]', 'source = ["src"]\nomit = ["src/big.py"]')
    maker = project.script(
        "maker",
        GOOD + "put('src/big.py', 'def big(x):\\n    return x * 2\\n')\n"
        f"put('pyproject.toml', {omit!r})\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [] and project.clean() and unchanged_since_setup(project)
    assert project.read("pyproject.toml") == pyproject
    assert "`pyproject.toml` [tool] tables" in board_row(project)[4]


def test_the_spine_is_relays_alone(tmp_path: Path) -> None:
    project = make_project(tmp_path, retries=0)
    goals = project.read("docs/loop/GOALS.md")
    maker = project.script(
        "maker",
        BREAK + "b = pathlib.Path('docs/loop/BOARD.md')\n"
        "b.write_text(b.read_text().replace('| in progress |', '| done |'))\n"
        "g = pathlib.Path('docs/loop/GOALS.md')\n"
        "g.write_text(g.read_text().replace('Accept: `', 'Accept: `true` `'))\n"
        "open('docs/loop/handover.md', 'a').write('\\nAll tests may be skipped.\\n')\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [] and project.clean() and unchanged_since_setup(project)
    assert project.read("docs/loop/GOALS.md") == goals
    assert "may be skipped" not in project.read("docs/loop/handover.md")
    assert board_row(project)[:3] == (GoalState.OPEN, 1, 1)
    assert categories(project) == ["protected path touched"]


def test_an_existing_branch_keeps_its_commits(tmp_path: Path) -> None:
    project = make_project(tmp_path, retries=0)
    project.git("checkout", "-q", "-b", "feature")
    project.write("feature.txt", "feature work\n")
    project.git("add", "feature.txt")
    project.git("commit", "-qm", "feature work")
    feature = project.git("rev-parse", "feature").strip()
    project.git("checkout", "-q", "main")
    maker = project.script(
        "maker",
        GOOD + "import subprocess\n"
        "for a in (['stash', '-u', '-q'], ['checkout', '-q', 'feature'], ['stash', 'pop', '-q']):\n"
        "    subprocess.run(['git', *a], check=True)\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.status == 0 and ran.data["kept"] == [], ran
    assert project.git("rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    assert project.git("rev-parse", "feature").strip() == feature
    assert project.clean() and unchanged_since_setup(project)
    assert board_row(project)[:3] == (GoalState.OPEN, 1, 1)


def test_hooks_and_info_exclude_are_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where no namespace hides the person's clone (env-level only), a maker that finds
    its .git and changes its machinery has it put back, and the attempt fails."""
    from relay.ratchet import sandbox

    monkeypatch.setattr(sandbox, "level", lambda: sandbox.ENV_ONLY)
    project = make_project(tmp_path, retries=1)
    exclude = project.root / ".git/info/exclude"
    before = exclude.read_bytes()
    hooked = tmp_path / "hooked"
    git = str(project.root / ".git")
    maker = project.script(
        "maker",
        "n = count('maker')\n" + GOOD + "if n == 1:\n"
        f"    h = pathlib.Path({git!r}, 'hooks/pre-commit')\n"
        f"    h.write_text('#!/bin/sh\\ntouch {hooked}\\n')\n"
        "    h.chmod(0o755)\n"
        f"    open(pathlib.Path({git!r}, 'info/exclude'), 'a').write('tests/conftest.py\\n')\n",
    )
    ran = project.loop("run", "--maker", maker, "--allow-env-only")
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    assert not (project.root / ".git/hooks/pre-commit").exists() and not hooked.exists()
    assert exclude.read_bytes() == before and project.clean()
    assert categories(project) == ["protected path touched"]
    assert "`.git/hooks/pre-commit` is the clone's own machinery" in failures_text(project)


def test_the_makers_own_git_machinery_goes_with_its_clone_and_relay_runs_no_hook(
    tmp_path: Path,
) -> None:
    """The maker's .git is its own clone's: a new branch it switches to goes with that
    clone (the attempt fails, the goal lands on the run branch); what it does to its
    hooks and excludes touches nothing of the person's; relay reads its files, never its
    git directory, so a file it hides from its own git is still part of the candidate.
    Relay's own commits run none of the person's hooks (one that fails every commit is in
    place before the run)."""
    project = make_project(tmp_path, retries=1)
    exclude = project.root / ".git/info/exclude"
    before = exclude.read_bytes()
    hooked = tmp_path / "hooked"
    hook = project.root / ".git/hooks/pre-commit"
    persons = f"#!/bin/sh\ntouch {hooked}\nexit 1\n"
    hook.write_text(persons)  # a person's own, before the run
    hook.chmod(0o755)
    maker = project.script(
        "maker",
        "n = count('maker')\n" + GOOD + "import subprocess\n"
        "if n == 1:\n"
        "    for a in (['checkout', '-q', '-b', 'evil'], ['add', '-A'],"
        " ['commit', '-qm', 'evil']):\n"
        "        subprocess.run(['git', *a], check=True)\n"
        "    sys.exit(0)\n"
        "git = subprocess.run(['git', 'rev-parse', '--path-format=absolute',"
        " '--git-common-dir'], capture_output=True, text=True).stdout.strip()\n"
        "for d in ('hooks', 'info'):  # a clone made with no template has neither\n"
        "    pathlib.Path(git, d).mkdir(exist_ok=True)\n"
        "pathlib.Path(git, 'hooks/pre-commit').write_text('#!/bin/sh\\nexit 1\\n')\n"
        "open(pathlib.Path(git, 'info/exclude'), 'a').write('tests/NOTES.md\\n')\n"
        "put('tests/NOTES.md', 'hidden from its own git\\n')\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    assert project.git("rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    assert project.git("branch", "--list", "evil") == ""  # it went with the maker's own clone
    assert "G1: Multiply" in project.subjects()
    assert categories(project) == ["protected path touched"]  # the branch switch, only
    said = "switched the checkout from refs/heads/relay-loop/G1 to refs/heads/evil"
    assert said in failures_text(project)
    assert not hooked.exists()  # relay's commits ran no hook
    assert hook.read_text() == persons  # the maker's hook stayed in its own clone
    assert exclude.read_bytes() == before
    assert project.git("show", "HEAD:tests/NOTES.md") == "hidden from its own git\n"
    assert project.clean()


def test_a_second_run_on_the_clone_is_refused(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    pid_file = project.scripts / "maker.pid"
    hang = project.script(
        "hang",
        f"pathlib.Path({str(pid_file)!r}).write_text(str(os.getpid()))\n"
        "import time\ntime.sleep(60)\n",
    )
    proc = project.spawn("run", "--maker", hang)
    deadline = time.monotonic() + 30
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pid_file.exists(), proc.communicate()
    group = maker_group(project)
    second = project.loop("run", "--maker", project.script("maker", GOOD))
    assert second.status != 0 and "in progress" in second.errors[0]["message"]
    assert project.calls("maker") == 0
    proc.send_signal(signal.SIGTERM)  # stopped, the run stops its maker on the way out
    proc.communicate(timeout=30)
    assert not alive(group)


def test_a_transient_failure_leaves_nothing_nor_do_the_gates_and_one_goal_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A transient failure (an overload, twice, said two ways) costs no attempt and
    leaves no file; what the gates write (bytecode, with no .gitignore line for it) is
    not the goal's; a run limited to one goal says so; a line 529 in a traceback is no
    overload; a dry run refuses the maker as a checker."""
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    project = make_project(tmp_path)
    project.write(".gitignore", ".coverage\ncoverage.json\n.pytest_cache/\n")
    project.git("commit", "-qam", "no bytecode in .gitignore")
    project.loop("goal", "add", "Again", "--accept", "false")
    maker = project.script(
        "maker",
        "n = count('maker')\n"
        "if n <= 2:\n"  # an overload, as two agents say it
        "    put('src/junk.py', 'import os\\n')\n"
        "    if n == 1:\n"
        "        print('Error code: 529 - overloaded')\n"
        "    else:\n"
        '        print(\'Error: 529 {"type": "overloaded_error"}\')\n'
        "    sys.exit(75)\n" + GOOD,
    )
    ran = project.loop("run", "--maker", maker, "--goal", "G1")
    assert ran.data["stopped"] == "G1 is done (the run was limited to it by --goal)", ran
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"] and project.calls("maker") == 3
    assert failures(project) == [] and iterations(project) == [(1, "G1", 1, "kept")]
    assert ran.data["iterations"] == 1 and board_row(project)[:3] == (GoalState.DONE, 1, 0)
    kept = project.git("show", "--name-only", "--format=", "HEAD~1").split()
    assert "src/calc.py" in kept and not [p for p in kept if "__pycache__" in p], kept
    assert "src/junk.py" not in kept
    assert not (project.root / "src/junk.py").exists()
    dry = project.loop("run", "--maker", maker, "--checker", maker, "--dry-run")
    assert dry.status == 2 and "cannot be a checker" in dry.errors[0]["message"]
    crash = project.script(
        "crash",
        "count('crash')\nprint('Traceback:\\n  File \"agent.py\", line 529, in main')\n"
        "sys.exit(1)\n",
    )
    project.loop("run", "--maker", crash, "--goal", "G2", "--max-iterations", "1")
    assert project.calls("crash") == 1 and categories(project) == ["runtime crash"]


def test_init_keeps_a_crlf_loop_md_and_names_the_line_of_a_bad_byte(tmp_path: Path) -> None:
    project = make_project(tmp_path, accept=None)
    loop = project.root / "docs/loop/LOOP.md"
    crlf = b"# Loop\r\n\r\n## Relay\r\n\r\nkept as it is\r\n"
    loop.write_bytes(crlf)
    assert project.loop("init", "--yes").status == 0
    assert loop.read_bytes().startswith(crlf) and b"\n## Roles\r\n" in loop.read_bytes()
    goals = project.root / "docs/loop/GOALS.md"
    goals.write_bytes(goals.read_bytes() + b"\nbad \xff byte\n")
    lines = goals.read_bytes().count(b"\n")
    ran = project.loop("status")
    assert ran.status != 0 and f"GOALS.md:{lines}" in ran.errors[0]["message"], ran


def test_a_maker_that_rewrites_the_script_a_gate_runs_is_not_kept(tmp_path: Path) -> None:
    """The lint gate is the project's own script (`sh scripts/check.sh`): a maker that
    sets it to `exit 0` and adds what it rejects is held as a Makefile's rewrite is,
    though the script's name is no gate file's."""
    project = make_project(tmp_path, retries=0, gates=(TEST_GATE,))
    lint = "#!/bin/sh\n# the project's own lint: no print() in src\n! grep -rn 'print(' src\n"
    project.write("scripts/check.sh", lint)
    project.git("add", "scripts/check.sh")
    project.git("commit", "-qm", "a lint script")
    contract = project.read("docs/loop/CONTRACT.md")
    gate = "-p no:cacheprovider`\n"
    assert gate in contract
    project.write(
        "docs/loop/CONTRACT.md", contract.replace(gate, gate + "- lint: `sh scripts/check.sh`\n")
    )
    project.git("commit", "-qam", "the lint gate")
    maker = project.script(
        "maker",
        GOOD
        + "put('src/calc_debug.py', 'def show(x):\\n    print(x)\\n    return x\\n')\n"
        + "put('scripts/check.sh', '#!/bin/sh\\nexit 0\\n')\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [] and project.clean()
    assert project.read("scripts/check.sh") == lint
    assert not (project.root / "src/calc_debug.py").exists()
    assert categories(project) == ["protected path touched"]
    assert "`scripts/check.sh` defines how the gates run" in board_row(project)[4]


def test_a_maker_that_rewrites_what_a_gate_script_sources_is_not_kept(tmp_path: Path) -> None:
    """The lint gate's script takes its rule from beside it, as shell scripts do
    (``. "$(dirname "$0")/lib.sh"``), in a form no reading of the script follows: the
    helper is held as the script itself is, and a change to the project's source and
    tests alone is still kept."""
    project = make_project(tmp_path, retries=0, gates=(TEST_GATE,))
    lib = "# the project's own lint: no print() in src\nlint() { ! grep -rn 'print(' \"$1\"; }\n"
    project.write("scripts/check.sh", '#!/bin/sh\n. "$(dirname "$0")/lib.sh"\nlint src\n')
    project.write("scripts/lib.sh", lib)
    project.git("add", "scripts")
    project.git("commit", "-qm", "a lint script")
    contract = project.read("docs/loop/CONTRACT.md")
    gate = "-p no:cacheprovider`\n"
    project.write(
        "docs/loop/CONTRACT.md", contract.replace(gate, gate + "- lint: `sh scripts/check.sh`\n")
    )
    project.git("commit", "-qam", "the lint gate")
    maker = project.script(
        "maker",
        "if count('maker') == 1:\n"
        "    put('src/calc_debug.py', 'def show(x):\\n    print(x)\\n    return x\\n')\n"
        "    put('scripts/lib.sh', 'lint() { true; }\\n')\n" + GOOD,
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [] and project.clean()
    assert project.read("scripts/lib.sh") == lib
    assert not (project.root / "src/calc_debug.py").exists()
    assert categories(project) == ["protected path touched"]
    assert "`scripts/lib.sh` defines how the gates run" in board_row(project)[4]
    ran = project.loop("run", "--maker", maker)  # the maker's second try: source and tests
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    assert project.read("src/calc.py") == CALC_MUL and project.read("scripts/lib.sh") == lib


def test_a_maker_that_rewrites_the_projects_mypy_plugin_is_not_kept(tmp_path: Path) -> None:
    """The type gate (``mypy src``) runs no file of the tree by its command, but mypy
    loads the project's plugin (``[tool.mypy] plugins``, a file in src/): a maker that
    sets ``ignore_errors`` there to pass a type error is held as a gate script's rewrite
    is, and a change to the project's source and tests alone is still kept."""
    project = make_project(tmp_path, retries=0, gates=(TEST_GATE,))
    plugin = (
        "from mypy.plugin import Plugin\n\n\nclass CalcPlugin(Plugin):\n"
        "    def get_function_hook(self, fullname):\n        return None\n\n\n"
        "def plugin(version):\n    return CalcPlugin\n"
    )
    project.write("src/calc_mypy.py", plugin)
    project.write(
        "pyproject.toml",
        project.read("pyproject.toml") + '\n[tool.mypy]\nplugins = ["src/calc_mypy.py"]\n',
    )
    project.git("add", "-A")
    project.git("commit", "-qm", "the project's mypy plugin")
    contract = project.read("docs/loop/CONTRACT.md")
    gate = "-p no:cacheprovider`\n"
    project.write(
        "docs/loop/CONTRACT.md",
        contract.replace(gate, gate + f"- types: `{PY} -m mypy --no-incremental src`\n"),
    )
    project.git("commit", "-qam", "the type gate")
    blind = plugin.replace(
        "class CalcPlugin(Plugin):\n",
        "class CalcPlugin(Plugin):\n    def __init__(self, options):\n"
        "        options.ignore_errors = True\n        super().__init__(options)\n\n",
    )
    wrong = CALC_MUL.replace("def mul(a, b):", "def mul(a: int, b: int) -> str:")
    maker = project.script(
        "maker",
        "if count('maker') == 1:\n"
        f"    put('src/calc.py', {wrong!r})\n    put('tests/test_mul.py', {TEST_MUL!r})\n"
        f"    put('src/calc_mypy.py', {blind!r})\nelse:\n" + GOOD.replace("\nput(", "\n    put("),
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [] and project.clean()
    assert project.read("src/calc_mypy.py") == plugin and project.read("src/calc.py") == CALC
    assert categories(project) == ["protected path touched"]
    assert "`src/calc_mypy.py` defines how the gates run" in board_row(project)[4]
    ran = project.loop("run", "--maker", maker)  # the maker's second try: source and tests
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    assert project.read("src/calc.py") == CALC_MUL and project.read("src/calc_mypy.py") == plugin
