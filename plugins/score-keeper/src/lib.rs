//! Scores every player as time passes — a point a second, on the server — so a networked game shows replicated
//! values arriving: the score is a replicated property (`[components.replicated]` in `plugin.toml`), written
//! only where the world has authority; each client is told every new score it receives (`on_replicated`), and
//! logs it.

use std::time::Duration;

use gamefeature_sdk::timers::{self, Timer};
use gamefeature_sdk::world::{self, ActorId};
use gamefeature_sdk::{export_plugin, log, ActivationContext, Frame, Plugin, Value};

const SCORE: &str = "ScoreComponent";
const EVERY_SECOND: u32 = 1;

#[derive(Default)]
struct ScoreKeeper {
    timer: Option<Timer>,
}

impl Plugin for ScoreKeeper {
    fn on_activating(&mut self, context: &ActivationContext) -> Result<(), String> {
        // Clients only hear scores: the server keeps them.
        if context.net_mode != gamefeature_sdk::NetMode::Client {
            self.timer = Some(timers::every(Duration::from_secs(1), EVERY_SECOND).map_err(|e| format!("{e:?}"))?);
        }
        Ok(())
    }

    fn on_timer(&mut self, _timer: u32, times: u32, _frame: &Frame) {
        let Ok(players) = world::actors_of_class("PlayerState") else { return };
        for player in players {
            if matches!(world::has_authority(player), Ok(true)) {
                add_points(player, times.into());
            }
        }
    }

    fn on_replicated(&mut self, actor: ActorId, _component: &str, _property: &str, old: Option<&Value>, new: &Value) {
        let shown = |v: Option<&Value>| match v {
            Some(Value::Integer(points)) => points.to_string(),
            _ => "none".to_string(),
        };
        log::info(&format!("score of player {actor}: {} -> {}", shown(old), shown(Some(new))));
    }
}

fn add_points(player: ActorId, points: i64) {
    let score = match world::get_property(player, SCORE, "score") {
        Ok(Some(Value::Integer(score))) => score,
        Ok(_) => 0,
        Err(_) => return, // no score component on this one
    };
    if let Err(e) = world::set_property(player, SCORE, "score", &Value::Integer(score + points)) {
        log::warn(&format!("scoring player {player}: {e:?}"));
    }
}

export_plugin!(ScoreKeeper);
