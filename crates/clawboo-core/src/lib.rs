//! The library behind the Clawboo MCP quartet: one shared SQLite file, the repositories that own
//! its tables, and the MCP servers that expose them.
//!
//! Dependencies point one way: `servers` → (`mcp`, repositories) → `db`; `schema` lists the
//! repositories' DDL for `db`, so `db` never imports a repository. Repositories (`board`)
//! know SQL and nothing of MCP; `mcp` is the only module that touches rmcp; `servers` declare tools
//! with `mcp` and call repositories; `cli` is what the four bins run.
//!
//! Public by choice: `cli` and `binding` (what the bins use), `db`, `board`, `memory` and `scrub`
//! (what `cargo xtask bench` seeds and measures). Every other module is `pub(crate)`: its `pub`
//! items are the crate's internal interfaces, not an API.

pub(crate) mod attach;
pub mod binding;
pub mod board;
pub(crate) mod broker;
pub(crate) mod clawbrain;
pub mod cli;
pub mod db;
pub(crate) mod host;
pub(crate) mod http;
pub(crate) mod log;
pub(crate) mod mcp;
pub mod memory;
pub(crate) mod schema;
pub mod scrub;
pub(crate) mod servers;
pub(crate) mod signature;
pub(crate) mod teamchat;
