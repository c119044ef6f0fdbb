//! The library's concepts depend on each other in one direction only: the modules under `host/src` (a folder
//! or a file each: `world`, `feature`, `runtime`, `experience`, `net`, ...) form no cycle through their
//! `crate::` paths. A cycle is how "two homes for one concept" starts; this test names it, with the files that
//! close it, the moment it appears. Comments and test modules are not read: a test may reach anywhere.
//!
//! Run it alone: `cargo test -p gamefeature-host --test architecture`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// The concept a file belongs to: the first part of its path under `src/` (`world/clock.rs` -> `world`).
fn concept_of(relative: &Path) -> String {
    let first = relative.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
    first.trim_end_matches(".rs").to_string()
}

/// The code of a file that ships: without comments, and without the items marked `#[cfg(test)]` (a test
/// module, a helper only tests use), each skipped to the end of its braces or its `;`.
fn shipped_code(text: &str) -> String {
    let mut code = String::new();
    let mut skipping: Option<(i64, bool)> = None;
    for line in text.lines() {
        let line = line.split("//").next().unwrap_or_default();
        if line.trim() == "#[cfg(test)]" {
            skipping = Some((0, false));
            continue;
        }
        if let Some((depth, opened)) = skipping.as_mut() {
            *depth += line.matches('{').count() as i64 - line.matches('}').count() as i64;
            *opened |= line.contains('{');
            if (*opened && *depth <= 0) || (!*opened && line.trim_end().ends_with(';')) {
                skipping = None;
            }
            continue;
        }
        code.push_str(line);
        code.push('\n');
    }
    code
}

/// The concepts a piece of code names through `crate::`.
fn named_concepts(code: &str) -> BTreeSet<String> {
    code.match_indices("crate::")
        .filter(|(at, _)| !code[..*at].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
        .map(|(at, _)| {
            let rest = &code[at + "crate::".len()..];
            rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>()
        })
        .filter(|name| !name.is_empty())
        .collect()
}

/// The items `lib.rs` re-exports at the crate's root (`pub use error::{Blame, Error};`), each with the module it
/// comes from: `crate::Error` names the `error` concept.
fn root_reexports(lib: &str) -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    for statement in lib.split(';').map(str::trim).filter_map(|s| s.strip_prefix("pub use ")) {
        let Some((module, items)) = statement.split_once("::") else { continue };
        let items = items.trim().trim_start_matches('{').trim_end_matches('}');
        for item in items.split(',').map(|i| i.trim().rsplit("::").next().unwrap_or_default()) {
            if !item.is_empty() {
                found.insert(item.to_string(), module.trim().to_string());
            }
        }
    }
    found
}

/// A cycle in `edges`, as the concepts along it, if there is one.
fn find_cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|n| n == node) {
            let mut cycle = path[start..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, edges, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    edges.keys().find_map(|node| visit(node, edges, &mut Vec::new(), &mut done))
}

#[test]
fn the_librarys_concepts_form_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    // concept -> concepts it names, and which files name each.
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut by: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    let reexports = root_reexports(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    assert_eq!(reexports.get("Error").map(String::as_str), Some("error"), "the scan reads lib.rs's re-exports");
    for file in &files {
        let relative = file.strip_prefix(&src).unwrap();
        let name = relative.file_name().unwrap().to_string_lossy();
        if name == "tests.rs" || name.ends_with("_tests.rs") || relative == Path::new("lib.rs") {
            continue;
        }
        let from = concept_of(relative);
        let code = shipped_code(&std::fs::read_to_string(file).unwrap());
        let named = named_concepts(&code).into_iter().map(|to| reexports.get(&to).cloned().unwrap_or(to));
        for to in named.filter(|to| *to != from) {
            by.entry((from.clone(), to.clone())).or_default().insert(relative.display().to_string());
            edges.entry(from.clone()).or_default().insert(to);
        }
    }
    assert!(edges.len() >= 8, "the scan found the library's concepts: {edges:?}");
    if let Some(cycle) = find_cycle(&edges) {
        let steps: Vec<String> = cycle
            .windows(2)
            .map(|step| format!("  {} -> {} in {:?}", step[0], step[1], by[&(step[0].clone(), step[1].clone())]))
            .collect();
        panic!("the library's concepts form a cycle: {}\n{}", cycle.join(" -> "), steps.join("\n"));
    }
}

#[test]
fn the_scan_sees_a_cycle_when_there_is_one() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    edges.entry("world".into()).or_default().insert("timeline".into());
    edges.entry("net".into()).or_default().insert("world".into());
    assert_eq!(find_cycle(&edges), None);
    edges.entry("world".into()).or_default().insert("net".into());
    assert_eq!(find_cycle(&edges), Some(vec!["net".to_string(), "world".to_string(), "net".to_string()]));
    let code =
        shipped_code("use crate::world::X; // crate::net\n/// [`crate::feature`]\n#[cfg(test)]\nuse crate::live;");
    assert_eq!(named_concepts(&code), BTreeSet::from(["world".to_string()]));
}
