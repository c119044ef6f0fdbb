//! Actor and component classes with single inheritance.
//!
//! Plugins name classes by string; the world owns the hierarchy, declared in data, so "is a Pawn a subclass of
//! Actor" is answered in one place for every guest language.

use std::sync::Arc;

use rustc_hash::FxHashMap as HashMap;

/// The root of every actor class. Requests on it are refused, as in Unreal: they would touch every actor.
pub const ROOT_ACTOR_CLASS: &str = "Actor";

/// Actor classes every world starts with, with their parents: Unreal's gameplay framework classes.
pub const BUILT_IN_CLASSES: &[(&str, &str)] = &[
    ("Pawn", "Actor"),
    ("Character", "Pawn"),
    ("Controller", "Actor"),
    ("PlayerController", "Controller"),
    ("PlayerState", "Actor"),
    ("GameState", "Actor"),
    ("HUD", "Actor"),
];

/// A class declaration that cannot be accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClassError {
    /// The parent class is not declared.
    #[error("class {class:?} names unknown parent {parent:?}")]
    UnknownParent {
        /// The class being declared.
        class: String,
        /// The parent it names, which the registry does not know.
        parent: String,
    },
    /// The class exists with another parent.
    #[error("class {class:?} is already declared with parent {existing:?}, not {requested:?}")]
    Conflict {
        /// The class being declared again.
        class: String,
        /// The parent it was declared with first, which stays.
        existing: String,
        /// The other parent this declaration names.
        requested: String,
    },
    /// The name is empty or has characters a class name may not have.
    #[error("{0:?} is not a valid class name (letters, digits, '_' and '.' only)")]
    InvalidName(String),
}

/// A class name shared by every actor of the class: cloning it is a reference count, not a copy.
pub type ClassName = Arc<str>;

/// Whether two shared names are the same: by pointer first, as the world shares one name per class, then by
/// text. (`==` on an `Arc<str>` always compares the text: the standard library's pointer shortcut is only for
/// sized values.)
#[inline]
pub fn same_name(a: &ClassName, b: &ClassName) -> bool {
    Arc::ptr_eq(a, b) || **a == **b
}

/// A declared class, as its registry shares it: its name, compared and hashed by identity, and its number in
/// the registry. The registry makes one for each class and builds every chain from it, so the handlers and
/// subscriptions of a class are found by its number (see [`ClassMap`](super::ClassMap)) rather than by hashing
/// and comparing the class's text on every event and notification about an actor. Only a [`ClassRegistry`]
/// makes one; keys of different worlds' registries never match.
#[derive(Debug, Clone)]
pub struct ClassKey {
    name: ClassName,
    index: u32,
}

impl ClassKey {
    /// The class's shared name.
    pub fn name(&self) -> &ClassName {
        &self.name
    }

    /// The class's number in its registry: classes are numbered from 0 as they are declared.
    pub fn index(&self) -> usize {
        self.index as usize
    }
}

impl std::ops::Deref for ClassKey {
    type Target = str;

    fn deref(&self) -> &str {
        &self.name
    }
}

impl PartialEq for ClassKey {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.name, &other.name)
    }
}

impl Eq for ClassKey {}

impl std::hash::Hash for ClassKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        Arc::as_ptr(&self.name).cast::<u8>().hash(state)
    }
}

impl std::fmt::Display for ClassKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)
    }
}

/// One declared class: its chain (itself, then its ancestors; its parent second), fixed when it is declared.
#[derive(Debug, Clone)]
struct ClassEntry {
    chain: Arc<[ClassKey]>,
}

/// The class hierarchy of one world. A class's parent never changes once declared, so each class keeps its
/// chain, and every actor of the class holds it from its spawn: walking it (every event and notification about
/// the actor does) looks nothing up.
#[derive(Debug, Clone)]
pub struct ClassRegistry {
    classes: HashMap<ClassName, ClassEntry>,
}

impl Default for ClassRegistry {
    fn default() -> Self {
        let root: ClassName = Arc::from(ROOT_ACTOR_CLASS);
        let entry = ClassEntry { chain: Arc::from([ClassKey { name: root.clone(), index: 0 }]) };
        let mut registry = ClassRegistry { classes: HashMap::from_iter([(root, entry)]) };
        for (class, parent) in BUILT_IN_CLASSES {
            registry.declare(class, parent).expect("built-in classes are well formed");
        }
        registry
    }
}

impl ClassRegistry {
    /// Declares `class` as a subclass of `parent`. Declaring an existing class again with the same parent is
    /// allowed, so several experiences and plugins may declare the classes they share.
    pub fn declare(&mut self, class: &str, parent: &str) -> Result<(), ClassError> {
        if !is_valid_class_name(class) {
            return Err(ClassError::InvalidName(class.to_string()));
        }
        let Some(parent_chain) = self.classes.get(parent).map(|p| p.chain.clone()) else {
            return Err(ClassError::UnknownParent { class: class.to_string(), parent: parent.to_string() });
        };
        let existing = self.classes.get(class).map(|entry| entry.chain.get(1).map_or("", |p| &**p));
        match existing {
            Some(existing) if existing == parent => Ok(()),
            Some(existing) => Err(ClassError::Conflict {
                class: class.to_string(),
                existing: existing.to_string(),
                requested: parent.to_string(),
            }),
            None => {
                let name: ClassName = Arc::from(class);
                let key = ClassKey { name: name.clone(), index: self.classes.len() as u32 };
                let chain: Arc<[ClassKey]> = std::iter::once(key).chain(parent_chain.iter().cloned()).collect();
                self.classes.insert(name, ClassEntry { chain });
                Ok(())
            }
        }
    }

    /// Whether `class` is declared.
    pub fn contains(&self, class: &str) -> bool {
        self.classes.contains_key(class)
    }

    /// The shared name of a declared class.
    pub fn name(&self, class: &str) -> Option<ClassName> {
        self.classes.get_key_value(class).map(|(name, _)| name.clone())
    }

    /// The key of a declared class.
    pub fn key(&self, class: &str) -> Option<ClassKey> {
        self.classes.get(class).map(|entry| entry.chain[0].clone())
    }

    /// Whether `class` is `ancestor` or derives from it. Unknown classes are not anything.
    pub fn is_a(&self, class: &str, ancestor: &str) -> bool {
        self.chain(class).any(|c| c == ancestor)
    }

    /// `class` and its ancestors, most derived first.
    pub fn chain<'a>(&'a self, class: &str) -> impl Iterator<Item = &'a str> + 'a {
        self.classes.get(class).into_iter().flat_map(|entry| entry.chain.iter().map(|c| &**c))
    }

    /// [`chain`](Self::chain), shared (`None` for an unknown class): what an actor of the class keeps.
    pub fn shared_chain(&self, class: &str) -> Option<Arc<[ClassKey]>> {
        self.classes.get(class).map(|entry| entry.chain.clone())
    }
}

/// Class names are identifiers, optionally dotted: they appear in logs, traces and data files.
pub fn is_valid_class_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_hierarchy() {
        let classes = ClassRegistry::default();
        assert!(classes.is_a("Character", "Pawn"));
        assert!(classes.is_a("Character", "Actor"));
        assert!(classes.is_a("Pawn", "Pawn"));
        assert!(!classes.is_a("Pawn", "Character"));
        assert!(!classes.is_a("Nope", "Actor"));
        assert_eq!(classes.chain("Character").collect::<Vec<_>>(), ["Character", "Pawn", "Actor"]);
    }

    #[test]
    fn declarations_are_checked() {
        let mut classes = ClassRegistry::default();
        classes.declare("Hero", "Character").unwrap();
        classes.declare("Hero", "Character").unwrap();
        assert!(matches!(classes.declare("Hero", "Pawn"), Err(ClassError::Conflict { .. })));
        assert!(matches!(classes.declare("Ghost", "Spirit"), Err(ClassError::UnknownParent { .. })));
        assert!(matches!(classes.declare("bad name", "Actor"), Err(ClassError::InvalidName(_))));
        assert!(classes.is_a("Hero", "Pawn"));
    }

    /// A class's key is the same in every chain it is part of, and another class's (or another registry's)
    /// never matches it, whatever its name.
    #[test]
    fn a_class_key_matches_only_its_own_class_of_its_own_registry() {
        let mut classes = ClassRegistry::default();
        classes.declare("Hero", "Character").unwrap();
        let pawn = classes.key("Pawn").unwrap();
        assert_eq!(&*pawn, "Pawn");
        let hero = classes.shared_chain("Hero").unwrap();
        assert_eq!(hero[2], pawn, "the same key in a subclass's chain");
        assert_ne!(hero[1], pawn);
        let other = ClassRegistry::default();
        assert_ne!(other.key("Pawn").unwrap(), pawn, "another world's Pawn");
        assert!(classes.key("Nope").is_none());
    }
}
