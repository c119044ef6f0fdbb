//! A game client: a world of its own, filled by its server.
//!
//! It says hello, is welcomed (or refused, with why), and then applies what the server sends: when the
//! experience arrives it loads it itself — its own bundles, its own client-side components, the same load
//! states as the server — and then the actors, their replicated components and values. Each frame it advances
//! its world, tells its plugins which replicated values changed, and acknowledges the values it received.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::protocol::{decode, encode, ClientMessage, ServerMessage, PROTOCOL_VERSION};
use super::transport::{Channel, ClientEvent, ClientTransport};
use super::{BufferStats, ClientReplication, SessionEvent, IN_FLIGHT_PACKETS};
use crate::experience::ExperienceManager;
use crate::world::{self, ClientId};

/// Where a client is in its session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientState {
    /// Waiting for the server's welcome.
    Connecting,
    Playing,
    /// Play is over, with why (the server ended it, refused the client or went away).
    Ended(String),
}

/// Why a client stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    #[error("the server refused this client: {0}")]
    Refused(String),
    #[error("the server went away: {0}")]
    ServerGone(String),
    #[error("the server broke the protocol: {0}")]
    Protocol(String),
    #[error("the server's experience {name:?} could not be loaded: {cause}")]
    Experience { name: String, cause: String },
}

/// A world played from a server.
pub struct GameClient {
    manager: ExperienceManager,
    replication: Option<ClientReplication>,
    transport: Box<dyn ClientTransport>,
    experiences: PathBuf,
    state: ClientState,
}

impl GameClient {
    /// Connects `manager`'s world (a client world, not yet loaded) through `transport`; experiences the server
    /// names are read from the `experiences` folder.
    pub fn connect(
        manager: ExperienceManager,
        mut transport: Box<dyn ClientTransport>,
        token: Option<String>,
        experiences: &Path,
    ) -> Self {
        crate::game::declare_replicated_natives(&mut world::lock(manager.world()));
        let hello = ClientMessage::Hello { protocol: PROTOCOL_VERSION, token };
        transport.send(Channel::Reliable, encode(&hello));
        GameClient {
            manager,
            replication: None,
            transport,
            experiences: experiences.to_path_buf(),
            state: ClientState::Connecting,
        }
    }

    pub fn manager(&self) -> &ExperienceManager {
        &self.manager
    }

    pub fn state(&self) -> &ClientState {
        &self.state
    }

    /// The number the server gave this client, once welcomed.
    pub fn id(&self) -> Option<ClientId> {
        self.replication.as_ref().map(ClientReplication::me)
    }

    /// How values that overtook their components fared.
    pub fn buffer_stats(&self) -> BufferStats {
        self.replication.as_ref().map(ClientReplication::stats).unwrap_or_default()
    }

    /// One frame: what the server sent, one tick of the world (`delta` of game time), acknowledgements. An
    /// error ends the session (play is ended cleanly first); later calls do nothing.
    pub async fn frame(&mut self, delta: Duration) -> Result<(), ClientError> {
        if matches!(self.state, ClientState::Ended(_)) {
            return Ok(());
        }
        for event in self.transport.poll() {
            let outcome = match event {
                ClientEvent::Received(frame) => self.received(&frame).await,
                ClientEvent::Disconnected(reason) => Err(ClientError::ServerGone(reason)),
            };
            match outcome {
                Ok(true) => {}
                Ok(false) => return Ok(()),
                Err(error) => {
                    self.end(&error.to_string()).await;
                    return Err(error);
                }
            }
        }
        self.manager.tick(delta);
        if let Some(replication) = &mut self.replication {
            // A client catching up after a slow frame (its first load) acknowledges many packets at once: in
            // messages of at most what the server remembers, each small.
            for packets in replication.take_acknowledgements().chunks(IN_FLIGHT_PACKETS) {
                self.transport.send(Channel::Reliable, encode(&ClientMessage::Ack { packets: packets.to_vec() }));
            }
        }
        Ok(())
    }

    /// Handles one frame from the server; `false` once play has ended.
    async fn received(&mut self, frame: &[u8]) -> Result<bool, ClientError> {
        let message = decode::<ServerMessage>(frame).map_err(|e| ClientError::Protocol(e.to_string()))?;
        match message {
            ServerMessage::Welcome { client, .. } if self.replication.is_none() => {
                self.replication = Some(ClientReplication::new(client));
                self.state = ClientState::Playing;
            }
            ServerMessage::Welcome { .. } => return Err(ClientError::Protocol("a second welcome".into())),
            ServerMessage::Refused { reason } => return Err(ClientError::Refused(reason)),
            ServerMessage::Update { seq, update } => {
                let Some(replication) = &mut self.replication else {
                    return Err(ClientError::Protocol("an update before the welcome".into()));
                };
                let mut notes = Vec::new();
                let event = replication
                    .apply_update(&mut world::lock(self.manager.world()), seq, update, &mut notes)
                    .map_err(|e| ClientError::Protocol(e.to_string()))?;
                self.manager.pump();
                self.manager.notify_replicated(notes);
                match event {
                    Some(SessionEvent::Experience(name)) => self.load(&name).await?,
                    Some(SessionEvent::EndPlay(reason)) => {
                        self.end(&format!("the server ended play: {reason}")).await;
                        return Ok(false);
                    }
                    None => {}
                }
            }
            ServerMessage::Mutations { packet, mutations } => {
                // Values that overtook the welcome are dropped unacknowledged; the server sends them again.
                if let Some(replication) = &mut self.replication {
                    let mut notes = Vec::new();
                    replication.apply_mutations(&mut world::lock(self.manager.world()), packet, mutations, &mut notes);
                    self.manager.notify_replicated(notes);
                }
            }
        }
        Ok(true)
    }

    /// Loads the experience the server named, from this client's own experience folder.
    async fn load(&mut self, name: &str) -> Result<(), ClientError> {
        let failed = |cause: String| ClientError::Experience { name: name.to_string(), cause };
        let plain = Path::new(name).file_name().is_some_and(|f| f == name) && name.ends_with(".toml");
        if !plain {
            return Err(failed("not the file name of an experience".into()));
        }
        let path = self.experiences.join(name);
        self.manager.load(&path).await.map_err(|e| failed(e.to_string()))?;
        Ok(())
    }

    /// Ends play on this client and closes the connection.
    async fn end(&mut self, why: &str) {
        self.state = ClientState::Ended(why.to_string());
        if self.manager.state() == crate::experience::ExperienceLoadState::Loaded {
            let _ = self.manager.end_play().await;
        }
        self.transport.disconnect(why);
    }

    /// Leaves the server: play ends here, and the server cleans up this client's player.
    pub async fn leave(&mut self) {
        if !matches!(self.state, ClientState::Ended(_)) {
            self.end("the client left").await;
        }
    }

    /// Gives back the world's manager (for reports once play has ended).
    pub fn into_manager(self) -> ExperienceManager {
        self.manager
    }
}
