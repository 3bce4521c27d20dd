//! min / max, max-pooling, bitonic sort and arg-min (PEGASUS Section V.A) on the InsecureTest pipeline
//! (N = 2^11, n_lwe = 64, tables in degree 2^10): hundreds of random inputs separated by more than the
//! error bounds, against plaintext; the CKKS entry points end to end; and the errors of wrong uses.
//!
//! Inputs come from `PegasusEvaluator::to_lwe` of CKKS ciphertexts, as in use. The values of one trial
//! are distinct points of a lattice of spacing `sep` (above the bound that makes the answer exact),
//! jittered by at most `sep / 20`, within the declared bound.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use rand::rngs::StdRng;
use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rnsfhe_apps::{Comparator, ComparisonKey, Error, Form, Order};
use rnsfhe_ckks::{Ciphertext, CkksDecryptor, CkksEncryptor, Csprng, KeyGenerator};
use rnsfhe_lwe::{LweCiphertext, LweSwitchingKey};
use rnsfhe_pegasus::{
    PegasusEvaluator, PegasusKeys, PegasusSecretKeys, PipelineOptions, PipelinePreset,
};

const SLOTS: usize = 16;

struct Setup {
    pegasus: Arc<PegasusEvaluator>,
    secrets: PegasusSecretKeys,
    key: ComparisonKey,
    enc: CkksEncryptor,
    dec: CkksDecryptor,
    rng: Csprng,
}

fn setup(seed: u8) -> Setup {
    let params = PipelinePreset::InsecureTest.params().unwrap();
    let ctx = params.ckks.clone();
    let mut rng = Csprng::insecure_from_seed_for_tests([seed; 32]);
    let keygen = KeyGenerator::new(&ctx, &mut rng).unwrap();
    let options = PipelineOptions {
        allow_insecure: true,
        ..PipelineOptions::new(SLOTS)
    };
    let (keys, secrets) = PegasusKeys::generate(&params, &options, &keygen, &mut rng).unwrap();
    let pegasus = Arc::new(PegasusEvaluator::new(params, options, keys).unwrap());
    let key = ComparisonKey::generate(&pegasus, &secrets, &mut rng).unwrap();
    Setup {
        pegasus,
        secrets,
        key,
        enc: CkksEncryptor::with_secret_key(&ctx, keygen.secret_key()).unwrap(),
        dec: CkksDecryptor::new(&ctx, keygen.secret_key()).unwrap(),
        rng,
    }
}

impl Setup {
    fn comparator(&self, bound: Option<f64>) -> Comparator<Arc<PegasusEvaluator>> {
        Comparator::new(Arc::clone(&self.pegasus), self.key.clone(), bound).unwrap()
    }

    fn encrypt(&mut self, values: &[f64]) -> Ciphertext {
        let ctx = self.pegasus.context();
        let pt = ctx
            .encode_real(values, SLOTS, self.pegasus.input_level())
            .unwrap();
        self.enc.encrypt_plaintext(&pt, &mut self.rng).unwrap()
    }

    fn lwes(&mut self, values: &[f64]) -> Vec<LweCiphertext> {
        let ct = self.encrypt(values);
        self.pegasus.to_lwe(&ct).unwrap()
    }
}

/// `SLOTS` values uniform in `[-bound, bound]`.
fn uniform(plain: &mut StdRng, bound: f64) -> Vec<f64> {
    (0..SLOTS).map(|_| plain.gen_range(-bound..bound)).collect()
}

/// The extremes (`f` = `f64::min` or `f64::max`) of the groups of `t` consecutive values.
fn extremes(x: &[f64], t: usize, f: fn(f64, f64) -> f64) -> Vec<f64> {
    x.chunks(t)
        .map(|c| c.iter().cloned().reduce(f).unwrap())
        .collect()
}

/// `SLOTS / t` groups of `t` values in `[-bound, bound]`, each with one minimum at a random place and
/// the others at least `sep` above it; and the bits of the minima.
fn gapped(plain: &mut StdRng, t: usize, bound: f64, sep: f64) -> (Vec<f64>, Vec<f64>) {
    assert!(
        sep < 2.0 * bound,
        "a gap of {sep} does not fit in [-{bound}, {bound}]"
    );
    let (mut x, mut bits) = (Vec::new(), Vec::new());
    for _ in 0..SLOTS / t {
        let min = plain.gen_range(-bound..bound - sep);
        let at = plain.gen_range(0..t);
        for i in 0..t {
            let m = if i == at {
                min
            } else {
                plain.gen_range(min + sep..=bound)
            };
            x.push(m);
            bits.push(f64::from(u8::from(i == at)));
        }
    }
    (x, bits)
}

fn assert_close(label: &str, got: &[f64], want: &[f64], bound: f64) {
    assert_eq!(got.len(), want.len(), "{label}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= bound,
            "{label}: output {i} = {g}, expected {w} (bound {bound})"
        );
    }
}

/// Bits within 1/4 of 0 or 1 (the table's rotation noise and the switch back are far smaller).
fn assert_bits(label: &str, got: &[f64], want: &[f64]) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() < 0.25, "{label}: bit {i} = {g}, expected {w}");
    }
}

#[test]
fn min_max_sort_argmin_agree_with_plaintext() {
    let mut s = setup(1);
    let cmp = s.comparator(None);
    let v = cmp.bound();
    let pair = cmp.pair_error_bound().unwrap();
    eprintln!(
        "bound {v}, pair 2^{:.2}, tree(16) 2^{:.2}, sort(16) 2^{:.2}, argmin resolution(16) 2^{:.2}",
        pair.log2(),
        cmp.tree_error_bound(16).unwrap().log2(),
        cmp.sort_error_bound(16).unwrap().log2(),
        cmp.argmin_resolution(16).unwrap().log2()
    );
    let mut plain = StdRng::seed_from_u64(7);
    let mut trials = 0;
    for round in 0..3 {
        // min / max of pairs, in both forms: 8 pairs per round and function.
        let x = uniform(&mut plain, v);
        let lwes = s.lwes(&x);
        let mins: Vec<f64> = x.chunks(2).map(|c| c[0].min(c[1])).collect();
        let maxs: Vec<f64> = x.chunks(2).map(|c| c[0].max(c[1])).collect();
        let form = if round % 2 == 0 {
            Form::Lwe
        } else {
            Form::Repack
        };
        let got = cmp.min_of(&lwes, 2, form).unwrap();
        assert_close("min", &cmp.decrypt(&s.secrets, &got).unwrap(), &mins, pair);
        let got = cmp.max_of(&lwes, 2, form).unwrap();
        assert_close("max", &cmp.decrypt(&s.secrets, &got).unwrap(), &maxs, pair);
        let (hi, lo) = cmp.swap(&lwes[0], &lwes[1], Order::Descending).unwrap();
        let got: Vec<f64> = [lo, hi]
            .iter()
            .map(|c| s.secrets.lwe.decrypt(c).unwrap() as f64 / cmp.scale())
            .collect();
        assert_close("swap", &got, &[mins[0], maxs[0]], pair);
        trials += SLOTS + 1;

        for t in [4usize, 8, 16] {
            // min and max trees.
            let x = uniform(&mut plain, v);
            let lwes = s.lwes(&x);
            let tree = cmp.tree_error_bound(t).unwrap();
            let got = cmp.min_of(&lwes, t, Form::Lwe).unwrap();
            let want = extremes(&x, t, f64::min);
            assert_close(
                "min tree",
                &cmp.decrypt(&s.secrets, &got).unwrap(),
                &want,
                tree,
            );
            let got = cmp.max_of(&lwes, t, Form::Repack).unwrap();
            let want = extremes(&x, t, f64::max);
            assert_close(
                "max tree",
                &cmp.decrypt(&s.secrets, &got).unwrap(),
                &want,
                tree,
            );

            // Sorts of two groups (one of 16): within the bound of the sorted values (sorting is
            // continuous, so no separation is needed).
            let sort_bound = cmp.sort_error_bound(t).unwrap();
            let form = if t == 8 { Form::Repack } else { Form::Lwe };
            for (g, chunk) in lwes.chunks(t).enumerate().take(32 / t) {
                let order = if (g + round) % 2 == 0 {
                    Order::Ascending
                } else {
                    Order::Descending
                };
                let mut want = x[g * t..(g + 1) * t].to_vec();
                want.sort_by(f64::total_cmp);
                if order == Order::Descending {
                    want.reverse();
                }
                let got = cmp.sort(chunk, order, form).unwrap();
                let label = format!("sort t={t} {order:?}");
                assert_close(
                    &label,
                    &cmp.decrypt(&s.secrets, &got).unwrap(),
                    &want,
                    sort_bound,
                );
                trials += 1;
            }

            // arg-min and arg-max: the minimum (maximum) apart from the others by the resolution.
            let sep = 1.05 * cmp.argmin_resolution(t).unwrap();
            let (x, bits) = gapped(&mut plain, t, v, sep);
            let got = cmp.argmin(&s.lwes(&x), t, form).unwrap();
            let label = format!("argmin t={t}");
            assert_bits(&label, &cmp.decrypt(&s.secrets, &got).unwrap(), &bits);
            let neg: Vec<f64> = x.iter().map(|m| -m).collect();
            let got = cmp.argmax(&s.lwes(&neg), t, form).unwrap();
            let label = format!("argmax t={t}");
            assert_bits(&label, &cmp.decrypt(&s.secrets, &got).unwrap(), &bits);

            // Both from one tree: the extremes within their bound, the same bits.
            let m_bound = cmp.min_and_argmin_error_bound(t, form).unwrap();
            let (m, got) = cmp.min_and_argmin(&s.lwes(&x), t, form).unwrap();
            let label = format!("min_and_argmin t={t} {form:?}");
            assert_eq!(m.form, form, "{label}");
            assert_close(
                &label,
                &cmp.decrypt(&s.secrets, &m).unwrap(),
                &extremes(&x, t, f64::min),
                m_bound,
            );
            assert_bits(&label, &cmp.decrypt(&s.secrets, &got).unwrap(), &bits);
            let (m, got) = cmp.max_and_argmax(&s.lwes(&neg), t, form).unwrap();
            let label = format!("max_and_argmax t={t} {form:?}");
            assert_close(
                &label,
                &cmp.decrypt(&s.secrets, &m).unwrap(),
                &extremes(&neg, t, f64::max),
                m_bound,
            );
            assert_bits(&label, &cmp.decrypt(&s.secrets, &got).unwrap(), &bits);
            trials += 8 * (SLOTS / t);
        }
    }
    eprintln!("{trials} trials");
    assert!(trials >= 100);
}

#[test]
fn max_pool_by_the_scaled_max() {
    let mut s = setup(2);
    let mut plain = StdRng::seed_from_u64(8);
    let domain = s.pegasus.options().input_bound;
    for t in [2usize, 4, 16] {
        let cmp = s.comparator(Some(domain / t as f64));
        let bound = cmp.max_pool_error_bound(t).unwrap();
        eprintln!("max-pool t = {t}: bound 2^{:.2}", bound.log2());
        for form in [Form::Lwe, Form::Repack] {
            for _ in 0..3 {
                // Max-pooling is continuous: any inputs in the bound, no separation needed.
                let x: Vec<f64> = (0..SLOTS)
                    .map(|_| plain.gen_range(-cmp.bound()..cmp.bound()))
                    .collect();
                let lwes = s.lwes(&x);
                let want: Vec<f64> = x
                    .chunks(t)
                    .map(|c| c.iter().cloned().fold(f64::NEG_INFINITY, f64::max))
                    .collect();
                let got = cmp.max_pool(&lwes, t, form).unwrap();
                assert_eq!(got.ciphertexts.len(), SLOTS / t);
                assert_close(
                    &format!("max-pool t={t}"),
                    &cmp.decrypt(&s.secrets, &got).unwrap(),
                    &want,
                    bound,
                );
            }
        }
    }
}

/// The CKKS entry points: to_lwe, the function, repacking; the repacking adds about 2^-15 of the output
/// range (docs/pegasus.md), far below the tables' error.
#[test]
fn ckks_entry_points() {
    let mut s = setup(3);
    let mut plain = StdRng::seed_from_u64(9);
    let cmp = s.comparator(None);
    let repack = 2f64.powi(-10);
    let t = SLOTS;
    let sep = 1.05 * cmp.argmin_resolution(t).unwrap();
    let (x, bits) = gapped(&mut plain, t, cmp.bound(), sep);
    let ct = s.encrypt(&x);

    let sorted = cmp.sort_ckks(&ct, Order::Ascending).unwrap();
    let mut want = x.clone();
    want.sort_by(f64::total_cmp);
    let got = s.dec.decrypt_real(&sorted).unwrap();
    let bound = cmp.sort_error_bound(t).unwrap() + repack;
    assert_close("sort_ckks", &got, &want, bound);

    let got = s
        .dec
        .decrypt_real(&cmp.argmin_ckks(&ct, t).unwrap())
        .unwrap();
    assert_bits("argmin_ckks", &got, &bits);
    let (m, b) = cmp.min_and_argmin_ckks(&ct, t).unwrap();
    let got = s.dec.decrypt_real(&b).unwrap();
    assert_bits("min_and_argmin_ckks (bits)", &got, &bits);
    let got = s.dec.decrypt_real(&m).unwrap();
    let min = x.iter().cloned().fold(f64::INFINITY, f64::min);
    let m_bound = cmp.min_and_argmin_error_bound(t, Form::Repack).unwrap() + repack;
    assert_close("min_and_argmin_ckks (min)", &got[..1], &[min], m_bound);
    assert_close(
        "min_and_argmin_ckks (rest)",
        &got[1..],
        &[0.0; SLOTS - 1],
        repack,
    );
    let got = s.dec.decrypt_real(&cmp.min_ckks(&ct, 4).unwrap()).unwrap();
    let mins: Vec<f64> = x
        .chunks(4)
        .map(|c| c.iter().cloned().fold(f64::INFINITY, f64::min))
        .collect();
    assert_close(
        "min_ckks",
        &got[..4],
        &mins,
        cmp.tree_error_bound(4).unwrap() + repack,
    );
    assert_close("min_ckks (rest)", &got[4..], &[0.0; SLOTS - 4], repack);

    let pool = s.comparator(Some(cmp.domain() / 4.0));
    let y: Vec<f64> = (0..SLOTS)
        .map(|_| plain.gen_range(-pool.bound()..pool.bound()))
        .collect();
    let ct = s.encrypt(&y);
    let got = s
        .dec
        .decrypt_real(&pool.max_pool_ckks(&ct, 4).unwrap())
        .unwrap();
    let want: Vec<f64> = y
        .chunks(4)
        .map(|c| c.iter().cloned().fold(f64::NEG_INFINITY, f64::max))
        .collect();
    assert_close(
        "max_pool_ckks",
        &got[..4],
        &want,
        pool.max_pool_error_bound(4).unwrap() + repack,
    );
}

/// Ties and close inputs: min and max are continuous, so equal or close values give outputs within the
/// pair bound of both; arg-min marks every value within the threshold of the minimum (both of a tie).
#[test]
fn ties_and_close_values() {
    let mut s = setup(4);
    let cmp = s.comparator(None);
    let pair = cmp.pair_error_bound().unwrap();
    let x = [
        1.25,
        1.25,
        -0.5,
        -0.5 + pair / 4.0,
        3.0,
        3.0,
        3.0,
        3.0,
        0.0,
        2.0,
        0.0,
        2.0,
        -3.0,
        1.0,
        -3.0,
        1.0,
    ];
    let lwes = s.lwes(&x);
    let got = cmp.min_of(&lwes, 2, Form::Lwe).unwrap();
    let mins: Vec<f64> = x.chunks(2).map(|c| c[0].min(c[1])).collect();
    assert_close(
        "min of ties",
        &cmp.decrypt(&s.secrets, &got).unwrap(),
        &mins,
        pair,
    );
    let got = cmp.argmin(&lwes, 4, Form::Lwe).unwrap();
    let bits = [
        0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0,
    ];
    assert_bits(
        "argmin of ties",
        &cmp.decrypt(&s.secrets, &got).unwrap(),
        &bits,
    );
}

#[test]
fn errors_not_panics() {
    let mut s = setup(5);
    let domain = s.pegasus.options().input_bound;
    let cmp = s.comparator(None);
    let x: Vec<f64> = (0..SLOTS).map(|i| i as f64 / 8.0 - 1.0).collect();
    let lwes = s.lwes(&x);
    fn invalid<T>(r: Result<T, Error>) -> bool {
        matches!(r, Err(Error::InvalidArgument { .. }))
    }

    // Sizes: sort of 6, of 1, of nothing; groups that do not divide; t = 1; max-pool of 3.
    assert!(invalid(cmp.sort(&lwes[..6], Order::Ascending, Form::Lwe)));
    assert!(invalid(cmp.sort(&lwes[..1], Order::Ascending, Form::Lwe)));
    assert!(invalid(cmp.sort(&[], Order::Ascending, Form::Lwe)));
    assert!(invalid(cmp.min_of(&lwes[..6], 4, Form::Lwe)));
    assert!(invalid(cmp.argmin(&lwes, 1, Form::Lwe)));
    assert!(invalid(cmp.argmax(&[], 2, Form::Lwe)));
    let pool = s.comparator(Some(domain / 4.0));
    assert!(invalid(pool.max_pool(&lwes[..12], 3, Form::Lwe)));

    // Declared bounds beyond the tables' domain.
    let r = Comparator::new(&*s.pegasus, s.key.clone(), Some(domain));
    assert!(matches!(r, Err(Error::OutOfDomain { .. })), "{r:?}");
    let r = Comparator::new(&*s.pegasus, s.key.clone(), Some(f64::NAN));
    assert!(matches!(r, Err(Error::InvalidArgument { .. })), "{r:?}");
    let r = cmp.max_pool(&lwes, 4, Form::Lwe);
    assert!(matches!(r, Err(Error::OutOfDomain { .. })), "{r:?}");
    assert!(r.unwrap_err().to_string().contains("input_bound"));

    // Mismatched key and ciphertexts: a key of the wrong dimensions, table outputs (dimension n) as
    // inputs, outputs of Form::Lwe to repack, a CKKS ciphertext of another slot count.
    let wrong = LweSwitchingKey::generate_allowing_insecure(
        &s.secrets.lwe,
        &s.secrets.lwe,
        s.pegasus.params().lwe.key_switch,
        &mut s.rng,
    )
    .unwrap();
    let r = Comparator::new(&*s.pegasus, ComparisonKey::from_switching_key(wrong), None);
    assert!(matches!(r, Err(Error::InvalidArgument { .. })), "{r:?}");
    let outs = cmp.min_of(&lwes[..2], 2, Form::Repack).unwrap();
    let bad = [outs.ciphertexts[0].clone(), lwes[0].clone()];
    assert!(invalid(cmp.min_of(&bad, 2, Form::Lwe)));
    assert!(invalid(cmp.max(&bad[0], &bad[1])));
    let outs = cmp.min_of(&lwes[..2], 2, Form::Lwe).unwrap();
    assert!(invalid(cmp.repack(&outs)));
    let ctx = s.pegasus.context().clone();
    let pt = ctx
        .encode_real(&x[..8], 8, s.pegasus.input_level())
        .unwrap();
    let ct = s.enc.encrypt_plaintext(&pt, &mut s.rng).unwrap();
    let r = cmp.sort_ckks(&ct, Order::Ascending);
    assert!(matches!(r, Err(Error::Pegasus(_))), "{r:?}");
}

/// One table per value (sigmoid, and a ReLU fed to a min), in both forms.
#[test]
fn one_table_functions() {
    let mut s = setup(6);
    let cmp = s.comparator(None);
    let mut plain = StdRng::seed_from_u64(10);
    let x = uniform(&mut plain, cmp.bound());
    let lwes = s.lwes(&x);
    let sigmoid = |v: f64| 1.0 / (1.0 + (-v).exp());
    let table = s.pegasus.table(sigmoid).unwrap();
    let bound = s.pegasus.lut_error_bound(&table, 0.25).unwrap();
    let got = cmp.lut(&lwes, sigmoid, Form::Repack).unwrap();
    let want: Vec<f64> = x.iter().map(|&v| sigmoid(v)).collect();
    assert_close(
        "sigmoid",
        &cmp.decrypt(&s.secrets, &got).unwrap(),
        &want,
        bound,
    );
    let relu = cmp.lut(&lwes, |v| v.max(0.0), Form::Lwe).unwrap();
    let want: Vec<f64> = x.iter().map(|&v| v.max(0.0)).collect();
    // The pair bound, 6 (I + 2 r) + switch for the index error I and rotation error r of two
    // 1/2-Lipschitz tables on the same grid, covers one 1-Lipschitz table and its switch, 6 (I + r) + switch.
    let first = cmp.pair_error_bound().unwrap();
    assert_close(
        "relu",
        &cmp.decrypt(&s.secrets, &relu).unwrap(),
        &want,
        first,
    );
    let min = cmp.min_of(&relu.ciphertexts, 2, Form::Lwe).unwrap();
    let want: Vec<f64> = want.chunks(2).map(|c| c[0].min(c[1])).collect();
    assert_close(
        "min of relu",
        &cmp.decrypt(&s.secrets, &min).unwrap(),
        &want,
        2.0 * first,
    );
    assert!(matches!(
        cmp.lut(&[], sigmoid, Form::Lwe),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(cmp.lut(&lwes, |v| 1e30 * v, Form::Lwe).is_err());
}

/// Groups whose size is not a power of two: trees carry the odd value of a level to the next.
#[test]
fn odd_group_sizes() {
    let mut s = setup(7);
    let cmp = s.comparator(None);
    let mut plain = StdRng::seed_from_u64(11);
    let x = uniform(&mut plain, cmp.bound());
    let lwes = s.lwes(&x);
    for (t, form) in [(3, Form::Repack), (5, Form::Lwe)] {
        let n = SLOTS / t * t;
        let got = cmp.min_of(&lwes[..n], t, form).unwrap();
        let want = extremes(&x[..n], t, f64::min);
        let bound = cmp.tree_error_bound(t).unwrap();
        assert_close(
            &format!("min of {t}"),
            &cmp.decrypt(&s.secrets, &got).unwrap(),
            &want,
            bound,
        );
    }
    let (y, _) = gapped(
        &mut plain,
        16,
        cmp.bound(),
        1.05 * cmp.argmin_resolution(3).unwrap(),
    );
    // The first 15 values in groups of 3: every group's minimum is marked, and every value more than
    // the resolution above it is not (values closer may be either).
    let lwes = s.lwes(&y);
    let got = cmp
        .decrypt(&s.secrets, &cmp.argmin(&lwes[..15], 3, Form::Lwe).unwrap())
        .unwrap();
    let resolution = cmp.argmin_resolution(3).unwrap();
    for (g, group) in y[..15].chunks(3).enumerate() {
        let min = group.iter().cloned().fold(f64::INFINITY, f64::min);
        for (i, &v) in group.iter().enumerate() {
            let b = got[3 * g + i];
            if v == min {
                assert!(b > 0.75, "group {g}: the minimum {v} got {b}");
            } else if v - min > resolution {
                assert!(b < 0.25, "group {g}: {v} above the minimum {min} got {b}");
            }
        }
    }
}
