//! What a server exposes to Prometheus: its frames, its plugins' cost, its traffic and its players', the
//! connections it closed and why, and its compile cache. Read off the server once per frame (per second for
//! what costs more to read) into prometheus-client's metrics, which the admin endpoint encodes when scraped.
//!
//! The number of series stays bounded whatever peers do: per-client series exist only for players (a
//! connection that never joins has none), at most [`MAX_CLIENT_SERIES`] of them, the rest summed under
//! `client="other"`; what every connection carried, and why each closed, is counted server-wide, so a flood
//! closed between two scrapes still shows.

use std::collections::HashMap;
use std::time::Duration;

use gamefeature_host::net::transport::Traffic;
use gamefeature_host::net::GameServer;
use gamefeature_host::runtime::CompileCounts;
use gamefeature_host::world::ClientId;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PluginLabel {
    plugin: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ClientLabel {
    client: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabel {
    reason: &'static str,
}

/// Players with series of their own; the others are summed under `client="other"`.
pub const MAX_CLIENT_SERIES: usize = 256;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StateLabel {
    state: &'static str,
}

type F64Counter = Counter<f64, std::sync::atomic::AtomicU64>;
type F64Gauge = Gauge<f64, std::sync::atomic::AtomicU64>;

/// A server's metrics, and what was last read of the counters the server keeps as totals.
pub struct ServerMetrics {
    frame_seconds: Histogram,
    plugin_cpu_seconds: Family<PluginLabel, F64Counter>,
    plugin_frame_cpu_seconds: Family<PluginLabel, F64Gauge>,
    plugin_calls: Family<PluginLabel, Counter>,
    quarantines: Counter,
    restarts: Counter,
    clients: Family<StateLabel, Gauge>,
    client_sent_bytes: Family<ClientLabel, Counter>,
    client_sent_packets: Family<ClientLabel, Counter>,
    client_received_bytes: Family<ClientLabel, Counter>,
    client_received_packets: Family<ClientLabel, Counter>,
    client_round_trip_seconds: Family<ClientLabel, F64Gauge>,
    client_backlog: Family<ClientLabel, Gauge>,
    compile_cache_hits: Counter,
    compiled: Counter,
    client_sent_values: Family<ClientLabel, Counter>,
    sent_bytes: Counter,
    sent_packets: Counter,
    received_bytes: Counter,
    received_packets: Counter,
    connections_closed: Family<ReasonLabel, Counter>,
    fetched_bytes: Counter,
    last_fetched: u64,
    /// The server's totals when last read.
    last_total: Traffic,
    last_closed: HashMap<gamefeature_host::net::Closed, u64>,
    /// Each client's traffic and values sent when last read.
    last_traffic: HashMap<ClientId, (Traffic, u64)>,
    last_quarantines: u64,
    last_restarts: u64,
    last_compiles: CompileCounts,
}

impl ServerMetrics {
    /// The metrics, registered in `registry` (their names start with `gamefeature_`).
    pub fn register(registry: &mut Registry) -> Self {
        let metrics = ServerMetrics {
            // 0.5 ms to ~1 s.
            frame_seconds: Histogram::new(exponential_buckets(0.0005, 2.0, 12)),
            plugin_cpu_seconds: Family::default(),
            plugin_frame_cpu_seconds: Family::default(),
            plugin_calls: Family::default(),
            quarantines: Counter::default(),
            restarts: Counter::default(),
            clients: Family::default(),
            client_sent_bytes: Family::default(),
            client_sent_packets: Family::default(),
            client_received_bytes: Family::default(),
            client_received_packets: Family::default(),
            client_round_trip_seconds: Family::default(),
            client_backlog: Family::default(),
            compile_cache_hits: Counter::default(),
            compiled: Counter::default(),
            client_sent_values: Family::default(),
            sent_bytes: Counter::default(),
            sent_packets: Counter::default(),
            received_bytes: Counter::default(),
            received_packets: Counter::default(),
            connections_closed: Family::default(),
            fetched_bytes: Counter::default(),
            last_fetched: 0,
            last_total: Traffic::default(),
            last_closed: HashMap::new(),
            last_traffic: HashMap::new(),
            last_quarantines: 0,
            last_restarts: 0,
            last_compiles: CompileCounts::default(),
        };
        let r = registry.sub_registry_with_prefix("gamefeature");
        r.register(
            "frame_seconds",
            "Wall time of the server's frames: clients, the world's tick, replication",
            metrics.frame_seconds.clone(),
        );
        r.register(
            "plugin_cpu_seconds",
            "CPU time of each plugin's code (and time parked in WASI)",
            metrics.plugin_cpu_seconds.clone(),
        );
        r.register(
            "plugin_frame_cpu_seconds",
            "CPU time of each plugin's code in the last frame, to hold against its frame budget",
            metrics.plugin_frame_cpu_seconds.clone(),
        );
        r.register("plugin_calls", "Calls into each plugin", metrics.plugin_calls.clone());
        r.register("quarantines", "Plugin instances quarantined", metrics.quarantines.clone());
        r.register("plugin_restarts", "Plugins started again after a fault ([restarts])", metrics.restarts.clone());
        r.register("clients", "Clients connected, by state (greeting or playing)", metrics.clients.clone());
        r.register("client_sent_bytes", "UDP bytes sent to each client", metrics.client_sent_bytes.clone());
        r.register("client_sent_packets", "UDP datagrams sent to each client", metrics.client_sent_packets.clone());
        r.register(
            "client_sent_values",
            "Replicated values sent to each client, sent again ones included",
            metrics.client_sent_values.clone(),
        );
        r.register(
            "client_received_bytes",
            "UDP bytes received from each client",
            metrics.client_received_bytes.clone(),
        );
        r.register(
            "client_received_packets",
            "UDP datagrams received from each client",
            metrics.client_received_packets.clone(),
        );
        r.register("client_round_trip_seconds", "Round trip to each client", metrics.client_round_trip_seconds.clone());
        r.register(
            "client_backlog_values",
            "Replicated values whose newest version each client has not acknowledged",
            metrics.client_backlog.clone(),
        );
        let totals = [
            ("sent_bytes", "UDP bytes sent to every connection, closed ones included", &metrics.sent_bytes),
            ("sent_packets", "UDP datagrams sent to every connection, closed ones included", &metrics.sent_packets),
            (
                "received_bytes",
                "UDP bytes received from every connection, closed ones included",
                &metrics.received_bytes,
            ),
            (
                "received_packets",
                "UDP datagrams received from every connection, closed ones included",
                &metrics.received_packets,
            ),
        ];
        for (name, help, counter) in totals {
            r.register(name, help, counter.clone());
        }
        r.register(
            "connections_closed",
            "Connections closed, by why: left, timeout, flood, protocol, refused, silent (no hello), replaced, failed",
            metrics.connections_closed.clone(),
        );
        r.register(
            "fetched_bytes",
            "Package bytes sent to clients fetching the experience's plugins (mod sync)",
            metrics.fetched_bytes.clone(),
        );
        for reason in gamefeature_host::net::Closed::ALL {
            let _ = metrics.connections_closed.get_or_create(&ReasonLabel { reason: reason.label() });
        }
        r.register("compile_cache_hits", "Components read from the compile cache", metrics.compile_cache_hits.clone());
        r.register("compiled_components", "Components compiled (compile cache misses)", metrics.compiled.clone());
        metrics
    }

    /// Reads one frame: how long it took, and what each plugin spent in it.
    pub fn observe_frame(&mut self, server: &GameServer, took: Duration) {
        self.frame_seconds.observe(took.as_secs_f64());
        let manager = server.manager();
        for (plugin, spent) in manager.last_frame_spend() {
            let label = PluginLabel { plugin: plugin.to_string() };
            let cpu = spent.cpu.as_secs_f64();
            self.plugin_cpu_seconds.get_or_create(&label).inc_by(cpu);
            self.plugin_frame_cpu_seconds.get_or_create(&label).set(cpu);
            self.plugin_calls.get_or_create(&label).inc_by(u64::from(spent.calls));
        }
        let quarantines = manager.quarantine_count();
        self.quarantines.inc_by(quarantines.saturating_sub(self.last_quarantines));
        self.last_quarantines = quarantines;
        let restarts = manager.restart_count();
        self.restarts.inc_by(restarts.saturating_sub(self.last_restarts));
        self.last_restarts = restarts;
    }

    /// Reads the clients (their traffic and backlog) and the compile cache: once a second is enough for a
    /// scrape every few seconds, and spares a busy server reading every connection's counters each frame.
    pub fn observe_clients(&mut self, server: &GameServer, compiles: CompileCounts) {
        let stats = server.client_stats();
        let playing = stats.iter().filter(|s| s.playing).count();
        self.clients.get_or_create(&StateLabel { state: "playing" }).set(playing as i64);
        self.clients.get_or_create(&StateLabel { state: "greeting" }).set((stats.len() - playing) as i64);
        // Series for players only, the first MAX_CLIENT_SERIES of them by id; the others summed as one.
        for (index, client) in stats.iter().filter(|s| s.playing).enumerate() {
            let own = index < MAX_CLIENT_SERIES;
            let label = ClientLabel { client: if own { client.client.0.to_string() } else { "other".to_string() } };
            let (last, last_values) =
                self.last_traffic.insert(client.client, (client.traffic, client.values_sent)).unwrap_or_default();
            let now = client.traffic;
            self.client_sent_values.get_or_create(&label).inc_by(client.values_sent.saturating_sub(last_values));
            self.client_sent_bytes.get_or_create(&label).inc_by(now.bytes_sent.saturating_sub(last.bytes_sent));
            self.client_sent_packets.get_or_create(&label).inc_by(now.packets_sent.saturating_sub(last.packets_sent));
            self.client_received_bytes
                .get_or_create(&label)
                .inc_by(now.bytes_received.saturating_sub(last.bytes_received));
            self.client_received_packets
                .get_or_create(&label)
                .inc_by(now.packets_received.saturating_sub(last.packets_received));
            if !own {
                continue;
            }
            if let Some(round_trip) = now.round_trip {
                self.client_round_trip_seconds.get_or_create(&label).set(round_trip.as_secs_f64());
            }
            self.client_backlog.get_or_create(&label).set(client.backlog as i64);
        }
        self.observe_totals(server);
        // A player's series leave with it: their number would otherwise grow with every player ever seen (the
        // server-wide counters keep what it carried).
        let connected: std::collections::HashSet<ClientId> =
            stats.iter().filter(|s| s.playing).map(|s| s.client).collect();
        let gone: Vec<ClientId> = self.last_traffic.keys().filter(|c| !connected.contains(c)).copied().collect();
        for client in gone {
            self.last_traffic.remove(&client);
            let label = ClientLabel { client: client.0.to_string() };
            self.client_sent_bytes.remove(&label);
            self.client_sent_packets.remove(&label);
            self.client_sent_values.remove(&label);
            self.client_received_bytes.remove(&label);
            self.client_received_packets.remove(&label);
            self.client_round_trip_seconds.remove(&label);
            self.client_backlog.remove(&label);
        }
        self.compile_cache_hits.inc_by(compiles.cache_hits.saturating_sub(self.last_compiles.cache_hits));
        self.compiled.inc_by(compiles.compiled.saturating_sub(self.last_compiles.compiled));
        self.last_compiles = compiles;
    }

    /// Reads what every connection carried, and the connections closed by why.
    fn observe_totals(&mut self, server: &GameServer) {
        let (now, last) = (server.total_traffic(), self.last_total);
        self.sent_bytes.inc_by(now.bytes_sent.saturating_sub(last.bytes_sent));
        self.sent_packets.inc_by(now.packets_sent.saturating_sub(last.packets_sent));
        self.received_bytes.inc_by(now.bytes_received.saturating_sub(last.bytes_received));
        self.received_packets.inc_by(now.packets_received.saturating_sub(last.packets_received));
        self.last_total = now;
        self.fetched_bytes.inc_by(server.fetched_bytes().saturating_sub(self.last_fetched));
        self.last_fetched = server.fetched_bytes();
        for (reason, count) in server.closed_connections() {
            let last = self.last_closed.insert(*reason, *count).unwrap_or(0);
            self.connections_closed
                .get_or_create(&ReasonLabel { reason: reason.label() })
                .inc_by(count.saturating_sub(last));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names a scrape shows for the registered families: a counter's `_total`, a histogram's `_bucket`,
    /// `_sum` and `_count`, a gauge's own.
    fn served() -> std::collections::BTreeSet<String> {
        let mut registry = Registry::default();
        let metrics = ServerMetrics::register(&mut registry);
        // A family shows in a scrape once it has a series.
        let (plugin, client) = (PluginLabel { plugin: "p".into() }, ClientLabel { client: "1".into() });
        let _ = metrics.plugin_cpu_seconds.get_or_create(&plugin);
        let _ = metrics.plugin_frame_cpu_seconds.get_or_create(&plugin);
        let _ = metrics.plugin_calls.get_or_create(&plugin);
        let _ = metrics.clients.get_or_create(&StateLabel { state: "playing" });
        for family in [
            &metrics.client_sent_bytes,
            &metrics.client_sent_packets,
            &metrics.client_received_bytes,
            &metrics.client_received_packets,
            &metrics.client_sent_values,
        ] {
            let _ = family.get_or_create(&client);
        }
        let _ = metrics.client_round_trip_seconds.get_or_create(&client);
        let _ = metrics.client_backlog.get_or_create(&client);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        let mut names = std::collections::BTreeSet::new();
        for line in text.lines().filter_map(|l| l.strip_prefix("# TYPE ")) {
            let (name, kind) = line.split_once(' ').unwrap();
            match kind {
                "counter" => drop(names.insert(format!("{name}_total"))),
                "histogram" => names.extend(["_bucket", "_sum", "_count"].map(|s| format!("{name}{s}"))),
                _ => drop(names.insert(name.to_string())),
            }
        }
        names
    }

    /// deploy/'s Grafana dashboard names no metric the server does not serve (a renamed metric would leave a
    /// panel silently empty). Its queries are evaluated by a real Prometheus in the fleet tests.
    #[test]
    fn the_grafana_dashboard_names_only_served_metrics() {
        let dashboard: serde_json::Value =
            serde_json::from_str(include_str!("../../../deploy/grafana/gamefeature-server.json")).unwrap();
        let text = dashboard["panels"].to_string();
        let served = served();
        let mut named = 0;
        for (start, _) in text.match_indices("gamefeature_") {
            let rest = &text[start..];
            let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
            assert!(
                served.contains(&rest[..end]),
                "the dashboard names {}, which is not served: {served:?}",
                &rest[..end]
            );
            named += 1;
        }
        assert!(named > 20, "the dashboard's queries were not found");
    }
}
