//! Galois elements of the batching matrix: row rotations and the column swap.
//!
//! The automorphisms of `R = Z[X]/(X^N + 1)` are `X -> X^g` for odd `g` modulo `2N`; they form the group
//! `Z_2N^* = <3> x <-1>`, with `3` of order `N/2` (for `N >= 4`) and `-1` outside `<3>` (the math is in
//! [`rnsfhe_ring::galois`]). When `t` is a prime `= 1 mod 2N`, the [`crate::BatchEncoder`] lays the `N`
//! slots out as a `2 x N/2` matrix whose row 0 holds the evaluations at `psi^(3^j)` and row 1 those at
//! `psi^(-3^j)`, `j = 0 .. N/2 - 1` (`psi` a primitive `2N`-th root of unity modulo `t`). Then (SEAL's
//! convention), in the context's [`GaloisGroup`] ([`crate::BfvContext::galois_group`], generator
//! [`ROW_ROTATION_GENERATOR`]):
//!
//! * `X -> X^(3^r mod 2N)` rotates both rows cyclically **left** by `r`
//!   ([`GaloisGroup::element_of_step`]; negative `r` rotate right, `r` is taken modulo `N/2`);
//! * `X -> X^(2N - 1)` swaps the two rows ([`GaloisGroup::conjugation`]).
//!
//! The homomorphic versions ([`crate::Evaluator::rotate_rows`], [`crate::Evaluator::rotate_columns`],
//! [`crate::Evaluator::apply_galois`]) apply the automorphism to both ciphertext parts, which then decrypt
//! under `s(X^g)`, and key-switch back to `s` with a [`crate::GaloisKeys`] entry by the HPS CRT
//! key-switching of relinearization (HPS Sections 3.3 and 4.5; see [`crate::keys`]).
//!
//! CKKS uses the generator 5 instead, the convention of the CKKS papers; BFV follows SEAL's batching
//! layout with generator 3. Both generate the same group together with `-1`, so the row structure is the
//! same kind; only the order of the slots within a row differs.

use rnsfhe_ring::{GaloisElement, GaloisGroup};

/// The generator of row rotations: rotation by `r` is the Galois element `3^r mod 2N` (SEAL's convention).
pub const ROW_ROTATION_GENERATOR: usize = 3;

/// The Galois elements needed for row rotations by each of `steps` in `group` and, if
/// `include_column_swap`, the column swap: sorted, without duplicates and without the identity element 1
/// (steps that are multiples of `N/2` need no key).
pub fn galois_elements(
    group: &GaloisGroup,
    steps: &[i64],
    include_column_swap: bool,
) -> Vec<GaloisElement> {
    let mut out: Vec<GaloisElement> = steps
        .iter()
        .map(|&s| group.element_of_step(s))
        .chain(include_column_swap.then(|| group.conjugation()))
        .filter(|g| !g.is_identity())
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn row_elements_are_sorted_distinct_and_skip_the_identity() {
        let group = GaloisGroup::new(1024, ROW_ROTATION_GENERATOR).unwrap();
        assert_eq!(group.element_of_step(1).value(), 3);
        assert_eq!(group.element_of_step(2).value(), 9);
        assert_eq!(group.conjugation().value(), 2047);
        let mut expected = vec![3, 9, group.element_of_step(-1).value(), 2047];
        expected.sort_unstable();
        let got: Vec<usize> = galois_elements(&group, &[1, -1, 512, 1, 2], true)
            .into_iter()
            .map(usize::from)
            .collect();
        assert_eq!(got, expected);
        assert!(galois_elements(&group, &[0, 512, -512], false).is_empty());
    }
}
