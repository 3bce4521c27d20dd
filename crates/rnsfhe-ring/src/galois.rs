//! Galois automorphisms of `R = Z[X]/(X^N + 1)` and the rotation groups of the schemes.
//!
//! # The group
//!
//! The automorphisms of `R` are the maps `X -> X^k` for `k` odd modulo `2N`: the group `Z_2N^*` of order
//! `N` ([`GaloisElement`] is such a `k`, checked once when it is made). For a power of two `N >= 4` that
//! group is not cyclic: `Z_2N^* = <g> x <-1>` for every `g = 3` or `5 (mod 8)`, where `<g>` is cyclic of
//! order `N/2` and `-1 = 2N - 1` is not a power of `g` (the only element of order 2 in `<g>` is
//! `g^(N/4) = N +- 1`). A [`GaloisGroup`] is `N` with such a generator `g`: the rotation by `r` steps is
//! the element `g^r mod 2N` (`r` taken modulo `N/2`, negative `r` allowed), the step of an element is its
//! discrete logarithm to the base `g`, and `2N - 1` (`X -> X^-1`) is the conjugation.
//!
//! # The schemes' conventions
//!
//! * **CKKS slots**, generator 5. The decoding map of RNS-CKKS Section 2.1, a variant of the canonical
//!   embedding, reads slot `j < N/2` as `m(zeta^(5^j))`, `zeta` a primitive `2N`-th root of unity. Since
//!   `X -> X^k` maps `m(zeta^(5^j))` to `m(zeta^(k 5^j))`, the element `5^r` rotates the slots left by
//!   `r` (the automorphism `phi^k: X -> X^(5^k)` of the rotation in PEGASUS Section II.C and Appendix A),
//!   and `2N - 1` conjugates every slot (RNS-CKKS Section 2.1: `m(zeta^-j)` is the complex conjugate of
//!   `m(zeta^j)` for real coefficients). Rotation and conjugation keys are the key-switching keys of
//!   RNS-CKKS Section 4.
//! * **BFV batching rows**, generator 3. With a prime plaintext modulus `t = 1 mod 2N`, the `N` slots form
//!   a `2 x N/2` matrix whose row 0 holds the evaluations at `psi^(3^j)` and row 1 those at `psi^(-3^j)`
//!   (`psi` a primitive `2N`-th root of unity modulo `t`): `3^r` rotates both rows left by `r`, and
//!   `2N - 1` swaps the rows. This is the batching layout of SEAL; the HPS paper covers the arithmetic
//!   (its key switching, Sections 3.3 and 4.5, serves the Galois keys) but not the slot layout.
//!
//! Both generators give the same subgroup together with `-1`; only the order of the slots within a row
//! differs. The schemes own their generator constant and build their group once per context.

use crate::error::{Error, Result};

/// A Galois element: an odd `k` below `2N`, naming the automorphism `X -> X^k` of `Z[X]/(X^N + 1)`.
///
/// [`GaloisElement::new`] is the only constructor that takes a raw number and the only place that checks
/// it; a [`GaloisGroup`] makes elements that are valid by construction. The element remembers its ring
/// degree `N`, so it cannot be applied to a polynomial of another degree by mistake. Elements order by
/// their value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GaloisElement {
    value: usize,
    degree: usize,
}

impl GaloisElement {
    /// The element `value` of the ring of degree `n`.
    ///
    /// Errors: [`Error::InvalidGaloisElement`] (with the numbers) unless `value` is odd and below `2n`.
    pub fn new(value: usize, n: usize) -> Result<Self> {
        let two_n = n.saturating_mul(2);
        if value.is_multiple_of(2) || value >= two_n {
            return Err(Error::InvalidGaloisElement {
                element: value,
                n,
                two_n,
            });
        }
        Ok(Self { value, degree: n })
    }

    /// The exponent `k` of `X -> X^k`.
    #[inline]
    pub fn value(self) -> usize {
        self.value
    }

    /// The ring degree `N` the element belongs to.
    #[inline]
    pub fn degree(self) -> usize {
        self.degree
    }

    /// Whether this is the identity `X -> X` (needs no key).
    #[inline]
    pub fn is_identity(self) -> bool {
        self.value == 1
    }

    /// Checks that the element belongs to the ring of degree `n` (the one of the operand of `operation`).
    ///
    /// Errors: [`Error::GaloisDegreeMismatch`].
    pub fn check_degree(self, n: usize, operation: &'static str) -> Result<()> {
        if self.degree != n {
            return Err(Error::GaloisDegreeMismatch {
                operation,
                element: self.value,
                element_n: self.degree,
                n,
            });
        }
        Ok(())
    }

    /// The product `self * other mod 2N` of two elements of the same ring (the composition of the maps).
    fn mul(self, other: Self) -> Self {
        debug_assert_eq!(self.degree, other.degree);
        let two_n = 2 * self.degree as u128;
        Self {
            value: (self.value as u128 * other.value as u128 % two_n) as usize,
            degree: self.degree,
        }
    }

    /// `self^e mod 2N`, by squaring.
    fn pow(self, mut e: usize) -> Self {
        let mut acc = Self {
            value: 1,
            degree: self.degree,
        };
        let mut base = self;
        while e > 0 {
            if e & 1 == 1 {
                acc = acc.mul(base);
            }
            base = base.mul(base);
            e >>= 1;
        }
        acc
    }
}

impl std::fmt::Display for GaloisElement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.value)
    }
}

impl From<GaloisElement> for usize {
    fn from(element: GaloisElement) -> usize {
        element.value
    }
}

/// The rotations of a scheme: ring degree `N` and a generator `g` of a cyclic subgroup of order `N/2` of
/// `Z_2N^*` that does not contain `-1` (see the [module documentation](self) for the math and the
/// conventions of CKKS and BFV). Small and `Copy`; contexts build it once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GaloisGroup {
    generator: GaloisElement,
}

impl GaloisGroup {
    /// The group of ring degree `n` generated by `generator`.
    ///
    /// Errors: [`Error::InvalidGaloisGroup`] unless `n` is a power of two of at least 4 and `generator` is
    /// 3 or 5 modulo 8 (exactly the elements of order `N/2` whose powers avoid `-1`);
    /// [`Error::InvalidGaloisElement`] unless `generator` is odd and below `2n`.
    pub fn new(n: usize, generator: usize) -> Result<Self> {
        let refuse = |reason| {
            Err(Error::InvalidGaloisGroup {
                n,
                generator,
                reason,
            })
        };
        if !n.is_power_of_two() || n < 4 {
            return refuse("the ring degree N must be a power of two of at least 4");
        }
        let generator = GaloisElement::new(generator, n)?;
        if !matches!(generator.value % 8, 3 | 5) {
            return refuse(
                "the generator must be 3 or 5 modulo 8 to have order N/2 without generating -1 \
                 (5 for CKKS slots, 3 for BFV rows)",
            );
        }
        Ok(Self { generator })
    }

    /// The ring degree `N`.
    #[inline]
    pub fn degree(&self) -> usize {
        self.generator.degree
    }

    /// The generator `g`: the rotation by one step.
    #[inline]
    pub fn generator(&self) -> GaloisElement {
        self.generator
    }

    /// The order `N/2` of the generator: the number of distinct rotations (steps are taken modulo it).
    #[inline]
    pub fn order(&self) -> usize {
        self.degree() / 2
    }

    /// The element `value` of this group's ring ([`GaloisElement::new`] with this degree).
    ///
    /// Errors: [`Error::InvalidGaloisElement`] unless `value` is odd and below `2N`.
    pub fn element(&self, value: usize) -> Result<GaloisElement> {
        GaloisElement::new(value, self.degree())
    }

    /// The element `g^step mod 2N` of the rotation by `step` (left for positive `step`, right for negative);
    /// `step` is taken modulo `N/2`, so a multiple of `N/2` gives the identity.
    pub fn element_of_step(&self, step: i64) -> GaloisElement {
        let e = step.rem_euclid(self.order() as i64) as usize;
        self.generator.pow(e)
    }

    /// The elements of the rotations by each of `steps`, in order.
    pub fn elements_of_steps(&self, steps: &[i64]) -> Vec<GaloisElement> {
        steps.iter().map(|&s| self.element_of_step(s)).collect()
    }

    /// The step of a rotation element, the inverse of [`GaloisGroup::element_of_step`]: the `r` with
    /// `g^r = element`, given in `(-N/4, N/4]` (a step and that step minus `N/2` are the same rotation; the
    /// one of smaller magnitude is returned, `0` for the identity). `None` when `element` is no power of
    /// `g` (the conjugation and its products with rotations) or belongs to another ring degree.
    ///
    /// The discrete logarithm in the cyclic group `<g>` of order `2^s = N/2` is found bit by bit
    /// (Pohlig-Hellman): `O(log^2 N)` multiplications.
    pub fn step_of_element(&self, element: GaloisElement) -> Option<i64> {
        if element.degree != self.degree() {
            return None;
        }
        let order = self.order();
        let bits = order.trailing_zeros() as usize;
        let g = self.generator;
        let g_inv = g.pow(order - 1);
        // The only element of order 2 in <g>.
        let half_turn = g.pow(order / 2);
        let mut x = 0usize;
        for i in 0..bits {
            // element g^-x lies in <g^(2^i)> (if element is in <g>); its power 2^(bits-1-i) is 1 or
            // half_turn as bit i of the logarithm is 0 or 1.
            let rest = element.mul(g_inv.pow(x)).pow(1 << (bits - 1 - i));
            if rest == half_turn {
                x |= 1 << i;
            } else if !rest.is_identity() {
                return None;
            }
        }
        if g.pow(x) != element {
            return None;
        }
        let (x, order) = (x as i64, order as i64);
        Some(if 2 * x > order { x - order } else { x })
    }

    /// The conjugation `2N - 1` (`X -> X^-1`): complex conjugation of the CKKS slots, the swap of the two
    /// rows of the BFV batching matrix.
    pub fn conjugation(&self) -> GaloisElement {
        GaloisElement {
            value: 2 * self.degree() - 1,
            degree: self.degree(),
        }
    }

    /// The rotation elements in the order of their steps: `g^0 = 1, g^1, ..., g^(N/2 - 1)` (slot `j` of
    /// the CKKS encoding and of a BFV row sits at the root `zeta^(g^j)`).
    pub fn elements(&self) -> impl Iterator<Item = GaloisElement> + '_ {
        let g = self.generator;
        std::iter::successors(Some(g.pow(0)), move |&e| Some(e.mul(g))).take(self.order())
    }

    /// The steps `1, 2, 4, ...` below `count`: the rotations of a rotate-and-add sum over `count` slots
    /// (RNS-CKKS Section 5.2), whose keys a key generator makes for it.
    pub fn power_of_two_steps(count: usize) -> impl Iterator<Item = i64> {
        std::iter::successors(Some(1usize), |&s| s.checked_mul(2))
            .take_while(move |&s| s < count)
            .map(|s| s as i64)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// `g^e mod 2N` by repeated multiplication.
    fn naive_power(g: usize, e: usize, n: usize) -> usize {
        (0..e).fold(1, |acc, _| acc * g % (2 * n))
    }

    #[test]
    fn elements_and_steps_match_brute_force() {
        for log_n in 2..=9u32 {
            let n = 1usize << log_n;
            let half = n / 2;
            for generator in [3usize, 5, 2 * n - 3, 2 * n - 5, 11, 13] {
                if generator >= 2 * n {
                    continue;
                }
                let group = GaloisGroup::new(n, generator).unwrap();
                assert_eq!((group.degree(), group.order()), (n, half));
                assert_eq!(group.generator().value(), generator);
                let powers: Vec<usize> = (0..half).map(|e| naive_power(generator, e, n)).collect();
                let listed: Vec<usize> = group.elements().map(GaloisElement::value).collect();
                assert_eq!(listed, powers, "N = {n}, g = {generator}");
                let distinct: std::collections::BTreeSet<_> = powers.iter().collect();
                assert_eq!(
                    distinct.len(),
                    half,
                    "g has order N/2 (N = {n}, g = {generator})"
                );
                assert!(!distinct.contains(&(2 * n - 1)), "-1 is no power of g");
                for step in -(2 * half as i64)..=2 * half as i64 {
                    let e = group.element_of_step(step);
                    let r = step.rem_euclid(half as i64) as usize;
                    assert_eq!(
                        e.value(),
                        powers[r],
                        "N = {n}, g = {generator}, step {step}"
                    );
                    assert_eq!(e.degree(), n);
                    // The inverse map gives the representative of smallest magnitude, ties positive.
                    let back = group.step_of_element(e).unwrap();
                    assert!(
                        -(half as i64) < 2 * back && 2 * back <= half as i64,
                        "{back}"
                    );
                    assert_eq!(back.rem_euclid(half as i64) as usize, r);
                }
                // Every odd residue: the steps of the powers, None for the rest (the coset of -1).
                for value in (1..2 * n).step_by(2) {
                    let e = group.element(value).unwrap();
                    let expected = powers.iter().position(|&p| p == value);
                    let got = group.step_of_element(e);
                    assert_eq!(
                        got.map(|s| s.rem_euclid(half as i64) as usize),
                        expected,
                        "N = {n}, g = {generator}, element {value}"
                    );
                }
                let conj = group.conjugation();
                assert_eq!(conj.value(), 2 * n - 1);
                assert_eq!(conj.mul(conj).value(), 1, "conjugation is an involution");
                assert_eq!(group.step_of_element(conj), None);
            }
        }
    }

    #[test]
    fn scheme_generators_and_known_values() {
        let ckks = GaloisGroup::new(1024, 5).unwrap();
        assert_eq!(ckks.element_of_step(0).value(), 1);
        assert_eq!(ckks.element_of_step(1).value(), 5);
        assert_eq!(ckks.element_of_step(2).value(), 25);
        assert_eq!(ckks.element_of_step(-1).value() * 5 % 2048, 1);
        assert_eq!(ckks.element_of_step(512).value(), 1, "5 has order N/2");
        let steps: Vec<usize> = ckks
            .elements_of_steps(&[1, -1, 3])
            .into_iter()
            .map(usize::from)
            .collect();
        assert_eq!(steps[2], 125);
        assert_eq!(ckks.step_of_element(ckks.element(125).unwrap()), Some(3));
        assert_eq!(ckks.step_of_element(ckks.element_of_step(-7)), Some(-7));
        assert_eq!(ckks.step_of_element(ckks.element_of_step(256)), Some(256));
        let bfv = GaloisGroup::new(1024, 3).unwrap();
        assert_eq!(bfv.element_of_step(2).value(), 9);
        assert_eq!(bfv.conjugation().value(), 2047);
        // An element of another degree has no step here.
        let other = GaloisGroup::new(2048, 5).unwrap();
        assert_eq!(ckks.step_of_element(other.element_of_step(1)), None);
        assert_eq!(
            GaloisGroup::power_of_two_steps(16).collect::<Vec<_>>(),
            [1, 2, 4, 8]
        );
        assert_eq!(GaloisGroup::power_of_two_steps(1).count(), 0);
    }

    #[test]
    fn invalid_elements_and_groups_are_refused() {
        for n in [4usize, 16, 1024] {
            for value in [0, 2, 4, 2 * n, 2 * n + 1, usize::MAX] {
                assert_eq!(
                    GaloisElement::new(value, n),
                    Err(Error::InvalidGaloisElement {
                        element: value,
                        n,
                        two_n: 2 * n
                    })
                );
            }
            for value in (1..2 * n).step_by(2) {
                let e = GaloisElement::new(value, n).unwrap();
                assert_eq!((e.value(), e.degree()), (value, n));
                assert!(e.check_degree(n, "test").is_ok());
                assert!(matches!(
                    e.check_degree(2 * n, "test"),
                    Err(Error::GaloisDegreeMismatch { .. })
                ));
            }
            // 1 and 2N - 1 have order at most 2; 7 and 9 are 7 and 1 modulo 8.
            for g in [1, 7, 9, 2 * n - 1] {
                if g < 2 * n {
                    assert!(
                        matches!(
                            GaloisGroup::new(n, g),
                            Err(Error::InvalidGaloisGroup { .. })
                        ),
                        "N = {n}, g = {g}"
                    );
                }
            }
            assert!(matches!(
                GaloisGroup::new(n, 2),
                Err(Error::InvalidGaloisElement { .. })
            ));
        }
        for n in [0usize, 1, 2, 3, 12] {
            assert!(matches!(
                GaloisGroup::new(n, 5),
                Err(Error::InvalidGaloisGroup { .. })
            ));
        }
        let message = GaloisElement::new(4, 16).unwrap_err().to_string();
        assert!(message.contains('4') && message.contains("32"), "{message}");
    }
}
