"""A stand-in ``crontab`` program with a file-backed table, run as a real process.

It answers as Debian's crontab does where relay depends on it: ``-l`` prints the table
byte for byte (or says "no crontab for USER" on stderr, status 1), ``-`` and ``FILE``
replace it after the checks Debian makes (a final newline, five time fields or an
``@`` keyword, a command under 1000 characters), ``-r`` removes it. Nothing else: no
daemon reads this table, so a person's `make test` never touches their own crontab.

Usage: ``standin_crontab.py TABLE [crontab's arguments]``; a wrapper on the PATH named
``crontab`` passes TABLE, so even a pass run with cron's minimal environment finds it.
"""

from __future__ import annotations

import getpass
import re
import sys
from pathlib import Path

MAX_COMMAND = 1000  # Debian's cron refuses a command this long or longer
_FIELD = re.compile(rb"^[\d*/,\-a-zA-Z]+$")
_VARIABLE = re.compile(rb"""^\s*("[^"]*"|'[^']*'|[^\s=]+)\s*=""")
_KEYWORDS = (b"reboot", b"yearly", b"annually", b"monthly", b"weekly", b"daily", b"hourly")
_NAMES = ("minute", "hour", "day-of-month", "month", "day-of-week")


def problem(table: bytes, name: str) -> str | None:
    """Why Debian's crontab would refuse ``table``, or None."""
    if table and not table.endswith(b"\n"):
        return "new crontab file is missing newline before EOF, can't install."
    for number, line in enumerate(table.split(b"\n")[:-1], start=1):
        text = line.strip()
        if not text or text.startswith(b"#") or _VARIABLE.match(line):
            continue
        if text.startswith(b"@"):
            keyword, _, command = text[1:].partition(b" ")
            if keyword not in _KEYWORDS:
                return f'"{name}":{number}: bad time specifier\n' + _ERRORS
        else:
            fields = text.split(None, 5)
            for index, field in enumerate(fields[:5]):
                if not _FIELD.match(field):
                    return f'"{name}":{number}: bad {_NAMES[index]}\n' + _ERRORS
            if len(fields) < 6:
                return f'"{name}":{number}: bad command\n' + _ERRORS
            command = fields[5]
        if len(command) >= MAX_COMMAND:
            return f'"{name}":{number}: command too long\n' + _ERRORS
    return None


_ERRORS = "errors in crontab file, can't install."


def main(argv: list[str]) -> int:
    table, args = Path(argv[0]), argv[1:]
    user = getpass.getuser()
    if args == ["-l"]:
        if not table.is_file():
            print(f"no crontab for {user}", file=sys.stderr)
            return 1
        sys.stdout.buffer.write(table.read_bytes())
        return 0
    if args == ["-r"]:
        if not table.is_file():
            print(f"no crontab for {user}", file=sys.stderr)
            return 1
        table.unlink()
        return 0
    if len(args) == 1:
        name = args[0]
        new = sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
        said = problem(new, name)
        if said is not None:
            print(said, file=sys.stderr)
            return 1
        table.parent.mkdir(parents=True, exist_ok=True)
        staged = table.with_name(table.name + ".new")
        staged.write_bytes(new)
        staged.replace(table)  # a reader sees the old table or the new one
        return 0
    print("usage: crontab [-l | -r | -]", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
