//! One encrypted k-means update (PEGASUS Section V.C) on the InsecureTest pipeline (N = 2^11, tables in
//! degree 2^10): well-separated clusters give the plaintext assignment and centroids within the stated
//! error; rho on a small random case; the errors of wrong sizes and out-of-range data.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rnsfhe_apps::kmeans::plain;
use rnsfhe_apps::{ComparisonKey, Error, KMeansEvaluator, KMeansKeys, KMeansLayout, KMeansOptions};
use rnsfhe_ckks::{CkksDecryptor, CkksEncryptor, Csprng, KeyGenerator};
use rnsfhe_pegasus::{
    PegasusEvaluator, PegasusKeys, PegasusSecretKeys, PipelineOptions, PipelinePreset,
};

struct Setup {
    server: KMeansEvaluator<Arc<PegasusEvaluator>>,
    secrets: PegasusSecretKeys,
    enc: CkksEncryptor,
    dec: CkksDecryptor,
    rng: Csprng,
}

fn setup(points: usize, clusters: usize, features: usize, options: KMeansOptions) -> Setup {
    let layout = KMeansLayout::new(points, clusters, features).unwrap();
    let params = PipelinePreset::InsecureTest.params().unwrap();
    let ctx = params.ckks.clone();
    let mut rng = Csprng::insecure_from_seed_for_tests([7; 32]);
    let keygen = KeyGenerator::new(&ctx, &mut rng).unwrap();
    let pipeline = PipelineOptions {
        allow_insecure: true,
        ..PipelineOptions::new(layout.slots())
    };
    let (keys, secrets) = PegasusKeys::generate(&params, &pipeline, &keygen, &mut rng).unwrap();
    let pegasus = Arc::new(PegasusEvaluator::new(params, pipeline, keys).unwrap());
    let key = ComparisonKey::generate(&pegasus, &secrets, &mut rng).unwrap();
    let kkeys = KMeansKeys::generate(&layout, &keygen, &mut rng).unwrap();
    let server = KMeansEvaluator::new(pegasus, key, kkeys, layout, options).unwrap();
    Setup {
        server,
        secrets,
        enc: CkksEncryptor::with_secret_key(&ctx, keygen.secret_key()).unwrap(),
        dec: CkksDecryptor::new(&ctx, keygen.secret_key()).unwrap(),
        rng,
    }
}

/// Well-separated clusters: the encrypted update assigns every point as plaintext does and its
/// centroids are within the update's error bound of the plaintext ones.
#[test]
fn separated_clusters_update_like_plaintext() {
    let mut plain_rng = StdRng::seed_from_u64(3);
    let centers = [[0.6, 0.5], [-0.6, -0.4], [0.5, -0.6]];
    let x: Vec<Vec<f64>> = (0..12)
        .map(|i| {
            let c = centers[i % 3];
            vec![
                c[0] + plain_rng.gen_range(-0.1..0.1),
                c[1] + plain_rng.gen_range(-0.1..0.1),
            ]
        })
        .collect();
    let init = vec![vec![0.4, 0.4], vec![-0.4, -0.4], vec![0.4, -0.4]];
    let mut s = setup(12, 3, 2, KMeansOptions::new(1.0));
    let layout = *s.server.layout();
    let ctx = s.server.comparator().pegasus().context().clone();
    let f = s.server.feature_factor();
    let top = ctx.max_level();
    let px = layout
        .encrypt_points(&ctx, &s.enc, &x, f, 1.0, top, &mut s.rng)
        .unwrap();
    let pc = layout
        .encrypt_centroids(&ctx, &s.enc, &init, f, 1.0, top, &mut s.rng)
        .unwrap();

    let d = s.server.distances(&px, &pc).unwrap();
    let lwes = s.server.extract(&d).unwrap();
    let assignment = s.server.min_index(&lwes).unwrap();
    let bits = s.server.decrypt_bits(&s.secrets, &assignment).unwrap();
    let closest = plain::closest(&x, &init).unwrap();
    assert_eq!(closest, (0..12).map(|i| i % 3).collect::<Vec<_>>());
    assert_eq!(plain::closest_assignment_ratio(&bits, &closest).unwrap(), 1.0);
    let repacked = s.server.repack(&assignment).unwrap();
    let b = layout
        .unpack_bits(&s.dec.decrypt_real(&repacked.bits).unwrap())
        .unwrap();
    assert_eq!(plain::closest_assignment_ratio(&b, &closest).unwrap(), 1.0);
    let new = s.server.centroids(&px, &repacked).unwrap();
    let got = layout.decrypt_centroids(&s.dec, &new, f).unwrap();
    let want = plain::update(&x, &plain::one_hot(&closest, 3)).unwrap();
    let bound = s.server.update_error_bound(&[4, 4, 4]).unwrap();
    for j in 0..3 {
        for k in 0..2 {
            let e = (got[j][k] - want[j][k]).abs();
            eprintln!("centroid {j} feature {k}: {} vs {} (error {e:.2e}, bound {:.2e})", got[j][k], want[j][k], bound[j]);
            assert!(e <= bound[j], "centroid {j}, feature {k}: error {e} above {}", bound[j]);
        }
    }
    eprintln!("level after the update: {}", new.level());
}
