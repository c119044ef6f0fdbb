//! How a run of one kind of work becomes one batched call: the batch each kind is delivered in, built by one
//! builder from the run's live items, and the export that takes it.
//!
//! A kind of work delivered as a plain batch implements [`RunBatch`]: which export takes it, how one queued item
//! goes into it, and the call that sends it. Everything else (skipping stale items, sizing the lists once,
//! sending each name once, the timeline, the refusal budget) is [`RunBatch::from_run`] and `dispatch`'s, the
//! same for every kind. Chain walks are not a plain batch: a walk asks, applies and asks again, in waves.

use super::batch::{BatchNames, ExtensionBatch, FeatureBatch, PropertyBatch, StateChangeBatch};
use super::plugin_instance::{CallError, PluginInstance};
use super::rounds::RunItems;
use crate::world::component_manager::{Name, Work};
use crate::world::World;

/// A batch of one kind of work, as the WIT export of that kind takes it.
pub(super) trait RunBatch: Sized {
    /// The export the batch is sent to, as the timeline and a quarantine name the call.
    const CALL: &'static str;

    /// An empty batch with room for `entries` items.
    fn with_capacity(entries: usize) -> Self;

    /// Adds one live item of the batch's kind; a run holds one kind only, so other kinds do not come.
    fn push(&mut self, item: &Work, names: &mut BatchNames, world: &World);

    /// Takes the names its entries refer to by index (a batch without names ignores them).
    fn set_names(&mut self, names: Vec<String>);

    /// How many entries the batch holds: no call is made for none.
    fn entries(&self) -> usize;

    /// Sends the batch to the plugin's export for its kind.
    fn send(&self, instance: &mut dyn PluginInstance) -> Result<(), CallError>;

    /// The batch of a run's items that are still live (their handler, subscription or watch not gone).
    fn from_run(world: &World, run: RunItems<'_>) -> Self {
        let mut names = BatchNames::default();
        let mut batch = Self::with_capacity(run.len());
        for item in run.iter() {
            if world.is_work_live(item) {
                batch.push(item, &mut names, world);
            }
        }
        batch.set_names(names.names);
        batch
    }
}

/// The index of `name` in a batch's names, its text looked up only the first time.
#[inline(always)]
pub(super) fn index_of(names: &mut BatchNames, name: Name, world: &World) -> u32 {
    names.index(name, || world.name_text(name).to_string())
}

impl RunBatch for ExtensionBatch {
    const CALL: &'static str = "handle-extension-events";

    fn with_capacity(entries: usize) -> Self {
        ExtensionBatch::with_capacity(entries)
    }

    #[inline]
    fn push(&mut self, item: &Work, names: &mut BatchNames, world: &World) {
        if let Work::Extension { number, actor, event, .. } = item {
            self.handlers.push(*number);
            self.actors.push(actor.to_raw());
            self.events.push(index_of(names, *event, world));
        }
    }

    fn set_names(&mut self, names: Vec<String>) {
        self.names = names;
    }

    fn entries(&self) -> usize {
        self.actors.len()
    }

    fn send(&self, instance: &mut dyn PluginInstance) -> Result<(), CallError> {
        instance.handle_extension_events(self)
    }
}

impl RunBatch for StateChangeBatch {
    const CALL: &'static str = "on-init-states-changed";

    fn with_capacity(entries: usize) -> Self {
        StateChangeBatch::with_capacity(entries)
    }

    #[inline]
    fn push(&mut self, item: &Work, names: &mut BatchNames, world: &World) {
        if let Work::InitStateChanged { number, actor, feature, state, .. } = item {
            self.ids.push(*number);
            self.actors.push(actor.to_raw());
            self.features.push(index_of(names, *feature, world));
            self.states.push(*state);
        }
    }

    fn set_names(&mut self, names: Vec<String>) {
        self.names = names;
    }

    fn entries(&self) -> usize {
        self.actors.len()
    }

    fn send(&self, instance: &mut dyn PluginInstance) -> Result<(), CallError> {
        instance.on_init_states_changed(self)
    }
}

impl RunBatch for PropertyBatch {
    const CALL: &'static str = "on-properties-changed";

    fn with_capacity(entries: usize) -> Self {
        PropertyBatch {
            ids: Vec::with_capacity(entries),
            actors: Vec::with_capacity(entries),
            olds: Vec::with_capacity(entries),
            news: Vec::with_capacity(entries),
        }
    }

    #[inline]
    fn push(&mut self, item: &Work, _: &mut BatchNames, _: &World) {
        if let Work::PropertyChanged { number, actor, change, .. } = item {
            self.ids.push(*number);
            self.actors.push(actor.to_raw());
            self.olds.push(change.old.clone());
            self.news.push(change.new.clone());
        }
    }

    fn set_names(&mut self, _: Vec<String>) {}

    fn entries(&self) -> usize {
        self.ids.len()
    }

    fn send(&self, instance: &mut dyn PluginInstance) -> Result<(), CallError> {
        instance.on_properties_changed(self)
    }
}

impl RunBatch for FeatureBatch {
    const CALL: &'static str = "check-default-initializations";

    fn with_capacity(entries: usize) -> Self {
        FeatureBatch::with_capacity(entries)
    }

    #[inline]
    fn push(&mut self, item: &Work, names: &mut BatchNames, world: &World) {
        if let Work::CheckDefaultInitialization { actor, feature, .. } = item {
            self.actors.push(actor.to_raw());
            self.features.push(index_of(names, *feature, world));
        }
    }

    fn set_names(&mut self, names: Vec<String>) {
        self.names = names;
    }

    fn entries(&self) -> usize {
        self.actors.len()
    }

    fn send(&self, instance: &mut dyn PluginInstance) -> Result<(), CallError> {
        instance.check_default_initializations(self)
    }
}
