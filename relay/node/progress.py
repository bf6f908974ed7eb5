"""Progress on long waits, for the person watching: on a terminal one line that updates in
place; otherwise (a log, a pipe) plain lines at a low rate, and a new line at once when
the phase changes. The pass reports through the hook here (`step_started`), so the pass
itself never writes to a terminal: a command that wants progress installs a reporter.

Nothing is said under ``pythonw`` (no stderr) or when no reporter is installed (a
scheduled pass: its log is for `relay doctor`, not for a ticking clock)."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

from relay.protocol.wire import show_controls

QUIET_SECONDS = 10.0  # a wait shorter than this says nothing
PLAIN_EVERY = 60.0  # seconds between two plain lines of the same phase
TICK = 1.0  # seconds between two updates of a terminal line


def duration(seconds: float) -> str:
    """``42s``, ``3m05s``, ``1h02m``: short, for a status line."""
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class Progress:
    """One status line: ``say(phase, text)``; ``close()`` ends it."""

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        tty: bool | None = None,
        every: float = PLAIN_EVERY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.tty = bool(isatty and isatty()) if tty is None else tty
        self.every = every
        self.clock = clock
        self._phase: str | None = None
        self._last = 0.0
        self._open = False  # a terminal line is showing
        self._lock = threading.Lock()

    def say(self, phase: str, text: str) -> None:
        """Show ``text``; in plain mode only when ``phase`` changed or ``every`` passed."""
        if self.stream is None:
            return
        with self._lock:
            now = self.clock()
            text = show_controls(text)  # a step's command comes from outside
            if self.tty:
                self.stream.write(f"\r\033[K{text}")
                self._open = True
            elif phase != self._phase or now - self._last >= self.every:
                self.stream.write(text + "\n")
                self._last = now
            else:
                return
            self._phase = phase
            self.stream.flush()

    def close(self) -> None:
        """End a terminal line, so what follows starts on a line of its own."""
        if self.stream is None:
            return
        with self._lock:
            if self._open:
                self.stream.write("\r\033[K")
                self.stream.flush()
                self._open = False


# --- the pass's hook: which step of which TASK runs, told to an installed reporter ---

_reporter: Progress | None = None


def install(progress: Progress | None) -> None:
    """Let the steps this process runs say how long they have run (None: stop)."""
    global _reporter
    _reporter = progress


class StepTicker:
    """While a TASK's steps run, says which step and for how long (after QUIET_SECONDS),
    from a daemon thread; ``started`` is called as each step starts."""

    def __init__(
        self,
        issue: int,
        task: int,
        steps: tuple[str, ...],
        redact: Callable[[str], str] = str,
    ) -> None:
        """``redact`` is the node's redactor: the line goes to a terminal or a log."""
        self.issue, self.task, self.steps = issue, task, steps
        self.redact = redact
        self.number = 0
        self.since = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def started(self) -> None:
        """The next step began."""
        self.number += 1
        self.since = time.monotonic()

    def __enter__(self) -> StepTicker:
        if _reporter is not None:
            self._thread = threading.Thread(target=self._run, args=(_reporter,), daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
            if _reporter is not None:
                _reporter.close()

    def line(self, now: float) -> str:
        """What runs now, in words."""
        n = max(self.number, 1)
        command = self.steps[n - 1] if n <= len(self.steps) else "the agent command"
        command = self.redact(command)
        if len(command) > 60:
            command = command[:57] + "..."
        return (
            f"#{self.issue} TASK {self.task}: step {n}/{len(self.steps)} `{command}`"
            f" running for {duration(now - self.since)}"
        )

    def _run(self, progress: Progress) -> None:
        while not self._stop.wait(TICK):
            now = time.monotonic()
            if now - self.since >= QUIET_SECONDS:
                progress.say(f"step {self.number}", self.line(now))
