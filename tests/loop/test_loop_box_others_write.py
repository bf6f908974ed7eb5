"""No box gives another local account write access to what it writes in a share while it
runs (such an account would open it then and keep the handle past the next box's walk,
which takes the access back too late): chmod, fchmod and fchmodat with others' write bit
are refused (EPERM), so is an access list, whose entry for others is that bit by another
name, and a folder's default list, which passes over the umask (EOPNOTSUPP); what it makes
passes its umask, which holds others' write bit even when relay runs with a umask of 0.

A real box with a share, made as this test's user (root here, so a root relay's box) and as
an ordinary user of the host (nobody where this test is root); another account (neither)
then tries to write what it left."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from test_loop_box_removed import NOBODY, said_by_a_person

from relay.ratchet import sandbox
from relay.ratchet.sandbox import FILTERED, NAMESPACES, level

pytestmark = [
    pytest.mark.skipif(
        level() != NAMESPACES, reason="this machine cannot make user and mount namespaces"
    ),
    pytest.mark.skipif(os.uname().machine not in FILTERED, reason="no filter for this machine"),
    pytest.mark.skipif(shutil.which("setpriv") is None, reason="no setpriv to run as a user"),
]
OTHER = 12345  # another local account: neither the person, nobody, nor a box's user

# what a box's code tries in the share (argv[1]): each call's errno, 0 where it went through
INSIDE = """
import json, os, struct, sys
S = sys.argv[1]


def tried(call):
    try:
        call()
        return 0
    except OSError as err:
        return err.errno


def listed(other):  # an access list as setfacl writes it: owner, group, others
    rows = [(1, 7, 2**32 - 1), (4, 5, 2**32 - 1), (32, other, 2**32 - 1)]
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *row) for row in rows)


with open(S + "/f", "w") as f:
    f.write("one\\n")
os.mkdir(S + "/d")
fd = os.open(S + "/f", os.O_RDONLY)
here = os.open(S, os.O_RDONLY)
said = {
    "chmod 666": tried(lambda: os.chmod(S + "/f", 0o666)),
    "chmod folder 777": tried(lambda: os.chmod(S + "/d", 0o777)),
    "fchmod o+w": tried(lambda: os.fchmod(fd, 0o646)),
    "fchmodat 1777": tried(lambda: os.chmod("d", 0o1777, dir_fd=here)),
    "access list": tried(lambda: os.setxattr(S + "/f", "system.posix_acl_access", listed(6))),
    "default list": tried(lambda: os.setxattr(S + "/d", "system.posix_acl_default", listed(7))),
    "chmod 755": tried(lambda: os.chmod(S + "/f", 0o755)),
}
with open(S + "/d/g", "w"):  # made through the umask
    pass
status = open("/proc/self/status").read().splitlines()
said["umask"] = next(row.split()[1] for row in status if row.startswith("Umask:"))
said["modes"] = {n: oct(os.stat(S + "/" + n).st_mode & 0o7777) for n in ("f", "d", "d/g")}
print(json.dumps(said))
"""
# the person, with a umask of 0: a real box made by relay with the share, its code run in it
OUTSIDE = """
import os, shlex, shutil, subprocess, sys, tempfile
from pathlib import Path
from relay.ratchet.sandbox import NAMESPACES, Sandbox

os.umask(0)
folder = Path(tempfile.mkdtemp(prefix="relay-test-others-"))
for name in ("tree", "home", "tmp"):
    (folder / name).mkdir()
box = Sandbox(folder, folder / "tree", folder / "home", (), NAMESPACES)
env = {"PATH": "/usr/bin:/bin", "HOME": str(box.home), "TMPDIR": str(box.tmp)}
inside = " ".join(shlex.quote(w) for w in [sys.executable, "-I", "-S", "-c", *sys.argv[1:]])
done = subprocess.run(["/bin/sh", "-c", box.wrap(inside, env)], cwd=box.tree, env=env,
                      capture_output=True, text=True)
shutil.rmtree(folder, ignore_errors=True)
sys.stderr.write(done.stderr)
print(done.stdout, end="")
sys.exit(done.returncode)
"""


def box_with_a_share(ordinary: bool, share: Path) -> dict[str, Any]:
    """What a real box's code got in ``share``, run by relay as this test's user or as an
    ordinary user of the host."""
    said: dict[str, Any] = said_by_a_person(
        OUTSIDE, INSIDE, str(share), ordinary=ordinary, RELAY_SANDBOX_SHARE=str(share)
    )
    return said


def written_by_another(share: Path) -> list[str]:
    """What another local account managed to write of what the box left in ``share``."""
    tries = {
        "f": f"echo x >> {share}/f",
        "d/g": f"echo x >> {share}/d/g",
        "d/new": f"touch {share}/d/new",
    }
    wrote = []
    other = ["setpriv", f"--reuid={OTHER}", f"--regid={OTHER}", "--clear-groups"]
    for name, command in tries.items():
        done = subprocess.run(
            [*other, "sh", "-c", command], capture_output=True, text=True, timeout=30, check=False
        )
        if done.returncode == 0:
            wrote.append(name)
    return wrote


@pytest.mark.parametrize("ordinary", [False, True], ids=["this-user", "ordinary-user"])
def test_a_box_gives_no_other_account_write_access_in_a_share(ordinary: bool) -> None:
    if not ordinary and not sandbox._as_root():
        pytest.skip("this test's user is not root: the ordinary case covers it")
    work = Path(tempfile.mkdtemp(prefix="relay-test-others-", dir="/var/tmp"))
    try:
        work.chmod(0o755)
        share = work / "share"
        share.mkdir()
        owner = NOBODY if ordinary else sandbox.BOX_ID
        if os.getuid() == 0:
            os.chown(share, owner, owner)
        said = box_with_a_share(ordinary, share)
        eperm, unsupported = 1, 95
        chmods = {k: v for k, v in said.items() if k.startswith(("chmod ", "fchmod"))}
        assert chmods == {**dict.fromkeys(chmods, eperm), "chmod 755": 0}, said
        assert said["access list"] == said["default list"] == unsupported, said
        assert said["umask"] == "0002", "relay's umask of 0 reached the box"
        assert said["modes"] == {"f": "0o755", "d": "0o775", "d/g": "0o664"}, said
        assert written_by_another(share) == []
    finally:
        subprocess.run(["rm", "-rf", str(work)], check=False)
