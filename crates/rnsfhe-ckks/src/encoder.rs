//! The CKKS encoder: complex vectors <-> scaled integer polynomials of `Z[X]/(X^N + 1)`, through the
//! canonical embedding (RNS-CKKS Section 2.1).
//!
//! ## Slot order
//!
//! Let `zeta = exp(i pi / N)`, a primitive `2N`-th root of unity. A polynomial `m(X)` with real
//! coefficients is decoded to the `N/2` slots
//!
//! ```text
//! slot j = m(zeta^(5^j mod 2N)),     j = 0, ..., N/2 - 1,
//! ```
//!
//! the map `tau` of the paper (which writes `zeta = exp(-i pi / N)`; this crate follows the code of HEAAN,
//! SEAL and Lattigo, `exp(+i pi / N)`, so our slots are the complex conjugates of the paper's convention for
//! the same polynomial, with identical rotation structure). The remaining evaluations are conjugates:
//! `m(zeta^(-5^j)) = conj(slot j)`. Encoding is the inverse map followed by scaling and rounding:
//! `m = round(scale * tau^-1(z))`.
//!
//! Because the automorphism `X -> X^k` maps `m(zeta^(5^j))` to `m(zeta^(k 5^j))`, this order gives:
//!
//! * **rotation**: `k = 5^r mod 2N` ([`rnsfhe_ring::GaloisGroup::element_of_step`] of
//!   [`Encoder::galois_group`], generator [`ROTATION_GENERATOR`]) rotates the slots **left** by `r`: slot
//!   `j` of the result is slot `j + r mod N/2` of the input;
//! * **conjugation**: `k = 2N - 1` ([`rnsfhe_ring::GaloisGroup::conjugation`]) conjugates every slot.
//!
//! The evaluator relies on exactly this; the tests of this module check it on plaintexts.
//!
//! ## Sparse packing
//!
//! With `n < N/2` slots (`n` a power of two), the message lives in the subring `Z[Y]`, `Y = X^(N/(2n))`:
//! with `gap = N / (2n)`, the `n` slot values give real coefficients at `X^(i gap)` and imaginary parts at
//! `X^(N/2 + i gap)` (`X^(N/2)` evaluates to `i` at every `zeta^(5^j)`). Decoding such a polynomial with
//! `N/2` slots shows the `n` values replicated `N/(2n)` times (slot `j` equals slot `j mod n`), and the Galois
//! element `5^r` still rotates the `n` slots left by `r`. Decoding with `n` slots reads only the subring
//! coefficients (the others, noise of a decryption, are ignored).
//!
//! ## Algorithm
//!
//! Both directions are the "special FFT" of HEAAN / SEAL (Cheon et al., "Bootstrapping for approximate HE",
//! Section 3): a radix-2 FFT of size `n` whose twiddles are `zeta^((5^j mod 4 len) 2N / (4 len))`, in
//! `O(n log n)`. The roots of unity are computed once, from exact rational angles reduced to the first octant,
//! so each is within about one unit in the last place. Scaled coefficients may exceed `2^63`: they are
//! reduced exactly into each limb from their `f64` representation `mantissa * 2^e`, for any finite value.

use std::sync::Arc;

use num_complex::Complex64;
use rayon::prelude::*;
use rnsfhe_math::Modulus;
use rnsfhe_ring::{Coeff, CrtComposer, GaloisGroup, Ntt, Poly, RnsBasis};

use crate::error::{Error, Result};

/// Relative safety margin of the `|c| < Q/2` check: `Q` is known in double precision only, so scaled
/// coefficients within a factor `1 - 2^-48` of `Q/2` are rejected as well.
const HALF_Q_MARGIN: f64 = 1.0 - 1.0 / (1u64 << 48) as f64;

/// `2^63`: scaled coefficients below it in magnitude are reduced through `i64`.
const TWO_POW_63: f64 = (1u64 << 63) as f64;

/// The generator of the CKKS slot rotations: slot `j` is the evaluation at `zeta^(5^j)`, and the Galois
/// element `5^r mod 2N` rotates the slots left by `r` (RNS-CKKS Section 2.1; see [`rnsfhe_ring::galois`]).
pub const ROTATION_GENERATOR: usize = 5;

/// The CKKS encoder for ring degree `N`: up to `N/2` complex slots, see the [module documentation](self)
/// for the slot order, sparse packing and the algorithm.
///
/// Built once per ring degree (the rotation group of [`ROTATION_GENERATOR`], the FFT twiddles from its
/// elements `5^j mod 2N` and the bit-reversal table), then immutable: `Send + Sync`, shareable between threads; it works with any RNS
/// basis of degree `N`.
#[derive(Clone)]
pub struct Encoder {
    n: usize,
    /// The slot rotations: generator 5 of order `N/2`, conjugation `2N - 1`.
    group: GaloisGroup,
    /// Forward twiddles, stage by stage: stage `len` (2, 4, ..., N/2) holds `len/2` entries at offset
    /// `len/2 - 1`, entry `j` being `zeta^((5^j mod 4 len) 2N / (4 len))`.
    twiddles: Vec<Complex64>,
    /// Bit reversal over `log2(N/2)` bits.
    bitrev: Vec<usize>,
}

impl std::fmt::Debug for Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The tables are large; show the parameters only.
        f.debug_struct("Encoder")
            .field("n", &self.n)
            .field("max_slots", &(self.n / 2))
            .finish_non_exhaustive()
    }
}

/// `exp(2 pi i k / m)` for `m` a multiple of 8, from the angle reduced to `[0, pi/4]` (about 1 ulp).
fn root_of_unity(k: usize, m: usize) -> Complex64 {
    debug_assert!(m.is_multiple_of(8));
    let k = k % m;
    let quarter = m / 4;
    let eighth = m / 8;
    let (quadrant, r) = (k / quarter, k % quarter);
    let angle = |t: usize| std::f64::consts::TAU * t as f64 / m as f64;
    let (c, s) = if r <= eighth {
        let (s, c) = angle(r).sin_cos();
        (c, s)
    } else {
        // cos(pi/2 - a) = sin(a), sin(pi/2 - a) = cos(a).
        let (s, c) = angle(quarter - r).sin_cos();
        (s, c)
    };
    // Multiply by i^quadrant.
    match quadrant {
        0 => Complex64::new(c, s),
        1 => Complex64::new(-s, c),
        2 => Complex64::new(-c, -s),
        _ => Complex64::new(s, -c),
    }
}

impl Encoder {
    /// Builds the encoder for ring degree `n` (a power of two in the range the NTT supports).
    ///
    /// Errors: `n` not a supported power of two ([`Error::Math`]).
    pub fn new(n: usize) -> Result<Self> {
        rnsfhe_math::ntt::check_degree(n)?;
        let two_n = 2 * n;
        let half = n / 2;
        let group = GaloisGroup::new(n, ROTATION_GENERATOR)?;
        let rot_group: Vec<usize> = group.elements().take(half / 2).map(usize::from).collect();
        let mut twiddles = Vec::with_capacity(half);
        let mut len = 2;
        while len <= half {
            let lenq = 4 * len;
            for &r in &rot_group[..len / 2] {
                twiddles.push(root_of_unity((r % lenq) * (two_n / lenq), two_n));
            }
            len *= 2;
        }
        let log_half = half.trailing_zeros();
        let bitrev = (0..half)
            .map(|i| {
                if log_half == 0 {
                    0
                } else {
                    i.reverse_bits() >> (usize::BITS - log_half)
                }
            })
            .collect();
        Ok(Self {
            n,
            group,
            twiddles,
            bitrev,
        })
    }

    /// Ring degree `N`.
    #[inline]
    pub fn degree(&self) -> usize {
        self.n
    }

    /// Largest slot count, `N/2`.
    #[inline]
    pub fn max_slots(&self) -> usize {
        self.n / 2
    }

    /// The Galois group of the slots: [`GaloisGroup::element_of_step`] gives the element `5^r mod 2N`
    /// that rotates the slots left by `r` (right for negative `r`; `r` taken modulo `N/2`, the order of
    /// 5), [`GaloisGroup::conjugation`] the element `2N - 1` that conjugates every slot, and
    /// [`GaloisGroup::elements`] the roots' exponents in slot order (slot `j` at `zeta^(5^j)`).
    #[inline]
    pub fn galois_group(&self) -> &GaloisGroup {
        &self.group
    }

    pub(crate) fn check_slots(&self, slots: usize) -> Result<()> {
        let max = self.n / 2;
        if !slots.is_power_of_two() || slots > max {
            return Err(Error::InvalidSlots {
                slots,
                n: self.n,
                max,
            });
        }
        Ok(())
    }

    fn check_degree(&self, other: usize) -> Result<()> {
        if other != self.n {
            return Err(Error::DegreeMismatch {
                encoder: self.n,
                other,
            });
        }
        Ok(())
    }

    pub(crate) fn check_scale(scale: f64) -> Result<()> {
        if !(scale.is_finite() && scale > 0.0) {
            return Err(Error::InvalidScale { scale });
        }
        Ok(())
    }

    fn bit_reverse(&self, vals: &mut [Complex64]) {
        let n = vals.len();
        if n < 2 {
            return;
        }
        let shift = (self.n / 2).trailing_zeros() - n.trailing_zeros();
        for i in 0..n {
            let j = self.bitrev[i] >> shift;
            if i < j {
                vals.swap(i, j);
            }
        }
    }

    /// The twiddles of the special FFT's stage of butterflies of length `len` (a power of two in
    /// `[2, N/2]`): entry `i < len/2` is `zeta^((5^i mod 4 len) 2N / (4 len))`, the factor of the butterfly
    /// between positions `i` and `i + len/2` of each block (the sparse factors of [`crate::dft`]).
    pub(crate) fn stage_twiddles(&self, len: usize) -> &[Complex64] {
        debug_assert!(len.is_power_of_two() && (2..=self.n / 2).contains(&len));
        &self.twiddles[len / 2 - 1..len - 1]
    }

    /// The special FFT in place (decoding direction): for `vals` holding the `n = vals.len()` complex
    /// numbers `a_i = c_(i gap) + i c_(N/2 + i gap)` of a (sparse) polynomial, leaves
    /// `sum_i a_i zeta^(gap i 5^j)`, i.e. slot `j` (see the module documentation), in `vals[j]`.
    ///
    /// Errors: `vals.len()` is not a power of two in `[1, N/2]`.
    pub fn special_fft(&self, vals: &mut [Complex64]) -> Result<()> {
        let n = vals.len();
        self.check_slots(n)?;
        self.bit_reverse(vals);
        let mut len = 2;
        while len <= n {
            let h = len / 2;
            let tw = &self.twiddles[h - 1..len - 1];
            for block in vals.chunks_exact_mut(len) {
                let (lo, hi) = block.split_at_mut(h);
                for ((u, v), w) in lo.iter_mut().zip(hi.iter_mut()).zip(tw) {
                    let t = *v * w;
                    *v = *u - t;
                    *u += t;
                }
            }
            len *= 2;
        }
        Ok(())
    }

    /// The inverse of [`Encoder::special_fft`] in place (encoding direction, including the division by
    /// `n = vals.len()`).
    ///
    /// Errors: `vals.len()` is not a power of two in `[1, N/2]`.
    pub fn special_ifft(&self, vals: &mut [Complex64]) -> Result<()> {
        let n = vals.len();
        self.check_slots(n)?;
        let mut len = n;
        while len >= 2 {
            let h = len / 2;
            let tw = &self.twiddles[h - 1..len - 1];
            for block in vals.chunks_exact_mut(len) {
                let (lo, hi) = block.split_at_mut(h);
                for ((u, v), w) in lo.iter_mut().zip(hi.iter_mut()).zip(tw) {
                    let sum = *u + *v;
                    let diff = (*u - *v) * w.conj();
                    *u = sum;
                    *v = diff;
                }
            }
            len /= 2;
        }
        self.bit_reverse(vals);
        let inv = 1.0 / n as f64;
        vals.iter_mut().for_each(|v| *v *= inv);
        Ok(())
    }

    /// The real coefficients (length `N`, not scaled, not rounded) of the polynomial whose first `slots`
    /// slots are `values` followed by zeros: `tau^-1` of the module documentation, with sparse packing.
    ///
    /// Errors: invalid slot count, more values than slots, non-finite values.
    pub fn coefficients_of(&self, values: &[Complex64], slots: usize) -> Result<Vec<f64>> {
        self.check_slots(slots)?;
        if values.len() > slots {
            return Err(Error::TooManyValues {
                values: values.len(),
                slots,
                max: self.n / 2,
            });
        }
        for (index, v) in values.iter().enumerate() {
            for part in [v.re, v.im] {
                if !part.is_finite() {
                    return Err(Error::NonFinite {
                        what: "slot value",
                        index,
                        value: part,
                    });
                }
            }
        }
        let mut u = vec![Complex64::new(0.0, 0.0); slots];
        u[..values.len()].copy_from_slice(values);
        self.special_ifft(&mut u)?;
        let half = self.n / 2;
        let gap = half / slots;
        let mut coeffs = vec![0.0f64; self.n];
        for (i, z) in u.iter().enumerate() {
            coeffs[i * gap] = z.re;
            coeffs[half + i * gap] = z.im;
        }
        Ok(coeffs)
    }

    /// The slots of the polynomial with real coefficients `coeffs` (length `N`): slot `j` is
    /// `sum_k coeffs[k] zeta^(k 5^j)` restricted to the subring of `slots` slots (see sparse packing).
    ///
    /// Errors: invalid slot count, `coeffs.len() != N`.
    pub fn slots_of(&self, coeffs: &[f64], slots: usize) -> Result<Vec<Complex64>> {
        self.check_slots(slots)?;
        if coeffs.len() != self.n {
            return Err(Error::LengthMismatch {
                what: "polynomial coefficients to decode",
                expected: self.n,
                got: coeffs.len(),
            });
        }
        let half = self.n / 2;
        let gap = half / slots;
        let mut vals: Vec<Complex64> = (0..slots)
            .map(|i| Complex64::new(coeffs[i * gap], coeffs[half + i * gap]))
            .collect();
        self.special_fft(&mut vals)?;
        Ok(vals)
    }

    /// Encodes `values` (at most `slots` of them; missing ones are zero) into the first `slots` slots, as
    /// the polynomial `round(scale * tau^-1(values))` over `basis`, in coefficient form.
    ///
    /// Errors: `slots` not a power of two in `[1, N/2]` ([`Error::InvalidSlots`]); more values than slots
    /// ([`Error::TooManyValues`]); a NaN or infinite value ([`Error::NonFinite`]); a scale that is not
    /// positive and finite ([`Error::InvalidScale`]); scaled coefficients that are not finite or not below
    /// `Q/2` of the basis ([`Error::EncodingScaleTooLarge`], with both log2 values); a basis of another degree.
    pub fn encode_coeff(
        &self,
        values: &[Complex64],
        slots: usize,
        scale: f64,
        basis: &Arc<RnsBasis>,
    ) -> Result<Poly<Coeff>> {
        self.check_degree(basis.degree())?;
        Self::check_scale(scale)?;
        let mut coeffs = self.coefficients_of(values, slots)?;
        let mut max_abs = 0.0f64;
        for c in coeffs.iter_mut() {
            *c = (*c * scale).round();
            // NaN must not be swallowed by max: it counts as infinite.
            max_abs = if c.is_nan() {
                f64::INFINITY
            } else {
                max_abs.max(c.abs())
            };
        }
        let log2_half_q = basis.log2_product() - 1.0;
        let half_q = basis.values().iter().fold(0.5f64, |acc, &q| acc * q as f64);
        if !(max_abs.is_finite() && max_abs < half_q * HALF_Q_MARGIN) {
            return Err(Error::EncodingScaleTooLarge {
                log2_scale: scale.log2(),
                log2_max_coeff: max_abs.log2(),
                log2_half_q,
            });
        }
        let n = self.n;
        let big = max_abs >= TWO_POW_63;
        let mut data = vec![0u64; basis.len() * n];
        data.par_chunks_mut(n)
            .zip(basis.moduli().par_iter())
            .for_each(|(limb, m)| {
                if big {
                    let pow2 = powers_of_two(m, max_abs);
                    limb.iter_mut()
                        .zip(&coeffs)
                        .for_each(|(x, &c)| *x = reduce_f64(m, c, &pow2));
                } else {
                    limb.iter_mut()
                        .zip(&coeffs)
                        .for_each(|(x, &c)| *x = m.reduce_i64(c as i64));
                }
            });
        Ok(Poly::from_data(basis, data)?)
    }

    /// [`Encoder::encode_coeff`] followed by the forward NTT: the plaintext polynomial in NTT form, ready to
    /// be added to or multiplied with ciphertexts. Same errors.
    pub fn encode(
        &self,
        values: &[Complex64],
        slots: usize,
        scale: f64,
        basis: &Arc<RnsBasis>,
    ) -> Result<Poly<Ntt>> {
        Ok(self.encode_coeff(values, slots, scale, basis)?.into_ntt())
    }

    /// Encodes real values (imaginary parts zero); see [`Encoder::encode`] for the errors.
    pub fn encode_real(
        &self,
        values: &[f64],
        slots: usize,
        scale: f64,
        basis: &Arc<RnsBasis>,
    ) -> Result<Poly<Ntt>> {
        let complex: Vec<Complex64> = values.iter().map(|&x| Complex64::new(x, 0.0)).collect();
        self.encode(&complex, slots, scale, basis)
    }

    /// Decodes the first `slots` slots of `p` at scale `scale`: the centered coefficients of `p` modulo `Q`
    /// (exact CRT composition, [`CrtComposer`]) divided by `scale`, then the special FFT.
    ///
    /// Errors: invalid slot count, non-positive or non-finite scale, a polynomial of another degree.
    pub fn decode(&self, p: &Poly<Coeff>, slots: usize, scale: f64) -> Result<Vec<Complex64>> {
        self.decode_with(&CrtComposer::new(p.basis()), p, slots, scale)
    }

    /// [`Encoder::decode`] with a composer built in advance for `p`'s basis (saves its precomputation when
    /// decoding many polynomials). Errors as [`Encoder::decode`], plus a composer for another basis.
    pub fn decode_with(
        &self,
        composer: &CrtComposer,
        p: &Poly<Coeff>,
        slots: usize,
        scale: f64,
    ) -> Result<Vec<Complex64>> {
        self.check_degree(p.degree())?;
        self.check_slots(slots)?;
        Self::check_scale(scale)?;
        let coeffs = composer.compose_centered_scaled(p, scale)?;
        self.slots_of(&coeffs, slots)
    }

    /// The real parts of [`Encoder::decode`]. Same errors.
    pub fn decode_real(&self, p: &Poly<Coeff>, slots: usize, scale: f64) -> Result<Vec<f64>> {
        Ok(self
            .decode(p, slots, scale)?
            .into_iter()
            .map(|z| z.re)
            .collect())
    }
}

/// `2^e mod p` for every exponent `e` a coefficient of magnitude up to `max_abs` can need (`e <= 1023 - 52`).
fn powers_of_two(m: &Modulus, max_abs: f64) -> Vec<u64> {
    let top = ((max_abs.to_bits() >> 52) & 0x7ff) as usize;
    let count = top.saturating_sub(1075) + 1;
    let mut out = Vec::with_capacity(count);
    let mut x = 1 % m.value();
    for _ in 0..count {
        out.push(x);
        x = m.add(x, x);
    }
    out
}

/// `c mod p` for an integer-valued finite `c`, exactly, from `c = mantissa * 2^e`.
#[inline]
fn reduce_f64(m: &Modulus, c: f64, pow2: &[u64]) -> u64 {
    if c.abs() < TWO_POW_63 {
        return m.reduce_i64(c as i64);
    }
    let bits = c.to_bits();
    let e = ((bits >> 52) & 0x7ff) as usize - 1075; // >= 11 since |c| >= 2^63
    let mantissa = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
    let r = m.mul(m.reduce(mantissa), pow2[e]);
    if c < 0.0 {
        m.neg(r)
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::precision::PrecisionStats;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;
    use rnsfhe_math::primes::ntt_primes_of_bits;

    fn basis(n: usize, bits: u32, limbs: usize) -> Arc<RnsBasis> {
        let qs = ntt_primes_of_bits(bits, 2 * n as u64, limbs, &[]).unwrap();
        RnsBasis::new(n, &qs).unwrap()
    }

    fn random_disc(rng: &mut ChaCha20Rng, count: usize) -> Vec<Complex64> {
        (0..count)
            .map(|_| {
                let r = rng.gen::<f64>().sqrt();
                let t = rng.gen::<f64>() * std::f64::consts::TAU;
                Complex64::from_polar(r, t)
            })
            .collect()
    }

    /// slot j = sum_k c_k zeta^(k 5^j), evaluated naively (angles reduced exactly modulo 2N).
    fn naive_slots(coeffs: &[f64], count: usize) -> Vec<Complex64> {
        let n = coeffs.len();
        let two_n = 2 * n;
        (0..count)
            .map(|j| {
                let g = (0..j).fold(1usize, |acc, _| acc * 5 % two_n);
                coeffs
                    .iter()
                    .enumerate()
                    .map(|(k, &c)| root_of_unity(k * g % two_n, two_n) * c)
                    .sum()
            })
            .collect()
    }

    #[test]
    fn roots_are_accurate() {
        for m in [32usize, 1 << 12, 1 << 17] {
            for k in (0..m)
                .step_by(m / 32 + 1)
                .chain([1, m / 8, 3 * m / 8, m - 1])
            {
                let z = root_of_unity(k, m);
                let a = std::f64::consts::TAU * k as f64 / m as f64;
                assert!((z.re - a.cos()).abs() < 1e-15 && (z.im - a.sin()).abs() < 1e-15);
                assert!((z.norm() - 1.0).abs() < 2.5e-16);
            }
        }
    }

    #[test]
    fn slot_order_is_evaluation_at_powers_of_five() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        for n in [16usize, 64, 256] {
            let enc = Encoder::new(n).unwrap();
            // Decoding direction against the naive evaluation.
            let coeffs: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
            let got = enc.slots_of(&coeffs, n / 2).unwrap();
            let want = naive_slots(&coeffs, n / 2);
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).norm() < 1e-12, "N = {n}: {g} vs {w}");
            }
            // Encoding direction, every slot count: the coefficients evaluate to the values, replicated.
            let mut slots = 1;
            while slots <= n / 2 {
                let values = random_disc(&mut rng, slots);
                let c = enc.coefficients_of(&values, slots).unwrap();
                let evals = naive_slots(&c, n / 2);
                for (j, e) in evals.iter().enumerate() {
                    assert!(
                        (e - values[j % slots]).norm() < 1e-12,
                        "N = {n}, slots = {slots}, slot {j}"
                    );
                }
                assert_eq!(enc.slots_of(&c, slots).unwrap().len(), slots);
                slots *= 2;
            }
        }
    }

    #[test]
    fn round_trip_precision_at_scale_2_55() {
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        let scale = 2f64.powi(55);
        for log_n in 10..=16 {
            let n = 1usize << log_n;
            let enc = Encoder::new(n).unwrap();
            for limbs in [2usize, 3] {
                let b = basis(n, 60, limbs);
                let values = random_disc(&mut rng, n / 2);
                let pt = enc.encode(&values, n / 2, scale, &b).unwrap();
                let back = enc.decode(&pt.into_coeff(), n / 2, scale).unwrap();
                let stats = PrecisionStats::compare(&values, &back).unwrap();
                println!("N = 2^{log_n}, {limbs} x 60-bit primes, scale 2^55: {stats}");
                assert!(stats.real.min >= 45.0 && stats.imag.min >= 45.0, "{stats}");
            }
        }
    }

    #[test]
    fn sparse_round_trip_and_replication() {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let n = 1 << 12;
        let enc = Encoder::new(n).unwrap();
        let b = basis(n, 60, 2);
        let scale = 2f64.powi(50);
        let mut slots = 1;
        while slots <= n / 2 {
            // Fewer values than slots: the rest are zero.
            let values = random_disc(&mut rng, slots.div_ceil(2).max(1));
            let pt = enc.encode(&values, slots, scale, &b).unwrap().into_coeff();
            let back = enc.decode(&pt, slots, scale).unwrap();
            let mut expected = values.clone();
            expected.resize(slots, Complex64::new(0.0, 0.0));
            let stats = PrecisionStats::compare(&expected, &back).unwrap();
            assert!(stats.min_bits() >= 40.0, "slots {slots}: {stats}");
            // Only the subring coefficients are used.
            let gap = n / 2 / slots;
            let data = pt.limb(0).unwrap();
            assert!(data
                .iter()
                .enumerate()
                .all(|(k, &c)| c == 0 || k % gap == 0));
            // Full decoding replicates the values.
            let full = enc.decode(&pt, n / 2, scale).unwrap();
            let replicated: Vec<Complex64> = (0..n / 2).map(|j| expected[j % slots]).collect();
            let stats = PrecisionStats::compare(&replicated, &full).unwrap();
            assert!(
                stats.min_bits() >= 40.0,
                "slots {slots} replicated: {stats}"
            );
            slots *= 2;
        }
    }

    #[test]
    fn galois_elements_rotate_left_and_conjugate() {
        let mut rng = ChaCha20Rng::seed_from_u64(4);
        let n = 1 << 10;
        let enc = Encoder::new(n).unwrap();
        let b = basis(n, 60, 2);
        let scale = 2f64.powi(50);
        for slots in [n / 2, 64, 8] {
            let values = random_disc(&mut rng, slots);
            let pt = enc.encode(&values, slots, scale, &b).unwrap().into_coeff();
            let group = enc.galois_group();
            for r in [1i64, 2, 5, (slots as i64) - 1, -1, -3] {
                let k = group.element_of_step(r);
                let mut g = 1usize;
                for _ in 0..r.rem_euclid((n / 2) as i64) {
                    g = g * 5 % (2 * n);
                }
                assert_eq!(k.value(), g);
                let rotated = pt.automorphism(k).unwrap();
                let got = enc.decode(&rotated, slots, scale).unwrap();
                let want: Vec<Complex64> = (0..slots)
                    .map(|j| values[(j as i64 + r).rem_euclid(slots as i64) as usize])
                    .collect();
                let stats = PrecisionStats::compare(&want, &got).unwrap();
                assert!(stats.min_bits() >= 40.0, "slots {slots}, r = {r}: {stats}");
            }
            let conj = pt.automorphism(group.conjugation()).unwrap();
            let got = enc.decode(&conj, slots, scale).unwrap();
            let want: Vec<Complex64> = values.iter().map(|z| z.conj()).collect();
            let stats = PrecisionStats::compare(&want, &got).unwrap();
            assert!(
                stats.min_bits() >= 40.0,
                "slots {slots}, conjugation: {stats}"
            );
        }
    }

    #[test]
    fn large_scales_reduce_big_coefficients_exactly() {
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        let n = 1 << 10;
        let enc = Encoder::new(n).unwrap();
        // Coefficients of about 2^100 and 2^150 (beyond i128): exact reduction of f64 values into limbs.
        for (log_scale, limbs) in [(100, 3usize), (150, 4), (40, 1)] {
            let b = basis(n, 60, limbs);
            let scale = 2f64.powi(log_scale);
            let values = random_disc(&mut rng, n / 2);
            let pt = enc.encode_coeff(&values, n / 2, scale, &b).unwrap();
            // The residues agree with the rounded coefficients, composed exactly.
            let composed = CrtComposer::new(&b).compose_centered_f64(&pt).unwrap();
            let mut rounded = enc.coefficients_of(&values, n / 2).unwrap();
            rounded.iter_mut().for_each(|c| *c = (*c * scale).round());
            assert_eq!(composed, rounded, "scale 2^{log_scale}");
            let back = enc.decode(&pt, n / 2, scale).unwrap();
            let stats = PrecisionStats::compare(&values, &back).unwrap();
            let want = if log_scale == 40 { 25.0 } else { 45.0 };
            assert!(stats.min_bits() >= want, "scale 2^{log_scale}: {stats}");
        }
    }

    #[test]
    fn real_helpers() {
        let n = 1 << 11;
        let enc = Encoder::new(n).unwrap();
        let b = basis(n, 60, 2);
        let values: Vec<f64> = (0..100).map(|i| (i as f64 / 7.0).sin()).collect();
        let scale = 2f64.powi(50);
        let pt = enc.encode_real(&values, 128, scale, &b).unwrap();
        let back = enc.decode_real(&pt.into_coeff(), 128, scale).unwrap();
        let mut expected = values.clone();
        expected.resize(128, 0.0);
        let stats = PrecisionStats::compare_real(&expected, &back).unwrap();
        assert!(stats.real.min >= 40.0, "{stats}");
    }

    #[test]
    fn errors_name_the_values() {
        let n = 1 << 10;
        let enc = Encoder::new(n).unwrap();
        let b = basis(n, 60, 2);
        let v = vec![Complex64::new(0.5, 0.5); 600];
        let e = enc.encode(&v, 512, 2f64.powi(40), &b).unwrap_err();
        assert_eq!(
            e,
            Error::TooManyValues {
                values: 600,
                slots: 512,
                max: 512
            }
        );
        assert!(e.to_string().contains("600") && e.to_string().contains("512"));
        assert!(enc.encode(&v[..10], 64, 2f64.powi(40), &b).is_ok());
        for slots in [0usize, 3, 1024, 100] {
            let e = enc.encode(&v[..1], slots, 2f64.powi(40), &b).unwrap_err();
            assert_eq!(e, Error::InvalidSlots { slots, n, max: 512 });
            assert!(e.to_string().contains(&slots.to_string()));
            assert!(enc.decode(&Poly::zero(&b), slots, 1.0).is_err());
        }
        // Q / 2 is about 2^119; values of magnitude about 1 at scale 2^125 do not fit.
        let e = enc.encode(&v[..512], 512, 2f64.powi(125), &b).unwrap_err();
        match &e {
            Error::EncodingScaleTooLarge {
                log2_scale,
                log2_max_coeff,
                log2_half_q,
            } => {
                assert_eq!(*log2_scale, 125.0);
                assert!(*log2_max_coeff > *log2_half_q && (*log2_half_q - 119.0).abs() < 1.0);
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(e.to_string().starts_with("scale too large for the modulus"));
        // A finite scale whose product overflows.
        let big = vec![Complex64::new(4.0, 4.0); 4];
        assert!(matches!(
            enc.encode(&big, 4, 1e308, &b),
            Err(Error::EncodingScaleTooLarge { log2_max_coeff, .. }) if log2_max_coeff.is_infinite()
        ));
        let mut bad = v[..4].to_vec();
        bad[2].im = f64::NAN;
        assert!(matches!(
            enc.encode(&bad, 4, 2f64.powi(40), &b),
            Err(Error::NonFinite { index: 2, .. })
        ));
        bad[2] = Complex64::new(f64::INFINITY, 0.0);
        assert!(matches!(
            enc.encode(&bad, 4, 2f64.powi(40), &b),
            Err(Error::NonFinite { index: 2, .. })
        ));
        for s in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                enc.encode(&v[..4], 4, s, &b),
                Err(Error::InvalidScale { .. })
            ));
            assert!(matches!(
                enc.decode(&Poly::zero(&b), 4, s),
                Err(Error::InvalidScale { .. })
            ));
        }
        let other = basis(2 * n, 60, 2);
        assert_eq!(
            enc.encode(&v[..4], 4, 2f64.powi(40), &other).unwrap_err(),
            Error::DegreeMismatch {
                encoder: n,
                other: 2 * n
            }
        );
        assert!(matches!(
            enc.decode(&Poly::zero(&other), 4, 1.0),
            Err(Error::DegreeMismatch { .. })
        ));
        assert!(matches!(Encoder::new(1000), Err(Error::Math(_))));
        assert!(matches!(
            enc.slots_of(&[0.0; 3], 4),
            Err(Error::LengthMismatch { .. })
        ));
    }

    #[test]
    fn encoder_is_send_sync() {
        fn check<T: Send + Sync>() {}
        check::<Encoder>();
        check::<CrtComposer>();
    }
}
