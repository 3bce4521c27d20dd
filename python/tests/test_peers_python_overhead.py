"""The Python-overhead driver (bench/peers/compare_python.py): several fresh process pairs combine into one
result (`--pairs`), the ratio and times being medians over pairs, and the table shows each pair's spread."""

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "peers"))

import compare_python as drv  # noqa: E402


def pair_result(ratio, rust_ms, python_ms):
    row = {"op": "mult_rs", "label": "Mult + Relin + Rescale", "reps_per_round": 3,
           "rust": {"median_ms": rust_ms}, "python": {"median_ms": python_ms},
           "ratio_python_rust": ratio, "errors": {}}
    return {"preset": "PaperTable1L5", "scheme": "ckks", "threads": 2, "rounds": 5,
            "date_utc": "2026-11-27 10:00 UTC", "cpu": "test", "logical_cpus": 2, "pinned_cpu": None,
            "implementations": {"ours": {"version": "r"}, "python": {"version": "p"}},
            "load_average_before": (1.0, 1.0, 1.0), "load_average_after": (1.1, 1.0, 1.0),
            "rows": [row]}


def test_one_pair_is_returned_as_it_is():
    one = pair_result(1.01, 4.0, 4.04)
    assert drv.combine_pairs([one]) is one


def test_pairs_combine_into_medians_with_their_spread():
    res = drv.combine_pairs([pair_result(1.09, 3.8, 4.1), pair_result(1.00, 4.2, 4.2),
                             pair_result(0.98, 4.0, 3.9)])
    row = res["rows"][0]
    assert res["pairs"] == 3
    assert row["ratio_python_rust"] == 1.00
    assert row["rust"]["median_ms"] == 4.0 and row["python"]["median_ms"] == 4.1
    assert row["pair_ratios"] == [1.09, 1.00, 0.98]
    assert res["load_average_after"] == (1.1, 1.0, 1.0)
    table = drv.markdown(res)
    assert "median over 3 fresh process pairs" in table
    assert "| 1.00 | ok | 0.98-1.09 |" in table
