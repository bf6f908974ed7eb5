"""False alarms on real code that holds no secret: Python's standard library and the
third-party packages of this project's environment, the packages' own documents (their
read-me and change log, as each ships it in its metadata), and the change logs and news
that the system's packages install under ``/usr/share/doc`` (where there are any).

Each file is redacted whole, as ``relay redact`` would a log holding it; a line is a false
alarm when a secret is found in it (``changed_lines``). Tests and test data are left out
(they hold keys on purpose). ``site`` is the set the shape rules were written against;
``stdlib``, ``documents`` and ``changelogs`` are held out, to show whether a rule
generalises or only fits.

Run: ``python -m bench redact_realcode`` (``--misses`` lists every changed line, grouped by
file).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import sys
import sysconfig
import time
from collections.abc import Iterator
from itertools import zip_longest
from pathlib import Path

from relay.redact import MachineFacts, Redactor

FACTS = MachineFacts(user="runner", home="/home/runner", hosts=("fv-az123-456",))
SYSTEM_DOCS = Path("/usr/share/doc")
SITE_PACKAGES = (
    "aiohttp", "pydantic", "pydantic_core", "gidgethub", "cryptography", "git", "github",
    "httpx", "h11", "yarl", "multidict", "anyio", "attr",
)  # fmt: skip
_TESTS = frozenset({"test", "tests", "idle_test", "testing", "site-packages"})
CHANGED_GOAL = 10  # per set: the field's standard of false alarms


def site_packages() -> Path:
    """The environment's own site-packages (this interpreter's ``purelib``)."""
    return Path(sysconfig.get_paths()["purelib"])


def _sources(root: Path) -> Iterator[Path]:
    """The Python files under ``root``, in order, tests left out."""
    for path in sorted(root.rglob("*.py")):
        if not _TESTS.intersection(path.relative_to(root).parts[:-1]):
            yield path


def sets() -> dict[str, list[Path]]:
    """The file sets, each in a fixed order."""
    site = site_packages()
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    return {
        "site": [p for name in SITE_PACKAGES for p in _sources(site / name)],
        "stdlib": list(_sources(stdlib)),
        "documents": sorted(site.glob("*.dist-info/METADATA")),
        "changelogs": _distinct(
            sorted({*SYSTEM_DOCS.glob("*/changelog*.gz"), *SYSTEM_DOCS.glob("*/NEWS*.gz")})
        ),
    }


def _distinct(paths: list[Path]) -> list[Path]:
    """The first of each set of files with the same bytes (one source package installs the
    same change log under each of its binary packages' names)."""
    seen: set[bytes] = set()
    out = []
    for path in paths:
        digest = hashlib.sha256(path.read_bytes()).digest()
        if digest not in seen:
            seen.add(digest)
            out.append(path)
    return out


def read(path: Path) -> str:
    """A file's text (a change log is gzipped)."""
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return data.decode("utf-8", errors="replace")


_SECRET_MARK = "[redacted:"


def changed_lines(before: str, after: str) -> list[tuple[int, str, str]]:
    """The lines where redaction found a secret (it keeps the line count), numbered from 1.
    Addresses, hosts and the user's home (``<email>``, ``<ip>``) are redacted by design in
    any text, and counted apart (``privacy_lines``)."""
    pairs = _pairs(before, after)
    return [
        (n, a, b)
        for n, (a, b) in enumerate(pairs, 1)
        if a != b and (b.count(_SECRET_MARK) > a.count(_SECRET_MARK) or not (a and b))
    ]


def _pairs(before: str, after: str) -> list[tuple[str, str]]:
    """The lines before and after side by side; where redaction changed the line count
    (it must not), the lines past the shorter side are paired with ``""`` and so count as
    changed, rather than being dropped."""
    return list(zip_longest(before.splitlines(), after.splitlines(), fillvalue=""))


def _privacy_lines(before: str, after: str) -> int:
    """How many lines changed with no secret found in them."""
    pairs = _pairs(before, after)
    return sum(
        a != b and a != "" != b and b.count(_SECRET_MARK) <= a.count(_SECRET_MARK) for a, b in pairs
    )


def measure(files: list[Path], redactor: Redactor) -> dict[str, object]:
    """Redact each file; count its bytes and its changed lines."""
    size, changed, privacy, recounted = 0, [], 0, 0
    started = time.perf_counter()
    for path in files:
        text = read(path)
        size += len(text)
        after = redactor.redact(text)
        changed += [(path, *line) for line in changed_lines(text, after)]
        privacy += _privacy_lines(text, after)
        recounted += text.count("\n") != after.count("\n")
    return {
        "files": len(files),
        "megabytes": round(size / 1e6, 1),
        "changed_lines": len(changed),
        "privacy_lines": privacy,
        "files_with_line_count_changed": recounted,
        "seconds": round(time.perf_counter() - started, 1),
        "_changed": changed,
    }


def main() -> int:
    """Print each set's figures (and with ``--misses`` every changed line); 1 when a set has
    more changed lines than ``CHANGED_GOAL``."""
    redactor = Redactor(FACTS, max_redacted_share=1.0)
    site = site_packages()
    met = True
    for name, files in sets().items():
        figures = measure(files, redactor)
        changed = figures.pop("_changed")
        print(f"bench_redact_realcode {name}:", json.dumps(figures))
        met = met and int(figures["changed_lines"]) <= CHANGED_GOAL  # type: ignore[call-overload]
        if "--misses" in sys.argv:
            for path, n, before, after in changed:  # type: ignore[attr-defined]
                where = path.relative_to(site) if path.is_relative_to(site) else path
                print(f"  {where}:{n}: {before.strip()[:110]}\n    -> {after.strip()[:110]}")
    print(f"  {'met' if met else 'MISSED'}: at most {CHANGED_GOAL} changed lines in each set")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
