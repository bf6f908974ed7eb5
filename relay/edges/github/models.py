"""GitHub's JSON as frozen models, parsed at the boundary and nowhere deeper.

Only the fields relay reads are declared; the rest of GitHub's payload is ignored, so a
new field on GitHub's side never breaks a pass. The hub returns the same shapes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

# GitHub sends ``null`` for an empty body; relay reads it as "".
Text = Annotated[str, BeforeValidator(lambda value: "" if value is None else value)]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)


class User(_Model):
    """An account; relay trusts ``id`` (logins can be renamed and re-registered)."""

    id: int
    login: str
    type: str = "User"


class Repo(_Model):
    id: int
    name: str
    full_name: str
    private: bool
    visibility: str | None = None
    default_branch: str = "main"
    html_url: str = ""
    owner: User


class Label(_Model):
    name: str
    node_id: str = ""  # GraphQL's id for it (a mutation names labels by it)
    color: str = ""
    description: str | None = None


class Issue(_Model):
    id: int
    node_id: str = ""  # GraphQL's id for it
    number: int
    title: str
    body: Text = ""
    state: str
    state_reason: str | None = None
    labels: tuple[Label, ...] = ()
    user: User
    created_at: datetime
    updated_at: datetime
    closed_at: datetime | None = None
    closed_by: User | None = None  # on a single issue's answer only, as GitHub sends it
    html_url: str = ""
    comments: int = 0
    pull_request: dict[str, Any] | None = None

    @property
    def label_names(self) -> frozenset[str]:
        return frozenset(label.name for label in self.labels)

    @property
    def is_pull_request(self) -> bool:
        """GitHub's issue endpoints also return pull requests, marked by this key."""
        return self.pull_request is not None


class Comment(_Model):
    id: int
    body: Text = ""
    user: User
    created_at: datetime
    updated_at: datetime
    html_url: str = ""


class ContentEdit(_Model):
    """One version of a comment's body in GitHub's edit history (``userContentEdits``)."""

    comment_id: int
    editor: User | None = None  # None: a deleted account
    edited_at: datetime
    body: str | None = None  # the body this version left (GraphQL's ``diff``)


class Reaction(_Model):
    id: int
    content: str
    user: User | None = None
    created_at: datetime | None = None


class RefTarget(_Model):
    sha: str
    type: str = "commit"


class Ref(_Model):
    ref: str
    target: RefTarget = Field(alias="object")


class EventLabel(_Model):
    name: str
    color: str = ""


class IssueEvent(_Model):
    id: int
    event: str
    actor: User | None = None
    created_at: datetime
    label: EventLabel | None = None


class Permission(_Model):
    """An account's permission on the repository: admin, write, read or none."""

    permission: str
    user: User | None = None


class BranchPolicy(_Model):
    """Which branches may deploy to an environment (``null`` on GitHub: every branch)."""

    protected_branches: bool
    custom_branch_policies: bool


class ProtectionRule(_Model):
    """One of an environment's rules: ``required_reviewers``, ``wait_timer``, ``branch_policy``."""

    type: str
    reviewers: tuple[dict[str, Any], ...] = ()


class Environment(_Model):
    """A deployment environment: whose workflows may read its secrets."""

    name: str
    protection_rules: tuple[ProtectionRule, ...] = ()
    deployment_branch_policy: BranchPolicy | None = None

    @property
    def reviewers(self) -> int:
        """How many reviewers must approve a job before it gets the secrets."""
        rules = self.protection_rules
        return sum(len(r.reviewers) for r in rules if r.type == "required_reviewers")


class BranchPattern(_Model):
    """A custom deployment branch (or tag) policy: a name pattern."""

    name: str
    type: str = "branch"
