"""CKKS: approximate arithmetic on encrypted real and complex vectors (RNS-CKKS), numpy in, numpy out.

The quickest way in is a :class:`Session`, which makes the keys, an encryptor, a decryptor and an evaluator
in one step; ciphertexts then support ``+ - * /`` with other ciphertexts, numpy arrays and numbers:

>>> import numpy as np
>>> from rnsfhe import ckks
>>> s = ckks.Session("Rec128N13", rotations=[1])   # N = 2^13: 4096 slots, depth 3, 128-bit
>>> x = np.array([1.0, 2.0, 3.0, 4.0])
>>> ct = s.encrypt(x)
>>> y = s.decrypt((ct * ct + 0.5 * ct).sum(), real=True)  # sum over all slots, in every slot
>>> round(float(y[0]), 4), float(np.sum(x * x + 0.5 * x))
(35.0, 35.0)
>>> ckks.precision(np.roll(x, -1)[:3], s.decrypt(ct.rotate(1), real=True)[:3]).min_bits > 20
True

The pieces, for finer control (a server holds only the evaluation keys):

* :class:`Context` -- checked parameters, from a preset (:func:`presets`, ``Context.from_preset``) or
  literal bit sizes; ``ctx.keygen(rotations=..., conjugate=..., sum_slots=...)`` returns a :class:`KeySet`;
* ``ctx.encryptor(keys.public)`` / ``ctx.decryptor(keys.secret)`` -- :class:`Encryptor`, :class:`Decryptor`;
* ``ctx.evaluator(keys, auto_rescale=True)`` -- :class:`Evaluator` (relinearization and Galois keys);
* ``ctx.encode(values, level=..., scale=...)`` -- a :class:`Plaintext`, encoded once and reused as an
  operand (``ct * pt``, ``ct + pt``, ``ev.multiply(ct, pt)``), ``pt.decode()``;
* :class:`Ciphertext` -- operators, ``rescale()``, ``rotate(k)``, ``conjugate()``, ``sum()``, ``mean()``,
  ``var()``, ``dot(other)``, ``level``, ``scale``, ``log2_scale``, ``slots``;
* functions of the slots, by polynomials at the minimal depth: ``ct.polyval(coeffs, basis=...)``,
  ``ct.chebyshev(f, interval, degree)`` for any Python function, ``ct.sigmoid()``, ``ct.exp()``,
  ``ct.inverse()``, ``ct.sqrt(interval)``, ``ct.inv_sqrt(interval)`` (also as methods of
  :class:`Evaluator`, :class:`Session`, and ``Context.polyval`` / ``Context.chebyshev``);
* :class:`Polynomial` and :func:`chebyshev_approx` -- the plaintext polynomials, their depth and their
  approximation error; :func:`weighted_sum` across ciphertexts;
* :func:`precision` -- bits of precision of a result (:class:`PrecisionStats`).

A polynomial of degree d uses ceil(log2(d + 1)) levels, and one more for a Chebyshev interval whose width
is not 2; too few levels raise :class:`NotEnoughLevelsError` (a ValueError) naming both counts:

>>> x = np.linspace(-1, 1, 8)
>>> p, err = chebyshev_approx(np.tanh, (-1, 1), 7)  # interpolated in Rust, with its error
>>> p.depth, err < 1e-3
(3, True)
>>> y = s.decrypt(s.encrypt(x).polyval(p), real=True)[:8]
>>> bool(np.max(np.abs(y - np.tanh(x))) < 1e-3)
True
>>> try:
...     s.encrypt(x).sigmoid()  # degree 31 on [-8, 8]: 6 levels; "Rec128N13" has 3
... except NotEnoughLevelsError as e:
...     print(e.levels_needed, e.levels_available)
6 3

**Serialization.** Every object but the secret key travels as bytes in rnsfhe's versioned wire format
and pickles: ``Context.to_bytes()`` / ``Context.from_bytes(data)``; ``to_bytes(seeded=True)``,
``serialized_size(seeded=True)`` and ``Cls.from_bytes(data, context)`` on :class:`PublicKey`,
:class:`RelinKey`, :class:`GaloisKeys` and :class:`Ciphertext`. Loading validates (fingerprint, levels,
residues) and raises :class:`rnsfhe.DecodeError` (a ValueError with ``field`` and ``offset``) for bad
bytes. Seeded keys, and ciphertexts fresh from a secret-key encryptor, are about half the size. The secret
key is saved only explicitly (``SecretKey.to_secret_bytes()`` / ``SecretKey.from_secret_bytes``); it, a
:class:`KeySet`, the encryptor, decryptor, evaluator and a Session refuse pickling (:class:`TypeError`).
A server needs only the context and the evaluation keys:

>>> server_ctx = Context.from_bytes(s.context.to_bytes())
>>> ev = server_ctx.evaluator(relin_key=RelinKey.from_bytes(s.keys.relin.to_bytes(), server_ctx))
>>> ct = Ciphertext.from_bytes(s.encrypt(x).to_bytes(), server_ctx)
>>> back = Ciphertext.from_bytes(ev.multiply(ct, ct).to_bytes(), s.context)  # the client's context
>>> bool(np.allclose(s.decrypt(back, real=True)[:8], x * x, atol=1e-5))
True

Levels count limbs, as in the Rust library: a fresh ciphertext has level ``ctx.levels + 1`` and each
rescaling removes one. Errors of the Rust code raise :class:`ValueError` with its message (a missing
rotation key names the step). Heavy calls release the GIL, so threads run them in parallel.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional, Sequence, Tuple, Union

from . import _common
from ._rnsfhe import DecodeError
from ._rnsfhe.ckks import Bootstrapper, BootstrappingKeys, Ciphertext, Context, Decryptor, Encryptor, Evaluator, GaloisKeys, KeySet
from ._rnsfhe.ckks import NotEnoughLevelsError, PartStats, Plaintext, Polynomial, PrecisionStats, PublicKey
from ._rnsfhe.ckks import RelinKey
from ._rnsfhe.ckks import SecretKey, precision, presets, recommended_flooding_bits


class Session(_common.SessionBase):
    """Everything one data owner needs: a context, its keys, an encryptor, a decryptor and an evaluator.

    ``Session(context="Rec128N13", *, rotations=(), conjugate=False, sum_slots=True, auto_rescale=True,
    public_key="extended", bootstrapper=None, auto_bootstrap=False)``

    ``context`` is a :class:`Context` or a preset name. ``rotations``, ``conjugate`` and ``sum_slots``
    choose the Galois keys (see :meth:`Context.keygen`; ``sum_slots`` enables ``ct.sum()`` and
    ``ct.mean()``). With ``auto_rescale`` every product is rescaled at once, so ``a * b * c`` just works
    while levels remain. ``public_key``: "extended" (more precise fresh ciphertexts) or "over_q" (faster
    encryption; see :meth:`Context.keygen`). ``bootstrapper`` (a :class:`Bootstrapper` of the context):
    the keys include its bootstrapping keys; with ``auto_bootstrap`` too, every product first bootstraps
    its ciphertext operands at level 1, so ``a * b`` goes on past the last level (values must lie in
    [-1, 1]; ``evaluator.bootstraps_done`` counts the bootstrappings). Ciphertexts from :meth:`encrypt`
    are attached to :attr:`evaluator`.

    Attributes: ``context``, ``keys`` (:class:`KeySet`), ``evaluator``, ``encryptor``, ``decryptor``.
    Not picklable (it holds the secret key): pickle or ``to_bytes()`` its context and public keys.
    """

    _scheme = "ckks"

    def __init__(
        self,
        context: Union[Context, str] = "Rec128N13",
        *,
        rotations: Iterable[int] = (),
        conjugate: bool = False,
        sum_slots: bool = True,
        auto_rescale: bool = True,
        public_key: str = "extended",
        bootstrapper: Optional[Bootstrapper] = None,
        auto_bootstrap: bool = False,
    ) -> None:
        if auto_bootstrap and bootstrapper is None:
            raise ValueError("auto_bootstrap needs a bootstrapper (Session(..., bootstrapper=Bootstrapper(context)))")
        super().__init__(
            context if isinstance(context, Context) else Context.from_preset(context),
            keygen={"rotations": list(rotations), "conjugate": conjugate, "sum_slots": sum_slots,
                    "public_key": public_key, "bootstrapper": bootstrapper},
            evaluator={"auto_rescale": auto_rescale,
                       "auto_bootstrap": bootstrapper if auto_bootstrap else None},
        )

    @property
    def slots(self) -> int:
        """Number of slots of a ciphertext (N/2)."""
        return self.context.slots

    def encrypt(self, values, slots: Optional[int] = None) -> Ciphertext:
        """Encrypts a 1-D array of at most ``slots`` real or complex values (missing values are zero)."""
        return self.encryptor.encrypt(values, slots)

    def decrypt(self, ct: Ciphertext, real: bool = False):
        """The ``ct.slots`` decrypted values: numpy complex128, or float64 (real parts) if ``real``."""
        return self.decryptor.decrypt(ct, real)

    def polyval(self, ct: Ciphertext, coeffs: Any, basis: str = "power",
                interval: Optional[Tuple[float, float]] = None) -> Ciphertext:
        """The polynomial of ``coeffs`` (increasing order; or a :class:`Polynomial` or a ``numpy.polynomial``
        series) in ``basis`` "power" or "chebyshev" (on ``interval``, default (-1, 1)) applied to every slot
        of ``ct`` by this session's evaluator; see :meth:`Ciphertext.polyval`."""
        return self.evaluator.polyval(ct, coeffs, basis, interval)

    def chebyshev(self, ct: Ciphertext, f: Callable[[float], float], interval: Tuple[float, float],
                  degree: int) -> Ciphertext:
        """``f`` (any Python callable float -> float) applied to every slot of ``ct`` through its Chebyshev
        interpolant of ``degree`` on ``interval``, by this session's evaluator; see
        :meth:`Ciphertext.chebyshev`."""
        return self.evaluator.chebyshev(ct, f, interval, degree)


def chebyshev_approx(f: Callable[[float], float], interval: Tuple[float, float], degree: int, *,
                     samples: int = 10_001) -> Tuple[Polynomial, float]:
    """Chebyshev interpolation of ``f`` on ``interval = (a, b)`` and its approximation error, in plaintext.

    ``f`` is any Python callable float -> float, called at the ``degree + 1`` Chebyshev nodes (the
    interpolation runs in Rust; exceptions raised by ``f`` propagate). Returns ``(p, error)``: the
    :class:`Polynomial` (Chebyshev basis on the interval; ``p.coeffs``, ``p.depth``, ``p(x)``) and
    ``max |f(x) - p(x)|`` over ``samples`` evenly spaced points of the interval. Evaluate ``p`` on a
    ciphertext with ``ct.polyval(p)``: it uses ``p.depth`` levels. Raises ValueError for a >= b, a degree
    of 0 or above 4095, or a non-finite value of ``f``.

    >>> p, err = chebyshev_approx(lambda x: 1 / (1 + x * x), (-1, 1), 31)
    >>> p.degree, p.depth, err < 1e-10
    (30, 5, True)
    """
    p = Polynomial.interpolate(f, interval, degree)
    return p, p.max_error(f, samples)


def weighted_sum(cts: Sequence[Ciphertext], weights: Sequence[float]) -> Ciphertext:
    """``sum_i weights[i] * cts[i]``, slot-wise, with one rescaling (one level), by the evaluator of
    ``cts[0]``; see :meth:`Evaluator.weighted_sum`. For an unweighted sum, ``sum(cts)`` uses no level.

    Raises ValueError for no ciphertexts, a different number of weights, or non-finite weights.
    """
    if len(cts) == 0:
        raise ValueError("weighted_sum needs at least one ciphertext")
    return cts[0].evaluator.weighted_sum(list(cts), list(weights))


# Written out (not built from a shared tuple) so that type checkers see what the module exports.
__all__ = [
    "Session",
    "Context",
    "KeySet",
    "SecretKey",
    "PublicKey",
    "RelinKey",
    "GaloisKeys",
    "BootstrappingKeys",
    "Encryptor",
    "Decryptor",
    "Evaluator",
    "Ciphertext",
    "Plaintext",
    "Bootstrapper",
    "PartStats",
    "PrecisionStats",
    "precision",
    "presets",
    "recommended_flooding_bits",
    "Polynomial",
    "NotEnoughLevelsError",
    "DecodeError",
    "chebyshev_approx",
    "weighted_sum",
]
