//! `--admin` for people: the web console (`gamefeature_console`) served beside `/metrics`, fed by the frame
//! loop of `gfhost server` or `gfhost play`, its actions carried out between their frames.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use gamefeature_console::{Action, Console, ConsoleOptions, Token};
use gamefeature_host::game_loop::GameLoop;
use gamefeature_host::package::lock::{LockFile, LOCK_FILE};
use gamefeature_host::{Session, SessionOptions};

use super::ServerHealth;

/// The environment variable a console's token may come from.
const TOKEN_VARIABLE: &str = "GFHOST_ADMIN_TOKEN";

/// The token `GFHOST_ADMIN_TOKEN` held when the process started.
static TOKEN_FROM_ENVIRONMENT: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();

/// Takes the console's token out of the environment, keeping it for [`start`]: the programs `gfhost` runs (a
/// plugin's build, with its build scripts) never see it. Call first thing in `main`, while the process has one
/// thread.
pub fn take_token_from_environment() {
    let token = std::env::var(TOKEN_VARIABLE).ok().filter(|t| !t.is_empty());
    // Before any other thread exists: nothing reads the environment meanwhile.
    std::env::remove_var(TOKEN_VARIABLE);
    let _ = TOKEN_FROM_ENVIRONMENT.set(token);
}

/// The admin endpoint's options, shared by `server` and `play`.
#[derive(clap::Args, Debug, Clone)]
pub struct AdminArgs {
    /// Serve the web console at /, with /metrics (Prometheus), /healthz and /readyz, on this address [default
    /// when given without one: 127.0.0.1:9100].
    #[arg(long, num_args = 0..=1, default_missing_value = "127.0.0.1:9100")]
    pub admin: Option<SocketAddr>,
    /// A file holding the console's token (at least 16 characters), which its actions need (reload, activate,
    /// deactivate, install, kick, end the match); GFHOST_ADMIN_TOKEN otherwise. Without one the console is
    /// read-only, and so is a console served off loopback.
    #[arg(long, requires = "admin")]
    pub admin_token_file: Option<PathBuf>,
}

impl AdminArgs {
    /// The console's token, from its file or the environment.
    fn token(&self) -> Result<Option<Token>> {
        let text = match &self.admin_token_file {
            Some(path) => Some(
                gamefeature_host::files::read_text(path, 64 << 10)
                    .with_context(|| format!("reading the console's token file {}", path.display()))?,
            ),
            None => TOKEN_FROM_ENVIRONMENT.get().cloned().flatten(),
        };
        let from = || match &self.admin_token_file {
            Some(path) => path.display().to_string(),
            None => TOKEN_VARIABLE.to_string(),
        };
        text.map(|t| Token::new(t.lines().next().unwrap_or_default()).map_err(|e| anyhow::anyhow!("{}: {e}", from())))
            .transpose()
    }
}

/// The endpoint started for `args` (when it asks for one), with its console: the console is `None` when no
/// endpoint is served.
pub fn start(
    args: &AdminArgs,
    experience: &Path,
    tick_rate: u32,
    options: &SessionOptions,
    health: &Arc<ServerHealth>,
    tokio: &tokio::runtime::Runtime,
) -> Result<Option<Console>> {
    let Some(address) = args.admin else { return Ok(None) };
    let publishers = LockFile::read(Path::new(LOCK_FILE))
        .map(|lock| lock.packages.into_iter().filter_map(|p| Some((p.name, p.publisher?))).collect())
        .unwrap_or_default();
    let console = Console::new(
        ConsoleOptions {
            experience: experience.display().to_string(),
            frame_period: Duration::from_secs_f64(1.0 / f64::from(tick_rate.max(1))),
            frame_budget: Some(options.runtime.frame_budget),
            publishers,
        },
        args.token()?,
    );
    let bound = super::serve(address, health.clone(), Some(&console), tokio)?;
    println!("admin endpoint on http://{bound} (the console at /; /metrics, /healthz, /readyz)");
    if !bound.ip().is_loopback() {
        eprintln!("note: the admin endpoint on {bound} is reachable from other machines");
    }
    if let Some(why) = console.read_only() {
        println!("the console is {why}");
    }
    Ok(Some(console))
}

/// What the operator did through the console after a frame.
#[derive(Debug, Default)]
pub struct Followed {
    /// Plugins were activated, deactivated or installed: the folders a watcher follows may have changed.
    pub plugins_changed: bool,
    /// Why play is to end, when the operator ended the match.
    pub end: Option<String>,
}

/// After a frame: the console notes it, then takes the operator's actions; each is printed, with who and when.
pub fn after_frame(console: Option<&mut Console>, game: &mut GameLoop, session: &Session, took: Duration) -> Followed {
    let Some(console) = console else { return Followed::default() };
    console.frame(game, took);
    let mut followed = Followed::default();
    for applied in console.apply(game, session) {
        println!("{}", applied.line);
        followed.plugins_changed |= applied.outcome.is_ok()
            && matches!(applied.action, Action::Activate { .. } | Action::Deactivate { .. } | Action::Install { .. });
    }
    followed.end = console.end_asked().map(str::to_string);
    followed
}
