"""`relay redact` run for real, as a subprocess: file and stdin, report on stderr."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "ghp_" + "Zq7" * 12


def relay(*args: str, stdin: bytes = b"", home: Path) -> subprocess.CompletedProcess[bytes]:
    env = {
        **os.environ,
        "HOME": str(home),
        "PYTHONPATH": str(ROOT),
        "CI_DEPLOY_TOKEN": "tok-5eb1f0a9c3",
    }
    command = [sys.executable, "-m", "relay.cli", "redact", *args]
    return subprocess.run(
        command, input=stdin, capture_output=True, env=env, timeout=60, check=False
    )


def test_redacts_a_file_to_stdout_with_a_report(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    log.write_text(f"using {TOKEN}\ndeploy tok-5eb1f0a9c3 done\nbuild ok at v1.2.3\n")
    done = relay(str(log), "--report", home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode() == (
        "using [redacted:github-token]\ndeploy [redacted:own-secret] done\nbuild ok at v1.2.3\n"
    )
    assert b"github-token=1" in done.stderr and b"own-secret=1" in done.stderr


def test_reads_stdin_and_streams_a_large_input(tmp_path: Path) -> None:
    body = b"".join(b"step %d compiled ok\n" % i for i in range(200_000))
    done = relay(stdin=body + f"{tmp_path}/secret.txt {TOKEN}\n".encode(), home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(b"step 0 compiled ok\n")
    assert done.stdout.endswith(b"<home>/secret.txt [redacted:github-token]\n")
    assert len(done.stdout) < len(body) + 100
    assert done.stderr == b""


def test_extra_patterns_and_a_missing_file(tmp_path: Path) -> None:
    done = relay("--pattern", "ticket=TCK-[0-9]+", stdin=b"see TCK-42\n", home=tmp_path)
    assert done.stdout == b"see [redacted:ticket]\n"
    missing = relay(str(tmp_path / "nope.log"), home=tmp_path)
    assert missing.returncode == 2 and b"cannot read" in missing.stderr
