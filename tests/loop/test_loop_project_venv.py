"""The project's own virtualenv inside the person's clone (``.venv`` with an editable
install of the project, the most common set-up) runs the gates behind the boundary: in
namespaces relay's clone of the candidate is shown at the person's clone's path with the
virtualenv read-only in it, so ``.venv/bin/python``, the recorded PATH and the editable
install's ``.pth`` all lead to the candidate's code; the maker cannot write the
virtualenv nor see the person's git directory, and the virtualenv is never part of the
candidate. Env-level only, the gates use the person's virtualenv directly, with the
candidate's code first on PYTHONPATH."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from loop_project import Project, git

from relay.loop.guard import ALLOW_ENV_ONLY
from relay.ratchet.sandbox import NAMESPACES, level

TOKEN = "relay-node-token-5e1b9a"
VENV_PY = ".venv/bin/python"
GATE = f"{VENV_PY} -m pytest -q -p no:cacheprovider"
ACCEPT = f"{GATE} tests/test_mul.py"
ADD = "def add(a, b):\n    return a + b\n"
MUL = "\n\ndef mul(a, b):\n    return a * b\n"
TEST_MUL = "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"
FILES = {
    "src/calc/__init__.py": ADD,
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    # hatchling's dev-mode-dirs: the editable install is a .pth naming <clone>/src
    "pyproject.toml": textwrap.dedent(
        """\
        [project]
        name = "calc"
        version = "0.1.0"

        [build-system]
        requires = ["hatchling"]
        build-backend = "hatchling.build"

        [tool.hatch.build.targets.wheel]
        packages = ["src/calc"]
        dev-mode-dirs = ["src"]
        """
    ),
    ".gitignore": ".venv/\n__pycache__/\n",
}

needs_namespaces = pytest.mark.skipif(
    level() != NAMESPACES, reason="this machine cannot make user and mount namespaces"
)


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def venv_project(tmp_path: Path) -> Project:
    """The project with its own ``.venv`` (this interpreter's packages visible through a
    .pth, no network) and the package installed editable into it by pip; the loop set up
    with the venv's pytest as its gate and one goal: add ``mul`` with a test."""
    root, scripts = tmp_path / "calc", tmp_path / "scripts"
    root.mkdir()
    scripts.mkdir(exist_ok=True)
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    git("init", "-q", "-b", "main", cwd=root)
    git("config", "user.name", "Loop Test", cwd=root)
    git("config", "user.email", "loop@example.invalid", cwd=root)
    git("add", "-A", cwd=root)
    git("commit", "-q", "-m", "the calc project", cwd=root)
    venv = root / ".venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
        check=True,
    )
    site = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import sysconfig; print(sysconfig.get_path('purelib'))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    import sysconfig

    (Path(site) / "host.pth").write_text(sysconfig.get_path("purelib") + "\n")
    subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            "--no-index",
            "--no-build-isolation",
            "--no-deps",
            "-e",
            str(root),
        ],
        check=True,
        capture_output=True,
    )
    pth = "".join(p.read_text() for p in Path(site).glob("*.pth") if p.name != "host.pth")
    assert str(root / "src") in pth, pth  # an editable install naming the person's clone
    project = Project(root, scripts)
    ran = project.loop("init", "--retries", "0", "--gate", GATE)
    assert ran.status == 0, ran
    contract = project.read("docs/loop/CONTRACT.md")
    project.write("docs/loop/CONTRACT.md", contract.replace("backoff: 30s", "backoff: 10ms"))
    project.git("commit", "-q", "-am", "a fast back-off for the tests")
    assert project.loop("goal", "add", "Multiply", "--accept", ACCEPT).data == {"goal": "G1"}
    token = root / ".git" / "relay" / "token"
    token.parent.mkdir(parents=True, exist_ok=True)
    token.write_text(TOKEN + "\n")
    return project


def venv_listing(project: Project) -> list[str]:
    venv = project.root / ".venv"
    return sorted(str(p.relative_to(venv)) for p in venv.rglob("*") if "__pycache__" not in str(p))


def maker_body(project: Project, found: Path, calc: str) -> str:
    """A maker that writes ``calc`` and a test of mul, and records what it could reach."""
    token = str(project.root / ".git" / "relay" / "token")
    return (
        f"put('src/calc/__init__.py', {calc!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
        "import json, subprocess\n"
        "got = {'cwd': os.getcwd()}\n"
        "try:\n"
        "    pathlib.Path('.venv/planted.py').write_text('x = 1\\n')\n"
        "    got['venv_written'] = True\n"
        "except OSError:\n"
        "    got['venv_written'] = False\n"
        "try:\n"
        f"    got['token'] = pathlib.Path({token!r}).read_text()\n"
        "except OSError:\n"
        "    got['token'] = None\n"
        "got['remotes'] = subprocess.run(['git', 'remote'], capture_output=True,"
        " text=True).stdout\n"
        "got['venv_python'] = pathlib.Path('.venv/bin/python').exists()\n"
        f"pathlib.Path({str(found)!r}).write_text(json.dumps(got))\n"
    )


@needs_namespaces
def test_the_venvs_gate_runs_the_candidates_code_and_the_venv_stays_the_persons(
    tmp_path: Path,
) -> None:
    """``.venv/bin/python -m pytest`` passes at the baseline and on the candidate, whose
    new ``mul`` (absent from the person's clone) is what the editable install imports;
    the maker works at the person's clone's path, cannot write the venv nor read relay's
    token, sees no remote; the kept commit holds no part of the venv."""
    project = venv_project(tmp_path)
    before = venv_listing(project)
    found = tmp_path / "scripts" / "found.json"
    maker = project.script("maker", maker_body(project, found, ADD + MUL))
    ran = project.loop("run", "--maker", maker)
    assert [k["goal"] for k in ran.data.get("kept", [])] == ["G1"], ran
    assert ran.data["kept"][0]["gates"] == "2/2 gates pass (was 1/2)"  # the baseline's passed
    got = json.loads(found.read_text())
    assert got == {
        "cwd": str(project.root.resolve()),
        "venv_written": False,
        "token": None,
        "remotes": "",
        "venv_python": True,
    }
    assert venv_listing(project) == before
    assert ".venv" not in project.git("log", "--name-only", "--format=")
    assert project.read("src/calc/__init__.py") == ADD + MUL
    assert project.clean()


@needs_namespaces
def test_a_candidate_that_breaks_the_package_fails_its_gates(tmp_path: Path) -> None:
    """The candidate breaks ``add`` (the person's clone keeps it whole): the venv's gate
    imports the candidate's code, so test_add fails and nothing is kept."""
    project = venv_project(tmp_path)
    found = tmp_path / "scripts" / "found.json"
    broken = ADD.replace("a + b", "a - b") + MUL
    maker = project.script("maker", maker_body(project, found, broken))
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [], ran
    assert "test_add" in project.read("docs/loop/state/failures.md")
    assert project.read("src/calc/__init__.py") == ADD
    assert project.clean()


def test_env_level_only_gates_use_the_persons_venv_with_the_candidates_code_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without namespaces (RELAY_SANDBOX=env) the venv is reached by a link in relay's
    clone and the editable install's folder is put first on PYTHONPATH from the
    candidate's tree: a candidate adding ``mul`` is kept, the venv is not in it."""
    monkeypatch.setenv("RELAY_SANDBOX", "env")
    project = venv_project(tmp_path)
    found = tmp_path / "scripts" / "found.json"
    maker = project.script("maker", maker_body(project, found, ADD + MUL))
    ran = project.loop("run", "--maker", maker, ALLOW_ENV_ONLY)
    assert [k["goal"] for k in ran.data.get("kept", [])] == ["G1"], ran
    assert ".venv" not in project.git("log", "--name-only", "--format=")
    (project.root / ".venv" / "planted.py").unlink(missing_ok=True)  # no boundary here
    assert project.clean()


def test_only_untracked_environment_folders_at_the_top_are_shown(tmp_path: Path) -> None:
    """A folder with a pyvenv.cfg (whatever its name) and node_modules are shown; a plain
    folder, a file, .git and a name relay's clone already holds (tracked) are not."""
    from relay.ratchet.sandbox import environment_folders

    clone, tree = tmp_path / "clone", tmp_path / "tree"
    for name in ("venv", "env", ".venv", "node_modules", "docs", ".git", "tracked"):
        (clone / name).mkdir(parents=True)
    for name in ("venv", ".venv", "tracked"):
        (clone / name / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (clone / "README").write_text("x\n")
    (tree / "tracked").mkdir(parents=True)
    assert environment_folders(clone, tree) == (".venv", "node_modules", "venv")
