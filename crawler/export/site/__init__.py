"""The Compatibility Explorer: a static, self-contained page of the catalog.

Entry points: ``render_site(SiteInput) -> {relative path: content}`` and
``write_site(SiteInput, out_dir) -> [paths]``. The caller fills ``SiteInput`` (the catalog from
``build_catalog``, ``HistoryPoint``s per project name, the ``SiteChange``s since the previous
export) from the store; nothing here reads the store or the network.
"""

from crawler.export.site.render import DATA_FILE, INDEX_FILE, render_site, write_site
from crawler.export.site.site_input import ChangesSince, HistoryPoint, SiteChange, SiteInput

__all__ = [
    "DATA_FILE",
    "INDEX_FILE",
    "ChangesSince",
    "HistoryPoint",
    "SiteChange",
    "SiteInput",
    "render_site",
    "write_site",
]
