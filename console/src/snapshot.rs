//! What a viewer sees at one moment: the world's actors, the plugins and what they cost, the clients, the
//! latest plugin calls and log lines. Built on the frame thread a few times a second (never per viewer) and
//! sent to every viewer as the same JSON text.
//!
//! Everything here is bounded whatever the world holds or a plugin writes: at most [`MAX_ACTORS`] actors are
//! listed, and fewer once [`MAX_PROPERTIES_LISTED`] properties have been (the counts by class cover every actor);
//! an actor shows at most [`MAX_COMPONENTS`] components and a component [`MAX_PROPERTIES`] properties (with how
//! many more there are); names and text values are escaped and cut; the history strips are rings of fixed size.

use std::collections::BTreeMap;

use gamefeature_host::net::GameServer;
use gamefeature_host::world::{Actor, ComponentOrigin, PlayerOwner, Value, World};
use serde::Serialize;

/// Actors listed one by one; past this the snapshot says how many there are by class, and lists the first.
pub const MAX_ACTORS: usize = 400;

/// Bytes of a text value shown.
pub const MAX_TEXT: usize = 160;

/// Bytes of a name (a class, property, feature or plugin) shown.
pub const MAX_NAME: usize = 80;

/// Components listed per actor.
pub const MAX_COMPONENTS: usize = 32;

/// Properties listed per component.
pub const MAX_PROPERTIES: usize = 64;

/// Properties listed in all: past it no more actors are listed, so that a world whose plugins write many
/// properties is still a snapshot of a few megabytes at most.
pub const MAX_PROPERTIES_LISTED: usize = 20_000;

/// One moment of the world, as every viewer gets it.
#[derive(Debug, Default, Serialize)]
pub struct Snapshot {
    /// Numbers snapshots, so a page can tell a new one from one it has.
    pub seq: u64,
    /// Milliseconds since the console started.
    pub at_ms: u64,
    pub world: WorldView,
    pub actors: Vec<ActorView>,
    /// Actors in the world by class, every one counted.
    pub classes: BTreeMap<String, usize>,
    pub actors_total: usize,
    pub plugins: Vec<PluginView>,
    pub clients: Vec<ClientView>,
    /// The latest calls into plugins, oldest first.
    pub calls: Vec<CallView>,
    /// The latest log lines, oldest first.
    pub log: Vec<LogLine>,
    /// Whether actions are taken here (a token is set and the console is not exposed without TLS), and if not,
    /// why.
    pub actions: ActionsView,
}

#[derive(Debug, Default, Serialize)]
pub struct WorldView {
    pub name: String,
    pub net_mode: String,
    pub experience: String,
    pub load_state: String,
    /// The last frame's wall time, in milliseconds.
    pub frame_ms: f64,
    /// The frame's length at the tick rate, in milliseconds.
    pub frame_period_ms: f64,
    /// Each plugin's CPU allowance per frame, in milliseconds, if the host sets one.
    pub frame_budget_ms: Option<f64>,
    pub frames: u64,
}

#[derive(Debug, Serialize)]
pub struct ActorView {
    pub id: String,
    pub name: String,
    pub class: String,
    pub role: String,
    /// `local`, `client N`, or none.
    pub player: Option<String>,
    /// The plugin instance that spawned it, if one did.
    pub spawned_by: Option<String>,
    pub components: Vec<ComponentView>,
    /// Components past [`MAX_COMPONENTS`], not listed.
    pub more_components: usize,
    /// Init-state features and the state each reached.
    pub features: Vec<(String, String)>,
    /// Where it stands, when a component holds numeric `x` and `y`: what the map draws.
    pub position: Option<(f64, f64)>,
}

#[derive(Debug, Serialize)]
pub struct ComponentView {
    pub class: String,
    /// `game` (spawned with the actor), `server` (replicated to this client), or the plugin whose request
    /// added it.
    pub by: String,
    pub replicated: bool,
    /// Property, value as shown, and the plugin that wrote it (none for the game's own writes).
    pub properties: Vec<(String, String, Option<String>)>,
    /// Properties past [`MAX_PROPERTIES`], not listed.
    pub more_properties: usize,
}

#[derive(Debug, Default, Serialize)]
pub struct PluginView {
    pub name: String,
    pub version: String,
    /// The plugin state machine's state (`Active`, an error...).
    pub state: String,
    /// `running` in this world, `out` (wanted but quarantined or failed), or `installed` (not in this world).
    pub in_world: String,
    pub api: String,
    /// The trusted publisher that signed its package, if it came as one.
    pub publisher: Option<String>,
    pub asked: String,
    pub granted: String,
    /// Who narrowed what it asks below its file (a publisher's ceiling), if anyone did.
    pub limited_by: Option<String>,
    /// CPU per frame over the last frames, in microseconds, oldest first.
    pub cpu_us: Vec<u32>,
    pub calls: u64,
    pub quarantines: u64,
    pub restarts: u64,
    /// The latest failures and restarts, with their reasons.
    pub incidents: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct ClientView {
    pub id: String,
    pub playing: bool,
    /// The player's pawn, if it plays.
    pub pawn: Option<String>,
    /// The ticket's player name, if it joined with one.
    pub player: Option<String>,
    pub address: Option<String>,
    pub round_trip_ms: Option<f64>,
    /// Bytes a second since the last snapshot; none on the first after a pause.
    pub sent_bytes_per_s: Option<f64>,
    pub received_bytes_per_s: Option<f64>,
    pub backlog: usize,
    pub values_sent: u64,
    /// Package bytes it fetched (mod sync) on this connection.
    pub mods_fetched_bytes: u64,
    /// The relevancy groups it is in.
    pub groups: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CallView {
    pub at_ms: u64,
    pub track: String,
    pub text: String,
    pub took_us: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LogLine {
    pub at_ms: u64,
    pub text: String,
}

#[derive(Debug, Default, Clone, Serialize)]
pub struct ActionsView {
    pub allowed: bool,
    pub why_not: Option<String>,
}

/// The world's actors (the first [`MAX_ACTORS`]) and every actor counted by class.
pub fn actors_of(w: &World) -> (Vec<ActorView>, BTreeMap<String, usize>, usize) {
    let mut classes: BTreeMap<String, usize> = BTreeMap::new();
    let mut actors = Vec::new();
    let mut total = 0;
    let mut properties = 0;
    for actor in w.actors() {
        total += 1;
        *classes.entry(name(actor.class())).or_default() += 1;
        if actors.len() < MAX_ACTORS && properties < MAX_PROPERTIES_LISTED {
            let view = actor_view(w, actor);
            properties += view.components.iter().map(|c| c.properties.len()).sum::<usize>();
            actors.push(view);
        }
    }
    (actors, classes, total)
}

fn actor_view(w: &World, actor: &Actor) -> ActorView {
    let plugin_of = |owner| plugin_of_label(w.owner_label(owner));
    let components: Vec<ComponentView> = actor
        .components
        .iter()
        .take(MAX_COMPONENTS)
        .map(|c| ComponentView {
            class: name(&c.class),
            by: match &c.origin {
                ComponentOrigin::Native => "game".to_string(),
                ComponentOrigin::Replicated => "server".to_string(),
                ComponentOrigin::Request(_) => {
                    // The plugin that wrote its properties first is the one whose request added it, nearly
                    // always; a component no plugin wrote yet says it was requested.
                    c.writers.iter().next().map_or("a plugin's request".to_string(), |(_, owner)| plugin_of(*owner))
                }
            },
            replicated: c.replicated,
            properties: c
                .properties
                .iter()
                .take(MAX_PROPERTIES)
                .map(|(property, value)| {
                    (name(property), shown(value), c.writers.get(property).map(|owner| plugin_of(*owner)))
                })
                .collect(),
            more_properties: c.properties.len().saturating_sub(MAX_PROPERTIES),
        })
        .collect();
    let features = w
        .feature_states(actor.id)
        .take(MAX_COMPONENTS)
        .map(|(feature, state)| (name(w.name_text(feature)), name(w.state_text(state).unwrap_or(""))))
        .collect();
    ActorView {
        id: actor.id.to_string(),
        name: actor.name(),
        class: name(actor.class()),
        more_components: actor.components.len().saturating_sub(MAX_COMPONENTS),
        role: format!("{:?}", actor.role),
        player: actor.player.map(|p| match p {
            PlayerOwner::Local => "local".to_string(),
            PlayerOwner::Remote(client) => client.to_string(),
        }),
        spawned_by: actor.spawned_by.map(plugin_of),
        position: position_of(actor),
        components,
        features,
    }
}

/// An owner's label is its instance's, `plugin@world`: the plugin is what a viewer knows.
fn plugin_of_label(label: &str) -> String {
    name(label.split('@').next().unwrap_or(label))
}

/// A name as shown: control characters escaped, cut at [`MAX_NAME`] bytes.
fn name(text: &str) -> String {
    gamefeature_host::text::shown(text, MAX_NAME)
}

/// The first component holding numeric `x` and `y`.
fn position_of(actor: &Actor) -> Option<(f64, f64)> {
    let number = |v: Option<&Value>| match v? {
        Value::Float(f) if f.is_finite() => Some(*f),
        Value::Integer(i) => Some(*i as f64),
        _ => None,
    };
    actor.components.iter().find_map(|c| Some((number(c.properties.get("x"))?, number(c.properties.get("y"))?)))
}

/// A value as a viewer reads it; text cut at [`MAX_TEXT`] characters.
pub fn shown(value: &Value) -> String {
    match value {
        Value::Boolean(b) => b.to_string(),
        Value::Integer(i) => i.to_string(),
        Value::Float(f) => format!("{f:.3}"),
        Value::Text(t) => format!("\"{}\"", gamefeature_host::text::shown(t, MAX_TEXT)),
    }
}

/// A server's clients, their traffic rates measured against `last` (each client's bytes sent and received at
/// `seconds` ago), which is brought up to date.
pub fn clients_of(
    server: &GameServer,
    last: &mut BTreeMap<gamefeature_host::world::ClientId, (u64, u64)>,
    seconds: f64,
) -> Vec<ClientView> {
    let stats = server.client_stats();
    let w = gamefeature_host::world::lock(server.manager().world());
    let mut now = BTreeMap::new();
    let views = stats
        .iter()
        .map(|s| {
            let (sent, received) = (s.traffic.bytes_sent, s.traffic.bytes_received);
            now.insert(s.client, (sent, received));
            let (last_sent, last_received) = last.get(&s.client).copied().unwrap_or((sent, received));
            let rate = |now: u64, then: u64| (seconds > 0.0).then(|| now.saturating_sub(then) as f64 / seconds);
            ClientView {
                id: s.client.to_string(),
                playing: s.playing,
                pawn: server.players().get(&s.client).and_then(|p| w.actor(p.pawn).ok()).map(Actor::name),
                player: server.identity(s.client).map(|t| {
                    if t.name.is_empty() {
                        t.player.clone()
                    } else {
                        t.name.clone()
                    }
                }),
                address: server.peer(s.client).map(|a| a.to_string()),
                round_trip_ms: s.traffic.round_trip.map(|r| r.as_secs_f64() * 1000.0),
                sent_bytes_per_s: rate(sent, last_sent),
                received_bytes_per_s: rate(received, last_received),
                backlog: s.backlog,
                values_sent: s.values_sent,
                mods_fetched_bytes: s.fetched_bytes,
                groups: w
                    .client_groups(s.client)
                    .map(|g| g.iter().map(|g| g.to_string()).collect())
                    .unwrap_or_default(),
            }
        })
        .collect();
    *last = now;
    views
}

#[cfg(test)]
mod tests {
    use super::*;
    use gamefeature_host::world::NetMode;

    #[test]
    fn actors_show_their_components_properties_and_position_and_are_counted_by_class() {
        let mut w = World::new("test", NetMode::Standalone);
        w.declare_class("Hero", "Pawn").unwrap();
        let hero = w.spawn("Hero").unwrap();
        w.attach_native_component(hero, "Position").unwrap();
        w.set_property(hero, "Position", "x", Value::Float(2.5)).unwrap();
        w.set_property(hero, "Position", "y", Value::Integer(-4)).unwrap();
        w.set_property(hero, "Position", "label", Value::Text("a".repeat(500))).unwrap();
        for _ in 0..3 {
            w.spawn("Pawn").unwrap();
        }
        let (actors, classes, total) = actors_of(&w);
        assert_eq!(total, 4);
        assert_eq!(classes.get("Pawn"), Some(&3));
        assert_eq!(classes.get("Hero"), Some(&1));
        let hero = actors.iter().find(|a| a.class == "Hero").unwrap();
        assert_eq!(hero.position, Some((2.5, -4.0)));
        let position = &hero.components[0];
        assert_eq!((position.class.as_str(), position.by.as_str()), ("Position", "game"));
        let label = &position.properties.iter().find(|p| p.0 == "label").unwrap().1;
        assert!(label.len() < MAX_TEXT + 10, "a long text is cut: {label}");
    }

    #[test]
    fn a_plugin_s_many_properties_and_odd_names_stay_bounded_and_on_one_line() {
        let mut w = World::new("test", NetMode::Standalone);
        let mut spawned = Vec::new();
        for _ in 0..MAX_ACTORS {
            let actor = w.spawn("Pawn").unwrap();
            w.attach_native_component(actor, "Bag\nforged").unwrap();
            for i in 0..MAX_PROPERTIES + 36 {
                w.set_property(actor, "Bag\nforged", &format!("p{i}"), Value::Integer(i as i64)).unwrap();
            }
            spawned.push(actor);
        }
        let (actors, _, total) = actors_of(&w);
        assert_eq!(total, MAX_ACTORS);
        let listed: usize = actors.iter().map(|a| a.components.iter().map(|c| c.properties.len()).sum::<usize>()).sum();
        assert!(listed <= MAX_PROPERTIES_LISTED + MAX_PROPERTIES, "{listed} properties listed");
        assert!(actors.len() < MAX_ACTORS, "past the budget, fewer actors are listed");
        let bag = &actors[0].components[0];
        assert_eq!((bag.properties.len(), bag.more_properties), (MAX_PROPERTIES, 36));
        assert_eq!(bag.class, "Bag\\nforged", "a name's newline is shown escaped");
    }

    #[test]
    fn a_world_larger_than_the_limit_is_counted_whole_and_listed_in_part() {
        let mut w = World::new("test", NetMode::Standalone);
        for _ in 0..MAX_ACTORS + 10 {
            w.spawn("Pawn").unwrap();
        }
        let (actors, classes, total) = actors_of(&w);
        assert_eq!((actors.len(), total, classes["Pawn"]), (MAX_ACTORS, MAX_ACTORS + 10, MAX_ACTORS + 10));
    }
}
