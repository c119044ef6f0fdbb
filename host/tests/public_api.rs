//! The library's public API, item by item, against `host/public-api.txt`: a game built against one version of
//! gamefeature-host must build against the next unless that version says it breaks (a new minor version while the
//! crate is 0.x, a new major after 1.0), as Cargo's semver rules promise.
//!
//! The list comes from rustdoc's JSON output, read by the `public-api` crate. rustdoc writes JSON only behind
//! `-Z unstable-options`, so it runs with `RUSTC_BOOTSTRAP=1` on the machine's stable toolchain, as `./dev fuzz`
//! runs cargo-fuzz: no nightly is needed.
//!
//! - An item removed or changed while the version stays the same fails, naming it: keep it (deprecated), or
//!   raise the version.
//! - Any change fails until the list is written again (`GAMEFEATURE_BLESS=1 cargo test -p gamefeature-host --test
//!   public_api`), so every change to the API is seen in review as a change to that file. Blessing a removal
//!   needs the version raised first, or `GAMEFEATURE_BLESS=unreleased` while the version is not yet released.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

const LIST: &str = "public-api.txt";
const VERSION_LINE: &str = "# gamefeature-host ";

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// rustdoc's JSON for this crate, built into a target directory of its own (the workspace's is locked by the
/// `cargo test` running this).
fn rustdoc_json() -> PathBuf {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("public-api");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .current_dir(manifest_dir())
        .env("RUSTC_BOOTSTRAP", "1")
        .args(["rustdoc", "--quiet", "--lib", "-p", "gamefeature-host", "--target-dir"])
        .arg(&target)
        .args(["--", "-Z", "unstable-options", "--output-format", "json"])
        .output()
        .expect("cargo runs");
    assert!(output.status.success(), "cargo rustdoc failed:\n{}", String::from_utf8_lossy(&output.stderr));
    target.join("doc").join("gamefeature_host.json")
}

/// The public items now, one per line, sorted.
fn public_items() -> BTreeSet<String> {
    let json = rustdoc_json();
    // Blanket impls (`From<T> for T`, `Borrow<T>`...) come with every type and say nothing about this crate. Auto
    // traits stay: a type that stops being `Send` breaks the game that sends it.
    let api = public_api::Builder::from_rustdoc_json(&json).omit_blanket_impls(true).build().unwrap_or_else(|e| {
        panic!(
            "{}: {e}\n(rustdoc's JSON format follows the toolchain: a new toolchain needs the public-api crate \
             that reads its format)",
            json.display()
        )
    });
    api.items().map(|item| item.to_string()).collect()
}

/// The list as recorded: the version it was recorded for, and its items.
fn recorded() -> (String, BTreeSet<String>) {
    let text = std::fs::read_to_string(manifest_dir().join(LIST)).unwrap_or_default();
    let version = text.lines().find_map(|l| l.strip_prefix(VERSION_LINE)).unwrap_or("none").to_string();
    // Comments start "# "; an item may start with an attribute (`#[non_exhaustive] pub enum ...`).
    let items = text.lines().filter(|l| !l.starts_with("# ") && !l.is_empty()).map(str::to_string).collect();
    (version, items)
}

/// Whether going from `old` to `new` may break users, by Cargo's rules: the first non-zero part changed.
fn breaking_bump(old: &str, new: &str) -> bool {
    let parts = |v: &str| v.split('.').map(|p| p.parse::<u64>().unwrap_or(0)).collect::<Vec<_>>();
    let (old, new) = (parts(old), parts(new));
    let significant = |v: &[u64]| v.iter().position(|p| *p != 0).map_or(v.len(), |i| i);
    let at = significant(&old).min(old.len().saturating_sub(1));
    old[..=at] != new[..=at.min(new.len().saturating_sub(1))]
}

#[test]
fn the_public_api_changes_only_as_its_version_allows() {
    let version = env!("CARGO_PKG_VERSION");
    let now = public_items();
    let (recorded_for, before) = recorded();
    let removed: Vec<&String> = before.difference(&now).collect();
    let added: Vec<&String> = now.difference(&before).collect();
    let may_break = recorded_for != version && breaking_bump(&recorded_for, version);
    let bless = std::env::var("GAMEFEATURE_BLESS").ok();
    // Blessing a removal needs the version raised, or saying on purpose that this version is not released yet.
    let bless = bless.filter(|how| removed.is_empty() || may_break || how == "unreleased");
    if bless.is_some() {
        let mut text = format!(
            "{VERSION_LINE}{version}\n# The library's public API, written by `GAMEFEATURE_BLESS=1 cargo test -p \
             gamefeature-host --test public_api`.\n"
        );
        for item in &now {
            text.push_str(item);
            text.push('\n');
        }
        std::fs::write(manifest_dir().join(LIST), text).unwrap();
        return;
    }
    assert!(
        removed.is_empty() || may_break,
        "{} public item(s) removed or changed in {version}, which promises not to break games built against \
         {recorded_for}: keep them, or raise the version, then bless the list (GAMEFEATURE_BLESS=unreleased \
         blesses it while {version} is not released):\n  {}",
        removed.len(),
        removed.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n  ")
    );
    assert!(
        removed.is_empty() && added.is_empty(),
        "the public API changed ({} added, {} removed): bless host/{LIST} with GAMEFEATURE_BLESS=1 so the change \
         is reviewed:\n+ {}\n- {}",
        added.len(),
        removed.len(),
        added.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n+ "),
        removed.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n- ")
    );
}

#[test]
fn a_breaking_bump_is_the_first_non_zero_part_changing() {
    assert!(breaking_bump("0.1.0", "0.2.0"));
    assert!(!breaking_bump("0.1.0", "0.1.1"));
    assert!(breaking_bump("1.4.2", "2.0.0"));
    assert!(!breaking_bump("1.4.2", "1.5.0"));
    assert!(breaking_bump("0.0.3", "0.0.4"));
}
