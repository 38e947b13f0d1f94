"""Two recorded upstream states that, audited one after the other, produce every change kind.

License texts are not typed here: they come from the installed license-data package at run
time, exactly as the detector sees them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from crawler.analysis.license_texts import reference_text
from crawler_fakes.github import FakeRelease, FakeRepo, FakeTag, GitHubState

COLLABORATION_NOTE = (
    "\n**During the period from December 1, 2024, to March 14, 2025, this project is subject "
    "to additional collaboration terms with Example Corporation.**\n"
)

APPENDED_NOTICE = (
    "\nThe bundled model weights under weights/ are NOT covered by this license and may "
    "not be redistributed.\n"
)

DEMO_PROJECTS_BEFORE = """\
github:
  graphql_batch: 4
settings:
  allow_private_addresses: true   # the demo's vendor site listens on loopback
  links_per_night: 100            # the link checks, on the vendor site's links only:
  links_exclude:                  # the fakes answer with public hosts' URLs, never asked
    - '^https://(github[.]com|(gitee|gitlab|pypi|vendor)[.]example)/'
projects:
  - name: Kernel DSL
    repo: demo-org/kernel-dsl
    pypi: kernel-dsl
  - name: Serving Engine
    repo: demo-org/serving-engine
    pypi: serving-engine
    homepage: {site}/docs/serving/
  - name: Tile Language
    repo: demo-org/tile-lang
  - name: Graph Compiler
    repo: demo-org/graph-compiler
  - name: Kernel Bench
    repo: demo-org/kernel-bench
  - name: LLM Deploy
    repo: demo-org/llm-deploy
  - name: Transfer Library
    repo: demo-org/transfer-lib
  - name: Cache Store
    repo: demo-org/cache-store
  - name: Legacy Kernels
    repo: demo-org/legacy-kernels
  - name: Vanished Operators
    repo: demo-org/vanished-ops
  - name: Retired Plugin
    repo: demo-org/retired-plugin
  - name: Accel Plugin
    gitee: demo-vendor/accel-plugin
    pages:
      - name: README pins
        path: README.md
        pins:
          vllm: 'vllm (>=[0-9.]+,<[0-9.]+)'
        integration:
          project: Serving Engine
          platform: Accel NPU
          status: community plugin
          layer: serving
          version: vllm
  - name: Kernel Toolkit
    gitee: demo-vendor/kernel-toolkit
  - name: Compiler Toolkit
    gitlab: demo-group/compilers/toolkit
  - name: Runtime Shim
    gitlab: demo-group/runtime-shim
  - name: Closed SDK
    not_trackable: no public repository; its versions go to customers only
    homepage: https://vendor.example/sdk
  - name: Vendor Platform
    repo: demo-org/vendor-platform
    homepage: {site}/platform/
    pages:
      - name: support matrix
        url: {site}/docs/support.html
        tables:
          - name: hardware
            selector: "table#hardware"
            key: [Platform]
            integrations:
              project: {{value: Serving Engine}}
              platform: Platform
              status: Status
              version: Since
              layer: serving
              pins: [serving-engine]
            status_map:
              yes supported: upstream
              in progress: in progress
            platform_map:
              NVIDIA GPU: NVIDIA GPU
              AMD Instinct MI300: AMD GPU
              Cambricon MLU: Cambricon MLU
              Hygon DCU: Hygon DCU / HCU
        pins:
          serving-engine: "serving-engine (>=[0-9.]+,<[0-9.]+)"
        text: "div#status"
"""

# The second night: one project retired from the catalog, one added.
DEMO_PROJECTS_AFTER = DEMO_PROJECTS_BEFORE.replace(
    "  - name: Retired Plugin\n    repo: demo-org/retired-plugin\n",
    "  - name: New Accelerator Plugin\n    repo: demo-org/new-plugin\n",
)

def vendor_links(site: Any, after: bool) -> None:
    """The vendor site's other pages the catalog cites: the platform's home, moved for good on
    the second night (301); a serving guide that is gone (404) both nights, one night apart
    only in the demo's story: failing, not reported yet (a 404 is reported on the second
    night in a row, and the demo's two nights run seconds apart)."""
    site.set_page("/docs/serving/", b"<p>Not Found</p>", status=404)
    if after:
        site.redirect("/platform/", "/platform/v2/", 301)
        site.set_page("/platform/v2/", b"<h1>Vendor Platform</h1>")
    else:
        site.set_page("/platform/", b"<h1>Vendor Platform</h1>")


SUPPORT_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Support</title></head>
<body><h1>Supported hardware</h1>
<div id="status"><p>{status}</p></div>
<table id="hardware"><tr><th>Platform</th><th>Status</th><th>Since</th></tr>
{rows}
</table>
<p>Install with serving-engine {pin} and the matching SDK.</p>
</body></html>
"""


def support_page(after: bool) -> bytes:
    rows = [
        ("NVIDIA GPU", "✅ supported", "v0.1"),
        ("AMD Instinct MI300", "✅ supported", "v0.3"),
        ("Cambricon MLU", "✅ supported" if after else "🚧 in progress", "v0.33" if after else "—"),
        ("Hygon DCU", "🚧 in progress", "—"),
    ]
    if after:
        rows.insert(0, rows.pop(1))  # re-sorted rows are not a change
    html_rows = "\n".join(
        f"<tr><td>{name}</td><td>{status}</td><td>{since}</td></tr>" for name, status, since in rows
    )
    status = (
        "Status of hardware backends as of the November release."
        if after
        else "Status of hardware backends as of the October release."
    )
    pin = ">=0.28.0,<0.29.0" if after else ">=0.27.1,<0.28.0"
    return SUPPORT_PAGE.format(status=status, rows=html_rows, pin=pin).encode()


def _sha(seed: str) -> str:
    import hashlib

    return hashlib.sha1(seed.encode()).hexdigest()


def _rel(tag: str, day: str, *, pre: bool = False, name: str | None = None) -> FakeRelease:
    stamp = f"2026-{day}T12:00:00Z"
    return FakeRelease(
        tag=tag, name=name or tag, published_at=stamp, created_at=stamp, prerelease=pre
    )


def _repo(name: str, repo_id: int, spdx: str | None, **kwargs: Any) -> FakeRepo:
    repo = FakeRepo(
        owner="demo-org",
        name=name,
        id=repo_id,
        license_text=reference_text(spdx) if spdx else None,
        head_sha=_sha(name),
        head_date="2026-10-30T08:00:00Z",
        **kwargs,
    )
    if spdx:
        repo = replace(repo, license_key=spdx.lower(), spdx_id=spdx, license_name=spdx)
    return repo


def state_before() -> GitHubState:
    mit_with_note = reference_text("MIT").replace("\n\n", "\n" + COLLABORATION_NOTE + "\n", 1)
    return GitHubState(
        repos=[
            _repo("kernel-dsl", 101, "MIT", releases=[_rel("v3.8.0", "10-01")]),
            _repo(
                "serving-engine",
                102,
                "Apache-2.0",
                releases=[_rel("v0.32.0", "10-10"), _rel("v0.32.1", "10-20")],
            ),
            replace(
                _repo("tile-lang", 103, None, releases=[_rel("v0.1.14", "09-01")]),
                license_key="other",
                spdx_id="NOASSERTION",
                license_name="Other",
                license_text=mit_with_note,
            ),
            _repo("graph-compiler", 104, "Apache-2.0", releases=[_rel("v0.27.0", "09-20")]),
            _repo(
                "kernel-bench",
                105,
                "BSD-3-Clause",
                tags=[FakeTag("v0.1.0", _sha("kb1"), "2026-08-01T00:00:00Z")],
            ),
            _repo("llm-deploy", 106, "Apache-2.0"),
            _repo(
                "transfer-lib",
                107,
                "Apache-2.0",
                releases=[_rel("v1.5.1", "10-15")],
                tree=[("src/lib.c", _sha("src"))],
            ),
            _repo("cache-store", 108, "Apache-2.0", releases=[_rel("v0.3.13", "10-03")]),
            _repo("legacy-kernels", 109, "MIT", releases=[_rel("v2.0.0", "05-05")]),
            _repo("vanished-ops", 110, "Apache-2.0", releases=[_rel("v5.4.0", "09-28")]),
            _repo("retired-plugin", 111, "Apache-2.0", releases=[_rel("v0.9.0", "03-01")]),
            replace(
                _repo("vendor-platform", 112, "Apache-2.0", releases=[_rel("v3.7.1", "08-07")]),
                # GitHub's licensee stops at END OF TERMS AND CONDITIONS: it reads Apache-2.0
                license_text=reference_text("Apache-2.0") + APPENDED_NOTICE,
            ),
        ]
    )


def state_after() -> GitHubState:
    repos = {r.name: r for r in state_before().repos}
    evil = "v3.9.0 | <b>pwned</b> [click](https://evil.example)\nsecond line"
    repos["kernel-dsl"].releases.append(_rel("v3.9.0", "10-27", name=evil))
    repos["serving-engine"].releases.append(_rel("v0.33.0rc3", "11-02", pre=True))
    repos["serving-engine"].releases[:] = [
        r for r in repos["serving-engine"].releases if r.tag != "v0.32.1"
    ]  # withdrawn upstream: release_removed
    tile = repos["tile-lang"]
    assert tile.license_text is not None
    tile.license_text = tile.license_text.replace("Example Corporation", "Example Corp")
    compiler = repos["graph-compiler"]
    compiler.license_text = reference_text("MIT")
    compiler.license_key, compiler.spdx_id, compiler.license_name = "mit", "MIT", "MIT License"
    repos["kernel-bench"].tags.append(FakeTag("v0.2.0", _sha("kb2"), "2026-11-01T00:00:00Z"))
    repos["llm-deploy"].head_sha = _sha("llm-deploy-2")
    repos["llm-deploy"].head_date = "2026-11-03T09:30:00Z"
    transfer = repos["transfer-lib"]
    transfer.head_sha = _sha("transfer-2")
    transfer.tree.append(("examples/device/ep/LICENSE-DeepEP", _sha("deepep")))
    repos["cache-store"].moved_to = "demo-org/kv-cache-store"
    repos["legacy-kernels"].archived = True
    # its own description names where its kernels went: upstream_superseded
    repos["legacy-kernels"].description = "Superseded by demo-org/kernel-dsl, where they ship now."
    new_plugin = _repo("new-plugin", 113, "Apache-2.0", releases=[_rel("v0.1.0", "11-04")])
    del repos["retired-plugin"]
    del repos["vanished-ops"]  # gone (or private): an error, never "release removed"
    return GitHubState(repos=[*repos.values(), new_plugin])
