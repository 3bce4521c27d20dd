//! `rnsfhe bench ckks-table4`: RNS-CKKS Table 4 (Section 5.3), logistic-regression training on encrypted
//! data for the lbw and uis datasets at the paper's parameters ([`Preset::PaperTable4`]: `N = 2^16`,
//! `log q = 40`, `ceil(log Q_L) = 1061`), with the paper's row (HEAAN-RNS, single core) beside ours.
//!
//! The method is Kim, Song, Kim, Lee and Cheon's (BMC Medical Genomics 2018), as in the paper: 5 iterations
//! of Nesterov's accelerated gradient, the whole dataset in one ciphertext, the degree-3 least-squares
//! sigmoid ([`rnsfhe_apps::logistic`] documents the iteration, its depth and the learning-rate schedule).
//! Each dataset is normalized (features divided by their largest absolute value), packed and encrypted with
//! the public key, trained on encrypted, and the decrypted model's accuracy and AUC on the dataset are
//! printed beside those of the same procedure in plaintext ([`rnsfhe_apps::plaintext`]).
//!
//! Times: key generation (secret, public, relinearization and the Galois keys of the rotations both
//! datasets need, generated once) is reported apart; per dataset, the encryption of `Z`, the training (the
//! paper's "total time") in the rayon pool and, when the pool has more than one thread, again in a
//! one-thread pool (the paper's setting), and the decryption.
//!
//! `--quick` runs the same on the `Preset::PaperTable4` chain at `N = 2^13` (insecure, fast) with lbw and
//! the first 255 samples of uis (4096 slots is all `N = 2^13` holds).

use std::time::Instant;

use rnsfhe_apps::{Dataset, LogisticRegression, PackedLayout};
use rnsfhe_ckks::{
    CkksContext, CkksDecryptor, CkksEncryptor, CkksParams, Csprng, Evaluator, KeyGenerator, Preset,
};
use serde::Serialize;

use super::{markdown_table, write_json, BenchOptions, Machine};

/// The paper's Table 4 (HEAAN-RNS, single core): dataset, features, samples, iterations, total time in
/// minutes, accuracy in percent, AUC.
pub const PAPER: [(&str, usize, usize, usize, f64, f64, f64); 2] = [
    ("lbw", 9, 189, 5, 1.82, 69.73, 0.62),
    ("uis", 8, 575, 5, 1.83, 74.43, 0.59),
];

/// One dataset's row.
#[derive(Debug, Clone, Serialize)]
pub struct Table4Row {
    /// Dataset name.
    pub dataset: String,
    /// Number of features `d`.
    pub features: usize,
    /// Number of samples `n`.
    pub samples: usize,
    /// Rows x columns of the packed matrix (the ciphertext's slots).
    pub packed: (usize, usize),
    /// Iterations of Nesterov's accelerated gradient.
    pub iterations: usize,
    /// Degree of the least-squares sigmoid.
    pub sigmoid_degree: usize,
    /// Levels the training used.
    pub levels_used: usize,
    /// Encryption of `Z` (encode + encrypt), seconds.
    pub encrypt_s: f64,
    /// Training on the encrypted `Z`, in the rayon pool, seconds.
    pub train_s: f64,
    /// Training in a one-thread pool, seconds (`None` when the pool has one thread: then `train_s`).
    pub train_one_thread_s: Option<f64>,
    /// Decryption of the weights, seconds.
    pub decrypt_s: f64,
    /// Accuracy of the decrypted model on the dataset, percent.
    pub accuracy_encrypted: f64,
    /// AUC of the decrypted model.
    pub auc_encrypted: f64,
    /// Accuracy of the same procedure in plaintext, percent.
    pub accuracy_plain: f64,
    /// AUC of the same procedure in plaintext.
    pub auc_plain: f64,
    /// Largest difference between the encrypted and the plaintext weights.
    pub max_weight_difference: f64,
    /// The paper's total time, minutes.
    pub paper_time_min: Option<f64>,
    /// The paper's accuracy, percent.
    pub paper_accuracy: Option<f64>,
    /// The paper's AUC.
    pub paper_auc: Option<f64>,
}

/// The JSON document `ckks-table4.json`.
#[derive(Debug, Clone, Serialize)]
pub struct Table4Report {
    /// Table name.
    pub table: &'static str,
    /// Where and when it ran.
    pub machine: Machine,
    /// Whether this was a `--quick` run (insecure `N = 2^13`).
    pub quick: bool,
    /// `log2 N`.
    pub log_n: u32,
    /// `log2` of the scale and of the scaling primes (`log q`).
    pub log_q: u32,
    /// `log2 Q_L` of the primes found.
    pub log_q_l: f64,
    /// Levels of the chain.
    pub levels: usize,
    /// Key generation (secret, public, relinearization and `galois_keys` rotation keys), seconds.
    pub keygen_s: f64,
    /// Number of rotation keys generated.
    pub galois_keys: usize,
    /// One row per dataset.
    pub rows: Vec<Table4Row>,
}

/// The parameters: `Preset::PaperTable4`, or its chain at `N = 2^13` for `--quick` (insecure).
fn parameters(quick: bool) -> CkksParams {
    let mut params = Preset::PaperTable4.params();
    if quick {
        // 21 levels (5 iterations, degree 3): digits of 8 primes (341 bits), P = 6 primes of 60 bits.
        params.log_n = 13;
        params.levels = 21;
        params.special_primes = 6;
    }
    params
}

/// Trains on one dataset (already normalized) and measures it.
fn run_dataset(
    ctx: &std::sync::Arc<CkksContext>,
    encryptor: &CkksEncryptor,
    decryptor: &CkksDecryptor,
    evaluator: &Evaluator,
    data: &Dataset,
    lr: &LogisticRegression,
    rng: &mut Csprng,
) -> anyhow::Result<Table4Row> {
    let layout = PackedLayout::for_dataset(data)?;
    let packed = layout.pack_z(data)?;
    let t = Instant::now();
    let z = layout.encrypt(ctx, encryptor, &packed, rng)?;
    let encrypt_s = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let model = lr.fit_encrypted(evaluator, &z, &layout)?;
    let train_s = t.elapsed().as_secs_f64();
    let train_one_thread_s = if rayon::current_num_threads() > 1 {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
        let t = Instant::now();
        pool.install(|| lr.fit_encrypted(evaluator, &z, &layout))?;
        Some(t.elapsed().as_secs_f64())
    } else {
        None
    };

    let t = Instant::now();
    let decrypted = model.decrypt(decryptor)?;
    let decrypt_s = t.elapsed().as_secs_f64();
    let reference = lr.fit_plain(data)?;
    let enc = decrypted.evaluate(data)?;
    let plain = reference.evaluate(data)?;
    let max_weight_difference = decrypted
        .weights()
        .iter()
        .zip(reference.weights())
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    // The paper's row only beside the same dataset (not the truncated uis of --quick).
    let paper = PAPER
        .iter()
        .find(|p| p.0 == data.name() && p.2 == data.n_samples());
    Ok(Table4Row {
        dataset: data.name().to_string(),
        features: data.n_features(),
        samples: data.n_samples(),
        packed: (layout.rows(), layout.columns()),
        iterations: lr.iterations,
        sigmoid_degree: lr.sigmoid_degree,
        levels_used: model.levels()[0] - model.weights().level(),
        encrypt_s,
        train_s,
        train_one_thread_s,
        decrypt_s,
        accuracy_encrypted: 100.0 * enc.accuracy,
        auc_encrypted: enc.auc,
        accuracy_plain: 100.0 * plain.accuracy,
        auc_plain: plain.auc,
        max_weight_difference,
        paper_time_min: paper.map(|p| p.4),
        paper_accuracy: paper.map(|p| p.5),
        paper_auc: paper.map(|p| p.6),
    })
}

/// Formats seconds as `12.3 s` or `1.82 min`.
fn duration(seconds: f64) -> String {
    if seconds >= 60.0 {
        format!("{:.2} min", seconds / 60.0)
    } else {
        format!("{seconds:.2} s")
    }
}

/// `rnsfhe bench ckks-table4`.
pub fn run(options: &BenchOptions) -> anyhow::Result<()> {
    let machine = Machine::detect();
    let params = parameters(options.quick);
    let ctx = CkksContext::new(params.clone())?;
    let lr = LogisticRegression::default();

    let (lbw, _) = Dataset::load_lbw()?.normalize();
    let uis_raw = Dataset::load_uis()?;
    let uis_raw = if options.quick {
        uis_raw.head(255)?
    } else {
        uis_raw
    };
    let (uis, _) = uis_raw.normalize();
    let datasets = [lbw, uis];
    let mut steps: Vec<i64> = datasets
        .iter()
        .map(PackedLayout::for_dataset)
        .collect::<rnsfhe_apps::Result<Vec<_>>>()?
        .iter()
        .flat_map(PackedLayout::rotation_steps)
        .collect();
    steps.sort_unstable();
    steps.dedup();

    eprintln!("generating keys ({} rotation keys) ...", steps.len());
    let mut rng = Csprng::from_os()?;
    let t = Instant::now();
    let kg = KeyGenerator::new(&ctx, &mut rng)?;
    let keys = kg.generate_all(&steps, false, &mut rng)?;
    let keygen_s = t.elapsed().as_secs_f64();
    let encryptor = CkksEncryptor::with_public_key(&ctx, &keys.public)?;
    let decryptor = CkksDecryptor::new(&ctx, &keys.secret)?;
    let evaluator = Evaluator::new(&ctx)
        .with_relin_key(keys.relin)?
        .with_galois_keys(keys.galois)?;

    let mut rows = Vec::new();
    for data in &datasets {
        eprintln!(
            "training on {} ({} samples) ...",
            data.name(),
            data.n_samples()
        );
        rows.push(run_dataset(
            &ctx, &encryptor, &decryptor, &evaluator, data, &lr, &mut rng,
        )?);
    }

    println!(
        "## RNS-CKKS Table 4: logistic-regression training on encrypted data{}\n",
        if options.quick {
            " (--quick: N = 2^13, insecure, uis truncated to 255 samples)"
        } else {
            ""
        }
    );
    println!("{}", machine.markdown_header());
    println!(
        "- N = 2^{}, log q = {}, log2 Q_L = {:.1} ({} levels), secret of Hamming weight 64, dnum = {}\n\
         - key generation: {} (secret, public, relinearization and {} rotation keys; the paper does not \
         count it)\n\
         - method (Kim, Song, Kim, Lee, Cheon 2018): {} iterations of Nesterov's accelerated gradient, \
         learning rate {}/(t+1), least-squares sigmoid of degree {} on [-8, 8], {} levels (the \
         encrypted Z is first dropped to them from the chain's {}); features \
         divided by their largest absolute value; accuracy and AUC on the whole dataset; \"plain\" is the \
         same procedure on f64\n\
         - paper: HEAAN-RNS, single core, Table 4\n",
        params.log_n,
        params.log_scale,
        ctx.log_q(),
        params.levels,
        params.dnum,
        duration(keygen_s),
        steps.len(),
        lr.iterations,
        lr.learning_rate,
        lr.sigmoid_degree,
        lr.levels_needed()?,
        params.levels,
    );
    let headers = [
        "dataset",
        "features",
        "samples",
        "iterations",
        "N",
        "log q",
        "ceil(log Q_L)",
        "encrypt",
        "training",
        "training, 1 thread",
        "accuracy enc / plain",
        "AUC enc / plain",
        "paper time",
        "paper accuracy",
        "paper AUC",
    ];
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.dataset.clone(),
                r.features.to_string(),
                r.samples.to_string(),
                r.iterations.to_string(),
                format!("2^{}", params.log_n),
                params.log_scale.to_string(),
                format!("{:.0}", ctx.log_q().ceil()),
                duration(r.encrypt_s),
                duration(r.train_s),
                duration(r.train_one_thread_s.unwrap_or(r.train_s)),
                format!("{:.2}% / {:.2}%", r.accuracy_encrypted, r.accuracy_plain),
                format!("{:.4} / {:.4}", r.auc_encrypted, r.auc_plain),
                r.paper_time_min
                    .map_or("-".into(), |m| format!("{m:.2} min")),
                r.paper_accuracy.map_or("-".into(), |a| format!("{a:.2}%")),
                r.paper_auc.map_or("-".into(), |a| format!("{a:.2}")),
            ]
        })
        .collect();
    print!("{}", markdown_table(&headers, &table));
    println!();
    for r in &rows {
        println!(
            "- {}: {} x {} packed ({} slots), {} levels used, decryption {}, max |beta_enc - beta_plain| = {:.2e}",
            r.dataset,
            r.packed.0,
            r.packed.1,
            r.packed.0 * r.packed.1,
            r.levels_used,
            duration(r.decrypt_s),
            r.max_weight_difference
        );
    }
    let report = Table4Report {
        table: "ckks-table4",
        machine,
        quick: options.quick,
        log_n: params.log_n,
        log_q: params.log_scale,
        log_q_l: ctx.log_q(),
        levels: params.levels,
        keygen_s,
        galois_keys: steps.len(),
        rows,
    };
    let path = write_json(&options.out, "ckks-table4", &report)?;
    println!("\nJSON: {}", path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_parameters_hold_the_training() {
        let p = parameters(true);
        let lr = LogisticRegression::default();
        assert_eq!(p.levels, lr.levels_needed().unwrap());
        let full = parameters(false);
        assert_eq!((full.log_n, full.log_scale, full.levels), (16, 40, 25));
        assert_eq!(duration(109.2), "1.82 min");
        assert_eq!(duration(2.5), "2.50 s");
    }
}
