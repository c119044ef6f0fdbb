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
    /// Actor classes this experience adds, with their parents, declared in this order.
    pub classes: Vec<(String, String)>,
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
        let text =
            tokio::fs::read_to_string(path).await.map_err(|e| error(path, format!("cannot read experience: {e}")))?;
        let file: ExperienceFile =
            toml::from_str(&text).map_err(|e| error(path, format!("malformed TOML: {}", e.to_string().trim_end())))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        check_feature_names(&file.experience.features).map_err(|p| error(path, p))?;
        check_bundle_paths(dir, &file.bundles).map_err(|p| error(path, p))?;
        let mut action_sets = Vec::new();
        for relative in &file.experience.action_sets {
            let set_path = resolve_within(dir, relative).map_err(|e| error(path, format!("action set: {e}")))?;
            let text = read_within(dir, relative)
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
            classes: file.classes.into_iter().collect(),
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
