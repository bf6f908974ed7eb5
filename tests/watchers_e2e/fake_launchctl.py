"""A stand-in ``launchctl`` program for one gui domain, run as a real process on any OS.

It keeps launchd's documented behaviour that matters to relay: ``bootstrap`` loads the
plist's label (and answers "5: Input/output error" for a label still loaded), ``print``
succeeds only for a loaded label, and ``bootout`` unloads it and sends SIGTERM to the
job's running process. The job's process is the one launchd started, recognised as
launchd marks it, by ``XPC_SERVICE_NAME`` holding the label; here it is the pass that
called launchctl. ``FAKE_LAUNCHD_ON_BOOTOUT`` names a JSON file with a command (argv and
env) to run just before the SIGTERM, so a test can make a job arrive at that moment.
"""

from __future__ import annotations

import json
import os
import plistlib
import signal
import subprocess
import sys
from pathlib import Path


def main(args: list[str]) -> int:
    path = Path(os.environ["FAKE_LAUNCHD_STATE"])
    state = json.loads(path.read_text()) if path.exists() else {"loaded": [], "calls": []}
    state.setdefault("terminated", [])
    state["calls"].append(args)
    verb, target = args[0], args[-1]
    label = target.rsplit("/", 1)[-1]
    code = 0
    if verb == "bootstrap":
        label = plistlib.loads(Path(target).read_bytes())["Label"]
        if label in state["loaded"]:
            code = 5
            print("Bootstrap failed: 5: Input/output error", file=sys.stderr)
        else:
            state["loaded"].append(label)
    elif label not in state["loaded"]:
        code = 113
        print(f"Could not find service {label!r} in domain", file=sys.stderr)
    elif verb == "bootout":
        state["loaded"].remove(label)
        if os.environ.get("XPC_SERVICE_NAME") == label:
            state["terminated"].append(label)
    path.write_text(json.dumps(state))
    if verb == "bootout" and code == 0 and os.environ.get("XPC_SERVICE_NAME") == label:
        hook = os.environ.get("FAKE_LAUNCHD_ON_BOOTOUT")
        if hook:
            spec = json.loads(Path(hook).read_text())
            subprocess.run(spec["argv"], env=spec["env"], check=True, capture_output=True)
        os.kill(os.getppid(), signal.SIGTERM)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
