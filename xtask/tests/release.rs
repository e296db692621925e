//! The release checklist, run for real on a temporary clone of this repository: a first release must package
//! every crate although none of them is on crates.io yet.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args([
            "-c",
            "user.name=release test",
            "-c",
            "user.email=release@test.invalid",
        ])
        .args(args)
        .current_dir(dir)
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

/// `cargo xtask release` in `clone`, built into a target directory of its own under this one's.
fn release(clone: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO"))
        .args(["run", "--quiet", "-p", "xtask", "--", "release"])
        .args(args)
        .env("CARGO_TARGET_DIR", repo().join("target/release-check"))
        .current_dir(clone)
        .output()
        .expect("cargo runs")
}

#[test]
fn a_first_release_packages_every_crate_on_a_clean_clone() {
    let tmp = tempfile::tempdir().unwrap();
    let clone = tmp.path().join("clone");
    git(
        tmp.path(),
        &[
            "clone",
            "--quiet",
            repo().to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
    );
    // No CHANGELOG entry for the version: refused.
    let out = release(&clone, &["0.1.1", "--no-verify"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("no '## 0.1.1' entry"),
        "{err}"
    );
    // With one, committed: the manifest and lock file are bumped and every crate packages.
    let changelog = clone.join("CHANGELOG.md");
    let text = std::fs::read_to_string(&changelog).unwrap();
    std::fs::write(&changelog, text.replacen("## Unreleased", "## 0.1.1", 1)).unwrap();
    git(&clone, &["commit", "--quiet", "-am", "CHANGELOG: 0.1.1"]);
    // A step failing after the bump (here packaging: a readme that does not exist) leaves the tree as it was.
    let io_manifest = clone.join("crates/maxmargin-io/Cargo.toml");
    let io_text = std::fs::read_to_string(&io_manifest).unwrap();
    std::fs::write(
        &io_manifest,
        io_text.replacen("readme = \"README.md\"", "readme = \"MISSING.md\"", 1),
    )
    .unwrap();
    git(&clone, &["commit", "--quiet", "-am", "a broken readme"]);
    let out = release(&clone, &["0.1.1", "--no-verify"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("Cargo.toml and Cargo.lock are as they were"),
        "{err}"
    );
    let status = Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(&clone)
        .output()
        .unwrap();
    assert!(status.stdout.is_empty(), "{status:?}");
    git(&clone, &["reset", "--quiet", "--hard", "HEAD~1"]);
    let out = release(&clone, &["0.1.1", "--no-verify"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    // It says where the packages went: cargo's target directory, here CARGO_TARGET_DIR's (issue 25).
    assert!(
        said.contains(&format!(
            "packaged in {}",
            repo().join("target/release-check/package").display()
        )) || said.contains("release-check/package"),
        "{said}"
    );
    assert!(
        said.contains("accepted by `cargo publish --dry-run`"),
        "{said}"
    );
    let manifest = std::fs::read_to_string(clone.join("Cargo.toml")).unwrap();
    assert!(manifest.contains("version = \"0.1.1\""), "{manifest}");
    assert!(
        !manifest.contains("version = \"0.1.0\""),
        "every internal dependency bumped"
    );
    let packaged = repo().join("target/release-check/package");
    for krate in [
        "maxmargin-core",
        "maxmargin-io",
        "maxmargin-struct",
        "maxmargin-optim",
        "maxmargin",
        "maxmargin-cli",
    ] {
        let file = packaged.join(format!("{krate}-0.1.1.crate"));
        assert!(file.is_file(), "{} missing", file.display());
        // Each package carries both licences its manifest names (issue 25).
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(
            std::fs::File::open(&file).unwrap(),
        ));
        let names: Vec<String> = archive
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().display().to_string())
            .collect();
        let holds = |name: &str| names.iter().any(|n| n == name);
        for licence in ["LICENSE-MIT", "LICENSE-APACHE"] {
            let name = format!("{krate}-0.1.1/{licence}");
            assert!(holds(&name), "{name} is not in the package");
        }
        // Data ships only with a stated licence: heart_scale with LIBSVM's notice, the CoNLL-2000 excerpts
        // and the taggers trained on them (no licence stated) not at all.
        if krate == "maxmargin" {
            assert!(holds("maxmargin-0.1.1/data/heart_scale.COPYRIGHT"));
            assert!(holds("maxmargin-0.1.1/data/heart_scale"));
        }
        for excerpt in ["conll2000-head", "small.conll", "tagger.model"] {
            assert!(
                !names.iter().any(|n| n.contains(excerpt)),
                "{krate} ships {excerpt}, from CoNLL-2000"
            );
        }
    }
    // The tree is now dirty (the bump): a second run refuses until it is committed.
    let out = release(&clone, &["0.1.1", "--no-verify"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("not clean"));
}
