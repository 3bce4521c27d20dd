"""OpenFHE side of the BFV comparison: a benchmark process speaking the line protocol of peerlib.py.

Run through .venv-peers/openfhe/bin/python (CPython 3.10, the openfhe wheel). Single-threaded: OMP_NUM_THREADS=1
is set below before openfhe is imported.

Two ways to choose OpenFHE's parameters (see README.md, "BFV"):

  matched (default)  the n and q primes of the preset (rnsfhe's BfvParams::generate(t, depth)):
                     RingDim = 2^log_n, ScalingModSize = the preset's prime size (55), and OpenFHE's
                     MultiplicativeDepth searched so that OpenFHE picks as many q primes as the preset (its own
                     noise estimate differs from ours, so that depth may differ from the preset's); relinearization
                     as the preset: BV key switching with DigitSize = relin_digit_bits (0 = CRT only), or
                     HYBRID with NumLargeDigits = dnum where the preset has hybrid key switching (OpenFHE
                     chooses its own special primes).
                     Security: HEStd_128_classic if OpenFHE accepts it, else HEStd_NotSet (and the ready line
                     says so; at depths 1 and 5 OpenFHE's 55-bit primes are 1-2 bits over the HE Standard bound
                     where ours are 54 + 55 bits).
  native (--native)  OpenFHE's own choice for t and the depth: PlaintextModulus, MultiplicativeDepth and the
                     multiplication technique only, everything else at OpenFHE's defaults (60-bit primes, the
                     smallest secure ring dimension, BV without digits): the setting of the reference times.

Ops (all on fresh inputs encrypted once at setup; outputs discarded):
  encrypt     MakePackedPlaintext (n values) + Encrypt (public key)
  decrypt     Decrypt (OpenFHE decodes inside Decrypt; the values are not copied out to Python)
  add         EvalAdd
  mult        EvalMultNoRelin
  relin       Relinearize of the 3-part product
  mult_relin  EvalMult (with relinearization)
"""

import os
import sys

os.environ["OMP_NUM_THREADS"] = "1"  # before openfhe (and its OpenMP runtime) is loaded

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402

import peerlib  # noqa: E402

import openfhe as ofhe  # noqa: E402

TECHNIQUES = {"HPS": ofhe.HPS, "HPSPOVERQLEVELED": ofhe.HPSPOVERQLEVELED}


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", help="a preset name of presets_bfv.json (BfvT65537L1, ...)")
    ap.add_argument("--params", help='BFV parameters as JSON: {"t": 65537, "depth": 5, "log_n": 13, '
                                     '"q_bits": [55, 55, 54, 54], "relin_digit_bits": 30}')
    ap.add_argument("--technique", choices=sorted(TECHNIQUES), default="HPSPOVERQLEVELED",
                    help="OpenFHE's BFV multiplication technique (default HPSPOVERQLEVELED)")
    ap.add_argument("--native", action="store_true",
                    help="OpenFHE's own parameters for t and depth instead of the preset's n and q")
    args = ap.parse_args()
    params = peerlib.preset_params(ap, args, "presets_bfv.json")
    missing = [k for k in ("t", "depth", "log_n", "q_bits") if k not in params]
    if missing:
        ap.error(f"parameters incomplete, missing {missing}: give --preset or --params")
    return args, params


def q_primes(cc):
    """The ciphertext primes of a context, read from its JSON serialization (the Python binding exposes only
    their product, as a float)."""
    doc = json.loads(ofhe.Serialize(cc, ofhe.JSON))
    found = []

    def walk(x):
        if isinstance(x, dict):
            if "elp" in x and not found:
                elp = x["elp"]
                elp = elp.get("ptr_wrapper", {}).get("data", elp)
                for tower in elp.get("p", []):
                    data = tower.get("ptr_wrapper", {}).get("data", tower)
                    found.append(int(data["value0"]["cm"]["v"]))
                return
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(doc)
    return found


def make_context(t, depth, technique, ring=None, mod_bits=None, digit_bits=None, security=None, dnum=None):
    p = ofhe.CCParamsBFVRNS()
    p.SetPlaintextModulus(t)
    p.SetMultiplicativeDepth(depth)
    p.SetMultiplicationTechnique(technique)
    if ring is not None:
        p.SetRingDim(ring)
    if mod_bits is not None:
        p.SetScalingModSize(mod_bits)
    if dnum is not None:
        p.SetKeySwitchTechnique(ofhe.HYBRID)
        p.SetNumLargeDigits(dnum)
    elif digit_bits is not None:
        p.SetKeySwitchTechnique(ofhe.BV)
        p.SetDigitSize(digit_bits)
    if security is not None:
        p.SetSecurityLevel(security)
    cc = ofhe.GenCryptoContext(p)
    for feature in (ofhe.PKESchemeFeature.PKE, ofhe.PKESchemeFeature.KEYSWITCH, ofhe.PKESchemeFeature.LEVELEDSHE):
        cc.Enable(feature)
    return cc


def matched_context(params, technique):
    """The context with the preset's n and number of q primes: searches OpenFHE's MultiplicativeDepth (OpenFHE
    sizes Q by its own noise estimate for that depth). Returns (cc, openfhe_depth, security note)."""
    k = len(params["q_bits"])
    ring = 1 << params["log_n"]
    mod_bits = max(params["q_bits"])
    digit_bits = params.get("relin_digit_bits") or 0
    dnum = params.get("dnum")

    def build(d):
        try:
            return make_context(params["t"], d, technique, ring, mod_bits, digit_bits, ofhe.HEStd_128_classic,
                                dnum), \
                "HEStd_128_classic (OpenFHE's check passed)"
        except RuntimeError as e:
            if "security" not in str(e):
                raise
            return make_context(params["t"], d, technique, ring, mod_bits, digit_bits, ofhe.HEStd_NotSet,
                                dnum), \
                ("HEStd_NotSet: OpenFHE's security check DISABLED (it wants a larger ring for "
                 f"{mod_bits}-bit x {k} primes at n = {ring})")

    d, tried = params["depth"], {}
    while 1 <= d <= 3 * params["depth"] + 10 and d not in tried:
        cc, note = build(d)
        tried[d] = len(q_primes(cc))
        if tried[d] == k:
            return cc, d, note
        d = d - 1 if tried[d] > k else d + 1
    raise SystemExit(f"openfhe_bfv: no MultiplicativeDepth gives {k} q primes at n = {ring} with "
                     f"{mod_bits}-bit primes (depth -> primes: {tried})")


def centered_values(n, t, seed):
    """n reproducible pseudo-random values in [-(t-1)/2, (t-1)/2] (no numpy needed)."""
    x = seed * 2654435761 % 4294967296
    out = []
    half = (t - 1) // 2
    for _ in range(n):
        x = (1103515245 * x + 12345) % 2147483648
        out.append(x % t - half)
    return out


def center(v, t):
    v %= t
    return v - t if v > (t - 1) // 2 else v


def negacyclic_coefficient(x, y, j, t):
    n = len(x)
    s = sum(x[i] * y[j - i] for i in range(j + 1)) - sum(x[i] * y[n + j - i] for i in range(j + 1, n))
    return center(s, t)


def main():
    args, params = parse_args()
    t = params["t"]
    technique = TECHNIQUES[args.technique]
    if args.native:
        cc = make_context(t, params["depth"], technique)
        ofhe_depth = params["depth"]
        security_note = "HEStd_128_classic (OpenFHE default)"
    else:
        cc, ofhe_depth, security_note = matched_context(params, technique)
    n = cc.GetRingDimension()
    primes = q_primes(cc)
    batching = (t - 1) % (2 * n) == 0

    kp = cc.KeyGen()
    cc.EvalMultKeyGen(kp.secretKey)

    x = centered_values(n, t, 1)
    y = centered_values(n, t, 2)

    def encode(v):
        return cc.MakePackedPlaintext(v) if batching else cc.MakeCoefPackedPlaintext(v)

    ct_x = cc.Encrypt(kp.publicKey, encode(x))
    ct_y = cc.Encrypt(kp.publicKey, encode(y))
    ct_xy = cc.EvalMultNoRelin(ct_x, ct_y)

    # ---- correctness of the timed operations (not timed) ----
    def dec(ct):
        pt = cc.Decrypt(kp.secretKey, ct)
        pt.SetLength(n)
        return list(pt.GetPackedValue() if batching else pt.GetCoefPackedValue())

    prod = dec(cc.EvalMult(ct_x, ct_y))
    if batching:
        mult_ok = all(center(a * b, t) == p for a, b, p in zip(x, y, prod))
        checked = n
    else:
        idx = [i * (n // 64) + i for i in range(64)]
        mult_ok = all(negacyclic_coefficient(x, y, j, t) == prod[j] for j in idx)
        checked = len(idx)
    check = {
        "exact": bool(dec(ct_x) == x
                      and dec(cc.EvalAdd(ct_x, ct_y)) == [center(a + b, t) for a, b in zip(x, y)]
                      and mult_ok
                      and dec(cc.Relinearize(ct_xy)) == prod),
        "checked_values": checked,
    }

    ops = {
        "encrypt": peerlib.timed(lambda: cc.Encrypt(kp.publicKey, encode(x))),
        "decrypt": peerlib.timed(lambda: cc.Decrypt(kp.secretKey, ct_x)),
        "add": peerlib.timed(lambda: cc.EvalAdd(ct_x, ct_y)),
        "mult": peerlib.timed(lambda: cc.EvalMultNoRelin(ct_x, ct_y)),
        "relin": peerlib.timed(lambda: cc.Relinearize(ct_xy)),
        "mult_relin": peerlib.timed(lambda: cc.EvalMult(ct_x, ct_y)),
    }

    digit = cc.GetDigitSize() if hasattr(cc, "GetDigitSize") else None
    actual = {
        "mode": "native" if args.native else "matched",
        "t": t,
        "depth": params["depth"],
        "openfhe_depth": ofhe_depth,
        "log_n": int(math.log2(n)),
        "n": n,
        "q_bits": [p.bit_length() for p in primes],
        "num_q_primes": len(primes),
        "log_q": round(sum(math.log2(p) for p in primes), 2),
        "relin_digit_bits": digit or None,
        "encoding": "batch" if batching else "coefficient",
        "multiplication": args.technique,
        "dnum": params.get("dnum") if not args.native else None,
        "key_switching": f"{cc.GetKeySwitchTechnique()}, DigitSize={digit}"
                         + (f", NumLargeDigits={params['dnum']}" if params.get("dnum") and not args.native else ""),
        "security": security_note,
    }
    version = (f"openfhe {ofhe.__version__} (python {sys.version.split()[0]}; OpenFHE wheel, OMP_NUM_THREADS=1, "
               f"{args.technique})")
    peerlib.serve("openfhe", version, actual, ops, check)


if __name__ == "__main__":
    main()
