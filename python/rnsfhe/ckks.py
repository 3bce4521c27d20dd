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
* :class:`Ciphertext` -- operators, ``rescale()``, ``rotate(k)``, ``conjugate()``, ``sum()``, ``mean()``,
  ``level``, ``scale``, ``log2_scale``, ``slots``;
* :func:`precision` -- bits of precision of a result (:class:`PrecisionStats`).

Levels count limbs, as in the Rust library: a fresh ciphertext has level ``ctx.levels + 1`` and each
rescaling removes one. Errors of the Rust code raise :class:`ValueError` with its message (a missing
rotation key names the step). Keys and ciphertexts cannot be pickled yet (:class:`TypeError`); a Context
can. Heavy calls release the GIL, so threads run them in parallel.
"""

from __future__ import annotations

from typing import Iterable, Optional, Union

from . import _common
from ._rnsfhe.ckks import Ciphertext, Context, Decryptor, Encryptor, Evaluator, GaloisKeys, KeySet
from ._rnsfhe.ckks import PartStats, PrecisionStats, PublicKey, RelinKey, SecretKey, precision, presets


class Session(_common.SessionBase):
    """Everything one data owner needs: a context, its keys, an encryptor, a decryptor and an evaluator.

    ``Session(context="Rec128N13", *, rotations=(), conjugate=False, sum_slots=True, auto_rescale=True)``

    ``context`` is a :class:`Context` or a preset name. ``rotations``, ``conjugate`` and ``sum_slots``
    choose the Galois keys (see :meth:`Context.keygen`; ``sum_slots`` enables ``ct.sum()`` and
    ``ct.mean()``). With ``auto_rescale`` every product is rescaled at once, so ``a * b * c`` just works
    while levels remain. Ciphertexts from :meth:`encrypt` are attached to :attr:`evaluator`.

    Attributes: ``context``, ``keys`` (:class:`KeySet`), ``evaluator``, ``encryptor``, ``decryptor``.
    Not picklable (it holds the secret key).
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
    ) -> None:
        super().__init__(
            context if isinstance(context, Context) else Context.from_preset(context),
            keygen={"rotations": list(rotations), "conjugate": conjugate, "sum_slots": sum_slots},
            evaluator={"auto_rescale": auto_rescale},
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


__all__ = ["Session", *_common.SCHEME_CLASSES, "PartStats", "PrecisionStats", "precision", "presets"]
