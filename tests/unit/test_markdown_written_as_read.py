"""report.md's 'Links and upstream health' section is written as its entries are read, never
after all of them are held (issue 32, defect 7: the memory per project of the scale bench). A
first audit can find most of a catalog dormant: its report's changes wait on disk (a spool),
and a section that listed them all before writing its first line was the peak of the audit's
end. Shown with a report whose changes count how far they have been read."""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from typing import overload

from crawler.report.markdown import write_markdown
from crawler.report.model import AuditPart, ChangeEntry, Report, Summary

DORMANT = 50


class Counted(Sequence[ChangeEntry]):
    """The entries, and how many of them the iteration under way has handed out."""

    def __init__(self, entries: list[ChangeEntry]) -> None:
        self.entries = entries
        self.read = 0

    def __len__(self) -> int:
        return len(self.entries)

    @overload
    def __getitem__(self, index: int) -> ChangeEntry: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[ChangeEntry]: ...

    def __getitem__(self, index: int | slice) -> ChangeEntry | Sequence[ChangeEntry]:
        return self.entries[index]

    def __iter__(self) -> Iterator[ChangeEntry]:
        for n, entry in enumerate(self.entries, 1):
            self.read = n
            yield entry


class Watched(io.StringIO):
    """Where the changes' reading was when each line was written."""

    def __init__(self, changes: Counted) -> None:
        super().__init__()
        self.changes = changes
        self.read_at: dict[str, int] = {}

    def write(self, text: str) -> int:
        self.read_at.setdefault(text, self.changes.read)
        return super().write(text)


def _dormant(n: int) -> ChangeEntry:
    return ChangeEntry(
        f"p{n}", "upstream_dormant", "links", f"no commit, release or tag since 2024-0{n % 9 + 1}",
        None, None, f"https://github.com/org/p{n}", {},
    )  # fmt: skip


def test_the_dormant_upstreams_are_written_as_they_are_read() -> None:
    changes = Counted([_dormant(n) for n in range(DORMANT)])
    report = Report(
        schema_version=2, crawler_version="0", audit=AuditPart(1, "t", "t", "complete", None),
        summary=Summary(DORMANT, DORMANT, 0, 0, 0, 0, 0, 0, DORMANT, 0,
                        {"upstream_dormant": DORMANT}, 0),
        changes=changes, flags=(), errors=(), projects=(), requests={},
    )  # fmt: skip
    out = Watched(changes)
    write_markdown(report, out)
    lines = {line.split(":")[0]: read for line, read in out.read_at.items()}
    first, last = "- **p0** upstream dormant", f"- **p{DORMANT - 1}** upstream dormant"
    assert first in lines and last in lines, sorted(lines)[:5]
    # a line is written when the next one is made: p0's once p1 is read, not once all are
    assert lines[first] <= 2
    assert lines[last] == DORMANT
