//! The homomorphic DFT: SlotsToCoeffs against the encoder's inverse (decrypted as coefficients),
//! CoeffsToSlots against the encoding map, CoeffsToSlots(SlotsToCoeffs(z)) = z, with the error bound of
//! [`Bound`], for full and sparse packing and 1 to 4 levels; error cases.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use rnsfhe_ckks::{
    dft_factors, plaintext_coefficients, real_value_positions, slot_coefficient_positions,
    Ciphertext, CkksContext, CkksDecryptor, CkksEncryptor, CkksParams, CoeffsToSlots,
    CoeffsToSlotsOutput, CoeffsToSlotsResult, Complex64, ConversionMode, DftDirection, Error,
    Evaluator, KeyGenerator, LinearTransform, RescalingPolicy, SecretDistribution, SlotsToCoeffs,
};

use common::{complex_values, rng, values, Setup};

const HAMMING_WEIGHT: usize = 64;

/// `N = 2^11` (1024 slots), scale `2^40`, `q_0` of 50 bits (so that `Delta = 2^40` fits the last level),
/// 4 scaling primes, one 55-bit special prime, one prime per digit, Hamming weight 64 (PEGASUS,
/// Section VI).
fn context() -> Arc<CkksContext> {
    CkksContext::new(CkksParams {
        log_n: 11,
        log_scale: 40,
        q0_bits: 50,
        levels: 4,
        bootstrap_primes: Vec::new(),
        special_primes: 1,
        special_bits: 55,
        dnum: 5,
        secret: SecretDistribution::HammingWeight(HAMMING_WEIGHT),
        sigma: 3.2,
        conversion: ConversionMode::Fast,
        rescaling: RescalingPolicy::ExactScale,
        insecure_for_testing: true,
    })
    .unwrap()
}

fn setup() -> Setup {
    Setup::new(context(), 11)
}

impl Setup {
    fn coefficients(&self, ct: &Ciphertext) -> Vec<f64> {
        plaintext_coefficients(&self.ctx, &self.dec.decrypt_plaintext(ct).unwrap()).unwrap()
    }
}

/// A high-probability bound on the error of the DFT, tracked as the variance `V` of the complex error of
/// one slot (in units of the message: absolute errors divided by the constant scale `Delta`), errors
/// being sums of many independent terms (RNS-CKKS Appendix A.2's heuristic, `6 sqrt(Var)`), on `n`
/// slots, i.e. the `2n` coefficients of the subring they read. The sources, per coefficient, with `h`
/// the secret's Hamming weight:
///
/// * a fresh secret-key encryption: `sigma^2`, plus the encoding's rounding `1/12`;
/// * a key switch at level `l`: `V_ks(l)` ([`rnsfhe_core::RlweContext::key_switch_noise`]);
/// * a rescaling: `(1 + h) / 12` (rounding of `c_0` and of `c_1 s`);
/// * the rounding of a diagonal encoded at scale `q_l`: `1/12`, relative to `q_l` instead of `Delta`.
///
/// A slot sums the `2n` coefficients with unit weights: slot variance `2n` times the coefficient's.
/// A matrix `M` with `D` diagonals applied to slots `x` maps independent slot errors of variance `V` to
/// variance at most `rho(M) V`, `rho(M) = max_p sum_k |d_k[p]|^2` (the largest squared row norm: `2`
/// per butterfly stage of SlotsToCoeffs, `1/2` per stage of CoeffsToSlots, times the folded factor
/// squared). A matrix at level `l` adds the key-switching error of its baby rotations before its
/// diagonals (so it is multiplied by `rho(M)` too), the error of its encoded diagonals times the values
/// they multiply, and the rescaling's error after them:
///
/// ```text
/// V <- rho(M) (V + 2n V_ks(l) / Delta^2) + D (2n / 12) max|x|^2 / q_l^2 + 2n (1 + h) / (12 Delta^2).
/// ```
///
/// (The diagonals' term is not small: slot values grow to `sqrt(n)` times the coefficients inside the
/// DFT, and an encoding error of `sqrt(2n/12) / q_l` per slot of a diagonal does not shrink with its
/// entries.) The giant rotations act at scale `Delta q_l` and the rescaling divides their error by `q_l`:
/// they are left out. At the end, slots are read through the decoding map, coefficients through its
/// inverse, which divides the variance by `n` (`F F^H = n I` for the special FFT `F` on `n` slots): a
/// real coefficient of the SlotsToCoeffs result has variance `V / (2n)`, a real part of a slot `V / 2`.
struct Bound<'a> {
    ctx: &'a CkksContext,
    n: f64,
    delta: f64,
    var: f64,
    /// The slot values entering the next matrix.
    values: Vec<Complex64>,
}

impl<'a> Bound<'a> {
    fn fresh(ctx: &'a CkksContext, z: &[Complex64], delta: f64) -> Self {
        let n = z.len() as f64;
        let s = ctx.params().sigma;
        Self {
            ctx,
            n,
            delta,
            var: 2.0 * n * (s * s + 1.0 / 12.0) / (delta * delta),
            values: z.to_vec(),
        }
    }

    fn v_ks(&self, level: usize) -> f64 {
        let e = self
            .ctx
            .rlwe()
            .key_switch_noise(level, HAMMING_WEIGHT)
            .unwrap();
        e.std_dev * e.std_dev
    }

    /// The matrices of one transform applied from `start_level` down.
    fn through(mut self, matrices: &[LinearTransform], start_level: usize) -> Self {
        let d2 = self.delta * self.delta;
        for (i, m) in matrices.iter().enumerate() {
            let level = start_level - i;
            let q = self.ctx.q_moduli()[level - 1] as f64;
            let rho = (0..m.slots())
                .map(|p| {
                    m.diagonal_indices()
                        .map(|k| m.diagonal(k as i64).unwrap()[p].norm_sqr())
                        .sum::<f64>()
                })
                .fold(0.0, f64::max);
            let x2 = self.values.iter().map(|x| x.norm_sqr()).fold(0.0, f64::max);
            let ks = 2.0 * self.n * self.v_ks(level) / d2;
            let diagonals = m.diagonal_count() as f64 * (2.0 * self.n / 12.0) * x2 / (q * q);
            let rescale = 2.0 * self.n * (1.0 + HAMMING_WEIGHT as f64) / 12.0 / d2;
            self.var = rho * (self.var + ks) + diagonals + rescale;
            self.values = m.apply(&self.values).unwrap();
        }
        self
    }

    /// Bound on a real coefficient after SlotsToCoeffs.
    fn coefficient(&self) -> f64 {
        6.0 * (self.var / (2.0 * self.n)).sqrt()
    }

    /// Bound on a real or imaginary part of a slot.
    fn slot(&self) -> f64 {
        6.0 * (self.var / 2.0).sqrt()
    }

    /// Bound on a slot of `w + conj(w)` (or `-i (w - conj(w))`) after a conjugation at `level`:
    /// twice the real part of `w`'s error plus the conjugation's key switch.
    fn split_slot(&self, level: usize) -> f64 {
        let ks = self.n * self.v_ks(level) / (self.delta * self.delta);
        6.0 * (2.0 * self.var + ks).sqrt()
    }
}

fn factors(
    ctx: &CkksContext,
    slots: usize,
    levels: usize,
    dir: DftDirection,
    f: f64,
) -> Vec<LinearTransform> {
    dft_factors(ctx.encoder(), slots, levels, dir, f).unwrap()
}

/// The largest difference between the decrypted coefficients (over scale) and `factor * z` at the
/// positions of slot_coefficient_positions; for full packing these are all `N` coefficients.
fn coefficient_error(s: &Setup, coeffs: &[f64], z: &[Complex64], factor: f64) -> f64 {
    let positions = slot_coefficient_positions(s.ctx.n(), z.len()).unwrap();
    positions
        .iter()
        .zip(z)
        .map(|(&(re, im), v)| {
            (coeffs[re] - factor * v.re)
                .abs()
                .max((coeffs[im] - factor * v.im).abs())
        })
        .fold(0.0, f64::max)
}

fn slot_error(want: &[Complex64], got: &[Complex64]) -> f64 {
    want.iter()
        .zip(got)
        .map(|(a, b)| (a.re - b.re).abs().max((a.im - b.im).abs()))
        .fold(0.0, f64::max)
}

#[test]
fn slots_to_coeffs_is_the_inverse_of_the_encoder() {
    let s = setup();
    for (slots, levels) in [
        (1024, 1),
        (1024, 2),
        (1024, 3),
        (1024, 4),
        (256, 4),
        (64, 1),
        (64, 2),
        (8, 3),
        (1, 1),
    ] {
        let start = levels + 1;
        let s2c = SlotsToCoeffs::new(&s.ctx, slots, levels, start, 1.0).unwrap();
        assert_eq!(s2c.output_level(), 1);
        let eval = s.evaluator(&s2c.rotation_steps(), false);
        let z = complex_values(slots, slots as u64 + 7 * levels as u64);
        // Encrypted at the top level: S2C drops it to its start level.
        let ct = s.encrypt(&z, slots, s.ctx.max_level());
        let out = eval.slots_to_coeffs(&ct, &s2c).unwrap();
        assert_eq!(out.level(), 1);
        assert!((out.scale() / ct.scale() - 1.0).abs() < 1e-15);
        let coeffs = s.coefficients(&out);
        // The encoder's inverse puts z back where the decoding map reads it: decoding these
        // coefficients in bit-reversed order gives z.
        let err = coefficient_error(&s, &coeffs, &z, 1.0);
        let bound = Bound::fresh(&s.ctx, &z, ct.scale())
            .through(
                &factors(&s.ctx, slots, levels, DftDirection::SlotsToCoeffs, 1.0),
                start,
            )
            .coefficient();
        eprintln!(
            "S2C {slots} slots, {levels} levels, {} rotations: error 2^{:.2}, bound 2^{:.2}",
            s2c.rotation_steps().len(),
            err.log2(),
            bound.log2()
        );
        assert!(
            err <= bound,
            "{slots} slots, {levels} levels: {err:e} > {bound:e}"
        );
    }
}

#[test]
fn coeffs_to_slots_reads_the_coefficients_and_inverts_slots_to_coeffs() {
    let s = setup();
    for (slots, levels) in [(1024, 2), (128, 1), (32, 2)] {
        // C2S of a fresh encryption: slot j holds the coefficients at the positions of slot j.
        let c2s = CoeffsToSlots::new(
            &s.ctx,
            slots,
            levels,
            levels + 1,
            1.0,
            CoeffsToSlotsOutput::Complex,
        )
        .unwrap();
        let s2c = SlotsToCoeffs::new(&s.ctx, slots, 2.min(levels.max(1)), 5, 1.0).unwrap();
        let c2s_after = CoeffsToSlots::new(
            &s.ctx,
            slots,
            levels,
            s2c.output_level(),
            1.0,
            CoeffsToSlotsOutput::Complex,
        )
        .unwrap();
        let mut steps = c2s.rotation_steps();
        steps.extend(s2c.rotation_steps());
        let eval = s.evaluator(&steps, false);
        let z = complex_values(slots, 3 * slots as u64);
        let ct = s.encrypt(&z, slots, levels + 1);
        let CoeffsToSlotsResult::Complex(out) = eval.coeffs_to_slots(&ct, &c2s).unwrap() else {
            panic!("complex output expected")
        };
        assert_eq!(out.level(), 1);
        // The plaintext's coefficients at the positions of slot j (the encoder's inverse of z).
        let coeffs = s.ctx.encoder().coefficients_of(&z, slots).unwrap();
        let want: Vec<Complex64> = slot_coefficient_positions(s.ctx.n(), slots)
            .unwrap()
            .iter()
            .map(|&(re, im)| Complex64::new(coeffs[re], coeffs[im]))
            .collect();
        let got = s.dec.decrypt(&out).unwrap();
        let err = slot_error(&want, &got);
        let bound = Bound::fresh(&s.ctx, &z, ct.scale())
            .through(
                &factors(&s.ctx, slots, levels, DftDirection::CoeffsToSlots, 1.0),
                levels + 1,
            )
            .slot();
        eprintln!(
            "C2S {slots} slots, {levels} levels: error 2^{:.2}, bound 2^{:.2}",
            err.log2(),
            bound.log2()
        );
        assert!(err <= bound, "C2S {slots}/{levels}: {err:e} > {bound:e}");

        // C2S(S2C(z)) = z.
        let top = s.encrypt(&z, slots, 5);
        let coeffs_ct = eval.slots_to_coeffs(&top, &s2c).unwrap();
        let CoeffsToSlotsResult::Complex(back) =
            eval.coeffs_to_slots(&coeffs_ct, &c2s_after).unwrap()
        else {
            panic!("complex output expected")
        };
        let err = slot_error(&z, &s.dec.decrypt(&back).unwrap());
        let bound = Bound::fresh(&s.ctx, &z, top.scale())
            .through(
                &factors(
                    &s.ctx,
                    slots,
                    s2c.levels(),
                    DftDirection::SlotsToCoeffs,
                    1.0,
                ),
                5,
            )
            .through(
                &factors(&s.ctx, slots, levels, DftDirection::CoeffsToSlots, 1.0),
                s2c.output_level(),
            )
            .slot();
        eprintln!(
            "C2S(S2C) {slots} slots: error 2^{:.2}, bound 2^{:.2}",
            err.log2(),
            bound.log2()
        );
        assert!(err <= bound, "C2S(S2C) {slots}: {err:e} > {bound:e}");
    }
}

#[test]
fn factors_and_the_real_imaginary_split() {
    let s = setup();
    for slots in [1024usize, 16] {
        // S2C with a factor, then C2S into real and imaginary parts with another.
        let (f1, f2) = (-1.0 / 8.0, 4.0);
        let s2c = SlotsToCoeffs::new(&s.ctx, slots, 2, 5, f1).unwrap();
        assert_eq!(s2c.factor(), f1);
        let c2s = CoeffsToSlots::new(&s.ctx, slots, 2, 3, f2, CoeffsToSlotsOutput::RealImaginary)
            .unwrap();
        assert!(c2s.needs_conjugation());
        let mut steps = s2c.rotation_steps();
        steps.extend(c2s.rotation_steps());
        let eval = s.evaluator(&steps, true);
        let z = complex_values(slots, 41);
        let ct = s.encrypt(&z, slots, 5);
        let mid = eval.slots_to_coeffs(&ct, &s2c).unwrap();
        // |f1| < 1 is folded into the matrices' scales: the same plaintext at the scale Delta |f1|.
        assert!((mid.scale() / (ct.scale() * f1.abs()) - 1.0).abs() < 1e-9);
        let raw: Vec<f64> = s.coefficients(&mid).iter().map(|c| c * f1.abs()).collect();
        let err = coefficient_error(&s, &raw, &z, f1);
        let after_s2c = Bound::fresh(&s.ctx, &z, ct.scale()).through(
            &factors(&s.ctx, slots, 2, DftDirection::SlotsToCoeffs, f1),
            5,
        );
        assert!(err <= after_s2c.coefficient(), "S2C factor: {err:e}");
        let CoeffsToSlotsResult::RealImaginary { real, imaginary } =
            eval.coeffs_to_slots(&mid, &c2s).unwrap()
        else {
            panic!("split output expected")
        };
        assert_eq!(real.slots(), slots);
        let bound = after_s2c
            .through(
                &factors(&s.ctx, slots, 2, DftDirection::CoeffsToSlots, f2 / 2.0),
                3,
            )
            .split_slot(1);
        // C2S reads the coefficients over the middle's scale Delta |f1|: the slots hold f1 f2 z / |f1|,
        // and their errors (in units of Delta) grow by 1 / |f1| too.
        let f = f1 * f2;
        let want_re: Vec<Complex64> = z.iter().map(|v| Complex64::new(f * v.re, 0.0)).collect();
        let want_im: Vec<Complex64> = z.iter().map(|v| Complex64::new(f * v.im, 0.0)).collect();
        let in_delta = |ct: &Ciphertext| -> Vec<Complex64> {
            s.dec
                .decrypt(ct)
                .unwrap()
                .iter()
                .map(|v| v * f1.abs())
                .collect()
        };
        let err_re = slot_error(&want_re, &in_delta(&real));
        let err_im = slot_error(&want_im, &in_delta(&imaginary));
        eprintln!(
            "split {slots} slots: errors 2^{:.2}, 2^{:.2}, bound 2^{:.2}",
            err_re.log2(),
            err_im.log2(),
            bound.log2()
        );
        assert!(err_re <= bound && err_im <= bound, "split {slots}");
    }
}

#[test]
fn pegasus_real_values_land_at_their_positions() {
    let s = setup();
    // 100 real values: 128 slots, value i at coefficient rev(i) * 8 with Delta * v[i].
    let v = values(100, 5);
    let positions = real_value_positions(s.ctx.n(), v.len()).unwrap();
    let s2c = SlotsToCoeffs::new(&s.ctx, 128, 2, 3, 1.0).unwrap();
    let eval = s.evaluator(&s2c.rotation_steps(), false);
    let mut z: Vec<Complex64> = v.iter().map(|&x| Complex64::new(x, 0.0)).collect();
    z.resize(128, Complex64::new(0.0, 0.0));
    let ct = s.encrypt(&z, 128, 3);
    let out = eval.slots_to_coeffs(&ct, &s2c).unwrap();
    let coeffs = s.coefficients(&out);
    let bound = Bound::fresh(&s.ctx, &z, ct.scale())
        .through(
            &factors(&s.ctx, 128, 2, DftDirection::SlotsToCoeffs, 1.0),
            3,
        )
        .coefficient();
    for (i, &p) in positions.iter().enumerate() {
        assert!((coeffs[p] - v[i]).abs() <= bound, "value {i} at {p}");
    }
    // The slots past the values hold zeros.
    let all = slot_coefficient_positions(s.ctx.n(), 128).unwrap();
    for &(re, im) in &all[100..] {
        assert!(coeffs[re].abs() <= bound && coeffs[im].abs() <= bound);
    }
}

#[test]
fn errors_for_levels_keys_and_shapes() {
    let s = setup();
    let s2c = SlotsToCoeffs::new(&s.ctx, 64, 2, 3, 1.0).unwrap();
    let z = complex_values(64, 1);
    // Below the start level.
    let low = s.encrypt(&z, 64, 2);
    let eval = s.evaluator(&s2c.rotation_steps(), false);
    assert!(matches!(
        eval.slots_to_coeffs(&low, &s2c),
        Err(Error::NotEnoughLevels {
            level: 2,
            needed: 3,
            ..
        })
    ));
    // A rotation key missing.
    let ct = s.encrypt(&z, 64, 3);
    let without_one: Vec<i64> = s2c
        .rotation_steps()
        .into_iter()
        .filter(|&k| k != 1)
        .collect();
    let partial = s.evaluator(&without_one, false);
    assert!(matches!(
        partial.slots_to_coeffs(&ct, &s2c),
        Err(Error::Core(rnsfhe_core::Error::MissingGaloisKey { .. }))
    ));
    // The conjugation key missing for the real / imaginary split.
    let c2s =
        CoeffsToSlots::new(&s.ctx, 64, 2, 3, 1.0, CoeffsToSlotsOutput::RealImaginary).unwrap();
    let no_conj = s.evaluator(&c2s.rotation_steps(), false);
    assert!(matches!(
        no_conj.coeffs_to_slots(&ct, &c2s),
        Err(Error::Core(rnsfhe_core::Error::MissingGaloisKey { .. }))
    ));
    // More slots than the transform.
    let wide = s.encrypt(&complex_values(128, 2), 128, 3);
    assert!(matches!(
        eval.slots_to_coeffs(&wide, &s2c),
        Err(Error::SlotsMismatch { .. })
    ));
    // Shapes: levels outside 1..=min(4, log2 slots), a start level that cannot hold them or is off
    // the chain, slot counts that are not powers of two up to N/2, a zero factor.
    for (slots, levels, start) in [(64, 0, 3), (64, 5, 5), (4, 3, 5), (64, 3, 3), (64, 2, 6)] {
        assert!(
            matches!(
                SlotsToCoeffs::new(&s.ctx, slots, levels, start, 1.0),
                Err(Error::InvalidArgument { .. })
            ),
            "{slots} {levels} {start}"
        );
    }
    for slots in [0usize, 48, 2048] {
        assert!(matches!(
            SlotsToCoeffs::new(&s.ctx, slots, 1, 3, 1.0),
            Err(Error::InvalidSlots { .. })
        ));
    }
    assert!(matches!(
        CoeffsToSlots::new(&s.ctx, 64, 2, 3, 0.0, CoeffsToSlotsOutput::Complex),
        Err(Error::InvalidArgument { .. })
    ));
}

/// PEGASUS's ring degree `N = 2^16` (Table IV) with `l = 256` values (log l = 8 of Table V) at 2 levels,
/// on a short chain (3 scaling primes of 45 bits, `q_0` and the special prime of 60 bits) so that key
/// generation stays quick: the same transform as at full size, whose cost depends on the level only.
#[test]
fn slots_to_coeffs_at_pegasus_ring_degree() {
    let ctx = CkksContext::new(CkksParams {
        log_n: 16,
        log_scale: 45,
        q0_bits: 60,
        levels: 3,
        bootstrap_primes: Vec::new(),
        special_primes: 1,
        special_bits: 60,
        dnum: 4,
        secret: SecretDistribution::HammingWeight(HAMMING_WEIGHT),
        sigma: 3.2,
        conversion: ConversionMode::Fast,
        rescaling: RescalingPolicy::ExactScale,
        insecure_for_testing: true,
    })
    .unwrap();
    let keys = KeyGenerator::new(&ctx, &mut rng(21)).unwrap();
    let s2c = SlotsToCoeffs::new(&ctx, 256, 2, 3, 1.0).unwrap();
    let gk = keys
        .galois_keys(&s2c.rotation_steps(), false, &mut rng(22))
        .unwrap();
    let eval = Evaluator::new(&ctx).with_galois_keys(gk).unwrap();
    let enc = CkksEncryptor::with_secret_key(&ctx, keys.secret_key()).unwrap();
    let dec = CkksDecryptor::new(&ctx, keys.secret_key()).unwrap();
    let z = complex_values(256, 99);
    let pt = ctx.encode(&z, 256, 3).unwrap();
    let ct = enc.encrypt_plaintext(&pt, &mut rng(23)).unwrap();
    let out = eval.slots_to_coeffs(&ct, &s2c).unwrap();
    assert_eq!(out.level(), 1);
    let coeffs = plaintext_coefficients(&ctx, &dec.decrypt_plaintext(&out).unwrap()).unwrap();
    let err = s2c
        .coefficient_positions(ctx.n())
        .unwrap()
        .iter()
        .zip(&z)
        .map(|(&(re, im), v)| (coeffs[re] - v.re).abs().max((coeffs[im] - v.im).abs()))
        .fold(0.0, f64::max);
    let bound = Bound::fresh(&ctx, &z, ct.scale())
        .through(&factors(&ctx, 256, 2, DftDirection::SlotsToCoeffs, 1.0), 3)
        .coefficient();
    eprintln!(
        "S2C N = 2^16, 256 slots: error 2^{:.2}, bound 2^{:.2}",
        err.log2(),
        bound.log2()
    );
    assert!(err <= bound, "{err:e} > {bound:e}");
}

/// The fixed nominal scale of the RNS-CKKS paper and exact floating-point basis conversion: the DFT's
/// diagonals at the dropped primes keep the ciphertext's exact scale under either policy.
#[test]
fn round_trip_under_the_nominal_scale_policy() {
    let ctx = CkksContext::new(CkksParams {
        rescaling: RescalingPolicy::FixedNominalScale,
        conversion: ConversionMode::ExactFloat,
        ..context().params().clone()
    })
    .unwrap();
    let keys = KeyGenerator::new(&ctx, &mut rng(31)).unwrap();
    let s2c = SlotsToCoeffs::new(&ctx, 64, 2, 5, 1.0).unwrap();
    let c2s = CoeffsToSlots::new(&ctx, 64, 2, 3, 1.0, CoeffsToSlotsOutput::Complex).unwrap();
    let mut steps = s2c.rotation_steps();
    steps.extend(c2s.rotation_steps());
    let gk = keys.galois_keys(&steps, false, &mut rng(32)).unwrap();
    let eval = Evaluator::new(&ctx).with_galois_keys(gk).unwrap();
    let enc = CkksEncryptor::with_secret_key(&ctx, keys.secret_key()).unwrap();
    let dec = CkksDecryptor::new(&ctx, keys.secret_key()).unwrap();
    let z = complex_values(64, 8);
    let ct = enc
        .encrypt_plaintext(&ctx.encode(&z, 64, 5).unwrap(), &mut rng(33))
        .unwrap();
    assert_eq!(ct.scale(), 2f64.powi(40));
    let mid = eval.slots_to_coeffs(&ct, &s2c).unwrap();
    assert_eq!(mid.scale(), ct.scale());
    let CoeffsToSlotsResult::Complex(back) = eval.coeffs_to_slots(&mid, &c2s).unwrap() else {
        panic!("complex output expected")
    };
    assert_eq!(back.scale(), ct.scale());
    let err = slot_error(&z, &dec.decrypt(&back).unwrap());
    let bound = Bound::fresh(&ctx, &z, ct.scale())
        .through(&factors(&ctx, 64, 2, DftDirection::SlotsToCoeffs, 1.0), 5)
        .through(&factors(&ctx, 64, 2, DftDirection::CoeffsToSlots, 1.0), 3)
        .slot();
    assert!(err <= bound, "{err:e} > {bound:e}");
}
