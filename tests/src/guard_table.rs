//! Every function of every WIT version the host implements, each with the guards that hold for it. The guard
//! tests (`tests/guard_table.rs`) check that the table lists exactly the functions of `wit/` — so an import or
//! export cannot land without saying how it is guarded — and iterate it: each import taking names is shown to
//! refuse bad ones, each change of one actor to be refused while the actor is on its way out, each export to
//! have a test in which a plugin misbehaving in it is stopped.

/// A guard that holds for a WIT function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    /// Reads the world and changes nothing; answers about an actor on its way out too.
    Query,
    /// Every name it takes is checked (length, control characters) and a bad one refused as invalid (the
    /// hostile plugin's `bad-names`).
    Names,
    /// Changes one actor: refused once the actor is destroyed, while its handlers are still being told
    /// (`pending-kill`).
    ActorChange,
    /// Counted against the call's change budget; a plugin past it is quarantined for flooding (`flood-*`).
    Budgeted,
    /// Hands out a handle: counted against the instance's handle limit and, as a change, against the call's
    /// change budget; taken back when the plugin leaves (`hoard-handles`).
    Handle,
    /// A batch import: lists of different lengths, names not sent and batches longer than the changes left in
    /// the call are refused whole (`bad-names`, `flood-batch`).
    Batch,
    /// Only the plugin's own handles reach it (the canonical ABI checks them): reading a handle, or a
    /// resource's drop, which gives back what it stood for and is never refused.
    Own,
    /// Needs this permission, declared by the plugin and granted by the host.
    Permission(&'static str),
    /// Text the host keeps or shows: bounded and escaped (`huge-strings`, `forge-log`, `log-flood`).
    Text,
    /// Called by the host under the call's deadline (and fuel), batched at most `MAX_BATCH` entries per call
    /// where it takes a batch, charged to the plugin's frame budget; the named test shows a plugin
    /// misbehaving in it stopped and the others going on.
    Export(&'static str),
    /// A function of an older version, served by the implementation of the function of the same name in the
    /// newest version (its guards).
    Adapted,
    /// A function of an older version, served through this function of the newest version.
    AdaptedTo(&'static str),
}

/// One WIT function (`interface.function`, `interface.[method]resource.function`, or `interface.resource`
/// for a resource's drop) of one version, and its guards.
#[derive(Debug)]
pub struct Entry {
    pub version: &'static str,
    pub function: &'static str,
    pub guards: &'static [Guard],
}

impl Entry {
    /// The function's name without its interface (what the hostile plugin's log lines name).
    pub fn name(&self) -> &'static str {
        self.function.rsplit('.').next().unwrap_or(self.function)
    }

    pub fn has(&self, guard: Guard) -> bool {
        self.guards.contains(&guard)
    }
}

use Guard::*;

const fn entry(version: &'static str, function: &'static str, guards: &'static [Guard]) -> Entry {
    Entry { version, function, guards }
}

/// A 0.1.0 function served by 0.2.0's function of the same name.
const fn adapted(function: &'static str) -> Entry {
    Entry { version: "0.1.0", function, guards: &[Adapted] }
}

/// Every entry, of every version.
pub static TABLE: &[Entry] = &[
    adapted("log.log"),
    adapted("log.enabled"),
    adapted("actors.current-net-mode"),
    adapted("actors.world-name"),
    adapted("actors.actor-class"),
    adapted("actors.is-a"),
    adapted("actors.actors-of-class"),
    adapted("actors.has-authority"),
    adapted("actors.components-of"),
    adapted("actors.get-property"),
    adapted("actors.set-property"),
    adapted("actors.spawn-actor"),
    adapted("actors.destroy-actor"),
    adapted("assets.read-asset"),
    adapted("components.add-component-request"),
    adapted("components.add-extension-handler"),
    adapted("components.send-extension-event"),
    adapted("components.add-receiver"),
    adapted("components.remove-receiver"),
    adapted("components.component-request"),
    adapted("components.extension-handler"),
    adapted("init-states.states"),
    adapted("init-states.register-feature"),
    adapted("init-states.unregister-feature"),
    adapted("init-states.feature-state"),
    adapted("init-states.has-feature-reached"),
    adapted("init-states.have-all-features-reached"),
    adapted("init-states.change-feature-state"),
    adapted("init-states.subscribe-actor"),
    adapted("init-states.subscribe-class"),
    adapted("init-states.continue-init-state-chain"),
    adapted("init-states.check-default-initialization-for-implementers"),
    adapted("init-states.subscription"),
    adapted("lifecycle.on-registering"),
    adapted("lifecycle.on-loading"),
    adapted("lifecycle.on-activating"),
    adapted("lifecycle.on-activated"),
    adapted("lifecycle.on-deactivating"),
    adapted("lifecycle.poll-deactivation"),
    adapted("lifecycle.on-unloading"),
    adapted("lifecycle.on-unregistering"),
    adapted("handlers.handle-extension-events"),
    // 0.1.0 asks and prepares each step in two calls; the host walks its chains with them as with 0.2.0's one.
    entry(
        "0.1.0",
        "init-state-callbacks.can-change-init-states",
        &[AdaptedTo("init-state-callbacks.try-change-init-states")],
    ),
    entry(
        "0.1.0",
        "init-state-callbacks.handle-change-init-states",
        &[AdaptedTo("init-state-callbacks.try-change-init-states")],
    ),
    adapted("init-state-callbacks.check-default-initializations"),
    adapted("init-state-callbacks.on-init-states-changed"),
    entry("0.2.0", "log.log", &[Text]),
    entry("0.2.0", "log.enabled", &[Query]),
    entry("0.2.0", "actors.current-net-mode", &[Query]),
    entry("0.2.0", "actors.world-name", &[Query]),
    entry("0.2.0", "actors.actor-class", &[Query]),
    entry("0.2.0", "actors.is-a", &[Query, Names]),
    entry("0.2.0", "actors.actors-of-class", &[Query, Names]),
    entry("0.2.0", "actors.has-authority", &[Query]),
    entry("0.2.0", "actors.local-role", &[Query]),
    entry("0.2.0", "actors.is-locally-controlled", &[Query]),
    entry("0.2.0", "actors.components-of", &[Query]),
    entry("0.2.0", "actors.get-property", &[Query, Names]),
    entry("0.2.0", "actors.set-property", &[ActorChange, Names, Text, Budgeted]),
    entry("0.2.0", "actors.spawn-actor", &[Names, Budgeted, Permission("spawn-actors")]),
    entry("0.2.0", "actors.destroy-actor", &[ActorChange, Budgeted, Permission("spawn-actors")]),
    entry("0.2.0", "actors.set-relevancy", &[ActorChange, Names, Budgeted, Permission("relevancy")]),
    entry("0.2.0", "actors.set-player-groups", &[ActorChange, Names, Budgeted, Permission("relevancy")]),
    entry("0.2.0", "assets.read-asset", &[Query, Text]),
    entry("0.2.0", "components.[method]component-request.receiver", &[Own]),
    entry("0.2.0", "components.[method]component-request.component", &[Own]),
    entry("0.2.0", "components.[method]extension-handler.receiver", &[Own]),
    entry("0.2.0", "components.[method]extension-handler.id", &[Own]),
    entry("0.2.0", "components.[method]property-watch.id", &[Own]),
    entry("0.2.0", "components.component-request", &[Own]),
    entry("0.2.0", "components.extension-handler", &[Own]),
    entry("0.2.0", "components.property-watch", &[Own]),
    entry("0.2.0", "components.add-component-request", &[Handle, Names, Permission("component-requests")]),
    entry("0.2.0", "components.add-extension-handler", &[Handle, Names]),
    entry("0.2.0", "components.event-name", &[Query]),
    entry("0.2.0", "components.ensure-component", &[ActorChange, Names, Budgeted]),
    entry("0.2.0", "components.watch-property", &[ActorChange, Handle, Names]),
    entry("0.2.0", "components.send-extension-event", &[ActorChange, Names, Budgeted, Permission("send-events")]),
    entry("0.2.0", "components.send-extension-events", &[ActorChange, Names, Batch, Permission("send-events")]),
    entry("0.2.0", "components.add-receiver", &[ActorChange, Budgeted, Permission("spawn-actors")]),
    entry("0.2.0", "components.remove-receiver", &[ActorChange, Budgeted, Permission("spawn-actors")]),
    entry("0.2.0", "init-states.[method]subscription.id", &[Own]),
    entry("0.2.0", "init-states.subscription", &[Own]),
    entry("0.2.0", "init-states.states", &[Query]),
    entry("0.2.0", "init-states.register-feature", &[ActorChange, Names, Budgeted]),
    entry("0.2.0", "init-states.unregister-feature", &[ActorChange, Names, Budgeted]),
    entry("0.2.0", "init-states.feature-state", &[Query, Names]),
    entry("0.2.0", "init-states.has-feature-reached", &[Query, Names]),
    entry("0.2.0", "init-states.have-all-features-reached", &[Query, Names]),
    entry("0.2.0", "init-states.change-feature-state", &[ActorChange, Names, Budgeted]),
    entry("0.2.0", "init-states.subscribe-actor", &[ActorChange, Handle, Names]),
    entry("0.2.0", "init-states.subscribe-class", &[Handle, Names]),
    entry("0.2.0", "init-states.continue-init-state-chain", &[ActorChange, Names, Budgeted]),
    entry("0.2.0", "init-states.check-default-initialization-for-implementers", &[ActorChange, Names, Budgeted]),
    entry("0.2.0", "init-states.queue-chain-requests", &[ActorChange, Names, Batch]),
    entry("0.2.0", "init-states.register-features", &[ActorChange, Names, Batch]),
    entry("0.2.0", "init-states.add-chain-read", &[Names, Budgeted]),
    entry("0.2.0", "timers.[method]timer.id", &[Own]),
    entry("0.2.0", "timers.timer", &[Own]),
    entry("0.2.0", "timers.start-timer", &[Handle]),
    entry("0.2.0", "timers.now", &[Query]),
    entry("0.2.0", "lifecycle.on-registering", &[Export("loop_in_registering")]),
    entry("0.2.0", "lifecycle.on-loading", &[Export("loop_in_loading")]),
    entry("0.2.0", "lifecycle.on-activating", &[Export("loop_in_activating")]),
    entry("0.2.0", "lifecycle.on-activated", &[Export("loop_in_activated")]),
    entry("0.2.0", "lifecycle.on-deactivating", &[Export("loop_in_deactivating")]),
    entry(
        "0.2.0",
        "lifecycle.poll-deactivation",
        &[Export("a_plugin_quarantined_in_poll_deactivation_is_not_called_again")],
    ),
    entry("0.2.0", "lifecycle.on-unloading", &[Export("loop_in_unloading")]),
    entry("0.2.0", "lifecycle.on-unregistering", &[Export("loop_in_unregistering")]),
    entry("0.2.0", "lifecycle.snapshot", &[Export("a_snapshot_that_traps_is_listed_and_its_successor_starts_fresh")]),
    entry("0.2.0", "lifecycle.restore", &[Export("a_reload_whose_old_version_fails_too_says_the_plugin_is_out")]),
    entry("0.2.0", "handlers.handle-extension-events", &[Export("loop_in_event_handler")]),
    entry("0.2.0", "handlers.handle-extension-event", &[Export("a_plugin_pinging_itself_is_stopped")]),
    entry("0.2.0", "init-state-callbacks.try-change-init-states", &[Export("loop_in_can_change")]),
    entry("0.2.0", "init-state-callbacks.check-default-initializations", &[Export("loop_in_default_init")]),
    entry("0.2.0", "init-state-callbacks.on-init-states-changed", &[Export("loop_in_state_changed")]),
    entry(
        "0.2.0",
        "timer-callbacks.on-timers",
        &[Export("a_plugin_over_its_frame_budget_frame_after_frame_is_quarantined_and_the_others_play_on")],
    ),
    entry(
        "0.2.0",
        "replication-callbacks.on-replicated",
        &[Export("replicated_scores_reach_every_client_with_rep_notifies_and_the_lyra_chain_completes_there")],
    ),
    entry("0.2.0", "property-callbacks.on-properties-changed", &[Export("loop_in_property_changed")]),
];
