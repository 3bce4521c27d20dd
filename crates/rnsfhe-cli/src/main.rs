//! The `rnsfhe` command: `demo`, `bench <table>` (the tables of `rnsfhe-bench`), `params` and `sizes`.
//!
//! Every failure is reported as a message on stderr with a non-zero exit code; nothing here panics on user
//! input.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use rnsfhe_bench as bench;
use rnsfhe_bench::pegasus_pipeline::{PipelineRows, PipelineSelection};
use rnsfhe_pegasus::PipelinePreset;

/// mimalloc instead of the system allocator: HE operations allocate and free polynomials of several MB
/// (60 MB of fresh buffers per BFV multiplication at depth 20); glibc's malloc returns such blocks to the
/// kernel and page-faults them back on the next call, which cost 10-15 % of a multiplication here.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The name of the global allocator, reported with every benchmark's machine description
/// ([`bench::set_allocator`]).
const ALLOCATOR: &str = "mimalloc";

/// Homomorphic encryption in RNS form (CKKS, BFV, PEGASUS): demo, benchmarks and parameter presets.
#[derive(Debug, Parser)]
#[command(name = "rnsfhe", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the demo: an encrypted computation with CKKS (values, precision, timings), then the layers below.
    Demo,
    /// Regenerate a benchmark table as markdown (stdout) and JSON (`<out>/<table>.json`).
    Bench(BenchArgs),
    /// List every CKKS and BFV preset (N, log QP, depth, slots, scale, HE-Standard check, estimated
    /// security, expected precision, INSECURE marker) and the PEGASUS parameter and pipeline presets
    /// (the CKKS chain and the estimate of every key), or show one preset in detail with its primes.
    Params {
        /// A preset name (case-insensitive, e.g. PaperTable1L5, Rec128N14, T2Depth20, Secure128); all if
        /// omitted.
        preset: Option<String>,
    },
    /// Wire sizes of every object of every CKKS and BFV preset, of the PEGASUS keys beside the paper's and
    /// of every key of the PEGASUS pipeline presets, seeded and expanded (generates keys: about a minute).
    Sizes,
}

/// Arguments of `rnsfhe bench`.
#[derive(Debug, clap::Args)]
struct BenchArgs {
    #[command(subcommand)]
    table: BenchTable,
    #[command(flatten)]
    options: BenchCliOptions,
}

/// Options shared by every benchmark table; accepted before or after the table name.
#[derive(Debug, clap::Args)]
struct BenchCliOptions {
    /// Fewer repetitions and smaller sizes (a smoke run, not for publication).
    #[arg(long, global = true)]
    quick: bool,
    /// Directory for the JSON results (created if missing).
    #[arg(
        long,
        value_name = "DIR",
        global = true,
        default_value = "bench-results"
    )]
    out: PathBuf,
}

/// The benchmark tables, one module of `rnsfhe-bench` each.
#[derive(Debug, Subcommand)]
enum BenchTable {
    /// Forward negacyclic NTT: our plan vs the raw tfhe-ntt engine vs the scalar reference, N = 2^12..2^16.
    Ntt,
    /// RNS basis conversion (Fast / ExactFloat / ExactInteger) for l = 2..30 source and k = 1..4 target
    /// primes, HPS simple and complex scaling, and the failure rate of the unguarded Qu-Xu error term.
    Conversion,
    /// RNS-CKKS Table 1 (Enc, Dec, Add, CMult, Mult&RS, plus Rotate and KeyGen and the precision after each)
    /// for the paper's three presets, with the paper's numbers beside ours, then each fast-prime preset
    /// (primes below 2^50) interleaved with the paper preset of its N and depth.
    CkksTable1,
    /// RNS-CKKS Figure 1: bits of precision after each of L successive multiplications, for both rescaling
    /// policies and all three conversion modes.
    CkksPrecision,
    /// Qu-Xu Tables 2-5 (Fast / Exact / ExactHPS conversion in key switching: precision and time of one
    /// multiplication and one rotation, GHS and hybrid, both rescalings) and the data of Figures 1-2.
    ExactConversion,
    /// RNS-CKKS Table 2: x^-1 (CKKS Algorithm 2), exp and sigmoid (Taylor, degree 7) and Chebyshev
    /// interpolants on 2^13 slots at N = 2^14, log Q_L = 281, with precision and the paper's numbers beside.
    CkksTable2,
    /// RNS-CKKS Table 3: mean and variance of 2^13 numbers at N = 2^14, log Q_L = 171 (1 and 2 threads),
    /// with the error and the paper's numbers beside.
    CkksTable3,
    /// RNS-CKKS Table 4: logistic-regression training on encrypted lbw and uis data (Kim et al.'s Nesterov
    /// gradient descent, 5 iterations) at N = 2^16, log q = 40, with accuracy and AUC against the plaintext
    /// procedure and the paper's numbers beside.
    CkksTable4,
    /// Serve the function and statistics operations of Tables 2 and 3 over the line protocol of
    /// `bench/peers/compare_functions.py` (names like `mean` or `cheb:sigmoid:-4:4:15`).
    CkksFnOp {
        /// CKKS parameters as JSON: {"log_n": 14, "q_bits": [60, 55, ...], "p_bits": [60, 60],
        /// "scale_bits": 55, "dnum": 3}.
        #[arg(long, required_unless_present = "plan")]
        params: Option<String>,
        /// Comma-separated operation names.
        #[arg(long)]
        ops: String,
        /// Print the levels each operation consumes as JSON and exit.
        #[arg(long)]
        plan: bool,
    },
    /// Serve the CKKS operations of Table 1 over the line protocol of `bench/peers/compare_table1.py`
    /// (JSON commands on stdin, timings on stdout), so the peer driver can interleave us with OpenFHE and SEAL.
    CkksOp {
        /// The parameter preset (e.g. PaperTable1L5; `rnsfhe params` lists them).
        #[arg(long)]
        preset: String,
    },
    /// CKKS bootstrapping: time, precision (min / median bits over slots), levels left, key generation
    /// and key size for the test chain, the comparison's quick set-up and (without --quick) the
    /// bootstrapping presets BootTestN15 and Boot128N16 (h = 32) and OpenFHE's reference set-up matched
    /// at N = 2^15 and 2^16 (one key set in memory at a time).
    CkksBootstrap {
        /// Only the set-ups of these log2 N (comma-separated, e.g. 11,12,15); all if omitted.
        #[arg(long, value_delimiter = ',')]
        log_n: Vec<u32>,
    },
    /// Serve CKKS bootstrapping over the protocol of `bench/peers/compare_bootstrap.py` (a set-up as
    /// JSON, a ready line, then timed bootstrappings with their precision), beside OpenFHE's EvalBootstrap.
    CkksBootstrapOp {
        /// The set-up as JSON: {"log_n": 12, "slots": 2048, "security": "none", "secret":
        /// "uniform_ternary", "level_budget": [2, 2], "levels_after": 2, ...}.
        #[arg(long)]
        params: String,
    },
    /// HPS Table 3 (BFV): Dec, Mul, Relin and the split of Mul between CRT extension, scaling and NTT,
    /// single-threaded, for the t = 2 presets and t = 65537 at depths 1..30, with the paper's numbers beside.
    BfvTable3,
    /// HPS Table 4 (BFV): thread scaling of Dec, Mul, Relin at L = 20 (1, 2, 4, ... threads up to the
    /// logical CPUs), with the paper's numbers beside.
    BfvTable4,
    /// Serve BFV operations over the line protocol of `bench/peers/compare_bfv.py` (JSON commands on
    /// stdin, timings on stdout), so the peer driver can interleave us with OpenFHE BFV.
    BfvOp {
        /// A BFV preset (T2Depth1 ... T2Depth100); or give --depth.
        #[arg(long, conflicts_with = "depth")]
        preset: Option<String>,
        /// Multiplicative depth L: parameters from BfvParams::generate(t, L).
        #[arg(long)]
        depth: Option<usize>,
        /// Plaintext modulus t (with --depth).
        #[arg(long, default_value_t = 65537)]
        t: u64,
        /// Key switching: as generated (BfvParams::generate: hybrid where it fits and is faster), CRT
        /// (HPS Sections 3.3 and 4.5) or hybrid with special primes in the security room.
        #[arg(long, value_enum, default_value_t = BfvKeySwitching::Generated)]
        key_switching: BfvKeySwitching,
    },
    /// PEGASUS Table V: the LWE rows (single thread, Table IV dimensions: the key switches N = 2^16 ->
    /// 1024 and 4096 -> 1024 and a look-up table by blind rotation, and the throughput of a batch of LUTs
    /// on all threads) and the pipeline rows (S2C, extraction by each dimension switch, LT, ring packing,
    /// CoeffsToSlots, F_mod, repacking by each path, end to end, on 1 and 2 threads, and the accuracy of
    /// the round trip), beside the paper and OpenPEGASUS. The LWE rows take a few minutes, the pipeline
    /// rows about an hour.
    PegasusTable5 {
        /// Which rows: the LWE rows, the pipeline rows, or all.
        #[arg(long, value_enum, default_value_t = Table5Part::All)]
        part: Table5Part,
        /// A pipeline preset (Table4, Secure128, InsecureTest; repeat for several). Default: Table4 and
        /// Secure128 (--quick: InsecureTest).
        #[arg(long = "preset", value_name = "PRESET")]
        presets: Vec<String>,
        /// log2 of the number of values l of the stage rows (repeat for several). Default: 8, 10, 12
        /// (--quick: 4, 6).
        #[arg(long = "log-l", value_name = "LOG_L", value_parser = clap::value_parser!(u32).range(1..=15))]
        log_l: Vec<u32>,
        /// log2 of l for the end-to-end and accuracy rows. Default: 8 (--quick: 4).
        #[arg(long, value_name = "LOG_L", value_parser = clap::value_parser!(u32).range(1..=15))]
        e2e_log_l: Option<u32>,
        /// log2 of the look-up-table ring degree n of the end-to-end and accuracy rows (repeat for
        /// several; PEGASUS Fig. 7: each doubling halves the tables' error and doubles their time).
        /// Default: the preset's (12 for Table4 and Secure128).
        #[arg(long = "lut-log-n", value_name = "LOG_N", value_parser = clap::value_parser!(u32).range(1..=17))]
        lut_log_n: Vec<u32>,
        /// Which pipeline rows: all, the end-to-end and accuracy rows (e2e), or the accuracy rows alone
        /// (accuracy: one untimed run per function, path and ring).
        #[arg(long, value_enum, default_value_t = PipelineOnly::All)]
        only: PipelineOnly,
        /// A function of the accuracy rows (sigmoid, ReLU, sqrt(abs(x)); repeat for several). Default:
        /// all three.
        #[arg(long = "function", value_name = "NAME")]
        functions: Vec<String>,
        /// A repacking path of the end-to-end and accuracy rows (ring, lt; repeat for both). Default:
        /// both.
        #[arg(long = "path", value_name = "PATH")]
        paths: Vec<String>,
    },
    /// PEGASUS Fig. 7: accuracy (mean and largest error, log2) of look-up tables of sigmoid, tanh,
    /// sqrt|x|, ReLU, sign and 1/x at n = 2^11..2^13 per blind-rotation algorithm, through KS, LUT, KS
    /// (Fig. 6 steps 4-6), beside OpenPEGASUS and the paper, with the measured error variances of key
    /// switching and blind rotation against their formulas, and a PNG plot (~1 h on 2 cores).
    PegasusFigure7 {
        /// Uniform inputs per function. Default: 1000 (--quick: 100).
        #[arg(long)]
        samples: Option<usize>,
        /// log2 of the look-up-table ring degree n (repeat for several). Default: 11, 12, 13
        /// (--quick: 10, 11).
        #[arg(long = "log-n", value_name = "LOG_N")]
        log_n: Vec<u32>,
        /// A blind-rotation algorithm (Ternary, Binary, Lmkcdey; repeat for several). Default: all.
        #[arg(long = "algorithm", value_name = "ALGORITHM")]
        algorithms: Vec<String>,
        /// A function (sigmoid, tanh, sqrt|x|, ReLU, sign, 1/x; repeat for several). Default: all.
        #[arg(long = "function", value_name = "FUNCTION")]
        functions: Vec<String>,
    },
    /// PEGASUS Table VI: throughput of the one-table functions (sigmoid, ReLU, sqrt|x|, 1/x) and of
    /// max-pooling 2x2 and 4x4, latency of min-index and bitonic sort, on LWE ciphertexts of the pipeline
    /// (extraction and repacking not timed, as in the paper), at 1 and 2 threads, with the largest error
    /// of every row and the paper's single-thread figures beside. Table IV by default (its key set takes a
    /// few GB; run it alone); --quick: InsecureTest.
    PegasusTable6 {
        /// A pipeline preset (Table4, Secure128, InsecureTest; repeat for several). Default: Table4
        /// (--quick: InsecureTest).
        #[arg(long = "preset", value_name = "PRESET")]
        presets: Vec<String>,
        /// Thread counts (repeat for several). Default: 1 and 2.
        #[arg(long = "threads", value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
        threads: Vec<u32>,
        /// log2 of the min-index sizes (repeat for several). Default: 4, 5, 6 (--quick: 4).
        #[arg(long = "min-index-log-t", value_name = "LOG_T", value_parser = clap::value_parser!(u32).range(1..=8))]
        min_index_log_t: Vec<u32>,
        /// log2 of the sort sizes (repeat for several). Default: 5 (--quick: 3).
        #[arg(long = "sort-log-t", value_name = "LOG_T", value_parser = clap::value_parser!(u32).range(1..=6))]
        sort_log_t: Vec<u32>,
    },
    /// PEGASUS Table VII: private decision trees (scikit-learn trees on Iris, Housing, Spambase from the
    /// file of docs/bench/pegasus_table7_trees.py) on encrypted test queries: accuracy encrypted and in
    /// plaintext, server and client time, bytes each way, resumable. PegasusTable4 by default; --quick:
    /// InsecureTest, 5 queries per dataset.
    PegasusTable7 {
        /// The trees file. Default: target/pegasus-table7-trees.json.
        #[arg(long = "trees", value_name = "FILE")]
        trees: Option<std::path::PathBuf>,
        /// The LWE-side preset (PegasusTable4, PegasusTable4FastSpecial, Secure128, InsecureTest).
        #[arg(long = "preset", value_name = "PRESET")]
        preset: Option<String>,
        /// A dataset of the file (repeat for several). Default: all.
        #[arg(long = "dataset", value_name = "NAME")]
        datasets: Vec<String>,
        /// Thread counts of the timing rows (repeat for several); the accuracy run uses the largest.
        /// Default: 1 and 2 (--quick: 1).
        #[arg(long = "threads", value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
        threads: Vec<u32>,
        /// Test queries per dataset at most. Default: all (--quick: 5).
        #[arg(long = "max-queries", value_name = "N")]
        max_queries: Option<usize>,
        /// Queries timed per thread count (0: none). Default: 3 (--quick: 1).
        #[arg(long = "timing-queries", value_name = "N")]
        timing_queries: Option<usize>,
        /// The public feature map: `quantiles:K` (K + 1 training quantiles) or `ranges` (training
        /// ranges). Default: quantiles:64.
        #[arg(long = "scaling", value_name = "MAP")]
        scaling: Option<String>,
        /// Start over instead of resuming from an earlier pegasus-table7.json.
        #[arg(long = "fresh")]
        fresh: bool,
    },
    /// PEGASUS Table VIII: one secure k-means update (distance, extraction, min-index and reciprocal,
    /// repacking, centroid) on N uniform points of d = 16 features, with the closest-assignment ratio
    /// rho, at 1 and 2 threads; N in {256, 1024} x K in {2, 4} (--full: the whole table, hours). Rows go
    /// to pegasus-table8.json as they are measured; a run resumes from the rows already there.
    /// Table IV by default (a few GB per key set; run it alone); --quick: InsecureTest.
    PegasusTable8 {
        /// The whole table: N in {256, 1024, 4096} x K in {2, 4, 8} (hours; resumable).
        #[arg(long)]
        full: bool,
        /// A pipeline preset (Table4, Secure128, InsecureTest). Default: Table4 (--quick: InsecureTest).
        #[arg(long = "preset", value_name = "PRESET")]
        preset: Option<String>,
        /// log2 of the look-up-table ring (the paper's rho column at 2^13). Default: the preset's.
        #[arg(long = "lut-log-n", value_name = "LOG_N")]
        lut_log_n: Option<u32>,
        /// Thread counts (repeat for several). Default: 1 and 2.
        #[arg(long = "threads", value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
        threads: Vec<u32>,
        /// Rows as N:K (repeat for several), e.g. 256:2. Default: the table's.
        #[arg(long = "size", value_name = "N:K")]
        sizes: Vec<String>,
    },
}

/// The key switching of `bench bfv-op` (`--key-switching`; see `bench::bfv::OpKeySwitching`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum BfvKeySwitching {
    /// As the parameters come (BfvParams::generate's choice, or the preset's).
    Generated,
    /// CRT key switching (HPS Sections 3.3 and 4.5).
    Crt,
    /// Hybrid key switching with special primes in the security room.
    Hybrid,
}

impl From<BfvKeySwitching> for bench::bfv::OpKeySwitching {
    fn from(k: BfvKeySwitching) -> Self {
        match k {
            BfvKeySwitching::Generated => Self::AsGenerated,
            BfvKeySwitching::Crt => Self::Crt,
            BfvKeySwitching::Hybrid => Self::Hybrid,
        }
    }
}

/// The rows of `bench pegasus-table5` (`--part`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Table5Part {
    /// The LWE rows (a few minutes).
    Lwe,
    /// The pipeline rows (about an hour).
    Pipeline,
    /// Both.
    All,
}

/// The pipeline rows of `bench pegasus-table5` (`--only`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum PipelineOnly {
    /// Every pipeline row.
    All,
    /// The end-to-end and accuracy rows.
    E2e,
    /// The accuracy rows alone.
    Accuracy,
}

impl From<PipelineOnly> for PipelineRows {
    fn from(only: PipelineOnly) -> Self {
        match only {
            PipelineOnly::All => Self::All,
            PipelineOnly::E2e => Self::EndToEnd,
            PipelineOnly::Accuracy => Self::Accuracy,
        }
    }
}

impl From<Table5Part> for bench::pegasus::Table5Part {
    fn from(part: Table5Part) -> Self {
        match part {
            Table5Part::Lwe => Self::Lwe,
            Table5Part::Pipeline => Self::Pipeline,
            Table5Part::All => Self::All,
        }
    }
}

mod demo;
mod sizes;

mod params_cmd;

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Demo => demo::run(),
        Command::Bench(args) => {
            let options = bench::BenchOptions {
                quick: args.options.quick,
                out: args.options.out,
            };
            match args.table {
                BenchTable::Ntt => bench::ntt::run(&options),
                BenchTable::Conversion => bench::conversion::run(&options),
                BenchTable::CkksTable1 => bench::ckks::run_table1(&options),
                BenchTable::CkksPrecision => bench::ckks_precision::run(&options),
                BenchTable::ExactConversion => bench::exact_conversion::run(&options),
                BenchTable::CkksTable2 => bench::ckks_table2::run(&options),
                BenchTable::CkksTable3 => bench::ckks_table3::run(&options),
                BenchTable::CkksTable4 => bench::ckks_table4::run(&options),
                BenchTable::CkksFnOp { params, ops, plan } => match (plan, params) {
                    (true, _) => bench::ckks_functions::plan(&ops),
                    (false, Some(params)) => bench::ckks_functions::serve(&params, &ops),
                    (false, None) => Err(anyhow::anyhow!("give --params JSON (or --plan)")),
                },
                BenchTable::CkksOp { preset } => bench::ckks::serve(&preset),
                BenchTable::CkksBootstrap { log_n } => bench::ckks_bootstrap::run(&options, &log_n),
                BenchTable::CkksBootstrapOp { params } => bench::ckks_bootstrap::serve(&params),
                BenchTable::BfvTable3 => bench::bfv::run_table3(&options),
                BenchTable::BfvTable4 => bench::bfv::run_table4(&options),
                BenchTable::PegasusTable5 {
                    part,
                    presets,
                    log_l,
                    e2e_log_l,
                    lut_log_n,
                    only,
                    functions,
                    paths,
                } => {
                    let mut selection = PipelineSelection::defaults(&options);
                    if !presets.is_empty() {
                        selection.presets = presets
                            .iter()
                            .map(|p| bench::parse_named("pipeline preset", &PipelinePreset::ALL, p))
                            .collect::<anyhow::Result<_>>()?;
                    }
                    if !log_l.is_empty() {
                        selection.log_l = log_l;
                    }
                    if let Some(e2e) = e2e_log_l {
                        selection.e2e_log_l = e2e;
                    }
                    selection.lut_log_n = lut_log_n;
                    selection.rows = only.into();
                    selection.functions = functions;
                    selection.paths = paths
                        .iter()
                        .map(|p| bench::pegasus_pipeline::parse_path(p))
                        .collect::<anyhow::Result<_>>()?;
                    bench::pegasus::run_table5_parts(&options, part.into(), &selection)
                }
                BenchTable::PegasusFigure7 {
                    samples,
                    log_n,
                    algorithms,
                    functions,
                } => {
                    let selection = bench::pegasus_figure7::Selection::from_args(
                        &options,
                        samples,
                        &log_n,
                        &algorithms,
                        &functions,
                    )?;
                    bench::pegasus_figure7::run_selection(&options, &selection)
                }
                BenchTable::PegasusTable6 {
                    presets,
                    threads,
                    min_index_log_t,
                    sort_log_t,
                } => {
                    let mut selection = bench::pegasus_table6::Table6Selection::defaults(&options);
                    if !presets.is_empty() {
                        selection.presets = presets
                            .iter()
                            .map(|p| bench::parse_named("pipeline preset", &PipelinePreset::ALL, p))
                            .collect::<anyhow::Result<_>>()?;
                    }
                    if !threads.is_empty() {
                        selection.threads = threads.into_iter().map(|t| t as usize).collect();
                    }
                    if !min_index_log_t.is_empty() {
                        selection.min_index_log_t = min_index_log_t;
                    }
                    if !sort_log_t.is_empty() {
                        selection.sort_log_t = sort_log_t;
                    }
                    bench::pegasus_table6::run_with(&options, &selection)
                }
                BenchTable::PegasusTable7 {
                    trees,
                    preset,
                    datasets,
                    threads,
                    max_queries,
                    timing_queries,
                    scaling,
                    fresh,
                } => {
                    let mut selection = bench::pegasus_table7::Table7Selection::defaults(&options);
                    if let Some(trees) = trees {
                        selection.trees = trees;
                    }
                    if let Some(p) = preset {
                        selection.preset =
                            bench::parse_named("LWE preset", &rnsfhe_lwe::PegasusPreset::ALL, &p)?;
                    }
                    selection.datasets = datasets;
                    if !threads.is_empty() {
                        selection.threads = threads.into_iter().map(|t| t as usize).collect();
                    }
                    if max_queries.is_some() {
                        selection.max_queries = max_queries;
                    }
                    if let Some(t) = timing_queries {
                        selection.timing_queries = t;
                    }
                    selection.quantiles = match scaling.as_deref() {
                        None => selection.quantiles,
                        Some("ranges") => None,
                        Some(m) => Some(
                            m.strip_prefix("quantiles:")
                                .and_then(|k| k.parse().ok())
                                .ok_or_else(|| {
                                    anyhow::anyhow!("--scaling takes `ranges` or `quantiles:K`")
                                })?,
                        ),
                    };
                    selection.fresh = fresh;
                    bench::pegasus_table7::run_with(&options, &selection)
                }
                BenchTable::PegasusTable8 {
                    full,
                    preset,
                    lut_log_n,
                    threads,
                    sizes,
                } => {
                    let mut selection =
                        bench::pegasus_table8::Table8Selection::defaults(&options, full);
                    if let Some(p) = preset {
                        selection.preset =
                            bench::parse_named("pipeline preset", &PipelinePreset::ALL, &p)?;
                    }
                    selection.lut_log_n = lut_log_n;
                    if !threads.is_empty() {
                        selection.threads = threads.into_iter().map(|t| t as usize).collect();
                    }
                    if !sizes.is_empty() {
                        selection.sizes = sizes
                            .iter()
                            .map(|s| {
                                let (n, k) = s
                                    .split_once(':')
                                    .ok_or_else(|| anyhow::anyhow!("--size {s}: expected N:K"))?;
                                Ok((n.trim().parse()?, k.trim().parse()?))
                            })
                            .collect::<anyhow::Result<_>>()?;
                    }
                    bench::pegasus_table8::run_with(&options, &selection)
                }
                BenchTable::BfvOp {
                    preset,
                    depth,
                    t,
                    key_switching,
                } => bench::bfv::serve(preset.as_deref(), depth, t, key_switching.into()),
            }
        }
        Command::Params { preset } => params_cmd::run(preset.as_deref()),
        Command::Sizes => sizes::run(),
    }
}

fn main() -> ExitCode {
    bench::set_allocator(ALLOCATOR);
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("rnsfhe: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn bench_options_are_accepted_before_and_after_the_table() {
        for argv in [
            &["rnsfhe", "bench", "ntt", "--quick", "--out", "x"][..],
            &["rnsfhe", "bench", "--quick", "--out", "x", "ntt"][..],
        ] {
            let cli = Cli::try_parse_from(argv).unwrap();
            match cli.command {
                Command::Bench(args) => {
                    assert!(args.options.quick);
                    assert_eq!(args.options.out, PathBuf::from("x"));
                    assert!(matches!(args.table, BenchTable::Ntt));
                }
                other => panic!("parsed as {other:?}"),
            }
        }
        let cli = Cli::try_parse_from(["rnsfhe", "bench", "ntt"]).unwrap();
        match cli.command {
            Command::Bench(args) => {
                assert!(!args.options.quick);
                assert_eq!(args.options.out, PathBuf::from("bench-results"));
            }
            other => panic!("parsed as {other:?}"),
        }
        assert!(Cli::try_parse_from(["rnsfhe", "bench", "nope"]).is_err());
    }

    #[test]
    fn bfv_op_takes_a_depth_or_a_preset() {
        let cli = Cli::try_parse_from(["rnsfhe", "bench", "bfv-op", "--depth", "5"]).unwrap();
        match cli.command {
            Command::Bench(args) => match args.table {
                BenchTable::BfvOp {
                    preset,
                    depth,
                    t,
                    key_switching,
                } => {
                    assert_eq!((preset, depth, t), (None, Some(5), 65537));
                    assert_eq!(key_switching, BfvKeySwitching::Generated);
                }
                other => panic!("parsed as {other:?}"),
            },
            other => panic!("parsed as {other:?}"),
        }
        let both = [
            "rnsfhe", "bench", "bfv-op", "--preset", "T2Depth5", "--depth", "5",
        ];
        assert!(Cli::try_parse_from(both).is_err());
    }
}
