//! The `rnsfhe` command: `demo`, `bench <table>` and `params`.
//!
//! Every failure is reported as a message on stderr with a non-zero exit code; nothing here panics on user
//! input.

mod bench;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Homomorphic encryption in RNS form (CKKS, BFV, PEGASUS): demo, benchmarks and parameter presets.
#[derive(Debug, Parser)]
#[command(name = "rnsfhe", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the demo (for now the math layer: a prime search and a short NTT benchmark).
    Demo,
    /// Regenerate a benchmark table as markdown (stdout) and JSON (`<out>/<table>.json`).
    Bench(BenchArgs),
    /// List the CKKS parameter presets with log QP, depth, slots, scale and estimated security.
    Params,
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

/// The benchmark tables, one module of `bench/` each.
#[derive(Debug, Subcommand)]
enum BenchTable {
    /// Forward negacyclic NTT: our plan vs the raw tfhe-ntt engine vs the scalar reference, N = 2^12..2^16.
    Ntt,
    /// RNS basis conversion (Fast / ExactFloat / ExactInteger) for l = 2..30 source and k = 1..4 target
    /// primes, HPS simple and complex scaling, and the failure rate of the unguarded Qu-Xu error term.
    Conversion,
    /// RNS-CKKS Table 1 (Enc, Dec, Add, CMult, Mult&RS, plus Rotate and KeyGen and the precision after each)
    /// for the paper's three presets, with the paper's numbers beside ours.
    CkksTable1,
    /// Serve the CKKS operations of Table 1 over the line protocol of `bench/peers/compare_table1.py`
    /// (JSON commands on stdin, timings on stdout), so the peer driver can interleave us with OpenFHE and SEAL.
    CkksOp {
        /// The parameter preset (e.g. PaperTable1L5; `rnsfhe params` lists them).
        #[arg(long)]
        preset: String,
    },
}

/// `rnsfhe demo`. Until the CKKS scheme exists it shows the math layer: a prime search, an NTT correctness
/// check and a short NTT benchmark.
mod demo {
    use rand::{Rng, SeedableRng};
    use rnsfhe_math::ntt::negacyclic_schoolbook;
    use rnsfhe_math::primes::{
        closeness_eta, is_prime, ntt_primes_near_power_of_two, ntt_primes_of_bits, qu_xu_max_eta,
        qu_xu_primes,
    };
    use rnsfhe_math::NttPlan;

    use crate::bench::{self, TimingConfig};

    /// Degree of the prime search.
    const LOG_N: u32 = 16;
    /// Scaling-prime size of the CKKS-style chain.
    const SCALE_BITS: u32 = 55;
    /// Number of scaling primes.
    const LEVELS: usize = 8;

    fn list(primes: &[u64]) -> String {
        primes
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Runs the demo.
    pub fn run() -> anyhow::Result<()> {
        println!("# rnsfhe demo: the math layer");
        println!();
        println!("The CKKS demo (encode, encrypt, compute, decrypt) arrives with the CKKS issue; until then");
        println!("this demo shows what works today: modular arithmetic, prime search and the NTT.");
        println!();

        let n = 1usize << LOG_N;
        let two_n = 2 * n as u64;
        println!("## 1. Prime search for N = 2^{LOG_N} (primes p = 1 mod 2N = {two_n})");
        println!();
        let chain = ntt_primes_near_power_of_two(SCALE_BITS, two_n, LEVELS)?;
        println!("CKKS scaling primes near 2^{SCALE_BITS} (RNS-CKKS Appendix B), alternating around 2^{SCALE_BITS} so that");
        println!("the product q0...qi stays close to 2^({SCALE_BITS}(i+1)) (drift = log2(q0...qi) - {SCALE_BITS}(i+1)):");
        let mut drift = 0.0f64;
        for (i, &p) in chain.iter().enumerate() {
            drift += (p as f64).log2() - f64::from(SCALE_BITS);
            let offset = i128::from(p) - (1i128 << SCALE_BITS);
            println!(
                "  q{i} = {p} = 2^{SCALE_BITS} {} {:<9} drift {drift:+.1e}",
                if offset < 0 { '-' } else { '+' },
                offset.unsigned_abs(),
            );
        }
        let special = ntt_primes_of_bits(61, two_n, 2, &chain)?;
        println!(
            "Special (key-switching) primes of 61 bits: {}",
            list(&special)
        );
        let eta = qu_xu_max_eta(SCALE_BITS, two_n, LEVELS)?;
        let qx = qu_xu_primes(SCALE_BITS, eta, two_n, LEVELS, &[])?;
        println!("Qu-Xu Algorithm 2: the largest eta with {LEVELS} primes within 2^-eta of 2^{SCALE_BITS} is eta = {eta}");
        println!("Qu-Xu Algorithm 3 primes: {}", list(&qx));
        println!(
            "Check: closeness eta of these primes = {}, all prime and = 1 mod 2N: {}",
            closeness_eta(&qx, SCALE_BITS),
            chain
                .iter()
                .chain(&special)
                .chain(&qx)
                .all(|&p| is_prime(p) && p % two_n == 1)
        );
        println!();

        let small_n = 1usize << 10;
        let p = chain[0];
        println!("## 2. NTT check: N = {small_n}, p = q0");
        println!();
        let plan = NttPlan::new(small_n, p)?;
        let m = *plan.modulus();
        let mut rng = rand::rngs::StdRng::seed_from_u64(2024);
        let a: Vec<u64> = (0..small_n).map(|_| rng.gen_range(0..p)).collect();
        let b: Vec<u64> = (0..small_n).map(|_| rng.gen_range(0..p)).collect();
        let (mut fa, mut fb) = (a.clone(), b.clone());
        plan.forward(&mut fa)?;
        plan.forward(&mut fb)?;
        let mut product: Vec<u64> = fa.iter().zip(&fb).map(|(&x, &y)| m.mul(x, y)).collect();
        plan.inverse(&mut product)?;
        plan.inverse(&mut fa)?;
        let round_trip = fa == a;
        let same_product = product == negacyclic_schoolbook(&m, &a, &b)?;
        println!("inverse(forward(a)) == a: {round_trip}");
        println!("a * b mod (X^N + 1) by NTT == schoolbook product: {same_product}");
        println!(
            "engine uses AVX-512 IFMA for this prime: {}",
            plan.uses_ifma()
        );
        if !(round_trip && same_product) {
            anyhow::bail!("the NTT check failed");
        }
        println!();

        println!("## 3. Short NTT benchmark (full table: `rnsfhe bench ntt`)");
        println!();
        println!("{}", bench::Machine::detect().markdown_header());
        println!();
        let rows = bench::ntt::measure_rows([13, 15], &[49, 55], &TimingConfig::QUICK)?;
        print!("{}", bench::ntt::markdown(&rows));
        Ok(())
    }
}

/// `rnsfhe params`: the CKKS presets with their sizes and security.
mod params {
    use rnsfhe_ckks::{CkksContext, Preset};

    use crate::bench::markdown_table;

    /// Builds every preset's context and prints N, log QP, levels, slots, scale and security.
    pub fn run() -> anyhow::Result<()> {
        let mut rows = Vec::new();
        for preset in Preset::ALL {
            let ctx = CkksContext::new(preset.params())?;
            let p = ctx.params();
            let sec = ctx.security();
            rows.push(vec![
                format!("{preset:?}"),
                format!("2^{}", p.log_n),
                format!("{:.1}", ctx.log_q()),
                format!("{:.1}", ctx.log_qp()),
                format!("{}", p.levels),
                format!("{}", ctx.max_slots()),
                format!("2^{}", p.log_scale),
                format!(
                    "{} x {} bits, dnum {}",
                    p.special_primes, p.special_bits, p.dnum
                ),
                format!("{sec}"),
            ]);
        }
        println!("## CKKS presets\n");
        print!(
            "{}",
            markdown_table(
                &[
                    "preset",
                    "N",
                    "log Q",
                    "log QP",
                    "depth",
                    "slots",
                    "scale",
                    "special primes",
                    "security"
                ],
                &rows
            )
        );
        Ok(())
    }
}

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
                BenchTable::CkksOp { preset } => bench::ckks::serve(&preset),
            }
        }
        Command::Params => params::run(),
    }
}

fn main() -> ExitCode {
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
}
