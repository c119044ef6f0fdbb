//! Conversions between WIT types and domain types.

use crate::runtime::bindings::types::{self, Error, NetMode, NetRole, Value};
use crate::runtime::state::InstanceState;
use crate::world::{self, WorldError};

impl types::Host for InstanceState {}

impl From<world::NetMode> for NetMode {
    fn from(mode: world::NetMode) -> Self {
        match mode {
            world::NetMode::Standalone => NetMode::Standalone,
            world::NetMode::DedicatedServer => NetMode::DedicatedServer,
            world::NetMode::ListenServer => NetMode::ListenServer,
            world::NetMode::Client => NetMode::Client,
        }
    }
}

impl From<world::NetRole> for NetRole {
    fn from(role: world::NetRole) -> Self {
        match role {
            world::NetRole::Authority => NetRole::Authority,
            world::NetRole::AutonomousProxy => NetRole::AutonomousProxy,
            world::NetRole::SimulatedProxy => NetRole::SimulatedProxy,
        }
    }
}

impl From<world::Value> for Value {
    fn from(value: world::Value) -> Self {
        match value {
            world::Value::Boolean(b) => Value::Boolean(b),
            world::Value::Integer(i) => Value::Integer(i),
            world::Value::Float(f) => Value::Float(f),
            world::Value::Text(t) => Value::Text(t),
        }
    }
}

impl From<Value> for world::Value {
    fn from(value: Value) -> Self {
        match value {
            Value::Boolean(b) => world::Value::Boolean(b),
            Value::Integer(i) => world::Value::Integer(i),
            Value::Float(f) => world::Value::Float(f),
            Value::Text(t) => world::Value::Text(t),
        }
    }
}

impl From<WorldError> for Error {
    fn from(error: WorldError) -> Self {
        match error {
            WorldError::UnknownActor(actor) => Error::UnknownActor(actor.to_raw()),
            WorldError::UnknownClass(class) => Error::UnknownClass(class),
            WorldError::Denied(why) => Error::Denied(why),
            WorldError::UnknownState(state) => Error::UnknownState(state),
            WorldError::Invalid(why) => Error::Invalid(why),
            other => Error::Invalid(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plugin reads each error's case from the variant and its text from the payload: the text does not say the
    /// case again.
    #[test]
    fn world_errors_keep_their_text_as_the_case_payload() {
        let invalid = Error::from(WorldError::Invalid("an event name may not be empty".into()));
        assert!(matches!(&invalid, Error::Invalid(why) if why == "an event name may not be empty"), "{invalid:?}");
        let denied = Error::from(WorldError::Denied("not yours".into()));
        assert!(matches!(&denied, Error::Denied(why) if why == "not yours"), "{denied:?}");
        let missing =
            WorldError::NoSuchComponent { actor: crate::world::ActorId::from_raw(3), component: "Mesh".into() };
        assert!(matches!(Error::from(missing), Error::Invalid(why) if why.contains("has no \"Mesh\" component")));
    }
}
