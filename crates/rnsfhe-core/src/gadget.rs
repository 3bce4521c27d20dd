//! Gadget ciphertexts and the gadget product: the one key-switching stack of every scheme.
//!
//! A **gadget ciphertext** of a message `m` under a secret `s` is a vector of RLWE samples
//!
//! ```text
//! (b_i, a_i),   a_i <- U(R),   b_i = -a_i s + e_i + g_i m,   e_i <- chi_err,
//! ```
//!
//! one per entry `g_i` of a gadget vector `g`, stored in NTT form. For any input `x` with a decomposition
//! `d_i` (`sum_i d_i g_i = x`, every `d_i` small), the **gadget product** `sum_i d_i (b_i, a_i)` decrypts
//! under `s` to `x m + sum_i d_i e_i`. A key-switching key from `s'` to `s` is the gadget ciphertext of
//! `m = s'`: relinearization keys (`m = s^2`), Galois keys (`m = s(X^k)`), and in the LWE and PEGASUS
//! layers RGSW rows, LWE switching keys and repacking keys are all gadget ciphertexts (Lattigo's
//! `GadgetCiphertext`; fhe.rs's key-switching keys).
//!
//! The gadgets ([`Gadget`]) and the decompositions that go with them (in [`rnsfhe_ring::gadget`]):
//!
//! - **Hybrid RNS digits with special primes `P`** (Han-Ki Section 2.4; RNS-CKKS `KSGen` for one digit):
//!   `g_j = P (Q/Q_j)[(Q/Q_j)^-1]_{Q_j}` over `QP` for `dnum` groups `Q_j` of limbs
//!   ([`rnsfhe_ring::RnsGadget`]). The digits are raised to `Q_l ∪ P` (ModUp) before the product and the
//!   result is divided by `P` (ModDown): [`crate::RlweContext::key_switch`]. One group and a single
//!   special prime `q'` is the **single special modulus** gadget (GHS).
//! - **RNS/CRT digits without special primes** (HPS Sections 3.3 and 4.1): `g_i = (Q/q_i)[(Q/q_i)^-1]_{q_i}`
//!   over `Q`, the residues of `x` as digits ([`rnsfhe_ring::RnsSignedDigits`] with one digit per limb).
//! - **RNS digits refined by signed base-`2^w` digits** (HPS Section 3.3 with `w`): `g_{i,k} =
//!   (Q/q_i)[(Q/q_i)^-1]_{q_i} 2^(w k)` ([`rnsfhe_ring::RnsSignedDigits`] with several digits per limb).
//! - **Signed base-`2^w` digits of one modulus** (the RGSW and LWE gadget `g_k = 2^(w k)`): the same
//!   decomposition over a one-limb basis.
//!
//! The three digit gadgets share [`GadgetCiphertext::product`]; the hybrid gadget adds ModUp and
//! ModDown around the same multiply-accumulate (`multiply_accumulate`, described below).
//!
//! # The multiply-accumulate, limb by limb
//!
//! Lifting every digit to the whole target basis first materializes `D x k` limbs (`D` digits, `k`
//! target limbs): 51 MB for BFV at depth 20 (`N = 2^15`, `k = D = 14`), written once, transformed, and read
//! again far out of cache. Instead every target limb `t` is finished on its own: its `D` digit rows
//! (read from the ModUp output, possibly through a slot permutation for hoisted automorphisms, or lifted
//! from small signed digits and transformed right there), the two inner products with limb `t` of the
//! key rows, in blocks that stay in L2, and for coefficient-form outputs the two inverse NTTs. The
//! working set is `D` limbs, reused from limb to limb; limbs are independent and run in parallel when
//! the pool has several threads.

use rnsfhe_math::sampling::{Csprng, DiscreteGaussian, Seed, Substreams};
use rnsfhe_math::simd::sum_of_reduced_products;
use rnsfhe_ring::{parallel, Coeff, Ntt, Poly, RnsBasis, RnsSignedDigits};

use crate::context::RlweContext;
use crate::error::{Error, Result};
use crate::keys::SecretPoly;
use crate::samplers::{expand_uniform, sample_error_from};
use crate::scratch;

/// Calls on fewer words than this run on the calling thread even when the pool has several: handing the
/// limbs of a small ring to the pool costs a thread wake-up per task, more than the work (blind rotation at
/// `N = 2^12` over two limbs ran at half its speed on two threads). Larger calls (CKKS and BFV key switching
/// over many limbs) split by limb.
const PARALLEL_MIN_WORDS: usize = 1 << 15;

/// Whether work on `words` words goes to the pool (see [`PARALLEL_MIN_WORDS`]).
pub(crate) fn parallel(words: usize) -> bool {
    words >= PARALLEL_MIN_WORDS && rayon::current_num_threads() > 1
}

/// Runs `op`, an operation of several parallel sections on buffers of `words` words (a key switch, a
/// tensor product), as one region of active waiting ([`rnsfhe_ring::parallel::active_wait`]) when those
/// sections go to the pool ([`parallel`]). Between two sections an idle rayon worker sleeps after a few
/// dozen rounds without work, and on an otherwise idle virtual machine waking it costs a halt and resume
/// of its virtual CPU: measured at `N = 2^15` over 11 limbs (a relinearization with rescaling, a rotation),
/// the second worker slept 8 to 10 times per operation and the two-thread speed-up was 1.74x-1.77x;
/// with the operation in one region, 1.83x-1.89x (interleaved in one process). A nested call (inside a
/// region, e.g. the pipeline stages of PEGASUS) runs `op` directly; a small one (blind rotation at
/// `N = 2^12`, whose sections stay on the calling thread) too. Scheme crates wrap their composite
/// operations (key generation, multiplication with relinearization) in it as well.
pub fn long_operation<R: Send>(words: usize, op: impl FnOnce() -> R + Send) -> R {
    if parallel(words) {
        rnsfhe_ring::parallel::active_wait(op)
    } else {
        op()
    }
}

/// Coefficients per block of the inner products: the block of the `D` digit rows (`D x 8 KiB`) stays in
/// L2 between the two sums that read it.
const INNER_PRODUCT_BLOCK: usize = 1024;

/// The gadget vector a [`GadgetCiphertext`] was made with (see the module documentation). It is recorded
/// with the rows so that a product with a decomposition of another gadget is refused instead of
/// returning garbage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Gadget {
    /// Hybrid RNS digits over `dnum` groups of limbs of `Q`, with `special_primes` special primes `P`
    /// (Han-Ki Section 2.4); `dnum = 1` with one special prime is the single special modulus `q'`.
    Hybrid {
        /// The requested number of digit groups.
        dnum: usize,
        /// Number of special primes in `P`.
        special_primes: usize,
    },
    /// Per-limb CRT digits refined by `count` signed base-`2^base_log` digits each (HPS Section 3.3); one
    /// digit per limb (`count = 1`) is the plain CRT decomposition, a one-limb basis the signed digits of
    /// a single modulus.
    Digits {
        /// `log2` of the digit base.
        base_log: u32,
        /// Digits per limb.
        count: usize,
    },
}

impl Gadget {
    /// The gadget of a per-limb signed-digit decomposition.
    pub fn of_digits(digits: &RnsSignedDigits) -> Self {
        Self::Digits {
            base_log: digits.limbs().first().map_or(0, |d| d.base_log()),
            count: digits.count(),
        }
    }

    /// The hybrid gadget of a context (its `dnum` and special primes).
    pub fn of_context(ctx: &RlweContext) -> Self {
        Self::Hybrid {
            dnum: ctx.gadget().dnum(),
            special_primes: ctx.special_basis().len(),
        }
    }
}

impl std::fmt::Display for Gadget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Hybrid {
                dnum,
                special_primes,
            } => write!(
                f,
                "hybrid RNS digits (dnum = {dnum}, {special_primes} special primes)"
            ),
            Self::Digits { base_log, count } => write!(
                f,
                "per-limb signed digits ({count} of base 2^{base_log} per limb)"
            ),
        }
    }
}

/// A gadget ciphertext: RLWE samples `(b_i, a_i)` with `b_i = -a_i s + e_i + g_i m` in NTT form over the
/// key basis (`QP` for the hybrid gadget, `Q` for the digit gadgets), one per gadget entry (see the module
/// documentation). Key-switching keys are gadget ciphertexts of the source secret
/// ([`crate::KeySwitchKey`]).
#[derive(Clone, Debug, PartialEq)]
pub struct GadgetCiphertext {
    pub(crate) fingerprint: u64,
    pub(crate) gadget: Gadget,
    pub(crate) rows: Vec<(Poly<Ntt>, Poly<Ntt>)>,
    /// The public seed the `a_i` were expanded from, in order ([`expand_uniform`]), when known: the wire
    /// format then stores 32 bytes instead of the `a_i` (about half the key).
    pub(crate) seed: Option<Seed>,
}

impl GadgetCiphertext {
    /// Encrypts `message` (NTT form over the key basis) under `s` (NTT form over the same basis) with the
    /// gadget entries `constants[i]` (residues of `g_i` over the key basis, or over its first limbs, the
    /// others taken as 0): `b_i = -a_i s + e_i + g_i m`, the `a_i` expanded in order from one fresh public
    /// seed, the `e_i` drawn from `noise` (RNS-CKKS `KSGen`; HPS Section 4.1; PEGASUS Table IV gives the
    /// LWE keys their own widths). `gadget` records which gadget `constants` are the entries of;
    /// `fingerprint` names the parameters `s` belongs to (an RLWE context's, or an LWE parameter set's).
    ///
    /// Errors: basis mismatches between `s`, `message` and the constants; sampler errors.
    pub fn encrypt(
        fingerprint: u64,
        gadget: Gadget,
        noise: &DiscreteGaussian,
        s: &Poly<Ntt>,
        message: &Poly<Ntt>,
        constants: &[Vec<u64>],
        rng: &mut Csprng,
    ) -> Result<Self> {
        let basis = s.basis();
        basis.check_same(message.basis(), "gadget encryption (message basis)")?;
        let seed = rng.fresh_seed();
        let streams = Substreams::new(rng);
        let indexed: Vec<(u64, &Vec<u64>)> = (0u64..).zip(constants).collect();
        // The rows are independent but their `a_j` come one after the other from one public stream
        // (the wire format stores the seed only), so that expansion runs as one task beside the rest:
        // `e_j + g_j m` of every row, side by side, row `j` from stream `j` of `streams` (the same
        // rows on any number of threads).
        let (a_rows, b_rows) = parallel::join(
            || -> Result<Vec<Poly<Ntt>>> {
                let mut public = Csprng::from_public_seed(seed);
                constants
                    .iter()
                    .map(|_| expand_uniform(basis, &mut public))
                    .collect()
            },
            || {
                parallel::map(&indexed, &|&(j, g)| -> Result<Poly<Ntt>> {
                    let mut b = sample_error_from(noise, basis, &mut streams.stream(j))?.into_ntt();
                    let mut g_m = message.clone();
                    g_m.mul_scalars_assign(g)?;
                    // `g_m` is the secret times a public constant: secret material.
                    let g_m = SecretPoly::new(g_m);
                    b.add_assign(g_m.get())?;
                    Ok(b)
                })
            },
        );
        let rows = a_rows?
            .into_iter()
            .zip(b_rows)
            .map(|(a, b)| {
                let mut b = b?;
                let a_s = SecretPoly::new(a.mul(s)?);
                b.sub_assign(a_s.get())?;
                Ok((b, a))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            fingerprint,
            gadget,
            rows,
            seed: Some(seed),
        })
    }

    /// A gadget ciphertext from its rows (for deserialization and for tests that build noiseless or
    /// chosen rows). All rows must be over one basis; nothing about the encryption is checked.
    ///
    /// Errors: [`Error::InvalidParams`] if there is no row; basis mismatches between the rows.
    pub fn from_rows(
        fingerprint: u64,
        gadget: Gadget,
        rows: Vec<(Poly<Ntt>, Poly<Ntt>)>,
        seed: Option<Seed>,
    ) -> Result<Self> {
        let Some((first, _)) = rows.first() else {
            return Err(Error::InvalidParams {
                what: "gadget ciphertext",
                reason: "it needs at least one row".into(),
            });
        };
        let basis = first.basis();
        for p in rows.iter().flat_map(|(b, a)| [b, a]) {
            basis.check_same(p.basis(), "gadget ciphertext (row basis)")?;
        }
        Ok(Self {
            fingerprint,
            gadget,
            rows,
            seed,
        })
    }

    /// The rows `(b_i, a_i)`, one per gadget entry.
    pub fn rows(&self) -> &[(Poly<Ntt>, Poly<Ntt>)] {
        &self.rows
    }

    /// The gadget the rows encrypt multiples of.
    pub fn gadget(&self) -> Gadget {
        self.gadget
    }

    /// Fingerprint of the RLWE context whose secret the rows decrypt under.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// The public seed the `a_i` were expanded from, if known (ciphertexts from
    /// [`GadgetCiphertext::encrypt`] always have one; those loaded from expanded bytes do not).
    pub fn seed(&self) -> Option<&Seed> {
        self.seed.as_ref()
    }

    /// The first `count` rows, for a product with `count` digits of a decomposition of `gadget`:
    /// refuses a decomposition of another gadget, or more digits than rows.
    ///
    /// Errors: [`Error::GadgetMismatch`], [`Error::InvalidParams`] naming `operation`.
    pub(crate) fn rows_for(
        &self,
        gadget: Gadget,
        count: usize,
        operation: &'static str,
    ) -> Result<&[(Poly<Ntt>, Poly<Ntt>)]> {
        if self.gadget != gadget {
            return Err(Error::GadgetMismatch {
                operation,
                key: self.gadget,
                decomposition: gadget,
            });
        }
        self.rows.get(..count).ok_or_else(|| Error::InvalidParams {
            what: "gadget ciphertext",
            reason: format!(
                "{operation}: it has {} rows but the decomposition has {count} digits",
                self.rows.len()
            ),
        })
    }

    /// The gadget product of `x` (coefficient form, over the digits' basis or a prefix of it) with the
    /// per-limb signed-digit decomposition `digits` (the digit gadgets of the module documentation):
    /// `(sum_i d_i b_i, sum_i d_i a_i)` in coefficient form over `x`'s basis, which decrypts under `s` to
    /// `x m + sum_i d_i e_i` (HPS Sections 3.3 and 4.5 for `m = s^2`). [`product_sum`] of one term.
    ///
    /// Errors: as [`product_sum`].
    pub fn product(
        &self,
        x: &Poly<Coeff>,
        digits: &RnsSignedDigits,
    ) -> Result<(Poly<Coeff>, Poly<Coeff>)> {
        product_sum(&[(x, self)], digits)
    }
}

/// The sum of gadget products `sum_j x_j ⋄ key_j` for one per-limb signed-digit decomposition `digits`
/// (every `x_j` in coefficient form over one basis, the digits' basis or a prefix of it; every key made
/// for `digits`), in coefficient form: one multiply-accumulate over the digits of all terms
/// (see the module documentation), so the sum costs the forward NTTs of the digits and two inverse NTTs in
/// all. The LWE key switch of PEGASUS Fig. 9 (one term per block of the secret) and the external
/// product of RGSW (two terms) are such sums.
///
/// Errors: [`Error::InvalidParams`] for no term; [`Error::GadgetMismatch`] if a key was made for another
/// gadget; basis mismatches between the inputs, `digits` and the rows.
pub fn product_sum(
    terms: &[(&Poly<Coeff>, &GadgetCiphertext)],
    digits: &RnsSignedDigits,
) -> Result<(Poly<Coeff>, Poly<Coeff>)> {
    let words = terms.first().map_or(0, |(x, _)| x.data().len());
    long_operation(2 * words, || product_sum_waiting(terms, digits))
}

/// The work of [`product_sum`], which runs it as one [`long_operation`].
fn product_sum_waiting(
    terms: &[(&Poly<Coeff>, &GadgetCiphertext)],
    digits: &RnsSignedDigits,
) -> Result<(Poly<Coeff>, Poly<Coeff>)> {
    let Some((first, _)) = terms.first() else {
        return Err(Error::InvalidParams {
            what: "gadget product",
            reason: "the sum needs at least one term".into(),
        });
    };
    let basis = first.basis();
    let gadget = Gadget::of_digits(digits);
    let n = basis.degree();
    let size = basis.len() * n;
    if parallel(2 * size)
        && basis.len() < rayon::current_num_threads()
        && n >= SPLIT_DECOMPOSITION_MIN_DEGREE
    {
        let mut key_rows = Vec::new();
        for (x, key) in terms {
            basis.check_same(x.basis(), "gadget product (inputs)")?;
            key_rows.extend(key.rows_for(
                gadget,
                x.limb_count() * digits.count(),
                "gadget product",
            )?);
        }
        let inputs: Vec<&Poly<Coeff>> = terms.iter().map(|(x, _)| *x).collect();
        let (out0, out1) = product_sum_split(basis, &inputs, &key_rows, digits)?;
        return Ok((Poly::from_data(basis, out0)?, Poly::from_data(basis, out1)?));
    }
    let mut rows = Vec::new();
    let mut key_rows = Vec::new();
    for (x, key) in terms {
        basis.check_same(x.basis(), "gadget product (inputs)")?;
        let term_rows = digits.signed_rows(x)?;
        key_rows.extend(key.rows_for(gadget, term_rows.len(), "gadget product")?);
        rows.extend(term_rows);
    }
    // Zeroed on the pool's threads (with their first-touch page faults), not on the calling one.
    let (mut out0, mut out1) = (
        rnsfhe_ring::parallel::zeroed(size),
        rnsfhe_ring::parallel::zeroed(size),
    );
    multiply_accumulate(
        basis,
        &key_rows,
        digits.basis(),
        &|t| t,
        DigitRows::Signed {
            rows: &rows,
            limbs: basis.len(),
            digits,
        },
        LimbForm::Coeff,
        (&mut out0, &mut out1),
    )?;
    Ok((Poly::from_data(basis, out0)?, Poly::from_data(basis, out1)?))
}

/// The digits of a gadget product's input, as [`multiply_accumulate`] reads them one target limb at a
/// time.
#[derive(Clone, Copy)]
pub(crate) enum DigitRows<'a> {
    /// Digits already raised to the whole target basis in NTT form (the ModUp output of the hybrid
    /// gadget), one limb-major buffer per digit, read through an NTT slot permutation when given (hoisted
    /// automorphisms).
    Extended {
        digits: &'a [Vec<u64>],
        perm: Option<&'a [usize]>,
    },
    /// Small signed digits ([`RnsSignedDigits::signed_rows`] of one or several inputs of `limbs` limbs
    /// each, concatenated), lifted into each target limb and transformed there.
    Signed {
        rows: &'a [Vec<i64>],
        limbs: usize,
        digits: &'a RnsSignedDigits,
    },
}

impl DigitRows<'_> {
    fn count(&self) -> usize {
        match self {
            Self::Extended { digits, .. } => digits.len(),
            Self::Signed { rows, .. } => rows.len(),
        }
    }
}

/// The form in which [`multiply_accumulate`] leaves its outputs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum LimbForm {
    /// NTT form (ModDown follows).
    Ntt,
    /// Coefficient form (one inverse NTT per output limb).
    Coeff,
}

/// The multiply-accumulate of every gadget product: for each limb `t` of `target`,
/// `out0_t = sum_i d_{i,t} b_{i, key_limb(t)}` and `out1_t = sum_i d_{i,t} a_{i, key_limb(t)}` (see
/// the module documentation for the working set), with the digits `d_i` read or lifted from `digits`
/// and the gadget-ciphertext rows `key_rows` (one per digit, over `key_basis`, of which `key_limb` maps
/// target limbs to limbs). The outputs are limb-major over `target` and overwritten entirely.
///
/// Errors: [`Error::InvalidParams`] if there are not as many rows as digits; basis mismatches if a row
/// is not over `key_basis`; NTT errors.
pub(crate) fn multiply_accumulate(
    target: &RnsBasis,
    key_rows: &[&(Poly<Ntt>, Poly<Ntt>)],
    key_basis: &RnsBasis,
    key_limb: &(dyn Fn(usize) -> usize + Sync),
    digits: DigitRows<'_>,
    form: LimbForm,
    (out0, out1): (&mut [u64], &mut [u64]),
) -> Result<()> {
    let count = digits.count();
    if key_rows.len() != count {
        return Err(Error::InvalidParams {
            what: "gadget product",
            reason: format!(
                "{} gadget-ciphertext rows for {count} digits",
                key_rows.len()
            ),
        });
    }
    let rows = key_rows;
    for p in rows.iter().flat_map(|(b, a)| [b, a]) {
        key_basis.check_same(p.basis(), "gadget product (row basis)")?;
    }
    let n = target.degree();
    let on_pool = parallel(out0.len() + out1.len());
    // Signed digits on the pool: whole-limb tasks for as many limbs as give every thread the same
    // number, the limbs left over (all of them when there are fewer limbs than threads) through the
    // finer phases of `multiply_accumulate_split`. With one task per limb, BFV's 7 limbs at depth 10
    // split 4 / 3 between two threads (at most 1.75x).
    let whole = match digits {
        DigitRows::Signed { .. } if on_pool => {
            target.len() - target.len() % rayon::current_num_threads()
        }
        _ => target.len(),
    };
    // Tasks of whole limbs, except for extended digits with NTT-form outputs (key switching), whose
    // coefficients are independent: there each limb is two tasks, so that an odd number of limbs (`l + k`
    // over `Q_l ∪ P`) still splits evenly between two threads (15 limbs at `PaperTable1L10`: 7 against 8
    // limbs per thread otherwise).
    let split = match (digits, form) {
        (DigitRows::Extended { .. }, LimbForm::Ntt) if n >= 2 * INNER_PRODUCT_BLOCK => 2,
        _ => 1,
    };
    let task_len = n / split;
    // Task `k`: coefficients `range` of limb `t = k / split`; the outputs' parts `o0`, `o1` of that range.
    let task = |k: usize, o0: &mut [u64], o1: &mut [u64], work: &mut Vec<u64>| -> Result<()> {
        let t = k / split;
        let range = (k % split) * task_len..(k % split + 1) * task_len;
        let m = &target.moduli()[t];
        let plan = &target.plans()[t];
        let d: Vec<&[u64]> = match digits {
            DigitRows::Extended { digits, perm: None } => digits
                .iter()
                .map(|d| &d[t * n + range.start..t * n + range.end])
                .collect(),
            DigitRows::Extended {
                digits,
                perm: Some(perm),
            } => {
                work.clear();
                for d in digits {
                    let dl = &d[t * n..(t + 1) * n];
                    work.extend(perm[range.clone()].iter().map(|&s| dl[s]));
                }
                work.chunks_exact(range.len()).collect()
            }
            DigitRows::Signed {
                rows,
                limbs,
                digits,
            } => {
                let per_limb = digits.count();
                work.resize(rows.len() * n, 0);
                for (r, (row, w)) in rows.iter().zip(work.chunks_exact_mut(n)).enumerate() {
                    // Row `r` is digit `r % per_limb` of limb `(r / per_limb) % limbs` of its term.
                    digits.lift_row((r / per_limb) % limbs, row, m, w);
                    plan.forward(w)?;
                }
                work.chunks_exact(n).collect()
            }
        };
        let kt = key_limb(t);
        let (mut ds, mut bs, mut as_) = (Vec::new(), Vec::new(), Vec::new());
        for start in (0..range.len()).step_by(INNER_PRODUCT_BLOCK) {
            // `block` indexes the task's digits and outputs; `lo..hi` the key rows.
            let block = start..(start + INNER_PRODUCT_BLOCK).min(range.len());
            let (lo, hi) = (
                kt * n + range.start + block.start,
                kt * n + range.start + block.end,
            );
            ds.clear();
            ds.extend(d.iter().map(|w| &w[block.clone()]));
            bs.clear();
            bs.extend(rows.iter().map(|(b, _)| &b.data()[lo..hi]));
            as_.clear();
            as_.extend(rows.iter().map(|(_, a)| &a.data()[lo..hi]));
            // Digits and rows are reduced residues (transform and conversion outputs, key polynomials).
            sum_of_reduced_products(m, &ds, &bs, &mut o0[block.clone()]);
            sum_of_reduced_products(m, &ds, &as_, &mut o1[block]);
        }
        if form == LimbForm::Coeff {
            // Whole limbs here (`split` is 1).
            plan.inverse(o0)?;
            plan.inverse(o1)?;
        }
        Ok(())
    };
    if on_pool {
        // A work buffer per task from the process's scratch pool: a fresh one per target limb was
        // zero-filled (`D` limbs, 3.5 MB for BFV at depth 20) on every task, which the one-thread loop
        // below does once per call.
        let work_len = match digits {
            DigitRows::Signed { rows, .. } => rows.len() * n,
            DigitRows::Extended { digits, perm } => perm.map_or(0, |_| digits.len() * task_len),
        };
        let (head0, tail0) = out0.split_at_mut(whole * n);
        let (head1, tail1) = out1.split_at_mut(whole * n);
        rnsfhe_ring::parallel::try_for_each_chunk_pair(head0, head1, task_len, &|k, o0, o1| {
            let mut work = scratch::take_dirty(work_len);
            let done = task(k, o0, o1, &mut work);
            scratch::give(work);
            done
        })?;
        match digits {
            DigitRows::Signed {
                rows: digit_rows,
                limbs,
                digits,
            } if whole < target.len() => multiply_accumulate_split(
                target,
                whole,
                rows,
                key_limb,
                (digit_rows, limbs, digits),
                form,
                (tail0, tail1),
            ),
            _ => Ok(()),
        }
    } else {
        let mut work = Vec::new();
        out0.chunks_mut(task_len)
            .zip(out1.chunks_mut(task_len))
            .enumerate()
            .try_for_each(|(k, (o0, o1))| task(k, o0, o1, &mut work))
    }
}

/// Coefficients per task of the inner products of [`multiply_accumulate_split`]: a limb of `N = 2^16`
/// in 8 tasks.
const SPLIT_INNER_WORDS: usize = 1 << 13;

/// [`multiply_accumulate`] for signed digits on the target limbs from `first` on (the outputs hold
/// those limbs only), when they are fewer than the pool has threads (the whole-ciphertext switch of
/// PEGASUS's extraction: one limb of `N = 2^16`; the limbs left over after whole-limb tasks), where one
/// task per limb would leave the other threads idle: the same arithmetic in three parallel phases of
/// finer grain. (1) every (limb, digit row) pair lifted and transformed on its own; (2) the inner
/// products in parts of [`SPLIT_INNER_WORDS`] coefficients; (3) for coefficient-form outputs, the
/// inverse NTT of every (limb, output) pair. The digit rows of all these limbs are held at once
/// (`limbs x D` limbs: a few MB at most, for one or two limbs), not limb by limb. Same outputs as the
/// limb-by-limb loop.
fn multiply_accumulate_split(
    target: &RnsBasis,
    first: usize,
    rows: &[&(Poly<Ntt>, Poly<Ntt>)],
    key_limb: &(dyn Fn(usize) -> usize + Sync),
    (digit_rows, limbs, digits): (&[Vec<i64>], usize, &RnsSignedDigits),
    form: LimbForm,
    (out0, out1): (&mut [u64], &mut [u64]),
) -> Result<()> {
    use rnsfhe_ring::parallel as par;
    let n = target.degree();
    let count = digit_rows.len();
    let per_limb = digits.count();
    // (1) Row `r` of target limb `first + t` at `[(t D + r) N, (t D + r + 1) N)`; row `r` is digit
    // `r % per_limb` of limb `(r / per_limb) % limbs` of its term.
    let mut lifted = scratch::take_dirty(out0.len() * count);
    par::try_for_each_chunk(&mut lifted, n, &|i, w| -> Result<()> {
        let (t, r) = (first + i / count, i % count);
        digits.lift_row(
            (r / per_limb) % limbs,
            &digit_rows[r],
            &target.moduli()[t],
            w,
        );
        target.plans()[t].forward(w)?;
        Ok(())
    })?;
    let rows_lifted: Vec<&[u64]> = lifted.chunks_exact(n).collect();
    let done = inner_products_split(
        target,
        first,
        rows,
        key_limb,
        &rows_lifted,
        form,
        (out0, out1),
    );
    scratch::give(lifted);
    done
}

/// Phases (2) and (3) of [`multiply_accumulate_split`] on the target limbs from `first` on (the outputs
/// hold those limbs only) and the digit rows `lifted` (row `r` of target limb `first + t` is
/// `lifted[t D + r]`, `N` residues in NTT form, `D = rows.len()`): the inner products in parts of
/// [`SPLIT_INNER_WORDS`] coefficients, then for coefficient-form outputs the inverse NTT of every
/// (limb, output) pair.
fn inner_products_split(
    target: &RnsBasis,
    first: usize,
    rows: &[&(Poly<Ntt>, Poly<Ntt>)],
    key_limb: &(dyn Fn(usize) -> usize + Sync),
    lifted: &[&[u64]],
    form: LimbForm,
    (out0, out1): (&mut [u64], &mut [u64]),
) -> Result<()> {
    use rnsfhe_ring::parallel as par;
    let n = target.degree();
    let count = rows.len();
    // Parts of one limb each (`n` is a power of two, so a part never straddles two limbs).
    let part = n.min(SPLIT_INNER_WORDS);
    par::try_for_each_chunk_pair(out0, out1, part, &|i, o0, o1| -> Result<()> {
        // `limb` indexes the outputs and `lifted`, `t` the target basis.
        let (limb, start) = ((i * part) / n, (i * part) % n);
        let t = first + limb;
        let m = &target.moduli()[t];
        let kt = key_limb(t);
        let (mut ds, mut bs, mut as_) = (Vec::new(), Vec::new(), Vec::new());
        for (k, block) in (start..start + part)
            .step_by(INNER_PRODUCT_BLOCK)
            .enumerate()
        {
            let end = (block + INNER_PRODUCT_BLOCK).min(start + part);
            let local = k * INNER_PRODUCT_BLOCK..k * INNER_PRODUCT_BLOCK + (end - block);
            let (lo, hi) = (kt * n + block, kt * n + end);
            ds.clear();
            ds.extend((0..count).map(|r| &lifted[limb * count + r][block..end]));
            bs.clear();
            bs.extend(rows.iter().map(|(b, _)| &b.data()[lo..hi]));
            as_.clear();
            as_.extend(rows.iter().map(|(_, a)| &a.data()[lo..hi]));
            sum_of_reduced_products(m, &ds, &bs, &mut o0[local.clone()]);
            sum_of_reduced_products(m, &ds, &as_, &mut o1[local]);
        }
        Ok(())
    })?;
    // Both outputs of every limb side by side.
    if form == LimbForm::Coeff {
        par::try_for_each_chunk_pair(out0, out1, n, &|t, o0, o1| -> Result<()> {
            let plan = &target.plans()[first + t];
            let (a, b) = par::join(|| plan.inverse(o0), || plan.inverse(o1));
            a?;
            b?;
            Ok(())
        })?;
    }
    Ok(())
}

/// Degrees from which [`product_sum`] over fewer limbs than threads decomposes by coefficient ranges
/// ([`product_sum_split`]); below, the ring's row-by-row decomposition is as fast.
const SPLIT_DECOMPOSITION_MIN_DEGREE: usize = 1 << 14;

/// Coefficients per task of [`product_sum_split`]'s decomposition: a limb of `N = 2^16` in 8 tasks.
const SPLIT_DECOMPOSITION_PART: usize = 1 << 13;

/// [`product_sum`] over fewer limbs than the pool has threads (PEGASUS's whole-ciphertext switch: one
/// limb of `N = 2^16`), as few fork-joins as the data flow allows: (1) every range of coefficients
/// decomposed straight into its range of the digit rows of every target limb, reduced there
/// ([`RnsSignedDigits::lifted_digits`]; no signed rows, no second lifting pass); (2) every
/// (limb, digit row) transformed; (3) the inner products by coefficient ranges and (4) the inverse NTTs
/// ([`inner_products_split`]). The same outputs (limb-major over `basis`, coefficient form) as the
/// limb-by-limb [`multiply_accumulate`].
///
/// Errors: as [`product_sum`].
fn product_sum_split(
    basis: &RnsBasis,
    inputs: &[&Poly<Coeff>],
    key_rows: &[&(Poly<Ntt>, Poly<Ntt>)],
    digits: &RnsSignedDigits,
) -> Result<(Vec<u64>, Vec<u64>)> {
    use rnsfhe_ring::parallel as par;
    let n = basis.degree();
    let limbs = basis.len();
    let per_limb = digits.count();
    let count = inputs.len() * limbs * per_limb;
    if key_rows.len() != count {
        return Err(Error::InvalidParams {
            what: "gadget product",
            reason: format!(
                "{} gadget-ciphertext rows for {count} digits",
                key_rows.len()
            ),
        });
    }
    for p in key_rows.iter().flat_map(|(b, a)| [b, a]) {
        digits
            .basis()
            .check_same(p.basis(), "gadget product (row basis)")?;
    }
    if !digits.basis().has_prefix(basis) {
        return Err(rnsfhe_ring::Error::BasisMismatch {
            operation:
                "RNS signed-digit decomposition (the input must be over a prefix of the basis)",
            left_limbs: digits.basis().len(),
            left_n: digits.basis().degree(),
            right_limbs: limbs,
            right_n: n,
        }
        .into());
    }
    // Row `r` of target limb `t` is `lifted[t D + r]`, `r = (term L + i) per_limb + k` for digit `k` of
    // limb `i` of a term (the order of `signed_rows`, terms concatenated). One buffer per row, zeroed
    // by the task that allocates it (a `memset` each, on every thread), rather than one buffer filled
    // with zeros by `parallel::zeroed`'s element loop: that fill took 11 % of the 2-thread CPU time of
    // PEGASUS's whole-ciphertext switch, for rows the decomposition overwrites entirely.
    let indices: Vec<usize> = (0..limbs * count).collect();
    let mut lifted: Vec<Vec<u64>> = par::map(&indices, &|_| vec![0u64; n]);
    let part = n.min(SPLIT_DECOMPOSITION_PART);
    {
        // For every coefficient range, its slice of every row: tasks write disjoint ranges.
        let mut ranges: Vec<Vec<&mut [u64]>> = (0..n / part)
            .map(|_| Vec::with_capacity(limbs * count))
            .collect();
        for row in lifted.iter_mut() {
            for (p, slice) in row.chunks_mut(part).enumerate() {
                ranges[p].push(slice);
            }
        }
        par::try_for_each_chunk(&mut ranges, 1, &|p, one| -> Result<()> {
            let mut slices = one[0].iter_mut();
            for t in 0..limbs {
                let m = &basis.moduli()[t];
                for x in inputs {
                    for (i, src) in x.limbs().enumerate() {
                        let mut rows: Vec<&mut [u64]> =
                            slices.by_ref().take(per_limb).map(|s| &mut **s).collect();
                        digits.lifted_digits(i, &src[p * part..(p + 1) * part], m, &mut rows)?;
                    }
                }
            }
            Ok(())
        })?;
    }
    par::try_for_each_chunk(&mut lifted, 1, &|i, w| -> Result<()> {
        basis.plans()[i / count].forward(&mut w[0])?;
        Ok(())
    })?;
    // One buffer per thread, zeroed side by side (one fork instead of one per buffer).
    let (mut out0, mut out1) = par::join(|| vec![0u64; limbs * n], || vec![0u64; limbs * n]);
    inner_products_split(
        basis,
        0,
        key_rows,
        &|t| t,
        &lifted.iter().map(Vec::as_slice).collect::<Vec<_>>(),
        LimbForm::Coeff,
        (&mut out0, &mut out1),
    )?;
    Ok((out0, out1))
}
