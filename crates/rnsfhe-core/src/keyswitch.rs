//! Hybrid key switching with special primes (RNS-CKKS Section 3.3 and Algorithm "KS" in Section 4 for
//! `dnum = 1`; Han-Ki Section 2.4 for `dnum` digit groups), relinearization, Galois automorphisms and
//! Halevi-Shoup hoisted automorphisms.
//!
//! Key switching of `d` over `Q_l` (NTT form) with a key from `s'` to `s`:
//!
//! 1. **Decompose** `d` into the digits `[d]_{Q_j}` of the groups touched at level `l`
//!    ([`rnsfhe_ring::RnsGadget::decompose`]: the limbs of `d` in group `j`).
//! 2. **ModUp** every digit to `Q_l ∪ P` (RNS-CKKS Algorithm 1 with the group as source basis): the limbs
//!    of the group are kept, the other limbs of `Q_l` and all of `P` come from `Conv_{Q_j -> (Q_l \ Q_j) ∪ P}`
//!    in the context's conversion mode. The result `d~_j` is `[d]_{Q_j}` lifted to an integer that is
//!    centered (exact modes) or `[d]_{Q_j} + alpha Q_j`, `0 <= alpha < |Q_j|` limbs (fast mode).
//! 3. **Inner product** with the key restricted to `Q_l ∪ P` (its first `l` limbs of `Q` and all limbs of
//!    `P`): `(c~_0, c~_1) = sum_j d~_j (b_j, a_j)`, so that `c~_0 + c~_1 s = P d s' + sum_j d~_j e_j`
//!    modulo `Q_l P` (because `sum_j d~_j g_j = d mod Q_l` and `P g_j = 0 mod P`).
//! 4. **ModDown** both to `Q_l` (RNS-CKKS Algorithm 2): `u_i = round(c~_i / P)` (up to the rounding of the
//!    conversion mode), so `u_0 + u_1 s = d s' + e_ks` with
//!    `e_ks = (1/P) sum_j d~_j e_j + r_0 + r_1 s` (see [`crate::noise`] for its size).
//!
//! Everything stays in NTT form except the limbs a basis conversion reads or writes.

use std::sync::Arc;

use rayon::prelude::*;
use rnsfhe_math::simd::sum_of_factored_products;
use rnsfhe_math::simd::{
    map_in_place, write_uninit, LaneArith, LaneMap, SubMulShoup, SubMulShoupAdd,
};
use rnsfhe_math::NttPlan;
use rnsfhe_math::ShoupConstant;
use rnsfhe_ring::parallel;
use rnsfhe_ring::RnsBasis;
use rnsfhe_ring::{Coeff, GaloisElement, GaloisGroup, Ntt, NttShoupPoly, Poly};

use crate::context::{DownRescaleTables, LevelTables, RlweContext};
use crate::encryption::RlweCiphertext;
use crate::error::{Error, Result};
use crate::gadget::{long_operation, multiply_accumulate, parallel, DigitRows, Gadget, LimbForm};
use crate::keys::{GaloisKeys, KeySwitchKey, RelinKey};
use crate::scratch;

/// Inverse NTT of every limb of a limb-major buffer ([`transform_limbs`]).
fn inverse_all(plans: &[Arc<NttPlan>], data: &mut [u64], n: usize) -> Result<()> {
    transform_limbs(data.chunks_exact_mut(n).collect(), plans, NttPlan::inverse)
}

/// Applies `transform` (a plan's forward or inverse NTT) to each limb with its plan, in parallel over
/// limbs for large calls ([`parallel`]). Otherwise the loop stays on the calling thread: handing each
/// small transform to the pool costs a thread wake-up, which at `N = 2^12` (blind rotation) is as long as
/// the transform.
fn transform_limbs(
    limbs: Vec<&mut [u64]>,
    plans: &[Arc<NttPlan>],
    transform: fn(&NttPlan, &mut [u64]) -> rnsfhe_math::Result<()>,
) -> Result<()> {
    if parallel(limbs.iter().map(|l| l.len()).sum()) {
        if parallel::in_active_region() {
            // By halves with active waits (see `rnsfhe_ring::parallel`).
            let mut limbs = limbs;
            parallel::try_for_each_chunk(&mut limbs, 1, &|j, a| transform(&plans[j], &mut *a[0]))?;
        } else {
            limbs
                .into_par_iter()
                .zip(plans.par_iter())
                .try_for_each(|(a, plan)| transform(plan, a))?;
        }
    } else {
        limbs
            .into_iter()
            .zip(plans)
            .try_for_each(|(a, plan)| transform(plan, a))?;
    }
    Ok(())
}

/// `(a(), b())`, the two in parallel when each works on `words` words or more ([`parallel`]).
fn join<A: Send, B: Send>(
    words: usize,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if parallel(2 * words) {
        parallel::join(a, b)
    } else {
        (a(), b())
    }
}

/// Runs `f(j, limb_j, tmp)` on every limb of a limb-major buffer (`n` words per limb), in parallel over
/// limbs for large buffers ([`parallel`]); `tmp` is a scratch vector per thread.
fn for_each_limb(
    data: &mut [u64],
    n: usize,
    f: impl Fn(usize, &mut [u64], &mut Vec<u64>) -> Result<()> + Sync,
) -> Result<()> {
    if parallel(data.len()) {
        if parallel::in_active_region() {
            // By halves with active waits (see `rnsfhe_ring::parallel`); a scratch vector per limb.
            parallel::try_for_each_chunk(data, n, &|j, c| f(j, c, &mut Vec::new()))
        } else {
            data.par_chunks_mut(n)
                .enumerate()
                .try_for_each_init(Vec::new, |tmp, (j, c)| f(j, c, tmp))
        }
    } else {
        let mut tmp = Vec::new();
        data.chunks_exact_mut(n)
            .enumerate()
            .try_for_each(|(j, c)| f(j, c, &mut tmp))
    }
}

/// What ModDown adds to its result in the same pass: nothing, a polynomial over `Q_l` (NTT form,
/// limb-major) or such a polynomial read through an NTT slot permutation.
#[derive(Clone, Copy)]
enum Addend<'a> {
    None,
    Plain(&'a [u64]),
    Permuted(&'a [u64], &'a [usize]),
}

/// `old <- old + x w`: the converted limb `q_{l-1}` of ModDown merged with rescaling gets `P` times the
/// ciphertext part added before the conversion.
struct AddMulShoup(ShoupConstant);

impl LaneMap<1> for AddMulShoup {
    #[inline(always)]
    fn apply<A: LaneArith>(&self, ar: A, old: A::V, [x]: [A::V; 1]) -> A::V {
        ar.add(old, ar.mul_shoup(x, self.0))
    }
}

/// The last pass of ModDown merged with rescaling: `corr <- (y - corr) (P q_{l-1})^-1 + d q_{l-1}^-1`,
/// i.e. `(y + P d - corr) / (P q_{l-1})` for the key-switched `y` and the ciphertext part `d`.
struct DivideByPLast {
    inv_p_last: ShoupConstant,
    inv_last: ShoupConstant,
}

impl LaneMap<2> for DivideByPLast {
    #[inline(always)]
    fn apply<A: LaneArith>(&self, ar: A, corr: A::V, [y, d]: [A::V; 2]) -> A::V {
        ar.add(
            ar.mul_shoup(ar.sub(y, corr), self.inv_p_last),
            ar.mul_shoup(d, self.inv_last),
        )
    }
}

/// A cheap digest of a polynomial's residues, to tie a [`HoistedDecomposition`] to its ciphertext.
///
/// It is computed for every hoisted automorphism (to check the ciphertext), so it must not be a long
/// serial chain: each limb is folded in four interleaved lanes (independent multiplications the core
/// overlaps), the limbs in parallel for large polynomials ([`parallel`]), and the limb digests are
/// folded in order.
fn digest(p: &Poly<Ntt>) -> u64 {
    const SEEDS: [u64; 4] = [
        0x243f_6a88_85a3_08d3,
        0x1319_8a2e_0370_7344,
        0xa409_3822_299f_31d0,
        0x082e_fa98_ec4e_6c89,
    ];
    let mix = |h: u64, w: u64| (h ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
    let limb = |data: &[u64]| -> u64 {
        let mut lanes = SEEDS;
        let mut chunks = data.chunks_exact(4);
        for c in &mut chunks {
            for (h, &w) in lanes.iter_mut().zip(c) {
                *h = mix(*h, w);
            }
        }
        for (h, &w) in lanes.iter_mut().zip(chunks.remainder()) {
            *h = mix(*h, w);
        }
        lanes.into_iter().fold(data.len() as u64, mix)
    };
    let n = p.basis().degree();
    let limbs: Vec<u64> = if parallel(p.data().len()) {
        p.data().par_chunks(n).map(limb).collect()
    } else {
        p.data().chunks(n).map(limb).collect()
    };
    limbs.into_iter().fold(SEEDS[0], mix)
}

/// The ModUp-extended digits of a ciphertext's `c_1`, computed once and reused for many automorphisms
/// (Halevi-Shoup hoisting, "Faster homomorphic linear transformations in HElib", Section 5; used for
/// CKKS rotations by Han-Ki and Bossuat et al.).
///
/// An automorphism `X -> X^k` permutes (with signs) the coefficients of a polynomial, so it commutes with
/// taking residues modulo `Q_j` and maps a small lift of a digit to a small lift of the permuted digit: the
/// extended digits of `c_1(X^k)` may be taken as the permuted extended digits of `c_1`, which in NTT form is
/// a permutation of the evaluation slots. The decomposition and ModUp (the expensive part, with its NTTs)
/// are therefore shared by all rotations of one ciphertext. In the exact conversion modes the hoisted
/// result equals the plain one exactly (a centered lift stays centered); in the fast mode the lifts differ
/// but obey the same bound.
#[derive(Clone, Debug)]
pub struct HoistedDecomposition {
    level: usize,
    digest: u64,
    /// One buffer over `Q_l ∪ P` (NTT form, limb-major) per digit group.
    digits: Vec<Vec<u64>>,
}

impl HoistedDecomposition {
    /// The level (limb count) of the ciphertext it was computed from.
    pub fn level(&self) -> usize {
        self.level
    }

    /// Number of extended digits (digit groups touched at this level).
    pub fn digit_count(&self) -> usize {
        self.digits.len()
    }
}

impl RlweContext {
    /// Steps 1-2: the digits of `d` (over `Q_l`, NTT form) raised to `Q_l ∪ P`, NTT form, one limb-major
    /// buffer per group. All `l` limbs take one inverse NTT (each digit reads its own limbs); each digit's
    /// complement limbs are converted in place and take a forward NTT; its own limbs are copied.
    fn mod_up_digits(&self, tables: &LevelTables, d: &Poly<Ntt>) -> Result<Vec<Vec<u64>>> {
        let n = self.n();
        let q_plans = &self.chain().plans()[..tables.limbs];
        // Copy and inverse transform limb by limb in one parallel pass, so that the copy is not a
        // serial pass over all limbs before the transforms.
        let mut coeff = scratch::take_dirty(d.data().len());
        for_each_limb(&mut coeff, n, |j, c, _| {
            c.copy_from_slice(&d.data()[j * n..(j + 1) * n]);
            Ok(q_plans[j].inverse(c)?)
        })?;
        let digits = self.mod_up_from(tables, &coeff, Some(d.data()));
        scratch::give(coeff);
        digits
    }

    /// Steps 1-2 from the coefficient form `coeff` of the input (limb-major over `Q_l`): the digits raised
    /// to `Q_l ∪ P` in NTT form, one buffer per group. A digit's own limbs are copied from `ntt` (the
    /// input's NTT form) when the caller has it, and transformed from `coeff` otherwise.
    fn mod_up_from(
        &self,
        tables: &LevelTables,
        coeff: &[u64],
        ntt: Option<&[u64]>,
    ) -> Result<Vec<Vec<u64>>> {
        let n = self.n();
        let ext_len = tables.ext.len();
        let one_digit = |dt: &crate::context::DigitTables| -> Result<Vec<u64>> {
            let r = dt.range.clone();
            // Every limb is overwritten below (own limbs copied or transformed, the others converted).
            let mut out = scratch::take_dirty(ext_len * n);
            {
                let (head, rest) = out.split_at_mut(r.start * n);
                let (own, tail) = rest.split_at_mut(r.len() * n);
                match ntt {
                    Some(data) => own.copy_from_slice(&data[r.start * n..r.end * n]),
                    // Transformed below, with the converted limbs.
                    None => own.copy_from_slice(&coeff[r.start * n..r.end * n]),
                }
                let mut comp: Vec<&mut [u64]> = head.chunks_exact_mut(n).collect();
                comp.extend(tail.chunks_exact_mut(n));
                dt.up
                    .convert_into_limbs(&coeff[r.start * n..r.end * n], comp)?;
                if ntt.is_some() {
                    let converted = head.chunks_exact_mut(n).chain(tail.chunks_exact_mut(n));
                    transform_limbs(converted.collect(), dt.up.to().plans(), NttPlan::forward)?;
                }
            }
            if ntt.is_none() {
                // Every limb of `Q_l ∪ P` in one batch, the group's own with the converted ones: with
                // one own limb and one special prime (ring packing over q_0) the two transforms then
                // run side by side instead of one after the other.
                transform_limbs(
                    out.chunks_exact_mut(n).collect(),
                    tables.ext.plans(),
                    NttPlan::forward,
                )?;
            }
            Ok(out)
        };
        if parallel(tables.digits.len() * ext_len * n) {
            parallel::map(&tables.digits, &one_digit)
                .into_iter()
                .collect()
        } else {
            tables.digits.iter().map(one_digit).collect()
        }
    }

    /// Step 3: `sum_j digit_j (b_j, a_j)` over `Q_l ∪ P` (NTT form) for one key, after checking its
    /// gadget and row count; digits are read through `perm` (an NTT slot permutation) when given.
    fn inner_product(
        &self,
        tables: &LevelTables,
        digits: &[Vec<u64>],
        key: &KeySwitchKey,
        perm: Option<&[usize]>,
    ) -> Result<(Vec<u64>, Vec<u64>)> {
        let rows = key.rows_for(
            Gadget::of_context(self),
            digits.len(),
            "hybrid key switching",
        )?;
        let key_rows: Vec<_> = rows.iter().collect();
        self.multiply_digits(tables, digits, &key_rows, perm)
    }

    /// The gadget product's multiply-accumulate ([`multiply_accumulate`]) of extended digits with key
    /// rows over `Q_l ∪ P`, reading the rows' limb `i` for `i < l` and their limb `L + i` for the special
    /// primes.
    fn multiply_digits(
        &self,
        tables: &LevelTables,
        digits: &[Vec<u64>],
        key_rows: &[&(Poly<Ntt>, Poly<Ntt>)],
        perm: Option<&[usize]>,
    ) -> Result<(Vec<u64>, Vec<u64>)> {
        let n = self.n();
        let (l, big_l) = (tables.limbs, self.max_level());
        let ext_len = tables.ext.len();
        // Both outputs are overwritten entirely: no zeroing.
        let mut out0 = scratch::take_dirty(ext_len * n);
        let mut out1 = scratch::take_dirty(ext_len * n);
        multiply_accumulate(
            &tables.ext,
            key_rows,
            self.extended_basis(),
            &|t| if t < l { t } else { big_l + t - l },
            DigitRows::Extended { digits, perm },
            LimbForm::Ntt,
            (&mut out0, &mut out1),
        )?;
        Ok((out0, out1))
    }

    /// Step 4 (RNS-CKKS Algorithm 2 in NTT form): `y` over `Q_l ∪ P` to
    /// `(y_Q - Conv_{P -> Q_l}(y_P)) P^-1 (+ addend)` over `Q_l`. Only the `P` limbs take an inverse NTT
    /// (in place) and the correction a forward NTT; subtraction, multiplication by `P^-1` and the optional
    /// addition happen in one pass.
    fn mod_down(
        &self,
        tables: &LevelTables,
        mut y: Vec<u64>,
        addend: Addend<'_>,
    ) -> Result<Poly<Ntt>> {
        let n = self.n();
        let l = tables.limbs;
        let q_l = self.basis_at(l)?;
        let (y_q, y_p) = y.split_at_mut(l * n);
        inverse_all(self.special_basis().plans(), y_p, n)?;
        let mut corr = parallel::zeroed(l * n);
        tables.down.convert_into(y_p, &mut corr)?;
        let y_q = &*y_q;
        let plans = &q_l.plans()[..l];
        let moduli = q_l.moduli();
        let limb = |j: usize, c: &mut [u64], tmp: &mut Vec<u64>| -> Result<()> {
            plans[j].forward(c)?;
            let (m, w) = (&moduli[j], tables.p_inv[j]);
            let a = &y_q[j * n..(j + 1) * n];
            match addend {
                Addend::None => map_in_place(m, c, [a], &SubMulShoup(w)),
                Addend::Plain(x) => {
                    map_in_place(m, c, [a, &x[j * n..(j + 1) * n]], &SubMulShoupAdd(w))
                }
                Addend::Permuted(x, perm) => {
                    let x = &x[j * n..(j + 1) * n];
                    tmp.clear();
                    tmp.extend(perm.iter().map(|&s| x[s]));
                    map_in_place(m, c, [a, &tmp[..]], &SubMulShoupAdd(w))
                }
            }
            Ok(())
        };
        for_each_limb(&mut corr, n, limb)?;
        scratch::give(y);
        Ok(Poly::from_data(q_l, corr)?)
    }

    /// Step 4 with a coefficient-form result: `y` over `Q_l ∪ P` (NTT form) to
    /// `(y_Q - Conv_{P -> Q_l}(y_P)) P^-1` over `Q_l` in coefficient form. Every limb takes one inverse NTT
    /// and no forward NTT is needed (the subtraction and the multiplication by `P^-1` happen in
    /// coefficient form).
    fn mod_down_coeff(&self, tables: &LevelTables, mut y: Vec<u64>) -> Result<Poly<Coeff>> {
        let n = self.n();
        let l = tables.limbs;
        let q_l = self.basis_at(l)?;
        inverse_all(tables.ext.plans(), &mut y, n)?;
        let (y_q, y_p) = y.split_at(l * n);
        let mut corr = parallel::zeroed(l * n);
        tables.down.convert_into(y_p, &mut corr)?;
        let moduli = q_l.moduli();
        for_each_limb(&mut corr, n, |j, c, _| {
            let range = j * n..(j + 1) * n;
            map_in_place(&moduli[j], c, [&y_q[range]], &SubMulShoup(tables.p_inv[j]));
            Ok(())
        })?;
        scratch::give(y);
        Ok(Poly::from_data(q_l, corr)?)
    }

    /// The sum of hybrid gadget products `sum_j x_j ⋄ key_j` (every `x_j` over `Q_l` in coefficient form,
    /// every key of this context's hybrid gadget), in coefficient form: ModUp of every input, one
    /// multiply-accumulate over all their digits ([`crate::gadget`]), and one ModDown per output. The
    /// external product of an RLWE ciphertext `(c_0, c_1)` with an RGSW ciphertext `(K_m, K_sm)` is the sum
    /// `c_0 ⋄ K_m + c_1 ⋄ K_sm` (PEGASUS Appendix A); blind rotation runs it in coefficient form because
    /// its monomial multiplications are rotations there.
    ///
    /// Errors: [`Error::InvalidParams`] for no term; [`Error::ContextMismatch`] for a key of another
    /// context; [`Error::GadgetMismatch`] for a key of another gadget; [`Error::NotOnChain`] or basis
    /// mismatches for inputs not over one prefix of the chain.
    pub fn gadget_product_sum(
        &self,
        terms: &[(&Poly<Coeff>, &KeySwitchKey)],
    ) -> Result<(Poly<Coeff>, Poly<Coeff>)> {
        let Some((first, _)) = terms.first() else {
            return Err(Error::InvalidParams {
                what: "gadget product",
                reason: "the sum needs at least one term".into(),
            });
        };
        let level = self.level_of(first, "gadget product input")?;
        // One region of active waiting for ModUp, the products and ModDown, as key switching (a nested
        // call, e.g. inside a blind rotation's region, runs directly).
        long_operation(first.data().len(), || {
            let tables = self.level_tables(level)?;
            let gadget = Gadget::of_context(self);
            let mut digits = Vec::new();
            let mut key_rows = Vec::new();
            for (x, key) in terms {
                self.check_fingerprint(key.fingerprint(), "gadget ciphertext")?;
                let rows = key.rows_for(gadget, tables.digits.len(), "hybrid gadget product")?;
                first
                    .basis()
                    .check_same(x.basis(), "gadget product (inputs)")?;
                key_rows.extend(rows);
                digits.extend(self.mod_up_from(&tables, x.data(), None)?);
            }
            let (y0, y1) = self.multiply_digits(&tables, &digits, &key_rows, None)?;
            digits.into_iter().for_each(scratch::give);
            self.mod_down_coeff_pair(&tables, y0, y1)
        })
    }

    /// [`RlweContext::mod_down_coeff`] of both outputs of a gadget product, side by side.
    fn mod_down_coeff_pair(
        &self,
        tables: &LevelTables,
        y0: Vec<u64>,
        y1: Vec<u64>,
    ) -> Result<(Poly<Coeff>, Poly<Coeff>)> {
        let words = y0.len();
        let (u0, u1) = join(
            words,
            || self.mod_down_coeff(tables, y0),
            || self.mod_down_coeff(tables, y1),
        );
        Ok((u0?, u1?))
    }

    /// `sum_k f_k (sum_j x_j ⋄ key_{k,j})` for inputs `x_j` over `Q_l` in coefficient form, several sums
    /// of gadget products by the same inputs (each `(f_k, keys_k)` of `sums` with one key per input) and
    /// factors `f_k` in NTT form over `Q_l ∪ P` ([`RlweContext::extended_basis_at`]), in coefficient form.
    /// The inputs take one ModUp (and forward NTT) for all the sums; the factors, the extended digits and
    /// the keys meet in one pass per limb of `Q_l ∪ P` (see
    /// [`RlweContext::gadget_product_sums_shoup_scaled`], which this runs after computing the factors'
    /// Shoup quotients), so that one ModDown per output finishes them all: `u = round(sum_k f_k y_k / P)` with `y_k` the sums before
    /// ModDown. The error is `sum_k f_k e_k` (`e_k` the gadget errors before rounding, `(1/P) sum_j d~_j
    /// e_j`) plus one rounding, instead of one rounding per sum. The ternary blind rotation runs a step of
    /// PEGASUS Fig. 2 as one such call with the factors `1 - X^(± a)` (see `rnsfhe-lwe`).
    ///
    /// Errors: [`Error::InvalidParams`] for no input, no sum or a sum whose number of keys is not the
    /// number of inputs; [`Error::ContextMismatch`] for a key of another context;
    /// [`Error::GadgetMismatch`] for a key of another gadget; [`Error::NotOnChain`] or basis mismatches
    /// for inputs not over one prefix of the chain or factors not over its `Q_l ∪ P`.
    pub fn gadget_product_sums_scaled(
        &self,
        inputs: &[&Poly<Coeff>],
        sums: &[(&Poly<Ntt>, &[&KeySwitchKey])],
    ) -> Result<(Poly<Coeff>, Poly<Coeff>)> {
        // The Shoup forms of the factors (one division per residue; the blind rotation gathers them
        // from tables instead).
        let factors: Vec<NttShoupPoly> = sums.iter().map(|(f, _)| NttShoupPoly::new(f)).collect();
        let shoup_sums: Vec<(&NttShoupPoly, &[&KeySwitchKey])> = factors
            .iter()
            .zip(sums)
            .map(|(f, (_, keys))| (f, *keys))
            .collect();
        self.gadget_product_sums_shoup_scaled(inputs, &shoup_sums)
    }

    /// [`RlweContext::gadget_product_sums_scaled`] with the factors in Shoup form ([`NttShoupPoly`],
    /// e.g. gathered from [`rnsfhe_ring::NttMonomialFactors`]): after the one ModUp of the inputs, every
    /// limb of `Q_l ∪ P` takes one pass ([`sum_of_factored_products`]) that forms the products
    /// `f_k d~_j` of the factors and the extended digits (Shoup products, no reduction) and sums them
    /// times the key rows into both outputs, reduced once per coefficient: no product of a single sum is
    /// reduced or stored. Same residues as the sums formed one after the other, so the same result and
    /// error.
    ///
    /// Errors: as [`RlweContext::gadget_product_sums_scaled`].
    pub fn gadget_product_sums_shoup_scaled(
        &self,
        inputs: &[&Poly<Coeff>],
        sums: &[(&NttShoupPoly, &[&KeySwitchKey])],
    ) -> Result<(Poly<Coeff>, Poly<Coeff>)> {
        let Some(first) = inputs.first() else {
            return Err(Error::InvalidParams {
                what: "scaled gadget products",
                reason: "no input".into(),
            });
        };
        if sums.is_empty() {
            return Err(Error::InvalidParams {
                what: "scaled gadget products",
                reason: "no sum of gadget products".into(),
            });
        }
        if let Some((_, keys)) = sums.iter().find(|(_, keys)| keys.len() != inputs.len()) {
            return Err(Error::InvalidParams {
                what: "scaled gadget products",
                reason: format!("{} keys in a sum for {} inputs", keys.len(), inputs.len()),
            });
        }
        let level = self.level_of(first, "gadget product input")?;
        let tables = self.level_tables(level)?;
        let gadget = Gadget::of_context(self);
        let mut sum_rows = Vec::with_capacity(sums.len());
        for (factor, keys) in sums {
            tables
                .ext
                .check_same(factor.basis(), "scaled gadget products (factor)")?;
            let mut rows = Vec::new();
            for key in keys.iter() {
                self.check_fingerprint(key.fingerprint(), "gadget ciphertext")?;
                rows.extend(key.rows_for(gadget, tables.digits.len(), "hybrid gadget product")?);
            }
            for (b, a) in &rows {
                self.extended_basis()
                    .check_same(b.basis(), "gadget product (row basis)")?;
                self.extended_basis()
                    .check_same(a.basis(), "gadget product (row basis)")?;
            }
            sum_rows.push(rows);
        }
        let mut digits = Vec::new();
        for x in inputs {
            first
                .basis()
                .check_same(x.basis(), "gadget product (inputs)")?;
            digits.extend(self.mod_up_from(&tables, x.data(), None)?);
        }
        let n = self.n();
        let (l, big_l) = (tables.limbs, self.max_level());
        let moduli = tables.ext.moduli();
        // Both outputs are overwritten entirely: no zeroing.
        let mut y0 = scratch::take_dirty(tables.ext.len() * n);
        let mut y1 = scratch::take_dirty(tables.ext.len() * n);
        // Limb `t` of `Q_l ∪ P`: the key rows' limb `t` for `t < l`, `L + t - l` for the special primes.
        let limb = |t: usize, o0: &mut [u64], o1: &mut [u64]| {
            let (range, kt) = (t * n..(t + 1) * n, if t < l { t } else { big_l + t - l });
            let key_range = kt * n..(kt + 1) * n;
            let d: Vec<&[u64]> = digits.iter().map(|d| &d[range.clone()]).collect();
            let f: Vec<_> = sums.iter().map(|(f, _)| f.limb(t)).collect();
            // Weight row `k J + j` of an output: row `j` of sum `k`.
            let (w0, w1): (Vec<&[u64]>, Vec<&[u64]>) = sum_rows
                .iter()
                .flatten()
                .map(|(b, a)| (&b.data()[key_range.clone()], &a.data()[key_range.clone()]))
                .unzip();
            sum_of_factored_products(&moduli[t], &d, &f, &[&w0, &w1], &mut [o0, o1]);
        };
        if parallel(y0.len() + y1.len()) {
            parallel::try_for_each_chunk_pair(&mut y0, &mut y1, n, &|t, o0, o1| {
                limb(t, o0, o1);
                Ok::<(), Error>(())
            })?;
        } else {
            for (t, (o0, o1)) in y0
                .chunks_exact_mut(n)
                .zip(y1.chunks_exact_mut(n))
                .enumerate()
            {
                limb(t, o0, o1);
            }
        }
        digits.into_iter().for_each(scratch::give);
        self.mod_down_coeff_pair(&tables, y0, y1)
    }

    /// The basis `Q_l ∪ P` over which the gadget products of level `l` are accumulated before ModDown
    /// (the factors of [`RlweContext::gadget_product_sums_scaled`] are over it).
    ///
    /// Errors: [`Error::LevelOutOfRange`] for a level outside `1..=L`.
    pub fn extended_basis_at(&self, level: usize) -> Result<Arc<RnsBasis>> {
        Ok(Arc::clone(&self.level_tables(level)?.ext))
    }

    /// Step 4 merged with rescaling (see [`DownRescaleTables`]): `y` over `Q_l ∪ P` and the ciphertext part
    /// `d` over `Q_l` (both NTT form) to `round((y + P d) / (P q_{l-1}))` over `Q_{l-1}` (up to the
    /// conversion mode's rounding, as in ModDown). `k + 1` inverse and `l - 1` forward NTTs.
    fn mod_down_rescale(
        &self,
        tables: &LevelTables,
        dr: &DownRescaleTables,
        mut y: Vec<u64>,
        d: &[u64],
    ) -> Result<Poly<Ntt>> {
        let n = self.n();
        let l = tables.limbs;
        let q_lower = self.basis_at(l - 1)?;
        let (y_q, y_s) = y.split_at_mut((l - 1) * n);
        // The converted limbs S = {q_{l-1}} ∪ P: y + P d in the q_{l-1} limb (P d vanishes modulo P).
        map_in_place(
            &tables.ext.moduli()[l - 1],
            &mut y_s[..n],
            [&d[(l - 1) * n..l * n]],
            &AddMulShoup(dr.p_mod_last),
        );
        inverse_all(&tables.ext.plans()[l - 1..], y_s, n)?;
        let mut corr = parallel::zeroed((l - 1) * n);
        dr.conv.convert_into(y_s, &mut corr)?;
        let y_q = &*y_q;
        let plans = &q_lower.plans()[..l - 1];
        let moduli = q_lower.moduli();
        for_each_limb(&mut corr, n, |j, c, _| {
            plans[j].forward(c)?;
            let op = DivideByPLast {
                inv_p_last: dr.inv_p_last[j],
                inv_last: dr.inv_last[j],
            };
            let range = j * n..(j + 1) * n;
            map_in_place(&moduli[j], c, [&y_q[range.clone()], &d[range]], &op);
            Ok(())
        })?;
        scratch::give(y);
        Ok(Poly::from_data(q_lower, corr)?)
    }

    /// Steps 3-4 for precomputed extended digits: the inner product, then `down(tables, i, y_i)` on each
    /// of its two outputs (ModDown with an addend, or ModDown merged with rescaling).
    fn finish_key_switch(
        &self,
        tables: &LevelTables,
        digits: &[Vec<u64>],
        key: &KeySwitchKey,
        perm: Option<&[usize]>,
        down: &(impl Fn(&LevelTables, usize, Vec<u64>) -> Result<Poly<Ntt>> + Sync),
    ) -> Result<(Poly<Ntt>, Poly<Ntt>)> {
        let (c0, c1) = self.inner_product(tables, digits, key, perm)?;
        let words = c0.len();
        let (u0, u1) = join(words, || down(tables, 0, c0), || down(tables, 1, c1));
        Ok((u0?, u1?))
    }

    /// Steps 1-4 of key switching `d` with `key`, each output finished by `down` (see
    /// [`RlweContext::finish_key_switch`]).
    fn key_switch_with(
        &self,
        d: &Poly<Ntt>,
        key: &KeySwitchKey,
        down: &(impl Fn(&LevelTables, usize, Vec<u64>) -> Result<Poly<Ntt>> + Sync),
    ) -> Result<(Poly<Ntt>, Poly<Ntt>)> {
        self.check_fingerprint(key.fingerprint(), "key-switching key")?;
        let level = self.level_of(d, "key-switched polynomial")?;
        let tables = self.level_tables(level)?;
        long_operation(d.data().len(), || {
            let digits = self.mod_up_digits(&tables, d)?;
            let out = self.finish_key_switch(&tables, &digits, key, None, down);
            digits.into_iter().for_each(scratch::give);
            out
        })
    }

    /// Key switching of `d` (over `Q_l`, NTT form) with a key from `s'` to `s` (RNS-CKKS `KS`, hybrid
    /// with `dnum` digits as in Han-Ki Section 2.4; see the module documentation): returns `(u_0, u_1)`
    /// over `Q_l` with `u_0 + u_1 s = d s' + e_ks (mod Q_l)`, `e_ks` as in
    /// [`RlweContext::key_switch_noise`].
    ///
    /// Errors: [`Error::ContextMismatch`] for a key of another context; [`Error::NotOnChain`] if `d` is
    /// not over a prefix of the chain.
    pub fn key_switch(&self, d: &Poly<Ntt>, key: &KeySwitchKey) -> Result<(Poly<Ntt>, Poly<Ntt>)> {
        self.key_switch_adding(d, key, (Addend::None, Addend::None))
    }

    /// [`RlweContext::key_switch`] with the addends added to `(u_0, u_1)` in ModDown's last pass.
    fn key_switch_adding(
        &self,
        d: &Poly<Ntt>,
        key: &KeySwitchKey,
        (a0, a1): (Addend<'_>, Addend<'_>),
    ) -> Result<(Poly<Ntt>, Poly<Ntt>)> {
        let addends = [a0, a1];
        self.key_switch_with(d, key, &|t: &LevelTables, i, y| {
            self.mod_down(t, y, addends[i])
        })
    }

    /// Relinearization (RNS-CKKS `Mult`, steps 2-4): a 3-part ciphertext `(d_0, d_1, d_2)` to
    /// `(d_0 + u_0, d_1 + u_1)` with `(u_0, u_1)` the key switch of `d_2` from `s^2` to `s`.
    ///
    /// Errors: [`Error::WrongPartCount`] unless `ct` has 3 parts; [`Error::ContextMismatch`] for a key of
    /// another context; errors of [`RlweContext::key_switch`].
    pub fn relinearize(&self, ct: &RlweCiphertext, rk: &RelinKey) -> Result<RlweCiphertext> {
        ct.check(self, Some(3), "relinearization")?;
        let (c0, c1) = self.key_switch_adding(
            &ct.parts[2],
            rk.key(),
            (
                Addend::Plain(ct.parts[0].data()),
                Addend::Plain(ct.parts[1].data()),
            ),
        )?;
        Ok(RlweCiphertext {
            parts: vec![c0, c1],
        })
    }

    /// Relinearization followed by rescaling by the last prime `q_{l-1}` (RNS-CKKS `Mult` then `RS`), with
    /// ModDown and the rescaling merged into one basis conversion from `{q_{l-1}} ∪ P` to `Q_{l-1}` dividing
    /// by `P q_{l-1}` where the level's tables allow it (not when the conversion mode cannot be built on
    /// those moduli; then ModDown and rescaling run one after the other): a 3-part ciphertext at level
    /// `l >= 2` to a 2-part one at level `l - 1` encrypting `round(m / q_{l-1})`. Same result as
    /// [`RlweContext::relinearize`] and rescaling up to rounding (one rounding instead of two).
    ///
    /// Errors: [`Error::WrongPartCount`] unless `ct` has 3 parts; [`Error::NoLevelToRescale`] at level 1;
    /// as [`RlweContext::relinearize`] otherwise.
    pub fn relinearize_rescale(
        &self,
        ct: &RlweCiphertext,
        rk: &RelinKey,
    ) -> Result<RlweCiphertext> {
        let level = ct.check(self, Some(3), "relinearization with rescaling")?;
        if level < 2 {
            return Err(Error::NoLevelToRescale {
                operation: "relinearization with rescaling",
                level,
            });
        }
        let tables = self.level_tables(level)?;
        let Some(dr) = tables.down_rescale.as_ref() else {
            let relin = self.relinearize(ct, rk)?;
            let parts = relin
                .parts
                .iter()
                .map(|p| Ok(self.rescaler().rescale_ntt(p)?))
                .collect::<Result<Vec<_>>>()?;
            return Ok(RlweCiphertext { parts });
        };
        let (u0, u1) = self.key_switch_with(&ct.parts[2], rk.key(), &|t: &LevelTables, i, y| {
            self.mod_down_rescale(t, dr, y, ct.parts[i].data())
        })?;
        Ok(RlweCiphertext {
            parts: vec![u0, u1],
        })
    }

    /// Applies the NTT slot permutation of a Galois element to every limb of `p`.
    fn permute(&self, p: &Poly<Ntt>, perm: &[usize]) -> Result<Poly<Ntt>> {
        let n = self.n();
        // Every word is written once (no zero-fill first), limb by limb in parallel.
        let data = parallel::from_chunks(p.data().len(), n, &|i, dst| {
            let src = &p.data()[i * n..(i + 1) * n];
            write_uninit(dst, perm.iter().map(|&s| src[s]))
        });
        Ok(Poly::from_data(p.basis(), data)?)
    }

    /// The Galois key of `element`, after checking the keys' context and the element.
    fn galois_key<'a>(
        &self,
        element: GaloisElement,
        step: Option<i64>,
        gk: &'a GaloisKeys,
    ) -> Result<&'a KeySwitchKey> {
        self.check_fingerprint(gk.fingerprint(), "Galois keys")?;
        element.check_degree(self.n(), "Galois automorphism")?;
        gk.require(element, step)
    }

    fn apply_galois_with(
        &self,
        ct: &RlweCiphertext,
        element: GaloisElement,
        key: &KeySwitchKey,
    ) -> Result<RlweCiphertext> {
        ct.check(self, Some(2), "Galois automorphism")?;
        let perm = self.galois_permutation(element)?;
        long_operation(ct.parts[1].data().len(), || {
            let c1 = self.permute(&ct.parts[1], &perm)?;
            let (c0, u1) = self.key_switch_adding(
                &c1,
                key,
                (Addend::Permuted(ct.parts[0].data(), &perm), Addend::None),
            )?;
            Ok(RlweCiphertext {
                parts: vec![c0, u1],
            })
        })
    }

    /// The automorphism `X -> X^k` of a 2-part ciphertext: `(c_0(X^k), c_1(X^k))` decrypts under
    /// `s(X^k)`; key switching `c_1(X^k)` back to `s` gives an encryption of `m(X^k)` under `s`
    /// (RNS-CKKS Section 4, rotation and conjugation).
    ///
    /// The conjugation of a scheme is `apply_galois` with [`GaloisGroup::conjugation`].
    ///
    /// Errors: [`Error::MissingGaloisKey`] naming `k` if `gk` has no key for it; a ring error if `k`
    /// belongs to another ring degree; [`Error::WrongPartCount`], [`Error::ContextMismatch`].
    pub fn apply_galois(
        &self,
        ct: &RlweCiphertext,
        element: GaloisElement,
        gk: &GaloisKeys,
    ) -> Result<RlweCiphertext> {
        let key = self.galois_key(element, None, gk)?;
        self.apply_galois_with(ct, element, key)
    }

    /// [`RlweContext::apply_galois`] on a 2-part ciphertext in coefficient form over a prefix of the
    /// chain, with a coefficient-form result: `(c_0(X^k) + u_0, u_1)` where `(u_0, u_1)` is the gadget
    /// product of `c_1(X^k)` with the key from `s(X^k)` to `s` ([`RlweContext::gadget_product_sum`] of
    /// one term). In coefficient form the automorphism is a signed permutation of the coefficients, so
    /// a ciphertext that stays in that form between gadget products (the accumulator of the
    /// automorphism-based blind rotation of Lee et al., Eurocrypt 2023, Algorithm 3) pays only the
    /// product's transforms: two forward NTTs (ModUp) and four inverse ones (ModDown of both outputs).
    /// The result and its error are those of [`RlweContext::apply_galois`] (the same key switch).
    ///
    /// Errors: as [`RlweContext::apply_galois`]; [`Error::NotOnChain`] or basis mismatches for parts
    /// not over one prefix of the chain.
    pub fn apply_galois_coeff(
        &self,
        ct: &RlweCiphertext<Coeff>,
        element: GaloisElement,
        gk: &GaloisKeys,
    ) -> Result<RlweCiphertext<Coeff>> {
        let key = self.galois_key(element, None, gk)?;
        let [c0, c1] = ct.parts.as_slice() else {
            return Err(Error::WrongPartCount {
                operation: "Galois automorphism",
                expected: 2,
                got: ct.parts.len(),
            });
        };
        c0.basis()
            .check_same(c1.basis(), "Galois automorphism (parts)")?;
        let (mut u0, u1) = self.gadget_product_sum(&[(&c1.automorphism(element)?, key)])?;
        u0.add_assign(&c0.automorphism(element)?)?;
        RlweCiphertext::new(vec![u0, u1])
    }

    /// Rotation by `step` (negative allowed) in a scheme's Galois `group`: [`RlweContext::apply_galois`]
    /// with `k = g^step mod 2N` ([`GaloisGroup::element_of_step`]). A missing key is reported with both
    /// the element and the step.
    ///
    /// Errors: as [`RlweContext::apply_galois`].
    pub fn rotate(
        &self,
        ct: &RlweCiphertext,
        group: &GaloisGroup,
        step: i64,
        gk: &GaloisKeys,
    ) -> Result<RlweCiphertext> {
        let element = group.element_of_step(step);
        let key = self.galois_key(element, Some(step), gk)?;
        self.apply_galois_with(ct, element, key)
    }

    /// The hoisted decomposition of a 2-part ciphertext: decomposition and ModUp of `c_1` done once, for
    /// many automorphisms of the same ciphertext (see [`HoistedDecomposition`]).
    ///
    /// Errors: [`Error::WrongPartCount`] unless `ct` has 2 parts; [`Error::NotOnChain`].
    pub fn hoist(&self, ct: &RlweCiphertext) -> Result<HoistedDecomposition> {
        let level = ct.check(self, Some(2), "hoisting")?;
        let tables = self.level_tables(level)?;
        let digits = long_operation(ct.parts[1].data().len(), || {
            self.mod_up_digits(&tables, &ct.parts[1])
        })?;
        Ok(HoistedDecomposition {
            level,
            digest: digest(&ct.parts[1]),
            digits,
        })
    }

    fn apply_galois_hoisted_with(
        &self,
        ct: &RlweCiphertext,
        hoisted: &HoistedDecomposition,
        element: GaloisElement,
        key: &KeySwitchKey,
    ) -> Result<RlweCiphertext> {
        let level = ct.check(self, Some(2), "hoisted Galois automorphism")?;
        if level != hoisted.level || digest(&ct.parts[1]) != hoisted.digest {
            return Err(Error::HoistMismatch {
                hoisted_level: hoisted.level,
                level,
            });
        }
        let tables = self.level_tables(level)?;
        let perm = self.galois_permutation(element)?;
        let addends = [Addend::Permuted(ct.parts[0].data(), &perm), Addend::None];
        let (c0, u1) = long_operation(ct.parts[1].data().len(), || {
            self.finish_key_switch(
                &tables,
                &hoisted.digits,
                key,
                Some(&perm),
                &|t: &LevelTables, i, y| self.mod_down(t, y, addends[i]),
            )
        })?;
        Ok(RlweCiphertext {
            parts: vec![c0, u1],
        })
    }

    /// [`RlweContext::apply_galois`] reusing the hoisted digits of `ct` (computed by
    /// [`RlweContext::hoist`] from this very ciphertext): only the permutation, the inner product and
    /// ModDown remain per element.
    ///
    /// Errors: [`Error::HoistMismatch`] if `hoisted` was computed from another ciphertext; as
    /// [`RlweContext::apply_galois`] otherwise.
    pub fn apply_galois_hoisted(
        &self,
        ct: &RlweCiphertext,
        hoisted: &HoistedDecomposition,
        element: GaloisElement,
        gk: &GaloisKeys,
    ) -> Result<RlweCiphertext> {
        let key = self.galois_key(element, None, gk)?;
        self.apply_galois_hoisted_with(ct, hoisted, element, key)
    }

    /// [`RlweContext::rotate`] with hoisted digits.
    ///
    /// Errors: as [`RlweContext::apply_galois_hoisted`].
    pub fn rotate_hoisted(
        &self,
        ct: &RlweCiphertext,
        hoisted: &HoistedDecomposition,
        group: &GaloisGroup,
        step: i64,
        gk: &GaloisKeys,
    ) -> Result<RlweCiphertext> {
        let element = group.element_of_step(step);
        let key = self.galois_key(element, Some(step), gk)?;
        self.apply_galois_hoisted_with(ct, hoisted, element, key)
    }
}
