"""How long ``sources.yaml`` takes to read and validate, by catalog size.

Synthetic catalogs (each project with a repo, a tracking mode, a tag pattern and a note; every
tenth with a watched page) are parsed with ``crawler.config.parse_config``: the median of several
runs, split into the YAML load (libyaml's parser when PyYAML has it) and the whole parse with
validation. The pure-Python loader's figure is shown beside it for comparison. Prints a table,
asserts nothing.

Run:  python bench/config_parse.py
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import yaml

from crawler import config


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


def median_ms(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    loader = config._LineLoader
    fast = loader.__mro__[1].__name__
    print(f"loader base: {fast}")
    print("| projects | bytes | YAML load ms | parse_config ms | pure-Python YAML load ms |")
    print("|---|---|---|---|---|")
    for n in (100, 1000, 10_000):
        text = catalog(n)
        repeat = 15 if n <= 1000 else 3
        load = median_ms(lambda t=text: yaml.load(t, Loader=loader), repeat)
        parse = median_ms(lambda t=text: config.parse_config(t), repeat)
        pure = median_ms(lambda t=text: yaml.load(t, Loader=yaml.SafeLoader), repeat)
        print(f"| {n:,} | {len(text.encode()):,} | {load:.1f} | {parse:.1f} | {pure:.1f} |")


if __name__ == "__main__":
    main()
