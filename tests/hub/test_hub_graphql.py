"""GraphQL on the hub (``POST /graphql``, ``POST /api/graphql``), against a real `relay hub`
process over HTTP: reads compared with the REST answers for the same issue, each mutation
compared with what REST then shows, who last edited a body, GitHub's error shapes and the
GraphQL rate limit; and the hub's schema held to the one GitHub publishes (vendored in
``github-graphql/``, see its README)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from graphql import (
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLObjectType,
    GraphQLSchema,
    GraphQLUnionType,
    build_schema,
)
from hubcalls import Answer, call
from test_hub_hooks import Receiver, hook_body

from relay.hub.api_graphql import schema as hub_schema

GITHUB_SCHEMA = Path(__file__).with_name("github-graphql") / "schema.graphql"

ISSUE_FIELDS = """
  id fullDatabaseId number title body state stateReason closed locked url createdAt updatedAt
  author { login } editor { login } lastEditedAt includesCreatedEdit
  labels(first: 20) { totalCount nodes { id name color description } }
  reactionGroups { content users { totalCount }
    reactors(first: 5) { nodes { ... on User { login } } } }
"""


@cache
def github_schema() -> GraphQLSchema:
    """GitHub's published schema (it defines a few fields twice, hence assume_valid_sdl)."""
    return build_schema(GITHUB_SCHEMA.read_text(), assume_valid_sdl=True)


def gql(
    url: str, token: str, query: str, variables: dict[str, Any] | None = None,
    path: str = "/graphql",
) -> Answer:  # fmt: skip
    """One GraphQL request over HTTP."""
    return call(url, token, "POST", path, {"query": query, "variables": variables or {}})


def data(answer: Answer) -> dict[str, Any]:
    """The ``data`` of a 200 answer without errors."""
    assert answer.status == 200 and "errors" not in answer.body, answer.body
    found: dict[str, Any] = answer.body["data"]
    return found


@pytest.fixture
def q(hub: Any) -> Callable[..., dict[str, Any]]:
    """``q(token, query, **variables) -> data`` on the session hub."""

    def run(token: str, query: str, **variables: Any) -> dict[str, Any]:
        return data(gql(hub.url, token, query, variables))

    return run


@pytest.fixture
def repo(api: Callable[..., Answer], alice: str, bob: str, unique: str) -> str:
    """``alice/<name>``: a fresh public repository, bob a collaborator with triage."""
    made = api(alice, "POST", "/user/repos", {"name": f"gql-{unique}"})
    assert made.status == 201
    full = str(made.body["full_name"])
    added = api(alice, "PUT", f"/repos/{full}/collaborators/bob", {"permission": "triage"})
    assert added.status == 201
    return full


@pytest.fixture
def sink() -> Iterator[Receiver]:
    """A webhook receiver on loopback."""
    made = Receiver().start()
    yield made
    made.stop()


def rest_issue(api: Callable[..., Answer], token: str, full: str, number: int) -> dict[str, Any]:
    got = api(token, "GET", f"/repos/{full}/issues/{number}")
    assert got.status == 200
    body: dict[str, Any] = got.body
    return body


def same_issue(graph: dict[str, Any], rest: dict[str, Any]) -> None:
    """A GraphQL issue says what the REST issue says."""
    assert graph["id"] == rest["node_id"] and graph["fullDatabaseId"] == str(rest["id"])
    assert (graph["number"], graph["title"], graph["body"]) == (
        rest["number"], rest["title"], rest["body"] or "",
    )  # fmt: skip
    assert graph["state"] == rest["state"].upper() and graph["closed"] == (
        rest["state"] == "closed"
    )
    assert graph["stateReason"] == ((rest["state_reason"] or "").upper() or None)
    assert graph["author"]["login"] == rest["user"]["login"]
    assert graph["createdAt"] == rest["created_at"] and graph["updatedAt"] == rest["updated_at"]
    assert graph["url"] == rest["html_url"] and graph["locked"] == rest["locked"]
    names = [lab["name"] for lab in graph["labels"]["nodes"]]
    assert sorted(names) == sorted(lab["name"] for lab in rest["labels"])
    assert {lab["id"] for lab in graph["labels"]["nodes"]} == {
        lab["node_id"] for lab in rest["labels"]
    }
    counts = {g["content"]: g["users"]["totalCount"] for g in graph["reactionGroups"]}
    enum = {"+1": "THUMBS_UP", "-1": "THUMBS_DOWN", "laugh": "LAUGH", "hooray": "HOORAY",
            "confused": "CONFUSED", "heart": "HEART", "rocket": "ROCKET",
            "eyes": "EYES"}  # fmt: skip
    assert counts == {enum[k]: rest["reactions"][k] for k in enum}


# --- the schema ----------------------------------------------------------------------------


def test_every_field_the_hub_serves_has_githubs_type() -> None:
    """Each type, field, argument (with its default), input field, enum value, union member
    and interface of the hub's schema is GitHub's, with GitHub's type; every argument and
    input field GitHub requires, the hub requires too (a query valid here is valid there)."""
    ours, theirs = hub_schema(), github_schema()
    checked = 0
    for name, kind in ours.type_map.items():
        if name.startswith("__"):
            continue
        assert name in theirs.type_map, f"GitHub has no type {name}"
        other = theirs.type_map[name]
        assert type(kind) is type(other), name
        if isinstance(kind, GraphQLObjectType | GraphQLInterfaceType):
            assert isinstance(other, GraphQLObjectType | GraphQLInterfaceType)
            assert {i.name for i in kind.interfaces} <= {i.name for i in other.interfaces}, name
            for field_name, field in kind.fields.items():
                where = f"{name}.{field_name}"
                assert field_name in other.fields, f"GitHub has no field {where}"
                github_field = other.fields[field_name]
                assert str(field.type) == str(github_field.type), where
                for arg_name, arg in field.args.items():
                    assert arg_name in github_field.args, f"GitHub's {where} has no {arg_name}"
                    github_arg = github_field.args[arg_name]
                    assert str(arg.type) == str(github_arg.type), (where, arg_name)
                    assert repr(arg.default_value) == repr(github_arg.default_value), arg_name
                required = {
                    a for a, v in github_field.args.items()
                    if str(v.type).endswith("!") and v.default_value is None
                }  # fmt: skip
                assert required <= set(field.args), (where, required)
                checked += 1
        elif isinstance(kind, GraphQLInputObjectType):
            assert isinstance(other, GraphQLInputObjectType)
            for field_name, field in kind.fields.items():
                assert str(field.type) == str(other.fields[field_name].type), field_name
            required = {f for f, v in other.fields.items() if str(v.type).endswith("!")}
            assert required <= set(kind.fields), (name, required)
        elif isinstance(kind, GraphQLEnumType):
            assert isinstance(other, GraphQLEnumType)
            assert set(kind.values) <= set(other.values), name
        elif isinstance(kind, GraphQLUnionType):
            assert isinstance(other, GraphQLUnionType)
            assert {t.name for t in kind.types} <= {t.name for t in other.types}, name
    assert checked > 150  # the walk saw the whole schema, not an empty one


# --- reading ---------------------------------------------------------------------------


def test_an_issue_and_its_comments_page_as_rest_lists_them(
    hub: Any, api: Callable[..., Answer], q: Callable[..., dict[str, Any]], alice: str,
    bob: str, repo: str,
) -> None:  # fmt: skip
    issue = api(
        alice,
        "POST",
        f"/repos/{repo}/issues",
        {"title": "t", "body": "b", "labels": ["awaiting:worker"]},
    ).body
    n = issue["number"]
    for i in range(5):
        token = alice if i % 2 else bob
        assert (
            api(token, "POST", f"/repos/{repo}/issues/{n}/comments", {"body": f"c{i}"}).status
            == 201
        )
    api(bob, "POST", f"/repos/{repo}/issues/{n}/reactions", {"content": "heart"})
    owner, name = repo.split("/")
    query = f"""query($owner: String!, $name: String!, $n: Int!, $after: String) {{
      repository(owner: $owner, name: $name) {{ issue(number: $n) {{ {ISSUE_FIELDS}
        comments(first: 2, after: $after) {{
          totalCount pageInfo {{ hasNextPage hasPreviousPage endCursor startCursor }}
          nodes {{ id fullDatabaseId body author {{ login }} createdAt url }} }} }} }} }}"""
    seen, after, pages = [], None, 0
    while True:
        got = q(alice, query, owner=owner, name=name, n=n, after=after)["repository"]["issue"]
        page = got["comments"]
        assert page["totalCount"] == 5 and len(page["nodes"]) <= 2
        assert page["pageInfo"]["hasPreviousPage"] == (after is not None)
        seen += page["nodes"]
        pages += 1
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert pages == 3
    same_issue(got, rest_issue(api, alice, repo, n))
    rest = api(alice, "GET", f"/repos/{repo}/issues/{n}/comments").body
    assert [(c["id"], c["fullDatabaseId"], c["body"], c["author"]["login"], c["createdAt"],
             c["url"]) for c in seen] == [(c["node_id"], str(c["id"]), c["body"],
                                           c["user"]["login"], c["created_at"], c["html_url"])
                                          for c in rest]  # fmt: skip
    hearts = next(g for g in got["reactionGroups"] if g["content"] == "HEART")
    assert hearts["reactors"]["nodes"] == [{"login": "bob"}]
    last = q(alice, "query($id: ID!) { node(id: $id) { ... on Issue { comments(last: 1) "
             "{ nodes { body } } } } }", id=issue["node_id"])  # fmt: skip
    assert last["node"]["comments"]["nodes"] == [{"body": "c4"}]


def test_repository_issues_filter_and_page_like_rest(
    api: Callable[..., Answer], q: Callable[..., dict[str, Any]], alice: str, repo: str
) -> None:
    for i in range(4):
        labels = ["awaiting:worker"] if i % 2 else []
        api(alice, "POST", f"/repos/{repo}/issues", {"title": f"i{i}", "labels": labels})
    api(alice, "PATCH", f"/repos/{repo}/issues/1", {"state": "closed"})
    owner, name = repo.split("/")
    got = q(alice, """query($o: String!, $n: String!) { repository(owner: $o, name: $n) {
        name nameWithOwner url visibility isPrivate owner { login } defaultBranchRef { name }
        open: issues(first: 10, states: [OPEN]) { totalCount nodes { number } }
        waiting: issues(first: 1, labels: ["awaiting:worker"],
                        orderBy: {field: CREATED_AT, direction: DESC}) {
          totalCount nodes { number } pageInfo { hasNextPage } }
        labels(first: 30) { nodes { name color } } label(name: "AWAITING:WORKER") { name } } }""",
            o=owner, n=name)["repository"]  # fmt: skip
    rest_repo = api(alice, "GET", f"/repos/{repo}").body
    assert (got["name"], got["nameWithOwner"], got["url"]) == (
        rest_repo["name"], rest_repo["full_name"], rest_repo["html_url"],
    )  # fmt: skip
    assert got["visibility"] == "PUBLIC" and got["owner"]["login"] == "alice"
    assert got["defaultBranchRef"] is None  # nothing pushed yet: GitHub says null too
    rest_open = api(alice, "GET", f"/repos/{repo}/issues?state=open&direction=asc").body
    assert [i["number"] for i in got["open"]["nodes"]] == [i["number"] for i in rest_open]
    rest_waiting = api(alice, "GET", f"/repos/{repo}/issues?labels=awaiting:worker&state=all").body
    assert got["waiting"]["totalCount"] == len(rest_waiting) == 2
    assert got["waiting"]["nodes"] == [{"number": rest_waiting[0]["number"]}]
    assert got["waiting"]["pageInfo"]["hasNextPage"] is True
    rest_labels = api(alice, "GET", f"/repos/{repo}/labels").body
    assert sorted((x["name"], x["color"]) for x in got["labels"]["nodes"]) == sorted(
        (x["name"], x["color"]) for x in rest_labels
    )  # GraphQL's default order is by creation, REST's by name
    assert got["label"] == {"name": "awaiting:worker"}


def test_editor_names_who_last_edited_a_body(
    api: Callable[..., Answer], q: Callable[..., dict[str, Any]], alice: str, bob: str,
    repo: str,
) -> None:  # fmt: skip
    """alice writes an issue and a comment; bob edits the issue's body over REST (triage
    may), alice's repository gives him push, he edits her comment: GraphQL names him."""
    issue = api(alice, "POST", f"/repos/{repo}/issues", {"title": "t", "body": "first"}).body
    n = issue["number"]
    comment = api(alice, "POST", f"/repos/{repo}/issues/{n}/comments", {"body": "mine"}).body
    query = """query($id: ID!, $c: ID!) {
      issue: node(id: $id) { ... on Issue { body editor { login } lastEditedAt includesCreatedEdit
        userContentEdits(first: 10) { totalCount nodes { editor { login } editedAt diff } } } }
      comment: node(id: $c) { ... on IssueComment { body editor { login } lastEditedAt } } }"""
    before = q(alice, query, id=issue["node_id"], c=comment["node_id"])
    assert before["issue"]["editor"] is None and before["issue"]["lastEditedAt"] is None
    assert before["issue"]["userContentEdits"]["totalCount"] == 0
    assert before["comment"]["editor"] is None
    api(bob, "PATCH", f"/repos/{repo}/issues/{n}", {"title": "renamed"})  # not the body
    assert q(alice, query, id=issue["node_id"], c=comment["node_id"])["issue"]["editor"] is None
    edited = api(bob, "PATCH", f"/repos/{repo}/issues/{n}", {"body": "tampered"}).body
    api(alice, "PUT", f"/repos/{repo}/collaborators/bob", {"permission": "push"})
    c_edited = api(bob, "PATCH", f"/repos/{repo}/issues/comments/{comment['id']}",
                   {"body": "tampered too"}).body  # fmt: skip
    after = q(alice, query, id=issue["node_id"], c=comment["node_id"])
    assert after["issue"]["body"] == "tampered" and after["issue"]["editor"] == {"login": "bob"}
    assert after["issue"]["lastEditedAt"] == edited["updated_at"]
    assert after["issue"]["includesCreatedEdit"] is True
    edits = after["issue"]["userContentEdits"]["nodes"]
    assert [(e["editor"]["login"], e["diff"]) for e in edits] == [
        ("bob", "tampered"), ("alice", "first"),
    ]  # fmt: skip
    assert after["comment"] == {"body": "tampered too", "editor": {"login": "bob"},
                                "lastEditedAt": c_edited["updated_at"]}  # fmt: skip


def test_timeline_items_show_label_events_as_rest_lists_them(
    api: Callable[..., Answer], q: Callable[..., dict[str, Any]], alice: str, bob: str,
    repo: str,
) -> None:  # fmt: skip
    n = api(alice, "POST", f"/repos/{repo}/issues", {"title": "t"}).body["number"]
    api(bob, "POST", f"/repos/{repo}/issues/{n}/labels", {"labels": ["working"]})
    api(alice, "DELETE", f"/repos/{repo}/issues/{n}/labels/working")
    owner, name = repo.split("/")
    got = q(alice, """query($o: String!, $n: String!, $i: Int!) { repository(owner: $o, name: $n) {
      issue(number: $i) { timelineItems(first: 10, itemTypes: [LABELED_EVENT, UNLABELED_EVENT]) {
        totalCount nodes { __typename ... on LabeledEvent { actor { login } label { name }
          createdAt labelable { ... on Issue { number } } }
          ... on UnlabeledEvent { actor { login } label { name } createdAt } } } } } }""",
            o=owner, n=name, i=n)  # fmt: skip
    items = got["repository"]["issue"]["timelineItems"]["nodes"]
    rest = api(alice, "GET", f"/repos/{repo}/issues/{n}/events").body
    assert [(i["__typename"], i["actor"]["login"], i["label"]["name"], i["createdAt"])
            for i in items] == [
        ({"labeled": "LabeledEvent", "unlabeled": "UnlabeledEvent"}[e["event"]],
         e["actor"]["login"], e["label"]["name"], e["created_at"]) for e in rest
    ]  # fmt: skip
    assert items[0]["labelable"] == {"number": n}


# --- mutations ---------------------------------------------------------------------------


def test_each_mutation_writes_what_rest_then_reads(
    hub: Any, api: Callable[..., Answer], q: Callable[..., dict[str, Any]], alice: str,
    bob: str, repo: str, sink: Receiver,
) -> None:  # fmt: skip
    hook = api(alice, "POST", f"/repos/{repo}/hooks",
               hook_body(sink.url, ["issues", "issue_comment"]))  # fmt: skip
    assert hook.status == 201
    owner, name = repo.split("/")
    ids = q(alice, """query($o: String!, $n: String!) { repository(owner: $o, name: $n) { id } }""",
            o=owner, n=name)  # fmt: skip
    repo_id = ids["repository"]["id"]
    label = api(alice, "POST", f"/repos/{repo}/labels", {"name": "awaiting:worker"}).body
    made = q(
        bob,
        f"""mutation($r: ID!, $l: ID!) {{ createIssue(input: {{repositoryId: $r,
        title: "from gql", body: "hello", labelIds: [$l], clientMutationId: "m1"}}) {{
        clientMutationId issue {{ {ISSUE_FIELDS} }} }} }}""",
        r=repo_id,
        l=label["node_id"],
    )
    assert made["createIssue"]["clientMutationId"] == "m1"
    issue = made["createIssue"]["issue"]
    n = issue["number"]
    same_issue(issue, rest_issue(api, alice, repo, n))
    assert issue["labels"]["nodes"][0]["name"] == "awaiting:worker"
    as_gh = q(bob, """mutation IssueCreate($input: CreateIssueInput!) { createIssue(input: $input)
        { issue { number } } }""", input={"assigneeIds": None, "body": "b", "labelIds": None,
                                          "projectIds": None, "repositoryId": repo_id,
                                          "title": "as gh sends it"})  # fmt: skip
    assert rest_issue(api, alice, repo, as_gh["createIssue"]["issue"]["number"])["title"] == (
        "as gh sends it"
    )

    said = q(bob, """mutation($s: ID!) { addComment(input: {subjectId: $s, body: "a comment"}) {
        commentEdge { node { id fullDatabaseId body author { login } } } subject { id } } }""",
             s=issue["id"])["addComment"]  # fmt: skip
    rest_comments = api(alice, "GET", f"/repos/{repo}/issues/{n}/comments").body
    node = said["commentEdge"]["node"]
    assert (node["id"], node["fullDatabaseId"], node["body"], node["author"]["login"]) == (
        rest_comments[0]["node_id"], str(rest_comments[0]["id"]), "a comment", "bob",
    )  # fmt: skip
    assert said["subject"]["id"] == issue["id"]

    update = f"""mutation($i: ID!) {{ updateIssue(input: {{id: $i, title: "new title",
        body: "new body", labelIds: []}}) {{ actor {{ login }} issue {{ {ISSUE_FIELDS} }} }} }}"""
    changed = q(alice, update, i=issue["id"])["updateIssue"]
    assert changed["actor"] == {"login": "alice"}
    same_issue(changed["issue"], rest_issue(api, alice, repo, n))
    assert (
        changed["issue"]["editor"] == {"login": "alice"}
        and changed["issue"]["labels"]["totalCount"] == 0
    )

    closing = f"""mutation($i: ID!) {{ closeIssue(input: {{issueId: $i, stateReason: NOT_PLANNED}})
        {{ issue {{ {ISSUE_FIELDS} }} }} }}"""
    closed = q(bob, closing, i=issue["id"])["closeIssue"]["issue"]
    rest = rest_issue(api, alice, repo, n)
    same_issue(closed, rest)
    assert rest["state"] == "closed" and rest["state_reason"] == "not_planned"
    assert rest["closed_by"]["login"] == "bob"
    reopening = f"""mutation($i: ID!) {{ reopenIssue(input: {{issueId: $i}})
        {{ issue {{ {ISSUE_FIELDS} }} }} }}"""
    reopened = q(bob, reopening, i=issue["id"])["reopenIssue"]["issue"]
    same_issue(reopened, rest_issue(api, alice, repo, n))
    assert reopened["state"] == "OPEN" and reopened["stateReason"] == "REOPENED"

    other = api(alice, "POST", f"/repos/{repo}/labels", {"name": "working"}).body
    labelled = q(bob, """mutation($i: ID!, $l: [ID!]!) { addLabelsToLabelable(input: {
        labelableId: $i, labelIds: $l}) { labelable { ... on Issue {
        labels(first: 5) { nodes { name } } } } } }""",
                 i=issue["id"], l=[label["node_id"], other["node_id"]])  # fmt: skip
    names = [x["name"] for x in labelled["addLabelsToLabelable"]["labelable"]["labels"]["nodes"]]
    rest_names = [x["name"] for x in api(alice, "GET", f"/repos/{repo}/issues/{n}/labels").body]
    assert sorted(names) == sorted(rest_names) == ["awaiting:worker", "working"]
    removed = q(bob, """mutation($i: ID!, $l: [ID!]!) { removeLabelsFromLabelable(input: {
        labelableId: $i, labelIds: $l}) { labelable { ... on Issue { labels(first: 5) {
        nodes { name } } } } } }""", i=issue["id"], l=[label["node_id"]])  # fmt: skip
    left = removed["removeLabelsFromLabelable"]["labelable"]["labels"]["nodes"]
    assert left == [{"name": "working"}]
    assert [x["name"] for x in api(alice, "GET", f"/repos/{repo}/issues/{n}/labels").body] == [
        "working"
    ]

    reacted = q(alice, """mutation($s: ID!) { addReaction(input: {subjectId: $s, content: ROCKET}) {
        reaction { id databaseId content user { login } } subject { id }
        reactionGroups { content viewerHasReacted users { totalCount } } } }""",
                s=node["id"])["addReaction"]  # fmt: skip
    rest_reactions = api(
        alice, "GET", f"/repos/{repo}/issues/comments/{node['fullDatabaseId']}/reactions"
    ).body
    assert [(r["node_id"], r["id"], r["content"], r["user"]["login"]) for r in rest_reactions] == [
        (reacted["reaction"]["id"], reacted["reaction"]["databaseId"], "rocket", "alice")
    ]  # fmt: skip
    rocket = next(g for g in reacted["reactionGroups"] if g["content"] == "ROCKET")
    assert rocket == {"content": "ROCKET", "viewerHasReacted": True, "users": {"totalCount": 1}}

    user = api(alice, "GET", "/user").body["node_id"]
    refused = gql(
        hub.url,
        alice,
        "mutation($i: ID!, $a: [ID!]) { updateIssue(input: {id: $i,"
        " assigneeIds: $a}) { issue { id } } }",
        {"i": issue["id"], "a": [user]},
    )
    assert refused.body["errors"][0]["type"] == "UNPROCESSABLE"  # the hub keeps no assignees
    events = api(alice, "GET", f"/repos/{repo}/issues/{n}/events").body
    assert [(e["event"], e["actor"]["login"]) for e in events] == [
        ("labeled", "bob"), ("renamed", "alice"), ("unlabeled", "alice"), ("closed", "bob"),
        ("reopened", "bob"), ("labeled", "bob"), ("labeled", "bob"), ("unlabeled", "bob"),
    ]  # fmt: skip
    wanted = {("issues", "opened"), ("issue_comment", "created"), ("issues", "edited"),
              ("issues", "closed"), ("issues", "reopened"), ("issues", "labeled"),
              ("issues", "unlabeled")}  # fmt: skip
    deliveries = sink.wait_for(11)  # ping, opened, 3 labeled, 2 unlabeled, edited, closed, ...
    # ... reopened and the comment
    got = {(d.headers["X-GitHub-Event"], json.loads(d.body).get("action")) for d in deliveries}
    assert wanted <= got, wanted - got
    opened = next(json.loads(d.body) for d in deliveries if b'"action":"opened"' in d.body)
    assert opened["sender"]["login"] == "bob" and opened["issue"]["number"] == n


def test_a_mutation_the_caller_may_not_make_is_forbidden(
    hub: Any, api: Callable[..., Answer], alice: str, unique: str
) -> None:
    carol = hub.token(f"carol{unique}")
    full = api(alice, "POST", "/user/repos", {"name": f"gql-f-{unique}"}).body["full_name"]
    issue = api(alice, "POST", f"/repos/{full}/issues", {"title": "t"}).body
    label = api(alice, "POST", f"/repos/{full}/labels", {"name": "x"}).body
    got = gql(hub.url, carol, """mutation($i: ID!, $l: [ID!]!) { addLabelsToLabelable(input:
        {labelableId: $i, labelIds: $l}) { clientMutationId } }""",
              {"i": issue["node_id"], "l": [label["node_id"]]})  # fmt: skip
    assert got.status == 200 and got.body["data"] == {"addLabelsToLabelable": None}
    (error,) = got.body["errors"]
    assert error["type"] == "FORBIDDEN" and error["path"] == ["addLabelsToLabelable"]
    assert error["message"] == (
        f"carol{unique} does not have the correct permissions to execute `AddLabelsToLabelable`"
    )
    assert api(alice, "GET", f"/repos/{full}/issues/{issue['number']}/labels").body == []


# --- errors, paths and budgets -----------------------------------------------------------


def test_an_unknown_field_gets_githubs_error_shape(hub: Any, alice: str) -> None:
    got = gql(hub.url, alice, "query {\n  viewer {\n    login\n    pronouns\n  }\n}")
    assert got.status == 200 and "data" not in got.body
    assert got.body["errors"] == [{
        "path": ["query", "viewer", "pronouns"],
        "extensions": {"code": "undefinedField", "typeName": "User", "fieldName": "pronouns"},
        "locations": [{"line": 4, "column": 5}],
        "message": "Field 'pronouns' doesn't exist on type 'User'",
    }]  # fmt: skip
    # a field GitHub has and the hub does not serve is refused the same way
    served = gql(hub.url, alice, "query Q { viewer { starredRepositories { totalCount } } }")
    (error,) = served.body["errors"]
    assert error["path"] == ["query Q", "viewer", "starredRepositories"]
    assert error["extensions"]["code"] == "undefinedField"
    missing = gql(hub.url, alice, '{ repository(owner: "alice") { id } }')
    assert missing.body["errors"][0]["message"] == (
        "Field 'repository' is missing required arguments: name"
    )
    typed = gql(hub.url, alice, "query($n: Int!) { viewer { avatarUrl(size: $n) } }", {"n": "x"})
    (error,) = typed.body["errors"]
    assert error["message"] == "Variable $n of type Int! was provided invalid value"
    assert error["extensions"]["value"] == "x" and error["locations"] == [{"line": 1, "column": 7}]
    untyped = gql(hub.url, alice, "query($t: Nonesuch!) { viewer { avatarUrl(size: $t) } }")
    assert "Nonesuch isn't a defined input type (on $t)" in [
        e["message"] for e in untyped.body["errors"]
    ]
    fragment = gql(hub.url, alice, "{ viewer { ... on Mannequin { login } } }")
    assert fragment.body["errors"][0]["message"] == (
        "No such type Mannequin, so it can't be a fragment condition"
    )
    extra = gql(hub.url, alice, "{ viewer { avatarUrl(width: 3) } }")
    assert extra.body["errors"][0]["extensions"]["code"] == "argumentNotAccepted"


def test_missing_things_are_not_found_errors_beside_null(
    hub: Any, alice: str, api: Callable[..., Answer], repo: str
) -> None:
    owner, name = repo.split("/")
    got = gql(hub.url, alice, """query($o: String!, $n: String!) {
        repository(owner: $o, name: "nope") { id }
        other: repository(owner: $o, name: $n) { issue(number: 999) { id } } }""",
              {"o": owner, "n": name})  # fmt: skip
    assert got.status == 200
    assert got.body["data"] == {"repository": None, "other": {"issue": None}}
    assert [(e["type"], e["path"], e["message"]) for e in got.body["errors"]] == [
        ("NOT_FOUND", ["repository"],
         f"Could not resolve to a Repository with the name '{owner}/nope'."),
        ("NOT_FOUND", ["other", "issue"], "Could not resolve to an Issue with the number of 999."),
    ]  # fmt: skip
    nodes = gql(hub.url, alice, '{ nodes(ids: ["bm9wZQ==", "MDU6SXNzdWUw"]) { id } }')
    assert nodes.body["data"] == {"nodes": [None, None]}
    assert [e["path"] for e in nodes.body["errors"]] == [["nodes", 0], ["nodes", 1]]
    issue = api(alice, "POST", f"/repos/{repo}/issues", {"title": "t"}).body
    assert api(alice, "PATCH", f"/repos/{repo}", {"has_issues": False}).status == 200
    off = gql(hub.url, alice, """query($o: String!, $n: String!, $id: ID!) {
        repository(owner: $o, name: $n) { hasIssuesEnabled issues(first: 5) { totalCount }
          issue(number: 1) { id } } node(id: $id) { id } }""",
              {"o": owner, "n": name, "id": issue["node_id"]})  # fmt: skip
    assert off.body["data"] == {
        "repository": {"hasIssuesEnabled": False, "issues": {"totalCount": 0}, "issue": None},
        "node": None,
    }
    assert api(alice, "GET", f"/repos/{repo}/issues/1").status == 410  # as REST says
    assert {e["type"] for e in off.body["errors"]} == {"NOT_FOUND"}
    api(alice, "PATCH", f"/repos/{repo}", {"has_issues": True})
    paging = gql(hub.url, alice, "query($o: String!, $n: String!) { viewer { login }"
                 " repository(owner: $o, name: $n) { issues { nodes { id } } } }",
                 {"o": owner, "n": name})  # fmt: skip
    assert paging.body["errors"][0]["type"] == "MISSING_PAGINATION_BOUNDARIES"
    spread = gql(hub.url, alice, "fragment F on IssueConnection { nodes { id } }"
                 " query($o: String!, $n: String!) { repository(owner: $o, name: $n) {"
                 " issues { totalCount ...F } } }", {"o": owner, "n": name})  # fmt: skip
    assert spread.body["errors"][0]["type"] == "MISSING_PAGINATION_BOUNDARIES"
    counted = gql(hub.url, alice, "query($o: String!, $n: String!) {"
                  " repository(owner: $o, name: $n) { issues { totalCount } } }",
                  {"o": owner, "n": name})  # fmt: skip
    assert data(counted)["repository"]["issues"]["totalCount"] == 1  # a count needs no page
    assert paging.body["errors"][0]["message"] == (
        "You must provide a `first` or `last` value to properly paginate the `issues` connection."
    )


def test_ids_past_2_31_are_no_graphql_int_but_a_bigint_string(
    hub: Any, alice: str, api: Callable[..., Answer], repo: str
) -> None:
    """As on github.com (whose comment and issue ids passed 2**31 in 2024): ``databaseId``
    of such an issue or comment is null beside graphql's Int error, ``fullDatabaseId`` is
    GitHub's ``BigInt`` (a decimal string), and ``url`` ends in the REST id all the same."""
    issue = api(alice, "POST", f"/repos/{repo}/issues", {"title": "big"}).body
    comment = api(
        alice, "POST", f"/repos/{repo}/issues/{issue['number']}/comments", {"body": "c"}
    ).body
    assert issue["id"] > 2**31 and comment["id"] > 2**31 and issue["id"] != comment["id"]
    assert comment["html_url"] == f"{issue['html_url']}#issuecomment-{comment['id']}"
    got = gql(hub.url, alice, """query($id: ID!) { node(id: $id) { ... on Issue {
        databaseId fullDatabaseId comments(first: 1) { nodes { databaseId fullDatabaseId url
        } } } } }""", {"id": issue["node_id"]})  # fmt: skip
    assert got.status == 200
    assert got.body["data"] == {"node": {
        "databaseId": None, "fullDatabaseId": str(issue["id"]),
        "comments": {"nodes": [{"databaseId": None, "fullDatabaseId": str(comment["id"]),
                                "url": comment["html_url"]}]},
    }}  # fmt: skip
    assert [(e["path"], e["message"]) for e in got.body["errors"]] == [
        (["node", "databaseId"],
         f"Int cannot represent non 32-bit signed integer value: {issue['id']}"),
        (["node", "comments", "nodes", 0, "databaseId"],
         f"Int cannot represent non 32-bit signed integer value: {comment['id']}"),
    ]  # fmt: skip


def test_graphql_needs_a_token_and_has_its_own_budget(
    hub: Any, alice: str, api: Callable[..., Answer]
) -> None:
    anonymous = call(hub.url, "", "POST", "/graphql", {"query": "{ viewer { login } }"},
                     {"Authorization": ""})  # fmt: skip
    assert anonymous.status == 401
    assert anonymous.body["message"] == "This endpoint requires you to be authenticated."
    assert anonymous.body["documentation_url"] == (
        "https://docs.github.com/graphql/guides/forming-calls-with-graphql"
        "#authenticating-with-graphql"
    )
    bad = gql(hub.url, "ghp_" + "x" * 36, "{ viewer { login } }")
    assert bad.status == 401 and bad.body == {
        "message": "Bad credentials", "documentation_url": "https://docs.github.com/graphql",
        "status": "401",
    }  # fmt: skip
    rest = call(hub.url, "ghp_" + "x" * 36, "GET", "/user")
    assert rest.body["documentation_url"] == "https://docs.github.com/rest"
    core_before = api(alice, "GET", "/rate_limit").body["resources"]
    first = gql(hub.url, alice, "{ viewer { login } }")
    assert first.headers["x-ratelimit-resource"] == "graphql"
    used = int(first.headers["x-ratelimit-used"])
    costly = gql(
        hub.url,
        alice,
        """query { viewer { login } rateLimit { cost limit used remaining nodeCount } }""",
    )
    limits = data(costly)["rateLimit"]
    assert limits["cost"] == 1 and limits["limit"] == 5000 and limits["used"] == used + 1
    assert int(costly.headers["x-ratelimit-used"]) == used + 1
    resources = api(alice, "GET", "/rate_limit").body["resources"]
    assert resources["graphql"]["used"] == used + 1
    assert resources["core"]["used"] == core_before["core"]["used"]  # GraphQL's is apart
    # GitHub's arithmetic: 1 request for the issues, 100 each for their comments and labels:
    # 201 requests / 100, rounded, is a cost of 2 (whatever the data turns out to be)
    big = gql(
        hub.url,
        alice,
        """query { repository(owner: "alice", name: "none") {
        issues(first: 100) { nodes { comments(first: 100) { nodes { id } }
        labels(first: 100) { nodes { id } } } } } rateLimit { cost nodeCount } }""",
    )
    assert big.body["data"]["rateLimit"] == {"cost": 2, "nodeCount": 100 + 2 * 100 * 100}
    assert int(big.headers["x-ratelimit-used"]) == used + 3


def test_the_enterprise_path_answers_the_same(hub: Any, alice: str) -> None:
    query = "{ viewer { login id databaseId url } }"
    plain, enterprise = gql(hub.url, alice, query), gql(hub.url, alice, query, path="/api/graphql")
    assert data(plain) == data(enterprise)
    assert data(plain)["viewer"]["login"] == "alice"
    # gh learns what a server offers by introspection (e.g. whether Issue has stateReason)
    fields = data(gql(hub.url, alice, '{ __type(name: "Issue") { fields { name } } }'))
    assert {"stateReason", "editor", "lastEditedAt"} <= {
        f["name"] for f in fields["__type"]["fields"]
    }


def test_a_rest_node_id_names_the_same_node(
    api: Callable[..., Answer], q: Callable[..., dict[str, Any]], alice: str, repo: str
) -> None:
    issue = api(alice, "POST", f"/repos/{repo}/issues", {"title": "t"}).body
    user = api(alice, "GET", "/user").body
    rest_repo = api(alice, "GET", f"/repos/{repo}").body
    got = q(alice, """query($ids: [ID!]!) { nodes(ids: $ids) { __typename id
        ... on Issue { number } ... on User { login } ... on Repository { nameWithOwner } } }""",
            ids=[issue["node_id"], user["node_id"], rest_repo["node_id"]])  # fmt: skip
    assert got["nodes"] == [
        {"__typename": "Issue", "id": issue["node_id"], "number": issue["number"]},
        {"__typename": "User", "id": user["node_id"], "login": "alice"},
        {"__typename": "Repository", "id": rest_repo["node_id"], "nameWithOwner": repo},
    ]


# --- what gh sends -------------------------------------------------------------------------
# The queries below are the ones the gh CLI sends for `gh issue view`, `gh issue list` and
# to learn about a repository (api.GitHubRepo), with its field lists for an issue.

GH_ISSUE = (
    "number,url,state,createdAt,title,body,author{login},milestone{number,title,description,"
    "dueOn},assignees(first:100){nodes{id,login,name},totalCount},labels(first:100){nodes{id,"
    "name,description,color},totalCount},projectCards(first:100){nodes{project{name}column{"
    "name}},totalCount},reactionGroups{content,users{totalCount}},comments(first: 100) {nodes"
    " {id,author{login},authorAssociation,body,createdAt,includesCreatedEdit,isMinimized,"
    "minimizedReason,reactionGroups{content,users{totalCount}},url viewerDidAuthor},pageInfo{"
    "hasNextPage,endCursor},totalCount}"
)
GH_VIEW = f"""query IssueByNumber($owner: String!, $repo: String!, $number: Int!) {{
  repository(owner: $owner, name: $repo) {{ hasIssuesEnabled
    issue: issueOrPullRequest(number: $number) {{ __typename
      ...on Issue{{{GH_ISSUE},stateReason,isPinned}} ...on PullRequest{{{GH_ISSUE}}} }} }} }}"""
GH_LIST = """fragment issue on Issue {number,title,url,state,updatedAt,labels(first:100){nodes{id,
  name,description,color},totalCount},assignees(first:100){nodes{id,login,name},totalCount}}
query IssueList($owner: String!, $repo: String!, $limit: Int, $endCursor: String,
  $states: [IssueState!] = OPEN, $assignee: String, $author: String, $mention: String,
  $milestone: String) {
  repository(owner: $owner, name: $repo) { hasIssuesEnabled
    issues(first: $limit, after: $endCursor, orderBy: {field: CREATED_AT, direction: DESC},
      states: $states, filterBy: {assignee: $assignee, createdBy: $author, mentioned: $mention,
      milestone: $milestone}) { totalCount nodes { ...issue } pageInfo { hasNextPage endCursor } }
  } }"""
GH_SEARCH = """fragment issue on Issue {number,title,state,labels(first:100){nodes{name}}}
query IssueSearch($repo: String!, $owner: String!, $type: SearchType!, $limit: Int,
  $after: String, $query: String!) {
  repository(name: $repo, owner: $owner) { hasIssuesEnabled }
  search(type: $type, last: $limit, after: $after, query: $query) {
    issueCount nodes { ...issue } pageInfo { hasNextPage endCursor } } }"""
GH_REPO = """fragment repo on Repository { id name owner { login } hasIssuesEnabled description
  hasWikiEnabled viewerPermission defaultBranchRef { name } }
query RepositoryInfo($owner: String!, $name: String!) { repository(owner: $owner, name: $name) {
  ...repo parent { ...repo } mergeCommitAllowed rebaseMergeAllowed squashMergeAllowed } }"""


def test_the_queries_gh_sends_answer_what_rest_says(
    hub: Any,
    api: Callable[..., Answer], q: Callable[..., dict[str, Any]], alice: str, bob: str,
    repo: str,
) -> None:  # fmt: skip
    owner, name = repo.split("/")
    first = api(alice, "POST", f"/repos/{repo}/issues", {"title": "one", "body": "hi @bob"}).body
    second = api(bob, "POST", f"/repos/{repo}/issues", {"title": "two", "labels": ["x"]}).body
    api(bob, "POST", f"/repos/{repo}/issues/{first['number']}/comments", {"body": "seen"})
    view = q(bob, GH_VIEW, owner=owner, repo=name, number=first["number"])["repository"]
    issue, rest = view["issue"], rest_issue(api, alice, repo, first["number"])
    assert view["hasIssuesEnabled"] is True and issue["__typename"] == "Issue"
    assert (issue["number"], issue["title"], issue["body"], issue["url"]) == (
        rest["number"], rest["title"], rest["body"], rest["html_url"],
    )  # fmt: skip
    assert issue["milestone"] is None and issue["assignees"] == {"nodes": [], "totalCount": 0}
    assert issue["projectCards"]["totalCount"] == 0 and issue["isPinned"] is False
    (comment,) = issue["comments"]["nodes"]
    assert comment["body"] == "seen" and comment["viewerDidAuthor"] is True
    assert comment["isMinimized"] is False and comment["authorAssociation"] == "COLLABORATOR"
    missing = gql(hub.url, bob, GH_VIEW, {"owner": owner, "repo": name, "number": 999}).body
    assert missing["data"] == {"repository": {"hasIssuesEnabled": True, "issue": None}}
    assert [(e["type"], e["path"], e["message"]) for e in missing["errors"]] == [
        ("NOT_FOUND", ["repository", "issue"],
         "Could not resolve to an issue or pull request with the number of 999."),
    ]  # fmt: skip

    listed = q(bob, GH_LIST, owner=owner, repo=name, limit=30, states=["OPEN"])["repository"]
    rest_list = api(alice, "GET", f"/repos/{repo}/issues").body  # newest first, as gh asks
    assert [i["number"] for i in listed["issues"]["nodes"]] == [i["number"] for i in rest_list]
    assert listed["issues"]["totalCount"] == len(rest_list) == 2
    by_author = q(bob, GH_LIST, owner=owner, repo=name, limit=30, author="bob")["repository"]
    assert [i["number"] for i in by_author["issues"]["nodes"]] == [second["number"]]
    mentioning = q(bob, GH_LIST, owner=owner, repo=name, limit=30, mention="bob")["repository"]
    assert [i["number"] for i in mentioning["issues"]["nodes"]] == [first["number"]]
    assigned = q(bob, GH_LIST, owner=owner, repo=name, limit=30, assignee="bob")["repository"]
    assert assigned["issues"]["totalCount"] == 0  # nobody is assigned anything on the hub

    def searched(text: str) -> list[int]:
        variables = {"owner": owner, "repo": name, "type": "ISSUE", "limit": 30, "query": text}
        got = data(gql(hub.url, bob, GH_SEARCH, variables))
        assert got["search"]["issueCount"] == len(got["search"]["nodes"])
        return [i["number"] for i in got["search"]["nodes"]]

    # the texts gh builds for `issue list --label x`, `--search words --state all`
    assert searched(f"label:x repo:{repo} state:open type:issue") == [second["number"]]
    assert searched(f"hi repo:{repo} type:issue") == [first["number"]]
    assert searched(f"repo:{repo} type:issue author:alice") == [first["number"]]
    assert searched(f"repo:{repo} is:issue sort:created-asc") == [
        first["number"], second["number"],
    ]  # fmt: skip
    assert searched(f"repo:{repo} is:pr") == []  # the hub has no pull requests
    rest_labelled = api(alice, "GET", f"/repos/{repo}/issues?labels=x").body
    assert [i["number"] for i in rest_labelled] == searched(f"repo:{repo} label:x")
    hidden = gql(
        hub.url,
        bob,
        GH_SEARCH,
        {
            "owner": owner,
            "repo": name,
            "type": "ISSUE",
            "limit": 5,
            "query": "repo:alice/nothing-here",
        },
    )
    assert hidden.body["errors"][0]["type"] == "INVALID"  # fmt: skip

    info = q(bob, GH_REPO, owner=owner, name=name)["repository"]
    rest_repo = api(bob, "GET", f"/repos/{repo}").body
    assert (info["id"], info["name"], info["owner"], info["description"]) == (
        rest_repo["node_id"], rest_repo["name"], {"login": owner}, rest_repo["description"],
    )  # fmt: skip
    assert info["viewerPermission"] == "TRIAGE" and info["parent"] is None
    assert info["hasWikiEnabled"] == rest_repo["has_wiki"]


def test_only_mutations_count_toward_the_secondary_limit(
    hub_factory: Callable[..., Any],
) -> None:
    """A hub allowing 2 content-creating requests a minute: queries pass however many, the
    third mutation is GitHub's 403 naming the secondary limit, with Retry-After."""
    own = hub_factory(content_limit="2/500")
    token = own.token("dora")
    made = call(own.url, token, "POST", "/user/repos", {"name": "limited"})
    assert made.status == 201  # the first content-creating request
    repo_id = made.body["node_id"]
    for _ in range(3):
        assert data(gql(own.url, token, "{ viewer { login } }"))["viewer"]["login"] == "dora"
    create = (
        'mutation($r: ID!) { createIssue(input: {repositoryId: $r, title: "t"})'
        " { issue { number } } }"
    )
    first = data(gql(own.url, token, create, {"r": repo_id}))
    assert first["createIssue"]["issue"]["number"] == 1
    refused = gql(own.url, token, create, {"r": repo_id})
    assert refused.status == 403 and "secondary rate limit" in refused.body["message"]
    assert int(refused.headers["retry-after"]) >= 1
    assert call(own.url, token, "GET", "/repos/dora/limited/issues").body[0]["number"] == 1
    bad = call(own.url, token, "POST", "/graphql", None, {"Content-Type": "application/json"})
    assert bad.status == 200 and bad.body == {
        "errors": [{"message": "A query attribute must be specified and must be a string."}]
    }


def test_repository_follows_a_rename_unless_told_not_to(
    api: Callable[..., Answer], q: Callable[..., dict[str, Any]], hub: Any, alice: str,
    unique: str,
) -> None:  # fmt: skip
    """GitHub's ``repository(followRenames: true)`` (the default) finds a renamed repository
    by its old name; ``followRenames: false`` does not."""
    old, new = f"old-{unique}", f"new-{unique}"
    assert api(alice, "POST", "/user/repos", {"name": old}).status == 201
    assert api(alice, "PATCH", f"/repos/alice/{old}", {"name": new}).status == 200
    query = 'query($n: String!) { repository(owner: "alice", name: $n) { name nameWithOwner } }'
    assert q(alice, query, n=old)["repository"] == {"name": new, "nameWithOwner": f"alice/{new}"}
    strict = gql(hub.url, alice, query.replace("name: $n)", "name: $n, followRenames: false)"),
                 {"n": old})  # fmt: skip
    assert strict.body["data"] == {"repository": None}
    assert strict.body["errors"][0]["type"] == "NOT_FOUND"


def test_a_query_over_the_budget_is_githubs_graphql_rate_limit_error(
    hub_factory: Callable[..., Any],
) -> None:
    """Past the GraphQL budget GitHub answers 200 with a ``RATE_LIMIT`` error (not REST's
    403), ``x-ratelimit-remaining`` 0 on the graphql resource."""
    own = hub_factory(extra=("--rate-limit", "2"))
    token = own.token("erin")
    for _ in range(2):
        assert data(gql(own.url, token, "{ viewer { login } }"))["viewer"]["login"] == "erin"
    over = gql(own.url, token, "{ viewer { login } }")
    user_id = call(own.url, token, "GET", "/user").body["id"]
    assert over.status == 200, over.body
    assert over.body == {"errors": [{
        "type": "RATE_LIMIT", "code": "graphql_rate_limit",
        "message": f"API rate limit already exceeded for user ID {user_id}.",
    }]}  # fmt: skip
    assert over.headers["x-ratelimit-resource"] == "graphql"
    assert over.headers["x-ratelimit-remaining"] == "0"


def test_an_org_owned_repository_has_an_organization_owner(
    hub: Any, api: Callable[..., Answer], q: Callable[..., dict[str, Any]], alice: str,
    unique: str,
) -> None:  # fmt: skip
    """GitHub's ``Organization`` (a ``RepositoryOwner`` and ``Node``): the owner of an
    org-owned repository, found by ``node(id)`` and ``organization(login)``."""
    org = f"gorg-{unique}"
    made = api(hub.admin_token, "POST", "/admin/organizations", {"login": org, "admin": "alice"})
    assert made.status == 201
    assert api(alice, "POST", f"/orgs/{org}/repos", {"name": "svc"}).status == 201
    rest = api(alice, "GET", f"/orgs/{org}").body
    got = q(
        alice,
        """query($o: String!) { repository(owner: $o, name: "svc") {
        owner { __typename id login url ... on Organization { databaseId name } } } }""",
        o=org,
    )
    owner = got["repository"]["owner"]
    assert owner["__typename"] == "Organization" and owner["id"] == rest["node_id"]
    assert (owner["login"], owner["databaseId"]) == (org, rest["id"])
    assert owner["url"] == rest["html_url"]
    again = q(alice, "query($id: ID!) { node(id: $id) { __typename ... on Organization"
              " { login } } }", id=rest["node_id"])  # fmt: skip
    assert again["node"] == {"__typename": "Organization", "login": org}
    by_login = q(alice, "query($o: String!) { organization(login: $o) { login id } }", o=org)
    assert by_login["organization"] == {"login": org, "id": rest["node_id"]}
    user = q(alice, "{ repositoryOwner: viewer { __typename } }")
    assert user["repositoryOwner"]["__typename"] == "User"


def test_search_reads_the_qualifiers_gh_and_people_use(
    api: Callable[..., Answer], q: Callable[..., dict[str, Any]], alice: str, bob: str,
    repo: str,
) -> None:  # fmt: skip
    """``no:label``, ``user:``/``org:``, ``@me``, ``commenter:``, ``involves:``,
    ``comments:`` and ``created:`` ranges, ``in:comments``, ``is:locked``, ``reason:`` and
    negation, each compared with what REST lists for the same issues."""
    owner = repo.split("/")[0]
    made = [
        api(alice, "POST", f"/repos/{repo}/issues", {"title": f"t{n}", **extra}).body
        for n, extra in enumerate([{"labels": ["x"]}, {}, {}, {"body": "ping @bob"}])
    ]
    one, two, three, four = (m["number"] for m in made)
    for body in ("first", "needle here"):
        api(bob, "POST", f"/repos/{repo}/issues/{two}/comments", {"body": body})
    api(alice, "PUT", f"/repos/{repo}/issues/{three}/lock", {"lock_reason": "resolved"})
    api(alice, "PATCH", f"/repos/{repo}/issues/{four}",
        {"state": "closed", "state_reason": "not_planned"})  # fmt: skip

    def searched(text: str, token: str = alice) -> list[int]:
        got = q(
            token,
            "query($q: String!) { search(type: ISSUE, first: 50, query: $q) {"
            " issueCount nodes { ... on Issue { number } } } }",
            q=f"repo:{repo} {text}",
        )
        numbers = [n["number"] for n in got["search"]["nodes"]]
        assert got["search"]["issueCount"] == len(numbers)
        return sorted(numbers)  # fmt: skip

    everything = sorted(
        i["number"] for i in api(alice, "GET", f"/repos/{repo}/issues?state=all").body
    )
    unlabelled = [n for n in everything if n != one]
    assert searched("no:label") == unlabelled and searched("-no:label") == [one]
    assert searched(f"user:{owner}") == everything == searched(f"org:{owner}")
    assert searched("user:somebody-else") == []
    assert searched("author:@me") == everything and searched("author:@me", bob) == []
    assert searched("commenter:bob") == [two] and searched("commenter:@me", bob) == [two]
    assert searched("-commenter:bob") == [one, three, four]
    assert searched("involves:bob") == [two, four] and searched("mentions:@me", bob) == [four]
    assert searched("comments:>1") == [two] and searched("comments:0") == [one, three, four]
    assert searched("comments:1..5") == [two] and searched("comments:<=0") == [one, three, four]
    created = api(alice, "GET", f"/repos/{repo}/issues/{one}").body["created_at"][:10]
    assert searched(f"created:{created}") == everything
    assert searched(f"created:>={created}") == everything and searched(f"created:<{created}") == []
    assert searched("created:2001-01-01..2001-12-31") == []
    assert searched(f"created:{created}..*") == everything
    assert searched("needle in:comments") == [two] and searched("needle") == []
    assert searched("is:locked") == [three] and searched("is:unlocked") == [one, two, four]
    assert searched('reason:"not planned"') == [four] and searched("is:closed") == [four]
    assert searched("-label:x is:open") == [two, three]
    assert searched("no:assignee") == everything and searched("-no:assignee") == []


def test_githubs_node_limit_and_one_way_pagination(hub: Any, alice: str, repo: str) -> None:
    """A query that may ask for more than 500,000 nodes is refused before it runs, naming
    the connection where the count passes the limit; ``first`` with ``last`` is refused."""
    owner, name = repo.split("/")
    huge = gql(
        hub.url,
        alice,
        """query { search(type: ISSUE, first: 100, query: "is:issue") {
        nodes { ... on Issue { comments(first: 100) { nodes {
        reactionGroups { reactors(first: 100) { totalCount } } } } } } } }""",
    )
    assert huge.status == 200 and huge.body == {"errors": [{
        "type": "MAX_NODE_LIMIT_EXCEEDED",
        "message": "By the time this query traverses to the reactors connection, it is"
        " requesting up to 1,010,100 possible nodes which exceeds the maximum limit of 500,000.",
    }]}  # fmt: skip
    within = gql(
        hub.url,
        alice,
        """query { search(type: ISSUE, first: 100, query: "is:issue") {
        nodes { ... on Issue { comments(first: 100) { nodes {
        reactionGroups { reactors(first: 40) { totalCount } } } } } } } }""",
    )
    assert "errors" not in within.body, within.body  # 410,100 nodes
    both = gql(hub.url, alice, "query($o: String!, $n: String!) { repository(owner: $o,"
               " name: $n) { issues(first: 1, last: 1) { nodes { number } } } }",
               {"o": owner, "n": name})  # fmt: skip
    assert both.body["data"] == {"repository": None}  # issues is non-null: its null rises
    assert both.body["errors"][0]["message"] == (
        "Passing both `first` and `last` to paginate the `issues` connection is not supported."
    )
    assert both.body["errors"][0]["path"] == ["repository", "issues"]


def test_closed_and_locked_events_say_why_as_rest_does(
    api: Callable[..., Answer], q: Callable[..., dict[str, Any]], alice: str, repo: str
) -> None:
    """A close's reason stays on its event (GraphQL's ``ClosedEvent.stateReason``, REST's
    ``state_reason``), and locking shows in the timeline as ``LockedEvent``/``UnlockedEvent``
    as REST's events list ``locked``/``unlocked``."""
    made = api(alice, "POST", f"/repos/{repo}/issues", {"title": "t"}).body
    n, ident = made["number"], made["node_id"]
    q(alice, "mutation($i: ID!) { closeIssue(input: {issueId: $i, stateReason: NOT_PLANNED})"
      " { issue { state } } }", i=ident)  # fmt: skip
    q(alice, "mutation($i: ID!) { reopenIssue(input: {issueId: $i}) { issue { state } } }",
      i=ident)  # fmt: skip
    api(alice, "PATCH", f"/repos/{repo}/issues/{n}", {"state": "closed"})  # completed
    api(alice, "PUT", f"/repos/{repo}/issues/{n}/lock", {"lock_reason": "too heated"})
    api(alice, "DELETE", f"/repos/{repo}/issues/{n}/lock")
    got = q(alice, """query($i: ID!) { node(id: $i) { ... on Issue { timelineItems(first: 20) {
        nodes { __typename ... on ClosedEvent { stateReason } ... on ReopenedEvent { stateReason }
        ... on LockedEvent { lockReason actor { login } } ... on UnlockedEvent { createdAt }
        } } } } }""", i=ident)  # fmt: skip
    items = got["node"]["timelineItems"]["nodes"]
    assert [i["__typename"] for i in items] == [
        "ClosedEvent", "ReopenedEvent", "ClosedEvent", "LockedEvent", "UnlockedEvent",
    ]  # fmt: skip
    assert [i.get("stateReason") for i in items[:3]] == ["NOT_PLANNED", "REOPENED", "COMPLETED"]
    assert items[3] == {"__typename": "LockedEvent", "lockReason": "TOO_HEATED",
                        "actor": {"login": "alice"}}  # fmt: skip
    rest = api(alice, "GET", f"/repos/{repo}/issues/{n}/events").body
    assert [(e["event"], e.get("state_reason"), e.get("lock_reason")) for e in rest] == [
        ("closed", "not_planned", None), ("reopened", "reopened", None),
        ("closed", "completed", None), ("locked", None, "too heated"), ("unlocked", None, None),
    ]  # fmt: skip
    assert items[4]["createdAt"] == rest[4]["created_at"]


def test_invalid_documents_get_githubs_graphql_ruby_words(hub: Any, alice: str, repo: str) -> None:
    """What GitHub's graphql-ruby says of a missing input field, a bad enum or literal, and
    a syntax error (not graphql-core's words), with GitHub's paths and codes."""
    missing = gql(hub.url, alice, 'mutation { createIssue(input: {repositoryId: "x"})'
                  " { clientMutationId } }")  # fmt: skip
    assert missing.body == {"errors": [{
        "path": ["mutation", "createIssue", "input", "title"],
        "extensions": {"code": "missingRequiredInputObjectAttribute", "argumentName": "title",
                       "argumentType": "String!", "inputObjectType": "CreateIssueInput"},
        "locations": [{"line": 1, "column": 31}],
        "message": "Argument 'title' on InputObject 'CreateIssueInput' is required."
        " Expected type String!",
    }]}  # fmt: skip
    enum = gql(hub.url, alice, 'mutation { closeIssue(input: {issueId: "x", stateReason: WRONG})'
               " { clientMutationId } }")  # fmt: skip
    (error,) = enum.body["errors"]
    assert error["message"] == (
        "Argument 'stateReason' on InputObject 'CloseIssueInput' has an invalid value (WRONG)."
        " Expected type 'IssueClosedStateReason'."
    )
    assert error["path"] == ["mutation", "closeIssue", "input", "stateReason"]
    assert error["extensions"] == {
        "code": "argumentLiteralsIncompatible",
        "typeName": "InputObject",
        "argumentName": "stateReason",
    }
    literal = gql(hub.url, alice, "{ rateLimit(dryRun: 3) { cost } }")
    assert literal.body["errors"][0]["message"] == (
        "Argument 'dryRun' on Field 'rateLimit' has an invalid value (3). Expected type 'Boolean'."
    )
    syntax = gql(hub.url, alice, "query ( { x }")
    assert syntax.body == {"errors": [{"message": 'Parse error on "{" (LCURLY) at [1, 9]',
                                       "locations": [{"line": 1, "column": 9}]}]}  # fmt: skip
    ended = gql(hub.url, alice, "{ viewer { login }")
    assert ended.body == {"errors": [{"message": "Unexpected end of document", "locations": []}]}
    made = call(hub.url, alice, "GET", f"/repos/{repo}").body["node_id"]
    blank = gql(hub.url, alice, 'mutation($r: ID!) { createIssue(input: {repositoryId: $r,'
                ' title: ""}) { issue { number } } }', {"r": made})  # fmt: skip
    assert blank.body["errors"][0]["type"] == "UNPROCESSABLE"
    assert blank.body["errors"][0]["message"] == "Title can't be blank"
