//! Integration tests of `maxmargin-core`: worked tables, properties and bad input.

mod affine;
mod bad_input;
mod hinge;
mod objective;
mod scale;
mod structured;
