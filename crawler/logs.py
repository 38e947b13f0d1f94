"""What the command line shows and logs: plain text or one JSON object per line, secrets redacted.

- ``text`` (default): results on stdout, notes and logs on stderr (rich on a terminal).
- ``json``: every line the run writes, on either stream, is one JSON object, for log collectors.
- ``--quiet``: only errors and the result lines (the audit summary), for cron mail.

Every record is redacted of the GitHub token and the notification URLs (which hold secrets)
before it is written, whatever logger it comes from.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from typing import TYPE_CHECKING, Any, Literal, TextIO
from urllib.parse import unquote, urlsplit

import click

if TYPE_CHECKING:  # rich is loaded for a terminal display only, not under cron
    from rich.console import Console

from crawler import untrusted

LogFormat = Literal["text", "json"]
RESULT_LOGGER = "crawler.result"  # result lines: shown even with --quiet
STDOUT_MARK = "_crawler_stdout"  # a record that is a result: written to stdout, never a field
_OURS = "_crawler_output_handler"
# LogRecord attributes that are not extra fields given by the caller
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


def secrets_from_env(env: Mapping[str, str]) -> list[str]:
    """Strings that must never be written: the GitHub token, a proxy's user and password, and
    the credential-like parts of the CRAWLER_NOTIFY URLs (user, password, a host that is a token
    rather than a name, path and query segments of 8 characters or more)."""
    found = [env.get("GITHUB_TOKEN") or "", env.get("GH_TOKEN") or ""]
    kept: list[str] = []
    for url in re.split(r"[\s,]+", env.get("CRAWLER_NOTIFY", "")):
        if "://" not in url:
            continue
        parts = urlsplit(url)
        found += [unquote(parts.username)] if parts.username else []
        # a password or a token is a secret however short (masked as a whole word only)
        credentials = [unquote(parts.password)] if parts.password else []
        host = parts.netloc.rpartition("@")[2].partition(":")[0]  # as written: case kept
        if "." not in host and host:  # slack://TOKEN_A/TOKEN_B/…: the "host" is a credential
            credentials.append(unquote(host))
        found += [unquote(s) for s in re.split(r"[/?&=]", parts.path + "?" + parts.query)]
        kept += [c for c in credentials if c.strip()]
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"):  # a proxy's credentials too
        for value in (env.get(name), env.get(name.lower())):
            if value and "@" in value:
                proxy = urlsplit(value if "://" in value else f"http://{value}")
                kept += [unquote(p) for p in (proxy.username, proxy.password) if p]
    return sorted({s for s in found if len(s) >= 8} | set(kept), key=len, reverse=True)


def redact(text: str, secrets: Iterable[str]) -> str:
    return untrusted.redact(text, secrets)


# Libraries that give their own logger a handler when imported: PyGithub prints bare lines on
# stderr with it ("Following Github server redirection …"), beside ours (twice in text mode,
# once ours, once its own), and unredacted.
OWN_HANDLER_LIBRARIES = ("github",)


def adopt_library_loggers() -> None:
    """Once this process's logging is configured: the handlers libraries put on their own
    loggers removed, and their level left to ours (-vv shows their debug), so their records
    reach our one handler, redacted, in our format. Called after the library is imported
    (it is imported late: only when first needed)."""
    if not any(getattr(h, _OURS, False) for h in logging.getLogger().handlers):
        return  # not configured by us (a library use): their handlers are theirs to keep
    for name in OWN_HANDLER_LIBRARIES:
        library = logging.getLogger(name)
        for handler in [h for h in library.handlers if not getattr(h, _OURS, False)]:
            library.removeHandler(handler)
        library.setLevel(logging.NOTSET)


class _Redacting(logging.Formatter):
    def __init__(self, secrets: list[str], fmt: str | None = None) -> None:
        super().__init__(fmt)
        self.secrets = secrets

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        """ISO 8601 in UTC, as the reports write it: 2026-12-01T03:00:02.123Z."""
        moment = datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
        return moment.replace("+00:00", "Z")

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record), self.secrets)


class JsonFormatter(_Redacting):
    """One JSON object per record: time (ISO, UTC), level, logger, message, extra fields."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat().replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": redact(record.getMessage(), self.secrets),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exception"] = redact(self.formatException(record.exc_info), self.secrets)
        text = json.dumps(entry, default=str, ensure_ascii=False)
        return redact(text, self.secrets)


@dataclass
class Output:
    """How this run writes: chosen once from the command line's global options."""

    log_format: LogFormat = "text"
    quiet: bool = False
    secrets: list[str] = field(default_factory=list)
    terminal: bool = False  # stderr is a terminal and text output: rich progress
    result_log: logging.Logger = field(default_factory=lambda: logging.getLogger(RESULT_LOGGER))
    db_url: str | None = None  # the database this command opened (its failures name it)

    def add_secrets(self, values: Iterable[str]) -> None:
        """More strings never to write (read from sources.yaml once it is loaded): every
        handler this run configured redacts them from then on (they share this list)."""
        known = set(self.secrets)
        self.secrets.extend(v for v in values if v and v not in known)

    def result(self, message: str, **fields: Any) -> None:
        """A result line (audit summary, report path): stdout, kept by --quiet."""
        if self.log_format == "json":
            self.result_log.info(message, extra={**fields, STDOUT_MARK: True})
        else:
            click.echo(redact(message, self.secrets))

    def detail(self, message: str, **fields: Any) -> None:
        """A result line --quiet leaves out (the report path, a delivery that worked)."""
        if not self.quiet:
            self.result(message, **fields)

    def note(self, message: str, **fields: Any) -> None:
        """Something worth knowing that is not an error (no token, next tick…)."""
        if self.quiet:
            return
        if self.log_format == "json":
            self.result_log.warning(message, extra=fields)
        else:
            click.echo(redact(message, self.secrets), err=True)

    def stderr(self, line: str, level: int = logging.ERROR, **fields: Any) -> None:
        """A line for stderr as it is written in text mode; one JSON object in json mode."""
        if self.log_format == "json":
            self.result_log.log(level, line, extra=fields)
        else:
            click.echo(redact(line, self.secrets), err=True)

    def error(self, message: str, **fields: Any) -> None:
        """A failure the operator must see, even with --quiet (it does not stop the run)."""
        if self.log_format == "json":
            self.result_log.error(message, extra=fields)
        else:
            click.echo(redact(f"error: {message}", self.secrets), err=True)


def configure_output(
    verbose: int,
    quiet: bool,
    log_format: LogFormat,
    env: Mapping[str, str],
    stream: TextIO | None = None,
    results: TextIO | None = None,
) -> Output:
    """Set up logging for the whole process and return how results are written.

    Levels: the crawler's own loggers at INFO (-v DEBUG), libraries at WARNING (-vv DEBUG),
    everything at ERROR with --quiet; result lines always. Logs go to ``stream`` (stderr);
    in the JSON format results go to ``results`` (stdout; the same ``stream`` when only that
    is given).
    """
    secrets = secrets_from_env(env)
    results = results if results is not None else (sys.stdout if stream is None else stream)
    stream = stream if stream is not None else sys.stderr
    terminal = log_format == "text" and not quiet and stream.isatty()
    handler: logging.Handler
    handlers: list[logging.Handler] = []
    if terminal:
        handler = rich_log_handler(secrets)
    else:
        handler = logging.StreamHandler(stream)
        if log_format == "json":
            handler.setFormatter(JsonFormatter(secrets))
            if results is not stream:  # results on stdout, as in text mode; logs on stderr
                handler.addFilter(lambda r: not getattr(r, STDOUT_MARK, False))
                on_stdout = logging.StreamHandler(results)
                on_stdout.setFormatter(JsonFormatter(secrets))
                on_stdout.addFilter(lambda r: getattr(r, STDOUT_MARK, False))
                handlers.append(on_stdout)
        else:
            handler.setFormatter(
                _Redacting(secrets, "%(asctime)s %(levelname)s %(name)s: %(message)s")
            )
    handlers.insert(0, handler)
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, _OURS, False)]:
        root.removeHandler(old)  # a second run in one process (tests) replaces ours only
    for each in handlers:
        if quiet:  # result lines, and errors from anywhere (a library may set its own level)
            each.addFilter(lambda r: r.name == RESULT_LOGGER or r.levelno >= logging.ERROR)
        setattr(each, _OURS, True)
        root.addHandler(each)
    root.setLevel(logging.ERROR if quiet else logging.DEBUG if verbose >= 2 else logging.WARNING)
    own = logging.getLogger("crawler")
    own.setLevel(logging.ERROR if quiet else logging.DEBUG if verbose else logging.INFO)
    result_log = logging.getLogger(RESULT_LOGGER)
    result_log.setLevel(logging.INFO)
    adopt_library_loggers()  # those imported already; the others when they are
    return Output(log_format, quiet, secrets, terminal, result_log)


class JsonLines:
    """A text stream that passes on JSON objects and turns every other line written to it into
    one (``--log-format json``): what a command prints with ``click.echo``, a library's bare
    line, a warning. Installed on stdout and stderr for the whole run, so every line of both
    streams is one JSON object, whoever writes it. Blank lines are dropped."""

    def __init__(
        self, stream: TextIO, logger: str, level: str, secrets: Callable[[], list[str]]
    ) -> None:
        self.stream = stream
        self.logger = logger
        self.level = level
        self.secrets = secrets  # the run's, as they become known (the database password…)
        self._pending = ""
        self._closed_by_reader = False

    def write(self, text: str) -> int:
        self._pending += text
        while "\n" in self._pending:
            line, self._pending = self._pending.split("\n", 1)
            self._emit(line)
        return len(text)

    def _emit(self, line: str) -> None:
        if not line.strip():
            return
        try:
            parsed = json.loads(line)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            self._write(line + "\n")
            return
        secrets = self.secrets()
        entry = {
            "time": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
            "level": self.level,
            "logger": self.logger,
            "message": redact(line.rstrip("\r"), secrets),
        }
        self._write(redact(json.dumps(entry, ensure_ascii=False), secrets) + "\n")

    def _write(self, text: str) -> None:
        if self._closed_by_reader:
            return
        try:
            self.stream.write(text)
        except BrokenPipeError:  # `crawler … | head`: the reader is gone, nothing more to say
            self._closed_by_reader = True

    def flush(self) -> None:  # a line written in parts stays one line: kept until its end
        if not self._closed_by_reader:
            try:
                self.stream.flush()
            except BrokenPipeError:
                self._closed_by_reader = True

    def finish(self) -> None:
        """The run is over: a last line without its newline is written too."""
        if self._pending:
            line, self._pending = self._pending, ""
            self._emit(line)
        self.flush()

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:  # encoding, fileno, buffer…: the real stream's
        return getattr(self.stream, name)


@cache
def stderr_console() -> Console:
    """One console for the progress display and the log lines, so logs print above the bar."""
    from rich.console import Console

    return Console(stderr=True)


def rich_log_handler(secrets: list[str]) -> logging.Handler:
    from rich.logging import RichHandler
    from rich.text import Text

    handler = RichHandler(
        console=stderr_console(),
        show_path=False,
        markup=False,
        log_time_format=lambda moment: Text(
            moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        ),
    )
    handler.setFormatter(_Redacting(secrets, "%(message)s"))
    return handler


def requested_format(args: list[str], env: Mapping[str, str]) -> LogFormat:
    """The --log-format the command line asks for (it comes before the command), else
    CRAWLER_LOG_FORMAT's, read before click parses anything: a command line click refuses
    is answered in that format too."""
    chosen = env.get("CRAWLER_LOG_FORMAT", "text")
    for index, arg in enumerate(args):
        if arg == "--log-format" and index + 1 < len(args):
            chosen = args[index + 1]
        elif arg.startswith("--log-format="):
            chosen = arg.partition("=")[2]
        elif not arg.startswith("-"):
            break  # the command: global options come before it
    return "json" if chosen == "json" else "text"
