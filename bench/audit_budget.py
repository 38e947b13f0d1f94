"""The nightly audit side by side with nvchecker: requests, wall time, peak memory.

One run, one GitHub-shaped fake (``FakeGitHub`` on loopback, ``synthetic_state(n)``, a fixed
latency per request), both tools each in a child process of their own:

* the crawler is ``python -m crawler --quiet audit`` (what cron runs), on a SQLite file, with
  its default settings: a first audit and unchanged re-audits, with a token (GraphQL batches +
  REST for what changed) and without (REST with conditional requests);
* nvchecker (``bench/requirements.txt``) checks the same repositories with its ``github``
  source (``use_max_release``) at its default concurrency, served over TLS on
  ``api.localhost`` by a second listener of the same fake, with a throw-away CA (``trustme``).

It also keeps the database-growth figure: the SQLite file after K unchanged audits. What the
nights of the shipped catalog (``sources.yaml``) cost is ``bench/catalog_nights.py``.

Reproduce (from the repository root, in the project's virtualenv):

    pip install -r bench/requirements.txt        # nvchecker + trustme, bench-only
    python bench/audit_budget.py --quick         # 200 projects, 1 run each (~1 minute)
    python bench/audit_budget.py                 # 1,000 projects, 3 runs each (~7 minutes)
    python bench/audit_budget.py --n 1000 --latency 0.03 --repeat 5 --unchanged-audits 30

How figures are taken:
- wall time: from starting the child process to its exit, interpreter start and imports
  included, for both tools; peak RSS: the child's ``ru_maxrss`` from ``os.wait4``, read by a
  small launcher process (see ``LAUNCHER``: a child forked straight from this process would
  be charged with this process's own memory);
- requests: the fake's request log for that child (the crawler's free ``GET /rate_limit``
  included); GraphQL points: the sum of ``rateLimit.cost``;
- every figure shown for a repeated run is the median of ``--repeat`` runs; runs of the two
  tools alternate, so that load from elsewhere on the machine falls on both; the ratios are
  crawler / nvchecker within this run (absolute times depend on the machine and its load);
- nvchecker keeps no validators between runs, so its first run and its re-runs are the same
  work: both of its rows show the median of all its runs in that mode;
- the budgets are refilled before every run: GitHub's 5,000 with a token; anonymous REST is
  unlimited here (it measures cost, not GitHub's 60 an hour; bench/catalog_nights.py runs the
  shipped catalog on 60);
- database size = SQLite file + WAL after ``PRAGMA wal_checkpoint(TRUNCATE)``; growth is from
  the end of the first audit to the end of the K-th unchanged audit after it (the audits
  after the timed ones run with ``--loop-latency``, default 0: latency changes nothing that is
  written).

This prints tables; it asserts nothing (behaviour is checked in ``tests/``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "ghp_benchmark_token_0123456789abcdef"
MB = 1024 * 1024
GITHUB_BUDGET = 5000
# Targets (issue 12), checked in the printed tables, never asserted
UNCHANGED_TOKEN_WALL = 1.0  # x nvchecker
UNCHANGED_TOKEN_POINTS = 25
UNCHANGED_TOKEN_RSS_MB = 90.0
FIRST_TOKEN_WALL = 5.0  # x nvchecker
FIRST_TOKEN_RSS_MB = 150.0
UNCHANGED_ANONYMOUS_WALL = 10.0  # x nvchecker
DB_GROWTH_MB = 5.0  # over 30 unchanged audits
# Environment variables that would point a child elsewhere than this bench's fakes
FOREIGN_ENV = ("GITHUB_TOKEN", "GH_TOKEN", "GITHUB_API_URL", "GITEE_TOKEN", "GITEE_API_URL",
               "GITLAB_TOKEN", "GITLAB_URL", "PYPI_API_URL", "CRAWLER_DB_URL")  # fmt: skip


# ------------------------------------------------------------------------------------- helpers


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [[str(c) for c in header], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]

    def line(row: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"

    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(cells[0]), sep, *(line(r) for r in cells[1:])])


def verdict(met: bool) -> str:
    return "MET" if met else "MISSED"


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def child_env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in FOREIGN_ENV}
    env.update(extra)
    return env


# Linux charges a child's ru_maxrss with the memory of the process it was forked from (exec
# records the old address space's high-water mark): a tool started straight from this process,
# which holds the fake and its request log (100 MB and more), would be reported at least that
# big. So each tool is started by a small launcher (a bare interpreter, about 10 MB), which
# times it and reads its ru_maxrss.
LAUNCHER = """
import json, os, subprocess, sys, time
command, result = json.loads(sys.argv[1]), sys.argv[2]
started = time.perf_counter()
proc = subprocess.Popen(command, stdin=subprocess.DEVNULL)
_pid, status, usage = os.wait4(proc.pid, 0)
seconds = time.perf_counter() - started
with open(result, "w") as out:
    json.dump([seconds, usage.ru_maxrss, os.waitstatus_to_exitcode(status)], out)
"""


def run_child(command: Sequence[str], env: dict[str, str], cwd: Path, log: Path) -> Measured:
    """Run one child process to its end: wall seconds, peak RSS (KiB) and exit code, as its
    launcher measured them (start to exit of the tool itself)."""
    result = log.with_name(log.name + ".measured.json")
    with log.open("w") as out:
        launcher = subprocess.run(
            [sys.executable, "-I", "-S", "-c", LAUNCHER, json.dumps(list(command)), str(result)],
            env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            check=False,
        )  # fmt: skip
    if launcher.returncode != 0 or not result.exists():
        raise RuntimeError(f"the launcher failed ({launcher.returncode}): see {log}")
    seconds, maxrss_kb, exit_code = json.loads(result.read_text())
    return Measured(float(seconds), int(maxrss_kb), int(exit_code))


@dataclass(frozen=True)
class Measured:
    seconds: float
    maxrss_kb: int
    exit_code: int


def refill(fake: Any) -> None:
    """A fresh hour of GitHub's budgets: every run starts from the same 5,000."""
    fake.set_rate_limit(GITHUB_BUDGET, authenticated=True, resource="core")
    fake.set_rate_limit(GITHUB_BUDGET, authenticated=True, resource="graphql")


def sqlite_size(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    wal = path.with_name(path.name + "-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


# --------------------------------------------------------------------------- one run of a tool


@dataclass
class Run:
    requests: int
    seconds: float
    maxrss_kb: int
    exit_code: int
    graphql_points: int = 0
    rest: int = 0  # REST requests, /rate_limit (free) excluded
    rest_not_304: list[str] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)  # the crawler's report summary
    versions: int = 0  # nvchecker: entries it found a version for

    @property
    def rss_mb(self) -> float:
        return self.maxrss_kb / 1024


def _requests_of(fake: Any, start: int, measured: Measured) -> Run:
    records = fake.requests[start:]
    rest = [r for r in records if r.path != "/rate_limit" and r.path != "/graphql"]
    not_304 = [f"{r.status} {re.sub(r'/repos/[^/]+/[^/?]+', '/repos/{r}', r.path)}"
               for r in rest if r.status != 304]  # fmt: skip
    return Run(len(records), measured.seconds, measured.maxrss_kb, measured.exit_code,
               graphql_points=sum(r.graphql_cost for r in records), rest=len(rest),
               rest_not_304=not_304)  # fmt: skip


class Crawler:
    """The crawler's audits of one catalog into one database, each ``crawler audit`` a child."""

    def __init__(self, fake: Any, workdir: Path, config: Path, token: str | None) -> None:
        self.fake = fake
        self.workdir = workdir
        self.config = config
        self.db = workdir / "crawler.sqlite"
        self.reports = workdir / "reports"
        self.env = {"GITHUB_API_URL": fake.base_url, **({"GITHUB_TOKEN": token} if token else {})}

    def audit(self) -> Run:
        refill(self.fake)
        start = len(self.fake.requests)
        command = [sys.executable, "-m", "crawler", "--quiet", "audit", "--config",
                   str(self.config), "--db", f"sqlite:///{self.db}", "--reports",
                   str(self.reports)]  # fmt: skip
        measured = run_child(command, child_env(self.env), ROOT, self.workdir / "audit.log")
        run = _requests_of(self.fake, start, measured)
        report = json.loads((self.reports / "latest" / "report.json").read_text())
        run.summary = {**report["summary"], "status": report["audit"]["status"]}
        if measured.exit_code not in (0, 1):
            log = (self.workdir / "audit.log").read_text()[-3000:]
            raise RuntimeError(f"crawler audit exited {measured.exit_code}:\n{log}")
        return run


class TlsFront:
    """A second listener on the same FakeGitHub, over TLS, for clients that insist on https."""

    def __init__(self, fake: Any, context: ssl.SSLContext) -> None:
        from crawler_fakes import github as fake_module

        server = fake_module._Server(("127.0.0.1", 0), fake_module._Handler)
        server.fake = fake
        # the handshake happens on first read, in the request's own thread
        server.socket = context.wrap_socket(server.socket, server_side=True,
                                            do_handshake_on_connect=False)  # fmt: skip
        self.server = server
        self.port = int(server.server_address[1])
        self.thread = threading.Thread(target=server.serve_forever,
                                       kwargs={"poll_interval": 0.05}, daemon=True)  # fmt: skip

    def __enter__(self) -> TlsFront:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def nvchecker_missing() -> str | None:
    """None when nvchecker and trustme are importable, else why not."""
    try:
        import nvchecker  # noqa: F401
        import nvchecker_source.github  # noqa: F401
        import trustme  # noqa: F401
    except ImportError as exc:
        return f"{exc.name} is not installed: pip install -r bench/requirements.txt"
    return None


class NvChecker:
    """nvchecker's ``github`` source (``use_max_release``) on the same fake, over TLS.

    nvchecker builds ``https://api.<host>/repos/...``: with ``host = "localhost:PORT"`` that is
    ``https://api.localhost:PORT``, which libcurl resolves to loopback by itself; the
    certificate comes from a CA made here and handed over with ``SSL_CERT_FILE``. With a token
    it still uses REST for this check (GraphQL only for ``use_latest_tag``, or
    ``use_latest_release`` with ``include_prereleases``)."""

    def __init__(self, fake: Any, port: int, ca_pem: Path, workdir: Path, token: str | None,
                 repos: Sequence[tuple[str, str]]) -> None:  # fmt: skip
        self.fake = fake
        self.workdir = workdir
        lines = ["[__config__]", 'oldver = "old.json"', 'newver = "new.json"', ""]
        for name, path in repos:
            lines += [f'["{name}"]', 'source = "github"', f'github = "{path}"',
                      f'host = "localhost:{port}"', "use_max_release = true"]  # fmt: skip
            if token:
                lines.append(f'token = "{token}"')
            lines.append("")
        workdir.mkdir(parents=True, exist_ok=True)
        (workdir / "nvchecker.toml").write_text("\n".join(lines))
        self.env = {"SSL_CERT_FILE": str(ca_pem)}

    def check(self) -> Run:
        refill(self.fake)
        start = len(self.fake.requests)
        command = [sys.executable, "-m", "nvchecker", "-c", "nvchecker.toml"]
        measured = run_child(command, child_env(self.env), self.workdir,
                             self.workdir / "nvchecker.log")  # fmt: skip
        if measured.exit_code != 0:
            log = (self.workdir / "nvchecker.log").read_text()[-2000:]
            raise RuntimeError(f"nvchecker failed:\n{log}")
        run = _requests_of(self.fake, start, measured)
        run.versions = len(json.loads((self.workdir / "new.json").read_text()).get("data", {}))
        (self.workdir / "new.json").replace(self.workdir / "old.json")
        return run


# --------------------------------------------------------------------------- side by side


@dataclass
class Mode:
    """One mode (token or anonymous): the crawler's first audits and unchanged re-audits,
    nvchecker's runs, and the database growth over the unchanged audits."""

    name: str
    first: list[Run] = field(default_factory=list)
    unchanged: list[Run] = field(default_factory=list)
    nvchecker: list[Run] = field(default_factory=list)
    db_after_first: int = 0
    db_after_unchanged: int = 0
    unchanged_audits: int = 0


def config_text(repos: Sequence[tuple[str, str]], concurrency: int | None = None) -> str:
    """A sources.yaml for (project name, owner/name) pairs: default settings, unless a GitHub
    concurrency is given."""
    lines = [f"github: {{concurrency: {concurrency}}}"] if concurrency else []
    lines += ["projects:"]
    for name, repo in repos:
        lines += [f"  - name: {name}", f"    repo: {repo}"]
    return "\n".join(lines) + "\n"


def side_by_side(args: argparse.Namespace, log: Callable[[str], None]) -> tuple[list[Mode], str]:
    from crawler_fakes.github import FakeGitHub, synthetic_state

    state = synthetic_state(args.n, args.seed)
    repos = [(r.name, f"{r.owner}/{r.name}") for r in state.repos]
    missing = None if args.no_nvchecker else nvchecker_missing()
    note = "disabled with --no-nvchecker" if args.no_nvchecker else missing or ""
    modes: list[Mode] = []
    with tempfile.TemporaryDirectory(prefix="audit-budget-") as tmp, FakeGitHub(
        state, token=TOKEN, unauth_limit=10**9, latency=args.latency
    ) as fake:
        work = Path(tmp)
        (work / "sources.yaml").write_text(config_text(repos, args.github_concurrency))
        tls = None
        if not note:
            import trustme

            ca = trustme.CA()
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            ca.issue_cert("api.localhost", "localhost", "127.0.0.1").configure_cert(context)
            ca.cert_pem.write_to_path(str(work / "ca.pem"))
            tls = TlsFront(fake, context).__enter__()
        try:
            for name in args.modes:
                token = TOKEN if name == "token" else None
                mode = Mode(name)
                nv = (NvChecker(fake, tls.port, work / "ca.pem", work / f"nv-{name}", token, repos)
                      if tls else None)  # fmt: skip
                for attempt in range(args.repeat):  # each first audit on an empty database
                    fake.latency = args.latency
                    crawler = Crawler(fake, work / f"{name}-{attempt}", work / "sources.yaml",
                                      token)  # fmt: skip
                    crawler.workdir.mkdir()
                    mode.first.append(crawler.audit())
                    log(f"  {name:9} first audit {attempt + 1}: {mode.first[-1].requests} req, "
                        f"{mode.first[-1].seconds:.1f} s")  # fmt: skip
                    if nv:
                        mode.nvchecker.append(nv.check())
                        log(f"  {name:9} nvchecker {len(mode.nvchecker)}: "
                            f"{mode.nvchecker[-1].seconds:.1f} s")  # fmt: skip
                mode.db_after_first = sqlite_size(crawler.db)
                for attempt in range(args.repeat):
                    mode.unchanged.append(crawler.audit())
                    log(f"  {name:9} unchanged audit {attempt + 1}: "
                        f"{mode.unchanged[-1].requests} req, {mode.unchanged[-1].seconds:.1f} s")
                    if nv:
                        mode.nvchecker.append(nv.check())
                        log(f"  {name:9} nvchecker {len(mode.nvchecker)}: "
                            f"{mode.nvchecker[-1].seconds:.1f} s")  # fmt: skip
                fake.latency = args.loop_latency
                for _ in range(max(args.unchanged_audits - args.repeat, 0)):
                    crawler.audit()
                fake.latency = args.latency
                mode.unchanged_audits = max(args.unchanged_audits, args.repeat)
                mode.db_after_unchanged = sqlite_size(crawler.db)
                log(f"  {name:9} {mode.unchanged_audits} unchanged audits done")
                modes.append(mode)
        finally:
            if tls is not None:
                tls.__exit__()
    return modes, note


# ------------------------------------------------------------------------------- the report


ROW_NAMES = {("token", "first"): "first audit, token",
             ("token", "unchanged"): "unchanged re-audit, token",
             ("anonymous", "first"): "first audit, no token",
             ("anonymous", "unchanged"): "unchanged re-audit, no token"}  # fmt: skip


def _median_run(runs: Sequence[Run]) -> tuple[int, float, float]:
    """(requests, median wall seconds, median peak RSS MB); requests are the same every run."""
    return (int(median([r.requests for r in runs])), median([r.seconds for r in runs]),
            median([r.rss_mb for r in runs]))  # fmt: skip


def render_side_by_side(modes: Sequence[Mode], note: str, args: argparse.Namespace) -> list[str]:
    from crawler.upstream.sources.github import GitHubSettings

    concurrency = args.github_concurrency or GitHubSettings().concurrency
    out = [f"## Side by side: {args.n} projects, {args.latency * 1000:.0f} ms per request, "
           f"medians of {args.repeat} run(s), crawler github.concurrency {concurrency}\n"]
    rows: list[list[object]] = []
    for mode in modes:
        for kind, runs in (("first", mode.first), ("unchanged", mode.unchanged)):
            c_req, c_s, c_mb = _median_run(runs)
            row: list[object] = [ROW_NAMES[(mode.name, kind)]]
            if mode.nvchecker:
                n_req, n_s, n_mb = _median_run(mode.nvchecker)
                row += [n_req, f"{n_s:.2f}", f"{n_mb:.0f}"]
            else:
                row += ["-", "-", "-"]
            row += [c_req, f"{c_s:.2f}", f"{c_mb:.0f}"]
            row += ([f"{c_s / n_s:.2f}x", f"{c_mb / n_mb:.2f}x"] if mode.nvchecker
                    else ["-", "-"])  # fmt: skip
            rows.append(row)
    out.append(table(["run", "nvchecker req", "nvchecker wall s", "nvchecker peak RSS MB",
                      "crawler req", "crawler wall s", "crawler peak RSS MB",
                      "wall crawler/nvchecker", "RSS crawler/nvchecker"], rows))  # fmt: skip
    version = ""
    if not note:
        from importlib.metadata import version as installed

        version = f"nvchecker {installed('nvchecker')}, "
    out.append(
        f"\n{version or 'nvchecker not run (' + note + '); '}github source, use_max_release, "
        "its default concurrency; it keeps no validators, so each of its runs is the same work "
        "and both of its rows show the median of all its runs in that mode. Wall time: child "
        "process start to exit; peak RSS: the child's ru_maxrss; crawler requests include the "
        "free GET /rate_limit."
    )
    for mode in modes:
        if mode.nvchecker:
            found = mode.nvchecker[0].versions
            out.append(f"nvchecker ({mode.name}) found a version for {found}/{args.n} "
                       "repositories (none for those without a release); the crawler for "
                       f"{mode.first[-1].summary.get('checked')}/{args.n} (tags or head commit "
                       "when there is no release).")  # fmt: skip
    return out


def render_details(modes: Sequence[Mode], args: argparse.Namespace) -> list[str]:
    out = ["\n## Unchanged re-audits\n"]
    rows = []
    for mode in modes:
        runs = mode.unchanged
        rest = sum(r.rest for r in runs)
        not_304 = [x for r in runs for x in r.rest_not_304]
        points = sorted({r.graphql_points for r in runs})
        changes = sorted({int(r.summary.get("changes", -1)) for r in runs})
        statuses = sorted({str(r.summary.get("status")) for r in runs})
        rows.append([mode.name, len(runs), ", ".join(map(str, points)), rest,
                     "yes" if not not_304 else f"no: {len(not_304)} ({', '.join(not_304[:2])})",
                     ", ".join(map(str, changes)), ", ".join(statuses)])  # fmt: skip
    out.append(table(["mode", "runs", "GraphQL points per run", "REST requests (all runs)",
                      "every REST request answered 304?", "changes reported", "status"],
                     rows))  # fmt: skip
    out.append("\nREST requests exclude the free GET /rate_limit.")
    return out


def render_growth(modes: Sequence[Mode]) -> list[str]:
    out = ["\n## Database growth\n"]
    rows = []
    for mode in modes:
        growth = mode.db_after_unchanged - mode.db_after_first
        rows.append([mode.name, f"{mode.db_after_first / MB:.2f}", mode.unchanged_audits,
                     f"{growth / 1024:.1f} KiB"])  # fmt: skip
    out.append(table(["mode", "DB MB after the first audit", "unchanged audits after it",
                      "growth"], rows))  # fmt: skip
    return out


def render_targets(modes: Sequence[Mode]) -> list[str]:
    by = {m.name: m for m in modes}
    rows: list[list[object]] = []

    def ratio(runs: Sequence[Run], nv: Sequence[Run]) -> float:
        return median([r.seconds for r in runs]) / median([r.seconds for r in nv])

    token = by.get("token")
    if token:
        rss = median([r.rss_mb for r in token.unchanged])
        points = max(r.graphql_points for r in token.unchanged)
        not_304 = sum(len(r.rest_not_304) for r in token.unchanged)
        if token.nvchecker:
            wall = ratio(token.unchanged, token.nvchecker)
            rows.append(["unchanged re-audit, token: wall <= 1.0x nvchecker", f"{wall:.2f}x",
                         verdict(wall <= UNCHANGED_TOKEN_WALL)])  # fmt: skip
            wall = ratio(token.first, token.nvchecker)
            rows.append(["first audit, token: wall <= 5x nvchecker", f"{wall:.2f}x",
                         verdict(wall <= FIRST_TOKEN_WALL)])  # fmt: skip
        rows.append(["unchanged re-audit, token: <= 25 GraphQL points", points,
                     verdict(points <= UNCHANGED_TOKEN_POINTS)])  # fmt: skip
        rows.append(["unchanged re-audit, token: no REST request not answered 304",
                     f"{not_304} not 304", verdict(not_304 == 0)])  # fmt: skip
        rows.append(["unchanged re-audit, token: peak RSS <= 90 MB", f"{rss:.0f} MB",
                     verdict(rss <= UNCHANGED_TOKEN_RSS_MB)])  # fmt: skip
        rss = median([r.rss_mb for r in token.first])
        rows.append(["first audit, token: peak RSS <= 150 MB", f"{rss:.0f} MB",
                     verdict(rss <= FIRST_TOKEN_RSS_MB)])  # fmt: skip
    anonymous = by.get("anonymous")
    if anonymous:
        if anonymous.nvchecker:
            wall = ratio(anonymous.unchanged, anonymous.nvchecker)
            rows.append(["unchanged re-audit, no token: wall <= 10x nvchecker", f"{wall:.2f}x",
                         verdict(wall <= UNCHANGED_ANONYMOUS_WALL)])  # fmt: skip
        not_304 = sum(len(r.rest_not_304) for r in anonymous.unchanged)
        total = sum(r.rest for r in anonymous.unchanged)
        rows.append(["unchanged re-audit, no token: every request answered 304",
                     f"{not_304} of {total} not 304", verdict(not_304 == 0)])  # fmt: skip
    for mode in modes:
        growth = mode.db_after_unchanged - mode.db_after_first
        scaled = growth * 30 / max(mode.unchanged_audits, 1)
        note = "" if mode.unchanged_audits == 30 else f" (x30/{mode.unchanged_audits})"
        rows.append([f"{mode.name}: DB growth over 30 unchanged audits < 5 MB",
                     f"{scaled / MB:.3f} MB{note}", verdict(scaled < DB_GROWTH_MB * MB)])
    return ["\n## Targets\n", table(["target", "measured", "verdict"], rows)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--n", type=int, default=None, help="projects (default 1000)")
    parser.add_argument("--latency", type=float, default=0.03, help="seconds per request")
    parser.add_argument("--repeat", type=int, default=None,
                        help="runs of each kind, medians shown (default 3)")
    parser.add_argument("--unchanged-audits", type=int, default=None,
                        help="unchanged audits after the first, for DB growth (default 30)")
    parser.add_argument("--loop-latency", type=float, default=0.0,
                        help="latency of the untimed unchanged audits (DB growth only)")
    parser.add_argument("--modes", default="token,anonymous")
    parser.add_argument("--github-concurrency", type=int, default=None,
                        help="the crawler's github.concurrency (default: its own default)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true",
                        help="200 projects, 1 run of each kind, 3 unchanged audits")
    parser.add_argument("--no-nvchecker", action="store_true")
    args = parser.parse_args(argv)
    args.n = args.n or (200 if args.quick else 1000)
    args.repeat = args.repeat or (1 if args.quick else 3)
    if args.unchanged_audits is None:
        args.unchanged_audits = 3 if args.quick else 30
    args.modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if set(args.modes) - {"token", "anonymous"}:
        parser.error("--modes takes token and/or anonymous")
    started = time.perf_counter()

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    modes, note = side_by_side(args, log)
    out = render_side_by_side(modes, note, args)
    out += render_details(modes, args)
    out += render_targets(modes)
    out += render_growth(modes)
    print("\n".join(out))
    print(f"\n(total bench time {time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
