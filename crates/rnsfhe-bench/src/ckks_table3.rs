//! `rnsfhe bench ckks-table3`: RNS-CKKS Table 3 (Section 5.2), the mean and the variance of `2^13` encrypted
//! numbers at the paper's parameters ([`Preset::PaperTable3`]: `N = 2^14`, `log q = 55`, `log Q_L = 171`),
//! with the paper's times (HEAAN-RNS, single thread) beside ours.
//!
//! The `2^13` inputs are uniform reals in `[-1, 1]` (seeded) in one ciphertext (public-key encryption).
//! [`Evaluator::mean`] sums the slots by `log2(2^13) = 13` rotations and additions, multiplies by `1 / n`
//! and rescales (one level); [`Evaluator::variance`] is `E[x^2] - E[x]^2` (two levels). Each is timed from
//! the fresh ciphertext to the result (not decrypted), in a one-thread and a two-thread rayon pool,
//! interleaved; the error is the largest distance over the slots to the plaintext mean or variance.

use std::sync::{Arc, Mutex};

use anyhow::Context;
use rand::{Rng, SeedableRng};
use rnsfhe_ckks::{
    Ciphertext, CkksContext, CkksDecryptor, CkksEncryptor, CkksParams, Csprng, Evaluator,
    KeyGenerator, Preset,
};
use serde::Serialize;

use super::ckks_functions::{load_average, load_average_line, max_error, mean, variance};
use super::{
    markdown_table, measure_interleaved, write_json, BenchOptions, Machine, Timing, TimingConfig,
};

/// The paper's Table 3 (HEAAN-RNS, Intel Core i5 at 2.9 GHz, single thread): mean, in milliseconds.
pub const PAPER_MEAN_MS: f64 = 307.0;
/// The paper's Table 3: variance, in milliseconds.
pub const PAPER_VARIANCE_MS: f64 = 518.0;

/// Keys, the encrypted inputs and the evaluator of Table 3, set up once.
pub struct StatsBench {
    ctx: Arc<CkksContext>,
    evaluator: Evaluator,
    decryptor: CkksDecryptor,
    values: Vec<f64>,
    ct: Ciphertext,
}

impl StatsBench {
    /// Builds the context of `params`, the keys (relinearization and the power-of-two rotations of the
    /// partial sums) and one ciphertext of all the slots, filled with uniform reals in `[-1, 1]` (seeded).
    pub fn new(params: CkksParams) -> anyhow::Result<Self> {
        let ctx = CkksContext::new(params)?;
        let mut rng = Csprng::from_os()?;
        let kg = KeyGenerator::new(&ctx, &mut rng)?;
        let slots = ctx.max_slots();
        let keys = kg.generate_all(&KeyGenerator::power_of_two_steps(slots), false, &mut rng)?;
        let encryptor = CkksEncryptor::with_public_key(&ctx, &keys.public)?;
        let decryptor = CkksDecryptor::new(&ctx, &keys.secret)?;
        let evaluator = Evaluator::new(&ctx)
            .with_relin_key(keys.relin)?
            .with_galois_keys(keys.galois)?;
        // The inputs are not secret: a seeded generator makes runs comparable.
        let mut data = rand::rngs::StdRng::seed_from_u64(3);
        let values: Vec<f64> = (0..slots).map(|_| data.gen_range(-1.0..=1.0)).collect();
        let ct = encryptor.encrypt(&values[..], &mut rng)?;
        Ok(Self {
            ctx,
            evaluator,
            decryptor,
            values,
            ct,
        })
    }

    /// The context.
    pub fn context(&self) -> &Arc<CkksContext> {
        &self.ctx
    }

    /// The encrypted mean ([`Evaluator::mean`]).
    pub fn mean(&self) -> anyhow::Result<Ciphertext> {
        Ok(self.evaluator.mean(&self.ct)?)
    }

    /// The encrypted variance ([`Evaluator::variance`]).
    pub fn variance(&self) -> anyhow::Result<Ciphertext> {
        Ok(self.evaluator.variance(&self.ct)?)
    }

    /// The largest error over the slots of the mean and of the variance against the plaintext values, and
    /// the levels each consumed.
    pub fn check(&self) -> anyhow::Result<[(f64, usize); 2]> {
        let m = self.mean()?;
        let v = self.variance()?;
        let err = |ct: &Ciphertext, want: f64| -> anyhow::Result<(f64, usize)> {
            let got = self.decryptor.decrypt(ct)?;
            let want = vec![want; got.len()];
            Ok((max_error(&got, &want), self.ct.level() - ct.level()))
        };
        Ok([
            err(&m, mean(&self.values))?,
            err(&v, variance(&self.values))?,
        ])
    }
}

/// One thread count's timing of one operation.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadTiming {
    /// Threads of the rayon pool.
    pub threads: usize,
    /// Time per call (microseconds).
    pub timing: Timing,
}

/// One row of `ckks-table3`.
#[derive(Debug, Clone, Serialize)]
pub struct Table3Row {
    /// `mean` or `variance`.
    pub op: String,
    /// Our times, one per thread count.
    pub ours: Vec<ThreadTiming>,
    /// The paper's time (single thread), milliseconds.
    pub paper_ms: f64,
    /// Largest error over the slots against the plaintext value.
    pub max_error: f64,
    /// `log2` of that error.
    pub log2_error: f64,
    /// Levels consumed.
    pub levels_used: usize,
}

/// The parameters a table ran at.
#[derive(Debug, Clone, Serialize)]
pub struct ParamSummary {
    /// Preset name.
    pub preset: String,
    /// Ring degree.
    pub n: usize,
    /// Slots used.
    pub slots: usize,
    /// Bits of the ciphertext primes.
    pub q_bits: Vec<u32>,
    /// `log2 Q_L`.
    pub log_q: f64,
    /// Bits of the special primes.
    pub p_bits: Vec<u32>,
    /// `log2 QP`.
    pub log_qp: f64,
    /// Digits of key switching.
    pub dnum: usize,
    /// Secret distribution.
    pub secret: String,
    /// Rescaling policy.
    pub rescaling: String,
}

impl ParamSummary {
    /// The summary of a context built from `preset`.
    pub fn new(preset: Preset, ctx: &CkksContext) -> Self {
        let bits = |moduli: &[u64]| {
            moduli
                .iter()
                .map(|&q| (q as f64).log2().round() as u32)
                .collect()
        };
        let p = ctx.params();
        Self {
            preset: format!("{preset:?}"),
            n: ctx.n(),
            slots: ctx.max_slots(),
            q_bits: bits(ctx.q_moduli()),
            log_q: ctx.log_q(),
            p_bits: bits(ctx.p_moduli()),
            log_qp: ctx.log_qp(),
            dnum: p.dnum,
            secret: format!("{:?}", p.secret),
            rescaling: format!("{:?}", p.rescaling),
        }
    }

    /// One markdown line describing the parameters.
    pub fn markdown(&self) -> String {
        format!(
            "- parameters: {} (N = 2^{}, {} slots; q primes of {:?} bits, log Q_L = {:.1}; special primes {:?}, log QP = {:.1}, dnum = {}; secret {}; {} rescaling)",
            self.preset,
            self.n.trailing_zeros(),
            self.slots,
            self.q_bits,
            self.log_q,
            self.p_bits,
            self.log_qp,
            self.dnum,
            self.secret,
            self.rescaling
        )
    }
}

/// The JSON document of `ckks-table2.json` and `ckks-table3.json`: the run's context and the table's rows.
#[derive(Debug, Clone, Serialize)]
pub struct CkksTableReport<Row> {
    /// Table name.
    pub table: &'static str,
    /// Where and when it ran (`threads` is the global pool's; each timing has its own pool).
    pub machine: Machine,
    /// Whether this was a `--quick` run.
    pub quick: bool,
    /// Load averages (1 / 5 / 15 min) at the start and at the end of the timed part.
    pub load_average: [Option<String>; 2],
    /// Repetition settings.
    pub timing: TimingConfig,
    /// The parameters.
    pub params: ParamSummary,
    /// The rows.
    pub rows: Vec<Row>,
}

/// The thread counts of the timings: 1, and 2 when the machine has two logical CPUs or more.
pub fn thread_counts(logical_cpus: usize) -> Vec<usize> {
    if logical_cpus >= 2 {
        vec![1, 2]
    } else {
        vec![1]
    }
}

/// One rayon pool per thread count.
pub fn pools(threads: &[usize]) -> anyhow::Result<Vec<rayon::ThreadPool>> {
    threads
        .iter()
        .map(|&t| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .with_context(|| format!("cannot build a pool of {t} threads"))
        })
        .collect()
}

/// Runs `cases` interleaved; the first error a case reported (into `failed`) becomes the error.
pub fn measure_checked(
    config: &TimingConfig,
    cases: &mut [&mut dyn FnMut()],
    failed: &Mutex<Option<anyhow::Error>>,
) -> anyhow::Result<Vec<Timing>> {
    let timings = measure_interleaved(config, cases);
    match failed.lock().ok().and_then(|mut f| f.take()) {
        Some(e) => Err(e.context("an operation failed while timing")),
        None => Ok(timings),
    }
}

/// Keeps the first error of a timed call.
pub fn record<T>(failed: &Mutex<Option<anyhow::Error>>, result: anyhow::Result<T>) {
    if let Err(e) = result {
        if let Ok(mut f) = failed.lock() {
            f.get_or_insert(e);
        }
    }
}

/// The timing settings of the table: few, slow operations.
fn config(quick: bool) -> TimingConfig {
    if quick {
        TimingConfig {
            warmup_ms: 0,
            samples: 3,
            min_sample_us: 0,
        }
    } else {
        TimingConfig {
            warmup_ms: 300,
            samples: 31,
            min_sample_us: 0,
        }
    }
}

/// Measures the table on `bench` (built from `preset`) with `threads`.
pub fn measure(
    preset: Preset,
    bench: &StatsBench,
    threads: &[usize],
    config: &TimingConfig,
) -> anyhow::Result<(ParamSummary, Vec<Table3Row>)> {
    let [(mean_err, mean_levels), (var_err, var_levels)] = bench.check()?;
    let pools = pools(threads)?;
    let failed = Mutex::new(None);
    let mut cases: Vec<Box<dyn FnMut() + '_>> = Vec::new();
    for pool in &pools {
        let (b, f) = (bench, &failed);
        cases.push(Box::new(move || pool.install(|| record(f, b.mean()))));
        cases.push(Box::new(move || pool.install(|| record(f, b.variance()))));
    }
    let mut refs: Vec<&mut dyn FnMut()> = cases.iter_mut().map(|c| &mut **c as _).collect();
    let t = measure_checked(config, &mut refs, &failed)?;
    drop(refs);
    drop(cases);
    let per_threads = |k: usize| -> Vec<ThreadTiming> {
        threads
            .iter()
            .enumerate()
            .map(|(i, &n)| ThreadTiming {
                threads: n,
                timing: t[2 * i + k],
            })
            .collect()
    };
    let row = |op: &str, k: usize, paper_ms: f64, err: f64, levels: usize| Table3Row {
        op: op.to_string(),
        ours: per_threads(k),
        paper_ms,
        max_error: err,
        log2_error: err.log2(),
        levels_used: levels,
    };
    Ok((
        ParamSummary::new(preset, bench.context()),
        vec![
            row("mean", 0, PAPER_MEAN_MS, mean_err, mean_levels),
            row("variance", 1, PAPER_VARIANCE_MS, var_err, var_levels),
        ],
    ))
}

/// Milliseconds with three significant digits.
pub fn ms(us: f64) -> String {
    let v = us / 1000.0;
    let decimals = (2.0 - v.log10().floor()).clamp(0.0, 3.0) as usize;
    format!("{v:.decimals$}")
}

/// The markdown table of the rows.
fn markdown(rows: &[Table3Row], threads: &[usize]) -> String {
    let mut headers: Vec<String> = vec!["function".into(), "levels".into()];
    headers.extend(
        threads
            .iter()
            .map(|t| format!("ours, {t} thread{} (ms)", if *t == 1 { "" } else { "s" })),
    );
    headers.extend([
        "paper, 1 thread (ms)".to_string(),
        "ours / paper (1 thread)".to_string(),
        "error (log2)".to_string(),
    ]);
    let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut cells = vec![r.op.clone(), r.levels_used.to_string()];
            cells.extend(r.ours.iter().map(|t| ms(t.timing.median_us)));
            cells.push(format!("{}", r.paper_ms));
            cells.push(format!(
                "{:.2}",
                r.ours[0].timing.median_us / 1000.0 / r.paper_ms
            ));
            cells.push(format!("{:.1}", r.log2_error));
            cells
        })
        .collect();
    markdown_table(&header_refs, &table)
}

/// `rnsfhe bench ckks-table3`.
pub fn run(options: &BenchOptions) -> anyhow::Result<()> {
    let machine = Machine::detect();
    let preset = Preset::PaperTable3;
    let config = config(options.quick);
    let threads = thread_counts(machine.logical_cpus);
    eprintln!("ckks-table3: {preset:?}: keys (relinearization, 13 rotations) and inputs ...");
    let bench = StatsBench::new(preset.params())?;
    let load_start = load_average();
    eprintln!(
        "ckks-table3: {} rounds of mean and variance with {threads:?} threads ...",
        config.samples
    );
    let (params, rows) = measure(preset, &bench, &threads, &config)?;
    let load_end = load_average();

    println!(
        "## RNS-CKKS Table 3: mean and variance of 2^13 numbers{}\n",
        if options.quick { " (--quick)" } else { "" }
    );
    println!("{}", machine.markdown_header());
    println!("{}", load_average_line(&load_start, &load_end));
    println!("{}", params.markdown());
    println!(
        "- inputs: {} uniform reals in [-1, 1] (seeded) in one ciphertext (public-key encryption); mean = \
         13 rotations and additions, x 1/n, rescale; variance = E[x^2] - E[x]^2\n\
         - times: from the fresh ciphertext to the encrypted result, median of {} rounds, milliseconds; every \
         round runs mean and variance in each rayon pool ({:?} threads), interleaved\n\
         - error: largest |decrypted - plaintext value| over the slots (real and imaginary parts), log2\n\
         - paper: HEAAN-RNS, RNS-CKKS Table 3 (Intel Core i5 at 2.9 GHz, single thread; log Q_L = 171)\n",
        params.slots, config.samples, threads
    );
    print!("{}", markdown(&rows, &threads));
    println!();
    let report = CkksTableReport {
        table: "ckks-table3",
        machine,
        quick: options.quick,
        load_average: [load_start, load_end],
        timing: config,
        params,
        rows,
    };
    let path = write_json(&options.out, "ckks-table3", &report)?;
    println!("JSON: {}", path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A smoke run of the table's code at a small ring (N = 2^12, same chain as Table 3).
    #[test]
    fn smoke_run_at_a_small_ring() {
        let mut params = Preset::PaperTable3.params();
        params.log_n = 12;
        let bench = StatsBench::new(params).unwrap();
        let config = TimingConfig {
            warmup_ms: 0,
            samples: 1,
            min_sample_us: 0,
        };
        let (summary, rows) = measure(Preset::PaperTable3, &bench, &[1, 2], &config).unwrap();
        assert_eq!(summary.slots, 1 << 11);
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].levels_used, rows[1].levels_used), (1, 2));
        for r in &rows {
            assert!(r.log2_error < -25.0, "{}: error 2^{}", r.op, r.log2_error);
            assert_eq!(r.ours.len(), 2);
            assert!(r.ours.iter().all(|t| t.timing.median_us > 0.0));
        }
        let md = markdown(&rows, &[1, 2]);
        assert!(md.contains("| mean") && md.contains("ours, 2 threads (ms)"));
    }

    #[test]
    fn one_cpu_times_one_thread() {
        assert_eq!(thread_counts(1), vec![1]);
        assert_eq!(thread_counts(8), vec![1, 2]);
    }
}
