"""Deterministic fault injection for the fake servers: one-shot rules and seeded rates."""

from __future__ import annotations

import random
import re
import threading
from dataclasses import dataclass, field
from typing import Literal, get_args

# -------------------------------------------------------------------------------------- faults

FaultKind = Literal[
    "status_500",
    "status_502",
    "reset",
    "truncate",
    "html_200",
    "secondary_limit",
    "rate_429",
    "delay",
    "graphql_error",  # the fake GitHub's GraphQL only: 200 with an error and no data
    # the fake GitHub's GraphQL only: the real answer with one field of some repositories null
    # and an error whose path names it (GitHub's partial answer), or that field replaced
    "graphql_partial",
]
FAULT_KINDS: tuple[FaultKind, ...] = get_args(FaultKind)


@dataclass
class FaultRule:
    """A one-shot fault: fires on the first ``times`` requests whose path matches ``path``."""

    kind: FaultKind
    path: str = ""  # regex, searched in the request path including the query string
    times: int = 1
    method: str | None = None
    retry_after: int | None = None  # secondary_limit / rate_429 (default: the plan's)
    delay: float | None = None  # delay (default: the plan's)
    # graphql_error: the error's message, "{token}" replaced by the credential the request
    # carried (a proxy or server that echoes it), and the alias (path) it concerns, if any
    message: str = "Something went wrong while executing your query."
    alias: str | None = None
    # graphql_partial: the field (dotted, inside each repository alias, or inside ``alias``
    # only) made null with an error naming its path; or, when ``value`` is given, replaced
    # by that value with no error (a wrong-typed answer)
    field: str = "releases"
    value: object = None
    fired: int = 0


@dataclass
class FaultPlan:
    """Deterministic per-request faults: one-shot rules first, then seeded random rates.

    The random draw of a request depends only on the seed, the request (method and path) and
    how many times that request was made before: the same requests meet the same faults
    whatever order concurrent clients send them in."""

    rates: dict[str, float] = field(default_factory=dict)  # fault kind -> probability
    rules: list[FaultRule] = field(default_factory=list)
    seed: int = 0
    retry_after: int = 1
    delay: float = 0.2
    _seen: dict[tuple[str, str], int] = field(init=False, repr=False, default_factory=dict)
    _lock: threading.Lock = field(init=False, repr=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        unknown = {*self.rates, *(r.kind for r in self.rules)} - set(FAULT_KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds: {sorted(unknown)}")

    def pick(self, method: str, path: str) -> FaultRule | None:
        with self._lock:
            count = self._seen.get((method, path), 0)
            self._seen[(method, path)] = count + 1
            # a str seed is hashed with SHA-512: the same draw in every process
            draw = random.Random(f"{self.seed}|{method}|{path}|{count}").random()
            for rule in self.rules:
                wanted = rule.method is None or rule.method.upper() == method
                if wanted and rule.fired < rule.times and re.search(rule.path, path):
                    rule.fired += 1
                    return rule
            edge = 0.0
            for kind in FAULT_KINDS:
                edge += self.rates.get(kind, 0.0)
                if draw < edge:
                    return FaultRule(kind=kind, fired=1)
        return None
