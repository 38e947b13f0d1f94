"""Git's smart HTTP protocol, the bytes on the wire: what we send and what the answers say.
Pure (no I/O); the pkt-lines, the ref listings and the packfile are read by dulwich.

* The ref advertisement (``GET info/refs?service=git-upload-pack``): protocol v0/v1 lists every
  ref at once (the first line carries the capabilities, ``symref=HEAD:refs/heads/main`` among
  them; an annotated tag is followed by its ``^{}`` peeled line); a v2 server lists its
  capabilities only (``version 2``, ``ls-refs``, ``fetch=shallow filter``), and the refs are
  asked for with ``ls-refs`` (only HEAD and the tags, peeled, with HEAD's symref target).
* A v2 ``fetch`` of named objects, ``deepen 1`` (no history) and ``filter tree:0`` (no trees
  or blobs but those named): a few hundred bytes a commit. The answer's sections
  (``shallow-info``, ``packfile``…) are pkt-lines; the packfile comes on side-band channel 1.

Errors are WireError with a short message; nothing of the answer is quoted but the server's
own ``ERR`` line, capped.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from io import BytesIO
from typing import TYPE_CHECKING, Any

from crawler.upstream.answers import ShapeError, cap

if TYPE_CHECKING:
    from dulwich.objects import ShaFile
    from dulwich.protocol import Protocol

ADVERTISEMENT = "application/x-git-upload-pack-advertisement"
RESULT = "application/x-git-upload-pack-result"
REQUEST = "application/x-git-upload-pack-request"
HEAD = b"HEAD"
TAGS = b"refs/tags/"
HEADS = b"refs/heads/"
MAX_MESSAGE = 200
MAX_OBJECT = 4 * 2**20  # bytes of one commit, tree or file once inflated: far more than ours


class WireError(ShapeError):
    """An answer that is not what git's protocol says it is (cut short, malformed, an ERR)."""


@dataclass(frozen=True)
class Advertisement:
    """What ``info/refs`` said: a v2 server's capabilities, or a v0 server's refs too."""

    version: int  # 0 (v0 and v1 read the same here) or 2
    capabilities: frozenset[bytes]
    refs: RefListing | None = None  # v0: every ref; v2: asked for with ls-refs


@dataclass(frozen=True)
class RefListing:
    head: str | None  # HEAD's commit (None: an empty repository)
    head_target: str | None  # the branch HEAD points at: "main"
    tags: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (object, commit)


def _protocol(body: bytes) -> Protocol:
    from dulwich.protocol import Protocol

    return Protocol(BytesIO(body).read, lambda _data: None)


def _packets(proto: Protocol) -> Iterator[bytes]:
    """The pkt-lines up to the next flush or delimiter; a line cut short is a WireError."""
    from dulwich.errors import GitProtocolError

    try:
        yield from proto.read_pkt_seq()
    except GitProtocolError as exc:  # HangupException included: the body ended mid-answer
        raise WireError(f"the answer is cut short or malformed ({type(exc).__name__})") from None


def _err(line: bytes) -> None:
    if line.startswith(b"ERR "):
        said = cap(line[4:].decode("utf-8", "replace").strip(), MAX_MESSAGE)
        raise WireError(f"the server said: {said}")


def advertisement(body: bytes) -> Advertisement:
    """The answer to ``info/refs?service=git-upload-pack`` (its content type checked by the
    caller). A v0 listing without any ref (an empty repository) is an advertisement too."""
    proto = _protocol(body)
    first = list(_packets(proto))
    if first and first[0].rstrip(b"\n") == b"# service=git-upload-pack":
        if len(first) != 1:
            raise WireError("the service line is not followed by a flush")
        first = list(_packets(proto))  # v0 refs, or "version 2" and the capabilities
    if not first:
        raise WireError("the ref advertisement is empty")
    _err(first[0])
    if first[0].rstrip(b"\n") == b"version 2":
        return Advertisement(2, frozenset(line.rstrip(b"\n") for line in first[1:]))
    return _v0(first)


def _v0(lines: list[bytes]) -> Advertisement:
    from dulwich.client import read_pkt_refs_v1
    from dulwich.errors import GitProtocolError
    from dulwich.protocol import parse_capability, split_peeled_refs

    try:
        refs, capabilities = read_pkt_refs_v1(lines)
    except (GitProtocolError, ValueError):
        raise WireError("a ref line is not '<object id> <name>'") from None
    regular, peeled = split_peeled_refs(refs)
    target = None
    for capability in capabilities:
        key, value = parse_capability(capability)
        if key == b"symref" and value and value.startswith(HEAD + b":"):
            target = value[len(HEAD) + 1 :]
    listing = _listing(regular, {HEAD: target} if target else {}, peeled)
    return Advertisement(0, frozenset(capabilities), listing)


def ls_refs_request() -> bytes:
    """Protocol v2: HEAD (with the branch it points at) and the tags, peeled."""
    from dulwich.protocol import pkt_line

    arguments = [b"peel", b"symrefs", b"ref-prefix " + HEAD, b"ref-prefix " + TAGS]
    return b"".join(
        [pkt_line(b"command=ls-refs\n"), b"0001",
         *(pkt_line(a + b"\n") for a in arguments), b"0000"]
    )  # fmt: skip


def ls_refs(body: bytes) -> RefListing:
    from dulwich.client import read_pkt_refs_v2
    from dulwich.errors import GitProtocolError

    lines = list(_packets(_protocol(body)))
    for line in lines[:1]:
        _err(line)
    try:
        refs, symrefs, peeled = read_pkt_refs_v2(lines)
    except (GitProtocolError, IndexError, ValueError):
        raise WireError("a ref line is not '<object id> <name> [attributes]'") from None
    return _listing(refs, symrefs, peeled)


def _listing(
    refs: Mapping[Any, bytes | None],  # dulwich's Ref and ObjectID: bytes by another name
    symrefs: Mapping[Any, bytes],
    peeled: Mapping[Any, bytes],
) -> RefListing:
    from dulwich.objects import valid_hexsha

    for name, sha in refs.items():
        if sha is not None and not valid_hexsha(sha):
            raise WireError(f"ref {cap(name.decode('utf-8', 'replace'), 80)!r} has no object id")
    head = refs.get(HEAD)
    target = symrefs.get(HEAD)
    tags = {
        name[len(TAGS) :].decode("utf-8", "replace"): (sha.decode(), peeled.get(name, sha).decode())
        for name, sha in refs.items()
        if name.startswith(TAGS) and sha is not None
    }
    return RefListing(
        head=head.decode() if head else None,
        head_target=target.removeprefix(HEADS).decode("utf-8", "replace") if target else None,
        tags=tags,
    )


def can_fetch_filtered(capabilities: Iterable[bytes]) -> bool:
    """A v2 server that takes ``deepen`` and ``filter`` in a fetch (``fetch=shallow filter``):
    only then are objects asked for (without a filter a commit brings its whole tree)."""
    for capability in capabilities:
        if capability.startswith(b"fetch="):
            features = capability[len(b"fetch=") :].split()
            return b"shallow" in features and b"filter" in features
    return False


def fetch_request(wants: Iterable[str], *, deepen: bool) -> bytes:
    """Protocol v2: exactly the objects named (``filter tree:0``: no tree or blob they refer
    to), without history (``deepen 1``) for commits; no progress messages."""
    from dulwich.protocol import pkt_line

    lines = [b"want %s\n" % sha.encode("ascii") for sha in dict.fromkeys(wants)]
    lines += [b"deepen 1\n"] if deepen else []
    lines += [b"filter tree:0\n", b"no-progress\n", b"done\n"]
    return b"".join([pkt_line(b"command=fetch\n"), b"0001", *map(pkt_line, lines), b"0000"])


def fetch_answer(body: bytes, asked: int) -> list[ShaFile]:
    """The objects of a v2 fetch answer's packfile (deltas resolved); a pack of more objects
    than the ``asked`` or one larger than MAX_OBJECT is refused before it is inflated."""
    proto = _protocol(body)
    for _ in range(8):  # shallow-info, wanted-refs, packfile-uris, then packfile
        header = list(_packets(proto))
        if not header:
            raise WireError("the fetch answer has no packfile")
        _err(header[0])
        if header[0].rstrip(b"\n") == b"packfile":
            return _objects(_side_band(header[1:]), asked)  # the section runs to the flush
    raise WireError("the fetch answer has no packfile")


def _side_band(lines: list[bytes]) -> bytes:
    """Channel 1 (the pack) of the side-band; channel 3 is the server's fatal error."""
    chunks = []
    for line in lines:
        channel, data = line[:1], line[1:]
        if channel == b"\x01":
            chunks.append(data)
        elif channel == b"\x03":
            said = cap(data.decode("utf-8", "replace").strip(), MAX_MESSAGE)
            raise WireError(f"the server failed: {said}")
    return b"".join(chunks)


def _objects(pack: bytes, asked: int) -> list[ShaFile]:
    from dulwich.object_format import DEFAULT_OBJECT_FORMAT
    from dulwich.pack import DELTA_TYPES, PackData, PackInflater

    try:
        data = PackData.from_file(BytesIO(pack), DEFAULT_OBJECT_FORMAT)
    except (AssertionError, ValueError) as exc:  # dulwich's checks of the header and size
        raise WireError(f"the packfile is not one ({cap(str(exc), 80)})") from None
    try:
        if len(data) > asked:
            raise WireError(f"the packfile holds {len(data)} objects; {asked} were asked for")
        data.check()  # the trailing checksum: a pack cut short or altered is refused
        for entry in data.iter_unpacked():  # each inflated at most to its declared size
            size = entry.decomp_len or 0
            if entry.pack_type_num in DELTA_TYPES:  # what applying the delta would make
                size = _delta_result_size(b"".join(entry.decomp_chunks))
            if size > MAX_OBJECT:
                raise WireError(f"an object of {size} bytes: larger than any we read")
        return list(PackInflater.for_pack_data(data))
    except WireError:
        raise
    except Exception as exc:  # zlib, checksum or delta errors from a hostile or broken pack
        raise WireError(f"the packfile is damaged ({type(exc).__name__})") from None
    finally:
        data.close()


def _delta_result_size(delta: bytes) -> int:
    """A delta's result size: its header's second little-endian base-128 number (after the
    base's size), as git's pack format documents it."""
    numbers, value, shift = [], 0, 0
    for byte in delta[:20]:
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            numbers.append(value)
            value, shift = 0, 0
            if len(numbers) == 2:
                return numbers[1]
    raise WireError("a delta's header is cut short")
