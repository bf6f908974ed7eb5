"""Step 0 learns the risks: the security-critical areas of a project, proposed from its
file names, its instruction files (README, AGENTS.md, CLAUDE.md, CONTRIBUTING, ...) and
its recent history, for a person to confirm; written to LOOP.md's
``## Security-critical areas`` and read back as paths.

Ground rules: everything here is a function of the texts it is given (the driver reads the
files and git); a proposal names paths that exist and says where it was found, so that the
person confirming it can check; a goal whose declared paths fall in a confirmed area is
security-critical before its maker runs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from relay.loop.contract import is_within
from relay.loop.markdown import code_span, find, parse_code_span, sections

SECTION = "Security-critical areas"
MAX_PATHS = 8  # per area: the most a person is asked to confirm at once
HISTORY_DEPTH = 200  # recent commits read

# the instruction files an agent or a contributor is told to read, in the order they count
INSTRUCTION_FILES = (
    "AGENTS.md",
    "CLAUDE.md",
    "GEMINI.md",
    ".github/copilot-instructions.md",
    ".cursorrules",
    "CONTRIBUTING.md",
    "CONTRIBUTING.rst",
    "SECURITY.md",
    "README.md",
    "README.rst",
    "README",
    "docs/CONTRIBUTING.md",
)

# each area, and the words (a path segment's start, or a word of a sentence) that name it
AREAS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "authentication",
        (
            "auth",
            "login",
            "logout",
            "signin",
            "signup",
            "session",
            "oauth",
            "oidc",
            "jwt",
            "password",
            "passwd",
            "permission",
            "rbac",
            "sso",
            "saml",
        ),
    ),
    ("tenancy", ("tenant", "tenancy", "multitenan")),
    (
        "money",
        (
            "billing",
            "payment",
            "invoice",
            "stripe",
            "checkout",
            "pricing",
            "refund",
            "ledger",
            "wallet",
            "currenc",
            "money",
            "payout",
        ),
    ),
    ("migrations", ("migration", "migrate", "alembic")),
    (
        "deploy",
        ("deploy", "dockerfile", "helm", "k8s", "kubernetes", "terraform", "procfile", "ansible"),
    ),
    ("workflows", ("workflow", "jenkinsfile", "gitlab-ci", "circleci", "buildkite")),
    (
        "secret handling",
        (
            "secret",
            "credential",
            "keyring",
            "vault",
            "redact",
            "crypto",
            "encrypt",
            "decrypt",
            "signing",
            "dotenv",
        ),
    ),
)
_SECURITY_WORDS = re.compile(
    r"\b(security|vulnerab\w*|cve-\d+|exploit\w*|leak\w*|injection|xss|csrf|bypass\w*)\b",
    re.IGNORECASE,
)
_NOT_CODE = ("tests/", "test/", "spec/", "docs/", "doc/", "examples/", "vendor/", "node_modules/")


@dataclass(frozen=True)
class Commit:
    """One commit of the recent history: its id, subject and the files it touched."""

    sha: str
    subject: str
    files: tuple[str, ...]


@dataclass(frozen=True)
class Area:
    """A security-critical area: its name, its paths (a directory ends in ``/``) and where
    each piece of it was found."""

    name: str
    paths: tuple[str, ...]
    found: tuple[str, ...]

    def line(self) -> str:
        """The area as a line of LOOP.md's ``## Security-critical areas``."""
        spans = ", ".join(code_span(p) for p in self.paths)
        return f"- {self.name}: {spans} (found in {'; '.join(self.found)})"


def _tokens(segment: str) -> list[str]:
    return [t for t in re.split(r"[^a-z0-9]+", segment.lower()) if t]


def _area_of_words(words: Sequence[str]) -> str | None:
    for name, marks in AREAS:
        if any(w.startswith(m) for w in words for m in marks):
            return name
    return None


def _area_of_path(path: str) -> tuple[str, str] | None:
    """The area a path is in and the prefix that puts it there (the directory whose name
    marks it, or the file itself), or None."""
    low = path.lower()
    if low.startswith((".github/workflows/", ".circleci/", ".buildkite/")):
        return "workflows", path.split("/", 2)[0] + "/" + path.split("/", 2)[1] + "/"
    name = low.rsplit("/", 1)[-1]
    if name.startswith(".env") or name.endswith((".pem", ".key")):
        return "secret handling", path
    if name in (".gitlab-ci.yml", "jenkinsfile", "azure-pipelines.yml"):
        return "workflows", path
    parts = path.split("/")
    for index, segment in enumerate(parts):
        area = _area_of_words(_tokens(segment))
        if area is not None:
            last = index == len(parts) - 1
            return area, path if last else "/".join(parts[: index + 1]) + "/"
    return None


def _is_code(path: str) -> bool:
    """Whether ``path`` is the project's own code (not its tests, docs or prose)."""
    name = path.rsplit("/", 1)[-1].lower()
    prose = name.endswith((".md", ".rst", ".txt", ".lock")) or name.startswith(
        ("changelog", "license", "readme")
    )
    return not prose and not path.startswith(_NOT_CODE) and "/tests/" not in path


def _existing(path: str, files: Sequence[str]) -> str | None:
    """``path`` as the repository has it (a directory with its ``/``), or None."""
    clean = path.strip().removeprefix("./")
    if not clean:
        return None
    if clean in files:
        return clean
    directory = clean.rstrip("/") + "/"
    return directory if any(f.startswith(directory) for f in files) else None


def propose_areas(
    files: Sequence[str], docs: Mapping[str, str], history: Sequence[Commit]
) -> list[Area]:
    """The security-critical areas found in the tracked ``files``' names, the instruction
    ``docs`` (path to text) and the recent ``history``, each with its paths and evidence;
    an area with no path that exists is not proposed."""
    paths: dict[str, dict[str, None]] = {name: {} for name, _ in AREAS}
    found: dict[str, dict[str, None]] = {name: {} for name, _ in AREAS}
    for path in files:
        hit = _area_of_path(path)
        if hit is not None and (_is_code(path) or hit[0] == "workflows"):
            paths[hit[0]][hit[1]] = None
            found[hit[0]]["the file names"] = None
    for doc, text in docs.items():
        for number, line in enumerate(text.splitlines(), start=1):
            area = _area_of_words(re.findall(r"[a-z0-9-]+", line.lower()))
            if area is None:
                continue
            named = [
                p
                for span in re.findall(r"`([^`\s]+)`", line)
                if (p := _existing(span, files)) is not None
            ]
            if named or _SECURITY_WORDS.search(line):
                found[area][f"{doc} line {number}"] = None
            for path in named:
                paths[area][path] = None
    for commit in history:
        worried = _SECURITY_WORDS.search(commit.subject)
        by_subject = _area_of_words(re.findall(r"[a-z0-9-]+", commit.subject.lower()))
        if not (worried or by_subject):
            continue
        for path in commit.files:
            if path not in files or not _is_code(path):
                continue
            hit = _area_of_path(path)
            area = hit[0] if hit else by_subject if worried else None
            if area is None:
                continue
            paths[area][hit[1] if hit else path] = None
            found[area][f'commit {commit.sha[:10]} "{" ".join(commit.subject.split())[:60]}"'] = (
                None
            )
    areas = []
    for name, _ in AREAS:
        chosen = _outermost(list(paths[name]))[:MAX_PATHS]
        if chosen:
            areas.append(Area(name, tuple(chosen), tuple(found[name])))
    return areas


def _outermost(paths: list[str]) -> list[str]:
    """The paths without those inside another of them, sorted."""
    return sorted(p for p in paths if not any(o != p and is_within(p, o) for o in paths))


# --- LOOP.md ---


def area_paths(loop_text: str) -> tuple[str, ...]:
    """The paths listed in LOOP.md's ``## Security-critical areas`` (each item's code spans
    before its ``(found in ...)``)."""
    parts = sections(loop_text)
    index = find(parts, SECTION)
    if index is None:
        return ()
    found: list[str] = []
    for line in parts[index].text.splitlines()[1:]:
        item = re.fullmatch(r"- [^`:]+:\s*(.*)", line.strip())
        if item is None:
            continue
        listed = item.group(1).split(" (found in", 1)[0]
        for span in re.findall(r"`+[^`]+`+", listed):
            path = parse_code_span(span)
            if path and not path.startswith("-"):
                found.append(path.strip())
    return tuple(dict.fromkeys(found))


def with_areas(loop_text: str, areas: Sequence[Area]) -> str:
    """LOOP.md with each area whose paths are not all listed yet appended to
    ``## Security-critical areas`` (the section added at the end when absent); every other
    byte kept."""
    listed = set(area_paths(loop_text))
    new = [a for a in areas if not set(a.paths) <= listed]
    if not new:
        return loop_text
    entries = "".join(f"{a.line()}\n" for a in new)
    parts = sections(loop_text)
    index = find(parts, SECTION)
    if index is None:
        return loop_text.rstrip("\n") + f"\n\n## {SECTION}\n\n{entries}"
    part = parts[index]
    body = part.text.rstrip("\n")
    tail = part.text[len(body) :]
    text = body + "\n\n" + entries + (tail[1:] if len(tail) > 1 else "")
    return (
        "".join(p.text for p in parts[:index]) + text + "".join(p.text for p in parts[index + 1 :])
    )


def critical_areas(
    paths: Sequence[str], loop_text: str, contract_paths: Sequence[str] = ()
) -> list[str]:
    """Why a goal declaring ``paths`` is security-critical (one reason per path inside a
    listed area or a contract's security-critical path), or nothing."""
    listed = [*area_paths(loop_text), *contract_paths]
    reasons = []
    for path in paths:
        inside = [a for a in listed if is_within(path, a) or is_within(a, path)]
        if inside:
            reasons.append(
                f"`{path}` is in a security-critical area ({', '.join(f'`{a}`' for a in inside)})"
            )
    return reasons
