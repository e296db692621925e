//! Integration tests of `maxmargin-io`: LIBSVM reading and writing, model files, the shared datasets.

mod libsvm;
mod model_file;
mod shard;
mod shared_data;
mod stream;
mod structured_formats;
