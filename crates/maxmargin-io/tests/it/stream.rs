//! Rows streamed from disk: every row once per pass, a new order each pass (the same for the same seed),
//! gzip like plain text, a per-row column that follows its row, errors naming the file and line.

use maxmargin_io::IoError;
use maxmargin_io::stream::{Column, RowFile};
use std::io::Write;

/// A file of `n` rows sorted by class (the order a shuffle must undo): row `i` has label ±1, feature
/// `i % 9 + 1` and the value `i`.
fn sorted_file(dir: &std::path::Path, n: usize) -> std::path::PathBuf {
    let p = dir.join("sorted.svm");
    let mut text = String::new();
    for i in 0..n {
        let label = if i < n / 2 { 1 } else { -1 };
        text.push_str(&format!("{label} {}:{i}\n", i % 9 + 1));
        if i == 10 {
            text.push_str("# a comment\n\n");
        }
    }
    std::fs::write(&p, text).unwrap();
    p
}

/// The values (= row numbers) of one pass, in its order.
fn one_pass(rows: &RowFile) -> Vec<usize> {
    let mut seen = Vec::new();
    rows.pass(|r| {
        assert_eq!(r.x.values().len(), 1);
        seen.push(r.x.values()[0] as usize);
        Ok::<_, IoError>(())
    })
    .unwrap();
    seen
}

#[test]
fn every_pass_visits_every_row_once_in_a_new_order_that_the_seed_repeats() {
    let dir = tempfile::tempdir().unwrap();
    let p = sorted_file(dir.path(), 1000);
    let rows = RowFile::prepare_in_buckets(&p, dir.path(), 7, 2000).unwrap();
    let s = rows.summary();
    assert_eq!((s.n_rows, s.n_features, s.nnz), (1000, 9, 1000));
    assert_eq!(s.labels, [(-1.0, 500), (1.0, 500)]);
    let (first, second) = (one_pass(&rows), one_pass(&rows));
    for pass in [&first, &second] {
        let mut sorted = pass.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..1000).collect::<Vec<_>>());
    }
    assert_ne!(first, second, "each pass draws a new order");
    // Mixed: the first hundred rows of a pass hold both classes in about equal numbers.
    let positives = first[..100].iter().filter(|&&i| i < 500).count();
    assert!((25..=75).contains(&positives), "{positives} of 100");
    let again = RowFile::prepare_in_buckets(&p, dir.path(), 7, 2000).unwrap();
    assert_eq!(
        (one_pass(&again), one_pass(&again)),
        (first.clone(), second)
    );
    let other = RowFile::prepare_in_buckets(&p, dir.path(), 8, 2000).unwrap();
    assert_ne!(one_pass(&other), first);
}

/// The places in the row file (`StreamRow::index`) of one pass, in its order.
fn one_pass_places(rows: &RowFile) -> Vec<usize> {
    let mut seen = Vec::new();
    rows.pass(|r| {
        seen.push(r.index);
        Ok::<_, IoError>(())
    })
    .unwrap();
    seen
}

/// A pass interleaves the rows of two buckets (paired afresh each pass) instead of handing out one bucket's
/// rows as a group: coordinate descent over fixed groups of rows one after the other converges orders of
/// magnitude slower than over a shuffle (streamed logistic regression took 709 passes on phishing, 9 in
/// memory).
#[test]
fn a_pass_interleaves_the_rows_of_two_buckets_paired_afresh_each_pass() {
    let dir = tempfile::tempdir().unwrap();
    let p = sorted_file(dir.path(), 1000);
    // About 62 rows of 32 bytes per bucket, 16 buckets; a bucket's rows are a run of places in the file.
    let rows = RowFile::prepare_in_buckets(&p, dir.path(), 7, 2000).unwrap();
    let mut partners = std::collections::BTreeSet::new();
    for _ in 0..4 {
        let places = one_pass_places(&rows);
        let jumps = places
            .windows(2)
            .filter(|w| w[0].abs_diff(w[1]) >= 100)
            .count();
        // One bucket at a time jumps only between buckets (15 times); two interleaved, about half the time.
        assert!(jumps > 250, "{jumps} jumps of 999");
        // Whom the first row's bucket is visited with: the first row far from it.
        let first = places[0];
        let partner = places[..124].iter().find(|&&q| q.abs_diff(first) >= 100);
        partners.insert(partner.map(|q| q / 100));
    }
    assert!(partners.len() > 1, "the same pair every pass: {partners:?}");
}

#[test]
fn gzip_input_gives_the_rows_of_the_plain_file_and_lines_are_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let p = sorted_file(dir.path(), 300);
    let gz = dir.path().join("sorted.svm.gz");
    let mut enc = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::fast(),
    );
    enc.write_all(&std::fs::read(&p).unwrap()).unwrap();
    enc.finish().unwrap();
    let plain = RowFile::prepare(&p, dir.path(), 3).unwrap();
    let packed = RowFile::prepare(&gz, dir.path(), 3).unwrap();
    assert_eq!(plain.summary(), packed.summary());
    assert_eq!(one_pass(&plain), one_pass(&packed));
    // Line numbers count the comment and blank line after row 10.
    plain
        .pass(|r| {
            let i = r.x.values()[0] as usize;
            assert_eq!(r.line, if i <= 10 { i + 1 } else { i + 3 });
            Ok::<_, IoError>(())
        })
        .unwrap();
}

#[test]
fn a_column_keeps_each_rows_number_across_passes_in_new_orders() {
    let dir = tempfile::tempdir().unwrap();
    let p = sorted_file(dir.path(), 500);
    let rows = RowFile::prepare_in_buckets(&p, dir.path(), 1, 1000).unwrap();
    let mut column = Column::new(dir.path()).unwrap();
    for pass in 0..4 {
        rows.pass_with_column(&mut column, false, |r, v| {
            assert_eq!(*v, pass as f64 * r.x.values()[0], "row {}", r.index);
            *v += r.x.values()[0];
            Ok::<_, IoError>(())
        })
        .unwrap();
    }
    rows.pass_with_column(&mut column, true, |_, v| {
        assert_eq!(*v, 0.0);
        Ok::<_, IoError>(())
    })
    .unwrap();
}

#[test]
fn bad_input_is_refused_naming_the_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.svm");
    std::fs::write(&p, "1 1:1\n-1 2:1\n1 3:x\n").unwrap();
    let e = RowFile::prepare(&p, dir.path(), 0).unwrap_err().to_string();
    assert!(
        e.contains("bad.svm:3:") && e.contains("feature value"),
        "{e}"
    );
    std::fs::write(&p, "# nothing\n\n").unwrap();
    let e = RowFile::prepare(&p, dir.path(), 0).unwrap_err().to_string();
    assert!(e.contains("no examples"), "{e}");
    let missing = dir.path().join("missing.svm");
    let e = RowFile::prepare(&missing, dir.path(), 0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing.svm"), "{e}");
    let e = RowFile::prepare(
        &sorted_file(dir.path(), 5),
        &dir.path().join("no-such-dir"),
        0,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("no-such-dir"), "{e}");
}

#[test]
fn nothing_is_left_in_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    let p = sorted_file(dir.path(), 200);
    let rows = RowFile::prepare_in_buckets(&p, dir.path(), 0, 500).unwrap();
    let mut column = Column::new(dir.path()).unwrap();
    rows.pass_with_column(&mut column, false, |_, _| Ok::<_, IoError>(()))
        .unwrap();
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        names,
        ["sorted.svm"],
        "only the data: the row files are anonymous"
    );
}
