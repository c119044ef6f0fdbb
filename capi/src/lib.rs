//! A C ABI over the gamefeature host, for games written in C and C++: an engine (Unreal, Godot, a studio's own)
//! creates a host, loads an experience into its world, spawns its players, steps the host once a frame from its
//! own loop, reads what plugins wrote and hears the events they send, reloads a plugin, and ends play.
//!
//! The model is wasmtime's own C API: opaque handles, an error object returned by every call that can fail
//! (`NULL` on success) and freed by the caller with [`gf_error_delete`], every object freed by the library's own
//! `*_delete`, no panic or unwind across the boundary (each entry point catches them and returns
//! [`GfErrorKind::GfErrorPanicked`]). `include/gamefeature.h` is generated from this file by cbindgen, and a test
//! checks it has not drifted. `docs/embedding.md` says how Unreal and Godot would link it.

use std::ffi::{c_char, CStr, CString};
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::time::Duration;

use gamefeature_host::config::HostConfig;
use gamefeature_host::experience::ManagerOptions;
use gamefeature_host::game_loop::{GameLoop, Played};
use gamefeature_host::runtime::RuntimeConfig;
use gamefeature_host::world::{self, ActorId, HeardEvent, NetMode, Value};
use gamefeature_host::{game, Session, SessionOptions};

/// What kind of error a call returned. (Its variants are named as C spells them: `GF_ERROR_INVALID`, ...)
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(clippy::enum_variant_names)]
pub enum GfErrorKind {
    /// An argument was NULL, not UTF-8, or not allowed now (a step before an experience loaded).
    GfErrorInvalid = 1,
    /// What was asked for does not exist (a file, an actor, a property without a value).
    GfErrorNotFound = 2,
    /// The host refused it (a plugin's new version that does not compile or activate: the old one plays on).
    GfErrorRefused = 3,
    /// It failed (an experience that does not load, a configuration that does not parse).
    GfErrorFailed = 4,
    /// The library panicked: a bug in it, caught before it crossed the boundary. The host may be left in any
    /// state; delete it.
    GfErrorPanicked = 5,
}

/// An error: its kind and a message naming what failed and why.
pub struct GfError {
    kind: GfErrorKind,
    message: CString,
    plugin: Option<CString>,
}

impl GfError {
    fn new(kind: GfErrorKind, message: impl Into<String>) -> GfError {
        GfError { kind, message: c_text(message.into()), plugin: None }
    }
}

/// `text` as a C string, any NUL in it written `\0`.
fn c_text(text: String) -> CString {
    CString::new(text.replace('\0', "\\0")).expect("NULs replaced")
}

impl From<gamefeature_host::Error> for GfError {
    fn from(error: gamefeature_host::Error) -> GfError {
        use gamefeature_host::Error;
        let kind = match &error {
            Error::NotFound { .. } => GfErrorKind::GfErrorNotFound,
            Error::Refused { .. } | Error::Trapped { .. } | Error::Quarantined { .. } => GfErrorKind::GfErrorRefused,
            _ => GfErrorKind::GfErrorFailed,
        };
        GfError { plugin: error.plugin().map(c_text), ..GfError::new(kind, error.to_string()) }
    }
}

/// The three actors of a player, as Unreal's game mode spawns them.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct GfPlayer {
    /// The player's controller.
    pub controller: u64,
    /// The player's state (where scores live).
    pub player_state: u64,
    /// The pawn the controller possesses.
    pub pawn: u64,
}

/// An event a plugin sent to an actor. `name` is owned by the host and valid until its next call.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct GfEvent {
    /// The actor the event was sent to.
    pub actor: u64,
    /// The event's name.
    pub name: *const c_char,
}

/// A host: one process's plugins and one world.
pub struct GfHost {
    // Dropped before the runtime its async work runs on.
    game: Option<GameLoop>,
    session: Session,
    tokio: tokio::runtime::Runtime,
    /// Events heard and not yet handed out, and the name of the last one handed out (its storage).
    heard: std::collections::VecDeque<HeardEvent>,
    event_name: CString,
    /// The failures of the world's last load or play, as text (the storage of `gf_host_failure`).
    failures: Vec<CString>,
    /// The game's own classes (each with its parent), declared in every world the host loads.
    classes: Vec<(String, String)>,
}

type Outcome = Result<(), GfError>;

/// Runs an entry point's body: its error, or a panic caught, as an error object for the caller.
fn guarded(body: impl FnOnce() -> Outcome) -> *mut GfError {
    let error = match std::panic::catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => return std::ptr::null_mut(),
        Ok(Err(error)) => error,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            GfError::new(GfErrorKind::GfErrorPanicked, format!("the gamefeature library panicked: {what}"))
        }
    };
    Box::into_raw(Box::new(error))
}

/// A string argument, borrowed for the call.
///
/// # Safety
/// `text` is NULL or a NUL-terminated string valid for the call.
unsafe fn text<'a>(text: *const c_char, what: &str) -> Result<&'a str, GfError> {
    if text.is_null() {
        return Err(GfError::new(GfErrorKind::GfErrorInvalid, format!("{what} is NULL")));
    }
    // SAFETY: not NULL (checked above), and the caller promises a NUL-terminated string valid for the call.
    unsafe { CStr::from_ptr(text) }
        .to_str()
        .map_err(|e| GfError::new(GfErrorKind::GfErrorInvalid, format!("{what} is not UTF-8: {e}")))
}

/// An optional string argument.
///
/// # Safety
/// As [`text`].
unsafe fn optional<'a>(value: *const c_char, what: &str) -> Result<Option<&'a str>, GfError> {
    if value.is_null() {
        return Ok(None);
    }
    // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
    unsafe { text(value, what) }.map(Some)
}

/// The host behind a handle.
///
/// # Safety
/// `host` is NULL or a handle from [`gf_host_new`] not yet deleted, used by one thread at a time.
unsafe fn host<'a>(host: *mut GfHost) -> Result<&'a mut GfHost, GfError> {
    // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
    unsafe { host.as_mut() }.ok_or_else(|| GfError::new(GfErrorKind::GfErrorInvalid, "the host is NULL"))
}

impl GfHost {
    fn game(&mut self) -> Result<&mut GameLoop, GfError> {
        self.game
            .as_mut()
            .ok_or_else(|| GfError::new(GfErrorKind::GfErrorInvalid, "no experience is loaded: gf_host_load first"))
    }
}

/// Creates a host whose plugins are the folders in `plugins_dir`, with the host configuration `config_file`
/// (a `gfhost.toml`: what each plugin is granted and its limits; NULL grants plugins nothing beyond their
/// sandbox) and a compile cache in `cache_dir` (NULL: plugins are compiled each time). On success `*host_out`
/// is a host the caller frees with [`gf_host_delete`]; on failure it is NULL.
///
/// # Safety
/// The strings are NULL or NUL-terminated; `host_out` points to writable memory for one pointer.
#[no_mangle]
pub unsafe extern "C" fn gf_host_new(
    plugins_dir: *const c_char,
    config_file: *const c_char,
    cache_dir: *const c_char,
    host_out: *mut *mut GfHost,
) -> *mut GfError {
    guarded(|| {
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let plugins_dir = unsafe { text(plugins_dir, "plugins_dir") }?;
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let config_file = unsafe { optional(config_file, "config_file") }?;
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let cache_dir = unsafe { optional(cache_dir, "cache_dir") }?;
        if host_out.is_null() {
            return Err(GfError::new(GfErrorKind::GfErrorInvalid, "host_out is NULL"));
        }
        // SAFETY: `host_out` is not NULL (checked above), and the caller promises it is writable. NULL until a
        // host is made, so a caller that deletes it on failure deletes nothing.
        unsafe { *host_out = std::ptr::null_mut() };
        let config = match config_file {
            Some(file) => Some(
                HostConfig::from_file(Path::new(file))
                    .map_err(|e| GfError::new(GfErrorKind::GfErrorFailed, e.to_string()))?,
            ),
            None => None,
        };
        let mut options = SessionOptions {
            plugin_dirs: vec![plugins_dir.into()],
            runtime: RuntimeConfig { cache_dir: cache_dir.map(Into::into), ..RuntimeConfig::default() },
            manager: ManagerOptions::default(),
            ..SessionOptions::default()
        };
        if let Some(config) = config {
            options.manager.grants = config.grants;
            options.manager.data_dir = config.data_dir;
            options.manager.restarts = config.restarts;
            options.trust = config.trust;
        }
        let failed = |e: &dyn std::fmt::Display| GfError::new(GfErrorKind::GfErrorFailed, e.to_string());
        let tokio = tokio::runtime::Runtime::new().map_err(|e| failed(&e))?;
        let session = Session::new(options).map_err(|e| failed(&e))?;
        let host = GfHost {
            game: None,
            session,
            tokio,
            heard: Default::default(),
            event_name: CString::default(),
            failures: Vec::new(),
            classes: Vec::new(),
        };
        // SAFETY: `host_out` is not NULL (checked above), and the caller promises it is writable.
        unsafe { *host_out = Box::into_raw(Box::new(host)) };
        Ok(())
    })
}

/// Frees a host; play that has not ended is ended first. NULL is allowed.
///
/// # Safety
/// `host` is NULL or a handle from [`gf_host_new`] not yet deleted; it is not used again.
#[no_mangle]
pub unsafe extern "C" fn gf_host_delete(host: *mut GfHost) {
    if host.is_null() {
        return;
    }
    // SAFETY: the caller promises a pointer this library boxed (checked not NULL), not used again.
    let mut host = unsafe { Box::from_raw(host) };
    let _ = std::panic::catch_unwind(AssertUnwindSafe(move || {
        if let Some(game) = host.game.take() {
            let _ = game.end("the game is closing", Duration::ZERO, &mut ());
        }
        drop(host);
    }));
}

/// Loads the experience file `experience_file` into the host's world (a standalone one) and activates its
/// plugins. The failures of single plugins do not fail the call: [`gf_host_failure_count`] says how many.
///
/// # Safety
/// `host` is a live handle; `experience_file` is NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn gf_host_load(host: *mut GfHost, experience_file: *const c_char) -> *mut GfError {
    guarded(|| {
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let host = unsafe { self::host(host) }?;
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let file = unsafe { text(experience_file, "experience_file") }?;
        if host.game.is_some() {
            return Err(GfError::new(
                GfErrorKind::GfErrorInvalid,
                "an experience is loaded already: gf_host_end first",
            ));
        }
        if !Path::new(file).is_file() {
            return Err(GfError::new(GfErrorKind::GfErrorNotFound, format!("experience file {file} not found")));
        }
        let mut world = host.session.create_world("game", NetMode::Standalone);
        world
            .with_world(|w| {
                w.hear_events(true);
                host.classes.iter().try_for_each(|(class, parent)| w.declare_class(class, parent))
            })
            .map_err(|e| GfError::from(gamefeature_host::Error::from(e)))?;
        host.tokio
            .block_on(world.load(Path::new(file)))
            .map_err(|e| GfError::new(GfErrorKind::GfErrorFailed, e.to_string()))?;
        host.failures = failures_of(world.report());
        host.game = Some(GameLoop::new(Played::Standalone(Box::new(world)), host.tokio.handle().clone()));
        Ok(())
    })
}

/// Declares one of the game's classes: `class`, a subclass of `parent` (`Actor`, `Pawn`, `Character`,
/// `PlayerState`, or a class the game declared before). What plugins add to `parent` they add to it too. Declared
/// before [`gf_host_load`], it is there when the experience loads (the experience's pawn class may be one);
/// declared after, it joins the loaded world. INVALID for a name already declared with another parent, an unknown
/// parent, or a name that is not one.
///
/// # Safety
/// `host` is a live handle; `class` and `parent` are NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn gf_host_declare_class(
    host: *mut GfHost,
    class: *const c_char,
    parent: *const c_char,
) -> *mut GfError {
    guarded(|| {
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let host = unsafe { self::host(host) }?;
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let class = unsafe { text(class, "class") }?;
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let parent = unsafe { text(parent, "parent") }?;
        let refused = |e: &dyn std::fmt::Display| GfError::new(GfErrorKind::GfErrorInvalid, e.to_string());
        // Checked now, against the classes declared so far, so a mistake is this call's error, not the load's.
        let mut check = gamefeature_host::world::ClassRegistry::default();
        for (declared, its_parent) in &host.classes {
            check.declare(declared, its_parent).map_err(|e| refused(&e))?;
        }
        check.declare(class, parent).map_err(|e| refused(&e))?;
        if let Some(game) = &mut host.game {
            let declared = game.with_world(|w| w.declare_class(class, parent)).expect("a standalone world");
            declared.map_err(|e| refused(&e))?;
        }
        host.classes.push((class.to_string(), parent.to_string()));
        Ok(())
    })
}

fn failures_of(report: &gamefeature_host::experience::LoadReport) -> Vec<CString> {
    report.failures.iter().map(|f| c_text(f.to_string())).collect()
}

/// One frame, `delta_us` microseconds of game time after the last: plugins' timers fire, their work is
/// delivered, new plugin versions are swapped in.
///
/// # Safety
/// `host` is a live handle.
#[no_mangle]
pub unsafe extern "C" fn gf_host_step(host: *mut GfHost, delta_us: u64) -> *mut GfError {
    guarded(|| {
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let host = unsafe { self::host(host) }?;
        let game = host.game()?;
        game.step(Duration::from_micros(delta_us));
        host.failures = failures_of(game.manager().report());
        Ok(())
    })
}

/// Spawns a player (controller, player state, and a pawn of `pawn_class`, or of the experience's pawn class
/// when NULL); the controller possesses the pawn and the player state arrives, as Unreal's do.
///
/// # Safety
/// `host` is a live handle; `pawn_class` is NULL or NUL-terminated; `player_out` points to writable memory.
#[no_mangle]
pub unsafe extern "C" fn gf_host_spawn_player(
    host: *mut GfHost,
    pawn_class: *const c_char,
    player_out: *mut GfPlayer,
) -> *mut GfError {
    guarded(|| {
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let host = unsafe { self::host(host) }?;
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let pawn_class = unsafe { optional(pawn_class, "pawn_class") }?;
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let player_out = unsafe { player_out.as_mut() }
            .ok_or_else(|| GfError::new(GfErrorKind::GfErrorInvalid, "player_out is NULL"))?;
        let game = host.game()?;
        let pawn_class = pawn_class.map_or_else(|| game.manager().pawn_class(), str::to_string);
        let player = game
            .with_world(|w| {
                let player = game::spawn_player(w, &pawn_class)?;
                game::possess(w, &player)?;
                game::replicate_player_state(w, &player)?;
                Ok::<_, world::WorldError>(player)
            })
            .expect("a standalone world")
            .map_err(world_error)?;
        *player_out = GfPlayer {
            controller: player.controller.to_raw(),
            player_state: player.player_state.to_raw(),
            pawn: player.pawn.to_raw(),
        };
        Ok(())
    })
}

/// Spawns an actor of `class` (one of the experience's classes, or a built-in one such as `Actor`) for one of
/// the game's own entities; plugins extending its class hear of it. On success `*actor_out` is its id.
///
/// # Safety
/// `host` is a live handle; `class` is NUL-terminated; `actor_out` points to writable memory.
#[no_mangle]
pub unsafe extern "C" fn gf_host_spawn_actor(
    host: *mut GfHost,
    class: *const c_char,
    actor_out: *mut u64,
) -> *mut GfError {
    guarded(|| {
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let host = unsafe { self::host(host) }?;
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let class = unsafe { text(class, "class") }?;
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let actor_out = unsafe { actor_out.as_mut() }
            .ok_or_else(|| GfError::new(GfErrorKind::GfErrorInvalid, "actor_out is NULL"))?;
        let game = host.game()?;
        let actor = game.with_world(|w| w.spawn(class)).expect("a standalone world").map_err(world_error)?;
        *actor_out = actor.to_raw();
        Ok(())
    })
}

/// Destroys an actor (the game's entity went away): plugins handling it hear it go, and what they added to it
/// goes with it. NOT_FOUND when there is no such actor.
///
/// # Safety
/// `host` is a live handle.
#[no_mangle]
pub unsafe extern "C" fn gf_host_destroy_actor(host: *mut GfHost, actor: u64) -> *mut GfError {
    guarded(|| {
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let host = unsafe { self::host(host) }?;
        let game = host.game()?;
        game.with_world(|w| w.destroy(ActorId::from_raw(actor))).expect("a standalone world").map_err(world_error)
    })
}

fn world_error(error: world::WorldError) -> GfError {
    let kind = match error {
        world::WorldError::UnknownActor(_) | world::WorldError::NoSuchComponent { .. } => GfErrorKind::GfErrorNotFound,
        _ => GfErrorKind::GfErrorInvalid,
    };
    GfError::new(kind, error.to_string())
}

/// Sends the event `event` to `actor`: every plugin handling its class hears it.
///
/// # Safety
/// `host` is a live handle; `event` is NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn gf_host_send_event(host: *mut GfHost, actor: u64, event: *const c_char) -> *mut GfError {
    guarded(|| {
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let host = unsafe { self::host(host) }?;
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let event = unsafe { text(event, "event") }?;
        let game = host.game()?;
        game.with_world(|w| w.send_extension_event(ActorId::from_raw(actor), event))
            .expect("a standalone world")
            .map_err(world_error)
    })
}

/// Reads the integer property `component.property` of `actor` into `*value_out`. NOT_FOUND when the actor,
/// its component or a value is missing; INVALID when the value is not an integer.
///
/// # Safety
/// `host` is a live handle; the strings are NUL-terminated; `value_out` points to writable memory.
#[no_mangle]
pub unsafe extern "C" fn gf_host_get_integer(
    host: *mut GfHost,
    actor: u64,
    component: *const c_char,
    property: *const c_char,
    value_out: *mut i64,
) -> *mut GfError {
    guarded(|| {
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let host = unsafe { self::host(host) }?;
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let (component, property) = unsafe { (text(component, "component")?, text(property, "property")?) };
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let value_out = unsafe { value_out.as_mut() }
            .ok_or_else(|| GfError::new(GfErrorKind::GfErrorInvalid, "value_out is NULL"))?;
        let game = host.game()?;
        let world = world::lock(game.manager().world());
        match world.property(ActorId::from_raw(actor), component, property).map_err(world_error)? {
            Some(Value::Integer(value)) => {
                *value_out = *value;
                Ok(())
            }
            Some(other) => Err(GfError::new(
                GfErrorKind::GfErrorInvalid,
                format!("{component}.{property} is not an integer: {other:?}"),
            )),
            None => Err(GfError::new(
                GfErrorKind::GfErrorNotFound,
                format!("{component}.{property} of actor {actor} has no value"),
            )),
        }
    })
}

/// Writes the integer property `component.property` of `actor` (a component the game added, or one a plugin
/// added to it); what plugins watch of it, they hear.
///
/// # Safety
/// `host` is a live handle; the strings are NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn gf_host_set_integer(
    host: *mut GfHost,
    actor: u64,
    component: *const c_char,
    property: *const c_char,
    value: i64,
) -> *mut GfError {
    guarded(|| {
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let host = unsafe { self::host(host) }?;
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let (component, property) = unsafe { (text(component, "component")?, text(property, "property")?) };
        let game = host.game()?;
        game.with_world(|w| w.set_property(ActorId::from_raw(actor), component, property, Value::Integer(value)))
            .expect("a standalone world")
            .map(drop)
            .map_err(world_error)
    })
}

/// Takes the next event a plugin sent to an actor since the last steps, oldest first, into `*event_out`;
/// false when none is left. The event's name is valid until the host's next call.
///
/// # Safety
/// `host` is a live handle; `event_out` points to writable memory.
#[no_mangle]
pub unsafe extern "C" fn gf_host_next_event(host: *mut GfHost, event_out: *mut GfEvent) -> bool {
    let taken = std::panic::catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let host = unsafe { host.as_mut() }?;
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let event_out = unsafe { event_out.as_mut() }?;
        if host.heard.is_empty() {
            // Taken from the world as it is: taking events delivers nothing (no plugin runs here).
            let game = host.game.as_ref()?;
            let (events, _dropped) = world::lock(game.manager().world()).take_heard_events();
            host.heard.extend(events);
        }
        let event = host.heard.pop_front()?;
        host.event_name = c_text(event.event.clone());
        *event_out = GfEvent { actor: event.actor.to_raw(), name: host.event_name.as_ptr() };
        Some(())
    }));
    matches!(taken, Ok(Some(())))
}

/// Reloads the plugin `plugin` from its files as they are now, keeping its state: the frames stop while it
/// compiles (a game that must not stall calls this between levels). REFUSED when the new version does not
/// compile or activate: the old one plays on.
///
/// # Safety
/// `host` is a live handle; `plugin` is NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn gf_host_reload(host: *mut GfHost, plugin: *const c_char) -> *mut GfError {
    guarded(|| {
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let host = unsafe { self::host(host) }?;
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let plugin = unsafe { text(plugin, "plugin") }?;
        let game = host.game()?;
        game.reload_now(plugin).outcome.map(drop).map_err(GfError::from)
    })
}

/// How many failures the world's load and play listed so far (plugins that failed to activate, or were
/// quarantined).
///
/// # Safety
/// `host` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn gf_host_failure_count(host: *const GfHost) -> usize {
    // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
    unsafe { host.as_ref() }.map_or(0, |host| host.failures.len())
}

/// The `index`-th failure, as text (NULL past the last); valid until the host's next call.
///
/// # Safety
/// `host` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn gf_host_failure(host: *const GfHost, index: usize) -> *const c_char {
    // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
    unsafe { host.as_ref() }.and_then(|host| host.failures.get(index)).map_or(std::ptr::null(), |f| f.as_ptr())
}

/// Ends play, saying why: every plugin deactivates and leaves nothing behind. The host can load an experience
/// again afterwards.
///
/// # Safety
/// `host` is a live handle; `reason` is NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn gf_host_end(host: *mut GfHost, reason: *const c_char) -> *mut GfError {
    guarded(|| {
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let host = unsafe { self::host(host) }?;
        // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
        let reason = unsafe { text(reason, "reason") }?;
        let game =
            host.game.take().ok_or_else(|| GfError::new(GfErrorKind::GfErrorInvalid, "no experience is loaded"))?;
        let ended = game
            .end(reason, Duration::ZERO, &mut ())
            .map_err(|e| GfError::new(GfErrorKind::GfErrorFailed, e.to_string()))?;
        host.failures = failures_of(ended.manager.report());
        host.heard.clear();
        Ok(())
    })
}

/// The kind of an error.
///
/// # Safety
/// `error` is an error a call returned, not yet deleted.
#[no_mangle]
pub unsafe extern "C" fn gf_error_kind(error: *const GfError) -> GfErrorKind {
    // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
    unsafe { error.as_ref() }.map_or(GfErrorKind::GfErrorInvalid, |e| e.kind)
}

/// An error's message, naming what failed and why; valid until the error is deleted.
///
/// # Safety
/// `error` is an error a call returned, not yet deleted.
#[no_mangle]
pub unsafe extern "C" fn gf_error_message(error: *const GfError) -> *const c_char {
    // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
    unsafe { error.as_ref() }.map_or(c"the error is NULL".as_ptr(), |e| e.message.as_ptr())
}

/// The plugin the error is blamed on (its code trapped or refused, its new version did not compile or
/// activate), or NULL when no plugin is at fault (the request, the host). Valid until the error is deleted.
///
/// # Safety
/// `error` is an error a call returned, not yet deleted.
#[no_mangle]
pub unsafe extern "C" fn gf_error_plugin(error: *const GfError) -> *const c_char {
    // SAFETY: each pointer is what this function's caller promises in its `# Safety` section.
    unsafe { error.as_ref() }.and_then(|e| e.plugin.as_ref()).map_or(std::ptr::null(), |p| p.as_ptr())
}

/// Frees an error. NULL is allowed.
///
/// # Safety
/// `error` is NULL or an error a call returned, not yet deleted; it is not used again.
#[no_mangle]
pub unsafe extern "C" fn gf_error_delete(error: *mut GfError) {
    if !error.is_null() {
        // SAFETY: the caller promises a pointer this library boxed (checked not NULL), not used again.
        drop(unsafe { Box::from_raw(error) });
    }
}
