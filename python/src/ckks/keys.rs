//! `KeySet` and the key classes (`SecretKey`, `PublicKey`, `RelinKey`, `GaloisKeys`).

use super::*;

/// All keys of one secret: ``secret`` (SecretKey), ``public`` (PublicKey), ``relin`` (RelinKey) and
/// ``galois`` (GaloisKeys). Made by ``Context.keygen``; give ``keys`` to ``Context.evaluator``,
/// ``Context.encryptor`` and ``Context.decryptor``. Hand a server only ``relin`` and ``galois``
/// (``to_bytes()`` or pickling). Not picklable (it holds the secret key: see
/// ``SecretKey.to_secret_bytes``).
#[pyclass(name = "KeySet", module = "rnsfhe.ckks", frozen)]
pub(super) struct PyKeySet {
    pub(super) ctx: Arc<CkksContext>,
    pub(super) secret: Arc<SecretKey>,
    pub(super) public: Arc<PublicKey>,
    pub(super) relin: Arc<RelinKey>,
    pub(super) galois: Arc<GaloisKeys>,
    /// The sparse-secret encapsulation of a bootstrapper (``keygen(bootstrapper=...)``), if any.
    pub(super) encapsulation: Option<Arc<SparseEncapsulation>>,
    pub(super) rotations: Vec<i64>,
    pub(super) conjugate: bool,
}

keyset_methods! {
    impl PyKeySet {
        /// The Galois keys (rotations and conjugation).
        #[getter]
        fn galois(&self) -> PyGaloisKeys {
            PyGaloisKeys {
                key: Arc::clone(&self.galois),
                rotations: self.rotations.clone(),
                conjugate: self.conjugate,
                ctx: Arc::clone(&self.ctx),
            }
        }

        /// The Hamming weight of the sparse secret of the bootstrapping encapsulation keys the set holds
        /// (``keygen(bootstrapper=...)`` for a bootstrapper with ``sparse_secret``), or None.
        #[getter]
        fn sparse_secret(&self) -> Option<usize> {
            self.encapsulation.as_ref().map(|e| e.weight())
        }

        /// The keys a server needs to bootstrap, without the secret: the set's Galois keys and, for
        /// ``keygen(bootstrapper=...)`` of a bootstrapper with ``sparse_secret``, the sparse-secret
        /// encapsulation keys, as one BootstrappingKeys (``to_bytes()``, picklable) for
        /// ``Context.evaluator(relin_key=..., bootstrapping_keys=...)``. The keys are shared with the set,
        /// not copied.
        #[getter]
        fn bootstrapping_keys(&self) -> PyBootstrappingKeys {
            let key = BootstrappingKeys {
                galois: Arc::clone(&self.galois),
                encapsulation: self.encapsulation.clone(),
            };
            PyBootstrappingKeys {
                key: Arc::new(key),
                ctx: Arc::clone(&self.ctx),
            }
        }

        /// The rotation steps that have keys.
        #[getter]
        fn rotations(&self) -> Vec<i64> {
            self.rotations.clone()
        }

        /// Whether the conjugation key was generated.
        #[getter]
        fn conjugate(&self) -> bool {
            self.conjugate
        }

        fn __repr__(&self) -> String {
            format!(
                "KeySet(N={}, rotations={:?}, conjugate={})",
                self.ctx.n(),
                self.rotations,
                py_bool(self.conjugate)
            )
        }
    }
}

key_classes!(
    module = "rnsfhe.ckks",
    context = CkksContext,
    encryptor_keys = "a KeySet, a PublicKey or a SecretKey",
    decryptor_keys = "a KeySet or a SecretKey"
);

wire_key_class! {
    /// The relinearization key. ``to_bytes()`` / ``RelinKey.from_bytes(data, context)``; picklable.
    struct PyRelinKey("RelinKey" in "rnsfhe.ckks"): RelinKey, CkksContext;
    /// RelinKey.from_bytes(data, context) -> RelinKey
    ///
    /// Loads a relinearization key written by ``to_bytes`` into ``context``, validating it (header,
    /// fingerprint, one key-switching pair per digit group, residues below their moduli; seeds
    /// expanded). The GIL is released. Raises rnsfhe.DecodeError (a ValueError) naming the field
    /// and byte offset of bad bytes.
    fn from_bytes;

    fn __repr__(&self) -> String {
        format!(
            "RelinKey(fingerprint={:#018x})",
            self.key.key().fingerprint()
        )
    }
}

/// Galois keys for slot rotations (and conjugation). ``to_bytes()`` /
/// ``GaloisKeys.from_bytes(data, context)``; picklable.
#[pyclass(name = "GaloisKeys", module = "rnsfhe.ckks", frozen)]
pub(super) struct PyGaloisKeys {
    pub(super) key: Arc<GaloisKeys>,
    pub(super) rotations: Vec<i64>,
    pub(super) conjugate: bool,
    pub(super) ctx: Arc<CkksContext>,
}

impl WireClass for PyGaloisKeys {
    type Context = CkksContext;
    type Object = GaloisKeys;

    fn context(&self) -> &CkksContext {
        &self.ctx
    }

    fn object(&self) -> &GaloisKeys {
        &self.key
    }
}

wire_methods! {
    impl PyGaloisKeys {
        /// GaloisKeys.from_bytes(data, context, mac_key=None) -> GaloisKeys
        ///
        /// Loads Galois keys written by ``to_bytes`` into ``context``, validating them (header,
        /// fingerprint, elements odd, below 2N and increasing, residues below their moduli; seeds
        /// expanded). ``rotations`` and ``conjugate`` are recovered from the Galois elements (rotation
        /// by k is 5^k mod 2N, conjugation 2N - 1), each step in (-N/4, N/4] (a step k and k - N/2 are
        /// the same rotation: keygen(rotations=[-1]) comes back as -1, [N/2 - 1] as -1 too). The GIL is
        /// released. Raises rnsfhe.DecodeError (a ValueError) naming the field and byte offset.
        #[staticmethod]
        #[pyo3(signature = (data, context, mac_key = None))]
        fn from_bytes(
            py: Python<'_>,
            data: &Bound<'_, PyAny>,
            context: &PyContext,
            mac_key: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<Self> {
            let key: GaloisKeys = load_object(py, data, &*context.ctx, mac_key)?;
            let (rotations, conjugate) =
                rotations_of_elements(context.ctx.galois_group(), &key.elements());
            Ok(Self {
                key: Arc::new(key),
                rotations,
                conjugate,
                ctx: Arc::clone(&context.ctx),
            })
        }

        /// The rotation steps that have keys.
        #[getter]
        fn rotations(&self) -> Vec<i64> {
            self.rotations.clone()
        }

        /// Whether the conjugation key is present.
        #[getter]
        fn conjugate(&self) -> bool {
            self.conjugate
        }

        /// The Galois elements that have keys (5^k mod 2N for rotation by k, 2N - 1 for conjugation).
        #[getter]
        fn elements(&self) -> Vec<usize> {
            self.key.elements()
        }

        fn __repr__(&self) -> String {
            format!(
                "GaloisKeys(rotations={:?}, conjugate={})",
                self.rotations,
                py_bool(self.conjugate)
            )
        }
    }
}

wire_key_class! {
    /// The keys of CKKS bootstrapping for a server that holds no secret: Galois keys (its rotations,
    /// the conjugation and the trace) and the optional sparse-secret encapsulation keys (a key to a
    /// sparse secret over q_0 P and the key back). ``KeySet.bootstrapping_keys``; ``to_bytes()`` /
    /// ``BootstrappingKeys.from_bytes(data, context)``; picklable. Give them to
    /// ``Context.evaluator(bootstrapping_keys=...)``.
    struct PyBootstrappingKeys("BootstrappingKeys" in "rnsfhe.ckks"): BootstrappingKeys, CkksContext;
    /// BootstrappingKeys.from_bytes(data, context, mac_key=None) -> BootstrappingKeys
    ///
    /// Loads bootstrapping keys written by ``to_bytes`` into ``context``, validating them (header,
    /// fingerprint, Galois elements, a sparse-secret weight from 1 to N whose key reaches 128 bits
    /// unless the context was made with ``allow_insecure``, residues below their moduli; seeds
    /// expanded). The GIL is released. Raises rnsfhe.DecodeError (a ValueError) naming the field and
    /// byte offset of bad bytes.
    fn from_bytes;

    /// The Hamming weight of the encapsulation's sparse secret, or None without encapsulation keys.
    #[getter]
    fn sparse_secret(&self) -> Option<usize> {
        self.key.encapsulation.as_ref().map(|e| e.weight())
    }

    /// The Galois elements that have keys.
    #[getter]
    fn elements(&self) -> Vec<usize> {
        self.key.galois.elements()
    }

    fn __repr__(&self) -> String {
        format!(
            "BootstrappingKeys(galois_keys={}, sparse_secret={})",
            self.key.galois.elements().len(),
            self.key
                .encapsulation
                .as_ref()
                .map_or("None".to_string(), |e| e.weight().to_string())
        )
    }
}
