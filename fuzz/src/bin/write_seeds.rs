//! Writes the seed inputs of every fuzz target to `fuzz/corpus/<target>/seed_<i>` (run from the
//! repository root: `cargo run --release --manifest-path fuzz/Cargo.toml --bin write_seeds`).

use rnsfhe::wire_samples::{fuzz_seeds, SampleContexts, FUZZ_TARGETS};

fn main() -> anyhow::Result<()> {
    let ctxs = SampleContexts::new()?;
    for (target, _) in FUZZ_TARGETS {
        let dir = std::path::Path::new("fuzz/corpus").join(target);
        std::fs::create_dir_all(&dir)?;
        for (i, seed) in fuzz_seeds(target, &ctxs)?.iter().enumerate() {
            std::fs::write(dir.join(format!("seed_{i}")), seed)?;
        }
    }
    Ok(())
}
