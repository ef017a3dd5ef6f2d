//! The four MCP servers, each declared with [`crate::mcp`] over its repository.
//!
//! Servers know MCP's shapes (arguments, descriptions, result texts) and call repositories; they
//! never run SQL themselves.

pub mod clawbrain;
pub mod memory;
pub mod tasks;
pub mod teamchat;
pub mod tools;
