//! A world's state as a replay compares it: every actor, component, property value, init state and plugin,
//! each an entry named as a modder reads it (`Pawn_3 #3.0 / HealthComponent.health`) with its value as text.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use crate::experience::ExperienceManager;
use crate::recording::Checkpoint;
use crate::world::{self, Actor, ComponentOrigin, Value, World};

/// A world's state: entries sorted by name, so two states compare entry by entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorldState {
    entries: BTreeMap<String, String>,
}

/// One entry two states disagree on: absent on a side where it is `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// What the entry names.
    pub entry: String,
    /// Its value in the recording.
    pub recorded: Option<String>,
    /// Its value in the replay.
    pub replayed: Option<String>,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = |value: &Option<String>| value.clone().unwrap_or_else(|| "(absent)".into());
        write!(f, "{}: recorded {}, replayed {}", self.entry, shown(&self.recorded), shown(&self.replayed))
    }
}

impl WorldState {
    /// The state of `manager`'s world and of the plugins playing in it.
    pub fn of(manager: &ExperienceManager) -> WorldState {
        let mut state = WorldState::of_world(&world::lock(manager.world()));
        state.entries.extend(manager_entries(manager));
        state
    }

    /// The state of a world's actors, components, properties and init states.
    pub fn of_world(w: &World) -> WorldState {
        let entries = w.actors().flat_map(|actor| actor_entries(w, actor)).collect();
        WorldState { entries }
    }

    /// The state a checkpoint describes, from the state of the checkpoint before it.
    pub fn after(&self, checkpoint: &Checkpoint) -> WorldState {
        let mut entries = self.entries.clone();
        for entry in &checkpoint.removed {
            entries.remove(entry);
        }
        entries.extend(checkpoint.changed.iter().cloned());
        WorldState { entries }
    }

    /// The entries `self` (recorded) and `replayed` disagree on, in order.
    pub fn differences(&self, replayed: &WorldState) -> Vec<Difference> {
        let mut entries: Vec<&String> = self.entries.keys().chain(replayed.entries.keys()).collect();
        entries.sort();
        entries.dedup();
        entries
            .into_iter()
            .filter_map(|entry| {
                let (recorded, replayed) = (self.entries.get(entry), replayed.entries.get(entry));
                (recorded != replayed).then(|| Difference {
                    entry: entry.clone(),
                    recorded: recorded.cloned(),
                    replayed: replayed.cloned(),
                })
            })
            .collect()
    }

    /// How many entries the state holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the state holds no entry (a world with nothing in it).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// An actor's entries: its own (role, owner), each component's, each property value's, each init state's.
fn actor_entries(w: &World, actor: &Actor) -> Vec<(String, String)> {
    let name = format!("{} {}", actor.name(), actor.id);
    let player = actor.player.map(|p| format!(" player {p:?}")).unwrap_or_default();
    let receiver = if actor.receiver { " receiver" } else { "" };
    let mut entries = vec![(name.clone(), format!("{:?}{player}{receiver}", actor.role))];
    for component in &actor.components {
        let origin = match component.origin {
            ComponentOrigin::Native => "native",
            ComponentOrigin::Request(_) => "requested",
            ComponentOrigin::Replicated => "replicated",
        };
        entries.push((format!("{name} / {}", component.class), origin.to_string()));
        for (property, value) in &component.properties {
            entries.push((format!("{name} / {}.{property}", component.class), format!("{value:?}")));
        }
    }
    for feature in w.manager.init_states.features(actor.id) {
        let reached = w.state_text(feature.state).unwrap_or("no state");
        entries.push((format!("{name} / init state of {}", w.name_text(feature.feature)), reached.into()));
    }
    entries.sort();
    entries
}

/// The entries about the world as a whole: which plugins play, where the experience is, failures so far.
fn manager_entries(manager: &ExperienceManager) -> BTreeMap<String, String> {
    let mut entries = BTreeMap::new();
    let playing = manager.live_features();
    // The experience's plugins, and those activated beside them (from a console): all that run in the world.
    for plugin in manager.played_plugins().into_iter().chain(playing.iter().cloned()) {
        let how = if playing.contains(&plugin) { "playing" } else { "not playing" };
        entries.insert(format!("plugin {plugin}"), how.to_string());
    }
    entries.insert("experience".into(), manager.state().to_string());
    entries.insert("failures".into(), manager.report().failures.len().to_string());
    entries
}

/// What an actor's entries are made of, hashed without making them: equal when nothing of it changed.
fn quick_hash(w: &World, actor: &Actor) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hash = rustc_hash::FxHasher::default();
    actor.class().hash(&mut hash);
    actor.role.hash(&mut hash);
    actor.player.hash(&mut hash);
    actor.receiver.hash(&mut hash);
    for component in &actor.components {
        component.class.hash(&mut hash);
        std::mem::discriminant(&component.origin).hash(&mut hash);
        for (property, value) in &component.properties {
            property.hash(&mut hash);
            match value {
                Value::Boolean(b) => (0u8, u64::from(*b)).hash(&mut hash),
                Value::Integer(i) => (1u8, *i).hash(&mut hash),
                Value::Float(f) => (2u8, f.to_bits()).hash(&mut hash),
                Value::Text(t) => (3u8, t).hash(&mut hash),
            }
        }
    }
    for feature in w.manager.init_states.features(actor.id) {
        (feature.feature, feature.state).hash(&mut hash);
    }
    hash.finish()
}

/// Writes a recording's checkpoints: the world's state kept actor by actor, so that a checkpoint makes the
/// entries of only the actors that changed since the one before (an actor's entries are text; making every
/// actor's at every checkpoint would cost a busy world's frame more than the rest of recording).
#[derive(Debug, Default)]
pub struct StateTracker {
    actors: BTreeMap<u64, Tracked>,
    world: BTreeMap<String, String>,
    hash: u64,
}

#[derive(Debug)]
struct Tracked {
    quick: u64,
    entries: Vec<(String, String)>,
}

impl StateTracker {
    /// The checkpoint of `manager`'s world after `frame` frames: what changed since the last one.
    pub fn checkpoint(&mut self, frame: u64, manager: &ExperienceManager) -> Checkpoint {
        let world = manager_entries(manager);
        self.checkpoint_of(frame, &world::lock(manager.world()), world)
    }

    /// The checkpoint of world `w` after `frame` frames, with `world` the entries about it as a whole.
    pub fn checkpoint_of(&mut self, frame: u64, w: &World, world: BTreeMap<String, String>) -> Checkpoint {
        let (mut changed, mut removed) = (Vec::new(), Vec::new());
        let mut before = std::mem::take(&mut self.actors);
        {
            for actor in w.actors() {
                let raw = actor.id.to_raw();
                let quick = quick_hash(w, actor);
                let old = match before.remove(&raw) {
                    Some(tracked) if tracked.quick == quick => {
                        self.actors.insert(raw, tracked);
                        continue;
                    }
                    old => old.map(|tracked| tracked.entries).unwrap_or_default(),
                };
                let entries = actor_entries(w, actor);
                let new: BTreeMap<&String, &String> = entries.iter().map(|(k, v)| (k, v)).collect();
                for (entry, value) in &entries {
                    if !old.iter().any(|(k, v)| k == entry && v == value) {
                        changed.push((entry.clone(), value.clone()));
                    }
                }
                removed.extend(old.into_iter().map(|(k, _)| k).filter(|k| !new.contains_key(k)));
                self.actors.insert(raw, Tracked { quick, entries });
            }
        }
        for gone in before.into_values() {
            removed.extend(gone.entries.into_iter().map(|(entry, _)| entry));
        }
        for (entry, value) in &world {
            if self.world.get(entry) != Some(value) {
                changed.push((entry.clone(), value.clone()));
            }
        }
        removed.extend(self.world.keys().filter(|entry| !world.contains_key(*entry)).cloned());
        self.world = world;
        self.hash = chained_hash(self.hash, &changed, &removed);
        Checkpoint { frame, hash: self.hash, changed, removed }
    }
}

/// The hash of a state's history: the hash before it and what changed. Equal states reached alike hash alike
/// on every machine; a replay checks the chain of the checkpoints it reads.
pub fn chained_hash(before: u64, changed: &[(String, String)], removed: &[String]) -> u64 {
    let mut hash = Sha256::new();
    hash.update(before.to_le_bytes());
    for (entry, value) in changed {
        for text in [entry, value] {
            hash.update((text.len() as u64).to_le_bytes());
            hash.update(text.as_bytes());
        }
    }
    for entry in removed {
        hash.update((entry.len() as u64).to_le_bytes());
        hash.update(entry.as_bytes());
    }
    u64::from_le_bytes(hash.finalize()[..8].try_into().expect("8 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::{NetMode, Value};

    fn world_with_health(health: f64) -> World {
        let mut w = World::new("w", NetMode::Standalone);
        let pawn = w.spawn("Pawn").unwrap();
        w.attach_native_component(pawn, "Health").unwrap();
        w.set_property(pawn, "Health", "health", Value::Float(health)).unwrap();
        w
    }

    #[test]
    fn checkpoints_carry_what_changed_and_rebuild_the_whole_state() {
        let mut w = world_with_health(100.0);
        let pawn = w.actors().next().unwrap().id;
        let mut tracker = StateTracker::default();
        let opening = tracker.checkpoint_of(0, &w, BTreeMap::new());
        assert_eq!(opening.changed.len(), WorldState::of_world(&w).len());
        w.set_property(pawn, "Health", "health", Value::Float(80.0)).unwrap();
        let next = tracker.checkpoint_of(30, &w, BTreeMap::new());
        assert_eq!(next.changed, vec![("Pawn_0 #0.0 / Health.health".to_string(), "Float(80.0)".to_string())]);
        assert!(next.removed.is_empty());
        let rebuilt = WorldState::default().after(&opening).after(&next);
        assert_eq!(rebuilt, WorldState::of_world(&w));
        let idle = tracker.checkpoint_of(60, &w, BTreeMap::new());
        assert!(idle.changed.is_empty() && idle.removed.is_empty());
        assert_eq!(idle.hash, chained_hash(next.hash, &[], &[]));
        assert_ne!(idle.hash, next.hash, "the hash is of the history");
        w.destroy(pawn).unwrap();
        let gone = tracker.checkpoint_of(90, &w, BTreeMap::new());
        assert_eq!(gone.removed.len(), opening.changed.len());
        assert!(WorldState::default().after(&opening).after(&next).after(&gone).is_empty());
    }

    #[test]
    fn differences_name_the_entry_and_both_values() {
        let recorded = WorldState::of_world(&world_with_health(100.0));
        let mut other = world_with_health(75.0);
        other.spawn("Pawn").unwrap();
        let differences = recorded.differences(&WorldState::of_world(&other));
        let shown: Vec<String> = differences.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            vec![
                "Pawn_0 #0.0 / Health.health: recorded Float(100.0), replayed Float(75.0)",
                "Pawn_1 #1.0: recorded (absent), replayed Authority receiver",
            ]
        );
    }
}
