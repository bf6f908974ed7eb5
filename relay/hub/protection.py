"""Classic branch protection, kept beside the repository's git and enforced by both doors.

A branch's settings live in ``<bare>/relay-protection.json`` (next to the refs they guard,
so the git side reads them without the hub's database). The refs API checks them before it
moves a ``refs/heads/`` ref; a push is checked by git's ``proc-receive`` hook
(:mod:`relay.hub.receive`), which ``receive.procReceiveRefs`` hands exactly the protected
branches, so git prints what GitHub's git host prints::

    remote: error: GH006: Protected branch update failed for refs/heads/main.
    remote: error: Changes must be made through a pull request.
     ! [remote rejected] main -> main (protected branch hook declined)

What is refused follows GitHub: a pull request requirement refuses every direct update,
a required status check refuses any commit (the hub has no statuses), a force-push and a
deletion are refused unless allowed, a locked branch refuses everything, and an admin
passes unless ``enforce_admins`` is on.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

FILE = "relay-protection.json"
HOOK = "proc-receive"
REQUIRED = ("required_status_checks", "enforce_admins", "required_pull_request_reviews",
            "restrictions")  # fmt: skip
FLAGS = ("required_linear_history", "allow_force_pushes", "allow_deletions", "block_creations",
         "required_conversation_resolution", "lock_branch", "allow_fork_syncing")  # fmt: skip
HOOK_TEXT = '#!/bin/sh\nexec "${RELAY_HUB_PYTHON:-python3}" -m relay.hub.receive\n'


class BadSettings(ValueError):
    """A ``PUT .../protection`` body GitHub would answer 422."""


def normalise(body: dict[str, Any], *, org_owned: bool = False) -> dict[str, Any]:
    """The settings a ``PUT .../protection`` body asks for, in one stored shape."""
    for key in REQUIRED:
        if key not in body:
            raise BadSettings(f'Invalid request.\n\n"{key}" wasn\'t supplied.')
    out: dict[str, Any] = {}
    checks = body["required_status_checks"]
    if checks is not None:
        if not isinstance(checks, dict) or not isinstance(checks.get("strict", False), bool):
            raise BadSettings("Invalid request.\n\nFor 'properties/strict', not a boolean.")
        contexts = [str(c) for c in checks.get("contexts") or []]
        listed = [str(c["context"]) for c in checks.get("checks") or [] if isinstance(c, dict)]
        names = list(dict.fromkeys(contexts + listed))
        out["required_status_checks"] = {"strict": bool(checks.get("strict")), "contexts": names}
    else:
        out["required_status_checks"] = None
    admins = body["enforce_admins"]
    if admins is not None and not isinstance(admins, bool):
        raise BadSettings("Invalid request.\n\nFor 'properties/enforce_admins', not a boolean.")
    out["enforce_admins"] = bool(admins)
    reviews = body["required_pull_request_reviews"]
    if reviews is not None:
        if not isinstance(reviews, dict):
            raise BadSettings("Invalid request.\n\nFor 'properties/required_pull_request_"
                              "reviews', not an object.")  # fmt: skip
        count = reviews.get("required_approving_review_count", 1)
        if not isinstance(count, int) or not 0 <= count <= 6:
            raise BadSettings("Invalid request.\n\nrequired_approving_review_count must be "
                              "between 0 and 6.")  # fmt: skip
        out["required_pull_request_reviews"] = {
            "dismiss_stale_reviews": bool(reviews.get("dismiss_stale_reviews")),
            "require_code_owner_reviews": bool(reviews.get("require_code_owner_reviews")),
            "required_approving_review_count": count,
            "require_last_push_approval": bool(reviews.get("require_last_push_approval")),
        }
    else:
        out["required_pull_request_reviews"] = None
    if body["restrictions"] is not None and not org_owned:
        raise BadSettings("Only organization repositories can have users and team restrictions")
    out["restrictions"] = None  # an organisation's names are checked by the caller (api_orgs)
    for flag in FLAGS:
        value = body.get(flag)
        if value is not None and not isinstance(value, bool):
            raise BadSettings(f"Invalid request.\n\nFor 'properties/{flag}', not a boolean.")
        out[flag] = bool(value)
    return out


def render(url: str, settings: dict[str, Any]) -> dict[str, Any]:
    """The ``GET``/``PUT .../protection`` object for ``url`` (the protection's API URL);
    parts that are off are left out, as GitHub leaves them out."""
    out: dict[str, Any] = {"url": url}
    checks = settings.get("required_status_checks")
    if checks is not None:
        out["required_status_checks"] = {
            "url": f"{url}/required_status_checks", "strict": checks["strict"],
            "contexts": checks["contexts"],
            "contexts_url": f"{url}/required_status_checks/contexts",
            "checks": [{"context": c, "app_id": None} for c in checks["contexts"]],
        }  # fmt: skip
    reviews = settings.get("required_pull_request_reviews")
    if reviews is not None:
        out["required_pull_request_reviews"] = {
            "url": f"{url}/required_pull_request_reviews",
            **reviews,
        }
    out["required_signatures"] = {"url": f"{url}/required_signatures", "enabled": False}
    out["enforce_admins"] = {"url": f"{url}/enforce_admins", "enabled": settings["enforce_admins"]}
    for flag in FLAGS:
        out[flag] = {"enabled": bool(settings.get(flag))}
    return out


def summary(settings: dict[str, Any] | None) -> dict[str, Any]:
    """The ``protection`` summary ``GET /branches/{b}`` always carries."""
    checks = (settings or {}).get("required_status_checks")
    if settings is None or checks is None:
        level, contexts = "off", []
    else:
        level = "everyone" if settings["enforce_admins"] else "non_admins"
        contexts = checks["contexts"]
    required = {"enforcement_level": level, "contexts": contexts,
                "checks": [{"context": c, "app_id": None} for c in contexts]}  # fmt: skip
    return {"enabled": settings is not None, "required_status_checks": required}


RESTRICTED = (
    "You're not authorized to push to this branch. Visit"
    " https://docs.github.com/articles/about-protected-branches/ for more information."
)


def refusals(
    settings: dict[str, Any] | None,
    *,
    old: str,
    new: str,
    admin: bool,
    fast_forward: bool,
    allowed: bool = True,
) -> list[str]:
    """Why GitHub would refuse moving a branch from ``old`` to ``new`` (all-zero: created
    or deleted); empty when it may move. Pure: the caller says whether it fast-forwards
    and whether the pusher is among the users and teams the ``restrictions`` allow."""
    if settings is None:
        return []
    zero = "0" * 40
    if settings.get("lock_branch"):
        return ["Cannot change this locked branch"]
    if admin and not settings["enforce_admins"]:
        return []
    reasons: list[str] = []
    if settings.get("restrictions") and not allowed:
        reasons.append(RESTRICTED)
    if new == zero:
        if not settings.get("allow_deletions"):
            reasons.append("Cannot delete this protected branch")
        return reasons
    if old != zero and not fast_forward and not settings.get("allow_force_pushes"):
        reasons.append("Cannot force-push to a protected branch.")
    if settings.get("required_pull_request_reviews") is not None:
        reasons.append("Changes must be made through a pull request.")
    for context in (settings.get("required_status_checks") or {}).get("contexts", []):
        reasons.append(f'Required status check "{context}" is expected.')
    return reasons


def load(bare: Path) -> dict[str, dict[str, Any]]:
    """Every protected branch of one bare repository: ``{branch: settings}``."""
    with contextlib.suppress(FileNotFoundError, ValueError):
        data = json.loads((bare / FILE).read_text())
        if isinstance(data, dict):
            return {str(k): v for k, v in data.items() if isinstance(v, dict)}
    return {}


def save(bare: Path, branches: dict[str, dict[str, Any]], git_env: dict[str, str]) -> None:
    """Store the settings and point git's ``proc-receive`` hook at exactly these branches."""
    tmp = bare / (FILE + ".tmp")
    tmp.write_text(json.dumps(branches, sort_keys=True))
    os.replace(tmp, bare / FILE)
    hook = bare / "hooks" / HOOK
    if not hook.exists():
        hook.parent.mkdir(exist_ok=True)
        hook.write_text(HOOK_TEXT)
        hook.chmod(0o755)

    def config(*args: str) -> None:
        subprocess.run(["git", "config", *args], cwd=bare, env=git_env,
                       capture_output=True, check=False)  # fmt: skip

    config("--unset-all", "receive.procReceiveRefs")
    for branch in sorted(branches):
        config("--add", "receive.procReceiveRefs", f"refs/heads/{branch}")
