"""The one seam for OS commands, run for real: status, text both ways, UTF-16, no raising."""

from __future__ import annotations

import sys

from relay.schedulers import SchedulerError, run_command
from relay.schedulers.base import decode, encode


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_a_missing_program_answers_127_instead_of_raising() -> None:
    answer = run_command(["relay-no-such-program-here", "--version"])
    assert answer.returncode == 127
    assert "relay-no-such-program-here" in answer.stderr


def test_status_stdout_and_stderr_come_back_apart() -> None:
    answer = run_command(python("import sys; print('out'); sys.exit('err')"))
    assert (answer.returncode, answer.stdout.strip(), answer.stderr.strip()) == (1, "out", "err")
    assert answer.says("out") and answer.says("err") and not answer.says("neither")


def test_bytes_that_are_no_text_survive_a_round_trip_through_stdin_and_stdout() -> None:
    raw = b"caf\xe9 \x0c \xff\xfe? UTF-8: Zo\xc3\xab\n"
    copy = "import sys; sys.stdout.buffer.write(sys.stdin.buffer.read())"
    answer = run_command(python(copy), stdin=decode(raw))
    assert encode(answer.stdout) == raw


def test_utf16_answers_are_read_as_utf16() -> None:
    """Some Windows tools answer in UTF-16, with or without a byte-order mark."""
    text = "<Task>Zoë 项目</Task>\r\n"
    assert decode(text.encode("utf-16")) == text
    assert decode(text.encode("utf-16-le")) == text
    answer = run_command(python(f"import sys; sys.stdout.buffer.write({text.encode('utf-16')!r})"))
    assert answer.stdout == text


def test_an_error_from_raw_bytes_is_still_printable() -> None:
    answer = run_command(python(r"import sys; sys.stderr.buffer.write(b'\xff denied\n'); exit(2)"))
    error = SchedulerError("cron: cannot read the crontab", argv=["crontab", "-l"], answer=answer)
    message = str(error)
    assert message.endswith("denied")
    message.encode("utf-8")  # no lone surrogate left to break a terminal
    assert error.argv == ("crontab", "-l") and error.answer is answer
