#![no_main]
//! Arbitrary bytes as a CoNLL `--template` file (see `maxmargin::testing::fuzz::template`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    maxmargin::testing::fuzz::template(data);
});
