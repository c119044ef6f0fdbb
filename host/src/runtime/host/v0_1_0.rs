//! `gamefeature:plugin@0.1.0` served by the newest version's implementation: every import converts its
//! arguments, calls the same function of the newest version and converts the answer back, so a 0.1.0 plugin
//! goes through exactly the checks a newer one does. Resources are the same host objects in both versions.

use wasmtime::component::Resource;

use crate::runtime::bindings::gamefeature::plugin as latest;
use crate::runtime::bindings::v0_1_0::gamefeature::plugin::{actors, assets, components, init_states, log, types};
use crate::runtime::resources::{ComponentRequestResource, ExtensionHandlerResource, SubscriptionResource};
use crate::runtime::state::InstanceState;

use types::{ActorId, Error, NetMode, Value};

impl From<latest::types::Error> for Error {
    fn from(error: latest::types::Error) -> Self {
        use latest::types::Error as E;
        match error {
            E::UnknownActor(actor) => Error::UnknownActor(actor),
            E::UnknownClass(class) => Error::UnknownClass(class),
            E::UnknownState(state) => Error::UnknownState(state),
            E::UnknownAsset(asset) => Error::UnknownAsset(asset),
            E::Denied(why) => Error::Denied(why),
            E::Invalid(why) => Error::Invalid(why),
        }
    }
}

impl From<latest::types::Value> for Value {
    fn from(value: latest::types::Value) -> Self {
        use latest::types::Value as V;
        match value {
            V::Boolean(b) => Value::Boolean(b),
            V::Integer(i) => Value::Integer(i),
            V::Float(f) => Value::Float(f),
            V::Text(t) => Value::Text(t),
        }
    }
}

impl From<Value> for latest::types::Value {
    fn from(value: Value) -> Self {
        use latest::types::Value as V;
        match value {
            Value::Boolean(b) => V::Boolean(b),
            Value::Integer(i) => V::Integer(i),
            Value::Float(f) => V::Float(f),
            Value::Text(t) => V::Text(t),
        }
    }
}

impl From<latest::types::NetMode> for NetMode {
    fn from(mode: latest::types::NetMode) -> Self {
        use latest::types::NetMode as M;
        match mode {
            M::Standalone => NetMode::Standalone,
            M::DedicatedServer => NetMode::DedicatedServer,
            M::ListenServer => NetMode::ListenServer,
            M::Client => NetMode::Client,
        }
    }
}

fn level(level: log::Level) -> latest::log::Level {
    use latest::log::Level as L;
    match level {
        log::Level::Trace => L::Trace,
        log::Level::Debug => L::Debug,
        log::Level::Info => L::Info,
        log::Level::Warn => L::Warn,
        log::Level::Error => L::Error,
    }
}

/// The newest version's answer in 0.1.0's types.
fn older<T, U: From<T>>(answer: Result<T, latest::types::Error>) -> Result<U, Error> {
    answer.map(U::from).map_err(Error::from)
}

impl types::Host for InstanceState {}

impl log::Host for InstanceState {
    fn log(&mut self, at: log::Level, message: String) {
        latest::log::Host::log(self, level(at), message)
    }

    fn enabled(&mut self, at: log::Level) -> bool {
        latest::log::Host::enabled(self, level(at))
    }
}

impl assets::Host for InstanceState {
    fn read_asset(&mut self, name: String) -> Result<Vec<u8>, Error> {
        older(latest::assets::Host::read_asset(self, name))
    }
}

impl actors::Host for InstanceState {
    fn current_net_mode(&mut self) -> NetMode {
        latest::actors::Host::current_net_mode(self).into()
    }

    fn world_name(&mut self) -> String {
        latest::actors::Host::world_name(self)
    }

    fn actor_class(&mut self, actor: ActorId) -> Result<String, Error> {
        older(latest::actors::Host::actor_class(self, actor))
    }

    fn is_a(&mut self, actor: ActorId, class: String) -> Result<bool, Error> {
        older(latest::actors::Host::is_a(self, actor, class))
    }

    fn actors_of_class(&mut self, class: String) -> Result<Vec<ActorId>, Error> {
        older(latest::actors::Host::actors_of_class(self, class))
    }

    fn has_authority(&mut self, actor: ActorId) -> Result<bool, Error> {
        older(latest::actors::Host::has_authority(self, actor))
    }

    fn components_of(&mut self, actor: ActorId) -> Result<Vec<String>, Error> {
        older(latest::actors::Host::components_of(self, actor))
    }

    fn get_property(&mut self, actor: ActorId, component: String, name: String) -> Result<Option<Value>, Error> {
        let answer = latest::actors::Host::get_property(self, actor, component, name);
        answer.map(|value| value.map(Value::from)).map_err(Error::from)
    }

    fn set_property(&mut self, actor: ActorId, component: String, name: String, value: Value) -> Result<(), Error> {
        older(latest::actors::Host::set_property(self, actor, component, name, value.into()))
    }

    fn spawn_actor(&mut self, class: String, receiver: bool) -> Result<ActorId, Error> {
        older(latest::actors::Host::spawn_actor(self, class, receiver))
    }

    fn destroy_actor(&mut self, actor: ActorId) -> Result<(), Error> {
        older(latest::actors::Host::destroy_actor(self, actor))
    }
}

impl components::Host for InstanceState {
    fn add_component_request(
        &mut self,
        receiver: String,
        component: String,
        flags: components::AddFlags,
    ) -> Result<Resource<ComponentRequestResource>, Error> {
        let mut newest = latest::components::AddFlags::empty();
        if flags.contains(components::AddFlags::ADD_UNIQUE) {
            newest |= latest::components::AddFlags::ADD_UNIQUE;
        }
        older(latest::components::Host::add_component_request(self, receiver, component, newest))
    }

    fn add_extension_handler(
        &mut self,
        receiver: String,
        handler: u32,
    ) -> Result<Resource<ExtensionHandlerResource>, Error> {
        older(latest::components::Host::add_extension_handler(self, receiver, handler))
    }

    fn send_extension_event(&mut self, actor: ActorId, event: String) -> Result<(), Error> {
        older(latest::components::Host::send_extension_event(self, actor, event))
    }

    fn add_receiver(&mut self, actor: ActorId) -> Result<(), Error> {
        older(latest::components::Host::add_receiver(self, actor))
    }

    fn remove_receiver(&mut self, actor: ActorId) -> Result<(), Error> {
        older(latest::components::Host::remove_receiver(self, actor))
    }
}

impl components::HostComponentRequest for InstanceState {
    fn drop(&mut self, request: Resource<ComponentRequestResource>) -> wasmtime::Result<()> {
        latest::components::HostComponentRequest::drop(self, request)
    }
}

impl components::HostExtensionHandler for InstanceState {
    fn drop(&mut self, handler: Resource<ExtensionHandlerResource>) -> wasmtime::Result<()> {
        latest::components::HostExtensionHandler::drop(self, handler)
    }
}

impl init_states::Host for InstanceState {
    fn states(&mut self) -> Vec<String> {
        latest::init_states::Host::states(self)
    }

    fn register_feature(&mut self, actor: ActorId, feature: String, implementer: String) -> Result<(), Error> {
        older(latest::init_states::Host::register_feature(self, actor, feature, implementer))
    }

    fn unregister_feature(&mut self, actor: ActorId, feature: String) -> Result<(), Error> {
        older(latest::init_states::Host::unregister_feature(self, actor, feature))
    }

    fn feature_state(&mut self, actor: ActorId, feature: String) -> Result<Option<String>, Error> {
        older(latest::init_states::Host::feature_state(self, actor, feature))
    }

    fn has_feature_reached(&mut self, actor: ActorId, feature: String, state: String) -> Result<bool, Error> {
        older(latest::init_states::Host::has_feature_reached(self, actor, feature, state))
    }

    fn have_all_features_reached(
        &mut self,
        actor: ActorId,
        state: String,
        excluding: Option<String>,
    ) -> Result<bool, Error> {
        older(latest::init_states::Host::have_all_features_reached(self, actor, state, excluding))
    }

    fn change_feature_state(&mut self, actor: ActorId, feature: String, state: String) -> Result<(), Error> {
        older(latest::init_states::Host::change_feature_state(self, actor, feature, state))
    }

    fn subscribe_actor(
        &mut self,
        actor: ActorId,
        feature: Option<String>,
        state: Option<String>,
        call_if_reached: bool,
        id: u32,
    ) -> Result<Resource<SubscriptionResource>, Error> {
        older(latest::init_states::Host::subscribe_actor(self, actor, feature, state, call_if_reached, id))
    }

    fn subscribe_class(
        &mut self,
        class: String,
        feature: String,
        state: Option<String>,
        call_if_reached: bool,
        id: u32,
    ) -> Result<Resource<SubscriptionResource>, Error> {
        older(latest::init_states::Host::subscribe_class(self, class, Some(feature), state, call_if_reached, id))
    }

    fn continue_init_state_chain(&mut self, actor: ActorId, feature: String) -> Result<(), Error> {
        older(latest::init_states::Host::continue_init_state_chain(self, actor, feature))
    }

    fn check_default_initialization_for_implementers(&mut self, actor: ActorId, except: String) -> Result<(), Error> {
        older(latest::init_states::Host::check_default_initialization_for_implementers(self, actor, except))
    }
}

impl init_states::HostSubscription for InstanceState {
    fn drop(&mut self, subscription: Resource<SubscriptionResource>) -> wasmtime::Result<()> {
        latest::init_states::HostSubscription::drop(self, subscription)
    }
}
