//! The library behind the Clawboo MCP quartet: one shared SQLite file, the repositories that own
//! its tables, and the MCP servers that expose them.
//!
//! Dependencies point one way: `servers` → (`mcp`, repositories) → `db`. Repositories (`board`)
//! know SQL and nothing of MCP; `mcp` is the only module that touches rmcp; `servers` declare tools
//! with `mcp` and call repositories; `cli` is what the four bins run.

pub mod attach;
pub mod binding;
pub mod board;
pub mod broker;
pub mod cli;
pub mod db;
pub mod host;
pub mod http;
pub mod log;
pub mod mcp;
pub mod memory;
pub mod scrub;
pub mod servers;
pub mod signature;
pub mod teamchat;
