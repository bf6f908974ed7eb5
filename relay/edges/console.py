"""What a step printed, as text: UTF-8, UTF-16 (with or without its byte-order mark), or
the console's code page on Windows (cp437, cp850, cp1252... as cmd.exe, MSBuild and other
console tools write it).

Decoding decides whether the controller gets evidence at all: output judged undecodable
is withheld as binary. So a tool's own encoding is tried before giving up: strict UTF-8
first, then the code pages the console uses (passed in, so the rule is pure), then — for
output that is text by a real measure (no NUL, few control bytes) — a fallback code page,
so mojibake stays text; only bytes that look binary get UTF-8 with replacement characters.
"""

from __future__ import annotations

import codecs
import sys

_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def sniff(data: bytes) -> str | None:
    """The UTF encoding ``data`` announces or plainly is (UTF-16 text of mostly ASCII has a
    NUL in every other byte), or None when it is none of them."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name
    sample = data[:4000]
    if len(sample) >= 8:
        odd_nuls = sample[1::2].count(0) / (len(sample) // 2)
        even_nuls = sample[0::2].count(0) / ((len(sample) + 1) // 2)
        if odd_nuls > 0.6 and even_nuls < 0.1:
            return "utf-16-le"
        if even_nuls > 0.6 and odd_nuls < 0.1:
            return "utf-16-be"
    return None


def decode(data: bytes, *, codepages: tuple[str, ...] = ()) -> str:
    """``data`` as text: its UTF encoding, else strict UTF-8, else the first of
    ``codepages`` that decodes it, else UTF-8 with U+FFFD for what does not decode."""
    found = sniff(data)
    if found is not None:
        return data.decode(found, errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    for page in codepages:
        try:
            return data.decode(page)
        except (UnicodeDecodeError, LookupError):
            continue
    if not looks_binary(data):
        for page in FALLBACK_CODEPAGES:
            try:
                return data.decode(page)
            except UnicodeDecodeError:
                continue
    return data.decode("utf-8", errors="replace")


def as_text(data: bytes, *, codepages: tuple[str, ...] = ()) -> str | None:
    """``data`` as text when it is text in some encoding (UTF-8, UTF-16, a code page),
    None when it looks binary: what decides whether a file is redacted as text."""
    if sniff(data) is None and looks_binary(data):
        return None
    text = decode(data, codepages=codepages)
    return None if "\ufffd" in text and "\ufffd".encode() not in data else text


FALLBACK_CODEPAGES = ("cp1252", "cp850", "latin-1")  # the last decodes every byte
_TEXT_CONTROLS = frozenset(b"\t\n\r\f\b\x1b\x07\x0b")
MAX_CONTROL_SHARE = 0.02  # binary formats are full of control bytes; text has next to none


def looks_binary(data: bytes) -> bool:
    """Whether bytes that are not UTF-8 are binary by a real measure: a NUL, or more
    than ``MAX_CONTROL_SHARE`` of control bytes other than tab, line ends and escapes."""
    sample = data[:65536]
    if b"\0" in sample:
        return True
    controls = sum(1 for b in sample if (b < 0x20 or b == 0x7F) and b not in _TEXT_CONTROLS)
    return controls > MAX_CONTROL_SHARE * max(len(sample), 1)


def console_codepages() -> tuple[str, ...]:
    """The code pages Windows console tools write in: the OEM one (cmd.exe's), then the
    ANSI one; none elsewhere (POSIX tools write the locale's encoding, UTF-8 here)."""
    if sys.platform != "win32":
        return ()
    import ctypes

    kernel32 = ctypes.WinDLL("kernel32")
    pages = (f"cp{kernel32.GetConsoleOutputCP() or kernel32.GetOEMCP()}", f"cp{kernel32.GetACP()}")
    return tuple(dict.fromkeys(p for p in pages if p not in ("cp65001", "cp0")))
