"""Fetch what the catalog needs of one repository on any git server: its refs (one ``GET
info/refs``, and one ``ls-refs`` on a protocol v2 server), then, where the server allows
filtered fetches, only the objects that are new since the last good state: the commits of new
tags and of a moved head (for their dates), the head's root tree and the root license file's
blob. An unchanged night costs the refs alone. The audit runs each project in its guard: this
module only raises.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from crawler.config import Location, ProjectSpec
from crawler.model import (
    Commit,
    InventoryEntry,
    LicenseFile,
    ProjectSnapshot,
    Provenance,
    RepoInfo,
    Tag,
    Tracking,
    Usage,
)
from crawler.upstream.answers import cap
from crawler.upstream.guard import carried
from crawler.upstream.json_api import JsonApi
from crawler.upstream.pages import private_addresses_allowed
from crawler.upstream.root_license import read_root_listing
from crawler.upstream.source import RepoFile, SourceContext, SourceError
from crawler.upstream.sources.git import KIND, GitSettings
from crawler.upstream.sources.git.remote import GitRemote, Refs
from crawler.versions import usable_tags

if TYPE_CHECKING:
    from dulwich.objects import ShaFile

MAX_TEXT = 256 * 1024  # characters of a license file or a page kept
MAX_TAGS = 1000  # tags kept in a snapshot, highest versions first
REGULAR_FILES = (0o100644, 0o100755)  # tree entry modes of plain files (not links, submodules)
Facts = list[tuple[str, Provenance]]


@dataclass(frozen=True)
class _Head:
    refs: Refs
    tree: str | None  # the head commit's root tree, once fetched


class GitSource:
    """The git source, one project at a time (crawler.upstream.source.ProjectSource)."""

    kind = KIND

    def __init__(self, context: SourceContext) -> None:
        settings: GitSettings = context.settings
        self.settings = settings
        self.concurrency = settings.concurrency
        self._context = context
        self._allow_private = private_addresses_allowed(context.common)
        self._apis: dict[str, JsonApi] = {}  # per origin: its own retries, budget, "unreachable"
        self._heads: dict[str, _Head] = {}  # repository URL -> its head, for read_file
        self._lock = threading.Lock()
        self._clock = context.clock

    def _remote(self, url: str) -> GitRemote:
        parts = urlsplit(url)
        origin = f"{parts.scheme.lower()}://{parts.netloc.lower()}"
        with self._lock:
            api = self._apis.get(origin)
            if api is None:
                common = self._context.common
                api = JsonApi(
                    KIND.label, origin, cache=self._context.cache, settings=self.settings,
                    timeout=common.timeout, deadline=common.request_deadline, accept="*/*",
                    sleep=self._context.sleep, allow_private=self._allow_private,
                )  # fmt: skip
                self._apis[origin] = api
        return GitRemote(api, url, allow_private=self._allow_private)

    # -- the ProjectSource protocol ------------------------------------------------------------

    def fetch_project(self, spec: ProjectSpec, prior: ProjectSnapshot | None) -> ProjectSnapshot:
        assert spec.forge is not None and spec.forge.source == KIND.name
        now = self._clock()
        remote = self._remote(spec.forge.path)
        refs = remote.refs()
        listing = refs.listing
        repo = RepoInfo(
            id=0,  # git has no repository id: a repository re-created at its URL is not seen
            full_name=refs.url,
            default_branch=listing.head_target or "",
            archived=False,
            url=refs.url,
            forge=KIND.name,
        )
        facts: Facts = [("repo", Provenance(refs.source_url, now))]
        tags = _tags(listing.tags, refs.url) if spec.track != "commits" else None
        head = Commit(listing.head, None, refs.url) if listing.head else None
        snapshot = ProjectSnapshot(
            project=spec.name, tracking=spec.tracking, repo=repo, tags=tags, head=head
        )
        facts += [("tags", Provenance(refs.source_url, now))] if tags is not None else []
        facts += [("head", Provenance(refs.source_url, now))]
        if not self.settings.fetch_objects:
            return replace(snapshot, provenance=tuple(facts))
        snapshot, tree = self._dates(remote, refs, snapshot, prior)
        with self._lock:
            self._heads[spec.forge.path] = _Head(refs, tree)
        snapshot = self._license(remote, refs, snapshot, tree, prior, facts, now)
        return replace(snapshot, provenance=tuple(facts))

    def project_url(self, spec: ProjectSpec) -> str:
        return spec.forge.path if spec.forge else ""

    def redact(self, text: str) -> str:
        return text  # nothing secret is sent: no credentials, URLs with userinfo are refused

    def read_file(self, location: Location, path: str) -> RepoFile:
        """A file at the head of the repository: its tree followed one folder at a time."""
        remote = self._remote(location.path)
        known = self._head(remote, location.path)
        url = known.refs.url
        if known.tree is None:
            raise SourceError(
                f"cannot read {path} from {url}: an empty repository, or a server that does "
                "not allow filtered fetches (protocol v2 with uploadpack.allowFilter)",
                url,
            )
        sha = known.tree
        parts = [p for p in path.strip("/").split("/") if p]
        for depth, part in enumerate(parts):
            entries = _entries(remote.objects(known.refs, [sha], deepen=False).get(sha))
            found = entries.get(part)
            last = depth == len(parts) - 1
            if found is None or (last and found[0] not in REGULAR_FILES):
                raise SourceError(f"{path} not found in {url}", url, 404)
            sha = found[1]
        text = _text(remote.objects(known.refs, [sha], deepen=False).get(sha))
        markdown = "text/markdown" if path.lower().endswith((".md", ".markdown")) else None
        return RepoFile(text, url, markdown)

    def _head(self, remote: GitRemote, url: str) -> _Head:
        """The repository's refs and head tree: as this audit's fetch left them, else asked."""
        with self._lock:
            known = self._heads.get(url)
        if known is not None and known.tree is not None:
            return known
        refs = known.refs if known is not None else remote.refs()
        sha = refs.listing.head
        commit = remote.objects(refs, [sha], deepen=True).get(sha) if sha else None
        known = _Head(refs, _tree_of(commit))
        with self._lock:
            self._heads[url] = known
        return known

    def usage(self) -> Usage:
        with self._lock:
            apis = list(self._apis.values())
        return {
            "requests": sum(a.usage.requests for a in apis),
            "not_modified": sum(a.usage.not_modified for a in apis),
            "retries": sum(a.usage.retries for a in apis),
            "hosts": len(apis),
        }

    def close(self) -> None:
        with self._lock:
            apis, self._apis = list(self._apis.values()), {}
        for api in apis:
            api.close()

    # -- one project ---------------------------------------------------------------------------

    def _dates(
        self, remote: GitRemote, refs: Refs, snapshot: ProjectSnapshot,
        prior: ProjectSnapshot | None,
    ) -> tuple[ProjectSnapshot, str | None]:  # fmt: skip
        """The commit dates of the head and of the highest usable tags, each read once: a
        date the prior state holds for the same commit is kept. Returns the head's tree when
        the head commit was read."""
        known = {t.sha: t.date for t in (prior.tags or ()) if t.date} if prior else {}
        if prior and prior.head and prior.head.date:
            known[prior.head.sha] = prior.head.date
        tags = snapshot.tags or ()
        wanted = [t.sha for t in usable_tags(snapshot.tracking, tags)[: self.settings.dated_tags]]
        head = snapshot.head
        moved = head is not None and not (prior and prior.head and prior.head.sha == head.sha)
        wants = [sha for sha in wanted if sha not in known]
        if head is not None and (moved or head.sha not in known):
            wants.insert(0, head.sha)
        commits = remote.objects(refs, wants, deepen=True)
        dates = {**known, **{sha: _date(obj) for sha, obj in commits.items()}}
        dated = tuple(replace(t, date=dates.get(t.sha)) for t in tags)
        if head is not None:
            head = replace(head, date=dates.get(head.sha))
        tree = _tree_of(commits.get(head.sha)) if head is not None else None
        return replace(snapshot, tags=dated if snapshot.tags is not None else None,
                       head=head), tree  # fmt: skip

    def _license(
        self, remote: GitRemote, refs: Refs, snapshot: ProjectSnapshot, tree: str | None,
        prior: ProjectSnapshot | None, facts: Facts, now: str,
    ) -> ProjectSnapshot:  # fmt: skip
        """The license-ish files of the root and the root license file's text, read when the
        head moved (its text only when its blob moved); else the prior state's, carried."""
        head = snapshot.head
        if head is None:
            return snapshot
        if prior and prior.head and prior.head.sha == head.sha and tree is None:
            facts.extend(carried(prior, "license_inventory") + carried(prior, "license"))
            return replace(snapshot, license_file=prior.license_file,
                           license_inventory=prior.license_inventory)  # fmt: skip
        if tree is None:
            return snapshot  # the server cannot fetch filtered: no files read
        entries = _entries(remote.objects(refs, [tree], deepen=False).get(tree))
        files = {name: sha for name, (mode, sha) in entries.items() if mode in REGULAR_FILES}
        root = read_root_listing(files, refs.url, prior)
        inventory = tuple(InventoryEntry(e.path, e.blob_sha) for e in root.inventory)
        snapshot = replace(snapshot, license_inventory=inventory)
        facts.append(("license_inventory", Provenance(refs.url, now)))
        if root.chosen is None:
            return snapshot
        if root.unchanged is not None:
            facts.extend(carried(prior, "license"))
            return replace(snapshot, license_file=root.unchanged)
        blob = files[root.chosen]
        text = _text(remote.objects(refs, [blob], deepen=False).get(blob))
        facts.append(("license", Provenance(refs.url, now)))
        return replace(snapshot, license_file=LicenseFile(root.chosen, blob, refs.url, text=text))


def _tags(found: dict[str, tuple[str, str]], url: str) -> tuple[Tag, ...]:
    """Every tag (its commit: an annotated tag peeled), highest version first, at most
    MAX_TAGS; dates are added by the shallow fetch."""
    tags = [Tag(cap(name) or "", commit, url=url) for name, (_obj, commit) in found.items()]
    undated = usable_tags(Tracking(), tags)  # every tag, in version order: none has a date yet
    return tuple(undated[:MAX_TAGS])


def _date(obj: ShaFile) -> str | None:
    """A commit's committer date in UTC; None for any other object."""
    from dulwich.objects import Commit as GitCommit

    if not isinstance(obj, GitCommit):
        return None
    try:
        return datetime.fromtimestamp(obj.commit_time, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, OSError, ValueError):  # a hostile timestamp
        return None


def _tree_of(obj: ShaFile | None) -> str | None:
    from dulwich.objects import Commit as GitCommit

    return obj.tree.decode("ascii") if isinstance(obj, GitCommit) else None


def _entries(obj: ShaFile | None) -> dict[str, tuple[int, str]]:
    """A tree's entries: name -> (mode, object id)."""
    from dulwich.objects import Tree

    if not isinstance(obj, Tree):
        raise SourceError("the git server did not send the tree asked for")
    return {
        entry.path.decode("utf-8", "replace"): (entry.mode, entry.sha.decode("ascii"))
        for entry in obj.items()
    }


def _text(obj: ShaFile | None) -> str:
    from dulwich.objects import Blob

    if not isinstance(obj, Blob):
        raise SourceError("the git server did not send the file asked for")
    return obj.data.decode("utf-8", "replace").removeprefix("\ufeff")[:MAX_TEXT]
