//! The manual stays true: every relative link in `README.md`, `docs/` and `deploy/README.md` leads to a file
//! that exists (and to a heading in it, when it names one), every `gfhost` command shown — in a code block
//! or inline — names a subcommand that exists with flags that subcommand takes, and the embedding guide's code
//! is the example `cargo test` plays.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The manual's pages.
fn pages() -> Vec<PathBuf> {
    let root = repository();
    let mut pages = vec![root.join("README.md"), root.join("deploy/README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens.
fn anchor_of(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(text: &str) -> BTreeSet<String> {
    text.lines().filter_map(|line| line.strip_prefix('#')).map(|h| anchor_of(h.trim_start_matches('#'))).collect()
}

/// The targets of the page's Markdown links `[text](target)`.
fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            found.push(rest[..end].to_string());
        }
    }
    found
}

#[test]
fn every_link_in_the_manual_leads_somewhere() {
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for link in links(&text) {
            if link.starts_with("http://") || link.starts_with("https://") {
                continue;
            }
            let (file, anchor) = link.split_once('#').map_or((link.as_str(), None), |(f, a)| (f, Some(a)));
            let target = if file.is_empty() { page.clone() } else { page.parent().unwrap().join(file) };
            if !target.exists() {
                broken.push(format!("{}: {link}: no such file", page.display()));
                continue;
            }
            if let Some(anchor) = anchor {
                let headings = anchors(&std::fs::read_to_string(&target).unwrap());
                if !headings.contains(anchor) {
                    broken.push(format!("{}: {link}: no heading #{anchor} in {}", page.display(), target.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The `gfhost` command lines of a page: in code blocks (continuation lines joined) and in inline code.
fn command_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut in_block = false;
    let mut pending = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block {
            let line = line.split(" # ").next().unwrap_or_default();
            pending.push_str(line.trim_end().trim_end_matches('\\'));
            pending.push(' ');
            if !line.trim_end().ends_with('\\') {
                lines.push(std::mem::take(&mut pending));
            }
        } else {
            lines.extend(line.split('`').skip(1).step_by(2).map(str::to_string));
        }
    }
    lines.into_iter().filter(|line| gfhost_arguments(line).is_some()).collect()
}

/// What follows `gfhost` in a command line, when the line runs it (`gfhost`, `target/debug/gfhost`, ...).
fn gfhost_arguments(line: &str) -> Option<Vec<String>> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "gfhost" || w.ends_with("/gfhost"))?;
    Some(words[at + 1..].iter().map(|w| w.to_string()).collect())
}

fn help(subcommand: Option<&str>) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_gfhost")).args(subcommand).arg("--help").output().unwrap();
    assert!(output.status.success());
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn every_gfhost_command_in_the_manual_is_one_gfhost_takes() {
    let overview = help(None);
    let subcommands: BTreeSet<String> = overview
        .lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next().map(str::to_string))
        .collect();
    assert!(subcommands.contains("server") && subcommands.contains("play"), "{overview}");
    let mut helps: BTreeMap<String, String> = BTreeMap::new();
    let mut stale = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for line in command_lines(&text) {
            let arguments = gfhost_arguments(&line).unwrap();
            let Some(subcommand) = arguments.iter().find(|a| subcommands.contains(*a)) else {
                // `gfhost` alone or with global flags only: its own help has them.
                continue;
            };
            let help = helps.entry(subcommand.clone()).or_insert_with(|| self::help(Some(subcommand)));
            for flag in arguments.iter().filter(|a| a.starts_with("--")) {
                let flag = flag.split('=').next().unwrap();
                if !help.contains(&format!("{flag} ")) && !help.contains(&format!("{flag}\n")) {
                    stale.push(format!("{}: `{}`: gfhost {subcommand} takes no {flag}", page.display(), line.trim()));
                }
            }
            checked += 1;
        }
    }
    assert!(checked >= 20, "the manual's gfhost commands were found: {checked}");
    assert!(stale.is_empty(), "commands the manual shows that gfhost does not take:\n{}", stale.join("\n"));
}

/// The JavaScript helper's type declarations (`guest-sdk/js/gamefeature.d.ts`) hold for the helper's users: the
/// example JavaScript plugins type-check against them with TypeScript (installed by `./dev setup`), as an
/// editor checks a modder's plugin.
#[test]
fn the_javascript_helpers_types_check_the_example_plugins() {
    let root = repository();
    let tsc = root.join("toolchains/js/node_modules/.bin/tsc");
    assert!(tsc.is_file(), "{} is not installed: run ./dev setup", tsc.display());
    let mut plugins: Vec<String> = std::fs::read_dir(root.join("plugins"))
        .unwrap()
        .map(|entry| entry.unwrap().path().join("plugin.js"))
        .filter(|path| path.is_file())
        .map(|path| path.display().to_string())
        .collect();
    plugins.sort();
    assert!(!plugins.is_empty(), "the examples include a JavaScript plugin");
    let folder = tempfile::tempdir().unwrap();
    let declarations = root.join("guest-sdk/js/gamefeature.d.ts").canonicalize().unwrap();
    let config = serde_json::json!({
        "compilerOptions": {
            "noEmit": true, "allowJs": true, "checkJs": true, "target": "es2022", "module": "es2022",
            "moduleResolution": "bundler", "lib": ["es2022"], "types": [],
            "paths": { "gamefeature": [declarations.display().to_string()] }
        },
        "files": plugins,
    });
    std::fs::write(folder.path().join("tsconfig.json"), config.to_string()).unwrap();
    let plugins_checked = Command::new(&tsc).arg("-p").arg(folder.path().join("tsconfig.json")).output().unwrap();
    assert!(plugins_checked.status.success(), "{}", String::from_utf8_lossy(&plugins_checked.stdout));
    // The declarations themselves, strictly.
    let strict =
        Command::new(&tsc).args(["--noEmit", "--strict", "--lib", "es2022"]).arg(&declarations).output().unwrap();
    assert!(strict.status.success(), "{}", String::from_utf8_lossy(&strict.stdout));
}

/// The Python helper's type hints hold for its users: the helper (marked `py.typed`) and the example Python
/// plugins type-check with mypy (installed by `./dev setup`), as an editor checks a modder's plugin.
#[test]
fn the_python_helpers_types_check_the_example_plugins() {
    let root = repository();
    let mypy = root.join("toolchains/python/venv/bin/mypy");
    assert!(mypy.is_file(), "{} is not installed: run ./dev setup", mypy.display());
    assert!(root.join("guest-sdk/python/gamefeature/py.typed").is_file());
    let mut plugins: Vec<PathBuf> = std::fs::read_dir(root.join("plugins"))
        .unwrap()
        .map(|entry| entry.unwrap().path().join("plugin.py"))
        .filter(|path| path.is_file())
        .collect();
    plugins.sort();
    assert!(!plugins.is_empty(), "the examples include a Python plugin");
    let cache = tempfile::tempdir().unwrap();
    // One plugin at a time: every plugin's module is `plugin`, and mypy checks one module of a name per run.
    for plugin in &plugins {
        let checked = Command::new(&mypy)
            // The bindings componentize-py generates at build time (`wit_world`) are not there to read; a
            // plugin's hooks carry no annotations, and are checked all the same.
            .args(["--ignore-missing-imports", "--check-untyped-defs", "--no-color-output", "--cache-dir"])
            .arg(cache.path())
            .arg(root.join("guest-sdk/python/gamefeature"))
            .arg(plugin)
            .env("MYPYPATH", root.join("guest-sdk/python"))
            .output()
            .unwrap();
        assert!(checked.status.success(), "{}: {}", plugin.display(), String::from_utf8_lossy(&checked.stdout));
    }
}

/// The helper library type-checks strictly (`mypy --strict`) against the WIT bindings committed for type checkers
/// in `guest-sdk/python/wit-bindings`, which are exactly what componentize-py generates (bless with
/// `GAMEFEATURE_BLESS=1`): a modder's strict check reports their plugin's errors, never the helper's.
#[test]
fn the_python_helper_is_strictly_typed_against_the_bindings_it_ships_for_checkers() {
    let root = repository();
    let generated = tempfile::tempdir().unwrap();
    let bindings = Command::new(root.join("toolchains/python/venv/bin/componentize-py"))
        .arg("-d")
        .arg(root.join("wit/0.2.0"))
        .args(["-w", "game-feature", "bindings"])
        .arg(generated.path())
        .output()
        .expect("componentize-py (./dev setup installs it)");
    assert!(bindings.status.success(), "{}", String::from_utf8_lossy(&bindings.stderr));
    let committed = root.join("guest-sdk/python/wit-bindings");
    if std::env::var("GAMEFEATURE_BLESS").is_ok_and(|b| b == "1") {
        let _ = std::fs::remove_dir_all(&committed);
        copy_tree(generated.path(), &committed);
    }
    assert_eq!(tree(&committed), tree(generated.path()), "{} is stale: GAMEFEATURE_BLESS=1", committed.display());

    let cache = tempfile::tempdir().unwrap();
    let checked = Command::new(root.join("toolchains/python/venv/bin/mypy"))
        .args(["--strict", "--no-color-output", "--cache-dir"])
        .arg(cache.path())
        .args(["-p", "gamefeature"])
        .env("MYPYPATH", format!("{}:{}", root.join("guest-sdk/python").display(), committed.display()))
        .output()
        .unwrap();
    assert!(checked.status.success(), "{}", String::from_utf8_lossy(&checked.stdout));
}

/// Every file under `dir` (Python's caches left out) by its path relative to it, with its contents.
fn tree(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut files = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().map(Result::unwrap) {
            let path = entry.path();
            if path.is_dir() && entry.file_name() != "__pycache__" {
                pending.push(path);
            } else if path.is_file() {
                let text = std::fs::read_to_string(&path).unwrap();
                files.insert(path.strip_prefix(dir).unwrap().to_path_buf(), text);
            }
        }
    }
    files
}

fn copy_tree(from: &Path, to: &Path) {
    for (relative, text) in tree(from) {
        let path = to.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// The code blocks of `docs/embedding.md` are pieces of the example game `cargo test` plays
/// (`host/examples/embedded_game.rs`, its experience beside it), verbatim: the guide cannot show code that does
/// not run.
#[test]
fn the_embedding_guide_shows_the_example_that_plays() {
    let root = repository();
    let guide = std::fs::read_to_string(root.join("docs/embedding.md")).unwrap();
    let example = std::fs::read_to_string(root.join("host/examples/embedded_game.rs")).unwrap();
    let experience = std::fs::read_to_string(root.join("host/examples/embedded_game.toml")).unwrap();
    let mut blocks = Vec::new();
    let mut lines = guide.lines();
    while let Some(line) = lines.next() {
        let Some(language) = line.strip_prefix("```").filter(|l| ["rust", "toml"].contains(l)) else { continue };
        let block: Vec<&str> = lines.by_ref().take_while(|l| !l.starts_with("```")).collect();
        blocks.push((language.to_string(), block.join("\n")));
    }
    assert!(blocks.len() >= 7, "the guide walks through the example: {} code blocks", blocks.len());
    for (language, block) in blocks {
        let source = if language == "rust" { &example } else { &experience };
        assert!(source.contains(&block), "docs/embedding.md shows code the example does not hold:\n{block}");
    }
}
