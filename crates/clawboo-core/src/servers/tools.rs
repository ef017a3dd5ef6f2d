//! The tools server (`clawboo-tools`): its tools land with their own issue; until then it serves an
//! empty tool list.

use crate::db::Db;
use crate::mcp::Server;

/// The server's `serverInfo.name`.
pub const SERVER_NAME: &str = "clawboo-tools";

/// The server over `db`.
pub fn build(db: Db) -> Server<Db> {
    Server::builder(SERVER_NAME, db).build()
}
