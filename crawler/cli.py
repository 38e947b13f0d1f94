"""Command line: parse arguments, call one function, print.

Exit 0 ok, 1 fetch errors or stale projects (or an unhealthy scheduler for ``health``),
2 usage or configuration, 3 another audit holds the database's audit lock, 4 ``--fail-on``
found what it names."""

from __future__ import annotations

import atexit
import gc
import os
import stat
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from crawler import __version__
from crawler.cli_db import audit_lock_or_exit, db, prune, take_audit_lock
from crawler.cli_db import open_store as _open_store
from crawler.cli_ops import (
    EXIT_FAIL_ON,
    CrawlerGroup,
    Failure,
    add_examples,
    check,
    complete_pending_kinds,
    config_file,
    config_option,
    echo_json,
    fail_on_exit,
    fail_on_found,
    fail_on_option,
    known_names,
    load_or_fail,
    main_in_json,
    notify,
)
from crawler.config import (
    DEFAULT_REQUEST_DEADLINE,
    PAGE_FORMS,
    Config,
    ConfigError,
    check_timezone,
    load_config,
)
from crawler.failpoints import failpoint
from crawler.locations import heartbeat_path
from crawler.logs import LogFormat, Output, configure_output, requested_format
from crawler.store import DEFAULT_DB_URL, Store
from crawler.store.database import StoreError
from crawler.store.lock import AuditLocked

if TYPE_CHECKING:
    import threading

    from crawler.audit import AuditOutcome
    from crawler.diff.pending import PendingItem
    from crawler.notify import Delivery

DEFAULT_REPORTS = "reports"
# audit ids are database integers: anything larger is refused by click, not by the database
AUDIT_ID = click.IntRange(1, 2**63 - 1)

reports_option = click.option(
    "--reports",
    "reports_dir",
    default=DEFAULT_REPORTS,
    show_default=True,
    type=click.Path(file_okay=False),
    help="Where report folders are written.",
)
db_option = click.option(
    "--db",
    "db_url",
    default=None,
    help=f"SQLAlchemy database URL [default: $CRAWLER_DB_URL, else {DEFAULT_DB_URL} if it "
    "exists, else ~/.local/share/crawler/crawler.sqlite if it exists or sources.yaml came from "
    "~/.config/crawler, else the first].",
)


def _load(config_path: str | None) -> Config:
    return load_or_fail(config_path)


def _load_if_present(config_path: str | None) -> Config | None:
    """sources.yaml only names where projects are fetched from: reading stored audits works
    without it (after `crawler demo`, or for projects since removed)."""
    return _load(config_path) if config_file(config_path).exists() else None


@click.group(cls=CrawlerGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="crawler")
@click.option("-v", "--verbose", count=True, help="More logging (-v debug, -vv libraries too).")
@click.option("-q", "--quiet", is_flag=True, help="Only errors and the summary line (for cron).")
@click.option(
    "--log-format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    envvar="CRAWLER_LOG_FORMAT",
    help="json: every line written is one JSON object, for log collectors (logs and notes "
    "on stderr, results on stdout).",
)
@click.pass_context
def cli(ctx: click.Context, verbose: int, quiet: bool, log_format: str) -> None:
    """Audit upstream releases, tags, licenses and vendor pages; report what changed.

    sources.yaml is --config, else $CRAWLER_CONFIG, else ./sources.yaml, else
    ~/.config/crawler/sources.yaml; see `crawler audit --help` for the database."""
    ctx.obj = configure_output(verbose, quiet, cast(LogFormat, log_format), os.environ)


def _output() -> Output:
    obj = click.get_current_context().find_root().obj
    return obj if isinstance(obj, Output) else Output()


def _audit_and_deliver(
    config: Config,
    store: Store,
    reports_dir: Path,
    only: tuple[str, ...] | None,
    stop: threading.Event,
    output: Output,
    allow_removals: bool = False,
    fail_on: frozenset[str] | None = None,
) -> AuditOutcome:
    """One audit, its summary line (with its figures as fields: the JSON log's
    ``audit_finished`` event), then its delivery (which never fails the audit).

    ``output`` is passed in: a scheduled audit runs in a worker thread, where click has no
    current context."""
    import time

    from crawler.audit import run_audit
    from crawler.notify import deliver
    from crawler.progress import make_progress
    from crawler.report.words import audit_line
    from crawler.upstream.sources.github import github_endpoint

    api_url, token = github_endpoint(config.source_settings("github"), os.environ)
    _deliver_late(config, store, reports_dir, output, api_url, token)
    progress = make_progress(output)
    started = time.monotonic()
    try:
        outcome = run_audit(
            config,
            store,
            reports_dir,
            only=only,
            should_stop=stop.is_set,
            allow_removals=allow_removals,
            progress=progress,
        )
    finally:
        progress.close()
    found = fail_on_found(outcome.report, fail_on) if fail_on else {}
    exit_code = EXIT_FAIL_ON if found else outcome.exit_code
    figures = audit_figures(outcome, time.monotonic() - started, exit_code)
    progress.finish(audit_line(outcome.report, status=outcome.status), **figures)
    if outcome.report_dir is None:
        output.error(
            f"{outcome.report_error}; nothing was delivered, and the next audit reports these "
            "findings again"
        )
        return outcome
    output.detail(f"report: {outcome.report_dir / 'report.md'}")
    delivery = deliver(
        outcome.report,
        outcome.report_dir,
        config.notify,
        api_url=api_url,
        token=token,
        env=os.environ,
        secrets=output.secrets,
    )
    failpoint("delivered")
    store.mark_delivered(outcome.audit_id, datetime.now(UTC).replace(microsecond=0))
    _show_delivery(delivery, output)
    return outcome


def audit_figures(outcome: AuditOutcome, seconds: float, exit_code: int) -> dict[str, Any]:
    """An audit's figures, as fields of its last event (``--log-format json``)."""
    summary = outcome.report.summary
    sources = outcome.report.requests.get("sources", {})
    spent = {name: int(facts.get("requests") or 0) for name, facts in sources.items()}
    points = sum(int(facts.get("graphql_points") or 0) for facts in sources.values())
    return {
        "event": "audit_finished",
        "audit": outcome.audit_id,
        "status": outcome.status,
        "projects": summary.projects,
        "projects_checked": summary.checked,
        "projects_deferred": summary.deferred,
        "projects_stale": summary.stale,
        "changes": summary.changes,
        "changes_by_kind": dict(summary.changes_by_kind),
        "flags": summary.flags,
        "errors": summary.errors,
        "requests": sum(spent.values()),
        "requests_by_source": spent,
        "graphql_points": points,
        "seconds": round(seconds, 3),
        "exit_code": exit_code,
        "report": str(outcome.report_dir / "report.md") if outcome.report_dir else None,
    }


def _deliver_late(
    config: Config, store: Store, reports_dir: Path, output: Output, api_url: str, token: str | None
) -> None:
    """First, the reports of finished audits a killed run never delivered."""
    from crawler.notify.late import deliver_late

    for delivery in deliver_late(
        store, config, reports_dir, api_url=api_url, token=token, env=os.environ,
        secrets=output.secrets,
    ):  # fmt: skip
        output.note(f"audit #{delivery.audit_id} was never delivered: delivered late now")
        _show_delivery(delivery, output)


def _show_delivery(delivery: Delivery, output: Output) -> None:
    for result in delivery.results:
        line = f"notification {result.channel}: {result.detail}"
        if result.ok:
            output.note(line)
        else:
            output.error(line)


@cli.command()
@config_option
@db_option
@reports_option
@click.option("--only", multiple=True, metavar="NAME", help="Audit only these projects.")
@click.option(
    "--allow-removals",
    is_flag=True,
    help="Accept a sources.yaml that drops more than half of the tracked projects at once.",
)
@fail_on_option
def audit(
    config_path: str | None,
    db_url: str | None,
    reports_dir: str,
    only: tuple[str, ...],
    allow_removals: bool,
    fail_on: frozenset[str] | None,
) -> None:
    """Fetch every project, store the snapshot, diff against the last good audit, report."""
    import threading

    from crawler.config.credentials import config_secrets
    from crawler.schedule import stop_on_signals
    from crawler.upstream.sources.github import credential_in_use

    config = _load(config_path)
    if only:  # matched case-insensitively: `--only triton` is Triton
        only = tuple(known_names(only, [p.name for p in config.projects], "project", "--only"))
    _output().add_secrets(config_secrets(config, os.environ))  # page and webhook credentials
    uses_github = any(p.forge and p.forge.source == "github" for p in config.projects)
    if uses_github and credential_in_use(os.environ) is None:
        _output().note(
            "warning: no GITHUB_TOKEN or GH_TOKEN: GitHub allows 60 unauthenticated requests "
            "an hour; the audit uses REST with conditional requests and defers what does not fit"
        )
    store = _open_store(db_url)
    stop = threading.Event()  # SIGTERM: finish the current project, end as partial
    try:
        with audit_lock_or_exit(store, "crawler audit"), stop_on_signals(stop):
            outcome = _audit_and_deliver(
                config, store, Path(reports_dir), only or None, stop, _output(), allow_removals,
                fail_on,
            )  # fmt: skip
    except ConfigError as exc:
        raise Failure(str(exc)) from None
    except StoreError as exc:  # the database's failure, said once (the lock is released)
        _output().error(str(exc))
        sys.exit(1)
    finally:
        store.close()
    sys.exit(fail_on_exit(outcome.report, fail_on) or outcome.exit_code)


@cli.command()
@config_option
@db_option
@reports_option
@click.option(
    "--cron",
    default=None,
    help="When to audit, a 5-field crontab expression with crontab's meaning "
    "[default: schedule.cron in the config, else '0 3 * * *'].",
)
@click.option(
    "--timezone",
    default=None,
    help="IANA time zone of the cron expression [default: schedule.timezone, else UTC].",
)
@click.option("--run-now", is_flag=True, help="Also audit once at start.")
@click.option(
    "--heartbeat",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write a heartbeat file here every minute, for `crawler health` [default: "
    "$CRAWLER_HEARTBEAT, else ~/.local/state/crawler/heartbeat.json, where `crawler health` "
    "looks].",
)
def schedule(
    config_path: str | None,
    db_url: str | None,
    reports_dir: str,
    cron: str | None,
    timezone: str | None,
    run_now: bool,
    heartbeat: str | None,
) -> None:
    """Stay running and audit on a schedule (for a container without cron).

    On start it audits once if a tick passed since the last audit in the database; SIGTERM
    lets a running audit finish its current project (it ends as partial), then exits.
    """

    from crawler.config.credentials import config_secrets
    from crawler.gather import check_credentials
    from crawler.schedule import SchedulePlan, serve

    config = _load(config_path)  # fail fast on a bad file; it is re-read before every audit
    _output().add_secrets(config_secrets(config, os.environ))
    try:  # and on a broken App key: each audit would stop on it
        check_credentials(config.projects, os.environ)
    except ConfigError as exc:
        raise Failure(str(exc)) from None
    zone = timezone or config.schedule.timezone
    try:
        check_timezone(zone)
    except ValueError as exc:
        raise click.UsageError(f"--timezone: {exc}") from None
    store = _open_store(db_url)
    try:
        latest = store.latest_audit()
    finally:
        store.close()
    plan = SchedulePlan(
        cron=cron or config.schedule.cron,
        timezone=zone,
        run_now=run_now,
        last_audit=latest.started_at if latest else None,
        heartbeat=heartbeat_path(heartbeat, os.environ),  # `crawler health` looks there
    )

    output = _output()  # scheduled audits run in a worker thread: no click context there

    def job(stop: threading.Event) -> None:
        try:
            config = load_config(config_file(config_path))
            output.add_secrets(config_secrets(config, os.environ))  # the file may have changed
            store = _open_store(db_url)
        except (ConfigError, click.ClickException) as exc:  # keep running: the next tick retries
            output.error(f"audit skipped: {exc}")
            return
        try:
            lock = take_audit_lock(store, "crawler schedule")
            try:
                _audit_and_deliver(config, store, Path(reports_dir), None, stop, output)
            finally:
                lock.release()
        except AuditLocked as exc:  # keep the schedule; this tick is skipped
            output.error(f"{exc}; skipping this run")
        except StoreError as exc:  # the database's failure, said once; the next tick retries
            output.error(str(exc))
        except Exception as exc:  # logged, never kills the scheduler
            output.error(f"audit failed: {exc}")
        finally:
            store.close()

    try:
        serve(plan, job, output.result)
    except ValueError as exc:
        raise Failure(str(exc)) from None


@cli.command()
@click.option(
    "--heartbeat",
    type=click.Path(dir_okay=False),
    default=None,
    help="The heartbeat `crawler schedule` writes [default: $CRAWLER_HEARTBEAT, else "
    "~/.local/state/crawler/heartbeat.json, where `crawler schedule` writes it].",
)
@click.option(
    "--max-age",
    type=click.IntRange(min=1),
    default=180,
    show_default=True,
    help="Seconds after which a heartbeat is too old.",
)
def health(heartbeat: str | None, max_age: int) -> None:
    """Exit 0 if `crawler schedule` is alive (its heartbeat is fresh), else 1: a HEALTHCHECK."""
    from datetime import UTC, datetime

    from crawler.schedule import check_heartbeat
    from crawler.untrusted import UnreadableFile

    try:
        state = check_heartbeat(heartbeat_path(heartbeat, os.environ), datetime.now(UTC), max_age)
    except UnreadableFile as exc:  # a FIFO or /dev/zero: unhealthy, said (never read)
        # exit 1, not 2: Docker reserves a HEALTHCHECK's exit status 2 ("do not use")
        _output().stderr(f"unhealthy: --heartbeat {exc}")
        sys.exit(1)
    if state.healthy:
        click.echo(state.message)
    else:
        _output().stderr(state.message)
    sys.exit(0 if state.healthy else 1)


@cli.command()
@click.argument("name")
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def history(name: str, db_url: str | None, as_json: bool) -> None:
    """The dated versions and licenses stored for one project (from the database alone)."""
    from crawler.audit import source_names
    from crawler.diff.licenses import license_label_facts
    from crawler.report.words import license_label, moment, version_mark
    from crawler.untrusted import one_line
    from crawler.versions import current_version

    store = _open_store(db_url, reading=True)
    try:
        known = store.known_projects()
        if not known:
            raise Failure("no project in the database yet: run `crawler audit`")
        [name] = known_names([name], known, "project")  # as spelt in the database
        entries = store.history(name)
    finally:
        store.close()
    names = source_names()
    rows: list[dict[str, Any]] = []
    for entry in entries:
        row: dict[str, Any] = {
            "audit": entry.audit_id,
            "date": moment(entry.audit_started_at),
            "status": entry.status,
            "note": entry.note,
        }
        if entry.snapshot is not None:
            label = license_label(license_label_facts(entry.snapshot), names)
            version = current_version(name, entry.snapshot, label)
            row.update(
                version=version.version,
                source=version.version_source,
                prerelease=version.prerelease,
                published_at=version.published_at,
                license=version.license,
            )
        rows.append(row)
    if as_json:
        echo_json(rows, f"history of {one_line(name)}")
        return
    if not rows:
        click.echo(f"no history for {name} yet: run `crawler audit`")
    for row in rows:
        when = f"{row['date']}  audit #{row['audit']}"
        if row["status"] == "ok" and "version" in row:
            mark = version_mark(row["version"], row["prerelease"]).strip(" ()")
            pre = f", {mark}" if mark else ""
            click.echo(
                f"{when}  {one_line(row['version'])} ({row['source']}{pre}, "
                f"{row['published_at']})  license: {one_line(row['license'])}"
            )
        else:
            click.echo(f"{when}  {row['status']}: {one_line(row['note'])}")


@cli.command()
@click.argument("audit_id", type=AUDIT_ID, required=False)
@config_option
@db_option
@reports_option
@click.option("--stdout", is_flag=True, help="Print the Markdown instead of writing files.")
def report(
    audit_id: int | None,
    config_path: str | None,
    db_url: str | None,
    reports_dir: str,
    stdout: bool,
) -> None:
    """Re-render the report of an audit (default: the latest) from the database."""
    from crawler.audit import rebuild_report
    from crawler.report.files import write_report
    from crawler.report.markdown import render_markdown

    config = _load_if_present(config_path)
    store = _open_store(db_url, reading=True)
    try:
        rendered = rebuild_report(store, config, audit_id)
    except ConfigError as exc:
        raise Failure(str(exc)) from None
    finally:
        store.close()
    if stdout:
        click.echo(render_markdown(rendered), nl=False)
    else:
        # a re-rendered report is written to its own folder; reports/latest/ stays the latest
        # audit's report (a reading command changes nothing else)
        written = write_report(rendered, Path(reports_dir), refresh_latest=False)
        click.echo(f"report: {written / 'report.md'}")


@cli.command()
@click.argument("audit_a", type=AUDIT_ID)
@click.argument("audit_b", type=AUDIT_ID)
@config_option
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print the changes as JSON.")
def diff(
    audit_a: int, audit_b: int, config_path: str | None, db_url: str | None, as_json: bool
) -> None:
    """What changed between two stored audits."""
    from crawler.audit import findings_between, source_names
    from crawler.report.json_report import change_entry
    from crawler.report.words import change_summary, kind_name, plural
    from crawler.store.links import link_findings
    from crawler.untrusted import one_line

    config = _load_if_present(config_path)
    store = _open_store(db_url, reading=True)
    try:
        before, after = store.audit(audit_a), store.audit(audit_b)
        if before is None or after is None:
            missing = audit_a if before is None else audit_b
            latest = store.latest_audit()
            known = f"the latest is #{latest.id}" if latest else "none yet: run `crawler audit`"
            raise Failure(f"no audit {missing} in the database ({known})")
        findings = findings_between(store, config, before, after)[0]
        # the link steps' findings of the audits after the first, up to the second
        found_links = link_findings(store, audit_a + 1, audit_b)[0] if audit_b > audit_a else []
    finally:
        store.close()
    changes = [*findings.changes, *found_links]
    if as_json:
        import msgspec

        entries = [msgspec.to_builtins(change_entry(c, source_names())) for c in changes]
        echo_json(entries, f"changes from audit #{audit_a} to #{audit_b}", default=str)
        return
    click.echo(f"{plural(len(changes), 'change')} from audit #{audit_a} to #{audit_b}")
    names = source_names()
    for change in changes:
        summary = one_line(change_summary(change, names), 300)
        click.echo(f"- {one_line(change.project)} {kind_name(change.kind)}: {summary}")


@cli.command("license")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def license_command(files: tuple[str, ...], as_json: bool) -> None:
    """Analyse local license files: SPDX ids, verdict, holders, extra text."""
    from crawler.analysis.licenses import analyze_file
    from crawler.report.words import render_analysis
    from crawler.untrusted import terminal_text

    for path in files:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO or a device would never end
            raise click.UsageError(f"{path} is not a regular file: pass license files")
    analyses = {path: analyze_file(path) for path in files}
    if as_json:
        echo_json({p: a.to_dict() for p, a in analyses.items()}, "license analyses")
        return
    for path, analysis in analyses.items():
        # the file's text is quoted: no escape sequence in it may reach the terminal
        click.echo(terminal_text(render_analysis(analysis, path)))


@cli.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON (shape: docs/links.md).")
@click.option("--allow-private", is_flag=True, help="Allow loopback/private addresses.")
def links(files: tuple[str, ...], config_path: str | None, as_json: bool, allow_private: bool
          ) -> None:  # fmt: skip
    """Check every http(s) link of Markdown or HTML files (the catalog page, in CI): exit 1
    when one failed or could not be checked."""
    from crawler.config import Settings
    from crawler.link_audit import DocumentError, check_files, links_json
    from crawler.report.words import link_check_line, link_check_summary
    from crawler.untrusted import terminal_text
    from crawler.upstream.forge_links import ForgeLinks

    config = _load_if_present(config_path)
    settings = config.settings if config is not None else Settings()
    if allow_private:
        settings = settings.model_copy(update={"allow_private_addresses": True})
    # repository pages: asked of the forge's API
    forges = ForgeLinks(config, os.environ, common=settings)
    try:
        data = links_json(check_files([Path(f) for f in files], settings, forges))
    except DocumentError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        forges.close()
    if as_json:
        echo_json(data, "link checks", ensure_ascii=False)
    else:
        for item in data["links"]:
            if item["outcome"] != "ok":
                click.echo(terminal_text(link_check_line(item)))
        click.echo(link_check_summary(data["summary"]))
    summary = data["summary"]
    sys.exit(1 if summary["failing"] or summary["error"] else 0)


def _table_options_problem(
    selector: str | None,
    heading: str | None,
    key: tuple[str, ...],
    items: str | None,
    labels: tuple[str, ...],
) -> str | None:
    """What is wrong with `crawler page`'s choice of a table, in its options' words (the
    checks of a sources.yaml table, said as flags), else None."""
    chosen = f"--table {selector!r}" if selector else f"--heading {heading!r}"
    if selector and heading:
        return "give --table or --heading, not both"
    if (selector or heading) and not key and not items:
        return (
            f"{chosen} needs --key: the column(s) that identify a row (--key COLUMN, once per "
            "column), or --items list|enumeration to read the lists there as a table; "
            "without --table and --heading the page's tables are listed with their columns"
        )
    if labels and not items:
        return "--label only applies with --items"
    if items and key and key != ("Item",):
        return "--items rows are keyed by their text (the column 'Item'): leave out --key"
    if items == "enumeration" and not labels:
        return (
            "--items enumeration is chosen by its label: add --label 'Integrations in "
            "progress' (the text before its colon)"
        )
    return None


@cli.command()
@click.argument("source")
@click.option("--table", "table_selector", default=None, help="CSS selector of the table.")
@click.option("--heading", default=None, help="Heading text the table follows.")
@click.option("--key", multiple=True, help="Identity column(s) of a row.")
@click.option(
    "--items",
    type=click.Choice(["list", "enumeration"]),
    default=None,
    help="Read the lists (or 'Label: a, b and c.' enumerations) there as a table of items.",
)
@click.option("--label", "labels", multiple=True, help="Keep the items under this label.")
@click.option(
    "--form",
    type=click.Choice(list(PAGE_FORMS)),
    default=None,
    help="Read the page as this form (default: by extension, then content type).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--allow-private", is_flag=True, help="Allow loopback/private addresses.")
@click.option(
    "--deadline",
    type=click.FloatRange(min=0, min_open=True),
    default=DEFAULT_REQUEST_DEADLINE,
    show_default=True,
    help="Give up on the page after this many seconds in all (settings.request_deadline).",
)
def page(
    source: str,
    table_selector: str | None,
    heading: str | None,
    key: tuple[str, ...],
    items: str | None,
    labels: tuple[str, ...],
    form: str | None,
    as_json: bool,
    allow_private: bool,
    deadline: float,
) -> None:
    """Show what would be extracted from a page (URL or file), to write a selector."""
    from crawler.analysis.pages import ExtractionError
    from crawler.config import Settings
    from crawler.report.words import page_preview
    from crawler.upstream.pages import (
        PRIVATE_HINT,
        PageFetchError,
        preview_page_json,
    )

    problem = _table_options_problem(table_selector, heading, key, items, labels)
    if problem:
        raise click.UsageError(problem)
    settings = Settings(allow_private_addresses=allow_private, request_deadline=deadline)
    options: dict[str, Any] = {
        "table_selector": table_selector,
        "heading": heading,
        "key": key,
        "items": items,
        "labels": labels,
        "form": form,
        "settings": settings,
    }
    try:
        if as_json:
            echo_json(preview_page_json(source, **options), "page preview", ensure_ascii=False)
        else:
            data = preview_page_json(source, **options)
            click.echo(page_preview(data, source, table_selector, heading))
    except (ExtractionError, PageFetchError, OSError) as exc:
        # this command has its own switch: name it rather than the sources.yaml setting
        raise click.ClickException(str(exc).replace(PRIVATE_HINT, "pass --allow-private")) from None


@cli.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
def validate(file: str) -> None:
    """Check a catalog.json: its schema, unique ids, references, vocabularies, dates, http(s)
    URLs and evidence. Exit 0 valid, 1 invalid, 2 not JSON."""
    from crawler.export.validate import validate_file

    if Path(file).suffix.lower() in (".yaml", ".yml"):
        raise click.UsageError(
            f"{file} looks like a sources.yaml: `crawler validate` checks a catalog.json; "
            f"check a sources.yaml with `crawler check --config {file}`"
        )
    code, lines = validate_file(Path(file))
    for line in lines:
        click.echo(line)
    sys.exit(code)


@cli.command("export")
@config_option
@db_option
@click.option("--audit", "audit_id", type=AUDIT_ID, default=None,
              help="The audit to export [default: the latest; a project it could not read is "
                   "exported from its last good state, marked stale].")  # fmt: skip
@click.option(
    "--out",
    "out_dir",
    default="export",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Where snapshot.md, catalog.json and catalog.schema.json are written.",
)
@click.option(
    "--into",
    type=click.Path(dir_okay=False, exists=True),
    default=None,
    help="A curated catalog.json to update in place: crawler-owned fields are refreshed, "
    "curated ones kept, disagreements listed in merge-report.json.",
)
@click.option(
    "--site",
    type=click.Path(file_okay=False),
    default=None,
    help="Also write the Compatibility Explorer (a static index.html) into this folder.",
)
@click.option(
    "--follow-links-outside",
    is_flag=True,
    help="Write through a symbolic link in --out or --site that leads outside that folder "
    "(refused by default: a link committed to a catalog repository would make the export "
    "write anywhere the job can).",
)
def export_command(
    config_path: str | None,
    db_url: str | None,
    audit_id: int | None,
    out_dir: str,
    into: str | None,
    site: str | None,
    follow_links_outside: bool,
) -> None:
    """Turn a stored audit into the catalog's files: snapshot.md (the release and license
    snapshot), catalog.json and its schema; optionally merge into a curated catalog."""
    from crawler.audit import source_names
    from crawler.export.from_store import NothingToExport, describe, export_audit
    from crawler.export.integrations import ExportError
    from crawler.export.merge import MergeError, render_merge_report
    from crawler.export.writer import ExportWriteError

    config = _load_if_present(config_path)
    labels = {name: names.label for name, names in source_names().items()}
    store = _open_store(db_url, reading=True)
    try:
        outcome = export_audit(
            store, config, audit_id, Path(out_dir), into=Path(into) if into else None,
            site=Path(site) if site else None, labels=labels,
            follow_links_outside=follow_links_outside,
        )  # fmt: skip
    except (ExportError, MergeError, NothingToExport) as exc:
        problems = getattr(exc, "problems", None)
        raise Failure("\n".join(problems) if problems else str(exc)) from None
    except ExportWriteError as exc:  # a full disk, no permission: not a usage error, exit 1
        raise click.ClickException(str(exc)) from None
    finally:
        store.close()
    for line in describe(outcome.export):
        click.echo(line)
    if outcome.failed_since and audit_id is None:
        shown = ", ".join(f"#{n}" for n in outcome.failed_since)
        click.echo(f"newer audits failed and read nothing, so they are not exported: {shown}")
    for path in outcome.written:
        click.echo(f"wrote {path}")
    if outcome.merge_report is not None:
        for line in render_merge_report(outcome.merge_report):
            click.echo(line)
    if outcome.taken:
        click.echo(f"no longer pending (the catalog holds them): {_listed(outcome.taken)}")


def _listed(items: Sequence[PendingItem]) -> str:
    from crawler.report.words import day, kind_name
    from crawler.untrusted import one_line

    return "; ".join(
        f"{one_line(i.project)} {kind_name(i.kind)} {one_line(i.value, 80)} "
        f"(since {day(i.first_seen_at)})"
        for i in items
    )


@cli.command()
@click.argument("projects", nargs=-1)
@click.option("--kind", "kinds", multiple=True, shell_complete=complete_pending_kinds,
              help="Only changes of this kind (new_release, license_changed, table_changed, "
                   "...); repeatable.")  # fmt: skip
@click.option("--all", "everything", is_flag=True, help="Every pending change.")
@db_option
def ack(
    projects: tuple[str, ...], kinds: tuple[str, ...], everything: bool, db_url: str | None
) -> None:
    """Acknowledge pending changes (by project, by kind, or --all): they leave the report's
    pending list, the notification and the catalog issue."""
    from datetime import UTC, datetime

    from crawler.diff.pending import PENDING_KINDS
    from crawler.store.pending import acknowledge, open_pending

    if not (projects or kinds or everything):
        raise click.UsageError("name the projects to acknowledge, give --kind, or --all")
    store = _open_store(db_url, existing=True)
    try:
        pending = open_pending(store)
        if projects:  # the names known: any the database observed, or with something pending
            known = {*store.known_projects(), *(item.project for item in pending)}
            projects = tuple(known_names(projects, known, "project"))
        kinds = tuple(known_names(kinds, [k.value for k in PENDING_KINDS], "kind", "--kind"))
        done = acknowledge(store, projects, kinds, datetime.now(UTC).replace(microsecond=0))
    finally:
        store.close()
    if not done:
        click.echo("nothing pending matched: nothing acknowledged")
        return
    click.echo(f"acknowledged {len(done)} pending change{'s' * (len(done) != 1)}: {_listed(done)}")


@cli.command()
@click.option(
    "--output",
    default="demo-output",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Where the demo database and reports go.",
)
def demo(output: str) -> None:
    """Offline demo: two recorded upstream states served on loopback, audited twice."""
    from crawler.demo import DemoUnavailable, run_demo

    try:
        result = run_demo(Path(output))
    except DemoUnavailable as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"demo report: {result.report}")
    for path in result.export.written:
        click.echo(f"demo {'site' if path.parent.name == 'site' else 'export'}: {path}")


cli.add_command(db)
cli.add_command(prune)
cli.add_command(check)
cli.add_command(notify)
add_examples(cli)  # last: every command is registered


def main() -> None:
    # At exit, the interpreter's last collection walks every object (a tenth of an unchanged
    # night); frozen, it walks none. Files and the database are closed by then.
    atexit.register(gc.freeze)
    if requested_format(sys.argv[1:], os.environ) == "json":
        sys.exit(main_in_json(cli))
    cli(prog_name="crawler")


if __name__ == "__main__":
    main()
