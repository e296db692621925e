#![no_main]
//! Arbitrary bytes as a model file, seeded with json models (see `maxmargin::testing::fuzz::model`).

use std::sync::OnceLock;

static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // ok: the harness cannot run without a scratch folder.
    let dir = DIR.get_or_init(|| tempfile::tempdir().expect("a scratch folder"));
    maxmargin::testing::fuzz::model(data, dir.path());
});
