"""The crawler-wide sections of sources.yaml: ``settings`` (limits and timing), ``schedule`` and
``notify``. Each source's own section is its SourceKind's settings model."""

from __future__ import annotations

import ipaddress
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, field_validator

from crawler.config.common import Model, check_github_repo, check_regex
from crawler.cron import CronError, parse_crontab
from crawler.model import ReleaseShown

DEFAULT_PAGE_SIZE_LIMIT = 5 * 1024 * 1024
DEFAULT_REQUEST_DEADLINE = 60.0  # seconds for a whole page request: redirects, headers, body
DEFAULT_PIN_TEXT_LIMIT = 1_000_000  # characters of page text a pin's pattern scans


class Settings(Model):
    page_size_limit: int = Field(default=DEFAULT_PAGE_SIZE_LIMIT, ge=1024)
    allow_private_addresses: bool = False
    # private networks (CIDR) reachable although the guard is on: an intranet docs host, a
    # test server on loopback; every other private address stays refused
    private_networks: tuple[str, ...] = ()
    timeout: float = Field(default=30.0, gt=0)
    request_deadline: float = Field(default=DEFAULT_REQUEST_DEADLINE, gt=0)
    pin_text_limit: int = Field(default=DEFAULT_PIN_TEXT_LIMIT, ge=1000)
    per_host_concurrency: int = Field(default=2, ge=1, le=16)
    # one wall-clock limit per project: all its requests together
    project_deadline: float = Field(default=600.0, gt=0)
    # a project unchecked for longer than this is flagged `stale` (and the exit status is 1)
    stale_after_days: float = Field(default=3.0, gt=0)
    # the export marks a catalog record stale when its facts (its latest successful check) are
    # older than this many days before the exported audit; an audit that did not check a
    # project (`audit --only`, an error tonight) does not make it stale by itself
    catalog_stale_after_days: float = Field(default=2.0, gt=0)
    # a forge release with no package upload after this long is a channel_mismatch
    channel_grace_days: float = Field(default=7.0, ge=0)
    # the curated catalog.json (`crawler export --into` target), relative to sources.yaml's
    # folder: a change stays pending until this file holds it; without one, until `crawler ack`
    catalog: str | None = Field(default=None, min_length=1)
    # query parameters whose values are credentials, beside the usual names (token, key,
    # api_key, access_token, secret, password, signature, sig...): masked wherever a URL is
    # shown or stored (crawler.untrusted.shown_url)
    secret_url_parameters: tuple[str, ...] = ()
    # link checks (docs/links.md): a link failing with a timeout, 5xx or TLS error is reported
    # unreachable only after this many days; an upstream is dormant after this many days
    # without a commit on its default branch and without a release or tag
    link_grace_days: float = Field(default=3.0, ge=0)
    dormant_after_days: float = Field(default=365.0, gt=0)
    # links checked a night at most (least recently checked first: the rest wait their turn);
    # 0, the default, leaves the nightly link check off (the shipped sources.yaml turns it on)
    links_per_night: int = Field(default=0, ge=0)
    # links never checked (regular expressions, searched in the URL): hosts that refuse robots,
    # pages behind a login; a finding already open about one stays open until acknowledged
    links_exclude: tuple[str, ...] = ()
    # which release a catalog row shows (a project's own `release_shown:` wins): the highest in
    # version order, a pre-release included when the project includes them, labelled "(release
    # candidate)" or "(pre-release)" (the catalog page's convention); or `newest_final`, the
    # release the forge marks latest, else the highest final one
    release_shown: ReleaseShown = "highest_version"

    @field_validator("links_exclude")
    @classmethod
    def _exclusions(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in value:
            check_regex(pattern, "links_exclude")
        return value

    @field_validator("private_networks")
    @classmethod
    def _networks(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for net in value:
            try:
                ipaddress.ip_network(net, strict=False)
            except ValueError:
                raise ValueError(
                    f"private_networks: {net!r} is not a network such as '10.20.0.0/16'"
                ) from None
        return value


class ScheduleSettings(Model):
    """``schedule:``: when ``crawler schedule`` audits (its --cron/--timezone flags win)."""

    cron: str = "0 3 * * *"
    timezone: str = "UTC"

    @field_validator("cron")
    @classmethod
    def _cron(cls, value: str) -> str:
        try:
            parse_crontab(value)
        except CronError as exc:
            raise ValueError(f"cron {value!r}: {exc}") from None
        return value

    @field_validator("timezone")
    @classmethod
    def _timezone(cls, value: str) -> str:
        return check_timezone(value)


def check_timezone(value: str) -> str:
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"timezone {value!r} is not an IANA time zone name such as 'Europe/Berlin' or 'UTC'"
        ) from None
    return value


class GitHubIssueSettings(Model):
    """The one catalog issue kept up to date with the latest report."""

    repo: str
    title: str = "Upstream release and license audit"
    labels: tuple[str, ...] = ("crawler-audit",)

    @field_validator("repo")
    @classmethod
    def _repo(cls, value: str) -> str:
        return check_github_repo(value)


class NotifySettings(Model):
    """``notify:``: where a finished audit's summary goes (see crawler.notify)."""

    when: Literal["always", "changes", "errors"] = "changes"
    urls: tuple[str, ...] = ()  # Apprise URLs; CRAWLER_NOTIFY adds URLs that hold secrets
    attach_report: bool = True  # attach report.md where the service takes attachments
    report_url: str | None = None  # link template: {audit_id}, {report_dir}
    github_issue: GitHubIssueSettings | None = None

    @field_validator("urls")
    @classmethod
    def _urls(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for url in value:
            if "://" not in url:
                raise ValueError(f"url {url!r} is not an Apprise URL such as 'json://host/path'")
        return value
