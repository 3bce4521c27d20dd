//! Exact CRT composition of RNS coefficients: from the residues `x_i = x mod q_i` of a polynomial to its
//! coefficients as signed numbers (the centered representatives modulo `Q = q_0 ... q_{l-1}`).
//!
//! This is the last step of every decryption that leaves the RNS world (the CKKS decoder, debugging and
//! tests); it is not on any homomorphic hot path, so it favours exactness over speed, but stays linear in
//! `N` and parallel over coefficients. For each coefficient,
//!
//! ```text
//! y_i = [x_i * qhat_i^-1]_{q_i},   S = sum_i y_i * qhat_i = x + v * Q   with 0 <= v < l,
//! ```
//!
//! (`qhat_i = Q / q_i`) is accumulated exactly in multi-word arithmetic; `v = floor(sum_i y_i / q_i)` is
//! estimated in double precision and corrected by exact comparisons (the estimate is off by at most one), so
//! `x = S - v Q` in `[0, Q)` is exact. The centered representative is `x` if `x <= floor(Q / 2)` and
//! `x - Q` otherwise; it lies in `(-Q/2, Q/2]` (exactly `[-(Q-1)/2, (Q-1)/2]`, as `Q` is odd for odd primes).
//!
//! Conversion to `f64` takes the top 64 significant bits with a sticky bit, so the result is the correctly
//! rounded (round to nearest, ties to even) value; magnitudes of `2^1024` and more become infinities. The
//! scaled variant divides by the scale with one more rounding (none when the scale is a power of two).

use std::cmp::Ordering;
use std::sync::Arc;

use rayon::prelude::*;
use rnsfhe_math::ShoupConstant;

use crate::basis::RnsBasis;
use crate::error::{Error, Result};
use crate::multiword;
use crate::poly::{Coeff, Poly};

/// Coefficients per parallel task (each task allocates its own scratch buffers once).
const CHUNK: usize = 512;

/// Exact CRT composition of RNS polynomials over one basis into signed coefficients (`f64` or `i128`).
///
/// Built once per basis (the multi-word `Q`, `qhat_i = Q / q_i`, `floor(Q / 2)` and the
/// `[qhat_i^-1]_{q_i}`), then immutable: `Send + Sync`, shareable by threads.
#[derive(Clone, Debug)]
pub struct CrtComposer {
    basis: Arc<RnsBasis>,
    /// Words per multi-word number: enough for `l * Q`.
    words: usize,
    /// `Q`.
    q: Vec<u64>,
    /// `floor(Q / 2)`.
    half_q: Vec<u64>,
    /// `qhat_i`, `words` words each, concatenated.
    qhat: Vec<u64>,
    /// `[qhat_i^-1]_{q_i}` with Shoup companions.
    qhat_inv: Vec<ShoupConstant>,
    /// `1 / q_i` in double precision, for the estimate of `v`.
    inv_q: Vec<f64>,
    /// Whether `l * Q < 2^128`, so that the composition runs in `u128`.
    fits_u128: bool,
}

impl CrtComposer {
    /// Precomputes the multi-word constants of `basis`.
    pub fn new(basis: &Arc<RnsBasis>) -> Self {
        let values = basis.values();
        let l = values.len();
        let product_bits: u32 = values.iter().map(|&q| 64 - q.leading_zeros()).sum();
        // Q < 2^product_bits and l * Q < 2^(product_bits + 64): one spare word.
        let words = (product_bits as usize).div_ceil(64) + 1;
        let (q, qhat) = multiword::crt_products(&values, words);
        let mut half_q = q.clone();
        for i in 0..words {
            let carry_in = if i + 1 < words { q[i + 1] << 63 } else { 0 };
            half_q[i] = (q[i] >> 1) | carry_in;
        }
        Self {
            basis: Arc::clone(basis),
            words,
            q,
            half_q,
            qhat,
            qhat_inv: basis.qhat_inv().to_vec(),
            inv_q: values.iter().map(|&q| 1.0 / q as f64).collect(),
            fits_u128: product_bits + (usize::BITS - l.leading_zeros()) <= 128,
        }
    }

    /// The basis this composer was built for.
    #[inline]
    pub fn basis(&self) -> &Arc<RnsBasis> {
        &self.basis
    }

    /// `Q` as little-endian 64-bit words (with at least one leading zero word).
    #[inline]
    pub fn modulus_words(&self) -> &[u64] {
        &self.q
    }

    /// The centered representative of every coefficient of `x` modulo `Q`, correctly rounded to `f64`
    /// (magnitudes of `2^1024` and more give `±inf`).
    ///
    /// Errors: `x` lives over a different basis.
    pub fn compose_centered_f64(&self, x: &Poly<Coeff>) -> Result<Vec<f64>> {
        self.compose_with(x, |negative, magnitude| {
            let (m, e) = multiword::top_bits_sticky(magnitude);
            let v = ldexp(m as f64, e);
            if negative {
                -v
            } else {
                v
            }
        })
    }

    /// The centered representative of every coefficient of `x` modulo `Q`, divided by `scale`: the value
    /// `round_f64(c) / scale` up to about one unit in the last place (exactly correctly rounded when `scale`
    /// is a power of two), computed without overflow for any `c` in `(-Q/2, Q/2]` whose quotient is finite.
    ///
    /// Errors: `x` lives over a different basis; `scale` is not a finite number of at least
    /// `f64::MIN_POSITIVE`.
    pub fn compose_centered_scaled(&self, x: &Poly<Coeff>, scale: f64) -> Result<Vec<f64>> {
        if !(scale.is_finite() && scale >= f64::MIN_POSITIVE) {
            return Err(Error::OutOfRange {
                what: "CRT composition scale",
                value: scale,
                min: f64::MIN_POSITIVE,
                max: f64::MAX,
            });
        }
        if let [m] = self.basis.moduli() {
            // One limb (CKKS decryption at the last level): the centered residue `c` is an `i64`, and
            // `c as f64` is `round_f64(c)`, so one division gives the quotient within one rounding of the
            // exact one (and correctly rounded for a power-of-two scale, whose division is exact). About
            // six times as fast as the multi-word path below, which finds the top bits of every
            // coefficient first.
            self.check_basis(x)?;
            let m = *m;
            let mut out = vec![0.0; x.degree()];
            out.par_chunks_mut(CHUNK)
                .zip(x.data().par_chunks(CHUNK))
                .for_each(|(o, r)| {
                    for (o, &r) in o.iter_mut().zip(r) {
                        *o = m.center(r) as f64 / scale;
                    }
                });
            return Ok(out);
        }
        // scale = mantissa * 2^exponent with mantissa in [1, 2).
        let bits = scale.to_bits();
        let exponent = ((bits >> 52) & 0x7ff) as i32 - 1023;
        let mantissa = f64::from_bits((bits & ((1u64 << 52) - 1)) | (1023u64 << 52));
        self.compose_with(x, move |negative, magnitude| {
            let (m, e) = multiword::top_bits_sticky(magnitude);
            let v = ldexp(m as f64 / mantissa, e - exponent);
            if negative {
                -v
            } else {
                v
            }
        })
    }

    /// The centered representative of every coefficient of `x` modulo `Q`, exactly, as `i128`.
    ///
    /// Always succeeds when `Q < 2^127` (every centered value then fits); otherwise errors with
    /// [`Error::OutOfRange`] (carrying `log2 |c|`) at the first coefficient `c` with `|c| >= 2^127`.
    /// Also errors when `x` lives over a different basis.
    pub fn compose_centered_i128(&self, x: &Poly<Coeff>) -> Result<Vec<i128>> {
        let out = self.compose_with(x, |negative, magnitude| {
            let fits = magnitude.len() <= 2 || magnitude[2..].iter().all(|&w| w == 0);
            let lo = magnitude[0] as u128;
            let hi = magnitude.get(1).copied().unwrap_or(0) as u128;
            let v = (hi << 64) | lo;
            if !fits || v > i128::MAX as u128 {
                let (m, e) = multiword::top_bits_sticky(magnitude);
                return Err((m as f64).log2() + e as f64);
            }
            let v = v as i128;
            Ok(if negative { -v } else { v })
        })?;
        out.into_iter()
            .map(|r| {
                r.map_err(|log2| Error::OutOfRange {
                    what: "log2 |centered coefficient| for i128 CRT composition",
                    value: log2,
                    min: 0.0,
                    max: 127.0,
                })
            })
            .collect()
    }

    /// Errors unless `x` lives over this composer's basis (the same one, or an equal one).
    fn check_basis(&self, x: &Poly<Coeff>) -> Result<()> {
        self.basis.check_same(x.basis(), "CRT composition")
    }

    /// Composes every coefficient and hands its sign and magnitude (little-endian words, the magnitude of the
    /// centered representative) to `finish`.
    fn compose_with<T: Send>(
        &self,
        x: &Poly<Coeff>,
        finish: impl Fn(bool, &[u64]) -> T + Sync,
    ) -> Result<Vec<T>> {
        self.check_basis(x)?;
        let n = x.degree();
        let data = x.data();
        let moduli = self.basis.moduli();
        if moduli.len() == 1 {
            // One limb: the centered residue is the answer.
            let m = moduli[0];
            return Ok(data
                .par_iter()
                .with_min_len(CHUNK)
                .map(|&r| {
                    let c = m.center(r);
                    finish(c < 0, &[c.unsigned_abs()])
                })
                .collect());
        }
        if self.fits_u128 {
            // l * Q < 2^128: the whole composition fits in u128.
            let q = (self.q[0] as u128) | ((self.q.get(1).copied().unwrap_or(0) as u128) << 64);
            let half_q = q >> 1;
            let qhat: Vec<u128> = self
                .qhat
                .chunks_exact(self.words)
                .map(|w| (w[0] as u128) | ((w.get(1).copied().unwrap_or(0) as u128) << 64))
                .collect();
            return Ok((0..n)
                .into_par_iter()
                .with_min_len(CHUNK)
                .map(|j| {
                    let mut sum = 0u128;
                    let mut fraction = 0.0f64;
                    for (i, (m, w)) in moduli.iter().zip(&self.qhat_inv).enumerate() {
                        let y = m.mul_shoup(data[i * n + j], *w);
                        // y * qhat_i < Q and the sum stays below l * Q < 2^128.
                        sum += y as u128 * qhat[i];
                        fraction += y as f64 * self.inv_q[i];
                    }
                    let v = (fraction.floor().max(0.0) as u128) * q;
                    let mut x = if sum < v { q - (v - sum) } else { sum - v };
                    while x >= q {
                        x -= q;
                    }
                    let (negative, magnitude) = if x > half_q {
                        (true, q - x)
                    } else {
                        (false, x)
                    };
                    finish(negative, &[magnitude as u64, (magnitude >> 64) as u64])
                })
                .collect());
        }
        let words = self.words;
        Ok((0..n)
            .into_par_iter()
            .with_min_len(CHUNK)
            .map_init(
                || (vec![0u64; words], vec![0u64; words]),
                |(acc, tmp), j| {
                    let negative = self.compose_one(data, n, j, acc, tmp);
                    finish(negative, acc)
                },
            )
            .collect())
    }

    /// Coefficient `j`: leaves the magnitude of the centered representative in `acc` and returns whether it
    /// is negative.
    #[inline]
    fn compose_one(
        &self,
        data: &[u64],
        n: usize,
        j: usize,
        acc: &mut [u64],
        tmp: &mut [u64],
    ) -> bool {
        let words = self.words;
        acc.fill(0);
        let mut fraction = 0.0f64;
        for (i, (m, w)) in self.basis.moduli().iter().zip(&self.qhat_inv).enumerate() {
            let y = m.mul_shoup(data[i * n + j], *w);
            multiword::mac(acc, &self.qhat[i * words..(i + 1) * words], y);
            fraction += y as f64 * self.inv_q[i];
        }
        // S = x + v Q with 0 <= v < l; the estimate is exact or off by one either way.
        let v = fraction.floor().max(0.0) as u64;
        multiword::mul_word_into(tmp, &self.q, v);
        if multiword::cmp(acc, tmp) == Ordering::Less {
            multiword::sub_assign(tmp, &self.q);
        }
        multiword::sub_assign(acc, tmp);
        while multiword::cmp(acc, &self.q) != Ordering::Less {
            multiword::sub_assign(acc, &self.q);
        }
        if multiword::cmp(acc, &self.half_q) == Ordering::Greater {
            multiword::sub_into(tmp, &self.q, acc);
            acc.copy_from_slice(tmp);
            true
        } else {
            false
        }
    }
}

/// `x * 2^e`, exact unless the result overflows (then `±inf`) or is subnormal.
#[inline]
fn ldexp(mut x: f64, mut e: i32) -> f64 {
    // 2^1000 and 2^-1000.
    let up = f64::from_bits((1023 + 1000) << 52);
    let down = f64::from_bits((1023 - 1000) << 52);
    while e > 1000 {
        x *= up;
        e -= 1000;
    }
    while e < -1000 {
        x *= down;
        e += 1000;
    }
    x * f64::from_bits(((e + 1023) as u64) << 52)
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::{BigInt, BigUint, RandBigInt};
    use num_traits::{One, Signed, ToPrimitive, Zero};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;
    use rnsfhe_math::primes::ntt_primes_of_bits;

    const N: usize = 64;

    fn residues_of(values: &[BigInt], basis: &Arc<RnsBasis>) -> Poly<Coeff> {
        let n = basis.degree();
        let mut data = vec![0u64; basis.len() * n];
        for (i, q) in basis.values().iter().enumerate() {
            let qb = BigInt::from(*q);
            for (j, v) in values.iter().enumerate() {
                let r = ((v % &qb) + &qb) % &qb;
                data[i * n + j] = r.to_u64().unwrap();
            }
        }
        Poly::from_data(basis, data).unwrap()
    }

    fn big_q(basis: &RnsBasis) -> BigInt {
        basis
            .values()
            .iter()
            .fold(BigInt::one(), |acc, &q| acc * BigInt::from(q))
    }

    /// Random centered values with targeted edge cases: 0, +-1, tiny, near +-Q/2, and uniform.
    fn test_values(q: &BigInt, rng: &mut ChaCha20Rng) -> Vec<BigInt> {
        let half = q / 2u32; // floor(Q/2) = (Q-1)/2 for odd Q
        let mut v = vec![
            BigInt::zero(),
            BigInt::one(),
            -BigInt::one(),
            half.clone(),
            -half.clone(),
            &half - 1u32,
            -(&half - 1u32),
            &half - 12345u32,
            BigInt::from(i64::MAX),
            BigInt::from(i64::MIN),
            BigInt::from(1u128 << 100),
        ];
        v.retain(|x| x.abs() <= half);
        while v.len() < N {
            let x = match rng.gen_range(0..3) {
                0 => BigInt::from(rng.gen_range(-1000i64..1000)),
                1 => {
                    // Near +-Q/2.
                    let off = BigInt::from(rng.gen_range(0u64..1 << 40));
                    let x = &half - off;
                    if rng.gen() {
                        x
                    } else {
                        -x
                    }
                }
                _ => rng.gen_bigint_range(&(-&half), &(&half + 1u32)),
            };
            if x.abs() <= half {
                v.push(x);
            }
        }
        v
    }

    #[test]
    fn composes_exactly_against_bigint() {
        let mut rng = ChaCha20Rng::seed_from_u64(7);
        for limbs in 1..=20usize {
            // Mix widths: 60-bit for short bases, narrower ones for long bases so that Q/2 still fits f64
            // for most cases (the infinite case is covered too: 20 x 60 bits > 1024).
            for bits in [30u32, 50, 60] {
                let qs = ntt_primes_of_bits(bits, 2 * N as u64, limbs, &[]).unwrap();
                let basis = RnsBasis::new(N, &qs).unwrap();
                let q = big_q(&basis);
                let values = test_values(&q, &mut rng);
                let poly = residues_of(&values, &basis);
                let composer = CrtComposer::new(&basis);
                let got = composer.compose_centered_f64(&poly).unwrap();
                let scale = 2f64.powi(55);
                let scaled = composer.compose_centered_scaled(&poly, scale).unwrap();
                let scale3 = 3.0 * 2f64.powi(40);
                let scaled3 = composer.compose_centered_scaled(&poly, scale3).unwrap();
                let fits_i128 = values.iter().all(|v| v.abs() <= BigInt::from(i128::MAX));
                let as_i128 = composer.compose_centered_i128(&poly);
                assert_eq!(as_i128.is_ok(), fits_i128, "limbs {limbs} bits {bits}");
                if q.bits() < 127 {
                    assert!(fits_i128);
                }
                for (j, v) in values.iter().enumerate() {
                    let expect = v.to_f64().unwrap();
                    assert_eq!(
                        got[j], expect,
                        "limbs {limbs} bits {bits} coefficient {j}: {v:x}"
                    );
                    // Power-of-two scale: correctly rounded quotient.
                    if expect.is_finite() {
                        assert_eq!(scaled[j], expect / scale, "limbs {limbs} coefficient {j}");
                    } else {
                        // Beyond the f64 range before scaling, finite after: compare with v / 2^64 * 2^9.
                        let reference = (v / BigInt::from(1u128 << 64)).to_f64().unwrap() * 512.0;
                        if reference.abs() < f64::MAX / 2.0 {
                            assert!(
                                ((scaled[j] - reference) / reference).abs() < 1e-15,
                                "limbs {limbs} coefficient {j}"
                            );
                        } else if reference.is_infinite() {
                            assert_eq!(scaled[j], reference, "limbs {limbs} coefficient {j}");
                        }
                    }
                    // Other scale: within 2 ulp of the reference quotient (itself rounded twice).
                    let reference = expect / scale3;
                    if reference.is_finite() {
                        let ulp = f64::EPSILON * reference.abs().max(f64::MIN_POSITIVE);
                        assert!(
                            (scaled3[j] - reference).abs() <= 2.0 * ulp,
                            "limbs {limbs} coefficient {j}: {} vs {}",
                            scaled3[j],
                            reference
                        );
                    }
                    if let Ok(ints) = &as_i128 {
                        assert_eq!(BigInt::from(ints[j]), *v);
                    }
                }
            }
        }
    }

    #[test]
    fn uniform_residues_compose_to_the_crt_value() {
        let mut rng = ChaCha20Rng::seed_from_u64(11);
        for limbs in [2usize, 3, 7, 13, 20] {
            let qs = ntt_primes_of_bits(45, 2 * N as u64, limbs, &[]).unwrap();
            let basis = RnsBasis::new(N, &qs).unwrap();
            let q = big_q(&basis);
            let qu = q.to_biguint().unwrap();
            let half = &qu / 2u32;
            let data: Vec<u64> = qs
                .iter()
                .flat_map(|&p| (0..N).map(move |_| p))
                .map(|p| rng.gen_range(0..p))
                .collect();
            let poly = Poly::from_data(&basis, data.clone()).unwrap();
            let got = CrtComposer::new(&basis)
                .compose_centered_f64(&poly)
                .unwrap();
            for (j, g) in got.iter().enumerate() {
                // Reference CRT: sum r_i * qhat_i * (qhat_i^-1 mod q_i) mod Q, centered.
                let mut x = BigUint::zero();
                for (i, &p) in qs.iter().enumerate() {
                    let pb = BigUint::from(p);
                    let qhat = &qu / &pb;
                    let inv = (&qhat % &pb).modpow(&BigUint::from(p - 2), &pb);
                    x += BigUint::from(data[i * N + j]) * qhat * inv;
                }
                x %= &qu;
                let centered = if x > half {
                    -BigInt::from(&qu - x)
                } else {
                    BigInt::from(x)
                };
                assert_eq!(
                    *g,
                    centered.to_f64().unwrap(),
                    "limbs {limbs} coefficient {j}"
                );
            }
        }
    }

    #[test]
    fn errors() {
        let qs = ntt_primes_of_bits(60, 2 * N as u64, 3, &[]).unwrap();
        let basis = RnsBasis::new(N, &qs).unwrap();
        let other = RnsBasis::new(N, &qs[..2]).unwrap();
        let composer = CrtComposer::new(&basis);
        let p = Poly::<Coeff>::zero(&other);
        assert!(matches!(
            composer.compose_centered_f64(&p),
            Err(Error::BasisMismatch { .. })
        ));
        let z = Poly::<Coeff>::zero(&basis);
        for s in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e-310] {
            assert!(matches!(
                composer.compose_centered_scaled(&z, s),
                Err(Error::OutOfRange { .. })
            ));
        }
        assert_eq!(composer.compose_centered_i128(&z).unwrap(), vec![0; N]);
        // -1 over a 180-bit Q fits i128; (Q-1)/2 does not.
        let q = big_q(&basis);
        let mut values = vec![BigInt::zero(); N];
        values[0] = -BigInt::one();
        assert_eq!(
            composer
                .compose_centered_i128(&residues_of(&values, &basis))
                .unwrap()[0],
            -1
        );
        values[5] = &q / 2u32;
        match composer.compose_centered_i128(&residues_of(&values, &basis)) {
            Err(Error::OutOfRange { value, .. }) => assert!((value - 178.0).abs() < 2.0),
            other => panic!("expected an error, got {other:?}"),
        }
    }

    #[test]
    fn ldexp_edges() {
        assert_eq!(ldexp(1.0, 0), 1.0);
        assert_eq!(ldexp(1.5, 1023), 1.5 * 2f64.powi(1023));
        assert_eq!(ldexp(1.0, 1024), f64::INFINITY);
        assert_eq!(ldexp(3.0, -1000), 3.0 * 2f64.powi(-1000));
        assert_eq!(ldexp(1.0, 2500), f64::INFINITY);
        assert_eq!(ldexp(2f64.powi(-1000), 2000), 2f64.powi(1000));
    }
}
