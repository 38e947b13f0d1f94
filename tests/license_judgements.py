"""What each real license file in ``../shared/replay/licenses`` is, judged by a person reading
it (issue 18), not derived from the reader: the expected SPDX ids in file order, the kind, the
lines of a real addition, and a few words why. Read by ``tests/test_licenses_real.py`` and by
``python bench/license_eval.py --section real``; the files themselves stay outside the repository.

Kinds:
- ``exact``: an unmodified official text (title, copyright lines, the FSF's own revisions and
  the optional "How to Apply" appendix allowed): must read exact, no extra text.
- ``extra``: the license plus real additions or changed wording: the lines given must be quoted.
- ``notice``: not a license text (a pointer, a NOTICE, a project statement, a policy): must never
  read as a plain license (``exact``).
- ``custom``: a license no data package has a template of: must never read ``exact``; ``ids``
  is what a reader should call it, ``miss`` says what the reader does instead.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Judgement:
    ids: tuple[str, ...]
    kind: str  # exact | extra | notice | custom
    why: str
    lines: tuple[int, int] | None = None  # where the addition is (kind "extra"), 1-based
    miss: str | None = None  # a known reader miss, said plainly (counted in the bench)


GPL2 = ("GPL-2.0-only",)
GPL3 = ("GPL-3.0-only",)
LGPL21 = ("LGPL-2.1-only",)
APACHE = ("Apache-2.0",)
MIT = ("MIT",)
BSD3 = ("BSD-3-Clause",)
BSD2 = ("BSD-2-Clause",)

J = Judgement
JUDGEMENTS: dict[str, Judgement] = {
    # --- GNU family ---------------------------------------------------------------------------
    "htop-dev__htop@1a4504c0c6/COPYING": J(GPL2, "exact", "FSF GPL-2.0, Franklin Street revision"),
    "htop-dev__htop@b92f62f912/COPYING": J(
        GPL2, "extra", "1991 FSF text (675 Mass Ave, 'Appendix:', 19yy) is official; htop "
        "appended 'Appendix 2: Special exception concerning PLPA'", (342, 355)),
    "jonas__tig@1b86f070a1/COPYING": J(GPL2, "exact", "FSF GPL-2.0, Franklin Street revision"),
    "jonas__tig@5976048600/COPYING": J(GPL2, "exact", "FSF GPL-2.0, 59 Temple Place revision"),
    "irssi__irssi@43f1727ef9/COPYING": J(
        GPL2, "extra", "OpenSSL linking permission added before the GPL text", (1, 2)),
    "irssi__irssi@41a2c3732a/COPYING": J(
        GPL2, "extra", "same OpenSSL permission before the 59 Temple Place revision", (1, 2)),
    "OpenVPN__openvpn@3de926089f/COPYING": J(
        (), "notice", "project statement: trademark, GPL-2.0 by name, OpenSSL and Apache-2 "
        "linking exceptions; the GPL text is in COPYRIGHT.GPL"),
    "OpenVPN__openvpn@3de926089f/COPYRIGHT.GPL": J(
        GPL2, "exact", "current gnu.org revision (https URL instead of the address, Moe Ghoul)"),
    "OpenVPN__openvpn@d02a86d37b/COPYRIGHT.GPL": J(
        GPL2, "extra", "the appendix's sample notice edited to 'version 2' only (drops 'or any "
        "later version'): the project's own change", (297, 297)),
    "mpv-player__mpv@b955aa28f3/LICENSE.GPL": J(GPL2, "exact", "current gnu.org revision"),
    "mpv-player__mpv@b955aa28f3/LICENSE.LGPL": J(LGPL21, "exact", "current gnu.org revision"),
    "mpv-player__mpv@b955aa28f3/Copyright": J(
        (), "notice", "project licensing statement naming LICENSE.GPL and LICENSE.LGPL"),
    "lxc__lxc@e7b855a51b/COPYING": J((), "notice", "points to the SPDX headers of the sources"),
    "lxc__lxc@e7b855a51b/LICENSE.GPL2": J(GPL2, "exact", "FSF GPL-2.0, Franklin Street"),
    "lxc__lxc@e7b855a51b/LICENSE.LGPL2.1": J(LGPL21, "exact", "FSF LGPL-2.1, Franklin Street"),
    "pycurl__pycurl@3d008f97dc/COPYING-LGPL": J(LGPL21, "exact", "FSF LGPL-2.1"),
    "pycurl__pycurl@3d008f97dc/COPYING-MIT": J(
        ("curl",), "exact", "the curl license word for word, its own title 'COPYRIGHT AND "
        "PERMISSION NOTICE', pycurl's holders"),
    "RidgeRun__gst-shark@09ba05865d/COPYING": J(GPL2, "exact", "GPL half of the LGPL pair"),
    "RidgeRun__gst-shark@09ba05865d/COPYING.LESSER": J(LGPL21, "exact", "FSF LGPL-2.1"),
    "Becksteinlab__hop@13316bfe1c/COPYING": J(
        GPL3, "exact", "FSF GPL-3.0 with the 2007 http:// URLs (philosophy/why-not-lgpl)"),
    "Becksteinlab__hop@13316bfe1c/COPYING.LESSER": J(("LGPL-3.0-only",), "exact", "FSF LGPL-3.0"),
    "Becksteinlab__hop@973d2932b1/COPYING": J(GPL3, "exact", "same GPL-3.0 text, alone now"),
    "jarun__ddgr@09a473282f/LICENSE": J(GPL3, "exact", "FSF GPL-3.0, http:// URLs"),
    "WayneD__rsync@2f9b963aba/COPYING": J(
        GPL3, "extra", "OpenSSL and xxhash linking exception added before the text", (1, 8)),
    "WayneD__rsync@4fd842f98d/COPYING": J(GPL3, "exact", "FSF GPL-3.0, 2007 revision"),
    "WayneD__rsync@c627d61324/COPYING": J(GPL2, "exact", "FSF GPL-2.0, 1991 (675 Mass Ave)"),
    "python-gitlab__python-gitlab@00e380267b/COPYING": J(
        ("LGPL-3.0-only",), "exact", "FSF LGPL-3.0 alone in COPYING"),
    "searxng__searxng@9fea41204f/LICENSE": J(("AGPL-3.0-only",), "exact", "FSF AGPL-3.0"),
    "renovatebot__renovate@c2dd4f856f/license": J(("AGPL-3.0-only",), "exact", "FSF AGPL-3.0"),
    "x-cmd__x-cmd-origin@bed175711d/LICENSE": J(
        GPL3, "extra", "Apache-style boilerplate ('you may not use this file except in "
        "compliance') naming the GPL v3, put before the GPL text", (3, 13)),
    # --- Apache ----------------------------------------------------------------------------------
    "psf__requests@1f6589ec3a/LICENSE": J(
        APACHE, "exact", "sections 1-9 without 'END OF TERMS' and the optional appendix"),
    "psf__requests@1f6589ec3a/NOTICE": J((), "notice", "a NOTICE with the project name"),
    "psf__requests@a29be8f9cc/LICENSE": J(
        (), "notice", "the short Apache notice (per-file header), not the license text"),
    "psf__requests@49140d6880/LICENSE": J(("ISC",), "exact", "2012 ISC text, unmodified"),
    "apache__commons-lang@d15939ef46/LICENSE.txt": J(APACHE, "exact", "with the appendix"),
    "apache__commons-lang@d15939ef46/NOTICE.txt": J((), "notice", "ASF NOTICE"),
    "flashinfer-ai__flashinfer@fb28d7242b/LICENSE": J(
        APACHE, "extra", "list of adapted third-party code appended after the text", (204, 230)),
    "flashinfer-ai__flashinfer@fb28d7242b/NOTICE": J((), "notice", "NOTICE file"),
    "vllm-project__vllm-ascend@182b75ea84/LICENSE": J(APACHE, "exact", "with the appendix"),
    "flagos-ai__FlagGems@ed2508bcb5/LICENSE": J(APACHE, "exact", "without the appendix"),
    "Deep-Spark__DeepSparkInference@79773330fc/LICENSE": J(APACHE, "exact", "with appendix"),
    "pypi__warehouse@6b62157124/LICENSE": J(APACHE, "exact", "without 'END OF TERMS'"),
    "xanzy__go-gitlab@68add0327e/LICENSE": J(APACHE, "exact", "with the appendix"),
    "golang108__go-gitee@f81810b76a/LICENSE": J(APACHE, "exact", "with the appendix"),
    "google__styleguide@8487c083e1/LICENSE": J(APACHE, "exact", "with the appendix"),
    "NVIDIA__nccl@5067397c26/LICENSE.txt": J(
        (*APACHE, *BSD3), "extra", "opening statement on which parts are Apache or BSD, then "
        "both texts and a funding note", (2, 6)),
    "NVIDIA__nccl@911d61f214/LICENSE.txt": J(
        BSD3, "extra", "BSD-3-Clause plus a U.S. Department of Energy funding sentence and a "
        "pointer to NVTX", (29, 33)),
    # --- BSD, MIT, ISC and other permissive ------------------------------------------------------
    "pallets__flask@2ac89889f4/LICENSE.txt": J(BSD3, "exact", "BSD-3-Clause, numbered"),
    "pallets__flask@9bf5c3b3a3/LICENSE": J(
        BSD3, "extra", "2018 wording: 'Some rights reserved', 'software as well as "
        "documentation', 'AND DOCUMENTATION' in the disclaimer", (5, 6)),
    "pygments__pygments@6a62df1d1f/LICENSE": J(BSD2, "exact", "BSD-2-Clause, bullets"),
    "coleslaw-org__coleslaw@ef76a42e4a/LICENSE": J(BSD2, "exact", "BSD-2-Clause"),
    "pypa__packaging@053c884615/LICENSE": J(
        (), "notice", "pointer: either LICENSE.APACHE or LICENSE.BSD"),
    "pypa__packaging@053c884615/LICENSE.APACHE": J(APACHE, "exact", "without the appendix"),
    "pypa__packaging@053c884615/LICENSE.BSD": J(BSD2, "exact", "BSD-2-Clause"),
    "dateutil__dateutil@c981f9c7aa/LICENSE": J(
        (*APACHE, *BSD3), "extra", "Apache notice with a cut-off date, then BSD-3-Clause and "
        "a sentence on which applies", (16, 18)),
    "redis__redis@4f8cdc2a1e/LICENSE.txt": J(
        ("LicenseRef-scancode-rsalv2", "SSPL-1.0"), "extra",
        "statement of the RSALv2/SSPLv1 choice before the two source-available texts", (1, 5)),
    "redis__redis@2d6d9f7552/COPYING": J(BSD3, "exact", "BSD-3-Clause, 'Redis' as the name"),
    "tile-ai__tilelang@a35008a425/LICENSE": J(
        MIT, "extra", "dated note on Microsoft collaboration terms", (4, 5)),
    "tile-ai__tilelang@57ab687cf7/LICENSE": J(MIT, "exact", "MIT, first revision"),
    "tile-ai__tilelang@6ffae0f259/LICENSE": J(
        MIT, "extra", "the same dated Microsoft note", (4, 5)),
    "ROCm__aiter@e4048607a5/LICENSE": J(MIT, "exact", "AMD copyright line, then MIT"),
    "lilydjwg__nvchecker@779fb6aa62/LICENSE": J(MIT, "exact", "MIT"),
    "python-poetry__poetry@f467023368/LICENSE": J(MIT, "exact", "MIT without a title"),
    "actions__hello-world-docker-action@842595aafa/LICENSE": J(MIT, "exact", "MIT"),
    "padima2__protoncoin@30957b36d8/COPYING": J(MIT, "exact", "MIT, '(MIT)' title"),
    "padima2__protoncoin@30957b36d8/LICENSE": J(MIT, "exact", "MIT"),
    "transmission-web-control__transmission-web-control@6d8d8259fd/LICENSE": J(
        MIT, "exact", "MIT"),
    "jacquev6__ActionTree@4a29133428/LICENSE": J(MIT, "exact", "MIT, '(MIT)' title"),
    "dependabot__dependabot-core@54c10285aa/LICENSE": J(MIT, "exact", "MIT"),
    "aws__mit-0@feadea4293/MIT-0": J(("MIT-0",), "exact", "MIT No Attribution"),
    "BurntSushi__ripgrep@3fce3b5bb0/COPYING": J(
        (), "notice", "pointer: dual-licensed under the Unlicense and MIT"),
    "BurntSushi__ripgrep@3fce3b5bb0/LICENSE-MIT": J(MIT, "exact", "MIT"),
    "BurntSushi__ripgrep@3fce3b5bb0/UNLICENSE": J(("Unlicense",), "exact", "the Unlicense"),
    "serde-rs__serde@1023d07751/LICENSE-APACHE": J(APACHE, "exact", "without the appendix"),
    "serde-rs__serde@1023d07751/LICENSE-MIT": J(MIT, "exact", "MIT without title or holder"),
    "npm__ini@3c96c74fd4/LICENSE": J(("ISC",), "exact", "ISC"),
    "catchorg__Catch2@a6ee7e20cd/LICENSE.txt": J(("BSL-1.0",), "exact", "Boost 1.0"),
    "madler__zlib@d201f04c72/LICENSE": J(
        ("Zlib",), "exact", "zlib's own notice, signed with the authors' names and addresses"),
    "glfw__glfw@92dcf4ce74/LICENSE.md": J(("Zlib",), "exact", "zlib terms in Markdown"),
    # --- Eclipse, Mozilla, Creative Commons -------------------------------------------------------
    "eclipse__mosquitto@fb9b115392/LICENSE.txt": J(
        (), "notice", "pointer: dual EPL-2.0 / EDL-1.0"),
    "eclipse__mosquitto@fb9b115392/epl-v20": J(("EPL-2.0",), "exact", "EPL-2.0"),
    "eclipse__mosquitto@fb9b115392/edl-v10": J(
        BSD3, "exact", "Eclipse Distribution License 1.0, which SPDX lists as BSD-3-Clause"),
    "eclipse__mosquitto@fb9b115392/NOTICE.md": J((), "notice", "Eclipse project NOTICE"),
    "hashicorp__go-version@8f84cf4e0c/LICENSE": J(
        ("MPL-2.0",), "exact", "MPL-2.0 under a copyright header line"),
    "hashicorp__go-version@43e7d27205/LICENSE": J(("MPL-2.0",), "exact", "MPL-2.0"),
    "certifi__python-certifi@f4bc676bc1/LICENSE": J(
        (), "notice", "says the bundle is modified and names the MPL 2.0, no license text"),
    "github__gitignore@dcc0fc7bc2/LICENSE": J(
        ("CC0-1.0",), "exact", "CC0 legal code without Creative Commons' header disclaimer"),
    "JLLeitschuh__security-research@c958d94193/LICENSE": J(
        ("CC0-1.0",), "exact", "CC0 legal code with the header"),
    "EbookFoundation__free-programming-books@5b277d20f6/LICENSE": J(
        ("CC-BY-4.0",), "exact", "CC BY 4.0 legal code"),
    # --- vendor, model and source-available licenses --------------------------------------------
    "NVlabs__stylegan3@c233a919a6/LICENSE.txt": J(
        ("LicenseRef-NVIDIA-Source-Code-License",), "custom",
        "NVIDIA Source Code License (non-commercial use only), no SPDX id",
        miss="no template of it: the reader names the Amazon Software License it resembles"),
    "meta-llama__llama@689c7f261b/LICENSE": J(
        ("LicenseRef-scancode-llama-2-license-2023",), "exact",
        "Llama 2 Community License Agreement, unmodified (ScanCode's id; not in SPDX)"),
    "meta-llama__llama@689c7f261b/USE_POLICY.md": J(
        (), "notice", "acceptable use policy, not a license text"),
    "ReDASers__PhishBench@5e64635248/LICENSE.md": J(
        ("LicenseRef-scancode-apl-1.1",), "extra",
        "OMNeT++'s Academic Public License with the program renamed PhishBench", (5, 5)),
    "hashicorp__terraform@883c7221ee/LICENSE": J(
        ("BUSL-1.1",), "extra", "BUSL-1.1 with its Parameters: licensor, additional use "
        "grant, change date and change license", (9, 43)),
    "hashicorp__terraform@b145fbcaad/LICENSE": J(
        ("BUSL-1.1",), "extra", "the first BUSL-1.1 revision and its Parameters", (8, 12)),
    "hashicorp__terraform@dcee05d198/LICENSE": J(("MPL-2.0",), "exact", "last MPL-2.0 text"),
}
