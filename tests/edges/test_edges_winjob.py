"""Windows Job Objects (relay/edges/winjob.py): what can be checked off Windows — the
structure Windows reads has its documented x64 size, and on POSIX nothing is contained
(steps lead process groups there, reaped by the next pass)."""

from __future__ import annotations

import ctypes
import subprocess
import sys

import pytest

from relay.edges import winjob


@pytest.mark.skipif(ctypes.sizeof(ctypes.c_void_p) != 8, reason="the x64 layout")
def test_the_extended_limit_information_has_the_size_windows_expects() -> None:
    # JOBOBJECT_BASIC_LIMIT_INFORMATION is 64 bytes on x64, IO_COUNTERS 48, and
    # JOBOBJECT_EXTENDED_LIMIT_INFORMATION 144: a wrong field would make
    # SetInformationJobObject fail with ERROR_BAD_LENGTH and leave steps uncontained
    assert ctypes.sizeof(winjob._BasicLimits) == 64
    assert ctypes.sizeof(winjob._IoCounters) == 48
    assert ctypes.sizeof(winjob._ExtendedLimits) == 144
    assert winjob._BasicLimits.LimitFlags.offset == 16


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX behaviour")
def test_on_posix_nothing_is_contained_and_release_is_harmless() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        job = winjob.contain(proc)  # type: ignore[arg-type]
        assert job is None
        winjob.release(job)
    finally:
        proc.wait()
    assert proc.returncode == 0
