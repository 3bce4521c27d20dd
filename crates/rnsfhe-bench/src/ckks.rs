//! CKKS benchmarks: `rnsfhe bench ckks-table1` regenerates the RNS-CKKS paper's Table 1 (Enc, Dec, Add,
//! CMult, Mult&RS at N = 2^15..2^16, L = 5..15) with Rotate, KeyGen and the precision after each operation,
//! printing the paper's HEAAN-RNS numbers beside ours; `rnsfhe bench ckks-op` serves the same operations
//! over the line protocol of `bench/peers/compare_table1.py`, which interleaves them with OpenFHE and SEAL.
//!
//! `ckks-table1` also measures the fast-prime presets ([`Preset::FAST_PRIME`]: every prime below `2^50`, the
//! AVX-512 IFMA path of the NTT) at the `N` and depth of each Table 1 row and prints what they gain against
//! the 55-bit presets, operation by operation, with the precision of both (scale `2^45` against `2^55`).
//!
//! Both use [`Table1Bench`], so the operations timed against the paper and against the peers are the same
//! code: `encode_encrypt` (N/2 reals, public key), `decrypt_decode` (top level), `add`, `cmult` (times a
//! plaintext vector, then rescale), `mult_rs` (multiply, relinearize, rescale), `rotate` (by one slot),
//! `keygen` (secret, public, relinearization and one rotation key).

use std::sync::Arc;

use anyhow::bail;
use rand::{Rng, SeedableRng};
use rnsfhe_ckks::{
    Ciphertext, CkksContext, CkksDecryptor, CkksEncryptor, Complex64, Csprng, Evaluator,
    KeyGenerator, Plaintext, PrecisionStats, Preset,
};
use serde::Serialize;
use serde_json::json;

use super::ckks_functions::{load_average, load_average_line};
use super::{
    markdown_table, measure_interleaved, parse_named, serve_line_protocol, write_json,
    BenchOptions, Machine, Timing, TimingConfig,
};

/// The operations of the table, in order: name, label, and the paper column it matches (if any).
pub const OPS: [(&str, &str); 8] = [
    ("keygen", "KeyGen (sk, pk, relin, 1 rotation)"),
    ("encode_encrypt", "Enc (encode + encrypt, pk)"),
    ("decrypt_decode", "Dec (decrypt + decode)"),
    // The peers' level-0 row: what a client decrypting a result at the bottom of the chain pays.
    ("decrypt_decode_l0", "Dec at level 0 (one prime)"),
    ("add", "Add"),
    ("cmult", "CMult (x plaintext, rescale)"),
    ("mult_rs", "Mult&RS (mult, relin, rescale)"),
    ("rotate", "Rotate (1 slot)"),
];

/// The RNS-CKKS paper's Table 1, HEAAN-RNS rows (ms): Enc, Dec, Add, CMult, Mult&RS.
fn paper_ms(preset: Preset, op: &str) -> Option<f64> {
    let row = match preset {
        Preset::PaperTable1L5 => [31.0, 4.6, 2.9, 25.0, 85.0],
        Preset::PaperTable1L10 => [58.0, 7.8, 4.3, 44.0, 164.0],
        Preset::PaperTable1L15 => [177.0, 10.0, 15.5, 125.0, 563.0],
        _ => return None,
    };
    let i = [
        "encode_encrypt",
        "decrypt_decode",
        "add",
        "cmult",
        "mult_rs",
    ]
    .iter()
    .position(|&o| o == op)?;
    Some(row[i])
}

/// Parses a preset name as printed by `rnsfhe params` (`PaperTable1L5`, ...).
pub fn parse_preset(name: &str) -> anyhow::Result<Preset> {
    parse_named("preset", &Preset::ALL, name)
}

/// Keys, inputs and evaluator of one preset, set up once; each operation runs on the same inputs.
pub struct Table1Bench {
    ctx: Arc<CkksContext>,
    encryptor: CkksEncryptor,
    decryptor: CkksDecryptor,
    evaluator: Evaluator,
    x_values: Vec<f64>,
    y_values: Vec<f64>,
    c_values: Vec<f64>,
    x: Ciphertext,
    /// `x` dropped to level 0 (one prime), for the level-0 decryption row.
    x_l0: Ciphertext,
    y: Ciphertext,
    c: Plaintext,
    rng: Csprng,
}

impl Table1Bench {
    /// Builds the context of `preset`, keys, two encrypted inputs of N/2 reals in [-1, 1] and a plaintext.
    pub fn new(preset: Preset) -> anyhow::Result<Self> {
        let ctx = CkksContext::new(preset.params())?;
        let mut rng = Csprng::from_os()?;
        let keygen = KeyGenerator::new(&ctx, &mut rng)?;
        let keys = keygen.generate_all(&[1], false, &mut rng)?;
        let encryptor = CkksEncryptor::with_public_key(&ctx, &keys.public)?;
        let decryptor = CkksDecryptor::new(&ctx, &keys.secret)?;
        let evaluator = Evaluator::new(&ctx)
            .with_relin_key(keys.relin)?
            .with_galois_keys(keys.galois)?;
        let slots = ctx.max_slots();
        // Inputs are not secret: a seeded generator makes runs comparable.
        let mut data = rand::rngs::StdRng::seed_from_u64(1);
        let mut uniform = |_| data.gen_range(-1.0..1.0);
        let x_values: Vec<f64> = (0..slots).map(&mut uniform).collect();
        let y_values: Vec<f64> = (0..slots).map(&mut uniform).collect();
        let c_values: Vec<f64> = (0..slots).map(&mut uniform).collect();
        let x = encryptor.encrypt(&x_values[..], &mut rng)?;
        let y = encryptor.encrypt(&y_values[..], &mut rng)?;
        let c = ctx.encode_real(&c_values, slots, ctx.max_level())?;
        // Levels count limbs: level 1 is the last prime, q_0 (the peers' "level 0").
        let x_l0 = evaluator.drop_to_level(&x, 1)?;
        Ok(Self {
            ctx,
            encryptor,
            decryptor,
            evaluator,
            x_values,
            y_values,
            c_values,
            x,
            x_l0,
            y,
            c,
            rng,
        })
    }

    /// The context.
    pub fn context(&self) -> &Arc<CkksContext> {
        &self.ctx
    }

    /// The evaluator, with the relinearization key and the rotation key of step 1.
    pub fn evaluator(&self) -> &Evaluator {
        &self.evaluator
    }

    /// The two encrypted inputs, at the top level.
    pub fn inputs(&self) -> (&Ciphertext, &Ciphertext) {
        (&self.x, &self.y)
    }

    /// Runs operation `op` once (its result is dropped).
    pub fn run(&mut self, op: &str) -> anyhow::Result<()> {
        match op {
            "keygen" => {
                let kg = KeyGenerator::new(&self.ctx, &mut self.rng)?;
                std::hint::black_box(kg.generate_all(&[1], false, &mut self.rng)?);
            }
            "encode_encrypt" => {
                std::hint::black_box(self.encryptor.encrypt(&self.x_values[..], &mut self.rng)?);
            }
            "decrypt_decode" => {
                std::hint::black_box(self.decryptor.decrypt(&self.x)?);
            }
            "decrypt_decode_l0" => {
                std::hint::black_box(self.decryptor.decrypt(&self.x_l0)?);
            }
            "add" => {
                std::hint::black_box(self.evaluator.add(&self.x, &self.y)?);
            }
            "cmult" => {
                let prod = self.evaluator.multiply_plain(&self.x, &self.c)?;
                std::hint::black_box(self.evaluator.rescale(&prod)?);
            }
            "mult_rs" => {
                std::hint::black_box(self.evaluator.multiply_rescale(&self.x, &self.y)?);
            }
            "rotate" => {
                std::hint::black_box(self.evaluator.rotate(&self.x, 1)?);
            }
            other => bail!("unknown operation {other:?}"),
        }
        Ok(())
    }

    /// Precision (PrecisionStats, real parts) of each operation's result against the plaintext computation.
    pub fn check(&mut self, op: &str) -> anyhow::Result<Option<PrecisionStats>> {
        let slots = self.x_values.len();
        let (ct, expected): (Ciphertext, Vec<f64>) = match op {
            "encode_encrypt" | "decrypt_decode" => (self.x.clone(), self.x_values.clone()),
            "decrypt_decode_l0" => (self.x_l0.clone(), self.x_values.clone()),
            "add" => (
                self.evaluator.add(&self.x, &self.y)?,
                self.x_values
                    .iter()
                    .zip(&self.y_values)
                    .map(|(a, b)| a + b)
                    .collect(),
            ),
            "cmult" => (
                self.evaluator
                    .rescale(&self.evaluator.multiply_plain(&self.x, &self.c)?)?,
                self.x_values
                    .iter()
                    .zip(&self.c_values)
                    .map(|(a, b)| a * b)
                    .collect(),
            ),
            "mult_rs" => (
                self.evaluator.multiply_rescale(&self.x, &self.y)?,
                self.x_values
                    .iter()
                    .zip(&self.y_values)
                    .map(|(a, b)| a * b)
                    .collect(),
            ),
            "rotate" => (
                self.evaluator.rotate(&self.x, 1)?,
                (0..slots).map(|i| self.x_values[(i + 1) % slots]).collect(),
            ),
            _ => return Ok(None),
        };
        let got = self.decryptor.decrypt(&ct)?;
        let expected: Vec<Complex64> = expected
            .into_iter()
            .map(|v| Complex64::new(v, 0.0))
            .collect();
        Ok(Some(PrecisionStats::compare(&expected, &got)?))
    }
}

/// One row of `ckks-table1`.
#[derive(Debug, Clone, Serialize)]
pub struct Table1Row {
    /// Operation name (protocol name).
    pub op: String,
    /// Label in the table.
    pub label: String,
    /// Our timing (microseconds per call).
    pub ours: Timing,
    /// The paper's HEAAN-RNS time in ms, where the paper has the column.
    pub paper_ms: Option<f64>,
    /// Minimum over slots of the bits of precision of the result (real parts), if the op has a result to
    /// check.
    pub min_precision_bits: Option<f64>,
    /// Median over slots of the bits of precision.
    pub median_precision_bits: Option<f64>,
}

/// One preset of `ckks-table1`.
#[derive(Debug, Clone, Serialize)]
pub struct Table1Preset {
    /// Preset name.
    pub preset: String,
    /// Ring degree.
    pub n: usize,
    /// Limbs of Q.
    pub q_limbs: usize,
    /// log2 Q.
    pub log_q: f64,
    /// log2 QP.
    pub log_qp: f64,
    /// Special primes.
    pub p_limbs: usize,
    /// Digit groups of key switching.
    pub dnum: usize,
    /// `log2` of the scale.
    pub log_scale: u32,
    /// Whether every prime of `Q` and `P` is below `2^50` (the NTT's IFMA path).
    pub primes_below_2_50: bool,
    /// The rows.
    pub rows: Vec<Table1Row>,
}

/// The JSON document `ckks-table1.json`.
#[derive(Debug, Clone, Serialize)]
pub struct Table1Report {
    /// Table name.
    pub table: &'static str,
    /// Where and when it ran.
    pub machine: Machine,
    /// Whether this was a `--quick` run.
    pub quick: bool,
    /// Repetition settings.
    pub timing: TimingConfig,
    /// One entry per preset.
    pub presets: Vec<Table1Preset>,
    /// Each fast-prime preset and the 55-bit preset of its `N` and depth, measured interleaved: the
    /// 55-bit preset first.
    pub fast_prime_pairs: Vec<(Table1Preset, Table1Preset)>,
    /// `/proc/loadavg` (1 / 5 / 15 minutes) before and after the measurements.
    pub load_average: [Option<String>; 2],
}

fn measure_preset(preset: Preset, config: &TimingConfig) -> anyhow::Result<Table1Preset> {
    let mut out = measure_interleaved_presets(&[preset], config)?;
    out.pop()
        .ok_or_else(|| anyhow::anyhow!("no measurement of {preset:?}"))
}

/// Measures every operation on each of `presets`, the presets' calls interleaved operation by operation
/// (`measure_interleaved`), so that their ratios see the same load on a shared machine.
fn measure_interleaved_presets(
    presets: &[Preset],
    config: &TimingConfig,
) -> anyhow::Result<Vec<Table1Preset>> {
    let mut benches = presets
        .iter()
        .map(|&p| Table1Bench::new(p))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut rows: Vec<Vec<Table1Row>> = vec![Vec::new(); presets.len()];
    for (op, label) in OPS {
        let stats = benches
            .iter_mut()
            .map(|b| b.check(op))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let mut failed: Vec<Option<anyhow::Error>> = presets.iter().map(|_| None).collect();
        let timings = {
            let mut cases: Vec<Box<dyn FnMut() + '_>> = benches
                .iter_mut()
                .zip(failed.iter_mut())
                .map(|(bench, failed)| {
                    Box::new(move || {
                        if let Err(e) = bench.run(op) {
                            *failed = Some(e);
                        }
                    }) as Box<dyn FnMut()>
                })
                .collect();
            let mut refs: Vec<&mut dyn FnMut()> = cases
                .iter_mut()
                .map(|c| c.as_mut() as &mut dyn FnMut())
                .collect();
            measure_interleaved(config, &mut refs)
        };
        if let Some(e) = failed.into_iter().flatten().next() {
            return Err(e.context(format!("{op} failed while timing")));
        }
        for (i, (&preset, (timing, stats))) in presets
            .iter()
            .zip(timings.into_iter().zip(stats))
            .enumerate()
        {
            rows[i].push(Table1Row {
                op: op.to_string(),
                label: label.to_string(),
                ours: timing,
                paper_ms: paper_ms(preset, op),
                min_precision_bits: stats.as_ref().map(|s| s.real.min),
                median_precision_bits: stats.as_ref().map(|s| s.real.median),
            });
        }
    }
    Ok(presets
        .iter()
        .zip(benches.iter())
        .zip(rows)
        .map(|((&preset, bench), rows)| {
            let ctx = bench.context();
            Table1Preset {
                preset: format!("{preset:?}"),
                n: ctx.n(),
                q_limbs: ctx.q_moduli().len(),
                log_q: ctx.log_q(),
                log_qp: ctx.log_qp(),
                p_limbs: ctx.p_moduli().len(),
                dnum: ctx.params().dnum,
                log_scale: ctx.params().log_scale,
                primes_below_2_50: ctx
                    .q_moduli()
                    .iter()
                    .chain(ctx.p_moduli())
                    .all(|&q| q < 1 << 50),
                rows,
            }
        })
        .collect())
}

/// `min / median` bits of a row, or `-`.
fn precision_cell(r: &Table1Row) -> String {
    match (r.min_precision_bits, r.median_precision_bits) {
        (Some(a), Some(b)) => format!("{a:.1} / {b:.1}"),
        _ => "-".into(),
    }
}

/// The comparison of each fast-prime preset with the 55-bit preset of the same `N` and depth, from their
/// interleaved measurement (`pairs`: the 55-bit preset, then the fast-prime one): one markdown table per
/// pair, operation by operation.
fn fast_prime_comparison(pairs: &[(Table1Preset, Table1Preset)]) -> String {
    let mut text = String::new();
    for (q, f) in pairs {
        text += &format!(
            "### {} against {} (N = {}, depth {}; scale 2^{} against 2^{}; every prime below 2^50: {} / {}; interleaved)\n\n",
            f.preset,
            q.preset,
            f.n,
            f.q_limbs - 1,
            f.log_scale,
            q.log_scale,
            f.primes_below_2_50,
            q.primes_below_2_50
        );
        let rows: Vec<Vec<String>> = f
            .rows
            .iter()
            .zip(&q.rows)
            .map(|(a, b)| {
                vec![
                    a.label.clone(),
                    ms(b.ours.median_us),
                    ms(a.ours.median_us),
                    format!("{:.2}", a.ours.median_us / b.ours.median_us),
                    precision_cell(b),
                    precision_cell(a),
                ]
            })
            .collect();
        text += &markdown_table(
            &[
                "operation",
                &format!("{} (ms)", q.preset),
                &format!("{} (ms)", f.preset),
                "fast / 55-bit",
                "precision 55-bit (bits)",
                "precision fast-prime (bits)",
            ],
            &rows,
        );
        text += "\n";
    }
    text
}

fn ms(us: f64) -> String {
    let v = us / 1000.0;
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// `rnsfhe bench ckks-table1`.
pub fn run_table1(options: &BenchOptions) -> anyhow::Result<()> {
    // Few, slow operations: fewer samples than the micro-benchmarks.
    let config = if options.quick {
        TimingConfig {
            warmup_ms: 0,
            samples: 3,
            min_sample_us: 0,
        }
    } else {
        TimingConfig {
            warmup_ms: 200,
            samples: 15,
            min_sample_us: 0,
        }
    };
    let machine = Machine::detect();
    let presets: &[Preset] = if options.quick {
        &[Preset::PaperTable1L5]
    } else {
        &[
            Preset::PaperTable1L5,
            Preset::PaperTable1L10,
            Preset::PaperTable1L15,
        ]
    };
    let load_start = load_average();
    let mut out = Vec::new();
    for &p in presets {
        eprintln!("measuring {p:?} ...");
        out.push(measure_preset(p, &config)?);
    }
    // Each fast-prime preset interleaved with the 55-bit preset of its N and depth (compared at the end).
    let mut pairs = Vec::new();
    for (fast, paper) in Preset::FAST_PRIME {
        if !presets.contains(&paper) {
            continue;
        }
        eprintln!("measuring {fast:?} interleaved with {paper:?} ...");
        let mut m = measure_interleaved_presets(&[paper, fast], &config)?;
        let (Some(f), Some(q)) = (m.pop(), m.pop()) else {
            bail!("no measurement of {fast:?} and {paper:?}");
        };
        out.push(f.clone());
        pairs.push((q, f));
    }
    let load_end = load_average();
    println!(
        "## RNS-CKKS Table 1{}\n",
        if options.quick { " (--quick)" } else { "" }
    );
    println!("{}", machine.markdown_header());
    println!("{}", load_average_line(&load_start, &load_end));
    println!(
        "- median of {} samples per operation, milliseconds; paper: HEAAN-RNS column of RNS-CKKS Table 1 (Intel Core i5 2.9 GHz, single thread); precision: bits of the result's real parts, min / median over slots\n",
        config.samples
    );
    for p in &out {
        println!(
            "### {} (N = {}, {} primes, log Q = {:.1}, {} special primes, log QP = {:.1}, dnum = {})\n",
            p.preset, p.n, p.q_limbs, p.log_q, p.p_limbs, p.log_qp, p.dnum
        );
        let rows: Vec<Vec<String>> = p
            .rows
            .iter()
            .map(|r| {
                vec![
                    r.label.clone(),
                    ms(r.ours.median_us),
                    r.paper_ms.map_or("-".into(), |v| format!("{v}")),
                    r.paper_ms.map_or("-".into(), |v| {
                        format!("{:.2}", r.ours.median_us / 1000.0 / v)
                    }),
                    precision_cell(r),
                ]
            })
            .collect();
        print!(
            "{}",
            markdown_table(
                &[
                    "operation",
                    "ours (ms)",
                    "paper (ms)",
                    "ours / paper",
                    "precision (bits)"
                ],
                &rows
            )
        );
        println!();
    }
    print!("{}", fast_prime_comparison(&pairs));
    let report = Table1Report {
        table: "ckks-table1",
        machine,
        quick: options.quick,
        timing: config,
        presets: out,
        fast_prime_pairs: pairs,
        load_average: [load_start, load_end],
    };
    let path = write_json(&options.out, "ckks-table1", &report)?;
    println!("JSON: {}", path.display());
    Ok(())
}

/// `rnsfhe bench ckks-op --preset NAME`: the line protocol of `bench/peers/README.md`. Prints a ready line
/// after set-up, then answers `{"op": NAME, "reps": R}` with `{"op": NAME, "seconds": [...]}` until
/// `{"op": "quit"}` or the end of input.
///
/// The whole loop runs inside a rayon pool of [`rayon::current_num_threads`] threads
/// (`RAYON_NUM_THREADS`), as in `bfv-op`: every operation then runs on a worker of the pool, whose
/// parallel sections are forks of that worker instead of jobs injected from outside while the caller
/// sleeps; the Python bindings run each operation on a worker the same way.
pub fn serve(preset_name: &str) -> anyhow::Result<()> {
    super::on_pool_worker(|| serve_in_pool(preset_name))
}

fn serve_in_pool(preset_name: &str) -> anyhow::Result<()> {
    let preset = parse_preset(preset_name)?;
    let mut bench = Table1Bench::new(preset)?;
    let mut check = serde_json::Map::new();
    for (op, _) in OPS {
        if let Some(s) = bench.check(op)? {
            check.insert(op.to_string(), json!(s.real.min));
        }
    }
    let ctx = Arc::clone(bench.context());
    let bits = |ms: &[u64]| {
        ms.iter()
            .map(|&q| (q as f64).log2().round() as u32)
            .collect::<Vec<_>>()
    };
    let ready = json!({
        "ready": true,
        "version": env!("CARGO_PKG_VERSION"),
        "ops": OPS.iter().map(|(o, _)| *o).collect::<Vec<_>>(),
        "params": {
            "log_n": ctx.params().log_n,
            "q_bits": bits(ctx.q_moduli()),
            "p_bits": bits(ctx.p_moduli()),
            "dnum": ctx.params().dnum,
            "log_q": ctx.log_q(),
            "log_qp": ctx.log_qp(),
            "key_switching": format!("hybrid, {:?} basis conversion", ctx.params().conversion),
            "scaling": format!("{:?}", ctx.params().rescaling),
            "secret": format!("{:?}", ctx.params().secret),
        },
        "check": check,
    });
    serve_line_protocol(&ready, |op| bench.run(op))
}
