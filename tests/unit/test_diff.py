"""The pure diff (crawler.diff), one table row per change kind and per flag kind: a minimal
baseline and current snapshot of one project, and exactly the change or flag they produce.
No server, no database: snapshots in, findings out.

The rows compare the structured facts (kind, before, after, evidence, details, new); the
sentences are the presentation's and are tested where they are rendered."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from crawler.audit import stale_flags
from crawler.diff import DiffRules, Findings, SourceNames, Tracked, diff_audit
from crawler.model import (
    ChangeKind,
    Commit,
    ExtractedTable,
    FlagKind,
    ForgeLicense,
    InventoryEntry,
    LicenseAnalysis,
    LicenseFile,
    PackageInfo,
    PackageVersion,
    PageSnapshot,
    ProjectOutcome,
    ProjectSnapshot,
    ProjectStatus,
    Release,
    RepoInfo,
    Tag,
    Tracking,
)

NOW = datetime(2026, 11, 2, 3, 0, tzinfo=UTC)
RULES = DiffRules(now=NOW, names={"github": SourceNames("GitHub", "repo")})
URL = "https://github.com/acme/kit"
REPO = RepoInfo(id=7, full_name="acme/kit", default_branch="main", archived=False, url=URL)
MIT = ForgeLicense(key="mit", spdx_id="MIT", name="MIT License")
SHA_A, SHA_B = "a" * 40, "b" * 40
PAGE_URL = "https://vendor.example/support.html"


def _release(tag: str, day: int, *, pre: bool = False) -> Release:
    return Release(
        tag=tag, name=None, published_at=f"2026-10-{day:02d}T00:00:00Z", prerelease=pre,
        draft=False, url=f"{URL}/releases/tag/{tag}",
    )  # fmt: skip


def _tag(name: str, sha: str, day: int) -> Tag:
    return Tag(name, sha, f"2026-10-{day:02d}T00:00:00Z", f"{URL}/tree/{name}")


def _snapshot(**facts: Any) -> ProjectSnapshot:
    """Project "Kit" on GitHub with one release, v1.0; ``facts`` replace what a row needs."""
    first = ProjectSnapshot(project="Kit", repo=REPO, releases=(_release("v1.0", 1),))
    return replace(first, **facts)


def _package(*versions: str, license: str | None = None) -> PackageInfo:
    return PackageInfo(
        registry="pypi", name="acme-kit", url="https://pypi.org/project/acme-kit/",
        versions=tuple(PackageVersion(v, "2026-10-02T00:00:00Z", False, False) for v in versions),
        license=license,
    )  # fmt: skip


def _page(rows: tuple[tuple[str, ...], ...] = (("CUDA", "yes"),), pin: str | None = "1.0",
          text: str = "Supported on Linux") -> PageSnapshot:  # fmt: skip
    table = ExtractedTable("support", ("Platform",), ("Platform", "Status"), rows)
    return PageSnapshot("Support", PAGE_URL, (table,), (("kit", pin),), text)


def _license_file(sha: str, text: str) -> LicenseFile:
    return LicenseFile("LICENSE", sha, f"{URL}/blob/main/LICENSE", None, text)


def _inventory(*entries: tuple[str, str]) -> tuple[InventoryEntry, ...]:
    return tuple(InventoryEntry(path, sha) for path, sha in entries)


def _diff(
    before: ProjectSnapshot | None,
    after: ProjectSnapshot,
    *,
    observed: bool = True,
    known: bool = True,
    listed: tuple[str, ...] = ("Kit",),
    rules: DiffRules = RULES,
) -> Findings:
    """One project, "Kit", audited once more: ``before`` is its stored state (None: never seen),
    ``observed`` whether this audit checked it, ``known`` whether the baseline listed it."""
    baseline = {"Kit": before} if before is not None else {}
    return diff_audit(
        tracked=[Tracked("Kit", "acme/kit")],
        listed=listed,
        baseline=baseline,
        baseline_projects=["Kit"] if known else [],
        current={"Kit": after},
        observed={"Kit"} if observed else set(),
        rules=rules,
    )


def _changes(findings: Findings) -> list[tuple[str, ChangeKind, Any, Any, str | None, Any]]:
    return [
        (c.project, c.kind, c.before, c.after, c.evidence_url, c.details) for c in findings.changes
    ]


@dataclass(frozen=True)
class ChangeCase:
    kind: ChangeKind
    before: ProjectSnapshot | None
    after: ProjectSnapshot
    expected: tuple[Any, Any, str | None, dict[str, Any]]  # before, after, evidence, details
    known: bool = True
    listed: tuple[str, ...] = ("Kit",)
    extra: dict[str, Any] = field(default_factory=dict)


BASE = _snapshot()
WITH_TAGS = dict(releases=(), tags=(_tag("v0.9", SHA_A, 1),))
WITH_HEAD = dict(tracking=Tracking(track="commits"), head=Commit(SHA_A, None, f"{URL}/commit/a"))
LICENSED = dict(forge_license=MIT, license_file=_license_file(SHA_A, "MIT License (c) 2024 Ann"))

def _label(forge: str, *, license_file: bool) -> dict[str, Any]:
    """The license-label facts a license change carries for its wording."""
    return {"forge": forge, "detected": None, "extra_text": False, "license_file": license_file,
            "forge_name": "github", "forge_answered": True}  # fmt: skip


CHANGE_CASES = [
    ChangeCase(
        ChangeKind.NEW_RELEASE, BASE,
        _snapshot(releases=(_release("v1.1", 5), _release("v1.0", 1))),
        ("v1.0", "v1.1", f"{URL}/releases/tag/v1.1",
         {"name": None, "published_at": "2026-10-05T00:00:00Z"}),
    ),
    ChangeCase(
        ChangeKind.NEW_PRERELEASE, BASE,
        _snapshot(releases=(_release("v2.0rc1", 5, pre=True), _release("v1.0", 1))),
        ("v1.0", "v2.0rc1", f"{URL}/releases/tag/v2.0rc1",
         {"name": None, "published_at": "2026-10-05T00:00:00Z"}),
    ),
    ChangeCase(
        ChangeKind.RELEASE_REMOVED,
        _snapshot(releases=(_release("v1.1", 5), _release("v1.0", 1))), BASE,
        ("v1.1", None, f"{URL}/releases/tag/v1.1", {}),
    ),
    ChangeCase(
        ChangeKind.NEW_TAG, _snapshot(**WITH_TAGS),
        _snapshot(releases=(), tags=(_tag("v1.0", SHA_B, 5), _tag("v0.9", SHA_A, 1))),
        ("v0.9", "v1.0", f"{URL}/tree/v1.0", {"sha": SHA_B, "date": "2026-10-05T00:00:00Z"}),
    ),
    ChangeCase(
        ChangeKind.NEW_COMMIT, _snapshot(**WITH_HEAD),
        _snapshot(**{**WITH_HEAD, "head": Commit(SHA_B, None, f"{URL}/commit/b")}),
        (SHA_A, SHA_B, f"{URL}/commit/b", {"date": None}),
    ),
    ChangeCase(
        ChangeKind.NEW_PACKAGE_VERSION, _snapshot(packages=(_package("1.0"),)),
        _snapshot(packages=(_package("1.0.1", "1.0"),)),
        ("1.0", "1.0.1", "https://pypi.org/project/acme-kit/1.0.1/",
         {"registry": "pypi", "package": "acme-kit", "uploaded_at": "2026-10-02T00:00:00Z",
          "prerelease": False}),
    ),
    ChangeCase(
        ChangeKind.LICENSE_CHANGED, _snapshot(forge_license=MIT),
        _snapshot(forge_license=ForgeLicense("apache-2.0", "Apache-2.0", "Apache License 2.0")),
        ({"forge": "MIT", "detected": None}, {"forge": "Apache-2.0", "detected": None}, URL,
         {"label_before": _label("MIT", license_file=False),
          "label_after": _label("Apache-2.0", license_file=False)}),
    ),
    ChangeCase(
        ChangeKind.LICENSE_TEXT_CHANGED, _snapshot(**LICENSED),
        _snapshot(forge_license=MIT, license_file=_license_file(SHA_B, "MIT License (c) 2025 Ann")),
        (SHA_A, SHA_B, f"{URL}/blob/main/LICENSE",
         {"path": "LICENSE", "word_diff": [("equal", "MIT License (c)"), ("delete", "2024"),
                                           ("insert", "2025"), ("equal", "Ann")],
          "label_after": _label("MIT", license_file=True)}),
    ),
    ChangeCase(
        ChangeKind.LICENSE_FILES_CHANGED,
        _snapshot(license_inventory=_inventory(("LICENSE", SHA_A), ("NOTICE", SHA_A))),
        _snapshot(license_inventory=_inventory(("LICENSE", SHA_A), ("NOTICE", SHA_B),
                                               ("third_party/LICENSE", SHA_A))),
        (["LICENSE", "NOTICE"], ["LICENSE", "NOTICE", "third_party/LICENSE"], URL,
         {"added": ["third_party/LICENSE"], "removed": [], "changed": ["NOTICE"]}),
    ),
    ChangeCase(
        ChangeKind.REPO_MOVED, BASE,
        _snapshot(repo=replace(REPO, full_name="kit-org/kit", url="https://github.com/kit-org/kit")),
        ("acme/kit", "kit-org/kit", "https://github.com/kit-org/kit",
         {"before_id": 7, "after_id": 7, "moved": True, "replaced": False, "forge": "github"}),
    ),
    ChangeCase(
        ChangeKind.REPO_ARCHIVED, BASE, _snapshot(repo=replace(REPO, archived=True)),
        (False, True, URL, {"repo": "acme/kit"}),
    ),
    ChangeCase(  # the description names a successor (crawler.analysis.successor)
        ChangeKind.UPSTREAM_SUPERSEDED, BASE,
        _snapshot(repo=replace(REPO, description="Superseded by acme/kit-next.")),
        ("acme/kit", "acme/kit-next", URL,
         {"repo": "acme/kit", "phrase": "superseded by", "successor": "acme/kit-next",
          "successor_url": "https://github.com/acme/kit-next", "stopped": True,
          "description": "Superseded by acme/kit-next."}),
    ),
    ChangeCase(
        ChangeKind.PROJECT_ADDED, None, BASE, (None, "acme/kit", URL, {}), known=False,
    ),
    ChangeCase(
        ChangeKind.PROJECT_REMOVED, BASE, BASE, ("Old", None, None, {}),
        listed=("Kit",), extra={"removed": "Old"},
    ),
    ChangeCase(
        ChangeKind.TABLE_CHANGED, _snapshot(pages=(_page(),)),
        _snapshot(pages=(_page(rows=(("CUDA", "no"),)),)),
        (None, None, PAGE_URL,
         {"page": "Support", "table": "support", "key_columns": ["Platform"], "columns_added": [],
          "columns_removed": [], "rows_added": [], "rows_removed": [],
          "cells_changed": [{"key": {"Platform": "CUDA"}, "column": "Status",
                             "before": "yes", "after": "no"}]}),
    ),
    ChangeCase(
        ChangeKind.PIN_CHANGED, _snapshot(pages=(_page(),)),
        _snapshot(pages=(_page(pin="1.1"),)),
        ("1.0", "1.1", PAGE_URL, {"page": "Support", "pin": "kit"}),
    ),
    ChangeCase(
        ChangeKind.PAGE_CHANGED, _snapshot(pages=(_page(),)),
        _snapshot(pages=(_page(text="Supported on Linux and Windows"),)),
        ("Supported on Linux", "Supported on Linux and Windows", PAGE_URL,
         {"page": "Support", "diff": "… Supported on Linux {+and Windows+} …",
          "hunks": [{"op": "insert", "before": "", "after": "and Windows"}]}),
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", CHANGE_CASES, ids=[c.kind.value for c in CHANGE_CASES])
def test_each_change_kind_from_a_minimal_pair(case: ChangeCase) -> None:
    if "removed" in case.extra:  # the baseline listed a project sources.yaml no longer lists
        findings = diff_audit(
            tracked=[Tracked("Kit", "acme/kit")], listed=case.listed,
            baseline={"Kit": case.before or BASE}, baseline_projects=["Kit", "Old"],
            current={"Kit": case.after}, observed={"Kit"}, rules=RULES,
        )  # fmt: skip
        assert _changes(findings) == [("Old", case.kind, *case.expected)]
        return
    findings = _diff(case.before, case.after, known=case.known, listed=case.listed)
    assert _changes(findings) == [("Kit", case.kind, *case.expected)]
    assert findings.problems == ()


def test_the_table_covers_every_change_kind() -> None:
    # links and dormancy are judged over nights: tests/unit/test_link_verdicts.py
    over_nights = {ChangeKind.LINK_MOVED, ChangeKind.LINK_BROKEN, ChangeKind.UPSTREAM_DORMANT}
    assert {c.kind for c in CHANGE_CASES} == set(ChangeKind) - over_nights


@pytest.mark.parametrize(
    "case",
    [c for c in CHANGE_CASES if c.before is not None and "removed" not in c.extra],
    ids=lambda c: c.kind.value,
)
def test_a_project_not_checked_this_audit_changes_nothing(case: ChangeCase) -> None:
    """Errors are not findings: a project whose fetch failed is carried forward, and even a
    current state that differs from the baseline produces no change when it was not observed."""
    assert _diff(case.before, case.after, observed=False).changes == ()


def test_the_same_state_twice_changes_nothing() -> None:
    for case in CHANGE_CASES:
        assert _diff(case.after, case.after).changes == (), case.kind


# -- flags ---------------------------------------------------------------------------------

NOASSERTION = ForgeLicense(key="other", spdx_id="NOASSERTION", name="Other")


def _flags(findings: Findings) -> list[tuple[str, FlagKind, bool, str | None, dict[str, Any]]]:
    return [(f.project, f.kind, f.new, f.evidence_url, f.details) for f in findings.flags]


@dataclass(frozen=True)
class FlagCase:
    name: str
    before: ProjectSnapshot | None
    after: ProjectSnapshot
    expected: list[tuple[FlagKind, bool, str | None, dict[str, Any]]]  # kind, new, evidence, …


CHANNEL = {"registry": "pypi", "package": "acme-kit"}
# the facts a flag carries for its wording (crawler.report.words), beside what raised it
TAG_FACTS = {"date": "2026-10-01T00:00:00Z", "forge": "github", "releases_checked": True,
             "track": "auto"}  # fmt: skip
AHEAD_FACTS = {"forge": "github", "package_version": "1.1", "release": "v1.0"}
READS_MIT = LicenseAnalysis(  # our reading, stored with the snapshot
    spdx_ids=("MIT",), expression="MIT", verdict="exact", coverage=1.0, matches=(),
    copyright_holders=(), extra_text=(), altered_text=(), notes=(),
)  # fmt: skip
FLAG_CASES = [
    FlagCase(
        "noassertion-new", _snapshot(forge_license=MIT), _snapshot(forge_license=NOASSERTION),
        [(FlagKind.LICENSE_NOASSERTION, True, None,
          {"forge": {"key": "other", "spdx_id": "NOASSERTION", "name": "Other"},
           "source": "github"})],
    ),
    FlagCase(
        "noassertion-again", _snapshot(forge_license=NOASSERTION),
        _snapshot(forge_license=NOASSERTION),
        [(FlagKind.LICENSE_NOASSERTION, False, None,
          {"forge": {"key": "other", "spdx_id": "NOASSERTION", "name": "Other"},
           "source": "github"})],
    ),
    FlagCase(
        "no-tagged-release-new", BASE, _snapshot(**WITH_TAGS),
        [(FlagKind.NO_TAGGED_RELEASE, True, f"{URL}/tree/v0.9",
          {"tracked_by": "tag", "ref": "v0.9", **TAG_FACTS})],
    ),
    FlagCase(
        "no-tagged-release-again", _snapshot(**WITH_TAGS), _snapshot(**WITH_TAGS),
        [(FlagKind.NO_TAGGED_RELEASE, False, f"{URL}/tree/v0.9",
          {"tracked_by": "tag", "ref": "v0.9", **TAG_FACTS})],
    ),
    FlagCase(
        "no-tagged-release-by-commit", None, _snapshot(**WITH_HEAD),
        [(FlagKind.NO_TAGGED_RELEASE, True, f"{URL}/commit/a",
          {"tracked_by": "commit", "ref": SHA_A[:12], "date": None, "forge": "github",
           "releases_checked": True, "track": "commits"})],
    ),
    FlagCase(
        "channel-version-ahead", BASE, _snapshot(packages=(_package("1.1"),)),
        [(FlagKind.CHANNEL_MISMATCH, True, "https://pypi.org/project/acme-kit/",
          {**CHANNEL, "problem": "version_ahead", **AHEAD_FACTS})],
    ),
    FlagCase(
        "channel-version-ahead-again", _snapshot(packages=(_package("1.1"),)),
        _snapshot(packages=(_package("1.1"),)),
        [(FlagKind.CHANNEL_MISMATCH, False, "https://pypi.org/project/acme-kit/",
          {**CHANNEL, "problem": "version_ahead", **AHEAD_FACTS})],
    ),
    FlagCase(
        "channel-release-without-package", BASE,
        _snapshot(releases=(_release("v1.1", 5),), packages=(_package("1.0"),)),
        [(FlagKind.CHANNEL_MISMATCH, True, "https://pypi.org/project/acme-kit/",
          {**CHANNEL, "problem": "release_without_package", "forge": "github",
           "package_version": "1.0", "release": "v1.1", "published_at": "2026-10-05T00:00:00Z",
           "days": 28})],
    ),
    FlagCase(  # the row shows v1.1rc1 (the highest release): the channel is still compared
        # with the newest final release, v1.0 (issue 32, defect 1 made an rc the row)
        "channel-version-ahead-of-the-final-below-a-release-candidate", BASE,
        _snapshot(releases=(_release("v1.0", 1), _release("v1.1rc1", 3, pre=True)),
                  packages=(_package("1.1"),)),
        [(FlagKind.CHANNEL_MISMATCH, True, "https://pypi.org/project/acme-kit/",
          {**CHANNEL, "problem": "version_ahead", **AHEAD_FACTS})],
    ),
    FlagCase(
        "channel-license", BASE,
        _snapshot(packages=(_package("1.0", license="Apache-2.0"),),
                  license_file=replace(_license_file(SHA_A, "MIT License"), analysis=READS_MIT)),
        [(FlagKind.CHANNEL_MISMATCH, True, "https://pypi.org/project/acme-kit/",
          {**CHANNEL, "problem": "license", "forge": "github", "declared": "Apache-2.0",
           "detected": "MIT"})],
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", FLAG_CASES, ids=[c.name for c in FLAG_CASES])
def test_each_flag_kind_from_a_minimal_pair(case: FlagCase) -> None:
    findings = _diff(case.before, case.after, known=case.before is not None)
    assert _flags(findings) == [("Kit", *flag) for flag in case.expected]


def test_a_release_inside_the_grace_period_is_no_mismatch_yet() -> None:
    after = _snapshot(releases=(_release("v1.1", 30),), packages=(_package("1.0"),))
    three_days_later = replace(RULES, now=datetime(2026, 11, 2, tzinfo=UTC))
    assert _diff(BASE, after, rules=three_days_later).flags == ()


def test_stale_flags_name_the_projects_not_checked_for_too_long() -> None:
    """The STALE flag is the audit's (it knows when each project was last checked), computed
    by a pure function beside the diff."""
    flags = stale_flags(
        names=["Kit", "Fresh", "Checked"],
        results={
            "Kit": ProjectOutcome(ProjectStatus.DEFERRED, None),
            "Fresh": ProjectOutcome(ProjectStatus.ERROR, None),
            "Checked": ProjectOutcome(ProjectStatus.OK, None),
        },
        last_checked={"Kit": NOW - timedelta(days=9), "Fresh": NOW - timedelta(days=2)},
        first_audit=NOW - timedelta(days=30),
        now=NOW,
        stale_after=timedelta(days=7),
    )
    assert [(f.project, f.kind, f.new, f.evidence_url, f.details) for f in flags] == [
        ("Kit", FlagKind.STALE, True, None,
         {"last_checked": "2026-10-24T03:00:00Z", "days": 9}),
    ]  # fmt: skip


def test_the_flag_table_covers_every_flag_kind() -> None:
    produced = {kind for case in FLAG_CASES for kind, *_ in case.expected} | {FlagKind.STALE}
    assert produced == set(FlagKind)
