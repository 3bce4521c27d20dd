//! CKKS bootstrapping benchmarks: `rnsfhe bench ckks-bootstrap-op --params JSON` serves the bootstrapping
//! protocol of `bench/peers/compare_bootstrap.py` (its docstring: a ready line, then `{"op": "bootstrap",
//! "reps": R}` answered with times, precision and levels of each call), which runs it beside OpenFHE's
//! `EvalBootstrap`; `rnsfhe bench ckks-bootstrap` measures the same set-ups standalone (markdown and JSON).
//!
//! # The chain of a set-up
//!
//! The protocol's set-up names OpenFHE's knobs (`scale_bits` 59, `first_mod_bits` 60 in its example).
//! Our circuit ([`rnsfhe_ckks::Bootstrapper`], Bossuat et al., Eurocrypt 2021) takes the message at the
//! scale of level 1 against `q_0` and needs `q_0 / Delta >= 2^2` for EvalMod's range
//! ([`rnsfhe_ckks::EvalModParams::log_message_ratio`]); with one prime size for every scaling prime
//! ([`CkksParams`]) and `q_0` of at most 61 bits, 59-bit scaling primes cannot leave that room. The
//! chain therefore keeps `q_0` of `first_mod_bits` and takes scaling primes of
//! `min(scale_bits, first_mod_bits - `[`MESSAGE_RATIO_BITS`]`)` bits (`q_0 / Delta ~ 2^9`, the ratio of
//! `docs/ckks-bootstrapping.md`'s test chain), reports the sizes it chose in the ready line, and:
//!
//! * uses `level_budget` as the CoeffsToSlots / SlotsToCoeffs levels (1 to 4, at most `log2(slots)`),
//!   and EvalMod as [`BootstrapParams::for_context`] chooses it for the secret;
//! * has `bootstrap_depth + levels_after` scaling primes, so that [`Bootstrapper::levels_left`] is
//!   `levels_after`; hybrid key switching with [`DEFAULT_DNUM`] digits (OpenFHE's default) and as few
//!   60-bit special primes as cover a digit;
//! * `security: "none"`: `levels_after` as asked, or (null) the most under the log QP of OpenFHE's
//!   reference set-up at `N = 2^16` ([`REFERENCE_LOG_QP_2_16`], at every `N`: the set-up is insecure
//!   anyway, and the same budget keeps the chains of `N = 2^15` and `2^16` alike);
//!   `security: "128"`: the most levels (then the fewest digits) whose log QP our estimator
//!   ([`CkksParams::security`], the HE Standard table) accepts, or an error naming the smallest log QP
//!   bootstrapping needs against the bound.
//!
//! A set-up naming a `preset` (`Boot128N16`, `Boot128N16Precise`, `BootTestN15`: chains with
//! bootstrapping primes, [`CkksParams::bootstrap_primes`]) takes that preset's chain instead and the
//! circuit [`BootstrapParams::for_context`] fits into its bootstrapping levels (`level_budget`, `scale_bits`,
//! `first_mod_bits`, `levels_after` and `security` do not apply); `secret` other than the default
//! `"uniform_ternary"` replaces the preset's secret (a sparse one is insecure; `Boot128N16`'s dense
//! secret is raised under the sparse-secret encapsulation, [`BootstrapParams::sparse_secret`]).

use std::io::{BufRead, Write};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context};
use rnsfhe_ckks::{
    max_log_qp, BootstrapParams, Bootstrapper, Ciphertext, CkksContext, CkksDecryptor,
    CkksEncryptor, CkksParams, Complex64, ConversionMode, Csprng, EvalMod, Evaluator, KeyGenerator,
    PrecisionStats, PublicRandomness, RescalingPolicy, SecretDistribution, SecurityLevel,
    Serializable,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::ckks_functions::{load_average, load_average_line, peer_test_vector};
use super::pegasus_pipeline::{available_bytes, cpu_seconds, peak_rss_mib};
use super::{markdown_table, median, write_json, BenchOptions, Machine};

/// `log2(q_0 / Delta)` the chain leaves for EvalMod's input: 9 bits, as the test chain of
/// `docs/ckks-bootstrapping.md` (an arcsine of degree 3 then corrects the sine, `for_context`).
pub const MESSAGE_RATIO_BITS: u32 = 9;

/// Digit groups of hybrid key switching (OpenFHE's default above depth 3).
pub const DEFAULT_DNUM: usize = 3;

/// Bits of each special prime.
pub const SPECIAL_BITS: u32 = 60;

/// `log QP` of OpenFHE's reference bootstrapping set-up at `N = 2^16` (HEStd_NotSet, 6 levels after
/// bootstrapping, `bench/peers/compare_bootstrap.py` `OPENFHE_REFERENCE`): the budget of an insecure set-up
/// without `levels_after`.
pub const REFERENCE_LOG_QP_2_16: f64 = 2312.0;

/// Most levels after bootstrapping searched for.
const MAX_LEVELS_AFTER: usize = 30;

/// The set-up of `bench/peers/compare_bootstrap.py` (its docstring, item 1). Unknown keys are ignored.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct BootstrapSetup {
    /// `N = 2^log_n`.
    pub log_n: u32,
    /// Slots of the ciphertext: a power of two up to `N/2` (below: sparse packing).
    pub slots: usize,
    /// `"128"` (our estimator must accept the chain) or `"none"` (insecure parameters allowed).
    #[serde(default = "default_security")]
    pub security: String,
    /// `"uniform_ternary"` (or `"ternary"`), or `"hamming:H"` (a sparse secret of Hamming weight `H`).
    #[serde(default = "default_secret")]
    pub secret: String,
    /// CoeffsToSlots and SlotsToCoeffs levels (OpenFHE's level budget).
    #[serde(default)]
    pub level_budget: Option<[usize; 2]>,
    /// Bits of the scaling primes asked for (a ceiling: see the [module documentation](self)).
    #[serde(default = "default_scale_bits")]
    pub scale_bits: u32,
    /// Bits of `q_0`.
    #[serde(default = "default_first_mod_bits")]
    pub first_mod_bits: u32,
    /// Levels left after bootstrapping; `None`: as many as the security level allows.
    #[serde(default)]
    pub levels_after: Option<usize>,
    /// Whether to measure the keys' serialized sizes (computed, never written).
    #[serde(default = "default_true")]
    pub key_sizes: bool,
    /// The Hamming weight of the sparse-secret encapsulation of the raise
    /// ([`BootstrapParams::sparse_secret`]); 0: none (raise under the CKKS secret); absent: as
    /// [`BootstrapParams::for_context`] chooses (32 for a uniform ternary secret).
    #[serde(default)]
    pub sparse_secret: Option<usize>,
    /// A CKKS preset whose chain to use instead of choosing one (see the
    /// [module documentation](self)).
    #[serde(default)]
    pub preset: Option<String>,
}

fn default_security() -> String {
    "128".into()
}
fn default_secret() -> String {
    "uniform_ternary".into()
}
fn default_scale_bits() -> u32 {
    59
}
fn default_first_mod_bits() -> u32 {
    60
}
fn default_true() -> bool {
    true
}

impl BootstrapSetup {
    /// The insecure quick set-up of `compare_bootstrap.py --quick` (`N = 2^12`, 2048 slots, level
    /// budget `[2, 2]`, 2 levels after bootstrapping).
    pub fn quick() -> Self {
        Self {
            log_n: 12,
            slots: 1 << 11,
            security: "none".into(),
            secret: default_secret(),
            level_budget: Some([2, 2]),
            scale_bits: 59,
            first_mod_bits: 60,
            levels_after: Some(2),
            key_sizes: true,
            sparse_secret: None,
            preset: None,
        }
    }

    fn secret_distribution(&self) -> anyhow::Result<SecretDistribution> {
        match self.secret.as_str() {
            "uniform_ternary" | "ternary" => Ok(SecretDistribution::Ternary),
            s => match s.strip_prefix("hamming:").map(str::parse::<usize>) {
                Some(Ok(h)) if h > 0 => Ok(SecretDistribution::HammingWeight(h)),
                _ => bail!(
                    "secret {s:?}: give \"uniform_ternary\" or \"hamming:H\" (a Hamming weight H > 0)"
                ),
            },
        }
    }
}

/// What [`choose_chain`] chose, for the ready line and the report.
#[derive(Debug, Clone, Serialize)]
pub struct ChainInfo {
    /// `log2 N`.
    pub log_n: u32,
    /// Slots.
    pub slots: usize,
    /// The secret, as [`SecretDistribution`] prints it.
    pub secret: String,
    /// `"128"` or `"none"`, as asked.
    pub security: String,
    /// Our estimator's verdict on the chain ([`CkksContext::security_summary`]).
    pub security_estimate: String,
    /// `log2(QP)` of the primes.
    pub log_qp: f64,
    /// The HE Standard's 128-bit bound on `log2(QP)` for `N`.
    pub log_qp_bound_128: Option<u32>,
    /// Levels left after bootstrapping ([`Bootstrapper::levels_left`]).
    pub levels_after: usize,
    /// Levels the circuit consumes ([`Bootstrapper::depth`]).
    pub bootstrap_depth: usize,
    /// Bits of the scaling primes.
    pub scale_bits: u32,
    /// Bits of `q_0`.
    pub first_mod_bits: u32,
    /// Bits of each prime of `Q`.
    pub q_bits: Vec<u32>,
    /// Bits of each special prime.
    pub p_bits: Vec<u32>,
    /// Digit groups of key switching.
    pub dnum: usize,
    /// CoeffsToSlots levels.
    pub c2s_levels: usize,
    /// SlotsToCoeffs levels.
    pub s2c_levels: usize,
    /// EvalMod's `K` (the bound on `|I|`).
    pub eval_mod_k: u32,
    /// EvalMod's double angles.
    pub double_angle: u32,
    /// Degree of the cosine.
    pub cos_degree: usize,
    /// Degree of the arcsine (0: none).
    pub arcsine_degree: usize,
    /// `log2(q_0 / Delta)` of EvalMod.
    pub log_message_ratio: f64,
    /// The Hamming weight of the encapsulated secret of the raise (`None`: the CKKS secret).
    pub sparse_secret: Option<usize>,
    /// [`Bootstrapper::failure_probability`]: some `|I_k| > K` in one bootstrapping.
    pub failure_probability: f64,
}

/// The CKKS parameters of a chain of `levels` scaling primes for `setup` (see the
/// [module documentation](self)).
fn chain_params(
    setup: &BootstrapSetup,
    secret: SecretDistribution,
    levels: usize,
    dnum: usize,
) -> CkksParams {
    let q0_bits = setup.first_mod_bits;
    let log_scale = setup
        .scale_bits
        .min(q0_bits.saturating_sub(MESSAGE_RATIO_BITS));
    let dnum = dnum.clamp(1, levels + 1);
    let alpha = (levels + 1).div_ceil(dnum);
    // The largest digit: q_0 and alpha - 1 scaling primes; P covers it (RNS-CKKS Section 3.3).
    let digit_bits = q0_bits as usize + (alpha - 1) * log_scale as usize;
    CkksParams {
        log_n: setup.log_n,
        log_scale,
        q0_bits,
        levels,
        bootstrap_primes: Vec::new(),
        special_primes: digit_bits.div_ceil(SPECIAL_BITS as usize).max(1),
        special_bits: SPECIAL_BITS,
        dnum,
        secret,
        sigma: 3.2,
        conversion: ConversionMode::Fast,
        rescaling: RescalingPolicy::ExactScale,
        insecure_for_testing: setup.security == "none",
    }
}

/// [`BootstrapParams::for_context`] for `ctx`, with `K` for the set-up's sparse secret when it names one
/// (0: none).
fn default_circuit(ctx: &CkksContext, setup: &BootstrapSetup) -> anyhow::Result<BootstrapParams> {
    Ok(match setup.sparse_secret {
        None => BootstrapParams::for_context(ctx, setup.slots)?,
        Some(h) => {
            BootstrapParams::for_context_with_sparse_secret(ctx, setup.slots, (h > 0).then_some(h))?
        }
    })
}

/// The bootstrapping parameters for `ctx`: EvalMod by [`BootstrapParams::for_context`] (with `K` for the
/// set-up's sparse secret when it names one), the DFT levels of the level budget.
fn bootstrap_params(ctx: &CkksContext, setup: &BootstrapSetup) -> anyhow::Result<BootstrapParams> {
    let mut p = default_circuit(ctx, setup)?;
    if let Some([c2s, s2c]) = setup.level_budget {
        let most = 4.min(setup.slots.trailing_zeros().max(1) as usize);
        if !(1..=most).contains(&c2s) || !(1..=most).contains(&s2c) {
            bail!(
                "level_budget [{c2s}, {s2c}]: each from 1 to {most} for {} slots",
                setup.slots
            );
        }
        p.c2s_levels = c2s;
        p.s2c_levels = s2c;
    }
    Ok(p)
}

/// Chooses the chain of `setup` (see the [module documentation](self)) and builds its context and
/// bootstrapper.
///
/// Errors: an invalid set-up (slots, secret, security, level budget, bit sizes), or with security
/// `"128"` no chain our estimator accepts (the message names the log QP bootstrapping needs and the
/// bound).
pub fn choose_chain(
    setup: &BootstrapSetup,
) -> anyhow::Result<(Arc<CkksContext>, Bootstrapper, ChainInfo)> {
    let secret = setup.secret_distribution()?;
    if let Some(name) = &setup.preset {
        let mut params = super::ckks::parse_preset(name)?.params();
        if setup.secret != default_secret() {
            params.insecure_for_testing |= secret != SecretDistribution::Ternary;
            params.secret = secret;
        }
        if params.log_n != setup.log_n {
            bail!(
                "preset {name} has N = 2^{}, the set-up says log_n = {}",
                params.log_n,
                setup.log_n
            );
        }
        let ctx = CkksContext::new(params)?;
        let btp = Bootstrapper::new(&ctx, default_circuit(&ctx, setup)?)?;
        let info = chain_info(&ctx, &btp, setup);
        return Ok((ctx, btp, info));
    }
    let n = 1usize << setup.log_n.min(20);
    if !(10..=17).contains(&setup.log_n) {
        bail!("log_n = {}: from 10 to 17", setup.log_n);
    }
    if setup.slots == 0 || !setup.slots.is_power_of_two() || setup.slots > n / 2 {
        bail!(
            "slots = {}: a power of two up to N/2 = {}",
            setup.slots,
            n / 2
        );
    }
    if !(setup.first_mod_bits > MESSAGE_RATIO_BITS + 10 && setup.first_mod_bits <= 61) {
        bail!(
            "first_mod_bits = {}: from {} to 61 (q_0 must exceed the scale by {MESSAGE_RATIO_BITS} bits)",
            setup.first_mod_bits,
            MESSAGE_RATIO_BITS + 11
        );
    }
    // The depth of the circuit depends on N, the secret and q_0 / Delta, not on the chain's length: a
    // probe chain gives it.
    let mut probe_setup = setup.clone();
    probe_setup.security = "none".into();
    let probe = CkksContext::new(chain_params(&probe_setup, secret, 24, DEFAULT_DNUM))?;
    let probe_btp = bootstrap_params(&probe, setup)?;
    let depth =
        probe_btp.c2s_levels + EvalMod::new(probe_btp.eval_mod)?.depth() + probe_btp.s2c_levels;
    drop(probe);

    let bound_128 = max_log_qp(n, SecurityLevel::Bits128);
    let params = match setup.security.as_str() {
        "none" => {
            let levels_after = match setup.levels_after {
                Some(l) => l,
                None => {
                    let budget = REFERENCE_LOG_QP_2_16;
                    (0..=MAX_LEVELS_AFTER)
                        .rev()
                        .find(|&l| {
                            chain_params(setup, secret, depth + l, DEFAULT_DNUM).nominal_log_qp()
                                as f64
                                <= budget
                        })
                        .with_context(|| {
                            format!(
                                "no chain for bootstrapping (depth {depth}) under log QP {budget:.0}, \
                                 OpenFHE's reference at N = 2^16: give levels_after"
                            )
                        })?
                }
            };
            chain_params(setup, secret, depth + levels_after, DEFAULT_DNUM)
        }
        "128" => {
            let bound = bound_128.with_context(|| format!("no HE Standard bound for N = {n}"))?;
            let candidates: Vec<usize> = match setup.levels_after {
                Some(l) => vec![l],
                None => (0..=MAX_LEVELS_AFTER).rev().collect(),
            };
            let mut found = None;
            'search: for l in candidates {
                let limbs = depth + l + 1;
                for dnum in DEFAULT_DNUM..=limbs.clamp(DEFAULT_DNUM, 8) {
                    let p = chain_params(setup, secret, depth + l, dnum);
                    if p.nominal_log_qp() > u64::from(bound) + 2 {
                        continue;
                    }
                    if p.security()?.is_secure() {
                        found = Some(p);
                        break 'search;
                    }
                }
            }
            match found {
                Some(p) => p,
                None => {
                    let least =
                        chain_params(setup, secret, depth + setup.levels_after.unwrap_or(0), 8);
                    bail!(
                        "no 128-bit chain: bootstrapping at N = 2^{} ({secret:?} secret, scaling primes \
                         of {} bits, q_0 of {} bits) consumes {depth} levels, so the chain needs log QP \
                         >= {} (with {} levels after and 8 key-switching digits), over the HE Standard's \
                         128-bit bound {bound} for N = {n}; a chain with bootstrapping primes fits: \
                         \"preset\": \"Boot128N16\" (docs/ckks-bootstrapping.md)",
                        setup.log_n,
                        least.log_scale,
                        least.q0_bits,
                        least.nominal_log_qp(),
                        setup.levels_after.unwrap_or(0)
                    )
                }
            }
        }
        other => bail!("security {other:?}: give \"128\" or \"none\""),
    };
    let ctx = CkksContext::new(params)?;
    let btp = Bootstrapper::new(&ctx, bootstrap_params(&ctx, setup)?)?;
    let info = chain_info(&ctx, &btp, setup);
    Ok((ctx, btp, info))
}

/// The [`ChainInfo`] of a built chain and circuit.
fn chain_info(ctx: &CkksContext, btp: &Bootstrapper, setup: &BootstrapSetup) -> ChainInfo {
    let bound_128 = max_log_qp(ctx.n(), SecurityLevel::Bits128);
    let bits = |ms: &[u64]| {
        ms.iter()
            .map(|&q| (q as f64).log2().round() as u32)
            .collect::<Vec<_>>()
    };
    let em = btp.eval_mod().params();
    let p = ctx.params();
    ChainInfo {
        log_n: p.log_n,
        slots: setup.slots,
        secret: format!("{:?}", p.secret),
        // A preset's chain carries its own security, whatever the set-up's field says.
        security: match (&setup.preset, ctx.is_insecure()) {
            (None, _) => setup.security.clone(),
            (Some(_), true) => "none".into(),
            (Some(_), false) => "128".into(),
        },
        security_estimate: ctx.security_summary(),
        log_qp: (ctx.log_qp() * 100.0).round() / 100.0,
        log_qp_bound_128: bound_128,
        levels_after: btp.levels_left(),
        bootstrap_depth: btp.depth(),
        scale_bits: p.log_scale,
        first_mod_bits: p.q0_bits,
        q_bits: bits(ctx.q_moduli()),
        p_bits: bits(ctx.p_moduli()),
        dnum: p.dnum,
        c2s_levels: btp.params().c2s_levels,
        s2c_levels: btp.params().s2c_levels,
        eval_mod_k: em.k,
        double_angle: em.double_angle,
        cos_degree: em.cos_degree,
        arcsine_degree: em.arcsine_degree,
        log_message_ratio: em.log_message_ratio,
        sparse_secret: btp.sparse_secret(),
        failure_probability: btp.failure_probability(),
    }
}

/// Precision and levels of one bootstrapped ciphertext.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct CallCheck {
    /// Minimum over the slots of the bits of the real parts ([`PrecisionStats`]).
    pub min_bits: f64,
    /// Median over the slots.
    pub median_bits: f64,
    /// Multiplications left ([`Bootstrapper::levels_left`] of the result's level).
    pub levels_left: usize,
}

/// Key generation and key sizes of a set-up.
#[derive(Debug, Clone, Serialize)]
pub struct KeyReport {
    /// Seconds to generate the secret, public, relinearization and bootstrapping keys.
    pub keygen_s: f64,
    /// Of which the bootstrapping (Galois) keys.
    pub bootstrap_keys_s: f64,
    /// Galois keys generated.
    pub galois_keys: usize,
    /// Serialized size of the relinearization and Galois keys, public `a` as seeds (the wire default).
    pub total_bytes: Option<u64>,
    /// The same with every polynomial written out (what the keys take in memory, as words).
    pub expanded_bytes: Option<u64>,
}

/// Keys, input and evaluator of one set-up: what the server and the standalone bench time.
pub struct BootstrapBench {
    ctx: Arc<CkksContext>,
    btp: Bootstrapper,
    evaluator: Evaluator,
    decryptor: CkksDecryptor,
    x: Vec<f64>,
    ct: Ciphertext,
    /// The chain.
    pub info: ChainInfo,
    /// Key generation.
    pub keys: KeyReport,
}

impl BootstrapBench {
    /// Chooses the chain ([`choose_chain`]), generates the keys and encrypts [`peer_test_vector`]`(slots, 1)` at
    /// level 1 (`q_0` alone: the input bootstrapping takes; its default scale, within EvalMod's range).
    ///
    /// Errors: those of [`choose_chain`], key generation and encryption.
    pub fn new(setup: &BootstrapSetup) -> anyhow::Result<Self> {
        let (ctx, btp, info) = choose_chain(setup)?;
        let mut rng = Csprng::from_os()?;
        let start = Instant::now();
        let kg = KeyGenerator::new(&ctx, &mut rng)?;
        let pk = kg.public_key(&mut rng)?;
        let rk = kg.relin_key(&mut rng)?;
        let boot_start = Instant::now();
        let gk = kg.bootstrapping_keys(&btp, &mut rng)?;
        let bootstrap_keys_s = boot_start.elapsed().as_secs_f64();
        let keygen_s = start.elapsed().as_secs_f64();
        let (total_bytes, expanded_bytes) = if setup.key_sizes {
            let size = |randomness| {
                rk.serialized_size_with(randomness)
                    + gk.galois.serialized_size_with(randomness)
                    + gk.encapsulation
                        .as_ref()
                        .map_or(0, |e| e.keys_wire_size(randomness))
            };
            (
                Some(size(PublicRandomness::Seeded)),
                Some(size(PublicRandomness::Expanded)),
            )
        } else {
            (None, None)
        };
        let keys = KeyReport {
            keygen_s,
            bootstrap_keys_s,
            galois_keys: btp.galois_elements().len(),
            total_bytes,
            expanded_bytes,
        };
        let evaluator = Evaluator::new(&ctx)
            .with_relin_key(rk)?
            .with_bootstrapping_keys(gk)?;
        let encryptor = CkksEncryptor::with_public_key(&ctx, &pk)?;
        let decryptor = CkksDecryptor::new(&ctx, kg.secret_key())?;
        let x = peer_test_vector(setup.slots, 1);
        let pt = ctx.encode_real(&x, setup.slots, 1)?;
        let ct = encryptor.encrypt_plaintext(&pt, &mut rng)?;
        Ok(Self {
            ctx,
            btp,
            evaluator,
            decryptor,
            x,
            ct,
            info,
            keys,
        })
    }

    /// One bootstrapping of the input.
    ///
    /// Errors: those of [`Evaluator::bootstrap`].
    pub fn bootstrap(&self) -> anyhow::Result<Ciphertext> {
        Ok(self.evaluator.bootstrap(&self.ct, &self.btp)?)
    }

    /// Precision of `out` against the input values and its levels left (untimed).
    ///
    /// Errors: decryption errors.
    pub fn check(&self, out: &Ciphertext) -> anyhow::Result<CallCheck> {
        let got = self.decryptor.decrypt(out)?;
        let want: Vec<Complex64> = self.x.iter().map(|&v| Complex64::new(v, 0.0)).collect();
        let got = got
            .get(..want.len())
            .context("fewer slots decrypted than encrypted")?;
        let stats = PrecisionStats::compare(&want, got)?;
        Ok(CallCheck {
            min_bits: stats.real.min,
            median_bits: stats.real.median,
            levels_left: out.level().saturating_sub(1),
        })
    }

    /// The context.
    pub fn context(&self) -> &Arc<CkksContext> {
        &self.ctx
    }
}

/// Peak resident memory so far, bytes.
fn max_rss_bytes() -> Option<u64> {
    peak_rss_mib().map(|m| (m * 1024.0 * 1024.0) as u64)
}

/// One timed bootstrapping and its check: (wall seconds, CPU seconds, check).
fn timed_call(bench: &BootstrapBench) -> anyhow::Result<(f64, f64, CallCheck)> {
    let (cpu, start) = (cpu_seconds(), Instant::now());
    let out = bench.bootstrap()?;
    let (wall, cpu) = (start.elapsed().as_secs_f64(), cpu_seconds() - cpu);
    Ok((wall, cpu, bench.check(&out)?))
}

/// The ready line of a set-up: chain, key generation, key sizes, peak memory and the untimed check.
fn ready_line(bench: &BootstrapBench, check: CallCheck, check_s: f64) -> Value {
    json!({
        "ready": true,
        "impl": "rnsfhe",
        "version": super::version_string(),
        "threads": rayon::current_num_threads(),
        "ops": ["bootstrap"],
        "params": bench.info,
        "keygen": {"keygen_s": bench.keys.keygen_s, "bootstrap_keys_s": bench.keys.bootstrap_keys_s},
        "keys": {
            "total_bytes": bench.keys.total_bytes,
            "expanded_bytes": bench.keys.expanded_bytes,
            "galois_keys": bench.keys.galois_keys,
            "counted": "relinearization key + the keys of KeyGenerator::bootstrapping_keys (Galois \
                        keys: rotations, conjugation, trace; the two sparse-secret encapsulation keys \
                        when the raise uses them), rnsfhe wire format with public a as seeds (the \
                        default); expanded_bytes: every polynomial written out",
        },
        "max_rss_bytes": max_rss_bytes(),
        "check": {
            "seconds": check_s,
            "min_bits": check.min_bits,
            "median_bits": check.median_bits,
            "levels_left": check.levels_left,
        },
    })
}

/// The answer to one protocol line (`None` for `quit`, after which the loop ends).
fn answer(bench: &BootstrapBench, line: &str) -> Option<Value> {
    let cmd = match serde_json::from_str::<Value>(line) {
        Ok(cmd) => cmd,
        Err(e) => return Some(json!({"error": format!("malformed command: {e}")})),
    };
    let op = cmd.get("op").and_then(Value::as_str).unwrap_or("");
    match op {
        "quit" => None,
        "bootstrap" => {
            let reps = cmd
                .get("reps")
                .and_then(Value::as_u64)
                .unwrap_or(1)
                .clamp(1, 1000) as usize;
            let mut calls = Vec::with_capacity(reps);
            for _ in 0..reps {
                match timed_call(bench) {
                    Ok(c) => calls.push(c),
                    Err(e) => return Some(json!({"op": op, "error": format!("{e:#}")})),
                }
            }
            Some(json!({
                "op": op,
                "seconds": calls.iter().map(|c| c.0).collect::<Vec<_>>(),
                "cpu_seconds": calls.iter().map(|c| c.1).collect::<Vec<_>>(),
                "min_bits": calls.iter().map(|c| c.2.min_bits).collect::<Vec<_>>(),
                "median_bits": calls.iter().map(|c| c.2.median_bits).collect::<Vec<_>>(),
                "levels_left": calls.iter().map(|c| c.2.levels_left).collect::<Vec<_>>(),
                "max_rss_bytes": max_rss_bytes(),
            }))
        }
        other => Some(
            json!({"op": other, "error": format!("unknown operation {other:?}: only bootstrap")}),
        ),
    }
}

/// The protocol on any input and output: set-up (or one error line naming why it failed, and the
/// error), the ready line, then one answer per command until `quit` or the end of the input.
///
/// Errors: an invalid set-up (after its error line), or I/O errors.
pub fn serve_lines(params: &str, input: impl BufRead, mut out: impl Write) -> anyhow::Result<()> {
    let setup = serde_json::from_str::<BootstrapSetup>(params)
        .context("--params is not a bootstrapping set-up object")
        .and_then(|setup| {
            let bench = BootstrapBench::new(&setup)?;
            let start = Instant::now();
            let first = bench.bootstrap()?;
            let check_s = start.elapsed().as_secs_f64();
            let check = bench.check(&first)?;
            Ok((bench, check, check_s))
        });
    let (bench, check, check_s) = match setup {
        Ok(s) => s,
        Err(e) => {
            writeln!(
                out,
                "{}",
                json!({"ready": false, "error": format!("{e:#}")})
            )?;
            out.flush()?;
            return Err(e);
        }
    };
    writeln!(out, "{}", ready_line(&bench, check, check_s))?;
    out.flush()?;
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        match answer(&bench, &line) {
            Some(a) => writeln!(out, "{a}")?,
            None => {
                writeln!(out, "{}", json!({"op": "quit", "ok": true}))?;
                out.flush()?;
                return Ok(());
            }
        }
        out.flush()?;
    }
    Ok(())
}

/// `rnsfhe bench ckks-bootstrap-op --params JSON`: [`serve_lines`] on stdin and stdout, inside a rayon
/// pool of [`rayon::current_num_threads`] threads (`RAYON_NUM_THREADS`; the driver sets 1), as
/// `ckks-op`, so that every bootstrapping runs on a worker of the pool.
///
/// Errors: those of [`serve_lines`].
pub fn serve(params: &str) -> anyhow::Result<()> {
    super::on_pool_worker(|| serve_lines(params, std::io::stdin().lock(), std::io::stdout().lock()))
}

/// One set-up of `ckks-bootstrap`.
#[derive(Debug, Clone, Serialize)]
pub struct BootstrapRow {
    /// The set-up's name.
    pub name: String,
    /// The set-up asked for.
    pub setup: BootstrapSetup,
    /// The chain, or `None` when the set-up was not run.
    pub chain: Option<ChainInfo>,
    /// Key generation and sizes.
    pub keys: Option<KeyReport>,
    /// Seconds of each timed bootstrapping.
    pub seconds: Vec<f64>,
    /// CPU seconds of each.
    pub cpu_seconds: Vec<f64>,
    /// The check of each (precision, levels).
    pub checks: Vec<CallCheck>,
    /// Peak resident memory after the set-up's calls, bytes (cumulative over the run).
    pub max_rss_bytes: Option<u64>,
    /// Why the set-up was not run or stopped.
    pub skipped: Option<String>,
}

/// The JSON document `ckks-bootstrap.json`.
#[derive(Debug, Clone, Serialize)]
pub struct BootstrapReport {
    /// Table name.
    pub table: &'static str,
    /// Where and when it ran.
    pub machine: Machine,
    /// Whether this was a `--quick` run.
    pub quick: bool,
    /// `/proc/loadavg` before and after.
    pub load_average: [Option<String>; 2],
    /// One row per set-up.
    pub rows: Vec<BootstrapRow>,
}

/// The set-ups of `ckks-bootstrap`: the test chain of `docs/ckks-bootstrapping.md` (`N = 2^11`,
/// Hamming weight 64), the quick set-up of the comparison (`N = 2^12`), and without `--quick` the
/// bootstrapping presets `BootTestN15` and `Boot128N16` with `h = 32` and the matched
/// set-ups of OpenFHE's reference at `N = 2^15` and `2^16` (full slots, uniform ternary, level budget
/// `[4, 4]`, levels after as under its log QP), with the memory each needs, GB (an estimate from the
/// keys' expanded size: about 60 Galois keys of 3 digits over 43 limbs at `N = 2^15`, 4 GB). `log_n`,
/// when not empty, keeps the set-ups of those ring degrees. (`rnsfhe sizes` lists their keys.)
pub fn setups(quick: bool, log_n: &[u32]) -> Vec<(String, BootstrapSetup, f64)> {
    let test = BootstrapSetup {
        log_n: 11,
        slots: 1 << 10,
        secret: "hamming:64".into(),
        level_budget: Some([3, 3]),
        ..BootstrapSetup::quick()
    };
    let mut out = vec![
        ("test chain (N = 2^11, h = 64)".to_string(), test, 0.5),
        (
            "comparison --quick (N = 2^12)".to_string(),
            BootstrapSetup::quick(),
            0.5,
        ),
    ];
    if !quick {
        // The bootstrapping presets: about 3 GB of keys at N = 2^15 (26 limbs, 6 digits), 11 GB at 2^16.
        for (preset, log_n, gb) in [("BootTestN15", 15u32, 6.0), ("Boot128N16", 16, 14.0)] {
            out.push((
                format!("{preset} preset (N = 2^{log_n}, h = 32, insecure)"),
                BootstrapSetup {
                    log_n,
                    slots: 1 << (log_n - 1),
                    secret: "hamming:32".into(),
                    preset: Some(preset.into()),
                    levels_after: None,
                    ..BootstrapSetup::quick()
                },
                gb,
            ));
        }
        for (log_n, gb) in [(15u32, 7.0), (16, 16.0)] {
            // With the sparse-secret encapsulation (the default for the uniform ternary secret) and
            // without it (the raise under the dense secret: K ~ 7 sqrt(N / 18)).
            for (what, sparse_secret) in [("", None), (", no encapsulation", Some(0))] {
                out.push((
                    format!("OpenFHE reference matched (N = 2^{log_n}, insecure{what})"),
                    BootstrapSetup {
                        log_n,
                        slots: 1 << (log_n - 1),
                        level_budget: Some([4, 4]),
                        levels_after: None,
                        sparse_secret,
                        ..BootstrapSetup::quick()
                    },
                    gb,
                ));
            }
        }
    }
    out.retain(|(_, s, _)| log_n.is_empty() || log_n.contains(&s.log_n));
    out
}

/// Runs `reps` timed bootstrappings of one set-up.
fn measure(name: String, setup: BootstrapSetup, reps: usize) -> BootstrapRow {
    let mut row = BootstrapRow::empty(&name, &setup);
    let bench = match BootstrapBench::new(&setup) {
        Ok(b) => b,
        Err(e) => {
            row.skipped = Some(format!("set-up failed: {e:#}"));
            return row;
        }
    };
    row.chain = Some(bench.info.clone());
    row.keys = Some(bench.keys.clone());
    // One untimed call first (warm-up, as the protocol's check).
    let calls = std::iter::once(false).chain(std::iter::repeat_n(true, reps));
    for timed in calls {
        match timed_call(&bench) {
            Ok((s, cpu, check)) if timed => {
                row.seconds.push(s);
                row.cpu_seconds.push(cpu);
                row.checks.push(check);
            }
            Ok(_) => {}
            Err(e) => {
                row.skipped = Some(format!("bootstrapping failed: {e:#}"));
                break;
            }
        }
    }
    row.max_rss_bytes = max_rss_bytes();
    row
}

fn opt(x: Option<f64>, digits: usize) -> String {
    x.map_or("n/a".into(), |v| format!("{v:.digits$}"))
}

/// `rnsfhe bench ckks-bootstrap`: time (median), precision (worst minimum and median of medians over
/// the calls), levels left, key generation and key size for each set-up (the test chain of
/// `docs/ckks-bootstrapping.md`, the comparison's quick set-up, without `--quick` the bootstrapping
/// presets and OpenFHE's reference matched at `N = 2^15` and `2^16`), one key set in memory at a time; a set-up whose estimated memory exceeds what the system has available is skipped
/// and says so. `log_n`, when not empty, keeps the set-ups of those ring degrees.
///
/// Errors: writing the JSON.
pub fn run(options: &BenchOptions, log_n: &[u32]) -> anyhow::Result<()> {
    let machine = Machine::detect();
    let reps = if options.quick { 2 } else { 3 };
    let load_start = load_average();
    let mut rows = Vec::new();
    for (name, setup, gb) in setups(options.quick, log_n) {
        let free = available_bytes().map(|b| b as f64 / 1e9);
        if free.is_some_and(|f| f < gb) {
            let mut row = BootstrapRow::empty(&name, &setup);
            row.skipped = Some(format!(
                "needs about {gb} GB, {:.1} GB available",
                free.unwrap_or(0.0)
            ));
            rows.push(row);
            continue;
        }
        eprintln!("measuring {name} ...");
        rows.push(measure(name, setup, reps));
    }
    let load_end = load_average();
    println!(
        "## CKKS bootstrapping{}\n",
        if options.quick { " (--quick)" } else { "" }
    );
    println!("{}", machine.markdown_header());
    println!("{}", load_average_line(&load_start, &load_end));
    println!(
        "- one thread per bootstrapping unless RAYON_NUM_THREADS says otherwise; {reps} timed calls per \
         set-up after an untimed one; precision: bits of the real parts against the input \
         (peerlib.test_vector(slots, 1)), the worst minimum and the median of the medians over the calls\n"
    );
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let c = r.chain.as_ref();
            let k = r.keys.as_ref();
            let min = r.checks.iter().map(|c| c.min_bits).reduce(f64::min);
            let med: Vec<f64> = r.checks.iter().map(|c| c.median_bits).collect();
            vec![
                r.name.clone(),
                c.map_or("-".into(), |c| format!("{} / 2^{}", c.slots, c.log_n)),
                opt((!r.seconds.is_empty()).then(|| median(&r.seconds)), 2),
                format!(
                    "{} / {}",
                    opt(min, 1),
                    opt((!med.is_empty()).then(|| median(&med)), 1)
                ),
                r.checks
                    .first()
                    .map_or("-".into(), |c| c.levels_left.to_string()),
                c.map_or("-".into(), |c| c.bootstrap_depth.to_string()),
                c.map_or("-".into(), |c| {
                    format!(
                        "{} / {} / {}",
                        c.sparse_secret.map_or("-".into(), |h| h.to_string()),
                        c.eval_mod_k,
                        c.double_angle
                    )
                }),
                c.map_or("-".into(), |c| format!("{:.1e}", c.failure_probability)),
                opt(k.map(|k| k.keygen_s), 1),
                opt(k.and_then(|k| k.total_bytes).map(|b| b as f64 / 1e9), 2),
                opt(k.and_then(|k| k.expanded_bytes).map(|b| b as f64 / 1e9), 2),
                opt(r.max_rss_bytes.map(|b| b as f64 / 1e9), 1),
                c.map_or("-".into(), |c| format!("{:.0}", c.log_qp)),
                c.map_or("-".into(), |c| {
                    format!("{} / {} / {}", c.scale_bits, c.first_mod_bits, c.secret)
                }),
                r.skipped.clone().unwrap_or_default(),
            ]
        })
        .collect();
    print!(
        "{}",
        markdown_table(
            &[
                "set-up",
                "slots / N",
                "bootstrapping (s), median",
                "precision min / median (bits)",
                "levels left",
                "depth",
                "sparse h / K / double angles",
                "failure probability",
                "keygen (s)",
                "keys, seeded (GB)",
                "keys, expanded (GB)",
                "peak RSS (GB)",
                "log QP",
                "scale / q_0 bits / secret",
                "note",
            ],
            &table
        )
    );
    let report = BootstrapReport {
        table: "ckks-bootstrap",
        machine,
        quick: options.quick,
        load_average: [load_start, load_end],
        rows,
    };
    let path = write_json(&options.out, "ckks-bootstrap", &report)?;
    println!("\nJSON: {}", path.display());
    Ok(())
}

impl BootstrapRow {
    /// A row of `setup` with nothing measured yet (the start of [`measure`], or a set-up that is skipped).
    fn empty(name: &str, setup: &BootstrapSetup) -> Self {
        Self {
            name: name.to_string(),
            setup: setup.clone(),
            chain: None,
            keys: None,
            seconds: Vec::new(),
            cpu_seconds: Vec::new(),
            checks: Vec::new(),
            max_rss_bytes: None,
            skipped: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first values of `peerlib.test_vector(4, 1)` (python3 -c 'import peerlib;
    /// print(peerlib.test_vector(4, 1))' in bench/peers).
    #[test]
    fn test_vector_is_the_peers_lcg() {
        let x = peer_test_vector(4, 1);
        let want = PEERLIB_TEST_VECTOR_4_1;
        for (a, b) in x.iter().zip(want) {
            assert_eq!(*a, b);
        }
        assert!(peer_test_vector(1000, 1)
            .iter()
            .all(|v| (-1.0..=1.0).contains(v)));
    }

    const PEERLIB_TEST_VECTOR_4_1: [f64; 4] = [
        0.32183422707021236,
        -0.0652174735441804,
        -0.29637574777007103,
        0.08746336121112108,
    ];

    /// The protocol at a small insecure set-up: a ready line with the required fields, answers with a
    /// list per call, an error line that keeps serving, `quit`.
    #[test]
    fn serves_the_bootstrap_protocol() {
        let params = r#"{"log_n": 11, "slots": 1024, "security": "none", "secret": "hamming:64",
                         "level_budget": [3, 3], "levels_after": 2}"#;
        let input = "{\"op\": \"bootstrap\", \"reps\": 1}\nnot json\n{\"op\": \"mult\"}\n{\"op\": \"quit\"}\n{\"op\": \"bootstrap\"}\n";
        let mut out = Vec::new();
        serve_lines(params, input.as_bytes(), &mut out).expect("serve");
        let lines: Vec<Value> = String::from_utf8(out)
            .expect("UTF-8")
            .lines()
            .map(|l| serde_json::from_str(l).expect("JSON line"))
            .collect();
        assert_eq!(lines.len(), 5, "{lines:?}");
        let ready = &lines[0];
        assert_eq!(ready["ready"], true);
        assert_eq!(ready["params"]["log_n"], 11);
        assert_eq!(ready["params"]["slots"], 1024);
        assert_eq!(ready["params"]["levels_after"], 2);
        assert_eq!(ready["check"]["levels_left"], 2);
        // The test chain leaves about 20 bits at full slots (docs/ckks-bootstrapping.md).
        let min = ready["check"]["min_bits"].as_f64().expect("min_bits");
        assert!(min > 15.0, "{min}");
        assert!(ready["keys"]["total_bytes"].as_u64().expect("key bytes") > 0);
        let call = &lines[1];
        assert_eq!(call["op"], "bootstrap");
        assert_eq!(call["seconds"].as_array().expect("seconds").len(), 1);
        assert!(call["min_bits"][0].as_f64().expect("bits") > 15.0);
        assert_eq!(call["levels_left"][0], 2);
        assert!(lines[2]["error"].is_string());
        assert!(lines[3]["error"].is_string());
        assert_eq!(lines[4]["ok"], true);
    }

    /// Security "128" at N = 2^12: no chain fits the HE Standard's bound, and the set-up answers with an
    /// error line naming the bound instead of a ready line.
    #[test]
    fn no_128_bit_chain_is_an_error_line() {
        let params = r#"{"log_n": 12, "slots": 2048, "security": "128"}"#;
        let mut out = Vec::new();
        let err = serve_lines(params, "".as_bytes(), &mut out).expect_err("no 128-bit chain");
        assert!(format!("{err:#}").contains("no 128-bit chain"), "{err:#}");
        let line: Value = serde_json::from_slice(&out).expect("one JSON line");
        assert_eq!(line["ready"], false);
        assert!(line["error"].as_str().expect("error").contains("bound"));
    }
}
