//! Gadget decompositions.
//!
//! - [`RnsGadget`]: the RNS digit decomposition of hybrid key switching (Han-Ki, "Better bootstrapping for
//!   approximate homomorphic encryption", the "hybrid" method compared by Qu-Xu Section 2.4 and Section 5):
//!   the limbs of `Q` are cut into `dnum` groups `Q_j` of `alpha = ceil(L / dnum)` consecutive limbs, and
//!   `x` in `Z_Q` is decomposed into the digits `[x]_{Q_j}`. With the constants
//!   `g_j = (Q/Q_j) [(Q/Q_j)^-1]_{Q_j}`, `sum_j [x]_{Q_j} g_j = x mod Q` for any integer lifts of the
//!   digits, which is why a key-switching key encrypts `P g_j s'` and each digit may be raised to
//!   `Q ∪ P` by an (exact or fast) basis conversion. `dnum = 1` is GHS key switching (one digit, `x`
//!   itself); `dnum = L` decomposes limb by limb (the relinearization of HPS Section 4.5).
//! - [`SignedDigits`]: signed base-`2^base_log` digits of one residue (RGSW external products, LWE key
//!   switching), exact or approximate (low digits dropped, TFHE-style), with gadget `g_k = B^k mod q`.
//! - [`RnsSignedDigits`]: [`SignedDigits`] applied limb by limb to an RNS polynomial, as in the RNS external
//!   product: every digit polynomial has small signed coefficients reduced into the whole basis.

use std::ops::Range;
use std::sync::Arc;

use rayon::prelude::*;
use rnsfhe_math::simd::lift_signed;
use rnsfhe_math::Modulus;

use crate::basis::RnsBasis;

/// Ring degrees from which [`RnsSignedDigits::signed_rows`] splits a limb's coefficients between threads
/// (when there are fewer limbs than threads): below it a part is shorter than a fork.
const SPLIT_DIGITS_MIN_DEGREE: usize = 1 << 14;

/// Coefficients per task of that split.
const SPLIT_DIGITS_PART: usize = 1 << 12;
use crate::error::{Error, Result};
use crate::poly::{Coeff, Form, Poly};

/// The RNS gadget of hybrid key switching with `dnum` digit groups (see the module documentation).
///
/// Groups are ranges of consecutive limbs of the full chain `Q = q_0 ... q_{L-1}`: group `j` is
/// `[j alpha, min((j + 1) alpha, L))` with `alpha = ceil(L / dnum)`. Levels are prefixes of `Q`, so a
/// polynomial with `l` limbs touches the first `ceil(l / alpha)` groups, the last one possibly partially;
/// keys generated for the full chain serve every level by dropping limbs, because the gadget constants are
/// CRT idempotents (1 on the limbs of their group, 0 elsewhere) and stay so modulo every prefix.
///
/// Note that `ceil(L / alpha)` can be smaller than `dnum` (for `L = 5, dnum = 4`, `alpha = 2` gives 3
/// groups): [`RnsGadget::group_count`] is the number of digits actually produced, and the number of
/// key-switching key components to generate.
#[derive(Clone, Debug)]
pub struct RnsGadget {
    basis: Arc<RnsBasis>,
    dnum: usize,
    alpha: usize,
    groups: Vec<Range<usize>>,
    group_bases: Vec<Arc<RnsBasis>>,
    /// `g_j mod q_i` for every group `j` and limb `i` of the full chain.
    constants: Vec<Vec<u64>>,
}

impl RnsGadget {
    /// Splits the limbs of `q` into groups of `alpha = ceil(L / dnum)` limbs and precomputes the group bases
    /// (sub-bases of `q` sharing its NTT plans) and the gadget constants.
    ///
    /// Errors: [`Error::InvalidDnum`] unless `1 <= dnum <= L`.
    pub fn new(q: &Arc<RnsBasis>, dnum: usize) -> Result<Self> {
        let l = q.len();
        if dnum == 0 || dnum > l {
            return Err(Error::InvalidDnum { dnum, limbs: l });
        }
        let alpha = l.div_ceil(dnum);
        let groups: Vec<Range<usize>> = (0..l.div_ceil(alpha))
            .map(|j| j * alpha..((j + 1) * alpha).min(l))
            .collect();
        let group_bases = groups
            .iter()
            .map(|r| q.slice(r.clone()))
            .collect::<Result<Vec<_>>>()?;
        // g_j = (Q/Q_j) [(Q/Q_j)^-1]_{Q_j}: modulo q_i in group j it is (Q/Q_j)(Q/Q_j)^-1 = 1, modulo any
        // other q_i it is 0 because q_i divides Q/Q_j. Computed from the definition so the invertibility of
        // Q/Q_j modulo its group (distinct primes) is checked rather than assumed.
        let moduli = q.moduli();
        let constants = groups
            .iter()
            .map(|r| {
                moduli
                    .iter()
                    .enumerate()
                    .map(|(i, qi)| {
                        let q_over_qj = moduli
                            .iter()
                            .enumerate()
                            .filter(|(l, _)| !r.contains(l))
                            .fold(1 % qi.value(), |acc, (_, m)| {
                                qi.mul(acc, qi.reduce(m.value()))
                            });
                        if r.contains(&i) {
                            Ok(qi.mul(q_over_qj, qi.inv(q_over_qj)?))
                        } else {
                            Ok(q_over_qj)
                        }
                    })
                    .collect::<Result<Vec<u64>>>()
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            basis: Arc::clone(q),
            dnum,
            alpha,
            groups,
            group_bases,
            constants,
        })
    }

    /// The full chain `Q`.
    pub fn basis(&self) -> &Arc<RnsBasis> {
        &self.basis
    }

    /// The requested number of groups.
    pub fn dnum(&self) -> usize {
        self.dnum
    }

    /// Limbs per group, `alpha = ceil(L / dnum)` (the last group may be shorter).
    pub fn alpha(&self) -> usize {
        self.alpha
    }

    /// Number of groups of the full chain, `ceil(L / alpha)` (at most `dnum`).
    pub fn group_count(&self) -> usize {
        self.groups.len()
    }

    /// The limb ranges of the groups.
    pub fn groups(&self) -> &[Range<usize>] {
        &self.groups
    }

    /// How many groups a prefix of `limbs` limbs touches: `ceil(limbs / alpha)`.
    ///
    /// Errors: [`Error::InvalidLimbCount`] unless `1 <= limbs <= L`.
    pub fn group_count_at(&self, limbs: usize) -> Result<usize> {
        self.check_limbs(limbs)?;
        Ok(limbs.div_ceil(self.alpha))
    }

    /// The limb ranges of the groups touched by a prefix of `limbs` limbs (the last one cut at `limbs`).
    ///
    /// Errors: [`Error::InvalidLimbCount`] unless `1 <= limbs <= L`.
    pub fn groups_at(&self, limbs: usize) -> Result<Vec<Range<usize>>> {
        let count = self.group_count_at(limbs)?;
        Ok(self.groups[..count]
            .iter()
            .map(|r| r.start..r.end.min(limbs))
            .collect())
    }

    /// The basis `Q_j` of group `j` (sharing the NTT plans of `Q`); `None` if `j >= group_count()`.
    pub fn group_basis(&self, j: usize) -> Option<&Arc<RnsBasis>> {
        self.group_bases.get(j)
    }

    /// The basis of group `j` as seen by a prefix of `limbs` limbs: the full group, or its cached prefix
    /// when the level cuts the group.
    ///
    /// Errors: [`Error::InvalidLimbCount`] if `limbs` is out of range, [`Error::OutOfRange`] if the prefix
    /// does not reach group `j`.
    pub fn group_basis_at(&self, j: usize, limbs: usize) -> Result<Arc<RnsBasis>> {
        let count = self.group_count_at(limbs)?;
        if j >= count {
            return Err(Error::OutOfRange {
                what:
                    "digit group index (a prefix touches only the first ceil(limbs / alpha) groups)",
                value: j as f64,
                min: 0.0,
                max: (count - 1) as f64,
            });
        }
        let r = &self.groups[j];
        self.group_bases[j].prefix(r.end.min(limbs) - r.start)
    }

    /// The gadget constant `g_j = (Q/Q_j) [(Q/Q_j)^-1]_{Q_j}` as residues modulo every `q_i` of the full
    /// chain (1 on the limbs of group `j`, 0 elsewhere); `None` if `j >= group_count()`. Modulo a prefix
    /// of the chain, take the first limbs. `sum_j [x]_{Q_j} g_j = x mod Q`.
    pub fn constant(&self, j: usize) -> Option<&[u64]> {
        self.constants.get(j).map(Vec::as_slice)
    }

    /// All gadget constants, one residue vector (over `Q`) per group.
    pub fn constants(&self) -> &[Vec<u64>] {
        &self.constants
    }

    /// The residues of `P g_j` over the extended basis `Q ∪ P` (limbs of `Q` first) for every group `j`:
    /// what a hybrid key-switching key encrypts times the new secret (`[P]_{q_i}` on group `j`, 0 on the
    /// other limbs of `Q` and on all of `P`, since `P = 0 mod p_k`).
    ///
    /// Errors: [`Error::BasisMismatch`] if the degrees differ, [`Error::RepeatedModulus`] if `P` shares a
    /// modulus with `Q`.
    pub fn special_constants(&self, p: &RnsBasis) -> Result<Vec<Vec<u64>>> {
        // Validates degree and disjointness exactly as the extended basis will.
        self.basis.concat(p)?;
        Ok(self
            .constants
            .iter()
            .map(|g| {
                g.iter()
                    .zip(self.basis.moduli())
                    .map(|(&gi, qi)| qi.mul(gi, p.product_mod(qi)))
                    .chain(std::iter::repeat_n(0, p.len()))
                    .collect()
            })
            .collect())
    }

    /// The digits `[x]_{Q_j}` of `x` (over `Q` or a prefix of it): digit `j` is the polynomial made of
    /// `x`'s limbs in group `j`, over [`RnsGadget::group_basis_at`]`(j, limbs)`. A prefix yields only the
    /// groups it touches, the last one possibly partial. Works in either form, since taking residues
    /// commutes with the NTT; raising a digit to `Q ∪ P` (ModUp) needs the coefficient form.
    ///
    /// Errors: [`Error::BasisMismatch`] if `x`'s basis is not a prefix of the gadget's chain.
    pub fn decompose<F: Form>(&self, x: &Poly<F>) -> Result<Vec<Poly<F>>> {
        self.check_prefix(x.basis())?;
        let limbs = x.limb_count();
        let n = x.degree();
        let ranges = self.groups_at(limbs)?;
        ranges
            .into_par_iter()
            .enumerate()
            .map(|(j, r)| {
                let basis = self.group_basis_at(j, limbs)?;
                Ok(Poly::from_data_unchecked(
                    &basis,
                    x.data()[r.start * n..r.end * n].to_vec(),
                ))
            })
            .collect()
    }

    fn check_limbs(&self, limbs: usize) -> Result<()> {
        if limbs == 0 || limbs > self.basis.len() {
            return Err(Error::InvalidLimbCount {
                requested: limbs,
                available: self.basis.len(),
            });
        }
        Ok(())
    }

    fn check_prefix(&self, b: &RnsBasis) -> Result<()> {
        if self.basis.has_prefix(b) {
            Ok(())
        } else {
            Err(Error::BasisMismatch {
                operation:
                    "RNS gadget decomposition (the input must be over a prefix of the chain)",
                left_limbs: self.basis.len(),
                left_n: self.basis.degree(),
                right_limbs: b.len(),
                right_n: b.degree(),
            })
        }
    }
}

/// Largest supported `log2(B)`: digits and `B` itself stay far inside `i64`.
pub const MAX_BASE_LOG: u32 = 62;
/// Largest supported number of digits (a sanity bound: a 62-bit residue needs at most 62 digits).
pub const MAX_DIGITS: usize = 64;

/// Signed base-`B = 2^base_log` digit decomposition of residues modulo `q`, with `count` kept digits.
///
/// Contract: `v` in `[0, q)` is first taken to a representative `r` of `v mod q`, the centered one
/// `(-q/2, q/2]` whenever the digits can express it (else `r -/+ q`, needed only when `B^D` barely exceeds
/// `q`, e.g. for `B = 2`), and `r` is written with `D = dropped + count` balanced digits
/// `r = sum_{k < D} d_k B^k`, `d_k in [-B/2, B/2)`. The kept digits are the top `count` ones,
/// `digits[k] = d_{dropped + k}`, and the gadget vector is `g_k = B^(dropped + k) mod q`, so that
///
/// `sum_k digits[k] g_k = v - e (mod q)`, with `e = sum_{k < dropped} d_k B^k`,
/// `|e| <= (B/2) (B^dropped - 1) / (B - 1)` ([`SignedDigits::error_bound`]).
///
/// - **Exact** when `count * base_log >= bits(q)` (`dropped = 0`, `e = 0`): `sum_k digits[k] B^k = r`
///   as integers.
/// - **Approximate** otherwise (TFHE gadget decomposition): `dropped = ceil(bits(q) / base_log) - count`
///   low digits are discarded. Because the low digits are balanced, dropping them rounds `r` to a multiple
///   of `B^dropped` (up to the half-digit carry pattern), so `|e|` is about `B^dropped / 2`.
///
/// With `B = 2` the digit set `[-1, 1)` is `{-1, 0}`; it is valid (every residue has a representative
/// in the digits' range) but a base of at least 4 gives the usual balanced digits.
#[derive(Clone, Debug)]
pub struct SignedDigits {
    modulus: Modulus,
    base_log: u32,
    count: usize,
    dropped: usize,
    /// Range `[min, max]` of `sum_{k < D} d_k B^k`, saturated far beyond any representative.
    min: i128,
    max: i128,
    gadget: Vec<u64>,
}

impl SignedDigits {
    /// Precomputes the decomposition for `modulus`, base `2^base_log` and `count` kept digits.
    ///
    /// Errors: [`Error::InvalidDigitDecomposition`] unless `1 <= base_log <= 62` and
    /// `1 <= count <= 64`.
    pub fn new(modulus: Modulus, base_log: u32, count: usize) -> Result<Self> {
        let bits = modulus.bits();
        let fail = |reason| Error::InvalidDigitDecomposition {
            base_log,
            count,
            modulus_bits: bits,
            reason,
        };
        if base_log == 0 || base_log > MAX_BASE_LOG {
            return Err(fail("base_log must be in [1, 62]"));
        }
        if count == 0 || count > MAX_DIGITS {
            return Err(fail("the number of digits must be in [1, 64]"));
        }
        let needed = bits.div_ceil(base_log) as usize;
        let dropped = needed.saturating_sub(count);
        let total = dropped + count;
        let base = 1i128 << base_log;
        let half = base / 2;
        // Saturate at 2^100: representatives are below 2^63 in magnitude.
        let cap = 1i128 << 100;
        let (mut min, mut max, mut pow) = (0i128, 0i128, 1i128);
        for _ in 0..total {
            max = (max + (half - 1).saturating_mul(pow)).min(cap);
            min = (min - half.saturating_mul(pow)).max(-cap);
            pow = pow.saturating_mul(base).min(cap);
        }
        let gadget = (0..count)
            .map(|k| modulus.pow(2, base_log as u64 * (dropped + k) as u64))
            .collect();
        Ok(Self {
            modulus,
            base_log,
            count,
            dropped,
            min,
            max,
            gadget,
        })
    }

    /// The modulus `q`.
    pub fn modulus(&self) -> &Modulus {
        &self.modulus
    }

    /// `log2(B)`.
    pub fn base_log(&self) -> u32 {
        self.base_log
    }

    /// Number of kept digits.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Number of low digits dropped (0 for an exact decomposition).
    pub fn dropped(&self) -> usize {
        self.dropped
    }

    /// Whether the decomposition is exact (`count * base_log >= bits(q)`).
    pub fn is_exact(&self) -> bool {
        self.dropped == 0
    }

    /// The gadget vector `g_k = B^(dropped + k) mod q`, `k < count`.
    pub fn gadget(&self) -> &[u64] {
        &self.gadget
    }

    /// Bound on the decomposition error `|e|`, `(B/2)(B^dropped - 1)/(B - 1)` (0 when exact).
    pub fn error_bound(&self) -> u64 {
        let base = 1u128 << self.base_log;
        let sum: u128 = (0..self.dropped)
            .map(|k| (base / 2) << (self.base_log as usize * k))
            .sum();
        sum as u64
    }

    /// Decomposes `v` (reduced modulo `q` first) into `out` (`count` digits, see the type's contract).
    ///
    /// Errors: [`Error::LengthMismatch`] if `out.len() != count`.
    pub fn decompose_into(&self, v: u64, out: &mut [i64]) -> Result<()> {
        if out.len() != self.count {
            return Err(Error::LengthMismatch {
                what: "signed digit output",
                expected: self.count,
                got: out.len(),
            });
        }
        self.decompose_unchecked(self.modulus.reduce(v), out);
        Ok(())
    }

    /// Decomposes every value of `values` (each reduced modulo `q` first): `count` vectors, digit-major
    /// (`result[k][i]` is digit `k` of `values[i]`), ready to be multiplied by the gadget's ciphertexts.
    pub fn decompose_slice(&self, values: &[u64]) -> Vec<Vec<i64>> {
        let mut out = vec![vec![0i64; values.len()]; self.count];
        let mut digits = vec![0i64; self.count];
        for (i, &v) in values.iter().enumerate() {
            self.decompose_unchecked(self.modulus.reduce(v), &mut digits);
            for (o, &d) in out.iter_mut().zip(&digits) {
                o[i] = d;
            }
        }
        out
    }

    /// `sum_k digits[k] g_k mod q` (the gadget product), which equals `v - e` for the digits of `v`.
    ///
    /// Errors: [`Error::LengthMismatch`] if `digits.len() != count`.
    pub fn recompose(&self, digits: &[i64]) -> Result<u64> {
        if digits.len() != self.count {
            return Err(Error::LengthMismatch {
                what: "signed digits",
                expected: self.count,
                got: digits.len(),
            });
        }
        let m = &self.modulus;
        Ok(digits
            .iter()
            .zip(&self.gadget)
            .fold(0, |acc, (&d, &g)| m.mul_add(m.reduce_i64(d), g, acc)))
    }

    /// The decomposition of a reduced `v < q` into `out` (length `count`).
    #[inline]
    fn decompose_unchecked(&self, v: u64, out: &mut [i64]) {
        debug_assert!(v < self.modulus.value() && out.len() == self.count);
        let q = self.modulus.value() as i128;
        let mut r = self.modulus.center(v) as i128;
        // With B^D > q the digits' range [min, max] (B^D consecutive integers around 0) holds a
        // representative of every class, and it is one of r, r - q, r + q.
        if r > self.max {
            r -= q;
        } else if r < self.min {
            r += q;
        }
        debug_assert!(r >= self.min && r <= self.max);
        let mask = (1i128 << self.base_log) - 1;
        let half = 1i128 << (self.base_log - 1);
        let base = 1i128 << self.base_log;
        for k in 0..self.dropped + self.count {
            let low = r & mask;
            let d = if low >= half { low - base } else { low };
            r = (r - d) >> self.base_log;
            if k >= self.dropped {
                out[k - self.dropped] = d as i64;
            }
        }
        debug_assert_eq!(r, 0);
    }
}

/// Exact signed digits of every limb of an RNS polynomial, for the RNS external product and RNS key
/// switching with a digit gadget: the residues `x_i` of limb `i` are written `x_i = sum_k d_{i,k} B^k
/// (mod q_i)` by [`SignedDigits`], and digit polynomial `(i, k)` has the small coefficients `d_{i,k}`
/// reduced into *every* limb, so that it can be multiplied by a ciphertext over the whole basis.
///
/// The gadget vector is `g_{i,k} = (Q/q_i) [(Q/q_i)^-1]_{q_i} B^k`, whose residues are `B^k mod q_i` on
/// limb `i` and 0 elsewhere ([`RnsSignedDigits::gadget_residues`]): `sum_{i,k} d_{i,k} g_{i,k} = x mod Q`.
/// Only exact per-limb decompositions are allowed, since an error `e_i` on limb `i` would become the huge
/// `e_i (Q/q_i)[(Q/q_i)^-1]_{q_i}` after recombination.
#[derive(Clone, Debug)]
pub struct RnsSignedDigits {
    basis: Arc<RnsBasis>,
    limbs: Vec<SignedDigits>,
    count: usize,
}

impl RnsSignedDigits {
    /// Precomputes a [`SignedDigits`] per limb of `basis`.
    ///
    /// Errors: as [`SignedDigits::new`], and [`Error::InvalidDigitDecomposition`] if
    /// `count * base_log` is below the bit length of some modulus (the decomposition would be approximate).
    pub fn new(basis: &Arc<RnsBasis>, base_log: u32, count: usize) -> Result<Self> {
        let limbs = basis
            .moduli()
            .iter()
            .map(|&m| {
                let d = SignedDigits::new(m, base_log, count)?;
                if d.is_exact() {
                    Ok(d)
                } else {
                    Err(Error::InvalidDigitDecomposition {
                        base_log,
                        count,
                        modulus_bits: m.bits(),
                        reason: "per-limb RNS digits must be exact: use count * base_log >= the bits of every modulus",
                    })
                }
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            basis: Arc::clone(basis),
            limbs,
            count,
        })
    }

    /// The basis (inputs are over it or a prefix of it).
    pub fn basis(&self) -> &Arc<RnsBasis> {
        &self.basis
    }

    /// Digits per limb.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The per-limb decompositions.
    pub fn limbs(&self) -> &[SignedDigits] {
        &self.limbs
    }

    /// Residues of `g_{i,k}` over the first `limbs` limbs: `B^k mod q_i` at limb `i`, 0 elsewhere.
    ///
    /// Errors: [`Error::InvalidLimbCount`] unless `1 <= limbs <= L`; [`Error::OutOfRange`] unless
    /// `i < limbs` and `k < count`.
    pub fn gadget_residues(&self, i: usize, k: usize, limbs: usize) -> Result<Vec<u64>> {
        if limbs == 0 || limbs > self.basis.len() {
            return Err(Error::InvalidLimbCount {
                requested: limbs,
                available: self.basis.len(),
            });
        }
        if i >= limbs {
            return Err(Error::OutOfRange {
                what: "limb index of the RNS digit gadget",
                value: i as f64,
                min: 0.0,
                max: (limbs - 1) as f64,
            });
        }
        if k >= self.count {
            return Err(Error::OutOfRange {
                what: "digit index of the RNS digit gadget",
                value: k as f64,
                min: 0.0,
                max: (self.count - 1) as f64,
            });
        }
        let mut g = vec![0u64; limbs];
        g[i] = self.limbs[i].gadget()[k];
        Ok(g)
    }

    /// The signed digits of `x` (over the basis or a prefix of it, `l` limbs) before any reduction:
    /// `l * count` rows of `N` integers, row `i * count + k` holding digit `k` of limb `i` of every
    /// coefficient. This is the compact form of the decomposition (one word per digit instead of one per
    /// digit and limb): key switching lifts one row into one limb at a time with
    /// [`RnsSignedDigits::lift_row`], right before that limb's NTT.
    ///
    /// Errors: [`Error::BasisMismatch`] if `x`'s basis is not a prefix of this basis.
    pub fn signed_rows(&self, x: &Poly<Coeff>) -> Result<Vec<Vec<i64>>> {
        if !self.basis.has_prefix(x.basis()) {
            return Err(Error::BasisMismatch {
                operation:
                    "RNS signed-digit decomposition (the input must be over a prefix of the basis)",
                left_limbs: self.basis.len(),
                left_n: self.basis.degree(),
                right_limbs: x.limb_count(),
                right_n: x.degree(),
            });
        }
        let n = x.degree();
        // The digits of the coefficients `src` (one limb, any range of it) into the same range of the
        // `count` rows.
        let fill = |dec: &SignedDigits, src: &[u64], rows: &mut [&mut [i64]]| {
            if dec.dropped + dec.count == 1 {
                // One digit of base 2^w > q_i (the plain CRT decomposition): the digit is the centered
                // residue itself, which the digit range [-2^(w-1), 2^(w-1)) always holds.
                let m = &dec.modulus;
                for (d, &v) in rows[0].iter_mut().zip(src) {
                    *d = m.center(v);
                }
            } else {
                let mut buf = vec![0i64; self.count];
                for (c, &v) in src.iter().enumerate() {
                    dec.decompose_unchecked(v, &mut buf);
                    for (row, &d) in rows.iter_mut().zip(&buf) {
                        row[c] = d;
                    }
                }
            }
        };
        let threads = rayon::current_num_threads();
        if x.limb_count() < threads && n >= SPLIT_DIGITS_MIN_DEGREE {
            // Fewer limbs than threads (one limb of `N = 2^16` in PEGASUS's whole-ciphertext
            // switch): a task per limb would leave threads idle, so each limb's coefficients are
            // split in parts, each part writing its range of every row.
            let mut out = Vec::with_capacity(x.limb_count() * self.count);
            for (src, dec) in x.limbs().zip(&self.limbs) {
                let mut rows: Vec<Vec<i64>> = (0..self.count)
                    .map(|_| crate::parallel::zeroed(n))
                    .collect();
                let part = SPLIT_DIGITS_PART.min(n);
                let mut parts: Vec<Vec<&mut [i64]>> = (0..n / part)
                    .map(|_| Vec::with_capacity(self.count))
                    .collect();
                for row in rows.iter_mut() {
                    for (p, chunk) in row.chunks_mut(part).enumerate() {
                        parts[p].push(chunk);
                    }
                }
                crate::parallel::for_each_chunk(&mut parts, 1, &|p, one| {
                    fill(dec, &src[p * part..(p + 1) * part], &mut one[0]);
                });
                out.extend(rows);
            }
            return Ok(out);
        }
        let per_limb: Vec<Vec<Vec<i64>>> = x
            .limbs()
            .collect::<Vec<_>>()
            .into_par_iter()
            .zip(self.limbs.par_iter())
            .map(|(src, dec)| {
                if self.count == 1 && dec.dropped + dec.count == 1 {
                    // The plain CRT decomposition: the one row written once as it is made (no
                    // zero-filled buffer first).
                    let m = &dec.modulus;
                    return vec![src.iter().map(|&v| m.center(v)).collect()];
                }
                let mut rows = vec![vec![0i64; n]; self.count];
                {
                    let mut slices: Vec<&mut [i64]> =
                        rows.iter_mut().map(|r| r.as_mut_slice()).collect();
                    fill(dec, src, &mut slices);
                }
                rows
            })
            .collect();
        Ok(per_limb.into_iter().flatten().collect())
    }

    /// Writes row `row` of [`RnsSignedDigits::signed_rows`] (digits of limb `source_limb`) reduced modulo
    /// `m` into `out`. Every digit lies in `[-B/2, B/2)` ([`SignedDigits`]); when `B/2 <= 2m` (always for
    /// base-`2^w` digits below the modulus size, and for the CRT decomposition with primes of similar
    /// size) each digit is reduced by one sign correction and one conditional subtraction
    /// ([`lift_signed`], vectorized), otherwise by a full reduction.
    ///
    /// Panics if `source_limb` is out of range or `out` is shorter than `row`.
    pub fn lift_row(&self, source_limb: usize, row: &[i64], m: &Modulus, out: &mut [u64]) {
        let out = &mut out[..row.len()];
        let half_base = 1u128 << (self.limbs[source_limb].base_log - 1);
        if half_base <= 2 * m.value() as u128 {
            lift_signed(m, row, out);
        } else {
            for (o, &d) in out.iter_mut().zip(row) {
                *o = m.reduce_i64(d);
            }
        }
    }

    /// The signed digits of the residues `src` of limb `limb` (any range of that limb's coefficients),
    /// each reduced modulo `m`: `rows[k][c]` becomes digit `k` of `src[c]` modulo `m`, the values of
    /// [`RnsSignedDigits::signed_rows`] then [`RnsSignedDigits::lift_row`] in one pass. For a gadget
    /// product over fewer limbs than threads, where each thread decomposes a range of coefficients
    /// straight into the rows the NTTs then read, instead of writing signed rows, joining, and lifting
    /// them in a second pass.
    ///
    /// Errors: [`Error::OutOfRange`] for a limb outside the basis; [`Error::LengthMismatch`] unless
    /// there are `count` rows of `src.len()` residues each; [`Error::ResidueOutOfRange`] for a residue of
    /// `src` not below the limb's modulus.
    pub fn lifted_digits(
        &self,
        limb: usize,
        src: &[u64],
        m: &Modulus,
        rows: &mut [&mut [u64]],
    ) -> Result<()> {
        let Some(dec) = self.limbs.get(limb) else {
            return Err(Error::OutOfRange {
                what: "limb index of the RNS digit decomposition",
                value: limb as f64,
                min: 0.0,
                max: self.limbs.len() as f64 - 1.0,
            });
        };
        if rows.len() != self.count {
            return Err(Error::LengthMismatch {
                what: "digit rows",
                expected: self.count,
                got: rows.len(),
            });
        }
        if let Some(row) = rows.iter().find(|r| r.len() != src.len()) {
            return Err(Error::LengthMismatch {
                what: "digit row",
                expected: src.len(),
                got: row.len(),
            });
        }
        let q = dec.modulus.value();
        if let Some(index) = src.iter().position(|&x| x >= q) {
            return Err(Error::ResidueOutOfRange {
                value: src[index],
                limb,
                index,
                modulus: q,
            });
        }
        // Digits lie in [-B/2, B/2): below m in absolute value, one sign correction reduces them.
        let p = m.value();
        let small = (1u128 << (dec.base_log - 1)) < p as u128;
        let mut buf = vec![0i64; self.count];
        for (c, &v) in src.iter().enumerate() {
            dec.decompose_unchecked(v, &mut buf);
            for (row, &d) in rows.iter_mut().zip(&buf) {
                row[c] = if small {
                    (d + ((d >> 63) & p as i64)) as u64
                } else {
                    m.reduce_i64(d)
                };
            }
        }
        Ok(())
    }

    /// The digit polynomials of `x` (over the basis or a prefix of it, `l` limbs): `l * count` polynomials
    /// over `x`'s basis, index `i * count + k` holding digit `k` of limb `i`, each coefficient the small
    /// signed digit reduced modulo every limb ([`RnsSignedDigits::signed_rows`] lifted into every limb).
    ///
    /// Errors: [`Error::BasisMismatch`] if `x`'s basis is not a prefix of this basis.
    pub fn decompose(&self, x: &Poly<Coeff>) -> Result<Vec<Poly<Coeff>>> {
        let rows = self.signed_rows(x)?;
        let n = x.degree();
        let basis = x.basis();
        Ok(rows
            .par_iter()
            .enumerate()
            .map(|(r, row)| {
                let mut data = vec![0u64; basis.len() * n];
                for (limb, m) in data.chunks_exact_mut(n).zip(basis.moduli()) {
                    self.lift_row(r / self.count, row, m, limb);
                }
                Poly::from_data_unchecked(basis, data)
            })
            .collect())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use rnsfhe_math::primes::ntt_primes_of_bits;

    fn chain(limbs: usize) -> Arc<RnsBasis> {
        RnsBasis::new(16, &ntt_primes_of_bits(40, 32, limbs, &[]).unwrap()).unwrap()
    }

    /// The digits of a coefficient range reduced into another modulus equal the signed rows lifted row
    /// by row, for several bases (a 1-digit CRT decomposition among them); bad arguments are refused.
    #[test]
    fn lifted_digits_match_the_lifted_signed_rows() {
        let q = chain(2);
        let x = Poly::<Coeff>::from_data(
            &q,
            (0..32u64)
                .map(|i| (i * 0x9e37_79b9_7f4a) % q.moduli()[i as usize / 16].value())
                .collect(),
        )
        .unwrap();
        for (base_log, count) in [(4, 10), (13, 4), (41, 1)] {
            let digits = RnsSignedDigits::new(&q, base_log, count).unwrap();
            let rows = digits.signed_rows(&x).unwrap();
            for (limb, src) in x.limbs().enumerate() {
                for m in q.moduli() {
                    let (lo, hi) = (3, 11);
                    let mut got = vec![vec![0u64; hi - lo]; count];
                    let mut slices: Vec<&mut [u64]> = got.iter_mut().map(|r| &mut r[..]).collect();
                    digits
                        .lifted_digits(limb, &src[lo..hi], m, &mut slices)
                        .unwrap();
                    for (k, row) in got.iter().enumerate() {
                        let mut want = vec![0u64; 16];
                        digits.lift_row(limb, &rows[limb * count + k], m, &mut want);
                        assert_eq!(row[..], want[lo..hi], "base 2^{base_log}, limb {limb}");
                    }
                }
            }
            let m = &q.moduli()[0];
            let mut short = [0u64; 2];
            let mut one: Vec<&mut [u64]> = vec![&mut short[..]];
            assert!(digits.lifted_digits(2, &[1, 2], m, &mut one).is_err());
            let mut rows: Vec<Vec<u64>> = vec![vec![0u64; 2]; count];
            let mut slices: Vec<&mut [u64]> = rows.iter_mut().map(|r| &mut r[..]).collect();
            assert!(digits.lifted_digits(0, &[1, 2, 3], m, &mut slices).is_err());
            assert!(matches!(
                digits.lifted_digits(0, &[1, m.value()], m, &mut slices),
                Err(Error::ResidueOutOfRange { index: 1, .. })
            ));
            if count > 1 {
                assert!(digits.lifted_digits(0, &[1, 2], m, &mut one).is_err());
            }
        }
    }

    #[test]
    fn groups_and_errors() {
        let q = chain(5);
        assert!(matches!(
            RnsGadget::new(&q, 0),
            Err(Error::InvalidDnum { dnum: 0, limbs: 5 })
        ));
        assert!(matches!(
            RnsGadget::new(&q, 6),
            Err(Error::InvalidDnum { dnum: 6, limbs: 5 })
        ));
        let g = RnsGadget::new(&q, 2).unwrap();
        assert_eq!(g.alpha(), 3);
        assert_eq!(g.groups(), &[0..3, 3..5]);
        assert_eq!(g.group_count_at(3).unwrap(), 1);
        assert_eq!(g.group_count_at(4).unwrap(), 2);
        assert!(g.group_count_at(0).is_err() && g.group_count_at(6).is_err());
        assert_eq!(g.groups_at(4).unwrap(), vec![0..3, 3..4]);
        assert_eq!(g.group_basis_at(1, 4).unwrap().len(), 1);
        assert!(g.group_basis_at(1, 3).is_err());
        let g4 = RnsGadget::new(&q, 4).unwrap();
        assert_eq!(
            (g4.alpha(), g4.group_count()),
            (2, 3),
            "ceil(5/2) = 3 groups"
        );
        assert_eq!(g.constant(0).unwrap(), &[1, 1, 1, 0, 0]);
        assert_eq!(g.constant(1).unwrap(), &[0, 0, 0, 1, 1]);
        let other = chain(6);
        assert!(matches!(
            g.decompose(&Poly::<Coeff>::zero(&other)),
            Err(Error::BasisMismatch { .. })
        ));
    }

    #[test]
    fn signed_digit_validation() {
        let m = Modulus::new((1 << 40) - 87).unwrap();
        assert!(SignedDigits::new(m, 0, 3).is_err());
        assert!(SignedDigits::new(m, 63, 1).is_err());
        assert!(SignedDigits::new(m, 8, 0).is_err());
        assert!(SignedDigits::new(m, 8, 65).is_err());
        let d = SignedDigits::new(m, 8, 5).unwrap();
        assert!(d.is_exact() && d.error_bound() == 0);
        let a = SignedDigits::new(m, 8, 3).unwrap();
        assert_eq!((a.dropped(), a.error_bound()), (2, 128 + 128 * 256));
        let mut short = [0i64; 2];
        assert!(a.decompose_into(5, &mut short).is_err());
        assert!(a.recompose(&short).is_err());
    }
}
