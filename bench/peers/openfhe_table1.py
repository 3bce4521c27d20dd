"""OpenFHE side of the Table 1 comparison: a benchmark process speaking the line protocol of peerlib.py.

Run through .venv-peers/openfhe/bin/python (CPython 3.10, the openfhe wheel). Single-threaded: OMP_NUM_THREADS=1
is set below before openfhe is imported.

Mapping of the parameters (see README.md):
  multiplicative depth = len(q_bits) - 1, FirstModSize = q_bits[0], ScalingModSize = q_bits[1] (all q_i, i >= 1,
  must be equal), ScalingTechnique = FIXEDMANUAL (we call Rescale ourselves), KeySwitchTechnique = HYBRID with
  NumLargeDigits = dnum, RingDim = 2^log_n, BatchSize = 2^(log_n - 1) (all slots).
  OpenFHE chooses its special primes itself (60-bit primes, as many as the largest digit needs): the script
  measures how many it chose (from the size of the relinearization key) and reports it; the driver warns when
  it differs from p_bits.
  Security: HEStd_128_classic first; if OpenFHE refuses the parameters for it, HEStd_NotSet, and says so.
"""

import os
import sys

os.environ["OMP_NUM_THREADS"] = "1"  # before openfhe (and its OpenMP runtime) is loaded

import math  # noqa: E402
import time  # noqa: E402

import peerlib  # noqa: E402

import openfhe as ofhe  # noqa: E402


def build_context(params, security):
    q_bits = params["q_bits"]
    if len(set(q_bits[1:])) > 1:
        raise SystemExit(f"openfhe: all scaling primes must have one bit size, got {q_bits[1:]}")
    if len(q_bits) > 1 and params["scale_bits"] != q_bits[1]:
        raise SystemExit("openfhe: FIXEDMANUAL needs scale_bits == q_bits[1] (OpenFHE's ScalingModSize)")
    p = ofhe.CCParamsCKKSRNS()
    p.SetMultiplicativeDepth(len(q_bits) - 1)
    p.SetFirstModSize(q_bits[0])
    p.SetScalingModSize(params["scale_bits"])
    p.SetRingDim(1 << params["log_n"])
    p.SetBatchSize(1 << (params["log_n"] - 1))
    p.SetScalingTechnique(ofhe.FIXEDMANUAL)
    p.SetKeySwitchTechnique(ofhe.HYBRID)
    p.SetNumLargeDigits(params["dnum"])
    p.SetSecurityLevel(security)
    cc = ofhe.GenCryptoContext(p)
    for feature in (ofhe.PKESchemeFeature.PKE, ofhe.PKESchemeFeature.KEYSWITCH, ofhe.PKESchemeFeature.LEVELEDSHE):
        cc.Enable(feature)
    return cc


def main():
    params = peerlib.parse_args(__doc__.splitlines()[0])
    log_n = params["log_n"]
    n = 1 << log_n
    slots = n // 2

    security_note = "HEStd_128_classic (OpenFHE's check passed)"
    try:
        cc = build_context(params, ofhe.HEStd_128_classic)
    except Exception as e:  # OpenFHE raises when log QP is too large for 128-bit security at this N
        peerlib.log(f"openfhe: HEStd_128_classic refused ({e}); using HEStd_NotSet")
        cc = build_context(params, ofhe.HEStd_NotSet)
        security_note = "HEStd_NotSet: security check DISABLED (OpenFHE refused 128-bit for these parameters)"

    # ---- keys ----
    def keygen():
        kp = cc.KeyGen()                               # secret + public key
        cc.EvalMultKeyGen(kp.secretKey)                # relinearization key
        cc.EvalRotateKeyGen(kp.secretKey, [1])         # rotation by 1
        return kp

    kp = keygen()

    # Number of special primes OpenFHE chose: a relinearization key is dnum pairs of polynomials over Q*P.
    ks = ofhe.SerializeEvalMultKeyString(ofhe.BINARY, "")
    limbs_qp = len(ks) / (n * 8 * 2 * params["dnum"])
    num_p = round(limbs_qp) - len(params["q_bits"])

    log_q = math.log2(cc.GetModulus())

    # ---- inputs (encrypted once) ----
    x = peerlib.test_vector(slots, 1)
    y = peerlib.test_vector(slots, 2)
    c = peerlib.test_vector(slots, 3)
    pt_x = cc.MakeCKKSPackedPlaintext(x)
    pt_y = cc.MakeCKKSPackedPlaintext(y)
    pt_c = cc.MakeCKKSPackedPlaintext(c)      # the constant vector of CMult, encoded once at the top level
    ct_x = cc.Encrypt(kp.publicKey, pt_x)
    ct_y = cc.Encrypt(kp.publicKey, pt_y)
    # A ciphertext at the lowest level (one prime), for decrypt_decode_l0.
    ct_x_l0 = cc.LevelReduce(ct_x, None, len(params["q_bits"]) - 1)

    # ---- correctness check of every timed operation (not timed) ----
    def dec(ct, k=slots):
        return list(cc.Decrypt(kp.secretKey, ct).GetRealPackedValue())[:k]

    check = {
        "encode_encrypt_bits": peerlib.max_err_bits(dec(cc.Encrypt(kp.publicKey, cc.MakeCKKSPackedPlaintext(x))), x),
        "add_bits": peerlib.max_err_bits(dec(cc.EvalAdd(ct_x, ct_y)), [a + b for a, b in zip(x, y)]),
        "cmult_bits": peerlib.max_err_bits(dec(cc.Rescale(cc.EvalMult(ct_x, pt_c))), [a * b for a, b in zip(x, c)]),
        "mult_rs_bits": peerlib.max_err_bits(dec(cc.Rescale(cc.EvalMult(ct_x, ct_y))), [a * b for a, b in zip(x, y)]),
        "decrypt_l0_bits": peerlib.max_err_bits(dec(ct_x_l0), x),
        "rotate_bits": peerlib.max_err_bits(dec(cc.EvalRotate(ct_x, 1)), x[1:] + x[:1]),
    }

    # ---- timed operations: each callable performs one call and returns its seconds ----
    def op_keygen():
        t0 = time.perf_counter()
        kp2 = keygen()
        t1 = time.perf_counter()
        # Not timed: OpenFHE keeps evaluation keys in global maps keyed by the secret key's tag; drop them all
        # and regenerate the evaluation keys of the key pair the other operations use.
        del kp2
        ofhe.ClearEvalMultKeys()
        cc.ClearEvalAutomorphismKeys()
        cc.EvalMultKeyGen(kp.secretKey)
        cc.EvalRotateKeyGen(kp.secretKey, [1])
        return t1 - t0

    ops = {
        # KeyGen: secret + public key, relinearization key, rotation key for step 1.
        "keygen": op_keygen,
        # Encode (Python list of N/2 reals -> plaintext at the top level, scale 2^scale_bits) + public-key encrypt.
        "encode_encrypt": peerlib.timed(lambda: cc.Encrypt(kp.publicKey, cc.MakeCKKSPackedPlaintext(x))),
        # Encrypt alone (plaintext encoded once): not in the paper's table, free of Python list conversion.
        "encrypt": peerlib.timed(lambda: cc.Encrypt(kp.publicKey, pt_x)),
        # Decrypt + decode (OpenFHE's Decrypt decodes; the N/2 real values are then copied out as an array).
        "decrypt_decode": peerlib.timed(lambda: cc.Decrypt(kp.secretKey, ct_x).GetRealPackedValueArray()),
        # The same for a ciphertext at the lowest level (one prime q0), as after a full computation.
        "decrypt_decode_l0": peerlib.timed(lambda: cc.Decrypt(kp.secretKey, ct_x_l0).GetRealPackedValueArray()),
        # Add two top-level ciphertexts into a new one.
        "add": peerlib.timed(lambda: cc.EvalAdd(ct_x, ct_y)),
        # Multiply a top-level ciphertext by a pre-encoded plaintext vector, then rescale.
        "cmult": peerlib.timed(lambda: cc.Rescale(cc.EvalMult(ct_x, pt_c))),
        # Multiply two top-level ciphertexts, relinearize (EvalMult does it), rescale.
        "mult_rs": peerlib.timed(lambda: cc.Rescale(cc.EvalMult(ct_x, ct_y))),
        # Rotate a top-level ciphertext by one slot (left).
        "rotate": peerlib.timed(lambda: cc.EvalRotate(ct_x, 1)),
    }

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
        "scaling": "FIXEDMANUAL",
        "secret": "uniform ternary (OpenFHE default UNIFORM_TERNARY)",
        "security": security_note,
    }
    version = f"openfhe {ofhe.__version__} (python {sys.version.split()[0]}; OpenFHE wheel, OMP_NUM_THREADS=1)"
    peerlib.serve("openfhe", version, actual, ops, check)


if __name__ == "__main__":
    main()
