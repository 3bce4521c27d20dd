//! The bootstrapping chain of the META-BTS and automatic-bootstrapping tests: `N = 2^11`, scale
//! `2^51`, `q_0` of 60 bits (`q_0 / Delta ~ 2^9`, EvalMod's message ratio), digits of 4 primes under
//! `P` of four 55-bit primes, a sparse secret of Hamming weight 64 (a small `K` for EvalMod, hence
//! few double angles); not secure. The default circuit on it is 17 levels deep (3 + 11 + 3).

use std::sync::Arc;

use rnsfhe_ckks::{
    BootstrapParams, Bootstrapper, Ciphertext, CkksContext, CkksDecryptor, CkksEncryptor,
    CkksParams, Complex64, ConversionMode, Evaluator, KeyGenerator, RescalingPolicy,
    SecretDistribution,
};

use super::rng;

/// The depth of the default circuit on [`context`]: a chain of `DEPTH + 1 + u` limbs (`levels =
/// DEPTH + u` scaling primes) leaves `u` multiplications after a bootstrapping.
pub const DEPTH: usize = 17;

/// The chain with `levels` scaling primes.
pub fn context(levels: usize) -> Arc<CkksContext> {
    context_with(levels, SecretDistribution::HammingWeight(64))
}

/// [`context`] with another secret.
pub fn context_with(levels: usize, secret: SecretDistribution) -> Arc<CkksContext> {
    CkksContext::new(CkksParams {
        log_n: 11,
        log_scale: 51,
        q0_bits: 60,
        levels,
        bootstrap_primes: Vec::new(),
        special_primes: 4,
        special_bits: 55,
        dnum: (levels + 1).div_ceil(4),
        secret,
        sigma: 3.2,
        conversion: ConversionMode::Fast,
        rescaling: RescalingPolicy::ExactScale,
        insecure_for_testing: true,
    })
    .unwrap()
}

/// A context with `user_levels` levels after a bootstrapping, its keys, a bootstrapper of `slots`
/// slots and an evaluator with the relinearization and bootstrapping keys.
pub struct BtpSetup {
    pub ctx: Arc<CkksContext>,
    pub btp: Arc<Bootstrapper>,
    pub enc: CkksEncryptor,
    pub dec: CkksDecryptor,
    pub eval: Evaluator,
}

impl BtpSetup {
    /// Keys from `rng(seed)`.
    pub fn new(user_levels: usize, slots: usize, seed: u8) -> Self {
        let ctx = context(DEPTH + user_levels);
        let mut r = rng(seed);
        let keys = KeyGenerator::new(&ctx, &mut r).unwrap();
        let btp = Arc::new(
            Bootstrapper::new(&ctx, BootstrapParams::for_context(&ctx, slots).unwrap()).unwrap(),
        );
        let eval = Evaluator::new(&ctx)
            .with_relin_key(keys.relin_key(&mut r).unwrap())
            .unwrap()
            .with_bootstrapping_keys(keys.bootstrapping_keys(&btp, &mut r).unwrap())
            .unwrap();
        Self {
            enc: CkksEncryptor::with_secret_key(&ctx, keys.secret_key()).unwrap(),
            dec: CkksDecryptor::new(&ctx, keys.secret_key()).unwrap(),
            ctx,
            btp,
            eval,
        }
    }

    /// `z` encrypted at `level` with the level's default scale.
    pub fn encrypt(&self, z: &[Complex64], level: usize, seed: u8) -> Ciphertext {
        let pt = self.ctx.encode(z, self.btp.slots(), level).unwrap();
        self.enc.encrypt_plaintext(&pt, &mut rng(seed)).unwrap()
    }
}

/// The largest error of a real or imaginary part.
pub fn max_error(want: &[Complex64], got: &[Complex64]) -> f64 {
    want.iter()
        .zip(got)
        .map(|(a, b)| (a.re - b.re).abs().max((a.im - b.im).abs()))
        .fold(0.0, f64::max)
}
