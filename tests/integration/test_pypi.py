"""The PyPI source against the PyPI-shaped fake over real HTTP on loopback: facets, license
derivation, conditional requests, name normalisation, errors, retries and rate limits."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from license_expression import get_spdx_licensing

from crawler.config import ConfigError, Location, Settings, parse_config
from crawler.model import PackageInfo, PackageVersion, ProjectResult, ProjectStatus, Provenance
from crawler.upstream.http import MemoryCache
from crawler.upstream.json_api import JsonApi
from crawler.upstream.pages import PageFetcher
from crawler.upstream.source import SourceContext, SourceError, source_kinds
from crawler.upstream.sources.pypi import PyPISettings
from crawler.upstream.sources.pypi.licenses import (
    AMBIGUOUS_CLASSIFIERS,
    classifier_map,
    declared_license,
)
from crawler.upstream.sources.pypi.parse import ShapeError, package_from_json
from crawler_fakes.faults import FaultPlan, FaultRule
from crawler_fakes.pypi import FakePackage, FakePyPI, FakeVersion, PyPIState
from tests.support import ROOT
from tests.support.sources import open_in_guard

NOW = "2026-12-01T00:00:00Z"
WEB = "https://pypi.example.test"  # the package pages' host, unlike the API's loopback one


def _package(name: str = "Demo-Pkg", **kwargs: Any) -> FakePackage:
    versions = kwargs.pop("versions", None) or [FakeVersion("1.0.0", "2026-01-05T10:00:00Z")]
    return FakePackage(name, versions, **kwargs)


def _config(*packages: str) -> str:
    lines = ["projects:"]
    for index, name in enumerate(packages):
        lines += [f"  - name: P{index}", f"    pypi: {name}"]
    return "\n".join(lines) + "\n"


@dataclass
class Harness:
    fake: FakePyPI
    cache: MemoryCache = field(default_factory=MemoryCache)
    sleeps: list[float] = field(default_factory=list)

    def fetch(self, *names: str, stop: bool = False, **settings: Any) -> dict[str, ProjectResult]:
        config = parse_config(_config(*names))
        web = PageFetcher(Settings(), self.cache)
        source = open_in_guard(
            "pypi", self.fake.env(), now=NOW, settings={"max_retries": 2, **settings},
            common=config.settings, cache=self.cache, web=web, sleep=self.sleeps.append,
            stop=stop,
        )  # fmt: skip
        try:
            return source.fetch(config.projects, {})
        finally:
            source.close()
            web.close()

    def package(self, name: str = "Demo-Pkg", **settings: Any) -> PackageInfo:
        result = self.fetch(name, **settings)["P0"]
        assert result.status == ProjectStatus.OK and result.snapshot is not None, result
        [package] = result.snapshot.packages
        return package


@pytest.fixture
def pypi() -> Iterator[Harness]:
    with FakePyPI(PyPIState([_package()]), web_url=WEB) as fake:
        yield Harness(fake)


# -- configuration ---------------------------------------------------------------------------


def test_pypi_is_a_channel_named_beside_the_forge() -> None:
    config = parse_config(
        "projects:\n  - name: vLLM\n    repo: vllm-project/vllm\n    pypi: vllm\n"
    )
    [spec] = config.projects
    assert spec.forge == Location(source="github", path="vllm-project/vllm")
    assert spec.channels == (Location(source="pypi", path="vllm"),)
    with pytest.raises(ConfigError) as bad:
        parse_config("projects:\n  - name: X\n    pypi: vllm/vllm\n", "s.yaml")
    assert str(bad.value) == (
        "s.yaml:3: project 'X': pypi 'vllm/vllm' is not a package name: letters, digits, '.', "
        "'_' and '-', starting and ending with a letter or digit (e.g. 'flashinfer-python')"
    )


# -- facets ----------------------------------------------------------------------------------


def test_versions_upload_dates_yanks_and_prereleases_are_read_newest_first(
    pypi: Harness,
) -> None:
    pypi.fake.set_state(
        PyPIState(
            [
                _package(
                    versions=[
                        FakeVersion("0.9.0", "2026-03-01T08:00:00Z"),
                        FakeVersion("0.10.0", "2026-04-01T08:00:00Z"),  # after 0.9.0, not before
                        FakeVersion("0.11.0rc1", "2026-05-01T08:00:00Z"),
                        FakeVersion("0.8.0", "2026-02-01T08:00:00Z", yanked=True),
                        FakeVersion("0.7.0", "2026-01-01T08:00:00Z", wheel=False, sdist=False),
                        FakeVersion("0.10.1.dev3", "2026-04-20T08:00:00Z", sdist=False),
                    ],
                    license_expression="apache-2.0",
                )
            ]
        )
    )
    result = pypi.fetch("Demo-Pkg")["P0"]
    assert result.status == ProjectStatus.OK and result.snapshot is not None
    api = f"{pypi.fake.base_url}/pypi/demo-pkg/json"
    assert result.snapshot.provenance == (("package:pypi", Provenance(api, NOW)),)
    assert result.snapshot.repo is None and result.snapshot.releases is None
    assert result.snapshot.packages == (
        PackageInfo(
            registry="pypi",
            name="Demo-Pkg",
            url=f"{WEB}/project/Demo-Pkg/",  # the answer's own link, on the configured web host
            versions=(
                PackageVersion("0.11.0rc1", "2026-05-01T08:00:00Z", yanked=False, prerelease=True),
                # only a wheel, uploaded 7 s after the time given: the first file's time counts
                PackageVersion("0.10.1.dev3", "2026-04-20T08:00:07Z", False, True),
                PackageVersion("0.10.0", "2026-04-01T08:00:00Z", False, False),
                PackageVersion("0.9.0", "2026-03-01T08:00:00Z", False, False),
                PackageVersion("0.8.0", "2026-02-01T08:00:00Z", True, False),
                # 0.7.0 has no files: nothing to install, not listed
            ),
            license="Apache-2.0",
            license_source="license_expression",
        ),
    )


def test_versions_are_capped_to_the_newest(pypi: Harness) -> None:
    versions = [FakeVersion(f"1.{n}.0", f"2026-0{n}-01T00:00:00Z") for n in range(1, 8)]
    pypi.fake.set_state(PyPIState([_package(versions=versions)]))
    package = pypi.package(versions_per_package=3)
    assert [v.version for v in package.versions] == ["1.7.0", "1.6.0", "1.5.0"]


def test_without_the_deprecated_releases_key_the_latest_files_still_count() -> None:
    data = {
        "info": {"name": "solo", "version": "2.0", "package_url": f"{WEB}/project/solo/"},
        "urls": [{"upload_time_iso_8601": "2026-07-01T01:02:03.456789Z", "yanked": False}],
    }
    package = package_from_json(data, fallback_url="unused", limit=10)
    assert package.versions == (PackageVersion("2.0", "2026-07-01T01:02:03Z", False, False),)
    assert package.url == f"{WEB}/project/solo/"
    with pytest.raises(ShapeError, match="'info'"):
        package_from_json({"releases": {}}, fallback_url="unused", limit=10)


# -- the declared license ----------------------------------------------------------------------

OSI = "License :: OSI Approved"


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"license_expression": "mit OR apache-2.0"}, ("MIT OR Apache-2.0", "license_expression")),
        ({"license_expression": "LicenseRef-Vendor"}, ("LicenseRef-Vendor", "license_expression")),
        ({"classifiers": [OSI, f"{OSI} :: MIT License"]}, ("MIT", "classifiers")),
        ({"classifiers": [f"{OSI} :: GNU General Public License v3 or later (GPLv3+)"]},
         ("GPL-3.0-or-later", "classifiers")),
        # PEP 639: no version or variant named, so no identifier is inferred from the
        # classifier; the free text names the version ("Apache 2.0": ScanCode's short name)
        ({"classifiers": [f"{OSI} :: Apache Software License"], "license": "Apache 2.0"},
         ("Apache-2.0", "license")),
        ({"classifiers": [f"{OSI} :: Apache Software License"]}, (None, None)),
        # …but a free-text license that is itself a valid SPDX expression is taken
        ({"classifiers": [f"{OSI} :: BSD License"], "license": "BSD-3-Clause"},
         ("BSD-3-Clause", "license")),
        # two license classifiers: AND or OR is unknown
        ({"classifiers": [f"{OSI} :: MIT License", f"{OSI} :: ISC License (ISCL)"]}, (None, None)),
        ({"classifiers": ["License :: Other/Proprietary License"]}, (None, None)),
        # a license text pasted into the field: kept, one line, quoted, unrecognised
        ({"license": "MIT License\n\nCopyright (c) 2026 Someone\n\nPermission is hereby…"},
         ('"MIT License Copyright (c) 2026 Someone Permission is hereby…"', "license_text")),
    ],
)
def test_declared_license_in_pep_639_order(
    pypi: Harness, fields: dict[str, Any], expected: tuple[str | None, str | None]
) -> None:
    pypi.fake.set_state(PyPIState([_package(**fields)]))
    package = pypi.package()
    assert (package.license, package.license_source) == expected


def test_classifier_mapping_comes_from_the_installed_scancode_rules() -> None:
    mapping = classifier_map()
    assert mapping[f"{OSI} :: MIT License"] == "MIT"
    assert mapping[f"{OSI} :: Mozilla Public License 2.0 (MPL 2.0)"] == "MPL-2.0"
    assert mapping[f"{OSI} :: Boost Software License 1.0 (BSL-1.0)"] == "BSL-1.0"
    assert mapping[f"{OSI} :: GNU Lesser General Public License v3 or later (LGPLv3+)"] == (
        "LGPL-3.0-or-later"
    )
    assert "License :: Other/Proprietary License" not in mapping  # no SPDX license id
    licensing = get_spdx_licensing()
    assert all(not licensing.validate(spdx).errors for spdx in mapping.values())
    for ambiguous in AMBIGUOUS_CLASSIFIERS:
        assert declared_license({"classifiers": [ambiguous]}) == (None, None)


# -- the service's shape -----------------------------------------------------------------------

# Field names from Warehouse's documentation of GET /pypi/<project>/json (docs/user/api/json.md)
DOCUMENTED_TOP = {"info", "last_serial", "releases", "urls", "vulnerabilities", "ownership"}
DOCUMENTED_INFO = {
    "author", "author_email", "bugtrack_url", "classifiers", "description",
    "description_content_type", "docs_url", "download_url", "downloads", "dynamic",
    "home_page", "keywords", "license", "license_expression", "license_files", "maintainer",
    "maintainer_email", "name", "package_url", "platform", "project_url", "project_urls",
    "provides_extra", "release_url", "requires_dist", "requires_python", "summary", "version",
    "yanked", "yanked_reason",
}  # fmt: skip
DOCUMENTED_FILE = {
    "comment_text", "core-metadata", "digests", "downloads", "filename", "has_sig",
    "md5_digest", "packagetype", "python_version", "requires_python", "size", "upload_time",
    "upload_time_iso_8601", "url", "yanked", "yanked_reason",
}  # fmt: skip


def test_the_fake_answers_with_the_documented_fields(pypi: Harness) -> None:
    api = JsonApi("PyPI", pypi.fake.base_url, cache=MemoryCache(), settings=PyPISettings(),
                  timeout=5)  # fmt: skip
    try:
        project = api.get("/pypi/demo-pkg/json")
        release = api.get("/pypi/demo-pkg/1.0.0/json")
        moved = api.get("/pypi/Demo_Pkg/json")  # any other spelling: 301 to the normal form
        missing = api.get("/pypi/no-such-package/json", allow=(404,))
    finally:
        api.close()
    assert set(project.data) == DOCUMENTED_TOP
    assert set(project.data["info"]) == DOCUMENTED_INFO
    assert {frozenset(f) for f in project.data["releases"]["1.0.0"]} == {
        frozenset(DOCUMENTED_FILE)
    }
    assert set(release.data) == DOCUMENTED_TOP - {"releases"}
    assert moved.data == project.data
    assert (missing.status, missing.data) == (404, None)
    assert [(r.path, r.status) for r in pypi.fake.requests] == [
        ("/pypi/demo-pkg/json", 200),
        ("/pypi/demo-pkg/1.0.0/json", 200),
        ("/pypi/Demo_Pkg/json", 301),
        ("/pypi/demo-pkg/json", 200),
        ("/pypi/no-such-package/json", 404),
    ]
    assert project.headers["x-pypi-last-serial"] == str(project.data["last_serial"])
    assert project.headers["etag"].startswith('"') and project.headers["etag"].endswith('"')


# -- requests ----------------------------------------------------------------------------------


@pytest.mark.parametrize("concurrency", [1, 2])
def test_packages_are_fetched_through_a_bounded_pool(pypi: Harness, concurrency: int) -> None:
    names = [f"pkg-{n}" for n in range(6)]
    pypi.fake.set_state(PyPIState([_package(name) for name in names]))
    pypi.fake.latency = 0.1  # long enough for the workers' requests to overlap
    results = pypi.fetch(*names, concurrency=concurrency)
    assert [r.status for r in results.values()] == [ProjectStatus.OK] * 6
    assert len(pypi.fake.requests) == 6
    assert pypi.fake.max_in_flight == concurrency


def test_a_stop_request_defers_every_package_without_a_request(pypi: Harness) -> None:
    results = pypi.fetch("Demo-Pkg", "other-pkg", stop=True)
    assert [(r.status, r.note) for r in results.values()] == [
        (ProjectStatus.DEFERRED, "stop requested")
    ] * 2
    assert pypi.fake.requests == []


def test_an_unchanged_package_costs_a_304_the_second_time(pypi: Harness) -> None:
    first = pypi.package()
    pypi.fake.reset_log()
    assert pypi.package() == first
    assert [(r.path, r.status, r.conditional) for r in pypi.fake.requests] == [
        ("/pypi/demo-pkg/json", 304, True)
    ]
    pypi.fake.set_state(PyPIState([_package(license_expression="MIT")]))
    pypi.fake.reset_log()
    assert pypi.package().license == "MIT"  # a new body, a new ETag: 200
    assert [(r.status, r.conditional) for r in pypi.fake.requests] == [(200, True)]


def test_the_name_is_requested_in_its_normal_form(pypi: Harness) -> None:
    package = pypi.package("demo_PKG")
    assert package.name == "Demo-Pkg"  # as PyPI spells it
    assert [r.path for r in pypi.fake.requests] == ["/pypi/demo-pkg/json"]  # no 301 hop


def test_an_unknown_package_is_an_error_that_says_what_to_fix(pypi: Harness) -> None:
    result = pypi.fetch("Demo-Pkg", "ghost-pkg")
    assert result["P0"].status == ProjectStatus.OK
    assert result["P1"].status == ProjectStatus.ERROR
    [error] = result["P1"].errors
    assert (error.project, error.source, error.url) == (
        "P1",
        "pypi",
        f"{pypi.fake.base_url}/pypi/ghost-pkg/json",
    )
    assert error.message == (
        "PyPI has no package 'ghost-pkg' (or none of its releases has files yet): fix 'pypi' "
        "in sources.yaml"
    )


def test_a_429_with_retry_after_is_waited_out(pypi: Harness) -> None:
    pypi.fake.faults = FaultPlan(rules=[FaultRule("rate_429", "demo-pkg", retry_after=7)])
    assert pypi.package().versions[0].version == "1.0.0"
    assert pypi.sleeps == [7.0]
    assert [r.status for r in pypi.fake.requests] == [429, 200]


def test_5xx_is_retried_then_an_error_for_that_project_only(pypi: Harness) -> None:
    pypi.fake.set_state(PyPIState([_package(), _package("other-pkg")]))
    pypi.fake.faults = FaultPlan(rules=[FaultRule("status_500", "demo-pkg", times=99)])
    result = pypi.fetch("Demo-Pkg", "other-pkg", max_retries=2)
    assert result["P1"].status == ProjectStatus.OK
    assert result["P0"].status == ProjectStatus.ERROR
    assert [e.message for e in result["P0"].errors] == [
        "HTTP 500 from PyPI (gave up after 3 attempts, 0.0s of waiting)"
    ]
    assert sorted(r.status for r in pypi.fake.requests if "demo-pkg" in r.path) == [500] * 3


def test_html_pages_truncated_bodies_and_resets_are_retried(pypi: Harness) -> None:
    rules = [FaultRule(kind, "demo-pkg") for kind in ("html_200", "truncate", "reset")]
    pypi.fake.faults = FaultPlan(rules=rules)
    assert pypi.package(max_retries=3).versions[0].version == "1.0.0"
    assert [r.fault for r in pypi.fake.requests] == ["html_200", "truncate", "reset", None]


def test_a_spent_rate_budget_defers_the_remaining_packages(pypi: Harness) -> None:
    pypi.fake.set_state(PyPIState([_package(f"pkg-{n}") for n in range(4)]))
    pypi.fake.rate_limit = pypi.fake.rate_remaining = 2
    results = pypi.fetch("pkg-0", "pkg-1", "pkg-2", "pkg-3", concurrency=1)
    assert [results[f"P{n}"].status for n in range(4)] == [
        ProjectStatus.OK, ProjectStatus.OK, ProjectStatus.DEFERRED, ProjectStatus.DEFERRED,
    ]  # fmt: skip
    note = results["P2"].note or ""
    assert note.startswith(
        "PyPI rate budget spent (0 left of 2, keeping 0 in reserve; "
        "resets 20"
    )
    assert results["P2"].errors == ()
    assert len(pypi.fake.requests) == 2  # nothing sent once the budget was spent


def test_a_channel_serves_no_repository_files(pypi: Harness) -> None:
    context = SourceContext(
        settings=PyPISettings(), common=Settings(), env=pypi.fake.env(), cache=pypi.cache,
        web=PageFetcher(Settings(), pypi.cache), clock=lambda: NOW, sleep=pypi.sleeps.append,
    )  # fmt: skip
    source = source_kinds()["pypi"].open(context)
    with pytest.raises(SourceError, match="PyPI is a release channel, not a repository"):
        source.read_file(Location(source="pypi", path="demo-pkg"), "README.md")
    source.close()
    context.web.close()


# -- the shared JSON client (crawler.upstream.json_api) ------------------------------------------


def _refused_url() -> str:
    import socket

    with socket.socket() as probe:  # a port with nobody listening: connection refused
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


def test_an_unreachable_api_is_given_up_on_and_a_flaky_one_is_not(pypi: Harness) -> None:
    settings = PyPISettings(retry_base_delay=0, max_retries=1)
    sleeps: list[float] = []
    api = JsonApi("PyPI", _refused_url(), cache=MemoryCache(), settings=settings, timeout=5,
                  sleep=sleeps.append)  # fmt: skip
    messages = []
    for name in ("a", "b", "c", "d"):
        with pytest.raises(SourceError) as failed:
            api.get(f"/pypi/{name}/json")
        messages.append(str(failed.value))
    api.close()
    assert messages == [
        *["no answer from PyPI: ConnectError (gave up after 2 attempts, 0.0s of waiting)"] * 3,
        "not attempted: PyPI unreachable (3 requests in a row got no answer)",
    ]
    assert sleeps == [0.0, 0.0, 0.0]  # the fourth was not even tried

    # answers cut short come from a reachable server: every request is still made
    pypi.fake.faults = FaultPlan(rates={"truncate": 1.0})
    flaky = JsonApi("PyPI", pypi.fake.base_url, cache=MemoryCache(), timeout=5,
                    settings=PyPISettings(retry_base_delay=0, max_retries=0))  # fmt: skip
    for _ in range(4):
        with pytest.raises(SourceError, match=r"^PyPI answer cut short \(RemoteProtocolError\)"):
            flaky.get("/pypi/demo-pkg/json")
    flaky.close()
    assert len(pypi.fake.requests) == 4


def test_the_shipped_catalog_watches_the_seed_projects_wheels() -> None:
    from crawler.config import load_config

    config = load_config(ROOT / "sources.yaml")
    channels = {p.name: [c.path for c in p.channels] for p in config.projects if p.channels}
    assert channels == {
        "Triton": ["triton"],
        "TileLang": ["tilelang"],
        "Apache TVM": ["apache-tvm"],
        "Helion": ["helion"],
        "FlashInfer": ["flashinfer-python"],
        "vLLM": ["vllm"],
        "SGLang": ["sglang"],
        "NVIDIA Dynamo": ["ai-dynamo"],
        "Mooncake": ["mooncake-transfer-engine"],
        "NIXL": ["nixl"],
        "vLLM Ascend": ["vllm-ascend"],
        "PyTorch": ["torch"],
        "vLLM Spyre": ["vllm-spyre"],
        "torch-npu (Ascend pytorch)": ["torch-npu"],
    }
    assert config.source_settings("pypi") == PyPISettings(versions_per_package=30)


def test_the_demo_state_runs_ahead_of_the_demo_forge(pypi: Harness) -> None:
    from crawler_fakes.pypi import DEMO_CHANNELS, demo_state

    assert DEMO_CHANNELS == {"Kernel DSL": "kernel-dsl", "Serving Engine": "serving-engine"}
    pypi.fake.set_state(demo_state(after=False))
    assert [v.version for v in pypi.package("kernel-dsl").versions] == ["3.8.0", "3.7.0"]
    pypi.fake.set_state(demo_state(after=True))
    kernel = pypi.package("kernel-dsl")
    assert [v.version for v in kernel.versions] == ["3.10.0", "3.9.0", "3.8.0", "3.7.0"]
    assert (kernel.license, kernel.license_source) == ("MIT", "license_expression")
    serving = pypi.package("serving-engine")
    assert [(v.version, v.yanked, v.prerelease) for v in serving.versions] == [
        ("0.33.0rc3", False, True), ("0.32.1", True, False), ("0.32.0", False, False),
    ]  # fmt: skip
    assert (serving.license, serving.license_source) == ("Apache-2.0", "license")
