"""Windows Job Objects: a step and everything it starts die with the pass that ran it.

On POSIX a step leads a process group of its own, which the next pass can find and stop
(:func:`relay.edges.steps.kill_group`). Windows has no such handle that outlives its
owner, so each step is put in a Job Object created with ``KILL_ON_JOB_CLOSE``: when the
pass ends — normally, by a timeout, or killed — the last handle to the job closes and
Windows ends every process in it. Nothing is left for a later pass to reap.

Win32 docs: CreateJobObjectW, SetInformationJobObject (JobObjectExtendedLimitInformation,
JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE), AssignProcessToJobObject. On other systems every
function here does nothing.
"""

from __future__ import annotations

import ctypes
import subprocess
import sys

JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000
JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS = 9


def contain(proc: subprocess.Popen[bytes]) -> int | None:
    """Put ``proc`` in a new kill-on-close Job Object and return its handle; None where
    there are none (POSIX) or the system refused (the step then runs as before, ended by
    ``taskkill /T``). Only this process holds the handle, so if the pass dies, Windows
    ends the step and everything it started."""
    if sys.platform != "win32":
        return None
    return _contain_windows(proc)


def release(job: int | None) -> None:
    """Close a job handle when its step has ended: whatever the step left running in the
    background ends with it (as a finished step's process group is killed on POSIX)."""
    if job is not None and sys.platform == "win32":
        _close_windows(job)


# the layout Windows reads (laid out here on every system, so tests can check its size)
class _BasicLimits(ctypes.Structure):
    _fields_ = [
        ("PerProcessUserTimeLimit", ctypes.c_int64),
        ("PerJobUserTimeLimit", ctypes.c_int64),
        ("LimitFlags", ctypes.c_uint32),
        ("MinimumWorkingSetSize", ctypes.c_size_t),
        ("MaximumWorkingSetSize", ctypes.c_size_t),
        ("ActiveProcessLimit", ctypes.c_uint32),
        ("Affinity", ctypes.c_size_t),
        ("PriorityClass", ctypes.c_uint32),
        ("SchedulingClass", ctypes.c_uint32),
    ]


class _IoCounters(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in (
        "ReadOperationCount", "WriteOperationCount", "OtherOperationCount",
        "ReadTransferCount", "WriteTransferCount", "OtherTransferCount",
    )]  # fmt: skip


class _ExtendedLimits(ctypes.Structure):
    _fields_ = [
        ("BasicLimitInformation", _BasicLimits),
        ("IoInfo", _IoCounters),
        ("ProcessMemoryLimit", ctypes.c_size_t),
        ("JobMemoryLimit", ctypes.c_size_t),
        ("PeakProcessMemoryUsed", ctypes.c_size_t),
        ("PeakJobMemoryUsed", ctypes.c_size_t),
    ]


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only

    def _contain_windows(proc: subprocess.Popen[bytes]) -> int | None:
        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        job = kernel32.CreateJobObjectW(None, None)
        if not job:
            return None
        info = _ExtendedLimits()
        info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
        size = ctypes.sizeof(info)
        kind = JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS
        if not kernel32.SetInformationJobObject(job, kind, ctypes.byref(info), size):
            kernel32.CloseHandle(job)
            return None
        handle = int(proc._handle)  # type: ignore[attr-defined]
        if not kernel32.AssignProcessToJobObject(job, handle):
            kernel32.CloseHandle(job)
            return None
        return int(job)

    def _close_windows(job: int) -> None:
        ctypes.WinDLL("kernel32", use_last_error=True).CloseHandle(job)

else:

    def _contain_windows(proc: subprocess.Popen[bytes]) -> int | None:
        return None

    def _close_windows(job: int) -> None:
        return None
