//! PEGASUS Table VIII (Lu et al., IEEE S&P 2021, Section VI.C.3): one update of the secure k-means of
//! Section V.C on `N` points of `d = 16` features drawn uniformly from `[-1, 1]`, in five sectors
//! (distance, extraction, min-index and reciprocal, repacking, centroid), with the closest-assignment
//! ratio `rho` against plaintext assignment to the same centroids, by `rnsfhe_apps::kmeans`.
//!
//! The default rows are `N` in {256, 1024} x `K` in {2, 4} at 1 and 2 threads (`--full` adds the rest of
//! the table, `N` = 4096 and `K` = 8: hours on this machine). Every row is written to
//! `pegasus-table8.json` as soon as it is measured, and a run **resumes**: rows already in the file (same
//! preset, table ring, `N`, `K`, threads) are kept and not measured again, so an interrupted `--full` run
//! continues where it stopped when started again with the same flags. The paper's figures (20 threads)
//! are printed beside ours. One key set per `(N, K)` (the pipeline's slot count is `P K'`): Table IV's
//! takes a few GB, so run one such command at a time.
//!
//! The initial centroids are `K` of the points (seeded); the client declares the data radius `R` (the
//! largest norm of its points) and the distances are scaled by the default `3 R^2` bound
//! (`rnsfhe_apps::KMeansOptions`).

use std::path::Path;
use std::time::Instant;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rnsfhe_apps::kmeans::plain;
use rnsfhe_apps::{ComparisonKey, KMeansEvaluator, KMeansKeys, KMeansLayout, KMeansOptions};
use rnsfhe_ckks::{CkksDecryptor, CkksEncryptor, Csprng, KeyGenerator};
use rnsfhe_pegasus::{PegasusEvaluator, PegasusKeys, PipelineOptions, PipelinePreset};
use serde::{Deserialize, Serialize};

use super::pegasus_table6::timed;
use super::{markdown_table, write_json, BenchOptions, Machine};

/// What to run (the command's flags).
#[derive(Debug, Clone)]
pub struct Table8Selection {
    /// The pipeline preset.
    pub preset: PipelinePreset,
    /// log2 of the look-up-table ring (`None`: the preset's, `2^12` at Table IV).
    pub lut_log_n: Option<u32>,
    /// `(N, K)` rows.
    pub sizes: Vec<(usize, usize)>,
    /// Thread counts.
    pub threads: Vec<usize>,
    /// Features `d`.
    pub features: usize,
}

impl Table8Selection {
    /// Table IV, `N` in {256, 1024} x `K` in {2, 4} (`full`: {256, 1024, 4096} x {2, 4, 8}), `d = 16`,
    /// 1 and 2 threads; `--quick`: InsecureTest, `N` in {16, 32} x `K` in {2, 4}, `d = 4`.
    pub fn defaults(options: &BenchOptions, full: bool) -> Self {
        let grid = |ns: &[usize], ks: &[usize]| {
            ns.iter()
                .flat_map(|&n| ks.iter().map(move |&k| (n, k)))
                .collect()
        };
        if options.quick {
            Self {
                preset: PipelinePreset::InsecureTest,
                lut_log_n: None,
                sizes: grid(&[16, 32], &[2, 4]),
                threads: vec![1, 2],
                features: 4,
            }
        } else {
            Self {
                preset: PipelinePreset::Table4,
                lut_log_n: None,
                sizes: if full {
                    grid(&[256, 1024, 4096], &[2, 4, 8])
                } else {
                    grid(&[256, 1024], &[2, 4])
                },
                threads: vec![1, 2],
                features: 16,
            }
        }
    }
}

/// The paper's Table VIII (20 threads, `n = 2^12`): `N`, `K`, `rho` at `n = 2^12` and `2^13` (%), then
/// distance, extraction, min-index and reciprocal, repacking, centroid (seconds), total (minutes).
const PAPER: [(usize, usize, [f64; 8]); 9] = [
    (256, 2, [82.03, 92.97, 1.56, 1.83, 51.53, 25.93, 0.35, 1.35]),
    (
        256,
        4,
        [83.59, 97.27, 2.69, 2.60, 107.78, 25.93, 0.50, 2.33],
    ),
    (
        256,
        8,
        [86.72, 94.92, 3.11, 4.36, 211.31, 25.93, 0.87, 4.09],
    ),
    (
        1024,
        2,
        [79.88, 95.41, 1.58, 5.33, 109.27, 55.22, 0.33, 3.66],
    ),
    (
        1024,
        4,
        [86.13, 95.80, 2.79, 8.95, 387.08, 55.22, 0.45, 7.57],
    ),
    (
        1024,
        8,
        [86.52, 95.31, 3.10, 16.31, 844.58, 55.22, 0.97, 15.34],
    ),
    (
        4096,
        2,
        [82.10, 94.65, 1.61, 17.78, 756.33, 60.69, 0.32, 13.95],
    ),
    (
        4096,
        4,
        [86.33, 96.00, 2.73, 32.48, 1500.37, 60.69, 0.45, 26.61],
    ),
    (
        4096,
        8,
        [88.79, 96.14, 3.03, 57.04, 3000.85, 60.69, 1.04, 52.04],
    ),
];

/// One measured row.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Row {
    preset: String,
    lut_log_n: u32,
    points: usize,
    clusters: usize,
    features: usize,
    threads: usize,
    /// Look-up tables of the min-index sector: `N (3K - 2) + K`.
    tables: usize,
    distance_s: f64,
    extract_s: f64,
    min_index_s: f64,
    repacking_s: f64,
    centroid_s: f64,
    total_s: f64,
    /// Closest-assignment ratio against plaintext assignment to the same centroids.
    rho: f64,
    /// Largest centroid error against the plaintext update with the decrypted (rounded) bits.
    centroid_error: f64,
    /// `uptime`'s load averages at the end of the row.
    load: String,
    /// The paper's row (20 threads), if it has one.
    paper: Option<[f64; 8]>,
}

impl Row {
    fn key(&self) -> (String, u32, usize, usize, usize) {
        (
            self.preset.clone(),
            self.lut_log_n,
            self.points,
            self.clusters,
            self.threads,
        )
    }
}

/// The JSON file: the machine of the last run and every row so far.
#[derive(Serialize, Deserialize)]
struct Saved {
    machine: serde_json::Value,
    rows: Vec<Row>,
}

fn load_rows(path: &Path) -> Vec<Row> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str::<Saved>(&t).ok())
        .map(|s| s.rows)
        .unwrap_or_default()
}

/// Runs the rows of `selection` that `pegasus-table8.json` in `options.out` does not hold yet: markdown on
/// stdout, the JSON rewritten after every row.
///
/// Errors: parameter, key-generation and evaluation errors; output errors.
pub fn run_with(options: &BenchOptions, selection: &Table8Selection) -> anyhow::Result<()> {
    let machine = Machine::detect();
    let path = options.out.join("pegasus-table8.json");
    let mut rows = load_rows(&path);
    if !rows.is_empty() {
        eprintln!(
            "pegasus-table8: resuming, {} rows in {}",
            rows.len(),
            path.display()
        );
    }
    let preset = selection.preset;
    let base = preset.params()?;
    let params = match selection.lut_log_n {
        Some(l) => base.with_lut_log_n(l)?,
        None => base,
    };
    let lut_log_n = params.lut_log_n();
    let name = format!("{preset:?}");
    let mut rng = Csprng::from_os()?;
    let d = selection.features;
    for (index, &(n, k)) in selection.sizes.iter().enumerate() {
        let todo: Vec<usize> = selection
            .threads
            .iter()
            .copied()
            .filter(|&t| {
                !rows
                    .iter()
                    .any(|r| r.key() == (name.clone(), lut_log_n, n, k, t))
            })
            .collect();
        if todo.is_empty() {
            continue;
        }
        eprintln!(
            "pegasus-table8 [{}/{}]: N = {n}, K = {k}, d = {d}: key generation",
            index + 1,
            selection.sizes.len()
        );
        let start = Instant::now();
        let layout = KMeansLayout::new(n, k, d)?;
        let ctx = params.ckks.clone();
        let keygen = KeyGenerator::new(&ctx, &mut rng)?;
        // Table IV and the test set are below 128 bits by the estimators: reproduced as published.
        let pipeline = PipelineOptions {
            allow_insecure: true,
            ..PipelineOptions::new(layout.slots())
        };
        let (keys, secrets) = PegasusKeys::generate(&params, &pipeline, &keygen, &mut rng)?;
        let pegasus = PegasusEvaluator::new(params.clone(), pipeline, keys)?;
        let key = ComparisonKey::generate(&pegasus, &secrets, &mut rng)?;
        let kkeys = KMeansKeys::generate(&layout, &keygen, &mut rng)?;
        let mut data = StdRng::seed_from_u64((n * 31 + k) as u64);
        let x: Vec<Vec<f64>> = (0..n)
            .map(|_| (0..d).map(|_| data.gen_range(-1.0..=1.0)).collect())
            .collect();
        let radius = x
            .iter()
            .map(|r| r.iter().map(|v| v * v).sum::<f64>().sqrt())
            .fold(0.0, f64::max);
        let init: Vec<Vec<f64>> = x[..k].to_vec();
        let server =
            KMeansEvaluator::new(&pegasus, key, kkeys, layout, KMeansOptions::new(radius))?;
        let enc = CkksEncryptor::with_secret_key(&ctx, keygen.secret_key())?;
        let dec = CkksDecryptor::new(&ctx, keygen.secret_key())?;
        let f = server.feature_factor();
        let top = ctx.max_level();
        let px = layout.encrypt_points(&ctx, &enc, &x, server.encoding(), top, &mut rng)?;
        let pc = layout.encrypt_centroids(&ctx, &enc, &init, server.encoding(), top, &mut rng)?;
        let closest = plain::closest(&x, &init)?;
        eprintln!("  keys in {:.1} s", start.elapsed().as_secs_f64());
        for threads in todo {
            eprintln!("  {threads} thread(s): distance");
            let (dist, t_dist) = timed(threads, || server.distances(&px, &pc))?;
            let dist = dist?;
            eprintln!("  extraction ({t_dist:.1} s so far)");
            let (lwes, t_ext) = timed(threads, || server.extract(&dist))?;
            let lwes = lwes?;
            eprintln!("  min-index and reciprocal: {} tables", n * (3 * k - 2) + k);
            let (assignment, t_min) = timed(threads, || server.min_index(&lwes))?;
            let assignment = assignment?;
            eprintln!("  repacking ({t_min:.1} s for the tables)");
            let (repacked, t_rep) = timed(threads, || server.repack(&assignment))?;
            let repacked = repacked?;
            eprintln!("  centroid");
            let (new, t_cen) = timed(threads, || server.centroids(&px, &repacked))?;
            let new = new?;
            let bits = server.decrypt_bits(&secrets, &assignment)?;
            let rho = plain::closest_assignment_ratio(&bits, &closest)?;
            let rounded: Vec<Vec<f64>> = bits
                .iter()
                .map(|r| r.iter().map(|b| b.round()).collect())
                .collect();
            let want = plain::update(&x, &rounded)?;
            let got = layout.decrypt_centroids(&dec, &new, f)?;
            let centroid_error = got
                .iter()
                .flatten()
                .zip(want.iter().flatten())
                .map(|(g, w)| (g - w).abs())
                .fold(0.0, f64::max);
            let row = Row {
                preset: name.clone(),
                lut_log_n,
                points: n,
                clusters: k,
                features: d,
                threads,
                tables: n * (3 * k - 2) + k,
                distance_s: t_dist,
                extract_s: t_ext,
                min_index_s: t_min,
                repacking_s: t_rep,
                centroid_s: t_cen,
                total_s: t_dist + t_ext + t_min + t_rep + t_cen,
                rho,
                centroid_error,
                load: super::ckks_functions::load_average().unwrap_or_default(),
                paper: PAPER
                    .iter()
                    .find(|(pn, pk, _)| *pn == n && *pk == k)
                    .map(|(_, _, p)| *p),
            };
            eprintln!(
                "  N = {n}, K = {k}, {threads} thread(s): total {:.1} s, rho {:.2}%, centroid error \
                 {:.2e}, load {}",
                row.total_s,
                100.0 * rho,
                centroid_error,
                row.load
            );
            rows.retain(|r| r.key() != row.key());
            rows.push(row);
            let saved = Saved {
                machine: serde_json::to_value(&machine)?,
                rows: rows.clone(),
            };
            write_json(&options.out, "pegasus-table8", &saved)?;
        }
    }
    print_table(&machine, &rows);
    eprintln!("wrote {}", path.display());
    Ok(())
}

fn print_table(machine: &Machine, rows: &[Row]) {
    println!("## PEGASUS Table VIII: one secure k-means update (d = 16)\n");
    println!("{}\n", machine.markdown_header());
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let paper =
                |i: usize, unit: &str| r.paper.map_or("-".into(), |p| format!("{}{unit}", p[i]));
            vec![
                format!("{} (n = 2^{})", r.preset, r.lut_log_n),
                r.points.to_string(),
                r.clusters.to_string(),
                r.threads.to_string(),
                format!(
                    "{:.2}% ({} / {})",
                    100.0 * r.rho,
                    paper(0, "%"),
                    paper(1, "%")
                ),
                format!("{:.2} ({})", r.distance_s, paper(2, "")),
                format!("{:.2} ({})", r.extract_s, paper(3, "")),
                format!("{:.1} ({})", r.min_index_s, paper(4, "")),
                format!("{:.1} ({})", r.repacking_s, paper(5, "")),
                format!("{:.2} ({})", r.centroid_s, paper(6, "")),
                format!("{:.2} ({})", r.total_s / 60.0, paper(7, "")),
                format!("{:.1e}", r.centroid_error),
                r.load.clone(),
            ]
        })
        .collect();
    println!(
        "{}",
        markdown_table(
            &[
                "preset",
                "N",
                "K",
                "threads",
                "rho (paper 2^12 / 2^13)",
                "distance s (paper)",
                "extract s",
                "min-index & recip. s",
                "repacking s",
                "centroid s",
                "total min",
                "centroid error",
                "load",
            ],
            &cells
        )
    );
    println!(
        "\nSeconds, ours then the paper's in parentheses (20 threads, Xeon 8269CY); rho against \
         plaintext assignment to the same centroids; centroid error against the plaintext update with \
         the decrypted bits."
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--quick` on one small row: every sector runs, the JSON holds the row, a second run resumes.
    #[test]
    fn quick_row_runs_and_resumes() {
        let dir = std::env::temp_dir().join(format!("rnsfhe-table8-{}", std::process::id()));
        let options = BenchOptions {
            quick: true,
            out: dir.clone(),
        };
        let mut selection = Table8Selection::defaults(&options, false);
        selection.sizes = vec![(8, 2)];
        selection.threads = vec![1];
        run_with(&options, &selection).unwrap();
        let rows = load_rows(&dir.join("pegasus-table8.json"));
        assert_eq!(rows.len(), 1);
        assert!(rows[0].rho > 0.0 && rows[0].rho <= 1.0 && rows[0].total_s > 0.0);
        assert!(rows[0].centroid_error < 0.5, "{}", rows[0].centroid_error);
        // Resumed: nothing to measure, the row kept.
        run_with(&options, &selection).unwrap();
        assert_eq!(load_rows(&dir.join("pegasus-table8.json")).len(), 1);
        let _ = std::fs::remove_dir_all(dir);
    }
}
