//! The guard table (`gamefeature_tests::guard_table`) against the WIT packages the host implements, and the
//! guards it lists shown function by function: a new import or export without an entry, or with a guard no
//! test shows, fails here.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use gamefeature_tests::guard_table::{Entry, Guard, TABLE};
use gamefeature_tests::hostile::*;
use gamefeature_tests::*;

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The released and unreleased WIT versions in `wit/`.
fn wit_versions() -> Vec<String> {
    let mut versions: Vec<String> = std::fs::read_dir(repository().join("wit"))
        .unwrap()
        .map(|entry| entry.unwrap())
        .filter(|entry| entry.path().is_dir())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    versions.sort();
    versions
}

/// Every function (`interface.function`) and resource (`interface.resource`, for its drop) the world of one
/// WIT version imports or exports.
fn wit_functions(version: &str) -> BTreeSet<String> {
    let mut resolve = wit_parser::Resolve::default();
    let (package, _) = resolve.push_dir(repository().join("wit").join(version)).unwrap();
    let world = resolve.select_world(&[package], Some("game-feature")).unwrap();
    let world = &resolve.worlds[world];
    let mut functions = BTreeSet::new();
    for item in world.imports.values().chain(world.exports.values()) {
        let wit_parser::WorldItem::Interface { id, .. } = item else { continue };
        let interface = &resolve.interfaces[*id];
        let name = interface.name.clone().unwrap_or_default();
        for function in interface.functions.keys() {
            functions.insert(format!("{name}.{function}"));
        }
        for (type_name, ty) in &interface.types {
            if matches!(resolve.types[*ty].kind, wit_parser::TypeDefKind::Resource) {
                functions.insert(format!("{name}.{type_name}"));
            }
        }
    }
    functions
}

fn entries_of(version: &str) -> impl Iterator<Item = &'static Entry> + '_ {
    TABLE.iter().filter(move |entry| entry.version == version)
}

#[test]
fn the_table_lists_every_function_of_every_wit_version_and_nothing_else() {
    let versions = wit_versions();
    let listed: BTreeSet<&str> = TABLE.iter().map(|entry| entry.version).collect();
    assert_eq!(listed.into_iter().collect::<Vec<_>>(), versions, "versions in the table and in wit/");
    for version in &versions {
        let in_wit = wit_functions(version);
        let in_table: BTreeSet<String> = entries_of(version).map(|entry| entry.function.to_string()).collect();
        let missing: Vec<&String> = in_wit.difference(&in_table).collect();
        let stale: Vec<&String> = in_table.difference(&in_wit).collect();
        assert!(missing.is_empty(), "{version}: functions without a guard entry: {missing:#?}");
        assert!(stale.is_empty(), "{version}: entries for functions {version} does not have: {stale:#?}");
        assert_eq!(entries_of(version).count(), in_table.len(), "{version}: a function listed twice");
    }
    let newest = versions.last().unwrap();
    for entry in TABLE.iter().filter(|entry| entry.version != newest) {
        for guard in entry.guards {
            let served_by = match guard {
                Guard::Adapted => entry.function,
                Guard::AdaptedTo(function) => function,
                other => panic!(
                    "{} {}: an older version's function is served by the newest: {other:?}",
                    entry.version, entry.function
                ),
            };
            assert!(
                entries_of(newest).any(|e| e.function == served_by),
                "{} {} is served by {newest}'s {served_by}, which is not in the table",
                entry.version,
                entry.function
            );
        }
    }
    for entry in entries_of(newest) {
        assert!(!entry.guards.is_empty(), "{}: no guard", entry.function);
    }
}

/// Every test named by an `Export` guard exists: a plugin misbehaving in that export is shown stopped.
#[test]
fn every_export_names_a_test_that_exists() {
    let sources: String = ["tests/tests", "gfhost/tests"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(repository().join(dir)).unwrap())
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "rs"))
        .map(|path| std::fs::read_to_string(path).unwrap())
        .collect();
    for entry in TABLE {
        for guard in entry.guards {
            if let Guard::Export(test) = guard {
                let defined = sources.contains(&format!("fn {test}(")) || sources.contains(&format!("{test}: \""));
                assert!(defined, "{} {}: no test {test}", entry.version, entry.function);
            }
        }
    }
}

/// Every import that takes a name checks it the same way (one guarded entry point): a name with a control
/// character and a megabyte-long one are refused by each import the table says takes names.
#[tokio::test]
async fn every_import_taking_names_refuses_bad_ones() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile(&plugins, "bad-names");
    let (_, warnings) = tolerated(&session(&plugins), "bad-names").await;
    let verdicts: Vec<&String> = warnings.iter().filter(|l| l.contains(" name in ")).collect();
    let accepted: Vec<&&String> = verdicts.iter().filter(|l| !l.ends_with("refused")).collect();
    assert!(accepted.is_empty(), "{accepted:#?}");
    for entry in entries_of("0.2.0").filter(|entry| entry.has(Guard::Names)) {
        for kind in ["control", "huge"] {
            let tried = format!("{kind} name in {}", entry.name());
            assert!(verdicts.iter().any(|l| l.starts_with(&tried)), "{tried} was not tried: {verdicts:#?}");
        }
    }
    // A batch import's parallel lists of different lengths are refused whole, and a name not sent.
    for entry in entries_of("0.2.0").filter(|entry| entry.has(Guard::Batch)) {
        for tried in [format!("uneven lists in {}", entry.name()), format!("unsent name in {}", entry.name())] {
            let line = warnings.iter().find(|l| l.starts_with(&tried));
            assert!(line.is_some_and(|l| l.ends_with("refused")), "{tried}: {warnings:#?}");
        }
    }
}

/// An actor on its way out (destroyed, its handlers not all told) answers queries, and every import the
/// table says changes one actor refuses it: nothing is added to it, nothing revives it.
#[tokio::test]
async fn every_change_of_an_actor_on_its_way_out_is_refused() {
    let plugins = PluginDir::with(&[]);
    hostile(&plugins, "pending-kill");
    let session = session(&plugins);
    let mut manager = hostile_alone(&session).await;
    let outcomes = Outcomes::of(&session, "pending-kill");
    for query in ["actor-class", "components-of"] {
        assert_eq!(outcomes.of_import(query), "accepted", "{query}");
    }
    let changes: Vec<&Entry> = entries_of("0.2.0").filter(|entry| entry.has(Guard::ActorChange)).collect();
    for change in &changes {
        let said = outcomes.of_import(change.name());
        assert!(said.starts_with("refused Error::UnknownActor("), "{}: {said}", change.name());
    }
    assert_eq!(outcomes.lines.len(), changes.len() + 2, "{:#?}", outcomes.lines);
    {
        // The pawn is gone, and nothing of it stayed behind.
        let w = gamefeature_host::world::lock(manager.world());
        assert_eq!(w.actors_of_class("Pawn").unwrap(), []);
        assert_eq!((w.live_watches(), w.live_features()), (0, 0));
    }
    assert_eq!(manager.live_features(), ["hostile"]);
    manager.end_play().await.unwrap();
}

/// Every import the table says needs a permission refuses a plugin that was not granted it, as `denied`.
#[tokio::test]
async fn every_import_needing_a_permission_refuses_a_plugin_without_it() {
    let plugins = PluginDir::with(&[]);
    let manifest = hostile_manifest("hostile");
    let ungranted = &manifest[..manifest.find("[permissions]").unwrap()];
    let folder = plugins.add_custom(
        "hostile",
        &format!("{ungranted}[bundles.Equipped]\nbehaviour = \"behaviour.txt\"\n"),
        Some(&HOSTILE),
    );
    std::fs::write(folder.join("behaviour.txt"), "ungranted").unwrap();
    let session = session(&plugins);
    let mut manager = hostile_alone(&session).await;
    let outcomes = Outcomes::of(&session, "ungranted");
    for entry in entries_of("0.2.0").filter(|e| e.guards.iter().any(|g| matches!(g, Guard::Permission(_)))) {
        let said = outcomes.of_import(entry.name());
        assert!(said.starts_with("refused Error::Denied("), "{}: {said}", entry.name());
    }
    manager.end_play().await.unwrap();
}
