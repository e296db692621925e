#![no_main]
//! Arbitrary bytes as a multilabel file (see `maxmargin::testing::fuzz::multilabel`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| maxmargin::testing::fuzz::multilabel(data));
