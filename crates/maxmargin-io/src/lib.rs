#![doc = include_str!("../README.md")]
//!
//! ## What is where
//!
//! Bytes in, bytes out: data formats and versioned model files.
//!
//! - [`libsvm`]: the LIBSVM / SVMlight format (`label [qid:N] idx:val ...`), streamed into a CSR
//!   [`SparseRows`](maxmargin_core::vector::SparseRows), `.gz` read transparently, and written back.
//! - [`model_file`]: a versioned header (magic, format version, model kind, crate version) over any
//!   `Serialize` payload, as bincode 2 or as JSON for paths ending in `.json`. Only this module knows bincode.
//! - [`multilabel`], [`svm_hmm`], [`conll`]: the LIBSVM multilabel format, Joachims' svm_hmm sequences,
//!   and CoNLL column files with chunker feature templates.
//! - [`graphs`]: graphs as JSON lines (node features, edges, optional edge features and node labels).
//! - [`stream`]: a text file parsed once into shuffled binary rows on disk, read pass by pass in bounded
//!   memory (`train --stream`).
//! - [`shard`]: one rank's share of a LIBSVM text file (byte ranges cut at line starts), for training over MPI.
//! - [`atomic`]: every file this crate writes goes to a temporary file in the same directory, is synced,
//!   then renamed, so a crash never leaves half a file.
//!
//! This crate knows formats and bytes, not what a model means; it depends on `maxmargin-core` only.
//! Every error names the file, and parse errors the line, column and field.

pub mod atomic;
pub mod cache;
pub mod conll;
pub mod csv_file;
mod dataset;
mod error;
pub mod graphs;
pub mod labels;
pub mod liblinear;
pub mod libsvm;
mod lines;
pub use lines::{Lines, MAX_LINE_BYTES};
pub mod model_file;
pub mod multilabel;
mod number;
mod open;
pub mod shard;
pub mod stream;
pub mod svm_hmm;

pub use error::IoError;
pub use open::open_maybe_gz;
