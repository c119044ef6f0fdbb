//! `gamefeature:plugin/components`: component requests and extension handlers as resources owned by the
//! calling instance, and extension events.

use wasmtime::component::Resource;

use crate::component::{HandlerId, RequestFlags, RequestHandle};
use crate::runtime::bindings::gamefeature::plugin::components::{
    AddFlags, Host, HostComponentRequest, HostExtensionHandler,
};
use crate::runtime::bindings::types::{ActorId, Error};
use crate::runtime::state::InstanceState;
use crate::world::{self, ActorId as Actor};

/// A component request held by a plugin; dropping it releases the request.
pub struct ComponentRequestResource(Option<RequestHandle>);

/// An extension handler held by a plugin; dropping it removes the handler.
pub struct ExtensionHandlerResource(HandlerId);

impl Host for InstanceState {
    fn add_component_request(
        &mut self,
        receiver: String,
        component: String,
        flags: AddFlags,
    ) -> Result<Resource<ComponentRequestResource>, Error> {
        self.check_name("receiver class", &receiver)?;
        self.check_name("component class", &component)?;
        let allowed = self.env.permissions.may_request_components_on(&receiver);
        self.require(allowed, &format!("component-requests on {receiver}"))?;
        let flags = RequestFlags { add_unique: flags.contains(AddFlags::ADD_UNIQUE) };
        self.reserve_handle()?;
        // The handle exists before the request, so the request never outlives a handle that failed.
        let resource = self.push_handle(ComponentRequestResource(None), |_| {})?;
        let owner = self.env.owner;
        match self.world_op(|w| w.add_component_request(owner, &receiver, &component, flags)) {
            Ok(handle) => match self.table.get_mut(&resource) {
                Ok(slot) => {
                    slot.0 = Some(handle);
                    Ok(resource)
                }
                Err(e) => {
                    world::lock(&self.env.world).release_component_request(handle);
                    Err(Error::Invalid(format!("cannot hand out another handle: {e}")))
                }
            },
            Err(e) => {
                let _ = self.take_handle(resource);
                Err(e)
            }
        }
    }

    fn add_extension_handler(
        &mut self,
        receiver: String,
        handler: u32,
    ) -> Result<Resource<ExtensionHandlerResource>, Error> {
        self.reserve_handle()?;
        let owner = self.env.owner;
        let id = self.world_op(|w| w.add_extension_handler(owner, &receiver, handler))?;
        self.push_handle(ExtensionHandlerResource(id), |w| w.remove_extension_handler(id))
    }

    fn send_extension_event(&mut self, actor: ActorId, event: String) -> Result<(), Error> {
        self.check_name("event name", &event)?;
        self.require(self.env.permissions.send_events, "send-events")?;
        let sender = Some(self.env.owner);
        self.world_op(|w| w.send_extension_event_from(sender, Actor::from_raw(actor), &event))
    }

    fn add_receiver(&mut self, actor: ActorId) -> Result<(), Error> {
        self.require(self.env.permissions.spawn_actors, "spawn-actors")?;
        self.world_op(|w| w.add_receiver(Actor::from_raw(actor)))
    }

    fn remove_receiver(&mut self, actor: ActorId) -> Result<(), Error> {
        self.require(self.env.permissions.spawn_actors, "spawn-actors")?;
        self.world_op(|w| w.remove_receiver(Actor::from_raw(actor)))
    }
}

impl HostComponentRequest for InstanceState {
    fn drop(&mut self, request: Resource<ComponentRequestResource>) -> wasmtime::Result<()> {
        let ComponentRequestResource(handle) = self.take_handle(request)?;
        if let Some(handle) = handle {
            world::lock(&self.env.world).release_component_request(handle);
        }
        Ok(())
    }
}

impl HostExtensionHandler for InstanceState {
    fn drop(&mut self, handler: Resource<ExtensionHandlerResource>) -> wasmtime::Result<()> {
        let ExtensionHandlerResource(id) = self.take_handle(handler)?;
        world::lock(&self.env.world).remove_extension_handler(id);
        Ok(())
    }
}
