//! Interned names: event, feature and state names cross the WIT boundary as strings, but inside the host they
//! are small integers, compared and hashed for free.
//!
//! A name's number is stable for the world's life (plugins cache what a number names), so names are never
//! forgotten. What a plugin can make the world keep is bounded instead: each new name is charged to the plugin
//! whose call introduced it, and a plugin may introduce at most [`MAX_NAMES_PER_PLUGIN`] (its charge goes with
//! it), a world hold at most [`MAX_NAMES`].

use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

use super::OwnerId;

/// New names one plugin instance may introduce into its world.
pub const MAX_NAMES_PER_PLUGIN: u32 = 65_536;

/// Names a world may hold, whoever introduced them.
pub const MAX_NAMES: usize = 262_144;

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
    /// The plugin whose call is running, charged for the names it introduces.
    acting: Option<OwnerId>,
    /// Names each live plugin introduced.
    introduced: HashMap<OwnerId, u32>,
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
        if let Some(owner) = self.acting {
            *self.introduced.entry(owner).or_default() += 1;
        }
        name
    }

    /// Says which plugin's call is running (`None`: the host's own work).
    pub(crate) fn act_as(&mut self, owner: Option<OwnerId>) {
        self.acting = owner;
    }

    /// The name for `text` when a plugin's call passes it: a new name is charged to the plugin acting, and
    /// refused (with why) past what it or the world may hold. The host's own names are never refused.
    pub fn admit(&mut self, text: &str) -> Result<Name, String> {
        if let Some(name) = self.ids.get(text) {
            return Ok(*name);
        }
        if let Some(refusal) = self.acting.and_then(|owner| self.refuse_new_name(owner)) {
            return Err(refusal);
        }
        Ok(self.intern(text))
    }

    /// Why `owner` may not introduce another name now, if it may not.
    pub fn refuse_new_name(&self, owner: OwnerId) -> Option<String> {
        let introduced = self.introduced.get(&owner).copied().unwrap_or(0);
        if introduced >= MAX_NAMES_PER_PLUGIN {
            return Some(format!(
                "the plugin introduced {introduced} names into this world, the most one plugin may (a name is kept \
                 for the world's life: reuse names rather than making new ones)"
            ));
        }
        (self.texts.len() >= MAX_NAMES).then(|| format!("this world holds {MAX_NAMES} names, the most it may"))
    }

    /// Names `owner` introduced.
    pub fn introduced_by(&self, owner: OwnerId) -> u32 {
        self.introduced.get(&owner).copied().unwrap_or(0)
    }

    /// A plugin left: its charge goes with it (its names stay, their numbers stable).
    pub fn release(&mut self, owner: OwnerId) {
        self.introduced.remove(&owner);
    }

    /// The name for `text` if it was ever interned.
    pub fn get(&self, text: &str) -> Option<Name> {
        self.ids.get(text).copied()
    }

    /// The text `name` stands for; `name` must be one of this world's (another world's may panic, out of range).
    pub fn text(&self, name: Name) -> &Arc<str> {
        &self.texts[name.0 as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_names_are_charged_to_the_plugin_introducing_them_until_it_leaves() {
        let mut names = Names::default();
        names.intern("HostName");
        names.act_as(Some(OwnerId(3)));
        for i in 0..MAX_NAMES_PER_PLUGIN {
            names.intern(&format!("n{i}"));
        }
        names.intern("n0");
        names.act_as(None);
        assert_eq!(names.introduced_by(OwnerId(3)), MAX_NAMES_PER_PLUGIN);
        let refusal = names.refuse_new_name(OwnerId(3)).expect("at its cap");
        assert!(refusal.contains("introduced 65536 names"), "{refusal}");
        assert_eq!(names.refuse_new_name(OwnerId(4)), None);
        names.act_as(Some(OwnerId(3)));
        assert_eq!(names.admit("n5"), Ok(names.get("n5").unwrap()), "a known name is always admitted");
        assert!(names.admit("new").unwrap_err().contains("introduced 65536 names"));
        names.act_as(Some(OwnerId(4)));
        assert!(names.admit("new").is_ok(), "another plugin has its own allowance");
        names.act_as(None);
        names.release(OwnerId(3));
        assert_eq!((names.introduced_by(OwnerId(3)), names.refuse_new_name(OwnerId(3))), (0, None));
        // Its names stay, with their numbers: plugins that cached them still read them right.
        assert_eq!(&**names.text(names.get("n7").unwrap()), "n7");
    }
}
