"""What the three parties agree on: how objects travel in an HTTP body.

A body is a sequence of **frames**, each an rnsfhe wire object (``obj.to_bytes()``) behind its length:

    frame = u64 length (little endian) | the object's bytes

The objects describe themselves: every one opens with the 16-byte header of the rnsfhe wire format
(format version, object kind, parameter fingerprint), which ``rnsfhe.read_header`` reads without parsing the
rest. The server checks the kinds *before* it loads anything, so it can refuse what it must never hold (a
secret key: ``header.is_secret``) and what it did not ask for.

Every object ends with a 32-byte digest that loading checks first. Over a network nobody trusts, the three
parties share a **MAC key** (``--mac-key FILE`` of every script, 32 random bytes, :func:`mac_key`): objects
are then written with ``to_bytes(mac_key=key)`` and loaded with ``from_bytes(..., mac_key=key)``, so that
nobody without the key can change an object in transit (or make one) without the receiver refusing it.
"""

from __future__ import annotations

import os
import pathlib
import secrets
import struct
from typing import Iterable, List, Optional

#: Length of a MAC key in bytes.
MAC_KEY_LEN = 32

#: Length of a frame's length prefix.
PREFIX_LEN = 8


class ProtocolError(ValueError):
    """A body that does not follow the framing (the message says where)."""


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



def mac_key(path: Optional[pathlib.Path], create: bool = False) -> Optional[bytes]:
    """The MAC key in the file ``path`` (None without a path). With ``create``, a missing file is made with
    a fresh random key, readable by its owner only; the other parties get a copy of it over a channel
    they trust (here: the same machine)."""
    if path is None:
        return None
    if create and not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(MAC_KEY_LEN))
    key = path.read_bytes()
    if len(key) != MAC_KEY_LEN:
        raise SystemExit(f"{path}: a MAC key is {MAC_KEY_LEN} bytes, this file has {len(key)}")
    return key
