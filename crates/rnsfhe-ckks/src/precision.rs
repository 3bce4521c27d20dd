//! Precision statistics of approximate (CKKS) results: how many bits of each slot are correct.
//!
//! For an expected vector `z` and a computed vector `z'`, the precision of slot `j` is
//! `-log2 |Re(z'_j) - Re(z_j)|` for the real part and `-log2 |Im(z'_j) - Im(z_j)|` for the imaginary part
//! (absolute error, as in the RNS-CKKS paper's "bit precision" of Section 5 and Fig. 1). [`PrecisionStats`]
//! summarizes them by min / mean / median / max; the **min** is what tests compare with their thresholds,
//! which come from the papers' noise analyses and tables.
//!
//! Conventions: an exact slot (zero error) counts as [`PRECISION_CAP_BITS`] (64 bits, beyond anything a
//! double can resolve for values of magnitude about 1), so that means stay finite; a non-finite error (NaN
//! or infinite values) counts as `-inf` bits, so that the min and mean flag it.

use std::fmt;

use num_complex::Complex64;

use crate::error::{Error, Result};

/// Bits of precision credited to a slot whose error is exactly zero.
pub const PRECISION_CAP_BITS: f64 = 64.0;

/// Min / mean / median / max of the bits of precision of one part (real or imaginary) over all slots.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PartStats {
    /// Smallest precision over the slots (the worst slot).
    pub min: f64,
    /// Mean precision.
    pub mean: f64,
    /// Median precision (mean of the two middle values for an even count).
    pub median: f64,
    /// Largest precision (the best slot).
    pub max: f64,
}

impl PartStats {
    fn from_bits(mut bits: Vec<f64>) -> Self {
        debug_assert!(!bits.is_empty());
        bits.sort_by(f64::total_cmp);
        let len = bits.len();
        let median = if len % 2 == 1 {
            bits[len / 2]
        } else {
            (bits[len / 2 - 1] + bits[len / 2]) / 2.0
        };
        Self {
            min: bits[0],
            mean: bits.iter().sum::<f64>() / len as f64,
            median,
            max: bits[len - 1],
        }
    }
}

impl fmt::Display for PartStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "min {:.1} / mean {:.1} / median {:.1} / max {:.1} bits",
            self.min, self.mean, self.median, self.max
        )
    }
}

/// Precision statistics of a computed vector against the expected one, separately for real and imaginary
/// parts; see the [module documentation](self) for the conventions.
///
/// `Display` prints `real: min 42.1 / mean 45.3 / median 45.6 / max 52.0 bits; imag: ... (4096 slots)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PrecisionStats {
    /// Statistics of the real parts.
    pub real: PartStats,
    /// Statistics of the imaginary parts.
    pub imag: PartStats,
    /// Number of slots compared.
    pub slots: usize,
}

/// Bits of precision of one absolute error.
fn bits_of(error: f64) -> f64 {
    if error == 0.0 {
        PRECISION_CAP_BITS
    } else if error.is_finite() {
        -error.abs().log2()
    } else {
        f64::NEG_INFINITY
    }
}

impl PrecisionStats {
    /// Compares `got` with `expected` slot by slot.
    ///
    /// Errors: lengths differ ([`Error::LengthMismatch`]) or the vectors are empty ([`Error::Empty`]).
    pub fn compare(expected: &[Complex64], got: &[Complex64]) -> Result<Self> {
        if expected.len() != got.len() {
            return Err(Error::LengthMismatch {
                what: "precision comparison (expected vs computed slots)",
                expected: expected.len(),
                got: got.len(),
            });
        }
        if expected.is_empty() {
            return Err(Error::Empty {
                what: "the vectors of a precision comparison",
            });
        }
        let (re, im): (Vec<f64>, Vec<f64>) = expected
            .iter()
            .zip(got)
            .map(|(e, g)| (bits_of(g.re - e.re), bits_of(g.im - e.im)))
            .unzip();
        Ok(Self {
            real: PartStats::from_bits(re),
            imag: PartStats::from_bits(im),
            slots: expected.len(),
        })
    }

    /// Compares real vectors (imaginary parts zero on both sides, so [`PrecisionStats::imag`] is the cap).
    ///
    /// Errors as [`PrecisionStats::compare`].
    pub fn compare_real(expected: &[f64], got: &[f64]) -> Result<Self> {
        let e: Vec<Complex64> = expected.iter().map(|&x| Complex64::new(x, 0.0)).collect();
        let g: Vec<Complex64> = got.iter().map(|&x| Complex64::new(x, 0.0)).collect();
        Self::compare(&e, &g)
    }

    /// The worst precision over all slots and both parts: `min(real.min, imag.min)`.
    pub fn min_bits(&self) -> f64 {
        self.real.min.min(self.imag.min)
    }
}

impl fmt::Display for PrecisionStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "real: {}; imag: {} ({} slots)",
            self.real, self.imag, self.slots
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_and_display() {
        let expected = vec![Complex64::new(1.0, -1.0); 4];
        let got = vec![
            Complex64::new(1.0 + 2f64.powi(-10), -1.0),
            Complex64::new(1.0 - 2f64.powi(-20), -1.0 + 2f64.powi(-30)),
            Complex64::new(1.0 + 2f64.powi(-30), -1.0 - 2f64.powi(-40)),
            Complex64::new(1.0, -1.0 + 2f64.powi(-50)),
        ];
        let s = PrecisionStats::compare(&expected, &got).unwrap();
        assert_eq!(s.slots, 4);
        assert_eq!(s.real.min, 10.0);
        assert_eq!(s.real.max, PRECISION_CAP_BITS);
        assert_eq!(s.real.median, 25.0);
        assert_eq!(s.real.mean, (10.0 + 20.0 + 30.0 + 64.0) / 4.0);
        assert_eq!(s.imag.min, 30.0);
        assert_eq!(s.imag.median, 45.0);
        assert_eq!(s.min_bits(), 10.0);
        assert_eq!(
            s.to_string(),
            "real: min 10.0 / mean 31.0 / median 25.0 / max 64.0 bits; \
             imag: min 30.0 / mean 46.0 / median 45.0 / max 64.0 bits (4 slots)"
        );
        let odd = PrecisionStats::compare_real(&[0.0, 0.0, 0.0], &[0.5, 0.25, 0.125]).unwrap();
        assert_eq!(odd.real.median, 2.0);
        assert_eq!(odd.imag.min, PRECISION_CAP_BITS);
    }

    #[test]
    fn errors_and_non_finite() {
        let a = vec![Complex64::new(0.0, 0.0); 3];
        assert!(matches!(
            PrecisionStats::compare(&a, &a[..2]),
            Err(Error::LengthMismatch {
                expected: 3,
                got: 2,
                ..
            })
        ));
        assert!(matches!(
            PrecisionStats::compare(&[], &[]),
            Err(Error::Empty { .. })
        ));
        let b = vec![
            Complex64::new(f64::NAN, 0.0),
            Complex64::new(0.0, 0.0),
            Complex64::new(0.0, 0.0),
        ];
        let s = PrecisionStats::compare(&a, &b).unwrap();
        assert_eq!(s.real.min, f64::NEG_INFINITY);
        assert_eq!(s.real.max, PRECISION_CAP_BITS);
    }
}
