"""GitHub App authentication: an installation token instead of a personal token.

Organisations run nightly jobs as a GitHub App: its installations have a rate limit of their
own (5,000 requests an hour and more, growing with the organisation; 15,000 on Enterprise
Cloud), readable from ``GET /rate_limit`` like a token's. The App signs a short JWT with its
private key (PyGithub's ``Auth.AppAuth``), exchanges it for an installation token
(``POST /app/installations/{id}/access_tokens``; the answer decoded with a typed check), and
the token expires after an hour: ``InstallationTokens`` takes a new one ``REFRESH_BEFORE`` ahead
of the expiry, so a request never leaves with a token about to lapse. Every token it was given,
and every JWT it signed, is a secret: ``issued`` lists them for redaction.

Environment: ``GITHUB_APP_ID``, ``GITHUB_APP_INSTALLATION_ID`` and the PEM private key in
``GITHUB_APP_PRIVATE_KEY`` or in the file named by ``GITHUB_APP_PRIVATE_KEY_FILE``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

import msgspec
import requests

from crawler.logs import adopt_library_loggers
from crawler.upstream.answers import upstream_message
from crawler.upstream.http import USER_AGENT, redact
from crawler.upstream.sources.github import APP_VARIABLES
from crawler.upstream.sources.github.api import GitHubError

REFRESH_BEFORE = timedelta(minutes=5)
_JUST_TAKEN = timedelta(minutes=1)
APP_ENV = APP_VARIABLES


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
    """The App's credentials from the environment, the key read and checked (a PEM RSA private
    key, as GitHub gives); None when no App variable is set. AppAuthError, in one line naming
    the variable, when they cannot be used: checked before an audit starts."""
    given = {name: env.get(name, "").strip() for name in APP_ENV}
    if not any(given.values()):
        return None
    key, variable = given["GITHUB_APP_PRIVATE_KEY"], "GITHUB_APP_PRIVATE_KEY"
    if not key and given["GITHUB_APP_PRIVATE_KEY_FILE"]:
        variable = "GITHUB_APP_PRIVATE_KEY_FILE"
        key = _read_key_file(given[variable])
    missing = [name for name, value in (("GITHUB_APP_ID", given["GITHUB_APP_ID"]),
               ("GITHUB_APP_INSTALLATION_ID", given["GITHUB_APP_INSTALLATION_ID"]),
               ("GITHUB_APP_PRIVATE_KEY(_FILE)", key)) if not value]  # fmt: skip
    if missing:
        raise AppAuthError("GitHub App authentication needs " + ", ".join(missing))
    if not given["GITHUB_APP_INSTALLATION_ID"].isdigit():
        raise AppAuthError("GITHUB_APP_INSTALLATION_ID must be a number")
    _check_key(key, variable)
    return AppCredentials(given["GITHUB_APP_ID"], int(given["GITHUB_APP_INSTALLATION_ID"]), key)


_KEY_FILE_LIMIT = 64 * 1024  # a 4096-bit PEM key is about 3 KB


def _read_key_file(path: str) -> str:
    from crawler.untrusted import UnreadableFile, read_regular_file

    try:
        data = read_regular_file(Path(path), _KEY_FILE_LIMIT)
    except UnreadableFile as exc:
        raise AppAuthError(f"GITHUB_APP_PRIVATE_KEY_FILE: {exc}") from None
    except OSError as exc:
        raise AppAuthError(
            f"GITHUB_APP_PRIVATE_KEY_FILE: {path} cannot be read ({exc.strerror or exc})"
        ) from None
    return data.decode("utf-8", errors="replace").strip()


def _check_key(key: str, variable: str) -> None:
    """A PEM RSA private key without a passphrase, or AppAuthError saying what it is instead."""
    # loaded only with an App configured: an audit with a token imports no cryptography
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    hint = "use the .pem file GitHub gives when you generate the App's private key"
    if key.startswith(("ssh-rsa ", "ssh-ed25519 ", "ecdsa-sha2-")):
        raise AppAuthError(f"{variable}: an OpenSSH public key, not the App's private key: {hint}")
    if "OPENSSH PRIVATE KEY" in key:
        raise AppAuthError(f"{variable}: an OpenSSH private key, not a PEM one: {hint}")
    try:
        loaded = load_pem_private_key(key.encode("utf-8"), password=None)
    except TypeError:  # encrypted
        raise AppAuthError(f"{variable}: the key is protected by a passphrase: {hint}") from None
    except (ValueError, UnsupportedAlgorithm):
        raise AppAuthError(
            f"{variable}: not a PEM private key (damaged or cut short): {hint}"
        ) from None
    if not isinstance(loaded, rsa.RSAPrivateKey):
        raise AppAuthError(f"{variable}: not an RSA key (GitHub Apps sign with RS256): {hint}")


class _TokenAnswer(msgspec.Struct):
    """GitHub's answer to the exchange, the two fields read (others are ignored)."""

    token: str
    expires_at: datetime


class InstallationTokens:
    """The installation's current token, exchanged again ``REFRESH_BEFORE`` its expiry.
    Thread-safe: workers share one token; one of them renews it while the others wait. An
    exchange GitHub refused is not asked again in the same audit: every later call raises
    the same AppAuthError."""

    def __init__(
        self,
        api_url: str,
        credentials: AppCredentials,
        *,
        timeout: float = 30.0,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        allow_private: bool = False,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self.credentials = credentials
        self._timeout = timeout
        self._now = now
        self._allow_private = allow_private
        self._lock = threading.Lock()
        self._token: str | None = None
        self._expires_at: datetime | None = None
        self._failure: AppAuthError | None = None
        self._taken_at: datetime | None = None  # this clock's time at the last exchange
        self._session: requests.Session | None = None
        self.issued: list[str] = []  # every token received and JWT signed: secrets to redact
        self.exchanges = 0

    @property
    def identity(self) -> str:
        return self.credentials.identity

    @property
    def expires_at(self) -> datetime | None:
        return self._expires_at

    def token(self) -> str:
        with self._lock:
            if self._failure is not None:
                raise self._failure
            if self._token is not None and self._fresh(self._now()):
                return self._token
            try:
                return self._exchange()
            except AppAuthError as exc:
                self._failure = exc
                raise

    def _fresh(self, now: datetime) -> bool:
        """Not about to expire; or taken this minute (a request asks twice, before it is sent
        and as PyGithub signs it: both get the token taken for it, even at the boundary)."""
        if self._expires_at is None or self._taken_at is None:
            return False
        return now < self._expires_at - REFRESH_BEFORE or now - self._taken_at < _JUST_TAKEN

    def _exchange(self) -> str:
        from github import Auth

        adopt_library_loggers()

        url = f"{self.api_url}/app/installations/{self.credentials.installation_id}/access_tokens"
        try:
            jwt = Auth.AppAuth(self.credentials.app_id, self.credentials.private_key).token
        except Exception as exc:  # the key was checked at start: a defect, said without it
            why = f"cannot sign the App's JWT: {type(exc).__name__}"
            raise AppAuthError(self._safe(why), url) from None
        self.issued.append(jwt)  # a signed JWT is a credential for its ten minutes
        try:
            response = self._http().post(
                url,
                headers={"Authorization": f"Bearer {jwt}", "Accept": "application/vnd.github+json",
                         "User-Agent": USER_AGENT},
                timeout=self._timeout,
            )  # fmt: skip
        except Exception as exc:  # a network error: its class, never its text (it may echo)
            raise AppAuthError(self._safe(f"no installation token: no answer from GitHub "
                                          f"({type(exc).__name__})"), url) from None  # fmt: skip
        if response.status_code != 201:
            message = upstream_message(response.content)
            raise AppAuthError(
                self._safe(f"GitHub refused the App's installation token: HTTP "
                           f"{response.status_code} {message}".strip()), url,
            )  # fmt: skip
        try:
            answer = msgspec.json.decode(response.content, type=_TokenAnswer)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise AppAuthError(
                self._safe(f"GitHub's answer to the installation token request is not one "
                           f"({exc}): expected a token and when it expires"), url,
            ) from None  # fmt: skip
        if not answer.token.strip():
            raise AppAuthError("GitHub's installation token answer holds an empty token", url)
        self._token = answer.token
        expires = answer.expires_at
        self._expires_at = expires if expires.tzinfo else expires.replace(tzinfo=UTC)
        self._taken_at = self._now()
        self.issued.append(self._token)
        self.exchanges += 1
        return self._token

    def _http(self) -> requests.Session:
        """A session of its own, with the API transport's deadline, size cap and redirect
        guard, the environment's proxies and CA bundle."""
        if self._session is None:
            from crawler.upstream.network import ca_bundle
            from crawler.upstream.sources.github.api import _settle_environment
            from crawler.upstream.sources.github.transport import DeadlineAdapter

            session = requests.Session()
            adapter = DeadlineAdapter(
                max(2 * self._timeout, self._timeout + 5), max_retries=0, size_limit=2**20,
                home=urlsplit(self.api_url).hostname, allow_private=self._allow_private,
            )  # fmt: skip
            session.mount("http://", adapter)
            session.mount("https://", adapter)
            environ_proxies = requests.utils.get_environ_proxies(self.api_url)
            _settle_environment(session, environ_proxies, ca_bundle() or True)
            self._session = session
        return self._session

    def _safe(self, text: str) -> str:
        return redact(text, self.credentials.private_key, *self.issued)[:300]

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
