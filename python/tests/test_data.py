"""The datasets of RNS-CKKS Table 4 shipped under data/: shape, labels and checksums as data/README.md states."""

import csv
import hashlib
import pathlib

import pytest

DATA = pathlib.Path(__file__).resolve().parents[2] / "data"

CASES = [
    # file, rows, label column, positives, feature columns, sha256 (data/README.md)
    ("lbw.csv", 189, "low", 59, ["age", "lwt", "race", "smoke", "ptl", "ht", "ui", "ftv"],
     "7f1b2ee52cf9e4296c95512f9c07c93701dc876e614e1d8bd5588b2ef141a659"),
    ("uis.csv", 575, "DFREE", 147, ["AGE", "BECK", "HC", "IV", "NDT", "RACE", "TREAT", "SITE"],
     "d98b04d297be068111f176e564f03bc572c7bbde02820006cb3f2e800c6732ab"),
]


@pytest.mark.parametrize("name,rows,label,positives,features,sha", CASES)
def test_dataset_matches_its_description(name, rows, label, positives, features, sha):
    path = DATA / name
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha
    with path.open(newline="") as f:
        table = list(csv.DictReader(f))
    assert len(table) == rows
    assert all(c in table[0] for c in features + [label])
    assert sum(int(r[label]) for r in table) == positives
    assert all(r[label] in ("0", "1") for r in table)
    for r in table:
        for c in features:
            float(r[c])  # every feature is numeric and present


def test_uis_label_is_derived_from_time_to_relapse():
    with (DATA / "uis.csv").open(newline="") as f:
        for r in csv.DictReader(f):
            assert int(r["DFREE"]) == int(int(r["TIME"]) >= 365)
