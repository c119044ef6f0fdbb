//! Damageable props, the way large games keep thousands of them cheap (seed 002): every prop may have a
//! `PropHealth`, but it is created lazily — on the server, the first time a prop is hit — so props nobody
//! touches cost no component. The server spawns the props and, once a second, hits a few of them; the first hit
//! on a prop creates its health (writing the property is its first use). Every world watches each prop's health
//! from the moment the prop appears, before the component exists: clients hear each prop's health from its
//! first hit on, in order, even when the value arrived before the component it belongs to.
//!
//! A game hits a prop itself by sending it `Hit` (the arena's shots do). The `props` asset, when the experience
//! has one, sets how many props the server spawns (`count = 12`) and whether it hits some of them every second
//! (`timed-hits = false` leaves the hitting to the game).

use std::collections::HashMap;
use std::time::Duration;

use gamefeature_sdk::components::{self, events, ExtensionHandler, PropertyWatch};
use gamefeature_sdk::timers::{self, Timer};
use gamefeature_sdk::world::{self, ActorId};
use gamefeature_sdk::{export_plugin, log, ActivationContext, Frame, NetMode, Plugin, Value};

const PROP: &str = "DamageableProp";
const HEALTH: &str = "PropHealth";
/// Props the server spawns, unless the `props` asset says otherwise.
const PROPS: usize = 200;
/// Every second the server hits these props (by spawn index), one more of them each second.
const TARGETS: [usize; 3] = [0, 7, 42];
const DAMAGE: i64 = 10;

#[derive(Default)]
struct DamageableProps {
    props: Vec<ActorId>,
    handler: Option<ExtensionHandler>,
    watches: HashMap<ActorId, PropertyWatch>,
    timer: Option<Timer>,
    seconds: usize,
}

/// What the experience's `props` asset sets.
struct Settings {
    count: usize,
    timed_hits: bool,
}

impl Settings {
    /// `key = value` lines; the defaults where the asset (or a line) is missing.
    fn from_asset() -> Result<Settings, String> {
        let mut settings = Settings { count: PROPS, timed_hits: true };
        let Ok(text) = world::read_asset_text("props") else { return Ok(settings) };
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
            let bad = || format!("the props asset: {line:?} is not `count = N` or `timed-hits = true|false`");
            let (key, value) = line.split_once('=').ok_or_else(bad)?;
            match key.trim() {
                "count" => settings.count = value.trim().parse().map_err(|_| bad())?,
                "timed-hits" => settings.timed_hits = value.trim().parse().map_err(|_| bad())?,
                _ => return Err(bad()),
            }
        }
        Ok(settings)
    }
}

impl Plugin for DamageableProps {
    fn on_activating(&mut self, context: &ActivationContext) -> Result<(), String> {
        let settings = Settings::from_asset()?;
        self.handler = Some(components::add_extension_handler(PROP, 1).map_err(|e| format!("{e:?}"))?);
        if context.net_mode != NetMode::Client {
            for _ in 0..settings.count {
                self.props.push(world::spawn_actor(PROP, true).map_err(|e| format!("spawning a prop: {e:?}"))?);
            }
            if settings.timed_hits {
                self.timer = Some(timers::every(Duration::from_secs(1), 1).map_err(|e| format!("{e:?}"))?);
            }
        }
        Ok(())
    }

    fn on_extension_event(&mut self, _handler: u32, prop: ActorId, event: &str) {
        match event {
            "Hit" if world::has_authority(prop).unwrap_or(false) => hit(prop),
            events::RECEIVER_ADDED | events::EXTENSION_ADDED => {
                // Watched before its health exists: the first hit is heard too.
                if let Ok(watch) = components::watch_property(prop, HEALTH, "health", 1) {
                    self.watches.insert(prop, watch);
                }
            }
            events::RECEIVER_REMOVED => {
                self.watches.remove(&prop);
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, _timer: u32, times: u32, _frame: &Frame) {
        for _ in 0..times {
            self.seconds += 1;
            for index in TARGETS.iter().take(self.seconds) {
                if let Some(prop) = self.props.get(*index) {
                    hit(*prop);
                }
            }
        }
    }

    fn on_property_changed(&mut self, _watch: u32, prop: ActorId, old: Option<&Value>, new: Option<&Value>) {
        let shown = |v: Option<&Value>| match v {
            Some(Value::Integer(health)) => health.to_string(),
            _ => "none".to_string(),
        };
        // A detail, every hit: at debug level, so a modder's own lines are not buried under it.
        log::debug(&format!("prop {prop} health: {} -> {}", shown(old), shown(new)));
        let broken = |v: Option<&Value>| matches!(v, Some(Value::Integer(0)));
        if broken(new) && !broken(old) {
            log::info(&format!("prop {prop} destroyed"));
        }
    }
}

/// A hit: the first one creates the prop's health (a lazy component's first use is this write).
fn hit(prop: ActorId) {
    let health = match world::get_property(prop, HEALTH, "health") {
        Ok(Some(Value::Integer(health))) => health,
        _ => 100,
    };
    // A destroyed prop takes no more hits: its health stays at zero.
    if health <= 0 {
        return;
    }
    if let Err(e) = world::set_property(prop, HEALTH, "health", &Value::Integer((health - DAMAGE).max(0))) {
        log::warn(&format!("hitting prop {prop}: {e:?}"));
    }
}

export_plugin!(DamageableProps);
