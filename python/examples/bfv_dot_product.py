"""BFV dot product: an exact encrypted inner product in one multiplication, by coefficient encoding.

One concept: with coefficient encoding the values are the coefficients of a polynomial, and products are
products of polynomials. Encrypt the quantities q_0 ... q_{n-1} as q(X) = sum q_i X^i and write the prices
in reverse order, p(X) = sum p_i X^(N-1-i). In q(X) p(X) the coefficient of X^(N-1) collects exactly the
terms q_i p_i, so it is the dot product sum q_i p_i: one plaintext multiplication, no rotation keys.

A shop (the server) holds the price list in the clear; a customer (the data owner) encrypts the basket.
The shop returns an encryption of the total without learning what was bought; the customer decrypts it.
The result is exact modulo t = 2^32, so any total below 2^31 comes out exactly.

Run with the virtualenv of `make test` / `make demo`:  .venv/bin/python python/examples/bfv_dot_product.py
"""

import numpy as np

from rnsfhe import bfv


def main() -> None:
    """Encrypts a basket of 1000 quantities, prices it under encryption, checks the total against numpy."""
    rng = np.random.default_rng(11)
    quantities = rng.integers(0, 20, 1000)  # the customer's secret basket
    prices = rng.integers(1, 50_000, 1000)  # the shop's public prices, in cents

    # t = 2^32 (coefficient encoding works with any t), depth 1: N = 2^13, 128-bit security.
    ctx = bfv.Context.generate(t=2**32, depth=1)
    session = bfv.Session(ctx)  # the customer's keys
    basket = session.encrypt(quantities)  # ctx.encoding is "coeff": t = 2^32 does not allow batching

    # The shop: prices in reverse order (coefficient N-1-i), one ciphertext-by-plaintext product.
    n = ctx.n
    reversed_prices = np.zeros(n, dtype=np.int64)
    reversed_prices[n - 1 - np.arange(len(prices))] = prices
    total = basket * reversed_prices
    print(f"context: {ctx}")
    print(f"ciphertexts: {basket} -> {total}")

    # The customer: the total is coefficient N-1 (the other coefficients hold partial sums).
    got = int(session.decrypt(total)[n - 1])
    want = int(quantities @ prices)
    print(f"encrypted total: {got} cents   numpy: {want} cents   exact: {got == want}")
    print(f"noise budget left: {session.noise_budget(total):.1f} bits (a diagnostic of the secret-key holder)")
    if got != want:
        raise SystemExit("the encrypted dot product is wrong")


if __name__ == "__main__":
    main()
