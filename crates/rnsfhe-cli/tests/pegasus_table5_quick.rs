//! `rnsfhe bench pegasus-table5 --quick`: the CI smoke run of the whole command (the LWE rows and the
//! pipeline rows at the `InsecureTest` sets, a few seconds) writes the LWE rows, a row for every stage of
//! the pipeline on 1 and 2 threads and the accuracy rows of both repacking paths, and the repacked
//! values are right.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use serde_json::Value;

#[test]
fn quick_pipeline_rows_cover_every_stage_and_both_paths() {
    let out_dir =
        std::env::temp_dir().join(format!("rnsfhe-pegasus-table5-{}", std::process::id()));
    let output = Command::new(env!("CARGO_BIN_EXE_rnsfhe"))
        .args(["bench", "pegasus-table5", "--quick"])
        .arg("--out")
        .arg(&out_dir)
        .output()
        .expect("run the rnsfhe binary");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("QUICK RUN"), "{stdout}");
    let lwe: Value = serde_json::from_str(
        &std::fs::read_to_string(out_dir.join("pegasus-table5.json")).unwrap(),
    )
    .unwrap();
    let lwe_rows = lwe["rows"].as_array().unwrap();
    assert!(
        lwe_rows
            .iter()
            .any(|r| r["operation"].as_str().unwrap().starts_with("KS N")),
        "{lwe}"
    );
    let text = std::fs::read_to_string(out_dir.join("pegasus-pipeline.json")).unwrap();
    std::fs::remove_dir_all(&out_dir).unwrap();
    let results: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(results["presets"], serde_json::json!(["InsecureTest"]));
    let rows = results["rows"].as_array().unwrap();
    let stage = |prefix: &str, l: u64| {
        rows.iter()
            .find(|r| r["stage"].as_str().unwrap().starts_with(prefix) && r["l"] == l)
            .unwrap_or_else(|| panic!("no row {prefix:?} for l = {l} in {text}"))
    };
    for l in [16, 64] {
        for prefix in [
            "S2C",
            "extraction to n_lwe, per ciphertext",
            "extraction to n_lwe, whole ciphertext",
            "ring packing",
            "modulus raise",
            "subring trace",
            "CoeffsToSlots",
            "repacking, ring packing",
            "LWE key switch",
            "LT (Fig. 5",
            "repacking, key switch + LT + F_mod",
        ] {
            let row = stage(prefix, l);
            for column in ["one_thread_s", "two_threads_s"] {
                let s = row[column].as_f64().unwrap_or_else(|| panic!("{row}"));
                assert!(s.is_finite() && s > 0.0, "{row}");
            }
        }
        // The repacked sigmoid (no look-up-table noise) is right by both paths.
        for prefix in ["repacking, ring packing", "repacking, key switch"] {
            let note = stage(prefix, l)["note"].as_str().unwrap().to_string();
            let log2: f64 = note
                .rsplit("2^")
                .next()
                .and_then(|x| x.parse().ok())
                .unwrap_or_else(|| panic!("{note}"));
            assert!(log2 < -6.0, "{prefix}, l = {l}: {note}");
        }
    }
    let fmod = rows
        .iter()
        .filter(|r| r["stage"].as_str().unwrap().starts_with("F_mod"))
        .count();
    assert_eq!(fmod, 2, "F_mod once per path: {text}");
    assert!(
        stage("end to end, LT path", 16)["one_thread_s"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert!(
        stage("end to end, ring-packing path", 16)["one_thread_s"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    // Every function by both paths, within the pipeline tests' bound for sigmoid (2^-4), scaled by the
    // largest output on [-8, 8] for the others (the tables' output scale is inversely proportional).
    let accuracy = results["accuracy"].as_array().unwrap();
    assert_eq!(accuracy.len(), 6, "{text}");
    for a in accuracy {
        let (mean, max) = (
            a["mean_log2"].as_f64().unwrap(),
            a["max_log2"].as_f64().unwrap(),
        );
        let largest: f64 = match a["function"].as_str().unwrap() {
            "sigmoid" => 1.0,
            "ReLU" => 8.0,
            _ => 8f64.sqrt(),
        };
        assert!(mean <= max && max < -4.0 + largest.log2(), "{a}");
    }
}
