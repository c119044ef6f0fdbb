//! `gfhost`: load an experience of game-feature plugins into a world and run it; list, inspect, create and
//! build plugins.

mod admin;
mod bisect;
mod build;
mod check;
mod consent;
mod credentials;
mod fleet;
mod mod_set;
mod net;
mod packages;
mod play;
mod progress;
mod rebuild;
mod record;
mod registry;
mod scenario;
mod swarm;
mod template;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use gamefeature_host::config::HostConfig;
use gamefeature_host::delivery::DispatchLimits;
use gamefeature_host::experience::{ChaosDelay, ManagerOptions};
use gamefeature_host::feature::{Provenance, API_VERSION};
use gamefeature_host::game_loop::{GameLoop, Played};
use gamefeature_host::live::Command as ConsoleCommand;
use gamefeature_host::net::mod_sync::{FetchPolicy, ModSync};
use gamefeature_host::net::ticket::TicketKey;
use gamefeature_host::runtime::{Limits, RuntimeConfig};
use gamefeature_host::timeline::LogLevel;
use gamefeature_host::world::{self, NetMode};
use gamefeature_host::{Session, SessionOptions};

/// Runs sandboxed WebAssembly game-feature plugins.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    /// Options given before the command apply to every command that takes them (`gfhost --plugins mods run`);
    /// given after it, to that command, over these.
    #[command(flatten)]
    defaults: HostArgs,
    /// How the host's log (stderr, at the level GFHOST_LOG says) is written: lines for people, or one JSON
    /// object a line for log collectors.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

/// `--plugins`, for the commands that look in plugin folders.
#[derive(clap::Args)]
struct PluginDirs {
    /// Directory whose sub-folders are plugin packages (repeatable; naming any replaces the default, so
    /// `--plugins plugins --plugins mods` looks in both) [default: plugins; for `replay`, the folders recorded].
    #[arg(long = "plugins")]
    plugin_dirs: Vec<PathBuf>,
}

impl PluginDirs {
    /// These folders, or `defaults`' when none were named here.
    fn over(self, defaults: &PluginDirs) -> PluginDirs {
        PluginDirs {
            plugin_dirs: if self.plugin_dirs.is_empty() { defaults.plugin_dirs.clone() } else { self.plugin_dirs },
        }
    }

    /// The folders named, or `plugins`.
    fn or_default(self) -> Vec<PathBuf> {
        if self.plugin_dirs.is_empty() {
            vec![PathBuf::from("plugins")]
        } else {
            self.plugin_dirs
        }
    }
}

/// `--config`, for the commands that read the host's configuration.
#[derive(clap::Args)]
struct ConfigArg {
    /// Host configuration granting plugins permissions [default: ./gfhost.toml when present, else nothing granted].
    #[arg(long)]
    config: Option<PathBuf>,
}

impl ConfigArg {
    /// This configuration, or `defaults`' when none was named here.
    fn over(self, defaults: &ConfigArg) -> ConfigArg {
        ConfigArg { config: self.config.or_else(|| defaults.config.clone()) }
    }

    /// The configuration named, or `./gfhost.toml` when there is one, or nothing granted.
    fn read(&self) -> Result<HostConfig> {
        Ok(match &self.config {
            Some(path) => HostConfig::from_file(path)?,
            None if Path::new("gfhost.toml").is_file() => HostConfig::from_file(Path::new("gfhost.toml"))?,
            None => HostConfig::default(),
        })
    }
}

/// The options of the commands that run plugins: where they are, the host's configuration, the compile cache,
/// a call deadline.
#[derive(clap::Args)]
struct HostArgs {
    #[command(flatten)]
    plugins: PluginDirs,
    #[command(flatten)]
    config: ConfigArg,
    /// Where compiled components are cached [default: $GFHOST_CACHE_DIR, else ~/.cache/gamefeature].
    #[arg(long)]
    cache_dir: Option<PathBuf>,
    /// Compile every component, ignoring and not writing the cache.
    #[arg(long)]
    no_cache: bool,
    /// How long one call into a plugin may run before the plugin is stopped and quarantined
    /// [default: the configuration's `[sandbox] call-deadline-ms`, else 10].
    #[arg(long, value_parser = parse_call_deadline_ms)]
    call_deadline_ms: Option<u64>,
}

/// What a command that runs plugins takes from its options.
struct Host {
    /// The `--plugins` folders, when any were named (a replay otherwise plays the recorded ones).
    named_plugins: Option<Vec<PathBuf>>,
    plugin_dirs: Vec<PathBuf>,
    runtime: RuntimeConfig,
    config: HostConfig,
    /// The cache folder, where fetched mods go too.
    cache_dir: PathBuf,
}

impl HostArgs {
    /// These options, each taken from `defaults` where it was not given here.
    fn over(self, defaults: &HostArgs) -> HostArgs {
        HostArgs {
            plugins: self.plugins.over(&defaults.plugins),
            config: self.config.over(&defaults.config),
            cache_dir: self.cache_dir.or_else(|| defaults.cache_dir.clone()),
            no_cache: self.no_cache || defaults.no_cache,
            call_deadline_ms: self.call_deadline_ms.or(defaults.call_deadline_ms),
        }
    }

    fn prepare(self) -> Result<Host> {
        let named_plugins = (!self.plugins.plugin_dirs.is_empty()).then(|| self.plugins.plugin_dirs.clone());
        let config = self.config.read()?;
        let cache_dir = self.cache_dir.unwrap_or_else(RuntimeConfig::user_cache_dir);
        let compile_cache = (!self.no_cache).then(|| cache_dir.clone());
        let mut runtime =
            RuntimeConfig { cache_dir: compile_cache, ..RuntimeConfig::default() }.with_host_config(&config);
        if let Some(ms) = self.call_deadline_ms {
            // One deadline for every plugin, as `[sandbox] call-deadline-ms` sets it.
            runtime.call_deadline = std::time::Duration::from_millis(ms);
            runtime.fit_deadline_to_components = false;
        }
        Ok(Host { named_plugins, plugin_dirs: self.plugins.or_default(), runtime, config, cache_dir })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

#[derive(Subcommand)]
enum Command {
    /// Load an experience into a world, spawn players, end play, and print the timeline.
    Run {
        #[command(flatten)]
        host: HostArgs,
        /// The experience file.
        #[arg(default_value = "experiences/default.toml")]
        experience: PathBuf,
        /// standalone, dedicated-server, listen-server or client.
        #[arg(long, default_value = "standalone")]
        net_mode: NetMode,
        /// Lyra's chaos-testing delay: MIN,RANDOM seconds.
        #[arg(long, value_parser = parse_chaos)]
        chaos_delay: Option<(f64, f64)>,
        /// Seed for the chaos delay.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Write the timeline as a Chrome trace (open in Perfetto or chrome://tracing).
        #[arg(long)]
        trace: Option<PathBuf>,
        /// Players the game mode spawns once the experience has loaded.
        #[arg(long, default_value_t = 2)]
        players: usize,
        /// Run a dedicated server and this many clients in this process, over loopback QUIC, instead of one
        /// world: each world's timeline is printed.
        #[arg(long, default_value_t = 0)]
        clients: usize,
        /// With --clients: seconds of play before the server ends it.
        #[arg(long, default_value_t = 3.0, value_parser = parse_seconds)]
        seconds: f64,
        /// With --clients: the server's frames per second.
        #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=1000))]
        tick_rate: u32,
        /// With --clients: what happens on the server while it plays, one per line: `wait MS` (frames pass),
        /// `reload PLUGIN` (hot-reloaded, and the clients follow).
        #[arg(long, requires = "clients")]
        script: Option<PathBuf>,
        /// Record the session to this file, to replay it (`gfhost replay`); with --clients, the server's
        /// world, and each client's beside it (`FILE` -> `NAME.client-1.gfrec`, ...).
        #[arg(long)]
        record: Option<PathBuf>,
    },
    /// Run a dedicated server: one world, served over QUIC until SIGTERM or SIGINT, which end play cleanly.
    Server {
        #[command(flatten)]
        host: HostArgs,
        /// The experience file; clients load the file of the same name from their experience folder.
        #[arg(default_value = "experiences/default.toml")]
        experience: PathBuf,
        /// Where to listen (loopback unless told otherwise).
        #[arg(long, default_value = "127.0.0.1:7777")]
        listen: std::net::SocketAddr,
        /// Frames per second.
        #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=1000))]
        tick_rate: u32,
        #[command(flatten)]
        token: TokenArgs,
        /// The certificate chain to show clients (PEM), e.g. issued by an authority they trust; with --key.
        /// Without it the server makes a self-signed certificate and prints its sha256 for clients to pin.
        #[arg(long, requires = "key")]
        cert: Option<PathBuf>,
        /// The private key of --cert (PEM).
        #[arg(long, requires = "cert")]
        key: Option<PathBuf>,
        /// Players the server takes at most; more are refused, saying the server is full.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        max_players: Option<u64>,
        /// Bytes of replicated values per second each client is sent at most; past it values wait, the
        /// client's own player's and the longest waiting first. 0: no limit.
        #[arg(long, default_value_t = gamefeature_host::net::DEFAULT_CLIENT_RATE)]
        client_rate: u32,
        /// Ask each client for a join ticket signed with the key in this file (see `gfhost ticket`) rather than a
        /// shared token.
        #[arg(long, conflicts_with_all = ["token", "token_file"])]
        ticket_key_file: Option<PathBuf>,
        /// With --ticket-key-file: the match this server plays; tickets for another are refused.
        #[arg(long, requires = "ticket_key_file")]
        match_id: Option<String>,
        /// What a ticket presented while its player plays on another connection does: `refuse` it (a ticket
        /// leaked or shared), or `take-over` the player (a reconnect that does not wait for the old connection
        /// to time out).
        #[arg(long, value_enum, default_value = "refuse")]
        ticket_reuse: TicketReuseArg,
        #[command(flatten)]
        admin: admin::console::AdminArgs,
        /// Run as an Agones game server, through the SDK sidecar: Ready once loaded, health from the frame
        /// loop, the match (id, ticket key) read from the allocation, Shutdown when its last player has left.
        #[arg(long)]
        agones: bool,
        /// Hot-reload a plugin whenever its component or plugin.toml changes on disk; connected clients fetch
        /// and hot-reload its new version too.
        #[arg(long)]
        watch: bool,
        /// Record the server's world, with every client's messages, to this file (see `gfhost replay`).
        #[arg(long)]
        record: Option<PathBuf>,
    },
    /// Sign a join ticket, as a matchmaker does: a player's id and name, for a match, for a while. Prints it.
    Ticket {
        /// The key the servers check tickets with: a file of at least 32 secret bytes
        /// (e.g. `head -c 32 /dev/urandom > ticket.key`).
        #[arg(long)]
        key_file: PathBuf,
        /// The player's stable id.
        #[arg(long)]
        player: String,
        /// The player's display name.
        #[arg(long, default_value = "")]
        name: String,
        /// The match it is for (any server sharing the key, when left out).
        #[arg(long)]
        match_id: Option<String>,
        /// Seconds it stays valid.
        #[arg(long, default_value_t = 3600)]
        valid_for: u64,
    },
    /// Join a server: play its experience in a client world until it ends play.
    Client {
        #[command(flatten)]
        host: HostArgs,
        #[command(flatten)]
        server: JoinArgs,
        /// Where the experiences the server names are, when it does not send them.
        #[arg(long, default_value = "experiences")]
        experiences: PathBuf,
        /// Which of the server's plugin packages to fetch when this client lacks them: `trusted` (signed by a
        /// publisher in [publishers]), `any`, or `never` [default: the configuration's [mod-sync] fetch, else
        /// trusted]. Fetched plugins are cached under the cache directory's `mods/`.
        #[arg(long, value_parser = parse_fetch_policy)]
        fetch: Option<FetchPolicy>,
        /// Where fetched plugins and experiences are kept, by digest [default: the cache directory's mods/].
        #[arg(long)]
        mods_dir: Option<PathBuf>,
        /// Fetch and run the server's plugins the fetch policy allows without asking (the list is still
        /// shown) [default: the configuration's [mod-sync] consent, else ask].
        #[arg(long)]
        yes: bool,
        /// Leave after this many seconds instead of playing until the server ends.
        #[arg(long, value_parser = parse_seconds)]
        seconds: Option<f64>,
        /// Record this client's world, with the server's messages, to this file (see `gfhost replay`).
        #[arg(long)]
        record: Option<PathBuf>,
    },
    /// Load-test a server: many lightweight players (protocol clients with no world or plugins) join it over
    /// QUIC, acknowledge what it sends, and leave; prints how long joining took and what each was sent.
    Swarm {
        #[command(flatten)]
        server: JoinArgs,
        /// Players to join.
        #[arg(long, default_value_t = 100)]
        players: usize,
        /// Connections opened at once (a server lets 8 from one address greet at a time).
        #[arg(long, default_value_t = 8)]
        at_once: usize,
        /// Seconds to play once every player has joined, then leave.
        #[arg(long, default_value_t = 10.0, value_parser = parse_seconds)]
        seconds: f64,
    },
    /// Load an experience into a world that keeps running, changed by commands until `quit`: features
    /// activated, deactivated, hot-reloaded, installed and uninstalled while it plays.
    Play {
        #[command(flatten)]
        host: HostArgs,
        /// The experience file.
        #[arg(default_value = "experiences/default.toml")]
        experience: PathBuf,
        /// standalone, dedicated-server, listen-server or client.
        #[arg(long, default_value = "standalone")]
        net_mode: NetMode,
        /// Players the game mode spawns once the experience has loaded.
        #[arg(long, default_value_t = 2)]
        players: usize,
        /// Read commands from this file instead of the console (one per line; `#` starts a comment).
        #[arg(long)]
        script: Option<PathBuf>,
        /// Reload a plugin whenever its component or plugin.toml changes on disk, building it again first when
        /// one of its sources is saved; a plugin that was quarantined or failed to activate comes back this way.
        #[arg(long)]
        watch: bool,
        /// Frames per second: timers fire and frame budgets are kept at this rate.
        #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=1000))]
        tick_rate: u32,
        /// Record the session (frames, commands, reloads, what plugins read of clocks) to this file, to replay
        /// it with `gfhost replay`.
        #[arg(long)]
        record: Option<PathBuf>,
        /// Print only this plugin's log lines (repeat for more): a modder's own, without the other plugins'
        /// chatter. Failures, quarantines and reloads of every plugin still show.
        #[arg(long = "only", value_name = "PLUGIN")]
        only: Vec<String>,
        #[command(flatten)]
        admin: admin::console::AdminArgs,
    },
    /// Play a recorded session again (`--record` on run, play, server or client), frame for frame, comparing
    /// the world with the recording's at every checkpoint; stops at the first difference and names it. The
    /// plugins play from this host's own folders (--plugins, default plugins), under its own configuration: a
    /// recording is data, and the folders it names are shown, not followed, unless --follow-recorded says so.
    Replay {
        #[command(flatten)]
        host: HostArgs,
        /// The recording.
        recording: PathBuf,
        /// Exit with status 1 when the replay differs from the recording (for tests and CI).
        #[arg(long)]
        expect_same: bool,
        /// Play the plugin folders the recording names, carry out its `install` of folders elsewhere, and fetch
        /// as it fetched into the mods folder it names (only for a recording you trust, made on this machine).
        #[arg(long)]
        follow_recorded: bool,
        /// Print what the plugins said in the replay (info and above), as `gfhost play` does.
        #[arg(long)]
        show_output: bool,
    },
    /// Name the plugin that makes a recorded failure come: replays the recording with some of its plugins left
    /// out (each kept one with what it needs), halving, until one plugin (or a pair, together) is named.
    Bisect {
        #[command(flatten)]
        host: HostArgs,
        /// The recording that ends in the failure (see --record).
        recording: PathBuf,
        /// The failure to look for: a line a plugin says or fails with that holds TEXT [default: any plugin
        /// quarantined or refused].
        #[arg(long, value_name = "TEXT")]
        until: Option<String>,
        /// Bisect the plugins an update changed, playing those not kept at their version in this lock (the lock
        /// before the update: gfhost.lock.previous) rather than leaving them out.
        #[arg(long, value_name = "LOCK")]
        against: Option<PathBuf>,
        /// The lock of the plugins as they are now, with --against.
        #[arg(long, default_value = "gfhost.lock")]
        lock: PathBuf,
    },
    /// List the plugins found in the plugin directories.
    Plugins {
        #[command(flatten)]
        host: HostArgs,
        /// A plugin directory to list instead of --plugins.
        dir: Option<PathBuf>,
    },
    /// Show a plugin's manifest and its component's imports and exports beside what the world wants.
    Inspect {
        #[command(flatten)]
        host: HostArgs,
        /// Plugin name, or the path of a plugin folder.
        plugin: String,
    },
    /// Check a plugin: its component against the WIT, then its lifecycle in a headless world — missing exports,
    /// denied and refused calls, slow calls, failures, and what it leaves behind.
    Check {
        #[command(flatten)]
        host: HostArgs,
        /// Plugin name, or the path of a plugin folder (with --types, also a folder of plugins: every plugin
        /// there with sources is checked).
        plugin: String,
        /// The experience whose game (classes, pawn class) the plugin is written for
        /// [default: experiences/default.toml when present]; its features and bundles are not loaded.
        #[arg(long)]
        experience: Option<PathBuf>,
        /// Type-check the plugin's sources instead, with its language's checker as its editor configuration
        /// says (TypeScript for JavaScript, mypy for Python, clang for C, cargo check for Rust): a misspelt
        /// hook parameter is an error before the plugin is built. Exit status 1 on errors.
        #[arg(long, conflicts_with = "experience")]
        types: bool,
    },
    /// Run a plugin's scenario tests (its `tests/*.toml`): each plays the plugin in a fresh headless world,
    /// step by step, checking what it expects of the log, init states, components and properties, and that
    /// nothing is left at end of play.
    Test {
        #[command(flatten)]
        host: HostArgs,
        /// Plugin name, the path of a plugin folder, or a folder of plugins: every plugin there with scenarios
        /// is tested (exit status 1 when any fails, for CI). A plugin whose component is older than its sources
        /// is built first.
        plugin: String,
        /// The experience whose game (classes, pawn class) the scenarios play in
        /// [default: experiences/default.toml when present]; its features and bundles are not loaded.
        #[arg(long)]
        experience: Option<PathBuf>,
    },
    /// Build plugins from source and put each component beside its plugin.toml.
    Build {
        #[command(flatten)]
        plugins: PluginDirs,
        /// Plugin folders, or directories of them [default: the --plugins directories].
        paths: Vec<PathBuf>,
        /// After building, keep watching: build a plugin again whenever one of its sources is saved.
        #[arg(long)]
        watch: bool,
    },
    /// Pack a built plugin folder into one package file (`NAME-VERSION.gfpkg`, an OCI image layout archive),
    /// signed with a publisher key.
    Pack {
        #[command(flatten)]
        plugins: PluginDirs,
        /// Plugin name, or the path of a plugin folder.
        plugin: String,
        /// The publisher's secret key (see `gfhost keygen`); without it the package is unsigned.
        #[arg(long)]
        key: Option<PathBuf>,
        /// The name the publisher signs as [default: the key file's name without its extension].
        #[arg(long, requires = "key")]
        publisher: Option<String>,
        /// Where to write the package.
        #[arg(long, default_value = ".")]
        out: PathBuf,
    },
    /// Install a package into a plugin directory, if its publisher is trusted (`[publishers]` in the
    /// configuration); a plugin already there of that name is replaced. From a registry, the version is
    /// recorded in the lock file; with no package, exactly what the lock file lists is installed.
    Install {
        #[command(flatten)]
        plugins: PluginDirs,
        #[command(flatten)]
        config: ConfigArg,
        /// A package file, or NAME@RANGE from --registry (a Cargo-style semver range: `lyra@^1.2`,
        /// `lyra@=1.2.3`; `lyra` alone is the newest). None: everything the lock file lists.
        package: Option<String>,
        /// The plugin directory to install into [default: the first --plugins directory].
        #[arg(long)]
        into: Option<PathBuf>,
        /// The OCI registry and namespace to install from: host[:port]/namespace.
        #[arg(long)]
        registry: Option<String>,
        /// Install exactly the lock from a folder `gfhost mirror` wrote, with no network (its lock becomes this
        /// host's when there is none).
        #[arg(long, value_name = "FOLDER", conflicts_with_all = ["package", "registry"])]
        offline: Option<PathBuf>,
        /// The lock file recording what was installed from registries.
        #[arg(long, default_value = "gfhost.lock")]
        lock: PathBuf,
    },
    /// Copy every package the lock lists, checked, into a folder (with their signatures and the lock) for
    /// `gfhost install --offline`: a LAN party's share, an air-gapped server.
    Mirror {
        #[command(flatten)]
        config: ConfigArg,
        /// The folder to write.
        #[arg(long)]
        to: PathBuf,
        /// The lock file.
        #[arg(long, default_value = "gfhost.lock")]
        lock: PathBuf,
    },
    /// Show each installed plugin's locked version, the version `update` would move it to, and the newest
    /// published; yanked versions installed are named.
    Outdated {
        /// The OCI registry and namespace [default: the one the lock file names].
        #[arg(long)]
        registry: Option<String>,
        /// The lock file.
        #[arg(long, default_value = "gfhost.lock")]
        lock: PathBuf,
    },
    /// Move installed plugins to the newest versions the lock's requests allow (only NAMEs, if given; the rest
    /// stay where they are), as one set; the lock before is kept for `--rollback`.
    Update {
        #[command(flatten)]
        plugins: PluginDirs,
        #[command(flatten)]
        config: ConfigArg,
        /// The plugins to update [default: every plugin].
        names: Vec<String>,
        /// Say what would change (and which plugins use what changes), and change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Go back to the lock before the last change, installing exactly what it lists.
        #[arg(long, conflicts_with_all = ["names", "dry_run"])]
        rollback: bool,
        /// The plugin directory [default: the first --plugins directory].
        #[arg(long)]
        into: Option<PathBuf>,
        /// The OCI registry and namespace [default: the one the lock file names].
        #[arg(long)]
        registry: Option<String>,
        /// The lock file.
        #[arg(long, default_value = "gfhost.lock")]
        lock: PathBuf,
    },
    /// Withdraw a published version from resolution (a publisher's command): new installs and updates pass over
    /// it, lock files that hold it still install it, with a warning.
    Yank {
        /// NAME@VERSION, one exact version.
        version: String,
        /// The OCI registry and namespace: host[:port]/namespace.
        #[arg(long)]
        registry: String,
        /// Why, shown to those who installed it.
        #[arg(long)]
        reason: Option<String>,
        /// Put a yanked version back.
        #[arg(long)]
        undo: bool,
    },
    /// List the plugins of a registry's namespace (whose name or description holds TERM, if given), each with its
    /// newest version.
    Search {
        /// Words to look for in names and descriptions.
        term: Option<String>,
        /// The OCI registry and namespace: host[:port]/namespace.
        #[arg(long)]
        registry: String,
    },
    /// Publish a package file to an OCI registry, as NAMESPACE/NAME:VERSION (with its signature beside it).
    /// Credentials come from GFHOST_REGISTRY_USERNAME and GFHOST_REGISTRY_PASSWORD, or Docker's config.json.
    Publish {
        /// The package file (see `gfhost pack`).
        package: PathBuf,
        /// The OCI registry and namespace: host[:port]/namespace.
        #[arg(long)]
        registry: String,
    },
    /// Make a publisher key: writes the secret key (PKCS#8 PEM) and prints the public key for hosts to trust.
    Keygen {
        /// The secret key file to write; it must not exist yet.
        out: PathBuf,
    },
    /// Create a plugin: a manifest and the sources of a first plugin whose hooks log; it builds and loads
    /// unchanged.
    New {
        #[command(flatten)]
        plugins: PluginDirs,
        /// The plugin's name: lowercase letters, digits and '-'.
        name: String,
        /// The language it is written in: rust, python, js or c.
        #[arg(long, default_value = "rust", value_parser = parse_language)]
        lang: gamefeature_builder::Language,
        /// The directory to create it in [default: the first --plugins directory]. A cargo workspace there
        /// (as plugins/ is) gains the crate as a member.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

/// `--ticket-reuse`: what a second use of a join ticket does.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum TicketReuseArg {
    /// Refuse the new connection.
    Refuse,
    /// The new connection takes the player over.
    TakeOver,
}

fn parse_fetch_policy(name: &str) -> Result<FetchPolicy, String> {
    match name {
        "trusted" => Ok(FetchPolicy::Trusted),
        "any" => Ok(FetchPolicy::Any),
        "never" => Ok(FetchPolicy::Never),
        other => Err(format!("{other:?}: expected trusted, any or never")),
    }
}

fn parse_language(name: &str) -> Result<gamefeature_builder::Language, String> {
    gamefeature_builder::Language::parse(name).ok_or_else(|| {
        let names: Vec<&str> = gamefeature_builder::Language::ALL.iter().map(|l| l.name()).collect();
        format!("unknown language {name:?}: one of {}", names.join(", "))
    })
}

/// `MIN,RANDOM` seconds, checked as the library checks a chaos delay (the seed comes separately).
fn parse_chaos(text: &str) -> Result<(f64, f64), String> {
    let (min, random) = text.split_once(',').ok_or("expected MIN,RANDOM, e.g. 0.5,1.0")?;
    let number = |s: &str| s.trim().parse::<f64>().map_err(|e| format!("{s:?}: {e}"));
    let (min, random) = (number(min)?, number(random)?);
    ChaosDelay::new(min, random, 0).map_err(|e| e.to_string())?;
    Ok((min, random))
}

/// A duration of play: a finite number of seconds, at most a day.
/// A server's address: an IP address and port as they are, a host name looked up (its first address).
fn parse_server_address(text: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::ToSocketAddrs;
    let mut found = text.to_socket_addrs().map_err(|e| format!("{text:?}: {e} (expected host:port)"))?;
    found.next().ok_or_else(|| format!("{text:?}: the name has no address"))
}

fn parse_seconds(text: &str) -> Result<f64, String> {
    let seconds = text.trim().parse::<f64>().map_err(|e| format!("{text:?}: {e}"))?;
    if !(0.0..=86_400.0).contains(&seconds) {
        return Err(format!("{text:?}: expected 0 to 86400 seconds"));
    }
    Ok(seconds)
}

fn parse_call_deadline_ms(text: &str) -> Result<u64, String> {
    let ms = text.trim().parse::<u64>().map_err(|e| format!("{text:?}: {e}"))?;
    gamefeature_host::config::check_call_deadline_ms(ms).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    // Taken while the process has one thread, before any child (a plugin's build) could inherit it.
    admin::console::take_token_from_environment();
    let cli = Cli::parse();
    let log = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("GFHOST_LOG").unwrap_or_else(|_| "warn".into()))
        .with_writer(std::io::stderr);
    match cli.log_format {
        LogFormat::Json => log.json().init(),
        // Colour codes only where a terminal shows them, not in files and pipes.
        LogFormat::Text => log.with_ansi(std::io::stderr().is_terminal()).init(),
    }
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            // An error may quote what came from outside (an archive's entry name, a registry's answer, a
            // peer's reason): shown as data, never as terminal controls or extra lines.
            eprintln!("error: {}", gamefeature_host::text::shown(&format!("{e:#}"), usize::MAX));
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    let defaults = &cli.defaults;
    match cli.command {
        Command::Run {
            host,
            experience,
            net_mode,
            chaos_delay,
            seed,
            trace,
            players,
            clients,
            seconds,
            tick_rate,
            script,
            record,
        } => {
            let Host { plugin_dirs, runtime, config, .. } = host.over(defaults).prepare()?;
            let chaos = chaos_delay.map(|(min, random)| ChaosDelay::new(min, random, seed)).transpose();
            let chaos = chaos.map_err(anyhow::Error::msg)?;
            let trust = config.trust.clone();
            let options = SessionOptions {
                plugin_dirs,
                runtime,
                // The timeline is for reading what plugins do: show their debug lines too.
                manager: ManagerOptions { chaos, ..manager_options(config, LogLevel::Debug) },
                trust,
            };
            if clients > 0 {
                let args = net::RunArgs {
                    experience: &experience,
                    clients,
                    seconds,
                    tick_rate,
                    trace: trace.as_deref(),
                    script: script.as_deref(),
                    record: record.as_deref(),
                };
                return net::run_networked(args, options);
            }
            run_experience(&experience, net_mode, players, trace.as_deref(), record.as_deref(), options)
        }
        Command::Server {
            host,
            experience,
            listen,
            tick_rate,
            token,
            cert,
            key,
            max_players,
            client_rate,
            ticket_key_file,
            match_id,
            ticket_reuse,
            admin,
            agones,
            watch,
            record,
        } => {
            let Host { plugin_dirs, runtime, config, .. } = host.over(defaults).prepare()?;
            let options = session_options(plugin_dirs, runtime, config, LogLevel::Info);
            let token = token.secret()?;
            let certificate = cert.zip(key);
            let max_players = max_players.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
            let tickets = match ticket_key_file {
                Some(path) => {
                    let key = TicketKey::from_file(&path).map_err(|e| anyhow::anyhow!("the ticket key: {e}"))?;
                    Some(gamefeature_host::net::TicketPolicy { key, match_id })
                }
                None => None,
            };
            let args = net::ServerArgs {
                experience: &experience,
                listen,
                tick_rate,
                token,
                certificate,
                max_players,
                client_rate: Some(client_rate).filter(|rate| *rate > 0),
                tickets,
                ticket_reuse: match ticket_reuse {
                    TicketReuseArg::Refuse => gamefeature_host::net::TicketReuse::Refuse,
                    TicketReuseArg::TakeOver => gamefeature_host::net::TicketReuse::TakeOver,
                },
                admin,
                fleet: if agones { net::Fleet::Agones } else { net::Fleet::Standalone },
                watch,
                record: record.as_deref(),
            };
            net::serve(args, options)
        }
        Command::Ticket { key_file, player, name, match_id, valid_for } => {
            let key = TicketKey::from_file(&key_file).map_err(|e| anyhow::anyhow!("the ticket key: {e}"))?;
            let expires = gamefeature_host::net::ticket::unix_now().saturating_add(valid_for);
            println!("{}", key.mint(&gamefeature_host::net::ticket::Ticket { player, name, match_id, expires }));
            Ok(ExitCode::SUCCESS)
        }
        Command::Client { host, server, experiences, fetch, mods_dir, yes, seconds, record } => {
            let Host { plugin_dirs, runtime, config, cache_dir, .. } = host.over(defaults).prepare()?;
            let mod_sync = ModSync {
                policy: fetch.unwrap_or(config.mod_sync.fetch),
                trust: config.trust.clone(),
                permissions: config.mod_sync.permissions.clone(),
                cache_dir: mods_dir.unwrap_or_else(|| cache_dir.join("mods")),
                max_package_bytes: config.mod_sync.max_package_mib.saturating_mul(1 << 20),
                consent: None,
            };
            let consent = if yes { gamefeature_host::config::ModConsent::Yes } else { config.mod_sync.consent };
            let options = session_options(plugin_dirs, runtime, config, LogLevel::Info);
            let connect = server.connect;
            let (trust, token) = (server.trust.trust(&server.server_name)?, server.token.secret()?);
            let args = net::ClientArgs { connect, trust, token, experiences, mod_sync, consent, seconds, record };
            net::join(args, options)
        }
        Command::Swarm { server, players, at_once, seconds } => {
            let options = gamefeature_host::net::swarm::QuicSwarmOptions {
                server: server.connect,
                trust: server.trust.trust(&server.server_name)?,
                token: server.token.secret()?,
                players,
                at_once,
                connect_wait: Duration::from_secs(5),
            };
            swarm::run(&options, Duration::from_secs_f64(seconds))
        }
        Command::Play { host, experience, net_mode, players, script, watch, tick_rate, record, admin, only } => {
            if !experience.is_file() {
                bail!("experience file {} not found", experience.display());
            }
            let Host { plugin_dirs, runtime, config, .. } = host.over(defaults).prepare()?;
            let options = session_options(plugin_dirs, runtime, config, LogLevel::Info);
            let play_options = play::PlayOptions {
                net_mode,
                players,
                script: script.as_deref(),
                watch,
                tick_rate,
                record: record.as_deref(),
                admin,
                only,
            };
            play::play(&experience, play_options, options)
        }
        Command::Bisect { host, recording, until, against, lock } => {
            let Host { plugin_dirs, runtime, config, cache_dir, .. } = host.over(defaults).prepare()?;
            let against = match against {
                Some(previous) if !previous.is_file() => {
                    bail!(
                        "--against {}: no such lock file (the lock before an update is gfhost.lock.previous)",
                        previous.display()
                    )
                }
                Some(previous) => {
                    let read =
                        |path: &Path| gamefeature_host::package::lock::LockFile::read(path).map_err(anyhow::Error::msg);
                    let trust = config.trust.clone();
                    let fetch = Box::new(move |locked: &gamefeature_host::package::lock::Locked, into: &Path| {
                        mod_set::fetch_locked(locked, into, &trust)
                    });
                    Some(bisect::Against { current: read(&lock)?, previous: read(&previous)?, fetch })
                }
                None => None,
            };
            let options = session_options(Vec::new(), runtime, config, LogLevel::Debug);
            let scratch = cache_dir.join("bisect");
            bisect::run(bisect::BisectArgs { recording: &recording, plugin_dirs, scratch, until, against }, options)
        }
        Command::Replay { host, recording, expect_same, follow_recorded, show_output } => {
            let Host { named_plugins, plugin_dirs, runtime, config, cache_dir } = host.over(defaults).prepare()?;
            // The replayer's own fetching: its configuration's policy into its own mods folder. Only a recording
            // followed on purpose fetches as it says, into the folder it names.
            let own_mods = cache_dir.join("mods");
            let mod_sync = ModSync {
                policy: config.mod_sync.fetch,
                trust: config.trust.clone(),
                permissions: config.mod_sync.permissions.clone(),
                cache_dir: own_mods,
                max_package_bytes: config.mod_sync.max_package_mib.saturating_mul(1 << 20),
                // A replay runs what the recording says the player agreed to.
                consent: None,
            };
            let options = session_options(Vec::new(), runtime, config, LogLevel::Debug);
            let replay = record::ReplayArgs {
                named_plugins,
                own_plugins: plugin_dirs,
                follow_recorded,
                mod_sync,
                expect_same,
                show_output,
            };
            record::replay_command(&recording, replay, options)
        }
        Command::Build { plugins, paths, watch } => {
            let paths = if paths.is_empty() { plugins.over(&defaults.plugins).or_default() } else { paths };
            if watch {
                // Watching from before the first build: a save made while it runs is built after it.
                rebuild::watch_and_build(&paths, || {
                    if let Err(e) = build_and_report(&paths) {
                        eprintln!("error: {e:#}");
                    }
                })?;
                return Ok(ExitCode::SUCCESS);
            }
            match build_and_report(&paths)? {
                0 => Ok(ExitCode::SUCCESS),
                _ => Ok(ExitCode::FAILURE),
            }
        }
        Command::Pack { plugins, plugin, key, publisher, out } => {
            // A folder named is packed itself, never another folder of the same plugin beside it.
            let folder = match Path::new(&plugin).join("plugin.toml").is_file() {
                true => PathBuf::from(&plugin),
                false => packages::plugin_folder(&plugin, &plugins.over(&defaults.plugins).or_default())?,
            };
            packages::pack(&folder, key.as_deref(), publisher.as_deref(), &out)
        }
        Command::Install { plugins, config, package, into, registry, offline, lock } => {
            let config = config.over(&defaults.config).read()?;
            let plugins = plugins.over(&defaults.plugins);
            let into = install_dir(into, &plugins);
            let target = mod_set::Target { into: &into, lock: &lock, trust: &config.trust };
            match package {
                Some(file) if Path::new(&file).is_file() => packages::install(Path::new(&file), &into, &config.trust),
                Some(spec) => mod_set::install(&spec, registry.as_deref(), &target),
                None => {
                    let from = offline.as_deref().map_or(mod_set::LockedFrom::Registries, mod_set::LockedFrom::Mirror);
                    mod_set::install_locked(&target, from)
                }
            }
        }
        Command::Mirror { config, to, lock } => {
            let config = config.over(&defaults.config).read()?;
            mod_set::mirror(&lock, &to, &config.trust)
        }
        Command::Outdated { registry, lock } => mod_set::outdated(registry.as_deref(), &lock),
        Command::Update { plugins, config, names, dry_run, rollback, into, registry, lock } => {
            let config = config.over(&defaults.config).read()?;
            let plugins = plugins.over(&defaults.plugins);
            let into = install_dir(into, &plugins);
            let target = mod_set::Target { into: &into, lock: &lock, trust: &config.trust };
            match rollback {
                true => mod_set::rollback(&target),
                false => mod_set::update(&names, registry.as_deref(), dry_run, &target),
            }
        }
        Command::Yank { version, registry, reason, undo } => {
            mod_set::yank(&version, &registry, reason.as_deref(), undo)
        }
        Command::Search { term, registry } => mod_set::search(term.as_deref(), &registry),
        Command::Publish { package, registry } => packages::publish(&package, &registry),
        Command::Keygen { out } => packages::keygen(&out),
        Command::New { plugins, name, lang, dir } => {
            let plugins = plugins.over(&defaults.plugins);
            let parent =
                dir.or_else(|| plugins.plugin_dirs.first().cloned()).unwrap_or_else(|| PathBuf::from("plugins"));
            let (folder, files) = template::new_plugin(&parent, &name, lang)?;
            println!("created {} ({lang}): {}", folder.display(), files.join(", "));
            println!("next: add \"{name}\" to an experience's features, then `gfhost build` and `gfhost run`");
            Ok(ExitCode::SUCCESS)
        }
        Command::Plugins { host, dir } => {
            let Host { plugin_dirs, runtime, config, .. } = host.over(defaults).prepare()?;
            let plugin_dirs = dir.map(|d| vec![d]).unwrap_or(plugin_dirs);
            let manager = ManagerOptions { grants: config.grants, ..ManagerOptions::default() };
            list_plugins(SessionOptions { plugin_dirs, runtime, manager, trust: config.trust })
        }
        Command::Check { host, plugin, types: true, .. } => {
            let Host { plugin_dirs, .. } = host.over(defaults).prepare()?;
            check::check_types(&plugin, &plugin_dirs)
        }
        Command::Check { host, plugin, experience, .. } => {
            let Host { plugin_dirs, runtime, config, .. } = host.over(defaults).prepare()?;
            let (name, plugin_dirs) = plugin_and_dirs(&plugin, plugin_dirs)?;
            let default = Path::new("experiences/default.toml");
            let game = experience.or_else(|| default.is_file().then(|| default.to_path_buf()));
            check::check_plugin(&name, game.as_deref(), session_options(plugin_dirs, runtime, config, LogLevel::Info))
        }
        Command::Test { host, plugin, experience } => {
            let Host { plugin_dirs, runtime, config, .. } = host.over(defaults).prepare()?;
            let default = Path::new("experiences/default.toml");
            let game = experience.or_else(|| default.is_file().then(|| default.to_path_buf()));
            let folder = Path::new(&plugin);
            if folder.is_dir() && !folder.join("plugin.toml").is_file() {
                let options = session_options(plugin_dirs, runtime, config, LogLevel::Debug);
                return scenario::test_folder(folder, game.as_deref(), options);
            }
            let (name, plugin_dirs) = plugin_and_dirs(&plugin, plugin_dirs)?;
            scenario::test_plugin(
                &name,
                game.as_deref(),
                session_options(plugin_dirs, runtime, config, LogLevel::Debug),
            )
        }
        Command::Inspect { host, plugin } => {
            let Host { plugin_dirs, runtime, config, .. } = host.over(defaults).prepare()?;
            let (name, plugin_dirs) = plugin_and_dirs(&plugin, plugin_dirs)?;
            let options = SessionOptions { plugin_dirs, runtime, trust: config.trust, ..SessionOptions::default() };
            inspect_plugin(&name, options)
        }
    }
}

/// A plugin named on the command line — by name, found in the plugin directories, or by its folder, which is
/// then the one plugin directory looked in.
fn plugin_and_dirs(plugin: &str, plugin_dirs: Vec<PathBuf>) -> Result<(String, Vec<PathBuf>)> {
    let path = Path::new(plugin);
    if !path.join("plugin.toml").is_file() {
        return Ok((plugin.to_string(), plugin_dirs));
    }
    let manifest = gamefeature_host::feature::PluginManifest::read(path)?;
    Ok((manifest.name, vec![folder_of(path).to_path_buf()]))
}

/// The plugin directory packages are installed into: `--into`, else the first `--plugins` directory.
fn install_dir(into: Option<PathBuf>, plugins: &PluginDirs) -> PathBuf {
    into.or_else(|| plugins.plugin_dirs.first().cloned()).unwrap_or_else(|| PathBuf::from("plugins"))
}

/// Builds the plugins `paths` name, printing each component built and each failure; how many failed.
fn build_and_report(paths: &[PathBuf]) -> Result<usize> {
    let mut failures = 0;
    for path in paths {
        let built = build::build_plugins(path)?;
        for packaged in &built.packaged {
            println!("{}: {}", packaged.plugin, packaged.component.display());
        }
        for failure in &built.failures {
            eprintln!("error: {failure:#}");
        }
        failures += built.failures.len();
    }
    if failures > 0 {
        eprintln!("{failures} build(s) failed; the other plugins were built");
    }
    Ok(failures)
}

/// The folder `path` is in. `Path::new("hello").parent()` is the empty path, which names no folder (reading it
/// fails, joining to it reads as relative to nothing): the current folder is meant.
pub(crate) fn folder_of(path: &Path) -> &Path {
    path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// A session of the plugins in `plugin_dirs`, configured by the host configuration.
fn session_options(
    plugin_dirs: Vec<PathBuf>,
    runtime: RuntimeConfig,
    config: HostConfig,
    plugin_log_level: LogLevel,
) -> SessionOptions {
    let trust = config.trust.clone();
    SessionOptions { plugin_dirs, runtime, manager: manager_options(config, plugin_log_level), trust }
}

/// What a world's experience manager takes from the host configuration.
fn manager_options(config: HostConfig, plugin_log_level: LogLevel) -> ManagerOptions {
    let default = DispatchLimits::default();
    ManagerOptions {
        plugin_log_level,
        grants: config.grants,
        data_dir: config.data_dir,
        dispatch: DispatchLimits { work: config.work_per_dispatch.unwrap_or(default.work), ..default },
        restarts: config.restarts,
        ..ManagerOptions::default()
    }
}

fn run_experience(
    path: &Path,
    net_mode: NetMode,
    players: usize,
    trace: Option<&Path>,
    record_to: Option<&Path>,
    options: SessionOptions,
) -> Result<ExitCode> {
    if !path.is_file() {
        bail!("experience file {} not found (run from the repository root, or name an experience)", path.display());
    }
    let tokio = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let session = Session::new(options.clone())?;
    for problem in &session.discovery().errors {
        eprintln!("warning: {problem}");
    }
    warn_stale_components(&session);
    let mut manager = session.create_world("main", net_mode);
    let recording = match record_to {
        Some(file) => {
            let recorded = record::Recorded {
                role: gamefeature_host::recording::Role::Standalone,
                experience: Some(path),
                experiences_dir: None,
                mods: None,
                world: "main",
                net_mode,
                tick_rate: 30,
            };
            Some(record::start(file, recorded, &options, &mut manager)?)
        }
        None => None,
    };
    let started = Instant::now();
    progress::while_loading(&session, || tokio.block_on(manager.load(path)))?;
    let load_time = started.elapsed();
    let mut game = GameLoop::new(Played::Standalone(Box::new(manager)), tokio.handle().clone());
    if let Some(recording) = recording {
        game = game.recorded(recording);
    }
    game.checkpoint();
    // `run` spawns its players as the console's `spawn` does (recorded as that command, which a replay carries
    // out): each player's pawn spawns first, its controller arrives next and its player state last, so features
    // waiting for them visibly stall, then complete.
    if let Err(e) = game.execute(&session, &ConsoleCommand::Spawn(players), &format!("spawn {players}")) {
        eprintln!("spawning: {e}");
    }
    game.checkpoint();
    let playing = game.manager().live_features();
    let (actors, components, (lazy, avoided)) = {
        let w = world::lock(game.manager().world());
        (w.actors().count(), w.requested_component_count(), w.lazy_components())
    };
    let ended = game.end("the run is over", Duration::ZERO, &mut ())?;
    if let (Some(recording), Some(file)) = (ended.recording, record_to) {
        record::said(recording, file);
    }
    let manager = ended.manager;
    // Failures of every phase — loading, playing, end of play — are in the report by now.
    let report = manager.report().clone();
    let left = check::left_behind(&world::lock(manager.world()));

    print!("{}", session.timeline().render_text());
    println!();
    let definition_name = path.display();
    println!("experience {definition_name} in {net_mode} mode: loaded in {:.1} ms", load_time.as_secs_f64() * 1e3);
    println!("  bundles: {:?}", report.bundles);
    println!("  plugins active in the world at end of play: {}", playing.join(", "));
    let (cached, compiled) = count_provenance(&session);
    println!("  components: {cached} loaded from cache, {compiled} compiled");
    if let Some(delay) = report.chaos_delay {
        println!("  chaos delay: {:.3} s", delay.as_secs_f64());
    }
    println!("  while playing: {actors} actors, {components} feature components");
    println!("  lazy components: {lazy} created, {avoided} avoided (never needed)");
    println!("  after end of play: {}; experience {}", left.as_deref().unwrap_or("nothing left"), manager.state());
    println!("  time in plugins (calls the timeline recorded):");
    print!("{}", session.timeline().render_time_in_plugins());
    if let Some(trace_path) = trace {
        let json = serde_json::to_string_pretty(&session.timeline().to_chrome_trace())?;
        std::fs::write(trace_path, json).with_context(|| format!("writing trace {}", trace_path.display()))?;
        println!("  trace written to {}", trace_path.display());
    }
    // A plugin folder that could not be installed (a bad manifest, a name installed twice) is a failure too:
    // the experience may have run without the plugin meant, or with another of the same name.
    let discovery = &session.discovery().errors;
    if report.failures.is_empty() && discovery.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    println!("\n{} failure(s):", report.failures.len() + discovery.len());
    for problem in discovery {
        println!("  - plugin discovery: {problem}");
    }
    for failure in &report.failures {
        println!("  - {failure}");
    }
    Ok(ExitCode::from(2))
}

/// Counts plugins by how their code was obtained, from the timeline's load events.
fn count_provenance(session: &Session) -> (usize, usize) {
    let events = session.timeline().events();
    let loads = events.iter().filter(|e| e.kind == gamefeature_host::timeline::EventKind::Load);
    loads.fold((0, 0), |(cached, compiled), e| {
        if e.text.starts_with("loaded from cache") {
            (cached + 1, compiled)
        } else if e.text.starts_with("compiled") {
            (cached, compiled + 1)
        } else {
            (cached, compiled)
        }
    })
}

fn list_plugins(options: SessionOptions) -> Result<ExitCode> {
    let dirs = options.plugin_dirs.clone();
    let (grants, runtime) = (options.manager.grants.clone(), options.runtime.clone());
    let session = Session::new(options)?;
    warn_stale_components(&session);
    let plugins = session.features().list();
    println!("{} plugin(s) in {} (host API {API_VERSION})", plugins.len(), display_dirs(&dirs));
    for info in &plugins {
        let m = &info.manifest;
        println!("\n{} {}  [{}]", m.name, m.version, info.state);
        if !m.description.is_empty() {
            println!("  {}", m.description);
        }
        let present = if m.component_path.is_file() { "" } else { "  (missing: build it with `gfhost build`)" };
        println!("  component: {}{present}", m.component_path.display());
        println!("  api: {}", m.api);
        for dep in &m.dependencies {
            println!("  depends on: {}{}", dep.name, if dep.activate { " (activated first)" } else { "" });
        }
        if !m.component_classes.is_empty() {
            println!("  component classes: {}", m.component_classes.join(", "));
        }
        for action in &m.actions {
            println!("  action: {}", action.describe());
        }
        for (bundle, assets) in &m.bundles {
            let names: Vec<&str> = assets.keys().map(String::as_str).collect();
            println!("  bundle {bundle}: {}", names.join(", "));
        }
        println!("  declares: {}", m.permissions);
        println!("  granted: {}", grants.effective(&m.name, &m.permissions));
        let fitted = match runtime.fit_memory_to_components || runtime.fit_deadline_to_components {
            true => format!(" (before fitting to its component: `gfhost check {}` shows them fitted)", m.name),
            false => String::new(),
        };
        println!("  limits: {}{fitted}", Limits::of(&m.name, &runtime));
    }
    report_discovery_errors(&session)
}

fn inspect_plugin(name: &str, options: SessionOptions) -> Result<ExitCode> {
    let dirs = options.plugin_dirs.clone();
    let session = Session::new(options)?;
    let features = session.features();
    let manifest = features.manifest(name).with_context(|| no_plugin_named(name, &dirs))?;
    println!("{} {}", manifest.name, manifest.version);
    println!("  manifest: {}", manifest.manifest_path.display());
    println!("  component: {}", manifest.component_path.display());
    warn_if_stale(&manifest);
    let inspection = session.runtime().inspect_plugin(&manifest)?;
    let how = match inspection.provenance {
        Provenance::Compiled { took } => {
            let counts = session.runtime().compile_counts();
            let functions = counts.functions_reused + counts.functions_compiled;
            let reused = match counts.functions_reused {
                0 => String::new(),
                n => format!(" ({n} of its {functions} functions compiled before, reused)"),
            };
            format!("compiled in {:.1} ms{reused}", took.as_secs_f64() * 1e3)
        }
        Provenance::Cached { took } => format!("loaded from cache in {:.2} ms", took.as_secs_f64() * 1e3),
    };
    println!("  {how}");
    let built_against = inspection.interface.api_version().unwrap_or("no version of it");
    println!("  built against: gamefeature:plugin@{built_against} (manifest: api = {:?})", manifest.api);
    if let Some(path) = &inspection.call_path {
        println!("  calls: {path}");
    }
    let fit = inspection.interface.fit();
    let mark = |problem: &Option<String>| problem.as_deref().map_or("ok".to_string(), |p| format!("NO: {p}"));
    let width = fit.imports.iter().chain(&fit.needed_exports).map(|l| l.name.len()).max().unwrap_or(0).max(20);
    println!("  imports{:w$}  the host provides it?", "", w = width.saturating_sub(5));
    for line in &fit.imports {
        println!("    {:width$}  {}", line.name, mark(&line.problem));
    }
    println!("  exports the world needs{:w$}  the component exports it?", "", w = width.saturating_sub(21));
    for line in &fit.needed_exports {
        println!("    {:width$}  {}", line.name, mark(&line.problem));
    }
    for export in &fit.other_exports {
        println!("    {export:width$}  (also exported; the world does not use it)");
    }
    match inspection.problem {
        None => Ok(ExitCode::SUCCESS),
        Some(problem) => {
            println!("\n  does not fit: {problem}");
            Ok(ExitCode::from(2))
        }
    }
}

/// Warns about plugins whose component is older than their sources: the run would not be what the user just
/// wrote.
fn warn_stale_components(session: &Session) {
    for info in session.features().list() {
        warn_if_stale(&info.manifest);
    }
}

/// Warns when a plugin's component is older than its sources (it is not what the user last wrote, and may have
/// been built against an earlier draft of the WIT).
fn warn_if_stale(manifest: &gamefeature_host::feature::PluginManifest) {
    if let Some(why) = build::staleness(manifest) {
        eprintln!("warning: plugin {}: {why}; rebuild it with `gfhost build`", manifest.name);
    }
}

fn report_discovery_errors(session: &Session) -> Result<ExitCode> {
    let errors = &session.discovery().errors;
    if errors.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!("\n{} problem(s):", errors.len());
    for error in errors {
        eprintln!("  - {error}");
    }
    Ok(ExitCode::from(2))
}

fn display_dirs(dirs: &[PathBuf]) -> String {
    if dirs.is_empty() {
        return "the plugin directories".into();
    }
    dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ")
}

/// Why a plugin named on the command line was not found, and how to point at it: a modder's plugin made outside
/// the project's `plugins/` is found only through `--plugins`.
pub(crate) fn no_plugin_named(name: &str, dirs: &[PathBuf]) -> String {
    format!(
        "no plugin named {name:?} in {}; for a plugin in another folder, give the folder holding its folder with \
         --plugins DIR (e.g. --plugins mods for mods/{name})",
        display_dirs(dirs)
    )
}

/// A join token, from a file or the environment (`GFHOST_TOKEN`) rather than the command line, where every
/// user of the machine can read it (`ps`).
#[derive(clap::Args, Debug)]
struct TokenArgs {
    /// A file holding the token (its first line).
    #[arg(long, conflicts_with = "token")]
    token_file: Option<PathBuf>,
    /// The token itself: visible to every user of the machine (ps); prefer --token-file or GFHOST_TOKEN.
    #[arg(long)]
    token: Option<String>,
}

impl TokenArgs {
    fn secret(&self) -> Result<Option<String>> {
        if let Some(path) = &self.token_file {
            let text = gamefeature_host::files::read_text(path, 64 << 10)
                .with_context(|| format!("reading the token file {}", path.display()))?;
            let token = text.lines().next().unwrap_or_default().trim().to_string();
            if token.is_empty() {
                bail!("the token file {} is empty", path.display());
            }
            return Ok(Some(token));
        }
        if let Some(token) = &self.token {
            return Ok(Some(token.clone()));
        }
        Ok(std::env::var("GFHOST_TOKEN").ok().filter(|token| !token.is_empty()))
    }
}

/// The server a client joins, how it knows the server is the one meant, and what it presents to join.
#[derive(clap::Args, Debug)]
struct JoinArgs {
    /// The server's address: an IP address or a host name, and the port (`game.example.org:7777`).
    #[arg(long, default_value = "127.0.0.1:7777", value_parser = parse_server_address)]
    connect: std::net::SocketAddr,
    #[command(flatten)]
    trust: TrustArgs,
    /// With --ca-cert: the name the server's certificate must be for.
    #[arg(long, default_value = "localhost", requires = "ca_cert")]
    server_name: String,
    #[command(flatten)]
    token: TokenArgs,
}

/// How a client knows the server it reached is the one meant: one of these must be given.
#[derive(clap::Args, Debug)]
#[group(required = true, multiple = false)]
struct TrustArgs {
    /// The sha256 of the server's certificate, as the server prints it at start (`certificate sha256: ...`).
    #[arg(long)]
    server_cert_sha256: Option<String>,
    /// Certificate authorities (PEM) the server's certificate must chain to; the name it must be for is
    /// --server-name.
    #[arg(long)]
    ca_cert: Option<PathBuf>,
    /// INSECURE: accept any certificate. For a development server on this machine only: refused for any other
    /// address.
    #[arg(long)]
    insecure_loopback: bool,
}

impl TrustArgs {
    fn trust(&self, server_name: &str) -> Result<gamefeature_host::net::transport::trust::ServerTrust> {
        use gamefeature_host::net::transport::trust::{Fingerprint, ServerTrust};
        Ok(match (&self.server_cert_sha256, &self.ca_cert) {
            (Some(pin), _) => ServerTrust::Pinned(Fingerprint::parse(pin).map_err(|e| anyhow::anyhow!(e))?),
            (None, Some(roots)) => ServerTrust::roots_from_file(roots, server_name).map_err(|e| anyhow::anyhow!(e))?,
            (None, None) => ServerTrust::InsecureLoopback,
        })
    }
}
