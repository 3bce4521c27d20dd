//! LWE key switching between dimensions in the ring-based form of PEGASUS Fig. 9 (after Chen, Dai, Kim
//! and Song, "Efficient homomorphic conversion between (ring) LWE ciphertexts", Section 3.2).
//!
//! The source secret `s'` (dimension `N'`) is cut into blocks of `n` coefficients (the target dimension,
//! a power of two); block `j` becomes the polynomial `s'_j = sum_l s'[j n + l] X^l`, and the switching key
//! holds for every block the gadget ciphertext `RLWE_s^{n,q}(s'_j; g_digit)` under the target secret `s`
//! seen as a ring element, with the signed digit gadget `g_k = B^k` (`B = 2^base_log`, PEGASUS Section
//! IV.A). To switch `(b, a)`, the mask's blocks become `a_j = a[j n] - sum_{l >= 1} a[j n + l] X^(n - l)`,
//! whose product with `s'_j` has constant coefficient `sum_l a[j n + l] s'[j n + l]`; the sum of the
//! gadget products `a_j ⋄ SwK_j` therefore encrypts `<a, s'>` in its constant coefficient, and
//! `(b, 0) + Extract^0` of it is an LWE encryption of the same message under `s` (PEGASUS Theorem 3).
//! All blocks go through one multiply-accumulate ([`rnsfhe_core::gadget::product_sum`]).
//!
//! The error grows by `sum_{j,k} d_{j,k} e_{j,k}`, of variance `N' d B^2 sigma^2 / 12` in PEGASUS Appendix
//! C.1, less when the top digit is not full ([`LweSwitchingKey::added_variance`]).

use rnsfhe_core::context::fingerprint_words;
use rnsfhe_core::gadget::product_sum;
use rnsfhe_core::keys::SecretPoly;
use rnsfhe_core::{Gadget, GadgetCiphertext, RlweCiphertext};
use rnsfhe_math::sampling::{Csprng, DiscreteGaussian};
use rnsfhe_math::Modulus;
use rnsfhe_ring::{Coeff, Poly, RnsBasis, RnsSignedDigits};

use crate::ciphertext::{check_modulus, LweCiphertext};
use crate::dimension::LweDimension;
use crate::error::LweResult;
use crate::extract::extract;
use crate::secret::LweSecretKey;
use crate::security::{check, estimate, Security};

/// Parameters of an LWE switching key, as a literal struct (PEGASUS Table IV, first row:
/// `q_0 ~ 2^45`, `sigma_ks = 2^13`, `B_ks = 2^7`, `d_ks = 7`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LweKeySwitchParams {
    /// The modulus `q` of the ciphertexts: a prime `= 1 mod 2n` for the target dimension `n` (the
    /// products run in NTT form over it).
    pub modulus: u64,
    /// `log2(B)` of the digit gadget.
    pub base_log: u32,
    /// Number of digits `d`, with `d * base_log >= bits(q)` (an exact decomposition).
    pub digits: usize,
    /// Standard deviation of the keys' errors (`sigma_ks`).
    pub sigma: f64,
}

impl LweKeySwitchParams {
    /// `sum_k E[d_k^2]` over the `d` balanced digits (in `[-B/2, B/2)`) of a uniform residue modulo
    /// `modulus`, centered in `(-q/2, q/2]`: the factor of `sigma^2` per source coefficient in the error
    /// of a gadget product with these digits (PEGASUS Appendix C.1 takes every digit uniform,
    /// `d B^2 / 12`). The digits above the modulus are not: digit `k` is that of a value uniform on
    /// `(-c_k, c_k)`, `c_k = q / (2 B^k)`, so `E[d_k^2] = (1 / c_k) int_0^(c_k) bal(x)^2 dx` (`bal` the
    /// balanced residue modulo `B`), `B^2 / 12` for the low digits and about `c_k^2 / 3` for the top one.
    pub fn digit_second_moments(&self) -> f64 {
        let base = 2f64.powi(self.base_log as i32);
        let q = self.modulus as f64;
        // int_0^t bal(x)^2 dx: B^3 / 12 per full period, then x^2 up to B/2 and (x - B)^2 past it.
        let integral = |t: f64| {
            let periods = (t / base).floor();
            let s = t - periods * base;
            let partial = if s <= base / 2.0 {
                s.powi(3) / 3.0
            } else {
                base.powi(3) / 24.0 + ((s - base).powi(3) + base.powi(3) / 8.0) / 3.0
            };
            periods * base.powi(3) / 12.0 + partial
        };
        (0..self.digits)
            .map(|k| {
                let c = q / (2.0 * base.powi(k as i32));
                integral(c) / c
            })
            .sum()
    }
}

/// The parameters of LWE switching keys: the source dimension `N'`, the target dimension `n` and the
/// [`LweKeySwitchParams`], with the signed-digit decomposition they define (built once, shared by the
/// keys made or loaded with it: [`LweSwitchingKey::context`], the wire reader of
/// [`crate::serialization`]).
#[derive(Clone, Debug)]
pub struct LweSwitchingKeyContext {
    from: LweDimension,
    to: LweDimension,
    params: LweKeySwitchParams,
    digits: RnsSignedDigits,
}

impl LweSwitchingKeyContext {
    /// The keys from dimension `from` to dimension `to` (a power of two supported as a ring degree)
    /// with `params`: `params.digits` digits of base `2^params.base_log` over the one-limb basis of
    /// degree `n` and modulus `params.modulus`. The security of the parameters is not estimated here
    /// (the key generator does it, with the target key's weight).
    ///
    /// Errors: [`LweError::InvalidParams`](crate::LweError::InvalidParams) /
    /// [`LweError::Ring`](crate::LweError::Ring) for a decomposition that is not exact, a modulus that
    /// is not an NTT prime for `n`, or a degree the ring layer does not support.
    pub fn new(
        from: LweDimension,
        to: LweDimension,
        params: LweKeySwitchParams,
    ) -> LweResult<Self> {
        let basis = RnsBasis::new(to.get(), &[params.modulus])?;
        let digits = RnsSignedDigits::new(&basis, params.base_log, params.digits)?;
        Ok(Self {
            from,
            to,
            params,
            digits,
        })
    }

    /// The source dimension `N'`.
    pub fn from_dimension(&self) -> LweDimension {
        self.from
    }

    /// The target dimension `n`.
    pub fn to_dimension(&self) -> LweDimension {
        self.to
    }

    /// The key-switching parameters.
    pub fn params(&self) -> &LweKeySwitchParams {
        &self.params
    }

    /// The fingerprint of the target key's parameters, carried by the keys' gadget ciphertexts.
    pub(crate) fn gadget_fingerprint(&self) -> u64 {
        fingerprint_words([
            0x4c57_455f_4b53, // "LWE_KS"
            self.to.get() as u64,
            self.params.modulus,
            self.params.base_log as u64,
            self.params.digits as u64,
            self.params.sigma.to_bits(),
        ])
    }

    /// The signed-digit decomposition of the switches.
    pub(crate) fn digits(&self) -> &RnsSignedDigits {
        &self.digits
    }

    /// Number of gadget ciphertexts of its keys: one per block of `n` source coefficients (the last
    /// one padded with zeros).
    pub(crate) fn blocks(&self) -> usize {
        self.from.get().div_ceil(self.to.get())
    }
}

/// A switching key from an LWE secret of dimension `N'` to one of dimension `n` (see the module
/// documentation).
#[derive(Clone, Debug)]
pub struct LweSwitchingKey {
    ctx: LweSwitchingKeyContext,
    modulus: Modulus,
    blocks: Vec<GadgetCiphertext>,
}

impl LweSwitchingKey {
    /// Generates the key from `from` (dimension `N'`) to `to` (dimension `n`, a power of two supported
    /// as a ring degree): one gadget ciphertext of each block of `from` under `to`, errors of width
    /// `params.sigma`. `N'` need not be a multiple of `n` (the last block is padded with zeros).
    ///
    /// The key is RLWE samples of degree `n` over `q` under `to` (with its Hamming weight): parameters
    /// the estimator puts below 128 bits are refused ([`crate::security`]).
    ///
    /// Errors: [`LweError::Insecure`](crate::LweError::Insecure);
    /// [`LweError::InvalidParams`](crate::LweError::InvalidParams) for a digit decomposition that is
    /// not exact or a modulus that is not an NTT prime for `n`; errors of the lower layers for an
    /// unsupported `n` or `sigma`.
    pub fn generate(
        from: &LweSecretKey,
        to: &LweSecretKey,
        params: LweKeySwitchParams,
        rng: &mut Csprng,
    ) -> LweResult<Self> {
        Self::generate_with(from, to, params, Security::Check, rng)
    }

    /// [`LweSwitchingKey::generate`] without the security check: the caller's explicit opt-in (tests,
    /// reproducing PEGASUS Table IV, whose switching key the estimator puts at 97.7 bits).
    ///
    /// Errors: as [`LweSwitchingKey::generate`] but never `Insecure`.
    pub fn generate_allowing_insecure(
        from: &LweSecretKey,
        to: &LweSecretKey,
        params: LweKeySwitchParams,
        rng: &mut Csprng,
    ) -> LweResult<Self> {
        Self::generate_with(from, to, params, Security::AllowInsecure, rng)
    }

    fn generate_with(
        from: &LweSecretKey,
        to: &LweSecretKey,
        params: LweKeySwitchParams,
        security: Security,
        rng: &mut Csprng,
    ) -> LweResult<Self> {
        let n = to.dimension().get();
        let estimate = estimate(
            n,
            (params.modulus as f64).log2(),
            params.sigma,
            to.lattice_secret(),
        )?;
        check(&estimate, "LWE switching key", security)?;
        let ctx = LweSwitchingKeyContext::new(from.dimension(), to.dimension(), params)?;
        let digits = ctx.digits();
        let basis = digits.basis();
        let modulus = basis.moduli()[0];
        let noise = DiscreteGaussian::with_sigma(params.sigma)?;
        let gadget = Gadget::of_digits(digits);
        let constants = (0..params.digits)
            .map(|k| digits.gadget_residues(0, k, 1))
            .collect::<Result<Vec<_>, _>>()?;
        let s = SecretPoly::new(Poly::<Coeff>::from_i64(basis, to.coefficients())?.into_ntt());
        let fingerprint = ctx.gadget_fingerprint();
        let blocks = from
            .coefficients()
            .chunks(n)
            .map(|block| {
                let mut padded = block.to_vec();
                padded.resize(n, 0);
                let message = Poly::<Coeff>::from_i64(basis, &padded);
                zeroize::Zeroize::zeroize(&mut padded);
                let message = SecretPoly::new(message?.into_ntt());
                Ok(GadgetCiphertext::encrypt(
                    fingerprint,
                    gadget,
                    &noise,
                    s.get(),
                    message.get(),
                    &constants,
                    rng,
                )?)
            })
            .collect::<LweResult<Vec<_>>>()?;
        Ok(Self {
            ctx,
            modulus,
            blocks,
        })
    }

    /// A key of `ctx` from its gadget ciphertexts, one per block of `n` source coefficients (the wire
    /// reader, [`crate::serialization`], which reads them with the context's decomposition).
    pub(crate) fn from_blocks(ctx: LweSwitchingKeyContext, blocks: Vec<GadgetCiphertext>) -> Self {
        debug_assert_eq!(blocks.len(), ctx.blocks());
        Self {
            modulus: ctx.digits.basis().moduli()[0],
            ctx,
            blocks,
        }
    }

    /// The parameters of the key (its dimensions, [`LweKeySwitchParams`] and decomposition).
    pub fn context(&self) -> &LweSwitchingKeyContext {
        &self.ctx
    }

    /// The source dimension `N'`.
    pub fn from_dimension(&self) -> LweDimension {
        self.ctx.from
    }

    /// The target dimension `n`.
    pub fn to_dimension(&self) -> LweDimension {
        self.ctx.to
    }

    /// The parameters the key was made with.
    pub fn params(&self) -> &LweKeySwitchParams {
        &self.ctx.params
    }

    /// The gadget ciphertexts, one per block of `n` source coefficients.
    pub fn blocks(&self) -> &[GadgetCiphertext] {
        &self.blocks
    }

    /// Variance added to the error by one switch: `N' sigma^2 sum_k E[d_k^2]`, with `N'` the padded source
    /// dimension and `sum_k E[d_k^2]` the digits' second moments
    /// ([`LweKeySwitchParams::digit_second_moments`]; PEGASUS Appendix C.1, whose `N' d B^2 sigma^2 / 12`
    /// takes every digit uniform). At Table IV (a 45-bit `q_0`, 7 digits of 7 bits) the top digit holds 3
    /// bits and the sum is 6.00 digits' worth, not 7: the paper's figure is 17 % above the measured
    /// variance.
    pub fn added_variance(&self) -> f64 {
        let padded = (self.blocks.len() * self.ctx.to.get()) as f64;
        padded * self.params().sigma.powi(2) * self.params().digit_second_moments()
    }

    /// Switches `ct` (dimension `N'`, modulus `q`) to an encryption of the same message under the target
    /// secret (PEGASUS Fig. 9).
    ///
    /// Errors: [`LweError::DimensionMismatch`](crate::LweError::DimensionMismatch) / [`LweError::ModulusMismatch`](crate::LweError::ModulusMismatch) for a ciphertext of another
    /// dimension or modulus.
    pub fn switch(&self, ct: &LweCiphertext) -> LweResult<LweCiphertext> {
        self.ctx
            .from
            .check_same(ct.dimension(), "LWE key switching")?;
        check_modulus(&self.modulus, ct.modulus(), "LWE key switching")?;
        let n = self.ctx.to.get();
        let basis = self.ctx.digits.basis();
        let q = &self.modulus;
        // a_j = a[j n] - sum_{l >= 1} a[j n + l] X^(n - l): coefficient 0 is a[j n], coefficient n - l is
        // -a[j n + l]; the padding of the last block contributes zeros.
        let masks = ct
            .a()
            .chunks(n)
            .map(|block| {
                let mut c = vec![0u64; n];
                c[0] = block[0];
                for (l, &x) in block.iter().enumerate().skip(1) {
                    c[n - l] = q.neg(x);
                }
                Ok(Poly::<Coeff>::from_data(basis, c)?)
            })
            .collect::<LweResult<Vec<_>>>()?;
        let terms: Vec<_> = masks.iter().zip(&self.blocks).collect();
        let (u0, u1) = product_sum(&terms, &self.ctx.digits)?;
        let mut out = extract(&RlweCiphertext::new(vec![u0, u1])?, 0)?;
        out.add_plain_assign(q.center(ct.b()));
        Ok(out)
    }
}
