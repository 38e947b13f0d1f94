"""Reference license texts by SPDX id, read from the installed license-data package.

Used by ``crawler demo`` and the tests to build upstream states; nothing here is typed in.
"""

from __future__ import annotations

from functools import cache

from crawler.analysis.license_templates import data_dir


@cache
def _keys_by_spdx() -> dict[str, str]:
    keys: dict[str, str] = {}
    for path in data_dir().glob("*.LICENSE"):
        with path.open(encoding="utf-8") as handle:
            head = handle.read(2048)
        for line in head.splitlines():
            if line.startswith("spdx_license_key:"):
                keys.setdefault(line.split(":", 1)[1].strip(), path.stem)
                break
    return keys


def reference_text(spdx_id: str, holder: str = "2026 Example Authors") -> str:
    """The package's text of a license, with a copyright line so it reads like a LICENSE file."""
    key = _keys_by_spdx().get(spdx_id)
    if key is None:
        raise KeyError(f"no license text for SPDX id {spdx_id!r} in the license-data package")
    raw = (data_dir() / f"{key}.LICENSE").read_text(encoding="utf-8")
    body = raw.split("---", 2)[2] if raw.startswith("---") else raw
    body = body.strip("\n")
    if spdx_id == "MIT":
        return f"MIT License\n\nCopyright (c) {holder}\n\n{body}\n"
    return body + "\n"
