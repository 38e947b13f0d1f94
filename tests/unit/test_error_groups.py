"""Errors grouped by cause (crawler.report.words.error_groups): what differs from project to
project (seconds waited, the last project tried) is not part of the cause; a project tried is
told apart from one not attempted. Guards the offline night listed one error per project."""

from __future__ import annotations

from crawler.report import words

API = "https://api.github.com/repos/org/{}"


def test_the_same_cause_with_different_waits_is_one_group_and_not_attempted_another() -> None:
    errors = [
        ("A", API.format("a"), "no answer from GitHub: connection refused (ConnectionError) "
                               "(gave up after 4 attempts, 8.7s of waiting)"),
        ("B", API.format("b"), "no answer from GitHub: connection refused (ConnectionError) "
                               "(gave up after 4 attempts, 9.1s of waiting)"),
        ("C", API.format("c"), "not attempted: GitHub unreachable (3 projects in a row got no "
                               "answer; last: no answer from GitHub: connection refused "
                               "(ConnectionError) (gave up after 4 attempts, 9.1s of waiting))"),
        ("D", API.format("d"), "not attempted: GitHub unreachable (3 projects in a row got no "
                               "answer; last: no answer from GitHub: connection refused "
                               "(ConnectionError) (gave up after 4 attempts, 8.7s of waiting))"),
    ]  # fmt: skip
    groups = words.error_groups(errors)
    assert [words.error_group_line(g) for g in groups] == [
        "2 projects tried and failed: could not reach api.github.com: connection refused — A, B",
        "2 projects not attempted: could not reach api.github.com: connection refused — C, D",
    ]
    assert words.read_state(groups) == {
        "A": words.TRIED, "B": words.TRIED, "C": words.NOT_ATTEMPTED, "D": words.NOT_ATTEMPTED
    }  # fmt: skip


def test_other_sources_dns_and_distinct_errors() -> None:
    gitee = "https://gitee.com/api/v5/repos/o/{}"
    errors = [
        ("A", gitee.format("a"), "no answer from Gitee: the name gitee.com does not resolve "
                                 "(DNS lookup failed)"),
        ("B", gitee.format("b"), "not attempted: Gitee unreachable (3 requests in a row got no "
                                 "answer)"),
        ("C", API.format("c"), "HTTP 404 from GitHub for org/c"),
        ("D", API.format("d"), "HTTP 404 from GitHub for org/d"),
        ("D", API.format("d"), "HTTP 404 from GitHub for org/d"),  # named once
    ]  # fmt: skip
    groups = words.error_groups(errors)
    assert [(g.cause, g.attempted, g.projects) for g in groups] == [
        ("could not reach gitee.com: the name gitee.com does not resolve (DNS lookup failed)",
         True, ("A",)),
        ("could not reach gitee.com: no answer", False, ("B",)),
        ("HTTP 404 from GitHub for org/c", True, ("C",)),
        ("HTTP 404 from GitHub for org/d", True, ("D",)),
    ]  # fmt: skip


def test_a_long_list_of_projects_is_counted_past_the_cap() -> None:
    assert words.named(["A", "B", "C", "D"], 2) == "A, B and 2 more"
    assert words.named(["A", "B"], 2) == "A, B"
