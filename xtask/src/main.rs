//! Project automation, as `cargo xtask <command>`:
//!
//! - `ci`: exactly what `.ci/run` runs (format check, clippy with warnings denied, the tests), plus
//!   rustdoc with warnings denied and a check that `maxmargin-core` depends on no sibling crate.
//! - `bench [--data-dir DIR] [--baseline NAME] [--bench NAME] [--only DATA,...]`: builds the release command,
//!   then runs the criterion benchmarks and the end-to-end measurements (`end_to_end`: the table against
//!   LIBLINEAR, JSON and SVG plots under `target/bench-report/`), reading datasets from `DIR` (default
//!   `$MAXMARGIN_DATA`). `--bench` runs one benchmark target; `--only` limits `end_to_end` to some datasets.
//! - `fuzz [--seconds N] [--data-dir DIR] [--only T,...]`: seeds the cargo-fuzz targets under `fuzz/` from the
//!   shared datasets and runs each for N seconds (default 600) on nightly (see `fuzz.rs`).
//! - `release VERSION [--no-verify]`: the release checklist as code: a clean tree, a CHANGELOG entry, the
//!   version bump in the workspace manifest and the lock file, and `cargo package --workspace`, which packages
//!   every publishable crate against the others' packages (a local registry), so it works before any of them
//!   is on crates.io; `--no-verify` skips building the packages. Then `cargo publish --workspace` publishes
//!   them in dependency order.

use anyhow::{Context, Result, bail, ensure};
use std::path::{Path, PathBuf};
use std::process::Command;

mod fuzz;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn run(cmd: &mut Command) -> Result<()> {
    eprintln!("$ {cmd:?}");
    let status = cmd
        .current_dir(root())
        .status()
        .with_context(|| format!("running {cmd:?}"))?;
    ensure!(status.success(), "{cmd:?} failed with {status}");
    Ok(())
}

fn cargo(args: &[&str]) -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.args(args);
    c
}

fn ci() -> Result<()> {
    run(Command::new("bash").arg(".ci/run"))?;
    run(cargo(&["doc", "--workspace", "--no-deps", "--locked"]).env("RUSTDOCFLAGS", "-D warnings"))?;
    let out = cargo(&[
        "tree",
        "-p",
        "maxmargin-core",
        "--edges",
        "normal",
        "--prefix",
        "none",
    ])
    .current_dir(root())
    .output()
    .context("running cargo tree")?;
    ensure!(out.status.success(), "cargo tree failed");
    let tree = String::from_utf8_lossy(&out.stdout);
    let siblings: Vec<&str> = tree
        .lines()
        .skip(1)
        .filter(|l| l.starts_with("maxmargin"))
        .collect();
    ensure!(
        siblings.is_empty(),
        "maxmargin-core must not depend on sibling crates: {siblings:?}"
    );
    eprintln!("ci: all checks passed");
    Ok(())
}

fn bench(args: &[String]) -> Result<()> {
    let mut data_dir = std::env::var_os("MAXMARGIN_DATA").map(PathBuf::from);
    let mut baseline = None;
    let mut only_bench = None;
    let mut only_data = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--data-dir" => {
                data_dir = Some(PathBuf::from(
                    it.next().context("--data-dir needs a directory")?,
                ))
            }
            "--baseline" => baseline = Some(it.next().context("--baseline needs a name")?.clone()),
            "--bench" => only_bench = Some(it.next().context("--bench needs a name")?.clone()),
            "--only" => only_data = Some(it.next().context("--only needs dataset names")?.clone()),
            other => bail!("unknown bench argument {other:?}"),
        }
    }
    let data_dir = data_dir.context("give --data-dir DIR or set MAXMARGIN_DATA")?;
    ensure!(
        data_dir.is_dir(),
        "data directory {} does not exist",
        data_dir.display()
    );
    let data_dir = data_dir.canonicalize()?;
    // The end-to-end comparison runs the command as users do.
    // The distributed bench needs the command built with MPI (which needs Open MPI and libclang).
    let mut build = cargo(&["build", "--release", "-p", "maxmargin-cli", "--locked"]);
    if only_bench.as_deref() == Some("distributed") {
        build.args(["--features", "mpi"]);
    }
    run(&mut build)?;
    let mut cmd = cargo(&["bench", "-p", "maxmargin-benches", "--locked"]);
    if let Some(b) = &only_bench {
        cmd.args(["--bench", b]);
    }
    if let Some(b) = &baseline {
        cmd.args(["--", "--save-baseline", b]);
    }
    if let Some(d) = &only_data {
        cmd.env("MAXMARGIN_BENCH_ONLY", d);
    }
    run(cmd.env("MAXMARGIN_DATA", &data_dir))?;
    eprintln!(
        "bench: reports in {}",
        root().join("target/bench-report").display()
    );
    Ok(())
}

fn release(args: &[String]) -> Result<()> {
    let (version, verify) = match args {
        [v] => (v, true),
        [v, flag] if flag == "--no-verify" => (v, false),
        _ => bail!("usage: cargo xtask release VERSION [--no-verify]"),
    };
    ensure!(
        version.split('.').count() == 3 && version.split('.').all(|p| p.parse::<u64>().is_ok()),
        "VERSION must be MAJOR.MINOR.PATCH, got {version:?}"
    );
    let status = Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(root())
        .output()?;
    ensure!(
        status.stdout.is_empty(),
        "the work tree is not clean; commit or stash first"
    );
    let changelog =
        std::fs::read_to_string(root().join("CHANGELOG.md")).context("reading CHANGELOG.md")?;
    ensure!(
        changelog.contains(&format!("## {version}")),
        "CHANGELOG.md has no '## {version}' entry"
    );
    let manifest_path = root().join("Cargo.toml");
    let manifest = std::fs::read_to_string(&manifest_path)?;
    let mut bumped = String::new();
    let mut in_package = false;
    for line in manifest.lines() {
        if line.starts_with('[') {
            in_package = line == "[workspace.package]";
        }
        let new = if in_package && line.starts_with("version = ") {
            format!("version = \"{version}\"")
        } else if line.starts_with("maxmargin") && line.contains("version = \"") {
            let start = line
                .find("version = \"")
                .map_or(0, |i| i + "version = \"".len());
            let end = line[start..].find('"').map_or(line.len(), |i| start + i);
            format!("{}{version}{}", &line[..start], &line[end..])
        } else {
            line.to_string()
        };
        bumped.push_str(&new);
        bumped.push('\n');
    }
    std::fs::write(&manifest_path, bumped)?;
    // The lock file follows the workspace's own versions only (no registry needed).
    run(&mut cargo(&["update", "--workspace", "--offline"]))?;
    let mut package = vec![
        "package",
        "--workspace",
        "--exclude",
        "xtask",
        "--exclude",
        "maxmargin-benches",
        "--allow-dirty",
        "--locked",
    ];
    if !verify {
        package.push("--no-verify");
    }
    run(&mut cargo(&package))?;
    eprintln!(
        "release {version}: manifest bumped, every crate packaged in target/package/; review, commit, tag \
         v{version}, then `cargo publish --workspace`"
    );
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("bench") => bench(&args[1..]),
        Some("release") => release(&args[1..]),
        Some("fuzz") => fuzz::fuzz(&root(), &args[1..]),
        _ => bail!(
            "usage: cargo xtask ci | bench [--data-dir DIR] [--baseline NAME] [--bench NAME] [--only DATA,...] | fuzz [--seconds N] [--data-dir DIR] [--only T,...] | release VERSION"
        ),
    }
}
