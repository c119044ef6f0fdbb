//! How a world takes part in a networked game.

use std::fmt;
use std::str::FromStr;

/// A world's role in a networked game, as Unreal's `ENetMode`. It decides which asset bundles an experience
/// loads and whether client-only and server-only components are created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum NetMode {
    /// A single-player game: it is both client and server.
    #[default]
    Standalone,
    /// A server without a local player.
    DedicatedServer,
    /// A server with a local player.
    ListenServer,
    /// A client of a remote server.
    Client,
}

impl NetMode {
    /// Every net mode, for listings and parsing.
    pub const ALL: [NetMode; 4] =
        [NetMode::Standalone, NetMode::DedicatedServer, NetMode::ListenServer, NetMode::Client];

    /// Whether this world runs server logic (everything but a client). Server-only components and the
    /// `Server` bundle exist only here.
    pub fn is_server(self) -> bool {
        self != NetMode::Client
    }

    /// Whether this world has a local player to present to (everything but a dedicated server). Client-only
    /// components and the `Client` bundle exist only here.
    pub fn is_client(self) -> bool {
        self != NetMode::DedicatedServer
    }

    /// The kebab-case name used in data files and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            NetMode::Standalone => "standalone",
            NetMode::DedicatedServer => "dedicated-server",
            NetMode::ListenServer => "listen-server",
            NetMode::Client => "client",
        }
    }
}

impl fmt::Display for NetMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A net mode name that is not one of [`NetMode::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown net mode {0:?}; expected standalone, dedicated-server, listen-server or client")]
pub struct UnknownNetMode(pub String);

impl FromStr for NetMode {
    type Err = UnknownNetMode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        NetMode::ALL.into_iter().find(|mode| mode.as_str() == s).ok_or_else(|| UnknownNetMode(s.to_string()))
    }
}

/// A client connected to a server, numbered by the server from 1 in the order they joined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct ClientId(pub u32);

impl std::fmt::Display for ClientId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "client {}", self.0)
    }
}

/// An actor's network role in this world, as Unreal's `ENetRole`. Only the authority may change replicated
/// state; proxies receive it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NetRole {
    /// This world owns the actor.
    Authority,
    /// A replica of a remote actor controlled by this client's player.
    AutonomousProxy,
    /// A replica of a remote actor.
    SimulatedProxy,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_and_server_sides() {
        assert!(NetMode::Standalone.is_client() && NetMode::Standalone.is_server());
        assert!(NetMode::ListenServer.is_client() && NetMode::ListenServer.is_server());
        assert!(!NetMode::DedicatedServer.is_client() && NetMode::DedicatedServer.is_server());
        assert!(NetMode::Client.is_client() && !NetMode::Client.is_server());
    }

    #[test]
    fn parses_its_own_names_and_rejects_others() {
        for mode in NetMode::ALL {
            assert_eq!(mode.as_str().parse::<NetMode>(), Ok(mode));
        }
        assert!("server".parse::<NetMode>().is_err());
    }
}
