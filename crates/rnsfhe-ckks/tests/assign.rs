//! The in-place additions (`Evaluator::add_assign` and its family) give bit-for-bit the results of the
//! out-of-place forms, with the same alignment of levels, scales and part counts, and leave the left
//! operand unchanged on an error.
#![allow(clippy::unwrap_used)]

mod common;

use common::{complex_values, rng, small, Setup};
use rnsfhe_ckks::{CkksContext, ConversionMode, Evaluator, RescalingPolicy};

fn setup() -> (Setup, Evaluator) {
    let ctx = CkksContext::new(small(RescalingPolicy::ExactScale, ConversionMode::Fast)).unwrap();
    let s = Setup::new(ctx, 11);
    let rk = s.keys.relin_key(&mut rng(13)).unwrap();
    let ev = Evaluator::new(&s.ctx).with_relin_key(rk).unwrap();
    (s, ev)
}

#[test]
fn assign_forms_equal_the_out_of_place_forms() {
    let (s, ev) = setup();
    let slots = s.ctx.max_slots();
    let level = s.ctx.max_level();
    let a = s.encrypt(&complex_values(slots, 1), slots, level);
    let b = s.encrypt(&complex_values(slots, 2), slots, level);
    let pt = ev.encode_like(&complex_values(slots, 3), &a).unwrap();

    let mut x = a.clone();
    ev.add_assign(&mut x, &b).unwrap();
    assert_eq!(x, ev.add(&a, &b).unwrap());
    let mut x = a.clone();
    ev.sub_assign(&mut x, &b).unwrap();
    assert_eq!(x, ev.sub(&a, &b).unwrap());
    let mut x = a.clone();
    ev.add_plain_assign(&mut x, &pt).unwrap();
    assert_eq!(x, ev.add_plain(&a, &pt).unwrap());
    let mut x = a.clone();
    ev.sub_plain_assign(&mut x, &pt).unwrap();
    assert_eq!(x, ev.sub_plain(&a, &pt).unwrap());
    // The operand may be the target's own copy: `a += a` doubles.
    let mut x = a.clone();
    ev.add_assign(&mut x, &a).unwrap();
    assert_eq!(x, ev.add(&a, &a).unwrap());
}

#[test]
fn assign_aligns_levels_scales_and_parts_as_add() {
    let (s, ev) = setup();
    let slots = s.ctx.max_slots();
    let level = s.ctx.max_level();
    let a = s.encrypt(&complex_values(slots, 1), slots, level);
    let b = s.encrypt(&complex_values(slots, 2), slots, level);
    // A lower right operand: the target is brought down to its level (and a lower target stays there).
    let low = ev.drop_to_level(&b, level - 1).unwrap();
    let mut x = a.clone();
    ev.add_assign(&mut x, &low).unwrap();
    assert_eq!(x, ev.add(&a, &low).unwrap());
    assert_eq!(x.level(), level - 1);
    let mut x = low.clone();
    ev.sub_assign(&mut x, &a).unwrap();
    assert_eq!(x, ev.sub(&low, &a).unwrap());
    // Another scale (a rescaled product): aligned as by `add`.
    let product = ev.multiply_rescale(&a, &b).unwrap();
    let mut x = a.clone();
    ev.add_assign(&mut x, &product).unwrap();
    assert_eq!(x, ev.add(&a, &product).unwrap());
    // A three-part right operand (a product before relinearization): its third part is appended,
    // negated for a difference.
    let three = ev.multiply_without_relin(&a, &b).unwrap();
    let two = ev.relinearize(&three).unwrap();
    let mut x = two.clone();
    ev.add_assign(&mut x, &three).unwrap();
    assert_eq!(x, ev.add(&two, &three).unwrap());
    let mut x = two.clone();
    ev.sub_assign(&mut x, &three).unwrap();
    assert_eq!(x, ev.sub(&two, &three).unwrap());
}

#[test]
fn assign_errors_leave_the_target_unchanged() {
    let (s, ev) = setup();
    let level = s.ctx.max_level();
    let a = s.encrypt(&complex_values(8, 1), 8, level);
    let b = s.encrypt(&complex_values(4, 2), 4, level);
    let mut x = a.clone();
    assert!(ev.add_assign(&mut x, &b).is_err(), "slot counts differ");
    assert_eq!(x, a);
    let strict = Evaluator::strict(&s.ctx);
    let low = strict.drop_to_level(&a, level - 1).unwrap();
    let mut x = a.clone();
    assert!(
        strict.sub_assign(&mut x, &low).is_err(),
        "levels differ in strict mode"
    );
    assert_eq!(x, a);
}
