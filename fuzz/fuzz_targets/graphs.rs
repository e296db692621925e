#![no_main]
//! Arbitrary bytes as a graph file, JSON lines (see `maxmargin::testing::fuzz::graphs`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| maxmargin::testing::fuzz::graphs(data));
