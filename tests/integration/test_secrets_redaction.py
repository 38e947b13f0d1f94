"""Issue 9, item 7 (second bullet): a GraphQL error message that echoes the token is redacted
before it is cut, stored or reported.

The fake GitHub answers every GraphQL query with an error whose message holds the request's
token (as a misconfigured proxy or server would), placed so that the token straddles the place
where the message is cut: 80 characters for an error about the whole answer, 300 for an error
about one repository. Not even an 8-character piece of the token may reach the database, the
report files or the log lines of `crawler -vv audit`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from crawler.cli import cli
from crawler.store import Store
from crawler_fakes.github import FakeGitHub, FaultPlan, FaultRule, GitHubState
from tests.support.regression import repo, sqlite_bytes, stored_text

TOKEN = "ghp_Qz7RkVw2NpXc9LmTb4HsYd8JfGa6Ue3Wq5Zo"
CONFIG = "projects:\n  - name: Alpha\n    repo: org/alpha\n  - name: Beta\n    repo: org/beta\n"


def _body(message: str) -> str:
    """The JSON the fake answers, byte for byte (compact separators)."""
    return json.dumps(
        {"data": None, "errors": [{"message": message}]}, separators=(",", ":"), ensure_ascii=False
    )


def _pieces(secret: str, size: int = 8) -> set[str]:
    return {secret[i : i + size] for i in range(len(secret) - size + 1)}


@pytest.mark.parametrize("log_format", ["text", "json"])
@pytest.mark.parametrize("scope", ["answer", "repository"])
def test_a_token_echoed_in_a_graphql_error_is_redacted_before_the_cut(
    tmp_path: Path,
    db_url: str,
    monkeypatch: pytest.MonkeyPatch,
    scope: str,
    log_format: str,
) -> None:
    lead = len(_body("")) - len('"}]}')  # where the message starts in the body
    if scope == "answer":  # no path: the whole answer failed, its first 80 characters quoted
        cut, message = 80, "proxy refused the credential ".ljust(70 - lead, "-") + "{token} (403)"
        rule = FaultRule("graphql_error", path="/graphql", times=99, message=message)
    else:  # about r0 (Alpha) only: its message is cut at 300 characters
        cut, message = 300, "credential rejected ".ljust(290, "-") + "{token} (403)"
        rule = FaultRule("graphql_error", path="/graphql", times=99, message=message, alias="r0")
    echoed = message.replace("{token}", TOKEN)
    where = (_body(echoed) if scope == "answer" else echoed).index(TOKEN)
    assert where < cut - 8 < where + len(TOKEN)  # 8+ characters of it on either side of the cut

    monkeypatch.chdir(tmp_path)
    (tmp_path / "sources.yaml").write_text(CONFIG)
    state = GitHubState(repos=[repo("alpha", 1, ("v1.0",)), repo("beta", 2, ("v2.0",))])
    with FakeGitHub(state, token=TOKEN, faults=FaultPlan(rules=[rule])) as server:
        monkeypatch.setenv("GITHUB_API_URL", server.base_url)
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        monkeypatch.delenv("GH_TOKEN", raising=False)
        monkeypatch.delenv("CRAWLER_NOTIFY", raising=False)
        args = ["-vv", "--log-format", log_format, "audit", "--db", db_url]
        result = CliRunner().invoke(cli, args, catch_exceptions=False)
        assert rule.fired >= 1
    assert result.exit_code == 1

    report = json.loads((tmp_path / "reports" / "latest" / "report.json").read_text())
    redacted = echoed.replace(TOKEN, "***")
    answer = _body(redacted)
    quoted = {
        name: f"no data for org/{name.lower()} ({answer[:79]}…)" for name in ("Alpha", "Beta")
    }
    if scope == "repository":
        quoted["Alpha"] = redacted
    assert [(e["project"], e["source"], e["error"]) for e in report["errors"]] == [
        (name, "github-graphql", quoted[name]) for name in ("Alpha", "Beta")
    ]

    store = Store(db_url)
    try:
        stored = stored_text(store)
    finally:
        store.close()
    assert redacted in stored  # the error is stored, redacted
    written = [
        ("database rows", stored),
        ("database file", sqlite_bytes(db_url).decode("latin-1")),
        ("log lines and output", result.output),
        *(
            (str(path), path.read_text())
            for path in sorted((tmp_path / "reports").rglob("*"))
            if path.is_file()
        ),
    ]
    leaks = [(name, piece) for name, text in written for piece in _pieces(TOKEN) if piece in text]
    assert leaks == []
