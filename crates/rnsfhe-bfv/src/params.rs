//! BFV parameters ([`BfvParams`], a plain literal struct) and the checked, immutable [`BfvContext`] built
//! from them, holding every table of HPS Section 4.2.
//!
//! # Moduli
//!
//! * `Q = q_1 ... q_k`: the ciphertext modulus (HPS Section 4.1), NTT primes below `2^62`.
//! * `P = p_1 ... p_k'`: the auxiliary basis of HPS multiplication (Section 4.2). The tensor product of two
//!   ciphertexts with coefficients in `[-Q/2, Q/2)` has coefficients below `N Q^2 / 2` in magnitude; they
//!   must lie in `[-QP/2t, QP/2t)` for complex scaling (Section 2.4), i.e. `P > t N Q`. Like HPS
//!   (Section 6.1) we require `P >= 2 t N Q`; for 55-bit primes and `t` up to 32 bits `k' = k + 1`
//!   suffices (Section 4.2).
//!
//! # Relinearization
//!
//! HPS relinearize by CRT decomposition without special primes (Sections 3.3 and 4.5): `c_2` is split
//! into its residues `[c_2]_{q_i}`, each optionally split again into signed base-`2^w` digits (Section
//! 3.3, after Bajard et al. Appendix B.1; HPS use `w = 30` bits for depths up to 10). The relinearization
//! key holds one RLWE sample of `s^2 (Q/q_i)[(Q/q_i)^-1]_{q_i} 2^(w j)` per residue `i` and digit `j`.
//! [`BfvParams::relin_base_log`] is `None` for the plain CRT decomposition (one "digit" per residue).
//!
//! Galois keys (row rotations, the column swap) are key-switching keys of the same kind, from `s(X^g)` to
//! `s`. Their decomposition is [`BfvParams::galois_base_log`]: by default (`None`) the relinearization
//! decomposition, or base-`2^w` digits of their own. The choice matters for noise, not for
//! correctness: key switching adds `sum_{i,j} d_{i,j} e_{i,j}` with digits `d_{i,j}` up to `w / 2` (up to
//! `q_i / 2` for plain CRT), which relinearization adds to the already grown noise of a tensor product but
//! a rotation may add to the small noise of a fresh ciphertext (see [`crate::generator`]).
//!
//! With [`KeySwitchTechnique::Hybrid`] both keys are instead those of `rnsfhe-core`'s hybrid gadget
//! (Han-Ki Section 2.4, the keys of CKKS): RLWE samples over `Q ∪ P_ks` for special primes `P_ks`, one row
//! per group of `k / dnum` residues. Key switching raises each group to `Q ∪ P_ks` (ModUp), multiplies and
//! accumulates, and divides by `P_ks` (ModDown); its noise is about `dnum delta B_e Q_j / (2 P_ks)` plus
//! the rounding of the division, far below the CRT term `delta w k B_e` when `P_ks >= Q_j`. The keys are
//! `dnum` rows instead of `k` (a quarter to a tenth of the bytes at depths 20-30), and the work of a key
//! switch is `O(dnum (k + k'))` transforms instead of `O(k^2)` digit products. The special primes count
//! in the security check: the keys are RLWE samples modulo `Q P_ks`.
//!
//! # Basis conversion
//!
//! The two basis extensions of multiplication (`Q -> P` before the tensor product, `P -> Q` after complex
//! scaling) run in the [`ConversionMode`] of [`BfvParams::conversion`]: `ExactFloat` (HPS Section 2.2, the
//! default) or `ExactInteger` (Qu-Xu Algorithms 1 and 4, integer operations only). Both give the centered
//! representative, which HPS multiplication needs; `Fast` is refused. `ExactInteger` needs each source
//! basis (`Q` and `P`) within a factor `1 ± 2^-eta` of one power of two with `eta > log2((r + l) / r)`
//! (Qu-Xu Theorem 1, `l` moduli, `r` = [`DEFAULT_QU_XU_FAILURE_TARGET`]);
//! [`BfvParams::with_bit_sizes_and_conversion`] chooses such primes by Qu-Xu Algorithms 2 and 3.
//!
//! # Security
//!
//! Relinearization and Galois keys and ciphertexts are RLWE samples modulo `Q` (`P` is an internal
//! computation basis); an extended public key (over `Q` and the first auxiliary prime `p_0`, whose
//! encryptions are divided by `p_0`) is one modulo `Q p_0`. The largest modulus of a key the context
//! makes ([`BfvParams::log2_key_modulus`]) is checked against the Homomorphic Encryption Standard table
//! for a uniform ternary secret: contexts make extended public keys only where `Q p_0` fits the bound
//! ([`BfvParams::extended_public_key`]), and keys over `Q` elsewhere.
//! Insecure parameters need the explicit opt-in [`BfvParams::insecure_for_testing`] and produce a warning
//! ([`BfvContext::security_warning`]).

use std::sync::Arc;

use rnsfhe_core::context::fingerprint_words;
use rnsfhe_core::security::{estimate, SecurityEstimate};
use rnsfhe_core::{PublicKey, RlweContext, RlweParams, SecretDistribution};
use rnsfhe_math::primes::{
    is_prime, ntt_primes_of_bits, qu_xu_interval, qu_xu_max_eta, qu_xu_primes,
};
use rnsfhe_math::wire::Fingerprints;
use rnsfhe_math::{Modulus, NttPlan};
use rnsfhe_ring::conversion::{
    theorem1_eta_lower_bound, QuXuCloseness, DEFAULT_QU_XU_FAILURE_TARGET,
};
use rnsfhe_ring::{
    BasisConverter, ComplexScaler, ConversionMode, CrtComposer, GaloisGroup, RnsBasis,
    RnsSignedDigits, SimpleScaler,
};

use crate::error::{BfvError, BfvResult};
use crate::galois::ROW_ROTATION_GENERATOR;

/// The error standard deviation of HPS Section 6.1 (after the HE Standard): `8 / sqrt(2 pi)`, about 3.19.
pub const HPS_SIGMA: f64 = 3.191_538_243_211_461;

/// Largest supported plaintext modulus: `2^60`, the limit of the ring layer's HPS scalers.
pub const MAX_PLAINTEXT_MODULUS: u64 = rnsfhe_ring::scaling::MAX_PLAINTEXT_MODULUS;

/// The largest `log2(Q)` the HE Standard table allows at 128-bit security for ring degree `n` (uniform
/// ternary secret; the shared table of [`rnsfhe_core::security`]); `None` outside `N = 2^10 .. 2^17`.
pub fn max_log_q_128(n: usize) -> Option<u32> {
    rnsfhe_core::security::max_log_qp(n, rnsfhe_core::SecurityLevel::Bits128)
}

/// How a BFV context switches keys (relinearization and Galois automorphisms): the explicit choice of
/// technique, as OpenFHE's `KeySwitchTechnique`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum KeySwitchTechnique {
    /// HPS key switching by CRT decomposition (Sections 3.3 and 4.5): keys over `Q` alone, one row per
    /// residue and digit ([`BfvParams::relin_base_log`], [`BfvParams::galois_base_log`]); no special
    /// primes.
    #[default]
    Crt,
    /// Hybrid key switching (Han-Ki Section 2.4; the gadget of `rnsfhe-core` that CKKS uses): keys over
    /// `Q ∪ P_ks`, one row per digit group of `Q`.
    Hybrid {
        /// The special primes `P_ks`: distinct NTT primes, coprime to `Q` (they may repeat auxiliary
        /// primes of [`BfvParams::p_moduli`]). Key switching adds little noise when `P_ks` is at least
        /// the largest digit group `Q_j`. They count in the security check.
        special_moduli: Vec<u64>,
        /// The number of digit groups, `1 <= dnum <= k`.
        dnum: usize,
    },
}

/// BFV parameters in the HPS form, declared as a plain literal struct and checked by [`BfvContext::new`].
#[derive(Clone, Debug, PartialEq)]
pub struct BfvParams {
    /// `log2(N)`: the ring is `Z[X]/(X^N + 1)`.
    pub log_n: u32,
    /// The plaintext modulus `t`, `2 <= t <= 2^60` (HPS Section 4.1). Batching needs a prime
    /// `t = 1 mod 2N`; the coefficient encoder works with any `t`.
    pub plaintext_modulus: u64,
    /// The ciphertext moduli `q_1, ..., q_k`: distinct NTT primes (`q_i = 1 mod 2N`), below `2^62`.
    pub q_moduli: Vec<u64>,
    /// The auxiliary moduli `p_1, ..., p_k'` of HPS multiplication (Section 4.2): distinct NTT primes,
    /// coprime to `Q`, with `P >= 2 t N Q`.
    pub p_moduli: Vec<u64>,
    /// Base `w = 2^relin_base_log` of the digit decomposition of each residue in relinearization (HPS
    /// Section 3.3; the paper uses 30 for depths up to 10); `None` for the plain CRT decomposition.
    pub relin_base_log: Option<u32>,
    /// Base `w = 2^galois_base_log` of the digit decomposition of each residue in the key switching of
    /// Galois automorphisms (row rotations, the column swap); `None` for the relinearization decomposition
    /// ([`BfvParams::relin_base_log`]). [`BfvParams::generate`] sets it to 30 where the plain CRT
    /// decomposition of relinearization would make a rotation of a fresh ciphertext cost too much noise.
    pub galois_base_log: Option<u32>,
    /// Standard deviation of the discrete Gaussian error, tail cut at 6 sigma (HPS: `8 / sqrt(2 pi)`,
    /// [`HPS_SIGMA`]).
    pub sigma: f64,
    /// Explicit opt-in for parameters the HE Standard table does not establish as 128-bit secure (tests,
    /// paper reproduction). [`BfvContext::security_warning`] then returns a warning.
    pub insecure_for_testing: bool,
    /// The basis conversion of the two basis extensions of multiplication (`Q -> P` and `P -> Q`, HPS
    /// Section 2.2): [`ConversionMode::ExactFloat`] (the default of every constructor) or
    /// [`ConversionMode::ExactInteger`] (Qu-Xu), which needs `Q` and `P` each close to one power of two
    /// (see [`BfvParams::with_bit_sizes_and_conversion`]). [`ConversionMode::Fast`] is refused: HPS
    /// multiplication needs the exact centered lift. Does not change keys or ciphertexts (not part of the
    /// fingerprint). Hybrid key switching's ModUp and ModDown run in the same mode.
    pub conversion: ConversionMode,
    /// How keys are switched: HPS CRT decomposition (the default of every constructor) or hybrid key
    /// switching with special primes ([`BfvParams::with_hybrid_key_switching`]).
    pub key_switching: KeySwitchTechnique,
}

impl BfvParams {
    /// Ring degree `N`.
    pub fn n(&self) -> usize {
        1usize << self.log_n.min(usize::BITS - 1)
    }

    /// Parameters with `q_count` ciphertext primes of `q_bits` bits and auxiliary primes chosen so that
    /// `P >= 2 t N Q` (HPS Sections 4.2 and 6.1): `k'` primes of `min(q_bits + 1, 61)` bits, the fewest that
    /// satisfy the bound. `sigma = 8 / sqrt(2 pi)`, plain CRT relinearization, no insecure opt-in.
    ///
    /// Errors: [`BfvError::InvalidParams`] for `q_count = 0` or `q_bits` outside `[20, 61]`; prime search
    /// errors if not enough NTT primes exist.
    pub fn with_bit_sizes(log_n: u32, t: u64, q_bits: u32, q_count: usize) -> BfvResult<Self> {
        Self::with_bit_sizes_and_conversion(log_n, t, q_bits, q_count, ConversionMode::ExactFloat)
    }

    /// Like [`BfvParams::with_bit_sizes`], with the basis-conversion mode of multiplication set to
    /// `conversion`. For [`ConversionMode::ExactFloat`] the moduli are those of
    /// [`BfvParams::with_bit_sizes`]. For [`ConversionMode::ExactInteger`] both conversion sources are
    /// chosen the Qu-Xu way: the `q_count` ciphertext primes near `2^q_bits` and the auxiliary primes near
    /// `2^min(q_bits + 1, 61)`, each set by Algorithm 2 (the largest `eta` with enough primes
    /// `= 1 mod 2N` in `[2^m / (1 + 2^-eta), 2^m / (1 - 2^-eta)]`) and Algorithm 3 (the primes, walking
    /// down from the upper end), so that Qu-Xu Theorem 1's precondition `eta > log2((r + l) / r)` holds
    /// whenever enough primes exist. Qu-Xu primes may lie just above `2^q_bits` (`q_bits + 1` bits).
    ///
    /// Errors: as [`BfvParams::with_bit_sizes`]; [`BfvError::InvalidParams`] for
    /// [`ConversionMode::Fast`]; for `ExactInteger`, [`BfvError::InvalidParams`] naming `eta`, `l` and the
    /// bound when the best `eta` of Algorithm 2 does not meet Theorem 1 (ring degree too large for the
    /// prime size).
    pub fn with_bit_sizes_and_conversion(
        log_n: u32,
        t: u64,
        q_bits: u32,
        q_count: usize,
        conversion: ConversionMode,
    ) -> BfvResult<Self> {
        check_conversion_mode(conversion)?;
        if q_count == 0 || !(20..=61).contains(&q_bits) {
            return Err(BfvError::InvalidParams {
                what: "q primes",
                reason: format!(
                    "{q_count} prime(s) of {q_bits} bits: need at least one prime of 20 to 61 bits"
                ),
            });
        }
        if !(4..=17).contains(&log_n) {
            return Err(BfvError::InvalidParams {
                what: "log_n",
                reason: format!("log_n = {log_n} must be in [4, 17]"),
            });
        }
        let two_n = 2u64 << log_n;
        let p_bits = (q_bits + 1).min(61);
        let (q_moduli, p_moduli) = if conversion == ConversionMode::ExactInteger {
            // Qu-Xu primes near 2^m are above 2^(m-1) (eta >= 1), so the count of auxiliary primes uses
            // the same per-prime lower bound 2^(p_bits - 1) as below; Q's size is only known after the
            // search, and a larger Q needs at most as many more primes, hence the loop.
            let q_moduli = qu_xu_basis("q_moduli", q_bits, two_n, q_count, &[])?;
            let needed = required_log_p(log2_product(&q_moduli), t, log_n);
            let mut k_p = (needed / (p_bits - 1) as f64).floor() as usize + 1;
            let p_moduli = loop {
                let p = qu_xu_basis("p_moduli", p_bits, two_n, k_p, &q_moduli)?;
                if log2_product(&p) >= needed {
                    break p;
                }
                k_p += 1;
            };
            (q_moduli, p_moduli)
        } else {
            let q_moduli = ntt_primes_of_bits(q_bits, two_n, q_count, &[])?;
            let needed = required_log_p(log2_product(&q_moduli), t, log_n);
            // Each p_j >= 2^(p_bits - 1).
            let k_p = (needed / (p_bits - 1) as f64).floor() as usize + 1;
            let p_moduli = ntt_primes_of_bits(p_bits, two_n, k_p, &q_moduli)?;
            (q_moduli, p_moduli)
        };
        Ok(Self {
            log_n,
            plaintext_modulus: t,
            q_moduli,
            p_moduli,
            relin_base_log: None,
            galois_base_log: None,
            sigma: HPS_SIGMA,
            insecure_for_testing: false,
            conversion,
            key_switching: KeySwitchTechnique::Crt,
        })
    }
}

impl BfvParams {
    /// These parameters with hybrid key switching ([`KeySwitchTechnique::Hybrid`]) in the room the HE
    /// Standard bound leaves above `Q`: special primes of the widest `q_i`'s bit size (the largest NTT
    /// primes of that size outside `Q` and `P`), as many as the primes of a digit group, so that `P_ks` is
    /// within a factor `2^(k / dnum)` of every digit group `Q_j`, and the fewest digit groups `dnum` whose
    /// special primes fit the room (fewer groups: fewer key rows and products). The key-switching noise,
    /// about `dnum delta B_e Q_j / (2 P_ks)` plus the rounding of ModDown, then stays far below the CRT
    /// term `delta w k B_e` that [`BfvParams::generate`] sized `Q` for, so generated parameters stay
    /// correct. At `t = 65537`: depth 20 (`N = 2^15`, 14 primes of 55 bits, 111 bits of room) takes 2
    /// special primes and `dnum = 7`; depth 30 (`N = 2^16`, 20 primes, 647 bits) 10 and `dnum = 2`. The
    /// relinearization and Galois digits of CRT key switching are dropped.
    ///
    /// Errors: [`BfvError::InvalidParams`] naming the room and what one special prime needs when not even
    /// one fits (`log2(Q)` within a prime of the bound, e.g. [`BfvParams::generate`] at depths up to 10:
    /// keep CRT key switching there), or when `N` is outside the HE Standard table; prime search errors.
    pub fn with_hybrid_key_switching(self) -> BfvResult<Self> {
        match self.hybrid_in_room()? {
            Some((special_moduli, dnum)) => Ok(self.hybrid(special_moduli, dnum)),
            None => {
                let bound = max_log_q_128(self.n()).unwrap_or(0);
                Err(invalid(
                    "key_switching",
                    format!(
                        "hybrid key switching needs at least one special prime as wide as the widest \
                         q_i above log2(Q) = {:.1}, but the 128-bit HE Standard bound at N = {} is \
                         {bound}: {:.1} bits of room; keep CRT key switching (KeySwitchTechnique::Crt) \
                         or use a larger N",
                        self.log2_q(),
                        self.n(),
                        bound as f64 - self.log2_q(),
                    ),
                ))
            }
        }
    }

    /// Hybrid key switching where the room allows it ([`BfvParams::with_hybrid_key_switching`]) **and**
    /// it is the faster, these parameters unchanged elsewhere: the choice of [`BfvParams::generate`].
    ///
    /// Faster by a count of number-theoretic transforms, the bulk of a key switch with coefficient-form
    /// input and output: CRT key switching transforms each of its `k l` lifted digits over the `k` limbs
    /// and both outputs back (`k^2 l + 2k`); hybrid each of its `dnum` raised digits over `k + k''` limbs
    /// (`k''` special primes) and both outputs back (`(dnum + 2)(k + k'')`), plus the basis conversions
    /// of ModUp and ModDown. Measured at `t = 65537` on one thread, hybrid relinearization was faster where
    /// the ratio of the counts is at most 0.64 (depths 12, 15, 20, 30: 0.87, 0.93, 0.93 and 0.44 of the
    /// CRT time) and slower where it is 1.0 or more (depths 6, 8, 22: 1.21, 1.10, 1.28): hybrid is taken
    /// where the ratio is at most [`HYBRID_MAX_TRANSFORM_RATIO`].
    ///
    /// Errors: as [`BfvParams::with_hybrid_key_switching`], but never for a lack of room.
    pub fn with_key_switching_for_room(self) -> BfvResult<Self> {
        let Some((special_moduli, dnum)) = self.hybrid_in_room()? else {
            return Ok(self);
        };
        let k = self.q_moduli.len() as f64;
        // Digits per residue of CRT relinearization: one for plain CRT, ceil(bits / w) for base 2^w.
        let digits = self
            .relin_base_log
            .map_or(1, |w| self.widest_q_bits().div_ceil(w.max(1)));
        let crt = k * k * digits as f64 + 2.0 * k;
        let transforms = (dnum as f64 + 2.0) * (k + special_moduli.len() as f64);
        Ok(if transforms <= HYBRID_MAX_TRANSFORM_RATIO * crt {
            self.hybrid(special_moduli, dnum)
        } else {
            self
        })
    }

    /// These parameters with hybrid key switching over `special_moduli` in `dnum` digit groups (the
    /// digits of CRT key switching dropped).
    fn hybrid(self, special_moduli: Vec<u64>, dnum: usize) -> Self {
        Self {
            relin_base_log: None,
            galois_base_log: None,
            key_switching: KeySwitchTechnique::Hybrid {
                special_moduli,
                dnum,
            },
            ..self
        }
    }

    /// The special primes and `dnum` of [`BfvParams::with_hybrid_key_switching`], or `None` when not one
    /// special prime fits the room.
    ///
    /// Errors: [`BfvError::InvalidParams`] when `N` is outside the HE Standard table; prime search errors.
    fn hybrid_in_room(&self) -> BfvResult<Option<(Vec<u64>, usize)>> {
        let k = self.q_moduli.len();
        let bits = self.widest_q_bits();
        let bound = max_log_q_128(self.n()).ok_or_else(|| {
            invalid(
                "key_switching",
                format!(
                    "N = {} is outside the HE Standard table: choose the special primes and dnum \
                     literally (KeySwitchTechnique::Hybrid)",
                    self.n()
                ),
            )
        })?;
        let room = bound as f64 - self.log2_q();
        let mut taken = self.q_moduli.clone();
        taken.extend(&self.p_moduli);
        let two_n = 2 * self.n() as u64;
        for dnum in 1..=k {
            let count = k.div_ceil(dnum);
            // Each prime is above 2^(bits - 1): skip the searches that cannot fit.
            if (count * (bits as usize - 1)) as f64 > room {
                continue;
            }
            let special_moduli = ntt_primes_of_bits(bits, two_n, count, &taken)?;
            if log2_product(&special_moduli) <= room {
                return Ok(Some((special_moduli, dnum)));
            }
        }
        Ok(None)
    }
}

/// Refuses [`ConversionMode::Fast`]: HPS multiplication needs the centered lift of both extensions.
pub(crate) fn check_conversion_mode(mode: ConversionMode) -> BfvResult<()> {
    if mode == ConversionMode::Fast {
        return Err(invalid(
            "conversion",
            "Fast basis conversion adds unknown multiples of Q (or P) that HPS multiplication cannot \
             absorb; use ExactFloat or ExactInteger"
                .into(),
        ));
    }
    Ok(())
}

/// `count` NTT primes (`= 1 mod 2N`) near `2^m`, not in `exclude`, chosen by Qu-Xu Algorithm 2 (the
/// largest `eta` with `count` such primes within a factor `1 ± 2^-eta` of `2^m`) and Algorithm 3 (those
/// primes), then checked against Theorem 1 with [`check_qu_xu_basis`].
pub(crate) fn qu_xu_basis(
    what: &'static str,
    m: u32,
    two_n: u64,
    count: usize,
    exclude: &[u64],
) -> BfvResult<Vec<u64>> {
    // Excluded primes that may fall in the interval (its widest form, eta = 1) would be skipped by
    // Algorithm 3: ask Algorithm 2 for room for them.
    let (lo, hi) = qu_xu_interval(m, 1);
    let in_range = exclude.iter().filter(|&&q| (lo..=hi).contains(&q)).count();
    let eta = qu_xu_max_eta(m, two_n, count + in_range)?;
    let primes = qu_xu_primes(m, eta, two_n, count, exclude)?;
    check_qu_xu_basis(what, &primes)?;
    Ok(primes)
}

/// Checks Qu-Xu Theorem 1's precondition for `ExactInteger` conversion from `moduli` (with the failure
/// target [`DEFAULT_QU_XU_FAILURE_TARGET`] of [`BasisConverter::new`]): the closeness `eta` of the moduli to
/// their best power of two `2^m` must exceed `log2((r + l) / r)` for `l` moduli.
///
/// Errors: [`BfvError::InvalidParams`] naming `eta`, `l`, `m` and the bound.
pub(crate) fn check_qu_xu_basis(what: &'static str, moduli: &[u64]) -> BfvResult<()> {
    let r = DEFAULT_QU_XU_FAILURE_TARGET;
    let c = QuXuCloseness::of(moduli);
    if c.admits(r) {
        return Ok(());
    }
    let bound = theorem1_eta_lower_bound(c.moduli, r);
    Err(invalid(
        what,
        format!(
            "ExactInteger (Qu-Xu) basis conversion from these l = {} moduli needs them within a factor \
             (1 ± 2^-eta) of one power of two with eta > log2((r + l) / r) = {bound:.3} (Theorem 1, \
             r = 2^{:.0}), and sum |q_i - 2^m| <= 2^(m-2); the best power 2^{} gives eta = {} (moduli \
             {moduli:?}). Choose the primes with BfvParams::with_bit_sizes_and_conversion (Qu-Xu \
             Algorithms 2 and 3) or use ConversionMode::ExactFloat",
            c.moduli,
            r.log2(),
            c.power,
            c.eta
        ),
    ))
}

/// The largest ratio of hybrid to CRT transform counts for which [`BfvParams::generate`] takes hybrid key
/// switching (see [`BfvParams::with_key_switching_for_room`]).
pub const HYBRID_MAX_TRANSFORM_RATIO: f64 = 2.0 / 3.0;

/// The word that marks hybrid key switching in the fingerprint (CRT key switching keeps the fingerprint it
/// had before the choice existed).
const HYBRID_KEY_SWITCHING_CODE: u64 = 0x4859_4252_4944; // "HYBRID"

/// `log2` of the product of literal moduli.
pub(crate) fn log2_product(moduli: &[u64]) -> f64 {
    moduli.iter().map(|&q| (q as f64).log2()).sum()
}

/// `log2(2 t N Q)`: the smallest auxiliary modulus `P` of HPS multiplication (Sections 4.2 and 6.1).
fn required_log_p(log_q: f64, t: u64, log_n: u32) -> f64 {
    1.0 + (t as f64).log2() + log_n as f64 + log_q
}

impl BfvParams {
    /// The RLWE parameters of the keys and ciphertexts: `Q` as the chain, a uniform ternary secret and
    /// `sigma`; as the special basis the auxiliary `P` for CRT key switching (its key-switching tables
    /// are never used; `p_0` serves extended public keys) or the special primes and `dnum` of hybrid key
    /// switching.
    pub fn rlwe_params(&self) -> RlweParams {
        let (p_moduli, dnum, conversion) = match &self.key_switching {
            // BFV relinearizes with its own CRT key switching (crate::evaluator); the RLWE context's
            // key-switching tables, where this mode would apply, are never used.
            KeySwitchTechnique::Crt => (
                self.p_moduli.clone(),
                self.q_moduli.len(),
                ConversionMode::ExactFloat,
            ),
            KeySwitchTechnique::Hybrid {
                special_moduli,
                dnum,
            } => (special_moduli.clone(), *dnum, self.conversion),
        };
        RlweParams {
            log_n: self.log_n,
            q_moduli: self.q_moduli.clone(),
            p_moduli,
            dnum,
            conversion,
            secret: SecretDistribution::Ternary,
            sigma: self.sigma,
        }
    }

    /// The fingerprint of the context these parameters build, from the literal values alone: the RLWE
    /// fingerprint ([`RlweParams::fingerprint`]: `N`, `Q`, `P`, secret, `sigma`), `t`, the
    /// relinearization decomposition and the Galois one when it differs.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprints().current
    }

    /// The fingerprints of the current and of the first wire format version (each over the RLWE
    /// fingerprint of that version, [`RlweParams::fingerprints`]).
    pub fn fingerprints(&self) -> Fingerprints {
        let rlwe = self.rlwe_params().fingerprints();
        Fingerprints {
            current: self.fingerprint_over(rlwe.current),
            legacy: self.fingerprint_over(rlwe.legacy),
        }
    }

    fn fingerprint_over(&self, rlwe: u64) -> u64 {
        if let KeySwitchTechnique::Hybrid { .. } = self.key_switching {
            // The RLWE fingerprint covers Q, the special primes and dnum; the auxiliary basis, which the
            // RLWE parameters of CRT key switching carry, enters here.
            return fingerprint_words(
                [rlwe, self.plaintext_modulus, HYBRID_KEY_SWITCHING_CODE]
                    .into_iter()
                    .chain(std::iter::once(self.p_moduli.len() as u64))
                    .chain(self.p_moduli.iter().copied()),
            );
        }
        let relin_code = self.relin_base_log.map_or(0, |w| w as u64 + 1);
        // A Galois decomposition of its own enters the fingerprint (Galois keys carry it); without one,
        // the fingerprint is that of the relinearization decomposition alone (as before it existed).
        match self.galois_base_log {
            Some(w) if self.galois_base_log != self.relin_base_log => {
                fingerprint_words([rlwe, self.plaintext_modulus, relin_code, w as u64 + 1])
            }
            _ => fingerprint_words([rlwe, self.plaintext_modulus, relin_code]),
        }
    }

    /// The security verdict against the HE Standard table for the largest modulus of a key these
    /// parameters make ([`BfvParams::log2_key_modulus`]), with a uniform ternary secret and error width
    /// `sigma`.
    pub fn security(&self) -> SecurityEstimate {
        self.security_over(self.log2_key_modulus())
    }

    /// Whether contexts of these parameters make **extended** public keys, over `Q ∪ {p_0}` with `p_0` the
    /// first prime of the RLWE context's special basis ([`KeyGenerator::public_key`](crate::KeyGenerator::public_key)):
    /// such a key is an RLWE sample modulo `Q p_0`. With hybrid key switching `p_0` is the first special
    /// prime, already counted (always extended). With CRT key switching it is the first auxiliary prime,
    /// and the key is made only when `log2(Q p_0)` is within the HE Standard bound, or under
    /// [`BfvParams::insecure_for_testing`] (whose verdict then covers it): parameters with `log2(Q)` at
    /// the bound (the generator caps it there at some depths) make public keys over `Q`.
    pub fn extended_public_key(&self) -> bool {
        match self.key_switching {
            KeySwitchTechnique::Hybrid { .. } => true,
            KeySwitchTechnique::Crt => {
                let log_qp0 = self.log2_q() + self.log2_first_auxiliary();
                self.insecure_for_testing || self.security_over(log_qp0).is_secure()
            }
        }
    }

    /// `log2` of the largest modulus of the keys these parameters make, which [`BfvParams::security`]
    /// checks: `Q P_ks` with hybrid key switching (its keys); with CRT key switching `Q` (relinearization
    /// and Galois keys, ciphertexts), or `Q p_0` when public keys are extended
    /// ([`BfvParams::extended_public_key`]). The auxiliary `P` is otherwise an internal computation basis.
    pub fn log2_key_modulus(&self) -> f64 {
        match &self.key_switching {
            KeySwitchTechnique::Hybrid { special_moduli, .. } => {
                self.log2_q() + log2_product(special_moduli)
            }
            KeySwitchTechnique::Crt if self.extended_public_key() => {
                self.log2_q() + self.log2_first_auxiliary()
            }
            KeySwitchTechnique::Crt => self.log2_q(),
        }
    }

    fn security_over(&self, log_modulus: f64) -> SecurityEstimate {
        estimate(
            self.n(),
            log_modulus,
            SecretDistribution::Ternary,
            self.sigma,
        )
    }

    /// `log2(Q)` of the literal ciphertext moduli.
    fn log2_q(&self) -> f64 {
        log2_product(&self.q_moduli)
    }

    /// Bit size of the widest ciphertext prime (0 without primes, which the context refuses).
    fn widest_q_bits(&self) -> u32 {
        self.q_moduli
            .iter()
            .map(|&q| u64::BITS - q.leading_zeros())
            .max()
            .unwrap_or(0)
    }

    /// `log2(p_0)`, the prime extended public keys add to `Q` (0 without auxiliary primes, which the
    /// context refuses).
    fn log2_first_auxiliary(&self) -> f64 {
        self.p_moduli.first().map_or(0.0, |&p| (p as f64).log2())
    }
}

/// Tables of the batch encoder: the NTT modulo `t` and the slot order.
#[derive(Debug)]
pub(crate) struct BatchTables {
    /// Negacyclic NTT of size `N` modulo the prime `t`.
    pub(crate) plan: NttPlan,
    /// `index[s]`: the NTT output entry holding slot `s` (see [`crate::encoder`]).
    pub(crate) index: Vec<usize>,
}

/// The checked, immutable context of a BFV parameter set with every precomputed table of HPS Section 4.2:
/// the bases `Q`, `P` (and `Q ∪ P`), the exact basis converters `Q -> P` and `P -> Q` (Section 2.2, in
/// the mode of [`BfvParams::conversion`]), the simple scaler of decryption (Section 2.3), the complex scaler of multiplication
/// (Section 2.4), the CRT/digit gadget of relinearization (Section 3.3) and the batching tables.
///
/// Built once by [`BfvContext::new`] and shared by `Arc`; `Send + Sync`.
pub struct BfvContext {
    params: BfvParams,
    n: usize,
    t: Modulus,
    fingerprints: Fingerprints,
    rlwe: Arc<RlweContext>,
    q: Arc<RnsBasis>,
    p: Arc<RnsBasis>,
    q_to_p: BasisConverter,
    p_to_q: BasisConverter,
    simple: SimpleScaler,
    complex: ComplexScaler,
    relin: RnsSignedDigits,
    /// The decomposition of Galois key switching when [`BfvParams::galois_base_log`] is set.
    galois: Option<RnsSignedDigits>,
    /// `[floor(Q / t)]_{q_i}`.
    delta: Vec<u64>,
    /// `[t]_{q_i}`.
    t_mod_q: Vec<u64>,
    composer: CrtComposer,
    batch: Option<BatchTables>,
    galois_group: GaloisGroup,
    log_q: f64,
    log_p: f64,
    /// [`BfvParams::extended_public_key`].
    extended_public_key: bool,
    /// [`BfvParams::log2_key_modulus`].
    log_key_modulus: f64,
    security: SecurityEstimate,
}

impl std::fmt::Debug for BfvContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BfvContext")
            .field("n", &self.n)
            .field("t", &self.t.value())
            .field("q", &self.params.q_moduli)
            .field("p", &self.params.p_moduli)
            .field("relin_base_log", &self.params.relin_base_log)
            .field("galois_base_log", &self.params.galois_base_log)
            .field("conversion", &self.params.conversion)
            .field(
                "fingerprint",
                &format_args!("{:#018x}", self.fingerprints.current),
            )
            .finish_non_exhaustive()
    }
}

fn invalid(what: &'static str, reason: String) -> BfvError {
    BfvError::InvalidParams { what, reason }
}

/// The signed-digit decomposition of `q` for a key-switching base `2^w` (`field` names the parameter in
/// errors): one digit per residue for `None`, else `ceil(bits / w)` digits of the widest `q_i`.
fn signed_digits(
    q: &Arc<RnsBasis>,
    field: &'static str,
    base_log: Option<u32>,
) -> BfvResult<RnsSignedDigits> {
    let max_bits = q.moduli().iter().map(|m| m.bits()).max().unwrap_or(1);
    Ok(match base_log {
        None => RnsSignedDigits::new(q, max_bits, 1)?,
        Some(w) => {
            if !(1..=max_bits).contains(&w) {
                return Err(invalid(
                    field,
                    format!(
                        "base 2^{w}: the digit size must be in [1, {max_bits}] (the widest q_i); \
                         use None for the plain CRT decomposition"
                    ),
                ));
            }
            RnsSignedDigits::new(q, w, max_bits.div_ceil(w) as usize)?
        }
    })
}

impl BfvContext {
    /// Checks `params` and precomputes the tables of HPS Section 4.2.
    ///
    /// Errors: [`BfvError::InvalidParams`] (empty `Q` or `P`, `log_n` outside `[4, 17]`, bad
    /// `relin_base_log` or `galois_base_log`, [`ConversionMode::Fast`], or `ExactInteger` with `Q` or `P` violating Qu-Xu
    /// Theorem 1 — the message names `eta`, `l` and the bound), [`BfvError::InvalidPlaintextModulus`] (`t` outside `[2, 2^60]`, sharing a factor
    /// with `Q`, or not below every `q_i`), [`BfvError::AuxiliaryBasisTooSmall`] (`P < 2 t N Q`),
    /// [`BfvError::Insecure`] (HE Standard bound exceeded without opt-in); ring and core errors for
    /// non-NTT primes, repeated moduli or an invalid sigma.
    pub fn new(params: BfvParams) -> BfvResult<Arc<Self>> {
        if !(4..=17).contains(&params.log_n) {
            return Err(invalid(
                "log_n",
                format!("log_n = {} must be in [4, 17]", params.log_n),
            ));
        }
        if params.q_moduli.is_empty() {
            return Err(invalid(
                "q_moduli",
                "the ciphertext modulus needs at least one prime".into(),
            ));
        }
        if params.p_moduli.is_empty() {
            return Err(invalid(
                "p_moduli",
                "HPS multiplication needs an auxiliary basis P >= 2 t N Q (Section 4.2)".into(),
            ));
        }
        check_conversion_mode(params.conversion)?;
        if let KeySwitchTechnique::Hybrid { .. } = params.key_switching {
            if params.relin_base_log.is_some() || params.galois_base_log.is_some() {
                return Err(invalid(
                    "key_switching",
                    "hybrid key switching decomposes Q into dnum digit groups; relin_base_log and \
                     galois_base_log (digits of CRT key switching) must be None"
                        .into(),
                ));
            }
        }
        if params.conversion == ConversionMode::ExactInteger {
            // Both extensions convert from a whole basis: Q -> P and P -> Q.
            check_qu_xu_basis("q_moduli", &params.q_moduli)?;
            check_qu_xu_basis("p_moduli", &params.p_moduli)?;
        }
        let n = params.n();
        let t = params.plaintext_modulus;
        if !(2..=MAX_PLAINTEXT_MODULUS).contains(&t) {
            return Err(BfvError::InvalidPlaintextModulus {
                t,
                reason: format!("it must satisfy 2 <= t <= 2^60 = {MAX_PLAINTEXT_MODULUS}"),
            });
        }
        if let Some(&q) = params.q_moduli.iter().find(|&&q| q <= t || q % t == 0) {
            return Err(BfvError::InvalidPlaintextModulus {
                t,
                reason: format!(
                    "it must be below every ciphertext prime and coprime to it (q = {q})"
                ),
            });
        }
        rnsfhe_core::security::check_sigma(params.sigma)
            .map_err(|reason| invalid("sigma", reason))?;
        // The security check needs only the literal moduli: it comes before any table is built.
        let security = params.security();
        if !security.is_secure() && !params.insecure_for_testing {
            return Err(BfvError::Insecure {
                n,
                log_key_modulus: params.log2_key_modulus(),
                bound: max_log_q_128(n).unwrap_or(0),
                sigma: params.sigma,
                estimate: security,
            });
        }
        let (params_extended, log_key_modulus) =
            (params.extended_public_key(), params.log2_key_modulus());
        let fingerprints = params.fingerprints();
        let rlwe = RlweContext::new(params.rlwe_params())?;
        let q = Arc::clone(rlwe.chain());
        let p = match params.key_switching {
            KeySwitchTechnique::Crt => Arc::clone(rlwe.special_basis()),
            KeySwitchTechnique::Hybrid { .. } => {
                let p = RnsBasis::new(n, &params.p_moduli)?;
                // Q ∪ P is the basis of the tensor product: its primes must be distinct.
                q.concat(&p)?;
                p
            }
        };
        let log_q = q.log2_product();
        let log_p = p.log2_product();
        let needed = required_log_p(log_q, t, params.log_n);
        if log_p < needed {
            return Err(BfvError::AuxiliaryBasisTooSmall {
                log_p,
                needed,
                log_q,
                log_t: (t as f64).log2(),
                log_n: params.log_n,
            });
        }
        let t_mod = Modulus::new(t)?;
        let q_to_p = BasisConverter::new(&q, &p, params.conversion)?;
        let p_to_q = BasisConverter::new(&p, &q, params.conversion)?;
        let simple = SimpleScaler::new(&q, t)?;
        let complex = ComplexScaler::new(&q, &p, t)?;
        let relin = signed_digits(&q, "relin_base_log", params.relin_base_log)?;
        let galois = match params.galois_base_log {
            None => None,
            Some(w) => Some(signed_digits(&q, "galois_base_log", Some(w))?),
        };
        // floor(Q / t) = (Q - r) / t with r = Q mod t, so [floor(Q/t)]_{q_i} = -r t^-1 mod q_i.
        let r = q.product_mod(&t_mod);
        let delta = q
            .moduli()
            .iter()
            .map(|qi| Ok(qi.mul(qi.neg(qi.reduce(r)), qi.inv(qi.reduce(t))?)))
            .collect::<BfvResult<Vec<u64>>>()?;
        let t_mod_q = q.moduli().iter().map(|qi| qi.reduce(t)).collect();
        let galois_group = GaloisGroup::new(n, ROW_ROTATION_GENERATOR)?;
        let batch = batch_tables(&galois_group, t);
        let composer = CrtComposer::new(&q);
        Ok(Arc::new(Self {
            params,
            n,
            t: t_mod,
            fingerprints,
            rlwe,
            q,
            p,
            q_to_p,
            p_to_q,
            simple,
            complex,
            relin,
            galois,
            delta,
            t_mod_q,
            composer,
            batch,
            galois_group,
            log_q,
            log_p,
            extended_public_key: params_extended,
            log_key_modulus,
            security,
        }))
    }

    /// The parameters this context was built from.
    pub fn params(&self) -> &BfvParams {
        &self.params
    }

    /// Ring degree `N`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The plaintext modulus `t`.
    pub fn plaintext_modulus(&self) -> u64 {
        self.t.value()
    }

    /// The basis-conversion mode of the two extensions of multiplication ([`BfvParams::conversion`]).
    pub fn conversion(&self) -> ConversionMode {
        self.params.conversion
    }

    /// For [`ConversionMode::ExactInteger`]: the Qu-Xu closeness `eta` of the ciphertext primes `Q` and
    /// of the auxiliary primes `P` to their powers of two (the sources of the `Q -> P` and `P -> Q`
    /// extensions); `None` in the other modes.
    pub fn qu_xu_eta(&self) -> Option<(u32, u32)> {
        Some((self.q_to_p.eta()?, self.p_to_q.eta()?))
    }

    /// `log2(Q)`.
    pub fn log_q(&self) -> f64 {
        self.log_q
    }

    /// `log2(P)` of the auxiliary basis.
    pub fn log_p(&self) -> f64 {
        self.log_p
    }

    /// Whether batching (SIMD slots) is available: `t` prime and `t = 1 mod 2N`.
    pub fn supports_batching(&self) -> bool {
        self.batch.is_some()
    }

    /// A fingerprint of the parameters ([`BfvParams::fingerprint`]: `N`, `Q`, `P`, `sigma`, `t`,
    /// relinearization decomposition) that plaintexts, ciphertexts and relinearization keys carry.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprints.current
    }

    /// The fingerprints of the current and of the first wire format version ([`BfvParams::fingerprints`]).
    pub fn fingerprints(&self) -> Fingerprints {
        self.fingerprints
    }

    /// The underlying RLWE context (`Q` as the chain, `P` as its special basis), over which secret and
    /// public keys of `rnsfhe-core` are generated.
    pub fn rlwe(&self) -> &Arc<RlweContext> {
        &self.rlwe
    }

    /// The ciphertext basis `Q`.
    pub fn q_basis(&self) -> &Arc<RnsBasis> {
        &self.q
    }

    /// The auxiliary basis `P` of multiplication.
    pub fn p_basis(&self) -> &Arc<RnsBasis> {
        &self.p
    }

    /// The key-switching technique ([`BfvParams::key_switching`]).
    pub fn key_switching(&self) -> &KeySwitchTechnique {
        &self.params.key_switching
    }

    /// Number of relinearization key components: with CRT key switching the (residue, digit) pairs of the
    /// decomposition, `k` for plain CRT and `k * ceil(bits / w)` with base-`2^w` digits; `dnum` with
    /// hybrid key switching.
    pub fn relin_components(&self) -> usize {
        match self.params.key_switching {
            KeySwitchTechnique::Crt => self.q.len() * self.relin.count(),
            KeySwitchTechnique::Hybrid { dnum, .. } => dnum,
        }
    }

    /// Number of components of each Galois key: with CRT key switching the (residue, digit) pairs of the
    /// Galois decomposition ([`BfvContext::relin_components`] unless [`BfvParams::galois_base_log`] is
    /// set); `dnum` with hybrid key switching.
    pub fn galois_components(&self) -> usize {
        match self.params.key_switching {
            KeySwitchTechnique::Crt => self.q.len() * self.galois_digits().count(),
            KeySwitchTechnique::Hybrid { dnum, .. } => dnum,
        }
    }

    /// Whether the HE Standard table establishes 128-bit security for these parameters.
    pub fn is_secure(&self) -> bool {
        self.security.is_secure()
    }

    /// The security verdict against the HE Standard table ([`BfvParams::security`]).
    pub fn security(&self) -> SecurityEstimate {
        self.security
    }

    /// Whether public keys of this context are extended ([`BfvParams::extended_public_key`]).
    pub fn extended_public_key(&self) -> bool {
        self.extended_public_key
    }

    /// `log2` of the largest modulus of a key this context makes ([`BfvParams::log2_key_modulus`]).
    pub fn log_key_modulus(&self) -> f64 {
        self.log_key_modulus
    }

    /// The verdict with the built-in lattice estimate of these parameters (the key modulus
    /// [`BfvContext::log_key_modulus`], uniform ternary secret, `sigma`;
    /// [`rnsfhe_core::security::summary`]), as one line.
    pub fn security_summary(&self) -> String {
        rnsfhe_core::security::summary(
            self.n,
            self.log_key_modulus,
            SecretDistribution::Ternary,
            self.params.sigma,
        )
    }

    /// A warning naming `N`, the key modulus, `sigma` and the 128-bit bound when the parameters are not
    /// established as secure (possible only with [`BfvParams::insecure_for_testing`]); `None` otherwise.
    pub fn security_warning(&self) -> Option<String> {
        if self.is_secure() {
            return None;
        }
        Some(format!(
            "WARNING: these BFV parameters are not established as 128-bit secure: N = {}, log2 of the key \
             modulus = {:.1} (log2(Q) = {:.1}; HE Standard 128-bit bound for a uniform ternary secret and \
             sigma >= {}: {}), sigma = {}; security: {}. Use them for tests only.",
            self.n,
            self.log_key_modulus,
            self.log_q,
            rnsfhe_core::security::MIN_STANDARD_SIGMA,
            max_log_q_128(self.n).map_or("none".to_string(), |b| b.to_string()),
            self.params.sigma,
            self.security
        ))
    }

    pub(crate) fn t(&self) -> &Modulus {
        &self.t
    }

    pub(crate) fn q_to_p(&self) -> &BasisConverter {
        &self.q_to_p
    }

    pub(crate) fn p_to_q(&self) -> &BasisConverter {
        &self.p_to_q
    }

    pub(crate) fn simple_scaler(&self) -> &SimpleScaler {
        &self.simple
    }

    pub(crate) fn complex_scaler(&self) -> &ComplexScaler {
        &self.complex
    }

    pub(crate) fn relin_digits(&self) -> &RnsSignedDigits {
        &self.relin
    }

    /// The decomposition of Galois key switching: [`BfvParams::galois_base_log`]'s digits, or the
    /// relinearization decomposition.
    pub(crate) fn galois_digits(&self) -> &RnsSignedDigits {
        self.galois.as_ref().unwrap_or(&self.relin)
    }

    pub(crate) fn delta(&self) -> &[u64] {
        &self.delta
    }

    pub(crate) fn t_mod_q(&self) -> &[u64] {
        &self.t_mod_q
    }

    pub(crate) fn composer(&self) -> &CrtComposer {
        &self.composer
    }

    pub(crate) fn batch(&self) -> Option<&BatchTables> {
        self.batch.as_ref()
    }

    /// The Galois group of the batching matrix (generator [`ROW_ROTATION_GENERATOR`] = 3 for the row
    /// rotations, conjugation `2N - 1` for the column swap; see [`crate::galois`]).
    pub fn galois_group(&self) -> &GaloisGroup {
        &self.galois_group
    }

    /// Checks that a key of `rnsfhe-core` (secret or public) belongs to [`BfvContext::rlwe`].
    pub(crate) fn check_rlwe_fingerprint(&self, got: u64, object: &'static str) -> BfvResult<()> {
        let expected = self.rlwe.fingerprint();
        if got == expected {
            Ok(())
        } else {
            Err(BfvError::ContextMismatch {
                object,
                expected,
                got,
            })
        }
    }

    /// [`BfvError::Insecure`] naming `log2(Q p_0)` unless this context makes extended public keys.
    pub(crate) fn check_extended_public_key(&self) -> BfvResult<()> {
        if self.extended_public_key {
            return Ok(());
        }
        let log_key_modulus = self.log_q + self.params.log2_first_auxiliary();
        Err(BfvError::Insecure {
            n: self.n,
            log_key_modulus,
            bound: max_log_q_128(self.n).unwrap_or(0),
            sigma: self.params.sigma,
            estimate: self.params.security_over(log_key_modulus),
        })
    }

    /// Checks that a public key belongs to [`BfvContext::rlwe`] and, if extended, that this context makes
    /// extended keys (a key over `Q p_0` where that modulus exceeds the security bound is refused).
    pub(crate) fn check_public_key(&self, pk: &PublicKey) -> BfvResult<()> {
        self.check_rlwe_fingerprint(pk.fingerprint(), "public key")?;
        if pk.is_extended() {
            self.check_extended_public_key()?;
        }
        Ok(())
    }

    /// Checks that an object's fingerprint is this context's.
    pub(crate) fn check_fingerprint(&self, got: u64, object: &'static str) -> BfvResult<()> {
        if got == self.fingerprints.current {
            Ok(())
        } else {
            Err(BfvError::ContextMismatch {
                object,
                expected: self.fingerprints.current,
                got,
            })
        }
    }
}

/// The batching tables when `t` is a prime `= 1 mod 2N`, else `None`.
///
/// Slot order (SEAL's batching layout: the elements of `group`, generator [`ROW_ROTATION_GENERATOR`] =
/// 3, in step order): slots form a `2 x N/2` matrix; slot `j < N/2` of row 0 is the evaluation at
/// `psi^(3^j)`, slot `N/2 + j` of row 1 the evaluation at `psi^(-3^j)`, `psi` a primitive `2N`-th root of
/// unity mod `t`. The automorphism `X -> X^(3^r)` then rotates both rows left by `r`, and
/// `X -> X^(2N-1)` swaps the rows.
fn batch_tables(group: &GaloisGroup, t: u64) -> Option<BatchTables> {
    let n = group.degree();
    if t % (2 * n as u64) != 1 || !is_prime(t) {
        return None;
    }
    let plan = NttPlan::new(n, t).ok()?;
    let two_n = 2 * n;
    let log_n = n.trailing_zeros();
    let half = n / 2;
    let mut index = vec![0usize; n];
    for (j, g) in group.elements().enumerate() {
        // NTT entry i evaluates at psi^(2 bitrev(i) + 1): exponent e sits at bitrev((e - 1) / 2).
        index[j] = rnsfhe_math::ntt::bit_reverse((g.value() - 1) / 2, log_n);
        let conj = two_n - g.value();
        index[half + j] = rnsfhe_math::ntt::bit_reverse((conj - 1) / 2, log_n);
    }
    Some(BatchTables { plan, index })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn with_bit_sizes_meets_the_auxiliary_bound() {
        let mut p = BfvParams::with_bit_sizes(12, 65537, 55, 3).unwrap();
        p.insecure_for_testing = true;
        assert_eq!(
            p.p_moduli.len(),
            4,
            "k' = k + 1 for 55-bit primes (HPS 4.2)"
        );
        let ctx = BfvContext::new(p).unwrap();
        assert!(ctx.log_p() >= required_log_p(ctx.log_q(), 65537, 12));
        assert!(ctx.supports_batching());
        assert!(ctx.security_warning().is_some());
    }

    #[test]
    fn delta_is_floor_q_over_t() {
        let mut p = BfvParams::with_bit_sizes(4, 3, 30, 2).unwrap();
        p.insecure_for_testing = true;
        let ctx = BfvContext::new(p.clone()).unwrap();
        let q: u128 = p.q_moduli.iter().map(|&q| q as u128).product();
        let delta = q / 3;
        for (qi, &d) in p.q_moduli.iter().zip(ctx.delta()) {
            assert_eq!((delta % *qi as u128) as u64, d);
        }
    }

    #[test]
    fn sigma_enters_the_check_and_the_fingerprint() {
        // log Q = 108 at N = 2^12: within the HE Standard's 109 for sigma >= 3.19.
        let base = BfvParams::with_bit_sizes(12, 65537, 54, 2).unwrap();
        let ctx = BfvContext::new(base.clone()).unwrap();
        assert!(ctx.is_secure());
        let narrow = BfvParams {
            sigma: 1e-9,
            ..base.clone()
        };
        assert_eq!(narrow.security(), SecurityEstimate::ErrorTooNarrow);
        let err = BfvContext::new(narrow.clone()).unwrap_err();
        assert!(matches!(err, BfvError::Insecure { .. }), "{err}");
        assert!(err.to_string().contains("sigma = 0.000000001"), "{err}");
        let opted = BfvContext::new(BfvParams {
            insecure_for_testing: true,
            ..narrow
        })
        .unwrap();
        assert!(!opted.is_secure());
        assert!(opted.security_warning().unwrap().contains("sigma"));
        assert_ne!(opted.fingerprint(), ctx.fingerprint());
        assert_eq!(opted.fingerprints().legacy, ctx.fingerprints().legacy);
        for sigma in [1e9, f64::NAN, 0.0] {
            let err = BfvContext::new(BfvParams {
                sigma,
                insecure_for_testing: true,
                ..base.clone()
            })
            .unwrap_err();
            assert!(err.to_string().contains("sigma"), "{err}");
        }
        assert!(ctx.security_summary().contains("lattice estimate"));
    }
}
