//! Calls deferred until the current callback returns, then sent in one host call per kind: feature
//! registrations, events, chain walks. A callback handling a batch of actors (setting each up, stepping each
//! chain) makes its few calls for all of them at once.
//!
//! They go in that order: a walk may walk a feature registered in the same callback, and an event goes before
//! the walks as it went before them when sent at once (the host queues both for later either way).

use crate::bindings::gamefeature::plugin::components as components_host;
use crate::bindings::gamefeature::plugin::init_states::{self as host, ChainWork};
use crate::names::same;
use crate::world::ActorId;
use crate::Error;

/// Everything deferred so far, each name kept once; as the parallel lists the batch imports take.
#[derive(Default)]
struct Deferred {
    registrations: Registrations,
    events: Events,
    requests: Requests,
    names: Vec<String>,
}

/// Registration `i`: feature `names[features[i]]` of `actors[i]`, implemented by `names[implementers[i]]`.
#[derive(Default)]
struct Registrations {
    actors: Vec<ActorId>,
    features: Vec<u32>,
    implementers: Vec<u32>,
}

/// Event `i`: `names[events[i]]` about `actors[i]`.
#[derive(Default)]
struct Events {
    actors: Vec<ActorId>,
    events: Vec<u32>,
}

/// Request `i`: `works[i]` for feature `names[features[i]]` of `actors[i]`.
#[derive(Default)]
struct Requests {
    actors: Vec<ActorId>,
    features: Vec<u32>,
    works: Vec<ChainWork>,
}

impl Deferred {
    /// The index of `name` in `names`, added if new.
    fn name(&mut self, name: &str) -> u32 {
        // A plugin defers a handful of names: a scan finds one sooner than a hash would.
        let index = match self.names.iter().position(|known| same(known, name)) {
            Some(index) => index,
            None => {
                self.names.push(name.to_string());
                self.names.len() - 1
            }
        };
        index as u32
    }
}

thread_local! {
    static DEFERRED: std::cell::RefCell<Deferred> = const {
        std::cell::RefCell::new(Deferred {
            registrations: Registrations { actors: Vec::new(), features: Vec::new(), implementers: Vec::new() },
            events: Events { actors: Vec::new(), events: Vec::new() },
            requests: Requests { actors: Vec::new(), features: Vec::new(), works: Vec::new() },
            names: Vec::new(),
        })
    };
}

pub(crate) fn register(actor: ActorId, feature: &str, implementer: &str) {
    DEFERRED.with_borrow_mut(|deferred| {
        let (feature, implementer) = (deferred.name(feature), deferred.name(implementer));
        let registrations = &mut deferred.registrations;
        registrations.actors.push(actor);
        registrations.features.push(feature);
        registrations.implementers.push(implementer);
    });
}

pub(crate) fn event(actor: ActorId, event: &str) {
    DEFERRED.with_borrow_mut(|deferred| {
        let event = deferred.name(event);
        deferred.events.actors.push(actor);
        deferred.events.events.push(event);
    });
}

pub(crate) fn walk(actor: ActorId, feature: &str, work: ChainWork) {
    DEFERRED.with_borrow_mut(|deferred| {
        let feature = deferred.name(feature);
        let requests = &mut deferred.requests;
        requests.actors.push(actor);
        requests.features.push(feature);
        requests.works.push(work);
    });
}

/// Sends what was deferred: the registrations, then the events, then the chain walks (the SDK calls it when a
/// callback returns). A refusal is logged as a warning, one line per kind however many were refused.
pub(crate) fn send() {
    let Deferred { registrations, events, requests, names } = DEFERRED.with_borrow_mut(std::mem::take);
    let name = |index: u32| names.get(index as usize).map_or("?", String::as_str);
    if !registrations.actors.is_empty() {
        let Registrations { actors, features, implementers } = &registrations;
        let refused = host::register_features(actors, features, implementers, &names);
        if let Some((i, error, others)) = first_refused(&refused, actors.len(), "registrations") {
            let (feature, actor) = (name(features[i]), actors[i]);
            crate::log::warn(&format!("could not register {feature} on actor {actor}: {error}{others}"));
        }
    }
    if !events.actors.is_empty() {
        let Events { actors, events } = &events;
        let refused = components_host::send_extension_events(actors, events, &names);
        if let Some((i, error, others)) = first_refused(&refused, actors.len(), "events") {
            let (event, actor) = (name(events[i]), actors[i]);
            crate::log::warn(&format!("could not send {event} about actor {actor}: {error}{others}"));
        }
    }
    if !requests.actors.is_empty() {
        let Requests { actors, features, works } = &requests;
        let refused = host::queue_chain_requests(actors, features, works, &names);
        if let Some((i, error, others)) = first_refused(&refused, actors.len(), "walks") {
            let what = match works[i] {
                ChainWork::ContinueChain => "continue the chain of",
                ChainWork::CheckOthersThenContinue => "check the default initialization of",
            };
            let (feature, actor) = (name(features[i]), actors[i]);
            crate::log::warn(&format!("could not {what} {feature} on actor {actor}: {error}{others}"));
        }
    }
}

/// The first refused entry of a deferred batch of `sent` entries (its index), why (worded), and how many more
/// were refused: one line however many were, since each line is a host call.
fn first_refused(refused: &[(u32, Error)], sent: usize, what: &str) -> Option<(usize, String, String)> {
    let (index, error) = refused.first()?;
    let index = Some(*index as usize).filter(|index| *index < sent)?;
    let others = match refused.len() {
        1 => String::new(),
        n => format!(" (and {} more deferred {what} refused)", n - 1),
    };
    Some((index, shown(error), others))
}

/// A refusal as every SDK words it: the WIT case, then what it carries.
fn shown(error: &Error) -> String {
    match error {
        Error::UnknownActor(actor) => format!("unknown-actor: {actor}"),
        Error::UnknownClass(text) => format!("unknown-class: {text}"),
        Error::UnknownAsset(text) => format!("unknown-asset: {text}"),
        Error::UnknownState(text) => format!("unknown-state: {text}"),
        Error::Denied(text) => format!("denied: {text}"),
        Error::Invalid(text) => format!("invalid: {text}"),
    }
}
