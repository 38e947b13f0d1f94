"""Report entries kept in a temporary file while an audit runs, so that the report of a large
catalog is never whole in memory (issue 23): each batch's rows, flags, changes and errors are
encoded once, as the batch is worded, and read back one entry at a time by whoever renders
them (report.json, report.md, the notifications). What stays in memory is each entry's place
in the file: 16 bytes, not the 1.5 KB an entry takes as objects.

The file is anonymous (``tempfile.TemporaryFile``: in ``TMPDIR``, unlinked at once), so nothing
is left behind however the process ends; it is closed with the last reference to the report.
"""

from __future__ import annotations

import os
import tempfile
import threading
import weakref
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar, overload

import msgspec

T = TypeVar("T")
READ_BLOCK = 1 << 16  # bytes of consecutive entries read from the spool at once


class Spool:
    """An append-only temporary file of encoded entries, read back by offset."""

    def __init__(self) -> None:
        # closed by the finalizer below, with the last report that reads it (not a block)
        self._file = tempfile.TemporaryFile(prefix="crawler-report-")  # noqa: SIM115
        weakref.finalize(self, self._file.close)
        self._end = 0
        self._unflushed = False  # written since the last flush: a read flushes only then
        self._lock = threading.Lock()  # one writer, any reader: reads see whole entries
        self._encoder = msgspec.json.Encoder()

    def put(self, entry: Any) -> tuple[int, int]:
        """Append one entry; its (offset, length) in the file."""
        data = self._encoder.encode(entry)
        with self._lock:
            offset = self._end
            self._file.write(data)
            self._end += len(data)
            self._unflushed = True
        return offset, len(data)

    def read(self, offset: int, length: int) -> bytes:
        if self._unflushed:  # a report read back entry by entry flushes once, not per entry
            with self._lock:
                self._file.flush()
                self._unflushed = False
        return os.pread(self._file.fileno(), length, offset)


class Places:
    """Where entries are in a spool, in the order they are to be read (16 bytes an entry)."""

    def __init__(self) -> None:
        self.offsets = array("q")
        self.lengths = array("q")

    def add(self, place: tuple[int, int]) -> None:
        self.offsets.append(place[0])
        self.lengths.append(place[1])

    def __len__(self) -> int:
        return len(self.offsets)


class Spooled(Sequence[T], Generic[T]):
    """A read-only sequence of entries of one type, decoded from a spool as they are read."""

    def __init__(self, spool: Spool, kind: type[T], places: Places) -> None:
        self._spool = spool
        self._kind = kind
        self._places = places
        self._decoder: msgspec.json.Decoder[T] = msgspec.json.Decoder(kind)

    def __len__(self) -> int:
        return len(self._places)

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> Spooled[T]: ...

    def __getitem__(self, index: int | slice) -> T | Spooled[T]:
        if isinstance(index, slice):
            part = Places()
            part.offsets = self._places.offsets[index]
            part.lengths = self._places.lengths[index]
            return Spooled(self._spool, self._kind, part)
        offset, length = self._places.offsets[index], self._places.lengths[index]
        return self._decoder.decode(self._spool.read(offset, length))

    def __iter__(self) -> Iterator[T]:
        """The entries in order; entries that follow one another in the file (a batch's, as
        it was worded) read together, up to ``READ_BLOCK`` bytes at a time, not one read each."""
        decode, read = self._decoder.decode, self._spool.read
        offsets, lengths = self._places.offsets, self._places.lengths
        i, count = 0, len(offsets)
        while i < count:
            start, end, j = offsets[i], offsets[i] + lengths[i], i + 1
            while j < count and offsets[j] == end and end + lengths[j] - start <= READ_BLOCK:
                end += lengths[j]
                j += 1
            block = memoryview(read(start, end - start))
            at = 0
            for length in lengths[i:j]:
                yield decode(block[at : at + length])
                at += length
            i = j

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # equal to lists and tuples: not hashable

    def __repr__(self) -> str:
        return f"Spooled[{self._kind.__name__}]({len(self)} entries)"


class InOrder(Generic[T]):
    """Entries spooled as they come (batch by batch, in fetch order), read back sorted by a
    position (sources.yaml order), entries of one position in the order they came."""

    def __init__(self, spool: Spool, kind: type[T]) -> None:
        self._spool, self._kind = spool, kind
        self._positions = array("q")
        self._places = Places()

    def add(self, position: int, entry: T) -> None:
        self._positions.append(position)
        self._places.add(self._spool.put(entry))

    def __len__(self) -> int:
        return len(self._positions)

    def places(self) -> Places:
        at = sorted(range(len(self._positions)), key=self._positions.__getitem__)
        out = Places()
        out.offsets = array("q", (self._places.offsets[i] for i in at))
        out.lengths = array("q", (self._places.lengths[i] for i in at))
        return out


def joined(spool: Spool, kind: type[T], *parts: Places, after: Iterable[T] = ()) -> Spooled[T]:
    """One sequence of several parts' entries, then ``after``'s (spooled too)."""
    places = Places()
    for part in parts:
        places.offsets.extend(part.offsets)
        places.lengths.extend(part.lengths)
    for entry in after:
        places.add(spool.put(entry))
    return Spooled(spool, kind, places)


def plain(value: Any) -> Any:
    """msgspec's ``enc_hook`` for a report holding spooled entries: they encode as a list."""
    if isinstance(value, Spooled):
        return list(value)
    raise NotImplementedError(f"cannot encode {type(value).__name__}")
