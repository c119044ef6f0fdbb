//! `gfhost play`: an experience loaded into a world that keeps running until told to stop, changed by
//! commands typed at a console (line editing and history) or read from a script.

use std::io::{BufRead, IsTerminal};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use gamefeature_host::live::{Command, LiveWorld, HELP};
use gamefeature_host::world::NetMode;
use gamefeature_host::{Session, SessionOptions};

/// Where commands come from.
enum Input {
    Script(Vec<String>),
    Console(Box<rustyline::DefaultEditor>),
    Piped(std::io::StdinLock<'static>),
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
            Input::Piped(stdin) => {
                let mut line = String::new();
                (stdin.read_line(&mut line).ok()? > 0).then_some(line)
            }
        }
    }
}

pub fn play(
    path: &Path,
    net_mode: NetMode,
    players: usize,
    script: Option<&Path>,
    options: SessionOptions,
) -> Result<ExitCode> {
    let mut input = match script {
        Some(script) => {
            let text = std::fs::read_to_string(script).with_context(|| format!("reading {}", script.display()))?;
            Input::Script(text.lines().map(str::to_string).collect())
        }
        None if std::io::stdin().is_terminal() => Input::Console(Box::new(rustyline::DefaultEditor::new()?)),
        None => Input::Piped(std::io::stdin().lock()),
    };
    let echo = !matches!(input, Input::Console(_));
    let tokio = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let session = Session::new(options)?;
    let mut manager = session.create_world("main", net_mode);
    tokio.block_on(manager.load(path))?;
    let mut world = LiveWorld::new(manager, &session);
    println!("{} loaded; commands: {HELP}", path.display());
    if players > 0 {
        println!("{}", tokio.block_on(world.execute(&Command::Spawn(players))).unwrap_or_else(|e| e));
    }
    while let Some(line) = input.next_line() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if echo {
            println!("> {line}");
        }
        let command = match line.parse::<Command>() {
            Ok(command) => command,
            Err(e) => {
                println!("error: {e}");
                continue;
            }
        };
        match tokio.block_on(world.execute(&command)) {
            Ok(text) if text.is_empty() => {}
            Ok(text) => println!("{text}"),
            Err(e) => println!("error: {e}"),
        }
        if command == Command::Quit {
            break;
        }
    }
    let mut manager = world.into_manager();
    tokio.block_on(manager.end_play())?;
    let failures = &manager.report().failures;
    if failures.is_empty() {
        println!("play ended; nothing failed");
        return Ok(ExitCode::SUCCESS);
    }
    println!("play ended; {} failure(s):", failures.len());
    for failure in failures {
        println!("  - {failure}");
    }
    Ok(ExitCode::from(2))
}
