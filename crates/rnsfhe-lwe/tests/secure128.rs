//! PEGASUS Fig. 6 steps 4-6 with our 128-bit set (`PegasusPreset::Secure128`) at full size and without
//! the insecure opt-in: an LWE ciphertext of the CKKS dimension `N = 2^16` (as extraction makes it) is
//! switched down to the 26-bit `q_ks`, key-switched to `n_lwe = 1024` under the binary LWE key, read by a
//! table (the binary algorithm, the set's default), switched down to `q_ks` again and key-switched back to
//! the LWE key; every value within the errors the formulas predict.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use rnsfhe_core::SecretKey;
use rnsfhe_lwe::{
    BlindRotation, BlindRotationKey, LookupTable, LutEvaluator, LweDimension,
    LweSecretDistribution, LweSecretKey, LweSwitchingKey, PegasusPreset,
};
use rnsfhe_math::sampling::{Csprng, DiscreteGaussian};
use rnsfhe_math::Modulus;

#[test]
fn secure128_runs_steps_4_to_6_without_the_opt_in() {
    let p = PegasusPreset::Secure128.params().unwrap();
    assert_eq!(p.blind_rotation, BlindRotation::Binary);
    assert!(p.security().unwrap().bits() >= 128.0);
    let mut r = Csprng::insecure_from_seed_for_tests([128; 32]);
    let ctx = p.lut.context().unwrap();
    let ring_sk = SecretKey::generate(&ctx, &mut r).unwrap();
    let ckks_sk = LweSecretKey::generate(
        LweDimension::new(1 << p.ckks_log_n).unwrap(),
        LweSecretDistribution::UniformTernary,
        &mut r,
    )
    .unwrap();
    let lwe_sk = LweSecretKey::generate(
        LweDimension::new(p.lwe_dimension).unwrap(),
        p.lwe_secret,
        &mut r,
    )
    .unwrap();
    let ring_as_lwe = LweSecretKey::from_ring_key(&ring_sk).unwrap();
    // No `*_allowing_insecure`: every key passes the 128-bit check.
    let down = LweSwitchingKey::generate(&ckks_sk, &lwe_sk, p.key_switch, &mut r).unwrap();
    let back = LweSwitchingKey::generate(&ring_as_lwe, &lwe_sk, p.key_switch, &mut r).unwrap();
    let eval = LutEvaluator::new(
        BlindRotationKey::generate_with(p.blind_rotation, &ctx, &ring_sk, &lwe_sk, &mut r).unwrap(),
    );

    let (q0, q_ks) = (p.lut.q0, p.key_switch.modulus);
    let delta = q0 as f64 / 32.0; // inputs in [-8, 8): |Delta m| <= q0 / 4
    let delta_ks = delta * q_ks as f64 / q0 as f64;
    let table =
        LookupTable::from_fn_for_input_modulus(&ctx, q_ks, delta_ks, delta, f64::tanh).unwrap();
    let noise = DiscreteGaussian::with_sigma(3.19).unwrap();
    let modulus = Modulus::new(q0).unwrap();
    // The input error at q_ks: the switch's rounding (||s_N||^2 ~ 2N/3) and the key switch.
    let n_big = (1u64 << p.ckks_log_n) as f64;
    let input_var = (1.0 + 2.0 * n_big / 3.0) / 12.0 + down.added_variance();
    let key_norm_sq = lwe_sk.coefficients().iter().map(|c| (c * c) as f64).sum();
    let bound = eval.error_bound(&table, 1.0, input_var.sqrt(), key_norm_sq);
    let out_var = (1.0
        + ring_as_lwe
            .coefficients()
            .iter()
            .map(|c| (c * c) as f64)
            .sum::<f64>())
        / 12.0
        + back.added_variance();
    let out_bound = 6.0 * out_var.sqrt() / (delta * q_ks as f64 / q0 as f64);
    for m in [-7.75, -3.0, -0.5, 0.0, 0.75, 2.5, 7.5] {
        let ct = ckks_sk.encrypt((m * delta).round() as i64, &modulus, &noise, &mut r);
        let small = down.switch(&ct.switch_modulus(q_ks).unwrap()).unwrap();
        assert_eq!(
            (small.dimension().get(), small.modulus().value()),
            (1024, q_ks)
        );
        let out = eval.evaluate(&small, &table).unwrap();
        assert_eq!((out.dimension().get(), out.modulus().value()), (4096, q0));
        let got = ring_as_lwe.decrypt(&out).unwrap() as f64 / delta;
        assert!(
            (got - m.tanh()).abs() <= bound,
            "tanh({m}): {got}, bound {bound}"
        );
        let again = back.switch(&out.switch_modulus(q_ks).unwrap()).unwrap();
        let got = lwe_sk.decrypt(&again).unwrap() as f64 / delta_ks;
        assert!(
            (got - m.tanh()).abs() <= bound + out_bound,
            "tanh({m}) after the switch back: {got}, bound {}",
            bound + out_bound
        );
    }
}
