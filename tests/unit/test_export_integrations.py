"""Support tables → integration records: mappings from sources.yaml, and every unmapped cell
is an error naming the table, the row and the value."""

from __future__ import annotations

from dataclasses import replace

import pytest

from crawler.config import ConfigError, TableIntegrations, parse_config
from crawler.export import ExportError, ExportInput, TableMapping, build_catalog
from crawler.export.export_input import WatchedTable
from tests.support import ROOT
from tests.support.export import AUDIT_DATE, KERNEL_TABLE, seed_export


def _with_kernel_table(table: object) -> ExportInput:
    export = seed_export()
    tilelang = export.projects[1]
    page = replace(tilelang.pages[0], tables=(table,))
    projects = list(export.projects)
    projects[1] = replace(tilelang, pages=(page,))
    return replace(export, projects=tuple(projects))


def _problems(export: ExportInput) -> list[str]:
    with pytest.raises(ExportError) as info:
        build_catalog(export)
    return info.value.problems


def _integration(catalog: dict[str, object], ident: str) -> dict[str, object]:
    records = catalog["integrations"]
    assert isinstance(records, list)
    return next(r for r in records if r["id"] == ident)


def test_rows_become_integrations_with_page_status_and_dated_evidence() -> None:
    catalog = build_catalog(seed_export())
    assert [r["id"] for r in catalog["integrations"]] == [
        "tilelang/backend-support/backends/huawei-ascend-ascend",
        "tilelang/backend-support/backends/nvidia-cuda-cuda",
        "tilelang/backend-support/backends/webgpu-webgpu",
        "torch-gcu/compatibility/sdk/v3-7-1",
        "vllm-ascend/maintained-branches/branches/main",
        "vllm-ascend/maintained-branches/branches/releases-v0-18-0",
        "vllm-iluvatar-plugin/readme-pins",
    ]
    webgpu = _integration(catalog, "tilelang/backend-support/backends/webgpu-webgpu")
    assert (webgpu["project"], webgpu["platform"], webgpu["layer"], webgpu["status"]) == (
        "tilelang", "webgpu", "kernel programming", "in progress",
    )  # fmt: skip
    assert webgpu["evidence"] == [
        {
            "url": "https://github.com/tile-ai/tilelang/blob/main/README.md",
            "crawled": True,
            "page": "backend support",
            "table": "backends",
            "row": {"Backend": "WebGPU", "Target": "webgpu"},
            "wording": "Experimental",
            "status": "in progress",
        }
    ]
    assert [p["id"] for p in catalog["platforms"]] == [
        "enflame-gcu", "huawei-ascend", "iluvatar-corex", "nvidia-gpu", "webgpu",
    ]  # fmt: skip
    # the page read on the catalog's date says no date of its own; one read earlier says when
    gcu = _integration(catalog, "torch-gcu/compatibility/sdk/v3-7-1")
    assert [(e["crawled"], e["date"]) for e in gcu["evidence"]] == [(True, "2026-11-04")]


def test_a_table_of_another_projects_plugin_names_the_integrated_project_and_via() -> None:
    catalog = build_catalog(seed_export())
    branch = _integration(catalog, "vllm-ascend/maintained-branches/branches/releases-v0-18-0")
    assert (branch["project"], branch["via"], branch["platform"], branch["version_range"]) == (
        "vllm", "vllm-ascend", "huawei-ascend", "releases/v0.18.0",
    )  # fmt: skip


def test_pins_become_version_facts_of_their_integration() -> None:
    catalog = build_catalog(seed_export())
    gcu = _integration(catalog, "torch-gcu/compatibility/sdk/v3-7-1")
    assert gcu["version_range"] == "2.10.0"
    assert gcu["pins"] == [{"name": "wheel", "value": "2.10.0"}]
    gitee = _integration(catalog, "vllm-iluvatar-plugin/readme-pins")
    assert (gitee["project"], gitee["platform"], gitee["status"], gitee["version_range"]) == (
        "vllm", "iluvatar-corex", "community plugin", ">=0.27.1,<0.28.0",
    )  # fmt: skip
    assert gitee["pins"] == [
        {"name": "CoreX runtime", "value": ">=5.0.0"},
        {"name": "ixformer", "value": None},
    ]


def test_status_wording_the_map_does_not_cover_is_an_error_naming_table_row_and_value() -> None:
    table = replace(KERNEL_TABLE, rows=(*KERNEL_TABLE.rows, ("Apple Metal", "metal", "Preview")))
    problems = _problems(_with_kernel_table(table))
    assert problems == [
        "project 'TileLang', page 'backend support', table 'backends', row 'Apple Metal / metal': "
        "platform 'Apple Metal' is not in platform_map: add 'Apple Metal: <catalog platform "
        "name>' (or null: no record) to the table in sources.yaml",
        "project 'TileLang', page 'backend support', table 'backends', row 'Apple Metal / metal': "
        "status 'Preview' is not in status_map: add 'Preview: <one of upstream, official "
        "plugin, vendor integration, community plugin, in progress, unverified>' (or null: no "
        "record) to the table in sources.yaml",
    ]


def test_a_wording_mapped_to_null_gives_no_record_and_says_so_in_the_file() -> None:
    """`n/a: null` in status_map (or a platform mapped to null) is a row the page states no
    support for: no record, and no error; a wording the map does not name stays an error."""
    assert KERNEL_TABLE.mapping is not None
    mapping = replace(
        KERNEL_TABLE.mapping,
        status_map={**KERNEL_TABLE.mapping.status_map, "n/a": None},
        platform_map={
            **KERNEL_TABLE.mapping.platform_map, "LLVM CPU": None, "Apple Metal": "Apple Silicon"
        },
    )
    rows = (*KERNEL_TABLE.rows, ("Apple Metal", "metal", "n/a"), ("LLVM CPU", "llvm", "Primary"))
    table = replace(KERNEL_TABLE, rows=rows, mapping=mapping)
    ids = [r["id"] for r in build_catalog(_with_kernel_table(table))["integrations"]]
    assert [i for i in ids if i.startswith("tilelang/")] == [
        "tilelang/backend-support/backends/huawei-ascend-ascend",
        "tilelang/backend-support/backends/nvidia-cuda-cuda",
        "tilelang/backend-support/backends/webgpu-webgpu",
    ]
    config = parse_config(
        TABLE_YAML.format(
            mapping="            integrations: {platform: Platform, status: Status, "
            "layer: serving}\n            status_map: {'yes': upstream, 'n/a': null}\n"
            "            platform_map: {'Apple GPU': null, 'NVIDIA GPU': NVIDIA GPU}\n"
        )
    )
    table_spec = config.projects[0].pages[0].tables[0]
    assert (table_spec.status_map, table_spec.platform_map) == (
        {"yes": "upstream", "n/a": None}, {"Apple GPU": None, "NVIDIA GPU": "NVIDIA GPU"}
    )


def test_a_map_names_a_cells_visible_text_a_link_target_aside() -> None:
    """DeepSparkInference's ✅ links to each model's folder ("yes <models/…>"): the map names
    "yes", as a row's identity is its key cells' visible text."""
    assert KERNEL_TABLE.mapping is not None
    rows = (("NVIDIA CUDA <https://docs.example/cuda>", "cuda", "Primary <models/a/b>"),)
    record = build_catalog(_with_kernel_table(replace(KERNEL_TABLE, rows=rows)))
    found = [r for r in record["integrations"] if r["project"] == "tilelang"]
    assert [(r["platform"], r["status"]) for r in found] == [("nvidia-gpu", "upstream")]
    assert found[0]["evidence"][0]["wording"] == "Primary <models/a/b>"
    wrong = replace(KERNEL_TABLE, rows=(("NVIDIA CUDA", "cuda", "Prime <models/a>"),))
    assert _problems(_with_kernel_table(wrong))[0].endswith(
        "status 'Prime <models/a>' is not in status_map: add 'Prime <models/a>: <one of "
        "upstream, official plugin, vendor integration, community plugin, in progress, "
        "unverified>' (or null: no record) to the table in sources.yaml"
    )


OPS = WatchedTable(
    name="ops",
    columns=("Operation", "CANN", "CPU", "CUDA"),
    key_columns=("Operation",),
    rows=(
        ("ABS", "yes", "yes", "yellow"),
        ("ADD", "no", "yes", "yes"),
        ("ARGMAX", "yellow", "yes", "yes"),
    ),
    mapping=TableMapping(
        TableIntegrations(platform_columns=("CANN", "CUDA"), layer="kernel programming"),
        status_map={"yes": "upstream", "yellow": "in progress", "no": None},
        platform_map={"CANN": "Huawei Ascend", "CUDA": "NVIDIA GPU"},
        combine="strongest",
    ),
)


def test_a_table_whose_columns_are_the_platforms_gives_one_record_per_platform() -> None:
    """An operation × backend grid (llama.cpp's ops table): each named column is a platform,
    each cell under it a status; combined, one record per platform with its strongest status
    and the first row of each wording as evidence (never a hundred rows that say the same)."""
    catalog = build_catalog(_with_kernel_table(OPS))
    found = {r["platform"]: r for r in catalog["integrations"] if r["project"] == "tilelang"}
    assert sorted(found) == ["huawei-ascend", "nvidia-gpu"]
    ascend, nvidia = found["huawei-ascend"], found["nvidia-gpu"]
    assert (ascend["id"], ascend["status"]) == (
        "tilelang/backend-support/ops/abs-cann", "upstream"
    )
    assert [(e["row"], e["wording"], e["status"]) for e in ascend["evidence"]] == [
        ({"Operation": "ABS", "CANN": "yes"}, "yes", "upstream"),
        ({"Operation": "ARGMAX", "CANN": "yellow"}, "yellow", "in progress"),
    ]
    assert [e["row"]["Operation"] for e in nvidia["evidence"]] == ["ADD", "ABS"]
    config = parse_config(
        TABLE_YAML.format(
            mapping="            integrations: {platform_columns: [CANN, CUDA], "
            "layer: serving}\n            status_map: {'yes': upstream}\n"
        )
    )
    assert config.projects[0].pages[0].tables[0].integrations.platform_columns == (  # type: ignore[union-attr]
        "CANN", "CUDA"
    )
    both = "            integrations: {platform_columns: [CANN], platform: P, layer: serving}\n"
    assert "with platform_columns, each column's header is the platform" in _config_error(both)
    unquoted = (
        "            integrations: {platform_columns: [CANN], layer: serving}\n"
        "            status_map: {yes: upstream}\n"
    )
    assert "a key read as the boolean true: YAML reads an unquoted yes" in _config_error(unquoted)
    none = "            integrations: {layer: serving}\n"
    assert "integrations need 'platform' and 'status'" in _config_error(none)
    missing = replace(OPS, columns=("Operation", "CANN", "CPU"), rows=(("ABS", "yes", "yes"),))
    assert _problems(_with_kernel_table(missing)) == [
        "project 'TileLang', page 'backend support', table 'ops': no column 'CUDA' in the table "
        "(columns: Operation, CANN, CPU): fix 'integrations' in sources.yaml"
    ]


def test_a_row_keyed_by_a_long_sentence_gets_a_short_stable_id() -> None:
    """A list item is its own key (FlashAttention's "All head dimensions up to 256. …", 200
    characters): its id passed the schema's 200 and the export failed validation."""
    from crawler.export import validate_catalog

    long = "All head dimensions up to 256 " + "and a long explanation of them " * 6
    other = long.replace("256", "128")
    rows = ((long, "cuda", "Primary"), (other, "cuda", "Primary"))
    assert KERNEL_TABLE.mapping is not None
    mapping = replace(
        KERNEL_TABLE.mapping, platform_map={long: "NVIDIA GPU", other: "AMD GPU"}
    )
    table = replace(KERNEL_TABLE, rows=rows, mapping=mapping)
    catalog = build_catalog(_with_kernel_table(table))
    ids = [r["id"] for r in catalog["integrations"] if r["project"] == "tilelang"]
    assert len(ids) == 2 and len(set(ids)) == 2
    prefix = "tilelang/backend-support/backends/all-head-"
    assert all(len(i) <= 120 and i.startswith(prefix) for i in ids)
    assert validate_catalog(catalog, AUDIT_DATE) == []
    assert ids == [r["id"] for r in build_catalog(_with_kernel_table(table))["integrations"]
                   if r["project"] == "tilelang"]  # fmt: skip


def test_map_lookup_ignores_case_and_spacing_but_not_wording() -> None:
    table = replace(KERNEL_TABLE, rows=(("nvidia  cuda", "cuda", "PRIMARY"),))
    record = build_catalog(_with_kernel_table(table))["integrations"][0]
    assert (record["platform"], record["status"]) == ("nvidia-gpu", "upstream")


def test_a_missing_column_and_an_unknown_project_are_errors() -> None:
    assert KERNEL_TABLE.mapping is not None
    spec = KERNEL_TABLE.mapping.integrations.model_copy(
        update={"status": KERNEL_TABLE.mapping.integrations.status.model_copy(
            update={"column": "Status"})}
    )  # fmt: skip
    table = replace(KERNEL_TABLE, mapping=replace(KERNEL_TABLE.mapping, integrations=spec))
    assert _problems(_with_kernel_table(table)) == [
        "project 'TileLang', page 'backend support', table 'backends': no column 'Status' in the "
        "table (columns: Backend, Target, Support level): fix 'integrations' in sources.yaml"
    ]
    export = seed_export()
    gitee = export.projects[-1]
    page = gitee.pages[0]
    assert page.integration is not None
    moved = replace(page, integration=page.integration.model_copy(update={"project": "PyTorch"}))
    export = replace(export, projects=(*export.projects[:-1], replace(gitee, pages=(moved,))))
    assert _problems(export) == [
        "project 'vLLM Iluvatar plugin', page 'README pins': project 'PyTorch' is not in the "
        "catalog: add it to sources.yaml or fix the integration's 'project'"
    ]


def test_two_project_names_with_one_id_are_an_error() -> None:
    export = seed_export()
    clash = replace(export.projects[0], name="Triton!", order=99)
    assert _problems(replace(export, projects=(*export.projects, clash))) == [
        "projects 'Triton' and 'Triton!' both get the id 'triton': rename one in sources.yaml"
    ]


TABLE_YAML = """\
projects:
  - name: Engine
    repo: o/engine
    pages:
      - name: support
        url: https://example.com/support
        tables:
          - name: hw
            selector: table
            key: [Platform]
{mapping}
        pins:
          engine: 'engine (\\S+)'
"""


def _config_error(mapping: str) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(TABLE_YAML.format(mapping=mapping))
    return str(info.value)


def test_shipped_sources_yaml_maps_every_watched_table_or_says_why_not() -> None:
    """Each table of the shipped file becomes integration records, or it (or its page) says
    why it is watched for its changes alone; each page maps something or says why."""
    from crawler.config import load_config

    config = load_config(ROOT / "sources.yaml")
    pages = [(p.name, page) for p in config.projects for page in p.pages]
    unexplained = [
        (name, page.name, table.name)
        for name, page in pages
        for table in page.tables
        # mapped, or said why not: one of the two, never both, never neither
        if (TableMapping.from_spec(table) is not None)
        == (table.no_records is not None or page.no_records is not None)
    ]
    assert unexplained == []
    giving = [
        (name, page.name) for name, page in pages
        if page.integration is not None or any(t.integrations for t in page.tables)
    ]  # fmt: skip
    quiet = [(name, page.name) for name, page in pages if (name, page.name) not in giving]
    assert (len(pages), len(giving)) == (63, 42)
    assert all(
        page.no_records or (all(t.no_records for t in page.tables) and page.tables)
        for name, page in pages if (name, page.name) in quiet
    )  # fmt: skip
    iluvatar = config.project("vLLM Iluvatar plugin").pages[0].integration
    assert iluvatar is not None and (iluvatar.project, iluvatar.version) == ("vLLM", "vLLM")


def test_mapping_config_errors_say_what_to_fix() -> None:
    base = (
        "            integrations:\n"
        "              platform: Platform\n"
        "              layer: serving\n"
    )
    assert _config_error(base + "              status: Status\n").endswith(
        "status comes from column 'Status': add a status_map from its wording to one of "
        "['upstream', 'official plugin', 'vendor integration', 'community plugin', "
        "'in progress', 'unverified'] (or null: no record)"
    )
    assert "integrations.status 'supported' is not one of" in _config_error(
        base + "              status: {value: supported}\n"
    )
    assert "names pin 'wheel', which the page does not watch" in _config_error(
        base + "              status: {value: upstream}\n              pins: [wheel]\n"
    )
    assert "'inference' is not one of 'framework'" in _config_error(
        base.replace("serving", "inference") + "              status: {value: upstream}\n"
    )
    assert "give a column name, or exactly one of {value: ...} or {pin: ...}" in _config_error(
        base + "              status: {value: upstream, column: Status}\n"
    )


def test_a_valid_mapping_parses_with_columns_literals_and_pins() -> None:
    config = parse_config(
        TABLE_YAML.format(
            mapping="            integrations:\n"
            "              platform: Platform\n"
            "              status: Status\n"
            "              version: {pin: engine}\n"
            "              layer: serving\n"
            "            status_map: {'yes supported': upstream, 'in progress': in progress}\n"
        )
    )
    table = config.projects[0].pages[0].tables[0]
    assert table.integrations is not None
    assert table.integrations.platform.column == "Platform"
    assert table.integrations.version is not None and table.integrations.version.pin == "engine"
    assert table.status_map == {"yes supported": "upstream", "in progress": "in progress"}


PLUGINS = """## Device plugins

- **Official device plugins:** [vllm-ascend](https://github.com/vllm-project/vllm-ascend)
  (for Huawei Ascend NPU), etc.
- **Non-official device plugins:** [vllm-metax](https://github.com/MetaX-MACA/vLLM-metax)
  (for MetaX GPU), etc.
"""

PLUGIN_PAGE = """
projects:
  - name: TileLang
    repo: tile-ai/tilelang
    pages:
      - name: backend support
        path: docs/plugins.md
        tables:
          - name: backends
            heading: Device plugins
            items: enumeration
            labels: [Official device plugins, Non-official device plugins]
            integrations: {platform: Item, status: Label, layer: kernel programming}
            status_map:
              Official device plugins: official plugin
              Non-official device plugins: community plugin
            platform_map:
              vllm-ascend (for Huawei Ascend NPU): Huawei Ascend
              vllm-metax (for MetaX GPU): MetaX GPU
"""


def test_items_of_an_enumeration_become_integrations_as_table_rows_do() -> None:
    from crawler.analysis.pages import read_page
    from crawler.export.export_input import WatchedTable

    (spec,) = parse_config(PLUGIN_PAGE).projects[0].pages
    (read,) = read_page(spec, PLUGINS, None, "https://x/plugins.md").tables
    table = WatchedTable(read.name, read.columns, read.key_columns, read.rows,
                         TableMapping.from_spec(spec.tables[0]))  # fmt: skip
    catalog = build_catalog(_with_kernel_table(table))
    found = {
        r["platform"]: (r["status"], r["evidence"][0]["row"]["Item"])
        for r in catalog["integrations"]
        if r["project"] == "tilelang"
    }
    assert found == {
        "huawei-ascend": ("official plugin", "vllm-ascend (for Huawei Ascend NPU)"),
        "metax-gpu": ("community plugin", "vllm-metax (for MetaX GPU)"),
    }
