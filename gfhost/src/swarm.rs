//! `gfhost swarm`: a load test of a server from outside — many lightweight players join it over QUIC, play
//! (acknowledging what it sends) for a while, and leave; what joining took and what each player was sent is
//! printed. The players are the library's swarm ([`gamefeature_host::net::swarm`]): protocol clients with no
//! world or plugins, so one machine holds thousands.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use gamefeature_host::net::swarm::{quic_swarm, QuicSwarmOptions, SwarmReport};

/// How often every player reads what it was sent.
const POLL_EVERY: Duration = Duration::from_millis(2);

/// Joins the swarm, plays `seconds` once every player has joined (or gone), and reports. Fails when a player
/// could not join or was dropped.
pub fn run(options: &QuicSwarmOptions, seconds: Duration) -> Result<ExitCode> {
    let tokio =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the async runtime")?;
    let stop = Arc::new(AtomicBool::new(false));
    let signalled = stop.clone();
    tokio.spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        signalled.store(true, Ordering::SeqCst);
    });
    eprintln!("swarm: {} players joining {}, {} at a time", options.players, options.server, options.at_once);
    let started = Instant::now();
    let mut settled: Option<Instant> = None;
    let mut playing_since = None;
    let report = quic_swarm(options, tokio.handle(), POLL_EVERY, |swarm, failed| {
        let arrived = swarm.len() + failed == options.players;
        if settled.is_none() && arrived && swarm.greeting() == 0 {
            let now = Instant::now();
            settled = Some(now);
            playing_since = Some(now);
            eprintln!(
                "swarm: {} of {} players playing after {:.1?}; playing {seconds:?}",
                swarm.playing(),
                options.players,
                started.elapsed()
            );
        }
        let everyone_gone = arrived && swarm.playing() == 0 && swarm.greeting() == 0;
        stop.load(Ordering::SeqCst) || everyone_gone || settled.is_some_and(|at| at.elapsed() >= seconds)
    });
    let played = playing_since.map(|since| since.elapsed()).unwrap_or_default();
    print!("{}", summary(&report, played));
    let lost = report.gone.iter().filter(|(_, why)| why != LEFT).count();
    Ok(if lost == 0 && report.join_times.len() == report.players { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// Why every player goes at the end.
const LEFT: &str = "the swarm left";

/// What the swarm saw, for its operator.
fn summary(report: &SwarmReport, played: Duration) -> String {
    let mut text = String::new();
    let joined = report.join_times.len();
    let at = |fraction| report.join_time(fraction).unwrap_or_default();
    text += &format!(
        "swarm: {joined} of {} players joined (waited for their welcome: median {:.1?}, p99 {:.1?}, longest {:.1?})\n",
        report.players,
        at(0.5),
        at(0.99),
        at(1.0)
    );
    if joined > 0 && !played.is_zero() {
        let per_player_second = |count: u64| count as f64 / joined as f64 / played.as_secs_f64();
        text += &format!(
            "swarm: each player was sent {:.0} bytes/s of messages ({:.1} packets of values/s holding {:.0} values/s) \
             over {:.1?} of play\n",
            per_player_second(report.received.bytes),
            per_player_second(report.received.value_packets),
            per_player_second(report.received.values),
            played
        );
    }
    let mut reasons: std::collections::BTreeMap<&str, usize> = Default::default();
    for (_, why) in report.gone.iter().filter(|(_, why)| why != LEFT) {
        *reasons.entry(why.as_str()).or_default() += 1;
    }
    for (why, count) in reasons {
        text += &format!("swarm: {count} players lost: {}\n", gamefeature_host::text::shown(why, 200));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_counts_joins_traffic_and_each_reason_players_were_lost_for() {
        let report = SwarmReport {
            players: 4,
            playing: 0,
            gone: vec![
                (0, LEFT.to_string()),
                (1, LEFT.to_string()),
                (2, "the server is full: 2 players".to_string()),
                (3, "the server is full: 2 players".to_string()),
            ],
            join_times: vec![Duration::from_millis(10), Duration::from_millis(30)],
            received: gamefeature_host::net::swarm::Received {
                bytes: 4000,
                value_packets: 60,
                values: 600,
                ..Default::default()
            },
        };
        let text = summary(&report, Duration::from_secs(2));
        assert!(text.contains("swarm: 2 of 4 players joined"), "{text}");
        assert!(text.contains("each player was sent 1000 bytes/s"), "{text}");
        assert!(text.contains("15.0 packets of values/s holding 150 values/s"), "{text}");
        assert!(text.contains("swarm: 2 players lost: the server is full: 2 players"), "{text}");
    }
}
