"""Report entries spooled to a temporary file while an audit runs (issue 23: the report of a
large catalog is never whole in memory): read back in sources.yaml order, equal to the entries
written, and report.json written from them byte for byte as from entries in memory."""

from __future__ import annotations

import io

import msgspec

from crawler.report.model import AuditPart, ErrorEntry, FlagEntry, Report, Summary
from crawler.report.spool import InOrder, Places, Spool, Spooled, joined

HOSTILE = 'x\n  "flags": []\n]\u2028"'


def _flag(project: str, detail: str = "d") -> FlagEntry:
    return FlagEntry(project, "stale", detail, True, None, {"days": 3})


def test_entries_come_back_in_position_order_then_arrival_order() -> None:
    spool = Spool()
    flags = InOrder(spool, FlagEntry)
    # batches fetched least recently checked first: positions arrive out of order
    for position, project, detail in [(2, "c", "c1"), (0, "a", "a1"), (2, "c", "c2"),
                                      (1, "b", HOSTILE), (0, "a", "a2")]:  # fmt: skip
        flags.add(position, _flag(project, detail))
    read = joined(spool, FlagEntry, flags.places(), after=[_flag("stale", "last")])
    assert [(f.project, f.detail) for f in read] == [
        ("a", "a1"), ("a", "a2"), ("b", HOSTILE), ("c", "c1"), ("c", "c2"), ("stale", "last"),
    ]  # fmt: skip
    assert len(read) == 6 and read[2] == _flag("b", HOSTILE) and read[-1].detail == "last"
    assert isinstance(read[1:3], Spooled) and list(read[1:3]) == [_flag("a", "a2"),
                                                                 _flag("b", HOSTILE)]  # fmt: skip
    assert read == list(read) and read == tuple(read) and read != list(read)[:-1]


def test_a_spooled_report_writes_the_bytes_of_the_same_report_in_memory() -> None:
    spool = Spool()
    flags = [_flag(f"p{i}", HOSTILE if i % 3 == 0 else f"d{i}") for i in range(7)]
    errors = [ErrorEntry(f"p{i}", "github", "https://x", HOSTILE) for i in range(3)]
    in_memory = Report(
        schema_version=2, crawler_version="0", audit=AuditPart(1, "t", "t", "complete", None),
        summary=Summary(7, 7, 0, 3, 3, 0, 0, 7, 0, 7, {}, 0), changes=(), flags=tuple(flags),
        errors=tuple(errors), projects=(), requests={},
    )  # fmt: skip
    on_disk = msgspec.structs.replace(
        in_memory,
        flags=joined(spool, FlagEntry, Places(), after=flags),
        errors=joined(spool, ErrorEntry, Places(), after=errors),
    )
    for chunk in (1, 2, 200):
        out = io.BytesIO()
        on_disk.write_json(out, chunk)
        assert out.getvalue() == in_memory.to_json() == on_disk.to_json()
    assert on_disk.as_json() == in_memory.as_json()
    assert Report.from_json(on_disk.to_json()).flags == flags


def test_entries_read_a_block_at_a_time_come_back_whole_whatever_their_size() -> None:
    """Consecutive entries are read from the file together (up to READ_BLOCK bytes): an entry
    longer than a block, runs that cross a block's end, entries out of file order, and entries
    written after a first reading all come back whole and in order."""
    from crawler.report.spool import READ_BLOCK

    spool = Spool()
    flags = InOrder(spool, FlagEntry)
    written = [_flag(f"p{i}", "x" * (READ_BLOCK + 7) if i == 5 else f"{HOSTILE}{i}" * (i * 97))
               for i in range(40)]  # fmt: skip
    for position, flag in reversed(list(enumerate(written))):  # file order: the last first
        flags.add(position % 20, flag)
    read = joined(spool, FlagEntry, flags.places())
    # by position (the project's number modulo 20), those of one position in file order
    expected = [f for k in range(20) for f in reversed(written) if int(f.project[1:]) % 20 == k]
    assert list(read) == expected
    assert [len(f.detail) for f in read if f.project == "p5"] == [READ_BLOCK + 7]
    more = joined(spool, FlagEntry, flags.places(), after=written)  # appended after a reading
    assert list(more) == [*expected, *written] and list(read) == expected
