"""Release channels (PyPI…): new package versions, and channel_mismatch when what users install
disagrees with the forge — a version published without a release, a release still without a
package after the grace period, or a declared license that differs from the license file. Pure.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from packaging.version import InvalidVersion, Version

from crawler.diff.licenses import detected_license
from crawler.diff.source_labels import Names
from crawler.model import (
    Change,
    ChangeKind,
    Flag,
    FlagKind,
    PackageInfo,
    PackageVersion,
    ProjectSnapshot,
)
from crawler.versions import current_version, newest_final_release

MAX_NEW_VERSIONS = 10  # per package per audit: a registry backfill is one line, not hundreds


def _key(package: PackageInfo) -> tuple[str, str]:
    return package.registry, package.name.lower()


def package_changes(
    name: str, before: ProjectSnapshot, after: ProjectSnapshot, names: Names
) -> list[Change]:
    old = {_key(p): p for p in before.packages}
    changes: list[Change] = []
    for package in after.packages:
        previous = old.get(_key(package))
        if previous is None:  # a newly watched channel is configuration, not a finding
            continue
        known = {v.version for v in previous.versions}
        newest_before = _newest(previous.versions, stable=False)
        fresh = [v for v in package.versions if v.version not in known and not v.yanked]
        for version in reversed(fresh[:MAX_NEW_VERSIONS]):
            changes.append(
                Change(
                    project=name,
                    kind=ChangeKind.NEW_PACKAGE_VERSION,
                    before=newest_before.version if newest_before else None,
                    after=version.version,
                    evidence_url=f"{package.url.rstrip('/')}/{version.version}/",
                    details={
                        "registry": package.registry,
                        "package": package.name,
                        "uploaded_at": version.uploaded_at,
                        "prerelease": version.prerelease,
                    },
                )
            )
    return changes


def _newest(versions: tuple[PackageVersion, ...], *, stable: bool) -> PackageVersion | None:
    for version in versions:
        if not version.yanked and not (stable and version.prerelease):
            return version
    return None


def _parse(text: str) -> Version | None:
    candidate = text.strip()
    for prefix in ("v", "V", "release-"):
        candidate = candidate.removeprefix(prefix)
    try:
        return Version(candidate)
    except InvalidVersion:
        return None


def _same_license(declared: str, detected: str) -> bool | None:
    """None when either side is not a valid SPDX expression (nothing to compare); compared
    through SPDX's equivalences (a deprecated GPL-3.0 is GPL-3.0-only or -or-later)."""
    from crawler.analysis.license_names import same_license  # license-expression: when asked

    return same_license(declared, detected)


def channel_flags(
    name: str, after: ProjectSnapshot, names: Names, *, now: datetime, grace: timedelta
) -> list[Flag]:
    flags: list[Flag] = []
    row = current_version(name, after, None)
    # the packages are compared with the newest final release, also when the row shows a
    # release candidate above it (a stable package version is never ahead of an rc)
    final = (
        newest_final_release(after.tracking, after.releases or ())
        if row.version_source == "release"
        else None
    )
    for package in after.packages:
        problems: list[tuple[str, dict[str, Any]]] = []
        newest = _newest(package.versions, stable=True)
        if final is not None and newest:
            released, published = _parse(final.tag), _parse(newest.version)
            facts = {"package_version": newest.version, "release": final.tag}
            if released and published and published > released:
                problems.append(("version_ahead", facts))
            elif released and published and released > published and final.published_at:
                age = now - datetime.fromisoformat(final.published_at.replace("Z", "+00:00"))
                if age > grace:
                    problems.append(
                        (
                            "release_without_package",
                            {**facts, "published_at": final.published_at, "days": age.days},
                        )
                    )
        detected = detected_license(after)
        if package.license and detected and _same_license(package.license, detected) is False:
            problems.append(("license", {"declared": package.license, "detected": detected}))
        for problem, facts in problems:
            flags.append(
                Flag(
                    project=name,
                    kind=FlagKind.CHANNEL_MISMATCH,
                    new=True,  # diff_audit compares with the baseline's flags
                    evidence_url=package.url,
                    details={
                        "registry": package.registry,
                        "package": package.name,
                        "problem": problem,
                        "forge": after.repo.forge if after.repo else None,
                        **facts,
                    },
                )
            )
    return flags
