//! `rnsfhe bench exact-conversion`: the Qu-Xu paper's Tables 2-5 and the data of its Figures 1 and 2.
//!
//! # Tables 2-5
//!
//! For each row of the paper's Tables 2 (approximate rescaling, GHS), 3 (approximate rescaling, hybrid),
//! 4 (exact rescaling, GHS) and 5 (exact rescaling, hybrid) -- `q = 2^m` with `m` in {40, 50}, `log N` in
//! 13..16 and the paper's `K = ceil(log Q_L)` -- we build three CKKS contexts that differ only in the
//! basis conversion of key switching ([`ConversionMode::Fast`], [`ConversionMode::ExactInteger`] = the
//! paper's *Exact*, [`ConversionMode::ExactFloat`] = the paper's *ExactHPS*) and measure, as in the
//! paper's Section 5:
//!
//! * **precision**: the mean over all `N/2` slots of `-log2 |x - x'|` (real parts) for inputs uniform in
//!   `[0, 1]`, full packing, public-key encryption; of one multiplication (relinearization and rescaling,
//!   [`Evaluator::multiply_rescale`]) and of one rotation by one slot. Averaged over a few trials (the
//!   same number of slots, `2^15`, for every ring);
//! * **time**: the median of one multiplication (relinearize + rescale) and of one rotation, the six
//!   cases of a row interleaved ([`measure_interleaved`]) and run in a one-thread pool (the paper's
//!   experiments are single-threaded); fewer samples for the larger rings.
//!
//! ## Parameters
//!
//! All primes are NTT primes near `2^m`, `q_0` included (the paper's Setup: `q / q_j` within
//! `1 ± 2^-eta` for every `j`), `log2 Delta = m`; `K / m` primes. Where the paper does not say, we take
//! PALISADE 1.11's defaults (the paper's implementation base): hybrid key switching with `dnum = 3` digits
//! for depth above 3 and 2 otherwise, `P` made of 60-bit primes, at least as large as the largest digit;
//! GHS with `P` as many primes of `m` bits as `Q` has. Uniform ternary secret, `sigma = 3.2`.
//!
//! Where our parameter rules refuse a paper configuration, the row uses the closest accepted one and says
//! so (the `deviations` of the row, printed under each table): at least 3 primes (with 2, the product of two
//! values of `[0, 1]` at scale `~q_0` would wrap modulo `q_0` after its rescaling), then `P` of 60-bit
//! primes instead of `m`-bit ones, then one prime fewer at a time (for example when `ExactInteger`'s
//! Theorem 1 precondition does not hold for that many primes near `2^m` at that `N`). A row where nothing
//! is accepted is printed with the error, never dropped.
//!
//! # Figures 1 and 2
//!
//! `figure1.csv`: Theorem 1's lower bound `log2((r + l) / r)` on `eta` for `r = 0.001`, `l = 1..=60`.
//! `figure2.csv`: for `N = 2^14`, `q = 2^50`, `L = 1..=40`: the largest `eta` of Algorithm 2
//! ([`qu_xu_max_eta`]) and Theorem 1's bound `L 2^-eta / (1 - 2^-eta)` ([`theorem1_failure_bound`]).
//!
//! # Output
//!
//! Markdown on stdout and in `<out>/exact-conversion.md`, JSON in `<out>/exact-conversion.json`, the
//! figures in `<out>/figure1.csv` and `<out>/figure2.csv` (the committed copies are under `docs/bench/`:
//! `rnsfhe bench exact-conversion --out docs/bench`). Progress on stderr.

use std::fmt::Write as _;
use std::fs;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use rand::{Rng, SeedableRng};
use rnsfhe_ckks::{
    Ciphertext, CkksContext, CkksDecryptor, CkksEncryptor, CkksParams, ConversionMode, Csprng,
    Evaluator, KeyGenerator, PrecisionStats, RescalingPolicy, SecretDistribution,
};
use rnsfhe_math::primes::qu_xu_max_eta;
use rnsfhe_ring::conversion::{theorem1_eta_lower_bound, theorem1_failure_bound};
use serde::Serialize;

use super::{markdown_table, measure_interleaved, write_json, BenchOptions, Machine, TimingConfig};

/// Name of the table (JSON and markdown file stem).
pub const TABLE: &str = "exact-conversion";

/// The failure target of the paper's Figure 1.
pub const FIGURE1_R: f64 = 0.001;

/// The rotation step measured (the paper does not say; one slot).
const ROTATION_STEP: i64 = 1;

/// The three conversion modes in the paper's column order: *Fast*, *Exact* (Qu-Xu, integer only),
/// *ExactHPS* (floating point).
pub const MODES: [ConversionMode; 3] = [
    ConversionMode::Fast,
    ConversionMode::ExactInteger,
    ConversionMode::ExactFloat,
];

/// The paper's name of a conversion mode.
pub fn paper_mode_name(mode: ConversionMode) -> &'static str {
    match mode {
        ConversionMode::Fast => "Fast",
        ConversionMode::ExactInteger => "Exact",
        ConversionMode::ExactFloat => "ExactHPS",
    }
}

/// Key switching of a table: GHS (one digit) or hybrid (Han-Ki, `dnum > 1` digits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum KeySwitching {
    /// Gentry-Halevi-Smart: `dnum = 1`, `P` about as large as `Q`.
    Ghs,
    /// Han-Ki hybrid: `dnum` digit groups, `P` about as large as one digit.
    Hybrid,
}

/// One operation's figures in the paper: precision (bits) and time (ms).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PaperCell {
    /// Multiplication: precision in bits.
    pub mult_bits: f64,
    /// Multiplication: time in milliseconds.
    pub mult_ms: f64,
    /// Rotation: precision in bits.
    pub rot_bits: f64,
    /// Rotation: time in milliseconds.
    pub rot_ms: f64,
}

/// One row of the paper's Tables 2-5.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PaperRow {
    /// The paper's table (2, 3, 4 or 5).
    pub table: u8,
    /// `m` of `q = 2^m`.
    pub q_bits: u32,
    /// `log2 N`.
    pub log_n: u32,
    /// `K = ceil(log2 Q_L)`.
    pub k: u32,
    /// *Fast* (our `Fast`).
    pub fast: PaperCell,
    /// *Exact* (Qu-Xu integer-only, our `ExactInteger`).
    pub exact: PaperCell,
    /// *ExactHPS* (Halevi-Polyakov-Shoup floating point, our `ExactFloat`).
    pub exact_hps: PaperCell,
}

impl PaperRow {
    /// The paper's figures of a mode.
    pub fn cell(&self, mode: ConversionMode) -> PaperCell {
        match mode {
            ConversionMode::Fast => self.fast,
            ConversionMode::ExactInteger => self.exact,
            ConversionMode::ExactFloat => self.exact_hps,
        }
    }
}

const fn cell(mult_bits: f64, mult_ms: f64, rot_bits: f64, rot_ms: f64) -> PaperCell {
    PaperCell {
        mult_bits,
        mult_ms,
        rot_bits,
        rot_ms,
    }
}

const fn row(table: u8, q_bits: u32, log_n: u32, k: u32, c: [[f64; 4]; 3]) -> PaperRow {
    PaperRow {
        table,
        q_bits,
        log_n,
        k,
        fast: cell(c[0][0], c[0][1], c[0][2], c[0][3]),
        exact: cell(c[1][0], c[1][1], c[1][2], c[1][3]),
        exact_hps: cell(c[2][0], c[2][1], c[2][2], c[2][3]),
    }
}

/// Qu-Xu Tables 2-5, transcribed row by row (table, q = 2^m, log N, K; then Fast, Exact, ExactHPS, each
/// as mult. prec. (bits), mult. time (ms), rot. prec., rot. time). AMD Ryzen 7 4800U, PALISADE 1.11,
/// single thread.
#[rustfmt::skip]
pub const PAPER: [PaperRow; 32] = [
    // Table 2: ApproxRescaling, GHS.
    row(2, 40, 13, 80, [[18.33, 2.896, 18.06, 2.081], [18.33, 2.998, 18.09, 2.145], [18.34, 3.201, 18.07, 2.245]]),
    row(2, 40, 14, 200, [[17.598, 8.51, 17.32, 7.549], [17.613, 9.053, 17.372, 8.487], [17.604, 9.889, 17.382, 8.691]]),
    row(2, 40, 15, 400, [[16.911, 34.396, 16.482, 31.474], [16.925, 37.032, 16.68, 32.374], [16.913, 33.873, 16.687, 32.275]]),
    row(2, 40, 16, 800, [[16.219, 140.467, 15.544, 135.643], [16.241, 144.343, 15.992, 135.428], [16.232, 141.314, 15.997, 133.13]]),
    row(2, 50, 13, 100, [[25.238, 3.653, 24.980, 2.07], [25.274, 3.437, 25.008, 2.106], [25.259, 2.844, 25.001, 2.207]]),
    row(2, 50, 14, 200, [[24.523, 6.808, 24.225, 6.063], [24.509, 7.228, 24.297, 7.005], [24.526, 7.718, 24.311, 7.405]]),
    row(2, 50, 15, 400, [[23.822, 28.233, 23.547, 26.263], [23.843, 27.374, 23.605, 23.258], [23.826, 27.713, 23.628, 23.967]]),
    row(2, 50, 16, 1000, [[23.141, 163.081, 22.418, 144.776], [23.162, 163.795, 22.923, 146.913], [23.146, 162.335, 22.912, 147.347]]),
    // Table 3: ApproxRescaling, Hybrid.
    row(3, 40, 14, 200, [[17.610, 14.035, 17.298, 12.364], [17.618, 14.763, 17.392, 13.07], [17.62, 15.106, 17.377, 13.912]]),
    row(3, 40, 14, 320, [[17.605, 20.304, 17.335, 18.054], [17.591, 20.688, 17.363, 17.869], [17.601, 23.156, 17.377, 18.526]]),
    row(3, 40, 15, 640, [[16.903, 87.146, 16.580, 82.141], [16.912, 82.08, 16.695, 73.642], [16.921, 79.74, 16.669, 79.708]]),
    row(3, 40, 16, 880, [[16.219, 247.18, 15.923, 198.613], [16.235, 220.947, 15.989, 205.13], [16.215, 221.865, 15.982, 202.583]]),
    row(3, 50, 13, 150, [[25.244, 4.135, 24.987, 3.898], [25.246, 4.372, 25.013, 4.195], [25.237, 4.506, 24.968, 4.003]]),
    row(3, 50, 14, 300, [[24.508, 15.451, 24.3, 14.211], [24.532, 15.662, 24.312, 13.907], [24.528, 15.352, 24.318, 14.016]]),
    row(3, 50, 15, 600, [[23.835, 65.389, 23.54, 57.243], [23.846, 66.145, 23.623, 58.928], [23.842, 62.922, 23.631, 59.394]]),
    row(3, 50, 16, 1000, [[23.156, 218.138, 22.898, 188.795], [23.145, 221.221, 22.924, 185.967], [23.158, 221.512, 22.924, 186.801]]),
    // Table 4: ExactRescaling, GHS.
    row(4, 40, 13, 80, [[18.312, 2.524, 18.027, 1.928], [18.33, 3.241, 18.081, 1.922], [18.312, 2.278, 18.048, 2.348]]),
    row(4, 40, 14, 200, [[17.61, 9.919, 17.346, 7.583], [17.623, 9.389, 17.374, 8.839], [17.613, 9.279, 17.37, 9.058]]),
    row(4, 40, 15, 400, [[16.913, 39.138, 16.535, 31.682], [16.934, 39.214, 16.96, 31.955], [16.927, 38.436, 16.683, 33.343]]),
    row(4, 40, 16, 800, [[16.208, 155.385, 15.647, 132.868], [16.235, 157.638, 15.996, 135.163], [16.215, 154.668, 15.988, 136.18]]),
    row(4, 50, 13, 100, [[25.239, 2.384, 24.972, 3.689], [25.265, 2.975, 24.981, 2.813], [25.231, 3.164, 25.023, 2.091]]),
    row(4, 50, 14, 200, [[24.530, 7.049, 24.254, 6.256], [24.558, 6.701, 24.309, 7.145], [24.547, 7.935, 24.322, 7.731]]),
    row(4, 50, 15, 400, [[23.82, 29.438, 23.44, 26.137], [23.85, 30.288, 23.625, 27.936], [23.823, 29.171, 23.613, 25.921]]),
    row(4, 50, 16, 1000, [[23.15, 167.717, 22.433, 144.642], [23.153, 177.682, 22.913, 144.525], [23.145, 166.603, 22.92, 147.33]]),
    // Table 5: ExactRescaling, Hybrid.
    row(5, 40, 14, 200, [[17.588, 15.961, 17.362, 12.246], [17.622, 15.186, 17.398, 12.885], [17.633, 16.662, 17.387, 13.792]]),
    row(5, 40, 14, 320, [[17.598, 20.201, 17.369, 17.026], [17.597, 23.898, 17.391, 17.581], [17.599, 21.979, 17.382, 18.454]]),
    row(5, 40, 15, 640, [[16.917, 86.446, 16.583, 74.926], [16.925, 88.25, 16.672, 78.572], [16.932, 87.347, 16.682, 75.827]]),
    row(5, 40, 16, 880, [[16.219, 250.123, 15.929, 198.537], [16.231, 273.638, 15.995, 208.834], [16.224, 279.17, 15.99, 212.747]]),
    row(5, 50, 13, 150, [[25.219, 4.317, 25.005, 4.04], [25.271, 4.667, 24.996, 4.109], [25.245, 4.396, 24.976, 4.136]]),
    row(5, 50, 14, 300, [[24.556, 17.944, 24.309, 14.63], [24.541, 17.012, 24.288, 14.524], [24.55, 18.994, 24.297, 16.495]]),
    row(5, 50, 15, 600, [[23.845, 64.447, 23.578, 56.934], [23.848, 68.938, 23.616, 58.57], [23.837, 68.135, 23.613, 58.507]]),
    row(5, 50, 16, 1000, [[23.14, 217.689, 22.72, 183.25], [23.166, 217.891, 22.918, 185.668], [23.152, 216.967, 22.92, 189.188]]),
];

/// Rescaling policy and key switching of one of the paper's tables.
pub fn table_setting(table: u8) -> anyhow::Result<(RescalingPolicy, KeySwitching)> {
    Ok(match table {
        2 => (RescalingPolicy::FixedNominalScale, KeySwitching::Ghs),
        3 => (RescalingPolicy::FixedNominalScale, KeySwitching::Hybrid),
        4 => (RescalingPolicy::ExactScale, KeySwitching::Ghs),
        5 => (RescalingPolicy::ExactScale, KeySwitching::Hybrid),
        other => anyhow::bail!("the Qu-Xu paper has no Table {other} of conversion modes (2 to 5)"),
    })
}

fn policy_name(policy: RescalingPolicy) -> &'static str {
    match policy {
        RescalingPolicy::FixedNominalScale => "ApproxRescaling",
        RescalingPolicy::ExactScale => "ExactRescaling",
    }
}

/// The moduli of one row as we run it (shared by the three modes).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RowConfig {
    /// `log2 N`.
    pub log_n: u32,
    /// `m`: every ciphertext prime (and the scale) near `2^m`.
    pub q_bits: u32,
    /// Number of ciphertext primes `q_0 .. q_L` (`K / m` in the paper).
    pub limbs: usize,
    /// Digit groups of key switching (1 for GHS).
    pub dnum: usize,
    /// Number of special primes.
    pub special_primes: usize,
    /// Bit size of each special prime.
    pub special_bits: u32,
}

impl RowConfig {
    /// The nominal `K = limbs * m`.
    pub fn nominal_k(&self) -> u32 {
        self.limbs as u32 * self.q_bits
    }

    /// The CKKS parameters of one mode.
    pub fn params(&self, rescaling: RescalingPolicy, mode: ConversionMode) -> CkksParams {
        CkksParams {
            log_n: self.log_n,
            log_scale: self.q_bits,
            q0_bits: self.q_bits,
            levels: self.limbs.saturating_sub(1),
            bootstrap_primes: Vec::new(),
            special_primes: self.special_primes,
            special_bits: self.special_bits,
            dnum: self.dnum,
            secret: SecretDistribution::Ternary,
            sigma: 3.2,
            conversion: mode,
            rescaling,
            insecure_for_testing: true,
        }
    }

    /// A short description: `12 x 50-bit primes (log Q 600), dnum 3, P = 4 x 60 bits`.
    pub fn describe(&self) -> String {
        format!(
            "{} x {}-bit primes, dnum {}, P = {} x {} bits",
            self.limbs, self.q_bits, self.dnum, self.special_primes, self.special_bits
        )
    }
}

/// How `P` is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SpecialRule {
    /// PALISADE's default: GHS as many `m`-bit primes as `Q` has, hybrid 60-bit primes.
    Paper,
    /// 60-bit primes, at least as large as the largest digit.
    Sixty,
}

/// Smallest number of primes for one multiplication of values in `[0, 1]` to stay decryptable.
const MIN_LIMBS: usize = 3;

fn make_config(
    log_n: u32,
    q_bits: u32,
    limbs: usize,
    ks: KeySwitching,
    rule: SpecialRule,
) -> RowConfig {
    let dnum = match ks {
        KeySwitching::Ghs => 1,
        // PALISADE's (and OpenFHE's) default number of digits: 3 for depth > 3, 2 otherwise.
        KeySwitching::Hybrid => {
            if limbs - 1 > 3 {
                3
            } else {
                2
            }
        }
    };
    let alpha = limbs.div_ceil(dnum);
    let digit_bits = alpha as u32 * q_bits;
    let (special_primes, special_bits) = match (ks, rule) {
        (KeySwitching::Ghs, SpecialRule::Paper) => (limbs, q_bits),
        _ => (digit_bits.div_ceil(60) as usize, 60),
    };
    RowConfig {
        log_n,
        q_bits,
        limbs,
        dnum,
        special_primes,
        special_bits,
    }
}

/// The candidate configurations of a paper row, closest first, each with the deviations it makes.
fn candidates(paper: &PaperRow, ks: KeySwitching, log_n: u32) -> Vec<(RowConfig, Vec<String>)> {
    let m = paper.q_bits;
    let paper_limbs = (paper.k / m) as usize;
    let mut base_notes = Vec::new();
    let limbs = if paper_limbs < MIN_LIMBS {
        base_notes.push(format!(
            "{MIN_LIMBS} primes (K = {}) instead of the paper's {paper_limbs} (K = {}): with {paper_limbs}, \
             the product of two values of [0, 1] at scale ~q_0 wraps modulo q_0 after its rescaling",
            MIN_LIMBS as u32 * m,
            paper.k
        ));
        MIN_LIMBS
    } else {
        paper_limbs
    };
    if log_n != paper.log_n {
        base_notes.push(format!(
            "N = 2^{log_n} instead of 2^{} (--quick)",
            paper.log_n
        ));
    }
    let mut out = Vec::new();
    let rules: &[SpecialRule] = match ks {
        KeySwitching::Ghs => &[SpecialRule::Paper, SpecialRule::Sixty],
        KeySwitching::Hybrid => &[SpecialRule::Paper],
    };
    for l in (MIN_LIMBS..=limbs).rev() {
        for &rule in rules {
            let mut notes = base_notes.clone();
            if rule == SpecialRule::Sixty {
                notes.push("P of 60-bit primes instead of m-bit primes".to_string());
            }
            if l < limbs {
                notes.push(format!(
                    "{l} primes (K = {}) instead of {limbs}: refused with more",
                    l as u32 * m
                ));
            }
            out.push((make_config(log_n, m, l, ks, rule), notes));
        }
    }
    out
}

/// Our figures for one conversion mode of a row.
#[derive(Clone, Debug, Serialize)]
pub struct ModeResult {
    /// `Fast`, `ExactInteger` or `ExactFloat`.
    pub mode: String,
    /// The paper's name (`Fast`, `Exact`, `ExactHPS`).
    pub paper_name: &'static str,
    /// Multiplication (relinearize + rescale): mean over slots and trials of `-log2 |x - x'|`.
    pub mult_bits: f64,
    /// Rotation: the same measure.
    pub rot_bits: f64,
    /// Standard error of `mult_bits` over the trials (0 for one trial).
    pub mult_bits_se: f64,
    /// Standard error of `rot_bits` over the trials.
    pub rot_bits_se: f64,
    /// Multiplication: median time, milliseconds.
    pub mult_ms: f64,
    /// Rotation: median time, milliseconds.
    pub rot_ms: f64,
    /// Multiplication: fastest sample, milliseconds.
    pub mult_min_ms: f64,
    /// Rotation: fastest sample, milliseconds.
    pub rot_min_ms: f64,
    /// Timed samples per case.
    pub samples: usize,
    /// `log2 Q_L` of the context's primes.
    pub log_q: f64,
    /// `log2 (Q_L P)`.
    pub log_qp: f64,
    /// Security estimate (HE Standard).
    pub security: String,
    /// Qu-Xu Theorem 1 figures of the key-switching conversions (`qu_xu_summary`).
    pub qu_xu: String,
}

/// One row: the paper's figures and ours.
#[derive(Clone, Debug, Serialize)]
pub struct RowResult {
    /// The paper's table (2-5).
    pub table: u8,
    /// `ApproxRescaling` or `ExactRescaling`.
    pub rescaling: &'static str,
    /// GHS or hybrid.
    pub key_switching: KeySwitching,
    /// The paper's row.
    pub paper: PaperRow,
    /// The configuration we ran (absent when every candidate was refused).
    pub config: Option<RowConfig>,
    /// How and why the configuration differs from the paper's.
    pub deviations: Vec<String>,
    /// Trials of the precision measurement.
    pub trials: usize,
    /// Fast, ExactInteger, ExactFloat (the paper's column order).
    pub modes: Vec<ModeResult>,
    /// The refusal, when no configuration was accepted.
    pub error: Option<String>,
}

/// The JSON document `exact-conversion.json`.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Table name.
    pub table: &'static str,
    /// Where and when it ran.
    pub machine: Machine,
    /// Threads of the timing pool (the paper is single-threaded).
    pub timing_threads: usize,
    /// Whether this was a `--quick` run.
    pub quick: bool,
    /// `uptime`'s load averages at the start and the end of the run (other processes on the machine).
    pub load_average: Vec<String>,
    /// Wall-clock seconds of the whole run.
    pub seconds: f64,
    /// All rows.
    pub rows: Vec<RowResult>,
    /// Summary of the exact modes against Fast.
    pub summary: Summary,
}

/// Per row, how much the exact modes gain over Fast (bits) and cost (time ratio).
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Rows summarized.
    pub rows: usize,
    /// One line per (mode, operation): ours and the paper's gains over Fast.
    pub gains: Vec<GainSummary>,
}

/// Gains of one exact mode on one operation over Fast, across the rows.
#[derive(Debug, Clone, Serialize)]
pub struct GainSummary {
    /// `ExactInteger` or `ExactFloat`.
    pub mode: String,
    /// `mult` or `rot`.
    pub op: &'static str,
    /// Our gains in bits: min, mean, max.
    pub ours_bits: [f64; 3],
    /// The paper's gains in bits (same rows): min, mean, max.
    pub paper_bits: [f64; 3],
    /// Our time ratio exact / Fast: min, mean (geometric), max.
    pub ours_time_ratio: [f64; 3],
    /// The paper's time ratio: min, mean (geometric), max.
    pub paper_time_ratio: [f64; 3],
}

/// How many timed samples and precision trials a ring size gets.
#[derive(Clone, Copy, Debug)]
pub struct Effort {
    /// Timing settings.
    pub timing: TimingConfig,
    /// Precision trials (fresh inputs and encryptions; keys fixed).
    pub trials: usize,
}

impl Effort {
    /// The full run's effort for `N = 2^log_n`: 2^17 slots of precision per mode and op (32, 16, 8, 4
    /// trials) and 101, 51, 21, 11 timed samples for log N = 13, 14, 15, 16.
    pub fn full(log_n: u32) -> Self {
        let (samples, trials) = match log_n {
            0..=13 => (101, 32),
            14 => (51, 16),
            15 => (21, 8),
            _ => (11, 4),
        };
        Self {
            timing: TimingConfig {
                warmup_ms: 200,
                samples,
                min_sample_us: 1000,
            },
            trials,
        }
    }

    /// The `--quick` effort.
    pub fn quick() -> Self {
        Self {
            timing: TimingConfig {
                warmup_ms: 10,
                samples: 5,
                min_sample_us: 200,
            },
            trials: 1,
        }
    }
}

/// Values uniform in `[0, 1]` (inputs, not secrets: a seeded generator).
fn uniform01(count: usize, seed: u64) -> Vec<f64> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..count).map(|_| rng.gen_range(0.0..=1.0)).collect()
}

/// The paper's precision measure: the mean over slots of `-log2 |x - x'|` (real parts).
fn paper_precision(expected: &[f64], got: &[rnsfhe_ckks::Complex64]) -> anyhow::Result<f64> {
    let re: Vec<f64> = got.iter().map(|z| z.re).collect();
    Ok(PrecisionStats::compare_real(expected, &re)?.real.mean)
}

/// One mode's context, keys and fixed operands.
struct ModeSetup {
    mode: ConversionMode,
    ctx: Arc<CkksContext>,
    eval: Evaluator,
    enc: CkksEncryptor,
    dec: CkksDecryptor,
    a: Ciphertext,
    b: Ciphertext,
}

fn setup(
    cfg: &RowConfig,
    rescaling: RescalingPolicy,
    mode: ConversionMode,
    rng: &mut Csprng,
) -> anyhow::Result<ModeSetup> {
    let ctx = CkksContext::new(cfg.params(rescaling, mode))
        .with_context(|| format!("{mode} with {}", cfg.describe()))?;
    let kg = KeyGenerator::new(&ctx, rng)?;
    let pk = kg.public_key(rng)?;
    let eval = Evaluator::new(&ctx)
        .with_relin_key(kg.relin_key(rng)?)?
        .with_galois_keys(kg.galois_keys(&[ROTATION_STEP], false, rng)?)?;
    let enc = CkksEncryptor::with_public_key(&ctx, &pk)?;
    let dec = CkksDecryptor::new(&ctx, kg.secret_key())?;
    let slots = ctx.max_slots();
    let a = enc.encrypt(uniform01(slots, 1).as_slice(), rng)?;
    let b = enc.encrypt(uniform01(slots, 2).as_slice(), rng)?;
    Ok(ModeSetup {
        mode,
        ctx,
        eval,
        enc,
        dec,
        a,
        b,
    })
}

/// Mean and standard error of a sample.
fn mean_se(v: &[f64]) -> (f64, f64) {
    let n = v.len().max(1) as f64;
    let mean = v.iter().sum::<f64>() / n;
    if v.len() < 2 {
        return (mean, 0.0);
    }
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

/// Paper precision (mean, standard error over trials) of a multiplication and of a rotation over
/// `trials` fresh inputs and encryptions.
fn precision(
    s: &ModeSetup,
    trials: usize,
    rng: &mut Csprng,
) -> anyhow::Result<((f64, f64), (f64, f64))> {
    let slots = s.ctx.max_slots();
    let (mut mult, mut rot) = (Vec::new(), Vec::new());
    for t in 0..trials {
        let a = uniform01(slots, 1000 + 2 * t as u64);
        let b = uniform01(slots, 1001 + 2 * t as u64);
        let prod: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
        let shifted: Vec<f64> = (0..slots)
            .map(|j| a[(j + ROTATION_STEP as usize) % slots])
            .collect();
        let ca = s.enc.encrypt(a.as_slice(), rng)?;
        let cb = s.enc.encrypt(b.as_slice(), rng)?;
        let p = s.eval.multiply_rescale(&ca, &cb)?;
        let r = s.eval.rotate(&ca, ROTATION_STEP)?;
        mult.push(paper_precision(&prod, &s.dec.decrypt(&p)?)?);
        rot.push(paper_precision(&shifted, &s.dec.decrypt(&r)?)?);
    }
    Ok((mean_se(&mult), mean_se(&rot)))
}

/// Builds the three modes of a row for the first accepted candidate configuration.
fn build_row(
    paper: &PaperRow,
    ks: KeySwitching,
    rescaling: RescalingPolicy,
    log_n: u32,
    rng: &mut Csprng,
) -> Result<(RowConfig, Vec<String>, Vec<ModeSetup>), String> {
    let mut refusals: Vec<String> = Vec::new();
    for (cfg, mut notes) in candidates(paper, ks, log_n) {
        let built: anyhow::Result<Vec<ModeSetup>> = MODES
            .iter()
            .map(|&mode| setup(&cfg, rescaling, mode, rng))
            .collect();
        match built {
            Ok(setups) => {
                if let Some(first) = refusals.first() {
                    notes.push(format!("refused before: {first}"));
                }
                return Ok((cfg, notes, setups));
            }
            Err(e) => {
                let msg = format!("{e:#}");
                eprintln!("    refused: {msg}");
                refusals.push(msg);
            }
        }
    }
    Err(refusals
        .first()
        .cloned()
        .unwrap_or_else(|| "no candidate configuration".to_string()))
}

/// Measures one paper row (all three modes).
fn measure_row(
    paper: &PaperRow,
    log_n: u32,
    effort: Effort,
    timing_pool: &rayon::ThreadPool,
    rng: &mut Csprng,
) -> anyhow::Result<RowResult> {
    let (rescaling, ks) = table_setting(paper.table)?;
    let mut result = RowResult {
        table: paper.table,
        rescaling: policy_name(rescaling),
        key_switching: ks,
        paper: *paper,
        config: None,
        deviations: Vec::new(),
        trials: effort.trials,
        modes: Vec::new(),
        error: None,
    };
    let (cfg, notes, setups) = match build_row(paper, ks, rescaling, log_n, rng) {
        Ok(x) => x,
        Err(e) => {
            result.error = Some(e);
            return Ok(result);
        }
    };
    result.config = Some(cfg);
    result.deviations = notes;

    let mut precisions = Vec::with_capacity(setups.len());
    for s in &setups {
        precisions.push(precision(s, effort.trials, rng)?);
        // The timed calls must succeed: check once before timing (the timed closures discard results).
        s.eval.multiply_rescale(&s.a, &s.b)?;
        s.eval.rotate(&s.a, ROTATION_STEP)?;
    }

    let timings = timing_pool.install(|| {
        let mut closures: Vec<Box<dyn FnMut() + '_>> = Vec::new();
        for s in &setups {
            closures.push(Box::new(move || {
                let _ = black_box(s.eval.multiply_rescale(&s.a, &s.b));
            }));
            closures.push(Box::new(move || {
                let _ = black_box(s.eval.rotate(&s.a, ROTATION_STEP));
            }));
        }
        let mut cases: Vec<&mut dyn FnMut()> = closures.iter_mut().map(|c| &mut **c as _).collect();
        measure_interleaved(&effort.timing, &mut cases)
    });

    for (i, (s, ((mult_bits, mult_bits_se), (rot_bits, rot_bits_se)))) in
        setups.iter().zip(precisions).enumerate()
    {
        let (tm, tr) = (timings[2 * i], timings[2 * i + 1]);
        result.modes.push(ModeResult {
            mode: s.mode.to_string(),
            paper_name: paper_mode_name(s.mode),
            mult_bits,
            rot_bits,
            mult_bits_se,
            rot_bits_se,
            mult_ms: tm.median_us / 1e3,
            rot_ms: tr.median_us / 1e3,
            mult_min_ms: tm.min_us / 1e3,
            rot_min_ms: tr.min_us / 1e3,
            samples: tm.samples,
            log_q: s.ctx.log_q(),
            log_qp: s.ctx.log_qp(),
            security: s.ctx.security().to_string(),
            qu_xu: s.ctx.qu_xu_summary(),
        });
    }
    Ok(result)
}

/// One point of Figure 1.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Figure1Point {
    /// Number of source moduli `l`.
    pub l: usize,
    /// `log2((r + l) / r)` for `r = 0.001`.
    pub eta_lower_bound: f64,
}

/// One point of Figure 2.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Figure2Point {
    /// Number of primes `L`.
    pub l: usize,
    /// The largest `eta` of Algorithm 2 (`N = 2^14`, `q = 2^50`).
    pub eta_max: u32,
    /// `L 2^-eta / (1 - 2^-eta)`.
    pub failure_bound: f64,
}

/// Figure 1's data: `l = 1..=max_l`.
pub fn figure1(max_l: usize) -> Vec<Figure1Point> {
    (1..=max_l)
        .map(|l| Figure1Point {
            l,
            eta_lower_bound: theorem1_eta_lower_bound(l, FIGURE1_R),
        })
        .collect()
}

/// Figure 2's data for `N = 2^log_n`, `q = 2^q_bits`, `L = 1..=max_l` (the paper: 2^14, 2^50).
pub fn figure2(log_n: u32, q_bits: u32, max_l: usize) -> anyhow::Result<Vec<Figure2Point>> {
    (1..=max_l)
        .map(|l| {
            let eta = qu_xu_max_eta(q_bits, 2u64 << log_n, l)?;
            Ok(Figure2Point {
                l,
                eta_max: eta,
                failure_bound: theorem1_failure_bound(l, eta),
            })
        })
        .collect()
}

fn write_text(dir: &Path, name: &str, text: &str) -> anyhow::Result<PathBuf> {
    fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the output directory {}", dir.display()))?;
    let path = dir.join(name);
    fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

fn uptime() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_string())
}

fn min_mean_max(v: &[f64], geometric: bool) -> [f64; 3] {
    if v.is_empty() {
        return [f64::NAN; 3];
    }
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mean = if geometric {
        (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp()
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    };
    [min, mean, max]
}

fn summarize(rows: &[RowResult]) -> Summary {
    let done: Vec<&RowResult> = rows.iter().filter(|r| r.modes.len() == 3).collect();
    let mut gains = Vec::new();
    for (idx, mode) in [
        (1usize, ConversionMode::ExactInteger),
        (2, ConversionMode::ExactFloat),
    ] {
        for op in ["mult", "rot"] {
            let (mut ob, mut pb, mut ot, mut pt) = (vec![], vec![], vec![], vec![]);
            for r in &done {
                let (f, e) = (&r.modes[0], &r.modes[idx]);
                let (pf, pe) = (r.paper.fast, r.paper.cell(mode));
                if op == "mult" {
                    ob.push(e.mult_bits - f.mult_bits);
                    pb.push(pe.mult_bits - pf.mult_bits);
                    ot.push(e.mult_ms / f.mult_ms);
                    pt.push(pe.mult_ms / pf.mult_ms);
                } else {
                    ob.push(e.rot_bits - f.rot_bits);
                    pb.push(pe.rot_bits - pf.rot_bits);
                    ot.push(e.rot_ms / f.rot_ms);
                    pt.push(pe.rot_ms / pf.rot_ms);
                }
            }
            gains.push(GainSummary {
                mode: mode.to_string(),
                op,
                ours_bits: min_mean_max(&ob, false),
                paper_bits: min_mean_max(&pb, false),
                ours_time_ratio: min_mean_max(&ot, true),
                paper_time_ratio: min_mean_max(&pt, true),
            });
        }
    }
    Summary {
        rows: done.len(),
        gains,
    }
}

fn f3(x: f64) -> String {
    format!("{x:.3}")
}

fn signed(x: f64) -> String {
    format!("{x:+.3}")
}

/// The markdown of the whole report.
pub fn render_markdown(report: &Report, figure2_points: &[Figure2Point]) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "## Qu-Xu Tables 2-5: basis conversion modes in key switching{}\n",
        if report.quick { " (--quick)" } else { "" }
    );
    let _ = writeln!(md, "{}", report.machine.markdown_header());
    let _ = writeln!(
        md,
        "- timing: one-thread pool (the paper is single-threaded), median of interleaved samples; load \
         average {} at the start, {} at the end; whole run {:.0} s",
        report.load_average.first().map_or("?", String::as_str),
        report.load_average.last().map_or("?", String::as_str),
        report.seconds
    );
    let _ = writeln!(
        md,
        "- precision: mean over slots of -log2|x - x'| (real parts), inputs uniform in [0, 1], full packing, \
         public-key encryption; Mult. = multiply, relinearize, rescale; Rot. = rotation by {ROTATION_STEP}\n\
         - paper: Qu-Xu Tables 2-5 (PALISADE 1.11, AMD Ryzen 7 4800U, single thread); *Exact* = our \
         ExactInteger, *ExactHPS* = our ExactFloat\n"
    );
    for table in 2u8..=5 {
        let rows: Vec<&RowResult> = report.rows.iter().filter(|r| r.table == table).collect();
        if rows.is_empty() {
            continue;
        }
        let (policy, ks) = (rows[0].rescaling, rows[0].key_switching);
        let _ = writeln!(md, "### Table {table}: {policy}, {ks:?}\n");
        let headers = [
            "q",
            "log N",
            "K paper",
            "K ours",
            "mode",
            "Mult. bits",
            "paper",
            "Mult. ms",
            "paper",
            "Rot. bits",
            "paper",
            "Rot. ms",
            "paper",
        ];
        let mut cells = Vec::new();
        let mut notes = Vec::new();
        for r in &rows {
            let k_ours = r
                .config
                .as_ref()
                .map_or("-".to_string(), |c| c.nominal_k().to_string());
            if r.modes.is_empty() {
                let mut line = vec![
                    format!("2^{}", r.paper.q_bits),
                    r.paper.log_n.to_string(),
                    r.paper.k.to_string(),
                    k_ours.clone(),
                    "refused".to_string(),
                ];
                line.extend(std::iter::repeat_n("-".to_string(), 8));
                cells.push(line);
            }
            for m in &r.modes {
                let mode = match m.mode.as_str() {
                    "ExactInteger" => ConversionMode::ExactInteger,
                    "ExactFloat" => ConversionMode::ExactFloat,
                    _ => ConversionMode::Fast,
                };
                let p = r.paper.cell(mode);
                cells.push(vec![
                    format!("2^{}", r.paper.q_bits),
                    r.paper.log_n.to_string(),
                    r.paper.k.to_string(),
                    k_ours.clone(),
                    format!("{} ({})", m.mode, m.paper_name),
                    f3(m.mult_bits),
                    f3(p.mult_bits),
                    f3(m.mult_ms),
                    f3(p.mult_ms),
                    f3(m.rot_bits),
                    f3(p.rot_bits),
                    f3(m.rot_ms),
                    f3(p.rot_ms),
                ]);
            }
            let label = format!(
                "2^{}, log N = {}, K = {}",
                r.paper.q_bits, r.paper.log_n, r.paper.k
            );
            match (&r.config, &r.error) {
                (_, Some(e)) => {
                    notes.push(format!("- {label}: **no accepted configuration**: {e}"))
                }
                (Some(c), None) => {
                    let exact = r.modes.iter().find(|m| m.mode == "ExactInteger");
                    let se = r
                        .modes
                        .iter()
                        .flat_map(|m| [m.mult_bits_se, m.rot_bits_se])
                        .fold(0.0, f64::max);
                    let mut line = format!(
                        "- {label}: {}; log QP {:.0}; {} trial(s), standard error of a precision <= {se:.3} \
                         bits",
                        c.describe(),
                        r.modes.first().map_or(f64::NAN, |m| m.log_qp),
                        r.trials
                    );
                    if let Some(e) = exact {
                        let _ = write!(line, "; ExactInteger Qu-Xu: {}", e.qu_xu);
                    }
                    for d in &r.deviations {
                        let _ = write!(line, "; **deviation**: {d}");
                    }
                    notes.push(line);
                }
                (None, None) => {}
            }
        }
        md.push_str(&markdown_table(&headers, &cells));
        md.push('\n');
        for n in notes {
            md.push_str(&n);
            md.push('\n');
        }
        md.push('\n');

        // Gains over Fast, ours beside the paper's.
        let gh = [
            "q",
            "log N",
            "K",
            "Exact-Fast Mult.",
            "paper",
            "Exact-Fast Rot.",
            "paper",
            "HPS-Fast Mult.",
            "paper",
            "HPS-Fast Rot.",
            "paper",
            "time Exact/Fast (M, R)",
            "paper",
        ];
        let mut gc = Vec::new();
        for r in rows.iter().filter(|r| r.modes.len() == 3) {
            let (f, e, h) = (&r.modes[0], &r.modes[1], &r.modes[2]);
            let (pf, pe, ph) = (r.paper.fast, r.paper.exact, r.paper.exact_hps);
            gc.push(vec![
                format!("2^{}", r.paper.q_bits),
                r.paper.log_n.to_string(),
                r.paper.k.to_string(),
                signed(e.mult_bits - f.mult_bits),
                signed(pe.mult_bits - pf.mult_bits),
                signed(e.rot_bits - f.rot_bits),
                signed(pe.rot_bits - pf.rot_bits),
                signed(h.mult_bits - f.mult_bits),
                signed(ph.mult_bits - pf.mult_bits),
                signed(h.rot_bits - f.rot_bits),
                signed(ph.rot_bits - pf.rot_bits),
                format!("{:.2}, {:.2}", e.mult_ms / f.mult_ms, e.rot_ms / f.rot_ms),
                format!(
                    "{:.2}, {:.2}",
                    pe.mult_ms / pf.mult_ms,
                    pe.rot_ms / pf.rot_ms
                ),
            ]);
        }
        if !gc.is_empty() {
            let _ = writeln!(
                md,
                "Gains over Fast (bits) and time ratios, Table {table}:\n"
            );
            md.push_str(&markdown_table(&gh, &gc));
            md.push('\n');
        }
    }

    let _ = writeln!(
        md,
        "### Summary over {} rows: exact modes minus Fast\n",
        report.summary.rows
    );
    let sh = [
        "mode",
        "op",
        "ours bits (min / mean / max)",
        "paper bits",
        "ours time ratio (min / geo-mean / max)",
        "paper time ratio",
    ];
    let triple = |t: [f64; 3], p: usize| format!("{:.p$} / {:.p$} / {:.p$}", t[0], t[1], t[2]);
    let sc: Vec<Vec<String>> = report
        .summary
        .gains
        .iter()
        .map(|g| {
            vec![
                g.mode.clone(),
                g.op.to_string(),
                triple(g.ours_bits, 3),
                triple(g.paper_bits, 3),
                triple(g.ours_time_ratio, 2),
                triple(g.paper_time_ratio, 2),
            ]
        })
        .collect();
    md.push_str(&markdown_table(&sh, &sc));
    md.push('\n');

    let drops: Vec<String> = figure2_points
        .windows(2)
        .filter(|w| w[1].eta_max < w[0].eta_max)
        .map(|w| {
            format!(
                "{} -> {} (eta {} -> {})",
                w[0].l, w[1].l, w[0].eta_max, w[1].eta_max
            )
        })
        .collect();
    let bound_at = |l: usize| {
        figure2_points
            .iter()
            .find(|p| p.l == l)
            .map_or("-".to_string(), |p| format!("{:.2e}", p.failure_bound))
    };
    let _ = writeln!(
        md,
        "### Figures 1 and 2\n\n- `figure1.csv`: Theorem 1's lower bound log2((r + l)/r) on eta, r = {FIGURE1_R}, \
         l = 1..{FIGURE1_MAX_L} (l = 10: {:.2}, l = 40: {:.2})\n- `figure2.csv`: N = 2^14, q = 2^50: the largest \
         eta of Algorithm 2 and L 2^-eta/(1 - 2^-eta) for L = 1..{}; eta drops at L = {} (the paper: 2 -> 3 and \
         11 -> 12); bound at L = 11: {}, L = 12: {}, L = 20: {} (the paper: does not exceed 8e-8)\n- PNG plots: \
         not generated (no plotting library in the project's Python environment); the CSVs hold the data",
        theorem1_eta_lower_bound(10, FIGURE1_R),
        theorem1_eta_lower_bound(40, FIGURE1_R),
        figure2_points.len(),
        if drops.is_empty() { "-".to_string() } else { drops.join(", ") },
        bound_at(11),
        bound_at(12),
        bound_at(20),
    );
    md
}

/// Largest `l` of Figure 1.
pub const FIGURE1_MAX_L: usize = 60;
/// Largest `L` of Figure 2.
pub const FIGURE2_MAX_L: usize = 40;

fn figure_csvs(fig1: &[Figure1Point], fig2: &[Figure2Point]) -> (String, String) {
    let mut c1 = String::from("l,eta_lower_bound_r0.001,smallest_integer_eta\n");
    for p in fig1 {
        let _ = writeln!(
            c1,
            "{},{:.6},{}",
            p.l,
            p.eta_lower_bound,
            p.eta_lower_bound.floor() as u64 + 1
        );
    }
    let mut c2 = String::from("L,eta_max,failure_bound\n");
    for p in fig2 {
        let _ = writeln!(c2, "{},{},{:.6e}", p.l, p.eta_max, p.failure_bound);
    }
    (c1, c2)
}

/// Runs the given paper rows (at `log_n_override` if set) and writes every output into `out`.
fn run_rows(
    rows: &[PaperRow],
    log_n_override: Option<u32>,
    effort_for: impl Fn(u32) -> Effort,
    quick: bool,
    figure2_max_l: usize,
    out: &Path,
) -> anyhow::Result<Report> {
    let start = Instant::now();
    let load_start = uptime();
    let timing_pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .context("cannot build a one-thread pool")?;
    let mut rng = Csprng::from_os()?;
    let mut results = Vec::with_capacity(rows.len());
    for (i, paper) in rows.iter().enumerate() {
        let log_n = log_n_override.unwrap_or(paper.log_n);
        let (policy, ks) = table_setting(paper.table)?;
        eprintln!(
            "[{:>2}/{}] {:>5.0} s  Table {} ({}, {ks:?}): q = 2^{}, log N = {log_n}, K = {} ...",
            i + 1,
            rows.len(),
            start.elapsed().as_secs_f64(),
            paper.table,
            policy_name(policy),
            paper.q_bits,
            paper.k
        );
        let r = measure_row(paper, log_n, effort_for(log_n), &timing_pool, &mut rng)?;
        for m in &r.modes {
            eprintln!(
                "        {:12} mult {:.3} bits {:8.3} ms | rot {:.3} bits {:8.3} ms",
                m.mode, m.mult_bits, m.mult_ms, m.rot_bits, m.rot_ms
            );
        }
        results.push(r);
    }
    eprintln!("figures 1 and 2 ...");
    let fig1 = figure1(FIGURE1_MAX_L);
    let fig2 = figure2(14, 50, figure2_max_l)?;
    let summary = summarize(&results);
    let report = Report {
        table: TABLE,
        machine: Machine::detect(),
        timing_threads: 1,
        quick,
        load_average: vec![load_start, uptime()],
        seconds: start.elapsed().as_secs_f64(),
        rows: results,
        summary,
    };
    let md = render_markdown(&report, &fig2);
    let (c1, c2) = figure_csvs(&fig1, &fig2);
    print!("{md}");
    let paths = [
        write_text(out, &format!("{TABLE}.md"), &md)?,
        write_json(out, TABLE, &report)?,
        write_text(out, "figure1.csv", &c1)?,
        write_text(out, "figure2.csv", &c2)?,
    ];
    for p in paths {
        eprintln!("wrote {}", p.display());
    }
    Ok(report)
}

/// `rnsfhe bench exact-conversion`: the full run (all 32 rows at the paper's sizes), or with `--quick` the
/// first row of each table and `q` at `N = 2^12` with few samples (a smoke run).
pub fn run(options: &BenchOptions) -> anyhow::Result<()> {
    if options.quick {
        let rows: Vec<PaperRow> = PAPER
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 4 == 0)
            .map(|(_, r)| *r)
            .collect();
        run_rows(
            &rows,
            Some(12),
            |_| Effort::quick(),
            true,
            FIGURE2_MAX_L,
            &options.out,
        )?;
    } else {
        run_rows(
            &PAPER,
            None,
            Effort::full,
            false,
            FIGURE2_MAX_L,
            &options.out,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn paper_rows_are_complete() {
        for table in 2u8..=5 {
            assert_eq!(PAPER.iter().filter(|r| r.table == table).count(), 8);
            assert!(table_setting(table).is_ok());
        }
        assert!(table_setting(6).is_err());
        for r in &PAPER {
            assert_eq!(r.k % r.q_bits, 0, "{r:?}");
            for m in MODES {
                let c = r.cell(m);
                assert!(
                    c.mult_bits > 15.0 && c.rot_bits > 15.0 && c.mult_ms > 1.0,
                    "{r:?}"
                );
            }
        }
    }

    #[test]
    fn candidates_start_at_the_paper_configuration() {
        let ghs = &PAPER[1]; // Table 2, 2^40, log N 14, K 200.
        let c = candidates(ghs, KeySwitching::Ghs, 14);
        assert_eq!(c[0].0.limbs, 5);
        assert_eq!(
            (c[0].0.dnum, c[0].0.special_primes, c[0].0.special_bits),
            (1, 5, 40)
        );
        assert!(c[0].1.is_empty());
        assert_eq!(c[1].0.special_bits, 60);
        let small = &PAPER[0]; // K = 80: two primes, raised to three with a note.
        let c = candidates(small, KeySwitching::Ghs, 13);
        assert_eq!(c[0].0.limbs, 3);
        assert_eq!(c[0].1.len(), 1);
        let hybrid = &PAPER[13]; // Table 3, 2^50, log N 14, K 300: 6 primes, dnum 3, digits of 100 bits.
        let c = candidates(hybrid, KeySwitching::Hybrid, 14);
        assert_eq!((c[0].0.limbs, c[0].0.dnum), (6, 3));
        assert_eq!((c[0].0.special_primes, c[0].0.special_bits), (2, 60));
    }

    #[test]
    fn figures_follow_theorem_1() {
        let f1 = figure1(40);
        assert!((f1[0].eta_lower_bound - (1.001f64 / 0.001).log2()).abs() < 1e-12);
        assert!(f1
            .windows(2)
            .all(|w| w[1].eta_lower_bound > w[0].eta_lower_bound));
        let f2 = figure2(12, 30, 6).unwrap();
        assert!(f2.windows(2).all(|w| w[1].eta_max <= w[0].eta_max));
        assert!(f2
            .iter()
            .all(|p| p.failure_bound > 0.0 && p.failure_bound < 1.0));
    }

    /// The quick path on tiny parameters (N = 2^10): every output written, every row measured.
    #[test]
    fn quick_path_on_tiny_parameters() {
        let dir = std::env::temp_dir().join(format!("rnsfhe-xc-test-{}", std::process::id()));
        let rows = [PAPER[0], PAPER[12]]; // Table 2 (GHS, q = 2^40) and Table 3 (hybrid, q = 2^50).
        let effort = Effort {
            timing: TimingConfig {
                warmup_ms: 0,
                samples: 1,
                min_sample_us: 1,
            },
            trials: 1,
        };
        let report = run_rows(&rows, Some(10), |_| effort, true, 4, &dir).unwrap();
        assert_eq!(report.rows.len(), 2);
        for r in &report.rows {
            assert!(r.error.is_none(), "{:?}", r.error);
            assert_eq!(r.modes.len(), 3);
            assert!(r.deviations.iter().any(|d| d.contains("N = 2^10")));
            for m in &r.modes {
                assert!(m.mult_bits > 10.0 && m.rot_bits > 10.0, "{m:?}");
                assert!(m.mult_ms > 0.0 && m.rot_ms > 0.0);
            }
        }
        assert_eq!(report.summary.rows, 2);
        for name in [
            "exact-conversion.md",
            "exact-conversion.json",
            "figure1.csv",
            "figure2.csv",
        ] {
            let text = fs::read_to_string(dir.join(name)).unwrap();
            assert!(text.len() > 50, "{name}");
        }
        let md = fs::read_to_string(dir.join("exact-conversion.md")).unwrap();
        assert!(
            md.contains("Table 2") && md.contains("Table 3") && md.contains("ExactInteger (Exact)")
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
