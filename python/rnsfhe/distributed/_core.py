"""The executor of :mod:`rnsfhe.distributed`: chunks of independent work run by a task against keys loaded
once, in this process (rayon threads inside each call) or on the actors of a Ray cluster.

What crosses a process boundary is bytes: a :class:`Keys` bundle (the wire bytes of evaluation keys, put
into Ray's object store once per executor and loaded once per actor), the wire bytes of every input
ciphertext and of every result. A chunk is identified by its index: results are stored by index, so a
chunk that runs twice (a retry after a worker died) cannot produce a duplicate, and a chunk whose worker
died is sent again until it has a result or its retries are spent.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import socket
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import rnsfhe

#: A progress callback: ``progress(done, total)`` in items, called after every finished chunk.
Progress = Callable[[int, int], None]

#: A task: ``task(loaded_keys, items, args) -> results``, one result (bytes) per item, in order.
Task = Callable[[Any, List[bytes], Any], List[bytes]]


class DistributedError(RuntimeError):
    """An error of the distributed executor (the cluster, its workers or what was shipped to them)."""


class ClusterUnreachableError(DistributedError, ConnectionError):
    """No Ray cluster answered at the address within the timeout (the message names both)."""


class VersionMismatchError(DistributedError):
    """The workers run another rnsfhe, Python or Ray version than the client (the message lists them)."""


class KeyMismatchError(DistributedError, ValueError):
    """Keys that do not belong to the parameters or ciphertexts of the job (another context)."""


class WorkerTimeoutError(DistributedError, TimeoutError):
    """A chunk produced no result within the executor's ``task_timeout`` (seconds, named)."""


# ----- what workers can run: loaders of key bundles and tasks, by name -------------------------------------

_LOADERS: Dict[str, Callable[[Dict[str, bytes], Dict[str, Any]], Any]] = {}
_TASKS: Dict[str, Task] = {}


def register_loader(kind: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Registers ``load(blobs, meta) -> keys`` for key bundles of ``kind`` (workers import the module that
    registers it, :mod:`rnsfhe.distributed.jobs`)."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        _LOADERS[kind] = fn
        return fn

    return wrap


def register_task(name: str) -> Callable[[Task], Task]:
    """Registers a task under ``name`` (see :data:`Task`)."""

    def wrap(fn: Task) -> Task:
        _TASKS[name] = fn
        return fn

    return wrap


def _lookup(table: Dict[str, Any], name: str, what: str) -> Any:
    from . import jobs  # noqa: F401  (registers the tasks and loaders of the library)

    try:
        return table[name]
    except KeyError:
        raise DistributedError(f"unknown {what} {name!r}; known: {sorted(table)}") from None


@dataclasses.dataclass(frozen=True)
class Keys:
    """A bundle of evaluation keys as wire bytes (``blobs``) and small picklable settings (``meta``),
    loaded on a worker by the loader registered for ``kind``. Shipped once per executor (one object-store
    put) and loaded once per worker; ``fingerprint`` (BLAKE2b of everything) identifies it."""

    kind: str
    blobs: Dict[str, bytes]
    meta: Dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def fingerprint(self) -> str:
        """BLAKE2b-128 of the kind, every blob and the settings, in hex: the bundle's identity (one
        object-store put and one load per worker for each)."""
        h = hashlib.blake2b(self.kind.encode(), digest_size=16)
        for name in sorted(self.blobs):
            h.update(name.encode())
            h.update(len(self.blobs[name]).to_bytes(8, "little"))
            h.update(self.blobs[name])
        h.update(repr(sorted(self.meta.items())).encode())
        return h.hexdigest()

    @property
    def nbytes(self) -> int:
        """The bytes of the keys (what each node receives once)."""
        return sum(len(b) for b in self.blobs.values())

    def load(self) -> Any:
        """The keys as the objects the tasks use. Raises :class:`KeyMismatchError` when the Rust loaders
        refuse the bytes (keys of another context: the fingerprint of their header; or damaged bytes)."""
        loader = _lookup(_LOADERS, self.kind, "key kind")
        try:
            return loader(self.blobs, self.meta)
        except rnsfhe.DecodeError as e:
            raise KeyMismatchError(f"the {self.kind!r} keys do not load under {self.meta}: {e}") from e


def version_info() -> Dict[str, str]:
    """What client and workers must agree on: rnsfhe's version, the Python version (pickles of tasks and
    settings) and Ray's (absent without Ray)."""
    info = {"rnsfhe": rnsfhe.__version__, "python": "%d.%d" % sys.version_info[:2]}
    try:
        import ray

        info["ray"] = ray.__version__
    except ImportError:
        pass
    return info


def run_chunk(loaded: Any, task: str, items: List[bytes], args: Any) -> List[bytes]:
    """Runs ``task`` on one chunk; checks it returns one result per item."""
    out = _lookup(_TASKS, task, "task")(loaded, items, args)
    if len(out) != len(items):
        raise DistributedError(f"task {task!r} returned {len(out)} results for {len(items)} items")
    return out


@dataclasses.dataclass
class Stats:
    """What an executor shipped and did: key bundles put into the object store and their bytes, item and
    result bytes, chunks run and chunks sent again after a worker died."""

    key_puts: int = 0
    key_bytes: int = 0
    item_bytes: int = 0
    result_bytes: int = 0
    chunks: int = 0
    retries: int = 0


def _chunks(n: int, size: int) -> List[Tuple[int, int]]:
    return [(i, min(i + size, n)) for i in range(0, n, size)]


class Executor:
    """Runs tasks over chunks of items, locally or on a Ray cluster; made by :func:`local` or
    :func:`connect`. ``workers`` is how many chunks run at once (1 locally: each chunk runs on all of
    rayon's threads); ``stats`` counts what was shipped."""

    def __init__(self, backend: "_Backend") -> None:
        self._backend = backend
        self.stats = Stats()

    @property
    def is_distributed(self) -> bool:
        """True on a Ray cluster, False in this process."""
        return self._backend.distributed

    @property
    def workers(self) -> int:
        """How many chunks run at once: the worker actors on a cluster, 1 in this process."""
        return self._backend.workers

    def map(self, task: str, keys: Keys, items: Sequence[bytes], args: Any = None,
            chunk_size: Optional[int] = None, progress: Optional[Progress] = None) -> List[bytes]:
        """The results of ``task`` on every item (wire bytes in, wire bytes out, in order). Items are cut
        into chunks of ``chunk_size`` (default: an even share of at least 4 chunks per worker);
        ``progress(done, total)`` is called after each chunk."""
        items = list(items)
        if not items:
            return []
        if chunk_size is None:
            chunk_size = max(1, -(-len(items) // (4 * self.workers)))
        if chunk_size < 1:
            raise ValueError(f"chunk_size = {chunk_size} must be at least 1")
        bounds = _chunks(len(items), chunk_size)
        self.stats.item_bytes += sum(len(b) for b in items)
        results = self._backend.run(self, task, keys, items, bounds, args, progress)
        out: List[bytes] = []
        for (lo, hi), chunk in zip(bounds, results):
            if chunk is None or len(chunk) != hi - lo:
                raise DistributedError(f"chunk [{lo}, {hi}) has no result")
            out.extend(chunk)
        self.stats.result_bytes += sum(len(b) for b in out)
        self.stats.chunks += len(bounds)
        return out

    def preload(self, keys: Keys) -> float:
        """Ships ``keys`` and loads them on every worker now rather than with the first chunk (a warm-up,
        and the key shipping time of the benchmark); returns the seconds it took."""
        t = time.perf_counter()
        self._backend.preload(self, keys)
        return time.perf_counter() - t

    def worker_info(self) -> List[Dict[str, Any]]:
        """One dict per worker: ``pid``, ``node``, ``loads`` (key bundles it loaded), ``versions``."""
        return self._backend.info()

    def close(self) -> None:
        """Releases the workers (and disconnects from the cluster)."""
        self._backend.close()

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class _Backend:
    distributed = False
    workers = 1

    def run(self, ex: Executor, task: str, keys: Keys, items: List[bytes], bounds: List[Tuple[int, int]],
            args: Any, progress: Optional[Progress]) -> List[Optional[List[bytes]]]:
        raise NotImplementedError

    def preload(self, ex: Executor, keys: Keys) -> str:
        """Ships and loads ``keys`` on every worker; returns their fingerprint."""
        raise NotImplementedError

    def info(self) -> List[Dict[str, Any]]:
        raise NotImplementedError

    def close(self) -> None:
        pass


class _Local(_Backend):
    """This process: keys loaded once (cached by fingerprint), chunks one after the other, each on all of
    rayon's threads (the library's own parallelism)."""

    def __init__(self) -> None:
        self._loaded: Dict[str, Any] = {}
        self._loads = 0

    def preload(self, ex: Executor, keys: Keys) -> str:
        fp = keys.fingerprint
        if fp not in self._loaded:
            self._loaded[fp] = keys.load()
            self._loads += 1
            ex.stats.key_bytes += keys.nbytes
        return fp

    def run(self, ex: Executor, task: str, keys: Keys, items: List[bytes], bounds: List[Tuple[int, int]],
            args: Any, progress: Optional[Progress]) -> List[Optional[List[bytes]]]:
        fp = self.preload(ex, keys)
        out: List[Optional[List[bytes]]] = []
        done = 0
        for lo, hi in bounds:
            out.append(run_chunk(self._loaded[fp], task, items[lo:hi], args))
            done += hi - lo
            if progress is not None:
                progress(done, len(items))
        return out

    def info(self) -> List[Dict[str, Any]]:
        return [{"pid": os.getpid(), "node": "local", "loads": self._loads, "versions": version_info()}]


def local() -> Executor:
    """An executor that runs everything in this process (no Ray needed): the reference every distributed
    result is checked against."""
    return Executor(_Local())


def _probe(address: str, timeout: float) -> None:
    """Raises ClusterUnreachableError unless something accepts TCP connections at ``host:port`` within
    ``timeout`` seconds (Ray itself would retry for a minute or more before failing)."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"address {address!r} must be host:port (the head's GCS address)")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as e:
        raise ClusterUnreachableError(
            f"no Ray cluster reachable at {address} within the timeout of {timeout} s ({e}); start one "
            f"with `ray start --head --port {port}` or check the address") from None


def connect(address: str, *, timeout: float = 30.0, workers: Optional[int] = None,
            task_timeout: float = 600.0, retries: int = 3) -> Executor:
    """An executor on the Ray cluster at ``address`` (``host:port`` of the head, as printed by
    ``ray start --head``): one worker actor per CPU of the cluster (or ``workers``), spread over the
    nodes. Raises :class:`ClusterUnreachableError` when nothing answers within ``timeout`` seconds,
    :class:`VersionMismatchError` when the workers run other versions, and ImportError naming the extra
    when Ray is not installed. ``retries`` is how often a chunk is sent again after its worker died;
    ``task_timeout`` bounds the wait for one chunk. A process holds one Ray connection: connecting again
    ends the previous executor's."""
    try:
        import ray  # noqa: F401
    except ImportError as e:
        raise ImportError(
            "rnsfhe.distributed.connect needs Ray: pip install 'rnsfhe[distributed]' (or use "
            "rnsfhe.distributed.local())") from e
    _probe(address, timeout)
    from ._ray import RayBackend

    return Executor(RayBackend(address, timeout=timeout, workers=workers, task_timeout=task_timeout,
                               retries=retries))
