//! `train --task chain --order 2`: second-order transitions follow tags that run in a period of four (a
//! first-order chain cannot), on svm_hmm files and on CoNLL files (the template's `T` line); predict and eval
//! read the models; what cannot apply is refused by name.

use super::latent_chain::{token_accuracy, write};
use super::{fails, ok, ok_stderr, s};
use std::path::Path;

#[test]
fn second_order_chains_follow_a_period_a_first_order_chain_cannot() {
    let tmp = tempfile::tempdir().unwrap();
    let (train, test) = (
        write(tmp.path(), "train.dat", 200, 1),
        write(tmp.path(), "test.dat", 300, 2),
    );
    let (first, second) = (tmp.path().join("first.mm"), tmp.path().join("second.json"));
    let base = ["train", s(&train), "--task", "chain", "--lambda", "0.01"];
    ok(&[&base[..], &["-q", "-o", s(&first)]].concat());
    let said = ok_stderr(&[&base[..], &["--order", "2", "-o", s(&second)]].concat());
    assert!(
        said.contains("second-order transitions: 8 weights"),
        "{said}"
    );
    let (a, b) = (
        token_accuracy(&first, &test),
        token_accuracy(&second, &test),
    );
    assert!(b > a + 0.1, "first order {a}, second order {b}");
    let lines = ok(&["predict", s(&second), s(&test)]);
    assert_eq!(lines.lines().count(), 300 * 20);
    assert!(lines.lines().all(|l| l == "1" || l == "2"), "{lines}");
    let e = ok(&["eval", s(&second), s(&test), "--lambda", "0.01"]);
    assert!(e.contains("objective"), "{e}");
    // --order 1 is the default: the same model bits.
    let again = tmp.path().join("again.mm");
    ok(&[&base[..], &["-q", "--order", "1", "-o", s(&again)]].concat());
    assert_eq!(
        std::fs::read(&first).unwrap(),
        std::fs::read(&again).unwrap()
    );
    // A warm start of the other order is refused by name.
    let err = fails(
        &[
            &base[..],
            &["--order", "2", "--solver", "ssg", "--warm-start", s(&first)],
            &["-o", s(&again)],
        ]
        .concat(),
        1,
    );
    assert!(
        err.contains("for this second order chain") && err.contains("does not fit"),
        "{err}"
    );
    // What cannot apply, by name.
    let err = fails(
        &[
            &base[..],
            &["--order", "2", "--latent-states", "2", "-o", s(&again)],
        ]
        .concat(),
        1,
    );
    assert!(err.contains("--order 2 with --latent-states"), "{err}");
    let err = fails(&[&base[..], &["--order", "3", "-o", s(&again)]].concat(), 2);
    assert!(err.contains("3 is not in 1..=2"), "{err}");
    // Cross-validation trains every fold (and the refit) at the order asked for.
    let cv = |order: &str| {
        let out = ok(&[
            "cv",
            s(&train),
            "--task",
            "chain",
            "--order",
            order,
            "--json",
        ]);
        let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
        v["mean"].as_f64().unwrap_or_else(|| panic!("{out}"))
    };
    let (a, b) = (cv("1"), cv("2"));
    assert!(b > a + 0.1, "cv: first order {a}, second order {b}");
    let refit = tmp.path().join("refit.mm");
    ok(&[
        "cv",
        s(&train),
        "--task",
        "chain",
        "--order",
        "2",
        "--refit",
        "-o",
        s(&refit),
        "-q",
    ]);
    assert!(
        maxmargin::StructuredModel::load(&refit)
            .unwrap()
            .is_second_order()
    );
    let err = fails(
        &[
            "train",
            s(&train),
            "--task",
            "multilabel",
            "--order",
            "2",
            "-o",
            s(&again),
        ],
        1,
    );
    assert!(err.contains("--order applies to --task chain"), "{err}");
}

#[test]
fn a_tagger_with_a_t_line_is_second_order() {
    let tmp = tempfile::tempdir().unwrap();
    let head = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/conll2000-head");
    let (train, test) = (head.join("train.txt"), head.join("test.txt"));
    let model = tmp.path().join("tagger.mm");
    let base = ["train", s(&train), "--task", "chain", "--format", "conll"];
    let said = ok_stderr(
        &[
            &base[..],
            &["--order", "2", "--max-passes", "3", "-o", s(&model)],
        ]
        .concat(),
    );
    assert!(
        said.contains("19 tags; second-order transitions (6859 weights)"),
        "{said}"
    );
    let e = ok(&["eval", s(&model), s(&test), "--json"]);
    let e: serde_json::Value = serde_json::from_str(e.trim()).unwrap();
    assert!(e["chunk_f1"].as_f64().unwrap() > 0.8, "{e}");
    let tagged = ok(&["predict", s(&model), s(&test)]);
    assert!(tagged.lines().any(|l| l.ends_with(" B-NP")), "{tagged}");
    // A template file's T line asks for the same; --order 1 contradicts it, T with more on the line is refused.
    let template = tmp.path().join("words.txt");
    std::fs::write(&template, "U00:%x[0,0]\nU01:%x[0,1]\nT\n").unwrap();
    let said = ok_stderr(
        &[
            &base[..],
            &[
                "--template",
                s(&template),
                "--max-passes",
                "1",
                "-o",
                s(&model),
            ],
        ]
        .concat(),
    );
    assert!(said.contains("second-order transitions"), "{said}");
    // A warm start from a tagger of the same template (its T line included) continues it.
    let (ssg, warm) = (tmp.path().join("ssg.mm"), tmp.path().join("warm.mm"));
    let with_t = [
        &base[..],
        &[
            "--template",
            s(&template),
            "--solver",
            "ssg",
            "--max-passes",
            "2",
        ],
    ]
    .concat();
    ok(&[&with_t[..], &["-q", "-o", s(&ssg)]].concat());
    ok(&[
        &with_t[..],
        &["-q", "--warm-start", s(&ssg), "-o", s(&warm)],
    ]
    .concat());
    let err = fails(
        &[
            &base[..],
            &["--template", s(&template), "--order", "1", "-o", s(&model)],
        ]
        .concat(),
        1,
    );
    assert!(err.contains("asks for second-order transitions"), "{err}");
    std::fs::write(&template, "U00:%x[0,0]\nT:%x[0,1]\n").unwrap();
    let err = fails(
        &[&base[..], &["--template", s(&template), "-o", s(&model)]].concat(),
        1,
    );
    assert!(
        err.contains("words.txt:2") && err.contains("stands alone"),
        "{err}"
    );
}
