"""The Ray side of :mod:`rnsfhe.distributed`: worker actors that hold loaded keys, and the driver loop that
feeds them chunks, resends the chunks of a dead worker and stores results by chunk index."""

from __future__ import annotations

import collections
import logging
import os
import threading
from typing import Any, Dict, List, Optional, Tuple, Type

import ray
from ray.exceptions import GetTimeoutError, RayActorError, RayTaskError

from ._core import (
    ClusterUnreachableError,
    DistributedError,
    Executor,
    Keys,
    Progress,
    VersionMismatchError,
    WorkerTimeoutError,
    _Backend,
    run_chunk,
)
from . import _core

# Exceptions that mean "the worker is gone", after which a chunk is sent again (to the restarted actor).
_LOST: Tuple[Type[BaseException], ...] = (RayActorError,)
try:  # pragma: no cover - names differ across Ray versions
    from ray.exceptions import ActorUnavailableError, ObjectLostError, WorkerCrashedError

    _LOST = (RayActorError, ActorUnavailableError, ObjectLostError, WorkerCrashedError)
except ImportError:  # pragma: no cover
    pass


# One actor per worker CPU. Ray restarts a dead actor (max_restarts) on a live node; its loaded keys are
# gone, so it loads them again from the object store on its next chunk. Tasks are not retried by Ray
# itself (max_task_retries=0): the driver resends the chunk, which it can count and which stores results
# by chunk index, so a chunk that ran twice cannot duplicate anything.
@ray.remote(num_cpus=1, max_restarts=-1, max_task_retries=0)
class _Worker:
    def __init__(self) -> None:
        self._keys: Dict[str, Any] = {}
        self._loads = 0

    def info(self) -> Dict[str, Any]:
        return {"pid": os.getpid(), "node": ray.get_runtime_context().get_node_id(), "loads": self._loads,
                "versions": _core.version_info()}

    def _loaded(self, fingerprint: str, keys_ref: List[Any]) -> Any:
        # keys_ref is wrapped in a list so that Ray does not fetch and unpickle the keys for every chunk:
        # the first chunk fetches them (into this node's object store, once per node) and loads them.
        if fingerprint not in self._keys:
            keys: Keys = ray.get(keys_ref[0])
            self._keys[fingerprint] = keys.load()
            self._loads += 1
        return self._keys[fingerprint]

    def run(self, fingerprint: str, keys_ref: List[Any], task: str, index: int, items: List[bytes],
            args: Any) -> Tuple[int, List[bytes]]:
        return index, run_chunk(self._loaded(fingerprint, keys_ref), task, items, args)

    def preload(self, fingerprint: str, keys_ref: List[Any]) -> None:
        self._loaded(fingerprint, keys_ref)


class RayBackend(_Backend):
    distributed = True

    def __init__(self, address: str, *, timeout: float, workers: Optional[int], task_timeout: float,
                 retries: int) -> None:
        self._task_timeout = task_timeout
        self._retries = retries
        if ray.is_initialized():
            ray.shutdown()
        # ray.init waits for the GCS on its own schedule; run it in a thread so the timeout holds.
        failure: List[BaseException] = []
        t = threading.Thread(target=self._init, args=(address, failure), daemon=True)
        t.start()
        t.join(timeout)
        if t.is_alive():
            raise ClusterUnreachableError(
                f"the Ray cluster at {address} did not accept the client within the timeout of {timeout} s")
        if failure:
            raise ClusterUnreachableError(f"could not join the Ray cluster at {address}: {failure[0]}")
        cpus = int(ray.cluster_resources().get("CPU", 0))
        self.workers = workers if workers is not None else max(1, cpus)
        self._actors = [_Worker.options(scheduling_strategy="SPREAD").remote()  # type: ignore[attr-defined]
                        for _ in range(self.workers)]
        try:
            infos = ray.get([a.info.remote() for a in self._actors], timeout=timeout)
        except GetTimeoutError:
            self.close()
            raise WorkerTimeoutError(
                f"{self.workers} worker actors did not start within the timeout of {timeout} s (the "
                f"cluster has {cpus} CPUs; ask for fewer workers)") from None
        # Looked up in the module at call time in both processes: Ray ships the actor class by value.
        mine = _core.version_info()
        for info in infos:
            if info["versions"] != mine:
                self.close()
                raise VersionMismatchError(
                    f"worker pid {info['pid']} on node {info['node'][:12]} runs {info['versions']}, the "
                    f"client {mine}: install the same rnsfhe (and Python, Ray) on every node")
        self._puts: Dict[str, Any] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _init(address: str, failure: List[BaseException]) -> None:
        try:
            ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
        except BaseException as e:  # noqa: BLE001 - reported to the caller's thread
            failure.append(e)

    def _keys_ref(self, ex: Executor, keys: Keys) -> Tuple[str, Any]:
        fp = keys.fingerprint
        with self._lock:  # threads of one server share the executor: one put per bundle
            if fp not in self._puts:
                self._puts[fp] = ray.put(keys)
                ex.stats.key_puts += 1
                ex.stats.key_bytes += keys.nbytes
            return fp, self._puts[fp]

    def preload(self, ex: Executor, keys: Keys) -> str:
        fp, ref = self._keys_ref(ex, keys)
        ray.get([a.preload.remote(fp, [ref]) for a in self._actors], timeout=self._task_timeout)
        return fp

    def run(self, ex: Executor, task: str, keys: Keys, items: List[bytes], bounds: List[Tuple[int, int]],
            args: Any, progress: Optional[Progress]) -> List[Optional[List[bytes]]]:
        fp, ref = self._keys_ref(ex, keys)
        results: List[Optional[List[bytes]]] = [None] * len(bounds)
        queue = collections.deque(range(len(bounds)))
        attempts = [0] * len(bounds)
        pending: Dict[Any, Tuple[int, int]] = {}  # object ref -> (chunk, actor)
        done = 0

        def submit(actor: int) -> None:
            if queue:
                i = queue.popleft()
                lo, hi = bounds[i]
                r = self._actors[actor].run.remote(fp, [ref], task, i, items[lo:hi], args)
                pending[r] = (i, actor)

        # Two chunks in flight per worker: the next one is queued while the current one runs.
        for _ in range(2):
            for a in range(len(self._actors)):
                submit(a)
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=self._task_timeout)
            if not ready:
                raise WorkerTimeoutError(
                    f"no chunk of task {task!r} finished within task_timeout = {self._task_timeout} s")
            r = ready[0]
            i, actor = pending.pop(r)
            try:
                index, out = ray.get(r)
            except RayTaskError as e:
                # The worker's exception (KeyMismatchError, DecodeError, ValueError of the Rust code)
                # as the local path raises it; not resent: it would fail again.
                raise (e.cause if getattr(e, "cause", None) is not None else e) from None
            except _LOST as e:
                attempts[i] += 1
                ex.stats.retries += 1
                if attempts[i] > self._retries:
                    raise DistributedError(
                        f"chunk {i} of task {task!r} lost its worker {attempts[i]} times (retries = "
                        f"{self._retries}): {e}") from e
                queue.appendleft(i)
                submit(actor)
                continue
            if index != i:
                raise DistributedError(f"chunk {i} came back as chunk {index}")
            if results[i] is None:  # a chunk that ran twice is stored once
                results[i] = out
                lo, hi = bounds[i]
                done += hi - lo
                if progress is not None:
                    progress(done, len(items))
            submit(actor)
        return results

    def info(self) -> List[Dict[str, Any]]:
        return ray.get([a.info.remote() for a in self._actors], timeout=self._task_timeout)

    def close(self) -> None:
        for a in getattr(self, "_actors", []):
            ray.kill(a)
        self._actors = []
        if ray.is_initialized():
            ray.shutdown()
