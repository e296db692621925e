//! Fixtures of the worked examples, for tests, doctests and the demo.

pub use maxmargin_core::testing::{Lcg, lesson_rows, rows, shared_data, two_points};

pub mod fuzz;
