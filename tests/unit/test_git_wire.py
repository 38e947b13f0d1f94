"""Git's smart HTTP answers read by crawler/upstream/sources/git/wire.py, hostile ones above
all: a git server is upstream and untrusted, so an answer that lies about its refs, sends more
objects than were asked for, or a pack that would inflate past any file we read is refused
with a short message before it costs memory. Packs are written by dulwich's own writer."""

from __future__ import annotations

from io import BytesIO

import pytest
from dulwich.object_format import DEFAULT_OBJECT_FORMAT
from dulwich.objects import Blob, Commit, ShaFile, Tree
from dulwich.pack import write_pack_objects
from dulwich.protocol import pkt_line

from crawler.upstream.sources.git import wire

SHA = "a" * 40


def _pack(*objects: ShaFile, deltify: bool = False) -> bytes:
    out = BytesIO()
    write_pack_objects(out.write, list(objects), DEFAULT_OBJECT_FORMAT, deltify=deltify)
    return out.getvalue()


def _answer(pack: bytes) -> bytes:
    """A v2 fetch answer: a shallow-info section, then the packfile on side-band channel 1."""
    chunks = [pkt_line(b"\x01" + pack[i : i + 65000]) for i in range(0, len(pack), 65000)]
    return b"".join([pkt_line(b"shallow-info\n"), pkt_line(f"shallow {SHA}\n".encode()),
                     b"0001", pkt_line(b"packfile\n"), *chunks, b"0000"])  # fmt: skip


def _commit(when: int) -> Commit:
    commit = Commit()
    commit.tree = Tree().id
    commit.author = commit.committer = b"Dev <dev@example.org>"
    commit.author_time = commit.commit_time = when
    commit.author_timezone = commit.commit_timezone = 0
    commit.message = b"change\n"
    return commit


def test_a_v0_advertisement_gives_head_its_branch_and_peeled_tags() -> None:
    body = b"".join([
        pkt_line(b"# service=git-upload-pack\n"), b"0000",
        pkt_line(f"{'1' * 40} HEAD\0multi_ack symref=HEAD:refs/heads/trunk agent=x\n".encode()),
        pkt_line(f"{'1' * 40} refs/heads/trunk\n".encode()),
        pkt_line(f"{'2' * 40} refs/pull/7/head\n".encode()),
        pkt_line(f"{'3' * 40} refs/tags/v1.0\n".encode()),
        pkt_line(f"{'1' * 40} refs/tags/v1.0^{{}}\n".encode()),
        pkt_line(f"{'4' * 40} refs/tags/v0.9\n".encode()), b"0000",
    ])  # fmt: skip
    advert = wire.advertisement(body)
    assert advert.version == 0 and advert.refs is not None
    assert (advert.refs.head, advert.refs.head_target) == ("1" * 40, "trunk")
    assert advert.refs.tags == {"v1.0": ("3" * 40, "1" * 40), "v0.9": ("4" * 40, "4" * 40)}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "the answer is cut short or malformed (HangupException)"),
        (b"0000", "the ref advertisement is empty"),
        (pkt_line(b"ERR access denied\n") + b"0000", "the server said: access denied"),
        (pkt_line(b"HEAD\n") + b"0000", "a ref line is not '<object id> <name>'"),
        (pkt_line(b"nothex HEAD\0caps\n") + b"0000", "ref 'HEAD' has no object id"),
        (b"00ffcut", "the answer is cut short or malformed (GitProtocolError)"),
        (b"-001" + b"x" * 10, "the answer is cut short or malformed (GitProtocolError)"),
    ],
)
def test_a_malformed_advertisement_is_refused(body: bytes, message: str) -> None:
    with pytest.raises(wire.WireError) as caught:
        wire.advertisement(body)
    assert str(caught.value) == message


def test_ls_refs_reads_symref_and_peeled_attributes() -> None:
    body = b"".join([
        pkt_line(f"{'1' * 40} HEAD symref-target:refs/heads/main\n".encode()),
        pkt_line(f"{'5' * 40} refs/tags/v2.0 peeled:{'1' * 40}\n".encode()), b"0000",
    ])  # fmt: skip
    listing = wire.ls_refs(body)
    assert (listing.head, listing.head_target, listing.tags) == (
        "1" * 40, "main", {"v2.0": ("5" * 40, "1" * 40)},
    )  # fmt: skip


def test_a_fetch_answer_gives_the_objects_asked_for() -> None:
    first, second = _commit(1_767_000_000), _commit(1_768_000_000)
    found = wire.fetch_answer(_answer(_pack(first, second)), 2)
    assert sorted(o.id for o in found) == sorted([first.id, second.id])
    blob = Blob.from_string(b"MIT License\n" * 2000)
    edited = Blob.from_string(b"MIT License\n" * 2000 + b"extra\n")
    deltas = wire.fetch_answer(_answer(_pack(blob, edited, deltify=True)), 2)
    assert {o.id: o.as_raw_string() for o in deltas} == {
        blob.id: blob.data, edited.id: edited.data,
    }  # fmt: skip


def test_a_pack_with_more_objects_than_asked_for_is_refused() -> None:
    pack = _pack(_commit(1), _commit(2), _commit(3))
    with pytest.raises(wire.WireError, match=r"^the packfile holds 3 objects; 1 were asked for$"):
        wire.fetch_answer(_answer(pack), 1)


def test_an_object_larger_than_any_we_read_is_refused_before_its_delta_is_applied() -> None:
    big = Blob.from_string(b"0123456789abcdef" * (wire.MAX_OBJECT // 16 + 1))
    with pytest.raises(wire.WireError, match=r"^an object of 4194320 bytes: larger than any"):
        wire.fetch_answer(_answer(_pack(big)), 1)
    base = Blob.from_string(b"x" * 1000)
    grown = Blob.from_string(b"x" * 1000 * 5000)  # a delta: copy the base 5,000 times
    with pytest.raises(wire.WireError, match=r"^an object of 5000000 bytes: larger than any"):
        wire.fetch_answer(_answer(_pack(base, grown, deltify=True)), 2)


def test_a_damaged_or_missing_packfile_is_refused() -> None:
    pack = _pack(_commit(1))
    damaged = pack[:-25] + bytes([pack[-25] ^ 0xFF]) + pack[-24:]
    with pytest.raises(wire.WireError, match=r"^the packfile is damaged \(ChecksumMismatch\)$"):
        wire.fetch_answer(_answer(damaged), 1)
    with pytest.raises(wire.WireError, match=r"^the packfile is not one"):
        wire.fetch_answer(_answer(pack[:10]), 1)
    no_pack = pkt_line(b"shallow-info\n") + b"0001" + b"0000"
    with pytest.raises(wire.WireError, match=r"^the fetch answer has no packfile$"):
        wire.fetch_answer(no_pack, 1)
    failed = pkt_line(b"packfile\n") + pkt_line(b"\x03upload-pack: out of memory\n") + b"0000"
    with pytest.raises(wire.WireError, match=r"^the server failed: upload-pack: out of memory$"):
        wire.fetch_answer(failed, 1)
