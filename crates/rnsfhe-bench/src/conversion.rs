//! `rnsfhe bench conversion`: nanoseconds per coefficient of RNS basis conversion `Conv_{C -> B}` in its
//! three modes (`Fast`: Bajard / RNS-CKKS Section 2.2; `ExactFloat`: HPS Section 2.2; `ExactInteger`: Qu-Xu
//! Algorithms 1 and 4 with the exact guard) for l = 2..30 source primes and k = 1..4 target primes, of
//! HPS simple and complex scaling (HPS Sections 2.3 and 2.4), and the empirical failure rate of the
//! unguarded Qu-Xu error term against the bound of Qu-Xu Theorem 1.
//!
//! Source primes are Qu-Xu primes near 2^50 (Algorithms 2 and 3), so that all three modes run on the same
//! basis; target primes are 60-bit NTT primes.

use std::cell::Cell;
use std::hint::black_box;
use std::io::IsTerminal;
use std::sync::Arc;

use anyhow::Context;
use rand::{Rng, SeedableRng};
use rnsfhe_math::primes::{ntt_primes_of_bits, qu_xu_max_eta, qu_xu_primes};
use rnsfhe_ring::conversion::{BasisConverter, ConversionMode};
use rnsfhe_ring::scaling::{ComplexScaler, SimpleScaler};
use rnsfhe_ring::{Coeff, Poly, RnsBasis};
use serde::Serialize;

use super::{
    markdown_table, measure_interleaved, write_json, BenchOptions, Machine, Timing, TimingConfig,
};

/// Source basis sizes l of the table.
pub const SOURCE_LIMBS: [usize; 6] = [2, 5, 10, 15, 20, 30];
/// Target basis sizes k of the table.
pub const TARGET_LIMBS: [usize; 4] = [1, 2, 3, 4];
/// Bit size `m` of the source primes (they lie within `2^-eta` of `2^m`).
pub const SOURCE_BITS: u32 = 50;
/// Bit size of the target primes.
pub const TARGET_BITS: u32 = 60;
/// Plaintext modulus of the HPS scaling rows.
pub const PLAINTEXT_MODULUS: u64 = 65537;

/// One conversion row: l source primes to k target primes, the three modes timed interleaved.
#[derive(Debug, Clone, Serialize)]
pub struct ConversionRow {
    /// Source primes.
    pub l: usize,
    /// Target primes.
    pub k: usize,
    /// Closeness of the source primes to 2^m (Qu-Xu eta).
    pub eta: u32,
    /// Nanoseconds per coefficient (median), Fast.
    pub fast_ns: f64,
    /// Nanoseconds per coefficient (median), ExactFloat.
    pub exact_float_ns: f64,
    /// Nanoseconds per coefficient (median), ExactInteger.
    pub exact_integer_ns: f64,
    /// The raw timings (microseconds per conversion of N coefficients).
    pub timings: [Timing; 3],
}

/// One HPS scaling row.
#[derive(Debug, Clone, Serialize)]
pub struct ScalingRow {
    /// Number of primes of Q.
    pub l: usize,
    /// Number of primes of P (complex scaling); P has l + 1 primes as in HPS multiplication.
    pub k: usize,
    /// Nanoseconds per coefficient (median) of simple scaling round(t/Q x) mod t.
    pub simple_ns: f64,
    /// Nanoseconds per coefficient (median) of complex scaling round(t/Q x) in basis P.
    pub complex_ns: f64,
    /// Raw timings.
    pub timings: [Timing; 2],
}

/// The failure-rate measurement of the unguarded Qu-Xu error term.
#[derive(Debug, Clone, Serialize)]
pub struct FailureRow {
    /// Source primes.
    pub l: usize,
    /// Qu-Xu eta of the primes.
    pub eta: u32,
    /// How eta was chosen.
    pub setting: String,
    /// Coefficients converted.
    pub samples: usize,
    /// Coefficients whose unguarded error term differs from the exact one.
    pub failures: usize,
    /// failures / samples.
    pub rate: f64,
    /// Qu-Xu Theorem 1 bound `l 2^-eta / (1 - 2^-eta)`.
    pub theorem1_bound: f64,
    /// Whether every failure was off by exactly one (Theorem 1).
    pub all_off_by_one: bool,
}

/// The JSON document `conversion.json`.
#[derive(Debug, Clone, Serialize)]
pub struct ConversionReport {
    /// Table name.
    pub table: &'static str,
    /// Where and when it ran.
    pub machine: Machine,
    /// Whether this was a `--quick` run.
    pub quick: bool,
    /// Ring degree of the measured polynomials.
    pub n: usize,
    /// Repetition settings.
    pub timing: TimingConfig,
    /// Conversion rows.
    pub conversion: Vec<ConversionRow>,
    /// Scaling rows.
    pub scaling: Vec<ScalingRow>,
    /// Failure-rate rows.
    pub failure: Vec<FailureRow>,
}

fn random_poly(basis: &Arc<RnsBasis>, rng: &mut impl Rng) -> anyhow::Result<Poly<Coeff>> {
    let n = basis.degree();
    let data = basis
        .moduli()
        .iter()
        .flat_map(|m| {
            (0..n)
                .map(|_| rng.gen_range(0..m.value()))
                .collect::<Vec<_>>()
        })
        .collect();
    Ok(Poly::from_data(basis, data)?)
}

/// Source (Qu-Xu, near 2^m) and target (60-bit) bases for degree `n`.
fn bases(n: usize, l: usize, k: usize) -> anyhow::Result<(Arc<RnsBasis>, Arc<RnsBasis>, u32)> {
    let two_n = 2 * n as u64;
    let eta = qu_xu_max_eta(SOURCE_BITS, two_n, l)?;
    let qs = qu_xu_primes(SOURCE_BITS, eta, two_n, l, &[])?;
    let ps = ntt_primes_of_bits(TARGET_BITS, two_n, k, &qs)?;
    Ok((RnsBasis::new(n, &qs)?, RnsBasis::new(n, &ps)?, eta))
}

fn per_coeff_ns(t: &Timing, n: usize) -> f64 {
    t.median_us * 1e3 / n as f64
}

/// The inputs of one conversion row: `l` source primes (Qu-Xu, near `2^50`) and `k` target primes (60-bit)
/// at degree `n`, and a random polynomial over the source basis (seeded by `l` and `k`).
#[derive(Debug, Clone)]
pub struct ConversionCase {
    /// The source basis `C`.
    pub from: Arc<RnsBasis>,
    /// The target basis `B`.
    pub to: Arc<RnsBasis>,
    /// Closeness of the source primes to `2^m` (Qu-Xu eta).
    pub eta: u32,
    /// The polynomial to convert.
    pub x: Poly<Coeff>,
}

impl ConversionCase {
    /// Builds the bases and the input of row (`l`, `k`) at degree `n`.
    pub fn new(n: usize, l: usize, k: usize) -> anyhow::Result<Self> {
        let (from, to, eta) = bases(n, l, k)?;
        let mut rng = rand::rngs::StdRng::seed_from_u64((l * 100 + k) as u64);
        let x = random_poly(&from, &mut rng)?;
        Ok(Self { from, to, eta, x })
    }

    /// The converter from the source to the target basis in `mode`.
    pub fn converter(&self, mode: ConversionMode) -> anyhow::Result<BasisConverter> {
        Ok(BasisConverter::new(&self.from, &self.to, mode)?)
    }
}

/// Times the three modes for one (l, k), after checking that the exact modes agree.
pub fn measure_conversion(
    n: usize,
    l: usize,
    k: usize,
    config: &TimingConfig,
) -> anyhow::Result<ConversionRow> {
    let case = ConversionCase::new(n, l, k)?;
    let (eta, x) = (case.eta, &case.x);
    let (fast, float, integer) = (
        case.converter(ConversionMode::Fast)?,
        case.converter(ConversionMode::ExactFloat)?,
        case.converter(ConversionMode::ExactInteger)?,
    );
    if float.convert(x)? != integer.convert(x)? {
        anyhow::bail!(
            "ExactFloat and ExactInteger disagree for l = {l}, k = {k}: refusing to time them"
        );
    }
    // A failure cannot happen after the check above (same buffers); one is kept and reported after timing.
    let failed = Cell::new(None);
    let record = |r: rnsfhe_ring::Result<()>| {
        if let Err(e) = r {
            failed.set(Some(e));
        }
    };
    let (mut o0, mut o1, mut o2) = (vec![0u64; k * n], vec![0u64; k * n], vec![0u64; k * n]);
    let input = x.data();
    let mut a = || record(fast.convert_into(black_box(input), &mut o0));
    let mut b = || record(float.convert_into(black_box(input), &mut o1));
    let mut c = || record(integer.convert_into(black_box(input), &mut o2));
    let timings = measure_interleaved(config, &mut [&mut a, &mut b, &mut c]);
    if let Some(e) = failed.take() {
        return Err(e.into());
    }
    Ok(ConversionRow {
        l,
        k,
        eta,
        fast_ns: per_coeff_ns(&timings[0], n),
        exact_float_ns: per_coeff_ns(&timings[1], n),
        exact_integer_ns: per_coeff_ns(&timings[2], n),
        timings: [timings[0], timings[1], timings[2]],
    })
}

/// The inputs of one HPS scaling row: `Q` of `l` 60-bit primes, `P` of `l + 1` (as in HPS
/// multiplication), both scalers for `t = 65537`, and random polynomials over `Q` and `Q ∪ P` (seeded by
/// `l`).
#[derive(Debug, Clone)]
pub struct ScalingCase {
    /// Simple scaling `round(t/Q x) mod t` over `Q`.
    pub simple: SimpleScaler,
    /// Complex scaling `round(t/Q x)` from `Q ∪ P` to `P`.
    pub complex: ComplexScaler,
    /// The input of simple scaling, over `Q`.
    pub xq: Poly<Coeff>,
    /// The input of complex scaling, over `Q ∪ P`.
    pub xqp: Poly<Coeff>,
}

impl ScalingCase {
    /// Builds the bases, the scalers and the inputs of row `l` at degree `n`.
    pub fn new(n: usize, l: usize) -> anyhow::Result<Self> {
        let two_n = 2 * n as u64;
        let qs = ntt_primes_of_bits(TARGET_BITS, two_n, l, &[])?;
        let ps = ntt_primes_of_bits(TARGET_BITS, two_n, l + 1, &qs)?;
        let (q, p) = (RnsBasis::new(n, &qs)?, RnsBasis::new(n, &ps)?);
        let simple = SimpleScaler::new(&q, PLAINTEXT_MODULUS)?;
        let complex = ComplexScaler::new(&q, &p, PLAINTEXT_MODULUS)?;
        let mut rng = rand::rngs::StdRng::seed_from_u64(l as u64);
        let xq = random_poly(&q, &mut rng)?;
        let xqp = random_poly(complex.extended_basis(), &mut rng)?;
        Ok(Self {
            simple,
            complex,
            xq,
            xqp,
        })
    }
}

/// Times HPS simple scaling over Q (l primes) and complex scaling from Q ∪ P to P (P of l + 1 primes).
pub fn measure_scaling(n: usize, l: usize, config: &TimingConfig) -> anyhow::Result<ScalingRow> {
    let k = l + 1;
    let ScalingCase {
        simple,
        complex,
        xq,
        xqp,
    } = ScalingCase::new(n, l)?;
    let mut out = vec![0u64; n];
    let failed = Cell::new(None);
    let mut a = || {
        if let Err(e) = simple.scale_into(black_box(&xq), &mut out) {
            failed.set(Some(e));
        }
    };
    let mut b = || match complex.scale(black_box(&xqp)) {
        Ok(r) => drop(black_box(r)),
        Err(e) => failed.set(Some(e)),
    };
    let t = measure_interleaved(config, &mut [&mut a, &mut b]);
    if let Some(e) = failed.take() {
        return Err(e.into());
    }
    Ok(ScalingRow {
        l,
        k,
        simple_ns: per_coeff_ns(&t[0], n),
        complex_ns: per_coeff_ns(&t[1], n),
        timings: [t[0], t[1]],
    })
}

/// Failure rate of the unguarded Qu-Xu term (Algorithm 4 with rounding) against the exact term, on
/// `polys` random polynomials of degree `n`, for primes with the given `eta` (Algorithm 3 walks down from
/// the upper end of the interval, so the primes sit near its edge and the bound is nearly attained).
pub fn measure_failure(
    n: usize,
    l: usize,
    eta: u32,
    setting: &str,
    polys: usize,
) -> anyhow::Result<FailureRow> {
    let two_n = 2 * n as u64;
    let qs = qu_xu_primes(SOURCE_BITS, eta, two_n, l, &[])?;
    let ps = ntt_primes_of_bits(TARGET_BITS, two_n, 1, &qs)?;
    let (from, to) = (RnsBasis::new(n, &qs)?, RnsBasis::new(n, &ps)?);
    // Accept any eta here: the point is to measure the unguarded term where it fails.
    let conv = BasisConverter::with_failure_target(&from, &to, ConversionMode::ExactInteger, 0.25)
        .context("the measurement basis must admit ExactInteger with r = 1/4")?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(eta as u64 * 1000 + l as u64);
    let (mut failures, mut all_off_by_one) = (0usize, true);
    for _ in 0..polys {
        let x = random_poly(&from, &mut rng)?;
        let exact = conv.error_terms(x.data())?;
        let raw = conv.qu_xu_error_terms_unguarded(x.data())?;
        for (&e, &r) in exact.iter().zip(&raw) {
            if e != r {
                failures += 1;
                all_off_by_one &= e.abs_diff(r) == 1;
            }
        }
    }
    let samples = polys * n;
    let bound = conv
        .theorem1_bound()
        .context("ExactInteger converters report the Theorem 1 bound")?;
    Ok(FailureRow {
        l,
        eta,
        setting: setting.to_string(),
        samples,
        failures,
        rate: failures as f64 / samples as f64,
        theorem1_bound: bound,
        all_off_by_one,
    })
}

/// `rnsfhe bench conversion`.
pub fn run(options: &BenchOptions) -> anyhow::Result<()> {
    let config = TimingConfig::for_options(options);
    let machine = Machine::detect();
    let n = if options.quick { 1 << 12 } else { 1 << 14 };
    let progress = std::io::stderr().is_terminal();
    let source: &[usize] = if options.quick {
        &[2, 10, 30]
    } else {
        &SOURCE_LIMBS
    };

    let mut conversion = Vec::new();
    for &l in source {
        for &k in &TARGET_LIMBS {
            if progress {
                eprint!("\rconversion l = {l}, k = {k}   ");
            }
            conversion.push(measure_conversion(n, l, k, &config)?);
        }
    }
    let mut scaling = Vec::new();
    for &l in source {
        if progress {
            eprint!("\rscaling l = {l}        ");
        }
        scaling.push(measure_scaling(n, l, &config)?);
    }
    // Failure rate: at the largest eta of Qu-Xu Algorithm 2 (the configuration the library uses), and at
    // the smallest eta satisfying Theorem 1's precondition for r = 2^-6, where failures are frequent enough
    // to be counted.
    let polys = if options.quick { 50 } else { 400 };
    let mut failure = Vec::new();
    for &l in &[8usize, 30] {
        if progress {
            eprint!("\rfailure rate l = {l}     ");
        }
        let eta_max = qu_xu_max_eta(SOURCE_BITS, 2 * n as u64, l)?;
        failure.push(measure_failure(
            n,
            l,
            eta_max,
            "largest eta (Qu-Xu Algorithm 2)",
            polys,
        )?);
        let r = 1.0 / 64.0;
        let eta_min = ((r + l as f64) / r).log2().floor() as u32 + 1;
        failure.push(measure_failure(
            n,
            l,
            eta_min,
            "smallest eta > log2((r + l)/r), r = 2^-6",
            polys,
        )?);
    }
    if progress {
        eprint!("\r{:40}\r", "");
    }

    println!(
        "## RNS basis conversion, HPS scaling{}\n",
        if options.quick { " (--quick)" } else { "" }
    );
    println!("{}", machine.markdown_header());
    println!(
        "- N = {n}; median of {} interleaved samples; nanoseconds per coefficient; source primes: Qu-Xu primes near 2^{SOURCE_BITS}; target primes: {TARGET_BITS} bits\n",
        config.samples
    );
    let rows: Vec<Vec<String>> = conversion
        .iter()
        .map(|r| {
            vec![
                r.l.to_string(),
                r.k.to_string(),
                r.eta.to_string(),
                format!("{:.2}", r.fast_ns),
                format!("{:.2}", r.exact_float_ns),
                format!("{:.2}", r.exact_integer_ns),
                format!("{:.2}", r.exact_float_ns / r.fast_ns),
                format!("{:.2}", r.exact_integer_ns / r.fast_ns),
            ]
        })
        .collect();
    print!(
        "{}",
        markdown_table(
            &[
                "l",
                "k",
                "eta",
                "Fast (ns)",
                "ExactFloat (ns)",
                "ExactInteger (ns)",
                "Float / Fast",
                "Integer / Fast"
            ],
            &rows
        )
    );
    println!("\nHPS scaling (t = {PLAINTEXT_MODULUS}, 60-bit primes, P of l + 1 primes), ns per coefficient:\n");
    let rows: Vec<Vec<String>> = scaling
        .iter()
        .map(|r| {
            vec![
                r.l.to_string(),
                r.k.to_string(),
                format!("{:.2}", r.simple_ns),
                format!("{:.2}", r.complex_ns),
            ]
        })
        .collect();
    print!(
        "{}",
        markdown_table(
            &[
                "l (Q)",
                "k (P)",
                "simple scaling (ns)",
                "complex scaling (ns)"
            ],
            &rows
        )
    );
    println!("\nUnguarded Qu-Xu error term (Algorithm 4 with rounding) vs the exact term, against Theorem 1:\n");
    let rows: Vec<Vec<String>> = failure
        .iter()
        .map(|r| {
            vec![
                r.l.to_string(),
                r.eta.to_string(),
                r.setting.clone(),
                r.samples.to_string(),
                r.failures.to_string(),
                format!("{:.3e}", r.rate),
                format!("{:.3e}", r.theorem1_bound),
                if r.all_off_by_one { "yes" } else { "NO" }.to_string(),
            ]
        })
        .collect();
    print!(
        "{}",
        markdown_table(
            &[
                "l",
                "eta",
                "setting",
                "samples",
                "failures",
                "rate",
                "Theorem 1 bound",
                "all off by 1"
            ],
            &rows
        )
    );
    let report = ConversionReport {
        table: "conversion",
        machine,
        quick: options.quick,
        n,
        timing: config,
        conversion,
        scaling,
        failure,
    };
    let path = write_json(&options.out, "conversion", &report)?;
    println!("\nJSON: {}", path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_measured_and_failures_respect_theorem_1() {
        let config = TimingConfig {
            warmup_ms: 0,
            samples: 3,
            min_sample_us: 1,
        };
        let row = measure_conversion(1 << 10, 5, 2, &config).unwrap();
        assert!(row.fast_ns > 0.0 && row.exact_integer_ns > 0.0 && row.exact_float_ns > 0.0);
        let s = measure_scaling(1 << 10, 3, &config).unwrap();
        assert!(s.simple_ns > 0.0 && s.complex_ns > 0.0);
        let f = measure_failure(1 << 10, 8, 10, "test", 20).unwrap();
        assert!(
            f.failures > 0,
            "at eta = 10 the unguarded term fails visibly"
        );
        assert!(f.all_off_by_one);
        // 3 standard deviations of a binomial above the bound.
        let sd = (f.theorem1_bound * (1.0 - f.theorem1_bound) / f.samples as f64).sqrt();
        assert!(
            f.rate <= f.theorem1_bound + 3.0 * sd,
            "rate {} > bound {}",
            f.rate,
            f.theorem1_bound
        );
    }
}
