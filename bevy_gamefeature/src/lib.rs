//! Game-feature plugins — sandboxed WebAssembly components, in any language — in a Bevy app.
//!
//! The host's world lives beside Bevy's: the app's entities marked [`Actor`] are the world's actors (a [`Player`]
//! is a pawn with its controller and player state, as Unreal's game mode spawns them), despawning one ends its
//! actor, and the world steps in `FixedUpdate` through the library's [`GameLoop`]. Bevy components bridged with
//! [`GameFeatureApp::bridge_component`] are the world's component classes, their fields its properties (through
//! `bevy_reflect`): what a Bevy system writes, plugins read and hear; what plugins write (or add) appears on the
//! entity. Events go both ways as messages: [`ToActor`] sends one to an actor's plugins, [`FromPlugins`] carries
//! what plugins sent to actors. [`FeatureCommand`] messages reload, activate, deactivate and install features
//! while the app runs, each answered by a [`FeatureOutcome`]; [`HostSettings::watch`] reloads a plugin rebuilt
//! on disk. What fails (a plugin quarantined) is in the log.
//!
//! ```no_run
//! use bevy_app::App;
//! use bevy_gamefeature::{Actor, GameFeatureApp, GameFeaturePlugin, GameFeatures, HostSettings, Player};
//!
//! #[derive(bevy_ecs::component::Component, bevy_reflect::Reflect, Default)]
//! struct Score {
//!     score: i64,
//! }
//!
//! let settings = HostSettings::new("plugins", "experiences/arena.toml").class("Hero", "Character");
//! let mut app = App::new();
//! app.insert_resource(GameFeatures::start(settings).expect("the experience loads"))
//!     .add_plugins(GameFeaturePlugin)
//!     .bridge_component::<Score>("ScoreComponent");
//! app.world_mut().spawn((Actor::new("Hero"), Player));
//! ```

// A Bevy system's parameters are queries whose types clippy calls complex; Bevy's own crates allow it too.
#![allow(clippy::type_complexity)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use bevy_app::{App, FixedUpdate, Plugin};
use bevy_ecs::prelude::*;
use bevy_reflect::structs::Struct;
use bevy_reflect::PartialReflect;
use bevy_time::Time;
use gamefeature_host::config::HostConfig;
use gamefeature_host::experience::ManagerOptions;
use gamefeature_host::feature::GrantPolicy;
use gamefeature_host::game_loop::{GameLoop, Played, Step};
use gamefeature_host::live::Command;
use gamefeature_host::net::mod_sync::ModSync;
use gamefeature_host::net::transport::quic::{QuicClient, QuicServer};
use gamefeature_host::net::transport::trust::{ServerIdentity, ServerTrust};
use gamefeature_host::net::{GameClient, GameServer, ServerOptions};
use gamefeature_host::package::TrustPolicy;
use gamefeature_host::runtime::RuntimeConfig;
use gamefeature_host::world::{self, ActorId, Coming, ComponentOrigin, NetMode, Value, World};
use gamefeature_host::{game, Session, SessionOptions};

/// An entity that is one of the world's actors, of this class (one the game or the experience declared, or a
/// built-in one: `Actor`, `Pawn`, `Character`...).
#[derive(Component, Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// The actor's class.
    pub class: String,
}

impl Actor {
    /// An actor of `class`.
    pub fn new(class: impl Into<String>) -> Self {
        Actor { class: class.into() }
    }
}

/// On an [`Actor`]: the entity is a player's pawn. The bridge spawns the player's controller and player state
/// (as entities of their own, in [`PlayerActors`]), the controller possesses the pawn, then the player state
/// arrives, as Unreal's do.
#[derive(Component, Debug, Clone, Copy, Default)]
pub struct Player;

/// A player's other actors, each an entity of its own (what plugins add to them appears there).
#[derive(Component, Debug, Clone, Copy)]
pub struct PlayerActors {
    /// The player's controller.
    pub controller: Entity,
    /// The player's state (where a score keeper keeps scores, say).
    pub player_state: Entity,
}

/// The actor an entity is, once the bridge spawned it in the world.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActorHandle(pub ActorId);

/// On the entity of an actor the game did not spawn: a plugin spawned it (or, on a client, the server sent it).
/// The bridge spawns the entity, with its [`Actor`] and [`ActorHandle`], and despawns it when the actor leaves
/// the world; the game may despawn it to destroy the actor.
#[derive(Component, Debug, Clone, Copy, Default)]
pub struct SpawnedInWorld;

/// The init-state features of an actor (Lyra's `PawnExtension` and `Hero`, say) and the state each is in, in
/// the order they were registered; the bridge keeps it on every actor entity that has any, and takes it away when
/// the last one goes.
#[derive(Component, Debug, Clone, Default, PartialEq, Eq)]
pub struct InitStates(pub Vec<(String, String)>);

impl InitStates {
    /// The state `feature` is in, when the actor has it.
    pub fn of(&self, feature: &str) -> Option<&str> {
        self.0.iter().find(|(f, _)| f == feature).map(|(_, state)| state.as_str())
    }

    /// Whether every feature is in `state` (Lyra's `InitState.GameplayReady`, say).
    pub fn all_in(&self, state: &str) -> bool {
        self.0.iter().all(|(_, s)| s == state)
    }
}

/// On an [`Actor`] the world refused (an unknown class, say): why. It is not asked again.
#[derive(Component, Debug, Clone)]
pub struct NotAnActor(pub String);

/// A custom event for an actor's plugins (their extension handlers hear it, as Unreal's
/// `SendGameFrameworkComponentExtensionEvent`).
#[derive(Message, Debug, Clone)]
pub struct ToActor {
    /// The actor's entity.
    pub entity: Entity,
    /// The event's name.
    pub event: String,
}

/// A custom event plugins sent to an actor, heard by the game.
#[derive(Message, Debug, Clone)]
pub struct FromPlugins {
    /// The actor's entity, when it is one (plugins may send events to actors the game has no entity for).
    pub entity: Option<Entity>,
    /// The actor.
    pub actor: ActorId,
    /// The event's name.
    pub event: String,
}

/// Something to do to the world's features while the game runs, carried out between two frames.
#[derive(Message, Debug, Clone, PartialEq, Eq)]
pub enum FeatureCommand {
    /// Compiles the plugin's new version off the frame, then swaps it in between frames, keeping its state.
    Reload(String),
    /// Activates an installed plugin in the world.
    Activate(String),
    /// Deactivates a plugin: it leaves nothing behind.
    Deactivate(String),
    /// Installs the plugin folder at this path (activate it to play it).
    Install(PathBuf),
}

/// What became of a [`FeatureCommand`] (a reload's comes once its new version compiled and was swapped in, or
/// was refused).
#[derive(Message, Debug, Clone)]
pub struct FeatureOutcome {
    /// The command.
    pub command: FeatureCommand,
    /// What a console would show, or why it was refused (the world is unchanged then).
    pub outcome: Result<String, gamefeature_host::Error>,
}

/// Where the host finds its plugins and what the world plays.
#[derive(Debug, Clone)]
pub struct HostSettings {
    /// The folders plugins are installed in (each plugin a folder with its plugin.toml and component).
    pub plugin_dirs: Vec<PathBuf>,
    /// The experience the world loads.
    pub experience: PathBuf,
    /// The host's configuration (a `gfhost.toml`: what each plugin is granted, its limits); `None` grants plugins
    /// nothing beyond their sandbox.
    pub config: Option<PathBuf>,
    /// Where compiled plugins are cached between runs; `None` compiles them every time.
    pub cache_dir: Option<PathBuf>,
    /// The game's own classes, each with its parent, declared before the experience loads.
    pub classes: Vec<(String, String)>,
    /// Reload a plugin whose component or manifest changes on disk (a modder's rebuild), as `gfhost play --watch`.
    pub watch: bool,
    /// What plugins are granted, over the configuration's `[grants]`: `GrantPolicy::Declared` grants the game's
    /// own (reviewed) plugins what their manifests declare.
    pub grants: Option<GrantPolicy>,
    /// Where plugins granted `fs.data` keep their files, over the configuration's `data-dir`.
    pub data_dir: Option<PathBuf>,
    /// The publishers whose signed packages are trusted, over the configuration's `[trust]`.
    pub trust: Option<TrustPolicy>,
}

impl HostSettings {
    /// Plugins from `plugin_dir`, playing `experience`.
    pub fn new(plugin_dir: impl Into<PathBuf>, experience: impl Into<PathBuf>) -> Self {
        HostSettings {
            plugin_dirs: vec![plugin_dir.into()],
            experience: experience.into(),
            config: None,
            cache_dir: None,
            classes: Vec::new(),
            watch: false,
            grants: None,
            data_dir: None,
            trust: None,
        }
    }

    /// The publishers trusted, over the configuration's.
    pub fn trust(mut self, trust: TrustPolicy) -> Self {
        self.trust = Some(trust);
        self
    }

    /// Declares one of the game's classes: `class`, a subclass of `parent`.
    pub fn class(mut self, class: impl Into<String>, parent: impl Into<String>) -> Self {
        self.classes.push((class.into(), parent.into()));
        self
    }

    /// The host's configuration file.
    pub fn config(mut self, file: impl Into<PathBuf>) -> Self {
        self.config = Some(file.into());
        self
    }

    /// What plugins are granted, over the configuration's.
    pub fn grants(mut self, grants: GrantPolicy) -> Self {
        self.grants = Some(grants);
        self
    }

    /// Where plugins keep their data, over the configuration's.
    pub fn data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.data_dir = Some(dir.into());
        self
    }

    /// Reloads plugins whose files change on disk.
    pub fn watch(mut self) -> Self {
        self.watch = true;
        self
    }

    /// A compile cache.
    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache_dir = Some(dir.into());
        self
    }
}

/// How a client joins its server.
#[derive(Debug, Clone)]
pub struct Join {
    /// The server's address.
    pub server: SocketAddr,
    /// How the server's certificate is checked: pinned, or against authorities.
    pub trust: ServerTrust,
    /// The ticket the server asks for, when it asks for one.
    pub token: Option<String>,
    /// Where the experiences the server names are read from (or, with mod sync, kept once fetched).
    pub experiences: PathBuf,
    /// Fetch the plugins and experience the server plays and this client lacks, as this allows.
    pub mod_sync: Option<ModSync>,
}

/// How long a client waits for its server to answer.
const CONNECT_WAIT: Duration = Duration::from_secs(10);

/// The host and its world, as a Bevy resource. Systems reach the world through [`with_world`](Self::with_world)
/// and the loop through [`with_loop`](Self::with_loop).
#[derive(Resource)]
pub struct GameFeatures {
    host: Mutex<Host>,
    timeline: gamefeature_host::Timeline,
}

/// The host's parts, in the order they must drop: the loop before the session and the runtime its work runs on.
struct Host {
    game: Option<GameLoop>,
    session: Session,
    _tokio: tokio::runtime::Runtime,
    actors: HashMap<Entity, ActorId>,
    entities: HashMap<ActorId, Entity>,
    last_step: Option<Step>,
    /// Failures of the world already shown in the log.
    failures_shown: usize,
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
            manager: ManagerOptions::default(),
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
            _tokio: tokio,
            actors: HashMap::new(),
            entities: HashMap::new(),
            last_step: None,
            failures_shown: failures_at_load,
            server_address,
        };
        Ok(GameFeatures { host: Mutex::new(host), timeline })
    }

    fn lock(&self) -> MutexGuard<'_, Host> {
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

/// Adds the bridge's systems: actors spawned and despawned, events both ways, and the world stepped in
/// `FixedUpdate` (set its rate with `Time::<Fixed>::from_hz`). Insert a [`GameFeatures`] first.
pub struct GameFeaturePlugin;

/// The bridge's steps in `FixedUpdate`, in this order: the game's changes reach the world, the world steps, the
/// plugins' changes reach the game.
#[derive(SystemSet, Debug, Clone, PartialEq, Eq, Hash)]
pub enum BridgeSet {
    /// Actors spawned and despawned, bridged components written, events sent to actors.
    ToWorld,
    /// The world's frame.
    Step,
    /// What plugins wrote, added and sent, onto the entities.
    FromWorld,
}

impl Plugin for GameFeaturePlugin {
    fn build(&self, app: &mut App) {
        app.add_message::<ToActor>()
            .add_message::<FromPlugins>()
            .add_message::<FeatureCommand>()
            .add_message::<FeatureOutcome>()
            .init_resource::<Bridged>()
            .init_resource::<ChangedActors>()
            .configure_sets(FixedUpdate, (BridgeSet::ToWorld, BridgeSet::Step, BridgeSet::FromWorld).chain())
            .add_systems(FixedUpdate, (spawn_actors, end_despawned, send_to_actors).chain().in_set(BridgeSet::ToWorld))
            .add_systems(FixedUpdate, (carry_out_commands, step).chain().in_set(BridgeSet::Step))
            .add_systems(
                FixedUpdate,
                (mirror_world_actors, (hear_plugins, read_init_states)).chain().in_set(BridgeSet::FromWorld),
            );
    }
}

/// The component classes bridged, for the actors spawned after: each gets the game's component of the class.
#[derive(Resource, Default)]
struct Bridged {
    classes: Vec<(&'static str, fn(&EntityRef<'_>) -> bool)>,
}

/// Bridging Bevy components to the world's component classes.
pub trait GameFeatureApp {
    /// Bridges `T` to the component class `class`: its fields (integers, floats, booleans, strings) are the
    /// component's properties. An actor spawned with `T` has the component, and what a system writes to `T`
    /// reaches the world (and the plugins watching); what plugins write appears in `T`, and a component of the
    /// class a plugin adds to an actor appears on its entity as `T`.
    fn bridge_component<T>(&mut self, class: &'static str) -> &mut Self
    where
        T: Component<Mutability = bevy_ecs::component::Mutable> + Struct + Default;
}

impl GameFeatureApp for App {
    fn bridge_component<T>(&mut self, class: &'static str) -> &mut Self
    where
        T: Component<Mutability = bevy_ecs::component::Mutable> + Struct + Default,
    {
        self.world_mut().resource_mut::<Bridged>().classes.push((class, |entity| entity.contains::<T>()));
        self.add_systems(FixedUpdate, write_bridged::<T>(class).after(end_despawned).in_set(BridgeSet::ToWorld))
            .add_systems(FixedUpdate, read_bridged::<T>(class).after(mirror_world_actors).in_set(BridgeSet::FromWorld))
    }
}

/// Spawns the world's actor of each new [`Actor`] entity, with the bridged components it has. The players among
/// them arrive as `gfhost run`'s (and Unreal's) do: every new pawn first, then each controller possesses its pawn,
/// then each player state replicates, the plugins hearing each step before the next.
fn spawn_actors(
    mut commands: Commands<'_, '_>,
    new: Query<'_, '_, (EntityRef<'_>, &Actor, Has<Player>), (Without<ActorHandle>, Without<NotAnActor>)>,
    features: Res<'_, GameFeatures>,
    bridged: Res<'_, Bridged>,
) {
    if new.is_empty() {
        return;
    }
    let mut players = Vec::new();
    // Every new actor in one go (the plugins then hear of them together), each with its own outcome.
    let outcomes: Option<Vec<(Entity, Result<(ActorId, Option<game::Player>), world::WorldError>)>> = features
        .with_world(|w| {
            let spawn = |w: &mut World, entity_ref: &EntityRef<'_>, actor: &Actor, is_player: bool| {
                let (id, player) = match is_player {
                    true => {
                        let player = game::spawn_player(w, &actor.class)?;
                        (player.pawn, Some(player))
                    }
                    false => (w.spawn(&actor.class)?, None),
                };
                for (class, has) in &bridged.classes {
                    if has(entity_ref) {
                        w.attach_native_component(id, class)?;
                    }
                }
                Ok((id, player))
            };
            new.iter()
                .map(|(entity_ref, actor, is_player)| (entity_ref.id(), spawn(w, &entity_ref, actor, is_player)))
                .collect()
        });
    let Some(outcomes) = outcomes else {
        for (entity_ref, ..) in &new {
            let why = "a client's world is its server's copy: the game spawns no actor in it";
            commands.entity(entity_ref.id()).insert(NotAnActor(why.to_string()));
        }
        return;
    };
    for (entity, spawned) in outcomes {
        let (id, player) = match spawned {
            Ok(spawned) => spawned,
            Err(e) => {
                tracing::warn!("entity {entity} is not an actor: {e}");
                commands.entity(entity).insert(NotAnActor(e.to_string()));
                continue;
            }
        };
        commands.entity(entity).insert(ActorHandle(id));
        let mut host = features.lock();
        host.actors.insert(entity, id);
        host.entities.insert(id, entity);
        if let Some(player) = player {
            let controller = commands.spawn((Actor::new("PlayerController"), ActorHandle(player.controller))).id();
            let state = commands.spawn((Actor::new("PlayerState"), ActorHandle(player.player_state))).id();
            for (id, spawned) in [(player.controller, controller), (player.player_state, state)] {
                host.actors.insert(spawned, id);
                host.entities.insert(id, spawned);
            }
            commands.entity(entity).insert(PlayerActors { controller, player_state: state });
            players.push(player);
        }
    }
    let steps: [fn(&mut World, &game::Player) -> Result<(), world::WorldError>; 2] =
        [game::possess, game::replicate_player_state];
    for arrive in steps.into_iter().filter(|_| !players.is_empty()) {
        features.with_world(|w| {
            for player in &players {
                if let Err(e) = arrive(w, player) {
                    tracing::warn!("player of pawn {}: {e}", player.pawn);
                }
            }
        });
    }
}

/// Ends the actors whose entities were despawned (or lost their [`ActorHandle`]).
fn end_despawned(mut gone: RemovedComponents<'_, '_, ActorHandle>, features: Res<'_, GameFeatures>) {
    for entity in gone.read() {
        let Some(actor) = ({
            let mut host = features.lock();
            let actor = host.actors.remove(&entity);
            if let Some(actor) = actor {
                host.entities.remove(&actor);
            }
            actor
        }) else {
            continue;
        };
        if let Some(Err(e)) = features.with_world(|w| w.destroy(actor)) {
            tracing::debug!("actor {actor} of entity {entity} was gone already: {e}");
        }
    }
}

/// Sends the game's events to the actors' plugins.
fn send_to_actors(mut sent: MessageReader<'_, '_, ToActor>, features: Res<'_, GameFeatures>) {
    for ToActor { entity, event } in sent.read() {
        let Some(actor) = features.actor_of(*entity) else {
            tracing::warn!("event {event:?} for entity {entity}, which is no actor");
            continue;
        };
        match features.with_world(|w| w.send_extension_event(actor, event)) {
            Some(Ok(())) => {}
            Some(Err(e)) => tracing::warn!("event {event:?} for entity {entity}: {e}"),
            None => tracing::warn!("event {event:?} for entity {entity}: a client's world is its server's copy"),
        }
    }
}

/// Carries out the game's feature commands between frames (a reload starts compiling; its outcome comes with
/// the frame that swaps it in).
fn carry_out_commands(
    mut commands: MessageReader<'_, '_, FeatureCommand>,
    features: Res<'_, GameFeatures>,
    mut outcomes: MessageWriter<'_, FeatureOutcome>,
) {
    for command in commands.read() {
        let mut host = features.lock();
        let Host { game, session, .. } = &mut *host;
        let game = game.as_mut().expect("the loop runs until the app closes");
        let (console, line) = match command {
            FeatureCommand::Reload(plugin) => {
                game.reload(plugin);
                continue;
            }
            FeatureCommand::Activate(plugin) => (Command::Activate(plugin.clone()), format!("activate {plugin}")),
            FeatureCommand::Deactivate(plugin) => (Command::Deactivate(plugin.clone()), format!("deactivate {plugin}")),
            FeatureCommand::Install(dir) => (Command::Install(dir.clone()), format!("install {}", dir.display())),
        };
        let outcome = game.execute(session, &console, &line);
        match &outcome {
            Ok(text) => tracing::info!("{text}"),
            Err(e) => tracing::warn!("{line}: {e}"),
        }
        outcomes.write(FeatureOutcome { command: command.clone(), outcome });
    }
}

/// The world's frame, `FixedUpdate`'s time step after the last; new plugin versions applied before it, and
/// what failed in it (a plugin quarantined, say) in the log.
fn step(time: Res<'_, Time>, features: Res<'_, GameFeatures>, mut outcomes: MessageWriter<'_, FeatureOutcome>) {
    let mut host = features.lock();
    let game = host.game.as_mut().expect("the loop runs until the app closes");
    let step = game.step(time.delta());
    let failures: Vec<String> = game.manager().report().failures.iter().map(|f| f.to_string()).collect();
    for failure in failures.iter().skip(host.failures_shown) {
        tracing::warn!("{failure}");
    }
    host.failures_shown = failures.len();
    for reload in &step.reloads {
        match &reload.outcome {
            Ok(text) => tracing::info!("{text}"),
            Err(e) => tracing::warn!("{}: {e}", reload.plugin),
        }
        let command = FeatureCommand::Reload(reload.plugin.clone());
        outcomes.write(FeatureOutcome { command, outcome: reload.outcome.clone() });
    }
    host.last_step = Some(step);
}

/// The entities of the actors whose components or properties changed in the last frame: the ones the bridge reads
/// back into their Bevy components.
#[derive(Resource, Default)]
struct ChangedActors(Vec<Entity>);

/// Gives each actor the game did not spawn (a plugin's, a server's replica) an entity of its own, and despawns
/// the entities of actors that left the world; notes which entities' actors changed.
fn mirror_world_actors(
    mut commands: Commands<'_, '_>,
    features: Res<'_, GameFeatures>,
    mut changed: ResMut<'_, ChangedActors>,
) {
    let mut host = features.lock();
    let Host { game, actors, entities, .. } = &mut *host;
    let game = game.as_mut().expect("the loop runs until the app closes");
    let mut w = world::lock(game.manager().world());
    changed.0.clear();
    for coming in w.take_actor_comings() {
        match coming {
            Coming::Spawned(actor) if !entities.contains_key(&actor) => {
                let Ok(found) = w.actor(actor) else { continue };
                let entity = commands.spawn((Actor::new(found.class()), ActorHandle(actor), SpawnedInWorld)).id();
                actors.insert(entity, actor);
                entities.insert(actor, entity);
            }
            Coming::Spawned(_) => {}
            Coming::Destroyed(actor) => {
                if let Some(entity) = entities.remove(&actor) {
                    actors.remove(&entity);
                    commands.entity(entity).despawn();
                }
            }
        }
    }
    changed.0.extend(w.take_changed_actors().into_iter().filter_map(|actor| entities.get(&actor).copied()));
}

/// The init states of the actors that changed, onto their entities.
fn read_init_states(
    mut commands: Commands<'_, '_>,
    mut entities: Query<'_, '_, (&ActorHandle, Option<&mut InitStates>)>,
    changed: Res<'_, ChangedActors>,
    features: Res<'_, GameFeatures>,
) {
    if changed.0.is_empty() {
        return;
    }
    features.with_loop(|game| {
        let w = world::lock(game.manager().world());
        for &entity in &changed.0 {
            let Ok((ActorHandle(actor), existing)) = entities.get_mut(entity) else { continue };
            let states: Vec<(String, String)> = w
                .feature_states(*actor)
                .map(|(feature, state)| {
                    (w.name_text(feature).to_string(), w.state_text(state).unwrap_or("").to_string())
                })
                .collect();
            match (states.is_empty(), existing) {
                (true, Some(_)) => {
                    commands.entity(entity).remove::<InitStates>();
                }
                (true, None) => {}
                (false, Some(mut existing)) => {
                    if existing.0 != states {
                        existing.0 = states;
                    }
                }
                (false, None) => {
                    commands.entity(entity).insert(InitStates(states));
                }
            }
        }
    });
}

/// Hands the game what plugins sent to actors.
fn hear_plugins(features: Res<'_, GameFeatures>, mut heard: MessageWriter<'_, FromPlugins>) {
    let (events, dropped) = features.with_loop(|game| world::lock(game.manager().world()).take_heard_events());
    if dropped > 0 {
        tracing::warn!("{dropped} event(s) plugins sent were dropped before the game took them");
    }
    let host = features.lock();
    for event in events {
        let entity = host.entities.get(&event.actor).copied();
        heard.write(FromPlugins { entity, actor: event.actor, event: event.event });
    }
}

/// What the game wrote to `T` since the last frame, into the world's component `class`.
fn write_bridged<T>(
    class: &'static str,
) -> impl FnMut(Query<'_, '_, (&ActorHandle, Ref<'_, T>), Changed<T>>, Res<'_, GameFeatures>)
where
    T: Component + Struct,
{
    move |changed, features| {
        if changed.is_empty() {
            return;
        }
        // Every change in one go: the plugins hear of them together, after.
        features.with_world(|w| {
            for (ActorHandle(actor), component) in &changed {
                let native =
                    w.actor(*actor).ok().and_then(|a| a.component(class)).map(|c| c.origin == ComponentOrigin::Native);
                match native {
                    // A component the bridge just put on the entity came from the world (a plugin added it): there
                    // is nothing of the game's to write back.
                    Some(false) if component.is_added() => continue,
                    // The game gave an actor the component after it spawned: the world's actor gets it too.
                    None if component.is_added() => {
                        if let Err(e) = w.attach_native_component(*actor, class) {
                            tracing::warn!("{class} of actor {actor}: {e}");
                            continue;
                        }
                    }
                    _ => {}
                }
                for (property, value) in fields(&*component) {
                    let unchanged =
                        matches!(w.property(*actor, class, property), Ok(Some(old)) if old.is_identical(&value));
                    if unchanged {
                        continue;
                    }
                    if let Err(e) = w.set_property(*actor, class, property, value) {
                        tracing::warn!("{class}.{property} of actor {actor}: {e}");
                    }
                }
            }
        });
    }
}

/// What plugins wrote to the world's component `class`, into `T` on the entities of the actors that changed in
/// the frame: added where a plugin added the component, removed where it was taken away.
fn read_bridged<T>(
    class: &'static str,
) -> impl FnMut(Commands<'_, '_>, Query<'_, '_, (&ActorHandle, Option<&mut T>)>, Res<'_, ChangedActors>, Res<'_, GameFeatures>)
where
    T: Component<Mutability = bevy_ecs::component::Mutable> + Struct + Default,
{
    move |mut commands, mut actors, changed, features| {
        if changed.0.is_empty() {
            return;
        }
        let defaults = T::default();
        features.with_loop(|game| {
            let w = world::lock(game.manager().world());
            for &entity in &changed.0 {
                let Ok((ActorHandle(actor), existing)) = actors.get_mut(entity) else { continue };
                let Ok(actor) = w.actor(*actor) else { continue };
                match (actor.component(class), existing) {
                    (Some(component), Some(mut bevy)) => {
                        // Written without marking it changed: what plugins wrote is not written back to them.
                        let bevy = bevy.bypass_change_detection();
                        for (property, value) in component.properties.iter() {
                            set_field(bevy, property, value);
                        }
                        // A property the world no longer holds (what a deactivated plugin wrote goes with it) is the
                        // component's default again.
                        reset_missing_fields(bevy, &defaults, |name| component.properties.contains_key(name));
                    }
                    (Some(component), None) => {
                        let mut bevy = T::default();
                        for (property, value) in component.properties.iter() {
                            set_field(&mut bevy, property, value);
                        }
                        commands.entity(entity).insert(bevy);
                    }
                    (None, Some(_)) => {
                        commands.entity(entity).remove::<T>();
                    }
                    (None, None) => {}
                }
            }
        });
    }
}

/// Sets each field of `component` the world holds no property for back to its value in `defaults`.
fn reset_missing_fields(component: &mut dyn Struct, defaults: &dyn Struct, held: impl Fn(&str) -> bool) {
    for at in 0..defaults.field_len() {
        let (Some(name), Some(default)) = (defaults.name_at(at), defaults.field_at(at)) else { continue };
        if held(name) {
            continue;
        }
        if let Some(value) = value_of(default) {
            set_field(component, name, &value);
        }
    }
}

/// The fields of a bridged component the world can hold, as property values.
fn fields(component: &dyn Struct) -> Vec<(&str, Value)> {
    (0..component.field_len())
        .filter_map(|at| Some((component.name_at(at)?, value_of(component.field_at(at)?)?)))
        .collect()
}

/// A field's value, when the world can hold it.
fn value_of(field: &dyn PartialReflect) -> Option<Value> {
    if let Some(v) = field.try_downcast_ref::<i64>() {
        return Some(Value::Integer(*v));
    }
    if let Some(v) = field.try_downcast_ref::<i32>() {
        return Some(Value::Integer(i64::from(*v)));
    }
    if let Some(v) = field.try_downcast_ref::<u32>() {
        return Some(Value::Integer(i64::from(*v)));
    }
    if let Some(v) = field.try_downcast_ref::<f64>() {
        return Some(Value::Float(*v));
    }
    if let Some(v) = field.try_downcast_ref::<f32>() {
        return Some(Value::Float(f64::from(*v)));
    }
    if let Some(v) = field.try_downcast_ref::<bool>() {
        return Some(Value::Boolean(*v));
    }
    field.try_downcast_ref::<String>().map(|v| Value::Text(v.clone()))
}

/// Writes `value` into the field `name` of `component` when the field is of a kind that holds it (a float into
/// an `f32` rounds; an integer out of an `i32`'s range is not written).
fn set_field(component: &mut dyn Struct, name: &str, value: &Value) {
    let Some(field) = component.field_mut(name) else { return };
    match value {
        Value::Integer(v) => {
            if let Some(f) = field.try_downcast_mut::<i64>() {
                *f = *v;
            } else if let (Some(f), Ok(v)) = (field.try_downcast_mut::<i32>(), i32::try_from(*v)) {
                *f = v;
            } else if let (Some(f), Ok(v)) = (field.try_downcast_mut::<u32>(), u32::try_from(*v)) {
                *f = v;
            }
        }
        Value::Float(v) => {
            if let Some(f) = field.try_downcast_mut::<f64>() {
                *f = *v;
            } else if let Some(f) = field.try_downcast_mut::<f32>() {
                *f = *v as f32;
            }
        }
        Value::Boolean(v) => {
            if let Some(f) = field.try_downcast_mut::<bool>() {
                *f = *v;
            }
        }
        Value::Text(v) => {
            if let Some(f) = field.try_downcast_mut::<String>() {
                f.clone_from(v);
            }
        }
    }
}
