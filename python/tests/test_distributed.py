"""rnsfhe.distributed: the same jobs in this process and on a local two-node Ray cluster (a head and one more
node, one CPU each, started here as two `ray start --block` processes), every distributed result compared
with the local path; a worker killed mid-batch; keys shipped once per node; the errors (unreachable
cluster, version mismatch, keys of another context). Small insecure parameters ("InsecureTest").

The cluster tests skip, saying why, only where Ray is not installed (python/requirements-distributed.txt);
the local tests always run.
"""

import json
import os
import pickle
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

import rnsfhe
from rnsfhe import apps, bfv, ckks, lwe
from rnsfhe import distributed as D

try:
    import ray
except ImportError:  # pragma: no cover - the test venv installs Ray
    ray = None

needs_ray = pytest.mark.skipif(
    ray is None, reason="Ray is not installed: pip install -r python/requirements-distributed.txt "
    "(or 'rnsfhe[distributed]') to run the cluster tests")


@pytest.fixture(scope="module")
def session():
    return lwe.LutSession("InsecureTest", seed=1, allow_insecure=True)


@pytest.fixture(scope="module")
def relu(session):
    return session.table(lambda v: max(v, 0.0))


@pytest.fixture(scope="module")
def inputs(session):
    return session.encrypt(np.linspace(-1.0, 1.0, 48))


def _bytes(cts):
    return [c.to_bytes() for c in cts]


# ----- without Ray ---------------------------------------------------------------------------------------------


def test_public_names_documented():
    from conftest import assert_public_names_documented

    assert_public_names_documented(D)


def test_lut_server_from_bytes_is_the_session_without_secrets(session, relu, inputs):
    server = session.server()
    brk, ksk = server.blind_rotation_key_bytes(), server.switching_key.to_bytes()
    loaded = lwe.LutServer.from_bytes("InsecureTest", brk, ksk)
    assert (loaded.lwe_dimension, loaded.lut_dimension, loaded.q0, loaded.algorithm) == (
        session.lwe_dimension, session.lut_dimension, session.q0, session.algorithm)
    assert rnsfhe.read_header(brk).kind == "blind-rotation key" and not rnsfhe.read_header(brk).is_secret
    # Bit for bit the session's tables and switches, also after pickling.
    want = _bytes(session.lut_many(inputs[:4], relu))
    assert _bytes(loaded.lut_many(inputs[:4], relu)) == want
    assert _bytes(pickle.loads(pickle.dumps(loaded)).lut_many(inputs[:4], relu)) == want
    out = session.lut(inputs[0], relu)
    assert loaded.switch_to_lwe(out).to_bytes() == session.switch_to_lwe(out).to_bytes()
    # Keys of another parameter set: the loaders refuse them (the fingerprint in the header).
    with pytest.raises(rnsfhe.DecodeError):
        lwe.LutServer.from_bytes("PegasusTable4", brk, ksk)
    with pytest.raises(rnsfhe.DecodeError):
        lwe.LutServer.from_bytes("InsecureTest", brk[:-1], ksk)


def test_local_lut_batch_is_lut_many_with_progress(session, relu, inputs):
    seen = []
    with D.local() as ex:
        out = D.lut_batch(ex, session.server(), inputs, relu, chunk_size=10,
                          progress=lambda done, total: seen.append((done, total)))
        assert _bytes(out) == _bytes(session.lut_many(inputs, relu))
        assert seen == [(10, 48), (20, 48), (30, 48), (40, 48), (48, 48)]
        switched = D.lut_batch(ex, session.server(), inputs, relu, switch=True)
        assert _bytes(switched) == [session.switch_to_lwe(c).to_bytes() for c in out]
        assert ex.worker_info()[0]["loads"] == 1     # one key bundle, loaded once for both calls


def _refuses_keys_of_another_context(ex, session, relu, inputs):
    """Keys of another context: caught before shipping when the client can see it (a table output, under
    the ring key, is not an input of the LWE keys), else when a worker loads them (the bytes of the keys
    under another parameter set: the Rust loader's DecodeError, as KeyMismatchError)."""
    with pytest.raises(D.KeyMismatchError, match="LWE dimension"):
        D.lut_batch(ex, session.server(), session.lut_many(inputs[:2], relu), relu)
    keys = D.lut_keys(session.server())
    bad = D.Keys("lut", keys.blobs, {"params": "PegasusTable4", "scale": keys.meta["scale"]})
    with pytest.raises(D.KeyMismatchError, match="do not load"):
        D.lut_batch(ex, session.server(), inputs[:2], relu, keys=bad)


def test_local_errors(session, relu, inputs):
    with D.local() as ex:
        _refuses_keys_of_another_context(ex, session, relu, inputs)
        with pytest.raises(ValueError, match="chunk_size"):
            D.lut_batch(ex, session.server(), inputs[:2], relu, chunk_size=0)
    with pytest.raises(ValueError, match="host:port"):
        D.connect("no-port-here", timeout=1)


# ----- the shared jobs: run on any executor, compared with the local one -------------------------------------


@pytest.fixture(scope="module")
def tree_job():
    from sklearn.datasets import load_iris
    from sklearn.tree import DecisionTreeClassifier

    X, y = load_iris(return_X_y=True)
    clf = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    client = apps.TreeClient("InsecureTest", allow_insecure=True, seed=11)
    scaling = apps.TreeScaling.ranges(X)
    rows = X[::15]                                            # 10 queries
    queries = [client.encrypt(scaling, list(x), seed=i).to_bytes() for i, x in enumerate(rows)]
    keys = D.tree_keys(clf, client.server_key, scaling, allow_insecure=True)
    return client, keys, queries, clf.predict(rows)


def _tree_labels(ex, tree_job):
    client, keys, queries, _ = tree_job
    out = D.predict_trees(ex, keys, queries, chunk_size=3)
    return [client.decrypt(apps.EncryptedLabel.from_bytes(b, client)) for b in out]


@pytest.fixture(scope="module")
def kmeans_job():
    """A k-means session (InsecureTest) of 8 points of well-separated blobs in 3 clusters, its key bundle,
    the extracted distances to centroids near the blobs' centres and the session's own min-index sector
    on them (bits and reciprocals): the reference of the distributed stage."""
    import warnings

    rng = np.random.default_rng(2)
    centres = np.array([[0.6, 0.5], [-0.6, -0.4], [0.5, -0.6]])
    x = centres[np.arange(8) % 3] + rng.uniform(-0.1, 0.1, (8, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # InsecureTest
        s = apps.KMeansSession(8, 3, 2, 1.0, seed=3, allow_insecure=True)
    distances = s.distances(x, 0.9 * centres)
    bits, reciprocals = s.min_index(distances)
    return s, D.kmeans_keys(s, allow_insecure=True), distances, bits, reciprocals


def _kmeans_bits(ex, kmeans_job):
    s, keys, distances, _, _ = kmeans_job
    return D.kmeans_lut_stage(ex, keys, distances, chunk_size=3)


def test_kmeans_server_from_bytes(kmeans_job):
    """The worker's server of the per-point part, loaded from the session's bytes: the session's bits and
    reciprocals bit for bit; bytes of another kind or damaged ones are DecodeErrors."""
    s, keys, distances, bits, reciprocals = kmeans_job
    server = keys.load()
    own = s.server()
    assert isinstance(server, apps.KMeansServer) and server.layout == own.layout == (8, 3, 2)
    assert server.threshold == own.threshold == s.threshold and server.spaces == own.spaces
    assert (server.radius, server.distance_bound) == (own.radius, own.distance_bound) == (1.0, 3.0)
    assert _bytes(server.assignment_bits(distances[:9]) + server.assignment_bits(distances[9:])) == _bytes(bits)
    assert _bytes(server.reciprocals(bits)) == _bytes(reciprocals)
    with pytest.raises(ValueError, match="whole points"):
        server.assignment_bits(distances[:4])
    b = keys.blobs
    args = (8, 3, 2, 1.0, b["params"], b["options"], b["keys"])
    for bad in (b["comparison_key"][:-1], b["keys"], b"\0" * 40):
        with pytest.raises(rnsfhe.DecodeError):
            apps.KMeansServer.from_bytes(*args, bad, allow_insecure=True)
    with pytest.raises(rnsfhe.DecodeError):  # parameters below 128 bits without the opt-in
        apps.KMeansServer.from_bytes(*args, b["comparison_key"])


@pytest.fixture(scope="module")
def ckks_job():
    s = ckks.Session("Rec128N13")
    cts = [s.encrypt(np.full(4, float(i))) for i in range(6)]
    return s, cts, D.evaluator_keys(s.context, relin_key=s.keys.relin)


@pytest.fixture(scope="module")
def pipeline_job():
    import warnings

    from rnsfhe import pegasus

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # InsecureTest
        s = pegasus.Session("InsecureTest", slots=8, seed=1, allow_insecure=True)
    cts = [s.encrypt(np.linspace(-7, 7, 8) * (i + 1) / 3) for i in range(3)]
    table = s.table(np.tanh)
    want = [ct.lut(table).to_bytes() for ct in cts]
    return D.pipeline_keys(s.pipeline, allow_insecure=True), [ct.to_bytes() for ct in cts], table, want


@pytest.mark.filterwarnings("ignore:WARNING. these CKKS parameters:UserWarning")  # a test chain
def test_local_bootstrapping_with_a_dense_secret():
    # A worker holds no secret: the bundle carries the relinearization key and the bootstrapping keys
    # (Galois and sparse-secret encapsulation keys) as bytes, and the worker bootstraps a ciphertext of a
    # dense (uniform ternary) secret; the client decrypts within the bootstrapper's bound.
    ctx = ckks.Context(log_n=11, log_scale=51, q0_bits=60, levels=19, special_primes=4, special_bits=55,
                       dnum=5, secret="ternary", allow_insecure=True)
    btp = ckks.Bootstrapper(ctx, 64)
    keys = ctx.keygen(bootstrapper=btp)
    assert keys.sparse_secret == btp.sparse_secret == 32
    bundle = D.evaluator_keys(ctx, relin_key=keys.relin, bootstrapping_keys=keys.bootstrapping_keys)
    z = np.random.default_rng(4).uniform(-1, 1, 64)
    ct = ctx.encryptor(keys).encrypt(z, slots=64)
    dec = ctx.decryptor(keys)
    want = dec.decrypt(ct)

    def bootstrap(ev, c):
        return ev.bootstrap(c, ckks.Bootstrapper(ctx, 64))

    with D.local() as ex:
        (out,) = D.run_jobs(ex, bootstrap, [ct], keys=bundle)
    assert out.level == btp.output_level
    assert np.abs(dec.decrypt(out).real - want.real).max() <= btp.error_bound(ct.scale)["total"]


def test_local_jobs(session, tree_job, ckks_job, kmeans_job, pipeline_job):
    with D.local() as ex:
        keys, cts, table, want = pipeline_job
        assert D.pipeline_lut(ex, keys, cts, table, chunk_size=5) == want      # bit for bit session.lut
        assert _tree_labels(ex, tree_job) == list(tree_job[3])
        # The k-means bits of the workers are the session's own min-index bits, and the reciprocals the
        # caller computes from them are the session's.
        s, _, _, bits, reciprocals = kmeans_job
        out = _kmeans_bits(ex, kmeans_job)
        assert _bytes(out) == _bytes(bits) and _bytes(s.server().reciprocals(out)) == _bytes(reciprocals)
        assert (np.round(s.decrypt_bits(out)) == np.eye(3)[np.arange(8) % 3]).all()
        with pytest.raises(D.KeyMismatchError, match="LWE dimension"):
            D.kmeans_lut_stage(ex, kmeans_job[1], bits)
        with pytest.raises(ValueError, match="whole points"):
            D.kmeans_lut_stage(ex, kmeans_job[1], kmeans_job[2][:4])
        s, cts, keys = ckks_job
        out = D.run_jobs(ex, ckks.Evaluator.square, cts, keys=keys)
        assert [o.to_bytes() for o in out] == [s.evaluator.square(c).to_bytes() for c in cts]
        assert np.allclose(s.decrypt(out[3], real=True)[:4], 9.0, atol=1e-4)
        assert D.run_jobs(ex, pow, [2, 3], 2) == [4, 8]        # shared=2: pow(2, x)
        # BFV through the same bundle of evaluation keys: exact products.
        b = bfv.Session(bfv.Context.generate(t=65537, depth=1))
        bcts = [b.encrypt(np.array([i, -i, 3])) for i in range(3)]
        bkeys = D.evaluator_keys(b.context, relin_key=b.keys.relin)
        out = D.run_jobs(ex, lambda ev, ct: ev.multiply(ct, ct), bcts, keys=bkeys)
        assert [b.decrypt(o)[:3].tolist() for o in out] == [[i * i, i * i, 9] for i in range(3)]
        # Closures too (cloudpickle, which Ray brings): the function goes by value.
        offset = 5
        assert D.run_jobs(ex, lambda base, x: base * x + offset, [1, 2], 10) == [15, 25]


# ----- a local two-node Ray cluster ------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster():
    """A head and one more node on this machine, one CPU each (rnsfhe.distributed.local_cluster: two
    `ray start --block` processes, stopped by their ids)."""
    if ray is None:
        pytest.skip("Ray is not installed")
    with D.local_cluster(nodes=2, cpus_per_node=1, object_store_bytes=200_000_000) as address:
        yield address


@pytest.fixture
def ex(cluster):
    with D.connect(cluster, timeout=60) as ex:
        yield ex


@needs_ray
def test_cluster_lut_batch_keys_once_per_node(ex, session, relu, inputs):
    assert ex.is_distributed and ex.workers == 2
    nodes = {w["node"] for w in ex.worker_info()}
    assert len(nodes) == 2                                    # one worker on each node
    seen = []
    keys = D.lut_keys(session.server())
    want = _bytes(session.lut_many(inputs, relu))
    for _ in range(2):
        out = D.lut_batch(ex, session.server(), inputs, relu, keys=keys, chunk_size=6,
                          progress=lambda done, total: seen.append(done))
        assert _bytes(out) == want
    assert seen[7] == seen[15] == 48 and seen == sorted(seen[:8]) + sorted(seen[8:])  # 8 chunks a batch
    # One put into the object store for both batches; each node's worker loaded the keys once.
    assert ex.stats.key_puts == 1 and ex.stats.key_bytes == keys.nbytes
    assert sorted(w["loads"] for w in ex.worker_info()) == [1, 1]
    assert ex.stats.retries == 0 and ex.stats.chunks == 16


@needs_ray
def test_cluster_jobs_equal_local(ex, session, tree_job, ckks_job, kmeans_job, pipeline_job):
    keys, cts, table, want = pipeline_job
    assert D.pipeline_lut(ex, keys, cts, table, chunk_size=5) == want
    with D.local() as loc:
        assert _tree_labels(ex, tree_job) == _tree_labels(loc, tree_job) == list(tree_job[3])
        s, _, _, bits, reciprocals = kmeans_job
        out = _kmeans_bits(ex, kmeans_job)
        assert _bytes(out) == _bytes(_kmeans_bits(loc, kmeans_job)) == _bytes(bits)
        assert _bytes(s.server().reciprocals(out)) == _bytes(reciprocals)
    s, cts, keys = ckks_job
    out = D.run_jobs(ex, ckks.Evaluator.square, cts, keys=keys)
    assert [o.to_bytes() for o in out] == [s.evaluator.square(c).to_bytes() for c in cts]
    offset = 5
    assert D.run_jobs(ex, lambda base, x: base * x + offset, [1, 2], 10) == [15, 25]


@needs_ray
def test_cluster_worker_killed_mid_batch(ex, session, relu, inputs):
    before = {w["pid"]: w["node"] for w in ex.worker_info()}
    victim = next(iter(before))
    killed = []

    def progress(done, total):
        if not killed:            # after the first chunk, with the others in flight
            os.kill(victim, signal.SIGKILL)
            killed.append(done)

    out = D.lut_batch(ex, session.server(), inputs, relu, chunk_size=4, progress=progress)
    assert killed and _bytes(out) == _bytes(session.lut_many(inputs, relu))
    assert len(out) == len(inputs)                             # nothing lost, nothing twice
    assert ex.stats.retries >= 1
    after = {w["pid"] for w in ex.worker_info()}
    assert victim not in after and len(after) == 2             # Ray restarted the actor


@needs_ray
def test_cluster_errors(cluster, session, relu, inputs, monkeypatch):
    # Nothing listening: an error naming the timeout, quickly.
    t = time.time()
    with pytest.raises(D.ClusterUnreachableError, match="timeout of 2.0 s"):
        D.connect(f"127.0.0.1:{_free_port()}", timeout=2.0)
    assert time.time() - t < 10
    with D.connect(cluster, timeout=60) as ex:
        _refuses_keys_of_another_context(ex, session, relu, inputs)
    # A client of another version than its workers.
    import rnsfhe.distributed._core as core

    real = core.version_info
    monkeypatch.setattr(core, "version_info", lambda: dict(real(), rnsfhe="0.0.0-other"))  # this process only
    with pytest.raises(D.VersionMismatchError, match="0.0.0-other"):
        D.connect(cluster, timeout=60)


@needs_ray
def test_three_party_server_on_the_cluster(cluster, tmp_path):
    """examples/three_party with `server.py --ray-address`: the same client and decryptor, the same
    statistics; the computation ran on the cluster's workers."""
    from test_three_party import _request, _run, _start_server

    state = tmp_path / "state"
    proc, url = _start_server(tmp_path / "record", "--ray-address", cluster)
    try:
        _run("client.py", "--server", url, "--state", str(state))
        result = json.loads(_run("decryptor.py", "--state", str(state), "--json"))
        status, _ = _request(url, "GET", "/metrics")
        assert status == 200
    finally:
        proc.terminate()
        proc.wait(60)
    x = np.loadtxt(state / "data.txt")
    assert abs(result["mean"] - np.mean(x)) < 1e-5 and abs(result["variance"] - np.var(x)) < 1e-3


def test_three_party_server_refuses_an_unreachable_cluster(tmp_path):
    from test_three_party import EXAMPLE

    out = subprocess.run([sys.executable, str(EXAMPLE / "server.py"), "--port", "0", "--ray-address",
                          f"127.0.0.1:{_free_port()}", "--ray-timeout", "2"], capture_output=True, text=True,
                         timeout=120)
    if ray is None:
        assert "pip install" in out.stderr
    else:
        assert out.returncode != 0 and "timeout of 2.0 s" in out.stderr


def test_without_ray_the_local_path_runs_and_connect_names_the_extra():
    """A process where Ray cannot be imported: the local executor works, connect says what to install."""
    code = """
import sys
sys.modules["ray"] = None  # import ray raises ImportError
import numpy as np
from rnsfhe import lwe, distributed as D
s = lwe.LutSession("InsecureTest", seed=1, allow_insecure=True)
cts = s.encrypt(np.array([-1.0, 0.5]))
t = s.table(lambda v: max(v, 0.0))
with D.local() as ex:
    assert [c.to_bytes() for c in D.lut_batch(ex, s.server(), cts, t)] == [c.to_bytes() for c in s.lut_many(cts, t)]
    assert "ray" not in ex.worker_info()[0]["versions"]
try:
    D.connect("127.0.0.1:1", timeout=1)
except ImportError as e:
    print("ImportError:", e)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "pip install 'rnsfhe[distributed]'" in out.stdout
