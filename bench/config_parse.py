"""How long ``sources.yaml`` takes to read and validate, by catalog size.

Synthetic catalogs (each project with a repo, a tracking mode, a tag pattern and a note; every
tenth with a watched page) are parsed with ``crawler.config.parse_config``. Each figure is the
median of 15 runs and, in brackets, the fastest (the least disturbed by other load on the
machine): the YAML load (libyaml's parser when PyYAML has it), the whole parse with validation,
and the pure-Python loader for comparison. Prints a table, asserts nothing.

Run:  python bench/config_parse.py
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import yaml

from crawler.config import loader as config


def catalog(n: int) -> str:
    lines = ["settings: {timeout: 20}", "projects:"]
    for i in range(n):
        lines += [
            f"  - name: Project {i}",
            f"    repo: org{i % 97}/project-{i}",
            "    track: auto",
            "    tag_pattern: '^v\\d'",
            "    note: vendor fork, releases follow upstream",
        ]
        if i % 10 == 0:
            lines += [
                "    pages:",
                "      - name: support",
                f"        url: https://docs.example.org/{i}/support.html",
                "        tables: [{name: hw, heading: Supported Hardware, key: [Chip]}]",
                "        pins: {sdk: 'SDK (\\d+(?:\\.\\d+)+)'}",
            ]
    return "\n".join(lines) + "\n"


def timing_ms(run: Callable[[], object], repeat: int) -> str:
    """'median (fastest)' of ``repeat`` runs, in milliseconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return f"{statistics.median(times) * 1000:.1f} ({min(times) * 1000:.1f})"


def main() -> None:
    loader = config._LineLoader
    fast = loader.__mro__[1].__name__
    print(f"loader base: {fast}")
    print("ms, median (fastest) of 15 runs")
    print("| projects | bytes | YAML load | parse_config | pure-Python YAML load |")
    print("|---|---|---|---|---|")
    for n in (100, 1000, 5000):  # 5,000 such projects are about 0.8 MB, under the 1 MiB limit
        text = catalog(n)
        load = timing_ms(lambda t=text: yaml.load(t, Loader=loader), 15)
        parse = timing_ms(lambda t=text: config.parse_config(t), 15)
        pure = timing_ms(lambda t=text: yaml.load(t, Loader=yaml.SafeLoader), 15)
        print(f"| {n:,} | {len(text.encode()):,} | {load} | {parse} | {pure} |")


if __name__ == "__main__":
    main()
