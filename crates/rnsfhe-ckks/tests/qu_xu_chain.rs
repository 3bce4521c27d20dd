//! With `ConversionMode::ExactInteger`, `CkksContext::new` chooses the scaling primes the Qu-Xu
//! way (Qu-Xu Algorithm 2 for the largest `eta` giving enough NTT primes around `2^log_scale`, Algorithm 3
//! for the primes), so the chain's `eta` is Algorithm 2's maximum; a multiplication and a rotation still
//! decrypt within the thresholds of `tests/evaluator.rs` and `tests/conversion_modes.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{bits, c, PkSession};
use rnsfhe_ckks::{CkksContext, CkksParams, ConversionMode, Preset};
use rnsfhe_math::primes::{closeness_eta, qu_xu_max_eta};

/// The fresh-precision threshold of `tests/evaluator.rs` (public-key encryption, scale `2^40`); a
/// multiplication with rescaling may lose 2 bits of it, a rotation 1 bit relative to its input.
const FRESH_BITS: f64 = 21.0;

/// The preset in `ExactInteger` mode.
fn exact_integer(preset: Preset) -> CkksParams {
    CkksParams {
        conversion: ConversionMode::ExactInteger,
        ..preset.params()
    }
}

/// How many primes near `2^log_scale` the chain takes: the `L` scaling primes, and `q_0` too when it has
/// `log_scale` bits.
fn near_scale_count(p: &CkksParams) -> usize {
    p.levels + usize::from(p.q0_bits == p.log_scale)
}

#[test]
fn scaling_primes_reach_algorithm_2_eta() {
    // Print every preset's figures before any assertion fails.
    for preset in [Preset::PaperTable3, Preset::Rec128N13] {
        let p = exact_integer(preset);
        let ctx = CkksContext::new(p.clone()).unwrap();
        let max_eta = qu_xu_max_eta(p.log_scale, 2 * p.n() as u64, near_scale_count(&p)).unwrap();
        println!(
            "{preset:?} ExactInteger: chain eta {} (Algorithm 2: {max_eta}), {}",
            ctx.eta(),
            ctx.qu_xu_summary()
        );
    }
    for preset in [Preset::PaperTable3, Preset::Rec128N13] {
        let p = exact_integer(preset);
        let ctx = CkksContext::new(p.clone()).unwrap();
        let two_n = 2 * p.n() as u64;
        let max_eta = qu_xu_max_eta(p.log_scale, two_n, near_scale_count(&p)).unwrap();
        let scaling = &ctx.q_moduli()[1..];
        assert_eq!(scaling.len(), p.levels);
        assert_eq!(ctx.eta(), max_eta, "{preset:?}");
        assert_eq!(closeness_eta(scaling, p.log_scale), max_eta, "{preset:?}");
        // Every scaling prime is an NTT prime within 2^-eta of 2^log_scale.
        for &q in scaling {
            assert_eq!(q % two_n, 1, "{preset:?}: {q}");
        }
        // The other modes keep their chain (not the Qu-Xu one); the special primes reach their own maximum.
        let fast = CkksContext::new(preset.params()).unwrap();
        assert!(fast.eta() <= max_eta, "{preset:?}");
        let special_eta = qu_xu_max_eta(
            p.special_bits,
            two_n,
            p.special_primes + ctx.q_moduli().len(),
        )
        .unwrap();
        assert!(closeness_eta(ctx.p_moduli(), p.special_bits) >= special_eta);
    }
}

#[test]
fn multiplication_and_rotation_decrypt() {
    for preset in [Preset::PaperTable3, Preset::Rec128N13] {
        let ctx = CkksContext::new(exact_integer(preset)).unwrap();
        let mut session = PkSession::new(&ctx, 7);
        let (a, b, ca, cb) = session.two_inputs(&ctx);
        let PkSession { dec, eval, .. } = session;
        let slots = ctx.max_slots();
        let fresh = bits(&c(&a), &dec.decrypt(&ca).unwrap());
        assert!(fresh >= FRESH_BITS, "{preset:?}: fresh {fresh:.2}");
        let prod: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
        let pm = eval.multiply_rescale(&ca, &cb).unwrap();
        assert_eq!(pm.level(), ca.level() - 1);
        let pb = bits(&c(&prod), &dec.decrypt(&pm).unwrap());
        assert!(pb >= FRESH_BITS - 2.0, "{preset:?}: mult&rs {pb:.2}");
        let rot: Vec<f64> = (0..slots).map(|j| a[(j + 1) % slots]).collect();
        let rb = bits(
            &c(&rot),
            &dec.decrypt(&eval.rotate(&ca, 1).unwrap()).unwrap(),
        );
        assert!(
            rb >= fresh - 1.0,
            "{preset:?}: rotation {rb:.2} vs input {fresh:.2}"
        );
        println!("{preset:?} ExactInteger: fresh {fresh:.2}, mult&rs {pb:.2}, rotation {rb:.2}");
    }
}
