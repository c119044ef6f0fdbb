//! Plugin manifests: `plugin.toml`, the data half of a plugin package.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::action::ActionDef;
use super::permissions::Permissions;
use crate::assets::{resolve_within, BundleDeclarations};
use crate::world::is_valid_class_name;

/// The newest WIT package version this host implements: what new plugins are built against.
pub const API_VERSION: &str = "0.2.0";

/// Every WIT package version this host loads, oldest first. A plugin declares the version it was built against
/// in `plugin.api`; a plugin for none of these (0.x versions are compatible within a minor version, as Cargo
/// treats them) is refused at discovery.
pub const API_VERSIONS: [&str; 2] = ["0.1.0", API_VERSION];

/// The versions this host implements, for messages: "0.1.0, 0.2.0".
pub fn api_versions_shown() -> String {
    API_VERSIONS.join(", ")
}

/// The longest plugin name: names are shown in timelines, traces and listings.
pub const MAX_PLUGIN_NAME: usize = 64;

/// The longest version and description a manifest may give.
const MAX_VERSION: usize = 64;
const MAX_DESCRIPTION: usize = 1024;

/// The manifest file name inside a plugin folder.
pub const MANIFEST_FILE: &str = "plugin.toml";

#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct ManifestFile {
    plugin: PluginSection,
    #[serde(default)]
    dependencies: Vec<Dependency>,
    #[serde(default)]
    components: ComponentsSection,
    #[serde(default)]
    actions: Vec<ActionDef>,
    #[serde(default)]
    bundles: BundleDeclarations,
    #[serde(default)]
    permissions: Permissions,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct PluginSection {
    name: String,
    version: String,
    #[serde(default)]
    description: String,
    api: String,
    component: String,
    /// The versions of the host it runs on (a semver range); any when absent.
    #[serde(default)]
    host: Option<semver::VersionReq>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct ComponentsSection {
    #[serde(default)]
    classes: Vec<String>,
    /// Replicated component classes, each with its replicated properties.
    #[serde(default)]
    replicated: std::collections::BTreeMap<String, Vec<String>>,
    /// When requested components of a class are created: "never", "lazy" or "always" (the default).
    #[serde(default)]
    creation: std::collections::BTreeMap<String, crate::world::CreationPolicy>,
}

/// Another plugin this one needs, as an entry of Unreal's `.uplugin` "Plugins" list.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Dependency {
    /// The plugin needed, by the name in its own manifest.
    pub name: String,
    /// Activate the dependency before this plugin (otherwise it is only registered).
    #[serde(default)]
    pub activate: bool,
    /// The versions of it this plugin works with (a semver range as Cargo writes them: `"^1.2"`, `">=1, <3"`);
    /// any when absent. Installing from a registry resolves it (see `package::resolve`), and a plugin whose
    /// installed dependency is outside it does not load.
    #[serde(default)]
    pub version: Option<semver::VersionReq>,
}

/// A validated manifest, with its paths resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginManifest {
    /// The plugin's name (`plugin.name`): at most 64 lowercase letters, digits and '-', starting with a letter;
    /// experiences and dependencies refer to the plugin by it.
    pub name: String,
    /// The plugin's own version (`plugin.version`), shown to users; at most 64 printable bytes.
    pub version: String,
    /// What the plugin does, for listings (`plugin.description`); empty when not given, at most 1024 printable bytes.
    pub description: String,
    /// The `gamefeature:plugin` WIT version the plugin was built against (`plugin.api`), compatible with one of
    /// [`API_VERSIONS`].
    pub api: String,
    /// The folder holding the manifest; every relative path in it is resolved against this.
    pub dir: PathBuf,
    /// The path of this `plugin.toml`: installing it twice is harmless, another plugin of the same name is refused.
    pub manifest_path: PathBuf,
    /// The plugin's Wasm component (`plugin.component`), resolved inside `dir`.
    pub component_path: PathBuf,
    /// The other plugins this one needs (`[[dependencies]]`), each listed once and never the plugin itself.
    pub dependencies: Vec<Dependency>,
    /// Component classes the plugin adds to actors.
    pub component_classes: Vec<String>,
    /// Component classes that replicate from the server to clients, each with its replicated properties; the
    /// plugin is told on clients when they change (rep-notify).
    pub replicated: std::collections::BTreeMap<String, Vec<String>>,
    /// Creation policies of component classes (an experience may override them).
    pub creation: std::collections::BTreeMap<String, crate::world::CreationPolicy>,
    /// Built-in actions (`[[actions]]`) carried out in each world where the plugin activates, and undone when it
    /// deactivates there.
    pub actions: Vec<ActionDef>,
    /// The plugin's asset bundles (`[bundles.<name>]`): bundle, then asset name, then a path inside `dir`; a world
    /// loads those of its net mode.
    pub bundles: BundleDeclarations,
    /// What the plugin asks to be allowed; the host grants some or all of it.
    pub permissions: Permissions,
    /// The host versions it runs on (`plugin.host`); any when absent.
    pub host: Option<semver::VersionReq>,
    /// Who narrowed [`permissions`](Self::permissions) below what the file asks for, when someone did (a
    /// publisher's ceiling, a client's limit for fetched plugins): the plugin's denials point there rather than
    /// at the host's grants.
    limited_by: Option<String>,
}

/// Why a manifest was refused. Displayed with the file it came from by [`ManifestError`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManifestProblem {
    /// The file could not be read (missing, not a regular file, too large or not UTF-8); the reason.
    #[error("cannot read it: {0}")]
    Unreadable(String),
    /// The file is not TOML, or not in the manifest's shape (an unknown key, a missing one, a wrong type); the
    /// parser's message.
    #[error("malformed TOML: {0}")]
    Malformed(String),
    /// The plugin name is too long or has characters other than lowercase letters, digits and '-'; the name given.
    #[error(
        "plugin name {:?} must be at most {MAX_PLUGIN_NAME} lowercase letters, digits and '-', starting with a \
         letter",
        crate::text::shown(.0, MAX_PLUGIN_NAME)
    )]
    InvalidName(String),
    /// `plugin.version` or `plugin.description` is too long or holds control characters.
    #[error("{field} must be at most {max} bytes without control characters")]
    InvalidText {
        /// The key at fault: `plugin.version` or `plugin.description`.
        field: &'static str,
        /// The most bytes that key's value may have.
        max: usize,
    },
    /// `plugin.version` is not a version a package can carry: it names files (`NAME-VERSION.gfpkg`) and registry
    /// tags, so it is a registry tag's letters, digits, '_', '.' and '-', starting with a letter or digit.
    #[error(
        "plugin.version {:?} must be letters, digits, '_', '.' and '-' (a registry tag), starting with a letter or \
         digit",
        crate::text::shown(.0, MAX_VERSION)
    )]
    InvalidVersion(String),
    /// `plugin.api` names a WIT version that none of the versions this host implements is compatible with.
    #[error("plugin API {found:?} is not supported by this host (it implements {})", api_versions_shown())]
    UnsupportedApi {
        /// The version the manifest gives.
        found: String,
    },
    /// `plugin.host` names versions of the host that this one is not.
    #[error("it runs on gamefeature hosts {wanted}, and this one is {}", HOST_VERSION)]
    UnsupportedHost {
        /// The range the manifest gives.
        wanted: String,
    },
    /// `plugin.component` is absolute or leads out of the plugin folder; why.
    #[error("component path: {0}")]
    ComponentPath(String),
    /// `[components.creation]` sets the policy of a class the plugin does not declare in `[components]`; the class.
    #[error(
        "[components.creation] sets the policy of {:?}, which the plugin does not declare in [components] classes: \
         a plugin sets the creation policy only of its own component classes",
        crate::text::shown(.0, crate::text::MAX_NAME)
    )]
    PolicyForUndeclaredClass(String),
    /// An asset path in `[bundles]` is absolute or leads out of the plugin folder; why.
    #[error("bundle path: {0}")]
    BundlePath(String),
    /// The same plugin is listed twice in `[[dependencies]]`; its name.
    #[error("dependency {0:?} is listed twice")]
    DuplicateDependency(String),
    /// The plugin lists itself among its dependencies.
    #[error("the plugin depends on itself")]
    SelfDependency,
    /// A class in `[components]` (its classes, replicated or creation tables) is not a valid class name; the name.
    #[error("{0:?} is not a valid component class name")]
    InvalidComponentClass(String),
    /// A replicated property name is empty, longer than 256 bytes or holds control characters; the name.
    #[error("{:?} is not a valid property name (1 to 256 bytes, no control characters)", crate::text::shown(.0, 64))]
    InvalidPropertyName(String),
}

/// A manifest that could not be accepted, naming its file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {problem}", path.display())]
pub struct ManifestError {
    /// The `plugin.toml` that was refused.
    pub path: PathBuf,
    /// What is wrong with it.
    pub problem: ManifestProblem,
}

impl PluginManifest {
    /// Reads and validates `dir/plugin.toml`.
    pub fn read(dir: &Path) -> Result<Self, ManifestError> {
        let path = dir.join(MANIFEST_FILE);
        let text = crate::files::read_text(&path, crate::files::MAX_TEXT_FILE_BYTES)
            .map_err(|e| ManifestError { path: path.clone(), problem: ManifestProblem::Unreadable(e.to_string()) })?;
        Self::parse(dir, &text).map_err(|problem| ManifestError { path, problem })
    }

    /// Validates manifest text as if it were `dir/plugin.toml`.
    pub fn parse(dir: &Path, text: &str) -> Result<Self, ManifestProblem> {
        let file: ManifestFile =
            toml::from_str(text).map_err(|e| ManifestProblem::Malformed(e.to_string().trim_end().to_string()))?;
        let p = file.plugin;
        if !is_valid_plugin_name(&p.name) {
            return Err(ManifestProblem::InvalidName(p.name));
        }
        for (field, text, max) in
            [("plugin.version", &p.version, MAX_VERSION), ("plugin.description", &p.description, MAX_DESCRIPTION)]
        {
            if text.len() > max || !crate::text::is_printable(text) {
                return Err(ManifestProblem::InvalidText { field, max });
            }
        }
        if !is_valid_version(&p.version) {
            return Err(ManifestProblem::InvalidVersion(p.version));
        }
        if !api_compatible(&p.api) {
            return Err(ManifestProblem::UnsupportedApi { found: p.api });
        }
        if let Some(wanted) = p.host.as_ref().filter(|wanted| !host_compatible(wanted)) {
            return Err(ManifestProblem::UnsupportedHost { wanted: wanted.to_string() });
        }
        let component_path =
            resolve_within(dir, &p.component).map_err(|e| ManifestProblem::ComponentPath(e.to_string()))?;
        for relative in file.bundles.values().flat_map(|b| b.values()) {
            resolve_within(dir, relative).map_err(|e| ManifestProblem::BundlePath(e.to_string()))?;
        }
        let mut seen = BTreeSet::new();
        for dep in &file.dependencies {
            if dep.name == p.name {
                return Err(ManifestProblem::SelfDependency);
            }
            if !seen.insert(dep.name.as_str()) {
                return Err(ManifestProblem::DuplicateDependency(dep.name.clone()));
            }
        }
        if let Some(bad) = file
            .components
            .classes
            .iter()
            .chain(file.components.replicated.keys())
            .chain(file.components.creation.keys())
            .find(|c| !is_valid_class_name(c))
        {
            return Err(ManifestProblem::InvalidComponentClass(bad.clone()));
        }
        let declared =
            |class: &String| file.components.classes.contains(class) || file.components.replicated.contains_key(class);
        if let Some(class) = file.components.creation.keys().find(|class| !declared(class)) {
            return Err(ManifestProblem::PolicyForUndeclaredClass(class.clone()));
        }
        if let Some(bad) = file.components.replicated.values().flatten().find(|p| !is_valid_property_name(p)) {
            return Err(ManifestProblem::InvalidPropertyName(bad.clone()));
        }
        Ok(PluginManifest {
            name: p.name,
            version: p.version,
            description: p.description,
            api: p.api,
            dir: dir.to_path_buf(),
            manifest_path: dir.join(MANIFEST_FILE),
            component_path,
            dependencies: file.dependencies,
            component_classes: file.components.classes,
            replicated: file.components.replicated,
            creation: file.components.creation,
            actions: file.actions,
            bundles: file.bundles,
            permissions: file.permissions,
            host: p.host,
            limited_by: None,
        })
    }

    /// Lets the plugin ask for no more than `ceiling`, which `set_by` names (for its denials) when it takes
    /// anything away.
    pub fn limit_permissions(&mut self, ceiling: &Permissions, set_by: String) {
        let limited = self.permissions.intersect(ceiling);
        if limited != self.permissions {
            self.permissions = limited;
            self.limited_by = Some(match self.limited_by.take() {
                Some(earlier) => format!("{earlier} and {set_by}"),
                None => set_by,
            });
        }
    }

    /// Who narrowed what the plugin asks for below its file, if anyone did.
    pub fn permissions_limited_by(&self) -> Option<&str> {
        self.limited_by.as_deref()
    }
}

/// Property names travel to clients and into logs: printable, and as short as any name a plugin may pass.
fn is_valid_property_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= 256 && crate::text::is_printable(name)
}

/// Plugin names appear in logs, traces, experiences and dependency lists: keep them plain.
pub fn is_valid_plugin_name(name: &str) -> bool {
    if name.len() > MAX_PLUGIN_NAME {
        return false;
    }
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// Whether `version` can name a package file and a registry tag (the OCI tag grammar `[A-Za-z0-9_][A-Za-z0-9._-]*`,
/// without a leading '_').
fn is_valid_version(version: &str) -> bool {
    version.starts_with(|c: char| c.is_ascii_alphanumeric())
        && version.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// This host's version, which a manifest's `plugin.host` range is checked against.
pub const HOST_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Whether this host is one of the versions `wanted` (a manifest's `plugin.host`) allows.
pub fn host_compatible(wanted: &semver::VersionReq) -> bool {
    semver::Version::parse(HOST_VERSION).is_ok_and(|host| wanted.matches(&host))
}

/// Whether the host implements a version of the plugin API compatible with `found` (a manifest's `api`).
pub fn api_compatible(found: &str) -> bool {
    API_VERSIONS.iter().any(|implemented| same_api(found, implemented))
}

/// Whether two API versions are compatible: 0.x versions within a minor version, as Cargo treats them, later
/// ones within a major version.
pub fn same_api(a: &str, b: &str) -> bool {
    let major_minor = |v: &str| -> Option<(u64, u64)> {
        let mut parts = v.split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        let _patch: u64 = parts.next()?.parse().ok()?;
        parts.next().is_none().then_some((major, minor))
    };
    match (major_minor(a), major_minor(b)) {
        (Some((amaj, amin)), Some((bmaj, bmin))) => amaj == bmaj && (bmaj > 0 || amin == bmin),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
        [plugin]
        name = "shooter-core"
        version = "1.0.0"
        api = "0.1.0"
        component = "shooter_core.wasm"

        [[dependencies]]
        name = "base"
        activate = true

        [[actions]]
        kind = "add-components"
        actor-class = "Character"
        component-class = "Health"
        server = false

        [bundles.Client]
        hud = "data/hud.txt"
    "#;

    #[test]
    fn parses_a_full_manifest() {
        let m = PluginManifest::parse(Path::new("/p/shooter-core"), GOOD).unwrap();
        assert_eq!(m.name, "shooter-core");
        assert_eq!(m.component_path, Path::new("/p/shooter-core/shooter_core.wasm"));
        assert_eq!(m.dependencies, [Dependency { name: "base".into(), activate: true, version: None }]);
        assert_eq!(m.actions[0].describe(), "add-components Health -> Character");
    }

    /// A dependency names the versions it works with as a semver range; a range that is none is refused with
    /// the field named.
    /// A plugin names the host versions it runs on; another host refuses it, saying which it is.
    #[test]
    fn a_plugin_for_other_host_versions_is_refused() {
        let runs = |range: &str| GOOD.replacen("api = ", &format!("host = \"{range}\"\napi = "), 1);
        assert!(PluginManifest::parse(Path::new("/p/shooter-core"), &runs(&format!("={HOST_VERSION}"))).is_ok());
        let refused = PluginManifest::parse(Path::new("/p/shooter-core"), &runs(">=99")).unwrap_err().to_string();
        assert!(
            refused.contains(&format!("it runs on gamefeature hosts >=99, and this one is {HOST_VERSION}")),
            "{refused}"
        );
    }

    #[test]
    fn a_dependency_names_its_versions_as_a_semver_range() {
        let ranged = GOOD.replace("activate = true", "activate = true\nversion = \">=1.2, <3\"");
        let m = PluginManifest::parse(Path::new("/p/shooter-core"), &ranged).unwrap();
        let wanted = m.dependencies[0].version.as_ref().expect("a range");
        assert!(wanted.matches(&semver::Version::new(2, 9, 0)) && !wanted.matches(&semver::Version::new(3, 0, 0)));
        let bad = GOOD.replace("activate = true", "activate = true\nversion = \"about two\"");
        let problem = PluginManifest::parse(Path::new("/p/shooter-core"), &bad).unwrap_err().to_string();
        assert!(problem.contains("version"), "{problem}");
    }

    #[test]
    fn a_giant_name_is_refused_and_its_message_stays_short() {
        let giant = format!("a{}", "b".repeat(70_000));
        let problem = PluginManifest::parse(Path::new("/p/x"), &GOOD.replace("shooter-core\"", &format!("{giant}\"")))
            .unwrap_err();
        assert!(matches!(problem, ManifestProblem::InvalidName(_)));
        assert!(problem.to_string().len() < 300, "{problem}");
        assert!(!is_valid_plugin_name(&"a".repeat(MAX_PLUGIN_NAME + 1)) && is_valid_plugin_name(&"a".repeat(64)));
    }

    #[test]
    fn refuses_bad_manifests_with_the_cause() {
        let dir = Path::new("/p/x");
        type Expectation = fn(&ManifestProblem) -> bool;
        let cases: &[(&str, Expectation)] = &[
            ("[plugin\nname=", |p| matches!(p, ManifestProblem::Malformed(_))),
            (&GOOD.replace("shooter-core\"", "Shooter Core\""), |p| matches!(p, ManifestProblem::InvalidName(_))),
            (&GOOD.replace("api = \"0.1.0\"", "api = \"0.9.0\""), |p| {
                matches!(p, ManifestProblem::UnsupportedApi { .. })
            }),
            (&GOOD.replace("shooter_core.wasm", "../other/x.wasm"), |p| matches!(p, ManifestProblem::ComponentPath(_))),
            (&GOOD.replace("data/hud.txt", "/etc/passwd"), |p| matches!(p, ManifestProblem::BundlePath(_))),
            (&GOOD.replace("name = \"base\"", "name = \"shooter-core\""), |p| *p == ManifestProblem::SelfDependency),
            (&GOOD.replace("kind = \"add-components\"", "kind = \"teleport\""), |p| {
                matches!(p, ManifestProblem::Malformed(_))
            }),
            (&GOOD.replace("version = \"1.0.0\"", ""), |p| matches!(p, ManifestProblem::Malformed(_))),
            (&GOOD.replace("version = \"1.0.0\"", "version = \"1.0\\u001b[2J\""), |p| {
                matches!(p, ManifestProblem::InvalidText { field: "plugin.version", .. })
            }),
            (&GOOD.replace("version = \"1.0.0\"", "version = \"1.0/../../x\""), |p| {
                matches!(p, ManifestProblem::InvalidVersion(_))
            }),
            (&GOOD.replace("version = \"1.0.0\"", "version = \"-1.0\""), |p| {
                matches!(p, ManifestProblem::InvalidVersion(_))
            }),
        ];
        for (text, expected) in cases {
            let problem = PluginManifest::parse(dir, text).unwrap_err();
            assert!(expected(&problem), "{problem}");
        }
    }

    #[test]
    fn a_creation_policy_is_accepted_only_for_the_plugins_own_classes() {
        let dir = Path::new("/p/x");
        let with = |components: &str| format!("{GOOD}\n{components}");
        let problem = PluginManifest::parse(dir, &with("[components.creation]\nHeroComponent = \"never\"\n"));
        assert_eq!(problem.unwrap_err(), ManifestProblem::PolicyForUndeclaredClass("HeroComponent".into()));
        let own = "[components]\nclasses = [\"Shield\"]\n[components.creation]\nShield = \"lazy\"\n";
        assert_eq!(PluginManifest::parse(dir, &with(own)).unwrap().creation.len(), 1);
        let replicated = "[components.replicated]\nStats = [\"hp\"]\n[components.creation]\nStats = \"lazy\"\n";
        assert!(PluginManifest::parse(dir, &with(replicated)).is_ok());
    }

    #[test]
    fn api_versions() {
        assert!(api_compatible("0.1.0"));
        assert!(api_compatible("0.1.7"));
        assert!(api_compatible("0.2.0"));
        assert!(!api_compatible("0.3.0"));
        assert!(!api_compatible("1.1.0"));
        assert!(!api_compatible("0.1"));
        assert!(!api_compatible("zero"));
    }
}
