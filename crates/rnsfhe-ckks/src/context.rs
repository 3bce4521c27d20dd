//! The checked, immutable CKKS context: prime chain, RLWE context, encoder, per-level scales and the
//! security estimate.
//!
//! # Prime chain (RNS-CKKS Section 3.1, Appendix B; Qu-Xu Section 4)
//!
//! The chain is `q_0, q_1, ..., q_L` (`L = levels`), then the special primes `p_0 .. p_{k-1}`:
//!
//! * the **scaling primes** `q_1 .. q_L` are NTT primes (`q = 1 mod 2N`) close to `2^log_scale`, taken from
//!   the candidates of [`ntt_primes_near_power_of_two`] in the order that keeps the scale of a chain of
//!   multiplications closest to `2^log_scale`: rescaling from `l` limbs divides the scale by `q_{l-1}`,
//!   so, going down from the top, `q_{l-1}` is the unused candidate nearest to `Delta_l^2 / 2^log_scale`
//!   (then `Delta_{l-1} = Delta_l^2 / q_{l-1}` stays within about one prime gap of `2^log_scale` instead of
//!   doubling its relative error at every level). With [`ConversionMode::ExactInteger`] the candidates
//!   are chosen the Qu-Xu way instead (Section 3.3): for the `c` primes needed near `2^log_scale` (`L`,
//!   plus `q_0` when `q0_bits == log_scale`), Algorithm 2 ([`qu_xu_max_eta`]) finds the largest `eta`
//!   with `c` NTT primes in `[2^log_scale / (1 + 2^-eta), 2^log_scale / (1 - 2^-eta)]` and Algorithm 3
//!   ([`qu_xu_primes`]) takes them, so the chain's [`CkksContext::eta`] is Algorithm 2's maximum; the
//!   order above still assigns these `c` candidates to the levels (when `q_0` is one of them, it is the
//!   one left over). The primes must also satisfy Qu-Xu Theorem 1 (`eta > log2((r + l)/r)`), which the
//!   RLWE context checks. `Fast` and `ExactFloat` keep the candidates above, unchanged;
//! * `q_0` is the largest NTT prime of `q0_bits` bits not already used ([`ntt_primes_of_bits`]); with
//!   `ExactInteger` it is another near-`2^log_scale` candidate when `q0_bits == log_scale`, otherwise a
//!   Qu-Xu prime near `2^q0_bits` ([`qu_xu_max_eta`], [`qu_xu_primes`]) that must be alone in its digit
//!   group (`alpha = 1`; [`CkksParams::for_exact_integer`] and [`crate::Preset::params_with_conversion`]
//!   arrange that for a parameter set laid out otherwise);
//! * the **bootstrapping primes** `q_{L+1} ..` ([`CkksParams::bootstrap_primes`], bottom first) are, for
//!   each bit size `b` in the list, the largest NTT primes of `b` bits not already used, assigned bottom
//!   up in decreasing order (`ExactInteger`: Qu-Xu primes near `2^b`, each alone in its digit, see
//!   [`CkksParams::digits_admit_exact_integer`]). Without them the chain is the one above, prime for
//!   prime;
//! * the **special primes** are the largest NTT primes of `special_bits` bits (`ExactInteger`: Qu-Xu
//!   primes near `2^special_bits`), distinct from the chain.
//!
//! The user's levels are `1 ..= L + 1` ([`CkksContext::user_max_level`]): fresh encryptions and default
//! encodings are there. The levels above, one per bootstrapping prime, up to
//! [`CkksContext::max_level`], belong to bootstrapping, which raises `q_0` to the very top (ModRaise)
//! and comes back down to the user's levels (Bossuat-Mouchet-Troncoso-Pastoriza-Hubaux, Eurocrypt
//! 2021, Section 6: the user's levels at the user's scale, the bootstrapping circuit on primes of its
//! own sizes).
//!
//! # Scales
//!
//! [`CkksContext::level_scale`] is the default scale of a plaintext encoded at a level: `2^log_scale` for
//! [`RescalingPolicy::FixedNominalScale`]; for [`RescalingPolicy::ExactScale`] `Delta_{L+1} = q_L` and
//! `Delta_{l-1} = Delta_l^2 / q_{l-1}` (Kim-Papadimitriou-Polyakov), so that a product of two operands at
//! the default scale of level `l`, rescaled once, has exactly the default scale of level `l - 1`.
//!
//! Above the user's top level `L + 1` (bootstrapping primes) both policies use the same rule read
//! upwards, `Delta_l = sqrt(Delta_{l-1} q_{l-1})`: a product of two operands at the default scale of
//! level `l`, rescaled once, lands exactly on the default scale of level `l - 1`, whatever the primes'
//! sizes. Each step halves the distance (in bits) between the scale and the prime below, so the scale
//! follows the primes: a few levels into EvalMod's 60-bit primes it works near `2^60`, where its
//! rescalings' rounding is small against the message (Bossuat et al. 2021, Section 5), and
//! CoeffsToSlots' output, declared at `Delta_c / K'`, is as large; on primes of about the user's scale
//! (SlotsToCoeffs) it stays near `Delta_{L+1}`. A fixed nominal scale would not do above the user's
//! levels: a product at `2^(2 log_scale)` rescaled by a 60-bit prime is far from `2^log_scale`. The
//! bootstrapping circuit reads these scales at EvalMod's input and output levels
//! ([`crate::Bootstrapper`]); its SlotsToCoeffs matrices carry the factor `Delta_out / Delta_s` (output
//! level against EvalMod's) so that a bootstrapped ciphertext has exactly the default scale of its own
//! level, the user's `Delta_{L+1}` when it lands at `L + 1`. Without bootstrapping primes nothing
//! changes.

use std::ops::Range;
use std::sync::Arc;

use rnsfhe_core::{ConversionMode, RlweContext, RlweParams};
use rnsfhe_math::primes::{
    closeness_eta, ntt_primes_near_power_of_two, ntt_primes_of_bits, qu_xu_max_eta, qu_xu_primes,
};
use rnsfhe_ring::conversion::{
    theorem1_eta_lower_bound, QuXuCloseness, DEFAULT_QU_XU_FAILURE_TARGET,
};
use rnsfhe_ring::{Coeff, GaloisGroup, Ntt, Poly, RnsBasis, RnsGadget};

use crate::encoder::Encoder;
use crate::error::{Error, Result};
use crate::params::{CkksParams, RescalingPolicy};
use crate::plaintext::Plaintext;
use crate::Complex64;
use rnsfhe_core::security::{estimate, SecurityEstimate};

/// Relative scale difference below which two scales count as equal under
/// [`RescalingPolicy::ExactScale`] (floating-point rounding of the scale bookkeeping only).
pub const EXACT_SCALE_TOLERANCE: f64 = 1.0 / (1u64 << 40) as f64;

/// The immutable context of a CKKS parameter set; built once by [`CkksContext::new`], shared by `Arc`,
/// `Send + Sync`.
pub struct CkksContext {
    params: CkksParams,
    rlwe: Arc<RlweContext>,
    encoder: Encoder,
    /// Default scale per level: entry `l - 1` for level (limb count) `l`.
    level_scales: Vec<f64>,
    log_qp: f64,
    security: SecurityEstimate,
    eta: u32,
    /// Qu-Xu Theorem 1 figures per level: entry `l - 1` for level (limb count) `l`.
    qu_xu_levels: Vec<QuXuLevel>,
    tolerance: f64,
    /// `X^(N/2)` in NTT form over the full chain (multiplication by `i` in every slot).
    x_half: Poly<Ntt>,
}

impl std::fmt::Debug for CkksContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CkksContext")
            .field("n", &self.n())
            .field("log_scale", &self.params.log_scale)
            .field("levels", &self.params.levels)
            .field("log_qp", &self.log_qp)
            .field("security", &self.security)
            .field("rlwe", &self.rlwe)
            .finish_non_exhaustive()
    }
}

impl CkksParams {
    /// The RLWE parameters these CKKS parameters build: the checked bit sizes and the prime chain of
    /// the [context's documentation](crate::context) (a prime search, no tables). Its
    /// [`RlweParams::fingerprint`] is the fingerprint of the context [`CkksContext::new`] builds.
    ///
    /// Errors: those of [`CkksContext::new`] about bit sizes and primes.
    pub fn rlwe_params(&self) -> Result<RlweParams> {
        CkksContext::derive_rlwe_params(self)
    }

    /// The security verdict of these parameters against the HE Standard (`N`, `log2(QP)` of the primes
    /// [`CkksParams::rlwe_params`] finds, the secret distribution and `sigma`), without building a
    /// context.
    ///
    /// Errors: those of [`CkksParams::rlwe_params`].
    pub fn security(&self) -> Result<SecurityEstimate> {
        let rlwe = self.rlwe_params()?;
        Ok(estimate(self.n(), rlwe.log2_qp(), self.secret, self.sigma))
    }
}

/// The unused candidate nearest to `target`; removes it from `pool`.
fn take_nearest(pool: &mut Vec<u64>, target: f64) -> Option<u64> {
    let (idx, _) = pool.iter().enumerate().min_by(|(_, a), (_, b)| {
        let da = (**a as f64 - target).abs();
        let db = (**b as f64 - target).abs();
        da.total_cmp(&db)
    })?;
    Some(pool.swap_remove(idx))
}

fn invalid(what: &'static str, reason: String) -> Error {
    Error::InvalidParams { what, reason }
}

impl CkksContext {
    /// Checks `params`, builds the prime chain (see the [module documentation](self)), the RLWE context
    /// (key-switching tables in the chosen conversion mode), the encoder and the per-level scales, and
    /// estimates security against the HE Standard ([`crate::security`]). Insecure or unestablished
    /// parameters are accepted (the paper's presets target 80 bits) but flagged:
    /// [`CkksContext::is_insecure`], [`CkksContext::security_warning`].
    ///
    /// Errors: [`Error::InvalidParams`] for bit sizes out of range (`log_scale` in `[10, 60]`,
    /// `q0_bits` in `[log_scale, 61]`, `special_bits` in `[10, 61]`), no special prime, a special modulus
    /// `P` more than [`MAX_DIGIT_EXCESS_BITS`] bits smaller than a digit group, a `q_0` that
    /// `ExactInteger` cannot convert; prime search and RLWE context errors otherwise (too few primes,
    /// `dnum` out of range, a conversion mode the moduli do not support).
    pub fn new(params: CkksParams) -> Result<Arc<Self>> {
        let rlwe_params = params.rlwe_params()?;
        let p = &params;
        let n = params.n();
        let nominal = (p.log_scale as f64).exp2();
        let q_moduli = rlwe_params.q_moduli.clone();
        let p_moduli = rlwe_params.p_moduli.clone();
        let scaling = q_moduli[1..=p.levels].to_vec();
        // The security check needs only the moduli: it comes before any table is built.
        let log_qp = rlwe_params.log2_qp();
        let security = estimate(n, log_qp, p.secret, p.sigma);
        if !security.is_secure() && !p.insecure_for_testing {
            return Err(Error::Insecure {
                n,
                log_qp,
                bound: rnsfhe_core::security::max_log_qp(n, crate::SecurityLevel::Bits128)
                    .unwrap_or(0),
                secret: p.secret,
                sigma: p.sigma,
                estimate: security,
            });
        }
        let rlwe = RlweContext::new(rlwe_params)?;
        check_special_modulus(&q_moduli, &p_moduli, rlwe.gadget().groups())?;
        let qu_xu_levels = qu_xu_levels(&q_moduli, &p_moduli, rlwe.gadget())?;
        let encoder = Encoder::new(n)?;

        // Default scales per level (index l - 1 for l limbs): the user's levels, then the
        // bootstrapping levels upwards (module documentation, "Scales").
        let user_top = p.levels + 1;
        let top = q_moduli.len();
        let mut level_scales = vec![nominal; top];
        if p.rescaling == RescalingPolicy::ExactScale && user_top >= 2 {
            let mut d = q_moduli[user_top - 1] as f64;
            level_scales[user_top - 1] = d;
            for l in (1..user_top).rev() {
                d = d * d / q_moduli[l] as f64;
                level_scales[l - 1] = d;
            }
        }
        for l in user_top + 1..=top {
            level_scales[l - 1] = (level_scales[l - 2] * q_moduli[l - 1] as f64).sqrt();
        }

        let eta = if scaling.is_empty() {
            64
        } else {
            closeness_eta(&scaling, p.log_scale)
        };
        let tolerance = match p.rescaling {
            RescalingPolicy::ExactScale => EXACT_SCALE_TOLERANCE,
            RescalingPolicy::FixedNominalScale => {
                EXACT_SCALE_TOLERANCE.max(16.0 * (-(eta as f64)).exp2())
            }
        };
        let mut xh = vec![0i64; n];
        xh[n / 2] = 1;
        let x_half = Poly::<Coeff>::from_i64(rlwe.chain(), &xh)?.into_ntt();
        Ok(Arc::new(Self {
            params,
            rlwe,
            encoder,
            level_scales,
            log_qp,
            security,
            eta,
            qu_xu_levels,
            tolerance,
            x_half,
        }))
    }

    /// The RLWE parameters `params` build: the checked bit sizes and the prime chain of the
    /// [module documentation](self) (no tables; [`CkksParams::rlwe_params`]).
    fn derive_rlwe_params(params: &CkksParams) -> Result<RlweParams> {
        let p = params;
        // A usable error width first (as BFV checks it): an absurd one is refused as such, not reported
        // as insecure by the security check that follows.
        rnsfhe_core::security::check_sigma(p.sigma).map_err(|reason| invalid("sigma", reason))?;
        if !(10..=17).contains(&p.log_n) {
            return Err(invalid(
                "log_n",
                format!("log_n = {} must be in [10, 17]", p.log_n),
            ));
        }
        if !(10..=60).contains(&p.log_scale) {
            return Err(invalid(
                "log_scale",
                format!("log_scale = {} must be in [10, 60]", p.log_scale),
            ));
        }
        if p.q0_bits < p.log_scale || p.q0_bits > 61 {
            return Err(invalid(
                "q0_bits",
                format!(
                    "q0_bits = {} must be in [log_scale = {}, 61]: decryption at the last level needs \
                     |x| Delta < q_0 / 2",
                    p.q0_bits, p.log_scale
                ),
            ));
        }
        if p.special_primes == 0 || !(10..=61).contains(&p.special_bits) {
            return Err(invalid(
                "special primes",
                format!(
                    "{} special prime(s) of {} bits: key switching needs at least one, of 10 to 61 bits, \
                     with P at least the largest digit (RNS-CKKS Section 3.3)",
                    p.special_primes, p.special_bits
                ),
            ));
        }
        check_bootstrap_primes(p)?;
        let n = params.n();
        let two_n = 2 * n as u64;
        let exact_int = p.conversion == ConversionMode::ExactInteger;
        let nominal = (p.log_scale as f64).exp2();

        // Scaling primes, greedy order from the top (see the module documentation).
        let extra = usize::from(exact_int && p.q0_bits == p.log_scale);
        let mut pool = if exact_int {
            // Qu-Xu Algorithms 2 and 3: exactly the primes needed near 2^log_scale, at the largest eta.
            let count = p.levels + extra;
            if count == 0 {
                Vec::new()
            } else {
                let eta = qu_xu_max_eta(p.log_scale, two_n, count)?;
                qu_xu_primes(p.log_scale, eta, two_n, count, &[])?
            }
        } else {
            ntt_primes_near_power_of_two(p.log_scale, two_n, 2 * (p.levels + extra) + 8)?
        };
        let mut scaling_desc = Vec::with_capacity(p.levels);
        let mut delta = match p.rescaling {
            RescalingPolicy::FixedNominalScale => nominal,
            RescalingPolicy::ExactScale => 0.0,
        };
        for i in 0..p.levels {
            let target = if i == 0 {
                nominal
            } else {
                delta * delta / nominal
            };
            let q = take_nearest(&mut pool, target).ok_or_else(|| {
                invalid(
                    "levels",
                    format!(
                        "not enough primes near 2^{} for {} levels",
                        p.log_scale, p.levels
                    ),
                )
            })?;
            if i == 0 && p.rescaling == RescalingPolicy::ExactScale {
                delta = q as f64;
            }
            delta = delta * delta / q as f64;
            scaling_desc.push(q);
        }
        let scaling: Vec<u64> = scaling_desc.iter().rev().copied().collect();

        // q_0.
        let q0 = if exact_int {
            if p.q0_bits == p.log_scale {
                take_nearest(&mut pool, nominal).ok_or_else(|| {
                    invalid("q0_bits", "no prime left near 2^log_scale for q_0".into())
                })?
            } else {
                let alpha = (p.levels + 1).div_ceil(p.dnum.max(1));
                if alpha > 1 && p.levels > 0 {
                    // The group the RLWE context would refuse: q_0 and the next alpha - 1 scaling primes.
                    let q0 = ntt_primes_of_bits(p.q0_bits, two_n, 1, &scaling)?[0];
                    let group: Vec<u64> = std::iter::once(q0)
                        .chain(scaling.iter().take(alpha - 1).copied())
                        .collect();
                    let c = QuXuCloseness::of(&group);
                    let r = DEFAULT_QU_XU_FAILURE_TARGET;
                    return Err(invalid(
                        "q0_bits",
                        format!(
                            "ExactInteger conversion (Qu-Xu Theorem 1) needs every digit group within a \
                             factor 1 ± 2^-eta of one power of two with eta > log2((r + l) / r) = {:.3} \
                             (l = {alpha} primes per group, r = 2^{:.0}), but q_0 ({} bits) shares digit \
                             group 0 with scaling primes near 2^{}, which gives only eta = {} (power 2^{}): \
                             set q0_bits = log_scale, or dnum = levels + 1 = {} \
                             (CkksParams::for_exact_integer)",
                            theorem1_eta_lower_bound(alpha, r),
                            r.log2(),
                            p.q0_bits,
                            p.log_scale,
                            c.eta,
                            c.power,
                            p.levels + 1
                        ),
                    ));
                }
                let eta = qu_xu_max_eta(p.q0_bits, two_n, 1)?;
                qu_xu_primes(p.q0_bits, eta, two_n, 1, &scaling)?[0]
            }
        } else {
            ntt_primes_of_bits(p.q0_bits, two_n, 1, &scaling)?[0]
        };
        let mut q_moduli = Vec::with_capacity(p.chain_len());
        q_moduli.push(q0);
        q_moduli.extend_from_slice(&scaling);
        let upper = bootstrap_moduli(&p.bootstrap_primes, two_n, exact_int, &q_moduli)?;
        q_moduli.extend_from_slice(&upper);

        // Special primes.
        let p_moduli = if exact_int {
            let eta = qu_xu_max_eta(p.special_bits, two_n, p.special_primes + q_moduli.len())?;
            qu_xu_primes(p.special_bits, eta, two_n, p.special_primes, &q_moduli)?
        } else {
            ntt_primes_of_bits(p.special_bits, two_n, p.special_primes, &q_moduli)?
        };

        Ok(RlweParams {
            log_n: p.log_n,
            q_moduli,
            p_moduli,
            dnum: p.dnum,
            conversion: p.conversion,
            secret: p.secret,
            sigma: p.sigma,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &CkksParams {
        &self.params
    }

    /// The RLWE context (bases, key switching).
    pub fn rlwe(&self) -> &Arc<RlweContext> {
        &self.rlwe
    }

    /// The encoder (RNS-CKKS Section 2.1, canonical embedding).
    pub fn encoder(&self) -> &Encoder {
        &self.encoder
    }

    /// Ring degree `N`.
    pub fn n(&self) -> usize {
        self.rlwe.n()
    }

    /// The Galois group of the slots (generator [`crate::encoder::ROTATION_GENERATOR`] = 5, conjugation
    /// `2N - 1`): the elements of rotations and the steps of elements.
    pub fn galois_group(&self) -> &GaloisGroup {
        self.encoder.galois_group()
    }

    /// Largest slot count `N/2`.
    pub fn max_slots(&self) -> usize {
        self.rlwe.n() / 2
    }

    /// The top level (limb count) of the whole chain: [`CkksContext::user_max_level`] plus the
    /// bootstrapping primes ([`CkksContext::bootstrap_levels`]); ModRaise raises to it. Without
    /// bootstrapping primes, the top level of fresh ciphertexts.
    pub fn max_level(&self) -> usize {
        self.rlwe.max_level()
    }

    /// The user's top level (limb count) `L + 1`, `L` = [`CkksParams::levels`]: the level of fresh
    /// encryptions and of default encodings, and where bootstrapping lands when its circuit uses every
    /// bootstrapping prime. Equal to [`CkksContext::max_level`] without bootstrapping primes.
    pub fn user_max_level(&self) -> usize {
        self.params.levels + 1
    }

    /// The levels above the user's ([`CkksParams::bootstrap_primes`]), for bootstrapping:
    /// `max_level - user_max_level`.
    pub fn bootstrap_levels(&self) -> usize {
        self.params.bootstrap_primes.len()
    }

    /// The chain `q_0 .. q_L`.
    pub fn q_moduli(&self) -> &[u64] {
        &self.rlwe.params().q_moduli
    }

    /// The special primes `p_0 .. p_{k-1}`.
    pub fn p_moduli(&self) -> &[u64] {
        &self.rlwe.params().p_moduli
    }

    /// `log2(Q_L)` of the full chain (Table 1's `log Q_L`).
    pub fn log_q(&self) -> f64 {
        self.rlwe.chain().log2_product()
    }

    /// `log2(Q P)`, the modulus of the key-switching keys (what the security table bounds).
    pub fn log_qp(&self) -> f64 {
        self.log_qp
    }

    /// The security estimate against the HE Standard table (`N`, `log2(QP)`, the secret distribution and
    /// `sigma`, see [`rnsfhe_core::security`]).
    pub fn security(&self) -> SecurityEstimate {
        self.security
    }

    /// The verdict of [`CkksContext::security`] with the built-in lattice estimate of these parameters
    /// (its `sigma` and secret distribution; [`rnsfhe_core::security::summary`]), as one line.
    pub fn security_summary(&self) -> String {
        rnsfhe_core::security::summary(self.n(), self.log_qp, self.params.secret, self.params.sigma)
    }

    /// The warning flag: `true` unless at least 128-bit security is established by the HE Standard table
    /// (always for sparse secrets such as the paper's `h = 64`).
    pub fn is_insecure(&self) -> bool {
        !self.security.is_secure()
    }

    /// A human-readable warning when [`CkksContext::is_insecure`], naming `N`, `log2(QP)` and the bound.
    pub fn security_warning(&self) -> Option<String> {
        if !self.is_insecure() {
            return None;
        }
        let bound = rnsfhe_core::security::max_log_qp(self.n(), crate::SecurityLevel::Bits128);
        Some(format!(
            "WARNING: these CKKS parameters are not established as 128-bit secure: N = {}, log2(QP) = {:.1} \
             (HE Standard 128-bit bound for a uniform ternary secret and sigma >= {}: {}), secret {:?}, \
             sigma = {}; security: {}. Use them for tests and paper reproduction only.",
            self.n(),
            self.log_qp,
            rnsfhe_core::security::MIN_STANDARD_SIGMA,
            bound.map_or("none".to_string(), |b| b.to_string()),
            self.params.secret,
            self.params.sigma,
            self.security
        ))
    }

    /// Closeness `eta` of the scaling primes to `2^log_scale` (`|q / 2^log_scale - 1| <= 2^-eta`,
    /// RNS-CKKS Section 3.1 and Appendix B).
    pub fn eta(&self) -> u32 {
        self.eta
    }

    /// Qu-Xu Theorem 1 figures of every level, entry `l - 1` for level (limb count) `l`: see
    /// [`QuXuLevel`] and the [module documentation](self#qu-xu-theorem-1-figures). Meaningful for
    /// [`ConversionMode::ExactInteger`]; in the other modes a description of the moduli only.
    pub fn qu_xu_levels(&self) -> &[QuXuLevel] {
        &self.qu_xu_levels
    }

    /// The Qu-Xu Theorem 1 figures of one level (limb count), see [`CkksContext::qu_xu_levels`].
    ///
    /// Errors: [`Error::InvalidArgument`] unless `1 <= level <= max_level`.
    pub fn qu_xu_level(&self, level: usize) -> Result<&QuXuLevel> {
        self.check_level(level, "Qu-Xu level figures")?;
        Ok(&self.qu_xu_levels[level - 1])
    }

    /// A one-line summary of [`CkksContext::qu_xu_levels`] for printing (`rnsfhe params`): the range of the
    /// per-level `eta` and the largest failure bound `r`, e.g. `eta 17..19, r <= 3.1e-5 (ExactInteger)`;
    /// for the other modes `(unused by Fast)` or `(unused by ExactFloat)` follows, and `not admitted`
    /// when `ExactInteger` would refuse some conversion of these primes.
    pub fn qu_xu_summary(&self) -> String {
        let etas = self.qu_xu_levels.iter().map(QuXuLevel::eta);
        let (lo, hi) = etas.fold((u32::MAX, 0), |(lo, hi), e| (lo.min(e), hi.max(e)));
        let r = self
            .qu_xu_levels
            .iter()
            .map(QuXuLevel::failure_bound)
            .fold(0.0, f64::max);
        let admitted = self
            .qu_xu_levels
            .iter()
            .all(|l| l.admitted(DEFAULT_QU_XU_FAILURE_TARGET));
        let mode = self.params.conversion;
        let note = match (mode, admitted) {
            (ConversionMode::ExactInteger, _) => "(ExactInteger)".to_string(),
            (_, true) => format!("(unused by {mode})"),
            (_, false) => format!("(unused by {mode}; not admitted by ExactInteger)"),
        };
        let etas = if lo == hi {
            format!("eta {lo}")
        } else {
            format!("eta {lo}..{hi}")
        };
        format!("{etas}, r <= {r:.2e} {note}")
    }

    /// The relative scale difference that binary operations accept without correction: `2^-40` for
    /// [`RescalingPolicy::ExactScale`]; for [`RescalingPolicy::FixedNominalScale`] the larger of `2^-40` and
    /// `16 * 2^-eta`, the basis approximation error the RNS-CKKS paper accepts (Section 3.1).
    pub fn scale_tolerance(&self) -> f64 {
        self.tolerance
    }

    /// The default scale of a plaintext encoded at `level` (limb count); see the
    /// [module documentation](self).
    ///
    /// Errors: [`Error::InvalidArgument`] unless `1 <= level <= max_level`.
    pub fn level_scale(&self, level: usize) -> Result<f64> {
        self.check_level(level, "level scale")?;
        Ok(self.level_scales[level - 1])
    }

    /// The fingerprint every ciphertext, plaintext and key of this context carries.
    pub fn fingerprint(&self) -> u64 {
        self.rlwe.fingerprint()
    }

    /// The basis `Q_l` of a level.
    pub(crate) fn basis(&self, level: usize) -> Result<&Arc<RnsBasis>> {
        Ok(self.rlwe.basis_at(level)?)
    }

    /// `X^(N/2)` (NTT form) at a level.
    pub(crate) fn x_half_at(&self, level: usize) -> Result<Poly<Ntt>> {
        let mut x = self.x_half.drop_to(level)?;
        x.rebase(self.basis(level)?)?;
        Ok(x)
    }

    pub(crate) fn check_level(&self, level: usize, operation: &'static str) -> Result<()> {
        if level == 0 || level > self.max_level() {
            return Err(Error::InvalidArgument {
                operation,
                reason: format!(
                    "level {level} is outside [1, {}] (levels count limbs)",
                    self.max_level()
                ),
            });
        }
        Ok(())
    }

    /// Encodes `values` into `slots` slots at `level` with the level's default scale
    /// ([`CkksContext::level_scale`]).
    ///
    /// Errors: invalid level ([`crate::Error::InvalidArgument`]); from the encoder, invalid slot count
    /// ([`crate::Error::InvalidSlots`]), more values than slots ([`crate::Error::TooManyValues`]),
    /// non-finite values ([`crate::Error::NonFinite`]), scale too large for the modulus
    /// ([`crate::Error::EncodingScaleTooLarge`]).
    pub fn encode(&self, values: &[Complex64], slots: usize, level: usize) -> Result<Plaintext> {
        let scale = self.level_scale(level)?;
        self.encode_at_scale(values, slots, level, scale)
    }

    /// Real values, see [`CkksContext::encode`].
    pub fn encode_real(&self, values: &[f64], slots: usize, level: usize) -> Result<Plaintext> {
        let z: Vec<Complex64> = values.iter().map(|&x| Complex64::new(x, 0.0)).collect();
        self.encode(&z, slots, level)
    }

    /// Encodes at an explicit scale (`round(scale * tau^-1(values))`, RNS-CKKS Section 2.1).
    ///
    /// Errors: as [`CkksContext::encode`].
    pub fn encode_at_scale(
        &self,
        values: &[Complex64],
        slots: usize,
        level: usize,
        scale: f64,
    ) -> Result<Plaintext> {
        let basis = self.basis(level)?;
        let poly = self.encoder.encode(values, slots, scale, basis)?;
        Ok(Plaintext::from_parts(
            poly,
            scale,
            slots,
            self.fingerprint(),
        ))
    }

    /// The coefficient form of [`CkksContext::encode`] at the level's default scale, before the NTT
    /// (for encryption, which adds it to its error term first): the polynomial and its scale.
    pub(crate) fn encode_coeff(
        &self,
        values: &[Complex64],
        slots: usize,
        level: usize,
    ) -> Result<(Poly<Coeff>, f64)> {
        let scale = self.level_scale(level)?;
        let basis = self.basis(level)?;
        Ok((
            self.encoder.encode_coeff(values, slots, scale, basis)?,
            scale,
        ))
    }

    /// Decodes a plaintext (at its own scale and slot count).
    ///
    /// Errors: [`Error::ContextMismatch`] for a plaintext of another context; decoder errors.
    pub fn decode(&self, pt: &Plaintext) -> Result<Vec<Complex64>> {
        self.check_fingerprint(pt.fingerprint(), "plaintext")?;
        self.encoder
            .decode(&pt.poly().clone().into_coeff(), pt.slots(), pt.scale())
    }

    pub(crate) fn check_fingerprint(&self, got: u64, object: &'static str) -> Result<()> {
        if got == self.fingerprint() {
            Ok(())
        } else {
            Err(Error::ContextMismatch {
                object,
                expected: self.fingerprint(),
                got,
            })
        }
    }
}

/// Qu-Xu Theorem 1 figures of the basis conversions key switching runs at one level (see the
/// [module documentation](self#qu-xu-theorem-1-figures)): for each source basis, the number of moduli `l`,
/// the power `2^m` they are closest to, the closeness `eta` and the failure bound
/// `r = l 2^-eta / (1 - 2^-eta)` ([`QuXuCloseness::failure_bound`]).
#[derive(Clone, Debug, PartialEq)]
pub struct QuXuLevel {
    /// The level (limb count `l` of `Q_l`).
    pub level: usize,
    /// ModUp: one entry per digit group touched at this level (its primes among `q_0 .. q_{l-1}`; with
    /// GHS, `dnum = 1`, the single group is all of `Q_l`).
    pub mod_up: Vec<QuXuCloseness>,
    /// ModDown: the special primes `P` (the same at every level).
    pub mod_down: QuXuCloseness,
    /// ModDown merged with rescaling (source `{q_{l-1}} ∪ P`), present when `ExactInteger` admits that
    /// basis (with the default failure target), i.e. when relinearization followed by rescaling runs it
    /// in `ExactInteger` mode; otherwise that mode runs ModDown and rescaling separately. `None` at level 1.
    pub mod_down_rescale: Option<QuXuCloseness>,
}

impl QuXuLevel {
    /// All conversions of the level: ModUp per digit, ModDown, and the merged ModDown-rescale if present.
    pub fn conversions(&self) -> impl Iterator<Item = &QuXuCloseness> + '_ {
        self.mod_up
            .iter()
            .chain(std::iter::once(&self.mod_down))
            .chain(self.mod_down_rescale.iter())
    }

    /// The level's `eta`: the smallest over its conversions.
    pub fn eta(&self) -> u32 {
        self.conversions().map(|c| c.eta).min().unwrap_or(0)
    }

    /// The level's failure bound `r` of Theorem 1: the largest over its conversions (each conversion's
    /// unguarded error term is off with probability below its own bound).
    pub fn failure_bound(&self) -> f64 {
        self.conversions()
            .map(QuXuCloseness::failure_bound)
            .fold(0.0, f64::max)
    }

    /// Whether `ExactInteger` with failure target `r` accepts the source bases of ModUp and ModDown (the
    /// merged ModDown-rescale is optional: without it the mode runs the two steps separately).
    pub fn admitted(&self, r: f64) -> bool {
        self.mod_up.iter().all(|c| c.admits(r)) && self.mod_down.admits(r)
    }
}

/// The [`QuXuLevel`] of every level `1..=L+1` of a chain, as the RLWE context builds its key-switching
/// converters (digit groups of the gadget at each level, `P`, and `{q_{l-1}} ∪ P` when admitted).
fn qu_xu_levels(q_moduli: &[u64], p_moduli: &[u64], gadget: &RnsGadget) -> Result<Vec<QuXuLevel>> {
    let mod_down = QuXuCloseness::of(p_moduli);
    (1..=q_moduli.len())
        .map(|level| {
            let mod_up = gadget
                .groups_at(level)?
                .into_iter()
                .map(|g| QuXuCloseness::of(&q_moduli[g]))
                .collect();
            let mod_down_rescale = (level >= 2)
                .then(|| {
                    let src: Vec<u64> = std::iter::once(q_moduli[level - 1])
                        .chain(p_moduli.iter().copied())
                        .collect();
                    QuXuCloseness::of(&src)
                })
                .filter(|c| c.admits(DEFAULT_QU_XU_FAILURE_TARGET));
            Ok(QuXuLevel {
                level,
                mod_up,
                mod_down,
                mod_down_rescale,
            })
        })
        .collect()
}

/// The most bootstrapping primes a parameter set may ask for (the largest circuits use about 20:
/// 4 + 12 + 4 levels).
pub const MAX_BOOTSTRAP_PRIMES: usize = 64;

/// Checks [`CkksParams::bootstrap_primes`]: at most [`MAX_BOOTSTRAP_PRIMES`], each of 10 to 61 bits,
/// and, with `ExactInteger`, each alone in its digit group (a group mixing sizes is close to no single
/// power of two, Qu-Xu Theorem 1).
fn check_bootstrap_primes(p: &CkksParams) -> Result<()> {
    let b = &p.bootstrap_primes;
    if b.len() > MAX_BOOTSTRAP_PRIMES {
        return Err(invalid(
            "bootstrap_primes",
            format!(
                "{} bootstrapping primes: at most {MAX_BOOTSTRAP_PRIMES} are accepted",
                b.len()
            ),
        ));
    }
    if let Some((i, bits)) = b.iter().enumerate().find(|(_, b)| !(10..=61).contains(*b)) {
        return Err(invalid(
            "bootstrap_primes",
            format!("bootstrapping prime {i} has {bits} bits: each must have 10 to 61"),
        ));
    }
    if !b.is_empty() && p.conversion == ConversionMode::ExactInteger && p.alpha() > 1 {
        return Err(invalid(
            "bootstrap_primes",
            format!(
                "ExactInteger conversion (Qu-Xu Theorem 1) needs every digit group close to one power \
                 of two, but with bootstrapping primes digit groups of alpha = {} primes mix sizes: set \
                 dnum = {} (one prime per digit, CkksParams::for_exact_integer) or use Fast or \
                 ExactFloat conversion",
                p.alpha(),
                p.chain_len()
            ),
        ));
    }
    Ok(())
}

/// The bootstrapping primes of the sizes `bits` (bottom first), distinct from `used`: per size the
/// largest NTT primes below `2^b` (with `exact_int`, Qu-Xu Algorithms 2 and 3 near `2^b`), assigned
/// bottom up in the order found.
fn bootstrap_moduli(bits: &[u32], two_n: u64, exact_int: bool, used: &[u64]) -> Result<Vec<u64>> {
    let mut sizes: Vec<u32> = bits.to_vec();
    sizes.sort_unstable();
    sizes.dedup();
    let mut taken: Vec<u64> = used.to_vec();
    let mut per_size = Vec::with_capacity(sizes.len());
    for &b in &sizes {
        let count = bits.iter().filter(|&&x| x == b).count();
        let primes = if exact_int {
            let eta = qu_xu_max_eta(b, two_n, count + taken.len())?;
            qu_xu_primes(b, eta, two_n, count, &taken)?
        } else {
            ntt_primes_of_bits(b, two_n, count, &taken)?
        };
        taken.extend_from_slice(&primes);
        per_size.push((b, primes.into_iter()));
    }
    bits.iter()
        .map(|b| {
            per_size
                .iter_mut()
                .find(|(size, _)| size == b)
                .and_then(|(_, it)| it.next())
                .ok_or_else(|| invalid("bootstrap_primes", format!("no {b}-bit prime left")))
        })
        .collect()
}

/// Rejects a special modulus `P` smaller than the largest digit group `Q_j` of hybrid key switching: the
/// key-switching noise grows like `Q_j / P` (RNS-CKKS Section 3.3; Han-Ki Section 2.4). A relinearization
/// adds it at the product's scale `Delta^2` and tolerates a `P` somewhat short of the digit, but a rotation
/// adds it at `Delta`: with `P` more than [`MAX_DIGIT_EXCESS_BITS`] bits short, rotations lose that many
/// bits and products soon follow, silently; such parameters are refused.
/// How many bits a digit group may exceed the special modulus `P` ([`CkksContext::new`] refuses more).
pub const MAX_DIGIT_EXCESS_BITS: f64 = 10.0;

fn check_special_modulus(
    q_moduli: &[u64],
    p_moduli: &[u64],
    groups: &[Range<usize>],
) -> Result<()> {
    let log2 = |m: &[u64]| m.iter().map(|&q| (q as f64).log2()).sum::<f64>();
    let log_p = log2(p_moduli);
    for (j, g) in groups.iter().enumerate() {
        let log_digit = log2(&q_moduli[g.clone()]);
        if log_digit > log_p + MAX_DIGIT_EXCESS_BITS {
            return Err(Error::InvalidParams {
                what: "special primes",
                reason: format!(
                    "P = {} special prime(s) has {log_p:.1} bits, but digit group {j} (primes {}..{}) has \
                     {log_digit:.1}: key switching would add noise of about 2^{:.0} times its usual size (at most 2^10 is \
                     accepted); use more special primes (at least {:.0} bits in total) or a larger dnum (smaller digits)",
                    p_moduli.len(),
                    g.start,
                    g.end,
                    log_digit - log_p,
                    log_digit.ceil()
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::params::Preset;
    use rnsfhe_core::SecretDistribution;

    fn small(policy: RescalingPolicy, mode: ConversionMode) -> CkksParams {
        CkksParams {
            log_n: 12,
            log_scale: 40,
            q0_bits: 50,
            levels: 4,
            bootstrap_primes: Vec::new(),
            special_primes: 1,
            special_bits: 55,
            dnum: 5,
            secret: SecretDistribution::Ternary,
            sigma: 3.2,
            conversion: mode,
            rescaling: policy,
            insecure_for_testing: true,
        }
    }

    #[test]
    fn chain_and_scales() {
        for mode in [
            ConversionMode::Fast,
            ConversionMode::ExactFloat,
            ConversionMode::ExactInteger,
        ] {
            let ctx = CkksContext::new(small(RescalingPolicy::ExactScale, mode)).unwrap();
            assert_eq!(ctx.max_level(), 5);
            assert_eq!(ctx.q_moduli().len(), 5);
            // Exact scales stay within a few prime gaps of 2^40.
            for l in 1..=5 {
                let s = ctx.level_scale(l).unwrap();
                assert!((s.log2() - 40.0).abs() < 1e-3, "level {l}: {}", s.log2());
            }
            assert!(ctx.is_insecure() || ctx.log_qp() <= 109.0);
        }
    }

    #[test]
    fn special_modulus_too_small_for_a_digit_is_refused() {
        // dnum 1: one digit of 5 primes (210 bits) against P of 55 bits.
        let mut p = small(RescalingPolicy::ExactScale, ConversionMode::Fast);
        p.dnum = 1;
        match CkksContext::new(p) {
            Err(Error::InvalidParams { what, reason }) => {
                assert_eq!(what, "special primes");
                assert!(reason.contains("digit group 0"), "{reason}");
            }
            other => panic!("expected InvalidParams, got {other:?}"),
        }
        // Within the slack: accepted (dnum 5, one prime per digit, P of 55 bits).
        assert!(CkksContext::new(small(RescalingPolicy::ExactScale, ConversionMode::Fast)).is_ok());
        for preset in Preset::ALL {
            assert!(CkksContext::new(preset.params()).is_ok(), "{preset:?}");
        }
    }

    #[test]
    fn qu_xu_figures_per_level() {
        use rnsfhe_ring::BasisConverter;
        let r = DEFAULT_QU_XU_FAILURE_TARGET;
        // GHS (dnum = 1, all primes near 2^40, P of 3 x 55 bits) and hybrid (dnum = 2, P of 2 x 55 bits)
        // in ExactInteger mode; and the special primes near 2^40 too, which admits ModDown merged with
        // rescaling.
        for (dnum, special_primes, special_bits) in [(1, 3, 55), (2, 2, 55), (2, 2, 40)] {
            let mut p = small(RescalingPolicy::ExactScale, ConversionMode::ExactInteger);
            p.q0_bits = 40;
            p.levels = 3;
            p.dnum = dnum;
            p.special_primes = special_primes;
            p.special_bits = special_bits;
            let ctx = CkksContext::new(p).unwrap();
            let gadget = ctx.rlwe().gadget();
            let special = ctx.rlwe().special_basis();
            assert_eq!(ctx.qu_xu_levels().len(), ctx.max_level());
            for level in 1..=ctx.max_level() {
                let rec = ctx.qu_xu_level(level).unwrap();
                assert_eq!(rec.level, level);
                let groups = gadget.groups_at(level).unwrap();
                assert_eq!(rec.mod_up.len(), groups.len());
                if dnum == 1 {
                    assert_eq!(rec.mod_up[0].moduli, level, "GHS: ModUp from all of Q_l");
                }
                // The figures are those of the converters key switching builds on the same bases.
                for (j, (c, g)) in rec.mod_up.iter().zip(&groups).enumerate() {
                    assert_eq!(c.moduli, g.len());
                    let src = gadget.group_basis_at(j, level).unwrap();
                    let conv =
                        BasisConverter::new(&src, special, ConversionMode::ExactInteger).unwrap();
                    assert_eq!(conv.eta(), Some(c.eta));
                    assert_eq!(conv.theorem1_bound(), Some(c.failure_bound()));
                    assert!(c.eta as f64 > theorem1_eta_lower_bound(c.moduli, r));
                }
                let down = BasisConverter::new(
                    special,
                    ctx.rlwe().basis_at(level).unwrap(),
                    ConversionMode::ExactInteger,
                )
                .unwrap();
                assert_eq!(down.eta(), Some(rec.mod_down.eta));
                assert_eq!(rec.mod_down.moduli, special_primes);
                assert_eq!(
                    rec.mod_down_rescale.is_some(),
                    level >= 2 && special_bits == 40,
                    "level {level}, special primes of {special_bits} bits"
                );
                // Level summary: worst conversion, and r = l 2^-eta / (1 - 2^-eta) below the target.
                let worst = rec.conversions().map(|c| c.eta).min().unwrap();
                assert_eq!(rec.eta(), worst);
                assert!(rec.failure_bound() > 0.0 && rec.failure_bound() < r);
                assert!(rec.admitted(r));
                for c in rec.conversions() {
                    let e = (-(c.eta as f64)).exp2();
                    let expect = c.moduli as f64 * e / (1.0 - e);
                    assert!((c.failure_bound() - expect).abs() <= 1e-12 * expect);
                }
            }
            let summary = ctx.qu_xu_summary();
            assert!(
                summary.starts_with("eta ") && summary.contains("(ExactInteger)"),
                "{summary}"
            );
            assert!(ctx.qu_xu_level(0).is_err());
            assert!(ctx.qu_xu_level(ctx.max_level() + 1).is_err());
        }
        // Other modes: the same figures from the moduli, unused. A 50-bit q_0 in a group with 40-bit primes
        // is not close to one power of two (eta 0, unbounded r): ExactInteger would refuse it.
        let mut p = small(RescalingPolicy::ExactScale, ConversionMode::Fast);
        p.levels = 3;
        p.dnum = 2;
        p.special_primes = 2;
        let ctx = CkksContext::new(p).unwrap();
        let top = ctx.qu_xu_level(ctx.max_level()).unwrap();
        assert_eq!(top.mod_up[0].eta, 0);
        assert_eq!(top.failure_bound(), f64::INFINITY);
        assert!(!top.admitted(r));
        assert!(
            ctx.qu_xu_level(1).unwrap().admitted(r),
            "q_0 alone is close to 2^50"
        );
        let summary = ctx.qu_xu_summary();
        assert!(
            summary.contains("unused by Fast; not admitted"),
            "{summary}"
        );
        let ctx = CkksContext::new(small(
            RescalingPolicy::ExactScale,
            ConversionMode::ExactFloat,
        ))
        .unwrap();
        assert!(ctx.qu_xu_levels().iter().all(|l| l.admitted(r)));
        assert!(ctx.qu_xu_summary().contains("(unused by ExactFloat)"));
    }

    #[test]
    fn exact_integer_refusal_names_eta_l_and_bound() {
        // q_0 of 50 bits in a digit group with 40-bit primes: refused before any key-switching table.
        let mut p = small(RescalingPolicy::ExactScale, ConversionMode::ExactInteger);
        p.dnum = 2;
        match CkksContext::new(p) {
            Err(Error::InvalidParams { what, reason }) => {
                assert_eq!(what, "q0_bits");
                for needle in [
                    "eta = 0",
                    "l = 3",
                    "log2((r + l) / r) = 11.585",
                    "dnum = levels + 1",
                ] {
                    assert!(reason.contains(needle), "missing {needle:?}: {reason}");
                }
            }
            other => panic!("expected InvalidParams, got {other:?}"),
        }
    }

    #[test]
    fn insecure_parameters_need_the_explicit_opt_in() {
        let mut p = Preset::PaperTable3.params();
        assert!(
            p.insecure_for_testing,
            "the paper presets opt in (sparse secret, 80 bits)"
        );
        p.insecure_for_testing = false;
        match CkksContext::new(p.clone()) {
            Err(e @ Error::Insecure { .. }) => {
                let msg = e.to_string();
                assert!(msg.contains("insecure_for_testing = true"), "{msg}");
                assert!(msg.contains("HammingWeight(64)"), "{msg}");
            }
            other => panic!("expected Insecure, got {other:?}"),
        }
        p.insecure_for_testing = true;
        let ctx = CkksContext::new(p).unwrap();
        assert!(ctx.security_warning().is_some());
        // Secure parameters need no opt-in and carry no warning.
        let ctx = CkksContext::new(Preset::Rec128N13.params()).unwrap();
        assert!(!ctx.params().insecure_for_testing && ctx.security_warning().is_none());
    }

    #[test]
    fn sigma_and_the_secret_enter_the_check_and_the_fingerprint() {
        let base = Preset::Rec128N13.params();
        let ctx = CkksContext::new(base.clone()).unwrap();
        assert!(!ctx.is_insecure());
        // An error narrower than the HE Standard's: insecure whatever N and Q, refused without the
        // opt-in (at sigma = 1e-9 the public key gives the secret key away).
        let narrow = CkksParams {
            sigma: 1e-9,
            ..base.clone()
        };
        match CkksContext::new(narrow.clone()) {
            Err(e @ Error::Insecure { .. }) => {
                assert!(e.to_string().contains("sigma = 0.000000001"), "{e}");
                assert!(e.to_string().contains("error narrower"), "{e}");
            }
            other => panic!("expected Insecure, got {other:?}"),
        }
        assert_eq!(narrow.security().unwrap(), SecurityEstimate::ErrorTooNarrow);
        let opted = CkksContext::new(CkksParams {
            insecure_for_testing: true,
            ..narrow
        })
        .unwrap();
        assert!(opted.is_insecure());
        assert!(opted
            .security_warning()
            .unwrap()
            .contains("sigma = 0.000000001"));
        assert!(opted.security_summary().contains("sigma 0.000000001"));
        // The HE Standard's own 3.19 and wider errors keep the table's verdict.
        for sigma in [3.19, 6.4, 100.0] {
            let c = CkksContext::new(CkksParams {
                sigma,
                ..base.clone()
            })
            .unwrap();
            assert!(!c.is_insecure(), "sigma {sigma}");
            assert!(c.security_summary().contains(&format!("sigma {sigma}")));
        }
        // Absurd widths are refused outright, with or without the opt-in.
        for sigma in [1e9, 8192.5, f64::INFINITY, f64::NAN, 0.0, -3.2] {
            let err = CkksContext::new(CkksParams {
                sigma,
                insecure_for_testing: true,
                ..base.clone()
            })
            .unwrap_err();
            assert!(err.to_string().contains("sigma"), "sigma {sigma}: {err}");
        }
        // The fingerprint covers the error width and the secret distribution (and its weight).
        let fingerprint = |p: CkksParams| {
            CkksContext::new(CkksParams {
                insecure_for_testing: true,
                ..p
            })
            .unwrap()
            .fingerprint()
        };
        let all = [
            fingerprint(base.clone()),
            fingerprint(CkksParams {
                sigma: 6.4,
                ..base.clone()
            }),
            fingerprint(CkksParams {
                sigma: 3.2000000001,
                ..base.clone()
            }),
            fingerprint(CkksParams {
                secret: SecretDistribution::HammingWeight(64),
                ..base.clone()
            }),
            fingerprint(CkksParams {
                secret: SecretDistribution::HammingWeight(128),
                ..base.clone()
            }),
        ];
        for i in 0..all.len() {
            for j in 0..i {
                assert_ne!(all[i], all[j], "{i} vs {j}");
            }
        }
        // Objects of format version 1 carry the old fingerprint (N, moduli, dnum only).
        let rlwe = base.rlwe_params().unwrap();
        assert_eq!(ctx.rlwe().fingerprints().legacy, rlwe.legacy_fingerprint());
        assert_ne!(rlwe.legacy_fingerprint(), rlwe.fingerprint());
    }

    #[test]
    fn presets_state_their_log_qp() {
        for preset in Preset::ALL {
            let p = preset.params();
            if let Some(level) = preset.claimed_security() {
                let max = rnsfhe_core::security::max_log_qp(p.n(), level).unwrap();
                assert!(p.nominal_log_qp() <= max as u64, "{preset:?}");
            }
            if let Some(log_q) = preset.paper_log_q() {
                assert_eq!(
                    p.q0_bits as u64 + p.levels as u64 * p.log_scale as u64,
                    log_q as u64
                );
            }
        }
    }

    #[test]
    fn generator_picks_smallest_ring() {
        let p = CkksParams::generate(3, 40, crate::SecurityLevel::Bits128).unwrap();
        assert!(p.nominal_log_qp() <= 218 || p.log_n > 13);
        assert!(CkksParams::generate(200, 60, crate::SecurityLevel::Bits256).is_err());
    }
}
