"""The type stubs of the extension (python/rnsfhe/_rnsfhe/*.pyi) and the PEP 561 marker py.typed.

mypy's stubtest imports the built extension and compares every name, signature, default, property and
``__all__`` of ``rnsfhe._rnsfhe`` and its submodules ``ckks``, ``bfv``, ``apps``, ``lwe`` and ``pegasus`` with the stubs; the
entries it may skip are in ``stubtest-allowlist.txt``, each with its reason. Then mypy type-checks the
package's Python modules, the examples and a typed snippet (``--strict``) through the installed package,
as a user's type checker would see it, and must reject calls that the stubs rule out (so the stubs are in
use, not silently replaced by ``Any``).

mypy runs in a temporary directory (its cache goes there, not into the repository)."""

import pathlib
import subprocess
import sys
import textwrap
import warnings

import mypy  # noqa: F401  (pinned in requirements-dev.txt: a missing mypy fails here instead of skipping)

import rnsfhe

HERE = pathlib.Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples"
ALLOWLIST = HERE / "stubtest-allowlist.txt"
PACKAGE = pathlib.Path(rnsfhe.__file__).resolve().parent


def _run(args: list, cwd: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )


def _mypy(cwd: pathlib.Path, *args) -> subprocess.CompletedProcess:
    return _run(["mypy", "--no-incremental", "--cache-dir", str(cwd / ".mypy_cache"), *args], cwd)


def test_package_is_typed():
    assert (PACKAGE / "py.typed").is_file()
    stubs = sorted(p.name for p in (PACKAGE / "_rnsfhe").glob("*.pyi"))
    assert stubs == ["__init__.pyi", "apps.pyi", "bfv.pyi", "ckks.pyi", "lwe.pyi", "pegasus.pyi"]


def test_stubtest(tmp_path):
    # The package stub rnsfhe._rnsfhe covers its submodules: stubtest checks all six modules.
    result = _run(["mypy.stubtest", "rnsfhe._rnsfhe", "--allowlist", str(ALLOWLIST)], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "in 6 modules" in result.stdout, result.stdout


def test_package_and_examples_type_check(tmp_path):
    # The pure-Python modules (Session, apps.LogisticRegression, rnsfhe.distributed, ...) against the stubs,
    # and the examples.
    modules = [*PACKAGE.glob("*.py"), *PACKAGE.glob("distributed/*.py")]
    files = sorted(str(p) for p in [*modules, *EXAMPLES.glob("*.py")])
    result = _mypy(tmp_path, "--check-untyped-defs", *files)
    assert result.returncode == 0, result.stdout + result.stderr


# Typed use of both schemes and the applications; mypy --strict must accept it as is.
TYPED_USE = '''
from typing import Any

import numpy as np
from numpy.typing import NDArray

import rnsfhe
from rnsfhe import apps, bfv, ckks, lwe, pegasus
from rnsfhe._rnsfhe import apps as raw_apps


def ckks_use(ctx: ckks.Context) -> tuple[NDArray[np.float64], NDArray[np.complex128], float]:
    keys: ckks.KeySet = ctx.keygen(rotations=[1, -1], sum_slots=True)
    ev: ckks.Evaluator = ctx.evaluator(keys, auto_rescale=True)
    enc: ckks.Encryptor = ctx.encryptor(keys.public, evaluator=ev)
    dec: ckks.Decryptor = ctx.decryptor(keys)
    ct = enc.encrypt(np.array([1.0, 2.0]), slots=4)
    total: ckks.Ciphertext = (2 * ct + ct * ct - 0.5) / 3 + [1.0, 2.0]
    rotated: list[ckks.Ciphertext] = ev.rotate_many(total, [1, -1])
    p = ckks.Polynomial([0.5, 0.25, 0.0, -0.01])
    y: float = p(0.5)
    f = ct.chebyshev(np.tanh, (-1.0, 1.0), 7) + ct.polyval(p)
    real: NDArray[np.float64] = dec.decrypt(rotated[0].sum(), real=True)
    cplx: NDArray[np.complex128] = dec.decrypt(f, flooding_bits=0)
    stats: ckks.PrecisionStats = ckks.precision(real, real)
    data: bytes = ct.to_bytes(seeded=False, mac_key=bytearray(32))
    back = ckks.Ciphertext.from_bytes(memoryview(data), ckks.Context.from_bytes(ctx.to_bytes()), mac_key=bytes(32))
    level: int = back.level
    return real, cplx, y + stats.min_bits + stats.real.mean + level + ctx.log_q


def bfv_use() -> NDArray[np.int64]:
    ctx = bfv.Context.generate(t=65537, depth=1)
    keys = ctx.keygen(rotations=[1], column_swap=True)
    ev = ctx.evaluator(relin_key=keys.relin, galois_keys=keys.galois)
    ct = ctx.encryptor(keys.secret, evaluator=ev).encrypt([1, 2, 3])
    out: bfv.Ciphertext = (ct * ct - 5 * ct + np.array([7])).rotate_rows(1).rotate_columns()
    budget: float = ctx.decryptor(keys.secret).noise_budget(out)
    assert budget > 0 and ctx.supports_batching and out.parts == 2
    return ctx.decryptor(keys.secret).decrypt(out, signed=True)


def common_use() -> int:
    header: rnsfhe.WireHeader = rnsfhe.read_header(bytearray(ckks.Context().to_bytes()))
    limits = rnsfhe.get_load_limits()
    previous = rnsfhe.set_load_limits(max_log_n=limits["max_log_n"] + 1)
    rnsfhe.set_load_limits(**previous)
    plan = rnsfhe.NttPlan(1024, rnsfhe.ntt_primes_of_bits(30, 2048, 1)[0])
    spectrum: NDArray[np.uint64] = plan.forward(np.arange(1024, dtype=np.uint64))
    conv = rnsfhe.BasisConverter(16, rnsfhe.ntt_primes_of_bits(30, 32, 2), [97], mode="exact_float")
    eta: int | None = conv.eta
    return header.fingerprint + int(spectrum[0]) + (eta or 0)


def pegasus_use(s: pegasus.Session) -> NDArray[np.float64]:
    table: lwe.LookupTable = s.table(np.tanh)
    ct = s.encrypt(np.array([0.5, -1.0]), level=s.input_level)
    out: ckks.Ciphertext = ct.lut(np.tanh) + 2 * s.lut(ct, table)
    lwes: list[lwe.LweCiphertext] = ct.to_lwe()
    back: ckks.Ciphertext = s.repack(s.lut_lwe(lwes, table), table)
    bound: float = s.error_bound(1.0, table) + s.pipeline.grid_step
    assert out.level == back.level
    return s.decrypt_lwe(lwes) + bound


def apps_use(x: NDArray[np.float64], y: NDArray[np.float64]) -> Any:
    layout = raw_apps.PackedLayout(*x.shape)
    packed: NDArray[np.float64] = layout.pack_z(x, y)
    weights: NDArray[np.float64] = raw_apps.fit_plain(x, y, 5, 3, 1.0)
    accuracy, auc = raw_apps.metrics(list(x @ weights[1:]), list(y))
    return apps.LogisticRegression, packed, accuracy + auc
'''

# Calls the stubs rule out, each with the mypy error code it must produce.
MISTAKES = {
    'ckks.Context.from_preset(13)': "arg-type",
    'ckks.Context().keygen(rotations="1")': "arg-type",
    'bfv.Context(12, 65537).encryptor(b"key")': "arg-type",
    'rnsfhe.read_header("RNSF")': "arg-type",
    'ckks.Context().fingerprint.hex()': "attr-defined",
    'ckks.Context().decryptor(None)': "arg-type",
    'pegasus.Session("InsecureTest", slots="8")': "arg-type",
}


def test_typed_use_type_checks(tmp_path):
    snippet = tmp_path / "typed_use.py"
    snippet.write_text(TYPED_USE)
    result = _mypy(tmp_path, "--strict", str(snippet))
    assert result.returncode == 0, result.stdout + result.stderr


def test_mistakes_are_reported(tmp_path):
    lines = ["import rnsfhe", "from rnsfhe import bfv, ckks, pegasus", ""]
    first = len(lines) + 1
    lines += list(MISTAKES)
    snippet = tmp_path / "mistakes.py"
    snippet.write_text("\n".join(lines) + "\n")
    result = _mypy(tmp_path, "--show-error-codes", str(snippet))
    for i, (call, code) in enumerate(MISTAKES.items()):
        expected = f"mistakes.py:{first + i}: error:"
        assert any(
            line.startswith(expected) and line.endswith(f"[{code}]") for line in result.stdout.splitlines()
        ), f"{call}: expected a [{code}] error\n{result.stdout}"


def test_typed_use_runs():
    """The typed snippet is real code: it runs against the extension (the stubs describe what it does)."""
    namespace: dict = {}
    exec(compile(textwrap.dedent(TYPED_USE), "typed_use", "exec"), namespace)
    ckks_ctx = rnsfhe.ckks.Context.from_preset("Rec128N13")
    real, cplx, _ = namespace["ckks_use"](ckks_ctx)
    assert real.dtype.name == "float64" and cplx.dtype.name == "complex128"
    assert namespace["bfv_use"]().dtype.name == "int64"
    assert namespace["common_use"]() > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the insecure test preset
        session = rnsfhe.pegasus.Session("InsecureTest", slots=8, seed=1, allow_insecure=True)
    assert namespace["pegasus_use"](session).dtype.name == "float64"
    x, y = rnsfhe.apps.load_lbw()
    namespace["apps_use"](x, y)
