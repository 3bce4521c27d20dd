//! Shared helpers of the CKKS integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod bootstrapping;

use std::sync::Arc;

use rnsfhe_ckks::{
    Ciphertext, CkksContext, CkksDecryptor, CkksEncryptor, CkksParams, Complex64, ConversionMode,
    Csprng, Evaluator, KeyGenerator, PrecisionStats, RescalingPolicy, SecretDistribution,
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
        bootstrap_primes: Vec::new(),
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

/// A context with its keys, a secret-key encryptor and a decryptor (the set-up of the transform tests).
pub struct Setup {
    pub ctx: Arc<CkksContext>,
    pub keys: KeyGenerator,
    pub enc: CkksEncryptor,
    pub dec: CkksDecryptor,
    seed: u8,
}

impl Setup {
    /// Keys for `ctx` from the deterministic generator `rng(seed)` (encryptions use `seed + 1`, Galois
    /// keys `seed + 2`).
    pub fn new(ctx: Arc<CkksContext>, seed: u8) -> Self {
        let keys = KeyGenerator::new(&ctx, &mut rng(seed)).unwrap();
        let enc = CkksEncryptor::with_secret_key(&ctx, keys.secret_key()).unwrap();
        let dec = CkksDecryptor::new(&ctx, keys.secret_key()).unwrap();
        Self {
            ctx,
            keys,
            enc,
            dec,
            seed,
        }
    }

    /// `values` encrypted in `slots` slots at `level`.
    pub fn encrypt(&self, values: &[Complex64], slots: usize, level: usize) -> Ciphertext {
        let pt = self.ctx.encode(values, slots, level).unwrap();
        self.enc
            .encrypt_plaintext(&pt, &mut rng(self.seed.wrapping_add(1)))
            .unwrap()
    }

    /// An evaluator with Galois keys for `steps` (and conjugation).
    pub fn evaluator(&self, steps: &[i64], conjugate: bool) -> Evaluator {
        let gk = self
            .keys
            .galois_keys(steps, conjugate, &mut rng(self.seed.wrapping_add(2)))
            .unwrap();
        Evaluator::new(&self.ctx).with_galois_keys(gk).unwrap()
    }
}

/// The public-key set-up of the precision tests: keys from `rng(seed)` (secret, public, relinearization
/// and the rotation key of step 1, in that order), a public-key encryptor, a decryptor, an evaluator with
/// both keys, and the generator to go on with.
pub struct PkSession {
    pub enc: CkksEncryptor,
    pub dec: CkksDecryptor,
    pub eval: Evaluator,
    pub r: Csprng,
}

impl PkSession {
    /// The set-up for `ctx` from `rng(seed)`.
    pub fn new(ctx: &Arc<CkksContext>, seed: u8) -> Self {
        let mut r = rng(seed);
        let kg = KeyGenerator::new(ctx, &mut r).unwrap();
        let pk = kg.public_key(&mut r).unwrap();
        let eval = Evaluator::new(ctx)
            .with_relin_key(kg.relin_key(&mut r).unwrap())
            .unwrap()
            .with_galois_keys(kg.galois_keys(&[1], false, &mut r).unwrap())
            .unwrap();
        let enc = CkksEncryptor::with_public_key(ctx, &pk).unwrap();
        let dec = CkksDecryptor::new(ctx, kg.secret_key()).unwrap();
        Self { enc, dec, eval, r }
    }

    /// The inputs of the precision tests: `values(slots, 1)` and `values(slots, 2)` for the full `N/2`
    /// slots of `ctx`, and their encryptions (in that order, with this session's generator).
    pub fn two_inputs(
        &mut self,
        ctx: &CkksContext,
    ) -> (Vec<f64>, Vec<f64>, Ciphertext, Ciphertext) {
        let slots = ctx.max_slots();
        let a = values(slots, 1);
        let b = values(slots, 2);
        let ca = self.enc.encrypt(a.as_slice(), &mut self.r).unwrap();
        let cb = self.enc.encrypt(b.as_slice(), &mut self.r).unwrap();
        (a, b, ca, cb)
    }
}
