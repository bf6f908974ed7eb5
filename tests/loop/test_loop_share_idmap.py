"""A relay run as root binds each share in a box through an idmapped mount, so that each
box runs as a user of its own; where a file system cannot be idmapped (ramfs here, an old
kernel's or a network file system elsewhere) every box falls back to the boxes' shared
user. That fallback is said: `relay doctor` names each share and whether it can be bound
so (tried with the box set-up's own calls), and a run's board says once that its boxes
share one user. Each case runs relay in a mount namespace of its own where a ramfs is
mounted, so nothing of the machine's changes."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from loop_project import CALC_MUL, TEST_GATE, TEST_MUL, make_project
from root_boxes import needs_root_boxes, person_share

from relay.ratchet.sandbox import BOX_ID, SHARE_ENV

pytestmark = [
    needs_root_boxes,
    pytest.mark.skipif(shutil.which("unshare") is None, reason="no unshare to mount a ramfs"),
]


@pytest.fixture
def ramfs_at() -> Iterator[Path]:
    """Where the ramfs goes (an empty folder every local user passes through)."""
    with person_share("relay-test-ramfs-") as where:
        yield where


def with_ramfs(ramfs: Path, *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`relay ARGV` in a mount namespace of its own where a ramfs, the boxes' shared
    user's as relay asks of a share, is mounted at ``ramfs`` and shared with the boxes
    beside the test's own shares (on the machine's disk)."""
    relay = shlex.join([sys.executable, "-m", "relay.cli", *argv])
    at = shlex.quote(str(ramfs))
    script = f"mount -t ramfs relay-test {at} && chown {BOX_ID} {at} && exec {relay}"
    env = {**os.environ, SHARE_ENV: os.pathsep.join([os.environ[SHARE_ENV], str(ramfs)])}
    return subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_doctor_says_which_share_cannot_be_idmapped_and_what_that_means(
    tmp_path: Path, ramfs_at: Path
) -> None:
    project = make_project(tmp_path, accept=None)
    done = with_ramfs(ramfs_at, "doctor", "--repo-dir", str(project.root), "--json", cwd=tmp_path)
    assert done.returncode == 0, done  # a warning: the boxes still run
    checks = {c["name"]: c for c in json.loads(done.stdout)["data"]["checks"]}
    ramfs = checks[f"loop share {ramfs_at}"]
    assert ramfs["status"] == "warn", ramfs
    assert "cannot be bound through an idmapped mount" in ramfs["detail"], ramfs
    assert f"every box runs as the boxes' shared user ({BOX_ID})" in ramfs["detail"], ramfs
    assert "supports idmapped mounts" in ramfs["fix"], ramfs
    for name in ("scripts", "bin"):  # the test's own shares, on the machine's disk
        disk = checks[f"loop share {tmp_path / name}"]
        assert disk["status"] == "ok", disk
        assert "each box runs as a user of its own" in disk["detail"], disk


def test_a_run_whose_boxes_share_one_user_says_so_on_its_board_once(
    tmp_path: Path, ramfs_at: Path
) -> None:
    project = make_project(tmp_path, gates=(TEST_GATE,))
    maker = project.script(
        "maker",
        "count('maker')\n"
        f"pathlib.Path({str(ramfs_at)!r}, 'from-maker').write_text('in the ramfs')\n"
        f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n",
    )
    argv = ("loop", "run", "--maker", maker, "--repo-dir", str(project.root), "--json")
    done = with_ramfs(ramfs_at, *argv, cwd=project.root)
    assert done.returncode == 0, done
    assert [k["goal"] for k in json.loads(done.stdout)["data"]["kept"]] == ["G1"], done
    board = project.read("docs/loop/BOARD.md")
    said = [line for line in board.splitlines() if line.startswith("- Box users:")]
    assert len(said) == 1, board
    assert f"every box the boxes' shared user ({BOX_ID})" in said[0], said
    assert f"no idmapped mount binds {ramfs_at} (" in said[0], said
    assert str(tmp_path / "scripts") not in said[0], said  # that one binds


def test_a_run_whose_shares_all_bind_says_nothing_of_box_users(tmp_path: Path) -> None:
    project = make_project(tmp_path, gates=(TEST_GATE,))
    maker = project.script(
        "maker",
        f"count('maker')\nput('src/calc.py', {CALC_MUL!r})\n"
        f"put('tests/test_mul.py', {TEST_MUL!r})\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    assert "- Box users:" not in project.read("docs/loop/BOARD.md")
