//! Writes the seed inputs of the targets whose inputs are encodings (messages, package archives) into
//! `fuzz/seeds/`: run once when a target or an encoding changes, and commit what it writes.
//!
//! ```sh
//! cargo run -p gamefeature-fuzz-targets --example seeds
//! ```

use std::path::Path;

use gamefeature_host::net::protocol::{
    encode, ClientMessage, ComponentRef, ExperienceContent, Mutation, OfferedPlugin, PackageOffer, PacketWriter,
    ServerMessage, Update,
};
use gamefeature_host::package::{archive, Package, SecretKey};
use gamefeature_host::world::{ActorId, ClientId, Value};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn write(target: &str, name: &str, bytes: &[u8]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds").join(target);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), bytes).unwrap();
}

fn main() {
    let clients = [
        ("hello", ClientMessage::Hello { protocol: 2, token: Some("sesame".into()) }),
        ("ack", ClientMessage::Ack { packets: vec![1, 2, 3, 1000] }),
        ("fetch", ClientMessage::Fetch { digest: format!("sha256:{}", "ab".repeat(32)), offset: 262_144 }),
    ];
    for (name, message) in clients {
        write("client_message", name, &encode(&message));
    }

    // A small signed package, for the package target and the offers servers make.
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("hud");
    std::fs::create_dir_all(folder.join("data")).unwrap();
    let manifest = "[plugin]\nname = \"hud\"\nversion = \"1.0.0\"\napi = \"0.2.0\"\ncomponent = \"hud.wasm\"\n\
                    [bundles.Client]\nlayout = \"data/layout.txt\"\n";
    std::fs::write(folder.join("plugin.toml"), manifest).unwrap();
    std::fs::write(folder.join("hud.wasm"), b"\0asm\x0d\0\x01\0").unwrap();
    std::fs::write(folder.join("data/layout.txt"), b"top-left").unwrap();
    let package = Package::from_folder(&folder).unwrap();
    let signature = SecretKey::generate().sign("studio", package.summary());
    let bytes = archive::write(&package, Some(&signature));
    write("package_archive", "signed", &bytes);
    write("package_archive", "unsigned", &archive::write(&package, None));

    let offer = PackageOffer {
        package: package.summary().clone(),
        signature: Some(signature),
        archive_size: bytes.len() as u64,
        plugin: Box::new(OfferedPlugin {
            api: "0.2.0".into(),
            host: Some("^0.1".into()),
            permissions: gamefeature_host::feature::Permissions { send_events: true, ..Default::default() },
            dependencies: vec!["base-gameplay".into()],
        }),
    };
    let content = ExperienceContent {
        files: vec![("default.toml".into(), b"[experience]\n".to_vec())],
        packages: vec![offer.clone()],
    };
    let component = ComponentRef { class: "HealthComponent".into(), incarnation: 3 };
    let servers = [
        ("welcome", ServerMessage::Welcome { client: ClientId(7), tick_rate: 30 }),
        ("refused", ServerMessage::Refused { reason: "the server is full".into() }),
        (
            "experience",
            ServerMessage::Update {
                seq: 1,
                update: Update::Experience { name: "default.toml".into(), content: Some(content) },
            },
        ),
        (
            "spawn",
            ServerMessage::Update {
                seq: 2,
                update: Update::Spawn {
                    actor: ActorId::from_raw(5),
                    class: "HeroCharacter".into(),
                    receiver: true,
                    player: Some(ClientId(7)),
                    components: vec![component.clone()],
                },
            },
        ),
        ("package", ServerMessage::Update { seq: 4, update: Update::Package { offer } }),
        (
            "mutations",
            ServerMessage::Mutations {
                packet: 9,
                values: {
                    let mut writer = PacketWriter::new();
                    writer.push(Mutation { incarnation: 3, after: 3, property: 0, value: Some(Value::Integer(-3)) });
                    writer.take()
                },
            },
        ),
        (
            "property_names",
            ServerMessage::Update { seq: 3, update: Update::PropertyNames { names: vec![(0, "health".into())] } },
        ),
        (
            "chunk",
            ServerMessage::Chunk {
                digest: package.digest().into(),
                offset: 0,
                total: 8,
                bytes: b"\0asm\x0d\0\x01\0".to_vec(),
            },
        ),
        ("end", ServerMessage::Update { seq: 5, update: Update::EndPlay { reason: "match over".into() } }),
    ];
    for (name, message) in &servers {
        write("server_message", name, &encode(message));
    }
    // The client target: a welcome and the experience (0xff), then each of the server's messages on a channel
    // (0 reliable, 1 unreliable, 2 bulk), frames apart at 0xfe; and the whole session in one input.
    let frame = |channel: u8, name: &str| {
        let (_, message) = servers.iter().find(|(n, _)| *n == name).expect("a seed of that name");
        [vec![0xfe, channel], encode(message)].concat()
    };
    let session = [
        vec![0xff],
        frame(0, "spawn"),
        frame(1, "mutations"),
        frame(0, "property_names"),
        frame(0, "package"),
        frame(2, "chunk"),
    ];
    write("client_frames", "session", &[session.concat(), frame(0, "end")].concat());
    write("client_frames", "refused", &[vec![0xff], frame(0, "refused")].concat());
    write("client_frames", "unwelcome", &frame(0, "spawn")[1..]);

    // The replication target reads steps, every byte meaningful: one hand-written session (spawn, Health, a
    // write of each kind, a frame, a late join, every kind of delivery) and random ones of several lengths.
    #[rustfmt::skip]
    let session = [
        0, 0, 0, 0, 2, 0, 3, 0, 0, 0, 1, 0, 7, 3, 0, 1, 2, 0, 0, 0, 0, 0, 0, 248, 127, 3, 0, 0, 3, 3, 4, b'h', b'i',
        b'!', b'?', 6, 0, 15, 0, 8, 0, 8, 1, 8, 2, 12, 0, 0, 9, 0, 1, 11, 1, 0, 13, 0, 14, 0, 1, 0, 3, 1, 1, 3, 1, 3,
        6, 0,
    ];
    write("replication", "session", &session);
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    for length in [16, 64, 256, 1024, 4096] {
        let steps: Vec<u8> = (0..length).map(|_| rng.random()).collect();
        write("replication", &format!("random-{length}"), &steps);
    }

    // The host-call target's input is call-fuzzer's program: every import once under each set of flags (none;
    // others' actors; others' actors, forged handles and its own answers; a reload halfway), and random programs.
    let every = gamefeature_tests::call_fuzzer::every_import_program();
    let flag_sets = [("every-import", 0), ("every-import-others", 1), ("every-import-all-flags", 7)];
    for (name, flags) in flag_sets.into_iter().chain([("every-import-reloaded", 8)]) {
        let mut program = every.clone();
        program[0] = flags;
        write("host_calls", name, &program);
    }
    for length in [64, 512, 2048] {
        let program: Vec<u8> = (0..length).map(|_| rng.random()).collect();
        write("host_calls", &format!("random-{length}"), &program);
    }

    // The live-world target's input is pairs of (command, argument): each command on each plugin, ticks between.
    let every: Vec<u8> = (0..9u8).flat_map(|kind| (0..11u8).flat_map(move |plugin| [kind, plugin])).collect();
    for (at, chunk) in every.chunks(48).enumerate() {
        write("live_world", &format!("commands-{at}"), chunk);
    }
    write("live_world", "reload-all", &(0..10u8).flat_map(|plugin| [2, plugin, 8, 3]).collect::<Vec<_>>());
    write("live_world", "uninstall-reinstall", &[3, 3, 6, 1, 8, 2, 4, 3, 0, 3, 6, 2, 8, 3]);

    // The components target: each real component unchanged and with a few bytes changed (modes 1 and 2 pick
    // the API version), generated ones, and raw bytes.
    for pick in 0..3u8 {
        write("components", &format!("real-{pick}"), &[1, pick]);
        write("components", &format!("real-{pick}-legacy-api"), &[2, pick]);
        let edits: Vec<u8> = (0..4).flat_map(|_| [rng.random::<u8>() & !3, rng.random(), rng.random(), 0, 0]).collect();
        write("components", &format!("changed-{pick}"), &[[1, pick].as_slice(), &edits].concat());
    }
    for length in [64, 512, 4096] {
        let bytes: Vec<u8> = std::iter::once(0).chain((0..length).map(|_| rng.random())).collect();
        write("components", &format!("generated-{length}"), &bytes);
    }
    write("components", "empty-component", b"\x03\0asm\x0d\0\x01\0");
}
