//! Integration tests of `maxmargin-struct`: every shipped space against brute force, the common mistake,
//! and bad input.

mod bad_input;
mod brute_force;
mod graph;
mod latent;
mod mistake;
mod slack;
