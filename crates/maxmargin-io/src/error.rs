//! The one error type of `maxmargin-io`: every variant names the file it is about.

use std::path::PathBuf;

/// What can go wrong reading or writing a file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IoError {
    /// The operating system refused (missing file, permissions, full disk, ...).
    #[error("{path}: {cause}", path = .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause (in the message; not a separate error source, so a chain of causes prints it once).
        cause: std::io::Error,
    },
    /// A line of a data file does not parse.
    #[error("{path}:{line}:{column}: {field}: {message}", path = .path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// 1-based column of the offending token.
        column: usize,
        /// Which field: `label`, `qid`, `feature index`, `feature value` or `feature`.
        field: &'static str,
        /// What is wrong, with the bad text.
        message: String,
    },
    /// Input that cannot be split between ranks (gzip, a cache, standard input).
    #[error("{path}: {message}", path = .path.display())]
    Unsplittable {
        /// The file.
        path: PathBuf,
        /// Why, and what to give instead.
        message: String,
    },
    /// A data file with no examples.
    #[error("{path}: no examples", path = .path.display())]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// A binary problem needs exactly two classes.
    #[error(
        "{path}: a binary problem needs exactly two classes, found {}{found}: {labels}",
        if *.at_least { "at least " } else { "" },
        path = .path.display()
    )]
    NotBinary {
        /// The file.
        path: PathBuf,
        /// How many distinct labels there are (at least, when `at_least`).
        found: usize,
        /// The file has more distinct labels than were counted.
        at_least: bool,
        /// The distinct labels (up to a few).
        labels: String,
    },
    /// A model file that is not one, or was cut short, or is corrupt.
    #[error("{path}: {message}", path = .path.display())]
    BadModel {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A model file of another kind than the one asked for.
    #[error(
        "{path}: model kind is {found:?}, expected {expected:?}{}",
        checkpoint_note(found, expected),
        path = .path.display()
    )]
    WrongKind {
        /// The file.
        path: PathBuf,
        /// The kind asked for.
        expected: String,
        /// The kind in the file.
        found: String,
    },
    /// A model file of a format version this build does not read (0, or newer than it).
    #[error(
        "{path}: model format version {found} is not one this build reads (1 to {supported}){newer}",
        path = .path.display(),
        newer = if *.found > *.supported { ": written by a newer maxmargin" } else { "" }
    )]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// The version in the file.
        found: u32,
        /// The newest version this build reads.
        supported: u32,
    },
    /// Data that does not fit what it is used with: a model trained on other labels or another layout, a
    /// template naming columns the file lacks.
    #[error("{path}: {message}", path = .path.display())]
    Mismatch {
        /// The data file.
        path: PathBuf,
        /// What does not fit, and what was expected.
        message: String,
    },
    /// A payload that cannot be encoded.
    #[error("{path}: cannot encode model: {message}", path = .path.display())]
    Encode {
        /// The file.
        path: PathBuf,
        /// What the encoder said.
        message: String,
    },
}

impl IoError {
    pub(crate) fn io(path: impl Into<PathBuf>, cause: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            cause,
        }
    }

    pub(crate) fn bad_model(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Self::BadModel {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// What a [`IoError::WrongKind`] adds when the file is a training checkpoint, which only `train --resume`
/// reads (its kind names it: `checkpoint-binary-dcd`).
fn checkpoint_note(found: &str, expected: &str) -> &'static str {
    let (was, is) = (
        found.starts_with("checkpoint"),
        expected.starts_with("checkpoint"),
    );
    let streamed = |kind: &str| kind.ends_with("-stream");
    match (was, is) {
        (true, false) => {
            ": this file is a training checkpoint, not a model (train --resume FILE continues the run it \
             saved)"
        }
        // Given to --resume: a run of the other mode made it.
        (true, true) if streamed(found) && !streamed(expected) => {
            ": it was made by a --stream run; resume it with --stream"
        }
        (true, true) if !streamed(found) && streamed(expected) => {
            ": it was made by a run in memory; resume it without --stream"
        }
        // With no --solver a smooth loss on more rows than features trains by newton, else by dcd.
        (true, true)
            if found == "checkpoint-binary-dcd" && expected == "checkpoint-binary-newton" =>
        {
            ": it was made by dcd; resume it with --solver dcd"
        }
        (true, true)
            if found == "checkpoint-binary-newton" && expected == "checkpoint-binary-dcd" =>
        {
            ": it was made by newton; resume it with --solver newton"
        }
        _ => "",
    }
}
