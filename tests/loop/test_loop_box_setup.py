"""What a box's set-up hands the command besides its mounts: the environment it was given
(relay's variables for the set-up gone, nothing of the set-up's own interpreter added, no
name a shell would not pass), the folder it was started in, signals at their defaults,
and no process or folder of the set-up's left in the box."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from loop_project import Project, make_project

from relay.loop.contract import ENV_ONLY_MAKER
from relay.ratchet.sandbox import NAMESPACES, Sandbox, level

needs_namespaces = pytest.mark.skipif(
    level() != NAMESPACES, reason="this machine cannot make user and mount namespaces"
)


@pytest.fixture
def box() -> Iterator[Sandbox]:
    folder = Path(tempfile.mkdtemp(prefix="relay-test-setup-"))
    (folder / "tree" / "sub").mkdir(parents=True)
    try:
        yield Sandbox(folder, folder / "tree", folder / "home", (), NAMESPACES)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run(box: Sandbox, command: str, env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run(
        ["/bin/sh", "-c", box.wrap(command, env)], cwd=cwd, env=env, capture_output=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.decode("utf-8", "replace")


@needs_namespaces
def test_the_command_gets_the_environment_it_was_given(box: Sandbox) -> None:
    """In the C locale the set-up's interpreter would add LC_CTYPE to its own
    environment: the command never sees it, nor relay's RELAY_* set-up variables, nor a
    name no shell holds; PWD is the folder the command starts in."""
    env = {"PATH": os.environ["PATH"], "HOME": str(box.home), "KEEP_ME": "x y", "bad-name": "1"}
    said = run(box, "env -0", env, box.tree / "sub").split("\0")
    got = dict(e.split("=", 1) for e in said if e)
    kept = {name: value for name, value in env.items() if name != "bad-name"}
    assert got == {**kept, "PWD": str(box.tree / "sub"), "OLDPWD": "/"}, got


@needs_namespaces
def test_the_command_starts_with_no_signal_ignored(box: Sandbox) -> None:
    """The set-up's interpreter ignores SIGPIPE and SIGXFSZ for itself: the command gets
    them at their defaults (``yes | head`` ends, a pipeline's writer dies quietly)."""
    env = {"PATH": os.environ["PATH"], "HOME": str(box.home)}
    said = run(box, "grep SigIgn /proc/self/status; yes | head -n 1", env, box.tree)
    ignored = int(said.split()[1], 16)
    assert ignored & (1 << 12) == 0 and ignored & (1 << 24) == 0, said  # SIGPIPE 13, SIGXFSZ 25
    assert said.splitlines()[1] == "y"


@needs_namespaces
def test_the_set_up_leaves_nothing_of_its_own_in_the_box(box: Sandbox) -> None:
    """Once the command runs, the set-up is gone: the box's processes are the command's
    alone, and the box's own folder holds no folder the set-up made (its /dev's is
    unmounted and removed)."""
    env = {"PATH": os.environ["PATH"], "HOME": str(box.home)}
    said = run(box, "ls /proc | grep -c '^[0-9]'; ls -a " + str(box.folder), env, box.tree)
    count, *names = said.split()
    # the command's shell, ls and grep (a shell may fork one more for the pipeline)
    assert int(count) <= 4, said
    assert "dev" not in names, said


@needs_namespaces
def test_a_link_put_in_the_box_folder_is_never_followed_by_the_next_set_up(
    box: Sandbox, tmp_path: Path
) -> None:
    """Boxes of one candidate share a folder: a box cannot swap the folder's ``tmp`` for a
    link to a host folder (the box folder is read-only in it), and where one is there
    all the same the next box's /tmp never becomes that host folder (mount(2) follows
    links): the next set-up refuses, and nothing lands."""
    target = tmp_path / "host-folder"
    target.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(box.home)}
    folder = box.folder.resolve()
    swap = f"mv {folder}/tmp {folder}/tmp.old && ln -s {target} {folder}/tmp"
    done = subprocess.run(
        ["/bin/sh", "-c", box.wrap(swap, env)], cwd=box.tree, env=env, capture_output=True
    )
    assert done.returncode != 0 and b"Read-only file system" in done.stderr, done.stderr
    assert not (folder / "tmp").is_symlink()
    # the swap made all the same (as a box of an older relay could have left it)
    (folder / "tmp").rename(folder / "tmp.old")
    (folder / "tmp").symlink_to(target)
    done = subprocess.run(
        ["/bin/sh", "-c", box.wrap("touch /tmp/landed", env)],
        cwd=box.tree,
        env=env,
        capture_output=True,
    )
    assert done.returncode != 0
    assert b"not a folder of relay's" in done.stderr, done.stderr
    assert list(target.iterdir()) == []
    # the same for a link where the box's own folder is bound inside its /tmp
    (folder / "tmp").unlink()
    (folder / "tmp").mkdir()
    inner = folder / "tmp" / folder.relative_to(Path(tempfile.gettempdir()).resolve())
    inner.parent.mkdir(parents=True, exist_ok=True)
    inner.symlink_to(target)
    done = subprocess.run(
        ["/bin/sh", "-c", box.wrap("true", env)], cwd=box.tree, env=env, capture_output=True
    )
    assert done.returncode != 0 and b"not a folder of relay's" in done.stderr, done.stderr
    assert list(target.iterdir()) == []


@needs_namespaces
def test_a_folder_shown_read_only_is_reachable_nowhere_writable(box: Sandbox) -> None:
    """A folder the box shows again read-only (a PATH folder in the temporary folder) is
    staged under the box folder while the set-up covers its parents: the staging bind is
    gone once it is in place, so no writable path to it is left in the box."""
    tool = Path(tempfile.mkdtemp(prefix="relay-test-tool-"))
    tool.chmod(0o755)  # a PATH folder anyone may search (a root relay's box is anyone)
    try:
        (tool / "mytool").write_text("#!/bin/sh\necho tool\n")
        (tool / "mytool").chmod(0o755)
        env = {"PATH": f"{tool}:{os.environ['PATH']}", "HOME": str(box.home)}
        folder = box.folder.resolve()
        said = run(
            box,
            f"mytool; touch {tool}/x 2>/dev/null && echo wrote-shown;"
            f" cat {folder}/shared/*/mytool 2>/dev/null && echo seen-staged;"
            f" for d in {folder}/shared/*; do touch $d/x 2>/dev/null; done; echo end",
            env,
            box.tree,
        )
        assert said.split() == ["tool", "end"], said
        assert not (tool / "x").exists()
    finally:
        shutil.rmtree(tool, ignore_errors=True)


@needs_namespaces
def test_a_box_folder_under_dev_is_refused_with_what_to_do() -> None:
    """A box folder under /dev (TMPDIR=/dev/shm) could not get a /dev of its own and
    would keep the host's, writable: refused in one line, before anything runs."""
    from relay.errors import LocalUsageError

    folder = Path(tempfile.mkdtemp(prefix="relay-test-dev-", dir="/dev/shm"))
    try:
        (folder / "tree").mkdir()
        box = Sandbox(folder, folder / "tree", folder / "home", (), NAMESPACES)
        with pytest.raises(LocalUsageError, match="set TMPDIR to a folder on a disk"):
            box.wrap("true", {"PATH": os.environ["PATH"], "HOME": str(box.home)})
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@needs_namespaces
def test_a_tree_swapped_for_a_link_is_refused_by_the_next_set_up_and_by_relay(
    box: Sandbox, tmp_path: Path
) -> None:
    """The tree (and the scratch HOME) lie in the box folder, read-only to the box's code:
    it cannot swap them for a link to a host folder; swapped all the same, the next box
    must not bind that folder writable at the person's clone's path, and relay must
    read nothing through it."""
    target = tmp_path / "host-folder"
    target.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(box.home)}
    folder = box.folder.resolve()
    assert box.intact() is None
    swap = f"mv {folder}/tree {folder}/tree.old && ln -s {target} {folder}/tree"
    done = subprocess.run(
        ["/bin/sh", "-c", box.wrap(swap, env)], cwd=folder, env=env, capture_output=True
    )
    assert done.returncode != 0 and b"Read-only file system" in done.stderr, done.stderr
    assert box.intact() is None
    (folder / "tree").rename(folder / "tree.old")
    (folder / "tree").symlink_to(target)
    assert box.intact() is not None and "tree" in str(box.intact())
    done = subprocess.run(
        ["/bin/sh", "-c", box.wrap("touch landed", env)], cwd=folder, env=env, capture_output=True
    )
    assert done.returncode != 0 and b"not a folder of relay's" in done.stderr, done.stderr
    assert list(target.iterdir()) == []
    (folder / "tree").unlink()
    (folder / "tree.old").rename(folder / "tree")
    (folder / "home").mkdir(exist_ok=True)
    (folder / "home").rmdir()
    (folder / "home").symlink_to(target)
    assert box.intact() is not None and "home" in str(box.intact())
    done = subprocess.run(
        ["/bin/sh", "-c", box.wrap("true", env)], cwd=folder, env=env, capture_output=True
    )
    assert done.returncode != 0 and b"not a folder of relay's" in done.stderr, done.stderr


def test_each_gate_starts_from_an_empty_scratch(box: Sandbox, tmp_path: Path) -> None:
    """What one gate's run of the candidate wrote in the scratch HOME or temporary folder
    (a .pth in the user site, a tool's user configuration) is gone before the next one,
    and a link put in their place is removed, never followed."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("x")
    site = box.home / ".local/lib/python3/site-packages"
    site.mkdir(parents=True)
    (site / "evil.pth").write_text("import os\n")
    box.tmp.mkdir(exist_ok=True)
    (box.tmp / "left").write_text("x")
    (box.tmp / "link").symlink_to(outside)
    box.fresh_scratch()
    assert list(box.home.iterdir()) == [] and list(box.tmp.iterdir()) == []
    assert (outside / "keep").exists()
    box.home.rmdir()
    box.home.symlink_to(outside)
    box.fresh_scratch()
    assert not box.home.exists() and (outside / "keep").exists()


def test_relay_hands_files_into_a_box_folder_through_no_link(tmp_path: Path) -> None:
    """A checker asked again in the same box folder: the review file relay copies in
    replaces whatever the first ask's box left at its name (a link to a host file is
    removed, the host file untouched); a transcript folder likewise."""
    from relay.ratchet.sandbox import hand_in, own_folder

    folder, host = tmp_path / "box", tmp_path / "profile"
    folder.mkdir()
    host.write_text("the person's own\n")
    review = tmp_path / "review.md"
    review.write_text("the diff to review\n")
    (folder / "review.md").symlink_to(host)
    hand_in(review, folder / "review.md")
    assert host.read_text() == "the person's own\n"
    assert not (folder / "review.md").is_symlink()
    assert (folder / "review.md").read_text() == "the diff to review\n"
    (folder / "review.md").unlink()
    (folder / "review.md").mkdir()
    hand_in(review, folder / "review.md")
    assert (folder / "review.md").read_text() == "the diff to review\n"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (folder / "history").symlink_to(elsewhere)
    made = own_folder(own_folder(folder / "history") / "checker.history")
    assert made.is_dir() and not (folder / "history").is_symlink()
    assert list(elsewhere.iterdir()) == []


def test_a_brief_relay_adds_to_is_read_and_written_through_no_link(tmp_path: Path) -> None:
    """relay adds to a role's brief (its instructions, the earlier thread, its network)
    after writing it: a link put in its place is neither read (the host file would go to
    the role) nor written through (the host file would be overwritten)."""
    from relay.ratchet.sandbox import put_text, read_own

    host, brief = tmp_path / "secret", tmp_path / "brief.md"
    host.write_text("the person's secret\n")
    brief.symlink_to(host)
    with pytest.raises(OSError):
        read_own(brief)
    put_text(brief, "the brief\n")
    assert host.read_text() == "the person's secret\n"
    assert not brief.is_symlink() and read_own(brief) == "the brief\n"


# where the machine's password hashes and the package tools' system-wide logins live
SYSTEM = ("/etc/shadow", "/etc/gshadow", "/etc/pip.conf", "/etc/xdg/pip/pip.conf", "/etc/npmrc")
SYSTEM_HERE = [
    p for p in map(Path, (*SYSTEM, "/usr/local/etc/npmrc")) if p.is_file() and p.stat().st_size
]


@needs_namespaces
@pytest.mark.skipif(not SYSTEM_HERE, reason="no password hashes nor system-wide logins here")
def test_the_machines_password_hashes_and_system_logins_read_empty_in_a_box(box: Sandbox) -> None:
    """/etc and /usr are shown whole; a relay run as root would let a box read the password
    hashes, and any box the logins a system-wide pip.conf or npmrc may hold (and copy them
    into its diff): each such file reads empty."""
    env = {"PATH": os.environ["PATH"], "HOME": str(box.home)}
    sizes = "; ".join(f"wc -c < {p}" for p in SYSTEM_HERE)
    said = run(box, f"{sizes}; echo end", env, box.tree)
    assert said.split() == ["0"] * len(SYSTEM_HERE) + ["end"], (SYSTEM_HERE, said)


def test_a_box_whose_tree_is_gone_is_not_intact(box: Sandbox) -> None:
    shutil.rmtree(box.tree)
    assert box.intact() == "its tree folder is gone"


def swapping_tree_for_a_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """A loop project whose maker swaps its box's tree for a link to a host folder of keys."""
    secret = tmp_path / "host-keys"
    secret.mkdir()
    (secret / "id_key").write_text("HOST-KEY-MATERIAL-7731\n")
    project = make_project(tmp_path)
    maker = project.script(
        "maker",
        "t = pathlib.Path(os.environ['TMPDIR']).parent / 'tree'  # the box folder's tree\n"
        "os.rename(t, t.parent / 'tree.old')\n"
        f"os.symlink({str(secret)!r}, t)\n",
    )
    monkeypatch.setenv("RELAY_LOOP_MAKER", maker)
    return project


def carries_host_keys(project: Project) -> bool:
    """Whether a file at the top of the person's clone holds the host folder's key."""
    return any(
        "HOST-KEY-MATERIAL" in name.read_text(errors="replace")
        for name in project.root.iterdir()
        if name.is_file()
    )


@needs_namespaces
def test_make_here_takes_nothing_from_a_tree_swapped_for_a_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`relay loop make-here` hashes the maker's tree into the diff it hands back: a maker
    cannot swap its tree for a link to a host folder (its box folder is read-only to it):
    it gets an error, and no diff carries the host folder's files."""
    project = swapping_tree_for_a_link(tmp_path, monkeypatch)
    ran = project.loop("make-here", "G1")
    assert ran.status != 0, ran
    assert any("Read-only file system" in e for e in map(str, ran.errors)), ran
    assert not carries_host_keys(project)


def test_make_here_takes_nothing_from_a_tree_swapped_for_a_link_without_namespaces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where no box folder is read-only (env-level only), a maker can swap its tree for a
    link to a host folder: relay refuses the tree, and no diff carries the host's files."""
    project = swapping_tree_for_a_link(tmp_path, monkeypatch)
    monkeypatch.setenv("RELAY_SANDBOX", "env")
    none = "## Authorised irreversible actions\n\n(none)\n"
    contract = project.read("docs/loop/CONTRACT.md")
    allowed = contract.replace(none, none.replace("(none)", f"- {ENV_ONLY_MAKER}"))
    project.write("docs/loop/CONTRACT.md", allowed)
    project.git("commit", "-qam", "a maker may run at env-level only")
    ran = project.loop("make-here", "G1")
    assert ran.status != 0, ran
    assert any("not as relay made it" in e for e in map(str, ran.errors)), ran
    assert not carries_host_keys(project)
