"""Every box sees the person's real HOME empty and gets only the variables it needs: a
credential no list names (``~/.s3cfg``, some tool's ``auth.json``) and a variable no
pattern catches (``SOME_RANDOM_SECRETLESS_NAME``) never reach a maker or a gate, while
what a role runs from in HOME (the project's virtualenv, the interpreter it was made from,
a version manager's folder) is shown read-only, so the gates still run.

The HOME here lies outside the machine's temporary folders, as a person's does: every box
has a /tmp of its own, so a HOME under /tmp would be hidden whatever relay did."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from loop_project import CALC_MUL, TEST_MUL, make_project

from relay.ratchet.sandbox import BOX_ID, NAMESPACES, Sandbox, _within, level, path_folders

needs_namespaces = pytest.mark.skipif(
    level() != NAMESPACES, reason="this machine cannot make user and mount namespaces"
)
# a login of every kind: no deny-list names the second
SECRETS = {
    ".s3cfg": "[default]\naccess_key = AKIAEXAMPLEEXAMPLE00\nsecret_key = s3-secret\n",
    ".config/whatever/auth.json": '{"token": "whatever-secret"}\n',
    ".netrc": "machine github.com login me password netrc-secret\n",
    ".git-credentials": "https://me:git-secret@github.com\n",
}
VARIABLES = {
    "DATABASE_URL": "postgres://db.example/app",  # no login in it: only the allow-list stops it
    "SENTRY_DSN": "x",
    "SOME_RANDOM_SECRETLESS_NAME": "x",
}
PROBE = """\
import json, os, pathlib


def read(path):
    try:
        return pathlib.Path(path).read_text()
    except OSError:
        return None


def wrote(path):
    try:
        pathlib.Path(path).write_text("owned\\n")
        return True
    except OSError:
        return False


def cached():  # a tool's cache (pip's, uv's) in the box's own HOME
    cache = pathlib.Path(os.path.expanduser("~/.cache/relay-probe"))
    try:
        cache.mkdir(parents=True, exist_ok=True)
        return wrote(cache / "entry") and not str(cache).startswith(HOME + "/")
    except OSError:
        return False
"""


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def person_home(outside: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME outside the temporary folders with a login of each kind in it, and the
    variables no box is given set in this process."""
    home = outside / "home"
    for name, text in SECRETS.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(text)
    monkeypatch.setenv("HOME", str(home))
    for name, value in VARIABLES.items():
        monkeypatch.setenv(name, value)
    return home


@needs_namespaces
def test_a_maker_and_the_gates_find_no_login_in_home_nor_a_variable_they_were_not_given(
    outside_temp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The clone, the maker's scripts and the project's virtualenv lie in the person's
    HOME; a gate runs the virtualenv's ``python``. The maker and the candidate's tests
    (in the gates' box) look for the logins and the variables and find nothing; HOME
    holds only what they run from, read-only; the virtualenv's gate runs."""
    home = person_home(outside_temp, monkeypatch)
    venv = home / "venvs" / "calc"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python*/site-packages"))
    ran_mark = home / "src" / "scripts" / "venv-gate.ran"
    (site / "homegate.py").write_text(  # counts its interpreter's starts in the shared folder
        f"import pathlib\np = pathlib.Path({str(ran_mark)!r})\n"
        "p.write_text(str(int(p.read_text()) + 1 if p.exists() else 1))\n"
    )
    # pytest as the project installed it: this interpreter's packages, through a .pth
    packages = [p for p in sys.path if p.endswith("site-packages")]
    (site / "homegate.pth").write_text("\n".join([*packages, "import homegate", ""]))
    monkeypatch.setenv("PATH", f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}")
    (home / "src").mkdir()
    venv_gate = "python -m pytest -q -p no:cacheprovider"  # the virtualenv's, by the PATH
    project = make_project(home / "src", retries=0, gates=(venv_gate,))
    body = (
        f"HOME = {str(home)!r}\n"
        "got = {\n"
        f"    'files': {{n: read(HOME + '/' + n) for n in {sorted(SECRETS)!r}}},\n"
        f"    'env': {{n: os.environ.get(n) for n in {sorted(VARIABLES)!r}}},\n"
        "    'home': sorted(os.listdir(HOME)),\n"
        "    'src': sorted(os.listdir(HOME + '/src')),\n"
        f"    'venv_changed': wrote({str(site / 'homegate.py')!r}),\n"
        "    'cache': cached(),\n"
        "}\n"
        "wrote(HOME + '/planted')\n"
    )
    record = "pathlib.Path({!r}).write_text(json.dumps(got))\n"
    module = PROBE + body + record.format(str(project.scripts / "gate-saw.json"))
    module += "\n\ndef test_nothing():\n    assert True\n"
    maker = project.script(
        "maker",
        PROBE
        + body
        + record.format(str(project.scripts / "maker-saw.json"))
        + f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
        + f"put('tests/test_zz_home.py', {module!r})\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    expected = {
        "files": dict.fromkeys(sorted(SECRETS)),
        "env": dict.fromkeys(sorted(VARIABLES)),
        "home": ["src", "venvs"],  # the clone and the scripts' folder, the virtualenv
        "src": ["calc", "scripts"],
        "venv_changed": False,
        "cache": True,
    }
    for who in ("maker", "gate"):
        # (the maker is shown the folder of the script its command names, read-only)
        src = ["calc", "programs", "scripts"] if who == "maker" else ["calc", "scripts"]
        seen = {**expected, "src": src}
        assert json.loads((project.scripts / f"{who}-saw.json").read_text()) == seen, who
    assert int(ran_mark.read_text()) >= 2  # the baseline's gate and the candidate's
    assert not (home / "planted").exists()  # what it wrote in the empty HOME went with it
    assert all((home / name).read_text() == text for name, text in SECRETS.items())


@needs_namespaces
def test_a_temporary_folder_inside_home_is_still_the_boxs_own(
    outside_temp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TMPDIR in HOME (``~/tmp``): the box's folder lies in the HOME it empties; it comes
    back at its own path, writable, and nothing else of HOME does."""
    home = person_home(outside_temp, monkeypatch)
    folder = home / "tmp" / "relay-judge-home"
    for name in ("tree", "home", "tmp"):
        (folder / name).mkdir(parents=True)
    (home / "tmp" / "another-box").mkdir()
    box = Sandbox(folder, folder / "tree", folder / "home", (), NAMESPACES)
    command = (
        f"cat {home}/.netrc {home}/.s3cfg 2>/dev/null; ls -A {home} {home}/tmp;"
        f" echo made > {folder}/tmp/made; pwd"
    )
    done = subprocess.run(
        ["/bin/sh", "-c", box.wrap(command)],
        cwd=folder / "tree",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split()
    assert "netrc-secret" not in done.stdout and "s3-secret" not in done.stdout, done.stdout
    assert lines == [f"{home}:", "tmp", f"{home}/tmp:", folder.name, str(folder / "tree")]
    assert (folder / "tmp" / "made").read_text() == "made\n"


def test_what_a_box_shows_of_home_is_what_the_programs_run_from(tmp_path: Path) -> None:
    """A PATH folder in HOME is shown, a version manager's whole (its shims need its
    versions), a toolchain's with its partner, a virtualenv with the interpreter it was
    made from; never HOME itself, a folder holding it or one in a hidden path; a folder
    outside HOME and the temporary folders is left as the box finds it (read-only)."""
    home, temp, box = tmp_path / "home", tmp_path / "tmp", tmp_path / "tmp" / "relay-judge-x"
    made = [
        ".pyenv/shims", ".pyenv/versions/3.12/bin", ".cargo/bin", ".rustup", ".local/bin",
        ".local/lib", "bin", "venvs/p/bin", ".config/gh/bin", "code/node_modules/@s/cli/bin",
    ]  # fmt: skip
    for name in made:
        (home / name).mkdir(parents=True)
    box.mkdir(parents=True)
    (home / "venvs/p/pyvenv.cfg").write_text(f"home = {home / '.pyenv/versions/3.12/bin'}\n")
    path = [".pyenv/shims", ".cargo/bin", ".local/bin", "bin", "venvs/p/bin", ".config/gh/bin"]
    path += ["code/node_modules/@s/cli/bin", ""]  # "": HOME itself
    given = os.pathsep.join([*(str(home / p) for p in path), "/usr/bin", str(tmp_path)])
    shown = path_folders(given, [temp], box, [home / ".config/gh"], [home])
    names = sorted(str(p.relative_to(home)) for p in shown)
    assert names == [
        ".cargo", ".local/bin", ".local/lib", ".pyenv", ".rustup", "bin",
        "code/node_modules/@s/cli", "venvs/p",
    ]  # fmt: skip


@needs_namespaces
def test_a_folder_shared_inside_a_folder_shown_from_home_stays_writable(
    outside_temp: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A PATH folder in HOME is shown read-only; a folder the person shares inside it
    (``RELAY_SANDBOX_SHARE``) is bound after it, so it is still there and writable."""
    home = person_home(outside_temp, monkeypatch)
    tools, logs = home / "tools" / "bin", home / "tools" / "bin" / "logs"
    logs.mkdir(parents=True)
    (tools / "hello").write_text("#!/bin/sh\necho hello from home\n")
    (tools / "hello").chmod(0o755)
    if os.getuid() == 0:  # writable by the boxes' user, as a person is told to make it
        os.chown(logs, BOX_ID, -1)
    monkeypatch.setenv("RELAY_SANDBOX_SHARE", str(logs))
    folder = tmp_path / "relay-judge-x"  # a box in the machine's temporary folder
    for name in ("tree", "home", "tmp"):
        (folder / name).mkdir(parents=True)
    box = Sandbox(folder, folder / "tree", folder / "home", (), NAMESPACES)
    env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"}
    command = (
        f"hello; echo log > {logs}/run.log; touch {tools}/planted 2>/dev/null || echo read-only;"
        f" ls -A {home}; cat {home}/.s3cfg 2>/dev/null || echo no-s3cfg"
    )
    done = subprocess.run(
        ["/bin/sh", "-c", box.wrap(command, env)],
        cwd=folder / "tree",
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n") == ["hello from home", "read-only", "tools", "no-s3cfg", ""]
    assert (logs / "run.log").read_text() == "log\n" and not (tools / "planted").exists()


@needs_namespaces
def test_a_login_inside_a_tool_folder_shown_from_home_is_not_readable_in_the_box(
    outside_temp: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """~/.cargo and ~/.pyenv are shown whole (their programs are on PATH): cargo's
    registry token in its config.toml and a prefix's pip.conf were read from inside the
    box. They are hidden, whether the hidden paths name them or not (the box finds them
    in every folder it shows); the tools and the files beside them are still there."""
    from relay.ratchet.sandbox import hidden_paths

    home = person_home(outside_temp, monkeypatch)
    logins = [".cargo/config.toml", ".pyenv/versions/3.11.7/pip.conf"]
    for name in logins:
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text("token = box-secret\n")
        (home / name).with_name("README").write_text("box-visible\n")
    for tool in (".cargo/bin", ".pyenv/shims"):
        (home / tool).mkdir(parents=True)
        (home / tool / "hello").write_text(f"#!/bin/sh\necho hello from {tool}\n")
        (home / tool / "hello").chmod(0o755)
    folder = tmp_path / "relay-judge-x"
    for name in ("tree", "home", "tmp"):
        (folder / name).mkdir(parents=True)
    hidden = hidden_paths(tmp_path / "clone", tmp_path / "clone/.git", [], os.environ)
    tools = f"{home / '.cargo/bin'}{os.pathsep}{home / '.pyenv/shims'}"
    env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"}
    near = [str(Path(n).with_name("README")) for n in logins]
    reads = " ".join(f"cat {home / n} 2>/dev/null;" for n in [*logins, *near])
    command = f"{home}/.pyenv/shims/hello; hello; {reads}"
    saw: dict[str, str] = {}
    for name, hide in (("bare", ()), ("hidden", hidden)):
        box = Sandbox(folder, folder / "tree", folder / "home", hide, NAMESPACES)
        done = subprocess.run(
            ["/bin/sh", "-c", box.wrap(command, env)],
            cwd=folder / "tree",
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        saw[name] = done.stdout
    for name in ("bare", "hidden"):
        assert saw[name].split("\n") == [
            "hello from .pyenv/shims",
            "hello from .cargo/bin",
            "box-visible",  # shown whole: what lies beside a login is read
            "box-visible",
            "",
        ], name


@given(
    st.lists(st.sampled_from(["a", "ab", "b", ".x", "a b", "é"]), max_size=4),
    st.lists(st.sampled_from(["a", "ab", "b", ".x", "a b", "é"]), max_size=4),
    st.sampled_from(["", "/", "//", "///"]),
    st.sampled_from(["/", "//", "///"]),
)
def test_the_folder_checks_read_paths_as_pathlib_does(
    inner: list[str], outer: list[str], root: str, outer_root: str
) -> None:
    """The box's folder checks, made on text for speed, agree with ``is_relative_to``:
    a sibling that shares a prefix (``/ab`` beside ``/a``) is not inside, / holds every
    absolute path, a relative path is never inside an absolute one, and POSIX's ``//`` is
    a root of its own."""
    path = Path(root, *inner)
    folder = Path(outer_root, *outer)
    assert _within(path, folder) == path.is_relative_to(folder)
    assert _within(folder, path) == folder.is_relative_to(path)
