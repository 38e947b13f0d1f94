"""Upstream strings are attacker-controlled: nothing they contain may break the report."""

from __future__ import annotations

from crawler.report.markdown import escape, link


def test_pipe_newline_and_html_cannot_break_a_table_row() -> None:
    hostile = "v1.0 | <script>alert(1)</script>\n| injected | row |"
    assert escape(hostile) == (r"v1\.0 \| \<script\>alert\(1\)\</script\> \| injected \| row \|")


def test_markdown_link_and_image_syntax_is_neutralised() -> None:
    assert escape("[click](https://evil.example) ![x](y)") == (
        r"\[click\]\(https://evil\.example\) \!\[x\]\(y\)"
    )


def test_control_and_bidi_characters_are_removed() -> None:
    assert escape("a\x00b\x1b[31mc\u202eevil") == r"a b \[31mc evil"


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
    from crawler.report.markdown import one_line

    assert one_line("v1.0 | \x1b[2Jcleared\nnext") == "v1.0 | [2Jcleared next"
    assert one_line(None) == "—"
