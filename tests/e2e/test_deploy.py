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
from tests.support import ROOT

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
    assert "CRAWLER_CACHE_DIR=/data/cache" in env  # on the volume: the root may be read-only
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


def test_crontab_comment_lists_every_exit_status() -> None:
    """The crontab's comment said "0 ok, 1 some projects failed, 2 usage error": an operator
    reading the cron mail did not learn 3 (another audit runs) or 4 (--fail-on). It lists
    every status the README's table does, each on its own line."""
    readme = (ROOT / "README.md").read_text()
    table = readme.split("| exit status | meaning |", 1)[1].split("\n\n", 1)[0]
    documented = re.findall(r"^\| (\d) \|", table, re.MULTILINE)
    comment = [
        line for line in (ROOT / "deploy" / "crontab").read_text().splitlines()
        if line.startswith("#")
    ]  # fmt: skip
    listed = [m.group(1) for line in comment if (m := re.match(r"#   (\d) \S", line))]
    assert documented == ["0", "1", "2", "3", "4"]
    assert listed == documented


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
    assert [m["mountPath"] for m in container["volumeMounts"]] == ["/data", "/tmp"]
    assert not LITERAL_TOKEN.search(text)


def test_kubernetes_cronjob_meets_the_restricted_pod_security_standard() -> None:
    """Issue 22: what checkov (run by .ci/run) and the "restricted" profile ask for."""
    text = (ROOT / "deploy" / "kubernetes" / "cronjob.yaml").read_text()
    documents = [d for d in yaml.safe_load_all(text) if d]
    assert {d["metadata"].get("namespace") for d in documents} == {"crawler"}
    [job] = [d for d in documents if d["kind"] == "CronJob"]
    pod = job["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is False
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    [container] = pod["containers"]
    assert container["securityContext"] == {
        "runAsNonRoot": True,
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    assert re.fullmatch(r"[\w./-]+/crawler@sha256:[0-9a-f]{64}", container["image"])
    assert set(container["resources"]["limits"]) == {"cpu", "memory"}
    skips = {k: v for k, v in job["metadata"]["annotations"].items() if k.startswith("checkov")}
    assert [v.split("=")[0] for v in skips.values()] == ["CKV_K8S_35"]  # justified in the file


# -- GitHub Actions --------------------------------------------------------------------------------


def _workflow() -> tuple[str, dict[str, Any]]:
    text = (ROOT / ".github" / "workflows" / "nightly.yml").read_text()
    return text, yaml.safe_load(text)


def test_actions_nightly_restores_the_database_audits_uploads_and_updates_the_issue() -> None:
    text, workflow = _workflow()
    triggers = workflow.get("on") or workflow.get(True)  # YAML 1.1 reads `on` as true
    assert triggers["schedule"] == [{"cron": "0 3 * * *"}]
    assert workflow["permissions"] == {"contents": "write", "issues": "write"}
    job = workflow["jobs"]["audit"]
    assert job["env"]["CRAWLER_DB_URL"] == "${{ secrets.CRAWLER_DB_URL }}"
    steps = job["steps"]
    names = [s.get("name", s.get("uses", "")) for s in steps]
    restore = names.index("Restore the database from the state branch")
    audit_step = next(i for i, s in enumerate(steps) if "crawler audit" in s.get("run", ""))
    save = names.index("Save the database to the state branch")
    upload = next(i for i, s in enumerate(steps) if "upload-artifact" in s.get("uses", ""))
    assert restore < audit_step < save and audit_step < upload
    # the state branch only without a PostgreSQL secret; saved even after a failed audit
    assert steps[restore]["if"] == "env.CRAWLER_DB_URL == ''"
    assert steps[save]["if"] == (
        "always() && env.CRAWLER_DB_URL == '' && hashFiles('db/crawler.sqlite') != ''"
    )
    assert steps[upload]["if"] == "always()"
    assert steps[upload]["with"]["path"] == "reports/"
    # actions/cache evicts what is unused for 7 days: it is not where the state lives
    assert not [s for s in steps if "actions/cache" in s.get("uses", "")]
    commands = crawler_commands(steps[audit_step]["run"])
    assert [accepted(c) for c in commands] == ["audit"]
    assert "${CRAWLER_DB_URL:-sqlite:///db/crawler.sqlite}" in commands[0]
    env = steps[audit_step]["env"]
    assert env["GITHUB_TOKEN"] == "${{ secrets.GITHUB_TOKEN }}"
    assert env["CRAWLER_ISSUE_REPO"] == "${{ github.repository }}"  # the catalog issue
    for name in SECRET_VARS & set(env):
        assert re.fullmatch(r"\$\{\{ secrets\.\w+ \}\}", env[name]), name
    assert not LITERAL_TOKEN.search(text)


# the first major version of each action that runs on Node 24 (Node 20 is deprecated on runners)
NODE24_MAJORS = {
    "actions/checkout": 5,
    "actions/setup-python": 6,
    "actions/upload-artifact": 6,
    "actions/cache": 5,
}


def test_actions_nightly_uses_actions_that_run_on_a_supported_node() -> None:
    _, workflow = _workflow()
    uses = [s["uses"] for s in workflow["jobs"]["audit"]["steps"] if "uses" in s]
    assert uses
    for use in uses:
        name, _, version = use.partition("@")
        assert name.split("/")[0] == "actions" and name in NODE24_MAJORS, use
        assert int(version.removeprefix("v").split(".")[0]) >= NODE24_MAJORS[name], use


def _git(*args: str, cwd: Path) -> str:
    import subprocess

    done = subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
        env={"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd),
             "PATH": "/usr/bin:/bin", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
             "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"},
    )  # fmt: skip
    return done.stdout


def _run_step(step: dict[str, Any], workspace: Path) -> tuple[int, str]:
    """A workflow step's script as Actions runs it (``bash -e``), with the job's variables."""
    import subprocess

    env = {
        "PATH": "/usr/bin:/bin", "HOME": str(workspace), "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1", "STATE_BRANCH": "crawler-state", "GITHUB_RUN_ID": "4242",
    }  # fmt: skip
    done = subprocess.run(
        ["bash", "-e", "-c", step["run"]], cwd=workspace, env=env, capture_output=True, text=True
    )
    return done.returncode, done.stdout + done.stderr


def test_actions_state_branch_keeps_the_database_across_runs_and_says_when_it_is_missing(
    tmp_path: Path,
) -> None:
    """The restore and save steps, run against a local bare repository as `origin`: nothing
    expires, and the first run (no branch) says it is a new baseline."""
    _, workflow = _workflow()
    steps = {s.get("name"): s for s in workflow["jobs"]["audit"]["steps"]}
    restore = steps["Restore the database from the state branch"]
    save = steps["Save the database to the state branch"]
    origin = tmp_path / "origin.git"
    _git("init", "-q", "--bare", str(origin), cwd=tmp_path)
    seed = tmp_path / "seed"
    seed.mkdir()
    _git("init", "-q", "-b", "main", cwd=seed)
    (seed / "README.md").write_text("catalog\n")
    _git("add", "README.md", cwd=seed)
    _git("commit", "-q", "-m", "init", cwd=seed)
    _git("push", "-q", str(origin), "main", cwd=seed)

    def fresh_checkout(name: str) -> Path:  # every run starts from a clean runner
        _git("clone", "-q", str(origin), name, cwd=tmp_path)
        return tmp_path / name

    first = fresh_checkout("run1")
    code, out = _run_step(restore, first)
    assert code == 0
    assert "::warning::no branch crawler-state yet: this audit is the new baseline" in out
    assert not (first / "db" / "crawler.sqlite").exists()
    database = bytes(range(256)) * 64  # binary, as SQLite is
    (first / "db" / "crawler.sqlite").write_bytes(database)
    code, out = _run_step(save, first)
    assert code == 0, out

    second = fresh_checkout("run2")
    code, out = _run_step(restore, second)
    assert code == 0, out
    assert "database restored from crawler-state" in out
    assert (second / "db" / "crawler.sqlite").read_bytes() == database
    (second / "db" / "crawler.sqlite").write_bytes(database + b"night 2")
    assert _run_step(save, second)[0] == 0
    # one commit on the branch, replaced each night: the repository does not grow with history
    log = _git("log", "--format=%s", "crawler-state", cwd=origin).splitlines()
    assert log == ["crawler state after run 4242"]
    assert _git("ls-tree", "--name-only", "crawler-state", cwd=origin).split() == ["crawler.sqlite"]
    third = fresh_checkout("run3")
    assert _run_step(restore, third)[0] == 0
    assert (third / "db" / "crawler.sqlite").read_bytes() == database + b"night 2"

    # a branch that cannot be read is an error, never a silent new baseline
    broken = fresh_checkout("run4")
    _git("remote", "set-url", "origin", str(tmp_path / "gone.git"), cwd=broken)
    code, out = _run_step(restore, broken)
    assert code == 1
    assert "::error::cannot read branch crawler-state" in out
