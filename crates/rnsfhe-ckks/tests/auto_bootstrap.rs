//! Automatic bootstrapping ([`Evaluator::with_auto_bootstrap`]) on the insecure `N = 2^11`
//! bootstrapping chain with 3 levels left after a bootstrapping: ten products in a row succeed only
//! with the opt-in, each step within the bootstrapper's error bound, with the bootstrappings counted;
//! squares bootstrap once; the errors of the opt-in.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::bootstrapping::{context, max_error, BtpSetup, DEPTH};
use common::{c, values};
use rnsfhe_ckks::{BootstrapParams, Bootstrapper, Complex64, Error, Evaluator};

const SLOTS: usize = 64;

/// Multiplication and rescaling noise at scale `2^51` is about `2^-42` per slot (`6 sigma`); the
/// tolerance of a step without a bootstrapping leaves a margin of `2^7` for the factor's own error.
const PRODUCT_TOLERANCE: f64 = 1.0 / (1u64 << 35) as f64;

/// `x <- x * y` ten times from level 4 (3 products left): products 4, 7 and 10 find `x` at level 1
/// and bootstrap it first. Each step's result is within the bound of the bootstrapping it ran
/// (times `max |y| <= 1`) plus the product's noise of the decrypted `x` times `y`.
#[test]
fn ten_products_on_three_levels_bootstrap_three_times() {
    let s = BtpSetup::new(3, SLOTS, 1);
    assert_eq!(s.btp.levels_left(), 3);
    // Factors of magnitude in [0.9, 1], so that x stays away from 0 and in [-1, 1].
    let y: Vec<f64> = values(SLOTS, 2)
        .iter()
        .map(|v| v.signum() * (0.9 + 0.1 * v.abs()))
        .collect();
    let top = s.ctx.max_level();
    let cy = s.encrypt(&c(&y), top, 3);
    let x0 = s.encrypt(&c(&values(SLOTS, 4)), s.btp.output_level(), 5);

    // Without the opt-in the fourth product has no level.
    let mut x = x0.clone();
    let mut failed = None;
    for i in 0..10 {
        match s.eval.multiply_rescale(&x, &cy) {
            Ok(next) => x = next,
            Err(e) => {
                failed = Some((i, e));
                break;
            }
        }
    }
    let (i, e) = failed.expect("ten products on three levels without bootstrapping");
    assert_eq!(i, 3);
    // The product at level 1 does not fit q_0 (scale Delta^2).
    assert!(
        matches!(
            e,
            Error::NotEnoughLevels { .. } | Error::ScaleTooLarge { .. }
        ),
        "{e:?}"
    );
    assert_eq!(s.eval.bootstraps_done(), 0);

    let auto = s
        .eval
        .clone()
        .with_auto_bootstrap(Arc::clone(&s.btp))
        .unwrap();
    assert!(auto.auto_bootstrapper().is_some());
    let mut x = x0;
    for i in 0..10 {
        let before = auto.bootstraps_done();
        let bootstraps = x.level() < 2;
        let input = s.dec.decrypt(&x).unwrap();
        let bound = if bootstraps {
            s.btp.error_bound(x.scale()).unwrap().total
        } else {
            0.0
        };
        x = auto.multiply_rescale(&x, &cy).unwrap();
        assert_eq!(auto.bootstraps_done(), before + usize::from(bootstraps));
        let want: Vec<Complex64> = input.iter().zip(&y).map(|(a, b)| a * b).collect();
        let err = max_error(&want, &s.dec.decrypt(&x).unwrap());
        eprintln!(
            "product {}: level {}, error 2^{:.2}{}",
            i + 1,
            x.level(),
            err.log2(),
            if bootstraps {
                format!(" after a bootstrapping (bound 2^{:.2})", bound.log2())
            } else {
                String::new()
            }
        );
        assert!(err <= bound + PRODUCT_TOLERANCE, "product {}", i + 1);
    }
    assert_eq!(auto.bootstraps_done(), 3);
    // Clones share the counter; a new opt-in starts at zero.
    assert_eq!(auto.clone().bootstraps_done(), 3);
    let again = auto
        .clone()
        .with_auto_bootstrap(Arc::clone(&s.btp))
        .unwrap();
    assert_eq!(again.bootstraps_done(), 0);
}

/// A square at level 1 bootstraps its operand once; constant and plaintext products bootstrap too;
/// additions do not.
#[test]
fn squares_constants_and_additions() {
    let s = BtpSetup::new(1, SLOTS, 2);
    let auto = s
        .eval
        .clone()
        .with_auto_bootstrap(Arc::clone(&s.btp))
        .unwrap();
    let z = values(SLOTS, 6);
    let x = s.encrypt(&c(&z), 1, 7);
    let sum = auto.add(&x, &x).unwrap();
    assert_eq!((sum.level(), auto.bootstraps_done()), (1, 0));
    let sq = auto.multiply_rescale(&x, &x).unwrap();
    assert_eq!(auto.bootstraps_done(), 1);
    assert_eq!(sq.level(), s.btp.output_level() - 1);
    let half = auto.rescale(&auto.multiply_real(&x, 0.5).unwrap()).unwrap();
    assert_eq!(auto.bootstraps_done(), 2);
    // A plaintext at the top: dropped to the bootstrapped operand's level.
    let pt = s.ctx.encode(&c(&z), SLOTS, s.ctx.max_level()).unwrap();
    let prod = auto
        .rescale(&auto.multiply_plain(&x, &pt).unwrap())
        .unwrap();
    assert_eq!(auto.bootstraps_done(), 3);
    assert_eq!(prod.level(), s.btp.output_level() - 1);
    let dec_sq = s.dec.decrypt(&sq).unwrap();
    let dec_half = s.dec.decrypt(&half).unwrap();
    let bound = s.btp.error_bound(x.scale()).unwrap().total;
    let want_sq: Vec<Complex64> = z.iter().map(|v| Complex64::new(v * v, 0.0)).collect();
    let want_half: Vec<Complex64> = z.iter().map(|v| Complex64::new(v / 2.0, 0.0)).collect();
    // |d(x^2)| <= 2 |dx|: twice the bound (plus the input's and the product's noise).
    assert!(max_error(&want_sq, &dec_sq) <= 2.0 * bound + PRODUCT_TOLERANCE);
    assert!(max_error(&want_half, &dec_half) <= bound + PRODUCT_TOLERANCE);
}

#[test]
fn opt_in_errors() {
    let s = BtpSetup::new(1, SLOTS, 3);
    // A bootstrapper of another context.
    let other = context(DEPTH + 2);
    let foreign =
        Bootstrapper::new(&other, BootstrapParams::for_context(&other, SLOTS).unwrap()).unwrap();
    assert!(matches!(
        s.eval.clone().with_auto_bootstrap(Arc::new(foreign)),
        Err(Error::ContextMismatch { .. })
    ));
    // A bootstrapper that leaves no level.
    let flat = context(DEPTH);
    let btp =
        Bootstrapper::new(&flat, BootstrapParams::for_context(&flat, SLOTS).unwrap()).unwrap();
    assert!(matches!(
        Evaluator::new(&flat).with_auto_bootstrap(Arc::new(btp)),
        Err(Error::InvalidArgument { .. })
    ));
    // Without keys the first automatic bootstrapping reports them.
    let bare = Evaluator::new(&s.ctx)
        .with_auto_bootstrap(Arc::clone(&s.btp))
        .unwrap();
    let x = s.encrypt(&c(&values(SLOTS, 8)), 1, 9);
    assert!(matches!(
        bare.multiply_real(&x, 0.5),
        Err(Error::MissingKey { .. })
    ));
    assert_eq!(bare.bootstraps_done(), 0);
}
