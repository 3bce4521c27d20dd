"""What the three parties agree on: how objects travel in an HTTP body, and how to read an object's header.

A body is a sequence of **frames**, each an rnsfhe wire object (``obj.to_bytes()``) behind its length:

    frame = u64 length (little endian) | the object's bytes

The objects describe themselves: every one opens with the 16-byte header of the rnsfhe wire format
(magic "RNSF", u16 format version, u16 object kind, u64 parameter fingerprint; see the README's "Wire
format" section). The server reads the kind from the header *before* it parses anything, so it can refuse
what it must never hold (a secret key) and what it did not ask for, and it can bound every request by the
size the parameters allow.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Iterable, List

#: The magic bytes that open every rnsfhe wire object.
MAGIC = b"RNSF"
#: Length of the wire header in bytes.
HEADER_LEN = 16
#: Length of a frame's length prefix.
PREFIX_LEN = 8

#: Object kinds of the wire format (the codes of ``rnsfhe_math::wire::ObjectKind``) that this protocol uses
#: or must recognise.
KIND_NAMES = {
    1: "CKKS parameters",
    2: "BFV parameters",
    16: "secret key",
    17: "public key",
    18: "relinearization key",
    19: "Galois keys",
    32: "CKKS plaintext",
    33: "CKKS ciphertext",
}
CKKS_PARAMETERS = 1
SECRET_KEY = 16
PUBLIC_KEY = 17
RELIN_KEY = 18
GALOIS_KEYS = 19
CKKS_CIPHERTEXT = 33
#: The kinds a server must never receive.
SECRET_KINDS = frozenset({SECRET_KEY})


class ProtocolError(ValueError):
    """A body or an object header that does not follow the protocol (the message says where)."""


@dataclass(frozen=True)
class Header:
    """The header of a wire object: format version, object kind code and parameter fingerprint."""

    version: int
    kind: int
    fingerprint: int

    @property
    def kind_name(self) -> str:
        """The object kind in words (``"kind 77"`` for a code this protocol does not know)."""
        return KIND_NAMES.get(self.kind, f"kind {self.kind}")


def read_header(obj: bytes) -> Header:
    """The header of the wire object ``obj``; :class:`ProtocolError` if it is too short or not rnsfhe's."""
    if len(obj) < HEADER_LEN:
        raise ProtocolError(f"object of {len(obj)} bytes is shorter than the {HEADER_LEN}-byte header")
    if obj[:4] != MAGIC:
        raise ProtocolError(f"object does not start with the magic {MAGIC!r} (found {bytes(obj[:4])!r})")
    version, kind, fingerprint = struct.unpack_from("<HHQ", obj, 4)
    return Header(version, kind, fingerprint)


def pack(objects: Iterable[bytes]) -> bytes:
    """The frames of ``objects``, in order, as one body."""
    out = bytearray()
    for obj in objects:
        out += struct.pack("<Q", len(obj))
        out += obj
    return bytes(out)


def unpack(body: bytes, count: int) -> List[bytes]:
    """Exactly ``count`` frames of ``body``; :class:`ProtocolError` naming the frame and the byte offset when
    a length prefix is cut, runs past the body, or bytes are left over."""
    frames: List[bytes] = []
    at = 0
    view = memoryview(body)
    for i in range(count):
        if at + PREFIX_LEN > len(body):
            raise ProtocolError(f"frame {i}: length prefix truncated at byte {at} (body of {len(body)} bytes)")
        (length,) = struct.unpack_from("<Q", body, at)
        at += PREFIX_LEN
        if length > len(body) - at:
            raise ProtocolError(
                f"frame {i}: length {length} at byte {at - PREFIX_LEN} runs past the body "
                f"({len(body) - at} bytes left)"
            )
        frames.append(bytes(view[at : at + length]))
        at += length
    if at != len(body):
        raise ProtocolError(f"{len(body) - at} bytes after the last of {count} frames (byte {at})")
    return frames


def ckks_log_n(params: bytes) -> int:
    """``log2 N`` of serialized CKKS parameters: the first field of their payload (u32 after the header)."""
    header = read_header(params)
    if header.kind != CKKS_PARAMETERS:
        raise ProtocolError(f"a {header.kind_name} is not CKKS parameters")
    if len(params) < HEADER_LEN + 4:
        raise ProtocolError(f"CKKS parameters of {len(params)} bytes end before log_n")
    (log_n,) = struct.unpack_from("<I", params, HEADER_LEN)
    return log_n
