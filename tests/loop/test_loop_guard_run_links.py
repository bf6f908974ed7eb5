"""The pytest guard's folder on the host: a link the judged run leaves in place of its
verdict folder (or of the guard's folder) is never followed by relay's chmod, listing or
clean-up, so no host folder outside relay's own changes mode or goes away."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from relay.ratchet.guard_run import pytest_guard


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("host data\n", encoding="utf-8")
    victim.chmod(0o755)
    return victim


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_the_verdicts_are_read_from_relays_own_folder(tmp_path: Path) -> None:
    with pytest_guard(tmp_path) as guard:
        assert _mode(guard.verdicts) == 0o300
        (guard.verdicts / f"{guard.name}-1.json").write_text('{"v": 1}', encoding="utf-8")
        (guard.verdicts / "other-1.json").write_text("{}", encoding="utf-8")
        assert guard.written() == ['{"v": 1}']
        assert _mode(guard.verdicts) == 0o700
    # the verdicts go; the plugin stays until its box goes (a later `coverage json`)
    assert not guard.verdicts.exists() and guard.folder.is_dir()


def test_a_link_in_place_of_the_verdict_folder_is_never_followed(tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    (victim / "x-1.json").write_text("{}", encoding="utf-8")
    (tmp_path / "box").mkdir()
    with pytest_guard(tmp_path / "box") as guard:
        (victim / f"{guard.name}-1.json").write_text('{"forged": 1}', encoding="utf-8")
        guard.verdicts.chmod(0o700)
        shutil.rmtree(guard.verdicts)
        guard.verdicts.symlink_to(victim)
        assert guard.written() == []  # refused: nothing read through the link
        assert _mode(victim) == 0o755
    assert _mode(victim) == 0o755  # the clean-up's chmod left it alone too
    assert (victim / "keep.txt").read_text(encoding="utf-8") == "host data\n"
    assert guard.verdicts.is_symlink()  # left as it was: never removed through


def test_a_link_in_place_of_the_guards_folder_is_never_followed(tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    (victim / "out").mkdir(mode=0o755)
    (victim / "plugin").mkdir(mode=0o755)
    (tmp_path / "box").mkdir()
    with pytest_guard(tmp_path / "box") as guard:
        shutil.rmtree(guard.folder)
        guard.folder.symlink_to(victim)
        assert guard.written() == []
    for each in (victim, victim / "out", victim / "plugin"):
        assert _mode(each) == 0o755
    assert (victim / "keep.txt").read_text(encoding="utf-8") == "host data\n"
