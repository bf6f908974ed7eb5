"""``GitHubClient.comment_edits`` against a collaborator who is no node (mallory): the
histories a pass reads are those of the comments decide names (the TASK's and the ones a
worker's account posted since), one read each; what one of them she can make unreadable
does to the others. Each test asserts what relay promises; those that do not hold are
strict xfails."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web
from test_edges_github_retry import answer, run

TASK, CLAIM = 11, 12  # the TASK's comment (the controller's account) and the worker's claim
WORKER = 2
WHEN = "2030-03-17T17:46:40Z"


def listing() -> dict[str, Any]:
    nodes = [
        {"id": f"IC_{n}", "url": f"https://github.com/octo/relay/issues/7#issuecomment-{n}"}
        for n in (TASK, CLAIM)
    ]
    page = {"pageInfo": {"hasNextPage": False, "endCursor": None}, "nodes": nodes}
    return {"data": {"repository": {"issue": {"comments": page}}}}


async def by_comment(request: web.Request) -> web.StreamResponse:
    """One comment's history by its node id: the claim's holds the worker's version; the
    TASK's, a hundred large versions of hers, cannot be answered (GitHub's GraphQL gives
    up on a page that large: a 502, every time)."""
    variables = json.loads(await request.text())["variables"]
    if "ids" in variables:  # the text of the versions the worker's accounts wrote
        texts = [{"id": i, "diff": "claim"} for i in variables["ids"]]
        return await answer(200, {"data": {"nodes": texts}})(request)
    if variables["id"] == f"IC_{TASK}":
        return await answer(502)(request)
    version = {"id": "UCE_1", "editedAt": WHEN, "editor": {"login": "w", "databaseId": WORKER}}
    edits = {"pageInfo": {"hasNextPage": False, "endCursor": None}, "nodes": [version]}
    return await answer(200, {"data": {"node": {"userContentEdits": edits}}})(request)


def test_one_unreadable_history_never_hides_the_claims() -> None:
    """She edits the TASK's comment (it is named: the controller's account is one the
    worker takes TASKs from) a hundred times with large texts and puts its text back; its
    history's page then cannot be read. The claim comment's history, read beside it,
    still comes back whole, with the worker's version."""
    got, _ = run(
        [answer(200, listing()), by_comment],
        lambda gh: gh.comment_edits(7, frozenset({WORKER}), comments={TASK, CLAIM}),
    )
    assert got is not None, "the claim's history was thrown away with the TASK's"
    edits, whole = got
    assert CLAIM in whole
    assert [(e.comment_id, e.body) for e in edits] == [(CLAIM, "claim")]
