#![no_main]
//! Arbitrary bytes as a libsvm file (see `maxmargin::testing::fuzz::libsvm`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| maxmargin::testing::fuzz::libsvm(data));
