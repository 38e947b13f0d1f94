"""Template placeholders in page cells. Pure, and light enough for the export to import.

Docs built with MkDocs macros or Jinja hold ``{{main_vllm_commit}}`` in their source where the
built site shows a value: the page we read has no value there, so a cell holding one says so
(``{{main_vllm_commit}} (template placeholder)``) and the export never takes it for a version.
"""

from __future__ import annotations

import re

PLACEHOLDER_NOTE = "(template placeholder)"
_PLACEHOLDER_RE = re.compile(r"\{\{\s*[\w.\-]{1,80}\s*\}\}|\{%.{0,80}?%\}")


def mark_placeholder(text: str) -> str:
    """``text``, with the note appended when it holds a template placeholder."""
    return f"{text} {PLACEHOLDER_NOTE}" if _PLACEHOLDER_RE.search(text) else text


def is_placeholder(cell: str) -> bool:
    """The (normalised) cell holds a template placeholder, not a value."""
    return cell.endswith(PLACEHOLDER_NOTE) and _PLACEHOLDER_RE.search(cell) is not None
