//! `train --task chain --latent-states K`: tags that run in a period of four, which a first-order chain's
//! transitions cannot follow, are followed by two latent states per tag; predict and eval read the model;
//! what cannot apply is refused by name.

use super::*;

/// `n` generated periodic-tag sequences (`datasets::periodic_tags`) written to `dir/name`.
pub(super) fn write(dir: &Path, name: &str, n: usize, seed: u64) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, maxmargin::datasets::periodic_tags(n, 20, 0.3, seed)).unwrap();
    path
}

/// `eval --json`'s token accuracy of a model on a file.
pub(super) fn token_accuracy(model: &Path, data: &Path) -> f64 {
    let out = ok(&["eval", s(model), s(data), "--json"]);
    let e: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    1.0 - e["token_error"].as_f64().unwrap_or_else(|| panic!("{out}"))
}

#[test]
fn two_states_per_tag_follow_a_period_a_chain_cannot() {
    let tmp = tempfile::tempdir().unwrap();
    let (train, test) = (
        write(tmp.path(), "train.dat", 200, 1),
        write(tmp.path(), "test.dat", 300, 2),
    );
    let (plain, latent) = (
        tmp.path().join("plain.model"),
        tmp.path().join("latent.json"),
    );
    let base = [
        "train",
        s(&train),
        "--task",
        "chain",
        "--lambda",
        "0.01",
        "-q",
    ];
    ok(&[&base[..], &["-o", s(&plain)]].concat());
    let said = ok_stderr(
        &[
            &base[..3],
            &base[3..6],
            &["--latent-states", "2", "-o", s(&latent)],
        ]
        .concat(),
    );
    assert!(said.contains("latent: 2 tags of 2 states"), "{said}");
    let (a, b) = (
        token_accuracy(&plain, &test),
        token_accuracy(&latent, &test),
    );
    assert!(b > a + 0.1, "plain {a}, latent {b}");
    // One tag per token, 1-based, as the file has them; the latent objective with --lambda.
    let lines = ok(&["predict", s(&latent), s(&test), "--format", "svm-hmm"]);
    assert_eq!(lines.lines().count(), 300 * 20);
    assert!(lines.lines().all(|l| l == "1" || l == "2"), "{lines}");
    let e = ok(&["eval", s(&latent), s(&test), "--lambda", "0.01"]);
    assert!(e.contains("objective"), "{e}");
    // The same seed, the same model.
    let again = tmp.path().join("again.json");
    ok(&[&base[..], &["--latent-states", "2", "-o", s(&again)]].concat());
    assert_eq!(
        std::fs::read(&again).unwrap(),
        std::fs::read(&latent).unwrap()
    );
}

#[test]
fn latent_states_are_refused_where_they_cannot_apply() {
    let tmp = tempfile::tempdir().unwrap();
    let train = write(tmp.path(), "train.dat", 20, 1);
    let out = tmp.path().join("m.model");
    let o = s(&out);
    let ckpt = tmp.path().join("rounds.ckpt");
    let cases: [(&[&str], &str); 7] = [
        (&["--task", "multiclass"], "applies to --task chain"),
        (&["--task", "chain", "--latent-states", "0"], "at least 1"),
        (&["--task", "chain", "--latent-states", "65"], "at most 64"),
        (
            &["--task", "chain", "-w", "3=2"],
            "names a tag the training data does not have",
        ),
        (
            &[
                "--task",
                "chain",
                "--checkpoint-every",
                "5",
                "--checkpoint",
                s(&ckpt),
            ],
            "after every round",
        ),
        (&["--task", "chain", "--rescaling", "slack"], "slack"),
        (&[], "not to --task binary"),
    ];
    for (flags, says) in cases {
        let mut args = vec!["train", s(&train), "-o", o];
        if !flags.contains(&"--latent-states") {
            args.extend(["--latent-states", "2"]);
        }
        args.extend_from_slice(flags);
        let err = fails(&args, 1);
        assert!(err.contains(says), "{flags:?}: {err}");
    }
    assert!(!out.exists());
    let cv = ok(&[
        "cv",
        s(&train),
        "--task",
        "chain",
        "--latent-states",
        "2",
        "--folds",
        "2",
        "--json",
    ]);
    let cv: serde_json::Value = serde_json::from_str(cv.trim()).unwrap();
    assert_eq!(cv["metric"].as_str(), Some("token_accuracy"), "{cv}");
    assert!(cv["mean"].as_f64().unwrap() > 0.5, "{cv}");
    ok(&[
        "train",
        s(&train),
        "--task",
        "chain",
        "--latent-states",
        "2",
        "-o",
        o,
        "-q",
    ]);
    let err = fails(&["predict", o, s(&train), "--scores"], 1);
    assert!(err.contains("chain-latent"), "{err}");
}

/// `--checkpoint` writes where the latent rounds stand; `--resume` gives the same model bits; tag weights
/// train and are reported in eval's objective.
#[test]
fn latent_rounds_resume_from_their_checkpoint() {
    let tmp = tempfile::tempdir().unwrap();
    let train = write(tmp.path(), "train.dat", 40, 3);
    let (a, b, ckpt) = (
        tmp.path().join("a.mm"),
        tmp.path().join("b.mm"),
        tmp.path().join("rounds.ckpt"),
    );
    let base = [
        "train",
        s(&train),
        "--task",
        "chain",
        "--latent-states",
        "2",
        "-q",
    ];
    ok(&[&base[..], &["-o", s(&a), "--checkpoint", s(&ckpt)]].concat());
    ok(&[&base[..], &["-o", s(&b), "--resume", s(&ckpt)]].concat());
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let err = fails(
        &[
            &base[..],
            &["--seed", "9", "-o", s(&b), "--resume", s(&ckpt)],
        ]
        .concat(),
        1,
    );
    assert!(err.contains("seed"), "{err}");
    ok(&[&base[..], &["-w", "2=3", "-o", s(&b)]].concat());
    let e = ok(&["eval", s(&b), s(&train), "--lambda", "0.01"]);
    assert!(e.contains("objective"), "{e}");
}

/// `train --format conll --latent-states K`: a tagger whose tags each have latent states, read back by
/// `predict` and `eval` (kind `chain-conll-latent`); bigram template lines are refused with it.
#[test]
fn a_tagger_with_latent_states_tags_and_scores_chunks() {
    let tmp = tempfile::tempdir().unwrap();
    let head = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/conll2000-head");
    let (train, test) = (head.join("train.txt"), head.join("test.txt"));
    let model = tmp.path().join("latent-tagger.mm");
    let base = ["train", s(&train), "--task", "chain", "--format", "conll"];
    let said = ok_stderr(
        &[
            &base[..],
            &["--latent-states", "2", "--max-passes", "3", "-o", s(&model)],
        ]
        .concat(),
    );
    assert!(said.contains("latent: 19 tags of 2 states"), "{said}");
    let header = maxmargin::io::model_file::read_header(&model).unwrap();
    assert_eq!(header.kind, "chain-conll-latent");
    let e = ok(&["eval", s(&model), s(&test), "--json", "--lambda", "0.01"]);
    let e: serde_json::Value = serde_json::from_str(e.trim()).unwrap();
    assert!(e["chunk_f1"].as_f64().unwrap() > 0.8, "{e}");
    assert!(e["objective"].as_f64().is_some(), "{e}");
    let tagged = ok(&["predict", s(&model), s(&test)]);
    assert!(tagged.lines().any(|l| l.ends_with(" B-NP")), "{tagged}");
    let template = tmp.path().join("bigram.txt");
    std::fs::write(&template, "U00:%x[0,0]\nB01:%x[0,1]\n").unwrap();
    let err = fails(
        &[
            &base[..],
            &[
                "--template",
                s(&template),
                "--latent-states",
                "2",
                "-o",
                s(&model),
            ],
        ]
        .concat(),
        1,
    );
    assert!(
        err.contains("apply to templates of U lines and a plain B line only"),
        "{err}"
    );
}
