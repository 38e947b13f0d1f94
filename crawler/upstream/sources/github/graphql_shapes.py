"""The shapes of the GraphQL answers the GitHub source reads, decoded (msgspec) before any fact is
taken from them. Pure.

GitHub answers a query that partly failed with HTTP 200, ``data`` with the failed field null and
an ``errors`` entry whose ``path`` names it (``["r3", "releases"]``). A null connection or list
must never read as "nothing there": the connections the crawler relies on (releases, tags and
their nodes) are required here, so a null one fails the decode, and the repository's facts are
unknown for the night instead of "every release removed".
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

from crawler.upstream.answers import ShapeError

# Unknown fields are ignored (GitHub may add some); the fields read are typed (GitHub's names).


class GraphQLError(msgspec.Struct, frozen=True):
    message: str = ""
    path: list[str | int] | None = None
    type: str | None = None


class GraphQLAnswer(msgspec.Struct, frozen=True):
    data: dict[str, Any] | None = None
    errors: list[GraphQLError] | None = None


class LicenseInfo(msgspec.Struct, frozen=True):
    key: str | None = None
    spdxId: str | None = None
    name: str | None = None


class CommitTarget(msgspec.Struct, frozen=True):
    oid: str | None = None
    committedDate: str | None = None
    url: str | None = None


class BranchRef(msgspec.Struct, frozen=True):
    name: str | None = None
    target: CommitTarget | None = None


class ReleaseNode(msgspec.Struct, frozen=True):
    tagName: str
    name: str | None = None
    publishedAt: str | None = None
    isPrerelease: bool = False
    isDraft: bool = False
    isLatest: bool = False
    url: str | None = None


class Releases(msgspec.Struct, frozen=True):
    nodes: list[ReleaseNode]  # null (a failed field) is not "no releases"


class PeeledTarget(msgspec.Struct, frozen=True):
    oid: str | None = None
    committedDate: str | None = None


class TagTarget(msgspec.Struct, frozen=True):
    oid: str | None = None
    committedDate: str | None = None
    target: PeeledTarget | None = None  # an annotated tag's commit


class RefNode(msgspec.Struct, frozen=True):
    name: str
    target: TagTarget | None = None


class Refs(msgspec.Struct, frozen=True):
    nodes: list[RefNode]


class BlobId(msgspec.Struct, frozen=True):
    oid: str | None = None


class TreeEntry(msgspec.Struct, frozen=True):
    name: str | None = None
    type: str | None = None
    oid: str | None = None


class Tree(msgspec.Struct, frozen=True):
    entries: list[TreeEntry] | None = None


class RepositoryNode(msgspec.Struct, frozen=True):
    """One ``r<index>`` alias of the batch query."""

    databaseId: int
    nameWithOwner: str
    url: str
    releases: Releases
    refs: Refs
    isArchived: bool = False
    description: str | None = None
    licenseInfo: LicenseInfo | None = None
    defaultBranchRef: BranchRef | None = None
    licenseBlob: BlobId | None = None
    rootEntries: Tree | None = None


class LinkedRepository(msgspec.Struct, frozen=True):
    """One ``l<index>`` alias of the link lookup query."""

    databaseId: int
    nameWithOwner: str
    url: str
    isArchived: bool = False
    description: str | None = None
    defaultBranchRef: BranchRef | None = None


class FileObject(msgspec.Struct, frozen=True):
    """A blob (``... on Blob``) or a tree (``... on Tree``) of the files query."""

    oid: str | None = None
    byteSize: int | None = None
    isBinary: bool | None = None
    isTruncated: bool | None = None
    text: str | None = None
    entries: list[TreeEntry] | None = None


class FilesNode(msgspec.Struct, frozen=True):
    """One ``f<index>`` alias of the files query (``object`` is null when the path is gone)."""

    object: FileObject | None = None


T = TypeVar("T")


def _convert(value: Any, shape: type[T], what: str) -> T:
    try:
        return msgspec.convert(value, shape)
    except msgspec.ValidationError as exc:
        raise ShapeError(f"unexpected GitHub GraphQL answer ({what}): {exc}") from None


def answer(doc: Any) -> GraphQLAnswer:
    """The top of a GraphQL answer: ``data`` an object or null, ``errors`` a list of errors."""
    return _convert(doc, GraphQLAnswer, "answer")


def repository(node: Any) -> RepositoryNode:
    return _convert(node, RepositoryNode, "repository")


def linked_repository(node: Any) -> LinkedRepository:
    return _convert(node, LinkedRepository, "repository")


def files(node: Any) -> FilesNode:
    return _convert(node, FilesNode, "file")


def missing(found: GraphQLAnswer) -> set[str]:
    """The aliases GitHub says do not exist (``NOT_FOUND`` at the alias itself)."""
    return {
        str(error.path[0])
        for error in found.errors or []
        if error.type == "NOT_FOUND" and error.path and len(error.path) == 1
    }


def errors_inside(found: GraphQLAnswer) -> dict[str, str]:
    """The errors that concern one alias (``path[0]``), keyed by the alias: a missing repository
    (``["r0"]``) or one of its fields (``["r3", "releases"]``); the first message per alias."""
    inside: dict[str, str] = {}
    for error in found.errors or []:
        if error.path:
            where = ".".join(str(step) for step in error.path)
            about = f" (at {where})" if len(error.path) > 1 else ""
            inside.setdefault(str(error.path[0]), error.message + about)
    return inside
