"""Labeled evaluation of ``crawler.analysis.licenses`` (our license detector).

The evaluation set is built at run time: no license text is stored in this repository.
Base texts are the license texts of the installed ``licensedcode-data`` package; each is
turned into realistic variants (copyright lines changed or multiplied, Markdown heading and
re-wrapping at 60 columns, indentation, title removed, bullets changed, SPDX header, CRLF, BOM,
a sentence appended, inserted as a paragraph or inside a line, a word altered, a line deleted,
two licenses concatenated), plus wordings seen in real repositories (issue 32: Meta's BSD
title naming the software, BSD-3-Clause in its "author" wording, sentences whose last words are
a title's, which must be quoted whole). The real files under
``/work/shared/corpus/*/licenses/`` are added when that folder exists, with hand-checked labels.

A second section (``license_adversarial``, issue 13) inserts sentences written for it at
every structural position of the texts GitHub's license picker writes, and reads those texts
with realistic copyright blocks, which must stay ``exact``.

A third section (``real``, issue 18) reads the 96 real license files of
``../shared/replay/licenses`` against the judgement a person wrote down for each
(``tests/support/license_judgements.py``), and every SPDX-listed text the license data
packages ship.

Run:  python bench/license_eval.py [--corpus DIR] [--ids MIT,Apache-2.0,...]
                                   [--section all|standard|adversarial|real]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import license_adversarial  # beside this file: the script's folder is on sys.path

from crawler.analysis import license_templates
from crawler.analysis.license_templates import PLACEHOLDER_WORDS, load_index, reference_text
from crawler.analysis.licenses import (
    LicenseAnalysis,
    analyze_file,
    analyze_license,
    normalize_github_spdx,
)

# Licenses common in the catalog's upstreams plus the ones licensee does not know (X11, PSF-2.0)
EVAL_IDS = (
    "MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "ISC", "X11", "PSF-2.0", "0BSD",
    "MIT-0", "GPL-2.0-only", "GPL-3.0-only", "LGPL-2.1-only", "LGPL-3.0-only", "AGPL-3.0-only",
    "MPL-2.0", "Unlicense", "BSL-1.0", "Zlib", "EPL-2.0", "CC0-1.0", "NCSA", "Artistic-2.0",
    "BSD-3-Clause-Clear", "UPL-1.0", "MS-PL", "ECL-2.0", "AFL-3.0", "OFL-1.1", "EUPL-1.2",
    "CC-BY-4.0", "WTFPL", "BSD-4-Clause",
)
EXTRA = ("Notwithstanding the above, the Example Foundation asks commercial users to notify it "
         "in writing before shipping any product that contains this software.")
ALTERED = "REDACTED"
DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
DEFAULT_REPLAY = Path(__file__).resolve().parents[2] / "shared" / "replay"

# Hand-checked labels for the real files: (expected SPDX ids in file order, kind).
# kind: "unmodified" = standard text (title/copyright/SPDX lines only), "extra" = has added text.
CORPUS_LABELS: dict[str, tuple[tuple[str, ...], str]] = {
    # MIT with a bold note on Microsoft collaboration terms (lines 4-5) between copyright and text
    "tile-ai__tilelang/LICENSE": (("MIT",), "extra"),
    # NOTICE preamble (MIT for examples/device/ep, by reference) before a verbatim Apache-2.0
    "ai-dynamo__nixl/LICENSE": (("MIT", "Apache-2.0"), "extra"),
    "ai-dynamo__nixl/examples__device__ep__LICENSE-DeepEP": (("MIT",), "unmodified"),
    # BSD-3-Clause without a title line; "Neither the name Meta" fills the name placeholder
    "pytorch__helion/LICENSE": (("BSD-3-Clause",), "unmodified"),
    # AMD copyright line first, then "MIT License" title, then the verbatim MIT text
    "ROCm__aiter/LICENSE": (("MIT",), "unmodified"),
    "kvcache-ai__Mooncake/LICENSE-APACHE": (("Apache-2.0",), "unmodified"),
    # PyTorch's BSD-3-Clause: many holders (not extra) plus the Caffe2 copyright-model paragraph
    "sunnygui-L__torch-gcu/LICENSE": (("BSD-3-Clause",), "extra"),
    # MIT inside a /* */ comment block with two copyright lines
    "triton-lang__triton/LICENSE": (("MIT",), "unmodified"),
    "meta-pytorch__tritonbench/LICENSE": (("BSD-3-Clause",), "unmodified"),
    # Apache-2.0 followed by a list of bundled third-party components and their licenses
    "apache__tvm/LICENSE": (("Apache-2.0",), "extra"),
    "flashinfer-ai__flashinfer/LICENSE": (("Apache-2.0",), "extra"),
    # verbatim Apache-2.0 copies (appendix present or absent, blank first line)
    "Deep-Spark__DeepSparkInference/LICENSE": (("Apache-2.0",), "unmodified"),
    "EnflameTechnology__vllm-gcu/LICENSE": (("Apache-2.0",), "unmodified"),
    "flagos-ai__FlagGems/LICENSE": (("Apache-2.0",), "unmodified"),
    "llm-d__llm-d/LICENSE": (("Apache-2.0",), "unmodified"),
    "mlc-ai__mlc-llm/LICENSE": (("Apache-2.0",), "unmodified"),
    "sgl-project__sglang/LICENSE": (("Apache-2.0",), "unmodified"),
    "vllm-project__vllm-ascend/LICENSE": (("Apache-2.0",), "unmodified"),
    "apache__tvm/licenses__LICENSE.tensorrt_llm.txt": (("Apache-2.0",), "unmodified"),
    "apache__tvm/licenses__LICENSE.cutlass_fpA_intB_gemm.txt": (("Apache-2.0",), "unmodified"),
    # BSD-3-Clause with "BSD 3-Clause License" title / SPDX line / bullets
    "apache__tvm/licenses__LICENSE.cutlass.txt": (("BSD-3-Clause",), "unmodified"),
    "apache__tvm/licenses__LICENSE.libflash_attn.txt": (("BSD-3-Clause",), "unmodified"),
    "flashinfer-ai__flashinfer/licenses__LICENSE.cutlass.txt": (("BSD-3-Clause",), "unmodified"),
    "flashinfer-ai__flashinfer/licenses__LICENSE.flashattention3.txt": (("BSD-3-Clause",),
                                                                        "unmodified"),
    # LLVM: Apache-2.0 + LLVM exception + third-party note + legacy NCSA and MIT texts
    "apache__tvm/licenses__LICENSE.builtin_fp16.txt": (("Apache-2.0", "LLVM-exception", "NCSA",
                                                        "MIT"), "extra"),
    # fmt: MIT plus its own binary-embedding exception
    "flashinfer-ai__flashinfer/licenses__LICENSE.fmt.txt": (("MIT", "fmt-exception"),
                                                            "unmodified"),
    # spdlog: MIT plus a "NOTE: Third party dependency" paragraph
    "flashinfer-ai__flashinfer/licenses__LICENSE.spdlog.txt": (("MIT",), "extra"),
    "Deep-Spark__DeepSparkInference/models__cv__instance_segmentation__mask_rcnn__ixrt__plugins__"
    "LICENSE": (("MIT",), "unmodified"),
    "flagos-ai__FlagGems/docs__themes__hugo-book__LICENSE": (("MIT",), "unmodified"),
}


@dataclass
class Case:
    name: str
    text: str | bytes  # bytes go through analyze_file
    ids: tuple[str, ...]
    kind: str  # unmodified | extra | altered | deleted
    lines: tuple[int, int] | None = None  # where the extra/altered text is (1-based)
    path: str = "LICENSE"
    quote: str | None = None  # the extra text, quoted whole (a sentence, not a piece of it)


def _base(spdx_id: str) -> tuple[str, int] | None:
    index = load_index()
    i = index.by_spdx.get(spdx_id)
    if i is None:
        return None
    return reference_text(spdx_id).rstrip("\n"), index.template(i).title_len


def _paragraphs(text: str) -> list[str]:
    return [p for p in re.split(r"\n\s*\n", text) if p.strip()]


def _variants(spdx_id: str, body: str, title_len: int) -> list[Case]:
    cases: list[Case] = []
    add = cases.append
    add(Case(f"{spdx_id}/plain", body, (spdx_id,), "unmodified"))
    add(Case(f"{spdx_id}/copyright", f"Copyright (c) 2019-2024 Acme Widgets, Inc.\n\n{body}",
             (spdx_id,), "unmodified"))
    many = "\n".join(f"Copyright (c) {2000 + k} Contributor Number {k}" for k in range(8))
    add(Case(f"{spdx_id}/copyrights", f"{many}\nAll rights reserved.\n\n{body}", (spdx_id,),
             "unmodified"))
    wrapped = "\n\n".join(textwrap.fill(" ".join(p.split()), 60) for p in _paragraphs(body))
    add(Case(f"{spdx_id}/markdown60", f"# {spdx_id} License\n\n{wrapped}\n", (spdx_id,),
             "unmodified"))
    add(Case(f"{spdx_id}/indented", textwrap.indent(body, "    "), (spdx_id,), "unmodified"))
    if title_len:
        paras = _paragraphs(body)
        add(Case(f"{spdx_id}/no-title", "\n\n".join(paras[1:]), (spdx_id,), "unmodified"))
    add(Case(f"{spdx_id}/spdx-header", f"SPDX-License-Identifier: {spdx_id}\n\n{body}",
             (spdx_id,), "unmodified"))
    add(Case(f"{spdx_id}/crlf", body.replace("\n", "\r\n").encode(), (spdx_id,), "unmodified"))
    add(Case(f"{spdx_id}/bom", b"\xef\xbb\xbf" + body.encode(), (spdx_id,), "unmodified"))
    n = body.count("\n") + 1
    add(Case(f"{spdx_id}/appended", f"{body}\n\n{EXTRA}\n", (spdx_id,), "extra", (n + 2, n + 2)))
    lines = body.split("\n")
    blanks = [k for k, ln in enumerate(lines) if not ln.strip() and 0 < k < len(lines) - 1]
    if blanks:
        k = blanks[len(blanks) // 2]
        text = "\n".join([*lines[: k + 1], EXTRA, "", *lines[k + 1 :]])
        add(Case(f"{spdx_id}/inserted", text, (spdx_id,), "extra", (k + 2, k + 2)))
    stars = [re.sub(r"^(\s*)(?:\d{1,2}[.)]|\([a-z]\)|[a-z][.)])\s", r"\1* ", ln) for ln in lines]
    if stars != lines:
        add(Case(f"{spdx_id}/bullets", "\n".join(stars), (spdx_id,), "unmodified"))
    mid = len(lines) // 2
    full = [k for k in [*range(mid, len(lines)), *range(mid)] if len(lines[k].split()) >= 6
            and not re.match(r"\s*copyright", lines[k], re.IGNORECASE)]
    if full:
        k = full[0]
        add(Case(f"{spdx_id}/inline-sentence",
                 "\n".join([*lines[:k], f"{lines[k]} {EXTRA}", *lines[k + 1 :]]), (spdx_id,),
                 "extra", (k + 1, k + 1)))
        add(Case(f"{spdx_id}/deleted-line", "\n".join([*lines[:k], *lines[k + 1 :]]),
                 (spdx_id,), "deleted", (k, k + 1)))
    for k in [*range(mid, len(lines)), *range(mid)]:
        m = next((w for w in re.findall(r"\b[A-Za-z]{7,}\b", lines[k])
                  if w.lower() not in PLACEHOLDER_WORDS), None)
        if m and not re.match(r"\s*copyright", lines[k], re.IGNORECASE):
            altered = [*lines[:k], lines[k].replace(m, ALTERED, 1), *lines[k + 1 :]]
            add(Case(f"{spdx_id}/altered", "\n".join(altered), (spdx_id,), "altered",
                     (k + 1, k + 1)))
            break
    return cases


def build_cases(ids: tuple[str, ...], corpus: Path) -> list[Case]:
    cases: list[Case] = []
    bases: dict[str, str] = {}
    for spdx_id in ids:
        got = _base(spdx_id)
        if got is None:
            print(f"warning: {spdx_id} not in the license data package", file=sys.stderr)
            continue
        bases[spdx_id] = got[0]
        cases += _variants(spdx_id, *got)
    pairs = [("MIT", "Apache-2.0"), ("BSD-3-Clause", "MIT"), ("Apache-2.0", "BSD-2-Clause"),
             ("ISC", "X11"), ("PSF-2.0", "MIT")]
    for a, b in pairs:
        if a in bases and b in bases:
            cases.append(Case(f"{a}+{b}/concatenated", f"{bases[a]}\n\n\n{bases[b]}\n", (a, b),
                              "unmodified"))
    cases += _choosealicense_cases()
    cases += real_wording_cases()
    if corpus.is_dir():
        for key, (labels, kind) in CORPUS_LABELS.items():
            repo, name = key.split("/", 1)
            path = corpus / repo / "licenses" / name
            if path.is_file():
                cases.append(Case(f"corpus:{key}", path.read_bytes(), labels, kind,
                                  path=name.rsplit("__", 1)[-1]))
    return cases


META_HOLDER = "Copyright (c) Meta Platforms, Inc. and affiliates. All rights reserved."
QUOTED = "Licensed under the MIT License."  # its last word is also a title's


def real_wording_cases() -> list[Case]:
    """Wordings seen in real repositories (issue 32), built from the package's texts with the
    few words each changes written here: Meta's BSD template ("BSD License", a line naming the
    software, then BSD-3-Clause), BSD-3-Clause in its "author" wording (one of ScanCode's rules
    of bsd-new), and sentences whose last words are also the license's title words."""
    cases: list[Case] = []
    bsd3 = reference_text("BSD-3-Clause").rstrip("\n")
    for name in ("Zstandard", '"folly"', "“Hermes”"):
        text = f"BSD License\n\nFor {name} software\n\n{META_HOLDER}\n\n{bsd3}\n"
        cases.append(Case(f"real:meta-bsd/{name.strip(chr(34) + '“”')}", text,
                          ("BSD-3-Clause",), "unmodified"))
    author = bsd3.replace(
        "Neither the name of the ORGANIZATION nor the names of its contributors may be\nused",
        "The name of the author may not be used",
    ).replace("THE COPYRIGHT HOLDER OR CONTRIBUTORS\nBE LIABLE", "THE AUTHOR BE LIABLE")
    for label, disclaimer in (("by-the-author", "BY THE AUTHOR ``AS IS''"), ("as-is", "``AS IS''")):
        text = author.replace("BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS\n\"AS IS\"", disclaimer)
        cases.append(Case(f"real:bsd3-author/{label}",
                          f"Copyright (c) 2003 Jane Doe\nAll rights reserved.\n\n{text}\n",
                          ("BSD-3-Clause",), "unmodified"))
    for spdx_id in ("Zlib", "BSD-2-Clause", "0BSD"):
        said = QUOTED if spdx_id == "Zlib" else "Documentation is licensed under the BSD License."
        named = ("MIT", spdx_id) if said == QUOTED else (spdx_id,)  # MIT: named, a reference
        cases.append(Case(f"real:sentence-before/{spdx_id}",
                          f"{said}\n{reference_text(spdx_id)}", named, "extra", (1, 1),
                          quote=said))
    lines = reference_text("MPL-2.0").split("\n")
    at = next(i for i, line in enumerate(lines) if line.strip().endswith('"License"'))
    lines[at] += f" {QUOTED}"
    cases.append(Case("real:sentence-on-a-heading/MPL-2.0", "\n".join(lines), ("MPL-2.0", "MIT"),
                      "extra", (at + 1, at + 1), quote=QUOTED))
    return cases


def _choosealicense_cases() -> list[Case]:
    """The 47 texts GitHub's licensee matches against (choosealicense.com), when the optional
    ``pychoosealicense`` package is installed: the same licenses from another source, with
    their [year]/[fullname] placeholders filled in as a project would."""
    spec = importlib.util.find_spec("pychoosealicense")
    if spec is None or not spec.submodule_search_locations:
        return []
    folder = Path(next(iter(spec.submodule_search_locations))) / "_licenses"
    cases: list[Case] = []
    for path in sorted(folder.glob("*.txt")):
        raw = path.read_text(encoding="utf-8")
        _, head, body = raw.split("---\n", 2)
        m = re.search(r"^spdx-id:\s*(\S+)", head, re.MULTILINE)
        expected = normalize_github_spdx(m.group(1)) if m else None
        if not expected:
            continue
        # placeholders filled as a project would (choosealicense made the Vim license generic)
        fills = {"year": "2024", "yyyy": "2024", "fullname": "Jane Doe", "email": "jd@example.org",
                 "project": "Vim" if path.stem == "vim" else "Example Project",
                 "projecturl": "https://example.org", "login": "janedoe"}
        filled = re.sub(r"\[([a-z]+)\]", lambda m, f=fills: f.get(m.group(1), m.group(0)),
                        body.strip("\n"))
        cases.append(Case(f"choosealicense:{expected}", filled, (expected,), "unmodified"))
        n = filled.count("\n") + 1
        cases.append(Case(f"choosealicense:{expected}/appended", f"{filled}\n\n{EXTRA}\n",
                          (expected,), "extra", (n + 2, n + 2)))
    return cases


def _run(case: Case, tmp: Path) -> LicenseAnalysis:
    if isinstance(case.text, bytes):
        path = tmp / case.path
        path.write_bytes(case.text)
        try:
            return analyze_file(path)
        finally:
            path.unlink()
    return analyze_license(case.text, case.path)


def _located(a: LicenseAnalysis, lines: tuple[int, int] | None) -> bool:
    if lines is not None and a.verdict == "modified" and not a.altered_text:
        # text deleted: the notes say after which line template words are missing
        return any(lines[0] - 1 <= int(n) <= lines[1]
                   for note in a.notes for n in re.findall(r"missing after line (\d+)", note))
    spans = a.extra_text + a.altered_text
    return lines is None or any(s.start_line <= lines[1] and lines[0] <= s.end_line
                                for s in spans)


def _quoted_whole(a: LicenseAnalysis, quote: str | None) -> bool:
    return quote is None or any(s.text == quote for s in a.extra_text + a.altered_text)


def startup_seconds() -> float:
    code = ("import time; t = time.perf_counter(); "
            "from crawler.analysis.licenses import analyze_license; "
            "analyze_license('MIT License'); print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def footprint_mb(dist: str) -> tuple[float, float]:
    """(apparent size, disk usage) in MB of an installed distribution's files."""
    files = importlib.metadata.distribution(dist).files or []
    apparent = disk = 0
    for f in files:
        p = Path(str(f.locate()))
        if p.is_file():
            st = p.stat()
            apparent += st.st_size
            disk += st.st_blocks * 512
    return apparent / 1e6, disk / 1e6


def _installed(dist: str) -> bool:
    try:
        importlib.metadata.distribution(dist)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def real_section(replay: Path) -> int:
    """The real license files read against a person's judgement, and the packages' texts."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.support.license_judgements import JUDGEMENTS

    folder = replay / "licenses"
    if not folder.is_dir():
        print(f"{folder} is absent: nothing to read", file=sys.stderr)
        return 1
    counts = {k: 0 for k in ("read", "crashes", "exact_n", "exact", "extra_n", "extra",
                             "other_n", "other", "wrong_id", "not_recognised")}
    problems: list[str] = []
    t = time.perf_counter()
    for file, judged in JUDGEMENTS.items():
        counts["read"] += 1
        try:
            a = analyze_file(folder / file)
        except Exception as exc:  # counted, never hidden
            counts["crashes"] += 1
            problems.append(f"{file}: crash {type(exc).__name__}")
            continue
        spans = (*a.extra_text, *a.altered_text)
        if judged.kind in ("exact", "extra") or judged.miss:
            if not a.spdx_ids and judged.ids:
                counts["not_recognised"] += 1
                problems.append(f"{file}: not recognised ({judged.why})")
            elif a.spdx_ids != judged.ids:
                counts["wrong_id"] += 1
                problems.append(f"{file}: ids {a.spdx_ids}, judged {judged.ids}"
                                + (f" ({judged.miss})" if judged.miss else ""))
        if judged.kind == "exact":
            counts["exact_n"] += 1
            ok = a.verdict == "exact" and not spans
            counts["exact"] += ok
            if not ok:
                problems.append(f"{file}: {a.verdict}, judged unmodified ({judged.why})")
        elif judged.kind == "extra":
            counts["extra_n"] += 1
            lines = judged.lines or (0, 0)
            ok = any(s.start_line <= lines[1] and lines[0] <= s.end_line for s in spans)
            counts["extra"] += ok
            if not ok:
                problems.append(f"{file}: addition at lines {lines} not quoted ({judged.why})")
        else:
            counts["other_n"] += 1
            counts["other"] += a.verdict != "exact"
    elapsed = time.perf_counter() - t
    spdx_n, spdx_exact, spdx_misses = _spdx_texts()
    rows = [
        ("real files read", str(counts["read"])),
        ("crashes", str(counts["crashes"])),
        ("unmodified official texts read exact", f"{counts['exact']}/{counts['exact_n']}"),
        ("real additions quoted (at their lines)", f"{counts['extra']}/{counts['extra_n']}"),
        ("notices/custom never read as a plain license", f"{counts['other']}/{counts['other_n']}"),
        ("wrong id", str(counts["wrong_id"])),
        ("not recognised", str(counts["not_recognised"])),
        ("mean ms/real file", f"{1000 * elapsed / max(1, counts['read']):.1f}"),
        ("SPDX-listed texts the packages ship", str(spdx_n)),
        ("  ... read exact with their own id", f"{spdx_exact}/{spdx_n}"),
    ]
    print(f"{'real license files (issue 18)':<48} {'value':>8}")
    print("-" * 58)
    for name, value in rows:
        print(f"{name:<48} {value:>8}")
    print(f"\ndisagreements with the judgement ({len(problems)}):")
    for p in problems:
        print(f"  - {p}")
    print(f"\npackage texts not read exact ({len(spdx_misses)}):")
    for m in spdx_misses:
        print(f"  - {m}")
    return 0


def _spdx_texts() -> tuple[int, int, list[str]]:
    """Every SPDX-listed license text of the data packages (ScanCode's, choosealicense's)."""
    index = load_index()
    n = exact = 0
    misses: list[str] = []
    seen: set[tuple[str, str]] = set()
    for e in index.entries:
        source = "choosealicense" if e.key.startswith("choosealicense-") else "scancode"
        if (e.spdx_id.startswith("LicenseRef-") or e.meta.get("is_exception") == "yes"
                or (e.spdx_id, source) in seen):
            continue
        seen.add((e.spdx_id, source))
        a = analyze_license(reference_text(e.spdx_id, source))
        n += 1
        if a.verdict == "exact" and a.spdx_ids[:1] == (e.spdx_id,):
            exact += 1
        else:
            misses.append(f"{source}:{e.spdx_id} {a.verdict} {a.spdx_ids[:3]}")
    return n, exact, misses


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--ids", default=",".join(EVAL_IDS))
    ap.add_argument("--section", choices=("all", "standard", "adversarial", "real"),
                    default="all", help="today's figures, the adversarial placements (issue "
                    "13), both, or the real license files (issue 18)")
    ap.add_argument("--replay", type=Path, default=DEFAULT_REPLAY)
    ap.add_argument("--scancode-only", action="store_true",
                    help="match against ScanCode templates only: a cross-source measure for "
                         "the choosealicense texts")
    args = ap.parse_args(argv)
    if args.scancode_only:  # bench-only: swap in an index without the choosealicense texts
        license_templates._INDEX = license_templates._load(license_templates.data_dir())
    if args.section == "adversarial":
        load_index()
        return license_adversarial.evaluate()
    if args.section == "real":
        return real_section(args.replay)
    start = startup_seconds()
    load_index()  # start-up is measured above, in a fresh process; not counted per file
    cases = build_cases(tuple(args.ids.split(",")), args.corpus)
    stats = {"n": 0, "id_ok": 0, "flag_n": 0, "flagged": 0, "located": 0, "clean_n": 0,
             "false_modified": 0, "false_extra": 0}
    confusions: list[str] = []
    elapsed = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            t = time.perf_counter()
            a = _run(case, Path(tmp))
            elapsed += time.perf_counter() - t
            stats["n"] += 1
            ok = a.spdx_ids == case.ids
            stats["id_ok"] += ok
            problems = [] if ok else [f"ids {a.spdx_ids}"]
            if case.kind == "unmodified":
                stats["clean_n"] += 1
                stats["false_modified"] += a.verdict == "modified"
                stats["false_extra"] += a.verdict == "match_with_extra_text"
                if a.verdict != "exact":
                    problems.append(f"verdict {a.verdict}: " + "; ".join(
                        f"{s.start_line}-{s.end_line} {s.text[:60]!r}"
                        for s in a.extra_text + a.altered_text) + " " + "; ".join(a.notes)[:200])
            else:
                stats["flag_n"] += 1
                flagged = a.verdict in ("match_with_extra_text", "modified")
                located = flagged and _located(a, case.lines) and _quoted_whole(a, case.quote)
                stats["flagged"] += flagged
                stats["located"] += located
                if not located:
                    problems.append(f"verdict {a.verdict}, expected {case.kind} at {case.lines}, "
                                    f"spans {[(s.start_line, s.end_line) for s in a.extra_text]}")
            if problems:
                confusions.append(f"{case.name}: " + " | ".join(problems))
    apparent, disk = footprint_mb("licensedcode-data")
    # pychoosealicense and the dependencies it brings that the project had not already
    extra = [footprint_mb(d) for d in ("pychoosealicense", "domdf-python-tools", "natsort",
                                       "python-frontmatter") if _installed(d)]
    cal_apparent, cal_disk = sum(a for a, _ in extra), sum(d for _, d in extra)

    def pct(k: str, n: str) -> str:
        return f"{100 * stats[k] / max(1, stats[n]):.1f}%"

    rows = [
        ("files evaluated", str(stats["n"]), ""),
        ("right SPDX id(s)", pct("id_ok", "n"), ">= 97%"),
        ("added/altered text flagged", pct("flagged", "flag_n"), "100%"),
        ("  ... and located by line", pct("located", "flag_n"), "100%"),
        ("unmodified flagged 'modified'", f"{stats['false_modified']}/{stats['clean_n']}", "0"),
        ("unmodified flagged extra text", f"{stats['false_extra']}/{stats['clean_n']}", "-"),
        ("mean ms/file after start-up", f"{1000 * elapsed / max(1, stats['n']):.1f}", "< 30"),
        ("start-up seconds (fresh process)", f"{start:.2f}", "< 2"),
        ("licensedcode-data MB (apparent)", f"{apparent:.1f}", "< 60"),
        ("licensedcode-data MB (disk blocks)", f"{disk:.1f}", ""),
        ("pychoosealicense+deps MB (apparent)", f"{cal_apparent:.1f}", ""),
        ("all license data MB (apparent)", f"{apparent + cal_apparent:.1f}", "< 60"),
        ("all license data MB (disk blocks)", f"{disk + cal_disk:.1f}", ""),
    ]
    print(f"{'metric':<36} {'value':>10}  target")
    print("-" * 58)
    for name, value, target in rows:
        print(f"{name:<36} {value:>10}  {target}")
    print(f"\nconfusion cases ({len(confusions)}):")
    for c in confusions:
        print(f"  - {c}")
    if args.section == "all":
        return license_adversarial.evaluate()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
