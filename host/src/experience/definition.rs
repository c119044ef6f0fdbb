//! Experience definitions: which features to enable, which actions to run, which bundles to load.
//!
//! An experience is a TOML file (Lyra's `ULyraExperienceDefinition`); action sets are separate, reusable TOML
//! files it names (Lyra's `ULyraExperienceActionSet`). Every path is relative to the file that names it and may
//! not leave its directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::assets::{read_within, resolve_within, BundleDeclarations};
use crate::feature::{is_valid_plugin_name, ActionDef};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct ExperienceFile {
    experience: ExperienceSection,
    #[serde(default)]
    pawn_data: Option<PawnData>,
    #[serde(default)]
    classes: BTreeMap<String, String>,
    /// Creation policies that override the plugins' (`[component-creation]`, class = "never"|"lazy"|"always").
    #[serde(default)]
    component_creation: BTreeMap<String, crate::world::CreationPolicy>,
    #[serde(default)]
    actions: Vec<ActionDef>,
    #[serde(default)]
    bundles: BundleDeclarations,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct ExperienceSection {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    features: Vec<String>,
    #[serde(default)]
    action_sets: Vec<String>,
    #[serde(default)]
    init_states: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct ActionSetFile {
    action_set: ActionSetSection,
    #[serde(default)]
    actions: Vec<ActionDef>,
    #[serde(default)]
    bundles: BundleDeclarations,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct ActionSetSection {
    name: String,
    #[serde(default)]
    features: Vec<String>,
}

/// What a player's pawn is, as Lyra's `ULyraPawnData`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct PawnData {
    pub pawn_class: String,
}

/// A reusable bundle of features, actions and assets that experiences share.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionSet {
    pub name: String,
    pub path: PathBuf,
    pub features: Vec<String>,
    pub actions: Vec<ActionDef>,
    pub bundles: BundleDeclarations,
}

/// A validated experience with its action sets read.
#[derive(Debug, Clone, PartialEq)]
pub struct ExperienceDefinition {
    pub name: String,
    pub description: String,
    pub path: PathBuf,
    pub features: Vec<String>,
    pub action_sets: Vec<ActionSet>,
    pub pawn_data: Option<PawnData>,
    /// Actor classes this experience adds, with their parents, each after its parent when the experience
    /// declares both (whatever their order in the file).
    pub classes: Vec<(String, String)>,
    /// Component creation policies overriding the plugins' declarations.
    pub component_creation: BTreeMap<String, crate::world::CreationPolicy>,
    pub actions: Vec<ActionDef>,
    pub bundles: BundleDeclarations,
    /// The world's ordered init states, when the experience replaces Lyra's.
    pub init_states: Option<Vec<String>>,
}

/// An experience or action-set file that could not be accepted, naming the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {problem}", path.display())]
pub struct DefinitionError {
    pub path: PathBuf,
    pub problem: String,
}

impl ExperienceDefinition {
    /// The directory relative paths in the experience are resolved against.
    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }

    /// Reads an experience and the action sets it names.
    pub async fn load(path: &Path) -> Result<Self, DefinitionError> {
        let error = |path: &Path, problem: String| DefinitionError { path: path.to_path_buf(), problem };
        let text = crate::files::read_text(path, crate::files::MAX_TEXT_FILE_BYTES)
            .map_err(|e| error(path, format!("cannot read experience: {e}")))?;
        let file: ExperienceFile =
            toml::from_str(&text).map_err(|e| error(path, format!("malformed TOML: {}", e.to_string().trim_end())))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        check_feature_names(&file.experience.features).map_err(|p| error(path, p))?;
        check_bundle_paths(dir, &file.bundles).map_err(|p| error(path, p))?;
        let classes = parents_first(file.classes).map_err(|p| error(path, p))?;
        let mut action_sets = Vec::new();
        for relative in &file.experience.action_sets {
            let set_path = resolve_within(dir, relative).map_err(|e| error(path, format!("action set: {e}")))?;
            let text = read_within(dir, relative, crate::files::MAX_TEXT_FILE_BYTES)
                .map_err(|e| error(path, format!("action set {}: cannot read it: {e}", set_path.display())))?;
            let set = parse_action_set(&set_path, &text).map_err(|e| error(path, format!("action set {e}")))?;
            action_sets.push(set);
        }
        Ok(ExperienceDefinition {
            name: file.experience.name,
            description: file.experience.description,
            path: path.to_path_buf(),
            features: file.experience.features,
            action_sets,
            pawn_data: file.pawn_data,
            classes,
            component_creation: file.component_creation,
            actions: file.actions,
            bundles: file.bundles,
            init_states: file.experience.init_states,
        })
    }

    /// Every feature to enable, from the experience then its action sets, each once (Lyra's `AddUnique`).
    pub fn all_features(&self) -> Vec<String> {
        let mut all: Vec<String> = Vec::new();
        let named = self.features.iter().chain(self.action_sets.iter().flat_map(|s| &s.features));
        for name in named {
            if !all.contains(name) {
                all.push(name.clone());
            }
        }
        all
    }
}

fn parse_action_set(path: &Path, bytes: &[u8]) -> Result<ActionSet, DefinitionError> {
    let error = |problem: String| DefinitionError { path: path.to_path_buf(), problem };
    let text = std::str::from_utf8(bytes).map_err(|e| error(format!("action set is not UTF-8: {e}")))?;
    let file: ActionSetFile =
        toml::from_str(text).map_err(|e| error(format!("malformed TOML: {}", e.to_string().trim_end())))?;
    check_feature_names(&file.action_set.features).map_err(error)?;
    check_bundle_paths(path.parent().unwrap_or(Path::new(".")), &file.bundles).map_err(error)?;
    Ok(ActionSet {
        name: file.action_set.name,
        path: path.to_path_buf(),
        features: file.action_set.features,
        actions: file.actions,
        bundles: file.bundles,
    })
}

/// Orders classes so that a class whose parent the same file declares comes after it, whatever their order in
/// the file; a parent the file does not declare is left for the world to resolve (a built-in class, or an
/// unknown one it reports). Classes that are their own ancestors are refused, naming the cycle.
fn parents_first(classes: BTreeMap<String, String>) -> Result<Vec<(String, String)>, String> {
    let mut ordered = Vec::with_capacity(classes.len());
    let mut waiting: BTreeMap<String, String> = classes;
    // Each pass places every class whose parent is no longer waiting; a pass placing none leaves only cycles.
    while !waiting.is_empty() {
        let ready: Vec<String> =
            waiting.iter().filter(|(_, parent)| !waiting.contains_key(*parent)).map(|(c, _)| c.clone()).collect();
        if ready.is_empty() {
            return Err(class_cycle(&waiting));
        }
        for class in ready {
            let parent = waiting.remove(&class).expect("ready classes are waiting");
            ordered.push((class, parent));
        }
    }
    Ok(ordered)
}

/// Describes one cycle among classes that all wait on each other, starting from the first by name.
fn class_cycle(waiting: &BTreeMap<String, String>) -> String {
    let start = waiting.keys().next().expect("a cycle has classes");
    let mut path = vec![start.as_str()];
    let mut current = &waiting[start];
    while !path.contains(&current.as_str()) {
        path.push(current);
        current = &waiting[current];
    }
    let from = path.iter().position(|c| *c == current).expect("the walk ended on a visited class");
    let mut cycle: Vec<&str> = path[from..].to_vec();
    cycle.push(current);
    format!("[classes] form a cycle: {}", cycle.join(" -> "))
}

fn check_feature_names(features: &[String]) -> Result<(), String> {
    match features.iter().find(|f| !is_valid_plugin_name(f)) {
        Some(bad) => Err(format!("{bad:?} is not a valid feature name")),
        None => Ok(()),
    }
}

fn check_bundle_paths(dir: &Path, bundles: &BundleDeclarations) -> Result<(), String> {
    for relative in bundles.values().flat_map(|b| b.values()) {
        resolve_within(dir, relative).map_err(|e| format!("bundle: {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(c, p)| (c.to_string(), p.to_string())).collect()
    }

    #[test]
    fn a_class_comes_after_its_parent_whatever_the_order_of_names() {
        let ordered = parents_first(classes(&[("ZBase", "Pawn"), ("AChild", "ZBase"), ("MGrand", "AChild")])).unwrap();
        let names: Vec<&str> = ordered.iter().map(|(c, _)| c.as_str()).collect();
        assert_eq!(names, ["ZBase", "AChild", "MGrand"]);
    }

    #[test]
    fn a_cycle_is_refused_naming_it() {
        let error = parents_first(classes(&[("A", "B"), ("B", "C"), ("C", "A"), ("D", "Pawn")])).unwrap_err();
        assert_eq!(error, "[classes] form a cycle: A -> B -> C -> A");
        let error = parents_first(classes(&[("Self", "Self")])).unwrap_err();
        assert_eq!(error, "[classes] form a cycle: Self -> Self");
    }

    #[test]
    fn a_parent_the_file_does_not_declare_is_left_to_the_world() {
        let ordered = parents_first(classes(&[("Hero", "Nowhere")])).unwrap();
        assert_eq!(ordered, [("Hero".to_string(), "Nowhere".to_string())]);
    }

    #[tokio::test]
    async fn an_experience_declares_classes_in_any_order() {
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("e.toml");
        std::fs::write(&path, "[experience]\nname = \"e\"\n[classes]\nZBase = \"Pawn\"\nAChild = \"ZBase\"\n").unwrap();
        let definition = ExperienceDefinition::load(&path).await.unwrap();
        let mut world = crate::world::World::new("w", crate::world::NetMode::Standalone);
        for (class, parent) in &definition.classes {
            world.declare_class(class, parent).unwrap();
        }
        assert!(world.classes.is_a("AChild", "Pawn"));
    }
}
