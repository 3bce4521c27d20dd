//! Shared helpers of the CKKS integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use rnsfhe_ckks::{
    CkksParams, Complex64, ConversionMode, Csprng, PrecisionStats, RescalingPolicy,
    SecretDistribution,
};

/// A deterministic generator for tests.
pub fn rng(seed: u8) -> Csprng {
    Csprng::insecure_from_seed_for_tests([seed; 32])
}

/// Uniform values in `[-1, 1]` from a simple deterministic sequence (not cryptographic).
pub fn values(count: usize, seed: u64) -> Vec<f64> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..count)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}

/// Complex values with real and imaginary parts in `[-1, 1]`.
pub fn complex_values(count: usize, seed: u64) -> Vec<Complex64> {
    let re = values(count, seed);
    let im = values(count, seed + 1000);
    re.into_iter()
        .zip(im)
        .map(|(a, b)| Complex64::new(a, b))
        .collect()
}

/// Bits of precision (min over slots and parts).
pub fn bits(expected: &[Complex64], got: &[Complex64]) -> f64 {
    PrecisionStats::compare(expected, got).unwrap().min_bits()
}

/// Real inputs as complex.
pub fn c(v: &[f64]) -> Vec<Complex64> {
    v.iter().map(|&x| Complex64::new(x, 0.0)).collect()
}

/// Small parameters: `N = 2^12`, scale `2^40`, `q_0` of 50 bits, 3 levels, one 55-bit special prime,
/// `dnum = 4` (one prime per digit, so that `ExactInteger` works with `q_0` of another size).
pub fn small(policy: RescalingPolicy, mode: ConversionMode) -> CkksParams {
    CkksParams {
        log_n: 12,
        log_scale: 40,
        q0_bits: 50,
        levels: 3,
        special_primes: 1,
        special_bits: 55,
        dnum: 4,
        secret: SecretDistribution::Ternary,
        sigma: 3.2,
        conversion: mode,
        rescaling: policy,
        insecure_for_testing: true,
    }
}
