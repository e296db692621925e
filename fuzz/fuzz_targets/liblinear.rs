#![no_main]
//! Arbitrary bytes as the file `maxmargin::testing::fuzz::liblinear` reads (issue 23: every file a command reads).

use std::sync::OnceLock;

static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // ok: the harness cannot run without a scratch folder.
    let dir = DIR.get_or_init(|| tempfile::tempdir().expect("a scratch folder"));
    maxmargin::testing::fuzz::liblinear(data, dir.path());
});
