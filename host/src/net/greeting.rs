//! Connections that have not said hello yet: the one resource of a server that anybody on the network can
//! take without a token. Bounded in all and per address, and evicted oldest first, so that connections which
//! never say hello cannot lock players out: an honest client says hello as soon as it connects, so it is never
//! the oldest waiting for long.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use crate::world::ClientId;

/// How long a connection may go without saying hello: an honest client sends it as soon as it connects.
pub const HELLO_WAIT: Duration = Duration::from_secs(3);

/// Connections waiting to say hello, at most; a new one evicts the oldest.
pub const MAX_GREETING: usize = 64;

/// Connections from one address waiting to say hello, at most; a new one evicts that address's oldest. (Many
/// players can share an address behind a NAT, but each says hello at once.)
pub const MAX_GREETING_PER_ADDRESS: usize = 8;

/// The connections waiting to say hello, by when they connected.
#[derive(Debug, Default)]
pub struct Greeting {
    waiting: BTreeMap<ClientId, (Instant, Option<IpAddr>)>,
}

impl Greeting {
    /// A connection arrived from `address` (if the transport knows it) at `now`; returns the connections it
    /// evicts, with why.
    pub fn admit(&mut self, client: ClientId, address: Option<IpAddr>, now: Instant) -> Vec<(ClientId, String)> {
        let mut evicted = Vec::new();
        if let Some(ip) = address {
            let from_it = self.waiting.iter().filter(|(_, (_, from))| *from == Some(ip));
            if from_it.clone().count() >= MAX_GREETING_PER_ADDRESS {
                if let Some(oldest) = from_it.min_by_key(|(_, (since, _))| *since).map(|(c, _)| *c) {
                    self.waiting.remove(&oldest);
                    let why = format!("no hello while {MAX_GREETING_PER_ADDRESS} newer connections from {ip} waited");
                    evicted.push((oldest, why));
                }
            }
        }
        if self.waiting.len() >= MAX_GREETING {
            if let Some(oldest) = self.waiting.iter().min_by_key(|(_, (since, _))| *since).map(|(c, _)| *c) {
                self.waiting.remove(&oldest);
                evicted.push((oldest, format!("no hello while {MAX_GREETING} newer connections waited")));
            }
        }
        self.waiting.insert(client, (now, address));
        evicted
    }

    /// The client said hello: whether it was waiting to (a second hello, or one from an evicted connection,
    /// is out of protocol).
    pub fn hello(&mut self, client: ClientId) -> bool {
        self.waiting.remove(&client).is_some()
    }

    /// Takes out the connections that waited longer than [`HELLO_WAIT`] at `now`.
    pub fn silent(&mut self, now: Instant) -> Vec<ClientId> {
        let silent: Vec<ClientId> = (self.waiting.iter())
            .filter(|(_, (since, _))| now.saturating_duration_since(*since) > HELLO_WAIT)
            .map(|(client, _)| *client)
            .collect();
        for client in &silent {
            self.waiting.remove(client);
        }
        silent
    }

    pub fn forget(&mut self, client: ClientId) {
        self.waiting.remove(&client);
    }

    pub fn clients(&self) -> impl Iterator<Item = ClientId> + '_ {
        self.waiting.keys().copied()
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.waiting.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> Option<IpAddr> {
        Some(IpAddr::from([203, 0, 113, last]))
    }

    #[test]
    fn a_flood_of_silent_connections_evicts_its_own_oldest_and_a_player_gets_in() {
        let mut greeting = Greeting::default();
        let start = Instant::now();
        let mut evicted = Vec::new();
        for n in 0..1000u32 {
            let at = start + Duration::from_millis(u64::from(n));
            evicted.extend(greeting.admit(ClientId(n), ip(1), at));
        }
        // One address holds at most its share; the rest were evicted, oldest first.
        assert_eq!(greeting.len(), MAX_GREETING_PER_ADDRESS);
        assert_eq!(evicted.len(), 1000 - MAX_GREETING_PER_ADDRESS);
        assert_eq!(evicted[0].0, ClientId(0));
        // A player from another address connects and says hello: it was admitted.
        assert!(greeting.admit(ClientId(5000), ip(2), start + Duration::from_secs(1)).is_empty());
        assert!(greeting.hello(ClientId(5000)));
        assert!(!greeting.hello(ClientId(5000)), "a second hello is out of protocol");
    }

    #[test]
    fn many_addresses_fill_the_table_and_the_oldest_goes_first() {
        let mut greeting = Greeting::default();
        let start = Instant::now();
        for n in 0..MAX_GREETING as u32 {
            greeting.admit(ClientId(n), ip(n as u8), start + Duration::from_millis(u64::from(n)));
        }
        let evicted = greeting.admit(ClientId(999), None, start + Duration::from_secs(1));
        assert_eq!(evicted.iter().map(|(c, _)| *c).collect::<Vec<_>>(), [ClientId(0)]);
        assert!(greeting.hello(ClientId(999)));
    }

    #[test]
    fn connections_silent_past_the_wait_are_taken_out() {
        let mut greeting = Greeting::default();
        let start = Instant::now();
        greeting.admit(ClientId(1), None, start);
        greeting.admit(ClientId(2), None, start + HELLO_WAIT);
        assert_eq!(greeting.silent(start + HELLO_WAIT + Duration::from_millis(1)), [ClientId(1)]);
        assert_eq!(greeting.clients().collect::<Vec<_>>(), [ClientId(2)]);
    }
}
