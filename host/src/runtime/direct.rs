//! Direct calls: plugins called with wasmtime's synchronous API, without a fiber.
//!
//! wasmtime-wasi defines a few WASI functions as async (`wasi:io/poll`, the blocking `wasi:io/streams`
//! methods, the streams' destructors, file and socket operations), and a store that instantiates one of them
//! must be called through wasmtime's async API, which runs every call on a fiber of its own. For a plugin whose
//! handler does a few hundred nanoseconds of work the fiber costs as much as the call. Almost every plugin
//! imports `wasi:io` (a Rust component's standard library does, to print) and nothing else that waits, so the
//! host keeps a second linker ([`add_wasi_to_linker`]) whose WASI functions are all synchronous: the `wasi:io`
//! functions that may wait are defined here, each polling its future on the calling thread (see `drive`) under
//! the wait budget of the call it is part of. A component whose imports this linker satisfies is called directly; one
//! that imports what only the full linker has (`wasi:filesystem/types`, `wasi:sockets/tcp` or `udp`: any plugin
//! whose code uses files, componentize-py's and componentize-js's runtimes, and C through the wasip1 adapter)
//! is called on a fiber, as before. Both run the same host code; only how a wait is driven differs.
//!
//! A blocking function enters the WASI runtime's context only while it waits (where tokio's timers are made);
//! nothing else a direct call reaches needs it.

use std::future::Future;

use wasmtime::component::{HasData, Linker, Resource, ResourceTable};
use wasmtime_wasi::p2::bindings::io::{poll as async_poll, streams as async_streams};
use wasmtime_wasi::p2::bindings::sync::io::{poll, streams};
use wasmtime_wasi::p2::bindings::{cli, clocks, random, sockets};
use wasmtime_wasi::p2::{DynInputStream, DynOutputStream, DynPollable, StreamError, StreamResult};
use wasmtime_wasi::{cli::WasiCli, clocks::WasiClocks, random::WasiRandom, random::WasiRandomView as _};
use wasmtime_wasi::{cli::WasiCliView as _, clocks::WasiClocksView as _};
use wasmtime_wasi::{sockets::WasiSockets, sockets::WasiSocketsView as _};

use super::drive::WaitBudget;
use super::state::InstanceState;

/// Adds every WASI interface whose functions are all synchronous, and `wasi:io` with its waits driven here.
/// What is missing (file and socket operations, and `wasi:filesystem/preopens` and
/// `wasi:sockets/tcp-create-socket`, whose resources those define) sends a component importing it to the fiber
/// linker.
///
/// A direct call runs on the calling thread's own stack, not a fiber's: a thread calling into plugins needs the
/// plugin's WebAssembly stack (wasmtime's `max_wasm_stack`, 512 KiB) and the host's frames, as the main thread's
/// 8 MiB and Rust's and tokio's 2 MiB threads have.
pub fn add_wasi_to_linker(linker: &mut Linker<InstanceState>) -> wasmtime::Result<()> {
    let l = linker;
    cli::exit::add_to_linker::<_, WasiCli>(l, InstanceState::cli)?;
    cli::environment::add_to_linker::<_, WasiCli>(l, InstanceState::cli)?;
    cli::stdin::add_to_linker::<_, WasiCli>(l, InstanceState::cli)?;
    cli::stdout::add_to_linker::<_, WasiCli>(l, InstanceState::cli)?;
    cli::stderr::add_to_linker::<_, WasiCli>(l, InstanceState::cli)?;
    cli::terminal_input::add_to_linker::<_, WasiCli>(l, InstanceState::cli)?;
    cli::terminal_output::add_to_linker::<_, WasiCli>(l, InstanceState::cli)?;
    cli::terminal_stdin::add_to_linker::<_, WasiCli>(l, InstanceState::cli)?;
    cli::terminal_stdout::add_to_linker::<_, WasiCli>(l, InstanceState::cli)?;
    cli::terminal_stderr::add_to_linker::<_, WasiCli>(l, InstanceState::cli)?;
    clocks::wall_clock::add_to_linker::<_, WasiClocks>(l, InstanceState::clocks)?;
    clocks::monotonic_clock::add_to_linker::<_, WasiClocks>(l, InstanceState::clocks)?;
    random::random::add_to_linker::<_, WasiRandom>(l, InstanceState::random)?;
    random::insecure::add_to_linker::<_, WasiRandom>(l, InstanceState::random)?;
    random::insecure_seed::add_to_linker::<_, WasiRandom>(l, InstanceState::random)?;
    sockets::network::add_to_linker::<_, WasiSockets>(l, &Default::default(), InstanceState::sockets)?;
    sockets::instance_network::add_to_linker::<_, WasiSockets>(l, InstanceState::sockets)?;
    sockets::ip_name_lookup::add_to_linker::<_, WasiSockets>(l, InstanceState::sockets)?;
    wasmtime_wasi::p2::bindings::io::error::add_to_linker::<_, Table>(l, |state| &mut state.table)?;
    poll::add_to_linker::<_, Blocking>(l, BlockingIo::of)?;
    streams::add_to_linker::<_, Blocking>(l, BlockingIo::of)?;
    Ok(())
}

/// `wasi:io/error`, served by wasmtime-wasi-io's synchronous implementation on the resource table.
struct Table;

impl HasData for Table {
    type Data<'a> = &'a mut ResourceTable;
}

/// `wasi:io/poll` and `wasi:io/streams` as the direct linker serves them.
struct Blocking;

impl HasData for Blocking {
    type Data<'a> = BlockingIo<'a>;
}

/// What a blocking WASI function needs: the instance's resources, the wait budget of the call it is part of,
/// and the runtime its timers belong to.
pub struct BlockingIo<'a> {
    table: &'a mut ResourceTable,
    waits: &'a mut WaitBudget,
    wasi_io: &'a tokio::runtime::Handle,
}

impl BlockingIo<'_> {
    fn of(state: &mut InstanceState) -> BlockingIo<'_> {
        BlockingIo { table: &mut state.table, waits: &mut state.waits, wasi_io: &state.wasi_io }
    }
}

/// Runs `wait` (given the resource table) to completion, within what is left of the call's wait budget: past
/// it, the call traps with [`super::drive::Abandoned`], which names the cause.
fn wait<'t, F: Future>(
    io: &'t mut BlockingIo<'_>,
    wait: impl FnOnce(&'t mut ResourceTable) -> F,
) -> wasmtime::Result<F::Output> {
    let _context = io.wasi_io.enter();
    let future = std::pin::pin!(wait(io.table));
    io.waits.wait_for(future).map_err(wasmtime::Error::new)
}

/// A stream operation that waited: its own error, or the call's trap.
fn waited<T>(outcome: wasmtime::Result<StreamResult<T>>) -> StreamResult<T> {
    outcome.map_err(StreamError::Trap)?
}

impl poll::Host for BlockingIo<'_> {
    fn poll(&mut self, pollables: Vec<Resource<DynPollable>>) -> wasmtime::Result<Vec<u32>> {
        wait(self, |table| async_poll::Host::poll(table, pollables))?
    }
}

impl poll::HostPollable for BlockingIo<'_> {
    fn ready(&mut self, pollable: Resource<DynPollable>) -> wasmtime::Result<bool> {
        wait(self, |table| async_poll::HostPollable::ready(table, pollable))?
    }

    fn block(&mut self, pollable: Resource<DynPollable>) -> wasmtime::Result<()> {
        wait(self, |table| async_poll::HostPollable::block(table, pollable))?
    }

    fn drop(&mut self, pollable: Resource<DynPollable>) -> wasmtime::Result<()> {
        async_poll::HostPollable::drop(self.table, pollable)
    }
}

impl streams::Host for BlockingIo<'_> {
    fn convert_stream_error(&mut self, error: StreamError) -> wasmtime::Result<streams::StreamError> {
        Ok(async_streams::Host::convert_stream_error(self.table, error)?.into())
    }
}

impl streams::HostOutputStream for BlockingIo<'_> {
    fn drop(&mut self, stream: Resource<DynOutputStream>) -> wasmtime::Result<()> {
        wait(self, |table| async_streams::HostOutputStream::drop(table, stream))?
    }

    fn check_write(&mut self, stream: Resource<DynOutputStream>) -> StreamResult<u64> {
        async_streams::HostOutputStream::check_write(self.table, stream)
    }

    fn write(&mut self, stream: Resource<DynOutputStream>, bytes: Vec<u8>) -> StreamResult<()> {
        async_streams::HostOutputStream::write(self.table, stream, bytes)
    }

    fn blocking_write_and_flush(&mut self, stream: Resource<DynOutputStream>, bytes: Vec<u8>) -> StreamResult<()> {
        waited(wait(self, |table| async_streams::HostOutputStream::blocking_write_and_flush(table, stream, bytes)))
    }

    fn blocking_write_zeroes_and_flush(&mut self, stream: Resource<DynOutputStream>, len: u64) -> StreamResult<()> {
        waited(wait(self, |table| async_streams::HostOutputStream::blocking_write_zeroes_and_flush(table, stream, len)))
    }

    fn subscribe(&mut self, stream: Resource<DynOutputStream>) -> wasmtime::Result<Resource<DynPollable>> {
        async_streams::HostOutputStream::subscribe(self.table, stream)
    }

    fn write_zeroes(&mut self, stream: Resource<DynOutputStream>, len: u64) -> StreamResult<()> {
        async_streams::HostOutputStream::write_zeroes(self.table, stream, len)
    }

    fn flush(&mut self, stream: Resource<DynOutputStream>) -> StreamResult<()> {
        async_streams::HostOutputStream::flush(self.table, stream)
    }

    fn blocking_flush(&mut self, stream: Resource<DynOutputStream>) -> StreamResult<()> {
        waited(wait(self, |table| async_streams::HostOutputStream::blocking_flush(table, stream)))
    }

    fn splice(&mut self, dst: Resource<DynOutputStream>, src: Resource<DynInputStream>, len: u64) -> StreamResult<u64> {
        async_streams::HostOutputStream::splice(self.table, dst, src, len)
    }

    fn blocking_splice(
        &mut self,
        dst: Resource<DynOutputStream>,
        src: Resource<DynInputStream>,
        len: u64,
    ) -> StreamResult<u64> {
        waited(wait(self, |table| async_streams::HostOutputStream::blocking_splice(table, dst, src, len)))
    }
}

impl streams::HostInputStream for BlockingIo<'_> {
    fn drop(&mut self, stream: Resource<DynInputStream>) -> wasmtime::Result<()> {
        wait(self, |table| async_streams::HostInputStream::drop(table, stream))?
    }

    fn read(&mut self, stream: Resource<DynInputStream>, len: u64) -> StreamResult<Vec<u8>> {
        async_streams::HostInputStream::read(self.table, stream, len)
    }

    fn blocking_read(&mut self, stream: Resource<DynInputStream>, len: u64) -> StreamResult<Vec<u8>> {
        waited(wait(self, |table| async_streams::HostInputStream::blocking_read(table, stream, len)))
    }

    fn skip(&mut self, stream: Resource<DynInputStream>, len: u64) -> StreamResult<u64> {
        async_streams::HostInputStream::skip(self.table, stream, len)
    }

    fn blocking_skip(&mut self, stream: Resource<DynInputStream>, len: u64) -> StreamResult<u64> {
        waited(wait(self, |table| async_streams::HostInputStream::blocking_skip(table, stream, len)))
    }

    fn subscribe(&mut self, stream: Resource<DynInputStream>) -> wasmtime::Result<Resource<DynPollable>> {
        async_streams::HostInputStream::subscribe(self.table, stream)
    }
}

/// How a plugin's calls are made, and why, for `gfhost inspect`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallPath {
    /// With wasmtime's synchronous API, on the caller's stack.
    Direct,
    /// With wasmtime's async API, each call on a fiber of its own (a fraction of a microsecond more per call).
    Fiber {
        /// What sends it there: an import only the fiber linker has, or its package version.
        because: String,
    },
}

impl CallPath {
    /// The fiber path, because the direct linker could not link the component: `error` names the first import
    /// it lacks.
    // wasmtime's types are not part of the stable API (a wasmtime upgrade must not break a game): hidden
    // from it, for the project's own benches and fuzz targets.
    #[doc(hidden)]
    pub fn fiber_for_import(error: &wasmtime::Error) -> CallPath {
        // wasmtime's message: "component imports instance `wasi:filesystem/types@0.2.12`, but a matching ...".
        let message = error.to_string();
        let import = message.split('`').nth(1).unwrap_or(&message);
        CallPath::Fiber { because: format!("it imports {import}, whose functions may wait") }
    }
}

impl std::fmt::Display for CallPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallPath::Direct => write!(f, "direct (wasmtime's synchronous API)"),
            CallPath::Fiber { because } => write!(f, "on a fiber (wasmtime's async API), because {because}"),
        }
    }
}
