//! RNS polynomials typed by representation.
//!
//! A [`Poly<F>`] is one contiguous buffer of `limbs x N` words (limb-major: limb `i` occupies
//! `[i N, (i + 1) N)`) with its [`RnsBasis`]. The form `F` is [`Coeff`] (coefficients) or [`Ntt`]
//! (evaluations in the order of [`rnsfhe_math::NttPlan`]); mixing forms does not compile, and
//! products exist only in NTT form. Limb-wise work runs in parallel over limbs with rayon.

use std::marker::PhantomData;
use std::sync::Arc;

use rayon::prelude::*;
use rnsfhe_math::simd::{
    append_in_blocks, map_in_place, map_uninit, sum_of_products, sum_of_products_uninit,
    write_uninit, Fresh, LaneMap, ModAdd, ModMul, ModMulAdd, ModSub, Stores, Weights,
};
use rnsfhe_math::{Modulus, NttPlan};

use crate::basis::RnsBasis;
use crate::error::{Error, Result};
use crate::galois::GaloisElement;
use crate::parallel;

mod sealed {
    pub trait Sealed {}
}

/// The representation of a polynomial: [`Coeff`] or [`Ntt`].
pub trait Form: sealed::Sealed + Send + Sync + 'static {
    /// Name used in messages.
    const NAME: &'static str;
}

/// Coefficient representation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Coeff;
/// NTT (evaluation) representation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ntt;

impl sealed::Sealed for Coeff {}
impl sealed::Sealed for Ntt {}
impl Form for Coeff {
    const NAME: &'static str = "coefficient";
}
impl Form for Ntt {
    const NAME: &'static str = "NTT";
}

/// A polynomial in `Z_Q[X]/(X^N + 1)` in RNS form over `basis`, in form `F`.
pub struct Poly<F: Form> {
    basis: Arc<RnsBasis>,
    data: Vec<u64>,
    _form: PhantomData<F>,
}

/// Words from which a copy of a polynomial is split between threads ([`Poly::clone`]): a ciphertext
/// part at `N = 2^16` over a few limbs (copied by every out-of-place CKKS operation) is worth sharing,
/// the small polynomials of blind rotation (`N = 2^12`, two limbs) are not (a thread wake-up costs as
/// much as their copy).
const PARALLEL_COPY_MIN_WORDS: usize = 1 << 17;

/// Words from which [`Poly::from_data`] checks the residues of its buffer, and [`Poly::zeroize`] wipes
/// it, on several threads: the outputs of key switching at `N = 2^15` over 11 limbs (2.75 MiB each,
/// three per rotation) were checked on one thread while the other waited, about 3 % of a two-thread
/// rotation.
const PARALLEL_CHECK_MIN_WORDS: usize = 1 << 16;

/// Coefficients per task of the element-wise passes that split limbs ([`Poly::sum_of_products`]): at
/// the low levels of a CKKS chain a polynomial has 2 to 5 limbs, and whole limbs on two threads leave
/// one idle for a third of the pass over 3 limbs; half limbs of `N = 2^16` keep both busy.
const SPLIT_WORDS: usize = 1 << 15;

impl<F: Form> Clone for Poly<F> {
    fn clone(&self) -> Self {
        // A large copy on several threads is split in blocks (indexed collection writes the fresh
        // buffer once, without a zero fill first); otherwise a plain copy.
        let data = if self.data.len() >= PARALLEL_COPY_MIN_WORDS && rayon::current_num_threads() > 1
        {
            let mut data = Vec::with_capacity(self.data.len());
            self.data
                .par_iter()
                .with_min_len(SPLIT_WORDS)
                .copied()
                .collect_into_vec(&mut data);
            data
        } else {
            self.data.clone()
        };
        Self {
            basis: Arc::clone(&self.basis),
            data,
            _form: PhantomData,
        }
    }
}

impl<F: Form> std::fmt::Debug for Poly<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Contents are not printed: a polynomial may be a secret key or a noise term.
        f.debug_struct("Poly")
            .field("form", &F::NAME)
            .field("n", &self.basis.degree())
            .field("limbs", &self.basis.len())
            .finish_non_exhaustive()
    }
}

impl<F: Form> PartialEq for Poly<F> {
    fn eq(&self, other: &Self) -> bool {
        *self.basis == *other.basis && self.data == other.data
    }
}

impl<F: Form> Poly<F> {
    /// The zero polynomial over `basis`.
    pub fn zero(basis: &Arc<RnsBasis>) -> Self {
        Self {
            basis: Arc::clone(basis),
            // Filled in parallel when large (see [`parallel::zeroed`]).
            data: parallel::zeroed(basis.len() * basis.degree()),
            _form: PhantomData,
        }
    }

    /// Wraps a limb-major buffer, checking its length and that every residue is below its modulus.
    pub fn from_data(basis: &Arc<RnsBasis>, data: Vec<u64>) -> Result<Self> {
        let n = basis.degree();
        if data.len() != basis.len() * n {
            return Err(Error::LengthMismatch {
                what: "RNS polynomial buffer",
                expected: basis.len() * n,
                got: data.len(),
            });
        }
        let check_limb = |limb: &usize| -> Result<()> {
            let (chunk, m) = (&data[limb * n..(limb + 1) * n], &basis.moduli()[*limb]);
            match chunk.iter().position(|&x| x >= m.value()) {
                Some(index) => Err(Error::ResidueOutOfRange {
                    value: chunk[index],
                    limb: *limb,
                    index,
                    modulus: m.value(),
                }),
                None => Ok(()),
            }
        };
        if data.len() >= PARALLEL_CHECK_MIN_WORDS && rayon::current_num_threads() > 1 {
            // The first out-of-range limb in limb order, as the serial loop reports it.
            let limbs: Vec<usize> = (0..basis.len()).collect();
            parallel::map(&limbs, &check_limb)
                .into_iter()
                .collect::<Result<()>>()?;
        } else {
            (0..basis.len()).try_for_each(|limb| check_limb(&limb))?;
        }
        Ok(Self {
            basis: Arc::clone(basis),
            data,
            _form: PhantomData,
        })
    }

    /// Wraps a buffer known to be valid (internal use by operations that produce reduced residues).
    pub(crate) fn from_data_unchecked(basis: &Arc<RnsBasis>, data: Vec<u64>) -> Self {
        debug_assert_eq!(data.len(), basis.len() * basis.degree());
        debug_assert!(data
            .chunks_exact(basis.degree())
            .zip(basis.moduli())
            .all(|(c, m)| c.iter().all(|&x| x < m.value())));
        Self {
            basis: Arc::clone(basis),
            data,
            _form: PhantomData,
        }
    }

    /// The basis.
    #[inline]
    pub fn basis(&self) -> &Arc<RnsBasis> {
        &self.basis
    }

    /// Ring degree `N`.
    #[inline]
    pub fn degree(&self) -> usize {
        self.basis.degree()
    }

    /// Number of limbs.
    #[inline]
    pub fn limb_count(&self) -> usize {
        self.basis.len()
    }

    /// The whole limb-major buffer.
    #[inline]
    pub fn data(&self) -> &[u64] {
        &self.data
    }

    /// Applies `transform` (an NTT direction) to every limb in parallel, changing the form to `G`. Lengths
    /// match the plans by construction, so the transform cannot fail.
    fn transform<G: Form>(
        mut self,
        transform: fn(&NttPlan, &mut [u64]) -> rnsfhe_math::Result<()>,
    ) -> Poly<G> {
        let n = self.degree();
        let plans = self.basis.plans();
        // By halves with active waits inside an active region ([`parallel::for_each_chunk`]).
        parallel::for_each_chunk(&mut self.data, n, &|i, a| {
            let _ = transform(&plans[i], a);
        });
        Poly {
            basis: self.basis,
            data: self.data,
            _form: PhantomData,
        }
    }

    /// Overwrites every residue with zero in a way the compiler cannot elide (for secret material: secret
    /// keys, their products, encryption randomness). The polynomial stays valid (the zero polynomial).
    pub fn zeroize(&mut self) {
        // Large polynomials (a secret over `QP` at `N = 2^15`: several MB, wiped when an encryption
        // or a key generation ends) are wiped limb by limb on the pool's threads: on one thread this
        // was a serial pass at the end of every such operation.
        if self.data.len() >= PARALLEL_CHECK_MIN_WORDS && rayon::current_num_threads() > 1 {
            let n = self.degree();
            parallel::for_each_chunk(&mut self.data, n, &|_, limb| {
                zeroize::Zeroize::zeroize(limb);
            });
        } else {
            zeroize::Zeroize::zeroize(self.data.as_mut_slice());
        }
    }

    /// Consumes the polynomial, returning its buffer.
    pub fn into_data(self) -> Vec<u64> {
        self.data
    }

    /// Limb `i` (the residues modulo `q_i`); `None` if out of range.
    pub fn limb(&self, i: usize) -> Option<&[u64]> {
        let n = self.degree();
        self.data.get(i * n..(i + 1) * n)
    }

    /// Iterator over the limbs.
    pub fn limbs(&self) -> std::slice::ChunksExact<'_, u64> {
        self.data.chunks_exact(self.degree())
    }

    /// Mutable access to the limbs with their moduli. Callers must keep residues below the modulus.
    pub(crate) fn limbs_mut(
        &mut self,
    ) -> impl IndexedParallelIterator<Item = (&mut [u64], &Modulus)> {
        let n = self.basis.degree();
        self.data
            .par_chunks_mut(n)
            .zip(self.basis.moduli().par_iter())
    }

    fn check_same(&self, other: &Self, operation: &'static str) -> Result<()> {
        if Arc::ptr_eq(&self.basis, &other.basis) {
            return Ok(());
        }
        self.basis.check_same(&other.basis, operation)
    }

    /// `self_c <- op(self_c, other_c)` in every limb (vectorized, in parallel over limbs).
    fn zip_apply(
        &mut self,
        other: &Self,
        operation: &'static str,
        op: &impl LaneMap<1>,
    ) -> Result<()> {
        self.check_same(other, operation)?;
        let n = self.degree();
        let apply = |((a, b), m): ((&mut [u64], &[u64]), &Modulus)| map_in_place(m, a, [b], op);
        if self.limb_count() > 1 && rayon::current_num_threads() > 1 {
            let moduli = self.basis.moduli();
            parallel::for_each_chunk(&mut self.data, n, &|i, a| {
                apply(((a, &other.data[i * n..(i + 1) * n]), &moduli[i]))
            });
        } else {
            self.data
                .chunks_exact_mut(n)
                .zip(other.data.chunks_exact(n))
                .zip(self.basis.moduli())
                .for_each(apply);
        }
        Ok(())
    }

    /// A new polynomial with coefficient `op(self_c, other_c)`, written in one pass into a fresh
    /// buffer (reads both operands once; no copy of `self` first, no zero-fill), with streaming stores
    /// when the output is larger than the cache can keep ([`Stores::for_output_words`]).
    fn zip_map(&self, other: &Self, operation: &'static str, op: &impl LaneMap<1>) -> Result<Self> {
        self.check_same(other, operation)?;
        let n = self.degree();
        let fresh = Fresh(op);
        let moduli = self.basis.moduli();
        let stores = Stores::for_output_words(self.data.len());
        let data = parallel::from_chunks(self.data.len(), n, &|i, o| {
            let r = i * n..(i + 1) * n;
            map_uninit(
                &moduli[i],
                o,
                [&self.data[r.clone()], &other.data[r]],
                &fresh,
                stores,
            )
        });
        Ok(Self {
            basis: Arc::clone(&self.basis),
            data,
            _form: PhantomData,
        })
    }

    /// `self += other`.
    pub fn add_assign(&mut self, other: &Self) -> Result<()> {
        self.zip_apply(other, "polynomial addition", &ModAdd)
    }

    /// `self -= other`.
    pub fn sub_assign(&mut self, other: &Self) -> Result<()> {
        self.zip_apply(other, "polynomial subtraction", &ModSub)
    }

    /// `self + other`.
    pub fn add(&self, other: &Self) -> Result<Self> {
        self.zip_map(other, "polynomial addition", &ModAdd)
    }

    /// `self - other`.
    pub fn sub(&self, other: &Self) -> Result<Self> {
        self.zip_map(other, "polynomial subtraction", &ModSub)
    }

    /// `self = -self`.
    pub fn neg_assign(&mut self) {
        self.limbs_mut()
            .for_each(|(a, m)| a.iter_mut().for_each(|x| *x = m.neg(*x)));
    }

    /// Checks that `scalars` has one entry per limb ([`Error::LengthMismatch`] otherwise).
    fn check_per_limb(&self, scalars: &[u64]) -> Result<()> {
        if scalars.len() != self.limb_count() {
            return Err(Error::LengthMismatch {
                what: "per-limb scalars",
                expected: self.limb_count(),
                got: scalars.len(),
            });
        }
        Ok(())
    }

    /// Multiplies limb `i` by the constant `scalars[i]` (reduced modulo `q_i` first): the RNS form of
    /// multiplication by an integer given by its residues.
    pub fn mul_scalars_assign(&mut self, scalars: &[u64]) -> Result<()> {
        self.check_per_limb(scalars)?;
        let n = self.degree();
        let moduli = self.basis.moduli();
        parallel::for_each_chunk(&mut self.data, n, &|i, a| {
            let (m, s) = (&moduli[i], scalars[i]);
            let w = m.shoup(s);
            a.iter_mut().for_each(|x| *x = m.mul_shoup(*x, w));
        });
        Ok(())
    }

    /// Adds the constant `scalars[i]` (below `q_i`) to every coefficient of limb `i`: in NTT form, the
    /// addition of the constant polynomial given by its residues. Large polynomials are shared between
    /// threads in parts of limbs (`2^15` coefficients), so that a few limbs still keep every thread busy.
    ///
    /// Errors: [`Error::LengthMismatch`] unless there is one scalar per limb.
    pub fn add_scalars_assign(&mut self, scalars: &[u64]) -> Result<()> {
        self.check_per_limb(scalars)?;
        let n = self.degree();
        let moduli = self.basis.moduli();
        let add = |i: usize, a: &mut [u64]| {
            let (m, s) = (&moduli[i], scalars[i]);
            a.iter_mut().for_each(|x| *x = m.add(*x, s));
        };
        if self.data.len() >= PARALLEL_COPY_MIN_WORDS && rayon::current_num_threads() > 1 {
            let part = n.min(SPLIT_WORDS);
            let per_limb = n / part;
            parallel::for_each_chunk(&mut self.data, part, &|t, a| add(t / per_limb, a));
        } else {
            self.data
                .chunks_exact_mut(n)
                .enumerate()
                .for_each(|(i, a)| add(i, a));
        }
        Ok(())
    }

    /// Multiplies by a signed integer constant `c` (reduced modulo each `q_i`).
    pub fn mul_i64_assign(&mut self, c: i64) {
        let n = self.degree();
        let moduli = self.basis.moduli();
        parallel::for_each_chunk(&mut self.data, n, &|i, a| {
            let m = &moduli[i];
            let w = m.shoup(m.reduce_i64(c));
            a.iter_mut().for_each(|x| *x = m.mul_shoup(*x, w));
        });
    }

    /// Keeps the first `limbs` limbs (the polynomial modulo a prefix `q_0 ... q_{limbs-1}` of its basis).
    pub fn drop_to(&self, limbs: usize) -> Result<Self> {
        let basis = self.basis.prefix(limbs)?;
        Ok(Self::from_data_unchecked(
            &basis,
            self.data[..limbs * self.degree()].to_vec(),
        ))
    }

    /// Drops limbs in place down to `limbs`.
    pub fn drop_to_assign(&mut self, limbs: usize) -> Result<()> {
        let basis = self.basis.prefix(limbs)?;
        self.data.truncate(limbs * self.degree());
        self.basis = basis;
        Ok(())
    }

    /// Replaces the basis by an equal one (for example the cached prefix of a context's chain).
    pub fn rebase(&mut self, basis: &Arc<RnsBasis>) -> Result<()> {
        self.basis.check_same(basis, "rebase")?;
        self.basis = Arc::clone(basis);
        Ok(())
    }
}

impl Poly<Coeff> {
    /// The polynomial with the given signed integer coefficients, reduced modulo every limb.
    pub fn from_i64(basis: &Arc<RnsBasis>, coeffs: &[i64]) -> Result<Self> {
        Self::from_coefficients(basis, coeffs, |m, c| m.reduce_i64(c))
    }

    /// The polynomial with the given unsigned integer coefficients, reduced modulo every limb.
    pub fn from_u64_reduced(basis: &Arc<RnsBasis>, coeffs: &[u64]) -> Result<Self> {
        Self::from_coefficients(basis, coeffs, |m, c| m.reduce(c))
    }

    /// The same integer coefficients in every limb, each reduced by `reduce`: every limb written once
    /// into fresh memory, the limbs in parallel (no zero-filled buffer first).
    fn from_coefficients<T: Copy + Sync>(
        basis: &Arc<RnsBasis>,
        coeffs: &[T],
        reduce: impl Fn(&Modulus, T) -> u64 + Sync,
    ) -> Result<Self> {
        let n = basis.degree();
        if coeffs.len() != n {
            return Err(Error::LengthMismatch {
                what: "coefficient vector",
                expected: n,
                got: coeffs.len(),
            });
        }
        let moduli = basis.moduli();
        let data = parallel::from_chunks(basis.len() * n, n, &|i, limb| {
            write_uninit(limb, coeffs.iter().map(|&c| reduce(&moduli[i], c)))
        });
        Ok(Self::from_data_unchecked(basis, data))
    }

    /// The product `X^k * self` in `Z_q[X]/(X^N + 1)` for any `k` (taken modulo `2N`, the order of `X`):
    /// a negacyclic rotation, `X^N = -1` flipping the sign of the coefficients that wrap around.
    pub fn mul_monomial(&self, k: usize) -> Self {
        let mut out = Self::zero(&self.basis);
        self.rotate_into(k, &mut out, |_, x, _| x);
        out
    }

    /// `(X^k - 1) * self`, the step of blind rotation (PEGASUS Fig. 2 step 5): the negacyclic rotation
    /// minus the polynomial, in one pass.
    pub fn mul_monomial_minus_one(&self, k: usize) -> Self {
        let mut out = Self::zero(&self.basis);
        self.rotate_into(k, &mut out, |m, rotated, original| m.sub(rotated, original));
        out
    }

    /// `self += other (X^k + X^-k - 1)` in place, with no allocation: two negacyclic rotations of `other`
    /// added and `other` subtracted, limb by limb (each a contiguous, vectorizable loop). The term
    /// `AC (X^a + X^-a - 1)` of a ternary blind-rotation step in OpenFHE's GINX form (PEGASUS Fig. 2).
    ///
    /// Errors: [`Error::BasisMismatch`] for polynomials over different bases.
    pub fn add_mul_symmetric_monomials(&mut self, other: &Self, k: usize) -> Result<()> {
        self.check_same(other, "adding symmetric monomial products")?;
        let n = self.degree();
        let k = k % (2 * n);
        for ((dst, src), m) in self
            .data
            .chunks_exact_mut(n)
            .zip(other.data.chunks_exact(n))
            .zip(self.basis.moduli())
        {
            for e in [k, (2 * n - k) % (2 * n)] {
                let (shift, negate) = if e >= n { (e - n, true) } else { (e, false) };
                // Coefficient i moves to i + shift; those that pass N wrap with a sign flip.
                let (head, tail) = dst.split_at_mut(shift);
                let (wrapped, moved) = src.split_at(n - shift);
                // Each segment on AVX-512 lanes where available.
                let place = |out: &mut [u64], from: &[u64], flip: bool| {
                    if flip {
                        map_in_place(m, out, [from], &ModSub);
                    } else {
                        map_in_place(m, out, [from], &ModAdd);
                    }
                };
                place(tail, wrapped, negate);
                place(head, moved, !negate);
            }
            map_in_place(m, dst, [src], &ModSub);
        }
        Ok(())
    }

    /// Writes `combine(m, (X^k self)_i, self_i)` into `out_i` for every coefficient of every limb.
    fn rotate_into(&self, k: usize, out: &mut Self, combine: impl Fn(&Modulus, u64, u64) -> u64) {
        let n = self.degree();
        let k = k % (2 * n);
        let (shift, negate) = if k >= n { (k - n, true) } else { (k, false) };
        for ((dst, src), m) in out
            .data
            .chunks_exact_mut(n)
            .zip(self.data.chunks_exact(n))
            .zip(self.basis.moduli())
        {
            // Coefficient i moves to i + shift; those that pass N wrap to i + shift - N with a sign flip.
            // Two contiguous segments with a fixed sign each, so both loops vectorize.
            let (head, tail) = dst.split_at_mut(shift);
            let (wrapped, moved) = src.split_at(n - shift);
            let place = |out: &mut [u64], from: &[u64], orig: &[u64], flip: bool| {
                for ((o, &x), &y) in out.iter_mut().zip(from).zip(orig) {
                    let x = if flip { m.neg(x) } else { x };
                    *o = combine(m, x, y);
                }
            };
            place(tail, wrapped, &src[shift..], negate);
            place(head, moved, &src[..shift], !negate);
        }
    }

    /// Forward NTT of every limb (in parallel over limbs).
    pub fn into_ntt(self) -> Poly<Ntt> {
        self.transform(NttPlan::forward)
    }

    /// The product `self * other` with `other` in NTT form, returned in coefficient form: the same
    /// residues as `self.clone().into_ntt()`, `mul_assign(other)`, `into_coeff()`, computed limb by limb
    /// so that each limb of the result (`N` words, cache-resident) goes through copy, forward transform,
    /// pointwise product (fused with the inverse transform's factor `N^-1`) and inverse transform before
    /// the next one, instead of four passes over the whole polynomial.
    ///
    /// Errors: [`Error::BasisMismatch`] if the bases differ.
    pub fn mul_by_ntt(&self, other: &Poly<Ntt>) -> Result<Self> {
        if !Arc::ptr_eq(&self.basis, &other.basis) {
            self.basis
                .check_same(&other.basis, "polynomial multiplication")?;
        }
        let n = self.degree();
        let product = |(limb, (s, plan)): (&mut [u64], (&[u64], &Arc<NttPlan>))| {
            let engine = plan.engine();
            engine.fwd(limb);
            engine.mul_assign_normalize(limb, s);
            engine.inv(limb);
        };
        let factors = other.data.chunks_exact(n).zip(self.basis.plans());
        let data = if self.limb_count() > 1 && rayon::current_num_threads() > 1 {
            let mut data = self.data.clone();
            data.par_chunks_mut(n)
                .zip(other.data.par_chunks(n).zip(self.basis.plans().par_iter()))
                .for_each(product);
            data
        } else {
            let mut data = Vec::with_capacity(self.data.len());
            for (limb, factor) in self.limbs().zip(factors) {
                data.extend_from_slice(limb);
                let start = data.len() - n;
                product((&mut data[start..], factor));
            }
            data
        };
        Ok(Self {
            basis: Arc::clone(&self.basis),
            data,
            _form: PhantomData,
        })
    }

    /// The automorphism `a(X) -> a(X^k)` of a Galois element `k`, in coefficient form: coefficient `i`
    /// moves to `i k mod 2N`, negated when that exponent is at least `N` (since `X^N = -1`).
    ///
    /// Errors: [`Error::GaloisDegreeMismatch`] if `k` belongs to another ring degree.
    pub fn automorphism(&self, k: GaloisElement) -> Result<Self> {
        k.check_degree(self.degree(), "automorphism")?;
        let k = k.value();
        let n = self.degree();
        let mask = 2 * n - 1;
        let mut out = Self::zero(&self.basis);
        let permute = |((dst, src), m): ((&mut [u64], &[u64]), &Modulus)| {
            for (i, &c) in src.iter().enumerate() {
                let e = (i * k) & mask;
                if e < n {
                    dst[e] = c;
                } else {
                    dst[e - n] = m.neg(c);
                }
            }
        };
        // One limb stays on the calling thread: a pool hand-off costs more than the permutation (the
        // blind-rotation accumulator is one limb and takes about a thousand automorphisms).
        if self.limb_count() > 1 && rayon::current_num_threads() > 1 {
            out.data
                .par_chunks_mut(n)
                .zip(self.data.par_chunks(n))
                .zip(self.basis.moduli().par_iter())
                .for_each(permute);
        } else {
            out.data
                .chunks_exact_mut(n)
                .zip(self.data.chunks_exact(n))
                .zip(self.basis.moduli())
                .for_each(permute);
        }
        Ok(out)
    }
}

impl Poly<Ntt> {
    /// Inverse NTT of every limb (in parallel over limbs).
    pub fn into_coeff(self) -> Poly<Coeff> {
        self.transform(NttPlan::inverse)
    }

    /// `self *= other` (pointwise in NTT form).
    pub fn mul_assign(&mut self, other: &Self) -> Result<()> {
        self.zip_apply(other, "polynomial multiplication", &ModMul)
    }

    /// `self * other`.
    pub fn mul(&self, other: &Self) -> Result<Self> {
        self.check_same(other, "polynomial multiplication")?;
        Ok(self.mul_accumulated(&[(&self.data, &other.data)]))
    }

    /// `sum_t x_t * y_t` (pointwise) over this polynomial's basis, accumulated lazily and reduced once
    /// per coefficient ([`rnsfhe_math::simd::sum_of_products`]). Operands are checked by the callers to
    /// be over this basis.
    fn mul_accumulated(&self, terms: &[(&[u64], &[u64])]) -> Self {
        let n = self.degree();
        let moduli = self.basis.moduli();
        let rows = |i: usize, r: std::ops::Range<usize>| -> (Vec<&[u64]>, Vec<&[u64]>) {
            let (lo, hi) = (i * n + r.start, i * n + r.end);
            (
                terms.iter().map(|&(x, _)| &x[lo..hi]).collect(),
                terms.iter().map(|&(_, y)| &y[lo..hi]).collect(),
            )
        };
        let data = if rayon::current_num_threads() > 1 {
            // Tasks of whole limbs, or of equal parts of limbs when the limbs are large, so that a
            // few limbs still share evenly between threads (see [`SPLIT_WORDS`]).
            let part = n.min(SPLIT_WORDS);
            let per_limb = n / part;
            parallel::from_chunks(self.data.len(), part, &|t, o| {
                let (i, j) = (t / per_limb, t % per_limb);
                let (xs, ys) = rows(i, j * part..(j + 1) * part);
                // No zero-filled output first (a pass over 16 MB for a ciphertext product at L15).
                sum_of_products_uninit(&moduli[i], &xs, Weights::PerElement(&ys), o)
            })
        } else {
            let mut out = Vec::with_capacity(self.data.len());
            for (i, m) in moduli.iter().enumerate() {
                append_in_blocks(&mut out, n, |r, block| {
                    let (xs, ys) = rows(i, r);
                    sum_of_products(m, &xs, Weights::PerElement(&ys), block);
                });
            }
            out
        };
        Self {
            basis: Arc::clone(&self.basis),
            data,
            _form: PhantomData,
        }
    }

    /// `sum_t x_t * y_t` (pointwise in NTT form) over `x_0`'s basis, accumulated lazily and reduced once
    /// per coefficient: the inner product of a decomposition with a key-switching key.
    ///
    /// Errors: [`Error::LengthMismatch`] for no terms; [`Error::BasisMismatch`] if an operand is over
    /// another basis.
    pub fn sum_of_products(terms: &[(&Self, &Self)]) -> Result<Self> {
        let Some(&(first, _)) = terms.first() else {
            return Err(Error::LengthMismatch {
                what: "sum of products (number of terms)",
                expected: 1,
                got: 0,
            });
        };
        for (x, y) in terms {
            first.check_same(x, "sum of products")?;
            first.check_same(y, "sum of products")?;
        }
        let raw: Vec<(&[u64], &[u64])> = terms
            .iter()
            .map(|(x, y)| (&x.data[..], &y.data[..]))
            .collect();
        Ok(first.mul_accumulated(&raw))
    }

    /// `sum_t c_t x_t` over `basis`, a prefix of every `x_t`'s basis (the limbs beyond it are ignored), for
    /// integer constants `c_t` given by their residues modulo the primes of `basis`: one pass per limb,
    /// Shoup products accumulated lazily and reduced once per coefficient. This is the scalar part of a
    /// polynomial evaluation (a leaf `sum_i c_i x^i`), without dropping the operands first.
    ///
    /// Errors: [`Error::LengthMismatch`] for no terms or a residue list not of `basis`'s length;
    /// [`Error::BasisMismatch`] unless `basis` is a prefix of each operand's basis.
    pub fn linear_combination(basis: &Arc<RnsBasis>, terms: &[(&Self, &[u64])]) -> Result<Self> {
        if terms.is_empty() {
            return Err(Error::LengthMismatch {
                what: "linear combination (number of terms)",
                expected: 1,
                got: 0,
            });
        }
        let limbs = basis.len();
        for (x, c) in terms {
            x.basis
                .prefix(limbs.min(x.limb_count()))?
                .check_same(basis, "linear combination")?;
            if c.len() != limbs {
                return Err(Error::LengthMismatch {
                    what: "linear combination constants (one residue per limb)",
                    expected: limbs,
                    got: c.len(),
                });
            }
        }
        let n = basis.degree();
        let mut data = parallel::zeroed(limbs * n);
        data.par_chunks_mut(n)
            .zip(basis.moduli().par_iter())
            .enumerate()
            .for_each(|(i, (out, m))| {
                let rows: Vec<&[u64]> = terms
                    .iter()
                    .map(|(x, _)| &x.data[i * n..(i + 1) * n])
                    .collect();
                let weights: Vec<_> = terms.iter().map(|(_, c)| m.shoup(m.reduce(c[i]))).collect();
                sum_of_products(m, &rows, Weights::PerRow(&weights), out);
            });
        Ok(Self::from_data_unchecked(basis, data))
    }

    /// `self * b + c * d` (pointwise in NTT form), in one pass: the middle term of a tensor product.
    pub fn mul_pair_sum(&self, b: &Self, c: &Self, d: &Self) -> Result<Self> {
        for x in [b, c, d] {
            self.check_same(x, "sum of two products")?;
        }
        Ok(self.mul_accumulated(&[(&self.data, &b.data), (&c.data, &d.data)]))
    }

    /// `self += a * b` (pointwise in NTT form).
    pub fn mul_add_assign(&mut self, a: &Self, b: &Self) -> Result<()> {
        self.check_same(a, "multiply-accumulate")?;
        self.check_same(b, "multiply-accumulate")?;
        let n = self.degree();
        let moduli = self.basis.moduli();
        parallel::for_each_chunk(&mut self.data, n, &|i, acc| {
            let r = i * n..(i + 1) * n;
            map_in_place(
                &moduli[i],
                acc,
                [&a.data[r.clone()], &b.data[r]],
                &ModMulAdd,
            )
        });
        Ok(())
    }

    /// The automorphism `a(X) -> a(X^k)` in NTT form: a permutation of the evaluation slots. Slot `j`
    /// holds `a(psi^e_j)`; the result at slot `j` is `a(psi^(e_j k))`, read from the slot whose exponent is
    /// `e_j k mod 2N`.
    ///
    /// Errors: [`Error::GaloisDegreeMismatch`] if `k` belongs to another ring degree.
    pub fn automorphism(&self, k: GaloisElement) -> Result<Self> {
        k.check_degree(self.degree(), "automorphism")?;
        let perm = ntt_automorphism_permutation(&self.basis, k)?;
        let n = self.degree();
        let mut out = Self::zero(&self.basis);
        parallel::for_each_chunk(&mut out.data, n, &|i, dst| {
            let src = &self.data[i * n..(i + 1) * n];
            for (d, &s) in dst.iter_mut().zip(&perm) {
                *d = src[s];
            }
        });
        Ok(out)
    }
}

/// The slot permutation of `X -> X^k` in NTT form: `out[j] = in[perm[j]]`. Depends only on `N` and `k`
/// (all plans of a basis use the same slot order), so schemes precompute it once per Galois element.
///
/// Errors: [`Error::GaloisDegreeMismatch`] if `k` belongs to another ring degree.
pub fn ntt_automorphism_permutation(basis: &RnsBasis, k: GaloisElement) -> Result<Vec<usize>> {
    k.check_degree(basis.degree(), "automorphism permutation")?;
    let k = k.value();
    let n = basis.degree();
    let log_n = n.trailing_zeros();
    let mask = 2 * n - 1;
    Ok((0..n)
        .map(|j| {
            let e = ((2 * rnsfhe_math::ntt::bit_reverse(j, log_n) + 1) * k) & mask;
            rnsfhe_math::ntt::bit_reverse((e - 1) / 2, log_n)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rnsfhe_math::ntt::negacyclic_schoolbook;
    use rnsfhe_math::primes::ntt_primes_of_bits;

    fn basis(n: usize, limbs: usize) -> Arc<RnsBasis> {
        RnsBasis::new(
            n,
            &ntt_primes_of_bits(50, 2 * n as u64, limbs, &[]).unwrap(),
        )
        .unwrap()
    }

    fn random(b: &Arc<RnsBasis>, rng: &mut impl Rng) -> Poly<Coeff> {
        let coeffs: Vec<i64> = (0..b.degree())
            .map(|_| rng.gen_range(-1000..1000))
            .collect();
        Poly::from_i64(b, &coeffs).unwrap()
    }

    /// `X^k * x` against the product with the monomial `X^(k mod N)` (negated for `N <= k mod 2N < 2N`)
    /// by NTT multiplication, for shifts on both sides of `N` and beyond `2N`.
    #[test]
    fn monomial_products_match_ntt_multiplication() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(9);
        let n = 64;
        let b = basis(n, 2);
        let x = random(&b, &mut rng);
        for k in [0, 1, 5, n - 1, n, n + 3, 2 * n - 1, 2 * n + 7] {
            let mut monomial = vec![0i64; n];
            let r = k % (2 * n);
            monomial[r % n] = if r >= n { -1 } else { 1 };
            let want = x
                .clone()
                .into_ntt()
                .mul(&Poly::from_i64(&b, &monomial).unwrap().into_ntt())
                .unwrap()
                .into_coeff();
            assert_eq!(x.mul_monomial(k), want, "X^{k}");
            let mut minus = want.clone();
            minus.sub_assign(&x).unwrap();
            assert_eq!(x.mul_monomial_minus_one(k), minus, "(X^{k} - 1)");
        }
    }

    #[test]
    fn linear_combination_over_a_prefix() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(8);
        let b = basis(64, 4);
        let low = b.prefix(2).unwrap();
        let x = random(&b, &mut rng).into_ntt();
        let y = random(&b, &mut rng).into_ntt();
        let z = random(&low, &mut rng).into_ntt();
        let (cx, cy, cz) = ([3u64, 5], [u64::MAX / 3, 7], [1u64, 1 << 40]);
        let got =
            Poly::linear_combination(&low, &[(&x, &cx[..]), (&y, &cy[..]), (&z, &cz[..])]).unwrap();
        let mut want = Poly::zero(&low);
        for (p, c) in [(&x, &cx), (&y, &cy), (&z, &cz)] {
            let mut t = p.drop_to(2).unwrap();
            t.rebase(&low).unwrap();
            t.mul_scalars_assign(&c[..]).unwrap();
            want.add_assign(&t).unwrap();
        }
        assert_eq!(got, want);
        assert!(Poly::linear_combination(&b, &[(&z, &cz[..])]).is_err());
        assert!(Poly::linear_combination(&low, &[(&x, &[1u64][..])]).is_err());
        assert!(Poly::<Ntt>::linear_combination(&low, &[]).is_err());
    }

    /// `add` and `sub` against the scalar `Modulus` operations on a polynomial as large as a ciphertext
    /// part of `PaperTable1L15` (16 limbs of `N = 2^16`: written with streaming stores) and on a small
    /// one (cached stores), on 1 and 2 threads (the limbs written in parallel, `parallel::from_chunks`)
    /// and inside an active-wait region.
    #[test]
    fn sums_with_streaming_and_cached_stores_match_scalar() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(0x57);
        for (n, limbs) in [(1 << 16, 16), (64, 3)] {
            let b = basis(n, limbs);
            let want_stores = if n * limbs >= (8 << 20) / 8 {
                Stores::Streaming
            } else {
                Stores::Cached
            };
            assert_eq!(Stores::for_output_words(n * limbs), want_stores);
            let draw = |rng: &mut rand_chacha::ChaCha20Rng| {
                let mut data = vec![0; n * limbs];
                for (limb, m) in data.chunks_exact_mut(n).zip(b.moduli()) {
                    rnsfhe_math::sampling::fill_uniform_mod(rng, m, limb);
                }
                Poly::<Ntt>::from_data(&b, data).unwrap()
            };
            let (x, y) = (draw(&mut rng), draw(&mut rng));
            for threads in [1, 2] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let (sum, diff, sum_active) = pool.install(|| {
                    (
                        x.add(&y).unwrap(),
                        x.sub(&y).unwrap(),
                        parallel::active_wait(|| x.add(&y).unwrap()),
                    )
                });
                assert_eq!(sum, sum_active);
                for (i, m) in b.moduli().iter().enumerate() {
                    let (xa, ya) = (x.limb(i).unwrap(), y.limb(i).unwrap());
                    let (s, d) = (sum.limb(i).unwrap(), diff.limb(i).unwrap());
                    for j in 0..n {
                        assert_eq!(s[j], m.add(xa[j], ya[j]), "{threads} threads limb {i} {j}");
                        assert_eq!(d[j], m.sub(xa[j], ya[j]), "{threads} threads limb {i} {j}");
                    }
                }
            }
        }
    }

    #[test]
    fn ring_operations_match_schoolbook() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(7);
        let b = basis(64, 3);
        let (x, y) = (random(&b, &mut rng), random(&b, &mut rng));
        let prod = x
            .clone()
            .into_ntt()
            .mul(&y.clone().into_ntt())
            .unwrap()
            .into_coeff();
        let sum = x.add(&y).unwrap();
        let diff = x.sub(&y).unwrap();
        for (i, m) in b.moduli().iter().enumerate() {
            let (xa, ya) = (x.limb(i).unwrap(), y.limb(i).unwrap());
            assert_eq!(
                prod.limb(i).unwrap(),
                negacyclic_schoolbook(m, xa, ya).unwrap()
            );
            for j in 0..64 {
                assert_eq!(sum.limb(i).unwrap()[j], m.add(xa[j], ya[j]));
                assert_eq!(diff.limb(i).unwrap()[j], m.sub(xa[j], ya[j]));
            }
        }
        let mut acc = Poly::<Ntt>::zero(&b);
        acc.mul_add_assign(&x.clone().into_ntt(), &y.clone().into_ntt())
            .unwrap();
        assert_eq!(acc.into_coeff(), prod);
        let mut neg = x.clone();
        neg.neg_assign();
        assert!(neg.add(&x).unwrap().data().iter().all(|&c| c == 0));
        let mut tripled = x.clone();
        tripled.mul_i64_assign(-3);
        let mut t2 = x.clone();
        t2.mul_scalars_assign(
            &b.moduli()
                .iter()
                .map(|m| m.reduce_i64(-3))
                .collect::<Vec<_>>(),
        )
        .unwrap();
        assert_eq!(tripled, t2);
    }

    /// The split paths (copy, sum of products and scalar addition in parts of limbs, taken on two
    /// threads above [`PARALLEL_COPY_MIN_WORDS`]) give what one thread gives, over 3 limbs of `2^16`
    /// (an odd count, each limb split in two parts) and with a scalar list of the wrong length refused.
    #[test]
    fn split_passes_match_one_thread() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(11);
        let b = basis(1 << 16, 3);
        let x = random(&b, &mut rng).into_ntt();
        let y = random(&b, &mut rng).into_ntt();
        let scalars: Vec<u64> = b.moduli().iter().map(|m| m.value() - 1 - 7).collect();
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let copy = x.clone();
                let sum = Poly::sum_of_products(&[(&x, &y), (&y, &y)]).unwrap();
                let mut shifted = x.clone();
                shifted.add_scalars_assign(&scalars).unwrap();
                (copy, sum, shifted)
            })
        };
        let (one, two) = (run(1), run(2));
        assert_eq!(one, two);
        assert_eq!(one.0, x);
        let mut want = x.clone().into_coeff();
        want.limbs_mut()
            .zip(scalars.par_iter())
            .for_each(|((a, m), &s)| {
                // In coefficient form the constant only touches the constant coefficient.
                a[0] = m.add(a[0], s);
            });
        assert_eq!(one.2.into_coeff(), want);
        let mut z = x.clone();
        assert!(matches!(
            z.add_scalars_assign(&scalars[..2]),
            Err(Error::LengthMismatch { .. })
        ));
    }

    /// `mul_by_ntt` against the transform-multiply-transform sequence, on uniform residues with the edge
    /// values 0 and q - 1, for primes on each engine path (IFMA below 2^50, 64-bit up to 2^62), on the
    /// parallel and the one-thread path.
    #[test]
    fn mul_by_ntt_matches_separate_transforms() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(9);
        let n = 1024;
        for bits in [40u32, 50, 55, 61] {
            let primes = ntt_primes_of_bits(bits, 2 * n as u64, 3, &[]).unwrap();
            let b = RnsBasis::new(n, &primes).unwrap();
            let uniform = |rng: &mut rand_chacha::ChaCha20Rng| {
                let mut data = Vec::with_capacity(3 * n);
                for m in b.moduli() {
                    let q = m.value();
                    data.extend((0..n).map(|_| rng.gen_range(0..q)));
                    let limb = data.len() - n;
                    data[limb] = q - 1;
                    data[limb + 1] = 0;
                }
                Poly::<Coeff>::from_data(&b, data).unwrap()
            };
            let (x, y) = (uniform(&mut rng), uniform(&mut rng).into_ntt());
            let want = x.clone().into_ntt().mul(&y).unwrap().into_coeff();
            assert_eq!(x.mul_by_ntt(&y).unwrap(), want, "{bits}-bit primes");
            let one_thread = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .unwrap();
            assert_eq!(one_thread.install(|| x.mul_by_ntt(&y)).unwrap(), want);
        }
        let (b, other) = (basis(16, 2), basis(16, 3));
        assert!(matches!(
            Poly::<Coeff>::zero(&b).mul_by_ntt(&Poly::zero(&other)),
            Err(Error::BasisMismatch { .. })
        ));
    }

    #[test]
    fn automorphisms_agree_in_both_forms() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(8);
        for n in [16usize, 1024] {
            let b = basis(n, 2);
            let x = random(&b, &mut rng);
            let element = |k| GaloisElement::new(k, n).unwrap();
            for k in [1usize, 3, 5, 25, 2 * n - 1] {
                let k = element(k);
                let direct = x.automorphism(k).unwrap();
                let via_ntt = x.clone().into_ntt().automorphism(k).unwrap().into_coeff();
                assert_eq!(direct, via_ntt, "N = {n}, k = {k}");
            }
            // X -> X^5 applied to X gives X^5; X^(2N-1) = -X^(N-1).
            let mut e1 = vec![0i64; n];
            e1[1] = 1;
            let xpoly = Poly::from_i64(&b, &e1).unwrap();
            let mut expect = vec![0i64; n];
            expect[5] = 1;
            assert_eq!(
                xpoly.automorphism(element(5)).unwrap(),
                Poly::from_i64(&b, &expect).unwrap()
            );
            let mut expect = vec![0i64; n];
            expect[n - 1] = -1;
            assert_eq!(
                xpoly.automorphism(element(2 * n - 1)).unwrap(),
                Poly::from_i64(&b, &expect).unwrap()
            );
            // An element of another ring degree is refused in both forms.
            let other = GaloisElement::new(5, 2 * n).unwrap();
            assert!(matches!(
                x.automorphism(other),
                Err(Error::GaloisDegreeMismatch { element: 5, .. })
            ));
            assert!(matches!(
                x.clone().into_ntt().automorphism(other),
                Err(Error::GaloisDegreeMismatch { .. })
            ));
        }
    }

    /// The parallel paths of large buffers (from [`PARALLEL_CHECK_MIN_WORDS`] words) on 1 and 2 threads:
    /// the first out-of-range residue in limb order is reported as by the serial loop, and `zeroize`
    /// wipes every limb.
    #[test]
    fn large_buffers_check_and_wipe_on_any_pool() {
        let b = basis(1 << 13, 12);
        let words = b.len() * b.degree();
        assert!(words >= PARALLEL_CHECK_MIN_WORDS);
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let mut bad = vec![1u64; words];
                bad[3 * b.degree() + 7] = u64::MAX;
                bad[9 * b.degree() + 1] = b.moduli()[9].value();
                assert!(matches!(
                    Poly::<Coeff>::from_data(&b, bad),
                    Err(Error::ResidueOutOfRange {
                        limb: 3,
                        index: 7,
                        ..
                    })
                ));
                let mut p = Poly::<Coeff>::from_data(&b, vec![1u64; words]).unwrap();
                p.zeroize();
                assert!(p.data().iter().all(|&x| x == 0), "{threads} threads");
            });
        }
    }

    #[test]
    fn validation_and_mismatches() {
        let b = basis(16, 2);
        let other = basis(32, 2);
        assert!(matches!(
            Poly::<Coeff>::from_data(&b, vec![0; 31]),
            Err(Error::LengthMismatch {
                expected: 32,
                got: 31,
                ..
            })
        ));
        let mut bad = vec![0u64; 32];
        bad[20] = b.moduli()[1].value();
        assert!(matches!(
            Poly::<Coeff>::from_data(&b, bad),
            Err(Error::ResidueOutOfRange {
                limb: 1,
                index: 4,
                ..
            })
        ));
        let x = Poly::<Coeff>::zero(&b);
        assert!(matches!(
            x.add(&Poly::zero(&other)),
            Err(Error::BasisMismatch { .. })
        ));
        assert!(matches!(x.drop_to(3), Err(Error::InvalidLimbCount { .. })));
        let d = x.drop_to(1).unwrap();
        assert_eq!(d.limb_count(), 1);
        assert!(matches!(
            x.add(&d),
            Err(Error::BasisMismatch {
                left_limbs: 2,
                right_limbs: 1,
                ..
            })
        ));
        assert!(Poly::from_i64(&b, &[1, 2]).is_err());
    }
}
