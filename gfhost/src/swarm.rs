//! `gfhost swarm`: a load test of a server from outside — many lightweight players join it over QUIC, play
//! (acknowledging what it sends) for a while, and leave; what joining took and what each player was sent is
//! printed. The players are the library's swarm ([`gamefeature_host::net::swarm`]): protocol clients with no
//! world or plugins, so one machine holds thousands.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use gamefeature_host::net::swarm::{quic_swarm, QuicSwarmOptions, Received, SwarmReport};

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
    // Each player is a connection of its own: a socket each.
    allow_a_file_per_player();
    eprintln!("swarm: {} players joining {}, {} at a time", options.players, options.server, options.at_once);
    let started = Instant::now();
    // Once every player has joined (or gone): when, and what they had been sent by then.
    let mut settled: Option<(Instant, Received)> = None;
    let mut played = (Duration::ZERO, Received::default());
    let report = quic_swarm(options, tokio.handle(), POLL_EVERY, |swarm, failed| {
        let arrived = swarm.len() + failed == options.players;
        if settled.is_none() && arrived && swarm.greeting() == 0 {
            settled = Some((Instant::now(), swarm.received()));
            eprintln!(
                "swarm: {} of {} players playing after {:.1?}; playing {seconds:?}",
                swarm.playing(),
                options.players,
                started.elapsed()
            );
        }
        let everyone_gone = arrived && swarm.playing() == 0 && swarm.greeting() == 0;
        let ending =
            stop.load(Ordering::SeqCst) || everyone_gone || settled.is_some_and(|(at, _)| at.elapsed() >= seconds);
        if let (true, Some((since, before))) = (ending, settled) {
            played = (since.elapsed(), swarm.received().since(before));
        }
        ending
    });
    print!("{}", summary(&report, played.0, played.1));
    let lost = report.gone.iter().filter(|(_, why)| why != LEFT).count();
    Ok(if lost == 0 && report.join_times.len() == report.players { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// Why every player goes at the end.
const LEFT: &str = "the swarm left";

/// Raises this process's limit of open files to the most it may have.
fn allow_a_file_per_player() {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit and setrlimit read and write one `rlimit` through a pointer to a valid one.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

/// What the swarm saw, for its operator: joins over the whole run; what was sent (`sent`) over the `played`
/// time once every player had joined.
fn summary(report: &SwarmReport, played: Duration, sent: Received) -> String {
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
             over {:.1?} of play with everyone in\n",
            per_player_second(sent.bytes),
            per_player_second(sent.value_packets),
            per_player_second(sent.values),
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
            received: Received { bytes: 9000, value_packets: 90, values: 900, ..Default::default() },
        };
        let sent = Received { bytes: 4000, value_packets: 60, values: 600, ..Default::default() };
        let text = summary(&report, Duration::from_secs(2), sent);
        assert!(text.contains("swarm: 2 of 4 players joined"), "{text}");
        assert!(text.contains("each player was sent 1000 bytes/s"), "{text}");
        assert!(text.contains("15.0 packets of values/s holding 150 values/s"), "{text}");
        assert!(text.contains("swarm: 2 players lost: the server is full: 2 players"), "{text}");
    }
}
