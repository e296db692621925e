//! The command's man pages, generated from its clap definitions so that they cannot drift: `docs/man/` holds
//! `maxmargin.1` and one `maxmargin-COMMAND.1` per subcommand, compared here with what the flags say now
//! (`MAXMARGIN_BLESS=1 cargo test -p maxmargin-cli man` writes them). `man -l docs/man/maxmargin-train.1`
//! reads one; a packager installs them into `man1/`.

use clap::CommandFactory;
use std::path::Path;

/// One page: the command without its version (so a release's version bump changes no page).
fn page(command: clap::Command) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    clap_mangen::Man::new(command.version(None::<&str>)).render(&mut out)?;
    Ok(out)
}

#[test]
fn the_man_pages_are_the_commands_own_flags() -> std::io::Result<()> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/man");
    let bless = std::env::var_os("MAXMARGIN_BLESS").is_some();
    let top = crate::args::Cli::command();
    let mut pages = vec![("maxmargin.1".to_string(), page(top.clone())?)];
    for sub in top.get_subcommands() {
        let name = format!("maxmargin-{}", sub.get_name());
        let command = sub
            .clone()
            .display_name(name.clone())
            .bin_name(format!("maxmargin {}", sub.get_name()));
        pages.push((format!("{name}.1"), page(command)?));
    }
    if bless {
        std::fs::create_dir_all(&dir)?;
    }
    let mut stale = Vec::new();
    for (file, bytes) in &pages {
        let path = dir.join(file);
        if bless {
            std::fs::write(&path, bytes)?;
        } else if std::fs::read(&path).ok().as_ref() != Some(bytes) {
            stale.push(file.clone());
        }
    }
    // No page of a subcommand that is gone.
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    on_disk.sort();
    let mut made: Vec<String> = pages.iter().map(|p| p.0.clone()).collect();
    made.sort();
    assert_eq!(
        on_disk, made,
        "docs/man/ holds other pages (MAXMARGIN_BLESS=1 rewrites them)"
    );
    assert!(
        stale.is_empty(),
        "man pages that differ from the flags: {stale:?} (MAXMARGIN_BLESS=1 rewrites them)"
    );
    Ok(())
}
