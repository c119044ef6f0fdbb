//! A world's state as a replay compares it: every actor, component, property value, init state and plugin,
//! each an entry named as a modder reads it (`Pawn_3 #3.0 / HealthComponent.health`) with its value as text.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use crate::experience::ExperienceManager;
use crate::recording::Checkpoint;
use crate::world::{self, ComponentOrigin, World};

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
        let playing = manager.live_features();
        for plugin in manager.played_plugins() {
            let how = if playing.contains(&plugin) { "playing" } else { "not playing" };
            state.entries.insert(format!("plugin {plugin}"), how.to_string());
        }
        state.entries.insert("experience".into(), manager.state().to_string());
        state.entries.insert("failures".into(), manager.report().failures.len().to_string());
        state
    }

    /// The state of a world's actors, components, properties and init states.
    pub fn of_world(w: &World) -> WorldState {
        let mut entries = BTreeMap::new();
        for actor in w.actors() {
            let name = format!("{} {}", actor.name(), actor.id);
            let player = actor.player.map(|p| format!(" player {p:?}")).unwrap_or_default();
            let receiver = if actor.receiver { " receiver" } else { "" };
            entries.insert(name.clone(), format!("{:?}{player}{receiver}", actor.role));
            for component in &actor.components {
                let origin = match component.origin {
                    ComponentOrigin::Native => "native",
                    ComponentOrigin::Request(_) => "requested",
                    ComponentOrigin::Replicated => "replicated",
                };
                entries.insert(format!("{name} / {}", component.class), origin.to_string());
                for (property, value) in &component.properties {
                    entries.insert(format!("{name} / {}.{property}", component.class), format!("{value:?}"));
                }
            }
            for feature in w.manager.init_states.features(actor.id) {
                let reached = w.state_text(feature.state).unwrap_or("no state");
                entries.insert(format!("{name} / init state of {}", w.name_text(feature.feature)), reached.into());
            }
        }
        WorldState { entries }
    }

    /// A hash of every entry: equal states hash alike on every machine.
    pub fn hash(&self) -> u64 {
        let mut hash = Sha256::new();
        for (entry, value) in &self.entries {
            hash.update((entry.len() as u64).to_le_bytes());
            hash.update(entry.as_bytes());
            hash.update((value.len() as u64).to_le_bytes());
            hash.update(value.as_bytes());
        }
        u64::from_le_bytes(hash.finalize()[..8].try_into().expect("8 bytes"))
    }

    /// The checkpoint of this state after `frame` frames, as what changed since `before`.
    pub fn checkpoint(&self, frame: u64, before: &WorldState) -> Checkpoint {
        let changed = self
            .entries
            .iter()
            .filter(|(entry, value)| before.entries.get(*entry) != Some(value))
            .map(|(entry, value)| (entry.clone(), value.clone()))
            .collect();
        let removed = before.entries.keys().filter(|entry| !self.entries.contains_key(*entry)).cloned().collect();
        Checkpoint { frame, hash: self.hash(), changed, removed }
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
        let first = WorldState::of_world(&world_with_health(100.0));
        let second = WorldState::of_world(&world_with_health(80.0));
        let opening = first.checkpoint(0, &WorldState::default());
        assert_eq!(opening.changed.len(), first.len());
        let next = second.checkpoint(30, &first);
        assert_eq!(next.changed, vec![("Pawn_0 #0.0 / Health.health".to_string(), "Float(80.0)".to_string())]);
        assert!(next.removed.is_empty());
        let rebuilt = WorldState::default().after(&opening).after(&next);
        assert_eq!(rebuilt, second);
        assert_eq!(rebuilt.hash(), next.hash);
        assert_ne!(first.hash(), second.hash());
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
                "Pawn_1 #1.0: recorded (absent), replayed Authority",
            ]
        );
    }
}
