"""The decryptor of the three-party example: the only party that holds the secret key.

    .venv/bin/python examples/three_party/decryptor.py --state /tmp/three-party

Loads the parameters and the secret key from ``--state DIR`` (written by ``client.py``), and the two result
ciphertexts the server returned (``DIR/result.bin``), and decrypts the mean and the variance. Every object
is validated on load against the parameters (fingerprint, residues, levels): a result tampered with on the
way is refused with the field and byte offset at fault. If ``DIR/data.txt`` exists (the synthetic data),
the numpy results are printed beside. ``--json`` prints the two numbers as JSON instead. With
``--mac-key FILE`` (the key the server was started with) the results must carry a MAC under it.

``--flooding-bits B`` decrypts with noise flooding, as the decryptor must when it shares the results with the
server or anyone else who saw the ciphertexts (CKKS is not IND-CPA-D secure: a plain decryption together with
its ciphertext gives the secret key away; see SECURITY.md). ``rnsfhe.ckks.recommended_flooding_bits`` says
how many bits; at the 2^40 scale of ``Rec128N13`` the recommended ~30 bits leave only a few bits of precision,
so share results computed at a larger scale.
"""

from __future__ import annotations

import argparse
import json
import pathlib
from typing import List, Optional, Tuple

import numpy as np

import protocol
from rnsfhe import ckks


def decrypt_result(state: pathlib.Path, flooding_bits: int = 0,
                   mac_key: Optional[bytes] = None) -> Tuple[float, float]:
    """The mean and the variance in ``state/result.bin``, decrypted with the secret key of ``state`` (with
    noise flooding of ``flooding_bits`` bits when it is not 0; with ``mac_key``, the results must carry a
    MAC under it)."""
    ctx = ckks.Context.from_bytes((state / "params.bin").read_bytes())
    secret = ckks.SecretKey.from_secret_bytes((state / "secret.key").read_bytes(), ctx)
    mean_bytes, var_bytes = protocol.unpack((state / "result.bin").read_bytes(), 2)
    decryptor = ctx.decryptor(secret)
    mean, variance = (
        decryptor.decrypt(ckks.Ciphertext.from_bytes(b, ctx, mac_key=mac_key), real=True,
                          flooding_bits=flooding_bits)[0]
        for b in (mean_bytes, var_bytes)
    )
    return float(mean), float(variance)


def main(argv: Optional[List[str]] = None) -> None:
    """Parses the command line, decrypts and prints."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--state", type=pathlib.Path, required=True, help="directory written by client.py")
    ap.add_argument("--json", action="store_true", help="print {\"mean\": ..., \"variance\": ...}")
    ap.add_argument("--flooding-bits", type=int, default=0,
                    help="noise flooding for results that are shared (default 0: exact decryption)")
    ap.add_argument("--mac-key", type=pathlib.Path, metavar="FILE",
                    help="the 32-byte key shared with the client and the server: the results need a MAC")
    args = ap.parse_args(argv)
    if args.flooding_bits < 0:
        ap.error("--flooding-bits must be >= 0")
    mean, variance = decrypt_result(args.state, args.flooding_bits, protocol.mac_key(args.mac_key))
    if args.json:
        print(json.dumps({"mean": mean, "variance": variance}))
        return
    print(f"mean:     {mean:.9f}")
    print(f"variance: {variance:.9f}")
    data = args.state / "data.txt"
    if data.exists():
        x = np.loadtxt(data, ndmin=1)
        print(f"numpy:    mean {np.mean(x):.9f}, variance {np.var(x):.9f}")


if __name__ == "__main__":
    main()
