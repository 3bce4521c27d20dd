"""What the scheme modules :mod:`rnsfhe.ckks` and :mod:`rnsfhe.bfv` share (private: use the scheme modules).

Both re-export the same object model from their extension submodule (``rnsfhe._rnsfhe.ckks``,
``rnsfhe._rnsfhe.bfv``) and add a ``Session`` built on :class:`SessionBase`.
"""

from __future__ import annotations

import importlib
from typing import Any, Mapping, Optional

#: The classes every scheme module re-exports, in the order of its ``__all__``.
SCHEME_CLASSES = (
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
)


def _load(cls, context_bytes: bytes, data: bytes, options: Optional[Mapping[str, Any]] = None):
    """The pickle loader of keys and ciphertexts (their ``__reduce__`` names it): the context of
    ``context_bytes`` by ``Context.from_bytes`` of the object's scheme module (a process-wide cache, so
    that many objects of one context build it once), then ``cls.from_bytes(data, context, **options)``
    (``options``: what the bytes do not hold, such as a BFV ciphertext's encoding)."""
    context = importlib.import_module(cls.__module__).Context.from_bytes(context_bytes)
    return cls.from_bytes(data, context, **(options or {}))


class SessionBase:
    """The part of a scheme's ``Session`` that does not depend on the scheme: from a context, the keys, an
    evaluator with them, an encryptor whose ciphertexts are attached to that evaluator, and a decryptor.

    A subclass sets ``_scheme`` (the scheme module: "ckks", "bfv") and passes the keyword arguments of
    ``Context.keygen`` and ``Context.evaluator`` to ``__init__``.
    """

    _scheme = ""

    def __init__(self, context, *, keygen: Mapping[str, Any], evaluator: Mapping[str, Any]) -> None:
        self.context = context
        self.keys = context.keygen(**keygen)
        self.evaluator = context.evaluator(self.keys, **evaluator)
        self.encryptor = context.encryptor(self.keys.public, evaluator=self.evaluator)
        self.decryptor = context.decryptor(self.keys.secret)

    def __repr__(self) -> str:
        return f"Session({self.context!r}, {self.evaluator!r})"

    def __reduce__(self):
        """Raises TypeError: a session holds the secret key, which is saved only explicitly."""
        raise TypeError(
            f"rnsfhe.{self._scheme}.Session cannot be pickled: it holds the secret key; pickle (or "
            "to_bytes()) its context and public keys, and save keys.secret explicitly with to_secret_bytes()"
        )
