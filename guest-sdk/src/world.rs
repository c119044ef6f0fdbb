//! The plugin's world: net mode, actors, classes, component properties and the experience's assets.
//!
//! These are the host's imports, re-exported with Rust names. Every call is answered by the host for the world
//! this instance runs in; an [`Error`](crate::Error) is recoverable.

use crate::bindings::gamefeature::plugin::actors as host;
pub use crate::bindings::gamefeature::plugin::actors::{
    actor_class, actors_of_class, components_of, current_net_mode, has_authority, is_a, is_locally_controlled,
    local_role, world_name, Relevancy,
};
pub use crate::bindings::gamefeature::plugin::assets::read_asset;
pub use crate::bindings::gamefeature::plugin::types::{ActorId, NetRole};

/// Reads a component property; `None` when the component exists but the property was never set. Answered
/// without a host call while a chain-step question brought it (see
/// [`init_state::add_chain_read`](crate::init_state::add_chain_read)).
pub fn get_property(actor: ActorId, component: &str, property: &str) -> Result<Option<crate::Value>, crate::Error> {
    match crate::facts::property(actor, component, property) {
        Some(read) => read,
        None => crate::bindings::gamefeature::plugin::actors::get_property(actor, component, property),
    }
}

/// Writes a component property.
pub fn set_property(actor: ActorId, component: &str, name: &str, value: &crate::Value) -> Result<(), crate::Error> {
    crate::facts::forget();
    host::set_property(actor, component, name, value)
}

/// Spawns an actor of `class` (a receiver of extension events when `receiver`).
pub fn spawn_actor(class: &str, receiver: bool) -> Result<ActorId, crate::Error> {
    crate::facts::forget();
    host::spawn_actor(class, receiver)
}

/// Destroys an actor this plugin spawned.
pub fn destroy_actor(actor: ActorId) -> Result<(), crate::Error> {
    crate::facts::forget();
    host::destroy_actor(actor)
}

/// Sets whom a server replicates `actor` to, besides its own player's client: every client
/// ([`Relevancy::Always`], the default), its owner's only ([`Relevancy::OwnerOnly`]), or the players in one of
/// its groups ([`Relevancy::Groups`]; see [`set_player_groups`]). Needs the `relevancy` permission.
pub fn set_relevancy(actor: ActorId, relevancy: &Relevancy) -> Result<(), crate::Error> {
    host::set_relevancy(actor, relevancy)
}

/// Puts the player `actor` belongs to (its pawn, controller or player state) in these relevancy groups, in
/// place of those it was in; an empty list takes it out of all. Needs the `relevancy` permission.
pub fn set_player_groups(player: ActorId, groups: &[&str]) -> Result<(), crate::Error> {
    let groups: Vec<String> = groups.iter().map(|group| group.to_string()).collect();
    host::set_player_groups(player, &groups)
}

/// Reads an asset as UTF-8 text.
pub fn read_asset_text(name: &str) -> Result<String, crate::Error> {
    let bytes = read_asset(name)?;
    String::from_utf8(bytes).map_err(|e| crate::Error::Invalid(format!("asset {name} is not UTF-8: {e}")))
}
