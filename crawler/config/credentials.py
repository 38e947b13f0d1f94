"""Credentials in the configuration: page URLs that take them from the environment, what must
be redacted from every line written, and what `crawler check` warns about.

sources.yaml ends up in git, so a page behind a login names its credentials by environment
variable, ``${NAME}``, expanded only when the page is fetched:

    url: https://${VENDOR_USER}:${VENDOR_PASSWORD}@vendor.example/support?token=${VENDOR_TOKEN}

Whatever such a URL holds, it is shown and stored as ``crawler.untrusted.shown_url`` makes it
(``https://vendor.example/support?token=***``), and the values it expands to are redacted from
every message and log line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import suppress
from urllib.parse import quote, unquote, urlsplit

from crawler.config.loader import Config
from crawler.logs import secrets_from_env
from crawler.untrusted import shown_url, url_secrets

ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expand_environment(url: str, env: Mapping[str, str]) -> str:
    """``url`` with each ``${NAME}`` replaced by that variable's value (percent-encoded where
    it stands in the user name or password); ValueError naming a variable that is not set."""
    missing = [name for name in ENV_REFERENCE.findall(url) if not env.get(name)]
    if missing:
        raise ValueError(
            f"the URL names ${{{missing[0]}}}, which is not set in the environment: set it "
            "where the audit runs (never in sources.yaml)"
        )
    userinfo = re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://([^/?#]*)@", url)
    cut = userinfo.end(1) if userinfo else 0

    def value(match: re.Match[str]) -> str:
        given = env[match.group(1)]
        return quote(given, safe="") if match.start() < cut else given

    return ENV_REFERENCE.sub(value, url)


def _page_urls(config: Config) -> Iterator[tuple[int, str, str, str]]:
    """(line, project, page, url) of every page fetched by URL."""
    for project in config.projects:
        for page in project.pages:
            if page.url is not None:
                yield project.line, project.name, page.name, page.url


def config_secrets(config: Config, env: Mapping[str, str]) -> list[str]:
    """What no line written may hold: the credentials page URLs carry, written in the file or
    taken from the environment, and the secret parts of the notification URLs in the file."""
    names = config.settings.secret_url_parameters
    found: set[str] = set()
    for _line, _project, _page, url in _page_urls(config):
        found.update(url_secrets(url, names))
        found.update(v for v in (env.get(n) for n in ENV_REFERENCE.findall(url)) if v)
        with suppress(ValueError):  # a variable not set: the page says so when fetched
            found.update(url_secrets(expand_environment(url, env), names))
    # notification URLs in the file are read as CRAWLER_NOTIFY's are (a token in the path...)
    found.update(secrets_from_env({"CRAWLER_NOTIFY": " ".join(config.notify.urls)}))
    return sorted((s for s in found if len(s) >= 4), key=len, reverse=True)


def credential_warnings(config: Config) -> list[str]:
    """`crawler check`: each URL of sources.yaml that holds a credential as written, with how
    to take it from the environment instead."""
    warnings = []
    names = config.settings.secret_url_parameters
    for line, project, page, url in _page_urls(config):
        where = f"{config.path}:{line}: project {project!r}, page {page!r}"
        written = ENV_REFERENCE.sub("", url)
        parts = urlsplit(written) if "://" in written else None
        if parts is not None and (parts.username or parts.password):
            warnings.append(
                f"{where}: the URL holds a user name or password, and sources.yaml is no place "
                "for one: write it as https://${VENDOR_USER}:${VENDOR_PASSWORD}@"
                f"{parts.hostname or 'host'}/… and set those variables where the audit runs "
                "(it is shown and stored without them either way)"
            )
        secret = [v for v in url_secrets(written, names) if v not in _userinfo(parts)]
        if secret:
            warnings.append(
                f"{where}: the URL holds a secret-looking value ({shown_url(url, names)}): "
                "write it as ${VENDOR_TOKEN} (any variable name) and set that variable where "
                "the audit runs"
            )
    for url in config.notify.urls:
        if url_secrets(url, names):
            warnings.append(
                f"{config.path}: notify.urls: {shown_url(url, names)} holds a credential: give "
                "this URL in CRAWLER_NOTIFY instead (it is masked wherever it is shown)"
            )
    for spec in config.projects:
        if spec.homepage and url_secrets(spec.homepage, names):
            warnings.append(
                f"{config.path}:{spec.line}: project {spec.name!r}: homepage "
                f"{shown_url(spec.homepage, names)} holds a credential: a homepage is only "
                "shown, never fetched: remove it"
            )
    return warnings


def _userinfo(parts: object) -> set[str]:
    username = getattr(parts, "username", None)
    password = getattr(parts, "password", None)
    return {v for p in (username, password) if p for v in (p, unquote(p))}
