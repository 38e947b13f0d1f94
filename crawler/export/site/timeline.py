"""A project's release history as a small inline SVG timeline: positions computed here. Pure.

The SVG is drawn by the page template from these numbers; no charting library, no service.
Each kind of point is one ``<path>`` of zero-length segments drawn with round caps (a dot per
version), not an element per version: a page of 1,000 projects stays quick to parse. The
versions and dates are listed as text beside it (readable by anyone, no hover needed). Long
histories keep their newest ``MAX_POINTS`` points.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from crawler.export.site.site_input import HistoryPoint
from crawler.report import words
from crawler.untrusted import one_line

WIDTH = 360
HEIGHT = 58
PAD = 14  # room for a marker at either end
AXIS_Y = 24
MAX_POINTS = 40
MAX_NAME = 80
SHAPES = ("commit", "tag", "release", "prerelease")


@dataclass(frozen=True)
class TimelinePoint:
    x: str  # formatted with one decimal, so the same history gives the same bytes
    y: str
    shape: str  # CSS class: release, prerelease, tag, commit
    name: str
    date: date
    kind_label: str  # "release", "pre-release", "release candidate", "tag", "commit"


@dataclass(frozen=True)
class TimelinePath:
    shape: str  # CSS class, as TimelinePoint.shape
    d: str  # "M14.0 24h0M180.0 24h0": one dot per point


@dataclass(frozen=True)
class Timeline:
    points: tuple[TimelinePoint, ...]
    first: date
    last: date
    total: int  # points in the history; len(points) may be fewer
    width: int = WIDTH
    height: int = HEIGHT
    axis_y: int = AXIS_Y
    pad: int = PAD

    @property
    def paths(self) -> tuple[TimelinePath, ...]:
        """One path per shape, in a fixed order (pre-releases drawn over releases)."""
        paths = []
        for shape in SHAPES:
            dots = "".join(f"M{p.x} {p.y}h0" for p in self.points if p.shape == shape)
            if dots:
                paths.append(TimelinePath(shape, dots))
        return tuple(paths)

    @property
    def axis_end(self) -> int:
        return self.width - self.pad

    @property
    def label_y(self) -> int:
        return self.height - 6

    @property
    def summary(self) -> str:
        shown = len(self.points)
        what = f"{shown} versions" if shown != 1 else "1 version"
        if shown < self.total:
            what = f"the newest {shown} of {self.total} versions"
        span = self.first.isoformat()
        if self.last != self.first:
            span += f" to {self.last.isoformat()}"
        return f"{what}, {span}"


def _kind(point: HistoryPoint) -> tuple[str, str]:
    """(shape, words): a release candidate reads as the card and snapshot.md say it."""
    if point.kind == "release":
        if not point.prerelease:
            return ("release", "release")
        return ("prerelease", words.version_mark(point.name, True).strip(" ()"))
    return (point.kind, point.kind)


def build_timeline(history: Sequence[HistoryPoint]) -> Timeline | None:
    """Positions on a linear date axis from the oldest to the newest point shown (all in the
    middle when they share one day); None for an empty history."""
    if not history:
        return None
    ordered = sorted(history, key=lambda p: p.date)  # stable: same-day points keep their order
    shown = ordered[-MAX_POINTS:]
    first, last = shown[0].date, shown[-1].date
    span = (last - first).days
    usable = WIDTH - 2 * PAD
    points = []
    for point in shown:
        x = PAD + usable * (point.date - first).days / span if span else WIDTH / 2
        shape, label = _kind(point)
        points.append(
            TimelinePoint(
                x=f"{x:.1f}",
                y=str(AXIS_Y),
                shape=shape,
                name=one_line(point.name, MAX_NAME),
                date=point.date,
                kind_label=label,
            )
        )
    return Timeline(points=tuple(points), first=first, last=last, total=len(ordered))
