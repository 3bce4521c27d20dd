//! Word-size modular arithmetic for moduli below 2^62.
//!
//! A [`Modulus`] carries the precomputed Barrett constant for reducing double-word products and offers
//! Shoup (Harvey) multiplication by constants known in advance ([`ShoupConstant`]). "Lazy" variants keep
//! results in `[0, 2p)` or `[0, 4p)`, which is why moduli are limited to 62 bits: `4p` must fit in a word.

use crate::error::{Error, Result};

/// Largest supported modulus bit length (exclusive): moduli are below `2^MAX_MODULUS_BITS`.
pub const MAX_MODULUS_BITS: u32 = 62;

/// A modulus `p` in `[2, 2^62)` with its Barrett constant.
///
/// Barrett reduction of a product `x < p^2` (Barrett 1986, in the form of Menezes et al., Alg. 14.42):
/// with `b = bitlen(p)` and `mu = floor(2^(2b) / p)`, the estimate
/// `q = ((x >> (b - 1)) * mu) >> (b + 1)` satisfies `x - q p < 3p`; two conditional subtractions finish.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Modulus {
    value: u64,
    bits: u32,
    mu: u64,
    /// `floor(2^128 / p)`, high and low words, for [`Modulus::reduce_wide`].
    wide_mu_hi: u64,
    wide_mu_lo: u64,
}

/// A constant `w < p` with its Shoup companion `floor(w * 2^64 / p)`, for fast multiplication by `w`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShoupConstant {
    /// The constant itself.
    pub value: u64,
    /// `floor(value * 2^64 / p)`.
    pub quotient: u64,
}

impl Modulus {
    /// Checks `p` and precomputes its Barrett constant.
    ///
    /// Errors with [`Error::ModulusOutOfRange`] unless `2 <= p < 2^62`.
    pub fn new(p: u64) -> Result<Self> {
        let bits = 64 - p.leading_zeros();
        if p < 2 || bits > MAX_MODULUS_BITS {
            return Err(Error::ModulusOutOfRange {
                value: p,
                bits,
                max_bits: MAX_MODULUS_BITS,
            });
        }
        let mu = ((1u128 << (2 * bits)) / p as u128) as u64;
        // floor(2^128 / p): when p does not divide 2^128 it equals floor((2^128 - 1) / p); powers of two
        // get the exact shift.
        let wide = if p.is_power_of_two() {
            1u128 << (128 - p.trailing_zeros())
        } else {
            u128::MAX / p as u128
        };
        Ok(Self {
            value: p,
            bits,
            mu,
            wide_mu_hi: (wide >> 64) as u64,
            wide_mu_lo: wide as u64,
        })
    }

    /// The modulus `p`.
    #[inline(always)]
    pub fn value(&self) -> u64 {
        self.value
    }

    /// Bit length of `p`.
    #[inline(always)]
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// Reduces a double-word value `x < p^2` (or any `x < 2^(2b)`, `b = bitlen(p)`) to `[0, p)`.
    #[inline(always)]
    pub fn reduce_u128(&self, x: u128) -> u64 {
        debug_assert!(x < 1u128 << (2 * self.bits));
        let q = ((x >> (self.bits - 1)) * self.mu as u128) >> (self.bits + 1);
        let mut r = (x - q * self.value as u128) as u64;
        r = self.reduce_once(r);
        self.reduce_once(r)
    }

    /// Reduces any word to `[0, p)`.
    #[inline(always)]
    pub fn reduce(&self, x: u64) -> u64 {
        if x < self.value {
            x
        } else if (x as u128) < 1u128 << (2 * self.bits) {
            self.reduce_u128(x as u128)
        } else {
            x % self.value
        }
    }

    /// Reduces a signed value to `[0, p)`.
    #[inline(always)]
    pub fn reduce_i64(&self, x: i64) -> u64 {
        let r = self.reduce(x.unsigned_abs());
        // Branch-free select on the sign: noise values are secret.
        let negative = (x >> 63) as u64;
        (self.neg(r) & negative) | (r & !negative)
    }

    /// Reduces any double-word value to `[0, p)`, including values above `p^2` (full 128-bit Barrett with
    /// `mu = floor(2^128 / p)`): the quotient estimate drops the low partial product and undershoots
    /// `floor(x / p)` by at most 3, so the remainder lies in `[0, 4p)`, which fits a word; two conditional
    /// subtractions finish. Only the low word of the quotient is needed since the remainder is below `2^64`.
    /// This is what reduces lazily accumulated sums of products (basis conversion, key switching).
    #[inline(always)]
    pub fn reduce_wide(&self, x: u128) -> u64 {
        let xh = (x >> 64) as u64;
        let xl = x as u64;
        let q = xh
            .wrapping_mul(self.wide_mu_hi)
            .wrapping_add(((xh as u128 * self.wide_mu_lo as u128) >> 64) as u64)
            .wrapping_add(((xl as u128 * self.wide_mu_hi as u128) >> 64) as u64);
        let r = xl.wrapping_sub(q.wrapping_mul(self.value));
        self.reduce_once(self.reduce_4p_to_2p(r))
    }

    /// The Barrett constant `floor(2^128 / p)` of [`Modulus::reduce_wide`] as (high word, low word), for
    /// vectorized copies of that reduction.
    pub fn wide_mu(&self) -> (u64, u64) {
        (self.wide_mu_hi, self.wide_mu_lo)
    }

    /// How many products of two residues (each below `(p - 1)^2`) can be added to a value below `p` in a
    /// `u128` accumulator before [`Modulus::reduce_wide`] must run (capped at `2^20`).
    pub fn wide_accumulation_capacity(&self) -> usize {
        let p = self.value as u128;
        let sq = (p - 1) * (p - 1);
        ((u128::MAX - p) / sq.max(1)).min(1 << 20) as usize
    }

    /// Subtracts `p` once if `x >= p`: maps `[0, 2p)` to `[0, p)`.
    #[inline(always)]
    pub fn reduce_once(&self, x: u64) -> u64 {
        let (d, borrow) = x.overflowing_sub(self.value);
        // A select, not a jump: residues are often secret (decryption, key generation).
        std::hint::select_unpredictable(borrow, x, d)
    }

    /// Maps `[0, 4p)` to `[0, 2p)`.
    #[inline(always)]
    pub fn reduce_4p_to_2p(&self, x: u64) -> u64 {
        let (d, borrow) = x.overflowing_sub(self.value << 1);
        std::hint::select_unpredictable(borrow, x, d)
    }

    /// `a + b mod p` for `a, b < p`.
    #[inline(always)]
    pub fn add(&self, a: u64, b: u64) -> u64 {
        debug_assert!(a < self.value && b < self.value);
        self.reduce_once(a + b)
    }

    /// `a - b mod p` for `a, b < p`.
    #[inline(always)]
    pub fn sub(&self, a: u64, b: u64) -> u64 {
        debug_assert!(a < self.value && b < self.value);
        let (d, borrow) = a.overflowing_sub(b);
        std::hint::select_unpredictable(borrow, d.wrapping_add(self.value), d)
    }

    /// `-a mod p` for `a < p`.
    #[inline(always)]
    pub fn neg(&self, a: u64) -> u64 {
        debug_assert!(a < self.value);
        (self.value - a) * ((a != 0) as u64)
    }

    /// `a * b mod p` for `a, b < p` (Barrett).
    #[inline(always)]
    pub fn mul(&self, a: u64, b: u64) -> u64 {
        self.reduce_u128(a as u128 * b as u128)
    }

    /// `a * b + c mod p` for `a, b, c < p`.
    #[inline(always)]
    pub fn mul_add(&self, a: u64, b: u64, c: u64) -> u64 {
        self.reduce_u128(a as u128 * b as u128 + c as u128)
    }

    /// Precomputes the Shoup companion of a constant `w` (reduced mod p first).
    #[inline]
    pub fn shoup(&self, w: u64) -> ShoupConstant {
        let value = self.reduce(w);
        ShoupConstant {
            value,
            quotient: (((value as u128) << 64) / self.value as u128) as u64,
        }
    }

    /// `a * w mod p` in `[0, 2p)` for any word `a` (Shoup/Harvey lazy multiplication).
    #[inline(always)]
    pub fn mul_shoup_lazy(&self, a: u64, w: ShoupConstant) -> u64 {
        let q = ((a as u128 * w.quotient as u128) >> 64) as u64;
        a.wrapping_mul(w.value)
            .wrapping_sub(q.wrapping_mul(self.value))
    }

    /// `a * w mod p` in `[0, p)` for any word `a`.
    #[inline(always)]
    pub fn mul_shoup(&self, a: u64, w: ShoupConstant) -> u64 {
        self.reduce_once(self.mul_shoup_lazy(a, w))
    }

    /// `a^e mod p` by square-and-multiply.
    pub fn pow(&self, a: u64, mut e: u64) -> u64 {
        let mut base = self.reduce(a);
        let mut acc = 1 % self.value;
        while e > 0 {
            if e & 1 == 1 {
                acc = self.mul(acc, base);
            }
            base = self.mul(base, base);
            e >>= 1;
        }
        acc
    }

    /// The inverse of `a` modulo `p` (extended Euclid); errors if `gcd(a, p) != 1`.
    pub fn inv(&self, a: u64) -> Result<u64> {
        let a = self.reduce(a);
        let (mut r0, mut r1) = (self.value as i128, a as i128);
        let (mut t0, mut t1) = (0i128, 1i128);
        while r1 != 0 {
            let q = r0 / r1;
            (r0, r1) = (r1, r0 - q * r1);
            (t0, t1) = (t1, t0 - q * t1);
        }
        if r0 != 1 {
            return Err(Error::NotInvertible {
                value: a,
                modulus: self.value,
            });
        }
        Ok(t0.rem_euclid(self.value as i128) as u64)
    }

    /// The centered representative of `a < p` in `(-p/2, p/2]`.
    #[inline(always)]
    pub fn center(&self, a: u64) -> i64 {
        if a > self.value >> 1 {
            a as i64 - self.value as i64
        } else {
            a as i64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rejects_out_of_range_moduli() {
        assert!(matches!(
            Modulus::new(0),
            Err(Error::ModulusOutOfRange { .. })
        ));
        assert!(matches!(
            Modulus::new(1),
            Err(Error::ModulusOutOfRange { .. })
        ));
        assert!(matches!(
            Modulus::new(1 << 62),
            Err(Error::ModulusOutOfRange { bits: 63, .. })
        ));
        assert!(Modulus::new((1 << 62) - 57).is_ok());
    }

    #[test]
    fn inverse_fails_for_non_units() {
        let m = Modulus::new(15).unwrap();
        assert!(matches!(
            m.inv(5),
            Err(Error::NotInvertible {
                value: 5,
                modulus: 15
            })
        ));
        assert_eq!(m.mul(m.inv(7).unwrap(), 7), 1);
    }

    proptest! {
        #[test]
        fn arithmetic_matches_u128(p in 2u64..(1 << 62), a in any::<u64>(), b in any::<u64>(), c in any::<u64>()) {
            let m = Modulus::new(p).unwrap();
            let (a, b, c) = (a % p, b % p, c % p);
            let pp = p as u128;
            prop_assert_eq!(m.add(a, b) as u128, (a as u128 + b as u128) % pp);
            prop_assert_eq!(m.sub(a, b) as u128, (a as u128 + pp - b as u128) % pp);
            prop_assert_eq!(m.neg(a) as u128, (pp - a as u128) % pp);
            prop_assert_eq!(m.mul(a, b) as u128, a as u128 * b as u128 % pp);
            prop_assert_eq!(m.mul_add(a, b, c) as u128, (a as u128 * b as u128 + c as u128) % pp);
            let w = m.shoup(b);
            let lazy = m.mul_shoup_lazy(a, w);
            prop_assert!(lazy < 2 * p);
            prop_assert_eq!(m.mul_shoup(a, w) as u128, a as u128 * b as u128 % pp);
        }

        #[test]
        fn reductions_match(p in 2u64..(1 << 62), x in any::<u64>(), y in any::<u128>(), s in any::<i64>()) {
            let m = Modulus::new(p).unwrap();
            prop_assert_eq!(m.reduce(x), x % p);
            prop_assert_eq!(m.reduce_wide(y) as u128, y % p as u128);
            prop_assert_eq!(m.reduce_i64(s) as i128, (s as i128).rem_euclid(p as i128));
            let x4 = x % (4 * p);
            prop_assert_eq!(m.reduce_4p_to_2p(x4) % p, x4 % p);
            prop_assert!(m.reduce_4p_to_2p(x4) < 2 * p);
        }

        #[test]
        fn wide_reduction_edges(p in prop::sample::select(vec![2u64, 3, 5, 1 << 30, (1 << 61) - 1, (1 << 62) - 57])) {
            let m = Modulus::new(p).unwrap();
            for x in [0u128, 1, u128::MAX, u128::MAX - 1, (p as u128) << 64, ((p as u128) << 66) - 1] {
                prop_assert_eq!(m.reduce_wide(x) as u128, x % p as u128);
            }
            // `cap` products of two residues plus one residue fit in a u128, and one more product would not
            // (unless the capacity is capped).
            let cap = m.wide_accumulation_capacity() as u128;
            let sq = (p as u128 - 1) * (p as u128 - 1);
            let fits = |k: u128| k.checked_mul(sq).and_then(|v| v.checked_add(p as u128 - 1)).is_some();
            prop_assert!(cap >= 1 && fits(cap));
            prop_assert!(cap == 1 << 20 || !fits(cap + 1));
        }

        #[test]
        fn shoup_accepts_any_word(p in 2u64..(1 << 62), a in any::<u64>(), w in any::<u64>()) {
            let m = Modulus::new(p).unwrap();
            let c = m.shoup(w);
            prop_assert_eq!(m.mul_shoup(a, c) as u128, (a as u128 * (w % p) as u128) % p as u128);
        }

        #[test]
        fn pow_and_inverse_agree(e in 0u64..1000, a in 1u64..1000) {
            let m = Modulus::new(1_000_000_007).unwrap();
            let mut expect = 1u64;
            for _ in 0..e { expect = expect * a % 1_000_000_007; }
            prop_assert_eq!(m.pow(a, e), expect);
            prop_assert_eq!(m.mul(m.inv(a).unwrap(), a), 1);
        }
    }
}
