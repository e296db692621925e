#![no_main]
//! Arbitrary bytes as a svm_hmm file (see `maxmargin::testing::fuzz::svm_hmm`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| maxmargin::testing::fuzz::svm_hmm(data));
