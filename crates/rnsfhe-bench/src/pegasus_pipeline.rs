//! The pipeline rows of `rnsfhe bench pegasus-table5`: PEGASUS Table V's CKKS-side rows (S2C, LT,
//! F_mod) and the rest of the pipeline of Fig. 6 (extraction with each dimension switch, ring packing,
//! modulus raise, subring trace, CoeffsToSlots, repacking end to end by each path, the whole pipeline),
//! each on 1 and on 2 threads, beside the paper's figures and those of OpenPEGASUS measured on this
//! machine; and the accuracy of the round trip (sigmoid, ReLU, `sqrt|x|` on `[-8, 8]`) by each path.
//!
//! # What is timed
//!
//! For every preset (`PipelinePreset::Table4`, `PipelinePreset::Secure128`; `--quick`:
//! `PipelinePreset::InsecureTest` at small sizes) and every `l` of the stage rows (`2^8, 2^10, 2^12`):
//!
//! * **S2C** (Fig. 6 step 1): SlotsToCoeffs on `l` slots at the pipeline's levels (its start level is
//!   [`PegasusEvaluator::input_level`], its level count [`PipelineOptions::s2c_levels`]), on the rotation
//!   keys of the pipeline evaluator of the ring-packing path for `l` values. The factor folded into the
//!   matrices (the pipeline's `Delta_in`) does not change the cost: the matrices are encoded with 1.
//! * **Extraction** (Fig. 6 steps 2-4): the `l` values of the S2C output as LWE ciphertexts of dimension
//!   `n_lwe` by each [`DimensionSwitch`] (PEGASUS Fig. 9 per ciphertext, or one RLWE key switch of the
//!   whole ciphertext).
//! * **Ring-packing path**: ring packing of `l` look-up-table outputs (dimension `n` of the table ring,
//!   over `q_0`, at the stride the pipeline uses), the modulus raise, the subring trace, CoeffsToSlots,
//!   F_mod, and the whole repacking through [`PegasusEvaluator::repack`].
//! * **Linear-transform path** (PEGASUS's): the `l` key switches `n -> n_lwe` of Fig. 6 step 6, the
//!   tiled linear transform of Fig. 5 on the repacking key ([`repacking::linear_transform`]), F_mod, and
//!   the three in a row, as [`PegasusEvaluator::repack`] runs them (the same public calls): a pipeline
//!   evaluator of this path for `l >= 2^10` would hold the rotation keys of S2C and of the transform
//!   together (more than this machine's memory), which the stage does not need.
//! * **End to end** at a small `l` (default `2^8`): [`PegasusEvaluator::apply`] for sigmoid, CKKS
//!   ciphertext in, `l` look-up tables, CKKS ciphertext out, by each path; its steps
//!   ([`PegasusEvaluator::to_lwe`], [`PegasusEvaluator::repack`]) timed beside it and the tables' share
//!   by difference. The tables dominate (about `l` blind rotations).
//!
//! F_mod does not depend on `l` (it works on the whole ring): it is timed once per path and preset.
//!
//! Each configuration (one preset, one `l`, one path) generates its own keys and drops them before the
//! next: the rotation keys at `N = 2^16` are about 84 MB each. A configuration whose estimated memory
//! exceeds what the machine has available is skipped with a note (the rerun on a larger machine fills
//! the row). The peak resident memory of each configuration is reported (Linux: `VmHWM`, reset through
//! `/proc/self/clear_refs`).
//!
//! # Accuracy
//!
//! The mean and largest absolute error, `log2`, of the decrypted output of [`PegasusEvaluator::apply`]
//! against the exact function, for sigmoid, ReLU and `sqrt|x|` on the `l` values of the end-to-end rows
//! (uniform on `[-8, 8]`), by each path (goal: sigmoid within `2^-12`; PEGASUS reports `2^-8.5`).
//!
//! # Look-up-table rings and row selection
//!
//! The end-to-end and accuracy rows run once per look-up-table ring degree of
//! [`PipelineSelection::lut_log_n`] (default: the preset's, `n = 2^12` for Table IV), with the pipeline of
//! [`PipelineParams::with_lut_log_n`] (PEGASUS Fig. 7: each doubling of `n` halves the tables' error and
//! doubles their time); their labels and JSON rows carry `n`. The stage rows keep the preset's ring.
//! [`PipelineSelection::rows`] limits a run to the end-to-end and accuracy rows, or to the accuracy rows
//! alone (one untimed [`PegasusEvaluator::apply`] per function, path and ring), and
//! [`PipelineSelection::functions`] / [`PipelineSelection::paths`] to some functions and paths: the
//! accuracy of `n = 2^13` at Table IV for 1024 values of sigmoid costs a key set and 1024 blind rotations
//! instead of the hour of the whole table.

use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use rnsfhe_ckks::dft::DftDirection;
use rnsfhe_ckks::dft::{dft_factors, real_value_positions, CoeffsToSlots, CoeffsToSlotsOutput};
use rnsfhe_ckks::eval_mod::EvalMod;
use rnsfhe_ckks::mod_raise::subring_trace_elements;
use rnsfhe_ckks::{
    Ciphertext, CkksContext, CkksDecryptor, CkksEncryptor, Complex64, Csprng, Evaluator,
    KeyGenerator, RelinKey,
};
use rnsfhe_lwe::{LweCiphertext, LweDimension, LweSecretKey, LweSwitchingKey};
use rnsfhe_math::sampling::DiscreteGaussian;
use rnsfhe_math::Modulus;
use rnsfhe_pegasus::repacking::{self, repacking_rotation_steps, RepackingKey};
use rnsfhe_pegasus::{
    DimensionSwitch, DimensionSwitchKeys, PegasusEvaluator, PegasusKeys, PegasusSecretKeys,
    PipelineOptions, PipelineParams, PipelinePreset, Repacking, RingPackingKey,
};
use serde::Serialize;

use super::{markdown_table, median, write_json, BenchOptions, Machine};

/// Which pipeline rows to run: the presets, the sizes of the stage rows and of the end-to-end rows.
#[derive(Debug, Clone)]
pub struct PipelineSelection {
    /// The pipeline presets, in order.
    pub presets: Vec<PipelinePreset>,
    /// `log2 l` of the stage rows.
    pub log_l: Vec<u32>,
    /// `log2 l` of the end-to-end and accuracy rows.
    pub e2e_log_l: u32,
    /// `log2 n` of the look-up-table rings of the end-to-end and accuracy rows, in order (empty: the
    /// preset's); see [`PipelineParams::with_lut_log_n`].
    pub lut_log_n: Vec<u32>,
    /// Which rows run.
    pub rows: PipelineRows,
    /// The functions of the accuracy rows, by name ([`FUNCTION_NAMES`], case-insensitive; empty: all).
    pub functions: Vec<String>,
    /// The repacking paths of the end-to-end and accuracy rows (empty: both).
    pub paths: Vec<Repacking>,
}

/// Which rows of a [`PipelineSelection`] run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PipelineRows {
    /// The stage rows, the end-to-end rows and the accuracy rows.
    All,
    /// The end-to-end rows (timed) and the accuracy rows: no stage rows.
    EndToEnd,
    /// The accuracy rows alone: one untimed [`PegasusEvaluator::apply`] per function, path and ring.
    Accuracy,
}

impl PipelineSelection {
    /// The defaults: `Table4` and `Secure128`, `l = 2^8, 2^10, 2^12` (PEGASUS Table V), end to end at
    /// `2^8`; with `--quick`, `InsecureTest` at `l = 2^4, 2^6`, end to end at `2^4` (seconds).
    pub fn defaults(options: &BenchOptions) -> Self {
        if options.quick {
            Self {
                presets: vec![PipelinePreset::InsecureTest],
                log_l: vec![4, 6],
                e2e_log_l: 4,
                lut_log_n: Vec::new(),
                rows: PipelineRows::All,
                functions: Vec::new(),
                paths: Vec::new(),
            }
        } else {
            Self {
                presets: vec![PipelinePreset::Table4, PipelinePreset::Secure128],
                log_l: vec![8, 10, 12],
                e2e_log_l: 8,
                lut_log_n: Vec::new(),
                rows: PipelineRows::All,
                functions: Vec::new(),
                paths: Vec::new(),
            }
        }
    }

    /// The functions of the accuracy rows ([`PipelineSelection::functions`], or all).
    ///
    /// Errors: an unknown name, with the known ones.
    fn selected_functions(&self) -> anyhow::Result<Vec<(&'static str, Function)>> {
        if self.functions.is_empty() {
            return Ok(FUNCTIONS.to_vec());
        }
        self.functions
            .iter()
            .map(|name| {
                FUNCTIONS
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(name))
                    .copied()
                    .ok_or_else(|| {
                        anyhow::anyhow!(
                            "unknown function {name:?} for the accuracy rows: expected one of {}",
                            FUNCTION_NAMES.join(", ")
                        )
                    })
            })
            .collect()
    }
}

/// The repacking path named `name`: `ring` (ring packing) or `lt` / `linear-transform` (PEGASUS Fig. 5).
///
/// Errors: another name.
pub fn parse_path(name: &str) -> anyhow::Result<Repacking> {
    match name.to_ascii_lowercase().as_str() {
        "ring" | "ring-packing" => Ok(Repacking::RingPacking),
        "lt" | "linear-transform" => Ok(Repacking::LinearTransform),
        other => Err(anyhow::anyhow!(
            "unknown repacking path {other:?}: expected ring (ring packing) or lt (the linear \
             transform of PEGASUS Fig. 5)"
        )),
    }
}

/// One timed row.
#[derive(Debug, Clone, Serialize)]
pub struct StageRow {
    /// The pipeline preset (`Debug` name).
    pub preset: String,
    /// What is timed.
    pub stage: String,
    /// The number of values `l` (0 where the cost does not depend on it).
    pub l: usize,
    /// Seconds per call on 1 thread (median), `None` when the row was skipped.
    pub one_thread_s: Option<f64>,
    /// Seconds per call on 2 threads (median), `None` when the row was skipped.
    pub two_threads_s: Option<f64>,
    /// CPU seconds per call on 1 thread (median): the figure to read on a loaded machine.
    pub one_thread_cpu_s: Option<f64>,
    /// The paper's figure (Table V), seconds.
    pub paper_s: Option<f64>,
    /// OpenPEGASUS on this machine, seconds (issue figures, single thread).
    pub openpegasus_s: Option<f64>,
    /// The goal of the row, in words (empty when none).
    pub goal: String,
    /// Peak resident memory of the configuration the row belongs to, MiB (Linux only).
    pub peak_rss_mib: Option<f64>,
    /// Why the row was skipped, or a remark.
    pub note: String,
}

/// One accuracy row.
#[derive(Debug, Clone, Serialize)]
pub struct AccuracyRow {
    /// The pipeline preset.
    pub preset: String,
    /// The repacking path.
    pub path: String,
    /// `log2` of the degree `n` of the look-up-table ring.
    pub lut_log_n: u32,
    /// The function of the look-up table.
    pub function: String,
    /// The number of values.
    pub l: usize,
    /// `log2` of the mean absolute error.
    pub mean_log2: f64,
    /// `log2` of the largest absolute error.
    pub max_log2: f64,
    /// Wall-clock seconds of the one [`PegasusEvaluator::apply`] call the row measures (2 threads;
    /// indicative: one sample, whatever else runs on the machine).
    pub apply_s: f64,
    /// CPU seconds of that call (both threads).
    pub apply_cpu_s: f64,
    /// The blind-rotation key of the ring, MiB in memory
    /// ([`rnsfhe_lwe::BlindRotationKey::size_bytes`]).
    pub blind_rotation_key_mib: f64,
}

/// Everything the pipeline rows write to JSON (`pegasus-pipeline.json`).
#[derive(Debug, Serialize)]
pub struct PipelineResults {
    /// The machine.
    pub machine: Machine,
    /// The presets run.
    pub presets: Vec<String>,
    /// The timed rows.
    pub rows: Vec<StageRow>,
    /// The accuracy rows.
    pub accuracy: Vec<AccuracyRow>,
}

/// Table V and OpenPEGASUS figures (seconds) for the rows that have them.
mod reference {
    /// PEGASUS Table V, S2C, for `log2 l = 8, 10, 12`.
    pub fn paper_s2c(log_l: u32) -> Option<f64> {
        match log_l {
            8 => Some(0.78),
            10 => Some(1.28),
            12 => Some(2.02),
            _ => None,
        }
    }

    /// PEGASUS Table V, LT, for `log2 l = 8, 10, 12`.
    pub fn paper_lt(log_l: u32) -> Option<f64> {
        match log_l {
            8 => Some(16.8),
            10 => Some(44.5),
            12 => Some(44.7),
            _ => None,
        }
    }

    /// PEGASUS Table V, F_mod.
    pub const PAPER_FMOD: f64 = 7.06;

    /// PEGASUS Table V, the LWE key switch `N -> n_lwe`, per ciphertext.
    pub const PAPER_KS_PER_LWE: f64 = 0.02014;

    /// OpenPEGASUS here: S2C for 256 slots.
    pub fn openpegasus_s2c(log_l: u32) -> Option<f64> {
        (log_l == 8).then_some(1.52)
    }

    /// OpenPEGASUS here: the repacking LT for 64, 256, 1024 LWE ciphertexts.
    pub fn openpegasus_lt(log_l: u32) -> Option<f64> {
        match log_l {
            6 => Some(7.0),
            8 => Some(15.5),
            10 => Some(41.1),
            _ => None,
        }
    }

    /// OpenPEGASUS here: F_mod.
    pub const OPENPEGASUS_FMOD: f64 = 5.5;

    /// OpenPEGASUS here: the per-LWE key switch `N -> n`, the faster end of 38-78 ms.
    pub const OPENPEGASUS_KS_PER_LWE: f64 = 0.038;
}

/// A function of the accuracy rows.
type Function = fn(f64) -> f64;

/// The names of the functions of the accuracy rows ([`PipelineSelection::functions`]).
pub const FUNCTION_NAMES: [&str; 3] = [FUNCTIONS[0].0, FUNCTIONS[1].0, FUNCTIONS[2].0];

/// The functions of the accuracy rows, by name.
const FUNCTIONS: [(&str, Function); 3] = [
    ("sigmoid", sigmoid),
    ("ReLU", relu),
    ("sqrt(abs(x))", sqrt_abs),
];

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn relu(x: f64) -> f64 {
    x.max(0.0)
}

fn sqrt_abs(x: f64) -> f64 {
    x.abs().sqrt()
}

/// The 1- and 2-thread pools every stage runs on.
struct Pools {
    one: rayon::ThreadPool,
    two: rayon::ThreadPool,
}

impl Pools {
    /// Calls at least this long (seconds, first call) are not repeated for a warm-up (see
    /// [`Pools::time`]).
    const COLD_SAMPLE_SECONDS: f64 = 60.0;

    fn new() -> anyhow::Result<Self> {
        Ok(Self {
            one: rayon::ThreadPoolBuilder::new().num_threads(1).build()?,
            two: rayon::ThreadPoolBuilder::new().num_threads(2).build()?,
        })
    }

    /// Seconds per call of `f` on 1 and on 2 threads (medians of the wall-clock times), and the CPU
    /// seconds of the 1-thread calls (median; `NaN` where `/proc/self/stat` is missing).
    ///
    /// Both pools are measured warm: the first call of a stage pays one-time costs that later calls do
    /// not, mostly the first touch of memory the allocator takes fresh from the system (the 2 GiB of
    /// diagonals Fig. 5 encodes at `l = 2^8` took as long to fault in on this machine as the transform's
    /// arithmetic), so the first call on each pool is a warm-up, and the 1-thread pool, which runs
    /// first, would otherwise carry all of it (a cold 1-thread figure and an inflated speed-up). Only a
    /// call of a minute or more ([`Pools::COLD_SAMPLE_SECONDS`]; the end-to-end rows) keeps its first
    /// call on each pool as its one sample: its one-time costs are then a few percent of it and fall on
    /// both pools alike. Then calls alternate between the pools (which goes first alternates too), 5
    /// samples each for calls under a second, 3 under 10 s, 1 beyond (`quick`: 1), so that a slow stage
    /// costs a few calls, not dozens.
    fn time<T: Send>(
        &self,
        quick: bool,
        f: impl Fn() -> anyhow::Result<T> + Sync,
    ) -> anyhow::Result<Times> {
        let timed = |pool: &rayon::ThreadPool| -> anyhow::Result<(f64, f64)> {
            let (start, cpu) = (Instant::now(), cpu_seconds());
            pool.install(&f)?;
            Ok((start.elapsed().as_secs_f64(), cpu_seconds() - cpu))
        };
        let first = timed(&self.one)?;
        let first_two = timed(&self.two)?.0;
        let samples = match (quick, first.0) {
            (true, _) => 1,
            (false, t) if t < 1.0 => 5,
            (false, t) if t < 10.0 => 3,
            _ => 1,
        };
        let (mut one, mut two) = (Vec::new(), Vec::new());
        if first.0 >= Self::COLD_SAMPLE_SECONDS {
            one.push(first);
            two.push(first_two);
        }
        for round in 0..samples {
            if round % 2 == 0 {
                if two.len() < samples {
                    two.push(timed(&self.two)?.0);
                }
                if one.len() < samples {
                    one.push(timed(&self.one)?);
                }
            } else {
                if one.len() < samples {
                    one.push(timed(&self.one)?);
                }
                if two.len() < samples {
                    two.push(timed(&self.two)?.0);
                }
            }
        }
        let wall: Vec<f64> = one.iter().map(|t| t.0).collect();
        let cpu: Vec<f64> = one.iter().map(|t| t.1).collect();
        Ok(Times {
            one: median(&wall),
            two: median(&two),
            one_cpu: median(&cpu),
        })
    }
}

/// The timings of one stage, seconds per call.
#[derive(Debug, Clone, Copy)]
struct Times {
    /// Wall clock on 1 thread.
    one: f64,
    /// Wall clock on 2 threads.
    two: f64,
    /// CPU time of the process on 1 thread: close to the wall clock on a quiet machine, and the figure
    /// to read on a loaded one (the other processes' share is not in it).
    one_cpu: f64,
}

impl Times {
    /// `a - b - c`, field by field (a share by difference).
    fn minus(self, b: Times, c: Times) -> Times {
        Times {
            one: self.one - b.one - c.one,
            two: self.two - b.two - c.two,
            one_cpu: self.one_cpu - b.one_cpu - c.one_cpu,
        }
    }
}

/// CPU seconds (user and system) of this process so far, from `/proc/self/stat` (`NaN` elsewhere);
/// a resolution of 10 ms (Linux reports clock ticks of `USER_HZ = 100`).
pub(crate) fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return f64::NAN;
    };
    // The fields after the command name (in parentheses, which may contain spaces): utime and stime
    // are fields 14 and 15 of the line, 12 and 13 after the name.
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return f64::NAN;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| fields.get(i).and_then(|x| x.parse::<f64>().ok());
    match (tick(11), tick(12)) {
        (Some(u), Some(s)) => (u + s) / 100.0,
        _ => f64::NAN,
    }
}

/// Peak resident memory of this process since the last [`reset_peak_rss`], MiB (Linux `VmHWM`).
pub(crate) fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kib / 1024.0)
}

/// Resets the peak resident memory (Linux: writing 5 to `/proc/self/clear_refs`); a no-op elsewhere.
fn reset_peak_rss() {
    // Without the file (other systems, restricted containers) the peaks are cumulative; the rows say
    // "peak so far", which is still an upper bound.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Memory the system can still give, bytes (`MemAvailable`), if known.
pub(crate) fn available_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib: u64 = info
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// Bytes of the blind-rotation key of `params` in memory, an upper bound: two RGSW ciphertexts per LWE
/// coefficient (the ternary algorithm), each two rows of two polynomials over the ring's two moduli
/// `q_0 q'` ([`rnsfhe_lwe::BlindRotationKey::size_bytes`] of a made key).
fn blind_rotation_key_bytes(params: &PipelineParams) -> u64 {
    let n = 1u64 << params.lut_log_n();
    2 * params.lwe.lwe_dimension as u64 * 2 * 2 * 2 * n * 8
}

/// Bytes of one key-switching key (rotation or relinearization) of `ctx` in memory: one pair of
/// polynomials over `QP` per digit.
pub fn key_switching_key_bytes(ctx: &CkksContext) -> u64 {
    let limbs = (ctx.q_moduli().len() + ctx.p_moduli().len()) as u64;
    2 * ctx.params().dnum as u64 * limbs * ctx.n() as u64 * 8
}

/// Bytes of `count` plaintexts of `level` limbs (encoded diagonals).
fn plaintext_bytes(ctx: &CkksContext, level: usize, count: usize) -> u64 {
    (count * level * ctx.n() * 8) as u64
}

/// What is not counted in the estimates (the blind-rotation key, transforms, ciphertexts).
const MEMORY_MARGIN: u64 = 3 << 29;

/// `Err(note)` when a configuration estimated at `need` bytes does not fit in 85 % of the available
/// memory (`need` plus [`MEMORY_MARGIN`]).
fn check_memory(need: u64) -> Result<(), String> {
    let Some(available) = available_bytes() else {
        return Ok(());
    };
    let need = need + MEMORY_MARGIN;
    if need as f64 > 0.85 * available as f64 {
        Err(format!(
            "skipped: needs about {:.1} GiB, {:.1} GiB available",
            need as f64 / (1u64 << 30) as f64,
            available as f64 / (1u64 << 30) as f64
        ))
    } else {
        Ok(())
    }
}

/// The rotation steps of the homomorphic DFT on `slots` slots in `levels` matrices (`direction`), as
/// the encoded transforms list them ([`rnsfhe_ckks::dft::SlotsToCoeffs::rotation_steps`], [`CoeffsToSlots::rotation_steps`])
/// but without encoding a diagonal: for key counts and memory estimates.
///
/// Errors: as [`dft_factors`].
pub fn dft_rotation_steps(
    ctx: &CkksContext,
    slots: usize,
    levels: usize,
    direction: DftDirection,
) -> anyhow::Result<Vec<i64>> {
    let mut steps = Vec::new();
    for m in dft_factors(ctx.encoder(), slots, levels, direction, 1.0)? {
        steps.extend(m.rotation_steps(None)?);
    }
    steps.sort_unstable();
    steps.dedup();
    Ok(steps)
}

/// The number of Galois keys of the pipeline for `slots` values by `repacking` with the default
/// options ([`PipelineOptions::new`]): the S2C rotations and those of CoeffsToSlots, the conjugation and
/// the subring trace (ring packing) or those of Fig. 5 (linear transform).
///
/// Errors: as [`dft_rotation_steps`] and [`repacking_rotation_steps`].
pub fn pipeline_galois_key_count(
    params: &PipelineParams,
    slots: usize,
    repacking: Repacking,
) -> anyhow::Result<usize> {
    let ctx = &params.ckks;
    let options = PipelineOptions::new(slots);
    let mut steps =
        dft_rotation_steps(ctx, slots, options.s2c_levels, DftDirection::SlotsToCoeffs)?;
    let mut extra = 0;
    if repacking == Repacking::RingPacking {
        steps.extend(dft_rotation_steps(
            ctx,
            slots,
            options.c2s_levels,
            DftDirection::CoeffsToSlots,
        )?);
        extra = 1 + subring_trace_elements(ctx.n(), slots).len();
    } else {
        steps.extend(repacking_rotation_steps(params.lwe.lwe_dimension, slots)?);
    }
    steps.sort_unstable();
    steps.dedup();
    Ok(steps.len() + extra)
}

/// The secrets and preset-wide keys of one preset's measurements.
struct PresetSetup {
    preset: PipelinePreset,
    params: PipelineParams,
    keygen: KeyGenerator,
    relin: RelinKey,
    /// An LWE secret of dimension `n_lwe` (the stage rows' own; the pipeline evaluators make theirs).
    lwe_key: LweSecretKey,
    /// A secret of the look-up-table ring, as an LWE secret of dimension `n`.
    lut_ring: LweSecretKey,
    /// Both dimension switches from the CKKS secret to `lwe_key` (stage rows only: the per-ciphertext
    /// key of Fig. 9 is several GB at `N = 2^16`).
    switches: Option<DimensionSwitchKeys>,
    /// Ring packing of dimension-`n` ciphertexts under `lut_ring` (stage rows only).
    ring_packing: Option<RingPackingKey>,
    insecure: bool,
}

impl PresetSetup {
    /// The secrets and preset-wide keys of `preset`; the keys of the stage rows only if `stage_keys`.
    fn new(preset: PipelinePreset, stage_keys: bool, rng: &mut Csprng) -> anyhow::Result<Self> {
        let params = preset.params()?;
        let insecure = preset != PipelinePreset::Secure128;
        let ctx = &params.ckks;
        let keygen = KeyGenerator::new(ctx, rng)?;
        let relin = keygen.relin_key(rng)?;
        let lwe = &params.lwe;
        let lwe_key =
            LweSecretKey::generate(LweDimension::new(lwe.lwe_dimension)?, lwe.lwe_secret, rng)?;
        let lut_ctx = if insecure {
            lwe.lut.context_allowing_insecure()?
        } else {
            lwe.lut.context()?
        };
        let lut_ring =
            LweSecretKey::from_ring_key(&rnsfhe_core::SecretKey::generate(&lut_ctx, rng)?)?;
        let sk = keygen.secret_key();
        let (switches, ring_packing) = if !stage_keys {
            (None, None)
        } else if insecure {
            (
                Some(DimensionSwitchKeys::generate_allowing_insecure(
                    ctx,
                    sk,
                    &lwe_key,
                    lwe.key_switch,
                    &DimensionSwitch::ALL,
                    rng,
                )?),
                Some(RingPackingKey::generate_allowing_insecure(
                    ctx, sk, &lut_ring, rng,
                )?),
            )
        } else {
            (
                Some(DimensionSwitchKeys::generate(
                    ctx,
                    sk,
                    &lwe_key,
                    lwe.key_switch,
                    &DimensionSwitch::ALL,
                    rng,
                )?),
                Some(RingPackingKey::generate(ctx, sk, &lut_ring, rng)?),
            )
        };
        Ok(Self {
            preset,
            params,
            keygen,
            relin,
            lwe_key,
            lut_ring,
            switches,
            ring_packing,
            insecure,
        })
    }

    fn ctx(&self) -> &Arc<CkksContext> {
        &self.params.ckks
    }

    /// The pipeline evaluator of `repacking` for `l` values (its own keys) and the LWE-side secrets
    /// its keys were made for, with the preset's look-up-table ring.
    fn evaluator(
        &self,
        l: usize,
        repacking: Repacking,
        rng: &mut Csprng,
    ) -> anyhow::Result<(PegasusEvaluator, PegasusSecretKeys)> {
        self.evaluator_with(&self.params, l, repacking, rng)
    }

    /// [`PresetSetup::evaluator`] for `params` (the preset's with another look-up-table ring).
    fn evaluator_with(
        &self,
        params: &PipelineParams,
        l: usize,
        repacking: Repacking,
        rng: &mut Csprng,
    ) -> anyhow::Result<(PegasusEvaluator, PegasusSecretKeys)> {
        let options = PipelineOptions {
            repacking,
            // PEGASUS's path with its own switch (Fig. 9); ours with the faster one.
            dimension_switch: match repacking {
                Repacking::LinearTransform => DimensionSwitch::PerCiphertext,
                _ => DimensionSwitch::WholeCiphertext,
            },
            allow_insecure: self.insecure,
            ..PipelineOptions::new(l)
        };
        let (keys, secrets) = PegasusKeys::generate(params, &options, &self.keygen, rng)?;
        Ok((
            PegasusEvaluator::new(params.clone(), options, keys)?,
            secrets,
        ))
    }

    /// `l` values uniform on `[-8, 8]` (seeded by `l`) encrypted at the pipeline's input level.
    fn input(
        &self,
        pegasus: &PegasusEvaluator,
        l: usize,
        rng: &mut Csprng,
    ) -> anyhow::Result<(Vec<f64>, Ciphertext)> {
        let mut plain = rand::rngs::StdRng::seed_from_u64(l as u64);
        let values: Vec<f64> = (0..l).map(|_| plain.gen_range(-8.0..8.0)).collect();
        let ctx = self.ctx();
        let pt = ctx.encode_real(&values, l, pegasus.input_level())?;
        let enc = CkksEncryptor::with_secret_key(ctx, self.keygen.secret_key())?;
        Ok((values, enc.encrypt_plaintext(&pt, rng)?))
    }

    fn decryptor(&self) -> anyhow::Result<CkksDecryptor> {
        Ok(CkksDecryptor::new(self.ctx(), self.keygen.secret_key())?)
    }
}

/// `(mean, max)` absolute error of `got` against `f(values)`, `log2`.
fn errors(values: &[f64], got: &[f64], f: Function) -> (f64, f64) {
    let e: Vec<f64> = values
        .iter()
        .zip(got)
        .map(|(&v, &y)| (y - f(v)).abs())
        .collect();
    let max = e.iter().copied().fold(0.0, f64::max);
    let mean = e.iter().sum::<f64>() / e.len().max(1) as f64;
    (mean.log2(), max.log2())
}

/// Accumulates the rows of one run.
struct Run<'a> {
    options: &'a BenchOptions,
    pools: Pools,
    rows: Vec<StageRow>,
    accuracy: Vec<AccuracyRow>,
    rng: Csprng,
    /// The functions of the accuracy rows.
    functions: Vec<(&'static str, Function)>,
    /// The end-to-end configurations run the accuracy rows alone ([`PipelineRows::Accuracy`]).
    accuracy_only: bool,
}

/// A row before its configuration's peak memory is known.
struct Pending {
    stage: String,
    l: usize,
    times: Result<Times, String>,
    paper_s: Option<f64>,
    openpegasus_s: Option<f64>,
    goal: String,
    note: String,
}

impl Pending {
    fn new(stage: impl Into<String>, l: usize, times: Times) -> Self {
        Self {
            stage: stage.into(),
            l,
            times: Ok(times),
            paper_s: None,
            openpegasus_s: None,
            goal: String::new(),
            note: String::new(),
        }
    }

    fn skipped(stage: impl Into<String>, l: usize, why: String) -> Self {
        Self {
            times: Err(why),
            ..Self::new(
                stage,
                l,
                Times {
                    one: 0.0,
                    two: 0.0,
                    one_cpu: 0.0,
                },
            )
        }
    }

    fn paper(mut self, paper: Option<f64>, openpegasus: Option<f64>) -> Self {
        self.paper_s = paper;
        self.openpegasus_s = openpegasus;
        self
    }

    fn goal(mut self, goal: impl Into<String>) -> Self {
        self.goal = goal.into();
        self
    }

    fn note(mut self, note: impl Into<String>) -> Self {
        self.note = note.into();
        self
    }
}

impl Run<'_> {
    /// Runs one configuration (`body` pushes its rows) and records its rows; a failure becomes a row
    /// `failed: <error>` after the rows measured before it. Returns what `body` returned, `None` on
    /// failure.
    fn configuration<T>(
        &mut self,
        preset: PipelinePreset,
        stage: &str,
        l: usize,
        body: impl FnOnce(&mut Self, &mut Vec<Pending>) -> anyhow::Result<T>,
    ) -> Option<T> {
        let mut rows = Vec::new();
        let out = body(self, &mut rows);
        let out = match out {
            Ok(out) => Some(out),
            Err(e) => {
                eprintln!("  {preset:?}: {stage}, l = {l}: failed: {e:#}");
                rows.push(Pending::skipped(stage, l, format!("failed: {e:#}")));
                None
            }
        };
        self.finish(preset, rows);
        out
    }

    /// Writes every row so far to `<out>/pegasus-pipeline.json`; returns the path.
    fn write(
        &self,
        machine: &Machine,
        selection: &PipelineSelection,
    ) -> anyhow::Result<std::path::PathBuf> {
        let results = PipelineResults {
            machine: machine.clone(),
            presets: selection.presets.iter().map(|p| format!("{p:?}")).collect(),
            rows: self.rows.clone(),
            accuracy: self.accuracy.clone(),
        };
        write_json(&self.options.out, "pegasus-pipeline", &results)
            .context("writing the pegasus-pipeline results")
    }

    /// Records the rows of one configuration with the peak memory since its start.
    fn finish(&mut self, preset: PipelinePreset, pending: Vec<Pending>) {
        let peak = peak_rss_mib();
        for p in pending {
            let (one, two, cpu, note) = match p.times {
                Ok(t) => (
                    Some(t.one),
                    Some(t.two),
                    t.one_cpu.is_finite().then_some(t.one_cpu),
                    p.note,
                ),
                Err(why) => (None, None, None, why),
            };
            self.rows.push(StageRow {
                preset: format!("{preset:?}"),
                stage: p.stage,
                l: p.l,
                one_thread_s: one,
                two_threads_s: two,
                one_thread_cpu_s: cpu,
                paper_s: p.paper_s,
                openpegasus_s: p.openpegasus_s,
                goal: p.goal,
                peak_rss_mib: one.and(peak),
                note,
            });
        }
        reset_peak_rss();
    }

    fn time<T: Send>(&self, f: impl Fn() -> anyhow::Result<T> + Sync) -> anyhow::Result<Times> {
        self.pools.time(self.options.quick, f)
    }

    /// The end-to-end rows (unless [`Run::accuracy_only`]) and the accuracy rows of [`Run::functions`]
    /// of one path at `l` values with the look-up-table ring of `params`, into `rows`; returns the
    /// path's F_mod (`None` when skipped for memory).
    fn end_to_end(
        &mut self,
        setup: &PresetSetup,
        params: &PipelineParams,
        l: usize,
        repacking: Repacking,
        rows: &mut Vec<Pending>,
    ) -> anyhow::Result<Option<EvalMod>> {
        let preset = setup.preset;
        let path = path_name(repacking);
        let log_n = params.lut_log_n();
        let ring = format!("n = 2^{log_n}");
        let need = pipeline_galois_key_count(params, l, repacking)? as u64
            * key_switching_key_bytes(setup.ctx())
            + lt_plaintext_bytes(setup, l, repacking)
            + blind_rotation_key_bytes(params);
        if let Err(why) = check_memory(need) {
            rows.push(Pending::skipped(
                format!("end to end, {path}, {ring}"),
                l,
                why,
            ));
            return Ok(None);
        }
        eprintln!("  {preset:?}: end to end by {path}, l = {l}, {ring}");
        let (pegasus, _) = setup.evaluator_with(params, l, repacking, &mut self.rng)?;
        let (values, ct) = setup.input(&pegasus, l, &mut self.rng)?;
        let dec = setup.decryptor()?;
        if !self.accuracy_only {
            let table = pegasus.table(sigmoid)?;
            let whole = self.time(|| Ok(pegasus.apply(&ct, sigmoid)?))?;
            let to_lwe = self.time(|| Ok(pegasus.to_lwe(&ct)?))?;
            let lwes = pegasus.to_lwe(&ct)?;
            let outs = self.pools.two.install(|| pegasus.lut(&lwes, &table))?;
            let repack = self.time(|| Ok(pegasus.repack(&outs, &table)?))?;
            let luts = whole.minus(to_lwe, repack);
            let switch = match repacking {
                Repacking::LinearTransform => DimensionSwitch::PerCiphertext,
                _ => DimensionSwitch::WholeCiphertext,
            };
            rows.extend([
                Pending::new(format!("end to end, {path} (sigmoid), {ring}"), l, whole).note(
                    format!(
                        "CKKS in, {l} LUTs, CKKS out; the LUTs dominate ({:.0} %)",
                        100.0 * luts.one / whole.one
                    ),
                ),
                Pending::new(
                    format!("end to end: S2C + extraction ({switch})"),
                    l,
                    to_lwe,
                ),
                Pending::new(
                    format!("end to end: {l} LUTs (by difference), {ring}"),
                    l,
                    luts,
                ),
                Pending::new(format!("end to end: repacking, {path}, {ring}"), l, repack),
            ]);
        }
        let key_mib = pegasus.lut_evaluator().key().size_bytes() as f64 / (1u64 << 20) as f64;
        for (name, f) in self.functions.clone() {
            eprintln!("    accuracy: {name}, {ring}");
            let (start, cpu) = (Instant::now(), cpu_seconds());
            let out = self.pools.two.install(|| pegasus.apply(&ct, f))?;
            let (apply_s, apply_cpu_s) = (start.elapsed().as_secs_f64(), cpu_seconds() - cpu);
            let got = dec.decrypt_real(&out)?;
            let (mean_log2, max_log2) = errors(&values, &got, f);
            self.accuracy.push(AccuracyRow {
                preset: format!("{preset:?}"),
                path: path.to_string(),
                lut_log_n: log_n,
                function: name.to_string(),
                l,
                mean_log2,
                max_log2,
                apply_s,
                apply_cpu_s,
                blind_rotation_key_mib: key_mib,
            });
        }
        Ok(Some(pegasus.eval_mod().clone()))
    }

    /// The stage rows of the ring-packing path (and S2C, extraction) for `l` values; F_mod too when
    /// `with_fmod`.
    fn ring_stages(
        &mut self,
        setup: &PresetSetup,
        log_l: u32,
        with_fmod: bool,
        rows: &mut Vec<Pending>,
    ) -> anyhow::Result<()> {
        let l = 1usize << log_l;
        let preset = setup.preset;
        let ctx = Arc::clone(setup.ctx());
        let need = pipeline_galois_key_count(&setup.params, l, Repacking::RingPacking)? as u64
            * key_switching_key_bytes(&ctx);
        if let Err(why) = check_memory(need) {
            rows.push(Pending::skipped(
                "S2C, extraction and ring-packing path",
                l,
                why,
            ));
            return Ok(());
        }
        eprintln!("  {preset:?}: S2C, extraction, ring-packing path, l = {l}");
        let (pegasus, secrets) = setup.evaluator(l, Repacking::RingPacking, &mut self.rng)?;
        let eval = pegasus.ckks();
        let options = *pegasus.options();
        let (values, ct) = setup.input(&pegasus, l, &mut self.rng)?;

        // S2C of the pipeline (its levels, its factor, the evaluator's keys).
        let s2c = pegasus.slots_to_coeffs();
        let t = self.time(|| Ok(eval.slots_to_coeffs(&ct, s2c)?))?;
        rows.push(
            Pending::new(format!("S2C ({} levels)", options.s2c_levels), l, t)
                .paper(
                    reference::paper_s2c(log_l),
                    reference::openpegasus_s2c(log_l),
                )
                .goal(if log_l == 8 {
                    "<= 0.51 s (a third of OpenPEGASUS)"
                } else {
                    ""
                }),
        );

        // Extraction of the l values to dimension n_lwe, each switch.
        let coeffs = eval.slots_to_coeffs(&ct, s2c)?;
        let positions = real_value_positions(ctx.n(), l)?;
        for method in DimensionSwitch::ALL {
            let switches = setup
                .switches
                .as_ref()
                .context("the setup was made without the stage keys")?;
            let t = self.time(|| Ok(switches.switch(&coeffs, &positions, method)?))?;
            let per_lwe = |s: f64| Some(s * l as f64);
            rows.push(
                Pending::new(format!("extraction to n_lwe, {method}"), l, t)
                    .paper(
                        per_lwe(reference::PAPER_KS_PER_LWE),
                        per_lwe(reference::OPENPEGASUS_KS_PER_LWE),
                    )
                    .goal(if log_l == 12 { "<= 1 s in total" } else { "" })
                    .note("paper / OpenPEGASUS: l times their per-LWE key switch"),
            );
        }

        // Ring packing of l table outputs (dimension n over q_0) at the pipeline's stride: encryptions
        // of sigmoid(v) at the table's output scale, as the look-up tables would return them, under
        // the preset's secret (the packing key's) and under the evaluator's (for its repacking).
        let q0 = Modulus::new(setup.params.q0())?;
        let noise = DiscreteGaussian::with_sigma(3.2)?;
        let table = pegasus.table(sigmoid)?;
        let mut outputs = |secret: &LweSecretKey| -> Vec<LweCiphertext> {
            values
                .iter()
                .map(|&v| {
                    let m = (table.output_scale() * sigmoid(v)).round() as i64;
                    secret.encrypt(m, &q0, &noise, &mut self.rng)
                })
                .collect()
        };
        let packed_outs = outputs(&setup.lut_ring);
        let outs = outputs(&secrets.lut_ring);
        let gap = ctx.n() / (2 * l);
        let ring_packing = setup
            .ring_packing
            .as_ref()
            .context("the setup was made without the stage keys")?;
        let t = self.time(|| Ok(ring_packing.pack_with_stride(&packed_outs, gap)?))?;
        rows.push(
            Pending::new("ring packing (CDKS; LUT outputs of dimension n)", l, t)
                .note("HERMES: 10.2 s for 2^15 LWE ciphertexts"),
        );

        // Modulus raise, subring trace, CoeffsToSlots on a level-1 ciphertext of the context.
        let top = ctx.max_level();
        let low = eval.drop_to_level(&ct, 1)?;
        let t = self.time(|| Ok(eval.mod_raise(&low, top)?))?;
        rows.push(Pending::new("modulus raise (q_0 -> Q)", l, t));
        let raised = eval.mod_raise(&low, top)?;
        let t = self.time(|| Ok(eval.subring_trace(&raised, l)?))?;
        rows.push(Pending::new(
            format!(
                "subring trace ({} automorphisms)",
                subring_trace_elements(ctx.n(), l).len()
            ),
            l,
            t,
        ));
        let c2s = CoeffsToSlots::new(
            &ctx,
            l,
            options.c2s_levels,
            top,
            1.0,
            CoeffsToSlotsOutput::RealImaginary,
        )?;
        let t = self.time(|| Ok(eval.coeffs_to_slots(&raised, &c2s)?))?;
        rows.push(Pending::new(
            format!(
                "CoeffsToSlots ({} levels, real and imaginary)",
                options.c2s_levels
            ),
            l,
            t,
        ));
        if with_fmod {
            rows.push(self.fmod(setup, eval, pegasus.eval_mod(), top - options.c2s_levels)?);
        }

        // The whole repacking of this path, as the pipeline runs it.
        let t = self.time(|| Ok(pegasus.repack(&outs, &table)?))?;
        let got = setup
            .decryptor()?
            .decrypt_real(&pegasus.repack(&outs, &table)?)?;
        let (_, max) = errors(&values, &got, sigmoid);
        rows.push(
            Pending::new(
                "repacking, ring packing + raise + trace + CoeffsToSlots + F_mod",
                l,
                t,
            )
            .goal(if log_l == 10 { "<= 10 s" } else { "" })
            .note(format!("largest error of the repacked sigmoid 2^{max:.1}")),
        );
        Ok(())
    }

    /// F_mod alone on `l`-independent input: a ciphertext at `level` holding `I + eps` at the scale
    /// F_mod takes without a level ([`EvalMod::normalized_scale`]).
    fn fmod(
        &mut self,
        setup: &PresetSetup,
        eval: &Evaluator,
        em: &EvalMod,
        level: usize,
    ) -> anyhow::Result<Pending> {
        let ctx = setup.ctx();
        let slots = ctx.max_slots();
        let eps = em.eps_max() / 2.0;
        let values: Vec<Complex64> = (0..slots)
            .map(|i| Complex64::new((i % 5) as f64 - 2.0 + eps, 0.0))
            .collect();
        let scale = em.normalized_scale(ctx, level)?;
        let pt = ctx.encode_at_scale(&values, slots, level, scale)?;
        let enc = CkksEncryptor::with_secret_key(ctx, setup.keygen.secret_key())?;
        let ct = enc.encrypt_plaintext(&pt, &mut self.rng)?;
        let t = self.time(|| Ok(eval.eval_mod(&ct, em, 1.0 / eps)?))?;
        Ok(Pending::new(
            format!(
                "F_mod (K = {}, {} double angles, depth {})",
                em.params().k,
                em.params().double_angle,
                em.depth()
            ),
            0,
            t,
        )
        .paper(
            Some(reference::PAPER_FMOD),
            Some(reference::OPENPEGASUS_FMOD),
        )
        .goal("<= 1.83 s (a third of OpenPEGASUS)"))
    }

    /// The stage rows of the linear-transform path for `l` values (`em`: the path's F_mod, from its
    /// pipeline evaluator); F_mod alone too when `with_fmod`.
    fn lt_stages(
        &mut self,
        setup: &PresetSetup,
        log_l: u32,
        em: &EvalMod,
        with_fmod: bool,
        rows: &mut Vec<Pending>,
    ) -> anyhow::Result<()> {
        let l = 1usize << log_l;
        let preset = setup.preset;
        let ctx = Arc::clone(setup.ctx());
        let lwe = &setup.params.lwe;
        let steps = repacking_rotation_steps(lwe.lwe_dimension, l)?;
        let need = steps.len() as u64 * key_switching_key_bytes(&ctx)
            + lt_plaintext_bytes(setup, l, Repacking::LinearTransform);
        if let Err(why) = check_memory(need) {
            rows.push(Pending::skipped("LT path (Fig. 5)", l, why));
            return Ok(());
        }
        eprintln!("  {preset:?}: linear-transform path, l = {l}");
        let sk = setup.keygen.secret_key();
        let galois = setup.keygen.galois_keys(&steps, false, &mut self.rng)?;
        let eval = Evaluator::new(&ctx)
            .with_relin_key(setup.relin.clone())?
            .with_galois_keys(galois)?;
        let top = ctx.max_level();
        let key = RepackingKey::generate(
            &ctx,
            sk,
            &setup.lwe_key,
            em.normalized_scale(&ctx, top - 1)?,
            &mut self.rng,
        )?;
        let back = if setup.insecure {
            LweSwitchingKey::generate_allowing_insecure(
                &setup.lut_ring,
                &setup.lwe_key,
                lwe.key_switch,
                &mut self.rng,
            )?
        } else {
            LweSwitchingKey::generate(
                &setup.lut_ring,
                &setup.lwe_key,
                lwe.key_switch,
                &mut self.rng,
            )?
        };
        // Table outputs T(v) = sigmoid(v) at half the fractional range F_mod keeps.
        let q0 = Modulus::new(setup.params.q0())?;
        let output_scale = q0.value() as f64 * em.eps_max() / 2.0;
        let noise = DiscreteGaussian::with_sigma(3.2)?;
        let mut plain = rand::rngs::StdRng::seed_from_u64(l as u64);
        let values: Vec<f64> = (0..l).map(|_| plain.gen_range(-8.0..8.0)).collect();
        let outs: Vec<LweCiphertext> = values
            .iter()
            .map(|&v| {
                let m = (output_scale * sigmoid(v)).round() as i64;
                setup.lut_ring.encrypt(m, &q0, &noise, &mut self.rng)
            })
            .collect();
        let ks_modulus = lwe.key_switch.modulus;
        // Fig. 6 step 6, as the pipeline's repacking runs it (in parallel over the ciphertexts).
        let switch_back = |cts: &[LweCiphertext]| -> anyhow::Result<Vec<LweCiphertext>> {
            cts.par_iter()
                .map(|ct| {
                    let ct = if ct.modulus().value() == ks_modulus {
                        ct.clone()
                    } else {
                        ct.switch_modulus(ks_modulus)?
                    };
                    Ok(back.switch(&ct)?)
                })
                .collect()
        };
        let narrow = switch_back(&outs)?;
        let t = self.time(|| switch_back(&outs))?;
        rows.push(Pending::new(
            format!(
                "LWE key switch n = {} -> n_lwe = {} (Fig. 6 step 6, {l} of them)",
                setup.lut_ring.dimension(),
                lwe.lwe_dimension
            ),
            l,
            t,
        ));
        let t = self.time(|| Ok(repacking::linear_transform(&eval, &key, &narrow, None)?))?;
        rows.push(
            Pending::new("LT (Fig. 5, tiled BSGS on the repacking key)", l, t)
                .paper(reference::paper_lt(log_l), reference::openpegasus_lt(log_l)),
        );
        if with_fmod {
            rows.push(self.fmod(setup, &eval, em, top - 1)?);
        }
        let factor = q0.value() as f64 / output_scale;
        let repack = || -> anyhow::Result<Ciphertext> {
            let narrow = switch_back(&outs)?;
            let t = repacking::linear_transform(&eval, &key, &narrow, None)?;
            Ok(eval.eval_mod(&t, em, factor)?)
        };
        let t = self.time(repack)?;
        let got = setup.decryptor()?.decrypt_real(&repack()?)?;
        let (_, max) = errors(&values, &got, sigmoid);
        rows.push(
            Pending::new("repacking, key switch + LT + F_mod", l, t)
                .goal(if log_l == 10 { "<= 10 s" } else { "" })
                .note(format!("largest error of the repacked sigmoid 2^{max:.1}")),
        );
        Ok(())
    }
}

/// Bytes of the diagonals Fig. 5 encodes for `l` values at the top level (none for ring packing).
fn lt_plaintext_bytes(setup: &PresetSetup, l: usize, repacking: Repacking) -> u64 {
    match repacking {
        Repacking::LinearTransform => {
            let ctx = setup.ctx();
            let diagonals = l.next_power_of_two().min(setup.params.lwe.lwe_dimension);
            plaintext_bytes(ctx, ctx.max_level(), diagonals)
        }
        _ => 0,
    }
}

/// The name of a repacking path in the rows.
fn path_name(repacking: Repacking) -> &'static str {
    match repacking {
        Repacking::LinearTransform => "LT path (Fig. 5 + F_mod)",
        _ => "ring-packing path",
    }
}

/// `s` as seconds with three significant decimals, or `-`.
fn secs(s: Option<f64>) -> String {
    s.map_or_else(|| "-".to_string(), |s| format!("{s:.3}"))
}

/// Runs the pipeline rows of `selection` (see the module documentation), prints them as markdown and
/// writes `<out>/pegasus-pipeline.json`.
///
/// Errors: parameter, key-generation and evaluation errors of the pipeline; output errors.
pub fn run(options: &BenchOptions, selection: &PipelineSelection) -> anyhow::Result<()> {
    let machine = Machine::detect();
    let mut run = Run {
        options,
        pools: Pools::new()?,
        rows: Vec::new(),
        accuracy: Vec::new(),
        rng: Csprng::from_os()?,
        functions: selection.selected_functions()?,
        accuracy_only: selection.rows == PipelineRows::Accuracy,
    };
    for &preset in &selection.presets {
        eprintln!("pegasus-table5 pipeline rows: {preset:?}");
        reset_peak_rss();
        let stage_rows = selection.rows == PipelineRows::All;
        let setup = PresetSetup::new(preset, stage_rows, &mut run.rng)
            .with_context(|| format!("setting up {preset:?}"))?;
        let e2e = 1usize << selection.e2e_log_l;
        let lut_log_ns = if selection.lut_log_n.is_empty() {
            vec![setup.params.lut_log_n()]
        } else {
            selection.lut_log_n.clone()
        };
        let paths = if selection.paths.is_empty() {
            vec![Repacking::LinearTransform, Repacking::RingPacking]
        } else {
            selection.paths.clone()
        };
        // A configuration that fails is reported in its rows and the run goes on: the rows measured
        // before the failure are kept, the failure is a row of its own.
        let mut em_lt = None;
        for &log_n in &lut_log_ns {
            let params = setup
                .params
                .clone()
                .with_lut_log_n(log_n)
                .with_context(|| {
                    format!("{preset:?} with a look-up-table ring of degree 2^{log_n}")
                })?;
            for &path in &paths {
                let stage = format!("end to end, {}, n = 2^{log_n}", path_name(path));
                let em = run.configuration(preset, &stage, e2e, |run, rows| {
                    run.end_to_end(&setup, &params, e2e, path, rows)
                });
                // F_mod does not depend on the ring (it reduces what the repacking leaves).
                if path == Repacking::LinearTransform && em_lt.is_none() {
                    em_lt = em;
                }
            }
        }
        if selection.rows != PipelineRows::All {
            run.write(&machine, selection)?;
            continue;
        }
        for (i, &log_l) in selection.log_l.iter().enumerate() {
            let l = 1 << log_l;
            run.configuration(
                preset,
                "S2C, extraction, ring-packing path",
                l,
                |run, rows| run.ring_stages(&setup, log_l, i == 0, rows),
            );
            match em_lt.as_ref().and_then(Option::as_ref) {
                Some(em) => {
                    run.configuration(preset, "LT path (Fig. 5)", l, |run, rows| {
                        run.lt_stages(&setup, log_l, em, i == 0, rows)
                    });
                }
                None => run.finish(
                    preset,
                    vec![Pending::skipped(
                        "LT path (Fig. 5)",
                        l,
                        "skipped: no F_mod of the path (its end-to-end rows did not run)".into(),
                    )],
                ),
            }
        }
        // Written after every preset, so that a long run interrupted later keeps what it measured.
        run.write(&machine, selection)?;
    }
    print_tables(&machine, options, &run.rows, &run.accuracy);
    let path = run.write(&machine, selection)?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

fn print_tables(
    machine: &Machine,
    options: &BenchOptions,
    rows: &[StageRow],
    accuracy: &[AccuracyRow],
) {
    println!("\n{}", machine.markdown_header());
    println!(
        "\nPEGASUS pipeline (Fig. 6): Table V's S2C, LT and F_mod rows and the other stages, 1 and 2 \
         threads, seconds per call{}\n",
        if options.quick {
            "; QUICK RUN at small dimensions: not comparable with the paper"
        } else {
            ""
        }
    );
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let speedup = match (r.one_thread_s, r.two_threads_s) {
                (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
                _ => "-".into(),
            };
            vec![
                r.preset.clone(),
                r.stage.clone(),
                if r.l == 0 {
                    "any".into()
                } else {
                    r.l.to_string()
                },
                secs(r.one_thread_s),
                secs(r.one_thread_cpu_s),
                secs(r.two_threads_s),
                speedup,
                secs(r.paper_s),
                secs(r.openpegasus_s),
                r.goal.clone(),
                r.peak_rss_mib
                    .map_or_else(|| "-".into(), |m| format!("{m:.0}")),
                r.note.clone(),
            ]
        })
        .collect();
    println!(
        "{}",
        markdown_table(
            &[
                "preset",
                "stage",
                "l",
                "1 thread (s)",
                "1 thread, CPU (s)",
                "2 threads (s)",
                "speedup",
                "paper (s)",
                "OpenPEGASUS here (s)",
                "goal (1 thread)",
                "peak RSS (MiB)",
                "note",
            ],
            &cells
        )
    );
    let cells: Vec<Vec<String>> = accuracy
        .iter()
        .map(|a| {
            vec![
                a.preset.clone(),
                a.path.clone(),
                format!("2^{}", a.lut_log_n),
                a.function.clone(),
                a.l.to_string(),
                format!("{:.2}", a.mean_log2),
                format!("{:.2}", a.max_log2),
                format!("{:.1}", a.apply_s),
                format!("{:.1}", a.apply_cpu_s),
                format!("{:.0}", a.blind_rotation_key_mib),
            ]
        })
        .collect();
    println!(
        "Accuracy of the round trip on [-8, 8] (goal for sigmoid: 2^-12; PEGASUS: mean 2^-8.5); the time of \
         the one apply call of each row, 2 threads, indicative\n\n{}",
        markdown_table(
            &[
                "preset",
                "path",
                "LUT ring n",
                "function",
                "l",
                "mean error (log2)",
                "max error (log2)",
                "apply (s)",
                "apply, CPU (s)",
                "blind-rotation key (MiB)",
            ],
            &cells
        )
    );
}
