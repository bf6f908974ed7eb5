"""The watcher suite's crontab helpers; the world (a hub repository, a bare remote, two
clones) is tests/worlds.py's, its nodes made with ``as_node=True`` so every process runs as
the named node.

The crontab helpers read and write the real table and run one of its lines exactly as cron
does: ``/bin/sh -c`` with cron's minimal environment.
"""

from __future__ import annotations

import getpass
import re
import subprocess
from pathlib import Path

OURS = re.compile(r" # relay:relay-watch-\S+$")
CRON_FIELDS = re.compile(r"^\s*(?:\S+\s+){5}(?P<command>.*)$")


def read_crontab() -> str:
    """The invoking user's crontab as text ("" when there is none)."""
    done = subprocess.run(["crontab", "-l"], capture_output=True, text=True, check=False)
    if "no crontab for" in done.stderr and not done.stdout.strip():
        return ""
    assert done.returncode == 0, done.stderr
    return done.stdout


def write_crontab(text: str) -> None:
    """Replace the invoking user's crontab (the fixture restores the original)."""
    subprocess.run(["crontab", "-"], input=text, text=True, check=True, capture_output=True)


def relay_lines(table: str) -> list[str]:
    """The lines relay owns in a crontab (tagged with its marker)."""
    return [line for line in table.splitlines() if OURS.search(line)]


def line_for(table: str, node: str) -> str:
    """The one crontab line of ``node``'s watcher."""
    mine = re.compile(rf" --node {re.escape(node)}[;\s]")
    found = [line for line in relay_lines(table) if mine.search(line)]
    assert len(found) == 1, f"expected one line for {node} in:\n{table}"
    return found[0]


def as_cron(line: str, home: Path) -> subprocess.CompletedProcess[str]:
    """Run a crontab line the way cron does: the command after the five time fields,
    ``\\%`` read as ``%``, through ``/bin/sh -c`` in HOME with cron's minimal environment."""
    match = CRON_FIELDS.match(line)
    assert match is not None, f"not a cron job line: {line!r}"
    command = match["command"].replace("\\%", "%")
    env = {"HOME": str(home), "LOGNAME": getpass.getuser(), "SHELL": "/bin/sh"}
    env["PATH"] = "/usr/bin:/bin"
    return subprocess.run(
        ["/bin/sh", "-c", command], cwd=home, env=env, capture_output=True, text=True, timeout=90
    )


def entry_words(line: str) -> list[str]:
    """What a crontab line asks relay for (the words after ``-m relay.cli``), read back
    as sh reads them: a pass run with them is the entry's own, nonce and all."""
    import shlex

    match = CRON_FIELDS.match(line)
    assert match is not None, f"not a cron job line: {line!r}"
    words = shlex.split(match["command"].replace("\\%", "%"))
    start = words.index("relay.cli") + 1
    end = next(i for i in range(start, len(words)) if words[i].endswith(";"))
    return [*words[start:end], words[end].removesuffix(";")]
