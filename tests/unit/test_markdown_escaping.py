"""Upstream strings are attacker-controlled: nothing they contain may break the report."""

from __future__ import annotations

import pytest

from crawler.report.markdown import escape, link
from crawler.untrusted import one_line


def test_pipe_newline_and_html_cannot_break_a_table_row() -> None:
    hostile = "v1.0 | <script>alert(1)</script>\n| injected | row |"
    assert escape(hostile) == r"v1.0 \| \<script>alert(1)\</script> \| injected \| row \|"


def test_markdown_link_and_image_syntax_is_neutralised() -> None:
    assert escape("[click](https://evil.example) ![x](y)") == (
        r"`[click](https://evil.example)` !\[x\](y)"
    )


def test_control_and_bidi_characters_and_escape_sequences_are_removed() -> None:
    assert escape("a\x00b\x1b[31mc\u202eevil") == "a bc evil"
    assert escape("soft\u00adhyphen zero\u200bwidth\ufeff") == "soft hyphen zero width"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-30", "2026-11-30"),
        ("llama.cpp b4100 (CUDA 12.4)", "llama.cpp b4100 (CUDA 12.4)"),
        ("project_added torch_gcu-2.5.1", "project_added torch_gcu-2.5.1"),
        ("_init_ __x__ *bold* snake_case_", r"\_init\_ \_\_x\_\_ \*bold\* snake_case\_"),
        ("AT&T &amp; &#x41;", r"AT&T \&amp; \&#x41;"),
        ("costs $5, $x^2$", r"costs \$5, \$x^2\$"),
        ("~~gone~~ ~=1.2 a\\b `tick`", r"\~\~gone\~\~ \~=1.2 a\\b \`tick\`"),
        ("# heading", r"\# heading"),
        ("#123 and 1.0", "#123 and 1.0"),
        ("1. first", r"1\. first"),
        ("2) second", r"2\) second"),
        ("- item", r"\- item"),
        ("-rc1", "-rc1"),
        ("+ item", r"\+ item"),
        ("> quote", r"\> quote"),
        ("---", r"\---"),
        ("===", r"\==="),
    ],
)
def test_only_what_commonmark_needs_is_escaped(text: str, expected: str) -> None:
    assert escape(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see https://evil%2Eexample/login", "see `https://evil%2Eexample/login`"),
        ("http://3627734734/x", "`http://3627734734/x`"),
        ("mail security@evil.example", "mail `security@evil.example`"),
        ("www.evil.example", "`www.evil.example`"),
        ("http://evil．example/x", "`http://evil．example/x`"),
        ("www。evil。com", "`www。evil。com`"),
        ("www%2Eevil.com", "`www%2Eevil.com`"),
        ("xmpp:bot@evil.example", "`xmpp:bot@evil.example`"),
        ("evil.com/login and vllm.ai", "`evil.com/login` and `vllm.ai`"),
        ("`http://x`", "`` `http://x` ``"),
        ("a|http://x|b", r"a\|`http://x`\|b"),
        # schemaless: a dot and a top-level domain, however the dot or the domain is written
        ("3.com EVIL.CO foo.рф", "`3.com` `EVIL.CO` `foo.рф`"),
        ("evil%2Ecom evil\u2024com", "`evil%2Ecom` `evil\u2024com`"),
        ("//ф.6rooiyr", "`//ф.6rooiyr`"),  # protocol-relative: no top-level domain needed
        # a dot before no letter is no host: versions and license ids stay text
        (
            "v1.2.0-rc1 Apache-2.0 Inc.. 24–25. 1.2.3.4",
            "v1.2.0-rc1 Apache-2.0 Inc.. 24–25. 1.2.3.4",
        ),
    ],
)
def test_link_like_words_become_code_spans(text: str, expected: str) -> None:
    assert escape(text) == expected


def test_every_word_linkify_would_link_is_a_code_span() -> None:
    """The words linkify-it is not asked about (no "//", no dot before a letter) are words it
    would not link: checked against linkify-it itself on words made of the characters that
    make hosts, schemes, dots and their look-alikes."""
    import random
    import unicodedata
    from urllib.parse import unquote

    from linkify_it import LinkifyIt

    linkify = LinkifyIt()
    dots = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})
    chars = "ab.co/:%2E9-@~é\u3002\uff0e\u2024Ⅰªрф中xnK"
    pick = random.Random(32)
    linked = 0
    for _ in range(20000):
        word = "".join(pick.choice(chars) for _ in range(pick.randint(1, 12)))
        probe = unquote(unicodedata.normalize("NFKC", word)).translate(dots)  # as escape reads
        if linkify.test(word) or linkify.test(probe):
            linked += 1
            assert escape(word).startswith("`"), word
    assert linked > 100  # the sample holds links, schemaless and protocol-relative


def test_long_strings_are_capped() -> None:
    text = escape("x" * 5000, limit=50)
    assert len(text) == 50
    assert text.endswith("…")


def test_none_and_empty_render_as_a_dash() -> None:
    assert escape(None) == "—"
    assert escape("   ") == "—"


def test_links_only_to_http_targets_and_target_is_encoded() -> None:
    assert link("x", "javascript:alert(1)") == "x"
    assert link("rel", "https://github.com/o/r/releases/tag/v1 (a)>") == (
        "[rel](<https://github.com/o/r/releases/tag/v1%20%28a%29%3E>)"
    )


def test_terminal_lines_drop_control_characters_without_markdown_escapes() -> None:
    assert one_line("v1.0 | \x1b[2Jcleared\nnext") == "v1.0 | cleared next"
    assert one_line(None) == "—"


def test_terminal_text_drops_escape_sequences_and_keeps_lines() -> None:
    from crawler.untrusted import terminal_text

    hostile = (
        "MIT\x1b]0;owned title\x07 License\r\n"
        "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\ \x1b[31mred\x1b[0m\n"
        "\tindented \x9b2J\x9d0;c1 title\x9c\u202eend"
    )
    assert terminal_text(hostile) == "MIT License\nclick red\n\tindented end"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1. plain words", r"1\. plain words"),
        ("# heading", r"\# heading"),
        ("- item", r"\- item"),
        ("===", r"\==="),
        ("> quoted", r"\> quoted"),
        ("Apache-2.0", "Apache-2.0"),
        ("snake_case _name", r"snake_case \_name"),
        ("new release (v2)", "new release (v2)"),
        ("see example%2Ecom", "see `example%2Ecom`"),
    ],
)
def test_text_with_nothing_to_escape_keeps_its_line_start_escaped(text: str, expected: str) -> None:
    """Plain ASCII text skips the word-by-word pass (CPU, issue 32): a block's opening at the
    line start is still escaped, and a word with a dot, "_" or a percent-encoded dot still
    takes the full pass."""
    assert escape(text) == expected
