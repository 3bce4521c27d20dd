//! `rnsfhe sizes`: the wire size of every object of every CKKS preset, with public `a` polynomials stored
//! as seeds (the default) and expanded, measured on real objects (keys generated, a vector encrypted).

use rnsfhe_ckks::{
    CkksContext, CkksEncryptor, Csprng, KeyGenerator, Preset, PublicRandomness, Serializable,
};

use crate::bench::markdown_table;

/// A byte count in KiB or MiB.
fn human(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1024.0 * 1024.0 {
        format!("{:.2} MiB", b / (1024.0 * 1024.0))
    } else {
        format!("{:.1} KiB", b / 1024.0)
    }
}

/// `seeded / expanded (ratio)` for one object.
fn pair(object: &impl Serializable) -> (String, f64) {
    let seeded = object.serialized_size();
    let expanded = object.to_bytes_with(PublicRandomness::Expanded).len() as u64;
    let ratio = seeded as f64 / expanded as f64;
    (
        format!("{} / {} ({ratio:.2})", human(seeded), human(expanded)),
        ratio,
    )
}

/// Generates keys and a ciphertext for every preset and prints their sizes as a markdown table.
///
/// Errors: context or key-generation errors.
pub fn run() -> anyhow::Result<()> {
    let mut rows = Vec::new();
    let mut rng = Csprng::from_os()?;
    for preset in Preset::ALL {
        let ctx = CkksContext::new(preset.params())?;
        let kg = KeyGenerator::new(&ctx, &mut rng)?;
        let pk = kg.public_key(&mut rng)?;
        let rk = kg.relin_key(&mut rng)?;
        let gk = kg.galois_keys(&[1], false, &mut rng)?;
        let enc = CkksEncryptor::with_secret_key(&ctx, kg.secret_key())?;
        let values = vec![0.5; ctx.max_slots()];
        let seeded_ct = enc.encrypt_seeded(&values, &mut rng)?;
        let ct = seeded_ct.expand()?;
        rows.push(vec![
            format!("{preset:?}"),
            format!("2^{}", ctx.params().log_n),
            format!("{:.0}", ctx.log_qp()),
            pair(&seeded_ct).0,
            human(ct.serialized_size()),
            pair(&pk).0,
            pair(&rk).0,
            pair(&gk).0,
            human(kg.secret_key().secret_serialized_size()),
        ]);
    }
    println!(
        "## Wire sizes (format v{}): seeded / expanded (ratio)\n",
        rnsfhe_math::wire::FORMAT_VERSION
    );
    print!(
        "{}",
        markdown_table(
            &[
                "preset",
                "N",
                "log QP",
                "fresh ciphertext (secret-key, seeded / expanded)",
                "ciphertext after an operation",
                "public key",
                "relinearization key",
                "Galois key (one rotation)",
                "secret key",
            ],
            &rows
        )
    );
    println!(
        "\nResidues are packed at their modulus' bit width. A ciphertext after any operation has no seed \
         (its second part is no longer uniform from a seed); public-key ciphertexts never have one."
    );
    Ok(())
}
