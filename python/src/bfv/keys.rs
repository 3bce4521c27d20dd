//! `KeySet` and the key classes (`SecretKey`, `PublicKey`, `RelinKey`, `GaloisKeys`).

use super::*;

/// All keys of one secret: ``secret`` (SecretKey), ``public`` (PublicKey), ``relin`` (RelinKey) and
/// ``galois`` (GaloisKeys, possibly empty). Made by ``Context.keygen``; give ``keys`` to
/// ``Context.evaluator``, ``Context.encryptor`` and ``Context.decryptor``. Hand a server only ``relin``
/// and ``galois`` (``to_bytes()`` or pickling). Not picklable (it holds the secret key: see
/// ``SecretKey.to_secret_bytes``).
#[pyclass(name = "KeySet", module = "rnsfhe.bfv", frozen)]
pub(super) struct PyKeySet {
    pub(super) ctx: Arc<BfvContext>,
    pub(super) secret: Arc<SecretKey>,
    pub(super) public: Arc<PublicKey>,
    pub(super) relin: Arc<RelinKey>,
    pub(super) galois: Galois,
}

keyset_methods! {
    impl PyKeySet {
        /// The Galois keys (row rotations and the column swap).
        #[getter]
        fn galois(&self) -> PyGaloisKeys {
            PyGaloisKeys {
                galois: self.galois.clone(),
                ctx: Arc::clone(&self.ctx),
            }
        }

        /// The row rotation steps that have keys.
        #[getter]
        fn rotations(&self) -> Vec<i64> {
            self.galois.rotations.clone()
        }

        /// Whether the column swap key was generated.
        #[getter]
        fn column_swap(&self) -> bool {
            self.galois.column_swap
        }

        fn __repr__(&self) -> String {
            format!(
                "KeySet(N={}, t={}, relin_components={}, rotations={:?}, column_swap={})",
                self.ctx.n(),
                self.ctx.plaintext_modulus(),
                self.relin.components().len(),
                self.galois.rotations,
                py_bool(self.galois.column_swap)
            )
        }
    }
}

key_classes!(
    module = "rnsfhe.bfv",
    context = BfvContext,
    encryptor_keys = "a bfv KeySet, PublicKey or SecretKey",
    decryptor_keys = "a bfv KeySet or SecretKey"
);

wire_key_class! {
    /// The HPS relinearization key (CRT decomposition, optional base-w digits). ``to_bytes()`` /
    /// ``RelinKey.from_bytes(data, context)``; picklable.
    struct PyRelinKey("RelinKey" in "rnsfhe.bfv"): RelinKey, BfvContext;
    /// RelinKey.from_bytes(data, context) -> RelinKey
    ///
    /// Loads a relinearization key written by ``to_bytes`` into ``context``, validating it (header,
    /// fingerprint, the context's number of components, residues below their moduli; seeds
    /// expanded). The GIL is released. Raises rnsfhe.DecodeError (a ValueError) naming the field
    /// and byte offset of bad bytes.
    fn from_bytes;

    /// Number of key components (residues times digits).
    #[getter]
    fn components(&self) -> usize {
        self.key.components().len()
    }

    fn __repr__(&self) -> String {
        format!(
            "RelinKey(components={}, fingerprint={:#018x})",
            self.key.components().len(),
            self.key.fingerprint()
        )
    }
}

/// Galois keys for row rotations of the batching matrix and the column swap. ``to_bytes()`` /
/// ``GaloisKeys.from_bytes(data, context)``; picklable.
#[pyclass(name = "GaloisKeys", module = "rnsfhe.bfv", frozen)]
pub(super) struct PyGaloisKeys {
    pub(super) galois: Galois,
    pub(super) ctx: Arc<BfvContext>,
}

impl WireClass for PyGaloisKeys {
    type Context = BfvContext;
    type Object = GaloisKeys;

    fn context(&self) -> &BfvContext {
        &self.ctx
    }

    fn object(&self) -> &GaloisKeys {
        &self.galois.keys
    }
}

wire_methods! {
    impl PyGaloisKeys {
        /// GaloisKeys.from_bytes(data, context, mac_key=None) -> GaloisKeys
        ///
        /// Loads Galois keys written by ``to_bytes`` into ``context``, validating them (header,
        /// fingerprint, elements odd, below 2N and increasing, residues below their moduli; seeds
        /// expanded). ``rotations`` and ``column_swap`` are recovered from the Galois elements (a row
        /// rotation by k is 3^k mod 2N, the column swap 2N - 1), each step in (-N/4, N/4] (a step k and
        /// k - N/2 are the same row rotation). The GIL is released. Raises rnsfhe.DecodeError (a
        /// ValueError) naming the field and byte offset of bad bytes.
        #[staticmethod]
        #[pyo3(signature = (data, context, mac_key = None))]
        fn from_bytes(
            py: Python<'_>,
            data: &Bound<'_, PyAny>,
            context: &PyContext,
            mac_key: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<Self> {
            let keys: GaloisKeys = load_object(py, data, &*context.ctx, mac_key)?;
            let (rotations, column_swap) =
                rotations_of_elements(context.ctx.galois_group(), &keys.elements());
            Ok(Self {
                galois: Galois {
                    keys: Arc::new(keys),
                    rotations,
                    column_swap,
                },
                ctx: Arc::clone(&context.ctx),
            })
        }

        /// The row rotation steps that have keys (as given to keygen).
        #[getter]
        fn rotations(&self) -> Vec<i64> {
            self.galois.rotations.clone()
        }

        /// Whether the column swap key is present.
        #[getter]
        fn column_swap(&self) -> bool {
            self.galois.column_swap
        }

        /// The Galois elements that have keys (3^k mod 2N for a row rotation by k, 2N - 1 for the column
        /// swap).
        #[getter]
        fn elements(&self) -> Vec<usize> {
            self.galois.keys.elements()
        }

        fn __repr__(&self) -> String {
            format!(
                "GaloisKeys(rotations={:?}, column_swap={})",
                self.galois.rotations,
                py_bool(self.galois.column_swap)
            )
        }
    }
}
