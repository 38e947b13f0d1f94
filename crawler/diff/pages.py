"""Two snapshots of one watched page → the changes a reviewer must see. Pure: no I/O.

Tables are compared row by row, keyed by their identity columns, and cell by cell, by column
name: re-sorted rows, re-ordered columns and re-wrapped text are never changes (the extractor
already normalised whitespace and sorted rows). A list read as a table (its rows are items,
keyed by their text) says which item was reworded: an item removed and one added under the same
label and parent, whose texts are alike, are one item reworded (``items_reworded``). A table,
pin or text block only present on one side (newly watched, or no longer watched) is a
configuration change, not a finding.
"""

from __future__ import annotations

import difflib
from collections import defaultdict
from typing import Any

from crawler.model import Change, ChangeKind, ExtractedTable, PageSnapshot

MAX_WORD_HUNKS = 20
WORD_CONTEXT = 5
MAX_HUNK_CHARS = 200

_PARTS = ("columns_added", "columns_removed", "rows_added", "rows_removed", "cells_changed",
          "items_reworded")  # fmt: skip
REWORDED = 0.6  # how alike (difflib's ratio) a removed and an added item are to be one reworded
RowKey = tuple[tuple[str, ...], int]  # (identity values, occurrence among rows sharing them)


def _keyed(table: ExtractedTable, key_columns: tuple[str, ...]) -> dict[RowKey, dict[str, str]]:
    """Rows as {column: cell}, keyed by identity values (+ an occurrence index for duplicates)."""
    indexes = [table.columns.index(c) for c in key_columns]
    groups: dict[tuple[str, ...], list[tuple[str, ...]]] = defaultdict(list)
    for row in table.rows:
        groups[tuple(row[i] for i in indexes) if indexes else row].append(row)
    keyed: dict[RowKey, dict[str, str]] = {}
    for ident, rows in groups.items():
        for n, row in enumerate(sorted(rows)):
            keyed[(ident, n)] = dict(zip(table.columns, row, strict=True))
    return keyed


def _key_dict(key_columns: tuple[str, ...], key: RowKey) -> dict[str, str]:
    return dict(zip(key_columns, key[0], strict=False))


def diff_table(before: ExtractedTable, after: ExtractedTable) -> dict[str, Any] | None:
    """The ``table_changed`` details for one table, or None when nothing changed."""
    # identity columns missing before (the key was re-configured): compare whole rows
    keys = after.key_columns if set(after.key_columns) <= set(before.columns) else ()
    old, new = _keyed(before, keys), _keyed(after, keys)
    common_columns = [c for c in after.columns if c in before.columns]
    cells: list[dict[str, Any]] = []
    for key in sorted(old.keys() & new.keys()):
        for column in common_columns:
            if old[key][column] != new[key][column]:
                cells.append(
                    {
                        "key": _key_dict(keys, key),
                        "column": column,
                        "before": old[key][column],
                        "after": new[key][column],
                    }
                )
    details: dict[str, Any] = {
        "table": after.name,
        "key_columns": list(keys),
        "columns_added": [c for c in after.columns if c not in before.columns],
        "columns_removed": [c for c in before.columns if c not in after.columns],
        "rows_added": [new[k] for k in sorted(new.keys() - old.keys())],
        "rows_removed": [old[k] for k in sorted(old.keys() - new.keys())],
        "cells_changed": cells,
    }
    if after.holds_items:
        details["items"] = True
        details["items_reworded"] = _reworded(details)
    if not any(details.get(k) for k in _PARTS):
        return None
    return details


def _reworded(details: dict[str, Any]) -> list[dict[str, str]]:
    """Pairs of a removed and an added item, under one label and parent, alike enough to be
    one item reworded; they leave ``rows_removed`` and ``rows_added``."""
    pairs: list[tuple[float, int, int]] = []
    for i, old in enumerate(details["rows_removed"]):
        for j, new in enumerate(details["rows_added"]):
            if (old["Label"], old["Parent"]) == (new["Label"], new["Parent"]):
                ratio = difflib.SequenceMatcher(a=old["Item"], b=new["Item"]).ratio()
                if ratio >= REWORDED:
                    pairs.append((-ratio, i, j))
    taken_old: set[int] = set()
    taken_new: set[int] = set()
    reworded = []
    for _, i, j in sorted(pairs):
        if i in taken_old or j in taken_new:
            continue
        taken_old.add(i)
        taken_new.add(j)
        old, new = details["rows_removed"][i], details["rows_added"][j]
        reworded.append({"before": old["Item"], "after": new["Item"], "label": new["Label"]})
    details["rows_removed"] = [
        r for i, r in enumerate(details["rows_removed"]) if i not in taken_old
    ]
    details["rows_added"] = [r for j, r in enumerate(details["rows_added"]) if j not in taken_new]
    return sorted(reworded, key=lambda r: (r["before"], r["after"]))


def _clip(words: list[str]) -> str:
    text = " ".join(words)
    return text if len(text) <= MAX_HUNK_CHARS else text[: MAX_HUNK_CHARS - 1] + "…"


def word_diff(before: str, after: str) -> tuple[str, list[dict[str, str]]]:
    """A compact word diff: ``… context [-old-] {+new+} context …`` and the hunks.

    At most ``MAX_WORD_HUNKS`` hunks, each side clipped to ``MAX_HUNK_CHARS`` characters.
    """
    old, new = before.split(), after.split()
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    hunks: list[dict[str, str]] = []
    pieces: list[str] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        if len(hunks) == MAX_WORD_HUNKS:
            pieces.append("…")
            break
        hunk = {"op": op, "before": _clip(old[i1:i2]), "after": _clip(new[j1:j2])}
        hunks.append(hunk)
        lead = old[max(0, i1 - WORD_CONTEXT) : i1]
        tail = old[i2 : i2 + WORD_CONTEXT]
        change = " ".join(
            p
            for p in (
                f"[-{hunk['before']}-]" if hunk["before"] else "",
                f"{{+{hunk['after']}+}}" if hunk["after"] else "",
            )
            if p
        )
        pieces.append(" ".join(["…", *lead, change, *tail, "…"]))
    return " ".join(pieces), hunks


def diff_page(project: str, before: PageSnapshot, after: PageSnapshot) -> list[Change]:
    """table_changed per changed table, pin_changed per moved pin, page_changed for the text."""
    changes: list[Change] = []
    url = after.url
    old_tables = {t.name: t for t in before.tables}
    for table in after.tables:
        previous = old_tables.get(table.name)
        if previous is None:
            continue
        details = diff_table(previous, table)
        if details is not None:
            changes.append(
                Change(
                    project=project,
                    kind=ChangeKind.TABLE_CHANGED,
                    evidence_url=url,
                    details={"page": after.name, **details},
                )
            )
    old_pins = dict(before.pins)
    for name, value in after.pins:
        if name in old_pins and old_pins[name] != value:
            changes.append(
                Change(
                    project=project,
                    kind=ChangeKind.PIN_CHANGED,
                    before=old_pins[name],
                    after=value,
                    evidence_url=url,
                    details={"page": after.name, "pin": name},
                )
            )
    if before.text is not None and after.text is not None and before.text != after.text:
        compact, hunks = word_diff(before.text, after.text)
        changes.append(
            Change(
                project=project,
                kind=ChangeKind.PAGE_CHANGED,
                before=before.text,
                after=after.text,
                evidence_url=url,
                details={"page": after.name, "diff": compact, "hunks": hunks},
            )
        )
    return changes
