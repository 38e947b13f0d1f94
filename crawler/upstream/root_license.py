"""The root license file from a forge's root listing (path → blob SHA): the license-ish files
beside it, which one is the root license, and whether the prior state's copy still stands (its
blob did not move, so its text is not read again). Every source chooses the root license with
this one rule (``crawler.analysis.licenses.pick_root_license``): Gitee, Gitea and git from
their root listings, GitHub's GraphQL from the root entries, GitHub's REST from the tree scan,
and GitHub's REST without a tree and GitLab -- whose forge names a file itself -- list the
root when the forge's own pick may not be the rule's (``forge_pick_in_doubt``). The fetching
stays in each source."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import quote

from crawler.analysis.license_paths import is_license_file, pick_root_license
from crawler.model import ForgeLicense, InventoryEntry, LicenseFile, ProjectSnapshot

_LGPL_RE = re.compile(r"^lgpl", re.IGNORECASE)


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


def forge_pick_in_doubt(forge: ForgeLicense, named: str | None) -> bool:
    """The forge names ``named`` as the license file but its verdict is the LGPL while that
    file is not a ``.LESSER`` one: the GNU layout (the GPL text in COPYING beside
    COPYING.LESSER), which GitHub's REST ``/license`` and GitLab's ``license_url`` name by
    COPYING. Only the root's listing tells which file ``pick_root_license`` chooses."""
    said = forge.spdx_id or forge.key or ""
    name = (named or "").replace("\\", "/").rsplit("/", 1)[-1].lower()
    return bool(named) and _LGPL_RE.match(said) is not None and ".lesser" not in name


def choose_root_license(root: Mapping[str, str]) -> tuple[str, str] | None:
    """(path, blob SHA) of the root license among ``root``'s files (path → blob SHA)."""
    chosen = pick_root_license(list(root))
    return (chosen, root[chosen]) if chosen is not None else None
