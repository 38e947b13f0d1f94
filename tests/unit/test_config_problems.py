"""Every problem of a sources.yaml in one run, each at the line of the key at fault and in the
crawler's own words (``FILE:LINE: what is wrong (did you mean …?)``).

Guards the defect where validation stopped at the first section or project with an error,
cited a nested key at the line where its project starts, and showed the validation library's
wording (``Input should be …``, ``pages.0.tables.0.integrations``, ``Value error, ``)."""

from __future__ import annotations

import pytest

from crawler.config import ConfigError, parse_config


def _problems(text: str) -> list[str]:
    """The problems said, one a line (ConfigError.problems holds the same lines)."""
    with pytest.raises(ConfigError) as info:
        parse_config(text, "sources.yaml")
    return str(info.value).splitlines()


BROKEN = (
    "settings:\n"  # 1
    "  request_deadlin: 3\n"  # 2
    "  timeout: -1\n"  # 3
    "github: {max_retry: 3}\n"  # 4
    "projcts: []\n"  # 5
    "projects:\n"  # 6
    "  - name: A\n"  # 7
    "    repo: o/r\n"  # 8
    "    trak: tags\n"  # 9
    "    layer: compilers\n"  # 10
    "  - name: B\n"  # 11
    "    note: a project whose source key is wrong\n"  # 12
    "    repo: 'not a repo'\n"  # 13
    "  - name: C\n"  # 14
    "    repo: o/c\n"  # 15
    "    pages:\n"  # 16
    "      - name: support\n"  # 17
    "        url: https://c.example/\n"  # 18
    "        tables:\n"  # 19
    "          - name: matrix\n"  # 20
    "            key: [Op]\n"  # 21
    "            integrations:\n"  # 22
    "              platform: Backend\n"  # 23
    "              status: State\n"  # 24
    "              layer: serving\n"  # 25
    "              colour: x\n"  # 26
    "            status_map:\n"  # 27
    "              'yes': upstrem\n"  # 28
    "  - name: D\n"  # 29
    "    part_of: Nope\n"  # 30
)


def test_every_problem_of_every_section_is_said_in_one_run_in_file_order() -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(BROKEN)
    assert list(getattr(info.value, "problems", ())) == _problems(BROKEN)
    assert _problems(BROKEN) == [
        "sources.yaml:2: settings: unknown key 'request_deadlin' "
        "(did you mean 'request_deadline'?)",
        "sources.yaml:3: settings: timeout: -1 is too small: it must be more than 0.0",
        "sources.yaml:4: github: unknown key 'max_retry' (did you mean 'max_retries'?)",
        "sources.yaml:5: unknown top-level key 'projcts' (did you mean 'projects'?)",
        "sources.yaml:9: project 'A': unknown key 'trak' (did you mean 'track'?)",
        "sources.yaml:10: project 'A': layer: 'compilers' is not one of 'framework', "
        "'compiler', 'kernel programming', 'kernel library', 'serving', 'distributed "
        "serving', 'platform sdk' (did you mean 'compiler'?)",
        "sources.yaml:13: project 'B': repo 'not a repo' must look like 'owner/name'",
        "sources.yaml:26: project 'C': page 'support', table 'matrix': integrations: unknown "
        "key 'colour' (known: project, platform, status, platform_columns, version, "
        "layer, pins)",
        "sources.yaml:28: project 'C': page 'support', table 'matrix': status_map.yes: "
        "'upstrem' is not one of 'upstream', 'official plugin', 'vendor integration', "
        "'community plugin', 'in progress', 'unverified' (did you mean 'upstream'?)",
        "sources.yaml:30: project 'D': part_of 'Nope' names no item of this file: add that "
        "item or fix the name",
    ]


def test_a_nested_key_is_cited_at_its_own_line() -> None:
    """A table's mapping key, a page's key and a project's source options: the line of the
    key itself, not of the project's `- name:`."""
    text = (
        "projects:\n"  # 1
        "  - name: Kit\n"  # 2
        "    repo: o/kit\n"  # 3
        "    pages:\n"  # 4
        "      - name: support\n"  # 5
        "        url: https://kit.example/\n"  # 6
        "        tables:\n"  # 7
        "          - name: ops\n"  # 8
        "            key: [Op]\n"  # 9
        "            integrations:\n"  # 10
        "              platform: Backend\n"  # 11
        "              status: State\n"  # 12
        "              layr: serving\n"  # 13
        "            status_map: {'yes': upstream}\n"  # 14
        "      - name: notes\n"  # 15
        "        url: https://kit.example/notes\n"  # 16
        "        tabels: []\n"  # 17
        "  - name: Lab\n"  # 18
        "    note: on a GitLab\n"  # 19
        "    gitlab_url: https://gitlab.example/\n"  # 20
    )
    assert _problems(text) == [
        "sources.yaml:10: project 'Kit': page 'support', table 'ops': integrations: 'layer' "
        "is missing: add it",
        "sources.yaml:13: project 'Kit': page 'support', table 'ops': integrations: unknown "
        "key 'layr' (did you mean 'layer'?)",
        "sources.yaml:17: project 'Kit': page 'notes': unknown key 'tabels' "
        "(did you mean 'tables'?)",
        "sources.yaml:20: project 'Lab': gitlab_url only applies with 'gitlab:' (a GitLab "
        "project)",
    ]


def test_the_validation_librarys_wording_never_reaches_the_reader() -> None:
    text = (
        "schedule: {timezone: Mars/Olympus}\n"  # 1
        "settings: {per_host_concurrency: many, allow_private_addresses: maybe}\n"  # 2
        "projects:\n"  # 3
        "  - name: A\n"  # 4
        "    repo: o/a\n"  # 5
        "    snapshot: perhaps\n"  # 6
        "    track: newest\n"  # 7
        "    prereleases: exclud\n"  # 8
    )
    problems = _problems(text)
    assert problems == [
        "sources.yaml:1: schedule: timezone 'Mars/Olympus' is not an IANA time zone name such "
        "as 'Europe/Berlin' or 'UTC'",
        "sources.yaml:2: settings: allow_private_addresses: must be true or false, not 'maybe'",
        "sources.yaml:2: settings: per_host_concurrency: must be a whole number, not 'many'",
        "sources.yaml:6: project 'A': snapshot: must be true or false, not 'perhaps'",
        "sources.yaml:7: project 'A': track: 'newest' is not one of 'auto', 'releases', "
        "'tags', 'commits'",
        "sources.yaml:8: project 'A': prereleases: 'exclud' is not one of 'include', "
        "'exclude' (did you mean 'exclude'?)",
    ]
    for words in ("Input should", "Value error", "validation error", "pydantic", ".0."):
        assert not any(words in problem for problem in problems), words


def test_a_part_of_naming_an_entry_with_its_own_problem_is_not_also_unknown() -> None:
    """The host's problem is said once; the rider is not told that its host does not exist."""
    text = (
        "projects:\n  - name: Host\n    repo: o/h\n    trak: tags\n"
        "  - name: Rider\n    part_of: Host\n"
    )
    assert _problems(text) == [
        "sources.yaml:4: project 'Host': unknown key 'trak' (did you mean 'track'?)"
    ]


def test_a_catalog_with_very_many_problems_lists_the_first_hundred_and_counts_the_rest() -> None:
    text = "projects:\n" + "".join(f"  - name: p{i}\n    trak: x\n" for i in range(150))
    problems = _problems(text)
    assert len(problems) == 101
    assert problems[0] == "sources.yaml:3: project 'p0': unknown key 'trak' (did you mean 'track'?)"
    assert problems[-2] == (
        "sources.yaml:201: project 'p99': unknown key 'trak' (did you mean 'track'?)"
    )
    assert problems[-1] == "sources.yaml: and 50 more problems"
    with pytest.raises(ConfigError) as info:
        parse_config(text)
    assert info.value.total == 150  # `check` says how many in all


def test_an_entry_that_is_not_a_mapping_is_cited_at_its_own_line() -> None:
    text = "projects:\n  - name: a\n    repo: o/a\n  - just a string\n  - 3\n"
    assert _problems(text) == [
        "sources.yaml:4: projects[1] must be a mapping with a 'name'",
        "sources.yaml:5: projects[2] must be a mapping with a 'name'",
    ]


def test_a_wrong_source_key_does_not_hide_the_entrys_other_problems() -> None:
    """A project's `repo:` (or a page's `gitee:`) is read before the entry's other keys: its
    error used to be the only one said for the entry."""
    text = (
        "projects:\n"  # 1
        "  - name: B\n"  # 2
        "    repo: 'not a repo'\n"  # 3
        "    pypi: ok-pkg\n"  # 4
        "    snapshot: maybe\n"  # 5
        "  - name: L\n"  # 6
        "    gitlab_url: https://g.example/\n"  # 7
        "    trak: x\n"  # 8
        "    pages:\n"  # 9
        "      - name: readme\n"  # 10
        "        gitee: 'bad'\n"  # 11
        "        path: README.md\n"  # 12
        "        text: main\n"  # 13
        "        tabels: []\n"  # 14
    )
    assert _problems(text) == [
        "sources.yaml:3: project 'B': repo 'not a repo' must look like 'owner/name'",
        "sources.yaml:5: project 'B': snapshot: must be true or false, not 'maybe'",
        "sources.yaml:7: project 'L': gitlab_url only applies with 'gitlab:' (a GitLab project)",
        "sources.yaml:8: project 'L': unknown key 'trak' (did you mean 'track'?)",
        "sources.yaml:11: project 'L': page 'readme': gitee 'bad' must look like 'owner/repo' "
        "(as in https://gitee.com/owner/repo)",
        "sources.yaml:14: project 'L': page 'readme': unknown key 'tabels' "
        "(did you mean 'tables'?)",
    ]


def test_a_value_of_either_form_is_told_the_problem_of_the_form_it_is_written_in() -> None:
    """`text:` is a CSS selector or `{heading: …}`: a mapping is not also told it must be
    text, and a key misspelt inside it is answered from the mapping's own keys."""
    page = (
        "projects:\n  - name: a\n    repo: o/a\n    pages:\n      - name: p\n"
        "        url: https://x.example/\n"  # 6
    )
    assert _problems(page + "        text: {heading: ''}\n") == [
        "sources.yaml:7: project 'a': page 'p': text.heading: must not be empty"
    ]
    assert _problems(page + "        text: {headng: x}\n") == [
        "sources.yaml:7: project 'a': page 'p': text: 'heading' is missing: add it",
        "sources.yaml:7: project 'a': page 'p': text: unknown key 'headng' "
        "(did you mean 'heading'?)",
    ]


def test_a_key_said_twice_is_one_problem_among_the_others() -> None:
    """A duplicate key stopped the reading: the rest of the file went unchecked."""
    text = (
        "projects:\n"  # 1
        "  - name: a\n"  # 2
        "    repo: o/r\n"  # 3
        "    repo: o/s\n"  # 4
        "    trak: x\n"  # 5
        "settings: {timeout: 3}\n"  # 6
        "settings: {timeout: 4}\n"  # 7
    )
    assert _problems(text) == [
        "sources.yaml:4: duplicate key 'repo' (first at line 3): remove one of them",
        "sources.yaml:5: project 'a': unknown key 'trak' (did you mean 'track'?)",
        "sources.yaml:7: duplicate key 'settings' (first at line 6): remove one of them",
    ]
