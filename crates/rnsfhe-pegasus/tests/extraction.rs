//! PEGASUS Fig. 6 steps 1-4: CKKS coefficients extracted as LWE ciphertexts of dimension `N` over `q_0`
//! (exactly the RLWE phase), and switched to the LWE dimension `n` by each method of
//! `DimensionSwitch`, the added error's variance within 10 % of the formula over thousands of samples;
//! the errors of wrong inputs; the security check of the whole-ciphertext key against the estimator's
//! figure for `SwK`; one full-size run at `Secure128` without the insecure opt-in.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rnsfhe_ckks::{
    Ciphertext, CkksContext, CkksParams, ConversionMode, Evaluator, RescalingPolicy,
    SecretDistribution,
};
use rnsfhe_core::{Decryptor, Encryptor, SecretKey};
use rnsfhe_lwe::{
    LweDimension, LweError, LweKeySwitchParams, LweSecretDistribution, LweSecretKey, PegasusPreset,
};
use rnsfhe_math::primes::ntt_primes_of_bits;
use rnsfhe_math::sampling::Csprng;
use rnsfhe_math::Modulus;
use rnsfhe_pegasus::{
    extract_coefficients, DimensionSwitch, DimensionSwitchKeys, PegasusError, RingSwitchingKey,
};
use rnsfhe_ring::{Coeff, Poly};

const LOG_DELTA: i32 = 30;

fn rng(seed: u8) -> Csprng {
    Csprng::insecure_from_seed_for_tests([seed; 32])
}

/// A CKKS context of degree `2^log_n` with a 45-bit `q_0` (PEGASUS Table IV's size; the largest such
/// NTT prime, as the presets' `q_0`) and two scaling primes.
fn context(log_n: u32, secret: SecretDistribution) -> Arc<CkksContext> {
    CkksContext::new(CkksParams {
        log_n,
        log_scale: 30,
        q0_bits: 45,
        levels: 2,
        bootstrap_primes: Vec::new(),
        special_primes: 1,
        special_bits: 50,
        dnum: 3,
        secret,
        sigma: 3.2,
        conversion: ConversionMode::Fast,
        rescaling: RescalingPolicy::ExactScale,
        insecure_for_testing: true,
    })
    .unwrap()
}

/// A ciphertext at `level` whose plaintext coefficients are `round(Delta v[i])` (what
/// slots-to-coefficients leaves), and the values `v` (uniform in `[-1, 1)`).
fn encrypt_coefficients(
    ctx: &Arc<CkksContext>,
    sk: &SecretKey,
    level: usize,
    r: &mut Csprng,
) -> (Ciphertext, Vec<f64>) {
    let delta = 2f64.powi(LOG_DELTA);
    let mut values = rand::rngs::StdRng::seed_from_u64(r.gen());
    let v: Vec<f64> = (0..ctx.n()).map(|_| values.gen_range(-1.0..1.0)).collect();
    let m: Vec<i64> = v.iter().map(|x| (x * delta).round() as i64).collect();
    let basis = ctx.rlwe().basis_at(level).unwrap();
    let plain = Poly::<Coeff>::from_i64(basis, &m).unwrap();
    let inner = Encryptor::with_secret_key(ctx.rlwe(), sk)
        .unwrap()
        .encrypt_coeff(&plain, r)
        .unwrap();
    (
        Ciphertext::new(ctx, inner, delta, ctx.max_slots()).unwrap(),
        v,
    )
}

fn norm_sq(coefficients: &[i64]) -> f64 {
    coefficients.iter().map(|c| (c * c) as f64).sum()
}

#[test]
fn extraction_gives_the_rlwe_phase_at_q0() {
    let ctx = context(11, SecretDistribution::HammingWeight(64));
    let mut r = rng(1);
    let sk = SecretKey::generate(ctx.rlwe(), &mut r).unwrap();
    let wide_key = LweSecretKey::from_ring_key(&sk).unwrap();
    let n = ctx.n();
    let q0 = ctx.q_moduli()[0];
    assert_eq!(q0, PegasusPreset::InsecureTest.params().unwrap().lut.q0);
    let modulus = Modulus::new(q0).unwrap();
    let decryptor = Decryptor::new(ctx.rlwe(), &sk).unwrap();
    let positions = [0, 1, 5, 700, n - 1, 5];
    for level in [3, 1] {
        let (ct, v) = encrypt_coefficients(&ctx, &sk, level, &mut r);
        assert_eq!(ct.level(), level);
        let phase = decryptor.decrypt_coeff(ct.inner()).unwrap();
        let lwe = extract_coefficients(&ctx, &ct, &positions).unwrap();
        assert_eq!(lwe.len(), positions.len());
        for (ct_i, &i) in lwe.iter().zip(&positions) {
            assert_eq!((ct_i.dimension().get(), ct_i.modulus().value()), (n, q0));
            // Exactly the RLWE phase modulo q_0, which is Delta v[i] plus the fresh error.
            let got = wide_key.decrypt(ct_i).unwrap();
            assert_eq!(got, modulus.center(phase.data()[i]));
            let expected = v[i] * 2f64.powi(LOG_DELTA);
            assert!((got as f64 - expected).abs() <= 20.0, "{got} vs {expected}");
        }
    }

    // Wrong inputs are errors.
    let (ct, _) = encrypt_coefficients(&ctx, &sk, 2, &mut r);
    assert!(matches!(
        extract_coefficients(&ctx, &ct, &[3, n]),
        Err(PegasusError::PositionOutOfRange { position, degree, .. }) if position == n && degree == n
    ));
    let other = context(12, SecretDistribution::HammingWeight(64));
    assert!(matches!(
        extract_coefficients(&other, &ct, &[0]),
        Err(PegasusError::Ckks(
            rnsfhe_ckks::Error::ContextMismatch { .. }
        ))
    ));
    let three_parts = Evaluator::new(&ctx)
        .multiply_without_relin(&ct, &ct)
        .unwrap();
    assert!(matches!(
        extract_coefficients(&ctx, &three_parts, &[0]),
        Err(PegasusError::InvalidParams { .. })
    ));
}

/// Switches every coefficient of `cts` by `method`, checks dimension, modulus and values, and returns
/// the mean and the variance of the added error (output phase minus the input phase scaled by
/// `q_ks / q_0`) and the number of samples.
fn measure(
    ctx: &Arc<CkksContext>,
    sk: &SecretKey,
    lwe_sk: &LweSecretKey,
    keys: &DimensionSwitchKeys,
    method: DimensionSwitch,
    cts: &[(Ciphertext, Vec<f64>)],
    positions: &[usize],
) -> (f64, f64, usize) {
    let q_ks = keys.output_modulus(method).unwrap();
    let decryptor = Decryptor::new(ctx.rlwe(), sk).unwrap();
    let q0 = ctx.q_moduli()[0];
    let modulus = Modulus::new(q0).unwrap();
    let ratio = q_ks as f64 / q0 as f64;
    let expected_sd = keys
        .switch_variance(
            method,
            norm_sq(sk.coefficients()),
            norm_sq(lwe_sk.coefficients()),
        )
        .unwrap()
        .sqrt();
    let (mut sum, mut sum_sq, mut count) = (0.0, 0.0, 0);
    for (ct, v) in cts {
        // The input phase at q_0, which extraction keeps exactly (checked above).
        let phase = decryptor.decrypt_coeff(ct.inner()).unwrap();
        let small = keys.switch(ct, positions, method).unwrap();
        assert_eq!(small.len(), positions.len());
        for (s, &i) in small.iter().zip(positions) {
            assert_eq!(
                (s.dimension(), s.modulus().value()),
                (lwe_sk.dimension(), q_ks)
            );
            let input = modulus.center(phase.data()[i]) as f64 * ratio;
            let output = lwe_sk.decrypt(s).unwrap() as f64;
            let added = output - input;
            // Every value is within 7 standard deviations of the switch (the input error is tiny).
            let value = v[i] * 2f64.powi(LOG_DELTA) * ratio;
            assert!(
                (output - value).abs() <= 7.0 * expected_sd + 20.0 * ratio,
                "{method}, position {i}: {output} vs {value} (sd {expected_sd})"
            );
            sum += added;
            sum_sq += added * added;
            count += 1;
        }
    }
    let mean = sum / count as f64;
    (mean, sum_sq / count as f64 - mean * mean, count)
}

/// Both methods at small insecure dimensions (`N = 2^11`, `n = 64`, 45-bit `q_0`): with Table IV's
/// switching parameters (`q_ks = q_0`, `B = 2^7`, `d = 7`, `sigma = 2^13`), and with Secure128's kind
/// (a 26-bit `q_ks` that is not an NTT prime for `N`, `B = 2^4`, `d = 7`, `sigma = 3.19`: modulus
/// switches on both sides of the whole-ciphertext key switch). Over thousands of samples the added
/// error's variance is within 10 % of `DimensionSwitchKeys::switch_variance`, and its mean within the
/// bound of the digits' bias: balanced digits in `[-B/2, B/2)` have mean `-1/2`, so with one key the
/// error of a Fig. 9 switch has the fixed mean `-1/2 sum_{m,k} (+-e_{m,k})`, of standard deviation
/// `sigma sqrt(N d) / 2` over keys (for the whole-ciphertext switch that mean changes with the
/// position and is part of the variance, whose formula counts the digits' second moments).
#[test]
fn both_methods_match_the_variance_formula() {
    let ctx = context(11, SecretDistribution::HammingWeight(64));
    let mut r = rng(2);
    let sk = SecretKey::generate(ctx.rlwe(), &mut r).unwrap();
    let n = 64;
    let lwe_sk = LweSecretKey::generate(
        LweDimension::new(n).unwrap(),
        LweSecretDistribution::TernaryWeight(32),
        &mut r,
    )
    .unwrap();
    let q0 = ctx.q_moduli()[0];
    // A 26-bit prime = 1 mod 2n but not 1 mod 2N: the ring modulus must differ from it.
    let q_ks = ntt_primes_of_bits(26, 2 * n as u64, 8, &[])
        .unwrap()
        .into_iter()
        .find(|q| q % (2 * ctx.n() as u64) != 1)
        .unwrap();
    let table4 = PegasusPreset::InsecureTest.params().unwrap().key_switch;
    assert_eq!(table4.modulus, q0);
    let secure_kind = LweKeySwitchParams {
        modulus: q_ks,
        base_log: 4,
        digits: 7,
        sigma: 3.19,
    };
    // Samples of one ciphertext share its digits and the key's errors (their errors are weakly
    // correlated); several ciphertexts, at every level, keep the estimate's spread near that of
    // independent samples.
    let cts: Vec<_> = (0..6)
        .map(|i| encrypt_coefficients(&ctx, &sk, 1 + i % 3, &mut r))
        .collect();
    let all: Vec<usize> = (0..ctx.n()).collect();
    let half: Vec<usize> = (0..ctx.n()).step_by(2).collect();
    for params in [table4, secure_kind] {
        let keys = DimensionSwitchKeys::generate_allowing_insecure(
            &ctx,
            &sk,
            &lwe_sk,
            params,
            &DimensionSwitch::ALL,
            &mut r,
        )
        .unwrap();
        let ring = keys.whole_ciphertext().unwrap();
        assert_eq!(ring.output_modulus(), params.modulus);
        assert_eq!(ring.ring_modulus() % (2 * ctx.n() as u64), 1);
        assert_eq!(ring.ring_modulus() == params.modulus, params.modulus == q0);
        // The key switches of both methods add the same variance (Appendix C.1 with n-bar = N) up to
        // the ring modulus' digits.
        let per = keys.added_variance(DimensionSwitch::PerCiphertext).unwrap();
        let whole = keys
            .added_variance(DimensionSwitch::WholeCiphertext)
            .unwrap();
        assert!((whole / per - 1.0).abs() < 0.05, "{whole} vs {per}");
        for (method, positions) in [
            (DimensionSwitch::WholeCiphertext, &all),
            (DimensionSwitch::PerCiphertext, &half),
        ] {
            let (mean, measured, samples) =
                measure(&ctx, &sk, &lwe_sk, &keys, method, &cts, positions);
            assert!(samples >= 6000);
            assert_eq!(keys.output_modulus(method).unwrap(), params.modulus);
            let bias_sd = params.sigma * ((ctx.n() * params.digits) as f64).sqrt() / 2.0
                * (params.modulus as f64 / ring.ring_modulus() as f64).max(1.0);
            assert!(
                mean.abs() <= 6.0 * (bias_sd + (measured / samples as f64).sqrt()),
                "{method}: mean {mean:.1}, digits' bias sd {bias_sd:.1}"
            );
            let formula = keys
                .switch_variance(
                    method,
                    norm_sq(sk.coefficients()),
                    norm_sq(lwe_sk.coefficients()),
                )
                .unwrap();
            let ratio = measured / formula;
            eprintln!(
                "q_ks = {}, {method}: measured / formula = {ratio:.3} over {samples} samples, \
                 mean {mean:.1} (digits' bias sd {bias_sd:.1})",
                params.modulus
            );
            assert!(
                (0.9..=1.1).contains(&ratio),
                "{method}: measured {measured:.4e}, formula {formula:.4e} (ratio {ratio:.3})"
            );
        }
    }
}

#[test]
fn wrong_inputs_are_errors() {
    let ctx = context(11, SecretDistribution::HammingWeight(64));
    let mut r = rng(3);
    let sk = SecretKey::generate(ctx.rlwe(), &mut r).unwrap();
    let lwe_sk = LweSecretKey::generate(
        LweDimension::new(64).unwrap(),
        SecretDistribution::HammingWeight(32),
        &mut r,
    )
    .unwrap();
    let params = PegasusPreset::InsecureTest.params().unwrap().key_switch;
    let (ct, _) = encrypt_coefficients(&ctx, &sk, 2, &mut r);

    // Insecure parameters need the opt-in, for both methods (n = 64 is far below 128 bits).
    for method in DimensionSwitch::ALL {
        assert!(matches!(
            DimensionSwitchKeys::generate(&ctx, &sk, &lwe_sk, params, &[method], &mut r),
            Err(PegasusError::Lwe(LweError::Insecure { bits, .. })) if bits < 128.0
        ));
    }

    // A missing key.
    let whole_only = DimensionSwitchKeys::generate_allowing_insecure(
        &ctx,
        &sk,
        &lwe_sk,
        params,
        &[DimensionSwitch::WholeCiphertext],
        &mut r,
    )
    .unwrap();
    assert!(whole_only.has(DimensionSwitch::WholeCiphertext));
    assert!(!whole_only.has(DimensionSwitch::PerCiphertext));
    assert!(matches!(
        whole_only.switch(&ct, &[0], DimensionSwitch::PerCiphertext),
        Err(PegasusError::MissingKey { .. })
    ));
    assert!(matches!(
        whole_only.added_variance(DimensionSwitch::PerCiphertext),
        Err(PegasusError::MissingKey { .. })
    ));
    let none =
        DimensionSwitchKeys::generate_allowing_insecure(&ctx, &sk, &lwe_sk, params, &[], &mut r)
            .unwrap();
    assert!(matches!(
        none.switch(&ct, &[0], DimensionSwitch::WholeCiphertext),
        Err(PegasusError::MissingKey { .. })
    ));

    // Positions out of range, three parts.
    let both = DimensionSwitchKeys::generate_allowing_insecure(
        &ctx,
        &sk,
        &lwe_sk,
        params,
        &DimensionSwitch::ALL,
        &mut r,
    )
    .unwrap();
    let three_parts = Evaluator::new(&ctx)
        .multiply_without_relin(&ct, &ct)
        .unwrap();
    for method in DimensionSwitch::ALL {
        assert!(both.switch(&ct, &[], method).unwrap().is_empty());
        assert!(matches!(
            both.switch(&ct, &[1, ctx.n() + 3], method),
            Err(PegasusError::PositionOutOfRange { position, .. }) if position == ctx.n() + 3
        ));
        assert!(matches!(
            both.switch(&three_parts, &[0], method),
            Err(PegasusError::InvalidParams { .. })
        ));
    }

    // A ciphertext of another context than the keys', a secret key of another context.
    let other = context(11, SecretDistribution::Ternary);
    let other_sk = SecretKey::generate(other.rlwe(), &mut r).unwrap();
    let (other_ct, _) = encrypt_coefficients(&other, &other_sk, 2, &mut r);
    for method in DimensionSwitch::ALL {
        assert!(matches!(
            both.switch(&other_ct, &[0], method),
            Err(PegasusError::KeyMismatch { expected, got, .. })
                if expected == ctx.fingerprint() && got == other.fingerprint()
        ));
    }
    assert!(matches!(
        RingSwitchingKey::generate_allowing_insecure(&ctx, &other_sk, &lwe_sk, params, &mut r),
        Err(PegasusError::Ckks(
            rnsfhe_ckks::Error::ContextMismatch { .. }
        ))
    ));

    // The LWE secret must sit on a subring: a power of two at most N.
    for dim in [48, 4096] {
        let odd = LweSecretKey::generate(
            LweDimension::new(dim).unwrap(),
            SecretDistribution::HammingWeight(16),
            &mut r,
        )
        .unwrap();
        assert!(matches!(
            RingSwitchingKey::generate_allowing_insecure(&ctx, &sk, &odd, params, &mut r),
            Err(PegasusError::InvalidParams { .. })
        ));
    }
}

/// The whole-ciphertext key is LWE of dimension `n` at the ring modulus under the LWE secret, the
/// problem of `SwK`: at Table IV's parameters the estimator's figure is `SwK`'s (the same modulus) and
/// the key is refused without the opt-in, before any key material is built; at Secure128's it is
/// within a fraction of a bit of `SwK`'s (the ring modulus is a little smaller than `q_ks`) and at least
/// 128 bits.
#[test]
fn whole_ciphertext_key_has_the_security_of_swk() {
    let ctx = context(16, SecretDistribution::HammingWeight(64));
    let mut r = rng(4);
    let sk = SecretKey::generate(ctx.rlwe(), &mut r).unwrap();
    for preset in [PegasusPreset::PegasusTable4, PegasusPreset::Secure128] {
        let p = preset.params().unwrap();
        assert_eq!(p.lut.q0, ctx.q_moduli()[0]);
        let swk = p.security().unwrap().switching_key.security_bits();
        let lwe_sk = LweSecretKey::generate(
            LweDimension::new(p.lwe_dimension).unwrap(),
            p.lwe_secret,
            &mut r,
        )
        .unwrap();
        let checked = RingSwitchingKey::generate(&ctx, &sk, &lwe_sk, p.key_switch, &mut r);
        if swk < 128.0 {
            assert!(matches!(
                checked,
                Err(PegasusError::Lwe(LweError::Insecure { bits, .. })) if (bits - swk).abs() < 1e-9
            ));
            continue;
        }
        let key = checked.unwrap();
        let bits = key.security().security_bits();
        eprintln!("{preset:?}: SwK {swk:.2} bits, whole-ciphertext key {bits:.2} bits");
        assert!(bits >= 128.0 && bits >= swk && bits - swk < 1.0);
        assert_eq!(key.ring_degree(), 1 << 16);
        assert_eq!(key.gadget_ciphertext().rows().len(), p.key_switch.digits);
    }
}

/// Secure128 at full size (`N = 2^16` with the preset's `q_0`, `n = 1024`, 26-bit `q_ks`), both keys
/// without the insecure opt-in: a few coefficients through each method decrypt under the LWE key to
/// `Delta v[i] q_ks / q_0` within the formula's error.
#[test]
fn secure128_full_size() {
    let ctx = context(16, SecretDistribution::HammingWeight(64));
    let p = PegasusPreset::Secure128.params().unwrap();
    let mut r = rng(5);
    let sk = SecretKey::generate(ctx.rlwe(), &mut r).unwrap();
    let lwe_sk = LweSecretKey::generate(
        LweDimension::new(p.lwe_dimension).unwrap(),
        p.lwe_secret,
        &mut r,
    )
    .unwrap();
    let keys = DimensionSwitchKeys::generate(
        &ctx,
        &sk,
        &lwe_sk,
        p.key_switch,
        &DimensionSwitch::ALL,
        &mut r,
    )
    .unwrap();
    let encrypted: Vec<_> = (1..=3)
        .map(|level| encrypt_coefficients(&ctx, &sk, level, &mut r))
        .collect();
    let positions = [0, 1, 4095, 32768, 65535];
    let whole_positions: Vec<usize> = (0..4096).map(|i| i * 16 + i % 16).collect();
    let (_, whole_var, whole_samples) = measure(
        &ctx,
        &sk,
        &lwe_sk,
        &keys,
        DimensionSwitch::WholeCiphertext,
        &encrypted,
        &whole_positions,
    );
    let formula = keys
        .switch_variance(
            DimensionSwitch::WholeCiphertext,
            norm_sq(sk.coefficients()),
            norm_sq(lwe_sk.coefficients()),
        )
        .unwrap();
    eprintln!(
        "Secure128 whole ciphertext: measured / formula = {:.3} over {whole_samples} samples",
        whole_var / formula
    );
    assert!((0.9..=1.1).contains(&(whole_var / formula)));
    measure(
        &ctx,
        &sk,
        &lwe_sk,
        &keys,
        DimensionSwitch::PerCiphertext,
        &encrypted[..1],
        &positions,
    );
    // The whole-ciphertext switch splits its one-limb work between threads at this size: the same
    // LWE ciphertexts on 1, 2 and 3 threads.
    let on = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            keys.switch(
                &encrypted[1].0,
                &whole_positions,
                DimensionSwitch::WholeCiphertext,
            )
            .unwrap()
        })
    };
    let one = on(1);
    assert!(on(2) == one && on(3) == one);
}
