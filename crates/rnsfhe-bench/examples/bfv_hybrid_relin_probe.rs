//! How BFV relinearization would cost through the hybrid gadget instead of HPS CRT digits: a measurement
//! for planning, not a feature. BFV relinearizes with CRT digits (HPS Sections 3.3 and 4.5): one key row
//! per limb of `Q`, `k^2` digit transforms, 100 MB of key per call at depth 20. The core's hybrid gadget
//! (Han-Ki Section 2.4) switches a coefficient-form input by ModUp, one multiply-accumulate and ModDown
//! (`RlweContext::gadget_product_sum`), with `dnum` key rows over `Q ∪ P` for special primes `P`. This
//! probe builds the BFV parameters of `BfvParams::generate(65537, depth)`, an RLWE context over the same
//! `Q` with `specials` 56-bit special primes and `dnum` digits, and times the key switch of the third part
//! of a product both ways, interleaved (median of 15 calls, two rounds), on the threads of
//! `RAYON_NUM_THREADS`.
//!
//! ```text
//! cargo run --release -p rnsfhe-bench --example bfv_hybrid_relin_probe -- 20 2 7
//! RAYON_NUM_THREADS=2 cargo run --release -p rnsfhe-bench --example bfv_hybrid_relin_probe -- 30 10 2
//! ```
//!
//! Arguments: depth (default 20), special primes (2), dnum (7). The special primes are not counted by any
//! security check here: at depth 20 the HE Standard bound leaves 111 bits beside `log Q = 770` at
//! `N = 2^15` (two primes), at depth 30 647 bits beside 1100 at `N = 2^16` (ten primes).

use std::time::Instant;

use anyhow::{bail, Context, Result};
use rnsfhe_bfv::{BfvContext, BfvParams, Encryptor, Evaluator, KeyGenerator as BfvKeyGenerator};
use rnsfhe_core::context::SecretDistribution;
use rnsfhe_core::{KeyGenerator, RlweContext, RlweParams};
use rnsfhe_math::sampling::Csprng;
use rnsfhe_ring::{Coeff, ConversionMode, Poly};

/// The median of `v` (not empty).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Argument `i` of the command line, or `default`.
fn arg(i: usize, default: usize) -> Result<usize> {
    std::env::args().nth(i).map_or(Ok(default), |s| {
        s.parse().with_context(|| format!("argument {i}: {s:?}"))
    })
}

fn main() -> Result<()> {
    let (depth, specials, dnum) = (arg(1, 20)?, arg(2, 2)?, arg(3, 7)?);
    if specials == 0 || dnum == 0 {
        bail!("the hybrid gadget needs at least one special prime and one digit");
    }
    let params = BfvParams::generate(65537, depth)?;
    let ctx = BfvContext::new(params.clone())?;
    // Insecure, fixed randomness: a timing probe.
    let mut rng = Csprng::insecure_from_seed_for_tests([1; 32]);
    let kg = BfvKeyGenerator::new(&ctx, &mut rng)?;
    let rk = kg.relin_key(&mut rng)?;
    let enc = Encryptor::with_public_key(&ctx, &kg.public_key(&mut rng)?)?;
    let x = enc.encrypt_zero(&mut rng)?;
    let ev = Evaluator::new(&ctx);
    let product = ev.multiply_no_relin(&x, &x)?;

    let mut taken = params.q_moduli.clone();
    taken.extend(&params.p_moduli);
    let special =
        rnsfhe_math::primes::ntt_primes_of_bits(56, 2 * ctx.n() as u64, specials, &taken)?;
    let hybrid = RlweContext::new(RlweParams {
        log_n: params.log_n,
        q_moduli: params.q_moduli.clone(),
        p_moduli: special,
        dnum,
        conversion: ConversionMode::ExactFloat,
        secret: SecretDistribution::Ternary,
        sigma: params.sigma,
    })?;
    let hybrid_rk = KeyGenerator::new(&hybrid, &mut rng)?.relin_key(&mut rng)?;
    let c2: Poly<Coeff> = Poly::from_data(hybrid.chain(), product.parts()[2].data().to_vec())?;

    for round in 0..2 {
        let (mut crt, mut hyb) = (Vec::new(), Vec::new());
        for _ in 0..15 {
            let t = Instant::now();
            std::hint::black_box(ev.relinearize(&product, &rk)?);
            crt.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            std::hint::black_box(hybrid.gadget_product_sum(&[(&c2, hybrid_rk.key())])?);
            hyb.push(t.elapsed().as_secs_f64() * 1e3);
        }
        println!(
            "depth {depth}, round {round}, {} thread(s): CRT relinearization {:.2} ms ({} key rows of {} limbs); \
             hybrid (dnum {dnum}, {specials} special primes) {:.2} ms ({} key rows of {} limbs)",
            rayon::current_num_threads(),
            median(crt),
            rk.components().len(),
            params.q_moduli.len(),
            median(hyb),
            hybrid_rk.key().rows().len(),
            params.q_moduli.len() + specials,
        );
    }
    Ok(())
}
