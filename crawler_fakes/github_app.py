"""A GitHub App installation for ``FakeGitHub``: the token exchange and the installation's
own rate limit.

``POST /app/installations/{id}/access_tokens`` with ``Authorization: Bearer <JWT>`` (RS256,
signed with the App's private key, ``iss`` = the App id, at most 10 minutes between ``iat``
and ``exp``) answers 201 with a new ``ghs_`` token and its ``expires_at`` (an hour by
default, ``token_ttl``). A bad or expired JWT is 401, another installation 404. An installation
token is accepted until it expires (then 401 "Bad credentials", as GitHub does), and its REST
requests spend the installation's budget (``rate_limit``), which ``GET /rate_limit`` reports.
Simplification: GraphQL requests of an installation spend the fake's one GraphQL budget.
"""

from __future__ import annotations

import re
import secrets
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

_EXCHANGE = re.compile(r"/app/installations/(\d+)/access_tokens")
_DOC = "https://docs.github.com/rest/apps/apps#create-an-installation-access-token-for-an-app"
_BAD_JWT = {"message": "A JSON web token could not be decoded", "documentation_url": _DOC}


@dataclass
class FakeApp:
    """One App with one installation. ``public_key_pem`` verifies the App's JWTs."""

    app_id: str
    public_key_pem: str
    installation_id: int
    rate_limit: int = 15_000  # an Enterprise Cloud organisation's installation
    token_ttl: float = 3600.0
    exchanges: list[float] = field(default_factory=list)  # when each token was issued
    jwts: list[str] = field(default_factory=list)  # every JWT the exchange was given
    # a 201 body served instead of a token (a garbled answer); a refusal that quotes the JWT
    # it was given (as a proxy or a buggy server echoing it would)
    answer: dict[str, Any] | None = None
    echo_jwt: bool = False
    _tokens: dict[str, float] = field(default_factory=dict)  # token -> expiry (epoch seconds)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def handles(self, method: str, path: str) -> bool:
        return method == "POST" and _EXCHANGE.fullmatch(path) is not None

    def exchange(self, path: str, authorization: str) -> tuple[int, dict[str, Any]]:
        """Answer the token exchange: (status, JSON body)."""
        import jwt

        match = _EXCHANGE.fullmatch(path)
        scheme, _, given = authorization.strip().partition(" ")
        if scheme.lower() != "bearer" or not given:
            return 401, dict(_BAD_JWT)
        with self._lock:
            self.jwts.append(given.strip())
        if self.echo_jwt:
            return 401, {"message": f"A JSON web token could not be decoded: {given.strip()}"}
        if self.answer is not None:
            return 201, dict(self.answer)
        try:
            claims = jwt.decode(given.strip(), self.public_key_pem, algorithms=["RS256"],
                                options={"require": ["iat", "exp", "iss"]})  # fmt: skip
        except jwt.PyJWTError:
            return 401, dict(_BAD_JWT)
        if str(claims["iss"]) != self.app_id or int(claims["exp"]) - int(claims["iat"]) > 600:
            return 401, {"message": "'Issuer' claim ('iss') must be an Integer",
                         "documentation_url": _DOC}  # fmt: skip
        if match is None or int(match[1]) != self.installation_id:
            return 404, {"message": "Not Found", "documentation_url": _DOC}
        token = "ghs_" + secrets.token_hex(18)
        now = time.time()
        expires = now + self.token_ttl
        with self._lock:
            self._tokens[token] = expires
            self.exchanges.append(now)
        stamp = datetime.fromtimestamp(int(expires), UTC).isoformat().replace("+00:00", "Z")
        return 201, {"token": token, "expires_at": stamp,
                     "permissions": {"contents": "read", "metadata": "read"},
                     "repository_selection": "all"}  # fmt: skip

    def knows(self, token: str | None) -> bool:
        """An installation token this App issued (expired or not)."""
        with self._lock:
            return token is not None and token in self._tokens

    def valid(self, token: str | None) -> bool:
        with self._lock:
            expiry = self._tokens.get(token or "")
        return expiry is not None and time.time() < expiry

    def expire_tokens(self) -> None:
        """Every token issued so far expires now (a night longer than a token's hour)."""
        with self._lock:
            self._tokens = dict.fromkeys(self._tokens, 0.0)
