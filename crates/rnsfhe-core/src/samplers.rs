//! Samplers of RLWE polynomials over an RNS basis (built on the scalar samplers of `rnsfhe_math::sampling`):
//! uniform (public `a` parts), discrete Gaussian (errors) and uniform ternary (encryption randomness).
//! Shared by every scheme; signed samples are wiped after use since errors and randomness are secret.

use std::sync::Arc;

use rnsfhe_math::sampling::{
    fill_ternary, fill_uniform_mod, Csprng, DiscreteGaussian, WideGaussian,
};
use rnsfhe_math::{Modulus, ShoupConstant};
use rnsfhe_ring::{Coeff, Ntt, Poly, RnsBasis};
use zeroize::Zeroize;

use crate::context::RlweContext;
use crate::error::Result;
use crate::keys::SecretPoly;

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
    sample_error_from(ctx.gaussian(), basis, rng)
}

/// An error polynomial over `basis` drawn from `noise`, in coefficient form: for keys whose error width
/// is not the context's (PEGASUS Table IV gives the LWE switching and blind-rotation keys their own
/// `sigma_ks` and `sigma_lut`). The sampled integers are wiped after reduction.
pub fn sample_error_from(
    noise: &DiscreteGaussian,
    basis: &Arc<RnsBasis>,
    rng: &mut Csprng,
) -> Result<Poly<Coeff>> {
    let mut e = noise.sample_vec(rng, basis.degree());
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

/// A polynomial of independent [`WideGaussian`] coefficients over `basis`, in NTT form: the flooding noise
/// of a decryption to be shared. Each coefficient is sampled once as an integer and reduced modulo every
/// prime (branch-free on its sign), so the noise is the same integer polynomial in every limb. The noise
/// is secret (whoever knows it can subtract it), hence the [`SecretPoly`] and the wiped integers.
pub fn sample_wide_gaussian(
    g: &WideGaussian,
    basis: &Arc<RnsBasis>,
    rng: &mut Csprng,
) -> Result<SecretPoly> {
    let n = basis.degree();
    let mut e = vec![0i64; n];
    g.fill(rng, &mut e);
    let mut data = vec![0u64; basis.len() * n];
    for (limb, m) in data.chunks_exact_mut(n).zip(basis.moduli()) {
        let one = m.shoup(1);
        for (r, &x) in limb.iter_mut().zip(&e) {
            *r = reduce_signed_branch_free(m, one, x);
        }
    }
    e.zeroize();
    let p = Poly::from_data(basis, data);
    Ok(SecretPoly::new(p?.into_ntt()))
}

/// `x mod q` in `[0, q)` for any `x`, with no branch on `x`; `one` is `m.shoup(1)`.
///
/// [`Modulus::reduce_i64`] first tests `|x| < q`, which never varies for the small errors it was written
/// for but would reveal the magnitude of a flooding sample (whose tail can exceed a prime), and its
/// Barrett path ends in conditional subtractions that LLVM compiles to jumps (seen in the disassembly of
/// this function's first version). Here the magnitude is reduced to `[0, 2q)` by Shoup's lazy
/// multiplication by 1 (valid for any word), the last subtraction and the sign are applied by masks, and
/// the masks go through [`std::hint::black_box`] so that the optimizer cannot turn them back into jumps.
fn reduce_signed_branch_free(m: &Modulus, one: ShoupConstant, x: i64) -> u64 {
    let q = m.value();
    let r = m.mul_shoup_lazy(x.unsigned_abs(), one);
    let (d, borrow) = r.overflowing_sub(q);
    let keep = std::hint::black_box(u64::from(borrow)).wrapping_neg();
    let r = (r & keep) | (d & !keep);
    // -r mod q: q - r, or 0 when r = 0 (then q - r = q, masked to 0).
    let nonzero = std::hint::black_box(u64::from(r != 0)).wrapping_neg();
    let minus = (q - r) & nonzero;
    let negative = std::hint::black_box((x >> 63) as u64);
    (minus & negative) | (r & !negative)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use rnsfhe_math::primes::ntt_primes_of_bits;

    #[test]
    fn branch_free_signed_reduction_matches_reduce_i64() {
        let mut moduli: Vec<Modulus> = [(20u32, 1usize), (31, 1), (33, 1), (40, 1), (61, 1)]
            .iter()
            .map(|&(bits, c)| {
                Modulus::new(ntt_primes_of_bits(bits, 64, c, &[]).unwrap()[0]).unwrap()
            })
            .collect();
        moduli.push(Modulus::new(3).unwrap());
        let limit = (1i64 << 62) - 1;
        let mut values = vec![
            0i64,
            1,
            -1,
            2,
            -2,
            limit,
            -limit,
            1 << 40,
            -(1 << 40),
            i64::MAX,
            i64::MIN,
            i64::MIN + 1,
        ];
        let mut rng = Csprng::insecure_from_seed_for_tests([9; 32]);
        let g = WideGaussian::new(2f64.powi(57)).unwrap();
        values.extend((0..2000).map(|_| g.sample(&mut rng)));
        for m in &moduli {
            values.push(m.value() as i64);
            values.push(-(m.value() as i64));
            for &x in &values {
                assert_eq!(
                    reduce_signed_branch_free(m, m.shoup(1), x),
                    m.reduce_i64(x),
                    "{x} mod {}",
                    m.value()
                );
            }
        }
    }
}
