//! A game client: a world of its own, filled by its server.
//!
//! It says hello, is welcomed (or refused, with why), and then applies what the server sends: when the
//! experience arrives it loads it itself — its own bundles, its own client-side components, the same load
//! states as the server — and then the actors, their replicated components and values. With mod sync
//! ([`ModSync`]) it first fetches the plugins it lacks from the server (see [`super::mod_sync`]), holding the
//! updates that follow until the experience has loaded. Each frame it advances
//! its world, tells its plugins which replicated values changed, and acknowledges the values it received.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::consent::Occasion;
use super::mod_sync::{store_experience, Fetch, ModSync};
use super::protocol::{
    decode, encode, ClientMessage, ExperienceContent, PackageOffer, ServerMessage, Update, PROTOCOL_VERSION,
};
use super::transport::{Channel, ClientEvent, ClientTransport};
use super::{BufferStats, ClientReplication, SessionEvent};
use crate::experience::ExperienceManager;
use crate::world::{self, ClientId};

/// Asks `sync`'s consent hook, if it has one, about what `fetch` would fetch or run (nothing when every plugin
/// is the client's own).
async fn ask_consent(fetch: &Fetch, occasion: Occasion, sync: &ModSync) -> Result<(), ClientError> {
    if let (Some(hook), Some(list)) = (&sync.consent, fetch.consent_list(occasion)) {
        hook(list).await.map_err(ClientError::ModSync)?;
    }
    Ok(())
}

/// Where a client is in its session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientState {
    /// Waiting for the server's welcome.
    Connecting,
    /// Welcomed: applying what the server sends and playing its world.
    Playing,
    /// Play is over, with why (the server ended it, refused the client or went away).
    Ended(String),
}

/// Why a client stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    /// The server refused the client's hello (a wrong token or ticket, another protocol version, a full server); its
    /// reason.
    #[error("the server refused this client: {0}")]
    Refused(String),
    /// The connection ended before the server ended play (it stopped, closed this connection or stopped
    /// answering); the transport's reason.
    #[error("the server went away: {0}")]
    ServerGone(String),
    /// The server sent something out of protocol (a malformed frame, an update out of order or that does not apply);
    /// what.
    #[error("the server broke the protocol: {0}")]
    Protocol(String),
    /// The experience the server plays could not be loaded here.
    #[error("the server's experience {name:?} could not be loaded: {cause}")]
    Experience {
        /// The experience's file name, as the server gave it.
        name: String,
        /// Why it could not be loaded.
        cause: String,
    },
    /// Fetching, checking or installing the server's plugins failed (one the client's policy refuses, say); why.
    #[error("the server's plugins could not be synced: {0}")]
    ModSync(String),
}

/// What a client fetches packages for.
enum Purpose {
    /// The experience it joins: updates are held until it has loaded.
    Join { name: String, content: ExperienceContent },
    /// A new version of a plugin it plays, hot-reloaded once fetched while play goes on.
    Update { plugin: String },
}

/// Updates a client holds while it fetches plugins, at most: a server sending more is broken.
pub const MAX_HELD_UPDATES: usize = 1 << 18;

/// A world played from a server.
pub struct GameClient {
    manager: ExperienceManager,
    replication: Option<ClientReplication>,
    transport: Box<dyn ClientTransport>,
    experiences: PathBuf,
    state: ClientState,
    mod_sync: Option<ModSync>,
    /// The fetch in progress, with what it is for.
    fetching: Option<(Fetch, Purpose)>,
    /// New versions of plugins the server announced, waiting for the fetch in progress.
    updates: VecDeque<PackageOffer>,
    /// Updates that arrived during the fetch, applied in order once the experience has loaded.
    held: VecDeque<(u64, Update)>,
    fetched: Vec<crate::package::PackageSummary>,
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
            mod_sync: None,
            fetching: None,
            updates: VecDeque::new(),
            held: VecDeque::new(),
            fetched: Vec::new(),
        }
    }

    /// Fetches the plugins and experience files the server offers and this client lacks, as `sync` allows,
    /// instead of loading the experience from its own folder.
    pub fn with_mod_sync(mut self, sync: ModSync) -> Self {
        self.mod_sync = Some(sync);
        self
    }

    /// The experience manager of the client's world, to inspect what it plays.
    pub fn manager(&self) -> &ExperienceManager {
        &self.manager
    }

    /// Where the client is in its session.
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
            let outcome = match outcome {
                Ok(true) => self.apply_held().await,
                other => other,
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
            replication.take_acknowledgements().send(&mut *self.transport);
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
            // The server's words are its own text: shown as data.
            ServerMessage::Refused { reason } => {
                return Err(ClientError::Refused(crate::text::shown(&reason, crate::text::MAX_CAUSE)))
            }
            ServerMessage::Update { seq, update } if self.joining() || !self.held.is_empty() => {
                if self.held.len() >= MAX_HELD_UPDATES {
                    return Err(ClientError::Protocol(format!("over {MAX_HELD_UPDATES} updates during a fetch")));
                }
                self.held.push_back((seq, update));
            }
            ServerMessage::Update { seq, update } => return self.apply(seq, update).await,
            ServerMessage::Mutations { packet, values } => {
                // Values that overtook the welcome, or arrive while the experience's plugins are fetched, are
                // dropped unacknowledged; the server sends them again.
                let joining = self.joining();
                if let (Some(replication), false) = (&mut self.replication, joining) {
                    let mut notes = Vec::new();
                    replication.apply_mutations(&mut world::lock(self.manager.world()), packet, values, &mut notes);
                    self.manager.notify_replicated(notes);
                }
            }
            ServerMessage::Chunk { digest, offset, total, bytes } => {
                let Some((fetch, _)) = &mut self.fetching else {
                    return Err(ClientError::Protocol("a package chunk nobody asked for".into()));
                };
                fetch.received(&digest, offset, total, bytes).map_err(ClientError::ModSync)?;
                self.continue_fetch().await?;
            }
        }
        Ok(true)
    }

    /// Applies one reliable update; `false` once play has ended.
    async fn apply(&mut self, seq: u64, update: Update) -> Result<bool, ClientError> {
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
            Some(SessionEvent::Experience { name, content }) => match (content, self.mod_sync.clone()) {
                (Some(content), Some(sync)) => {
                    let fetch = Fetch::plan(&content, self.local_digests(), &sync).map_err(ClientError::ModSync)?;
                    ask_consent(&fetch, Occasion::Join, &sync).await?;
                    self.fetching = Some((fetch, Purpose::Join { name, content }));
                    self.continue_fetch().await?;
                }
                _ => self.load(&name).await?,
            },
            Some(SessionEvent::Package(offer)) => {
                if self.mod_sync.is_none() {
                    let package = &offer.package;
                    tracing::warn!(
                        "the server plays {} {} now; this client keeps its own",
                        package.name,
                        package.version
                    );
                    return Ok(true);
                }
                self.updates.push_back(offer);
                if self.fetching.is_none() {
                    self.continue_fetch().await?;
                }
            }
            Some(SessionEvent::EndPlay(reason)) => {
                let reason = crate::text::shown(&reason, crate::text::MAX_CAUSE);
                self.end(&format!("the server ended play: {reason}")).await;
                return Ok(false);
            }
            None => {}
        }
        Ok(true)
    }

    /// Whether the client is fetching the plugins of the experience it joins (and so holds updates back).
    fn joining(&self) -> bool {
        matches!(self.fetching, Some((_, Purpose::Join { .. })))
    }

    /// The plugins this client has, by the digest of their package, for a fetch to leave out.
    fn local_digests(&self) -> impl Fn(&str) -> Option<String> {
        let features = self.manager.features().clone();
        move |plugin: &str| {
            let manifest = features.manifest(plugin)?;
            Some(crate::package::Package::from_folder(&manifest.dir).ok()?.digest().to_string())
        }
    }

    /// Starts fetching the next new version the server announced, if there is one.
    async fn start_next_update(&mut self) -> Result<bool, ClientError> {
        let (Some(offer), Some(sync)) = (self.updates.pop_front(), self.mod_sync.clone()) else { return Ok(false) };
        let plugin = offer.package.name.clone();
        let content = ExperienceContent { files: Vec::new(), packages: vec![offer] };
        let fetch = Fetch::plan(&content, self.local_digests(), &sync).map_err(ClientError::ModSync)?;
        ask_consent(&fetch, Occasion::Update, &sync).await?;
        self.fetching = Some((fetch, Purpose::Update { plugin }));
        Ok(true)
    }

    /// Asks for the next chunks; once every plugin is ready, installs them in place of any local copies and
    /// loads the experience from the files the server sent — or hot-reloads the plugin that has a new version
    /// and goes on to the next.
    async fn continue_fetch(&mut self) -> Result<(), ClientError> {
        loop {
            if self.fetching.is_none() && !self.start_next_update().await? {
                return Ok(());
            }
            let Some((fetch, _)) = &mut self.fetching else { return Ok(()) };
            for request in fetch.requests() {
                self.transport.send(Channel::Reliable, encode(&request));
            }
            if !fetch.is_done() {
                return Ok(());
            }
            let (fetch, purpose) = self.fetching.take().expect("a fetch is in progress");
            self.fetched.extend(fetch.downloaded().iter().cloned());
            match purpose {
                Purpose::Join { name, content } => {
                    let sync = self.mod_sync.as_ref().expect("fetching needs mod sync");
                    let features = self.manager.features().clone();
                    for admitted in fetch.into_ready().map_err(ClientError::ModSync)? {
                        let failed = |e: crate::feature::FeatureError| ClientError::ModSync(e.to_string());
                        if features.manifest(admitted.name()).is_some() {
                            features.uninstall(admitted.name()).await.map_err(failed)?;
                        }
                        features.install(admitted).map_err(failed)?;
                    }
                    let path = store_experience(&sync.cache_dir, &content).map_err(ClientError::ModSync)?;
                    let failed = |cause: String| ClientError::Experience { name: name.clone(), cause };
                    self.manager.load(&path).await.map_err(|e| failed(e.to_string()))?;
                }
                Purpose::Update { plugin } => {
                    // A failed reload leaves the old version running (or the plugin quarantined), as on the
                    // server; play goes on.
                    let reloaded = match fetch.into_ready() {
                        Ok(ready) => self.reload(&plugin, ready).await,
                        Err(e) => Err(e),
                    };
                    if let Err(e) = reloaded {
                        tracing::warn!("the server's new version of {plugin} could not be loaded here: {e}");
                    }
                }
            }
        }
    }

    /// Hot-reloads `plugin` from the folder fetched for it (or, when this client's own copy already is the new
    /// version, from its own folder), keeping its state.
    async fn reload(&mut self, plugin: &str, ready: Vec<crate::feature::Admitted>) -> Result<(), String> {
        if !self.manager.live_features().iter().any(|f| f == plugin) {
            return Ok(());
        }
        let new = match ready.into_iter().next() {
            Some(fetched) if fetched.name() == plugin => {
                crate::experience::NewVersion::prepare_admitted(self.manager.features(), fetched)
                    .await
                    .map_err(|e| e.to_string())?
            }
            Some(other) => return Err(format!("the server sent plugin {:?} as its new version", other.name())),
            None => crate::experience::NewVersion::prepare(self.manager.features(), plugin)
                .await
                .map_err(|e| e.to_string())?,
        };
        self.manager.apply_new_version(new).await.map_err(|e| e.to_string())?;
        Ok(())
    }

    /// Applies the updates held during a fetch, once it is over; `false` once play has ended.
    async fn apply_held(&mut self) -> Result<bool, ClientError> {
        while self.fetching.is_none() {
            let Some((seq, update)) = self.held.pop_front() else { break };
            if !self.apply(seq, update).await? {
                return Ok(false);
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

    /// Once play has ended: resolves when the server has been told why (boundedly), for a process about to exit.
    pub async fn closed(&mut self) {
        self.transport.closed().await;
    }

    /// The packages fetched from the server (not found here or in the cache), in the order they arrived.
    pub fn fetched(&self) -> &[crate::package::PackageSummary] {
        &self.fetched
    }

    /// Gives back the world's manager (for reports once play has ended).
    pub fn into_manager(self) -> ExperienceManager {
        self.manager
    }
}
