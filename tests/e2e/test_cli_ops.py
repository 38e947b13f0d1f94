"""What an operator reaches for on day one (issue 22): errors that are not usage errors,
--version, `crawler check`, `crawler notify --test`, `--fail-on`, help with examples, shell
completion, ISO 8601 log times, and sources.yaml and the database found without a `cd`."""

from __future__ import annotations

import io
import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from crawler import __version__
from crawler.cli import cli
from crawler.cli_ops import EXAMPLES, FAIL_ON_KINDS
from crawler.locations import db_url as find_db_url
from crawler.logs import configure_output
from crawler_fakes.github import FakeGitHub
from tests.support import ROOT
from tests.support.ops import PROJECTS, WebhookReceiver, closed_port, upstream


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty current folder, the user's folders inside tmp_path, no crawler variables."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    for name in ("CRAWLER_CONFIG", "CRAWLER_DB_URL", "CRAWLER_NOTIFY", "CRAWLER_ISSUE_REPO",
                 "GITHUB_TOKEN", "GH_TOKEN"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    return work


# -- item 4: runtime failures are not usage errors -------------------------------------------------


def test_an_unreachable_database_is_an_error_not_a_usage_error(workdir: Path) -> None:
    (workdir / "sources.yaml").write_text(PROJECTS)
    url = f"postgresql+psycopg://crawler:hunter2secret@127.0.0.1:{closed_port()}/crawler"
    result = CliRunner().invoke(cli, ["audit", "--db", url])
    assert result.exit_code == 2
    [error] = [line for line in result.output.splitlines() if line.startswith("Error: ")]
    assert error.startswith(
        "Error: cannot open database 'postgresql+psycopg://crawler:***@127.0.0.1:"
    )
    assert "Usage:" not in result.output and "Try 'crawler" not in result.output
    assert "hunter2secret" not in result.output


def test_a_configuration_error_is_an_error_not_a_usage_error(workdir: Path) -> None:
    (workdir / "sources.yaml").write_text("projects:\n  - name: x\n    repo: nope\n")
    result = CliRunner().invoke(cli, ["audit"])
    assert result.exit_code == 2
    assert result.output == (
        "Error: sources.yaml:3: project 'x': repo 'nope' must look like 'owner/name'\n"
    )
    # a mistyped command line still shows the usage
    typo = CliRunner().invoke(cli, ["audit", "--no-such-flag"])
    assert typo.exit_code == 2 and typo.output.startswith("Usage: ")


def test_page_names_its_own_allow_private_switch(workdir: Path) -> None:
    result = CliRunner().invoke(cli, ["page", f"http://127.0.0.1:{closed_port()}/support"])
    assert result.exit_code == 1
    assert "a loopback address (server-side request forgery guard)" in result.output
    assert "to allow it pass --allow-private or CRAWLER_ALLOW_PRIVATE_ADDRESSES=1" in result.output
    assert "sources.yaml" not in result.output


# -- item 5: --version -----------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(flag: str) -> None:
    result = CliRunner().invoke(cli, [flag])
    assert result.exit_code == 0
    assert result.output == f"crawler, version {__version__}\n"
    from importlib.metadata import version

    assert __version__ == version("crawler") != "0+unknown"


_WATCH_THE_COLLECTOR = """
import gc, sys

paused = []


class Watch:  # notes whether the collector runs while the command line is imported
    def find_spec(self, name, path=None, target=None):
        if name == "crawler.cli":
            paused.append(not gc.isenabled())


sys.meta_path.insert(0, Watch())
sys.argv = ["crawler", "--version"]
from crawler.__main__ import main

try:
    main()
except SystemExit:
    pass
print(paused, gc.isenabled())
"""


def test_the_command_imports_with_the_collector_paused_then_resumes_it() -> None:
    """`crawler` pauses the cyclic collector while it imports the command line (its passes over
    the imported modules were a fifth of the imports' CPU) and resumes it before any command
    runs: `crawler schedule` runs for months and must collect its garbage."""
    done = subprocess.run([sys.executable, "-c", _WATCH_THE_COLLECTOR], capture_output=True,
                          text=True, check=True, timeout=60)  # fmt: skip
    assert done.stdout == f"crawler, version {__version__}\n[True] True\n"


# -- item 6: crawler check -------------------------------------------------------------------------


def test_check_validates_without_fetching(workdir: Path) -> None:
    (workdir / "sources.yaml").write_text(
        PROJECTS + "  - name: Gamma\n    gitee: vendor/gamma\n    pypi: gamma\n"
        "  - name: torch-npu\n    git: https://gitcode.com/Ascend/pytorch.git\n"
    )
    result = CliRunner().invoke(cli, ["check"])  # no fake is running: nothing may be fetched
    assert result.exit_code == 0, result.output
    assert result.output == (
        "sources.yaml: ok: 4 projects (2 GitHub, 1 Gitee, 1 PyPI, 1 git server), 0 pages, "
        "schedule '0 3 * * *' UTC\n"
        "sources.yaml: 4 items: 4 tracked, 0 part of another item, 0 not trackable; "
        "0 pages watched, 0 give records on 0 platforms\n"
    )


def test_check_passes_on_the_shipped_sources_yaml_without_a_warning() -> None:
    """The shipped catalog: every item of the page, each tracked, riding or with its reason;
    every evidence page mapped to integration records, or saying why it is watched for its
    changes alone (no_records)."""
    shipped = str(ROOT / "sources.yaml")
    result = CliRunner().invoke(cli, ["check", "--config", shipped])
    assert (result.exit_code, result.stderr) == (0, ""), result.output
    assert result.stdout.splitlines()[1] == (
        f"{shipped}: 84 items: 58 tracked, 10 part of another item, 16 not trackable; "
        "17 snapshot rows; 63 pages watched, 42 give records on 20 platforms (Alibaba T-Head "
        "PPU, AMD GPU, Apple Silicon, AWS Trainium, Cambricon MLU, CPU, Enflame GCU, Google "
        "TPU, Huawei Ascend, Hygon DCU, IBM Spyre, Iluvatar CoreX, Intel Gaudi, Intel GPU, "
        "Kunlunxin XPU, MetaX GPU, Moore Threads, NVIDIA GPU, Qualcomm QAIC, WebGPU)"
    )


def test_check_warns_about_an_item_without_a_source_or_a_reason_and_still_passes(
    workdir: Path,
) -> None:
    (workdir / "sources.yaml").write_text(
        PROJECTS + "  - name: Vendor SDK\n    homepage: https://sdk.vendor.example\n"
    )
    result = CliRunner().invoke(cli, ["check"])
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        "warning: sources.yaml:6: project 'Vendor SDK': no source and no reason: add "
        "'not_trackable: <why no source can follow it>', or a source ('repo', 'pypi', a "
        "page…)\n"
    )
    assert result.stdout.startswith("sources.yaml: ok: 3 projects")


def test_check_answers_a_misspelt_key_with_did_you_mean(workdir: Path) -> None:
    (workdir / "mine.yaml").write_text(PROJECTS + "    tag_patern: 'v\\d+'\n")
    result = CliRunner().invoke(cli, ["check", "--config", "mine.yaml"])
    assert result.exit_code == 2
    assert result.output == (
        "Error: mine.yaml:6: project 'Beta': unknown key 'tag_patern' "
        "(did you mean 'tag_pattern'?)\n"
    )
    bad_cron = CliRunner().invoke(cli, ["check", "--config", "cron.yaml"])
    assert bad_cron.exit_code == 2  # a missing file is an error too
    (workdir / "cron.yaml").write_text("schedule: {cron: '5 3 * * mon-fry'}\n" + PROJECTS)
    bad_cron = CliRunner().invoke(cli, ["check", "--config", "cron.yaml"])
    assert bad_cron.exit_code == 2
    assert "'fry' is not a day of week name: use sun-sat" in bad_cron.output


def test_check_lists_every_problem_of_the_file_then_how_many(workdir: Path) -> None:
    """`check` stopped at the first section or project with an error: fixing a file took one
    run per problem. Now every problem, each at its key's own line, then the count."""
    (workdir / "sources.yaml").write_text(
        "settings: {timout: 3}\n"  # 1
        + PROJECTS  # 2-6
        + "    track: newest\n"  # 7
        + "  - name: Gamma\n"  # 8
        + "    repo: org/gamma\n"  # 9
        + "    pages:\n"  # 10
        + "      - name: support\n"  # 11
        + "        url: https://gamma.example/\n"  # 12
        + "        tables:\n"  # 13
        + "          - name: matrix\n"  # 14
        + "            key: [Op]\n"  # 15
        + "            integrations: {platform: Backend, status: State, layer: servng}\n"  # 16
        + "            status_map: {'yes': upstream}\n"  # 17
    )
    result = CliRunner().invoke(cli, ["check"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "Error: sources.yaml:1: settings: unknown key 'timout' (did you mean 'timeout'?)",
        "sources.yaml:7: project 'Beta': track: 'newest' is not one of 'auto', 'releases', "
        "'tags', 'commits'",
        "sources.yaml:16: project 'Gamma': page 'support', table 'matrix': integrations.layer: "
        "'servng' is not one of 'framework', 'compiler', 'kernel programming', 'kernel "
        "library', 'serving', 'distributed serving', 'platform sdk' (did you mean 'serving'?)",
        "sources.yaml: 3 problems: fix them and run `crawler check` again",
    ]


def test_check_refuses_names_the_catalog_would_confuse(workdir: Path) -> None:
    """Issue 38 item 13: four spellings of one name were four projects to `check`."""
    (workdir / "sources.yaml").write_text(
        "projects:\n"
        + "".join(f'  - name: "{n}"\n    repo: o/p{i}\n'
                  for i, n in enumerate(["Helion", "Helion\\u200b", " Helion ", "helion"]))
    )  # fmt: skip
    result = CliRunner().invoke(cli, ["check"])
    assert result.exit_code == 2
    same = (
        "and project 'Helion' (line 2) are the same name to the catalog (case, spaces, accents "
        "and invisible characters aside; both have the id 'helion'), so one could pass for the "
        "other: give them distinct names"
    )
    assert result.output.splitlines() == [
        f"Error: sources.yaml:4: project 'Helion\\u200b' {same}",
        f"sources.yaml:6: project ' Helion ' {same}",
        f"sources.yaml:8: project 'helion' {same}",
        "sources.yaml: 3 problems: fix them and run `crawler check` again",
    ]


def test_validate_says_when_it_is_given_a_sources_yaml(workdir: Path) -> None:
    (workdir / "sources.yaml").write_text(PROJECTS)
    result = CliRunner().invoke(cli, ["validate", "sources.yaml"])
    assert result.exit_code == 2
    assert (
        "sources.yaml looks like a sources.yaml: `crawler validate` checks a catalog.json; "
        "check a sources.yaml with `crawler check --config sources.yaml`" in result.output
    )


# -- item 7: crawler notify --test -----------------------------------------------------------------


def test_notify_test_sends_through_every_channel_and_says_which_worked(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dead = closed_port()
    with WebhookReceiver() as hook:
        (workdir / "sources.yaml").write_text(
            f"notify:\n  urls: ['json://127.0.0.1:{hook.port}/crawler']\n" + PROJECTS
        )
        monkeypatch.setenv("CRAWLER_NOTIFY", f"json://127.0.0.1:{dead}/down")
        result = CliRunner().invoke(cli, ["notify", "--test"])
        bodies = hook.json_bodies()
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0] == f"ok: json://127.0.0.1:{hook.port}: sent"
    assert lines[1].startswith(f"failed: json://127.0.0.1:{dead}: ")
    assert lines[-1] == "1 of 2 channels succeeded"
    assert [(b["title"], b["message"]) for b in bodies] == [
        (
            "crawler: test notification",
            "A test message from `crawler notify --test`: this channel works.",
        )
    ]
    assert not (workdir / "db").exists()  # no audit, no database


def test_notify_test_without_channels_says_where_to_set_them(workdir: Path) -> None:
    result = CliRunner().invoke(cli, ["notify", "--test"])
    assert result.exit_code == 2
    assert result.output == (
        "Error: no notification channel configured: set notify.urls in sources.yaml or "
        "CRAWLER_NOTIFY\n"
    )
    assert CliRunner().invoke(cli, ["notify"]).exit_code == 2  # nothing asked


# -- item 8: --fail-on -----------------------------------------------------------------------------


def test_fail_on_gates_ci_on_the_kinds_it_names(
    workdir: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workdir / "sources.yaml").write_text(PROJECTS)
    monkeypatch.setenv("CRAWLER_DB_URL", db_url)
    runner = CliRunner()
    with FakeGitHub(upstream("v1.0"), unauth_limit=5000) as server:
        monkeypatch.setenv("GITHUB_API_URL", server.base_url)
        first = runner.invoke(cli, ["audit", "--fail-on", "new_release,noassertion"])
        assert first.exit_code == 0, first.output  # a first audit only adds projects
        server.set_state(upstream("v1.0", "v1.1"))
        second = runner.invoke(cli, ["audit", "--fail-on", "noassertion, new_release"])
        assert second.exit_code == 4, second.output
        assert "--fail-on: found new_release (1) (exit status 4)" in second.output
        server.set_state(upstream("v1.0", "v1.1", "v1.2"))
        third = runner.invoke(cli, ["audit", "--fail-on", "license_changed"])
        assert third.exit_code == 0, third.output  # a new release is not what was named
        assert "--fail-on" not in third.output


def test_fail_on_refuses_an_unknown_kind_listing_the_valid_ones(workdir: Path) -> None:
    result = CliRunner().invoke(cli, ["audit", "--fail-on", "new_relase,stale"])
    assert result.exit_code == 2
    assert "Invalid value for '--fail-on': unknown kind new_relase; valid: " in result.output
    listed = result.output.split("valid: ", 1)[1].replace("\n", " ")
    for kind in (*FAIL_ON_KINDS, "noassertion"):
        assert kind in listed


# -- item 9: help that teaches, completion, ISO 8601 log times -------------------------------------


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    found: list[tuple[str, click.Command]] = []
    for name, command in group.commands.items():
        found.append((prefix + name, command))
        if isinstance(command, click.Group):
            found += _commands(command, prefix + name + " ")
    return found


def test_every_command_help_ends_with_examples() -> None:
    commands = _commands(cli)
    assert {"check", "notify", "audit", "db upgrade", "db check"} <= {n for n, _ in commands}
    for name, _command in commands:
        result = CliRunner().invoke(cli, [*name.split(), "--help"], terminal_width=200)
        assert result.exit_code == 0, name
        examples = result.output.split("Examples:\n", 1)[1].splitlines()
        assert 1 <= len(examples) <= 2, name
        assert [line.strip() for line in examples] == EXAMPLES[name]
        assert all(line.split("#")[0].split()[0] in ("crawler", "CRAWLER_NOTIFY='json://hooks."
                   "example/crawler'") for line in EXAMPLES[name]), name  # fmt: skip
    main = CliRunner().invoke(cli, ["--help"], terminal_width=200).output
    assert 'eval "$(_CRAWLER_COMPLETE=bash_source crawler)"' in main
    assert "-V, --version" in main


def test_shell_completion_is_click_s(tmp_path: Path) -> None:
    env = {**os.environ, "_CRAWLER_COMPLETE": "bash_source"}
    script = subprocess.run(
        [sys.executable, "-m", "crawler"], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert "_crawler_completion()" in script
    assert "complete -o nosort -F _crawler_completion crawler" in script
    words = subprocess.run(
        [sys.executable, "-m", "crawler"],
        env={**os.environ, "_CRAWLER_COMPLETE": "bash_complete", "COMP_WORDS": "crawler ch",
             "COMP_CWORD": "1"},
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert words.split() == ["plain,check"]


def _completions(line: str) -> list[str]:
    """What bash completion offers for the last word of ``line`` (click's bash protocol)."""
    words = line.split(" ")
    answer = subprocess.run(
        [sys.executable, "-m", "crawler"],
        env={**os.environ, "_CRAWLER_COMPLETE": "bash_complete", "COMP_WORDS": line,
             "COMP_CWORD": str(len(words) - 1)},
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return [item.split(",", 1)[1] for item in answer.split()]


def test_shell_completion_offers_the_kinds_of_fail_on_and_ack_kind() -> None:
    """--fail-on and ack --kind completed nothing: their values are the kinds (--fail-on's
    after the ones already typed and a comma)."""
    assert _completions("crawler audit --fail-on license_t") == ["license_text_changed"]
    assert _completions("crawler audit --fail-on new_release,noa") == ["new_release,noassertion"]
    assert "new_release,license_noassertion" in _completions("crawler audit --fail-on new_release,")
    assert _completions("crawler ack --kind new_") == ["new_prerelease", "new_release", "new_tag"]
    assert len(_completions("crawler ack --kind ")) == 12  # the kinds that can be pending


def test_text_log_lines_start_with_an_iso_8601_time() -> None:
    stream = io.StringIO()
    configure_output(0, False, "text", {}, stream=stream)
    logging.getLogger("crawler.test").warning("a note")
    line = stream.getvalue().splitlines()[-1]
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z WARNING crawler\.test: a note", line
    ), line


# -- item 10: CRAWLER_CONFIG and the search order --------------------------------------------------


def test_sources_yaml_and_database_are_found_without_a_cd(
    workdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_config = tmp_path / "config" / "crawler" / "sources.yaml"
    user_config.parent.mkdir(parents=True)
    user_config.write_text(PROJECTS)
    user_db = tmp_path / "data" / "crawler" / "crawler.sqlite"

    check = CliRunner().invoke(cli, ["check"])
    assert check.exit_code == 0, check.output
    assert check.output.startswith(f"{user_config}: ok: 2 projects")
    # a per-user setup keeps its database in the user's data folder
    assert find_db_url(None, os.environ) == f"sqlite:///{user_db}"
    with FakeGitHub(upstream("v1.0"), unauth_limit=5000) as server:
        monkeypatch.setenv("GITHUB_API_URL", server.base_url)
        audit = CliRunner().invoke(cli, ["--quiet", "audit"])
    assert audit.exit_code == 0, audit.output
    assert user_db.is_file()
    history = CliRunner().invoke(cli, ["history", "Alpha", "--json"])
    assert [r["version"] for r in json.loads(history.output)] == ["v1.0"]

    # a sources.yaml in the current folder wins over the user's; CRAWLER_CONFIG over both
    (workdir / "sources.yaml").write_text(PROJECTS.replace("Beta", "Local"))
    assert "./sources.yaml" not in CliRunner().invoke(cli, ["check"]).output
    assert CliRunner().invoke(cli, ["check"]).output.startswith("sources.yaml: ok: 2 projects")
    assert find_db_url(None, os.environ) == f"sqlite:///{user_db}"  # it exists: still found
    elsewhere = tmp_path / "elsewhere.yaml"
    elsewhere.write_text(PROJECTS + "  - name: Third\n    repo: org/third\n")
    monkeypatch.setenv("CRAWLER_CONFIG", str(elsewhere))
    assert CliRunner().invoke(cli, ["check"]).output.startswith(f"{elsewhere}: ok: 3 projects")
    monkeypatch.setenv("CRAWLER_DB_URL", "sqlite:///explicit.sqlite")
    assert find_db_url(None, os.environ) == "sqlite:///explicit.sqlite"
    assert find_db_url("sqlite:///flag.sqlite", os.environ) == "sqlite:///flag.sqlite"


def test_a_folder_setup_keeps_its_database_in_the_folder(workdir: Path) -> None:
    (workdir / "sources.yaml").write_text(PROJECTS)
    assert find_db_url(None, os.environ) == "sqlite:///db/crawler.sqlite"
