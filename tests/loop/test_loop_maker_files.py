"""What relay reads of a maker's clone after the maker ran: its files only. The clone's
objects are copies (a maker rewriting one in place cannot reach the person's), the
candidate is hashed with relay's own git directory (nothing the maker configured in its
git directory runs in relay), and the files the maker writes for relay (its account, its
reason) are read only as regular files, redacted, never through a link."""

from __future__ import annotations

import contextlib
import json
import subprocess
from pathlib import Path

import pytest
from loop_project import CALC_MUL, TEST_MUL, make_project

TOKEN = "relay-node-token-4f1b9c"


def test_a_maker_rewriting_its_objects_in_place_leaves_the_persons_intact(
    tmp_path: Path,
) -> None:
    """Every object file of the maker's clone overwritten in place (as a hard link would
    share it with the person's clone): the person's objects stay whole, and putting the
    tree back writes nothing the maker chose."""
    project = make_project(tmp_path, retries=0)
    calc = project.read("src/calc.py")
    maker = project.script(
        "maker",
        """
        import subprocess
        common = subprocess.run(["git", "rev-parse", "--path-format=absolute",
                                 "--git-common-dir"], capture_output=True, text=True).stdout
        rewritten = 0
        for obj in pathlib.Path(common.strip(), "objects").rglob("*"):
            if obj.is_file():
                try:
                    obj.chmod(0o644)
                    with obj.open("r+b") as out:
                        out.truncate(0)
                        out.write(b"import os  # backdoor\\n")
                    rewritten += 1
                except OSError:
                    pass
        assert rewritten, "no object to rewrite"
        sys.exit(1)
        """,
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [], ran
    fsck = subprocess.run(
        ["git", "fsck", "--full", "--strict"], cwd=project.root, capture_output=True, text=True
    )
    assert fsck.returncode == 0, fsck.stderr
    assert project.read("src/calc.py") == calc and "backdoor" not in calc
    assert project.git("show", "HEAD~0:src/calc.py") == calc


def test_what_the_maker_configures_in_its_git_directory_never_runs_in_relay(
    tmp_path: Path,
) -> None:
    """An fsmonitor, a clean filter for every path, an external diff and hooks set in the
    maker's own clone: relay takes the candidate without running any of them, and the
    maker's commit is folded."""
    project = make_project(tmp_path)
    ran_marker = tmp_path / "payload-ran"
    payload = tmp_path / "scripts" / "payload.sh"
    payload.write_text(f"#!/bin/sh\necho ran >> {ran_marker}\ncat\n")
    payload.chmod(0o755)
    maker = project.script(
        "maker",
        f"""
        import subprocess
        put("src/calc.py", {CALC_MUL!r})
        put("tests/test_mul.py", {TEST_MUL!r})
        explain("Added mul with its test.\\n")
        subprocess.run(["git", "add", "-A"], check=True)
        subprocess.run(["git", "commit", "-qm", "maker's own"], check=True)
        pay = {str(payload)!r}
        for key, value in (("core.fsmonitor", pay), ("filter.ev.clean", pay),
                           ("filter.ev.smudge", pay), ("filter.ev.required", "true"),
                           ("diff.external", pay), ("core.hooksPath", ".git/evil-hooks")):
            subprocess.run(["git", "config", key, value], check=True)
        put(".git/info/attributes", "* filter=ev\\n")
        for hook in ("pre-commit", "post-index-change", "reference-transaction"):
            put(".git/evil-hooks/" + hook, "#!/bin/sh\\n" + pay + " </dev/null\\n")
            os.chmod(".git/evil-hooks/" + hook, 0o755)
        put("src/calc.py", {CALC_MUL!r} + "# after its commit\\n")  # relay must hash this
        """,
    )
    ran = project.loop("run", "--maker", maker)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    assert not ran_marker.exists(), ran_marker.read_text()
    assert "maker's own" not in project.subjects()
    assert project.read("src/calc.py") == CALC_MUL + "# after its commit\n" and project.clean()


@pytest.mark.parametrize("how", ["symlink", "hardlink", "proc"])
def test_a_makers_account_is_read_as_its_own_file_and_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """The maker's account linked to relay's token (symbolically, hard, or through /proc
    to relay's own environment): no token reaches the commit message, handover.md or the
    output; an account that names a secret outright has it redacted."""
    monkeypatch.setenv("RELAY_TOKEN", "relay-env-secret-77aa")
    project = make_project(tmp_path)
    (project.root / ".git/relay").mkdir(exist_ok=True)
    token = project.root / ".git/relay/token"
    token.write_text(TOKEN + "\n")
    target = {
        "symlink": str(token),
        "hardlink": str(token),
        "proc": f"/proc/{__import__('os').getpid()}/environ",
    }[how]
    link = "os.link" if how == "hardlink" else "os.symlink"
    maker = project.script(
        "maker",
        f"""
        put("src/calc.py", {CALC_MUL!r})
        put("tests/test_mul.py", {TEST_MUL!r})
        try:
            {link}({target!r}, WHY)
        except OSError:  # the token is hidden from this maker: say it outright instead
            explain("Added mul. relay-env-secret-77aa\\x00 and {TOKEN}\\n")
        """,
    )
    ran = project.loop("run", "--maker", maker)
    # a linked account is no account (the change is unexplained); a plain one is kept
    assert ran.status == 0, ran
    published = "\n".join(
        [
            project.git("log", "--format=%B", "-n", "5"),
            project.read("docs/loop/handover.md"),
            project.read("docs/loop/BOARD.md"),
            str(ran.data),
            ran.stderr,
        ]
    )
    for secret in (TOKEN, "relay-env-secret-77aa"):
        assert secret not in published, how
    assert "\0" not in published


def test_a_makers_reason_linked_to_the_token_reaches_nothing(tmp_path: Path) -> None:
    """RELAY_LOOP_CANNOT linked to relay's token, then "cannot do this" (exit 3): the
    token is in no output, BOARD.md or handover.md."""
    project = make_project(tmp_path)
    (project.root / ".git/relay").mkdir(exist_ok=True)
    token = project.root / ".git/relay/token"
    token.write_text(TOKEN + "\n")
    maker = project.script(
        "maker",
        f"""
        reason = os.environ["RELAY_LOOP_CANNOT"]
        try:
            os.symlink({str(token)!r}, reason)
        except OSError:
            put(reason, "the goal needs {TOKEN}\\n")
        UNEXPLAINED = True
        sys.exit(3)
        """,
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [], ran
    published = "\n".join(
        [
            project.git("log", "-p", "-n", "5"),
            project.read("docs/loop/handover.md"),
            project.read("docs/loop/BOARD.md"),
            str(ran.data),
            str(ran.errors),
            ran.stderr,
        ]
    )
    assert TOKEN not in published


@pytest.mark.parametrize(
    ("path", "text", "calc"),
    [
        (
            "pytest.ini",
            "[pytest]\npythonpath = src\naddopts = --deselect tests/test_calc.py::test_add\n",
            CALC_MUL.replace("return a + b", "return 0"),
        ),
        ("ruff.toml", "line-length = 100\n[lint]\nselect = []\n", "import os\n" + CALC_MUL),
        ("src/calc.py", None, "# ruff: noqa\nimport os\n" + CALC_MUL),
    ],
)
def test_a_new_gate_file_or_file_wide_suppression_is_a_gate_change(
    tmp_path: Path, path: str, text: str | None, calc: str
) -> None:
    """A new pytest.ini that deselects a baseline test, a new ruff.toml that selects
    nothing, a `# ruff: noqa` added to a module: each weakens a gate, so the attempt fails
    as touching what defines the gates, and nothing of it is kept."""
    project = make_project(tmp_path, retries=0)
    extra = f"put({path!r}, {text!r})\n" if text is not None else ""
    maker = project.script(
        "maker",
        f'put("src/calc.py", {calc!r})\nput("tests/test_mul.py", {TEST_MUL!r})\n' + extra,
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [], ran
    failures = project.read("docs/loop/state/failures.md")
    assert f"`{path}`" in failures and (
        "defines how the gates run" in failures or "switches a gate off" in failures
    ), failures
    assert project.read("src/calc.py") == project.git("show", "HEAD:src/calc.py")
    assert not (project.root / "pytest.ini").exists() and project.clean()


def test_a_gate_that_changes_the_clones_git_machinery_is_put_back_and_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where no namespace hides the person's clone (env-level only), a new test whose
    import sets core.fsmonitor and writes a pre-commit hook in the person's clone (its
    gates run in a clone of relay's own, so it names the person's by its path): both are
    put back before relay runs git again (the payload never runs), and the attempt fails."""
    from relay.ratchet import sandbox

    monkeypatch.setattr(sandbox, "level", lambda: sandbox.ENV_ONLY)
    project = make_project(tmp_path, retries=0)
    marker = tmp_path / "payload-ran"
    payload = tmp_path / "scripts" / "payload.sh"
    payload.write_text(f"#!/bin/sh\necho ran >> {marker}\n")
    payload.chmod(0o755)
    clone = str(project.root)
    reach = (
        "import pathlib, subprocess\n"
        f"subprocess.run(['git', '-C', {clone!r}, 'config', 'core.fsmonitor', {str(payload)!r}])\n"
        f"hook = pathlib.Path({clone!r}, '.git', 'hooks', 'pre-commit')\n"
        f"hook.write_text('#!/bin/sh\\n' + {str(payload)!r} + '\\n')\n"
        "hook.chmod(0o755)\n\n\n"
        "def test_nothing():\n    assert True\n"
    )
    maker = project.script(
        "maker",
        f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
        f"put('tests/test_zz_reach.py', {reach!r})\n",
    )
    ran = project.loop("run", "--maker", maker, "--allow-env-only")
    assert ran.data["kept"] == [], ran
    config = (project.root / ".git/config").read_text()
    assert "fsmonitor" not in config and not (project.root / ".git/hooks/pre-commit").exists()
    assert not marker.exists()
    assert "git machinery" in project.read("docs/loop/state/failures.md")
    assert project.clean()


def test_the_maker_cannot_write_where_relay_gates_or_cron_would_run_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Behind namespaces the real HOME, this interpreter's prefix and /etc are read-only
    for the maker (a .bashrc, a .pth or a cron file would run later outside its box), and
    an agent's own configuration folder in HOME is not there at all (an agent role works
    on a copy of its login in its box's scratch HOME)."""
    import sys

    from relay.ratchet.sandbox import NAMESPACES, level

    if level() != NAMESPACES:
        pytest.skip("this machine cannot make user and mount namespaces")
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".bashrc").write_text("# the person's\n")
    monkeypatch.setenv("HOME", str(home))
    found = tmp_path / "scripts" / "found.json"  # shared with the boxes (conftest)
    probe = Path(sys.prefix) / "relay-maker-probe.pth"
    targets = [str(home / ".bashrc"), str(home / "new-file"), str(probe), "/etc/relay-probe"]
    project = make_project(tmp_path)
    maker = project.script(
        "maker",
        f"""
        import json
        wrote = {{}}
        for path in {targets!r}:
            try:
                with open(path, "a") as out:
                    out.write("touch /tmp/owned\\n")
                wrote[path] = True
            except OSError:
                wrote[path] = False
        real_home = {str(home)!r}
        try:
            pathlib.Path(real_home, ".claude", "session.json").write_text("{{}}")
            wrote["agent"] = True
        except OSError:
            wrote["agent"] = False
        pathlib.Path({str(found)!r}).write_text(json.dumps(wrote))
        put("src/calc.py", {CALC_MUL!r})
        put("tests/test_mul.py", {TEST_MUL!r})
        """,
    )
    try:
        ran = project.loop("run", "--maker", maker)
    finally:
        for left in (probe, Path("/etc/relay-probe")):  # what a breach would leave
            with contextlib.suppress(OSError):
                left.unlink(missing_ok=True)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    wrote = json.loads(found.read_text())
    assert wrote == {**dict.fromkeys(targets, False), "agent": False}, wrote
    assert (home / ".bashrc").read_text() == "# the person's\n"
    assert list((home / ".claude").iterdir()) == []
