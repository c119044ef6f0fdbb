//! A game client fed frames from a server that does not follow the protocol: a client joins whatever server its
//! player names, so it trusts the server's frames no more than the server trusts a client's.

use std::time::Duration;

use gamefeature_host::net::protocol::{encode, ServerMessage, Update};
use gamefeature_host::net::transport::memory::{Conditions, MemoryNetwork};
use gamefeature_host::net::transport::{Channel, ServerEvent, ServerTransport};
use gamefeature_host::net::GameClient;
use gamefeature_host::world::{self, NetMode};

use crate::server::SESSION;
use crate::{SCRATCH, TOKIO};

/// The most frames one input sends, and the client frames it plays.
const MAX_FRAMES: usize = 64;
const ROUNDS: usize = 80;
const FRAME: Duration = Duration::from_millis(33);

/// The experience the client finds in its own folder (no features: the client needs no plugins).
pub const EXPERIENCE: &str = "arena.toml";

/// Frames split at `0xfe`; each one's first byte picks its channel (and, with `0xff`, a well-formed welcome and
/// experience instead of the bytes), the rest is sent as it is. The client never panics: it plays, or ends its
/// session with an error; and what it holds satisfies the component model.
pub fn client_frames(data: &[u8]) {
    let experiences = SCRATCH.with(|s| s.path().join("client-experiences"));
    std::fs::create_dir_all(&experiences).expect("the scratch folder");
    let text = "[experience]\nname = \"arena\"\n[classes]\nHeroCharacter = \"Character\"\n";
    std::fs::write(experiences.join(EXPERIENCE), text).expect("the experience");
    SESSION.with(|session| {
        let network = MemoryNetwork::new(7, Conditions::PERFECT);
        let mut server = network.server();
        let manager = session.create_world("client", NetMode::Client);
        let mut client = GameClient::connect(manager, Box::new(network.connect()), None, &experiences);
        let mut frames = data.split(|b| *b == 0xfe).take(MAX_FRAMES);
        let mut who = None;
        TOKIO.with(|tokio| {
            for _ in 0..ROUNDS {
                for event in server.poll() {
                    if let ServerEvent::Connected(client) = event {
                        who = Some(client);
                    }
                }
                if let (Some(to), Some(frame)) = (who, frames.next()) {
                    let (kind, rest) = frame.split_first().unwrap_or((&0, &[][..]));
                    for (channel, bytes) in hostile_frames(*kind, rest, to) {
                        server.send(to, channel, bytes);
                    }
                }
                network.advance(FRAME);
                if tokio.block_on(client.frame(FRAME)).is_err() {
                    break;
                }
            }
        });
        let checked = world::lock(client.manager().world()).check_invariants();
        if let Err(broken) = checked {
            panic!("the client's world: {broken}");
        }
    })
}

fn hostile_frames(kind: u8, rest: &[u8], to: gamefeature_host::world::ClientId) -> Vec<(Channel, Vec<u8>)> {
    if kind == 0xff {
        let welcome = ServerMessage::Welcome { client: to, tick_rate: 30 };
        let experience = Update::Experience { name: EXPERIENCE.into(), content: None };
        return vec![
            (Channel::Reliable, encode(&welcome)),
            (Channel::Reliable, encode(&ServerMessage::Update { seq: 1, update: experience })),
        ];
    }
    let channel = [Channel::Reliable, Channel::Unreliable, Channel::Bulk][usize::from(kind % 3)];
    vec![(channel, rest.to_vec())]
}
