"""Rate-limit budget, wall time, memory and database growth of the nightly audit at scale.

The crawler audits 20, 200 and 1,000 synthetic projects (``synthetic_state``) served by the
GitHub-shaped ``FakeGitHub`` on loopback with a fixed per-request latency, with a token
(GraphQL batches + REST for what changed) and without one (REST with conditional requests).
It also simulates the first anonymous audit of the shipped catalog (``sources.yaml``) on a
60-request budget, and runs nvchecker's ``github`` source against the same fake (served over
TLS on ``api.localhost`` with a throw-away CA made by ``trustme``) for a side-by-side count.

Reproduce (from the repository root, in the project's virtualenv):

    pip install -r bench/requirements.txt          # nvchecker + trustme, bench-only
    python bench/audit_budget.py --quick           # sizes 20,200; 3 unchanged audits (~2 min)
    python bench/audit_budget.py --quick --latency 0.01                           # (~1 min)
    python bench/audit_budget.py                   # 20,200,1000; 30 unchanged audits (~16 min)
    python bench/audit_budget.py --sizes 1000 --latency 0.03 --unchanged-audits 30

How figures are taken:
- each (mode, n) scenario runs the crawler in a child process (the fake server stays in this
  process), so "peak RSS" is the child's ``resource.getrusage(RUSAGE_SELF).ru_maxrss``: the
  whole audit process (interpreter, libraries, the audits), not a tracemalloc figure;
- requests are read from the fake's request log, per audit, ``/rate_limit`` included (free);
- rate-limit points: REST = requests the fake charged (``points_used``: anonymous 304s count,
  authenticated 304s do not), GraphQL = the sum of ``graphql_cost``;
- the first two audits run with ``--latency``; the remaining unchanged audits, which only
  measure database growth, run with ``--loop-latency`` (default 0: latency changes nothing
  that is written);
- database size = SQLite file + WAL after ``PRAGMA wal_checkpoint(TRUNCATE)``; growth is
  measured from the end of the first audit to the end of the K-th unchanged audit after it;
- the anonymous budget of the scale runs is unlimited (it measures cost, not GitHub's 60/h);
  the authenticated REST and GraphQL budgets are GitHub's 5,000.

This prints tables; it asserts nothing (see ``tests/`` for checked behaviour).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "ghp_benchmark_token_0123456789abcdef"
PROTOCOL = "@@bench "
MB = 1024 * 1024
TARGET_POINTS_2ND_GRAPHQL_1000 = 25
TARGET_SHIPPED_REQUESTS = 60
TARGET_DB_GROWTH_MB = 5.0
TARGET_PEAK_MB = 200.0


# ------------------------------------------------------------------------------------- helpers


def config_text(repos: Sequence[tuple[str, str]]) -> str:
    """A sources.yaml for (project name, owner/name) pairs, default GitHub settings."""
    lines = ["projects:"]
    for name, repo in repos:
        lines += [f"  - name: {name}", f"    repo: {repo}"]
    return "\n".join(lines) + "\n"


def synthetic_repos(n: int, seed: int) -> list[tuple[str, str]]:
    from crawler.fakes.github import synthetic_state

    return [(r.name, f"{r.owner}/{r.name}") for r in synthetic_state(n, seed).repos]


def sqlite_size(path: Path) -> int:
    wal = path.with_name(path.name + "-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def rss_now_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def mb(value: float) -> str:
    return f"{value / MB:.2f}"


def yes(flag: bool) -> str:
    return "MET" if flag else "MISSED"


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [[str(c) for c in header], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]

    def line(row: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"

    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(cells[0]), sep, *(line(r) for r in cells[1:])])


# ------------------------------------------------------------------------ child (audit process)


def child_main(argv: Sequence[str]) -> int:
    """Run 1 + K audits, report each on stdout, wait for the parent's go-ahead between them."""
    parser = argparse.ArgumentParser(prog="audit_budget.py --child")
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--token", default=None)
    parser.add_argument("--n", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--unchanged", type=int, required=True)
    parser.add_argument("--workdir", type=Path, required=True)
    args = parser.parse_args(argv)

    from crawler.audit import run_audit
    from crawler.config import parse_config
    from crawler.store import Store

    def say(**fields: Any) -> None:
        print(PROTOCOL + json.dumps(fields), flush=True)

    def wait() -> None:
        if not sys.stdin.readline():
            raise SystemExit("parent went away")

    config = parse_config(config_text(synthetic_repos(args.n, args.seed)))
    db = args.workdir / "crawler.sqlite"
    store = Store(f"sqlite:///{db}")
    env = {"GITHUB_API_URL": args.base_url, **({"GITHUB_TOKEN": args.token} if args.token else {})}

    def size() -> int:
        with store.engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        return sqlite_size(db)

    say(event="ready", rss_kb=rss_now_kb(), db_bytes=size())
    wait()
    for number in range(1, args.unchanged + 2):
        started = time.perf_counter()
        outcome = run_audit(config, store, args.workdir / "reports", env=env)
        seconds = time.perf_counter() - started
        summary = outcome.report["summary"]
        say(event="audit", number=number, seconds=seconds, status=outcome.status,
            checked=summary["checked"], errors=summary["errors"], deferred=summary["deferred"],
            changes=summary["changes"], db_bytes=size(), rss_kb=rss_now_kb())
        wait()
    store.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    say(event="done", maxrss_kb=peak)
    return 0


# ------------------------------------------------------------------------------ parent side


@dataclass
class AuditFigures:
    requests: int
    rest_points: int
    graphql_points: int
    seconds: float
    non_304: list[str] = field(default_factory=list)  # excluding the free /rate_limit
    summary: dict[str, Any] = field(default_factory=dict)

    @property
    def points(self) -> int:
        return self.rest_points + self.graphql_points


@dataclass
class Scenario:
    mode: str  # "token" | "anonymous"
    n: int
    first: AuditFigures
    second: AuditFigures
    unchanged: int
    db_after_first: int
    db_after_unchanged: int
    peak_rss_kb: int
    rss_after_imports_kb: int
    rss_after_first_kb: int
    release_requests: tuple[int, int] = (0, 0)  # ours, first and second audit: /releases only

    @property
    def growth(self) -> int:
        return self.db_after_unchanged - self.db_after_first


def _describe_non_304(records: Sequence[Any]) -> list[str]:
    out = []
    for r in records:
        if r.path == "/rate_limit" or r.status == 304:
            continue
        out.append(f"{r.status} {re.sub(r'/repos/[^/]+/[^/]+', '/repos/{r}', r.path)}")
    return out


def _figures(server: Any, start: int, before: Any, seconds: float,
             summary: dict[str, Any]) -> AuditFigures:
    records = server.requests[start:]
    after = server.points_used
    rest = (after.core_anonymous - before.core_anonymous
            + after.core_authenticated - before.core_authenticated)
    gql = sum(r.graphql_cost for r in records)
    return AuditFigures(len(records), rest, gql, seconds, _describe_non_304(records), summary)


def _read(proc: subprocess.Popen[str], stderr_path: Path) -> dict[str, Any]:
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            proc.wait(timeout=30)
            raise RuntimeError(f"audit child died:\n{stderr_path.read_text()[-3000:]}")
        if line.startswith(PROTOCOL):
            return dict(json.loads(line[len(PROTOCOL):]))


def run_scenario(mode: str, n: int, args: argparse.Namespace, log: TextIO) -> Scenario:
    from crawler.fakes.github import FakeGitHub, synthetic_state

    token = TOKEN if mode == "token" else None
    with tempfile.TemporaryDirectory(prefix="audit-budget-") as tmp, FakeGitHub(
        synthetic_state(n, args.seed), token=TOKEN, unauth_limit=10**9, latency=args.latency
    ) as server:
        workdir = Path(tmp)
        stderr_path = workdir / "child.stderr"
        command = [sys.executable, str(Path(__file__).resolve()), "--child",
                   "--base-url", server.base_url, "--n", str(n), "--seed", str(args.seed),
                   "--unchanged", str(args.unchanged_audits), "--workdir", str(workdir)]
        if token:
            command += ["--token", token]
        with stderr_path.open("w") as stderr:
            proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=stderr, text=True, bufsize=1, cwd=ROOT)
            assert proc.stdin is not None
            try:
                ready = _read(proc, stderr_path)
                audits: list[AuditFigures] = []
                rss_first = 0
                db_sizes: list[int] = []
                releases: list[int] = []
                for number in range(1, args.unchanged_audits + 2):
                    start, before = len(server.requests), server.points_used
                    proc.stdin.write("go\n")
                    proc.stdin.flush()
                    msg = _read(proc, stderr_path)
                    figures = _figures(server, start, before, msg["seconds"], msg)
                    audits.append(figures)
                    db_sizes.append(int(msg["db_bytes"]))
                    releases.append(sum(1 for r in server.requests[start:]
                                        if r.path.split("?")[0].endswith("/releases")))
                    if number == 1:
                        rss_first = int(msg["rss_kb"])
                    if number == 2:
                        server.latency = args.loop_latency
                    print(f"  {mode:9} n={n:<5} audit {number:>2}: {figures.requests:>5} req, "
                          f"{figures.points:>5} points, {figures.seconds:7.2f} s, "
                          f"{msg['status']}", file=log, flush=True)
                proc.stdin.write("go\n")
                proc.stdin.flush()
                done = _read(proc, stderr_path)
            finally:
                proc.stdin.close()
                proc.wait(timeout=60)
        return Scenario(
            mode=mode, n=n, first=audits[0], second=audits[1],
            unchanged=args.unchanged_audits, db_after_first=db_sizes[0],
            db_after_unchanged=db_sizes[-1], peak_rss_kb=int(done["maxrss_kb"]),
            rss_after_imports_kb=int(ready["rss_kb"]), rss_after_first_kb=rss_first,
            release_requests=(releases[0], releases[1]),
        )


# ------------------------------------------------------------------------ the shipped catalog


READMES = {
    "tile-ai/tilelang": "# TileLang\n\n## Platform and Backend Support\n\n"
    "| Backend | Target | Status |\n|---|---|---|\n| CUDA | sm_80+ | stable |\n"
    "| ROCm | gfx942 | stable |\n| Metal | M-series | experimental |\n\n## Install\n",
    "vllm-project/vllm-ascend": "# vLLM Ascend\n\n## Branch\n\n"
    "| Branch | Status | Note |\n|---|---|---|\n| main | Maintained | CI on vLLM main |\n"
    "| v0.9.1-dev | Maintained | for vLLM 0.9.1 |\n\n## License\n",
    "EnflameTechnology/torch-gcu": "# torch-gcu\n\n## TopsRider SDK Compatibility\n\n"
    "| TopsRider Version | torch-gcu |\n|---|---|\n| 3.4.0 | 2.5.1 |\n\n"
    "## Hardware Support\n\n| Product Model | Status |\n|---|---|\n| S60 | supported |\n\n"
    "## Install\n\n`pip install torch_gcu-2.5.1-cp310-linux_x86_64.whl`\n",
}


def shipped_config(pages: bool) -> Any:
    """sources.yaml as shipped; pages on other hosts (gitee.com) are always dropped (nothing
    here may leave the machine, and they never touch GitHub's budget); with ``pages`` False the
    README pages read through the GitHub API are dropped too."""
    from crawler.config import load_config

    config = load_config(ROOT / "sources.yaml")
    projects = tuple(
        spec.model_copy(update={"pages": tuple(p for p in spec.pages if pages and p.repo)})
        for spec in config.projects
    )
    return config.model_copy(update={"projects": projects})


def shipped_state(variant: str) -> Any:
    """A fake GitHub holding the shipped config's repositories with plausible facts.

    Every project has three releases and tags and a root license, except TritonBench and
    MLC-LLM, which have no release: in variant "tags" both have tags; in variant "mixed"
    TritonBench has no tag either (tracked by its head commit). README pages have the tables
    and pins sources.yaml watches.
    """
    from crawler.analysis.license_texts import reference_text
    from crawler.fakes.github import FakeRelease, FakeRepo, FakeTag, GitHubState

    licenses = [("mit", "MIT", "MIT License"), ("apache-2.0", "Apache-2.0", "Apache License 2.0"),
                ("bsd-3-clause", "BSD-3-Clause", 'BSD 3-Clause "New" or "Revised" License')]
    repos = []
    for index, spec in enumerate(p for p in shipped_config(True).projects if p.repo):
        assert spec.repo is not None
        owner, name = spec.repo.split("/")
        key, spdx, title = licenses[index % len(licenses)]
        readme = READMES.get(spec.repo, f"# {name}\n")
        repo = FakeRepo(owner=owner, name=name, id=5000 + index, license_key=key, spdx_id=spdx,
                        license_name=title, license_text=reference_text(spdx),
                        head_sha=f"{index:02d}" + "f" * 38, head_date="2026-11-20T08:00:00Z",
                        tree=[("src/main.py", "e" * 40)], files={"README.md": readme})
        no_release = spec.name in ("TritonBench", "MLC-LLM")
        for minor in range(3):
            version = f"v0.{index}.{minor}"
            stamp = f"2026-{9 + minor:02d}-{10 + index:02d}T12:00:00Z"
            sha = f"{index:02d}{minor:02d}" + "a" * 36
            if not (variant.startswith("mixed") and spec.name == "TritonBench"):
                repo.tags.append(FakeTag(version, sha, stamp))
            if not no_release:
                repo.releases.append(FakeRelease(version, version, stamp, stamp))
        repos.append(repo)
    return GitHubState(repos)


@dataclass
class ShippedRun:
    variant: str
    requests: int
    points: int
    checked: int
    deferred: list[str]
    errors: list[str]
    status: str
    exit_code: int


SHIPPED_VARIANTS = ("tags", "mixed", "tags + README pages via API")


def run_shipped(variant: str) -> ShippedRun:
    from crawler.audit import run_audit
    from crawler.fakes.github import FakeGitHub
    from crawler.store import Store

    config = shipped_config(pages=variant.endswith("via API"))
    with tempfile.TemporaryDirectory() as tmp, FakeGitHub(
        shipped_state(variant), unauth_limit=60
    ) as server:
        store = Store(f"sqlite:///{tmp}/crawler.sqlite")
        try:
            outcome = run_audit(config, store, Path(tmp) / "reports",
                                env=server.env())
        finally:
            store.close()
        report = outcome.report
        deferred = [p["name"] for p in report["projects"] if p["status"] == "deferred"]
        wanted = sum(len(spec.pages) for spec in config.projects)
        read = {r.path for r in server.requests if "/contents/" in r.path and r.status == 200}
        if wanted > len(read):  # a page the budget did not reach keeps its last extraction
            deferred.append(f"{wanted - len(read)} of {wanted} README pages")
        errors = [f"{e['project']}: {e['error'][:60]}" for e in report["errors"]]
        return ShippedRun(variant, len(server.requests), server.points_used.core_anonymous,
                          report["summary"]["checked"], deferred, errors, outcome.status,
                          outcome.exit_code)


# ------------------------------------------------------------------------------ nvchecker


@dataclass
class NvRun:
    requests: int
    points: int
    seconds: float
    versions: int  # entries nvchecker found a version for


@dataclass
class NvComparison:
    mode: str
    n: int
    runs: list[NvRun]


class TlsFront:
    """A second listener on the same FakeGitHub, over TLS, for clients that insist on https."""

    def __init__(self, fake: Any, context: ssl.SSLContext) -> None:
        from crawler.fakes import github as fake_module

        server = fake_module._Server(("127.0.0.1", 0), fake_module._Handler)
        server.fake = fake
        # the handshake happens on first read, in the request's own thread
        server.socket = context.wrap_socket(server.socket, server_side=True,
                                            do_handshake_on_connect=False)
        self.server = server
        self.port = int(server.server_address[1])
        self.thread = threading.Thread(target=server.serve_forever,
                                       kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> TlsFront:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def nvchecker_available() -> str | None:
    """None when nvchecker and trustme are importable, else why not."""
    try:
        import nvchecker  # noqa: F401
        import nvchecker_source.github  # noqa: F401
        import trustme  # noqa: F401
    except ImportError as exc:
        return f"{exc.name} is not installed: pip install -r bench/requirements.txt"
    return None


def nvchecker_github_scheme() -> str:
    """How nvchecker's github source builds its REST URLs (read from its installed source)."""
    import nvchecker_source.github as source

    return str(source.GITHUB_MAX_RELEASE)


def run_nvchecker(mode: str, n: int, args: argparse.Namespace) -> NvComparison:
    """nvchecker's ``github`` source, release check (``use_max_release``), run twice.

    nvchecker builds ``https://api.<host>/repos/...``: with ``host = "localhost:PORT"`` that is
    ``https://api.localhost:PORT``, which libcurl resolves to loopback by itself; the TLS
    certificate comes from a CA made now and handed over with ``SSL_CERT_FILE``. With a token,
    nvchecker still uses REST for this check (GraphQL only for ``use_latest_tag`` or
    ``use_latest_release`` + ``include_prereleases``, whose queries ask for ``Release.tag`` and
    ``Tag.tagger``, fields the fake's schema subset does not have).
    """
    import trustme

    from crawler.fakes.github import FakeGitHub, synthetic_state

    state = synthetic_state(n, args.seed)
    ca = trustme.CA()
    cert = ca.issue_cert("api.localhost", "localhost", "127.0.0.1")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    cert.configure_cert(context)
    runs: list[NvRun] = []
    with tempfile.TemporaryDirectory(prefix="nvchecker-") as tmp, FakeGitHub(
        state, token=TOKEN, unauth_limit=10**9, latency=args.latency
    ) as fake, TlsFront(fake, context) as front:
        work = Path(tmp)
        ca.cert_pem.write_to_path(str(work / "ca.pem"))
        lines = ["[__config__]", 'oldver = "old.json"', 'newver = "new.json"', ""]
        for repo in state.repos:
            lines += [f'["{repo.name}"]', 'source = "github"',
                      f'github = "{repo.owner}/{repo.name}"', f'host = "localhost:{front.port}"',
                      "use_max_release = true"]
            if mode == "token":
                lines.append(f'token = "{TOKEN}"')
            lines.append("")
        (work / "nvchecker.toml").write_text("\n".join(lines))
        env = {**os.environ, "SSL_CERT_FILE": str(work / "ca.pem")}
        for _ in range(2):
            start, before = len(fake.requests), fake.points_used
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "nvchecker", "-c", "nvchecker.toml"],
                                  cwd=work, env=env, capture_output=True, text=True, timeout=900)
            seconds = time.perf_counter() - started
            if done.returncode != 0:
                raise RuntimeError(f"nvchecker failed: {done.stderr[-2000:]}")
            after = fake.points_used
            points = (after.core_anonymous - before.core_anonymous
                      + after.core_authenticated - before.core_authenticated)
            found = json.loads((work / "new.json").read_text()).get("data", {})
            runs.append(NvRun(len(fake.requests) - start, points, seconds, len(found)))
            (work / "new.json").replace(work / "old.json")
    return NvComparison(mode, n, runs)


# ------------------------------------------------------------------------------- the report


def render(scenarios: list[Scenario], shipped: list[ShippedRun], nv: list[NvComparison],
           nv_note: str | None, args: argparse.Namespace) -> str:
    out: list[str] = []
    k = args.unchanged_audits
    out.append(f"## Audit cost (latency {args.latency * 1000:.0f} ms per request; "
               f"{k} unchanged audits after the first, the last {max(k - 1, 0)} at "
               f"{args.loop_latency * 1000:.0f} ms)\n")
    rows = []
    for s in scenarios:
        all_304 = "n/a (token)"
        if s.mode == "anonymous":
            kinds: dict[str, int] = {}
            for item in s.second.non_304:
                kinds[item] = kinds.get(item, 0) + 1
            worst = ", ".join(f"{v}x {key}" for key, v in sorted(kinds.items())[:2])
            all_304 = "yes" if not s.second.non_304 else f"no: {len(s.second.non_304)} ({worst})"
        rows.append([
            s.mode, s.n, s.first.requests, f"{s.first.rest_points}+{s.first.graphql_points}",
            f"{s.first.seconds:.1f}", s.second.requests,
            f"{s.second.rest_points}+{s.second.graphql_points}", f"{s.second.seconds:.1f}",
            all_304,
            f"{s.peak_rss_kb / 1024:.0f} ({s.rss_after_imports_kb / 1024:.0f}, "
            f"{s.rss_after_first_kb / 1024:.0f})",
            mb(s.db_after_first), f"{(s.growth) / 1024:.1f} KiB",
        ])
    out.append(table(
        ["mode", "n", "1st req", "1st points REST+GQL", "1st s", "2nd req",
         "2nd points REST+GQL", "2nd s", "2nd: every request 304?",
         "peak RSS MB (after imports, after 1st)", "DB MB after 1st", f"DB growth, {k} unchanged"],
        rows))
    out.append("\nrequests include the free GET /rate_limit; peak RSS = ru_maxrss of the audit "
               "child process; DB = SQLite file + WAL after a TRUNCATE checkpoint.")

    out.append("\n## Targets\n")
    trows: list[list[object]] = []
    by = {(s.mode, s.n): s for s in scenarios}
    big = max((s.n for s in scenarios), default=0)
    tok = by.get(("token", 1000))
    if tok:
        trows.append([f"2nd unchanged audit, 1,000 projects, token: <= "
                      f"{TARGET_POINTS_2ND_GRAPHQL_1000} points",
                      f"{tok.second.points} ({tok.second.rest_points} REST + "
                      f"{tok.second.graphql_points} GraphQL)",
                      yes(tok.second.points <= TARGET_POINTS_2ND_GRAPHQL_1000)])
    else:
        trows.append(["2nd unchanged audit, 1,000 projects, token: <= 25 points",
                      "not run (size 1000 not selected)", "-"])
    for s in scenarios:
        if s.mode == "anonymous":
            trows.append([f"no token, n={s.n}: every request of the 2nd audit answered 304",
                          f"{len(s.second.non_304)} not 304 (of {s.second.requests - 1}, "
                          "/rate_limit excluded)", yes(not s.second.non_304)])
    for run in shipped:
        fits = run.points <= TARGET_SHIPPED_REQUESTS and not run.deferred
        trows.append([f"first anonymous audit of sources.yaml ({run.variant}) fits in 60 requests",
                      f"{run.points} charged / {run.requests} HTTP; deferred: "
                      f"{', '.join(run.deferred) or 'none'}", yes(fits)])
    for s in scenarios:
        if s.n == big:
            scaled = s.growth * 30 / max(s.unchanged, 1)
            note = "" if s.unchanged == 30 else f" (x30/{s.unchanged} = {mb(scaled)} MB)"
            trows.append([f"{s.mode}, n={s.n}: DB growth over 30 unchanged audits < 5 MB",
                          f"{mb(s.growth)} MB over {s.unchanged}{note}",
                          yes(scaled < TARGET_DB_GROWTH_MB * MB)])
            trows.append([f"{s.mode}, n={s.n}: peak memory < 200 MB",
                          f"{s.peak_rss_kb / 1024:.0f} MB (after imports "
                          f"{s.rss_after_imports_kb / 1024:.0f} MB)",
                          yes(s.peak_rss_kb / 1024 < TARGET_PEAK_MB)])
    out.append(table(["target", "measured", "verdict"], trows))
    if big != 1000:
        out.append("(memory and DB-growth targets are for 1,000 projects; shown for the "
                   f"largest size run, {big})")

    out.append("\n## First anonymous audit of the shipped catalog (unauth_limit=60)\n")
    out.append(table(
        ["variant", "budget points", "HTTP requests", "checked", "deferred", "errors", "status",
         "exit"],
        [[r.variant, r.points, r.requests, r.checked, ", ".join(r.deferred) or "none",
          "; ".join(r.errors) or "none", r.status, r.exit_code] for r in shipped]))
    out.append(
        "variant 'tags': TritonBench and MLC-LLM have tags but no release; 'mixed': TritonBench "
        "has neither (head commit), MLC-LLM has tags. The shipped README pages (TileLang, vLLM "
        "Ascend, torch-gcu) are read from raw.githubusercontent.com when the API is "
        "api.github.com, outside the API budget, so the first two variants leave them out; the "
        "third reads them through the contents API, as against any other API URL (GitHub "
        "Enterprise, this fake). The Gitee page is never fetched here (no outside traffic).")

    out.append("\n## nvchecker (github source, use_max_release) vs this crawler\n")
    if nv_note:
        out.append(f"nvchecker comparison not run: {nv_note}")
    else:
        rows = []
        for comp in nv:
            ours = by.get((comp.mode, comp.n))
            r1, r2 = comp.runs
            rows.append([comp.mode, comp.n, "nvchecker", r1.requests, r1.points,
                         f"{r1.seconds:.1f}", r2.requests, r2.points, f"{r2.seconds:.1f}",
                         f"{r1.versions}/{comp.n}"])
            if ours:
                gql = ours.mode == "token"
                rel1 = (f"{ours.first.graphql_points} GQL" if gql else
                        f"{ours.release_requests[0]}")
                rel2 = (f"{ours.second.graphql_points} GQL" if gql else
                        f"{ours.release_requests[1]} (304)")
                rows.append([comp.mode, comp.n, "crawler: release check only", rel1, rel1, "",
                             rel2, rel2, "", f"{comp.n}/{comp.n}"])
                rows.append([comp.mode, comp.n, "crawler: whole audit", ours.first.requests,
                             ours.first.points, f"{ours.first.seconds:.1f}",
                             ours.second.requests, ours.second.points,
                             f"{ours.second.seconds:.1f}", f"{comp.n}/{comp.n}"])
        out.append(table(
            ["mode", "n", "tool", "run 1 req", "run 1 points", "run 1 s", "run 2 req",
             "run 2 points", "run 2 s", "versions found"], rows))
        out.append(
            "nvchecker URLs: https only (" + nvchecker_github_scheme() + "); served over TLS "
            "on api.localhost with a trustme CA via SSL_CERT_FILE. nvchecker keeps no ETags "
            "between runs, so run 2 costs what run 1 did; with a token it uses REST for this "
            "check (its GraphQL queries need Release.tag / Tag.tagger, absent from the fake's "
            "schema), so only its REST path was measured, anonymous and with a token. "
            "Repositories without a release are 'No release found' for nvchecker; the crawler "
            "falls back to tags/commits. The crawler's release check without a token is its "
            "GET /releases requests; with a token the releases come inside the GraphQL batches "
            "(which also carry tags, head and license)."
        )
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--child"]:
        return child_main(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", default=None,
                        help="comma-separated project counts (default 20,200,1000)")
    parser.add_argument("--latency", type=float, default=0.03, help="seconds per request")
    parser.add_argument("--loop-latency", type=float, default=0.0,
                        help="latency for the unchanged audits after the second (DB growth)")
    parser.add_argument("--unchanged-audits", type=int, default=None,
                        help="unchanged audits after the first (default 30)")
    parser.add_argument("--modes", default="token,anonymous")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true",
                        help="sizes 20,200 and 3 unchanged audits")
    parser.add_argument("--no-nvchecker", action="store_true")
    parser.add_argument("--no-shipped", action="store_true")
    args = parser.parse_args(argv)
    if args.sizes is None:
        args.sizes = "20,200" if args.quick else "20,200,1000"
    if args.unchanged_audits is None:
        args.unchanged_audits = 3 if args.quick else 30
    if args.unchanged_audits < 1:
        parser.error("--unchanged-audits must be at least 1")
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    log = sys.stderr
    started = time.perf_counter()

    scenarios = []
    for mode in modes:
        for n in sizes:
            scenarios.append(run_scenario(mode, n, args, log))
    shipped: list[ShippedRun] = []
    if not args.no_shipped:
        shipped = [run_shipped(variant) for variant in SHIPPED_VARIANTS]
    nv_note = "disabled with --no-nvchecker" if args.no_nvchecker else nvchecker_available()
    comparisons: list[NvComparison] = []
    if nv_note is None:
        for mode in modes:
            for n in sizes:
                comparisons.append(run_nvchecker(mode, n, args))
                print(f"  nvchecker {mode} n={n} done", file=log, flush=True)
    print(render(scenarios, shipped, comparisons, nv_note, args))
    print(f"\n(total bench time {time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
