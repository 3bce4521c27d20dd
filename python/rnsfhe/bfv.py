"""BFV: exact arithmetic modulo t on encrypted integer vectors (RNS-BFV, Halevi-Polyakov-Shoup), numpy int64
in, numpy int64 out.

The quickest way in is a :class:`Session`, which makes the keys, an encryptor, a decryptor and an evaluator
in one step; ciphertexts then support ``+ - *`` with other ciphertexts, integer arrays and integers, and
every result is exact modulo t:

>>> import numpy as np
>>> from rnsfhe import bfv
>>> s = bfv.Session(bfv.Context.generate(t=65537, depth=2))  # N = 2^12 slots, 128-bit
>>> x = np.array([1, 2, 3, -4])
>>> ct = s.encrypt(x)
>>> y = s.decrypt(ct * ct * ct - 5 * ct + 7)               # x^3 - 5x + 7 in every slot
>>> y[:4]
array([  3,   5,  19, -37])
>>> bool(np.array_equal(y[:4], bfv.reduce(x**3 - 5 * x + 7, s.t)))
True
>>> s.noise_budget(ct) > s.noise_budget(ct * ct) > 0          # a diagnostic: it needs the secret key
True

Batch slots form a 2 x N/2 matrix; rotations act on both rows (keys chosen when the keys are made):

>>> s = bfv.Session(bfv.Context.generate(t=65537, depth=1), rotations=[1], column_swap=True)
>>> ct = s.encrypt(np.arange(s.n))
>>> s.decrypt(ct.rotate_rows(1)).reshape(2, -1)[:, [0, 1, -1]]  # numpy.roll(row, -1) on each row
array([[   1,    2,    0],
       [2049, 2050, 2048]])
>>> s.decrypt(ct.rotate_columns())[:3]                          # the rows swapped
array([2048, 2049, 2050])

The pieces, for finer control (a server holds only the relinearization key):

* :class:`Context` -- checked parameters: literal ``Context(log_n, t, q_bits, q_count)``, a row of HPS
  Table 3 (``Context.from_preset``, :func:`presets`), ``Context.generate(t, depth)`` (any circuit of
  ``depth`` multiplications, with a rotation of every ciphertext after encryption and after each
  multiplication) or explicit primes (``Context.from_moduli``); ``ctx.keygen(rotations=...,
  column_swap=...)`` returns a :class:`KeySet`;
* ``ctx.encryptor(keys.public)`` / ``ctx.decryptor(keys.secret)`` -- :class:`Encryptor`, :class:`Decryptor`
  (``decrypt`` and the diagnostic ``noise_budget``);
* ``ctx.evaluator(keys)`` -- :class:`Evaluator` (holds the relinearization and Galois keys);
* ``ctx.encode(values, encoding=None)`` -- a :class:`Plaintext`, encoded once and reused as an operand
  (``ct * pt``, ``ct + pt``, ``ev.multiply(ct, pt)``), ``pt.decode()``;
* :class:`Ciphertext` -- operators, ``square()``, ``rotate_rows(k)``, ``rotate_columns()``, ``encoding``,
  ``parts``;
* :func:`reduce` -- numpy values modulo t in the form ``decrypt`` returns.

**Encodings.** ``"batch"`` packs N values into SIMD slots, and every operation acts slot-wise; it needs a
prime t = 1 mod 2N (65537 works up to N = 2^15). The N slots form a 2 x N/2 matrix: ``rotate_rows(k)``
rotates both rows left by k (like ``numpy.roll(x.reshape(2, -1), -k, axis=1)``), ``rotate_columns()``
swaps the rows. ``"coeff"`` makes the values the coefficients of the
plaintext polynomial (any t, e.g. t = 2): sums are element-wise, products are negacyclic convolutions
(``X^N = -1``), and an integer k is the constant polynomial (``ct + k`` changes coefficient 0 only, while
``ct * k`` scales every coefficient). ``encrypt`` picks batch when t allows it, else coeff
(``Context.encoding``); ciphertexts remember their encoding.

**Values.** Inputs are 1-D integer arrays (or integers) with ``-t < v < t``; anything else raises
:class:`ValueError` (too many values, out of range, not int64, objects of different contexts or encodings)
or :class:`TypeError` (floats, strings). ``decrypt`` returns the N values as int64: centered in
``(-t/2, t/2]`` by default (so small negative results are negative; for t = 2 they are 0 and 1), or in
``[0, t)`` with ``signed=False``. Results are exact while the noise budget lasts; each multiplication uses
about log2(t) + log2(N) bits of it. Errors of the Rust code raise :class:`ValueError` with its message. Heavy
calls release the GIL, so threads run them in parallel.

**Serialization.** As in :mod:`rnsfhe.ckks`: ``Context.to_bytes()`` / ``Context.from_bytes(data)``;
``to_bytes(seeded=True)``, ``serialized_size(seeded=True)`` and ``Cls.from_bytes(data, context)`` on
:class:`PublicKey`, :class:`RelinKey`, :class:`GaloisKeys` and :class:`Ciphertext` (whose bytes do not
hold the encoding: ``Ciphertext.from_bytes(data, context, evaluator=None, encoding=None)``; pickling keeps
it); all pickle. Bad bytes raise :class:`rnsfhe.DecodeError` (a ValueError with ``field`` and
``offset``). Seeded keys and secret-key ciphertexts are about half the size. The secret key is saved only
with ``SecretKey.to_secret_bytes()`` / ``SecretKey.from_secret_bytes``; it, a :class:`KeySet`, the
encryptor, decryptor, evaluator and a Session refuse pickling (:class:`TypeError`).
"""

from __future__ import annotations

from typing import Iterable, Optional, Union

import numpy as np

from . import _common
from ._rnsfhe import DecodeError
from ._rnsfhe.bfv import HPS_SIGMA, Ciphertext, Context, Decryptor, Encryptor, Evaluator, GaloisKeys
from ._rnsfhe.bfv import KeySet, Plaintext, PublicKey, RelinKey, SecretKey, presets


def reduce(values, t: int, signed: bool = True) -> np.ndarray:
    """``values`` modulo ``t`` as an int64 array of the same shape, in the form :meth:`Decryptor.decrypt`
    returns: centered in ``(-t/2, t/2]`` if ``signed``, else in ``[0, t)``.

    Use it to compare decrypted results with a numpy computation: ``bfv.reduce(x * y + 3, ctx.t)``
    (keep intermediate numpy values within int64, e.g. by reducing after each product).

    >>> reduce([-1, 0, 1, 2, 65537 + 5, 32769], 65537).tolist()
    [-1, 0, 1, 2, 5, -32768]
    >>> reduce([-1, 3], 2, signed=False).tolist()
    [1, 1]
    """
    t = int(t)
    if t < 2:
        raise ValueError(f"t = {t}: the plaintext modulus must be at least 2")
    v = np.mod(np.asarray(values, dtype=np.int64), np.int64(t))
    if signed:
        v = np.where(v > t // 2, v - t, v)
    return v.astype(np.int64, copy=False)


class Session(_common.SessionBase):
    """Everything one data owner needs: a context, its keys, an encryptor, a decryptor and an evaluator.

    ``Session(context, *, rotations=(), column_swap=False, public_key="extended")``: ``context`` is a
    :class:`Context` or a preset name (:func:`presets`); ``rotations`` and ``column_swap`` choose the
    Galois keys and ``public_key`` the public key (see :meth:`Context.keygen`). Ciphertexts from :meth:`encrypt` are attached to :attr:`evaluator`, so their
    products are relinearized and their rotations use this session's keys.

    Attributes: ``context``, ``keys`` (:class:`KeySet`), ``evaluator``, ``encryptor``, ``decryptor``.
    Not picklable (it holds the secret key): pickle or ``to_bytes()`` its context and public keys.
    """

    _scheme = "bfv"

    def __init__(
        self,
        context: Union[Context, str],
        *,
        rotations: Iterable[int] = (),
        column_swap: bool = False,
        public_key: str = "extended",
    ) -> None:
        super().__init__(
            context if isinstance(context, Context) else Context.from_preset(context),
            keygen={"rotations": list(rotations), "column_swap": column_swap, "public_key": public_key},
            evaluator={},
        )

    @property
    def t(self) -> int:
        """The plaintext modulus t."""
        return self.context.t

    @property
    def n(self) -> int:
        """Number of values of a ciphertext (slots or coefficients), N."""
        return self.context.n

    def encrypt(self, values, encoding: Optional[str] = None) -> Ciphertext:
        """Encrypts a 1-D array of at most N integers with ``-t < v < t`` (missing values are zero);
        ``encoding`` is "batch", "coeff" or None (``context.encoding``)."""
        return self.encryptor.encrypt(values, encoding)

    def decrypt(self, ct: Ciphertext, signed: bool = True, encoding: Optional[str] = None) -> np.ndarray:
        """The N decrypted values as int64: centered in (-t/2, t/2] if ``signed``, else in [0, t); decoded
        by ``ct.encoding`` unless ``encoding`` overrides it (see :meth:`Decryptor.decrypt`)."""
        return self.decryptor.decrypt(ct, signed, encoding)

    def noise_budget(self, ct: Ciphertext) -> float:
        """The noise budget of ``ct`` in bits (below 1 bit decryption may fail; see
        :meth:`Decryptor.noise_budget`). A diagnostic that needs the secret key: do not reveal it to an
        untrusted party."""
        return self.decryptor.noise_budget(ct)


# Written out (not built from a shared tuple) so that type checkers see what the module exports.
__all__ = [
    "Session",
    "Context",
    "KeySet",
    "SecretKey",
    "PublicKey",
    "RelinKey",
    "GaloisKeys",
    "Encryptor",
    "Decryptor",
    "Evaluator",
    "Ciphertext",
    "Plaintext",
    "presets",
    "reduce",
    "DecodeError",
]
