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

impl Bucket {
    /// What it holds at `now`, refilled at `per_second` since (before its capacity is applied).
    fn level(&self, per_second: f64, now: Instant) -> f64 {
        self.left + now.saturating_duration_since(self.at).as_secs_f64() * per_second
    }
}

impl Fetcher {
    /// The key its budget is kept under: an IPv6 address by its /64, which one subscriber holds whole (else
    /// each of its addresses would have a budget of its own).
    fn keyed(&self) -> Fetcher {
        match self {
            Fetcher::Address(IpAddr::V6(address)) => {
                let prefix = u128::from(*address) & !((1u128 << 64) - 1);
                Fetcher::Address(IpAddr::V6(std::net::Ipv6Addr::from(prefix)))
            }
            other => other.clone(),
        }
    }
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
        let fetcher = fetcher.keyed();
        let (capacity, per_second) = Self::rates(&fetcher, offered);
        let bucket = self.buckets.get(&fetcher).copied().unwrap_or(Bucket { left: capacity, at: now });
        let left = bucket.level(per_second, now).min(capacity);
        if (bytes as f64) > left {
            self.buckets.insert(fetcher, Bucket { left, at: now });
            return false;
        }
        self.buckets.insert(fetcher, Bucket { left: left - bytes as f64, at: now });
        if self.buckets.len() > Self::MAX_TRACKED {
            self.forget_refilled(offered, now);
        }
        true
    }

    /// A fetcher's bucket size and refill rate (bytes, bytes a second) with `offered` bytes on offer.
    fn rates(fetcher: &Fetcher, offered: u64) -> (f64, f64) {
        let share = match fetcher {
            Fetcher::Address(_) => Self::ADDRESS_SHARE,
            Fetcher::Player(_) | Fetcher::Connection(_) => 1.0,
        };
        (share * Self::ROUNDS * offered as f64, share * offered as f64 / Self::REFILL.as_secs_f64())
    }

    /// Forgets the buckets that have refilled by `now` (each by its own kind's rates), then, if still too many,
    /// those closest to full.
    fn forget_refilled(&mut self, offered: u64, now: Instant) {
        let fullness = |fetcher: &Fetcher, bucket: &Bucket| {
            let (capacity, per_second) = Self::rates(fetcher, offered);
            bucket.level(per_second, now) / capacity.max(1.0)
        };
        self.buckets.retain(|fetcher, bucket| fullness(fetcher, bucket) < 1.0);
        if self.buckets.len() > Self::MAX_TRACKED {
            let mut levels: Vec<(f64, Fetcher)> =
                self.buckets.iter().map(|(f, b)| (fullness(f, b), f.clone())).collect();
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
    fn an_ipv6_subscriber_has_one_budget_for_its_64_addresses() {
        let mut budgets = FetchBudgets::default();
        let start = Instant::now();
        let address =
            |last: u16| Fetcher::Address(IpAddr::V6(std::net::Ipv6Addr::new(0x2001, 0xdb8, 0, 1, 0, 0, 0, last)));
        assert!(budgets.charge(&address(1), 18_000, 1000, start));
        assert!(!budgets.charge(&address(2), 1, 1000, start), "another address of the same /64");
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
