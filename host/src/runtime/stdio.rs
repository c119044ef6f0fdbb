//! A plugin's standard output and error: lines into the host log, tagged with the plugin.
//!
//! Nothing a plugin prints reaches the host's own stdout or stderr. Each complete line becomes a log line of
//! the instance (stdout at `info`, stderr at `warn`, so a Rust plugin's panic message shows up as a warning
//! before the trap that follows it), cut at the log interface's line limit.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

use super::plugin_log::{record_line, LogBudget, MAX_LINE};
use crate::feature::InstanceEnv;
use crate::timeline::LogLevel;

/// One of a plugin's output streams. Every stream the guest opens on it shares one line buffer.
#[derive(Clone)]
pub struct PluginOutput {
    lines: Arc<Mutex<LineBuffer>>,
}

struct LineBuffer {
    env: InstanceEnv,
    budget: Arc<LogBudget>,
    level: LogLevel,
    pending: Vec<u8>,
}

impl PluginOutput {
    pub fn new(env: InstanceEnv, budget: Arc<LogBudget>, level: LogLevel) -> Self {
        PluginOutput { lines: Arc::new(Mutex::new(LineBuffer { env, budget, level, pending: Vec::new() })) }
    }

    fn write(&self, mut bytes: &[u8]) {
        let mut buffer = self.lines.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        while let Some(end) = bytes.iter().position(|&b| b == b'\n') {
            buffer.pending.extend_from_slice(&bytes[..end]);
            buffer.emit();
            bytes = &bytes[end + 1..];
        }
        buffer.pending.extend_from_slice(bytes);
        if buffer.pending.len() > MAX_LINE {
            buffer.emit();
        }
    }
}

impl LineBuffer {
    fn emit(&mut self) {
        let line = String::from_utf8_lossy(&self.pending).trim_end_matches('\r').to_string();
        self.pending.clear();
        record_line(&self.env, &self.budget, self.level, line);
    }
}

impl Drop for LineBuffer {
    /// A last line without a newline is still shown when the instance goes away.
    fn drop(&mut self) {
        if !self.pending.is_empty() {
            self.emit();
        }
    }
}

impl IsTerminal for PluginOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for PluginOutput {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

/// Always ready: writing is appending to a buffer.
#[wasmtime_wasi::async_trait]
impl Pollable for PluginOutput {
    async fn ready(&mut self) {}
}

impl OutputStream for PluginOutput {
    fn write(&mut self, bytes: bytes::Bytes) -> StreamResult<()> {
        PluginOutput::write(self, &bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(MAX_LINE)
    }
}

impl tokio::io::AsyncWrite for PluginOutput {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, bytes: &[u8]) -> Poll<std::io::Result<usize>> {
        PluginOutput::write(&self, bytes);
        Poll::Ready(Ok(bytes.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
