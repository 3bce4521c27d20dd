//! `Plaintext`: slot values encoded once, at a level and scale, to reuse in sums and products with
//! ciphertexts (each use then skips the encoding: the special FFT and the NTT of every limb).

use super::*;

wire_key_class! {
    /// Slot values encoded at a level and an exact scale, made by ``Context.encode(values, level=None,
    /// scale=None, slots=None)``. Accepted wherever an array is: ``ct + pt``, ``ct - pt``, ``pt - ct``,
    /// ``ct * pt`` (rescaled when the evaluator auto-rescales), ``ev.add/sub/multiply(ct, pt)``,
    /// ``ct.dot(pt)``. A plaintext at another level than the ciphertext is dropped to it, or the
    /// ciphertext to the plaintext's (a strict evaluator refuses); sums need the ciphertext's scale
    /// (encode with ``level=ct.level, scale=ct.scale``), else the ciphertext is brought to the plaintext's
    /// scale at the cost of a level, and at level 1 that raises ValueError (scale mismatch). ``decode()``
    /// gives the values back. Immutable. ``to_bytes()`` / ``Plaintext.from_bytes(data, context)``; picklable.
    struct PyPlaintext("Plaintext" in "rnsfhe.ckks"): Plaintext, CkksContext;
    /// Plaintext.from_bytes(data, context, mac_key=None) -> Plaintext
    ///
    /// Loads a plaintext written by ``to_bytes`` into ``context``, validating it (header, fingerprint,
    /// level within the chain, scale, slot count, residues below their moduli). The GIL is released.
    /// Raises rnsfhe.DecodeError (a ValueError) naming the field and byte offset.
    fn from_bytes;

    /// decode(real=False) -> numpy.ndarray
    ///
    /// The ``slots`` encoded values (up to the rounding of the encoding, about 1/scale): complex128,
    /// or float64 (the real parts) if ``real``. The GIL is released.
    #[pyo3(signature = (real = false))]
    fn decode<'py>(&self, py: Python<'py>, real: bool) -> PyResult<Bound<'py, PyAny>> {
        let values = release(py, || self.ctx.decode(&self.key))
            .map_err(ckks_error)?;
        Ok(slot_array(py, values, real))
    }

    /// Level in limbs (the plaintext lives modulo q_0 ... q_{level-1}).
    #[getter]
    fn level(&self) -> usize {
        self.key.level()
    }

    /// The exact scale.
    #[getter]
    fn scale(&self) -> f64 {
        self.key.scale()
    }

    /// Number of slots (a power of two up to N/2).
    #[getter]
    fn slots(&self) -> usize {
        self.key.slots()
    }

    fn __repr__(&self) -> String {
        format!(
            "Plaintext(level={}, log2_scale={:.3}, slots={})",
            self.key.level(),
            self.key.scale().log2(),
            self.key.slots()
        )
    }
}
