//! The benchmark tables of `rnsfhe bench <table>` (the command lives in `rnsfhe-cli`): each module
//! regenerates one table as markdown (stdout) and JSON (`<out>/<table>.json`), and the `*-op` tables serve
//! the line protocol the peer comparisons of `bench/peers/` drive.
//!
//! This crate root holds what the tables share: the options, the timing helper ([`measure_interleaved`]),
//! the description of the machine ([`Machine`]: date, CPU, thread count, allocator), the output helpers, and
//! the line protocol of the peer comparisons ([`serve_line_protocol`]). The criterion micro-benchmarks of
//! the hot kernels are under `benches/` (`cargo bench -p rnsfhe-bench`).
//!
//! To add a table: a module `<table>.rs` here with a `run(&BenchOptions) -> anyhow::Result<()>`, a variant
//! of `BenchTable` in the command's `main.rs`, and a line in the dispatch there.

pub mod bfv;
pub mod ckks;
pub mod ckks_bootstrap;
pub mod ckks_functions;
pub mod ckks_precision;
pub mod ckks_table2;
pub mod ckks_table3;
pub mod ckks_table4;
pub mod conversion;
pub mod exact_conversion;
pub mod ntt;
pub mod pegasus;
pub mod pegasus_figure7;
pub mod pegasus_pipeline;
mod pegasus_setup;
pub mod pegasus_table6;
pub mod pegasus_table7;
pub mod pegasus_table8;

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::fs;
use std::hint::black_box;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use serde::Serialize;
use serde_json::{json, Value};

/// The global allocator named by [`set_allocator`].
static ALLOCATOR: OnceLock<&'static str> = OnceLock::new();

/// Records the name of the program's global allocator, reported with every table's machine description
/// and by [`version_string`]: large polynomials are allocated and freed on every operation, so it affects
/// the timings. A program that installs its own allocator calls this once at start; later calls are
/// ignored. Without it the tables report `system`.
pub fn set_allocator(name: &'static str) {
    // A second call keeps the first name: the allocator of a process cannot change.
    let _ = ALLOCATOR.set(name);
}

/// The name recorded by [`set_allocator`], `system` if none was.
pub fn allocator() -> &'static str {
    ALLOCATOR.get().copied().unwrap_or("system")
}

/// Options common to every table.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// A smoke run: fewer repetitions and smaller sizes.
    pub quick: bool,
    /// Directory for the JSON results.
    pub out: PathBuf,
}

/// How a measurement is repeated.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct TimingConfig {
    /// Time spent running all cases (interleaved) before measuring, in milliseconds.
    pub warmup_ms: u64,
    /// Number of measured rounds; each round times every case once.
    pub samples: usize,
    /// Each timed sample repeats its case until it lasts at least this long (batching of tiny calls), in
    /// microseconds.
    pub min_sample_us: u64,
}

impl TimingConfig {
    /// Settings for a published table.
    pub const FULL: Self = Self {
        warmup_ms: 200,
        samples: 201,
        min_sample_us: 1000,
    };
    /// Settings for a smoke run (`--quick`).
    pub const QUICK: Self = Self {
        warmup_ms: 20,
        samples: 31,
        min_sample_us: 200,
    };

    /// The settings matching `options.quick`.
    pub fn for_options(options: &BenchOptions) -> Self {
        if options.quick {
            Self::QUICK
        } else {
            Self::FULL
        }
    }
}

/// The outcome of timing one case: time per call, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Timing {
    /// Median over the samples.
    pub median_us: f64,
    /// Fastest sample.
    pub min_us: f64,
    /// Number of samples.
    pub samples: usize,
    /// Calls per sample.
    pub batch: u64,
}

/// The element of `all` whose `Debug` name is `name`, ignoring case (a preset, `PaperTable1L5` or
/// `T2Depth20`); the error says `unknown {what} "name"` and lists the names.
pub fn parse_named<T: Clone + std::fmt::Debug>(
    what: &str,
    all: &[T],
    name: &str,
) -> anyhow::Result<T> {
    all.iter()
        .find(|p| format!("{p:?}").eq_ignore_ascii_case(name))
        .cloned()
        .with_context(|| {
            let names: Vec<String> = all.iter().map(|p| format!("{p:?}")).collect();
            format!(
                "unknown {what} {name:?}: expected one of {}",
                names.join(", ")
            )
        })
}

/// Median of a non-empty slice (mean of the two middle values for even lengths); `NaN` if empty.
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    }
}

fn time_batch(case: &mut dyn FnMut(), batch: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..batch {
        case();
    }
    start.elapsed()
}

/// Times several cases interleaved, so that drift of the machine (frequency, other load) affects all of them
/// alike: after a warm-up, every round runs A, B, C, ... once each, and each case keeps one sample per round.
/// The starting case rotates from round to round (A B C, B C A, C A B, ...), so that no case always runs
/// right after the same neighbour (which would leave it the same cache state every time).
///
/// A case that takes less than `min_sample_us` is repeated `batch` times per sample (calibrated once), and
/// its sample is the mean over the batch. Returns one [`Timing`] per case, in the order given.
pub fn measure_interleaved(config: &TimingConfig, cases: &mut [&mut dyn FnMut()]) -> Vec<Timing> {
    // Calibrate the batch of each case on one call (after one untimed call to touch memory).
    let min_sample = Duration::from_micros(config.min_sample_us.max(1));
    let batches: Vec<u64> = cases
        .iter_mut()
        .map(|case| {
            case();
            let once = time_batch(*case, 1).max(Duration::from_nanos(1));
            (min_sample.as_nanos() / once.as_nanos()).clamp(1, 1 << 20) as u64
        })
        .collect();

    let warmup = Duration::from_millis(config.warmup_ms);
    let start = Instant::now();
    loop {
        for (case, &batch) in cases.iter_mut().zip(&batches) {
            black_box(time_batch(*case, batch));
        }
        if start.elapsed() >= warmup {
            break;
        }
    }

    let samples = config.samples.max(1);
    let mut per_call: Vec<Vec<f64>> = vec![Vec::with_capacity(samples); cases.len()];
    let k = cases.len();
    for round in 0..samples {
        for j in 0..k {
            let i = (round + j) % k;
            let elapsed = time_batch(cases[i], batches[i]);
            per_call[i].push(elapsed.as_secs_f64() * 1e6 / batches[i] as f64);
        }
    }
    per_call
        .iter()
        .zip(&batches)
        .map(|(v, &batch)| Timing {
            median_us: median(v),
            min_us: v.iter().copied().fold(f64::INFINITY, f64::min),
            samples: v.len(),
            batch,
        })
        .collect()
}

/// The machine a table was measured on; printed above every table and stored in its JSON.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    /// UTC date and time of the run, `YYYY-MM-DD HH:MM UTC`.
    pub date: String,
    /// CPU model name from `/proc/cpuinfo` (`unknown` elsewhere).
    pub cpu: String,
    /// Logical CPUs visible to the process.
    pub logical_cpus: usize,
    /// SIMD extensions relevant to the NTT that the CPU reports (avx2, avx512f, avx512ifma).
    pub simd: Vec<String>,
    /// Threads of the rayon pool (`RAYON_NUM_THREADS` or the number of logical CPUs).
    pub threads: usize,
    /// Operating system and architecture.
    pub target: String,
    /// Version of this crate.
    pub rnsfhe_version: String,
    /// The global allocator of the program ([`allocator`]): large polynomials are allocated and freed on
    /// every operation, so it affects the timings.
    pub allocator: String,
}

/// `rnsfhe <version> (allocator: <name>)`: how the peer drivers name our side.
pub fn version_string() -> String {
    format!(
        "rnsfhe {} (allocator: {})",
        env!("CARGO_PKG_VERSION"),
        allocator()
    )
}

impl Machine {
    /// Describes the current machine.
    pub fn detect() -> Self {
        let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let (cpu, simd) = parse_cpuinfo(&cpuinfo);
        Self {
            date: utc_now(),
            cpu,
            logical_cpus: std::thread::available_parallelism()
                .map(usize::from)
                .unwrap_or(1),
            simd,
            threads: rayon::current_num_threads(),
            target: format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH),
            rnsfhe_version: env!("CARGO_PKG_VERSION").to_string(),
            allocator: allocator().to_string(),
        }
    }

    /// The header lines printed above a table.
    pub fn markdown_header(&self) -> String {
        let simd = if self.simd.is_empty() {
            "none detected".to_string()
        } else {
            self.simd.join(", ")
        };
        format!(
            "- date: {}\n- CPU: {} ({} logical CPUs; SIMD: {})\n- threads: {} (rayon)\n- rnsfhe {} on {} \
             (allocator: {})",
            self.date,
            self.cpu,
            self.logical_cpus,
            simd,
            self.threads,
            self.rnsfhe_version,
            self.target,
            self.allocator
        )
    }
}

/// Extracts the model name and the NTT-relevant SIMD flags of the first processor in `/proc/cpuinfo`.
fn parse_cpuinfo(text: &str) -> (String, Vec<String>) {
    let field = |name: &str| {
        text.lines()
            .filter_map(|line| line.split_once(':'))
            .find(|(key, _)| key.trim() == name)
            .map(|(_, value)| value.trim().to_string())
    };
    let cpu = field("model name").unwrap_or_else(|| "unknown".to_string());
    let flags = field("flags").unwrap_or_default();
    let simd = ["avx2", "avx512f", "avx512ifma"]
        .into_iter()
        .filter(|f| flags.split_whitespace().any(|x| x == *f))
        .map(str::to_string)
        .collect();
    (cpu, simd)
}

/// The current UTC time as `YYYY-MM-DD HH:MM UTC`.
pub fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format_utc(secs)
}

/// Formats seconds since the Unix epoch as `YYYY-MM-DD HH:MM UTC` (proleptic Gregorian calendar).
pub fn format_utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// A markdown table with columns padded to equal width.
pub fn markdown_table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let width = |i: usize| {
        rows.iter()
            .filter_map(|r| r.get(i))
            .map(|c| c.chars().count())
            .chain(std::iter::once(headers[i].chars().count()))
            .max()
            .unwrap_or(0)
            .max(3)
    };
    let widths: Vec<usize> = (0..headers.len()).map(width).collect();
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, &w)| format!("{c:<w$}"))
            .collect();
        format!("| {} |\n", padded.join(" | "))
    };
    let mut out = line(headers.to_vec());
    let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
    out.push_str(&format!("|-{}-|\n", rule.join("-|-")));
    for row in rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    out
}

/// A buffer of `n` words starting on a 64-byte boundary (a cache line, an AVX-512 register), holding
/// `values`, so that timings do not depend on where the allocator happened to place a buffer.
#[derive(Debug)]
pub struct AlignedBuffer {
    storage: Vec<u64>,
    offset: usize,
    len: usize,
}

impl AlignedBuffer {
    /// A 64-byte aligned copy of `values`.
    pub fn from_slice(values: &[u64]) -> Self {
        let mut storage = vec![0u64; values.len() + 8];
        let misalignment = (storage.as_ptr() as usize % 64) / 8;
        let offset = (8 - misalignment) % 8;
        storage[offset..offset + values.len()].copy_from_slice(values);
        Self {
            storage,
            offset,
            len: values.len(),
        }
    }

    /// The words.
    pub fn as_slice(&self) -> &[u64] {
        &self.storage[self.offset..self.offset + self.len]
    }

    /// The words, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [u64] {
        &mut self.storage[self.offset..self.offset + self.len]
    }
}

impl Clone for AlignedBuffer {
    /// A new allocation has its own alignment: the offset is recomputed, not copied.
    fn clone(&self) -> Self {
        Self::from_slice(self.as_slice())
    }
}

/// Runs `f` on a worker of a new rayon pool of [`rayon::current_num_threads`] threads
/// (`RAYON_NUM_THREADS`; the peer drivers set 1): the protocol servers time every operation there, so
/// that its parallel sections are forks of that worker instead of jobs injected from outside while the
/// caller sleeps (as the Python bindings run each call).
///
/// Errors: the pool cannot be built; those of `f`.
pub fn on_pool_worker<T: Send>(f: impl FnOnce() -> anyhow::Result<T> + Send) -> anyhow::Result<T> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(rayon::current_num_threads())
        .build()
        .context("cannot build the thread pool")?
        .install(f)
}

/// Writes `value` as pretty JSON to `<dir>/<name>.json`, creating `dir`; returns the path written.
pub fn write_json(dir: &Path, name: &str, value: &impl Serialize) -> anyhow::Result<PathBuf> {
    fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the output directory {}", dir.display()))?;
    let path = dir.join(format!("{name}.json"));
    let text = serde_json::to_string_pretty(value).context("cannot serialize the results")?;
    fs::write(&path, text + "\n").with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// Serves the line protocol of `bench/peers/README.md` ("Protocol") on stdin / stdout, for `ckks-op` and
/// `bfv-op`: prints `ready` as one line, then answers `{"op": NAME, "reps": R}` (R clamped to 1..=10000) with
/// `{"op": NAME, "seconds": [...]}`, the wall-clock time of each of R calls of `run(NAME)`, or with
/// `{"op": NAME, "error": ...}` when a call fails, until `{"op": "quit"}` (answered `{"op": "quit", "ok":
/// true}`) or the end of input. A line that is not JSON is answered with `{"error": ...}`.
///
/// A command may add `"threads": T` (1..=[`MAX_PROTOCOL_THREADS`]): its calls then run, and are timed, on a
/// worker of a rayon pool of `T` threads (one pool per `T`, kept for the process), so that one process can
/// interleave one-thread and two-thread calls of the same operation on the same inputs: the speed-up
/// measured that way is the ratio of neighbouring blocks, free of the drift of a shared host between
/// processes (`bench/peers/thread_scaling.py`).
pub fn serve_line_protocol(
    ready: &Value,
    run: impl FnMut(&str) -> anyhow::Result<()> + Send,
) -> anyhow::Result<()> {
    serve_lines(
        std::io::stdin().lock(),
        std::io::stdout().lock(),
        ready,
        run,
    )
}

/// [`serve_line_protocol`] on any input and output.
fn serve_lines(
    input: impl BufRead,
    mut out: impl Write,
    ready: &Value,
    mut run: impl FnMut(&str) -> anyhow::Result<()> + Send,
) -> anyhow::Result<()> {
    writeln!(out, "{ready}")?;
    out.flush()?;
    let mut pools: BTreeMap<usize, rayon::ThreadPool> = BTreeMap::new();
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let answer = match serde_json::from_str::<Value>(&line) {
            Err(e) => json!({"error": format!("malformed command: {e}")}),
            Ok(cmd) => {
                let op = cmd.get("op").and_then(Value::as_str).unwrap_or("");
                if op == "quit" {
                    writeln!(out, "{}", json!({"op": "quit", "ok": true}))?;
                    out.flush()?;
                    return Ok(());
                }
                let reps = cmd
                    .get("reps")
                    .and_then(Value::as_u64)
                    .unwrap_or(1)
                    .clamp(1, 10_000);
                let timed = |run: &mut dyn FnMut(&str) -> anyhow::Result<()>| {
                    let mut seconds = Vec::with_capacity(reps as usize);
                    for _ in 0..reps {
                        let start = Instant::now();
                        if let Err(e) = run(op) {
                            return (seconds, Some(format!("{e:#}")));
                        }
                        seconds.push(start.elapsed().as_secs_f64());
                    }
                    (seconds, None)
                };
                let (seconds, error) = match cmd.get("threads") {
                    None => timed(&mut run),
                    Some(t) => match protocol_pool(&mut pools, t) {
                        Ok(pool) => pool.install(|| timed(&mut run)),
                        Err(e) => (Vec::new(), Some(format!("{e:#}"))),
                    },
                };
                match error {
                    Some(e) => json!({"op": op, "error": e}),
                    None => json!({"op": op, "seconds": seconds}),
                }
            }
        };
        writeln!(out, "{answer}")?;
        out.flush()?;
    }
    Ok(())
}

/// Most threads a protocol command may ask for (`"threads"`; see [`serve_line_protocol`]).
pub const MAX_PROTOCOL_THREADS: usize = 256;

/// The pool of a command's `"threads"` value, built on first use and kept in `pools`.
///
/// Errors: a value that is not an integer in `1..=MAX_PROTOCOL_THREADS`, or a pool that cannot be built.
fn protocol_pool<'a>(
    pools: &'a mut BTreeMap<usize, rayon::ThreadPool>,
    threads: &Value,
) -> anyhow::Result<&'a rayon::ThreadPool> {
    let t = threads
        .as_u64()
        .and_then(|t| usize::try_from(t).ok())
        .filter(|t| (1..=MAX_PROTOCOL_THREADS).contains(t))
        .with_context(|| {
            format!("\"threads\" must be an integer in 1..={MAX_PROTOCOL_THREADS}, got {threads}")
        })?;
    if let Entry::Vacant(slot) = pools.entry(t) {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .context("cannot build the thread pool")?;
        slot.insert(pool);
    }
    pools.get(&t).context("thread pool missing after insertion")
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_protocol_answers_until_quit() {
        let input = "{\"op\": \"a\", \"reps\": 3}\n\nnot json\n{\"op\": \"b\"}\n{\"op\": \"quit\"}\n{\"op\": \"a\"}\n";
        let mut out = Vec::new();
        let mut calls = Vec::new();
        let run = |op: &str| {
            calls.push(op.to_string());
            match op {
                "a" => Ok(()),
                _ => anyhow::bail!("unknown operation {op:?}"),
            }
        };
        serve_lines(input.as_bytes(), &mut out, &json!({"ready": true}), run).unwrap();
        assert_eq!(calls, ["a", "a", "a", "b"]);
        let lines: Vec<Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 5);
        assert_eq!(lines[0], json!({"ready": true}));
        assert_eq!(lines[1]["op"], "a");
        assert_eq!(lines[1]["seconds"].as_array().unwrap().len(), 3);
        assert!(lines[2]["error"]
            .as_str()
            .unwrap()
            .starts_with("malformed command"));
        assert_eq!(
            lines[3],
            json!({"op": "b", "error": "unknown operation \"b\""})
        );
        assert_eq!(lines[4], json!({"op": "quit", "ok": true}));
    }

    #[test]
    fn line_protocol_runs_commands_on_pools_of_the_threads_asked() {
        let input = concat!(
            "{\"op\": \"a\", \"reps\": 2, \"threads\": 2}\n",
            "{\"op\": \"a\", \"threads\": 1}\n",
            "{\"op\": \"a\", \"threads\": 0}\n",
            "{\"op\": \"a\", \"threads\": \"two\"}\n",
        );
        let mut out = Vec::new();
        let mut seen = Vec::new();
        let run = |_: &str| {
            seen.push(rayon::current_num_threads());
            Ok(())
        };
        serve_lines(input.as_bytes(), &mut out, &json!({"ready": true}), run).unwrap();
        assert_eq!(seen, [2, 2, 1]);
        let lines: Vec<Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[1]["seconds"].as_array().unwrap().len(), 2);
        assert_eq!(lines[2]["seconds"].as_array().unwrap().len(), 1);
        for bad in &lines[3..] {
            assert!(bad["error"]
                .as_str()
                .unwrap()
                .contains("\"threads\" must be"));
        }
    }

    #[test]
    fn the_first_allocator_name_is_kept() {
        set_allocator("test-allocator");
        set_allocator("another");
        assert_eq!(allocator(), "test-allocator");
        assert!(version_string().ends_with("(allocator: test-allocator)"));
        assert_eq!(Machine::detect().allocator, "test-allocator");
    }

    #[test]
    fn median_of_odd_and_even_lengths() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn dates_are_civil_utc() {
        assert_eq!(format_utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(format_utc(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(format_utc(1_700_000_000), "2023-11-14 22:13 UTC");
        assert_eq!(format_utc(4_107_542_399), "2100-02-28 23:59 UTC");
    }

    #[test]
    fn cpuinfo_model_and_flags() {
        let text = "processor\t: 0\nmodel name\t: Test CPU @ 3GHz\nflags\t\t: fpu avx2 avx512f avx512ifmax\n";
        let (cpu, simd) = parse_cpuinfo(text);
        assert_eq!(cpu, "Test CPU @ 3GHz");
        assert_eq!(simd, vec!["avx2".to_string(), "avx512f".to_string()]);
        assert_eq!(parse_cpuinfo("").0, "unknown");
    }

    #[test]
    fn interleaved_timing_counts_calls_and_orders_results() {
        let (mut a_calls, mut b_calls) = (0u64, 0u64);
        let mut a = || {
            a_calls += 1;
            std::thread::sleep(Duration::from_micros(300));
        };
        let mut b = || b_calls += 1;
        let config = TimingConfig {
            warmup_ms: 0,
            samples: 5,
            min_sample_us: 100,
        };
        let t = measure_interleaved(&config, &mut [&mut a, &mut b]);
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].samples, 5);
        assert_eq!(t[0].batch, 1);
        assert!(t[1].batch > 1, "tiny calls are batched");
        assert!(t[0].median_us >= 300.0 && t[0].min_us <= t[0].median_us);
        assert!(t[1].median_us < t[0].median_us);
        // 2 calibration calls, at least one warm-up round, 5 samples.
        assert!(a_calls >= 2 + 1 + 5);
        assert!(b_calls >= 2 + t[1].batch * 6);
    }

    #[test]
    fn aligned_buffers_start_on_a_cache_line() {
        for n in [0usize, 1, 7, 16, 1000] {
            let values: Vec<u64> = (0..n as u64).collect();
            let mut b = AlignedBuffer::from_slice(&values);
            assert_eq!(b.as_slice(), &values[..]);
            assert_eq!(b.as_mut_slice().as_ptr() as usize % 64, 0);
            let clones: Vec<AlignedBuffer> = (0..8).map(|_| b.clone()).collect();
            for c in &clones {
                assert_eq!(c.as_slice(), &values[..]);
                assert_eq!(c.as_slice().as_ptr() as usize % 64, 0);
            }
        }
    }

    #[test]
    fn markdown_table_is_aligned() {
        let t = markdown_table(&["a", "long header"], &[vec!["1".into(), "2".into()]]);
        assert_eq!(
            t,
            "| a   | long header |\n|-----|-------------|\n| 1   | 2           |\n"
        );
    }

    #[test]
    fn json_goes_to_the_named_directory() {
        let dir = std::env::temp_dir().join(format!("rnsfhe-bench-test-{}", std::process::id()));
        let path = write_json(&dir, "t", &serde_json::json!({"x": 1})).unwrap();
        assert_eq!(path, dir.join("t.json"));
        let back: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(back["x"], 1);
        fs::remove_dir_all(&dir).unwrap();
    }
}
