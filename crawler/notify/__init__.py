"""Deliver a finished audit's report where reviewers read: chat, e-mail and webhooks through
Apprise, and one GitHub issue per catalog.

A failed delivery is logged, returned and recorded beside the report (``delivery.json``); it
never fails the audit and never touches the report files.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec
from pydantic import ValidationError

from crawler.config import GitHubIssueSettings, NotifySettings
from crawler.logs import redact
from crawler.notify.channels import ChannelResult, send_apprise
from crawler.notify.github_issue import publish_issue
from crawler.notify.message import comment_body, headline, issue_body, should_notify, summary_body
from crawler.report.files import write_file
from crawler.report.model import Report

__all__ = ["ChannelResult", "Delivery", "deliver", "notify_urls", "report_link"]


log = logging.getLogger(__name__)
DELIVERY_FILE = "delivery.json"


@dataclass(frozen=True)
class Delivery:
    audit_id: int
    wanted: bool
    reason: str
    results: tuple[ChannelResult, ...]
    late: bool = False  # delivered by a later run (this one was killed before sending)

    @property
    def failed(self) -> list[ChannelResult]:
        return [r for r in self.results if not r.ok]

    def record(self) -> DeliveryRecord:
        """What delivery.json holds."""
        return DeliveryRecord(
            self.audit_id, self.wanted and bool(self.results), self.reason, self.results, self.late
        )


class DeliveryRecord(msgspec.Struct, frozen=True, omit_defaults=True):
    """delivery.json: whether the audit's summary was sent, why, and on which channels."""

    audit: int
    sent: bool
    reason: str
    channels: tuple[ChannelResult, ...]
    late: bool = False  # sent by a later run: this audit's own run stopped before sending


def notify_urls(settings: NotifySettings, env: Mapping[str, str]) -> list[str]:
    """sources.yaml's URLs, then CRAWLER_NOTIFY's (space- or comma-separated, for secrets).

    The catalog issue's repository may likewise come from CRAWLER_ISSUE_REPO."""
    extra = [u for u in re.split(r"[\s,]+", env.get("CRAWLER_NOTIFY", "")) if u]
    return [*settings.urls, *extra]


def report_link(
    settings: NotifySettings, env: Mapping[str, str], audit_id: int, report_dir: Path
) -> str | None:
    """CRAWLER_REPORT_URL or notify.report_url, with {audit_id} and {report_dir} filled in."""
    template = env.get("CRAWLER_REPORT_URL") or settings.report_url
    if not template:
        return None
    try:
        return template.format_map({"audit_id": audit_id, "report_dir": report_dir.name})
    except (KeyError, ValueError, IndexError):
        log.error("report URL template %r: only {audit_id} and {report_dir} are known", template)
        return None


def deliver(
    report: Report,
    report_dir: Path,
    settings: NotifySettings,
    *,
    api_url: str,
    token: str | None,
    env: Mapping[str, str],
    secrets: Sequence[str] = (),
    issue_write_pause: float | None = 1.0,
    late: bool = False,
) -> Delivery:
    """Send the audit's summary on every configured channel, if ``settings.when`` asks for it;
    ``late``: a later run sends it (the message says so, and which night it belongs to)."""
    secret_list = [s for s in (*secrets, token) if s]
    audit_id = report.audit.id
    urls = notify_urls(settings, env)
    issue = settings.github_issue
    if issue is None and env.get("CRAWLER_ISSUE_REPO"):  # e.g. ${{ github.repository }}
        try:
            issue = GitHubIssueSettings(repo=env["CRAWLER_ISSUE_REPO"])
        except ValidationError:
            log.error("CRAWLER_ISSUE_REPO must look like 'owner/name'")
    if not urls and issue is None:  # recorded too: every report folder says what was sent
        nothing = Delivery(audit_id, False, "no notify channels configured", (), late)
        _record(nothing, report_dir, secret_list)
        return nothing
    wanted, reason = should_notify(report, settings.when)
    results: list[ChannelResult] = []
    if wanted:
        link = report_link(settings, env, audit_id, report_dir)
        markdown_path = report_dir / "report.md"
        shown_path = str(markdown_path)
        title = headline(report, late=late)
        body = summary_body(report, link, shown_path, late=late)
        failure = report.summary.errors > 0
        attachment = markdown_path if settings.attach_report and markdown_path.is_file() else None
        for url in urls:
            results.append(
                send_apprise(
                    url, title, body, failure=failure, attachment=attachment, secrets=secret_list
                )
            )
        if issue is not None:
            from crawler.report.markdown import render_markdown

            markdown = (
                markdown_path.read_text(encoding="utf-8")
                if markdown_path.is_file()
                else render_markdown(report)
            )
            results.append(
                publish_issue(
                    issue,
                    api_url=api_url,
                    token=token,
                    body=issue_body(markdown, link, shown_path),
                    comment=comment_body(report, link, shown_path, late=late),
                    seconds_between_writes=issue_write_pause,
                )
            )
    delivery = Delivery(audit_id, wanted, reason, tuple(results), late)
    for failed in delivery.failed:  # the caller shows failures to the operator
        log.debug("notification to %s failed: %s", failed.channel, failed.detail)
    _record(delivery, report_dir, secret_list)
    return delivery


def _record(delivery: Delivery, report_dir: Path, secrets: list[str]) -> None:
    """delivery.json beside the report; a write failure is logged, the report is untouched."""
    encoded = msgspec.json.format(msgspec.json.encode(delivery.record()), indent=2)
    text = redact(encoded.decode("utf-8") + "\n", secrets)
    try:
        write_file(report_dir / DELIVERY_FILE, lambda path: path.write_text(text, "utf-8"))
    except OSError as exc:
        log.error("could not record the delivery in %s: %s", report_dir, exc)
