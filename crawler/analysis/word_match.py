"""The matching blocks of two word sequences, exactly as difflib finds them, found faster.

``difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()`` takes the
longest common run of words, then does the same on each side of it. It finds a longest run by
visiting every pair of equal words: a license file against its template, "the" and "of" a
hundred times in each, is some 100,000 pairs (4 ms). When a long common run is known (on the
diagonal where the two sequences start or end together: a file that is the template with a
copyright line above it), every run at least that long covers one of the positions taken at
that stride, and extending the equal pairs at those positions finds them all; elsewhere the
pairs are visited as difflib visits them. Runs of equal length are chosen as difflib chooses
(the one starting earliest in ``a``, then in ``b``), so the blocks are difflib's.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from operator import eq

_MIN_STRIDE = 4  # a shorter known run: the pairs are all visited (the stride saves little)


def matching_blocks(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int, int]]:
    """(i, j, k) with ``a[i:i + k] == b[j:j + k]``, increasing in i and j, adjacent blocks
    joined: difflib's matching blocks of ``a`` and ``b`` (no junk, no autojunk) without its
    closing empty block."""
    pair = _Pair(a, b)
    queue = [(0, len(a), 0, len(b))]
    found: list[tuple[int, int, int]] = []
    while queue:
        alo, ahi, blo, bhi = queue.pop()
        i, j, k = pair.longest(alo, ahi, blo, bhi)
        if k:
            found.append((i, j, k))
            if alo < i and blo < j:
                queue.append((alo, i, blo, j))
            if i + k < ahi and j + k < bhi:
                queue.append((i + k, ahi, j + k, bhi))
    found.sort()
    out: list[tuple[int, int, int]] = []
    for i, j, k in found:
        if out and out[-1][0] + out[-1][2] == i and out[-1][1] + out[-1][2] == j:
            out[-1] = (out[-1][0], out[-1][1], out[-1][2] + k)
        else:
            out.append((i, j, k))
    return out


class _Pair:
    """Two word sequences and where each word stands in ``b`` (in order)."""

    def __init__(self, a: Sequence[str], b: Sequence[str]) -> None:
        self.a, self.b = a, b
        self.b2j: dict[str, list[int]] = {}
        for j, w in enumerate(b):
            self.b2j.setdefault(w, []).append(j)

    def longest(self, alo: int, ahi: int, blo: int, bhi: int) -> tuple[int, int, int]:
        """The longest run of ``a[alo:ahi]`` in ``b[blo:bhi]``, earliest in ``a`` then in
        ``b`` among equally long ones; (alo, blo, 0) when no word is shared."""
        known = max(self._run_on(alo, ahi, blo, bhi, blo - alo),
                    self._run_on(alo, ahi, blo, bhi, bhi - ahi))  # fmt: skip
        if known >= _MIN_STRIDE:
            return self._sampled(alo, ahi, blo, bhi, known)
        return self._scanned(alo, ahi, blo, bhi)

    def _run_on(self, alo: int, ahi: int, blo: int, bhi: int, d: int) -> int:
        """The longest run of equal words on diagonal ``d`` (``a[i] == b[i + d]``)."""
        lo, hi = max(alo, blo - d), min(ahi, bhi - d)
        if hi <= lo:
            return 0
        same = bytes(map(eq, self.a[lo:hi], self.b[lo + d : hi + d]))  # C speed: 1 if equal
        return max(map(len, same.split(b"\x00")))

    def _sampled(self, alo: int, ahi: int, blo: int, bhi: int, known: int) -> tuple[int, int, int]:
        """``longest`` when a run of ``known`` words exists: a run at least that long covers
        one of the positions ``alo``, ``alo + known``, ...; the run through each equal pair
        there is extended both ways (once per run)."""
        a, b = self.a, self.b
        besti, bestj, bestk = alo, blo, 0
        reach: dict[int, int] = {}  # diagonal -> where the last run extended on it ends in a
        for p in range(alo, ahi, known):
            js = self.b2j.get(a[p], [])
            for x in range(bisect_left(js, blo), len(js)):
                j = js[x]
                if j >= bhi:
                    break
                if reach.get(j - p, -1) > p:
                    continue  # inside a run found from an earlier position
                i0, j0 = p, j
                while i0 > alo and j0 > blo and a[i0 - 1] == b[j0 - 1]:
                    i0, j0 = i0 - 1, j0 - 1
                i1, j1 = p + 1, j + 1
                while i1 < ahi and j1 < bhi and a[i1] == b[j1]:
                    i1, j1 = i1 + 1, j1 + 1
                reach[j - p] = i1
                k = i1 - i0
                if k > bestk or (k == bestk and (i0, j0) < (besti, bestj)):
                    besti, bestj, bestk = i0, j0, k
        return besti, bestj, bestk

    def _scanned(self, alo: int, ahi: int, blo: int, bhi: int) -> tuple[int, int, int]:
        """``longest`` by visiting every equal pair, as difflib's ``find_longest_match``
        does (``j2len[j]``: the run ending at the previous word of ``a`` and ``b[j]``)."""
        besti, bestj, bestk = alo, blo, 0
        j2len: dict[int, int] = {}
        for i in range(alo, ahi):
            get = j2len.get
            new: dict[int, int] = {}
            js = self.b2j.get(self.a[i], [])
            for x in range(bisect_left(js, blo), len(js)):
                j = js[x]
                if j >= bhi:
                    break
                k = new[j] = get(j - 1, 0) + 1
                if k > bestk:
                    besti, bestj, bestk = i - k + 1, j - k + 1, k
            j2len = new
        return besti, bestj, bestk
