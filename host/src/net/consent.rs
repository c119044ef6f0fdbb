//! Players see what they install: before a client fetches a server's plugins (or runs ones it fetched from
//! another server), it is shown each one — name, version, publisher and whether this client trusts it, size,
//! the permissions it asks for and what this client would grant — and a [`ConsentHook`] the game provides
//! decides: a terminal prompt (`gfhost client`), a dialog (a game), or a setting.
//!
//! Answers are remembered per server, keyed by the server's certificate (trust on first use, as SSH keeps host
//! keys): [`RememberedAnswers`]. A remembered yes covers the same plugins from the same publishers asking for no
//! more permissions, whatever their versions, so a server's updates do not ask again; a new plugin, another
//! publisher or a permission more asks again. A remembered no refuses the same list without asking.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::feature::Permissions;

/// One plugin a client is about to fetch (or run from what it fetched before), as the player is shown it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListedPlugin {
    /// The plugin's name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// The publisher that signed it, as the signature names it; `None` when unsigned.
    pub publisher: Option<String>,
    /// Whether this client trusts that publisher (its key is in `[publishers]`).
    pub trusted: bool,
    /// The bytes to fetch; 0 when it is in this client's mods folder already.
    pub fetch_bytes: u64,
    /// What its manifest asks to be allowed.
    pub asks: Permissions,
    /// What this client would grant it: what it asks, within the client's `[mod-sync] permissions` (and its
    /// publisher's ceiling).
    pub granted: Permissions,
}

/// What a player is asked about: the plugins one server would have this client run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModList {
    /// Why: joining, or a new version the server hot-reloaded.
    pub occasion: Occasion,
    /// The plugins, in the server's order.
    pub plugins: Vec<ListedPlugin>,
}

/// When a client asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Occasion {
    /// Joining the server.
    Join,
    /// The server offers a new version of a plugin while play goes on.
    Update,
}

impl fmt::Display for ModList {
    /// The list as a terminal shows it: a header, then one plugin per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total: u64 = self.plugins.iter().map(|p| p.fetch_bytes).sum();
        let what = match self.occasion {
            Occasion::Join => "The server plays these plugins",
            Occasion::Update => "The server updated this plugin",
        };
        writeln!(f, "{what} ({} to fetch):", bytes_shown(total))?;
        for plugin in &self.plugins {
            // Everything here is the server's word: shown escaped, so no name can draw lines of its own.
            let text = |t: &str| crate::text::shown(t, crate::text::MAX_NAME);
            let publisher = match (&plugin.publisher, plugin.trusted) {
                (Some(publisher), true) => format!("by {} (trusted)", text(publisher)),
                (Some(publisher), false) => {
                    format!("signed as {:?} by a key this client does not trust", text(publisher))
                }
                (None, _) => "unsigned".to_string(),
            };
            let size = match plugin.fetch_bytes {
                0 => "already here".to_string(),
                bytes => bytes_shown(bytes),
            };
            writeln!(f, "  {} {}  {publisher}, {size}", text(&plugin.name), text(&plugin.version))?;
            let (asks, granted) = (plugin.asks.to_string(), plugin.granted.to_string());
            write!(f, "    asks for: {}; would be granted: {}", text(&asks), text(&granted))?;
            if plugin.asks != plugin.granted {
                write!(f, " (the rest is denied)")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

fn bytes_shown(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / f64::from(1 << 20)),
        b if b >= 1 << 10 => format!("{:.0} KiB", b as f64 / 1024.0),
        b => format!("{b} bytes"),
    }
}

/// Decides whether a client goes on with a [`ModList`]: `Ok` to fetch and run them, `Err` with the reason the
/// client leaves with. It may take its time (a player reading a dialog): the connection stays open meanwhile.
pub type ConsentHook = Arc<dyn Fn(ModList) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send>> + Send + Sync>;

/// A player's answer about one server's plugins.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Answer {
    /// Whether the player agreed.
    pub agreed: bool,
    /// The plugins it was about, each with its publisher and what it asked for.
    pub plugins: Vec<AnsweredPlugin>,
}

/// A plugin as an answer remembers it: by name and publisher (and whether this client trusted that publisher's
/// key), with what it asked for (not its version).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct AnsweredPlugin {
    /// The plugin's name.
    pub name: String,
    /// Its publisher, if it was signed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publisher: Option<String>,
    /// Whether the publisher's key was one this client trusts: a name is only a claim without it.
    pub trusted: bool,
    /// What it asked for.
    pub asks: Permissions,
}

impl Answer {
    /// The answer `agreed` about `list`.
    pub fn to(list: &ModList, agreed: bool) -> Answer {
        let plugins = list
            .plugins
            .iter()
            .map(|p| AnsweredPlugin {
                name: p.name.clone(),
                publisher: p.publisher.clone(),
                trusted: p.trusted,
                asks: p.asks.clone(),
            })
            .collect();
        Answer { agreed, plugins }
    }

    /// Whether this answer stands for `list` too. A yes covers every plugin listed that it names with the same
    /// publisher, asking for no more; a no covers exactly the list it was about (so a changed list asks again).
    pub fn covers(&self, list: &ModList) -> bool {
        let answered = |plugin: &ListedPlugin| {
            self.plugins.iter().any(|a| {
                a.name == plugin.name
                    && a.publisher == plugin.publisher
                    && a.trusted == plugin.trusted
                    && plugin.asks.intersect(&a.asks) == plugin.asks
            })
        };
        match self.agreed {
            true => list.plugins.iter().all(answered),
            false => {
                let same = |a: &AnsweredPlugin| {
                    list.plugins.iter().any(|p| {
                        p.name == a.name && p.publisher == a.publisher && p.trusted == a.trusted && p.asks == a.asks
                    })
                };
                list.plugins.len() == self.plugins.len() && self.plugins.iter().all(same)
            }
        }
    }
}

/// The answers a player gave, per server certificate (`sha256:<hex>` of it), kept in a TOML file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RememberedAnswers {
    #[serde(default)]
    servers: BTreeMap<String, Answer>,
}

impl RememberedAnswers {
    /// The usual file, in a client's mods folder.
    pub const FILE: &'static str = "consent.toml";

    /// The file of answers in `mods_dir`.
    pub fn path_in(mods_dir: &Path) -> PathBuf {
        mods_dir.join(Self::FILE)
    }

    /// Reads the answers at `path`; none when the file does not exist.
    pub fn read(path: &Path) -> Result<RememberedAnswers, crate::Error> {
        if !path.exists() {
            return Ok(RememberedAnswers::default());
        }
        let bad = |message: String| crate::Error::bad_input(path, format!("{}: {message}", path.display()));
        let text = crate::files::read_text(path, crate::files::MAX_TEXT_FILE_BYTES)
            .map_err(|e| bad(format!("cannot read it: {e}")))?;
        toml::from_str(&text).map_err(|e| bad(format!("malformed: {}", e.to_string().trim_end())))
    }

    /// Writes the answers to `path`, whole (a temporary file renamed into place).
    pub fn write(&self, path: &Path) -> Result<(), crate::Error> {
        let failed = |e: std::io::Error| crate::Error::host(format!("{}: cannot write it: {e}", path.display()));
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(failed)?;
        let mut text = String::from("# The plugins this player agreed (or refused) to run, per server certificate.\n");
        text.push_str("# Remove a server's entry to be asked again.\n\n");
        text.push_str(&toml::to_string(self).expect("answers always serialize"));
        let mut file = tempfile::NamedTempFile::new_in(dir).map_err(failed)?;
        std::io::Write::write_all(&mut file, text.as_bytes()).map_err(failed)?;
        file.persist(path).map_err(|e| failed(e.error))?;
        Ok(())
    }

    /// Remembers `agreed` about `list` for `server` in the file at `path`, which client processes sharing a mods
    /// folder write alike: read again and written under an exclusive lock, so that no process's answer is lost
    /// to another's written at the same time.
    pub fn record(path: &Path, server: &str, list: &ModList, agreed: bool) -> Result<(), crate::Error> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| crate::Error::host(format!("{}: cannot create it: {e}", dir.display())))?;
        }
        let guard = crate::file_lock::guard_of(path);
        let _lock = crate::file_lock::FileLock::exclusive(&guard, || {})
            .map_err(|e| crate::Error::host(format!("{}: {e}", guard.display())))?;
        let mut answers = RememberedAnswers::read(path)?;
        answers.remember(server, list, agreed);
        answers.write(path)
    }

    /// The answer remembered for `server` that covers `list`, if there is one.
    pub fn answer_for(&self, server: &str, list: &ModList) -> Option<bool> {
        self.servers.get(server).filter(|answer| answer.covers(list)).map(|answer| answer.agreed)
    }

    /// Remembers `agreed` about `list` for `server`. A yes adds to what the server was agreed to before.
    pub fn remember(&mut self, server: &str, list: &ModList, agreed: bool) {
        let mut answer = Answer::to(list, agreed);
        if let Some(before) = self.servers.get(server).filter(|before| before.agreed && agreed) {
            let kept = before.plugins.iter().filter(|old| !answer.plugins.iter().any(|new| new.name == old.name));
            answer.plugins.extend(kept.cloned().collect::<Vec<_>>());
            answer.plugins.sort_by(|a, b| a.name.cmp(&b.name));
        }
        self.servers.insert(server.to_string(), answer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plugin(name: &str, version: &str, asks: Permissions) -> ListedPlugin {
        ListedPlugin {
            name: name.into(),
            version: version.into(),
            publisher: Some("studio".into()),
            trusted: true,
            fetch_bytes: 300 << 10,
            granted: Permissions::default(),
            asks,
        }
    }

    fn list(plugins: Vec<ListedPlugin>) -> ModList {
        ModList { occasion: Occasion::Join, plugins }
    }

    /// A server's names cannot draw lines of their own in the question.
    #[test]
    fn a_list_shows_the_servers_words_escaped() {
        let mut forged =
            plugin("hud\n  trusted-looking 1.0.0  by studio (trusted)", "1.0.0\u{1b}[2K", Permissions::default());
        forged.asks.component_requests = vec!["Pawn\n    asks for: nothing".into()];
        let shown = list(vec![forged]).to_string();
        assert_eq!(shown.lines().count(), 3, "{shown}");
        assert!(shown.contains("hud\\n  trusted-looking") && shown.contains("\\u{1b}"), "{shown}");
    }

    #[test]
    fn a_list_shows_publisher_size_and_what_is_asked_and_granted() {
        let events = Permissions { send_events: true, ..Permissions::default() };
        let mut unsigned = plugin("hud", "1.0.0", Permissions::default());
        unsigned.publisher = None;
        unsigned.granted = Permissions::default();
        let shown = list(vec![plugin("shooter-core", "0.1.0", events), unsigned]).to_string();
        assert_eq!(
            shown,
            "The server plays these plugins (600 KiB to fetch):\n  shooter-core 0.1.0  by studio (trusted), 300 KiB\n    \
             asks for: send-events; would be granted: nothing (the rest is denied)\n  hud 1.0.0  unsigned, 300 KiB\n    \
             asks for: nothing; would be granted: nothing\n"
        );
    }

    /// Client processes answering at once each keep their answer (the read, change and write are under a lock).
    #[test]
    fn answers_recorded_at_once_by_many_are_all_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = RememberedAnswers::path_in(dir.path());
        let shown = list(vec![plugin("shooter-core", "0.1.0", Permissions::default())]);
        std::thread::scope(|scope| {
            for server in 0..16 {
                let (path, shown) = (&path, &shown);
                scope.spawn(move || RememberedAnswers::record(path, &format!("sha256:{server}"), shown, true).unwrap());
            }
        });
        let answers = RememberedAnswers::read(&path).unwrap();
        for server in 0..16 {
            assert_eq!(answers.answer_for(&format!("sha256:{server}"), &shown), Some(true), "server {server}");
        }
    }

    /// A yes stands for the server's updates (any version, no more permissions) and is asked again for a new
    /// plugin, another publisher or a permission more; a no stands for exactly the list refused.
    #[test]
    fn remembered_answers_stand_for_the_same_plugins_asking_no_more() {
        let dir = tempfile::tempdir().unwrap();
        let path = RememberedAnswers::path_in(dir.path());
        let events = Permissions { send_events: true, ..Permissions::default() };
        let first = list(vec![plugin("shooter-core", "0.1.0", events.clone())]);
        let mut answers = RememberedAnswers::read(&path).unwrap();
        assert_eq!(answers.answer_for("sha256:aa", &first), None);
        answers.remember("sha256:aa", &first, true);
        answers.write(&path).unwrap();
        let answers = RememberedAnswers::read(&path).unwrap();
        assert_eq!(answers.answer_for("sha256:aa", &first), Some(true));
        assert_eq!(answers.answer_for("sha256:bb", &first), None, "another server asks");
        let update = list(vec![plugin("shooter-core", "0.2.0", Permissions::default())]);
        assert_eq!(answers.answer_for("sha256:aa", &update), Some(true), "a new version asking for less");
        let more = Permissions { spawn_actors: true, ..events };
        assert_eq!(answers.answer_for("sha256:aa", &list(vec![plugin("shooter-core", "0.2.0", more)])), None);
        let mut other = plugin("shooter-core", "0.1.0", Permissions::default());
        other.publisher = Some("someone".into());
        assert_eq!(answers.answer_for("sha256:aa", &list(vec![other])), None, "another publisher");
        let mut claimed = plugin("shooter-core", "0.1.0", Permissions::default());
        claimed.trusted = false;
        assert_eq!(answers.answer_for("sha256:aa", &list(vec![claimed])), None, "the name, signed by another key");
        let added = list(vec![
            plugin("shooter-core", "0.1.0", Permissions::default()),
            plugin("hud", "1.0.0", Permissions::default()),
        ]);
        assert_eq!(answers.answer_for("sha256:aa", &added), None, "a new plugin");

        let mut answers = answers;
        answers.remember("sha256:bb", &added, false);
        assert_eq!(answers.answer_for("sha256:bb", &added), Some(false));
        assert_eq!(answers.answer_for("sha256:bb", &first), None, "a changed list asks again");
        std::fs::write(&path, "[servers.x]\nagreed = 3\n").unwrap();
        assert!(RememberedAnswers::read(&path).unwrap_err().to_string().contains("consent.toml: malformed"));
    }
}
