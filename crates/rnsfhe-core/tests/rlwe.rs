//! End-to-end tests of the RLWE layer: encryption noise, key switching in every conversion mode and for
//! several `dnum`, relinearization, Galois automorphisms (plain and hoisted) and error cases.
//!
//! Errors are read exactly: a decrypted error polynomial is taken to coefficient form and every limb is
//! centered; all limbs must agree (which proves the integer is that small value modulo `Q_l`), and the
//! largest magnitude is compared with the documented bound of [`RlweContext::key_switch_noise`] /
//! [`RlweContext::fresh_noise_public`] and [`RlweContext::fresh_noise_public_over_q`] (6 standard deviations, RNS-CKKS Appendix A convention).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use rand::Rng;
use rnsfhe_core::{
    ConversionMode, Decryptor, Encryptor, Error, GaloisGroup, KeyGenerator, RlweCiphertext,
    RlweContext, RlweParams, SecretDistribution, SecretKey,
};
use rnsfhe_math::primes::{ntt_primes_of_bits, qu_xu_max_eta, qu_xu_primes};
use rnsfhe_math::sampling::{fill_uniform_mod, Csprng};
use rnsfhe_ring::{Coeff, Ntt, Poly, RnsBasis};

/// Per conversion mode: the mode, `(u_0, u_1)`, the centered error and its bound.
type ModeResult = (ConversionMode, Poly<Ntt>, Poly<Ntt>, Vec<i64>, f64);

const MODES: [ConversionMode; 3] = [
    ConversionMode::Fast,
    ConversionMode::ExactFloat,
    ConversionMode::ExactInteger,
];

fn rng(seed: u8) -> Csprng {
    Csprng::insecure_from_seed_for_tests([seed; 32])
}

/// `count` NTT primes of `bits` bits as close to `2^bits` as Qu-Xu Algorithms 2-3 allow (so that every
/// conversion mode, including `ExactInteger`, is available), avoiding `exclude`.
fn near_pow2_primes(bits: u32, n: usize, count: usize, exclude: &[u64]) -> Vec<u64> {
    let two_n = 2 * n as u64;
    let eta = qu_xu_max_eta(bits, two_n, count + exclude.len()).unwrap();
    qu_xu_primes(bits, eta, two_n, count, exclude).unwrap()
}

fn params(
    log_n: u32,
    q: Vec<u64>,
    p: Vec<u64>,
    dnum: usize,
    conversion: ConversionMode,
) -> RlweParams {
    RlweParams {
        log_n,
        q_moduli: q,
        p_moduli: p,
        dnum,
        conversion,
        secret: SecretDistribution::Ternary,
        sigma: 3.2,
    }
}

/// The centered coefficients of `x`, checking that every limb holds the same small integer.
fn small_coeffs(x: &Poly<Coeff>) -> Vec<i64> {
    let n = x.degree();
    let moduli = x.basis().moduli().to_vec();
    let first: Vec<i64> = x
        .limb(0)
        .unwrap()
        .iter()
        .map(|&c| moduli[0].center(c))
        .collect();
    for (i, m) in moduli.iter().enumerate().skip(1) {
        let limb = x.limb(i).unwrap();
        for j in 0..n {
            assert_eq!(
                m.center(limb[j]),
                first[j],
                "limb {i} coefficient {j}: the value is not a small integer"
            );
        }
    }
    first
}

/// Exact centered value of each coefficient from the first two limbs (valid when `|x| < q_0 q_1 / 2`).
fn crt2_centered(x: &Poly<Coeff>) -> Vec<i128> {
    let m = x.basis().moduli();
    let (q0, q1) = (m[0], m[1]);
    let inv = q1.inv(q1.reduce(q0.value())).unwrap();
    let big = q0.value() as i128 * q1.value() as i128;
    x.limb(0)
        .unwrap()
        .iter()
        .zip(x.limb(1).unwrap())
        .map(|(&a0, &a1)| {
            let t = q1.mul(q1.sub(a1, q1.reduce(a0)), inv);
            let v = a0 as i128 + q0.value() as i128 * t as i128;
            if v > big / 2 {
                v - big
            } else {
                v
            }
        })
        .collect()
}

fn max_abs(v: &[i64]) -> i64 {
    v.iter().map(|x| x.abs()).max().unwrap_or(0)
}

fn rms(v: &[i64]) -> f64 {
    (v.iter().map(|&x| (x as f64) * (x as f64)).sum::<f64>() / v.len() as f64).sqrt()
}

fn random_small(rng: &mut Csprng, n: usize, b: i64) -> Vec<i64> {
    (0..n).map(|_| rng.gen_range(-b..=b)).collect()
}

fn uniform_ntt(basis: &Arc<RnsBasis>, rng: &mut Csprng) -> Poly<Ntt> {
    let n = basis.degree();
    let mut data = vec![0u64; basis.len() * n];
    for (limb, m) in data.chunks_exact_mut(n).zip(basis.moduli()) {
        fill_uniform_mod(rng, m, limb);
    }
    Poly::from_data(basis, data).unwrap()
}

fn secret_ntt(sk: &SecretKey, basis: &Arc<RnsBasis>) -> Poly<Ntt> {
    Poly::from_i64(basis, sk.coefficients()).unwrap().into_ntt()
}

fn negacyclic(a: &[i64], b: &[i64]) -> Vec<i128> {
    let n = a.len();
    let mut out = vec![0i128; n];
    for (i, &x) in a.iter().enumerate() {
        if x == 0 {
            continue;
        }
        for (j, &y) in b.iter().enumerate() {
            let p = x as i128 * y as i128;
            if i + j < n {
                out[i + j] += p;
            } else {
                out[i + j - n] -= p;
            }
        }
    }
    out
}

/// A rotation group of degree `n` (CKKS's generator; the core works with any).
fn group(n: usize) -> GaloisGroup {
    GaloisGroup::new(n, 5).unwrap()
}

fn automorphism_i64(a: &[i64], k: usize) -> Vec<i64> {
    let n = a.len();
    let mut out = vec![0i64; n];
    for (i, &c) in a.iter().enumerate() {
        let e = i * k % (2 * n);
        if e < n {
            out[e] = c;
        } else {
            out[e - n] = -c;
        }
    }
    out
}

#[test]
fn fresh_encryption_noise_is_within_bounds() {
    let n = 1 << 11;
    let q = ntt_primes_of_bits(50, 2 * n as u64, 3, &[]).unwrap();
    let p = ntt_primes_of_bits(60, 2 * n as u64, 1, &[]).unwrap();
    for secret in [
        SecretDistribution::Ternary,
        SecretDistribution::HammingWeight(64),
    ] {
        let mut prm = params(11, q.clone(), p.clone(), 1, ConversionMode::Fast);
        prm.secret = secret;
        let ctx = RlweContext::new(prm).unwrap();
        let mut r = rng(1);
        let kg = KeyGenerator::new(&ctx, &mut r).unwrap();
        let h = kg.secret_key().hamming_weight();
        if let SecretDistribution::HammingWeight(w) = secret {
            assert_eq!(h, w);
        }
        let pk = kg.public_key(&mut r).unwrap();
        let pk_over_q = kg.public_key_over_q(&mut r).unwrap();
        assert!(pk.is_extended() && !pk_over_q.is_extended());
        let dec = Decryptor::new(&ctx, kg.secret_key()).unwrap();
        let m = random_small(&mut r, n, 1000);
        for level in [3, 1] {
            let basis = ctx.basis_at(level).unwrap();
            let pt = Poly::from_i64(basis, &m).unwrap().into_ntt();
            for (name, enc, est) in [
                (
                    "public",
                    Encryptor::with_public_key(&ctx, &pk).unwrap(),
                    ctx.fresh_noise_public(h),
                ),
                (
                    "public over Q",
                    Encryptor::with_public_key(&ctx, &pk_over_q).unwrap(),
                    ctx.fresh_noise_public_over_q(h),
                ),
                (
                    "secret",
                    Encryptor::with_secret_key(&ctx, kg.secret_key()).unwrap(),
                    ctx.fresh_noise_secret(),
                ),
            ] {
                let ct = enc.encrypt(&pt, &mut r).unwrap();
                assert_eq!((ct.level(), ct.part_count()), (level, 2));
                let phase = small_coeffs(&dec.decrypt_coeff(&ct).unwrap());
                let e: Vec<i64> = phase.iter().zip(&m).map(|(a, b)| a - b).collect();
                eprintln!(
                    "fresh {name} ({secret:?}, h = {h}, level {level}): max |e| = {}, rms = {:.1}; estimate rms {:.1}, bound {:.1}",
                    max_abs(&e),
                    rms(&e),
                    est.std_dev,
                    est.bound
                );
                assert!((max_abs(&e) as f64) <= est.bound);
                // The estimate is not loose either: the measured rms is within 25% of it.
                assert!((rms(&e) / est.std_dev - 1.0).abs() < 0.25);
            }
        }
    }
}

/// The coefficient form: encrypting into `Coeff` draws the same samples in the same order as encrypting
/// into `Ntt`, so from the same randomness the two ciphertexts are each other's transforms (public key,
/// secret key, seeded, zero); a `Coeff` ciphertext decrypts to `m + e` within the fresh-noise bound, and
/// decryption commutes with the conversions, for 2 parts and for the 3 parts of a tensor product
/// (Horner's rule in NTT form behind a coefficient-form phase).
#[test]
fn coefficient_form_round_trip_and_conversions() {
    let n = 1 << 10;
    let q = ntt_primes_of_bits(50, 2 * n as u64, 3, &[]).unwrap();
    let p = ntt_primes_of_bits(60, 2 * n as u64, 1, &[]).unwrap();
    let ctx = RlweContext::new(params(10, q, p, 1, ConversionMode::Fast)).unwrap();
    let mut r = rng(11);
    let kg = KeyGenerator::new(&ctx, &mut r).unwrap();
    let h = kg.secret_key().hamming_weight();
    let pk = kg.public_key(&mut r).unwrap();
    let dec = Decryptor::new(&ctx, kg.secret_key()).unwrap();
    let public = Encryptor::with_public_key(&ctx, &pk).unwrap();
    let public_over_q =
        Encryptor::with_public_key(&ctx, &kg.public_key_over_q(&mut r).unwrap()).unwrap();
    let secret = Encryptor::with_secret_key(&ctx, kg.secret_key()).unwrap();
    assert!(!public.has_secret_key() && secret.has_secret_key());
    let m = random_small(&mut r, n, 1000);
    for level in [3, 2] {
        let basis = ctx.basis_at(level).unwrap();
        let mc = Poly::from_i64(basis, &m).unwrap();
        for (name, enc, bound) in [
            ("public", &public, ctx.fresh_noise_public(h).bound),
            (
                "public over Q",
                &public_over_q,
                ctx.fresh_noise_public_over_q(h).bound,
            ),
            ("secret", &secret, ctx.fresh_noise_secret().bound),
        ] {
            let ct_c: RlweCiphertext<Coeff> = enc.encrypt_coeff_in(&mc, &mut rng(7)).unwrap();
            let ct_n: RlweCiphertext = enc.encrypt_coeff_in(&mc, &mut rng(7)).unwrap();
            assert_eq!((ct_c.level(), ct_c.part_count()), (level, 2));
            assert_eq!(ct_c, ct_n.clone().into_coeff(), "{name}, level {level}");
            assert_eq!(ct_c.clone().into_ntt(), ct_n, "{name}, level {level}");
            let phase = dec.phase(&ct_c).unwrap();
            assert_eq!(phase, dec.decrypt_coeff(&ct_n).unwrap());
            let e: Vec<i64> = small_coeffs(&phase)
                .iter()
                .zip(&m)
                .map(|(a, b)| a - b)
                .collect();
            assert!((max_abs(&e) as f64) <= bound, "{name}, level {level}");
            let mut x = dec.secret_part(&ct_c).unwrap();
            x.add_assign(&ct_c.parts[0]).unwrap();
            assert_eq!(x, phase);

            let zero_c: RlweCiphertext<Coeff> = enc.encrypt_zero_in(level, &mut rng(8)).unwrap();
            let zero_n = enc.encrypt_zero(level, &mut rng(8)).unwrap();
            assert_eq!(zero_c, zero_n.into_coeff());
        }
        let seeded_c = secret
            .encrypt_coeff_seeded_in::<Coeff>(&mc, &mut rng(9))
            .unwrap();
        let seeded_n = secret.encrypt_coeff_seeded(&mc, &mut rng(9)).unwrap();
        assert_eq!(seeded_c.seed(), seeded_n.seed());
        assert_eq!(seeded_c.level(), level);
        assert_eq!(seeded_c.c0(), &seeded_n.c0().clone().into_coeff());
        let full_c = seeded_c.expand().unwrap();
        assert_eq!(full_c, seeded_n.expand().unwrap().into_coeff());
        assert_eq!(small_coeffs(&dec.phase(&full_c).unwrap()).len(), n);
        assert!(matches!(
            public.encrypt_coeff_seeded_in::<Coeff>(&mc, &mut r),
            Err(Error::InvalidParams { .. })
        ));
    }

    // Three parts (Horner), both forms; and one part, whose phase is c_0 itself.
    let basis = ctx.basis_at(3).unwrap();
    let mc = Poly::from_i64(basis, &m).unwrap();
    let a = public.encrypt_coeff(&mc, &mut r).unwrap();
    let b = secret.encrypt_coeff(&mc, &mut r).unwrap();
    let t = a.tensor(&b).unwrap();
    let t_c = t.clone().into_coeff();
    assert_eq!(t_c.part_count(), 3);
    assert_eq!(dec.phase(&t_c).unwrap(), dec.decrypt_coeff(&t).unwrap());
    assert_eq!(t_c.into_ntt(), t);
    let one = RlweCiphertext::new(vec![mc.clone()]).unwrap();
    assert_eq!(dec.phase(&one).unwrap(), mc);
}

/// Key switching of a uniform `d` from a fresh secret `s'` to `s`, for every conversion mode and
/// `dnum in {1, 2, L}`, at the top level and one level below. `P` is chosen so that `P >= Q_j`
/// (`k = alpha` special primes of 60 bits for digits of `alpha` 50-bit primes), where the ModDown
/// rounding `r_0 + r_1 s` dominates; one more configuration has `P ~ Q_j` (`dnum = L`, one 50-bit special
/// prime), where the digit term `(1/P) sum_j d~_j e_j` dominates.
#[test]
fn key_switching_noise_all_modes_and_dnums() {
    let log_n = 11;
    let n = 1usize << log_n;
    let big_l = 3;
    let q = near_pow2_primes(50, n, big_l, &[]);
    for (dnum, p_bits) in [(1, 60), (2, 60), (big_l, 60), (big_l, 50)] {
        let alpha = big_l.div_ceil(dnum);
        let p = near_pow2_primes(p_bits, n, alpha, &q);
        for level in [big_l, big_l - 1] {
            let mut results: Vec<ModeResult> = vec![];
            for mode in MODES {
                let ctx =
                    RlweContext::new(params(log_n, q.clone(), p.clone(), dnum, mode)).unwrap();
                let mut r = rng(7);
                let kg = KeyGenerator::new(&ctx, &mut r).unwrap();
                let from = SecretKey::generate(&ctx, &mut r).unwrap();
                let ksk = kg.key_switch_key(&from, &mut r).unwrap();
                assert_eq!(ksk.rows().len(), ctx.gadget().group_count());
                let basis = ctx.basis_at(level).unwrap();
                let d = uniform_ntt(basis, &mut r);
                let (u0, u1) = ctx.key_switch(&d, &ksk).unwrap();
                let s = secret_ntt(kg.secret_key(), basis);
                let s_from = secret_ntt(&from, basis);
                let mut phase = u0.clone();
                phase.mul_add_assign(&u1, &s).unwrap();
                let err = phase.sub(&d.mul(&s_from).unwrap()).unwrap().into_coeff();
                let e = small_coeffs(&err);
                let est = ctx
                    .key_switch_noise(level, kg.secret_key().hamming_weight())
                    .unwrap();
                eprintln!(
                    "key switch N = {n}, L = {big_l}, dnum = {dnum}, k = {alpha} x {p_bits} bits, level {level}, {mode:?}: max |e| = {}, rms = {:.2}; estimate rms {:.2}, bound {:.2}",
                    max_abs(&e),
                    rms(&e),
                    est.std_dev,
                    est.bound
                );
                assert!(
                    (max_abs(&e) as f64) <= est.bound,
                    "{mode:?} dnum {dnum} level {level}"
                );
                if mode != ConversionMode::Fast {
                    // Exact modes: centered, zero-mean terms, so the empirical rms of one key matches the
                    // ensemble estimate closely. (Fast mode's non-centered lifts add a term correlated
                    // across coefficients whose per-key rms fluctuates; see `noise::key_switch_noise`.)
                    assert!(
                        (rms(&e) / est.std_dev - 1.0).abs() < 0.2,
                        "rms {} vs estimate {}",
                        rms(&e),
                        est.std_dev
                    );
                }
                results.push((mode, u0, u1, e, est.bound));
            }
            // The two exact modes compute the same rounding (HPS may differ only within 2^-47 of a tie).
            assert_eq!(results[1].1, results[2].1, "ExactFloat vs ExactInteger u0");
            assert_eq!(results[1].2, results[2].2, "ExactFloat vs ExactInteger u1");
            // Fast and exact agree up to the two noise bounds (the same keys: the fingerprint and key
            // generation do not depend on the mode).
            let (_, _, _, e_fast, b_fast) = &results[0];
            let (_, _, _, e_exact, b_exact) = &results[1];
            let diff = e_fast
                .iter()
                .zip(e_exact)
                .map(|(a, b)| (a - b).abs())
                .max()
                .unwrap();
            assert!(diff as f64 <= b_fast + b_exact);
        }
    }
}

#[test]
fn relinearization_of_a_tensor_product() {
    let log_n = 11;
    let n = 1usize << log_n;
    let q = near_pow2_primes(50, n, 3, &[]);
    for (dnum, mode) in [
        (1, ConversionMode::Fast),
        (2, ConversionMode::ExactFloat),
        (3, ConversionMode::ExactInteger),
    ] {
        let alpha = 3usize.div_ceil(dnum);
        let p = near_pow2_primes(60, n, alpha, &[]);
        let ctx = RlweContext::new(params(log_n, q.clone(), p, dnum, mode)).unwrap();
        let mut r = rng(3);
        let kg = KeyGenerator::new(&ctx, &mut r).unwrap();
        let pk = kg.public_key(&mut r).unwrap();
        let rk = kg.relin_key(&mut r).unwrap();
        let enc = Encryptor::with_public_key(&ctx, &pk).unwrap();
        let dec = Decryptor::new(&ctx, kg.secret_key()).unwrap();
        let delta = 1i64 << 20;
        let m1 = random_small(&mut r, n, 2);
        let m2 = random_small(&mut r, n, 2);
        let basis = ctx.basis_at(3).unwrap();
        let scaled = |m: &[i64]| {
            let v: Vec<i64> = m.iter().map(|&x| x * delta).collect();
            Poly::from_i64(basis, &v).unwrap().into_ntt()
        };
        let ct1 = enc.encrypt(&scaled(&m1), &mut r).unwrap();
        let ct2 = enc.encrypt(&scaled(&m2), &mut r).unwrap();
        let t = ct1.tensor(&ct2).unwrap();
        assert_eq!(t.part_count(), 3);
        let relin = ctx.relinearize(&t, &rk).unwrap();
        assert_eq!(relin.part_count(), 2);
        // The relinearized phase minus the 3-part phase is exactly e_ks.
        let e = small_coeffs(
            &dec.decrypt(&relin)
                .unwrap()
                .sub(&dec.decrypt(&t).unwrap())
                .unwrap()
                .into_coeff(),
        );
        let est = ctx
            .key_switch_noise(3, kg.secret_key().hamming_weight())
            .unwrap();
        eprintln!(
            "relinearization dnum = {dnum}, {mode:?}: max |e_ks| = {}, rms = {:.2}; bound {:.2}",
            max_abs(&e),
            rms(&e),
            est.bound
        );
        assert!((max_abs(&e) as f64) <= est.bound);
        // And the message: round(phase / delta^2) = m1 * m2 (negacyclic).
        let phase = crt2_centered(&dec.decrypt_coeff(&relin).unwrap());
        let expect = negacyclic(&m1, &m2);
        let d2 = (delta as i128) * (delta as i128);
        let mut worst = 0i128;
        for (i, (&ph, &ex)) in phase.iter().zip(&expect).enumerate() {
            let noise = ph - ex * d2;
            worst = worst.max(noise.abs());
            assert!(noise.abs() < d2 / 2, "coefficient {i}");
        }
        eprintln!(
            "  |phase - delta^2 m1 m2| <= 2^{:.1} (delta^2 = 2^40)",
            (worst as f64).log2()
        );
    }
}

#[test]
fn galois_automorphisms_plain_and_hoisted() {
    let log_n = 10;
    let n = 1usize << log_n;
    let q = near_pow2_primes(50, n, 3, &[]);
    let p = near_pow2_primes(60, n, 2, &[]);
    for mode in MODES {
        let ctx = RlweContext::new(params(log_n, q.clone(), p.clone(), 2, mode)).unwrap();
        let mut r = rng(5);
        let kg = KeyGenerator::new(&ctx, &mut r).unwrap();
        let pk = kg.public_key(&mut r).unwrap();
        let steps = [1i64, -1, 3, 100];
        let group = group(n);
        let gk = kg
            .galois_keys_for_steps(&group, &steps, true, &mut r)
            .unwrap();
        assert_eq!(gk.elements().len(), 5);
        let enc = Encryptor::with_public_key(&ctx, &pk).unwrap();
        let dec = Decryptor::new(&ctx, kg.secret_key()).unwrap();
        let delta = 1i64 << 20;
        let m = random_small(&mut r, n, 8);
        for level in [3, 2] {
            let basis = ctx.basis_at(level).unwrap();
            let mv: Vec<i64> = m.iter().map(|&x| x * delta).collect();
            let ct = enc
                .encrypt(&Poly::from_i64(basis, &mv).unwrap().into_ntt(), &mut r)
                .unwrap();
            let before = dec.decrypt_coeff(&ct).unwrap();
            let hoisted = ctx.hoist(&ct).unwrap();
            assert_eq!(hoisted.level(), level);
            let est = ctx
                .key_switch_noise(level, kg.secret_key().hamming_weight())
                .unwrap();
            let mut elements: Vec<_> = steps
                .iter()
                .map(|&s| (group.element_of_step(s), Some(s)))
                .collect();
            elements.push((group.conjugation(), None));
            for (element, step) in elements {
                let plain = match step {
                    Some(s) => ctx.rotate(&ct, &group, s, &gk).unwrap(),
                    None => ctx.apply_galois(&ct, element, &gk).unwrap(),
                };
                let hoist = match step {
                    Some(s) => ctx.rotate_hoisted(&ct, &hoisted, &group, s, &gk).unwrap(),
                    None => ctx
                        .apply_galois_hoisted(&ct, &hoisted, element, &gk)
                        .unwrap(),
                };
                assert_eq!(plain, ctx.apply_galois(&ct, element, &gk).unwrap());
                // The coefficient-form automorphism runs the same key switch: the same ciphertext.
                let coeff = ctx
                    .apply_galois_coeff(&ct.clone().into_coeff(), element, &gk)
                    .unwrap();
                assert_eq!(
                    coeff,
                    plain.clone().into_coeff(),
                    "k = {} {mode:?}",
                    element.value()
                );
                let expect_phase = before.automorphism(element).unwrap();
                let k = element.value();
                let mut worst = 0;
                for (name, out) in [("plain", &plain), ("hoisted", &hoist)] {
                    let after = dec.decrypt_coeff(out).unwrap();
                    let e = small_coeffs(&after.sub(&expect_phase).unwrap());
                    worst = worst.max(max_abs(&e));
                    assert!(
                        (max_abs(&e) as f64) <= est.bound,
                        "{name} k = {k} {mode:?}: {} > {}",
                        max_abs(&e),
                        est.bound
                    );
                    // Message: round(phase / delta) = m(X^k).
                    let got: Vec<i64> = small_coeffs(&after)
                        .iter()
                        .map(|&c| (c as f64 / delta as f64).round() as i64)
                        .collect();
                    assert_eq!(got, automorphism_i64(&m, k), "{name} k = {k} {mode:?}");
                }
                if mode != ConversionMode::Fast {
                    // Exact lifts commute with the automorphism: hoisting changes nothing.
                    assert_eq!(plain, hoist, "k = {k} {mode:?}");
                } else {
                    let diff = small_coeffs(
                        &dec.decrypt_coeff(&plain)
                            .unwrap()
                            .sub(&dec.decrypt_coeff(&hoist).unwrap())
                            .unwrap(),
                    );
                    assert!((max_abs(&diff) as f64) <= 2.0 * est.bound);
                }
                if level == 3 && k == 5 {
                    eprintln!(
                        "galois {mode:?} k = {k}: max |e_ks| = {worst}, bound {:.2}",
                        est.bound
                    );
                }
            }
        }
    }
}

#[test]
fn errors_name_the_numbers() {
    let log_n = 10;
    let n = 1usize << log_n;
    let q = ntt_primes_of_bits(50, 2 * n as u64, 3, &[]).unwrap();
    let p = ntt_primes_of_bits(60, 2 * n as u64, 2, &[]).unwrap();
    let ctx =
        RlweContext::new(params(log_n, q.clone(), p.clone(), 3, ConversionMode::Fast)).unwrap();
    let other =
        RlweContext::new(params(log_n, q[..2].to_vec(), p, 2, ConversionMode::Fast)).unwrap();
    assert_ne!(ctx.fingerprint(), other.fingerprint());
    let mut r = rng(9);
    let kg = KeyGenerator::new(&ctx, &mut r).unwrap();
    let kg_other = KeyGenerator::new(&other, &mut r).unwrap();
    let pk = kg.public_key(&mut r).unwrap();
    let pk_other = kg_other.public_key(&mut r).unwrap();
    let rk_other = kg_other.relin_key(&mut r).unwrap();

    // Mismatched contexts.
    assert!(matches!(
        Encryptor::with_public_key(&ctx, &pk_other),
        Err(Error::ContextMismatch {
            object: "public key",
            ..
        })
    ));
    assert!(matches!(
        Decryptor::new(&other, kg.secret_key()),
        Err(Error::ContextMismatch { .. })
    ));
    assert!(matches!(
        kg.key_switch_key(kg_other.secret_key(), &mut r),
        Err(Error::ContextMismatch { .. })
    ));
    let enc = Encryptor::with_public_key(&ctx, &pk).unwrap();
    let dec = Decryptor::new(&ctx, kg.secret_key()).unwrap();
    let zero3 = enc.encrypt_zero(3, &mut r).unwrap();
    let t = zero3.tensor(&zero3).unwrap();
    assert!(matches!(
        ctx.relinearize(&t, &rk_other),
        Err(Error::ContextMismatch {
            object: "key-switching key",
            ..
        })
    ));
    // A polynomial over another chain.
    let foreign_basis =
        RnsBasis::new(n, &ntt_primes_of_bits(40, 2 * n as u64, 2, &[]).unwrap()).unwrap();
    let foreign = Poly::<Ntt>::zero(&foreign_basis);
    assert!(matches!(
        enc.encrypt(&foreign, &mut r),
        Err(Error::NotOnChain { limbs: 2, .. })
    ));

    // Missing Galois key, naming the element and step.
    let group = group(n);
    let gk = kg
        .galois_keys_for_steps(&group, &[1], false, &mut r)
        .unwrap();
    let zero2 = enc.encrypt_zero(3, &mut r).unwrap();
    match ctx.rotate(&zero2, &group, 3, &gk) {
        Err(
            e @ Error::MissingGaloisKey {
                element: 125,
                step: Some(3),
                ..
            },
        ) => {
            let msg = e.to_string();
            assert!(msg.contains("125") && msg.contains("step 3"), "{msg}");
        }
        other => panic!("expected a missing Galois key, got {other:?}"),
    }
    assert!(matches!(
        ctx.apply_galois(&zero2, group.conjugation(), &gk),
        Err(Error::MissingGaloisKey { element, step: None, .. }) if element == 2 * n - 1
    ));
    assert!(matches!(
        ctx.apply_galois_coeff(&zero2.clone().into_coeff(), group.conjugation(), &gk),
        Err(Error::MissingGaloisKey { element, step: None, .. }) if element == 2 * n - 1
    ));
    assert!(matches!(
        ctx.galois_element(4),
        Err(Error::Ring(rnsfhe_ring::Error::InvalidGaloisElement {
            element: 4,
            ..
        }))
    ));
    // An element of another ring degree is refused by the automorphism and by key generation.
    let foreign = GaloisGroup::new(2 * n, 5).unwrap().element_of_step(1);
    assert!(matches!(
        ctx.apply_galois(&zero2, foreign, &gk),
        Err(Error::Ring(rnsfhe_ring::Error::GaloisDegreeMismatch { .. }))
    ));
    assert!(matches!(
        kg.galois_keys(&[foreign], &mut r),
        Err(Error::Ring(rnsfhe_ring::Error::GaloisDegreeMismatch { .. }))
    ));

    // Level mismatches and part counts.
    let low = enc.encrypt_zero(2, &mut r).unwrap();
    assert!(matches!(
        zero2.add(&low),
        Err(Error::LevelMismatch {
            left: 3,
            right: 2,
            ..
        })
    ));
    assert!(matches!(
        zero2.tensor(&low),
        Err(Error::LevelMismatch {
            left: 3,
            right: 2,
            ..
        })
    ));
    let rk = kg.relin_key(&mut r).unwrap();
    assert!(matches!(
        ctx.relinearize(&zero2, &rk),
        Err(Error::WrongPartCount {
            expected: 3,
            got: 2,
            ..
        })
    ));
    assert!(matches!(
        RlweCiphertext::new(vec![zero2.parts[0].clone(), low.parts[0].clone()]),
        Err(Error::LevelMismatch {
            left: 3,
            right: 2,
            ..
        })
    ));
    assert!(matches!(
        enc.encrypt_zero(4, &mut r),
        Err(Error::LevelOutOfRange {
            level: 4,
            max: 3,
            ..
        })
    ));
    assert_eq!(zero2.drop_to_level(2).unwrap().level(), 2);

    // A hoisted decomposition belongs to one ciphertext.
    let h = ctx.hoist(&zero2).unwrap();
    let other_ct = enc.encrypt_zero(3, &mut r).unwrap();
    assert!(matches!(
        ctx.rotate_hoisted(&other_ct, &h, &group, 1, &gk),
        Err(Error::HoistMismatch { .. })
    ));
    assert!(matches!(
        ctx.rotate_hoisted(&low, &h, &group, 1, &gk),
        Err(Error::HoistMismatch {
            hoisted_level: 3,
            level: 2
        })
    ));

    // Secrets are redacted.
    assert_eq!(format!("{:?}", kg.secret_key()), "SecretKey { <redacted> }");
    assert!(SecretKey::from_coefficients(&ctx, &vec![2; n]).is_err());
    // Sanity: the zero encryption decrypts to a small error.
    let e = small_coeffs(&dec.decrypt_coeff(&zero2).unwrap());
    assert!(
        (max_abs(&e) as f64)
            <= ctx
                .fresh_noise_public(kg.secret_key().hamming_weight())
                .bound
    );
}

/// `N = 2^15` with 8 chain primes of 50 bits and 2 special primes of 60 bits (`dnum = 4`, digits of two
/// primes): relinearization noise against the bound, and the time of one key switch (printed only; the
/// benchmarks own timings).
#[test]
fn large_ring_key_switch() {
    let log_n = 15;
    let n = 1usize << log_n;
    let q = near_pow2_primes(50, n, 8, &[]);
    let p = near_pow2_primes(60, n, 2, &[]);
    for mode in MODES {
        let ctx = RlweContext::new(params(log_n, q.clone(), p.clone(), 4, mode)).unwrap();
        let mut r = rng(11);
        let kg = KeyGenerator::new(&ctx, &mut r).unwrap();
        let rk = kg.relin_key(&mut r).unwrap();
        let basis = ctx.basis_at(8).unwrap();
        let d = uniform_ntt(basis, &mut r);
        let _warm = ctx.key_switch(&d, rk.key()).unwrap();
        let reps = 5;
        let start = std::time::Instant::now();
        let mut out = None;
        for _ in 0..reps {
            out = Some(ctx.key_switch(&d, rk.key()).unwrap());
        }
        let per = start.elapsed().as_secs_f64() / reps as f64;
        let (u0, u1) = out.unwrap();
        let s = secret_ntt(kg.secret_key(), basis);
        let s2 = s.mul(&s).unwrap();
        let mut phase = u0;
        phase.mul_add_assign(&u1, &s).unwrap();
        let e = small_coeffs(&phase.sub(&d.mul(&s2).unwrap()).unwrap().into_coeff());
        let est = ctx
            .key_switch_noise(8, kg.secret_key().hamming_weight())
            .unwrap();
        eprintln!(
            "N = 2^15, L = 8, k = 2, dnum = 4, {mode:?}: key switch {:.2} ms ({} threads); max |e_ks| = {}, rms = {:.2}, bound {:.2}",
            per * 1e3,
            rayon::current_num_threads(),
            max_abs(&e),
            rms(&e),
            est.bound
        );
        assert!((max_abs(&e) as f64) <= est.bound);
    }
}

/// A message computed by `encrypt_coeff_with` (beside the other part) gives the ciphertext
/// `encrypt_coeff_in` gives for the same message and generator state, with each kind of key; a message of
/// another level and the message's own error are returned as errors.
#[test]
fn lazy_message_encryption_matches_and_checks_the_level() {
    let n = 1 << 10;
    let q = ntt_primes_of_bits(40, 2 * n as u64, 3, &[]).unwrap();
    let p = ntt_primes_of_bits(45, 2 * n as u64, 1, &q).unwrap();
    let ctx = RlweContext::new(params(10, q, p, 1, ConversionMode::Fast)).unwrap();
    let kg = KeyGenerator::new(&ctx, &mut rng(40)).unwrap();
    let encryptors = [
        Encryptor::with_public_key(&ctx, &kg.public_key(&mut rng(41)).unwrap()).unwrap(),
        Encryptor::with_public_key(&ctx, &kg.public_key_over_q(&mut rng(42)).unwrap()).unwrap(),
        Encryptor::with_secret_key(&ctx, kg.secret_key()).unwrap(),
    ];
    let level = ctx.max_level();
    let values: Vec<i64> = (0..n as i64).map(|i| (i % 17) - 8).collect();
    let m = Poly::<Coeff>::from_i64(ctx.basis_at(level).unwrap(), &values).unwrap();
    for enc in &encryptors {
        let eager: RlweCiphertext<Ntt> = enc.encrypt_coeff_in(&m, &mut rng(43)).unwrap();
        let lazy: RlweCiphertext<Ntt> = enc
            .encrypt_coeff_with(level, || Ok::<_, Error>(m.clone()), &mut rng(43))
            .unwrap();
        assert_eq!(lazy, eager);
        let low = m.drop_to(level - 1).unwrap();
        let wrong = enc.encrypt_coeff_with::<Ntt, Error>(level, || Ok(low), &mut rng(43));
        assert!(
            matches!(wrong, Err(Error::LevelMismatch { .. })),
            "{wrong:?}"
        );
        let failing = enc.encrypt_coeff_with::<Coeff, Error>(
            level,
            || {
                Err(Error::InvalidParams {
                    what: "message",
                    reason: "made to fail".into(),
                })
            },
            &mut rng(43),
        );
        assert!(
            matches!(failing, Err(Error::InvalidParams { .. })),
            "{failing:?}"
        );
    }
}
