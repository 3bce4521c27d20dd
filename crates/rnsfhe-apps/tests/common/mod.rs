//! Shared set-up of the integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use rnsfhe_apps::PackedLayout;
use rnsfhe_ckks::{
    CkksContext, CkksDecryptor, CkksEncryptor, CkksParams, Csprng, Evaluator, KeyGenerator, Preset,
    RescalingPolicy,
};

/// A deterministic generator (tests only).
pub fn rng(seed: u8) -> Csprng {
    Csprng::insecure_from_seed_for_tests([seed; 32])
}

/// **Insecure, for fast tests only**: `Preset::PaperTable4` (`q_0` of 61 bits, primes of 40 bits, secret of
/// Hamming weight 64, `dnum = 3`) at `N = 2^13` (4096 slots) with `levels` levels and special primes
/// covering a digit. Far above the HE Standard's bound for `N = 2^13`; the context flags it insecure.
pub fn small_params(levels: usize, rescaling: RescalingPolicy) -> CkksParams {
    let digit = (levels + 1).div_ceil(3);
    CkksParams {
        log_n: 13,
        levels,
        special_primes: (61 + 40 * (digit - 1)).div_ceil(60),
        rescaling,
        ..Preset::PaperTable4.params()
    }
}

/// Context, encryptor, decryptor and an evaluator with the keys `layout` needs.
pub struct Setup {
    pub ctx: Arc<CkksContext>,
    pub enc: CkksEncryptor,
    pub dec: CkksDecryptor,
    pub eval: Evaluator,
    pub rng: Csprng,
}

pub fn setup(params: CkksParams, layouts: &[PackedLayout], seed: u8) -> Setup {
    let ctx = CkksContext::new(params).unwrap();
    let mut rng = rng(seed);
    let kg = KeyGenerator::new(&ctx, &mut rng).unwrap();
    let mut steps: Vec<i64> = layouts.iter().flat_map(|l| l.rotation_steps()).collect();
    steps.sort_unstable();
    steps.dedup();
    let keys = kg.generate_all(&steps, false, &mut rng).unwrap();
    let enc = CkksEncryptor::with_public_key(&ctx, &keys.public).unwrap();
    let dec = CkksDecryptor::new(&ctx, &keys.secret).unwrap();
    let eval = Evaluator::new(&ctx)
        .with_relin_key(keys.relin)
        .unwrap()
        .with_galois_keys(keys.galois)
        .unwrap();
    Setup {
        ctx,
        enc,
        dec,
        eval,
        rng,
    }
}

/// Largest absolute difference.
pub fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}
