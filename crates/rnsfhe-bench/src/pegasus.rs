//! `rnsfhe bench pegasus-table5`: the LWE rows of PEGASUS Table V at the Table IV dimensions, single
//! thread: the LWE key switch from the CKKS dimension `N = 2^16` to `n_lwe = 2^10` (Fig. 9), a look-up table
//! by blind rotation at `n = 2^12` (Fig. 2), and the key switch from `n` back to `n_lwe`, beside the paper's
//! figures and those of OpenPEGASUS (the paper's code) measured on this machine. A second LUT row uses a
//! special modulus `q'` below `2^50` (the vector NTT path), which PEGASUS's error formula allows at no
//! precision cost (Appendix C.2: the blind-rotation error scales with `q_0 / q'`). Then the throughput of a
//! batch of LUTs on every thread of the pool against one thread.

use std::sync::Arc;

use anyhow::Context;
use rnsfhe_core::{RlweContext, SecretDistribution, SecretKey};
use rnsfhe_lwe::{
    BlindRotationKey, LookupTable, LutEvaluator, LutParams, LweCiphertext, LweDimension,
    LweKeySwitchParams, LweSecretKey, LweSwitchingKey,
};
use rnsfhe_math::primes::ntt_primes_of_bits;
use rnsfhe_math::sampling::{Csprng, DiscreteGaussian};
use rnsfhe_math::Modulus;
use serde::Serialize;

use super::{markdown_table, measure_interleaved, write_json, BenchOptions, Machine, TimingConfig};

/// The PEGASUS Table IV dimensions (or small ones for `--quick`).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Dimensions {
    /// `log2` of the CKKS ring degree `N` (the dimension of extracted LWE ciphertexts).
    pub log_ckks: u32,
    /// `log2` of the look-up-table ring degree `n`.
    pub log_lut: u32,
    /// The LWE dimension `n_lwe`.
    pub lwe: usize,
}

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
}

/// Everything the table writes to JSON.
#[derive(Debug, Serialize)]
struct Results {
    machine: Machine,
    dimensions: Dimensions,
    rows: Vec<Row>,
    batch: usize,
    batch_threads: usize,
    batch_one_thread_s: f64,
    batch_all_threads_s: f64,
}

/// A 45-bit prime `q_0 = 1 mod 2^17` (Table IV; NTT-friendly for the CKKS ring of degree `2^16` too) and
/// a special prime of `special_bits` bits, both NTT-friendly for the LUT ring.
fn moduli(special_bits: u32) -> anyhow::Result<(u64, u64)> {
    let q0 = ntt_primes_of_bits(45, 1 << 17, 1, &[])?[0];
    let special = ntt_primes_of_bits(special_bits, 1 << 17, 1, &[q0])?[0];
    Ok((q0, special))
}

/// The LUT evaluator and keys for one special modulus.
fn lut_setup(
    dims: Dimensions,
    special_bits: u32,
    lwe_sk: &LweSecretKey,
    rng: &mut Csprng,
) -> anyhow::Result<(Arc<RlweContext>, SecretKey, LutEvaluator)> {
    let (q0, special) = moduli(special_bits)?;
    let ctx = LutParams {
        log_n: dims.log_lut,
        q0,
        special,
        sigma: 1024.0,
        secret: SecretDistribution::HammingWeight(64),
    }
    .context()?;
    let ring_sk = SecretKey::generate(&ctx, rng)?;
    let key = BlindRotationKey::generate(&ctx, &ring_sk, lwe_sk, rng)?;
    Ok((ctx, ring_sk, LutEvaluator::new(key)))
}

/// Runs the table (see the module documentation).
pub fn run_table5(options: &BenchOptions) -> anyhow::Result<()> {
    let dims = if options.quick {
        Dimensions {
            log_ckks: 12,
            log_lut: 10,
            lwe: 128,
        }
    } else {
        Dimensions {
            log_ckks: 16,
            log_lut: 12,
            lwe: 1024,
        }
    };
    let machine = Machine::detect();
    let mut rng = Csprng::from_os()?;
    let h64 = SecretDistribution::HammingWeight(64);
    let lwe_sk = LweSecretKey::generate(LweDimension::new(dims.lwe)?, h64, &mut rng)?;
    let ckks_sk = LweSecretKey::generate(LweDimension::new(1 << dims.log_ckks)?, h64, &mut rng)?;
    let (q0, _) = moduli(60)?;
    let ks = LweKeySwitchParams {
        modulus: q0,
        base_log: 7,
        digits: 7,
        sigma: 8192.0,
    };
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    let (rows, lut) = one.install(|| -> anyhow::Result<_> {
        let ks_big = LweSwitchingKey::generate(&ckks_sk, &lwe_sk, ks, &mut rng)?;
        let (ctx60, ring60, eval60) = lut_setup(dims, 60, &lwe_sk, &mut rng)?;
        let (_, _, eval50) = lut_setup(dims, 50, &lwe_sk, &mut rng)?;
        let lut_sk = LweSecretKey::from_ring_key(&ring60)?;
        let ks_small = LweSwitchingKey::generate(&lut_sk, &lwe_sk, ks, &mut rng)?;
        let modulus = Modulus::new(q0)?;
        let noise = DiscreteGaussian::with_sigma(3.2)?;
        let delta = q0 as f64 / 64.0;
        let ct_big = ckks_sk.encrypt(1 << 40, &modulus, &noise, &mut rng);
        let ct_lwe = lwe_sk.encrypt((1.5 * delta) as i64, &modulus, &noise, &mut rng);
        let ct_lut = lut_sk.encrypt(1 << 40, &modulus, &noise, &mut rng);
        let table = LookupTable::from_fn(&ctx60, delta, delta, |x| 1.0 / (1.0 + (-x).exp()))?;
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
            let mut a = || keep(ks_big.switch(&ct_big).map_err(Into::into));
            let mut b = || keep(eval60.evaluate(&ct_lwe, &table).map_err(Into::into));
            let mut c = || keep(eval50.evaluate(&ct_lwe, &table).map_err(Into::into));
            let mut d = || keep(ks_small.switch(&ct_lut).map_err(Into::into));
            measure_interleaved(&config, &mut [&mut a, &mut b, &mut c, &mut d])
        };
        if let Some(e) = failed.into_inner() {
            return Err(e);
        }
        let ms = |i: usize| timings[i].median_us / 1000.0;
        let rows = vec![
            Row {
                operation: format!("KS N = 2^{} -> n_lwe = {}", dims.log_ckks, dims.lwe),
                ms: ms(0),
                paper_ms: 20.14,
                openpegasus_ms: (78.5, 38.0),
            },
            Row {
                operation: format!("LUT n = 2^{}, q' ~ 2^60 (Table IV)", dims.log_lut),
                ms: ms(1),
                paper_ms: 930.0,
                openpegasus_ms: (1410.0, 900.0),
            },
            Row {
                operation: format!("LUT n = 2^{}, q' < 2^50", dims.log_lut),
                ms: ms(2),
                paper_ms: 930.0,
                openpegasus_ms: (1410.0, 900.0),
            },
            Row {
                operation: format!("KS n = 2^{} -> n_lwe = {}", dims.log_lut, dims.lwe),
                ms: ms(3),
                paper_ms: 1.49,
                openpegasus_ms: (4.4, 2.2),
            },
        ];
        Ok((rows, (eval50, ct_lwe, table)))
    })?;
    let (eval, ct, table) = lut;
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
        "PEGASUS Table V, LWE rows, single thread; dimensions N = 2^{}, n = 2^{}, n_lwe = {} \
         (q_0 ~ 2^45, B_ks = 2^7, d_ks = 7, sigma_ks = 2^13, sigma_lut = 2^10, h = 64){}\n",
        dims.log_ckks,
        dims.log_lut,
        dims.lwe,
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
            ],
            &table_rows
        )
    );
    println!(
        "\nBatch of {batch} LUTs (q' < 2^50): {:.2} s on 1 thread, {:.2} s on {} threads ({:.2}x)",
        batch_one_thread_s,
        batch_all_threads_s,
        all.current_num_threads(),
        batch_one_thread_s / batch_all_threads_s
    );
    let results = Results {
        machine,
        dimensions: dims,
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
