//! A dedicated server and its clients over the in-memory network, playing the default experience with its real
//! plugins: the server picks the experience and each client loads it when it arrives (Lyra's
//! `OnRep_CurrentExperience`); actors, replicated components and values reach the clients with the right
//! roles; clients join late, leave, misbehave; the server ends play.

use std::time::Duration;

use gamefeature_host::experience::ExperienceLoadState;
use gamefeature_host::net::protocol::{decode, encode, ClientMessage, ServerMessage, PROTOCOL_VERSION};
use gamefeature_host::net::transport::memory::{Conditions, MemoryNetwork};
use gamefeature_host::net::transport::{Channel, ClientTransport};
use gamefeature_host::net::{ClientError, ClientState, GameClient, GameServer, ServerNote, ServerOptions};
use gamefeature_host::timeline::{track, EventKind, LogLevel};
use gamefeature_host::world::{self, ActorId, NetMode, NetRole, Value};
use gamefeature_host::Session;
use gamefeature_tests::*;

const FRAME: Duration = Duration::from_millis(33);

/// A server world and client worlds in one session (as `gfhost run --clients N` plays them), over a simulated
/// network.
struct Game {
    network: MemoryNetwork,
    server: GameServer,
    clients: Vec<GameClient>,
    notes: Vec<ServerNote>,
    session: Session,
    experiences: ExperienceDir,
    _plugins: PluginDir,
}

impl Game {
    async fn start(conditions: Conditions, options: ServerOptions) -> Game {
        let plugins = PluginDir::with(&DEFAULT_PLUGINS);
        let session = session_with(&plugins, Some(&shared_cache()), trusted_with_details());
        let experiences = default_experience();
        Game::start_in(conditions, options, plugins, session, experiences, "default.toml").await
    }

    /// A game of another of the repository's experiences (`experiences/<file>`), whose plugins are the default
    /// experience's and `more`.
    async fn start_with(conditions: Conditions, options: ServerOptions, file: &str, more: &[TestPlugin]) -> Game {
        let plugins = PluginDir::with(&DEFAULT_PLUGINS);
        for plugin in more {
            plugins.add(plugin);
        }
        let session = session_with(&plugins, Some(&shared_cache()), trusted_with_details());
        let experiences = default_experience();
        Game::start_in(conditions, options, plugins, session, experiences, file).await
    }

    /// The server of a game of the experience `file` of `experiences`.
    async fn start_in(
        conditions: Conditions,
        options: ServerOptions,
        plugins: PluginDir,
        session: Session,
        experiences: ExperienceDir,
        file: &str,
    ) -> Game {
        let network = MemoryNetwork::new(1, conditions);
        let manager = session.create_world("server", NetMode::DedicatedServer);
        let mut server = GameServer::new(manager, Box::new(network.server()), options);
        server.load(&experiences.path().join(file)).await.unwrap();
        Game { network, server, clients: Vec::new(), notes: Vec::new(), session, experiences, _plugins: plugins }
    }

    fn join(&mut self, token: Option<&str>) {
        let name = format!("client-{}", self.clients.len() + 1);
        let manager = self.session.create_world(&name, NetMode::Client);
        let transport = Box::new(self.network.connect());
        let client = GameClient::connect(manager, transport, token.map(str::to_string), self.experiences.path());
        self.clients.push(client);
    }

    /// One frame everywhere; client errors are returned.
    async fn frame(&mut self) -> Vec<ClientError> {
        self.notes.extend(self.server.frame(FRAME));
        self.network.advance(FRAME);
        let mut errors = Vec::new();
        for client in &mut self.clients {
            if let Err(e) = client.frame(FRAME).await {
                errors.push(e);
            }
        }
        errors
    }

    /// One frame in which the server's world stands still and only delivers (see `GameServer::flush`).
    async fn flush(&mut self) {
        self.notes.extend(self.server.flush());
        self.network.advance(FRAME);
        for client in &mut self.clients {
            assert!(client.frame(FRAME).await.is_ok());
        }
    }

    /// Plays frames until `done` (at most `limit`, so a broken build fails instead of hanging).
    async fn until(&mut self, limit: usize, done: impl Fn(&Game) -> bool) {
        for _ in 0..limit {
            if done(self) {
                return;
            }
            let errors = self.frame().await;
            assert!(errors.is_empty(), "{errors:?}");
        }
        assert!(done(self), "not reached in {limit} frames; server notes {:?}", self.notes);
    }

    fn all_loaded(&self) -> bool {
        self.clients.iter().all(|c| c.manager().state() == ExperienceLoadState::Loaded)
    }

    fn info_lines(&self, plugin: &str, world: &str) -> Vec<String> {
        self.session.timeline().texts(&track::instance(plugin, world), EventKind::Log(LogLevel::Info))
    }

    /// A plugin's details: the lines it logs at debug level.
    fn debug_lines(&self, plugin: &str, world: &str) -> Vec<String> {
        self.session.timeline().texts(&track::instance(plugin, world), EventKind::Log(LogLevel::Debug))
    }
}

/// A hello frame as a hand-made client would send it.
fn raw_hello(protocol: u32, token: &str) -> Vec<u8> {
    encode(&ClientMessage::Hello { protocol, token: Some(token.to_string()) })
}

fn pawn_of(world: &world::World, owner: Option<world::ClientId>) -> Option<ActorId> {
    world
        .actors()
        .find(|a| a.class() == "HeroCharacter" && a.player == owner.map(world::PlayerOwner::Remote))
        .map(|a| a.id)
}

fn score(world: &world::World, player_state: ActorId) -> Option<Value> {
    world.property(player_state, "ScoreComponent", "score").ok().flatten().cloned()
}

#[tokio::test]
async fn the_server_picks_the_experience_and_each_client_loads_it_with_its_own_bundles_and_roles() {
    let mut game =
        Game::start(Conditions::PERFECT, ServerOptions { tick_rate: 30, token: None, ..Default::default() }).await;
    game.join(None);
    game.join(None);
    game.until(100, Game::all_loaded).await;
    let server_report = game.server.manager().report().clone();
    assert!(server_report.failures.is_empty(), "{:?}", server_report.failures);
    let bundles = |report: &gamefeature_host::experience::LoadReport| {
        report.bundles.iter().map(|b| format!("{b:?}")).collect::<Vec<_>>()
    };
    assert_eq!(bundles(&server_report), ["Equipped", "Server"], "a dedicated server loads no Client bundle");
    for client in &game.clients {
        let report = client.manager().report();
        assert!(report.failures.is_empty(), "{:?}", report.failures);
        assert_eq!(bundles(report), ["Equipped", "Client"]);
        assert_eq!(report.active, server_report.active, "the same features on each side");
    }
    // The same load states, on the server and then each client, each in its world's timeline.
    for name in ["server", "client-1", "client-2"] {
        let states = game.session.timeline().texts(&track::experience(name), EventKind::State);
        assert_eq!(states, ["Unloaded", "Loading", "LoadingGameFeatures", "ExecutingActions", "Loaded"], "{name}");
    }

    // Roles: each client's own pawn is its autonomous proxy, the other's a simulated proxy; only the server has
    // authority.
    game.until(10, |g| g.server.players().len() == 2).await;
    game.until(30, |g| {
        g.clients.iter().all(|c| {
            let w = world::lock(c.manager().world());
            g.server.players().keys().all(|id| pawn_of(&w, Some(*id)).is_some())
        })
    })
    .await;
    let ids: Vec<world::ClientId> = game.server.players().keys().copied().collect();
    for (index, client) in game.clients.iter().enumerate() {
        let w = world::lock(client.manager().world());
        let mine = pawn_of(&w, Some(ids[index])).unwrap();
        let theirs = pawn_of(&w, Some(ids[1 - index])).unwrap();
        assert_eq!(w.actor(mine).unwrap().role, NetRole::AutonomousProxy);
        assert_eq!(w.actor(theirs).unwrap().role, NetRole::SimulatedProxy);
        assert_eq!((w.is_locally_controlled(mine), w.is_locally_controlled(theirs)), (Ok(true), Ok(false)));
        assert_eq!((w.has_authority(mine), w.has_authority(theirs)), (Ok(false), Ok(false)));
        // Client-side components come from the client's own actions; the server's replicated ones arrive.
        let components: Vec<&str> = w.actor(mine).unwrap().components.iter().map(|c| &*c.class).collect();
        assert!(components.contains(&"Possession") && components.contains(&"HeroComponent"), "{components:?}");
    }
    let w = world::lock(game.server.manager().world());
    let pawn = w.actor(game.server.players()[&ids[0]].pawn).unwrap();
    assert_eq!(pawn.role, NetRole::Authority);
    assert!(!w.is_locally_controlled(pawn.id).unwrap(), "a dedicated server has no local player");
}

#[tokio::test]
async fn replicated_scores_reach_every_client_with_rep_notifies_and_the_lyra_chain_completes_there() {
    let conditions = Conditions {
        latency: Duration::from_millis(30),
        jitter: Duration::from_millis(60),
        loss: 0.2,
        duplication: 0.1,
    };
    let mut game = Game::start(conditions, ServerOptions { tick_rate: 30, token: None, ..Default::default() }).await;
    game.join(None);
    game.join(None);
    game.until(200, Game::all_loaded).await;
    // Three seconds of play: a point a second on the server.
    for _ in 0..95 {
        assert!(game.frame().await.is_empty());
    }
    game.until(300, |g| g.server.is_settled()).await;
    let players: Vec<_> = game.server.players().values().copied().collect();
    let server_scores: Vec<Option<Value>> = {
        let w = world::lock(game.server.manager().world());
        players.iter().map(|p| score(&w, p.player_state)).collect()
    };
    assert!(server_scores.iter().all(|s| matches!(s, Some(Value::Integer(n)) if *n >= 2)), "{server_scores:?}");
    // A dedicated server has no local player: no pawn of it takes input.
    let server_bound = game.info_lines("input-binding", "server");
    assert!(!server_bound.iter().any(|l| l.contains(": bound")), "{server_bound:?}");
    for (index, client) in game.clients.iter().enumerate() {
        let name = format!("client-{}", index + 1);
        let w = world::lock(client.manager().world());
        let scores: Vec<Option<Value>> = players.iter().map(|p| score(&w, p.player_state)).collect();
        assert_eq!(scores, server_scores, "{name} has the server's scores");
        // Rep-notifies: each player's scores announced in increasing order, ending with the final one.
        let lines = game.debug_lines("score-keeper", &name);
        for player in &players {
            let prefix = format!("score of player {}: ", player.player_state.to_raw());
            let announced: Vec<i64> = lines
                .iter()
                .filter_map(|l| l.strip_prefix(&prefix))
                .map(|l| l.rsplit(" -> ").next().unwrap().parse().unwrap())
                .collect();
            assert!(announced.windows(2).all(|w| w[0] < w[1]), "{name}: {announced:?}");
            let Some(Value::Integer(last)) = score(&w, player.player_state) else { panic!() };
            assert_eq!(announced.last(), Some(&last), "{name}");
        }
        // The pawn's controller and player state arrived by replication, and Lyra's chain completed here too.
        let mine = players[index].pawn;
        let hero = w.feature_state(mine, "Hero").ok().and_then(|s| w.state_text(s).map(str::to_string));
        assert_eq!(hero.as_deref(), Some("InitState.GameplayReady"), "{name}");
        // Input is bound on the pawn this client's player controls, and on no other (Lyra's rule).
        let bound: Vec<String> =
            game.info_lines("input-binding", &name).into_iter().filter(|l| l.contains(": bound")).collect();
        assert_eq!(bound, [format!("pawn {}: bound Move,Look,Fire", mine.to_raw())], "{name}");
    }
}

#[tokio::test]
async fn a_late_joiner_gets_the_world_relevant_to_it_and_a_leaver_takes_exactly_its_actors() {
    let mut game =
        Game::start(Conditions::PERFECT, ServerOptions { tick_rate: 30, token: None, ..Default::default() }).await;
    game.join(None);
    game.until(100, Game::all_loaded).await;
    for _ in 0..40 {
        game.frame().await;
    }
    game.join(None);
    game.until(100, Game::all_loaded).await;
    game.until(100, |g| g.server.is_settled()).await;
    let server_actors = |g: &Game| -> Vec<(ActorId, String)> {
        let w = world::lock(g.server.manager().world());
        w.actors().map(|a| (a.id, a.class().to_string())).collect()
    };
    // The server's actors relevant to a client: all but the other players' controllers.
    let relevant_actors = |g: &Game, index: usize| -> Vec<(ActorId, String)> {
        let client = g.clients[index].id().unwrap();
        let w = world::lock(g.server.manager().world());
        w.actors().filter(|a| w.is_relevant_to(a.id, client)).map(|a| (a.id, a.class().to_string())).collect()
    };
    let client_actors = |g: &Game, index: usize| -> Vec<(ActorId, String)> {
        let w = world::lock(g.clients[index].manager().world());
        w.actors().filter(|a| a.role != NetRole::Authority).map(|a| (a.id, a.class().to_string())).collect()
    };
    let first = game.server.players().values().next().copied().unwrap();
    let relevant = relevant_actors(&game, 1);
    assert_eq!(client_actors(&game, 1), relevant, "the late joiner has every actor relevant to it");
    assert_eq!(relevant.len(), server_actors(&game).len() - 1, "all but the first player's controller");
    assert!(!relevant.iter().any(|(actor, _)| *actor == first.controller));
    {
        let server = world::lock(game.server.manager().world());
        let late = world::lock(game.clients[1].manager().world());
        assert_eq!(score(&late, first.player_state), score(&server, first.player_state), "and the values");
    }

    // The first client leaves: its three actors go, on the server and on the other client; nothing else does.
    let before = server_actors(&game);
    game.clients[0].leave().await;
    game.until(10, |g| g.notes.iter().any(|n| matches!(n, ServerNote::Left(..)))).await;
    game.until(10, |g| client_actors(g, 1) == relevant_actors(g, 1)).await;
    let after = server_actors(&game);
    let gone: Vec<ActorId> = before.iter().filter(|a| !after.contains(a)).map(|a| a.0).collect();
    let mut expected = vec![first.controller, first.player_state, first.pawn];
    expected.sort();
    let mut gone_sorted = gone.clone();
    gone_sorted.sort();
    assert_eq!(gone_sorted, expected);
    assert_eq!(game.server.players().len(), 1);
}

/// The operator kicks a player (the console's action): its connection closes with the reason, its actors leave
/// every world, the other player plays on, the kick is counted by why, and a second kick finds nobody.
#[tokio::test]
async fn a_kicked_player_is_dropped_with_the_reason_and_its_actors_leave() {
    let mut game =
        Game::start(Conditions::PERFECT, ServerOptions { tick_rate: 30, token: None, ..Default::default() }).await;
    game.join(None);
    game.join(None);
    game.until(100, Game::all_loaded).await;
    game.until(100, |g| g.server.players().len() == 2).await;
    let kicked = game.clients[0].id().unwrap();
    let player = game.server.players()[&kicked];
    assert!(game.server.kick(kicked, "cheating"));
    assert!(!game.server.kick(kicked, "again"), "a kicked client is not kicked twice");
    assert!(!game.server.kick(world::ClientId(999), "nobody"), "nobody to kick");
    game.notes.clear();
    let errors = game.frame().await;
    assert!(
        game.notes
            .iter()
            .any(|n| matches!(n, ServerNote::Dropped(c, why) if *c == kicked && why == "kicked: cheating")),
        "{:?}",
        game.notes
    );
    assert_eq!(game.server.players().len(), 1);
    assert_eq!(game.server.closed_connections().get(&gamefeature_host::net::Closed::Kicked), Some(&1));
    {
        let w = world::lock(game.server.manager().world());
        for actor in [player.controller, player.player_state, player.pawn] {
            assert!(w.actor(actor).is_err() || w.actor(actor).unwrap().ending, "{actor} left the server's world");
        }
    }
    // The kicked client hears it was closed; the other plays on.
    let mut heard = errors;
    for _ in 0..30 {
        heard.extend(game.frame().await);
    }
    assert!(heard.iter().any(|e| e.to_string().contains("cheating")), "{heard:?}");
    assert!(matches!(game.clients[1].state(), ClientState::Playing), "{:?}", game.clients[1].state());
}

#[tokio::test]
async fn clients_breaking_the_protocol_are_dropped_alone() {
    let options = ServerOptions { tick_rate: 30, token: Some("sesame".into()), ..Default::default() };
    let mut game = Game::start(Conditions::PERFECT, options).await;
    game.join(Some("sesame"));
    game.until(100, Game::all_loaded).await;

    // A raw connection sending garbage, then one saying hello twice.
    let mut garbage = game.network.connect();
    garbage.send(Channel::Reliable, vec![0xff; 64]);
    game.frame().await;
    let mut twice = game.network.connect();
    let hello = raw_hello(PROTOCOL_VERSION, "sesame");
    twice.send(Channel::Reliable, hello.clone());
    twice.send(Channel::Reliable, hello);
    game.frame().await;
    // A client of another protocol version.
    let mut future = game.network.connect();
    future.send(Channel::Reliable, raw_hello(PROTOCOL_VERSION + 1, "sesame"));
    game.frame().await;
    let told: Vec<gamefeature_host::net::transport::ClientEvent> = future.poll();
    let refused = told.iter().find_map(|event| match event {
        gamefeature_host::net::transport::ClientEvent::Received(frame) => decode::<ServerMessage>(frame).ok(),
        _ => None,
    });
    let expected = format!("the server speaks protocol {PROTOCOL_VERSION}; the client speaks {}", PROTOCOL_VERSION + 1);
    assert_eq!(refused, Some(ServerMessage::Refused { reason: expected }));
    // A client acknowledging more packets than could be in flight (a slow client catching up does): not a
    // breach of the protocol, and only the newest are looked at.
    let mut greedy = game.network.connect();
    greedy.send(Channel::Reliable, raw_hello(PROTOCOL_VERSION, "sesame"));
    game.frame().await;
    let flood = ClientMessage::Ack { packets: (0..100_000).collect() };
    greedy.send(Channel::Reliable, encode(&flood));
    game.frame().await;
    // A client without the token.
    game.join(None);
    for _ in 0..5 {
        game.frame().await;
    }
    let dropped: Vec<String> = game
        .notes
        .iter()
        .filter_map(|n| match n {
            ServerNote::Dropped(_, why) => Some(why.clone()),
            _ => None,
        })
        .collect();
    assert!(dropped[0].starts_with("malformed frame"), "{dropped:?}");
    assert!(dropped.iter().any(|d| d == "out of protocol: a second hello"), "{dropped:?}");
    assert!(dropped.iter().any(|d| d.contains("wrong or missing token")), "{dropped:?}");
    assert!(!dropped.iter().any(|d| d.contains("acknowledgement")), "{dropped:?}");
    assert_eq!(
        game.clients[1].state(),
        &ClientState::Ended("the server refused this client: a wrong or missing token".into())
    );
    // The good client plays on.
    assert_eq!(game.clients[0].state(), &ClientState::Playing);
    // The double hello was welcomed, then dropped with its player; the greedy client still plays.
    assert_eq!(game.server.players().len(), 2);
}

/// Connections that never say hello cannot lock players out: however many there are, the oldest waiting go
/// first, and a player who says hello as it connects joins and plays.
#[tokio::test]
async fn connections_that_never_say_hello_do_not_lock_players_out() {
    let mut game = Game::start(
        Conditions::PERFECT,
        ServerOptions { tick_rate: 30, token: Some("sesame".into()), ..Default::default() },
    )
    .await;
    let mut silent = Vec::new();
    for _ in 0..200 {
        silent.push(game.network.connect());
        game.frame().await;
    }
    game.join(Some("sesame"));
    game.until(200, Game::all_loaded).await;
    assert_eq!(game.server.players().len(), 1, "{:?}", game.notes);
    let evicted = game
        .notes
        .iter()
        .filter(|n| matches!(n, ServerNote::Dropped(_, why) if why.starts_with("no hello while")))
        .count();
    assert!(evicted >= 200 - 64, "the oldest silent connections went: {evicted}");
}

/// A full server refuses the next player, saying so; the players in it play on.
#[tokio::test]
async fn a_full_server_refuses_the_next_player_saying_so() {
    let options = ServerOptions { tick_rate: 30, max_players: Some(1), ..Default::default() };
    let mut game = Game::start(Conditions::PERFECT, options).await;
    game.join(None);
    game.join(None);
    for _ in 0..10 {
        game.frame().await;
    }
    assert_eq!(game.server.players().len(), 1);
    assert_eq!(
        game.clients[1].state(),
        &ClientState::Ended("the server refused this client: the server is full: 1 players".into())
    );
    assert_ne!(game.clients[0].state(), &ClientState::Ended(String::new()));
}

/// A fleet's server waiting for its match takes nobody; allocated with its match's ticket key, it takes the
/// match's players, and only them.
#[tokio::test]
async fn a_server_closed_until_its_match_takes_only_the_matchs_players() {
    use gamefeature_host::net::ticket::{unix_now, Ticket, TicketKey};
    let options = ServerOptions { tick_rate: 30, closed: true, ..Default::default() };
    let mut game = Game::start(Conditions::PERFECT, options).await;
    game.join(None);
    for _ in 0..10 {
        game.frame().await;
    }
    assert!(game.server.players().is_empty());
    assert_eq!(
        game.clients[0].state(),
        &ClientState::Ended("the server refused this client: the server takes no players yet: it has no match".into())
    );
    let key = TicketKey::new(vec![7; 32]).unwrap();
    game.server
        .set_tickets(Some(gamefeature_host::net::TicketPolicy { key: key.clone(), match_id: Some("m-9".into()) }));
    game.server.set_open(true);
    let ticket = key.mint(&Ticket {
        player: "ada".into(),
        name: "Ada".into(),
        match_id: Some("m-9".into()),
        expires: unix_now() + 60,
    });
    game.join(Some(&ticket));
    game.join(None);
    for _ in 0..10 {
        game.frame().await;
    }
    assert_eq!(game.server.players().len(), 1);
    assert!(matches!(game.clients[2].state(), ClientState::Ended(why) if why.contains("its join ticket was refused")));
}

/// Each player presents a join ticket its matchmaker signed: a good one plays, one for another match or an
/// expired one is refused saying why, and the same player joining again replaces its older connection.
/// By default, a ticket presented while its player plays on another connection is refused (a ticket leaked or
/// shared does not take a player away), and the player plays on.
#[tokio::test]
async fn a_second_use_of_a_ticket_is_refused_by_default() {
    use gamefeature_host::net::ticket::{unix_now, Ticket, TicketKey};
    let key = TicketKey::new(vec![42; 32]).unwrap();
    let policy = gamefeature_host::net::TicketPolicy { key: key.clone(), match_id: None };
    let options = ServerOptions { tick_rate: 30, tickets: Some(policy), ..Default::default() };
    let mut game = Game::start(Conditions::PERFECT, options).await;
    let ticket =
        key.mint(&Ticket { player: "ada".into(), name: "Ada".into(), match_id: None, expires: unix_now() + 60 });
    game.join(Some(&ticket));
    for _ in 0..10 {
        game.frame().await;
    }
    let (&ada, &player) = game.server.players().iter().next().expect("ada plays");
    game.join(Some(&ticket));
    for _ in 0..10 {
        game.frame().await;
    }
    assert_eq!(game.server.players().get(&ada), Some(&player), "the first connection keeps the player");
    match game.clients[1].state() {
        ClientState::Ended(why) => assert!(why.contains("player ada is playing on another connection"), "{why}"),
        other => panic!("the second connection plays: {other:?}"),
    }
}

#[tokio::test]
async fn players_join_with_tickets_signed_for_this_match() {
    use gamefeature_host::net::ticket::{unix_now, Ticket, TicketKey};
    let key = TicketKey::new(vec![42; 32]).unwrap();
    let policy = gamefeature_host::net::TicketPolicy { key: key.clone(), match_id: Some("m-1".into()) };
    let take_over = gamefeature_host::net::TicketReuse::TakeOver;
    let options = ServerOptions { tick_rate: 30, tickets: Some(policy), ticket_reuse: take_over, ..Default::default() };
    let mut game = Game::start(Conditions::PERFECT, options).await;
    let ticket = |player: &str, match_id: &str, expires: u64| {
        key.mint(&Ticket {
            player: player.into(),
            name: player.to_uppercase(),
            match_id: Some(match_id.into()),
            expires,
        })
    };
    let later = unix_now() + 3600;
    game.join(Some(&ticket("ada", "m-1", later)));
    game.join(Some(&ticket("bob", "m-2", later)));
    game.join(Some(&ticket("cy", "m-1", unix_now().saturating_sub(10))));
    game.join(Some("sesame"));
    for _ in 0..10 {
        game.frame().await;
    }
    assert_eq!(game.server.players().len(), 1);
    let ended = |index: usize| match game.clients[index].state() {
        ClientState::Ended(why) => why.clone(),
        other => format!("{other:?}"),
    };
    assert_eq!(ended(1), "the server refused this client: its join ticket was refused: it is for another match");
    assert!(ended(2).contains("its join ticket was refused: it expired"), "{}", ended(2));
    assert!(ended(3).contains("it is not a join ticket"), "{}", ended(3));
    let (&ada, &ada_player) = game.server.players().iter().next().unwrap();
    assert_eq!(game.server.identity(ada).map(|t| t.name.as_str()), Some("ADA"));
    // Ada again, on a new connection: the old one goes, and the new one takes back Ada's actors.
    game.join(Some(&ticket("ada", "m-1", later)));
    for _ in 0..10 {
        game.frame().await;
    }
    assert_eq!(game.server.players().len(), 1);
    assert!(!game.server.players().contains_key(&ada));
    let replaced = |n: &ServerNote| matches!(n, ServerNote::Dropped(c, why) if *c == ada && why.contains("player ada joined again"));
    assert!(game.notes.iter().any(replaced));
    assert_eq!(game.server.players().values().next(), Some(&ada_player), "the same pawn, controller and player state");

    // Ada's connection ends; she comes back within the grace period on a new one: her pawn is hers again,
    // locally controlled on her new client, and she is in the relevancy groups she was in.
    let red = world::check_groups(["red"]).unwrap();
    {
        let mut w = world::lock(game.server.manager().world());
        w.set_player_groups(ada_player.pawn, red.clone()).unwrap();
    }
    let first_connection = *game.server.players().keys().next().unwrap();
    game.clients[4].leave().await;
    for _ in 0..5 {
        game.frame().await;
    }
    assert!(game.server.players().is_empty());
    let waits =
        |n: &ServerNote| matches!(n, ServerNote::Left(_, why) if why.contains("its player waits 30s to reconnect"));
    assert!(game.notes.iter().any(waits), "{:?}", game.notes);
    game.join(Some(&ticket("ada", "m-1", later)));
    game.until(200, |g| g.clients[5].manager().state() == ExperienceLoadState::Loaded).await;
    for _ in 0..10 {
        game.frame().await;
    }
    assert_eq!(game.server.players().values().next(), Some(&ada_player));
    let w = world::lock(game.clients[5].manager().world());
    assert_eq!(w.is_locally_controlled(ada_player.pawn), Ok(true));
    let new_connection = *game.server.players().keys().next().unwrap();
    let server = world::lock(game.server.manager().world());
    assert_eq!(server.client_groups(new_connection), Some(&red), "her groups came back with her");
    assert_eq!(server.client_groups(first_connection), None, "and left her old connection");
}

/// A ticketed player who does not come back within the grace period is gone: its actors leave the world, and
/// the server no longer counts it as away.
#[tokio::test]
async fn a_player_who_does_not_come_back_within_the_grace_is_released() {
    use gamefeature_host::net::ticket::{unix_now, Ticket, TicketKey};
    let key = TicketKey::new(vec![3; 32]).unwrap();
    let policy = gamefeature_host::net::TicketPolicy { key: key.clone(), match_id: None };
    let grace = Duration::from_millis(1);
    let options =
        ServerOptions { tick_rate: 30, tickets: Some(policy), reconnect_grace: Some(grace), ..Default::default() };
    let mut game = Game::start(Conditions::PERFECT, options).await;
    let ticket =
        key.mint(&Ticket { player: "ada".into(), name: "Ada".into(), match_id: None, expires: unix_now() + 60 });
    game.join(Some(&ticket));
    game.until(200, |g| g.clients[0].manager().state() == ExperienceLoadState::Loaded).await;
    let ada = *game.server.players().values().next().expect("ada plays");
    game.clients[0].leave().await;
    game.frame().await;
    assert!(game.server.players().is_empty());
    // Away for a frame at least; then, past the grace, released.
    std::thread::sleep(grace * 2);
    for _ in 0..3 {
        game.frame().await;
    }
    assert_eq!(game.server.players_away(), 0);
    let w = world::lock(game.server.manager().world());
    for actor in [ada.pawn, ada.controller, ada.player_state] {
        assert!(w.actor(actor).is_err(), "{actor:?} left the world");
    }
}

/// Before end of play, the server stands its world still and delivers what its clients have not acknowledged:
/// the final values reach every client even over a lossy link.
#[tokio::test]
async fn the_final_values_reach_every_client_before_end_of_play_over_a_lossy_link() {
    let conditions = Conditions {
        latency: Duration::from_millis(30),
        jitter: Duration::from_millis(60),
        loss: 0.3,
        duplication: 0.1,
    };
    let mut game = Game::start(conditions, ServerOptions { tick_rate: 30, ..Default::default() }).await;
    game.join(None);
    game.join(None);
    game.until(200, Game::all_loaded).await;
    // The last word of the match, written by the game as play ends.
    let players: Vec<_> = game.server.players().values().copied().collect();
    game.server.manager_mut().with_world(|w| {
        for (n, player) in players.iter().enumerate() {
            w.set_property(player.player_state, "ScoreComponent", "score", Value::Integer(1000 + n as i64)).unwrap();
        }
    });
    for _ in 0..300 {
        if game.server.is_settled() {
            break;
        }
        game.flush().await;
    }
    assert!(game.server.is_settled(), "every client acknowledged the final values");
    for (index, client) in game.clients.iter().enumerate() {
        let w = world::lock(client.manager().world());
        let scores: Vec<Option<Value>> = players.iter().map(|p| score(&w, p.player_state)).collect();
        assert_eq!(scores, [Some(Value::Integer(1000)), Some(Value::Integer(1001))], "client-{}", index + 1);
    }
    game.server.end_play("the match is over").await.unwrap();
}

#[tokio::test]
async fn end_of_play_on_the_server_ends_play_on_every_client() {
    let mut game =
        Game::start(Conditions::PERFECT, ServerOptions { tick_rate: 30, token: None, ..Default::default() }).await;
    game.join(None);
    game.join(None);
    game.until(100, Game::all_loaded).await;
    game.server.end_play("the match is over").await.unwrap();
    game.frame().await;
    for client in &game.clients {
        assert_eq!(client.state(), &ClientState::Ended("the server ended play: the match is over".into()));
        assert_eq!(client.manager().state(), ExperienceLoadState::Unloaded, "plugins deactivated");
    }
    let progress = game.info_lines("progress-save", "client-1");
    assert!(progress.contains(&"flush complete".to_string()), "deactivation ran on the client: {progress:?}");
}

#[tokio::test]
async fn a_server_that_goes_away_is_reported_and_the_client_ends_play() {
    let mut game =
        Game::start(Conditions::PERFECT, ServerOptions { tick_rate: 30, token: None, ..Default::default() }).await;
    game.join(None);
    game.until(100, Game::all_loaded).await;
    let client = game.server.players().keys().next().copied().unwrap();
    game.server.close("the server shut down");
    let errors = game.frame().await;
    assert_eq!(errors, [ClientError::ServerGone("the server shut down".into())]);
    assert_eq!(game.clients[0].manager().state(), ExperienceLoadState::Unloaded);
    let _ = client;
}

/// Seed 002 over the network: props' health is lazy, created on the server by the first hit and replicated;
/// under loss, values can arrive before their component and wait for it. On the server and on every client
/// exactly the props that were hit have health, with the server's values; every client heard each hit prop's
/// health from its first value on, in order, once each — through a watch set up before the component existed.
#[tokio::test]
async fn lazy_prop_health_exists_only_where_props_were_hit_on_every_side() {
    let conditions = Conditions {
        latency: Duration::from_millis(30),
        jitter: Duration::from_millis(90),
        loss: 0.25,
        duplication: 0.1,
    };
    let mut game = Game::start(conditions, ServerOptions { tick_rate: 30, token: None, ..Default::default() }).await;
    game.join(None);
    game.join(None);
    game.until(300, Game::all_loaded).await;
    // Four seconds of play: props 0, 7 and 42 (by spawn order) get hit.
    for _ in 0..125 {
        assert!(game.frame().await.is_empty());
    }
    game.until(300, |g| g.server.is_settled()).await;
    let with_health = |w: &world::World| -> Vec<(ActorId, Option<Value>)> {
        w.actors()
            .filter(|a| a.class() == "DamageableProp" && a.component("PropHealth").is_some())
            .map(|a| (a.id, a.component("PropHealth").unwrap().properties.get("health").cloned()))
            .collect()
    };
    let server = with_health(&world::lock(game.server.manager().world()));
    assert_eq!(server.len(), 3, "{server:?}");
    assert_eq!(world::lock(game.server.manager().world()).lazy_components(), (3, 197));
    for (index, client) in game.clients.iter().enumerate() {
        let name = format!("client-{}", index + 1);
        assert_eq!(with_health(&world::lock(client.manager().world())), server, "{name}: exactly those props");
        let lines = game.debug_lines("damageable-props", &name);
        for (prop, value) in &server {
            let Some(Value::Integer(last)) = value else { panic!() };
            let heard: Vec<&str> =
                lines.iter().filter_map(|l| l.strip_prefix(&format!("prop {} health: ", prop.to_raw()))).collect();
            // A chain from no value to the last: each change once, in order (a skipped intermediate value is
            // fine — values are latest-wins — but never a repeat or a step back).
            assert_eq!(heard.first().map(|h| h.starts_with("none -> ")), Some(true), "{name}: {heard:?}");
            let values: Vec<i64> = heard.iter().map(|h| h.rsplit(" -> ").next().unwrap().parse().unwrap()).collect();
            assert!(values.windows(2).all(|w| w[0] > w[1]), "{name}: health only goes down: {values:?}");
            assert_eq!(values.last(), Some(last), "{name}");
            for pair in heard.windows(2) {
                let previous_new = pair[0].rsplit(" -> ").next().unwrap();
                assert!(pair[1].starts_with(&format!("{previous_new} -> ")), "{name}: {heard:?}");
            }
        }
    }
}

/// The rooms experience (`experiences/rooms.toml`): its plugin puts players in rooms of two as they arrive and
/// keeps each pawn to its room — a client has its roommate's pawn and not the others', while every player state
/// (and score) still reaches everyone — until the feature is deactivated.
#[tokio::test]
async fn each_client_gets_the_pawns_of_its_room_only() {
    let options = ServerOptions { tick_rate: 30, token: None, ..Default::default() };
    let mut game = Game::start_with(Conditions::PERFECT, options, "rooms.toml", &[ROOMS]).await;
    for _ in 0..3 {
        game.join(None);
        // One at a time, so that the rooms follow the order of joining.
        let joined = game.clients.len();
        game.until(100, |g| g.server.players().len() == joined).await;
    }
    game.until(100, Game::all_loaded).await;
    for _ in 0..30 {
        assert!(game.frame().await.is_empty());
    }
    game.until(300, |g| g.server.is_settled()).await;
    let ids: Vec<world::ClientId> = game.server.players().keys().copied().collect();
    let placed = game.info_lines("rooms", "server");
    let pawns: Vec<ActorId> = ids.iter().map(|id| game.server.players()[id].pawn).collect();
    for (pawn, room) in pawns.iter().zip(["room-0", "room-0", "room-1"]) {
        let line = format!("pawn {}: {room}", pawn.to_raw());
        assert!(placed.contains(&line), "{line} in {placed:?}");
    }
    let rooms = [vec![pawns[0], pawns[1]], vec![pawns[0], pawns[1]], vec![pawns[2]]];
    let server_states: Vec<ActorId> = {
        let w = world::lock(game.server.manager().world());
        w.actors_of_class("PlayerState").unwrap()
    };
    for (index, client) in game.clients.iter().enumerate() {
        assert!(client.manager().report().failures.is_empty(), "{:?}", client.manager().report().failures);
        let w = world::lock(client.manager().world());
        let mut heroes = w.actors_of_class("HeroCharacter").unwrap();
        heroes.sort();
        assert_eq!(heroes, rooms[index], "client-{}", index + 1);
        assert_eq!(w.actors_of_class("PlayerState").unwrap(), server_states, "client-{}", index + 1);
    }
    // The clients placed nobody: only a server decides what its clients see.
    for name in ["client-1", "client-2", "client-3"] {
        assert_eq!(game.info_lines("rooms", name), ["no clients here: nobody to place in rooms"], "{name}");
    }

    // The feature deactivated on the server: every pawn goes back to every client.
    assert!(game.server.manager_mut().deactivate_feature("rooms").await);
    let mut all = pawns.clone();
    all.sort();
    game.until(60, |g| {
        g.clients.iter().all(|c| {
            let mut heroes = world::lock(c.manager().world()).actors_of_class("HeroCharacter").unwrap();
            heroes.sort();
            heroes == all
        })
    })
    .await;
}

/// The library's game loop, without a plugin: a recorded server and two clients over the in-memory network,
/// each a `GameLoop`; the server's loop ends play in its order — what clients had not acknowledged reaches them,
/// they hear play end with its reason, their connections close — and the recording replays the same.
#[test]
fn a_game_loop_ends_a_server_and_its_clients_in_order_and_its_recording_replays_the_same() {
    use gamefeature_host::game_loop::{Ending, GameLoop, Played};
    use gamefeature_host::recording::{Record, Recording, Role};
    use gamefeature_host::replay::{Recorded, WorldRecording};

    let tokio = tokio::runtime::Runtime::new().unwrap();
    let plugins = PluginDir::with(&[]);
    let options = gamefeature_host::SessionOptions {
        plugin_dirs: vec![plugins.path().to_path_buf()],
        runtime: runtime_config(None),
        manager: trusted(),
        ..Default::default()
    };
    let session = Session::new(options.clone()).unwrap();
    let experiences = ExperienceDir::new();
    let experience = experiences.write("bare.toml", "[experience]\nname = \"bare\"\n");
    let network = MemoryNetwork::new(7, Conditions::PERFECT);
    let mut manager = session.create_world("server", NetMode::DedicatedServer);
    let file = experiences.path().join("server.gfrec");
    let recorded = Recorded {
        role: Role::Server,
        experience: Some(&experience),
        experiences_dir: None,
        mods: None,
        world: "server",
        net_mode: NetMode::DedicatedServer,
        tick_rate: 30,
    };
    let recording = WorldRecording::start(&file, recorded, &options, &mut manager).unwrap();
    let transport = gamefeature_host::replay::RecordingServerTransport::new(
        Box::new(network.server()),
        recording.recorder().clone(),
    );
    let mut server = GameServer::new(manager, Box::new(transport), ServerOptions::default());
    tokio.block_on(server.load(&experience)).unwrap();
    let mut server = GameLoop::new(Played::Server(Box::new(server)), tokio.handle().clone()).recorded(recording);

    struct Clients<'a> {
        loops: Vec<GameLoop>,
        network: &'a MemoryNetwork,
        ended: Vec<String>,
        notes: Vec<String>,
    }
    impl Clients<'_> {
        fn step(&mut self) {
            self.network.advance(FRAME);
            for client in &mut self.loops {
                if let Some(ended) = client.step(FRAME).ended {
                    self.ended.push(ended.expect("play ends cleanly"));
                }
            }
        }
    }
    impl Ending for Clients<'_> {
        fn note(&mut self, _server: &GameServer, note: ServerNote) {
            self.notes.push(note.to_string());
        }
        fn wait(&mut self, _frame: Duration) {
            self.step();
        }
    }
    let mut clients = Clients { loops: Vec::new(), network: &network, ended: Vec::new(), notes: Vec::new() };
    for name in ["client-1", "client-2"] {
        let manager = session.create_world(name, NetMode::Client);
        let client = GameClient::connect(manager, Box::new(network.connect()), None, experiences.path());
        clients.loops.push(GameLoop::new(Played::Client(Box::new(client)), tokio.handle().clone()));
    }
    for _ in 0..100 {
        let step = server.step(FRAME);
        clients.notes.extend(step.notes.iter().map(ToString::to_string));
        clients.step();
        let loaded = clients.loops.iter().all(|c| c.manager().state() == ExperienceLoadState::Loaded);
        if loaded && server.server().unwrap().players().len() == 2 {
            break;
        }
    }
    assert_eq!(server.server().unwrap().players().len(), 2, "{:?}", clients.notes);

    // Settling lets the clients catch up while the world stands still: no frame of the server's passes.
    let before = world::lock(server.manager().world()).now();
    assert!(server.settle(FRAME, &mut clients), "every client acknowledged what it was sent");
    assert_eq!(world::lock(server.manager().world()).now(), before, "the world stood still");
    assert!(server.server().unwrap().is_settled());

    let ended = server.end("the match is over", FRAME, &mut clients).unwrap();
    assert_eq!(clients.ended, ["the server ended play: the match is over"; 2], "each client hears why");
    let left = clients.notes.iter().filter(|n| n.contains(" left: ")).count();
    assert_eq!(left, 2, "both connections closed before the loop gave the world back: {:?}", clients.notes);
    assert_eq!(ended.manager.state(), ExperienceLoadState::Unloaded);
    let recording_end = ended.recording.expect("recorded");
    assert!(recording_end.size.is_ok());

    // The end of play is in the recording in its order, and the recording replays the same.
    let recording = Recording::read(&file).unwrap();
    let order: Vec<&str> = recording
        .records()
        .filter_map(|record| match record {
            Record::EndPlay(_) => Some("end play"),
            Record::Close(_) => Some("close"),
            Record::End => Some("end"),
            _ => None,
        })
        .collect();
    assert_eq!(order, ["end play", "close", "end"]);
    let replay_options = gamefeature_host::replay::ReplayOptions {
        plugin_dirs: None,
        follow_recorded: false,
        session: options,
        mod_sync: None,
        through_differences: false,
    };
    let report = gamefeature_host::replay::replay(&recording, replay_options, tokio.handle().clone()).unwrap();
    assert_eq!(report.divergence, None);
    assert_eq!(report.frames, recording_end.frames);
    for client in clients.loops {
        client.end("the match is over", FRAME, &mut ()).unwrap();
    }
}
