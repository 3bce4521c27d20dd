//! `rnsfhe bench bfv-op`: the command reaches the benchmark tables of `rnsfhe-bench`, speaks the line
//! protocol of the peer drivers (a ready line, then an answer per command until `quit`), and names its global
//! allocator in the ready line.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::process::{Command, Stdio};

#[test]
fn bfv_op_serves_the_line_protocol_and_names_mimalloc() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rnsfhe"))
        .args(["bench", "bfv-op", "--depth", "1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the rnsfhe binary");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"{\"op\": \"add\", \"reps\": 2}\n{\"op\": \"quit\"}\n")
        .expect("write the commands");
    let output = child.wait_with_output().expect("wait for rnsfhe");
    let stdout = String::from_utf8(output.stdout).expect("UTF-8 output");
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(lines[0].contains("\"ready\":true"), "{}", lines[0]);
    assert!(lines[0].contains("(allocator: mimalloc)"), "{}", lines[0]);
    assert!(
        lines[1].contains("\"op\":\"add\"") && lines[1].contains("\"seconds\":["),
        "{}",
        lines[1]
    );
    assert!(lines[2].contains("\"ok\":true"), "{}", lines[2]);
}
