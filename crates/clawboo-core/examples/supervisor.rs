//! A liveness supervisor that keeps every server's in-process path honest: every few seconds it
//! builds each server ([`SERVER_NAMES`]) over the shared database (ClawBrain over the vault
//! `memory/` beside it) and probes it with an in-memory MCP client (`initialize` + `tools/list`,
//! both ends closed), printing one line per server.
//!
//! ```sh
//! cargo run -p clawboo-core --example supervisor -- [--db PATH] [--every SECS] [--once]
//! ```
//!
//! `--once` probes once and exits 0 when every server answered, 1 otherwise (a smoke test runs it
//! this way). The database defaults to `./clawboo.db`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clawboo_core::{
    Db, Embeddings, McpServer, SERVER_NAMES, ToolsOptions, clawbrain_server, memory_server, probe,
    tasks_server, teamchat_server, tools_server,
};

/// How long one probe may take before the server counts as down.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

struct Args {
    db: PathBuf,
    every: Duration,
    once: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        db: PathBuf::from("clawboo.db"),
        every: Duration::from_secs(5),
        once: false,
    };
    let mut rest = std::env::args().skip(1);
    while let Some(flag) = rest.next() {
        match flag.as_str() {
            "--once" => args.once = true,
            "--db" => args.db = rest.next().ok_or("--db needs a path")?.into(),
            "--every" => {
                let secs = rest.next().ok_or("--every needs a number of seconds")?;
                let secs: u64 = secs.parse().map_err(|_| {
                    format!("--every needs a whole number of seconds, got {secs:?}")
                })?;
                args.every = Duration::from_secs(secs.max(1));
            }
            other => return Err(format!("unexpected argument {other:?}")),
        }
    }
    Ok(args)
}

/// A fresh server of `name` over its own connection to the database: a probe is one session.
fn build(name: &str, db: &std::path::Path) -> Result<McpServer, String> {
    if name == "clawbrain" {
        let vault = db
            .parent()
            .unwrap_or(std::path::Path::new("."))
            .join("memory");
        return clawbrain_server(&vault, "supervisor").map_err(|e| e.to_string());
    }
    let db = Db::open(db).map_err(|e| e.to_string())?;
    match name {
        "tasks" => Ok(tasks_server(db, None)),
        "memory" => Ok(memory_server(db, &Embeddings::off(), None)),
        "tools" => Ok(tools_server(db, ToolsOptions::default())),
        "teamchat" => Ok(teamchat_server(db, None)),
        other => Err(format!("no constructor for server {other:?}")),
    }
}

/// Probes every server once; whether all of them answered.
async fn round(db: &std::path::Path) -> bool {
    let mut healthy = true;
    for name in SERVER_NAMES {
        let started = Instant::now();
        let outcome = match build(name, db) {
            Ok(server) => match tokio::time::timeout(PROBE_TIMEOUT, probe(server)).await {
                Ok(Ok(tools)) => Ok(tools),
                Ok(Err(e)) => Err(e.to_string()),
                Err(_) => Err(format!("no answer within {PROBE_TIMEOUT:?}")),
            },
            Err(e) => Err(e),
        };
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        match outcome {
            Ok(tools) => println!("{name:<9} up   {tools:>2} tools  {ms:>6.1} ms"),
            Err(e) => {
                healthy = false;
                println!("{name:<9} DOWN {e}");
            }
        }
    }
    healthy
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("supervisor: {e}; usage: supervisor [--db PATH] [--every SECS] [--once]");
            return ExitCode::from(2);
        }
    };
    if args.once {
        return if round(&args.db).await {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    let mut tick = tokio::time::interval(args.every);
    loop {
        tokio::select! {
            _ = tick.tick() => {
                round(&args.db).await;
            }
            _ = tokio::signal::ctrl_c() => return ExitCode::SUCCESS,
        }
    }
}
