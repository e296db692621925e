//! Integration tests of the facade: worked examples, fit/save/load/predict, determinism, bad input.

mod convergence;
mod fuzz;
mod graph;
mod graph_ranks;
mod guide;
mod kernel;
mod linear;
mod logistic;
mod ranks;
mod spaces;
mod stream;
mod structured;
mod structured_resume;
mod worked;
