//! Built-in game-feature actions, declared in plugin manifests and experiences.
//!
//! An action is data the host carries out per world when the feature activates there, and undoes exactly when
//! it deactivates. Plugin code is the other kind of action: the guest's lifecycle exports.

use serde::Deserialize;

use crate::world::component_manager::{OwnerId, RequestFlags, RequestHandle};
use crate::world::{World, WorldError};

/// An action as written in a data file, told apart by its `kind`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum ActionDef {
    /// Unreal's `GameFeatureAction_AddComponents`.
    AddComponents(AddComponents),
}

/// Adds a component to every actor of a class (and its subclasses), now and later, while the feature is active.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct AddComponents {
    /// The receiver class (`actor-class`) whose actors, and those of its subclasses, get the component.
    pub actor_class: String,
    /// The component class (`component-class`) added to each of those actors.
    pub component_class: String,
    /// Create it in worlds with a local player (everything but a dedicated server).
    #[serde(default = "yes")]
    pub client: bool,
    /// Create it in worlds that run server logic (everything but a client).
    #[serde(default = "yes")]
    pub server: bool,
}

fn yes() -> bool {
    true
}

impl ActionDef {
    /// Short description for timelines and errors.
    pub fn describe(&self) -> String {
        match self {
            ActionDef::AddComponents(a) => format!("add-components {} -> {}", a.component_class, a.actor_class),
        }
    }

    /// Carries the action out in `world` on behalf of `owner`. The returned value undoes it.
    pub fn activate(&self, world: &mut World, owner: OwnerId) -> Result<ActiveAction, WorldError> {
        match self {
            ActionDef::AddComponents(a) => {
                let net_mode = world.net_mode();
                let wanted = (a.client && net_mode.is_client()) || (a.server && net_mode.is_server());
                let handle = if wanted {
                    Some(world.add_component_request(
                        owner,
                        &a.actor_class,
                        &a.component_class,
                        RequestFlags::default(),
                    )?)
                } else {
                    None
                };
                Ok(ActiveAction { requests: handle.into_iter().collect() })
            }
        }
    }
}

/// What an action holds in one world while active.
#[derive(Debug, Default)]
#[must_use = "an active action must be deactivated to undo it"]
pub struct ActiveAction {
    requests: Vec<RequestHandle>,
}

impl ActiveAction {
    /// Undoes the action: releases everything it holds.
    pub fn deactivate(self, world: &mut World) {
        for handle in self.requests {
            world.release_component_request(handle);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::NetMode;

    fn action(client: bool, server: bool) -> ActionDef {
        ActionDef::AddComponents(AddComponents {
            actor_class: "Pawn".into(),
            component_class: "Hud".into(),
            client,
            server,
        })
    }

    #[test]
    fn client_and_server_components_follow_net_mode() {
        for (mode, client_only, server_only) in [
            (NetMode::Standalone, true, true),
            (NetMode::ListenServer, true, true),
            (NetMode::DedicatedServer, false, true),
            (NetMode::Client, true, false),
        ] {
            for (def, expected) in [(action(true, false), client_only), (action(false, true), server_only)] {
                let mut world = World::new("w", mode);
                let pawn = world.spawn("Pawn").unwrap();
                let active = def.activate(&mut world, OwnerId::HOST).unwrap();
                assert_eq!(world.actor(pawn).unwrap().component("Hud").is_some(), expected, "{mode} {def:?}");
                active.deactivate(&mut world);
                assert_eq!(world.requested_component_count(), 0);
            }
        }
    }
}
