"""Step output decoded as the tool wrote it (relay/edges/console.py), and through a real
step: UTF-16 with and without its byte-order mark, and a Windows console code page."""

from __future__ import annotations

import sys
from pathlib import Path

from relay.edges.console import as_text, decode, looks_binary, sniff
from relay.edges.steps import run_step

GERMAN = "Fehler: Datei für Größe nicht gefunden\r\n"


def test_utf16_is_recognised_with_and_without_its_mark() -> None:
    text = "Build succeeded.\r\n    0 Warning(s)\r\n"
    assert sniff(text.encode("utf-16")) == "utf-16"
    assert decode(text.encode("utf-16")) == text
    assert sniff(text.encode("utf-16-le")) == "utf-16-le"
    assert decode(text.encode("utf-16-le")) == text
    assert decode(text.encode("utf-16-be")) == text


def test_a_console_code_page_is_tried_before_replacement_characters() -> None:
    raw = GERMAN.encode("cp850")
    fallback = decode("Résumé: 3 Fehler\r\n".encode("cp850"))
    assert fallback != "Résumé: 3 Fehler\r\n", "cp1252 first: mojibake"
    assert "\ufffd" not in fallback and fallback.endswith(": 3 Fehler\r\n"), "but text"
    assert decode(raw, codepages=("cp850",)) == GERMAN
    assert decode(GERMAN.encode(), codepages=("cp850",)) == GERMAN, "UTF-8 comes first"
    assert sniff(b"plain ascii output\n") is None


def test_binary_is_judged_by_control_bytes_not_by_failing_utf8() -> None:
    """Text in any code page has next to no control bytes; a binary format is full of them."""
    assert not looks_binary(GERMAN.encode("cp850") * 20)
    assert looks_binary(bytes(range(1, 32)) * 20) and looks_binary(b"text\0text")
    assert as_text(bytes(range(256)) * 4) is None
    assert as_text(b"\x7fELF\x02\x01\x01" + bytes(range(1, 20)) * 10) is None
    assert as_text(GERMAN.encode("utf-16")) == GERMAN
    assert as_text(GERMAN.encode("cp850"), codepages=("cp850",)) == GERMAN
    assert "nicht gefunden" in (as_text(GERMAN.encode("cp850")) or "")


def test_a_step_writing_cp850_off_windows_is_text(tmp_path: Path) -> None:
    script = tmp_path / "oem.py"
    script.write_text(f"import sys\nsys.stdout.buffer.write({GERMAN!r}.encode('cp850'))\n")
    outcome = run_step(f'"{sys.executable}" "{script}"', cwd=tmp_path, timeout=30)
    assert "nicht gefunden" in outcome.output and "\ufffd" not in outcome.output


def test_a_step_writing_utf16_gives_readable_output(tmp_path: Path) -> None:
    script = tmp_path / "wide.py"
    script.write_text(
        "import sys\nsys.stdout.buffer.write('MSBuild: 42 targets\\r\\n'.encode('utf-16'))\n"
    )
    outcome = run_step(f'"{sys.executable}" "{script}"', cwd=tmp_path, timeout=30)
    assert outcome.exit_code == 0
    assert outcome.output == "MSBuild: 42 targets\r\n"


def test_a_long_utf16_output_is_cut_on_whole_lines(tmp_path: Path) -> None:
    script = tmp_path / "long.py"
    script.write_text(
        "import sys\n"
        "text = ''.join(f'line {i}\\n' for i in range(5000))\n"
        "sys.stdout.buffer.write(text.encode('utf-16-le'))\n"
    )
    outcome = run_step(f'"{sys.executable}" "{script}"', cwd=tmp_path, timeout=30, cap=4000)
    head, marker, tail = outcome.output.partition("\n[... ")
    assert marker and outcome.truncated_bytes > 0
    assert head.splitlines()[0] == "line 0" and all(
        line.startswith("line ") for line in head.splitlines() + tail.splitlines()[1:]
    )
    assert tail.splitlines()[-1] == "line 4999"


def test_a_named_shell_runs_the_step_and_a_missing_one_is_a_failed_step(tmp_path: Path) -> None:
    import shutil

    import pytest

    from relay.edges.steps import shell_argv

    assert shell_argv("echo hi", None) == "echo hi"
    assert shell_argv("dir", "cmd") == ["cmd.exe", "/d", "/s", "/c", "dir"]
    with pytest.raises(ValueError, match="unknown shell"):
        shell_argv("x", "fish")
    if shutil.which("bash"):
        ran = run_step('echo "bash ${BASH_VERSINFO[0]}"', cwd=tmp_path, timeout=30, shell="bash")
        assert (
            ran.exit_code == 0 and ran.output.startswith("bash ") and ran.output.strip() != "bash"
        )
    if not shutil.which("pwsh"):
        missing = run_step("Get-Date", cwd=tmp_path, timeout=30, shell="pwsh")
        assert missing.exit_code == 127 and "'pwsh' is not installed on this node" in missing.output


def test_a_utf8_line_after_utf16_output_is_read_as_utf8() -> None:
    """A step that starts in UTF-16 (wmic) and goes on in UTF-8 (a script's echo): each
    line is read as what it is, in either byte order and after a mark, and a `\\n` byte that
    is half of a UTF-16 character (U+0A3E, Gurmukhi) on a UTF-16 line does not end it."""
    wide = "".join(f"Name=svc{i} State=Running\r\n" for i in range(40))
    for order, mark in (("utf-16-le", b""), ("utf-16-be", b""), ("utf-16-le", b"\xff\xfe")):
        data = mark + wide.encode(order) + b"token: ghp_abc\n" + "ok \u0a3e ok\r\n".encode(order)
        text = decode(data)
        assert text == wide + "token: ghp_abc\n" + "ok \u0a3e ok\r\n", order


def test_utf16_lines_of_cjk_text_stay_utf16() -> None:
    """A UTF-16 line with no NUL at all (CJK text) is no UTF-8: it is read as UTF-16."""
    lines = "Name=a\r\n" * 40 + "\u4e2d\u6587\u7684\u6587\u5b57\r\n" + "done\r\n"
    assert decode(lines.encode("utf-16-le")) == lines


def test_a_cut_utf16_output_reads_its_utf8_lines_too(tmp_path: Path) -> None:
    """Past the kept head, a UTF-8 line in the tail of a UTF-16 output is read as UTF-8."""
    code = (
        "import sys; out = sys.stdout.buffer; "
        "out.write(''.join('row %d\\r\\n' % i for i in range(60000)).encode('utf-16-le')); "
        "out.write(b'token: ghp_abc\\n')"
    )
    done = run_step(f'"{sys.executable}" -c "{code}"', cwd=tmp_path, timeout=60)
    assert done.truncated_bytes > 0
    assert done.output.endswith("token: ghp_abc\n"), done.output[-200:]
