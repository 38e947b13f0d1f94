"""A PyPI-shaped HTTP server for tests and the offline demo: Warehouse's JSON API on loopback.

``FakePyPI`` serves ``GET /pypi/<project>/json`` and ``GET /pypi/<project>/<version>/json`` from
a plain in-memory ``PyPIState`` that can be swapped between audits with ``set_state``. It
answers the way Warehouse does (``warehouse/legacy/api/json.py`` and its documentation):

* the documented fields (``info``, ``last_serial``, ``releases``, ``urls``, ``vulnerabilities``,
  ``ownership``; files with ``upload_time_iso_8601``, ``yanked``, ``digests``…), serialised
  with sorted keys and compact separators, so versions arrive in string order;
* ``info`` describes the newest release, preferring non-yanked, then final releases;
* a name spelled other than its PEP 503 normal form is answered ``301`` to the normal form;
  an unknown project, or one without any release, is ``404 {"message": "Not Found"}``;
* every answer has an ETag (the base64 MD5 of the body, as WebOb's ``md5_etag``), and a
  request whose ``If-None-Match`` matches is answered ``304``; ``X-PyPI-Last-Serial`` and
  ``Cache-Control: max-age=900, public`` are sent as PyPI sends them.

Test knobs PyPI does not document: ``rate_limit`` adds ``RateLimit-Limit/Remaining/Reset``
headers and answers ``429`` once they are spent; ``faults`` injects 5xx, resets, truncated
bodies, HTML pages, 429s with ``Retry-After`` and delays (``crawler.fakes.faults``). Links
(``package_url``, ``release_url``, file URLs) point at ``web_url``, the server's own address
unless another is given.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from typing import Any, cast
from urllib.parse import unquote, urlsplit

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from crawler.fakes.faults import RAW_KINDS, FaultPlan, FaultRule, send_raw_fault
from crawler.fakes.replay import Recordings
from crawler.fakes.server import FakeServer, LoopbackService, abort, send_answer

__all__ = [
    "FakePackage",
    "FakePyPI",
    "FakeVersion",
    "PyPIRequest",
    "PyPIState",
    "demo_state",
]

# --------------------------------------------------------------------------------------- state


@dataclass
class FakeVersion:
    version: str
    uploaded_at: str  # ISO-8601 'Z': the first file's upload time
    yanked: bool = False
    yanked_reason: str | None = None
    wheel: bool = True
    sdist: bool = True  # both False: a release registered without files


@dataclass
class FakePackage:
    name: str  # as its owner spelled it ("FlashInfer-Python"); URLs use the normal form
    versions: list[FakeVersion] = field(default_factory=list)
    license_expression: str | None = None  # PEP 639
    license: str | None = None  # the legacy free-text field
    classifiers: list[str] = field(default_factory=list)
    summary: str = ""
    project_urls: dict[str, str] = field(default_factory=dict)

    @property
    def normalized(self) -> str:
        return canonicalize_name(self.name)


@dataclass
class PyPIState:
    packages: list[FakePackage] = field(default_factory=list)
    # recorded answers served verbatim: normalised name -> the bytes of /pypi/<name>/json
    recorded: dict[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True)
class PyPIRequest:
    method: str
    path: str
    status: int  # 0 when the connection was reset without an answer
    conditional: bool  # carried If-None-Match
    authorization: bool  # an Authorization header arrived (PyPI's JSON API needs none)
    fault: str | None = None


# ------------------------------------------------------------------------------------ answers


@dataclass
class _Resp:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"


def _json(value: Any) -> bytes:
    """Warehouse's "json-with-newline" renderer: sorted keys, compact, UTF-8, a newline."""
    return (
        json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"
    ).encode()


def _etag(body: bytes) -> str:
    digest = base64.b64encode(hashlib.md5(body).digest()).decode().strip("=")
    return f'"{digest}"'


def _order_key(item: FakeVersion) -> tuple[int, Any]:
    try:
        return (1, Version(item.version))
    except InvalidVersion:
        return (0, item.version)


def _is_prerelease(item: FakeVersion) -> bool:
    try:
        return Version(item.version).is_prerelease
    except InvalidVersion:
        return False


def _latest(package: FakePackage) -> FakeVersion | None:
    """Warehouse's choice for ``info``: not yanked first, then final releases, then newest."""
    if not package.versions:
        return None
    ranked = sorted(package.versions, key=_order_key, reverse=True)
    return min(ranked, key=lambda v: (v.yanked, _is_prerelease(v)))


def _iso_upload(stamp: str, offset: int) -> tuple[str, str]:
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00")) + timedelta(seconds=offset)
    moment = moment.astimezone(UTC).replace(tzinfo=None)
    iso = moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{(offset * 137_251) % 1_000_000:06d}Z"
    return moment.strftime("%Y-%m-%dT%H:%M:%S"), iso


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "nginx"
    sys_version = ""
    timeout = 60

    def do_GET(self) -> None:
        cast(_Server, self.server).fake.dispatch(self)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(FakeServer):
    fake: FakePyPI


class FakePyPI(LoopbackService):
    """The server. ``with FakePyPI(state) as pypi:`` starts it on 127.0.0.1 and stops it."""

    server_class = _Server
    handler = _Handler

    def __init__(
        self,
        state: PyPIState,
        *,
        web_url: str | None = None,
        faults: FaultPlan | None = None,
        rate_limit: int | None = None,
        latency: float = 0.0,
    ) -> None:
        self.faults = faults
        self.recorded: Recordings | None = None  # real documents served ahead of the state
        self.latency = latency
        self.rate_limit = rate_limit
        self.rate_remaining = rate_limit
        self.requests: list[PyPIRequest] = []
        self.max_in_flight = 0  # the most requests served at once
        self._in_flight = 0
        self._web_url = web_url
        self._lock = threading.RLock()
        self.base_url = ""
        self.state = state

    # ---- lifecycle

    @property
    def web_url(self) -> str:
        return (self._web_url or self.base_url).rstrip("/")

    def env(self) -> dict[str, str]:
        """The environment that points the crawler at this server."""
        return {"PYPI_API_URL": self.base_url}

    def set_state(self, state: PyPIState) -> None:
        with self._lock:
            self.state = state

    def reset_log(self) -> None:
        with self._lock:
            self.requests.clear()
            self.max_in_flight = 0

    # ---- documents

    def project_json(
        self, package: FakePackage, version: FakeVersion | None = None
    ) -> dict[str, Any]:
        """The answer to /pypi/<name>/json, or to /pypi/<name>/<version>/json."""
        latest = version or _latest(package)
        assert latest is not None
        releases = {v.version: self._files(package, v) for v in package.versions}
        data: dict[str, Any] = {
            "info": self._info(package, latest),
            "last_serial": self._serial(package),
            "urls": releases[latest.version],
            "vulnerabilities": [],
            "ownership": {"roles": [{"role": "Owner", "user": "fake-owner"}], "organization": None},
        }
        if version is None:
            data["releases"] = releases
        return data

    def _info(self, package: FakePackage, latest: FakeVersion) -> dict[str, Any]:
        page = f"{self.web_url}/project/{package.name}/"
        return {
            "author": "",
            "author_email": "Fake Maintainer <maintainer@example.invalid>",
            "bugtrack_url": None,
            "classifiers": sorted(package.classifiers),
            "description": f"# {package.name}\n\n{package.summary}\n",
            "description_content_type": "text/markdown",
            "docs_url": None,
            "download_url": "",
            "downloads": {"last_day": -1, "last_month": -1, "last_week": -1},
            "dynamic": None,
            "home_page": "",
            "keywords": "",
            "license": package.license,
            "license_expression": package.license_expression,
            "license_files": ["LICENSE"] if package.license_expression else None,
            "maintainer": "",
            "maintainer_email": "",
            "name": package.name,
            "package_url": page,
            "platform": None,
            "project_url": page,
            "project_urls": package.project_urls or None,
            "provides_extra": None,
            "release_url": f"{page}{latest.version}/",
            "requires_dist": None,
            "requires_python": ">=3.10",
            "summary": package.summary,
            "version": latest.version,
            "yanked": latest.yanked,
            "yanked_reason": latest.yanked_reason,
        }

    def _files(self, package: FakePackage, version: FakeVersion) -> list[dict[str, Any]]:
        stem = package.normalized.replace("-", "_")
        kinds = (
            [("sdist", f"{stem}-{version.version}.tar.gz", "source", 0)] if version.sdist else []
        )
        if version.wheel:
            wheel = f"{stem}-{version.version}-py3-none-any.whl"
            kinds.append(("bdist_wheel", wheel, "py3", 7))  # uploaded after the sdist
        files = []
        for packagetype, filename, python_version, offset in kinds:
            sha256 = hashlib.sha256(filename.encode()).hexdigest()
            md5 = hashlib.md5(filename.encode()).hexdigest()
            blake = hashlib.blake2b(filename.encode(), digest_size=32).hexdigest()
            plain, iso = _iso_upload(version.uploaded_at, offset)
            files.append(
                {
                    "comment_text": "",
                    "core-metadata": {"sha256": sha256[::-1]} if packagetype != "sdist" else False,
                    "digests": {"blake2b_256": blake, "md5": md5, "sha256": sha256},
                    "downloads": -1,
                    "filename": filename,
                    "has_sig": False,
                    "md5_digest": md5,
                    "packagetype": packagetype,
                    "python_version": python_version,
                    "requires_python": ">=3.10",
                    "size": 1000 + len(filename) * 37,
                    "upload_time": plain,
                    "upload_time_iso_8601": iso,
                    "url": f"{self.web_url}/packages/{blake[:2]}/{blake[2:4]}/{blake[4:]}/"
                    + filename,
                    "yanked": version.yanked,
                    "yanked_reason": version.yanked_reason,
                }
            )
        return files

    @staticmethod
    def _serial(package: FakePackage) -> int:
        seed = json.dumps([(v.version, v.uploaded_at, v.yanked) for v in package.versions])
        return 10_000_000 + int(hashlib.sha1(seed.encode()).hexdigest()[:6], 16)

    # ---- requests

    def dispatch(self, handler: BaseHTTPRequestHandler) -> None:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            self._answer(handler)
        finally:
            with self._lock:
                self._in_flight -= 1

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        target = handler.path
        inm = handler.headers.get("If-None-Match")
        auth = handler.headers.get("Authorization") is not None
        fault = self.faults.pick("GET", target) if self.faults else None

        def log(status: int) -> None:
            record = PyPIRequest(
                "GET", target, status, bool(inm), auth, fault.kind if fault else None
            )
            with self._lock:
                self.requests.append(record)

        if self.latency:
            time.sleep(self.latency)
        if fault is not None and fault.kind == "delay":
            time.sleep(
                fault.delay if fault.delay is not None else self.faults.delay if self.faults else 0
            )
        if fault is not None and fault.kind == "reset":
            log(0)
            abort(handler)
            return
        if self.recorded is not None:
            served = self.recorded.serve(handler, "GET", self.base_url)
            if served is not None:
                log(served)
                return
        if fault is not None and fault.kind in RAW_KINDS:
            log(302 if fault.kind == "redirect" else 200)
            send_raw_fault(handler, fault)
            return
        try:
            resp = self._limited() or (
                self._fault(fault) if fault and fault.kind not in ("delay", "truncate") else None
            )
            if resp is None:
                resp = self._route(urlsplit(target).path, inm)
        except Exception as exc:  # a bug in the fake: answer it instead of dropping the socket
            resp = _Resp(500, _json({"message": f"fake PyPI error: {exc!r}"}))
        self._rate_headers(resp)
        log(resp.status)  # before answering: a client may read the log right after
        _send(handler, resp, truncate=fault is not None and fault.kind == "truncate")

    def _limited(self) -> _Resp | None:
        with self._lock:
            if self.rate_remaining is None:
                return None
            if self.rate_remaining <= 0:
                return _Resp(429, _json({"message": "Too Many Requests"}))
            self.rate_remaining -= 1
        return None

    def _rate_headers(self, resp: _Resp) -> None:
        with self._lock:
            if self.rate_limit is not None and self.rate_remaining is not None:
                resp.headers["RateLimit-Limit"] = str(self.rate_limit)
                resp.headers["RateLimit-Remaining"] = str(max(0, self.rate_remaining))
                resp.headers["RateLimit-Reset"] = "60"

    def _fault(self, fault: FaultRule) -> _Resp:
        retry = str(fault.retry_after or (self.faults.retry_after if self.faults else 1))
        if fault.kind in ("status_500", "status_502"):
            status = 500 if fault.kind == "status_500" else 502
            error = f"<html><body><h1>Error {status}</h1><p>Backend unavailable</p></body></html>"
            return _Resp(status, error.encode(), content_type="text/html; charset=utf-8")
        if fault.kind == "html_200":
            page = b"<!DOCTYPE html><html><body><h1>Maintenance</h1></body></html>"
            return _Resp(200, page, content_type="text/html; charset=utf-8")
        status = 403 if fault.kind == "secondary_limit" else 429
        return _Resp(status, _json({"message": "Too Many Requests"}), {"Retry-After": retry})

    def _route(self, path: str, inm: str | None) -> _Resp:
        parts = [unquote(p) for p in path.split("/") if p]
        if len(parts) not in (3, 4) or parts[0] != "pypi" or parts[-1] != "json":
            return _not_found()
        name = parts[1]
        with self._lock:
            if len(parts) == 3 and name in self.state.recorded:
                body = self.state.recorded[name]
                return _Resp(200, body, {"ETag": _etag(body), "Cache-Control": "max-age=900"})
            package = next(
                (p for p in self.state.packages if p.normalized == canonicalize_name(name)), None
            )
            if package is None or not package.versions:
                return _not_found()
            if name != package.normalized:
                rest = "/".join(parts[2:])
                location = f"{self.base_url}/pypi/{package.normalized}/{rest}"
                return _Resp(301, b"", {"Location": location}, "text/html; charset=UTF-8")
            version = None
            if len(parts) == 4:
                version = next((v for v in package.versions if v.version == parts[2]), None)
                if version is None:
                    return _not_found()
            body = _json(self.project_json(package, version))
            serial = str(self._serial(package))
        etag = _etag(body)
        headers = {
            "ETag": etag,
            "Cache-Control": "max-age=900, public",
            "X-PyPI-Last-Serial": serial,
            "Access-Control-Allow-Origin": "*",
        }
        given = {t.strip().removeprefix("W/") for t in (inm or "").split(",") if t.strip()}
        if etag in given or "*" in given:
            return _Resp(304, b"", headers)
        return _Resp(200, body, headers)


def _not_found() -> _Resp:
    return _Resp(404, _json({"message": "Not Found"}))


# -------------------------------------------------------------------------------------- server


def _send(handler: BaseHTTPRequestHandler, resp: _Resp, *, truncate: bool) -> None:
    send_answer(handler, resp.status, resp.body, resp.headers, resp.content_type, truncate=truncate)


# ---------------------------------------------------------------------------------------- demo


def demo_state(after: bool = False) -> PyPIState:
    """Packages for the offline demo's GitHub projects (crawler.demo.scenario): ``kernel-dsl``
    (Kernel DSL) runs ahead of its forge after the second night — 3.10.0 is on PyPI while
    GitHub's newest release is v3.9.0, a ``channel_mismatch`` — and ``serving-engine``
    (Serving Engine) gains a pre-release and yanks one version."""
    kernel = FakePackage(
        "kernel-dsl",
        [
            FakeVersion("3.7.0", "2026-08-30T12:00:00Z"),
            FakeVersion("3.8.0", "2026-10-01T12:30:00Z"),
        ],
        license_expression="MIT",
        summary="A Python kernel DSL",
    )
    serving = FakePackage(
        "serving-engine",
        [
            FakeVersion("0.32.0", "2026-10-10T13:00:00Z"),
            FakeVersion("0.32.1", "2026-10-20T13:00:00Z"),
        ],
        classifiers=["License :: OSI Approved :: Apache Software License"],  # ambiguous: no id
        license="Apache-2.0",
        summary="An LLM serving engine",
    )
    if after:
        kernel.versions += [
            FakeVersion("3.9.0", "2026-10-27T12:30:00Z"),
            FakeVersion("3.10.0", "2026-11-03T09:00:00Z"),
        ]
        serving.versions.append(FakeVersion("0.33.0rc3", "2026-11-02T13:00:00Z"))
        serving.versions[1] = FakeVersion(
            "0.32.1", "2026-10-20T13:00:00Z", yanked=True, yanked_reason="withdrawn upstream"
        )
    return PyPIState([kernel, serving])


# Which demo project each package belongs to: the lead adds ``pypi: <package>`` to them.
DEMO_CHANNELS = {"Kernel DSL": "kernel-dsl", "Serving Engine": "serving-engine"}
