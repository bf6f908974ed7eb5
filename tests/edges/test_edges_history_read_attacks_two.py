"""``GitHubClient.comment_edits`` against a collaborator who is no node (mallory), in its
second read: the text of the versions the worker's accounts wrote, read by their node ids
with ``nodes(ids:)``. Each test asserts what relay promises; those that do not hold are
strict xfails."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web
from test_edges_github_retry import answer, run

OLD, CLAIM = 11, 12  # an old comment of the worker's account, and the running claim's
WORKER = 2
WHEN = "2030-03-17T17:46:40Z"


def listing() -> dict[str, Any]:
    nodes = [
        {"id": f"IC_{n}", "url": f"https://github.com/octo/relay/issues/7#issuecomment-{n}"}
        for n in (OLD, CLAIM)
    ]
    page = {"pageInfo": {"hasNextPage": False, "endCursor": None}, "nodes": nodes}
    return {"data": {"repository": {"issue": {"comments": page}}}}


async def old_comment_deleted_between_reads(request: web.Request) -> web.StreamResponse:
    """Each comment's history holds one version of the worker's; by the time their text is
    asked for, she has deleted the old comment (her write access may): GitHub answers its
    version as it answers any id it cannot resolve, null with a NOT_FOUND error."""
    variables = json.loads(await request.text())["variables"]
    if "ids" in variables:
        nodes: list[Any] = []
        errors: list[Any] = []
        for at, key in enumerate(variables["ids"]):
            if key == f"UCE_{OLD}":
                nodes.append(None)
                errors.append({
                    "type": "NOT_FOUND", "path": ["nodes", at],
                    "message": f"Could not resolve to a node with the global id of '{key}'",
                })  # fmt: skip
            else:
                nodes.append({"id": key, "diff": "claim"})
        said = {"data": {"nodes": nodes}, **({"errors": errors} if errors else {})}
        return await answer(200, said)(request)
    comment = str(variables["id"]).removeprefix("IC_")
    version = {
        "id": f"UCE_{comment}", "editedAt": WHEN, "editor": {"login": "w", "databaseId": WORKER},
    }  # fmt: skip
    edits = {"pageInfo": {"hasNextPage": False, "endCursor": None}, "nodes": [version]}
    return await answer(200, {"data": {"node": {"userContentEdits": edits}}})(request)


def test_one_unresolvable_version_never_hides_the_claims_history() -> None:
    """She deletes an old comment of the worker's account while a pass reads: its history
    was read, its version's text no longer can be. The claim comment's history and its
    version's text are still read; the deleted comment alone is left unread."""
    got, _ = run(
        [answer(200, listing()), old_comment_deleted_between_reads],
        lambda gh: gh.comment_edits(7, frozenset({WORKER}), comments={OLD, CLAIM}),
    )
    assert got is not None, "the claim's history was thrown away with the deleted comment's"
    edits, whole = got
    assert CLAIM in whole
    assert [(e.comment_id, e.body) for e in edits if e.comment_id == CLAIM] == [(CLAIM, "claim")]
