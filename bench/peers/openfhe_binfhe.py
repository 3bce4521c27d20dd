"""OpenFHE binfhe side of the PEGASUS comparison: FHEW/TFHE functional bootstrapping (EvalFunc), key switching and
CKKS <-> FHEW scheme switching, a benchmark process speaking the line protocol of peerlib.py, driven by
compare_pegasus.py.

Run through .venv-peers/openfhe/bin/python (CPython 3.10, the openfhe wheel). Single-threaded: OMP_NUM_THREADS=1
is set below before openfhe is imported.

Operations (--ops, comma-separated; each builds the context it needs, contexts are shared between operations):
  evalfunc:nega:SET:METHOD   EvalFunc of a negacyclic look-up table (f(m + p/2) = -f(m) mod p: any function of
                             the half domain [0, p/2), the sign carried by the other half): ONE bootstrapping.
                             SET a BINFHE_PARAMSET (STD128, STD128_LMKCDEY, STD128_AP, STD128Q_4_LMKCDEY, ...),
                             METHOD GINX (CGGI), LMKCDEY or AP (DM); p = GetMaxPlaintextSpace() of the set
  evalfunc:arb               EvalFunc of an arbitrary table on all of Z_p: TWO bootstrappings. Only in the context
                             GenerateBinFHEContext(STD128, arbFunc=True, logQ=12, method=GINX) (OpenFHE refuses
                             another method there, and refuses arbitrary tables wherever q > N, as in every
                             STD128* set)
  bootstrap:SET:METHOD       Bootstrap of an encrypted bit (the gate bootstrapping every EvalFunc is made of)
  ks:SET:METHOD              SwitchCTtoqn: the LWE key switch from (N, Q) to (n, q) that ends every bootstrapping
  sign:LOGQ[:dynamic]        EvalSign of a large-precision ciphertext modulo 2^LOGQ (GenerateBinFHEContext(STD128,
                             False, LOGQ, GINX); plaintext space 2^LOGQ / 2^12 * GetMaxPlaintextSpace());
                             :dynamic = timeOptimization (three bootstrapping keys, faster, 3x the key generation)
  ckks_to_fhew:SLOTS         EvalCKKStoFHEW of a CKKS ciphertext of SLOTS values into SLOTS LWE ciphertexts; the
                             answer is the time of one call DIVIDED BY SLOTS (the share of one LWE ciphertext,
                             including its share of the CKKS slots-to-coefficients linear transform)
  fhew_to_ckks:SLOTS         EvalFHEWtoCKKS of SLOTS LWE ciphertexts (those ckks_to_fhew made) back into one CKKS
                             ciphertext, per LWE ciphertext likewise (CKKS depth 13: ring 2^16, slow set-up)
  argmin:VALUES[:toy]        EvalMinSchemeSwitching: the minimum AND the one-hot arg-min of VALUES values of a CKKS
                             ciphertext, CKKS in and CKKS out (the tournament of OpenFHE's scheme-switching
                             example, ArgminViaSchemeSwitching: CKKS -> FHEW sign -> CKKS per round), at
                             HEStd_128_classic / STD128 (CKKS depth 13 + log2(VALUES): ring 2^16); ':toy' at
                             HEStd_NotSet / TOY with ring 2^13, for a smoke run only
Every timed call works on inputs encrypted once at setup; its output is dropped untimed. The ready line gives, per
operation, the parameters (n, N, q, Q, p, method, ...) and a correctness check of the evaluated function on every
input of Z_p (or of the switched values); --key-sizes adds the serialized size of the bootstrapping keys (BINARY,
through a temporary file; the STD128 keys are about 1 GB).
"""

import os
import sys

os.environ["OMP_NUM_THREADS"] = "1"  # before openfhe (and its OpenMP runtime) is loaded

import argparse  # noqa: E402
import math  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import peerlib  # noqa: E402

import openfhe as ofhe  # noqa: E402

ARB_LOGQ = 12  # the arbFunc context of OpenFHE's eval-function example: q = N = 2048
CKKS_DEPTH_TO_FHEW = 3            # OpenFHE's scheme-switching example: the slots-to-coefficients transform
CKKS_DEPTH_ROUND_TRIP = 3 + 9 + 1  # ... and back: 9 levels for the modular reduction, one for post-scaling
LWE_LOGQ_SWITCH = 25               # modulus 2^25 of the LWE ciphertexts CKKS -> FHEW produces


def log2(x):
    return round(math.log2(int(x)), 2)


def sigmoid_table(d, p, low=0):
    """A quantized sigmoid on [0, d) with values in [low, p - 1]:
    low + round((p - 1 - low) / (1 + exp(-(m - (d - 1) / 2) * 8 / d)))."""
    return [low + round((p - 1 - low) / (1.0 + math.exp(-(m - (d - 1) / 2.0) * 8.0 / d))) for m in range(d)]


class BinContext:
    """One BinFHEContext with its secret key and (unless `bootstrapping` is False) its bootstrapping keys."""

    def __init__(self, label, make, security, bootstrapping=True):
        self.label = label
        self.cc = ofhe.BinFHEContext()
        make(self.cc)
        self.security = security
        t0 = time.perf_counter()
        self.sk = self.cc.KeyGen()
        if bootstrapping:
            self.cc.BTKeyGen(self.sk)
        self.keygen_s = round(time.perf_counter() - t0, 2)
        self.key_bytes = None

    def params(self):
        cc = self.cc
        return {"context": self.label, "n": cc.Getn(), "N": cc.GetN(), "q": cc.Getq(), "Q": cc.GetQ(),
                "log_Q": log2(cc.GetQ()), "p_max": cc.GetMaxPlaintextSpace(), "beta": cc.GetBeta(),
                "keygen_s": self.keygen_s, "bootstrapping_key_bytes": self.key_bytes, "security": self.security}

    def measure_key(self):
        """The serialized size of the bootstrapping key set (refreshing + switching key), BINARY."""
        fd, path = tempfile.mkstemp(prefix="openfhe-btkey-")
        os.close(fd)
        try:
            ofhe.SerializeToFile(path, self.cc.GetBTKey(), ofhe.BINARY)
            self.key_bytes = os.path.getsize(path)
        finally:
            os.remove(path)


def security_of(pset):
    if pset.startswith("STD128Q"):
        return f"{pset}: OpenFHE's 128-bit post-quantum parameter set"
    if pset.startswith("STD128"):
        return f"{pset}: OpenFHE's 128-bit classical parameter set"
    return f"{pset}: OpenFHE parameter set (not 128-bit)"


class Contexts:
    """The contexts the operations need, each built once."""

    def __init__(self, key_sizes):
        self.key_sizes = key_sizes
        self.cache = {}

    def get(self, key, build):
        if key not in self.cache:
            peerlib.log(f"openfhe: building context {key} ...")
            ctx = build()
            if self.key_sizes and key[0] != "ks" and hasattr(ctx, "measure_key"):
                ctx.measure_key()
            self.cache[key] = ctx
        return self.cache[key]

    def standard(self, pset, method, bootstrapping=True):
        def build():
            make = lambda cc: cc.GenerateBinFHEContext(getattr(ofhe.BINFHE_PARAMSET, pset),
                                                       getattr(ofhe.BINFHE_METHOD, method))
            return BinContext(f"GenerateBinFHEContext({pset}, {method})", make, security_of(pset), bootstrapping)
        return self.get(("std" if bootstrapping else "ks", pset, method), build)

    def large(self, arb, log_q, dynamic=False):
        def build():
            make = lambda cc: cc.GenerateBinFHEContext(ofhe.STD128, arb, log_q, 0, ofhe.GINX, dynamic)
            label = (f"GenerateBinFHEContext(STD128, arbFunc={arb}, logQ={log_q}, GINX"
                     + (", timeOptimization)" if dynamic else ")"))
            return BinContext(label, make, "STD128 (128-bit classical): OpenFHE picks N for a 54-bit Q, n = 1305")
        return self.get(("large", arb, log_q, dynamic), build)


def op_evalfunc(ctxs, parts):
    kind = parts[0]
    if kind == "arb":
        if len(parts) != 1:
            raise ValueError("evalfunc:arb takes no set or method (its context is STD128, arbFunc, GINX)")
        ctx = ctxs.large(True, ARB_LOGQ)
    elif kind == "nega":
        if len(parts) != 3:
            raise ValueError("expected evalfunc:nega:SET:METHOD")
        ctx = ctxs.standard(parts[1], parts[2])
    else:
        raise ValueError(f"unknown evalfunc kind {kind!r}: nega or arb")
    cc, sk = ctx.cc, ctx.sk
    p = cc.GetMaxPlaintextSpace()
    if kind == "arb":
        want = sigmoid_table(p, p)
    else:
        # No zero in the table: OpenFHE recognizes a negacyclic table by LUT[i + q/2] == q - LUT[i], which a 0
        # cannot satisfy (it would take the table for an arbitrary one and refuse it, q > N).
        half = sigmoid_table(p // 2, p, low=1)
        want = half + [(p - v) % p for v in half]
    lut = cc.GenerateLUTviaFunction(lambda m, pp: want[int(m)], p)
    cts = [cc.Encrypt(sk, m, ofhe.BINFHE_OUTPUT.FRESH, p) for m in range(p)]
    got = [cc.Decrypt(sk, cc.EvalFunc(ct, lut), p) for ct in cts]
    wrong = sum(g != w for g, w in zip(got, want))
    ct = cts[p // 2 - 1]
    params = dict(ctx.params(), p=p, lut_entries=len(lut),
                  function=("quantized sigmoid on all of Z_p (2 bootstrappings)" if kind == "arb" else
                            "quantized sigmoid on [0, p/2), negacyclic extension (1 bootstrapping)"))
    check = {"inputs": p, "wrong": wrong, "table": want, "decrypted": got}
    return peerlib.timed(lambda: cc.EvalFunc(ct, lut)), params, check


def op_bootstrap(ctxs, parts):
    if len(parts) != 2:
        raise ValueError("expected bootstrap:SET:METHOD")
    ctx = ctxs.standard(parts[0], parts[1])
    cc, sk = ctx.cc, ctx.sk
    cts = [cc.Encrypt(sk, b) for b in (0, 1)]
    wrong = sum(cc.Decrypt(sk, cc.Bootstrap(ct)) != b for b, ct in zip((0, 1), cts))
    return peerlib.timed(lambda: cc.Bootstrap(cts[1])), ctx.params(), {"inputs": 2, "wrong": wrong}


def op_ks(ctxs, parts):
    if len(parts) != 2:
        raise ValueError("expected ks:SET:METHOD")
    # No bootstrapping keys: the switching key from an N-dimensional key modulo Q to the n-dimensional key is
    # made with KeySwitchGen (the 64-bit key, about 1.7 GB for STD128; the bootstrapping keys keep theirs in a
    # 32-bit form that Python cannot pass to SwitchCTtoqn).
    ctx = ctxs.standard(parts[0], parts[1], bootstrapping=False)
    cc, sk = ctx.cc, ctx.sk
    sk_n = cc.KeyGenN()
    t0 = time.perf_counter()
    ksk = cc.KeySwitchGen(sk, sk_n)
    ksk_s = round(time.perf_counter() - t0, 2)
    cts = [cc.Encrypt(sk_n, b, ofhe.BINFHE_OUTPUT.FRESH, 4, cc.GetQ()) for b in range(4)]
    outs = [cc.SwitchCTtoqn(ksk, ct) for ct in cts]
    wrong = sum(cc.Decrypt(sk, out, 4) != b for b, out in enumerate(outs))
    params = dict(ctx.params(), from_dimension=cts[0].GetLength(), from_modulus=cts[0].GetModulus(),
                  to_dimension=outs[0].GetLength(), to_modulus=outs[0].GetModulus(), switching_keygen_s=ksk_s)
    params.pop("keygen_s")
    return peerlib.timed(lambda: cc.SwitchCTtoqn(ksk, cts[1])), params, {"inputs": 4, "wrong": wrong}


def op_sign(ctxs, parts):
    if not parts or len(parts) > 2 or (len(parts) == 2 and parts[1] != "dynamic"):
        raise ValueError("expected sign:LOGQ or sign:LOGQ:dynamic")
    log_q = int(parts[0])
    ctx = ctxs.large(False, log_q, dynamic=len(parts) == 2)
    cc, sk = ctx.cc, ctx.sk
    big_q = 1 << log_q
    # OpenFHE's eval-sign example: the plaintext space of a modulus-2^LOGQ ciphertext is
    # GetMaxPlaintextSpace() * 2^LOGQ / q.
    p = cc.GetMaxPlaintextSpace() * big_q // cc.Getq()
    inputs = [p // 2 + i - 4 for i in range(8)] + [0, 1, p // 4, p - 1]
    cts = [cc.Encrypt(sk, m, ofhe.BINFHE_OUTPUT.LARGE_DIM, p, big_q) for m in inputs]
    want = [int(m >= p // 2) for m in inputs]
    got = [cc.Decrypt(sk, cc.EvalSign(ct), 2) for ct in cts]
    params = dict(ctx.params(), input_modulus=big_q, p=p, p_bits=log2(p))
    check = {"inputs": len(inputs), "wrong": sum(g != w for g, w in zip(got, want))}
    return peerlib.timed(lambda: cc.EvalSign(cts[0])), params, check


def scheme_switch_context(depth, slots, toy=False):
    """(context, keys, scheme-switching parameters) of OpenFHE's scheme-switching examples: CKKS of `depth`
    levels (60-bit first prime, 50-bit scaling primes, FIXEDMANUAL) with `slots` slots, and the FHEW side
    with the large-precision modulus 2^LWE_LOGQ_SWITCH; HEStd_128_classic / STD128, or HEStd_NotSet / TOY at
    ring 2^13 when `toy` (smoke runs only). The caller finishes the parameters and runs the setup."""
    sl_ckks = ofhe.HEStd_NotSet if toy else ofhe.HEStd_128_classic
    par = ofhe.CCParamsCKKSRNS()
    par.SetMultiplicativeDepth(depth)
    par.SetFirstModSize(60)
    par.SetScalingModSize(50)
    par.SetScalingTechnique(ofhe.FIXEDMANUAL)
    par.SetSecurityLevel(sl_ckks)
    if toy:
        par.SetRingDim(8192)
    par.SetBatchSize(slots)
    cc = ofhe.GenCryptoContext(par)
    for feature in (ofhe.PKE, ofhe.KEYSWITCH, ofhe.LEVELEDSHE, ofhe.ADVANCEDSHE, ofhe.SCHEMESWITCH):
        cc.Enable(feature)
    keys = cc.KeyGen()
    sp = ofhe.SchSwchParams()
    sp.SetSecurityLevelCKKS(sl_ckks)
    sp.SetSecurityLevelFHEW(ofhe.TOY if toy else ofhe.STD128)
    sp.SetCtxtModSizeFHEWLargePrec(LWE_LOGQ_SWITCH)
    sp.SetNumSlotsCKKS(slots)
    sp.SetNumValues(slots)
    return cc, keys, sp


class SchemeSwitch:
    """A CKKS context at 128-bit security with the FHEW context of its scheme switching (OpenFHE's scheme-switching
    example at HEStd_128_classic / STD128), and a CKKS ciphertext of `slots` small integers.

    The LWE ciphertexts carry the large-precision plaintext space p = 2^25 / (2 beta) (the example's "large
    precision"), as PEGASUS's LWE ciphertexts carry Delta x at a large scale: FHEW -> CKKS returns
    p / (2 pi) sin(2 pi x / p), which is x only for |x| much smaller than p."""

    def __init__(self, slots, round_trip):
        t0 = time.perf_counter()
        cc, keys, sp = scheme_switch_context(CKKS_DEPTH_ROUND_TRIP if round_trip else CKKS_DEPTH_TO_FHEW, slots)
        if round_trip:
            self.sk_fhew = cc.EvalSchemeSwitchingSetup(sp)
            cc.EvalSchemeSwitchingKeyGen(keys, self.sk_fhew)
        else:
            self.sk_fhew = cc.EvalCKKStoFHEWSetup(sp)
            cc.EvalCKKStoFHEWKeyGen(keys, self.sk_fhew)
        self.lwe = cc.GetBinCCForSchemeSwitch()
        self.p = (1 << LWE_LOGQ_SWITCH) // (2 * self.lwe.GetBeta())
        cc.EvalCKKStoFHEWPrecompute(1.0 / self.p)
        self.cc, self.keys, self.slots = cc, keys, slots
        self.x = [float(i % 16) for i in range(slots)]
        self.ct = cc.Encrypt(keys.publicKey, cc.MakeCKKSPackedPlaintext(self.x, 1, 0, None, slots))
        self.setup_s = round(time.perf_counter() - t0, 1)

    def params(self):
        cc, lwe = self.cc, self.lwe
        return {"ckks_ring_dim": cc.GetRingDimension(), "ckks_log_q": log2(cc.GetModulus()), "slots": self.slots,
                "fhew_n": lwe.Getn(), "fhew_N": lwe.GetN(), "fhew_q": lwe.Getq(), "lwe_modulus": 1 << LWE_LOGQ_SWITCH,
                "p": self.p, "setup_s": self.setup_s, "per": "LWE ciphertext (one call's time / slots)",
                "security": "HEStd_128_classic (CKKS) and STD128 (FHEW)"}


def op_ckks_to_fhew(ctxs, parts, round_trip=False):
    if len(parts) != 1:
        raise ValueError("expected ckks_to_fhew:SLOTS or fhew_to_ckks:SLOTS")
    slots = int(parts[0])
    ss = ctxs.get(("switch", slots, round_trip), lambda: SchemeSwitch(slots, round_trip))
    cc = ss.cc
    lwes = cc.EvalCKKStoFHEW(ss.ct, slots)
    got = [ss.lwe.Decrypt(ss.sk_fhew, ct, ss.p) for ct in lwes]
    wrong = sum(g != int(x) for g, x in zip(got, ss.x))
    check = {"inputs": slots, "wrong": wrong, "lwe_dimension": lwes[0].GetLength(),
             "lwe_modulus": lwes[0].GetModulus()}
    params = ss.params()
    if not round_trip:
        return per_ciphertext(lambda: cc.EvalCKKStoFHEW(ss.ct, slots), slots), params, check

    def back():
        return cc.EvalFHEWtoCKKS(lwes, slots, slots, ss.p, 0, ss.p)
    dec = cc.Decrypt(ss.keys.secretKey, back())
    dec.SetLength(slots)
    err = max(abs(v - x) for v, x in zip(dec.GetRealPackedValue(), ss.x))
    check = {"inputs": slots, "max_error": err, "bits": -math.log2(err) if err > 0 else None}
    return per_ciphertext(back, slots), params, check


class ArgMin:
    """OpenFHE's scheme-switching arg-min (EvalMinSchemeSwitching, its example ArgminViaSchemeSwitching) on one
    CKKS ciphertext of `values` values: a CKKS context of depth 13 (FHEW -> CKKS: 3 levels of the linear
    transform, 9 of the modular reduction, 1 of post-scaling) plus log2(values) for the rounds of the tournament,
    its scheme-switching keys with SetComputeArgmin(True), and the comparison precomputation of the example
    (plaintext space 2^25 / (2 beta), inputs scaled by 512 before the sign). Security HEStd_128_classic for CKKS
    (OpenFHE picks the ring: 2^16 at this depth) and STD128 for FHEW, unless `toy`."""

    SCALE_SIGN = 512  # the example's scale of the differences before the switch to FHEW

    def __init__(self, values, toy):
        t0 = time.perf_counter()
        if values < 2 or values & (values - 1):
            raise ValueError(f"argmin needs a power of two >= 2 values, not {values}")
        cc, keys, sp = scheme_switch_context(CKKS_DEPTH_ROUND_TRIP + int(math.log2(values)), values, toy)
        sp.SetComputeArgmin(True)
        sk_fhew = cc.EvalSchemeSwitchingSetup(sp)
        cc.EvalSchemeSwitchingKeyGen(keys, sk_fhew)
        self.lwe = cc.GetBinCCForSchemeSwitch()
        self.p = (1 << LWE_LOGQ_SWITCH) // (2 * self.lwe.GetBeta())
        cc.EvalCompareSwitchPrecompute(self.p, self.SCALE_SIGN)
        self.cc, self.keys, self.values, self.toy = cc, keys, values, toy
        self.x = peerlib.argmin_inputs(values)
        self.ct = cc.Encrypt(keys.publicKey, cc.MakeCKKSPackedPlaintext(self.x, 1, 0, None, values))
        self.setup_s = round(time.perf_counter() - t0, 1)

    def call(self):
        return self.cc.EvalMinSchemeSwitching(self.ct, self.keys.publicKey, self.values, self.values)

    def params(self):
        cc, lwe = self.cc, self.lwe
        return {"ckks_ring_dim": cc.GetRingDimension(), "ckks_log_q": log2(cc.GetModulus()), "values": self.values,
                "fhew_n": lwe.Getn(), "fhew_N": lwe.GetN(), "fhew_q": lwe.Getq(), "p": self.p,
                "setup_s": self.setup_s, "per": "call: the minimum and the one-hot arg-min of all values",
                "security": ("HEStd_NotSet / TOY (smoke run, NOT secure)" if self.toy
                             else "HEStd_128_classic (CKKS) and STD128 (FHEW)")}


def op_argmin(ctxs, parts):
    if len(parts) not in (1, 2) or (len(parts) == 2 and parts[1] != "toy"):
        raise ValueError("expected argmin:VALUES or argmin:VALUES:toy")
    values, toy = int(parts[0]), len(parts) == 2
    am = ctxs.get(("argmin", values, toy), lambda: ArgMin(values, toy))
    got_min, got_arg = am.call()
    dec = am.cc.Decrypt(am.keys.secretKey, got_min)
    dec.SetLength(1)
    m = dec.GetRealPackedValue()[0]
    dec = am.cc.Decrypt(am.keys.secretKey, got_arg)
    dec.SetLength(am.values)
    onehot = [round(v) for v in dec.GetRealPackedValue()]
    want = [int(v == min(am.x)) for v in am.x]
    check = {"inputs": am.values, "min_error": abs(m - min(am.x)),
             "argmin_wrong": sum(int(a != b) for a, b in zip(onehot, want))}
    return peerlib.timed(am.call), am.params(), check


def per_ciphertext(fn, count):
    """A timed call of fn, reported as its share of one of `count` ciphertexts."""
    run = peerlib.timed(fn)
    return lambda: run() / count


BUILDERS = {
    "evalfunc": op_evalfunc,
    "bootstrap": op_bootstrap,
    "ks": op_ks,
    "sign": op_sign,
    "ckks_to_fhew": op_ckks_to_fhew,
    "fhew_to_ckks": lambda ctxs, parts: op_ckks_to_fhew(ctxs, parts, round_trip=True),
    "argmin": op_argmin,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", required=True, help="comma-separated operations (see the module documentation)")
    ap.add_argument("--key-sizes", action="store_true",
                    help="serialize every bootstrapping key set once to measure its size (about 1 GB each)")
    args = ap.parse_args()
    ctxs = Contexts(args.key_sizes)
    ops, params, check = {}, {}, {}
    for name in [s.strip() for s in args.ops.split(",") if s.strip()]:
        head, *parts = name.split(":")
        try:
            if head not in BUILDERS:
                raise ValueError(f"unknown operation {name!r}; known: {', '.join(BUILDERS)}")
            ops[name], params[name], check[name] = BUILDERS[head](ctxs, parts)
        except Exception as e:  # an operation OpenFHE refuses is reported, the others still run
            peerlib.log(f"openfhe: {name}: {type(e).__name__}: {e}")
            check[name] = {"error": f"{type(e).__name__}: {e}"}
    version = f"openfhe {ofhe.__version__} (binfhe; python {sys.version.split()[0]}; OpenFHE wheel, OMP_NUM_THREADS=1)"
    peerlib.serve("openfhe", version, params, ops, check)


if __name__ == "__main__":
    main()
