"""rnsfhe: homomorphic encryption in RNS form, a Rust library with this Python front end.

The library implements RNS-CKKS, RNS-BFV (Halevi-Polyakov-Shoup), exact RNS basis conversion and PEGASUS
scheme switching:

* prime search: :func:`is_prime`, :func:`ntt_primes_near_power_of_two`, :func:`ntt_primes_of_bits`,
  :func:`qu_xu_max_eta`, :func:`qu_xu_primes`;
* the negacyclic NTT: :class:`NttPlan` (numpy ``uint64`` arrays in and out, the GIL released while it runs);
* RNS basis conversion in three modes: :class:`BasisConverter` ("fast", "exact_float", "exact_integer");
* CKKS, encrypted arithmetic on real and complex vectors: the submodule :mod:`rnsfhe.ckks` (start with
  ``rnsfhe.ckks.Session``), with polynomials and functions of the slots (``ct.polyval``, ``ct.chebyshev(f,
  ...)`` for any Python function, ``ct.sigmoid()``, ``ct.exp()``, ``ct.inverse()``, ``ct.sqrt(...)``) and
  statistics (``ct.sum()``, ``ct.mean()``, ``ct.var()``, ``ct.dot(...)``);
* BFV, exact arithmetic modulo t on encrypted integer vectors: the submodule :mod:`rnsfhe.bfv` (start with
  ``rnsfhe.bfv.Session``);
* LWE ciphertexts and look-up tables of any Python function by blind rotation (the LWE half of PEGASUS):
  the submodule :mod:`rnsfhe.lwe` (start with ``rnsfhe.lwe.LutSession``);
* PEGASUS, any function on encrypted CKKS values through look-up tables (CKKS -> LWE -> tables -> CKKS):
  the submodule :mod:`rnsfhe.pegasus` (start with ``rnsfhe.pegasus.Session``: ``ct.lut(np.tanh)``);
* applications: logistic-regression training on encrypted data (RNS-CKKS Table 4) with a scikit-learn-like
  ``rnsfhe.apps.LogisticRegression``, the lbw and uis datasets and a numpy reference, in :mod:`rnsfhe.apps`.

Errors raised by the Rust code surface as :class:`ValueError` with the Rust message; bytes that do not
decode (``from_bytes`` of keys, ciphertexts and contexts) raise :class:`DecodeError`, a ValueError whose
``field`` and ``offset`` name where decoding failed (shared by both schemes). :func:`read_header` reads an
object's header (kind, fingerprint, ``is_secret``) without parsing the rest, for servers that must refuse
secret material before loading anything. Every object ends with a BLAKE3 digest that loading checks first
(``to_bytes(mac_key=...)`` makes it a MAC under a key the parties share), and parameters loaded from bytes
(``Context.from_bytes``, unpickling) are bounded by :func:`get_load_limits` (change them with
:func:`set_load_limits` or the ``with`` block :func:`load_limits`).

>>> import rnsfhe
>>> p = rnsfhe.ntt_primes_of_bits(30, 2 * 1024, 1)[0]
>>> rnsfhe.is_prime(p) and p % 2048 == 1
True
>>> plan = rnsfhe.NttPlan(1024, p)
>>> a = list(range(1024))
>>> list(plan.inverse(plan.forward(a))) == a
True
"""

from ._rnsfhe import (
    BasisConverter,
    DecodeError,
    NttPlan,
    WireHeader,
    __version__,
    get_load_limits,
    is_prime,
    ntt_primes_near_power_of_two,
    ntt_primes_of_bits,
    qu_xu_max_eta,
    qu_xu_primes,
    read_header,
    reseal,
    set_load_limits,
)
from . import apps, bfv, ckks, lwe, pegasus
from ._common import load_limits

__all__ = [
    "__version__",
    # serialization
    "DecodeError",
    "WireHeader",
    "read_header",
    "reseal",
    "get_load_limits",
    "set_load_limits",
    "load_limits",
    # primes
    "is_prime",
    "ntt_primes_near_power_of_two",
    "ntt_primes_of_bits",
    "qu_xu_max_eta",
    "qu_xu_primes",
    # NTT
    "NttPlan",
    # basis conversion
    "BasisConverter",
    # CKKS
    "ckks",
    # BFV
    "bfv",
    # LWE and look-up tables
    "lwe",
    # PEGASUS: CKKS -> LWE -> look-up tables -> CKKS
    "pegasus",
    # applications
    "apps",
]
