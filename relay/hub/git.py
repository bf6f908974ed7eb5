"""The repositories' git: one bare repository per hub repository, served over smart HTTP.

Each repository created through the API gets ``<data>/git/<repo id>.git`` (by id, so a
rename never moves it). git's own ``upload-pack`` and ``receive-pack`` serve it at GitHub's
paths (``/<owner>/<repo>.git/info/refs``, ``git-upload-pack``, ``git-receive-pack``) as
``git http-backend`` would (see ``serve_git``); the hub
decides who may read or push with the API's own access rules before git runs, and answers
as GitHub's git host does: an anonymous caller that needs more is challenged (401
``WWW-Authenticate: Basic``), a token that may not see the repository gets 404, a reader
that pushes gets 403.

The refs API reads and writes these same refs once a repository's git holds an object
(see ``api_refs``): reads parse ``packed-refs`` and the loose refs directly, because a pass
reads refs often and a process per read would cost more than the request; writes go through
``git update-ref`` with the old value, so git's own lock arbitrates between an API create and
a concurrent push.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

ZERO = "0" * 40
_HEX = re.compile(r"^[0-9a-f]{40}$")
SERVICES = ("git-upload-pack", "git-receive-pack")
_BAD_REF_CHARS = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]")


def valid_ref_name(name: str) -> bool:
    """Whether ``git check-ref-format`` accepts ``name`` (its rules, without a process)."""
    if name.endswith(("/", ".")) or "//" in name or ".." in name or "@{" in name:
        return False
    if name == "@" or _BAD_REF_CHARS.search(name):
        return False
    parts = name.split("/")
    return len(parts) >= 2 and all(
        p and not p.startswith(".") and not p.endswith(".lock") for p in parts
    )


def _git_env() -> dict[str, str]:
    """A stable environment for the hub's own git calls (no user config, no prompts)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0", HOME=os.devnull)
    return env


def git_env() -> dict[str, str]:
    """The environment the hub runs git in (see ``_git_env``)."""
    return _git_env()


@dataclass(frozen=True)
class Bare:
    """One repository's bare git directory."""

    path: Path

    def ensure(self) -> Bare:
        """Create the bare repository if it does not exist yet (default branch ``main``)."""
        if not (self.path / "HEAD").exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._git("init", "--bare", "--quiet", "--initial-branch=main", str(self.path))
        return self

    def seed_readme(self, title: str, *, author: str, email: str) -> str:
        """The first commit on ``main``, holding a README.md, as GitHub's ``auto_init`` makes
        it; its sha."""
        env = _git_env()
        for role in ("AUTHOR", "COMMITTER"):
            env[f"GIT_{role}_NAME"], env[f"GIT_{role}_EMAIL"] = author, email

        def git(*args: str, stdin: str = "") -> str:
            done = subprocess.run(
                ["git", *args],
                cwd=self.path,
                env=env,
                input=stdin,
                capture_output=True,
                text=True,
                check=True,
            )
            return done.stdout.strip()

        blob = git("hash-object", "-w", "--stdin", stdin=f"# {title}\n")
        tree = git("mktree", stdin=f"100644 blob {blob}\tREADME.md\n")
        commit = git("commit-tree", tree, "-m", "Initial commit")
        git("update-ref", "refs/heads/main", commit, "0" * 40)
        return commit

    def _git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        cwd = self.path if (self.path / "HEAD").exists() else self.path.parent
        return subprocess.run(
            ["git", *args], cwd=cwd, env=_git_env(), capture_output=True, text=True, check=check
        )

    def has_objects(self) -> bool:
        """Whether anything was ever pushed (an object, loose or packed, exists)."""
        objects = self.path / "objects"
        with contextlib.suppress(FileNotFoundError):
            for entry in os.scandir(objects):
                if len(entry.name) == 2 and entry.is_dir() and any(os.scandir(entry.path)):
                    return True
            pack = objects / "pack"
            return pack.is_dir() and any(p.suffix == ".pack" for p in pack.iterdir())
        return False

    def ref(self, name: str) -> str | None:
        """The sha of one ref (loose first, then packed), or None; no directory walk, since
        a claim check names its ref exactly."""
        if not valid_ref_name(name):  # never a path out of refs/ (``..``)
            return None
        with contextlib.suppress(OSError):
            sha = (self.path / name).read_text().strip()
            return sha if _HEX.match(sha) else None
        with contextlib.suppress(FileNotFoundError):
            for line in (self.path / "packed-refs").read_text().splitlines():
                sha, _, packed = line.partition(" ")
                if packed == name and _HEX.match(sha):
                    return sha
        return None

    def refs(self, prefix: str = "refs/") -> list[tuple[str, str]]:
        """``(name, sha)`` of every ref starting with ``prefix``, sorted by name; loose refs
        win over packed ones, as in git; symbolic refs are skipped."""
        found: dict[str, str] = {}
        if ".." in prefix or not prefix.startswith("refs/"):  # never a walk out of refs/
            return []
        with contextlib.suppress(FileNotFoundError):
            for line in (self.path / "packed-refs").read_text().splitlines():
                sha, _, name = line.partition(" ")
                if _HEX.match(sha) and name.startswith(prefix):
                    found[name] = sha
        root = self.path / "refs"
        start = self.path / prefix.rsplit("/", 1)[0]  # walk only where the prefix can match
        for dirpath, _dirs, files in os.walk(start):
            for file in files:
                full = Path(dirpath, file)
                name = "refs/" + full.relative_to(root).as_posix()
                if not name.startswith(prefix) or name.endswith(".lock"):
                    continue
                with contextlib.suppress(OSError):
                    sha = full.read_text().strip()
                    if _HEX.match(sha):
                        found[name] = sha
        return sorted(found.items())

    def object_type(self, sha: str) -> str | None:
        """``commit``, ``tree``, ``blob`` or ``tag``; None when the repository lacks it."""
        done = self._git("cat-file", "-t", sha, check=False)
        return done.stdout.strip() if done.returncode == 0 else None

    async def read(self, *args: str) -> bytes | None:
        """The output of one read-only git command in this repository, without blocking the
        event loop (the web pages read trees and files); None when git refuses. Callers
        pass user input only as a resolved sha, after ``--`` or inside ``<sha>:<path>``."""
        if not (self.path / "HEAD").exists():
            return None
        proc = await asyncio.create_subprocess_exec(
            "git", *args, cwd=self.path, env=_git_env(),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        out, _ = await proc.communicate()
        return out if proc.returncode == 0 else None

    async def resolve(self, rev: str) -> str | None:
        """The commit a sha, branch or tag names, or None."""
        if not rev or rev.startswith("-") or any(c in rev for c in ":^~ \t\n"):
            return None
        out = await self.read(
            "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"
        )  # fmt: skip
        return out.decode().strip() if out else None

    async def kind(self, commit: str, path: str) -> str | None:
        """``tree`` or ``blob`` for ``path`` at ``commit`` (the root is a tree), or None."""
        if not path:
            return "tree"
        out = await self.read("cat-file", "-t", f"{commit}:{path}")
        return out.decode().strip() if out else None

    async def tree(self, commit: str, path: str) -> list[tuple[str, str, int | None]] | None:
        """``(type, name, size)`` of each entry of the folder ``path`` at ``commit``,
        folders first then by name, as GitHub lists them; None when it is not a folder."""
        spec = f"{commit}:{path}" if path else f"{commit}^{{tree}}"
        out = await self.read("ls-tree", "-l", "-z", spec)
        if out is None:
            return None
        rows: list[tuple[str, str, int | None]] = []
        for record in out.decode("utf-8", "replace").split("\0"):
            head, _, name = record.partition("\t")
            parts = head.split()
            if len(parts) == 4 and name:
                size = int(parts[3]) if parts[3].isdigit() else None
                rows.append((parts[1], name, size))
        return sorted(rows, key=lambda r: (r[0] != "tree", r[1].lower()))

    async def file(self, commit: str, path: str) -> bytes | None:
        """The bytes of the file ``path`` at ``commit``, or None."""
        return await self.read("cat-file", "blob", f"{commit}:{path}") if path else None

    def is_ancestor(self, old: str, new: str) -> bool:
        """Whether moving a ref from ``old`` to ``new`` is a fast-forward."""
        return self._git("merge-base", "--is-ancestor", old, new, check=False).returncode == 0

    def update(self, name: str, new: str, old: str) -> bool:
        """Set ``name`` to ``new`` only if it is ``old`` now (``ZERO``: must not exist;
        ``new`` ``ZERO``: delete); False when another writer got there first."""
        if new == ZERO:
            done = self._git("update-ref", "-d", name, old, check=False)
        else:
            done = self._git("update-ref", name, new, old, check=False)
        return done.returncode == 0


def bare_path(data_dir: Path, repo_id: int) -> Path:
    """Where a repository's git lives under the hub's data directory."""
    return data_dir / "git" / f"{repo_id}.git"


def require_git() -> None:
    """FileNotFoundError naming git when it is not on the PATH (the CLI then says git is
    missing), looked up without starting it: the hub says so when it starts, not at a
    repository's creation."""
    import errno
    import shutil

    if shutil.which("git") is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), "git")


_NO_CACHE = {
    "Expires": "Fri, 01 Jan 1980 00:00:00 GMT",
    "Pragma": "no-cache",
    "Cache-Control": "no-cache, max-age=0, must-revalidate",
}


async def serve_git(
    request: web.Request,
    bare: Bare,
    service: str,
    user: str | None,
    extra: dict[str, str] | None = None,
) -> web.StreamResponse:
    """Answer one smart-HTTP request with git's own ``upload-pack`` or ``receive-pack``, as
    ``git http-backend`` answers it (its headers, its service line, its committer), without
    that program in between: one process a request where it started two.
    ``extra`` is more environment for git's hooks (who pushes)."""
    name = service.removeprefix("git-")
    advertise = request.method == "GET"
    if not advertise and request.headers.get("Content-Type") != f"application/x-{service}-request":
        received = request.headers.get("Content-Type", "")
        return web.Response(
            status=415,
            headers=_NO_CACHE,
            text=f"Expected POST with Content-Type 'application/x-{service}-request', "
            f"but received '{received}' instead.\n",
        )
    env = _git_env()
    env.update(extra or {})
    who, host = user or "anonymous", request.remote or "(none)"
    env.update(GIT_COMMITTER_NAME=who, GIT_COMMITTER_EMAIL=f"{who}@http.{host}")
    protocol = request.headers.get("Git-Protocol", "")
    if protocol:
        env["GIT_PROTOCOL"] = protocol
    argv = ["git", name, "--stateless-rpc", *(["--advertise-refs"] if advertise else []), "."]
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=bare.path,
        env=env,
        stdin=asyncio.subprocess.DEVNULL if advertise else asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    kind = "advertisement" if advertise else "result"
    headers = {**_NO_CACHE, "Content-Type": f"application/x-{service}-{kind}"}
    pump = None if proc.stdin is None else asyncio.ensure_future(_pump(request, proc.stdin))
    try:
        resp = web.StreamResponse(status=200, headers=headers)
        await resp.prepare(request)
        if advertise and "version=2" not in protocol:  # v0/v1 open with the service's line
            line = f"# service={service}\n"
            await resp.write(b"%04x%s0000" % (len(line) + 4, line.encode()))
        while chunk := await proc.stdout.read(65536):
            await resp.write(chunk)
        await resp.write_eof()
        return resp
    finally:
        if pump is not None:
            await pump
        await proc.wait()


async def _pump(request: web.Request, stdin: asyncio.StreamWriter) -> None:
    """The request's body into git's standard input (aiohttp has inflated it already when
    the client gzipped it, as git does a large fetch request)."""
    try:
        while chunk := await request.content.read(65536):
            stdin.write(chunk)
            await stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass
    finally:
        stdin.close()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            await stdin.wait_closed()
