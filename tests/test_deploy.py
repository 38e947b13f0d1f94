"""The deployment recipes in the repository: each parsed, every `crawler …` command in them
accepted by the CLI's own parser, and their safety invariants held. (No Docker engine or
cluster here: the recipes are checked, not run.)"""

from __future__ import annotations

import json
import re
import shlex
import warnings
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from crawler.cli import cli

ROOT = Path(__file__).resolve().parents[1]
SECRET_VARS = {"GITHUB_TOKEN", "GH_TOKEN", "CRAWLER_DB_URL", "CRAWLER_NOTIFY"}
LITERAL_TOKEN = re.compile(r"gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}")


def accepted(argv: list[str]) -> str:
    """Parse ``crawler ARGS…`` with the CLI's click parser (nothing runs); the command name."""
    assert argv and Path(argv[0]).name == "crawler", argv
    ctx = cli.make_context("crawler", argv[1:])
    with warnings.catch_warnings():  # click < 9 keeps the subcommand in protected_args
        warnings.simplefilter("ignore", DeprecationWarning)
        remaining = [*getattr(ctx, "protected_args", []), *ctx.args]
    name, command, rest = cli.resolve_command(ctx, remaining)
    assert name is not None and command is not None
    command.make_context(name, rest, parent=ctx)
    return name


def crawler_commands(shell: str) -> list[list[str]]:
    """The ``crawler`` invocations in a shell line: from the word ``crawler`` (or a path to
    ``bin/crawler``) to the first operator or redirection."""
    lexer = shlex.shlex(shell, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    found: list[list[str]] = []
    current: list[str] | None = None
    for token in lexer:
        if token and set(token) <= set("&|;<>()"):
            current = None
            continue
        if current is not None:
            current.append(token)
        elif token == "crawler" or token.endswith("bin/crawler"):  # not `cd /srv/crawler`
            current = [token]
            found.append(current)
    return found


def test_the_parser_check_itself_refuses_what_the_cli_refuses() -> None:
    assert accepted(["crawler", "--quiet", "audit", "--config", "x.yaml"]) == "audit"
    with pytest.raises(click.UsageError):
        accepted(["crawler", "audit", "--no-such-flag"])
    with pytest.raises(click.UsageError):
        accepted(["crawler", "schedul"])
    assert crawler_commands(
        "cd /x && flock -n /tmp/crawler.lock bin/crawler -q audit >> l 2>&1"
    ) == [["bin/crawler", "-q", "audit"]]


# -- Dockerfile ------------------------------------------------------------------------------------


def _dockerfile() -> list[tuple[str, str]]:
    text = (ROOT / "Dockerfile").read_text()
    joined = re.sub(r"\\\n\s*", " ", text)
    out = []
    for line in joined.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            instruction, _, rest = line.strip().partition(" ")
            out.append((instruction.upper(), rest.strip()))
    return out


def test_dockerfile_pinned_non_root_volume_healthcheck_and_no_token() -> None:
    lines = _dockerfile()
    instructions = [i for i, _ in lines]
    runs = [rest for i, rest in lines if i == "RUN"]
    assert any("pip install" in r and "--constraint /app/deploy/constraints.txt" in r for r in runs)
    user = [rest for i, rest in lines if i == "USER"]
    assert user == ["crawler"] and instructions.index("USER") < instructions.index("ENTRYPOINT")
    assert ("VOLUME", '["/data"]') in lines
    env = " ".join(rest for i, rest in lines if i in ("ENV", "ARG"))
    assert "TOKEN" not in env and not LITERAL_TOKEN.search((ROOT / "Dockerfile").read_text())
    assert "CRAWLER_HEARTBEAT=/data/heartbeat.json" in env
    entrypoint = json.loads(next(rest for i, rest in lines if i == "ENTRYPOINT"))
    cmd = json.loads(next(rest for i, rest in lines if i == "CMD"))
    assert accepted([*entrypoint, *cmd]) == "schedule"
    healthcheck = next(rest for i, rest in lines if i == "HEALTHCHECK")
    probe = json.loads(healthcheck.split(" CMD ", 1)[1])
    assert accepted(probe) == "health"


def test_constraints_pin_every_runtime_dependency() -> None:
    import tomllib

    pins: dict[str, str] = {}
    for line in (ROOT / "deploy" / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version and re.fullmatch(r"[\w.+-]+", version), f"not pinned: {line}"
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"], *project["optional-dependencies"]["postgres"]]
    for requirement in wanted:
        name = re.split(r"[\[<>=!~ ;]", requirement, maxsplit=1)[0]
        assert re.sub(r"[-_.]+", "-", name).lower() in pins, f"{name} is not pinned"


# -- host crontab ---------------------------------------------------------------------------------


def test_crontab_line_runs_an_accepted_quiet_audit_under_a_lock() -> None:
    entries = [
        line
        for line in (ROOT / "deploy" / "crontab").read_text().splitlines()
        if line.strip() and not line.startswith("#") and "=" not in line.split()[0]
    ]
    assert len(entries) == 1
    fields = entries[0].split(None, 5)
    assert fields[:5] == ["0", "3", "*", "*", "*"]
    commands = crawler_commands(fields[5])
    assert [accepted(c) for c in commands] == ["audit"]
    assert "--quiet" in commands[0] and "flock -n" in fields[5]
    assert not LITERAL_TOKEN.search((ROOT / "deploy" / "crontab").read_text())


# -- Kubernetes ------------------------------------------------------------------------------------


def test_kubernetes_cronjob_forbids_overlap_and_takes_secrets_from_a_secret() -> None:
    text = (ROOT / "deploy" / "kubernetes" / "cronjob.yaml").read_text()
    documents = [d for d in yaml.safe_load_all(text) if d]
    [job] = [d for d in documents if d["kind"] == "CronJob"]
    spec = job["spec"]
    assert spec["concurrencyPolicy"] == "Forbid"
    pod = spec["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    [container] = pod["containers"]
    assert accepted(["crawler", *container["args"]]) == "audit"
    env: dict[str, Any] = {e["name"]: e for e in container["env"]}
    for name in SECRET_VARS & set(env):
        assert "value" not in env[name], f"{name} is written into the manifest"
        assert env[name]["valueFrom"]["secretKeyRef"]["name"] == "crawler"
    assert {"CRAWLER_DB_URL", "GITHUB_TOKEN"} <= set(env)
    assert [m["mountPath"] for m in container["volumeMounts"]] == ["/data"]
    assert not LITERAL_TOKEN.search(text)


# -- GitHub Actions --------------------------------------------------------------------------------


def test_actions_nightly_restores_the_database_audits_uploads_and_updates_the_issue() -> None:
    text = (ROOT / ".github" / "workflows" / "nightly.yml").read_text()
    workflow = yaml.safe_load(text)
    triggers = workflow.get("on") or workflow.get(True)  # YAML 1.1 reads `on` as true
    assert triggers["schedule"] == [{"cron": "0 3 * * *"}]
    assert workflow["permissions"]["issues"] == "write"
    steps = workflow["jobs"]["audit"]["steps"]
    uses = [s.get("uses", "").split("@")[0] for s in steps]
    restore = uses.index("actions/cache/restore")
    audit_step = next(i for i, s in enumerate(steps) if "crawler" in s.get("run", ""))
    save = uses.index("actions/cache/save")
    upload = uses.index("actions/upload-artifact")
    assert restore < audit_step < save and audit_step < upload
    assert steps[restore]["with"]["path"] == steps[save]["with"]["path"] == "db/crawler.sqlite"
    assert steps[save]["if"] == "always()" and steps[upload]["if"] == "always()"
    assert steps[upload]["with"]["path"] == "reports/"
    commands = crawler_commands(steps[audit_step]["run"])
    assert [accepted(c) for c in commands] == ["audit"]
    assert "sqlite:///db/crawler.sqlite" in commands[0]
    env = steps[audit_step]["env"]
    assert env["GITHUB_TOKEN"] == "${{ secrets.GITHUB_TOKEN }}"
    assert env["CRAWLER_ISSUE_REPO"] == "${{ github.repository }}"  # the catalog issue
    for name in SECRET_VARS & set(env):
        assert re.fullmatch(r"\$\{\{ secrets\.\w+ \}\}", env[name]), name
    assert not LITERAL_TOKEN.search(text)
