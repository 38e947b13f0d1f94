"""One per-project guard for every source (crawler.upstream.guard): a failure, a deferral and a
surprise read the same whichever source met them, redacted and capped once."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.analysis.license_texts import reference_text
from crawler.audit import run_audit
from crawler.config import Location, ProjectSpec, parse_config
from crawler.model import ProjectResult, ProjectSnapshot, ProjectStatus
from crawler.store import Store
from crawler.upstream.answers import ShapeError
from crawler.upstream.guard import MAX_MESSAGE, PerProject, guarded
from crawler.upstream.source import RepoFile, SourceDeferred, SourceError, SourceKind
from crawler_fakes import gitee_state
from crawler_fakes.gitee import FakeGitee, GiteeRelease, GiteeRepo, GiteeState

SECRET = "demo-secret-token-6b1f0c2a9e"
TOKEN = "gitee-guard-token-3e9d1a7c55"


class Scripted:
    """A simple source (the ProjectSource contract) whose projects raise what they are told."""

    def __init__(self, role: str = "forge", raises: dict[str, Exception] | None = None) -> None:
        self.kind = SourceKind(
            name="demo", label="Demo", role=role, project_key="demo",  # type: ignore[arg-type]
            check_path=lambda path: path, open=lambda _context: self,  # type: ignore[arg-type,return-value]
        )  # fmt: skip
        self.concurrency = 2
        self.raises = raises or {}
        self.asked: list[str] = []
        self._lock = threading.Lock()

    def fetch_project(self, spec: ProjectSpec, prior: ProjectSnapshot | None) -> ProjectSnapshot:
        with self._lock:
            self.asked.append(spec.name)
        if spec.name in self.raises:
            raise self.raises[spec.name]
        return ProjectSnapshot(project=spec.name, tracking=spec.tracking)

    def project_url(self, spec: ProjectSpec) -> str:
        return f"https://demo.example/{spec.name}"

    def redact(self, text: str) -> str:
        return text.replace(SECRET, "***")

    def read_file(self, location: Location, path: str, ref: str | None = None) -> RepoFile:
        raise SourceError("no files")

    def usage(self) -> dict[str, Any]:
        return {}

    def close(self) -> None:
        pass


def _spec(name: str) -> ProjectSpec:
    return ProjectSpec(name=name, forge=Location(source="demo", path=f"o/{name}"))


LONG = f"HTTP 500 from Demo: {'x' * 3000} {SECRET}"

# (what fetch_project raises, status, note, error URL, error message) -- one row per outcome
CASES: list[tuple[Exception, ProjectStatus, str | None, str | None, str | None]] = [
    (SourceDeferred("rate budget spent"), ProjectStatus.DEFERRED,
     "not checked this audit: rate budget spent", None, None),
    (SourceError("repository o/p not found", "https://demo.example/api/o/p", 404),
     ProjectStatus.ERROR, None, "https://demo.example/api/o/p", "repository o/p not found"),
    (ShapeError("missing field 'id' in Demo answer"), ProjectStatus.ERROR, None,
     "https://demo.example/p", "unexpected answer from Demo: missing field 'id' in Demo answer"),
    (KeyError("id"), ProjectStatus.ERROR, None, "https://demo.example/p",
     "unexpected answer from Demo: 'id'"),
    (RuntimeError(f"boom {SECRET}"), ProjectStatus.ERROR, None, "https://demo.example/p",
     "internal error: RuntimeError: boom ***"),
]  # fmt: skip


@pytest.mark.parametrize(("raised", "status", "note", "url", "message"), CASES)
def test_each_outcome_reads_one_way(
    raised: Exception, status: ProjectStatus, note: str | None, url: str | None, message: str | None
) -> None:
    result = guarded(Scripted(raises={"p": raised}), _spec("p"), None)
    assert (result.status, result.note, result.snapshot) == (status, note, None)
    assert [(e.project, e.source, e.url, e.message) for e in result.errors] == (
        [] if message is None else [("p", "demo", url, message)]
    )


def test_a_long_message_is_redacted_then_capped_once() -> None:
    source = Scripted(raises={"p": SourceError(LONG, "https://demo.example/x")})
    result = guarded(source, _spec("p"), None)
    (error,) = result.errors
    assert len(error.message) == MAX_MESSAGE
    assert error.message == LONG[: MAX_MESSAGE - 1] + "…"
    assert SECRET not in error.message


def test_a_channel_deferral_is_the_bare_reason() -> None:
    """The audit words it "<channel> not checked: <why>" beside the forge's facts."""
    source = Scripted("channel", {"p": SourceDeferred("rate budget spent")})
    result = guarded(source, _spec("p"), None)
    assert (result.status, result.note) == (ProjectStatus.DEFERRED, "rate budget spent")


def test_a_stop_defers_without_asking_the_source() -> None:
    source = Scripted()
    result = guarded(source, _spec("p"), None, should_stop=lambda: True)
    assert (result.status, result.note) == (
        ProjectStatus.DEFERRED,
        "not checked this audit: stop requested",
    )
    assert source.asked == []


def test_one_project_failing_costs_no_other_and_each_is_reported_once() -> None:
    source = Scripted(raises={"b": RuntimeError("surprise")})
    fetched: list[str] = []
    per_project = PerProject(source, on_fetched=lambda result: fetched.append(result.project))
    results = per_project.fetch([_spec("a"), _spec("b"), _spec("c")], {})
    assert {n: r.status for n, r in results.items()} == {
        "a": ProjectStatus.OK,
        "b": ProjectStatus.ERROR,
        "c": ProjectStatus.OK,
    }
    assert sorted(fetched) == ["a", "b", "c"]
    assert sorted(source.asked) == ["a", "b", "c"]


# -- through the audit, with a real source ------------------------------------------------------


@pytest.fixture
def hostile_gitee(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitee]:
    """A Gitee whose license file comes with a 3,000-character "encoding" echoing the token."""
    plain = gitee_state.RepoView.file_json

    def hostile(view: gitee_state.RepoView, path: str, with_content: bool = True) -> Any:
        entry = plain(view, path, with_content)
        if path == "LICENSE" and with_content:
            entry["encoding"] = f"{'z' * 3000} {TOKEN}"
        return entry

    monkeypatch.setattr(gitee_state.RepoView, "file_json", hostile)
    repo = GiteeRepo(
        owner="deep-spark", name="plugin", id=7, license="Apache-2.0", head_sha="a" * 40,
        head_date="2026-10-01T00:00:00Z",
        releases=[GiteeRelease("v1.0.0", "2026-09-01T02:00:00Z", "v1.0.0")],
        files={"LICENSE": reference_text("Apache-2.0")},
    )  # fmt: skip
    with FakeGitee(GiteeState([repo]), token=TOKEN) as fake:
        yield fake


def test_a_hostile_answer_is_one_redacted_capped_error_in_the_report(
    hostile_gitee: FakeGitee, tmp_path: Path
) -> None:
    config = parse_config(
        "gitee: {retry_base_delay: 0, max_retries: 0}\n"
        "projects:\n  - name: Plugin\n    gitee: deep-spark/plugin\n"
    )
    store = Store(f"sqlite:///{tmp_path / 'c.sqlite'}")
    try:
        outcome = run_audit(config, store, tmp_path / "reports", env=hostile_gitee.env(TOKEN))
    finally:
        store.close()
    (error,) = outcome.report.as_json()["errors"]
    assert error["project"] == "Plugin"
    assert len(error["error"]) == MAX_MESSAGE
    assert error["error"].startswith(
        "unexpected answer from Gitee: unexpected content encoding 'zzz"
    )
    assert error["error"].endswith("z…")
    assert TOKEN not in str(outcome.report.as_json())


def test_results_are_projects_not_threads() -> None:
    """PerProject returns one result per distinct project name, as a Source must."""
    source = Scripted()
    results = PerProject(source).fetch([_spec("a"), _spec("a")], {})
    assert list(results) == ["a"]
    assert isinstance(results["a"], ProjectResult)
