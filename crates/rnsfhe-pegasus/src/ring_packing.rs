//! Ring packing: `l` LWE ciphertexts `(b_i, a_i)` of dimension `n` over `q_0` (PEGASUS Fig. 6 after step
//! 6: `LWE_{s_lwe}^{n, q_0}(Delta T(v_i))`) into **one** RLWE ciphertext of the CKKS ring (degree `N`,
//! modulus `q_0`, under the CKKS secret `s`) whose plaintext **coefficients** are their phases. It is
//! the alternative to PEGASUS's linear transform (Fig. 5, Fig. 6 step 9) that PEGASUS Section IV.B
//! ("Remark") credits to Chen, Dai, Kim and Song ("Efficient homomorphic conversion between (ring) LWE
//! ciphertexts", ACNS 2021, "CDKS" below): pack the phases into coefficients, then (in the pipeline, not
//! here) raise the modulus, move the coefficients to the slots (CoeffsToSlots) and reduce modulo `q_0`
//! (F_mod, Fig. 6 step 10).
//!
//! # Output
//!
//! [`RingPackingKey::pack`] returns a [`PackedLwe`]: a 2-part ciphertext in coefficient form over the
//! CKKS chain's first prime `q_0` (level 1) such that, for every input `i < l`,
//!
//! ```text
//! [c_0 + c_1 s]_{q_0} at coefficient i * stride  =  b_i + <a_i, s_lwe> + E_i   (mod q_0),
//! ```
//!
//! i.e. `Delta T(v_i) + e_i + E_i` **modulo `q_0`**: the exact phase of the input (message and its error
//! `e_i`; as an integer the message is only defined modulo `q_0`, so after a modulus raise the
//! coefficient is `Delta T(v_i) + e_i + E_i + q_0 I_i` for a small integer `I_i`, which F_mod removes)
//! plus the packing error `E_i` of variance [`RingPackingKey::added_variance`]. Every other coefficient
//! decrypts to a packing error alone (the unused positions `i * stride`, `i >= l`, and all positions
//! between them). `stride` is a power of two: [`RingPackingKey::default_stride`] (the sparsest layout,
//! `min(w, N / l')` with `l'` the power of two at or above `l` and `w` the window below) or any smaller
//! power of two given to [`RingPackingKey::pack_with_stride`].
//!
//! The inputs may have any dimension `n <= N` under any LWE secret with coefficients in `{-1, 0, 1}`
//! (the key is made for that secret): the outputs of the look-up tables before Fig. 6 step 6 too
//! (dimension `n_lut` under the look-up-table ring's secret), which spares that step's key switch and
//! its error for a packing error `n_lut / n` times larger in standard deviation.
//!
//! # Algorithm
//!
//! Write `w` for `n` rounded up to a power of two (the **window**), `s_lwe(Y) = sum_j s_lwe[j] Y^j` for
//! the LWE secret as an element of the CKKS ring `R_N = Z[Y]/(Y^N + 1)`, and `C = N / w`.
//!
//! 1. **Batched LWE-to-RLWE key switch** (the ring form of PEGASUS Fig. 9 / Theorem 3, with `C`
//!    ciphertexts per product instead of one). For up to `C` ciphertexts, ciphertext `k` at position
//!    `p_k = k w`, build `c = sum_k sum_j a_k[j] Y^(p_k - j)` and `beta = sum_k b_k Y^(p_k)`. Coefficient
//!    `p_k` of `c s_lwe(Y)` is `sum_j a_k[j] s_lwe[j] = <a_k, s_lwe>`: the masks occupy the disjoint
//!    windows `(p_k - w, p_k]` of `c` (negacyclically for `p_0 = 0`), and `s_lwe(Y)` has degree below
//!    `w`, so no other mask reaches that coefficient. One gadget product of `c` with the **switching key**
//!    (the hybrid key-switching key from `s_lwe(Y)` to `s`, a [`KeySwitchKey`] over `q_0 P`) gives
//!    `(u_0, u_1)` with `u_0 + u_1 s = c s_lwe(Y) + e`, and `(beta + u_0, u_1)` decrypts at `p_k` to
//!    `b_k + <a_k, s_lwe> + e`: `C` LWE ciphertexts become one RLWE ciphertext under `s` for the price of
//!    one key switch (`N / w = 64` of them at `N = 2^16`, `n = 2^10`). The other coefficients hold
//!    garbage (the rest of `c s_lwe(Y)`).
//! 2. **Tree merging** (CDKS `PackLWEs`). For a stride `S <= w`, `B = w / S` batches are built (one when
//!    `S = w`; input `i` goes to batch `i mod B`, slot `i div B`) and merged pairwise, batch `j` with
//!    batch `j + B/2` at each level: two ciphertexts with values at the multiples of `2t` become
//!    `(f_e + Y^t f_o) + sigma(f_e - Y^t f_o)` with `sigma: Y -> Y^(N/t + 1)`, which fixes `Y^(2tj)`
//!    and negates `Y^(2tj + t)`: the result holds `2 f_e` at the multiples of `2t`, `2 f_o` shifted by
//!    `t` between them, whatever the garbage elsewhere (it cancels at those positions). Input `i` ends at
//!    `i S`.
//! 3. **Partial field trace** (CDKS). `Tr_{R_N / R_{N/S}} = prod_k (1 + sigma_{2^k + 1})` over
//!    `log2(N/S) < k <= log2(N)` keeps the coefficients at the multiples of `S` (multiplied by `S`) and
//!    zeroes every other one, garbage included.
//!
//! Every packed value is multiplied by `2` per merge level and by `S` in the trace, `w` in all; the
//! inputs are multiplied by `w^-1 mod q_0` first (exact, `q_0` is odd), so the output carries the phases
//! themselves. Automorphisms run in coefficient form ([`RlweContext::apply_galois_coeff`]), where `Y^t`
//! is a negacyclic rotation.
//!
//! **Cost** ([`RingPackingKey::key_switch_count`]): one key switch per batch holding inputs (step 1),
//! one per merge (step 2, at most `B - 1`) and `log2(S)` for the trace (step 3), each a hybrid key
//! switch of one limb with one special prime at degree `N`. At `N = 2^16`, `n = 2^10` and the default
//! stride: 11 key switches for 64 inputs, 15 for 256, 37 for 1024, 131 for 4096, where CDKS's packing of
//! LWE ciphertexts already under `s` takes `l - 1 + log2(N / l)` automorphisms (and PEGASUS Section IV.B
//! counts `O(l + log(N / l))` rotations for it). Batches, and the merges of one level, run in parallel
//! (rayon).
//!
//! # Security
//!
//! No key of the packing is under `s_lwe`: the switching key and the `log2(w)` automorphism keys
//! (`Y -> Y^(2^k + 1)`, `log2(N/w) < k <= log2(N)`) are RLWE samples of degree `N` under the CKKS secret
//! `s`, with the CKKS context's error width and secret distribution, over the one-limb packing modulus
//! `q_0 P` (`P` one special prime, [`RingPackingKey::packing_context`]): a smaller modulus than the CKKS
//! keys' `Q P` at the same degree. (Packing in the ring of degree `n` under `s_lwe` as a ring secret
//! would make its automorphism keys RLWE problems of dimension `n`: at 128 bits and `sigma = 3.19`
//! their modulus stays near 26 bits, as the LWE switching key of `PegasusPreset::Secure128` does, and
//! the merges would amplify the key-switching error of a digit gadget by about `n` at that modulus.) The
//! generators refuse parameters that the built-in lattice estimator ([`rnsfhe_core::lwe_estimator`]) puts
//! below 128 bits ([`RingPackingKey::security`]) unless the caller opts in
//! ([`RingPackingKey::generate_allowing_insecure`]), as [`rnsfhe_lwe::LweSwitchingKey::generate`] does.
//! The switching key encrypts (a function of) `s_lwe` under `s` while the LWE switching key of Fig. 6
//! step 4 encrypts `s` under `s_lwe`: the key cycle, and the circular-security assumption it needs, are
//! those of PEGASUS's own repacking key `RK` (an encryption of `s_lwe` under `s`, Fig. 6).
//!
//! # Noise
//!
//! Each of the `log2(w)` automorphism levels doubles the error present at a packed position (the
//! automorphisms fix those positions) and adds one key-switching error `e_ks`; the first key switch's
//! error passes through all of them. The packing error therefore has variance
//! `V_ks (w^2 + sum_{j < log2 w} 4^j) = V_ks (4 w^2 - 1) / 3` whatever `l` and the stride, with `V_ks` the
//! hybrid key-switching variance of the packing context ([`RlweContext::key_switch_noise`]: the ModDown
//! rounding `(1 + ||s||^2) / 12` dominates with a special prime above `q_0`).

use std::sync::Arc;

use rayon::prelude::*;
use rnsfhe_ckks::CkksContext;
use rnsfhe_core::lwe_estimator::{estimate_rlwe, LweEstimate};
use rnsfhe_core::{
    ConversionMode, GaloisElement, GaloisKeys, KeyGenerator, KeySwitchKey, RlweCiphertext,
    RlweContext, RlweParams, SecretKey,
};
use rnsfhe_lwe::{
    LweCiphertext, LweDimension, LweError, LweSecretDistribution, LweSecretKey, MIN_SECURITY_BITS,
};
use rnsfhe_math::primes::ntt_primes_of_bits;
use rnsfhe_math::sampling::Csprng;
use rnsfhe_math::Modulus;
use rnsfhe_ring::parallel::active_wait;
use rnsfhe_ring::{Coeff, Poly, RnsBasis};
use zeroize::Zeroize;

use crate::error::{PegasusError, PegasusResult};

/// Special primes below this bound take the vector (IFMA) path of the NTT: the packing context's `P` is
/// the largest NTT prime below it when `q_0` is too (every key switch of the packing transforms the `P`
/// limb four times).
const FAST_SPECIAL_BITS: u32 = 50;

/// Bit size of the special prime when `q_0` is at least `2^FAST_SPECIAL_BITS` (`P` should exceed `q_0`
/// for a small key-switching error, [`RlweContext::key_switch_noise`]).
const WIDE_SPECIAL_BITS: u32 = 61;

/// The result of [`RingPackingKey::pack`]: an RLWE ciphertext of the CKKS ring over `q_0` (coefficient
/// form, level 1 of the CKKS chain) whose coefficient `i * stride` decrypts to the phase of input `i`
/// plus the packing error (see the [module documentation](self)).
#[derive(Clone, Debug, PartialEq)]
pub struct PackedLwe {
    ciphertext: RlweCiphertext<Coeff>,
    count: usize,
    stride: usize,
}

impl PackedLwe {
    /// The ciphertext (2 parts in coefficient form over the CKKS chain's basis at level 1, `{q_0}`).
    pub fn ciphertext(&self) -> &RlweCiphertext<Coeff> {
        &self.ciphertext
    }

    /// The ciphertext, without the layout.
    pub fn into_ciphertext(self) -> RlweCiphertext<Coeff> {
        self.ciphertext
    }

    /// Number of packed LWE ciphertexts `l`.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The distance between two packed values: input `i` is at coefficient `i * stride`.
    pub fn stride(&self) -> usize {
        self.stride
    }

    /// The coefficients holding the packed values, in input order (`i * stride` for `i < l`).
    pub fn positions(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.count).map(|i| i * self.stride)
    }
}

/// The keys of ring packing for one CKKS context and one LWE secret: the switching key from the LWE
/// secret (embedded in the CKKS ring) to the CKKS secret and the automorphism keys of the merges and
/// the trace, all over the packing context ([`RingPackingKey::packing_context`]). See the [module
/// documentation](self) for the algorithm, its security and its noise.
#[derive(Clone, Debug)]
pub struct RingPackingKey {
    ctx: Arc<RlweContext>,
    /// The CKKS chain's basis at level 1 (`{q_0}`), the basis of the output.
    output_basis: Arc<RnsBasis>,
    q0: Modulus,
    lwe_dimension: LweDimension,
    window: usize,
    switching_key: KeySwitchKey,
    galois: GaloisKeys,
    /// Variance of one hybrid key switch of the packing context (at the expected secret norm).
    key_switch_variance: f64,
}

impl RingPackingKey {
    /// The RLWE context the packing keys live in: the CKKS ring degree `N`, `Q = {q_0}` (the CKKS
    /// chain's first prime), one special prime `P` (the largest NTT prime for `N` below `2^50` when
    /// `q_0 < 2^50`, below `2^61` otherwise), one digit group, exact (HPS) basis conversion, the CKKS
    /// secret distribution and error width. A server loading packing keys reads them with this
    /// context ([`rnsfhe_core::serialization`]) and calls [`RingPackingKey::from_keys`].
    ///
    /// Errors: [`PegasusError::Math`] if no special prime exists (not for supported degrees);
    /// [`PegasusError::Core`] for a context the core refuses.
    pub fn packing_context(ckks: &CkksContext) -> PegasusResult<Arc<RlweContext>> {
        let rlwe = ckks.rlwe();
        let q0 = rlwe.chain().moduli()[0].value();
        let two_n = 2 * rlwe.n() as u64;
        let bits = if q0 < 1 << FAST_SPECIAL_BITS {
            FAST_SPECIAL_BITS
        } else {
            WIDE_SPECIAL_BITS
        };
        let special = ntt_primes_of_bits(bits, two_n, 1, &[q0])?
            .first()
            .copied()
            .ok_or_else(|| PegasusError::InvalidParams {
                what: "ring-packing special prime",
                reason: format!("no {bits}-bit prime = 1 mod {two_n} besides q_0"),
            })?;
        let params = rlwe.params();
        Ok(RlweContext::new(RlweParams {
            log_n: params.log_n,
            q_moduli: vec![q0],
            p_moduli: vec![special],
            dnum: 1,
            conversion: ConversionMode::ExactFloat,
            secret: params.secret,
            sigma: params.sigma,
        })?)
    }

    /// The lattice estimate of every packing key of `ckks`: RLWE of degree `N` over `q_0 P` with the
    /// CKKS error width and secret distribution ([`RingPackingKey::packing_context`]).
    ///
    /// Errors: [`PegasusError::InvalidParams`] if the estimator rejects the parameters; as
    /// [`RingPackingKey::packing_context`].
    pub fn security(ckks: &CkksContext) -> PegasusResult<LweEstimate> {
        Self::estimate(&*Self::packing_context(ckks)?)
    }

    fn estimate(ctx: &RlweContext) -> PegasusResult<LweEstimate> {
        let params = ctx.params();
        let log_q = ctx.extended_basis().log2_product();
        estimate_rlwe(ctx.n(), log_q, params.sigma, params.secret).map_err(|e| {
            PegasusError::InvalidParams {
                what: "ring-packing keys",
                reason: format!("the lattice estimator rejects them: {e}"),
            }
        })
    }

    /// The Galois elements of the automorphism keys for LWE dimension `n` in a ring of degree `N`:
    /// `2^k + 1` for `log2(N / w) < k <= log2(N)`, `w` the window (`n` rounded up to a power of two).
    /// They serve every count and stride.
    ///
    /// Errors: [`PegasusError::InvalidParams`] unless `n <= N`, `N` a power of two.
    pub fn galois_elements(
        ring_degree: usize,
        lwe_dimension: LweDimension,
    ) -> PegasusResult<Vec<usize>> {
        let window = Self::window_of(ring_degree, lwe_dimension)?;
        let log_n = ring_degree.trailing_zeros();
        let first = (ring_degree / window).trailing_zeros() + 1;
        Ok((first..=log_n).map(|k| (1usize << k) + 1).collect())
    }

    fn window_of(ring_degree: usize, lwe_dimension: LweDimension) -> PegasusResult<usize> {
        let window = lwe_dimension.get().next_power_of_two();
        if !ring_degree.is_power_of_two() || window > ring_degree {
            return Err(PegasusError::InvalidParams {
                what: "LWE dimension for ring packing",
                reason: format!(
                    "n = {lwe_dimension} (window {window}) must fit in the ring degree N = {ring_degree}, a \
                     power of two"
                ),
            });
        }
        Ok(window)
    }

    /// Generates the keys from the CKKS secret `ckks_secret` of `ckks` and the LWE secret `lwe_secret`
    /// of the ciphertexts to pack (dimension `n <= N`, coefficients in `{-1, 0, 1}`): the switching key
    /// and the automorphism keys of [`RingPackingKey::galois_elements`]. Parameters that the lattice
    /// estimator puts below 128 bits are refused ([`RingPackingKey::security`]).
    ///
    /// Errors: [`PegasusError::Lwe`] with [`LweError::Insecure`]; [`PegasusError::Core`] with
    /// [`rnsfhe_core::Error::ContextMismatch`] for a secret of another context; as
    /// [`RingPackingKey::packing_context`] and [`RingPackingKey::galois_elements`].
    pub fn generate(
        ckks: &CkksContext,
        ckks_secret: &SecretKey,
        lwe_secret: &LweSecretKey,
        rng: &mut Csprng,
    ) -> PegasusResult<Self> {
        Self::generate_with(ckks, ckks_secret, lwe_secret, true, rng)
    }

    /// [`RingPackingKey::generate`] without the security check: the caller's explicit opt-in (tests at
    /// small degrees).
    ///
    /// Errors: as [`RingPackingKey::generate`] but never `Insecure`.
    pub fn generate_allowing_insecure(
        ckks: &CkksContext,
        ckks_secret: &SecretKey,
        lwe_secret: &LweSecretKey,
        rng: &mut Csprng,
    ) -> PegasusResult<Self> {
        Self::generate_with(ckks, ckks_secret, lwe_secret, false, rng)
    }

    fn generate_with(
        ckks: &CkksContext,
        ckks_secret: &SecretKey,
        lwe_secret: &LweSecretKey,
        check_security: bool,
        rng: &mut Csprng,
    ) -> PegasusResult<Self> {
        if ckks_secret.fingerprint() != ckks.fingerprint() {
            return Err(rnsfhe_core::Error::ContextMismatch {
                object: "CKKS secret key of ring packing",
                expected: ckks.fingerprint(),
                got: ckks_secret.fingerprint(),
            }
            .into());
        }
        let ctx = Self::packing_context(ckks)?;
        if check_security {
            let bits = Self::estimate(&ctx)?.security_bits();
            if bits < MIN_SECURITY_BITS {
                return Err(LweError::Insecure {
                    what: "ring-packing keys",
                    bits,
                }
                .into());
            }
        }
        let n = ctx.n();
        let elements = Self::galois_elements(n, lwe_secret.dimension())?
            .into_iter()
            .map(|k| ctx.galois_element(k))
            .collect::<Result<Vec<_>, _>>()?;
        let kg = KeyGenerator::from_secret_key(
            &ctx,
            SecretKey::from_coefficients(&ctx, ckks_secret.coefficients())?,
        )?;
        // s_lwe(Y) in the ring of degree N: the LWE coefficients, then zeros.
        let mut embedded = vec![0i64; n];
        embedded[..lwe_secret.dimension().get()].copy_from_slice(lwe_secret.coefficients());
        let from = SecretKey::from_coefficients(&ctx, &embedded);
        embedded.zeroize();
        let switching_key = kg.key_switch_key(&from?, rng)?;
        let galois = kg.galois_keys(&elements, rng)?;
        Self::from_keys(ckks, lwe_secret.dimension(), switching_key, galois)
    }

    /// The packing key of `ckks` for LWE dimension `lwe_dimension` from its parts, made by
    /// [`RingPackingKey::generate`] or loaded with the packing context
    /// ([`RingPackingKey::packing_context`]): the switching key and Galois keys holding (at least) the
    /// automorphisms a packing uses. Missing automorphism keys are reported when a packing needs them.
    /// `lwe_dimension` must be the dimension of the LWE secret the switching key was made for (the key
    /// does not tell: with another window the packed values are wrong). The security of keys loaded
    /// this way is not re-checked (see [`RingPackingKey::security`]).
    ///
    /// Errors: [`PegasusError::Core`] with [`rnsfhe_core::Error::ContextMismatch`] for keys of another
    /// context; as [`RingPackingKey::packing_context`] and [`RingPackingKey::galois_elements`].
    pub fn from_keys(
        ckks: &CkksContext,
        lwe_dimension: LweDimension,
        switching_key: KeySwitchKey,
        galois: GaloisKeys,
    ) -> PegasusResult<Self> {
        let ctx = Self::packing_context(ckks)?;
        let window = Self::window_of(ctx.n(), lwe_dimension)?;
        for (object, got) in [
            ("ring-packing switching key", switching_key.fingerprint()),
            ("ring-packing automorphism keys", galois.fingerprint()),
        ] {
            if got != ctx.fingerprint() {
                return Err(rnsfhe_core::Error::ContextMismatch {
                    object,
                    expected: ctx.fingerprint(),
                    got,
                }
                .into());
            }
        }
        let norm = LweSecretDistribution::from(ctx.params().secret).expected_norm_sq(ctx.n());
        let key_switch_variance = ctx
            .key_switch_noise(1, norm.round() as usize)?
            .std_dev
            .powi(2);
        Ok(Self {
            output_basis: Arc::clone(ckks.rlwe().basis_at(1)?),
            q0: ctx.chain().moduli()[0],
            ctx,
            lwe_dimension,
            window,
            switching_key,
            galois,
            key_switch_variance,
        })
    }

    /// The packing context the keys live in ([`RingPackingKey::packing_context`]).
    pub fn context(&self) -> &Arc<RlweContext> {
        &self.ctx
    }

    /// The switching key from the LWE secret (embedded in the CKKS ring) to the CKKS secret.
    pub fn switching_key(&self) -> &KeySwitchKey {
        &self.switching_key
    }

    /// The automorphism keys.
    pub fn galois_keys(&self) -> &GaloisKeys {
        &self.galois
    }

    /// The LWE dimension `n` of the ciphertexts this key packs.
    pub fn lwe_dimension(&self) -> LweDimension {
        self.lwe_dimension
    }

    /// The window `w`: `n` rounded up to a power of two (the spacing of the inputs of one key switch).
    pub fn window(&self) -> usize {
        self.window
    }

    /// The largest number of ciphertexts one packing takes: the ring degree `N`.
    pub fn capacity(&self) -> usize {
        self.ctx.n()
    }

    /// The stride [`RingPackingKey::pack`] uses for `count` ciphertexts: `min(w, N / l')` with `l'` the
    /// power of two at or above `count`, the sparsest layout the keys allow (the values then lie in the
    /// subring of degree `N / stride`).
    ///
    /// Errors: [`PegasusError::InvalidParams`] unless `1 <= count <= N`.
    pub fn default_stride(&self, count: usize) -> PegasusResult<usize> {
        self.check_count(count)?;
        Ok(self.window.min(self.ctx.n() / count.next_power_of_two()))
    }

    fn check_count(&self, count: usize) -> PegasusResult<()> {
        let n = self.ctx.n();
        if count == 0 || count > n {
            return Err(PegasusError::InvalidParams {
                what: "number of LWE ciphertexts to pack",
                reason: format!(
                    "{count} is not in [1, N = {n}]: one RLWE ciphertext of degree N holds at most N \
                     values; pack the rest into another ciphertext"
                ),
            });
        }
        Ok(())
    }

    fn check_stride(&self, count: usize, stride: usize) -> PegasusResult<()> {
        self.check_count(count)?;
        if !stride.is_power_of_two() || stride > self.window || count * stride > self.ctx.n() {
            return Err(PegasusError::InvalidParams {
                what: "ring-packing stride",
                reason: format!(
                    "{stride} must be a power of two at most the window w = {} with count * stride = \
                     {count} * {stride} <= N = {}",
                    self.window,
                    self.ctx.n()
                ),
            });
        }
        Ok(())
    }

    /// Number of key switches one packing of `count` ciphertexts at `stride` costs: one per non-empty
    /// batch of step 1, one per merge of step 2 whose even half is non-empty, `log2(stride)` for the
    /// trace (see the [module documentation](self)).
    ///
    /// Errors: as [`RingPackingKey::pack_with_stride`] for the count and stride.
    pub fn key_switch_count(&self, count: usize, stride: usize) -> PegasusResult<usize> {
        self.check_stride(count, stride)?;
        let batches = self.window / stride;
        let mut filled = batches.min(count);
        let mut switches = filled;
        let mut width = batches;
        while width > 1 {
            let half = width / 2;
            // Pairs (j, j + half) with j < filled merge (one automorphism each).
            let merged = filled.min(half);
            switches += merged;
            filled = merged;
            width = half;
        }
        Ok(switches + stride.trailing_zeros() as usize)
    }

    /// Variance of the packing error `E_i` at every packed coefficient: `V_ks (4 w^2 - 1) / 3` with
    /// `V_ks` the packing context's key-switching variance at the CKKS secret distribution's expected
    /// `||s||^2` (see the [module documentation](self)). The inputs' own errors come on top, unchanged.
    pub fn added_variance(&self) -> f64 {
        let w = self.window as f64;
        self.key_switch_variance * (4.0 * w * w - 1.0) / 3.0
    }

    /// Packs `cts` (dimension `n`, modulus `q_0` of the CKKS chain) at [`RingPackingKey::default_stride`].
    ///
    /// Errors: as [`RingPackingKey::pack_with_stride`].
    pub fn pack(&self, cts: &[LweCiphertext]) -> PegasusResult<PackedLwe> {
        self.pack_with_stride(cts, self.default_stride(cts.len())?)
    }

    /// Packs `cts` with input `i` at coefficient `i * stride` (see the [module documentation](self)).
    ///
    /// Errors: [`PegasusError::InvalidParams`] for no ciphertext, more than `N`, or a stride that is not
    /// a power of two at most the window with `count * stride <= N`; [`PegasusError::Lwe`] with
    /// [`LweError::DimensionMismatch`] / [`LweError::ModulusMismatch`] for a ciphertext of another
    /// dimension or modulus; [`PegasusError::Core`] with [`rnsfhe_core::Error::MissingGaloisKey`] for an
    /// automorphism key the packing needs and the key lacks.
    pub fn pack_with_stride(
        &self,
        cts: &[LweCiphertext],
        stride: usize,
    ) -> PegasusResult<PackedLwe> {
        active_wait(|| self.pack_with_stride_waiting(cts, stride))
    }

    /// The work of [`Self::pack_with_stride`], which runs it inside [`active_wait`] (a long
    /// sequence of short parallel sections).
    fn pack_with_stride_waiting(
        &self,
        cts: &[LweCiphertext],
        stride: usize,
    ) -> PegasusResult<PackedLwe> {
        self.check_stride(cts.len(), stride)?;
        for ct in cts {
            self.lwe_dimension
                .check_same(ct.dimension(), "ring packing")?;
            if ct.modulus().value() != self.q0.value() {
                return Err(LweError::ModulusMismatch {
                    operation: "ring packing (the CKKS chain's q_0)",
                    left: self.q0.value(),
                    right: ct.modulus().value(),
                }
                .into());
            }
        }
        let n = self.ctx.n();
        let batches = self.window / stride;
        let merge_elements: Vec<GaloisElement> = (0..batches.trailing_zeros())
            .map(|level| {
                // Merge level `level` goes from spacing w / 2^level to half of it, t: element N / t + 1.
                let t = self.window >> (level + 1);
                self.element(n / t + 1)
            })
            .collect::<PegasusResult<_>>()?;
        let log_n = n.trailing_zeros();
        let trace_elements: Vec<GaloisElement> = ((n / stride).trailing_zeros() + 1..=log_n)
            .map(|k| self.element((1 << k) + 1))
            .collect::<PegasusResult<_>>()?;

        // Inputs are multiplied by w^-1: the merges and the trace multiply by w in all.
        let inv = self
            .q0
            .shoup(self.q0.inv(self.q0.reduce(self.window as u64))?);
        let filled = batches.min(cts.len());
        let mut level: Vec<Option<RlweCiphertext<Coeff>>> = (0..batches)
            .into_par_iter()
            .map(|b| {
                if b >= filled {
                    return Ok(None);
                }
                let members = cts.iter().skip(b).step_by(batches);
                self.switch_batch(members, inv).map(Some)
            })
            .collect::<PegasusResult<_>>()?;
        let mut spacing = self.window;
        for element in merge_elements {
            let t = spacing / 2;
            let half = level.len() / 2;
            let (even, odd) = level.split_at(half);
            level = even
                .par_iter()
                .zip(odd)
                .map(|(e, o)| self.merge(e.as_ref(), o.as_ref(), t, element))
                .collect::<PegasusResult<_>>()?;
            spacing = t;
        }
        let Some(Some(mut ct)) = level.pop() else {
            // Batch 0 holds input 0, and the merges keep it.
            return Err(PegasusError::InvalidParams {
                what: "ring packing",
                reason: "no ciphertext left after the merges".into(),
            });
        };
        for element in trace_elements {
            let rotated = self.ctx.apply_galois_coeff(&ct, element, &self.galois)?;
            ct = ct.add(&rotated)?;
        }
        let parts = ct
            .parts
            .into_iter()
            .map(|mut p| {
                p.rebase(&self.output_basis)?;
                Ok(p)
            })
            .collect::<PegasusResult<Vec<_>>>()?;
        Ok(PackedLwe {
            ciphertext: RlweCiphertext::new(parts)?,
            count: cts.len(),
            stride,
        })
    }

    /// The Galois element `value` of the packing ring, after checking that the key has it.
    fn element(&self, value: usize) -> PegasusResult<GaloisElement> {
        let element = self.ctx.galois_element(value)?;
        if self.galois.get(value).is_none() {
            return Err(rnsfhe_core::Error::MissingGaloisKey {
                element: value,
                step: None,
                available: self.galois.elements(),
            }
            .into());
        }
        Ok(element)
    }

    /// Step 1 for the inputs of one batch (slot `k` at coefficient `k w`): the mask polynomial `c` and
    /// the body `beta`, both times `w^-1`, and one gadget product of `c` with the switching key.
    fn switch_batch<'a>(
        &self,
        members: impl Iterator<Item = &'a LweCiphertext>,
        inv: rnsfhe_math::ShoupConstant,
    ) -> PegasusResult<RlweCiphertext<Coeff>> {
        let n = self.ctx.n();
        let q = &self.q0;
        let mut mask = vec![0u64; n];
        let mut body = vec![0u64; n];
        for (k, ct) in members.enumerate() {
            let p = k * self.window;
            body[p] = q.mul_shoup(ct.b(), inv);
            // Coefficient p - j holds a[j]; for p = 0 the window wraps: Y^(-j) = -Y^(N - j).
            let (inside, wrapped) = ct.a().split_at(ct.a().len().min(p + 1));
            for (j, &a) in inside.iter().enumerate() {
                mask[p - j] = q.mul_shoup(a, inv);
            }
            for (j, &a) in wrapped.iter().enumerate() {
                mask[n - 1 - j] = q.neg(q.mul_shoup(a, inv));
            }
        }
        let basis = self.ctx.basis_at(1)?;
        let mask = Poly::<Coeff>::from_data(basis, mask)?;
        let (mut u0, u1) = self
            .ctx
            .gadget_product_sum(&[(&mask, &self.switching_key)])?;
        u0.add_assign(&Poly::from_data(basis, body)?)?;
        Ok(RlweCiphertext::new(vec![u0, u1])?)
    }

    /// Step 2 for one pair: `(f_e + Y^t f_o) + sigma(f_e - Y^t f_o)`, an absent half taken as zero.
    fn merge(
        &self,
        even: Option<&RlweCiphertext<Coeff>>,
        odd: Option<&RlweCiphertext<Coeff>>,
        t: usize,
        element: GaloisElement,
    ) -> PegasusResult<Option<RlweCiphertext<Coeff>>> {
        let shifted = odd.map(|o| RlweCiphertext {
            parts: o.parts.iter().map(|p| p.mul_monomial(t)).collect(),
        });
        let (sum, difference) = match (even, shifted) {
            (None, None) => return Ok(None),
            (Some(e), None) => (e.clone(), e.clone()),
            (None, Some(o)) => {
                let negated = RlweCiphertext {
                    parts: o
                        .parts
                        .iter()
                        .map(|p| {
                            let mut p = p.clone();
                            p.neg_assign();
                            p
                        })
                        .collect(),
                };
                (o, negated)
            }
            (Some(e), Some(o)) => {
                let mut difference = e.clone();
                for (d, x) in difference.parts.iter_mut().zip(&o.parts) {
                    d.sub_assign(x)?;
                }
                (e.add(&o)?, difference)
            }
        };
        let rotated = self
            .ctx
            .apply_galois_coeff(&difference, element, &self.galois)?;
        Ok(Some(sum.add(&rotated)?))
    }
}
