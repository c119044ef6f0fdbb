//! The frame loop's side of the console: snapshots built from the loop's world, and the operator's actions
//! carried out between frames, each logged with who asked and when. What takes long is done off the frame: a
//! reload compiles its new version on the loop's runtime (the loop's own `reload`), and an activation first
//! brings the plugin to `Loaded` there (compiled, or read from the cache), then activates it in the world
//! between frames.

use std::path::PathBuf;

use gamefeature_host::game_loop::{GameLoop, Played};
use gamefeature_host::live::Command;
use gamefeature_host::world::{self, ClientId};
use gamefeature_host::Session;

use crate::actions::Action;
use crate::snapshot::{self, ActionsView, PluginView, Snapshot, WorldView};
use crate::Console;

/// An action the endpoint checked, waiting for the frame loop.
pub(crate) struct Request {
    pub action: Action,
    /// Who asked: the console's operator, from which address.
    pub who: String,
    pub reply: tokio::sync::oneshot::Sender<Result<String, String>>,
}

/// An activation waiting for its plugin to be compiled off the frame.
pub(crate) struct Preparing {
    request: Request,
    task: tokio::task::JoinHandle<Result<(), String>>,
}

/// An action carried out (or refused) between frames, for the program to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// What was asked.
    pub action: Action,
    /// What came of it.
    pub outcome: Result<String, String>,
    /// The audit line: when, who, what, and what came of it.
    pub line: String,
}

impl Console {
    /// Carries out the actions asked since the last frame, in order; what came of each (also in the log
    /// strip). Call between frames. An `end-match` is remembered ([`end_asked`](Self::end_asked)): ending play
    /// is the program's.
    pub fn apply(&mut self, game: &mut GameLoop, session: &Session) -> Vec<Applied> {
        let mut applied = Vec::new();
        // Activations whose plugin is now compiled, in the order they were asked.
        let (ready, waiting): (Vec<Preparing>, Vec<Preparing>) =
            std::mem::take(&mut self.preparing).into_iter().partition(|p| p.task.is_finished());
        self.preparing = waiting;
        for prepared in ready {
            let compiled = game.tokio().block_on(prepared.task).unwrap_or_else(|e| Err(e.to_string()));
            let outcome = compiled.and_then(|()| self.carry_out(game, session, &prepared.request.action));
            applied.push(self.answer(prepared.request, outcome));
        }
        while let Ok(request) = self.requests.try_recv() {
            if let Some(task) = Self::prepare(game, &request.action) {
                self.preparing.push(Preparing { request, task });
                continue;
            }
            let outcome = self.carry_out(game, session, &request.action);
            applied.push(self.answer(request, outcome));
        }
        applied
    }

    /// An activation of a plugin not compiled yet: its compile (with its dependencies'), off the frame.
    fn prepare(game: &GameLoop, action: &Action) -> Option<tokio::task::JoinHandle<Result<(), String>>> {
        let Action::Activate { plugin } = action else { return None };
        let features = game.manager().features().clone();
        if features.code(plugin).is_some() || features.state(plugin).is_none() {
            return None;
        }
        let plugin = plugin.clone();
        Some(game.tokio().spawn(async move { features.load(&plugin).await.map_err(|e| e.to_string()) }))
    }

    /// Answers `request` with `outcome`, logging it: when, who, what, and what came of it, on one line.
    fn answer(&mut self, request: Request, outcome: Result<String, String>) -> Applied {
        let when =
            time::OffsetDateTime::now_utc().format(&time::format_description::well_known::Rfc3339).unwrap_or_default();
        let shown = match &outcome {
            Ok(text) => text.clone(),
            Err(why) => format!("refused: {why}"),
        };
        let line = gamefeature_host::text::shown(
            &format!("console: {when} {} asked to {}: {shown}", request.who, request.action),
            gamefeature_host::text::MAX_CAUSE,
        );
        self.log(&line);
        let _ = request.reply.send(outcome.clone());
        Applied { action: request.action, outcome, line }
    }

    fn carry_out(&mut self, game: &mut GameLoop, session: &Session, action: &Action) -> Result<String, String> {
        let command = |command: Command, line: String, game: &mut GameLoop| {
            game.execute(session, &command, &line).map_err(|e| e.to_string())
        };
        match action {
            Action::Reload { plugin } => {
                if game.client().is_some() {
                    return Err("a client's plugins are its server's: they reload when the server's do".to_string());
                }
                if !game.manager().wanted_features().contains(plugin) {
                    return Err(format!("{plugin} is not played in this world"));
                }
                game.reload(plugin);
                Ok(format!("reloading {plugin}: its new version compiles off the frame, then replaces it"))
            }
            Action::Activate { plugin } => {
                command(Command::Activate(plugin.clone()), format!("activate {plugin}"), game)
            }
            Action::Deactivate { plugin } => {
                command(Command::Deactivate(plugin.clone()), format!("deactivate {plugin}"), game)
            }
            Action::Install { path } => command(Command::Install(PathBuf::from(path)), format!("install {path}"), game),
            Action::Kick { client, reason } => {
                if game.is_recorded() {
                    return Err(
                        "a recorded server's clients leave only by play (its replay could not follow)".to_string()
                    );
                }
                let Some(server) = game.server_mut() else {
                    return Err("only a server has clients to kick".to_string());
                };
                let reason = reason.as_deref().filter(|r| !r.trim().is_empty()).unwrap_or("by the server's operator");
                let reason = gamefeature_host::text::shown(reason, 200);
                match server.kick(ClientId(*client), &reason) {
                    true => Ok(format!("client {client} kicked")),
                    false => Err(format!("client {client} is not connected")),
                }
            }
            Action::EndMatch { reason } => {
                let reason = reason.as_deref().filter(|r| !r.trim().is_empty()).unwrap_or("the operator ended it");
                self.end_asked = Some(gamefeature_host::text::shown(reason, 200));
                Ok("ending the match".to_string())
            }
        }
    }
}

/// The snapshot of `game` now, `seconds` after the last one (for rates).
pub(crate) fn snapshot_of(console: &mut Console, game: &GameLoop, seconds: f64) -> Snapshot {
    let manager = game.manager();
    let now_ms = console.shared.now_ms();
    console.recent.read_timeline(manager.timeline(), now_ms);
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
    let (actors, classes, actors_total) = {
        let w = world::lock(manager.world());
        snapshot::actors_of(&w)
    };
    let clients = match game.played() {
        Played::Server(server) => snapshot::clients_of(server, &mut console.client_traffic, seconds),
        _ => Vec::new(),
    };
    let (wanted, live) = (manager.wanted_features(), manager.live_features());
    let plugins = manager
        .features()
        .list()
        .into_iter()
        .map(|info| {
            let m = &info.manifest;
            let record = console.recent.plugins.get(&m.name);
            PluginView {
                name: m.name.clone(),
                version: m.version.clone(),
                state: info.state.to_string(),
                in_world: if live.contains(&m.name) {
                    "running"
                } else if wanted.contains(&m.name) {
                    "out"
                } else {
                    "installed"
                }
                .to_string(),
                api: m.api.clone(),
                publisher: console.options.publishers.get(&m.name).cloned(),
                asked: m.permissions.to_string(),
                granted: manager.grants().effective(&m.name, &m.permissions).to_string(),
                limited_by: m.permissions_limited_by().map(str::to_string),
                cpu_us: record.map(|r| r.cpu_us.iter().copied().collect()).unwrap_or_default(),
                calls: record.map_or(0, |r| r.calls),
                quarantines: record.map_or(0, |r| r.quarantines),
                restarts: record.map_or(0, |r| r.restarts),
                incidents: record.map(|r| r.incidents.iter().cloned().collect()).unwrap_or_default(),
            }
        })
        .collect();
    let token = console.shared.token.get();
    Snapshot {
        seq: console.seq,
        at_ms: console.shared.now_ms(),
        world: WorldView {
            name: manager.world_name().to_string(),
            net_mode: match game.played() {
                Played::Standalone(_) => "standalone",
                Played::Server(_) => "server",
                Played::Client(_) => "client",
            }
            .to_string(),
            experience: console.options.experience.clone(),
            load_state: format!("{:?}", manager.state()),
            frame_ms: ms(console.last_frame),
            frame_period_ms: ms(console.options.frame_period),
            frame_budget_ms: console.options.frame_budget.map(ms),
            frames: console.frames,
        },
        actors,
        classes,
        actors_total,
        plugins,
        clients,
        calls: console.recent.calls.iter().cloned().collect(),
        log: console.recent.log.iter().cloned().collect(),
        actions: ActionsView {
            allowed: token.is_some_and(|t| t.is_ok()),
            why_not: token.and_then(|t| t.as_ref().err().cloned()),
        },
    }
}
