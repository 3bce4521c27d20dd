"""OpenFHE side of the function and statistics comparison (RNS-CKKS Tables 2 and 3): a benchmark process
speaking the line protocol of peerlib.py, driven by compare_functions.py.

Run through .venv-peers/openfhe/bin/python (CPython 3.10, the openfhe wheel). Single-threaded: OMP_NUM_THREADS=1
is set below before openfhe is imported.

Operations (the names of `rnsfhe bench ckks-fn-op`, see compare_functions.py):
  mean, variance                 EvalSum (log2(slots) rotations and additions), x 1/n, Rescale; the variance is
                                 E[x^2] - E[x]^2 (EvalMult + Rescale first), as ours
  cheb:F:A:B:D                   EvalChebyshevFunction(F, ct, A, B, D) (F = sigmoid, exp, inverse)
  taylor:F:A:B:D                 EvalPoly(ct, Taylor coefficients of degree D) (F = exp, sigmoid)
Inputs: peerlib.test_vector(slots, 1) mapped onto [A, B] ([-1, 1] for mean and variance): the same points as ours.

Parameters (--params, the JSON of compare_functions.py): MultiplicativeDepth = len(q_bits) - 1, FirstModSize =
q_bits[0], ScalingModSize = scale_bits, RingDim = 2^log_n, BatchSize = 2^(log_n - 1), HYBRID key switching with
NumLargeDigits = dnum, ScalingTechnique = --technique (FIXEDMANUAL by default: OpenFHE's advanced functions
rescale by themselves; it was the fastest technique here), secret UNIFORM_TERNARY (or SPARSE_TERNARY for
"secret": "sparse"). OpenFHE chooses its special primes (60-bit) itself; the script reports how many.
Security: HEStd_128_classic if OpenFHE accepts the parameters, else HEStd_NotSet, and says so.

--plan prints {"depths": {op: levels}} (OpenFHE's GetMultiplicativeDepthByCoeffVector for the polynomials, the
table of OpenFHE's FUNCTION_EVALUATION.md) and exits.
"""

import os
import sys

os.environ["OMP_NUM_THREADS"] = "1"  # before openfhe (and its OpenMP runtime) is loaded

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402

import numpy as np  # noqa: E402

import peerlib  # noqa: E402

import openfhe as ofhe  # noqa: E402

FUNCTIONS = {
    "sigmoid": lambda x: 1.0 / (1.0 + math.exp(-x)),
    "exp": math.exp,
    "inverse": lambda x: 1.0 / x,
}


def taylor(name, degree):
    """Taylor coefficients at 0 of exp or sigmoid up to `degree` (power basis)."""
    if name == "exp":
        return [1.0 / math.factorial(k) for k in range(degree + 1)]
    if name == "sigmoid":
        # 1/2 + tanh(x/2)/2, tanh x = sum 2^(2n) (2^(2n) - 1) B_2n x^(2n-1) / (2n)!
        bern = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510]
        c = [0.0] * (degree + 1)
        c[0] = 0.5
        for i, b in enumerate(bern):
            n = i + 1
            k = 2 * n - 1
            if k > degree:
                break
            c[k] = 4 ** n * (4 ** n - 1) * b / math.factorial(2 * n) * 0.5 ** k * 0.5
        return c
    raise ValueError(f"no Taylor polynomial for {name}")


def parse_op(name):
    """(kind, function, a, b, degree) of an operation name; raises ValueError with the reason."""
    if name in ("mean", "variance"):
        return name, None, -1.0, 1.0, None
    parts = name.split(":")
    if len(parts) != 5:
        raise ValueError(f"unknown operation {name!r}: expected mean, variance or METHOD:FUNCTION:A:B:DEGREE")
    kind, fn, a, b, d = parts
    if kind not in ("cheb", "taylor"):
        raise ValueError(f"{name!r}: OpenFHE runs cheb and taylor here (not {kind!r})")
    if fn not in FUNCTIONS:
        raise ValueError(f"{name!r}: unknown function {fn!r}")
    if kind == "taylor" and fn == "inverse":
        raise ValueError(f"{name!r}: no Taylor polynomial for the inverse")
    a, b, d = float(a), float(b), int(d)
    if not a < b or d < 1:
        raise ValueError(f"{name!r}: need A < B and a positive degree")
    return kind, fn, a, b, d


def coefficients(kind, fn, a, b, d):
    if kind == "cheb":
        return ofhe.EvalChebyshevCoefficients(FUNCTIONS[fn], a, b, d)
    return taylor(fn, d)


def depth(name):
    kind, fn, a, b, d = parse_op(name)
    if kind == "mean":
        return 1
    if kind == "variance":
        return 2
    return ofhe.GetMultiplicativeDepthByCoeffVector(coefficients(kind, fn, a, b, d), False)


def plain_poly(kind, fn, a, b, d):
    """The exact polynomial as a numpy function of x (what the ciphertext should hold up to CKKS noise)."""
    c = np.array(coefficients(kind, fn, a, b, d), dtype=float)
    if kind == "cheb":
        c = c.copy()
        c[0] /= 2  # OpenFHE's convention: f ~ c0/2 + sum c_i T_i
        return lambda x: np.polynomial.chebyshev.chebval((2 * x - a - b) / (b - a), c)
    return lambda x: np.polynomial.polynomial.polyval(x, c)


def inputs_on(a, b, n):
    return [a + (u + 1.0) * 0.5 * (b - a) for u in peerlib.test_vector(n, 1)]


def build_context(params, technique, security):
    q_bits = params["q_bits"]
    if any(q != params["scale_bits"] for q in q_bits[1:]):
        raise SystemExit(f"openfhe: all scaling primes must have scale_bits = {params['scale_bits']}, got {q_bits}")
    p = ofhe.CCParamsCKKSRNS()
    p.SetMultiplicativeDepth(len(q_bits) - 1)
    p.SetFirstModSize(q_bits[0])
    p.SetScalingModSize(params["scale_bits"])
    p.SetRingDim(1 << params["log_n"])
    p.SetBatchSize(1 << (params["log_n"] - 1))
    p.SetScalingTechnique(getattr(ofhe, technique))
    p.SetKeySwitchTechnique(ofhe.HYBRID)
    p.SetNumLargeDigits(params["dnum"])
    if params.get("secret", "ternary") == "sparse":
        p.SetSecretKeyDist(ofhe.SPARSE_TERNARY)
    p.SetSecurityLevel(security)
    cc = ofhe.GenCryptoContext(p)
    for feature in (ofhe.PKESchemeFeature.PKE, ofhe.PKESchemeFeature.KEYSWITCH, ofhe.PKESchemeFeature.LEVELEDSHE,
                    ofhe.PKESchemeFeature.ADVANCEDSHE):
        cc.Enable(feature)
    return cc


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--params", help='CKKS parameters as JSON: {"log_n": 14, "q_bits": [60, 55, ...], '
                                     '"p_bits": [60, 60], "scale_bits": 55, "dnum": 3}')
    ap.add_argument("--ops", required=True, help="comma-separated operation names")
    ap.add_argument("--technique", default="FIXEDMANUAL",
                    choices=["FIXEDMANUAL", "FIXEDAUTO", "FLEXIBLEAUTO", "FLEXIBLEAUTOEXT"])
    ap.add_argument("--plan", action="store_true", help="print the depth of each operation as JSON and exit")
    args = ap.parse_args()
    names = [s.strip() for s in args.ops.split(",") if s.strip()]
    if args.plan:
        depths = {}
        for name in names:
            try:
                depths[name] = depth(name)
            except ValueError as e:
                depths[name] = None
                peerlib.log(f"openfhe: {e}")
        peerlib.send({"depths": depths})
        return
    if not args.params:
        ap.error("--params is required (unless --plan)")
    params = json.loads(args.params)
    log_n = params["log_n"]
    n = 1 << log_n
    slots = n // 2

    security_note = "HEStd_128_classic (OpenFHE's check passed)"
    try:
        cc = build_context(params, args.technique, ofhe.HEStd_128_classic)
    except Exception as e:  # OpenFHE raises when log QP is too large for 128-bit security at this N
        peerlib.log(f"openfhe: HEStd_128_classic refused ({str(e)[:200]}); using HEStd_NotSet")
        cc = build_context(params, args.technique, ofhe.HEStd_NotSet)
        security_note = "HEStd_NotSet: security check DISABLED (OpenFHE refused 128-bit for these parameters)"

    ops_parsed = {}
    unsupported = {}
    for name in names:
        try:
            ops_parsed[name] = parse_op(name)
        except ValueError as e:
            unsupported[name] = str(e)

    kp = cc.KeyGen()
    cc.EvalMultKeyGen(kp.secretKey)
    if any(op[0] in ("mean", "variance") for op in ops_parsed.values()):
        cc.EvalSumKeyGen(kp.secretKey)

    # Number of special primes OpenFHE chose: a relinearization key is dnum pairs of polynomials over Q*P.
    ks = ofhe.SerializeEvalMultKeyString(ofhe.BINARY, "")
    num_p = round(len(ks) / (n * 8 * 2 * params["dnum"])) - len(params["q_bits"])
    log_q = math.log2(cc.GetModulus())

    # One ciphertext per input interval.
    cts = {}
    for kind, fn, a, b, d in ops_parsed.values():
        if (a, b) not in cts:
            x = inputs_on(a, b, slots)
            cts[(a, b)] = (x, cc.Encrypt(kp.publicKey, cc.MakeCKKSPackedPlaintext(x)))

    inv_n = 1.0 / slots

    def mean(ct):
        return cc.Rescale(cc.EvalMult(cc.EvalSum(ct, slots), inv_n))

    def variance(ct):
        square = cc.Rescale(cc.EvalMult(ct, ct))
        m = mean(ct)
        return cc.EvalSub(mean(square), cc.Rescale(cc.EvalMult(m, m)))

    def make(kind, fn, a, b, d):
        ct = cts[(a, b)][1]
        if kind == "mean":
            return lambda: mean(ct)
        if kind == "variance":
            return lambda: variance(ct)
        if kind == "cheb":
            f = FUNCTIONS[fn]
            # The coefficients are computed inside the call (OpenFHE's EvalChebyshevFunction does both).
            return lambda: cc.EvalChebyshevFunction(f, ct, a, b, d)
        coeffs = taylor(fn, d)
        return lambda: cc.EvalPoly(ct, coeffs)

    ops = {}
    check = {}
    for name, (kind, fn, a, b, d) in ops_parsed.items():
        x, ct = cts[(a, b)]
        run = make(kind, fn, a, b, d)
        try:
            out = run()
            got = cc.Decrypt(kp.secretKey, out).GetCKKSPackedValue()[:slots]
            re = np.array([z.real for z in got])
            im = np.abs(np.array([z.imag for z in got]))
            xs = np.array(x)
            if kind in ("mean", "variance"):
                m = xs.mean()
                want = np.full(slots, m if kind == "mean" else ((xs - m) ** 2).mean())
                poly = None
            else:
                want = np.array([FUNCTIONS[fn](v) for v in x])
                poly = plain_poly(kind, fn, a, b, d)(xs)

            def bits(w):
                err = float(np.max(np.maximum(np.abs(re - w), im)))
                return -math.log2(err) if err > 0 else float("inf")

            check[name] = {
                "bits_true": bits(want),
                "bits_poly": None if poly is None else bits(poly),
                "approx_bits": None if poly is None else -math.log2(float(np.max(np.abs(poly - want)))),
                "levels_used": out.GetLevel() - ct.GetLevel(),
            }
            ops[name] = peerlib.timed(run)
        except Exception as e:  # report it in the check, do not offer the op
            check[name] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
    for name, why in unsupported.items():
        check[name] = {"error": why}

    actual = {
        "log_n": log_n,
        "n": n,
        "slots": slots,
        "q_bits": params["q_bits"],
        "num_q_primes": len(params["q_bits"]),
        "log_q": round(log_q, 2),
        "num_p_primes": num_p,
        "p_bits": [60] * num_p,  # OpenFHE's auxiliary primes are 60-bit (AUXMODSIZE); not settable from Python
        "log_qp": round(log_q + 60 * num_p, 1),
        "scale_bits": params["scale_bits"],
        "dnum": params["dnum"],
        "key_switching": f"HYBRID, NumLargeDigits={params['dnum']}",
        "scaling": args.technique,
        "secret": "SPARSE_TERNARY" if params.get("secret") == "sparse" else "UNIFORM_TERNARY",
        "security": security_note,
    }
    version = f"openfhe {ofhe.__version__} (python {sys.version.split()[0]}; OpenFHE wheel, OMP_NUM_THREADS=1)"
    peerlib.serve("openfhe", version, actual, ops, check)


if __name__ == "__main__":
    main()
