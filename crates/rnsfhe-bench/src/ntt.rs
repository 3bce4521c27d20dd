//! `rnsfhe bench ntt`: the forward negacyclic NTT of [`NttPlan`] against the raw `tfhe-ntt` engine it wraps
//! (same process, same plan) and against the scalar [`ReferenceNtt`], for N = 2^12..2^16 and primes of
//! 36, 49, 55, 60 and 61 bits.
//!
//! `ours / tfhe-ntt` shows the cost of the wrapper (expected 1.00); `ours / scalar` the gain of the SIMD
//! engine over a plain Harvey NTT. Primes below 2^50 take the AVX-512 IFMA path where the CPU has it.

use std::io::IsTerminal;

use anyhow::{bail, Context};
use rand::{Rng, SeedableRng};
use rnsfhe_math::primes::{ntt_primes_near_power_of_two, ntt_primes_of_bits};
use rnsfhe_math::{NttPlan, ReferenceNtt};
use serde::Serialize;

use super::{
    markdown_table, measure_interleaved, write_json, AlignedBuffer, BenchOptions, Machine, Timing,
    TimingConfig,
};

/// Prime sizes of the table, in bits.
pub const PRIME_BITS: [u32; 5] = [36, 49, 55, 60, 61];
/// log2 N of the full table.
pub const LOG_N_FULL: std::ops::RangeInclusive<u32> = 12..=16;
/// log2 N of `--quick`.
pub const LOG_N_QUICK: std::ops::RangeInclusive<u32> = 12..=14;

/// How a prime of the table is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PrimeKind {
    /// The largest NTT prime of exactly `bits` bits (`ntt_primes_of_bits`): special and BFV moduli.
    OfBits,
    /// The NTT prime closest to `2^bits` (`ntt_primes_near_power_of_two`): CKKS scaling moduli.
    NearPowerOfTwo,
}

/// One row of the table: one ring degree and one prime.
#[derive(Debug, Clone, Serialize)]
pub struct NttRow {
    /// Ring degree N.
    pub n: usize,
    /// log2 N.
    pub log_n: u32,
    /// Requested prime size in bits.
    pub bits: u32,
    /// The prime.
    pub prime: u64,
    /// How the prime was chosen.
    pub prime_kind: PrimeKind,
    /// Whether the engine takes its IFMA path for this prime.
    pub uses_ifma: bool,
    /// `NttPlan::forward` (our wrapper).
    pub ours: Timing,
    /// `tfhe_ntt::prime64::Plan::fwd` called directly.
    pub tfhe_ntt: Timing,
    /// `ReferenceNtt::forward` (scalar Harvey NTT).
    pub scalar: Timing,
    /// Median of ours over median of tfhe-ntt.
    pub ratio_ours_tfhe_ntt: f64,
    /// Median of ours over median of scalar.
    pub ratio_ours_scalar: f64,
}

/// The JSON document `ntt.json`.
#[derive(Debug, Clone, Serialize)]
pub struct NttReport {
    /// Table name.
    pub table: &'static str,
    /// Where and when it ran.
    pub machine: Machine,
    /// Whether this was a `--quick` run.
    pub quick: bool,
    /// Repetition settings.
    pub timing: TimingConfig,
    /// The measurements.
    pub rows: Vec<NttRow>,
}

/// The prime of `bits` bits used for degree `n` in the table.
pub fn prime_for(n: usize, bits: u32) -> anyhow::Result<(u64, PrimeKind)> {
    let two_n = 2 * n as u64;
    let (primes, kind) = if bits == 55 {
        (
            ntt_primes_near_power_of_two(bits, two_n, 1)?,
            PrimeKind::NearPowerOfTwo,
        )
    } else {
        (ntt_primes_of_bits(bits, two_n, 1, &[])?, PrimeKind::OfBits)
    };
    let p = primes
        .first()
        .copied()
        .with_context(|| format!("no {bits}-bit prime for N = {n}"))?;
    Ok((p, kind))
}

/// Measures one row: checks first that the three transforms agree on a random input, then times them
/// interleaved.
pub fn measure_row(n: usize, bits: u32, config: &TimingConfig) -> anyhow::Result<NttRow> {
    let (p, prime_kind) = prime_for(n, bits)?;
    let plan = NttPlan::new(n, p)?;
    let reference = ReferenceNtt::from_plan(&plan)?;
    let engine = plan.engine();

    let mut rng = rand::rngs::StdRng::seed_from_u64(n as u64 ^ u64::from(bits));
    let input: Vec<u64> = (0..n).map(|_| rng.gen_range(0..p)).collect();
    let mut a = AlignedBuffer::from_slice(&input);
    let (mut b, mut c) = (a.clone(), a.clone());
    plan.forward(a.as_mut_slice())?;
    engine.fwd(b.as_mut_slice());
    reference.forward(c.as_mut_slice())?;
    if a.as_slice() != b.as_slice() || a.as_slice() != c.as_slice() {
        bail!("the transforms disagree for N = {n}, p = {p}: refusing to time them");
    }

    // Each case transforms its own buffer in place; outputs stay in [0, p), so repeating is valid.
    // A failing call cannot happen (lengths match the plan); it is recorded and reported after timing.
    let mut failed = None;
    let mut ours = || {
        if let Err(e) = plan.forward(std::hint::black_box(a.as_mut_slice())) {
            failed = Some(e);
        }
    };
    let mut raw = || engine.fwd(std::hint::black_box(b.as_mut_slice()));
    let mut scalar_failed = None;
    let mut scalar = || {
        if let Err(e) = reference.forward(std::hint::black_box(c.as_mut_slice())) {
            scalar_failed = Some(e);
        }
    };
    let t = measure_interleaved(config, &mut [&mut ours, &mut raw, &mut scalar]);
    if let Some(e) = failed.or(scalar_failed) {
        return Err(e.into());
    }
    let [ours, tfhe_ntt, scalar] = [t[0], t[1], t[2]];
    Ok(NttRow {
        n,
        log_n: n.trailing_zeros(),
        bits,
        prime: p,
        prime_kind,
        uses_ifma: plan.uses_ifma(),
        ours,
        tfhe_ntt,
        scalar,
        ratio_ours_tfhe_ntt: ours.median_us / tfhe_ntt.median_us,
        ratio_ours_scalar: ours.median_us / scalar.median_us,
    })
}

/// Measures every row for the given degrees, printing progress on stderr.
pub fn measure_rows(
    log_ns: impl IntoIterator<Item = u32>,
    bits: &[u32],
    config: &TimingConfig,
) -> anyhow::Result<Vec<NttRow>> {
    let progress = std::io::stderr().is_terminal();
    let mut rows = Vec::new();
    for log_n in log_ns {
        for &b in bits {
            if progress {
                eprint!("\rmeasuring N = 2^{log_n}, {b}-bit prime   ");
            }
            rows.push(measure_row(1 << log_n, b, config)?);
        }
    }
    if progress {
        eprint!("\r{:40}\r", "");
    }
    Ok(rows)
}

fn fmt_us(us: f64) -> String {
    if us >= 100.0 {
        format!("{us:.0}")
    } else if us >= 10.0 {
        format!("{us:.1}")
    } else {
        format!("{us:.2}")
    }
}

/// The markdown table of `rows` (median microseconds per forward transform, and ratios of medians).
pub fn markdown(rows: &[NttRow]) -> String {
    let headers = [
        "N",
        "prime",
        "IFMA",
        "ours (us)",
        "tfhe-ntt (us)",
        "scalar (us)",
        "ours / tfhe-ntt",
        "ours / scalar",
    ];
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let prime = match r.prime_kind {
                PrimeKind::OfBits => format!("{} bits", r.bits),
                PrimeKind::NearPowerOfTwo => format!("~2^{}", r.bits),
            };
            vec![
                format!("2^{}", r.log_n),
                prime,
                if r.uses_ifma { "yes" } else { "no" }.to_string(),
                fmt_us(r.ours.median_us),
                fmt_us(r.tfhe_ntt.median_us),
                fmt_us(r.scalar.median_us),
                format!("{:.2}", r.ratio_ours_tfhe_ntt),
                format!("{:.2}", r.ratio_ours_scalar),
            ]
        })
        .collect();
    markdown_table(&headers, &body)
}

/// `rnsfhe bench ntt`.
pub fn run(options: &BenchOptions) -> anyhow::Result<()> {
    let config = TimingConfig::for_options(options);
    let machine = Machine::detect();
    let log_ns = if options.quick {
        LOG_N_QUICK
    } else {
        LOG_N_FULL
    };
    let rows = measure_rows(log_ns, &PRIME_BITS, &config)?;
    println!(
        "## Forward negacyclic NTT, one prime{}\n",
        if options.quick { " (--quick)" } else { "" }
    );
    println!("{}", machine.markdown_header());
    println!(
        "- median of {} interleaved samples (ours, tfhe-ntt, scalar), microseconds per transform, single thread\n",
        config.samples
    );
    print!("{}", markdown(&rows));
    let report = NttReport {
        table: "ntt",
        machine,
        quick: options.quick,
        timing: config,
        rows,
    };
    let path = write_json(&options.out, "ntt", &report)?;
    println!("\nJSON: {}", path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primes_of_the_table_have_the_requested_size() {
        for log_n in LOG_N_FULL {
            let n = 1usize << log_n;
            for bits in PRIME_BITS {
                let (p, kind) = prime_for(n, bits).unwrap();
                assert_eq!(p % (2 * n as u64), 1);
                match kind {
                    PrimeKind::OfBits => assert_eq!(64 - p.leading_zeros(), bits),
                    PrimeKind::NearPowerOfTwo => {
                        assert!(p.abs_diff(1 << bits) < 1 << (bits - 8));
                    }
                }
            }
        }
    }

    #[test]
    fn a_row_is_measured_and_printed() {
        let config = TimingConfig {
            warmup_ms: 0,
            samples: 3,
            min_sample_us: 1,
        };
        let row = measure_row(1 << 12, 49, &config).unwrap();
        assert_eq!(row.ours.samples, 3);
        assert!(row.ours.median_us > 0.0 && row.ratio_ours_scalar > 0.0);
        let table = markdown(&[row]);
        assert!(table.contains("| 2^12 "));
        assert_eq!(table.lines().count(), 3);
    }
}
