//! One rank's share of a file: every line (every sequence) read by exactly one rank, errors naming the
//! file's own line, unsplittable input refused by name.

use maxmargin_io::shard::{read_sequence_shard, read_shard};

#[test]
fn every_line_is_read_by_exactly_one_rank_and_errors_name_the_files_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("d.svm");
    let mut text = String::new();
    for i in 0..97 {
        // Lines of uneven length, a comment and a blank line among them.
        text.push_str(&format!(
            "{} {}:{}{}\n",
            if i % 2 == 0 { 1 } else { -1 },
            i % 7 + 1,
            i,
            "0".repeat(i % 13)
        ));
        if i == 40 {
            text.push_str("# a comment\n\n");
        }
    }
    std::fs::write(&p, &text).unwrap();
    let whole = maxmargin_io::libsvm::read(&p).unwrap();
    for size in [1, 2, 3, 5, 8, 64, 200] {
        let mut labels = Vec::new();
        let mut values = Vec::new();
        for r in 0..size {
            let s = read_shard(&p, r, size).unwrap();
            for (k, &l) in s.data.lines.iter().enumerate() {
                assert_eq!(s.file_line(l).unwrap(), whole.lines[labels.len() + k]);
            }
            labels.extend(s.data.labels);
            values.extend(s.data.x.rows().map(|row| row.values().to_vec()));
        }
        assert_eq!(labels, whole.labels, "{size} ranks");
        assert_eq!(
            values,
            whole
                .x
                .rows()
                .map(|r| r.values().to_vec())
                .collect::<Vec<_>>()
        );
    }
    std::fs::write(&p, format!("{text}+1 3:x\n")).unwrap();
    let e = read_shard(&p, 2, 3).unwrap_err().to_string();
    assert!(
        e.ends_with("d.svm:100:4: feature value: \"x\" is not a number"),
        "{e}"
    );
}

#[test]
fn every_sequence_is_read_by_exactly_one_rank() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.dat");
    let mut text = String::new();
    for q in 0..40 {
        // Sequences of 1 to 6 tokens, a comment line inside one of them.
        for t in 0..(q % 6 + 1) {
            text.push_str(&format!(
                "{} qid:{} {}:1 {}:0.{}\n",
                t % 3 + 1,
                q + 100,
                t + 1,
                t + 2,
                q
            ));
            if q == 17 && t == 1 {
                text.push_str("# a comment inside a sequence\n");
            }
        }
    }
    std::fs::write(&p, &text).unwrap();
    let whole = maxmargin_io::svm_hmm::read(&p).unwrap();
    for size in [1, 2, 3, 7, 16, 100] {
        let (mut qids, mut labels) = (Vec::new(), Vec::new());
        for r in 0..size {
            let s = read_sequence_shard(&p, r, size).unwrap();
            qids.extend(s.data.qids);
            labels.extend(s.data.labels);
        }
        assert_eq!(qids, whole.qids, "{size} ranks");
        assert_eq!(labels, whole.labels, "{size} ranks");
    }
}

#[test]
fn compressed_and_cached_input_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("d.svm.gz");
    std::fs::write(&p, [0x1f, 0x8b, 8, 0]).unwrap();
    let e = read_shard(&p, 0, 2).unwrap_err().to_string();
    assert!(
        e.contains("d.svm.gz: gzip input cannot be split between ranks"),
        "{e}"
    );
}
