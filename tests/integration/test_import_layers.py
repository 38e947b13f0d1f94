"""The package imports one way: no circle between its modules, and the layers contract of
pyproject.toml (``lint-imports``) kept. Read from the source by grimp, as import-linter does."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

from tests.support import ROOT

LINT = (
    "import sys; from importlinter.cli import lint_imports; "
    "sys.exit(lint_imports(config_filename=sys.argv[1], no_cache=True, no_logo=True))"
)


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("crawler", "crawler_fakes", cache_dir=None)


def _lazy(graph: grimp.ImportGraph, importer: str, imported: str) -> bool:
    """Every import of ``imported`` in ``importer`` sits inside a function (indented)."""
    spec = importlib.util.find_spec(importer)
    assert spec is not None and spec.origin is not None
    lines = Path(spec.origin).read_text().splitlines()
    details = graph.get_import_details(importer=importer, imported=imported)
    return all(lines[d["line_number"] - 1].startswith((" ", "\t")) for d in details)


def _circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every strongly connected group of two or more modules (Tarjan). One kind of import is
    not counted: a package opening its own submodule inside a function (each source's
    ``open`` imports its ``fetch`` module only when the audit opens it, which keeps the
    registry cheap; the submodule then reads its package's settings)."""
    edges = {
        module: sorted(
            imported
            for imported in graph.find_modules_directly_imported_by(module)
            if not (imported.startswith(module + ".") and _lazy(graph, module, imported))
        )
        for module in graph.modules
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in edges[module]:
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return sorted(found)


def test_no_module_circle(graph: grimp.ImportGraph) -> None:
    assert _circles(graph) == []


def test_the_circle_finder_sees_a_circle(graph: grimp.ImportGraph) -> None:
    """The check above can fail: one import back from the bottom closes a circle it names."""
    graph.add_import(importer="crawler.model", imported="crawler.config.loader")
    try:
        circles = _circles(graph)
    finally:
        graph.remove_import(importer="crawler.model", imported="crawler.config.loader")
    assert circles == [
        ["crawler.config.items", "crawler.config.loader", "crawler.config.projects",
         "crawler.config.settings", "crawler.model"]
    ]  # fmt: skip


def test_configuration_and_analysis_import_no_source(graph: grimp.ImportGraph) -> None:
    below = ["crawler.model", "crawler.config", "crawler.analysis"]
    for low in below:
        modules = {low} | graph.find_descendants(low)
        for module in sorted(modules):
            chain = graph.find_shortest_chains(importer=module, imported="crawler.upstream")
            assert chain == set(), module


def test_layers_contract_is_kept() -> None:
    """``lint-imports`` as CI runs it, in a child process: it reconfigures logging (dictConfig),
    which would silence the loggers of the tests that follow."""
    run = subprocess.run(
        [sys.executable, "-c", LINT, str(ROOT / "pyproject.toml")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Contracts: 5 kept, 0 broken." in run.stdout


def test_only_the_demo_imports_the_fakes_and_only_inside_a_function(
    graph: grimp.ImportGraph,
) -> None:
    """The fakes are beside the product, not in it: of ``crawler`` only ``crawler.demo`` imports
    ``crawler_fakes``, and nothing loads ``crawler.demo`` (or, from its package opening, a fake)
    before ``crawler demo`` runs."""
    fakes = {"crawler_fakes"} | graph.find_descendants("crawler_fakes")
    demo = {"crawler.demo"} | graph.find_descendants("crawler.demo")
    product = ({"crawler"} | graph.find_descendants("crawler")) - demo
    importers = {m for m in product | demo if graph.find_modules_directly_imported_by(m) & fakes}
    assert importers == {"crawler.demo.scenario", "crawler.demo"}
    assert all(_lazy(graph, "crawler.demo", fake) for fake in sorted(fakes))
    assert _lazy(graph, "crawler.demo", "crawler.demo.scenario")
    openers = sorted(m for m in product if graph.find_modules_directly_imported_by(m) & demo)
    assert openers == ["crawler.cli"]
    assert all(_lazy(graph, "crawler.cli", module) for module in sorted(demo))
