"""Secrets written for this account only: 0600 on POSIX, and on Windows an owner-only ACL
set by icacls on the temporary file before it takes the secret's name. icacls does not
exist here, so its command line is recorded and checked against its grammar."""

from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from relay.edges.files import icacls_argv, owner_account, write_private
from relay.edges.local import NodeState
from relay.errors import ConfigError

# icacls FILE /inheritance:r /grant:r ACCOUNT:(PERM): the grammar `icacls /?` documents.
GRANT = re.compile(r"^(?P<account>[^:*?\"<>|]+):\((?P<perm>F|M|RX|R|W)\)$")


class Icacls:
    """Records icacls argv; checks that the file it is asked about exists then."""

    def __init__(self, status: int = 0, said: str = "processed file") -> None:
        self.calls: list[list[str]] = []
        self.existed: list[bool] = []
        self.status, self.said = status, said

    def __call__(self, argv: Sequence[str]) -> tuple[int, str]:
        self.calls.append(list(argv))
        self.existed.append(Path(argv[1]).is_file())
        return self.status, self.said


def test_on_windows_the_temp_file_gets_an_owner_only_acl_before_its_name(tmp_path: Path) -> None:
    target = tmp_path / "relay" / "token"
    icacls = Icacls()
    write_private(target, b"ghp_secret\n", platform="win32", runner=icacls, user="DESKTOP-7\\zoë")
    ((program, path, inherit, grant, account),) = icacls.calls
    assert (program, inherit, grant) == ("icacls", "/inheritance:r", "/grant:r")
    assert Path(path).parent == target.parent and Path(path) != target  # the temp file
    assert icacls.existed == [True]  # it was there, with the secret, only not yet named
    found = GRANT.match(account)
    assert found is not None and found["account"] == "DESKTOP-7\\zoë" and found["perm"] == "F"
    assert target.read_bytes() == b"ghp_secret\n"
    if os.name != "nt":
        assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_an_acl_that_cannot_be_set_leaves_nothing_written(tmp_path: Path) -> None:
    target = tmp_path / "token"
    denied = Icacls(status=5, said="token: Access is denied.\nSuccessfully processed 0 files")
    with pytest.raises(ConfigError, match="Access is denied") as caught:
        write_private(target, b"ghp_secret\n", platform="win32", runner=denied, user="zoë")
    assert "icacls" in (caught.value.hint or "") and "/inheritance:r" in (caught.value.hint or "")
    assert list(tmp_path.iterdir()) == []  # neither the secret nor its temp file


def test_on_posix_no_acl_command_runs_and_the_mode_is_0600(tmp_path: Path) -> None:
    icacls = Icacls()
    write_private(tmp_path / "key", b"k\n", platform="linux", runner=icacls)
    assert icacls.calls == []
    if os.name != "nt":
        assert stat.S_IMODE((tmp_path / "key").stat().st_mode) == 0o600


def test_the_account_and_the_command_line(tmp_path: Path) -> None:
    assert owner_account({"USERNAME": "zoë", "USERDOMAIN": "DESKTOP-7"}) == "DESKTOP-7\\zoë"
    assert owner_account({"USERNAME": "zoë"}) == "zoë"
    argv = icacls_argv(tmp_path / "My Dir" / "token", "DESKTOP-7\\zoë")
    assert argv[1] == str(tmp_path / "My Dir" / "token")  # one argument, spaces and all
    assert GRANT.match(argv[-1])


def test_the_token_file_and_the_node_key_are_written_private(tmp_path: Path) -> None:
    state = NodeState(tmp_path / "state")
    state.save_token("ghp_secret")
    state.new_signing_key("mac-mini")
    for path in (state.token_path, state.signing_key_path("mac-mini")):
        if sys.platform != "win32":
            assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert state.signing_key("mac-mini") is not None  # read back: private enough to trust


@pytest.mark.skipif(sys.platform != "win32", reason="the real icacls exists only on Windows")
def test_real_icacls_leaves_only_this_account(tmp_path: Path) -> None:
    import subprocess

    target = tmp_path / "token"
    write_private(target, b"secret\n")
    shown = subprocess.run(["icacls", str(target)], capture_output=True, text=True).stdout
    assert shown.count(":(") == 1 and "(I)" not in shown  # one entry, nothing inherited
    assert owner_account().split("\\")[-1].lower() in shown.lower()
