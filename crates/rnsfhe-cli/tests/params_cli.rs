//! `rnsfhe params`: every preset's security estimate is printed, is at least 128 bits unless the preset is
//! marked `INSECURE`, and the marker appears for the presets that claim no 128-bit level (CKKS
//! `Preset::claimed_security() == None`; BFV: parameters built with `insecure_for_testing`) — plus the presets
//! the estimate puts below 128 bits, listed in [`BELOW_128_AT_THE_TABLE_BOUND`]. Also: the detailed view of
//! every preset (names case-insensitive) and the error for an unknown name.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use rnsfhe_bfv::BfvPreset;
use rnsfhe_ckks::Preset;

/// Presets that claim 128 bits and sit exactly on the HE Standard bound, where the built-in estimate is a
/// fraction of a bit short: `T2Depth5` has `N = 2^12`, `log2 Q = 109.0`, the table's 128-bit maximum, and
/// the estimate gives 127.8 bits (primal uSVP, `beta = 327`; the uSVP code of the 2018 lattice estimator
/// re-implemented gives the same 127.85, one block size short of 128). The command marks it, as it must
/// mark every estimate below 128 bits; the BFV generator would need `log2 Q <= 108` at `N = 2^12` to
/// clear it (129.3 bits).
const BELOW_128_AT_THE_TABLE_BOUND: &[&str] = &["T2Depth5"];

/// How far below 128 bits a preset of [`BELOW_128_AT_THE_TABLE_BOUND`] may be: one BKZ block size
/// (0.292 bits) and rounding.
const ONE_BLOCK_SIZE_BITS: f64 = 0.3;

fn rnsfhe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rnsfhe"))
        .args(args)
        .output()
        .expect("run the rnsfhe binary")
}

/// The rows of the first markdown table of `text`, as maps from column header to cell.
fn table_rows(text: &str) -> Vec<HashMap<String, String>> {
    let cells = |line: &str| -> Vec<String> {
        line.trim()
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let mut lines = text.lines().skip_while(|l| !l.starts_with("| preset"));
    let header = cells(lines.next().expect("a table header"));
    lines
        .skip(1) // the |---| rule
        .take_while(|l| l.starts_with('|'))
        .map(|l| header.iter().cloned().zip(cells(l)).collect())
        .collect()
}

/// Whether each preset claims 128-bit security, by name.
fn claims() -> HashMap<String, bool> {
    let mut claims: HashMap<String, bool> = Preset::ALL
        .iter()
        .map(|p| (format!("{p:?}"), p.claimed_security().is_some()))
        .collect();
    for p in BfvPreset::ALL {
        let params = p.params().expect("BFV preset parameters");
        claims.insert(format!("{p:?}"), !params.insecure_for_testing);
    }
    claims
}

#[test]
fn every_preset_is_estimated_and_marked_when_insecure() {
    let start = Instant::now();
    let out = rnsfhe(&["params"]);
    let elapsed = start.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        elapsed < Duration::from_secs(10),
        "rnsfhe params took {elapsed:?}"
    );
    let text = String::from_utf8(out.stdout).expect("UTF-8 output");
    let rows = table_rows(&text);
    let claims = claims();
    assert_eq!(rows.len(), claims.len(), "one row per preset:\n{text}");
    for row in &rows {
        let name = &row["preset"];
        let claims_128 = *claims
            .get(name)
            .unwrap_or_else(|| panic!("unknown preset row {name}"));
        let bits: f64 = row["security (bits)"]
            .parse()
            .unwrap_or_else(|_| panic!("{name}: no security estimate in {row:?}"));
        for column in ["primal", "dual", "core-SVP", "HE Standard"] {
            assert!(!row[column].is_empty(), "{name}: empty {column}");
        }
        let status = &row["status"];
        let marked = status.starts_with("INSECURE");
        println!("{name}: {bits} bits, {status}");
        assert!(marked || status == "ok", "{name}: status {status:?}");
        if !marked {
            assert!(bits >= 128.0, "{name}: {bits} bits and not marked");
        }
        if !claims_128 {
            assert!(marked, "{name} claims no 128-bit level but is not marked");
        } else if BELOW_128_AT_THE_TABLE_BOUND.contains(&name.as_str()) {
            assert!(
                (128.0 - ONE_BLOCK_SIZE_BITS..128.0).contains(&bits),
                "{name}: {bits} bits; if the estimate or the preset changed, update \
                 BELOW_128_AT_THE_TABLE_BOUND"
            );
            assert!(
                marked && status.contains("estimated") && !status.contains(';'),
                "{name}: marked for the estimate only: {status:?}"
            );
        } else {
            assert!(!marked, "{name} claims 128 bits but is marked: {status:?}");
        }
    }
}

#[test]
fn every_preset_has_a_detailed_view_and_names_are_case_insensitive() {
    let names: Vec<String> = Preset::ALL
        .iter()
        .map(|p| format!("{p:?}"))
        .chain(BfvPreset::ALL.iter().map(|p| format!("{p:?}")))
        .collect();
    for name in names {
        let out = rnsfhe(&["params", &name.to_lowercase()]);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).expect("UTF-8 output");
        assert!(text.starts_with(&format!("## {name} (")), "{text}");
        for needle in [
            "q_0 = ",
            "primal uSVP: beta = ",
            "dual: ",
            "- status: ",
            "bits",
        ] {
            assert!(text.contains(needle), "{name}: no {needle:?} in\n{text}");
        }
    }
}

#[test]
fn unknown_preset_is_an_error_listing_the_valid_names() {
    let out = rnsfhe(&["params", "NoSuchPreset"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("NoSuchPreset"), "{err}");
    for name in ["PaperTable1L5", "Rec128N16", "T2Depth1", "T2Depth100"] {
        assert!(err.contains(name), "{err}");
    }
}

#[test]
fn every_preset_lists_the_conversion_modes_it_builds_in() {
    let out = rnsfhe(&["params"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).expect("UTF-8 output");
    let ckks: Vec<String> = Preset::ALL.iter().map(|p| format!("{p:?}")).collect();
    for row in table_rows(&text) {
        let name = &row["preset"];
        let modes = &row["conversion modes"];
        // CKKS: all three; BFV: the two exact ones (HPS multiplication needs the exact lift).
        let expected: &[&str] = if ckks.contains(name) {
            &["Fast", "ExactFloat", "ExactInteger"]
        } else {
            &["ExactFloat", "ExactInteger"]
        };
        let listed: Vec<&str> = modes
            .split(", ")
            .map(|m| m.split(" (").next().unwrap_or(m))
            .collect();
        assert_eq!(listed, expected, "{name}: {modes:?}");
    }
    // The detailed view shows each mode's layout.
    let out = rnsfhe(&["params", "PaperTable1L10"]);
    let text = String::from_utf8(out.stdout).expect("UTF-8 output");
    for needle in [
        "  - Fast: dnum = 3",
        "  - ExactFloat: dnum = 3",
        "  - ExactInteger: dnum = 11",
    ] {
        assert!(text.contains(needle), "no {needle:?} in\n{text}");
    }
}
