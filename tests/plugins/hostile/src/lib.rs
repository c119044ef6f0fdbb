//! A plugin written to break its sandbox. Its `behaviour` asset names what it does.
//!
//! Misbehaving in a callback, `<misdeed>-<callback>`:
//! - misdeeds: `loop` (never returns), `panic`, `nap` (sleeps 25 ms in the first callback and every 256th after
//!   it, so a full batch naps once: each call well within its deadline, more than a 20 ms frame budget);
//! - callbacks: the lifecycle's `registering`, `loading`, `activating`, `activated`, `deactivating`,
//!   `unloading`, `unregistering`; a reload's `snapshot` and `restore`; `property-changed` (a property it
//!   watches, on a pawn it spawns and writes as it activates, and with `nap`, one on every pawn it hears of,
//!   written at once); `event` (an extension event); and the init-state callbacks `can-change`,
//!   `handle-change`, `default-init`, `state-changed` (for a feature `Hostile` it registers on every pawn).
//!
//! In `on-activating`:
//! - `memory-activating`: allocates until something stops it;
//! - `stack-overflow-activating`: recurses without end, each frame an array in its memory (Rust's stack);
//! - `deep-recursion-activating`: recurses without end on WebAssembly's own stack (no memory);
//! - `refusals-activating`: makes thousands of host calls the host must refuse;
//! - `sleep-activating`: sleeps for a minute; `nap-activating`: sleeps 2 ms (within its deadline);
//! - `naps-activating`: sleeps 100 ms six times in one call; `long-naps`: sleeps 300 ms in `on-activating` and
//!   again in `on-activated`;
//! - `flood-events` / `flood-spawns` / `flood-requests`: a million events, actors or component requests;
//! - `huge-strings`: megabyte-long names, log lines and property values;
//! - `log-flood`: logs and prints 20,000 lines in one call;
//! - `hoard-handles`: asks for component requests until the host refuses one, and keeps them;
//! - `forge-handle`: drops a resource handle it was never given (one its neighbour holds under that number);
//! - `use-after-drop`: drops a component request, then drops it again through its old handle;
//! - `print`: writes to its standard output and error (allowed: the lines go to the host log);
//!
//! `hold-request` asks for `(Pawn, Shared)` and lets go of it only in `on-unregistering`, after the host has
//! deactivated it.
//!
//! Against other plugins and the host, within every documented limit:
//! - `trespass`: on every init-state change of another plugin's feature, tries to change that feature's state,
//!   write a property of `HeroComponent` and remove the actor as a receiver, logging each outcome;
//! - `bad-names`: passes a name with a newline and a megabyte-long one to every import taking names, logging
//!   whether each was refused;
//! - `forge-log`: logs and prints lines with newlines and terminal escapes; `huge-error-activating` refuses
//!   activation with a 4 MiB error text;
//! - `ping-self`: answers every `Ping` event with another; `ping` and `pong` answer each other's;
//! - `spawn-storm`: spawns receivers 300 per call, wave after wave, up to 30,000;
//! - `loop-poll`: holds deactivation open, then loops in `poll-deactivation`;
//! - `hoard-properties`: writes 64 KiB properties on a component of its own on every pawn until refused, and
//!   one on the game's `Possession` component (it declares `write-properties`).
//!
//! Against the guards added with 0.2.0:
//! - `pending-kill`: spawns a pawn it handles, destroys it, then — in the same call, while the pawn waits for its
//!   handlers to hear `ReceiverRemoved` — asks about it and tries every change of it, logging each outcome as
//!   `pending-kill <import>: accepted` or `pending-kill <import>: refused <error>`;
//! - `timer-flood`: starts 1,000 timers firing every frame and keeps them;
//! - `refuse-restore`: keeps a state across reloads, and refuses every state handed back to it;
//! - `ungranted`: calls every import that needs a permission (run without any granted), logging each outcome
//!   as `ungranted <import>: accepted` or `ungranted <import>: refused <error>`;
//! - `busy-timers`: starts one timer firing every frame and spins for tens of milliseconds in each firing (well
//!   within a call's deadline, far over any frame budget).
//!
//! For supervised restarts, `restartable`: counts frames with a timer, keeps its count across snapshots (logging
//! `kept count N` and `restored count N`), requests `HostileStats` on pawns, logs `heard Hello with count N` and
//! panics on a `Crash` event.

use gamefeature_sdk::components::{self, ComponentRequest, ExtensionHandler};
use gamefeature_sdk::init_state::{self, Subscription};
use gamefeature_sdk::world::{self, ActorId, Relevancy};
use gamefeature_sdk::{export_plugin, log, ActivationContext, Deactivation, Error, Plugin, Value};

const FEATURE: &str = "Hostile";

#[derive(Default)]
struct Hostile {
    behaviour: String,
    handler: Option<ExtensionHandler>,
    held: Option<ComponentRequest>,
    hoard_of_handles: Vec<ComponentRequest>,
    subscriptions: Vec<Subscription>,
    hoard: Vec<Vec<u8>>,
    trespassed: Vec<String>,
    /// `spawn-storm`: actors spawned so far, and the last of the latest wave.
    spawned: usize,
    wave_last: Option<ActorId>,
    timers: Vec<gamefeature_sdk::timers::Timer>,
    watches: Vec<components::PropertyWatch>,
    /// `restartable`: frames counted.
    count: u64,
    /// Callbacks misbehaved in so far (`nap` naps in every 256th).
    misdeeds: std::cell::Cell<u64>,
}

fn spin() -> u64 {
    let mut n: u64 = 0;
    loop {
        n = std::hint::black_box(n.wrapping_add(1));
        if n == u64::MAX {
            return n;
        }
    }
}

/// Recursion that keeps nothing in linear memory: every frame is on WebAssembly's own stack.
fn recurse_on_the_wasm_stack(depth: u64) -> u64 {
    if depth == u64::MAX {
        return 0;
    }
    std::hint::black_box(recurse_on_the_wasm_stack(depth + 1)).wrapping_add(depth)
}

/// What `mark-memory` leaves in its memory, for the next instance in the same slot to look for, kept with every
/// byte flipped (`^ 0xff`): the mark itself is never in the plugin's own data, so a reader finds only what a
/// previous instance wrote.
const FLIPPED_MARK: [u8; 16] = flip(*b"PREVIOUS-TENANT!");

const fn flip(mut bytes: [u8; 16]) -> [u8; 16] {
    let mut i = 0;
    while i < bytes.len() {
        bytes[i] ^= 0xff;
        i += 1;
    }
    bytes
}

/// Pages `mark-memory` and `read-memory` grow their memory by.
const MARKED_PAGES: usize = 64;

/// Grows the memory and fills the new pages with the mark.
fn mark_memory() {
    let start = core::arch::wasm32::memory_grow(0, MARKED_PAGES);
    assert_ne!(start, usize::MAX, "the memory grows");
    let base = start * 65536;
    for offset in 0..MARKED_PAGES * 65536 {
        let byte = FLIPPED_MARK[offset % FLIPPED_MARK.len()] ^ 0xff;
        // SAFETY: the pages were just grown for this instance, and nothing else uses them.
        unsafe { core::ptr::write_volatile((base + offset) as *mut u8, byte) };
    }
    log::info(&format!("marked {MARKED_PAGES} pages"));
}

/// Grows the memory as `mark-memory` did and looks, in every page it has, for the mark a previous instance left.
fn read_memory() {
    let start = core::arch::wasm32::memory_grow(0, MARKED_PAGES);
    assert_ne!(start, usize::MAX, "the memory grows");
    let end = (start + MARKED_PAGES) * 65536;
    let mut found = 0usize;
    // From the first mark-sized step: address 0 is never read.
    for address in (FLIPPED_MARK.len()..end).step_by(FLIPPED_MARK.len()) {
        let marked = (0..FLIPPED_MARK.len()).all(|i| {
            // SAFETY: every address below the memory's size is in bounds, and a byte of any value may be read.
            let byte = unsafe { core::ptr::read_volatile((address + i) as *const u8) };
            byte ^ 0xff == FLIPPED_MARK[i]
        });
        found += usize::from(marked);
    }
    log::info(&format!("found the previous tenant's mark {found} times in {} pages", end / 65536));
}

fn nap(millis: u64) {
    let started = std::time::Instant::now();
    std::thread::sleep(std::time::Duration::from_millis(millis));
    log::info(&format!("napped {} ms", started.elapsed().as_millis()));
}

fn recurse(depth: u64) -> u64 {
    let frame = std::hint::black_box([depth; 64]);
    if frame[0] == u64::MAX {
        return 0; // Never: depth would have to reach u64::MAX first.
    }
    recurse(depth + 1).wrapping_add(frame[7])
}

impl Hostile {
    /// Misbehaves if the behaviour is a misdeed in `callback`.
    fn misbehave_in(&self, callback: &str) {
        match self.behaviour.strip_suffix(callback).and_then(|b| b.strip_suffix('-')) {
            Some("loop") => {
                spin();
            }
            Some("panic") => panic!("hostile plugin panics on purpose in {callback}"),
            Some("nap") => {
                let count = self.misdeeds.get();
                self.misdeeds.set(count + 1);
                if count % 256 == 0 {
                    std::thread::sleep(std::time::Duration::from_millis(25));
                }
            }
            _ => {}
        }
    }

    fn targets_init_states(&self) -> bool {
        ["can-change", "handle-change", "default-init", "state-changed"].iter().any(|c| self.behaviour.ends_with(c))
    }

    /// Takes part in a pawn's initialisation, so the init-state callbacks come to this plugin.
    fn join_init(&mut self, pawn: ActorId) {
        if init_state::register_feature(pawn, FEATURE, "HostileComponent").is_err() {
            return;
        }
        if let Ok(subscription) = init_state::subscribe_actor(pawn, None, None, false, 1) {
            self.subscriptions.push(subscription);
        }
        let _ = init_state::continue_chain(pawn, FEATURE);
    }

    /// Floods the host with `what` until a million are sent or a thousand in a row are refused.
    fn flood(&mut self, what: &str) {
        let pawn = world::spawn_actor("Pawn", false).ok();
        let mut requests = Vec::new();
        let mut refused_in_a_row = 0;
        for i in 0..1_000_000u32 {
            let refused = match what {
                "events" => pawn.map(|p| components::send_event(p, "Flood")).unwrap_or(Ok(())).is_err(),
                "spawns" => world::spawn_actor("Pawn", false).is_err(),
                // Whom its pawn replicates to, flipped between two rooms: each a change the server must look at.
                "relevancy" => {
                    let room = Relevancy::Groups(vec![format!("room-{}", i % 2)]);
                    pawn.map(|p| world::set_relevancy(p, &room)).unwrap_or(Ok(())).is_err()
                }
                _ => match components::request_component("Pawn", &format!("Flood{}", i % 64)) {
                    Ok(request) => {
                        requests.push(request);
                        false
                    }
                    Err(_) => true,
                },
            };
            refused_in_a_row = if refused { refused_in_a_row + 1 } else { 0 };
            if refused_in_a_row == 1000 {
                log::warn(&format!("flood {what}: a thousand refusals in a row after {i} calls"));
                return;
            }
        }
    }

    fn huge_strings(&mut self) {
        let huge = "h".repeat(4 << 20);
        let pawn = world::spawn_actor("Pawn", false).ok();
        log::info(&huge);
        let outcomes = [
            ("event name", pawn.map(|p| components::send_event(p, &huge))),
            ("component class", Some(components::request_component("Pawn", &huge).map(drop))),
            ("property", pawn.map(|p| world::set_property(p, "Pawn", "Note", &Value::Text(huge.clone())))),
        ];
        for (what, outcome) in outcomes {
            log::warn(&format!("huge {what}: {outcome:?}"));
        }
    }
}

impl Hostile {
    /// Passes bad names to every import that takes one; each must be refused as invalid.
    fn bad_names(&mut self) {
        let pawn = world::spawn_actor("Pawn", false).unwrap_or(0);
        for (kind, name) in [("control", "Bad\nName".to_string()), ("huge", "n".repeat(1 << 20))] {
            let name = name.as_str();
            let outcomes: Vec<(&str, Result<(), Error>)> = vec![
                ("is-a", world::is_a(pawn, name).map(drop)),
                ("actors-of-class", world::actors_of_class(name).map(drop)),
                ("get-property", world::get_property(pawn, name, "x").map(drop)),
                ("set-property", world::set_property(pawn, "Pawn", name, &Value::Integer(1))),
                ("spawn-actor", world::spawn_actor(name, false).map(drop)),
                ("set-relevancy", world::set_relevancy(pawn, &Relevancy::Groups(vec!["red".into(), name.into()]))),
                ("set-player-groups", world::set_player_groups(pawn, &["red", name])),
                ("add-component-request", components::request_component("Pawn", name).map(drop)),
                ("add-extension-handler", components::add_extension_handler(name, 9).map(drop)),
                ("send-extension-event", components::send_event(pawn, name)),
                ("ensure-component", components::ensure_component(pawn, name).map(drop)),
                ("watch-property (component)", components::watch_property(pawn, name, "hp", 1).map(drop)),
                ("watch-property (property)", components::watch_property(pawn, "Pawn", name, 1).map(drop)),
                ("register-feature", init_state::register_feature(pawn, name, "X")),
                ("unregister-feature", init_state::unregister_feature(pawn, name)),
                ("feature-state", init_state::feature_state(pawn, name).map(drop)),
                ("has-feature-reached", init_state::has_feature_reached(pawn, "F", name).map(drop)),
                ("have-all-features-reached", init_state::have_all_features_reached(pawn, name, None).map(drop)),
                ("change-feature-state", init_state::change_feature_state(pawn, name, "S")),
                ("subscribe-actor", init_state::subscribe_actor(pawn, Some(name), None, false, 1).map(drop)),
                ("subscribe-class", init_state::subscribe_class(name, Some("F"), None, false, 1).map(drop)),
                ("continue-init-state-chain", init_state::continue_init_state_chain(pawn, name)),
                (
                    "check-default-initialization-for-implementers",
                    init_state::check_default_initialization_for_implementers(pawn, name),
                ),
                ("queue-chain-requests", queue_chain_request(pawn, 0, &[name])),
                ("send-extension-events", send_events(pawn, 0, &[name])),
                ("add-chain-read (feature)", init_state::add_chain_read(Some(name), "Possession", "controller")),
                ("add-chain-read (property)", init_state::add_chain_read(None, "Possession", name)),
                ("register-features (feature)", register_features(pawn, (0, 1), &[name, "HostileComponent"])),
                ("register-features (implementer)", register_features(pawn, (0, 1), &["F", name])),
            ];
            for (import, outcome) in outcomes {
                let verdict = if matches!(outcome, Err(Error::Invalid(_))) { "refused" } else { "ACCEPTED" };
                log::warn(&format!("{kind} name in {import}: {verdict}"));
            }
        }
        // A request naming a feature by an index past the names sent.
        let outcome = queue_chain_request(pawn, 1, &["Feature"]);
        let verdict = if matches!(outcome, Err(Error::Invalid(_))) { "refused" } else { "ACCEPTED" };
        log::warn(&format!("unsent name in queue-chain-requests: {verdict}"));
        let outcome = register_features(pawn, (0, 5), &["Feature", "HostileComponent"]);
        let verdict = if matches!(outcome, Err(Error::Invalid(_))) { "refused" } else { "ACCEPTED" };
        log::warn(&format!("unsent name in register-features: {verdict}"));
        let outcome = send_events(pawn, 3, &["Event"]);
        let verdict = if matches!(outcome, Err(Error::Invalid(_))) { "refused" } else { "ACCEPTED" };
        log::warn(&format!("unsent name in send-extension-events: {verdict}"));
        // Parallel lists of different lengths: entries nobody can read.
        use gamefeature_sdk::bindings::gamefeature::plugin::components as components_raw;
        use gamefeature_sdk::bindings::gamefeature::plugin::init_states::{self as raw, ChainWork};
        let names = ["Feature".to_string(), "HostileComponent".to_string()];
        let uneven = [
            (
                "queue-chain-requests",
                raw::queue_chain_requests(&[pawn, pawn], &[0], &[ChainWork::ContinueChain], &names),
            ),
            ("register-features", raw::register_features(&[pawn], &[0, 0], &[1], &names)),
            ("send-extension-events", components_raw::send_extension_events(&[pawn, pawn], &[0], &names)),
        ];
        for (import, refused) in uneven {
            let all = refused.len() == 2 && refused.iter().all(|(_, e)| matches!(e, Error::Invalid(_)));
            log::warn(&format!("uneven lists in {import}: {}", if all { "refused" } else { "ACCEPTED" }));
        }
    }

    /// Tries to take over another plugin's feature, component and actor.
    fn trespass(&mut self, actor: ActorId, feature: &str) {
        if feature == FEATURE || self.trespassed.iter().any(|f| f == feature) {
            return;
        }
        self.trespassed.push(feature.to_string());
        let changed = init_state::change_feature_state(actor, feature, init_state::GAMEPLAY_READY);
        log::warn(&format!("trespass change-feature-state {feature}: {changed:?}"));
        let written = world::set_property(actor, "HeroComponent", "health", &Value::Integer(0));
        log::warn(&format!("trespass set-property HeroComponent: {written:?}"));
        let removed = components::remove_receiver(actor);
        log::warn(&format!("trespass remove-receiver: {removed:?}"));
    }

    /// Fills the host's memory with properties, 64 KiB at a time, until it refuses.
    fn hoard_properties(&mut self, pawn: ActorId) {
        let value = Value::Text("p".repeat(64 << 10));
        let note = world::set_property(pawn, "Possession", "hoarded-note", &value);
        log::warn(&format!("hoard note on the game's component: {note:?}"));
        for i in 0..100_000 {
            if let Err(e) = world::set_property(pawn, "Hoard", &format!("p{i}"), &value) {
                log::warn(&format!("hoarded {i} properties, then: {e:?}"));
                return;
            }
        }
    }

    /// Spawns the next wave of `spawn-storm`.
    /// Requests a component of its own on pawns, spawns one, watches one of the component's properties and
    /// writes it: the change reaches `on-properties-changed` once this call returns.
    fn watch_own_property(&mut self) {
        self.held = components::request_component("Pawn", "HostileStats").ok();
        let watched = world::spawn_actor("Pawn", true).and_then(|pawn| {
            self.watches.push(components::watch_property(pawn, "HostileStats", "hp", 5)?);
            world::set_property(pawn, "HostileStats", "hp", &Value::Integer(1))
        });
        if let Err(e) = watched {
            log::warn(&format!("could not watch a property of its own: {e:?}"));
        }
    }

    fn pending_kill(&mut self) {
        self.handler = components::add_extension_handler("Pawn", 1).ok();
        let Ok(pawn) = world::spawn_actor("Pawn", true) else {
            return log::warn("pending-kill: could not spawn a pawn");
        };
        if let Err(e) = world::destroy_actor(pawn) {
            return log::warn(&format!("pending-kill: could not destroy its pawn: {e:?}"));
        }
        let outcome = |what: &str, result: Result<(), Error>| log_outcome("pending-kill", what, result);
        outcome("actor-class", world::actor_class(pawn).map(drop));
        outcome("components-of", world::components_of(pawn).map(drop));
        outcome("add-receiver", components::add_receiver(pawn));
        outcome("remove-receiver", components::remove_receiver(pawn));
        outcome("register-feature", init_state::register_feature(pawn, FEATURE, "Pawn"));
        outcome("register-features", register_features(pawn, (0, 1), &[FEATURE, "Pawn"]));
        outcome("unregister-feature", init_state::unregister_feature(pawn, FEATURE));
        outcome("change-feature-state", init_state::change_feature_state(pawn, FEATURE, init_state::SPAWNED));
        let subscription = init_state::subscribe_actor(pawn, None, None, true, 3);
        outcome("subscribe-actor", subscription.map(|s| self.subscriptions.push(s)));
        outcome("continue-init-state-chain", init_state::continue_chain(pawn, FEATURE));
        outcome("queue-chain-requests", queue_chain_request(pawn, 0, &[FEATURE]));
        outcome(
            "check-default-initialization-for-implementers",
            init_state::check_default_initialization_for_implementers(pawn, FEATURE),
        );
        outcome("send-extension-event", components::send_event(pawn, "Late"));
        outcome("send-extension-events", send_events(pawn, 0, &["Late"]));
        outcome("set-property", world::set_property(pawn, "HostileStats", "hp", &Value::Integer(1)));
        outcome("ensure-component", components::ensure_component(pawn, "HostileStats").map(drop));
        outcome("watch-property", components::watch_property(pawn, "HostileStats", "hp", 4).map(drop));
        outcome("set-relevancy", world::set_relevancy(pawn, &Relevancy::OwnerOnly));
        outcome("set-player-groups", world::set_player_groups(pawn, &["red"]));
        outcome("destroy-actor", world::destroy_actor(pawn));
    }

    fn spawn_wave(&mut self) {
        for _ in 0..300 {
            match world::spawn_actor("Character", true) {
                Ok(actor) => self.wave_last = Some(actor),
                Err(_) => return,
            }
            self.spawned += 1;
        }
    }
}

impl Plugin for Hostile {
    fn on_registering(&mut self) -> Result<(), String> {
        self.behaviour = world::read_asset_text("behaviour").unwrap_or_default().trim().to_string();
        self.misbehave_in("registering");
        Ok(())
    }

    fn on_activating(&mut self, _context: &ActivationContext) -> Result<(), String> {
        self.misbehave_in("activating");
        match self.behaviour.as_str() {
            "memory-activating" => loop {
                // Reserve without touching: memory grows as fast as the allocator can ask for it.
                let mut chunk = Vec::with_capacity(8 << 20);
                chunk.push(1u8);
                self.hoard.push(chunk);
            },
            "stack-overflow-activating" => {
                recurse(0);
            }
            "deep-recursion-activating" => {
                recurse_on_the_wasm_stack(0);
            }
            "naps-activating" => (0..6).for_each(|_| nap(100)),
            "mark-memory" => mark_memory(),
            "read-memory" => read_memory(),
            "long-naps" => nap(300),
            "refusals-activating" => {
                for _ in 0..5000 {
                    let _ = world::actor_class(u64::MAX);
                }
            }
            "sleep-activating" => std::thread::sleep(std::time::Duration::from_secs(60)),
            "nap-activating" => nap(2),
            "flood-events" => self.flood("events"),
            "flood-spawns" => self.flood("spawns"),
            "flood-relevancy" => self.flood("relevancy"),
            "flood-requests" => self.flood("requests"),
            "flood-batch" => {
                // One batch of more events than a call may make changes: refused whole, in one refusal.
                use gamefeature_sdk::bindings::gamefeature::plugin::components::send_extension_events;
                let pawn = world::spawn_actor("Pawn", false).unwrap_or(0);
                let count = 20_000;
                let refused = send_extension_events(&vec![pawn; count], &vec![0; count], &["Flood".to_string()]);
                log::warn(&format!("flood batch: {} refused, the first for entry {:?}", refused.len(), refused[0].0));
            }
            "huge-strings" => self.huge_strings(),
            "forge-handle" => {
                // SAFETY: deliberately unsound — the point is to show the host refuses it.
                // Handle 1 is the first handle of every instance's own table: lyra-character holds one, this
                // instance none yet. Tables are per instance, so the number names nothing here.
                drop(unsafe { ComponentRequest::from_handle(1) });
            }
            "use-after-drop" => {
                let request = components::request_component("Pawn", "Shield").map_err(|e| format!("{e:?}"))?;
                let handle = request.handle();
                drop(request);
                // SAFETY: deliberately unsound, as above.
                drop(unsafe { ComponentRequest::from_handle(handle) });
            }
            "print" => {
                println!("hello from stdout");
                eprintln!("complaint on stderr");
                print!("a last line without a newline");
                let _ = std::io::Write::flush(&mut std::io::stdout());
            }
            "bad-names" => self.bad_names(),
            "forge-log" => {
                log::info("all fine\nlyra-character@w quarantined: forged by hostile");
                println!("\x1b[2J\x1b[Hthe screen was cleared");
            }
            "huge-error-activating" => return Err(format!("{}\nforged line", "e".repeat(4 << 20))),
            "spawn-storm" => self.spawn_wave(),
            "log-flood" => {
                for i in 0..10_000 {
                    log::info(&format!("log line {i}"));
                    println!("printed line {i}");
                }
            }
            "hoard-handles" => {
                while self.hoard_of_handles.len() < 1_000_000 {
                    match components::request_component("Pawn", "Hoarded") {
                        Ok(request) => self.hoard_of_handles.push(request),
                        Err(e) => {
                            log::warn(&format!("hoarded {} handles, then: {e:?}", self.hoard_of_handles.len()));
                            break;
                        }
                    }
                }
                // Room for the extension handler every behaviour adds below.
                self.hoard_of_handles.pop();
            }
            "hoard-properties" => {
                self.held = Some(components::request_component("Pawn", "Hoard").map_err(|e| format!("{e:?}"))?);
            }
            "pending-kill" => self.pending_kill(),
            "ungranted" => ungranted(),
            behaviour if behaviour.ends_with("-property-changed") => self.watch_own_property(),
            "restartable" => {
                self.timers = gamefeature_sdk::timers::every_frame(0).into_iter().collect();
                self.held = Some(components::request_component("Pawn", "HostileStats").map_err(|e| format!("{e:?}"))?);
            }
            "timer-flood" | "busy-timers" | "heavy-timer-flood" => {
                let count = if self.behaviour == "busy-timers" { 1 } else { 1000 };
                self.timers = (0..count).filter_map(|id| gamefeature_sdk::timers::every_frame(id).ok()).collect();
            }
            "hold-request" => {
                self.held = Some(components::request_component("Pawn", "Shared").map_err(|e| format!("{e:?}"))?);
            }
            _ if self.targets_init_states() => {
                // The implementer of an init-state feature must be a component of the actor.
                let request = components::request_component("Pawn", "HostileComponent");
                self.held = Some(request.map_err(|e| format!("{e:?}"))?);
            }
            _ => {}
        }
        self.handler = Some(components::add_extension_handler("Pawn", 1).map_err(|e| format!("{e:?}"))?);
        Ok(())
    }

    fn on_loading(&mut self) -> Result<(), String> {
        self.misbehave_in("loading");
        Ok(())
    }

    fn on_activated(&mut self) {
        self.misbehave_in("activated");
        if self.behaviour == "long-naps" {
            nap(300);
        }
    }

    fn on_deactivating(&mut self, _context: &ActivationContext) -> Deactivation {
        self.misbehave_in("deactivating");
        if self.behaviour.ends_with("-poll") {
            return Deactivation::Pending;
        }
        Deactivation::Done
    }

    fn poll_deactivation(&mut self) -> Deactivation {
        self.misbehave_in("poll");
        Deactivation::Pending
    }

    fn on_unloading(&mut self) {
        self.misbehave_in("unloading");
    }

    fn on_unregistering(&mut self) {
        self.misbehave_in("unregistering");
        // The host removed everything this plugin added when it deactivated; letting go of the stale handle now
        // must not release anybody else's request for the same pair.
        if let Some(request) = self.held.take() {
            drop(request);
            log::info("dropped the held request after deactivation");
        }
    }

    fn on_extension_event(&mut self, _handler: u32, actor: ActorId, event: &str) {
        self.misbehave_in("event");
        let ready = event == components::events::GAME_ACTOR_READY;
        match (self.behaviour.as_str(), event) {
            ("trespass", components::events::RECEIVER_ADDED) => {
                if let Ok(subscription) = init_state::subscribe_actor(actor, None, None, true, 2) {
                    self.subscriptions.push(subscription);
                }
            }
            ("ping-self", "Ping") | ("ping", "Pong") => {
                let _ = components::send_event(actor, "Ping");
            }
            ("ping-self" | "ping", _) if ready => {
                let _ = components::send_event(actor, "Ping");
            }
            ("pong", "Ping") => {
                let _ = components::send_event(actor, "Pong");
            }
            ("hoard-properties", components::events::GAME_ACTOR_READY) => self.hoard_properties(actor),
            ("restartable", "Crash") => panic!("crashes on purpose after counting {}", self.count),
            ("restartable", "Hello") => log::info(&format!("heard Hello with count {}", self.count)),
            ("nap-property-changed", components::events::RECEIVER_ADDED) => {
                let watched = components::watch_property(actor, "HostileStats", "hp", 5).and_then(|watch| {
                    self.watches.push(watch);
                    world::set_property(actor, "HostileStats", "hp", &Value::Integer(1))
                });
                if let Err(e) = watched {
                    log::warn(&format!("could not watch a pawn's property: {e:?}"));
                }
            }
            ("spawn-storm", components::events::RECEIVER_ADDED | components::events::EXTENSION_ADDED)
                if self.wave_last == Some(actor) && self.spawned < 30_000 =>
            {
                self.spawn_wave();
            }
            _ => {}
        }
        if self.targets_init_states()
            && (event == components::events::EXTENSION_ADDED || event == components::events::RECEIVER_ADDED)
        {
            self.join_init(actor);
        }
    }

    fn on_property_changed(&mut self, _watch: u32, _actor: ActorId, _old: Option<&Value>, _new: Option<&Value>) {
        self.misbehave_in("property-changed");
    }

    fn snapshot(&mut self) -> Option<Vec<u8>> {
        self.misbehave_in("snapshot");
        if self.behaviour == "restartable" {
            log::info(&format!("kept count {}", self.count));
            return Some(self.count.to_le_bytes().to_vec());
        }
        Some(self.behaviour.clone().into_bytes())
    }

    fn restore(&mut self, state: &[u8]) -> Result<(), String> {
        self.misbehave_in("restore");
        match self.behaviour.as_str() {
            "refuse-restore" => Err("refuses the state handed to it".into()),
            "restartable" => {
                let bytes: [u8; 8] = state.try_into().map_err(|_| "a count is 8 bytes".to_string())?;
                self.count = u64::from_le_bytes(bytes);
                log::info(&format!("restored count {}", self.count));
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn on_timer(&mut self, _timer: u32, _times: u32, _frame: &gamefeature_sdk::Frame) {
        if self.behaviour == "restartable" {
            self.count += 1;
        }
        if self.behaviour == "heavy-timer-flood" {
            // Each timer a little work: each call of 256 of them well within its deadline, a frame of them not.
            let mut n: u64 = 0;
            for i in 0..100_000u64 {
                n = std::hint::black_box(n.wrapping_add(i));
            }
            std::hint::black_box(n);
        }
        if self.behaviour == "busy-timers" {
            let mut n: u64 = 0;
            for i in 0..40_000_000u64 {
                n = std::hint::black_box(n.wrapping_add(i));
            }
            std::hint::black_box(n);
        }
    }

    fn can_change_init_state(&mut self, _: ActorId, _: &str, _: Option<&str>, _: &str) -> bool {
        self.misbehave_in("can-change");
        true
    }

    fn handle_change_init_state(&mut self, _: ActorId, _: &str, _: Option<&str>, _: &str) {
        self.misbehave_in("handle-change");
    }

    fn check_default_initialization(&mut self, actor: ActorId, feature: &str) {
        self.misbehave_in("default-init");
        let _ = init_state::continue_chain(actor, feature);
    }

    fn on_init_state_changed(&mut self, _: u32, actor: ActorId, feature: &str, _: &str) {
        self.misbehave_in("state-changed");
        if self.behaviour == "trespass" {
            self.trespass(actor, feature);
        }
    }
}

export_plugin!(Hostile);

/// Logs what an import answered, as `<behaviour> <import>: accepted` or `... refused <error>`.
fn log_outcome(behaviour: &str, import: &str, result: Result<(), Error>) {
    let said = match result {
        Ok(()) => "accepted".to_string(),
        Err(e) => format!("refused {e:?}"),
    };
    log::info(&format!("{behaviour} {import}: {said}"));
}

/// Calls each import that needs a permission, about an actor that need not exist: the permission is checked
/// first.
fn ungranted() {
    let outcome = |what: &str, result: Result<(), Error>| log_outcome("ungranted", what, result);
    let nobody: ActorId = 0;
    outcome("spawn-actor", world::spawn_actor("Pawn", true).map(drop));
    outcome("destroy-actor", world::destroy_actor(nobody));
    outcome("add-receiver", components::add_receiver(nobody));
    outcome("remove-receiver", components::remove_receiver(nobody));
    outcome("send-extension-event", components::send_event(nobody, "Hello"));
    outcome("send-extension-events", send_events(nobody, 0, &["Hello"]));
    outcome("add-component-request", components::request_component("Pawn", "Shield").map(drop));
    outcome("set-relevancy", world::set_relevancy(nobody, &Relevancy::OwnerOnly));
    outcome("set-player-groups", world::set_player_groups(nobody, &["red"]));
}

/// One walk of feature `names[feature]` queued through the raw import (the SDK's deferral never sends a bad
/// index); its refusal, if it is refused.
/// One `register-features` entry: the feature and implementer named by index into `names`.
fn register_features(actor: ActorId, (feature, implementer): (u32, u32), names: &[&str]) -> Result<(), Error> {
    use gamefeature_sdk::bindings::gamefeature::plugin::init_states::register_features;
    let names: Vec<String> = names.iter().map(|name| name.to_string()).collect();
    match register_features(&[actor], &[feature], &[implementer], &names).pop() {
        Some((_, error)) => Err(error),
        None => Ok(()),
    }
}

fn send_events(actor: ActorId, event: u32, names: &[&str]) -> Result<(), Error> {
    use gamefeature_sdk::bindings::gamefeature::plugin::components::send_extension_events;
    let names: Vec<String> = names.iter().map(|name| name.to_string()).collect();
    match send_extension_events(&[actor], &[event], &names).pop() {
        Some((_, error)) => Err(error),
        None => Ok(()),
    }
}

fn queue_chain_request(actor: ActorId, feature: u32, names: &[&str]) -> Result<(), Error> {
    use gamefeature_sdk::bindings::gamefeature::plugin::init_states::{queue_chain_requests, ChainWork};
    let names: Vec<String> = names.iter().map(|name| name.to_string()).collect();
    match queue_chain_requests(&[actor], &[feature], &[ChainWork::ContinueChain], &names).pop() {
        Some((_, error)) => Err(error),
        None => Ok(()),
    }
}
