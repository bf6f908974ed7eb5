"""Is an Actions node's signing key out of a pusher's reach? `relay doctor`'s check, in a run.

Anyone with push access can write a workflow, and a workflow run on their branch can read
the repository's secrets: a node key kept there lets any pusher sign TASKs as the node.
A deployment environment's secrets reach only the jobs its protection rules let through,
so relay's workflow takes ``RELAY_NODE_KEY`` from the environment its job names (the
workflow says which in ``RELAY_ENVIRONMENT``). The key is out of reach when the
environment needs a reviewer's approval, or lets only protected branches, or only the
default branch, deploy to it; it is within reach when the job names no environment, or
the environment lets every branch deploy. :func:`verdict` decides, from what the API said,
without I/O; :func:`key_reach` asks (with the job's own token, which reads environments
with ``actions: read``).

GitHub docs: "Managing environments for deployment", "REST API endpoints for deployment
environments", "Using secrets in GitHub Actions".
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from relay.errors import RelayError
from relay.watchers.github_actions import NODE_KEY_ENV

if TYPE_CHECKING:
    from relay.edges.github.models import BranchPattern, Environment
    from relay.node.context import NodeContext

ENVIRONMENT_ENV = "RELAY_ENVIRONMENT"
CHECK = "node key"
SETTINGS = "Settings → Environments → {env} → Deployment branches and tags"
Result = tuple[str, str, str, str]  # (check, status, detail, fix), as doctor lists checks


def in_actions(environ: Mapping[str, str]) -> bool:
    """Whether this process runs in a GitHub Actions job."""
    return environ.get("GITHUB_ACTIONS") == "true"


def _result(status: str, detail: str, fix: str = "") -> Result:
    return (CHECK, status, detail, fix)


def verdict(
    *,
    environment: str,
    has_key: bool,
    found: Environment | None,
    patterns: list[BranchPattern] | None = None,
    default_branch: str = "main",
    default_protected: bool | None = None,
) -> Result:
    """Whether a pusher's workflow could read the node key: ``found`` is the environment
    the job names (None: the token could not read it), ``patterns`` its custom branch
    policies (None: not read), and the default branch whether that branch is protected."""
    if not environment:
        fix = (
            "call relay's workflow (its job takes RELAY_NODE_KEY from the environment"
            " relay-node) and keep the key in that environment's secrets only"
        )
        if has_key:
            said = "RELAY_NODE_KEY reaches this job, which names no environment: any pusher's"
            return _result("fail", said + " workflow on a branch can read it", fix)
        said = "this job names no environment: a node key given to it would reach any branch"
        return _result("warn", said, fix)
    if found is None:
        said = f"cannot read environment {environment} to tell whether RELAY_NODE_KEY is"
        fix = "give the job `permissions: actions: read` (relay's workflow does), or the token"
        return _result("warn", f"{said} out of a pusher's reach", f"{fix} Actions read access")
    where = SETTINGS.format(env=environment)
    if found.reviewers:
        said = f"environment {environment}: a reviewer must approve each job before it gets"
        return _result("ok", f"{said} RELAY_NODE_KEY")
    policy = found.deployment_branch_policy
    restrict = f"{where}: Selected branches and tags, with only {default_branch}"
    if policy is None:
        said = f"environment {environment} lets every branch deploy and needs no reviewer:"
        said += " any pusher's workflow on a branch can read RELAY_NODE_KEY"
        return _result("fail", said, restrict + " (or add a required reviewer)")
    if policy.protected_branches:
        return _result("ok", f"only protected branches may use environment {environment}")
    return _custom(environment, patterns, default_branch, default_protected, restrict)


def _custom(
    environment: str,
    patterns: list[BranchPattern] | None,
    default_branch: str,
    default_protected: bool | None,
    restrict: str,
) -> Result:
    """The verdict on an environment restricted to name patterns."""
    if patterns is None:
        said = f"cannot read the branch patterns of environment {environment}"
        return _result("warn", said, "give the job's token Actions read access")
    if any(p.name in ("*", "**") for p in patterns):
        said = f"environment {environment} lets every branch deploy (pattern `*`):"
        return _result("fail", f"{said} any pusher's workflow can read RELAY_NODE_KEY", restrict)
    others = [p for p in patterns if (p.type, p.name) != ("branch", default_branch)]
    if others:
        names = ", ".join(f"{p.type} `{p.name}`" for p in others)
        said = f"environment {environment} also lets {names} deploy: a pusher who can"
        said += " push such a branch or tag can read RELAY_NODE_KEY"
        return _result("warn", said, restrict + " (or add a required reviewer)")
    if not patterns:
        return _result("ok", f"no branch may use environment {environment}")
    if default_protected is False:
        said = f"only {default_branch} may use environment {environment}, but {default_branch}"
        fix = f"protect {default_branch} (require a pull request) or add a required reviewer"
        return _result("warn", f"{said} is not protected: a pusher can push a workflow to it", fix)
    return _result("ok", f"only {default_branch} may use environment {environment}")


async def key_reach(ctx: NodeContext, environ: Mapping[str, str] | None = None) -> Result:
    """Ask the API about the environment this job names, and judge (see :func:`verdict`)."""
    from relay.edges.github import GitHubClient

    env = os.environ if environ is None else environ
    name = env.get(ENVIRONMENT_ENV, "").strip()
    has_key = bool(env.get(NODE_KEY_ENV, "").strip())
    if not name:
        return verdict(environment="", has_key=has_key, found=None)
    token = env.get("GITHUB_TOKEN", "").strip() or ctx.token().value
    try:
        async with GitHubClient(api_url=ctx.api_url, token=token, repo=ctx.repo) as gh:
            found = await gh.environment(name)
            policy = found.deployment_branch_policy if found is not None else None
            custom = policy is not None and policy.custom_branch_policies
            if found is None or found.reviewers or not custom:
                return verdict(environment=name, has_key=has_key, found=found)
            patterns = await gh.branch_patterns(name)
            default = (await gh.get_repo()).default_branch
            protected = await gh.branch_protected(default)
    except RelayError as err:
        return _result("warn", f"cannot ask about environment {name}: {err.message}")
    return verdict(environment=name, has_key=has_key, found=found, patterns=patterns,
                   default_branch=default, default_protected=protected)  # fmt: skip
