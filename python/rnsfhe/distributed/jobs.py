"""The embarrassingly parallel jobs of the library on an :class:`~rnsfhe.distributed.Executor`: look-up
tables on a batch of LWE ciphertexts (PEGASUS Fig. 2), the extraction / table / repacking stages of the
PEGASUS pipeline on many CKKS ciphertexts (Fig. 6), private decision trees on many queries (PEGASUS
Section V.B), the per-point min-index stage of a k-means update (PEGASUS Section V.C) and any independent
CKKS / BFV job. Each is a key bundle (:class:`~rnsfhe.distributed.Keys`), a task registered for the
workers, and a client-side function that turns objects into wire bytes and back.
"""

from __future__ import annotations

import pickle
from typing import Any, Callable, Dict, List, Optional, Sequence

from ..apps import EncryptedQuery, EncryptedTree, KMeansServer, KMeansSession, TreeScaling, TreeServerKey
from ..lwe import LookupTable, LutServer, LweCiphertext
from ..pegasus import Pipeline, PipelineServer
from ._core import Executor, KeyMismatchError, Keys, Progress, register_loader, register_task

# ----- look-up tables on LWE ciphertexts ----------------------------------------------------------------------


def lut_keys(server: LutServer) -> Keys:
    """The key bundle of a :class:`rnsfhe.lwe.LutServer`: its blind-rotation key and switching key (seeded
    wire bytes) with its parameter set (a ``PegasusParams``, which pickles by name) and scale."""
    return Keys("lut", {"brk": server.blind_rotation_key_bytes(), "ksk": server.switching_key.to_bytes()},
                {"params": server.params, "scale": server.scale})


@register_loader("lut")
def _load_lut(blobs: Dict[str, bytes], meta: Dict[str, Any]) -> LutServer:
    return LutServer.from_bytes(meta["params"], blobs["brk"], blobs["ksk"], scale=meta["scale"])


def _ciphertexts(items: List[bytes], dimension: int, modulus: int) -> List[LweCiphertext]:
    return [LweCiphertext.from_bytes(b, dimension, modulus) for b in items]


@register_task("lut")
def _task_lut(server: LutServer, items: List[bytes], args: Dict[str, Any]) -> List[bytes]:
    table = LookupTable.from_bytes(args["table"], server.params)
    cts = _ciphertexts(items, args["dimension"], args["modulus"])
    out = server.lut_many(cts, table)
    if args["switch"]:
        out = [server.switch_to_lwe(c) for c in out]
    return [c.to_bytes() for c in out]


def _check_inputs(server: LutServer, cts: Sequence[LweCiphertext]) -> None:
    """KeyMismatchError unless the ciphertexts are of the keys' LWE dimension and one modulus."""
    for i, c in enumerate(cts):
        if c.dimension != server.lwe_dimension:
            raise KeyMismatchError(
                f"ciphertext {i} has LWE dimension {c.dimension}, the keys ({server.params.preset}) "
                f"{server.lwe_dimension}: keys of another context (or a table output not switched back)")
        if c.modulus != cts[0].modulus:
            raise KeyMismatchError(f"ciphertext {i} is modulo {c.modulus}, ciphertext 0 modulo {cts[0].modulus}")


def lut_batch(executor: Executor, server: LutServer, cts: Sequence[LweCiphertext],
              table: LookupTable, *, switch: bool = False, keys: Optional[Keys] = None,
              chunk_size: Optional[int] = None, progress: Optional[Progress] = None) -> List[LweCiphertext]:
    """``server.lut_many(cts, table)`` (PEGASUS Fig. 2) on the executor's workers, the same ciphertexts
    bit for bit; with ``switch`` each output is switched back to the LWE key (``switch_to_lwe``, Fig. 9).
    ``keys`` (from :func:`lut_keys`) saves serializing the keys again on every call."""
    cts = list(cts)
    if not cts:
        return []
    _check_inputs(server, cts)
    if table.input_modulus != cts[0].modulus:
        raise KeyMismatchError(f"the table reads inputs modulo {table.input_modulus}, the ciphertexts are "
                               f"modulo {cts[0].modulus}")
    args = {"table": table.to_bytes(), "dimension": server.lwe_dimension, "modulus": cts[0].modulus,
            "switch": switch}
    out = executor.map("lut", keys or lut_keys(server), [c.to_bytes() for c in cts], args,
                       chunk_size=chunk_size, progress=progress)
    dimension, modulus = (server.lwe_dimension, server.lwe_modulus) if switch else (server.lut_dimension,
                                                                                   server.q0)
    return _ciphertexts(out, dimension, modulus)


# ----- the stages of the PEGASUS pipeline ---------------------------------------------------------------------


def pipeline_keys(pipeline: Pipeline, *, allow_insecure: bool = False) -> Keys:
    """The key bundle of a PEGASUS pipeline (``session.pipeline``): its parameters, options and evaluation
    keys (seeded wire bytes; no secret), loaded on each worker by ``PipelineServer.from_bytes``
    (``allow_insecure``: the workers' opt-in for parameters below 128 bits)."""
    return Keys("pegasus", {"params": pipeline.params_to_bytes(), "options": pipeline.options_to_bytes(),
                            "keys": pipeline.keys_to_bytes()},
                {"preset": pipeline.preset, "allow_insecure": allow_insecure,
                 "lwe": (pipeline.lwe_dimension, pipeline.lwe_modulus),
                 "lut": (pipeline.lut_dimension, pipeline.q0)})


@register_loader("pegasus")
def _load_pipeline(blobs: Dict[str, bytes], meta: Dict[str, Any]) -> Any:
    server = PipelineServer.from_bytes(meta["preset"], blobs["params"], blobs["options"], blobs["keys"],
                                       allow_insecure=meta["allow_insecure"])
    return server, meta


@register_task("pegasus_extract")
def _task_extract(loaded: Any, items: List[bytes], args: Any) -> List[bytes]:
    server, _ = loaded
    return [pickle.dumps([c.to_bytes() for c in server.to_lwe(ct)]) for ct in items]


@register_task("pegasus_lut")
def _task_pipeline_lut(loaded: Any, items: List[bytes], args: Dict[str, Any]) -> List[bytes]:
    server, meta = loaded
    table = LookupTable.from_bytes(args["table"], server.lwe_params)
    return [c.to_bytes() for c in server.lut_lwe(_ciphertexts(items, *meta["lwe"]), table)]


@register_task("pegasus_repack")
def _task_repack(loaded: Any, items: List[bytes], args: Dict[str, Any]) -> List[bytes]:
    server, meta = loaded
    table = LookupTable.from_bytes(args["table"], server.lwe_params)
    return [server.repack(_ciphertexts(pickle.loads(group), *meta["lut"]), table) for group in items]


def pipeline_lut(executor: Executor, keys: Keys, cts: Sequence[bytes], table: LookupTable, *,
                 chunk_size: Optional[int] = None, progress: Optional[Progress] = None) -> List[bytes]:
    """``ct.lut(table)`` (PEGASUS Fig. 6) of many CKKS ciphertexts (wire bytes in and out) with its three
    stages spread over the workers: the extraction of each ciphertext (steps 1-4, one item per
    ciphertext), the look-up tables of all their slots together (step 5, chunks of LWE ciphertexts; the
    ``progress`` of this stage) and the repacking of each ciphertext (steps 6-10). Bit for bit
    ``session.lut``; ``keys`` from :func:`pipeline_keys`, ``table`` from ``session.table(f)``. The
    results load with ``ckks.Ciphertext.from_bytes(data, session.context, session.evaluator)``."""
    extracted = [pickle.loads(b) for b in executor.map("pegasus_extract", keys, list(cts), chunk_size=1)]
    args = {"table": table.to_bytes()}
    flat = [b for lwes in extracted for b in lwes]
    outs = executor.map("pegasus_lut", keys, flat, args, chunk_size=chunk_size, progress=progress)
    groups, start = [], 0
    for lwes in extracted:
        groups.append(pickle.dumps(outs[start:start + len(lwes)]))
        start += len(lwes)
    return executor.map("pegasus_repack", keys, groups, args, chunk_size=1)


# ----- private decision trees -------------------------------------------------------------------------------


def tree_keys(clf: Any, server_key: TreeServerKey, scaling: TreeScaling, *, allow_insecure: bool = False) -> Keys:
    """The key bundle of decision-tree inference: the client's server key (wire bytes and its parameters),
    the server's fitted scikit-learn tree (pickled: the workers are the server's own machines) and the
    public scaling; each worker builds ``EncryptedTree.from_sklearn`` once."""
    return Keys("tree", {"server_key": server_key.to_bytes(), "params": server_key.params_bytes(),
                         "clf": pickle.dumps(clf)},
                {"knots": [list(k) for k in scaling.knots], "allow_insecure": allow_insecure})


@register_loader("tree")
def _load_tree(blobs: Dict[str, bytes], meta: Dict[str, Any]) -> Any:
    key = TreeServerKey.from_bytes(blobs["server_key"], blobs["params"], allow_insecure=meta["allow_insecure"])
    tree = EncryptedTree.from_sklearn(pickle.loads(blobs["clf"]), key, TreeScaling(meta["knots"]))
    return key, tree


@register_task("tree")
def _task_tree(loaded: Any, items: List[bytes], args: Any) -> List[bytes]:
    key, tree = loaded
    return [tree.predict(EncryptedQuery.from_bytes(b, key)).to_bytes() for b in items]


def predict_trees(executor: Executor, keys: Keys, queries: Sequence[bytes], *,
                  chunk_size: Optional[int] = None, progress: Optional[Progress] = None) -> List[bytes]:
    """The encrypted labels (wire bytes, ``EncryptedLabel.from_bytes(b, client)``) of many encrypted
    queries (wire bytes, ``EncryptedQuery.to_bytes()``) under the tree of ``keys`` (:func:`tree_keys`)."""
    return executor.map("tree", keys, list(queries), chunk_size=chunk_size, progress=progress)


# ----- the min-index stage of a k-means update ----------------------------------------------------------------


def kmeans_keys(session: KMeansSession, *, allow_insecure: bool = False) -> Keys:
    """The key bundle of the min-index stage of a k-means update (PEGASUS Section V.C): the session's
    pipeline parameters, options and evaluation keys and its comparison key (the switch from the table ring
    back to the LWE key, Fig. 9), as seeded wire bytes (no secret), with its sizes and options; each worker
    loads ``apps.KMeansServer.from_bytes`` once (``allow_insecure``: the workers' opt-in for parameters
    below 128 bits)."""
    server = session.server()
    return Keys("kmeans", {"params": session.params_to_bytes(), "options": session.options_to_bytes(),
                           "keys": session.keys_to_bytes(), "comparison_key": session.comparison_key_to_bytes()},
                {"layout": server.layout, "radius": server.radius, "distance_bound": server.distance_bound,
                 "threshold": server.threshold, "allow_insecure": allow_insecure, "spaces": server.spaces})


@register_loader("kmeans")
def _load_kmeans(blobs: Dict[str, bytes], meta: Dict[str, Any]) -> KMeansServer:
    points, clusters, features = meta["layout"]
    return KMeansServer.from_bytes(points, clusters, features, meta["radius"], blobs["params"], blobs["options"],
                                   blobs["keys"], blobs["comparison_key"], distance_bound=meta["distance_bound"],
                                   threshold=meta["threshold"], allow_insecure=meta["allow_insecure"])


@register_task("kmeans")
def _task_kmeans(server: KMeansServer, items: List[bytes], args: Any) -> List[bytes]:
    # The chunk's points in one call of the Rust per-point part (its tables in one batch over rayon).
    (space, _), k = server.spaces, server.layout[1]
    points = [pickle.loads(b) for b in items]
    bits = server.assignment_bits(_ciphertexts([c for p in points for c in p], *space))
    return [pickle.dumps([c.to_bytes() for c in bits[i * k:(i + 1) * k]]) for i in range(len(points))]


def kmeans_lut_stage(executor: Executor, keys: Keys, distances: Sequence[LweCiphertext], *,
                     chunk_size: Optional[int] = None, progress: Optional[Progress] = None) -> List[LweCiphertext]:
    """The assignment bits of a k-means update (PEGASUS Section V.C, the per-point part of the min-index
    sector of Table VIII, Eq. (2)) from the extracted distances (``KMeansSession.distances``: LWE
    ciphertexts under the LWE key, point-major, ``clusters`` per point), one point per item: each worker
    runs the Rust ``KMeansServer.assignment_bits`` (the min-tree of ``Comparator.min_of`` and the bit
    table) on its chunk, with the keys of ``keys`` (:func:`kmeans_keys`). The bits are those of the
    session's own ``min_index`` bit for bit, under the look-up-table ring's key (modulo q0), point-major.
    The cluster sizes and their reciprocals need every point's bits and stay with the caller
    (``reciprocals(bits)`` of ``session.server()`` or of ``keys.load()``)."""
    d = list(distances)
    (space, bit_space), (points, clusters, _) = keys.meta["spaces"], keys.meta["layout"]
    if not d or len(d) % clusters or len(d) > points * clusters:
        raise ValueError(f"{len(d)} distances are not those of 1 to {points} whole points of {clusters} "
                         f"clusters")
    for i, c in enumerate(d):
        if (c.dimension, c.modulus) != tuple(space):
            raise KeyMismatchError(
                f"distance {i} has LWE dimension {c.dimension} modulo {c.modulus}, the keys read dimension "
                f"{space[0]} modulo {space[1]}: distances of another session (or not extracted)")
    items = [pickle.dumps([c.to_bytes() for c in d[i:i + clusters]]) for i in range(0, len(d), clusters)]
    out = executor.map("kmeans", keys, items, chunk_size=chunk_size, progress=progress)
    return _ciphertexts([b for item in out for b in pickle.loads(item)], *bit_space)


# ----- independent CKKS / BFV (or any picklable) jobs -------------------------------------------------------


# The evaluation keys a bundle may carry, by the keyword of ``Context.evaluator`` that takes each.
_EVALUATOR_KEYS = ("relin_key", "galois_keys", "bootstrapping_keys")


def evaluator_keys(context: Any, *, relin_key: Any = None, galois_keys: Any = None,
                   bootstrapping_keys: Any = None) -> Keys:
    """The key bundle of a CKKS or BFV evaluator: the context and its evaluation keys (relinearization,
    Galois, and for CKKS the bootstrapping keys of ``KeySet.bootstrapping_keys``: Galois keys and the
    sparse-secret encapsulation keys, in place of ``galois_keys``), each in its wire format; a worker builds
    ``context.evaluator(relin_key=..., galois_keys=..., bootstrapping_keys=...)`` once and passes it to the
    jobs of :func:`run_jobs` (an evaluator itself does not pickle)."""
    blobs = {"context": pickle.dumps(context)}
    given = {"relin_key": relin_key, "galois_keys": galois_keys, "bootstrapping_keys": bootstrapping_keys}
    for name in _EVALUATOR_KEYS:
        if given[name] is not None:
            blobs[name] = pickle.dumps(given[name])
    return Keys("evaluator", blobs)


@register_loader("evaluator")
def _load_evaluator(blobs: Dict[str, bytes], meta: Dict[str, Any]) -> Any:
    keys = {name: pickle.loads(blobs[name]) for name in _EVALUATOR_KEYS if name in blobs}
    return pickle.loads(blobs["context"]).evaluator(**keys)


def shared_keys(shared: Any) -> Keys:
    """A key bundle of any picklable object (a context, keys, a table; rnsfhe objects pickle through their
    wire format), pickled once and loaded once per worker."""
    return Keys("pickle", {"obj": pickle.dumps(shared)})


@register_loader("pickle")
def _load_pickle(blobs: Dict[str, bytes], meta: Dict[str, Any]) -> Any:
    return pickle.loads(blobs["obj"])


@register_task("call")
def _task_call(shared: Any, items: List[bytes], args: Dict[str, Any]) -> List[bytes]:
    fn = pickle.loads(args["fn"])
    return [pickle.dumps(fn(shared, pickle.loads(b))) for b in items]


def _pickle_function(fn: Callable[..., Any]) -> bytes:
    """``fn`` pickled for the workers: by value with cloudpickle where it is installed (Ray ships it), so
    that lambdas and the functions of a script (``__main__``) run too; by reference otherwise."""
    try:
        # cloudpickle ships no type information (and may be missing): its one call here is typed by use.
        import cloudpickle  # type: ignore[import-untyped, import-not-found, unused-ignore]

        return cloudpickle.dumps(fn)
    except ImportError:
        pass
    try:
        return pickle.dumps(fn)
    except (pickle.PicklingError, AttributeError, TypeError) as e:
        raise TypeError(f"run_jobs needs a module-level function without cloudpickle installed: {e}") from e


def run_jobs(executor: Executor, fn: Callable[[Any, Any], Any], inputs: Sequence[Any], shared: Any = None,
             *, keys: Optional[Keys] = None, chunk_size: Optional[int] = None,
             progress: Optional[Progress] = None) -> List[Any]:
    """``[fn(shared, x) for x in inputs]`` on the workers: ``shared`` goes once per worker (any picklable
    object, :func:`shared_keys`; or pass ``keys=evaluator_keys(...)`` and ``fn`` receives the evaluator
    built from them), every input and result as a pickle (ciphertexts: their wire bytes). ``fn`` is any
    function with cloudpickle installed (as with Ray), else a module-level function or a method such as
    ``ckks.Evaluator.square``."""
    fn_bytes = _pickle_function(fn)
    out = executor.map("call", keys or shared_keys(shared), [pickle.dumps(x) for x in inputs],
                       {"fn": fn_bytes}, chunk_size=chunk_size, progress=progress)
    return [pickle.loads(b) for b in out]


__all__ = ["lut_keys", "lut_batch", "pipeline_keys", "pipeline_lut", "tree_keys", "predict_trees", "kmeans_keys", "kmeans_lut_stage", "evaluator_keys", "shared_keys",
           "run_jobs"]
