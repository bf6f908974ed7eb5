"""`relay redact` run for real, as a subprocess: file and stdin, report on stderr."""

from __future__ import annotations

import hashlib
import os
import resource
import signal
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
    directory = relay(str(tmp_path), home=tmp_path)
    assert directory.returncode == 2 and directory.stderr.startswith(b"relay: cannot read")
    assert len(directory.stderr.splitlines()) == 1


def test_a_reader_that_goes_away_ends_the_run_quietly(tmp_path: Path) -> None:
    """`relay redact big.log | head -1`: no traceback, the status a shell gives a filter
    that a closed pipe ended."""
    log = tmp_path / "big.log"
    log.write_bytes(b"".join(b"step %d compiled ok\n" % i for i in range(400_000)))
    env = {**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "relay.cli", "redact", str(log)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as p:
        assert p.stdout is not None and p.stderr is not None
        assert p.stdout.readline() == b"step 0 compiled ok\n"
        p.stdout.close()
        stderr = p.stderr.read()
        assert p.wait(timeout=60) == 141
    assert stderr == b""


def _limit_file_size() -> None:
    """A full disk, within the test's own directory: writes past 4 KiB fail (EFBIG)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


def test_an_output_that_cannot_be_written_is_a_one_line_error(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    with open(tmp_path / "out.log", "wb") as out:
        done = subprocess.run(
            [sys.executable, "-m", "relay.cli", "redact"],
            input=b"a build line\n" * 20_000,
            stdout=out,
            stderr=subprocess.PIPE,
            env=env,
            preexec_fn=_limit_file_size,
            timeout=60,
            check=False,
        )
    assert done.returncode == 2
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1 and "cannot write the redacted text" in lines[0], lines


def test_a_bad_flag_regex_names_the_flag_and_the_pattern(tmp_path: Path) -> None:
    allow = relay("--allow", "fine", "--allow", "ok(", stdin=b"x\n", home=tmp_path)
    assert allow.returncode == 2
    assert allow.stderr.startswith(b"relay: --allow 'ok(' is not a valid regex")
    assert b"position 2" in allow.stderr and b"master section" not in allow.stderr
    pattern = relay("--pattern", "ticket=TCK-[0-9", stdin=b"x\n", home=tmp_path)
    assert pattern.returncode == 2
    assert pattern.stderr.startswith(b"relay: --pattern 'ticket=TCK-[0-9' is not a valid regex")


def test_binary_input_is_passed_on_with_a_one_line_warning(tmp_path: Path) -> None:
    blob = bytes(b for b in hashlib.sha512(b"elf").digest() * 64 if b)
    done = relay(stdin=b"\x7fELF" + blob, home=tmp_path)
    assert done.returncode == 0 and done.stdout
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("relay: warning: do not publish"), lines
    assert "binary" in lines[0]


def test_the_report_names_each_format_found_with_its_count_and_never_the_secret(
    tmp_path: Path,
) -> None:
    gitlab = "glpat-" + hashlib.sha256(b"gitlab").hexdigest()[:20]
    shopify = "shpat_" + hashlib.sha256(b"shopify").hexdigest()[:32]
    sentry = "sntryu_" + hashlib.sha256(b"sentry").hexdigest()
    log = tmp_path / "deploy.log"
    log.write_text(f"push {gitlab}\nagain {gitlab}\nshop {shopify}\nsentry {sentry}\nok\n")
    done = relay(str(log), "--report", home=tmp_path)
    assert done.returncode == 0, done.stderr
    report = done.stderr.decode()
    assert "gitlab-pat=2" in report and "shopify-token=1" in report
    assert "sentry-user-token=1" in report
    for secret in (gitlab, shopify, sentry):
        assert secret not in report and secret not in done.stdout.decode()


def test_home_root_is_no_path_in_a_url(tmp_path: Path) -> None:
    """With HOME=/root (a CI container's), ``/root`` after ``scheme:/`` is a URL's user."""
    lines = [
        b"mysql://root:${MYSQL_ROOT_PASSWORD}@db/app",
        b"https://root@host/",
        b"ssh://root@host/root/x",
        b"http://home/alice/x",
    ]
    done = relay(stdin=b"\n".join(lines) + b"\ncd /root/src && ls /root\n", home=Path("/root"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [*lines, b"cd <home>/src && ls <home>"]
    url = relay(stdin=b"file:///root/x\n", home=Path("/root"))
    assert url.stdout == b"file://<home>/x\n"


PEAK = """
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def test_a_large_file_is_redacted_in_64_mb(tmp_path: Path) -> None:
    """A file given by name is read as a pipe is, and the prefilter's cache is bounded: the
    peak stays under 64 MB on 20 MB of varied text (Python's own source)."""
    source = tmp_path / "source.py"
    with source.open("wb") as out:
        for path in sorted(Path(os.__file__).parent.rglob("*.py")):
            out.write(path.read_bytes())
            if out.tell() > 20 << 20:
                break
    command = [sys.executable, "-m", "relay.cli", "redact", "-j", "1", str(source)]
    env = {**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", PEAK, *command], capture_output=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) < 64 << 10  # kilobytes, on Linux


def test_a_look_around_regex_works_with_nothing_on_stderr(tmp_path: Path) -> None:
    """RE2 reads no look-around: such an --allow or --pattern runs on Python's re, and the
    refusal that says so is not the user's error (RE2 logged it to stderr before)."""
    token = b"ghp_R8kq2LmZx9Vb4TnW7yPs1JdHf6GcA3eUoQ0i"
    kept = relay("--allow", "ghp_(?=R8)\\w+", stdin=b"x " + token + b"\n", home=tmp_path)
    assert kept.returncode == 0 and kept.stdout == b"x " + token + b"\n"
    masked = relay("--allow", "ghp_(?=Q8)\\w+", stdin=b"x " + token + b"\n", home=tmp_path)
    assert masked.returncode == 0 and masked.stdout == b"x [redacted:github-token]\n"
    found = relay("--pattern", "ticket=TCK(?=-9)", stdin=b"TCK-9 TCK-8\n", home=tmp_path)
    assert found.stdout == b"[redacted:ticket]-9 TCK-8\n"
    for done in (kept, masked, found):
        assert b"re2" not in done.stderr and b"Error parsing" not in done.stderr, done.stderr
