//! `rnsfhe demo`: encrypts two vectors with CKKS, computes a small circuit on the ciphertexts, decrypts and
//! prints the values, their precision and the time of every step; then shows the layers below (the prime
//! chain the context chose, the NTT engine).

use std::time::Instant;

use rand::{Rng, SeedableRng};
use rnsfhe_ckks::{
    CkksContext, CkksDecryptor, CkksEncryptor, Complex64, Csprng, Evaluator, KeyGenerator,
    PrecisionStats, Preset,
};
use rnsfhe_math::NttPlan;

/// The demo's parameter set: 128-bit secure, N = 2^13, small enough to run in a second.
const PRESET: Preset = Preset::Rec128N13;

/// Runs `f`, prints its duration under `label`, returns its result.
fn timed<T>(label: &str, f: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
    let start = Instant::now();
    let out = f()?;
    println!(
        "  {label:<44} {:>9.2} ms",
        start.elapsed().as_secs_f64() * 1e3
    );
    Ok(out)
}

fn show(label: &str, got: &[Complex64], expected: &[f64]) -> anyhow::Result<()> {
    let head: Vec<String> = got
        .iter()
        .take(4)
        .map(|z| format!("{:+.6}", z.re))
        .collect();
    let want: Vec<String> = expected
        .iter()
        .take(4)
        .map(|v| format!("{v:+.6}"))
        .collect();
    let expected_c: Vec<Complex64> = expected.iter().map(|&v| Complex64::new(v, 0.0)).collect();
    let stats = PrecisionStats::compare(&expected_c, &got[..expected.len()])?;
    println!("  {label}");
    println!("    decrypted: [{}, ...]", head.join(", "));
    println!("    expected:  [{}, ...]", want.join(", "));
    println!(
        "    precision: {:.1} bits min, {:.1} bits median over {} slots",
        stats.real.min, stats.real.median, stats.slots
    );
    Ok(())
}

/// Runs the demo.
pub fn run() -> anyhow::Result<()> {
    println!("# rnsfhe demo: computing on encrypted vectors with CKKS\n");
    let ctx = timed("context (prime search, NTT tables)", || {
        Ok(CkksContext::new(PRESET.params())?)
    })?;
    let p = ctx.params();
    println!(
        "  preset {PRESET:?}: N = {}, {} slots, log Q = {:.1}, log QP = {:.1}, depth {}, scale 2^{}, security: {}\n",
        ctx.n(),
        ctx.max_slots(),
        ctx.log_q(),
        ctx.log_qp(),
        p.levels,
        p.log_scale,
        ctx.security()
    );

    let mut rng = Csprng::from_os()?;
    let slots = ctx.max_slots();
    let keys = timed("keys (secret, public, relin, rotations 1..)", || {
        let kg = KeyGenerator::new(&ctx, &mut rng)?;
        Ok(kg.generate_all(&KeyGenerator::power_of_two_steps(slots), false, &mut rng)?)
    })?;
    let encryptor = CkksEncryptor::with_public_key(&ctx, &keys.public)?;
    let decryptor = CkksDecryptor::new(&ctx, &keys.secret)?;
    let eval = Evaluator::new(&ctx)
        .with_relin_key(keys.relin.clone())?
        .with_galois_keys(keys.galois.clone())?;

    // The data: public here so that the demo can check the results.
    let mut data = rand::rngs::StdRng::seed_from_u64(7);
    let x: Vec<f64> = (0..slots).map(|_| data.gen_range(-1.0..1.0)).collect();
    let y: Vec<f64> = (0..slots).map(|_| data.gen_range(-1.0..1.0)).collect();
    let cx = timed("encrypt x (4096 reals)", || {
        Ok(encryptor.encrypt(&x[..], &mut rng)?)
    })?;
    let cy = timed("encrypt y", || Ok(encryptor.encrypt(&y[..], &mut rng)?))?;

    // x * y + 0.5 x, then the square of that, then a rotation and the mean of x.
    let xy = timed("x * y (relinearize, rescale)", || {
        Ok(eval.multiply_rescale(&cx, &cy)?)
    })?;
    let half_x = timed("0.5 * x (rescale)", || {
        Ok(eval.rescale(&eval.multiply_real(&cx, 0.5)?)?)
    })?;
    let f = timed("f = x * y + 0.5 x", || Ok(eval.add(&xy, &half_x)?))?;
    let f2 = timed("f^2 (relinearize, rescale)", || {
        Ok(eval.multiply_rescale(&f, &f)?)
    })?;
    let rot = timed("rotate x left by 1", || Ok(eval.rotate(&cx, 1)?))?;
    let mean = timed("mean of x (log2(slots) rotations)", || Ok(eval.mean(&cx)?))?;
    println!();

    let fx: Vec<f64> = x.iter().zip(&y).map(|(a, b)| a * b + 0.5 * a).collect();
    let f2x: Vec<f64> = fx.iter().map(|v| v * v).collect();
    let rotx: Vec<f64> = (0..slots).map(|i| x[(i + 1) % slots]).collect();
    let mean_x = vec![x.iter().sum::<f64>() / slots as f64; slots];
    show(
        "f = x * y + 0.5 x",
        &timed("decrypt f", || Ok(decryptor.decrypt(&f)?))?,
        &fx,
    )?;
    show("f^2", &decryptor.decrypt(&f2)?, &f2x)?;
    show("x rotated by 1", &decryptor.decrypt(&rot)?, &rotx)?;
    show("mean(x) in every slot", &decryptor.decrypt(&mean)?, &mean_x)?;
    println!(
        "  levels left: f^2 at level {} of {}",
        f2.level(),
        ctx.max_level()
    );

    println!("\n# Under the hood\n");
    println!("  ciphertext primes q_i: {:?}", ctx.q_moduli());
    println!("  special primes p_i:    {:?}", ctx.p_moduli());
    let plan = NttPlan::new(ctx.n(), ctx.q_moduli()[0])?;
    println!(
        "  NTT engine: tfhe-ntt, AVX-512 IFMA path for q_0 ({} bits): {}",
        64 - ctx.q_moduli()[0].leading_zeros(),
        plan.uses_ifma()
    );
    println!("\nMore: `rnsfhe params`, `rnsfhe bench ckks-table1`, `rnsfhe bench ntt`, `rnsfhe bench conversion`.");
    Ok(())
}
