#![no_main]
//! Arbitrary bytes as a conll file (see `maxmargin::testing::fuzz::conll`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| maxmargin::testing::fuzz::conll(data));
