"""A page whose URL carries credentials (issue 38 item 7), through audit, export and the
Explorer: the page is fetched with them, and no file written, log line or database row holds
them; every URL is shown and stored as crawler.untrusted.shown_url makes it.

One page has ``user:password@`` and ``?api_key=…&token=…`` written in sources.yaml (which
`crawler check` warns about); the other takes ``${VENDOR_TOKEN}`` from the environment.
Real processes (`crawler -vv …`, JSON and text logs), a page server on loopback, SQLite and
PostgreSQL."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import create_engine, inspect, text

from crawler_fakes.pages import FakePageServer

USER, PASSWORD = "crawler-reader", "pw-8d1c5e2f9a7b"
API_KEY, TOKEN = "ak_3f9e1d7c5b2a4e6f", "tk_0c2b4d6f8a1e3c5b"
ENV_TOKEN = "envtok_5a7c9e1b3d2f4a6c"
SECRETS = (PASSWORD, API_KEY, TOKEN, ENV_TOKEN)
CONFIG = """\
settings: {{allow_private_addresses: true}}
projects:
  - name: Vendor SDK
    homepage: https://vendor.example/sdk
    pages:
      - name: support
        url: http://{user}:{password}@{host}/support.html?api_key={api_key}&token={token}&lang=en
        pins: {{sdk: 'SDK ([0-9.]+)'}}
        integration: {{platform: Ascend NPU, status: upstream, layer: platform sdk, version: sdk}}
      - name: matrix
        url: http://{host}/matrix.html?access_token=${{VENDOR_TOKEN}}&v=2
        pins: {{driver: 'driver ([0-9.]+)'}}
"""


def _spellings() -> list[bytes]:
    """Every way a secret could be written: as is, percent-encoded, user:password in base64."""
    found = [s.encode() for s in SECRETS] + [quote(s, safe="").encode() for s in SECRETS]
    found.append(base64.b64encode(f"{USER}:{PASSWORD}".encode()))
    return found


def _crawler(workdir: Path, db_url: str, *args: str, code: int = 0) -> str:
    """``crawler ARGS`` in a child, exiting ``code``: what it wrote on stdout and stderr."""
    env = {**os.environ, "CRAWLER_DB_URL": db_url, "VENDOR_TOKEN": ENV_TOKEN}
    for name in ("GITHUB_TOKEN", "GH_TOKEN", "CRAWLER_NOTIFY"):
        env.pop(name, None)
    run = subprocess.run(
        [sys.executable, "-m", "crawler", *args], cwd=workdir, env=env, capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == code, run.stderr[-3000:]
    return run.stdout + run.stderr


def _rows(db_url: str) -> str:
    """Every row of every table, as text."""
    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            tables = inspect(conn).get_table_names()
            rows = (conn.execute(text(f'select * from "{table}"')) for table in tables)
            return "\n".join(repr(tuple(row)) for found in rows for row in found)
    finally:
        engine.dispose()


def test_a_page_with_credentials_in_its_url_publishes_none_of_them(
    db_url: str, tmp_path: Path
) -> None:
    with FakePageServer() as site:
        host = site.base_url.removeprefix("http://")
        (tmp_path / "sources.yaml").write_text(
            CONFIG.format(user=USER, password=PASSWORD, host=host, api_key=API_KEY, token=TOKEN)
        )
        site.set_page("/support.html", b"<p>SDK 1.0</p>", charset="utf-8")
        site.set_page("/matrix.html", b"<p>driver 7.1</p>", charset="utf-8")
        logs = [_crawler(tmp_path, db_url, "check")]
        logs.append(_crawler(tmp_path, db_url, "-vv", "audit"))
        site.set_page("/support.html", b"<p>SDK 1.1</p>", charset="utf-8")  # a pin change
        site.set_page("/matrix.html", b"gone", status=404)  # an error naming the page
        logs.append(_crawler(tmp_path, db_url, "-vv", "--log-format", "json", "audit", code=1))
        logs.append(_crawler(tmp_path, db_url, "-vv", "export", "--site", "site"))
        logs.append(_crawler(tmp_path, db_url, "validate", "export/catalog.json"))
        requests = site.requests

    # the pages were fetched with their credentials
    support = [r for r in requests if r.path.startswith("/support.html")]
    basic = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    assert {r.headers.get("authorization") for r in support} == {basic}
    assert {r.path for r in support} == {f"/support.html?api_key={API_KEY}&token={TOKEN}&lang=en"}
    matrix = [r for r in requests if r.path.startswith("/matrix.html")]
    assert {r.path for r in matrix} == {f"/matrix.html?access_token={ENV_TOKEN}&v=2"}

    # … and published nowhere: files (the SQLite file among them), log lines, database rows
    written = b"".join(p.read_bytes() for p in tmp_path.rglob("*")
                       if p.is_file() and p.name != "sources.yaml")  # fmt: skip
    published = written + "".join(logs).encode() + _rows(db_url).encode()
    assert [s for s in _spellings() if s in published] == []

    # the links are kept, as shown
    shown = f"http://{host}/support.html?api_key=***&token=***&lang=en"
    report = json.loads((tmp_path / "reports/latest/report.json").read_text())
    assert [c["evidence_url"] for c in report["changes"]] == [shown]
    assert [e["url"] for e in report["errors"]] == [f"http://{host}/matrix.html?access_token=***&v=2"]
    catalog = json.loads((tmp_path / "export/catalog.json").read_text())
    assert [e["url"] for i in catalog["integrations"] for e in i["evidence"]] == [shown]
    assert shown.replace("&", "&amp;") in (tmp_path / "site/index.html").read_text()
    assert logs[-1].startswith("export/catalog.json: valid")  # `crawler validate`, exit 0
    # `crawler check` said how to keep the credentials out of sources.yaml
    # (beside them, the second page's warning that it maps nothing to integration records)
    credential_warnings = [
        line for line in logs[0].splitlines() if "warning: " in line and "write it as" in line
    ]
    assert len(credential_warnings) == 2
    assert "write it as https://${VENDOR_USER}:${VENDOR_PASSWORD}@127.0.0.1/…" in logs[0]
