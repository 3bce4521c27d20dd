//! Plaintext linear transforms of the slots, evaluated homomorphically by the baby-step giant-step
//! (BSGS) algorithm on their diagonals (Halevi-Shoup, "Algorithms in HElib", CRYPTO 2014; with the baby
//! rotations hoisted as in Bossuat-Mouchet-Troncoso-Pastoriza-Hubaux, Eurocrypt 2021). PEGASUS (Lu et
//! al., S&P 2021) builds its slots-to-coefficients step (Fig. 6, step 1) and the repacking of Fig. 5 (the
//! tiled BSGS linear transform, Section III) on this evaluation.
//!
//! # Diagonals
//!
//! An `n x n` complex matrix `M` over `n` slots (`n` a power of two) is held as its non-zero diagonals:
//! diagonal `k` (`0 <= k < n`) is the vector `d_k[p] = M[p][(p + k) mod n]`, so that
//!
//! ```text
//! M v = sum_k d_k ⊙ rot(v, k),        rot(v, k)[p] = v[(p + k) mod n]
//! ```
//!
//! with `rot` the left rotation of [`Evaluator::rotate`] and `⊙` the slot-wise product.
//!
//! # Baby-step giant-step
//!
//! With a baby step `b` (a power of two), each diagonal index is written in its signed form `s` in
//! `(-n/2, n/2]` (so that the diagonals around 0 of banded matrices, such as the factors of the DFT, stay
//! close together) and split as `s = g b + j` with `0 <= j < b`. Then
//!
//! ```text
//! M v = sum_g rot( sum_j rot(d_(g b + j), -g b) ⊙ rot(v, j), g b ),
//! ```
//!
//! so the diagonals are rotated by `-g b` once, when they are encoded ([`LinearTransform::encode`]); the
//! baby rotations `rot(v, j)` of the one input share a hoisted decomposition
//! ([`Evaluator::rotate_hoisted`]); each giant group costs one rotation of its inner sum. The number of
//! rotations is the number of distinct non-zero `j` plus the number of distinct giant steps `g b` that
//! are not multiples of `n`; the default baby step minimises it ([`LinearTransform::default_baby_step`]).
//!
//! # Scale and level
//!
//! [`Evaluator::linear_transform`] returns `M v` **not rescaled**, at the level of the encoded transform,
//! with scale `scale(ct) * scale(diagonals)`, as [`Evaluator::multiply_plain`] does (the evaluator's
//! automatic rescaling applies to the operator API only). Encoding the diagonals at
//! [`LinearTransform::exact_rescale_scale`] (the prime `q_(l-1)` the next rescaling drops) makes a following
//! [`Evaluator::rescale`] return exactly the input's scale.
//!
//! # Fewer slots than the transform
//!
//! A ciphertext of `m` slots, `m` a proper divisor of the transform's `n`, decodes with `n` slots to its `m`
//! slots repeated `n / m` times (see [`crate::encoder`], sparse packing): it is the same plaintext as that
//! replicated vector. [`Evaluator::linear_transform`] accepts it as such and returns an `n`-slot
//! ciphertext of `M (v || v || ... || v)`; [`LinearTransform::apply`] computes the same in the clear.
//! (PEGASUS Fig. 5 uses this for its tiles when `l > n`.)

use std::collections::BTreeMap;
use std::sync::Arc;

use rayon::prelude::*;
use rnsfhe_core::RlweCiphertext;
use rnsfhe_ring::parallel::active_wait;
use rnsfhe_ring::{Ntt, Poly};

use crate::context::CkksContext;
use crate::error::{Error, Result};
use crate::evaluator::Evaluator;
use crate::plaintext::Ciphertext;
use crate::Complex64;

const ZERO: Complex64 = Complex64::new(0.0, 0.0);

/// A complex linear map on `n` slots (`n` a power of two) held as its non-zero diagonals (see the
/// [module documentation](self)); the plaintext side of a homomorphic linear transform.
#[derive(Clone, Debug, PartialEq)]
pub struct LinearTransform {
    slots: usize,
    /// Diagonal index `k` in `[0, slots)` -> `d_k` (length `slots`, not identically zero).
    diagonals: BTreeMap<usize, Vec<Complex64>>,
}

/// Checks that `slots` is a power of two (the slot counts CKKS encodes).
fn check_power_of_two(slots: usize, what: &'static str) -> Result<()> {
    if !slots.is_power_of_two() {
        return Err(Error::InvalidArgument {
            operation: "linear transform",
            reason: format!("{what} is {slots}, which is not a power of two"),
        });
    }
    Ok(())
}

fn check_finite(values: &[Complex64], what: &'static str) -> Result<()> {
    for (index, v) in values.iter().enumerate() {
        for part in [v.re, v.im] {
            if !part.is_finite() {
                return Err(Error::NonFinite {
                    what,
                    index,
                    value: part,
                });
            }
        }
    }
    Ok(())
}

/// `rot(v, k)`: entry `p` is `v[(p + k) mod n]`.
fn rotated(v: &[Complex64], k: i64) -> Vec<Complex64> {
    let n = v.len() as i64;
    let k = k.rem_euclid(n) as usize;
    let mut out = Vec::with_capacity(v.len());
    out.extend_from_slice(&v[k..]);
    out.extend_from_slice(&v[..k]);
    out
}

/// The signed representative of a diagonal index: `k` in `(-n/2, n/2]`.
fn signed_index(k: usize, n: usize) -> i64 {
    if k <= n / 2 {
        k as i64
    } else {
        k as i64 - n as i64
    }
}

/// The baby-step giant-step split of a set of diagonal indices (see the module documentation).
struct BsgsPlan {
    /// Distinct baby steps `j` (sorted, `0` included when used).
    babies: Vec<usize>,
    /// Giant index `g` -> its terms `(j, k)`: baby step and diagonal index.
    giants: BTreeMap<i64, Vec<(usize, usize)>>,
}

impl BsgsPlan {
    fn new(indices: impl Iterator<Item = usize>, n: usize, baby: usize) -> Self {
        let mut babies = Vec::new();
        let mut giants: BTreeMap<i64, Vec<(usize, usize)>> = BTreeMap::new();
        for k in indices {
            let s = signed_index(k, n);
            let b = baby as i64;
            let (g, j) = (s.div_euclid(b), s.rem_euclid(b) as usize);
            babies.push(j);
            giants.entry(g).or_default().push((j, k));
        }
        babies.sort_unstable();
        babies.dedup();
        Self { babies, giants }
    }

    /// Non-zero baby steps (the hoisted rotations).
    fn baby_steps(&self) -> impl Iterator<Item = usize> + '_ {
        self.babies.iter().copied().filter(|&j| j != 0)
    }

    /// Giant steps `g b` that are a rotation (not a multiple of `n`).
    fn giant_steps(&self, n: usize, baby: usize) -> impl Iterator<Item = i64> + '_ {
        self.giants
            .keys()
            .map(move |&g| g * baby as i64)
            .filter(move |s| s.rem_euclid(n as i64) != 0)
    }

    fn rotations(&self, n: usize, baby: usize) -> usize {
        self.baby_steps().count() + self.giant_steps(n, baby).count()
    }
}

impl LinearTransform {
    /// The transform of a dense square matrix given by rows (`rows[p][q]` is the coefficient of input
    /// slot `q` in output slot `p`); zero diagonals are dropped.
    ///
    /// Errors: [`Error::InvalidArgument`] unless the matrix is square with a power-of-two size;
    /// [`Error::NonFinite`] for a NaN or infinite entry; [`Error::Empty`] for the zero matrix (it has no
    /// diagonal to evaluate).
    pub fn from_dense(rows: &[Vec<Complex64>]) -> Result<Self> {
        let n = rows.len();
        check_power_of_two(n, "the number of rows")?;
        for (p, row) in rows.iter().enumerate() {
            if row.len() != n {
                return Err(Error::InvalidArgument {
                    operation: "linear transform",
                    reason: format!("row {p} has {} entries, the matrix has {n} rows", row.len()),
                });
            }
            check_finite(row, "matrix entry (in its row)")?;
        }
        let diagonals = (0..n)
            .map(|k| (k, (0..n).map(|p| rows[p][(p + k) % n]).collect::<Vec<_>>()))
            .filter(|(_, d)| d.iter().any(|z| *z != ZERO))
            .collect();
        Self::checked(n, diagonals)
    }

    /// The transform with the given diagonals on `slots` slots: `(k, d_k)` with `d_k[p]` the coefficient
    /// of input slot `p + k mod slots` in output slot `p`. Indices are taken modulo `slots` (negative ones
    /// allowed: `-1` is diagonal `slots - 1`); diagonals with equal indices are added; identically zero
    /// diagonals are dropped.
    ///
    /// Errors: [`Error::InvalidArgument`] unless `slots` is a power of two; [`Error::LengthMismatch`] for a
    /// diagonal of another length; [`Error::NonFinite`]; [`Error::Empty`] when no non-zero diagonal is
    /// left.
    pub fn from_diagonals(
        slots: usize,
        diagonals: impl IntoIterator<Item = (i64, Vec<Complex64>)>,
    ) -> Result<Self> {
        check_power_of_two(slots, "the slot count")?;
        let mut map: BTreeMap<usize, Vec<Complex64>> = BTreeMap::new();
        for (k, d) in diagonals {
            if d.len() != slots {
                return Err(Error::LengthMismatch {
                    what: "linear transform diagonal (one entry per slot)",
                    expected: slots,
                    got: d.len(),
                });
            }
            check_finite(&d, "diagonal entry")?;
            let k = k.rem_euclid(slots as i64) as usize;
            match map.get_mut(&k) {
                Some(acc) => acc.iter_mut().zip(&d).for_each(|(a, b)| *a += b),
                None => {
                    map.insert(k, d);
                }
            }
        }
        map.retain(|_, d| d.iter().any(|z| *z != ZERO));
        Self::checked(slots, map)
    }

    fn checked(slots: usize, diagonals: BTreeMap<usize, Vec<Complex64>>) -> Result<Self> {
        if diagonals.is_empty() {
            return Err(Error::Empty {
                what: "linear transform (every diagonal is zero)",
            });
        }
        Ok(Self { slots, diagonals })
    }

    /// The number of slots `n` the matrix acts on.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The number of non-zero diagonals.
    pub fn diagonal_count(&self) -> usize {
        self.diagonals.len()
    }

    /// The indices `k` in `[0, n)` of the non-zero diagonals, increasing.
    pub fn diagonal_indices(&self) -> impl Iterator<Item = usize> + '_ {
        self.diagonals.keys().copied()
    }

    /// Diagonal `k` (taken modulo `n`), if it is non-zero.
    pub fn diagonal(&self, k: i64) -> Option<&[Complex64]> {
        self.diagonals
            .get(&(k.rem_euclid(self.slots as i64) as usize))
            .map(Vec::as_slice)
    }

    /// The dense matrix, by rows (for tests and small transforms).
    pub fn to_dense(&self) -> Vec<Vec<Complex64>> {
        let n = self.slots;
        let mut rows = vec![vec![ZERO; n]; n];
        for (&k, d) in &self.diagonals {
            for (p, row) in rows.iter_mut().enumerate() {
                row[(p + k) % n] += d[p];
            }
        }
        rows
    }

    /// `M v` in the clear. `values` may have fewer entries than `n`, a power of two dividing `n`: it then
    /// stands for its replication to `n` slots, as a ciphertext with fewer slots does in
    /// [`Evaluator::linear_transform`] (see the module documentation).
    ///
    /// Errors: [`Error::SlotsMismatch`] unless `values.len()` is a power of two dividing `n`;
    /// [`Error::NonFinite`].
    pub fn apply(&self, values: &[Complex64]) -> Result<Vec<Complex64>> {
        self.check_input_slots(values.len(), "linear transform (plaintext)")?;
        check_finite(values, "input value")?;
        let n = self.slots;
        let m = values.len();
        let mut out = vec![ZERO; n];
        for (&k, d) in &self.diagonals {
            for (p, o) in out.iter_mut().enumerate() {
                *o += d[p] * values[(p + k) % m];
            }
        }
        Ok(out)
    }

    fn check_input_slots(&self, slots: usize, operation: &'static str) -> Result<()> {
        if slots == 0 || !slots.is_power_of_two() || slots > self.slots {
            return Err(Error::SlotsMismatch {
                operation,
                left: slots,
                right: self.slots,
            });
        }
        Ok(())
    }

    /// The product `self * first` (apply `first`, then `self`): diagonal `k + l` collects
    /// `d_k ⊙ rot(e_l, k)` for every diagonal `d_k` of `self` and `e_l` of `first`. Products that cancel
    /// to exactly zero are dropped.
    ///
    /// Errors: [`Error::SlotsMismatch`] for transforms on different slot counts; [`Error::Empty`] if the
    /// product is zero.
    pub fn compose(&self, first: &LinearTransform) -> Result<Self> {
        if self.slots != first.slots {
            return Err(Error::SlotsMismatch {
                operation: "linear transform composition",
                left: self.slots,
                right: first.slots,
            });
        }
        let n = self.slots;
        let mut map: BTreeMap<usize, Vec<Complex64>> = BTreeMap::new();
        for (&k, d) in &self.diagonals {
            for (&l, e) in &first.diagonals {
                let acc = map.entry((k + l) % n).or_insert_with(|| vec![ZERO; n]);
                for (p, a) in acc.iter_mut().enumerate() {
                    *a += d[p] * e[(p + k) % n];
                }
            }
        }
        map.retain(|_, d| d.iter().any(|z| *z != ZERO));
        Self::checked(n, map)
    }

    /// The transform `c M`.
    ///
    /// Errors: [`Error::NonFinite`] for a non-finite `c`; [`Error::Empty`] for `c = 0`.
    pub fn scaled(&self, c: Complex64) -> Result<Self> {
        check_finite(&[c], "scaling factor")?;
        let map = self
            .diagonals
            .iter()
            .map(|(&k, d)| (k, d.iter().map(|z| z * c).collect::<Vec<_>>()))
            .filter(|(_, d)| d.iter().any(|z| *z != ZERO))
            .collect();
        Self::checked(self.slots, map)
    }

    /// The number of rotations (hoisted baby steps plus giant steps) of an evaluation with baby step
    /// `baby`.
    ///
    /// Errors: [`Error::InvalidArgument`] unless `baby` is a power of two in `[1, n]`.
    pub fn rotation_count(&self, baby: usize) -> Result<usize> {
        self.check_baby(baby)?;
        Ok(self.plan(baby).rotations(self.slots, baby))
    }

    /// The rotation steps an evaluation with baby step `baby` (default:
    /// [`LinearTransform::default_baby_step`]) needs Galois keys for, as
    /// [`EncodedLinearTransform::rotation_steps`] lists them after encoding: keys can be made before any
    /// diagonal is encoded.
    ///
    /// Errors: [`Error::InvalidArgument`] unless `baby` is a power of two in `[1, n]`.
    pub fn rotation_steps(&self, baby: Option<usize>) -> Result<Vec<i64>> {
        let baby = baby.unwrap_or_else(|| self.default_baby_step());
        self.check_baby(baby)?;
        let plan = self.plan(baby);
        let mut steps: Vec<i64> = plan
            .baby_steps()
            .map(|j| j as i64)
            .chain(plan.giant_steps(self.slots, baby))
            .collect();
        steps.sort_unstable();
        steps.dedup();
        Ok(steps)
    }

    /// The baby step that minimises the number of rotations (on a tie, the larger one: baby steps are
    /// hoisted and cost less than giant steps).
    pub fn default_baby_step(&self) -> usize {
        let n = self.slots;
        let mut best = (usize::MAX, 1);
        let mut b = 1;
        while b <= n {
            let count = self.plan(b).rotations(n, b);
            if count <= best.0 {
                best = (count, b);
            }
            b *= 2;
        }
        best.1
    }

    fn check_baby(&self, baby: usize) -> Result<()> {
        if !baby.is_power_of_two() || baby > self.slots {
            return Err(Error::InvalidArgument {
                operation: "linear transform",
                reason: format!(
                    "baby step {baby} must be a power of two in [1, {}] (the transform's slots)",
                    self.slots
                ),
            });
        }
        Ok(())
    }

    fn plan(&self, baby: usize) -> BsgsPlan {
        BsgsPlan::new(self.diagonals.keys().copied(), self.slots, baby)
    }

    /// The scale at which diagonals encoded at `level` make the rescaling that follows the transform
    /// return exactly the input's scale: the prime `q_(level-1)` that [`Evaluator::rescale`] drops.
    ///
    /// Errors: [`Error::InvalidArgument`] unless `2 <= level <= max_level` (level 1 cannot be rescaled).
    pub fn exact_rescale_scale(ctx: &CkksContext, level: usize) -> Result<f64> {
        ctx.check_level(level, "linear transform encoding")?;
        if level < 2 {
            return Err(Error::InvalidArgument {
                operation: "linear transform encoding",
                reason: "level 1 has no prime left to rescale by".into(),
            });
        }
        Ok(ctx.q_moduli()[level - 1] as f64)
    }

    /// Encodes the diagonals once, at `level` and `scale`, each pre-rotated by its giant step, for
    /// [`Evaluator::linear_transform`] with baby step `baby_step` (default:
    /// [`LinearTransform::default_baby_step`]).
    ///
    /// Errors: [`Error::InvalidSlots`] unless `n <= N/2`; [`Error::InvalidArgument`] for a level off the
    /// chain or a baby step that is not a power of two in `[1, n]`; encoder errors
    /// ([`Error::InvalidScale`], [`Error::EncodingScaleTooLarge`]).
    pub fn encode(
        &self,
        ctx: &Arc<CkksContext>,
        level: usize,
        scale: f64,
        baby_step: Option<usize>,
    ) -> Result<EncodedLinearTransform> {
        ctx.encoder().check_slots(self.slots)?;
        ctx.check_level(level, "linear transform encoding")?;
        let baby = baby_step.unwrap_or_else(|| self.default_baby_step());
        self.check_baby(baby)?;
        let n = self.slots;
        let plan = self.plan(baby);
        let baby_steps: Vec<i64> = plan.baby_steps().map(|j| j as i64).collect();
        // Position of each baby step among the baby rotations (0: the input itself).
        let position: BTreeMap<usize, usize> = std::iter::once((0, 0))
            .chain(
                baby_steps
                    .iter()
                    .enumerate()
                    .map(|(i, &j)| (j as usize, i + 1)),
            )
            .collect();
        let work: Vec<(i64, usize, usize)> = plan
            .giants
            .iter()
            .flat_map(|(&g, terms)| terms.iter().map(move |&(j, k)| (g, j, k)))
            .collect();
        let encoded = work
            .par_iter()
            .map(|&(g, j, k)| {
                let step = g * baby as i64;
                let d = rotated(&self.diagonals[&k], -step);
                let pt = ctx.encode_at_scale(&d, n, level, scale)?;
                Ok((g, position[&j], pt.poly().clone()))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut groups: BTreeMap<i64, Vec<(usize, Poly<Ntt>)>> = BTreeMap::new();
        for (g, pos, poly) in encoded {
            groups.entry(g).or_default().push((pos, poly));
        }
        let groups = groups
            .into_iter()
            .map(|(g, terms)| GiantGroup {
                step: g * baby as i64,
                terms,
            })
            .collect();
        Ok(EncodedLinearTransform {
            slots: n,
            level,
            scale,
            baby,
            diagonals: self.diagonals.len(),
            baby_steps,
            groups,
            fingerprint: ctx.fingerprint(),
        })
    }
}

/// The diagonals of one giant step, encoded.
#[derive(Clone, Debug)]
struct GiantGroup {
    /// The giant rotation `g b` (a multiple of `n` is no rotation).
    step: i64,
    /// `(position of the baby rotation, rot(d_k, -g b) encoded)`.
    terms: Vec<(usize, Poly<Ntt>)>,
}

/// A [`LinearTransform`] encoded for homomorphic evaluation at one level and scale
/// ([`LinearTransform::encode`], evaluated by [`Evaluator::linear_transform`]).
#[derive(Clone, Debug)]
pub struct EncodedLinearTransform {
    slots: usize,
    level: usize,
    scale: f64,
    baby: usize,
    diagonals: usize,
    /// Non-zero baby steps, hoisted.
    baby_steps: Vec<i64>,
    groups: Vec<GiantGroup>,
    fingerprint: u64,
}

impl EncodedLinearTransform {
    /// The number of slots the transform acts on.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The level (limbs) the diagonals are encoded at; the evaluation runs at it.
    pub fn level(&self) -> usize {
        self.level
    }

    /// The scale of the encoded diagonals (the output's scale is the input's times this one).
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The baby step `b`.
    pub fn baby_step(&self) -> usize {
        self.baby
    }

    /// The number of non-zero diagonals (plaintext-ciphertext products of an evaluation).
    pub fn diagonal_count(&self) -> usize {
        self.diagonals
    }

    /// The hoisted baby-step rotations of an evaluation.
    pub fn baby_steps(&self) -> &[i64] {
        &self.baby_steps
    }

    /// The giant-step rotations of an evaluation (each a full key switch).
    pub fn giant_steps(&self) -> Vec<i64> {
        self.groups
            .iter()
            .map(|g| g.step)
            .filter(|s| s.rem_euclid(self.slots as i64) != 0)
            .collect()
    }

    /// The rotation steps an evaluation needs Galois keys for (baby and giant steps, sorted, without
    /// duplicates): pass them to [`crate::KeyGenerator::galois_keys`].
    pub fn rotation_steps(&self) -> Vec<i64> {
        let mut steps: Vec<i64> = self
            .baby_steps
            .iter()
            .copied()
            .chain(self.giant_steps())
            .collect();
        steps.sort_unstable();
        steps.dedup();
        steps
    }

    /// The fingerprint of the context it was encoded for.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }
}

impl Evaluator {
    /// `M ct`: the encoded transform applied to the slots of `ct` by baby-step giant-step (see the
    /// [module documentation](crate::linear_transform)), with the baby rotations hoisted.
    ///
    /// `ct` is first dropped to the transform's level (a strict evaluator, [`Evaluator::strict`],
    /// requires it at that level instead, as it does for plaintext operands). A ciphertext with fewer slots than the transform
    /// (a power of two dividing it) stands for its replicated slots. The result has the transform's slots
    /// and level and the scale `scale(ct) * lt.scale()`; it is **not rescaled**.
    ///
    /// Errors: [`Error::ContextMismatch`]; [`Error::SlotsMismatch`] unless `ct.slots()` divides
    /// `lt.slots()`; [`Error::NotEnoughLevels`] if `ct` is below the transform's level,
    /// [`Error::LevelMismatch`] if it is above it and the evaluator is strict;
    /// [`Error::InvalidArgument`] for a 3-part ciphertext (relinearize first);
    /// [`Error::ScaleTooLarge`] when the product scale does not fit the level's modulus;
    /// [`Error::MissingKey`] without Galois keys, [`Error::Core`] (`MissingGaloisKey`, naming the step)
    /// for a rotation step without a key ([`EncodedLinearTransform::rotation_steps`]).
    pub fn linear_transform(
        &self,
        ct: &Ciphertext,
        lt: &EncodedLinearTransform,
    ) -> Result<Ciphertext> {
        active_wait(|| self.linear_transform_waiting(ct, lt))
    }

    /// The work of [`Self::linear_transform`], which runs it inside [`active_wait`] (a long
    /// sequence of short parallel sections).
    fn linear_transform_waiting(
        &self,
        ct: &Ciphertext,
        lt: &EncodedLinearTransform,
    ) -> Result<Ciphertext> {
        const OP: &str = "linear transform";
        self.check_ct(ct)?;
        self.context()
            .check_fingerprint(lt.fingerprint, "encoded linear transform")?;
        if !lt.slots.is_multiple_of(ct.slots()) {
            return Err(Error::SlotsMismatch {
                operation: OP,
                left: ct.slots(),
                right: lt.slots,
            });
        }
        if ct.level() < lt.level {
            return Err(Error::NotEnoughLevels {
                operation: OP,
                level: ct.level(),
                log_scale: ct.log2_scale(),
                needed: lt.level,
                more: lt.level - ct.level(),
            });
        }
        if self.is_strict() && ct.level() != lt.level {
            // As for plaintext operands: a strict evaluator does not drop levels by itself.
            return Err(Error::LevelMismatch {
                operation: OP,
                left_level: ct.level(),
                left_log_scale: ct.log2_scale(),
                right_level: lt.level,
                right_log_scale: lt.scale.log2(),
            });
        }
        if ct.part_count() != 2 {
            return Err(Error::InvalidArgument {
                operation: OP,
                reason: format!(
                    "the ciphertext has {} parts; relinearize it first",
                    ct.part_count()
                ),
            });
        }
        let scale = ct.scale() * lt.scale;
        self.check_product_scale(lt.level, scale, OP)?;
        let mut input = self.drop_to_level(ct, lt.level)?;
        // The same plaintext, read as its replication to the transform's slot count.
        input.slots = lt.slots;
        let mut babies = Vec::with_capacity(lt.baby_steps.len() + 1);
        let rotated = self.rotate_hoisted(&input, &lt.baby_steps)?;
        babies.push(input);
        babies.extend(rotated);
        let partials = lt
            .groups
            .par_iter()
            .map(|group| -> Result<Ciphertext> {
                let parts = (0..2)
                    .map(|i| {
                        let terms: Vec<(&Poly<Ntt>, &Poly<Ntt>)> = group
                            .terms
                            .iter()
                            .map(|(pos, pt)| (&babies[*pos].inner.parts[i], pt))
                            .collect();
                        Poly::sum_of_products(&terms)
                    })
                    .collect::<rnsfhe_ring::Result<Vec<_>>>()?;
                let inner = self.wrap(RlweCiphertext { parts }, scale, lt.slots);
                self.rotate(&inner, group.step)
            })
            .collect::<Result<Vec<_>>>()?;
        let mut iter = partials.into_iter();
        let mut acc = iter.next().ok_or(Error::Empty {
            what: "encoded linear transform",
        })?;
        for p in iter {
            for (a, b) in acc.inner.parts.iter_mut().zip(&p.inner.parts) {
                a.add_assign(b)?;
            }
        }
        Ok(acc)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn c(re: f64, im: f64) -> Complex64 {
        Complex64::new(re, im)
    }

    fn sample(n: usize, seed: u64) -> Vec<Complex64> {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        (0..n).map(|_| c(next(), next())).collect()
    }

    fn dense_mul(rows: &[Vec<Complex64>], v: &[Complex64]) -> Vec<Complex64> {
        rows.iter()
            .map(|r| r.iter().zip(v).map(|(a, b)| a * b).sum())
            .collect()
    }

    fn close(a: &[Complex64], b: &[Complex64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).norm() < 1e-12)
    }

    #[test]
    fn dense_round_trip_apply_and_compose() {
        let n = 8;
        let rows: Vec<Vec<Complex64>> = (0..n).map(|p| sample(n, p as u64 + 1)).collect();
        let lt = LinearTransform::from_dense(&rows).unwrap();
        assert_eq!(lt.diagonal_count(), n);
        assert_eq!(lt.to_dense(), rows);
        let v = sample(n, 99);
        assert!(close(&lt.apply(&v).unwrap(), &dense_mul(&rows, &v)));
        let rows2: Vec<Vec<Complex64>> = (0..n).map(|p| sample(n, p as u64 + 50)).collect();
        let lt2 = LinearTransform::from_dense(&rows2).unwrap();
        let prod = lt2.compose(&lt).unwrap();
        let want = dense_mul(&rows2, &dense_mul(&rows, &v));
        assert!(close(&prod.apply(&v).unwrap(), &want));
        // A replicated input: 2 slots stand for 4 copies.
        let short = sample(2, 7);
        let long: Vec<Complex64> = (0..n).map(|i| short[i % 2]).collect();
        assert!(close(&lt.apply(&short).unwrap(), &dense_mul(&rows, &long)));
    }

    #[test]
    fn diagonals_sum_and_signed_plans() {
        let n = 64;
        // A band of width 31 around the main diagonal, as a merged group of four FFT stages.
        let lt =
            LinearTransform::from_diagonals(n, (-15..=15).map(|k| (k, sample(n, k as u64 + 20))))
                .unwrap();
        assert_eq!(lt.diagonal_count(), 31);
        // Baby step 8: babies 1..7, giants -16, -8, 8 (g = -2, -1, 1); baby step 4: 3 + 7.
        assert_eq!(lt.rotation_count(8).unwrap(), 10);
        assert_eq!(lt.rotation_count(4).unwrap(), 10);
        assert_eq!(lt.rotation_count(1).unwrap(), 30);
        assert_eq!(lt.default_baby_step(), 8);
        // Duplicate indices are added; -1 is n - 1.
        let d = sample(n, 3);
        let twice =
            LinearTransform::from_diagonals(n, [(-1, d.clone()), (n as i64 - 1, d.clone())])
                .unwrap();
        let doubled: Vec<Complex64> = d.iter().map(|z| z * 2.0).collect();
        assert_eq!(twice.diagonal(-1).unwrap(), doubled.as_slice());
        assert!(matches!(
            LinearTransform::from_diagonals(
                n,
                [(0, d.clone()), (0, d.iter().map(|z| -z).collect())]
            ),
            Err(Error::Empty { .. })
        ));
        assert!(matches!(
            LinearTransform::from_diagonals(6, [(0, vec![ZERO; 6])]),
            Err(Error::InvalidArgument { .. })
        ));
        assert!(matches!(
            LinearTransform::from_diagonals(8, [(0, vec![c(1.0, 0.0); 7])]),
            Err(Error::LengthMismatch { .. })
        ));
        assert!(matches!(
            LinearTransform::from_diagonals(2, [(0, vec![c(f64::NAN, 0.0); 2])]),
            Err(Error::NonFinite { .. })
        ));
        assert!(matches!(
            lt.apply(&sample(3, 1)),
            Err(Error::SlotsMismatch { .. })
        ));
        assert!(matches!(
            lt.rotation_count(3),
            Err(Error::InvalidArgument { .. })
        ));
    }
}
