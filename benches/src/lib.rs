//! Shared helpers for the maxmargin benchmarks (data loading from `MAXMARGIN_DATA`).
