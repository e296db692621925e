//! Versioned model files: a header, then any `Serialize` payload, as bincode 2 or JSON.
//!
//! Binary layout (little endian): the 8 magic bytes `MXMARGIN`, the format version (`u32`), the model kind
//! and the writing crate's version (each a `u16` length and UTF-8 bytes), the payload length (`u64`), the
//! payload (bincode 2, standard configuration), and the CRC-32 of the payload (`u32`). Every length is
//! checked against the file's size before anything is allocated, and the checksum before decoding, so a
//! truncated or foreign file is a clear error. A path ending in `.json` holds one JSON object instead: the
//! header keys `format`, `format_version`, `kind`, `crate_version`, then the payload's own fields.
//!
//! Files are written atomically (see [`crate::atomic`]). This is the only module that knows bincode, so the
//! encoding can be swapped here alone; it does not know what a payload means.

use crate::IoError;
use crate::atomic::write_atomic;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::io::Read;
use std::path::Path;

/// The first bytes of every binary model file.
pub const MAGIC: [u8; 8] = *b"MXMARGIN";
/// Bytes read to tell a model file from anything else before the rest is read.
const SNIFF_BYTES: u64 = 4096;
/// The newest format version this build writes and reads. Version 2 (maxmargin 0.1 after the convergence
/// work) changed the facade's model payloads; readers of older payloads upgrade them (see `maxmargin`'s
/// `compat` module). Version 4 added kernel SVMs to binary models (the parameters' kernel, the model's support
/// vectors) and the logistic duals' complements to checkpoints; readers of versions 2 and 3 decode those
/// payloads with frozen layouts (`maxmargin`'s `compat`, which decodes every older version). Version 5 added approximated kernels (the
/// parameters' approximation, random Fourier features) and multiclass kernel SVMs (the structured
/// parameters' kernel, the models' machines). Version 6 added the positive label asked for to the binary
/// parameters, what a model knows of its inputs (feature names, a sketch of the training rows) and a digest
/// of the examples to checkpoints. Version 7 added how the loss enters the structural hinge (margin or
/// slack rescaling) to the structured parameters.
pub const FORMAT_VERSION: u32 = 7;
/// The value of the `format` key of a JSON model file.
pub const JSON_FORMAT: &str = "maxmargin-model";
const HEADER_KEYS: [&str; 5] = [
    "format",
    "format_version",
    "kind",
    "crate_version",
    "checksum",
];

/// CRC-32 of a format-2 JSON payload's canonical text: the payload object alone (header keys removed), keys
/// sorted, compact. Numbers print back as they were read (`float_roundtrip`), so a file's checksum survives
/// re-indenting but not a changed value. (Format 3 hashes the typed payload instead: [`typed_checksum`].)
fn json_checksum(payload: &serde_json::Map<String, serde_json::Value>) -> Result<u32, String> {
    let canonical = serde_json::to_vec(payload).map_err(|e| e.to_string())?;
    Ok(crc32fast::hash(&canonical))
}
/// A JSON model file as written: the header keys, then the payload's own fields.
#[derive(Serialize)]
struct JsonFile<'a, T> {
    format: &'a str,
    format_version: u32,
    kind: &'a str,
    crate_version: &'a str,
    checksum: u32,
    #[serde(flatten)]
    payload: &'a T,
}

/// A writer that only feeds a CRC-32 (and keeps the first byte, to tell an object from other values).
struct Crc(crc32fast::Hasher, Option<u8>);

impl std::io::Write for Crc {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.1.is_none() {
            self.1 = buf.first().copied();
        }
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// CRC-32 of a payload's compact JSON in its own field order (format 3 on): what [`save`] hashes while
/// streaming, and what [`load`] recomputes from the decoded payload (numbers print back as they were read,
/// `float_roundtrip`), so a changed value, a renamed key or a dropped field does not match.
fn typed_checksum<T: Serialize>(payload: &T) -> Result<u32, String> {
    let mut crc = Crc(crc32fast::Hasher::new(), None);
    serde_json::to_writer(&mut crc, payload).map_err(|e| e.to_string())?;
    Ok(crc.0.finalize())
}

/// Largest payload decoded (bytes); a guard on top of the size checks.
const PAYLOAD_LIMIT: usize = 1 << 34;

/// What every model file says about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The format version it was written with.
    pub format_version: u32,
    /// The model kind, such as `binary`.
    pub kind: String,
    /// The version of the crate that wrote it.
    pub crate_version: String,
}

fn is_json(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
}

fn bincode_config() -> impl bincode::config::Config {
    bincode::config::standard().with_limit::<PAYLOAD_LIMIT>()
}

/// Saves `payload` as a model of `kind`, as JSON when `path` ends in `.json` and bincode otherwise.
///
/// # Errors
/// [`IoError::Encode`] when the payload cannot be encoded (or is not a JSON object), [`IoError::Io`] when
/// the file cannot be written; the target is then untouched.
///
/// # Examples
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use maxmargin_io::model_file::{load, save};
/// #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
/// struct M { w: Vec<f64> }
/// let dir = tempfile::tempdir()?;
/// for name in ["m.bin", "m.json"] {
///     let p = dir.path().join(name);
///     save(&p, "toy", &M { w: vec![0.1, -2.0] })?;
///     let (header, m): (_, M) = load(&p, "toy")?;
///     assert_eq!((header.kind.as_str(), m.w), ("toy", vec![0.1, -2.0]));
/// }
/// # Ok(()) }
/// ```
pub fn save<T: Serialize>(path: &Path, kind: &str, payload: &T) -> Result<(), IoError> {
    let encode_err = |message: String| IoError::Encode {
        path: path.to_path_buf(),
        message,
    };
    if is_json(path) {
        // Two streaming passes, so no copy of the payload is ever held (a 98 MB model used to double the
        // peak memory of the run that wrote it): the checksum, then the file.
        let mut crc = Crc(crc32fast::Hasher::new(), None);
        serde_json::to_writer(&mut crc, payload).map_err(|e| encode_err(e.to_string()))?;
        if crc.1 != Some(b'{') {
            return Err(encode_err("a JSON model payload must be an object".into()));
        }
        let file = JsonFile {
            format: JSON_FORMAT,
            format_version: FORMAT_VERSION,
            kind,
            crate_version: env!("CARGO_PKG_VERSION"),
            checksum: crc.0.finalize(),
            payload,
        };
        return write_atomic(path, |w| {
            serde_json::to_writer_pretty(&mut *w, &file).map_err(std::io::Error::other)?;
            w.write_all(b"\n")
        });
    }
    // As JSON: two streaming passes (the payload's length and checksum, then the file), so no copy of
    // the payload is held; a 112 MB checkpoint doubled the peak memory of the run that wrote it.
    let (len, crc) = measure_binary(payload).map_err(encode_err)?;
    let header = binary_header(kind, len).map_err(encode_err)?;
    write_atomic(path, |w| {
        w.write_all(&header)?;
        let mut counted = Crc(crc32fast::Hasher::new(), None);
        let mut both = Tee(&mut *w, &mut counted);
        // A write that fails (a full disk) is that I/O error, not the encoder's dump of it.
        bincode::serde::encode_into_std_write(payload, &mut both, bincode_config()).map_err(
            |e| match e {
                bincode::error::EncodeError::Io { inner, .. } => inner,
                e => std::io::Error::other(e.to_string()),
            },
        )?;
        // The same encoding twice gives the same bytes; a difference would be a checksum that lies.
        if counted.0.finalize() != crc {
            return Err(std::io::Error::other(
                "the payload encoded differently the second time",
            ));
        }
        w.write_all(&crc.to_le_bytes())
    })
}

/// The length and CRC-32 of `payload`'s bincode encoding, encoded into neither memory nor disk.
fn measure_binary<T: Serialize>(payload: &T) -> Result<(u64, u32), String> {
    let mut crc = Crc(crc32fast::Hasher::new(), None);
    let len = bincode::serde::encode_into_std_write(payload, &mut crc, bincode_config())
        .map_err(|e| e.to_string())?;
    Ok((len as u64, crc.0.finalize()))
}

/// A binary model file's bytes before its payload: magic, format version, kind, crate version, length.
fn binary_header(kind: &str, payload_len: u64) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    for s in [kind, env!("CARGO_PKG_VERSION")] {
        let len = u16::try_from(s.len()).map_err(|_| format!("header string too long: {s:?}"))?;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    }
    out.extend_from_slice(&payload_len.to_le_bytes());
    Ok(out)
}

/// Writes to both: the file and the checksum of what went into it.
struct Tee<'a>(&'a mut dyn std::io::Write, &'a mut Crc);

impl std::io::Write for Tee<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.0.write(buf)?;
        self.1.write_all(&buf[..n])?;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// The size in bytes of the binary model file [`save`] would write for `payload` (what serving it reads
/// from disk), without writing it.
///
/// # Errors
/// [`IoError::Encode`] when the payload cannot be encoded (`name` stands for the file in the message).
pub fn binary_size<T: Serialize>(name: &Path, kind: &str, payload: &T) -> Result<u64, IoError> {
    let encoded = measure_binary(payload).and_then(|(len, _)| {
        // Header, payload, then the 4-byte checksum.
        binary_header(kind, len).map(|h| h.len() as u64 + len + 4)
    });
    encoded.map_err(|message| IoError::Encode {
        path: name.to_path_buf(),
        message,
    })
}

/// A cursor over the file's bytes that reports truncation instead of panicking.
struct Cursor<'a> {
    path: &'a Path,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], IoError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(IoError::bad_model(
                self.path,
                format!(
                    "truncated: {what} needs {n} bytes at offset {}, the file has {}",
                    self.pos,
                    self.bytes.len()
                ),
            ));
        };
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], IoError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N, what)?);
        Ok(a)
    }

    fn string(&mut self, what: &str) -> Result<String, IoError> {
        let len = u16::from_le_bytes(self.array(what)?) as usize;
        let raw = self.take(len, what)?;
        String::from_utf8(raw.to_vec())
            .map_err(|_| IoError::bad_model(self.path, format!("{what} is not UTF-8")))
    }
}

fn check_header(path: &Path, header: &Header, expected_kind: &str) -> Result<(), IoError> {
    if header.format_version > FORMAT_VERSION || header.format_version == 0 {
        return Err(IoError::UnsupportedVersion {
            path: path.to_path_buf(),
            found: header.format_version,
            supported: FORMAT_VERSION,
        });
    }
    if header.kind != expected_kind {
        return Err(IoError::WrongKind {
            path: path.to_path_buf(),
            expected: expected_kind.into(),
            found: header.kind.clone(),
        });
    }
    Ok(())
}

/// Reads only the header of a model file (to dispatch on its kind).
///
/// # Errors
/// [`IoError::BadModel`] for a foreign, truncated or corrupt file, [`IoError::Io`] when it cannot be read.
pub fn read_header(path: &Path) -> Result<Header, IoError> {
    Ok(read_parts(path)?.0)
}

enum Body {
    Bincode(Vec<u8>, usize),
    /// The payload's fields, and the checksum still to verify on the decoded payload (format 3 on).
    Json(serde_json::Map<String, serde_json::Value>, Option<u32>),
}

/// The bytes of a model file. A file that gives its bytes once (standard input as `-`, a pipe such as a
/// shell's `<(cat m.model)`) is read once and its bytes kept for the process, so a command that reads the
/// header to dispatch and then loads the model sees the same bytes twice.
fn model_bytes(path: &Path) -> Result<Vec<u8>, IoError> {
    type Kept = Vec<(std::path::PathBuf, Vec<u8>)>;
    static READ_ONCE: std::sync::Mutex<Kept> = std::sync::Mutex::new(Vec::new());
    let once = crate::open::is_stdin(path) || !crate::open::is_regular_file(path);
    if once {
        let kept = READ_ONCE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, bytes)) = kept.iter().find(|(p, _)| p == path) {
            return Ok(bytes.clone());
        }
    }
    let mut source: Box<dyn Read> = if crate::open::is_stdin(path) {
        Box::new(std::io::stdin())
    } else {
        Box::new(std::fs::File::open(path).map_err(|e| IoError::io(path, e))?)
    };
    // The first bytes say whether this can be a model at all, before the rest is read (`/dev/zero` or a
    // data file given as a model is refused at once, not read until memory runs out).
    let mut bytes = Vec::new();
    (&mut source)
        .take(SNIFF_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| IoError::io(path, e))?;
    let json = bytes
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_none_or(|&b| b == b'{');
    if !(bytes.starts_with(&MAGIC) || MAGIC.starts_with(&bytes) || json) {
        return Err(not_a_model(path, &bytes));
    }
    source
        .read_to_end(&mut bytes)
        .map_err(|e| IoError::io(path, e))?;
    if once {
        let mut kept = READ_ONCE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        kept.push((path.to_path_buf(), bytes.clone()));
    }
    Ok(bytes)
}

fn read_parts(path: &Path) -> Result<(Header, Body), IoError> {
    let mut bytes = model_bytes(path)?;
    if bytes.starts_with(&MAGIC) {
        let mut c = Cursor {
            path,
            bytes: &bytes,
            pos: MAGIC.len(),
        };
        let format_version = u32::from_le_bytes(c.array("format version")?);
        if format_version > FORMAT_VERSION {
            return Err(IoError::UnsupportedVersion {
                path: path.to_path_buf(),
                found: format_version,
                supported: FORMAT_VERSION,
            });
        }
        let kind = c.string("model kind")?;
        let crate_version = c.string("crate version")?;
        let len = u64::from_le_bytes(c.array("payload length")?);
        let remaining = (bytes.len() - c.pos) as u64;
        if len.checked_add(4) != Some(remaining) {
            return Err(IoError::bad_model(
                path,
                format!(
                    "truncated or corrupt: header announces a {len}-byte payload, {remaining} bytes follow"
                ),
            ));
        }
        let start = c.pos;
        let payload = c.take(len as usize, "payload")?;
        let crc = u32::from_le_bytes(c.array("checksum")?);
        if crc32fast::hash(payload) != crc {
            return Err(IoError::bad_model(
                path,
                "corrupt: payload checksum does not match",
            ));
        }
        let header = Header {
            format_version,
            kind,
            crate_version,
        };
        let end = start + len as usize;
        bytes.truncate(end);
        return Ok((header, Body::Bincode(bytes, start)));
    }
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'{') {
        return Err(not_a_model(path, &bytes));
    }
    let value: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| IoError::bad_model(path, format!("invalid JSON model: {e}")))?;
    let serde_json::Value::Object(mut obj) = value else {
        return Err(IoError::bad_model(path, "a JSON model must be an object"));
    };
    if obj.get("format").and_then(|v| v.as_str()) != Some(JSON_FORMAT) {
        return Err(IoError::bad_model(
            path,
            format!("not a maxmargin model: \"format\" is not {JSON_FORMAT:?}"),
        ));
    }
    let field = |obj: &serde_json::Map<String, serde_json::Value>, k: &str| {
        obj.get(k)
            .cloned()
            .ok_or_else(|| IoError::bad_model(path, format!("missing header key {k:?}")))
    };
    let format_version = field(&obj, "format_version")?
        .as_u64()
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| IoError::bad_model(path, "\"format_version\" is not a version number"))?;
    let text = |v: serde_json::Value, k: &str| {
        v.as_str()
            .map(str::to_owned)
            .ok_or_else(|| IoError::bad_model(path, format!("{k:?} is not a string")))
    };
    let kind = text(field(&obj, "kind")?, "kind")?;
    let crate_version = text(field(&obj, "crate_version")?, "crate_version")?;
    // Format 2 on: the payload's CRC-32 (format 1 had none).
    let checksum = if format_version >= 2 {
        Some(
            field(&obj, "checksum")?
                .as_u64()
                .and_then(|v| u32::try_from(v).ok())
                .ok_or_else(|| IoError::bad_model(path, "\"checksum\" is not a CRC-32"))?,
        )
    } else {
        None
    };
    for k in HEADER_KEYS {
        obj.remove(k);
    }
    let mut typed = None;
    if let Some(expected) = checksum {
        if format_version >= 3 {
            typed = Some(expected);
        } else if json_checksum(&obj).map_err(|e| IoError::bad_model(path, e))? != expected {
            return Err(corrupt(path));
        }
    }
    Ok((
        Header {
            format_version,
            kind,
            crate_version,
        },
        Body::Json(obj, typed),
    ))
}

fn corrupt(path: &Path) -> IoError {
    IoError::bad_model(path, "corrupt or edited: payload checksum does not match")
}

/// Loads a model of `expected_kind` written by [`save`], in either encoding (recognised by content).
///
/// # Errors
/// [`IoError::BadModel`] for a foreign, truncated or corrupt file or a payload that does not decode,
/// [`IoError::WrongKind`], [`IoError::UnsupportedVersion`], or [`IoError::Io`].
pub fn load<T: Serialize + DeserializeOwned>(
    path: &Path,
    expected_kind: &str,
) -> Result<(Header, T), IoError> {
    let (header, body) = read_parts(path)?;
    check_header(path, &header, expected_kind)?;
    let payload = match body {
        Body::Bincode(bytes, start) => {
            let (value, used) =
                bincode::serde::decode_from_slice(&bytes[start..], bincode_config()).map_err(
                    |e| IoError::bad_model(path, format!("payload does not decode: {e}")),
                )?;
            if used != bytes.len() - start {
                return Err(IoError::bad_model(path, "payload has trailing bytes"));
            }
            value
        }
        Body::Json(obj, typed) => {
            // The path to what does not decode (`training.objective`, `w[3]`) names the field.
            let value: T = serde_path_to_error::deserialize(serde_json::Value::Object(obj))
                .map_err(|e| match e.path().to_string().as_str() {
                    "." => {
                        IoError::bad_model(path, format!("payload does not decode: {}", e.inner()))
                    }
                    at => IoError::bad_model(
                        path,
                        format!("payload does not decode: {at}: {}", e.inner()),
                    ),
                })?;
            if let Some(expected) = typed
                && typed_checksum(&value).map_err(|e| IoError::bad_model(path, e))? != expected
            {
                return Err(corrupt(path));
            }
            value
        }
    };
    Ok((header, payload))
}

/// The refusal of a file that is no maxmargin model, naming the other tools' models by their first word.
fn not_a_model(path: &Path, bytes: &[u8]) -> IoError {
    let why = if bytes.starts_with(b"solver_type") {
        "not a maxmargin model file (no magic bytes, not JSON): it opens as a LIBLINEAR model, which \
         `maxmargin convert` reads and writes as one"
    } else if bytes.starts_with(b"svm_type") {
        "not a maxmargin model file (no magic bytes, not JSON): it opens as a LIBSVM model, which maxmargin \
         does not read (`maxmargin train --kernel` trains kernel SVMs)"
    } else {
        "not a maxmargin model file (no magic bytes, not JSON)"
    };
    IoError::bad_model(path, why)
}
