"""The CKKS bootstrapping peer driver (bench/peers/compare_bootstrap.py): its checks of the protocol's ready
lines and answers, a whole run against a protocol double standing in for our side (what the driver reads,
summarizes and prints), the "not available" path of a missing side, and, when the peers' OpenFHE venv exists
(bench/peers/setup.sh), OpenFHE's quick insecure set-up end to end."""

import json
import pathlib
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PEERS = ROOT / "bench" / "peers"
sys.path.insert(0, str(PEERS))

import compare_bootstrap as drv  # noqa: E402

READY = {
    "ready": True,
    "impl": "double",
    "version": "protocol double",
    "ops": ["bootstrap"],
    "params": {"log_n": 12, "slots": 2048, "log_qp": 400.0, "levels_after": 2, "bootstrap_depth": 9},
    "keygen": {"keygen_s": 1.5},
    "keys": {"total_bytes": 2_000_000_000, "counted": "all of them"},
    "max_rss_bytes": 3_000_000_000,
    "check": {"seconds": 0.5, "min_bits": 14.0, "median_bits": 18.0, "levels_left": 2},
}

# A process of the protocol whose answers are fixed numbers, so that the test knows what the driver must report:
# call k (1, 2, ...) takes k / 10 seconds with 10 + k bits minimum and 20 + k bits median precision.
DOUBLE = textwrap.dedent(
    """
    import json, sys
    with open(sys.argv[1]) as f:
        ready = json.load(f)
    params = json.loads(sys.argv[sys.argv.index("--params") + 1])
    ready["params"].update(log_n=params["log_n"], slots=params["slots"])
    print(json.dumps(ready), flush=True)
    k = 0
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["op"] == "quit":
            print(json.dumps({"op": "quit", "ok": True}), flush=True)
            break
        reps = cmd.get("reps", 1)
        calls = list(range(k + 1, k + reps + 1))
        k += reps
        print(json.dumps({"op": "bootstrap", "seconds": [c / 10 for c in calls],
                          "min_bits": [10.0 + c for c in calls], "median_bits": [20.0 + c for c in calls],
                          "levels_left": [2] * reps, "max_rss_bytes": 4_000_000_000}), flush=True)
    """
)


def test_ready_line_checks():
    assert drv.ready_problems(READY) == []
    partial = json.loads(json.dumps(READY))
    del partial["check"]["levels_left"]
    partial["ops"] = ["keygen"]
    assert drv.ready_problems(partial) == ["check.levels_left missing", "ops does not offer bootstrap"]
    assert drv.ready_problems({"ready": False, "version": "v", "ops": ["bootstrap"],
                               "params": {"log_n": 16, "slots": 8},
                               "check": {"min_bits": 1, "median_bits": 2, "levels_left": 3}}) == ["ready is not true"]


def test_reply_checks():
    good = {"op": "bootstrap", "seconds": [1.0, 2.0], "min_bits": [12.0, 12.5], "median_bits": [15.0, 15.1],
            "levels_left": [6, 6]}
    assert drv.reply_problems(good, 2) == []
    assert drv.reply_problems(good, 3) == [f"{k} is not a list of 3 numbers" for k in drv.REPLY_LISTS]
    assert drv.reply_problems({"op": "bootstrap", "error": "no keys"}, 1) == ["error: no keys"]
    bad = dict(good, levels_left=[6, "six"])
    assert drv.reply_problems(bad, 2) == ["levels_left has a value that is not a number"]


def test_setups_and_openfhe_overrides():
    args, setups = drv.parse_args([])
    assert [s["slots"] for s in setups] == [32768, 4096]
    assert all(s["log_n"] == 16 and s["security"] == "128" and s["level_budget"] == [4, 4] for s in setups)
    assert args.rounds == 3 and args.openfhe_overrides == {"security": "none", "levels_after": 6}
    args, _ = drv.parse_args(["--openfhe-matched"])
    assert args.openfhe_overrides == {}
    args, _ = drv.parse_args(["--levels-after", "2", "--openfhe-params", '{"dnum": 6}'])
    assert args.openfhe_overrides == {"dnum": 6}
    assert args.ours_overrides == {}
    args, setups = drv.parse_args(["--openfhe-matched", "--ours-params", '{"preset": "Boot128N16"}'])
    assert args.ours_overrides == {"preset": "Boot128N16"} and "preset" not in setups[0]
    assert drv.commands(args, setups[0])[0].get("ours", [None])[-1] in (None, json.dumps(dict(setups[0], preset="Boot128N16")))
    args, setups = drv.parse_args(["--quick"])
    assert args.openfhe_overrides == {} and args.rounds == 2
    assert setups == [dict(drv.QUICK, slots=2048)]
    warnings = drv.params_warnings(setups[0] | {"log_n": 16}, {"openfhe": {"params": {"log_n": 16, "slots": 2048,
                                                                                       "log_qp": 2312.0}}})
    assert warnings == ["OpenFHE: log QP = 2312 is over the 128-bit bound 1772 of the HE Standard for N = 2^16: "
                        "not 128-bit secure"]


def test_run_against_a_protocol_double(tmp_path, capsys):
    script = tmp_path / "double.py"
    script.write_text(DOUBLE)
    ready = tmp_path / "ready.json"
    ready.write_text(json.dumps(READY))
    cmd = f"{sys.executable} {script} {ready}"  # the driver appends --params JSON
    results = drv.main(["--quick", "--no-openfhe", "--rounds", "3", "--ours-cmd", cmd, "--out-dir", str(tmp_path)])
    assert len(results) == 1
    res = results[0]
    ours = res["summary"]["ours"]
    assert [c["seconds"] for c in res["calls"]["ours"]] == [0.1, 0.2, 0.3]
    assert ours["bootstrap_s_median"] == pytest.approx(0.2)
    assert ours["bootstrap_s_min"] == pytest.approx(0.1)
    assert ours["min_bits"] == 11.0  # the worst call
    assert ours["median_bits"] == 22.0  # the median of the calls' medians
    assert ours["levels_left"] == 2
    assert ours["key_bytes"] == 2_000_000_000 and ours["max_rss_bytes"] == 4_000_000_000
    assert res["not_run"] == {"openfhe": "not asked for (--no-openfhe)"}
    assert res["ratio_ours_openfhe"] is None
    assert res["uptime_before"] and res["uptime_after"]
    out = capsys.readouterr().out
    assert "- OpenFHE: not available (not asked for (--no-openfhe))" in out
    assert "| bootstrapping (s), median over calls | 0.20 |" in out
    written = json.loads((tmp_path / "peers-bootstrap-quick.json").read_text())
    assert written[0]["summary"]["ours"]["median_bits"] == 22.0


def test_missing_side_is_reported(tmp_path, capsys):
    cmd = f"{sys.executable} {tmp_path / 'absent.py'}"
    with pytest.raises(SystemExit, match="nothing ran"):
        drv.main(["--quick", "--no-openfhe", "--ours-cmd", cmd, "--out-dir", str(tmp_path),
                  "--setup-timeout", "60"])
    out = capsys.readouterr().out
    assert "- ours: not available (" in out and "did not start the protocol" in out
    written = json.loads((tmp_path / "peers-bootstrap-quick.json").read_text())
    assert "did not start the protocol" in written[0]["not_run"]["ours"]


OPENFHE_PY = ROOT / ".venv-peers" / "openfhe" / "bin" / "python"


@pytest.mark.skipif(not OPENFHE_PY.exists(), reason="no .venv-peers/openfhe (bench/peers/setup.sh)")
def test_openfhe_smallest_setup(tmp_path, capsys):
    """OpenFHE through the driver at the set-up of its iterative-ckks-bootstrapping example (N = 2^12, 8 slots,
    insecure), with the smallest level budget: a few seconds."""
    results = drv.main(["--quick", "--no-ours", "--rounds", "1", "--slots", "8", "--level-budget", "1,1",
                        "--levels-after", "1", "--out-dir", str(tmp_path)])
    ofhe = results[0]["summary"]["openfhe"]
    params = results[0]["implementations"]["openfhe"]["params"]
    assert params["log_n"] == 12 and params["slots"] == 8 and params["levels_after"] == 1
    assert ofhe["calls"] == 1 and ofhe["bootstrap_s_median"] > 0
    assert ofhe["levels_left"] == params["levels_after"]
    assert ofhe["key_bytes"] > 0 and ofhe["max_rss_bytes"] > 0
    # OpenFHE's iterative-ckks-bootstrapping example takes 17 bits as one bootstrapping's measured precision
    # at N = 2^12 with 8 slots.
    assert ofhe["min_bits"] >= 17.0
    assert "- ours: not available (not asked for (--no-ours))" in capsys.readouterr().out
