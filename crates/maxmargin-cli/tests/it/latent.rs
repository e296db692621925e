//! `train --task multiclass --latent-subclasses S`: classes made of opposite clusters, which one linear
//! template per class cannot separate, are learned by two; predict and eval read the model; what cannot
//! apply is refused by name.

use super::*;

fn write(dir: &Path, name: &str, n: usize, seed: u64) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(
        &path,
        maxmargin::datasets::opposite_clusters(n, 3, 1.0, seed),
    )
    .unwrap();
    path
}

#[test]
fn two_templates_per_class_learn_classes_of_two_clusters() {
    let tmp = tempfile::tempdir().unwrap();
    let (train, test) = (
        write(tmp.path(), "train.svm", 300, 1),
        write(tmp.path(), "test.svm", 900, 2),
    );
    let (plain, latent) = (
        tmp.path().join("plain.model"),
        tmp.path().join("latent.json"),
    );
    ok(&[
        "train",
        s(&train),
        "--task",
        "multiclass",
        "--lambda",
        "0.01",
        "-o",
        s(&plain),
        "-q",
    ]);
    let args = [
        "train",
        s(&train),
        "--task",
        "multiclass",
        "--lambda",
        "0.01",
        "--latent-subclasses",
        "2",
    ];
    let out = ok_stderr(&[&args[..], &["-o", s(&latent)]].concat());
    assert!(out.contains("latent: 3 classes of 2 templates"), "{out}");
    let accuracy = |m: &Path| {
        let e: serde_json::Value =
            serde_json::from_str(&ok(&["eval", s(m), s(&test), "--json"])).unwrap();
        e["accuracy"].as_f64().unwrap()
    };
    let (a0, a1) = (accuracy(&plain), accuracy(&latent));
    assert!(a1 >= a0 + 0.10 && a1 > 0.95, "latent {a1} vs plain {a0}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&latent).unwrap()).unwrap();
    assert_eq!(v["kind"], "multiclass-latent");
    assert_eq!(v["stop"], "converged");
    let objectives: Vec<f64> = v["rounds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["objective"].as_f64().unwrap())
        .collect();
    assert!(
        objectives.windows(2).all(|p| p[1] <= p[0]),
        "{objectives:?}"
    );
    // eval's objective at the training λ is the model's latent objective.
    let e: serde_json::Value = serde_json::from_str(&ok(&[
        "eval",
        s(&latent),
        s(&train),
        "--json",
        "--lambda",
        "0.01",
    ]))
    .unwrap();
    let (a, b) = (
        e["objective"].as_f64().unwrap(),
        v["objective"].as_f64().unwrap(),
    );
    assert!((a - b).abs() <= 1e-9 * b, "{a} vs {b}");
    // predict: the class of the best class score.
    let text = ok(&["predict", s(&latent), s(&test), "--scores"]);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("# label score(0) score(1) score(2)"));
    for line in lines {
        let cols: Vec<f64> = line.split(' ').map(|c| c.parse().unwrap()).collect();
        let best = (1..4).max_by(|&a, &b| cols[a].total_cmp(&cols[b])).unwrap();
        assert_eq!(cols[0], (best - 1) as f64, "{line}");
    }
    let first = ok(&["predict", s(&latent), s(&test), "--json"]);
    assert!(
        first.lines().next().unwrap().starts_with("{\"label\":"),
        "{first}"
    );
    // The same seed, the same bytes.
    let again = tmp.path().join("again.json");
    ok(&[&args[..], &["-o", s(&again), "-q"]].concat());
    assert_eq!(
        std::fs::read(&again).unwrap(),
        std::fs::read(&latent).unwrap()
    );
}

#[test]
fn latent_subclasses_are_refused_where_they_cannot_apply() {
    let tmp = tempfile::tempdir().unwrap();
    let train = write(tmp.path(), "train.svm", 60, 1);
    let out = tmp.path().join("m.model");
    let o = s(&out);
    let cases: [(&[&str], &str); 5] = [
        (
            &["--task", "multiclass", "--solver", "ovr"],
            "dcd (Crammer-Singer), bcfw",
        ),
        (&["--task", "multilabel"], "--task multiclass in memory"),
        (
            &["--task", "multiclass", "--latent-subclasses", "0"],
            "at least 1",
        ),
        (&["--task", "multiclass", "--kernel", "rbf"], "kernels"),
        (&[], "not to --task binary"),
    ];
    for (flags, says) in cases {
        let mut args = vec!["train", s(&train), "-o", o];
        if !flags.contains(&"--latent-subclasses") {
            args.extend(["--latent-subclasses", "2"]);
        }
        args.extend_from_slice(flags);
        let err = fails(&args, 1);
        assert!(err.contains(says), "{flags:?}: {err}");
    }
    assert!(!out.exists());
    // Cross-validated and refit as latent models; the chains' flag is refused by name.
    let refit = tmp.path().join("refit.model");
    let cv = ok(&[
        "cv",
        s(&train),
        "--task",
        "multiclass",
        "--latent-subclasses",
        "2",
        "--folds",
        "3",
        "--json",
        "--refit",
        "-o",
        s(&refit),
    ]);
    let cv: serde_json::Value = serde_json::from_str(cv.trim()).unwrap();
    assert!(cv["mean"].as_f64().unwrap() > 0.9, "{cv}");
    assert!(ok(&["predict", s(&refit), s(&train)]).lines().count() == 60);
    let err = fails(
        &[
            "cv",
            s(&train),
            "--task",
            "multiclass",
            "--latent-states",
            "2",
        ],
        1,
    );
    assert!(
        err.contains("--latent-states applies to --task chain"),
        "{err}"
    );
    ok(&[
        "train",
        s(&train),
        "--task",
        "multiclass",
        "--latent-subclasses",
        "2",
        "-o",
        o,
        "-q",
    ]);
    let err = fails(&["predict", o, s(&train), "--probability"], 1);
    assert!(err.contains("multiclass-latent"), "{err}");
    let err = fails(
        &[
            "train",
            s(&train),
            "--task",
            "multiclass",
            "--latent-subclasses",
            "2",
            "--solver",
            "oneslack",
            "--rescaling",
            "slack",
            "-o",
            o,
        ],
        1,
    );
    assert!(err.contains("slack rescaling of latent models"), "{err}");
    // A crafted file whose joint model's class values are not its template numbers is refused, not indexed.
    let json = tmp.path().join("m.json");
    ok(&[
        "train",
        s(&train),
        "--task",
        "multiclass",
        "--latent-subclasses",
        "2",
        "-o",
        s(&json),
        "-q",
    ]);
    let mut m = maxmargin::structured_svm::LatentMulticlassModel::load(&json).unwrap();
    m.model.classes[5] = 99.0;
    let crafted = tmp.path().join("crafted.json");
    assert!(m.save(&crafted).is_err(), "save checks too");
    let kind = maxmargin::structured_svm::LATENT_KIND;
    maxmargin::io::model_file::save(&crafted, kind, &m).unwrap();
    let err = fails(&["predict", s(&crafted), s(&train)], 1);
    assert!(
        err.contains("crafted.json") && err.contains("inconsistent latent model"),
        "{err}"
    );
    let heart = super::heart(tmp.path());
    let err = fails(&["cv", s(&heart), "--min-count", "2"], 1);
    assert!(err.contains("--min-count"), "{err}");
}

/// Five noisy linear classes of 200 rows (a user's probe's shape): one rises by less than its convex
/// solve's certified gap in a late round, which CCCP's descent cannot tell from the solve's inexactness. A
/// default run ends converged, without the warning that a round "raised the objective".
#[test]
fn a_default_latent_run_on_ordinary_data_ends_without_a_warning() {
    let mut state = 3u64.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut text = String::new();
    for _ in 0..200 {
        let x: Vec<f64> = (0..10).map(|_| next() * 4.0 - 2.0).collect();
        let score = |j: usize| {
            (0..3)
                .map(|k| x[(j * 3 + k) % 10] * [1.0, -1.0][k % 2])
                .sum::<f64>()
        };
        let scores: Vec<f64> = (0..5).map(|j| score(j) + (next() - 0.5) * 4.0).collect();
        let class = (0..5).fold(0, |b, j| if scores[j] > scores[b] { j } else { b }) + 1;
        let features: Vec<String> = x
            .iter()
            .enumerate()
            .map(|(j, v)| format!("{}:{v:.3}", j + 1))
            .collect();
        text.push_str(&format!("{class} {}\n", features.join(" ")));
    }
    let tmp = tempfile::tempdir().unwrap();
    let (data, model) = (tmp.path().join("five.svm"), tmp.path().join("m.json"));
    std::fs::write(&data, text).unwrap();
    let args = [
        "train",
        "--task",
        "multiclass",
        s(&data),
        "--latent-subclasses",
        "2",
        "-o",
        s(&model),
    ];
    let err = ok_stderr(&args);
    assert!(!err.contains("warning:"), "{err}");
    assert!(err.contains("the rounds converged"), "{err}");
}
