//! `rnsfhe bench ckks-bootstrap-op`: the command serves the bootstrapping protocol of
//! `bench/peers/compare_bootstrap.py` at its quick set-up (`N = 2^12`, uniform ternary secret, insecure):
//! a ready line with the fields the driver requires, one answer per command with a list per call, an
//! error line that keeps serving, `quit`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

/// The set-up of `compare_bootstrap.py --quick` (its `QUICK` and `QUICK_SLOTS`).
const QUICK: &str = r#"{"log_n": 12, "slots": 2048, "security": "none", "secret": "uniform_ternary",
    "level_budget": [2, 2], "scale_bits": 59, "first_mod_bits": 60, "technique": "FLEXIBLEAUTO",
    "levels_after": 2, "key_sizes": true}"#;

/// Runs `rnsfhe bench ckks-bootstrap-op --params PARAMS` with `commands` on stdin: (success, lines).
fn serve(params: &str, commands: &[u8]) -> (bool, Vec<Value>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rnsfhe"))
        .args(["bench", "ckks-bootstrap-op", "--params", params])
        .env("RAYON_NUM_THREADS", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the rnsfhe binary");
    // The process may exit before reading (a set-up error): a broken pipe is not a failure here.
    let _ = child.stdin.take().expect("stdin").write_all(commands);
    let output = child.wait_with_output().expect("wait for rnsfhe");
    let stdout = String::from_utf8(output.stdout).expect("UTF-8 output");
    let lines = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    (output.status.success(), lines)
}

#[test]
fn ckks_bootstrap_op_serves_the_quick_set_up() {
    let (ok, lines) = serve(
        QUICK,
        b"{\"op\": \"bootstrap\", \"reps\": 2}\n{\"op\": \"rotate\"}\n{\"op\": \"quit\"}\n",
    );
    assert!(ok, "{lines:?}");
    assert_eq!(lines.len(), 4, "{lines:?}");
    let ready = &lines[0];
    assert_eq!(ready["ready"], true);
    assert!(ready["version"].is_string());
    assert_eq!(ready["ops"][0], "bootstrap");
    assert_eq!(ready["params"]["log_n"], 12);
    assert_eq!(ready["params"]["slots"], 2048);
    assert_eq!(ready["params"]["levels_after"], 2);
    assert!(ready["params"]["log_qp"].as_f64().expect("log_qp") > 0.0);
    assert!(ready["params"]["bootstrap_depth"].as_u64().expect("depth") > 0);
    assert!(ready["keygen"]["keygen_s"].as_f64().expect("keygen_s") > 0.0);
    assert!(ready["keys"]["total_bytes"].as_u64().expect("key bytes") > 0);
    assert!(ready["max_rss_bytes"].as_u64().expect("rss") > 0);
    assert_eq!(ready["check"]["levels_left"], 2);
    // Measured about 12 bits minimum at this set-up (51-bit scaling primes, K = 106): the values must
    // come back, not noise (a failed EvalMod gives negative bits).
    let min = ready["check"]["min_bits"].as_f64().expect("min_bits");
    assert!(min > 8.0, "{min}");
    let median = ready["check"]["median_bits"].as_f64().expect("median_bits");
    assert!(median >= min, "{median} < {min}");

    let call = &lines[1];
    assert_eq!(call["op"], "bootstrap");
    for key in [
        "seconds",
        "cpu_seconds",
        "min_bits",
        "median_bits",
        "levels_left",
    ] {
        assert_eq!(call[key].as_array().expect(key).len(), 2, "{key}: {call}");
    }
    assert!(call["min_bits"][1].as_f64().expect("bits") > 8.0, "{call}");
    assert_eq!(call["levels_left"][0], 2);
    assert!(lines[2]["error"].is_string(), "{}", lines[2]);
    assert_eq!(lines[3]["ok"], true);
}

/// Security "128" at `N = 2^12`: no chain fits the HE Standard's bound (109 bits); the process answers
/// with one error line naming the bound and exits with an error, never a ready line or a panic.
#[test]
fn ckks_bootstrap_op_refuses_128_bits_at_n_2_12() {
    let (ok, lines) = serve(
        r#"{"log_n": 12, "slots": 2048, "security": "128"}"#,
        b"{\"op\": \"quit\"}\n",
    );
    assert!(!ok);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["ready"], false);
    let error = lines[0]["error"].as_str().expect("error");
    assert!(
        error.contains("no 128-bit chain") && error.contains("109"),
        "{error}"
    );
}
