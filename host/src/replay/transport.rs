//! The network's side of a recording: transports that record what each poll returned, and transports that
//! return it again in a replay, poll for poll, with nothing on the wire.
//!
//! Servers and clients poll their transport at fixed points of a frame, so the n-th poll of a replay is the
//! n-th poll of the recording: what arrived between two polls in the recorded session arrives between the
//! same two polls in the replay, however the network timed it.

use std::collections::HashMap;
use std::sync::Arc;

use crate::net::transport::{Channel, ClientEvent, ClientTransport, ServerEvent, ServerTransport, Traffic};
use crate::recording::{NetEvent, Record, Recorder};
use crate::world::ClientId;

/// A server's transport whose every poll is recorded.
pub struct RecordingServerTransport {
    inner: Box<dyn ServerTransport>,
    recorder: Arc<Recorder>,
    polls: u64,
}

impl RecordingServerTransport {
    /// Records what `inner` delivers into `recorder`.
    pub fn new(inner: Box<dyn ServerTransport>, recorder: Arc<Recorder>) -> Self {
        RecordingServerTransport { inner, recorder, polls: 0 }
    }
}

impl ServerTransport for RecordingServerTransport {
    fn poll(&mut self) -> Vec<ServerEvent> {
        let events = self.inner.poll();
        record_poll(&self.recorder, &mut self.polls, events.iter().map(server_event_to_record));
        events
    }

    fn send(&mut self, client: ClientId, channel: Channel, frame: Vec<u8>) {
        self.inner.send(client, channel, frame);
    }

    fn disconnect(&mut self, client: ClientId, reason: &str) {
        self.inner.disconnect(client, reason);
    }

    fn peer_address(&self, client: ClientId) -> Option<std::net::SocketAddr> {
        self.inner.peer_address(client)
    }

    fn bytes_sent(&self) -> u64 {
        self.inner.bytes_sent()
    }

    fn traffic(&self, client: ClientId) -> Option<Traffic> {
        self.inner.traffic(client)
    }

    fn total_traffic(&self) -> Traffic {
        self.inner.total_traffic()
    }

    fn queued(&self, client: ClientId, channel: Channel) -> usize {
        self.inner.queued(client, channel)
    }
}

/// A client's transport whose every poll is recorded.
pub struct RecordingClientTransport {
    inner: Box<dyn ClientTransport>,
    recorder: Arc<Recorder>,
    polls: u64,
}

impl RecordingClientTransport {
    /// Records what `inner` delivers into `recorder`.
    pub fn new(inner: Box<dyn ClientTransport>, recorder: Arc<Recorder>) -> Self {
        RecordingClientTransport { inner, recorder, polls: 0 }
    }
}

impl ClientTransport for RecordingClientTransport {
    fn poll(&mut self) -> Vec<ClientEvent> {
        let events = self.inner.poll();
        record_poll(&self.recorder, &mut self.polls, events.iter().map(client_event_to_record));
        events
    }

    fn send(&mut self, channel: Channel, frame: Vec<u8>) {
        self.inner.send(channel, frame);
    }

    fn disconnect(&mut self, reason: &str) {
        self.inner.disconnect(reason);
    }

    fn closed(&mut self) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + '_>> {
        self.inner.closed()
    }
}

/// What each recorded poll returned, by poll number.
#[derive(Debug, Default, Clone)]
pub struct RecordedPolls {
    polls: HashMap<u64, Vec<NetEvent>>,
}

impl RecordedPolls {
    /// The polls among `records`.
    pub fn of(records: impl IntoIterator<Item = Record>) -> Self {
        let mut polls = HashMap::new();
        for record in records {
            if let Record::Polled { poll, events } = record {
                polls.entry(poll).or_insert_with(Vec::new).extend(events);
            }
        }
        RecordedPolls { polls }
    }
}

/// A server's transport in a replay: each poll returns what the recording's poll of the same number did;
/// what the server sends goes nowhere.
pub struct ReplayServerTransport {
    recorded: RecordedPolls,
    polls: u64,
}

impl ReplayServerTransport {
    /// Plays back `recorded`.
    pub fn new(recorded: RecordedPolls) -> Self {
        ReplayServerTransport { recorded, polls: 0 }
    }
}

impl ServerTransport for ReplayServerTransport {
    fn poll(&mut self) -> Vec<ServerEvent> {
        let events = self.recorded.polls.remove(&self.polls).unwrap_or_default();
        self.polls += 1;
        events.into_iter().map(server_event_from_record).collect()
    }

    fn send(&mut self, _client: ClientId, _channel: Channel, _frame: Vec<u8>) {}

    fn disconnect(&mut self, _client: ClientId, _reason: &str) {}
}

/// A client's transport in a replay (see [`ReplayServerTransport`]).
pub struct ReplayClientTransport {
    recorded: RecordedPolls,
    polls: u64,
}

impl ReplayClientTransport {
    /// Plays back `recorded`.
    pub fn new(recorded: RecordedPolls) -> Self {
        ReplayClientTransport { recorded, polls: 0 }
    }
}

impl ClientTransport for ReplayClientTransport {
    fn poll(&mut self) -> Vec<ClientEvent> {
        let events = self.recorded.polls.remove(&self.polls).unwrap_or_default();
        self.polls += 1;
        events.into_iter().filter_map(client_event_from_record).collect()
    }

    fn send(&mut self, _channel: Channel, _frame: Vec<u8>) {}

    fn disconnect(&mut self, _reason: &str) {}
}

/// Records what poll number `polls` returned, if anything, and counts the poll.
fn record_poll(recorder: &Recorder, polls: &mut u64, events: impl Iterator<Item = NetEvent>) {
    let events: Vec<NetEvent> = events.collect();
    if !events.is_empty() {
        recorder.write(&Record::Polled { poll: *polls, events });
    }
    *polls += 1;
}

fn server_event_to_record(event: &ServerEvent) -> NetEvent {
    match event {
        ServerEvent::Connected(client) => NetEvent::Connected(client.0),
        ServerEvent::Received(client, frame) => NetEvent::Received(client.0, frame.clone()),
        ServerEvent::Disconnected(client, why) => NetEvent::Disconnected(client.0, why.clone()),
    }
}

fn server_event_from_record(event: NetEvent) -> ServerEvent {
    match event {
        NetEvent::Connected(client) => ServerEvent::Connected(ClientId(client)),
        NetEvent::Received(client, frame) => ServerEvent::Received(ClientId(client), frame),
        NetEvent::Disconnected(client, why) => ServerEvent::Disconnected(ClientId(client), why),
    }
}

fn client_event_to_record(event: &ClientEvent) -> NetEvent {
    match event {
        ClientEvent::Received(frame) => NetEvent::Received(0, frame.clone()),
        ClientEvent::Disconnected(why) => NetEvent::Disconnected(0, why.clone()),
    }
}

/// A client's event; a connection event (which only servers see) is not one.
fn client_event_from_record(event: NetEvent) -> Option<ClientEvent> {
    match event {
        NetEvent::Received(_, frame) => Some(ClientEvent::Received(frame)),
        NetEvent::Disconnected(_, why) => Some(ClientEvent::Disconnected(why)),
        NetEvent::Connected(_) => None,
    }
}
