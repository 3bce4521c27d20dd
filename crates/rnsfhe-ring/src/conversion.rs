//! RNS basis conversion `C = {q_0, ..., q_{l-1}} -> B = {p_0, ..., p_{k-1}}` in three interchangeable modes.
//!
//! Every mode starts from the CRT identity (RNS-CKKS Section 2.3, HPS Eq. 2, Qu-Xu Section 2.1)
//!
//! ```text
//! y_i = [x_i * qhat_i^-1]_{q_i},      sum_i y_i * qhat_i = x + e * Q   with 0 <= e < l,
//! ```
//!
//! where `x in [0, Q)` is the integer with residues `x_i`, `qhat_i = Q / q_i`. The modes differ only in which
//! multiple `v` of `Q` they subtract before reducing modulo each target prime:
//!
//! * [`ConversionMode::Fast`] (Bajard et al., RNS-CKKS Section 2.3, with centered `y_i`): `v` counts the
//!   `y_i > q_i / 2`, which is the sum over `y_i - q_i [y_i > q_i / 2]` in `(-q_i/2, q_i/2)`; the output is
//!   `x + alpha Q` with `-ceil(l/2) <= alpha < ceil(l/2)`. Cheapest; key switching absorbs `alpha Q` as
//!   noise. Centering costs one comparison per residue and makes that noise zero-mean: with `y_i` in
//!   `[0, q_i)` (`v = 0`, the textbook form, `0 <= alpha < l`) its mean `l/2` adds the same offset to every
//!   coefficient, which the canonical embedding concentrates in the slots near the root 1 (measured: 30
//!   times the typical error in slot 0 after 8 rotations).
//! * [`ConversionMode::ExactFloat`] (HPS Section 2.2): `v = round(sum_i y_i / q_i)` in double precision,
//!   which yields the centered representative of `x` (in `(-Q/2, Q/2)`), except when `x` is within
//!   `(l + 2)^2 2^-53 Q` of `Q / 2` (see [`Exactness::CenteredUnlessNearHalf`]).
//! * [`ConversionMode::ExactInteger`] (Qu-Xu Algorithms 1 and 4, Theorem 1): the same `v` computed with
//!   integer additions and bit operations only, for source moduli within a factor `1 ± 2^-eta` of `2^m`,
//!   plus an integer guard that makes the result exact for every input (see below).
//!
//! ## The Qu-Xu guard
//!
//! With `S = sum_i y_i` (accumulated by Algorithm 4, extended with a final rounding bit), the exact value is
//! `2^m * sum_i y_i / q_i = S + D` with `D = sum_i y_i (2^m - q_i) / q_i`, so `|D| < delta := sum_i |q_i - 2^m|`
//! because `y_i < q_i`. Write `S = t 2^m + rem` with `0 <= rem < 2^m`. The exact rounding
//! `v = floor((S + D + 2^(m-1)) / 2^m)` equals the cheap `t + [rem >= 2^(m-1)]` whenever
//! `|rem - 2^(m-1)| >= delta`, because then no multiple of `2^m` lies in the open interval of width `2 delta`
//! around `S + 2^(m-1)`. Otherwise (probability about `2 delta / 2^m <= 2 l 2^-eta / (1 - 2^-eta)` on
//! uniform inputs) `v` is `t` or `t + 1` (as `delta <= 2^(m-2)`) and is decided exactly by a multi-word
//! comparison of `2 sum_i y_i qhat_i` with `(2t + 1) Q` (precomputed multi-word `qhat_i` and `Q`).
//!
//! ## Performance
//!
//! The conversion is the inner loop of key switching (ModUp / ModDown). Coefficients are processed in blocks
//! of [`BLOCK`]: the `y_i` of a block are computed limb by limb with Shoup multiplications (contiguous), the
//! rounding term `v` is computed over the block, and each target residue is accumulated in `u128` with lazy
//! reduction every 15 products (each product is below `2^124`). Blocks run in parallel with rayon when the
//! polynomial is large enough. All constants are precomputed in [`BasisConverter::new`].

use std::cmp::Ordering;
use std::sync::Arc;

use rayon::prelude::*;
use rnsfhe_math::primes::closeness_eta;
use rnsfhe_math::simd::{
    centered_lift, map_in_place, sum_of_products, MulShoup, Weights, NARROW_BOUND,
};
use rnsfhe_math::ShoupConstant;

use crate::basis::RnsBasis;
use crate::error::{Error, Result};
use crate::multiword;
use crate::poly::{Coeff, Poly};

/// Number of coefficients processed together: the `l x BLOCK` words of `y_i` stay in L1/L2 cache while
/// every target limb is accumulated.
pub const BLOCK: usize = 256;

/// Default failure target `r` of Qu-Xu Theorem 1 used by [`BasisConverter::new`]: `2^-10`, about the
/// `r = 0.001` of the paper's Fig. 1.
///
/// [`ConversionMode::ExactInteger`] is refused unless the source moduli satisfy `eta > log2((r + l) / r)`.
/// Because of the exact guard this does not affect correctness, only speed: the probability that a
/// coefficient needs the multi-word fallback is at most about `2 l 2^-eta / (1 - 2^-eta) < 2 r`.
pub const DEFAULT_QU_XU_FAILURE_TARGET: f64 = 1.0 / 1024.0;

/// Work (coefficients times limbs) below which a conversion runs on the calling thread only.
const PARALLEL_THRESHOLD: usize = 1 << 15;

/// How a [`BasisConverter`] chooses the multiple of `Q` it subtracts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConversionMode {
    /// Fast basis conversion of Bajard et al. (RNS-CKKS Section 2.3): the output is `x + alpha Q` with
    /// `0 <= alpha < l`, for `x in [0, Q)`.
    Fast,
    /// HPS Section 2.2: the rounding term `v = round(sum_i y_i / q_i)` is computed in double precision; the
    /// output is the centered representative of `x` unless `x` is within `(l + 2)^2 2^-53 Q` of `Q / 2`.
    ExactFloat,
    /// Qu-Xu Algorithms 1 and 4 (Theorem 1) with an exact integer guard: the centered representative of `x`
    /// for every input, using integer operations only. Requires source moduli close to a power of two.
    ExactInteger,
}

impl ConversionMode {
    /// The mode's name, as used in error messages.
    pub fn name(self) -> &'static str {
        match self {
            ConversionMode::Fast => "Fast",
            ConversionMode::ExactFloat => "ExactFloat",
            ConversionMode::ExactInteger => "ExactInteger",
        }
    }
}

impl std::fmt::Display for ConversionMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The guarantee a [`BasisConverter`] gives about its output for an input `x in [0, Q)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Exactness {
    /// [`ConversionMode::Fast`]: the output is `x + alpha Q` for some integer
    /// `-alpha_bound <= alpha < alpha_bound` (`alpha_bound = ceil(l/2)`, `l` the number of source moduli).
    UpToMultipleOfQ {
        /// Bound on `|alpha|` (exclusive above, inclusive below).
        alpha_bound: usize,
    },
    /// [`ConversionMode::ExactFloat`]: the output is the centered representative of `x` (in `(-Q/2, Q/2)`)
    /// whenever `|x / Q - 1/2| > relative_margin`, with `relative_margin = (l + 2)^2 2^-53` bounding the
    /// accumulated floating-point error; closer to `Q / 2` it may be `x` instead of `x - Q` or vice versa.
    CenteredUnlessNearHalf {
        /// The relative distance to `Q / 2` below which the result is not guaranteed.
        relative_margin: f64,
    },
    /// [`ConversionMode::ExactInteger`]: always the centered representative of `x`.
    Centered,
}

/// Qu-Xu Theorem 1's lower bound on `eta` for `l` source moduli and failure target `r`:
/// `log2((r + l) / r)` (the curve of the paper's Fig. 1 for `r = 0.001`). Theorem 1 needs `eta` strictly
/// above it; [`ConversionMode::ExactInteger`] refuses a basis otherwise.
pub fn theorem1_eta_lower_bound(l: usize, r: f64) -> f64 {
    ((r + l as f64) / r).log2()
}

/// Qu-Xu Theorem 1's failure bound `l 2^-eta / (1 - 2^-eta)` for `l` source moduli within a factor
/// `1 ± 2^-eta` of `2^m`: the largest possible spread `alpha` of the exact sum `sum_i y_i / q_i` around
/// Algorithm 1's `sum_i y_i / 2^m`, hence (Lemma 1) the probability bound of a wrong unguarded error term
/// on uniform inputs (the quantity of the paper's Fig. 2b). It is the smallest `r` for which
/// `eta >= log2((r + l) / r)`. Infinite for `eta = 0` (no closeness), 0 for `l = 0`.
pub fn theorem1_failure_bound(l: usize, eta: u32) -> f64 {
    if l == 0 {
        return 0.0;
    }
    if eta == 0 {
        return f64::INFINITY;
    }
    let e = 2f64.powi(-(eta.min(1000) as i32));
    l as f64 * e / (1.0 - e)
}

/// How close a set of source moduli is to one power of two, with the Qu-Xu Theorem 1 figures that follow:
/// what [`ConversionMode::ExactInteger`] computes when it builds a converter from them
/// ([`BasisConverter::eta`], [`BasisConverter::power_of_two_exponent`], [`BasisConverter::theorem1_bound`]),
/// available without building one (for example to report the figures of every key-switching conversion of a
/// parameter set).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuXuCloseness {
    /// Number of source moduli `l`.
    pub moduli: usize,
    /// The exponent `m` of the power `2^m` the moduli are closest to (of the two candidates the first
    /// modulus allows, the one giving the larger `eta`).
    pub power: u32,
    /// The largest `eta` with `|2^m / q_i - 1| <= 2^-eta` for every modulus (0 if not even `eta = 1` holds).
    pub eta: u32,
    /// `sum_i |q_i - 2^m|` (saturating), the bound on `|2^m sum_i y_i / q_i - sum_i y_i|` the exact guard
    /// of `ExactInteger` uses.
    pub deviation: u64,
}

impl QuXuCloseness {
    /// The figures of `moduli` (each below `2^62`). An empty slice gives `l = 0`, `eta = 0`.
    pub fn of(moduli: &[u64]) -> Self {
        let Some(&first) = moduli.first() else {
            return Self {
                moduli: 0,
                power: 0,
                eta: 0,
                deviation: 0,
            };
        };
        // Every modulus close to 2^m has bit length m or m + 1, so the first one fixes two candidates.
        let bits = 64 - first.leading_zeros();
        let (power, eta) = [bits.saturating_sub(1), bits]
            .into_iter()
            .filter(|&m| (2..=61).contains(&m))
            .map(|m| (m, closeness_eta(moduli, m)))
            .max_by_key(|&(_, eta)| eta)
            .unwrap_or((bits, 0));
        let two_m = 1u64.checked_shl(power).unwrap_or(u64::MAX);
        let deviation = moduli
            .iter()
            .fold(0u64, |acc, &q| acc.saturating_add(q.abs_diff(two_m)));
        Self {
            moduli: moduli.len(),
            power,
            eta,
            deviation,
        }
    }

    /// Qu-Xu Theorem 1's failure bound `l 2^-eta / (1 - 2^-eta)` ([`theorem1_failure_bound`]): the
    /// probability bound of a wrong unguarded error term. With the exact guard of `ExactInteger` the
    /// conversion is exact regardless; the guard's multi-word fallback then runs on at most about twice this
    /// fraction of the coefficients.
    pub fn failure_bound(&self) -> f64 {
        theorem1_failure_bound(self.moduli, self.eta)
    }

    /// Whether [`ConversionMode::ExactInteger`] accepts these moduli for failure target `r`
    /// ([`BasisConverter::with_failure_target`]): `eta > log2((r + l) / r)` and
    /// `sum_i |q_i - 2^m| <= 2^(m-2)`.
    pub fn admits(&self, r: f64) -> bool {
        self.moduli > 0
            && (self.eta as f64) > theorem1_eta_lower_bound(self.moduli, r)
            && self.power >= 2
            && self.deviation <= (1u64 << self.power) >> 2
    }
}

/// Tables of the integer-only mode (Qu-Xu).
#[derive(Clone, Debug)]
struct QuXuTables {
    /// The power `2^m` all source moduli are close to.
    m: u32,
    /// Closeness: every `q_i` satisfies `|2^m / q_i - 1| <= 2^-eta`.
    eta: u32,
    /// The failure target `r` the basis was checked against.
    failure_target: f64,
    /// `sum_i |q_i - 2^m|`, the bound on `|2^m sum y_i / q_i - sum y_i|`.
    delta: u64,
    /// Words per multi-word number: enough for `2 (l + 2) Q`.
    words: usize,
    /// `qhat_i` as `words`-word numbers, concatenated.
    qhat: Vec<u64>,
    /// `Q` as a `words`-word number.
    q: Vec<u64>,
}

/// A precomputed RNS basis conversion from a source basis `C` (product `Q`, `l` moduli) to a target basis
/// `B` (`k` moduli), in one of three [`ConversionMode`]s.
///
/// Built once (all tables precomputed) and shared; [`BasisConverter::convert`] and
/// [`BasisConverter::convert_into`] allocate only per-call scratch. `Send + Sync`.
#[derive(Clone)]
pub struct BasisConverter {
    from: Arc<RnsBasis>,
    to: Arc<RnsBasis>,
    mode: ConversionMode,
    /// `[qhat_i^-1]_{q_i}` with Shoup companions (copied from the source basis for locality).
    qhat_inv: Vec<ShoupConstant>,
    /// Per target `p_j`, the `l + 1` weights of its sum with Shoup companions: `[qhat_i]_{p_j}` for
    /// `i < l`, then `[-Q]_{p_j}` (the rounding term `v` enters as `v * [-Q]_{p_j}`, so no table of
    /// multiples `alpha Q mod p_j` and no gather are needed). Entry `j * (l + 1) + i`.
    weights: Vec<ShoupConstant>,
    /// `1 / q_i` in double precision (ExactFloat).
    inv_q: Vec<f64>,
    /// Qu-Xu tables (ExactInteger).
    qu_xu: Option<QuXuTables>,
    /// Every source and target modulus is at most [`NARROW_BOUND`], so the rows of the final sum (`y_i`
    /// and the small `v`) and its weights fit the faster [`Weights::PerRowNarrow`] kernel.
    narrow: bool,
}

impl std::fmt::Debug for BasisConverter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BasisConverter")
            .field("mode", &self.mode)
            .field("from", &self.from.values())
            .field("to", &self.to.values())
            .field("eta", &self.eta())
            .finish_non_exhaustive()
    }
}

/// Per-task scratch: one block of `y`, the rounding terms, accumulators.
struct Scratch {
    y: Vec<u64>,
    v: Vec<u64>,
    rem: Vec<u64>,
    fl: Vec<f64>,
    mw: Vec<u64>,
}

impl Scratch {
    fn new(l: usize, block: usize, words: usize) -> Self {
        Self {
            y: vec![0; l * block],
            v: vec![0; block],
            rem: vec![0; block],
            fl: vec![0.0; block],
            mw: vec![0; 3 * words],
        }
    }
}

impl BasisConverter {
    /// Builds the conversion `from -> to` in `mode`, with the default Qu-Xu failure target
    /// [`DEFAULT_QU_XU_FAILURE_TARGET`] for [`ConversionMode::ExactInteger`].
    ///
    /// Errors: [`Error::BasisMismatch`] if the bases have different ring degrees;
    /// [`Error::ConversionUnavailable`] if `mode` is `ExactInteger` and the source moduli are not close enough
    /// to a power of two (Qu-Xu Theorem 1: `eta > log2((r + l) / r)`), naming `eta`, `l` and the bound.
    /// Moduli shared by both bases are allowed (the shared residue is copied through unchanged).
    pub fn new(from: &Arc<RnsBasis>, to: &Arc<RnsBasis>, mode: ConversionMode) -> Result<Self> {
        Self::with_failure_target(from, to, mode, DEFAULT_QU_XU_FAILURE_TARGET)
    }

    /// Like [`BasisConverter::new`] with an explicit Qu-Xu failure target `r in [2^-60, 1/4]`: the
    /// `ExactInteger` mode is accepted iff the source moduli are within `1 ± 2^-eta` of some `2^m` with
    /// `eta > log2((r + l) / r)` (Qu-Xu Theorem 1). Results stay exact for any accepted `r`; a larger `r`
    /// admits moduli farther from `2^m` at the price of more frequent (slower) exact fallbacks. Ignored by the
    /// other modes, but still range-checked ([`Error::OutOfRange`]).
    pub fn with_failure_target(
        from: &Arc<RnsBasis>,
        to: &Arc<RnsBasis>,
        mode: ConversionMode,
        failure_target: f64,
    ) -> Result<Self> {
        let (min_r, max_r) = (2f64.powi(-60), 0.25);
        if !(min_r..=max_r).contains(&failure_target) {
            return Err(Error::OutOfRange {
                what: "Qu-Xu failure target r",
                value: failure_target,
                min: min_r,
                max: max_r,
            });
        }
        if from.degree() != to.degree() {
            return Err(Error::BasisMismatch {
                operation: "basis converter construction (source vs target degree)",
                left_limbs: from.len(),
                left_n: from.degree(),
                right_limbs: to.len(),
                right_n: to.degree(),
            });
        }
        let l = from.len();
        let weights = to
            .moduli()
            .iter()
            .flat_map(|p| {
                (0..l)
                    .map(move |i| from.qhat_mod(i, p))
                    .chain([p.neg(from.product_mod(p))])
                    .map(move |w| p.shoup(w))
            })
            .collect();
        let inv_q = from
            .moduli()
            .iter()
            .map(|q| 1.0 / q.value() as f64)
            .collect();
        let qu_xu = match mode {
            ConversionMode::ExactInteger => Some(Self::qu_xu_tables(from, failure_target)?),
            _ => None,
        };
        let narrow = from
            .moduli()
            .iter()
            .chain(to.moduli())
            .all(|m| m.value() <= NARROW_BOUND);
        Ok(Self {
            from: Arc::clone(from),
            to: Arc::clone(to),
            mode,
            qhat_inv: from.qhat_inv().to_vec(),
            weights,
            inv_q,
            qu_xu,
            narrow,
        })
    }

    /// Finds the best power `2^m`, checks Qu-Xu Theorem 1's precondition and builds the exact-guard tables.
    fn qu_xu_tables(from: &RnsBasis, r: f64) -> Result<QuXuTables> {
        let values = from.values();
        let l = values.len();
        let closeness = QuXuCloseness::of(&values);
        let QuXuCloseness {
            power: m,
            eta,
            deviation: delta,
            ..
        } = closeness;
        let bound = theorem1_eta_lower_bound(l, r);
        let unavailable = |detail: String| {
            Error::ConversionUnavailable {
            mode: ConversionMode::ExactInteger.name(),
            reason: format!(
                "Qu-Xu Theorem 1 needs every source modulus within a factor (1 ± 2^-eta) of a power of two \
                 2^m with eta > log2((r + l) / r) = {bound:.3} for l = {l} moduli and failure target \
                 r = 2^{:.2}; {detail}. Generate the moduli with rnsfhe_math::primes::qu_xu_max_eta and \
                 qu_xu_primes, pass a larger r to BasisConverter::with_failure_target, or use ExactFloat",
                r.log2()
            ),
        }
        };
        if (eta as f64) <= bound {
            return Err(unavailable(format!(
                "the best power 2^{m} gives only eta = {eta} (moduli {values:?})"
            )));
        }
        let two_m = 1u64 << m;
        // Implied by eta > log2((r + l) / r) with r <= 1/4 (delta <= l 2^m 2^-eta / (1 - 2^-eta) < r 2^m),
        // checked anyway because the guard's two-candidate argument needs it.
        if delta > two_m >> 2 {
            return Err(unavailable(format!(
                "sum |q_i - 2^{m}| = {delta} exceeds 2^{}",
                m - 2
            )));
        }
        debug_assert!(closeness.admits(r));
        // Q < 2^(64 * product_words); 2 (l + 2) Q needs at most one more word for any l < 2^62.
        let product_bits: f64 = values.iter().map(|&q| (q as f64).log2()).sum();
        let words = (product_bits / 64.0).ceil() as usize + 2;
        let (q, qhat) = multiword::crt_products(&values, words);
        Ok(QuXuTables {
            m,
            eta,
            failure_target: r,
            delta,
            words,
            qhat,
            q,
        })
    }

    /// The source basis `C`.
    #[inline]
    pub fn from(&self) -> &Arc<RnsBasis> {
        &self.from
    }

    /// The target basis `B`.
    #[inline]
    pub fn to(&self) -> &Arc<RnsBasis> {
        &self.to
    }

    /// The conversion mode.
    #[inline]
    pub fn mode(&self) -> ConversionMode {
        self.mode
    }

    /// For [`ConversionMode::ExactInteger`]: the closeness `eta` of the source moduli to `2^m` (Qu-Xu
    /// Section 3.3); `None` in the other modes.
    pub fn eta(&self) -> Option<u32> {
        self.qu_xu.as_ref().map(|t| t.eta)
    }

    /// For [`ConversionMode::ExactInteger`]: the exponent `m` with all source moduli close to `2^m`.
    pub fn power_of_two_exponent(&self) -> Option<u32> {
        self.qu_xu.as_ref().map(|t| t.m)
    }

    /// For [`ConversionMode::ExactInteger`]: the failure target `r` the source basis was checked against.
    pub fn failure_target(&self) -> Option<f64> {
        self.qu_xu.as_ref().map(|t| t.failure_target)
    }

    /// For [`ConversionMode::ExactInteger`]: Qu-Xu Theorem 1's bound `l 2^-eta / (1 - 2^-eta)` on the
    /// probability that the unguarded error term ([`BasisConverter::qu_xu_error_terms_unguarded`]) is off.
    pub fn theorem1_bound(&self) -> Option<f64> {
        self.qu_xu
            .as_ref()
            .map(|t| theorem1_failure_bound(self.from.len(), t.eta))
    }

    /// The guarantee this converter gives; see [`Exactness`].
    pub fn exactness(&self) -> Exactness {
        let l = self.from.len();
        match self.mode {
            ConversionMode::Fast => Exactness::UpToMultipleOfQ {
                alpha_bound: l.div_ceil(2),
            },
            ConversionMode::ExactFloat => Exactness::CenteredUnlessNearHalf {
                relative_margin: ((l + 2) * (l + 2)) as f64 * 2f64.powi(-53),
            },
            ConversionMode::ExactInteger => Exactness::Centered,
        }
    }

    /// Converts a polynomial over the source basis to the target basis, coefficient by coefficient
    /// (RNS-CKKS Section 2.3 `Conv_{C -> B}`, HPS Section 2.2, Qu-Xu Algorithms 1 and 4 by mode).
    ///
    /// Errors: [`Error::BasisMismatch`] if `x` is not over [`BasisConverter::from`].
    pub fn convert(&self, x: &Poly<Coeff>) -> Result<Poly<Coeff>> {
        if !Arc::ptr_eq(x.basis(), &self.from) {
            self.from.check_same(
                x.basis(),
                "basis conversion (converter source basis vs input)",
            )?;
        }
        let mut out = crate::parallel::zeroed(self.to.len() * self.to.degree());
        self.convert_into(x.data(), &mut out)?;
        Ok(Poly::from_data_unchecked(&self.to, out))
    }

    /// The conversion on raw limb-major buffers: `input` holds `l x N` words (limb `i` at `[i N, (i + 1) N)`),
    /// `output` receives `k x N` words, each residue in `[0, p_j)`.
    ///
    /// Input words need not be reduced: each is read as its residue modulo its limb's modulus.
    /// Errors: [`Error::LengthMismatch`] for buffers of the wrong length.
    pub fn convert_into(&self, input: &[u64], output: &mut [u64]) -> Result<()> {
        let n = self.check_lengths(input, output)?;
        self.convert_limbs(input, n, output.chunks_exact_mut(n).collect())
    }

    /// [`BasisConverter::convert_into`] with one output slice of `N` words per target limb (for example
    /// limbs scattered in a larger buffer).
    ///
    /// Errors: [`Error::LengthMismatch`] unless `input` has `l x N` words, `outputs` has `k` slices and each
    /// has `N` words.
    pub fn convert_into_limbs(&self, input: &[u64], outputs: Vec<&mut [u64]>) -> Result<()> {
        let n = self.check_input_len(input)?;
        if outputs.len() != self.to.len() {
            return Err(Error::LengthMismatch {
                what: "basis conversion outputs (target limbs)",
                expected: self.to.len(),
                got: outputs.len(),
            });
        }
        if let Some(bad) = outputs.iter().find(|o| o.len() != n) {
            return Err(Error::LengthMismatch {
                what: "basis conversion output limb (N words)",
                expected: n,
                got: bad.len(),
            });
        }
        self.convert_limbs(input, n, outputs)
    }

    /// The conversion from a single source modulus `q` (ModUp from one digit and ModDown by one special
    /// prime, as blind rotation's gadget does): no sum over source limbs is needed, and every mode's
    /// result is the centered representative of `x` (`x - q` above `q/2`): the exact modes by
    /// definition, the fast mode because its rounding term `round(x / q)` is exact for one limb. One
    /// pass per target limb instead of the general blocked algorithm, the same output.
    fn convert_single(&self, input: &[u64], outputs: Vec<&mut [u64]>) {
        let q = &self.from.moduli()[0];
        // Transform outputs are reduced; other callers may pass any word (read as its residue).
        let reduced;
        let input = if input.iter().all(|&x| x < 2 * q.value()) {
            input
        } else {
            reduced = input.iter().map(|&x| q.reduce(x)).collect::<Vec<_>>();
            &reduced
        };
        let n = input.len();
        // Only large rings: at `N = 2^12` (blind rotation) the conversion is shorter than a thread
        // wake-up.
        if n >= 1 << 14
            && n * (1 + outputs.len()) >= PARALLEL_THRESHOLD
            && rayon::current_num_threads() > 1
        {
            // Parts of limbs, not whole limbs: with one target limb (ring packing over q_0, ModDown
            // by one special prime) a whole-limb split would leave the other threads idle.
            let part = BLOCK.max(n / 4).min(n);
            let jobs: Vec<(usize, &mut [u64], &rnsfhe_math::Modulus)> = outputs
                .into_iter()
                .zip(self.to.moduli())
                .flat_map(|(out, p)| {
                    out.chunks_mut(part)
                        .enumerate()
                        .map(move |(b, o)| (b * part, o, p))
                })
                .collect();
            jobs.into_par_iter().for_each(|(start, out, p)| {
                centered_lift(q, p, &input[start..start + out.len()], out);
            });
        } else {
            for (out, p) in outputs.into_iter().zip(self.to.moduli()) {
                centered_lift(q, p, input, out);
            }
        }
    }

    fn convert_limbs(&self, input: &[u64], n: usize, outputs: Vec<&mut [u64]>) -> Result<()> {
        if self.from.len() == 1 {
            self.convert_single(input, outputs);
            return Ok(());
        }
        let block = BLOCK.min(n);
        let (l, k) = (self.from.len(), self.to.len());
        let words = self.qu_xu.as_ref().map_or(0, |t| t.words);
        // Per block, the k output slices it writes (one per target limb): disjoint, so blocks can run in
        // parallel without unsafe code.
        let blocks = n.div_ceil(block);
        let mut per_block: Vec<Vec<&mut [u64]>> =
            (0..blocks).map(|_| Vec::with_capacity(k)).collect();
        for limb in outputs {
            for (b, chunk) in limb.chunks_mut(block).enumerate() {
                per_block[b].push(chunk);
            }
        }
        let run = |scratch: &mut Scratch, (b, mut outs): (usize, Vec<&mut [u64]>)| {
            self.convert_block(input, n, b * block, &mut outs, scratch);
        };
        if blocks > 1 && n * (l + k) >= PARALLEL_THRESHOLD && rayon::current_num_threads() > 1 {
            per_block
                .into_par_iter()
                .enumerate()
                .for_each_init(|| Scratch::new(l, block, words), run);
        } else {
            let mut scratch = Scratch::new(l, block, words);
            per_block
                .into_iter()
                .enumerate()
                .for_each(|item| run(&mut scratch, item));
        }
        Ok(())
    }

    /// The rounding terms `v` this converter subtracts (`output = sum_i y_i qhat_i - v Q mod p_j`), one per
    /// coefficient of the limb-major `input` (`l x N` words): the number of `y_i > q_i / 2` for `Fast`,
    /// `round(sum_i y_i / q_i)` for the exact modes (guarded and therefore exact for `ExactInteger`). For tests and benchmarks.
    ///
    /// Errors: [`Error::LengthMismatch`] if `input` is not `l x N` words.
    pub fn error_terms(&self, input: &[u64]) -> Result<Vec<u64>> {
        let n = self.check_input_len(input)?;
        let block = BLOCK.min(n);
        let words = self.qu_xu.as_ref().map_or(0, |t| t.words);
        let mut scratch = Scratch::new(self.from.len(), block, words);
        let mut out = vec![0u64; n];
        for (b, chunk) in out.chunks_mut(block).enumerate() {
            let len = chunk.len();
            self.compute_y(input, n, b * block, len, &mut scratch);
            self.compute_v(len, &mut scratch);
            chunk.copy_from_slice(&scratch.v[..len]);
        }
        Ok(out)
    }

    /// The raw, unguarded Qu-Xu error term for every coefficient of the limb-major `input` (`l x N` words):
    /// Algorithm 4 (branch-free accumulation of `y_i` modulo `2^m` with carries into `e`) extended with the
    /// final rounding bit, i.e. `round(sum_i y_i / 2^m)` instead of the exact `round(sum_i y_i / q_i)`.
    ///
    /// By Qu-Xu Theorem 1 it differs from the exact term by exactly ±1 with probability below
    /// `l 2^-eta / (1 - 2^-eta)` ([`BasisConverter::theorem1_bound`]); on uniform inputs the expected rate
    /// is `E|sum_i u_i (1 - q_i / 2^m)|` with `u_i` uniform in `[0, 1)`, at most half that bound. The
    /// converter itself never uses this value unguarded. For tests and benchmarks.
    ///
    /// Errors: [`Error::ConversionUnavailable`] unless the mode is `ExactInteger`;
    /// [`Error::LengthMismatch`] if `input` is not `l x N` words.
    pub fn qu_xu_error_terms_unguarded(&self, input: &[u64]) -> Result<Vec<u64>> {
        let Some(t) = &self.qu_xu else {
            return Err(Error::ConversionUnavailable {
                mode: self.mode.name(),
                reason:
                    "the unguarded Qu-Xu error term needs a converter built in ExactInteger mode \
                         (which fixes the power 2^m)"
                        .into(),
            });
        };
        let n = self.check_input_len(input)?;
        let block = BLOCK.min(n);
        let mut scratch = Scratch::new(self.from.len(), block, t.words);
        let mut out = vec![0u64; n];
        for (b, chunk) in out.chunks_mut(block).enumerate() {
            let len = chunk.len();
            self.compute_y(input, n, b * block, len, &mut scratch);
            qu_xu_accumulate(
                &scratch.y,
                block,
                len,
                t.m,
                &mut scratch.v,
                &mut scratch.rem,
            );
            for (o, (&e, &rem)) in chunk.iter_mut().zip(scratch.v.iter().zip(&scratch.rem)) {
                *o = e + (rem >> (t.m - 1));
            }
        }
        Ok(out)
    }

    fn check_input_len(&self, input: &[u64]) -> Result<usize> {
        let n = self.from.degree();
        if input.len() != self.from.len() * n {
            return Err(Error::LengthMismatch {
                what: "basis conversion input (source limbs x N)",
                expected: self.from.len() * n,
                got: input.len(),
            });
        }
        Ok(n)
    }

    fn check_lengths(&self, input: &[u64], output: &[u64]) -> Result<usize> {
        let n = self.check_input_len(input)?;
        if output.len() != self.to.len() * n {
            return Err(Error::LengthMismatch {
                what: "basis conversion output (target limbs x N)",
                expected: self.to.len() * n,
                got: output.len(),
            });
        }
        Ok(n)
    }

    /// `y_i = [x_i qhat_i^-1]_{q_i}` for coefficients `start..start + len`, limb by limb (Shoup).
    #[inline]
    fn compute_y(&self, input: &[u64], n: usize, start: usize, len: usize, s: &mut Scratch) {
        let block = s.v.len();
        for (i, (qi, &w)) in self.from.moduli().iter().zip(&self.qhat_inv).enumerate() {
            let src = &input[i * n + start..i * n + start + len];
            let dst = &mut s.y[i * block..i * block + len];
            map_in_place(qi, dst, [src], &MulShoup(w));
        }
    }

    /// The rounding term `v` of the mode for the first `len` coefficients of the block in `s.y`.
    fn compute_v(&self, len: usize, s: &mut Scratch) {
        let block = s.v.len();
        match self.mode {
            ConversionMode::Fast => {
                // Centered y_i: subtract Q once for every y_i above q_i / 2.
                let v = &mut s.v[..len];
                v.fill(0);
                for (i, qi) in self.from.moduli().iter().enumerate() {
                    let half = qi.value() / 2;
                    let row = &s.y[i * block..i * block + len];
                    for (vc, &y) in v.iter_mut().zip(row) {
                        *vc += u64::from(y > half);
                    }
                }
            }
            ConversionMode::ExactFloat => {
                // HPS Section 2.2: v = round(sum_i y_i / q_i); all terms are >= 0, so `as u64` floors.
                let fl = &mut s.fl[..len];
                fl.fill(0.0);
                for (i, &inv) in self.inv_q.iter().enumerate() {
                    let row = &s.y[i * block..i * block + len];
                    for (f, &y) in fl.iter_mut().zip(row) {
                        *f += y as f64 * inv;
                    }
                }
                for (v, &f) in s.v[..len].iter_mut().zip(fl.iter()) {
                    *v = (f + 0.5) as u64;
                }
            }
            ConversionMode::ExactInteger => {
                let Some(t) = &self.qu_xu else {
                    // Unreachable: the tables are built whenever the mode is ExactInteger.
                    debug_assert!(false, "ExactInteger converter without Qu-Xu tables");
                    s.v[..len].fill(0);
                    return;
                };
                qu_xu_accumulate(&s.y, block, len, t.m, &mut s.v, &mut s.rem);
                let half = 1u64 << (t.m - 1);
                // Uncertain iff |rem - 2^(m-1)| < delta, i.e. rem in [half - delta + 1, half + delta - 1]
                // (delta >= 1 because every q_i is odd, and delta <= 2^(m-2) was checked).
                let lo = half - t.delta + 1;
                let width = 2 * t.delta - 1;
                for c in 0..len {
                    let rem = s.rem[c];
                    let t_floor = s.v[c];
                    s.v[c] = t_floor + (rem >> (t.m - 1));
                    if rem.wrapping_sub(lo) < width {
                        s.v[c] = self.qu_xu_exact(t, &s.y, block, c, t_floor, &mut s.mw);
                    }
                }
            }
        }
    }

    /// Exact `v = round(sum_i y_i / q_i)` for one coefficient, knowing `v in {t, t + 1}`:
    /// `v = t + 1` iff `sum_i y_i / q_i + 1/2 >= t + 1` iff `2 sum_i y_i qhat_i >= (2t + 1) Q`
    /// (multiply by `Q = q_i qhat_i`). Both sides are computed exactly in multi-word integers.
    #[cold]
    fn qu_xu_exact(
        &self,
        t: &QuXuTables,
        y: &[u64],
        block: usize,
        c: usize,
        t_floor: u64,
        mw: &mut [u64],
    ) -> u64 {
        let w = t.words;
        let (acc, rest) = mw.split_at_mut(w);
        let (lhs, rhs) = rest.split_at_mut(w);
        acc.fill(0);
        for (i, qhat) in t.qhat.chunks_exact(w).enumerate() {
            multiword::mac(acc, qhat, y[i * block + c]);
        }
        multiword::double(lhs, acc);
        rhs.fill(0);
        multiword::mac(rhs, &t.q, 2 * t_floor + 1);
        match multiword::cmp(lhs, rhs) {
            Ordering::Less => t_floor,
            _ => t_floor + 1,
        }
    }

    /// One block: `y`, `v`, then every target limb accumulated lazily in `u128`.
    fn convert_block(
        &self,
        input: &[u64],
        n: usize,
        start: usize,
        outs: &mut [&mut [u64]],
        s: &mut Scratch,
    ) {
        let Some(len) = outs.first().map(|o| o.len()) else {
            return;
        };
        let block = s.v.len();
        let l = self.from.len();
        self.compute_y(input, n, start, len, s);
        self.compute_v(len, s);
        // Each target residue is sum_i y_i [Q/q_i]_{p_j} - v [Q]_{p_j}, one vectorized multiply-accumulate
        // over the block's rows.
        let mut rows: Vec<&[u64]> = s.y.chunks_exact(block).map(|r| &r[..len]).collect();
        rows.push(&s.v[..len]);
        for (j, out) in outs.iter_mut().enumerate() {
            let w = &self.weights[j * (l + 1)..j * (l + 1) + rows.len()];
            let w = Weights::per_row(w, self.narrow);
            sum_of_products(&self.to.moduli()[j], &rows, w, out);
        }
    }
}

/// Qu-Xu Algorithm 4 over a block: for each coefficient `c`, accumulates `S = sum_i y_i` as
/// `e[c] 2^m + rem[c]` with `0 <= rem[c] < 2^m`, using only additions, shifts and masks (no branches;
/// the loop over coefficients vectorizes). Unlike the paper's `e += temp & q`, the carry is `temp >> m`, which
/// stays correct when `q_i > 2^m` makes `temp + y_i` reach `2^(m+1)`.
#[inline]
fn qu_xu_accumulate(y: &[u64], block: usize, len: usize, m: u32, e: &mut [u64], rem: &mut [u64]) {
    let mask = (1u64 << m) - 1;
    let e = &mut e[..len];
    let rem = &mut rem[..len];
    e.fill(0);
    rem.fill(0);
    for row in y.chunks_exact(block) {
        for ((ec, rc), &yc) in e.iter_mut().zip(rem.iter_mut()).zip(&row[..len]) {
            // rem < 2^m and y < q_i < 2^(m+1): the sum stays below 2^63 for m <= 61.
            let t = *rc + yc;
            *ec += t >> m;
            *rc = t & mask;
        }
    }
}

/// The unguarded Qu-Xu error term of one coefficient from its `y_i = [x_i qhat_i^-1]_{q_i}`: Algorithm 4
/// plus the final rounding bit, `round(sum_i y_i / 2^m)` (see
/// [`BasisConverter::qu_xu_error_terms_unguarded`] for the whole-polynomial version and Theorem 1's bound).
///
/// Errors: [`Error::OutOfRange`] unless `1 <= m <= 61`.
pub fn qu_xu_error_term_unguarded(y: &[u64], m: u32) -> Result<u64> {
    if !(1..=61).contains(&m) {
        return Err(Error::OutOfRange {
            what: "Qu-Xu exponent m",
            value: m as f64,
            min: 1.0,
            max: 61.0,
        });
    }
    let mask = (1u64 << m) - 1;
    let (mut e, mut rem) = (0u64, 0u64);
    for &yi in y {
        // Any word y_i: add in u128 so that arbitrary inputs cannot overflow.
        let t = rem as u128 + yi as u128;
        e = e.wrapping_add((t >> m) as u64);
        rem = (t as u64) & mask;
    }
    Ok(e + (rem >> (m - 1)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn multiword_helpers() {
        let mut a = vec![0u64; 4];
        a[0] = 1;
        for w in [u64::MAX, u64::MAX, 12345] {
            multiword::mul_word(&mut a, w);
        }
        let expect = (u64::MAX as u128) * (u64::MAX as u128);
        let mut b = vec![0u64; 4];
        multiword::mac(&mut b, &[expect as u64, (expect >> 64) as u64, 0, 0], 12345);
        assert_eq!(a, b);
        let mut d = vec![0u64; 4];
        multiword::double(&mut d, &a);
        assert_eq!(multiword::cmp(&d, &a), Ordering::Greater);
        assert_eq!(multiword::cmp(&a, &b), Ordering::Equal);
    }

    #[test]
    fn closeness_figures_match_the_converter() {
        use rnsfhe_math::primes::{ntt_primes_of_bits, qu_xu_max_eta, qu_xu_primes};
        let n = 1024;
        let two_n = 2 * n as u64;
        let target = RnsBasis::new(n, &ntt_primes_of_bits(45, two_n, 2, &[]).unwrap()).unwrap();
        let near = |m: u32, l: usize| {
            let eta = qu_xu_max_eta(m, two_n, l).unwrap();
            qu_xu_primes(m, eta, two_n, l, &[]).unwrap()
        };
        let mut mixed = near(40, 2);
        mixed.extend(near(50, 2));
        let generic = ntt_primes_of_bits(50, two_n, 3, &[]).unwrap();
        for moduli in [near(40, 3), near(55, 8), near(30, 1), mixed, generic] {
            let c = QuXuCloseness::of(&moduli);
            assert_eq!(c.moduli, moduli.len());
            let from = RnsBasis::new(n, &moduli).unwrap();
            for r in [2f64.powi(-20), 1.0 / 1024.0, 0.001, 0.25] {
                let conv = BasisConverter::with_failure_target(
                    &from,
                    &target,
                    ConversionMode::ExactInteger,
                    r,
                );
                assert_eq!(conv.is_ok(), c.admits(r), "{moduli:?}, r = {r}: {c:?}");
                if let Ok(conv) = conv {
                    assert_eq!(conv.eta(), Some(c.eta));
                    assert_eq!(conv.power_of_two_exponent(), Some(c.power));
                    assert_eq!(conv.theorem1_bound(), Some(c.failure_bound()));
                    assert!(c.failure_bound() < r);
                }
            }
        }
        assert_eq!(QuXuCloseness::of(&[]).failure_bound(), 0.0);
        assert!(!QuXuCloseness::of(&[]).admits(0.25));
        assert_eq!(theorem1_failure_bound(3, 0), f64::INFINITY);
        assert!((theorem1_failure_bound(2, 1) - 2.0).abs() < 1e-15);
        // Fig. 1 (r = 0.001): the bound grows from log2(2001) at l = 2 to log2(40001) at l = 40.
        assert!((theorem1_eta_lower_bound(2, 0.001) - 2001f64.log2()).abs() < 1e-9);
        assert!((theorem1_eta_lower_bound(40, 0.001) - 40001f64.log2()).abs() < 1e-9);
        // eta exactly at the bound's edge: the failure bound is r itself.
        let r = theorem1_failure_bound(5, 12);
        assert!((theorem1_eta_lower_bound(5, r) - 12.0).abs() < 1e-9);
    }

    #[test]
    fn unguarded_term_rejects_bad_m() {
        assert!(qu_xu_error_term_unguarded(&[1, 2], 0).is_err());
        assert!(qu_xu_error_term_unguarded(&[1, 2], 62).is_err());
        assert_eq!(qu_xu_error_term_unguarded(&[3, 3], 2).unwrap(), 2);
        assert_eq!(
            qu_xu_error_term_unguarded(&[u64::MAX, u64::MAX], 61).unwrap(),
            16
        );
    }
}
