//! `rnsfhe bench ckks-precision`: the RNS-CKKS paper's Figure 1, the bits of precision of an encrypted
//! plaintext after each of L successive multiplications (here: squarings of values on the unit circle,
//! which keep their magnitude), for both rescaling policies (the paper's fixed nominal scale and exact
//! per-level scales) and the three basis-conversion modes of key switching (Fast, ExactFloat, ExactInteger).
//!
//! Parameters: the `PaperTable1L10` chain (N = 2^15, q_0 of 61 bits, ten 55-bit primes) with one prime per
//! key-switching digit (`dnum = L + 1`, two 60-bit special primes), so that `ExactInteger` applies to every
//! digit (its source primes must be close to one power of two) and all six variants do the same work.

use rand::{Rng, SeedableRng};
use rnsfhe_ckks::{
    CkksContext, CkksDecryptor, CkksEncryptor, Complex64, ConversionMode, Csprng, Evaluator,
    KeyGenerator, PrecisionStats, Preset, RescalingPolicy,
};
use serde::Serialize;

use super::{markdown_table, write_json, BenchOptions, Machine};

/// One variant's curve: minimum and median bits over slots after 0, 1, ..., L squarings.
#[derive(Debug, Clone, Serialize)]
pub struct PrecisionCurve {
    /// Rescaling policy.
    pub rescaling: String,
    /// Conversion mode of key switching.
    pub conversion: String,
    /// Minimum over slots (real and imaginary parts) after each squaring; entry 0 is the fresh ciphertext.
    pub min_bits: Vec<f64>,
    /// Median over slots (real parts).
    pub median_bits: Vec<f64>,
}

/// The JSON document `ckks-precision.json`.
#[derive(Debug, Clone, Serialize)]
pub struct PrecisionReport {
    /// Table name.
    pub table: &'static str,
    /// Where and when it ran.
    pub machine: Machine,
    /// Whether this was a `--quick` run.
    pub quick: bool,
    /// log2 N.
    pub log_n: u32,
    /// The curves.
    pub curves: Vec<PrecisionCurve>,
}

/// Measures one variant: encrypts unit-circle values with the secret key and squares `levels` times.
pub fn measure_curve(
    log_n: u32,
    levels: usize,
    rescaling: RescalingPolicy,
    conversion: ConversionMode,
) -> anyhow::Result<PrecisionCurve> {
    let mut params = Preset::PaperTable1L10.params();
    params.log_n = log_n;
    params.levels = levels;
    params.dnum = levels + 1;
    params.special_primes = 2;
    params.rescaling = rescaling;
    params.conversion = conversion;
    let ctx = CkksContext::new(params)?;
    let mut rng = Csprng::from_os()?;
    let kg = KeyGenerator::new(&ctx, &mut rng)?;
    let evaluator = Evaluator::new(&ctx).with_relin_key(kg.relin_key(&mut rng)?)?;
    let encryptor = CkksEncryptor::with_secret_key(&ctx, kg.secret_key())?;
    let decryptor = CkksDecryptor::new(&ctx, kg.secret_key())?;
    let slots = ctx.max_slots();
    let mut data = rand::rngs::StdRng::seed_from_u64(10);
    let mut expected: Vec<Complex64> = (0..slots)
        .map(|_| Complex64::from_polar(1.0, data.gen_range(0.0..std::f64::consts::TAU)))
        .collect();
    let mut ct = encryptor.encrypt(&expected[..], &mut rng)?;
    let (mut min_bits, mut median_bits) = (Vec::new(), Vec::new());
    for step in 0..=levels {
        let stats = PrecisionStats::compare(&expected, &decryptor.decrypt(&ct)?)?;
        min_bits.push(stats.real.min.min(stats.imag.min));
        median_bits.push(stats.real.median);
        if step < levels {
            ct = evaluator.multiply_rescale(&ct, &ct)?;
            expected.iter_mut().for_each(|z| *z = *z * *z);
        }
    }
    Ok(PrecisionCurve {
        rescaling: format!("{rescaling:?}"),
        conversion: format!("{conversion:?}"),
        min_bits,
        median_bits,
    })
}

/// `rnsfhe bench ckks-precision`.
pub fn run(options: &BenchOptions) -> anyhow::Result<()> {
    let machine = Machine::detect();
    let (log_n, levels) = if options.quick { (12, 4) } else { (15, 10) };
    let mut curves = Vec::new();
    for rescaling in [
        RescalingPolicy::FixedNominalScale,
        RescalingPolicy::ExactScale,
    ] {
        for conversion in [
            ConversionMode::Fast,
            ConversionMode::ExactFloat,
            ConversionMode::ExactInteger,
        ] {
            eprintln!("measuring {rescaling:?}, {conversion:?} ...");
            curves.push(measure_curve(log_n, levels, rescaling, conversion)?);
        }
    }
    println!(
        "## RNS-CKKS Figure 1: bits of precision after successive squarings{}\n",
        if options.quick { " (--quick)" } else { "" }
    );
    println!("{}", machine.markdown_header());
    println!(
        "- N = 2^{log_n}, L = {levels}, scale 2^55, q_0 of 61 bits, dnum = L + 1, secret-key encryption of unit-circle values; minimum over slots of -log2|error| (real and imaginary parts)\n"
    );
    let mut headers = vec!["rescaling".to_string(), "conversion".to_string()];
    headers.extend((0..=levels).map(|i| {
        if i == 0 {
            "fresh".to_string()
        } else {
            format!("x^(2^{i})")
        }
    }));
    let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let rows: Vec<Vec<String>> = curves
        .iter()
        .map(|c| {
            let mut row = vec![c.rescaling.clone(), c.conversion.clone()];
            row.extend(c.min_bits.iter().map(|b| format!("{b:.1}")));
            row
        })
        .collect();
    print!("{}", markdown_table(&header_refs, &rows));
    let report = PrecisionReport {
        table: "ckks-precision",
        machine,
        quick: options.quick,
        log_n,
        curves,
    };
    let path = write_json(&options.out, "ckks-precision", &report)?;
    println!("\nJSON: {}", path.display());
    Ok(())
}
