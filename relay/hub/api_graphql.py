"""GraphQL: ``POST /graphql`` (and ``POST /api/graphql``, GitHub Enterprise Server's path),
the part of GitHub's GraphQL API that ``gh`` and people's scripts use for issues.

graphql-core parses, validates and runs each query against ``github.graphql``, a subset of
the schema GitHub publishes (same names, same types; a test holds it to GitHub's). What the
hub does not serve is refused as GitHub refuses a field it lacks. Answers and errors take
GitHub's shapes: validation errors carry GitHub's messages and ``extensions.code``
(``undefinedField``, ``argumentNotAccepted``, ``missingRequiredArguments``,
``undefinedType``) and a ``path`` from the operation; a missing repository, issue or node
is a ``NOT_FOUND`` error beside ``null`` data; a caller without a token gets GitHub's 401.

Mutations write through the REST handlers' own functions (``open_issue``, ``edit_issue``,
``add_comment``, ``set_labels``, ``react``), so they record the same journal entries, issue
events and webhook deliveries as the REST routes.

Rate limit: GraphQL has its own budget per user (``x-ratelimit-resource: graphql``), and a
query costs what GitHub charges: each connection needs as many requests as its parents'
``first``/``last`` multiply to; the sum over 100, rounded, at least 1. A mutation also
counts against the secondary (content) limit, a query does not.

Global ids are GitHub's legacy ones (``graphql_types``), the REST answers' ``node_id``.
"""

from __future__ import annotations

import json
import re
import sys
import time
import traceback
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from aiohttp import web
from graphql import (
    ArgumentNode,
    DocumentNode,
    ExecutionResult,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLScalarType,
    GraphQLSchema,
    GraphQLUnionType,
    InlineFragmentNode,
    ObjectFieldNode,
    ObjectValueNode,
    OperationDefinitionNode,
    OperationType,
    SelectionSetNode,
    TypeInfo,
    TypeInfoVisitor,
    Visitor,
    build_schema,
    execute,
    get_named_type,
    get_operation_ast,
    parse,
    validate,
    visit,
)
from graphql.execution.values import get_variable_values
from graphql.language import VariableNode, print_ast

from relay.hub import api_comments, api_issues, api_labels
from relay.hub.api_repos import RepoAccess
from relay.hub.graphql_types import (
    REACTION_REST,
    Connection,
    Ctx,
    Issue,
    IssueComment,
    Label,
    Organization,
    Reaction,
    Repository,
    User,
    find_node,
    no_node,
    not_found,
    stamp,
)
from relay.hub.graphql_types import search as search_issues
from relay.hub.middleware import GRAPHQL_DOCS, SECONDARY_DOCS, SECONDARY_MESSAGE
from relay.hub.web import ApiError, Role, check_body, hub_of, read_json

AUTH_DOCS = GRAPHQL_DOCS + "/guides/forming-calls-with-graphql#authenticating-with-graphql"
NO_QUERY = "A query attribute must be specified and must be a string."


@cache
def schema() -> GraphQLSchema:
    """The hub's executable schema, built once from ``github.graphql``."""
    built = build_schema(Path(__file__).with_name("github.graphql").read_text())
    for kind in ("Node", "Actor", "RepositoryOwner", "Comment", "Labelable", "Reactable",
                 "Reactor", "IssueTimelineItems", "IssueOrPullRequest",
                 "SearchResultItem"):  # fmt: skip
        abstract = built.type_map[kind]
        assert isinstance(abstract, GraphQLInterfaceType | GraphQLUnionType)
        abstract.resolve_type = _type_name
    big = built.type_map["BigInt"]
    assert isinstance(big, GraphQLScalarType)
    big.coerce_output_value = _big_int
    return built


def _big_int(value: Any) -> str:
    """GitHub's ``BigInt`` on the way out: a whole number as a decimal string (JSON's
    numbers lose digits past 2**53 in many clients)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise GraphQLError(f"BigInt cannot represent a non-integer value: {value!r}")
    return str(value)


def _type_name(value: Any, *_: Any) -> str:
    """The GraphQL type of an answer object: its class's name (the classes are named so)."""
    return type(value).__name__


# --- errors in GitHub's shapes ---------------------------------------------------------------

_UNDEFINED_FIELD = re.compile(r"^Cannot query field '([^']+)' on type '([^']+)'\.")
_UNKNOWN_ARGUMENT = re.compile(r"^Unknown argument '([^']+)' on field '[^.']+\.([^']+)'\.")
_MISSING_ARGUMENT = re.compile(
    r"^(?:Argument '[^.']+\.([^(']+)\(([^:']+):\)'|Field '([^']+)' argument '([^']+)') of type"
    r" '[^']+' is required"
)  # graphql-core 3.3's words, and 3.2's
_UNKNOWN_TYPE = re.compile(r"^Unknown type '([^']+)'\.")
# The spec refuses one response name for fields of different leaf types, even in fragments
# on different object types; GitHub (graphql-ruby) answers them, and gh sends one: ``state``
# on ``... on Issue`` (IssueState) and on ``... on PullRequest`` (PullRequestState).
_SHAPES_DIFFER = re.compile(r"they return conflicting types '[^']+' and '[^']+'")


def _paths(document: DocumentNode) -> dict[int, list[str]]:
    """The path GitHub gives each field and argument of a document (``["query", "viewer",
    "login"]``; ``"query Name"`` for a named operation, ``"fragment F"``, ``"... on T"``)."""
    out: dict[int, list[str]] = {}

    def walk(selections: SelectionSetNode | None, path: list[str]) -> None:
        for sel in selections.selections if selections else ():
            if isinstance(sel, FieldNode):
                here = [*path, sel.name.value]
                out[id(sel)] = here
                for arg in sel.arguments or ():
                    out[id(arg)] = [*here, arg.name.value]
                walk(sel.selection_set, here)
            elif isinstance(sel, InlineFragmentNode):
                cond = sel.type_condition
                here = [*path, f"... on {cond.name.value}" if cond else "..."]
                if cond is not None:
                    out[id(cond)] = here
                walk(sel.selection_set, here)

    for definition in document.definitions:
        if isinstance(definition, OperationDefinitionNode):
            name = definition.operation.value
            if definition.name is not None:
                name += f" {definition.name.value}"
            walk(definition.selection_set, [name])
        elif isinstance(definition, FragmentDefinitionNode):
            here = [f"fragment {definition.name.value}"]
            out[id(definition.type_condition)] = here
            walk(definition.selection_set, here)
    return out


@dataclass(frozen=True)
class _Value:
    """Where a literal value sits: its path, the field or input object it is given to, the
    argument's name there and the type it must have."""

    path: list[str]
    owner_kind: str  # "Field" or "InputObject"
    owner: str
    argument: str
    expected: str


def _values(document: DocumentNode, paths: dict[int, list[str]]) -> dict[int, _Value]:
    """Each literal argument value of a document (by node id), as graphql-ruby names it."""
    info = TypeInfo(schema())
    out: dict[int, _Value] = {}

    class Walk(Visitor):
        def enter_argument(self, node: ArgumentNode, *args: Any) -> None:
            ancestors = args[3] if len(args) > 3 else []
            field = next((a for a in reversed(ancestors) if isinstance(a, FieldNode)), None)
            out[id(node.value)] = _Value(
                paths.get(id(node), [node.name.value]), "Field",
                field.name.value if field else "", node.name.value, str(info.get_input_type()),
            )  # fmt: skip

        def enter_object_field(self, node: ObjectFieldNode, *args: Any) -> None:
            ancestors = args[3] if len(args) > 3 else []
            holder = next((a for a in reversed(ancestors) if isinstance(a, ObjectValueNode)), None)
            parent = info.get_parent_input_type()
            above = out.get(id(holder)) if holder is not None else None
            out[id(node.value)] = _Value(
                [*(above.path if above else []), node.name.value], "InputObject",
                get_named_type(parent).name if parent else "", node.name.value,
                str(info.get_input_type()),
            )  # fmt: skip

    visit(document, TypeInfoVisitor(info, Walk()))
    return out


_MISSING_INPUT = re.compile(
    r"^Expected value of type '([^']+)' to include required field '([^']+)'"
)
_BAD_ENUM = re.compile(r"^Value '([^']+)' does not exist in '([^']+)' enum\.")
_BAD_LITERAL = re.compile(r"^\w+ cannot represent a non[- ]\w+ value: (.+)$")
_TOKENS = {
    "{": "LCURLY", "}": "RCURLY", "(": "LPAREN", ")": "RPAREN", "[": "LBRACKET",
    "]": "RBRACKET", ":": "COLON", "!": "BANG", "$": "VAR_SIGN", "@": "DIR_SIGN",
    "...": "ELLIPSIS", "=": "EQUALS", "|": "PIPE", "&": "AMP",
}  # fmt: skip
_FOUND = re.compile(r"found (<EOF>|'([^']*)'|(Name|Int|Float|String|BlockString) (.*))\.$")


def _syntax_error(err: GraphQLError) -> dict[str, Any]:
    """A parse error in graphql-ruby's (GitHub's) words: ``Parse error on "}" (RCURLY) at
    [1, 2]``, or ``Unexpected end of document``."""
    locations = [{"line": loc.line, "column": loc.column} for loc in err.locations or ()]
    match = _FOUND.search(err.message)
    where = f" at [{locations[0]['line']}, {locations[0]['column']}]" if locations else ""
    if match is None:
        message = f"Parse error{where}"
    elif match[1] == "<EOF>":  # graphql-ruby gives no place for it
        return {"message": "Unexpected end of document", "locations": []}
    elif match[2] is not None:
        message = f'Parse error on "{match[2]}" ({_TOKENS.get(match[2], "UNKNOWN_CHAR")}){where}'
    else:
        kind = {"Name": "IDENTIFIER", "Int": "INT", "Float": "FLOAT"}.get(match[3], "STRING")
        text = match[4].strip("'\"")
        message = f'Parse error on "{text}" ({kind}){where}'
    return {"message": message, "locations": locations}


def _variable_types(document: DocumentNode) -> dict[int, str]:
    """The variable each named type of a variable definition belongs to (by node id)."""
    out: dict[int, str] = {}
    for definition in document.definitions:
        if isinstance(definition, OperationDefinitionNode):
            for var in definition.variable_definitions or ():
                kind: Any = var.type
                while hasattr(kind, "type"):  # through [T] and T!
                    kind = kind.type
                out[id(kind)] = var.variable.name.value
    return out


def _validation_error(
    err: GraphQLError,
    paths: dict[int, list[str]],
    variables: dict[int, str] | None = None,
    values: dict[int, _Value] | None = None,
) -> dict[str, Any]:
    """A graphql-core validation error in GitHub's words, with its path and code."""
    variables, values = variables or {}, values or {}
    message, extensions = err.message, None
    value = values.get(id(err.nodes[0])) if err.nodes else None
    if (match := _MISSING_INPUT.match(message)) and err.nodes:
        kind, name = match.groups()
        found = schema().type_map.get(kind)
        expected = str(found.fields[name].type) if isinstance(found, GraphQLInputObjectType) else ""
        message = f"Argument '{name}' on InputObject '{kind}' is required. Expected type {expected}"
        extensions = {"code": "missingRequiredInputObjectAttribute", "argumentName": name,
                      "argumentType": expected, "inputObjectType": kind}  # fmt: skip
        if value is not None:
            paths = {**paths, id(err.nodes[0]): [*value.path, name]}
    elif (
        value is not None
        and err.nodes
        and ((match := _BAD_ENUM.match(message)) or (match := _BAD_LITERAL.match(message)))
    ):
        shown = print_ast(err.nodes[0])
        message = (
            f"Argument '{value.argument}' on {value.owner_kind} '{value.owner}' has an invalid"
            f" value ({shown}). Expected type '{value.expected}'."
        )
        extensions = {"code": "argumentLiteralsIncompatible", "typeName": value.owner_kind,
                      "argumentName": value.argument}  # fmt: skip
        paths = {**paths, id(err.nodes[0]): value.path}
    elif match := _UNDEFINED_FIELD.match(message):
        field, kind = match.groups()
        message = f"Field '{field}' doesn't exist on type '{kind}'"
        extensions = {"code": "undefinedField", "typeName": kind, "fieldName": field}
    elif match := _UNKNOWN_ARGUMENT.match(message):
        arg, field = match.groups()
        message = f"Field '{field}' doesn't accept argument '{arg}'"
        extensions = {"code": "argumentNotAccepted", "name": field, "typeName": "Field",
                      "argumentName": arg}  # fmt: skip
    elif match := _MISSING_ARGUMENT.match(message):
        field, arg = match[1] or match[3], match[2] or match[4]
        message = f"Field '{field}' is missing required arguments: {arg}"
        extensions = {"code": "missingRequiredArguments", "className": "Field", "name": field,
                      "arguments": arg}  # fmt: skip
    elif (match := _UNKNOWN_TYPE.match(message)) and err.nodes and id(err.nodes[0]) in paths:
        kind = match[1]
        message = f"No such type {kind}, so it can't be a fragment condition"
        extensions = {"code": "undefinedType", "typeName": kind}
    elif match and err.nodes and id(err.nodes[0]) in variables:
        kind, name = match[1], variables[id(err.nodes[0])]
        message = f"{kind} isn't a defined input type (on ${name})"
        extensions = {"code": "variableRequiresValidType", "typeName": kind, "variableName": name}
    out: dict[str, Any] = {}
    path = next((paths[id(n)] for n in err.nodes or () if id(n) in paths), None)
    if path is not None:
        out["path"] = path
    if extensions is not None:
        out["extensions"] = extensions
    if err.locations:
        out["locations"] = [{"line": loc.line, "column": loc.column} for loc in err.locations]
    out["message"] = message
    return out


def _execution_error(err: GraphQLError) -> dict[str, Any]:
    """An error met while running: GitHub's ``type`` at the top, then path and locations;
    a bug (any other exception) is logged and answered as GitHub answers its own."""
    original = err.original_error
    out: dict[str, Any] = {}
    extensions = dict(err.extensions or {})
    if "type" in extensions:
        out["type"] = extensions.pop("type")
    if err.path is not None:
        out["path"] = list(err.path)
    if extensions:
        out["extensions"] = extensions
    if err.locations:
        out["locations"] = [{"line": loc.line, "column": loc.column} for loc in err.locations]
    message = err.message
    if original is not None and not isinstance(original, GraphQLError):
        traceback.print_exception(original, file=sys.stderr)
        message = "Something went wrong while executing your query. This may be the result of a"
        message += " timeout, or it could be a GitHub bug."
    out["message"] = message
    return out


def _from_api(err: ApiError, info_field: str, me: dict[str, Any]) -> GraphQLError:
    """A REST refusal met inside a mutation, as GitHub's GraphQL words it."""
    if err.status == 403:
        mutation = info_field[0].upper() + info_field[1:]
        return GraphQLError(
            f"{me['login']} does not have the correct permissions to execute `{mutation}`",
            extensions={"type": "FORBIDDEN"},
        )
    if err.status == 404:
        return not_found(err.message)
    detail = [
        e.get("message")
        or (f"{str(e.get('field')).capitalize()} can't be blank" if e.get("code") == "missing_field"
            else f"{e.get('field')} is {e.get('code')}")
        for e in err.errors or []
    ]  # fmt: skip
    return GraphQLError(
        "; ".join(str(d) for d in detail) or err.message, extensions={"type": "UNPROCESSABLE"}
    )


_BAD_VARIABLE = re.compile(r"^Variable '\$(\w+)' has invalid value(?: at (\S+))?: (.*)$", re.S)


def _variable_errors(
    operation: OperationDefinitionNode, variables: dict[str, Any]
) -> list[dict[str, Any]]:
    """GitHub's words for variables that do not fit their declared types (none: [])."""
    found = get_variable_values(schema(), operation.variable_definitions or (), variables)
    if not isinstance(found, list):
        return []
    declared = {
        d.variable.name.value: print_ast(d.type) for d in operation.variable_definitions or ()
    }
    out = []
    for err in found:
        match = _BAD_VARIABLE.match(err.message)
        if match is None:
            out.append(_validation_error(err, {}))
            continue
        name, where, why = match.groups()
        path: list[Any] = [
            int(i) if i else key for i, key in re.findall(r"\[(\d+)\]|\.(\w+)", where or "")
        ]
        out.append({
            "extensions": {"value": variables.get(name),
                           "problems": [{"path": path, "explanation": why}]},
            "locations": [{"line": loc.line, "column": loc.column} for loc in err.locations or ()],
            "message": f"Variable ${name} of type {declared.get(name)} was provided invalid value",
        })  # fmt: skip
    return out


# --- cost, as GitHub computes it ---------------------------------------------------------


MAX_NODES = 500_000  # GitHub's most nodes one query may ask for


def query_cost(
    document: DocumentNode, operation: OperationDefinitionNode, variables: dict[str, Any]
) -> tuple[int, int, str | None]:
    """``(cost, nodes, over)``: the requests each connection needs (its parents' page sizes
    multiplied), summed, over 100, rounded, at least 1; the most nodes it may return; and
    GitHub's words for a query asking for more than ``MAX_NODES`` (else None), naming the
    connection the count passes the limit at."""
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }
    requests = nodes = 0
    over: str | None = None

    def size(node: FieldNode) -> int:
        for arg in node.arguments or ():
            if arg.name.value in ("first", "last"):
                value: Any = arg.value
                raw = (
                    variables.get(value.name.value)
                    if isinstance(value, VariableNode)
                    else getattr(value, "value", None)
                )
                try:
                    return max(int(raw or 0), 0)
                except ValueError:
                    return 0
        return 0

    def walk(selections: SelectionSetNode | None, multiplier: int, seen: frozenset[str]) -> None:
        nonlocal requests, nodes, over
        for sel in selections.selections if selections else ():
            if isinstance(sel, FieldNode):
                page = size(sel)
                if page:  # a connection: one request per parent item
                    requests += multiplier
                    nodes += multiplier * page
                    if nodes > MAX_NODES and over is None:
                        over = (
                            f"By the time this query traverses to the {sel.name.value}"
                            f" connection, it is requesting up to {nodes:,} possible nodes"
                            f" which exceeds the maximum limit of {MAX_NODES:,}."
                        )
                walk(sel.selection_set, multiplier * page if page else multiplier, seen)
            elif isinstance(sel, InlineFragmentNode):
                walk(sel.selection_set, multiplier, seen)
            elif isinstance(sel, FragmentSpreadNode) and sel.name.value not in seen:
                found = fragments.get(sel.name.value)
                if found is not None:
                    walk(found.selection_set, multiplier, seen | {sel.name.value})

    walk(operation.selection_set, 1, frozenset())
    return max(round(requests / 100), 1), nodes, over


# --- the endpoint ------------------------------------------------------------------------


async def graphql(request: web.Request) -> web.Response:
    """``POST /graphql``: ``{"query", "variables", "operationName"}`` in, GitHub's answer
    out (200 with ``errors`` for a query that is wrong, as GitHub answers)."""
    me: dict[str, Any] | None = request.get("viewer")
    if me is None:
        raise ApiError(401, "This endpoint requires you to be authenticated.", docs=AUTH_DOCS)
    try:
        data = await read_json(request)
    except ApiError as err:  # GitHub's 400, pointing at the GraphQL docs
        err.docs = GRAPHQL_DOCS
        raise
    if not isinstance(data, dict) or not isinstance(data.get("query"), str):
        return _answer({"errors": [{"message": NO_QUERY}]})
    variables = data.get("variables") or {}
    if isinstance(variables, str):  # some clients send the variables as a JSON string
        try:
            variables = json.loads(variables) if variables.strip() else {}
        except ValueError:
            variables = None
    if not isinstance(variables, dict):
        return _answer({"errors": [{"message": "Variables are invalid JSON."}]})
    try:
        document = parse(data["query"])
    except GraphQLError as err:
        return _answer({"errors": [_syntax_error(err)]})
    errors = [e for e in validate(schema(), document) if not _SHAPES_DIFFER.search(e.message)]
    if errors:
        paths, types = _paths(document), _variable_types(document)
        values = _values(document, paths)
        return _answer({"errors": [_validation_error(e, paths, types, values) for e in errors]})
    name = data.get("operationName") if isinstance(data.get("operationName"), str) else None
    operation = get_operation_ast(document, name)
    if operation is None:
        message = (
            "An operation name is required" if name is None else f'No operation named "{name}"'
        )
        return _answer({"errors": [{"message": message}]})
    if bad := _variable_errors(operation, variables):
        return _answer({"errors": bad})
    cost, nodes, over = query_cost(document, operation, variables)
    if over is not None:  # refused before it runs, as GitHub refuses it
        return _answer({"errors": [{"type": "MAX_NODE_LIMIT_EXCEEDED", "message": over}]})
    request["cost"] = cost
    if operation.operation is OperationType.MUTATION:
        wait = hub_of(request).content_wait(request["rate_key"], time.monotonic())
        if wait:
            headers = {"Retry-After": str(wait)}
            raise ApiError(403, SECONDARY_MESSAGE, headers=headers, docs=SECONDARY_DOCS)
    ctx = Ctx(request, me)
    root = Root(ctx, cost, nodes)
    result = execute(schema(), document, root, ctx, variable_values=variables, operation_name=name)
    assert isinstance(result, ExecutionResult)  # every resolver is synchronous
    return _answer(_shaped(result))


def _shaped(result: ExecutionResult) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if result.errors is None or result.data is not None:
        out["data"] = result.data
    if result.errors:
        out["errors"] = [_execution_error(e) for e in result.errors]
    return out


def _answer(body: dict[str, Any]) -> web.Response:
    return web.Response(
        body=json.dumps(body).encode(), content_type="application/json", charset="utf-8"
    )


class RateLimit:
    """GitHub's ``RateLimit``: the caller's GraphQL budget after this query."""

    def __init__(self, ctx: Ctx, cost: int, nodes: int) -> None:
        win = ctx.request["rate_window"]
        self.cost, self.nodeCount, self.limit = cost, nodes, win.limit
        self.used = win.used + cost
        self.remaining = max(win.limit - self.used, 0)
        self.resetAt = stamp(win.reset * 1_000_000)


class Root:
    """The query and mutation root: every top-level field the hub serves."""

    def __init__(self, ctx: Ctx, cost: int, nodes: int) -> None:
        self.ctx, self.cost, self.node_count = ctx, cost, nodes

    # --- queries ---

    @property
    def viewer(self) -> User:
        """The caller (a ``User``, also for an App's bot, as GitHub types ``viewer``)."""
        return User(self.ctx, self.ctx.me)

    def repository(
        self, _info: Any, owner: str, name: str, followRenames: bool = True
    ) -> Repository:
        """The repository ``owner/name``, or the one renamed from it unless told not to."""
        acc = self.ctx.repo(owner, name)
        if acc is None and followRenames:
            acc = self.ctx.renamed(owner, name)
        if acc is None:
            raise not_found(f"Could not resolve to a Repository with the name '{owner}/{name}'.")
        return Repository(self.ctx, acc)

    def organization(self, _info: Any, login: str) -> Organization:
        """The organisation ``login``."""
        row = self.ctx.store.user_by_login(login)
        if row is None or row["type"] != "Organization":
            raise not_found(f"Could not resolve to an Organization with the login of '{login}'.")
        return Organization(self.ctx, row)

    def node(self, _info: Any, id: str) -> Any:
        """Any node by its global id."""
        found = find_node(self.ctx, id)
        if found is None:
            raise no_node(id)
        return found

    def nodes(self, _info: Any, ids: list[str]) -> list[Any]:
        """Nodes by global id; a missing one is null with its own error."""
        return [find_node(self.ctx, i) or no_node(i) for i in ids]

    def search(self, info: Any, query: str, type: str, **args: Any) -> Connection:
        """Issue search (``type: ISSUE``, the one kind the hub serves)."""
        return search_issues(self.ctx, info, query, args)

    @property
    def rateLimit(self) -> RateLimit:
        """The GraphQL budget."""
        return RateLimit(self.ctx, self.cost, self.node_count)

    # --- mutations ---

    def _issue(self, ident: str) -> Issue:
        found = find_node(self.ctx, ident)
        if not isinstance(found, Issue):
            raise no_node(ident)
        return found

    def _labels(self, acc: RepoAccess, ids: list[str]) -> list[dict[str, Any]]:
        rows = []
        for ident in ids:
            found = find_node(self.ctx, ident)
            if not isinstance(found, Label) or found.acc.id != acc.id:
                raise no_node(ident)
            rows.append(found.row)
        return rows

    def _unkept(self, input: dict[str, Any]) -> None:
        """Refuse what the hub does not keep: assignees, milestones and projects (none
        given, null or empty, as gh sends them, is fine)."""
        if input.get("assigneeIds"):
            raise GraphQLError("This hub keeps no assignees.", extensions={"type": "UNPROCESSABLE"})
        for ident in [*(input.get("projectIds") or []), input.get("milestoneId")]:
            if ident is not None:
                raise no_node(ident)  # no project or milestone exists on the hub

    def createIssue(self, info: Any, input: dict[str, Any]) -> dict[str, Any]:
        """Open an issue (labels only for triage access or more, as over REST)."""
        self._unkept(input)
        found = find_node(self.ctx, input["repositoryId"])
        if not isinstance(found, Repository):
            raise no_node(input["repositoryId"])
        acc = found.acc
        if not found.hasIssuesEnabled:
            raise GraphQLError(
                "Repository has issues disabled.", extensions={"type": "UNPROCESSABLE"}
            )
        labels = self._labels(acc, input.get("labelIds") or [])
        names = [lab["name"] for lab in labels] if acc.role >= Role.TRIAGE else []
        store = self.ctx.store
        try:
            title = api_issues.check_title(input["title"])
            body = check_body("Issue", input.get("body"))
            row = api_issues.open_issue(store, acc, self.ctx.me, title, body, names)
        except ApiError as err:
            raise _from_api(err, info.field_name, self.ctx.me) from None
        issue = Issue(self.ctx, acc, row)
        return {"clientMutationId": input.get("clientMutationId"), "issue": issue}

    def _edit(self, info: Any, issue: Issue, data: dict[str, Any]) -> Issue:
        try:
            row = api_issues.edit_issue(self.ctx.store, issue.acc, self.ctx.me, issue.row, data)
        except ApiError as err:
            raise _from_api(err, info.field_name, self.ctx.me) from None
        return Issue(self.ctx, issue.acc, row)

    def updateIssue(self, info: Any, input: dict[str, Any]) -> dict[str, Any]:
        """Change an issue's title, body, state or labels (as ``PATCH .../issues/{n}``)."""
        self._unkept(input)
        issue = self._issue(input["id"])
        data: dict[str, Any] = {k: input[k] for k in ("title", "body") if k in input}
        if input.get("state") is not None:
            data["state"] = input["state"].lower()
        if "labelIds" in input and input["labelIds"] is not None:
            data["labels"] = [r["name"] for r in self._labels(issue.acc, input["labelIds"])]
        return {
            "clientMutationId": input.get("clientMutationId"),
            "issue": self._edit(info, issue, data),
            "actor": self.ctx.actor(self.ctx.me["id"]),
        }

    def closeIssue(self, info: Any, input: dict[str, Any]) -> dict[str, Any]:
        """Close an issue (``stateReason``: completed unless told)."""
        issue = self._issue(input["issueId"])
        data: dict[str, Any] = {"state": "closed"}
        if input.get("stateReason"):
            data["state_reason"] = input["stateReason"].lower()
        return {"clientMutationId": input.get("clientMutationId"),
                "issue": self._edit(info, issue, data)}  # fmt: skip

    def reopenIssue(self, info: Any, input: dict[str, Any]) -> dict[str, Any]:
        """Reopen an issue."""
        issue = self._issue(input["issueId"])
        return {"clientMutationId": input.get("clientMutationId"),
                "issue": self._edit(info, issue, {"state": "open"})}  # fmt: skip

    def addComment(self, info: Any, input: dict[str, Any]) -> dict[str, Any]:
        """Comment on an issue."""
        issue = self._issue(input["subjectId"])
        try:
            body = check_body("IssueComment", input["body"]) or ""
            row = api_comments.add_comment(self.ctx.store, issue.acc, self.ctx.me, issue.row, body)
        except ApiError as err:
            raise _from_api(err, info.field_name, self.ctx.me) from None
        comment = IssueComment(self.ctx, issue.acc, row)
        edge = {"cursor": "", "node": comment}
        return {"clientMutationId": input.get("clientMutationId"), "commentEdge": edge,
                "subject": comment.issue}  # fmt: skip

    def _relabel(self, info: Any, input: dict[str, Any], *, add: bool) -> dict[str, Any]:
        issue = self._issue(input["labelableId"])
        if issue.acc.role < Role.TRIAGE:
            raise _from_api(ApiError(403, ""), info.field_name, self.ctx.me)
        labels = self._labels(issue.acc, input["labelIds"])
        store = self.ctx.store
        current = api_labels.labels_of(store, [issue.row["id"]])[issue.row["id"]]
        gone = {lab["id"] for lab in labels}
        wanted = labels if add else [lab for lab in current if lab["id"] not in gone]
        with store.write():
            api_labels.set_labels(
                store, issue.row, wanted, actor_id=self.ctx.me["id"], replace=not add
            )
        row = store.db.execute("SELECT * FROM issues WHERE id = ?", (issue.row["id"],)).fetchone()
        return {"clientMutationId": input.get("clientMutationId"),
                "labelable": Issue(self.ctx, issue.acc, dict(row))}  # fmt: skip

    def addLabelsToLabelable(self, info: Any, input: dict[str, Any]) -> dict[str, Any]:
        """Add labels to an issue (triage access)."""
        return self._relabel(info, input, add=True)

    def removeLabelsFromLabelable(self, info: Any, input: dict[str, Any]) -> dict[str, Any]:
        """Take labels off an issue (triage access)."""
        return self._relabel(info, input, add=False)

    def addReaction(self, info: Any, input: dict[str, Any]) -> dict[str, Any]:
        """React to an issue or a comment."""
        subject = find_node(self.ctx, input["subjectId"])
        if not isinstance(subject, Issue | IssueComment):
            raise no_node(input["subjectId"])
        content = REACTION_REST[input["content"]]
        row, _existed = api_comments.react(
            self.ctx.store, subject.acc, self.ctx.me, subject.subject, subject.row, content
        )
        fresh = find_node(self.ctx, input["subjectId"])
        return {"clientMutationId": input.get("clientMutationId"),
                "reaction": Reaction(self.ctx, row), "subject": fresh,
                "reactionGroups": fresh.reactionGroups}  # fmt: skip


ROUTES = (
    ("POST", "/graphql", graphql),
    ("POST", "/api/graphql", graphql),
)
