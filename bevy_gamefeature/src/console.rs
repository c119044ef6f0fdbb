//! The web console (`gamefeature_console`) in a Bevy app, as `gfhost server --admin` serves it: the world's
//! actors (a map of those with a position), each plugin's cost, the calls and the log, and behind a token the
//! operator's controls. It is served from the host's own async runtime; after each world step it notes the
//! frame and carries out the actions asked since the last one. Ending the match exits the app.

use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::Duration;

use bevy_app::{App, AppExit, FixedUpdate, Plugin};
use bevy_ecs::prelude::*;
use bevy_time::{Fixed, Time};
use gamefeature_console::{Console, ConsoleOptions, Token};

use crate::features::GameFeatures;
use crate::BridgeSet;

/// Serves the console on `address` (port 0 picks one: read [`ConsoleAddress`]). Add it after inserting
/// [`GameFeatures`].
pub struct GameFeatureConsolePlugin {
    /// Where to serve it: loopback, unless it is to be read-only.
    pub address: SocketAddr,
    /// The token actions need (at least 16 characters); read-only without one.
    pub token: Option<String>,
}

/// Where the console is served.
#[derive(Resource, Debug, Clone, Copy)]
pub struct ConsoleAddress(pub SocketAddr);

#[derive(Resource)]
struct ServedConsole(Mutex<Console>);

impl Plugin for GameFeatureConsolePlugin {
    fn build(&self, app: &mut App) {
        let features = app.world().get_resource::<GameFeatures>().expect(crate::NEEDS_GAME_FEATURES);
        let frame_period = app.world().get_resource::<Time<Fixed>>().map_or(Duration::ZERO, Time::timestep);
        let experience = features.with_loop(|game| game.manager().current().map(|d| d.name.clone()));
        let token = match self.token.as_deref().map(Token::new).transpose() {
            Ok(token) => token,
            Err(why) => {
                tracing::error!("the console: {why}; it is read-only");
                None
            }
        };
        let options = ConsoleOptions { experience: experience.unwrap_or_default(), frame_period, ..Default::default() };
        let console = Console::new(options, token);
        match serve(features, &console, self.address) {
            Ok(bound) => {
                tracing::info!("the console on http://{bound}/");
                if let Some(why) = console.read_only() {
                    tracing::info!("the console is {why}");
                }
                app.insert_resource(ConsoleAddress(bound))
                    .insert_resource(ServedConsole(Mutex::new(console)))
                    .add_systems(FixedUpdate, follow.after(BridgeSet::Step).before(BridgeSet::FromWorld));
            }
            Err(e) => tracing::error!("the console could not be served on {}: {e}", self.address),
        }
    }
}

/// Serves `console` on `address` from the host's async runtime; the address bound.
fn serve(features: &GameFeatures, console: &Console, address: SocketAddr) -> std::io::Result<SocketAddr> {
    let host = features.lock();
    let listener = host.tokio.block_on(tokio::net::TcpListener::bind(address))?;
    let bound = listener.local_addr()?;
    let app = console.router(bound).into_make_service_with_connect_info::<SocketAddr>();
    host.tokio.spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!("the console stopped: {e}");
        }
    });
    Ok(bound)
}

/// After the world's step: the console notes it, and the operator's actions are carried out.
fn follow(features: Res<'_, GameFeatures>, served: Res<'_, ServedConsole>, mut exit: MessageWriter<'_, AppExit>) {
    let mut console = served.0.lock().unwrap_or_else(|e| e.into_inner());
    let mut host = features.lock();
    let took = host.last_step.as_ref().map_or(Duration::ZERO, |step| step.took);
    let crate::features::Host { game, session, last_step, .. } = &mut *host;
    let Some(game) = game.as_mut() else { return };
    // What the step did that a person follows: new versions applied (or refused), as the log strip shows them.
    for reload in last_step.iter().flat_map(|step| &step.reloads) {
        match &reload.outcome {
            Ok(said) => console.log(said),
            Err(why) => console.log(&format!("error: reloading {}: {why}", reload.plugin)),
        }
    }
    console.frame(game, took);
    for applied in console.apply(game, session) {
        tracing::info!("{}", applied.line);
    }
    if let Some(why) = console.end_asked() {
        tracing::info!("ending play: {why}");
        exit.write(AppExit::Success);
    }
}
