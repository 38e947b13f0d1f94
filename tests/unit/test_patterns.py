"""User patterns (pins, tag_pattern) run on untrusted text with a time limit (issue 9 item 2).

``(a|aa)+$`` on 38 a's and a b backtracks through tens of millions of paths: tens of seconds
with ``re``, cut off after ``MATCH_TIMEOUT`` (1 s) here."""

from __future__ import annotations

import pytest

from crawler.analysis.pages import ExtractionError, read_page
from crawler.config import ConfigError, PageSpec, ProjectSpec, parse_config
from crawler.model import Tag
from crawler.versions import usable_tags

CATASTROPHIC = r"(a|aa)+$"
SLOW_TEXT = "a" * 38 + "b"


def test_a_pin_that_backtracks_for_ever_is_an_error_naming_it() -> None:
    spec = PageSpec(name="p", url="https://x/p.html", pins={"runaway": CATASTROPHIC})
    with pytest.raises(ExtractionError) as exc:
        read_page(spec, f"<p>{SLOW_TEXT}</p>", "text/html", "https://x/p.html")
    assert str(exc.value) == (
        "pin 'runaway': pattern '(a|aa)+$' took more than 1s on the page text (39 characters): "
        "it backtracks too much; simplify it (avoid nested quantifiers such as (a+)+)"
    )


def test_a_tag_pattern_that_backtracks_for_ever_raises_pattern_timeout() -> None:
    from crawler.patterns import PatternTimeout

    spec = ProjectSpec(name="x", repo="o/x", tag_pattern=CATASTROPHIC)
    tags = [Tag("v1.0", "1" * 40, None), Tag(SLOW_TEXT, "2" * 40, None)]
    with pytest.raises(PatternTimeout) as exc:
        usable_tags(spec, tags)
    assert isinstance(exc.value, ValueError)  # the lead's per-project handler catches these
    assert exc.value.pattern == CATASTROPHIC
    assert str(exc.value) == (
        f"pattern '(a|aa)+$' took more than 1s on tag '{SLOW_TEXT}': it backtracks too much; "
        "simplify it (avoid nested quantifiers such as (a+)+)"
    )


def test_pins_scan_a_capped_text_and_a_pin_beyond_the_cap_is_an_error() -> None:
    spec = PageSpec(name="p", url="https://x/p.html", pins={"sdk": r"SDK (\d+\.\d+)"})
    early = "<p>SDK 5.1</p><p>" + "filler " * 300 + "</p>"
    late = "<p>" + "filler " * 300 + "</p><p>SDK 5.1</p>"
    assert read_page(spec, early, "text/html", "u", pin_text_limit=1000).pins == (
        ("sdk", "5.1"),
    )
    with pytest.raises(ExtractionError) as exc:
        read_page(spec, late, "text/html", "u", pin_text_limit=1000)
    assert str(exc.value) == (
        "pin 'sdk': not found in the first 1,000 characters of the page text (2,107 in all): "
        "raise settings.pin_text_limit in sources.yaml if the page is legitimate"
    )
    # within the default cap (1,000,000 characters) the same page pins as before
    assert read_page(spec, late, "text/html", "u").pins == (("sdk", "5.1"),)


def test_patterns_are_checked_at_load_by_the_engine_that_runs_them() -> None:
    text = "projects:\n  - name: a\n    repo: o/r\n    tag_pattern: '^v(\\d'\n"
    with pytest.raises(ConfigError) as exc:
        parse_config(text, "sources.yaml")
    # shown as written in sources.yaml: one backslash, not repr's two (issue 22)
    assert str(exc.value) == (
        "sources.yaml:4: project 'a': tag_pattern '^v(\\d' is not a valid "
        "regular expression: missing ) at position 5"
    )
    settings = "settings: {pin_text_limit: 5000, request_deadline: 20}\nprojects: []\n"
    config = parse_config(settings)
    assert (config.settings.pin_text_limit, config.settings.request_deadline) == (5000, 20.0)
