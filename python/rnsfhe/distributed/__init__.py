"""Independent work of the library spread over a Ray cluster, or run in this process (docs/distributed.md).

The embarrassingly parallel parts of PEGASUS and its applications -- look-up tables on a batch of LWE
ciphertexts (PEGASUS Fig. 2), the extraction, table and repacking stages of the pipeline on many CKKS
ciphertexts (Fig. 6), private decision trees on many queries (Section V.B), the per-point
min-index stage of a k-means update (Section V.C) -- and independent CKKS / BFV jobs run on an :class:`Executor`:

* :func:`local` runs them in this process (no Ray needed; each chunk on rayon's threads);
* :func:`connect` runs them on the Ray cluster at ``host:port`` (``pip install 'rnsfhe[distributed]'``):
  one worker actor per CPU. Evaluation keys go into Ray's object store once per executor and are loaded
  once per worker (``Executor.stats.key_puts``, ``Executor.worker_info()``); ciphertexts travel as their
  wire bytes. A worker that dies mid-batch costs a resend of its chunk (``stats.retries``); results are
  stored by chunk index, so nothing is lost or duplicated.

The same call runs on either executor with the same results::

    from rnsfhe import lwe, distributed
    s = lwe.LutSession("InsecureTest", allow_insecure=True)
    with distributed.local() as ex:                    # or distributed.connect("10.0.0.1:6379")
        out = distributed.lut_batch(ex, s.server(), s.encrypt(x), s.table(np.tanh),
                                    progress=lambda done, total: print(done, "/", total))

Errors: :class:`ClusterUnreachableError` (nothing at the address within the timeout, named),
:class:`VersionMismatchError` (workers with another rnsfhe, Python or Ray), :class:`KeyMismatchError`
(keys of another context, caught before shipping where the client can see it, else when a worker loads
them), :class:`WorkerTimeoutError` (no result within ``task_timeout``).
"""

from __future__ import annotations

from ._core import (
    ClusterUnreachableError,
    DistributedError,
    Executor,
    KeyMismatchError,
    Keys,
    Stats,
    VersionMismatchError,
    WorkerTimeoutError,
    connect,
    local,
    version_info,
)
from ._cluster import local_cluster
from .jobs import (
    evaluator_keys,
    kmeans_keys,
    kmeans_lut_stage,
    lut_batch,
    lut_keys,
    pipeline_keys,
    pipeline_lut,
    predict_trees,
    run_jobs,
    shared_keys,
    tree_keys,
)

__all__ = [
    "Executor",
    "Keys",
    "Stats",
    "local",
    "connect",
    "local_cluster",
    "version_info",
    "lut_keys",
    "lut_batch",
    "pipeline_keys",
    "pipeline_lut",
    "tree_keys",
    "predict_trees",
    "kmeans_keys",
    "kmeans_lut_stage",
    "evaluator_keys",
    "shared_keys",
    "run_jobs",
    "DistributedError",
    "ClusterUnreachableError",
    "VersionMismatchError",
    "KeyMismatchError",
    "WorkerTimeoutError",
]
