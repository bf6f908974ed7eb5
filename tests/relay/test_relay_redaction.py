"""Nothing secret or personal leaves the worker: the pushed log, the RESULT and the pass's
own output are all redacted (issue 5, end to end on the hub).

The TASK's steps are public, so they only *produce* the secrets on the worker: from the
worker's environment, its home directory, its host name and a key file in its clone.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

from worlds import World

PY = Path(sys.executable).as_posix()
TOKEN = "ghp_" + "Zq7" * 12  # 40 characters, GitHub's classic token shape
KEY = "\n".join(
    [
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
        "QyNTUxOQAAACBhc2VjcmV0a2V5bWF0ZXJpYWx0aGF0bXVzdG5ldmVybGVhdmU=",
        "-----END OPENSSH PRIVATE KEY-----",
    ]
)
KEY_LINE = KEY.splitlines()[1]


def test_secrets_printed_by_a_task_never_leave_the_worker(world: World, job: int) -> None:
    c, w = world.controller, world.worker
    home = str(Path.home())
    host = socket.gethostname()
    (w.clone / "id_demo").write_text(KEY + "\n")
    steps = [
        "printenv DEPLOY_API_TOKEN",
        f"\"{PY}\" -c \"import os; print('home is', os.path.expanduser('~'))\"",
        f'"{PY}" -c "import socket; print(\'host is\', socket.gethostname())"',
        # steps run in relay's own worktree: a file of the person's clone is named in full
        f'"{PY}" -c "print(open(r\'{w.clone / "id_demo"}\').read())"',
        f"\"{PY}\" -c \"print('literal', 'ghp_' + 'Zq7' * 12)\"",
        f'"{PY}" -c "[print(f\'[{{i}}/80] compiling module_{{i}}.c\') for i in range(80)]"',
    ]
    args = ["task", str(job)]
    for step in steps:
        args += ["--step", step]
    c.ok(*args)
    task_body = world.comments(job)[-1]["body"]
    assert TOKEN not in task_body  # the test itself must not publish the secret

    done = w.run("watch", "--once", env=w.env(DEPLOY_API_TOKEN=TOKEN))
    assert done.returncode == 0, done.stderr

    log = world.remote_file(f"docs/loop/relay/{job}/logs/result-001.log")
    result = world.comments(job)[-1]["body"]
    assert result.startswith("### RESULT 1")
    published = {"pushed log": log, "RESULT": result, "pass output": done.stdout + done.stderr}
    for where, text in published.items():
        for secret in (TOKEN, KEY_LINE, "BEGIN OPENSSH PRIVATE KEY-----\nb3B"):
            assert secret not in text, f"{secret[:12]}… leaked into the {where}"
        if host not in ("localhost", ""):
            assert f"host is {host}" not in text, f"the host name leaked into the {where}"
        if len(home) > 1:
            assert f"home is {home}" not in text, f"the home path leaked into the {where}"
    # the log still tells a reader what was there
    assert "[redacted:github-token]" in log
    assert "home is <home>" in log
    assert "<host>" in log
    assert "[redacted:private-key]" in log
    assert os.environ.get("DEPLOY_API_TOKEN") != TOKEN


def test_the_result_summary_is_redacted_too(world: World, job: int, tmp_path: Path) -> None:
    """A failed executor's command line (a path in the worker's home) and git's error
    texts reach the RESULT's summary and observations: they are redacted like the log."""
    c, w = world.controller, world.worker
    home = tmp_path / "home-of-worker"
    home.mkdir()
    agent = home / "agent.sh"
    agent.write_text("#!/bin/sh\necho agent failed\nexit 3\n")
    agent.chmod(0o755)
    w.ok("join", "--executor", str(agent))
    c.ok("task", str(job), "--step", "true")
    done = w.run("watch", "--once", env=w.env(HOME=str(home)))
    assert done.returncode == 0, done.stderr
    result = world.comments(job)[-1]["body"]
    assert result.startswith("### RESULT 1"), result
    assert "failed" in result.lower()
    assert str(home) not in result
    assert "<home>" in result
