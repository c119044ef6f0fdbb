//! The host and its world as a Bevy resource: started standalone, as a dedicated server or as a client.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use bevy_ecs::prelude::*;
use gamefeature_host::config::HostConfig;
use gamefeature_host::experience::ManagerOptions;
use gamefeature_host::game_loop::{GameLoop, Played, Step};
use gamefeature_host::net::transport::quic::{QuicClient, QuicServer};
use gamefeature_host::net::transport::trust::ServerIdentity;
use gamefeature_host::net::{GameClient, GameServer, ServerOptions};
use gamefeature_host::runtime::RuntimeConfig;
use gamefeature_host::world::{self, ActorId, NetMode, World};
use gamefeature_host::{Session, SessionOptions};

use crate::settings::{HostSettings, Join};

/// How long a client waits for its server to answer.
const CONNECT_WAIT: Duration = Duration::from_secs(10);

/// The host and its world, as a Bevy resource. Systems reach the world through [`with_world`](Self::with_world)
/// and the loop through [`with_loop`](Self::with_loop).
#[derive(Resource)]
pub struct GameFeatures {
    pub(crate) host: Mutex<Host>,
    timeline: gamefeature_host::Timeline,
}

/// The host's parts, in the order they must drop: the loop before the session and the runtime its work runs on.
pub(crate) struct Host {
    pub(crate) game: Option<GameLoop>,
    pub(crate) session: Session,
    pub(crate) tokio: tokio::runtime::Runtime,
    pub(crate) actors: HashMap<Entity, ActorId>,
    pub(crate) entities: HashMap<ActorId, Entity>,
    pub(crate) last_step: Option<Step>,
    /// Failures of the world already shown in the log.
    pub(crate) failures_shown: usize,
    /// Where a server listens.
    server_address: Option<SocketAddr>,
}

impl Drop for Host {
    fn drop(&mut self) {
        // Play ends as it would in any game: plugins deactivate and leave nothing behind.
        if let Some(game) = self.game.take() {
            if let Err(e) = game.end("the app is closing", Duration::ZERO, &mut ()) {
                tracing::warn!("ending play: {e}");
            }
        }
    }
}

impl GameFeatures {
    /// Starts the host: finds and compiles (or reads from the cache) the plugins, and loads the experience into a
    /// standalone world with the game's classes.
    pub fn start(settings: HostSettings) -> Result<GameFeatures, gamefeature_host::Error> {
        Self::launch(settings, NetMode::Standalone, |mut manager, experience, tokio| {
            tokio.block_on(manager.load(experience))?;
            Ok((Played::Standalone(Box::new(manager)), None))
        })
    }

    /// Starts the host as a dedicated server: the experience loads into the server's world, and clients join it
    /// over QUIC at `listen` (port 0: any free port, see [`server_address`](Self::server_address)), the server
    /// proving itself with `identity`. Each client's player arrives as entities of their own
    /// ([`SpawnedInWorld`]); what the world holds replicates to them.
    pub fn start_server(
        settings: HostSettings,
        listen: SocketAddr,
        identity: ServerIdentity,
        options: ServerOptions,
    ) -> Result<GameFeatures, gamefeature_host::Error> {
        Self::launch(settings, NetMode::DedicatedServer, |manager, experience, tokio| {
            let transport = QuicServer::bind(listen, identity, tokio.handle())
                .map_err(|e| gamefeature_host::Error::Host(format!("listening on {listen}: {e}")))?;
            let address = transport
                .local_addr()
                .map_err(|e| gamefeature_host::Error::Host(format!("the address the server listens on: {e}")))?;
            let mut server = GameServer::new(manager, Box::new(transport), options);
            tokio.block_on(server.load(experience))?;
            Ok((Played::Server(Box::new(server)), Some(address)))
        })
    }

    /// Starts the host as a client of the server `join` names: its world is the server's copy, its experience
    /// the one the server plays (loaded as it joins, its plugins fetched when `join` allows mod sync). Actors
    /// arrive as entities of their own ([`SpawnedInWorld`]), with the bridged components that replicate.
    pub fn start_client(settings: HostSettings, join: Join) -> Result<GameFeatures, gamefeature_host::Error> {
        Self::launch(settings, NetMode::Client, |manager, _, tokio| {
            let transport = tokio
                .block_on(QuicClient::connect(join.server, &join.trust, CONNECT_WAIT))
                .map_err(|e| gamefeature_host::Error::Host(e.to_string()))?;
            let mut client = GameClient::connect(manager, Box::new(transport), join.token, &join.experiences);
            if let Some(sync) = join.mod_sync {
                client = client.with_mod_sync(sync);
            }
            Ok((Played::Client(Box::new(client)), None))
        })
    }

    /// Where a server started with [`start_server`](Self::start_server) listens.
    pub fn server_address(&self) -> Option<SocketAddr> {
        self.lock().server_address
    }

    /// The session, its world (in `net_mode`, with the game's classes, its comings and events kept for the
    /// bridge), and what `play` makes of them.
    fn launch(
        settings: HostSettings,
        net_mode: NetMode,
        play: impl FnOnce(
            gamefeature_host::ExperienceManager,
            &std::path::Path,
            &tokio::runtime::Runtime,
        ) -> Result<(Played, Option<SocketAddr>), gamefeature_host::Error>,
    ) -> Result<GameFeatures, gamefeature_host::Error> {
        let config = settings.config.as_deref().map(HostConfig::from_file).transpose()?;
        let mut options = SessionOptions {
            plugin_dirs: settings.plugin_dirs,
            runtime: RuntimeConfig { cache_dir: settings.cache_dir, ..RuntimeConfig::default() },
            manager: ManagerOptions { plugin_log_level: settings.plugin_log_level, ..ManagerOptions::default() },
            ..SessionOptions::default()
        };
        if let Some(config) = config {
            options.manager.grants = config.grants;
            options.manager.data_dir = config.data_dir;
            options.trust = config.trust;
        }
        if let Some(grants) = settings.grants {
            options.manager.grants = grants;
        }
        if let Some(dir) = settings.data_dir {
            options.manager.data_dir = Some(dir);
        }
        if let Some(trust) = settings.trust {
            options.trust = trust;
        }
        let session = Session::new(options)?;
        let tokio = tokio::runtime::Runtime::new()
            .map_err(|e| gamefeature_host::Error::Host(format!("starting the async runtime: {e}")))?;
        let mut manager = session.create_world(net_mode.as_str(), net_mode);
        manager.with_world(|w| {
            w.hear_events(true);
            w.follow_actors(true);
            settings.classes.iter().try_for_each(|(class, parent)| w.declare_class(class, parent))
        })?;
        let (played, server_address) = play(manager, &settings.experience, &tokio)?;
        for failure in &played.manager().report().failures {
            tracing::warn!("{failure}");
        }
        let failures_at_load = played.manager().report().failures.len();
        let mut game = GameLoop::new(played, tokio.handle().clone());
        if settings.watch {
            let folders = game.plugin_folders();
            game.watch(&folders).map_err(|e| gamefeature_host::Error::Host(format!("watching plugin folders: {e}")))?;
        }
        let timeline = session.timeline().clone();
        let host = Host {
            game: Some(game),
            session,
            tokio,
            actors: HashMap::new(),
            entities: HashMap::new(),
            last_step: None,
            failures_shown: failures_at_load,
            server_address,
        };
        Ok(GameFeatures { host: Mutex::new(host), timeline })
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Host> {
        self.host.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the world, then delivers what it caused to the plugins. A client's world is its server's
    /// copy, not the game's to change: `None` there.
    pub fn with_world<R>(&self, f: impl FnOnce(&mut World) -> R) -> Option<R> {
        self.with_loop(|game| game.with_world(f))
    }

    /// Runs `f` on the game loop: reload a plugin (`reload`), watch plugin folders (`watch`), carry out a console
    /// command (`execute`), read the manager's report.
    pub fn with_loop<R>(&self, f: impl FnOnce(&mut GameLoop) -> R) -> R {
        let mut host = self.lock();
        f(host.game.as_mut().expect("the loop runs until the app closes"))
    }

    /// The timeline: every call into a plugin, what each said, every failure (for a game's debug views).
    pub fn timeline(&self) -> &gamefeature_host::Timeline {
        &self.timeline
    }

    /// The actor an entity is, if the bridge spawned it.
    pub fn actor_of(&self, entity: Entity) -> Option<ActorId> {
        self.lock().actors.get(&entity).copied()
    }

    /// Whether the world still has `actor`.
    pub fn has_actor(&self, actor: ActorId) -> bool {
        self.with_loop(|game| world::lock(game.manager().world()).actor(actor).is_ok())
    }

    /// What the last frame did: new plugin versions applied (or refused), files changed in watched folders.
    pub fn take_last_step(&self) -> Option<Step> {
        self.lock().last_step.take()
    }
}
