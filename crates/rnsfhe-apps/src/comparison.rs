//! Comparison-based functions on encrypted values through PEGASUS look-up tables (Lu, Huang, Hong, Ma,
//! Qu, IEEE S&P 2021, Section V.A): min and max of two values, min / max of an array by a tree,
//! max-pooling with the scaled-max trick, bitonic sorting, and min-index / max-index (arg-min).
//!
//! Everything runs on the LWE side of a [`PegasusEvaluator`]: the LWE ciphertexts of
//! [`PegasusEvaluator::to_lwe`] (dimension `n_lwe`, modulus [`PegasusEvaluator::lwe_modulus`], scale
//! [`PegasusEvaluator::lwe_input_scale`]). A look-up table reads such a ciphertext and outputs one of
//! dimension `n` (the table ring's degree) under the ring secret; to compare again, the output goes back
//! to `n_lwe` by a key switch (PEGASUS Fig. 9) with the [`ComparisonKey`] — the pipeline's own keys hold
//! no such key on the ring-packing path. Tables whose outputs feed further tables write them at the
//! input scale (so a switched-back output is a valid input); the tables of a last stage write them at the
//! scale [`PegasusEvaluator::repack`] expects, so that they go back to CKKS as they are ([`Form`]).
//!
//! * `min(m0, m1) = T0(m0 + m1) - T1(m0 - m1)`, `max(m0, m1) = T0(m0 + m1) + T1(m0 - m1)` with
//!   `T0(x) = x / 2`, `T1(x) = |x| / 2` (Section V.A): two look-up tables give both, so a swap of a
//!   sorting network (ascending `(min, max)`, descending `(max, min)`) costs two tables. The two tables
//!   read different inputs, so they cannot share one blind rotation.
//! * min / max of `t` values: a tree of `t - 1` pairs, `2 (t - 1)` tables ([`Comparator::min_of`]).
//! * The trees of arg-min (below) use a pair of **one** table at the LWE side: `d = min(m0 - m1, 0)`,
//!   switched back to the LWE key, gives `min(m0, m1) = m1 + d` and `max(m0, m1) = m0 - d` (a pair of
//!   a last stage, [`Form::Repack`], keeps the two tables: its results must be under the table ring's
//!   secret, where the operands are not). Its bound is that of PEGASUS's pair or below
//!   ([`Comparator::pair_error_bound`] covers both), but its errors are larger in practice (one
//!   1-Lipschitz index error where the two tables take two halves); the functions whose results are
//!   values (min, max, sorting, and the k-means built on them) keep the two tables.
//! * max-pooling over groups of `t` (a power of two): the tree of the scaled max
//!   `max'(m0, m1) = m0 + m1 + |m0 - m1| = 2 max(m0, m1)`, one table (`|x|`) per pair, and one final
//!   table `x / t`: `t` tables per group, for values `t` times smaller
//!   (`|t max| <= B`, the paper's condition `|t max| < q_0 / (4 Delta)`) ([`Comparator::max_pool`]).
//! * bitonic sort of `t` values (a power of two): `log t (log t + 1) / 2` layers of `t / 2` swaps each,
//!   `t` tables per layer ([`Comparator::sort`]).
//! * min-index / max-index: the min-tree of one-table pairs, then the predicate `I(m_i - min <= tau)` on
//!   every value: `2t - 1` tables; the threshold `tau` is the error bound of the tree plus the table's index error, not
//!   PEGASUS's `0`, which a computed minimum a little above the true one would miss
//!   ([`Comparator::argmin`]). The minimum and its index together ([`Comparator::min_and_argmin`], what
//!   OpenFHE's `EvalMinSchemeSwitching` returns) share the tree: `2t` tables for [`Form::Repack`].
//!
//! Every stage is one parallel batch (rayon, keys shared): all pairs of one tree level (of all groups),
//! all swaps of one bitonic layer.
//!
//! **Input range** (what is checkable is checked): the tables read inputs in `[-B, B]`, `B` the
//! pipeline's input bound. The comparator is made for values of a declared bound `V`
//! ([`Comparator::new`]): `m0 + m1` and `m0 - m1` lie in `[-2V, 2V]`, so `V <= B / 2`; max-pooling over
//! `t` needs `t V <= B`. A declared bound beyond these is refused ([`Error::OutOfDomain`]); the values
//! themselves are encrypted, and one beyond the declared bound wraps around a table undetectably.
//!
//! **Error model**: every table has the error of PEGASUS Eq. (3) ([`PegasusEvaluator::lut_error_bound`],
//! six standard deviations) and every switch back adds the key switch's
//! ([`rnsfhe_lwe::LweSwitchingKey::added_variance`]). min and max are 1-Lipschitz, so errors add along a
//! path: a tree of depth `d` is within `d` pair bounds of the true minimum, a sorting network of `L`
//! layers within `L` pair bounds of the sorted values ([`Comparator::pair_error_bound`] and the bounds
//! after it). Two values closer than such a bound may come out in either order (a sort returns values
//! within the bound of the sorted ones either way), and arg-min marks every value within
//! [`Comparator::argmin_threshold`] of the computed minimum: inputs whose distinct values are separated by
//! more than [`Comparator::argmin_resolution`] get exactly one bit per distinct minimum (equal values all
//! get theirs).

use std::borrow::Borrow;
use std::sync::Arc;

use rayon::prelude::*;
use rnsfhe_ckks::{Ciphertext, Csprng};
use rnsfhe_core::RlweContext;
use rnsfhe_lwe::{
    LookupTable, LweCiphertext, LweDimension, LweSecretDistribution, LweSwitchingKey,
    LweSwitchingKeyContext,
};
use rnsfhe_math::wire::{DecodeError, DecodeErrorKind, Deserializable, Integrity};
use rnsfhe_pegasus::{PegasusEvaluator, PegasusSecretKeys};

use crate::error::{Error, Result};

/// Where the outputs of a function go (see the [module documentation](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Form {
    /// Back at the LWE side: dimension `n_lwe`, the modulus and scale of
    /// [`PegasusEvaluator::to_lwe`]'s ciphertexts, under the LWE key: inputs of further comparisons or
    /// tables (one key switch per output).
    Lwe,
    /// Table outputs as they are: dimension `n` under the table ring's secret, modulo `q_0`, at the scale
    /// of [`Outputs::repack_table`]: inputs of [`Comparator::repack`] (no key switch).
    Repack,
}

/// The order of a sort.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Order {
    /// Smallest first.
    Ascending,
    /// Largest first.
    Descending,
}

/// The outputs of a function on LWE ciphertexts, in the [`Form`] asked for.
#[derive(Clone, Debug)]
pub struct Outputs {
    /// The ciphertexts, in the order the function documents.
    pub ciphertexts: Vec<LweCiphertext>,
    /// Their form.
    pub form: Form,
    /// For [`Form::Repack`]: the table whose output scale they carry (what
    /// [`PegasusEvaluator::repack`] reads); `None` for [`Form::Lwe`].
    pub repack_table: Option<Arc<LookupTable>>,
}

/// The switching key from the look-up-table ring's secret back to the LWE secret (PEGASUS Fig. 9): what
/// a comparison needs beyond the pipeline's keys, to feed a table's output to another table.
#[derive(Clone, Debug)]
pub struct ComparisonKey {
    back: LweSwitchingKey,
}

impl ComparisonKey {
    /// Generates the key for `pegasus` from its LWE-side secrets, with the key-switching parameters of
    /// its LWE side (PEGASUS Table IV's `B_ks`, `d_ks`, `sigma_ks`, modulo `q_ks`), refusing keys the
    /// estimator puts below 128 bits unless the pipeline was made with
    /// [`rnsfhe_pegasus::PipelineOptions::allow_insecure`].
    ///
    /// Errors: [`Error::Lwe`] for an insecure key without the opt-in, or secrets of other dimensions than
    /// the pipeline's.
    pub fn generate(
        pegasus: &PegasusEvaluator,
        secrets: &PegasusSecretKeys,
        rng: &mut Csprng,
    ) -> Result<Self> {
        let params = pegasus.params().lwe.key_switch;
        let (from, to) = (&secrets.lut_ring, &secrets.lwe);
        let back = if pegasus.options().allow_insecure {
            LweSwitchingKey::generate_allowing_insecure(from, to, params, rng)?
        } else {
            LweSwitchingKey::generate(from, to, params, rng)?
        };
        Ok(Self { back })
    }

    /// A key from a switching key made elsewhere (from the table ring's secret to the LWE secret);
    /// [`Comparator::new`] checks its dimensions and modulus.
    pub fn from_switching_key(back: LweSwitchingKey) -> Self {
        Self { back }
    }

    /// The switching key. Its wire form (the LWE switching key's of `rnsfhe-lwe`:
    /// `switching_key().to_bytes_sealed(randomness, integrity)`) is the key's; a server loads it with
    /// [`ComparisonKey::from_bytes_sealed`].
    pub fn switching_key(&self) -> &LweSwitchingKey {
        &self.back
    }

    /// The context the key of `pegasus` is read against: from the table ring's degree `n` to `n_lwe`,
    /// with the key-switching parameters of the LWE side (what [`ComparisonKey::generate`] uses).
    ///
    /// Errors: [`Error::Lwe`] for key-switching parameters the LWE layer refuses.
    pub fn wire_context(pegasus: &PegasusEvaluator) -> Result<LweSwitchingKeyContext> {
        let params = pegasus.params();
        let from = LweDimension::new(pegasus.lut_evaluator().key().context().n())?;
        let to = LweDimension::new(params.lwe.lwe_dimension)?;
        Ok(LweSwitchingKeyContext::new(
            from,
            to,
            params.lwe.key_switch,
        )?)
    }

    /// The key of `pegasus` from exactly `bytes` (its switching key's wire form, see
    /// [`ComparisonKey::switching_key`]), the digest checked in the mode `integrity` (a MAC) before
    /// anything else: a server's load of what the client sent. The header's fingerprint binds the key
    /// to the pipeline's dimensions and key-switching parameters, so a key of another pipeline is
    /// refused before its payload is read.
    ///
    /// Errors: [`DecodeError`] naming the field and byte offset (damaged, truncated or foreign bytes;
    /// never a panic).
    pub fn from_bytes_sealed(
        bytes: &[u8],
        pegasus: &PegasusEvaluator,
        integrity: Integrity<'_>,
    ) -> std::result::Result<Self, DecodeError> {
        let ctx = Self::wire_context(pegasus).map_err(|e| {
            DecodeError::new(
                "comparison_key",
                0,
                DecodeErrorKind::Invalid(format!("the pipeline has no switching-key context: {e}")),
            )
        })?;
        Ok(Self {
            back: LweSwitchingKey::from_bytes_sealed(bytes, &ctx, integrity)?,
        })
    }
}

/// The tables of the pairwise functions, made once.
#[derive(Debug)]
struct Tables {
    /// `x / 2` and `|x| / 2` at the input scale (outputs fed back).
    half: LookupTable,
    half_abs: LookupTable,
    /// `min(x, 0)` at the input scale: the one table of an arg-min tree's pair,
    /// `min(a, b) = b + min(a - b, 0)` and `max(a, b) = a - min(a - b, 0)`.
    min0: LookupTable,
    /// `|x|` at the input scale (the scaled max).
    abs: LookupTable,
    /// `x / 2` and `|x| / 2` at the repacking scale (last stages).
    half_repack: Arc<LookupTable>,
    half_abs_repack: LookupTable,
    /// `x` at the repacking scale: the extremes of [`Comparator::min_and_argmin`] back to CKKS.
    identity_repack: Arc<LookupTable>,
}

/// min / max, max-pooling, sorting and arg-min on the LWE ciphertexts of a PEGASUS pipeline (see the
/// [module documentation](self)). `P` is how the comparator holds the pipeline: `&PegasusEvaluator`,
/// `Arc<PegasusEvaluator>`, or the evaluator itself.
#[derive(Debug)]
pub struct Comparator<P> {
    pegasus: P,
    key: ComparisonKey,
    lut_ctx: Arc<RlweContext>,
    /// The modulus `q` and scale `Delta` of the LWE side (at `q`), and `q_0`.
    modulus: u64,
    scale: f64,
    q0: u64,
    /// The pipeline's input bound `B` (the tables' domain) and the declared bound `V` of the values.
    domain: f64,
    bound: f64,
    tables: Tables,
    /// Six standard deviations of the switch back, in value units.
    switch_bound: f64,
}

/// Which results of a pair to compute.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Need {
    Min,
    Max,
    Both,
}

/// One pair of a layer: the indices of its operands, what it needs and the form of its results.
struct Pair {
    a: usize,
    b: usize,
    need: Need,
    form: Form,
    /// For [`Form::Lwe`]: the one-table pair (`b + min(a - b, 0)`) instead of PEGASUS's two tables.
    one_table: bool,
}

impl<P: Borrow<PegasusEvaluator> + Sync> Comparator<P> {
    /// A comparator on `pegasus` with the switching key `key`, for values of absolute value at most
    /// `bound` (`None`: `B / 2`, the largest the pairwise functions allow).
    ///
    /// Errors: [`Error::InvalidArgument`] for a bound that is not finite and positive, or a key of other
    /// dimensions or modulus than the pipeline's (from the table ring's degree `n` to `n_lwe`, modulo
    /// the LWE side's modulus); [`Error::OutOfDomain`] for a bound above `B / 2`; [`Error::Lwe`] /
    /// [`Error::Pegasus`] for tables the pipeline cannot make.
    pub fn new(pegasus: P, key: ComparisonKey, bound: Option<f64>) -> Result<Self> {
        let p = pegasus.borrow();
        let params = p.params();
        let domain = p.options().input_bound;
        let bound = bound.unwrap_or(domain / 2.0);
        if !(bound.is_finite() && bound > 0.0) {
            return Err(Error::InvalidArgument {
                what: "value bound",
                reason: format!("{bound} is not a finite positive number"),
            });
        }
        check_factor("Comparator (m0 + m1, m0 - m1)", bound, 2.0, domain)?;
        let lut_ctx = if p.options().allow_insecure {
            params.lwe.lut.context_allowing_insecure()?
        } else {
            params.lwe.lut.context()?
        };
        let modulus = p.lwe_modulus()?;
        let scale = p.lwe_input_scale()?;
        let q0 = params.q0();
        let back = &key.back;
        if back.from_dimension().get() != lut_ctx.n()
            || back.to_dimension().get() != params.lwe.lwe_dimension
            || back.params().modulus != modulus
        {
            return Err(Error::InvalidArgument {
                what: "comparison key",
                reason: format!(
                    "it switches from dimension {} to {} modulo {}; the pipeline needs {} (the table \
                     ring's degree) to {} (n_lwe) modulo {modulus}: make it with \
                     ComparisonKey::generate for this pipeline",
                    back.from_dimension(),
                    back.to_dimension(),
                    back.params().modulus,
                    lut_ctx.n(),
                    params.lwe.lwe_dimension,
                )
            });
        }
        // The switch to q_ks before the key switch (Secure128) rounds by (1 + ||s_ring||^2) / 12.
        let rounding = if modulus == q0 {
            0.0
        } else {
            let ring = LweSecretDistribution::from(params.lwe.lut.secret);
            (1.0 + ring.expected_norm_sq(lut_ctx.n())) / 12.0
        };
        let switch_bound = 6.0 * (back.added_variance() + rounding).sqrt() / scale;
        let chained = |f: &dyn Fn(f64) -> f64| -> Result<LookupTable> {
            // Outputs at the input scale at q_0: after the switch to q they are at the input scale at q.
            let out = scale * q0 as f64 / modulus as f64;
            Ok(LookupTable::from_fn_for_input_modulus(
                &lut_ctx, modulus, scale, out, f,
            )?)
        };
        let tables = Tables {
            half: chained(&|x| x / 2.0)?,
            half_abs: chained(&|x: f64| x.abs() / 2.0)?,
            min0: chained(&|x: f64| x.min(0.0))?,
            abs: chained(&f64::abs)?,
            half_repack: Arc::new(p.table(|x| x / 2.0)?),
            half_abs_repack: p.table(|x: f64| x.abs() / 2.0)?,
            identity_repack: Arc::new(p.table(|x| x)?),
        };
        Ok(Self {
            pegasus,
            key,
            lut_ctx,
            modulus,
            scale,
            q0,
            domain,
            bound,
            tables,
            switch_bound,
        })
    }

    /// The pipeline.
    pub fn pegasus(&self) -> &PegasusEvaluator {
        self.pegasus.borrow()
    }

    /// The switching key.
    pub fn key(&self) -> &ComparisonKey {
        &self.key
    }

    /// The declared bound `V` of the values.
    pub fn bound(&self) -> f64 {
        self.bound
    }

    /// The tables' domain `B` (the pipeline's input bound).
    pub fn domain(&self) -> f64 {
        self.domain
    }

    /// The scale of the values in [`Form::Lwe`] ciphertexts, at [`PegasusEvaluator::lwe_modulus`].
    pub fn scale(&self) -> f64 {
        self.scale
    }

    // ----- error bounds -----

    /// The error bound of one min or max (six standard deviations), the larger of its two forms at the
    /// LWE side: PEGASUS Eq. (3) for `T0` and `T1`, both 1/2-Lipschitz, plus the switch back; for the
    /// one-table pair of the arg-min trees, Eq. (3) for the 1-Lipschitz `min(x, 0)` plus the switch
    /// back (the operands enter exactly: `b + min(a - b, 0)` is `min(a, b)` of the operands as they
    /// are).
    ///
    /// Errors: as [`PegasusEvaluator::lut_error_bound`].
    pub fn pair_error_bound(&self) -> Result<f64> {
        let p = self.pegasus();
        let t = &self.tables;
        let two = p.lut_error_bound(&t.half, 0.5)?
            + p.lut_error_bound(&t.half_abs, 0.5)?
            + self.switch_bound;
        let one = p.lut_error_bound(&t.min0, 1.0)? + self.switch_bound;
        Ok(two.max(one))
    }

    /// The error bound of the min or max of `t` values: `ceil(log2 t)` pairs on every path of the tree.
    ///
    /// Errors: as [`Comparator::pair_error_bound`].
    pub fn tree_error_bound(&self, t: usize) -> Result<f64> {
        Ok(tree_depth(t) as f64 * self.pair_error_bound()?)
    }

    /// The error bound of a bitonic sort of `t` values: one pair per layer, `log t (log t + 1) / 2`
    /// layers.
    ///
    /// Errors: as [`Comparator::pair_error_bound`].
    pub fn sort_error_bound(&self, t: usize) -> Result<f64> {
        let l = tree_depth(t);
        Ok((l * (l + 1) / 2) as f64 * self.pair_error_bound()?)
    }

    /// The error bound of max-pooling over `t` values: level `j` of the scaled tree carries at most
    /// `(2^j - 1)` times the error `E` of one scaled max (`|x|`, 1-Lipschitz, and the switch back), since
    /// `2 max` is 2-Lipschitz; the final `x / t` divides it by `t` and adds its own:
    /// `(t - 1) / t E + E(x / t)`.
    ///
    /// Errors: as [`Comparator::pair_error_bound`]; [`Error::InvalidArgument`] for `t` not a power of two.
    pub fn max_pool_error_bound(&self, t: usize) -> Result<f64> {
        check_power_of_two("max-pooling", t)?;
        let p = self.pegasus();
        let step = p.lut_error_bound(&self.tables.abs, 1.0)? + self.switch_bound;
        let last = self.pool_table(t, Form::Lwe)?;
        let tf = t as f64;
        Ok((tf - 1.0) / tf * step + p.lut_error_bound(&last, 1.0 / tf)?)
    }

    /// The threshold `tau` of arg-min over `t` values: the minimum's error bound plus the index error of
    /// the predicate's table (its bound for a 1-Lipschitz function). The true minimum is within `tau` of
    /// the computed one, so `I(m_i - min <= tau)` marks it.
    ///
    /// Errors: as [`Comparator::pair_error_bound`].
    pub fn argmin_threshold(&self, t: usize) -> Result<f64> {
        let index = self.pegasus().lut_error_bound(&self.tables.half, 1.0)?;
        Ok(self.tree_error_bound(t)? + index)
    }

    /// The separation arg-min over `t` values resolves: `2 tau` ([`Comparator::argmin_threshold`]). A
    /// value more than this above the minimum gets 0; values closer may get 1 as well.
    ///
    /// Errors: as [`Comparator::pair_error_bound`].
    pub fn argmin_resolution(&self, t: usize) -> Result<f64> {
        Ok(2.0 * self.argmin_threshold(t)?)
    }

    /// The error bound of the minima (maxima) of [`Comparator::min_and_argmin`] in `form`: the tree's
    /// ([`Comparator::tree_error_bound`]), plus one identity table (1-Lipschitz) for [`Form::Repack`].
    ///
    /// Errors: as [`Comparator::pair_error_bound`].
    pub fn min_and_argmin_error_bound(&self, t: usize, form: Form) -> Result<f64> {
        let tree = self.tree_error_bound(t)?;
        Ok(match form {
            Form::Lwe => tree,
            _ => {
                tree + self
                    .pegasus()
                    .lut_error_bound(&self.tables.identity_repack, 1.0)?
            }
        })
    }

    // ----- one table per value -----

    /// `f` on every ciphertext by one look-up table each, in one parallel batch (PEGASUS Section V.A's
    /// one-table functions: sigmoid, ReLU, square root, reciprocal): the table is sampled on the inputs'
    /// grid over `[-B, B]`; for [`Form::Lwe`] its values must stay within `[-B, B]` too (they are written
    /// at the input scale, to feed further tables), for [`Form::Repack`] any finite values.
    ///
    /// Errors: [`Error::InvalidArgument`] for an empty input or ciphertexts of another dimension or
    /// modulus than the pipeline's LWE side; [`Error::Lwe`] / [`Error::Pegasus`] for a function that
    /// is not finite or too large for its table; table and key-switch errors.
    pub fn lut(
        &self,
        cts: &[LweCiphertext],
        f: impl Fn(f64) -> f64,
        form: Form,
    ) -> Result<Outputs> {
        self.check_groups(cts, 1, 1, "look-up table")?;
        let table = Arc::new(match form {
            Form::Lwe => self.chained_table(&f)?,
            _ => self.pegasus().table(f)?,
        });
        let jobs: Vec<_> = cts.iter().map(|c| (c, table.as_ref())).collect();
        let out = self.eval(&jobs)?;
        let out = match form {
            Form::Lwe => self.back_all(&out)?,
            _ => out,
        };
        Ok(self.outputs(out, form, &table))
    }

    // ----- pairs -----

    /// `max(a, b)` at the LWE side (two tables).
    ///
    /// Errors: [`Error::InvalidArgument`] for ciphertexts of another dimension or modulus than the
    /// pipeline's LWE side; table and key-switch errors.
    pub fn max(&self, a: &LweCiphertext, b: &LweCiphertext) -> Result<LweCiphertext> {
        self.one(a, b, Need::Max)
    }

    /// `min(a, b)` at the LWE side (two tables).
    ///
    /// Errors: as [`Comparator::max`].
    pub fn min(&self, a: &LweCiphertext, b: &LweCiphertext) -> Result<LweCiphertext> {
        self.one(a, b, Need::Min)
    }

    /// The swap of a sorting network: `(min, max)` ascending, `(max, min)` descending, from the same two
    /// tables.
    ///
    /// Errors: as [`Comparator::max`].
    pub fn swap(
        &self,
        a: &LweCiphertext,
        b: &LweCiphertext,
        order: Order,
    ) -> Result<(LweCiphertext, LweCiphertext)> {
        let values = [a.clone(), b.clone()];
        self.check_inputs(&values, "swap")?;
        let pair = Pair {
            a: 0,
            b: 1,
            need: Need::Both,
            form: Form::Lwe,
            one_table: false,
        };
        let mut out = self.pair_layer(&values, &[pair])?;
        let (min, max) = out.pop().ok_or_else(|| internal("swap"))?;
        let (min, max) = (
            min.ok_or_else(|| internal("swap"))?,
            max.ok_or_else(|| internal("swap"))?,
        );
        Ok(match order {
            Order::Ascending => (min, max),
            Order::Descending => (max, min),
        })
    }

    fn one(&self, a: &LweCiphertext, b: &LweCiphertext, need: Need) -> Result<LweCiphertext> {
        let values = [a.clone(), b.clone()];
        self.check_inputs(&values, "min / max")?;
        let pair = Pair {
            a: 0,
            b: 1,
            need,
            form: Form::Lwe,
            one_table: false,
        };
        let (min, max) = self
            .pair_layer(&values, &[pair])?
            .pop()
            .ok_or_else(|| internal("min / max"))?;
        match need {
            Need::Max => max,
            _ => min,
        }
        .ok_or_else(|| internal("min / max"))
    }

    // ----- arrays -----

    /// The minimum of every group of `t` consecutive ciphertexts of `cts` (`t >= 2` dividing their
    /// count), by a tree of `t - 1` pairs per group (`2 (t - 1)` tables), all groups' pairs of one level
    /// in one parallel batch. One output per group.
    ///
    /// Errors: [`Error::InvalidArgument`] for `t < 2`, a count not a multiple of `t`, or ciphertexts of
    /// another dimension or modulus than the pipeline's LWE side; table and key-switch errors.
    pub fn min_of(&self, cts: &[LweCiphertext], t: usize, form: Form) -> Result<Outputs> {
        self.check_groups(cts, t, 2, "min")?;
        let out = self.tree(cts.to_vec(), t, Need::Min, form, false)?;
        Ok(self.outputs(out, form, &self.tables.half_repack))
    }

    /// The maximum of every group of `t` consecutive ciphertexts, as [`Comparator::min_of`].
    ///
    /// Errors: as [`Comparator::min_of`].
    pub fn max_of(&self, cts: &[LweCiphertext], t: usize, form: Form) -> Result<Outputs> {
        self.check_groups(cts, t, 2, "max")?;
        let out = self.tree(cts.to_vec(), t, Need::Max, form, false)?;
        Ok(self.outputs(out, form, &self.tables.half_repack))
    }

    /// Max-pooling: the maximum of every group of `t` consecutive ciphertexts (`t` a power of two, at
    /// least 2: 4 for a 2x2 window, 16 for 4x4, laid out consecutively), by the scaled max
    /// `max'(m0, m1) = m0 + m1 + |m0 - m1|` (one table per pair) and a final `x / t` (PEGASUS Section
    /// V.A): `t` tables per group. Needs `t V <= B` ([`Comparator::bound`], [`Comparator::domain`]).
    ///
    /// Errors: as [`Comparator::min_of`]; [`Error::InvalidArgument`] for `t` not a power of two;
    /// [`Error::OutOfDomain`] for `t V > B`.
    pub fn max_pool(&self, cts: &[LweCiphertext], t: usize, form: Form) -> Result<Outputs> {
        check_power_of_two("max-pooling", t)?;
        self.check_groups(cts, t, 2, "max-pooling")?;
        check_factor("max-pooling (t max)", self.bound, t as f64, self.domain)?;
        let mut values = cts.to_vec();
        let mut width = t;
        while width > 1 {
            // Level: pairs (2i, 2i + 1) of every group, all in one batch.
            let diffs = (0..values.len() / 2)
                .map(|i| Ok(values[2 * i].sub(&values[2 * i + 1])?))
                .collect::<Result<Vec<_>>>()?;
            let abs = self.eval(
                &diffs
                    .iter()
                    .map(|d| (d, &self.tables.abs))
                    .collect::<Vec<_>>(),
            )?;
            values = (0..values.len() / 2)
                .into_par_iter()
                .map(|i| {
                    let mut s = values[2 * i].add(&values[2 * i + 1])?;
                    s.add_assign(&self.back(&abs[i])?)?;
                    Ok(s)
                })
                .collect::<Result<Vec<_>>>()?;
            width /= 2;
        }
        let last = Arc::new(self.pool_table(t, form)?);
        let jobs: Vec<_> = values.iter().map(|v| (v, last.as_ref())).collect();
        let out = self.eval(&jobs)?;
        let out = match form {
            Form::Lwe => self.back_all(&out)?,
            _ => out,
        };
        Ok(self.outputs(out, form, &last))
    }

    /// Bitonic sort of `cts` (a power of two of them, at least 2) in `order`: `log t (log t + 1) / 2`
    /// layers of `t / 2` swaps, each swap the two tables of min and max, each layer one parallel batch.
    ///
    /// Errors: [`Error::InvalidArgument`] for a count that is not a power of two of at least 2, or
    /// ciphertexts of another dimension or modulus than the pipeline's LWE side; table and key-switch
    /// errors.
    pub fn sort(&self, cts: &[LweCiphertext], order: Order, form: Form) -> Result<Outputs> {
        let t = cts.len();
        check_power_of_two("sorting", t)?;
        self.check_groups(cts, t, 2, "sorting")?;
        let mut values = cts.to_vec();
        let layers = bitonic_layers(t);
        for (index, &(size, stride)) in layers.iter().enumerate() {
            let last = index + 1 == layers.len();
            let form = if last { form } else { Form::Lwe };
            let mut pairs = Vec::with_capacity(t / 2);
            let mut ascending = Vec::with_capacity(t / 2);
            for i in 0..t {
                let l = i ^ stride;
                if l > i {
                    pairs.push(Pair {
                        a: i,
                        b: l,
                        need: Need::Both,
                        form,
                        one_table: false,
                    });
                    ascending.push(((i & size) == 0) == (order == Order::Ascending));
                }
            }
            let results = self.pair_layer(&values, &pairs)?;
            for ((pair, up), (min, max)) in pairs.iter().zip(ascending).zip(results) {
                let (min, max) = (
                    min.ok_or_else(|| internal("sort"))?,
                    max.ok_or_else(|| internal("sort"))?,
                );
                let (first, second) = if up { (min, max) } else { (max, min) };
                values[pair.a] = first;
                values[pair.b] = second;
            }
        }
        Ok(self.outputs(values, form, &self.tables.half_repack))
    }

    /// Min-index: for every group of `t` consecutive ciphertexts (`t >= 2` dividing their count), bits
    /// `b_i = I(m_i - min <= tau)` (PEGASUS Section V.A's predicate, with the threshold
    /// [`Comparator::argmin_threshold`]): the min-tree of one-table pairs (`t - 1` tables), then one
    /// predicate table
    /// per value; `2t - 1` tables per group. Outputs in the input order, `1` at the scale of the form.
    ///
    /// Errors: as [`Comparator::min_of`].
    pub fn argmin(&self, cts: &[LweCiphertext], t: usize, form: Form) -> Result<Outputs> {
        self.arg(cts, t, form, Need::Min)
    }

    /// Max-index: bits `I(max - m_i <= tau)`, as [`Comparator::argmin`].
    ///
    /// Errors: as [`Comparator::min_of`].
    pub fn argmax(&self, cts: &[LweCiphertext], t: usize, form: Form) -> Result<Outputs> {
        self.arg(cts, t, form, Need::Max)
    }

    /// The minimum (or maximum) of every group of `t` values AND its index bits, from one min-tree:
    /// `(extremes, bits)` with the extremes as [`Comparator::min_of`] returns them (one per group) and the
    /// bits as [`Comparator::argmin`]. What OpenFHE's `EvalMinSchemeSwitching` returns, at the cost of
    /// arg-min alone plus, for [`Form::Repack`], one identity table per group (the tree's extremes are
    /// at the LWE side; [`Form::Lwe`] returns them as they are): `2t` tables per group instead of
    /// the `4t - 3` of [`Comparator::min_of`] and [`Comparator::argmin`] called one after the other.
    /// The extremes' error bound is [`Comparator::min_and_argmin_error_bound`].
    ///
    /// Errors: as [`Comparator::min_of`].
    pub fn min_and_argmin(
        &self,
        cts: &[LweCiphertext],
        t: usize,
        form: Form,
    ) -> Result<(Outputs, Outputs)> {
        self.extremes_and_bits(cts, t, form, Need::Min, true)
            .and_then(|(m, bits)| Ok((m.ok_or_else(|| internal("min and arg-min"))?, bits)))
    }

    /// The maximum of every group of `t` values and its index bits, as [`Comparator::min_and_argmin`].
    ///
    /// Errors: as [`Comparator::min_of`].
    pub fn max_and_argmax(
        &self,
        cts: &[LweCiphertext],
        t: usize,
        form: Form,
    ) -> Result<(Outputs, Outputs)> {
        self.extremes_and_bits(cts, t, form, Need::Max, true)
            .and_then(|(m, bits)| Ok((m.ok_or_else(|| internal("max and arg-max"))?, bits)))
    }

    fn arg(&self, cts: &[LweCiphertext], t: usize, form: Form, need: Need) -> Result<Outputs> {
        Ok(self.extremes_and_bits(cts, t, form, need, false)?.1)
    }

    /// The min-tree (at the LWE side), then the predicate table on every value and, when `extremes` is
    /// asked for in [`Form::Repack`], the identity table on every group's extreme, all in one batch.
    fn extremes_and_bits(
        &self,
        cts: &[LweCiphertext],
        t: usize,
        form: Form,
        need: Need,
        extremes: bool,
    ) -> Result<(Option<Outputs>, Outputs)> {
        self.check_groups(cts, t, 2, "arg-min / arg-max")?;
        let tops = self.tree(cts.to_vec(), t, need, Form::Lwe, true)?;
        let diffs = cts
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let e = &tops[i / t];
                Ok(match need {
                    Need::Max => e.sub(m)?,
                    _ => m.sub(e)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let tau = self.argmin_threshold(t)?;
        let predicate = move |x: f64| if x <= tau { 1.0 } else { 0.0 };
        let table = Arc::new(match form {
            Form::Lwe => self.chained_table(&predicate)?,
            _ => self.pegasus().table(predicate)?,
        });
        let repack_tops = extremes && form == Form::Repack;
        let identity = self.tables.identity_repack.as_ref();
        let jobs: Vec<_> = diffs
            .iter()
            .map(|d| (d, table.as_ref()))
            .chain(tops.iter().filter(|_| repack_tops).map(|e| (e, identity)))
            .collect();
        let mut out = self.eval(&jobs)?;
        let tops_out = match (extremes, form) {
            (false, _) => None,
            (true, Form::Lwe) => Some(self.outputs(tops, form, &self.tables.identity_repack)),
            (true, _) => Some(self.outputs(
                out.split_off(diffs.len()),
                form,
                &self.tables.identity_repack,
            )),
        };
        let out = match form {
            Form::Lwe => self.back_all(&out)?,
            _ => out,
        };
        Ok((tops_out, self.outputs(out, form, &table)))
    }

    // ----- CKKS entry points -----

    /// [`Comparator::max_pool`] on the slots of a CKKS ciphertext of the pipeline (its slot count, at
    /// least [`PegasusEvaluator::input_level`]): groups of `t` consecutive slots; the maxima, one per
    /// group, in the first `slots / t` slots of the result (the rest 0), at the repacking's output
    /// level.
    ///
    /// Errors: as [`PegasusEvaluator::to_lwe`] (slot count, level, context) and
    /// [`Comparator::max_pool`] (`t` must divide the slot count).
    pub fn max_pool_ckks(&self, ct: &Ciphertext, t: usize) -> Result<Ciphertext> {
        let lwes = self.pegasus().to_lwe(ct)?;
        self.repack(&self.max_pool(&lwes, t, Form::Repack)?)
    }

    /// [`Comparator::sort`] of all the slots of a CKKS ciphertext of the pipeline (pad unused slots
    /// with values past the end of the order, within the declared bound).
    ///
    /// Errors: as [`PegasusEvaluator::to_lwe`] and [`Comparator::sort`].
    pub fn sort_ckks(&self, ct: &Ciphertext, order: Order) -> Result<Ciphertext> {
        let lwes = self.pegasus().to_lwe(ct)?;
        self.repack(&self.sort(&lwes, order, Form::Repack)?)
    }

    /// [`Comparator::argmin`] on groups of `t` consecutive slots of a CKKS ciphertext of the pipeline:
    /// the bits in the slots of their values.
    ///
    /// Errors: as [`PegasusEvaluator::to_lwe`] and [`Comparator::argmin`].
    pub fn argmin_ckks(&self, ct: &Ciphertext, t: usize) -> Result<Ciphertext> {
        let lwes = self.pegasus().to_lwe(ct)?;
        self.repack(&self.argmin(&lwes, t, Form::Repack)?)
    }

    /// [`Comparator::argmax`] on groups of `t` consecutive slots, as [`Comparator::argmin_ckks`].
    ///
    /// Errors: as [`PegasusEvaluator::to_lwe`] and [`Comparator::argmax`].
    pub fn argmax_ckks(&self, ct: &Ciphertext, t: usize) -> Result<Ciphertext> {
        let lwes = self.pegasus().to_lwe(ct)?;
        self.repack(&self.argmax(&lwes, t, Form::Repack)?)
    }

    /// [`Comparator::min_and_argmin`] on groups of `t` consecutive slots of a CKKS ciphertext of the
    /// pipeline, from one extraction and one repacking ([`PegasusEvaluator::repack_pair`]): `(minima
    /// in the first slots, bits in the slots of their values)`, the rest of the slots 0, two
    /// ciphertexts at one level below [`PegasusEvaluator::repack`]'s output level.
    ///
    /// Errors: as [`PegasusEvaluator::to_lwe`] and [`Comparator::min_of`].
    pub fn min_and_argmin_ckks(
        &self,
        ct: &Ciphertext,
        t: usize,
    ) -> Result<(Ciphertext, Ciphertext)> {
        let lwes = self.pegasus().to_lwe(ct)?;
        let (m, bits) = self.min_and_argmin(&lwes, t, Form::Repack)?;
        self.repack_pair(&m, &bits)
    }

    /// [`Comparator::max_and_argmax`] on groups of `t` consecutive slots, as
    /// [`Comparator::min_and_argmin_ckks`].
    ///
    /// Errors: as [`PegasusEvaluator::to_lwe`] and [`Comparator::max_of`].
    pub fn max_and_argmax_ckks(
        &self,
        ct: &Ciphertext,
        t: usize,
    ) -> Result<(Ciphertext, Ciphertext)> {
        let lwes = self.pegasus().to_lwe(ct)?;
        let (m, bits) = self.max_and_argmax(&lwes, t, Form::Repack)?;
        self.repack_pair(&m, &bits)
    }

    /// [`Comparator::min_of`] on groups of `t` consecutive slots: the minima in the first slots.
    ///
    /// Errors: as [`PegasusEvaluator::to_lwe`] and [`Comparator::min_of`].
    pub fn min_ckks(&self, ct: &Ciphertext, t: usize) -> Result<Ciphertext> {
        let lwes = self.pegasus().to_lwe(ct)?;
        self.repack(&self.min_of(&lwes, t, Form::Repack)?)
    }

    /// [`Comparator::max_of`] on groups of `t` consecutive slots: the maxima in the first slots.
    ///
    /// Errors: as [`PegasusEvaluator::to_lwe`] and [`Comparator::max_of`].
    pub fn max_ckks(&self, ct: &Ciphertext, t: usize) -> Result<Ciphertext> {
        let lwes = self.pegasus().to_lwe(ct)?;
        self.repack(&self.max_of(&lwes, t, Form::Repack)?)
    }

    /// Outputs of [`Form::Repack`] back into one CKKS ciphertext ([`PegasusEvaluator::repack`]), in
    /// their order from slot 0.
    ///
    /// Errors: [`Error::InvalidArgument`] for outputs of [`Form::Lwe`]; as
    /// [`PegasusEvaluator::repack`] (1 to `slots` ciphertexts).
    pub fn repack(&self, outputs: &Outputs) -> Result<Ciphertext> {
        let table = repack_table(outputs)?;
        Ok(self.pegasus().repack(&outputs.ciphertexts, table)?)
    }

    /// Two sets of outputs of [`Form::Repack`] back into two CKKS ciphertexts by one repacking
    /// ([`PegasusEvaluator::repack_pair`]: one level below [`Comparator::repack`]'s outputs).
    ///
    /// Errors: [`Error::InvalidArgument`] for outputs of [`Form::Lwe`]; as
    /// [`PegasusEvaluator::repack_pair`] (1 to `slots` ciphertexts each).
    pub fn repack_pair(
        &self,
        first: &Outputs,
        second: &Outputs,
    ) -> Result<(Ciphertext, Ciphertext)> {
        let (a, b) = (repack_table(first)?, repack_table(second)?);
        Ok(self
            .pegasus()
            .repack_pair(&first.ciphertexts, a, &second.ciphertexts, b)?)
    }

    /// The values of `outputs`, decrypted with the pipeline's LWE-side secrets (tests, examples): phases
    /// over the scale of their form.
    ///
    /// Errors: [`Error::Lwe`] for secrets of other dimensions.
    pub fn decrypt(&self, secrets: &PegasusSecretKeys, outputs: &Outputs) -> Result<Vec<f64>> {
        let (key, scale) = match (&outputs.form, &outputs.repack_table) {
            (Form::Repack, Some(t)) => (&secrets.lut_ring, t.output_scale()),
            _ => (&secrets.lwe, self.scale),
        };
        outputs
            .ciphertexts
            .iter()
            .map(|ct| Ok(key.decrypt(ct)? as f64 / scale))
            .collect()
    }

    // ----- internals -----

    /// A table of `f` whose outputs feed further tables (after the switch back).
    fn chained_table(&self, f: &dyn Fn(f64) -> f64) -> Result<LookupTable> {
        let out = self.scale * self.q0 as f64 / self.modulus as f64;
        Ok(LookupTable::from_fn_for_input_modulus(
            &self.lut_ctx,
            self.modulus,
            self.scale,
            out,
            f,
        )?)
    }

    /// The final table `x / t` of max-pooling in `form`.
    fn pool_table(&self, t: usize, form: Form) -> Result<LookupTable> {
        let tf = t as f64;
        match form {
            Form::Lwe => self.chained_table(&|x| x / tf),
            _ => Ok(self.pegasus().table(|x| x / tf)?),
        }
    }

    fn outputs(
        &self,
        ciphertexts: Vec<LweCiphertext>,
        form: Form,
        table: &Arc<LookupTable>,
    ) -> Outputs {
        Outputs {
            ciphertexts,
            form,
            repack_table: (form == Form::Repack).then(|| Arc::clone(table)),
        }
    }

    /// Every `(ciphertext, table)` job in one parallel batch.
    fn eval(&self, jobs: &[(&LweCiphertext, &LookupTable)]) -> Result<Vec<LweCiphertext>> {
        let p = self.pegasus();
        jobs.par_iter()
            .map(|(ct, table)| {
                p.lut(std::slice::from_ref(*ct), table)?
                    .pop()
                    .ok_or_else(|| internal("look-up table"))
            })
            .collect()
    }

    /// A table output back at the LWE side: to the key-switching modulus, then the key switch.
    fn back(&self, ct: &LweCiphertext) -> Result<LweCiphertext> {
        let q = self.key.back.params().modulus;
        let ct = if ct.modulus().value() == q {
            ct.clone()
        } else {
            ct.switch_modulus(q)?
        };
        Ok(self.key.back.switch(&ct)?)
    }

    fn back_all(&self, cts: &[LweCiphertext]) -> Result<Vec<LweCiphertext>> {
        cts.par_iter().map(|ct| self.back(ct)).collect()
    }

    /// One layer of pairs, all tables in one batch, then min and max as asked, in the form asked (the
    /// switches back in parallel). A one-table pair ([`Form::Lwe`] only) evaluates
    /// `d = min(a - b, 0)`, switched back: `min = b + d`, `max = a - d`. The others use PEGASUS's two
    /// tables (Section V.A), `min = T0(a + b) - T1(a - b)`, `max = T0(a + b) + T1(a - b)`, at the
    /// input scale and switched back for [`Form::Lwe`], at the repacking's scale for [`Form::Repack`]
    /// (whose results must stay under the table ring's secret, where the operands are not).
    #[allow(clippy::type_complexity)]
    fn pair_layer(
        &self,
        values: &[LweCiphertext],
        pairs: &[Pair],
    ) -> Result<Vec<(Option<LweCiphertext>, Option<LweCiphertext>)>> {
        let one = |p: &Pair| p.one_table && p.form == Form::Lwe;
        let inputs = pairs
            .iter()
            .map(|p| {
                let (a, b) = (&values[p.a], &values[p.b]);
                let sum = if one(p) { None } else { Some(a.add(b)?) };
                Ok((sum, a.sub(b)?))
            })
            .collect::<Result<Vec<_>>>()?;
        let t = &self.tables;
        // first[i]: the index of pair i's first job.
        let mut jobs = Vec::with_capacity(2 * pairs.len());
        let mut first = Vec::with_capacity(pairs.len());
        for (p, (sum, diff)) in pairs.iter().zip(&inputs) {
            first.push(jobs.len());
            match sum {
                None => jobs.push((diff, &t.min0)),
                Some(sum) => {
                    let (half, half_abs) = match p.form {
                        Form::Lwe => (&t.half, &t.half_abs),
                        _ => (t.half_repack.as_ref(), &t.half_abs_repack),
                    };
                    jobs.push((sum, half));
                    jobs.push((diff, half_abs));
                }
            }
        }
        let outs = self.eval(&jobs)?;
        pairs
            .par_iter()
            .zip(&first)
            .map(|(p, &j)| {
                let finish = |x: LweCiphertext| match p.form {
                    Form::Lwe => self.back(&x),
                    _ => Ok(x),
                };
                let (min, max) = if one(p) {
                    let d = self.back(&outs[j])?;
                    let (a, b) = (&values[p.a], &values[p.b]);
                    let min = match p.need {
                        Need::Max => None,
                        _ => Some(b.add(&d)?),
                    };
                    let max = match p.need {
                        Need::Min => None,
                        _ => Some(a.sub(&d)?),
                    };
                    (min, max)
                } else {
                    let (h, g) = (&outs[j], &outs[j + 1]);
                    let min = match p.need {
                        Need::Max => None,
                        _ => Some(finish(h.sub(g)?)?),
                    };
                    let max = match p.need {
                        Need::Min => None,
                        _ => Some(finish(h.add(g)?)?),
                    };
                    (min, max)
                };
                Ok((min, max))
            })
            .collect()
    }

    /// The min or max of every group of `t` consecutive values by a tree; an odd value out of a level is
    /// carried to the next. The pairs of a group's last level give its result in `form`; `one_table`
    /// makes the pairs at the LWE side one-table pairs.
    fn tree(
        &self,
        mut values: Vec<LweCiphertext>,
        t: usize,
        need: Need,
        form: Form,
        one_table: bool,
    ) -> Result<Vec<LweCiphertext>> {
        let groups = values.len() / t;
        let mut width = t;
        while width > 1 {
            let next = width.div_ceil(2);
            let pair_form = if width == 2 { form } else { Form::Lwe };
            let mut pairs = Vec::with_capacity(groups * (width / 2));
            for g in 0..groups {
                for k in 0..width / 2 {
                    pairs.push(Pair {
                        a: g * width + 2 * k,
                        b: g * width + 2 * k + 1,
                        need,
                        form: pair_form,
                        one_table,
                    });
                }
            }
            let results = self.pair_layer(&values, &pairs)?;
            let mut results = results.into_iter();
            let mut level = Vec::with_capacity(groups * next);
            for g in 0..groups {
                for _ in 0..width / 2 {
                    let (min, max) = results.next().ok_or_else(|| internal("tree"))?;
                    let r = if need == Need::Max { max } else { min };
                    level.push(r.ok_or_else(|| internal("tree"))?);
                }
                if width % 2 == 1 {
                    level.push(values[g * width + width - 1].clone());
                }
            }
            values = level;
            width = next;
        }
        Ok(values)
    }

    /// Ciphertexts of the pipeline's LWE side.
    fn check_inputs(&self, cts: &[LweCiphertext], operation: &'static str) -> Result<()> {
        let n = self.key.back.to_dimension();
        for (i, ct) in cts.iter().enumerate() {
            if ct.dimension() != n || ct.modulus().value() != self.modulus {
                return Err(Error::InvalidArgument {
                    what: "LWE ciphertext",
                    reason: format!(
                        "{operation}: ciphertext {i} has dimension {} modulo {}; the comparator reads \
                         the pipeline's LWE side, dimension {n} modulo {} (PegasusEvaluator::to_lwe, or \
                         Form::Lwe outputs)",
                        ct.dimension(),
                        ct.modulus().value(),
                        self.modulus
                    ),
                });
            }
        }
        Ok(())
    }

    /// A non-empty count, a multiple of a group size `t >= min`, of the pipeline's LWE ciphertexts.
    fn check_groups(
        &self,
        cts: &[LweCiphertext],
        t: usize,
        min: usize,
        operation: &'static str,
    ) -> Result<()> {
        if t < min || cts.is_empty() || !cts.len().is_multiple_of(t) {
            return Err(Error::InvalidArgument {
                what: "group size",
                reason: format!(
                    "{operation}: {} ciphertexts in groups of {t}: the count must be a nonzero multiple \
                     of the group size, at least {min}",
                    cts.len()
                ),
            });
        }
        self.check_inputs(cts, operation)
    }
}

/// The table whose scale outputs of [`Form::Repack`] carry, or [`Error::InvalidArgument`] for outputs
/// of [`Form::Lwe`].
fn repack_table(outputs: &Outputs) -> Result<&LookupTable> {
    match (&outputs.form, &outputs.repack_table) {
        (Form::Repack, Some(table)) => Ok(table),
        _ => Err(Error::InvalidArgument {
            what: "outputs to repack",
            reason: "they are back at the LWE side (Form::Lwe): ask for Form::Repack".into(),
        }),
    }
}

/// `factor * bound <= domain` (with a relative tolerance for rounding), or [`Error::OutOfDomain`].
fn check_factor(operation: &'static str, bound: f64, factor: f64, domain: f64) -> Result<()> {
    if factor * bound > domain * (1.0 + 1e-12) {
        return Err(Error::OutOfDomain {
            operation,
            bound,
            factor,
            needed: factor * bound,
            domain,
        });
    }
    Ok(())
}

fn check_power_of_two(operation: &'static str, t: usize) -> Result<()> {
    if !t.is_power_of_two() || t < 2 {
        return Err(Error::InvalidArgument {
            what: "size",
            reason: format!("{operation} needs a power of two of values, at least 2; got {t}"),
        });
    }
    Ok(())
}

/// `ceil(log2 t)`: the pairs on a path of a tree of `t` values.
fn tree_depth(t: usize) -> usize {
    t.max(1).next_power_of_two().trailing_zeros() as usize
}

/// The layers `(size, stride)` of the bitonic network on `t` values (a power of two): for every block
/// size `2, 4, .., t`, strides `size / 2, .., 1`; the pair `(i, i ^ stride)` sorts ascending when
/// `i & size == 0` (for an ascending sort).
fn bitonic_layers(t: usize) -> Vec<(usize, usize)> {
    let mut layers = Vec::new();
    let mut size = 2;
    while size <= t {
        let mut stride = size / 2;
        while stride > 0 {
            layers.push((size, stride));
            stride /= 2;
        }
        size *= 2;
    }
    layers
}

/// An impossible state (a count the code itself made), reported instead of a panic.
fn internal(operation: &'static str) -> Error {
    Error::InvalidArgument {
        what: "internal state",
        reason: format!("{operation}: a batch returned fewer results than it was given"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The network sorts every 0/1 input of 8 and 16 values (the 0-1 principle: then it sorts all).
    #[test]
    fn bitonic_network_sorts_all_binary_inputs() {
        for t in [2usize, 4, 8, 16] {
            for bits in 0u32..(1 << t) {
                let mut v: Vec<u32> = (0..t).map(|i| (bits >> i) & 1).collect();
                for (size, stride) in bitonic_layers(t) {
                    for i in 0..t {
                        let l = i ^ stride;
                        if l > i && ((i & size == 0) == (v[i] > v[l])) {
                            v.swap(i, l);
                        }
                    }
                }
                assert!(
                    v.windows(2).all(|w| w[0] <= w[1]),
                    "t = {t}, bits {bits:b}: {v:?}"
                );
            }
        }
        let l = bitonic_layers(32).len();
        assert_eq!(l, 5 * 6 / 2);
        assert_eq!(tree_depth(2), 1);
        assert_eq!(tree_depth(5), 3);
        assert_eq!(tree_depth(16), 4);
    }
}
