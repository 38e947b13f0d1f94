"""Chat, e-mail and webhook delivery through Apprise: one Apprise URL, one result."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

from crawler.logs import redact

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ChannelResult:
    channel: str  # the Apprise URL's scheme and host (channel_label), or "github-issue owner/name"
    ok: bool
    detail: str
    url: str | None = None  # where the message can be seen (the issue), when known


def channel_label(url: str) -> str:
    """A channel as shown on the terminal, in logs and in delivery.json: its scheme and host
    only. The rest of an Apprise URL is often the credential itself (a Slack or Discord
    webhook's token, a password, a secret path); a "host" that is a token too (slack://T0/…,
    discord://id/…: no dot) is not shown either."""
    scheme, separator, rest = url.partition("://")
    if not separator:
        return "(not a URL)"
    host = re.split(r"[/?#]", rest, maxsplit=1)[0].rpartition("@")[2]
    name = host.rsplit(":", 1)[0] if not host.startswith("[") else host
    readable = "." in name or name.startswith("[") or name == "localhost"
    return f"{scheme[:20]}://{host if readable else '…'}"


def send_apprise(
    url: str,
    title: str,
    body: str,
    *,
    failure: bool,
    attachment: Path | None,
    secrets: list[str],
) -> ChannelResult:
    """Send one message; never raises. The result names the channel by its scheme and host."""
    import apprise  # only when a channel is configured: it is slow to import

    sender = apprise.Apprise()
    masked = redact(channel_label(url), secrets)
    if not sender.add(url):
        return ChannelResult(masked, False, "not a valid Apprise URL (unknown service or syntax)")
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
