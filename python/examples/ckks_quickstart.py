"""CKKS quickstart: the mean and the variance of a vector, computed on its encryption.

One concept: a Session (keys, encryptor, decryptor, evaluator) and numpy-like arithmetic on a Ciphertext.
The data owner encrypts 1000 values; the evaluator computes

    mean     = sum(x) / n
    variance = sum(x^2) / n - mean^2

without seeing them (ct.sum() puts the sum of all slots in every slot); the owner decrypts two numbers.

Run with the virtualenv of `make test` / `make demo`:  .venv/bin/python python/examples/ckks_quickstart.py
"""

import numpy as np

from rnsfhe import ckks


def main() -> None:
    """Encrypts 1000 temperatures, computes their mean and variance encrypted, checks them against numpy."""
    x = np.random.default_rng(7).normal(20.0, 5.0, 1000)  # 1000 temperatures
    n = len(x)

    # Preset "Rec128N13": N = 2^13 (4096 slots), scale 2^40, depth 3, 128-bit security. The Session makes the
    # keys ct.sum() needs and rescales after each multiplication.
    session = ckks.Session("Rec128N13")
    ct = session.encrypt(x)  # 1000 values in 4096 slots, the rest zero

    mean = ct.sum() * (1 / n)  # one level
    variance = (ct * ct).sum() * (1 / n) - mean * mean  # two levels
    print(f"ciphertexts: {ct} -> mean {mean}, variance {variance}")

    got_mean = session.decrypt(mean, real=True)[0]
    got_var = session.decrypt(variance, real=True)[0]
    want_mean, want_var = np.mean(x), np.var(x)
    print(f"mean:     encrypted {got_mean:.9f}   numpy {want_mean:.9f}")
    print(f"variance: encrypted {got_var:.9f}   numpy {want_var:.9f}")
    stats = ckks.precision([want_mean, want_var], [got_mean, got_var])
    print(f"precision: {stats.min_bits:.1f} bits (worst of the two)")
    if stats.min_bits < 10:
        raise SystemExit("the encrypted statistics are not precise enough")


if __name__ == "__main__":
    main()
