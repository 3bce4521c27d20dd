//! `rnsfhe bench pegasus-table5`: the LWE rows of PEGASUS Table V at the Table IV dimensions, single
//! thread: the LWE key switch from the CKKS dimension `N = 2^16` to `n_lwe = 2^10` (Fig. 9), a look-up table
//! by blind rotation at `n = 2^12` (Fig. 2), and the key switch from `n` back to `n_lwe`, beside the paper's
//! figures and those of OpenPEGASUS (the paper's code) measured on this machine. A second LUT row uses a
//! special modulus `q'` below `2^50` (the vector NTT path), which PEGASUS's error formula allows at no
//! precision cost (Appendix C.2: the blind-rotation error scales with `q_0 / q'`), and two more use the other
//! blind-rotation algorithms on that set: the binary-key form (a binary LWE key) and the automorphism-based
//! LMKCDEY (Lee et al., Eurocrypt 2023, the same ternary key). Three more rows run the three steps with our
//! 128-bit set (`PegasusPreset::Secure128`: the switches down to its 26-bit `q_ks` included, its binary
//! algorithm). Then the throughput of a batch of LUTs on every thread of the pool against one thread.

use anyhow::Context;
use rnsfhe_core::SecretKey;
use rnsfhe_lwe::{
    BlindRotation, BlindRotationKey, LookupTable, LutEvaluator, LweCiphertext, LweDimension,
    LweSecretDistribution, LweSecretKey, LweSwitchingKey, PegasusParams, PegasusPreset,
};
use rnsfhe_math::sampling::{Csprng, DiscreteGaussian};
use rnsfhe_math::Modulus;
use serde::Serialize;

use super::pegasus_setup::lut_setup;
use super::{markdown_table, measure_interleaved, write_json, BenchOptions, Machine, TimingConfig};

/// One row of the table.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// What is timed.
    pub operation: String,
    /// Milliseconds per call (median).
    pub ms: f64,
    /// The paper's figure (Table V), milliseconds.
    pub paper_ms: f64,
    /// OpenPEGASUS on this machine as published / with its accidental primality test removed, ms.
    pub openpegasus_ms: (f64, f64),
    /// The size of the evaluation key (LUT rows: the blind-rotation key in memory,
    /// [`BlindRotationKey::size_bytes`]), bytes.
    pub key_bytes: Option<usize>,
}

/// Everything the table writes to JSON.
#[derive(Debug, Serialize)]
struct Results {
    machine: Machine,
    presets: Vec<String>,
    rows: Vec<Row>,
    batch: usize,
    batch_threads: usize,
    batch_one_thread_s: f64,
    batch_all_threads_s: f64,
}

/// Which rows of `pegasus-table5` to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Table5Part {
    /// The LWE rows (key switches, look-up tables, the batch of LUTs): a few minutes.
    Lwe,
    /// The pipeline rows ([`super::pegasus_pipeline`]): about an hour at full size.
    Pipeline,
    /// Both.
    All,
}

/// Runs the whole table with the default pipeline selection
/// ([`PipelineSelection::defaults`](super::pegasus_pipeline::PipelineSelection::defaults)).
///
/// Errors: as [`run_table5_parts`].
pub fn run_table5(options: &BenchOptions) -> anyhow::Result<()> {
    run_table5_parts(
        options,
        Table5Part::All,
        &super::pegasus_pipeline::PipelineSelection::defaults(options),
    )
}

/// Runs the rows of `part`: the LWE rows (see the module documentation, JSON `pegasus-table5.json`) and
/// the pipeline rows of `selection` (JSON `pegasus-pipeline.json`).
///
/// Errors: parameter, key-generation and evaluation errors; output errors.
pub fn run_table5_parts(
    options: &BenchOptions,
    part: Table5Part,
    selection: &super::pegasus_pipeline::PipelineSelection,
) -> anyhow::Result<()> {
    if part != Table5Part::Pipeline {
        run_lwe_rows(options)?;
    }
    if part != Table5Part::Lwe {
        super::pegasus_pipeline::run(options, selection)?;
    }
    Ok(())
}

/// The LWE rows (see the module documentation).
fn run_lwe_rows(options: &BenchOptions) -> anyhow::Result<()> {
    // The published set, and the same with q' < 2^50 (LUT row only); --quick: the small test set.
    let presets = if options.quick {
        vec![PegasusPreset::InsecureTest]
    } else {
        vec![
            PegasusPreset::PegasusTable4,
            PegasusPreset::PegasusTable4FastSpecial,
        ]
    };
    let sets = presets
        .iter()
        .map(|p| p.params())
        .collect::<Result<Vec<_>, _>>()?;
    let base = sets[0];
    let machine = Machine::detect();
    let mut rng = Csprng::from_os()?;
    let lwe_sk = LweSecretKey::generate(
        LweDimension::new(base.lwe_dimension)?,
        base.lwe_secret,
        &mut rng,
    )?;
    let ckks_sk = LweSecretKey::generate(
        LweDimension::new(1 << base.ckks_log_n)?,
        base.lwe_secret,
        &mut rng,
    )?;
    let (q0, ks) = (base.key_switch.modulus, base.key_switch);
    let (log_ckks, log_lut, lwe) = (base.ckks_log_n, base.lut.log_n, base.lwe_dimension);
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    let (rows, lut) = one.install(|| -> anyhow::Result<_> {
        let ks_big = LweSwitchingKey::generate_allowing_insecure(&ckks_sk, &lwe_sk, ks, &mut rng)?;
        let evals = sets
            .iter()
            .map(|p| lut_setup(BlindRotation::Ternary, p, &lwe_sk, &mut rng))
            .collect::<anyhow::Result<Vec<_>>>()?;
        // The binary-key algorithm on the last set, with a binary LWE key of the same dimension.
        let binary_sk = LweSecretKey::generate(
            LweDimension::new(lwe)?,
            LweSecretDistribution::UniformBinary,
            &mut rng,
        )?;
        let last = sets.last().context("no parameter set")?;
        let (_, _, binary) = lut_setup(BlindRotation::Binary, last, &binary_sk, &mut rng)?;
        // The automorphism-based algorithm on the last set, with the ternary LWE key.
        let (_, _, lmkcdey) = lut_setup(BlindRotation::Lmkcdey, last, &lwe_sk, &mut rng)?;
        let (ctx, ring_sk, _) = &evals[0];
        let lut_sk = LweSecretKey::from_ring_key(ring_sk)?;
        let ks_small = LweSwitchingKey::generate_allowing_insecure(&lut_sk, &lwe_sk, ks, &mut rng)?;
        // Our 128-bit set beside them (full runs only): its three steps with the switches down to q_ks.
        let secure = if options.quick {
            None
        } else {
            Some(SecureSet::new(&ckks_sk, &mut rng)?)
        };
        let modulus = Modulus::new(q0)?;
        let noise = DiscreteGaussian::with_sigma(3.2)?;
        let delta = q0 as f64 / 64.0;
        let ct_big = ckks_sk.encrypt(1 << 40, &modulus, &noise, &mut rng);
        let ct_lwe = lwe_sk.encrypt((1.5 * delta) as i64, &modulus, &noise, &mut rng);
        let ct_lut = lut_sk.encrypt(1 << 40, &modulus, &noise, &mut rng);
        let ct_binary = binary_sk.encrypt((1.5 * delta) as i64, &modulus, &noise, &mut rng);
        let table = LookupTable::from_fn(ctx, delta, delta, |x| 1.0 / (1.0 + (-x).exp()))?;
        let config = TimingConfig {
            warmup_ms: 0,
            samples: if options.quick { 3 } else { 9 },
            min_sample_us: 1000,
        };
        // The first error of any timed call, reported after the measurement.
        let failed = std::cell::RefCell::new(None);
        let keep = |r: anyhow::Result<LweCiphertext>| {
            if let Err(e) = r {
                failed.borrow_mut().get_or_insert(e);
            }
        };
        let timings = {
            let mut first = || keep(ks_big.switch(&ct_big).map_err(Into::into));
            let mut last = || keep(ks_small.switch(&ct_lut).map_err(Into::into));
            let mut luts: Vec<_> = evals
                .iter()
                .map(|(_, _, eval)| {
                    let (ct, table, keep) = (&ct_lwe, &table, &keep);
                    move || keep(eval.evaluate(ct, table).map_err(Into::into))
                })
                .collect();
            let mut bin = || keep(binary.evaluate(&ct_binary, &table).map_err(Into::into));
            let mut auto = || keep(lmkcdey.evaluate(&ct_lwe, &table).map_err(Into::into));
            let mut cases: Vec<&mut dyn FnMut()> = vec![&mut first];
            cases.extend(luts.iter_mut().map(|f| f as &mut dyn FnMut()));
            cases.push(&mut bin);
            cases.push(&mut auto);
            cases.push(&mut last);
            let mut secure_cases: Vec<Box<dyn FnMut() + '_>> = match &secure {
                Some(s) => vec![
                    Box::new(|| keep(s.key_switch_down())),
                    Box::new(|| keep(s.lut())),
                    Box::new(|| keep(s.key_switch_back())),
                ],
                None => Vec::new(),
            };
            cases.extend(secure_cases.iter_mut().map(|f| f.as_mut() as &mut dyn FnMut()));
            measure_interleaved(&config, &mut cases)
        };
        if let Some(e) = failed.into_inner() {
            return Err(e);
        }
        let ms = |i: usize| timings[i].median_us / 1000.0;
        let mut rows = vec![Row {
            operation: format!("KS N = 2^{log_ckks} -> n_lwe = {lwe}"),
            ms: ms(0),
            paper_ms: 20.14,
            openpegasus_ms: (78.5, 38.0),
            key_bytes: None,
        }];
        for (i, (preset, p)) in presets.iter().zip(&sets).enumerate() {
            rows.push(Row {
                operation: format!(
                    "LUT n = 2^{log_lut}, q' ~ 2^{:.0} ({preset:?})",
                    (p.lut.special as f64).log2()
                ),
                ms: ms(1 + i),
                paper_ms: 930.0,
                openpegasus_ms: (1410.0, 900.0),
                key_bytes: Some(evals[i].2.key().size_bytes()),
            });
        }
        rows.push(Row {
            operation: format!(
                "LUT n = 2^{log_lut}, binary key ({:?}, BlindRotation::Binary)",
                presets[presets.len() - 1]
            ),
            ms: ms(1 + sets.len()),
            paper_ms: 930.0,
            openpegasus_ms: (1410.0, 900.0),
            key_bytes: Some(binary.key().size_bytes()),
        });
        rows.push(Row {
            operation: format!(
                "LUT n = 2^{log_lut}, ternary key ({:?}, BlindRotation::Lmkcdey, w = {})",
                presets[presets.len() - 1],
                lmkcdey.key().window().unwrap_or_default()
            ),
            ms: ms(2 + sets.len()),
            paper_ms: 930.0,
            openpegasus_ms: (1410.0, 900.0),
            key_bytes: Some(lmkcdey.key().size_bytes()),
        });
        rows.push(Row {
            operation: format!("KS n = 2^{log_lut} -> n_lwe = {lwe}"),
            ms: ms(3 + sets.len()),
            paper_ms: 1.49,
            openpegasus_ms: (4.4, 2.2),
            key_bytes: None,
        });
        if let Some(s) = &secure {
            let q_ks = s.params.key_switch.modulus;
            let base = 4 + sets.len();
            for (i, (operation, paper_ms, openpegasus_ms, key_bytes)) in [
                (
                    format!("Secure128: KS N = 2^{log_ckks} -> n_lwe = {lwe} (incl. the switch to q_ks ~ 2^{:.0})", (q_ks as f64).log2()),
                    20.14,
                    (78.5, 38.0),
                    None,
                ),
                (
                    format!("Secure128: LUT n = 2^{log_lut}, binary key, BlindRotation::Binary (128 bits)"),
                    930.0,
                    (1410.0, 900.0),
                    Some(s.eval.key().size_bytes()),
                ),
                (
                    format!("Secure128: KS n = 2^{log_lut} -> n_lwe = {lwe} (incl. the switch to q_ks)"),
                    1.49,
                    (4.4, 2.2),
                    None,
                ),
            ]
            .into_iter()
            .enumerate()
            {
                rows.push(Row {
                    operation,
                    ms: ms(base + i),
                    paper_ms,
                    openpegasus_ms,
                    key_bytes,
                });
            }
        }
        let fastest = evals.into_iter().last().map(|(_, _, eval)| eval);
        Ok((rows, (fastest, ct_lwe, table)))
    })?;
    let (eval, ct, table) = lut;
    let eval = eval.context("no LUT evaluator")?;
    let batch = if options.quick { 4 } else { 64 };
    let cts = vec![ct; batch];
    let time_batch = |pool: &rayon::ThreadPool| -> anyhow::Result<f64> {
        let start = std::time::Instant::now();
        pool.install(|| eval.evaluate_many(&cts, &table))?;
        Ok(start.elapsed().as_secs_f64())
    };
    let all = rayon::ThreadPoolBuilder::new().build()?;
    let batch_one_thread_s = time_batch(&one)?;
    let batch_all_threads_s = time_batch(&all)?;

    println!("{}", machine.markdown_header());
    println!(
        "PEGASUS Table V, LWE rows, single thread; dimensions N = 2^{log_ckks}, n = 2^{log_lut}, \
         n_lwe = {lwe} (q_0 ~ 2^45, B_ks = 2^7, d_ks = 7, sigma_ks = 2^13, sigma_lut = 2^10, h = 64){}\n",
        if options.quick {
            "; QUICK RUN at small dimensions: not comparable with the paper"
        } else {
            ""
        }
    );
    let table_rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.operation.clone(),
                format!("{:.2}", r.ms),
                format!("{:.2}", r.paper_ms),
                format!("{:.1} / {:.1}", r.openpegasus_ms.0, r.openpegasus_ms.1),
                format!("{:.2}", r.ms / r.openpegasus_ms.1),
                r.key_bytes.map_or_else(String::new, |b| {
                    format!("{:.1}", b as f64 / (1u64 << 20) as f64)
                }),
            ]
        })
        .collect();
    println!(
        "{}",
        markdown_table(
            &[
                "operation",
                "rnsfhe (ms)",
                "paper (ms)",
                "OpenPEGASUS here, as published / fixed (ms)",
                "rnsfhe / fixed OpenPEGASUS",
                "key (MiB, in memory)",
            ],
            &table_rows
        )
    );
    println!(
        "\nBatch of {batch} LUTs ({:?}): {:.2} s on 1 thread, {:.2} s on {} threads ({:.2}x)",
        presets[presets.len() - 1],
        batch_one_thread_s,
        batch_all_threads_s,
        all.current_num_threads(),
        batch_one_thread_s / batch_all_threads_s
    );
    let results = Results {
        machine,
        presets: presets.iter().map(|p| format!("{p:?}")).collect(),
        rows,
        batch,
        batch_threads: all.current_num_threads(),
        batch_one_thread_s,
        batch_all_threads_s,
    };
    let path = write_json(&options.out, "pegasus-table5", &results)
        .context("writing the pegasus-table5 results")?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// Our 128-bit set (`PegasusPreset::Secure128`, no insecure opt-in): its two switching keys at `q_ks`,
/// its blind-rotation key (the set's algorithm) and one input of each of its three steps.
struct SecureSet {
    params: PegasusParams,
    down: LweSwitchingKey,
    back: LweSwitchingKey,
    eval: LutEvaluator,
    table: LookupTable,
    /// A ciphertext of the CKKS dimension modulo `q_0` (as extracted).
    ct_big: LweCiphertext,
    /// A ciphertext of `n_lwe` modulo `q_ks` (a table input).
    ct_lwe: LweCiphertext,
    /// A table output: dimension `n` modulo `q_0`.
    ct_lut: LweCiphertext,
}

impl SecureSet {
    fn new(ckks_sk: &LweSecretKey, rng: &mut Csprng) -> anyhow::Result<Self> {
        let params = PegasusPreset::Secure128.params()?;
        let ctx = params.lut.context()?;
        let ring_sk = SecretKey::generate(&ctx, rng)?;
        let lwe_sk = LweSecretKey::generate(
            LweDimension::new(params.lwe_dimension)?,
            params.lwe_secret,
            rng,
        )?;
        let ring_as_lwe = LweSecretKey::from_ring_key(&ring_sk)?;
        let down = LweSwitchingKey::generate(ckks_sk, &lwe_sk, params.key_switch, rng)?;
        let back = LweSwitchingKey::generate(&ring_as_lwe, &lwe_sk, params.key_switch, rng)?;
        let eval = LutEvaluator::new(BlindRotationKey::generate_with(
            params.blind_rotation,
            &ctx,
            &ring_sk,
            &lwe_sk,
            rng,
        )?);
        let (q0, q_ks) = (
            Modulus::new(params.lut.q0)?,
            Modulus::new(params.key_switch.modulus)?,
        );
        let noise = DiscreteGaussian::with_sigma(3.19)?;
        let delta = q0.value() as f64 / 64.0;
        let delta_ks = delta * q_ks.value() as f64 / q0.value() as f64;
        let table =
            LookupTable::from_fn_for_input_modulus(&ctx, q_ks.value(), delta_ks, delta, |x| {
                1.0 / (1.0 + (-x).exp())
            })?;
        Ok(Self {
            ct_big: ckks_sk.encrypt(1 << 40, &q0, &noise, rng),
            ct_lwe: lwe_sk.encrypt((1.5 * delta_ks) as i64, &q_ks, &noise, rng),
            ct_lut: ring_as_lwe.encrypt(1 << 40, &q0, &noise, rng),
            params,
            down,
            back,
            eval,
            table,
        })
    }

    /// Fig. 6 step 4: the extracted ciphertext switched to `q_ks`, then to `n_lwe`.
    fn key_switch_down(&self) -> anyhow::Result<LweCiphertext> {
        let q_ks = self.params.key_switch.modulus;
        Ok(self.down.switch(&self.ct_big.switch_modulus(q_ks)?)?)
    }

    /// Fig. 6 step 5: a table by the set's algorithm.
    fn lut(&self) -> anyhow::Result<LweCiphertext> {
        Ok(self.eval.evaluate(&self.ct_lwe, &self.table)?)
    }

    /// Fig. 6 step 6: the table's output switched to `q_ks`, then back to `n_lwe`.
    fn key_switch_back(&self) -> anyhow::Result<LweCiphertext> {
        let q_ks = self.params.key_switch.modulus;
        Ok(self.back.switch(&self.ct_lut.switch_modulus(q_ks)?)?)
    }
}
