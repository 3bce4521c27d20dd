//! Fuzz target `pegasus`: the deserializers listed for it in `rnsfhe::wire_samples::FUZZ_TARGETS`.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use rnsfhe::wire_samples::{fuzz_input, SampleContexts};

static CONTEXTS: OnceLock<SampleContexts> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let ctxs = CONTEXTS.get_or_init(|| SampleContexts::new().expect("sample contexts"));
    fuzz_input("pegasus", data, ctxs);
});
