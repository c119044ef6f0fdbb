//! Running a toolchain's command with its output kept for the error, so a failed build says what the tool said.

use std::process::Command;

use anyhow::{bail, Context, Result};

/// How many of a failing tool's last output lines an error quotes.
const QUOTED_LINES: usize = 40;

/// Runs `command` for `what` (e.g. "plugin scoreboard: componentize-py"); on failure, the error quotes the end of
/// what the tool printed.
pub fn run(what: &str, command: &mut Command) -> Result<()> {
    // componentize-py is a Rust program: with a backtrace asked for, its last lines would be the backtrace
    // of its own panic, not the plugin's error.
    command.env_remove("RUST_BACKTRACE").env_remove("RUST_LIB_BACKTRACE");
    let output = command.output().with_context(|| format!("{what}: cannot start {:?}", command.get_program()))?;
    if output.status.success() {
        return Ok(());
    }
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    let lines: Vec<&str> = text.lines().filter(|line| !line.trim().is_empty()).collect();
    let quoted = lines[lines.len().saturating_sub(QUOTED_LINES)..].join("\n    ");
    bail!("{what} failed ({}):\n    {quoted}", output.status)
}
