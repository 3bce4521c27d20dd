"""A Ray cluster of several nodes on this machine, for tests, the benchmark and trying things out: each node
is one `ray start --block` process (the head first, the others joining it), so that stopping the cluster
is stopping those processes by their ids (`ray stop` would stop every Ray process of the machine)."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, Iterator, List, Optional

from ._core import DistributedError


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(procs: List["subprocess.Popen[bytes]"]) -> None:
    # The joined nodes first, then the head: each `ray start --block` stops its node's processes on
    # SIGTERM (a few seconds); what is left of its process group is then killed.
    for p in reversed(procs):
        if p.poll() is None:
            p.terminate()
        try:
            p.wait(timeout=45)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(p.pid, signal.SIGKILL)


@contextlib.contextmanager
def local_cluster(nodes: int = 2, cpus_per_node: int = 1, object_store_bytes: int = 200_000_000,
                  env: Optional[Dict[str, str]] = None, timeout: float = 90.0) -> Iterator[str]:
    """Starts a Ray cluster of ``nodes`` node processes on this machine (``ray start --head`` on a free
    port, then ``ray start --address`` for each other node, ``cpus_per_node`` CPUs and an object store of
    ``object_store_bytes`` each; ``env`` added to their environment, e.g. ``RAYON_NUM_THREADS``), yields
    the head's address once every node has joined, and stops them. Raises DistributedError naming the
    node that did not start within ``timeout`` seconds."""
    import ray

    port = _free_port()
    tmp = tempfile.mkdtemp(prefix="rr", dir="/tmp")  # short: Ray's socket paths have a length limit
    cli = str(Path(sys.executable).with_name("ray"))
    common = ["--num-cpus", str(cpus_per_node), "--object-store-memory", str(object_store_bytes),
              "--disable-usage-stats", "--block"]
    penv = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", **(env or {}))
    log_path = Path(tmp) / "cluster.log"
    procs: List["subprocess.Popen[bytes]"] = []
    address = f"127.0.0.1:{port}"
    with open(log_path, "wb") as log:
        try:
            procs.append(subprocess.Popen(
                [cli, "start", "--head", "--port", str(port), "--temp-dir", tmp, "--include-dashboard=false"]
                + common, stdout=log, stderr=subprocess.STDOUT, env=penv, start_new_session=True))
            deadline = time.time() + timeout
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if time.time() > deadline or procs[0].poll() is not None:
                        raise DistributedError(f"the Ray head did not start within {timeout} s: "
                                               f"{log_path.read_text()[-2000:]}") from None
                    time.sleep(0.3)
            for _ in range(nodes - 1):
                procs.append(subprocess.Popen([cli, "start", "--address", address] + common, stdout=log,
                                              stderr=subprocess.STDOUT, env=penv, start_new_session=True))
            ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
            try:
                while len([n for n in ray.nodes() if n["Alive"]]) < nodes:
                    if time.time() > deadline or any(p.poll() is not None for p in procs):
                        raise DistributedError(f"{nodes} Ray nodes did not all join within {timeout} s: "
                                               f"{log_path.read_text()[-2000:]}")
                    time.sleep(0.3)
            finally:
                ray.shutdown()
            yield address
        finally:
            if ray.is_initialized():
                ray.shutdown()
            _stop(procs)
            shutil.rmtree(tmp, ignore_errors=True)
