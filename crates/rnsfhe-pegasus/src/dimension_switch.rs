//! From a CKKS ciphertext to LWE ciphertexts of the small dimension `n` (PEGASUS Fig. 6 steps 1-4), by
//! one of two methods ([`DimensionSwitch`]).
//!
//! # Per ciphertext (PEGASUS Fig. 9)
//!
//! Each wanted coefficient is extracted as an LWE ciphertext of dimension `N` over `q_0`
//! ([`crate::extraction`]), switched to the key-switching modulus `q_ks` of the parameters when it is not
//! `q_0` ([`rnsfhe_lwe::PegasusPreset::Secure128`]: a 26-bit prime), and key-switched to dimension `n` by
//! [`LweSwitchingKey`] (`N / n` gadget products of degree `n` per ciphertext). The positions run in
//! parallel, each extracted and switched on its own, so no more than one dimension-`N` ciphertext per
//! thread exists at a time.
//!
//! # Whole ciphertext (one RLWE key switch, then extraction in dimension `n`)
//!
//! As OpenFHE's CKKS-to-FHEW switch does: the RLWE ciphertext itself is switched, once, to a ring key
//! that holds the LWE secret, and every wanted coefficient is then extracted directly in dimension `n`.
//! OpenFHE places the LWE secret in the first `n` coefficients of that ring key; here it sits on a
//! subring, which makes the key exactly as hard as PEGASUS's `SwK` (below).
//!
//! 1. Drop to `q_0`, coefficient form, and switch the modulus of both parts to the ring modulus `q_r`
//!    of the key (`round(c q_r / q_0)`, coefficient by coefficient).
//! 2. One gadget product of degree `N` through the core's [`product_sum`] (signed base-`B_ks` digits,
//!    `d_ks` of them): `(u_0, u_1) = c_1 ⋄ K` with `u_0 + u_1 s' = c_1 s + sum_k d_k e_k`, so
//!    `(c_0 + u_0, u_1)` decrypts under `s'` to the same plaintext.
//! 3. If `q_r` is not the output modulus `q_ks`, switch both parts to `q_ks`.
//! 4. Extract every wanted coefficient in dimension `n` (below).
//!
//! **The ring key.** With `t = N / n` and `Y = X^t`, the ring secret is the LWE secret placed on the
//! subring `R_n = Z[Y] / (Y^n + 1)` of `R_N = Z[X] / (X^N + 1)`:
//! `s' = s_lwe(Y) = sum_j s_lwe[j] X^(j t)` (coefficient `j t` of `s'` is `s_lwe[j]`, the others zero).
//! `K` is the gadget ciphertext of the CKKS secret `s` under `s'`: rows `(b_k, a_k)` with
//! `b_k = -a_k s' + e_k + B^k s` over `q_r`, `k < d_ks`.
//!
//! **Extraction in dimension `n`.** `R_N` is a free `R_n`-module with basis `1, X, ..., X^(t-1)`
//! (`X^N + 1 = Y^n + 1`): every `a` writes uniquely `a = sum_{r < t} X^r a_r(Y)`, `a_r[m] = a[r + m t]`,
//! and multiplication by `s' in R_n` acts component by component, `a s' = sum_r X^r (a_r s_lwe)(Y)`. So
//! the switched ciphertext `(b, a) = (c_0 + u_0, u_1)` is, component by component, `t` RLWE ciphertexts
//! `(b_r, a_r)` of degree `n` under `s_lwe`, component `r` decrypting to the plaintext coefficients
//! `r + m t`; coefficient `i` is extracted from component `i mod t` at index `i div t` by
//! [`rnsfhe_lwe::extract()`] (PEGASUS Section II.C), an LWE ciphertext of dimension `n` under `s_lwe`. Its
//! mask is `a_j = a[i - j t]` for `j t <= i` and `-a[N + i - j t]` otherwise. Only the components that
//! hold a wanted position are formed (`2n` words each, with steps 1 for `c_0` and 3 applied to those
//! coefficients alone): PEGASUS's `l` real values sit at multiples of `N / 2l` after S2C, so `l = 256`
//! positions need one component of the `t = 64` and `l = 4096` eight. Each extraction then copies `n`
//! contiguous words.
//!
//! **Security: the key is exactly as hard as PEGASUS's `SwK`.** In the same decomposition, the
//! components of a uniform `a` are independent and uniform in `R_{n,q}`, those of a Gaussian `e` are
//! independent Gaussians of the same width (its coefficients permuted), and multiplication by `s'` acts
//! component by component. Row `k` of `K` is therefore `t` RLWE samples of degree `n` under `s_lwe`,
//! `b_{k,r} = -a_{k,r} s_lwe + e_{k,r} + B^k s_r` over `q_r` with error width `sigma_ks`, and the whole
//! key is `t d_ks` such samples: the number, the distribution and the secret of `SwK` (PEGASUS Fig. 6
//! and Fig. 9: `N / n` blocks of `d_ks` samples `RLWE^{n,q}_{s_lwe}(s_j; g_digit)`); only the messages
//! differ. A distinguisher between `K` and
//! uniform (hence any attack on the messages, the CKKS secret) is, by a hybrid over the `t d_ks` samples,
//! a distinguisher for decision RLWE of degree `n`, modulus `q_r`, width `sigma_ks` and the
//! distribution of `s_lwe`: the problem `SwK` rests on, which the estimator measures as `SwK`'s
//! ([`rnsfhe_lwe::PegasusParams::security`]: LWE of dimension `n`, [`LweParams::rlwe`]). The layout
//! matters: with `s_lwe` in the first `n` coefficients instead, the key would be `N d_ks` LWE samples
//! whose masks are windows of the `a_k`, not RLWE samples of degree `n`, and the reduction would not
//! be exact. The key generators refuse estimates below [`MIN_SECURITY_BITS`] without the explicit opt-in,
//! as [`LweSwitchingKey::generate`] does.
//!
//! **The ring modulus.** The product runs in NTT form in degree `N`, so `q_r` must be `= 1 mod 2N`. It is
//! the parameters' `q_ks` when it is (PEGASUS Table IV: `q_ks = q_0`); otherwise the largest prime of
//! the same bit size `= 1 mod 2N` (for [`rnsfhe_lwe::PegasusPreset::Secure128`], `q_ks = 67104769` is
//! `1 mod 2^11` only, and `q_r = 65929217`), and step 3 brings the result to `q_ks`, so both methods
//! produce ciphertexts of dimension `n` over `q_ks` under `s_lwe`, interchangeable downstream. The
//! security estimate is made at `q_r`. As for [`LweSwitchingKey`], `q_ks` must be an NTT prime for the
//! degree `n` (the components are ring elements of degree `n`).
//!
//! **Noise.** The key switch adds `sum_k d_k e_k`, of variance `N sigma_ks^2 sum_k E[d_k^2]`
//! ([`LweKeySwitchParams::digit_second_moments`]): PEGASUS Appendix C.1 with `n-bar = N`, the same as a
//! Fig. 9 switch from dimension `N`. Each modulus switch adds a rounding of variance `(1 + ||s||^2) / 12`
//! for the key `s` of the ciphertext it rounds ([`RingSwitchingKey::switch_variance`]). The balanced
//! digits lie in `[-B/2, B/2)`, mean `-1/2`, so with one key the error of a Fig. 9 switch has a fixed
//! mean, `-1/2` times a signed sum of the key's errors (standard deviation `sigma_ks sqrt(N d_ks) / 2`
//! over keys, about `1.7 / B_ks` of the switch's standard deviation); in the whole-ciphertext switch
//! that mean changes with the position, and over positions it is part of the variance (the formula
//! counts the digits' second moments, mean included).
//!
//! **Cost.** The whole-ciphertext method costs one gadget product of degree `N` (`d_ks` forward NTTs and
//! two inverse ones) for all positions, about the cost of one Fig. 9 switch (`N / n` blocks of `d_ks`
//! transforms of degree `n`), plus `n` words per extracted position; the per-ciphertext method costs a
//! Fig. 9 switch per position.

use std::sync::Arc;

use rayon::prelude::*;
use rnsfhe_ckks::{Ciphertext, CkksContext, SecretKey};
use rnsfhe_core::context::fingerprint_words;
use rnsfhe_core::gadget::product_sum;
use rnsfhe_core::keys::SecretPoly;
use rnsfhe_core::lwe_estimator::{estimate_lwe, LweEstimate, LweParams};
use rnsfhe_core::{Gadget, GadgetCiphertext, RlweCiphertext};
use rnsfhe_lwe::{
    extract, LweCiphertext, LweDimension, LweError, LweKeySwitchParams, LweSecretKey,
    LweSwitchingKey, ModulusSwitch, MIN_SECURITY_BITS,
};
use rnsfhe_math::primes::ntt_primes_of_bits;
use rnsfhe_math::sampling::{Csprng, DiscreteGaussian};
use rnsfhe_math::Modulus;
use rnsfhe_ring::parallel::{self, active_wait};
use rnsfhe_ring::{Coeff, Poly, RnsBasis, RnsSignedDigits};
use zeroize::Zeroize;

use crate::error::{PegasusError, PegasusResult};
use crate::extraction::{at_q0, check_positions, positions_per_task};

/// How LWE ciphertexts of the small dimension `n` are obtained from a CKKS ciphertext (see the
/// [module documentation](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DimensionSwitch {
    /// Extract each coefficient in dimension `N`, then PEGASUS Fig. 9 on each ([`LweSwitchingKey`]).
    PerCiphertext,
    /// One RLWE key switch of the whole ciphertext to a ring key holding the LWE secret, then extraction
    /// in dimension `n` ([`RingSwitchingKey`]).
    WholeCiphertext,
}

impl DimensionSwitch {
    /// Both methods.
    pub const ALL: [DimensionSwitch; 2] = [Self::PerCiphertext, Self::WholeCiphertext];
}

impl std::fmt::Display for DimensionSwitch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::PerCiphertext => "per ciphertext (Fig. 9)",
            Self::WholeCiphertext => "whole ciphertext (one RLWE key switch)",
        })
    }
}

/// The key of the whole-ciphertext method: the gadget ciphertext, in degree `N` over the ring modulus
/// `q_r`, of the CKKS secret under the LWE secret placed on the subring `Z[X^(N/n)]` (see the
/// [module documentation](self), which also proves its security equal to that of `SwK`).
#[derive(Clone, Debug)]
pub struct RingSwitchingKey {
    /// The CKKS context's fingerprint.
    fingerprint: u64,
    /// The CKKS context's `q_0`.
    q0: u64,
    to: LweDimension,
    params: LweKeySwitchParams,
    /// The one-limb basis of degree `n` over `q_ks` of the components (see the module documentation).
    components: Arc<RnsBasis>,
    digits: RnsSignedDigits,
    key: GadgetCiphertext,
    security: LweEstimate,
}

impl RingSwitchingKey {
    /// Generates the key from the CKKS secret `sk` of `ctx` to `lwe_sk` (dimension `n`, a power of two
    /// at most `N`) with the key-switching parameters `params` (modulus `q_ks`, `B_ks = 2^base_log`,
    /// `d_ks = digits`, `sigma_ks`; a preset's [`rnsfhe_lwe::PegasusParams::key_switch`]). The ring
    /// modulus is `q_ks` if it is `1 mod 2N`, otherwise the largest prime of its bit size that is; the
    /// switched ciphertexts come out over `q_ks` either way.
    ///
    /// Errors: [`LweError::Insecure`] (as [`PegasusError::Lwe`]) if the estimator puts the key (LWE of
    /// dimension `n` at `q_r` and `sigma_ks` under `lwe_sk`'s distribution) below 128 bits, checked before
    /// any key material is built; as [`RingSwitchingKey::generate_allowing_insecure`] otherwise.
    pub fn generate(
        ctx: &CkksContext,
        sk: &SecretKey,
        lwe_sk: &LweSecretKey,
        params: LweKeySwitchParams,
        rng: &mut Csprng,
    ) -> PegasusResult<Self> {
        Self::generate_with(ctx, sk, lwe_sk, params, true, rng)
    }

    /// [`RingSwitchingKey::generate`] without the security check: the caller's explicit opt-in (tests,
    /// PEGASUS Table IV's parameters, which the estimator puts at 97.7 bits).
    ///
    /// Errors: [`rnsfhe_ckks::Error::ContextMismatch`] (as [`PegasusError::Ckks`]) for a secret key of
    /// another context; [`PegasusError::InvalidParams`] for an LWE dimension that is not a power of two
    /// at most `N`, or an estimator that rejects the parameters; errors of the lower layers for a digit
    /// decomposition that is not exact (`d_ks base_log` below the bits of `q_r`), a `q_ks` that is not
    /// an NTT prime for `n` (as [`LweSwitchingKey`] needs too), an `n` below the smallest ring degree,
    /// or an invalid `sigma_ks`.
    pub fn generate_allowing_insecure(
        ctx: &CkksContext,
        sk: &SecretKey,
        lwe_sk: &LweSecretKey,
        params: LweKeySwitchParams,
        rng: &mut Csprng,
    ) -> PegasusResult<Self> {
        Self::generate_with(ctx, sk, lwe_sk, params, false, rng)
    }

    fn generate_with(
        ctx: &CkksContext,
        sk: &SecretKey,
        lwe_sk: &LweSecretKey,
        params: LweKeySwitchParams,
        check_security: bool,
        rng: &mut Csprng,
    ) -> PegasusResult<Self> {
        check_secret_key(ctx, sk)?;
        let big_n = ctx.n();
        let to = lwe_sk.dimension();
        let n = to.get();
        if !n.is_power_of_two() || n > big_n {
            return Err(PegasusError::InvalidParams {
                what: "LWE dimension of the whole-ciphertext switch",
                reason: format!(
                    "n = {n} must be a power of two at most N = {big_n}: the LWE secret sits on the \
                     subring Z[X^(N/n)]"
                ),
            });
        }
        let output = Modulus::new(params.modulus)?;
        let q_r = ring_modulus(output, big_n)?;
        let components = RnsBasis::new(n, &[output.value()])?;
        let security = Self::estimate(n, q_r, &params, lwe_sk.lattice_secret())?;
        let bits = security.security_bits();
        if check_security && bits < MIN_SECURITY_BITS {
            return Err(LweError::Insecure {
                what: "whole-ciphertext switching key",
                bits,
            }
            .into());
        }
        let basis = RnsBasis::new(big_n, &[q_r])?;
        let digits = RnsSignedDigits::new(&basis, params.base_log, params.digits)?;
        let noise = DiscreteGaussian::with_sigma(params.sigma)?;
        let constants = (0..params.digits)
            .map(|k| digits.gadget_residues(0, k, 1))
            .collect::<Result<Vec<_>, _>>()?;
        let stride = big_n / n;
        let mut embedded = vec![0i64; big_n];
        for (j, &c) in lwe_sk.coefficients().iter().enumerate() {
            embedded[j * stride] = c;
        }
        let target = Poly::<Coeff>::from_i64(&basis, &embedded);
        embedded.zeroize();
        let target = SecretPoly::new(target?.into_ntt());
        let message =
            SecretPoly::new(Poly::<Coeff>::from_i64(&basis, sk.coefficients())?.into_ntt());
        let key_fingerprint = Self::key_fingerprint(ctx, n, q_r, &params);
        let key = GadgetCiphertext::encrypt(
            key_fingerprint,
            Gadget::of_digits(&digits),
            &noise,
            target.get(),
            message.get(),
            &constants,
            rng,
        )?;
        Ok(Self {
            fingerprint: ctx.fingerprint(),
            q0: ctx.q_moduli()[0],
            to,
            params,
            components,
            digits,
            key,
            security,
        })
    }

    /// The lattice estimate of a key to dimension `n` at the ring modulus `q_r` (an RLWE sample in degree
    /// `n` under the LWE secret `secret`), for generation and loading alike.
    fn estimate(
        n: usize,
        q_r: u64,
        params: &LweKeySwitchParams,
        secret: rnsfhe_core::lwe_estimator::LweSecret,
    ) -> PegasusResult<LweEstimate> {
        estimate_lwe(&LweParams::rlwe(
            n,
            (q_r as f64).log2(),
            params.sigma,
            secret,
        ))
        .map_err(|e| PegasusError::InvalidParams {
            what: "whole-ciphertext switching key",
            reason: format!("the lattice estimator rejects its parameters: {e}"),
        })
    }

    /// The fingerprint the gadget ciphertext of a key of `ctx` to dimension `n` at the ring modulus
    /// `q_r` carries (the secret under which it decrypts: the LWE secret on the subring).
    fn key_fingerprint(ctx: &CkksContext, n: usize, q_r: u64, params: &LweKeySwitchParams) -> u64 {
        fingerprint_words([
            0x0052_494e_475f_4b53, // "RING_KS"
            ctx.fingerprint(),
            n as u64,
            q_r,
            params.base_log as u64,
            params.digits as u64,
            params.sigma.to_bits(),
        ])
    }

    /// What a key of `ctx` to dimension `to` with `params` is made of besides its rows, for loading
    /// one from the wire: the fingerprint its gadget ciphertext carries and the digit decomposition
    /// over the ring modulus (its basis, gadget and row count).
    ///
    /// Errors: as [`RingSwitchingKey::generate_allowing_insecure`] for invalid parameters.
    pub(crate) fn wire_frame(
        ctx: &CkksContext,
        to: LweDimension,
        params: &LweKeySwitchParams,
    ) -> PegasusResult<(u64, RnsSignedDigits)> {
        let big_n = ctx.n();
        let n = to.get();
        if !n.is_power_of_two() || n > big_n {
            return Err(PegasusError::InvalidParams {
                what: "LWE dimension of the whole-ciphertext switch",
                reason: format!("n = {n} must be a power of two at most N = {big_n}"),
            });
        }
        let q_r = ring_modulus(Modulus::new(params.modulus)?, big_n)?;
        let basis = RnsBasis::new(big_n, &[q_r])?;
        let digits = RnsSignedDigits::new(&basis, params.base_log, params.digits)?;
        Ok((Self::key_fingerprint(ctx, n, q_r, params), digits))
    }

    /// A key loaded from the wire: its gadget ciphertext `key` read over the decomposition `digits` of
    /// [`RingSwitchingKey::wire_frame`], for an LWE secret of distribution `secret` (its estimate).
    ///
    /// Errors: as [`RingSwitchingKey::generate_allowing_insecure`].
    pub(crate) fn from_wire(
        ctx: &CkksContext,
        to: LweDimension,
        params: LweKeySwitchParams,
        secret: rnsfhe_lwe::LweSecretDistribution,
        digits: RnsSignedDigits,
        key: GadgetCiphertext,
    ) -> PegasusResult<Self> {
        let n = to.get();
        let components = RnsBasis::new(n, &[params.modulus])?;
        let q_r = digits.basis().moduli()[0].value();
        let security = Self::estimate(n, q_r, &params, secret.lattice_secret(n))?;
        Ok(Self {
            fingerprint: ctx.fingerprint(),
            q0: ctx.q_moduli()[0],
            to,
            params,
            components,
            digits,
            key,
            security,
        })
    }

    /// The target dimension `n`.
    pub fn to_dimension(&self) -> LweDimension {
        self.to
    }

    /// The ring degree `N` (that of the CKKS context).
    pub fn ring_degree(&self) -> usize {
        self.digits.basis().degree()
    }

    /// The parameters the key was made with (`params.modulus` is the output modulus `q_ks`).
    pub fn params(&self) -> &LweKeySwitchParams {
        &self.params
    }

    /// The ring modulus `q_r` of the key and the key switch.
    pub fn ring_modulus(&self) -> u64 {
        self.digits.basis().moduli()[0].value()
    }

    /// The modulus `q_ks` of the switched ciphertexts.
    pub fn output_modulus(&self) -> u64 {
        self.components.moduli()[0].value()
    }

    /// Fingerprint of the CKKS context the key belongs to.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// The gadget ciphertext (`d_ks` rows of degree `N` over `q_r`).
    pub fn gadget_ciphertext(&self) -> &GadgetCiphertext {
        &self.key
    }

    /// The estimator's figure for the key: LWE of dimension `n` at `q_r` with `sigma_ks` under the LWE
    /// secret's distribution, the problem of `SwK` (see the [module documentation](self)).
    pub fn security(&self) -> &LweEstimate {
        &self.security
    }

    /// Variance the key switch adds to a coefficient, at the output modulus:
    /// `(q_ks / q_r)^2 N sigma_ks^2 sum_k E[d_k^2]` (PEGASUS Appendix C.1 with `n-bar = N`; the digits'
    /// moments at `q_r`, [`LweKeySwitchParams::digit_second_moments`]). The same as
    /// [`LweSwitchingKey::added_variance`] of a Fig. 9 key from dimension `N` at `q_r`.
    pub fn added_variance(&self) -> f64 {
        let at_ring = LweKeySwitchParams {
            modulus: self.ring_modulus(),
            ..self.params
        };
        let scale = self.output_modulus() as f64 / self.ring_modulus() as f64;
        scale
            * scale
            * self.ring_degree() as f64
            * self.params.sigma.powi(2)
            * at_ring.digit_second_moments()
    }

    /// Variance of the error the whole switch adds: the output phase is `(q_ks / q_0) phi + e` for the
    /// input phase `phi` (the CKKS plaintext coefficient and its error at `q_0`), and `e` has variance
    /// `(q_ks / q_r)^2 (rho(q_0 -> q_r) + ks) + rho(q_r -> q_ks)`: `ks` the key switch
    /// ([`RingSwitchingKey::added_variance`] before scaling), `rho` the rounding of a modulus switch,
    /// `(1 + ||s||^2) / 12` for the key `s` of the ciphertext rounded (the CKKS secret, of squared norm
    /// `ckks_norm_sq`, then the ring key, of squared norm `lwe_norm_sq`), zero when the moduli are equal.
    pub fn switch_variance(&self, ckks_norm_sq: f64, lwe_norm_sq: f64) -> f64 {
        let (q0, q_r, q_ks) = (self.q0, self.ring_modulus(), self.output_modulus());
        let scale = q_ks as f64 / q_r as f64;
        let first = rounding_variance(q0 != q_r, ckks_norm_sq) * scale * scale;
        first + self.added_variance() + rounding_variance(q_r != q_ks, lwe_norm_sq)
    }

    /// The LWE ciphertexts of dimension `n` over `q_ks`, under the LWE secret, of the plaintext
    /// coefficients at `positions` (in that order) of the 2-part CKKS ciphertext `ct` (any level): see
    /// the [module documentation](self).
    ///
    /// Errors: [`PegasusError::KeyMismatch`] for a ciphertext of another context than the key's;
    /// [`PegasusError::InvalidParams`] for a 3-part ciphertext; [`PegasusError::PositionOutOfRange`].
    pub fn switch(
        &self,
        ct: &Ciphertext,
        positions: &[usize],
    ) -> PegasusResult<Vec<LweCiphertext>> {
        active_wait(|| self.switch_waiting(ct, positions))
    }

    /// The work of [`Self::switch`], which runs it inside [`active_wait`] (a long
    /// sequence of short parallel sections).
    fn switch_waiting(
        &self,
        ct: &Ciphertext,
        positions: &[usize],
    ) -> PegasusResult<Vec<LweCiphertext>> {
        const OP: &str = "whole-ciphertext dimension switch";
        check_key(self.fingerprint, ct, "whole-ciphertext switching key", OP)?;
        let big_n = self.ring_degree();
        check_positions(positions, big_n, OP)?;
        let rlwe = at_q0(ct, OP)?;
        if positions.is_empty() {
            return Ok(Vec::new());
        }
        let q0 = rlwe.parts[0].basis().moduli()[0].value();
        let basis = self.digits.basis();
        let q_r = basis.moduli()[0];
        let q_out = self.output_modulus();
        let mut parts = rlwe.parts;
        let (Some(c1), Some(c0)) = (parts.pop(), parts.pop()) else {
            return Err(PegasusError::InvalidParams {
                what: "extracted CKKS ciphertext",
                reason: format!("{OP}: it has fewer than 2 parts"),
            });
        };
        // Step 1 for c_1: the whole part enters the key switch. At q_0 = q_r (PEGASUS Table IV) it is
        // used as it is, not copied.
        let c1 = if q0 == q_r.value() {
            let mut c1 = c1;
            c1.rebase(basis)?;
            c1
        } else {
            Poly::<Coeff>::from_data(basis, switch_residues(c1.data(), q0, q_r.value())?)?
        };
        let (u0, u1) = product_sum(&[(&c1, &self.key)], &self.digits)?;
        // Steps 1 (for c_0), 3 and 4 only at the coefficients of the components that hold a wanted
        // position: `(c_0 + u_0, u_1)` is read there alone (one component of `n` coefficients for
        // PEGASUS's `l = 256` positions, all multiples of `N / 2l`), not added, switched and regrouped
        // over all `N` coefficients first.
        let sources = Sources {
            c0: c0.data(),
            u0: u0.data(),
            u1: u1.data(),
            q_r,
            first: switch_between(q0, q_r.value())?,
            last: switch_between(q_r.value(), q_out)?,
        };
        let stride = big_n / self.to.get();
        let mut wanted: Vec<usize> = positions.iter().map(|&i| i % stride).collect();
        wanted.sort_unstable();
        wanted.dedup();
        let build = |&r: &usize| sources.component(r, &self.components);
        let built: Vec<PegasusResult<RlweCiphertext<Coeff>>> =
            if wanted.len() * self.to.get() < 2 * COMPONENT_TASK_WORDS {
                wanted.iter().map(build).collect()
            } else {
                parallel::map(&wanted, &build)
            };
        let mut slot = vec![usize::MAX; stride];
        for (k, &r) in wanted.iter().enumerate() {
            slot[r] = k;
        }
        let components = built.into_iter().collect::<PegasusResult<Vec<_>>>()?;
        let parts = positions
            .par_chunks(positions_per_task(self.to.get()))
            .map(|chunk| {
                chunk
                    .iter()
                    .map(|&i| Ok(extract(&components[slot[i % stride]], i / stride)?))
                    .collect::<PegasusResult<Vec<_>>>()
            })
            .collect::<PegasusResult<Vec<_>>>()?;
        Ok(parts.into_iter().flatten().collect())
    }
}

/// The keys of both methods for one CKKS context and one LWE secret, either of them possibly absent: the
/// method is a parameter of [`DimensionSwitchKeys::switch`], so the two can be run side by side on the
/// same ciphertexts.
#[derive(Clone, Debug)]
pub struct DimensionSwitchKeys {
    fingerprint: u64,
    q0: u64,
    ring_degree: usize,
    per_ciphertext: Option<LweSwitchingKey>,
    whole_ciphertext: Option<RingSwitchingKey>,
}

impl DimensionSwitchKeys {
    /// Generates the keys of `methods` from the CKKS secret `sk` of `ctx` to `lwe_sk` with the
    /// key-switching parameters `params` (a preset's [`rnsfhe_lwe::PegasusParams::key_switch`]): for
    /// [`DimensionSwitch::PerCiphertext`] the [`LweSwitchingKey`] from the coefficient vector of `sk`
    /// (dimension `N`), for [`DimensionSwitch::WholeCiphertext`] the [`RingSwitchingKey`].
    ///
    /// Errors: [`LweError::Insecure`] (as [`PegasusError::Lwe`]) for parameters the estimator puts below
    /// 128 bits; as [`DimensionSwitchKeys::generate_allowing_insecure`] otherwise.
    pub fn generate(
        ctx: &CkksContext,
        sk: &SecretKey,
        lwe_sk: &LweSecretKey,
        params: LweKeySwitchParams,
        methods: &[DimensionSwitch],
        rng: &mut Csprng,
    ) -> PegasusResult<Self> {
        Self::generate_with(ctx, sk, lwe_sk, params, methods, true, rng)
    }

    /// [`DimensionSwitchKeys::generate`] without the security check (the explicit opt-in of tests and of
    /// PEGASUS Table IV's parameters).
    ///
    /// Errors: [`rnsfhe_ckks::Error::ContextMismatch`] (as [`PegasusError::Ckks`]) for a secret key of
    /// another context; the errors of [`LweSwitchingKey::generate_allowing_insecure`] and
    /// [`RingSwitchingKey::generate_allowing_insecure`].
    pub fn generate_allowing_insecure(
        ctx: &CkksContext,
        sk: &SecretKey,
        lwe_sk: &LweSecretKey,
        params: LweKeySwitchParams,
        methods: &[DimensionSwitch],
        rng: &mut Csprng,
    ) -> PegasusResult<Self> {
        Self::generate_with(ctx, sk, lwe_sk, params, methods, false, rng)
    }

    fn generate_with(
        ctx: &CkksContext,
        sk: &SecretKey,
        lwe_sk: &LweSecretKey,
        params: LweKeySwitchParams,
        methods: &[DimensionSwitch],
        check_security: bool,
        rng: &mut Csprng,
    ) -> PegasusResult<Self> {
        check_secret_key(ctx, sk)?;
        let per_ciphertext = if methods.contains(&DimensionSwitch::PerCiphertext) {
            let from = LweSecretKey::from_ring_key(sk)?;
            Some(if check_security {
                LweSwitchingKey::generate(&from, lwe_sk, params, rng)?
            } else {
                LweSwitchingKey::generate_allowing_insecure(&from, lwe_sk, params, rng)?
            })
        } else {
            None
        };
        let whole_ciphertext = if methods.contains(&DimensionSwitch::WholeCiphertext) {
            Some(RingSwitchingKey::generate_with(
                ctx,
                sk,
                lwe_sk,
                params,
                check_security,
                rng,
            )?)
        } else {
            None
        };
        Ok(Self {
            fingerprint: ctx.fingerprint(),
            q0: ctx.q_moduli()[0],
            ring_degree: ctx.n(),
            per_ciphertext,
            whole_ciphertext,
        })
    }

    /// The keys of `ctx` loaded from the wire (either possibly absent).
    pub(crate) fn from_wire(
        ctx: &CkksContext,
        per_ciphertext: Option<LweSwitchingKey>,
        whole_ciphertext: Option<RingSwitchingKey>,
    ) -> Self {
        Self {
            fingerprint: ctx.fingerprint(),
            q0: ctx.q_moduli()[0],
            ring_degree: ctx.n(),
            per_ciphertext,
            whole_ciphertext,
        }
    }

    /// Fingerprint of the CKKS context the keys belong to.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// Whether the key of `method` is present.
    pub fn has(&self, method: DimensionSwitch) -> bool {
        match method {
            DimensionSwitch::PerCiphertext => self.per_ciphertext.is_some(),
            DimensionSwitch::WholeCiphertext => self.whole_ciphertext.is_some(),
        }
    }

    /// The key of the per-ciphertext method, if generated.
    pub fn per_ciphertext(&self) -> Option<&LweSwitchingKey> {
        self.per_ciphertext.as_ref()
    }

    /// The key of the whole-ciphertext method, if generated.
    pub fn whole_ciphertext(&self) -> Option<&RingSwitchingKey> {
        self.whole_ciphertext.as_ref()
    }

    /// The modulus `q_ks` of the ciphertexts `method` produces (the parameters' key-switching modulus
    /// for both methods).
    ///
    /// Errors: [`PegasusError::MissingKey`] if the key of `method` was not generated.
    pub fn output_modulus(&self, method: DimensionSwitch) -> PegasusResult<u64> {
        Ok(match method {
            DimensionSwitch::PerCiphertext => self.per_key("output modulus")?.params().modulus,
            DimensionSwitch::WholeCiphertext => self.whole_key("output modulus")?.output_modulus(),
        })
    }

    /// Variance the key switch of `method` adds, at the output modulus
    /// ([`LweSwitchingKey::added_variance`], [`RingSwitchingKey::added_variance`]).
    ///
    /// Errors: [`PegasusError::MissingKey`] if the key of `method` was not generated.
    pub fn added_variance(&self, method: DimensionSwitch) -> PegasusResult<f64> {
        Ok(match method {
            DimensionSwitch::PerCiphertext => self.per_key("added variance")?.added_variance(),
            DimensionSwitch::WholeCiphertext => self.whole_key("added variance")?.added_variance(),
        })
    }

    /// Variance of the error the whole switch of `method` adds (output phase `(q_ks / q_0) phi + e` for
    /// the input phase `phi`), roundings of the modulus switches included, for a CKKS secret of squared
    /// norm `ckks_norm_sq` and an LWE secret of squared norm `lwe_norm_sq`: per ciphertext,
    /// `(1 + ckks_norm_sq) / 12` if `q_ks != q_0` plus [`LweSwitchingKey::added_variance`]; whole
    /// ciphertext, [`RingSwitchingKey::switch_variance`].
    ///
    /// Errors: [`PegasusError::MissingKey`] if the key of `method` was not generated.
    pub fn switch_variance(
        &self,
        method: DimensionSwitch,
        ckks_norm_sq: f64,
        lwe_norm_sq: f64,
    ) -> PegasusResult<f64> {
        const OP: &str = "switch variance";
        Ok(match method {
            DimensionSwitch::PerCiphertext => {
                let key = self.per_key(OP)?;
                rounding_variance(key.params().modulus != self.q0, ckks_norm_sq)
                    + key.added_variance()
            }
            DimensionSwitch::WholeCiphertext => self
                .whole_key(OP)?
                .switch_variance(ckks_norm_sq, lwe_norm_sq),
        })
    }

    /// The LWE ciphertexts of dimension `n` over `q_ks`, under the LWE secret, of the plaintext
    /// coefficients at `positions` (in that order) of the 2-part CKKS ciphertext `ct` (any level), by
    /// `method` (PEGASUS Fig. 6 steps 1-4; see the [module documentation](self)).
    ///
    /// Errors: [`PegasusError::MissingKey`] if the key of `method` was not generated;
    /// [`PegasusError::KeyMismatch`] for a ciphertext of another context;
    /// [`PegasusError::InvalidParams`] for a 3-part ciphertext; [`PegasusError::PositionOutOfRange`].
    pub fn switch(
        &self,
        ct: &Ciphertext,
        positions: &[usize],
        method: DimensionSwitch,
    ) -> PegasusResult<Vec<LweCiphertext>> {
        active_wait(|| self.switch_waiting(ct, positions, method))
    }

    /// The work of [`Self::switch`], which runs it inside [`active_wait`] (a long
    /// sequence of short parallel sections).
    fn switch_waiting(
        &self,
        ct: &Ciphertext,
        positions: &[usize],
        method: DimensionSwitch,
    ) -> PegasusResult<Vec<LweCiphertext>> {
        match method {
            DimensionSwitch::PerCiphertext => {
                const OP: &str = "per-ciphertext dimension switch";
                let key = self.per_key(OP)?;
                check_key(self.fingerprint, ct, "per-ciphertext switching key", OP)?;
                check_positions(positions, self.ring_degree, OP)?;
                let rlwe = at_q0(ct, OP)?;
                let q_ks = key.params().modulus;
                // One position per task: each is a whole Fig. 9 switch (milliseconds at N = 2^16), and
                // its dimension-N ciphertext lives only inside the task.
                positions
                    .par_iter()
                    .map(|&i| {
                        let wide = extract(&rlwe, i)?;
                        let wide = if wide.modulus().value() == q_ks {
                            wide
                        } else {
                            wide.switch_modulus(q_ks)?
                        };
                        Ok(key.switch(&wide)?)
                    })
                    .collect()
            }
            DimensionSwitch::WholeCiphertext => self
                .whole_key("whole-ciphertext dimension switch")?
                .switch(ct, positions),
        }
    }

    fn per_key(&self, operation: &'static str) -> PegasusResult<&LweSwitchingKey> {
        self.per_ciphertext
            .as_ref()
            .ok_or(PegasusError::MissingKey {
                operation,
                key: "per-ciphertext switching key (DimensionSwitch::PerCiphertext)",
            })
    }

    fn whole_key(&self, operation: &'static str) -> PegasusResult<&RingSwitchingKey> {
        self.whole_ciphertext
            .as_ref()
            .ok_or(PegasusError::MissingKey {
                operation,
                key: "whole-ciphertext switching key (DimensionSwitch::WholeCiphertext)",
            })
    }
}

/// The modulus of a gadget product of degree `n` for the output modulus `q`: `q` itself if it is
/// `1 mod 2n` (an NTT prime for the ring), otherwise the largest prime of its bit size that is.
///
/// Errors: [`PegasusError::Math`] if there is no such prime.
fn ring_modulus(q: Modulus, n: usize) -> PegasusResult<u64> {
    let two_n = 2 * n as u64;
    if q.value() % two_n == 1 {
        Ok(q.value())
    } else {
        Ok(ntt_primes_of_bits(q.bits(), two_n, 1, &[])?[0])
    }
}

/// `(1 + ||s||^2) / 12` if `switched`, else 0: the variance of the phase's rounding error when every
/// component of a ciphertext under `s` is rounded to another modulus (each rounding uniform in
/// `(-1/2, 1/2)`; PEGASUS Appendix C.2).
fn rounding_variance(switched: bool, norm_sq: f64) -> f64 {
    if switched {
        (1.0 + norm_sq) / 12.0
    } else {
        0.0
    }
}

/// `round(x to / from)` for every residue `x` modulo `from`: the modulus switch of
/// [`LweCiphertext::switch_modulus`] ([`ModulusSwitch`]) applied to the coefficients of a ring element
/// (read as the mask of a ciphertext), so that the ring and the LWE switches round alike. A copy when
/// the moduli are equal.
///
/// Errors: [`PegasusError::Lwe`] for a modulus outside `[2, 2^62)` or a residue not below `from`.
///
/// A whole ring element (`N = 2^16` coefficients) is switched in parts of [`SWITCH_PART`] on the pool's
/// threads, each written into its place of the output: every coefficient rounds on its own, so the parts
/// give the same residues.
fn switch_residues(values: &[u64], from: u64, to: u64) -> PegasusResult<Vec<u64>> {
    if from == to {
        return Ok(values.to_vec());
    }
    let switch = ModulusSwitch::new(from, to)?;
    if values.len() < 2 * SWITCH_PART || rayon::current_num_threads() < 2 {
        let mut out = vec![0; values.len()];
        switch.switch_into(values, &mut out)?;
        return Ok(out);
    }
    let mut out = parallel::zeroed(values.len());
    parallel::try_for_each_chunk(&mut out, SWITCH_PART, &|i, o| -> PegasusResult<()> {
        let start = i * SWITCH_PART;
        Ok(switch.switch_into(&values[start..start + o.len()], o)?)
    })?;
    Ok(out)
}

/// The switch from `from` to `to`, `None` when they are equal (no rounding).
///
/// Errors: [`PegasusError::Lwe`] for a modulus outside `[2, 2^62)`.
fn switch_between(from: u64, to: u64) -> PegasusResult<Option<ModulusSwitch>> {
    Ok(if from == to {
        None
    } else {
        Some(ModulusSwitch::new(from, to)?)
    })
}

/// Coefficients per task of the modulus switch of `c_1` ([`switch_residues`]): a ring element of
/// `N = 2^16` in 8 tasks.
const SWITCH_PART: usize = 1 << 13;

/// Words of components from which they are built on several threads (below, a fork costs more than
/// the strided reads of a few components).
const COMPONENT_TASK_WORDS: usize = 1 << 15;

/// What the components of the switched ciphertext are read from: `c_0` at `q_0`, the key switch's
/// `(u_0, u_1)` at `q_r` (coefficient vectors of degree `N`), and the modulus switches `q_0 -> q_r`
/// (`first`) and `q_r -> q_ks` (`last`), `None` where the moduli are equal. The switched ciphertext is
/// `(last(first(c_0) + u_0), last(u_1))` (steps 1-3 of the [module documentation](self)).
struct Sources<'a> {
    c0: &'a [u64],
    u0: &'a [u64],
    u1: &'a [u64],
    q_r: Modulus,
    first: Option<ModulusSwitch>,
    last: Option<ModulusSwitch>,
}

impl Sources<'_> {
    /// Component `r < t = N / n` (`n` the degree of `basis`) of the switched ciphertext `(b, a)` in the
    /// basis `1, X, ..., X^(t-1)` of `R_N` over `R_n`: the RLWE ciphertext of degree `n` with
    /// coefficients `b[r + m t]`, `a[r + m t]`, which under `s_lwe` decrypts to the plaintext
    /// coefficients `r + m t` of `(b, a)` under `s_lwe(X^t)` (see the [module documentation](self)).
    /// Only these `2n` coefficients of `(b, a)` are computed.
    ///
    /// Errors: [`PegasusError::Ring`] for residues not reduced modulo the basis' modulus.
    fn component(&self, r: usize, basis: &Arc<RnsBasis>) -> PegasusResult<RlweCiphertext<Coeff>> {
        let n = basis.degree();
        let stride = self.c0.len() / n;
        let last = |x: u64| self.last.map_or(x, |s| s.round(x));
        let (mut b, mut a) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for j in (r..self.c0.len()).step_by(stride) {
            let c0 = self.first.map_or(self.c0[j], |s| s.round(self.c0[j]));
            b.push(last(self.q_r.add(c0, self.u0[j])));
            a.push(last(self.u1[j]));
        }
        Ok(RlweCiphertext::new(vec![
            Poly::from_data(basis, b)?,
            Poly::from_data(basis, a)?,
        ])?)
    }
}

/// Checks that `sk` belongs to `ctx`.
///
/// Errors: [`rnsfhe_ckks::Error::ContextMismatch`] (as [`PegasusError::Ckks`]).
fn check_secret_key(ctx: &CkksContext, sk: &SecretKey) -> PegasusResult<()> {
    if sk.fingerprint() == ctx.fingerprint() {
        Ok(())
    } else {
        Err(rnsfhe_ckks::Error::ContextMismatch {
            object: "CKKS secret key",
            expected: ctx.fingerprint(),
            got: sk.fingerprint(),
        }
        .into())
    }
}

/// Checks that `ct` belongs to the context of a key with fingerprint `fingerprint`.
///
/// Errors: [`PegasusError::KeyMismatch`].
fn check_key(
    fingerprint: u64,
    ct: &Ciphertext,
    key: &'static str,
    operation: &'static str,
) -> PegasusResult<()> {
    if ct.fingerprint() == fingerprint {
        Ok(())
    } else {
        Err(PegasusError::KeyMismatch {
            operation,
            key,
            expected: fingerprint,
            got: ct.fingerprint(),
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Extraction from the components against the phase computed by a schoolbook negacyclic product:
    /// exactly equal for every position, for several strides (including 1, the plain extraction of
    /// dimension `N`).
    #[test]
    fn extraction_from_the_components_is_exact() {
        let big_n = 256;
        let q = Modulus::new(ntt_primes_of_bits(40, 2 * big_n as u64, 1, &[]).unwrap()[0]).unwrap();
        let mut r = rand::rngs::StdRng::seed_from_u64(7);
        let b: Vec<u64> = (0..big_n).map(|_| r.gen_range(0..q.value())).collect();
        let a: Vec<u64> = (0..big_n).map(|_| r.gen_range(0..q.value())).collect();
        for n in [16, 64, 256] {
            let stride = big_n / n;
            let s: Vec<i64> = (0..n).map(|_| r.gen_range(-1..=1)).collect();
            let mut ring = vec![0i64; big_n];
            for (j, &c) in s.iter().enumerate() {
                ring[j * stride] = c;
            }
            // The phase b + a s' modulo X^N + 1.
            let mut phase = b.clone();
            for (x, &ax) in a.iter().enumerate() {
                for (y, &sy) in ring.iter().enumerate() {
                    let term = q.mul(ax, q.reduce_i64(sy));
                    let k = (x + y) % big_n;
                    phase[k] = if x + y < big_n {
                        q.add(phase[k], term)
                    } else {
                        q.sub(phase[k], term)
                    };
                }
            }
            let key = LweSecretKey::from_coefficients(&s).unwrap();
            let basis = RnsBasis::new(n, &[q.value()]).unwrap();
            let zero = vec![0u64; big_n];
            let sources = Sources {
                c0: &b,
                u0: &zero,
                u1: &a,
                q_r: q,
                first: None,
                last: None,
            };
            let parts: Vec<_> = (0..stride)
                .map(|r| sources.component(r, &basis).unwrap())
                .collect();
            assert_eq!(parts.len(), stride);
            for (i, &expected) in phase.iter().enumerate() {
                let ct = extract(&parts[i % stride], i / stride).unwrap();
                assert_eq!(ct.dimension().get(), n);
                assert_eq!(
                    key.decrypt(&ct).unwrap(),
                    q.center(expected),
                    "n = {n}, i = {i}"
                );
                // The mask of the module documentation.
                let mask: Vec<u64> = (0..n)
                    .map(|j| {
                        if j * stride <= i {
                            a[i - j * stride]
                        } else {
                            q.neg(a[big_n + i - j * stride])
                        }
                    })
                    .collect();
                assert_eq!((ct.b(), ct.a()), (b[i], mask.as_slice()));
            }
        }
    }

    /// The ring modulus: `q` itself when it is an NTT prime for the degree, otherwise the largest prime
    /// of its size that is (Secure128's `q_ks` in degree `2^16`).
    #[test]
    fn ring_modulus_is_ntt_friendly() {
        let q_ks = Modulus::new(67104769).unwrap();
        assert_eq!(ring_modulus(q_ks, 1 << 10).unwrap(), 67104769);
        let q_r = ring_modulus(q_ks, 1 << 16).unwrap();
        assert_eq!(q_r, 65929217);
        assert_eq!(q_r % (1 << 17), 1);
    }
}
