"""Chat, e-mail and webhook delivery through Apprise: one Apprise URL, one result."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from crawler.logs import redact

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ChannelResult:
    channel: str  # the Apprise URL with its secrets masked, or "github-issue owner/name"
    ok: bool
    detail: str
    url: str | None = None  # where the message can be seen (the issue), when known


def send_apprise(
    url: str,
    title: str,
    body: str,
    *,
    failure: bool,
    attachment: Path | None,
    secrets: list[str],
) -> ChannelResult:
    """Send one message; never raises. The result names the URL only in Apprise's privacy form."""
    import apprise  # only when a channel is configured: it is slow to import

    sender = apprise.Apprise()
    if not sender.add(url):
        masked = redact(url.split("://", 1)[0] + "://…", secrets)
        return ChannelResult(masked, False, "not a valid Apprise URL (unknown service or syntax)")
    private_url: str = sender[0].url(privacy=True)  # type: ignore[no-untyped-call]
    masked = redact(private_url.split("?", 1)[0], secrets)  # the query is Apprise's options
    attach = apprise.AppriseAttachment(str(attachment)) if attachment else None
    # Apprise says why a send failed only in its log: capture it for the delivery record (the
    # caller reports it once), rather than let it reach the log a second time.
    capture = apprise.LogCapture(level=logging.WARNING, fmt="%(message)s")  # type: ignore[no-untyped-call]
    apprise_log = logging.getLogger("apprise")
    propagate, apprise_log.propagate = apprise_log.propagate, log.isEnabledFor(logging.DEBUG)
    with capture as captured:
        try:
            sent = bool(
                sender.notify(
                    body=body,
                    title=title,
                    notify_type=apprise.NotifyType.FAILURE if failure else apprise.NotifyType.INFO,
                    body_format=apprise.NotifyFormat.MARKDOWN,
                    attach=attach,
                )
            )
        except Exception as exc:  # a plugin bug must not cost the report
            sent = False
            log.debug("apprise raised %s", type(exc).__name__)
        finally:
            apprise_log.propagate = propagate
    if sent:
        return ChannelResult(masked, True, "sent" + (" with report.md attached" if attach else ""))
    reason = " ".join(captured.getvalue().split())[:300] or "the service refused the message"
    return ChannelResult(masked, False, redact(reason, secrets))
