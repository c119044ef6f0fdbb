//! Experience definitions: which features to enable, which actions to run, which bundles to load.
//!
//! An experience is a TOML file (Lyra's `ULyraExperienceDefinition`); action sets are separate, reusable TOML
//! files it names (Lyra's `ULyraExperienceActionSet`). Every path is relative to the file that names it and may
//! not leave its directory.
//!
//! An error quoting the file (a name, a path, a TOML error's line) quotes it cut and escaped
//! ([`crate::text::shown`]): a 100 kB name, or one holding terminal controls, is an error of one short line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::assets::{read_within, resolve_within, BundleDeclarations};
use crate::feature::{is_valid_plugin_name, ActionDef};
use crate::text::{is_printable, shown, MAX_CAUSE, MAX_NAME};

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
    /// The actor class players' pawns spawn as (`pawn-class`): one of the game's classes or one the experience
    /// declares.
    pub pawn_class: String,
}

/// A reusable bundle of features, actions and assets that experiences share.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionSet {
    /// The set's name, from its `[action-set]` section.
    pub name: String,
    /// The set's file, as resolved against the directory of the experience naming it.
    pub path: PathBuf,
    /// Plugins the set enables, added to the experience's own.
    pub features: Vec<String>,
    /// Built-in actions the set runs after the features' actions, as the experience's own do.
    pub actions: Vec<ActionDef>,
    /// The set's asset bundles, with paths relative to the set's own directory.
    pub bundles: BundleDeclarations,
}

/// A validated experience with its action sets read.
#[derive(Debug, Clone, PartialEq)]
pub struct ExperienceDefinition {
    /// The experience's name, from its `[experience]` section.
    pub name: String,
    /// A free text describing the experience; empty when the file gives none.
    pub description: String,
    /// The experience file read; relative paths in it are resolved against its directory
    /// ([`dir`](ExperienceDefinition::dir)).
    pub path: PathBuf,
    /// Plugins the experience enables (its `features`), in the file's order;
    /// [`all_features`](ExperienceDefinition::all_features) adds its action sets'.
    pub features: Vec<String>,
    /// The action sets the experience names (`action-sets`), each read, in the file's order.
    pub action_sets: Vec<ActionSet>,
    /// What players' pawns are; `None` leaves them `Character`.
    pub pawn_data: Option<PawnData>,
    /// Actor classes this experience adds, with their parents, each after its parent when the experience
    /// declares both (whatever their order in the file).
    pub classes: Vec<(String, String)>,
    /// Component creation policies overriding the plugins' declarations.
    pub component_creation: BTreeMap<String, crate::world::CreationPolicy>,
    /// Built-in actions the experience runs itself, after every feature's actions, and undoes at end of play.
    pub actions: Vec<ActionDef>,
    /// The experience's asset bundles, with paths relative to its directory.
    pub bundles: BundleDeclarations,
    /// The world's ordered init states, when the experience replaces Lyra's.
    pub init_states: Option<Vec<String>>,
}

/// An experience or action-set file that could not be accepted, naming the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {problem}", path.display())]
pub struct DefinitionError {
    /// The experience file refused (a fault in one of its action sets names the set in the problem).
    pub path: PathBuf,
    /// What is wrong with it; whatever it quotes from the file is cut and escaped.
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
        let file: ExperienceFile = toml::from_str(&text).map_err(|e| error(path, malformed(&e)))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        check_feature_names(&file.experience.features).map_err(|p| error(path, p))?;
        if let Some(states) = &file.experience.init_states {
            check_init_states(states).map_err(|p| error(path, p))?;
        }
        check_bundle_paths(dir, &file.bundles).map_err(|p| error(path, p))?;
        let classes = parents_first(file.classes).map_err(|p| error(path, p))?;
        let mut action_sets = Vec::new();
        for relative in &file.experience.action_sets {
            let set_path = resolve_within(dir, relative).map_err(|e| error(path, format!("action set: {e}")))?;
            let text = read_within(dir, relative, crate::files::MAX_TEXT_FILE_BYTES).map_err(|e| {
                error(
                    path,
                    format!("action set {}: cannot read it: {e}", shown(&set_path.display().to_string(), MAX_CAUSE)),
                )
            })?;
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

    /// Every file the experience is made of, by path relative to its folder: the experience file first, then
    /// each action set, then the bundle files the experience and its action sets declare — what a client needs
    /// beside the plugins to play it. Each path stays inside the folder (checked when the files were read).
    pub fn files(&self) -> Vec<String> {
        let dir = self.dir();
        let relative = |path: &Path| path.strip_prefix(dir).ok().and_then(|p| p.to_str()).map(str::to_string);
        let mut files: Vec<String> = Vec::new();
        let mut add = |path: Option<String>| {
            if let Some(path) = path.filter(|p| !files.contains(p)) {
                files.push(path);
            }
        };
        add(self.path.file_name().and_then(|n| n.to_str()).map(str::to_string));
        for set in &self.action_sets {
            add(relative(&set.path));
        }
        for (base, bundles) in std::iter::once((dir, &self.bundles))
            .chain(self.action_sets.iter().map(|set| (set.path.parent().unwrap_or(dir), &set.bundles)))
        {
            for file in bundles.values().flat_map(|bundle| bundle.values()) {
                add(relative(&base.join(file)));
            }
        }
        files
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
    let file: ActionSetFile = toml::from_str(text).map_err(|e| error(malformed(&e)))?;
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
    let mut cycle: Vec<String> = path[from..].iter().map(|class| shown(class, MAX_NAME)).collect();
    cycle.push(shown(current, MAX_NAME));
    // Each class cut, and the whole cut too: a cycle of ten thousand classes is still one line.
    format!("[classes] form a cycle: {}", shown(&cycle.join(" -> "), MAX_CAUSE))
}

/// A TOML error, whose message quotes the offending line of the file, with each of its lines cut and escaped.
fn malformed(error: &toml::de::Error) -> String {
    let message = error.to_string();
    let lines: Vec<String> = message.trim_end().lines().map(|line| shown(line, MAX_CAUSE)).collect();
    format!("malformed TOML: {}", lines.join("\n"))
}

fn check_feature_names(features: &[String]) -> Result<(), String> {
    match features.iter().find(|f| !is_valid_plugin_name(f)) {
        Some(bad) => Err(format!("{:?} is not a valid feature name", shown(bad, MAX_NAME))),
        None => Ok(()),
    }
}

/// An experience's own init-state list: each state once (a state twice would have two places in the order,
/// and walks and comparisons one of them), each a name plugins can pass (1 to [`MAX_NAME`] bytes, no control
/// characters), and at most 255 of them (a state's ordinal is a byte).
fn check_init_states(states: &[String]) -> Result<(), String> {
    if states.is_empty() || states.len() > usize::from(u8::MAX) {
        return Err(format!("init-states needs 1 to 255 states, not {}", states.len()));
    }
    let mut seen = std::collections::BTreeSet::new();
    for state in states {
        if state.is_empty() || state.len() > MAX_NAME || !is_printable(state) {
            return Err(format!(
                "init-states: {:?} is not a valid state name (1 to {MAX_NAME} bytes, no control characters)",
                shown(state, MAX_NAME)
            ));
        }
        if !seen.insert(state.as_str()) {
            return Err(format!(
                "init-states lists {:?} more than once: each state has one place in the order",
                shown(state, MAX_NAME)
            ));
        }
    }
    Ok(())
}

fn check_bundle_paths(dir: &Path, bundles: &BundleDeclarations) -> Result<(), String> {
    for relative in bundles.values().flat_map(|b| b.values()) {
        resolve_within(dir, relative).map_err(|e| format!("bundle: {e}"))?;
    }
    Ok(())
}

/// For `?` into the error a game matches on: the blame, and the text as it is.
impl From<DefinitionError> for crate::error::Error {
    fn from(error: DefinitionError) -> crate::error::Error {
        crate::experience::ExperienceError::Definition(error).into()
    }
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

    /// Loads `text` as an experience file, returning its error's message.
    async fn refused(text: &str) -> String {
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("e.toml");
        std::fs::write(&path, text).unwrap();
        let error = ExperienceDefinition::load(&path).await.unwrap_err();
        assert_eq!(error.path, path);
        error.problem
    }

    /// A name quoted from the file is cut and escaped: an error is one short line whatever the file holds.
    #[tokio::test]
    async fn an_invalid_feature_name_is_quoted_cut_and_escaped() {
        let huge = "Bad".repeat(100_000 / 3);
        let problem = refused(&format!("[experience]\nname = \"e\"\nfeatures = [\"ok\", \"{huge}\"]\n")).await;
        assert!(problem.len() < MAX_NAME + 100, "{} bytes: {}", problem.len(), &problem[..200]);
        assert!(problem.starts_with("\"BadBad") && problem.contains("[cut]"), "{problem}");
        assert!(problem.ends_with("is not a valid feature name"), "{problem}");

        let problem = refused("[experience]\nname = \"e\"\nfeatures = [\"a\\u001b[2J\\u202eb\\n\"]\n").await;
        assert_eq!(problem, "\"a\\\\u{1b}[2J\\\\u{202e}b\\\\n\" is not a valid feature name");
        assert!(!problem.contains(['\u{1b}', '\u{202e}', '\n']), "{problem}");

        // An action set's features likewise.
        let dir = tempfile::TempDir::new().unwrap();
        std::fs::write(dir.path().join("set.toml"), format!("[action-set]\nname = \"s\"\nfeatures = [\"{huge}\"]\n"))
            .unwrap();
        let path = dir.path().join("e.toml");
        std::fs::write(&path, "[experience]\nname = \"e\"\naction-sets = [\"set.toml\"]\n").unwrap();
        let problem = ExperienceDefinition::load(&path).await.unwrap_err().to_string();
        assert!(problem.len() < MAX_NAME + 300, "{} bytes", problem.len());
        assert!(problem.ends_with("is not a valid feature name"), "{problem}");
    }

    #[tokio::test]
    async fn a_class_cycle_of_long_names_is_one_short_line() {
        let (a, b) = ("A".repeat(50_000), "B\u{202e}".repeat(20_000));
        let problem =
            refused(&format!("[experience]\nname = \"e\"\n[classes]\n\"{a}\" = \"{b}\"\n\"{b}\" = \"{a}\"\n")).await;
        assert!(problem.len() < MAX_CAUSE + 100, "{} bytes", problem.len());
        assert!(problem.starts_with("[classes] form a cycle: AAA") && problem.contains("[cut]"), "{problem}");
        assert!(!problem.contains('\u{202e}'), "{problem}");
        // A cycle of ten thousand short names is cut as a whole.
        let names: Vec<String> = (0..10_000).map(|i| format!("C{i}")).collect();
        let ring: BTreeMap<String, String> =
            names.iter().enumerate().map(|(i, c)| (c.clone(), names[(i + 1) % names.len()].clone())).collect();
        let problem = parents_first(ring).unwrap_err();
        assert!(problem.len() < MAX_CAUSE + 100 && problem.ends_with("[cut]"), "{problem}");
    }

    /// The TOML parser's message quotes the line it stopped on: a 100 kB line is cut, its controls escaped.
    #[tokio::test]
    async fn a_malformed_line_is_quoted_cut() {
        let problem = refused(&format!("[experience]\nname = \"e\"\u{202e} {}\n", "x".repeat(100_000))).await;
        assert!(problem.starts_with("malformed TOML: "), "{problem}");
        assert!(problem.len() < 8 * MAX_CAUSE, "{} bytes", problem.len());
        assert!(problem.contains("[cut]") && problem.contains("\\u{202e}"), "{problem}");
        assert!(!problem.contains('\u{202e}'), "{problem}");
    }

    #[tokio::test]
    async fn init_states_are_each_listed_once_and_named_plainly() {
        let load = |states: &str| refused_or_states(format!("[experience]\nname = \"e\"\ninit-states = {states}\n"));
        assert_eq!(load(r#"["A", "B", "C"]"#).await, Ok(vec!["A".into(), "B".into(), "C".into()]));
        let duplicate = load(r#"["A", "A", "B"]"#).await.unwrap_err();
        assert_eq!(duplicate, "init-states lists \"A\" more than once: each state has one place in the order");
        let duplicate = load(r#"["A", "B", "C", "B"]"#).await.unwrap_err();
        assert!(duplicate.starts_with("init-states lists \"B\" more than once"), "{duplicate}");
        let long = load(&format!(r#"["A", "{}"]"#, "S".repeat(100_000))).await.unwrap_err();
        assert!(long.len() < MAX_NAME + 200 && long.contains("[cut]"), "{long}");
        let bad = load(r#"["A", "B\u202eC"]"#).await.unwrap_err();
        assert!(bad.contains("\"B\\\\u{202e}C\" is not a valid state name"), "{bad}");
        assert!(load(r#"["A", ""]"#).await.unwrap_err().contains("not a valid state name"));
        assert!(load("[]").await.unwrap_err().contains("1 to 255 states, not 0"));
        let too_many: Vec<String> = (0..256).map(|i| format!("\"S{i}\"")).collect();
        assert!(load(&format!("[{}]", too_many.join(", "))).await.unwrap_err().contains("not 256"));
    }

    async fn refused_or_states(text: String) -> Result<Vec<String>, String> {
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("e.toml");
        std::fs::write(&path, text).unwrap();
        match ExperienceDefinition::load(&path).await {
            Ok(definition) => Ok(definition.init_states.unwrap()),
            Err(error) => Err(error.problem),
        }
    }
}
