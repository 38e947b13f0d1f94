"""The GraphQL half of the fake GitHub: a faithful subset of GitHub's schema and its resolvers.

Every type, field, argument and default below is copied from GitHub's published schema
(``shared/github/schema.graphql``), so a query valid here is valid on GitHub; the tests check
that field by field. Costs follow GitHub's documented formula, including its pagination rules
(``first``/``last`` required on connections, at most 100).
"""

from __future__ import annotations

import base64
import copy
import functools
import hashlib
import json
import math
import multiprocessing
import multiprocessing.connection
import os
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import quote

from graphql import (
    ArgumentNode,
    BooleanValueNode,
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLInterfaceType,
    GraphQLObjectType,
    InlineFragmentNode,
    IntValueNode,
    OperationDefinitionNode,
    OperationType,
    SelectionSetNode,
    VariableNode,
    Visitor,
    build_schema,
    execute_sync,
    get_named_type,
    get_operation_ast,
    parse,
    validate,
    visit,
)

from crawler_fakes.faults import FaultRule
from crawler_fakes.github_state import FakeRelease, FakeRepo, RepoView, latest_release, node_id
from crawler_fakes.server import compact_json


class FakeGitHub(Protocol):
    """What the GraphQL endpoint needs of the fake server (crawler_fakes.github, which calls it)."""

    def find(self, full_name: str) -> FakeRepo | None: ...

    def view(self, repo: FakeRepo) -> RepoView: ...

    def charge_graphql(self, cost: int, dry_run: bool) -> dict[str, Any] | None: ...

    def spent_elsewhere(self, seconds: float) -> None: ...

    max_graphql_aliases: int | None
    graphql_workers: Executor | None  # execution in other processes (benchmarks), else here
    base_url: str
    web_url: str

SDL = """
scalar DateTime
scalar URI
scalar GitObjectID
scalar GitTimestamp

interface Node {
  id: ID!
}

interface GitObject {
  abbreviatedOid: String!
  id: ID!
  oid: GitObjectID!
}

enum OrderDirection {
  ASC
  DESC
}

enum ReleaseOrderField {
  CREATED_AT
  NAME
}

enum RefOrderField {
  ALPHABETICAL
  TAG_COMMIT_DATE
}

input ReleaseOrder {
  direction: OrderDirection!
  field: ReleaseOrderField!
}

input RefOrder {
  direction: OrderDirection!
  field: RefOrderField!
}

type Query {
  rateLimit(dryRun: Boolean = false): RateLimit
  repository(followRenames: Boolean = true, name: String!, owner: String!): Repository
}

type RateLimit {
  cost: Int!
  limit: Int!
  nodeCount: Int!
  remaining: Int!
  resetAt: DateTime!
  used: Int!
}

type Repository implements Node {
  databaseId: Int
  defaultBranchRef: Ref
  description: String
  id: ID!
  isArchived: Boolean!
  isDisabled: Boolean!
  isEmpty: Boolean!
  isFork: Boolean!
  isPrivate: Boolean!
  latestRelease: Release
  licenseInfo: License
  name: String!
  nameWithOwner: String!
  object(expression: String, oid: GitObjectID): GitObject
  pushedAt: DateTime
  refs(
    after: String
    before: String
    direction: OrderDirection
    first: Int
    last: Int
    orderBy: RefOrder
    query: String
    refPrefix: String!
  ): RefConnection
  releases(
    after: String
    before: String
    first: Int
    last: Int
    orderBy: ReleaseOrder
  ): ReleaseConnection!
  url: URI!
}

type License implements Node {
  id: ID!
  key: String!
  name: String!
  pseudoLicense: Boolean!
  spdxId: String
  url: URI
}

type PageInfo {
  endCursor: String
  hasNextPage: Boolean!
  hasPreviousPage: Boolean!
  startCursor: String
}

type ReleaseConnection {
  edges: [ReleaseEdge]
  nodes: [Release]
  pageInfo: PageInfo!
  totalCount: Int!
}

type ReleaseEdge {
  cursor: String!
  node: Release
}

type Release implements Node {
  createdAt: DateTime!
  databaseId: Int
  description: String
  id: ID!
  isDraft: Boolean!
  isLatest: Boolean!
  isPrerelease: Boolean!
  name: String
  publishedAt: DateTime
  tagCommit: Commit
  tagName: String!
  url: URI!
}

type RefConnection {
  edges: [RefEdge]
  nodes: [Ref]
  pageInfo: PageInfo!
  totalCount: Int!
}

type RefEdge {
  cursor: String!
  node: Ref
}

type Ref implements Node {
  id: ID!
  name: String!
  prefix: String!
  target: GitObject
}

type Commit implements GitObject & Node {
  abbreviatedOid: String!
  authoredDate: DateTime!
  commitUrl: URI!
  committedDate: DateTime!
  file(path: String!): TreeEntry
  id: ID!
  message: String!
  messageHeadline: String!
  oid: GitObjectID!
  tree: Tree!
  url: URI!
}

type Tag implements GitObject & Node {
  abbreviatedOid: String!
  id: ID!
  message: String
  name: String!
  oid: GitObjectID!
  target: GitObject!
}

type Blob implements GitObject & Node {
  abbreviatedOid: String!
  byteSize: Int!
  id: ID!
  isBinary: Boolean
  isTruncated: Boolean!
  oid: GitObjectID!
  text: String
}

type Tree implements GitObject & Node {
  abbreviatedOid: String!
  entries: [TreeEntry!]
  id: ID!
  oid: GitObjectID!
}

type TreeEntry {
  extension: String
  mode: Int!
  name: String!
  object: GitObject
  oid: GitObjectID!
  path: String
  size: Int!
  type: String!
}
"""

SCHEMA = build_schema(SDL)

TIMEOUT_BODY: dict[str, Any] = {
    "data": None,
    "errors": [
        {
            "message": "Something went wrong while executing your query. This may be the result "
            "of a timeout, or it could be a GitHub bug. Please include "
            "`F4KE:0000:0000000:0000000:00000000` when reporting this issue."
        }
    ],
}

_RATE_LIMITED: dict[str, Any] = {
    "errors": [
        {
            "type": "RATE_LIMIT",
            "code": "graphql_rate_limit",
            "message": "API rate limit already exceeded for user ID 1.",
        }
    ]
}


_DOCS = "https://docs.github.com/graphql"


class _NotFound(Exception):
    pass


# ----------------------------------------------------------------------------------- analysis


@dataclass
class _Analysis:
    requests: int = 0
    nodes: int = 0
    repositories: int = 0
    dry_run: bool = False
    errors: list[dict[str, Any]] = field(default_factory=list)


def _value(node: Any, variables: dict[str, Any]) -> Any:
    if isinstance(node, IntValueNode):
        return int(node.value)
    if isinstance(node, BooleanValueNode):
        return node.value
    if isinstance(node, VariableNode):
        return variables.get(node.name.value)
    return None


def _analyse(
    document: DocumentNode, operation: OperationDefinitionNode, variables: dict[str, Any]
) -> _Analysis:
    """Count repositories, requests and nodes the way GitHub's cost formula does."""
    out = _Analysis()
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }

    def walk(
        selections: SelectionSetNode,
        parent: GraphQLObjectType | GraphQLInterfaceType,
        multiplier: int,
        path: list[str],
    ) -> None:
        for sel in selections.selections:
            if isinstance(sel, InlineFragmentNode | FragmentSpreadNode):
                frag = fragments[sel.name.value] if isinstance(sel, FragmentSpreadNode) else sel
                cond, sub = frag.type_condition, frag.selection_set
                target = SCHEMA.get_type(cond.name.value) if cond else parent
                if isinstance(target, GraphQLObjectType | GraphQLInterfaceType):
                    walk(sub, target, multiplier, path)
                continue
            if not isinstance(sel, FieldNode) or sel.name.value.startswith("__"):
                continue
            name = sel.name.value
            definition = parent.fields.get(name)
            if definition is None:
                continue
            args = {a.name.value: _value(a.value, variables) for a in sel.arguments or ()}
            here = [*path, sel.alias.value if sel.alias else name]
            if parent is SCHEMA.query_type and name == "repository":
                out.repositories += 1
            if parent is SCHEMA.query_type and name == "rateLimit" and args.get("dryRun"):
                out.dry_run = True
            named = get_named_type(definition.type)
            child = multiplier
            if named.name.endswith("Connection"):
                size = args.get("first") if args.get("first") is not None else args.get("last")
                where = _where(sel) if size is None or not 0 <= size <= 100 else []
                if size is None:
                    out.errors.append(
                        {
                            "type": "MISSING_PAGINATION_BOUNDARIES",
                            "path": here,
                            "locations": where,
                            "message": f"You must provide a `first` or `last` value to properly "
                            f"paginate the `{name}` connection.",
                        }
                    )
                    size = 0
                elif not 0 <= size <= 100:
                    arg = "first" if args.get("first") is not None else "last"
                    out.errors.append(
                        {
                            "type": "EXCESSIVE_PAGINATION",
                            "path": here,
                            "locations": where,
                            "message": f"Requesting {size} records on the `{name}` connection "
                            f"exceeds the `{arg}` limit of 100 records.",
                        }
                    )
                out.requests += multiplier
                out.nodes += multiplier * size
                child = multiplier * max(size, 1)
            if sel.selection_set and isinstance(named, GraphQLObjectType | GraphQLInterfaceType):
                walk(sel.selection_set, named, child, here)

    assert SCHEMA.query_type is not None
    walk(operation.selection_set, SCHEMA.query_type, 1, [])
    return out


_COST_ARGUMENTS = frozenset({"first", "last", "dryRun"})  # all that _analyse reads of values


@functools.lru_cache(maxsize=256)
def _cost_variables(query: str) -> tuple[str, ...]:
    """The variables a (checked) query passes to the arguments its cost depends on."""
    document, _ = _checked(query)
    found: set[str] = set()

    class Collect(Visitor):
        def enter_argument(self, node: ArgumentNode, *_args: Any) -> None:
            if node.name.value in _COST_ARGUMENTS and isinstance(node.value, VariableNode):
                found.add(node.value.name.value)

    if document is not None:
        visit(document, Collect())
    return tuple(sorted(found))


@functools.lru_cache(maxsize=1024)
def _analysed(
    query: str, operation_name: str | None, values: tuple[tuple[str, Any], ...]
) -> _Analysis:
    """``_analyse`` of a checked query, for the values of its cost variables: every batch of
    the same size sends the same text, and only the repositories' names differ."""
    document, _ = _checked(query)
    operation = get_operation_ast(document, operation_name) if document else None
    assert document is not None and operation is not None
    return _analyse(document, operation, dict(values))


def _where(node: FieldNode) -> list[dict[str, int]]:
    """An error's location in the query (only for errors: finding it is not cheap)."""
    loc = node.loc.source.get_location(node.loc.start) if node.loc else None
    return [{"line": loc.line, "column": loc.column}] if loc else []


@functools.lru_cache(maxsize=256)
def _checked(query: str) -> tuple[DocumentNode | None, list[dict[str, Any]]]:
    """Parse and validate once per distinct query text (validation dominates the cost)."""
    try:
        document = parse(query)
    except GraphQLError as err:
        return None, [dict(err.formatted)]
    errors = validate(SCHEMA, document)
    return (None, [dict(e.formatted) for e in errors]) if errors else (document, [])


def handle(fake: FakeGitHub, raw: bytes) -> tuple[int, dict[str, Any] | bytes, int]:
    """Answer one ``POST /graphql``: (HTTP status, JSON body, points charged); a body
    executed in a worker process comes encoded (bytes)."""
    try:
        payload = json.loads(raw)
        query = payload["query"]
        variables = payload.get("variables") or {}
        operation_name = payload.get("operationName")
        if not isinstance(query, str) or not isinstance(variables, dict):
            raise TypeError
    except (ValueError, KeyError, TypeError, AttributeError):
        return 400, {"message": "Problems parsing JSON", "documentation_url": _DOCS}, 0
    document, errors = _checked(query)
    if document is None:
        return 200, {"errors": errors}, 0
    operation = get_operation_ast(document, operation_name)
    if operation is None or operation.operation != OperationType.QUERY:
        return 200, {"errors": [{"message": "Only one named query operation is supported"}]}, 0
    defaults = {
        d.variable.name.value: _value(d.default_value, {})
        for d in operation.variable_definitions or ()
        if d.default_value is not None
    }
    given = {**defaults, **variables}
    try:  # the cost depends on the text and a few variables' values: computed once for them
        analysis = _analysed(query, operation_name, tuple(
            (name, given.get(name)) for name in _cost_variables(query)
        ))  # fmt: skip
    except TypeError:  # a value that cannot be a cache key (a list): validation refuses it later
        analysis = _analyse(document, operation, given)
    if analysis.errors:
        return 200, {"errors": copy.deepcopy(analysis.errors)}, 0
    if fake.max_graphql_aliases is not None and analysis.repositories > fake.max_graphql_aliases:
        return 502, TIMEOUT_BODY, 0
    cost = max(1, math.floor(analysis.requests / 100 + 0.5))
    rate = fake.charge_graphql(cost, analysis.dry_run)
    if rate is None:
        return 200, _RATE_LIMITED, 0
    rate["nodeCount"] = analysis.nodes
    body: dict[str, Any] | bytes
    if fake.graphql_workers is not None:  # parsed, checked and charged here; executed there
        call = (query, variables, operation_name, rate, fake.base_url, fake.web_url)
        body, seconds = fake.graphql_workers.submit(_execute_in_worker, *call).result()
        fake.spent_elsewhere(seconds)  # the worker's CPU on it counts as this request's
    else:
        body = _execute(fake, document, variables, operation_name, rate)
    return 200, body, 0 if analysis.dry_run else cost


def _execute(
    fake: FakeGitHub,
    document: DocumentNode,
    variables: dict[str, Any],
    operation_name: str | None,
    rate: dict[str, Any],
) -> dict[str, Any]:
    result = execute_sync(
        SCHEMA,
        document,
        root_value=_root(fake, rate),
        variable_values=variables,
        operation_name=operation_name,
    )
    body: dict[str, Any] = {"data": result.data}
    if result.errors:
        body["errors"] = [_format(e) for e in result.errors]
    return body


# -- executing in other processes (benchmarks) ------------------------------------------------
#
# GitHub executes the queries it receives side by side; this fake, in one interpreter, one at a
# time (graphql-core holds the GIL). ``FakeGitHub.execute_graphql_in`` hands execution to worker
# processes, each with its own copy of the repositories built by the same recipe; parsing,
# validation, the cost and the budget stay in the server. The state must not change afterwards.

_WORKER: FakeGitHub | None = None  # in a worker process: the fake whose state it executes on


def start_worker(server: Callable[[], FakeGitHub]) -> None:
    """A worker process's initializer: build its fake (not started: it serves no socket), and
    end with the process that started it, however that one ends (a killed benchmark left its
    workers, and their copies of 100,000 repositories, running)."""
    global _WORKER
    parent = multiprocessing.parent_process()
    if parent is not None:
        sentinel = parent.sentinel
        threading.Thread(target=_end_with, args=(sentinel,), daemon=True).start()
    _WORKER = server()


def _end_with(sentinel: int) -> None:
    multiprocessing.connection.wait([sentinel])
    os._exit(0)


def worker_ready(seconds: float) -> int:
    """Keeps a worker busy for a moment, so that starting N of them at once meets N workers."""
    time.sleep(seconds)
    return os.getpid()


def _execute_in_worker(
    query: str,
    variables: dict[str, Any],
    operation_name: str | None,
    rate: dict[str, Any],
    base_url: str,
    web_url: str,
) -> tuple[bytes, float]:
    """The answer, executed and encoded here (encoding a 100 KB answer is the server's
    busiest step after execution: done here, it holds no lock the server's requests need)."""
    started = time.thread_time()
    fake = _WORKER
    assert fake is not None, "start_worker did not run in this process"
    fake.base_url, fake.web_url = base_url, web_url  # the links its answers carry
    document, errors = _checked(query)
    assert document is not None, errors  # the server checked it before sending it here
    body = compact_json(_execute(fake, document, variables, operation_name, rate))
    return body, time.thread_time() - started


PARTIAL_MESSAGE = (
    "Something went wrong while executing your query. This may be the result of a timeout, "
    "or it could be a GitHub bug."
)


def partial(body: Any, rule: FaultRule) -> Any:
    """A successful answer turned into GitHub's partial one: in the repository ``rule.alias``
    (every ``r<n>``/``f<n>`` alias when None), the field ``rule.field`` (dotted) is null and an
    error's ``path`` names it; or, with ``rule.value``, that field holds the value and no
    error is added."""
    if isinstance(body, bytes):  # executed in a worker process: encoded there
        body = json.loads(body)
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, dict):
        return body
    steps = rule.field.split(".")
    errors: list[dict[str, Any]] = []
    for alias, node in data.items():
        if rule.alias not in (None, alias) or not re.fullmatch(r"[rf]\d+", alias):
            continue
        for step in steps[:-1]:
            node = node.get(step) if isinstance(node, dict) else None
        if not isinstance(node, dict) or steps[-1] not in node:
            continue
        node[steps[-1]] = rule.value
        if rule.value is None:
            message = PARTIAL_MESSAGE if rule.message == FaultRule.message else rule.message
            errors.append({"path": [alias, *steps], "message": message})
    if errors:
        body["errors"] = [*(body.get("errors") or []), *errors]
    return body


def _format(err: GraphQLError) -> dict[str, Any]:
    out = dict(err.formatted)
    if isinstance(err.original_error, _NotFound):
        return {
            "type": "NOT_FOUND",
            "path": out.get("path"),
            "locations": out.get("locations"),
            "message": err.message,
        }
    return out


# ---------------------------------------------------------------------------------- resolvers


def _root(fake: FakeGitHub, rate: dict[str, Any]) -> dict[str, Any]:
    def repository(_info: Any, owner: str, name: str, followRenames: bool = True) -> Any:
        repo = fake.find(f"{owner}/{name}")
        if repo and not followRenames and repo.full_name.lower() != f"{owner}/{name}".lower():
            repo = None
        if repo is None:
            raise _NotFound(f"Could not resolve to a Repository with the name '{owner}/{name}'.")
        return _repository(fake.view(repo))

    return {"rateLimit": lambda _info, dryRun=False: rate, "repository": repository}


def _cursor(index: int) -> str:
    return base64.b64encode(f"cursor:v2:{index}".encode()).decode()


def _uncursor(cursor: str | None) -> int | None:
    if not cursor:
        return None
    try:
        return int(base64.b64decode(cursor).decode().rpartition(":")[2])
    except ValueError:
        return None


def _connection(items: list[dict[str, Any]], args: dict[str, Any]) -> dict[str, Any]:
    start, end = 0, len(items)
    after, before = _uncursor(args.get("after")), _uncursor(args.get("before"))
    if after is not None:
        start = max(start, after + 1)
    if before is not None:
        end = min(end, before)
    if args.get("first") is not None:
        end = min(end, start + args["first"])
    if args.get("last") is not None:
        start = max(start, end - args["last"])
    end = max(start, end)
    edges = [{"cursor": _cursor(i), "node": items[i]} for i in range(start, end)]
    return {
        "totalCount": len(items),
        "nodes": [e["node"] for e in edges],
        "edges": edges,
        "pageInfo": {
            "hasNextPage": end < len(items),
            "hasPreviousPage": start > 0,
            "startCursor": edges[0]["cursor"] if edges else None,
            "endCursor": edges[-1]["cursor"] if edges else None,
        },
    }


def _oid(kind: str, oid: str) -> dict[str, Any]:
    return {"__typename": kind, "oid": oid, "abbreviatedOid": oid[:7], "id": node_id(kind, oid)}


def _commit(view: RepoView, sha: str, date: str) -> dict[str, Any]:
    url = f"{view.html}/commit/{sha}"
    return {
        **_oid("Commit", sha),
        "committedDate": date,
        "authoredDate": date,
        "message": f"Commit {sha[:7]}",
        "messageHeadline": f"Commit {sha[:7]}",
        "url": url,
        "commitUrl": url,
        "tree": lambda _info: _tree(view, ""),
        "file": lambda _info, path: _entry(view, path.strip("/")),
    }


BLOB_TEXT_LIMIT = 512_000  # GitHub cuts Blob.text there and says so in isTruncated
BINARY_SNIFF = 8000  # git's rule: a NUL byte in the first 8,000 bytes makes a blob binary


def _blob(view: RepoView, path: str) -> dict[str, Any]:
    """A blob as GitHub answers it: ``text`` is null for a binary blob ("UTF8 text data or
    null if the Blob is binary"), cut at 512,000 bytes otherwise (``isTruncated``)."""
    sha, data = view.files[path]
    size = len(data) if data is not None else int(sha[:3], 16) + 100
    binary = data is not None and b"\0" in data[:BINARY_SNIFF]
    kept = data[:BLOB_TEXT_LIMIT] if data is not None and not binary else None
    text = kept.decode(errors="replace") if kept is not None else None
    return {
        **_oid("Blob", sha),
        "byteSize": size,
        "text": text,
        "isBinary": binary,
        "isTruncated": data is not None and len(data) > BLOB_TEXT_LIMIT,
    }


def _tree(view: RepoView, directory: str) -> dict[str, Any]:
    entries = [
        _entry(view, f"{directory}/{name}" if directory else name)
        for name in sorted(view.dirs[directory])
    ]
    return {**_oid("Tree", view.tree_sha(directory)), "entries": entries}


def _entry(view: RepoView, path: str) -> dict[str, Any] | None:
    parent, _, name = path.rpartition("/")
    kind, sha = view.dirs.get(parent, {}).get(name, ("", ""))
    if not kind:
        return None
    is_blob = kind == "blob"
    return {
        "name": name,
        "path": path,
        "type": kind,
        "oid": sha,
        "mode": 33188 if is_blob else 16384,
        "size": _blob(view, path)["byteSize"] if is_blob else 0,
        "extension": ("." + name.rpartition(".")[2]) if is_blob and "." in name else None,
        "object": lambda _info: _blob(view, path) if is_blob else _tree(view, path),
    }


def _tag_oid(view: RepoView, name: str) -> str:
    return hashlib.sha1(f"tag {view.repo.id} {name}".encode()).hexdigest()


def _tag_target(view: RepoView, name: str) -> dict[str, Any] | None:
    for tag in view.repo.tags:
        if tag.name == name:
            commit = _commit(view, tag.sha, tag.date)
            if not tag.annotated:
                return commit
            return {
                **_oid("Tag", _tag_oid(view, name)),
                "name": name,
                "message": name,
                "target": commit,
            }
    return None


def _object(view: RepoView, expression: str | None, oid: str | None) -> dict[str, Any] | None:
    if view.empty:
        return None
    if oid:
        for sha, date in view.commits():
            if sha == oid:
                return _commit(view, sha, date)
        for tag in view.repo.tags:
            if tag.annotated and _tag_oid(view, tag.name) == oid:
                return _tag_target(view, tag.name)
        blob = view.blob_by_sha(oid)
        if blob is not None:
            return _blob(view, blob[0])
        directory = view.tree_dir_by_sha(oid)
        return _tree(view, directory) if directory is not None else None
    if expression is None:
        return None
    rev, sep, path = expression.partition(":")
    commit = view.resolve_commit(rev or "HEAD")
    if commit is None:
        return None
    if not sep:
        return _tag_target(view, rev) or _commit(view, *commit)
    path = path.strip("/")
    if path in view.files:
        return _blob(view, path)
    return _tree(view, path) if path in view.dirs else None


def _release(view: RepoView, rel: FakeRelease, latest: FakeRelease | None) -> dict[str, Any]:
    rid = int(hashlib.sha1(f"{view.repo.id}/{rel.tag}".encode()).hexdigest()[:7], 16)
    return {
        "__typename": "Release",
        "id": node_id("RE", rid),
        "databaseId": rid,
        "tagName": rel.tag,
        "name": rel.name,
        "description": "",
        "createdAt": rel.created_at,
        "publishedAt": rel.published_at,
        "isDraft": rel.draft,
        "isPrerelease": rel.prerelease,
        "isLatest": rel is latest,
        "url": f"{view.html}/releases/tag/{quote(rel.tag, safe='')}",
        "tagCommit": lambda _info: _tag_commit(view, rel.tag),
    }


def _tag_commit(view: RepoView, tag_name: str) -> dict[str, Any] | None:
    for tag in view.repo.tags:
        if tag.name == tag_name:
            return _commit(view, tag.sha, tag.date)
    return None


def _releases(view: RepoView, args: dict[str, Any]) -> dict[str, Any]:
    order = args.get("orderBy") or {"field": "CREATED_AT", "direction": "DESC"}
    rels = list(view.repo.releases)
    if order["field"] == "NAME":
        rels.sort(key=lambda r: r.name or r.tag)
    else:
        rels.sort(key=lambda r: r.created_at)
    if order["direction"] == "DESC":
        rels.reverse()
    latest = latest_release(view.repo.releases)
    return _connection([_release(view, r, latest) for r in rels], args)


def _refs(view: RepoView, args: dict[str, Any]) -> dict[str, Any]:
    prefix: str = args["refPrefix"]
    items: list[tuple[str, str]] = []
    if prefix == "refs/tags/":
        items = [(t.name, t.date) for t in view.repo.tags]
    elif prefix == "refs/heads/" and not view.empty:
        items = [(view.repo.default_branch, view.repo.head_date or "")]
    if args.get("query"):
        items = [item for item in items if args["query"] in item[0]]
    order = args.get("orderBy") or {
        "field": "ALPHABETICAL",
        "direction": args.get("direction") or "ASC",
    }
    items.sort(key=(lambda i: i[1]) if order["field"] == "TAG_COMMIT_DATE" else (lambda i: i[0]))
    if order["direction"] == "DESC":
        items.reverse()

    def ref(name: str) -> dict[str, Any]:
        def target(_info: Any) -> dict[str, Any] | None:
            if prefix == "refs/tags/":
                return _tag_target(view, name)
            head = view.resolve_commit("HEAD")
            return _commit(view, *head) if head else None

        return {
            "__typename": "Ref",
            "id": node_id("REF", f"{view.repo.id}/{prefix}{name}"),
            "name": name,
            "prefix": prefix,
            "target": target,
        }

    return _connection([ref(name) for name, _ in items], args)


def _license(verdict: dict[str, str | None] | None) -> dict[str, Any] | None:
    if verdict is None:
        return None
    return {
        "__typename": "License",
        "id": verdict["node_id"],
        "key": verdict["key"],
        "name": verdict["name"],
        "spdxId": verdict["spdx_id"],
        "url": verdict["url"],
        "pseudoLicense": verdict["key"] == "other",
    }


def _repository(view: RepoView) -> dict[str, Any]:
    repo = view.repo

    def default_branch(_info: Any) -> dict[str, Any] | None:
        if view.empty:
            return None
        return _refs(view, {"refPrefix": "refs/heads/", "first": 1})["nodes"][0]  # type: ignore[no-any-return]

    def latest(_info: Any) -> dict[str, Any] | None:
        rel = latest_release(repo.releases)
        return _release(view, rel, rel) if rel else None

    return {
        "__typename": "Repository",
        "id": node_id("R", repo.id),
        "databaseId": repo.id,
        "name": view.full_name.partition("/")[2],
        "nameWithOwner": view.full_name,
        "description": repo.description,
        "url": view.html,
        "isArchived": repo.archived,
        "isDisabled": False,
        "isEmpty": view.empty,
        "isFork": False,
        "isPrivate": False,
        "pushedAt": view.pushed_at(),
        "licenseInfo": _license(view.license_verdict()),
        "defaultBranchRef": default_branch,
        "latestRelease": latest,
        "releases": lambda _info, **args: _releases(view, args),
        "refs": lambda _info, **args: _refs(view, args),
        "object": lambda _info, expression=None, oid=None: _object(view, expression, oid),
    }
