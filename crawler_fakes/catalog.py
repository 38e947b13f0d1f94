"""A world for the fakes holding every repository and package a catalog names, with plausible
facts of our own: three releases and tags each (named so that the item's own ``tag_pattern``
accepts them), a root license file, three versions of every PyPI package, the pages the catalog
watches (the files given, e.g. the real evidence files of ``../shared`` read by the tests; else
README pages of our own for the three the shipped file watched first), and for an item on a
plain git server (``git:``) a real repository made with the git binary. For audits of a whole
catalog on loopback: the full-catalog tests, the Explorer's browser test and
``bench/catalog_nights.py``."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from crawler.config import Config, Location, ProjectSpec
from crawler.patterns import search
from crawler_fakes.git_http import GitHttpServer, GitWorkRepo
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
GIT_LICENSE = "BSD-3-Clause"  # of an item on a plain git server (torch-npu's terms)
# version names of the shapes catalogs use; an item gets the first its tag_pattern accepts
_SHAPES = (
    "v0.{i}.{m}", "v2.{i}.{m}", "jax-v0.{i}.{m}", "llvmorg-{i}.{m}.0", "rocm-6.{i}.{m}",
    "{i}.{m}.0", "v0.{i}.{m}.dev2026110{m}", "v26.{m}.0-pytorch2.13.0", "b{i}{m:03d}",
)  # fmt: skip


# (repository, path) → text on the default branch; (repository, ref, path) → text on a ref
Files = Mapping[tuple[str, str], str]
RefFiles = Mapping[tuple[str, str, str], str]


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
    assert spec.forge is not None
    repo = _plain_repo(spec.forge.path, index)
    for minor in range(3):
        version, stamp = version_name(spec, index, minor), _stamp(index, minor)
        if tags:
            repo.tags.append(FakeTag(version, f"{index:02d}{minor:02d}" + "a" * 36, stamp))
        if releases:
            repo.releases.append(FakeRelease(version, version, stamp, stamp))
    return repo


def _plain_repo(full_name: str, index: int) -> FakeRepo:
    """A repository with a license, a head and a README of our own, no releases or tags (a
    repository a page names beside its item gets only this)."""
    from crawler.analysis.license_texts import reference_text

    owner, name = full_name.split("/")
    key, spdx, title = LICENSES[index % len(LICENSES)]
    return FakeRepo(
        owner=owner, name=name, id=5000 + index, license_key=key, spdx_id=spdx,
        license_name=title, license_text=reference_text(spdx),
        head_sha=f"{index:04d}" + "f" * 36, head_date="2026-11-20T08:00:00Z",
        tree=[("src/main.py", "e" * 40)],
        files={"README.md": READMES.get(full_name, f"# {name}\n")},
    )  # fmt: skip


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
    files: Files | None = None,
    ref_files: RefFiles | None = None,
) -> CatalogWorld:
    """Every GitHub and Gitee repository and PyPI package ``projects`` name. The items named
    in ``without_releases`` have tags but no release; in ``without_tags`` (and those followed
    by commit), neither: their catalog row is then the head commit. A package declares its
    repository's license. ``files`` and ``ref_files`` are GitHub files (the pages watched),
    over the READMEs of our own; a repository only they name is added, without releases."""
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
        elif spec.forge is not None and spec.forge.source == "git":
            license_id = GIT_LICENSE  # the license file git_repositories() commits
        for channel in spec.channels:
            if channel.source == "pypi":
                versions = [FakeVersion(f"0.{index}.{minor}", _stamp(index, minor))
                            for minor in range(3)]  # fmt: skip
                packages.append(FakePackage(channel.path, versions, license_id))
    _add_files(github, files or {}, ref_files or {}, first_id=len(projects))
    return CatalogWorld(GitHubState(github), PyPIState(packages), GiteeState(gitee))


def _add_files(repos: list[FakeRepo], files: Files, ref_files: RefFiles, first_id: int) -> None:
    by_name = {repo.full_name: repo for repo in repos}
    named = [repository for repository, _ in files] + [r for r, _, _ in ref_files]
    for repository in dict.fromkeys(named):
        if repository not in by_name:
            by_name[repository] = _plain_repo(repository, first_id + len(by_name))
            repos.append(by_name[repository])
    for (repository, path), text in files.items():
        by_name[repository].files[path] = text
    for (repository, ref, path), text in ref_files.items():
        by_name[repository].ref_files.setdefault(ref, {})[path] = text


def git_repositories(projects: Sequence[ProjectSpec], root: Path) -> dict[str, str]:
    """A bare repository under ``root`` for every item on a plain git server (``git:``), made
    with the git binary: a root license file and three tags its ``tag_pattern`` accepts (two
    lightweight, one annotated), dated. Item name → the repository's path under ``root``
    (serve ``root`` with ``GitHttpServer``; the working copies go beside ``root``)."""
    from crawler.analysis.license_texts import reference_text

    made: dict[str, str] = {}
    root.mkdir(parents=True, exist_ok=True)
    for index, spec in enumerate(projects):
        if spec.forge is None or spec.forge.source != "git":
            continue
        path = urlsplit(spec.forge.path).path.strip("/")
        repo = GitWorkRepo(root, path)
        for minor in range(3):
            when = _stamp(index, minor)
            repo.commit(when, {"LICENSE": reference_text(GIT_LICENSE), "VERSION": str(minor)})
            message = "a release" if minor == 2 else None
            repo.tag(version_name(spec, index, minor), message=message, when=when)
        repo.push()
        made[spec.name] = path
    return made


class CatalogFakes:
    """A catalog's world on the fakes, started on loopback: GitHub (``unauth_limit`` anonymous
    requests an hour), PyPI, Gitee, and a real git server for its ``git:`` items. ``config``
    is the catalog with those items' clone URLs pointed at that server; ``env`` points the
    audit at the others. ``new_night()`` clears the request logs and
    refills the anonymous budget (each night, a new hour). ``close()`` stops them all."""

    def __init__(
        self,
        config: Config,
        root: Path,
        token: str | None,
        *,
        accepted_token: str,
        files: Files | None = None,
        ref_files: RefFiles | None = None,
        without_releases: Collection[str] = (),
        unauth_limit: int = 60,
    ) -> None:
        from crawler_fakes.gitee import FakeGitee
        from crawler_fakes.github import FakeGitHub
        from crawler_fakes.pypi import FakePyPI

        world = catalog_world(config.projects, without_releases=without_releases,
                              files=files, ref_files=ref_files)  # fmt: skip
        self.unauth_limit = unauth_limit
        repositories = git_repositories(config.projects, root / "git")
        self.git = GitHttpServer(root / "git").start()
        self.github = FakeGitHub(world.github, token=accepted_token,
                                 unauth_limit=unauth_limit).start()  # fmt: skip
        self.pypi = FakePyPI(world.pypi).start()
        self.gitee = FakeGitee(world.gitee).start()
        urls = {name: self.git.url(path) for name, path in repositories.items()}
        self.config = _on_git_server(config, urls)
        self.env = {**self.github.env(token), **self.pypi.env(), **self.gitee.env()}

    def new_night(self) -> None:
        for fake in (self.github, self.pypi, self.gitee):
            fake.reset_log()
        with self.git.lock:
            self.git.log.clear()
        self.github.set_rate_limit(self.unauth_limit, authenticated=False)

    def close(self) -> None:
        for fake in (self.github, self.pypi, self.gitee, self.git):
            fake.stop()


def _on_git_server(config: Config, urls: Mapping[str, str]) -> Config:
    """The catalog with each named item's clone URL replaced (its ``git:`` on loopback, which
    the private-address guard then allows: the URL comes from sources.yaml, as a page's)."""
    projects = tuple(
        spec.model_copy(update={"forge": Location(source="git", path=urls[spec.name])})
        if spec.name in urls else spec
        for spec in config.projects
    )  # fmt: skip
    if not urls:
        return config.model_copy(update={"projects": projects})
    settings = config.settings.model_copy(update={"allow_private_addresses": True})
    return config.model_copy(update={"projects": projects, "settings": settings})
