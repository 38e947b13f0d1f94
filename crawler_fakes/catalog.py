"""A world for the fakes holding every repository and package a catalog names, with plausible
facts of our own: three releases and tags each (named so that the item's own ``tag_pattern``
accepts them), a root license file, the README pages the shipped ``sources.yaml`` watches, and
three versions of every PyPI package. For audits of a whole catalog on loopback: the Explorer's
browser test, the cost of a night in the tests and ``bench/audit_budget.py``."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from crawler.config import ProjectSpec
from crawler.patterns import search
from crawler_fakes.gitee_state import GiteeRelease, GiteeRepo, GiteeState
from crawler_fakes.github_state import FakeRelease, FakeRepo, FakeTag, GitHubState
from crawler_fakes.pypi import FakePackage, FakeVersion, PyPIState

# README pages with the tables and pins the shipped sources.yaml watches (our own text)
READMES = {
    "tile-ai/tilelang": "# TileLang\n\n## Platform and Backend Support\n\n"
    "| Backend | Target | Support level |\n|---|---|---|\n| NVIDIA CUDA | sm_80+ | Primary |\n"
    "| AMD ROCm/HIP | gfx942 | Supported |\n| Apple Metal | M-series | Experimental |\n"
    "| Huawei Ascend | Ascend 910 | Ecosystem |\n\n## Install\n",
    "vllm-project/vllm-ascend": "# vLLM Ascend\n\n## Branch\n\n"
    "| Branch | Status | Note |\n|---|---|---|\n| main | Maintained | CI on vLLM main |\n"
    "| v0.9.1-dev | Maintained | for vLLM 0.9.1 |\n\n## License\n",
    "EnflameTechnology/torch-gcu": "# torch-gcu\n\n## TopsRider SDK Compatibility\n\n"
    "| TopsRider Version | torch_gcu Version |\n|---|---|\n| 3.4.0 | 2.5.1 |\n\n"
    "## Hardware Support\n\n| Product Model | Product Series |\n|---|---|\n"
    "| S60 | Enflame CloudBlazer Inference |\n\n"
    "## Install\n\n`pip install torch_gcu-2.5.1-cp310-linux_x86_64.whl`\n",
}
GITEE_README = (
    "# vLLM Iluvatar plugin\n\nRequires vllm >=0.27.1,<0.28.0, CoreX runtime >=4.2.0 and "
    "ixformer >=0.6.0.\n"
)
LICENSES = (
    ("mit", "MIT", "MIT License"),
    ("apache-2.0", "Apache-2.0", "Apache License 2.0"),
    ("bsd-3-clause", "BSD-3-Clause", 'BSD 3-Clause "New" or "Revised" License'),
)
# version names of the shapes catalogs use; an item gets the first its tag_pattern accepts
_SHAPES = (
    "v0.{i}.{m}", "v2.{i}.{m}", "jax-v0.{i}.{m}", "llvmorg-{i}.{m}.0", "rocm-6.{i}.{m}",
    "{i}.{m}.0", "v0.{i}.{m}.dev2026110{m}", "v26.{m}.0-pytorch2.13.0", "b{i}{m:03d}",
)  # fmt: skip


@dataclass
class CatalogWorld:
    github: GitHubState
    pypi: PyPIState
    gitee: GiteeState


def version_name(spec: ProjectSpec, index: int, minor: int) -> str:
    """The ``minor``-th version of the ``index``-th item, in a shape its tag_pattern accepts
    (the first shape when none does, or when it has no pattern)."""
    names = [shape.format(i=index, m=minor) for shape in _SHAPES]
    if spec.tag_pattern is None:
        return names[0]
    return next((n for n in names if search(spec.tag_pattern, n, subject=n)), names[0])


def _stamp(index: int, minor: int) -> str:
    return f"2026-{8 + minor:02d}-{1 + index % 28:02d}T12:00:00Z"


def _github_repo(
    spec: ProjectSpec, index: int, releases: bool, tags: bool
) -> FakeRepo:
    from crawler.analysis.license_texts import reference_text

    assert spec.forge is not None
    owner, name = spec.forge.path.split("/")
    key, spdx, title = LICENSES[index % len(LICENSES)]
    repo = FakeRepo(
        owner=owner, name=name, id=5000 + index, license_key=key, spdx_id=spdx,
        license_name=title, license_text=reference_text(spdx),
        head_sha=f"{index:02d}" + "f" * 38, head_date="2026-11-20T08:00:00Z",
        tree=[("src/main.py", "e" * 40)],
        files={"README.md": READMES.get(spec.forge.path, f"# {name}\n")},
    )  # fmt: skip
    for minor in range(3):
        version, stamp = version_name(spec, index, minor), _stamp(index, minor)
        if tags:
            repo.tags.append(FakeTag(version, f"{index:02d}{minor:02d}" + "a" * 36, stamp))
        if releases:
            repo.releases.append(FakeRelease(version, version, stamp, stamp))
    return repo


def _gitee_repo(spec: ProjectSpec, index: int) -> GiteeRepo:
    from crawler.analysis.license_texts import reference_text

    assert spec.forge is not None
    owner, name = spec.forge.path.split("/")
    return GiteeRepo(
        owner=owner, name=name, id=9100 + index, license="Apache-2.0",
        default_branch="release/v0.27.1", head_sha="c" * 40, head_date="2026-11-01T02:00:00Z",
        releases=[GiteeRelease("v0.27.1", "2026-10-02T02:00:00Z", "v0.27.1")],
        files={"LICENSE": reference_text("Apache-2.0"), "README.md": GITEE_README},
    )  # fmt: skip


def catalog_world(
    projects: Sequence[ProjectSpec],
    *,
    without_releases: Collection[str] = (),
    without_tags: Collection[str] = (),
) -> CatalogWorld:
    """Every GitHub and Gitee repository and PyPI package ``projects`` name. The items named
    in ``without_releases`` have tags but no release; in ``without_tags`` (and those followed
    by commit), neither: their catalog row is then the head commit. A package declares its
    repository's license."""
    github, gitee, packages = [], [], []
    for index, spec in enumerate(projects):
        license_id = LICENSES[index % len(LICENSES)][1]
        if spec.forge is not None and spec.forge.source == "github":
            tags = spec.name not in without_tags and spec.track != "commits"
            releases = tags and spec.name not in without_releases
            github.append(_github_repo(spec, index, releases, tags))
        elif spec.forge is not None and spec.forge.source == "gitee":
            gitee.append(_gitee_repo(spec, index))
            license_id = "Apache-2.0"
        for channel in spec.channels:
            if channel.source == "pypi":
                versions = [FakeVersion(f"0.{index}.{minor}", _stamp(index, minor))
                            for minor in range(3)]  # fmt: skip
                packages.append(FakePackage(channel.path, versions, license_id))
    return CatalogWorld(GitHubState(github), PyPIState(packages), GiteeState(gitee))
