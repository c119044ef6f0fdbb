//! Scores every player as time passes — a point a second, on the server — so a networked game shows replicated
//! values arriving: the score is a replicated property (`[components.replicated]` in `plugin.toml`), written
//! only where the world has authority; each client is told every new score it receives (`on_replicated`), and
//! logs it. What a plugin writes goes with it when it is reloaded, so the scores cross a hot reload in its
//! snapshot: the new version writes them back as it is restored.

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

    /// The scores, as `player score` lines.
    fn snapshot(&mut self) -> Option<Vec<u8>> {
        let players = world::actors_of_class("PlayerState").ok()?;
        let lines: Vec<String> = players
            .into_iter()
            .filter_map(|player| match world::get_property(player, SCORE, "score") {
                Ok(Some(Value::Integer(score))) => Some(format!("{player} {score}")),
                _ => None,
            })
            .collect();
        Some(lines.join("\n").into_bytes())
    }

    /// Writes back the scores the version before kept (players gone since are skipped).
    fn restore(&mut self, state: &[u8]) -> Result<(), String> {
        let text = std::str::from_utf8(state).map_err(|e| format!("a snapshot of scores is text: {e}"))?;
        for line in text.lines() {
            let parsed =
                line.split_once(' ').and_then(|(player, score)| Some((player.parse().ok()?, score.parse().ok()?)));
            let Some((player, score)) = parsed else {
                return Err(format!("not a score: {line:?}"));
            };
            let _ = world::set_property(player, SCORE, "score", &Value::Integer(score));
        }
        Ok(())
    }

    fn on_replicated(&mut self, actor: ActorId, _component: &str, _property: &str, old: Option<&Value>, new: &Value) {
        let shown = |v: Option<&Value>| match v {
            Some(Value::Integer(points)) => points.to_string(),
            _ => "none".to_string(),
        };
        // Every second, for every player: a detail, at debug level.
        log::debug(&format!("score of player {actor}: {} -> {}", shown(old), shown(Some(new))));
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
