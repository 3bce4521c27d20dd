//! Homomorphic operations on BFV ciphertexts: addition, subtraction, negation, plaintext and scalar
//! operations, multiplication in the HPS form (Section 4.5) with relinearization, and Galois
//! automorphisms (row rotations, the column swap) with the same key switching: CRT (HPS Sections 3.3 and
//! 4.5) or hybrid ([`crate::KeySwitchTechnique`]).
//!
//! # Multiplication (HPS Section 4.5)
//!
//! For `ct^1 = (c_0^1, c_1^1)`, `ct^2 = (c_0^2, c_1^2)` over `Q` in coefficient form:
//!
//! 1. **Basis extension** `Q -> P` of the four polynomials (Section 2.2, `ExactFloat`: the centered
//!    representatives in `[-Q/2, Q/2)`), giving them over `Q ∪ P`.
//! 2. **Tensor product in `R_QP`** in NTT form: `c'_0 = c_0^1 c_0^2`, `c'_1 = c_0^1 c_1^2 + c_1^1 c_0^2`,
//!    `c'_2 = c_1^1 c_1^2`. Since `P >= 2 t N Q` there is no reduction modulo `QP`: the `c'_l` are the
//!    integer products, in `[-QP/2t, QP/2t)`.
//! 3. **Complex scaling** (Section 2.4): `[round(t/Q c'_l)]_P`, then basis extension `P -> Q` (exact: the
//!    value is far from `P/2`), giving `c*_l = [round(t/Q c'_l)]_Q`.
//! 4. **Relinearization** (Sections 3.3, 4.5): decompose `c*_2` into its residues `[c*_2]_{q_i}` (each
//!    optionally into signed base-`w` digits `d_{i,j}`), lift each to all of `Q`, and output
//!    `(c*_0 + sum d_{i,j} beta_{i,j}, c*_1 + sum d_{i,j} alpha_{i,j})`: the gadget product of core
//!    ([`rnsfhe_core::GadgetCiphertext::product`]), which lifts the digits one limb of `Q` at a time.
//!    With hybrid key switching, the hybrid gadget product of core instead
//!    ([`rnsfhe_core::RlweContext::gadget_product_sum`]: ModUp of `c*_2`'s digit groups to `Q ∪ P_ks`,
//!    one multiply-accumulate with the key's `dnum` rows, ModDown to `Q`).
//!
//! Steps 1-3 are [`Evaluator::multiply_no_relin`], step 4 is [`Evaluator::relinearize`], both are
//! [`Evaluator::multiply`].
//!
//! # Galois automorphisms
//!
//! [`Evaluator::apply_galois`] maps `(c_0, c_1)` to `(c_0(X^g), c_1(X^g))`, which decrypts under
//! `s(X^g)`, and switches the key back to `s` with the routine of step 4 applied to `c_1(X^g)` and the
//! [`GaloisKeys`] entry of `g` (a [`KeySwitchKey`] from `s(X^g)` to `s`). [`Evaluator::rotate_rows`] and
//! [`Evaluator::rotate_columns`] pick `g` for the batching matrix ([`crate::galois`]).

use std::sync::Arc;

use rayon::prelude::*;
use rnsfhe_core::RlweCiphertext;
use rnsfhe_math::ntt::NttPlan;
use rnsfhe_math::simd;
use rnsfhe_ring::{parallel, Coeff, GaloisElement, Poly, RnsBasis, RnsSignedDigits};

use crate::encoder::Plaintext;
use crate::encryption::{scaled_message, Ciphertext};
use crate::error::{BfvError, BfvResult};
use crate::keys::{GaloisKeys, KeySwitchKey, RelinKey};
use crate::params::{BfvContext, KeySwitchTechnique};

/// Evaluates homomorphic operations. Holds no mutable state: `Send + Sync`, shareable by threads.
#[derive(Clone, Debug)]
pub struct Evaluator {
    ctx: Arc<BfvContext>,
}

impl Evaluator {
    /// An evaluator for `ctx`.
    pub fn new(ctx: &Arc<BfvContext>) -> Self {
        Self {
            ctx: Arc::clone(ctx),
        }
    }

    /// The context.
    pub fn context(&self) -> &Arc<BfvContext> {
        &self.ctx
    }

    fn check(&self, ct: &Ciphertext, operation: &'static str) -> BfvResult<()> {
        self.ctx.check_fingerprint(ct.fingerprint, "ciphertext")?;
        if ct.rlwe.parts.len() < 2 {
            return Err(BfvError::WrongPartCount {
                operation,
                expected: 2,
                got: ct.rlwe.parts.len(),
            });
        }
        Ok(())
    }

    fn check_parts(&self, ct: &Ciphertext, parts: usize, operation: &'static str) -> BfvResult<()> {
        self.check(ct, operation)?;
        if ct.rlwe.parts.len() != parts {
            return Err(BfvError::WrongPartCount {
                operation,
                expected: parts,
                got: ct.rlwe.parts.len(),
            });
        }
        Ok(())
    }

    fn wrap(&self, parts: Vec<Poly<Coeff>>) -> Ciphertext {
        Ciphertext {
            fingerprint: self.ctx.fingerprint(),
            rlwe: RlweCiphertext { parts },
        }
    }

    fn combine(
        &self,
        a: &Ciphertext,
        b: &Ciphertext,
        operation: &'static str,
        subtract: bool,
    ) -> BfvResult<Ciphertext> {
        self.check(a, operation)?;
        self.check(b, operation)?;
        let len = a.rlwe.parts.len().max(b.rlwe.parts.len());
        let mut parts = Vec::with_capacity(len);
        for i in 0..len {
            let p = match (a.rlwe.parts.get(i), b.rlwe.parts.get(i)) {
                (Some(x), Some(y)) if subtract => x.sub(y)?,
                (Some(x), Some(y)) => x.add(y)?,
                (Some(x), None) => x.clone(),
                (None, Some(y)) if subtract => {
                    let mut y = y.clone();
                    y.neg_assign();
                    y
                }
                (None, Some(y)) => y.clone(),
                (None, None) => Poly::zero(self.ctx.q_basis()),
            };
            parts.push(p);
        }
        Ok(self.wrap(parts))
    }

    /// Homomorphic addition `[ct^1 + ct^2]_Q` (HPS Section 4.1), part-wise (the shorter operand is padded
    /// with zeros).
    ///
    /// Errors: [`BfvError::ContextMismatch`] or [`BfvError::WrongPartCount`] for malformed operands.
    pub fn add(&self, a: &Ciphertext, b: &Ciphertext) -> BfvResult<Ciphertext> {
        self.combine(a, b, "ciphertext addition", false)
    }

    /// Homomorphic subtraction `[ct^1 - ct^2]_Q`, part-wise.
    ///
    /// Errors: as [`Evaluator::add`].
    pub fn sub(&self, a: &Ciphertext, b: &Ciphertext) -> BfvResult<Ciphertext> {
        self.combine(a, b, "ciphertext subtraction", true)
    }

    /// Homomorphic negation `[-ct]_Q`.
    ///
    /// Errors: as [`Evaluator::add`].
    pub fn negate(&self, a: &Ciphertext) -> BfvResult<Ciphertext> {
        self.check(a, "negation")?;
        let mut out = a.clone();
        out.rlwe.parts.iter_mut().for_each(Poly::neg_assign);
        Ok(out)
    }

    /// `ct + m`: adds `Delta m` to `c_0` (noise unchanged).
    ///
    /// Errors: as [`Evaluator::add`], or a plaintext of another context.
    pub fn add_plain(&self, a: &Ciphertext, pt: &Plaintext) -> BfvResult<Ciphertext> {
        self.check(a, "plaintext addition")?;
        let m = scaled_message(&self.ctx, pt)?;
        let mut out = a.clone();
        out.rlwe.parts[0].add_assign(&m)?;
        Ok(out)
    }

    /// `ct - m`: subtracts `Delta m` from `c_0`.
    ///
    /// Errors: as [`Evaluator::add_plain`].
    pub fn sub_plain(&self, a: &Ciphertext, pt: &Plaintext) -> BfvResult<Ciphertext> {
        self.check(a, "plaintext subtraction")?;
        let m = scaled_message(&self.ctx, pt)?;
        let mut out = a.clone();
        out.rlwe.parts[0].sub_assign(&m)?;
        Ok(out)
    }

    /// `ct * m` for a plaintext `m`: every part times `m`, with the coefficients of `m` taken as centered
    /// representatives mod `t` (the noise grows by about `||m||_1 <= N t / 2`).
    ///
    /// Errors: as [`Evaluator::add_plain`].
    pub fn multiply_plain(&self, a: &Ciphertext, pt: &Plaintext) -> BfvResult<Ciphertext> {
        self.check(a, "plaintext multiplication")?;
        self.ctx.check_fingerprint(pt.fingerprint, "plaintext")?;
        let t = self.ctx.t();
        let centered: Vec<i64> = pt.coeffs.iter().map(|&c| t.center(c)).collect();
        let m = Poly::from_i64(self.ctx.q_basis(), &centered)?.into_ntt();
        let parts = a
            .rlwe
            .parts
            .par_iter()
            .map(|c| Ok(c.clone().into_ntt().mul(&m)?.into_coeff()))
            .collect::<BfvResult<Vec<_>>>()?;
        Ok(self.wrap(parts))
    }

    /// `ct * c` for an integer `c`, taken modulo `t` as its centered representative.
    ///
    /// Errors: as [`Evaluator::add`].
    pub fn multiply_scalar(&self, a: &Ciphertext, c: i64) -> BfvResult<Ciphertext> {
        self.check(a, "scalar multiplication")?;
        let t = self.ctx.t();
        let c = t.center(t.reduce_i64(c));
        let mut out = a.clone();
        out.rlwe.parts.iter_mut().for_each(|p| p.mul_i64_assign(c));
        Ok(out)
    }

    /// `[round(t/Q x)]_Q` for `x` over `Q ∪ P` given by its two parts in coefficient form: complex
    /// scaling to `P` (HPS Section 2.4), basis extension `P -> Q` (Section 2.2).
    fn scale_down(&self, xq: Vec<u64>, xp: Vec<u64>) -> BfvResult<Poly<Coeff>> {
        let xq = Poly::from_data(self.ctx.q_basis(), xq)?;
        let xp = Poly::from_data(self.ctx.p_basis(), xp)?;
        let y = self.ctx.complex_scaler().scale_parts(&xq, &xp)?;
        Ok(self.ctx.p_to_q().convert(&y)?)
    }

    /// Steps 1-3 of HPS multiplication (Section 4.5): basis extension, tensor product in `R_QP` and
    /// scaling back to `Q`; the result has three parts `(c*_0, c*_1, c*_2)` decrypting under
    /// `(1, s, s^2)`.
    ///
    /// The tensor product runs limb by limb over `Q ∪ P` (`tensor_limbs`): each limb's operands are
    /// transformed, multiplied and transformed back while they sit in cache, so the extended operands
    /// never exist in NTT form as whole polynomials (one pass over memory for the inputs and one for
    /// the outputs, instead of a pass per transform and per product).
    ///
    /// Errors: [`BfvError::WrongPartCount`] unless both operands have 2 parts; context mismatches.
    pub fn multiply_no_relin(&self, a: &Ciphertext, b: &Ciphertext) -> BfvResult<Ciphertext> {
        rnsfhe_core::long_operation(self.words(), || self.multiply_no_relin_waiting(a, b))
    }

    /// The work of [`Evaluator::multiply_no_relin`], which runs it as one
    /// [`rnsfhe_core::long_operation`].
    fn multiply_no_relin_waiting(&self, a: &Ciphertext, b: &Ciphertext) -> BfvResult<Ciphertext> {
        self.check_parts(a, 2, "multiplication")?;
        self.check_parts(b, 2, "multiplication")?;
        let square = std::ptr::eq(a, b) || a == b;
        let inputs: Vec<&Poly<Coeff>> = if square {
            a.rlwe.parts.iter().collect()
        } else {
            a.rlwe.parts.iter().chain(&b.rlwe.parts).collect()
        };
        // Step 1: the operands over P (exact extension of the centered representatives, Section 2.2), and
        // step 2: the tensor product over Q and over P. The product over Q needs no extension, so it runs
        // beside the extension and the product over P: the threads share one pool of limb tasks instead
        // of waiting for each other at the end of every step (at depth 10, 4 + 7 + 8 short sections;
        // two-thread multiplication 1.73x-1.87x -> 1.92x-1.97x there).
        let (dq, dp) = parallel::join(
            || tensor_limbs(self.ctx.q_basis(), &inputs),
            || -> BfvResult<_> {
                let over_p = parallel::map(&inputs, &|c| self.ctx.q_to_p().convert(c))
                    .into_iter()
                    .collect::<Result<Vec<_>, _>>()?;
                let over_p: Vec<&Poly<Coeff>> = over_p.iter().collect();
                tensor_limbs(self.ctx.p_basis(), &over_p)
            },
        );
        // Step 3: scaling by t/Q back to Q, part by part.
        let parts = dq?
            .into_iter()
            .zip(dp?)
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|(xq, xp)| self.scale_down(xq, xp))
            .collect::<BfvResult<Vec<_>>>()?;
        Ok(self.wrap(parts))
    }

    /// Relinearization of a 3-part ciphertext: `(c_0, c_1) + KeySwitch(c_2)` with the key from `s^2`
    /// to `s`. With CRT key switching (HPS Sections 3.3 and 4.5), with the residues of `c_2` (or their
    /// signed base-`w` digits) `d_{i,j}` lifted to `Q`, that is
    /// `(c_0 + sum d_{i,j} beta_{i,j}, c_1 + sum d_{i,j} alpha_{i,j})`; noise grows by
    /// `sum d_{i,j} e_{i,j}`, about `sqrt(k N) (q_i or w) sigma` (HPS Section 5.1, Eq. 13). With hybrid
    /// key switching, the gadget product of `rnsfhe-core` (ModUp of `c_2`'s digit groups to `Q ∪ P_ks`,
    /// one multiply-accumulate, ModDown; see [`crate::params`]).
    ///
    /// Errors: [`BfvError::WrongPartCount`] unless `ct` has 3 parts; context mismatches.
    pub fn relinearize(&self, ct: &Ciphertext, rk: &RelinKey) -> BfvResult<Ciphertext> {
        self.check_parts(ct, 3, "relinearization")?;
        self.ctx
            .check_fingerprint(rk.fingerprint, "relinearization key")?;
        let (mut c0, mut c1) =
            self.key_switch(&ct.rlwe.parts[2], &rk.key, self.ctx.relin_digits())?;
        c0.add_assign(&ct.rlwe.parts[0])?;
        c1.add_assign(&ct.rlwe.parts[1])?;
        Ok(self.wrap(vec![c0, c1]))
    }

    /// The automorphism `X -> X^g` of the encrypted plaintext for any Galois element `g` (odd, below
    /// `2N`; [`GaloisElement::new`] or the context's [`rnsfhe_ring::GaloisGroup`]): applies it to both
    /// parts (which then decrypt under `s(X^g)`) and key-switches `c_1(X^g)` back to `s` with the Galois
    /// key of `g` (the key switching of [`Evaluator::relinearize`]; with CRT key switching, HPS Sections 3.3
    /// and 4.5, `(c_0(X^g) + sum d_{i,j} beta_{i,j}, sum d_{i,j} alpha_{i,j})` with `d_{i,j}` the
    /// residues/digits of `c_1(X^g)`). A coefficient-encoded plaintext `m(X)` becomes `m(X^g)`; in batch encoding `g = 3^r`
    /// rotates the rows and `2N - 1` swaps them ([`crate::galois`]). The noise `v(X^g)` keeps its norm and
    /// gains the key-switching term `sum d_{i,j} e_{i,j}` (the relinearization term of HPS Eq. (13)).
    /// `g = 1` returns a copy.
    ///
    /// Errors: a ring error ([`BfvError::Ring`]) if `g` belongs to another ring degree;
    /// [`BfvError::MissingGaloisKey`] if `keys` has no key for `g`; [`BfvError::WrongPartCount`] unless
    /// `ct` has 2 parts; context mismatches.
    pub fn apply_galois(
        &self,
        ct: &Ciphertext,
        element: GaloisElement,
        keys: &GaloisKeys,
    ) -> BfvResult<Ciphertext> {
        self.galois("Galois automorphism", ct, element, None, keys)
    }

    /// Rotates both rows of the `2 x N/2` batching matrix cyclically **left** by `step` (right for a
    /// negative `step`; `step` is taken modulo `N/2`): [`Evaluator::apply_galois`] with the element
    /// `3^step mod 2N` (SEAL's convention, [`crate::BfvContext::galois_group`]). A multiple of
    /// `N/2` returns a copy without needing a key. Without batching (`t` not a prime `= 1 mod 2N`) this is
    /// still the automorphism `X -> X^(3^step)` of the plaintext polynomial.
    ///
    /// Errors: [`BfvError::MissingGaloisKey`] naming `step` if `keys` lacks its element (generate it with
    /// [`crate::KeyGenerator::galois_keys`]); as [`Evaluator::apply_galois`] otherwise.
    pub fn rotate_rows(
        &self,
        ct: &Ciphertext,
        step: i64,
        keys: &GaloisKeys,
    ) -> BfvResult<Ciphertext> {
        let element = self.ctx.galois_group().element_of_step(step);
        self.galois("row rotation", ct, element, Some(step), keys)
    }

    /// Swaps the two rows of the batching matrix: [`Evaluator::apply_galois`] with the element `2N - 1`
    /// (`X -> X^-1`).
    ///
    /// Errors: [`BfvError::MissingGaloisKey`] if `keys` was generated without the column swap; as
    /// [`Evaluator::apply_galois`] otherwise.
    pub fn rotate_columns(&self, ct: &Ciphertext, keys: &GaloisKeys) -> BfvResult<Ciphertext> {
        let element = self.ctx.galois_group().conjugation();
        self.galois("column swap", ct, element, None, keys)
    }

    fn galois(
        &self,
        operation: &'static str,
        ct: &Ciphertext,
        element: GaloisElement,
        step: Option<i64>,
        keys: &GaloisKeys,
    ) -> BfvResult<Ciphertext> {
        self.check_parts(ct, 2, operation)?;
        self.ctx
            .check_fingerprint(keys.fingerprint, "Galois keys")?;
        element.check_degree(self.ctx.n(), operation)?;
        if element.is_identity() {
            return Ok(ct.clone());
        }
        let key = keys.require(operation, element, step)?;
        let (c0, switched) = rayon::join(
            || ct.rlwe.parts[0].automorphism(element),
            || {
                let c1 = ct.rlwe.parts[1].automorphism(element)?;
                self.key_switch(&c1, key, self.ctx.galois_digits())
            },
        );
        let (mut k0, k1) = switched?;
        k0.add_assign(&c0?)?;
        Ok(self.wrap(vec![k0, k1]))
    }

    /// Homomorphic multiplication (HPS Section 4.5): [`Evaluator::multiply_no_relin`] followed by
    /// [`Evaluator::relinearize`].
    ///
    /// Errors: as those two.
    pub fn multiply(&self, a: &Ciphertext, b: &Ciphertext, rk: &RelinKey) -> BfvResult<Ciphertext> {
        // Both steps in one region of active waiting (see `rnsfhe_core::long_operation`). Starting the
        // key switch of `c*_2` beside the scaling of `c*_0` and `c*_1` gained 2 % on two threads at depth
        // 20 and cost 9-11 % on one (`compare_builds.py`), so the steps stay in order.
        rnsfhe_core::long_operation(self.words(), || {
            let ct = self.multiply_no_relin(a, b)?;
            self.relinearize(&ct, rk)
        })
    }

    /// The key switch of `x` (coefficient form over `Q`) with `key`: the CRT gadget product for the
    /// decomposition `digits` (HPS Sections 3.3 and 4.5), or the hybrid gadget product of the RLWE
    /// context (ModUp, multiply-accumulate, ModDown).
    fn key_switch(
        &self,
        x: &Poly<Coeff>,
        key: &KeySwitchKey,
        digits: &RnsSignedDigits,
    ) -> BfvResult<(Poly<Coeff>, Poly<Coeff>)> {
        Ok(match self.ctx.key_switching() {
            KeySwitchTechnique::Crt => key.product(x, digits)?,
            KeySwitchTechnique::Hybrid { .. } => self.ctx.rlwe().gadget_product_sum(&[(x, key)])?,
        })
    }

    /// Words of a ciphertext part over `Q` (the size [`rnsfhe_core::long_operation`] decides by).
    fn words(&self) -> usize {
        self.ctx.q_basis().len() * self.ctx.q_basis().degree()
    }
}

/// The tensor product `(x0 y0, x0 y1 + x1 y0, x1 y1)` of `x = (x0, x1)` and `y = (y0, y1)` given in
/// coefficient form over `basis` as `[x0, x1, y0, y1]`, or of `x` with itself given as `[x0, x1]`; the
/// three results in coefficient form, as limb-major buffers over `basis`. Limb by limb
/// ([`tensor_limb`]), the limbs in parallel on a pool of several threads.
///
/// Errors: [`BfvError::WrongPartCount`] unless there are 2 or 4 inputs; ring errors for inputs over
/// another basis.
fn tensor_limbs(basis: &Arc<RnsBasis>, inputs: &[&Poly<Coeff>]) -> BfvResult<[Vec<u64>; 3]> {
    if inputs.len() != 2 && inputs.len() != 4 {
        return Err(BfvError::WrongPartCount {
            operation: "multiplication (extended operand parts)",
            expected: 4,
            got: inputs.len(),
        });
    }
    for x in inputs {
        basis.check_same(x.basis(), "tensor product (operand basis)")?;
    }
    let n = basis.degree();
    let operands = |i: usize| -> Vec<&[u64]> {
        inputs
            .iter()
            .map(|x| &x.data()[i * n..(i + 1) * n])
            .collect()
    };
    // One task per limb, the results copied once into the fresh outputs (no zero-filling pass: at
    // depth 20 it took 0.74 ms of a 8.4 ms two-thread tensor product); the scratch is the thread's own,
    // kept between calls, so the fine split allocates nothing.
    Ok(parallel::from_chunk_groups(
        basis.len() * n,
        n,
        &|i, [d0, d1, d2]| {
            with_tensor_scratch(TENSOR_SCRATCH_LIMBS * n, |scratch| {
                let [r0, r1, r2] = tensor_limb(&basis.plans()[i], &operands(i), scratch);
                [
                    simd::write_uninit(d0, r0.iter().copied()),
                    simd::write_uninit(d1, r1.iter().copied()),
                    simd::write_uninit(d2, r2.iter().copied()),
                ]
            })
        },
    ))
}

/// Scratch limbs of [`tensor_limb`]: the four operands and the middle product.
const TENSOR_SCRATCH_LIMBS: usize = 5;

thread_local! {
    /// The tensor product's scratch of this thread ([`with_tensor_scratch`]).
    static TENSOR_SCRATCH: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `f` on this thread's tensor scratch of at least `len` words (grown on first use, then kept: its
/// contents are intermediate ciphertext values, overwritten by every use). A fresh buffer if the
/// thread's scratch is already in use (a nested call).
fn with_tensor_scratch<R>(len: usize, f: impl FnOnce(&mut [u64]) -> R) -> R {
    TENSOR_SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut scratch) => {
            if scratch.len() < len {
                scratch.resize(len, 0);
            }
            f(&mut scratch[..len])
        }
        Err(_) => f(&mut vec![0u64; len]),
    })
}

/// One limb of the tensor product: `ops` are the limbs `[x0, x1, y0, y1]` (or `[x0, x1]` for a square)
/// in coefficient form; returns the limbs of `x0 y0`, `x0 y1 + x1 y0`, `x1 y1` in coefficient form,
/// inside `scratch` (`TENSOR_SCRATCH_LIMBS` limbs). Forward transforms, pointwise products with the
/// inverse transform's factor `N^-1` folded in, inverse transforms: all within the `5 N` words of
/// `scratch`, which stay in cache.
fn tensor_limb<'s>(plan: &NttPlan, ops: &[&[u64]], scratch: &'s mut [u64]) -> [&'s [u64]; 3] {
    let plan = plan.engine();
    let n = ops[0].len();
    let (xs, rest) = scratch.split_at_mut(2 * n);
    let (ys, d1) = rest.split_at_mut(2 * n);
    let (x0, x1) = xs.split_at_mut(n);
    let (y0, y1) = ys.split_at_mut(n);
    let d1 = &mut d1[..n];
    x0.copy_from_slice(ops[0]);
    x1.copy_from_slice(ops[1]);
    plan.fwd(x0);
    plan.fwd(x1);
    if let [_, _, b0, b1] = ops {
        y0.copy_from_slice(b0);
        y1.copy_from_slice(b1);
        plan.fwd(y0);
        plan.fwd(y1);
        d1.fill(0);
        plan.mul_accumulate(d1, x0, y1);
        plan.mul_accumulate(d1, x1, y0);
    } else {
        // Square: the middle term is 2 x0 x1; the copies give the outer products a right-hand side.
        y0.copy_from_slice(x0);
        y1.copy_from_slice(x1);
        d1.fill(0);
        plan.mul_accumulate(d1, x0, x1);
        plan.mul_accumulate(d1, x0, x1);
    }
    plan.normalize(d1);
    plan.mul_assign_normalize(x0, y0);
    plan.mul_assign_normalize(x1, y1);
    plan.inv(x0);
    plan.inv(d1);
    plan.inv(x1);
    [x0, d1, x1]
}
