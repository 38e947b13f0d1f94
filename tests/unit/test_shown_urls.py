"""One function turns any URL into the form shown and stored (issue 38 item 7): userinfo
removed, secret-looking query values masked; page URLs take credentials from the environment;
a catalog that publishes one is invalid."""

from __future__ import annotations

import pytest

from crawler.config import parse_config
from crawler.config.credentials import config_secrets, credential_warnings, expand_environment
from crawler.export.validate import validate_catalog
from crawler.untrusted import shown_url, url_secrets


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://u:p%40ss@v.example/x?a=1", "https://v.example/x?a=1"),
        ("https://v.example/x?api_key=K1&page=2&Token=T#top", "https://v.example/x?api_key=***&page=2&Token=***#top"),
        ("https://v.example/x?private_token=a&client_secret=b&X-Amz-Signature=c&sig=d",
         "https://v.example/x?private_token=***&client_secret=***&X-Amz-Signature=***&sig=***"),
        ("https://v.example/keys?keyword=a&monkey=b&key=", "https://v.example/keys?keyword=a&monkey=b&key="),
        ("https://v.example/p?token=${VENDOR_TOKEN}", "https://v.example/p?token=***"),
        ("http://[::1/x?password=pw", "http://[::1/x?password=***"),  # does not parse
        ("https://v.example/plain", "https://v.example/plain"),
    ],
)  # fmt: skip
def test_a_url_is_shown_without_its_credentials(url: str, shown: str) -> None:
    assert shown_url(url) == shown


def test_names_a_user_adds_are_masked_too() -> None:
    url = "https://v.example/x?sid=abcdef&lang=en"
    assert shown_url(url) == url
    assert shown_url(url, ["SID"]) == "https://v.example/x?sid=***&lang=en"
    assert url_secrets(url, ["sid"]) == ["abcdef"]


def test_what_is_hidden_is_what_is_redacted() -> None:
    url = "https://user:p%40ssword@v.example/x?api_key=K1234&lang=en&token=${T}&sig=ab"
    # raw and decoded spellings; an environment reference is no secret; three characters
    # or fewer would mask words of every message, so they are left
    assert url_secrets(url) == ["p%40ssword", "p@ssword", "K1234", "user"]


def test_page_urls_take_credentials_from_the_environment() -> None:
    url = "https://${U}:${P}@v.example/x?token=${T}"
    env = {"U": "me@corp", "P": "p/w:1", "T": "tok/1"}
    assert expand_environment(url, env) == "https://me%40corp:p%2Fw%3A1@v.example/x?token=tok/1"
    with pytest.raises(ValueError) as missing:
        expand_environment(url, {"U": "me"})
    assert str(missing.value) == (
        "the URL names ${P}, which is not set in the environment: set it where the audit runs "
        "(never in sources.yaml)"
    )


PAGES = """\
settings: {secret_url_parameters: [sid]}
notify: {urls: ["json://hooks.example/hook/0123456789abcdef"]}
projects:
  - name: A
    homepage: https://a.example/
    pages:
      - {name: written, url: "https://me:pw-12345@v.example/s?sid=S-99887&x=1", pins: {v: 'v(1)'}}
      - {name: from-env, url: "https://v.example/t?token=${TOK}", pins: {v: 'v(1)'}}
"""


def test_check_warns_about_credentials_written_in_sources_yaml() -> None:
    config = parse_config(PAGES)
    assert credential_warnings(config) == [
        "sources.yaml:4: project 'A', page 'written': the URL holds a user name or password, "
        "and sources.yaml is no place for one: write it as "
        "https://${VENDOR_USER}:${VENDOR_PASSWORD}@v.example/… and set those variables where "
        "the audit runs (it is shown and stored without them either way)",
        "sources.yaml:4: project 'A', page 'written': the URL holds a secret-looking value "
        "(https://v.example/s?sid=***&x=1): write it as ${VENDOR_TOKEN} (any variable name) and "
        "set that variable where the audit runs",
    ]
    assert sorted(config_secrets(config, {"TOK": "tok-from-env"})) == sorted(
        ["0123456789abcdef", "S-99887", "pw-12345", "tok-from-env"]
    )


def test_a_catalog_that_publishes_a_credential_is_invalid() -> None:
    catalog = {"projects": [{"evidence": [{"url": "https://v.example/x?api_key=K1"}]}]}
    problems = [str(p) for p in validate_catalog(catalog) if "credential" in str(p)]
    assert problems == [
        '$.projects[0].evidence[0].url: "https://v.example/x?api_key=***" holds a credential (a '
        "user name or password, or a secret-looking query value): publish the link without it"
    ]
