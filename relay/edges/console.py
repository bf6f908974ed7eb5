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
import re
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
    if found is not None and found.startswith("utf-16"):
        order = wide_order(data, found)
        bom = codecs.BOM_UTF16_LE if order == "utf-16-le" else codecs.BOM_UTF16_BE
        return decode_wide(data[len(bom) :] if data.startswith(bom) else data, order)
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


def wide_order(data: bytes, found: str) -> str:
    """The byte order of UTF-16 text that ``sniff`` named ``found`` (``utf-16``: its mark's)."""
    if found != "utf-16":
        return found
    return "utf-16-be" if data.startswith(codecs.BOM_UTF16_BE) else "utf-16-le"


# Of a line's two-byte units, at least this share hold a NUL where UTF-16 of mostly ASCII
# text has one: the line is UTF-16. A line with fewer is another process's 8-bit output.
_WIDE_SHARE = 0.3


def decode_wide(data: bytes, order: str) -> str:
    """UTF-16 output (``order``: its byte order, no mark), each line read as what it is: a
    step that starts in UTF-16 (wmic, a PowerShell pipe) may go on in UTF-8 (a script's
    echo, a native program's output after a prompt with no line break), and UTF-8 read as
    UTF-16 becomes CJK characters that no redaction rule reads, while its bytes still hold
    whatever it printed."""
    out: list[str] = []
    for line in _wide_lines(data, order):
        units = len(line) // 2
        nuls = (line[1::2] if order == "utf-16-le" else line[0::2]).count(0)
        plain = _plain(line) if units and nuls < _WIDE_SHARE * units else None
        out.append(plain if plain is not None else _wide_line(line, order))
    return "".join(out)


# 8-bit text inside a UTF-16 line: this many units in a row with no NUL where UTF-16 of
# ASCII has one (fewer: a word of Cyrillic or CJK, which ``_plain`` refuses anyway).
_PLAIN_RUN = re.compile(rb"[^\x00]{8,}")
# ... whose high bytes take this many values at least: UTF-16 of one script's run (box
# drawing, kana, a repeated CJK character) has a few, all of them printable ASCII.
_VARIED = 4
# C0 controls but tab, line breaks and escape: UTF-16 of most scripts past Latin-1 read as
# bytes is full of them (Cyrillic's U+04xx has a 0x04 in every character), text has none.
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]")


def _plain(data: bytes) -> str | None:
    """``data`` as UTF-8 when it reads as text so (no control characters), else None."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if _CONTROLS.search(text) else text


def _wide_line(line: bytes, order: str) -> str:
    """A UTF-16 line, with any stretch of 8-bit text in it (a run of units with no NUL
    that reads as text, up to where UTF-16's NULs come back) read as UTF-8."""
    little = order == "utf-16-le"
    out: list[str] = []
    at = 0
    while at < len(line):
        highs = line[at + 1 :: 2] if little else line[at::2]
        run = _PLAIN_RUN.search(highs)
        if run is None:
            break
        first = at + 2 * run.start()
        nul = line.find(b"\0", first)
        # UTF-16 again from the unit that holds the NUL: (low, 0) or (0, low)
        stop = len(line) if nul < 0 else (nul - 1 if little else nul)
        stop = max(stop, first)
        stretch = line[first:stop]
        varied = len(set(stretch[1::2] if little else stretch[::2])) >= _VARIED
        plain = _plain(stretch) if stop - first >= 8 and varied else None
        if plain is None:  # UTF-16 of another script: as it is, and look on past it
            stop = at + 2 * run.end()
            out.append(line[at:stop].decode(order, errors="replace"))
        else:
            out.append(line[at:first].decode(order, errors="replace") + plain)
        at = stop
    out.append(line[at:].decode(order, errors="replace"))
    return "".join(out)


def _wide_lines(data: bytes, order: str) -> list[bytes]:
    """``data`` cut after each of UTF-16's line breaks (``\\n\\0`` or ``\\0\\n`` on a
    unit's bounds, from the line's start): a single ``\\n`` byte may be a byte of a UTF-16
    character (上 is 0a 4e) as well as an 8-bit line's end, and 8-bit text between two of
    UTF-16's line breaks is found by ``_wide_line``."""
    little = order == "utf-16-le"
    lines: list[bytes] = []
    pos = look = 0
    size = len(data)
    while pos < size:
        nl = data.find(b"\n", look)
        if nl < 0:
            lines.append(data[pos:])
            break
        low = (nl - pos) % 2 == (0 if little else 1)  # the \n is a unit's low byte here
        if low and (data[nl + 1 : nl + 2] == b"\0" if little else data[nl - 1] == 0):
            end = nl + 2 if little else nl + 1
            lines.append(data[pos:end])
            pos = look = end
        else:
            look = nl + 1
    return lines


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
