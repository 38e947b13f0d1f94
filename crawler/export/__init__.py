"""``crawler export``: an audit → ``snapshot.md``, ``catalog.json`` and its schema.

Entry points: ``write_export(ExportInput, out_dir)``, ``export_files(ExportInput)``,
``build_catalog``, ``render_snapshot``, ``validate_catalog``/``validate_file``, ``merge_catalog``/
``merge_file``. The inputs are plain records (``crawler.export.export_input``) the caller fills from
the store; nothing here reads the store or the network.
"""

from crawler.export.catalog import build_catalog
from crawler.export.export_input import (
    EvidenceLink,
    ExportInput,
    ExtraText,
    LicenseFacts,
    LicenseFileEntry,
    Pin,
    ProjectInput,
    TableMapping,
    TrackedRef,
    WatchedPage,
    WatchedTable,
    license_facts_from_analysis,
)
from crawler.export.integrations import ExportError
from crawler.export.merge import MergeError, merge_catalog, merge_file, render_merge_report
from crawler.export.snapshot_md import render_snapshot
from crawler.export.validate import Problem, validate_catalog, validate_file
from crawler.export.writer import dump_json, export_files, write_export, write_json

__all__ = [
    "EvidenceLink",
    "ExportError",
    "ExportInput",
    "ExtraText",
    "LicenseFacts",
    "LicenseFileEntry",
    "MergeError",
    "Pin",
    "Problem",
    "ProjectInput",
    "TableMapping",
    "TrackedRef",
    "WatchedPage",
    "WatchedTable",
    "build_catalog",
    "dump_json",
    "export_files",
    "license_facts_from_analysis",
    "merge_catalog",
    "merge_file",
    "render_merge_report",
    "render_snapshot",
    "validate_catalog",
    "validate_file",
    "write_export",
    "write_json",
]
