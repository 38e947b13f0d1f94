"""The crawler and nvchecker side by side, measured so that neither can be flattered.

Both tools check the same synthetic catalog on the same ``FakeGitHub`` over the same transport
(one TLS listener, certificate from a throw-away CA), each in a child process of its own,
started by a small launcher that reads the child's own resource usage from ``os.wait4``:

* wall time (start to exit, interpreter start and imports included), CPU time (user + system
  of the tool's own process, its threads included) and peak RSS of the tool's own process;
* requests, from the fake's log; the fake's own time per request (reading, routing, GraphQL
  execution, JSON; latency left out: ``RequestRecord.service_seconds``), REST and GraphQL apart;
* each tool's latency floor: ceil(requests / concurrency) x latency, and how far above it the
  tool ran (1.00x = nothing but waiting on the fake's latency);
* both tools byte-compiled, as an installed package is: pip compiles nvchecker (and every
  dependency) when it installs it, but the crawler is installed editable from this checkout,
  and a machine with PYTHONDONTWRITEBYTECODE set (this one) would compile its modules from
  source on every start (0.2 s of CPU each run); ``compileall`` gives it what ``pip install .``
  or the container image gives it;
* medians of ``--repeat`` runs; runs of the two tools alternate, so that load from elsewhere
  falls on both; ratios are crawler / nvchecker within one run of this script.

The fake answers every request ``--latency`` after it arrived, its own work included (a fake
whose CPU adds to every wait slows the client that keeps the most requests in flight, i.e.
nvchecker). The fake runs in this process: its CPU shares the machine's cores with the tool
being measured. GitHub executes the queries it receives side by side; one interpreter executes
them one at a time under the GIL (graphql-core: about 55 ms for a 50-repository query here),
and while it does, it answers no REST request either. So the fake executes GraphQL in
``--graphql-processes`` worker processes (default: one per core), each with its own copy of
the synthetic repositories; parsing, validation, cost and budget stay in this process. Its time
per query is printed beside the figures (``--graphql-processes 0``: the one-interpreter fake of
earlier runs). GitHub documents no response time; its secondary limits (100 concurrent
requests, 900 REST / 2,000 GraphQL points a minute) bound what either tool may send.

Reproduce (from the repository root, in the project's virtualenv):

    pip install -r bench/requirements.txt        # nvchecker + trustme: bench-only
    python bench/side_by_side.py                 # 1,000 and 10,000 projects, 3 runs each
    python bench/side_by_side.py --sizes 1000 --repeat 1
    python bench/side_by_side.py --sizes 100000 --repeat 1 --large
                                  # --large: CRAWLER_LARGE_CATALOG=1 for the crawler (README)

This prints a table; it asserts nothing (behaviour is checked in ``tests/``).
"""

from __future__ import annotations

import argparse
import compileall
import functools
import json
import math
import os
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from audit_budget import (
    FOREIGN_ENV,
    ROOT,
    TOKEN,
    TlsFront,
    config_text,
    nvchecker_missing,
    table,
)

NVCHECKER_CONCURRENCY = 20  # nvchecker's default max_concurrency
BUDGET = 10**7  # neither tool is measured against GitHub's hourly budget here
# Targets (issue 23), printed with the figures, never asserted
UNCHANGED_WALL_1K = 0.7  # x nvchecker's wall, 1,000 projects
UNCHANGED_CPU_10K = 0.7  # x nvchecker's CPU, 10,000 projects
UNCHANGED_CPU_1K = 1.0  # x nvchecker's CPU, 1,000 projects (issue 32)
FIRST_WALL_CPU = 3.0  # x nvchecker's wall and CPU
GROWTH_KB = 2.0  # peak RSS per tracked project, above a fixed base
LARGE_RSS_MB = 300  # 100,000 projects, unchanged night

# The launcher: times the tool, reads its own ru_maxrss and CPU (a tool forked straight from
# this process would be charged with this process's memory, fake and request log included).
LAUNCHER = """
import json, os, subprocess, sys, time
command, result = json.loads(sys.argv[1]), sys.argv[2]
started = time.perf_counter()
proc = subprocess.Popen(command, stdin=subprocess.DEVNULL)
_pid, status, usage = os.wait4(proc.pid, 0)
seconds = time.perf_counter() - started
with open(result, "w") as out:
    json.dump([seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss,
               os.waitstatus_to_exitcode(status)], out)
"""


@dataclass
class Run:
    tool: str
    kind: str  # "first" or "unchanged"
    seconds: float
    cpu: float
    rss_mb: float
    requests: int
    rest: int
    graphql: int
    rest_service: list[float] = field(default_factory=list)
    graphql_service: list[float] = field(default_factory=list)
    peer_cpu: float = 0.0  # the crawler's runs: CPU of the nvchecker run right after it


def _env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in FOREIGN_ENV}
    env.update(extra)
    return env


def launch(command: Sequence[str], env: dict[str, str], cwd: Path, log: Path) -> list[Any]:
    result = log.with_name(log.name + ".json")
    with log.open("w") as out:
        subprocess.run(
            [sys.executable, "-I", "-S", "-c", LAUNCHER, json.dumps(list(command)), str(result)],
            env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            check=True,
        )  # fmt: skip
    measured: list[Any] = json.loads(result.read_text())
    if measured[3] not in (0, 1):
        raise RuntimeError(f"{command[2]} exited {measured[3]}: {log.read_text()[-3000:]}")
    return measured


def measure(fake: Any, tool: str, kind: str, command: Sequence[str], env: dict[str, str],
            cwd: Path) -> Run:  # fmt: skip
    for resource in ("core", "graphql"):  # a full hour of the fake's (large) budgets
        fake.set_rate_limit(BUDGET, authenticated=True, resource=resource)
    start = len(fake.requests)
    seconds, cpu, maxrss_kb, _code = launch(command, env, cwd, cwd / f"{tool}-{kind}.log")
    records = fake.requests[start:]
    graphql = [r for r in records if r.path == "/graphql"]
    rest = [r for r in records if r.path not in ("/graphql", "/rate_limit")]
    return Run(tool, kind, seconds, cpu, maxrss_kb / 1024, len(records), len(rest), len(graphql),
               [r.service_seconds for r in rest], [r.service_seconds for r in graphql])  # fmt: skip


def nvchecker_config(workdir: Path, port: int, repos: Sequence[tuple[str, str]]) -> None:
    lines = ["[__config__]", 'oldver = "old.json"', 'newver = "new.json"',
             f"max_concurrency = {NVCHECKER_CONCURRENCY}", ""]  # fmt: skip
    for name, path in repos:
        lines += [f'["{name}"]', 'source = "github"', f'github = "{path}"',
                  f'host = "localhost:{port}"', "use_max_release = true", f'token = "{TOKEN}"',
                  ""]  # fmt: skip
    (workdir / "nvchecker.toml").write_text("\n".join(lines))


def one_size(n: int, args: argparse.Namespace, log: Any) -> list[Run]:
    import trustme

    from crawler_fakes.github import FakeGitHub, synthetic_state

    today = time.strftime("%Y-%m-%d", time.gmtime())  # one day for the fake's every process
    state = synthetic_state(n, args.seed, today)
    repos = [(r.name, f"{r.owner}/{r.name}") for r in state.repos]
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="side-by-side-") as tmp, FakeGitHub(
        state, token=TOKEN, unauth_limit=10**9, latency=args.latency,
        auth_limit=BUDGET, graphql_limit=BUDGET,
    ) as fake:  # fmt: skip
        if args.graphql_processes:  # side by side, as GitHub executes queries
            fake.execute_graphql_in(args.graphql_processes,
                                    functools.partial(synthetic_state, n, args.seed, today))
        work = Path(tmp)
        ca = trustme.CA()
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ca.issue_cert("api.localhost", "localhost", "127.0.0.1").configure_cert(context)
        ca.cert_pem.write_to_path(str(work / "ca.pem"))
        tls_env = {"SSL_CERT_FILE": str(work / "ca.pem"),
                   "REQUESTS_CA_BUNDLE": str(work / "ca.pem")}  # fmt: skip
        with TlsFront(fake, context) as tls:
            nv = work / "nvchecker"
            nv.mkdir()
            nvchecker_config(nv, tls.port, repos)
            nv_cmd = [sys.executable, "-m", "nvchecker", "-c", "nvchecker.toml"]
            (work / "sources.yaml").write_text(config_text(repos))
            crawler_env = _env({**tls_env, "GITHUB_API_URL": f"https://localhost:{tls.port}",
                                "GITHUB_TOKEN": TOKEN, **({"CRAWLER_LARGE_CATALOG": "1"}
                                                          if args.large else {})})  # fmt: skip

            def crawler(attempt: int, kind: str) -> Run:
                db = work / f"crawler-{attempt}.sqlite"
                cmd = [sys.executable, "-m", "crawler", "--quiet", "audit", "--config",
                       str(work / "sources.yaml"), "--db", f"sqlite:///{db}", "--reports",
                       str(work / f"reports-{attempt}")]  # fmt: skip
                return measure(fake, "crawler", kind, cmd, crawler_env, work)

            for attempt in range(args.repeat):
                runs.append(crawler(attempt, "first"))
                runs.append(measure(fake, "nvchecker", "run", nv_cmd, _env(tls_env), nv))
                runs[-2].peer_cpu = runs[-1].cpu
                log(f"  {n}: first {attempt + 1}: crawler {runs[-2].seconds:.1f} s, "
                    f"nvchecker {runs[-1].seconds:.1f} s")  # fmt: skip
            for attempt in range(args.repeat):
                runs.append(crawler(attempt, "unchanged"))
                runs.append(measure(fake, "nvchecker", "run", nv_cmd, _env(tls_env), nv))
                runs[-2].peer_cpu = runs[-1].cpu
                log(f"  {n}: unchanged {attempt + 1}: crawler {runs[-2].seconds:.1f} s, "
                    f"nvchecker {runs[-1].seconds:.1f} s")  # fmt: skip
    return runs


def spread(values: Sequence[float]) -> str:
    """Lowest to highest of ``values`` (ratios), or "-"."""
    if not values:
        return "-"
    low, high = min(values), max(values)
    return f"{low:.2f}x" if len(values) == 1 else f"{low:.2f}x to {high:.2f}x"


def med(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else 0.0


def floor(requests: int, concurrency: int, latency: float) -> float:
    return math.ceil(requests / concurrency) * latency


def render(sizes: dict[int, list[Run]], args: argparse.Namespace, load: str) -> str:
    from importlib.metadata import version

    from crawler.upstream.sources.github import GitHubSettings

    concurrency = GitHubSettings().concurrency
    rows: list[list[object]] = []
    fake_rows: list[list[object]] = []
    targets: list[list[object]] = []
    for n, runs in sizes.items():
        nv = [r for r in runs if r.tool == "nvchecker"]
        for kind, label in (("unchanged", "unchanged night"), ("first", "first audit")):
            mine = [r for r in runs if r.tool == "crawler" and r.kind == kind]
            c_s, c_cpu = med([r.seconds for r in mine]), med([r.cpu for r in mine])
            n_s, n_cpu = med([r.seconds for r in nv]), med([r.cpu for r in nv])
            c_req, n_req = int(med([r.requests for r in mine])), int(med([r.requests for r in nv]))
            c_floor = floor(c_req, concurrency, args.latency)
            n_floor = floor(n_req, NVCHECKER_CONCURRENCY, args.latency)
            rows.append([
                f"{n:,}", label,
                f"{n_req:,} req, {n_s:.2f} s wall ({n_s / n_floor:.2f}x floor {n_floor:.2f} s), "
                f"{n_cpu:.2f} s CPU, {med([r.rss_mb for r in nv]):.0f} MB",
                f"{c_req:,} req ({int(med([r.graphql for r in mine]))} GraphQL), {c_s:.2f} s wall "
                f"({c_s / c_floor:.2f}x floor {c_floor:.2f} s), {c_cpu:.2f} s CPU, "
                f"{med([r.rss_mb for r in mine]):.0f} MB",
                f"{c_s / n_s:.2f}x", f"{c_cpu / n_cpu:.2f}x",
                spread([r.cpu / r.peer_cpu for r in mine if r.peer_cpu]),
                f"{n_cpu / n * 1000:.2f} ms, {c_cpu / n * 1000:.2f} ms",
            ])  # fmt: skip
            gql = [s for r in mine for s in r.graphql_service]
            rest = [s for r in mine for s in r.rest_service]
            fake_rows.append([f"{n:,}", f"crawler, {label}",
                              f"{med(rest) * 1000:.2f} ms" if rest else "-",
                              f"{med(gql) * 1000:.1f} ms" if gql else "-",
                              f"{sum(gql) / max(len(mine), 1):.2f} s"])  # fmt: skip
            if kind == "first":
                targets.append([f"{n:,} first audit: wall and CPU <= {FIRST_WALL_CPU}x",
                                f"{c_s / n_s:.2f}x wall, {c_cpu / n_cpu:.2f}x CPU",
                                "MET" if max(c_s / n_s, c_cpu / n_cpu) <= FIRST_WALL_CPU
                                else "MISSED"])  # fmt: skip
            elif n == 1000:
                targets.append([f"1,000 unchanged night: wall <= {UNCHANGED_WALL_1K}x",
                                f"{c_s / n_s:.2f}x",
                                "MET" if c_s / n_s <= UNCHANGED_WALL_1K else "MISSED"])
                targets.append([f"1,000 unchanged night: CPU <= {UNCHANGED_CPU_1K}x",
                                f"{c_cpu / n_cpu:.2f}x",
                                "MET" if c_cpu / n_cpu <= UNCHANGED_CPU_1K else "MISSED"])
            elif n >= 10000:
                targets.append([f"{n:,} unchanged night: CPU <= {UNCHANGED_CPU_10K}x",
                                f"{c_cpu / n_cpu:.2f}x",
                                "MET" if c_cpu / n_cpu <= UNCHANGED_CPU_10K else "MISSED"])
        rest = [s for r in nv for s in r.rest_service]
        fake_rows.append([f"{n:,}", "nvchecker", f"{med(rest) * 1000:.2f} ms", "-", "-"])
    targets += growth_targets(sizes)
    out = [
        f"## Side by side: {args.latency * 1000:.0f} ms per request, medians of {args.repeat}, "
        f"nvchecker {version('nvchecker')} (github source, use_max_release, concurrency "
        f"{NVCHECKER_CONCURRENCY}), crawler with a token (GraphQL, github.concurrency "
        f"{concurrency}); the fake executes GraphQL "
        + (f"in {args.graphql_processes} processes" if args.graphql_processes
           else "in its own process, one query at a time") + f"; load: {load}\n",
        table(["catalog", "run", "nvchecker", "crawler", "wall ratio", "CPU ratio",
               "CPU ratio, each run", "CPU per project (nvchecker, crawler)"], rows),
        "\nfloor = ceil(requests / concurrency) x latency. nvchecker keeps no state between "
        "runs: its first run and its re-runs are the same work (one median for both rows). "
        "CPU ratio, each run: each crawler run's CPU over the nvchecker run right after it "
        "(lowest to highest: the spread). CPU per project: the median run's CPU over the "
        "catalog's projects.",
        "\n## The fake's own time (latency left out)\n",
        table(["catalog", "client", "median per REST request", "median per GraphQL query",
               "GraphQL execution per run (summed)"], fake_rows),
        "\n## Targets\n",
        table(["target", "measured", "verdict"], targets),
    ]
    return "\n".join(out)


def growth_targets(sizes: dict[int, list[Run]]) -> list[list[object]]:
    """Peak RSS growth per project between the smallest catalog and each larger one (the
    crawler's median of each kind of run): what memory costs per tracked project."""
    small = min(sizes, default=0)
    out: list[list[object]] = []
    for n in sorted(sizes):
        for kind, label in (("unchanged", "unchanged night"), ("first", "first audit")):
            rss = {m: med([r.rss_mb for r in sizes[m] if r.tool == "crawler" and r.kind == kind])
                   for m in (small, n)}  # fmt: skip
            if n != small:
                per = (rss[n] - rss[small]) * 1024 / (n - small)
                out.append([f"peak RSS growth, {small:,} to {n:,} projects, {label}: "
                            f"<= {GROWTH_KB} KB per project",
                            f"{per:.2f} KB ({rss[small]:.0f} -> {rss[n]:.0f} MB)",
                            "MET" if per <= GROWTH_KB else "MISSED"])  # fmt: skip
            if n >= 100000 and kind == "unchanged":
                out.append([f"{n:,} unchanged night: peak RSS <= {LARGE_RSS_MB} MB",
                            f"{rss[n]:.0f} MB",
                            "MET" if rss[n] <= LARGE_RSS_MB else "MISSED"])  # fmt: skip
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", default="1000,10000", help="catalog sizes, comma-separated")
    parser.add_argument("--latency", type=float, default=0.03, help="seconds per request")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each kind (medians)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--graphql-processes", type=int, default=os.cpu_count() or 1,
                        help="processes the fake executes GraphQL queries in (0: in its own, one "
                        "at a time; default: one per core)")
    parser.add_argument("--large", action="store_true",
                        help="let the crawler read a catalog past the default size guard")
    args = parser.parse_args(argv)
    missing = nvchecker_missing()
    if missing:
        print(missing, file=sys.stderr)
        return 2
    started = time.perf_counter()
    compileall.compile_dir(str(ROOT / "crawler"), quiet=1)  # as pip does for nvchecker

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    sizes = {int(n): one_size(int(n), args, log) for n in args.sizes.split(",") if n.strip()}
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) + " (1/5/15 min load average, end)"
    print(render(sizes, args, load))
    print(f"\n(total bench time {time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
