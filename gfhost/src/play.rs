//! `gfhost play`: an experience loaded into a world that keeps running until told to stop. The world runs in
//! frames at its tick rate on the main thread (timers fire, plugins' frame budgets are kept); commands typed at
//! a console (line editing and history, on a thread of its own) or read from a script, and new versions of
//! plugins found by `--watch` (built again first when their sources changed), are applied between frames.

use std::io::{BufRead, IsTerminal};
use std::path::Path;
use std::process::ExitCode;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Instant;

use anyhow::{Context, Result};
use gamefeature_host::game_loop::{frame_of, GameLoop, Pace, Played};
use gamefeature_host::live::{Command, HELP};
use gamefeature_host::recording::Role;
use gamefeature_host::world::NetMode;
use gamefeature_host::{Session, SessionOptions};

/// Where commands come from.
enum Input {
    Script(Vec<String>),
    Console(Box<rustyline::DefaultEditor>),
    Piped,
}

impl Input {
    /// The next command line, or `None` at the end of the input.
    fn next_line(&mut self) -> Option<String> {
        match self {
            Input::Script(lines) => (!lines.is_empty()).then(|| lines.remove(0)),
            Input::Console(editor) => match editor.readline("gfhost> ") {
                Ok(line) => {
                    let _ = editor.add_history_entry(line.as_str());
                    Some(line)
                }
                Err(_) => None,
            },
            Input::Piped => {
                let mut line = String::new();
                (std::io::stdin().lock().read_line(&mut line).ok()? > 0).then_some(line)
            }
        }
    }
}

/// Follows the timeline for what plugins say (their log lines at info and above) and what happens to them
/// (failures, quarantines, reloads and restarts), printed as it happens: a modder sees their plugin at work.
/// With `only`, what the other plugins say is left out (what happens to them still shows: a quarantine
/// elsewhere may be the modder's doing).
#[derive(Default)]
struct PluginLines {
    next: u64,
    only: Vec<String>,
}

impl PluginLines {
    fn print_new(&mut self, timeline: &gamefeature_host::Timeline) {
        use gamefeature_host::timeline::{EventKind, LogLevel};
        let (events, next) = timeline.events_since(self.next);
        self.next = next;
        for event in events {
            let plugin = event.track.strip_prefix("plugin:").map(|p| p.split('@').next().unwrap_or(p));
            let wanted = |plugin: &str| self.only.is_empty() || self.only.iter().any(|only| only == plugin);
            let shown = match event.kind {
                EventKind::Log(level) if level >= LogLevel::Info => plugin.is_some_and(wanted),
                EventKind::Failure | EventKind::Restart => true,
                // A plugin's own track (not one of its instances'): its reloads and restarts.
                EventKind::Note => event.track.strip_prefix("plugin:").is_some_and(|plugin| !plugin.contains('@')),
                _ => false,
            };
            if shown {
                println!("[{}] {}", event.track.strip_prefix("plugin:").unwrap_or(&event.track), event.text);
            }
        }
    }
}

/// The console's `only NAME ...` (show only these plugins' lines, as `--only` does) or a bare `only` (show every
/// plugin's again): the names, if `line` is one.
fn only_command(line: &str) -> Option<Vec<String>> {
    let mut words = line.split_whitespace();
    (words.next() == Some("only")).then(|| words.map(str::to_string).collect())
}

pub struct PlayOptions<'a> {
    pub net_mode: NetMode,
    pub players: usize,
    pub script: Option<&'a Path>,
    /// Reload a plugin when its component or manifest changes on disk.
    pub watch: bool,
    /// Frames per second.
    pub tick_rate: u32,
    /// Record the session to this file.
    pub record: Option<&'a Path>,
    /// The web console and health endpoints, when asked for.
    pub admin: crate::admin::console::AdminArgs,
    /// Print only these plugins' log lines (all plugins' when empty).
    pub only: Vec<String>,
}

pub fn play(path: &Path, play: PlayOptions<'_>, options: SessionOptions) -> Result<ExitCode> {
    let input = match play.script {
        Some(script) => {
            let text = std::fs::read_to_string(script).with_context(|| format!("reading {}", script.display()))?;
            Input::Script(text.lines().map(str::to_string).collect())
        }
        None if std::io::stdin().is_terminal() => Input::Console(Box::new(rustyline::DefaultEditor::new()?)),
        None => Input::Piped,
    };
    let echo = !matches!(input, Input::Console(_));
    let tokio = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let session = Session::new(options.clone())?;
    let mut manager = session.create_world("main", play.net_mode);
    let mut recording = match play.record {
        Some(file) => {
            let recorded = crate::record::Recorded {
                role: Role::Standalone,
                experience: Some(path),
                experiences_dir: None,
                mods: None,
                world: "main",
                net_mode: play.net_mode,
                tick_rate: play.tick_rate,
            };
            Some(crate::record::start(file, recorded, &options, &mut manager)?)
        }
        None => None,
    };
    crate::progress::while_loading(&session, || tokio.block_on(manager.load(path)))?;
    if let Some(recording) = &mut recording {
        recording.checkpoint(&manager);
    }
    let mut game = GameLoop::new(Played::Standalone(Box::new(manager)), tokio.handle().clone());
    let health = crate::admin::ServerHealth::new(prometheus_client::registry::Registry::default());
    let mut console = crate::admin::console::start(&play.admin, path, play.tick_rate, &options, &health, &tokio)?;
    health.set_ready(true);
    if let Some(recording) = recording {
        game = game.recorded(recording);
    }
    // Watching starts before anything is announced: a change made once the world says it is loaded is seen.
    if play.watch {
        let folders = crate::rebuild::watched_folders(&game.plugin_folders());
        game.watch(&folders).context("watching the plugin folders")?;
    }
    println!("{} loaded; commands: {HELP} | only [NAME ...]", path.display());
    if play.watch {
        println!(
            "watching the folders of {} plugin(s) for new versions (and their sources, to build them again)",
            game.plugin_folders().len()
        );
    }
    if play.players > 0 {
        let spawn = Command::Spawn(play.players);
        println!(
            "{}",
            game.execute(&session, &spawn, &format!("spawn {}", play.players)).unwrap_or_else(|e| e.to_string())
        );
    }

    // The console reads on its own thread and waits for each command to be carried out before prompting again.
    let (lines, commands) = mpsc::channel::<String>();
    let (done, finished) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        let mut input = input;
        while let Some(line) = input.next_line() {
            if lines.send(line).is_err() || finished.recv().is_err() {
                break;
            }
        }
    });

    let known: Vec<String> = session.features().list().into_iter().map(|p| p.manifest.name.clone()).collect();
    if let Some(unknown) = play.only.iter().find(|name| !known.contains(name)) {
        anyhow::bail!("--only {unknown}: no such plugin is installed (installed: {})", known.join(", "));
    }
    if !play.only.is_empty() {
        println!("showing what {} say(s); the other plugins' lines are left out", play.only.join(", "));
    }
    let mut plugin_lines = PluginLines { next: 0, only: play.only.clone() };
    let frame = frame_of(play.tick_rate.into());
    let mut pace = Pace::new(frame);
    let mut waiting_until: Option<Instant> = None;
    // The lines of a script that were refused, to fail the run with.
    let mut refused: Vec<String> = Vec::new();
    // Plugins being built again from changed sources (their new components are then reloaded by the loop).
    let mut rebuilds = crate::rebuild::Rebuilds::default();
    // Why play ends: `quit` (or the end of the script), or the reason the console's operator gave.
    let mut ended_by = "quit".to_string();
    loop {
        if pace.due() {
            let step = game.step(frame);
            let mut said: Vec<String> =
                step.reloads.into_iter().map(|r| r.outcome.unwrap_or_else(|e| format!("error: {e}"))).collect();
            said.extend(step.compiling.iter().map(|plugin| crate::rebuild::compiling(plugin)));
            said.extend(rebuilds.follow(&tokio, &game.plugin_folders(), &step.changed));
            for line in said {
                println!("{line}");
                if let Some(console) = console.as_mut() {
                    console.log(&line);
                }
            }
            plugin_lines.print_new(session.timeline());
            health.frame_done();
            let followed = crate::admin::console::after_frame(console.as_mut(), &mut game, &session, step.took);
            if followed.plugins_changed && play.watch {
                if let Err(e) = game.watch(&crate::rebuild::watched_folders(&game.plugin_folders())) {
                    println!("error: watching the plugin folders: {e}");
                }
            }
            if let Some(why) = followed.end {
                println!("ending play: {why}");
                ended_by = why;
                break;
            }
        }
        if let Some(until) = waiting_until {
            if Instant::now() < until {
                std::thread::sleep(pace.until_next());
                continue;
            }
            waiting_until = None;
            let _ = done.send(());
        }
        let line = match commands.recv_timeout(pace.until_next()) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            let _ = done.send(());
            continue;
        }
        if echo {
            println!("> {line}");
        }
        // What the console shows, not what the world does: never recorded, taken by every world.
        if let Some(names) = only_command(line) {
            let known: Vec<String> = session.features().list().into_iter().map(|p| p.manifest.name.clone()).collect();
            if let Some(unknown) = names.iter().find(|name| !known.contains(name)) {
                println!("error: only {unknown}: no such plugin is installed (installed: {})", known.join(", "));
                refused.push(line.to_string());
                let _ = done.send(());
                continue;
            }
            plugin_lines.only = names;
            match plugin_lines.only.is_empty() {
                true => println!("showing every plugin's lines"),
                false => println!(
                    "showing what {} say(s); the other plugins' lines are left out",
                    plugin_lines.only.join(", ")
                ),
            }
            let _ = done.send(());
            continue;
        }
        let command = match line.parse::<Command>() {
            Ok(command) => command,
            Err(e) => {
                println!("error: {e}");
                refused.push(line.to_string());
                let _ = done.send(());
                continue;
            }
        };
        if let Command::Wait(duration) = command {
            // The world keeps running (and watching) while a script waits.
            waiting_until = Some(Instant::now() + duration);
            continue;
        }
        let outcome = game.execute(&session, &command, line);
        // Features activated, installed or gone: their folders are watched from now on (before the outcome is
        // told, so a change made once it is is seen), or no longer.
        if play.watch {
            if let Err(e) = game.watch(&crate::rebuild::watched_folders(&game.plugin_folders())) {
                println!("error: watching the plugin folders: {e}");
            }
        }
        match outcome {
            Ok(text) if text.is_empty() => {}
            Ok(text) => println!("{text}"),
            Err(e) => {
                println!("error: {e}");
                refused.push(line.to_string());
            }
        }
        if command == Command::Quit {
            break;
        }
        let _ = done.send(());
    }
    let ended = game.end(&ended_by, frame, &mut ())?;
    if let (Some(recording), Some(file)) = (ended.recording, play.record) {
        crate::record::said(recording, file);
    }
    let manager = ended.manager;
    plugin_lines.print_new(session.timeline());
    let failures = &manager.report().failures;
    // A script is a test of sorts: a command of it that was refused (a reload that did not take, a typo) fails
    // the run. At a console, the person typing saw the refusal.
    let refused_in_script = if play.script.is_some() { refused.as_slice() } else { &[] };
    if failures.is_empty() && refused_in_script.is_empty() {
        println!("play ended; nothing failed");
        return Ok(ExitCode::SUCCESS);
    }
    if !refused_in_script.is_empty() {
        println!("{} script command(s) refused:", refused_in_script.len());
        for line in refused_in_script {
            println!("  - {line}");
        }
        if failures.is_empty() {
            println!("play ended; nothing failed in the world");
            return Ok(ExitCode::from(1));
        }
    }
    println!("play ended; {} failure(s):", failures.len());
    for failure in failures {
        println!("  - {failure}");
    }
    Ok(ExitCode::from(2))
}

#[cfg(test)]
mod tests {
    use super::only_command;

    #[test]
    fn only_names_the_plugins_to_show_and_alone_shows_them_all() {
        assert_eq!(only_command("only hud  scoreboard"), Some(vec!["hud".to_string(), "scoreboard".to_string()]));
        assert_eq!(only_command("only"), Some(vec![]));
        assert_eq!(only_command("onlyhud"), None);
        assert_eq!(only_command("reload hud"), None);
    }
}
