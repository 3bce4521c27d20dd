//! `rnsfhe params [PRESET]`: every CKKS and BFV preset with its sizes, security and expected precision,
//! the PEGASUS (LWE) parameter sets and the PEGASUS pipeline presets (`PipelinePreset`: the CKKS chain and
//! the estimate of every key of the pipeline), or one preset in detail (its prime chain included).
//!
//! # Security
//!
//! Two figures are printed for each preset:
//!
//! * the check of the Homomorphic Encryption Standard table ([`rnsfhe_core::security::estimate`]), which
//!   the contexts enforce;
//! * the built-in lattice estimate ([`rnsfhe_core::lwe_estimator`]) of the modulus the keys live under:
//!   `QP` for CKKS (the key-switching keys are RLWE samples modulo `QP`), for BFV `Q` (HPS relinearize by
//!   CRT decomposition without special primes; their `P` is an internal basis of multiplication) or `Q p_0`
//!   where the extended public key fits, `Q P_ks` with hybrid key switching. The
//!   "bits" are those of the HE Standard's own cost model (`0.292 beta + 16.4 + log2(8 d)`, the one its
//!   128/192/256-bit table was computed with); the core-SVP figure (`0.292 beta` alone) is shown beside
//!   it and is 30-36 bits lower.
//!
//! A preset is marked `INSECURE` when it claims no 128-bit level ([`Preset::claimed_security`] is `None`:
//! the RNS-CKKS paper presets, sparse secret `h = 64`, 80-bit target), when it is built with the insecure
//! opt-in, when the HE Standard table does not establish 128 bits, or when the estimate is below 128 bits.
//! Every reason that applies is printed. For sparse secrets the estimate leaves out hybrid attacks and is
//! optimistic, so a sparse-secret preset is never called secure here, whatever its estimate.
//!
//! # Conversion modes
//!
//! The table lists the basis-conversion modes each preset builds in: for CKKS every mode, the context
//! being built from [`Preset::params_with_conversion`] (`ExactInteger` with `dnum = L + 1` where `q_0`
//! would share a digit with the scaling primes, see `rnsfhe_ckks::params`); for BFV `ExactFloat` and
//! `ExactInteger` ([`BfvPreset::params_with_conversion`]; `Fast` cannot serve HPS multiplication), with
//! `ExactInteger`'s `log2 Q` where it differs. The detailed view shows each mode's layout and Qu-Xu
//! Theorem 1 figures.
//!
//! # Expected precision (CKKS)
//!
//! Composed from the per-coefficient noise estimates of `rnsfhe-core` ([`rnsfhe_core::noise`], RNS-CKKS
//! Appendix A): public-key encryption (`sigma^2 (2N/3 + 1 + ||s||^2)`) plus the encoder's rounding
//! (`1/12`); one Mult&RS adds the key-switching error of relinearization at the top level divided by the
//! dropped prime and the rescaling rounding `(1 + ||s||^2) / 12`, and doubles the fresh error term (inputs of
//! magnitude 1: `z_1 e_2 + z_2 e_1`). `||s||^2` is `h` for a sparse secret and `2N/3` (its mean) for a
//! uniform ternary one. A coefficient error of standard deviation `s` gives each slot's real (or
//! imaginary) part an error of standard deviation `s sqrt(N/2) / Delta` (canonical embedding: a sum of `N`
//! terms with `cos^2` averaging 1/2). The printed "bits" are `-log2` of that standard deviation (typical
//! slot); the minimum over the `N` slot parts, what [`rnsfhe_ckks::PrecisionStats::min_bits`] reports, is
//! about `log2 sqrt(2 ln N)` (2.1-2.3 bits for `N = 2^13 .. 2^16`) lower. Measured for `PaperTable1L5` (README, `bench
//! ckks-table1`): fresh 36.2 min / 40.1 median against 39.1 here (min estimate 36.9).

use std::fmt::Write as _;

use anyhow::Context as _;
use rnsfhe_bfv::{BfvParams, BfvPreset};
use rnsfhe_ckks::{BootstrapParams, CkksContext, EvalMod, Preset};
use rnsfhe_core::lwe_estimator::LweSecret;
use rnsfhe_core::lwe_estimator::{estimate_rlwe, AttackCost, LweEstimate};
use rnsfhe_core::security::SecurityEstimate;
use rnsfhe_core::{ConversionMode, SecretDistribution};
use rnsfhe_lwe::PegasusPreset;
use rnsfhe_pegasus::{PipelineParams, PipelinePreset, RingPackingKey};

use rnsfhe_bench::markdown_table;

/// The security level below which a preset is marked `INSECURE` (bits, HE Standard cost model).
pub const TARGET_BITS: f64 = 128.0;

/// What the summary table prints about one preset, whichever its scheme.
struct Summary {
    name: String,
    scheme: &'static str,
    log_n: u32,
    log_q: f64,
    /// `log2` of the modulus of the keys (`QP` for CKKS, `Q` for BFV).
    log_key_modulus: f64,
    /// The user's depth; for CKKS chains with bootstrapping primes `L + b btp`.
    depth: String,
    slots: String,
    scale: String,
    he_standard: SecurityEstimate,
    estimate: LweEstimate,
    precision: String,
    /// The basis-conversion modes the preset builds in (module documentation).
    modes: String,
    /// Why the preset is insecure; empty when it is not.
    insecure: Vec<Reason>,
}

/// Every basis-conversion mode, in the order of the tables.
const MODES: [ConversionMode; 3] = [
    ConversionMode::Fast,
    ConversionMode::ExactFloat,
    ConversionMode::ExactInteger,
];

/// The contexts of a CKKS preset in every mode that builds ([`Preset::params_with_conversion`]), and the
/// error of each mode that does not.
fn ckks_modes(
    preset: Preset,
) -> Vec<(
    ConversionMode,
    Result<std::sync::Arc<CkksContext>, rnsfhe_ckks::Error>,
)> {
    MODES
        .into_iter()
        .map(|mode| (mode, CkksContext::new(preset.params_with_conversion(mode))))
        .collect()
}

/// The short form of [`ckks_modes`] for the table, from the preset's context `ctx` (its own mode,
/// `Fast`): the modes that build, `ExactInteger` with its `dnum` where it differs from the preset's. Only
/// `ExactInteger` can refuse a chain (Qu-Xu Theorem 1), so only its context is built here; `Fast` and
/// `ExactFloat` convert any basis and share the preset's chain (`rnsfhe params <preset>` and the
/// `preset_modes` tests of rnsfhe-ckks build all three).
fn ckks_modes_short(preset: Preset, ctx: &CkksContext) -> String {
    let dnum = ctx.params().dnum;
    MODES
        .into_iter()
        .filter_map(|mode| {
            let d = if mode == ConversionMode::ExactInteger {
                CkksContext::new(preset.params_with_conversion(mode))
                    .ok()?
                    .params()
                    .dnum
            } else {
                dnum
            };
            Some(if d == dnum {
                mode.to_string()
            } else {
                format!("{mode} (dnum {d})")
            })
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The BFV counterpart: `ExactFloat` and `ExactInteger` when their parameters generate (the generator
/// checks Qu-Xu Theorem 1 for `ExactInteger`), `ExactInteger` with its `log2 Q` where it differs.
fn bfv_modes_short(preset: BfvPreset) -> String {
    let float = preset
        .params_with_conversion(ConversionMode::ExactFloat)
        .ok();
    [ConversionMode::ExactFloat, ConversionMode::ExactInteger]
        .into_iter()
        .filter_map(|mode| {
            let p = preset.params_with_conversion(mode).ok()?;
            let same_q = float.as_ref().is_some_and(|f| f.q_moduli == p.q_moduli);
            Some(if same_q {
                mode.to_string()
            } else {
                format!("{mode} (log Q {:.1})", log2_product(&p.q_moduli))
            })
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `rnsfhe params`: the summary table of every preset; `rnsfhe params <name>`: one preset in detail.
///
/// Errors: an unknown preset name (the message lists the valid ones), a preset whose parameters or
/// context cannot be built.
pub fn run(preset: Option<&str>) -> anyhow::Result<()> {
    match preset {
        None => {
            print!("{}", summary_table()?);
            Ok(())
        }
        Some(name) => {
            print!("{}", detail(name)?);
            Ok(())
        }
    }
}

/// Looks a preset up by name, case-insensitively, among the CKKS and the BFV presets.
enum AnyPreset {
    Ckks(Preset),
    Bfv(BfvPreset),
    Pipeline(PipelinePreset),
}

fn find_preset(name: &str) -> anyhow::Result<AnyPreset> {
    let matches = |p: &dyn std::fmt::Debug| format!("{p:?}").eq_ignore_ascii_case(name);
    if let Some(p) = Preset::ALL.into_iter().find(|p| matches(p)) {
        return Ok(AnyPreset::Ckks(p));
    }
    if let Some(p) = BfvPreset::ALL.into_iter().find(|p| matches(p)) {
        return Ok(AnyPreset::Bfv(p));
    }
    if let Some(p) = PipelinePreset::ALL.into_iter().find(|p| matches(p)) {
        return Ok(AnyPreset::Pipeline(p));
    }
    let ckks: Vec<String> = Preset::ALL.iter().map(|p| format!("{p:?}")).collect();
    let bfv: Vec<String> = BfvPreset::ALL.iter().map(|p| format!("{p:?}")).collect();
    let pipeline: Vec<String> = PipelinePreset::ALL
        .iter()
        .map(|p| format!("{p:?}"))
        .collect();
    anyhow::bail!(
        "unknown preset {name:?}: expected one of the CKKS presets {}, the BFV presets {} or the \
         PEGASUS pipeline presets {} (case-insensitive)",
        ckks.join(", "),
        bfv.join(", "),
        pipeline.join(", ")
    )
}

/// One reason to mark a preset `INSECURE`: a short form for the table and a full sentence for the
/// detailed view.
struct Reason {
    short: String,
    long: String,
}

fn reason(short: impl Into<String>, long: impl Into<String>) -> Reason {
    Reason {
        short: short.into(),
        long: long.into(),
    }
}

/// The reasons to mark a preset `INSECURE` (module documentation); empty when none applies.
/// `no_claim` is `None` for a preset that claims 128 bits, otherwise what it is instead.
fn insecurity(
    no_claim: Option<&str>,
    opt_in: bool,
    secret: SecretDistribution,
    he_standard: SecurityEstimate,
    estimate: &LweEstimate,
) -> Vec<Reason> {
    let mut why = Vec::new();
    if let Some(what) = no_claim {
        why.push(reason(
            "no 128-bit claim",
            format!("the preset claims no 128-bit level: {what}"),
        ));
    }
    if let SecretDistribution::HammingWeight(h) = secret {
        why.push(reason(
            format!("sparse secret h = {h}"),
            format!(
                "sparse secret h = {h}: outside the HE Standard table, and the estimate ignores hybrid \
                 attacks (optimistic)"
            ),
        ));
    }
    if opt_in {
        why.push(reason("insecure opt-in", "built with the insecure opt-in"));
    }
    if !he_standard.is_secure() {
        why.push(reason(
            format!("HE Standard: {}", he_short(he_standard)),
            format!("HE Standard: {he_standard}"),
        ));
    }
    let bits = estimate.security_bits();
    if bits < TARGET_BITS {
        why.push(reason(
            format!("estimated {bits:.1} < {TARGET_BITS}"),
            format!("estimated {bits:.1} bits < {TARGET_BITS} (HE Standard cost model)"),
        ));
    }
    why
}

/// Expected precision of a CKKS context, in bits of a slot's real part (module documentation).
struct CkksPrecision {
    /// `||s||^2` assumed by the noise formulas.
    secret_norm2: usize,
    /// Per-coefficient standard deviation of the fresh (public-key) error, encoding rounding included.
    fresh_coefficient_std: f64,
    /// Per-coefficient standard deviation of the relinearization (key-switching) error at the top level.
    key_switch_std: f64,
    /// `-log2` of a slot part's error standard deviation after encoding and public-key encryption.
    fresh_bits: f64,
    /// The same after one Mult&RS of two fresh ciphertexts holding values of magnitude 1.
    mult_bits: f64,
    /// `log2 sqrt(2 ln N)`: how far the minimum over the `N` slot parts lies below the typical figure.
    min_offset_bits: f64,
}

fn ckks_precision(ctx: &CkksContext) -> anyhow::Result<CkksPrecision> {
    let rlwe = ctx.rlwe();
    let n = ctx.n() as f64;
    let secret_norm2 = match ctx.params().secret {
        SecretDistribution::HammingWeight(h) => h,
        SecretDistribution::Ternary => (2 * ctx.n()).div_ceil(3),
    };
    // Fresh ciphertexts live at the user's top level (the bootstrapping primes above are ModRaise's).
    let top = ctx.user_max_level();
    let encode_var = 1.0 / 12.0;
    let fresh = rlwe.fresh_noise_public(secret_norm2).std_dev;
    let fresh_coefficient_std = (fresh * fresh + encode_var).sqrt();
    let key_switch_std = rlwe.key_switch_noise(top, secret_norm2)?.std_dev;
    let rescale_var = (1.0 + secret_norm2 as f64) / 12.0;
    let delta = ctx.level_scale(top)?;
    let q_last = *top
        .checked_sub(1)
        .and_then(|i| ctx.q_moduli().get(i))
        .context("the chain has no prime at the top level")? as f64;
    let delta_after = delta * delta / q_last;
    let to_slot = (n / 2.0).sqrt();
    let fresh_slot = fresh_coefficient_std * to_slot / delta;
    let ks_slot = key_switch_std / q_last * to_slot / delta_after;
    let rescale_slot = rescale_var.sqrt() * to_slot / delta_after;
    let mult_slot =
        (2.0 * fresh_slot * fresh_slot + ks_slot * ks_slot + rescale_slot * rescale_slot).sqrt();
    Ok(CkksPrecision {
        secret_norm2,
        fresh_coefficient_std,
        key_switch_std,
        fresh_bits: -fresh_slot.log2(),
        mult_bits: -mult_slot.log2(),
        min_offset_bits: (2.0 * n.ln()).sqrt().log2(),
    })
}

/// The bootstrapping circuit [`BootstrapParams::for_context`] chooses for full slots, in one line:
/// CoeffsToSlots, EvalMod and SlotsToCoeffs levels, `K` and the levels left; or why it refuses.
fn bootstrap_circuit(ctx: &CkksContext) -> String {
    let params = match BootstrapParams::for_context(ctx, ctx.max_slots()) {
        Ok(p) => p,
        Err(e) => return format!("none ({e})"),
    };
    match EvalMod::new(params.eval_mod) {
        Ok(em) => {
            let depth = params.c2s_levels + em.depth() + params.s2c_levels;
            format!(
                "CoeffsToSlots {} + EvalMod {} (K = {}, {} double angles, arcsine degree {}) + \
                 SlotsToCoeffs {} levels, {} levels left",
                params.c2s_levels,
                em.depth(),
                params.eval_mod.k,
                params.eval_mod.double_angle,
                params.eval_mod.arcsine_degree,
                params.s2c_levels,
                (ctx.max_level() - depth).saturating_sub(1)
            )
        }
        Err(e) => format!("none ({e})"),
    }
}

fn ckks_summary(preset: Preset) -> anyhow::Result<(Summary, std::sync::Arc<CkksContext>)> {
    let ctx = CkksContext::new(preset.params())
        .with_context(|| format!("building the context of {preset:?}"))?;
    let p = ctx.params();
    let estimate = estimate_rlwe(ctx.n(), ctx.log_qp(), p.sigma, p.secret)?;
    let he_standard = ctx.security();
    let precision = ckks_precision(&ctx)?;
    let insecure = insecurity(
        preset.claimed_security().is_none().then_some(match preset {
            Preset::BootTestN15 => "a bootstrapping set for tests and benchmarks (sparse secret, QP beyond the 128-bit bound)",
            _ => "the RNS-CKKS paper's parameters, which target 80 bits (Section 5.1)",
        }),
        p.insecure_for_testing,
        p.secret,
        he_standard,
        &estimate,
    );
    let summary = Summary {
        name: format!("{preset:?}"),
        scheme: "CKKS",
        log_n: p.log_n,
        log_q: ctx.log_q(),
        log_key_modulus: ctx.log_qp(),
        depth: if ctx.bootstrap_levels() > 0 {
            format!("{} + {} btp", p.levels, ctx.bootstrap_levels())
        } else {
            p.levels.to_string()
        },
        slots: ctx.max_slots().to_string(),
        scale: format!("2^{}", p.log_scale),
        he_standard,
        estimate,
        precision: format!("{:.1} / {:.1}", precision.fresh_bits, precision.mult_bits),
        modes: ckks_modes_short(preset, &ctx),
        insecure,
    };
    Ok((summary, ctx))
}

/// BFV slots: `N` when `t` is a prime `= 1 mod 2N` (batching), otherwise coefficient encoding.
fn bfv_slots(params: &BfvParams) -> String {
    let t = params.plaintext_modulus;
    let two_n = 2 * params.n() as u64;
    if rnsfhe_math::primes::is_prime(t) && t % two_n == 1 {
        params.n().to_string()
    } else {
        format!("- (t = {t}: {} coefficients)", params.n())
    }
}

fn log2_product(moduli: &[u64]) -> f64 {
    moduli.iter().map(|&q| (q as f64).log2()).sum()
}

fn bfv_summary(preset: BfvPreset) -> anyhow::Result<(Summary, BfvParams)> {
    let params = preset
        .params()
        .with_context(|| format!("generating the parameters of {preset:?}"))?;
    let n = params.n();
    let log_q = log2_product(&params.q_moduli);
    // BFV keys are RLWE samples modulo Q, or Q p_0 for extended public keys where that fits the bound,
    // with a uniform ternary secret (rnsfhe_bfv::params, "Security").
    let log_key_modulus = params.log2_key_modulus();
    let secret = SecretDistribution::Ternary;
    let estimate = estimate_rlwe(n, log_key_modulus, params.sigma, secret)?;
    let he_standard = params.security();
    // Every BFV preset is generated within the 128-bit HE Standard bound and claims that level
    // (BfvParams::generate); the opt-in is the BFV equivalent of an absent claim.
    let insecure = insecurity(
        params
            .insecure_for_testing
            .then_some("parameters with the insecure_for_testing opt-in"),
        params.insecure_for_testing,
        secret,
        he_standard,
        &estimate,
    );
    let summary = Summary {
        name: format!("{preset:?}"),
        scheme: "BFV",
        log_n: params.log_n,
        log_q,
        log_key_modulus,
        depth: preset.depth().to_string(),
        slots: bfv_slots(&params),
        scale: "-".into(),
        he_standard,
        estimate,
        precision: "exact (mod t)".into(),
        modes: bfv_modes_short(preset),
        insecure,
    };
    Ok((summary, params))
}

/// The short form of a secret distribution for the table.
fn secret_short(secret: LweSecret) -> String {
    match secret {
        LweSecret::Ternary => "ternary".into(),
        LweSecret::HammingWeight(h) => format!("h = {h}"),
        LweSecret::StdDev(s) => format!("std {s:.2}"),
    }
}

/// The short form of the HE Standard check for the table.
fn he_short(e: SecurityEstimate) -> String {
    match e {
        SecurityEstimate::AtLeast(l) => format!(">= {}", l.bits()),
        SecurityEstimate::Below128 => "< 128".into(),
        SecurityEstimate::ErrorTooNarrow => "< 128 (sigma)".into(),
        SecurityEstimate::Unknown => "not covered".into(),
        _ => "unknown".into(),
    }
}

fn bits(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.1}")
    } else {
        "inf".into()
    }
}

/// The status: `ok` or `INSECURE: reasons` (short or full reasons).
fn status(insecure: &[Reason], full: bool) -> String {
    if insecure.is_empty() {
        return "ok".into();
    }
    let reasons: Vec<&str> = insecure
        .iter()
        .map(|r| if full { &r.long } else { &r.short }.as_str())
        .collect();
    format!("INSECURE: {}", reasons.join("; "))
}

fn summary_table() -> anyhow::Result<String> {
    let mut rows = Vec::new();
    for preset in Preset::ALL {
        rows.push(ckks_summary(preset)?.0);
    }
    for preset in BfvPreset::ALL {
        rows.push(bfv_summary(preset)?.0);
    }
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|s| {
            vec![
                s.name.clone(),
                s.scheme.into(),
                format!("2^{}", s.log_n),
                format!("{:.1}", s.log_q),
                format!("{:.1}", s.log_key_modulus),
                s.depth.clone(),
                s.slots.clone(),
                s.scale.clone(),
                secret_short(s.estimate.params.secret),
                format!("{:.2}", s.estimate.params.sigma),
                he_short(s.he_standard),
                bits(s.estimate.primal_bits()),
                bits(s.estimate.dual_bits()),
                bits(s.estimate.security_bits()),
                bits(s.estimate.core_svp_bits()),
                s.precision.clone(),
                s.modes.clone(),
                status(&s.insecure, false),
            ]
        })
        .collect();
    let mut out = String::from("## Parameter presets\n\n");
    out += &markdown_table(
        &[
            "preset",
            "scheme",
            "N",
            "log Q",
            "log QP (keys)",
            "depth",
            "slots",
            "scale",
            "secret",
            "sigma",
            "HE Standard",
            "primal",
            "dual",
            "security (bits)",
            "core-SVP",
            "precision (bits)",
            "conversion modes",
            "status",
        ],
        &cells,
    );
    out += "\n\
- log QP (keys): the modulus the keys live under, which the security figures are about: QP for CKKS \
(key switching); for BFV Q (HPS relinearization has no special primes), Q p_0 where the extended public \
key (over Q and the first auxiliary prime) fits the bound.\n\
- secret / sigma: the secret distribution (uniform ternary, or h nonzero coefficients) and the error's \
standard deviation; both enter the HE Standard check and the estimate.\n\
- HE Standard: the check of the Homomorphic Encryption Standard table (uniform ternary secret, sigma >= \
3.19; a narrower error is `< 128 (sigma)`).\n\
- primal / dual / security: built-in lattice estimate (primal uSVP, dual, the minimum), in the HE \
Standard's cost model 0.292 beta + 16.4 + log2(8d) with which its table was computed; core-SVP: the \
minimum in the 0.292 beta model alone. Sparse secrets: hybrid attacks not modelled, optimistic.\n\
- precision (CKKS): bits of a slot's real part (-log2 of the error's standard deviation) after \
public-key encryption / after one Mult&RS, from the noise estimates of rnsfhe-core; the minimum over \
all slots is about 2 bits lower.\n\
- conversion modes: the basis-conversion modes of key switching (CKKS) or of HPS multiplication (BFV) \
the preset builds in; CKKS ExactInteger (Qu-Xu Theorem 1) puts q_0 in a digit of its own where it would \
share one with the scaling primes (dnum = L + 1); BFV ExactInteger draws Q near one power of two where \
the HE Standard cap spread it over two prime sizes; BFV has no Fast mode (HPS needs the exact lift).\n\
- `rnsfhe params <preset>` shows one preset in detail with its prime chain.\n";
    out += &pegasus_table()?;
    out += &pipeline_table()?;
    Ok(out)
}

/// What the pipeline table and the detailed view print about one PEGASUS pipeline preset.
struct PipelineSummary {
    params: PipelineParams,
    /// The CKKS chain's estimate (RLWE of degree `N` modulo `QP`).
    ckks: LweEstimate,
    he_standard: SecurityEstimate,
    /// The LWE side's switching key (`SwK`, also the whole-ciphertext switch's key) and evaluation key.
    lwe: rnsfhe_lwe::PegasusSecurity,
    /// The ring-packing keys (RLWE of degree `N` modulo `q_0 P`).
    ring_packing: LweEstimate,
    insecure: Vec<Reason>,
}

fn pipeline_summary(preset: PipelinePreset) -> anyhow::Result<PipelineSummary> {
    let params = preset
        .params()
        .with_context(|| format!("building the pipeline parameters of {preset:?}"))?;
    let ctx = &params.ckks;
    let p = ctx.params();
    let ckks = estimate_rlwe(ctx.n(), ctx.log_qp(), p.sigma, p.secret)?;
    let he_standard = ctx.security();
    let lwe = params.lwe.security()?;
    let ring_packing = RingPackingKey::security(ctx)?;
    let no_claim = match preset {
        PipelinePreset::Table4 => Some("PEGASUS Table IV as published (the paper claims 119 bits)"),
        PipelinePreset::Secure128 => None,
        _ => Some("a small test set"),
    };
    let mut insecure = insecurity(
        no_claim,
        p.insecure_for_testing,
        p.secret,
        he_standard,
        &ckks,
    );
    for (key, e) in [
        ("LWE switching key", &lwe.switching_key),
        ("blind-rotation key", &lwe.evaluation_key),
        ("ring-packing keys", &ring_packing),
    ] {
        let bits = e.security_bits();
        if bits < TARGET_BITS {
            insecure.push(reason(
                format!("{key} {bits:.1}"),
                format!("{key}: estimated {bits:.1} bits < {TARGET_BITS}"),
            ));
        }
    }
    Ok(PipelineSummary {
        params,
        ckks,
        he_standard,
        lwe,
        ring_packing,
        insecure,
    })
}

/// `k x b bits` for a list of primes of about equal size (`b` the rounded mean size).
fn primes_short(moduli: &[u64]) -> String {
    if moduli.is_empty() {
        return "none".into();
    }
    let mean = log2_product(moduli) / moduli.len() as f64;
    format!("{} x {mean:.0}", moduli.len())
}

/// The PEGASUS pipeline presets (`PipelinePreset::ALL`): the CKKS chain and the security of every key
/// of the pipeline.
fn pipeline_table() -> anyhow::Result<String> {
    let mut cells = Vec::new();
    for preset in PipelinePreset::ALL {
        let s = pipeline_summary(preset)?;
        let ctx = &s.params.ckks;
        let lwe = &s.params.lwe;
        cells.push(vec![
            format!("{preset:?}"),
            format!("2^{}", ctx.params().log_n),
            format!(
                "{} (q_0 {:.1} bits)",
                primes_short(ctx.q_moduli()),
                (ctx.q_moduli()[0] as f64).log2()
            ),
            primes_short(ctx.p_moduli()),
            ctx.params().dnum.to_string(),
            format!("{:.1}", ctx.log_qp()),
            secret_short(s.ckks.params.secret),
            he_short(s.he_standard),
            bits(s.ckks.security_bits()),
            format!("{:?}", preset.lwe_preset()),
            format!("{} / 2^{}", lwe.lwe_dimension, lwe.lut.log_n),
            bits(s.lwe.switching_key.security_bits()),
            bits(s.lwe.evaluation_key.security_bits()),
            bits(s.ring_packing.security_bits()),
            status(&s.insecure, false),
        ]);
    }
    let mut out =
        String::from("\n## PEGASUS pipeline presets (CKKS <-> LWE, `PipelinePreset`)\n\n");
    out += &markdown_table(
        &[
            "preset",
            "N",
            "Q primes (bits)",
            "P primes (bits)",
            "dnum",
            "log QP",
            "CKKS secret",
            "HE Standard",
            "CKKS keys (bits)",
            "LWE side",
            "n_lwe / n",
            "SwK (bits)",
            "EK (bits)",
            "ring packing (bits)",
            "status",
        ],
        &cells,
    );
    out += "\n\
- The CKKS chain carries the values; the LWE side (the look-up tables) works over its first prime q_0. \
CKKS keys: the relinearization, rotation and repacking keys (RLWE of degree N modulo QP); SwK: the LWE \
switching key N -> n_lwe (Fig. 9), and the whole-ciphertext switch's key, which is as hard; EK: the \
blind-rotation key; ring packing: its switching and automorphism keys (RLWE of degree N modulo q_0 P).\n\
- Table4 is PEGASUS Table IV as published with our key switching (4 digits, 4 special primes: log QP about \
900 where the paper's SEAL chain has 795); Secure128 is ours (dense ternary CKKS secret, the LWE side of \
PegasusPreset::Secure128). `rnsfhe params <preset>` shows the primes.\n";
    Ok(out)
}

/// The PEGASUS (LWE) parameter sets: the estimator's figures for the LWE switching key and the
/// blind-rotation evaluation key of each.
fn pegasus_table() -> anyhow::Result<String> {
    let mut cells = Vec::new();
    for preset in PegasusPreset::ALL {
        let p = preset.params()?;
        let s = p.security()?;
        for (key, e) in [
            ("SwK (LWE switching)", &s.switching_key),
            ("EK (blind rotation)", &s.evaluation_key),
        ] {
            let insecure = e.security_bits() < 128.0;
            cells.push(vec![
                format!("{preset:?}"),
                key.to_string(),
                e.params.n.to_string(),
                format!("{:.1}", e.params.log_q),
                format!("{}", (e.params.sigma * 100.0).round() / 100.0),
                secret_short(e.params.secret),
                bits(e.primal_bits()),
                bits(e.dual_bits()),
                bits(e.security_bits()),
                if insecure {
                    "INSECURE (< 128 bits)"
                } else {
                    "ok"
                }
                .to_string(),
            ]);
        }
    }
    let mut out = String::from("\n## PEGASUS (LWE) parameter sets\n\n");
    out += &markdown_table(
        &[
            "preset",
            "key",
            "n",
            "log q",
            "sigma",
            "secret",
            "primal",
            "dual",
            "security (bits)",
            "status",
        ],
        &cells,
    );
    out += "\n\
- PegasusTable4 is PEGASUS Table IV as published; the paper claims at least 119 bits for it, the built-in \
estimator finds its LWE switching key (n_lwe = 1024, q_0 ~ 2^45, sigma_ks = 2^13, h = 64) below that. \
Sparse secrets: hybrid attacks not modelled, so the figures are optimistic.\n\
- Secure128 is ours: Table IV's dimensions with the LWE ciphertexts switched to a 27-bit modulus before each \
LWE key switch and dense ternary secrets, so every key reaches 128 bits without the sparse-secret caveat.\n";
    Ok(out)
}

/// One attack's line of the detailed view.
fn attack_line(name: &str, cost: Option<AttackCost>) -> String {
    match cost {
        None => format!("{name}: does not succeed with any block size up to the lattice dimension"),
        Some(c) => format!(
            "{name}: beta = {}, m = {} samples, d = {}, log2 repetitions {:.1}: {:.1} bits (core-SVP {:.1})",
            c.beta,
            c.samples,
            c.dimension,
            c.log2_repetitions,
            c.he_standard_bits(),
            c.core_svp_bits()
        ),
    }
}

/// The lines shared by both schemes' detailed views: security and status.
fn security_lines(out: &mut String, s: &Summary) -> std::fmt::Result {
    let e = &s.estimate;
    writeln!(out, "- HE Standard table: {}", s.he_standard)?;
    writeln!(
        out,
        "- lattice estimate (n = {}, log2 q = {:.1}, sigma = {:.3}, secret {}, m <= {} samples):",
        e.params.n, e.params.log_q, e.params.sigma, e.params.secret, e.params.samples
    )?;
    writeln!(out, "  - {}", attack_line("primal uSVP", e.primal))?;
    writeln!(out, "  - {}", attack_line("dual", e.dual))?;
    writeln!(
        out,
        "  - security: {} bits (HE Standard cost model), {} bits core-SVP",
        bits(e.security_bits()),
        bits(e.core_svp_bits())
    )?;
    writeln!(out, "- status: {}", status(&s.insecure, true))
}

fn prime_list(moduli: &[u64], name: &str) -> String {
    moduli
        .iter()
        .enumerate()
        .map(|(i, &q)| format!("  - {name}_{i} = {q} ({:.2} bits)\n", (q as f64).log2()))
        .collect()
}

fn detail(name: &str) -> anyhow::Result<String> {
    let mut out = String::new();
    match find_preset(name)? {
        AnyPreset::Ckks(preset) => {
            let (s, ctx) = ckks_summary(preset)?;
            let p = ctx.params();
            let prec = ckks_precision(&ctx)?;
            writeln!(out, "## {} (CKKS)\n", s.name)?;
            writeln!(
                out,
                "- N = 2^{} = {}, slots {}, scale 2^{}, rescaling {:?}, basis conversion {}",
                p.log_n,
                ctx.n(),
                s.slots,
                p.log_scale,
                p.rescaling,
                p.conversion
            )?;
            writeln!(
                out,
                "- depth {} (levels), chain Q: {} primes, log2 Q = {:.2}",
                p.levels,
                ctx.q_moduli().len(),
                ctx.log_q()
            )?;
            out += &prime_list(ctx.q_moduli(), "q");
            if ctx.bootstrap_levels() > 0 {
                writeln!(
                    out,
                    "- bootstrapping: user levels 1..={} (fresh encryptions at {}), {} bootstrapping \
                     primes above them of {:?} bits (bottom first; ModRaise to level {}); circuit \
                     (BootstrapParams::for_context, full slots): {}",
                    ctx.user_max_level(),
                    ctx.user_max_level(),
                    ctx.bootstrap_levels(),
                    p.bootstrap_primes,
                    ctx.max_level(),
                    bootstrap_circuit(&ctx)
                )?;
            }
            writeln!(
                out,
                "- special primes P: {} x {} bits, dnum = {} (hybrid key switching), log2 P = {:.2}",
                p.special_primes,
                p.special_bits,
                p.dnum,
                ctx.log_qp() - ctx.log_q()
            )?;
            out += &prime_list(ctx.p_moduli(), "p");
            writeln!(out, "- log2 QP = {:.2}", ctx.log_qp())?;
            writeln!(out, "- secret {:?}, sigma = {}", p.secret, p.sigma)?;
            if let Some(paper) = preset.paper_log_q() {
                writeln!(out, "- the paper's log Q_L: {paper}")?;
            }
            writeln!(
                out,
                "- Qu-Xu closeness (Theorem 1): {}",
                ctx.qu_xu_summary()
            )?;
            writeln!(
                out,
                "- basis-conversion modes (Preset::params_with_conversion):"
            )?;
            for (mode, c) in ckks_modes(preset) {
                match c {
                    Ok(c) => writeln!(
                        out,
                        "  - {mode}: dnum = {}, {} special primes, log2 QP = {:.2}, largest prime {:.2} bits \
                         (below 2^50, the IFMA path of the NTT: {}), Qu-Xu {}",
                        c.params().dnum,
                        c.p_moduli().len(),
                        c.log_qp(),
                        c.q_moduli()
                            .iter()
                            .chain(c.p_moduli())
                            .map(|&q| (q as f64).log2())
                            .fold(0.0, f64::max),
                        if c.q_moduli().iter().chain(c.p_moduli()).all(|&q| q < 1 << 50) {
                            "all"
                        } else {
                            "not all"
                        },
                        c.qu_xu_summary()
                    )?,
                    Err(e) => writeln!(out, "  - {mode}: refused: {e}")?,
                }
            }
            security_lines(&mut out, &s)?;
            if let Some(w) = ctx.security_warning() {
                writeln!(out, "- {w}")?;
            }
            writeln!(
                out,
                "- expected precision (bits of a slot's real part, typical / min over the {} slot parts):",
                ctx.n()
            )?;
            writeln!(
                out,
                "  - fresh (encode + public-key encryption, ||s||^2 = {}, error 2^{:.1} per coefficient): \
                 {:.1} / {:.1}",
                prec.secret_norm2,
                prec.fresh_coefficient_std.log2(),
                prec.fresh_bits,
                prec.fresh_bits - prec.min_offset_bits
            )?;
            writeln!(
                out,
                "  - after one Mult&RS (values of magnitude 1; relinearization error 2^{:.1} per \
                 coefficient before rescaling): {:.1} / {:.1}",
                prec.key_switch_std.log2(),
                prec.mult_bits,
                prec.mult_bits - prec.min_offset_bits
            )?;
        }
        AnyPreset::Pipeline(preset) => pipeline_detail(&mut out, preset)?,
        AnyPreset::Bfv(preset) => {
            let (s, params) = bfv_summary(preset)?;
            let (paper_log_n, paper_log_q, paper_k) = preset.paper_row();
            writeln!(out, "## {} (BFV)\n", s.name)?;
            writeln!(
                out,
                "- N = 2^{} = {}, plaintext modulus t = {}, slots {}, depth {}",
                params.log_n,
                params.n(),
                params.plaintext_modulus,
                s.slots,
                preset.depth()
            )?;
            writeln!(
                out,
                "- chain Q: {} primes, log2 Q = {:.2} (HPS Table 3: N = 2^{paper_log_n}, log2 q = \
                 {paper_log_q}, k = {paper_k})",
                params.q_moduli.len(),
                s.log_q
            )?;
            out += &prime_list(&params.q_moduli, "q");
            writeln!(
                out,
                "- auxiliary basis P of multiplication (internal, not a key modulus): {} primes, \
                 log2 P = {:.2}",
                params.p_moduli.len(),
                log2_product(&params.p_moduli)
            )?;
            out += &prime_list(&params.p_moduli, "p");
            match params.relin_base_log {
                Some(w) => writeln!(out, "- relinearization: base-2^{w} digits of each residue")?,
                None => writeln!(
                    out,
                    "- relinearization: CRT decomposition (one digit per residue)"
                )?,
            }
            writeln!(
                out,
                "- secret uniform ternary, sigma = {:.4}, conversion {}",
                params.sigma, params.conversion
            )?;
            writeln!(
                out,
                "- basis-conversion modes (BfvPreset::params_with_conversion): {}",
                s.modes
            )?;
            security_lines(&mut out, &s)?;
            writeln!(
                out,
                "- precision: exact modulo t (decryption correct up to depth {} by HPS Eqs. (10)-(13))",
                preset.depth()
            )?;
        }
    }
    Ok(out)
}

/// The detailed view of a pipeline preset: the CKKS chain with its primes, the LWE side, the estimate
/// of every key.
fn pipeline_detail(out: &mut String, preset: PipelinePreset) -> anyhow::Result<()> {
    let s = pipeline_summary(preset)?;
    let ctx = &s.params.ckks;
    let p = ctx.params();
    let lwe = &s.params.lwe;
    writeln!(out, "## {preset:?} (PEGASUS pipeline)\n")?;
    writeln!(
        out,
        "- CKKS: N = 2^{} = {}, slots up to {}, scale 2^{}, depth {} (levels), dnum = {}",
        p.log_n,
        ctx.n(),
        ctx.max_slots(),
        p.log_scale,
        p.levels,
        p.dnum
    )?;
    writeln!(
        out,
        "- chain Q: {} primes, log2 Q = {:.2}",
        ctx.q_moduli().len(),
        ctx.log_q()
    )?;
    *out += &prime_list(ctx.q_moduli(), "q");
    writeln!(
        out,
        "- special primes P: {}, log2 P = {:.2}",
        ctx.p_moduli().len(),
        ctx.log_qp() - ctx.log_q()
    )?;
    *out += &prime_list(ctx.p_moduli(), "p");
    writeln!(out, "- log2 QP = {:.2}", ctx.log_qp())?;
    writeln!(out, "- CKKS secret {:?}, sigma = {}", p.secret, p.sigma)?;
    writeln!(out, "- HE Standard table (CKKS keys): {}", s.he_standard)?;
    for (name, e) in [
        ("CKKS keys (degree N, modulo QP)", &s.ckks),
        (
            "SwK, LWE switching key (dimension n_lwe)",
            &s.lwe.switching_key,
        ),
        ("EK, blind-rotation key (degree n)", &s.lwe.evaluation_key),
        (
            "ring-packing keys (degree N, modulo q_0 P)",
            &s.ring_packing,
        ),
    ] {
        writeln!(
            out,
            "- {name}: n = {}, log2 q = {:.1}, sigma = {:.2}, secret {}:",
            e.params.n, e.params.log_q, e.params.sigma, e.params.secret
        )?;
        writeln!(out, "  - {}", attack_line("primal uSVP", e.primal))?;
        writeln!(out, "  - {}", attack_line("dual", e.dual))?;
        writeln!(
            out,
            "  - security: {} bits, {} bits core-SVP",
            bits(e.security_bits()),
            bits(e.core_svp_bits())
        )?;
    }
    writeln!(
        out,
        "- LWE side ({:?} on q_0 = {}): n_lwe = {}, look-up-table ring n = 2^{} over q_0 q' (q' = {}), \
         key switching modulo {} (B_ks = 2^{}, d_ks = {}, sigma_ks = {}), blind rotation {:?}",
        preset.lwe_preset(),
        s.params.q0(),
        lwe.lwe_dimension,
        lwe.lut.log_n,
        lwe.lut.special,
        lwe.key_switch.modulus,
        lwe.key_switch.base_log,
        lwe.key_switch.digits,
        lwe.key_switch.sigma,
        lwe.blind_rotation
    )?;
    writeln!(out, "- status: {}", status(&s.insecure, true))?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn names_are_case_insensitive_and_unknown_names_list_the_valid_ones() {
        assert!(matches!(
            find_preset("rec128n13").unwrap(),
            AnyPreset::Ckks(Preset::Rec128N13)
        ));
        assert!(matches!(
            find_preset("T2DEPTH5").unwrap(),
            AnyPreset::Bfv(BfvPreset::T2Depth5)
        ));
        assert!(matches!(
            find_preset("secure128").unwrap(),
            AnyPreset::Pipeline(PipelinePreset::Secure128)
        ));
        let err = find_preset("nope").err().unwrap().to_string();
        assert!(
            err.contains("PaperTable1L5") && err.contains("T2Depth100") && err.contains("Table4"),
            "{err}"
        );
    }
}
