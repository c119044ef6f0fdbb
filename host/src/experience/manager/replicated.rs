//! Rep-notify on a client: replicated property changes reach the plugins that declared them, and the game's own
//! (a pawn's controller or player state arriving).

use std::collections::{BTreeMap, HashMap};

use super::ExperienceManager;
use crate::delivery::ReplicatedBatch;
use crate::game;
use crate::world;
use crate::world::component_manager::OwnerId;
use crate::world::RepNotify;

impl ExperienceManager {
    /// Tells each plugin of this world that declared a replicated class about the changes to it (one
    /// `on-replicated` call per plugin, changes in the order they were applied); the game reacts to its own
    /// `Possession` changes as Lyra's `OnRep_Controller` and `OnRep_PlayerState` do. Then what those calls
    /// caused is delivered.
    pub fn notify_replicated(&mut self, notes: Vec<RepNotify>) {
        if notes.is_empty() {
            return;
        }
        let mut declared_by: HashMap<&str, OwnerId> = HashMap::new();
        let manifests: Vec<_> =
            self.in_world.iter().filter_map(|f| Some((f.owner, self.features.manifest(&f.name)?))).collect();
        for (owner, manifest) in &manifests {
            for class in manifest.replicated.keys() {
                declared_by.entry(class.as_str()).or_insert(*owner);
            }
        }
        let mut batches: BTreeMap<OwnerId, ReplicatedBatch> = BTreeMap::new();
        let mut indices: BTreeMap<OwnerId, HashMap<String, u32>> = BTreeMap::new();
        for note in notes {
            if note.component == game::POSSESSION {
                let _ = game::possession_replicated(&mut world::lock(&self.world), note.actor, &note.property);
                continue;
            }
            let Some(owner) = declared_by.get(note.component.as_str()).copied() else { continue };
            let batch = batches.entry(owner).or_default();
            let names = indices.entry(owner).or_default();
            let mut index = |name: &str| {
                let next = batch.names.len() as u32;
                *names.entry(name.to_string()).or_insert_with(|| {
                    batch.names.push(name.to_string());
                    next
                })
            };
            let (component, property) = (index(&note.component), index(&note.property));
            batch.actors.push(note.actor.to_raw());
            batch.components.push(component);
            batch.properties.push(property);
            batch.olds.push(note.old);
            batch.news.push(note.new);
        }
        let mut failures = Vec::new();
        for (owner, batch) in batches {
            failures.extend(self.instances.notify_replicated(&self.world, &self.timeline, owner, &batch));
        }
        self.report_delivery_failures(failures);
        self.pump();
    }
}
