//! The homomorphic DFT of CKKS: SlotsToCoeffs (the decoding map, evaluated on encrypted slots) and
//! CoeffsToSlots (its inverse), as products of sparse factors of the encoder's special FFT (Cheon-Han-Kim-
//! Kim-Song, "Bootstrapping for Approximate Homomorphic Encryption", Eurocrypt 2018; Han-Ki, "Better
//! Bootstrapping for Approximate Homomorphic Encryption", CT-RSA 2020; Bossuat-Mouchet-Troncoso-Pastoriza-
//! Hubaux, "Efficient Bootstrapping for Approximate Homomorphic Encryption with Non-Sparse Keys",
//! Eurocrypt 2021, for the merging of the butterfly stages into a chosen number of levels). PEGASUS (Lu et
//! al., S&P 2021) opens its conversion with SlotsToCoeffs (Fig. 6, step 1; "S2C ... evaluates the decoding
//! function homomorphically", Section II-C), at 2 levels (Section VI).
//!
//! # The factorisation
//!
//! On `n` slots (a power of two up to `N/2`), the encoder's special FFT ([`Encoder::special_fft`]) is a
//! bit reversal `P` followed by `log2(n)` stages of butterflies; the stage of length `len` pairs positions
//! `p` and `p + len/2` of every block of `len` and has three non-zero diagonals, `0` and `±len/2`. Its
//! inverse ([`Encoder::special_ifft`]) is the inverse stages (each with its factor `1/2`) followed by `P`.
//! Both transforms here **leave out `P`**, as bootstrapping does (the slot-wise steps between the two
//! transforms do not care about the order, and SlotsToCoeffs then needs no permutation):
//!
//! * **SlotsToCoeffs** computes `S_n ... S_4 S_2 z`: the ciphertext of slots `z` becomes one whose
//!   plaintext, read as a polynomial, has the coefficients `factor * z` at
//!   [`slot_coefficient_positions`]: with `gap = N / (2n)` and `rev(j)` the bit reversal of `j` over
//!   `log2(n)` bits, `Re z_j` at `X^(rev(j) gap)` and `Im z_j` at `X^(N/2 + rev(j) gap)` (for real
//!   values, [`real_value_positions`]). Decrypting gives `Delta * factor * z_j` there, `Delta` the
//!   ciphertext's scale.
//! * **CoeffsToSlots** computes the inverse stages in the other order: slot `j` of the result holds
//!   `factor * (c_(rev(j) gap) + i c_(N/2 + rev(j) gap)) / Delta` for the coefficients `c` of the input's
//!   plaintext, so `CoeffsToSlots(SlotsToCoeffs(z)) = z` (both with factor 1). Only the coefficients of the
//!   subring of `n` slots (multiples of `gap`) reach the slots; the others are carried along, as in any
//!   computation on `n` slots (bootstrapping clears them before, by a trace).
//!
//! The `log2(n)` stages are merged, in order, into `levels` matrices ([`dft_factors`]) of about equal
//! numbers of stages; a group of `s` consecutive stages has at most `2^(s+1) - 1` diagonals (fewer when
//! it contains the stage `len = n`, whose diagonals `±n/2` coincide). Each matrix is one
//! [`Evaluator::linear_transform`] and one rescaling: the transform uses `levels` levels.
//!
//! # Levels, scales and the factor
//!
//! The transform runs at the lowest levels that hold it, from `start_level` (limbs) down to
//! `start_level - levels`: matrix `i` is encoded at level `start_level - i` with the scale `q_(l-1)` of
//! the prime its rescaling drops ([`LinearTransform::exact_rescale_scale`]), so the output has **exactly
//! the input's scale**. A user factor (`1/q_0`, bootstrapping's `1/(K q_0)`, ...) is folded into the
//! matrices, `|factor|^(1/levels)` in each (and its sign in the first), so that every matrix keeps
//! entries of similar size and the same relative precision.
//!
//! One exception, for SlotsToCoeffs with `|factor| < 1`: the factor's magnitude goes into the matrices'
//! **scales** (`q_(l-1) |factor|^(1/levels)`) instead of their entries. The plaintext is the same
//! (`Delta * factor * z` in the coefficients), read at the scale `Delta |factor|` as `sign(factor) z`.
//! SlotsToCoeffs ends at the bottom of the chain, where the last product's scale `Delta q_1` would
//! exceed `q_0 q_1 / 2` when `Delta ~ q_0` (PEGASUS's chain of primes of one size) although the shrunk
//! values fit; with the factor in the scales the product's scale is `Delta q_1 |factor|`.
//!
//! Besides the usual key-switching and rescaling errors, the rounding of the encoded diagonals counts:
//! each slot of a diagonal is exact to about `sqrt(2n/12) / q_l`, and it multiplies slot values that grow
//! to `sqrt(n)` times the coefficients inside the DFT; with `D` diagonals a matrix adds a slot error of
//! about `sqrt(D n / 6) max|x| / q_l` (the bound the tests check derives every term).
//!
//! # CoeffsToSlots for bootstrapping
//!
//! The slots of CoeffsToSlots hold complex numbers whose real and imaginary parts are two different
//! coefficients. The approximate reduction modulo `q_0` of bootstrapping works on real values, so
//! [`CoeffsToSlotsOutput::RealImaginary`] returns the two halves as two ciphertexts of real slots:
//! the matrices carry an extra `1/2`, and with `w` their result, `real = w + conj(w)` and
//! `imaginary = -i (w - conj(w))` (one conjugation, no level; multiplying by `-i` is the monomial
//! `-X^(N/2)`, exact). [`CoeffsToSlotsOutput::Complex`] returns `w` itself (factor without the `1/2`).

use std::sync::Arc;

use rnsfhe_core::RlweCiphertext;
use rnsfhe_ring::parallel::active_wait;
use rnsfhe_ring::CrtComposer;

use crate::context::CkksContext;
use crate::encoder::Encoder;
use crate::error::{Error, Result};
use crate::evaluator::Evaluator;
use crate::linear_transform::{EncodedLinearTransform, LinearTransform};
use crate::plaintext::{Ciphertext, Plaintext};
use crate::Complex64;

/// The largest number of levels (merged matrices) of a homomorphic DFT.
pub const MAX_DFT_LEVELS: usize = 4;

/// The direction of a homomorphic DFT.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DftDirection {
    /// Slots to coefficients: the special FFT (decoding map) without its bit reversal.
    SlotsToCoeffs,
    /// Coefficients to slots: the inverse special FFT (encoding map) without its bit reversal.
    CoeffsToSlots,
}

/// The form of the result of CoeffsToSlots (see the [module documentation](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CoeffsToSlotsOutput {
    /// One ciphertext of complex slots `factor * (c_re + i c_im)`.
    Complex,
    /// Two ciphertexts of real slots, `factor * c_re` and `factor * c_im` (needs the conjugation key).
    RealImaginary,
}

/// The bit reversal of `j` over `log2(n)` bits (`n` a power of two).
fn bit_reverse(j: usize, n: usize) -> usize {
    if n <= 1 {
        0
    } else {
        j.reverse_bits() >> (usize::BITS - n.trailing_zeros())
    }
}

/// The coefficient positions that SlotsToCoeffs on `slots` slots of ring degree `degree` writes slot `j`
/// to: `(real, imaginary)` = `(rev(j) gap, N/2 + rev(j) gap)`, `gap = N / (2 slots)`, `rev` the bit
/// reversal over `log2(slots)` bits (see the [module documentation](self)); CoeffsToSlots reads slot `j`
/// from the same positions.
///
/// Errors: [`Error::InvalidSlots`] unless `slots` is a power of two in `[1, N/2]`; [`Error::Math`] for a
/// degree that is not a supported power of two.
pub fn slot_coefficient_positions(degree: usize, slots: usize) -> Result<Vec<(usize, usize)>> {
    rnsfhe_math::ntt::check_degree(degree)?;
    let max = degree / 2;
    if !slots.is_power_of_two() || slots > max {
        return Err(Error::InvalidSlots {
            slots,
            n: degree,
            max,
        });
    }
    let gap = max / slots;
    Ok((0..slots)
        .map(|j| {
            let r = bit_reverse(j, slots) * gap;
            (r, max + r)
        })
        .collect())
}

/// PEGASUS's S2C of `count` real values (Section II-C: "coefficients `v_i = Delta v[i]`"): the values are
/// encoded in `count.next_power_of_two()` slots, and value `i` lands at coefficient `rev(i) gap` (the
/// real position of [`slot_coefficient_positions`]); the imaginary positions hold zeros (up to noise).
///
/// Errors: [`Error::InvalidSlots`] for `count` of 0 or above `N/2`; [`Error::Math`] for an unsupported
/// degree.
pub fn real_value_positions(degree: usize, count: usize) -> Result<Vec<usize>> {
    if count == 0 {
        return Err(Error::InvalidSlots {
            slots: 0,
            n: degree,
            max: degree / 2,
        });
    }
    let slots = count.next_power_of_two();
    Ok(slot_coefficient_positions(degree, slots)?
        .into_iter()
        .take(count)
        .map(|(re, _)| re)
        .collect())
}

/// The coefficients of a plaintext (for instance a decrypted SlotsToCoeffs result) divided by its scale:
/// the centered residues composed exactly ([`CrtComposer`]), `N` of them.
///
/// Errors: [`Error::ContextMismatch`] for a plaintext of another context.
pub fn plaintext_coefficients(ctx: &CkksContext, pt: &Plaintext) -> Result<Vec<f64>> {
    ctx.check_fingerprint(pt.fingerprint(), "plaintext")?;
    let poly = pt.poly().clone().into_coeff();
    Ok(CrtComposer::new(poly.basis()).compose_centered_scaled(&poly, pt.scale())?)
}

/// Checks the slot count and number of levels of a DFT on an encoder of degree `N`.
fn check_shape(encoder: &Encoder, slots: usize, levels: usize) -> Result<usize> {
    encoder.check_slots(slots)?;
    let stages = slots.trailing_zeros() as usize;
    let max = MAX_DFT_LEVELS.min(stages.max(1));
    if !(1..=max).contains(&levels) {
        return Err(Error::InvalidArgument {
            operation: "homomorphic DFT",
            reason: format!(
                "{levels} levels for {slots} slots: the {stages} butterfly stages merge into 1 to {max} \
                 matrices (at most {MAX_DFT_LEVELS}, at most one per stage)"
            ),
        });
    }
    Ok(stages)
}

/// The butterfly stage of length `len` on `n` slots, as diagonals (see the module documentation).
fn stage(
    encoder: &Encoder,
    n: usize,
    len: usize,
    direction: DftDirection,
) -> Result<LinearTransform> {
    let h = len / 2;
    let w = encoder.stage_twiddles(len);
    let one = Complex64::new(1.0, 0.0);
    let zero = Complex64::new(0.0, 0.0);
    let (mut d0, mut up, mut down) = (vec![zero; n], vec![zero; n], vec![zero; n]);
    for p in 0..n {
        let i = p % len;
        match direction {
            // (u, v) -> (u + w v, u - w v).
            DftDirection::SlotsToCoeffs => {
                if i < h {
                    d0[p] = one;
                    up[p] = w[i];
                } else {
                    d0[p] = -w[i - h];
                    down[p] = one;
                }
            }
            // (u, v) -> ((u + v) / 2, (u - v) conj(w) / 2).
            DftDirection::CoeffsToSlots => {
                if i < h {
                    d0[p] = one * 0.5;
                    up[p] = one * 0.5;
                } else {
                    let c = w[i - h].conj() * 0.5;
                    d0[p] = -c;
                    down[p] = c;
                }
            }
        }
    }
    LinearTransform::from_diagonals(n, [(0, d0), (h as i64, up), (-(h as i64), down)])
}

/// The `levels` matrices of the homomorphic DFT on `slots` slots in the order they are applied, their
/// product being the special FFT without its bit reversal (SlotsToCoeffs) or its inverse (CoeffsToSlots),
/// times `factor` (`|factor|^(1/levels)` in each matrix, the sign in the first). The stages are split into
/// groups of equal size up to one; the larger groups come last for SlotsToCoeffs (they include the stage
/// `len = n`, whose two off-diagonals coincide) and first for CoeffsToSlots. For one slot the single
/// matrix is `factor` itself.
///
/// Errors: [`Error::InvalidSlots`]; [`Error::InvalidArgument`] for `levels` outside
/// `1..=min(4, log2(slots))` (1 for one slot) or a factor that is zero or not finite.
pub fn dft_factors(
    encoder: &Encoder,
    slots: usize,
    levels: usize,
    direction: DftDirection,
    factor: f64,
) -> Result<Vec<LinearTransform>> {
    let stages = check_shape(encoder, slots, levels)?;
    if !(factor.is_finite() && factor != 0.0) {
        return Err(Error::InvalidArgument {
            operation: "homomorphic DFT",
            reason: format!("the factor {factor} must be finite and non-zero"),
        });
    }
    // Stage lengths in the order of application.
    let mut lens: Vec<usize> = (1..=stages).map(|s| 1usize << s).collect();
    if direction == DftDirection::CoeffsToSlots {
        lens.reverse();
    }
    let (base, extra) = (stages / levels, stages % levels);
    let sizes: Vec<usize> = (0..levels)
        .map(|i| match direction {
            DftDirection::SlotsToCoeffs => base + usize::from(i >= levels - extra),
            DftDirection::CoeffsToSlots => base + usize::from(i < extra),
        })
        .collect();
    let per_matrix = factor.abs().powf(1.0 / levels as f64);
    let mut out = Vec::with_capacity(levels);
    let mut next = lens.into_iter();
    for (i, &size) in sizes.iter().enumerate() {
        let mut acc = LinearTransform::from_diagonals(
            slots,
            [(0, vec![Complex64::new(per_matrix, 0.0); slots])],
        )?;
        if i == 0 && factor < 0.0 {
            acc = acc.scaled(Complex64::new(-1.0, 0.0))?;
        }
        for len in next.by_ref().take(size) {
            acc = stage(encoder, slots, len, direction)?.compose(&acc)?;
        }
        out.push(acc);
    }
    Ok(out)
}

/// How SlotsToCoeffs splits its factor (see [`EncodedDft::new`]): the factor of the matrices' entries
/// and the multiplier of each matrix's scale (`|factor|^(1/levels)` when `|factor| < 1`, else 1).
fn s2c_folding(factor: f64, levels: usize) -> (f64, f64) {
    if factor.abs() < 1.0 {
        (
            factor / factor.abs(),
            factor.abs().powf(1.0 / levels as f64),
        )
    } else {
        (factor, 1.0)
    }
}

/// The encoded matrices of one homomorphic DFT and where they run.
#[derive(Clone, Debug)]
struct EncodedDft {
    slots: usize,
    start_level: usize,
    factor: f64,
    matrices: Vec<EncodedLinearTransform>,
}

/// `m` on twice its slots, acting on vectors of period `n = m.slots()` as `m` does: diagonal `k` keeps
/// its index, with its entries repeated (for an input of period `n`, the rotation by `k` on `2n` slots
/// is the rotation by `k` on `n` slots repeated).
fn doubled(m: &LinearTransform) -> Result<LinearTransform> {
    let n = m.slots();
    LinearTransform::from_diagonals(
        2 * n,
        m.diagonal_indices().filter_map(|k| {
            let d = m.diagonal(k as i64)?;
            Some((k as i64, (0..2 * n).map(|j| d[j % n]).collect::<Vec<_>>()))
        }),
    )
}

/// The slot-wise product by `(1, .., 1, c, .., c)` on `2n` slots (`n` of each), as a diagonal matrix.
fn halves(n: usize, c: Complex64) -> Result<LinearTransform> {
    let one = Complex64::new(1.0, 0.0);
    LinearTransform::from_diagonals(
        2 * n,
        [(0, (0..2 * n).map(|j| if j < n { one } else { c }).collect())],
    )
}

/// Checks that twice `slots` slots fit the ring (the paired matrices act on `2 slots` slots).
fn check_paired(encoder: &Encoder, slots: usize) -> Result<()> {
    encoder
        .check_slots(2 * slots)
        .map_err(|_| Error::InvalidSlots {
            slots,
            n: encoder.degree(),
            max: encoder.degree() / 4,
        })
}

impl EncodedDft {
    fn new(
        ctx: &Arc<CkksContext>,
        slots: usize,
        levels: usize,
        start_level: usize,
        direction: DftDirection,
        factor: f64,
    ) -> Result<Self> {
        check_shape(ctx.encoder(), slots, levels)?;
        ctx.check_level(start_level, "homomorphic DFT")?;
        if start_level < levels + 1 {
            return Err(Error::InvalidArgument {
                operation: "homomorphic DFT",
                reason: format!(
                    "start level {start_level} cannot hold {levels} levels: the start level (limbs) must \
                     be at least levels + 1 = {}",
                    levels + 1
                ),
            });
        }
        // SlotsToCoeffs ends at the bottom of the chain, where a product at scale `Delta q_1` does not
        // fit `q_0 q_1` as a scale when `Delta ~ q_0` (PEGASUS's chain), although values shrunk by a
        // factor below 1 do: such a factor's magnitude goes into the scales of the matrices instead of
        // their entries (the same plaintext, at the scale `Delta |factor|`).
        let (entries, per_matrix) = match direction {
            DftDirection::SlotsToCoeffs => s2c_folding(factor, levels),
            DftDirection::CoeffsToSlots => (factor, 1.0),
        };
        let factors = dft_factors(ctx.encoder(), slots, levels, direction, entries)?;
        let matrices = factors
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let level = start_level - i;
                let scale = LinearTransform::exact_rescale_scale(ctx, level)? * per_matrix;
                m.encode(ctx, level, scale, None)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            slots,
            start_level,
            factor,
            matrices,
        })
    }

    fn rotation_steps(&self) -> Vec<i64> {
        let mut steps: Vec<i64> = self
            .matrices
            .iter()
            .flat_map(EncodedLinearTransform::rotation_steps)
            .collect();
        steps.sort_unstable();
        steps.dedup();
        steps
    }

    fn output_level(&self) -> usize {
        self.start_level - self.matrices.len()
    }

    /// The matrices applied to `ct` (already of the right slot count), each followed by a rescaling.
    fn evaluate(
        &self,
        eval: &Evaluator,
        ct: &Ciphertext,
        operation: &'static str,
    ) -> Result<Ciphertext> {
        if ct.level() < self.start_level {
            return Err(Error::NotEnoughLevels {
                operation,
                level: ct.level(),
                log_scale: ct.log2_scale(),
                needed: self.start_level,
                more: self.start_level - ct.level(),
            });
        }
        let mut acc = eval.drop_to_level(ct, self.start_level)?;
        for m in &self.matrices {
            acc = eval.rescale(&eval.linear_transform(&acc, m)?)?;
        }
        Ok(acc)
    }
}

/// SlotsToCoeffs (PEGASUS's S2C) encoded for one context: see the [module documentation](self); evaluated
/// by [`Evaluator::slots_to_coeffs`].
#[derive(Clone, Debug)]
pub struct SlotsToCoeffs {
    dft: EncodedDft,
}

impl SlotsToCoeffs {
    /// Encodes SlotsToCoeffs on `slots` slots (a power of two up to `N/2`) as `levels` matrices
    /// (`1..=min(4, log2(slots))`; 1 for one slot), run from `start_level` (limbs, at least
    /// `levels + 1`) down, with `factor` folded in (1 for the plain decoding map).
    ///
    /// Errors: [`Error::InvalidSlots`]; [`Error::InvalidArgument`] for the levels, the start level or the
    /// factor; encoding errors.
    pub fn new(
        ctx: &Arc<CkksContext>,
        slots: usize,
        levels: usize,
        start_level: usize,
        factor: f64,
    ) -> Result<Self> {
        Ok(Self {
            dft: EncodedDft::new(
                ctx,
                slots,
                levels,
                start_level,
                DftDirection::SlotsToCoeffs,
                factor,
            )?,
        })
    }

    /// The number of slots.
    pub fn slots(&self) -> usize {
        self.dft.slots
    }

    /// The number of levels (matrices).
    pub fn levels(&self) -> usize {
        self.dft.matrices.len()
    }

    /// The level (limbs) the transform starts at (inputs are dropped to it).
    pub fn start_level(&self) -> usize {
        self.dft.start_level
    }

    /// The level of the result, `start_level - levels`.
    pub fn output_level(&self) -> usize {
        self.dft.output_level()
    }

    /// The factor folded into the matrices.
    pub fn factor(&self) -> f64 {
        self.dft.factor
    }

    /// The encoded matrices, in the order they are applied.
    pub fn matrices(&self) -> &[EncodedLinearTransform] {
        &self.dft.matrices
    }

    /// The rotation steps an evaluation needs Galois keys for (sorted, without duplicates).
    pub fn rotation_steps(&self) -> Vec<i64> {
        self.dft.rotation_steps()
    }

    /// The first matrix of the transform on `2 slots` slots, reading its input `y` as the complex vector
    /// `y_k + i y_(k + slots)` (`k < slots`) and writing its result twice (period `slots`), encoded where
    /// the first matrix runs: the inverse of [`CoeffsToSlots::paired_last_matrix`]'s packing, so that
    /// real and imaginary halves reduced in one ciphertext of twice the slots go back to the slots
    /// without a level (Bossuat et al., Eurocrypt 2021, Section 4). The result, of period `slots`,
    /// reads as a ciphertext of `slots` slots for the other matrices.
    ///
    /// Errors: [`Error::InvalidSlots`] unless `2 slots <= N/2`; encoding errors.
    pub fn paired_first_matrix(&self, ctx: &Arc<CkksContext>) -> Result<EncodedLinearTransform> {
        let slots = self.dft.slots;
        check_paired(ctx.encoder(), slots)?;
        let levels = self.dft.matrices.len();
        let (factor, per_matrix) = s2c_folding(self.dft.factor, levels);
        let factors = dft_factors(
            ctx.encoder(),
            slots,
            levels,
            DftDirection::SlotsToCoeffs,
            factor,
        )?;
        // J y = (y_k + i y_(k + slots)) repeated: diagonal 0 is (1, .., 1, i, .., i), diagonal
        // `slots` is (i, .., i, 1, .., 1).
        let i = Complex64::new(0.0, 1.0);
        let one = Complex64::new(1.0, 0.0);
        let join = LinearTransform::from_diagonals(
            2 * slots,
            [
                (
                    0,
                    (0..2 * slots)
                        .map(|j| if j < slots { one } else { i })
                        .collect(),
                ),
                (
                    slots as i64,
                    (0..2 * slots)
                        .map(|j| if j < slots { i } else { one })
                        .collect(),
                ),
            ],
        )?;
        let paired = doubled(&factors[0])?.compose(&join)?;
        let level = self.dft.start_level;
        let scale = LinearTransform::exact_rescale_scale(ctx, level)? * per_matrix;
        paired.encode(ctx, level, scale, None)
    }

    /// Where slot `j`'s real and imaginary parts land ([`slot_coefficient_positions`]).
    ///
    /// Errors: none in practice (the slot count was checked); [`Error::InvalidSlots`] otherwise.
    pub fn coefficient_positions(&self, degree: usize) -> Result<Vec<(usize, usize)>> {
        slot_coefficient_positions(degree, self.dft.slots)
    }
}

/// CoeffsToSlots encoded for one context: see the [module documentation](self); evaluated by
/// [`Evaluator::coeffs_to_slots`].
#[derive(Clone, Debug)]
pub struct CoeffsToSlots {
    dft: EncodedDft,
    output: CoeffsToSlotsOutput,
}

/// The result of [`Evaluator::coeffs_to_slots`], in the form [`CoeffsToSlots`] was built for.
#[derive(Clone, Debug)]
pub enum CoeffsToSlotsResult {
    /// Complex slots `factor * (c_re + i c_im)`.
    Complex(Ciphertext),
    /// Real slots `factor * c_re` and `factor * c_im`.
    RealImaginary {
        /// The coefficients at the real positions.
        real: Ciphertext,
        /// The coefficients at the imaginary positions.
        imaginary: Ciphertext,
    },
}

impl CoeffsToSlots {
    /// Encodes CoeffsToSlots on `slots` slots as `levels` matrices run from `start_level` down, with
    /// `factor` folded in, for the result form `output` (see [`SlotsToCoeffs::new`] for the ranges).
    ///
    /// Errors: as [`SlotsToCoeffs::new`].
    pub fn new(
        ctx: &Arc<CkksContext>,
        slots: usize,
        levels: usize,
        start_level: usize,
        factor: f64,
        output: CoeffsToSlotsOutput,
    ) -> Result<Self> {
        // The 1/2 of w + conj(w) goes into the matrices.
        let folded = match output {
            CoeffsToSlotsOutput::Complex => factor,
            CoeffsToSlotsOutput::RealImaginary => factor / 2.0,
        };
        Ok(Self {
            dft: EncodedDft::new(
                ctx,
                slots,
                levels,
                start_level,
                DftDirection::CoeffsToSlots,
                folded,
            )?,
            output,
        })
    }

    /// The number of slots.
    pub fn slots(&self) -> usize {
        self.dft.slots
    }

    /// The number of levels (matrices).
    pub fn levels(&self) -> usize {
        self.dft.matrices.len()
    }

    /// The level (limbs) the transform starts at.
    pub fn start_level(&self) -> usize {
        self.dft.start_level
    }

    /// The level of the result, `start_level - levels`.
    pub fn output_level(&self) -> usize {
        self.dft.output_level()
    }

    /// The form of the result.
    pub fn output(&self) -> CoeffsToSlotsOutput {
        self.output
    }

    /// The encoded matrices, in the order they are applied.
    pub fn matrices(&self) -> &[EncodedLinearTransform] {
        &self.dft.matrices
    }

    /// The rotation steps an evaluation needs Galois keys for (sorted, without duplicates).
    pub fn rotation_steps(&self) -> Vec<i64> {
        self.dft.rotation_steps()
    }

    /// Whether an evaluation needs the conjugation key ([`CoeffsToSlotsOutput::RealImaginary`]).
    pub fn needs_conjugation(&self) -> bool {
        self.output == CoeffsToSlotsOutput::RealImaginary
    }

    /// The last matrix of the transform, read on `2 slots` slots and multiplied slot-wise by
    /// `P = (1, .., 1, -i, .., -i)` (`slots` of each), encoded where the last matrix runs: with `w'` its
    /// result on an input of period `slots`, `w' + conj(w')` holds `2 Re(w)` in slots `0 .. slots` and
    /// `2 Im(w)` in slots `slots .. 2 slots`, `w` the transform's result. With the `1/2` of
    /// [`CoeffsToSlotsOutput::RealImaginary`] folded in, these are the real and imaginary halves the
    /// transform returns as two ciphertexts, in one ciphertext of twice the slots: one approximate
    /// reduction modulo `q_0` instead of two (the sparse-slot packing of CKKS bootstrapping, Cheon-Han-Hhan
    /// and Bossuat et al., Eurocrypt 2021, Section 4, folded into the last matrix so that it costs no
    /// level). A diagonal `k` of the `slots`-slot matrix stays diagonal `k`: the input has period
    /// `slots`, so its rotation by `k` is the same on `2 slots` slots.
    ///
    /// Errors: [`Error::InvalidSlots`] unless `2 slots <= N/2`; encoding errors.
    pub fn paired_last_matrix(&self, ctx: &Arc<CkksContext>) -> Result<EncodedLinearTransform> {
        let slots = self.dft.slots;
        check_paired(ctx.encoder(), slots)?;
        let levels = self.dft.matrices.len();
        let factors = dft_factors(
            ctx.encoder(),
            slots,
            levels,
            DftDirection::CoeffsToSlots,
            self.dft.factor,
        )?;
        let last = factors.last().ok_or(Error::Empty {
            what: "CoeffsToSlots matrices",
        })?;
        let paired = halves(slots, Complex64::new(0.0, -1.0))?.compose(&doubled(last)?)?;
        let level = self.dft.start_level - (levels - 1);
        let scale = LinearTransform::exact_rescale_scale(ctx, level)?;
        paired.encode(ctx, level, scale, None)
    }
}

impl Evaluator {
    /// `i` (or `-i` when `negate`) times every slot: the monomial `X^(N/2)` (or `-X^(N/2)`), exact and
    /// free of levels.
    pub(crate) fn multiply_by_i(&self, ct: &Ciphertext, negate: bool) -> Result<Ciphertext> {
        let x_half = self.context().x_half_at(ct.level())?;
        let parts = ct
            .inner
            .parts
            .iter()
            .map(|p| {
                let mut q = p.mul(&x_half)?;
                if negate {
                    q.neg_assign();
                }
                Ok(q)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(self.wrap(RlweCiphertext { parts }, ct.scale(), ct.slots()))
    }

    /// SlotsToCoeffs: a ciphertext of slots `z` becomes one whose plaintext coefficients are
    /// `Delta * factor * z` at [`SlotsToCoeffs::coefficient_positions`] (`Delta` the input's scale), at
    /// level [`SlotsToCoeffs::output_level`]; the output's scale is `Delta`, or `Delta |factor|` for
    /// `|factor| < 1` (see the [module documentation](crate::dft#levels-scales-and-the-factor)). The input is dropped to the start level; one
    /// with fewer slots than the transform stands for its replicated slots
    /// ([`Evaluator::linear_transform`]).
    ///
    /// Errors: [`Error::NotEnoughLevels`] below the start level; as [`Evaluator::linear_transform`]
    /// (slot counts, Galois keys) and [`Evaluator::rescale`].
    pub fn slots_to_coeffs(&self, ct: &Ciphertext, s2c: &SlotsToCoeffs) -> Result<Ciphertext> {
        active_wait(|| self.slots_to_coeffs_waiting(ct, s2c))
    }

    /// The work of [`Self::slots_to_coeffs`], which runs it inside [`active_wait`] (a long
    /// sequence of short parallel sections).
    fn slots_to_coeffs_waiting(&self, ct: &Ciphertext, s2c: &SlotsToCoeffs) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        s2c.dft.evaluate(self, ct, "slots to coefficients")
    }

    /// CoeffsToSlots: the coefficients of the plaintext of `ct` at the positions of
    /// [`slot_coefficient_positions`] become slots (see the [module documentation](self)), in the form
    /// the transform was built for, at level [`CoeffsToSlots::output_level`] and the input's scale. The
    /// input is read as a polynomial: its slot count is replaced by the transform's.
    ///
    /// Errors: [`Error::NotEnoughLevels`] below the start level; as [`Evaluator::linear_transform`] and
    /// [`Evaluator::rescale`]; [`Error::MissingKey`] / [`Error::Core`] without the conjugation key for
    /// [`CoeffsToSlotsOutput::RealImaginary`].
    pub fn coeffs_to_slots(
        &self,
        ct: &Ciphertext,
        c2s: &CoeffsToSlots,
    ) -> Result<CoeffsToSlotsResult> {
        active_wait(|| self.coeffs_to_slots_waiting(ct, c2s))
    }

    /// The work of [`Self::coeffs_to_slots`], which runs it inside [`active_wait`] (a long
    /// sequence of short parallel sections).
    fn coeffs_to_slots_waiting(
        &self,
        ct: &Ciphertext,
        c2s: &CoeffsToSlots,
    ) -> Result<CoeffsToSlotsResult> {
        const OP: &str = "coefficients to slots";
        self.check_ct(ct)?;
        let mut input = ct.clone();
        // The same polynomial, read with the transform's slots (its subring coefficients).
        input.slots = c2s.dft.slots;
        let w = c2s.dft.evaluate(self, &input, OP)?;
        match c2s.output {
            CoeffsToSlotsOutput::Complex => Ok(CoeffsToSlotsResult::Complex(w)),
            CoeffsToSlotsOutput::RealImaginary => {
                let conj = self.conjugate(&w)?;
                let real = self.add(&w, &conj)?;
                let diff = self.sub(&w, &conj)?;
                let imaginary = self.multiply_by_i(&diff, true)?;
                Ok(CoeffsToSlotsResult::RealImaginary { real, imaginary })
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn sample(n: usize, seed: u64) -> Vec<Complex64> {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        (0..n).map(|_| Complex64::new(next(), next())).collect()
    }

    fn apply_all(ms: &[LinearTransform], v: &[Complex64]) -> Vec<Complex64> {
        ms.iter().fold(v.to_vec(), |acc, m| m.apply(&acc).unwrap())
    }

    fn max_diff(a: &[Complex64], b: &[Complex64]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).norm())
            .fold(0.0, f64::max)
    }

    #[test]
    fn factors_are_the_special_fft_without_bit_reversal() {
        let enc = Encoder::new(1 << 10).unwrap();
        for slots in [1usize, 2, 8, 64, 512] {
            let stages = slots.trailing_zeros() as usize;
            for levels in 1..=MAX_DFT_LEVELS.min(stages.max(1)) {
                let z = sample(slots, slots as u64 + levels as u64);
                // SlotsToCoeffs: z_j at position rev(j), i.e. the special FFT of the bit-reversed z.
                let s2c =
                    dft_factors(&enc, slots, levels, DftDirection::SlotsToCoeffs, 1.0).unwrap();
                assert_eq!(s2c.len(), levels);
                let mut u = vec![Complex64::new(0.0, 0.0); slots];
                for (j, x) in z.iter().enumerate() {
                    u[bit_reverse(j, slots)] = *x;
                }
                let mut want = u.clone();
                enc.special_fft(&mut want).unwrap();
                let got = apply_all(&s2c, &z);
                assert!(
                    max_diff(&got, &want) < 1e-12 * slots as f64,
                    "s2c {slots}/{levels}"
                );
                // CoeffsToSlots inverts it, with a factor.
                let c2s =
                    dft_factors(&enc, slots, levels, DftDirection::CoeffsToSlots, -0.25).unwrap();
                let back = apply_all(&c2s, &got);
                let scaled: Vec<Complex64> = z.iter().map(|x| x * -0.25).collect();
                assert!(
                    max_diff(&back, &scaled) < 1e-13 * slots as f64,
                    "c2s {slots}/{levels}"
                );
                // Diagonal counts: a group of s stages has at most 2^(s+1) - 1.
                for m in s2c.iter().chain(&c2s) {
                    assert!(m.diagonal_count() < 2usize.pow(stages.div_ceil(levels) as u32 + 1));
                }
            }
        }
        assert!(dft_factors(&enc, 8, 4, DftDirection::SlotsToCoeffs, 1.0).is_err());
        assert!(dft_factors(&enc, 8, 0, DftDirection::SlotsToCoeffs, 1.0).is_err());
        assert!(dft_factors(&enc, 8, 2, DftDirection::SlotsToCoeffs, 0.0).is_err());
        assert!(dft_factors(&enc, 1024, 2, DftDirection::SlotsToCoeffs, 1.0).is_err());
    }

    #[test]
    fn positions() {
        let p = slot_coefficient_positions(16, 4).unwrap();
        // gap 2, bit reversal over 2 bits: 0, 2, 1, 3.
        assert_eq!(p, vec![(0, 8), (4, 12), (2, 10), (6, 14)]);
        assert_eq!(real_value_positions(16, 3).unwrap(), vec![0, 4, 2]);
        assert_eq!(slot_coefficient_positions(16, 1).unwrap(), vec![(0, 8)]);
        assert!(real_value_positions(16, 0).is_err());
        assert!(real_value_positions(16, 9).is_err());
    }
}
