//! BFV multiplication with Qu-Xu integer-only basis extension (`ConversionMode::ExactInteger`): primes
//! chosen by Qu-Xu Algorithms 2 and 3 meet Theorem 1's precondition, random circuits of multiplications
//! (with relinearization), additions and plaintext products decrypt to the plaintext computation mod `t`,
//! the result is bit for bit that of `ExactFloat` on the same moduli, and a basis far from a power of two
//! is refused with an error naming `eta`, `l` and the bound.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rnsfhe_bfv::{
    BatchEncoder, BfvContext, BfvError, BfvParams, Ciphertext, ConversionMode, Evaluator,
};
use rnsfhe_ring::conversion::{theorem1_eta_lower_bound, DEFAULT_QU_XU_FAILURE_TARGET};

use common::{random_values, Setup};

const T: u64 = 65537;

/// The small preset: `N = 2^12`, `t = 65537`, three ciphertext primes near `2^50` (Qu-Xu), insecure
/// parameters allowed.
fn exact_integer_params() -> BfvParams {
    let mut p =
        BfvParams::with_bit_sizes_and_conversion(12, T, 50, 3, ConversionMode::ExactInteger)
            .unwrap();
    p.insecure_for_testing = true;
    p
}

#[test]
fn qu_xu_primes_meet_theorem_1() {
    let p = exact_integer_params();
    assert_eq!(p.conversion, ConversionMode::ExactInteger);
    let ctx = BfvContext::new(p.clone()).unwrap();
    assert_eq!(ctx.conversion(), ConversionMode::ExactInteger);
    let (eta_q, eta_p) = ctx.qu_xu_eta().unwrap();
    let r = DEFAULT_QU_XU_FAILURE_TARGET;
    assert!(eta_q as f64 > theorem1_eta_lower_bound(p.q_moduli.len(), r));
    assert!(eta_p as f64 > theorem1_eta_lower_bound(p.p_moduli.len(), r));
    let two_n = 2u64 << p.log_n;
    for &q in p.q_moduli.iter().chain(&p.p_moduli) {
        assert_eq!(q % two_n, 1);
    }
    // Q near 2^50, P near 2^51: within a factor 1 ± 2^-eta.
    for &q in &p.q_moduli {
        assert!(((q as f64) / 2f64.powi(50) - 1.0).abs() <= 2f64.powi(-(eta_q as i32)));
    }
    for &q in &p.p_moduli {
        assert!(((q as f64) / 2f64.powi(51) - 1.0).abs() <= 2f64.powi(-(eta_p as i32)));
    }
    assert!(ctx.log_p() >= 1.0 + (T as f64).log2() + 12.0 + ctx.log_q());
    // The default is unchanged.
    let float = BfvParams::with_bit_sizes(12, T, 50, 3).unwrap();
    assert_eq!(float.conversion, ConversionMode::ExactFloat);
    assert_eq!(
        BfvParams::generate(2, 1).unwrap().conversion,
        ConversionMode::ExactFloat
    );
}

#[test]
fn random_circuits_decrypt_exactly() {
    let ctx = BfvContext::new(exact_integer_params()).unwrap();
    let mut setup = Setup::new(Arc::clone(&ctx), 7);
    // The same moduli with ExactFloat: same fingerprint, so keys and ciphertexts are shared.
    let mut fp = ctx.params().clone();
    fp.conversion = ConversionMode::ExactFloat;
    let float_ctx = BfvContext::new(fp).unwrap();
    assert_eq!(float_ctx.fingerprint(), ctx.fingerprint());
    let float_ev = Evaluator::new(&float_ctx);
    let enc = BatchEncoder::new(&ctx).unwrap();
    let n = setup.n;
    let mut vr = rand::rngs::StdRng::seed_from_u64(2024);
    let (mut products, mut max_depth) = (0, 0);
    for circuit in 0..4 {
        // A pool of (ciphertext, plaintext values, depth); each step combines two random members.
        let mut pool: Vec<(Ciphertext, Vec<u64>, usize)> = (0..3)
            .map(|_| {
                let x = random_values(&mut vr, n, T);
                let ct = setup
                    .pk_enc
                    .encrypt(&enc.encode_u64(&x).unwrap(), &mut setup.r)
                    .unwrap();
                (ct, x, 0)
            })
            .collect();
        for step in 0..6 {
            let i = vr.gen_range(0..pool.len());
            let j = vr.gen_range(0..pool.len());
            let (a, b) = (&pool[i], &pool[j]);
            let op = if a.2.max(b.2) >= 3 {
                vr.gen_range(1..3)
            } else {
                vr.gen_range(0..3)
            };
            let (ct, x, depth) = match op {
                0 => {
                    let ct = setup.ev.multiply(&a.0, &b.0, &setup.keys.rk).unwrap();
                    let reference = float_ev.multiply(&a.0, &b.0, &setup.keys.rk).unwrap();
                    assert_eq!(
                        ct, reference,
                        "circuit {circuit} step {step}: ExactInteger and ExactFloat differ"
                    );
                    let x = a.1.iter().zip(&b.1).map(|(&u, &v)| u * v % T).collect();
                    products += 1;
                    (ct, x, a.2.max(b.2) + 1)
                }
                1 => {
                    let ct = setup.ev.add(&a.0, &b.0).unwrap();
                    let x = a.1.iter().zip(&b.1).map(|(&u, &v)| (u + v) % T).collect();
                    (ct, x, a.2.max(b.2))
                }
                _ => {
                    let c = random_values(&mut vr, n, T);
                    let ct = setup
                        .ev
                        .multiply_plain(&a.0, &enc.encode_u64(&c).unwrap())
                        .unwrap();
                    let x = a.1.iter().zip(&c).map(|(&u, &v)| u * v % T).collect();
                    (ct, x, a.2)
                }
            };
            let got = enc.decode_u64(&setup.dec.decrypt(&ct).unwrap()).unwrap();
            assert_eq!(
                got, x,
                "circuit {circuit} step {step} (op {op}, depth {depth})"
            );
            max_depth = max_depth.max(depth);
            pool.push((ct, x, depth));
        }
    }
    assert!(
        products >= 4 && max_depth >= 2,
        "{products} products, depth {max_depth}"
    );
}

#[test]
fn basis_far_from_a_power_of_two_is_refused() {
    // Ciphertext primes near 1.5 * 2^49, far from any power of two (eta = 2 at best).
    let mut p = BfvParams::with_bit_sizes(12, T, 50, 3).unwrap();
    p.insecure_for_testing = true;
    let two_n = 2u64 << p.log_n;
    let start = 3u64 << 48;
    let mut far = Vec::new();
    let mut c = start / two_n * two_n + 1;
    while far.len() < 3 {
        if rnsfhe_math::primes::is_prime(c) {
            far.push(c);
        }
        c += two_n;
    }
    p.q_moduli = far;
    p.conversion = ConversionMode::ExactInteger;
    let err = BfvContext::new(p.clone()).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(
            err,
            BfvError::InvalidParams {
                what: "q_moduli",
                ..
            }
        ),
        "{err:?}"
    );
    let bound = theorem1_eta_lower_bound(3, DEFAULT_QU_XU_FAILURE_TARGET);
    for needle in ["eta = ", "l = 3", &format!("{bound:.3}"), "ExactFloat"] {
        assert!(msg.contains(needle), "{needle:?} missing from: {msg}");
    }
    // The same moduli work with ExactFloat.
    p.conversion = ConversionMode::ExactFloat;
    BfvContext::new(p.clone()).unwrap();
    // Fast is refused (HPS multiplication needs the centered lift).
    p.conversion = ConversionMode::Fast;
    assert!(matches!(
        BfvContext::new(p).unwrap_err(),
        BfvError::InvalidParams {
            what: "conversion",
            ..
        }
    ));
}
