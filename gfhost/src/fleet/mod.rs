//! A dedicated server's orchestrator: whoever starts servers, hands them matches and stops them (Agones on
//! Kubernetes; Hathora, Edgegap and PlayFab have the same shape). The server tells it when it is ready, hears
//! from it when it is allocated a match, reports its players, and says when its match is over; the adapter
//! for one orchestrator is these four calls.

#[cfg(feature = "agones")]
pub mod agones;

use gamefeature_host::net::ticket::TicketKey;

/// What an orchestrator hands a server with its match.
#[derive(Debug, Default)]
pub struct Allocation {
    /// The match it plays: join tickets for another are refused.
    pub match_id: Option<String>,
    /// The key its match's join tickets are signed with.
    pub ticket_key: Option<TicketKey>,
    /// The experience (file name) the match plays, when the orchestrator names one: a server playing another
    /// was allocated by mistake, and ends.
    pub experience: Option<String>,
}

/// A server's side of an orchestrator.
pub trait Orchestrator {
    /// The server takes players now: `experience` (its file name) is loaded and the port bound; clients pin
    /// `certificate` (its SHA-256, hex) unless its certificate is signed by an authority they trust.
    fn ready(&mut self, experience: &str, certificate: &str) -> anyhow::Result<()>;
    /// A match the server was allocated since the last call, once.
    fn allocation(&mut self) -> anyhow::Result<Option<Allocation>>;
    /// How many players are playing (reported when it changes).
    fn players(&mut self, playing: usize);
    /// The match is over: the orchestrator may stop the server (it then sends SIGTERM).
    fn shutdown(&mut self) -> anyhow::Result<()>;
}

/// When a match is over: once a server has been allocated and players have joined, the match ends when the
/// last one has left (and none is away within its reconnect grace).
#[derive(Debug, Default)]
pub struct MatchEnd {
    allocated: bool,
    anyone_joined: bool,
}

impl MatchEnd {
    pub fn allocated(&mut self) {
        self.allocated = true;
    }

    /// Whether the match is over, given who plays and who is away now.
    pub fn is_over(&mut self, playing: usize, away: usize) -> bool {
        if !self.allocated {
            return false;
        }
        self.anyone_joined |= playing > 0;
        self.anyone_joined && playing == 0 && away == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_match_ends_when_its_last_player_has_left_and_none_is_away() {
        let mut end = MatchEnd::default();
        assert!(!end.is_over(0, 0), "not allocated: a fleet's warm server waits");
        assert!(!end.is_over(3, 0));
        end.allocated();
        assert!(!end.is_over(0, 0), "allocated, nobody has joined yet");
        assert!(!end.is_over(2, 0));
        assert!(!end.is_over(0, 1), "a player away may come back");
        assert!(end.is_over(0, 0));
    }
}
