//! `rnsfhe bench pegasus-figure7`: the accuracy of look-up tables (PEGASUS Fig. 7, Section VI.C.1) for
//! sigmoid, tanh, `sqrt|x|`, ReLU, sign and `1/x`, against the ring degree `n` of the look-up-table ring
//! (`2^11, 2^12, 2^13`) and the blind-rotation algorithm, at the Table IV setting otherwise (`n_lwe =
//! 1024`, `q_0 ~ 2^45`, `sigma_lut = 2^10`, `h = 64`; the special modulus below `2^50`, which changes the
//! error by less than `2^-25`, see `pegasus-table5`).
//!
//! **Pipeline** (PEGASUS Fig. 6 steps 4-6, the loop of one look-up table): an LWE ciphertext of
//! `Delta_in m` under a key of the CKKS dimension `N = 2^16` (as extracted from CKKS, Fig. 6 step 2) is
//! key-switched to `n_lwe` (step 4: its error is the table's input error `sigma_0` of Appendix C.2), goes
//! through the table (Fig. 2, step 5) and is key-switched back from `n` to `n_lwe` (step 6). PEGASUS
//! reports the accuracy of this loop: its LUT throughput (Table VI) is that of steps 4-6, Section VI.C.1
//! gives the key-switching error (`2^-14`) beside the LUT's (`[2^-10, 2^-7]`), and OpenPEGASUS's
//! example of these functions (the paper's code) measures after both switches. The error before the
//! switch back is reported too. S2C and repacking (steps 1 and 8-10) are not part of it.
//!
//! **Scales.** `Delta_in` is the largest scale keeping every input of the domain inside the table's
//! range with the margin of Eq. (3) ([`LookupTable::max_input_scale`], about `q_0 / 32` for `[-8, 8]`),
//! at the smallest `n` of the sweep so every `n` sees the same ciphertexts; the sign (`+-1`) is
//! negacyclic and takes twice that scale. `Delta_out = q_0 / (8 max |T|)`: outputs within `q_0 / 8`
//! (OpenPEGASUS's scale for bounded outputs), so that a sum of two is still a valid table input.
//!
//! Each function gets its own uniform inputs (1000 by default, [`Selection`]; `1/x` on `[1, 8]`, the
//! positive counts it inverts in PEGASUS's K-means, Section V.C), evaluated in parallel over the inputs
//! with the keys shared. The table prints the mean and the largest absolute error in `log2` (the paper's
//! `-log |f(x) - T_f(x)|` axis), the standard error of the mean in bits, and the measured error
//! variances of the two key switches and of blind rotation against
//! [`LweSwitchingKey::added_variance`] and [`rnsfhe_lwe::BlindRotationKey::added_variance`]. The PNG
//! plots the accuracy against `n` per function and algorithm.
//!
//! **Against PEGASUS.** Each mean is compared ([`Comparison`]) with OpenPEGASUS's mean error at the same
//! `n` pooled over several runs on this machine ([`Reference`]; a single 256-input run moves by 0.1 to
//! 0.3 bits from run to run, so one run is no reference), or for `1/x` at `n = 2^12` with the upper end
//! of the paper's range for Table IV (Section VI.C.1). The verdict is "at or below" when ours is not
//! above, "equal within sampling error" when it is above by less than two combined standard errors
//! (`z < 2`), and "above" otherwise.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use rand::Rng;
use rayon::prelude::*;
use rnsfhe_lwe::{
    BlindRotation, LookupTable, LweCiphertext, LweDimension, LweSecretDistribution, LweSecretKey,
    LweSwitchingKey, PegasusParams, PegasusPreset,
};
use rnsfhe_math::sampling::{Csprng, DiscreteGaussian};
use rnsfhe_math::Modulus;
use serde::Serialize;

use super::pegasus_setup::lut_setup;
use super::{markdown_table, write_json, BenchOptions, Machine};

/// The blind-rotation algorithms compared, one line each.
pub const ALGORITHMS: &[BlindRotation] = &[
    BlindRotation::Ternary,
    BlindRotation::Binary,
    BlindRotation::Lmkcdey,
];

/// The Hamming weight of every LWE key (PEGASUS Table IV, `h = 64`).
const WEIGHT: usize = 64;

/// The paper's range of LUT errors at Table IV (Section VI.C.1: "within `[2^-10, 2^-7]`"), `log2`.
const PAPER_RANGE_LOG2: (f64, f64) = (-10.0, -7.0);

/// The ring degree of Table IV (`log2 n`), where the paper's range applies.
const TABLE4_LOG_N: u32 = 12;

/// How many combined standard errors above the reference a mean may lie and still count as equal to it
/// within the sampling error (about the two-sided 95 % level).
pub const EQUAL_WITHIN_Z: f64 = 2.0;

/// A mean error of OpenPEGASUS (the paper's code) measured on this machine, pooled over several runs of
/// its look-up-table example; the sources are in `docs/bench/pegasus-accuracy.md`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Reference {
    /// `log2` of the ring degree `n` of its look-up table.
    pub log_n: u32,
    /// `log2` of the pooled mean absolute error (the mean of the per-input errors of all its runs).
    pub mean_log2: f64,
    /// The inputs pooled.
    pub inputs: usize,
    /// The standard error of the pooled mean, in bits (of `log2` of the mean).
    pub se_log2: f64,
}

/// A function of the figure.
#[derive(Clone, Copy, Debug)]
pub struct Function {
    /// Its name in the table.
    pub name: &'static str,
    /// The function.
    pub f: fn(f64) -> f64,
    /// The interval the inputs are drawn from, uniformly.
    pub domain: (f64, f64),
    /// `sup |f|` over the domain (sets the output scale).
    pub max_abs: f64,
    /// Whether `f` is its own antiperiodic extension (`f(x + 2R) = -f(x)` past the range `R` of the
    /// inputs), so that the whole phase range serves it ([`LookupTable::max_input_scale`]).
    pub negacyclic: bool,
    /// OpenPEGASUS's pooled mean errors on this machine, per ring degree where measured.
    pub openpegasus: &'static [Reference],
}

impl Function {
    /// The function called `name` in [`FUNCTIONS`] (ignoring case).
    pub fn by_name(name: &str) -> anyhow::Result<Function> {
        FUNCTIONS
            .iter()
            .find(|f| f.name.eq_ignore_ascii_case(name))
            .copied()
            .with_context(|| {
                let names: Vec<&str> = FUNCTIONS.iter().map(|f| f.name).collect();
                format!(
                    "unknown function {name:?}: expected one of {}",
                    names.join(", ")
                )
            })
    }

    /// OpenPEGASUS's pooled mean error at ring degree `2^log_n`, where measured.
    pub fn openpegasus_at(&self, log_n: u32) -> Option<Reference> {
        self.openpegasus.iter().find(|r| r.log_n == log_n).copied()
    }
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn sqrt_abs(x: f64) -> f64 {
    x.abs().sqrt()
}

fn relu(x: f64) -> f64 {
    x.max(0.0)
}

fn sign(x: f64) -> f64 {
    if x < 0.0 {
        -1.0
    } else {
        1.0
    }
}

fn reciprocal(x: f64) -> f64 {
    1.0 / x
}

// OpenPEGASUS's pooled mean errors (see `Reference`), all at n = 2^12: its `examples/lut.cc` at commit
// `5ddb20b` (scale 2^40, 256 uniform inputs in [-8, 8] per run; S2C, extraction, KS 2^16 -> 1024, LUT,
// KS n -> 1024), unchanged or with read-only instrumentation, run on this machine on 2026-11-26 (runs
// (A)-(D) in the morning, (E) in the afternoon); docs/bench/pegasus-accuracy.md lists every run. The
// pooled mean is the mean of all per-input errors. Its standard error is the per-input spread over the
// square root of the inputs: measured from the per-input dumps of (D) and (E) for sigmoid and tanh, from a
// plaintext simulation of the index for sqrt|x| and ReLU (coefficients of variation 1.49 and 1.46), and
// the half-normal spread of output noise (0.76) for the sign bit. At n = 2^11 and 2^13: one run of (E)
// each (`lut4_exe 11 1 STQRG 1`; `lut4_exe 13 2 STQRG 1`, stopped before its sign; one key generation each, 256
// inputs per function), with
// the standard error from its own per-input dump.

/// OpenPEGASUS's sigmoid: at n = 2^12 runs (A)-(D) and one run of (E), 5 x 256 inputs; one run of (E) at
/// n = 2^11 and at 2^13.
const SIGMOID_OPENPEGASUS: &[Reference] = &[
    Reference {
        log_n: 11,
        mean_log2: -10.04,
        inputs: 256,
        se_log2: 0.15,
    },
    Reference {
        log_n: 12,
        mean_log2: -11.06,
        inputs: 1280,
        se_log2: 0.07,
    },
    Reference {
        log_n: 13,
        mean_log2: -12.00,
        inputs: 256,
        se_log2: 0.15,
    },
];

/// OpenPEGASUS's tanh: at n = 2^12 runs (A)-(D) and one run of (E), 5 x 256 inputs; one run of (E) at
/// n = 2^11 and at 2^13.
const TANH_OPENPEGASUS: &[Reference] = &[
    Reference {
        log_n: 11,
        mean_log2: -9.25,
        inputs: 256,
        se_log2: 0.24,
    },
    Reference {
        log_n: 12,
        mean_log2: -10.41,
        inputs: 1280,
        se_log2: 0.13,
    },
    Reference {
        log_n: 13,
        mean_log2: -11.25,
        inputs: 256,
        se_log2: 0.27,
    },
];

/// OpenPEGASUS's `sqrt|x|`: runs (B) and (C) without the one input of (B) that wrapped past the end of
/// its table (its input scale leaves no margin; with the wraps of (A) and (B) the mean is `2^-5.9`); one
/// run of (E) at n = 2^11 and at 2^13 (no wrap).
const SQRT_OPENPEGASUS: &[Reference] = &[
    Reference {
        log_n: 11,
        mean_log2: -7.60,
        inputs: 256,
        se_log2: 0.11,
    },
    Reference {
        log_n: 12,
        mean_log2: -8.72,
        inputs: 511,
        se_log2: 0.10,
    },
    Reference {
        log_n: 13,
        mean_log2: -9.69,
        inputs: 256,
        se_log2: 0.15,
    },
];

/// OpenPEGASUS's ReLU: at n = 2^12 runs (A) and (C); one run of (E) at n = 2^11 and at 2^13.
const RELU_OPENPEGASUS: &[Reference] = &[
    Reference {
        log_n: 11,
        mean_log2: -7.19,
        inputs: 256,
        se_log2: 0.13,
    },
    Reference {
        log_n: 12,
        mean_log2: -8.03,
        inputs: 512,
        se_log2: 0.09,
    },
    Reference {
        log_n: 13,
        mean_log2: -9.05,
        inputs: 256,
        se_log2: 0.13,
    },
];

/// OpenPEGASUS's "Sign": the sign bit (0 / 1), half our `+-1` sign's error; at n = 2^12 runs (A) and (C),
/// one run of (E) at n = 2^11.
const SIGN_OPENPEGASUS: &[Reference] = &[
    Reference {
        log_n: 11,
        mean_log2: -17.20,
        inputs: 256,
        se_log2: 0.05,
    },
    Reference {
        log_n: 12,
        mean_log2: -16.41,
        inputs: 512,
        se_log2: 0.05,
    },
];

/// The six functions: PEGASUS Fig. 7's four, the sign and the reciprocal of Table VI.
pub const FUNCTIONS: [Function; 6] = [
    Function {
        name: "sigmoid",
        f: sigmoid,
        domain: (-8.0, 8.0),
        max_abs: 1.0,
        negacyclic: false,
        openpegasus: SIGMOID_OPENPEGASUS,
    },
    Function {
        name: "tanh",
        f: f64::tanh,
        domain: (-8.0, 8.0),
        max_abs: 1.0,
        negacyclic: false,
        openpegasus: TANH_OPENPEGASUS,
    },
    Function {
        name: "sqrt|x|",
        f: sqrt_abs,
        domain: (-8.0, 8.0),
        max_abs: 2.828_427_124_746_19,
        negacyclic: false,
        openpegasus: SQRT_OPENPEGASUS,
    },
    Function {
        name: "ReLU",
        f: relu,
        domain: (-8.0, 8.0),
        max_abs: 8.0,
        negacyclic: false,
        openpegasus: RELU_OPENPEGASUS,
    },
    Function {
        name: "sign",
        f: sign,
        domain: (-8.0, 8.0),
        max_abs: 1.0,
        negacyclic: true,
        openpegasus: SIGN_OPENPEGASUS,
    },
    Function {
        name: "1/x",
        f: reciprocal,
        domain: (1.0, 8.0),
        max_abs: 1.0,
        negacyclic: false,
        openpegasus: &[],
    },
];

/// What a run measures: the inputs per function, the ring degrees, the algorithms and the functions.
#[derive(Clone, Debug)]
pub struct Selection {
    /// Uniform inputs per function (at least 2, for the standard error of the mean).
    pub samples: usize,
    /// `log2` of the ring degrees `n` of the look-up-table ring.
    pub log_ns: Vec<u32>,
    /// The blind-rotation algorithms.
    pub algorithms: Vec<BlindRotation>,
    /// The functions.
    pub functions: Vec<Function>,
}

impl Selection {
    /// The full figure: 1000 inputs per function, `n = 2^11, 2^12, 2^13`, every algorithm and function
    /// (`--quick`: 100 inputs at `n = 2^10, 2^11` of the insecure test set).
    pub fn defaults(options: &BenchOptions) -> Self {
        let (samples, log_ns) = if options.quick {
            (100, vec![10, 11])
        } else {
            (1000, vec![11, 12, 13])
        };
        Selection {
            samples,
            log_ns,
            algorithms: ALGORITHMS.to_vec(),
            functions: FUNCTIONS.to_vec(),
        }
    }

    /// The defaults with whatever the command line gave: a number of inputs, ring degrees, algorithm
    /// names (`Ternary`, `Binary`, `Lmkcdey`) and function names (as in [`FUNCTIONS`]), each ignoring
    /// case. Errors on fewer than 2 inputs, an unknown name, or a ring degree outside `2^10..2^15`.
    pub fn from_args(
        options: &BenchOptions,
        samples: Option<usize>,
        log_ns: &[u32],
        algorithms: &[String],
        functions: &[String],
    ) -> anyhow::Result<Self> {
        let mut selection = Self::defaults(options);
        if let Some(samples) = samples {
            anyhow::ensure!(
                samples >= 2,
                "--samples {samples}: at least 2 inputs per function (the standard error needs two)"
            );
            selection.samples = samples;
        }
        if !log_ns.is_empty() {
            if let Some(bad) = log_ns.iter().find(|l| !(10..=15).contains(*l)) {
                anyhow::bail!("--log-n {bad}: the look-up-table ring is 2^10 to 2^15");
            }
            let mut sorted = log_ns.to_vec();
            sorted.sort_unstable();
            sorted.dedup();
            selection.log_ns = sorted;
        }
        if !algorithms.is_empty() {
            selection.algorithms = algorithms
                .iter()
                .map(|a| super::parse_named("blind-rotation algorithm", ALGORITHMS, a))
                .collect::<anyhow::Result<_>>()?;
        }
        if !functions.is_empty() {
            selection.functions = functions
                .iter()
                .map(|f| Function::by_name(f))
                .collect::<anyhow::Result<_>>()?;
        }
        Ok(selection)
    }
}

/// How a mean error compares with PEGASUS's figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum Verdict {
    /// Ours is at or below the reference.
    AtOrBelow,
    /// Ours is above, by less than [`EQUAL_WITHIN_Z`] combined standard errors.
    EqualWithinSamplingError,
    /// Ours is above by [`EQUAL_WITHIN_Z`] combined standard errors or more.
    Above,
}

/// A mean error against PEGASUS's figure at the same ring degree.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// Where the figure comes from.
    pub source: String,
    /// The figure, `log2` of a mean error.
    pub reference_log2: f64,
    /// Its standard error in bits (0 for the paper's range, a bound rather than a measurement).
    pub reference_se_log2: f64,
    /// `(ours - reference) / sqrt(se_ours^2 + se_reference^2)`, in bits over bits.
    pub z: f64,
    /// The verdict.
    pub verdict: Verdict,
}

impl Comparison {
    /// Compares `ours_log2` (standard error `ours_se_log2` bits) with a reference figure: at or below
    /// when not above it, equal within the sampling error when above by less than [`EQUAL_WITHIN_Z`]
    /// combined standard errors, above otherwise.
    pub fn new(
        source: String,
        ours_log2: f64,
        ours_se_log2: f64,
        reference_log2: f64,
        reference_se_log2: f64,
    ) -> Self {
        let combined = ours_se_log2.hypot(reference_se_log2);
        let difference = ours_log2 - reference_log2;
        let z = difference / combined;
        let verdict = if difference <= 0.0 {
            Verdict::AtOrBelow
        } else if z < EQUAL_WITHIN_Z {
            Verdict::EqualWithinSamplingError
        } else {
            Verdict::Above
        };
        Comparison {
            source,
            reference_log2,
            reference_se_log2,
            z,
            verdict,
        }
    }

    /// The verdict in words, with `z`.
    pub fn describe(&self) -> String {
        match self.verdict {
            Verdict::AtOrBelow => format!("at or below (z = {:.1})", self.z),
            Verdict::EqualWithinSamplingError => {
                format!("equal within sampling error (z = {:.1})", self.z)
            }
            Verdict::Above => format!("above (z = {:.1})", self.z),
        }
    }
}

/// PEGASUS's figure for `function` at ring degree `2^log_n` against our mean: OpenPEGASUS's pooled
/// mean where measured, else (at Table IV's `n = 2^12`) the upper end of the paper's range.
fn compare(
    function: &Function,
    log_n: u32,
    ours_log2: f64,
    ours_se_log2: f64,
) -> Option<Comparison> {
    if let Some(r) = function.openpegasus_at(log_n) {
        Some(Comparison::new(
            format!("OpenPEGASUS pooled, {} inputs", r.inputs),
            ours_log2,
            ours_se_log2,
            r.mean_log2,
            r.se_log2,
        ))
    } else if log_n == TABLE4_LOG_N {
        Some(Comparison::new(
            format!(
                "paper's range [2^{}, 2^{}]",
                PAPER_RANGE_LOG2.0, PAPER_RANGE_LOG2.1
            ),
            ours_log2,
            ours_se_log2,
            PAPER_RANGE_LOG2.1,
            0.0,
        ))
    } else {
        None
    }
}

/// `log2` of the mean of `errors` and its standard error in bits: the standard error of the mean
/// (sample standard deviation over `sqrt(len)`) divided by `mean ln 2`, the derivative of `log2`.
fn log2_mean_with_se(errors: &[f64]) -> (f64, f64) {
    let count = errors.len() as f64;
    let mean = errors.iter().sum::<f64>() / count;
    let variance = errors.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / (count - 1.0);
    let se = (variance / count).sqrt();
    (mean.log2(), se / (mean * std::f64::consts::LN_2))
}

/// The accuracy of one function at one ring degree and algorithm.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The function.
    pub function: String,
    /// The blind-rotation algorithm.
    pub algorithm: String,
    /// `log2` of the ring degree `n`.
    pub log_n: u32,
    /// Inputs evaluated.
    pub samples: usize,
    /// `log2` of the mean absolute error after the switch back to `n_lwe` (Fig. 6 step 6).
    pub mean_log2: f64,
    /// The standard error of [`Row::mean_log2`] in bits, from the spread of the per-input errors.
    pub mean_se_log2: f64,
    /// `log2` of the largest absolute error after the switch back.
    pub max_log2: f64,
    /// `log2` of the mean absolute error of the table's output (before the switch back).
    pub mean_lut_log2: f64,
    /// `log2` of the largest absolute error of the table's output.
    pub max_lut_log2: f64,
    /// The mean error against PEGASUS's figure at this `n`: OpenPEGASUS's pooled mean where measured,
    /// else at `n = 2^12` the upper end of the paper's range; none in a quick run.
    pub pegasus: Option<Comparison>,
    /// Milliseconds of thread time per table (steps 5 and 6; indicative, all threads busy).
    pub lut_ms: f64,
}

/// A measured error variance against its formula.
#[derive(Debug, Clone, Serialize)]
pub struct VarianceRow {
    /// The operation.
    pub operation: String,
    /// Samples.
    pub samples: usize,
    /// The measured variance (mean square of the added error).
    pub measured: f64,
    /// The formula's variance (mean over the samples).
    pub formula: f64,
    /// `measured / formula`.
    pub ratio: f64,
}

/// The input scale, output scale and domain of a function in a run.
#[derive(Debug, Clone, Serialize)]
struct Scales {
    function: String,
    domain: (f64, f64),
    input_scale_log2: f64,
    output_scale_log2: f64,
}

/// Everything the table writes to JSON.
#[derive(Debug, Serialize)]
struct Results {
    /// False in the file written after each ring while the run goes on (an hour-long run on a shared
    /// machine leaves what it measured).
    complete: bool,
    machine: Machine,
    preset: String,
    n_lwe: usize,
    ckks_log_n: u32,
    log_ns: Vec<u32>,
    scales: Vec<Scales>,
    rows: Vec<Row>,
    variances: Vec<VarianceRow>,
}

/// The LWE key of `algorithm`: ternary of weight `h` (PEGASUS Table IV), binary of the same weight for
/// the binary form (so both tables see the same modulus-switching error).
fn lwe_key(
    algorithm: BlindRotation,
    dimension: LweDimension,
    rng: &mut Csprng,
) -> anyhow::Result<LweSecretKey> {
    let distribution = match algorithm {
        BlindRotation::Binary => LweSecretDistribution::BinaryWeight(WEIGHT),
        _ => LweSecretDistribution::TernaryWeight(WEIGHT),
    };
    Ok(LweSecretKey::generate(dimension, distribution, rng)?)
}

/// Per input of one function at one `n`: the errors after the table and after the switch back, the
/// blind-rotation error, its formula's variance, and the error of the switch back.
struct Sample {
    lut_error: f64,
    final_error: f64,
    rotation_error: f64,
    rotation_formula: f64,
    switch_error: f64,
}

/// Sums of squares of measured errors and of formula variances.
#[derive(Default)]
struct VarianceSum {
    samples: usize,
    measured: f64,
    formula: f64,
}

impl VarianceSum {
    fn add(&mut self, error: f64, formula: f64) {
        self.samples += 1;
        self.measured += error * error;
        self.formula += formula;
    }

    fn row(&self, operation: String) -> VarianceRow {
        let measured = self.measured / self.samples as f64;
        let formula = self.formula / self.samples as f64;
        VarianceRow {
            operation,
            samples: self.samples,
            measured,
            formula,
            ratio: measured / formula,
        }
    }
}

fn log2_mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, count) = values.fold((0.0, 0usize), |(s, c), v| (s + v, c + 1));
    (sum / count as f64).log2()
}

fn log2_max(values: impl Iterator<Item = f64>) -> f64 {
    values.fold(0.0, f64::max).log2()
}

/// Runs the figure (see the module documentation).
pub fn run(options: &BenchOptions) -> anyhow::Result<()> {
    run_selection(options, &Selection::defaults(options))
}

/// Runs the figure on a selection of inputs, ring degrees, algorithms and functions.
pub fn run_selection(options: &BenchOptions, selection: &Selection) -> anyhow::Result<()> {
    let preset = if options.quick {
        PegasusPreset::InsecureTest
    } else {
        PegasusPreset::PegasusTable4FastSpecial
    };
    let Selection {
        samples,
        log_ns,
        algorithms,
        functions,
    } = selection;
    anyhow::ensure!(
        *samples >= 2 && !log_ns.is_empty() && !algorithms.is_empty() && !functions.is_empty(),
        "pegasus-figure7 needs at least 2 inputs, one ring degree, one algorithm and one function"
    );
    let params = preset.params()?;
    let machine = Machine::detect();
    let mut rng = Csprng::from_os()?;
    let q0 = params.key_switch.modulus;
    let modulus = Modulus::new(q0)?;
    let fresh = DiscreteGaussian::with_sigma(3.2)?;
    let lwe_dim = LweDimension::new(params.lwe_dimension)?;
    let ckks_sk = LweSecretKey::generate(
        LweDimension::new(1 << params.ckks_log_n)?,
        params.lwe_secret,
        &mut rng,
    )?;
    let inputs: Vec<Vec<f64>> = functions
        .iter()
        .map(|f| {
            (0..*samples)
                .map(|_| rng.gen_range(f.domain.0..=f.domain.1))
                .collect()
        })
        .collect();

    let mut rows = Vec::new();
    let mut variances = Vec::new();
    let mut scales = Vec::new();
    // Per algorithm: its LWE key, the scales and the switched ciphertexts of every function.
    let mut setups = Vec::with_capacity(algorithms.len());
    for &algorithm in algorithms {
        let lwe_sk = lwe_key(algorithm, lwe_dim, &mut rng)?;
        let key_norm_sq = lwe_sk.coefficients().iter().map(|c| (c * c) as f64).sum();
        let ks_in = LweSwitchingKey::generate_allowing_insecure(
            &ckks_sk,
            &lwe_sk,
            params.key_switch,
            &mut rng,
        )?;
        let input_sigma = (ks_in.added_variance() + 3.2f64.powi(2)).sqrt();
        // The scales, at the smallest ring of the sweep (the largest index error).
        let smallest = lut_params(&params, log_ns.iter().copied().min().unwrap_or(12))
            .lut
            .context_allowing_insecure()?;
        let function_scales = functions
            .iter()
            .map(|f| {
                let bound = f.domain.0.abs().max(f.domain.1.abs());
                let input = LookupTable::max_input_scale(
                    &smallest,
                    bound,
                    input_sigma,
                    key_norm_sq,
                    f.negacyclic,
                )?;
                Ok((input, q0 as f64 / (8.0 * f.max_abs)))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        if scales.is_empty() {
            scales = functions
                .iter()
                .zip(&function_scales)
                .map(|(f, &(i, o))| Scales {
                    function: f.name.to_string(),
                    domain: f.domain,
                    input_scale_log2: i.log2(),
                    output_scale_log2: o.log2(),
                })
                .collect();
        }
        // Fig. 6 step 4: LWE ciphertexts of dimension N switched to n_lwe; the switch's error measured.
        let mut ks_in_var = VarianceSum::default();
        let mut cts = Vec::with_capacity(functions.len());
        for (values, &(input_scale, _)) in inputs.iter().zip(&function_scales) {
            let wide: Vec<LweCiphertext> = values
                .iter()
                .map(|&m| {
                    ckks_sk.encrypt((m * input_scale).round() as i64, &modulus, &fresh, &mut rng)
                })
                .collect();
            let switched = wide
                .par_iter()
                .map(|ct| {
                    let out = ks_in.switch(ct)?;
                    let added = lwe_sk.decrypt(&out)? - ckks_sk.decrypt(ct)?;
                    Ok((out, added as f64))
                })
                .collect::<anyhow::Result<Vec<_>>>()?;
            for (_, e) in &switched {
                ks_in_var.add(*e, ks_in.added_variance());
            }
            cts.push(switched.into_iter().map(|(ct, _)| ct).collect::<Vec<_>>());
        }
        variances.push(ks_in_var.row(format!(
            "KS N = 2^{} -> n_lwe = {} ({algorithm:?} key)",
            params.ckks_log_n, params.lwe_dimension
        )));
        setups.push((algorithm, lwe_sk, function_scales, cts));
    }

    // The ring OpenPEGASUS was measured at first (the comparison), then the others.
    let mut order = log_ns.clone();
    order.sort_by_key(|&l| (l != TABLE4_LOG_N, l));
    for &log_n in &order {
        for (algorithm, lwe_sk, function_scales, cts) in &setups {
            let algorithm = *algorithm;
            let p = lut_params(&params, log_n);
            let (ctx, ring_sk, eval) = lut_setup(algorithm, &p, lwe_sk, &mut rng)?;
            let lut_sk = LweSecretKey::from_ring_key(&ring_sk)?;
            let ks_out = LweSwitchingKey::generate_allowing_insecure(
                &lut_sk,
                lwe_sk,
                p.key_switch,
                &mut rng,
            )?;
            let two_n = 2 * ctx.n() as u64;
            let mut rotation_var = VarianceSum::default();
            let mut ks_out_var = VarianceSum::default();
            for ((f, values), (cts, &(input_scale, output_scale))) in functions
                .iter()
                .zip(&inputs)
                .zip(cts.iter().zip(function_scales.iter()))
            {
                // The grid reaches a little past the domain (and 1/x's grid crosses 0): the table holds
                // f on its domain, constant past its ends.
                let (lo, hi) = f.domain;
                let table = LookupTable::from_fn(&ctx, input_scale, output_scale, |x| {
                    (f.f)(x.clamp(lo, hi))
                })?;
                let start = Instant::now();
                let outs = cts
                    .par_iter()
                    .zip(values)
                    .map(|(ct, &m)| {
                        let out = eval.evaluate(ct, &table)?;
                        let back = ks_out.switch(&out)?;
                        // Everything below reads the secret keys: the measurement, not the pipeline.
                        let switched = ct.switch_modulus(two_n)?;
                        let index = lwe_sk.decrypt(&switched)?;
                        let nonzero = switched.a().iter().filter(|&&a| a != 0).count();
                        let phase_lut = lut_sk.decrypt(&out)?;
                        let phase_back = lwe_sk.decrypt(&back)?;
                        let exact = (f.f)(m);
                        Ok(Sample {
                            lut_error: (phase_lut as f64 / output_scale - exact).abs(),
                            final_error: (phase_back as f64 / output_scale - exact).abs(),
                            rotation_error: (phase_lut - table.value_at(index)) as f64,
                            rotation_formula: eval.key().added_variance(nonzero),
                            switch_error: (phase_back - phase_lut) as f64,
                        })
                    })
                    .collect::<anyhow::Result<Vec<Sample>>>()?;
                let lut_ms =
                    start.elapsed().as_secs_f64() * 1e3 * rayon::current_num_threads() as f64
                        / values.len() as f64;
                for s in &outs {
                    rotation_var.add(s.rotation_error, s.rotation_formula);
                    ks_out_var.add(s.switch_error, ks_out.added_variance());
                }
                let final_errors: Vec<f64> = outs.iter().map(|s| s.final_error).collect();
                let (mean_log2, mean_se_log2) = log2_mean_with_se(&final_errors);
                // Progress on stderr: a full run takes about an hour on two cores.
                eprintln!(
                    "{algorithm:?}, n = 2^{log_n}, {}: mean error 2^{mean_log2:.2} ({:.0} s)",
                    f.name,
                    start.elapsed().as_secs_f64()
                );
                let pegasus = if options.quick {
                    None
                } else {
                    compare(f, log_n, mean_log2, mean_se_log2)
                };
                rows.push(Row {
                    function: f.name.to_string(),
                    algorithm: format!("{algorithm:?}"),
                    log_n,
                    samples: values.len(),
                    mean_log2,
                    mean_se_log2,
                    max_log2: log2_max(outs.iter().map(|s| s.final_error)),
                    mean_lut_log2: log2_mean(outs.iter().map(|s| s.lut_error)),
                    max_lut_log2: log2_max(outs.iter().map(|s| s.lut_error)),
                    pegasus,
                    lut_ms,
                });
            }
            variances
                .push(rotation_var.row(format!("blind rotation n = 2^{log_n} ({algorithm:?})")));
            variances.push(ks_out_var.row(format!(
                "KS n = 2^{log_n} -> n_lwe = {} ({algorithm:?} key)",
                params.lwe_dimension
            )));
        }
        let partial = Results {
            complete: false,
            machine: machine.clone(),
            preset: format!("{preset:?}"),
            n_lwe: params.lwe_dimension,
            ckks_log_n: params.ckks_log_n,
            log_ns: log_ns.clone(),
            scales: scales.clone(),
            rows: rows.clone(),
            variances: variances.clone(),
        };
        write_json(&options.out, "pegasus-figure7", &partial)
            .context("writing the partial pegasus-figure7 results")?;
    }
    rows.sort_by(|a, b| {
        let rank = |r: &Row| {
            let f = functions.iter().position(|f| f.name == r.function);
            let a = algorithms
                .iter()
                .position(|a| format!("{a:?}") == r.algorithm);
            (f, a, r.log_n)
        };
        rank(a).cmp(&rank(b))
    });

    print_tables(options, &machine, &params, &scales, &rows, &variances);
    let results = Results {
        complete: true,
        machine,
        preset: format!("{preset:?}"),
        n_lwe: params.lwe_dimension,
        ckks_log_n: params.ckks_log_n,
        log_ns: log_ns.clone(),
        scales,
        rows,
        variances,
    };
    let path = write_json(&options.out, "pegasus-figure7", &results)
        .context("writing the pegasus-figure7 results")?;
    eprintln!("wrote {}", path.display());
    let png = options.out.join("pegasus-figure7.png");
    plot(&png, &results.rows, &results.log_ns, functions, algorithms)
        .context("drawing the pegasus-figure7 plot")?;
    eprintln!("wrote {}", png.display());
    Ok(())
}

/// `params` with the look-up-table ring of degree `2^log_n`.
fn lut_params(params: &PegasusParams, log_n: u32) -> PegasusParams {
    let mut p = *params;
    p.lut.log_n = log_n;
    p
}

fn print_tables(
    options: &BenchOptions,
    machine: &Machine,
    params: &PegasusParams,
    scales: &[Scales],
    rows: &[Row],
    variances: &[VarianceRow],
) {
    println!("{}", machine.markdown_header());
    println!(
        "PEGASUS Fig. 7: LUT accuracy, Fig. 6 steps 4-6 (KS N = 2^{} -> n_lwe = {}, LUT, KS n -> n_lwe); \
         q_0 ~ 2^{:.1}, q' ~ 2^{:.1}, sigma_lut = 2^10, B_ks = 2^7, d_ks = 7, sigma_ks = 2^13, h = {WEIGHT}{}\n",
        params.ckks_log_n,
        params.lwe_dimension,
        (params.lut.q0 as f64).log2(),
        (params.lut.special as f64).log2(),
        if options.quick {
            "; QUICK RUN at small insecure dimensions: not comparable with the paper"
        } else {
            ""
        }
    );
    let scale_rows: Vec<Vec<String>> = scales
        .iter()
        .map(|s| {
            vec![
                s.function.clone(),
                format!("[{}, {}]", s.domain.0, s.domain.1),
                format!("2^{:.3}", s.input_scale_log2),
                format!("2^{:.3}", s.output_scale_log2),
            ]
        })
        .collect();
    println!(
        "{}",
        markdown_table(
            &["function", "inputs", "Delta_in", "Delta_out"],
            &scale_rows
        )
    );
    let log = |v: f64| format!("2^{v:.2}");
    let table_rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let (pegasus, verdict) = match &r.pegasus {
                Some(c) if c.reference_se_log2 > 0.0 => (
                    format!(
                        "{} +- {:.2} ({})",
                        log(c.reference_log2),
                        c.reference_se_log2,
                        c.source
                    ),
                    c.describe(),
                ),
                Some(c) => (
                    format!("{} ({})", log(c.reference_log2), c.source),
                    c.describe(),
                ),
                None => ("-".into(), "-".into()),
            };
            vec![
                r.function.clone(),
                r.algorithm.clone(),
                format!("2^{}", r.log_n),
                r.samples.to_string(),
                format!("{} +- {:.2}", log(r.mean_log2), r.mean_se_log2),
                log(r.max_log2),
                format!("{} / {}", log(r.mean_lut_log2), log(r.max_lut_log2)),
                pegasus,
                verdict,
                format!("{:.0}", r.lut_ms),
            ]
        })
        .collect();
    println!(
        "\n{}",
        markdown_table(
            &[
                "function",
                "algorithm",
                "n",
                "inputs",
                "mean error +- se (bits)",
                "max error",
                "before KS back (mean / max)",
                "PEGASUS (mean +- se, bits)",
                "against PEGASUS",
                "ms / LUT (thread time)",
            ],
            &table_rows
        )
    );
    println!(
        "\nPEGASUS: OpenPEGASUS's mean errors measured on this machine, pooled over several runs of 256 \
         inputs (its sign is the 0/1 sign bit; its sqrt|x| without the inputs that wrapped past the end \
         of its table); for 1/x the paper's range [2^{}, 2^{}] (Section VI.C.1, Table IV). se: the \
         standard error of a mean in bits; z: the difference over the combined standard error; \
         \"equal within sampling error\" when ours is above by less than {EQUAL_WITHIN_Z} of them.\n",
        PAPER_RANGE_LOG2.0, PAPER_RANGE_LOG2.1
    );
    let variance_rows: Vec<Vec<String>> = variances
        .iter()
        .map(|v| {
            vec![
                v.operation.clone(),
                v.samples.to_string(),
                format!("2^{:.2}", v.measured.log2()),
                format!("2^{:.2}", v.formula.log2()),
                format!("{:.3}", v.ratio),
            ]
        })
        .collect();
    println!(
        "{}",
        markdown_table(
            &[
                "added error of",
                "samples",
                "measured variance",
                "formula",
                "ratio"
            ],
            &variance_rows
        )
    );
}

/// Colours of the algorithms, in the order of [`ALGORITHMS`] (then repeated).
const COLOURS: [plotters::style::RGBColor; 4] = [
    plotters::style::RGBColor(31, 119, 180),
    plotters::style::RGBColor(214, 39, 40),
    plotters::style::RGBColor(44, 160, 44),
    plotters::style::RGBColor(148, 103, 189),
];

/// One panel per function: accuracy (`-log2` of the mean error, solid, and of the largest, dashed)
/// against `log2 n`, one colour per algorithm; OpenPEGASUS's pooled means as black crosses and
/// the paper's range as a grey band.
fn plot(
    path: &Path,
    rows: &[Row],
    log_ns: &[u32],
    functions: &[Function],
    algorithms: &[BlindRotation],
) -> anyhow::Result<()> {
    use plotters::prelude::*;

    // The text of the plot uses an embedded font (no system font files).
    plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular())
        .map_err(|_| anyhow::anyhow!("the embedded DejaVu Sans font is invalid"))?;
    let path: PathBuf = path.to_path_buf();
    let root = BitMapBackend::new(&path, (1500, 950)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(
        "LUT accuracy (PEGASUS Fig. 7): -log2 |f(x) - T_f(x)| after KS N -> n_lwe, LUT, KS n -> n_lwe",
        ("sans-serif", 24),
    )?;
    let panels = root.split_evenly((2, 3));
    let (x_lo, x_hi) = (
        f64::from(log_ns[0]) - 0.3,
        f64::from(log_ns[log_ns.len() - 1]) + 0.3,
    );
    for (panel, function) in panels.iter().zip(functions) {
        let mine: Vec<&Row> = rows
            .iter()
            .filter(|r| r.function == function.name)
            .collect();
        let accuracies = mine
            .iter()
            .flat_map(|r| [-r.mean_log2, -r.max_log2])
            .chain(function.openpegasus.iter().map(|r| -r.mean_log2))
            .chain([-PAPER_RANGE_LOG2.0, -PAPER_RANGE_LOG2.1])
            .filter(|v| v.is_finite());
        let (lo, hi) = accuracies.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        let (y_lo, y_hi) = ((lo - 1.0).floor(), (hi + 1.0).ceil());
        let mut chart = ChartBuilder::on(panel)
            .caption(function.name, ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(x_lo..x_hi, y_lo..y_hi)?;
        chart
            .configure_mesh()
            .x_labels(log_ns.len() * 2 + 1)
            .x_label_formatter(&|x| {
                if (x - x.round()).abs() < 1e-6 {
                    format!("n = 2^{}", x.round())
                } else {
                    String::new()
                }
            })
            .y_desc("bits: -log2 |error|")
            .label_style(("sans-serif", 15))
            .draw()?;
        let band = RGBColor(200, 200, 200).mix(0.35);
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(x_lo, -PAPER_RANGE_LOG2.1), (x_hi, -PAPER_RANGE_LOG2.0)],
                band.filled(),
            )))?
            .label("paper's range, n = 2^12")
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 18, y + 5)], band.filled()));
        for (i, algorithm) in algorithms.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let name = format!("{algorithm:?}");
            let points = |max: bool| -> Vec<(f64, f64)> {
                mine.iter()
                    .filter(|r| r.algorithm == name)
                    .map(|r| {
                        let v = if max { r.max_log2 } else { r.mean_log2 };
                        (f64::from(r.log_n), -v)
                    })
                    .filter(|p| p.1.is_finite())
                    .collect()
            };
            let mean = points(false);
            chart
                .draw_series(LineSeries::new(mean.clone(), colour.stroke_width(2)))?
                .label(format!("{name} mean"))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(2))
                });
            chart.draw_series(mean.iter().map(|&p| Circle::new(p, 4, colour.filled())))?;
            chart
                .draw_series(DashedLineSeries::new(
                    points(true),
                    6,
                    4,
                    colour.stroke_width(1),
                ))?
                .label(format!("{name} max"))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(1))
                });
        }
        // OpenPEGASUS's pooled means, with a bar of two standard errors either side.
        let references: Vec<&Reference> = function
            .openpegasus
            .iter()
            .filter(|r| {
                let x = f64::from(r.log_n);
                x >= x_lo && x <= x_hi
            })
            .collect();
        if !references.is_empty() {
            chart
                .draw_series(references.iter().map(|r| {
                    Cross::new((f64::from(r.log_n), -r.mean_log2), 7, BLACK.stroke_width(2))
                }))?
                .label("OpenPEGASUS pooled mean (+- 2 se)")
                .legend(|(x, y)| Cross::new((x + 9, y), 5, BLACK.stroke_width(2)));
            chart.draw_series(references.iter().map(|r| {
                let x = f64::from(r.log_n);
                let spread = EQUAL_WITHIN_Z * r.se_log2;
                PathElement::new(
                    vec![(x, -r.mean_log2 - spread), (x, -r.mean_log2 + spread)],
                    BLACK.stroke_width(1),
                )
            }))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .label_font(("sans-serif", 13))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()?;
    }
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparison_verdicts_follow_the_combined_standard_error() {
        // se 0.03 and 0.04 bits combine to 0.05.
        let below = Comparison::new("r".into(), -10.5, 0.03, -10.4, 0.04);
        assert_eq!(below.verdict, Verdict::AtOrBelow);
        assert!((below.z + 2.0).abs() < 1e-9);
        let equal = Comparison::new("r".into(), -10.35, 0.03, -10.4, 0.04);
        assert_eq!(equal.verdict, Verdict::EqualWithinSamplingError);
        assert!((equal.z - 1.0).abs() < 1e-9);
        assert_eq!(equal.describe(), "equal within sampling error (z = 1.0)");
        let above = Comparison::new("r".into(), -10.25, 0.03, -10.4, 0.04);
        assert_eq!(above.verdict, Verdict::Above);
        assert!((above.z - 3.0).abs() < 1e-9);
        // Equal figures are "at or below", whatever the errors.
        let same = Comparison::new("r".into(), -8.0, 0.0, -8.0, 0.0);
        assert_eq!(same.verdict, Verdict::AtOrBelow);
    }

    #[test]
    fn standard_error_of_the_log_mean() {
        // Errors 1, 3 (twice each): mean 2, sample variance 4/3, se sqrt(1/3), in bits / (2 ln 2).
        let (mean, se) = log2_mean_with_se(&[1.0, 3.0, 1.0, 3.0]);
        assert!((mean - 1.0).abs() < 1e-12);
        let expected = (1.0f64 / 3.0).sqrt() / (2.0 * std::f64::consts::LN_2);
        assert!((se - expected).abs() < 1e-12);
    }

    #[test]
    fn references_and_the_paper_range() {
        let sigmoid = Function::by_name("SIGMOID").unwrap();
        let reference = sigmoid.openpegasus_at(12).unwrap();
        let c = compare(&sigmoid, 12, reference.mean_log2, 0.0).unwrap();
        assert_eq!(c.verdict, Verdict::AtOrBelow);
        assert!(c.source.starts_with("OpenPEGASUS"));
        let reciprocal = Function::by_name("1/x").unwrap();
        let c = compare(&reciprocal, 12, -6.9, 0.02).unwrap();
        assert_eq!(c.reference_log2, PAPER_RANGE_LOG2.1);
        assert_eq!(c.verdict, Verdict::Above);
        assert!(compare(&reciprocal, 13, -6.9, 0.02).is_none());
        assert!(Function::by_name("cosh").is_err());
    }

    #[test]
    fn selection_from_the_command_line() {
        let options = BenchOptions {
            quick: false,
            out: PathBuf::from("x"),
        };
        let s = Selection::from_args(
            &options,
            Some(4000),
            &[13, 12, 12],
            &["ternary".into()],
            &["tanh".into(), "ReLU".into()],
        )
        .unwrap();
        assert_eq!(s.samples, 4000);
        assert_eq!(s.log_ns, vec![12, 13]);
        assert_eq!(s.algorithms, vec![BlindRotation::Ternary]);
        let names: Vec<&str> = s.functions.iter().map(|f| f.name).collect();
        assert_eq!(names, ["tanh", "ReLU"]);
        let d = Selection::from_args(&options, None, &[], &[], &[]).unwrap();
        assert_eq!((d.samples, d.log_ns.clone()), (1000, vec![11, 12, 13]));
        assert_eq!(d.algorithms.len(), ALGORITHMS.len());
        assert_eq!(d.functions.len(), FUNCTIONS.len());
        assert!(Selection::from_args(&options, Some(1), &[], &[], &[]).is_err());
        assert!(Selection::from_args(&options, None, &[9], &[], &[]).is_err());
        assert!(Selection::from_args(&options, None, &[], &["fhew".into()], &[]).is_err());
        assert!(Selection::from_args(&options, None, &[], &[], &["exp".into()]).is_err());
    }
}
