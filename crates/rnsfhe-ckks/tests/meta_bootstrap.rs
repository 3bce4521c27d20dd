//! META-BTS ([`Evaluator::bootstrap_meta`]) on the insecure `N = 2^11` bootstrapping chain: the error
//! after two and three passes within [`Bootstrapper::meta_error_bound`] and far below one pass's,
//! measured over several key seeds, real and complex values; the levels and scales documented; errors
//! for zero passes and chains without the levels the corrections need.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::bootstrapping::{context, max_error, BtpSetup, DEPTH};
use common::{c, complex_values, values};
use rnsfhe_ckks::{BootstrapParams, Bootstrapper, Error};

/// Slots of the tests: sparse (the trace runs), small enough for a fast circuit.
const SLOTS: usize = 64;

/// For three key seeds, real and complex values: one pass, two and three, each within its bound, at
/// the documented level and scale; two passes gain at least 10 bits over one (measured; the bound of
/// two passes is `B_1 / 2^k + R`, about `2^-35` here against one pass's `2^-18`, so the bound itself
/// promises the gain whenever one pass's error is above `2^-25`).
#[test]
fn passes_gain_precision_within_their_bounds() {
    for seed in 1..=3u8 {
        // Two levels after a bootstrapping: three passes need both.
        let s = BtpSetup::new(2, SLOTS, seed);
        let inputs = [
            ("real", c(&values(SLOTS, u64::from(seed)))),
            ("complex", complex_values(SLOTS, 10 + u64::from(seed))),
        ];
        for (kind, z) in inputs {
            let ct = s.encrypt(&z, 1, seed.wrapping_add(40));
            let want = s.dec.decrypt(&ct).unwrap();
            let mut errors = Vec::new();
            for passes in 1..=3 {
                let out = s.eval.bootstrap_meta(&ct, &s.btp, passes).unwrap();
                let level = s.btp.meta_output_level(passes);
                assert_eq!(out.level(), level);
                if passes > 1 {
                    // The corrections end on the default scale of their level.
                    let scale = s.ctx.level_scale(level).unwrap();
                    assert!((out.scale() / scale - 1.0).abs() < 1e-9);
                }
                let err = max_error(&want, &s.dec.decrypt(&out).unwrap());
                let bound = s.btp.meta_error_bound(ct.scale(), passes).unwrap();
                eprintln!(
                    "seed {seed}, {kind}, {passes} pass(es): error 2^{:.2}, bound 2^{:.2} (shifts {:?}, \
                     roundings 2^{:.1}), level {level}",
                    err.log2(),
                    bound.total.log2(),
                    bound.shifts,
                    bound.rounding.log2()
                );
                assert!(err <= bound.total, "{err:e} > {:e}", bound.total);
                assert_eq!(bound.passes.len(), passes);
                assert_eq!(bound.shifts.len(), passes - 1);
                errors.push(err);
            }
            assert!(
                errors[1] * 1024.0 <= errors[0],
                "seed {seed}, {kind}: two passes 2^{:.2} against one 2^{:.2}",
                errors[1].log2(),
                errors[0].log2()
            );
            assert!(errors[2] <= errors[0] / 1024.0);
        }
    }
}

/// An input above level 1 (a ciphertext with levels left): the same result level and bound.
#[test]
fn input_above_level_one() {
    let s = BtpSetup::new(1, SLOTS, 7);
    let z = c(&values(SLOTS, 70));
    let ct = s.encrypt(&z, s.btp.output_level(), 71);
    let want = s.dec.decrypt(&ct).unwrap();
    let out = s.eval.bootstrap_meta(&ct, &s.btp, 2).unwrap();
    assert_eq!(out.level(), 1);
    let err = max_error(&want, &s.dec.decrypt(&out).unwrap());
    let bound = s.btp.meta_error_bound(ct.scale(), 2).unwrap();
    eprintln!(
        "from level {}: error 2^{:.2}, bound 2^{:.2}",
        ct.level(),
        err.log2(),
        bound.total.log2()
    );
    assert!(err <= bound.total);
}

#[test]
fn errors_for_passes_and_short_chains() {
    let btp_for = |user_levels: usize| {
        let ctx = context(DEPTH + user_levels);
        Bootstrapper::new(&ctx, BootstrapParams::for_context(&ctx, SLOTS).unwrap()).unwrap()
    };
    let scale = |btp: &Bootstrapper| btp.max_input_scale();
    // No level after a bootstrapping: one pass only.
    let none = btp_for(0);
    assert_eq!(none.levels_left(), 0);
    assert!(none.meta_error_bound(scale(&none), 1).is_ok());
    match none.meta_error_bound(scale(&none), 2) {
        Err(
            e @ Error::BootstrapTooDeep {
                needed, available, ..
            },
        ) => {
            assert_eq!((needed, available), (DEPTH + 2, DEPTH + 1));
            assert!(
                e.to_string().contains(&format!("needs {needed} levels")),
                "{e}"
            );
        }
        other => panic!("expected BootstrapTooDeep, got {other:?}"),
    }
    // One level: two passes, not three.
    let one = btp_for(1);
    assert!(one.meta_error_bound(scale(&one), 2).is_ok());
    assert!(matches!(
        one.meta_error_bound(scale(&one), 3),
        Err(Error::BootstrapTooDeep { needed, .. }) if needed == DEPTH + 3
    ));
    // Zero passes, and a scale above the EvalMod range.
    assert!(matches!(
        one.meta_error_bound(scale(&one), 0),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        one.meta_error_bound(scale(&one) * 4.0, 2),
        Err(Error::InvalidArgument { .. })
    ));
    // The evaluator checks before bootstrapping anything.
    let s = BtpSetup::new(0, SLOTS, 9);
    let ct = s.encrypt(&c(&values(SLOTS, 90)), 1, 91);
    assert!(matches!(
        s.eval.bootstrap_meta(&ct, &s.btp, 2),
        Err(Error::BootstrapTooDeep { .. })
    ));
    assert!(matches!(
        s.eval.bootstrap_meta(&ct, &s.btp, 0),
        Err(Error::InvalidArgument { .. })
    ));
}
