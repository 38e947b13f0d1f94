"""Progress of an audit, per project: a rich display on a terminal, log lines elsewhere.

``run_audit`` sees only ``AuditProgress``: ``start(total)`` once, then ``project_done(...)``
once per project. The command line owns the display: it picks one with ``make_progress``,
``close()``s it whatever happens, and ``finish(summary)`` prints the summary line.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Protocol

from crawler.logs import Output, stderr_console
from crawler.untrusted import one_line

if TYPE_CHECKING:  # rich is loaded for a terminal display only, not under cron
    from rich.console import Console
    from rich.progress import TaskID

log = logging.getLogger("crawler.progress")


class AuditProgress(Protocol):
    def start(self, total: int) -> None:
        """The audit begins; ``total`` projects will be reported."""

    def project_done(self, name: str, status: str, requests: int, budget_left: int | None) -> None:
        """One project is finished: its status (ok, error, deferred, untracked), the API
        requests spent on it (or since the previous call), the rate budget left (None: unknown)."""


class NoProgress:
    """For callers that show nothing (library use, tests)."""

    def start(self, total: int) -> None:
        pass

    def project_done(self, name: str, status: str, requests: int, budget_left: int | None) -> None:
        pass


def _budget(budget_left: int | None) -> str:
    return "unknown" if budget_left is None else str(budget_left)


class LogProgress:
    """Plain log lines, one per project (also the JSON log format): for cron and containers."""

    def __init__(self, output: Output) -> None:
        self.output = output
        self.total = 0
        self.done = 0
        self.requests = 0

    def start(self, total: int) -> None:
        self.total = total
        log.info("auditing %d projects", total, extra={"event": "audit_started", "total": total})

    def project_done(self, name: str, status: str, requests: int, budget_left: int | None) -> None:
        self.done += 1
        self.requests += requests
        name = one_line(name)  # from sources.yaml: no escape sequence reaches a terminal
        log.info(
            "[%d/%d] %s: %s, %d %s, rate budget left %s",
            self.done,
            self.total,
            name,
            status,
            requests,
            "request" if requests == 1 else "requests",
            _budget(budget_left),
            extra={
                "event": "project_done",
                "project": name,
                "status": status,
                "requests": requests,
                "budget_left": budget_left,
            },
        )

    def close(self) -> None:
        pass

    def finish(self, summary: str, **figures: Any) -> None:
        """The summary line; its figures are fields of the JSON log's event."""
        self.output.result(summary, **({"event": "audit_finished"} | figures))


class RichProgress:
    """A progress bar with the requests spent and the budget left, and a line per project."""

    def __init__(self, output: Output, console: Console | None = None) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.output = output
        self.console = console or stderr_console()
        self.progress = Progress(
            TextColumn("[bold]audit"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[requests]} requests, rate budget left {task.fields[budget]}"),
            console=self.console,
            transient=False,
        )
        self.task: TaskID | None = None
        self.requests = 0

    def start(self, total: int) -> None:
        self.progress.start()
        self.task = self.progress.add_task("audit", total=total, requests=0, budget="unknown")

    def project_done(self, name: str, status: str, requests: int, budget_left: int | None) -> None:
        if self.task is None:
            self.start(0)
        assert self.task is not None
        from rich.markup import escape

        self.requests += requests
        name = one_line(name)  # from sources.yaml: no escape sequence reaches a terminal
        mark = {"ok": "[green]✓[/]", "error": "[red]✗[/]"}.get(status, "[yellow]–[/]")
        self.progress.console.print(
            f"{mark} {escape(name)}: {escape(status)}, {requests} requests",
            highlight=False,
        )
        self.progress.update(
            self.task, advance=1, requests=self.requests, budget=_budget(budget_left)
        )

    def close(self) -> None:
        self.progress.stop()

    def finish(self, summary: str, **figures: Any) -> None:
        self.close()
        self.output.result(summary)


def make_progress(output: Output) -> LogProgress | RichProgress:
    """Rich on a terminal (text format, not --quiet), log lines otherwise."""
    return RichProgress(output) if output.terminal else LogProgress(output)
