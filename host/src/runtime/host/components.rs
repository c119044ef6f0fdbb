//! `gamefeature:plugin/components`: component requests and extension handlers as resources owned by the
//! calling instance, and extension events.

use wasmtime::component::Resource;

use super::actors::spawned_by_caller;
use super::Call;
use crate::runtime::bindings::gamefeature::plugin::components::{
    AddFlags, Host, HostComponentRequest, HostExtensionHandler, HostPropertyWatch,
};
use crate::runtime::bindings::types::{ActorId, Error};
use crate::runtime::resources::{ComponentRequestResource, ExtensionHandlerResource, PropertyWatchResource};
use crate::runtime::state::InstanceState;
use crate::world::component_manager::RequestFlags;
use crate::world::ActorId as Actor;

impl Host for InstanceState {
    fn event_name(&mut self, event: u32) -> Option<String> {
        self.event_names.get(&event).map(|name| name.to_string())
    }

    fn ensure_component(&mut self, actor: ActorId, component: String) -> Result<bool, Error> {
        self.guard(Call::change_of(actor).names(&[("component class", &component)]), |w, _| {
            Ok(w.ensure_component(Actor::from_raw(actor), &component)?)
        })
    }

    fn watch_property(
        &mut self,
        actor: ActorId,
        component: String,
        name: String,
        id: u32,
    ) -> Result<Resource<PropertyWatchResource>, Error> {
        let names = [("component class", component.as_str()), ("property name", name.as_str())];
        let watch = self.guard(Call::new_handle_of(actor).names(&names), |w, caller| {
            Ok(w.watch_property(caller.owner, Actor::from_raw(actor), &component, &name, id)?)
        })?;
        self.push_handle(PropertyWatchResource { id: watch, number: id }, |w| w.unwatch_property(watch))
    }

    fn add_component_request(
        &mut self,
        receiver: String,
        component: String,
        flags: AddFlags,
    ) -> Result<Resource<ComponentRequestResource>, Error> {
        let allowed = self.env.permissions.may_request_components_on(&receiver);
        let permission = format!("component-requests on {receiver}");
        let flags = RequestFlags { add_unique: flags.contains(AddFlags::ADD_UNIQUE) };
        let handle = self.guard(
            Call::new_handle_of_world()
                .names(&[("receiver class", &receiver), ("component class", &component)])
                .permission(&permission, allowed),
            |w, caller| Ok(w.add_component_request(caller.owner, &receiver, &component, flags)?),
        )?;
        // A request exists only while a handle of the plugin stands for it.
        let mut handle = Some(handle);
        let resource = ComponentRequestResource { handle: None, receiver, component };
        let resource = self.push_handle(resource, |w| {
            if let Some(handle) = handle.take() {
                w.release_component_request(handle);
            }
        });
        let resource = resource?;
        if let Some(handle) = handle {
            self.table.get_mut(&resource).expect("just pushed").handle = Some(handle);
        }
        Ok(resource)
    }

    fn add_extension_handler(
        &mut self,
        receiver: String,
        handler: u32,
    ) -> Result<Resource<ExtensionHandlerResource>, Error> {
        let id = self.guard(Call::new_handle_of_world().names(&[("receiver class", &receiver)]), |w, caller| {
            Ok(w.add_extension_handler(caller.owner, &receiver, handler)?)
        })?;
        self.push_handle(ExtensionHandlerResource { id, receiver, number: handler }, |w| w.remove_extension_handler(id))
    }

    fn send_extension_event(&mut self, actor: ActorId, event: String) -> Result<(), Error> {
        let allowed = self.env.permissions.send_events;
        self.guard(
            Call::change_of(actor).names(&[("event name", &event)]).permission("send-events", allowed),
            |w, caller| Ok(w.send_extension_event_from(Some(caller.owner), Actor::from_raw(actor), &event)?),
        )
    }

    fn send_extension_events(&mut self, actors: Vec<u64>, events: Vec<u32>, names: Vec<String>) -> Vec<(u32, Error)> {
        if let Some(flood) = self.oversized_batch(actors.len().max(events.len())) {
            return flood;
        }
        if !self.env.permissions.send_events {
            let denied = self.denied("send-events");
            return (0..actors.len().max(events.len())).map(|i| (i as u32, denied.clone())).collect();
        }
        let lists = [("actors", actors.len()), ("events", events.len())];
        // An event name the world does not know yet is interned when an entry first sends it, not before: a
        // name no entry could send (every actor unknown, say) is never interned.
        let mut known = super::KnownNames::of(&names);
        self.run_batch(
            &lists,
            &names,
            "event name",
            |_| 1,
            |i| actors[i],
            |w, owner, i, named| {
                let text = named.get(events[i])?;
                let name = known.get(w, events[i], text);
                let sent = w.send_named_extension_event_from(Some(owner), Actor::from_raw(actors[i]), (name, text))?;
                known.remember(events[i], sent);
                Ok(())
            },
        )
    }

    fn add_receiver(&mut self, actor: ActorId) -> Result<(), Error> {
        self.guard(Call::change_of(actor).permission("spawn-actors", self.env.permissions.spawn_actors), |w, caller| {
            spawned_by_caller(w, caller, actor)?;
            Ok(w.add_receiver(Actor::from_raw(actor))?)
        })
    }

    fn remove_receiver(&mut self, actor: ActorId) -> Result<(), Error> {
        self.guard(Call::change_of(actor).permission("spawn-actors", self.env.permissions.spawn_actors), |w, caller| {
            spawned_by_caller(w, caller, actor)?;
            Ok(w.remove_receiver(Actor::from_raw(actor))?)
        })
    }
}

impl HostComponentRequest for InstanceState {
    fn receiver(&mut self, request: Resource<ComponentRequestResource>) -> String {
        // The canonical ABI only lets a live handle of this instance through.
        self.table.get(&request).map(|r| r.receiver.clone()).unwrap_or_default()
    }

    fn component(&mut self, request: Resource<ComponentRequestResource>) -> String {
        // The canonical ABI only lets a live handle of this instance through.
        self.table.get(&request).map(|r| r.component.clone()).unwrap_or_default()
    }

    fn drop(&mut self, request: Resource<ComponentRequestResource>) -> wasmtime::Result<()> {
        let ComponentRequestResource { handle, .. } = self.take_handle(request)?;
        if let Some(handle) = handle {
            let _ = self.guard(Call::release(), |w, _| {
                w.release_component_request(handle);
                Ok(())
            });
        }
        Ok(())
    }
}

impl HostExtensionHandler for InstanceState {
    fn receiver(&mut self, handler: Resource<ExtensionHandlerResource>) -> String {
        // The canonical ABI only lets a live handle of this instance through.
        self.table.get(&handler).map(|r| r.receiver.clone()).unwrap_or_default()
    }

    fn id(&mut self, handler: Resource<ExtensionHandlerResource>) -> u32 {
        // The canonical ABI only lets a live handle of this instance through.
        self.table.get(&handler).map(|r| r.number).unwrap_or_default()
    }

    fn drop(&mut self, handler: Resource<ExtensionHandlerResource>) -> wasmtime::Result<()> {
        let ExtensionHandlerResource { id, .. } = self.take_handle(handler)?;
        let _ = self.guard(Call::release(), |w, _| {
            w.remove_extension_handler(id);
            Ok(())
        });
        Ok(())
    }
}

impl HostPropertyWatch for InstanceState {
    fn id(&mut self, watch: Resource<PropertyWatchResource>) -> u32 {
        // The canonical ABI only lets a live handle of this instance through.
        self.table.get(&watch).map(|w| w.number).unwrap_or_default()
    }

    fn drop(&mut self, watch: Resource<PropertyWatchResource>) -> wasmtime::Result<()> {
        let PropertyWatchResource { id, .. } = self.take_handle(watch)?;
        let _ = self.guard(Call::release(), |w, _| {
            w.unwatch_property(id);
            Ok(())
        });
        Ok(())
    }
}
