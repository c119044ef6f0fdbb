//! How much of its packages a server hands out, and to whom: each player (by its ticket) — or, before a
//! player is known or where the server asks for no ticket, each address — may fetch a few times what is
//! offered at once, and then what is offered once a minute. Mod sync answers an ~80-byte request with a
//! 256 KiB chunk; without a budget that outlives a connection, a token holder could reconnect and start over,
//! and the server would be an amplifier.
//!
//! The budgets are token buckets: a player's full at [`FetchBudgets::ROUNDS`] times the offered bytes, refilled
//! at the offered bytes per minute; an address's [`FetchBudgets::ADDRESS_SHARE`] times that, since several
//! players share an address behind one NAT (a LAN party, a household) and each fetches the whole experience. A bucket that has refilled is forgotten (it holds nothing a new one would not),
//! and at most [`FetchBudgets::MAX_TRACKED`] are kept, so a crowd of addresses costs bounded memory.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

/// Whose budget a fetch is charged to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Fetcher {
    /// A player, by the id its join ticket names: the same player on any connection, from any address.
    Player(String),
    /// An address, for a client whose player is not known by a ticket.
    Address(IpAddr),
    /// A connection, on a transport without addresses (in memory).
    Connection(u32),
}

impl std::fmt::Display for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fetcher::Player(player) => write!(f, "player {}", crate::text::shown(player, crate::text::MAX_NAME)),
            Fetcher::Address(address) => write!(f, "address {address}"),
            Fetcher::Connection(client) => write!(f, "connection {client}"),
        }
    }
}

/// One fetcher's bucket: bytes it may still fetch, as of when.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    left: f64,
    at: Instant,
}

/// The fetch budgets of a server's players and addresses.
#[derive(Debug, Default)]
pub struct FetchBudgets {
    buckets: HashMap<Fetcher, Bucket>,
}

impl FetchBudgets {
    /// How many times what is offered a player may fetch at once (and, per [`REFILL`](Self::REFILL), once more).
    pub const ROUNDS: f64 = 3.0;
    /// How many players' budgets an address has.
    pub const ADDRESS_SHARE: f64 = 6.0;
    /// The buckets kept at most; past it, the fullest are forgotten first.
    pub const MAX_TRACKED: usize = 4096;
    /// The time it takes to earn one more round of what is offered.
    pub const REFILL: Duration = Duration::from_secs(60);

    /// Charges `bytes` to `fetcher` at `now`, with `offered` bytes on offer: `false` (and nothing charged) when
    /// its budget does not hold them.
    pub fn charge(&mut self, fetcher: &Fetcher, bytes: u64, offered: u64, now: Instant) -> bool {
        let share = match fetcher {
            Fetcher::Address(_) => Self::ADDRESS_SHARE,
            Fetcher::Player(_) | Fetcher::Connection(_) => 1.0,
        };
        let capacity = share * Self::ROUNDS * offered as f64;
        let per_second = share * offered as f64 / Self::REFILL.as_secs_f64();
        let bucket = self.buckets.get(fetcher).copied().unwrap_or(Bucket { left: capacity, at: now });
        let refilled = now.saturating_duration_since(bucket.at).as_secs_f64() * per_second;
        let left = (bucket.left + refilled).min(capacity);
        if (bytes as f64) > left {
            self.buckets.insert(fetcher.clone(), Bucket { left, at: now });
            return false;
        }
        self.buckets.insert(fetcher.clone(), Bucket { left: left - bytes as f64, at: now });
        if self.buckets.len() > Self::MAX_TRACKED {
            self.forget_refilled(capacity, per_second, now);
        }
        true
    }

    /// Forgets the buckets that have refilled by `now`, then, if still too many, those closest to full.
    fn forget_refilled(&mut self, capacity: f64, per_second: f64, now: Instant) {
        let level = |bucket: &Bucket| bucket.left + now.saturating_duration_since(bucket.at).as_secs_f64() * per_second;
        self.buckets.retain(|_, bucket| level(bucket) < capacity);
        if self.buckets.len() > Self::MAX_TRACKED {
            let mut levels: Vec<(f64, Fetcher)> = self.buckets.iter().map(|(f, b)| (level(b), f.clone())).collect();
            levels.sort_by(|a, b| b.0.total_cmp(&a.0));
            for (_, fetcher) in levels.into_iter().take(self.buckets.len() - Self::MAX_TRACKED) {
                self.buckets.remove(&fetcher);
            }
        }
    }

    /// How many fetchers' budgets are kept.
    pub fn tracked(&self) -> usize {
        self.buckets.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fetcher_gets_a_few_rounds_at_once_then_one_a_minute_whatever_connection_it_comes_on() {
        let mut budgets = FetchBudgets::default();
        let ada = Fetcher::Player("ada".into());
        let start = Instant::now();
        for _ in 0..3 {
            assert!(budgets.charge(&ada, 1000, 1000, start));
        }
        assert!(!budgets.charge(&ada, 1, 1000, start), "three rounds at once, then nothing");
        // A new connection is the same player: still nothing; half a minute later, half a round.
        assert!(!budgets.charge(&ada, 600, 1000, start + Duration::from_secs(30)));
        assert!(budgets.charge(&ada, 500, 1000, start + Duration::from_secs(30)));
        let other = Fetcher::Address("203.0.113.7".parse().unwrap());
        assert!(budgets.charge(&other, 3000, 1000, start), "another fetcher has its own budget");
        // An address is shared by the players behind it: six players' budgets.
        assert!(budgets.charge(&other, 15_000, 1000, start));
        assert!(!budgets.charge(&other, 1, 1000, start));
        // Refilled, never beyond three rounds.
        assert!(!budgets.charge(&ada, 3001, 1000, start + Duration::from_secs(3600)));
        assert!(budgets.charge(&ada, 3000, 1000, start + Duration::from_secs(3600)));
    }

    #[test]
    fn a_crowd_of_addresses_keeps_at_most_the_tracked_buckets() {
        let mut budgets = FetchBudgets::default();
        let start = Instant::now();
        for n in 0..(FetchBudgets::MAX_TRACKED as u32 + 500) {
            let address = IpAddr::from(std::net::Ipv4Addr::from(0x0a00_0000 + n));
            assert!(budgets.charge(&Fetcher::Address(address), 10, 1000, start));
        }
        assert!(budgets.tracked() <= FetchBudgets::MAX_TRACKED, "{}", budgets.tracked());
    }
}
