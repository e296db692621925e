//! What a new user's trial with crafted inputs found (stop 49's note), each as the user met it: scores that
//! overflow, flags that were silently ignored, and messages that named the wrong line or nothing.

use super::{fails, heart, ok, s};
use std::path::Path;

/// A binary model whose weights are `w` (two features, no bias), converted from LIBLINEAR's text format.
fn liblinear_model(dir: &Path, w: [&str; 2]) -> std::path::PathBuf {
    let text = dir.join("w.liblinear");
    std::fs::write(
        &text,
        format!(
            "solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 2\nlabel 1 -1\nnr_feature 2\nbias -1\nw\n{}\n{}\n",
            w[0], w[1]
        ),
    )
    .unwrap();
    let model = dir.join("w.model");
    ok(&["convert", s(&text), "-o", s(&model)]);
    model
}

#[test]
fn scores_that_overflow_are_refused_by_predict_eval_and_inspect_naming_the_row() {
    let tmp = tempfile::tempdir().unwrap();
    let model = liblinear_model(tmp.path(), ["1e308", "1e308"]);
    // Line 2 scores 1e309 − 1e309 = ∞ − ∞ = NaN: before, predict labelled it -1 and eval took it as a hinge of 0.
    let data = tmp.path().join("rows.svm");
    std::fs::write(&data, "1 1:1 2:-1\n-1 1:10 2:-10\n").unwrap();
    for command in ["predict", "eval", "inspect"] {
        let err = fails(&[command, s(&model), s(&data)], 1);
        assert!(
            err.contains(
                "rows.svm:2:1: features: the model scores this row NaN, not a finite number"
            ),
            "{command}: {err}"
        );
    }
    // A multiclass model refuses such rows the same way, by line.
    let text = tmp.path().join("cs.liblinear");
    std::fs::write(
        &text,
        "solver_type MCSVM_CS\nnr_class 3\nlabel 1 2 3\nnr_feature 2\nbias -1\nw\n1e308 1e308 1e308\n1e308 1e308 1e308\n",
    )
    .unwrap();
    let multiclass = tmp.path().join("cs.model");
    ok(&["convert", s(&text), "-o", s(&multiclass)]);
    let big = tmp.path().join("big.svm");
    std::fs::write(&big, "1 1:1 2:-1\n2 1:10 2:-10\n").unwrap();
    for command in ["predict", "eval"] {
        let err = fails(&[command, s(&multiclass), s(&big)], 1);
        assert!(
            err.contains("big.svm:2:1: features: the model scores this row")
                && err.contains("no class"),
            "{command}: {err}"
        );
    }
    // A chain names the sequence and the token.
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/p1");
    let seqs = tmp.path().join("big.svmhmm");
    std::fs::write(
        &seqs,
        "1 qid:7 1:5.1 2:3.5 3:1.4 4:0.2\n2 qid:7 1:1e308 2:-1e308 3:1e308 4:1e308\n",
    )
    .unwrap();
    for command in ["predict", "eval"] {
        let err = fails(
            &[command, s(&fixtures.join("chain-bcfw.model")), s(&seqs)],
            1,
        );
        assert!(
            err.contains(
                "big.svmhmm: sequence 1 (qid 7), token 2: the model's scores there are not finite"
            ),
            "{command}: {err}"
        );
    }
    // So does a latent chain, whose evaluation decodes hidden states.
    let latent = tmp.path().join("latent.model");
    ok(&[
        "train",
        "--task",
        "chain",
        "--latent-states",
        "2",
        s(&fixtures.join("iris-chain.svmhmm")),
        "-o",
        s(&latent),
    ]);
    for command in ["predict", "eval"] {
        let err = fails(&[command, s(&latent), s(&seqs)], 1);
        assert!(
            err.contains(
                "big.svmhmm: sequence 1 (qid 7), token 2: the model's scores there are not finite"
            ),
            "{command}: {err}"
        );
    }
}

#[test]
fn huge_values_print_in_exponent_form_not_three_hundred_digits() {
    let tmp = tempfile::tempdir().unwrap();
    let model = liblinear_model(tmp.path(), ["1e300", "1e300"]);
    let data = tmp.path().join("rows.svm");
    std::fs::write(&data, "1 1:1 2:1\n-1 1:1 2:-0.5\n").unwrap();
    for command in ["inspect", "eval"] {
        let out = ok(&[command, s(&model), s(&data)]);
        assert!(out.lines().all(|l| l.len() < 120), "{command}: {out}");
        assert!(
            out.contains("e300") || out.contains("e299"),
            "{command}: {out}"
        );
    }
}

#[test]
fn flags_that_were_silently_ignored_are_refused_before_any_work() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let model = tmp.path().join("m.model");
    let train = |extra: &[&str]| {
        let mut args = vec!["train", s(&data), "-o", s(&model), "-q"];
        args.extend_from_slice(extra);
        fails(&args, 1)
    };
    // A repeated -w kept the first weight.
    let err = train(&["-w", "1=2", "-w", "1=3"]);
    assert!(
        err.contains("-w names the label 1 twice (2 and 3)"),
        "{err}"
    );
    // Averaging from beyond the last pass returned the last iterate.
    let err = train(&[
        "--solver",
        "pegasos",
        "--epochs",
        "3",
        "--average-from",
        "5",
    ]);
    assert!(
        err.contains("--average-from") && err.contains("--last"),
        "{err}"
    );
    // A batch beyond the rows made one giant step.
    let err = train(&["--solver", "pegasos", "--batch-size", "100000"]);
    assert!(
        err.contains("--batch-size 100000 is more than the 270 training rows"),
        "{err}"
    );
    // The check is against the file's rows: cv's folds hold fewer, and a batch of 250 of heart's 270 rows
    // trains in each fold.
    ok(&[
        "cv",
        s(&data),
        "-k",
        "5",
        "--solver",
        "pegasos",
        "--batch-size",
        "250",
    ]);
    // All-zero sample weights trained w = 0 and said "converged".
    let weights = tmp.path().join("zero.txt");
    std::fs::write(&weights, "0\n".repeat(270)).unwrap();
    let err = train(&["--sample-weights", s(&weights)]);
    assert!(
        err.contains("zero.txt: sample weights must give some row a weight above 0"),
        "{err}"
    );
    assert!(!model.exists());
    // So did class weights of 0 for every class (binary and multiclass).
    let err = train(&["-w", "1=0", "-w", "-1=0"]);
    assert!(
        err.contains("class weights must give some row a weight above 0"),
        "{err}"
    );
    assert!(
        err.contains("all 270 row weights (class times row) zero"),
        "{err}"
    );
    let iris = tmp.path().join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    let task = ["--task", "multiclass", s(&iris), "-o", s(&model), "-q"];
    let err = fails(
        &[
            &["train"][..],
            &task,
            &["-w", "0=0", "-w", "1=0", "-w", "2=0"],
        ]
        .concat(),
        1,
    );
    assert!(err.contains("got all 3 class weights zero"), "{err}");
    assert!(!model.exists());
    // --label-column where no CSV is read.
    ok(&["train", s(&data), "-o", s(&model), "-q"]);
    let converted = tmp.path().join("m.json");
    let err = fails(
        &[
            "convert",
            s(&model),
            "-o",
            s(&converted),
            "--label-column",
            "y",
        ],
        1,
    );
    assert!(
        err.contains("--label-column applies to commands that read CSV data, not to convert"),
        "{err}"
    );
    assert!(!converted.exists());
    // demo's folder is tried first, not after a minute of work.
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let out = super::maxmargin(&["demo", "--out", s(&file)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "the demo ran before failing");
    assert!(String::from_utf8_lossy(&out.stderr).contains("the pictures' folder"));
}

#[test]
fn tsv_files_are_split_on_tabs_as_csv_files_on_commas() {
    let tmp = tempfile::tempdir().unwrap();
    let rows = [
        ("a", "label", "b"),
        ("1", "1", "0"),
        ("0", "-1", "1"),
        ("1", "1", "0.5"),
        ("0", "-1", "2"),
    ];
    let csv: String = rows
        .iter()
        .map(|(a, l, b)| format!("{a},{l},{b}\n"))
        .collect();
    let tsv: String = rows
        .iter()
        .map(|(a, l, b)| format!("{a}\t{l}\t{b}\n"))
        .collect();
    let (c, t) = (tmp.path().join("d.csv"), tmp.path().join("d.tsv"));
    std::fs::write(&c, csv).unwrap();
    std::fs::write(&t, tsv).unwrap();
    let (mc, mt) = (tmp.path().join("c.model"), tmp.path().join("t.model"));
    ok(&["train", s(&c), "-o", s(&mc), "-q"]);
    ok(&["train", s(&t), "-o", s(&mt), "-q"]);
    assert_eq!(
        ok(&["predict", s(&mc), s(&c), "--scores"]),
        ok(&["predict", s(&mt), s(&t), "--scores"])
    );
}

#[test]
fn liblinear_headers_are_checked_at_their_own_lines_and_solvers_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out.model");
    let header = |solver: &str, classes: &str| {
        format!(
            "solver_type {solver}\nnr_class {classes}\nlabel 1 -1\nnr_feature 2\nbias -1\nw\n1\n1\n"
        )
    };
    for (name, text, want) in [
        (
            "solver.ll",
            header("FOO", "2"),
            "solver.ll:1:1: solver_type: \"FOO\" is not a LIBLINEAR solver",
        ),
        (
            "labels.ll",
            header("MCSVM_CS", "3"),
            "labels.ll:3:1: label: 2 labels for nr_class 3",
        ),
    ] {
        let path = tmp.path().join(name);
        std::fs::write(&path, text).unwrap();
        let err = fails(&["convert", s(&path), "-o", s(&out)], 1);
        assert!(err.contains(want), "{err}");
        assert!(!out.exists());
    }
}

#[test]
fn one_class_figures_and_chain_tags_are_refused_in_the_users_terms() {
    let tmp = tempfile::tempdir().unwrap();
    // Multiclass on one class trained a model that predicts it everywhere, "converged" at objective 0.
    let one = tmp.path().join("one.svm");
    std::fs::write(&one, "2 1:1\n2 1:0.5\n2 2:1\n").unwrap();
    let model = tmp.path().join("m.model");
    let err = fails(
        &["train", s(&one), "--task", "multiclass", "-o", s(&model)],
        1,
    );
    assert!(err.contains("one.svm: every row is of class 2"), "{err}");
    // A figure named .jpg got SVG bytes.
    let data = heart(tmp.path());
    let trace = tmp.path().join("t.jsonl");
    ok(&[
        "train",
        s(&data),
        "-o",
        s(&model),
        "--trace",
        s(&trace),
        "-q",
    ]);
    let jpg = tmp.path().join("curve.jpg");
    let err = fails(&["plot", s(&trace), "-o", s(&jpg)], 1);
    assert!(
        err.contains("curve.jpg: figures are written as SVG (.svg) or PNG (.png), not .jpg"),
        "{err}"
    );
    assert!(!jpg.exists());
    // A tag beyond the chain model's is counted as an error, in one warning naming the 1-based tag once.
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/p1");
    let seqs = tmp.path().join("tags.svmhmm");
    std::fs::write(&seqs, "1 qid:4 1:5.1 2:3.5\n9 qid:4 1:5.4 2:3.4\n").unwrap();
    let err = super::ok_stderr(&["eval", s(&fixtures.join("chain-bcfw.model")), s(&seqs)]);
    assert!(
        err.contains("tags.svmhmm: 1 tokens have tags")
            && err.contains("never saw in training (9)"),
        "{err}"
    );
    assert_eq!(err.matches("(9)").count(), 1, "{err}");
}

#[test]
fn graph_scores_that_overflow_name_the_graph_line_and_node() {
    let tmp = tempfile::tempdir().unwrap();
    let train = tmp.path().join("train.jsonl");
    std::fs::write(
        &train,
        "{\"features\": [[0.01, 0], [0, 0.01], [0.01, 0]], \"edges\": [[0, 1], [1, 2]], \"labels\": [0, 1, 0]}\n\
         {\"features\": [[0, 0.01], [0.01, 0]], \"edges\": [[0, 1]], \"labels\": [1, 0]}\n",
    )
    .unwrap();
    let model = tmp.path().join("g.model");
    let small = ["--lambda", "1e-5"];
    ok(&[
        "train",
        s(&train),
        "--task",
        "graph",
        "-o",
        s(&model),
        "-q",
        small[0],
        small[1],
    ]);
    // Node 1 of the graph on line 2 holds a value whose product with its (large: the training values are
    // 0.01) weights (at a small lambda) overflows.
    let test = tmp.path().join("test.jsonl");
    std::fs::write(
        &test,
        "{\"features\": [[1, 0], [0, 1]], \"edges\": [[0, 1]], \"labels\": [0, 1]}\n\
         {\"features\": [[1, 0], [1.7e308, 0]], \"edges\": [[0, 1]], \"labels\": [0, 1]}\n",
    )
    .unwrap();
    for command in ["predict", "eval"] {
        let err = fails(&[command, s(&model), s(&test)], 1);
        assert!(
            err.contains(
                "test.jsonl:2:1: features: node 1: the model's scores there are not finite"
            ),
            "{command}: {err}"
        );
    }
    // Scores each finite but whose sum overflows (or −∞): every method used to print a labelling, the exact
    // ones disagreeing. Each method refuses it, naming the node with the largest scores.
    let sums = tmp.path().join("sums.jsonl");
    std::fs::write(
        &sums,
        "{\"features\": [[1.7e308, 1.7e308], [1.7e308, 1.7e308], [-1.7e308, -1.7e308]], \"edges\": [[0, 1], [1, 2]]}\n",
    )
    .unwrap();
    for inference in [
        "exact-tree",
        "brute-force",
        "qpbo",
        "max-product",
        "trws",
        "ad3",
    ] {
        let err = fails(
            &["predict", s(&model), s(&sums), "--inference", inference],
            1,
        );
        assert!(
            err.contains("sums.jsonl:1:1: features: node ") && err.contains("are not finite"),
            "{inference}: {err}"
        );
    }
}

/// Flag values a structured run cannot mean, from a new user's probe: each refused by its own flag's name
/// (`--max-passes 0` named "epochs"; `--gap 2` certified a 59% gap as converged; `--min-count` above every
/// feature's count trained a tagger of no features), and the refusals read as sentences.
#[test]
fn structured_flag_values_that_cannot_mean_anything_are_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let (seq, conll, model) = (
        tmp.path().join("s.dat"),
        tmp.path().join("c.conll"),
        tmp.path().join("m.model"),
    );
    std::fs::write(&seq, "1 qid:1 1:1\n2 qid:1 2:1\n2 qid:2 1:1\n1 qid:2 2:1\n").unwrap();
    std::fs::write(
        &conll,
        "He PRP B-NP\nran VBD B-VP\n\nShe PRP B-NP\nsat VBD B-VP\n",
    )
    .unwrap();
    let chain = |extra: &[&str], code: i32| {
        let mut args = vec!["train", "--task", "chain", s(&seq), "-o", s(&model)];
        args.extend_from_slice(extra);
        fails(&args, code)
    };
    for (flag, value) in [("--max-passes", "0"), ("--gap", "2"), ("--gap", "1")] {
        let err = chain(&[flag, value], 2);
        assert!(
            err.contains(&format!("invalid value '{value}' for '{flag}")),
            "{err}"
        );
    }
    let err = chain(&["--rescaling", "slack"], 1);
    assert!(
        err.contains("slack rescaling is trained by the cutting planes only"),
        "{err}"
    );
    let ck = tmp.path().join("ck");
    let err = chain(
        &[
            "--latent-states",
            "2",
            "--checkpoint",
            s(&ck),
            "--checkpoint-every",
            "1",
        ],
        1,
    );
    assert!(
        err.contains("checkpoint period does not apply to latent training"),
        "{err}"
    );
    let tagger = |count: &str, code: i32| {
        let args = [
            "train",
            "--task",
            "chain",
            "--format",
            "conll",
            s(&conll),
            "-o",
            s(&model),
        ];
        fails(&[&args[..], &["--min-count", count]].concat(), code)
    };
    assert!(tagger("0", 2).contains("invalid value '0' for '--min-count"));
    assert!(tagger("100", 1).contains("--min-count 100 keeps no feature of"));
    assert!(!model.exists());
}
