//! What a component imports and exports, against what the `game-feature` world provides and needs — so that a
//! component that does not fit can be shown side by side with the world it was meant for (`gfhost inspect`).

use super::manifest::{api_versions_shown, API_VERSION, API_VERSIONS};

/// What a component imports and exports, for `gfhost inspect`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ComponentInterface {
    /// The full names of the interfaces the component imports, such as `gamefeature:plugin/log@0.2.0`.
    pub imports: Vec<String>,
    /// The full names of the interfaces the component exports, such as `gamefeature:plugin/lifecycle@0.2.0`.
    pub exports: Vec<String>,
}

/// The host interfaces of `gamefeature:plugin` a plugin of `version` may import (the `types` interface comes
/// with them).
pub fn host_interfaces(version: &str) -> &'static [&'static str] {
    match version {
        "0.1.0" => &["types", "log", "actors", "assets", "components", "init-states"],
        _ => &["types", "log", "actors", "assets", "components", "init-states", "timers"],
    }
}

/// The interfaces of `gamefeature:plugin` every plugin of `version` must export.
pub fn plugin_exports(version: &str) -> &'static [&'static str] {
    match version {
        "0.1.0" => &["lifecycle", "handlers", "init-state-callbacks"],
        _ => &[
            "lifecycle",
            "handlers",
            "init-state-callbacks",
            "timer-callbacks",
            "replication-callbacks",
            "property-callbacks",
        ],
    }
}

/// The WASI 0.2 packages the host links (its sandbox decides what they can reach).
const WASI_PACKAGES: [&str; 6] = ["cli", "clocks", "filesystem", "io", "random", "sockets"];

/// One import or export and whether it fits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FitLine {
    /// The interface's full name, with its package and version.
    pub name: String,
    /// `None` when it fits; otherwise why not.
    pub problem: Option<String>,
}

/// How a component's interface meets the world: each of its imports (provided by the host or not), and each
/// export the world needs (present or missing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fit {
    /// Each of the component's imports, with why the host cannot provide it when it cannot.
    pub imports: Vec<FitLine>,
    /// Each export the world of the component's version needs, with why it is missing or mismatched when it is.
    pub needed_exports: Vec<FitLine>,
    /// Exports the world does not ask for (harmless, shown for completeness).
    pub other_exports: Vec<String>,
}

impl Fit {
    /// Whether the component can be loaded: every import is provided and every needed export is present.
    pub fn fits(&self) -> bool {
        self.imports.iter().chain(&self.needed_exports).all(|line| line.problem.is_none())
    }
}

impl ComponentInterface {
    /// The `gamefeature:plugin` version the component was built against: that of its exports (which decide
    /// which world it is), or of its imports when it exports nothing of the package.
    pub fn api_version(&self) -> Option<&str> {
        fn version_of(names: &[String]) -> Option<&str> {
            names
                .iter()
                .filter_map(|name| name.strip_prefix("gamefeature:plugin/"))
                .find_map(|rest| rest.split_once('@').map(|(_, version)| version))
        }
        version_of(&self.exports).or_else(|| version_of(&self.imports))
    }

    /// A `gamefeature:plugin` version among the component's imports and exports that this host does not
    /// implement.
    pub fn foreign_api_version(&self) -> Option<&str> {
        self.imports
            .iter()
            .chain(&self.exports)
            .filter_map(|name| name.strip_prefix("gamefeature:plugin/"))
            .filter_map(|rest| rest.split_once('@').map(|(_, version)| version))
            .find(|version| !API_VERSIONS.contains(version))
    }

    /// Checks every import against what the host provides and every export the world of the component's
    /// version needs (the newest version's, when the host does not implement that one) against its exports.
    pub fn fit(&self) -> Fit {
        let version = self.api_version().filter(|v| API_VERSIONS.contains(v)).unwrap_or(API_VERSION);
        let imports = self.imports.iter().map(|name| FitLine { name: name.clone(), problem: import_problem(name) });
        let exports = plugin_exports(version);
        let needed_exports = exports.iter().map(|interface| {
            let wanted = format!("gamefeature:plugin/{interface}@{version}");
            let problem = match self.exports.iter().find(|e| unversioned(e) == unversioned(&wanted)) {
                Some(found) if *found == wanted => None,
                Some(found) => Some(format!("exported as {found}")),
                None => Some("missing".to_string()),
            };
            FitLine { name: wanted, problem }
        });
        let other_exports = self
            .exports
            .iter()
            .filter(|e| !exports.iter().any(|i| unversioned(e) == format!("gamefeature:plugin/{i}")))
            .cloned()
            .collect();
        Fit { imports: imports.collect(), needed_exports: needed_exports.collect(), other_exports }
    }
}

fn unversioned(name: &str) -> &str {
    name.split_once('@').map_or(name, |(bare, _)| bare)
}

/// Why the host cannot satisfy an import, or `None` when it can.
fn import_problem(name: &str) -> Option<String> {
    let (bare, version) = name.split_once('@').unwrap_or((name, ""));
    if let Some(interface) = bare.strip_prefix("gamefeature:plugin/") {
        if !API_VERSIONS.contains(&version) {
            return Some(format!(
                "version {version}; this host implements gamefeature:plugin {}",
                api_versions_shown()
            ));
        }
        if !host_interfaces(version).contains(&interface) {
            return Some(format!("the host has no interface {interface:?} in version {version}"));
        }
        return None;
    }
    if let Some(rest) = bare.strip_prefix("wasi:") {
        let package = rest.split('/').next().unwrap_or_default();
        if package == "http" {
            // componentize-js adds wasi:http unless told not to; `gfhost build` tells it.
            return Some(
                "the host does not link wasi:http (plugins have no network); a JavaScript plugin built with \
                 componentize-js by hand needs `--disable http fetch-event`, as `gfhost build` \
                 builds it"
                    .to_string(),
            );
        }
        if !WASI_PACKAGES.contains(&package) {
            return Some(format!("the host does not link wasi:{package}"));
        }
        if !version.starts_with("0.2.") {
            return Some(format!("version {version}; the host links WASI 0.2"));
        }
        return None;
    }
    Some("not provided by the host (plugins import only gamefeature:plugin and WASI 0.2)".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interface(imports: &[&str], exports: &[&str]) -> ComponentInterface {
        ComponentInterface {
            imports: imports.iter().map(|s| s.to_string()).collect(),
            exports: exports.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn plugin_of(version: &str) -> ComponentInterface {
        interface(
            &[&format!("gamefeature:plugin/log@{version}"), "wasi:cli/stdout@0.2.6"],
            &plugin_exports(version)
                .iter()
                .map(|e| format!("gamefeature:plugin/{e}@{version}"))
                .collect::<Vec<_>>()
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn a_plugin_of_every_implemented_version_fits() {
        for version in API_VERSIONS {
            let plugin = plugin_of(version);
            assert!(plugin.fit().fits(), "{version}: {:?}", plugin.fit());
            assert_eq!(plugin.api_version(), Some(version));
            assert_eq!(plugin.foreign_api_version(), None);
        }
    }

    #[test]
    fn a_plugin_of_another_version_is_named_by_it() {
        let plugin = plugin_of("0.9.0");
        assert_eq!(plugin.foreign_api_version(), Some("0.9.0"));
        let fit = plugin.fit();
        assert!(fit.imports[0].problem.as_deref().unwrap().contains("version 0.9.0"), "{fit:?}");
        let wanted = format!("gamefeature:plugin/lifecycle@{API_VERSION}");
        assert_eq!(fit.needed_exports[0].name, wanted);
    }

    #[test]
    fn each_mismatch_is_named() {
        let fit = interface(
            &["gamefeature:plugin/log@9.0.0", "wasi:http/types@0.2.0", "acme:physics/rigid@1.0.0"],
            &["gamefeature:plugin/lifecycle@9.0.0"],
        )
        .fit();
        assert!(!fit.fits());
        let problems: Vec<&str> = fit.imports.iter().map(|l| l.problem.as_deref().unwrap()).collect();
        assert!(problems[0].contains("version 9.0.0"), "{problems:?}");
        assert!(problems[1].contains("wasi:http"), "{problems:?}");
        assert!(problems[1].contains("`--disable http fetch-event`"), "{problems:?}");
        assert!(problems[2].contains("not provided"), "{problems:?}");
        assert_eq!(fit.needed_exports[0].problem.as_deref(), Some("exported as gamefeature:plugin/lifecycle@9.0.0"));
        assert_eq!(fit.needed_exports[1].problem.as_deref(), Some("missing"));
    }

    #[test]
    fn an_interface_added_in_a_later_version_is_not_offered_to_an_earlier_one() {
        let mut plugin = plugin_of("0.1.0");
        plugin.imports.push("gamefeature:plugin/timers@0.1.0".to_string());
        let fit = plugin.fit();
        let problem = fit.imports.last().unwrap().problem.as_deref().unwrap();
        assert_eq!(problem, "the host has no interface \"timers\" in version 0.1.0");
        assert!(plugin_of("0.2.0").fit().needed_exports.iter().any(|l| l.name.contains("timer-callbacks@0.2.0")));
    }
}
