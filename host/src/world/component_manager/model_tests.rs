//! Random sequences of receivers, requests, handlers, handle drops and events, run through the component
//! manager and through a reference model that recomputes everything from scratch; they must never differ.
//!
//! The model is declarative: an actor has one component per live (receiver class, component class) pair whose
//! receiver class is its class or an ancestor; an event reaches the live handlers of each class of the actor's
//! chain, most derived first, in registration order.

use proptest::prelude::*;

use super::{OwnerId, RequestFlags, RequestHandle, Work};
use crate::world::{ActorId, NetMode, World};

const CLASSES: [&str; 3] = ["Pawn", "Character", "PlayerState"];
const COMPONENTS: [&str; 2] = ["Health", "Shield"];

#[derive(Debug, Clone)]
enum Op {
    Spawn(usize),
    Destroy(usize),
    Request(u32, usize, usize),
    Release(usize),
    AddHandler(u32, usize, u32),
    RemoveHandler(usize),
    Send(usize),
    RemoveOwner(u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..3usize).prop_map(Op::Spawn),
        1 => (0..8usize).prop_map(Op::Destroy),
        2 => (1..3u32, 0..3usize, 0..2usize).prop_map(|(o, r, c)| Op::Request(o, r, c)),
        1 => (0..8usize).prop_map(Op::Release),
        2 => (1..3u32, 0..3usize, 0..4u32).prop_map(|(o, c, n)| Op::AddHandler(o, c, n)),
        1 => (0..8usize).prop_map(Op::RemoveHandler),
        2 => (0..8usize).prop_map(Op::Send),
        1 => (1..3u32).prop_map(Op::RemoveOwner),
    ]
}

#[derive(Default)]
struct Model {
    actors: Vec<(ActorId, &'static str)>,
    requests: Vec<(OwnerId, &'static str, &'static str)>,
    handlers: Vec<(OwnerId, &'static str, u32)>,
}

type Delivery = (OwnerId, u32, ActorId, String);

fn chain(class: &str) -> Vec<&'static str> {
    match class {
        "Character" => vec!["Character", "Pawn", "Actor"],
        "Pawn" => vec!["Pawn", "Actor"],
        _ => vec!["PlayerState", "Actor"],
    }
}

impl Model {
    fn to_chain(&self, actor: ActorId, class: &str, event: &str) -> Vec<Delivery> {
        chain(class)
            .into_iter()
            .flat_map(|level| self.handlers.iter().filter(move |(_, c, _)| *c == level))
            .map(|(owner, _, number)| (*owner, *number, actor, event.to_string()))
            .collect()
    }

    fn to_receivers(&self, handler: (OwnerId, &str, u32), event: &str) -> Vec<Delivery> {
        let (owner, class, number) = handler;
        self.actors
            .iter()
            .filter(|(_, c)| chain(c).contains(&class))
            .map(|(actor, _)| (owner, number, *actor, event.to_string()))
            .collect()
    }

    fn components(&self, class: &str) -> Vec<(String, String)> {
        let mut pairs: Vec<(String, String)> = self
            .requests
            .iter()
            .filter(|(_, receiver, _)| chain(class).contains(receiver))
            .map(|(_, receiver, component)| (component.to_string(), receiver.to_string()))
            .collect();
        pairs.sort();
        pairs.dedup();
        pairs
    }
}

fn deliveries(world: &mut World) -> Vec<Delivery> {
    world
        .take_work()
        .into_iter()
        .filter_map(|work| match work {
            Work::Extension { owner, number, actor, event, .. } => Some((owner, number, actor, event)),
            _ => None,
        })
        .map(|(owner, number, actor, event)| (owner, number, actor, world.name_text(event).to_string()))
        .collect()
}

proptest! {
    #[test]
    fn the_manager_matches_the_model(ops in proptest::collection::vec(op(), 1..60)) {
        let mut world = World::new("model", NetMode::Standalone);
        world.set_recording(false);
        world.register_owner("a");
        world.register_owner("b");
        let mut model = Model::default();
        let mut request_handles: Vec<RequestHandle> = Vec::new();
        let mut handler_ids = Vec::new();
        for op in ops {
            let expected: Vec<Delivery> = match op {
                Op::Spawn(c) => {
                    let actor = world.spawn(CLASSES[c]).unwrap();
                    model.actors.push((actor, CLASSES[c]));
                    let mut expected = model.to_chain(actor, CLASSES[c], "ReceiverAdded");
                    expected.extend(model.to_chain(actor, CLASSES[c], "GameActorReady"));
                    expected
                }
                Op::Destroy(i) if i < model.actors.len() => {
                    let (actor, class) = model.actors.remove(i);
                    world.destroy(actor).unwrap();
                    model.to_chain(actor, class, "ReceiverRemoved")
                }
                Op::Request(o, r, c) => {
                    let handle = world.add_component_request(OwnerId(o), CLASSES[r], COMPONENTS[c], RequestFlags::default()).unwrap();
                    request_handles.push(handle);
                    model.requests.push((OwnerId(o), CLASSES[r], COMPONENTS[c]));
                    vec![]
                }
                Op::Release(i) if i < request_handles.len() => {
                    world.release_component_request(request_handles.remove(i));
                    model.requests.remove(i);
                    vec![]
                }
                Op::AddHandler(o, c, n) => {
                    handler_ids.push(world.add_extension_handler(OwnerId(o), CLASSES[c], n).unwrap());
                    model.handlers.push((OwnerId(o), CLASSES[c], n));
                    model.to_receivers((OwnerId(o), CLASSES[c], n), "ExtensionAdded")
                }
                Op::RemoveHandler(i) if i < handler_ids.len() => {
                    world.remove_extension_handler(handler_ids.remove(i));
                    let handler = model.handlers.remove(i);
                    model.to_receivers(handler, "ExtensionRemoved")
                }
                Op::Send(i) if i < model.actors.len() => {
                    let (actor, class) = model.actors[i];
                    world.send_extension_event(actor, "Custom").unwrap();
                    model.to_chain(actor, class, "Custom")
                }
                Op::RemoveOwner(o) => {
                    let owner = OwnerId(o);
                    world.remove_owner(owner);
                    let mut expected = Vec::new();
                    let mut i = 0;
                    while i < model.handlers.len() {
                        if model.handlers[i].0 == owner {
                            let handler = model.handlers.remove(i);
                            handler_ids.remove(i);
                            expected.extend(model.to_receivers(handler, "ExtensionRemoved"));
                        } else {
                            i += 1;
                        }
                    }
                    let mut i = 0;
                    while i < model.requests.len() {
                        if model.requests[i].0 == owner {
                            model.requests.remove(i);
                            let _released_by_remove_owner = request_handles.remove(i);
                        } else {
                            i += 1;
                        }
                    }
                    expected
                }
                _ => vec![],
            };
            prop_assert_eq!(deliveries(&mut world), expected, "after {:?}", op);
            for (actor, class) in &model.actors {
                let mut actual: Vec<(String, String)> = world
                    .actor(*actor)
                    .unwrap()
                    .components
                    .iter()
                    .filter_map(|c| match &c.origin {
                        crate::world::ComponentOrigin::Request(key) => Some((c.class.to_string(), key.receiver_class.to_string())),
                        _ => None,
                    })
                    .collect();
                actual.sort();
                prop_assert_eq!(actual, model.components(class), "components of {} after {:?}", actor, op);
            }
            prop_assert_eq!(world.live_handlers(), model.handlers.len());
            prop_assert_eq!(world.live_request_handles(), model.requests.len());
            // The world's own statement of the model (what the fuzz targets check) agrees with the model.
            prop_assert_eq!(world.check_invariants(), Ok(()), "after {:?}", op);
        }
    }
}
