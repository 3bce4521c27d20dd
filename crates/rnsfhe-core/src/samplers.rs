//! Samplers of RLWE polynomials over an RNS basis (built on the scalar samplers of `rnsfhe_math::sampling`):
//! uniform (public `a` parts), discrete Gaussian (errors) and uniform ternary (encryption randomness).
//! Shared by every scheme; signed samples are wiped after use since errors and randomness are secret.

use std::sync::Arc;

use rnsfhe_math::sampling::{fill_ternary, fill_uniform_mod, Csprng};
use rnsfhe_ring::{Coeff, Ntt, Poly, RnsBasis};
use zeroize::Zeroize;

use crate::context::RlweContext;
use crate::error::Result;

/// A uniform polynomial over `basis`, sampled directly in NTT form (the NTT is a bijection, so a uniform
/// vector of evaluations is a uniform polynomial).
pub fn sample_uniform(basis: &Arc<RnsBasis>, rng: &mut Csprng) -> Result<Poly<Ntt>> {
    let n = basis.degree();
    let mut data = vec![0u64; basis.len() * n];
    for (limb, m) in data.chunks_exact_mut(n).zip(basis.moduli()) {
        fill_uniform_mod(rng, m, limb);
    }
    Ok(Poly::from_data(basis, data)?)
}

/// The uniform polynomial over `basis` (NTT form) drawn from `public`, a generator expanding a public
/// seed ([`Csprng::from_public_seed`]): the `a` parts of keys and symmetric ciphertexts, so that they can be
/// stored and sent as their 32-byte seed. The expansion is part of the wire format (limb by limb,
/// [`fill_uniform_mod`] rejection sampling on the ChaCha20 stream): changing it breaks every stored key.
pub fn expand_uniform(basis: &Arc<RnsBasis>, public: &mut Csprng) -> Result<Poly<Ntt>> {
    sample_uniform(basis, public)
}

/// A discrete Gaussian error polynomial over `basis` with the context's `sigma`, in coefficient form
/// (RNS-CKKS `chi_err`, HPS `chi_e`).
pub fn sample_error_coeff(
    ctx: &RlweContext,
    basis: &Arc<RnsBasis>,
    rng: &mut Csprng,
) -> Result<Poly<Coeff>> {
    let mut e = ctx.gaussian().sample_vec(rng, basis.degree());
    let p = Poly::from_i64(basis, &e);
    e.zeroize();
    Ok(p?)
}

/// [`sample_error_coeff`] in NTT form.
pub fn sample_error(
    ctx: &RlweContext,
    basis: &Arc<RnsBasis>,
    rng: &mut Csprng,
) -> Result<Poly<Ntt>> {
    Ok(sample_error_coeff(ctx, basis, rng)?.into_ntt())
}

/// A uniform ternary polynomial over `basis` in NTT form (the encryption randomness `v`).
pub fn sample_ternary_poly(basis: &Arc<RnsBasis>, rng: &mut Csprng) -> Result<Poly<Ntt>> {
    let mut v = vec![0i64; basis.degree()];
    fill_ternary(rng, &mut v);
    let p = Poly::from_i64(basis, &v);
    v.zeroize();
    Ok(p?.into_ntt())
}
