"""What the scheme modules :mod:`rnsfhe.ckks` and :mod:`rnsfhe.bfv` share (private: use the scheme modules).

Both re-export the same object model from their extension submodule (``rnsfhe._rnsfhe.ckks``,
``rnsfhe._rnsfhe.bfv``) and add a ``Session`` built on :class:`SessionBase`.
"""

from __future__ import annotations

import contextlib
import importlib
from typing import Any, Iterator, Mapping, Optional


def _load_context(context_cls, context_bytes: bytes, insecure: bool = False):
    """The pickle loader of contexts (``Context.__reduce__`` names it): ``Context.from_bytes`` under the
    process-wide limits (:func:`rnsfhe.get_load_limits`), with the context's own insecure opt-in when it
    had one. A pickle is trusted input by Python's own rules (unpickling can run any code), so it may
    carry that opt-in; the size limits still apply."""
    if insecure:
        return context_cls.from_bytes(context_bytes, allow_insecure=True)
    return context_cls.from_bytes(context_bytes)


def _load(
    cls,
    context_bytes: bytes,
    data: bytes,
    options: Optional[Mapping[str, Any]] = None,
    insecure: bool = False,
):
    """The pickle loader of keys and ciphertexts (their ``__reduce__`` names it): the context of
    ``context_bytes`` by :func:`_load_context` with the ``Context`` of the object's scheme module (a
    process-wide cache, so that many objects of one context build it once), then
    ``cls.from_bytes(data, context, **options)`` (``options``: what the bytes do not hold, such as a BFV
    ciphertext's encoding)."""
    context_cls = importlib.import_module(cls.__module__).Context
    context = _load_context(context_cls, context_bytes, insecure)
    return cls.from_bytes(data, context, **(options or {}))


@contextlib.contextmanager
def load_limits(**limits: Any) -> Iterator[Mapping[str, Any]]:
    """``with rnsfhe.load_limits(max_log_n=17, allow_insecure=True): ...`` sets the process-wide limits of
    :func:`rnsfhe.set_load_limits` (the keywords given) for the block and restores the previous ones
    after it; yields the limits in force inside. Process-wide, not per thread."""
    from ._rnsfhe import get_load_limits, set_load_limits

    previous = set_load_limits(**limits)
    try:
        yield get_load_limits()
    finally:
        set_load_limits(**previous)


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
