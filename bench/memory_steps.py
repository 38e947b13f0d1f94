"""Where the crawler's peak memory grows with the catalog: peak RSS after each step of an audit.

``bench/side_by_side.py`` prints the peak RSS of a whole audit at two catalog sizes; this says
at which step the peak is reached and what each step adds per project. The synthetic catalog
of ``side_by_side`` (``synthetic_state``, ``config_text``) on a ``FakeGitHub`` on loopback
(plain HTTP, latency 0, GraphQL executed in the fake's own process), a first audit then an
unchanged night at each size, each ``python -m crawler --quiet audit`` in a child process that
reads its own high-water mark (``VmHWM``: this process's memory is never charged to it) after
loading sources.yaml, planning the night, the first and the last batch, the links, the
pending items, the report and the finishing transaction.

Reproduce (from the repository root, in the project's virtualenv; about 3 minutes):

    python bench/memory_steps.py                     # 1,000 and 10,000 projects
    python bench/memory_steps.py --sizes 1000,5000

Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from audit_budget import FOREIGN_ENV, TOKEN, config_text, table

# the steps read, as crawler.audit (or crawler.cli_ops) names them
STEPS = (
    ("imports", "interpreter and imports"),
    ("load_config", "sources.yaml loaded"),
    ("plan_night", "night planned"),
    ("first_batch", "first batch recorded"),
    ("_tally_batch", "last batch recorded"),
    ("_link_step", "links"),
    ("_pending", "pending items"),
    ("report_night", "report"),
    ("_finish_night", "finished"),
)

# The child: `python -m crawler` with each step wrapped to write the high-water mark after it.
CHILD = r"""
import json, runpy, sys
out = open(sys.argv.pop(1), "a")
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
def note(step):
    out.write(json.dumps([step, hwm()]) + "\n"); out.flush()
import crawler.audit, crawler.cli_ops
note("imports")
def wrap(module, name):
    step = getattr(module, name)
    def wrapped(*args, **kwargs):
        result = step(*args, **kwargs)
        note(name)
        return result
    setattr(module, name, wrapped)
wrap(crawler.cli_ops, "load_config")
for name in ("plan_night", "_tally_batch", "_link_step", "_pending", "report_night",
             "_finish_night"):
    wrap(crawler.audit, name)
sys.argv = ["crawler", *sys.argv[1:]]
runpy.run_module("crawler", run_name="__main__")
"""


def steps_of(n: int, seed: int) -> dict[str, dict[str, float]]:
    """{kind: {step: peak RSS in MB after it}} for a first audit and an unchanged night."""
    from crawler_fakes.github import FakeGitHub, synthetic_state

    today = time.strftime("%Y-%m-%d", time.gmtime())
    state = synthetic_state(n, seed, today)
    repos = [(r.name, f"{r.owner}/{r.name}") for r in state.repos]
    found: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="memory-steps-") as tmp, FakeGitHub(
        state, token=TOKEN, unauth_limit=10**9, latency=0, auth_limit=10**7,
        graphql_limit=10**7,
    ) as fake:  # fmt: skip
        work = Path(tmp)
        (work / "sources.yaml").write_text(config_text(repos))
        (work / "child.py").write_text(CHILD)
        env = {k: v for k, v in os.environ.items() if k not in FOREIGN_ENV}
        env.update(GITHUB_API_URL=fake.base_url, GITHUB_TOKEN=TOKEN)
        for kind in ("first", "unchanged"):
            record = work / f"{kind}.jsonl"
            db = f"sqlite:///{work / 'db.sqlite'}"
            cmd = [sys.executable, str(work / "child.py"), str(record), "--quiet", "audit",
                   "--config", str(work / "sources.yaml"), "--db", db,
                   "--reports", str(work / "reports")]  # fmt: skip
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise SystemExit(f"{kind} audit of {n}: exit {done.returncode}\n{done.stderr}")
            steps: dict[str, float] = {}
            for line in record.read_text().splitlines():
                step, mb = json.loads(line)
                if step == "_tally_batch" and "first_batch" not in steps:
                    steps["first_batch"] = mb
                steps[step] = mb
            found[kind] = steps
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000", help="two catalog sizes, comma-separated")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    small, large = (int(s) for s in args.sizes.split(","))
    started = time.monotonic()
    by_size = {n: steps_of(n, args.seed) for n in (small, large)}
    rows = []
    for kind, label in (("first", "first audit"), ("unchanged", "unchanged night")):
        for step, said in STEPS:
            a, b = by_size[small][kind].get(step), by_size[large][kind].get(step)
            if a is None or b is None:
                continue
            per = (b - a) * 1024 / (large - small)
            rows.append([label, said, f"{a:.1f}", f"{b:.1f}", f"{per:.2f}"])
    print(f"## Peak RSS (MB, VmHWM) after each step of an audit, {small:,} and {large:,} "
          "projects\n")  # fmt: skip
    print(table(["run", "after", f"{small:,}", f"{large:,}", "growth, KB a project"], rows))
    print(f"\n(total bench time {time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
