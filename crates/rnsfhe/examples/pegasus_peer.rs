//! The Rust side of `bench/peers/compare_pegasus_python.py`: the whole PEGASUS pipeline (Lu et al., IEEE S&P
//! 2021, Fig. 6) timed from Rust, a benchmark process of the line protocol of `bench/peers/README.md`
//! ("Protocol"), beside `bench/peers/rnsfhe_pegasus_python.py`, which times the same calls through the Python
//! API. The driver runs both and reports Python / Rust per operation: what a Python call adds to the Rust
//! call.
//!
//! `cargo run --release -p rnsfhe --example pegasus_peer -- [--preset InsecureTest] [--slots 8]`
//!
//! Setup: the pipeline of the preset (`PipelineOptions::new(slots)` with the insecure opt-in for the test
//! preset and Table IV), keys from a fixed seed, one ciphertext of `slots` values in `[-8, 8]` at the
//! pipeline's input level and the table of tanh. Operations:
//!
//! * `lut`: `PegasusEvaluator::apply_table(&ct, &table)` (Python: `ct.lut(table)`);
//! * `lut_fn`: `PegasusEvaluator::apply(&ct, f64::tanh)`, the table built in the call (Python:
//!   `ct.lut(np.tanh)`);
//! * `to_lwe`: `PegasusEvaluator::to_lwe(&ct)` (Python: `ct.to_lwe()`).
//!
//! Commands are `{"op": NAME, "reps": R}` and `{"op": "quit"}`, one per line; the answers
//! `{"op": NAME, "seconds": [...]}`. Single-threaded when the driver sets `RAYON_NUM_THREADS=1`.

use std::any::Any;
use std::error::Error;
use std::io::{BufRead, Write};
use std::time::Instant;

use rnsfhe::ckks::{CkksDecryptor, CkksEncryptor, Csprng, KeyGenerator};
use rnsfhe::pegasus::{PegasusEvaluator, PegasusKeys, PipelineOptions, PipelinePreset};

/// mimalloc, as in the Python extension and the `rnsfhe` command: the comparison is of the calls, not of
/// the allocators (the system allocator page-faults freed multi-MB polynomial buffers back in).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// The operations offered, in the order of the ready line.
const OPS: [&str; 3] = ["lut", "lut_fn", "to_lwe"];

/// The command line: `--preset NAME` and `--slots S`.
fn arguments() -> Result<(PipelinePreset, usize)> {
    let (mut preset, mut slots) = (PipelinePreset::InsecureTest, 8usize);
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--preset" => {
                preset = PipelinePreset::ALL
                    .into_iter()
                    .find(|p| format!("{p:?}").eq_ignore_ascii_case(&value))
                    .ok_or(format!("unknown preset {value:?}"))?;
            }
            "--slots" => slots = value.parse()?,
            other => return Err(format!("unknown option {other}").into()),
        }
    }
    Ok((preset, slots))
}

/// An operation's output, kept until its clock has stopped.
fn boxed<T: 'static>(output: T) -> Box<dyn Any> {
    Box::new(output)
}

/// The string value of `"key": "..."` in one protocol line (the commands are flat objects).
fn string_field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let rest = &line[line.find(&format!("\"{key}\""))? + key.len() + 2..];
    let rest = &rest[rest.find('"')? + 1..];
    Some(&rest[..rest.find('"')?])
}

/// The integer value of `"key": R` in one protocol line.
fn integer_field(line: &str, key: &str) -> Option<usize> {
    let rest = &line[line.find(&format!("\"{key}\""))? + key.len() + 2..];
    let rest = rest.trim_start_matches([' ', ':']);
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

fn main() -> Result<()> {
    let (preset, slots) = arguments()?;
    let params = preset.params()?;
    let ctx = params.ckks.clone();
    let options = PipelineOptions {
        allow_insecure: preset != PipelinePreset::Secure128,
        ..PipelineOptions::new(slots)
    };
    let mut rng = Csprng::insecure_from_seed_for_tests([7; 32]);
    let keygen = KeyGenerator::new(&ctx, &mut rng)?;
    let (keys, _secrets) = PegasusKeys::generate(&params, &options, &keygen, &mut rng)?;
    let pegasus = PegasusEvaluator::new(params, options, keys)?;
    // Values spread over [-8, 8], as the Python side encrypts them.
    let values: Vec<f64> = (0..slots)
        .map(|i| -7.5 + 15.0 * i as f64 / (slots.max(2) - 1) as f64)
        .collect();
    let pt = ctx.encode_real(&values, slots, pegasus.input_level())?;
    let ct = CkksEncryptor::with_secret_key(&ctx, keygen.secret_key())?
        .encrypt_plaintext(&pt, &mut rng)?;
    let table = pegasus.table(f64::tanh)?;
    // The check of the ready line: the largest error of the timed computation.
    let out = CkksDecryptor::new(&ctx, keygen.secret_key())?
        .decrypt_real(&pegasus.apply_table(&ct, &table)?)?;
    let max_error = values
        .iter()
        .zip(&out)
        .map(|(x, y)| (y - x.tanh()).abs())
        .fold(0.0, f64::max);

    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let ops: Vec<String> = OPS.iter().map(|o| format!("\"{o}\"")).collect();
    writeln!(
        out,
        "{{\"ready\": true, \"impl\": \"rnsfhe\", \"version\": \"rnsfhe {} (Rust, example pegasus_peer)\", \
         \"threads\": 1, \"pid\": {}, \"ops\": [{}], \"params\": {{\"preset\": \"{preset:?}\", \"slots\": {slots}, \
         \"log_n\": {}, \"input_level\": {}, \"lwe_dimension\": {}, \"function\": \"tanh\"}}, \
         \"check\": {{\"lut_max_error\": {max_error:e}}}}}",
        env!("CARGO_PKG_VERSION"),
        std::process::id(),
        ops.join(", "),
        ctx.params().log_n,
        pegasus.input_level(),
        pegasus.params().lwe.lwe_dimension,
    )?;
    out.flush()?;
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let Some(op) = string_field(&line, "op") else {
            continue;
        };
        if op == "quit" {
            writeln!(out, "{{\"op\": \"quit\", \"ok\": true}}")?;
            out.flush()?;
            break;
        }
        let reps = integer_field(&line, "reps").unwrap_or(1);
        let mut seconds = Vec::with_capacity(reps);
        let mut error = None;
        for _ in 0..reps {
            // The outputs are dropped after the clock stops: freeing them is not timed.
            let start = Instant::now();
            let result = match op {
                "lut" => pegasus.apply_table(&ct, &table).map(boxed),
                "lut_fn" => pegasus.apply(&ct, f64::tanh).map(boxed),
                "to_lwe" => pegasus.to_lwe(&ct).map(boxed),
                _ => {
                    error = Some(format!("unknown op {op:?}; known: {OPS:?}"));
                    break;
                }
            };
            seconds.push(start.elapsed().as_secs_f64());
            match result {
                Ok(output) => drop(output),
                Err(e) => {
                    error = Some(e.to_string());
                    break;
                }
            }
        }
        match error {
            Some(e) => writeln!(out, "{{\"op\": \"{op}\", \"error\": {:?}}}", e)?,
            None => {
                let s: Vec<String> = seconds.iter().map(|s| format!("{s:e}")).collect();
                writeln!(out, "{{\"op\": \"{op}\", \"seconds\": [{}]}}", s.join(", "))?;
            }
        }
        out.flush()?;
    }
    Ok(())
}
