"""LWE ciphertexts and look-up tables: the half of PEGASUS (Lu et al., IEEE S&P 2021) that evaluates any
function on encrypted numbers by blind rotation (PEGASUS Section III.B, Fig. 2).

The quickest way in is a :class:`LutSession`: it makes every key, encrypts real values at a scale, turns any
Python function into a look-up table and decrypts:

>>> import numpy as np
>>> import rnsfhe
>>> from rnsfhe import lwe
>>> s = lwe.LutSession("InsecureTest", seed=1, allow_insecure=True)  # small and NOT secure: examples, tests
>>> x = np.array([-3.0, -0.5, 0.0, 2.25])
>>> y = s.lut_many(s.encrypt(x), lambda v: max(v, 0.0))   # relu on every ciphertext
>>> bool(np.all(np.abs(s.decrypt(y) - np.maximum(x, 0.0)) <= s.error_bound(1.0)))
True

Table outputs are under the ring key of the look-up-table ring (dimension ``s.lut_dimension``);
``s.switch_to_lwe(ct)`` brings one back to the LWE key for another table (``lut`` does not switch by
itself). Inputs must satisfy ``|scale * x| < q0 / 4`` (PEGASUS Appendix B).

The pieces:

* :class:`PegasusParams` -- the parameter sets (``PegasusParams.from_preset(name)``, :func:`presets`):
  ``"PegasusTable4"`` (PEGASUS Table IV; **below 128 bits by our estimator**, ``security()``),
  ``"PegasusTable4FastSpecial"``, ``"Secure128"`` (ours: every key at 128 bits or more, a binary LWE key
  and its ciphertexts at a 26-bit modulus ``lwe_modulus``) and ``"InsecureTest"``;
* :class:`LweSecretKey` -- ``generate(dimension, hamming_weight=None)``, ``encrypt(m, modulus, sigma=3.2)``,
  ``decrypt(ct)``, ``encrypt_many`` / ``decrypt_many`` on numpy int64 vectors; saved only explicitly
  (``to_secret_bytes()``, ``LweSecretKey.from_secret_bytes(data, dimension)``);
* :class:`LweCiphertext` -- ``b``, ``a`` (numpy uint64), ``dimension``, ``modulus``, ``+ - * int``, unary
  ``-``, ``add_plain(m)``, ``switch_modulus(q)``;
* :class:`LweSwitchingKey` -- key switching between dimensions (PEGASUS Fig. 9);
* :class:`LutSession` -- the keys of one parameter set and the look-up tables: ``lut(ct, f)``,
  ``lut_many(cts, f)``, ``lut_all(ct, [f, g, ...])`` (2, 4, 8, ... functions from one blind rotation);
* :class:`LutServer` -- ``s.server()``: the evaluation keys without the secret keys (``table``, ``lut``,
  ``lut_many``, ``lut_all``, ``switch_to_lwe``), for a server or the workers of :mod:`rnsfhe.distributed`;
  its bytes are ``blind_rotation_key_bytes()`` and ``switching_key.to_bytes()``, loaded by
  ``LutServer.from_bytes(params, brk, ksk)`` (keys of another parameter set raise DecodeError);
* :class:`LookupTable` -- ``s.table(f)`` or ``s.table([f, g])``: a table built once and passed to
  ``lut`` / ``lut_many`` / ``lut_all`` in place of the function (``to_bytes()``, pickles).

Ciphertexts and switching keys travel in rnsfhe's wire format (``to_bytes()``; ``from_bytes`` loads them
against the dimension and modulus, or the parameter set, they belong to, and raises
:class:`rnsfhe.DecodeError` naming the field and byte offset for bad bytes); ``rnsfhe.read_header`` names
their kinds:

>>> data = y[0].to_bytes()
>>> rnsfhe.read_header(data).kind
'LWE ciphertext'
>>> back = lwe.LweCiphertext.from_bytes(data, s.lut_dimension, s.q0)
>>> bool(abs(s.decrypt(back)[0] - 0.0) <= s.error_bound(1.0))
True

The switch between CKKS and LWE (extraction of CKKS slots and repacking, PEGASUS Fig. 6 and Section III.C)
is :mod:`rnsfhe.pegasus`. Secret keys and sessions refuse pickling; ciphertexts pickle by their components, switching
keys by their bytes. Errors of the Rust code raise :class:`ValueError` with its message; heavy calls release
the GIL.
"""

from __future__ import annotations

from ._rnsfhe.lwe import LookupTable, LutServer, LutSession, LweCiphertext, LweSecretKey, LweSwitchingKey
from ._rnsfhe.lwe import PegasusParams, PegasusSecurity, presets

# Written out so that type checkers see what the module exports.
__all__ = [
    "LookupTable",
    "LutServer",
    "LutSession",
    "LweCiphertext",
    "LweSecretKey",
    "LweSwitchingKey",
    "PegasusParams",
    "PegasusSecurity",
    "presets",
]
