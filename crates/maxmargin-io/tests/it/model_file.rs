//! Model files: round trips, atomicity, and clear errors for truncated, foreign and mismatched files.

use maxmargin_io::IoError;
use maxmargin_io::model_file::{FORMAT_VERSION, MAGIC, load, read_header, save};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Toy {
    w: Vec<f64>,
    b: f64,
    seed: u64,
}

fn toy() -> Toy {
    Toy {
        w: vec![0.1, -1.0 / 3.0, 1e-300, f64::MAX],
        b: -0.0,
        seed: 42,
    }
}

#[test]
fn round_trip_is_bit_exact_in_both_encodings() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["m.model", "m.json", "m.JSON"] {
        let p = dir.path().join(name);
        save(&p, "toy", &toy()).unwrap();
        let (h, back): (_, Toy) = load(&p, "toy").unwrap();
        assert_eq!(h.format_version, FORMAT_VERSION);
        assert_eq!(h.crate_version, env!("CARGO_PKG_VERSION"));
        let bits = |t: &Toy| t.w.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&back), bits(&toy()), "{name}");
        assert_eq!(back.b.to_bits(), toy().b.to_bits(), "{name}");
        assert_eq!(read_header(&p).unwrap().kind, "toy");
    }
    // The JSON file is an object with the header keys and the payload fields.
    let text = std::fs::read_to_string(dir.path().join("m.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["kind"], "toy");
    assert_eq!(v["format"], "maxmargin-model");
    assert_eq!(v["seed"], 42);
    // No temporary files are left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
}

#[test]
fn truncated_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.model");
    save(&p, "toy", &toy()).unwrap();
    let full = std::fs::read(&p).unwrap();
    for cut in [0, 4, 8, 11, 14, 20, full.len() - 5, full.len() - 1] {
        let q = dir.path().join(format!("cut{cut}.model"));
        std::fs::write(&q, &full[..cut]).unwrap();
        let e = load::<Toy>(&q, "toy").unwrap_err();
        assert!(matches!(e, IoError::BadModel { .. }), "cut at {cut}: {e}");
        assert!(e.to_string().starts_with(&q.display().to_string()), "{e}");
    }
}

#[test]
fn corrupt_foreign_newer_and_wrong_kind() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.model");
    save(&p, "toy", &toy()).unwrap();
    let mut bytes = std::fs::read(&p).unwrap();
    let n = bytes.len();
    bytes[n - 10] ^= 0xff;
    let q = dir.path().join("corrupt.model");
    std::fs::write(&q, &bytes).unwrap();
    assert!(
        load::<Toy>(&q, "toy")
            .unwrap_err()
            .to_string()
            .contains("checksum")
    );

    let q = dir.path().join("foreign.model");
    std::fs::write(&q, b"solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 2\n").unwrap();
    assert!(
        load::<Toy>(&q, "toy")
            .unwrap_err()
            .to_string()
            .contains("not a maxmargin model file")
    );

    let mut newer = MAGIC.to_vec();
    newer.extend_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
    std::fs::write(&q, &newer).unwrap();
    assert!(matches!(
        load::<Toy>(&q, "toy"),
        Err(IoError::UnsupportedVersion { .. })
    ));

    assert!(matches!(
        load::<Toy>(&p, "binary"),
        Err(IoError::WrongKind { .. })
    ));

    let q = dir.path().join("other.json");
    std::fs::write(&q, r#"{"format": "maxmargin-model", "format_version": 1, "kind": "toy", "crate_version": "0.1.0", "w": "x"}"#).unwrap();
    assert!(
        load::<Toy>(&q, "toy")
            .unwrap_err()
            .to_string()
            .contains("payload does not decode: w: invalid type")
    );
    // The field that does not decode is named by its path, down to the element.
    std::fs::write(&q, r#"{"format": "maxmargin-model", "format_version": 1, "kind": "toy", "crate_version": "0.1.0", "w": [1, "x"], "b": 0, "seed": 1}"#).unwrap();
    let e = load::<Toy>(&q, "toy").unwrap_err().to_string();
    assert!(
        e.contains("payload does not decode: w[1]: invalid type: string"),
        "{e}"
    );
}

#[test]
fn failed_save_leaves_the_old_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.json");
    save(&p, "toy", &toy()).unwrap();
    let before = std::fs::read(&p).unwrap();
    // A payload that is not a JSON object cannot be saved as JSON; the old file stays whole.
    assert!(matches!(
        save(&p, "toy", &vec![1.0]),
        Err(IoError::Encode { .. })
    ));
    assert_eq!(std::fs::read(&p).unwrap(), before);
    // A directory that does not exist is an error naming the path.
    let e = save(&dir.path().join("no/such/dir/m.model"), "toy", &toy()).unwrap_err();
    assert!(e.to_string().contains("no/such/dir/m.model"), "{e}");
}

#[test]
fn stale_temporary_files_are_removed_and_json_is_checksummed() {
    let dir = tempfile::tempdir().unwrap();
    // What a killed run left an hour and a half ago, and a fresh one (perhaps another run's, in progress).
    let stale = dir.path().join(".maxmargin-abc123.tmp");
    let fresh = dir.path().join(".maxmargin-def456.tmp");
    for p in [&stale, &fresh] {
        std::fs::write(p, b"partial").unwrap();
    }
    let f = std::fs::File::options().write(true).open(&stale).unwrap();
    f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(5400))
        .unwrap();
    drop(f);
    let p = dir.path().join("m.json");
    save(&p, "toy", &toy()).unwrap();
    assert!(!stale.exists() && fresh.exists());
    // A JSON model carries the CRC-32 of its payload; an edited value is caught.
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(text.contains("\"checksum\""));
    let edited = text.replacen("\"seed\": 42", "\"seed\": 43", 1);
    assert_ne!(edited, text);
    std::fs::write(&p, edited).unwrap();
    let e = load::<Toy>(&p, "toy").unwrap_err();
    assert!(e.to_string().contains("checksum does not match"), "{e}");
}
