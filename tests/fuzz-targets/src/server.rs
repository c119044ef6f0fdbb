//! A game server fed hostile frames beside an honest client.

use std::path::Path;

use gamefeature_host::net::protocol::{encode, ClientMessage};

use crate::{SCRATCH, TOKIO};

thread_local! {
    /// One session (engine and plugin subsystem, no plugins) for every server this thread fuzzes: a world costs
    /// little, an engine does not.
    pub(crate) static SESSION: gamefeature_host::Session = {
        let empty = SCRATCH.with(|s| s.path().join("no-plugins"));
        std::fs::create_dir_all(&empty).expect("the scratch folder");
        let options = gamefeature_host::SessionOptions { plugin_dirs: vec![empty], ..Default::default() };
        gamefeature_host::Session::new(options).expect("the runtime starts")
    };
}

/// Actors the fuzzed server holds from the start, besides the players it spawns.
const SERVER_ACTORS: usize = 3;

/// A server fed frames from three hostile clients — raw bytes, or hellos, acknowledgements and fetches with
/// arbitrary fields — over an in-memory network, beside one honest client. The server never panics, drops
/// only the clients that broke the protocol, and the honest client ends with the server's actors.
pub fn server_frames(data: &[u8]) {
    use gamefeature_host::net::transport::memory::{Conditions, MemoryNetwork};
    use gamefeature_host::net::transport::{Channel, ClientTransport};
    use gamefeature_host::net::{GameClient, GameServer, ServerOptions};
    use gamefeature_host::world::NetMode;

    const FRAME: std::time::Duration = std::time::Duration::from_millis(33);
    SESSION.with(|session| {
        let network = MemoryNetwork::new(1, Conditions::PERFECT);
        let manager = session.create_world("server", NetMode::DedicatedServer);
        let options = ServerOptions { tick_rate: 30, token: Some("sesame".into()), ..Default::default() };
        let mut server = GameServer::new(manager, Box::new(network.server()), options);
        let spawned: Vec<_> = (0..SERVER_ACTORS)
            .map(|_| server.manager_mut().with_world(|w| w.spawn("Actor")).expect("the server spawns"))
            .collect();
        let mut hostile: Vec<_> = (0..3).map(|_| network.connect()).collect();
        let honest_world = session.create_world("honest", NetMode::Client);
        let mut honest =
            GameClient::connect(honest_world, Box::new(network.connect()), Some("sesame".into()), Path::new("."));
        let mut frames = data.split(|b| *b == 0xfe).take(64);
        TOKIO.with(|tokio| {
            for round in 0..96 {
                if let Some(frame) = frames.next() {
                    let (who, rest) = frame.split_first().unwrap_or((&0u8, &[][..]));
                    let client = &mut hostile[usize::from(*who) % 3];
                    client.send(Channel::Reliable, hostile_frame(*who, rest));
                } else if round > 64 {
                    break;
                }
                let _ = server.frame(FRAME);
                network.advance(FRAME);
                for client in &mut hostile {
                    let _ = client.poll();
                }
                tokio.block_on(honest.frame(FRAME)).expect("the honest client keeps playing");
            }
        });
        let w = gamefeature_host::world::lock(honest.manager().world());
        for actor in spawned {
            assert!(w.actor(actor).is_ok(), "the honest client has the server's actor {actor:?}");
        }
    })
}

/// What a hostile client sends: raw bytes, or (by the first byte) a well-formed message with arbitrary fields.
fn hostile_frame(kind: u8, rest: &[u8]) -> Vec<u8> {
    let number = |at: usize| rest.get(at..at + 8).map_or(0, |b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
    let text = String::from_utf8_lossy(rest).into_owned();
    match kind % 8 {
        0 => encode(&ClientMessage::Hello { protocol: (number(0) % 4) as u32, token: Some(text) }),
        1 => encode(&ClientMessage::Hello { protocol: 2, token: Some("sesame".into()) }),
        2 => encode(&ClientMessage::Ack {
            packets: rest.chunks(8).map(|c| c.iter().map(|b| u64::from(*b)).sum()).collect(),
        }),
        3 => encode(&ClientMessage::Fetch { digest: text, offset: number(0) }),
        _ => rest.to_vec(),
    }
}
