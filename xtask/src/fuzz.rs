//! `cargo xtask fuzz [--seconds N] [--data-dir DIR] [--only T,...]`: seeds each cargo-fuzz target's corpus
//! from the shared datasets (the first lines of real files, and small models trained on them by the release
//! command in both encodings), then runs each target for N seconds (default 600) on the nightly toolchain.
//! A crash stops the run and leaves its input under `fuzz/artifacts/<target>/`; it then becomes an ordinary
//! regression test (`crates/maxmargin/tests/it/fuzz.rs`).

use anyhow::{Context, Result, ensure};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The targets and, for the readers, the shared files (relative to the data folder) whose first lines seed
/// them.
const TARGETS: [(&str, &[&str]); 11] = [
    (
        "libsvm",
        &[
            "heart_scale/heart_scale",
            "a9a/a9a.gz",
            "mushrooms/mushrooms",
            "letter/letter.scale.gz",
            "sklearn_iris/iris.libsvm.gz",
        ],
    ),
    (
        "multilabel",
        &["scene/scene.train.libsvm.gz", "yeast/yeast.train.libsvm.gz"],
    ),
    ("svm_hmm", &["ocr_letters/ocr.fold0.svmhmm.gz"]),
    ("conll", &["conll2000/train.txt.gz"]),
    ("graphs", &[]),
    ("model_bincode", &[]),
    ("model_json", &[]),
    ("liblinear", &[]),
    ("checkpoint", &[]),
    ("template", &[]),
    ("side_files", &[]),
];

/// Seeds of the side-file targets, made with the release command from the heart and iris heads in
/// `scratch` (written by [`seed_models`]): LIBLINEAR models by `convert`, checkpoints of four solvers,
/// templates, weights, group names and a trace.
fn seed_side(scratch: &Path, corpus: &dyn Fn(&str) -> PathBuf) -> Result<()> {
    let bin = crate::target_dir()?.join("release/maxmargin");
    let run = |args: &[&str]| -> Result<()> {
        let status = Command::new(&bin)
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .with_context(|| format!("running {}", bin.display()))?;
        ensure!(status.success(), "making a seed failed: maxmargin {args:?}");
        Ok(())
    };
    let path = |p: PathBuf| p.to_string_lossy().into_owned();
    let (binary, multi) = (
        path(scratch.join("binary.svm")),
        path(scratch.join("multiclass.svm")),
    );
    for (i, (data, task)) in [(&binary, "binary"), (&multi, "multiclass")]
        .into_iter()
        .enumerate()
    {
        let model = path(scratch.join(format!("{task}.seed.model")));
        run(&[
            "train",
            data.as_str(),
            "--task",
            task,
            "-o",
            model.as_str(),
            "-q",
        ])?;
        let out = path(corpus("liblinear").join(format!("seed-{i}")));
        run(&[
            "convert",
            model.as_str(),
            "--to",
            "liblinear",
            "-o",
            out.as_str(),
        ])?;
    }
    let runs: [&[&str]; 4] = [
        &["--epochs", "2"],
        &["--solver", "pegasos", "--epochs", "2"],
        &["--task", "multiclass", "--max-passes", "2"],
        &[
            "--task",
            "multiclass",
            "--solver",
            "bcfw",
            "--max-passes",
            "2",
        ],
    ];
    for (i, flags) in runs.iter().enumerate() {
        let data = if i < 2 { &binary } else { &multi };
        let ck = path(corpus("checkpoint").join(format!("seed-{i}")));
        let model = path(scratch.join("ck.model"));
        let mut args = vec![
            "train",
            data.as_str(),
            "-o",
            model.as_str(),
            "--checkpoint",
            ck.as_str(),
            "-q",
        ];
        args.extend_from_slice(flags);
        run(&args)?;
    }
    let templates = [
        "U00:%x[0,0]\nU01:%x[-1,0]/%x[0,0]\n",
        "# comment\nU10:%x[0,1]\nU11:%x[1,1]/%x[2,1]\n\nB\n",
    ];
    for (i, t) in templates.iter().enumerate() {
        std::fs::write(corpus("template").join(format!("seed-{i}")), t)?;
    }
    let trace = path(corpus("side_files").join("seed-trace"));
    let model = path(scratch.join("trace.model"));
    run(&[
        "train",
        binary.as_str(),
        "-o",
        model.as_str(),
        "--trace",
        trace.as_str(),
        "-q",
    ])?;
    std::fs::write(corpus("side_files").join("seed-weights"), "1\n0.5\n2\n")?;
    std::fs::write(
        corpus("side_files").join("seed-groups"),
        "north\nsouth\nnorth\n",
    )?;
    Ok(())
}

/// The first `n` lines of a (possibly gzip-compressed) file.
fn head(path: &Path, n: usize) -> Result<Vec<u8>> {
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut raw = BufReader::new(file);
    let gz = raw.fill_buf()?.starts_with(&[0x1f, 0x8b]);
    let reader: Box<dyn Read> = if gz {
        Box::new(flate2::read::MultiGzDecoder::new(raw))
    } else {
        Box::new(raw)
    };
    let mut out = Vec::new();
    for line in BufReader::new(reader).split(b'\n').take(n) {
        out.extend_from_slice(&line?);
        out.push(b'\n');
    }
    Ok(out)
}

/// Trains small models with the release command, one per task, in both encodings, into `dir`.
fn seed_models(data: &Path, scratch: &Path, dirs: [&Path; 2]) -> Result<()> {
    let bin = crate::target_dir()?.join("release/maxmargin");
    let cuts = [
        ("heart_scale/heart_scale", "binary.svm", &["train"][..]),
        (
            "sklearn_iris/iris.libsvm.gz",
            "multiclass.svm",
            &["train", "--task", "multiclass"][..],
        ),
        (
            "yeast/yeast.train.libsvm.gz",
            "multilabel.svm",
            &["train", "--task", "multilabel"][..],
        ),
        (
            "ocr_letters/ocr.fold0.svmhmm.gz",
            "chain.dat",
            &["train", "--task", "chain"][..],
        ),
        (
            "conll2000/train.txt.gz",
            "tagger.conll",
            &["train", "--task", "chain", "--format", "conll"][..],
        ),
    ];
    // A calibrated model with a threshold (kind binary-decision), in both encodings.
    let decision = |dir: &Path, ext: &str| -> Result<()> {
        let base = dir.join(format!("binary.svm.{ext}"));
        let dev = scratch.join("binary.svm");
        for (sub, extra) in [
            ("calibrate", &[][..]),
            ("threshold", &["--max-flag-rate", "0.3"][..]),
        ] {
            let out = dir.join(format!("decision-{sub}.{ext}"));
            let input = if sub == "calibrate" {
                base.clone()
            } else {
                dir.join(format!("decision-calibrate.{ext}"))
            };
            let status = Command::new(&bin)
                .arg(sub)
                .arg(&input)
                .arg(&dev)
                .arg("-o")
                .arg(&out)
                .args(extra)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()?;
            ensure!(status.success(), "making the {sub} seed model failed");
        }
        Ok(())
    };
    for (source, name, args) in cuts {
        let input = scratch.join(name);
        std::fs::write(&input, head(&data.join(source), 200)?)?;
        for (dir, ext) in dirs.iter().zip(["model", "json"]) {
            let out = dir.join(format!("{name}.{ext}"));
            let status = Command::new(&bin)
                .args(args)
                .arg(&input)
                .arg("-o")
                .arg(&out)
                .arg("--quiet")
                .status()
                .with_context(|| format!("running {}", bin.display()))?;
            ensure!(status.success(), "training the {name} seed model failed");
        }
    }
    for (dir, ext) in dirs.iter().zip(["model", "json"]) {
        decision(dir, ext)?;
    }
    Ok(())
}

/// `cargo xtask fuzz`'s options.
#[derive(clap::Args, Debug)]
pub(crate) struct FuzzArgs {
    /// Seconds each target runs.
    #[arg(long, default_value_t = 600)]
    seconds: u64,
    /// The shared datasets the corpora are seeded from (default: $MAXMARGIN_DATA).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Run only these targets (comma-separated).
    #[arg(long, value_name = "T,...", value_delimiter = ',')]
    only: Option<Vec<String>>,
}

pub(crate) fn fuzz(root: &Path, args: FuzzArgs) -> Result<()> {
    let FuzzArgs {
        seconds,
        data_dir,
        only,
    } = args;
    let data_dir = data_dir.or_else(|| std::env::var_os("MAXMARGIN_DATA").map(PathBuf::from));
    let data = data_dir.context("give --data-dir or set MAXMARGIN_DATA (the shared datasets)")?;
    crate::run(&mut crate::cargo(&[
        "build",
        "--release",
        "-p",
        "maxmargin-cli",
        "--locked",
    ]))?;
    let fuzz_dir = root.join("fuzz");
    let scratch = tempfile_dir(&fuzz_dir)?;
    let corpus = |t: &str| fuzz_dir.join("corpus").join(t);
    for (target, _) in TARGETS {
        std::fs::create_dir_all(corpus(target))?;
    }
    seed_models(
        &data,
        &scratch,
        [&corpus("model_bincode"), &corpus("model_json")],
    )?;
    seed_side(&scratch, &corpus)?;
    for (target, files) in TARGETS {
        if only
            .as_ref()
            .is_some_and(|o| !o.iter().any(|t| t == target))
        {
            continue;
        }
        for (i, file) in files.iter().enumerate() {
            for n in [1, 5, 40] {
                std::fs::write(
                    corpus(target).join(format!("seed-{i}-{n}")),
                    head(&data.join(file), n)?,
                )?;
            }
        }
        eprintln!("fuzz: {target} for {seconds} s");
        let status = Command::new("cargo")
            .args(["+nightly", "fuzz", "run", target, "--"])
            .arg(format!("-max_total_time={seconds}"))
            .arg("-max_len=8192")
            .arg("-rss_limit_mb=4096")
            .current_dir(&fuzz_dir)
            .env_remove("RUSTUP_TOOLCHAIN")
            .status()
            .context("running cargo +nightly fuzz (cargo install cargo-fuzz)")?;
        ensure!(
            status.success(),
            "fuzz target {target} failed: see fuzz/artifacts/{target}/"
        );
    }
    std::fs::remove_dir_all(&scratch)?;
    eprintln!("fuzz: every target ran {seconds} s without a failure");
    Ok(())
}

/// A scratch folder for the seed models' training data.
fn tempfile_dir(fuzz_dir: &Path) -> Result<PathBuf> {
    let dir = fuzz_dir.join("target").join("seed-data");
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
