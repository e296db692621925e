//! Project automation, as `cargo xtask <command>`:
//!
//! - `ci`: exactly what `.ci/run` runs (format check, clippy and rustdoc with warnings denied, the tests, the
//!   guide, the MPI tests), plus a check that `maxmargin-core` depends on no sibling crate.
//! - `bench [--data-dir DIR] [--baseline NAME] [--bench NAME] [--only DATA,...]`: builds the release command,
//!   then runs the criterion benchmarks and the end-to-end measurements (`end_to_end`: the table against
//!   LIBLINEAR, JSON and SVG plots under `TARGET/bench-report/`, `TARGET` being cargo's target directory, so
//!   `CARGO_TARGET_DIR` counts), reading datasets from `DIR` (default
//!   `$MAXMARGIN_DATA`). `--bench` runs one benchmark target; `--only` limits `end_to_end` to some datasets.
//! - `fuzz [--seconds N] [--data-dir DIR] [--only T,...]`: seeds the cargo-fuzz targets under `fuzz/` from the
//!   shared datasets and runs each for N seconds (default 600) on nightly (see `fuzz.rs`).
//! - `release VERSION [--no-verify]`: the release checklist as code: a clean tree, a CHANGELOG entry, the
//!   version bump in the workspace manifest and the lock file, and `cargo package --workspace`, which packages
//!   every publishable crate against the others' packages (a local registry), so it works before any of them
//!   is on crates.io; `--no-verify` skips building the packages; then `cargo publish --workspace --dry-run`,
//!   what crates.io would check of each package (it reads the registry's index, uploading nothing), and
//!   `cargo semver-checks` against the last `vX.Y.Z` tag once there is one. Then `cargo publish --workspace`
//!   publishes them in dependency order.

use anyhow::{Context, Result, ensure};
use clap::{Parser, Subcommand};
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
    // `.ci/run` builds the docs with warnings denied too.
    run(Command::new("bash").arg(".ci/run"))?;
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

/// Cargo's target directory for this workspace, as `cargo metadata` reports it (`CARGO_TARGET_DIR` and
/// cargo's configuration included).
fn target_dir() -> Result<PathBuf> {
    target_dir_of(&mut cargo(&[
        "metadata",
        "--format-version",
        "1",
        "--no-deps",
        "--offline",
    ]))
}

/// The `target_directory` that `metadata` (a `cargo metadata` command) reports.
fn target_dir_of(metadata: &mut Command) -> Result<PathBuf> {
    let out = metadata
        .current_dir(root())
        .output()
        .context("running cargo metadata")?;
    ensure!(out.status.success(), "cargo metadata failed");
    let meta: serde_json::Value =
        serde_json::from_slice(&out.stdout).context("reading cargo metadata's output")?;
    let dir = meta["target_directory"]
        .as_str()
        .context("cargo metadata gave no target_directory")?;
    Ok(PathBuf::from(dir))
}

/// `cargo xtask bench`'s options.
#[derive(clap::Args, Debug)]
struct BenchArgs {
    /// The shared datasets (default: $MAXMARGIN_DATA).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Save criterion's results as this baseline.
    #[arg(long, value_name = "NAME")]
    baseline: Option<String>,
    /// Run this benchmark target only (e.g. end_to_end, convergence, distributed).
    #[arg(long, value_name = "NAME")]
    bench: Option<String>,
    /// Limit end_to_end to these datasets (comma-separated).
    #[arg(long, value_name = "DATA,...")]
    only: Option<String>,
}

fn bench(args: BenchArgs) -> Result<()> {
    let data_dir = args
        .data_dir
        .or_else(|| std::env::var_os("MAXMARGIN_DATA").map(PathBuf::from))
        .context("give --data-dir DIR or set MAXMARGIN_DATA")?;
    ensure!(
        data_dir.is_dir(),
        "data directory {} does not exist",
        data_dir.display()
    );
    let data_dir = data_dir.canonicalize()?;
    let target = target_dir()?;
    // The end-to-end comparison runs the command as users do.
    // The distributed bench needs the command built with MPI (which needs Open MPI and libclang).
    let mut build = cargo(&["build", "--release", "-p", "maxmargin-cli", "--locked"]);
    if args.bench.as_deref() == Some("distributed") {
        build.args(["--features", "mpi"]);
    }
    run(&mut build)?;
    let mut cmd = cargo(&["bench", "-p", "maxmargin-benches", "--locked"]);
    if let Some(b) = &args.bench {
        cmd.args(["--bench", b]);
    }
    if let Some(b) = &args.baseline {
        cmd.args(["--", "--save-baseline", b]);
    }
    if let Some(d) = &args.only {
        cmd.env("MAXMARGIN_BENCH_ONLY", d);
    }
    cmd.env("MAXMARGIN_DATA", &data_dir)
        .env("MAXMARGIN_TARGET_DIR", &target)
        .env("MAXMARGIN_BIN", target.join("release/maxmargin"));
    run(&mut cmd)?;
    eprintln!(
        "bench: reports in {}",
        target.join("bench-report").display()
    );
    Ok(())
}

/// The crates a release publishes, as cargo's package selection.
const PUBLISHED: [&str; 5] = [
    "--workspace",
    "--exclude",
    "xtask",
    "--exclude",
    "maxmargin-benches",
];

fn release(version: &str, verify: bool) -> Result<()> {
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
    let lock_path = root().join("Cargo.lock");
    let lock = std::fs::read(&lock_path).context("reading Cargo.lock")?;
    std::fs::write(&manifest_path, bumped)?;
    // A step that fails after the bump puts the manifest and lock file back, so the tree is clean to retry.
    if let Err(e) = package_and_check(verify) {
        std::fs::write(&manifest_path, &manifest)?;
        std::fs::write(&lock_path, &lock)?;
        return Err(e.context(format!(
            "release {version} stopped; Cargo.toml and Cargo.lock are as they were"
        )));
    }
    eprintln!(
        "release {version}: manifest bumped, every crate packaged in {} and accepted by `cargo publish \
         --dry-run`; review, commit, tag v{version}, then `cargo publish --workspace`",
        target_dir()?.join("package").display()
    );
    Ok(())
}

/// The release's checks once the manifest is bumped: the lock file, every crate packaged (and built from its
/// package unless `--no-verify`), `cargo publish --dry-run`, and the semver check against the last tag.
fn package_and_check(verify: bool) -> Result<()> {
    // The lock file follows the workspace's own versions only (no registry needed).
    run(&mut cargo(&["update", "--workspace", "--offline"]))?;
    let mut package = [&["package"][..], &PUBLISHED, &["--allow-dirty", "--locked"]].concat();
    if !verify {
        package.push("--no-verify");
    }
    run(&mut cargo(&package))?;
    // What cargo checks of each package for crates.io, uploading nothing (some limits, such as a keyword's
    // length, only the registry itself checks).
    let dry_run = [
        &["publish", "--dry-run", "--no-verify"][..],
        &PUBLISHED,
        &["--allow-dirty", "--locked"],
    ]
    .concat();
    run(&mut cargo(&dry_run))?;
    semver_checks()?;
    Ok(())
}

/// `cargo semver-checks` of every published crate against the last release tag (`vX.Y.Z`), once there is one:
/// a first release has no API to break.
fn semver_checks() -> Result<()> {
    let tag = Command::new("git")
        .args(["describe", "--tags", "--abbrev=0", "--match", "v[0-9]*"])
        .current_dir(root())
        .output()?;
    let tag = String::from_utf8_lossy(&tag.stdout).trim().to_string();
    if tag.is_empty() {
        eprintln!(
            "release: no earlier release tag, so no semver check (it starts with the second release)"
        );
        return Ok(());
    }
    let installed = cargo(&["semver-checks", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    ensure!(
        installed,
        "the last release is {tag}: `cargo install cargo-semver-checks --locked` to check this one's API \
         against it"
    );
    let check = [
        &[
            "semver-checks",
            "check-release",
            "--baseline-rev",
            tag.as_str(),
        ][..],
        &PUBLISHED,
    ]
    .concat();
    run(&mut cargo(&check))
}

/// Project automation for maxmargin (see the crate docs).
#[derive(Parser, Debug)]
#[command(name = "cargo xtask", bin_name = "cargo xtask")]
struct Cli {
    #[command(subcommand)]
    command: Task,
}

#[derive(Subcommand, Debug)]
enum Task {
    /// What `.ci/run` runs, and the check that maxmargin-core depends on no sibling crate.
    Ci,
    /// Build the release command, then run the benchmarks (reports under TARGET/bench-report/).
    Bench(BenchArgs),
    /// Seed the cargo-fuzz targets from the shared datasets and run each (nightly, cargo-fuzz).
    Fuzz(fuzz::FuzzArgs),
    /// The release checklist: a clean tree, a CHANGELOG entry, the version bump, every crate packaged.
    Release {
        /// MAJOR.MINOR.PATCH.
        version: String,
        /// Package without building each package.
        #[arg(long)]
        no_verify: bool,
    },
}

fn main() -> Result<()> {
    match Cli::parse().command {
        Task::Ci => ci(),
        Task::Bench(args) => bench(args),
        Task::Fuzz(args) => fuzz::fuzz(&root(), args),
        Task::Release { version, no_verify } => release(&version, !no_verify),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 25: the benches and the release step find what cargo built where cargo put it.
    #[test]
    fn the_target_directory_is_cargos_own_whatever_cargo_target_dir_says() {
        let elsewhere = tempfile::tempdir().unwrap();
        let metadata = [
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ];
        let mut moved = cargo(&metadata);
        moved.env("CARGO_TARGET_DIR", elsewhere.path());
        assert_eq!(target_dir_of(&mut moved).unwrap(), elsewhere.path());
        let mut plain = cargo(&metadata);
        plain.env_remove("CARGO_TARGET_DIR");
        assert_eq!(target_dir_of(&mut plain).unwrap(), root().join("target"));
    }
}
