"""PyPI's JSON API answer (``GET /pypi/<project>/json``) → a PackageInfo. Pure.

The answer's ``releases`` maps each version string to its files; a file carries
``upload_time_iso_8601`` and the release's ``yanked`` flag. Warehouse serialises with sorted
keys, so versions arrive in string order ("0.10.0" before "0.9.0"): they are ordered here by
PEP 440. A version without files is not installable and is left out. Upstream strings are
untrusted: capped here, escaped by the renderers.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from packaging.version import InvalidVersion, Version

from crawler.model import PackageInfo, PackageVersion
from crawler.upstream.answers import ShapeError as ShapeError  # raised to callers
from crawler.upstream.sources.pypi.licenses import declared_license
from crawler.versions import looks_like_prerelease

MAX_VERSION = 100
MAX_NAME = 200


def _timestamp(file: Mapping[str, Any]) -> str | None:
    """A file's upload time as the model's UTC form (``2026-11-02T10:00:00Z``)."""
    for key, naive_utc in (("upload_time_iso_8601", False), ("upload_time", True)):
        value = file.get(key)
        if not isinstance(value, str) or not value:
            continue
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            continue
        if moment.tzinfo is None:
            if not naive_utc:
                continue
            moment = moment.replace(tzinfo=UTC)
        return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return None


def _version(text: str, files: list[Any]) -> PackageVersion | None:
    entries = [f for f in files if isinstance(f, dict)]
    if not entries or len(text) > MAX_VERSION:
        return None
    stamps = [s for s in (_timestamp(f) for f in entries) if s]
    try:
        prerelease = Version(text).is_prerelease
    except InvalidVersion:  # legacy versions from before PEP 440 are still served
        prerelease = looks_like_prerelease(text)
    return PackageVersion(
        version=text,
        uploaded_at=min(stamps) if stamps else None,  # the first upload published it
        yanked=all(f.get("yanked") is True for f in entries),
        prerelease=prerelease,
    )


def _order(versions: list[PackageVersion]) -> list[PackageVersion]:
    """Newest first by PEP 440; versions PEP 440 cannot read go last, newest upload first."""
    valid: list[tuple[Version, PackageVersion]] = []
    legacy: list[PackageVersion] = []
    for item in versions:
        try:
            valid.append((Version(item.version), item))
        except InvalidVersion:
            legacy.append(item)
    valid.sort(key=lambda pair: (pair[0], pair[1].version), reverse=True)
    legacy.sort(key=lambda v: (v.uploaded_at or "", v.version), reverse=True)
    return [v for _, v in valid] + legacy


def _web_url(info: Mapping[str, Any], fallback: str) -> str:
    for key in ("package_url", "project_url"):
        value = info.get(key)
        if isinstance(value, str) and value.startswith(("https://", "http://")):
            return value if value.endswith("/") else value + "/"
    return fallback


def package_from_json(data: Any, *, fallback_url: str, limit: int) -> PackageInfo:
    """``fallback_url``: the package page when the answer names none (built from the API's
    own host, never a hard-coded one). ``limit``: how many versions to keep, newest first."""
    if not isinstance(data, dict) or not isinstance(data.get("info"), dict):
        raise ShapeError("missing field 'info' in PyPI answer")
    info: dict[str, Any] = data["info"]
    name = info.get("name")
    if not isinstance(name, str) or not name or len(name) > MAX_NAME:
        raise ShapeError("missing field 'info.name' in PyPI answer")
    releases = data.get("releases")
    if isinstance(releases, dict):
        files_by_version = releases
    else:  # the deprecated key is gone: the latest release's files are all there is
        version, urls = info.get("version"), data.get("urls")
        if not isinstance(version, str) or not isinstance(urls, list):
            raise ShapeError("missing fields 'releases' and 'urls' in PyPI answer")
        files_by_version = {version: urls}
    versions = []
    for text, files in files_by_version.items():
        if isinstance(text, str) and isinstance(files, list):
            item = _version(text, files)
            if item is not None:
                versions.append(item)
    license_, source = declared_license(info)
    return PackageInfo(
        registry="pypi",
        name=name,
        url=_web_url(info, fallback_url),
        versions=tuple(_order(versions)[:limit]),
        license=license_,
        license_source=source,
    )
