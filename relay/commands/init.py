"""`relay init`: the setup wizard, run once per repository.

It detects the repository, the account and the visibility, asks what may be delegated
and run, shows the plan and proceeds only on yes; then it creates the labels, writes the
spine under docs/loop/, registers this node, commits and pushes. Every question has a
flag, and `--yes` takes the defaults without asking.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import re
import socket
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from relay.commands.common import run_async
from relay.commands.output import Output
from relay.edges.git import Clone, RepoSlug
from relay.edges.github import GitHubClient, appauth
from relay.edges.github.credentials import api_base_url, find_token
from relay.edges.local import NodeConfig, NodeState
from relay.errors import ConfigError, LocalUsageError
from relay.node.apply import Edit, publish_edits
from relay.node.context import LOOP_PATH, open_clone, read_loop
from relay.protocol import LABEL_SPECS, Account, DestructiveRule, Master, Node, Scope, has_section
from relay.protocol.master import DEFAULT_CLASSES, NAME_RE, build
from relay.protocol.master_text import set_section
from relay.protocol.roster import (
    ROSTER_PATH,
    fingerprint,
    from_master,
    render_chain,
    sign_revision,
)
from relay.protocol.signatures import NodeKeys, public_key_of, render_keys
from relay.protocol.spine import render_spine

Ask = Callable[[str, str], str]
PUBLIC_RISK = (
    "anyone can comment on its issues (relay records strangers' comments as data and never"
    " obeys them) and the logs relay commits are world-readable"
)


def register(sub: Any) -> None:
    """Add `init`."""
    p: argparse.ArgumentParser = sub.add_parser("init", help="set relay up in a repository")
    p.add_argument("--repo-dir", type=Path, default=None, help="the clone (default: here)")
    p.add_argument("-R", "--repo", default=None, help="OWNER/NAME when the remote is not on GitHub")
    p.add_argument("--api", default=None, help="API base URL (default: RELAY_API_URL or GitHub)")
    p.add_argument("--node", default=None, help="this node's name (default: the host name)")
    p.add_argument("--accounts", default=None, help="logins that give instructions (comma list)")
    p.add_argument("--allow", default=None, help="command classes workers may run (comma list)")
    p.add_argument("--delegable", default=None, help="kinds of job that may be delegated")
    p.add_argument(
        "--destructive",
        choices=[r.value for r in DestructiveRule],
        default=None,
        help="whether destructive steps need a person's word or are forbidden",
    )
    p.add_argument(
        "--data-branch",
        default=None,
        help="a branch of relay's own for its logs, node table and handover"
        " (proposed when the default branch is protected)",
    )
    p.add_argument(
        "--first-job",
        default=None,
        metavar="TITLE",
        help="end by opening the first job with this title (the wizard's last question)",
    )
    p.add_argument(
        "--first-worker", default=None, metavar="NODE", help="the first job's worker node"
    )
    p.add_argument("--first-objective", default=None, help="what the first job must find or do")
    p.add_argument("--yes", action="store_true", help="take the defaults and do not ask")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def default_node_name() -> str:
    """A node name from the host name: lower case, safe characters only."""
    name = re.sub(r"[^a-z0-9._-]+", "-", socket.gethostname().split(".")[0].lower()).strip("-")
    return name or "node"


def os_name() -> str:
    """The OS as people call it, for the node table."""
    return {"Darwin": "macOS"}.get(platform.system(), platform.system() or "unknown")


def words(text: str) -> tuple[str, ...]:
    """A comma list as a tuple of trimmed words."""
    return tuple(w.strip() for w in text.split(",") if w.strip())


def make_ask(args: argparse.Namespace) -> Ask:
    """Ask on the terminal, or take the default under --yes."""

    def ask(question: str, default: str) -> str:
        if args.yes:
            return default
        import signal
        import threading

        # asyncio.run defers Ctrl-C to the next await, which a blocking input() never
        # reaches: restore Python's own handler while asking, so Ctrl-C leaves at once
        main = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGINT, signal.default_int_handler) if main else None
        try:
            sys.stderr.write(f"{question} [{default}]: ")  # stdout stays for the result
            sys.stderr.flush()
            answer = input().strip()
        except EOFError:
            sys.stderr.write("\n")
            raise LocalUsageError(
                "no answer on standard input", hint="pass --yes to take the defaults"
            ) from None
        finally:
            if main:
                signal.signal(signal.SIGINT, previous)
        return answer or default

    return ask


async def resolve_accounts(
    gh: GitHubClient, logins: tuple[str, ...], me: Account
) -> tuple[Account, ...]:
    """Numeric ids for instruction accounts (logins can be renamed; ids cannot)."""
    found = []
    for login in logins:
        if login == me.login:
            found.append(me)
            continue
        unknown = ConfigError(
            f"cannot find account {login!r} among the repository's collaborators",
            hint="check the login, or add the account as a collaborator first",
        )
        try:
            perm = await gh.collaborator_permission(login)
        except ConfigError as exc:  # a 404: no such account, or not one of the repository's
            if "not found" not in exc.message:
                raise
            raise unknown from None
        if perm.user is None:
            raise unknown
        found.append(Account(id=perm.user.id, login=perm.user.login))
    return tuple(found)


def repository(args: argparse.Namespace, clone: Clone) -> str:
    """OWNER/NAME from --repo or the remote URL."""
    if args.repo:
        return str(RepoSlug.parse(args.repo))
    slug = clone.remote_slug()
    if slug is None:
        raise ConfigError(
            "cannot tell OWNER/NAME from the git remote", hint="pass --repo OWNER/NAME"
        )
    return str(slug)


def plan_lines(master: Master, node: Node, *, public: bool) -> list[str]:
    """The plan shown before anything is written."""
    lines = [
        f"repository:   {master.repository} ({'PUBLIC' if public else 'private'})",
        f"API:          {master.api_url}",
        f"this node:    {node.name} ({node.os})",
        f"instructions: {', '.join(str(a) for a in node.accounts)}",
        f"delegable:    {', '.join(master.scope.delegable)}",
        f"workers run:  {', '.join(master.scope.allowed)}",
        f"destructive:  {master.scope.destructive.value}",
        *([f"relay's branch: {master.data_branch}"] if master.data_branch else []),
        "will create the labels "
        + ", ".join(s.label.value for s in LABEL_SPECS)
        + f", write {LOOP_PATH.parent}/, commit and push",
    ]
    if public:
        lines.insert(
            0,
            "WARNING: this repository is PUBLIC: anyone can comment on its issues (relay"
            " ignores them, but reads them) and committed logs are world-readable.",
        )
    return lines


async def create_labels(gh: GitHubClient) -> list[str]:
    """Create relay's five labels; correct the colour and description of existing ones."""
    made = []
    for spec in LABEL_SPECS:
        if await gh.create_label(spec.label.value, color=spec.color, description=spec.description):
            made.append(spec.label.value)
        else:
            await gh.update_label(spec.label.value, color=spec.color, description=spec.description)
    return made


def spine_edits(master: Master) -> dict[Path, Edit]:
    """The edits that set up docs/loop/: LOOP.md gains the section; every other file is
    written only when absent (what a repository already has is kept byte for byte)."""
    base = LOOP_PATH.parent
    edits: dict[Path, Edit] = {}
    for name, text in render_spine(master).items():
        if name == "LOOP.md":
            edits[base / name] = partial(_with_section, master=master, fresh=text)
        else:
            edits[base / name] = partial(_kept_or, text)
    edits[base / "relay" / ".gitkeep"] = partial(_kept_or, "")
    return edits


def _with_section(old: str | None, *, master: Master, fresh: str) -> str:
    return fresh if old is None else set_section(old, master)


def _kept_or(text: str, old: str | None) -> str:
    return text if old is None else old


def own_key(state: NodeState, node: str) -> bytes:
    """This node's private key, made now when it has none: every node signs from its
    first command (there is no unsigned path)."""
    return state.signing_key(node) or state.new_signing_key(node)


DATA_BRANCH = "relay-data"


async def choose_data_branch(gh: GitHubClient, args: argparse.Namespace, ask: Ask) -> str | None:
    """The branch relay commits to: ``--data-branch``; else, when the default branch is
    protected (it would refuse relay's commits), the one the person accepts; else None
    (relay commits to the branch the clone is on)."""
    if args.data_branch:
        return str(args.data_branch)
    default = (await gh.get_repo()).default_branch
    if not await gh.branch_protected(default):
        return None
    print(
        f"relay: {default} is a protected branch and would refuse relay's commits; relay"
        " proposes a branch of its own for its logs, node table and handover",
        file=sys.stderr,
    )
    return ask("relay's branch", DATA_BRANCH).strip() or DATA_BRANCH


def run(args: argparse.Namespace) -> Output:
    """Run the wizard."""
    clone = open_clone((args.repo_dir or Path.cwd()).resolve(), api=args.api)
    loop = read_loop(clone.root)
    if loop is not None and has_section(loop):
        raise LocalUsageError(
            f"{LOOP_PATH} already has a `## Relay` section; relay is set up here",
            hint="run `relay join` on this machine instead",
        )
    return run_async(lambda: wizard(args, clone))


async def wizard(args: argparse.Namespace, clone: Clone) -> Output:
    """Ask, show the plan, and carry it out on yes."""
    from relay.edges.github import GitHubClient

    ask = make_ask(args)
    repo = repository(args, clone)
    api_url = api_base_url(args.api)
    state = NodeState.for_clone(clone.root)
    app = appauth.from_env()
    token = find_token(api_url=api_url, token_file=state.token_path, app=app)
    async with GitHubClient(api_url=api_url, token=token.value, repo=repo, app=app) as gh:
        user = await gh.current_user()
        me = Account(id=user.id, login=user.login)
        public = not (await gh.get_repo()).private
        if public:  # loudly, before any question, whatever the output format
            print(f"relay: WARNING: {repo} is PUBLIC: {PUBLIC_RISK}", file=sys.stderr)
        name = args.node or ask("this node's name", default_node_name())
        logins = words(args.accounts or ask("accounts that give instructions", me.login))
        accounts = await resolve_accounts(gh, logins, me)
        node = build(
            Node, name=name, os=os_name(), accounts=accounts, scheduler="none",
            public_key=render_keys(NodeKeys(current=public_key_of(own_key(state, name)))),
        )  # fmt: skip
        scope = build(
            Scope,
            delegable=words(args.delegable or ask("delegable jobs", "diagnostics, verification")),
            allowed=words(args.allow or ask("workers may run", ", ".join(DEFAULT_CLASSES))),
            destructive=args.destructive
            or ask("destructive steps (authorized-by-human/forbidden)", "authorized-by-human"),
        )
        data_branch = await choose_data_branch(gh, args, ask)
        master = build(
            Master, repository=repo, api_url=api_url, nodes=(node,), scope=scope,
            data_branch=data_branch,
        )  # fmt: skip
        plan = plan_lines(master, node, public=public)
        if not args.yes:
            print("\n".join(plan), file=sys.stderr)
            if ask("proceed?", "no").lower() not in ("y", "yes"):
                return Output(lines=("nothing was changed",), exit_status=1)
        first_one = first_job(args, ask, controller=node.name)  # the last question
        labels = await create_labels(gh)
    message = f"relay: set up the relay spine ({node.name})"
    first = sign_revision(
        from_master(master, signed_by=node.name, at=datetime.now(UTC), admins={node.name}),
        private_key=own_key(state, node.name),
    )
    edits = spine_edits(master)
    edits[Path(ROSTER_PATH)] = lambda _old: render_chain((first,))
    await asyncio.to_thread(publish_edits, clone, edits, message, branch=master.data_branch)
    clone.record_data_branch(master.data_branch)
    state.save_roster(first.payload())
    state.save_config(NodeConfig(node=node.name, repo=repo, api_url=api_url, scheduler="none"))
    lines = [*(plan if args.yes else []), f"relay is set up in {repo}; this node is {node.name}"]
    lines.append(
        f"{node.name} is the roster's admin; its signing key is"
        f" {fingerprint(public_key_of(own_key(state, node.name)))} (another machine can pin it"
        " with `relay join --trust FINGERPRINT`)"
    )
    number = await open_first_job(clone, node.name, first_one) if first_one else None
    if first_one and number is not None:
        lines.append(
            f"opened job #{number}: {node.name} controls, {first_one[1]} works;"
            f" run `relay join --node {first_one[1]}` on that machine, `relay nodes approve"
            f" {first_one[1]} --fingerprint FP` here (FP: what that join printed), then"
            f" `relay task {number}`"
        )
    lines.append(
        "next: run `relay join --node NAME` in a clone on each other machine, then"
        " `relay nodes approve NAME --fingerprint FP` here to admit the key that join printed"
    )
    return Output(
        lines=tuple(lines),
        data={
            "repo": repo,
            "node": node.name,
            "labels_created": labels,
            "public": public,
            "job": number,
        },
    )


def first_job(args: argparse.Namespace, ask: Ask, *, controller: str) -> tuple[str, ...] | None:
    """The wizard's last question: open the first job now? (title, worker, objective), or
    None. Under --yes only --first-job opens one."""
    try:
        title = args.first_job or ask("open the first job? its title (empty: not now)", "")
    except LocalUsageError:  # no answer at all to the optional last question: not now
        return None
    if not title.strip():
        return None
    worker = args.first_worker or ask("its worker (the node name of the other machine)", "")
    if not re.fullmatch(NAME_RE, worker.strip()) or worker.strip() == controller:
        raise LocalUsageError(
            f"the first job needs a worker other than {controller}, named as a node is",
            hint="pass --first-worker NODE (the name the other machine will join as)",
        )
    objective = args.first_objective or ask("its objective", title.strip())
    return title.strip(), worker.strip(), objective.strip()


async def open_first_job(clone: Clone, node: str, first: tuple[str, ...]) -> int:
    """Open the first job as this node; its worker may join afterwards."""
    from relay.node.apply import apply_plan
    from relay.node.context import client, open_node
    from relay.protocol import plan_open_job

    title, worker, objective = first
    ctx = open_node(repo_dir=clone.root, node=node, api=None)
    plan = plan_open_job(
        ctx.master,
        controller=node,
        worker=worker,
        title=title,
        objective=objective,
        worker_may_join=True,
    )
    async with client(ctx) as gh:
        return await apply_plan(gh, plan, sign=ctx.sign)
