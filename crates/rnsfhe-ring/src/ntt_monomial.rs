//! Monomials in NTT form, without a transform.
//!
//! Slot `j` of a limb's forward transform is the evaluation at `psi^(e_j)`
//! ([`rnsfhe_math::NttPlan::slot_exponent`], `psi` the plan's primitive `2N`-th root), so
//! `NTT(X^k)[j] = psi^(e_j k mod 2N)`. With the `2N` powers of `psi` and the exponents `e_j` tabulated
//! once per limb, `NTT(X^k + c)` is one table read (and an addition) per slot: no exponentiation and no
//! NTT. The ternary blind rotation uses it to multiply gadget products by `1 - X^(± a)` in the NTT domain
//! over `Q ∪ P`, before the single ModDown of each step (PEGASUS Fig. 2 in the form of OpenFHE's GINX
//! accumulator, which precomputes all `2N` monomials in NTT form instead, `N` times the memory).

use std::sync::Arc;

use crate::basis::RnsBasis;
use crate::poly::{Ntt, Poly};

/// The NTT forms of the monomials `X^k` (`k` modulo `2N`) over an RNS basis, computed by a gather from
/// per-limb tables of `2N` powers of the root (see the module documentation). The tables take `3N`
/// words per limb.
#[derive(Clone, Debug)]
pub struct NttMonomials {
    basis: Arc<RnsBasis>,
    /// Per limb (limb-major, `N` each), the odd exponent `e_j` of slot `j`.
    exponents: Vec<u32>,
    /// Per limb (limb-major, `2N` each), `psi^t` for `t < 2N`.
    powers: Vec<u64>,
}

impl NttMonomials {
    /// The tables of every limb of `basis`, from each plan's root and slot order.
    pub fn new(basis: &Arc<RnsBasis>) -> Self {
        let n = basis.degree();
        let mut exponents = Vec::with_capacity(basis.len() * n);
        let mut powers = Vec::with_capacity(basis.len() * 2 * n);
        for (plan, m) in basis.plans().iter().zip(basis.moduli()) {
            // Exponents below 2N <= 2^18: they fit in 32 bits.
            exponents.extend((0..n).map(|j| plan.slot_exponent(j) as u32));
            let psi = plan.psi();
            let mut x = 1u64;
            for _ in 0..2 * n {
                powers.push(x);
                x = m.mul(x, psi);
            }
        }
        Self {
            basis: Arc::clone(basis),
            exponents,
            powers,
        }
    }

    /// The basis of the monomials.
    pub fn basis(&self) -> &Arc<RnsBasis> {
        &self.basis
    }

    /// `NTT(X^k)` over the basis, for any `k` (taken modulo `2N`, the order of `X`).
    pub fn monomial(&self, k: usize) -> Poly<Ntt> {
        self.monomial_plus_constant(k, 0)
    }

    /// `NTT(X^k + c)` over the basis, for any `k` (taken modulo `2N`) and integer `c`: in slot `j`,
    /// `psi^(e_j k mod 2N) + c`. With `X^(k + N) = -X^k`, `1 - X^a` is `monomial_plus_constant(a + N, 1)`.
    pub fn monomial_plus_constant(&self, k: usize, c: i64) -> Poly<Ntt> {
        self.gather(k, c, false).0
    }

    /// `(NTT(X^k + c), NTT(X^-k + c))` in one pass over the tables: slot `j` of the second reads the
    /// power `2N - (e_j k mod 2N)` of the first's. With `k = a + N` and `c = 1`, the factors `1 - X^a`
    /// and `1 - X^-a` of a ternary blind-rotation step.
    pub fn monomial_pair_plus_constant(&self, k: usize, c: i64) -> (Poly<Ntt>, Poly<Ntt>) {
        let (first, second) = self.gather(k, c, true);
        (first, Poly::from_data_unchecked(&self.basis, second))
    }

    /// `NTT(X^k + c)` and, if `inverse`, the limb-major data of `NTT(X^-k + c)` (else empty).
    fn gather(&self, k: usize, c: i64, inverse: bool) -> (Poly<Ntt>, Vec<u64>) {
        let n = self.basis.degree();
        let mask = 2 * n - 1;
        let k = k & mask;
        let mut data = Vec::with_capacity(self.basis.len() * n);
        let mut other = Vec::with_capacity(if inverse { self.basis.len() * n } else { 0 });
        for ((m, exponents), powers) in self
            .basis
            .moduli()
            .iter()
            .zip(self.exponents.chunks_exact(n))
            .zip(self.powers.chunks_exact(2 * n))
        {
            let c = m.reduce_i64(c);
            // `powers` holds exactly `mask + 1` values: every index below is masked into range.
            let powers = &powers[..=mask];
            // `e_j k` stays below 2N * 2N <= 2^36: no overflow in usize on 64-bit targets, and the
            // mask is the reduction modulo the power of two 2N.
            data.extend(
                exponents
                    .iter()
                    .map(|&e| m.add(powers[(e as usize * k) & mask], c)),
            );
            if inverse {
                // psi^(-t) = psi^(2N - t): the same slots read backwards through the table.
                other.extend(
                    exponents
                        .iter()
                        .map(|&e| m.add(powers[(2 * n - ((e as usize * k) & mask)) & mask], c)),
                );
            }
        }
        (Poly::from_data_unchecked(&self.basis, data), other)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::poly::Coeff;
    use rnsfhe_math::primes::ntt_primes_of_bits;

    /// `NTT(X^k + c)` read from the tables equals the forward transform of the polynomial `X^k + c` on
    /// every limb (primes on both NTT paths: below and above 2^50), for `k` in `{0, 1, N - 1, N, N + 1,
    /// 2N - 1}`, values beyond `2N` and a few others.
    #[test]
    fn gathered_monomials_equal_transformed_ones() {
        for log_n in [4, 10] {
            let n = 1usize << log_n;
            let two_n = 2 * n as u64;
            let mut moduli = ntt_primes_of_bits(45, two_n, 1, &[]).unwrap();
            moduli.extend(ntt_primes_of_bits(60, two_n, 2, &moduli).unwrap());
            let basis = RnsBasis::new(n, &moduli).unwrap();
            let table = NttMonomials::new(&basis);
            assert_eq!(table.basis(), &basis);
            let ks = [
                0,
                1,
                2,
                3,
                n - 1,
                n,
                n + 1,
                n + 7,
                2 * n - 1,
                2 * n,
                5 * n + 3,
            ];
            for k in ks {
                for c in [0i64, 1, -1, 5] {
                    let mut coeffs = vec![0i64; n];
                    // X^k = ± X^(k mod N), the sign flipping each time k passes a multiple of N.
                    let sign = if (k / n).is_multiple_of(2) { 1 } else { -1 };
                    coeffs[k % n] += sign;
                    coeffs[0] += c;
                    let expected = Poly::<Coeff>::from_i64(&basis, &coeffs).unwrap().into_ntt();
                    assert_eq!(
                        table.monomial_plus_constant(k, c),
                        expected,
                        "k = {k}, c = {c}"
                    );
                }
                // The product form: X^k times the constant 1.
                let mut one = vec![0i64; n];
                one[0] = 1;
                let one = Poly::<Coeff>::from_i64(&basis, &one).unwrap();
                assert_eq!(table.monomial(k), one.mul_monomial(k).into_ntt(), "k = {k}");
            }
            // X^N + 1 = 0.
            let zero = Poly::<Coeff>::zero(&basis).into_ntt();
            assert_eq!(table.monomial_plus_constant(n, 1), zero);
        }
    }
}
