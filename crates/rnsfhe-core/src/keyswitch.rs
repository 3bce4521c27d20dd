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
use rnsfhe_math::NttPlan;
use rnsfhe_ring::{Ntt, Poly};

use crate::context::{LevelTables, RlweContext};
use crate::encryption::RlweCiphertext;
use crate::error::{Error, Result};
use crate::keys::{galois_conjugate, galois_element_for_step, GaloisKeys, KeySwitchKey, RelinKey};

/// Forward NTT of every limb of a limb-major buffer, in parallel over limbs.
fn forward_all(plans: &[Arc<NttPlan>], data: &mut [u64], n: usize) -> Result<()> {
    data.par_chunks_mut(n)
        .zip(plans.par_iter())
        .try_for_each(|(a, plan)| plan.forward(a))?;
    Ok(())
}

/// Inverse NTT of every limb of a limb-major buffer, in parallel over limbs.
fn inverse_all(plans: &[Arc<NttPlan>], data: &mut [u64], n: usize) -> Result<()> {
    data.par_chunks_mut(n)
        .zip(plans.par_iter())
        .try_for_each(|(a, plan)| plan.inverse(a))?;
    Ok(())
}

/// Coefficients per block of the key-switching inner product (two `u128` accumulators of this length:
/// 8 KiB, in L1).
const IP_BLOCK: usize = 256;

/// A cheap digest of a polynomial's residues, to tie a [`HoistedDecomposition`] to its ciphertext.
fn digest(p: &Poly<Ntt>) -> u64 {
    p.data().iter().fold(0x243f_6a88_85a3_08d3u64, |h, &w| {
        (h ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29)
    })
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
    /// buffer per group.
    fn mod_up_digits(&self, tables: &LevelTables, d: &Poly<Ntt>) -> Result<Vec<Vec<u64>>> {
        let n = self.n();
        let ext_len = tables.ext.len();
        let q_plans = &self.chain().plans()[..tables.limbs];
        let data = d.data();
        tables
            .digits
            .par_iter()
            .map(|dt| {
                let r = dt.range.clone();
                let own = &data[r.start * n..r.end * n];
                let mut src = own.to_vec();
                inverse_all(&q_plans[r.clone()], &mut src, n)?;
                // Convert into the front of the output (the complement, `(Q_l \ Q_j) ∪ P`, in order), then
                // shift its tail past the group's slot and copy the group's own NTT limbs in.
                let comp = (ext_len - r.len()) * n;
                let mut out = vec![0u64; ext_len * n];
                dt.up.convert_into(&src, &mut out[..comp])?;
                forward_all(dt.up.to().plans(), &mut out[..comp], n)?;
                out.copy_within(r.start * n..comp, r.end * n);
                out[r.start * n..r.end * n].copy_from_slice(own);
                Ok(out)
            })
            .collect()
    }

    /// Step 3: `sum_j digit_j (b_j, a_j)` over `Q_l ∪ P` (NTT form), reading the key's limb `i` for
    /// `i < l` and its limb `L + i` for the special primes; digits are read through `perm` (an NTT slot
    /// permutation) when given. Products are accumulated in `u128` and reduced lazily.
    fn inner_product(
        &self,
        tables: &LevelTables,
        digits: &[Vec<u64>],
        key: &KeySwitchKey,
        perm: Option<&[usize]>,
    ) -> Result<(Vec<u64>, Vec<u64>)> {
        let n = self.n();
        let l = tables.limbs;
        let big_l = self.max_level();
        let comps = key.components();
        if comps.len() < digits.len() {
            return Err(Error::InvalidParams {
                what: "key-switching key",
                reason: format!(
                    "the key has {} digit components but level {l} needs {}",
                    comps.len(),
                    digits.len()
                ),
            });
        }
        for (b, a) in comps.iter().take(digits.len()) {
            for p in [b, a] {
                if p.data().len() != (big_l + self.special_basis().len()) * n {
                    return Err(Error::InvalidParams {
                        what: "key-switching key",
                        reason: format!(
                            "a component has {} limbs, expected L + k = {}",
                            p.limb_count(),
                            big_l + self.special_basis().len()
                        ),
                    });
                }
            }
        }
        let ext_len = tables.ext.len();
        let mut out0 = vec![0u64; ext_len * n];
        let mut out1 = vec![0u64; ext_len * n];
        out0.par_chunks_mut(n)
            .zip(out1.par_chunks_mut(n))
            .zip(tables.ext.moduli().par_iter())
            .enumerate()
            .for_each(|(t, ((o0, o1), &m))| {
                let kt = if t < l { t } else { big_l + t - l };
                let red = m;
                let cap = red.wide_accumulation_capacity();
                // Blocks of coefficients: the two u128 accumulators stay in L1 while every digit is added.
                let mut acc0 = [0u128; IP_BLOCK];
                let mut acc1 = [0u128; IP_BLOCK];
                for start in (0..n).step_by(IP_BLOCK) {
                    let len = IP_BLOCK.min(n - start);
                    let (acc0, acc1) = (&mut acc0[..len], &mut acc1[..len]);
                    acc0.fill(0);
                    acc1.fill(0);
                    let mut pending = 0usize;
                    for (dig, (b, a)) in digits.iter().zip(comps) {
                        if pending == cap {
                            for x in acc0.iter_mut().chain(acc1.iter_mut()) {
                                *x = red.reduce_wide(*x) as u128;
                            }
                            pending = 0;
                        }
                        let base = t * n;
                        let dl = &dig[base..base + n];
                        let off = kt * n + start;
                        let bl = &b.data()[off..off + len];
                        let al = &a.data()[off..off + len];
                        match perm {
                            None => {
                                let dl = &dl[start..start + len];
                                for i in 0..len {
                                    let x = dl[i] as u128;
                                    acc0[i] += x * bl[i] as u128;
                                    acc1[i] += x * al[i] as u128;
                                }
                            }
                            Some(perm) => {
                                let pl = &perm[start..start + len];
                                for i in 0..len {
                                    let x = dl[pl[i]] as u128;
                                    acc0[i] += x * bl[i] as u128;
                                    acc1[i] += x * al[i] as u128;
                                }
                            }
                        }
                        pending += 1;
                    }
                    for (o, &x) in o0[start..start + len].iter_mut().zip(acc0.iter()) {
                        *o = red.reduce_wide(x);
                    }
                    for (o, &x) in o1[start..start + len].iter_mut().zip(acc1.iter()) {
                        *o = red.reduce_wide(x);
                    }
                }
            });
        Ok((out0, out1))
    }

    /// Step 4 (RNS-CKKS Algorithm 2 in NTT form): `y` over `Q_l ∪ P` to `(y_Q - Conv_{P -> Q_l}(y_P)) P^-1`
    /// over `Q_l`. Only the `P` limbs take an inverse NTT and the correction a forward NTT.
    fn mod_down(&self, tables: &LevelTables, y: &[u64]) -> Result<Poly<Ntt>> {
        let n = self.n();
        let l = tables.limbs;
        let q_l = self.basis_at(l)?;
        let (y_q, y_p) = y.split_at(l * n);
        let mut p_coeff = y_p.to_vec();
        inverse_all(self.special_basis().plans(), &mut p_coeff, n)?;
        let mut corr = vec![0u64; l * n];
        tables.down.convert_into(&p_coeff, &mut corr)?;
        forward_all(&q_l.plans()[..l], &mut corr, n)?;
        corr.par_chunks_mut(n)
            .zip(y_q.par_chunks(n))
            .zip(q_l.moduli().par_iter())
            .zip(tables.p_inv.par_iter())
            .for_each(|(((c, a), m), &w)| {
                for (ci, &ai) in c.iter_mut().zip(a) {
                    *ci = m.mul_shoup(m.sub(ai, *ci), w);
                }
            });
        Ok(Poly::from_data(q_l, corr)?)
    }

    /// Steps 3-4 for precomputed extended digits.
    fn finish_key_switch(
        &self,
        tables: &LevelTables,
        digits: &[Vec<u64>],
        key: &KeySwitchKey,
        perm: Option<&[usize]>,
    ) -> Result<(Poly<Ntt>, Poly<Ntt>)> {
        let (c0, c1) = self.inner_product(tables, digits, key, perm)?;
        let (u0, u1) = rayon::join(|| self.mod_down(tables, &c0), || self.mod_down(tables, &c1));
        Ok((u0?, u1?))
    }

    /// Key switching of `d` (over `Q_l`, NTT form) with a key from `s'` to `s` (RNS-CKKS `KS`, hybrid
    /// with `dnum` digits as in Han-Ki Section 2.4; see the module documentation): returns `(u_0, u_1)`
    /// over `Q_l` with `u_0 + u_1 s = d s' + e_ks (mod Q_l)`, `e_ks` as in
    /// [`RlweContext::key_switch_noise`].
    ///
    /// Errors: [`Error::ContextMismatch`] for a key of another context; [`Error::NotOnChain`] if `d` is
    /// not over a prefix of the chain.
    pub fn key_switch(&self, d: &Poly<Ntt>, key: &KeySwitchKey) -> Result<(Poly<Ntt>, Poly<Ntt>)> {
        self.check_fingerprint(key.fingerprint(), "key-switching key")?;
        let level = self.level_of(d, "key-switched polynomial")?;
        let tables = self.level_tables(level)?;
        let digits = self.mod_up_digits(&tables, d)?;
        self.finish_key_switch(&tables, &digits, key, None)
    }

    /// Relinearization (RNS-CKKS `Mult`, steps 2-4): a 3-part ciphertext `(d_0, d_1, d_2)` to
    /// `(d_0 + u_0, d_1 + u_1)` with `(u_0, u_1)` the key switch of `d_2` from `s^2` to `s`.
    ///
    /// Errors: [`Error::WrongPartCount`] unless `ct` has 3 parts; [`Error::ContextMismatch`] for a key of
    /// another context; errors of [`RlweContext::key_switch`].
    pub fn relinearize(&self, ct: &RlweCiphertext, rk: &RelinKey) -> Result<RlweCiphertext> {
        ct.check(self, Some(3), "relinearization")?;
        let (u0, u1) = self.key_switch(&ct.parts[2], rk.key())?;
        let mut c0 = ct.parts[0].clone();
        c0.add_assign(&u0)?;
        let mut c1 = ct.parts[1].clone();
        c1.add_assign(&u1)?;
        Ok(RlweCiphertext {
            parts: vec![c0, c1],
        })
    }

    /// Applies the NTT slot permutation of a Galois element to every limb of `p`.
    fn permute(&self, p: &Poly<Ntt>, perm: &[usize]) -> Result<Poly<Ntt>> {
        let n = self.n();
        let mut data = vec![0u64; p.data().len()];
        data.par_chunks_mut(n)
            .zip(p.data().par_chunks(n))
            .for_each(|(dst, src)| {
                for (d, &s) in dst.iter_mut().zip(perm) {
                    *d = src[s];
                }
            });
        Ok(Poly::from_data(p.basis(), data)?)
    }

    /// The Galois key of `element`, after checking the keys' context and the element.
    fn galois_key<'a>(
        &self,
        element: usize,
        step: Option<i64>,
        gk: &'a GaloisKeys,
    ) -> Result<&'a KeySwitchKey> {
        self.check_fingerprint(gk.fingerprint(), "Galois keys")?;
        self.check_galois_element(element)?;
        gk.require(element, step)
    }

    fn apply_galois_with(
        &self,
        ct: &RlweCiphertext,
        element: usize,
        key: &KeySwitchKey,
    ) -> Result<RlweCiphertext> {
        ct.check(self, Some(2), "Galois automorphism")?;
        let perm = self.galois_permutation(element)?;
        let c0 = self.permute(&ct.parts[0], &perm)?;
        let c1 = self.permute(&ct.parts[1], &perm)?;
        let (u0, u1) = self.key_switch(&c1, key)?;
        let mut c0 = c0;
        c0.add_assign(&u0)?;
        Ok(RlweCiphertext {
            parts: vec![c0, u1],
        })
    }

    /// The automorphism `X -> X^k` of a 2-part ciphertext: `(c_0(X^k), c_1(X^k))` decrypts under
    /// `s(X^k)`; key switching `c_1(X^k)` back to `s` gives an encryption of `m(X^k)` under `s`
    /// (RNS-CKKS Section 4, rotation and conjugation).
    ///
    /// Errors: [`Error::MissingGaloisKey`] naming `k` if `gk` has no key for it;
    /// [`Error::InvalidGaloisElement`], [`Error::WrongPartCount`], [`Error::ContextMismatch`].
    pub fn apply_galois(
        &self,
        ct: &RlweCiphertext,
        element: usize,
        gk: &GaloisKeys,
    ) -> Result<RlweCiphertext> {
        let key = self.galois_key(element, None, gk)?;
        self.apply_galois_with(ct, element, key)
    }

    /// Rotation of the CKKS slots by `step` (negative allowed): [`RlweContext::apply_galois`] with
    /// `k = 5^step mod 2N`. A missing key is reported with both the element and the step.
    pub fn rotate(
        &self,
        ct: &RlweCiphertext,
        step: i64,
        gk: &GaloisKeys,
    ) -> Result<RlweCiphertext> {
        let element = galois_element_for_step(step, self.n());
        let key = self.galois_key(element, Some(step), gk)?;
        self.apply_galois_with(ct, element, key)
    }

    /// Complex conjugation of the CKKS slots: [`RlweContext::apply_galois`] with `k = 2N - 1`.
    pub fn conjugate(&self, ct: &RlweCiphertext, gk: &GaloisKeys) -> Result<RlweCiphertext> {
        self.apply_galois(ct, galois_conjugate(self.n()), gk)
    }

    /// The hoisted decomposition of a 2-part ciphertext: decomposition and ModUp of `c_1` done once, for
    /// many automorphisms of the same ciphertext (see [`HoistedDecomposition`]).
    ///
    /// Errors: [`Error::WrongPartCount`] unless `ct` has 2 parts; [`Error::NotOnChain`].
    pub fn hoist(&self, ct: &RlweCiphertext) -> Result<HoistedDecomposition> {
        let level = ct.check(self, Some(2), "hoisting")?;
        let tables = self.level_tables(level)?;
        let digits = self.mod_up_digits(&tables, &ct.parts[1])?;
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
        element: usize,
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
        let (u0, u1) = self.finish_key_switch(&tables, &hoisted.digits, key, Some(&perm))?;
        let mut c0 = self.permute(&ct.parts[0], &perm)?;
        c0.add_assign(&u0)?;
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
        element: usize,
        gk: &GaloisKeys,
    ) -> Result<RlweCiphertext> {
        let key = self.galois_key(element, None, gk)?;
        self.apply_galois_hoisted_with(ct, hoisted, element, key)
    }

    /// [`RlweContext::rotate`] with hoisted digits.
    pub fn rotate_hoisted(
        &self,
        ct: &RlweCiphertext,
        hoisted: &HoistedDecomposition,
        step: i64,
        gk: &GaloisKeys,
    ) -> Result<RlweCiphertext> {
        let element = galois_element_for_step(step, self.n());
        let key = self.galois_key(element, Some(step), gk)?;
        self.apply_galois_hoisted_with(ct, hoisted, element, key)
    }
}
