//! Running a toolchain's command with its output kept for the error, so a failed build says what the tool said.

use std::process::Command;

use anyhow::{bail, Context, Result};

/// How many of a failing tool's last output lines an error quotes.
const QUOTED_LINES: usize = 40;

/// Runs `command` for `what` as [`run`] does; when it succeeds, what it printed on its standard error (a
/// compiler's warnings) is printed on ours, each line after `what`.
pub fn run_showing_warnings(what: &str, command: &mut Command) -> Result<()> {
    let mut shown = Vec::new();
    run_keeping(what, command, &mut shown)?;
    for line in String::from_utf8_lossy(&shown).lines().filter(|line| !line.trim().is_empty()) {
        eprintln!("{what}: {line}");
    }
    Ok(())
}

/// Runs `command` for `what` (e.g. "plugin scoreboard: componentize-py"); on failure, the error quotes the end of
/// what the tool printed.
pub fn run(what: &str, command: &mut Command) -> Result<()> {
    run_keeping(what, command, &mut Vec::new())
}

/// [`run`], keeping the standard error of a run that succeeded in `stderr`.
fn run_keeping(what: &str, command: &mut Command, stderr: &mut Vec<u8>) -> Result<()> {
    // componentize-py is a Rust program: with a backtrace asked for, its last lines would be the backtrace
    // of its own panic, not the plugin's error.
    command.env_remove("RUST_BACKTRACE").env_remove("RUST_LIB_BACKTRACE");
    let output = command.output().with_context(|| format!("{what}: cannot start {:?}", command.get_program()))?;
    if output.status.success() {
        *stderr = output.stderr;
        return Ok(());
    }
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    let lines: Vec<&str> = text.lines().filter(|line| !line.trim().is_empty()).collect();
    let quoted = lines[lines.len().saturating_sub(QUOTED_LINES)..].join("\n    ");
    bail!("{what} failed ({}):\n    {quoted}", output.status)
}
