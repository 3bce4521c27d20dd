//! BFV benchmarks (HPS paper, Section 6.3):
//!
//! * `rnsfhe bench bfv-table3` regenerates Table 3: decryption, multiplication without relinearization,
//!   relinearization, and the split of the multiplication time between CRT basis extension, complex
//!   scaling and NTT, single-threaded, for the `t = 2` presets of the table ([`BfvPreset`]) and for
//!   `t = 65537` at the depths of the OpenFHE comparison ([`BfvParams::generate`]`(65537, L)`; there are no
//!   `t = 65537` presets), with the paper's numbers beside ours. Every row with `L <= 30` also evaluates,
//!   once and after its timed rounds, a random circuit of multiplicative depth exactly `L` and checks its
//!   decryption exactly against a plaintext reference ([`BfvBench::circuit`]): in batch encoding where
//!   `t = 1 mod 2N` (the `t = 65537` rows up to `N = 2^15`), in coefficient encoding otherwise (the `t = 2`
//!   rows, and `t = 65537` at `L = 30`, whose `N = 2^16` has `2N = 2^17` not dividing `65536`).
//! * `rnsfhe bench bfv-table4` regenerates Table 4: thread scaling of Dec, Mul, Relin and Mul + Relin at
//!   `L = 20` (`N = 2^14`, `k = 8`), with 1, 2, 4, ... threads up to the logical CPUs of the machine.
//! * `rnsfhe bench bfv-op` serves the BFV operations over the line protocol of `bench/peers/README.md`, so
//!   that `bench/peers/compare_bfv.py` can interleave us with OpenFHE BFV.
//!
//! # The split of the multiplication time
//!
//! [`Evaluator::multiply_no_relin`] has no timing hooks, so the split is measured on a replica
//! ([`MulPhases`]) that runs the evaluator's steps (HPS Section 4.5) one after the other with the public
//! building blocks of `rnsfhe-ring` it uses: exact-float [`BasisConverter`]s `Q -> P` and `P -> Q`, the
//! [`ComplexScaler`], and the NTT of [`Poly::into_ntt`] / [`Poly::into_coeff`]. The replica's result is
//! checked to be equal, word for word, to the evaluator's, and its total time is reported beside the
//! evaluator's so that a difference between the two would show.

use std::cell::RefCell;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use rand::{Rng, SeedableRng};
use rnsfhe_bfv::{
    BatchEncoder, BfvContext, BfvParams, BfvPreset, Ciphertext, CoeffEncoder, Decryptor, Encryptor,
    Evaluator, KeyGenerator, KeySwitchTechnique, Plaintext, RelinKey,
};
use rnsfhe_math::sampling::Csprng;
use rnsfhe_ring::{BasisConverter, Coeff, ComplexScaler, ConversionMode, Ntt, Poly};
use serde::Serialize;
use serde_json::json;

use super::{
    markdown_table, measure_interleaved, median, parse_named, serve_line_protocol, write_json,
    BenchOptions, Machine, Timing, TimingConfig,
};

/// The operations of `bfv-op`, with their labels.
pub const OPS: [(&str, &str); 6] = [
    ("encrypt", "Encode + Encrypt (pk)"),
    ("decrypt", "Decrypt + Decode"),
    ("add", "Add"),
    ("mult", "Mul (no relin)"),
    ("relin", "Relin"),
    ("mult_relin", "Mul + Relin"),
];

/// A row of HPS Table 3 (`t = 2`, single thread, Intel Core i7-3770 at 3.4 GHz).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct PaperTable3Row {
    /// Multiplicative depth `L`.
    pub depth: usize,
    /// `log2 n`.
    pub log_n: u32,
    /// `log2 q` as printed (the nominal `55 k`).
    pub log_q: u32,
    /// Number of ciphertext primes `k`.
    pub k: usize,
    /// Decryption, ms.
    pub dec_ms: f64,
    /// Multiplication without relinearization, ms.
    pub mul_ms: f64,
    /// Relinearization, ms.
    pub relin_ms: f64,
    /// Share of the multiplication time in CRT basis extension, percent.
    pub crt_ext_pct: f64,
    /// Share in (complex) scaling, percent.
    pub scaling_pct: f64,
    /// Share in NTTs, percent.
    pub ntt_pct: f64,
}

/// HPS Table 3.
pub const PAPER_TABLE3: [PaperTable3Row; 7] = [
    paper3(1, 11, 55, 1, 0.15, 3.16, 0.41, 34.0, 8.0, 52.0),
    paper3(5, 12, 110, 2, 0.49, 10.1, 2.58, 29.0, 9.0, 56.0),
    paper3(10, 13, 220, 4, 1.89, 38.9, 18.7, 27.0, 10.0, 56.0),
    paper3(20, 14, 440, 8, 8.3, 174.0, 78.3, 27.0, 14.0, 54.0),
    paper3(30, 15, 605, 11, 25.8, 555.0, 332.0, 27.0, 15.0, 52.0),
    paper3(50, 16, 1045, 19, 95.8, 2368.0, 2066.0, 30.0, 20.0, 46.0),
    paper3(100, 17, 2090, 38, 409.0, 12890.0, 16994.0, 30.0, 20.0, 46.0),
];

#[allow(clippy::too_many_arguments)]
const fn paper3(
    depth: usize,
    log_n: u32,
    log_q: u32,
    k: usize,
    dec_ms: f64,
    mul_ms: f64,
    relin_ms: f64,
    crt_ext_pct: f64,
    scaling_pct: f64,
    ntt_pct: f64,
) -> PaperTable3Row {
    PaperTable3Row {
        depth,
        log_n,
        log_q,
        k,
        dec_ms,
        mul_ms,
        relin_ms,
        crt_ext_pct,
        scaling_pct,
        ntt_pct,
    }
}

/// A row of HPS Table 4 (`L = 20`, `n = 2^14`, `k = 8`; 2 x 16-core Xeon E5-2698 v3 at 2.3 GHz).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct PaperTable4Row {
    /// Threads.
    pub threads: usize,
    /// Decryption, ms.
    pub dec_ms: f64,
    /// Multiplication without relinearization, ms.
    pub mul_ms: f64,
    /// Relinearization, ms.
    pub relin_ms: f64,
    /// Multiplication with relinearization, ms.
    pub mul_relin_ms: f64,
}

const fn paper4(
    threads: usize,
    dec_ms: f64,
    mul_ms: f64,
    relin_ms: f64,
    mul_relin_ms: f64,
) -> PaperTable4Row {
    PaperTable4Row {
        threads,
        dec_ms,
        mul_ms,
        relin_ms,
        mul_relin_ms,
    }
}

/// HPS Table 4.
pub const PAPER_TABLE4: [PaperTable4Row; 12] = [
    paper4(1, 9.83, 178.6, 95.8, 274.4),
    paper4(2, 5.90, 114.1, 53.8, 168.0),
    paper4(3, 4.93, 79.5, 49.6, 129.1),
    paper4(4, 3.92, 66.3, 37.4, 103.7),
    paper4(5, 3.95, 58.7, 38.8, 97.5),
    paper4(6, 4.07, 52.2, 40.2, 92.4),
    paper4(7, 4.01, 49.9, 38.9, 88.8),
    paper4(8, 3.13, 43.3, 29.2, 72.5),
    paper4(9, 3.17, 38.0, 31.4, 69.5),
    paper4(16, 3.37, 34.9, 32.7, 67.6),
    paper4(17, 3.46, 32.0, 33.2, 65.2),
    paper4(32, 3.47, 29.2, 33.1, 62.4),
];

/// Parses a BFV preset name (`T2Depth20`, case-insensitive).
pub fn parse_preset(name: &str) -> anyhow::Result<BfvPreset> {
    parse_named("BFV preset", &BfvPreset::ALL, name)
}

/// How the inputs are encoded: slots when `t` allows batching, coefficients otherwise.
enum Encoding {
    Batch(BatchEncoder),
    Coeff(CoeffEncoder),
}

impl Encoding {
    fn name(&self) -> &'static str {
        match self {
            Encoding::Batch(_) => "batch",
            Encoding::Coeff(_) => "coefficient",
        }
    }

    fn encode(&self, values: &[u64]) -> anyhow::Result<Plaintext> {
        Ok(match self {
            Encoding::Batch(e) => e.encode_u64(values)?,
            Encoding::Coeff(e) => e.encode_u64(values)?,
        })
    }

    fn decode(&self, pt: &Plaintext) -> anyhow::Result<Vec<u64>> {
        Ok(match self {
            Encoding::Batch(e) => e.decode_u64(pt)?,
            Encoding::Coeff(e) => e.decode_u64(pt)?,
        })
    }

    /// Centered values in `(-t/2, t/2]`: what OpenFHE's `Decrypt` and the Python `decrypt` return.
    fn decode_signed(&self, pt: &Plaintext) -> anyhow::Result<Vec<i64>> {
        Ok(match self {
            Encoding::Batch(e) => e.decode_i64(pt)?,
            Encoding::Coeff(e) => e.decode_i64(pt)?,
        })
    }
}

/// Keys, inputs and evaluator of one parameter set, set up once; every operation runs on the same fresh
/// inputs (two ciphertexts of `N` random values mod `t`, and their product before relinearization).
pub struct BfvBench {
    ctx: Arc<BfvContext>,
    encoding: Encoding,
    encryptor: Encryptor,
    decryptor: Decryptor,
    evaluator: Evaluator,
    rk: RelinKey,
    x_values: Vec<u64>,
    y_values: Vec<u64>,
    x: Ciphertext,
    y: Ciphertext,
    /// `x * y` before relinearization (three parts).
    xy: Ciphertext,
    rng: Csprng,
}

impl BfvBench {
    /// Builds the context, the keys (secret, public, relinearization) and the inputs.
    pub fn new(params: BfvParams) -> anyhow::Result<Self> {
        let ctx = BfvContext::new(params)?;
        let mut rng = Csprng::from_os()?;
        let keygen = KeyGenerator::new(&ctx, &mut rng)?;
        let pk = keygen.public_key(&mut rng)?;
        let rk = keygen.relin_key(&mut rng)?;
        let encryptor = Encryptor::with_public_key(&ctx, &pk)?;
        let decryptor = Decryptor::new(&ctx, keygen.secret_key())?;
        let evaluator = Evaluator::new(&ctx);
        let encoding = if ctx.supports_batching() {
            Encoding::Batch(BatchEncoder::new(&ctx)?)
        } else {
            Encoding::Coeff(CoeffEncoder::new(&ctx))
        };
        // Inputs are not secret: a seeded generator makes runs comparable.
        let t = ctx.plaintext_modulus();
        let mut data = rand::rngs::StdRng::seed_from_u64(1);
        let x_values: Vec<u64> = (0..ctx.n()).map(|_| data.gen_range(0..t)).collect();
        let y_values: Vec<u64> = (0..ctx.n()).map(|_| data.gen_range(0..t)).collect();
        let x = encryptor.encrypt(&encoding.encode(&x_values)?, &mut rng)?;
        let y = encryptor.encrypt(&encoding.encode(&y_values)?, &mut rng)?;
        let xy = evaluator.multiply_no_relin(&x, &y)?;
        Ok(Self {
            ctx,
            encoding,
            encryptor,
            decryptor,
            evaluator,
            rk,
            x_values,
            y_values,
            x,
            y,
            xy,
            rng,
        })
    }

    /// The context.
    pub fn context(&self) -> &Arc<BfvContext> {
        &self.ctx
    }

    /// Decrypt + decode of a fresh ciphertext, to centered values as OpenFHE's `Decrypt` and the Python
    /// `decrypt` give them.
    pub fn decrypt(&self) -> anyhow::Result<Vec<i64>> {
        self.encoding
            .decode_signed(&self.decryptor.decrypt(&self.x)?)
    }

    /// Multiplication without relinearization (HPS Section 4.5, steps 1-3).
    pub fn mult(&self) -> anyhow::Result<Ciphertext> {
        Ok(self.evaluator.multiply_no_relin(&self.x, &self.y)?)
    }

    /// Relinearization of the three-part product.
    pub fn relin(&self) -> anyhow::Result<Ciphertext> {
        Ok(self.evaluator.relinearize(&self.xy, &self.rk)?)
    }

    /// Multiplication with relinearization.
    pub fn mult_relin(&self) -> anyhow::Result<Ciphertext> {
        Ok(self.evaluator.multiply(&self.x, &self.y, &self.rk)?)
    }

    /// Runs operation `op` of [`OPS`] once (its result is dropped).
    pub fn run(&mut self, op: &str) -> anyhow::Result<()> {
        match op {
            "encrypt" => {
                let pt = self.encoding.encode(&self.x_values)?;
                std::hint::black_box(self.encryptor.encrypt(&pt, &mut self.rng)?);
            }
            "decrypt" => {
                std::hint::black_box(self.decrypt()?);
            }
            "add" => {
                std::hint::black_box(self.evaluator.add(&self.x, &self.y)?);
            }
            "mult" => {
                std::hint::black_box(self.mult()?);
            }
            "relin" => {
                std::hint::black_box(self.relin()?);
            }
            "mult_relin" => {
                std::hint::black_box(self.mult_relin()?);
            }
            other => bail!(
                "unknown operation {other:?}; known: {}",
                OPS.map(|(o, _)| o).join(", ")
            ),
        }
        Ok(())
    }

    /// Checks the timed operations' results against the plaintext computation: decryption of a fresh
    /// ciphertext, of `x + y`, and of `x * y` after relinearization (exact equality mod `t`; for coefficient
    /// encoding the negacyclic product is compared on every coefficient up to `N = 2^13`, on 512 evenly
    /// spread ones above). Also returns the noise budget left after the multiplication (bits).
    pub fn check(&self) -> anyhow::Result<Check> {
        let t = self.ctx.plaintext_modulus();
        let n = self.ctx.n();
        let fresh = self.decrypt()?;
        let fresh_ok = fresh.len() == self.x_values.len()
            && fresh
                .iter()
                .zip(&self.x_values)
                .all(|(&got, &want)| got.rem_euclid(t as i64) as u64 == want);
        let sum = self.encoding.decode(
            &self
                .decryptor
                .decrypt(&self.evaluator.add(&self.x, &self.y)?)?,
        )?;
        let add_ok = sum
            .iter()
            .zip(self.x_values.iter().zip(&self.y_values))
            .all(|(&s, (&a, &b))| s == (a + b) % t);
        let prod_ct = self.mult_relin()?;
        // A diagnostic only: unavailable for very large Q (the decryption check below is what counts).
        let noise_budget_bits = self.decryptor.noise_budget(&prod_ct).ok();
        let prod = self.encoding.decode(&self.decryptor.decrypt(&prod_ct)?)?;
        let (mult_ok, checked) = match self.encoding {
            Encoding::Batch(_) => (
                prod.iter()
                    .zip(self.x_values.iter().zip(&self.y_values))
                    .all(|(&p, (&a, &b))| {
                        u128::from(p) == u128::from(a) * u128::from(b) % u128::from(t)
                    }),
                n,
            ),
            Encoding::Coeff(_) => {
                let indices: Vec<usize> = if n <= 1 << 13 {
                    (0..n).collect()
                } else {
                    (0..512).map(|i| i * (n / 512) + i % (n / 512)).collect()
                };
                let ok = indices.iter().all(|&j| {
                    prod[j] == negacyclic_coefficient(&self.x_values, &self.y_values, j, t)
                });
                (ok, indices.len())
            }
        };
        // The replica of the phase timing must compute what the evaluator computes.
        let replica = MulPhases::new(&self.ctx)?.multiply(&self.x, &self.y)?.0;
        let replica_ok = replica.as_slice() == self.mult()?.parts();
        Ok(Check {
            encoding: self.encoding.name(),
            fresh_ok,
            add_ok,
            mult_relin_ok: mult_ok,
            checked_values: checked,
            noise_budget_bits,
            replica_ok,
        })
    }
}

impl BfvBench {
    /// Evaluates once a random circuit of multiplicative depth exactly `depth` and checks its decryption
    /// exactly (every slot or coefficient, mod `t`) against the same circuit computed on the plaintexts:
    ///
    /// `acc = Enc(m_0)`; for `i` in `1..=depth`: `acc = relin(acc * Enc(a_i)) + Enc(r_i)`
    /// ([`Evaluator::multiply`], then [`Evaluator::add`]), so that every step consumes one multiplicative
    /// level. `m_0` and the `r_i` are uniformly random plaintexts (dense: `N` random values mod `t`). The
    /// multiplicands `a_i` are uniformly random slot vectors in batch encoding (slot-wise reference, `O(N)`
    /// per step); in coefficient encoding they are random signed monomials `a_i = +-X^{k_i}`, so that the
    /// negacyclic reference product is a signed rotation of the coefficients, `O(N)` per step: **the
    /// multiplicand is a monomial to keep the reference linear-time** (a dense `a_i` would need an
    /// `O(N^2)` reference product, hours at `N = 2^15`); the accumulator and the added `r_i` stay dense.
    ///
    /// All inputs are encrypted with the public key, each just before its step; only the `depth`
    /// multiplications (with relinearization) and additions are timed (one run, not a median), the
    /// encryptions apart. `seed` fixes the plaintext values (the encryption randomness is fresh).
    pub fn circuit(&mut self, depth: usize, seed: u64) -> anyhow::Result<CircuitCheck> {
        let t = self.ctx.plaintext_modulus();
        let n = self.ctx.n();
        let mut data = rand::rngs::StdRng::seed_from_u64(seed);
        let random = |data: &mut rand::rngs::StdRng| -> Vec<u64> {
            (0..n).map(|_| data.gen_range(0..t)).collect()
        };
        let (mut eval, mut encrypt) = (Duration::ZERO, Duration::ZERO);
        let mut expected = random(&mut data);
        let start = Instant::now();
        let mut acc = self
            .encryptor
            .encrypt(&self.encoding.encode(&expected)?, &mut self.rng)?;
        encrypt += start.elapsed();
        for _ in 0..depth {
            let (a_values, product) = match self.encoding {
                Encoding::Batch(_) => {
                    let a = random(&mut data);
                    let product = slotwise_product(&expected, &a, t);
                    (a, product)
                }
                Encoding::Coeff(_) => {
                    let k = data.gen_range(0..n);
                    let negative = data.gen_bool(0.5);
                    let mut a = vec![0u64; n];
                    a[k] = if negative { t - 1 } else { 1 };
                    (a, monomial_product(&expected, k, negative, t))
                }
            };
            let r_values = random(&mut data);
            let t0 = Instant::now();
            let a = self
                .encryptor
                .encrypt(&self.encoding.encode(&a_values)?, &mut self.rng)?;
            let r = self
                .encryptor
                .encrypt(&self.encoding.encode(&r_values)?, &mut self.rng)?;
            let t1 = Instant::now();
            acc = self.evaluator.multiply(&acc, &a, &self.rk)?;
            acc = self.evaluator.add(&acc, &r)?;
            let t2 = Instant::now();
            encrypt += t1 - t0;
            eval += t2 - t1;
            expected = product
                .iter()
                .zip(&r_values)
                .map(|(&p, &r)| ((u128::from(p) + u128::from(r)) % u128::from(t)) as u64)
                .collect();
        }
        // A diagnostic only (unavailable for very large Q; never for L <= 30): the comparison is the check.
        let noise_budget_bits = self.decryptor.noise_budget(&acc).ok();
        let got = self.encoding.decode(&self.decryptor.decrypt(&acc)?)?;
        let mismatches = got.iter().zip(&expected).filter(|(g, e)| g != e).count()
            + got.len().abs_diff(expected.len());
        Ok(CircuitCheck {
            depth,
            encoding: self.encoding.name(),
            multiplicands: match self.encoding {
                Encoding::Batch(_) => "dense random slot vectors",
                Encoding::Coeff(_) => "random signed monomials +-X^k (linear-time reference)",
            },
            exact: mismatches == 0,
            checked_values: expected.len(),
            mismatches,
            noise_budget_bits,
            eval_seconds: eval.as_secs_f64(),
            encrypt_seconds: encrypt.as_secs_f64(),
        })
    }
}

/// Slot-wise product `x y mod t`.
fn slotwise_product(x: &[u64], y: &[u64], t: u64) -> Vec<u64> {
    x.iter()
        .zip(y)
        .map(|(&a, &b)| (u128::from(a) * u128::from(b) % u128::from(t)) as u64)
        .collect()
}

/// `x * (+-X^k) mod (X^N + 1, t)`: the coefficients rotated up by `k`, those that wrap around negated, all
/// negated once more for `-X^k`.
fn monomial_product(x: &[u64], k: usize, negative: bool, t: u64) -> Vec<u64> {
    let n = x.len();
    let neg = |v: u64| if v == 0 { 0 } else { t - v };
    let mut out = vec![0u64; n];
    for (i, &v) in x.iter().enumerate() {
        let (j, wraps) = if i + k < n {
            (i + k, false)
        } else {
            (i + k - n, true)
        };
        out[j] = if wraps != negative { neg(v) } else { v };
    }
    out
}

/// The outcome of [`BfvBench::circuit`]: a random circuit of multiplicative depth `depth`, evaluated once.
#[derive(Debug, Clone, Serialize)]
pub struct CircuitCheck {
    /// Multiplicative depth of the circuit (the parameters' `L`): `depth` multiplications in sequence.
    pub depth: usize,
    /// `batch` or `coefficient`.
    pub encoding: &'static str,
    /// What the multiplicands `a_i` are (`m_0` and the added `r_i` are dense random plaintexts).
    pub multiplicands: &'static str,
    /// The decryption equals the plaintext reference on every slot or coefficient.
    pub exact: bool,
    /// Slots or coefficients compared (all `N`).
    pub checked_values: usize,
    /// Slots or coefficients that differ from the reference.
    pub mismatches: usize,
    /// Noise budget left in the circuit's result (bits; diagnostic, [`Decryptor::noise_budget`]).
    pub noise_budget_bits: Option<f64>,
    /// The `depth` Mul + Relin + Add of the circuit, seconds (one run).
    pub eval_seconds: f64,
    /// Encrypting the `2 depth + 1` inputs, seconds (not part of `eval_seconds`).
    pub encrypt_seconds: f64,
}

/// Coefficient `j` of the negacyclic product `x y mod (X^N + 1, t)`.
fn negacyclic_coefficient(x: &[u64], y: &[u64], j: usize, t: u64) -> u64 {
    let n = x.len();
    let (mut pos, mut neg) = (0u128, 0u128);
    for (i, &xi) in x.iter().enumerate() {
        if i <= j {
            pos += u128::from(xi) * u128::from(y[j - i]);
        } else {
            neg += u128::from(xi) * u128::from(y[n + j - i]);
        }
    }
    let t = u128::from(t);
    ((pos % t + t - neg % t) % t) as u64
}

/// The outcome of [`BfvBench::check`].
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// `batch` or `coefficient`.
    pub encoding: &'static str,
    /// A fresh ciphertext decrypts to its input.
    pub fresh_ok: bool,
    /// `x + y` decrypts to the sum mod `t`.
    pub add_ok: bool,
    /// `x * y` (relinearized) decrypts to the product mod `t`.
    pub mult_relin_ok: bool,
    /// Number of slots or coefficients compared for the product.
    pub checked_values: usize,
    /// Noise budget left after one multiplication (diagnostic; `None` where `rnsfhe-bfv` cannot compute it,
    /// `log2 Q > 2000`).
    pub noise_budget_bits: Option<f64>,
    /// The phase-timing replica computes exactly [`Evaluator::multiply_no_relin`].
    pub replica_ok: bool,
}

impl Check {
    /// The timed operations compute the right results (the replica is checked apart: a difference there
    /// invalidates the split of the Mul time, not the timings).
    fn all_ok(&self) -> bool {
        self.fresh_ok && self.add_ok && self.mult_relin_ok
    }
}

/// Seconds spent in each phase of one multiplication without relinearization.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct PhaseTimes {
    /// CRT basis extensions `Q -> P` (four inputs) and `P -> Q` (three outputs).
    pub crt_ext: f64,
    /// Complex scaling `[round(t/Q x)]_P` (three outputs).
    pub scaling: f64,
    /// Forward NTTs of the four inputs over `Q` and `P`, inverse NTTs of the three products.
    pub ntt: f64,
    /// The rest: tensor product (pointwise products in NTT form) and copies.
    pub other: f64,
    /// The whole multiplication.
    pub total: f64,
}

/// A replica of [`Evaluator::multiply_no_relin`] (HPS Section 4.5, steps 1-3) run step by step with a
/// clock around each step, built from the same public `rnsfhe-ring` blocks the evaluator uses.
pub struct MulPhases {
    q_to_p: BasisConverter,
    p_to_q: BasisConverter,
    scaler: ComplexScaler,
}

impl MulPhases {
    /// The converters and the scaler of `ctx`'s bases, built as [`BfvContext::new`] builds them.
    pub fn new(ctx: &BfvContext) -> anyhow::Result<Self> {
        let (q, p) = (ctx.q_basis(), ctx.p_basis());
        Ok(Self {
            q_to_p: BasisConverter::new(q, p, ConversionMode::ExactFloat)?,
            p_to_q: BasisConverter::new(p, q, ConversionMode::ExactFloat)?,
            scaler: ComplexScaler::new(q, p, ctx.plaintext_modulus())?,
        })
    }

    /// `x * y` without relinearization, and the time of each phase.
    pub fn multiply(
        &self,
        x: &Ciphertext,
        y: &Ciphertext,
    ) -> anyhow::Result<(Vec<Poly<Coeff>>, PhaseTimes)> {
        let start = Instant::now();
        let (mut crt, mut scaling, mut ntt) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
        let inputs: Vec<&Poly<Coeff>> = x.parts().iter().chain(y.parts()).collect();
        if inputs.len() != 4 {
            bail!("multiplication needs two ciphertexts of two parts");
        }
        // 1. Basis extension Q -> P, and both parts to NTT form.
        let mut ext: Vec<(Poly<Ntt>, Poly<Ntt>)> = Vec::with_capacity(4);
        for c in inputs {
            let t0 = Instant::now();
            let over_p = self.q_to_p.convert(c)?;
            let t1 = Instant::now();
            let over_q = c.clone();
            let t2 = Instant::now();
            let pair = (over_q.into_ntt(), over_p.into_ntt());
            let t3 = Instant::now();
            crt += t1 - t0;
            ntt += t3 - t2;
            ext.push(pair);
        }
        // 2. Tensor product in R_QP (pointwise).
        let tensor = |x: &Poly<Ntt>, y: &Poly<Ntt>, u: &Poly<Ntt>, v: &Poly<Ntt>| {
            let d0 = x.mul(y)?;
            let mut d1 = x.mul(v)?;
            d1.mul_add_assign(u, y)?;
            let d2 = u.mul(v)?;
            Ok::<_, anyhow::Error>([d0, d1, d2])
        };
        let (a0, a1, b0, b1) = (&ext[0], &ext[1], &ext[2], &ext[3]);
        let dq = tensor(&a0.0, &b0.0, &a1.0, &b1.0)?;
        let dp = tensor(&a0.1, &b0.1, &a1.1, &b1.1)?;
        // 3. Inverse NTT, complex scaling to P, basis extension P -> Q.
        let mut parts = Vec::with_capacity(3);
        for (xq, xp) in dq.into_iter().zip(dp) {
            let t0 = Instant::now();
            let (xq, xp) = (xq.into_coeff(), xp.into_coeff());
            let t1 = Instant::now();
            let yp = self.scaler.scale_parts(&xq, &xp)?;
            let t2 = Instant::now();
            let yq = self.p_to_q.convert(&yp)?;
            let t3 = Instant::now();
            ntt += t1 - t0;
            scaling += t2 - t1;
            crt += t3 - t2;
            parts.push(yq);
        }
        let total = start.elapsed();
        let secs = Duration::as_secs_f64;
        let times = PhaseTimes {
            crt_ext: secs(&crt),
            scaling: secs(&scaling),
            ntt: secs(&ntt),
            other: secs(&total.saturating_sub(crt + scaling + ntt)),
            total: secs(&total),
        };
        Ok((parts, times))
    }
}

/// A parameter set of `bfv-table3`.
#[derive(Debug, Clone)]
struct RowSpec {
    preset: Option<BfvPreset>,
    t: u64,
    depth: usize,
}

impl RowSpec {
    fn name(&self) -> String {
        match self.preset {
            Some(p) => format!("{p:?}"),
            None => format!("generate({}, {})", self.t, self.depth),
        }
    }

    fn params(&self) -> anyhow::Result<BfvParams> {
        Ok(match self.preset {
            Some(p) => p.params()?,
            None => BfvParams::generate(self.t, self.depth)?,
        })
    }

    fn paper(&self) -> Option<PaperTable3Row> {
        if self.t != 2 {
            return None;
        }
        PAPER_TABLE3.into_iter().find(|r| r.depth == self.depth)
    }
}

/// Sizes of a parameter set, as reported in the tables.
#[derive(Debug, Clone, Serialize)]
pub struct ParamSummary {
    /// Preset name or `generate(t, L)`.
    pub name: String,
    /// Plaintext modulus.
    pub t: u64,
    /// Multiplicative depth the parameters were generated for.
    pub depth: usize,
    /// `log2 N`.
    pub log_n: u32,
    /// Ciphertext primes `k`.
    pub k: usize,
    /// Bit sizes of the ciphertext primes.
    pub q_bits: Vec<u32>,
    /// `log2 Q`.
    pub log_q: f64,
    /// Auxiliary primes `k'`.
    pub k_p: usize,
    /// Bit sizes of the auxiliary primes.
    pub p_bits: Vec<u32>,
    /// `log2 P`.
    pub log_p: f64,
    /// `log2 w` of the relinearization digits, `None` for the plain CRT decomposition.
    pub relin_digit_bits: Option<u32>,
    /// Relinearization key components (residues x digits).
    pub relin_components: usize,
}

fn bits(moduli: &[u64]) -> Vec<u32> {
    moduli.iter().map(|&m| 64 - m.leading_zeros()).collect()
}

/// Number of relinearization key components and the key's size in bytes, before building anything.
fn relin_key_size(params: &BfvParams) -> (usize, f64) {
    let k = params.q_moduli.len();
    let max_bits = params
        .q_moduli
        .iter()
        .map(|&q| 64 - q.leading_zeros())
        .max()
        .unwrap_or(1);
    let digits = params
        .relin_base_log
        .map_or(1, |w| max_bits.div_ceil(w.max(1)) as usize);
    let components = k * digits;
    let bytes = (components * 2 * k * params.n() * 8) as f64;
    (components, bytes)
}

fn summarize(name: String, depth: usize, ctx: &BfvContext) -> ParamSummary {
    let p = ctx.params();
    ParamSummary {
        name,
        t: ctx.plaintext_modulus(),
        depth,
        log_n: p.log_n,
        k: p.q_moduli.len(),
        q_bits: bits(&p.q_moduli),
        log_q: ctx.log_q(),
        k_p: p.p_moduli.len(),
        p_bits: bits(&p.p_moduli),
        log_p: ctx.log_p(),
        relin_digit_bits: p.relin_base_log,
        relin_components: ctx.relin_components(),
    }
}

/// One measured row of `bfv-table3`.
#[derive(Debug, Clone, Serialize)]
pub struct Table3Row {
    /// The parameters.
    pub params: ParamSummary,
    /// Decrypt (+ decode of the coefficients).
    pub dec: Timing,
    /// Multiplication without relinearization ([`Evaluator::multiply_no_relin`]).
    pub mul: Timing,
    /// Relinearization ([`Evaluator::relinearize`]).
    pub relin: Timing,
    /// The phase-timing replica of the multiplication (total).
    pub mul_replica: Timing,
    /// Median over the samples of each phase of the replica, in microseconds.
    pub phases_median_us: PhaseTimes,
    /// Shares of the phases (of the sum of the phases' medians), percent.
    pub phases_pct: PhaseTimes,
    /// Correctness of the timed operations.
    pub check: Check,
    /// The full-depth random circuit ([`BfvBench::circuit`]), run once after the timed rounds; `None` for
    /// `L > 30` ([`CIRCUIT_MAX_DEPTH`]) or when it stopped with an error (`circuit_error`).
    pub circuit: Option<CircuitCheck>,
    /// The error that stopped the circuit, if any (the row then counts as failed).
    pub circuit_error: Option<String>,
    /// The paper's row (`t = 2` only).
    pub paper: Option<PaperTable3Row>,
}

impl Table3Row {
    /// The circuit was due (`L <= 30`) and did not decrypt exactly, or stopped with an error.
    fn circuit_failed(&self) -> bool {
        self.circuit_error.is_some() || self.circuit.as_ref().is_some_and(|c| !c.exact)
    }
}

/// A row not measured, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    /// Preset name or `generate(t, L)`.
    pub name: String,
    /// Why.
    pub reason: String,
}

/// What the JSON document of each BFV table starts with.
#[derive(Debug, Clone, Serialize)]
pub struct RunInfo {
    /// Table name.
    pub table: &'static str,
    /// Where and when it ran.
    pub machine: Machine,
    /// Whether this was a `--quick` run.
    pub quick: bool,
    /// Load averages (1, 5, 15 min) at the start and at the end of the run.
    pub load_average: [Option<String>; 2],
}

impl RunInfo {
    /// Describes the machine and notes its load at the start of a run.
    fn start(table: &'static str, options: &BenchOptions) -> Self {
        Self {
            table,
            machine: Machine::detect(),
            quick: options.quick,
            load_average: [load_average(), None],
        }
    }

    /// Notes the load at the end of the run and prints the heading `## title` with the machine's lines.
    fn finish(&mut self, title: &str) {
        self.load_average[1] = load_average();
        println!("## {title}{}\n", if self.quick { " (--quick)" } else { "" });
        println!("{}", self.machine.markdown_header());
        let show = |l: &Option<String>| l.clone().unwrap_or_else(|| "unknown".to_string());
        println!(
            "- load average (1 / 5 / 15 min; other work on the machine): {} at the start, {} at the end",
            show(&self.load_average[0]),
            show(&self.load_average[1])
        );
    }

    /// Writes `report` (which starts with this) to `<out>/<table>.json` and prints where.
    fn write(&self, options: &BenchOptions, report: &impl Serialize) -> anyhow::Result<()> {
        let path = write_json(&options.out, self.table, report)?;
        println!("JSON: {}", path.display());
        Ok(())
    }
}

/// The JSON document `bfv-table3.json`.
#[derive(Debug, Clone, Serialize)]
pub struct Table3Report {
    /// Table, machine (threads: 1, the paper's single-threaded mode), `--quick`, load.
    #[serde(flatten)]
    pub run: RunInfo,
    /// Limit on the estimated relinearization key size, bytes.
    pub max_key_bytes: f64,
    /// Limit on a single multiplication, seconds.
    pub max_mul_seconds: f64,
    /// The measured rows.
    pub rows: Vec<Table3Row>,
    /// The rows left out.
    pub skipped: Vec<Skipped>,
}

/// The load averages of `/proc/loadavg` (1, 5, 15 minutes): how busy the machine was with other work.
fn load_average() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let fields: Vec<&str> = text.split_whitespace().take(3).collect();
    (fields.len() == 3).then(|| fields.join(" "))
}

/// Rows whose relinearization key would exceed this are skipped (8 GiB).
const MAX_KEY_BYTES: f64 = 8.0 * 1024.0 * 1024.0 * 1024.0;
/// Rows whose first multiplication takes longer than this are skipped.
const MAX_MUL_SECONDS: f64 = 30.0;
/// Rows up to this depth also run the full-depth random circuit (the exactness criterion covers the
/// presets up to `L = 30`).
pub const CIRCUIT_MAX_DEPTH: usize = 30;
/// Target time of the measured rounds of one row in a full run.
const ROW_BUDGET_SECONDS: f64 = 40.0;
/// The same for `--quick`.
const QUICK_ROW_BUDGET_SECONDS: f64 = 1.0;

/// Microseconds as milliseconds with three significant digits (no decimals from 100 ms up, three below 1 ms).
fn ms(us: f64) -> String {
    let v = us / 1000.0;
    let decimals = (2.0 - v.log10().floor()).clamp(0.0, 3.0) as usize;
    format!("{v:.decimals$}")
}

fn pct(v: f64) -> String {
    format!("{v:.0}")
}

/// For each column, our value formatted by `fmt` and the paper's beside it as printed there (`-` without a
/// paper row).
fn ours_and_paper<P, const N: usize>(
    ours: [f64; N],
    fmt: fn(f64) -> String,
    paper: Option<&P>,
    columns: [fn(&P) -> f64; N],
) -> Vec<String> {
    ours.into_iter()
        .zip(columns)
        .flat_map(|(v, f)| [fmt(v), paper.map_or("-".to_string(), |p| f(p).to_string())])
        .collect()
}

/// Runs `cases` interleaved and turns the first error any of them reported into an error.
fn measure_checked(
    config: &TimingConfig,
    cases: &mut [&mut dyn FnMut()],
    failed: &Mutex<Option<anyhow::Error>>,
) -> anyhow::Result<Vec<Timing>> {
    let timings = measure_interleaved(config, cases);
    match failed.lock().ok().and_then(|mut f| f.take()) {
        Some(e) => Err(e.context("an operation failed while timing")),
        None => Ok(timings),
    }
}

fn record<T>(failed: &Mutex<Option<anyhow::Error>>, result: anyhow::Result<T>) {
    if let Err(e) = result {
        if let Ok(mut f) = failed.lock() {
            f.get_or_insert(e);
        }
    }
}

fn measure_row(spec: &RowSpec, quick: bool) -> anyhow::Result<Result<Table3Row, Skipped>> {
    let name = spec.name();
    let params = spec.params()?;
    let (components, key_bytes) = relin_key_size(&params);
    if key_bytes > MAX_KEY_BYTES {
        return Ok(Err(Skipped {
            name,
            reason: format!(
                "the relinearization key alone would take {:.1} GiB ({components} components x 2 x {} \
                 primes x N = 2^{}), over the {:.0} GiB limit",
                key_bytes / 2f64.powi(30),
                params.q_moduli.len(),
                params.log_n,
                MAX_KEY_BYTES / 2f64.powi(30)
            ),
        }));
    }
    eprintln!(
        "bfv-table3: {name}: N = 2^{}, k = {}, setting up ...",
        params.log_n,
        params.q_moduli.len()
    );
    let mut bench = BfvBench::new(params)?;
    let summary = summarize(name.clone(), spec.depth, bench.context());
    // One probe multiplication decides whether the row fits and how many rounds it gets.
    let probe = Instant::now();
    std::hint::black_box(bench.mult()?);
    let probe = probe.elapsed().as_secs_f64();
    if probe > MAX_MUL_SECONDS {
        return Ok(Err(Skipped {
            name,
            reason: format!(
                "one multiplication took {probe:.1} s, over the {MAX_MUL_SECONDS:.0} s limit"
            ),
        }));
    }
    let check = bench.check()?;
    if !check.all_ok() {
        bail!("{name}: the timed operations compute wrong results: {check:?}");
    }
    if !check.replica_ok {
        eprintln!(
            "bfv-table3: {name}: WARNING: the phase replica's result differs from \
             Evaluator::multiply_no_relin (has the evaluator changed?); the split is not valid"
        );
    }
    let phases = MulPhases::new(bench.context())?;
    // A round runs Dec, Mul, Relin and the replica (about Mul): about 2.5 multiplications.
    let (budget, max_samples) = if quick {
        (QUICK_ROW_BUDGET_SECONDS, 11)
    } else {
        (ROW_BUDGET_SECONDS, 31)
    };
    let samples = ((budget / (2.5 * probe)) as usize).clamp(3, max_samples);
    let config = TimingConfig {
        warmup_ms: if quick { 0 } else { 200 },
        samples,
        min_sample_us: 0,
    };
    let failed = Mutex::new(None);
    let recorded: RefCell<Vec<PhaseTimes>> = RefCell::new(Vec::new());
    let mut dec = || record(&failed, bench.decrypt());
    let mut mul = || record(&failed, bench.mult());
    let mut relin = || record(&failed, bench.relin());
    let mut replica = || match phases.multiply(&bench.x, &bench.y) {
        Ok((parts, times)) => {
            drop(parts);
            recorded.borrow_mut().push(times);
        }
        Err(e) => record::<()>(&failed, Err(e)),
    };
    eprintln!("bfv-table3: {name}: one Mul {probe:.3} s, {samples} rounds");
    let t = measure_checked(
        &config,
        &mut [&mut dec, &mut mul, &mut relin, &mut replica],
        &failed,
    )?;
    // The replica's last `samples` calls are the measured ones (before them: calibration and warm-up).
    let recorded = recorded.into_inner();
    let measured = &recorded[recorded.len().saturating_sub(samples)..];
    let med = |f: fn(&PhaseTimes) -> f64| median(&measured.iter().map(f).collect::<Vec<_>>());
    let phases_median_us = PhaseTimes {
        crt_ext: med(|p| p.crt_ext) * 1e6,
        scaling: med(|p| p.scaling) * 1e6,
        ntt: med(|p| p.ntt) * 1e6,
        other: med(|p| p.other) * 1e6,
        total: med(|p| p.total) * 1e6,
    };
    // Shares of the sum of the four medians, so that they add up to 100 (the medians of the phases need not
    // add up to the median total).
    let sum = phases_median_us.crt_ext
        + phases_median_us.scaling
        + phases_median_us.ntt
        + phases_median_us.other;
    let share = |v: f64| 100.0 * v / sum;
    let phases_pct = PhaseTimes {
        crt_ext: share(phases_median_us.crt_ext),
        scaling: share(phases_median_us.scaling),
        ntt: share(phases_median_us.ntt),
        other: share(phases_median_us.other),
        total: 100.0,
    };
    // The circuit runs once, after (and apart from) the timed rounds.
    let (circuit, circuit_error) = if spec.depth <= CIRCUIT_MAX_DEPTH {
        eprintln!(
            "bfv-table3: {name}: random circuit of depth {} ...",
            spec.depth
        );
        let seed = 0xC1C0_0000 ^ (spec.t << 8) ^ spec.depth as u64;
        match bench.circuit(spec.depth, seed) {
            Ok(c) => {
                eprintln!(
                    "bfv-table3: {name}: circuit {} ({} / {} values differ), {:.1} bits left, {:.3} s",
                    if c.exact { "exact" } else { "WRONG" },
                    c.mismatches,
                    c.checked_values,
                    c.noise_budget_bits.unwrap_or(f64::NAN),
                    c.eval_seconds
                );
                (Some(c), None)
            }
            Err(e) => {
                eprintln!("bfv-table3: {name}: circuit FAILED: {e:#}");
                (None, Some(format!("{e:#}")))
            }
        }
    } else {
        (None, None)
    };
    Ok(Ok(Table3Row {
        params: summary,
        dec: t[0],
        mul: t[1],
        relin: t[2],
        mul_replica: t[3],
        phases_median_us,
        phases_pct,
        check,
        circuit,
        circuit_error,
        paper: spec.paper(),
    }))
}

/// `rnsfhe bench bfv-table3`.
pub fn run_table3(options: &BenchOptions) -> anyhow::Result<()> {
    // The paper's Table 3 is single-threaded: everything runs in a one-thread pool.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .context("cannot build a one-thread pool")?;
    pool.install(|| table3(options))
}

fn table3(options: &BenchOptions) -> anyhow::Result<()> {
    let mut run = RunInfo::start("bfv-table3", options);
    let t2 = BfvPreset::ALL.into_iter().map(|p| RowSpec {
        preset: Some(p),
        t: p.plaintext_modulus(),
        depth: p.depth(),
    });
    let t65537 = [1usize, 5, 10, 20, 30].into_iter().map(|depth| RowSpec {
        preset: None,
        t: 65537,
        depth,
    });
    let mut specs: Vec<RowSpec> = t2.chain(t65537).collect();
    let mut skipped = Vec::new();
    if options.quick {
        specs.retain(|s| s.depth <= 5 && (s.t == 2 || s.depth == 1));
        skipped.push(Skipped {
            name: "every row with L > 5 (t = 2) or L > 1 (t = 65537)".into(),
            reason: "--quick".into(),
        });
    }
    let mut rows = Vec::new();
    // A row that fails is reported with the others (and makes the command fail at the end), so that one
    // row does not lose the measurements of the rest.
    let mut failures = 0usize;
    for spec in &specs {
        let outcome = measure_row(spec, options.quick).unwrap_or_else(|e| {
            failures += 1;
            Err(Skipped {
                name: spec.name(),
                reason: format!("FAILED: {e:#}"),
            })
        });
        match outcome {
            Ok(row) => rows.push(row),
            Err(skip) => {
                eprintln!("bfv-table3: {}: not measured: {}", skip.name, skip.reason);
                skipped.push(skip);
            }
        }
    }

    run.finish("BFV (HPS) Table 3");
    println!(
        "- single thread (a one-thread rayon pool), like the paper's Table 3; times: median over the rounds \
         (Dec, Mul, Relin and the phase replica interleaved), milliseconds\n\
         - paper: HPS Table 3 (PALISADE 1.1, Intel Core i7-3770 at 3.4 GHz, t = 2); the t = 65537 rows have no \
         paper numbers (BfvParams::generate(65537, L); the depths of the OpenFHE comparison)\n\
         - Dec = decrypt + decode; Mul = Evaluator::multiply_no_relin; Relin = Evaluator::relinearize of its \
         result\n"
    );
    let header = [
        "L",
        "t",
        "N",
        "log q (k, k')",
        "relin digits",
        "Dec ours",
        "Dec paper",
        "Mul ours",
        "Mul paper",
        "Relin ours",
        "Relin paper",
        "noise budget left",
    ];
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let p = &r.params;
            let mut cells = vec![
                p.depth.to_string(),
                p.t.to_string(),
                format!("2^{}", p.log_n),
                format!("{:.0} ({}, {})", p.log_q, p.k, p.k_p),
                p.relin_digit_bits
                    .map_or("CRT".to_string(), |w| format!("2^{w}")),
            ];
            cells.extend(ours_and_paper(
                [r.dec.median_us, r.mul.median_us, r.relin.median_us],
                ms,
                r.paper.as_ref(),
                [|x| x.dec_ms, |x| x.mul_ms, |x| x.relin_ms],
            ));
            cells.push(
                r.check
                    .noise_budget_bits
                    .map_or("n/a".to_string(), |b| format!("{b:.0} bits")),
            );
            cells
        })
        .collect();
    print!("{}", markdown_table(&header, &table));
    println!(
        "\n### Split of the Mul time (percent)\n\n\
         Measured on a replica of Evaluator::multiply_no_relin run step by step with the same rnsfhe-ring \
         blocks (exact-float BasisConverter Q -> P and P -> Q, ComplexScaler, Poly NTTs); its result equals \
         the evaluator's word for word, and its total is shown beside the evaluator's Mul. CRT ext. = the \
         four extensions Q -> P and the three P -> Q; NTT = 8 forward and 6 inverse transforms over Q and P; \
         other = tensor product (pointwise) and copies.\n"
    );
    let header = [
        "L",
        "t",
        "Mul (ms)",
        "replica (ms)",
        "CRT ext. ours",
        "paper",
        "Scaling ours",
        "paper",
        "NTT ours",
        "paper",
        "other ours",
    ];
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut cells = vec![
                r.params.depth.to_string(),
                r.params.t.to_string(),
                ms(r.mul.median_us),
                if r.check.replica_ok {
                    ms(r.mul_replica.median_us)
                } else {
                    format!(
                        "{} (DIFFERS from the evaluator: split invalid)",
                        ms(r.mul_replica.median_us)
                    )
                },
            ];
            let share = &r.phases_pct;
            cells.extend(ours_and_paper(
                [share.crt_ext, share.scaling, share.ntt],
                pct,
                r.paper.as_ref(),
                [|x| x.crt_ext_pct, |x| x.scaling_pct, |x| x.ntt_pct],
            ));
            cells.push(pct(share.other));
            cells
        })
        .collect();
    print!("{}", markdown_table(&header, &table));
    println!(
        "\n### Full-depth random circuits (L <= {CIRCUIT_MAX_DEPTH})\n\n\
         acc = Enc(m_0); for i in 1..=L: acc = relin(acc * Enc(a_i)) + Enc(r_i): depth exactly L, run once \
         after the timed rounds; m_0 and r_i dense random plaintexts; a_i random slot vectors in batch \
         encoding (t = 1 mod 2N) or random signed monomials +-X^k in coefficient encoding (t = 2, and t = \
         65537 at N = 2^16; a monomial keeps the reference linear-time). Exact = the decryption equals the plaintext reference mod t on all N values; time = \
         the L Mul + Relin + Add (one run, encryptions apart).\n"
    );
    let header = [
        "L",
        "t",
        "N",
        "encoding",
        "circuit depth",
        "exact",
        "noise budget left",
        "circuit time (ms)",
        "per level (ms)",
    ];
    let table: Vec<Vec<String>> = rows
        .iter()
        .filter(|r| r.circuit.is_some() || r.circuit_error.is_some())
        .map(|r| {
            let p = &r.params;
            let mut cells = vec![
                p.depth.to_string(),
                p.t.to_string(),
                format!("2^{}", p.log_n),
            ];
            match (&r.circuit, &r.circuit_error) {
                (Some(c), _) => cells.extend([
                    c.encoding.to_string(),
                    c.depth.to_string(),
                    if c.exact {
                        format!("yes ({} values)", c.checked_values)
                    } else {
                        format!(
                            "NO ({} of {} values differ)",
                            c.mismatches, c.checked_values
                        )
                    },
                    c.noise_budget_bits
                        .map_or("n/a".to_string(), |b| format!("{b:.0} bits")),
                    ms(c.eval_seconds * 1e6),
                    ms(c.eval_seconds * 1e6 / c.depth.max(1) as f64),
                ]),
                (None, e) => cells.extend([
                    "-".to_string(),
                    p.depth.to_string(),
                    format!(
                        "FAILED: {}",
                        e.as_deref().unwrap_or("no result").replace('|', "/")
                    ),
                    "-".to_string(),
                    "-".to_string(),
                    "-".to_string(),
                ]),
            }
            cells
        })
        .collect();
    print!("{}", markdown_table(&header, &table));
    let circuit_failures: Vec<String> = rows
        .iter()
        .filter(|r| r.circuit_failed())
        .map(|r| r.params.name.clone())
        .collect();
    if !circuit_failures.is_empty() {
        println!("\nCircuit check FAILED:\n");
        for name in &circuit_failures {
            println!("- {name}");
        }
    }
    if !skipped.is_empty() {
        println!("\nNot measured:\n");
        for s in &skipped {
            println!("- {}: {}", s.name, s.reason);
        }
    }
    println!();
    let report = Table3Report {
        run,
        max_key_bytes: MAX_KEY_BYTES,
        max_mul_seconds: MAX_MUL_SECONDS,
        rows,
        skipped,
    };
    report.run.write(options, &report)?;
    if failures > 0 || !circuit_failures.is_empty() {
        bail!(
            "bfv-table3 failed: {failures} row(s) not measured (see \"Not measured\"), {} full-depth \
             circuit(s) wrong or stopped{}",
            circuit_failures.len(),
            if circuit_failures.is_empty() {
                String::new()
            } else {
                format!(" ({})", circuit_failures.join(", "))
            }
        );
    }
    Ok(())
}

/// One thread count of `bfv-table4`.
#[derive(Debug, Clone, Serialize)]
pub struct Table4Row {
    /// Threads of the rayon pool.
    pub threads: usize,
    /// Decrypt + decode.
    pub dec: Timing,
    /// Multiplication without relinearization.
    pub mul: Timing,
    /// Relinearization.
    pub relin: Timing,
    /// Multiplication with relinearization ([`Evaluator::multiply`]).
    pub mul_relin: Timing,
    /// Speedups over one thread: Dec, Mul, Relin, Mul + Relin.
    pub speedup: [f64; 4],
    /// The paper's row for this thread count.
    pub paper: Option<PaperTable4Row>,
}

/// The JSON document `bfv-table4.json`.
#[derive(Debug, Clone, Serialize)]
pub struct Table4Report {
    /// Table, machine (`threads` is the global pool's; each row has its own pool), `--quick`, load.
    #[serde(flatten)]
    pub run: RunInfo,
    /// The parameters (T2Depth20).
    pub params: ParamSummary,
    /// Repetition settings.
    pub timing: TimingConfig,
    /// One row per thread count.
    pub rows: Vec<Table4Row>,
    /// Correctness of the timed operations.
    pub check: Check,
}

/// `rnsfhe bench bfv-table4`.
pub fn run_table4(options: &BenchOptions) -> anyhow::Result<()> {
    let mut run = RunInfo::start("bfv-table4", options);
    let preset = BfvPreset::T2Depth20;
    eprintln!("bfv-table4: {preset:?}: setting up ...");
    let bench = BfvBench::new(preset.params()?)?;
    let summary = summarize(format!("{preset:?}"), preset.depth(), bench.context());
    let check = bench.check()?;
    if !check.all_ok() {
        bail!("the timed operations compute wrong results: {check:?}");
    }
    let threads: Vec<usize> = [1usize, 2, 4, 8, 16, 32]
        .into_iter()
        .filter(|&t| t == 1 || t <= run.machine.logical_cpus)
        .collect();
    let pools = threads
        .iter()
        .map(|&t| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .with_context(|| format!("cannot build a pool of {t} threads"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let config = TimingConfig {
        warmup_ms: if options.quick { 0 } else { 500 },
        samples: if options.quick { 5 } else { 31 },
        min_sample_us: 0,
    };
    let failed = Mutex::new(None);
    let mut cases: Vec<Box<dyn FnMut() + '_>> = Vec::new();
    for pool in &pools {
        let (b, f) = (&bench, &failed);
        cases.push(Box::new(move || pool.install(|| record(f, b.decrypt()))));
        cases.push(Box::new(move || pool.install(|| record(f, b.mult()))));
        cases.push(Box::new(move || pool.install(|| record(f, b.relin()))));
        cases.push(Box::new(move || pool.install(|| record(f, b.mult_relin()))));
    }
    eprintln!(
        "bfv-table4: {} rounds over {:?} threads ...",
        config.samples, threads
    );
    let mut refs: Vec<&mut dyn FnMut()> = cases.iter_mut().map(|c| &mut **c as _).collect();
    let t = measure_checked(&config, &mut refs, &failed)?;
    drop(refs);
    drop(cases);
    let base = &t[0..4];
    let rows: Vec<Table4Row> = threads
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let r = &t[4 * i..4 * i + 4];
            Table4Row {
                threads: n,
                dec: r[0],
                mul: r[1],
                relin: r[2],
                mul_relin: r[3],
                speedup: std::array::from_fn(|j| base[j].median_us / r[j].median_us),
                paper: PAPER_TABLE4.into_iter().find(|p| p.threads == n),
            }
        })
        .collect();

    run.finish("BFV (HPS) Table 4: threads, L = 20");
    println!(
        "- parameters: {preset:?} (t = 2, N = 2^{}, k = {}, k' = {}, log q = {:.0}, CRT relinearization)\n\
         - one rayon pool per thread count; every round runs Dec, Mul, Relin, Mul + Relin in every pool, \
         interleaved; median of {} rounds, milliseconds; speedup = 1-thread time / time\n\
         - paper: HPS Table 4 (PALISADE 1.1 with OpenMP, 2 x 16-core Xeon E5-2698 v3 at 2.3 GHz)\n",
        summary.log_n, summary.k, summary.k_p, summary.log_q, config.samples
    );
    let header = [
        "threads",
        "Dec ours",
        "paper",
        "Mul ours",
        "paper",
        "Relin ours",
        "paper",
        "Mul+Relin ours",
        "paper",
        "speedup ours (Dec / Mul / Relin / Mul+Relin)",
        "speedup paper",
    ];
    let columns: [fn(&PaperTable4Row) -> f64; 4] = [
        |p| p.dec_ms,
        |p| p.mul_ms,
        |p| p.relin_ms,
        |p| p.mul_relin_ms,
    ];
    let speedups = |s: [f64; 4]| format!("{:.2} / {:.2} / {:.2} / {:.2}", s[0], s[1], s[2], s[3]);
    let p1 = PAPER_TABLE4[0];
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let ours = [r.dec, r.mul, r.relin, r.mul_relin].map(|t| t.median_us);
            let mut cells = vec![r.threads.to_string()];
            cells.extend(ours_and_paper(ours, ms, r.paper.as_ref(), columns));
            cells.push(speedups(r.speedup));
            cells.push(r.paper.as_ref().map_or("-".to_string(), |p| {
                speedups(columns.map(|f| f(&p1) / f(p)))
            }));
            cells
        })
        .collect();
    print!("{}", markdown_table(&header, &table));
    println!();
    let report = Table4Report {
        run,
        params: summary,
        timing: config,
        rows,
        check,
    };
    report.run.write(options, &report)?;
    Ok(())
}

/// `rnsfhe bench bfv-op`: the line protocol of `bench/peers/README.md` for BFV ([`serve_line_protocol`]).
/// Parameters: a preset (`--preset T2Depth20`) or `BfvParams::generate(t, depth)`. Prints a ready line after
/// set-up, then answers `{"op": NAME, "reps": R}` with `{"op": NAME, "seconds": [...]}` until
/// `{"op": "quit"}` or the end of input.
///
/// The whole loop runs inside a rayon pool of [`rayon::current_num_threads`] threads (`RAYON_NUM_THREADS`;
/// the driver sets 1), so that with one thread every operation runs on the thread that times it, with no
/// hand-off to a worker and no idle worker spinning beside it.
/// `key_switching` overrides the parameters' key switching (the name gains `, crt` or `, hybrid`).
pub fn serve(
    preset: Option<&str>,
    depth: Option<usize>,
    t: u64,
    key_switching: OpKeySwitching,
) -> anyhow::Result<()> {
    super::on_pool_worker(|| serve_in_pool(preset, depth, t, key_switching))
}

/// The key switching of `rnsfhe bench bfv-op` (`--key-switching`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKeySwitching {
    /// As the parameters come: [`BfvParams::generate`]'s choice, or the preset's (CRT).
    AsGenerated,
    /// CRT key switching: `generate`'s parameters before its choice of key switching
    /// ([`BfvParams::generate_with_rotations`] with one rotation per level); presets unchanged.
    Crt,
    /// Hybrid key switching in the security room ([`BfvParams::with_hybrid_key_switching`]).
    Hybrid,
}

fn serve_in_pool(
    preset: Option<&str>,
    depth: Option<usize>,
    t: u64,
    key_switching: OpKeySwitching,
) -> anyhow::Result<()> {
    let (name, depth, params) = match (preset, depth) {
        (Some(p), None) => {
            let p = parse_preset(p)?;
            (format!("{p:?}"), p.depth(), p.params()?)
        }
        (None, Some(d)) => {
            let params = match key_switching {
                OpKeySwitching::Crt => BfvParams::generate_with_rotations(
                    t,
                    d,
                    rnsfhe_bfv::generator::ROTATIONS_PER_LEVEL,
                )?,
                _ => BfvParams::generate(t, d)?,
            };
            (format!("generate({t}, {d})"), d, params)
        }
        _ => bail!("give either --preset NAME or --depth L (with --t T, default 65537)"),
    };
    let (name, params) = match key_switching {
        OpKeySwitching::AsGenerated => (name, params),
        OpKeySwitching::Crt => (format!("{name}, crt"), params),
        OpKeySwitching::Hybrid => (
            format!("{name}, hybrid"),
            params.with_hybrid_key_switching()?,
        ),
    };
    let mut bench = BfvBench::new(params)?;
    let check = bench.check()?;
    let ctx = Arc::clone(bench.context());
    let s = summarize(name, depth, &ctx);
    let ready = json!({
        "ready": true,
        "impl": "rnsfhe",
        "version": super::version_string(),
        "threads": rayon::current_num_threads(),
        "ops": OPS.iter().map(|(o, _)| *o).collect::<Vec<_>>(),
        "params": {
            "name": s.name,
            "t": s.t,
            "depth": s.depth,
            "log_n": s.log_n,
            "n": ctx.n(),
            "q_bits": s.q_bits,
            "num_q_primes": s.k,
            "log_q": (s.log_q * 100.0).round() / 100.0,
            "p_bits": s.p_bits,
            "log_p": (s.log_p * 100.0).round() / 100.0,
            "relin_digit_bits": s.relin_digit_bits,
            "relin_components": s.relin_components,
            "encoding": check.encoding,
            "multiplication": "HPS Section 4.5 (exact-float basis extension Q -> P, tensor in R_QP, complex scaling, P -> Q)",
            "dnum": match ctx.key_switching() {
                KeySwitchTechnique::Hybrid { dnum, .. } => Some(*dnum),
                KeySwitchTechnique::Crt => None,
            },
            "key_switching": match (ctx.key_switching(), s.relin_digit_bits) {
                (KeySwitchTechnique::Hybrid { special_moduli, dnum }, _) => format!(
                    "hybrid, dnum {dnum}, {} special primes (log P = {:.1})",
                    special_moduli.len(),
                    special_moduli.iter().map(|&p| (p as f64).log2()).sum::<f64>()
                ),
                (_, Some(w)) => format!("CRT decomposition with base-2^{w} digits ({} components)", s.relin_components),
                (_, None) => format!("CRT decomposition ({} components)", s.relin_components),
            },
            "security": if ctx.is_secure() { "128-bit (HE Standard table, checked)" } else { "NOT established" },
        },
        "check": {
            "exact": check.all_ok(),
            "checked_values": check.checked_values,
            "noise_budget_after_mult_bits": check.noise_budget_bits.map(|b| (b * 10.0).round() / 10.0),
        },
    });
    serve_line_protocol(&ready, |op| bench.run(op))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn negacyclic_coefficients() {
        // (1 + 2X)(3 + X) = 3 + 7X + 2X^2 = (3 - 2) + 7X mod X^2 + 1.
        let (x, y) = ([1, 2], [3, 1]);
        assert_eq!(negacyclic_coefficient(&x, &y, 0, 11), 1);
        assert_eq!(negacyclic_coefficient(&x, &y, 1, 11), 7);
        assert_eq!(negacyclic_coefficient(&[0, 1], &[0, 1], 0, 5), 4);
    }

    #[test]
    fn monomial_products_are_negacyclic() {
        let t = 7;
        let x = [1, 2, 3, 4, 5];
        for k in 0..x.len() {
            for negative in [false, true] {
                let mut a = vec![0u64; x.len()];
                a[k] = if negative { t - 1 } else { 1 };
                let want: Vec<u64> = (0..x.len())
                    .map(|j| negacyclic_coefficient(&x, &a, j, t))
                    .collect();
                assert_eq!(monomial_product(&x, k, negative, t), want, "k = {k}");
            }
        }
        assert_eq!(slotwise_product(&[3, 4], &[5, 6], 7), [1, 3]);
    }

    #[test]
    fn full_depth_circuits_decrypt_exactly() {
        for (t, depth) in [(2, 3), (65537, 2)] {
            let mut bench = BfvBench::new(BfvParams::generate(t, depth).unwrap()).unwrap();
            let c = bench.circuit(depth, 7).unwrap();
            let encoding = if t == 2 { "coefficient" } else { "batch" };
            assert_eq!(c.encoding, encoding);
            assert!(c.exact && c.mismatches == 0, "{c:?}");
            assert_eq!((c.depth, c.checked_values), (depth, bench.context().n()));
            assert!(c.noise_budget_bits.unwrap() > 0.0, "{c:?}");
        }
    }

    #[test]
    fn paper_tables_are_complete() {
        for p in BfvPreset::ALL {
            let row = PAPER_TABLE3.iter().find(|r| r.depth == p.depth()).unwrap();
            assert_eq!((row.log_n, row.log_q, row.k), p.paper_row());
        }
        assert_eq!(PAPER_TABLE4[0].threads, 1);
        assert_eq!(PAPER_TABLE4[1].threads, 2);
        assert!(parse_preset("t2depth20").is_ok());
        assert!(parse_preset("nope").is_err());
    }

    #[test]
    fn the_replica_computes_what_the_evaluator_computes() {
        let mut params = BfvParams::with_bit_sizes(10, 65537, 40, 2).unwrap();
        params.insecure_for_testing = true;
        let bench = BfvBench::new(params).unwrap();
        let check = bench.check().unwrap();
        assert!(check.all_ok() && check.replica_ok, "{check:?}");
        let (_, t) = MulPhases::new(bench.context())
            .unwrap()
            .multiply(&bench.x, &bench.y)
            .unwrap();
        assert!(t.crt_ext > 0.0 && t.scaling > 0.0 && t.ntt > 0.0);
        assert!(t.crt_ext + t.scaling + t.ntt + t.other <= t.total * 1.000_001);
    }

    #[test]
    fn table_cells() {
        let cells: Vec<String> = [0.0, 40.0, 999.9, 1980.0, 49_800.0, 155_000.0, 4_744_000.0]
            .into_iter()
            .map(ms)
            .collect();
        assert_eq!(
            cells,
            ["0.000", "0.040", "1.000", "1.98", "49.8", "155", "4744"]
        );
        let paper = Some(&PAPER_TABLE3[0]);
        let row = ours_and_paper([1500.0, 20.0], ms, paper, [|p| p.dec_ms, |p| p.mul_ms]);
        assert_eq!(row, ["1.50", "0.15", "0.020", "3.16"]);
        let row = ours_and_paper([33.4], pct, paper, [|p| p.crt_ext_pct]);
        assert_eq!(row, ["33", "34"]);
        let none: Option<&PaperTable3Row> = None;
        assert_eq!(
            ours_and_paper([2.0], pct, none, [|p| p.ntt_pct]),
            ["2", "-"]
        );
    }

    #[test]
    fn relin_key_size_estimate() {
        let p = BfvPreset::T2Depth20.params().unwrap();
        let (components, bytes) = relin_key_size(&p);
        assert_eq!(components, 8);
        assert_eq!(bytes, (8 * 2 * 8 * (1 << 14) * 8) as f64);
    }
}
