//! RNS bases: an ordered list of NTT-friendly primes sharing one ring degree, with their NTT plans and CRT
//! constants. A level is a prefix of the basis ([`RnsBasis::prefix`]); the extended basis `Q * P` of key
//! switching is [`RnsBasis::concat`] of two bases.

use std::sync::{Arc, OnceLock};

use rnsfhe_math::{Modulus, NttPlan, ShoupConstant};

use crate::error::{Error, Result};

/// An RNS basis `{q_0, ..., q_{l-1}}` of pairwise distinct NTT primes for ring degree `N`.
///
/// Built once and shared by `Arc`; NTT plans are shared between a basis, its prefixes and concatenations.
pub struct RnsBasis {
    n: usize,
    moduli: Vec<Modulus>,
    plans: Vec<Arc<NttPlan>>,
    /// `[(Q / q_i)^-1]_{q_i}` with Shoup companions: the first step of every CRT-based conversion.
    qhat_inv: Vec<ShoupConstant>,
    /// Lazily built prefixes with `1..len` limbs (index `l - 1`).
    prefixes: Vec<OnceLock<Arc<RnsBasis>>>,
}

impl std::fmt::Debug for RnsBasis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RnsBasis")
            .field("n", &self.n)
            .field("moduli", &self.values())
            .finish()
    }
}

impl PartialEq for RnsBasis {
    fn eq(&self, other: &Self) -> bool {
        self.n == other.n && self.moduli == other.moduli
    }
}

impl RnsBasis {
    /// Builds a basis of degree `n` from explicit primes, constructing one NTT plan per prime.
    ///
    /// Errors: empty list, repeated modulus, `n` unsupported, or a modulus that is not an NTT prime for `n`.
    pub fn new(n: usize, moduli: &[u64]) -> Result<Arc<Self>> {
        let plans = moduli
            .iter()
            .map(|&q| NttPlan::new(n, q).map(Arc::new))
            .collect::<rnsfhe_math::Result<Vec<_>>>()?;
        Self::from_plans(n, plans)
    }

    /// Builds a basis from existing plans (shared, not rebuilt).
    pub fn from_plans(n: usize, plans: Vec<Arc<NttPlan>>) -> Result<Arc<Self>> {
        if plans.is_empty() {
            return Err(Error::EmptyBasis);
        }
        rnsfhe_math::ntt::check_degree(n)?;
        for p in &plans {
            if p.degree() != n {
                return Err(Error::LengthMismatch {
                    what: "NTT plan degree",
                    expected: n,
                    got: p.degree(),
                });
            }
        }
        let moduli: Vec<Modulus> = plans.iter().map(|p| *p.modulus()).collect();
        for (i, m) in moduli.iter().enumerate() {
            if moduli[..i].iter().any(|o| o.value() == m.value()) {
                return Err(Error::RepeatedModulus {
                    modulus: m.value(),
                    context: "an RNS basis",
                });
            }
        }
        let qhat_inv = moduli
            .iter()
            .enumerate()
            .map(|(i, qi)| {
                let qhat = moduli
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != i)
                    .fold(1u64, |acc, (_, qj)| qi.mul(acc, qi.reduce(qj.value())));
                Ok(qi.shoup(qi.inv(qhat)?))
            })
            .collect::<Result<Vec<_>>>()?;
        let prefixes = (1..moduli.len()).map(|_| OnceLock::new()).collect();
        Ok(Arc::new(Self {
            n,
            moduli,
            plans,
            qhat_inv,
            prefixes,
        }))
    }

    /// The concatenation `self ∪ other` (for example `Q * P`), sharing NTT plans; the moduli must be distinct.
    pub fn concat(&self, other: &RnsBasis) -> Result<Arc<Self>> {
        if self.n != other.n {
            return Err(Error::BasisMismatch {
                operation: "basis concatenation",
                left_limbs: self.len(),
                left_n: self.n,
                right_limbs: other.len(),
                right_n: other.n,
            });
        }
        Self::from_plans(
            self.n,
            self.plans
                .iter()
                .chain(other.plans.iter())
                .cloned()
                .collect(),
        )
    }

    /// The sub-basis of limbs `range` (for example the special primes of an extended basis).
    pub fn slice(&self, range: std::ops::Range<usize>) -> Result<Arc<Self>> {
        if range.start >= range.end || range.end > self.len() {
            return Err(Error::InvalidLimbCount {
                requested: range.len(),
                available: self.len(),
            });
        }
        Self::from_plans(self.n, self.plans[range].to_vec())
    }

    /// The prefix with the first `limbs` moduli (a lower level). Built once and cached.
    pub fn prefix(self: &Arc<Self>, limbs: usize) -> Result<Arc<Self>> {
        if limbs == 0 || limbs > self.len() {
            return Err(Error::InvalidLimbCount {
                requested: limbs,
                available: self.len(),
            });
        }
        if limbs == self.len() {
            return Ok(Arc::clone(self));
        }
        if let Some(p) = self.prefixes[limbs - 1].get() {
            return Ok(Arc::clone(p));
        }
        let built = Self::from_plans(self.n, self.plans[..limbs].to_vec())?;
        Ok(Arc::clone(self.prefixes[limbs - 1].get_or_init(|| built)))
    }

    /// Whether `other` is a prefix of `self` (same degree, same leading moduli).
    pub fn has_prefix(&self, other: &RnsBasis) -> bool {
        self.n == other.n
            && other.len() <= self.len()
            && self.moduli[..other.len()] == other.moduli[..]
    }

    /// Ring degree `N`.
    #[inline]
    pub fn degree(&self) -> usize {
        self.n
    }

    /// Number of moduli (limbs).
    #[inline]
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.moduli.len()
    }

    /// The moduli.
    #[inline]
    pub fn moduli(&self) -> &[Modulus] {
        &self.moduli
    }

    /// The moduli as plain integers.
    pub fn values(&self) -> Vec<u64> {
        self.moduli.iter().map(|m| m.value()).collect()
    }

    /// The NTT plans, one per modulus.
    #[inline]
    pub fn plans(&self) -> &[Arc<NttPlan>] {
        &self.plans
    }

    /// `[(Q / q_i)^-1]_{q_i}` for each limb, with Shoup companions.
    #[inline]
    pub fn qhat_inv(&self) -> &[ShoupConstant] {
        &self.qhat_inv
    }

    /// `log2(Q)`, the bit size of the product of the moduli.
    pub fn log2_product(&self) -> f64 {
        self.moduli.iter().map(|m| (m.value() as f64).log2()).sum()
    }

    /// `Q mod p` for a word modulus `p` (for example a target modulus of a basis conversion).
    pub fn product_mod(&self, p: &Modulus) -> u64 {
        self.moduli
            .iter()
            .fold(1 % p.value(), |acc, q| p.mul(acc, p.reduce(q.value())))
    }

    /// `(Q / q_i) mod p` for a word modulus `p`.
    pub fn qhat_mod(&self, i: usize, p: &Modulus) -> u64 {
        self.moduli
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != i)
            .fold(1 % p.value(), |acc, (_, q)| p.mul(acc, p.reduce(q.value())))
    }

    /// Checks that `self` and `other` are the same basis, naming `operation` in the error.
    pub fn check_same(&self, other: &RnsBasis, operation: &'static str) -> Result<()> {
        if std::ptr::eq(self, other) || self == other {
            Ok(())
        } else {
            Err(Error::BasisMismatch {
                operation,
                left_limbs: self.len(),
                left_n: self.n,
                right_limbs: other.len(),
                right_n: other.n,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rnsfhe_math::primes::ntt_primes_of_bits;

    #[test]
    fn prefixes_concat_and_errors() {
        let qs = ntt_primes_of_bits(50, 2048, 5, &[]).unwrap();
        let b = RnsBasis::new(1024, &qs).unwrap();
        let p3 = b.prefix(3).unwrap();
        assert_eq!(p3.values(), qs[..3].to_vec());
        assert!(
            Arc::ptr_eq(&p3, &b.prefix(3).unwrap()),
            "prefixes are cached"
        );
        assert!(Arc::ptr_eq(&b, &b.prefix(5).unwrap()));
        assert!(b.has_prefix(&p3) && !p3.has_prefix(&b));
        assert!(matches!(
            b.prefix(0),
            Err(Error::InvalidLimbCount {
                requested: 0,
                available: 5
            })
        ));
        assert!(matches!(b.prefix(6), Err(Error::InvalidLimbCount { .. })));
        let special = RnsBasis::new(1024, &ntt_primes_of_bits(60, 2048, 2, &[]).unwrap()).unwrap();
        let qp = b.concat(&special).unwrap();
        assert_eq!(qp.len(), 7);
        assert!(
            Arc::ptr_eq(&qp.plans()[6], &special.plans()[1]),
            "plans are shared"
        );
        assert!(matches!(b.concat(&b), Err(Error::RepeatedModulus { .. })));
        assert!(matches!(RnsBasis::new(1024, &[]), Err(Error::EmptyBasis)));
        assert!(matches!(RnsBasis::new(1000, &qs), Err(Error::Math(_))));
        assert!(matches!(
            RnsBasis::new(1024, &[qs[0], qs[0]]),
            Err(Error::RepeatedModulus { .. })
        ));
        assert!(b.check_same(&p3, "test").is_err());
        // CRT constants: sum_i [qhat_i^-1]_{q_i} qhat_i = 1 mod Q, checked modulo each q_j.
        for (j, qj) in b.moduli().iter().enumerate() {
            let s = (0..5).fold(0, |acc, i| {
                qj.add(
                    acc,
                    qj.mul(qj.reduce(b.qhat_inv()[i].value), b.qhat_mod(i, qj)),
                )
            });
            assert_eq!(s, 1, "limb {j}");
        }
    }
}
