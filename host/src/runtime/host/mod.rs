//! Host implementations of the imported WIT interfaces: one file per interface, each a thin adapter from WIT
//! types to the domain modules.

mod actors;
mod assets;
pub(crate) mod components;
pub(crate) mod init_states;
pub(crate) mod log;
mod types;

use crate::runtime::bindings::types::Error;

/// Longest name (class, component, event, feature, state, property) a plugin may pass: names are interned and
/// shown in logs, so a plugin must not be able to grow the host's tables with megabyte-long ones.
pub(crate) const MAX_NAME_BYTES: usize = 256;

/// Longest text property value a plugin may store.
pub(crate) const MAX_TEXT_BYTES: usize = 64 << 10;

/// Handles (component requests, extension handlers, subscriptions) one instance may hold at once by default:
/// each costs host memory, so a plugin must not be able to pile them up call after call.
pub const DEFAULT_MAX_HANDLES: u32 = 100_000;

use crate::runtime::state::InstanceState;
use crate::timeline::LogLevel;

impl InstanceState {
    /// Counts a refused host call against the recoverable-error budget, remembering the first of the current
    /// call for the quarantine cause, and passes the error on.
    pub(crate) fn refuse(&mut self, error: Error) -> Error {
        self.refusals.count += 1;
        if self.refusals.first.is_none() {
            self.refusals.first = Some(format!("{error:?}"));
        }
        error
    }

    /// Refuses a call the plugin has no permission for: a `denied` error naming the permission, and a log line.
    pub(crate) fn denied(&mut self, permission: &str) -> Error {
        let plugin = &*self.env.plugin;
        let message = format!(
            "plugin {plugin:?} lacks the {permission} permission (declare it in its plugin.toml and grant it in the \
             host configuration)"
        );
        log::line_of_plugin(&self.env, LogLevel::Warn, format!("denied: {message}"));
        self.refuse(Error::Denied(message))
    }

    /// Refuses a name longer than [`MAX_NAME_BYTES`] or holding control characters (counted against the
    /// recoverable-error budget): names are shown in logs and timelines, where a `\n` or an escape sequence
    /// would forge lines or drive the terminal.
    pub(crate) fn check_name(&mut self, what: &str, name: &str) -> Result<(), Error> {
        self.check_size(what, name.len(), MAX_NAME_BYTES)?;
        if !crate::text::is_printable(name) {
            let shown = crate::text::shown(name, MAX_NAME_BYTES);
            return Err(self.refuse(Error::Invalid(format!("{what} {shown:?} holds control characters"))));
        }
        Ok(())
    }

    /// Refuses a value of `len` bytes longer than `max` (counted against the recoverable-error budget).
    pub(crate) fn check_size(&mut self, what: &str, len: usize, max: usize) -> Result<(), Error> {
        if len > max {
            return Err(self.refuse(Error::Invalid(format!("{what} is {len} bytes, longer than {max}"))));
        }
        Ok(())
    }

    /// Refuses a new handle when the instance already holds as many as it may (a recoverable error, counted
    /// against the refusal budget). Call it before changing the world for the handle.
    pub(crate) fn reserve_handle(&mut self) -> Result<(), Error> {
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
        undo: impl FnOnce(&mut crate::world::World),
    ) -> Result<wasmtime::component::Resource<T>, Error> {
        match self.table.push(value) {
            Ok(resource) => {
                self.handles += 1;
                Ok(resource)
            }
            Err(e) => {
                undo(&mut crate::world::lock(&self.env.world));
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

    pub(crate) fn require(&mut self, allowed: bool, permission: &str) -> Result<(), Error> {
        if allowed {
            Ok(())
        } else {
            Err(self.denied(permission))
        }
    }
}
