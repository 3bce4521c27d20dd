"""``python -m rnsfhe.distributed.bench``: the throughput of a batch of look-up tables (PEGASUS Fig. 2) on
the single-process rayon path and on a local Ray cluster of 1 and 2 worker processes, at equal cores, the
time to ship the keys, and a projection for 20 and 100 cores (docs/distributed.md).

Equal cores: the local path runs in a child process with ``RAYON_NUM_THREADS=w``; the cluster has ``w``
nodes of one CPU, each worker with ``RAYON_NUM_THREADS=1``. Every timing is the median of ``--rounds``
runs after a warm-up; the distributed results are checked against the local ones (bit for bit).

The projection (printed with its inputs) is a model, not a measurement: ``T(P) = L c / P + L b / B +
K / B + ceil(L / (4 P)) o``, with ``c`` the measured seconds per table on one thread, ``b`` the bytes per
table on the wire (input and output ciphertext), ``B`` the driver's bandwidth (``--bandwidth-mbit``,
1000 by default), ``K`` the bytes of the keys (sent once to each node; Ray's object store sends them
node to node, so the driver's link carries them once) and ``o`` the measured overhead per chunk (the
distributed time minus the local one at equal cores, per chunk).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List

import numpy as np


def _loadavg() -> str:
    try:
        with open("/proc/loadavg") as f:
            return f.read().strip()
    except OSError:
        return "n/a"


def _median_time(fn: Any, rounds: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _local_child(path: str, rounds: int) -> None:
    """The local rayon path in this process (started with RAYON_NUM_THREADS set): prints its median."""
    from rnsfhe.lwe import LookupTable, LutServer, LweCiphertext

    with open(path, "rb") as f:
        d = pickle.load(f)
    server = LutServer.from_bytes(d["preset"], d["brk"], d["ksk"], scale=d["scale"])
    cts = [LweCiphertext.from_bytes(b, server.lwe_dimension, server.lwe_modulus) for b in d["cts"]]
    table = LookupTable.from_bytes(d["table"], server.params)
    out: List[bytes] = []

    def run() -> None:
        out[:] = [c.to_bytes() for c in server.lut_many(cts, table)]

    seconds = _median_time(run, rounds)
    print(json.dumps({"seconds": seconds, "ok": out == d["want"]}))


def main(argv: Any = None) -> Dict[str, Any]:
    ap = argparse.ArgumentParser(prog="python -m rnsfhe.distributed.bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", default="InsecureTest", help="LWE parameter set (rnsfhe.lwe.presets())")
    ap.add_argument("--luts", type=int, default=256, help="tables per batch")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--bandwidth-mbit", type=float, default=1000.0, help="driver bandwidth of the projection")
    ap.add_argument("--json", help="write the figures to this file")
    ap.add_argument("--_local-child", dest="child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        _local_child(a.child, a.rounds)
        return {}

    from rnsfhe import __version__, lwe
    from rnsfhe import distributed as D

    # The load average says how quiet the machine was: a figure taken while other jobs run is indicative
    # only (the overhead is a ratio of two timings that other jobs disturb differently).
    print(f"rnsfhe {__version__}, {os.cpu_count()} CPUs, preset {a.preset}, load before: {_loadavg()}")
    session = lwe.LutSession(a.preset, seed=1, allow_insecure=True)
    server = session.server()
    table = session.table(lambda v: max(v, 0.0))
    cts = session.encrypt(np.linspace(-1.0, 1.0, a.luts))
    want = [c.to_bytes() for c in session.lut_many(cts, table)]
    keys = D.lut_keys(server)
    ct_in, ct_out = len(cts[0].to_bytes()), len(want[0])
    res: Dict[str, Any] = {"preset": a.preset, "luts": a.luts, "rounds": a.rounds, "key_bytes": keys.nbytes,
                           "ct_in_bytes": ct_in, "ct_out_bytes": ct_out, "load_before": _loadavg(),
                           "local": {}, "ray": {}, "key_ship_seconds": {}}
    with tempfile.NamedTemporaryFile(suffix=".pkl", delete=False) as f:
        pickle.dump({"preset": a.preset, "brk": keys.blobs["brk"], "ksk": keys.blobs["ksk"],
                     "scale": server.scale, "cts": [c.to_bytes() for c in cts], "table": table.to_bytes(),
                     "want": want}, f)
        data = f.name
    try:
        for w in a.workers:
            env = dict(os.environ, RAYON_NUM_THREADS=str(w))
            r = subprocess.run([sys.executable, "-m", "rnsfhe.distributed.bench", "--_local-child", data,
                                "--rounds", str(a.rounds)], env=env, capture_output=True, text=True, check=True)
            got = json.loads(r.stdout.strip().splitlines()[-1])
            if not got["ok"]:
                raise SystemExit("the local child's results differ from the session's")
            res["local"][w] = got["seconds"]
            print(f"local rayon, {w} thread(s): {a.luts} tables in {got['seconds']:.3f} s "
                  f"({a.luts / got['seconds']:.1f} tables/s)")
    finally:
        os.unlink(data)
    store = max(200_000_000, 3 * keys.nbytes)
    for w in a.workers:
        with D.local_cluster(nodes=w, cpus_per_node=1, object_store_bytes=store,
                             env={"RAYON_NUM_THREADS": "1"}) as address:
            with D.connect(address, timeout=60) as ex:
                ship = ex.preload(keys)
                chunks = -(-a.luts // max(1, -(-a.luts // (4 * ex.workers))))
                out: List[Any] = []

                def run() -> None:
                    out[:] = D.lut_batch(ex, server, cts, table, keys=keys)

                seconds = _median_time(run, a.rounds)
                if [c.to_bytes() for c in out] != want:
                    raise SystemExit("the distributed results differ from the local ones")
                if sorted(i["loads"] for i in ex.worker_info()) != [1] * w or ex.stats.key_puts != 1:
                    raise SystemExit(f"keys were not shipped once per node: {ex.stats}, {ex.worker_info()}")
        res["ray"][w] = seconds
        res["key_ship_seconds"][w] = ship
        overhead = seconds / res["local"][w] - 1
        print(f"ray, {w} worker process(es): {seconds:.3f} s ({a.luts / seconds:.1f} tables/s), overhead "
              f"{100 * overhead:+.1f}% against local at {w} thread(s); keys ({keys.nbytes / 1e6:.1f} MB) "
              f"shipped and loaded in {ship:.2f} s; {chunks} chunks")
        res.setdefault("chunks", {})[w] = chunks
    # The projection.
    w = max(a.workers)
    c = res["local"][min(a.workers)] * min(a.workers) / a.luts
    per_chunk = max(0.0, (res["ray"][w] - res["local"][w]) * w / res["chunks"][w])
    bandwidth = a.bandwidth_mbit * 1e6 / 8
    res["model"] = {"seconds_per_lut_one_thread": c, "overhead_per_chunk_seconds": per_chunk,
                    "bandwidth_bytes_per_second": bandwidth, "projection": {}}
    print(f"projection (model, module docstring): c = {1e3 * c:.2f} ms per table on one thread, o = "
          f"{1e3 * per_chunk:.2f} ms per chunk, b = {ct_in + ct_out} B per table, K = {keys.nbytes / 1e6:.1f} "
          f"MB, B = {a.bandwidth_mbit:.0f} Mbit/s")
    for cores in (20, 100):
        for luts in (a.luts, 65536):
            t = luts * c / cores + luts * (ct_in + ct_out) / bandwidth + keys.nbytes / bandwidth + \
                -(-luts // (4 * cores)) * per_chunk
            res["model"]["projection"][f"{cores} cores, {luts} tables"] = t
            print(f"  {cores:3d} cores, {luts:6d} tables: {t:8.3f} s ({luts / t:9.1f} tables/s; one thread "
                  f"{luts * c:9.2f} s)")
    res["load_after"] = _loadavg()
    print(f"load after: {res['load_after']}")
    if a.json:
        with open(a.json, "w") as out_file:
            json.dump(res, out_file, indent=2)
    return res


if __name__ == "__main__":
    main()
