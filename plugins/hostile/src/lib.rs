//! A plugin written to break its sandbox. Its `behaviour` asset names what it does:
//!
//! - `loop-activating` / `loop-event`: never returns from `on-activating` / from an extension event;
//! - `memory-activating`: allocates until something stops it;
//! - `panic-event`: panics handling an extension event;
//! - `stack-overflow-activating`: recurses without end;
//! - `refusals-activating`: makes thousands of host calls the host must refuse.
//!
//! Event behaviours listen to every `Pawn`; they misbehave on the first event.

use gamefeature_sdk::components::{self, ExtensionHandler};
use gamefeature_sdk::world::{self, ActorId};
use gamefeature_sdk::{export_plugin, ActivationContext, Plugin};

#[derive(Default)]
struct Hostile {
    behaviour: String,
    handler: Option<ExtensionHandler>,
    hoard: Vec<Vec<u8>>,
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

fn recurse(depth: u64) -> u64 {
    let frame = std::hint::black_box([depth; 64]);
    if frame[0] == u64::MAX {
        return 0; // Never: depth would have to reach u64::MAX first.
    }
    recurse(depth + 1).wrapping_add(frame[7])
}

impl Plugin for Hostile {
    fn on_loading(&mut self) -> Result<(), String> {
        self.behaviour = world::read_asset_text("behaviour").unwrap_or_default().trim().to_string();
        Ok(())
    }

    fn on_activating(&mut self, _context: &ActivationContext) -> Result<(), String> {
        match self.behaviour.as_str() {
            "loop-activating" => {
                spin();
            }
            "memory-activating" => loop {
                // Reserve without touching: memory grows as fast as the allocator can ask for it.
                let mut chunk = Vec::with_capacity(8 << 20);
                chunk.push(1u8);
                self.hoard.push(chunk);
            },
            "stack-overflow-activating" => {
                recurse(0);
            }
            "refusals-activating" => {
                for _ in 0..5000 {
                    let _ = world::actor_class(u64::MAX);
                }
            }
            _ => self.handler = Some(components::add_extension_handler("Pawn", 1).map_err(|e| format!("{e:?}"))?),
        }
        Ok(())
    }

    fn on_extension_event(&mut self, _handler: u32, _actor: ActorId, _event: &str) {
        match self.behaviour.as_str() {
            "loop-event" => {
                spin();
            }
            "panic-event" => panic!("hostile plugin panics on purpose"),
            _ => {}
        }
    }
}

export_plugin!(Hostile);
