//! Sequence labelling from the command line: `train --task chain --format conll`, `predict` writing the tag
//! column back, `eval` with conlleval's chunk measures.

use super::{fails, ok, ok_stderr, s, shared_data};
use std::path::{Path, PathBuf};

fn head(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/conll2000-head")
        .join(name)
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn a_chunker_trains_tags_new_text_and_scores_chunks() {
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("chunker.mm");
    let (train, test) = (head("train.txt"), head("test.txt"));
    ok(&[
        "train",
        s(&train),
        "--task",
        "chain",
        "--format",
        "conll",
        "--lambda",
        "1e-3",
        "--max-passes",
        "15",
        "-o",
        s(&model),
        "-q",
    ]);
    // Labelled text: the gold column stays, the prediction is added last (conlleval's input).
    let tagged = ok(&["predict", s(&model), s(&test)]);
    let rows: Vec<Vec<&str>> = tagged.lines().map(|l| l.split(' ').collect()).collect();
    let text = std::fs::read_to_string(&test).unwrap();
    assert_eq!(tagged.lines().count(), text.lines().count());
    for (line, row) in text.lines().zip(&rows) {
        if line.is_empty() {
            assert_eq!(row, &[""]);
        } else {
            assert_eq!(row.len(), 4);
            assert_eq!(row[..3].join(" "), line);
        }
    }
    // Text without tags: the same predictions, the tag column added.
    let untagged = tmp.path().join("text.txt");
    let words: String = text
        .lines()
        .map(|l| l.rsplit_once(' ').map_or(String::new(), |(w, _)| w.into()) + "\n")
        .collect();
    std::fs::write(&untagged, words).unwrap();
    let again = ok(&["predict", s(&model), s(&untagged)]);
    for (a, b) in tagged.lines().zip(again.lines()) {
        let (a, b): (Vec<&str>, Vec<&str>) = (a.split(' ').collect(), b.split(' ').collect());
        assert_eq!(a.first(), b.first());
        assert_eq!(a.last(), b.last());
    }
    // eval: the chunk measures of conlleval, recomputed here from predict's output.
    let e = json(&ok(&["eval", s(&model), s(&test), "--json"]));
    let (gold, pred): (Vec<Vec<String>>, Vec<Vec<String>>) = tagged
        .split("\n\n")
        .filter(|b| !b.trim().is_empty())
        .map(|b| {
            b.lines()
                .map(|l| {
                    let c: Vec<&str> = l.split(' ').collect();
                    (c[2].to_string(), c[3].to_string())
                })
                .unzip()
        })
        .unzip();
    let score = maxmargin::io::conll::chunk_score(&gold, &pred);
    assert_eq!(e["chunk_f1"].as_f64(), Some(score.f1));
    assert_eq!(e["chunk_precision"].as_f64(), Some(score.precision));
    assert_eq!(e["chunk_recall"].as_f64(), Some(score.recall));
    // conlleval's table per chunk type: the same counts split by type, each row recomputed here.
    let by_type = maxmargin::io::conll::chunk_score_by_type(&gold, &pred);
    let rows = e["per_type"].as_object().unwrap();
    assert_eq!(rows.len(), by_type.len());
    assert!(
        rows.contains_key("NP") && rows.contains_key("VP"),
        "{rows:?}"
    );
    let mut support = 0;
    for (kind, want) in &by_type {
        let row = &rows[kind.as_str()];
        assert_eq!(row["f1"].as_f64(), Some(want.f1), "{kind}");
        assert_eq!(row["precision"].as_f64(), Some(want.precision), "{kind}");
        assert_eq!(row["recall"].as_f64(), Some(want.recall), "{kind}");
        assert_eq!(row["support"].as_u64(), Some(want.gold as u64), "{kind}");
        support += want.gold;
    }
    assert_eq!(e["gold_chunks"].as_u64(), Some(support as u64));
    let right = gold
        .iter()
        .flatten()
        .zip(pred.iter().flatten())
        .filter(|(a, b)| a == b)
        .count();
    assert_eq!(e["token_accuracy"].as_f64(), Some(right as f64 / 2279.0));
    assert_eq!(e["sentences"].as_u64(), Some(100));
    // 300 training sentences already chunk most of the test text right.
    assert!(score.f1 > 0.8, "{score:?}");
    let table = ok(&["eval", s(&model), s(&test)]);
    assert!(
        table.contains("chunk F1") && table.contains("token accuracy"),
        "{table}"
    );
    let np = table
        .lines()
        .find(|l| l.trim_start().starts_with("NP "))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(np.contains(&format!("{:.6}", by_type["NP"].f1)), "{np}");
}

/// Part-of-speech tags are not chunks: `eval` reports token accuracy and says why there is no chunk score
/// (it printed "chunk F1 0.000" before), and `--json` has no chunk keys.
#[test]
fn part_of_speech_tags_are_scored_by_token_accuracy() {
    let tmp = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for i in 0..30 {
        let (det, noun, verb) = (
            ["the", "a"][i % 2],
            ["dog", "cat", "bird"][i % 3],
            ["runs", "sleeps"][i % 2],
        );
        text.push_str(&format!("{det} DT\n{noun} NN\n{verb} VBZ\n. .\n\n"));
    }
    let train = tmp.path().join("pos.txt");
    std::fs::write(&train, &text).unwrap();
    let model = tmp.path().join("pos.mm");
    let said = super::ok_stderr(&[
        "train",
        s(&train),
        "--task",
        "chain",
        "--format",
        "conll",
        "--max-passes",
        "10",
        "-o",
        s(&model),
    ]);
    // The templates used are said, and why: one input column (the word) picks the ner templates.
    assert!(
        said.contains("templates: ner,") && said.contains("chosen for 1 input column:"),
        "{said}"
    );
    let e = json(&ok(&["eval", s(&model), s(&train), "--json"]));
    assert_eq!(e["token_accuracy"].as_f64(), Some(1.0), "{e}");
    for key in ["chunk_f1", "chunk_precision", "gold_chunks", "per_type"] {
        assert!(e.get(key).is_none(), "{key} in {e}");
    }
    let table = ok(&["eval", s(&model), s(&train)]);
    assert!(!table.contains("chunk F1"), "{table}");
    assert!(table.contains("not chunk tags"), "{table}");
}

#[test]
fn templates_from_a_file_and_unknown_tags_at_test_time() {
    let tmp = tempfile::tempdir().unwrap();
    let template = tmp.path().join("words.tpl");
    std::fs::write(
        &template,
        "# words and POS, CRF++ style\nU00:%x[0,0]\nU01:%x[-1,0]\nU02:%x[0,1]\nU03:%x[0,1]/%x[1,1]\nB\n",
    )
    .unwrap();
    let model = tmp.path().join("t.mm");
    ok(&[
        "train",
        s(&head("train.txt")),
        "--task",
        "chain",
        "--format",
        "conll",
        "--template",
        s(&template),
        "--max-passes",
        "5",
        "-o",
        s(&model),
        "-q",
    ]);
    // A tag training never saw is an error of the tagger, counted, not a refusal.
    let test = tmp.path().join("odd.txt");
    std::fs::write(&test, "He PRP B-XYZ\nran VBD B-VP\n\n").unwrap();
    let e = json(&ok(&["eval", s(&model), s(&test), "--json"]));
    assert_eq!(e["unknown_tags"].as_u64(), Some(1));
    assert!(e["token_accuracy"].as_f64().unwrap() <= 0.5);
    // ... but the objective needs every tag known, and says so.
    let err = fails(&["eval", s(&model), s(&test), "--lambda", "0.01"], 1);
    assert!(err.contains("never saw"), "{err}");
}

#[test]
fn conll_mistakes_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let train = head("train.txt");
    let out = tmp.path().join("m.mm");
    let base = ["train", s(&train), "-o", s(&out)];
    // --format conll is for chains; --template for conll; svm-hmm is not multiclass's format.
    let err = fails(&[&base[..], &["--format", "conll"]].concat(), 1);
    assert!(
        err.contains("--format conll applies to --task chain"),
        "{err}"
    );
    let err = fails(
        &[&base[..], &["--task", "chain", "--template", "ner"]].concat(),
        1,
    );
    assert!(
        err.contains("--template applies to --format conll"),
        "{err}"
    );
    let err = fails(
        &[&base[..], &["--task", "multiclass", "--format", "svm-hmm"]].concat(),
        1,
    );
    assert!(err.contains("reads libsvm data"), "{err}");
    // A bad template line is named by file, line and column.
    let bad = tmp.path().join("bad.tpl");
    std::fs::write(&bad, "U00:%x[0,0]\nU01:%y[0,0]\n").unwrap();
    let conll = ["--task", "chain", "--format", "conll", "--template"];
    let err = fails(&[&base[..], &conll[..], &[s(&bad)]].concat(), 1);
    assert!(
        err.contains("bad.tpl:2:5: template: unknown macro %y"),
        "{err}"
    );
    let err = fails(&[&base[..], &conll[..], &["nonesuch"]].concat(), 1);
    assert!(
        err.contains("not chunking, ner or an existing template file"),
        "{err}"
    );
    // A template reading a column the data does not have.
    let wide = tmp.path().join("wide.tpl");
    std::fs::write(&wide, "U00:%x[0,5]\n").unwrap();
    let err = fails(&[&base[..], &conll[..], &[s(&wide)]].concat(), 1);
    assert!(
        err.contains("reads 6 input columns, the data has 2"),
        "{err}"
    );
    // Text with a column count the tagger cannot read.
    let model = tmp.path().join("t.mm");
    ok(&[
        "train",
        s(&train),
        "--task",
        "chain",
        "--format",
        "conll",
        "--max-passes",
        "1",
        "-o",
        s(&model),
        "-q",
    ]);
    let odd = tmp.path().join("odd.txt");
    std::fs::write(&odd, "a b c d e\n").unwrap();
    let err = fails(&["predict", s(&model), s(&odd)], 1);
    assert!(
        err.contains("odd.txt:1:1: columns: expected 2 input columns"),
        "{err}"
    );
    let words = tmp.path().join("words.txt");
    std::fs::write(&words, "He PRP\n").unwrap();
    let err = fails(&["eval", s(&model), s(&words)], 1);
    assert!(err.contains("eval needs the tag column"), "{err}");
    let err = fails(&["predict", s(&model), s(&words), "--scores"], 1);
    assert!(err.contains("is a tagger"), "{err}");
}

/// The guide's tour's chunking command (docs/guide/src/tour.md) on the whole of CoNLL-2000 reaches CRFsuite's chunk F1 (0.932).
#[test]
fn the_readme_chunker_reaches_crfsuites_f1() {
    let Some(data) = shared_data() else { return };
    let dir = data.join("conll2000");
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("chunker.mm");
    ok(&[
        "train",
        s(&dir.join("train.txt.gz")),
        "--task",
        "chain",
        "--format",
        "conll",
        "--lambda",
        "1e-3",
        "--max-passes",
        "10",
        "-o",
        s(&model),
        "-q",
    ]);
    let e = json(&ok(&[
        "eval",
        s(&model),
        s(&dir.join("test.txt.gz")),
        "--json",
    ]));
    let f1 = e["chunk_f1"].as_f64().unwrap();
    assert!(f1 >= 0.932, "chunk F1 {f1}");
}

/// A CoNLL-2003 layout (word POS chunk NER, `-DOCSTART-` lines, IOB1 tags) with the `ner` templates: trains,
/// tags the text back, and scores entities by conlleval's rules.
#[test]
fn ner_layout_with_docstart_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let people = ["Peter", "Maria", "John", "Anna"];
    let places = ["Berlin", "Paris", "Rome", "Oslo"];
    let mut text = String::from("-DOCSTART- -X- -X- O\n\n");
    for i in 0..40 {
        let (p, c) = (people[i % 4], places[(i / 4) % 4]);
        text.push_str(&format!(
            "{p} NNP B-NP I-PER\nvisited VBD B-VP O\n{c} NNP B-NP I-LOC\n. . O O\n\n"
        ));
        if i % 10 == 9 {
            text.push_str("-DOCSTART- -X- -X- O\n\n");
        }
    }
    let train = tmp.path().join("ner.txt");
    std::fs::write(&train, &text).unwrap();
    let model = tmp.path().join("ner.mm");
    ok(&[
        "train",
        s(&train),
        "--task",
        "chain",
        "--format",
        "conll",
        "--template",
        "ner",
        "--max-passes",
        "20",
        "-o",
        s(&model),
        "-q",
    ]);
    let e = json(&ok(&["eval", s(&model), s(&train), "--json"]));
    assert_eq!(e["sentences"].as_u64(), Some(40));
    assert_eq!(
        e["gold_chunks"].as_u64(),
        Some(80),
        "two entities a sentence"
    );
    assert_eq!(e["chunk_f1"].as_f64(), Some(1.0));
    for kind in ["PER", "LOC"] {
        assert_eq!(e["per_type"][kind]["support"].as_u64(), Some(40), "{e}");
        assert_eq!(e["per_type"][kind]["f1"].as_f64(), Some(1.0), "{e}");
    }
    // The output is the input line for line, `-DOCSTART-` and blank lines included, each token's line
    // with its predicted tag appended.
    let tagged = ok(&["predict", s(&model), s(&train)]);
    let input = std::fs::read_to_string(&train).unwrap();
    assert_eq!(tagged.lines().count(), input.lines().count(), "{tagged}");
    assert!(tagged.starts_with("-DOCSTART- -X- -X- O O\n\n"), "{tagged}");
    assert!(
        tagged.lines().nth(2).unwrap().ends_with("I-PER I-PER"),
        "{tagged}"
    );
}

/// Issue 23, a first workflow: `eval` and `predict` take the `--format` train took (it was "unexpected
/// argument"), and refuse one the model does not read.
#[test]
fn issue_23_eval_and_predict_take_the_format_train_took() {
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("chunker.mm");
    let (train, test) = (head("train.txt"), head("test.txt"));
    ok(&[
        "train",
        s(&train),
        "--task",
        "chain",
        "--format",
        "conll",
        "--max-passes",
        "3",
        "-o",
        s(&model),
        "-q",
    ]);
    let with = ok(&["eval", s(&model), s(&test), "--format", "conll", "--json"]);
    assert_eq!(with, ok(&["eval", s(&model), s(&test), "--json"]));
    assert_eq!(
        ok(&["predict", s(&model), s(&test), "--format", "conll"]),
        ok(&["predict", s(&model), s(&test)])
    );
    let err = fails(&["eval", s(&model), s(&test), "--format", "libsvm"], 1);
    assert!(
        err.contains("model reads conll data, not --format libsvm"),
        "{err}"
    );
}

/// Issue 28: the averaged structured perceptron as the fast baseline: it converges when a pass makes no
/// mistake, says it has no certificate, and refuses the flags of a certificate by name.
#[test]
fn the_perceptron_chunks_as_the_baseline_and_refuses_certificate_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("perceptron.mm");
    let (train, test) = (head("train.txt"), head("test.txt"));
    let said = ok_stderr(&[
        "train",
        s(&train),
        "--task",
        "chain",
        "--format",
        "conll",
        "--solver",
        "perceptron",
        "-o",
        s(&model),
    ]);
    // The training sentences are separated within the default 100 passes; no gap is claimed.
    assert!(
        said.contains("stop: converged") && said.contains("gap -"),
        "{said}"
    );
    let e = json(&ok(&["eval", s(&model), s(&test), "--json"]));
    assert!(e["chunk_f1"].as_f64().unwrap() > 0.85, "{e}");
    for flag in [
        &["--gap", "0.1"][..],
        &["--epsilon", "0.1"],
        &["--keep-best"],
    ] {
        let mut args = vec![
            "train",
            s(&train),
            "--task",
            "chain",
            "--format",
            "conll",
            "--solver",
            "perceptron",
            "-o",
            s(&model),
        ];
        args.extend_from_slice(flag);
        let err = fails(&args, 1);
        assert!(
            err.contains(flag[0]) && err.contains("no certificate"),
            "{err}"
        );
    }
}

/// `--min-count N` keeps the features seen at least N times: a smaller dictionary and model file, still a
/// chunker; other formats refuse it.
#[test]
fn min_count_prunes_rare_features() {
    let tmp = tempfile::tempdir().unwrap();
    let (train, test) = (head("train.txt"), head("test.txt"));
    let features = |said: &str| -> usize {
        let line = said
            .lines()
            .find(|l| l.starts_with("templates:"))
            .unwrap_or_else(|| panic!("{said}"));
        line.split("; ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let mut sizes = Vec::new();
    let mut counts = Vec::new();
    for n in ["1", "3"] {
        let model = tmp.path().join(format!("c{n}.mm"));
        let said = ok_stderr(&[
            "train",
            s(&train),
            "--task",
            "chain",
            "--format",
            "conll",
            "--min-count",
            n,
            "--lambda",
            "1e-3",
            "--max-passes",
            "10",
            "-o",
            s(&model),
        ]);
        counts.push(features(&said));
        sizes.push(std::fs::metadata(&model).unwrap().len());
        let e = json(&ok(&["eval", s(&model), s(&test), "--json"]));
        assert!(
            e["chunk_f1"].as_f64().unwrap() > 0.8,
            "--min-count {n}: {e}"
        );
    }
    assert!(counts[1] * 2 < counts[0], "{counts:?}");
    assert!(sizes[1] * 2 < sizes[0], "{sizes:?}");
    let iris = tmp.path().join("iris.svm");
    std::fs::write(&iris, maxmargin::datasets::IRIS).unwrap();
    let out = tmp.path().join("m.model");
    let err = fails(
        &[
            "train",
            s(&iris),
            "--task",
            "multiclass",
            "--min-count",
            "2",
            "-o",
            s(&out),
        ],
        1,
    );
    assert!(
        err.contains("--min-count applies to --format conll"),
        "{err}"
    );
}

/// CRF++'s bigram templates with macros (`B` lines naming cells): observation-dependent transitions, one
/// weight per feature and tag pair; the model keeps them and predicts with them after a reload.
#[test]
fn bigram_templates_score_transitions_by_observation() {
    let tmp = tempfile::tempdir().unwrap();
    let (train, test) = (head("train.txt"), head("test.txt"));
    let template = tmp.path().join("b.tpl");
    std::fs::write(
        &template,
        "U00:%x[0,0]\nU01:%x[0,1]\nU02:%x[-1,1]\nB\nB10:%x[0,1]\nB11:%x[-1,1]/%x[0,1]\n",
    )
    .unwrap();
    let model = tmp.path().join("b.mm");
    let said = ok_stderr(&[
        "train",
        s(&train),
        "--task",
        "chain",
        "--format",
        "conll",
        "--template",
        s(&template),
        "--lambda",
        "1e-3",
        "--max-passes",
        "10",
        "-o",
        s(&model),
    ]);
    assert!(
        said.contains("3 patterns and 2 bigram") && said.contains("transition weights"),
        "{said}"
    );
    let e = json(&ok(&["eval", s(&model), s(&test), "--json"]));
    assert!(e["chunk_f1"].as_f64().unwrap() > 0.8, "{e}");
    let tagged = ok(&["predict", s(&model), s(&test)]);
    assert!(
        tagged.lines().any(|l| l.split(' ').count() == 4),
        "{tagged}"
    );
    // The same template without the bigram lines is a different, smaller model.
    let plain = tmp.path().join("plain.tpl");
    std::fs::write(&plain, "U00:%x[0,0]\nU01:%x[0,1]\nU02:%x[-1,1]\nB\n").unwrap();
    let small = tmp.path().join("p.mm");
    ok(&[
        "train",
        s(&train),
        "--task",
        "chain",
        "--format",
        "conll",
        "--template",
        s(&plain),
        "--lambda",
        "1e-3",
        "--max-passes",
        "10",
        "-o",
        s(&small),
        "-q",
    ]);
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    assert!(
        size(&small) < size(&model),
        "{} {}",
        size(&small),
        size(&model)
    );
}

/// `-w TAG=WEIGHT` on a tagger weights that tag's mistakes in the Hamming loss: a heavy weight on a chunk
/// type's tags makes the model find more of its chunks; unknown tags and the perceptron (no loss to weight)
/// are refused by name.
#[test]
fn tag_weights_make_a_tag_predicted_more() {
    let tmp = tempfile::tempdir().unwrap();
    let (train, test) = (head("train.txt"), head("test.txt"));
    let model = tmp.path().join("w.mm");
    let run = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec![
            "train",
            s(&train),
            "--task",
            "chain",
            "--format",
            "conll",
            "--lambda",
            "1e-3",
            "--max-passes",
            "10",
            "-o",
            s(&model),
            "-q",
        ];
        args.extend_from_slice(extra);
        ok(&args);
        json(&ok(&[
            "eval",
            s(&model),
            s(&test),
            "--json",
            "--lambda",
            "1e-3",
        ]))
    };
    let plain = run(&[]);
    let weighted = run(&["-w", "B-VP=8", "-w", "I-VP=8"]);
    let vp = |e: &serde_json::Value, key: &str| e["per_type"]["VP"][key].as_f64().unwrap();
    assert!(
        vp(&weighted, "found") > vp(&plain, "found") + 20.0,
        "{plain}\n{weighted}"
    );
    // The objective is the weighted one the model trained on (its loss counts VP mistakes 8 times).
    assert!(weighted["objective"].as_f64().unwrap() > plain["objective"].as_f64().unwrap());
    let base = [
        "train",
        s(&train),
        "--task",
        "chain",
        "--format",
        "conll",
        "-o",
        s(&model),
    ];
    let err = fails(&[&base[..], &["-w", "B-XYZ=2"]].concat(), 1);
    assert!(
        err.contains("no tag \"B-XYZ\"") && err.contains("B-NP"),
        "{err}"
    );
    let err = fails(
        &[&base[..], &["-w", "B-NP=2", "--solver", "perceptron"]].concat(),
        1,
    );
    assert!(err.contains("perceptron"), "{err}");
    // svm_hmm chains name their tags by number (1-based).
    let seq = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/p1/iris-chain.svmhmm");
    let chain = ["train", s(&seq), "--task", "chain", "-o", s(&model), "-q"];
    ok(&[&chain[..], &["-w", "2=3", "--max-passes", "5"]].concat());
    let err = fails(&[&chain[..], &["-w", "99=3"]].concat(), 1);
    assert!(
        err.contains("names a tag the training data does not have"),
        "{err}"
    );
    let err = fails(&[&chain[..], &["-w", "B-NP=3"]].concat(), 1);
    assert!(err.contains("tag names apply to --format conll"), "{err}");
    let err = fails(&[&base[..], &["-w", "B-NP=2", "-w", "B-NP=3"]].concat(), 1);
    assert!(err.contains("twice"), "{err}");
}

/// `%v[r,c]` reads a column as numbers (embeddings, scores): the cell is the feature's value. A cell that is
/// not a number is named by file, line and column, in training and at test time.
#[test]
fn real_valued_columns_enter_as_values() {
    let tmp = tempfile::tempdir().unwrap();
    // Insert a numeric column (the word's length over 10) between the POS and chunk columns.
    let numeric = |from: &Path, to: &Path| {
        let text = std::fs::read_to_string(from).unwrap();
        let lines: Vec<String> = text
            .lines()
            .map(|l| {
                let c: Vec<&str> = l.split_whitespace().collect();
                if c.len() < 3 {
                    return l.to_string();
                }
                let v = c[0].chars().count() as f64 / 10.0;
                format!("{} {} {v} {}", c[0], c[1], c[2])
            })
            .collect();
        std::fs::write(to, lines.join("\n") + "\n").unwrap();
    };
    let (train, test) = (tmp.path().join("train.txt"), tmp.path().join("test.txt"));
    numeric(&head("train.txt"), &train);
    numeric(&head("test.txt"), &test);
    let template = tmp.path().join("v.tpl");
    std::fs::write(
        &template,
        "U00:%x[0,0]\nU01:%x[0,1]\nU02:%x[-1,1]\nUv0:%v[0,2]\nUv1:%x[0,1]/%v[0,2]\nB\n",
    )
    .unwrap();
    let model = tmp.path().join("v.mm");
    let train_args = [
        "train",
        s(&train),
        "--task",
        "chain",
        "--format",
        "conll",
        "--template",
        s(&template),
        "--max-passes",
        "10",
        "-o",
        s(&model),
        "-q",
    ];
    ok(&train_args);
    let e = json(&ok(&["eval", s(&model), s(&test), "--json"]));
    assert!(e["chunk_f1"].as_f64().unwrap() > 0.8, "{e}");
    // A cell that is not a number: named by line and column, at test time and in training.
    let text = std::fs::read_to_string(&test).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[4] = lines[4].replacen(" 0.", " x0.", 1).replacen(" 1", " x1", 1);
    let bad = tmp.path().join("bad.txt");
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    let err = fails(&["predict", s(&model), s(&bad)], 1);
    assert!(
        err.contains("bad.txt:5:3") && err.contains("not a finite number"),
        "{err}"
    );
    let mut args = train_args.to_vec();
    args[1] = s(&bad);
    let err = fails(&args, 1);
    assert!(err.contains("bad.txt:5:3"), "{err}");
}
