//! The whole PEGASUS pipeline in one call (Fig. 6, Algorithm 6): a CKKS ciphertext of values in
//! `[-B, B]` in, a CKKS ciphertext of `T(v)` out.
//!
//! 1. **Slots to coefficients** (Fig. 6 step 1): [`SlotsToCoeffs`] at the lowest levels of the chain,
//!    with the input scale `Delta_in = q_0 / (4 B) (1 - 2^-4)` folded into its matrices, so that every
//!    coefficient holds `Delta_in v` with `|Delta_in v| < q_0 / 4`, the domain of an arbitrary table
//!    (Section III.B).
//! 2. **Extraction and dimension switch** (steps 2-4): the coefficients of the values become LWE
//!    ciphertexts of dimension `n_lwe` ([`DimensionSwitchKeys`], by one RLWE key switch of the whole
//!    ciphertext or Fig. 9 per ciphertext: [`PipelineOptions::dimension_switch`]).
//! 3. **Look-up table** (step 5): blind rotation in the ring of degree `n` ([`LutEvaluator`]), outputs
//!    `Delta_out T(v)` over `q_0` in dimension `n`, `Delta_out` chosen so that `Delta_out max|T| / q_0`
//!    stays within the fractional part F_mod keeps ([`EvalMod::eps_max`]).
//! 4. **Repacking** ([`PipelineOptions::repacking`]):
//!    * [`Repacking::LinearTransform`], the paper's (steps 6-10): key switch back to `n_lwe`, the tiled
//!      linear transform of Fig. 5 on the repacking key ([`crate::repacking`]), then F_mod;
//!    * [`Repacking::RingPacking`]: the outputs of step 5 are packed as they are (no step 6: its key
//!      switch is the largest error of the paper's path) into one RLWE ciphertext over `q_0`
//!      ([`RingPackingKey`]), raised to the top of the chain ([`Evaluator::mod_raise`], under a sparse
//!      secret when the CKKS secret is dense: [`SparseEncapsulation`]), projected on the
//!      subring of the slots ([`Evaluator::subring_trace`]), brought into the slots by
//!      [`CoeffsToSlots`] and reduced by F_mod, as CKKS bootstrapping for sparse slots does.
//!
//!    Both leave `t = Delta_out T(v) / q_0 + I` in the slots at the scale F_mod takes without a level
//!    ([`EvalMod::normalized_scale`]) and return `T(v)` at the default scale of the output level.

use std::sync::Arc;

use rnsfhe_ckks::dft::{real_value_positions, CoeffsToSlots, CoeffsToSlotsOutput, SlotsToCoeffs};
use rnsfhe_ckks::eval_mod::{EvalMod, EvalModParams};
use rnsfhe_ckks::mod_raise::subring_trace_elements;
use rnsfhe_ckks::{
    Ciphertext, CkksContext, Complex64, Csprng, EncodedLinearTransform, Evaluator, GaloisKeys,
    KeyGenerator, RelinKey,
};
use rnsfhe_lwe::{
    BlindRotation, BlindRotationKey, LookupTable, LutEvaluator, LweCiphertext, LweDimension,
    LweSecretDistribution, LweSecretKey, LweSwitchingKey,
};
use rnsfhe_ring::parallel::active_wait;

use crate::dimension_switch::{DimensionSwitch, DimensionSwitchKeys};
use crate::error::{PegasusError, PegasusResult};
use crate::params::PipelineParams;
use crate::repacking::{self, repacking_rotation_steps, RepackingKey};
use crate::ring_packing::RingPackingKey;
use rnsfhe_ckks::encapsulation::{ciphertext_at_q0, SparseEncapsulation, DEFAULT_SPARSE_WEIGHT};

/// How the look-up tables' outputs return to CKKS (see the [module documentation](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Repacking {
    /// PEGASUS Fig. 6 steps 6-10: key switch to `n_lwe`, Fig. 5, F_mod.
    LinearTransform,
    /// Ring packing of the outputs of step 5, modulus raise, CoeffsToSlots, F_mod.
    RingPacking,
}

/// Options of the pipeline, as a literal struct ([`PipelineOptions::new`] gives the defaults).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PipelineOptions {
    /// Values per ciphertext: the slot count of the inputs (a power of two up to `N / 2`). The
    /// slots-to-coefficients matrices and the rotation keys are made for it.
    pub slots: usize,
    /// The bound `B` of the inputs: every value must lie in `[-B, B]` (the domain of the tables).
    pub input_bound: f64,
    /// Levels of slots-to-coefficients (1 to 4; PEGASUS: 2).
    pub s2c_levels: usize,
    /// Levels of CoeffsToSlots on the ring-packing path (1 to 4).
    pub c2s_levels: usize,
    /// How the values reach the LWE dimension.
    pub dimension_switch: DimensionSwitch,
    /// How the outputs return to CKKS.
    pub repacking: Repacking,
    /// The blind-rotation algorithm (`None`: the parameter set's).
    pub blind_rotation: Option<BlindRotation>,
    /// Sparse-secret encapsulation on the ring-packing path ([`SparseEncapsulation`]) when the CKKS
    /// secret is denser than [`DEFAULT_SPARSE_WEIGHT`]: F_mod then takes the integer parts of a secret of
    /// that weight instead of the CKKS secret's (fewer double angles, less noise).
    pub sparse_encapsulation: bool,
    /// Explicit opt-in for keys the estimators put below 128 bits (the paper's Table IV, test sets).
    pub allow_insecure: bool,
}

impl PipelineOptions {
    /// Defaults for `slots` values in `[-8, 8]` (PEGASUS Fig. 7's range): S2C and CoeffsToSlots on 2 and
    /// 3 levels, the whole-ciphertext dimension switch, ring packing with sparse-secret encapsulation
    /// where it helps, the set's blind rotation, no insecure keys.
    pub fn new(slots: usize) -> Self {
        Self {
            slots,
            input_bound: 8.0,
            s2c_levels: 2,
            c2s_levels: 3,
            dimension_switch: DimensionSwitch::WholeCiphertext,
            repacking: Repacking::RingPacking,
            blind_rotation: None,
            sparse_encapsulation: true,
            allow_insecure: false,
        }
    }
}

/// The LWE-side secrets the key generation makes (the pipeline does not need them; tests and
/// debugging do).
#[derive(Clone, Debug)]
pub struct PegasusSecretKeys {
    /// The LWE secret of dimension `n_lwe` (the tables' inputs).
    pub lwe: LweSecretKey,
    /// The secret of the look-up-table ring, as an LWE secret of dimension `n` (the tables' outputs).
    pub lut_ring: LweSecretKey,
}

/// The repacking key of the chosen path.
#[derive(Clone, Debug)]
enum RepackingKeys {
    LinearTransform {
        back: Box<LweSwitchingKey>,
        key: Box<RepackingKey>,
    },
    RingPacking {
        key: Box<RingPackingKey>,
        encapsulation: Option<Box<SparseEncapsulation>>,
    },
}

/// The evaluation keys of the pipeline (all public material).
#[derive(Clone, Debug)]
pub struct PegasusKeys {
    relin: RelinKey,
    galois: GaloisKeys,
    /// The rotations of [`PegasusEvaluator::repack_pair`] (its last CoeffsToSlots matrix and the
    /// rotation by `slots`), made last so that the other keys are those of the same seed without them.
    pair_galois: Option<GaloisKeys>,
    dimension_switch: DimensionSwitchKeys,
    blind_rotation: BlindRotationKey,
    repacking: RepackingKeys,
}

/// The pipeline: its parameters, options, keys and the precomputed transforms.
#[derive(Debug)]
pub struct PegasusEvaluator {
    params: PipelineParams,
    options: PipelineOptions,
    ckks: Evaluator,
    /// The evaluator with the keys of [`PegasusKeys`]'s `pair_galois`, for `c2s_pair` and the split.
    pair_ckks: Option<Evaluator>,
    s2c: SlotsToCoeffs,
    c2s: Option<CoeffsToSlots>,
    c2s_pair: Option<EncodedLinearTransform>,
    eval_mod: EvalMod,
    dimension_switch: DimensionSwitchKeys,
    lut: LutEvaluator,
    repacking: RepackingKeys,
    /// `Delta_in` at `q_0` for an input at the nominal scale of the S2C start level.
    input_scale: f64,
}

/// Whether the pipeline of `params` and `options` has [`PegasusEvaluator::repack_pair`]'s joint
/// CoeffsToSlots matrix (and so its rotation keys): on the ring-packing path, when twice the slots fit in
/// the ring.
pub(crate) fn has_pair_transform(params: &PipelineParams, options: &PipelineOptions) -> bool {
    options.repacking == Repacking::RingPacking && 2 * options.slots <= params.ckks.max_slots()
}

/// The transforms the options need on `ctx` (they also tell the rotation keys).
struct Transforms {
    s2c: SlotsToCoeffs,
    c2s: Option<CoeffsToSlots>,
    /// The last matrix of CoeffsToSlots for [`PegasusEvaluator::repack_pair`] (see there).
    c2s_pair: Option<EncodedLinearTransform>,
    eval_mod: EvalMod,
    input_scale: f64,
}

impl Transforms {
    fn new(params: &PipelineParams, options: &PipelineOptions) -> PegasusResult<Self> {
        let ctx = &params.ckks;
        if !(options.input_bound.is_finite() && options.input_bound > 0.0) {
            return Err(PegasusError::InvalidParams {
                what: "input bound",
                reason: format!("{} must be finite and positive", options.input_bound),
            });
        }
        let q0 = params.q0() as f64;
        let input_scale = q0 / (4.0 * options.input_bound) * (1.0 - 1.0 / 16.0);
        check_input_margin(params, options, input_scale)?;
        // S2C ends at q_0 (PEGASUS Section IV.B); its factor Delta_in / Delta < 1 goes into the scales
        // of its matrices (see rnsfhe_ckks::dft), so the coefficients hold Delta_in v.
        let start = options.s2c_levels + 1;
        let factor = input_scale / ctx.level_scale(start)?;
        let s2c = SlotsToCoeffs::new(ctx, options.slots, options.s2c_levels, start, factor)?;
        let eval_mod = eval_mod_params(params, options)?;
        let c2s = match options.repacking {
            Repacking::LinearTransform => None,
            Repacking::RingPacking => {
                let top = ctx.max_level();
                // The raised ciphertext is declared at the normalized scale of C2S's output level; C2S
                // keeps the scale, and slot j reads factor * g c / scale = c / q_0 = t (the trace
                // before it multiplies the subring's coefficients by g = N / (2 slots)).
                let level = top - options.c2s_levels;
                let scale = eval_mod.normalized_scale(ctx, level)?;
                let gap = (ctx.n() / 2 / options.slots) as f64;
                Some(CoeffsToSlots::new(
                    ctx,
                    options.slots,
                    options.c2s_levels,
                    top,
                    scale / (q0 * gap),
                    CoeffsToSlotsOutput::RealImaginary,
                )?)
            }
        };
        let c2s_pair = match &c2s {
            // The last matrix on twice the slots, for `repack_pair` (see
            // `CoeffsToSlots::paired_last_matrix`).
            Some(c2s) if has_pair_transform(params, options) => Some(c2s.paired_last_matrix(ctx)?),
            _ => None,
        };
        Ok(Self {
            s2c,
            c2s,
            c2s_pair,
            eval_mod,
            input_scale,
        })
    }

    fn rotation_steps(&self, params: &PipelineParams, options: &PipelineOptions) -> Vec<i64> {
        let mut steps = self.s2c.rotation_steps();
        match &self.c2s {
            Some(c2s) => steps.extend(c2s.rotation_steps()),
            None => {
                // Fig. 5 on the LWE dimension, for batches up to the slot count.
                if let Ok(s) = repacking_rotation_steps(params.lwe.lwe_dimension, options.slots) {
                    steps.extend(s);
                }
            }
        }
        steps.sort_unstable();
        steps.dedup();
        steps
    }
}

/// F_mod for the integer parts the chosen path leaves: `I` comes from `<a, s>` with the LWE secret
/// (Fig. 5) or the CKKS secret (ring packing, after the modulus raise); `K` covers 7 standard deviations
/// (PEGASUS Appendix C.2, [`EvalModParams::k_for_secret`]); `eps_max = 2^-9` (Table IV's `q_0 / Delta`);
/// the scaled cosine of degree 31 with the fewest double angles whose error, carried to the output, is
/// at most the sine's own (`(2 pi)^2 eps_max^3 / 6`, [`rnsfhe_ckks::eval_mod::EvalModBound`]): Table IV's
/// `h = 64` gives `K = 17`, 4 double angles, 9 levels (the paper: 9).
fn eval_mod_params(params: &PipelineParams, options: &PipelineOptions) -> PegasusResult<EvalMod> {
    let norm_sq = match options.repacking {
        Repacking::LinearTransform => params
            .lwe
            .lwe_secret
            .expected_norm_sq(params.lwe.lwe_dimension),
        Repacking::RingPacking => match encapsulation_weight(params, options) {
            Some(h) => h as f64,
            None => ckks_norm_sq(params),
        },
    };
    let k = EvalModParams::k_for_secret(norm_sq, 7.0)?;
    let mut last = None;
    for double_angle in 0..=rnsfhe_ckks::eval_mod::MAX_DOUBLE_ANGLE {
        // Too few double angles are refused (bound above eps_max): try the next count.
        match EvalMod::new(EvalModParams {
            k,
            log_message_ratio: 9.0,
            double_angle,
            cos_degree: 31,
            arcsine_degree: 0,
            start_level: None,
        }) {
            Ok(em) if em.error_bound().double_angle <= em.error_bound().sine => return Ok(em),
            Ok(_) => {}
            Err(e) => last = Some(e),
        }
    }
    Err(match last {
        Some(e) => e.into(),
        None => PegasusError::InvalidParams {
            what: "F_mod",
            reason: format!("no double-angle count reaches the sine's accuracy for K = {k}"),
        },
    })
}

/// Checks that the pipeline's input scale leaves the tables the margin of PEGASUS Eq. (3): the index error
/// of the modulus switch to `2n` (`sqrt((1 + ||s||^2) / 12)` grid steps of `q_0 / 2n` for the LWE key
/// the options choose) at six standard deviations within the `1/16` of `q_0 / 4` that `input_scale`
/// leaves free ([`LookupTable::max_input_scale`]). The smaller the look-up-table ring and the denser the
/// key, the wider that error: Table IV's `h = 64` needs `n >= 2^9`, a uniform binary key of dimension
/// 1024 (`||s||^2 ~ 512`) `n >= 2^11`. The dimension switch's own error (below `2^-8` grid steps at
/// Table IV) is left out: the keys that tell it are made after this check.
///
/// Errors: [`PegasusError::InvalidParams`] when the margin does not fit.
fn check_input_margin(
    params: &PipelineParams,
    options: &PipelineOptions,
    input_scale: f64,
) -> PegasusResult<()> {
    let (_, distribution) = lwe_key_choice(params, options);
    let norm_sq = distribution.expected_norm_sq(params.lwe.lwe_dimension);
    let lut_ctx = params.lwe.lut.context_allowing_insecure()?;
    let largest = LookupTable::max_input_scale(&lut_ctx, options.input_bound, 0.0, norm_sq, false)?;
    if input_scale > largest {
        return Err(PegasusError::InvalidParams {
            what: "look-up-table ring degree",
            reason: format!(
                "n = 2^{}: the index error of the modulus switch to 2n (LWE key of squared norm \
                 {norm_sq:.0}) needs more margin than the pipeline's input scale leaves (six standard \
                 deviations within q_0 / 64); use a larger look-up-table ring",
                params.lwe.lut.log_n
            ),
        });
    }
    Ok(())
}

/// The expected squared norm of the CKKS secret.
fn ckks_norm_sq(params: &PipelineParams) -> f64 {
    LweSecretDistribution::from(params.ckks.params().secret).expected_norm_sq(params.ckks.n())
}

/// The weight of the sparse secret the ring-packing path raises under, if it encapsulates: when the
/// option is on and the CKKS secret is denser than [`DEFAULT_SPARSE_WEIGHT`].
fn encapsulation_weight(params: &PipelineParams, options: &PipelineOptions) -> Option<usize> {
    let dense = match params.ckks.params().secret {
        rnsfhe_core::SecretDistribution::HammingWeight(h) => h > DEFAULT_SPARSE_WEIGHT,
        _ => true,
    };
    (options.sparse_encapsulation && options.repacking == Repacking::RingPacking && dense)
        .then_some(DEFAULT_SPARSE_WEIGHT)
}

/// The blind-rotation algorithm and the LWE key distribution: the options' algorithm or the set's, and
/// a uniform binary key of the set's dimension when the binary algorithm runs on a ternary set.
fn lwe_key_choice(
    params: &PipelineParams,
    options: &PipelineOptions,
) -> (BlindRotation, LweSecretDistribution) {
    let algorithm = options.blind_rotation.unwrap_or(params.lwe.blind_rotation);
    let distribution = match algorithm {
        BlindRotation::Binary if !params.lwe.lwe_secret.is_binary() => {
            LweSecretDistribution::UniformBinary
        }
        _ => params.lwe.lwe_secret,
    };
    (algorithm, distribution)
}

/// The look-up-table ring's context (with the opt-in for insecure keys if the options give it).
fn lut_context(
    params: &PipelineParams,
    options: &PipelineOptions,
) -> PegasusResult<Arc<rnsfhe_core::RlweContext>> {
    Ok(if options.allow_insecure {
        params.lwe.lut.context_allowing_insecure()?
    } else {
        params.lwe.lut.context()?
    })
}

impl PegasusKeys {
    /// Makes every key of the pipeline for the CKKS secret of `keygen`: relinearization and rotation
    /// keys, the dimension switch to a new LWE secret, the blind-rotation key in a new look-up-table
    /// ring, and the repacking keys of the chosen path (on the ring-packing path with `2 slots <= N/2`,
    /// last, the rotations of [`PegasusEvaluator::repack_pair`]). Returns the keys and the new LWE-side
    /// secrets.
    ///
    /// Errors: [`PegasusError::Lwe`] / [`PegasusError::InvalidParams`] for keys below 128 bits without
    /// [`PipelineOptions::allow_insecure`]; invalid options (slots, levels, bound).
    pub fn generate(
        params: &PipelineParams,
        options: &PipelineOptions,
        keygen: &KeyGenerator,
        rng: &mut Csprng,
    ) -> PegasusResult<(Self, PegasusSecretKeys)> {
        let lwe = &params.lwe;
        let (_, distribution) = lwe_key_choice(params, options);
        let lut_ctx = lut_context(params, options)?;
        let secrets = PegasusSecretKeys {
            lwe: LweSecretKey::generate(LweDimension::new(lwe.lwe_dimension)?, distribution, rng)?,
            lut_ring: LweSecretKey::from_ring_key(&rnsfhe_core::SecretKey::generate(
                &lut_ctx, rng,
            )?)?,
        };
        let keys = Self::generate_for(params, options, keygen, &secrets, rng)?;
        Ok((keys, secrets))
    }

    /// [`PegasusKeys::generate`] for LWE-side secrets made before (by an earlier call): keys for other
    /// options (another repacking path, another dimension switch) that work on the same LWE ciphertexts.
    ///
    /// Errors: as [`PegasusKeys::generate`]; [`PegasusError::InvalidParams`] for secrets of other
    /// dimensions than the parameters'; [`PegasusError::Lwe`] for a non-binary LWE secret with the binary
    /// blind rotation.
    pub fn generate_for(
        params: &PipelineParams,
        options: &PipelineOptions,
        keygen: &KeyGenerator,
        secrets: &PegasusSecretKeys,
        rng: &mut Csprng,
    ) -> PegasusResult<Self> {
        let ctx = &params.ckks;
        let lut_ctx = lut_context(params, options)?;
        if secrets.lwe.dimension().get() != params.lwe.lwe_dimension
            || secrets.lut_ring.dimension().get() != lut_ctx.n()
        {
            return Err(PegasusError::InvalidParams {
                what: "LWE-side secrets",
                reason: format!(
                    "dimensions {} and {} are not the parameters' n_lwe = {} and n = {}",
                    secrets.lwe.dimension(),
                    secrets.lut_ring.dimension(),
                    params.lwe.lwe_dimension,
                    lut_ctx.n()
                ),
            });
        }
        let sk = keygen.secret_key();
        let transforms = Transforms::new(params, options)?;
        let relin = keygen.relin_key(rng)?;
        let conjugate = options.repacking == Repacking::RingPacking;
        let trace = if conjugate {
            subring_trace_elements(ctx.n(), options.slots)
        } else {
            Vec::new()
        };
        let galois = keygen.galois_keys_with_elements(
            &transforms.rotation_steps(params, options),
            conjugate,
            &trace,
            rng,
        )?;
        let lwe = &params.lwe;
        let (algorithm, _) = lwe_key_choice(params, options);
        let insecure = options.allow_insecure;
        let (lwe_key, lut_ring) = (&secrets.lwe, &secrets.lut_ring);
        let ring_sk = rnsfhe_core::SecretKey::from_coefficients(&lut_ctx, lut_ring.coefficients())?;
        let methods = [options.dimension_switch];
        let dimension_switch = if insecure {
            DimensionSwitchKeys::generate_allowing_insecure(
                ctx,
                sk,
                lwe_key,
                lwe.key_switch,
                &methods,
                rng,
            )?
        } else {
            DimensionSwitchKeys::generate(ctx, sk, lwe_key, lwe.key_switch, &methods, rng)?
        };
        let blind_rotation =
            BlindRotationKey::generate_with(algorithm, &lut_ctx, &ring_sk, lwe_key, rng)?;
        let repacking = match options.repacking {
            Repacking::LinearTransform => {
                let back = if insecure {
                    LweSwitchingKey::generate_allowing_insecure(
                        lut_ring,
                        lwe_key,
                        lwe.key_switch,
                        rng,
                    )?
                } else {
                    LweSwitchingKey::generate(lut_ring, lwe_key, lwe.key_switch, rng)?
                };
                let top = ctx.max_level();
                let scale = transforms.eval_mod.normalized_scale(ctx, top - 1)?;
                let key = RepackingKey::generate(ctx, sk, lwe_key, scale, rng)?;
                RepackingKeys::LinearTransform {
                    back: Box::new(back),
                    key: Box::new(key),
                }
            }
            Repacking::RingPacking => RepackingKeys::RingPacking {
                key: Box::new(if insecure {
                    RingPackingKey::generate_allowing_insecure(ctx, sk, lut_ring, rng)?
                } else {
                    RingPackingKey::generate(ctx, sk, lut_ring, rng)?
                }),
                encapsulation: encapsulation_weight(params, options)
                    .map(|h| SparseEncapsulation::generate(ctx, sk, h, insecure, rng).map(Box::new))
                    .transpose()?,
            },
        };
        let pair_galois = match &transforms.c2s_pair {
            Some(last) => {
                let mut steps = last.rotation_steps();
                steps.push(options.slots as i64);
                Some(keygen.galois_keys_with_elements(&steps, false, &[], rng)?)
            }
            None => None,
        };
        Ok(Self {
            relin,
            galois,
            pair_galois,
            dimension_switch,
            blind_rotation,
            repacking,
        })
    }
}

// The wire format of the parameters, options and keys: a child module, so that it reads the keys'
// private layout (which repacking path, which keys) without widening it.
#[path = "serialization.rs"]
pub mod serialization;

impl PegasusEvaluator {
    /// The pipeline of `params` and `options` with `keys` (made for the same parameters and options).
    ///
    /// Errors: as [`PegasusKeys::generate`] for invalid options; [`PegasusError::MissingKey`] for keys
    /// made for another dimension switch or repacking path; [`PegasusError::Ckks`] for keys of another
    /// context.
    pub fn new(
        params: PipelineParams,
        options: PipelineOptions,
        keys: PegasusKeys,
    ) -> PegasusResult<Self> {
        let transforms = Transforms::new(&params, &options)?;
        if !keys.dimension_switch.has(options.dimension_switch) {
            return Err(PegasusError::MissingKey {
                operation: "PEGASUS pipeline",
                key: "dimension-switching key of the chosen method (PipelineOptions::dimension_switch)",
            });
        }
        let path_matches = matches!(
            (&keys.repacking, options.repacking),
            (
                RepackingKeys::LinearTransform { .. },
                Repacking::LinearTransform
            ) | (RepackingKeys::RingPacking { .. }, Repacking::RingPacking)
        );
        if !path_matches {
            return Err(PegasusError::MissingKey {
                operation: "PEGASUS pipeline",
                key: "repacking key of the chosen path (PipelineOptions::repacking)",
            });
        }
        let ckks = Evaluator::new(&params.ckks)
            .with_relin_key(keys.relin)?
            .with_galois_keys(keys.galois)?;
        let pair_ckks = keys
            .pair_galois
            .map(|g| Evaluator::new(&params.ckks).with_galois_keys(g))
            .transpose()?;
        Ok(Self {
            ckks,
            pair_ckks,
            s2c: transforms.s2c,
            c2s: transforms.c2s,
            c2s_pair: transforms.c2s_pair,
            eval_mod: transforms.eval_mod,
            input_scale: transforms.input_scale,
            dimension_switch: keys.dimension_switch,
            lut: LutEvaluator::new(keys.blind_rotation),
            repacking: keys.repacking,
            params,
            options,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &PipelineParams {
        &self.params
    }

    /// The options.
    pub fn options(&self) -> &PipelineOptions {
        &self.options
    }

    /// The CKKS evaluator with the pipeline's keys (relinearization and rotations).
    pub fn ckks(&self) -> &Evaluator {
        &self.ckks
    }

    /// The CKKS context.
    pub fn context(&self) -> &Arc<CkksContext> {
        &self.params.ckks
    }

    /// The slots-to-coefficients transform of step 1 (its factor puts `Delta_in v` in the coefficients).
    pub fn slots_to_coeffs(&self) -> &SlotsToCoeffs {
        &self.s2c
    }

    /// The reduction modulo 1 of the repacking.
    pub fn eval_mod(&self) -> &EvalMod {
        &self.eval_mod
    }

    /// The modulus of the LWE ciphertexts [`PegasusEvaluator::to_lwe`] returns (the tables' input
    /// modulus).
    pub fn lwe_modulus(&self) -> PegasusResult<u64> {
        self.dimension_switch
            .output_modulus(self.options.dimension_switch)
    }

    /// The scale of the values in the LWE ciphertexts of [`PegasusEvaluator::to_lwe`], at their modulus.
    pub fn lwe_input_scale(&self) -> PegasusResult<f64> {
        Ok(self.input_scale * self.lwe_modulus()? as f64 / self.params.q0() as f64)
    }

    /// The bound of PEGASUS Eq. (3) on the look-up table's own error for an `lipschitz`-Lipschitz
    /// function ([`LutEvaluator::error_bound`]), with the input error of the dimension switch
    /// ([`DimensionSwitchKeys::switch_variance`]; the slots-to-coefficients noise, about `2^-19` of it at
    /// Table IV, is left out). The repacking adds F_mod's error ([`EvalMod::error_bound`] times
    /// `q_0 / Delta_out`) and the CKKS noise it amplifies.
    ///
    /// Errors: [`PegasusError::MissingKey`] if the dimension-switching key is missing.
    pub fn lut_error_bound(&self, table: &LookupTable, lipschitz: f64) -> PegasusResult<f64> {
        let (_, distribution) = lwe_key_choice(&self.params, &self.options);
        let lwe_norm_sq = distribution.expected_norm_sq(self.params.lwe.lwe_dimension);
        let variance = self.lwe_input_variance()?;
        Ok(self
            .lut
            .error_bound(table, lipschitz, variance.sqrt(), lwe_norm_sq))
    }

    /// The variance of the error of the LWE ciphertexts of [`PegasusEvaluator::to_lwe`], in units of
    /// [`PegasusEvaluator::lwe_modulus`]: the dimension switch's
    /// ([`DimensionSwitchKeys::switch_variance`] for the expected norms of the CKKS and LWE keys; the
    /// slots-to-coefficients noise is left out, as in [`PegasusEvaluator::lut_error_bound`]).
    ///
    /// Errors: [`PegasusError::MissingKey`] if the dimension-switching key is missing.
    pub fn lwe_input_variance(&self) -> PegasusResult<f64> {
        let (_, distribution) = lwe_key_choice(&self.params, &self.options);
        self.dimension_switch.switch_variance(
            self.options.dimension_switch,
            ckks_norm_sq(&self.params),
            distribution.expected_norm_sq(self.params.lwe.lwe_dimension),
        )
    }

    /// The evaluator of step 5 (its key tells the look-up-table ring and the error blind rotation adds,
    /// [`rnsfhe_lwe::BlindRotationKey::added_variance`]).
    pub fn lut_evaluator(&self) -> &LutEvaluator {
        &self.lut
    }

    /// The level the input must have at least: one above the slots-to-coefficients levels.
    pub fn input_level(&self) -> usize {
        self.s2c.start_level()
    }

    /// Steps 1-4: the values of `ct` (its slot count the options', every value in `[-B, B]`) as LWE
    /// ciphertexts of dimension `n_lwe` over [`PegasusEvaluator::lwe_modulus`], in slot order.
    ///
    /// Errors: [`PegasusError::InvalidParams`] for another slot count; [`PegasusError::Ckks`] for a
    /// level below [`PegasusEvaluator::input_level`] or another context; key errors.
    pub fn to_lwe(&self, ct: &Ciphertext) -> PegasusResult<Vec<LweCiphertext>> {
        self.check_slots(ct.slots(), "to_lwe")?;
        let coeffs = self.ckks.slots_to_coeffs(ct, &self.s2c)?;
        let positions = real_value_positions(self.params.ckks.n(), self.options.slots)?;
        self.dimension_switch
            .switch(&coeffs, &positions, self.options.dimension_switch)
    }

    /// The table of `f` for this pipeline: inputs at [`PegasusEvaluator::lwe_input_scale`] over
    /// [`PegasusEvaluator::lwe_modulus`], outputs at the scale the repacking expects.
    ///
    /// Errors: [`PegasusError::InvalidParams`] for a function that is not finite on `[-B, B]`;
    /// table errors.
    pub fn table(&self, f: impl Fn(f64) -> f64) -> PegasusResult<LookupTable> {
        let b = self.options.input_bound;
        let samples = 4 * self.lut.key().context().n();
        let mut max = 0f64;
        for i in 0..=samples {
            let y = f(-b + 2.0 * b * i as f64 / samples as f64);
            if !y.is_finite() {
                return Err(PegasusError::InvalidParams {
                    what: "look-up-table function",
                    reason: format!("it is not finite at some input in [-{b}, {b}]"),
                });
            }
            max = max.max(y.abs());
        }
        let q0 = self.params.q0() as f64;
        // Keep |Delta_out T| / q_0 below 15/16 of F_mod's eps_max (room for the noise).
        let output_scale = q0 * self.eval_mod.eps_max() * (15.0 / 16.0) / max.max(1e-300).max(1.0);
        Ok(LookupTable::from_fn_for_input_modulus(
            self.lut.key().context(),
            self.lwe_modulus()?,
            self.lwe_input_scale()?,
            output_scale,
            f,
        )?)
    }

    /// Step 5: `table` on each ciphertext, in parallel: LWE ciphertexts of dimension `n` over `q_0`.
    ///
    /// Errors: as [`LutEvaluator::evaluate`].
    pub fn lut(
        &self,
        cts: &[LweCiphertext],
        table: &LookupTable,
    ) -> PegasusResult<Vec<LweCiphertext>> {
        Ok(self.lut.evaluate_many(cts, table)?)
    }

    /// Steps 6-10 (or ring packing): the outputs of [`PegasusEvaluator::lut`] made by `table` back into
    /// one CKKS ciphertext of `T(v)` in slot order.
    ///
    /// Errors: [`PegasusError::InvalidParams`] for more ciphertexts than the slot count; key and level
    /// errors.
    pub fn repack(&self, cts: &[LweCiphertext], table: &LookupTable) -> PegasusResult<Ciphertext> {
        active_wait(|| self.repack_waiting(cts, table))
    }

    /// The work of [`Self::repack`], which runs it inside [`active_wait`] (a long
    /// sequence of short parallel sections).
    fn repack_waiting(
        &self,
        cts: &[LweCiphertext],
        table: &LookupTable,
    ) -> PegasusResult<Ciphertext> {
        let slots = self.options.slots;
        if cts.is_empty() || cts.len() > slots {
            return Err(PegasusError::InvalidParams {
                what: "repacking size",
                reason: format!(
                    "{} ciphertexts: the pipeline repacks 1 to {slots} (its slot count)",
                    cts.len()
                ),
            });
        }
        let q0 = self.params.q0() as f64;
        let t = match &self.repacking {
            RepackingKeys::LinearTransform { back, key } => {
                let ks_modulus = back.params().modulus;
                let narrow = cts
                    .iter()
                    .map(|ct| {
                        let ct = if ct.modulus().value() == ks_modulus {
                            ct.clone()
                        } else {
                            ct.switch_modulus(ks_modulus)?
                        };
                        back.switch(&ct)
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                repacking::linear_transform(&self.ckks, key, &narrow, None)?
            }
            RepackingKeys::RingPacking { key, encapsulation } => {
                let c2s = self.c2s.as_ref().ok_or(PegasusError::MissingKey {
                    operation: "ring-packing repacking",
                    key: "CoeffsToSlots transform",
                })?;
                self.ring_repack(key, encapsulation.as_deref(), c2s, cts)?
            }
        };
        let factor = q0 / table.output_scale();
        Ok(self.ckks.eval_mod(&t, &self.eval_mod, factor)?)
    }

    /// Ring packing of `cts` at the coefficients CoeffsToSlots reads into slots `0, 1, ...`, modulus
    /// raise, CoeffsToSlots: slots `t = c / q_0`.
    fn ring_repack(
        &self,
        key: &RingPackingKey,
        encapsulation: Option<&SparseEncapsulation>,
        c2s: &CoeffsToSlots,
        cts: &[LweCiphertext],
    ) -> PegasusResult<Ciphertext> {
        let raised = self.pack_raise(key, encapsulation, cts, &[])?;
        let raised = self.ckks.subring_trace(&raised, self.options.slots)?;
        match self.ckks.coeffs_to_slots(&raised, c2s)? {
            rnsfhe_ckks::dft::CoeffsToSlotsResult::RealImaginary { real, .. } => Ok(real),
            rnsfhe_ckks::dft::CoeffsToSlotsResult::Complex(ct) => Ok(ct),
        }
    }

    /// Ring packing of `real` at the coefficients CoeffsToSlots reads into the real parts of slots
    /// `0, 1, ...` and of `imaginary` at those of their imaginary parts, modulus raise: the input of
    /// the trace to the subring of the slots and of CoeffsToSlots.
    fn pack_raise(
        &self,
        key: &RingPackingKey,
        encapsulation: Option<&SparseEncapsulation>,
        real: &[LweCiphertext],
        imaginary: &[LweCiphertext],
    ) -> PegasusResult<Ciphertext> {
        let ctx = &self.params.ckks;
        let n = ctx.n();
        let slots = self.options.slots;
        let positions = real_value_positions(n, slots)?;
        // Input i goes to coefficient positions[i] = rev(i) * gap (its imaginary part to N/2 +
        // positions[i], slots * gap = N/2); packing puts input p at p * gap.
        let gap = n / (2 * slots);
        let width = if imaginary.is_empty() {
            slots
        } else {
            2 * slots
        };
        let mut source: Vec<Option<&LweCiphertext>> = vec![None; width];
        for (ct, &pos) in real.iter().zip(&positions) {
            source[pos / gap] = Some(ct);
        }
        for (ct, &pos) in imaginary.iter().zip(&positions) {
            source[slots + pos / gap] = Some(ct);
        }
        let first = real
            .first()
            .or(imaginary.first())
            .ok_or(PegasusError::InvalidParams {
                what: "repacking size",
                reason: "no ciphertext to repack".into(),
            })?;
        let zero = LweCiphertext::trivial(first.modulus(), first.dimension(), 0);
        let ordered: Vec<LweCiphertext> = source
            .into_iter()
            .map(|s| s.map_or_else(|| zero.clone(), LweCiphertext::clone))
            .collect();
        let packed = key.pack_with_stride(&ordered, gap)?;
        let scale = self
            .eval_mod
            .normalized_scale(ctx, ctx.max_level() - self.options.c2s_levels)?;
        let top = ctx.max_level();
        let raised = match encapsulation {
            Some(enc) => enc.raise(&self.ckks, packed.ciphertext(), scale, slots, top)?,
            None => {
                let low = ciphertext_at_q0(ctx, packed.ciphertext(), scale, slots)?;
                self.ckks.mod_raise(&low, top)?
            }
        };
        Ok(raised)
    }

    /// Two sets of outputs of [`PegasusEvaluator::lut`], `first` made by `first_table` and `second` by
    /// `second_table` (1 to `slots` ciphertexts each), back into two CKKS ciphertexts of `T(v)` in slot
    /// order (the rest of the slots 0), by **one** repacking when the pipeline has the keys for it: the
    /// ring-packing path with `2 slots <= N/2`. Then `first` goes to the real parts of the coefficients
    /// CoeffsToSlots reads and `second` to their imaginary parts, one packing, raise, trace and
    /// CoeffsToSlots whose last matrix puts the two halves side by side in `2 slots` slots (at no
    /// level, see `CoeffsToSlots::paired_last_matrix`), one F_mod (with the factor of `first_table`; F_mod works slot by
    /// slot, and each table keeps its values within the fraction F_mod reduces), then one mask
    /// multiplication per output (which also brings `second` from the factor of `first_table` to its
    /// own) and one rotation by `slots`, which makes each half periodic of period `slots`: a ciphertext
    /// of `slots` slots. Instead of two repackings, one repacking and two plaintext multiplications and
    /// rotations at the output level.
    ///
    /// Both outputs are at **one level below** [`PegasusEvaluator::repack`]'s (the masks' level; on
    /// the other paths two repackings dropped by a level, so that the level does not depend on the
    /// path, each with [`PegasusEvaluator::repack`]'s slot count), at the default scale of that level
    /// on the ring-packing path; their error is [`PegasusEvaluator::repack`]'s, plus
    /// the masks' rounding (relative `2^-log_scale`).
    ///
    /// The keys: [`PegasusKeys::generate`] makes the rotations this needs (the last matrix's and the
    /// one by `slots`) on the ring-packing path when `2 slots <= N/2`.
    ///
    /// Errors: [`PegasusError::InvalidParams`] for no ciphertext or more than `slots` in either set;
    /// key and level errors.
    pub fn repack_pair(
        &self,
        first: &[LweCiphertext],
        first_table: &LookupTable,
        second: &[LweCiphertext],
        second_table: &LookupTable,
    ) -> PegasusResult<(Ciphertext, Ciphertext)> {
        active_wait(|| self.repack_pair_waiting(first, first_table, second, second_table))
    }

    /// The work of [`Self::repack_pair`], inside [`active_wait`].
    fn repack_pair_waiting(
        &self,
        first: &[LweCiphertext],
        first_table: &LookupTable,
        second: &[LweCiphertext],
        second_table: &LookupTable,
    ) -> PegasusResult<(Ciphertext, Ciphertext)> {
        let slots = self.options.slots;
        for cts in [first, second] {
            if cts.is_empty() || cts.len() > slots {
                return Err(PegasusError::InvalidParams {
                    what: "repacking size",
                    reason: format!(
                        "{} ciphertexts: the pipeline repacks 1 to {slots} (its slot count) per output",
                        cts.len()
                    ),
                });
            }
        }
        let (key, encapsulation, c2s, last, pair) =
            match (&self.repacking, &self.c2s, &self.c2s_pair, &self.pair_ckks) {
                (
                    RepackingKeys::RingPacking { key, encapsulation },
                    Some(c2s),
                    Some(last),
                    Some(pair),
                ) => (key, encapsulation.as_deref(), c2s, last, pair),
                _ => {
                    // No joint repacking on this path: two, at the level a joint one returns.
                    let a = self.repack_waiting(first, first_table)?;
                    let b = self.repack_waiting(second, second_table)?;
                    let level = a.level().saturating_sub(1).max(1);
                    return Ok((
                        self.ckks.drop_to_level(&a, level)?,
                        self.ckks.drop_to_level(&b, level)?,
                    ));
                }
            };
        let raised = self.pack_raise(key, encapsulation, first, second)?;
        // CoeffsToSlots with the last matrix on 2 slots slots, then w' + conj(w'). The trace runs
        // before the last matrix, not before the first: the matrices on `slots` slots (diagonals in
        // the subring, rotations) commute with the trace's automorphisms, so it may come after them,
        // where its key switches are at lower levels; the last matrix's `P` does not (it would move
        // what the trace clears into the subring of `2 slots` slots).
        let mut acc = self.ckks.drop_to_level(&raised, c2s.start_level())?;
        let matrices = c2s.matrices();
        for m in &matrices[..matrices.len().saturating_sub(1)] {
            acc = self.ckks.rescale(&self.ckks.linear_transform(&acc, m)?)?;
        }
        let acc = self.ckks.subring_trace(&acc, slots)?;
        let w = self.ckks.rescale(&pair.linear_transform(&acc, last)?)?;
        let joined = self.ckks.add(&w, &self.ckks.conjugate(&w)?)?;
        let q0 = self.params.q0() as f64;
        let reduced =
            self.ckks
                .eval_mod(&joined, &self.eval_mod, q0 / first_table.output_scale())?;
        let ratio = first_table.output_scale() / second_table.output_scale();
        let one = Complex64::new(1.0, 0.0);
        let zero = Complex64::new(0.0, 0.0);
        let mask_first: Vec<Complex64> = (0..2 * slots)
            .map(|j| if j < first.len() { one } else { zero })
            .collect();
        let mask_second: Vec<Complex64> = (0..2 * slots)
            .map(|j| {
                if j >= slots && j - slots < second.len() {
                    one * ratio
                } else {
                    zero
                }
            })
            .collect();
        let a = self.split_half(pair, &reduced, &mask_first)?;
        let b = self.split_half(pair, &reduced, &mask_second)?;
        Ok((a, b))
    }

    /// One half of a ciphertext of `2 slots` slots: the product by `mask` (zero outside the half), then
    /// plus its rotation by `slots` (the half in both halves), read as a ciphertext of `slots` slots.
    /// `pair` holds the rotation key.
    fn split_half(
        &self,
        pair: &Evaluator,
        ct: &Ciphertext,
        mask: &[Complex64],
    ) -> PegasusResult<Ciphertext> {
        let slots = self.options.slots;
        let ctx = &self.params.ckks;
        let scale = self.ckks.factor_scale(ct)?;
        let pt = ctx.encode_at_scale(mask, 2 * slots, ct.level(), scale)?;
        let masked = self.ckks.rescale(&self.ckks.multiply_plain(ct, &pt)?)?;
        let both = self
            .ckks
            .add(&masked, &pair.rotate(&masked, slots as i64)?)?;
        Ok(Ciphertext::new(
            ctx,
            both.inner().clone(),
            both.scale(),
            slots,
        )?)
    }

    /// The whole pipeline: `T(v)` for every value of `ct` (Fig. 6), with `table` from
    /// [`PegasusEvaluator::table`].
    ///
    /// Errors: as [`PegasusEvaluator::to_lwe`], [`PegasusEvaluator::lut`], [`PegasusEvaluator::repack`].
    pub fn apply_table(&self, ct: &Ciphertext, table: &LookupTable) -> PegasusResult<Ciphertext> {
        let lwes = self.to_lwe(ct)?;
        let outs = self.lut(&lwes, table)?;
        self.repack(&outs, table)
    }

    /// The whole pipeline for a function: [`PegasusEvaluator::table`] then
    /// [`PegasusEvaluator::apply_table`].
    ///
    /// Errors: as both.
    pub fn apply(&self, ct: &Ciphertext, f: impl Fn(f64) -> f64) -> PegasusResult<Ciphertext> {
        let table = self.table(f)?;
        self.apply_table(ct, &table)
    }

    fn check_slots(&self, slots: usize, operation: &'static str) -> PegasusResult<()> {
        if slots != self.options.slots {
            return Err(PegasusError::InvalidParams {
                what: "slot count",
                reason: format!(
                    "{operation}: the ciphertext has {slots} slots, the pipeline was made for {} \
                     (PipelineOptions::slots)",
                    self.options.slots
                ),
            });
        }
        Ok(())
    }
}
