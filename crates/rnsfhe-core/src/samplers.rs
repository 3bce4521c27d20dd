//! Samplers of RLWE polynomials over an RNS basis (built on the scalar samplers of `rnsfhe_math::sampling`):
//! uniform (public `a` parts), discrete Gaussian (errors) and uniform ternary (encryption randomness).
//! Shared by every scheme; signed samples are wiped after use since errors and randomness are secret.
//!
//! The secret samplers (errors, ternary randomness, flooding noise) run on the pool's threads: the
//! coefficients are drawn in chunks of [`SAMPLE_CHUNK`], chunk `i` from stream `i` of a [`Substreams`]
//! drawn from the caller's generator, and reduced modulo the limbs in parallel. The chunking is fixed, so
//! a seeded generator gives the same polynomial on any number of threads; each chunk runs the scalar
//! sampler unchanged, so the distribution is the scalar sampler's. The public expansion
//! ([`expand_uniform`]) stays one serial ChaCha20 stream: it is part of the wire format.

use std::sync::Arc;

use rnsfhe_math::sampling::{
    fill_ternary, fill_uniform_mod, Csprng, DiscreteGaussian, Substreams, WideGaussian,
};
use rnsfhe_math::simd::write_uninit;
use rnsfhe_math::{Modulus, ShoupConstant};
use rnsfhe_ring::{parallel, Coeff, Ntt, Poly, RnsBasis};
use zeroize::Zeroize;

use crate::context::RlweContext;
use crate::error::Result;
use crate::keys::SecretPoly;

/// Coefficients per sampling chunk (each from its own stream): at `N = 2^15` and `2^16`, 8 and 16
/// chunks, enough to balance a few threads; the chunk size never depends on the thread count, so
/// neither does the output.
pub const SAMPLE_CHUNK: usize = 1 << 12;

/// Fills `out` chunk by chunk in parallel, chunk `i` (of [`SAMPLE_CHUNK`] values) by `fill` from stream
/// `i` of a [`Substreams`] drawn from `rng`.
fn fill_in_chunks(
    rng: &mut Csprng,
    out: &mut [i64],
    fill: &(impl Fn(&mut Csprng, &mut [i64]) + Sync),
) {
    let streams = Substreams::new(rng);
    parallel::for_each_chunk(out, SAMPLE_CHUNK, &|i, chunk| {
        fill(&mut streams.stream(i as u64), chunk)
    });
}

/// The polynomial over `basis` whose limb `i` holds `residue(i, c)` for every coefficient `c` of `coeffs`
/// (the residues of one integer vector modulo `q_i`), limbs on the pool's threads: [`Poly::from_i64`],
/// whose limbs run one after the other, took about a tenth of a public-key encryption on one thread.
fn residues_in_parallel(
    basis: &Arc<RnsBasis>,
    coeffs: &[i64],
    residue: &(impl Fn(usize, i64) -> u64 + Sync),
) -> Result<Poly<Coeff>> {
    // Every word written once (no zero-filled buffer first: a pass of its own on every encryption).
    let data = parallel::from_chunks(basis.len() * basis.degree(), basis.degree(), &|i, limb| {
        write_uninit(limb, coeffs.iter().map(|&c| residue(i, c)))
    });
    Ok(Poly::from_data(basis, data)?)
}

/// [`residues_in_parallel`] of small signed integers ([`Modulus::reduce_i64`], as [`Poly::from_i64`]).
fn small_residues(basis: &Arc<RnsBasis>, coeffs: &[i64]) -> Result<Poly<Coeff>> {
    let moduli = basis.moduli();
    residues_in_parallel(basis, coeffs, &|i, c| moduli[i].reduce_i64(c))
}

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
    let mut e = vec![0i64; basis.degree()];
    fill_in_chunks(rng, &mut e, &|r, chunk| noise.fill(r, chunk));
    let p = small_residues(basis, &e);
    e.zeroize();
    p
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
    fill_in_chunks(rng, &mut v, &|r, chunk| fill_ternary(r, chunk));
    let p = small_residues(basis, &v);
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
    let mut e = vec![0i64; basis.degree()];
    fill_in_chunks(rng, &mut e, &|r, chunk| g.fill(r, chunk));
    let moduli = basis.moduli();
    let ones: Vec<ShoupConstant> = moduli.iter().map(|m| m.shoup(1)).collect();
    let p = residues_in_parallel(basis, &e, &|i, x| {
        reduce_signed_branch_free(&moduli[i], ones[i], x)
    });
    e.zeroize();
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

    /// The signed values of limb 0 (centered modulo `q_0`).
    fn centered(p: &Poly<Coeff>) -> Vec<i64> {
        let q = p.basis().moduli()[0].value();
        p.data()[..p.degree()]
            .iter()
            .map(|&x| {
                if x > q / 2 {
                    x as i64 - q as i64
                } else {
                    x as i64
                }
            })
            .collect()
    }

    #[test]
    fn chunked_samplers_keep_the_distributions_and_residues() {
        // N = 2^14: four chunks, each from its own stream.
        let n = 1 << 14;
        let primes = ntt_primes_of_bits(40, 2 * n as u64, 2, &[]).unwrap();
        let basis = RnsBasis::new(n, &primes).unwrap();
        let noise = DiscreteGaussian::with_sigma(3.2).unwrap();
        let mut rng = Csprng::insecure_from_seed_for_tests([3; 32]);
        let e = sample_error_from(&noise, &basis, &mut rng).unwrap();
        // Every limb holds the residues of the same integers.
        let q1 = basis.moduli()[1].value();
        let signed = centered(&e);
        for (x, &y) in signed.iter().zip(&e.data()[n..]) {
            assert_eq!(x.rem_euclid(q1 as i64) as u64, y);
        }
        let mean = signed.iter().sum::<i64>() as f64 / n as f64;
        let var = signed
            .iter()
            .map(|&x| (x as f64 - mean).powi(2))
            .sum::<f64>()
            / n as f64;
        // Standard errors: 3.2 / 128 = 0.025 for the mean, about 1.1 % for the variance.
        assert!(mean.abs() < 0.15, "mean {mean}");
        assert!((var / (3.2 * 3.2) - 1.0).abs() < 0.06, "variance {var}");
        assert!(signed.iter().all(|x| x.abs() <= noise.bound()));
        // The chunks come from distinct streams: no chunk repeats another.
        let chunks: Vec<&[i64]> = signed.chunks(SAMPLE_CHUNK).collect();
        assert_eq!(chunks.len(), 4);
        for i in 0..4 {
            for j in i + 1..4 {
                assert_ne!(chunks[i], chunks[j]);
            }
        }
        // Ternary randomness: a third of each value (standard error about 0.4 % of n).
        let v = sample_ternary_poly(&basis, &mut rng).unwrap().into_coeff();
        let t = centered(&v);
        for value in -1..=1 {
            let share = t.iter().filter(|&&x| x == value).count() as f64 / n as f64;
            assert!((share - 1.0 / 3.0).abs() < 0.02, "{value}: {share}");
        }
        assert!(t.iter().all(|x| x.abs() <= 1));
    }

    #[test]
    fn chunked_samplers_do_not_depend_on_the_thread_count() {
        let n = 1 << 14;
        let primes = ntt_primes_of_bits(40, 2 * n as u64, 2, &[]).unwrap();
        let basis = RnsBasis::new(n, &primes).unwrap();
        let noise = DiscreteGaussian::with_sigma(3.2).unwrap();
        let wide = WideGaussian::new(2f64.powi(30)).unwrap();
        let draw = || {
            let mut rng = Csprng::insecure_from_seed_for_tests([4; 32]);
            (
                sample_error_from(&noise, &basis, &mut rng).unwrap(),
                sample_ternary_poly(&basis, &mut rng).unwrap(),
                sample_wide_gaussian(&wide, &basis, &mut rng).unwrap(),
            )
        };
        let reference = draw();
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let got = pool.install(draw);
            assert_eq!(got.0, reference.0, "{threads} threads");
            assert_eq!(got.1, reference.1, "{threads} threads");
            assert_eq!(got.2.get(), reference.2.get(), "{threads} threads");
        }
    }

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
