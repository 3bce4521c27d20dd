"""SEAL side of the Table 1 comparison: a benchmark process speaking the line protocol of peerlib.py.

Run through .venv-peers/seal/bin/python (CPython >= 3.11, tenseal). Uses Microsoft SEAL's own API as TenSEAL
exposes it (tenseal.sealapi), not TenSEAL's tensors. SEAL is single-threaded.

Mapping of the parameters (see README.md):
  coeff_modulus = CoeffModulus.Create(2^log_n, q_bits + [special]), poly_modulus_degree = 2^log_n, scale 2^scale_bits.
  SEAL's key switching always uses exactly ONE special prime (the last prime of coeff_modulus) and decomposes per
  RNS prime (in OpenFHE's terms dnum = number of q primes, one prime per digit): neither p_bits beyond one prime nor
  dnum can be passed on. The special prime gets max(p_bits) bits (at most 60, SEAL's limit for a prime).
  Security: sec_level_type.tc128 first; if SEAL rejects the parameters under it (log QP above its table, or N =
  2^16, which its table does not list), sec_level_type.none, and says so.
"""

import math
import os
import struct
import sys
import tempfile
import time

import peerlib

import tenseal
import tenseal.sealapi as seal


def seal_version(ct):
    """Reads SEAL's version from the header SEAL writes in front of every serialized object."""
    fd, path = tempfile.mkstemp(suffix=".seal")
    os.close(fd)
    try:
        ct.save(path)
        with open(path, "rb") as f:
            head = f.read(16)
    finally:
        os.unlink(path)
    magic, _hsize, major, minor = struct.unpack("<HBBB", head[:5])
    return f"{major}.{minor}" if magic == 0xA15E else "unknown"


def main():
    params = peerlib.parse_args(__doc__.splitlines()[0])
    log_n = params["log_n"]
    n = 1 << log_n
    slots = n // 2
    special_bits = min(max(params["p_bits"]), 60)
    bit_sizes = list(params["q_bits"]) + [special_bits]
    scale = 2.0 ** params["scale_bits"]

    parms = seal.EncryptionParameters(seal.SCHEME_TYPE.CKKS)
    parms.set_poly_modulus_degree(n)
    parms.set_coeff_modulus(seal.CoeffModulus.Create(n, bit_sizes))
    context = seal.SEALContext(parms, True, seal.SEC_LEVEL_TYPE.TC128)
    security_note = "tc128 (SEAL's check passed)"
    if not context.parameters_set():
        why = context.parameters_error_message()
        peerlib.log(f"seal: tc128 refused ({why}); using sec_level_type.none")
        context = seal.SEALContext(parms, True, seal.SEC_LEVEL_TYPE.NONE)
        security_note = f"sec_level_type.none: security check DISABLED (SEAL refused tc128: {why})"
        if not context.parameters_set():
            raise SystemExit(f"seal: parameters invalid: {context.parameters_error_message()}")

    encoder = seal.CKKSEncoder(context)
    evaluator = seal.Evaluator(context)

    # The binding resolves create_galois_keys(list) to SEAL's overload taking Galois ELEMENTS, not steps: pass
    # the element of a rotation by one slot (3 mod 2N), as SEAL's GaloisTool computes it.
    rot1_elt = context.key_context_data().galois_tool().get_elt_from_step(1)

    def keygen():
        kg = seal.KeyGenerator(context)          # secret key
        pk = seal.PublicKey()
        kg.create_public_key(pk)
        rk = seal.RelinKeys()
        kg.create_relin_keys(rk)
        gk = seal.GaloisKeys()
        kg.create_galois_keys([rot1_elt], gk)    # rotation by 1 slot (see rot1_elt)
        return kg.secret_key(), pk, rk, gk

    sk, pk, rk, gk = keygen()
    encryptor = seal.Encryptor(context, pk)
    decryptor = seal.Decryptor(context, sk)

    x = peerlib.test_vector(slots, 1)
    y = peerlib.test_vector(slots, 2)
    c = peerlib.test_vector(slots, 3)

    def enc(v):
        pt = seal.Plaintext()
        encoder.encode(v, scale, pt)
        ct = seal.Ciphertext()
        encryptor.encrypt(pt, ct)
        return pt, ct

    pt_x, ct_x = enc(x)
    _, ct_y = enc(y)
    pt_c = seal.Plaintext()
    encoder.encode(c, scale, pt_c)               # the constant vector of CMult, encoded once at the top level
    ct_x_l0 = seal.Ciphertext()
    evaluator.mod_switch_to(ct_x, context.last_parms_id(), ct_x_l0)

    # Destinations, reused from call to call (SEAL's usual style; its memory pool makes reuse cheap anyway).
    out = seal.Ciphertext()
    out_pt = seal.Plaintext()
    out_ct = seal.Ciphertext()

    def dec(ct):
        p = seal.Plaintext()
        decryptor.decrypt(ct, p)
        return encoder.decode_double(p)

    def mult_rs():
        evaluator.multiply(ct_x, ct_y, out)
        evaluator.relinearize_inplace(out, rk)
        evaluator.rescale_to_next_inplace(out)
        return out

    def cmult():
        evaluator.multiply_plain(ct_x, pt_c, out)
        evaluator.rescale_to_next_inplace(out)
        return out

    def rotate():
        evaluator.rotate_vector(ct_x, 1, gk, out)
        return out

    def add():
        evaluator.add(ct_x, ct_y, out)
        return out

    def encode_encrypt():
        encoder.encode(x, scale, out_pt)
        encryptor.encrypt(out_pt, out_ct)
        return out_ct

    def encrypt():
        encryptor.encrypt(pt_x, out_ct)
        return out_ct

    def decrypt_decode(ct):
        decryptor.decrypt(ct, out_pt)
        return encoder.decode_double(out_pt)     # a Python list of N/2 floats (the binding's only decode)

    check = {
        "encode_encrypt_bits": peerlib.max_err_bits(dec(encode_encrypt()), x),
        "add_bits": peerlib.max_err_bits(dec(add()), [a + b for a, b in zip(x, y)]),
        "cmult_bits": peerlib.max_err_bits(dec(cmult()), [a * b for a, b in zip(x, c)]),
        "mult_rs_bits": peerlib.max_err_bits(dec(mult_rs()), [a * b for a, b in zip(x, y)]),
        "decrypt_l0_bits": peerlib.max_err_bits(dec(ct_x_l0), x),
        "rotate_bits": peerlib.max_err_bits(dec(rotate()), x[1:] + x[:1]),
    }

    def op_keygen():
        t0 = time.perf_counter()
        keys = keygen()
        t1 = time.perf_counter()
        del keys
        return t1 - t0

    ops = {
        "keygen": op_keygen,
        "encode_encrypt": peerlib.timed(encode_encrypt),
        "encrypt": peerlib.timed(encrypt),
        "decrypt_decode": peerlib.timed(lambda: decrypt_decode(ct_x)),
        "decrypt_decode_l0": peerlib.timed(lambda: decrypt_decode(ct_x_l0)),
        "add": peerlib.timed(add),
        "cmult": peerlib.timed(cmult),
        "mult_rs": peerlib.timed(mult_rs),
        "rotate": peerlib.timed(rotate),
    }

    first = context.first_context_data()
    key = context.key_context_data()
    log_q = first.total_coeff_modulus_bit_count()
    actual = {
        "log_n": log_n,
        "n": n,
        "slots": slots,
        "q_bits": [m.bit_count() for m in first.parms().coeff_modulus()],
        "num_q_primes": len(params["q_bits"]),
        "log_q": log_q,
        "num_p_primes": 1,
        "p_bits": [special_bits],
        "log_qp": key.total_coeff_modulus_bit_count(),
        "scale_bits": params["scale_bits"],
        "dnum": len(params["q_bits"]),
        "key_switching": "SEAL: one special prime, one digit per q prime (dnum = number of q primes)",
        "scaling": "rescale_to_next (divide by the last prime; scale tracked exactly)",
        "secret": "uniform ternary (SEAL)",
        "security": security_note,
    }
    version = (f"SEAL {seal_version(ct_x)} via tenseal {tenseal.__version__} "
               f"(python {sys.version.split()[0]}; tenseal.sealapi)")
    peerlib.serve("seal", version, actual, ops, check)


if __name__ == "__main__":
    main()
