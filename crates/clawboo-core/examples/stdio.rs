//! A program that is itself the MCP server a runtime spawns: the teamchat server over stdio,
//! bound to an author and a room chosen by this program (not by the model), on the database the
//! runtime names.
//!
//! ```sh
//! cargo build -p clawboo-core --example stdio
//! claude mcp add team-room -- target/debug/examples/stdio --db /srv/clawboo.db --team team-a --agent reviewer
//! ```
//!
//! stdout carries protocol messages only; anything else goes to stderr.

use std::path::PathBuf;

use clawboo_core::{Db, TeamchatBinding, serve_stdio, teamchat_server};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (mut db, mut team, mut agent) = (PathBuf::from("clawboo.db"), None, None);
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        match (flag.as_str(), args.next()) {
            ("--db", Some(path)) => db = path.into(),
            ("--team", Some(id)) => team = Some(id),
            ("--agent", Some(id)) => agent = Some(id),
            _ => {
                return Err(
                    format!("usage: stdio [--db PATH] [--team T --agent A]; got {flag:?}").into(),
                );
            }
        }
    }
    // Both or neither: a room binding needs the team and the author.
    let binding = match (team, agent) {
        (Some(team_id), Some(agent_id)) => Some(TeamchatBinding { team_id, agent_id }),
        (None, None) => None,
        _ => return Err("--team and --agent go together".into()),
    };
    let server = teamchat_server(Db::open(&db)?, binding);
    eprintln!("stdio: serving {} over stdio", server.name());
    serve_stdio(server).await?;
    Ok(())
}
