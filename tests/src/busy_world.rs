//! A world of many plugin instances hearing about many actors, as the frame bench and the `busy_frames` example
//! measure it: each busy frame the game sends every actor one extension event (a per-actor update, say) and every
//! instance handles all of them, one batched call per instance, then the world ticks. The plugin is the
//! `event-sink`, which does the least work a handler can, so what a frame costs is the host's.

use std::time::Duration;

use gamefeature_host::experience::ExperienceManager;
use gamefeature_host::runtime::RuntimeConfig;
use gamefeature_host::world::{ActorId, NetMode};
use gamefeature_host::{Session, SessionOptions};

use crate::*;

/// A 30 Hz frame.
pub const FRAME: Duration = Duration::from_nanos(33_333_333);

/// The world, with everything it needs kept alive (its plugin folder, experience and compile cache).
pub struct BusyWorld {
    /// The world's experience, loaded: one `event-sink` instance per feature.
    pub manager: ExperienceManager,
    /// The game's actors, each heard of by every instance.
    pub actors: Vec<ActorId>,
    /// The runtime the experience loads and ends on.
    pub tokio: tokio::runtime::Runtime,
    _session: Session,
    _plugins: PluginDir,
    _experiences: ExperienceDir,
    _cache: tempfile::TempDir,
}

impl BusyWorld {
    /// A standalone world of `instances` event sinks and `actors` actors, loaded and with its timeline bounded;
    /// without the pooling allocator when `pooling` is false, for tools that cannot reserve its address space
    /// (valgrind).
    pub fn new(instances: usize, actors: usize, pooling: bool) -> Self {
        let tokio = tokio::runtime::Runtime::new().unwrap();
        let plugins = PluginDir::with(&[]);
        let mut names = Vec::new();
        for i in 0..instances {
            let name = format!("sink-{i}");
            let manifest = format!(
                "[plugin]\nname = \"{name}\"\nversion = \"1.0.0\"\napi = \"0.2.0\"\ncomponent = \"event_sink.wasm\"\n"
            );
            plugins.add_custom(&name, &manifest, Some(&EVENT_SINK));
            names.push(name);
        }
        let experiences = ExperienceDir::new();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let path = experiences.write("e.toml", &experience_with_features(&names));
        let cache = tempfile::TempDir::new().unwrap();
        let session = Session::new(SessionOptions {
            plugin_dirs: vec![plugins.path().to_path_buf()],
            runtime: RuntimeConfig {
                max_instances: instances as u32 + 8,
                pooling,
                ..runtime_config(Some(cache.path()))
            },
            manager: trusted(),
            ..SessionOptions::default()
        })
        .unwrap();
        let mut manager = session.create_world("bench", NetMode::Standalone);
        let report = tokio.block_on(manager.load(&path)).unwrap().clone();
        assert!(report.failures.is_empty(), "{:?}", report.failures);
        manager.with_world(|w| w.set_recording(false));
        let actors: Vec<ActorId> = manager.with_world(|w| (0..actors).map(|_| w.spawn("Pawn").unwrap()).collect());
        session.timeline().set_retention(Some(10_000));
        BusyWorld {
            manager,
            actors,
            tokio,
            _session: session,
            _plugins: plugins,
            _experiences: experiences,
            _cache: cache,
        }
    }

    /// One busy frame: every actor is sent an event every instance hears, and the world ticks.
    pub fn busy_frame(&mut self) {
        let actors = &self.actors;
        self.manager.with_world(|w| {
            for actor in actors {
                w.send_extension_event(*actor, "Update").unwrap();
            }
        });
        self.manager.tick(FRAME);
    }

    /// One frame with nothing to deliver and no timer due.
    pub fn idle_frame(&mut self) {
        self.manager.tick(FRAME);
    }

    /// How many of the instances are still live (none was quarantined).
    pub fn live_instances(&self) -> usize {
        self.manager.live_features().len()
    }

    /// Ends play.
    pub fn end(mut self) {
        self.tokio.block_on(self.manager.end_play()).unwrap();
    }
}
