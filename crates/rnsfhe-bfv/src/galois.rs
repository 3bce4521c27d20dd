//! Galois elements of the batching matrix: row rotations and the column swap.
//!
//! The automorphisms of `R = Z[X]/(X^N + 1)` are `X -> X^g` for odd `g` modulo `2N`; they form the group
//! `Z_2N^* = <3> x <-1>`, with `3` of order `N/2` (for `N >= 4`) and `-1` outside `<3>`. When `t` is a prime
//! `= 1 mod 2N`, the [`crate::BatchEncoder`] lays the `N` slots out as a `2 x N/2` matrix whose row 0
//! holds the evaluations at `psi^(3^j)` and row 1 those at `psi^(-3^j)`, `j = 0 .. N/2 - 1` (`psi` a
//! primitive `2N`-th root of unity modulo `t`). Then (SEAL's convention):
//!
//! * `X -> X^(3^r mod 2N)` rotates both rows cyclically **left** by `r` ([`galois_element_for_row_step`];
//!   negative `r` rotate right, `r` is taken modulo `N/2`);
//! * `X -> X^(2N - 1)` swaps the two rows ([`galois_element_for_column_swap`]).
//!
//! The homomorphic versions ([`crate::Evaluator::rotate_rows`], [`crate::Evaluator::rotate_columns`],
//! [`crate::Evaluator::apply_galois`]) apply the automorphism to both ciphertext parts, which then decrypt
//! under `s(X^g)`, and key-switch back to `s` with a [`crate::GaloisKeys`] entry by the HPS CRT
//! key-switching of relinearization (HPS Sections 3.3 and 4.5; see [`crate::keys`]).
//!
//! The CKKS layer of `rnsfhe-core` ([`rnsfhe_core::keys::galois_element_for_step`]) uses the generator
//! 5 instead, the convention of the CKKS papers; BFV follows SEAL's batching layout with generator
//! [`ROW_ROTATION_GENERATOR`] = 3. Both generate the same group together with `-1`, so the row structure
//! is the same kind; only the order of the slots within a row differs.

/// The generator of row rotations: rotation by `r` is the Galois element `3^r mod 2N` (SEAL's convention).
pub const ROW_ROTATION_GENERATOR: u64 = 3;

/// The Galois element of a cyclic rotation of both rows of the batching matrix **left** by `step`:
/// `3^step mod 2N`. Negative steps rotate right; `step` is taken modulo `N/2` (the order of 3 modulo
/// `2N`), so a multiple of `N/2` gives the identity element 1.
pub fn galois_element_for_row_step(step: i64, n: usize) -> usize {
    rnsfhe_core::keys::galois_power(ROW_ROTATION_GENERATOR, step, n)
}

/// The Galois element `2N - 1` (`X -> X^-1`) that swaps the two rows of the batching matrix (the same
/// element as complex conjugation in CKKS, [`rnsfhe_core::keys::galois_conjugate`]).
pub fn galois_element_for_column_swap(n: usize) -> usize {
    rnsfhe_core::keys::galois_conjugate(n)
}

/// The Galois elements needed for row rotations by each of `steps` and, if `include_column_swap`, the
/// column swap: sorted, without duplicates and without the identity element 1 (steps that are multiples
/// of `N/2` need no key).
pub fn galois_elements(steps: &[i64], include_column_swap: bool, n: usize) -> Vec<usize> {
    let mut out: Vec<usize> = steps
        .iter()
        .map(|&s| galois_element_for_row_step(s, n))
        .chain(include_column_swap.then(|| galois_element_for_column_swap(n)))
        .filter(|&g| g != 1)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_elements_form_the_subgroup_of_three() {
        for log_n in 2..=12u32 {
            let n = 1usize << log_n;
            let two_n = 2 * n;
            let half = (n / 2) as i64;
            let mut seen = std::collections::BTreeSet::new();
            for r in 0..half {
                let g = galois_element_for_row_step(r, n);
                assert_eq!(g % 2, 1);
                assert!(seen.insert(g), "3 has order N/2 modulo 2N (N = {n})");
                // Negative steps invert: g(r) g(-r) = 1 mod 2N.
                let inv = galois_element_for_row_step(-r, n);
                assert_eq!(g * inv % two_n, 1);
                assert_eq!(galois_element_for_row_step(r + half, n), g);
            }
            if n >= 4 {
                assert!(
                    !seen.contains(&(two_n - 1)),
                    "-1 is not a row rotation (N = {n})"
                );
            }
        }
        assert_eq!(galois_element_for_row_step(1, 1024), 3);
        assert_eq!(galois_element_for_row_step(2, 1024), 9);
        assert_eq!(galois_element_for_column_swap(1024), 2047);
        assert_eq!(
            galois_elements(&[1, -1, 512, 1, 2], true, 1024),
            vec![3, 9, galois_element_for_row_step(-1, 1024), 2047]
                .into_iter()
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect::<Vec<_>>()
        );
    }
}
