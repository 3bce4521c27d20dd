"""PEGASUS: any function on encrypted real vectors, by switching CKKS ciphertexts to LWE, evaluating look-up
tables and repacking (Lu et al., IEEE S&P 2021, Fig. 6).

A :class:`Session` is a :class:`rnsfhe.ckks.Session` made with PEGASUS keys: its ciphertexts have
``ct.lut(f)`` for any Python callable ``f`` (numpy ufuncs such as ``np.tanh`` included), and the result is
an ordinary CKKS ciphertext, at a lower level, on which arithmetic goes on:

>>> import numpy as np
>>> from rnsfhe import pegasus
>>> s = pegasus.Session("InsecureTest", slots=8, seed=1, allow_insecure=True)  # small and NOT secure
>>> x = np.array([-6.0, -2.5, -1.0, -0.25, 0.0, 0.5, 3.0, 7.5])    # values in [-8, 8] (input_bound)
>>> y = s.decrypt(s.encrypt(x).lut(np.tanh), real=True)
>>> bound = s.error_bound(1.0, s.table(np.tanh)) + 2**-12  # PEGASUS Eq. (3), tanh is 1-Lipschitz; repacking
>>> bool(np.max(np.abs(y - np.tanh(x))) < bound)
True

``InsecureTest`` needs ``allow_insecure=True`` (and warns); ``"Table4"`` (the paper's Table IV) too;
``"Secure128"`` (the default) has every key at 128 bits or more, at N = 2^16.

What one table costs and how accurate it is: the pipeline runs slots to coefficients at
:attr:`Session.input_level` (``encrypt`` encrypts there by default), extracts one LWE ciphertext per slot,
runs one blind rotation per slot (in parallel) and repacks them with one reduction F_mod, so its time grows
with ``slots``. A table reads its input on a grid of :attr:`Session.grid_step` (``2 B / (n (1 - 2^-4))``
for ``n = lut_dimension``), and the modulus switch of blind rotation rounds it by a few grid steps more (a
standard deviation of ``sqrt((1 + ||s||^2) / 12)`` steps, ``||s||^2`` the LWE key's: 64 for "InsecureTest"
and "Table4", about 512 for "Secure128"): an L-Lipschitz ``f`` comes out within
:meth:`Session.error_bound` ``(L, table)`` of ``f(x)`` (PEGASUS Eq. (3) at six standard deviations, about
``6 L grid_step sqrt((2 + ||s||^2) / 12)``), whatever its shape (a step function is exact away from its
jumps). Repacking adds a small fraction of the output range ``max |f|`` (F_mod's error and the CKKS noise
it amplifies): about ``2^-15 max |f|`` for ring packing, ``2^-10 max |f|`` for the paper's linear transform
(measured with "InsecureTest").

Finer control, the steps of ``lut`` one by one (together they give exactly ``lut``'s ciphertext):

>>> table = s.table(np.tanh)                  # built once, reused by every call below
>>> ct = s.encrypt(x)
>>> lwes = ct.to_lwe()                         # rnsfhe.lwe.LweCiphertext, one per slot
>>> len(lwes), lwes[0].dimension == s.lwe_dimension
(8, True)
>>> outs = s.lut_lwe(lwes, table)              # blind rotations: LWE ciphertexts of dimension lut_dimension
>>> out = s.repack(outs, table)                # back into one CKKS ciphertext
>>> bool(np.array_equal(s.decrypt(out), s.decrypt(ct.lut(table))))
True
>>> z = s.decrypt(out * 2 + 1, real=True)     # ordinary CKKS arithmetic on the result
>>> bool(np.max(np.abs(z - (2 * np.tanh(x) + 1))) < 0.5)
True

Errors raise exceptions with clear messages: values outside ``[-input_bound, input_bound]`` at
``encrypt`` (ValueError; after arithmetic the bound is the caller's to keep: outside it a table wraps
around), a ciphertext of another slot count, scale or session (ValueError), too few levels
(:class:`rnsfhe.ckks.NotEnoughLevelsError`), an insecure preset without ``allow_insecure=True``
(ValueError), a table of another pipeline (ValueError); exceptions raised by ``f`` propagate unchanged.
A server without the secrets loads the pipeline from the bytes of ``session.pipeline.params_to_bytes()``,
``options_to_bytes()`` and ``keys_to_bytes()``: :class:`PipelineServer` (``to_lwe``, ``lut_lwe``,
``repack`` on CKKS ciphertexts as wire bytes; the workers of :mod:`rnsfhe.distributed` use it).

A Session, its :class:`Pipeline`, keys, evaluator, encryptor and decryptor refuse pickling (TypeError:
they hold secret keys); its context, the CKKS ciphertexts, LWE ciphertexts and tables pickle. Heavy calls
release the GIL.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional, Sequence, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import ckks
from ._rnsfhe.lwe import LookupTable, LweCiphertext
from ._rnsfhe.pegasus import Pipeline, PipelineServer, presets

# What ``lut`` and friends take as a function: a Python callable on floats, or a table of ``Session.table``.
Function = Union[Callable[[float], float], LookupTable]


class Session(ckks.Session):
    """A CKKS session made with PEGASUS keys: its ciphertexts have ``ct.lut(f)`` and ``ct.to_lwe()``.

    ``Session(preset="Secure128", *, slots, input_bound=8.0, repacking="ring", dimension_switch="whole",
    algorithm=None, s2c_levels=2, c2s_levels=3, rotations=(), conjugate=False, sum_slots=False, seed=None,
    allow_insecure=False, lut_log_n=None)``

    * ``preset``: "Secure128" (N = 2^16, every key at 128 bits or more), "Table4" (PEGASUS Table IV, below
      128 bits) or "InsecureTest" (N = 2^11, for tests and examples); see :func:`presets`. The last two
      need ``allow_insecure=True`` and issue a UserWarning.
    * ``slots``: values per ciphertext (a power of two up to N/2); one blind rotation per slot.
    * ``input_bound``: B, every value must lie in [-B, B] (default 8, PEGASUS Fig. 7's range).
    * ``repacking``: "ring" (ring packing, modulus raise, CoeffsToSlots, F_mod) or "linear_transform"
      (PEGASUS Fig. 6 steps 6-10: key switch, the linear transform of Fig. 5, F_mod).
    * ``dimension_switch``: "whole" (one RLWE key switch of the whole ciphertext) or "per_ciphertext"
      (PEGASUS Fig. 9 on each extracted LWE ciphertext).
    * ``algorithm``: the blind rotation ("ternary", "binary", "lmkcdey"; None: the preset's).
    * ``s2c_levels``, ``c2s_levels``: levels of slots-to-coefficients and CoeffsToSlots (1 to 4, and at most
      log2(slots): one level per butterfly stage at most, so 2 slots take 1 level each).
    * ``rotations``, ``conjugate``, ``sum_slots``: extra CKKS Galois keys for arithmetic on the results
      (``sum_slots``: the rotations ``ct.sum()`` needs for ``slots`` slots).
    * ``seed``: an integer makes every key and :meth:`encrypt` deterministic, for tests only (**not
      secure**).
    * ``lut_log_n``: the look-up tables in a ring of degree ``n = 2^lut_log_n`` instead of the preset's
      (2^12 for "Table4" and "Secure128", 2^10 for "InsecureTest"); from log2(:attr:`lwe_dimension`) to
      log2(N) (ValueError otherwise, and for a ring too small for the tables' input margin). Each
      doubling of ``n`` halves :attr:`grid_step` and the tables' error (one bit, PEGASUS Fig. 7) and
      doubles the time of every table and the size of the blind-rotation key: ``lut_log_n=13`` with
      "Table4" takes sigmoid on [-8, 8] from a mean error of about 2^-11 to about 2^-12 (see
      ``docs/pegasus.md``).

    Attributes: ``pipeline`` (:class:`Pipeline`: the keys, parameters and operations), ``context``,
    ``keys``, ``evaluator`` (auto-rescaling; the ciphertexts attached to it carry the pipeline),
    ``encryptor`` (secret key, top level, any slot count), ``decryptor``. Key generation runs with the GIL
    released. Not picklable (it holds secret keys).
    """

    _scheme = "pegasus"

    def __init__(
        self,
        preset: str = "Secure128",
        *,
        slots: int,
        input_bound: float = 8.0,
        repacking: str = "ring",
        dimension_switch: str = "whole",
        algorithm: Optional[str] = None,
        s2c_levels: int = 2,
        c2s_levels: int = 3,
        rotations: Iterable[int] = (),
        conjugate: bool = False,
        sum_slots: bool = False,
        seed: Optional[int] = None,
        allow_insecure: bool = False,
        lut_log_n: Optional[int] = None,
    ) -> None:
        # Not ckks.Session.__init__: the CKKS keys come from the pipeline's key generation (one secret for
        # both halves of PEGASUS).
        self.pipeline = Pipeline(
            preset,
            slots=slots,
            input_bound=input_bound,
            repacking=repacking,
            dimension_switch=dimension_switch,
            algorithm=algorithm,
            s2c_levels=s2c_levels,
            c2s_levels=c2s_levels,
            rotations=list(rotations),
            conjugate=conjugate,
            sum_slots=sum_slots,
            seed=seed,
            allow_insecure=allow_insecure,
            lut_log_n=lut_log_n,
        )
        self.context = self.pipeline.context
        self.keys = self.pipeline.keys
        self.evaluator = self.pipeline.evaluator
        self.encryptor = self.context.encryptor(self.keys.secret, evaluator=self.evaluator)
        self.decryptor = self.context.decryptor(self.keys.secret)

    def __repr__(self) -> str:
        return f"Session({self.pipeline!r})"

    @property
    def slots(self) -> int:
        """Values per ciphertext (the pipeline's slot count)."""
        return self.pipeline.slots

    @property
    def input_bound(self) -> float:
        """The bound B: inputs must lie in [-B, B]."""
        return self.pipeline.input_bound

    @property
    def input_level(self) -> int:
        """The level of :meth:`encrypt`'s ciphertexts, the lowest a ``lut`` input may have."""
        return self.pipeline.input_level

    @property
    def lwe_dimension(self) -> int:
        """The dimension of :meth:`to_lwe`'s LWE ciphertexts."""
        return self.pipeline.lwe_dimension

    @property
    def lut_dimension(self) -> int:
        """The dimension of :meth:`lut_lwe`'s LWE ciphertexts (the degree of the look-up-table ring)."""
        return self.pipeline.lut_dimension

    @property
    def lut_log_n(self) -> int:
        """log2 of :attr:`lut_dimension` (the ``lut_log_n`` of the session, or its preset's)."""
        return self.pipeline.lut_log_n

    @property
    def grid_step(self) -> float:
        """The spacing of a table's input grid in value units (see the module documentation)."""
        return self.pipeline.grid_step

    def encrypt(self, values: ArrayLike, slots: Optional[int] = None, *,
                level: Optional[int] = None) -> ckks.Ciphertext:
        """Encrypts a 1-D real array of at most ``slots`` values, each in [-B, B], at ``level`` (default
        :attr:`input_level`; higher leaves levels for arithmetic before ``lut``), with the secret key and
        the session's slot count; see :meth:`Pipeline.encrypt`. ``slots``, if given, must be the session's
        (ValueError otherwise: the pipeline's keys are made for its slot count)."""
        if slots is not None and slots != self.slots:
            raise ValueError(
                f"slots = {slots}: this session's pipeline was made for {self.slots} slots "
                "(Session(slots=...)); use ckks.Session for other slot counts"
            )
        return self.pipeline.encrypt(values, level)

    def decrypt(self, ct: ckks.Ciphertext, real: bool = False) -> Any:
        """The ``ct.slots`` decrypted values (complex128, or float64 if ``real``) of a ciphertext of this
        session; ValueError for one of another session."""
        self.pipeline.check(ct)
        return self.decryptor.decrypt(ct, real)

    def table(self, f: Callable[[float], float]) -> LookupTable:
        """The look-up table of ``f`` (any Python callable float -> float) for this session, to pass to
        :meth:`lut`, ``ct.lut``, :meth:`lut_lwe` and :meth:`repack` in place of ``f``; see
        :meth:`Pipeline.table`."""
        return self.pipeline.table(f)

    def lut(self, ct: ckks.Ciphertext, f: Function) -> ckks.Ciphertext:
        """``f`` (a callable or a table of :meth:`table`) on every slot of ``ct``: ``ct.lut(f)`` for a
        ciphertext of this session (ValueError for another session's)."""
        return self.pipeline.lut(ct, f)

    def to_lwe(self, ct: ckks.Ciphertext) -> list[LweCiphertext]:
        """The slots of ``ct`` as LWE ciphertexts of dimension :attr:`lwe_dimension`, in slot order (PEGASUS
        Fig. 6 steps 1-4); ``ct.to_lwe()`` for a ciphertext of this session."""
        return self.pipeline.to_lwe(ct)

    def lut_lwe(self, lwes: Sequence[LweCiphertext], table: Function) -> list[LweCiphertext]:
        """``table`` on each LWE ciphertext of :meth:`to_lwe` by blind rotation (PEGASUS Fig. 6 step 5);
        see :meth:`Pipeline.lut_lwe`."""
        return self.pipeline.lut_lwe(lwes, table)

    def repack(self, lwes: Sequence[LweCiphertext], table: Function) -> ckks.Ciphertext:
        """The outputs of :meth:`lut_lwe` by ``table`` back into one CKKS ciphertext, in slot order; see
        :meth:`Pipeline.repack`."""
        return self.pipeline.repack(lwes, table)

    def error_bound(self, lipschitz: float, table: LookupTable) -> float:
        """PEGASUS Eq. (3)'s bound on a table's own error for an L-Lipschitz function (``lipschitz`` = L),
        with the noise of the dimension switch: the error of :meth:`lut_lwe`'s outputs, to which repacking
        adds a small fraction of ``max |f|``; see :meth:`Pipeline.error_bound`."""
        return self.pipeline.error_bound(lipschitz, table)

    def decrypt_lwe(self, lwes: Union[LweCiphertext, Sequence[LweCiphertext]],
                    table: Optional[LookupTable] = None) -> NDArray[np.float64]:
        """The values of LWE ciphertexts of :meth:`to_lwe` or (with their ``table``) of :meth:`lut_lwe`;
        see :meth:`Pipeline.decrypt_lwe`."""
        return self.pipeline.decrypt_lwe(lwes, table)


# Written out so that type checkers see what the module exports.
__all__ = [
    "Session",
    "PipelineServer",
    "Pipeline",
    "presets",
]
