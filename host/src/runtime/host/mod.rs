//! Host implementations of the imported WIT interfaces: one file per interface, each a thin adapter from WIT
//! types to the domain modules.

mod actors;
mod assets;
pub(crate) mod components;
pub(crate) mod init_states;
mod log;
mod types;
