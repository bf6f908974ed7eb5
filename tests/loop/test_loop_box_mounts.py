"""The box's read-only binds: a folder the box must only read stays read-only in it when it
lies on a nosuid,nodev,noexec mount (the flags a user namespace locks are kept), and when
it lies under another read-only folder, whether the two share a mount or a mount lies
between them.

The mounts are made in a user and mount namespace of the test's own, where relay's box is
then made as it is on a machine with such mounts: it inherits them, flags locked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from relay.ratchet import sandbox

# run in the test's namespace: make the mounts, then relay's box, and try to write
INSIDE = """
import json, subprocess, sys
from pathlib import Path
from relay.ratchet import sandbox
root, mounts, ro, probes = Path(sys.argv[1]), *map(json.loads, sys.argv[2:])
for where in mounts:
    subprocess.run(["mount", "-t", "tmpfs", "-o", "nosuid,nodev,noexec", "relay-test", where],
                   check=True)
for where in ro:
    Path(where).mkdir(parents=True, exist_ok=True)
box = sandbox.Sandbox(root, root / "tree", root / "home", (), sandbox.NAMESPACES,
                      read_only=tuple(map(Path, ro)))
try_all = "; ".join(
    f"if touch {p}/x 2>/dev/null; then echo WROTE {p}; fi; findmnt -no OPTIONS -T {p} | tail -1"
    for p in probes
)
done = subprocess.run(box.wrap(try_all), shell=True, capture_output=True, text=True,
                      cwd=root / "tree")
print(json.dumps({"code": done.returncode, "out": done.stdout, "err": done.stderr}))
"""


def in_a_namespace(root: Path, mounts: list[Path], ro: list[Path], probes: list[Path]) -> dict:
    (root / "tree").mkdir(parents=True)
    (root / "home").mkdir()
    for where in (*mounts, *ro):
        where.mkdir(parents=True, exist_ok=True)
    argv = ["unshare", "--user", "--map-root-user", "--mount", sys.executable, "-c"]
    argv += [textwrap.dedent(INSIDE), str(root)]
    argv += [json.dumps([str(p) for p in paths]) for paths in (mounts, ro, probes)]
    # (no share: the loop tests' are the boxes' user's, no one's in this user namespace)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_SANDBOX_SHARE")}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True, env=env)
    found: dict = json.loads(done.stdout)
    assert found["code"] == 0, found["err"]
    return found


needs_namespaces = pytest.mark.skipif(
    sandbox.level() != sandbox.NAMESPACES, reason="no user namespaces here"
)


@needs_namespaces
def test_a_read_only_folder_on_a_locked_mount_is_read_only_in_the_box(tmp_path: Path) -> None:
    locked = tmp_path / "box" / "locked"  # in the box's folder: the box sees no other of /tmp
    found = in_a_namespace(tmp_path / "box", [locked], [locked], [locked])
    assert "WROTE" not in found["out"], found
    flags = set(found["out"].split()[-1].split(","))  # the top mount: the box's bind
    assert {"ro", "nosuid", "nodev", "noexec"} <= flags, found


@needs_namespaces
def test_nested_read_only_folders_are_read_only_with_or_without_a_mount_between(
    tmp_path: Path,
) -> None:
    outer = tmp_path / "box" / "outer"  # in the box's folder: the box sees no other of /tmp
    mounted = outer / "mounted"
    same, beyond = outer / "same" / "deep", mounted / "deep"
    found = in_a_namespace(tmp_path / "box", [mounted], [outer, same, beyond], [same, beyond])
    assert "WROTE" not in found["out"], found
    assert found["out"].split().count("ro,nosuid,nodev,noexec,relatime") == 1, found  # beyond


def test_every_top_folder_but_the_systems_and_the_softwares_is_emptied(tmp_path: Path) -> None:
    root = tmp_path / "root"  # (the test's own folder holds the folders shared with boxes)
    for name in ("usr", "etc", "lib64", "proc", "opt", "nix", "var", "srv", "work", "data", "tmp"):
        (root / name).mkdir(parents=True)
    (root / "lib").symlink_to("usr/lib")  # a link leads into a folder judged itself
    (root / "file.sock").write_text("")
    found = sandbox.emptied_tops([root / "tmp"], root)
    assert found == [root / n for n in ("data", "srv", "var", "work")]


def test_what_runs_from_a_top_folder_is_shown_as_a_tool_folder_or_a_prefix(
    tmp_path: Path,
) -> None:
    """In a folder at the top of / (which a box sees empty), a version manager's folder is
    shown whole wherever it lies (pyenv's shims, an nvm node's bin), a prefix's bin brings
    the prefix, a virtualenv's bin the virtualenv; never the top folder itself, and never
    a folder holding the box."""
    top = tmp_path / "data"
    shims = top / "tools" / "pyenv" / "shims"
    node = top / "nvm" / "versions" / "node" / "v20"
    uv = top / "uv" / "python" / "cpython-3.12"
    venv = top / "venvs" / "proj"
    bins = (shims, node / "bin", uv / "bin", venv / "bin", top / "bin", top / "box" / "bin")
    for each in bins:
        each.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    path = os.pathsep.join(map(str, bins))
    box = top / "box" / "one"
    found = sandbox.path_folders(path, [tmp_path / "tmp"], box, (), (), [top])
    assert found == [top / "tools" / "pyenv", top / "nvm", uv, venv, top / "bin"]


def test_a_login_in_a_shown_folder_is_found_wherever_the_folder_lies(tmp_path: Path) -> None:
    prefix = tmp_path / "data" / "nvm" / "versions" / "node" / "v20"
    cargo = tmp_path / "data" / ".cargo"
    version = tmp_path / "data" / ".pyenv" / "versions" / "3.11.7"
    logins = [prefix / "etc" / "npmrc", cargo / "config.toml", version / "pip.conf"]
    kept = [prefix / "lib" / "node_modules" / "npm" / "npmrc", version / "bin" / "python"]
    for each in (*logins, *kept):
        each.parent.mkdir(parents=True, exist_ok=True)
        each.write_text("x")
    found = sandbox.shown_secrets([prefix.parents[2], cargo, version.parents[1]])
    assert sorted(found) == sorted(logins)


def test_an_emptied_top_folders_links_are_kept(tmp_path: Path) -> None:
    """A top folder's own links are made again in the box (NixOS's PATH goes through
    /run/current-system)."""
    top = tmp_path / "run"
    (top / "lock").mkdir(parents=True)
    (top / "current-system").symlink_to("/nix/store/x-system")
    assert sandbox.top_links([top]) == [(top / "current-system", "/nix/store/x-system")]
