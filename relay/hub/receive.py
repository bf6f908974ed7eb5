"""git's ``proc-receive`` hook for a hub repository: refuse updates of protected branches.

``receive-pack`` runs this (``python -m relay.hub.receive``, see ``protection.HOOK_TEXT``)
for the commands ``receive.procReceiveRefs`` names and speaks pkt-lines with it: a command
it refuses is answered ``ng <ref> protected branch hook declined`` after GitHub's
``GH006`` lines on stderr (git shows them as ``remote: error: ...``); any other is handed
back to git (``option fall-through``), which updates it as usual. The hub passes who pushes
in ``RELAY_HUB_ADMIN`` (``1`` for an administrator of the repository) and the branches
whose ``restrictions`` leave the pusher out in ``RELAY_HUB_RESTRICTED`` (comma-separated).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import BinaryIO

from relay.hub import protection

ZERO = "0" * 40


def read_pkt(stream: BinaryIO) -> str | None:
    """One pkt-line's text, or None at a flush packet."""
    head = stream.read(4)
    if len(head) < 4:
        return None
    size = int(head, 16)
    if size == 0:
        return None
    return stream.read(size - 4).decode("utf-8", "replace").rstrip("\n")


def write_pkt(stream: BinaryIO, text: str | None) -> None:
    """One pkt-line (None: a flush packet)."""
    if text is None:
        stream.write(b"0000")
        stream.flush()
        return
    data = (text + "\n").encode()
    stream.write(b"%04x" % (len(data) + 4) + data)


def _fast_forward(old: str, new: str) -> bool:
    done = subprocess.run(["git", "merge-base", "--is-ancestor", old, new],
                          capture_output=True, check=False)  # fmt: skip
    return done.returncode == 0


def main() -> int:
    """Negotiate, read the commands, answer each one."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while read_pkt(stdin) is not None:  # version and capabilities
        pass
    write_pkt(stdout, "version=1")
    write_pkt(stdout, None)
    commands = []
    while (line := read_pkt(stdin)) is not None:
        commands.append(line.split(" ", 2))
    branches = protection.load(Path(os.environ.get("GIT_DIR", ".")))
    admin = os.environ.get("RELAY_HUB_ADMIN") == "1"
    shut = set(filter(None, os.environ.get("RELAY_HUB_RESTRICTED", "").split(",")))
    for old, new, ref in commands:
        branch = ref.removeprefix("refs/heads/")
        settings = branches.get(branch)
        ff = old != ZERO and new != ZERO and _fast_forward(old, new)
        why = protection.refusals(
            settings, old=old, new=new, admin=admin, fast_forward=ff, allowed=branch not in shut
        )
        if why:
            sys.stderr.write(f"error: GH006: Protected branch update failed for {ref}.\n")
            for reason in why:
                sys.stderr.write(f"error: {reason}\n")
            write_pkt(stdout, f"ng {ref} protected branch hook declined")
        else:
            write_pkt(stdout, f"ok {ref}")
            write_pkt(stdout, "option fall-through")
    write_pkt(stdout, None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
