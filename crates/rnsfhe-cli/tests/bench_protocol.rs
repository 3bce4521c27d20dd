//! `rnsfhe bench bfv-op` and `ckks-op`: the commands reach the benchmark tables of `rnsfhe-bench`, speak
//! the line protocol of the peer drivers (a ready line, then an answer per command until `quit`), and name
//! their global allocator in the ready line.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::process::{Command, Stdio};

/// Runs `rnsfhe bench ARGS`, writes `commands` to its standard input and returns its output lines
/// (the process must succeed).
fn serve(args: &[&str], commands: &[u8]) -> Vec<String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rnsfhe"))
        .arg("bench")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the rnsfhe binary");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(commands)
        .expect("write the commands");
    let output = child.wait_with_output().expect("wait for rnsfhe");
    let stdout = String::from_utf8(output.stdout).expect("UTF-8 output");
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout.lines().map(str::to_string).collect()
}

#[test]
fn bfv_op_serves_the_line_protocol_and_names_mimalloc() {
    let lines = serve(
        &["bfv-op", "--depth", "1"],
        b"{\"op\": \"add\", \"reps\": 2}\n{\"op\": \"quit\"}\n",
    );
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(lines[0].contains("\"ready\":true"), "{}", lines[0]);
    assert!(lines[0].contains("(allocator: mimalloc)"), "{}", lines[0]);
    assert!(
        lines[1].contains("\"op\":\"add\"") && lines[1].contains("\"seconds\":["),
        "{}",
        lines[1]
    );
    assert!(lines[2].contains("\"ok\":true"), "{}", lines[2]);
}

/// `rnsfhe bench ckks-op` offers every operation of the peers' Table 1 protocol, the level-0 decryption
/// included, and its ready line's precision check covers each of them.
#[test]
fn ckks_op_offers_the_level_0_decryption_and_checks_every_operation() {
    let lines = serve(
        &["ckks-op", "--preset", "PaperTable1L5"],
        b"{\"op\": \"decrypt_decode_l0\", \"reps\": 2}\n{\"op\": \"quit\"}\n",
    );
    assert_eq!(lines.len(), 3, "{lines:?}");
    let ready: serde_json::Value = serde_json::from_str(&lines[0]).expect("JSON ready line");
    let ops: Vec<&str> = ready["ops"]
        .as_array()
        .expect("ops")
        .iter()
        .map(|o| o.as_str().expect("op name"))
        .collect();
    for op in [
        "keygen",
        "encode_encrypt",
        "decrypt_decode",
        "decrypt_decode_l0",
        "add",
        "cmult",
        "mult_rs",
        "rotate",
    ] {
        assert!(ops.contains(&op), "{op} missing from {ops:?}");
        if op != "keygen" {
            // Bits of precision, minimum over the slots: a scale of 2^55 leaves more than 35.
            let bits = ready["check"][op]
                .as_f64()
                .expect("precision of each operation");
            assert!(bits > 35.0, "{op}: {bits} bits");
        }
    }
    assert!(
        lines[1].contains("\"op\":\"decrypt_decode_l0\"") && lines[1].contains("\"seconds\":["),
        "{}",
        lines[1]
    );
    assert!(lines[2].contains("\"ok\":true"), "{}", lines[2]);
}
