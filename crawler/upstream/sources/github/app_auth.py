"""GitHub App authentication: an installation token instead of a personal token.

Organisations run nightly jobs as a GitHub App: its installations have a rate limit of their
own (5,000 requests an hour and more, growing with the organisation; 15,000 on Enterprise
Cloud), readable from ``GET /rate_limit`` like a token's. The App signs a short JWT with its
private key (PyGithub's ``Auth.AppAuth``), exchanges it for an installation token
(``POST /app/installations/{id}/access_tokens``, PyGithub's ``GithubIntegration``), and the
token expires after an hour: ``InstallationTokens`` takes a new one ``REFRESH_BEFORE`` ahead
of the expiry, so a request never leaves with a token about to lapse. Every token it was given
is a secret: ``issued`` lists them for redaction.

Environment: ``GITHUB_APP_ID``, ``GITHUB_APP_INSTALLATION_ID`` and the PEM private key in
``GITHUB_APP_PRIVATE_KEY`` or in the file named by ``GITHUB_APP_PRIVATE_KEY_FILE``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from crawler.upstream.http import USER_AGENT, redact
from crawler.upstream.sources.github.api import GitHubError

REFRESH_BEFORE = timedelta(minutes=5)
APP_ENV = ("GITHUB_APP_ID", "GITHUB_APP_INSTALLATION_ID", "GITHUB_APP_PRIVATE_KEY",
           "GITHUB_APP_PRIVATE_KEY_FILE")  # fmt: skip


class AppAuthError(GitHubError):
    """The App's credentials are incomplete, or GitHub refused to exchange them: an error of
    this audit for every GitHub project, never a finding."""

    def __init__(self, message: str, url: str = "") -> None:
        super().__init__(message, url)


@dataclass(frozen=True)
class AppCredentials:
    app_id: str
    installation_id: int
    private_key: str

    def __repr__(self) -> str:  # the key never reaches a log or a traceback
        return f"AppCredentials(app_id={self.app_id!r}, installation_id={self.installation_id})"

    @property
    def identity(self) -> str:
        """Stable across token refreshes: the validators cache keys on it (an installation's
        ETags would otherwise be lost every hour, with every new token)."""
        return f"app:{self.app_id}/installation:{self.installation_id}"


def app_credentials(env: Mapping[str, str]) -> AppCredentials | None:
    """The App's credentials from the environment; None when no App variable is set."""
    given = {name: env.get(name, "").strip() for name in APP_ENV}
    if not any(given.values()):
        return None
    key = given["GITHUB_APP_PRIVATE_KEY"]
    if not key and given["GITHUB_APP_PRIVATE_KEY_FILE"]:
        try:
            key = Path(given["GITHUB_APP_PRIVATE_KEY_FILE"]).read_text().strip()
        except OSError as exc:
            raise AppAuthError(
                f"GITHUB_APP_PRIVATE_KEY_FILE cannot be read ({type(exc).__name__})"
            ) from None
    missing = [name for name, value in (("GITHUB_APP_ID", given["GITHUB_APP_ID"]),
               ("GITHUB_APP_INSTALLATION_ID", given["GITHUB_APP_INSTALLATION_ID"]),
               ("GITHUB_APP_PRIVATE_KEY(_FILE)", key)) if not value]  # fmt: skip
    if missing:
        raise AppAuthError("GitHub App authentication needs " + ", ".join(missing))
    if not given["GITHUB_APP_INSTALLATION_ID"].isdigit():
        raise AppAuthError("GITHUB_APP_INSTALLATION_ID must be a number")
    return AppCredentials(given["GITHUB_APP_ID"], int(given["GITHUB_APP_INSTALLATION_ID"]), key)


class InstallationTokens:
    """The installation's current token, exchanged again ``REFRESH_BEFORE`` its expiry.
    Thread-safe: workers share one token; one of them renews it while the others wait."""

    def __init__(
        self,
        api_url: str,
        credentials: AppCredentials,
        *,
        timeout: float = 30.0,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self.credentials = credentials
        self._timeout = timeout
        self._now = now
        self._lock = threading.Lock()
        self._token: str | None = None
        self._expires_at: datetime | None = None
        self._integration: Any = None
        self.issued: list[str] = []  # every token received: secrets to redact
        self.exchanges = 0

    @property
    def identity(self) -> str:
        return self.credentials.identity

    @property
    def expires_at(self) -> datetime | None:
        return self._expires_at

    def token(self) -> str:
        with self._lock:
            fresh = self._token is not None and self._expires_at is not None
            if fresh and self._now() < self._expires_at - REFRESH_BEFORE:  # type: ignore[operator]
                return self._token  # type: ignore[return-value]
            return self._exchange()

    def _exchange(self) -> str:
        from github import Auth, GithubException, GithubIntegration

        url = f"{self.api_url}/app/installations/{self.credentials.installation_id}/access_tokens"
        try:
            if self._integration is None:
                self._integration = GithubIntegration(
                    auth=Auth.AppAuth(self.credentials.app_id, self.credentials.private_key),
                    base_url=self.api_url,
                    timeout=int(self._timeout),
                    user_agent=USER_AGENT,
                    retry=None,
                )
            answer = self._integration.get_access_token(self.credentials.installation_id)
        except GithubException as exc:
            message = exc.data.get("message") if isinstance(exc.data, dict) else None
            raise AppAuthError(
                self._safe(f"GitHub refused the App's installation token: HTTP {exc.status} "
                           f"{message or ''}".strip()), url,
            ) from None  # fmt: skip
        except Exception as exc:  # a bad key (ValueError from cryptography), a network error
            raise AppAuthError(
                self._safe(f"no installation token: {type(exc).__name__}"), url
            ) from None
        self._token = str(answer.token)
        expires = answer.expires_at
        self._expires_at = expires if expires.tzinfo else expires.replace(tzinfo=UTC)
        self.issued.append(self._token)
        self.exchanges += 1
        return self._token

    def _safe(self, text: str) -> str:
        return redact(text, self.credentials.private_key, *self.issued)[:300]

    def close(self) -> None:
        if self._integration is not None:
            self._integration.close()
