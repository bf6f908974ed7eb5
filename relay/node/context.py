"""What every driver needs first: the clone, the master section, who this node is, the API.

``open_node`` gathers them in one place so each verb starts the same way and fails with
the same one-line messages: not a clone, no master section, no node name, no token.
Nothing here talks to the network; ``client`` opens the API session.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from relay.edges.git import Clone
from relay.edges.github.appauth import from_env
from relay.edges.github.credentials import Token, api_base_url, find_token
from relay.edges.local import NodeConfig, NodeState, clone_root
from relay.errors import ConfigError
from relay.node.clone import open_clone as open_clone
from relay.node.clone import web_base as web_base
from relay.node.spine import LOOP_PATH as LOOP_PATH
from relay.node.spine import read_loop as read_loop
from relay.node.spine import read_master as read_master
from relay.node.trust import Trust, effective, establish
from relay.protocol import Master

if TYPE_CHECKING:
    from relay.edges.github import GitHubClient
    from relay.edges.github.appauth import AppAuth
    from relay.redact import Redactor

HANDOVER_PATH = Path("docs/loop/handover.md")
NODE_ENV = "RELAY_NODE"


@dataclass
class NodeContext:
    """One node acting in one clone: everything a verb reads before it acts."""

    root: Path
    state: NodeState
    master: Master
    node: str
    api_url: str
    config: NodeConfig | None
    # the roster this node trusts, and what the branch says that it does not follow
    trust: Trust = field(default_factory=lambda: Trust(None))
    # the master section as the file has it (only its people's text is followed)
    file_master: Master | None = None
    # built redactors by token (building one compiles every rule); see relay.node.redaction
    redactors: dict[str, Redactor] = field(default_factory=dict, repr=False)

    @cached_property
    def clone(self) -> Clone:
        """The clone's git operations, opened on first use (an idle pass needs none). Over
        http(s) git authenticates with this node's token, for its API's host only."""
        clone = Clone.open(self.root)
        clone.token = self._git_token
        clone.token_scope = web_base(self.api_url)
        return clone

    @property
    def repo(self) -> str:
        """OWNER/NAME of the repository the jobs live in."""
        return self.master.repository

    @cached_property
    def app(self) -> AppAuth | None:
        """The GitHub App this node acts as (RELAY_APP_*), None for a person's node."""
        return from_env()

    def token(self) -> Token:
        """The token for this node's API; ConfigError saying how to provide one. A node that
        is a GitHub App uses its installation token (fetched, then refreshed when due)."""
        return find_token(api_url=self.api_url, token_file=self.state.token_path, app=self.app)

    @cached_property
    def signing_key(self) -> bytes | None:
        """This node's private key (None before `relay join` made one)."""
        return self.state.signing_key(self.node)

    def sign(self, body: str, *, issue: int | None = None) -> str:
        """``body`` signed by this node when it has a key (every relay block it posts or
        writes goes through here); a body without a block is returned as it is. A job
        body is signed for its ``issue``."""
        from relay.protocol.signatures import sign_body

        key = self.signing_key
        if key is None:
            return body
        return sign_body(body, repo=self.repo, private_key=key, issue=issue)

    def _git_token(self) -> str | None:
        try:
            return self.token().value
        except ConfigError:
            return None  # git's own credential helpers may still answer

    def reload_master(self) -> Master:
        """Re-read the master section and the roster (after a pull) and keep them."""
        file_master = read_master(self.root)
        self.trust = establish(
            self.root, self.state, self.config, file_master, node=self.node, first_use=False
        )
        self.file_master = file_master
        self.master = effective(
            file_master, self.trust, repository=self.repo, api_url=self.api_url, config=self.config
        )
        self.redactors.clear()  # the scope's patterns may have changed
        return self.master

    def html_url(self, path: str) -> str:
        """A web URL under this repository (GitHub's scheme on github.com, the hub's here)."""
        return f"{web_base(self.api_url)}/{self.repo}/{path.lstrip('/')}"


def node_name(flag: str | None, config: NodeConfig | None) -> str:
    """This node's name: ``--node``, else the clone's joined node, else ``RELAY_NODE``."""
    name = flag or (config.node if config else None) or os.environ.get(NODE_ENV)
    if not name:
        raise ConfigError(
            "which node is this clone? pass --node NAME (or run `relay join --node NAME` once)"
        )
    return name


def open_node(
    *,
    repo_dir: Path | None,
    node: str | None,
    api: str | None,
    need_node: bool = True,
    first_use: bool = False,
    pin: str | None = None,
) -> NodeContext:
    """Open the clone at ``repo_dir`` (default: the current directory) as a node: the
    master section it acts on is the trusted roster's (relay.node.trust), and the API and
    repository are those saved at join (``--api`` and RELAY_API_URL still choose).
    ``first_use``: the roster may be trusted on first use (`relay join`); ``pin``: a
    fingerprint it must be signed by."""
    root = clone_root(repo_dir or Path.cwd())
    state = NodeState.for_clone(root)
    config = state.load_config()
    file_master = read_master(root)
    name = node_name(node, config) if need_node else (node or (config.node if config else ""))
    trust = establish(root, state, config, file_master, node=name, first_use=first_use, pin=pin)
    # the connection facts: the flag, the variable, those saved at join, else the signed
    # roster's; LOOP.md's only before any roster is trusted (while relay is set up)
    signed = trust.revision
    saved = config.api_url if config is not None else None
    chosen = api or os.environ.get("RELAY_API_URL") or saved
    chosen = chosen or (signed.api_url if signed else None) or file_master.api_url
    api_url = api_base_url(chosen)
    repo = (config.repo if config is not None else None) or (
        signed.repository if signed else file_master.repository
    )
    master = effective(file_master, trust, repository=repo, api_url=api_url, config=config)
    if not first_use:  # `relay join` shows them itself
        for line in trust.said:
            print(f"relay: {line}", file=sys.stderr)
    return NodeContext(
        root=root,
        state=state,
        master=master,
        node=name,
        api_url=api_url,
        config=config,
        trust=trust,
        file_master=file_master,
    )


def client(ctx: NodeContext, *, token: Token | None = None) -> GitHubClient:
    """An API session for this node (use with ``async with``), its ETag cache on disk."""
    from relay.edges.github import GitHubClient

    return GitHubClient(
        api_url=ctx.api_url,
        token=(token or ctx.token()).value,
        repo=ctx.repo,
        cache_path=ctx.state.etag_cache_path,
        app=ctx.app,
    )
