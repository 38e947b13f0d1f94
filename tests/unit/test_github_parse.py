"""GitHub JSON is untrusted input: wrong shapes are clear errors, long strings are capped."""

from __future__ import annotations

import base64
import json

import msgspec
import pytest

from crawler.model import Release
from crawler.upstream.sources.github import graphql_shapes as shapes
from crawler.upstream.sources.github import parse


def test_wrong_shapes_raise_shape_errors_naming_the_field() -> None:
    with pytest.raises(parse.ShapeError, match="missing field 'id'"):
        parse.repo_from_rest({"full_name": "o/r"})
    with pytest.raises(parse.ShapeError, match="release entry is not an object"):
        parse.releases_from_rest(["v1"])
    with pytest.raises(parse.ShapeError, match=r"missing field 'commit\.sha'"):
        parse.tags_from_rest([{"name": "v1", "commit": "abc"}], "https://ghe.example/o/r")
    with pytest.raises(parse.ShapeError, match="commit list is empty"):
        parse.commit_from_rest([])
    with pytest.raises(parse.ShapeError, match="tree is not a list"):
        parse.inventory_from_tree({"tree": {"path": "LICENSE"}})


def test_release_names_and_tags_are_capped() -> None:
    [release] = parse.releases_from_rest(
        [{"tag_name": "v" * 5000, "name": "n" * 5000, "html_url": "https://x"}]
    )
    assert (len(release.tag), len(release.name or "")) == (300, 300)
    assert release.tag.endswith("…")


def test_license_file_is_decoded_without_bom_and_with_replacement() -> None:
    raw = "\ufeffMIT License\n".encode() + b"\xff\n"
    content = base64.encodebytes(raw).decode()
    license_file, verdict = parse.license_file_from_rest(
        {
            "path": "LICENSE",
            "sha": "abc",
            "html_url": "https://h",
            "content": content,
            "license": {"key": "mit", "spdx_id": "MIT", "name": "MIT License"},
        }
    )
    assert license_file.text == "MIT License\n\ufffd\n"
    assert (verdict.key, verdict.spdx_id) == ("mit", "MIT")


def test_a_decoded_tree_gives_the_inventory_json_gives() -> None:
    """decode_tree keeps only path, type and sha of each entry: the inventory is the one the
    whole JSON gives, URLs, submodules, sub-trees and test data included."""
    body = json.dumps({
        "sha": "f" * 40, "url": "https://api.github.com/x", "truncated": False,
        "tree": [
            {"path": "LICENSE", "mode": "100644", "type": "blob", "sha": "1", "url": "u"},
            {"path": "NOTICE", "mode": "100644", "type": "blob", "sha": "2", "size": 9},
            {"path": "licenses", "mode": "040000", "type": "tree", "sha": "3"},
            {"path": "third_party/LICENSE", "mode": "160000", "type": "commit", "sha": "4"},
            {"path": "tests/data/COPYING", "mode": "100644", "type": "blob", "sha": "5"},
            {"path": "vendor/x/COPYING.txt", "mode": "100644", "type": "blob", "sha": "6"},
            {"path": "src/copyright.py", "mode": "100644", "type": "blob", "sha": "7"},
        ],
    })  # fmt: skip
    decoded = parse.decode_tree(body)
    assert [type(e) for e in decoded["tree"]] == [parse.TreeEntry] * 7
    repo = "https://github.com/o/r"
    inventory = parse.inventory_from_tree(decoded, repo, "main")
    assert inventory == parse.inventory_from_tree(json.loads(body), repo, "main")
    assert [(e.path, e.blob_sha, e.url) for e in inventory] == [
        ("LICENSE", "1", "https://github.com/o/r/blob/main/LICENSE"),
        ("NOTICE", "2", "https://github.com/o/r/blob/main/NOTICE"),
        ("vendor/x/COPYING.txt", "6", "https://github.com/o/r/blob/main/vendor/x/COPYING.txt"),
    ]


def test_a_tree_of_another_shape_is_read_as_json_was() -> None:
    """An entry decode_tree cannot type (not an object, a number for a path, a null sha) sends
    the whole answer through json.loads: the inventory reads it as before, an answer that is
    not an object is left for the API's shape check, and one that is not JSON is a ValueError
    (the API's "not JSON" answer, retried)."""
    odd = json.dumps({"tree": [
        "LICENSE", {"path": 7, "type": "blob"}, {"path": "COPYING", "type": "blob", "sha": None},
        {"path": "NOTICE", "type": "blob", "sha": "n"},
    ]})  # fmt: skip
    decoded = parse.decode_tree(odd)
    assert decoded == json.loads(odd)
    assert [(e.path, e.blob_sha) for e in parse.inventory_from_tree(decoded)] == [
        ("COPYING", "None"), ("NOTICE", "n"),
    ]  # fmt: skip
    assert parse.decode_tree('[{"path": "LICENSE"}]') == [{"path": "LICENSE"}]
    with pytest.raises(parse.ShapeError, match="missing field 'tree'"):
        parse.inventory_from_tree(parse.decode_tree('{"sha": "1"}'))
    with pytest.raises(ValueError):
        parse.decode_tree('{"tree": [{"path": "LICENSE", "type": "bl')


def test_graphql_tags_peel_annotated_tags_to_their_commit() -> None:
    node = {
        "refs": {
            "nodes": [
                {
                    "name": "v2",
                    "target": {"oid": "tagobj", "target": {"oid": "c2", "committedDate": "D2"}},
                },
                {"name": "v1", "target": {"oid": "c1", "committedDate": "D1"}},
            ]
        }
    }
    refs = msgspec.convert(node["refs"], shapes.Refs)
    tags = parse.tags_from_graphql(refs, "https://ghe.example/o/r")
    assert [(t.name, t.sha, t.date, t.url) for t in tags] == [
        ("v2", "c2", "D2", "https://ghe.example/o/r/releases/tag/v2"),
        ("v1", "c1", "D1", "https://ghe.example/o/r/releases/tag/v1"),
    ]


def test_only_license_ish_blobs_enter_the_inventory() -> None:
    tree = {
        "tree": [
            {"path": "LICENSE", "type": "blob", "sha": "1"},
            {"path": "third_party/x/COPYING.txt", "type": "blob", "sha": "2"},
            {"path": "examples/ep/LICENSE-DeepEP", "type": "blob", "sha": "3"},
            {"path": "src/license.py", "type": "blob", "sha": "4"},
            {"path": "licenses", "type": "tree", "sha": "5"},
            {"path": "NOTICE", "type": "blob", "sha": "6"},
        ]
    }
    assert [(e.path, e.blob_sha) for e in parse.inventory_from_tree(tree)] == [
        ("LICENSE", "1"),
        ("NOTICE", "6"),
        ("examples/ep/LICENSE-DeepEP", "3"),
        ("third_party/x/COPYING.txt", "2"),
    ]
    linked = parse.inventory_from_tree(tree, "https://ghe.example/o/r", "release/v1")
    assert [e.url for e in linked] == [
        "https://ghe.example/o/r/blob/release/v1/LICENSE",
        "https://ghe.example/o/r/blob/release/v1/NOTICE",
        "https://ghe.example/o/r/blob/release/v1/examples/ep/LICENSE-DeepEP",
        "https://ghe.example/o/r/blob/release/v1/third_party/x/COPYING.txt",
    ]
    assert isinstance(Release, type)
