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

use rnsfhe_math::simd::ShoupRow;

use crate::basis::RnsBasis;
use crate::error::Result;
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

    /// The tables of `NTT(X^k + c)` for every `k` with the Shoup quotients of their residues, for the
    /// fixed constant `c` (see [`NttMonomialFactors`]): `2N` values and `2N` quotients per limb more.
    pub fn shoup_factors(&self, c: i64) -> NttMonomialFactors {
        let n = self.basis.degree();
        let mut table = Vec::with_capacity(self.powers.len());
        for (m, powers) in self
            .basis
            .moduli()
            .iter()
            .zip(self.powers.chunks_exact(2 * n))
        {
            let c = m.reduce_i64(c);
            table.extend((0..2 * n).map(|i| {
                let w = m.shoup(m.add(powers[factor_exponent(n, i)], c));
                [w.value, w.quotient]
            }));
        }
        NttMonomialFactors {
            basis: Arc::clone(&self.basis),
            constant: c,
            exponents: self.exponents.clone(),
            table,
        }
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

/// A polynomial in NTT form with the Shoup quotient `floor(x 2^64 / q)` of every residue `x`: a factor
/// that [`rnsfhe_math::simd::sum_of_factored_products`] multiplies by with Shoup products (no 128-bit
/// reduction). The blind rotation's factors `1 - X^(± a)` come in this form from
/// [`NttMonomialFactors`], gathered from tables, without a division.
#[derive(Clone, Debug, PartialEq)]
pub struct NttShoupPoly {
    basis: Arc<RnsBasis>,
    /// Limb-major residues.
    values: Vec<u64>,
    /// Limb-major Shoup quotients of `values`.
    quotients: Vec<u64>,
}

impl NttShoupPoly {
    /// The Shoup form of `p` (one 128-bit division per residue: for factors used many times or tests;
    /// the blind rotation gathers its factors from [`NttMonomialFactors`]).
    pub fn new(p: &Poly<Ntt>) -> Self {
        let n = p.basis().degree();
        let quotients = p
            .data()
            .chunks_exact(n)
            .zip(p.basis().moduli())
            .flat_map(|(limb, m)| limb.iter().map(move |&x| m.shoup(x).quotient))
            .collect();
        Self {
            basis: Arc::clone(p.basis()),
            values: p.data().to_vec(),
            quotients,
        }
    }

    /// The zero polynomial over `basis` (a buffer for [`NttMonomialFactors::pair_into`]).
    pub fn zero(basis: &Arc<RnsBasis>) -> Self {
        let len = basis.len() * basis.degree();
        Self {
            basis: Arc::clone(basis),
            values: vec![0; len],
            quotients: vec![0; len],
        }
    }

    /// The basis.
    pub fn basis(&self) -> &Arc<RnsBasis> {
        &self.basis
    }

    /// The residues (limb-major), the data of the [`Poly<Ntt>`] it stands for.
    pub fn values(&self) -> &[u64] {
        &self.values
    }

    /// Limb `i` (residues and quotients), `i < basis().len()`; panics on a larger index, as slicing.
    pub fn limb(&self, i: usize) -> ShoupRow<'_> {
        let n = self.basis.degree();
        ShoupRow {
            values: &self.values[i * n..(i + 1) * n],
            quotients: &self.quotients[i * n..(i + 1) * n],
        }
    }
}

/// Slots per group of [`NttMonomialFactors::pair_into`]: consecutive slots whose entries share a row.
const FACTOR_GROUP: usize = 8;

/// The exponent `t` of entry `i` of a limb's table in [`NttMonomialFactors`]: row-major rows of
/// [`FACTOR_GROUP`] entries, entry `s` of row `u` for `t = u + s N/4` (ring degrees are at least 16, so
/// there are `N/4 >= 4` rows).
fn factor_exponent(n: usize, i: usize) -> usize {
    let (u, s) = (i / FACTOR_GROUP, i % FACTOR_GROUP);
    u + s * (n / 4)
}

/// The NTT forms of `X^k + c` for every `k` modulo `2N` and one constant `c`, with the Shoup quotients of
/// their residues ([`NttShoupPoly`]), from per-limb tables of `psi^t + c` for `t < 2N` and the slot
/// exponents of [`NttMonomials`]: a factor is one table read per slot, its quotient included (computing
/// quotients per step would take a division per residue). With `c = 1`, the factors `1 - X^(± a)` of a
/// ternary blind-rotation step (PEGASUS Fig. 2; `1 - X^a = X^(a + N) + 1`). Made by
/// [`NttMonomials::shoup_factors`].
#[derive(Clone, Debug)]
pub struct NttMonomialFactors {
    basis: Arc<RnsBasis>,
    /// The constant `c`.
    constant: i64,
    /// Per limb (limb-major, `N` each), the odd exponent `e_j` of slot `j`.
    exponents: Vec<u32>,
    /// Per limb (limb-major, `2N` each), `psi^t + c` and its Shoup quotient, side by side, in rows of
    /// [`FACTOR_GROUP`] entries `t = u + s N/4` (see [`factor_exponent`]): the eight slots of a group read
    /// one row (two cache lines) instead of eight scattered entries.
    table: Vec<[u64; 2]>,
}

impl NttMonomialFactors {
    /// The basis of the factors.
    pub fn basis(&self) -> &Arc<RnsBasis> {
        &self.basis
    }

    /// The constant `c` of the tables.
    pub fn constant(&self) -> i64 {
        self.constant
    }

    /// `NTT(X^k + c)` into `first` and `NTT(X^-k + c)` into `second`, with their Shoup quotients, for any
    /// `k` (taken modulo `2N`): slot `j` reads the entry `e_j k mod 2N` of the table and the second the
    /// entry `2N` minus that (`psi^-t = psi^(2N - t)`). The buffers are overwritten (reused across the
    /// steps of a rotation: no allocation).
    ///
    /// Errors: [`crate::Error::BasisMismatch`] for a buffer over another basis.
    pub fn pair_into(
        &self,
        k: usize,
        first: &mut NttShoupPoly,
        second: &mut NttShoupPoly,
    ) -> Result<()> {
        self.basis
            .check_same(&first.basis, "monomial factors (first buffer)")?;
        self.basis
            .check_same(&second.basis, "monomial factors (second buffer)")?;
        let n = self.basis.degree();
        let mask = 2 * n - 1;
        let k = k & mask;
        let limbs = self
            .exponents
            .chunks_exact(n)
            .zip(self.table.chunks_exact(2 * n))
            .zip(first.values.chunks_exact_mut(n))
            .zip(first.quotients.chunks_exact_mut(n))
            .zip(second.values.chunks_exact_mut(n))
            .zip(second.quotients.chunks_exact_mut(n));
        // Slots 8i + r have the exponents e_8i + bitrev_3(r) N/4: their entries t_8i + k bitrev_3(r) N/4
        // lie in one row of the table, at the positions (s_0 + k bitrev_3(r)) mod 8.
        let quarter = n / 4;
        let steps: [usize; FACTOR_GROUP] = [0, 4, 2, 6, 1, 5, 3, 7].map(|r| (k * r) % FACTOR_GROUP);
        for (((((exponents, table), v1), q1), v2), q2) in limbs {
            let groups = exponents
                .iter()
                .step_by(FACTOR_GROUP)
                .zip(v1.chunks_exact_mut(FACTOR_GROUP))
                .zip(q1.chunks_exact_mut(FACTOR_GROUP))
                .zip(v2.chunks_exact_mut(FACTOR_GROUP))
                .zip(q2.chunks_exact_mut(FACTOR_GROUP));
            for ((((&e, v1), q1), v2), q2) in groups {
                let t = (e as usize * k) & mask;
                let (u, s0) = (t % quarter, t / quarter);
                // -t_j = (N/4 - u) + (7 - s_j) N/4 for u > 0, and (8 - s_j) N/4 for u = 0.
                let (u_neg, shift) = if u == 0 { (0, 0) } else { (quarter - u, 7) };
                let row = &table[u * FACTOR_GROUP..(u + 1) * FACTOR_GROUP];
                let row_neg = &table[u_neg * FACTOR_GROUP..(u_neg + 1) * FACTOR_GROUP];
                for (r, &step) in steps.iter().enumerate() {
                    let s = (s0 + step) % FACTOR_GROUP;
                    [v1[r], q1[r]] = row[s];
                    [v2[r], q2[r]] = row_neg[(FACTOR_GROUP + shift - s) % FACTOR_GROUP];
                }
            }
        }
        Ok(())
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

    /// The Shoup factors gathered from the tables equal `NTT(X^(± k) + c)` from
    /// [`NttMonomials::monomial_pair_plus_constant`] and carry the quotients of
    /// [`NttShoupPoly::new`], for primes on both NTT paths, several ring degrees and even and odd `k`; buffers over another basis are refused.
    #[test]
    fn shoup_factors_equal_the_gathered_monomials() {
        for n in [16usize, 32, 64] {
            shoup_factors_of_degree(n);
        }
    }

    /// [`shoup_factors_equal_the_gathered_monomials`] at the ring degree `n`.
    fn shoup_factors_of_degree(n: usize) {
        let two_n = 2 * n as u64;
        let mut moduli = ntt_primes_of_bits(45, two_n, 1, &[]).unwrap();
        moduli.extend(ntt_primes_of_bits(60, two_n, 1, &moduli).unwrap());
        let basis = RnsBasis::new(n, &moduli).unwrap();
        let monomials = NttMonomials::new(&basis);
        for c in [1i64, 0, -3] {
            let factors = monomials.shoup_factors(c);
            assert_eq!(factors.constant(), c);
            assert_eq!(factors.basis(), &basis);
            let (mut first, mut second) = (NttShoupPoly::zero(&basis), NttShoupPoly::zero(&basis));
            for k in [0, 1, 2, 5, 6, n - 1, n, n + 3, 2 * n - 1, 2 * n, 7 * n + 1] {
                factors.pair_into(k, &mut first, &mut second).unwrap();
                let (pos, neg) = monomials.monomial_pair_plus_constant(k, c);
                assert_eq!(first, NttShoupPoly::new(&pos), "k = {k}, c = {c}");
                assert_eq!(second, NttShoupPoly::new(&neg), "k = {k}, c = {c}");
                assert_eq!(first.values(), pos.data());
                let limb = first.limb(1);
                assert_eq!(limb.values, &pos.data()[n..]);
            }
        }
        let other = RnsBasis::new(n, &moduli[..1]).unwrap();
        let factors = monomials.shoup_factors(1);
        let (mut wrong, mut right) = (NttShoupPoly::zero(&other), NttShoupPoly::zero(&basis));
        assert!(factors.pair_into(1, &mut wrong, &mut right).is_err());
        assert!(factors.pair_into(1, &mut right, &mut wrong).is_err());
    }

    /// `add_mul_symmetric_monomials` equals `x + p X^k + p X^-k - p` from the allocating rotations, for
    /// `k` in `{0, 1, N - 1, N, N + 1, 2N - 1}` and beyond `2N`, with residues `0` and `q - 1` included;
    /// polynomials over different bases are refused.
    #[test]
    fn symmetric_monomials_add_in_place() {
        use rand::{rngs::StdRng, Rng, SeedableRng};
        let mut rng = StdRng::seed_from_u64(0x5a17);
        let n = 1usize << 5;
        let mut moduli = ntt_primes_of_bits(45, 2 * n as u64, 1, &[]).unwrap();
        moduli.extend(ntt_primes_of_bits(60, 2 * n as u64, 1, &moduli).unwrap());
        let basis = RnsBasis::new(n, &moduli).unwrap();
        let random = |rng: &mut StdRng| {
            let data: Vec<u64> = basis
                .moduli()
                .iter()
                .flat_map(|m| {
                    let q = m.value();
                    let mut limb: Vec<u64> = (0..n).map(|_| rng.gen_range(0..q)).collect();
                    (limb[0], limb[1]) = (0, q - 1);
                    limb
                })
                .collect();
            Poly::<Coeff>::from_data(&basis, data).unwrap()
        };
        for k in [0, 1, 2, n - 1, n, n + 1, 2 * n - 1, 2 * n, 3 * n + 5] {
            let (x, p) = (random(&mut rng), random(&mut rng));
            let mut want = x.clone();
            want.add_assign(&p.mul_monomial_minus_one(k)).unwrap();
            want.add_assign(&p.mul_monomial(2 * n - k % (2 * n)))
                .unwrap();
            let mut got = x;
            got.add_mul_symmetric_monomials(&p, k).unwrap();
            assert_eq!(got, want, "k = {k}");
        }
        let other = RnsBasis::new(n, &moduli[..1]).unwrap();
        let mut x = Poly::<Coeff>::zero(&basis);
        assert!(x
            .add_mul_symmetric_monomials(&Poly::<Coeff>::zero(&other), 1)
            .is_err());
    }
}
