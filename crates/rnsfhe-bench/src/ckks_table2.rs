//! `rnsfhe bench ckks-table2`: RNS-CKKS Table 2 (Section 5.2), x^-1, exp and sigmoid on `2^13` slots at the
//! paper's parameters ([`Preset::PaperTable2`]: `N = 2^14`, `log q = 55`, `log Q_L = 281`, 4 levels), with
//! the paper's times (HEAAN-RNS, single thread) beside ours.
//!
//! Rows, all on one fresh ciphertext of `2^13` inputs per interval ([`super::ckks_functions`]):
//!
//! * the paper's methods: the inverse by Cheon-Kim-Kim-Song Algorithm 2 (degree 15) on `[0.5, 1.5]`, the
//!   Taylor polynomials of degree 7 of exp and sigmoid on `[-1, 1]`;
//! * the same on narrower inputs, `[0.75, 1.25]` and `[-0.25, 0.25]`, where the polynomials themselves are
//!   within about `2^-32` of the functions (the paper's "at least 32 bits of precision");
//! * Chebyshev interpolants of degree 7 and 15 on the same intervals as the paper's rows (the degrees that
//!   fit in the 4 levels: `[-1, 1]` and `[0.5, 1.5]` need no level for the change of variable).
//!
//! Each row reports the total time (fresh ciphertext to result, not decrypted) in a one-thread and a
//! two-thread rayon pool, the amortized time per slot (total / `2^13`), the bits of precision against the
//! exact polynomial (the same polynomial evaluated in plaintext) and against the true function, and the
//! bits of the polynomial alone against the function.

use std::sync::Mutex;

use rnsfhe_ckks::{
    Ciphertext, CkksContext, CkksDecryptor, CkksEncryptor, CkksParams, Csprng, Evaluator,
    KeyGenerator, Preset,
};
use serde::Serialize;

use super::ckks_functions::{accuracy, inputs_on, load_average, load_average_line, Accuracy, FnOp};
use super::ckks_table3::{
    measure_checked, ms, pools, record, thread_counts, CkksTableReport, ParamSummary, ThreadTiming,
};
use super::{markdown_table, write_json, BenchOptions, Machine, TimingConfig};

/// A row of the paper's Table 2 (HEAAN-RNS, Intel Core i5 at 2.9 GHz, single thread).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct PaperRow {
    /// Degree of the polynomial.
    pub degree: usize,
    /// Total time, milliseconds.
    pub total_ms: f64,
    /// Amortized time per slot, microseconds.
    pub amortized_us: f64,
}

/// The paper's Table 2: x^-1, exp, sigmoid (at least 32 bits of precision, the paper says).
pub const PAPER_INVERSE: PaperRow = PaperRow {
    degree: 15,
    total_ms: 167.0,
    amortized_us: 21.0,
};
/// The paper's exp row.
pub const PAPER_EXP: PaperRow = PaperRow {
    degree: 7,
    total_ms: 164.0,
    amortized_us: 20.0,
};
/// The paper's sigmoid row.
pub const PAPER_SIGMOID: PaperRow = PaperRow {
    degree: 7,
    total_ms: 161.0,
    amortized_us: 19.0,
};

/// The rows of the table: operation name ([`FnOp::parse`]) and the paper's row it matches.
pub const ROWS: [(&str, Option<PaperRow>); 12] = [
    ("alg2:inverse:0.5:1.5:15", Some(PAPER_INVERSE)),
    ("taylor:exp:-1:1:7", Some(PAPER_EXP)),
    ("taylor:sigmoid:-1:1:7", Some(PAPER_SIGMOID)),
    ("alg2:inverse:0.75:1.25:15", Some(PAPER_INVERSE)),
    ("taylor:exp:-0.25:0.25:7", Some(PAPER_EXP)),
    ("taylor:sigmoid:-0.25:0.25:7", Some(PAPER_SIGMOID)),
    ("cheb:inverse:0.5:1.5:7", None),
    ("cheb:inverse:0.5:1.5:15", None),
    ("cheb:exp:-1:1:7", None),
    ("cheb:exp:-1:1:15", None),
    ("cheb:sigmoid:-1:1:7", None),
    ("cheb:sigmoid:-1:1:15", None),
];

/// The rows of a `--quick` run: the paper's three.
const QUICK_ROWS: usize = 3;

/// One row of `ckks-table2`.
#[derive(Debug, Clone, Serialize)]
pub struct Table2Row {
    /// Operation name ([`FnOp::parse`]).
    pub op: String,
    /// Function.
    pub function: String,
    /// Method (Taylor, CKKS Alg. 2, Chebyshev).
    pub method: String,
    /// Degree of the polynomial.
    pub degree: usize,
    /// Input interval.
    pub interval: (f64, f64),
    /// Our times, one per thread count.
    pub ours: Vec<ThreadTiming>,
    /// Our amortized time per slot with one thread, microseconds.
    pub amortized_us: f64,
    /// The paper's row for the function.
    pub paper: Option<PaperRow>,
    /// Precision of the result.
    pub accuracy: Accuracy,
}

/// Keys, evaluator and one encrypted input vector per interval, for the rows of the table.
pub struct FunctionsBench {
    ctx: std::sync::Arc<CkksContext>,
    evaluator: Evaluator,
    decryptor: CkksDecryptor,
    /// Per row: the operation, its inputs and their ciphertext.
    cases: Vec<(String, FnOp, Vec<f64>, Ciphertext)>,
}

impl FunctionsBench {
    /// Builds the context of `params`, the keys (relinearization only) and the inputs of `ops`.
    pub fn new(params: CkksParams, ops: &[&str]) -> anyhow::Result<Self> {
        let ctx = CkksContext::new(params)?;
        let mut rng = Csprng::from_os()?;
        let kg = KeyGenerator::new(&ctx, &mut rng)?;
        let evaluator = Evaluator::new(&ctx).with_relin_key(kg.relin_key(&mut rng)?)?;
        let encryptor = CkksEncryptor::with_public_key(&ctx, &kg.public_key(&mut rng)?)?;
        let decryptor = CkksDecryptor::new(&ctx, kg.secret_key())?;
        let slots = ctx.max_slots();
        let mut cases = Vec::new();
        for name in ops {
            let op = FnOp::parse(name)?;
            let (a, b) = op.interval();
            let values = inputs_on(a, b, slots);
            let ct = encryptor.encrypt(&values[..], &mut rng)?;
            cases.push((name.to_string(), op, values, ct));
        }
        Ok(Self {
            ctx,
            evaluator,
            decryptor,
            cases,
        })
    }

    /// Runs row `i` once.
    pub fn run(&self, i: usize) -> anyhow::Result<Ciphertext> {
        let (_, op, _, ct) = &self.cases[i];
        op.run(&self.evaluator, ct)
    }

    /// The precision of row `i`.
    pub fn check(&self, i: usize) -> anyhow::Result<Accuracy> {
        let (name, op, values, ct) = &self.cases[i];
        let out = self
            .run(i)
            .map_err(|e| e.context(format!("{name} failed")))?;
        accuracy(op, values, ct, &out, &self.decryptor)
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
            samples: 21,
            min_sample_us: 0,
        }
    }
}

/// Measures `rows` on a bench built from `params` with `threads`.
pub fn measure(
    params: CkksParams,
    preset: Preset,
    rows: &[(&str, Option<PaperRow>)],
    threads: &[usize],
    config: &TimingConfig,
) -> anyhow::Result<(ParamSummary, Vec<Table2Row>)> {
    let names: Vec<&str> = rows.iter().map(|(n, _)| *n).collect();
    let bench = FunctionsBench::new(params, &names)?;
    let checks: Vec<Accuracy> = (0..rows.len())
        .map(|i| bench.check(i))
        .collect::<anyhow::Result<_>>()?;
    let pools = pools(threads)?;
    let failed = Mutex::new(None);
    let mut cases: Vec<Box<dyn FnMut() + '_>> = Vec::new();
    for pool in &pools {
        for i in 0..rows.len() {
            let (b, f) = (&bench, &failed);
            cases.push(Box::new(move || pool.install(|| record(f, b.run(i)))));
        }
    }
    let mut refs: Vec<&mut dyn FnMut()> = cases.iter_mut().map(|c| &mut **c as _).collect();
    let t = measure_checked(config, &mut refs, &failed)?;
    drop(refs);
    drop(cases);
    let slots = bench.ctx.max_slots();
    let out = rows
        .iter()
        .zip(checks)
        .enumerate()
        .map(|(i, ((name, paper), acc))| {
            let op = FnOp::parse(name)?;
            let FnOp::Poly {
                method,
                function,
                a,
                b,
                degree,
            } = op
            else {
                anyhow::bail!("{name}: Table 2 has polynomial operations only");
            };
            let ours: Vec<ThreadTiming> = threads
                .iter()
                .enumerate()
                .map(|(k, &n)| ThreadTiming {
                    threads: n,
                    timing: t[k * rows.len() + i],
                })
                .collect();
            Ok(Table2Row {
                op: name.to_string(),
                function: function.name().to_string(),
                method: method.label().to_string(),
                degree,
                interval: (a, b),
                amortized_us: ours[0].timing.median_us / slots as f64,
                ours,
                paper: *paper,
                accuracy: acc,
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok((ParamSummary::new(preset, &bench.ctx), out))
}

fn function_label(f: &str) -> &str {
    match f {
        "inverse" => "x^-1",
        "exp" => "exp x",
        "sigmoid" => "sigmoid",
        other => other,
    }
}

/// The markdown table of the rows.
fn markdown(rows: &[Table2Row], threads: &[usize]) -> String {
    let mut headers: Vec<String> = ["function", "method", "degree", "inputs", "levels"]
        .map(String::from)
        .to_vec();
    headers.extend(
        threads
            .iter()
            .map(|t| format!("ours, {t} thread{} (ms)", if *t == 1 { "" } else { "s" })),
    );
    headers.extend(
        [
            "ours amortized (µs/slot)",
            "paper (ms)",
            "paper amortized (µs)",
            "ours / paper",
            "bits vs polynomial",
            "bits vs function",
            "polynomial vs function (bits)",
        ]
        .map(String::from),
    );
    let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let bits = |b: Option<f64>| b.map_or("-".to_string(), |v| format!("{v:.1}"));
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut cells = vec![
                function_label(&r.function).to_string(),
                r.method.clone(),
                r.degree.to_string(),
                format!("[{}, {}]", r.interval.0, r.interval.1),
                r.accuracy.levels_used.to_string(),
            ];
            cells.extend(r.ours.iter().map(|t| ms(t.timing.median_us)));
            cells.push(format!("{:.1}", r.amortized_us));
            match &r.paper {
                Some(p) => {
                    cells.push(format!("{}", p.total_ms));
                    cells.push(format!("{}", p.amortized_us));
                    cells.push(format!(
                        "{:.2}",
                        r.ours[0].timing.median_us / 1000.0 / p.total_ms
                    ));
                }
                None => cells.extend(["-", "-", "-"].map(String::from)),
            }
            cells.push(bits(r.accuracy.bits_poly));
            cells.push(format!("{:.1}", r.accuracy.bits_true));
            cells.push(bits(r.accuracy.approx_bits));
            cells
        })
        .collect();
    markdown_table(&header_refs, &table)
}

/// `rnsfhe bench ckks-table2`.
pub fn run(options: &BenchOptions) -> anyhow::Result<()> {
    let machine = Machine::detect();
    let preset = Preset::PaperTable2;
    let config = config(options.quick);
    let threads = thread_counts(machine.logical_cpus);
    let rows = if options.quick {
        &ROWS[..QUICK_ROWS]
    } else {
        &ROWS[..]
    };
    eprintln!(
        "ckks-table2: {preset:?}: keys, inputs, a check of each of {} rows, then {} rounds with {threads:?} \
         threads ...",
        rows.len(),
        config.samples
    );
    let load_start = load_average();
    let (params, out) = measure(preset.params(), preset, rows, &threads, &config)?;
    let load_end = load_average();

    println!(
        "## RNS-CKKS Table 2: x^-1, exp and sigmoid on 2^13 slots{}\n",
        if options.quick { " (--quick)" } else { "" }
    );
    println!("{}", machine.markdown_header());
    println!("{}", load_average_line(&load_start, &load_end));
    println!("{}", params.markdown());
    println!(
        "- inputs: {} reals on the row's interval (the generator of bench/peers/peerlib.py), one ciphertext \
         (public-key encryption); times: fresh ciphertext to the encrypted result, median of {} rounds, \
         milliseconds; every round runs every row in each rayon pool ({threads:?} threads), interleaved; \
         amortized = 1-thread time / {} slots\n\
         - bits: -log2 of the largest error over the slots (real parts; imaginary parts against 0), against \
         the same polynomial evaluated in plaintext and against the true function; last column: the \
         polynomial alone against the function at the same inputs (the approximation error)\n\
         - paper: HEAAN-RNS, RNS-CKKS Table 2 (Intel Core i5 at 2.9 GHz, single thread; \"at least 32 bits \
         of precision\"; inputs not stated). Taylor polynomials of degree 7 are within 2^-32 of exp and \
         sigmoid only for |x| up to about 1/4, Algorithm 2 of degree 15 within 2^-32 of 1/x only on about \
         [0.75, 1.25]: the rows on those intervals show it; on [-1, 1] and [0.5, 1.5] the approximation \
         error dominates\n",
        params.slots, config.samples, params.slots
    );
    print!("{}", markdown(&out, &threads));
    println!();
    let report = CkksTableReport {
        table: "ckks-table2",
        machine,
        quick: options.quick,
        load_average: [load_start, load_end],
        timing: config,
        params,
        rows: out,
    };
    let path = write_json(&options.out, "ckks-table2", &report)?;
    println!("JSON: {}", path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A smoke run of the table's code at a small ring (N = 2^12, the chain of Table 2).
    #[test]
    fn smoke_run_at_a_small_ring() {
        let mut params = Preset::PaperTable2.params();
        params.log_n = 12;
        let config = TimingConfig {
            warmup_ms: 0,
            samples: 1,
            min_sample_us: 0,
        };
        let rows = [ROWS[0], ROWS[1], ROWS[2], ROWS[7]];
        let (summary, out) = measure(params, Preset::PaperTable2, &rows, &[1, 2], &config).unwrap();
        assert_eq!(summary.slots, 1 << 11);
        assert_eq!(out.len(), 4);
        for r in &out {
            let poly = r.accuracy.bits_poly.unwrap();
            assert!(poly > 25.0, "{}: {poly} bits against the polynomial", r.op);
            assert!(r.accuracy.levels_used <= 4, "{}", r.op);
            assert_eq!(r.ours.len(), 2);
        }
        let md = markdown(&out, &[1, 2]);
        assert!(md.contains("x^-1") && md.contains("bits vs function"));
    }

    #[test]
    fn rows_parse_and_fit_in_four_levels() {
        for (name, _) in ROWS {
            let op = FnOp::parse(name).unwrap();
            assert!(op.depth().unwrap() <= 4, "{name}");
        }
    }
}
