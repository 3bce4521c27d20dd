//! PEGASUS Fig. 5 on encrypted data: the linear transform of a batch of LWE ciphertexts on the repacking
//! key holds each partial decryption modulo 1, with the exact integer part the integers predict.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use rand::{Rng, SeedableRng};
use rnsfhe_ckks::{CkksDecryptor, Csprng, Evaluator, KeyGenerator};
use rnsfhe_lwe::{LweCiphertext, LweDimension, LweSecretKey};
use rnsfhe_math::sampling::DiscreteGaussian;
use rnsfhe_math::Modulus;
use rnsfhe_pegasus::repacking::{linear_transform, repacking_rotation_steps};
use rnsfhe_pegasus::{PipelineParams, PipelinePreset, RepackingKey};

/// `(b + <a, s>) / q` as a centered residue plus the integer the centered lifts of `a` and `b` add.
fn exact_phase(ct: &LweCiphertext, s: &[i64]) -> f64 {
    let q = ct.modulus().value() as i128;
    let lift = |x: u64| {
        let x = x as i128;
        if x >= q - q / 2 {
            x - q
        } else {
            x
        }
    };
    let mut acc = lift(ct.b());
    for (&a, &sk) in ct.a().iter().zip(s) {
        acc += lift(a) * sk as i128;
    }
    acc as f64 / q as f64
}

/// The test set's parameters, a CKKS key, an LWE key and the repacking key of the LWE key.
struct Keys {
    params: PipelineParams,
    rng: Csprng,
    keygen: KeyGenerator,
    lwe_key: LweSecretKey,
    rk: RepackingKey,
}

fn keys(seed: u8) -> Keys {
    let params = PipelinePreset::InsecureTest.params().unwrap();
    let ctx = &params.ckks;
    let mut rng = Csprng::insecure_from_seed_for_tests([seed; 32]);
    let keygen = KeyGenerator::new(ctx, &mut rng).unwrap();
    let lwe_key = LweSecretKey::generate(
        LweDimension::new(params.lwe.lwe_dimension).unwrap(),
        params.lwe.lwe_secret,
        &mut rng,
    )
    .unwrap();
    let scale = ctx.level_scale(ctx.max_level()).unwrap();
    let rk = RepackingKey::generate(ctx, keygen.secret_key(), &lwe_key, scale, &mut rng).unwrap();
    Keys {
        params,
        rng,
        keygen,
        lwe_key,
        rk,
    }
}

#[test]
fn the_transform_holds_every_partial_decryption() {
    let Keys {
        params,
        mut rng,
        keygen,
        lwe_key,
        rk,
    } = keys(7);
    let ctx = &params.ckks;
    let q0 = params.q0();
    let n = params.lwe.lwe_dimension;
    let max_rows = 4 * n;
    let steps = repacking_rotation_steps(n, max_rows).unwrap();
    let gk = keygen.galois_keys(&steps, false, &mut rng).unwrap();
    let eval = Evaluator::new(ctx).with_galois_keys(gk).unwrap();
    let dec = CkksDecryptor::new(ctx, keygen.secret_key()).unwrap();
    let mut plain = rand::rngs::StdRng::seed_from_u64(3);
    let delta = q0 as f64 / 512.0;
    let q = Modulus::new(q0).unwrap();
    let noise = DiscreteGaussian::with_sigma(3.2).unwrap();
    // Short (l < n), square, tall, and a batch that is not a power of two.
    for l in [n / 8, n, 4 * n, 3 * n / 2 + 1] {
        let msgs: Vec<f64> = (0..l).map(|_| plain.gen_range(-1.0..1.0)).collect();
        let cts: Vec<LweCiphertext> = msgs
            .iter()
            .map(|&m| lwe_key.encrypt((m * delta).round() as i64, &q, &noise, &mut rng))
            .collect();
        let out = linear_transform(&eval, &rk, &cts, None).unwrap();
        assert_eq!(out.slots(), l.next_power_of_two());
        assert_eq!(out.level(), ctx.max_level() - 1);
        let got = dec.decrypt_real(&out).unwrap();
        let mut worst = 0f64;
        for (i, ct) in cts.iter().enumerate() {
            let want = exact_phase(ct, lwe_key.coefficients());
            worst = worst.max((got[i] - want).abs());
            // The message survives modulo 1 (up to the LWE noise).
            let frac = want - want.round();
            assert!((frac - msgs[i] * delta / q0 as f64).abs() < 64.0 / q0 as f64);
        }
        assert!(worst < 2f64.powi(-25), "l = {l}: error {worst:e}");
        for v in &got[l..] {
            assert!(v.abs() < 2f64.powi(-25));
        }
    }
}

#[test]
fn batches_the_key_cannot_take_are_refused() {
    let Keys { params, rk, .. } = keys(8);
    let ctx = &params.ckks;
    let n = params.lwe.lwe_dimension;
    let eval = Evaluator::new(ctx);
    let q0 = params.q0();
    // Another dimension than the key's.
    let other = LweCiphertext::from_parts(q0, 1, vec![2; 2 * n]).unwrap();
    let err = linear_transform(&eval, &rk, &[other], None).unwrap_err();
    assert!(err.to_string().contains("dimension"), "{err}");
    // More rows than slots.
    let too_many = vec![LweCiphertext::from_parts(q0, 1, vec![2; n]).unwrap(); ctx.max_slots() + 1];
    let err = linear_transform(&eval, &rk, &too_many, None).unwrap_err();
    assert!(err.to_string().contains("slots"), "{err}");
    // No rotation keys.
    let batch = vec![LweCiphertext::from_parts(q0, 1, vec![2; n]).unwrap(); n];
    let err = linear_transform(&eval, &rk, &batch, None).unwrap_err();
    assert!(err.to_string().to_lowercase().contains("key"), "{err}");
}
