//! Keys for BFV in the HPS form (Section 4.1 "Key generation").
//!
//! * The secret key `s` (uniform ternary) and the public key `pk = (b, a) = ([-a s + e]_Q, a)` are those of
//!   `rnsfhe-core` ([`SecretKey`], [`PublicKey`]), generated over the context's [`BfvContext::rlwe`].
//! * The relinearization key is specific to HPS: **no special primes** (Sections 3.3 and 4.1). For every
//!   residue `i` and digit `j` of the decomposition (one digit per residue for plain CRT), with
//!   `g_{i,j} = (Q/q_i)[(Q/q_i)^-1]_{q_i} w^j` (residues: `w^j mod q_i` at limb `i`, 0 elsewhere),
//!   `alpha_{i,j} <- U(R_Q)`, `e_{i,j} <- chi_e`:
//!
//! ```text
//! beta_{i,j} = [g_{i,j} s^2 - alpha_{i,j} s + e_{i,j}]_Q,      W_{i,j} = (beta_{i,j}, alpha_{i,j}).
//! ```
//!
//! HPS Section 4.1 writes `beta_i = [qtilde_i q_i^* s^2 - alpha_i s + e_i]_q`: the `j = 0` case.

use std::sync::Arc;

pub(crate) use rnsfhe_core::keys::SecretPoly;
use rnsfhe_core::samplers::sample_uniform;
pub use rnsfhe_core::{PublicKey, SecretKey};
use rnsfhe_math::sampling::Csprng;
use rnsfhe_ring::{Coeff, Ntt, Poly};

use crate::error::BfvResult;
use crate::params::BfvContext;

/// `s` in NTT form over `Q`, from the key's signed coefficients (zeroized on drop).
pub(crate) fn secret_ntt(ctx: &BfvContext, sk: &SecretKey) -> BfvResult<SecretPoly> {
    ctx.check_rlwe_fingerprint(sk.fingerprint(), "secret key")?;
    Ok(SecretPoly::new(
        Poly::<Coeff>::from_i64(ctx.q_basis(), sk.coefficients())?.into_ntt(),
    ))
}

/// A discrete Gaussian error polynomial `e <- chi_e` over `Q` in coefficient form.
pub(crate) fn sample_error(ctx: &BfvContext, rng: &mut Csprng) -> BfvResult<Poly<Coeff>> {
    Ok(rnsfhe_core::samplers::sample_error_coeff(
        ctx.rlwe(),
        ctx.q_basis(),
        rng,
    )?)
}

/// The HPS relinearization key (Sections 3.3 and 4.1): one pair `W_{i,j} = (beta_{i,j}, alpha_{i,j})` in
/// NTT form over `Q` per residue `i` and digit `j`, ordered `i * digits + j`.
#[derive(Clone, Debug, PartialEq)]
pub struct RelinKey {
    pub(crate) fingerprint: u64,
    pub(crate) components: Vec<(Poly<Ntt>, Poly<Ntt>)>,
}

impl RelinKey {
    /// The pairs `(beta_{i,j}, alpha_{i,j})`.
    pub fn components(&self) -> &[(Poly<Ntt>, Poly<Ntt>)] {
        &self.components
    }

    /// Fingerprint of the BFV context the key belongs to.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }
}

/// Samples the keys of a [`BfvContext`] from one secret key (HPS Section 4.1 "Key generation").
#[derive(Debug)]
pub struct KeyGenerator {
    ctx: Arc<BfvContext>,
    inner: rnsfhe_core::KeyGenerator,
}

impl KeyGenerator {
    /// Samples a fresh uniform ternary secret key `s <- chi_k`.
    ///
    /// Errors: sampler errors ([`crate::BfvError::Core`]).
    pub fn new(ctx: &Arc<BfvContext>, rng: &mut Csprng) -> BfvResult<Self> {
        Ok(Self {
            ctx: Arc::clone(ctx),
            inner: rnsfhe_core::KeyGenerator::new(ctx.rlwe(), rng)?,
        })
    }

    /// A generator for an existing secret key.
    ///
    /// Errors: [`crate::BfvError::Core`] (context mismatch) if the key belongs to other parameters.
    pub fn from_secret_key(ctx: &Arc<BfvContext>, sk: SecretKey) -> BfvResult<Self> {
        Ok(Self {
            ctx: Arc::clone(ctx),
            inner: rnsfhe_core::KeyGenerator::from_secret_key(ctx.rlwe(), sk)?,
        })
    }

    /// The context.
    pub fn context(&self) -> &Arc<BfvContext> {
        &self.ctx
    }

    /// The secret key.
    pub fn secret_key(&self) -> &SecretKey {
        self.inner.secret_key()
    }

    /// The public key `pk = ([-a s + e]_Q, a)` (HPS Section 4.1).
    ///
    /// Errors: sampler errors.
    pub fn public_key(&self, rng: &mut Csprng) -> BfvResult<PublicKey> {
        Ok(self.inner.public_key(rng)?)
    }

    /// The HPS relinearization key: `beta_{i,j} = [g_{i,j} s^2 - alpha_{i,j} s + e_{i,j}]_Q` for every
    /// residue `i` and digit `j` (Sections 3.3 and 4.1; see the module documentation).
    ///
    /// Errors: sampler errors.
    pub fn relin_key(&self, rng: &mut Csprng) -> BfvResult<RelinKey> {
        let ctx = &self.ctx;
        let q = ctx.q_basis();
        let s = secret_ntt(ctx, self.secret_key())?;
        let s2 = SecretPoly::new(s.get().mul(s.get())?);
        let digits = ctx.relin_digits();
        let k = q.len();
        let mut components = Vec::with_capacity(ctx.relin_components());
        for i in 0..k {
            for j in 0..digits.count() {
                let g = digits.gadget_residues(i, j, k)?;
                let alpha = sample_uniform(q, rng)?;
                let e = SecretPoly::new(sample_error(ctx, rng)?.into_ntt());
                let mut beta = e.get().clone();
                let a_s = SecretPoly::new(alpha.mul(s.get())?);
                beta.sub_assign(a_s.get())?;
                let mut g_s2 = s2.get().clone();
                g_s2.mul_scalars_assign(&g)?;
                let g_s2 = SecretPoly::new(g_s2);
                beta.add_assign(g_s2.get())?;
                components.push((beta, alpha));
            }
        }
        Ok(RelinKey {
            fingerprint: ctx.fingerprint(),
            components,
        })
    }
}
