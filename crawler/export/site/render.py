"""``SiteInput`` → the Explorer's files: ``index.html`` (CSS and JavaScript inline) and the data.

The page needs no server and no network: it opens from ``file://``, GitHub Pages or any static
host. Its Content-Security-Policy allows exactly the one inline script and the one inline style
by their SHA-256 hashes (a hash matches whatever the page's origin, ``file://`` included), and
nothing else: no other script, no inline event handler, no remote resource. The HTML is made
by Jinja2 with autoescaping on; the full matrix is in the HTML and the script only filters it.
"""

from __future__ import annotations

import base64
import hashlib
from datetime import date
from functools import lru_cache
from importlib import resources
from pathlib import Path

import jinja2

from crawler.export.file_set import OutputFile, write_set
from crawler.export.site.model import build_page
from crawler.export.site.site_input import SiteInput
from crawler.export.writer import dump_json
from crawler.report import words

INDEX_FILE = "index.html"
SINCE_ATTRIBUTE = "data-changes-since-audit"  # on <body>: what the highlight counts from
PAGE_ROWS = 100  # matrix rows shown at once (all of them without JavaScript)
DATA_FILE = "catalog.json"
_STATIC = resources.files("crawler.export.site").joinpath("static")


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("crawler.export.site", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    environment.filters["plural"] = words.plural  # {{ n|plural("project") }}: "1 project"
    environment.filters["layer_title"] = words.layer_title
    environment.globals["item_counts"] = words.item_counts
    environment.globals["changes_since_title"] = words.changes_since_title
    environment.globals["no_change_since"] = words.no_change_since
    return environment


def _static(name: str) -> str:
    return _STATIC.joinpath(name).read_text("utf-8")


def _generated_rules(columns: int) -> str:
    """One rule per platform column, so the script hides a column with one class (``hN``) on
    the table instead of touching each of its cells (column 1 is the project); and the first
    page of rows, shown while a large page loads, before the script manages the rows."""
    rules = [f".matrix.h{n} tr>:nth-child({n}){{display:none}}" for n in range(2, columns + 2)]
    rules.append(f".js .matrix:not(.managed)>tbody>tr:nth-child(n+{PAGE_ROWS + 1}){{display:none}}")
    return "\n".join(rules) + "\n"


def _sha256(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


def content_security_policy(script: str, style: str) -> str:
    return "; ".join(
        [
            "default-src 'none'",
            f"script-src {_sha256(script)}",
            f"style-src {_sha256(style)}",
            "img-src data:",
            "base-uri 'none'",
            "form-action 'none'",
            "object-src 'none'",
        ]
    )


def render_site(site: SiteInput, *, today: date | None = None) -> dict[str, bytes | str]:
    """Relative path → content. ``today`` (default: the local date) decides only whether the
    stale-data banner is already written into the HTML; the page rechecks when viewed."""
    today = today or date.today()
    page = build_page(site.catalog, site.history, site.changes, site.errors)
    script = _static("explorer.js")
    style = _static("explorer.css") + _generated_rules(len(page.platforms))
    for source, tag in ((script, "</script"), (style, "</style")):
        if tag in source.lower():  # pragma: no cover - guards our own static files
            raise ValueError(f"static file contains {tag!r}")
    age = (today - site.checked_on).days
    html = (
        _environment()
        .get_template("index.html.j2")
        .render(
            page=page,
            script=script,
            style=style,
            csp=content_security_policy(script, style),
            checked_on=site.checked_on.isoformat(),
            stale_after_days=site.stale_after_days,
            age_days=age,
            stale_at_build=age > site.stale_after_days,
            data_file=DATA_FILE,
            page_rows=PAGE_ROWS,
            since=site.since,
            changed_flag=words.changed_since(site.since.day if site.since else None),
        )
    )
    return {INDEX_FILE: html, DATA_FILE: dump_json(dict(site.catalog))}


def site_output(site: SiteInput, out_dir: Path, *, today: date | None = None) -> list[OutputFile]:
    """The site's files, as files of ``out_dir`` to write (crawler.export.file_set)."""
    files = []
    for name, content in render_site(site, today=today).items():
        data = content if isinstance(content, bytes) else content.encode("utf-8")
        files.append(OutputFile(out_dir / name, data, out_dir))
    return files


def write_site(
    site: SiteInput, out_dir: Path, *, today: date | None = None, follow_links_outside: bool = False
) -> list[Path]:
    """Write the site into ``out_dir`` (created if needed), as one set; the paths written."""
    files = site_output(site, out_dir, today=today)
    return write_set(files, follow_links_outside=follow_links_outside)
