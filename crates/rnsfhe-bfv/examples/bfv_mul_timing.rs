//! Rough timing of one HPS multiplication (Section 4.5) and one CRT relinearization at the Table 3
//! settings of HPS (t = 2, 55-bit primes): N = 2^13 with k = 4 (depth 10) and N = 2^14 with k = 8 (depth
//! 20), plus decryption. Prints the thread count. `--short` runs N = 2^12 only.
//!
//! Run with `cargo run --release -p rnsfhe-bfv --example bfv_mul_timing`.

use std::time::Instant;

use rnsfhe_bfv::{
    BfvContext, BfvParams, CoeffEncoder, Decryptor, Encryptor, Evaluator, KeyGenerator,
};
use rnsfhe_math::sampling::Csprng;

fn median_ms(mut f: impl FnMut(), reps: usize) -> f64 {
    let mut v: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let short = std::env::args().any(|a| a == "--short");
    let rows: &[(u32, usize, Option<u32>)] = if short {
        &[(12, 2, Some(30))]
    } else {
        &[(13, 4, Some(30)), (14, 8, None)]
    };
    println!("threads: {}", rayon::current_num_threads());
    println!("| N | t | log2 Q | k | k' | relin | dec [ms] | mul [ms] | relin [ms] | budget fresh -> after |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for &(log_n, k, relin) in rows {
        for t in [2u64, 65537] {
            let mut p = BfvParams::with_bit_sizes(log_n, t, 55, k)?;
            p.relin_base_log = relin;
            p.allow_insecure = true;
            let ctx = BfvContext::new(p)?;
            let mut rng = Csprng::from_os()?;
            let kg = KeyGenerator::new(&ctx, &mut rng)?;
            let pk = kg.public_key(&mut rng)?;
            let rk = kg.relin_key(&mut rng)?;
            let enc = Encryptor::with_public_key(&ctx, &pk)?;
            let dec = Decryptor::new(&ctx, kg.secret_key())?;
            let ce = CoeffEncoder::new(&ctx);
            let a = enc.encrypt(&ce.encode_u64(&[1, 1])?, &mut rng)?;
            let b = enc.encrypt(&ce.encode_u64(&[1, 0, 1])?, &mut rng)?;
            let ev = Evaluator::new(&ctx);
            let three = ev.multiply_no_relin(&a, &b)?;
            let reps = 11;
            let t_dec = median_ms(|| drop(dec.decrypt(&a)), reps);
            let t_mul = median_ms(|| drop(ev.multiply_no_relin(&a, &b)), reps);
            let t_rel = median_ms(|| drop(ev.relinearize(&three, &rk)), reps);
            let c = ev.relinearize(&three, &rk)?;
            println!(
                "| 2^{log_n} | {t} | {:.0} | {k} | {} | {} | {t_dec:.2} | {t_mul:.2} | {t_rel:.2} | {:.1} -> {:.1} |",
                ctx.log_q(),
                ctx.params().p_moduli.len(),
                relin.map_or("CRT".to_string(), |w| format!("CRT + 2^{w} digits")),
                dec.noise_budget(&a)?,
                dec.noise_budget(&c)?,
            );
        }
    }
    Ok(())
}
