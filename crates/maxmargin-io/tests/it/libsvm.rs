//! The LIBSVM reader and writer, on good and bad input.

use maxmargin_io::IoError;
use maxmargin_io::libsvm::{BinaryLabels, read, write};
use std::io::Write;

fn write_file(dir: &tempfile::TempDir, name: &str, text: &[u8]) -> std::path::PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Reads `text` and expects a parse error at `line:column` in `field`, with `needle` in the message.
fn check_parse_error(text: &str, line: usize, column: usize, field: &str, needle: &str) {
    let dir = tempfile::tempdir().unwrap();
    let p = write_file(&dir, "bad.svm", text.as_bytes());
    match read(&p) {
        Err(e @ IoError::Parse { .. }) => {
            let IoError::Parse {
                line: l,
                column: c,
                field: f,
                ref message,
                ..
            } = e
            else {
                unreachable!()
            };
            assert_eq!((l, c, f), (line, column, field), "{e}");
            assert!(message.contains(needle), "{e}");
            let shown = e.to_string();
            assert!(
                shown.starts_with(&format!("{}:{line}:{column}: {field}:", p.display())),
                "{shown}"
            );
        }
        other => panic!("expected a parse error for {text:?}, got {other:?}"),
    }
}

#[test]
fn parses_comments_blank_lines_crlf_qid() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_file(
        &dir,
        "ok.svm",
        b"# header comment\r\n+1 qid:3 1:0.5 7:-2e-1\r\n\r\n0 2:1 # tail\n-1\n",
    );
    let d = read(&p).unwrap();
    assert_eq!(d.labels, vec![1.0, 0.0, -1.0]);
    assert_eq!(d.qids, vec![Some(3), None, None]);
    assert_eq!(d.x.row(0).indices(), &[0, 6]);
    assert_eq!(d.x.row(0).values(), &[0.5, -0.2]);
    assert_eq!(d.x.row(2).nnz(), 0);
    assert_eq!(d.x.n_features(), 7);
}

#[test]
fn integer_labels_a_float_holds_exactly_are_read_past_2_pow_53() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_file(
        &dir,
        "big.svm",
        b"9007199254740994 1:1\n-9007199254740992 1:1\n+0010 1:1\n",
    );
    let d = read(&p).unwrap();
    assert_eq!(d.labels, [9007199254740994.0, -9007199254740992.0, 10.0]);
}

#[test]
fn reads_gzip_by_content() {
    let dir = tempfile::tempdir().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(b"2 1:1\n1 2:1\n").unwrap();
    let p = write_file(&dir, "no-extension", &gz.finish().unwrap());
    let d = read(&p).unwrap();
    assert_eq!(d.labels, vec![2.0, 1.0]);
}

#[test]
fn bad_lines_name_line_column_field() {
    check_parse_error(
        "+1 1:1\nabc 1:1\n",
        2,
        1,
        "label",
        "\"abc\" is not a number",
    );
    check_parse_error("+1 1:1\nnan 1:1\n", 2, 1, "label", "not a finite number");
    // 2^53 + 1 reads as 2^53: two classes would merge.
    check_parse_error(
        "9007199254740992 1:1\n9007199254740993 1:1\n",
        2,
        1,
        "label",
        "cannot hold (it reads as 9007199254740992)",
    );
    check_parse_error("+1 0:1\n", 1, 4, "feature index", "index 0");
    check_parse_error("+1 3:1 2:1\n", 1, 8, "feature index", "does not increase");
    check_parse_error("+1 3:1 3:1\n", 1, 8, "feature index", "does not increase");
    check_parse_error("+1 1:x\n", 1, 4, "feature value", "\"x\" is not a number");
    check_parse_error("+1 1:inf\n", 1, 4, "feature value", "not a finite number");
    check_parse_error("+1 1:NaN\n", 1, 4, "feature value", "not a finite number");
    check_parse_error("+1 1\n", 1, 4, "feature", "index:value");
    check_parse_error("+1 1:1 qid:2\n", 1, 8, "qid", "right after the label");
    check_parse_error("+1 a:1\n", 1, 4, "feature index", "positive integer");
}

#[test]
fn missing_file_names_the_path() {
    let e = read("/nonexistent/dir/data.svm".as_ref()).unwrap_err();
    assert!(
        e.to_string().starts_with("/nonexistent/dir/data.svm: "),
        "{e}"
    );
}

#[test]
fn binary_labels_map_and_reject() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_file(&dir, "one.svm", b"1 1:1\n1 2:1\n");
    let d = read(&p).unwrap();
    let e = BinaryLabels::from_labels(&p, &d.labels).unwrap_err();
    assert!(matches!(e, IoError::NotBinary { found: 1, .. }), "{e}");
    let p = write_file(&dir, "three.svm", b"1 1:1\n2 2:1\n3 1:1\n");
    let d = read(&p).unwrap();
    assert!(matches!(
        BinaryLabels::from_labels(&p, &d.labels),
        Err(IoError::NotBinary { found: 3, .. })
    ));
    let p = write_file(&dir, "empty.svm", b"# nothing\n");
    let d = read(&p).unwrap();
    assert!(matches!(
        BinaryLabels::from_labels(&p, &d.labels),
        Err(IoError::Empty { .. })
    ));
    let m = BinaryLabels::from_labels(&p, &[0.0, 1.0, 0.0]).unwrap();
    assert_eq!(
        (m.to_sign(0.0), m.to_sign(1.0), m.to_sign(2.0)),
        (Some(-1.0), Some(1.0), None)
    );
    assert_eq!((m.from_decision(0.0), m.from_decision(0.1)), (0.0, 1.0));
}

#[test]
fn write_then_read_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_file(&dir, "in.svm", b"-1 qid:1 1:0.1 5:3.25\n1 2:-7\n");
    let d = read(&p).unwrap();
    let out = dir.path().join("out.svm");
    write(&out, &d).unwrap();
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "-1 qid:1 1:0.1 5:3.25\n1 2:-7\n"
    );
    let back = read(&out).unwrap();
    assert_eq!((back.x, back.labels, back.qids), (d.x, d.labels, d.qids));
}

/// A line of LIBSVM text from a few fragments: labels, features, qids, comments, blank lines, CRLF, and
/// some malformed tokens so that errors are compared too.
fn line_strategy() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let feature = (1u32..6, -3i32..4).prop_map(|(j, v)| (j, v));
    (
        prop_oneof![Just("+1"), Just("-1"), Just("2"), Just("x")],
        proptest::collection::vec(feature, 0..4),
        prop_oneof![Just(""), Just(" # note"), Just("#only")],
        prop_oneof![Just("\n"), Just("\r\n")],
        any::<bool>(),
    )
        .prop_map(|(label, mut feats, comment, end, blank)| {
            if blank {
                return end.to_string();
            }
            feats.sort_unstable();
            let body: Vec<String> = feats.iter().map(|(j, v)| format!("{j}:{v}")).collect();
            format!("{label} {}{comment}{end}", body.join(" "))
        })
}

proptest::proptest! {
    #[test]
    fn parallel_pieces_read_exactly_as_the_sequential_reader(
        lines in proptest::collection::vec(line_strategy(), 0..40),
        trailing_newline in proptest::bool::ANY,
        piece in 1usize..40,
        per_round in 1usize..4,
    ) {
        let mut text: String = lines.concat();
        if !trailing_newline && text.ends_with('\n') {
            text.pop();
        }
        let path = std::path::Path::new("mem.svm");
        let seq = maxmargin_io::libsvm::read_from(text.as_bytes(), path, maxmargin_io::libsvm::parse_real_label);
        let par = maxmargin_io::libsvm::read_in_pieces(
            text.as_bytes(), path, maxmargin_io::libsvm::parse_real_label, piece, per_round,
            Some(text.len() as u64),
        );
        match (seq, par) {
            (Ok(a), Ok(b)) => proptest::prop_assert_eq!(a, b),
            (Err(a), Err(b)) => proptest::prop_assert_eq!(a.to_string(), b.to_string()),
            (a, b) => proptest::prop_assert!(false, "sequential {:?} vs parallel {:?}", a, b),
        }
    }
}

#[test]
fn invalid_utf8_is_a_parse_error_with_its_line() {
    let path = std::path::Path::new("bad.svm");
    let err = maxmargin_io::libsvm::read_parallel_from(
        &b"1 1:1\n-1 2:\xff\n"[..],
        path,
        maxmargin_io::libsvm::parse_real_label,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("bad.svm:2:6: text: invalid UTF-8"), "{err}");
}
