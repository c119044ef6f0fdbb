//! Host implementations of the imported WIT interfaces: one file per interface, each a thin adapter from WIT
//! types to the domain modules.

mod actors;
mod assets;
pub(crate) mod components;
pub(crate) mod init_states;
pub(crate) mod log;
pub(crate) mod timers;
mod types;
mod v0_1_0;

use crate::runtime::bindings::types::Error;

/// Longest name (class, component, event, feature, state, property) a plugin may pass: names are interned and
/// shown in logs, so a plugin must not be able to grow the host's tables with megabyte-long ones.
pub(crate) const MAX_NAME_BYTES: usize = 256;

/// Longest text property value a plugin may store.
pub(crate) const MAX_TEXT_BYTES: usize = 64 << 10;

/// Handles (component requests, extension handlers, subscriptions) one instance may hold at once by default:
/// each costs host memory, so a plugin must not be able to pile them up call after call.
pub const DEFAULT_MAX_HANDLES: u32 = 100_000;

use crate::feature::Permissions;
use crate::runtime::state::InstanceState;
use crate::timeline::LogLevel;
use crate::world::component_manager::{Name, OwnerId};
use crate::world::World;

/// What a host call is about to do, declared by the import and checked by [`InstanceState::guard`] before the
/// call reaches the world. Imports reach the world only through `guard`, so every one passes the same checks,
/// in the same order: names, text size, permission, the change budget, the handle budget, and — for a change
/// of one actor — that the actor is not on its way out. (The batch imports apply the checks of a change to
/// each of their entries, in [`InstanceState::run_batch`].) A change must say what it changes: an actor, or the
/// world at large; there is no constructor that leaves it out.
pub(crate) struct Call<'a> {
    kind: Kind,
    names: &'a [(&'a str, &'a str)],
    text: usize,
    permission: Option<(&'a str, bool)>,
    /// The actor a change is about (raw id, as the plugin passed it).
    actor: Option<u64>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Reads the world.
    Query,
    /// Changes the world: counted against the call's change budget.
    Change,
    /// Changes the world and hands the plugin a new handle: counted against both budgets.
    NewHandle,
    /// Gives something back (a dropped handle): never refused.
    Release,
}

impl<'a> Call<'a> {
    pub(crate) fn query() -> Self {
        Call { kind: Kind::Query, names: &[], text: 0, permission: None, actor: None }
    }

    /// Changes one actor: refused once the actor is destroyed, even while it still answers queries (pending
    /// kill) — nothing may be added to an actor on its way out, nor may it be brought back.
    pub(crate) fn change_of(actor: u64) -> Self {
        Call { kind: Kind::Change, actor: Some(actor), ..Call::query() }
    }

    /// Changes the world, not one actor (a spawn, a class-wide request, a plugin-wide setting).
    pub(crate) fn change_of_world() -> Self {
        Call { kind: Kind::Change, ..Call::query() }
    }

    /// Hands out a handle about one actor (a watch, a subscription): refused for an actor on its way out.
    pub(crate) fn new_handle_of(actor: u64) -> Self {
        Call { kind: Kind::NewHandle, actor: Some(actor), ..Call::query() }
    }

    /// Hands out a handle about the world or a class, not one actor.
    pub(crate) fn new_handle_of_world() -> Self {
        Call { kind: Kind::NewHandle, ..Call::query() }
    }

    pub(crate) fn release() -> Self {
        Call { kind: Kind::Release, ..Call::query() }
    }

    /// The names the call passes, each as (what it is, the name): every one is checked.
    pub(crate) fn names(self, names: &'a [(&'a str, &'a str)]) -> Self {
        Call { names, ..self }
    }

    /// The length of a text value the call asks the host to keep.
    pub(crate) fn text(self, len: usize) -> Self {
        Call { text: len, ..self }
    }

    /// The permission the call needs, and whether the plugin has it.
    pub(crate) fn permission(self, name: &'a str, granted: bool) -> Self {
        Call { permission: Some((name, granted)), ..self }
    }
}

/// Who is calling, for the ownership checks a call's body makes in the world.
pub(crate) struct Caller {
    pub owner: OwnerId,
    pub permissions: std::sync::Arc<Permissions>,
    /// Bytes of host memory the properties the plugin writes may hold.
    pub host_memory: usize,
}

impl InstanceState {
    /// The one way a host call reaches the world: checks `call` (a refusal is a recoverable error, counted
    /// against the refusal budget), then runs `body` on the world as this plugin, so the work it queues is
    /// charged to the plugin.
    pub(crate) fn guard<T>(
        &mut self,
        call: Call<'_>,
        body: impl FnOnce(&mut World, &Caller) -> Result<T, Error>,
    ) -> Result<T, Error> {
        for (what, name) in call.names {
            self.check_name(what, name)?;
        }
        self.check_size("text value", call.text, MAX_TEXT_BYTES)?;
        if let Some((permission, granted)) = call.permission {
            if !granted {
                return Err(self.denied(permission));
            }
        }
        if matches!(call.kind, Kind::Change | Kind::NewHandle) {
            self.count_change()?;
        }
        if call.kind == Kind::NewHandle {
            self.reserve_handle()?;
        }
        let caller =
            Caller { owner: self.env.owner, permissions: self.env.permissions.clone(), host_memory: self.host_memory };
        let actor = call.actor.map(crate::world::ActorId::from_raw);
        let result = crate::world::lock(&self.env.world).acting_as(caller.owner, |w| {
            if let Some(actor) = actor {
                w.changeable(actor)?;
            }
            body(w, &caller)
        });
        result.map_err(|error| if call.kind == Kind::Release { error } else { self.refuse(error) })
    }

    /// Counts one world change against the call's cap; past it, the change is refused.
    fn count_change(&mut self) -> Result<(), Error> {
        self.changes = self.changes.saturating_add(1);
        if self.changes > self.change_cap {
            let message =
                format!("more than {} world changes in one call: the plugin is flooding the host", self.change_cap);
            return Err(self.refuse(Error::Denied(message)));
        }
        Ok(())
    }

    /// Whether the current call went past its change cap.
    pub(crate) fn flooded(&self) -> bool {
        self.changes > self.change_cap
    }

    /// Counts a refused host call against the recoverable-error budget, remembering the first of the current
    /// call for the quarantine cause, and passes the error on.
    pub(crate) fn refuse(&mut self, error: Error) -> Error {
        self.refusals.count += 1;
        let shown = format!("{error:?}");
        // Every refusal is noted — denials (a missing permission, authority, a budget) included — so that
        // `gfhost check` and the timeline show what a plugin was refused.
        let track = crate::timeline::track::instance(&self.env.plugin, &self.env.world_name);
        self.env.timeline.record(track, crate::timeline::EventKind::Note, format!("refused: {shown}"));
        if self.refusals.first.is_none() {
            self.refusals.first = Some(shown);
        }
        error
    }

    /// Refuses a call the plugin has no permission for: a `denied` error naming the permission, and a log line.
    pub(crate) fn denied(&mut self, permission: &str) -> Error {
        let plugin = &*self.env.plugin;
        let message = match &self.env.permissions_limited_by {
            Some(limit) => format!(
                "plugin {plugin:?} lacks the {permission} permission (declared in its plugin.toml, granted in the \
                 host configuration, and allowed by {limit}, which limits what it may have)"
            ),
            None => format!(
                "plugin {plugin:?} lacks the {permission} permission (declare it in its plugin.toml and grant it in \
                 the host configuration)"
            ),
        };
        crate::runtime::plugin_log::line_of_plugin(&self.env, LogLevel::Warn, format!("denied: {message}"));
        self.refuse(Error::Denied(message))
    }

    /// Refuses a name longer than [`MAX_NAME_BYTES`] or holding control characters: names are shown in logs and
    /// timelines, where a `\n` or an escape sequence would forge lines or drive the terminal.
    fn check_name(&mut self, what: &str, name: &str) -> Result<(), Error> {
        match name_problem(what, name) {
            Some(problem) => Err(self.refuse(problem)),
            None => Ok(()),
        }
    }

    /// Refuses a value of `len` bytes longer than `max`.
    fn check_size(&mut self, what: &str, len: usize, max: usize) -> Result<(), Error> {
        match size_problem(what, len, max) {
            Some(problem) => Err(self.refuse(problem)),
            None => Ok(()),
        }
    }

    /// Refuses a new handle when the instance already holds as many as it may. Checked before the world
    /// changes for the handle.
    fn reserve_handle(&mut self) -> Result<(), Error> {
        if self.handles >= self.max_handles {
            let message =
                format!("the plugin holds {} live handles, the most one instance may; drop some first", self.handles);
            return Err(self.refuse(Error::Invalid(message)));
        }
        Ok(())
    }

    /// Hands a new handle to the plugin; if the table refuses it, `undo` takes back what the handle stood for.
    pub(crate) fn push_handle<T: Send + 'static>(
        &mut self,
        value: T,
        undo: impl FnOnce(&mut World),
    ) -> Result<wasmtime::component::Resource<T>, Error> {
        match self.table.push(value) {
            Ok(resource) => {
                self.handles += 1;
                Ok(resource)
            }
            Err(e) => {
                let _ = self.guard(Call::release(), |w, _| {
                    undo(w);
                    Ok(())
                });
                Err(Error::Invalid(format!("cannot hand out another handle: {e}")))
            }
        }
    }

    /// Takes back a handle the plugin dropped.
    pub(crate) fn take_handle<T: 'static>(
        &mut self,
        resource: wasmtime::component::Resource<T>,
    ) -> wasmtime::Result<T> {
        let value = self.table.delete(resource)?;
        self.handles -= 1;
        Ok(value)
    }
}

/// The names a plugin sends once with a batch import, for all its entries, each checked once; entries name them
/// by index. (Not [`crate::delivery::BatchNames`], which gathers the names of the batches the host sends.)
pub(crate) struct SentNames<'a> {
    names: &'a [String],
    problems: Vec<Option<Error>>,
}

impl SentNames<'_> {
    /// The name at `index`, or why an entry naming it is refused (a bad name, or no name at that index).
    pub(crate) fn get(&self, index: u32) -> Result<&str, Error> {
        match (self.names.get(index as usize), self.problems.get(index as usize)) {
            (Some(_), Some(Some(problem))) => Err(problem.clone()),
            (Some(name), _) => Ok(name),
            (None, _) => {
                Err(Error::Invalid(format!("name {index} was not sent: only {} names were", self.names.len())))
            }
        }
    }
}

impl InstanceState {
    /// Runs a batch import's entries as the calls they stand for, in order. The entries come as parallel
    /// `lists` (named, with their lengths); lists of different lengths refuse every entry, as a batch nobody can
    /// read. Each entry passes `guard`'s checks for a change (its names, each checked once per batch as `what`;
    /// the change budget, counted as the `changes` calls it stands for) and is refused as its own call would be;
    /// the world's lock is taken once for all of them; the actor each changes (`actor_of`) must not be on its way
    /// out. Past the change budget the rest are refused with the same
    /// error, without further work. Returns the refused entries, by index, with why.
    pub(crate) fn run_batch(
        &mut self,
        lists: &[(&str, usize)],
        names: &[String],
        what: &str,
        changes: impl Fn(usize) -> u32,
        actor_of: impl Fn(usize) -> u64,
        mut apply: impl FnMut(&mut World, OwnerId, usize, &SentNames<'_>) -> Result<(), Error>,
    ) -> Vec<(u32, Error)> {
        let longest = lists.iter().map(|(_, len)| *len).max().unwrap_or(0);
        if let Some(flood) = self.oversized_batch(longest) {
            return flood;
        }
        if lists.iter().any(|(_, len)| *len != longest) {
            let lengths: Vec<String> = lists.iter().map(|(list, len)| format!("{len} {list}")).collect();
            let error = self.refuse(Error::Invalid(format!(
                "a batch's lists differ in length ({}): none of its entries is read",
                lengths.join(", ")
            )));
            return (0..longest).map(|i| (i as u32, error.clone())).collect();
        }
        let named = SentNames { names, problems: names.iter().map(|name| name_problem(what, name)).collect() };
        let world = self.env.world.clone();
        let owner = self.env.owner;
        let mut refused = Vec::new();
        crate::world::lock(&world).acting_as(owner, |w| {
            for index in 0..longest {
                let counted = (0..changes(index)).try_for_each(|_| self.count_change());
                if let Err(flooded) = counted {
                    refused.extend((index..longest).map(|i| (i as u32, flooded.clone())));
                    break;
                }
                let applied = w
                    .changeable(crate::world::ActorId::from_raw(actor_of(index)))
                    .map_err(Error::from)
                    .and_then(|()| apply(w, owner, index, &named));
                if let Err(problem) = applied {
                    refused.push((index as u32, self.refuse(problem)));
                }
            }
        });
        refused
    }

    /// Refuses a batch with more entries than the changes left in the call: it can never be applied, and
    /// refusing each of its entries would cost the host memory in proportion to whatever the plugin sent (a
    /// list as long as its memory holds). It is refused whole, with one refusal for entry 0, as the flood it
    /// is: the entries count as tried changes, and the plugin is quarantined when the call returns.
    pub(crate) fn oversized_batch(&mut self, entries: usize) -> Option<Vec<(u32, Error)>> {
        let left = self.change_cap.saturating_sub(self.changes);
        if entries <= left as usize {
            return None;
        }
        self.changes = self.changes.saturating_add(u32::try_from(entries).unwrap_or(u32::MAX));
        let message = format!(
            "a batch of {entries} entries, more than the {left} world changes left in this call: the plugin is \
             flooding the host"
        );
        Some(vec![(0, self.refuse(Error::Denied(message)))])
    }
}

/// The world's names for a batch's names, each looked up the first time an entry uses it.
pub(crate) struct KnownNames(Vec<Option<Name>>);

impl KnownNames {
    pub(crate) fn of(names: &[String]) -> Self {
        KnownNames(vec![None; names.len()])
    }

    /// The world's name for `names[index]` (which the batch checked exists), if it has one. A name the world
    /// does not know is looked up again next time: an entry of the batch may have made it (a registration).
    pub(crate) fn get(&mut self, w: &World, index: u32, text: &str) -> Option<Name> {
        match self.0.get_mut(index as usize) {
            Some(Some(name)) => Some(*name),
            Some(unknown) => {
                *unknown = w.known_name(text);
                *unknown
            }
            None => w.known_name(text),
        }
    }

    /// Notes the world's name for `names[index]`, once an entry made it.
    pub(crate) fn remember(&mut self, index: u32, name: Name) {
        if let Some(known) = self.0.get_mut(index as usize) {
            *known = Some(name);
        }
    }
}

/// Why `check_name` refuses a name, if it does (a call checking one name many times checks it once).
pub(crate) fn name_problem(what: &str, name: &str) -> Option<Error> {
    if let Some(problem) = size_problem(what, name.len(), MAX_NAME_BYTES) {
        return Some(problem);
    }
    if !crate::text::is_printable(name) {
        let shown = crate::text::shown(name, MAX_NAME_BYTES);
        return Some(Error::Invalid(format!("{what} {shown:?} holds control characters")));
    }
    None
}

/// Why `check_size` refuses a value of `len` bytes, if it does.
fn size_problem(what: &str, len: usize, max: usize) -> Option<Error> {
    (len > max).then(|| Error::Invalid(format!("{what} is {len} bytes, longer than {max}")))
}
