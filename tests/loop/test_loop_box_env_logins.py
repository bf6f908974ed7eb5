"""The person's environments shown in a box's tree (the clone's ``.venv``, its
``node_modules``) and the folders the person shares with every box keep their logins
hidden: a private index's token in the virtualenv's ``pip.conf`` (where ``pip config
--site`` writes it) or in ``node_modules/.npmrc`` reads empty in the box, while the rest
of each environment is there to run.

A real box of a real clone with a (stand-in) virtualenv and node_modules beside it."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from relay.ratchet.sandbox import BOX_ID, NAMESPACES, SHARE_ENV, level, standalone

needs_namespaces = pytest.mark.skipif(
    level() != NAMESPACES, reason="this machine cannot make user and mount namespaces"
)
LOGINS = {
    ".venv/pip.conf": "[global]\nindex-url = https://me:venv-secret@index.example/simple\n",
    ".venv/etc/npmrc": "//registry.example/:_authToken=venv-etc-secret\n",
    "node_modules/.npmrc": "//registry.example/:_authToken=npm-secret\n",
    "node_modules/@scope/tool/.npmrc": "//registry.example/:_authToken=pkg-secret\n",
}
KEPT = {
    ".venv/pyvenv.cfg": "home = /usr/bin\n",
    "node_modules/left-pad/index.js": "module.exports = 1\n",
}
READ = """
import json, os, pathlib
got = {}
for rel in os.environ["READ_THESE"].split("\\n"):
    try:
        got[rel] = pathlib.Path(rel).read_text()
    except OSError as err:
        got[rel] = repr(err)
print(json.dumps(got))
"""


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@needs_namespaces
def test_logins_in_the_persons_environments_and_shares_read_empty_in_a_box(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clone = tmp_path / "clone"
    clone.mkdir()
    git("init", "-q", "-b", "main", cwd=clone)
    (clone / ".gitignore").write_text(".venv/\nnode_modules/\n")
    git("add", "-A", cwd=clone)
    git("-c", "user.name=P", "-c", "user.email=p@e.invalid", "commit", "-qm", "one", cwd=clone)
    for rel, text in {**LOGINS, **KEPT}.items():
        (clone / rel).parent.mkdir(parents=True, exist_ok=True)
        (clone / rel).write_text(text)
    share = tmp_path / "logs"
    (share / "conf").mkdir(parents=True)
    if os.getuid() == 0:  # writable by the boxes' user, as a person is told to make it
        os.chown(share, BOX_ID, -1)
    (share / "conf" / "pip.conf").write_text("[global]\nindex-url = https://share-secret@x/\n")
    monkeypatch.setenv(SHARE_ENV, str(share))
    commit = git("rev-parse", "HEAD", cwd=clone)
    hidden = (clone.resolve(),)
    with standalone(clone, commit, "relay-loop/G1", hidden=hidden) as box:
        assert set(box.exposed) == {".venv", "node_modules"}
        shared = str(share / "conf" / "pip.conf")  # named by no argument: not shown for it
        names = "\n".join([*LOGINS, *KEPT, shared])
        env = box.env({"PATH": os.environ["PATH"], "HOME": str(box.home), "READ_THESE": names})
        command = shlex.join([sys.executable, "-I", "-S", "-c", READ])
        done = subprocess.run(
            ["/bin/sh", "-c", box.wrap(command, env)],
            cwd=box.tree, env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        got = json.loads(done.stdout)
    for rel in KEPT:
        assert got[rel] == KEPT[rel], f"{rel} is not shown in the box: {got[rel]}"
    for rel in [*LOGINS, shared]:
        assert got[rel] == "", f"{rel} is readable in the box: {got[rel]}"
    for rel, text in LOGINS.items():
        assert (clone / rel).read_text() == text, "the person's file is left as it was"
