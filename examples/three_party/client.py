"""The client of the three-party example: makes the keys, encrypts the data and sends it to the server.

    .venv/bin/python examples/three_party/client.py --server http://127.0.0.1:8000 --state /tmp/three-party

1. Makes a CKKS context (preset ``Rec128N13``: N = 2^13, 128-bit secure) and its keys, with the rotation
   keys a sum over the slots needs.
2. Hands the decryptor its share through ``--state DIR``: the parameters and the secret key (written only by
   the explicitly named ``to_secret_bytes``, in a file only the owner can read). In a deployment the
   decryptor makes the keys itself and publishes the public and evaluation keys; here one process plays
   the key owner to keep the example short.
3. Uploads to the server only what it may hold: the parameters, the relinearization key and the Galois keys
   (``POST /sessions``). The public key stays with the encryptors.
4. Encrypts the values with the public key (like any encryptor would) and asks for their mean and variance
   (``POST /sessions/ID/mean-variance?n=COUNT``). The two result ciphertexts go to ``DIR/result.bin``
   for the decryptor (``decryptor.py``).

The values come from ``--data FILE`` (one number per line) or, without it, 1000 synthetic temperatures
(also written to ``DIR/data.txt`` so the decryptor can compare). It prints the bytes of every request.
With ``--mac-key FILE`` (the key the server was started with) every object it sends carries a MAC, and the
server's answers must carry one too.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import urllib.error
import urllib.request
from typing import List, Optional, Tuple

import numpy as np

import protocol
from rnsfhe import ckks


def post(url: str, body: bytes) -> bytes:
    """POSTs ``body`` to ``url`` and returns the response body; a server error becomes a SystemExit with
    the server's message."""
    req = urllib.request.Request(url, data=body, method="POST",
                                 headers={"Content-Type": "application/octet-stream"})
    try:
        with urllib.request.urlopen(req, timeout=300) as resp:
            return resp.read()
    except urllib.error.HTTPError as e:
        raise SystemExit(f"client: {url} answered {e.code}: {e.read().decode(errors='replace')}") from None


def write_private(path: pathlib.Path, data: bytes) -> None:
    """Writes ``data`` to ``path``, readable by its owner only (mode 0600 from the start)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def load_values(path: Optional[pathlib.Path], state: pathlib.Path, slots: int) -> np.ndarray:
    """The values to encrypt: ``path`` (one number per line) or 1000 synthetic ones saved to the state."""
    if path is not None:
        values = np.loadtxt(path, ndmin=1, dtype=np.float64)
    else:
        values = np.random.default_rng().normal(20.0, 5.0, 1000)
        np.savetxt(state / "data.txt", values)
    if not 1 <= len(values) <= slots:
        raise SystemExit(f"client: {len(values)} values; the parameters hold 1..{slots}")
    if not np.all(np.isfinite(values)):
        raise SystemExit("client: the data has non-finite values")
    return values


def run(server: str, state: pathlib.Path, data: Optional[pathlib.Path], preset: str,
        mac_key: Optional[bytes] = None) -> List[Tuple[str, int, int]]:
    """The client's whole part; returns (request, bytes sent, bytes received) for every request. With
    ``mac_key`` every object sent carries a MAC under it."""
    state.mkdir(parents=True, exist_ok=True)
    ctx = ckks.Context.from_preset(preset)
    keys = ctx.keygen(sum_slots=True)
    (state / "params.bin").write_bytes(ctx.to_bytes())
    write_private(state / "secret.key", keys.secret.to_secret_bytes())

    wire: List[Tuple[str, int, int]] = []
    body = protocol.pack([ctx.to_bytes(mac_key=mac_key), keys.relin.to_bytes(mac_key=mac_key),
                          keys.galois.to_bytes(mac_key=mac_key)])
    answer = post(f"{server}/sessions", body)
    wire.append(("POST /sessions (parameters, relinearization key, Galois keys)", len(body), len(answer)))
    session = json.loads(answer)["session"]

    values = load_values(data, state, ctx.slots)
    ct = ctx.encryptor(keys.public).encrypt(values)
    body = protocol.pack([ct.to_bytes(mac_key=mac_key)])
    answer = post(f"{server}/sessions/{session}/mean-variance?n={len(values)}", body)
    wire.append(("POST /sessions/ID/mean-variance (one ciphertext)", len(body), len(answer)))
    protocol.unpack(answer, 2)  # two frames, or the server broke the protocol
    (state / "result.bin").write_bytes(answer)
    return wire


def main(argv: Optional[List[str]] = None) -> None:
    """Parses the command line, runs the client and prints the bytes on the wire."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", default="http://127.0.0.1:8000", help="the server's URL")
    ap.add_argument("--state", type=pathlib.Path, required=True,
                    help="directory shared with the decryptor (parameters, secret key, result)")
    ap.add_argument("--data", type=pathlib.Path, help="values to encrypt, one per line (default: synthetic)")
    ap.add_argument("--preset", default="Rec128N13", help="CKKS preset (default Rec128N13)")
    ap.add_argument("--mac-key", type=pathlib.Path, metavar="FILE",
                    help="the 32-byte key shared with the server and the decryptor: MACs on every object")
    args = ap.parse_args(argv)
    wire = run(args.server.rstrip("/"), args.state, args.data, args.preset, protocol.mac_key(args.mac_key))
    print("| request | bytes sent | bytes received |")
    print("|---|---:|---:|")
    for name, sent, received in wire:
        print(f"| {name} | {sent:,} | {received:,} |")
    print(f"result ciphertexts in {args.state / 'result.bin'}; decrypt with decryptor.py --state {args.state}")


if __name__ == "__main__":
    main()
