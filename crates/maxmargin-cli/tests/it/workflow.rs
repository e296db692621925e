//! The guide's decision workflow on a9a, run as a user runs it: C chosen by cross-validation on the
//! training file, the held-out file split into a development half and a sealed test half, calibration and a
//! threshold on the development half, one evaluation on the sealed half. What the commands print is
//! `docs/guide/src/generated/a9a_workflow.txt`, which the guide includes; this test fails when they differ
//! (`MAXMARGIN_BLESS=1` rewrites it). Model bytes are reproducible, so the numbers are too.

use super::shared_data;
use std::io::{BufRead, Write};
use std::path::Path;
use std::process::Command;

/// Runs the command in `dir` with relative paths; returns `$ command` then what it printed (stdout, then
/// stderr), as a user sees it.
fn run(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_maxmargin"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the binary runs");
    assert!(
        out.status.success(),
        "maxmargin {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    format!(
        "$ maxmargin {}\n{}{}",
        args.join(" "),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap()
    )
}

#[test]
fn the_guides_a9a_workflow_prints_what_the_guide_shows() {
    let Some(data) = shared_data() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::copy(data.join("a9a/a9a.gz"), dir.join("a9a.gz")).unwrap();
    // The held-out file, split as the guide's awk lines do: odd lines develop, even lines stay sealed.
    let held =
        flate2::read::MultiGzDecoder::new(std::fs::File::open(data.join("a9a/a9a.t.gz")).unwrap());
    let (mut dev, mut test) = (
        std::fs::File::create(dir.join("dev.svm")).unwrap(),
        std::fs::File::create(dir.join("test.svm")).unwrap(),
    );
    for (i, line) in std::io::BufReader::new(held).lines().enumerate() {
        let target = if i % 2 == 0 { &mut dev } else { &mut test };
        writeln!(target, "{}", line.unwrap()).unwrap();
    }
    let mut text = String::new();
    for args in [
        &[
            "cv",
            "a9a.gz",
            "-k",
            "5",
            "--c-path",
            "0.01,0.1,1,10",
            "--metric",
            "roc_auc",
            "--pos-label",
            "1",
            "--refit",
            "-o",
            "a9a.model",
        ][..],
        &["calibrate", "a9a.model", "dev.svm", "-o", "a9a.cal.model"],
        &[
            "threshold",
            "a9a.cal.model",
            "dev.svm",
            "--max-flag-rate",
            "0.1",
            "-o",
            "a9a.dec.model",
        ],
        &[
            "threshold",
            "a9a.cal.model",
            "dev.svm",
            "--at",
            "0.8",
            "-o",
            "a9a.hand.model",
        ],
        &["eval", "a9a.dec.model", "test.svm"],
    ] {
        text.push_str(&run(dir, args));
        text.push('\n');
    }
    same_as_the_guide(
        "a9a_workflow.txt",
        &text,
        "the guide's workflow output differs from what the commands print now",
    );
}

/// The guide's CSV workflow on heart (embedded, so it always runs): a header names the features and the
/// label column, the model keeps the names, `inspect` shows them, and new rows are matched by name.
#[test]
fn the_guides_csv_workflow_prints_what_the_guide_shows() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let data = maxmargin::datasets::heart_scale().unwrap();
    let names = [
        "age",
        "sex",
        "chest_pain",
        "rest_bp",
        "cholesterol",
        "sugar",
        "ecg",
        "max_rate",
        "angina",
        "st_depression",
        "slope",
        "vessels",
        "thal",
    ];
    let mut csv = format!("{},diagnosis\n", names.join(","));
    for (i, row) in data.x.rows().enumerate() {
        let mut v = vec![0.0; names.len()];
        row.iter().for_each(|(j, x)| v[j] = x);
        let cells: Vec<String> = v.iter().map(|x| format!("{x}")).collect();
        csv.push_str(&format!("{},{}\n", cells.join(","), data.labels[i]));
    }
    let lines: Vec<&str> = csv.lines().collect();
    let header = lines[0];
    std::fs::write(dir.join("train.csv"), lines[..201].join("\n") + "\n").unwrap();
    std::fs::write(
        dir.join("dev.csv"),
        format!("{header}\n{}\n", lines[201..].join("\n")),
    )
    .unwrap();
    let mut text = String::new();
    for args in [
        &[
            "train",
            "train.csv",
            "--label-column",
            "diagnosis",
            "--pos-label",
            "1",
            "-o",
            "heart.model",
        ][..],
        &[
            "eval",
            "heart.model",
            "dev.csv",
            "--label-column",
            "diagnosis",
        ],
        &[
            "inspect",
            "heart.model",
            "dev.csv",
            "--label-column",
            "diagnosis",
            "--nearest",
            "3",
            "--top-features",
            "5",
        ],
        &[
            "threshold",
            "heart.model",
            "dev.csv",
            "--label-column",
            "diagnosis",
            "--at-score",
            "0.5",
            "-o",
            "heart.cut.model",
        ],
    ] {
        text.push_str(&run(dir, args));
        text.push('\n');
    }
    same_as_the_guide(
        "csv_workflow.txt",
        &text,
        "the guide's CSV workflow output differs from what the commands print now",
    );
}

/// Checks `text` against the guide's generated file `name` (`MAXMARGIN_BLESS=1` writes it instead).
pub(crate) fn same_as_the_guide(name: &str, text: &str, differs: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/guide/src/generated")
        .join(name);
    if std::env::var_os("MAXMARGIN_BLESS").is_some() {
        std::fs::write(&path, text).unwrap();
        return;
    }
    let on_disk = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (MAXMARGIN_BLESS=1 writes it)", path.display()));
    assert_eq!(on_disk, text, "{differs}");
}

/// The guide's "Choosing a model family": `compare` on breast-cancer (every other row trains, the rest
/// develop), its measures that do not depend on the machine (timings do, and are left out) written to
/// `docs/guide/src/generated/compare_breast_cancer.txt`.
#[test]
fn the_guides_model_family_comparison_prints_what_the_guide_shows() {
    let Some(data) = shared_data() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let all =
        std::fs::read_to_string(data.join("breast-cancer_scale/breast-cancer_scale")).unwrap();
    let (mut train, mut dev) = (String::new(), String::new());
    for (i, line) in all.lines().enumerate() {
        let target = if i % 2 == 0 { &mut train } else { &mut dev };
        target.push_str(line);
        target.push('\n');
    }
    std::fs::write(dir.join("train.svm"), train).unwrap();
    std::fs::write(dir.join("dev.svm"), dev).unwrap();
    let args = [
        "compare",
        "train.svm",
        "dev.svm",
        "--families",
        "linear,logistic,rbf,nystroem,rff",
        "--json",
    ];
    let out = Command::new(env!("CARGO_BIN_EXE_maxmargin"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Disjoint halves: no warning that the development rows were trained on.
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("also training rows"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut text = format!(
        "$ maxmargin {}   (the measures below; fit seconds and latency vary by machine)\n",
        args[..5].join(" ")
    );
    text.push_str(&format!(
        "{} training rows; development: {} calibrate, {} measure; gamma = scale is {:.4e}\n",
        c["train_rows"],
        c["calibration_rows"],
        c["evaluation_rows"],
        c["gamma_scale"].as_f64().unwrap()
    ));
    text.push_str(
        "family      C      gamma  cv_auc  roc_auc  avg_prec   brier  accuracy  support  bytes\n",
    );
    for f in c["families"].as_array().unwrap() {
        let num = |k: &str| f[k].as_f64().unwrap_or(f64::NAN);
        text.push_str(&format!(
            "{:<9} {:>4} {:>10} {:>7.4} {:>8.4} {:>9.4} {:>7.4} {:>9.4} {:>8} {:>6}\n",
            f["family"].as_str().unwrap(),
            num("c"),
            f["gamma"]
                .as_f64()
                .map_or("-".into(), |g| format!("{g:.3e}")),
            num("cv_roc_auc"),
            num("roc_auc"),
            num("average_precision"),
            num("brier"),
            num("accuracy"),
            f["support_vectors"]
                .as_u64()
                .map_or("-".into(), |v| v.to_string()),
            f["model_bytes"],
        ));
    }
    let wins: Vec<String> = c["wins"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| !matches!(w["measure"].as_str(), Some("p99_us" | "fit_seconds")))
        .map(|w| {
            format!(
                "{} {}",
                w["measure"].as_str().unwrap(),
                w["family"].as_str().unwrap()
            )
        })
        .collect();
    text.push_str(&format!("wins: {}\n", wins.join("; ")));
    same_as_the_guide(
        "compare_breast_cancer.txt",
        &text,
        "the guide's comparison differs from what compare prints now",
    );
}

/// `compare TRAIN TRAIN` (or a split that leaked) measures the families on rows they were fitted to: it says so.
#[test]
fn compare_warns_when_the_development_rows_are_training_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let rows: String = (0..40)
        .map(|i| {
            let y = if i % 2 == 0 { 1 } else { -1 };
            format!(
                "{y} 1:{} 2:{}\n",
                f64::from(y) * (1.0 + f64::from(i) / 40.0),
                f64::from(i % 7)
            )
        })
        .collect();
    std::fs::write(dir.join("train.svm"), &rows).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_maxmargin"))
        .args(["compare", "train.svm", "train.svm", "--families", "linear"])
        .current_dir(dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("warning: 40 of the 40 development rows of train.svm are also training rows of train.svm"),
        "{err}"
    );
    // A kernel flag with no kernel family to apply it to is refused, not ignored.
    for (flag, value) in [("--components", "5"), ("--gamma-grid", "0.5")] {
        let out = Command::new(env!("CARGO_BIN_EXE_maxmargin"))
            .args([
                "compare",
                "train.svm",
                "train.svm",
                "--families",
                "linear",
                flag,
                value,
            ])
            .current_dir(dir)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{flag}: {err}");
        assert!(
            err.contains(&format!("{flag} applies to the")),
            "{flag}: {err}"
        );
    }
}
