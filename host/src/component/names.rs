//! Interned names: event, feature and state names cross the WIT boundary as strings, but inside the host they
//! are small integers, compared and hashed for free.

use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

/// An interned name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Name(u32);

impl Name {
    /// The name's number in its world: stable for the world's life, the same for every plugin.
    pub fn number(self) -> u32 {
        self.0
    }
}

/// The names of one world.
#[derive(Debug, Default)]
pub struct Names {
    ids: HashMap<Arc<str>, Name>,
    texts: Vec<Arc<str>>,
}

impl Names {
    /// The name for `text`, interning it on first use.
    pub fn intern(&mut self, text: &str) -> Name {
        if let Some(name) = self.ids.get(text) {
            return *name;
        }
        let name = Name(self.texts.len() as u32);
        let text: Arc<str> = Arc::from(text);
        self.texts.push(text.clone());
        self.ids.insert(text, name);
        name
    }

    /// The name for `text` if it was ever interned.
    pub fn get(&self, text: &str) -> Option<Name> {
        self.ids.get(text).copied()
    }

    pub fn text(&self, name: Name) -> &Arc<str> {
        &self.texts[name.0 as usize]
    }
}
