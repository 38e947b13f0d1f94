"""One project through GitHub's REST API (the path without a token): conditional requests, and
optional requests (tag dates, the head of a project whose releases are all older than
``settings.dormant_after_days``, the tree scan) only while the budget covers every project
left."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from urllib.parse import quote

from crawler.config import ProjectSpec
from crawler.model import (
    ForgeLicense,
    InventoryEntry,
    LicenseFile,
    ProjectSnapshot,
    Provenance,
)
from crawler.upstream.guard import carried
from crawler.upstream.root_license import choose_root_license, forge_pick_in_doubt
from crawler.upstream.sources.github import GitHubSettings, parse
from crawler.upstream.sources.github.api import GitHubApi, GitHubError
from crawler.versions import head_decides_dormancy, is_prerelease, usable_releases, usable_tags

Clock = Callable[[], str]
REST_REQUESTS_PER_PROJECT = 4  # repo, releases or tags, license, maybe head: for budgeting


class RestProject:
    """Fetches one project; ``projects_left`` tells how many still need their essentials."""

    def __init__(
        self,
        api: GitHubApi,
        settings: GitHubSettings,
        clock: Clock,
        projects_left: Callable[[], int],
        dormant_after_days: float = 365.0,
    ) -> None:
        self.api = api
        self.settings = settings
        self.clock = clock
        self.projects_left = projects_left
        self.dormant_after_days = dormant_after_days  # settings.dormant_after_days

    def affordable(self) -> bool:
        """Room for an optional request after reserving the essentials of every project left."""
        spare = self.api.spare_requests()
        return spare is None or spare > REST_REQUESTS_PER_PROJECT * self.projects_left()

    def fetch(
        self, spec: ProjectSpec, repo_path: str, prior: ProjectSnapshot | None
    ) -> ProjectSnapshot:
        """The project's facts; GitHubError, ShapeError or BudgetExhausted on failure."""
        now = self.clock()
        sources: list[tuple[str, Provenance]] = []
        response = self.api.get_json(f"/repos/{repo_path}", allow=(404,))
        if response.status == 404:
            raise GitHubError(
                f"repository {repo_path} not found (deleted, private, or renamed without "
                "a redirect): fix 'repo' in sources.yaml",
                response.url,
                404,
            )
        repo, forge_license = parse.repo_from_rest(response.data)
        sources.append(("repo", Provenance(response.url, now)))
        base = f"/repos/{repo.full_name}"
        snapshot = ProjectSnapshot(
            project=spec.name, tracking=spec.tracking, repo=repo, forge_license=forge_license
        )
        tracking = spec.tracking
        if tracking.track in ("auto", "releases"):
            url = self.api.absolute(f"{base}/releases?per_page={self.settings.releases_per_repo}")
            response = self.api.get_json(url, expect=list)
            snapshot = replace(snapshot, releases=parse.releases_from_rest(response.data))
            sources.append(("releases", Provenance(response.url, now)))
            snapshot = self._mark_latest(snapshot, base)
        has_release = bool(usable_releases(tracking, snapshot.releases or ()))
        if tracking.track == "tags" or (tracking.track == "auto" and not has_release):
            # REST lists tags by name, not date: one full page (same cost) to sort by version.
            url = self.api.absolute(f"{base}/tags?per_page=100")
            response = self.api.get_json(url, expect=list)
            snapshot = replace(snapshot, tags=parse.tags_from_rest(response.data, repo.url))
            sources.append(("tags", Provenance(response.url, now)))
        newest_tags = usable_tags(tracking, snapshot.tags or ())
        has_tag = bool(newest_tags)
        if has_tag and not has_release:
            snapshot = self._date_newest_tag(snapshot, newest_tags[0].name, base, prior)
        if tracking.track == "commits" or (
            tracking.track == "auto" and not has_release and not has_tag
        ):
            snapshot = self._head(snapshot, base, sources, now)
        elif head_decides_dormancy(snapshot, now, self.dormant_after_days) and self.affordable():
            snapshot = self._head(snapshot, base, sources, now)  # dormant? only its head says

        # The tree first (when the budget has room for it): it names the root license file's
        # blob, and an unchanged blob is an unchanged text.
        tree_sources: list[tuple[str, Provenance]] = []
        snapshot, scanned = self._inventory(snapshot, prior, tree_sources, now)
        # GitHub's repository answer already says when there is no license file (null);
        # /license would only 404, unconditionally, every night.
        if forge_license.key is not None:
            snapshot = self._license(snapshot, prior, scanned, sources, now)
        sources.extend(tree_sources)
        return replace(snapshot, provenance=tuple(sources))

    def _license(
        self,
        snapshot: ProjectSnapshot,
        prior: ProjectSnapshot | None,
        scanned: bool,
        sources: list[tuple[str, Provenance]],
        now: str,
    ) -> ProjectSnapshot:
        """The root license file, chosen by the rule every path shares (``pick_root_license``):
        among the tree just scanned; without one, the file GitHub's /license names, unless
        GitHub's verdict says the GNU layout (``forge_pick_in_doubt``), when the root's listing
        decides. A chosen file whose blob the last audit read is not read again."""
        assert snapshot.repo is not None
        base = f"/repos/{snapshot.repo.full_name}"
        forge = snapshot.forge_license or ForgeLicense(None, None, None)
        earlier = prior.license_file if prior else None
        root = _root_of(snapshot.license_inventory) if scanned else None
        chosen = choose_root_license(root) if root else None
        named: LicenseFile | None = None
        if chosen is None:
            response = self.api.get_json(self.api.absolute(f"{base}/license"), allow=(404,))
            sources.append(("license", Provenance(response.url, now)))
            if response.status != 200:
                return snapshot
            named, _ = parse.license_file_from_rest(response.data)
            if root is not None or not forge_pick_in_doubt(forge, named.path):
                return replace(snapshot, license_file=named)
            listing = self._root_listing(snapshot) if self.affordable() else None
            chosen = choose_root_license(listing) if listing else None
            if chosen is None or chosen[0] == named.path:
                return replace(snapshot, license_file=named)
        if earlier is not None and (earlier.path, earlier.blob_sha) == chosen:
            sources[:] = [(fact, p) for fact, p in sources if fact != "license"]
            sources.extend(carried(prior, "license"))
            return replace(snapshot, license_file=earlier)
        ref = quote(snapshot.repo.default_branch, safe="")
        url = self.api.absolute(f"{base}/contents/{quote(chosen[0])}?ref={ref}")
        response = self.api.get_json(url, allow=(404,))
        if response.status != 200 or not isinstance(response.data, dict):
            return replace(snapshot, license_file=named) if named else snapshot
        sources[:] = [(fact, p) for fact, p in sources if fact != "license"]
        sources.append(("license", Provenance(response.url, now)))
        return replace(snapshot, license_file=parse.license_file_from_rest(response.data)[0])

    def _root_listing(self, snapshot: ProjectSnapshot) -> dict[str, str] | None:
        """The root's files (path → blob SHA) at the default branch; None when unanswered."""
        assert snapshot.repo is not None
        ref = quote(snapshot.repo.default_branch, safe="")
        url = self.api.absolute(f"/repos/{snapshot.repo.full_name}/contents?ref={ref}")
        response = self.api.get_json(url, expect=list, allow=(404,))
        if response.status != 200:
            return None
        return parse.root_files_from_rest(response.data)

    def _head(
        self, snapshot: ProjectSnapshot, base: str, sources: list[tuple[str, Provenance]], now: str
    ) -> ProjectSnapshot:
        url = self.api.absolute(f"{base}/commits?per_page=1")
        response = self.api.get_json(url, expect=list, allow=(409,))
        if response.status == 200 and response.data:
            snapshot = replace(snapshot, head=parse.commit_from_rest(response.data))
        sources.append(("head", Provenance(response.url, now)))
        return snapshot

    def _mark_latest(self, snapshot: ProjectSnapshot, base: str) -> ProjectSnapshot:
        """REST lists releases without GitHub's "latest" mark: ask /releases/latest (when the
        budget has room) once two final releases make the choice matter and the row follows
        the mark (``release_shown: newest_final``); otherwise the row is version order's."""
        if snapshot.tracking.release_shown != "newest_final":
            return snapshot
        releases = snapshot.releases or ()
        finals = [r for r in usable_releases(snapshot.tracking, releases) if not is_prerelease(r)]
        if len(finals) < 2 or not self.affordable():
            return snapshot
        response = self.api.get_json(f"{base}/releases/latest", allow=(404,))
        if response.status != 200:
            return snapshot
        return replace(snapshot, releases=parse.mark_latest(releases, response.data))

    def _date_newest_tag(
        self, snapshot: ProjectSnapshot, name: str, base: str, prior: ProjectSnapshot | None
    ) -> ProjectSnapshot:
        """REST tags carry no date: look up the commit of the one the catalog will show, unless
        the last audit already dated that very commit (a commit's date never changes)."""
        tags = snapshot.tags or ()
        tag = next(t for t in tags if t.name == name)
        known = next(
            (t.date for t in (prior.tags or ()) if t.sha == tag.sha and t.date is not None),
            None,
        ) if prior is not None else None  # fmt: skip
        if known is not None:
            dated = replace(tag, date=known)
            return replace(snapshot, tags=tuple(dated if t.name == name else t for t in tags))
        if not self.affordable():
            return snapshot
        response = self.api.get_json(f"{base}/commits/{tag.sha}", allow=(404, 422))
        if response.status != 200:
            return snapshot
        dated = replace(tag, date=parse.commit_from_rest(response.data).date)
        return replace(snapshot, tags=tuple(dated if t.name == name else t for t in tags))

    def _inventory(
        self,
        snapshot: ProjectSnapshot,
        prior: ProjectSnapshot | None,
        sources: list[tuple[str, Provenance]],
        now: str,
    ) -> tuple[ProjectSnapshot, bool]:
        """Scan the tree for license-ish files when the budget has room for it; True when
        this audit scanned it (False: the last audit's inventory is carried)."""
        assert snapshot.repo is not None
        kept = prior.license_inventory if prior else None
        mode = self.settings.inventory
        if (
            mode == "never"
            or not snapshot.repo.default_branch
            or (mode == "auto" and not self.affordable())
        ):
            sources.extend(carried(prior, "license_inventory"))
            return replace(snapshot, license_inventory=kept), False
        base = f"/repos/{snapshot.repo.full_name}"
        response = self.api.get_json(
            self.api.absolute(f"{base}/git/trees/{snapshot.repo.default_branch}?recursive=1"),
            allow=(404, 409),
            decode=parse.decode_tree,
        )
        if response.status != 200:
            sources.extend(carried(prior, "license_inventory"))
            return replace(snapshot, license_inventory=kept), False
        sources.append(("license_inventory", Provenance(response.url, now)))
        repo = snapshot.repo
        inventory = parse.inventory_from_tree(response.data, repo.url, repo.default_branch)
        return replace(snapshot, license_inventory=inventory), True


def _root_of(inventory: tuple[InventoryEntry, ...] | None) -> dict[str, str]:
    """The root's license-ish files of an inventory (path → blob SHA)."""
    return {entry.path: entry.blob_sha for entry in inventory or () if "/" not in entry.path}
