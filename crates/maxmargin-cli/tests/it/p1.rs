//! One process is P = 1: every solver's in-memory run gives the model bytes that the fixtures in
//! `tests/data/p1` hold, made by the release binary of the commit they name (`made-by.txt`), so that moving a
//! solver into a shared loop cannot change what users get unnoticed. A change of bits that is an improvement
//! is said in CHANGELOG with its measured objective, and the fixtures are made again:
//! `MAXMARGIN_BLESS=1 MAXMARGIN_P1_BIN=path/to/maxmargin cargo test -p maxmargin-cli --test it p1`.

use super::*;

/// Each run: the fixture's name, its data, and the flags after `train DATA -o MODEL`.
const RUNS: &[(&str, &str, &[&str])] = &[
    ("heart-dcd", "heart", &[]),
    ("heart-dcd-none", "heart", &["--bias", "none"]),
    (
        "heart-dcd-unregularized",
        "heart",
        &["--bias", "unregularized"],
    ),
    (
        "heart-dcd-squared",
        "heart",
        &["--solver", "dcd", "--loss", "squared-hinge"],
    ),
    (
        "heart-dcd-logistic",
        "heart",
        &["--solver", "dcd", "--loss", "logistic"],
    ),
    // More rows than features: a smooth loss is trained by Newton unless a solver is asked for.
    (
        "heart-newton-squared",
        "heart",
        &["--loss", "squared-hinge"],
    ),
    ("heart-newton-logistic", "heart", &["--loss", "logistic"]),
    (
        "heart-newton-unregularized",
        "heart",
        &[
            "--solver",
            "newton",
            "--loss",
            "logistic",
            "--bias",
            "unregularized",
        ],
    ),
    ("heart-dcd-blocks", "heart", &["--blocks", "3"]),
    ("heart-dcd-gap", "heart", &["-c", "10", "--gap", "1e-4"]),
    (
        "heart-pegasos",
        "heart",
        &["--solver", "pegasos", "--epochs", "20"],
    ),
    (
        "heart-subgradient",
        "heart",
        &["--solver", "subgradient", "--epochs", "20"],
    ),
    ("iris-cs", "iris", &["--task", "multiclass"]),
    (
        "iris-ovr",
        "iris",
        &["--task", "multiclass", "--solver", "ovr"],
    ),
    (
        "iris-bcfw",
        "iris",
        &[
            "--task",
            "multiclass",
            "--solver",
            "bcfw",
            "--max-passes",
            "50",
        ],
    ),
    (
        "iris-ssg",
        "iris",
        &[
            "--task",
            "multiclass",
            "--solver",
            "ssg",
            "--max-passes",
            "50",
        ],
    ),
    (
        "iris-oneslack",
        "iris",
        &["--task", "multiclass", "--solver", "oneslack"],
    ),
    (
        "iris-nslack",
        "iris",
        &[
            "--task",
            "multiclass",
            "--solver",
            "nslack",
            "--max-passes",
            "50",
        ],
    ),
    (
        "chain-bcfw",
        "chain",
        &["--task", "chain", "--max-passes", "20"],
    ),
    (
        "chain-ssg",
        "chain",
        &["--task", "chain", "--solver", "ssg", "--max-passes", "20"],
    ),
    (
        "chain-oneslack",
        "chain",
        &[
            "--task",
            "chain",
            "--solver",
            "oneslack",
            "--max-passes",
            "20",
        ],
    ),
    (
        "multilabel-bcfw",
        "multilabel",
        &["--task", "multilabel", "--max-passes", "20"],
    ),
    (
        "multilabel-nslack",
        "multilabel",
        &[
            "--task",
            "multilabel",
            "--solver",
            "nslack",
            "--max-passes",
            "20",
        ],
    ),
];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/p1")
}

/// The data file of `name` in `dir`.
fn data(dir: &Path, name: &str) -> PathBuf {
    match name {
        "heart" => heart(dir),
        "iris" => {
            let p = dir.join("iris.svm");
            std::fs::write(&p, maxmargin::datasets::IRIS).unwrap();
            p
        }
        "chain" => fixtures().join("iris-chain.svmhmm"),
        _ => fixtures().join("iris-multilabel.svm"),
    }
}

#[test]
fn in_memory_runs_give_the_fixtures_model_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let bless = std::env::var_os("MAXMARGIN_BLESS").is_some();
    let maker = std::env::var_os("MAXMARGIN_P1_BIN");
    let mut differ = Vec::new();
    for (name, source, flags) in RUNS {
        let file = data(dir.path(), source);
        let model = dir.path().join(format!("{name}.model"));
        let mut args = vec!["train", s(&file), "-o", s(&model), "-q"];
        args.extend_from_slice(flags);
        let fixture = fixtures().join(format!("{name}.model"));
        if bless && let Some(bin) = &maker {
            let out = Command::new(bin).args(&args).output().unwrap();
            assert!(out.status.success(), "{name}: {out:?}");
            std::fs::copy(&model, &fixture).unwrap();
            continue;
        }
        ok(&args);
        let (made, kept) = (std::fs::read(&model).unwrap(), std::fs::read(&fixture));
        // The header's format version (bytes 8..12) says how checkpoints are laid out, not the model.
        let payload = |b: &[u8]| [&b[..8.min(b.len())], b.get(12..).unwrap_or_default()].concat();
        // Format 7 added the structured parameters' rescaling: a structured fixture of format 6 is the same
        // model when it decodes (upgraded to margin rescaling) to what this run made.
        let same_model = || {
            use maxmargin::structured_svm::StructuredModel;
            matches!(
                (StructuredModel::load(&fixture), StructuredModel::load(&model)),
                (Ok(a), Ok(b)) if a == b
            )
        };
        if kept.as_deref().ok().map(payload) != Some(payload(&made)) && !same_model() {
            differ.push(*name);
        }
    }
    assert!(
        differ.is_empty(),
        "other model bytes than the fixtures: {differ:?}"
    );
}

/// A trace only watches: with `--trace` (evaluations every 5 passes) a run stops where the untraced run
/// (every 20) does and saves the same bytes. On iris the n-slack cutting planes had stopped at pass 10
/// instead of 11, and one-vs-rest at 31 full passes instead of 55.
#[test]
fn a_trace_does_not_change_where_a_run_stops() {
    let tmp = tempfile::tempdir().unwrap();
    let iris = data(tmp.path(), "iris");
    for solver in ["nslack", "ovr"] {
        let trace = tmp.path().join(format!("{solver}.jsonl"));
        let mut models = Vec::new();
        for traced in [false, true] {
            let model = tmp.path().join(format!("{solver}{traced}.json"));
            let mut args = vec![
                "train",
                "--task",
                "multiclass",
                s(&iris),
                "-o",
                s(&model),
                "--solver",
                solver,
                "--scale",
                "maxabs",
                "--threads",
                "1",
                "--quiet",
            ];
            if traced {
                args.extend(["--trace", s(&trace)]);
            }
            ok(&args);
            models.push(std::fs::read(&model).unwrap());
        }
        assert!(
            models[0] == models[1],
            "{solver}: --trace changed the model"
        );
        let text = std::fs::read_to_string(&trace).unwrap();
        assert!(text.lines().count() >= 2, "{solver}: {text}");
    }
}
