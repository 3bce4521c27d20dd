//! Ring packing of LWE ciphertexts into one RLWE ciphertext of the CKKS ring, at small insecure degrees
//! (`N = 2^10..2^11`, `n = 64..256`): encrypt random messages under an LWE key, pack, decrypt under the
//! CKKS key and compare every packed coefficient with the input's LWE phase; the packing error against
//! [`RingPackingKey::added_variance`]; the errors of every misuse.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use rand::Rng;
use rnsfhe_ckks::{
    CkksContext, CkksParams, ConversionMode, KeyGenerator, RescalingPolicy, SecretDistribution,
    SecretKey,
};
use rnsfhe_core::{Decryptor, GaloisKeys, HIGH_PROBABILITY_SIGMAS};
use rnsfhe_lwe::{
    LweCiphertext, LweDimension, LweError, LweSecretDistribution, LweSecretKey, MIN_SECURITY_BITS,
};
use rnsfhe_math::sampling::{Csprng, DiscreteGaussian};
use rnsfhe_math::Modulus;
use rnsfhe_pegasus::{PackedLwe, PegasusError, RingPackingKey};

fn ckks_params(log_n: u32, secret: SecretDistribution) -> CkksParams {
    CkksParams {
        log_n,
        log_scale: 30,
        q0_bits: 45,
        levels: 2,
        bootstrap_primes: Vec::new(),
        special_primes: 1,
        special_bits: 50,
        // One digit per prime: every digit below the 50-bit special prime.
        dnum: 3,
        secret,
        sigma: 3.2,
        conversion: ConversionMode::Fast,
        rescaling: RescalingPolicy::FixedNominalScale,
        insecure_for_testing: true,
    }
}

struct Setup {
    ckks: Arc<CkksContext>,
    ckks_secret: SecretKey,
    lwe_secret: LweSecretKey,
    key: RingPackingKey,
    q0: Modulus,
    rng: Csprng,
}

fn setup(log_n: u32, n: usize, secret: SecretDistribution, seed: u8) -> Setup {
    let mut rng = Csprng::insecure_from_seed_for_tests([seed; 32]);
    let ckks = CkksContext::new(ckks_params(log_n, secret)).unwrap();
    let ckks_secret = KeyGenerator::new(&ckks, &mut rng)
        .unwrap()
        .secret_key()
        .clone();
    let lwe_secret = LweSecretKey::generate(
        LweDimension::new(n).unwrap(),
        LweSecretDistribution::UniformBinary,
        &mut rng,
    )
    .unwrap();
    let key =
        RingPackingKey::generate_allowing_insecure(&ckks, &ckks_secret, &lwe_secret, &mut rng)
            .unwrap();
    let q0 = Modulus::new(ckks.q_moduli()[0]).unwrap();
    Setup {
        ckks,
        ckks_secret,
        lwe_secret,
        key,
        q0,
        rng,
    }
}

impl Setup {
    /// `count` encryptions of random messages below `2^40` with errors of width 3.2.
    fn encrypt(&mut self, count: usize) -> Vec<LweCiphertext> {
        let noise = DiscreteGaussian::with_sigma(3.2).unwrap();
        (0..count)
            .map(|_| {
                let m = self.rng.gen_range(-(1i64 << 40)..(1i64 << 40));
                self.lwe_secret.encrypt(m, &self.q0, &noise, &mut self.rng)
            })
            .collect()
    }

    /// Decrypts `packed` under the CKKS key and returns, for every input, the packed coefficient minus
    /// the input's LWE phase (centered modulo `q_0`): the packing error `E_i`. Also checks that the
    /// ciphertext is over the CKKS chain's level 1.
    fn packing_errors(&self, cts: &[LweCiphertext], packed: &PackedLwe) -> Vec<i64> {
        assert_eq!(packed.ciphertext().level(), 1);
        assert_eq!(packed.count(), cts.len());
        let decryptor = Decryptor::new(self.ckks.rlwe(), &self.ckks_secret).unwrap();
        let phase = decryptor.phase(packed.ciphertext()).unwrap();
        let coeffs = phase.limb(0).unwrap();
        cts.iter()
            .zip(packed.positions())
            .map(|(ct, pos)| {
                let want = self.lwe_secret.decrypt(ct).unwrap();
                self.q0
                    .center(self.q0.sub(coeffs[pos], self.q0.reduce_i64(want)))
            })
            .collect()
    }

    /// Packs `count` fresh encryptions at `stride` (the default one if `None`) and checks every packed
    /// coefficient against its phase within the high-probability bound of the packing error.
    fn pack_and_check(&mut self, count: usize, stride: Option<usize>) -> PackedLwe {
        let cts = self.encrypt(count);
        let packed = match stride {
            Some(s) => self.key.pack_with_stride(&cts, s).unwrap(),
            None => self.key.pack(&cts).unwrap(),
        };
        let bound = HIGH_PROBABILITY_SIGMAS * self.key.added_variance().sqrt();
        let errors = self.packing_errors(&cts, &packed);
        let worst = errors.iter().map(|e| e.unsigned_abs()).max().unwrap();
        assert!(
            (worst as f64) < bound,
            "count {count}: packing error {worst} above the bound {bound:.0}"
        );
        packed
    }
}

#[test]
fn one_ciphertext() {
    let mut s = setup(11, 64, SecretDistribution::Ternary, 1);
    let packed = s.pack_and_check(1, None);
    // The sparsest layout: one value every w = 64 coefficients.
    assert_eq!(packed.stride(), 64);
    assert_eq!(packed.positions().collect::<Vec<_>>(), vec![0]);
    // One key switch and the trace over the window.
    assert_eq!(s.key.key_switch_count(1, 64).unwrap(), 1 + 6);
}

#[test]
fn counts_that_are_not_powers_of_two() {
    // N = 2^11, n = 100 (window 128): 16 values per key switch.
    let mut s = setup(11, 100, SecretDistribution::Ternary, 2);
    assert_eq!(s.key.window(), 128);
    // Fewer than one batch holds, then several batches, one of them not full.
    let few = s.pack_and_check(11, None);
    assert_eq!(few.stride(), 128);
    let many = s.pack_and_check(300, None);
    // l' = 512: stride N / 512 = 4, 128 / 4 = 32 batches.
    assert_eq!(many.stride(), 4);
    assert_eq!(s.key.key_switch_count(300, 4).unwrap(), 32 + 31 + 2);
}

#[test]
fn as_many_ciphertexts_as_the_lwe_dimension_and_more() {
    // N = 2^11, n = 256: 8 values per key switch.
    let mut s = setup(11, 256, SecretDistribution::HammingWeight(64), 3);
    let l_eq_n = s.pack_and_check(256, None);
    assert_eq!(l_eq_n.stride(), 8);
    let l_above_n = s.pack_and_check(1000, None);
    assert_eq!(l_above_n.stride(), 2);
    assert_eq!(s.key.key_switch_count(1000, 2).unwrap(), 128 + 127 + 1);
}

#[test]
fn every_stride_and_the_full_ring() {
    let mut s = setup(10, 64, SecretDistribution::Ternary, 4);
    // A layout denser than needed: empty batches and merges with an empty half.
    for stride in [1, 2, 16, 64] {
        let packed = s.pack_and_check(10, Some(stride));
        assert_eq!(packed.stride(), stride);
    }
    // 10 batches; merges 10, 10, 8, 4, 2, 1 from level to level; no trace.
    assert_eq!(s.key.key_switch_count(10, 1).unwrap(), 10 + 35);
    // Every coefficient of the ring.
    let full = s.pack_and_check(1024, None);
    assert_eq!(full.stride(), 1);
}

/// The packing error over all `N` coefficients of full packings has the variance of the formula.
#[test]
fn packing_error_matches_its_variance() {
    for (n, secret, seed) in [
        (64, SecretDistribution::Ternary, 5),
        (200, SecretDistribution::HammingWeight(64), 6),
    ] {
        let mut s = setup(11, n, secret, seed);
        let cts = s.encrypt(2048);
        let packed = s.key.pack(&cts).unwrap();
        let errors = s.packing_errors(&cts, &packed);
        let mean = errors.iter().map(|&e| e as f64).sum::<f64>() / errors.len() as f64;
        let variance = errors
            .iter()
            .map(|&e| (e as f64 - mean).powi(2))
            .sum::<f64>()
            / errors.len() as f64;
        let expected = s.key.added_variance();
        let ratio = variance / expected;
        assert!(
            (0.9..1.1).contains(&ratio),
            "n = {n}, {secret:?}: measured variance {variance:.1}, formula {expected:.1} (ratio {ratio:.3})"
        );
        assert!(
            mean.abs() < 4.0 * (expected / errors.len() as f64).sqrt(),
            "mean {mean}"
        );
    }
}

#[test]
fn misuse_is_reported() {
    let mut s = setup(10, 64, SecretDistribution::Ternary, 7);
    let cts = s.encrypt(4);
    // No ciphertext, more than N.
    assert!(matches!(
        s.key.pack(&[]),
        Err(PegasusError::InvalidParams { .. })
    ));
    let too_many: Vec<_> = vec![cts[0].clone(); 1025];
    assert!(matches!(
        s.key.pack(&too_many),
        Err(PegasusError::InvalidParams { .. })
    ));
    // Strides: not a power of two, above the window, too wide for the count.
    for stride in [0, 3, 128] {
        assert!(matches!(
            s.key.pack_with_stride(&cts, stride),
            Err(PegasusError::InvalidParams { .. })
        ));
    }
    let many = s.encrypt(40);
    assert!(matches!(
        s.key.pack_with_stride(&many, 64),
        Err(PegasusError::InvalidParams { .. })
    ));
    // Another dimension, another modulus.
    let other = LweSecretKey::generate(
        LweDimension::new(32).unwrap(),
        SecretDistribution::Ternary,
        &mut s.rng,
    )
    .unwrap();
    let noise = DiscreteGaussian::with_sigma(3.2).unwrap();
    let wrong_dim = other.encrypt(5, &s.q0, &noise, &mut s.rng);
    assert!(matches!(
        s.key.pack(&[cts[0].clone(), wrong_dim]),
        Err(PegasusError::Lwe(LweError::DimensionMismatch { .. }))
    ));
    let wrong_mod = s
        .lwe_secret
        .encrypt(5, &Modulus::new(1 << 20).unwrap(), &noise, &mut s.rng);
    assert!(matches!(
        s.key.pack(&[wrong_mod]),
        Err(PegasusError::Lwe(LweError::ModulusMismatch { .. }))
    ));
    // Keys without the automorphisms: refused when a packing needs them.
    let ctx = s.key.context();
    let partial: GaloisKeys = rnsfhe_core::KeyGenerator::from_secret_key(
        ctx,
        rnsfhe_core::SecretKey::from_coefficients(ctx, s.ckks_secret.coefficients()).unwrap(),
    )
    .unwrap()
    .galois_keys(&[ctx.galois_element(1025).unwrap()], &mut s.rng)
    .unwrap();
    let crippled = RingPackingKey::from_keys(
        &s.ckks,
        s.key.lwe_dimension(),
        s.key.switching_key().clone(),
        partial,
    )
    .unwrap();
    assert!(matches!(
        crippled.pack(&cts),
        Err(PegasusError::Core(
            rnsfhe_core::Error::MissingGaloisKey { .. }
        ))
    ));
    // Keys of another context.
    let foreign = setup(11, 64, SecretDistribution::Ternary, 8);
    assert!(matches!(
        RingPackingKey::from_keys(
            &s.ckks,
            s.key.lwe_dimension(),
            foreign.key.switching_key().clone(),
            s.key.galois_keys().clone(),
        ),
        Err(PegasusError::Core(
            rnsfhe_core::Error::ContextMismatch { .. }
        ))
    ));
    assert!(matches!(
        RingPackingKey::generate_allowing_insecure(
            &s.ckks,
            &foreign.ckks_secret,
            &s.lwe_secret,
            &mut s.rng
        ),
        Err(PegasusError::Core(
            rnsfhe_core::Error::ContextMismatch { .. }
        ))
    ));
    // An LWE dimension above the ring degree.
    let huge = LweSecretKey::generate(
        LweDimension::new(2048).unwrap(),
        SecretDistribution::Ternary,
        &mut s.rng,
    )
    .unwrap();
    assert!(matches!(
        RingPackingKey::generate_allowing_insecure(&s.ckks, &s.ckks_secret, &huge, &mut s.rng),
        Err(PegasusError::InvalidParams { .. })
    ));
    // Without the opt-in, the small ring is refused before any key is made.
    assert!(matches!(
        RingPackingKey::generate(&s.ckks, &s.ckks_secret, &s.lwe_secret, &mut s.rng),
        Err(PegasusError::Lwe(LweError::Insecure { bits, .. })) if bits < MIN_SECURITY_BITS
    ));
}

/// At the PEGASUS ring (`N = 2^16`, the 45-bit `q_0` of the presets), every packing key is above 128
/// bits, for the dense ternary secret and for Table IV's `h = 64`.
#[test]
fn keys_at_the_pegasus_ring_are_secure() {
    let preset_q0 = rnsfhe_lwe::PegasusPreset::Secure128
        .params()
        .unwrap()
        .lut
        .q0;
    for secret in [
        SecretDistribution::Ternary,
        SecretDistribution::HammingWeight(64),
    ] {
        let mut params = ckks_params(16, secret);
        params.levels = 0;
        params.dnum = 1;
        let ckks = CkksContext::new(params).unwrap();
        assert_eq!(ckks.q_moduli()[0], preset_q0);
        let estimate = RingPackingKey::security(&ckks).unwrap();
        assert!(
            estimate.security_bits() >= MIN_SECURITY_BITS,
            "{secret:?}: {}",
            estimate.security_bits()
        );
        let ctx = RingPackingKey::packing_context(&ckks).unwrap();
        // The estimate takes one RLWE sample (N LWE samples); the keys hold 1 + log2(w) = 11 of them,
        // and the attacks given all of them stay far above 128 bits.
        let all_samples = rnsfhe_core::LweParams {
            samples: 11 << 16,
            ..estimate.params
        };
        let bits = rnsfhe_core::estimate_lwe(&all_samples)
            .unwrap()
            .security_bits();
        assert!(bits >= MIN_SECURITY_BITS, "{secret:?}, all samples: {bits}");
        assert_eq!(ctx.chain().values(), vec![preset_q0]);
        let special = ctx.special_basis().values()[0];
        assert!(special > preset_q0 && special < 1 << 50, "{special}");
        let elements =
            RingPackingKey::galois_elements(1 << 16, LweDimension::new(1024).unwrap()).unwrap();
        assert_eq!(elements, (7..=16).map(|k| (1 << k) + 1).collect::<Vec<_>>());
    }
}
