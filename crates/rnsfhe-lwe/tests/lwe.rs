//! LWE ciphertexts end to end: encryption and decryption, arithmetic, modulus switching and sample
//! extraction from RLWE ciphertexts of `rnsfhe-core`, each against the exact error bound it documents.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use rand::{Rng, SeedableRng};
use rnsfhe_core::{Encryptor, RlweContext, RlweParams, SecretDistribution, SecretKey};
use rnsfhe_lwe::{
    extract_many, LweCiphertext, LweDimension, LweError, LweKeySwitchParams, LweSecretKey,
    LweSwitchingKey, ModulusSwitch,
};
use rnsfhe_math::primes::ntt_primes_of_bits;
use rnsfhe_math::sampling::{Csprng, DiscreteGaussian};
use rnsfhe_math::Modulus;
use rnsfhe_ring::{Coeff, Poly};

fn rng(seed: u8) -> Csprng {
    Csprng::insecure_from_seed_for_tests([seed; 32])
}

/// A 45-bit modulus (PEGASUS Table IV's `q_0` size) and the default error width.
fn setup(n: usize, seed: u8) -> (LweSecretKey, Modulus, DiscreteGaussian, Csprng) {
    let mut r = rng(seed);
    let sk = LweSecretKey::generate(
        LweDimension::new(n).unwrap(),
        SecretDistribution::HammingWeight(64),
        &mut r,
    )
    .unwrap();
    let q = Modulus::new((1 << 45) - 55).unwrap();
    (sk, q, DiscreteGaussian::with_sigma(3.2).unwrap(), r)
}

#[test]
fn encryption_round_trip_and_arithmetic() {
    let (sk, q, noise, mut r) = setup(512, 1);
    let bound = noise.bound();
    let msgs: Vec<i64> = (0..20)
        .map(|_| r.gen_range(-(1i64 << 40)..(1i64 << 40)))
        .collect();
    let cts: Vec<LweCiphertext> = msgs
        .iter()
        .map(|&m| sk.encrypt(m, &q, &noise, &mut r))
        .collect();
    for (ct, &m) in cts.iter().zip(&msgs) {
        assert!((sk.decrypt(ct).unwrap() - m).abs() <= bound);
        assert_eq!(ct.dimension().get(), 512);
    }
    let (x, y) = (&cts[0], &cts[1]);
    let (mx, my) = (msgs[0], msgs[1]);
    assert!((sk.decrypt(&x.add(y).unwrap()).unwrap() - (mx + my)).abs() <= 2 * bound);
    assert!((sk.decrypt(&x.sub(y).unwrap()).unwrap() - (mx - my)).abs() <= 2 * bound);
    assert!((sk.decrypt(&x.neg()).unwrap() + mx).abs() <= bound);
    let mut z = x.clone();
    z.mul_scalar_assign(-7);
    assert!((sk.decrypt(&z).unwrap() + 7 * mx).abs() <= 7 * bound);
    z.add_plain_assign(7 * mx + 5);
    assert!((sk.decrypt(&z).unwrap() - 5).abs() <= 7 * bound);
    let t = LweCiphertext::trivial(&q, x.dimension(), -3);
    assert_eq!(sk.decrypt(&t).unwrap(), -3);
}

#[test]
fn mismatched_operands_are_errors() {
    let (sk, q, noise, mut r) = setup(128, 2);
    let x = sk.encrypt(1, &q, &noise, &mut r);
    let other_q = Modulus::new((1 << 40) - 87).unwrap();
    let y = sk.encrypt(1, &other_q, &noise, &mut r);
    assert!(matches!(x.add(&y), Err(LweError::ModulusMismatch { .. })));
    let (small, ..) = setup(64, 3);
    let w = small.encrypt(1, &q, &noise, &mut r);
    assert!(matches!(
        x.sub(&w),
        Err(LweError::DimensionMismatch {
            left: 128,
            right: 64,
            ..
        })
    ));
    assert!(matches!(
        sk.decrypt(&w),
        Err(LweError::DimensionMismatch { .. })
    ));
    assert!(LweCiphertext::from_parts(q.value(), q.value(), vec![0; 4]).is_err());
    assert!(LweCiphertext::from_parts(q.value(), 0, Vec::new()).is_err());
    assert!(LweSecretKey::from_coefficients(&[0, 1, 2]).is_err());
    assert!(format!("{sk:?}").contains("<redacted>"));
}

/// Switching to `2N` (blind rotation) and to a smaller prime: the phase becomes `(q'/q)(m + e)` up to
/// `(1 + ||s||_1) / 2`.
#[test]
fn modulus_switching_rescales_the_phase() {
    let (sk, q, noise, mut r) = setup(1024, 4);
    let l1: i64 = sk.coefficients().iter().map(|c| c.abs()).sum();
    for new_q in [2048u64, (1 << 30) - 35] {
        for _ in 0..50 {
            let m = r.gen_range(-(1i64 << 43)..(1i64 << 43));
            let ct = sk.encrypt(m, &q, &noise, &mut r);
            let phase = sk.decrypt(&ct).unwrap() as f64;
            let switched = ct.switch_modulus(new_q).unwrap();
            assert_eq!(switched.modulus().value(), new_q);
            let expected = phase * new_q as f64 / q.value() as f64;
            let got = sk.decrypt(&switched).unwrap() as f64;
            // Centered modulo q': compare on the circle.
            let mut diff = (got - expected).rem_euclid(new_q as f64);
            if diff > new_q as f64 / 2.0 {
                diff -= new_q as f64;
            }
            assert!(
                diff.abs() <= (1 + l1) as f64 / 2.0,
                "q' = {new_q}: off by {diff}, allowed {}",
                (1 + l1) as f64 / 2.0
            );
        }
    }
}

/// Every component is `round(x q' / q)` exactly (as a 128-bit division computes it), whichever path the
/// switch takes (a double-precision estimate below `2^50`, the division above), at the rounding boundaries
/// `x q' / q = k + 1/2` and next to them, for moduli up to `2^62`.
#[test]
fn modulus_switching_rounds_exactly() {
    let mut r = rand::rngs::StdRng::seed_from_u64(7);
    let exact = |x: u64, q: u64, q_new: u64| -> u64 {
        let v = ((x as u128 * q_new as u128 + q as u128 / 2) / q as u128) as u64;
        if v == q_new {
            0
        } else {
            v
        }
    };
    for (q, q_new) in [
        ((1u64 << 45) - 55, 67_043_329u64),
        ((1 << 45) - 55, 8192),
        ((1 << 62) - 57, (1 << 49) - 9),
        ((1 << 62) - 57, (1 << 55) - 55),
        (67_043_329, 2048),
        (1 << 20, (1 << 45) - 55),
    ] {
        let mut xs: Vec<u64> = (0..2000).map(|_| r.gen_range(0..q)).collect();
        for _ in 0..500 {
            // Around x = (2k + 1) q / (2 q'), where x q' / q is nearest to a half.
            let k = r.gen_range(0..q_new.min(q)) as u128;
            let x = ((2 * k + 1) * q as u128 / (2 * q_new as u128)) as u64;
            xs.extend(
                [x.saturating_sub(1), x, x + 1]
                    .into_iter()
                    .filter(|&v| v < q),
            );
        }
        xs.push(q - 1);
        let ct = LweCiphertext::from_parts(q, xs[0], xs[1..].to_vec()).unwrap();
        let switched = ct.switch_modulus(q_new).unwrap();
        assert_eq!(switched.b(), exact(xs[0], q, q_new));
        for (&x, &got) in xs[1..].iter().zip(switched.a()) {
            assert_eq!(got, exact(x, q, q_new), "x = {x}, q = {q}, q' = {q_new}");
        }
    }
}

/// Every extracted coefficient of an RLWE encryption (secret key, coefficient-form message) decrypts
/// under the ring key's coefficient vector to the message coefficient plus the fresh error.
#[test]
fn extraction_gives_each_coefficient() {
    let q = ntt_primes_of_bits(45, 2048, 2, &[]).unwrap();
    let p = ntt_primes_of_bits(50, 2048, 1, &q).unwrap();
    let ctx = RlweContext::new(RlweParams {
        log_n: 10,
        q_moduli: q,
        p_moduli: p,
        dnum: 1,
        conversion: rnsfhe_core::ConversionMode::Fast,
        secret: SecretDistribution::HammingWeight(64),
        sigma: 3.2,
    })
    .unwrap();
    let mut r = rng(5);
    let sk = SecretKey::generate(&ctx, &mut r).unwrap();
    let n = ctx.n();
    let m: Vec<i64> = (0..n)
        .map(|_| r.gen_range(-(1i64 << 40)..(1i64 << 40)))
        .collect();
    let pt = Poly::<Coeff>::from_i64(ctx.chain(), &m).unwrap();
    let ct = Encryptor::with_secret_key(&ctx, &sk)
        .unwrap()
        .encrypt_coeff(&pt, &mut r)
        .unwrap();
    let ct = ct.into_coeff();
    let indices = [0, 1, 17, n / 2, n - 2, n - 1];
    let lwe_sk = LweSecretKey::from_ring_key(&sk).unwrap();
    let bound = DiscreteGaussian::with_sigma(3.2).unwrap().bound();
    for (ct, &k) in extract_many(&ct, &indices).unwrap().iter().zip(&indices) {
        assert_eq!(ct.dimension().get(), n);
        assert_eq!(ct.modulus().value(), ctx.chain().moduli()[0].value());
        let got = lwe_sk.decrypt(ct).unwrap();
        assert!(
            (got - m[k]).abs() <= bound,
            "coefficient {k}: {got} vs {}",
            m[k]
        );
    }
    assert!(matches!(
        extract_many(&ct, &[n]),
        Err(LweError::InvalidParams { .. })
    ));
}

/// PEGASUS Fig. 9 at reduced dimensions (`N' = 2048 -> n = 256`, Table IV's `q_0` size, `B = 2^7`,
/// `d = 7`, `sigma_ks = 2^13`): every switched ciphertext decrypts under the target key to the message,
/// and the added error's variance over 4000 switches matches `LweSwitchingKey::added_variance` within
/// 10 % (Appendix C.1's `N' d B^2 sigma^2 / 12` with the top digit's actual size: 6.0 digits' worth).
#[test]
fn key_switching_matches_the_variance_formula() {
    let q = ntt_primes_of_bits(45, 512, 1, &[]).unwrap()[0];
    let modulus = Modulus::new(q).unwrap();
    let mut r = rng(6);
    let from = LweSecretKey::generate(
        LweDimension::new(2048).unwrap(),
        SecretDistribution::HammingWeight(64),
        &mut r,
    )
    .unwrap();
    let to = LweSecretKey::generate(
        LweDimension::new(256).unwrap(),
        SecretDistribution::HammingWeight(64),
        &mut r,
    )
    .unwrap();
    let params = LweKeySwitchParams {
        modulus: q,
        base_log: 7,
        digits: 7,
        sigma: 8192.0,
    };
    let ksk = LweSwitchingKey::generate_allowing_insecure(&from, &to, params, &mut r).unwrap();
    assert_eq!(ksk.blocks().len(), 8);
    // The input's own error is measured and subtracted: only the switch's error is counted.
    let noise = DiscreteGaussian::with_sigma(3.2).unwrap();
    let samples = 4000;
    let mut sum_sq = 0.0;
    for _ in 0..samples {
        let m = r.gen_range(-(1i64 << 40)..(1i64 << 40));
        let ct = from.encrypt(m, &modulus, &noise, &mut r);
        let input_error = from.decrypt(&ct).unwrap() - m;
        let switched = ksk.switch(&ct).unwrap();
        assert_eq!(switched.dimension().get(), 256);
        let added = (to.decrypt(&switched).unwrap() - m - input_error) as f64;
        sum_sq += added * added;
    }
    let measured = sum_sq / samples as f64;
    let expected = ksk.added_variance();
    let ratio = measured / expected;
    eprintln!("key switching error variance: measured / formula = {ratio:.3}");
    assert!(
        (0.9..=1.1).contains(&ratio),
        "measured variance {measured:.3e}, formula {expected:.3e} (ratio {ratio:.3})"
    );
    // Wrong inputs are errors.
    let wrong = to.encrypt(1, &modulus, &noise, &mut r);
    assert!(matches!(
        ksk.switch(&wrong),
        Err(LweError::DimensionMismatch { .. })
    ));
    let other = from.encrypt(1, &Modulus::new((1 << 40) - 87).unwrap(), &noise, &mut r);
    assert!(matches!(
        ksk.switch(&other),
        Err(LweError::ModulusMismatch { .. })
    ));
}

/// `ModulusSwitch` rounds as `switch_modulus` does (both quotient paths: a target below and above
/// 2^50), into the caller's buffer; bad lengths and unreduced residues are refused.
#[test]
fn modulus_switch_of_residues_matches_the_ciphertext_switch() {
    let mut r = rand::rngs::StdRng::seed_from_u64(5);
    let q = ntt_primes_of_bits(45, 2048, 1, &[]).unwrap()[0];
    for to in [65929217u64, 2048, (1 << 55) + 3, q] {
        let a: Vec<u64> = (0..64).map(|_| r.gen_range(0..q)).collect();
        let b = r.gen_range(0..q);
        let ct = LweCiphertext::from_parts(q, b, a.clone()).unwrap();
        let want = ct.switch_modulus(to).unwrap();
        let switch = ModulusSwitch::new(q, to).unwrap();
        assert_eq!((switch.from(), switch.to()), (q, to));
        let mut got = vec![0u64; a.len()];
        switch.switch_into(&a, &mut got).unwrap();
        assert_eq!(got, want.a(), "to {to}");
        assert_eq!(switch.round(b), want.b(), "to {to}");
        assert!(switch.switch_into(&a, &mut got[1..]).is_err());
        assert!(switch.switch_into(&[q], &mut got[..1]).is_err());
    }
    assert!(ModulusSwitch::new(q, 1).is_err());
}
