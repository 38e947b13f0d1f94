"""The client's CPU per GitHub REST request, and per large tree read.

A FakeGitHub serving the synthetic catalog runs in a child process (its CPU is not counted);
this process sends ``--requests`` requests of each kind through ``GitHubApi`` and reads its own
``time.process_time()`` (the deadline watchdog's thread included):

* tree at a commit: ``get_json(…/git/trees/<sha>?recursive=1, immutable=True)``, the plain path
  a first audit sends a thousand of (transport.DirectSender);
* conditional REST: ``get_json(/repos/<owner>/<name>)`` answered 304 from the validators kept
  by the first pass (PyGithub's requester), as an unchanged night without a token sends them;
* for scale, the same tree read with a bare urllib3 pool (no deadline, budget, size limit).

Then the parsing of one large recursive tree (30,000 entries, 7 MB: a real repository's tree;
the synthetic catalog's have five): ``json.loads`` or ``parse.decode_tree`` (what the tree reads
use), each followed by ``parse.inventory_from_tree``.

Each figure: the fastest of ``--repeat`` passes (the least disturbed by other load), and the
median. Plain HTTP on loopback (side_by_side.py measures the whole audit over TLS). Prints a
table, asserts nothing.

Run:  python bench/github_request_cpu.py [--requests 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import statistics
import time
from collections.abc import Callable
from multiprocessing.synchronize import Event
from typing import Any
from urllib.parse import urlsplit

TOKEN = "ghp_" + "b" * 36
TODAY = "2026-12-01"


def _serve(n: int, ready: Any, stop: Event) -> None:
    from crawler_fakes.github import FakeGitHub
    from crawler_fakes.synthetic import synthetic_state

    state = synthetic_state(n, 0, TODAY)
    limit = 10**9
    with FakeGitHub(
        state, token=TOKEN, auth_limit=limit, graphql_limit=limit, unauth_limit=limit
    ) as fake:
        ready.put((fake.base_url, [(r.owner, r.name, r.head_sha) for r in state.repos]))
        stop.wait()


def _per_request_ms(send: Callable[[str, str, str], object], repos: list[Any], repeat: int) -> str:
    for owner, name, sha in repos[:20]:  # connections, imports
        send(owner, name, sha)
    passes = []
    for _ in range(repeat):
        started = time.process_time()
        for owner, name, sha in repos:
            send(owner, name, sha)
        passes.append((time.process_time() - started) / len(repos) * 1e3)
    return f"{min(passes):.3f} ms (median {statistics.median(passes):.3f})"


def requests_table(count: int, repeat: int) -> list[tuple[str, str]]:
    import urllib3

    from crawler.upstream.http import MemoryCache
    from crawler.upstream.sources.github import GitHubSettings
    from crawler.upstream.sources.github.api import GitHubApi

    context = multiprocessing.get_context("spawn")
    ready, stop = context.Queue(), context.Event()
    server = context.Process(target=_serve, args=(count, ready, stop), daemon=True)
    server.start()
    try:
        base, repos = ready.get(timeout=300)
        api = GitHubApi(base, TOKEN, MemoryCache(), GitHubSettings(secondary_limits="off"))

        def tree(owner: str, name: str, sha: str) -> object:
            path = f"/repos/{owner}/{name}/git/trees/{sha}?recursive=1"
            return api.get_json(path, allow=(404, 409), immutable=True)

        def conditional(owner: str, name: str, _sha: str) -> object:
            return api.get_json(f"/repos/{owner}/{name}", allow=(404,))

        parts = urlsplit(base)
        pool = urllib3.HTTPConnectionPool(parts.hostname, parts.port, maxsize=1)
        headers = {"Authorization": f"token {TOKEN}", "Accept": "application/vnd.github+json"}

        def bare(owner: str, name: str, sha: str) -> object:
            answer = pool.urlopen(
                "GET", f"/repos/{owner}/{name}/git/trees/{sha}?recursive=1", headers=headers,
                redirect=False, retries=False,
            )  # fmt: skip
            return json.loads(answer.data), dict(answer.headers)

        try:
            plain = _per_request_ms(tree, repos, repeat)
            rows = [("tree at a commit (GitHubApi, plain path)", plain)]
            for owner, name, sha in repos:  # the first pass: validators kept
                conditional(owner, name, sha)
            before = api.stats.not_modified
            rows.append(("conditional REST, 304 (GitHubApi, PyGithub)",
                         _per_request_ms(conditional, repos, repeat)))  # fmt: skip
            assert api.stats.not_modified > before
            bare_ms = _per_request_ms(bare, repos, repeat)
            rows.append(("tree at a commit (bare urllib3 pool)", bare_ms))
        finally:
            api.close()
            pool.close()
        return rows
    finally:
        stop.set()
        server.join(10)


def large_tree(entries: int = 30_000) -> str:
    rng = random.Random(1)
    dirs = ["src", "lib", "tests", "docs", "third_party", "include", "kernels", "csrc", "tools"]
    tree = []
    for i in range(entries):
        depth = rng.randint(1, 6)
        folders = "/".join(f"{rng.choice(dirs)}{rng.randint(0, 50)}" for _ in range(depth))
        ext = rng.choice(["py", "cc", "h", "md", "txt", "cu"])
        sha = f"{i:040x}"
        tree.append({"path": f"{folders}/file{i}.{ext}", "mode": "100644", "type": "blob",
                     "sha": sha, "size": 1000, "url": f"https://x/blobs/{sha}"})  # fmt: skip
    for path in ("LICENSE", "NOTICE", "third_party/x/LICENSE", "tests/data/LICENSE"):
        tree.append({"path": path, "mode": "100644", "type": "blob", "sha": "0" * 40, "size": 9})
    return json.dumps({"sha": "a" * 40, "tree": tree, "truncated": False})


def parsing_table(repeat: int) -> list[tuple[str, str]]:
    from crawler.upstream.sources.github import parse

    body = large_tree()
    repo = "https://github.com/o/r"
    times: dict[str, list[float]] = {}
    inventories = []
    for _ in range(max(repeat, 3)):
        for name, decode in (("json.loads", json.loads), ("parse.decode_tree", parse.decode_tree)):
            started = time.process_time()
            data = decode(body)
            middle = time.process_time()
            inventories.append(parse.inventory_from_tree(data, repo, "main"))
            ended = time.process_time()
            times.setdefault(name, []).append(middle - started)
            times.setdefault(f"{name}: inventory", []).append(ended - middle)
    assert {tuple(e.path for e in found) for found in inventories} == {
        ("LICENSE", "NOTICE", "third_party/x/LICENSE")
    }
    size = f"{len(json.loads(body)['tree']):,} entries, {len(body) / 1e6:.1f} MB"
    return [
        (f"json.loads of a large tree ({size})", f"{min(times['json.loads']) * 1e3:.1f} ms"),
        ("parse.inventory_from_tree of it", f"{min(times['json.loads: inventory']) * 1e3:.1f} ms"),
        ("parse.decode_tree of it (the tree reads' decoding)",
         f"{min(times['parse.decode_tree']) * 1e3:.1f} ms"),
        ("parse.inventory_from_tree of that",
         f"{min(times['parse.decode_tree: inventory']) * 1e3:.1f} ms"),
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rows = requests_table(args.requests, args.repeat) + parsing_table(args.repeat)
    print(f"## GitHub client CPU ({args.requests:,} requests a pass, fastest of {args.repeat})\n")
    print("| what | CPU |")
    print("|------|-----|")
    for what, figure in rows:
        print(f"| {what} | {figure} |")


if __name__ == "__main__":
    main()
