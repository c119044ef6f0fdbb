//! A scriptable component-manager client for tests. At activation it runs each line of its `script` asset; an
//! extension event named `do:<command>` runs that command. It logs `event <handler> <actor> <name>` for every
//! extension event and `init <id> <actor> <feature> <state>` for every init-state notification.
//!
//! Commands: `handler N CLASS`, `drop-handler N`, `request RECEIVER COMPONENT`, `request-unique RECEIVER
//! COMPONENT`, `drop-request RECEIVER COMPONENT`, `send CLASS EVENT`, `defer-send CLASS EVENT` (deferred, to every actor
//! of the class), `subscribe-class N CLASS FEATURE`,
//! `drop-subscription N`, `spawn CLASS`, `timer N PERIOD_MS` (repeating; 0: every frame), `drop-timer N`,
//! `handles` (logs every handle it holds, described by the handle's own methods), `feature CLASS FEATURE
//! IMPLEMENTER` (registers the feature on every actor of the class), `defer-chains CLASS FEATURE...` (defers a
//! walk of each feature's chain on every actor of the class), `defer-checks CLASS FEATURE...` (defers each
//! feature's default-initialization check, the others' first, on every actor of the class), `set-up CLASS
//! IMPLEMENTER FEATURE...` (defers registering each feature, then a walk of its chain, on every actor of the
//! class), `needs FEATURE COMPONENT PROPERTY` (FEATURE's `DataAvailable` step requests COMPONENT on every pawn,
//! and its `DataInitialized` step waits for the component, read through a chain read of PROPERTY). It logs
//! `timer <n> x<times> frame <number>` for every timer firing. Every other step is allowed.

use std::collections::HashMap;

use gamefeature_sdk::components::{self, AddFlags, ComponentRequest, ExtensionHandler};
use gamefeature_sdk::init_state::{self, Subscription};
use gamefeature_sdk::timers::{self, Timer};
use gamefeature_sdk::world::{self, ActorId};
use gamefeature_sdk::{export_plugin, log, ActivationContext, Frame, Plugin};

#[derive(Default)]
struct Probe {
    handlers: HashMap<u32, ExtensionHandler>,
    requests: HashMap<String, ComponentRequest>,
    subscriptions: HashMap<u32, Subscription>,
    timers: HashMap<u32, Timer>,
    /// By feature: the component and property its later steps need (`needs`).
    needs: HashMap<String, (String, String)>,
}

impl Probe {
    fn run(&mut self, command: &str) {
        let words: Vec<&str> = command.split_whitespace().collect();
        let number = |text: &str| text.parse::<u32>().unwrap_or(0);
        let result = match words.as_slice() {
            ["handler", n, class] => {
                components::add_extension_handler(class, number(n)).map(|h| drop(self.handlers.insert(number(n), h)))
            }
            ["drop-handler", n] => {
                self.handlers.remove(&number(n));
                Ok(())
            }
            ["needs", feature, component, property] => {
                init_state::add_chain_read(Some(feature), component, property).map(|()| {
                    self.needs.insert(feature.to_string(), (component.to_string(), property.to_string()));
                })
            }
            ["request", receiver, component] => components::request_component(receiver, component)
                .map(|r| drop(self.requests.insert(format!("{receiver}/{component}"), r))),
            ["request-unique", receiver, component] => {
                components::add_component_request(receiver, component, AddFlags::ADD_UNIQUE)
                    .map(|r| drop(self.requests.insert(format!("{receiver}/{component}"), r)))
            }
            ["drop-request", receiver, component] => {
                self.requests.remove(&format!("{receiver}/{component}"));
                Ok(())
            }
            ["send", class, event] => world::actors_of_class(class)
                .and_then(|actors| actors.into_iter().try_for_each(|actor| components::send_event(actor, event))),
            ["defer-send", class, event] => world::actors_of_class(class)
                .map(|actors| actors.into_iter().for_each(|actor| components::defer_send_event(actor, event))),
            ["subscribe-class", n, class, feature] => {
                let feature = Some(*feature).filter(|f| *f != "*");
                init_state::subscribe_class(class, feature, None, true, number(n))
                    .map(|s| drop(self.subscriptions.insert(number(n), s)))
            }
            ["drop-subscription", n] => {
                self.subscriptions.remove(&number(n));
                Ok(())
            }
            ["spawn", class] => world::spawn_actor(class, true).map(drop),
            ["feature", class, feature, implementer] => world::actors_of_class(class).and_then(|actors| {
                actors.into_iter().try_for_each(|actor| init_state::register_feature(actor, feature, implementer))
            }),
            ["defer-chains", class, features @ ..] => world::actors_of_class(class).map(|actors| {
                for actor in actors {
                    features.iter().for_each(|feature| init_state::defer_continue_chain(actor, feature));
                }
            }),
            ["set-up", class, implementer, features @ ..] => world::actors_of_class(class).map(|actors| {
                for actor in actors {
                    features.iter().for_each(|feature| init_state::defer_register_feature(actor, feature, implementer));
                    features.iter().for_each(|feature| init_state::defer_continue_chain(actor, feature));
                }
            }),
            ["defer-checks", class, features @ ..] => world::actors_of_class(class).map(|actors| {
                for actor in actors {
                    features.iter().for_each(|feature| init_state::defer_check_default_initialization(actor, feature));
                }
            }),
            ["timer", n, period_ms] => {
                let period = std::time::Duration::from_millis(number(period_ms).into());
                timers::every(period, number(n)).map(|t| drop(self.timers.insert(number(n), t)))
            }
            ["drop-timer", n] => {
                self.timers.remove(&number(n));
                Ok(())
            }
            ["handles"] => {
                self.log_handles();
                Ok(())
            }
            _ => {
                log::warn(&format!("unknown command {command:?}"));
                Ok(())
            }
        };
        if let Err(e) = result {
            log::warn(&format!("{command}: {e:?}"));
        }
    }
}

impl Probe {
    /// One line per handle, in a stable order, from what the host says each handle is.
    fn log_handles(&self) {
        let mut lines: Vec<String> = self
            .handlers
            .values()
            .map(|h| format!("handle: extension handler {} on {}", h.id(), h.receiver()))
            .chain(self.requests.values().map(|r| format!("handle: request {} on {}", r.component(), r.receiver())))
            .chain(self.subscriptions.values().map(|s| format!("handle: subscription {}", s.id())))
            .chain(self.timers.values().map(|t| format!("handle: timer {}", t.id())))
            .collect();
        lines.sort();
        for line in lines {
            log::info(&line);
        }
    }
}

impl Plugin for Probe {
    fn on_activating(&mut self, _context: &ActivationContext) -> Result<(), String> {
        let script = world::read_asset_text("script").unwrap_or_default();
        for line in script.lines().map(str::trim).filter(|l| !l.is_empty()) {
            self.run(line);
        }
        Ok(())
    }

    fn on_extension_event(&mut self, handler: u32, actor: ActorId, event: &str) {
        log::info(&format!("event {handler} {actor} {event}"));
        if let Some(command) = event.strip_prefix("do:") {
            self.run(command);
        }
    }

    fn on_timer(&mut self, timer: u32, times: u32, frame: &Frame) {
        log::info(&format!("timer {timer} x{times} frame {}", frame.number));
    }

    fn can_change_init_state(&mut self, actor: ActorId, feature: &str, _: Option<&str>, desired: &str) -> bool {
        match self.needs.get(feature) {
            // The component is there once reading its property finds it.
            Some((component, property)) if desired == init_state::DATA_INITIALIZED => {
                world::get_property(actor, component, property).is_ok()
            }
            _ => true,
        }
    }

    fn handle_change_init_state(&mut self, _: ActorId, feature: &str, _: Option<&str>, desired: &str) {
        if let Some((component, _)) = self.needs.get(feature).filter(|_| desired == init_state::DATA_AVAILABLE) {
            let key = format!("Pawn/{component}");
            match components::request_component("Pawn", component) {
                Ok(request) => drop(self.requests.insert(key, request)),
                Err(e) => log::warn(&format!("requesting {component}: {e:?}")),
            }
        }
    }

    fn on_init_state_changed(&mut self, subscription: u32, actor: ActorId, feature: &str, state: &str) {
        log::info(&format!("init {subscription} {actor} {feature} {state}"));
    }
}

export_plugin!(Probe);
