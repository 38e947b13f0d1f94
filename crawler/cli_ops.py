"""What an operator reaches for on day one: ``crawler check`` (validate sources.yaml without
fetching), ``crawler notify --test``, ``--fail-on KINDS`` for CI gating, where sources.yaml is
found, and the examples every command's ``--help`` ends with."""

from __future__ import annotations

import logging
import os
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from crawler.config import Config, ConfigError, load_config
from crawler.locations import config_path
from crawler.logs import Output, configure_output
from crawler.model import ChangeKind, FlagKind
from crawler.report.model import Report

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem

EXIT_FAIL_ON = 4  # the audit found a kind named by --fail-on


def output() -> Output:
    """How this run writes (chosen by the global options), or the default outside a command."""
    context = click.get_current_context(silent=True)
    obj = context.find_root().obj if context is not None else None
    return obj if isinstance(obj, Output) else Output()


class Failure(click.ClickException):
    """A failure at run time (a configuration to fix, a database that cannot be opened): its
    message alone and exit 2, without the usage lines that belong to a mistyped command."""

    exit_code = 2


class DatabaseFailure(click.ClickException):
    """The database failed while a command ran (a full disk, a read-only file, a server gone):
    one line in the crawler's words, exit 1, never a traceback."""

    exit_code = 1


class CrawlerGroup(click.Group):
    """The command group: a database failure that no command caught itself is said in one
    line (the password scrubbed) rather than a traceback."""

    def invoke(self, ctx: click.Context) -> object:
        from sqlalchemy.exc import SQLAlchemyError

        from crawler.store.database import StoreError, describe_db_error

        try:
            return super().invoke(ctx)
        except StoreError as exc:
            raise DatabaseFailure(untrusted_redact(str(exc))) from None
        except SQLAlchemyError as exc:
            url = output().db_url or ""
            reason = describe_db_error(exc, url)
            raise DatabaseFailure(untrusted_redact(f"the database failed: {reason}")) from None


def untrusted_redact(text: str) -> str:
    """``text`` without any secret this run knows (tokens, the database password)."""
    from crawler.logs import redact

    return redact(text, output().secrets)


config_option = click.option(
    "--config",
    "config_path",
    default=None,
    type=click.Path(dir_okay=False),
    help="The sources.yaml listing the tracked projects [default: $CRAWLER_CONFIG, else "
    "./sources.yaml, else ~/.config/crawler/sources.yaml].",
)


def config_file(explicit: str | None) -> Path:
    """``--config``, else ``$CRAWLER_CONFIG``, else ./sources.yaml, else the user's one."""
    return config_path(explicit, os.environ)


def load_or_fail(explicit: str | None) -> Config:
    try:
        return load_config(config_file(explicit))
    except ConfigError as exc:
        raise Failure(str(exc)) from None


def echo_json(data: Any, what: str, **dumps: Any) -> None:
    """A command's ``--json`` product: printed indented; under ``--log-format json`` (where
    every line is one JSON object) the ``data`` field of one result object whose message
    says ``what`` it is."""
    import json

    out = output()
    if out.log_format == "json":
        out.result(what, data=data)
    else:
        click.echo(json.dumps(data, indent=2, **dumps))


# -- names on the command line --------------------------------------------------------------------

NAMES_SHOWN = 20  # known names listed in an error; the rest counted


def _folded(name: str) -> str:
    return " ".join(name.split()).casefold()


def known_names(
    given: Iterable[str], known: Iterable[str], what: str, option: str | None = None
) -> list[str]:
    """Each of ``given`` spelt as it is among ``known``, matched case-insensitively (``--only
    triton`` is Triton); an unknown one is an error (exit 2) naming the known ones, the
    closest first ("did you mean").

    ``what`` is the thing named ("project", "kind"); ``option`` the switch it came from."""
    spelt = {_folded(name): name for name in sorted(known)}
    found: list[str] = []
    for name in given:
        match = spelt.get(_folded(name))
        if match is None:
            raise Failure(unknown_name(name, list(spelt.values()), what, option))
        found.append(match)
    return list(dict.fromkeys(found))


def unknown_name(name: str, known: list[str], what: str, option: str | None = None) -> str:
    """``--kind: unknown kind 'bogus' (did you mean 'new_tag'?); known: …``"""
    import difflib

    from crawler.untrusted import one_line

    folded = {_folded(k): k for k in known}
    close = difflib.get_close_matches(_folded(name), list(folded), n=1, cutoff=0.6)
    hint = f" (did you mean {folded[close[0]]!r}?)" if close else ""
    listed = ", ".join(known[:NAMES_SHOWN])
    more = f" and {len(known) - NAMES_SHOWN} more" if len(known) > NAMES_SHOWN else ""
    where = f"{option}: " if option else ""
    if not known:
        return f"{where}unknown {what} {one_line(name, 80)!r}: none is known yet"
    return f"{where}unknown {what} {one_line(name, 80)!r}{hint}; known: {listed}{more}"


# -- crawler check ---------------------------------------------------------------------------------


def _summary(config: Config) -> str:
    from crawler.upstream.source import source_kinds

    kinds = source_kinds()
    where = Counter(
        kinds[location.source].label for p in config.projects for location in p.locations()
    )
    pages = sum(len(p.pages) for p in config.projects)
    parts = [f"{n} {label}" for label, n in sorted(where.items())]
    return (
        f"{len(config.projects)} projects"
        + (f" ({', '.join(parts)})" if parts else "")
        + f", {pages} pages, schedule {config.schedule.cron!r} {config.schedule.timezone}"
    )


@click.command()
@config_option
def check(config_path: str | None) -> None:
    """Validate sources.yaml without fetching anything: keys (with "did you mean"), values,
    patterns, schedule, part_of references; say what the catalog covers and warn about an
    item with neither a source nor a reason, a page that maps nothing to integration records,
    or credentials written into a URL. Exit 0 valid (warnings or not), 2 invalid."""
    from crawler.config import coverage, item_warnings
    from crawler.config.credentials import credential_warnings
    from crawler.report.words import coverage_line, invalid_config

    path = config_file(config_path)
    try:
        config = load_config(path)  # the schedule's cron expression included
    except ConfigError as exc:
        raise Failure(invalid_config(str(path), exc.problems, exc.total)) from None
    for warning in [*item_warnings(config.projects, str(path)), *credential_warnings(config)]:
        output().stderr(f"warning: {warning}", logging.WARNING)
    click.echo(f"{path}: ok: {_summary(config)}")
    click.echo(f"{path}: {coverage_line(coverage(config.projects))}")


# -- crawler notify --test -------------------------------------------------------------------------


@click.command()
@config_option
@click.option("--test", "test", is_flag=True, help="Send a test message through every channel.")
def notify(config_path: str | None, test: bool) -> None:
    """Send a test message through every configured notification channel (notify.urls and
    CRAWLER_NOTIFY), without an audit, and say which succeeded. Exit 0 when all did, 1 when
    one failed, 2 when none is configured."""
    from crawler.config import NotifySettings
    from crawler.logs import secrets_from_env
    from crawler.notify import notify_urls
    from crawler.notify.channels import send_apprise

    if not test:
        raise click.UsageError("nothing to do: pass --test")
    path = config_file(config_path)
    settings = load_or_fail(str(path)).notify if path.exists() else NotifySettings()
    urls = notify_urls(settings, os.environ)
    issue = settings.github_issue or os.environ.get("CRAWLER_ISSUE_REPO")
    if not urls:
        hint = "; the GitHub issue is not tested (a test would edit the catalog issue)"
        raise Failure(
            "no notification channel configured: set notify.urls in sources.yaml or "
            "CRAWLER_NOTIFY" + (hint if issue else "")
        )
    from crawler.config.credentials import config_secrets

    secrets = secrets_from_env(os.environ)
    if path.exists():
        secrets += config_secrets(load_or_fail(str(path)), os.environ)
    failed = 0
    for url in urls:
        result = send_apprise(
            url,
            "crawler: test notification",
            "A test message from `crawler notify --test`: this channel works.",
            failure=False,
            attachment=None,
            secrets=secrets,
        )
        failed += not result.ok
        click.echo(f"{'ok' if result.ok else 'failed'}: {result.channel}: {result.detail}")
    if issue:
        click.echo("not tested: the GitHub issue (a test would edit the catalog issue)")
    click.echo(f"{len(urls) - failed} of {len(urls)} channels succeeded")
    sys.exit(1 if failed else 0)


# -- --fail-on -------------------------------------------------------------------------------------

FAIL_ON_ALIASES = {"noassertion": FlagKind.LICENSE_NOASSERTION.value}
FAIL_ON_KINDS = (*(k.value for k in ChangeKind), *(k.value for k in FlagKind))


def _kinds(ctx: click.Context, param: click.Parameter, value: str | None) -> frozenset[str] | None:
    if value is None:
        return None
    wanted = {FAIL_ON_ALIASES.get(k.strip(), k.strip()) for k in value.split(",") if k.strip()}
    unknown = sorted(wanted - set(FAIL_ON_KINDS))
    if unknown or not wanted:
        valid = ", ".join([*FAIL_ON_KINDS, *FAIL_ON_ALIASES])
        raise click.BadParameter(
            f"{'unknown kind' if len(unknown) == 1 else 'unknown kinds'} "
            f"{', '.join(unknown) or '(none given)'}; valid: {valid}",
            ctx,
            param,
        )
    return frozenset(wanted)


def _complete_fail_on(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """Shell completion of ``--fail-on``: the kinds, after those already typed and a comma
    (``new_release,lic`` → ``new_release,license_changed``…)."""
    from click.shell_completion import CompletionItem

    typed, _, last = incomplete.rpartition(",")
    prefix = f"{typed}," if typed else ""
    return [
        CompletionItem(prefix + kind)
        for kind in (*FAIL_ON_KINDS, *FAIL_ON_ALIASES)
        if kind.startswith(last)
    ]


def complete_pending_kinds(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """Shell completion of ``ack --kind``: the kinds that can be pending."""
    from click.shell_completion import CompletionItem

    from crawler.diff.pending import PENDING_KINDS

    kinds = sorted(kind.value for kind in PENDING_KINDS)
    return [CompletionItem(kind) for kind in kinds if kind.startswith(incomplete)]


fail_on_option = click.option(
    "--fail-on",
    "fail_on",
    default=None,
    metavar="KINDS",
    callback=_kinds,
    shell_complete=_complete_fail_on,
    help="Comma-separated change or flag kinds (e.g. noassertion,license_changed,"
    f"new_release): exit {EXIT_FAIL_ON} when the audit finds any of them, for CI gating.",
)


def fail_on_found(report: Report, kinds: Iterable[str]) -> dict[str, int]:
    """How many changes and flags of each of ``kinds`` the report holds."""
    wanted = set(kinds)
    kinds_found = [c.kind for c in report.changes] + [f.kind for f in report.flags]
    found = Counter(kind for kind in kinds_found if kind in wanted)
    return dict(sorted(found.items()))


def fail_on_exit(report: Report, kinds: frozenset[str] | None) -> int | None:
    """EXIT_FAIL_ON (after saying what was found) when the report holds one of ``kinds``."""
    if not kinds:
        return None
    found = fail_on_found(report, kinds)
    if not found:
        return None
    listed = ", ".join(f"{kind} ({n})" for kind, n in found.items())
    output().stderr(f"--fail-on: found {listed} (exit status {EXIT_FAIL_ON})")
    return EXIT_FAIL_ON


# -- --help examples -------------------------------------------------------------------------------

EXAMPLES: dict[str, list[str]] = {
    "audit": [
        "crawler audit --config sources.yaml --db sqlite:///db/crawler.sqlite",
        "crawler --quiet audit --only 'Project A' --fail-on noassertion,license_changed",
    ],
    "schedule": [
        "crawler schedule --cron '0 3 * * 1-5' --timezone Europe/Berlin",
        "crawler schedule --run-now --heartbeat /data/heartbeat.json",
    ],
    "health": ["crawler health --heartbeat /data/heartbeat.json --max-age 180"],
    "history": ["crawler history 'Project A'", "crawler history 'Project A' --json"],
    "report": ["crawler report            # the latest audit", "crawler report 42 --stdout"],
    "diff": ["crawler diff 41 42", "crawler diff 41 42 --json"],
    "license": ["crawler license LICENSE", "crawler license LICENSE NOTICE --json"],
    "page": [
        "crawler page https://vendor.example/support --heading 'Supported versions'",
        "crawler page saved.html --table 'table.compat' --key Version --json",
    ],
    "links": ["crawler links README.md", "crawler links catalog/index.md site/index.html --json"],
    "validate": ["crawler validate export/catalog.json"],
    "export": [
        "crawler export --out export",
        "crawler export --into catalog.json --site site",
    ],
    "demo": ["crawler demo --output demo-output"],
    "ack": ["crawler ack 'Project A' --kind new_release", "crawler ack --all"],
    "db": ["crawler db upgrade --db postgresql+psycopg://crawler@db/crawler", "crawler db check"],
    "db upgrade": ["crawler db upgrade --db sqlite:///db/crawler.sqlite"],
    "db check": ["crawler db check --db postgresql+psycopg://crawler@db/crawler"],
    "prune": ["crawler prune --keep-days 90 --dry-run", "crawler prune --keep-days 90"],
    "check": ["crawler check", "crawler check --config /etc/crawler/sources.yaml"],
    "notify": [
        "crawler notify --test",
        "CRAWLER_NOTIFY='json://hooks.example/crawler' crawler notify --test",
    ],
}
MAIN_EXAMPLES = [
    "crawler check && crawler audit",
    "crawler --log-format json audit 2>> audit.jsonl",
    'eval "$(_CRAWLER_COMPLETE=bash_source crawler)"   # shell completion (bash)',
]


def _epilog(lines: list[str]) -> str:
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


def add_examples(group: click.Group) -> None:
    """End every command's --help with its examples (a command without any is a test failure:
    tests/e2e/test_cli_ops.py)."""
    group.epilog = _epilog(MAIN_EXAMPLES)
    for name, command in group.commands.items():
        if name in EXAMPLES:
            command.epilog = _epilog(EXAMPLES[name])
        if isinstance(command, click.Group):
            for sub_name, sub in command.commands.items():
                key = f"{name} {sub_name}"
                if key in EXAMPLES:
                    sub.epilog = _epilog(EXAMPLES[key])


# -- --log-format json: click's own lines too ------------------------------------------------------


def main_in_json(group: click.Group) -> int:
    """Run the command line with every line of stdout and stderr one JSON object: the logs
    and results (JSON records), click's own error lines (``Error:``, ``Usage:``), any
    traceback, and whatever a command or a library prints as plain text (each line becomes
    the ``message`` of an object); the exit status."""
    from crawler.logs import JsonLines

    log = logging.getLogger("crawler.cli")
    # before the options are read (redone then): a refused command line is JSON too
    first = configure_output(0, False, "json", os.environ).secrets

    def secrets() -> list[str]:  # the environment's, and those the run learns
        return [*first, *output().secrets]

    stdout = JsonLines(sys.stdout, "crawler.result", "info", secrets)
    stderr = JsonLines(sys.stderr, "crawler.stderr", "warning", secrets)
    real = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = stdout, stderr
    try:
        return _run_in_json(group, log)
    finally:
        stdout.finish()
        stderr.finish()
        sys.stdout, sys.stderr = real


def _run_in_json(group: click.Group, log: logging.Logger) -> int:
    configure_output(0, False, "json", os.environ)  # on the JSON streams
    try:
        code = group.main(prog_name="crawler", standalone_mode=False)
    except click.ClickException as exc:
        context = exc.ctx if isinstance(exc, click.UsageError) else None
        usage = {"usage": context.get_usage()} if context is not None else {}
        log.error("%s", exc.format_message(), extra=usage)
        return exc.exit_code
    except click.exceptions.Abort:
        log.error("aborted")
        return 1
    except Exception as exc:  # a defect: its traceback, redacted, in one JSON object
        log.critical("unexpected error: %s: %s", type(exc).__name__, exc, exc_info=True)
        return 1
    return code if isinstance(code, int) else 0
