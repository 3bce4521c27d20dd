//! `Bootstrapper`: the CKKS bootstrapping circuit of a context (`rnsfhe::ckks::bootstrap`), used by
//! `Evaluator.bootstrap` and `Ciphertext.bootstrap`; `Context.keygen(bootstrapper=...)` makes its keys.

use super::*;
use rnsfhe::ckks::{BootstrapParams, Bootstrapper};

/// Bootstrapper(context, slots=None, *, c2s_levels=None, s2c_levels=None, sparse_secret=None)
///
/// The bootstrapping circuit of ``context`` for ciphertexts of ``slots`` slots (a power of two up to
/// N/2, default N/2): ModRaise, CoeffsToSlots, EvalMod, SlotsToCoeffs (Cheon-Han-Kim-Kim-Song 2018,
/// Bossuat et al. 2021), with the EvalMod the context's secret and chain call for and CoeffsToSlots /
/// SlotsToCoeffs on ``c2s_levels`` / ``s2c_levels`` levels (default 3 each). ``sparse_secret``: the
/// Hamming weight h of the sparse secret ModRaise runs under (sparse-secret encapsulation, Bossuat et
/// al., ACNS 2022: EvalMod's K then follows h instead of the CKKS secret), 0 for none, None for the
/// default (32 for a uniform ternary secret, none for a Hamming-weight one). Built once (it encodes the
/// DFT matrices); make its keys with ``Context.keygen(bootstrapper=...)``, then bootstrap with
/// ``ct.bootstrap(bootstrapper)``. The result is at level ``output_level`` with the default scale of the
/// level EvalMod leaves. Raises ValueError for an unsupported slot count or a chain with too few levels (naming how
/// many it needs). The GIL is released while the matrices are encoded.
#[pyclass(name = "Bootstrapper", module = "rnsfhe.ckks", frozen)]
pub(crate) struct PyBootstrapper {
    pub(crate) btp: Arc<Bootstrapper>,
}

#[pymethods]
impl PyBootstrapper {
    #[new]
    #[pyo3(signature = (context, slots = None, *, c2s_levels = None, s2c_levels = None,
                        sparse_secret = None))]
    fn new(
        py: Python<'_>,
        context: &PyContext,
        slots: Option<Int>,
        c2s_levels: Option<Int>,
        s2c_levels: Option<Int>,
        sparse_secret: Option<Int>,
    ) -> PyResult<Self> {
        let ctx = &context.ctx;
        let slots = match slots {
            Some(s) => s.get("slots")?,
            None => ctx.max_slots(),
        };
        let c2s_levels: Option<usize> = c2s_levels.map(|l| l.get("c2s_levels")).transpose()?;
        let s2c_levels: Option<usize> = s2c_levels.map(|l| l.get("s2c_levels")).transpose()?;
        let sparse_secret: Option<usize> =
            sparse_secret.map(|h| h.get("sparse_secret")).transpose()?;
        let btp = release(py, || -> ckks::Result<Bootstrapper> {
            let mut params = match sparse_secret {
                None => BootstrapParams::for_context(ctx, slots)?,
                Some(h) => BootstrapParams::for_context_with_sparse_secret(
                    ctx,
                    slots,
                    (h > 0).then_some(h),
                )?,
            };
            if let Some(l) = c2s_levels {
                params.c2s_levels = l;
            }
            if let Some(l) = s2c_levels {
                params.s2c_levels = l;
            }
            Bootstrapper::new(ctx, params)
        })
        .map_err(ckks_error)?;
        Ok(Self { btp: Arc::new(btp) })
    }

    /// The slot count of the ciphertexts it bootstraps.
    #[getter]
    fn slots(&self) -> usize {
        self.btp.slots()
    }

    /// The levels the circuit uses (CoeffsToSlots, EvalMod, SlotsToCoeffs).
    #[getter]
    fn depth(&self) -> usize {
        self.btp.depth()
    }

    /// The level (limbs) of a bootstrapped ciphertext.
    #[getter]
    fn output_level(&self) -> usize {
        self.btp.output_level()
    }

    /// The multiplications left after a bootstrapping (``output_level - 1``).
    #[getter]
    fn levels_left(&self) -> usize {
        self.btp.levels_left()
    }

    /// The Hamming weight of the sparse secret ModRaise runs under, or None (the CKKS secret).
    #[getter]
    fn sparse_secret(&self) -> Option<usize> {
        self.btp.sparse_secret()
    }

    /// The bound on EvalMod's K (the integer parts of ModRaise).
    #[getter]
    fn k(&self) -> u32 {
        self.btp.eval_mod().params().k
    }

    /// The double angles of EvalMod.
    #[getter]
    fn double_angle(&self) -> u32 {
        self.btp.eval_mod().params().double_angle
    }

    /// The probability that one bootstrapping fails (some integer part of ModRaise above K): the union
    /// bound over the coefficients EvalMod reduces.
    #[getter]
    fn failure_probability(&self) -> f64 {
        self.btp.failure_probability()
    }

    /// The largest input scale the EvalMod range admits for values ``|z| <= 1``.
    #[getter]
    fn max_input_scale(&self) -> f64 {
        self.btp.max_input_scale()
    }

    /// The rotation steps the circuit needs keys for.
    #[getter]
    fn rotation_steps(&self) -> Vec<i64> {
        self.btp.rotation_steps()
    }

    /// The Galois elements the circuit needs keys for (rotations, conjugation, trace).
    #[getter]
    fn galois_elements(&self) -> Vec<usize> {
        self.btp
            .galois_elements()
            .into_iter()
            .map(|(e, _)| e)
            .collect()
    }

    /// error_bound(scale) -> dict: the bound on the error of a real or imaginary part of one slot
    /// after bootstrapping an input at ``scale`` (values ``|z| <= 1``), against the input's
    /// decryption: its terms ``eval_mod``, ``c2s_noise``, ``eval_mod_noise``, ``s2c_noise``,
    /// ``encapsulation_noise`` and their sum ``total``. Raises ValueError for a scale above ``max_input_scale``.
    fn error_bound<'py>(&self, py: Python<'py>, scale: f64) -> PyResult<Bound<'py, PyDict>> {
        let b = self.btp.error_bound(scale).map_err(ckks_error)?;
        let d = PyDict::new(py);
        d.set_item("eval_mod", b.eval_mod)?;
        d.set_item("c2s_noise", b.c2s_noise)?;
        d.set_item("eval_mod_noise", b.eval_mod_noise)?;
        d.set_item("s2c_noise", b.s2c_noise)?;
        d.set_item("encapsulation_noise", b.encapsulation_noise)?;
        d.set_item("total", b.total)?;
        Ok(d)
    }

    /// meta_output_level(passes) -> int: the level (limbs) of ``ct.bootstrap(bootstrapper, passes)``:
    /// ``output_level`` for one pass, one less for META-BTS (two or more).
    fn meta_output_level(&self, passes: Int) -> PyResult<usize> {
        Ok(self.btp.meta_output_level(passes.get("passes")?))
    }

    /// meta_error_bound(scale, passes) -> dict: the bound of META-BTS with ``passes`` passes for an
    /// input at ``scale`` (values ``|z| <= 1``): ``passes`` (the bound after each pass), ``shifts``
    /// (the exponent k of each correction's 2^k), ``rounding`` (one correction's roundings) and
    /// ``total``. Raises ValueError for 0 passes, a scale above ``max_input_scale``, or a chain that
    /// leaves too few levels after a bootstrapping (1 for two passes, 2 for more).
    fn meta_error_bound<'py>(
        &self,
        py: Python<'py>,
        scale: f64,
        passes: Int,
    ) -> PyResult<Bound<'py, PyDict>> {
        let b = self
            .btp
            .meta_error_bound(scale, passes.get("passes")?)
            .map_err(ckks_error)?;
        let d = PyDict::new(py);
        d.set_item("passes", b.passes)?;
        d.set_item("shifts", b.shifts)?;
        d.set_item("rounding", b.rounding)?;
        d.set_item("total", b.total)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        let p = self.btp.params();
        format!(
            "Bootstrapper(slots={}, c2s_levels={}, s2c_levels={}, sparse_secret={}, eval_mod_depth={}, \
             output_level={})",
            p.slots,
            p.c2s_levels,
            p.s2c_levels,
            p.sparse_secret
                .map_or_else(|| "None".to_string(), |h| h.to_string()),
            self.btp.eval_mod().depth(),
            self.btp.output_level()
        )
    }
}

/// `ct` bootstrapped by `eval` with the GIL released: one pass is a plain bootstrapping, more are
/// META-BTS (`Evaluator::bootstrap_meta`).
pub(super) fn bootstrap_with(
    py: Python<'_>,
    eval: &Arc<Eval>,
    ct: &Ciphertext,
    btp: &PyBootstrapper,
    passes: Int,
) -> PyResult<PyCiphertext> {
    let btp = Arc::clone(&btp.btp);
    let passes: usize = passes.get("passes")?;
    unary(py, eval, ct, move |e, c| e.bootstrap_meta(c, &btp, passes))
}
