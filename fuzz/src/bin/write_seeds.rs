//! Writes the seed inputs of every fuzz target to `fuzz/corpus/<target>/seed_v<version>_<i>` (run from the
//! repository root: `cargo run --release --manifest-path fuzz/Cargo.toml --bin write_seeds`). The seeds
//! of earlier format versions (`seed_<i>`: version 1) stay, so that the fuzzer keeps exercising their
//! readers.

use rnsfhe::math::wire::FORMAT_VERSION;
use rnsfhe::wire_samples::{fuzz_seeds, SampleContexts, FUZZ_TARGETS};

fn main() -> anyhow::Result<()> {
    let ctxs = SampleContexts::new()?;
    for (target, _) in FUZZ_TARGETS {
        let dir = std::path::Path::new("fuzz/corpus").join(target);
        std::fs::create_dir_all(&dir)?;
        for (i, seed) in fuzz_seeds(target, &ctxs)?.iter().enumerate() {
            std::fs::write(dir.join(format!("seed_v{FORMAT_VERSION}_{i}")), seed)?;
        }
    }
    Ok(())
}
