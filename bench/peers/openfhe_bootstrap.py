"""OpenFHE side of the CKKS bootstrapping comparison: a benchmark process of the bootstrapping protocol
(compare_bootstrap.py's docstring, bench/peers/README.md "CKKS bootstrapping"), timing `EvalBootstrap`.

Run through .venv-peers/openfhe/bin/python (CPython 3.10, the openfhe wheel). Single-threaded: OMP_NUM_THREADS=1
is set below before openfhe is imported.

Set-up (--params, the JSON object of compare_bootstrap.py; the defaults are the set-up of OpenFHE's
simple-ckks-bootstrapping example at N = 2^16):
  log_n 16            RingDim = 2^log_n
  slots 32768         EvalBootstrapSetup(level_budget, [0, 0], slots), EvalBootstrapKeyGen(sk, slots), the
                      plaintext packs `slots` values (full packing at N / 2, sparse below)
  level_budget [4, 4] levels of CoeffsToSlots and SlotsToCoeffs
  scale_bits 59, first_mod_bits 60, technique FLEXIBLEAUTO      ScalingModSize, FirstModSize, ScalingTechnique
  secret "uniform_ternary" (or "sparse_ternary")                SecretKeyDist
  security "128"      HEStd_128_classic at this RingDim (OpenFHE refuses a modulus too large for it);
                      "none": HEStd_NotSet (insecure, for the quick set-up)
  levels_after null   MultiplicativeDepth = levels_after + CryptoContext.GetBootstrapDepth(level_budget, secret);
                      null: the largest levels_after that OpenFHE accepts at the security level (searched
                      downward from levels_after_max, default 30); needs a number with security "none"
  dnum null           NumLargeDigits (null: OpenFHE's default of 3, or with security "128" and levels_after
                      null the smallest that reaches the most levels); the number used is read from the context
  key_sizes true      serialize the evaluation keys to temporary files and report their sizes (untimed)

Setup (timed in parts, reported in the ready line): EvalBootstrapSetup, KeyGen, EvalMultKeyGen,
EvalBootstrapKeyGen; then the input x = peerlib.test_vector(slots, 1) (reals in [-1, 1]) is encoded at level
depth - 1 (one level left, as OpenFHE's examples do) and encrypted; one untimed EvalBootstrap gives the check.
The op `bootstrap` times one EvalBootstrap of that ciphertext per call (wall clock, and the process's CPU time
as cpu_seconds), then (untimed) decrypts the result and measures its precision: per slot -log2 |Re(x'_j) - x_j| (64 bits for an exact slot; the conventions of
rnsfhe_ckks::PrecisionStats), min and median over the slots.
"""

import os
import sys

os.environ["OMP_NUM_THREADS"] = "1"  # before openfhe (and its OpenMP runtime) is loaded

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import resource  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import peerlib  # noqa: E402

import openfhe as ofhe  # noqa: E402

DEFAULTS = {
    "log_n": 16,
    "slots": 1 << 15,
    "level_budget": [4, 4],
    "scale_bits": 59,
    "first_mod_bits": 60,
    "technique": "FLEXIBLEAUTO",
    "secret": "uniform_ternary",
    "security": "128",
    "levels_after": None,
    "levels_after_max": 30,
    "dnum": None,
    "key_sizes": True,
}
SECRETS = {"uniform_ternary": "UNIFORM_TERNARY", "sparse_ternary": "SPARSE_TERNARY"}
PRECISION_CAP_BITS = 64.0  # bits credited to an exact slot, as rnsfhe_ckks::PRECISION_CAP_BITS


def peak_rss_bytes():
    """The peak resident set size of this process so far (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def precision(want, got):
    """(min, median) over the slots of -log2 |got_j - want_j| (real parts), an exact slot counting 64 bits
    and a non-finite value -inf, as rnsfhe_ckks::PrecisionStats; the median of an even count is the mean of
    the two middle values (numpy's)."""
    err = np.abs(np.asarray(got, dtype=float) - np.asarray(want, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore"):
        bits = np.where(err == 0.0, PRECISION_CAP_BITS, -np.log2(err))
    bits = np.where(np.isfinite(err), bits, -np.inf)
    return float(np.min(bits)), float(np.median(bits))


def context_field(cc, key):
    """The first value of `key` in the context's JSON serialization (the Python binding does not expose every
    parameter, e.g. the number of key-switching digits "dnum")."""
    stack = [json.loads(ofhe.Serialize(cc, ofhe.JSON))]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            if key in x:
                return x[key]
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return None


def q_primes(cc):
    """The ciphertext primes q_0, q_1, ... of a context, from its JSON serialization (element parameters
    "elp", one tower "p" per prime, its modulus at value0.cm.v)."""
    doc = json.loads(ofhe.Serialize(cc, ofhe.JSON))
    stack = [doc]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            if "elp" in x:
                elp = x["elp"]
                elp = elp.get("ptr_wrapper", {}).get("data", elp)
                towers = [t.get("ptr_wrapper", {}).get("data", t) for t in elp.get("p", [])]
                return [int(t["value0"]["cm"]["v"]) for t in towers]
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return []


class Setup:
    """The context, keys and input of one bootstrapping set-up, with the time each step of the setup took."""

    def __init__(self, params):
        self.params = params
        self.secret = getattr(ofhe, SECRETS[params["secret"]])
        self.timings = {}
        self.security_note = None
        self.cc, self.depth, self.levels_after = self.context()

    def boot_depth(self):
        """The levels EvalBootstrap consumes (OpenFHE's count: EvalMod and the two level budgets)."""
        return ofhe.CryptoContext.GetBootstrapDepth(self.params["level_budget"], self.secret)  # static in 1.6

    def make_context(self, levels_after, dnum, security):
        p = self.params
        boot_depth = self.boot_depth()
        q = ofhe.CCParamsCKKSRNS()
        q.SetSecretKeyDist(self.secret)
        q.SetSecurityLevel(security)
        q.SetRingDim(1 << p["log_n"])
        q.SetScalingModSize(p["scale_bits"])
        q.SetFirstModSize(p["first_mod_bits"])
        q.SetScalingTechnique(getattr(ofhe, p["technique"]))
        q.SetMultiplicativeDepth(levels_after + boot_depth)
        q.SetKeySwitchTechnique(ofhe.HYBRID)
        if dnum:
            q.SetNumLargeDigits(dnum)
        cc = ofhe.GenCryptoContext(q)
        for feature in (ofhe.PKESchemeFeature.PKE, ofhe.PKESchemeFeature.KEYSWITCH,
                        ofhe.PKESchemeFeature.LEVELEDSHE, ofhe.PKESchemeFeature.ADVANCEDSHE,
                        ofhe.PKESchemeFeature.FHE):
            cc.Enable(feature)
        return cc, levels_after + boot_depth

    def context(self):
        """(context, MultiplicativeDepth, levels_after). With security "128" and no levels_after, the largest
        levels_after that OpenFHE's HEStd_128_classic check accepts at this RingDim (it raises when log QP is
        over the HE Standard's bound for N), and with no dnum the smallest NumLargeDigits that reaches it
        (OpenFHE's default of 3 digits leaves no level at N = 2^16 with level budget [4, 4]: its special
        modulus, a third of Q, is too large). The search goes downward in levels_after and upward in dnum, so
        no accepted context but the answer is built."""
        p = self.params
        if p["security"] == "none":
            if p["levels_after"] is None:
                raise SystemExit("openfhe_bootstrap: security 'none' needs levels_after")
            self.security_note = "HEStd_NotSet: security check DISABLED (insecure set-up)"
            cc, depth = self.make_context(p["levels_after"], p.get("dnum"), ofhe.HEStd_NotSet)
            return cc, depth, p["levels_after"]
        if p["security"] != "128":
            raise SystemExit(f"openfhe_bootstrap: security must be '128' or 'none', got {p['security']!r}")
        levels = [p["levels_after"]] if p["levels_after"] is not None else range(p["levels_after_max"], 0, -1)
        errors = {}
        for levels_after in levels:
            towers = levels_after + self.boot_depth() + 1
            # None: OpenFHE's default (3 digits above depth 3); then every digit count up to one per tower.
            for dnum in [p["dnum"]] if p.get("dnum") else [None] + list(range(2, towers + 1)):
                try:
                    cc, depth = self.make_context(levels_after, dnum, ofhe.HEStd_128_classic)
                except Exception as e:  # log QP over the bound for N, or towers that do not split into dnum
                    errors[str(e).rsplit(":", 1)[-1].strip()[:120]] = (levels_after, dnum)
                    continue
                self.security_note = (f"HEStd_128_classic (OpenFHE's check passed; levels_after = {levels_after}"
                                      + (", the largest OpenFHE accepts" if p["levels_after"] is None else "")
                                      + (f"; NumLargeDigits = {dnum}, the smallest that fits" if dnum and
                                         not p.get("dnum") else "") + ")")
                return cc, depth, levels_after
        raise SystemExit(f"openfhe_bootstrap: no depth accepted at HEStd_128_classic with N = 2^{p['log_n']}: "
                         f"{sorted(errors)}")

    def timed(self, name, fn):
        t0 = time.perf_counter()
        out = fn()
        self.timings[name] = time.perf_counter() - t0
        return out

    def keys(self):
        p, cc = self.params, self.cc
        slots = p["slots"]
        self.timed("bootstrap_setup_s", lambda: cc.EvalBootstrapSetup(p["level_budget"], [0, 0], slots))
        self.kp = self.timed("keypair_s", cc.KeyGen)
        self.timed("mult_key_s", lambda: cc.EvalMultKeyGen(self.kp.secretKey))
        self.timed("bootstrap_keys_s", lambda: cc.EvalBootstrapKeyGen(self.kp.secretKey, slots))
        self.x = peerlib.test_vector(slots, 1)
        pt = cc.MakeCKKSPackedPlaintext(self.x, 1, self.depth - 1, None, slots)
        self.ct = cc.Encrypt(self.kp.publicKey, pt)

    def bootstrap(self):
        """One timed EvalBootstrap of the input; returns (wall seconds, CPU seconds of the process, the
        bootstrapped ciphertext). On a loaded machine the CPU time shows what the wall clock lost to others."""
        c0, t0 = time.process_time(), time.perf_counter()
        out = self.cc.EvalBootstrap(self.ct)
        t1, c1 = time.perf_counter(), time.process_time()
        return t1 - t0, c1 - c0, out

    def measure(self, out):
        """Precision and levels of a bootstrapped ciphertext (untimed): decrypts all slots."""
        pt = self.cc.Decrypt(self.kp.secretKey, out)
        pt.SetLength(self.params["slots"])
        # Real parts only: OpenFHE decodes a real-valued (CKKSDataType REAL) plaintext with zero imaginary parts.
        min_bits, median_bits = precision(self.x, pt.GetRealPackedValueArray())
        # OpenFHE's own count (its simple-ckks-bootstrapping example): a ciphertext whose scaling factor has
        # degree > 1 (FLEXIBLEAUTO rescales lazily) has a rescaling pending, which takes one more level.
        levels_left = self.depth - out.GetLevel() - (out.GetNoiseScaleDeg() - 1)
        return {"min_bits": min_bits, "median_bits": median_bits, "levels_left": levels_left}

    def key_sizes(self):
        """Serialized sizes (OpenFHE BINARY) of the relinearization key (EvalMultKey) and of every automorphism
        key (EvalAutomorphismKey: the rotation keys and the conjugation key EvalBootstrapKeyGen made), each
        written to a temporary file that is removed at once."""
        tag = self.kp.secretKey.GetKeyTag()
        out = {}
        for name, write in (("relin", ofhe.CryptoContext.SerializeEvalMultKey),
                            ("automorphism", ofhe.CryptoContext.SerializeEvalAutomorphismKey)):
            fd, path = tempfile.mkstemp(prefix=f"openfhe-boot-{name}-")
            os.close(fd)
            try:
                if not write(path, ofhe.BINARY, tag):
                    raise RuntimeError(f"serializing the {name} keys failed")
                out[f"{name}_bytes"] = os.path.getsize(path)
            finally:
                os.remove(path)
        out["total_bytes"] = out["relin_bytes"] + out["automorphism_bytes"]
        # The automorphism indices of the keys held (rotations and the conjugation), OpenFHE >= 1.6.
        indices = getattr(self.cc, "GetExistingEvalAutomorphismKeyIndices", None)
        out["automorphism_count"] = len(indices(tag)) if indices else None
        out["counted"] = ("EvalMultKey (relinearization) + EvalAutomorphismKey (all rotation keys and the "
                          "conjugation key of EvalBootstrapKeyGen), OpenFHE BINARY serialization")
        return out


def actual_params(s, num_p):
    p, cc = s.params, s.cc
    q = q_primes(cc)
    q_bits = [round(math.log2(x), 2) for x in q]
    log_q = sum(math.log2(x) for x in q)
    dnum = context_field(cc, "dnum")
    return {
        "log_n": p["log_n"],
        "n": cc.GetRingDimension(),
        "slots": p["slots"],
        "level_budget": p["level_budget"],
        "depth": s.depth,
        "bootstrap_depth": s.depth - s.levels_after,
        "levels_after": s.levels_after,
        "num_q_primes": len(q),
        "q_bits": q_bits,
        "log_q": round(log_q, 1),
        "num_p_primes": num_p,
        "p_bits": None if num_p is None else [60] * num_p,  # OpenFHE's auxiliary primes are 60-bit
        "log_qp": None if num_p is None else round(log_q + 60 * num_p, 1),
        "dnum": dnum,
        "key_switching": f"HYBRID, NumLargeDigits={dnum}",
        "scale_bits": p["scale_bits"],
        "first_mod_bits": p["first_mod_bits"],
        "scaling": p["technique"],
        "secret": SECRETS[p["secret"]],
        "security": s.security_note,
    }


def bootstrap_calls(s, reps):
    """The answer to {"op": "bootstrap", "reps": reps}: each call timed, then its precision (untimed)."""
    reply = {"seconds": [], "cpu_seconds": [], "min_bits": [], "median_bits": [], "levels_left": []}
    for _ in range(reps):
        secs, cpu, out = s.bootstrap()
        m = s.measure(out)
        del out
        reply["seconds"].append(secs)
        reply["cpu_seconds"].append(cpu)
        for k in ("min_bits", "median_bits", "levels_left"):
            reply[k].append(m[k])
    reply["max_rss_bytes"] = peak_rss_bytes()
    return reply


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--params", default="{}", help="the set-up as JSON (see the module docstring); "
                                                  "missing keys take the defaults of OpenFHE's example at N = 2^16")
    args = ap.parse_args()
    params = dict(DEFAULTS)
    params.update(json.loads(args.params))
    unknown = sorted(set(params) - set(DEFAULTS))
    if unknown:
        peerlib.log(f"openfhe_bootstrap: ignoring parameters it does not use: {unknown}")
    if params["secret"] not in SECRETS:
        ap.error(f"secret must be one of {sorted(SECRETS)}")
    if params["slots"] < 1 or params["slots"] > 1 << (params["log_n"] - 1) or params["slots"] & (params["slots"] - 1):
        ap.error(f"slots must be a power of two <= N / 2 = {1 << (params['log_n'] - 1)}")

    s = Setup(params)
    peerlib.log(f"openfhe_bootstrap: depth {s.depth} ({s.security_note}); generating keys ...")
    s.keys()
    rss_after_keys = peak_rss_bytes()

    # One untimed bootstrapping: the check, and the warm-up of the timed calls.
    check_secs, check_cpu, out = s.bootstrap()
    check = s.measure(out)
    del out
    check.update(seconds=check_secs, cpu_seconds=check_cpu)

    # Key sizes. The number of special primes OpenFHE chose: a relinearization key is dnum pairs of polynomials
    # over Q*P, N coefficients of 8 bytes per prime.
    keys = s.key_sizes() if params["key_sizes"] else None
    num_p = None
    dnum = context_field(s.cc, "dnum")
    if keys and dnum:
        num_p = round(keys["relin_bytes"] / ((1 << params["log_n"]) * 8 * 2 * dnum)) - len(q_primes(s.cc))

    keygen = {k: round(v, 3) for k, v in s.timings.items()}
    keygen["keygen_s"] = round(s.timings["keypair_s"] + s.timings["mult_key_s"] + s.timings["bootstrap_keys_s"], 3)
    version = f"openfhe {ofhe.__version__} (python {sys.version.split()[0]}; OpenFHE wheel, OMP_NUM_THREADS=1)"
    peerlib.send({"ready": True, "impl": "openfhe", "version": version, "threads": 1, "pid": os.getpid(),
                  "ops": ["bootstrap"], "params": actual_params(s, num_p), "keygen": keygen, "keys": keys,
                  "max_rss_bytes": peak_rss_bytes(), "max_rss_after_keygen_bytes": rss_after_keys,
                  "check": check})
    peerlib.answer_commands({"bootstrap": lambda reps: bootstrap_calls(s, reps)})


if __name__ == "__main__":
    main()
