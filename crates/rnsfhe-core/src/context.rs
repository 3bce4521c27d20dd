//! RLWE parameters and the immutable, shared context built from them.
//!
//! # Level convention
//!
//! Throughout `rnsfhe-core` a **level is a limb count**: an object at level `l` lives over the prefix
//! `Q_l = q_0 q_1 ... q_{l-1}` of the modulus chain, `1 <= l <= L` with `L = q_moduli.len()`. The papers
//! (RNS-CKKS Sections 3-4, Han-Ki Section 2.4) call the same ciphertext "level `l - 1`" (a ciphertext over
//! `q_0 .. q_ell` has level `ell`); we count limbs so that a level is directly the length of the basis
//! prefix and no off-by-one crosses the API.
//!
//! # What the context caches
//!
//! * the chain `Q` and its prefixes, the special basis `P = p_0 .. p_{k-1}` and the extended basis
//!   `QP = Q ∪ P` (limbs of `Q` first, then `P`; RNS-CKKS writes `D = B ∪ C` with `P` first, the order
//!   does not matter for RNS but matters for indexing: key limb `L + i` is `p_i`);
//! * the [`RnsGadget`] of hybrid key switching with `dnum` digit groups (Han-Ki Section 2.4; GHS when
//!   `dnum = 1`) and the residues of `P g_j` over `QP` that key-switching keys encrypt;
//! * the [`Rescaler`] of the chain (RNS-CKKS Section 3.1);
//! * per level `l`, built lazily once ([`OnceLock`]) and shared: the ModUp converters of every digit group
//!   touched at level `l` (group basis `Q_j ∩ Q_l` to `(Q_l \ Q_j) ∪ P`, RNS-CKKS Algorithm 1 generalized
//!   to digits) and the ModDown tables (`Conv_{P -> Q_l}` and `[P^-1]_{q_i}`, RNS-CKKS Algorithm 2), in the
//!   conversion mode of the parameters;
//! * the NTT slot permutations of the Galois elements used so far.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, OnceLock, RwLock};

use rnsfhe_math::sampling::DiscreteGaussian;
use rnsfhe_math::wire::Fingerprints;
use rnsfhe_math::ShoupConstant;
use rnsfhe_ring::poly::ntt_automorphism_permutation;
use rnsfhe_ring::{
    BasisConverter, ConversionMode, Form, GaloisElement, ModSwitcher, Poly, Rescaler, RnsBasis,
    RnsGadget,
};

use crate::error::{Error, Result};

/// Hamming weight of the sparse secret of the RNS-CKKS paper's experiments (Section 5, `h = 64`).
pub const DEFAULT_HAMMING_WEIGHT: usize = 64;

/// The distribution of the secret key `s`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SecretDistribution {
    /// Uniform ternary: every coefficient independently in `{-1, 0, 1}` with probability 1/3 each
    /// (the default of the Homomorphic Encryption Standard tables).
    #[default]
    Ternary,
    /// Ternary with exactly `h` nonzero coefficients (`chi_key` of RNS-CKKS Appendix A.2; the paper uses
    /// `h = 64`, [`DEFAULT_HAMMING_WEIGHT`]).
    HammingWeight(usize),
}

/// RLWE parameters, declared as a plain literal struct and checked by [`RlweContext::new`].
///
/// Security (log2 QP against the Homomorphic Encryption Standard table) is checked by the scheme crates'
/// parameter presets, not here.
#[derive(Clone, Debug, PartialEq)]
pub struct RlweParams {
    /// `log2(N)`: the ring is `Z[X]/(X^N + 1)`.
    pub log_n: u32,
    /// The modulus chain `q_0, ..., q_{L-1}`: distinct NTT primes (`q = 1 mod 2N`). Level `l` uses the
    /// first `l` of them.
    pub q_moduli: Vec<u64>,
    /// The special primes `p_0, ..., p_{k-1}` of key switching (RNS-CKKS Section 3.3), distinct from the
    /// chain. For small key-switching noise `P = prod p_i` should be at least the largest digit `Q_j`.
    pub p_moduli: Vec<u64>,
    /// Number of digit groups of hybrid key switching (Han-Ki Section 2.4), `1 <= dnum <= L`; `1` is GHS.
    pub dnum: usize,
    /// Basis conversion used by ModUp and ModDown (fast, HPS floating-point exact or Qu-Xu integer exact).
    pub conversion: ConversionMode,
    /// Distribution of the secret key.
    pub secret: SecretDistribution,
    /// Standard deviation of the discrete Gaussian error (3.2 in the papers), tail cut at 6 sigma.
    pub sigma: f64,
}

impl RlweParams {
    /// The fingerprint of the parameters, computed from the literal values alone (no context is built, so
    /// a loader can compare it with a header before any precomputation). It covers every parameter that
    /// changes what a key or ciphertext means or how safe it is: `N`, `Q`, `P`, `dnum`, the secret
    /// distribution (and its Hamming weight) and the error width `sigma` (its exact bits). The conversion
    /// mode is left out: it changes how key switching computes, not its result's meaning.
    pub fn fingerprint(&self) -> u64 {
        let (secret_tag, weight) = match self.secret {
            SecretDistribution::Ternary => (0, 0),
            SecretDistribution::HammingWeight(h) => (1, h as u64),
        };
        fingerprint_words(
            self.legacy_words()
                .chain([secret_tag, weight, self.sigma.to_bits()]),
        )
    }

    /// The fingerprint of wire format version 1, which covered `N`, `Q`, `P` and `dnum` only: what a
    /// reader compares with the header of an object of that version.
    pub fn legacy_fingerprint(&self) -> u64 {
        fingerprint_words(self.legacy_words())
    }

    /// Both fingerprints ([`RlweParams::fingerprint`], [`RlweParams::legacy_fingerprint`]).
    pub fn fingerprints(&self) -> Fingerprints {
        Fingerprints {
            current: self.fingerprint(),
            legacy: self.legacy_fingerprint(),
        }
    }

    /// `log2(Q)` of the chain, from the literal moduli.
    pub fn log2_q(&self) -> f64 {
        self.q_moduli.iter().map(|&q| (q as f64).log2()).sum()
    }

    /// `log2(QP)` of the chain and the special primes, from the literal moduli (what the HE Standard
    /// table bounds for keys with special primes).
    pub fn log2_qp(&self) -> f64 {
        self.log2_q()
            + self
                .p_moduli
                .iter()
                .map(|&p| (p as f64).log2())
                .sum::<f64>()
    }

    fn legacy_words(&self) -> impl Iterator<Item = u64> + '_ {
        std::iter::once(self.log_n as u64)
            .chain(std::iter::once(self.q_moduli.len() as u64))
            .chain(self.q_moduli.iter().copied())
            .chain(std::iter::once(self.p_moduli.len() as u64))
            .chain(self.p_moduli.iter().copied())
            .chain(std::iter::once(self.dnum as u64))
    }
}

impl rnsfhe_math::wire::WireFingerprint for RlweContext {
    fn wire_fingerprint_for(&self, version: u16) -> u64 {
        self.fingerprints.for_version(version)
    }
}

/// ModUp tables of one digit group at one level.
#[derive(Debug)]
pub(crate) struct DigitTables {
    /// Limbs of `Q_l` in this group (a sub-range of `0..l`).
    pub(crate) range: Range<usize>,
    /// `Conv_{Q_j -> (Q_l \ Q_j) ∪ P}`.
    pub(crate) up: BasisConverter,
}

/// Key-switching tables of one level `l`.
#[derive(Debug)]
pub(crate) struct LevelTables {
    /// The level (limb count of `Q_l`).
    pub(crate) limbs: usize,
    /// `Q_l ∪ P`, limbs of `Q_l` first.
    pub(crate) ext: Arc<RnsBasis>,
    /// ModUp per digit group touched at this level.
    pub(crate) digits: Vec<DigitTables>,
    /// `Conv_{P -> Q_l}` of ModDown.
    pub(crate) down: BasisConverter,
    /// `[P^-1]_{q_i}` for `i < l`.
    pub(crate) p_inv: Vec<ShoupConstant>,
    /// ModDown merged with rescaling (division by `P q_{l-1}` at once); `None` at level 1 or when the
    /// conversion mode cannot be built on `{q_{l-1}} ∪ P` (`ExactInteger` needs moduli near one power of
    /// two), in which case ModDown and rescaling run one after the other.
    pub(crate) down_rescale: Option<DownRescaleTables>,
}

/// Tables of ModDown (RNS-CKKS Algorithm 2) merged with rescaling (`RS`, Section 4) at level `l`: the key-switched `x` over `Q_l ∪ P` (plus `P` times
/// the ciphertext part it is added to) is divided by `P q_{l-1}` in one basis conversion, from
/// `S = {q_{l-1}} ∪ P` to `Q_{l-1}`: `(x - Conv_S(x_S)) (P q_{l-1})^-1`. This saves the separate
/// rescaling's inverse NTT and its `l - 1` forward NTTs per part. The conversion is exact (rounded) in every
/// mode, as the rescaling it replaces is.
#[derive(Debug)]
pub(crate) struct DownRescaleTables {
    /// `Conv_{{q_{l-1}} ∪ P -> Q_{l-1}}`.
    pub(crate) conv: BasisConverter,
    /// `[P]_{q_{l-1}}`: the part added to the key-switched value is multiplied by `P` in the limb that is
    /// converted.
    pub(crate) p_mod_last: ShoupConstant,
    /// `[(P q_{l-1})^-1]_{q_j}` for `j < l - 1`.
    pub(crate) inv_p_last: Vec<ShoupConstant>,
    /// `[q_{l-1}^-1]_{q_j}` for `j < l - 1` (the added part's factor `P / (P q_{l-1})`).
    pub(crate) inv_last: Vec<ShoupConstant>,
}

/// The checked, immutable context of an RLWE parameter set: bases, gadget, rescaler, samplers and cached
/// key-switching tables. Built once by [`RlweContext::new`] and shared by `Arc`; `Send + Sync`.
pub struct RlweContext {
    params: RlweParams,
    n: usize,
    fingerprints: Fingerprints,
    q: Arc<RnsBasis>,
    q_levels: Vec<Arc<RnsBasis>>,
    p: Arc<RnsBasis>,
    qp: Arc<RnsBasis>,
    gadget: RnsGadget,
    special_constants: Vec<Vec<u64>>,
    rescaler: Rescaler,
    gaussian: DiscreteGaussian,
    levels: Vec<OnceLock<Arc<LevelTables>>>,
    /// Per level `l`: ModDown from `Q_l ∪ {p_0}` to `Q_l` of public-key encryption
    /// ([`RlweContext::public_key_basis`]), built on first use.
    encryption_down: Vec<OnceLock<Arc<ModSwitcher>>>,
    permutations: RwLock<HashMap<usize, Arc<[usize]>>>,
}

impl std::fmt::Debug for RlweContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RlweContext")
            .field("n", &self.n)
            .field("q", &self.params.q_moduli)
            .field("p", &self.params.p_moduli)
            .field("dnum", &self.params.dnum)
            .field("conversion", &self.params.conversion)
            .field(
                "fingerprint",
                &format_args!("{:#018x}", self.fingerprints.current),
            )
            .finish_non_exhaustive()
    }
}

/// FNV-1a over 64-bit words: the fingerprint of a list of parameters (shared by the schemes, which
/// fingerprint their own parameters on top of the RLWE ones). Not a cryptographic hash: it names a
/// parameter set; the wire format's digest protects the bytes.
pub fn fingerprint_words(words: impl IntoIterator<Item = u64>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for w in words {
        for b in w.to_le_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

impl RlweContext {
    /// Checks `params` and builds the context (RNS-CKKS Section 3.3 "Setup": bases, constants; Han-Ki
    /// Section 2.4: digit groups). The top level's key-switching tables are built eagerly, so a conversion
    /// mode the moduli do not support (Qu-Xu `ExactInteger` needs `Q` and `P` close to powers of two) is
    /// reported here rather than at the first key switch.
    ///
    /// Errors: [`Error::InvalidParams`] for an empty `Q` or `P`, a Hamming weight outside `[1, N]`;
    /// ring/math errors for unsupported degrees, non-NTT primes, repeated moduli, `dnum` outside `[1, L]`,
    /// an invalid `sigma` or an unavailable conversion mode.
    pub fn new(params: RlweParams) -> Result<Arc<Self>> {
        if params.q_moduli.is_empty() {
            return Err(Error::InvalidParams {
                what: "q_moduli",
                reason: "the modulus chain needs at least one prime".into(),
            });
        }
        if params.p_moduli.is_empty() {
            return Err(Error::InvalidParams {
                what: "p_moduli",
                reason: "key switching needs at least one special prime (RNS-CKKS Section 3.3); \
                         choose P at least as large as the largest digit Q_j"
                    .into(),
            });
        }
        if params.log_n >= usize::BITS - 2 {
            return Err(Error::InvalidParams {
                what: "log_n",
                reason: format!(
                    "log_n = {} is far beyond any supported ring degree",
                    params.log_n
                ),
            });
        }
        let n = 1usize << params.log_n;
        if let SecretDistribution::HammingWeight(h) = params.secret {
            if h == 0 || h > n {
                return Err(Error::InvalidParams {
                    what: "secret",
                    reason: format!("Hamming weight h = {h} must be in [1, N = {n}]"),
                });
            }
        }
        let q = RnsBasis::new(n, &params.q_moduli)?;
        let p = RnsBasis::new(n, &params.p_moduli)?;
        let qp = q.concat(&p)?;
        let q_levels = (1..=q.len())
            .map(|l| q.prefix(l))
            .collect::<rnsfhe_ring::Result<Vec<_>>>()?;
        let gadget = RnsGadget::new(&q, params.dnum)?;
        let special_constants = gadget.special_constants(&p)?;
        let rescaler = Rescaler::new(&q)?;
        crate::security::check_sigma(params.sigma).map_err(|reason| Error::InvalidParams {
            what: "sigma",
            reason,
        })?;
        let gaussian = DiscreteGaussian::with_sigma(params.sigma)?;
        let fingerprints = params.fingerprints();
        let levels = (0..q.len()).map(|_| OnceLock::new()).collect();
        let encryption_down = (0..q.len()).map(|_| OnceLock::new()).collect();
        let ctx = Self {
            params,
            n,
            fingerprints,
            q,
            q_levels,
            p,
            qp,
            gadget,
            special_constants,
            rescaler,
            gaussian,
            levels,
            encryption_down,
            permutations: RwLock::new(HashMap::new()),
        };
        ctx.level_tables(ctx.max_level())?;
        Ok(Arc::new(ctx))
    }

    /// The parameters this context was built from.
    pub fn params(&self) -> &RlweParams {
        &self.params
    }

    /// Ring degree `N`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The top level `L` (number of primes in the chain).
    pub fn max_level(&self) -> usize {
        self.q.len()
    }

    /// A fingerprint of the parameters that keys and ciphertexts must share ([`RlweParams::fingerprint`]).
    pub fn fingerprint(&self) -> u64 {
        self.fingerprints.current
    }

    /// The fingerprints of the current and of the first format version ([`RlweParams::fingerprints`]).
    pub fn fingerprints(&self) -> Fingerprints {
        self.fingerprints
    }

    /// The full chain `Q = q_0 .. q_{L-1}`.
    pub fn chain(&self) -> &Arc<RnsBasis> {
        &self.q
    }

    /// The basis `Q_l` of level `l` (the first `l` primes; cached, shared).
    ///
    /// Errors: [`Error::LevelOutOfRange`] unless `1 <= l <= L`.
    pub fn basis_at(&self, level: usize) -> Result<&Arc<RnsBasis>> {
        self.check_level(level, "basis of a level")?;
        Ok(&self.q_levels[level - 1])
    }

    /// The special basis `P`.
    pub fn special_basis(&self) -> &Arc<RnsBasis> {
        &self.p
    }

    /// The extended basis `QP = Q ∪ P` over which keys live (limbs of `Q` first, then `P`).
    pub fn extended_basis(&self) -> &Arc<RnsBasis> {
        &self.qp
    }

    /// The RNS gadget of hybrid key switching (Han-Ki Section 2.4).
    pub fn gadget(&self) -> &RnsGadget {
        &self.gadget
    }

    /// Residues over `QP` of `P g_j` for every digit group `j` (what a key-switching key encrypts, times
    /// the new secret).
    pub fn special_constants(&self) -> &[Vec<u64>] {
        &self.special_constants
    }

    /// The rescaler of the chain (RNS-CKKS Section 3.1, rescaling by the last prime).
    pub fn rescaler(&self) -> &Rescaler {
        &self.rescaler
    }

    /// The error sampler (discrete Gaussian of standard deviation `sigma`, tail cut `6 sigma`).
    pub fn gaussian(&self) -> &DiscreteGaussian {
        &self.gaussian
    }

    /// Checks `1 <= level <= L`.
    pub(crate) fn check_level(&self, level: usize, operation: &'static str) -> Result<()> {
        if level == 0 || level > self.max_level() {
            return Err(Error::LevelOutOfRange {
                operation,
                level,
                max: self.max_level(),
            });
        }
        Ok(())
    }

    /// Checks that a fingerprint is this context's.
    pub(crate) fn check_fingerprint(&self, got: u64, object: &'static str) -> Result<()> {
        if got == self.fingerprints.current {
            Ok(())
        } else {
            Err(Error::ContextMismatch {
                object,
                expected: self.fingerprints.current,
                got,
            })
        }
    }

    /// The level of a polynomial over a prefix of `Q` (its limb count).
    ///
    /// Errors: [`Error::NotOnChain`] if its basis is not a prefix of the chain.
    pub fn level_of<F: Form>(&self, x: &Poly<F>, object: &'static str) -> Result<usize> {
        let b = x.basis();
        if self.q.has_prefix(b) {
            Ok(b.len())
        } else {
            Err(Error::NotOnChain {
                object,
                limbs: b.len(),
                n: b.degree(),
                moduli: b.values(),
                chain_limbs: self.q.len(),
                chain_n: self.n,
            })
        }
    }

    /// The basis of public keys, `Q ∪ {p_0}`: the chain and the first special prime. Public-key
    /// encryption computes `v pk + (e_0 + p_0 m, e_1)` over `Q_l ∪ {p_0}` and divides by `p_0` with
    /// rounding (SEAL's encryption, `Encryptor::encrypt_zero_internal` dividing by the special prime): the
    /// key's error `v e + e_0 + e_1 s` shrinks by `p_0` and what remains is the rounding, `r_0 + r_1 s`
    /// with `|r_i| <= 1/2`, about 4 bits below the error of the same encryption over `Q` at `N = 2^16`.
    /// One special prime suffices (the error is far below `p_0`), so the key and the encryption carry
    /// one limb more than over `Q`, whatever the number of special primes.
    ///
    /// Errors: none in practice (the bases were checked when the context was built).
    pub fn public_key_basis(&self) -> Result<Arc<RnsBasis>> {
        Ok(Arc::clone(self.encryption_switcher(self.max_level())?.qp()))
    }

    /// ModDown by `p_0` at level `l` for public-key encryption (see [`RlweContext::public_key_basis`]),
    /// built on first use and cached; its `qp()` is `Q_l ∪ {p_0}`. The conversion from the single prime
    /// `p_0` is `ExactFloat` (exact rounding but with probability about `2^-50` per coefficient) in
    /// every conversion mode: from one prime it costs no more than `Fast`, whose error would reach 1.
    pub(crate) fn encryption_switcher(&self, level: usize) -> Result<Arc<ModSwitcher>> {
        self.check_level(level, "public-key encryption")?;
        let slot = &self.encryption_down[level - 1];
        if let Some(t) = slot.get() {
            return Ok(Arc::clone(t));
        }
        let p0 = self.p.prefix(1)?;
        let built = Arc::new(ModSwitcher::new(
            &self.q_levels[level - 1],
            &p0,
            ConversionMode::ExactFloat,
        )?);
        Ok(Arc::clone(slot.get_or_init(|| built)))
    }

    /// The key-switching tables of level `l`, built on first use and cached.
    pub(crate) fn level_tables(&self, level: usize) -> Result<Arc<LevelTables>> {
        self.check_level(level, "key switching")?;
        let slot = &self.levels[level - 1];
        if let Some(t) = slot.get() {
            return Ok(Arc::clone(t));
        }
        let built = Arc::new(self.build_level_tables(level)?);
        Ok(Arc::clone(slot.get_or_init(|| built)))
    }

    fn build_level_tables(&self, level: usize) -> Result<LevelTables> {
        let q_l = &self.q_levels[level - 1];
        let ext = q_l.concat(&self.p)?;
        let mode = self.params.conversion;
        let plans = ext.plans();
        let digits = self
            .gadget
            .groups_at(level)?
            .into_iter()
            .enumerate()
            .map(|(j, range)| {
                let src = self.gadget.group_basis_at(j, level)?;
                let complement_plans = plans[..range.start]
                    .iter()
                    .chain(&plans[range.end..])
                    .cloned()
                    .collect();
                let complement = RnsBasis::from_plans(self.n, complement_plans)?;
                let up = BasisConverter::new(&src, &complement, mode)?;
                Ok(DigitTables { range, up })
            })
            .collect::<Result<Vec<_>>>()?;
        let down = BasisConverter::new(&self.p, q_l, mode)?;
        let p_inv = q_l
            .moduli()
            .iter()
            .map(|qi| Ok(qi.shoup(qi.inv(self.p.product_mod(qi))?)))
            .collect::<Result<Vec<_>>>()?;
        let down_rescale = if level >= 2 {
            self.build_down_rescale(level, &ext, mode)?
        } else {
            None
        };
        Ok(LevelTables {
            limbs: level,
            ext,
            digits,
            down,
            p_inv,
            down_rescale,
        })
    }

    fn build_down_rescale(
        &self,
        level: usize,
        ext: &Arc<RnsBasis>,
        mode: ConversionMode,
    ) -> Result<Option<DownRescaleTables>> {
        let plans = ext.plans();
        let src = RnsBasis::from_plans(self.n, plans[level - 1..].to_vec())?;
        let q_lower = &self.q_levels[level - 2];
        // The division replaces an exactly rounded rescaling as well as ModDown: in the fast mode its
        // conversion is exact too (HPS floating-point rounding; a fast conversion would add up to k + 1
        // whole multiples of the secret and cost about 2 bits, measured).
        let mode = match mode {
            ConversionMode::Fast => ConversionMode::ExactFloat,
            exact => exact,
        };
        let conv = match BasisConverter::new(&src, q_lower, mode) {
            Ok(c) => c,
            // Only ExactInteger can refuse a basis (its moduli must be near one power of two).
            Err(_) if mode == ConversionMode::ExactInteger => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let last = &ext.moduli()[level - 1];
        let mut inv_p_last = Vec::with_capacity(level - 1);
        let mut inv_last = Vec::with_capacity(level - 1);
        for qj in q_lower.moduli() {
            let ql = qj.reduce(last.value());
            inv_p_last.push(qj.shoup(qj.inv(qj.mul(self.p.product_mod(qj), ql))?));
            inv_last.push(qj.shoup(qj.inv(ql)?));
        }
        Ok(Some(DownRescaleTables {
            conv,
            p_mod_last: last.shoup(self.p.product_mod(last)),
            inv_p_last,
            inv_last,
        }))
    }

    /// The NTT slot permutation of `X -> X^k` (`out[j] = in[perm[j]]`), computed once per Galois element and
    /// cached.
    ///
    /// Errors: a ring error ([`rnsfhe_ring::Error::GaloisDegreeMismatch`]) if `element` belongs to another
    /// ring degree.
    pub fn galois_permutation(&self, element: GaloisElement) -> Result<Arc<[usize]>> {
        element.check_degree(self.n, "Galois permutation")?;
        if let Ok(map) = self.permutations.read() {
            if let Some(p) = map.get(&element.value()) {
                return Ok(Arc::clone(p));
            }
        }
        let perm: Arc<[usize]> = ntt_automorphism_permutation(&self.q, element)?.into();
        if let Ok(mut map) = self.permutations.write() {
            return Ok(Arc::clone(map.entry(element.value()).or_insert(perm)));
        }
        // A poisoned lock only loses the cache, never correctness.
        Ok(perm)
    }

    /// The Galois element `value` of this context's ring ([`GaloisElement::new`] with degree `N`).
    ///
    /// Errors: a ring error ([`rnsfhe_ring::Error::InvalidGaloisElement`]) unless `value` is odd and below
    /// `2N`.
    pub fn galois_element(&self, value: usize) -> Result<GaloisElement> {
        Ok(GaloisElement::new(value, self.n)?)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use rnsfhe_math::primes::ntt_primes_of_bits;

    fn params(dnum: usize) -> RlweParams {
        let q = ntt_primes_of_bits(50, 2048, 5, &[]).unwrap();
        let p = ntt_primes_of_bits(60, 2048, 2, &[]).unwrap();
        RlweParams {
            log_n: 10,
            q_moduli: q,
            p_moduli: p,
            dnum,
            conversion: ConversionMode::Fast,
            secret: SecretDistribution::Ternary,
            sigma: 3.2,
        }
    }

    #[test]
    fn builds_levels_and_rejects_bad_params() {
        let ctx = RlweContext::new(params(2)).unwrap();
        assert_eq!((ctx.n(), ctx.max_level()), (1024, 5));
        assert_eq!(ctx.basis_at(3).unwrap().len(), 3);
        assert!(matches!(
            ctx.basis_at(0),
            Err(Error::LevelOutOfRange {
                level: 0,
                max: 5,
                ..
            })
        ));
        let t = ctx.level_tables(4).unwrap();
        assert_eq!(t.limbs, 4);
        assert_eq!(t.ext.len(), 6);
        assert_eq!(t.digits.len(), 2, "alpha = 3: groups 0..3 and 3..4");
        assert_eq!(t.digits[1].range, 3..4);
        assert_eq!(t.digits[1].up.to().len(), 3 + 2);
        assert!(Arc::ptr_eq(&t, &ctx.level_tables(4).unwrap()), "cached");

        let mut bad = params(2);
        bad.p_moduli.clear();
        assert!(matches!(
            RlweContext::new(bad),
            Err(Error::InvalidParams {
                what: "p_moduli",
                ..
            })
        ));
        let mut bad = params(6);
        bad.dnum = 6;
        assert!(matches!(
            RlweContext::new(bad),
            Err(Error::Ring(rnsfhe_ring::Error::InvalidDnum {
                dnum: 6,
                limbs: 5
            }))
        ));
        let mut bad = params(1);
        bad.secret = SecretDistribution::HammingWeight(2000);
        assert!(matches!(
            RlweContext::new(bad),
            Err(Error::InvalidParams { what: "secret", .. })
        ));
        // Primes near 1.5 * 2^49, far from any power of two: no Qu-Xu exact conversion.
        let mut far = vec![];
        let mut c = (3u64 << 48) / 2048 * 2048 + 1;
        while far.len() < 5 {
            if rnsfhe_math::primes::is_prime(c) {
                far.push(c);
            }
            c += 2048;
        }
        let mut bad = params(1);
        bad.q_moduli = far;
        bad.conversion = ConversionMode::ExactInteger;
        assert!(matches!(
            RlweContext::new(bad),
            Err(Error::Ring(
                rnsfhe_ring::Error::ConversionUnavailable { .. }
            ))
        ));
        let mut bad = params(1);
        bad.p_moduli[0] = bad.q_moduli[0];
        assert!(RlweContext::new(bad).is_err());
        assert!(ctx.galois_element(4).is_err());
        let five = ctx.galois_element(5).unwrap();
        assert_eq!(ctx.galois_permutation(five).unwrap().len(), 1024);
        let foreign = GaloisElement::new(5, 2048).unwrap();
        assert!(ctx.galois_permutation(foreign).is_err());
    }

    #[test]
    fn context_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<RlweContext>();
        check::<Arc<RlweContext>>();
    }
}
