"""The root license file from a forge's root listing (path → blob SHA): the license-ish files
beside it, which one is the root license, and whether the prior state's copy still stands (its
blob did not move, so its text is not read again). Shared by the sources whose API lists a
directory's blobs (Gitee, Gitea); the fetching stays in each source."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import quote

from crawler.analysis.licenses import is_license_file, pick_root_license
from crawler.model import InventoryEntry, LicenseFile, ProjectSnapshot


@dataclass(frozen=True)
class RootListing:
    inventory: tuple[InventoryEntry, ...]  # every license-ish file of the root, sorted by path
    chosen: str | None  # the root license's path, None when there is none
    unchanged: LicenseFile | None  # the prior state's file, when its path and blob are the same


def read_root_listing(
    blobs: Mapping[str, str], page: str, prior: ProjectSnapshot | None
) -> RootListing:
    """``blobs``: the root's files (path → blob SHA); ``page``: the web page of the root, which
    each file's link extends."""
    inventory = tuple(
        InventoryEntry(path, sha, f"{page}/{quote(path)}")
        for path, sha in sorted(blobs.items())
        if is_license_file(path)
    )
    chosen = pick_root_license(list(blobs))
    known = prior.license_file if prior else None
    unchanged = (
        known
        if chosen is not None
        and known is not None
        and (known.path, known.blob_sha) == (chosen, blobs[chosen])
        else None
    )
    return RootListing(inventory, chosen, unchanged)
