# Type stubs of the compiled extension `rnsfhe._rnsfhe` (python/src/lib.rs and common.rs), checked against
# the built module by mypy's stubtest in python/tests/test_stubs.py. The scheme submodules are in ckks.pyi,
# bfv.pyi, apps.pyi, lwe.pyi and pegasus.pyi next to this file.

from collections.abc import Sequence
from typing import SupportsIndex, TypeAlias, TypedDict, final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import apps as apps, bfv as bfv, ckks as ckks, lwe as lwe, pegasus as pegasus

__all__ = [
    "__version__",
    "is_prime",
    "ntt_primes_near_power_of_two",
    "ntt_primes_of_bits",
    "qu_xu_max_eta",
    "qu_xu_primes",
    "NttPlan",
    "BasisConverter",
    "DecodeError",
    "WireHeader",
    "read_header",
    "get_load_limits",
    "reseal",
    "set_load_limits",
    "ckks",
    "bfv",
    "apps",
    "lwe",
    "pegasus",
]

# What the bindings accept as bytes: `bytes`, or anything `bytes()` copies (bytearray, memoryview).
_Bytes: TypeAlias = bytes | bytearray | memoryview

class _LoadLimits(TypedDict):
    max_log_n: int
    max_moduli: int
    max_words: int
    allow_insecure: bool

__version__: str

class DecodeError(ValueError):
    field: str
    offset: int

@final
class WireHeader:
    @property
    def version(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def kind_code(self) -> int: ...
    @property
    def fingerprint(self) -> int: ...
    @property
    def is_secret(self) -> bool: ...

def read_header(data: _Bytes) -> WireHeader: ...
def reseal(data: _Bytes) -> bytes: ...
def get_load_limits() -> _LoadLimits: ...
def set_load_limits(
    *,
    max_log_n: SupportsIndex | None = None,
    max_moduli: SupportsIndex | None = None,
    max_words: SupportsIndex | None = None,
    allow_insecure: bool | None = None,
) -> _LoadLimits: ...

# primes
def is_prime(n: SupportsIndex) -> bool: ...
def ntt_primes_near_power_of_two(bits: SupportsIndex, two_n: SupportsIndex, count: SupportsIndex) -> list[int]: ...
def ntt_primes_of_bits(
    bits: SupportsIndex, two_n: SupportsIndex, count: SupportsIndex, exclude: Sequence[SupportsIndex] = ()
) -> list[int]: ...
def qu_xu_max_eta(m: SupportsIndex, two_n: SupportsIndex, count: SupportsIndex) -> int: ...
def qu_xu_primes(
    m: SupportsIndex,
    eta: SupportsIndex,
    two_n: SupportsIndex,
    count: SupportsIndex,
    exclude: Sequence[SupportsIndex] = (),
) -> list[int]: ...

@final
class NttPlan:
    def __new__(cls, n: SupportsIndex, p: SupportsIndex) -> NttPlan: ...
    def forward(self, a: ArrayLike) -> NDArray[np.uint64]: ...
    def inverse(self, a: ArrayLike) -> NDArray[np.uint64]: ...
    @property
    def n(self) -> int: ...
    @property
    def p(self) -> int: ...
    @property
    def psi(self) -> int: ...
    @property
    def uses_ifma(self) -> bool: ...
    def __reduce__(self) -> tuple[type[NttPlan], tuple[int, int]]: ...

@final
class BasisConverter:
    def __new__(
        cls, n: SupportsIndex, source: Sequence[SupportsIndex], target: Sequence[SupportsIndex], mode: str = "fast"
    ) -> BasisConverter: ...
    def convert(self, x: ArrayLike) -> NDArray[np.uint64]: ...
    def error_terms(self, x: ArrayLike) -> NDArray[np.uint64]: ...
    def unguarded_error_terms(self, x: ArrayLike) -> NDArray[np.uint64]: ...
    @property
    def mode(self) -> str: ...
    @property
    def eta(self) -> int | None: ...
    @property
    def theorem1_bound(self) -> float | None: ...
