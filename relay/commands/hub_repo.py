"""`relay hub repo create OWNER/NAME` and `relay hub repo list`: repositories on a running
hub, over its API with a token, exactly as a GitHub client creates and lists them; and
`relay hub --detach`. Together the offline quickstart needs nothing but relay and git."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from relay import RELAY_MODULE
from relay.commands.common import run_async
from relay.commands.output import Output
from relay.edges.git import RepoSlug
from relay.errors import ConfigError, LocalUsageError, RelayError


def register(inner: Any) -> None:
    """Add `hub repo create` and `hub repo list` under `relay hub`'s sub-verbs."""
    r: argparse.ArgumentParser = inner.add_parser(
        "repo", help="create or list repositories on a running hub (over its API)"
    )
    verbs = r.add_subparsers(dest="repo_verb", metavar="create|list")
    verbs.required = True
    c = verbs.add_parser("create", help="create OWNER/NAME (OWNER is the token's account)")
    c.add_argument("slug", metavar="OWNER/NAME")
    c.add_argument("--private", action="store_true", help="a private repository")
    c.add_argument(
        "--empty",
        action="store_true",
        help="no first commit (by default the repository starts with a README.md commit)",
    )
    c.add_argument(
        "--exist-ok", action="store_true", help="succeed if the repository already exists"
    )
    listing = verbs.add_parser("list", help="the repositories the token's account can push to")
    for p in (c, listing):
        p.add_argument("--api", default=None, help="the hub's URL (default: RELAY_API_URL)")
        p.add_argument("--json", action="store_true", help="machine-readable output")
    c.set_defaults(func=create)
    listing.set_defaults(func=list_repos)


def refused_token(api_url: str) -> ConfigError:
    """A hub that rejects the token was most likely given one from another database: say
    which folder it serves (when it is this user's hub), so the next token is right."""
    from relay.hub.running import hub_for

    running = hub_for(api_url)
    where = (
        f"--data {running.data}` (the folder it serves)"
        if running is not None
        else "--data DIR` (DIR: the folder that hub was started with)"
    )
    return ConfigError(
        f"the hub at {api_url} rejected the token",
        hint=f"make one for it with `relay hub token LOGIN {where}",
    )


def _run(args: argparse.Namespace, go: Any) -> Output:
    """Run ``go``, turning the hub's 401 into :func:`refused_token`."""
    from relay.edges.github.credentials import api_base_url
    from relay.edges.github.errors import rejected_token

    try:
        done: Output = run_async(go)
    except ConfigError as err:
        api_url = api_base_url(args.api)
        if err.message != rejected_token(api_url).message:
            raise
        raise refused_token(api_url) from err
    return done


def _session(args: argparse.Namespace) -> Any:
    from relay.edges.github import GitHubClient
    from relay.edges.github.credentials import api_base_url, find_token

    api_url = api_base_url(args.api)
    token = find_token(api_url=api_url)
    return GitHubClient(api_url=api_url, token=token.value)


def git_url(api_url: str, slug: str) -> str:
    """Where the hub serves the repository's git (GitHub's own shape on github.com)."""
    base = api_url.rstrip("/").removesuffix("/api/v3")  # a GitHub Enterprise Server's git
    if base == "https://api.github.com":
        base = "https://github.com"
    return f"{base}/{slug}.git"


def create(args: argparse.Namespace) -> Output:
    """Create the repository under the token's account; say where to clone it from."""
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", args.slug.strip()):
        raise LocalUsageError(
            f"{args.slug!r} is not OWNER/NAME",
            hint="name it as OWNER/NAME, for example `relay hub repo create alice/demo`",
        )
    slug = RepoSlug.parse(args.slug)

    async def go() -> Output:
        async with _session(args) as gh:
            me = await gh.current_user()
            if me.login.lower() != slug.owner.lower():
                raise LocalUsageError(
                    f"the token is {me.login}'s, so it can create {me.login}/{slug.name}"
                    f" but not {slug}",
                    hint=f"use a token of {slug.owner} (`relay hub token {slug.owner}`)",
                )
            made = await gh.create_own_repo(slug.name, private=args.private, readme=not args.empty)
            if made is None and not args.exist_ok:
                raise LocalUsageError(
                    f"{slug} already exists", hint="pick another name, or pass --exist-ok"
                )
            url = git_url(gh.api_url, f"{me.login}/{slug.name}")
            state = "created" if made is not None else "already exists"
            return Output(
                lines=(
                    f"{me.login}/{slug.name} {state}; clone it with: git clone {url}",
                    "(git's user name: any; its password: the token)",
                ),
                data={"repo": f"{me.login}/{slug.name}", "created": made is not None, "git": url},
            )

    return _run(args, go)


def list_repos(args: argparse.Namespace) -> Output:
    """One line per repository: OWNER/NAME, visibility, git URL."""

    async def go() -> Output:
        async with _session(args) as gh:
            repos = await gh.list_own_repos()
            rows = [
                {
                    "repo": r.full_name,
                    "private": r.private,
                    "git": git_url(gh.api_url, r.full_name),
                }
                for r in repos
            ]
        lines = [
            f"{row['repo']}  {'private' if row['private'] else 'public'}  {row['git']}"
            for row in rows
        ]
        return Output(lines=tuple(lines) or ("no repositories",), data={"repos": rows})

    return _run(args, go)


def detach(data: Path, argv: list[str]) -> Output:
    """Start `relay ARGV` (the same hub, without ``--detach``) in a session of its own and
    return once it serves (its first line says where): a script can use the hub at once,
    with no sleep, and stop it with the pid it left in ``DATA/hub.pid``. A folder another
    hub serves is refused here, before anything is started or written."""
    from relay.commands.demo import _detached, stop_command
    from relay.hub.running import refusal, serving
    from relay.hub.server import check_data_dir

    running = serving(check_data_dir(data))
    if running is not None:  # refused before its log is touched
        raise refusal(running)
    made = not data.exists()
    data.mkdir(parents=True, exist_ok=True)
    log = data / "hub.log"
    proc, url = _detached([sys.executable, *RELAY_MODULE, *argv], log)
    if not url:
        said = log.read_text().strip().splitlines()
        import subprocess

        try:  # it said why and is ending: its exit status says whose mistake it was
            code: int | None = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            code = None
            proc.kill()
            proc.wait()
        why = said[-1].removeprefix("relay: ") if said else "the hub did not start"
        if made:  # a folder made for a hub that never served: nothing is left half-written
            import shutil

            shutil.rmtree(data, ignore_errors=True)
            raise (LocalUsageError if code == 2 else RelayError)(why)
        raise (LocalUsageError if code == 2 else RelayError)(why, hint=f"see {log}")
    # the hub itself wrote DATA/hub.pid before its first line, and removes it when it stops
    return Output(
        lines=(
            f"relay hub serving {url} in the background (pid {proc.pid}, log {log})",
            f"stop it: {stop_command(proc.pid)}",
        ),
        data={"url": url, "pid": proc.pid, "log": str(log)},
    )
