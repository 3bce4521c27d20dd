//! Helpers shared by the integration tests of look-up tables.
#![allow(clippy::unwrap_used, dead_code)]

use std::sync::Arc;

use rnsfhe_core::{RlweContext, SecretDistribution};
use rnsfhe_lwe::LutParams;
use rnsfhe_math::primes::ntt_primes_of_bits;
use rnsfhe_math::sampling::Csprng;

/// The accumulator ring of the tests (`n = 2^10`, `q_0` of 45 bits, a special prime of `special_bits`
/// bits, `sigma = 3.2`, Hamming weight 64), its `q_0` and a generator seeded with `seed`.
pub fn lut_ring(special_bits: u32, seed: u8) -> (Arc<RlweContext>, u64, Csprng) {
    let log_n = 10;
    let two_n = 2u64 << log_n;
    let q0 = ntt_primes_of_bits(45, two_n, 1, &[]).unwrap()[0];
    let special = ntt_primes_of_bits(special_bits, two_n, 1, &[q0]).unwrap()[0];
    let ctx = LutParams {
        log_n,
        q0,
        special,
        sigma: 3.2,
        secret: SecretDistribution::HammingWeight(64),
    }
    .context_allowing_insecure()
    .unwrap();
    (ctx, q0, Csprng::insecure_from_seed_for_tests([seed; 32]))
}
