//! What the four bins run: argument handling (`--help`, `--version`), opening the database named
//! by the environment, and serving one server over stdio.
//!
//! Owns: exit codes and the one-line error a person sees when start-up fails.
//! Must never: panic on bad input or an unusable database; write anything but protocol to stdout
//! while serving.

pub mod operator;

use std::process::ExitCode;
use std::time::Duration;

use crate::attach::{self, AttachRequest, Transport};
use crate::binding::{Binding, DB_PATH_ENV, Scope, ServerKind, env_value};
use crate::db::{Clock, Db, default_db_path};
use crate::host;
use crate::log;
use crate::mcp::{SERVER_VERSION, Server, stdio};
use crate::memory::{EmbedConfig, Embedder, Memory};
use crate::servers::{memory, tasks, teamchat, tools};
use crate::signature::{self, BindingKey};

/// How long shutdown waits for in-flight handlers to finish their database work.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// What a bin says about itself.
#[derive(Debug, Clone, Copy)]
pub struct BinInfo {
    /// The executable's name, e.g. `clawboo-mcp-tasks`.
    pub bin: &'static str,
    /// The server it serves.
    pub server: ServerKind,
    /// One line: what the server is for.
    pub summary: &'static str,
    /// Extra environment variables the server reads, as `NAME  meaning` lines.
    pub env_help: &'static str,
}

fn help_text(info: &BinInfo, commands_usage: &str) -> String {
    format!(
        "{bin} {SERVER_VERSION}\n{summary}\n\n\
         USAGE:\n    {bin}              serve MCP over stdio (newline-delimited JSON-RPC)\n{commands_usage}    \
         {bin} attach --runtime claude-code|codex|openclaw [--transport stdio|http]\n        \
         [--db PATH] [--team T] [--agent A] [--tenant X] [--bin PATH] [--http-base URL] [--json]\n        \
         print the config that plugs this server into a client (bound when --team/--agent are given;\n        \
         over http the binding is signed with the install's key)\n    \
         {bin} serve {serve_usage}\n        \
         serve over Streamable HTTP at /api/mcp/<server> (default 127.0.0.1:{port}); --all hosts the four\n        \
         servers, the /api/tools REST routes and the approvals page at / on one port\n    \
         {bin} --help       print this help\n    {bin} --version    print the version\n\n\
         ENVIRONMENT:\n    {DB_PATH_ENV}    the shared SQLite file (default ~/.openclaw/clawboo/clawboo.db)\n    \
         RUST_LOG           stderr log level: error, warn (default), info, debug\n    \
         {token_env} the bearer token `serve` requires (always required off loopback)\n    \
         {key_env} the key that signs HTTP bindings (default: a file beside the database)\n{extra}",
        bin = info.bin,
        summary = info.summary,
        extra = info.env_help,
        serve_usage = host::SERVE_USAGE,
        port = host::DEFAULT_PORT,
        token_env = host::TOKEN_ENV,
        key_env = signature::KEY_ENV,
    )
}

/// Handles `--help` / `--version`; `Some(code)` means the bin should exit with it.
pub fn handle_flags(info: &BinInfo, args: &[String]) -> Option<ExitCode> {
    handle_flags_with(info, "", args)
}

/// [`handle_flags`] for a bin whose `--help` also lists `commands_usage` (operator subcommands,
/// one indented line each).
fn handle_flags_with(info: &BinInfo, commands_usage: &str, args: &[String]) -> Option<ExitCode> {
    match args.first().map(String::as_str) {
        None => None,
        Some("-h" | "--help" | "help") => {
            print!("{}", help_text(info, commands_usage));
            Some(ExitCode::SUCCESS)
        }
        Some("-V" | "--version") => {
            println!("{} {SERVER_VERSION}", info.bin);
            Some(ExitCode::SUCCESS)
        }
        Some("serve") => Some(serve_command(info, &args[1..])),
        Some("attach") => Some(match attach_command(info, &args[1..]) {
            Ok(text) => {
                println!("{text}");
                ExitCode::SUCCESS
            }
            Err(message) => {
                eprintln!("{}: attach: {message}", info.bin);
                ExitCode::from(2)
            }
        }),
        Some(other) => {
            eprintln!(
                "{}: unexpected argument {other:?}; run `{} --help` for usage",
                info.bin, info.bin
            );
            Some(ExitCode::from(2))
        }
    }
}

/// `attach`: the snippet (and, with `--json`, the structured form) that plugs this bin into a
/// runtime. The bin path defaults to this executable and the database to the one this bin would
/// open, so the attached server shares the operator's file.
fn attach_command(info: &BinInfo, args: &[String]) -> Result<String, String> {
    let server = info.server;
    let mut runtime = None;
    let mut transport = Transport::Stdio;
    let mut json = false;
    let mut request = AttachRequest {
        runtime: attach::Runtime::ClaudeCode,
        server,
        transport,
        bin_path: String::new(),
        db_path: None,
        http_base: None,
        scope: Scope::default(),
        binding_key: None,
    };
    let mut bin_path = None;
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        if flag == "--json" {
            json = true;
            continue;
        }
        let value = rest
            .next()
            .filter(|v| !v.starts_with("--"))
            .ok_or_else(|| format!("{flag} needs a value"))?
            .clone();
        match flag.as_str() {
            "--runtime" => runtime = Some(value.parse().map_err(|e| format!("{e}"))?),
            "--transport" => transport = value.parse().map_err(|e| format!("{e}"))?,
            "--db" => request.db_path = Some(value),
            "--team" => request.scope.team_id = Some(value),
            "--agent" => request.scope.agent_id = Some(value),
            "--tenant" => request.scope.tenant_id = Some(value),
            "--bin" => bin_path = Some(value),
            "--http-base" => request.http_base = Some(value),
            other => return Err(format!("unexpected argument {other:?}")),
        }
    }
    request.runtime = runtime.ok_or("--runtime is required (claude-code, codex or openclaw)")?;
    request.transport = transport;
    request.bin_path = match bin_path {
        Some(path) => path,
        None => std::env::current_exe()
            .map_err(|e| format!("cannot tell where this bin is ({e}); pass --bin PATH"))?
            .display()
            .to_string(),
    };
    if request.db_path.is_none() {
        let db = default_db_path().map_err(|e| e.to_string())?;
        let absolute = std::path::absolute(&db).unwrap_or(db);
        request.db_path = Some(absolute.display().to_string());
    }
    if request.transport == Transport::Http
        && let Some(db) = &request.db_path
    {
        let key = BindingKey::load(std::path::Path::new(db), env_value(signature::KEY_ENV))
            .map_err(|e| e.to_string())?;
        request.binding_key = Some(key);
    }
    let config = attach::attach_config(&request);
    if json {
        return serde_json::to_string_pretty(&config).map_err(|e| e.to_string());
    }
    Ok(config.snippet)
}

/// `serve`: the HTTP host, until SIGTERM or Ctrl-C. Prints the bound address on stderr (so
/// `--listen 127.0.0.1:0` can be found).
fn serve_command(info: &BinInfo, args: &[String]) -> ExitCode {
    let own = info.server;
    let db_path = match default_db_path() {
        Ok(path) => std::path::absolute(&path).unwrap_or(path),
        Err(e) => {
            eprintln!("{}: {e}", info.bin);
            return ExitCode::FAILURE;
        }
    };
    let env = host::ServeEnv {
        token: env_value(host::TOKEN_ENV),
        binding_key: env_value(signature::KEY_ENV),
    };
    let config = match host::parse_serve_args(own, args, env, db_path) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("{}: serve: {message}", info.bin);
            return ExitCode::from(2);
        }
    };
    let runtime = match async_runtime(info, None) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let described = config.to_string();
    let outcome = runtime.block_on(async {
        let host = host::bind(config).await?;
        eprintln!(
            "{}: listening on http://{} ({described})",
            info.bin,
            host.local_addr()
        );
        host.run().await;
        Ok::<(), String>(())
    });
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{}: serve: {message}", info.bin);
            ExitCode::FAILURE
        }
    }
}

/// A multi-threaded tokio runtime (`workers` threads, else one per core), or the one-line reason
/// it could not start.
fn async_runtime(
    info: &BinInfo,
    workers: Option<usize>,
) -> Result<tokio::runtime::Runtime, ExitCode> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(workers) = workers {
        builder.worker_threads(workers);
    }
    builder.enable_all().build().map_err(|e| {
        eprintln!("{}: cannot start the async runtime: {e}", info.bin);
        ExitCode::FAILURE
    })
}

/// Opens the database named by the environment, or explains in one line why it cannot. Its clock
/// is the system's, except in a debug build given `CLAWBOO_TEST_CLOCK_MS` ([`Clock::from_env`]).
pub fn open_db(info: &BinInfo) -> Result<Db, ExitCode> {
    let opened = default_db_path()
        .and_then(|path| Db::open(&path))
        .map(|db| db.with_clock(Clock::from_env()));
    opened.map_err(|e| {
        eprintln!("{}: {e}", info.bin);
        ExitCode::FAILURE
    })
}

/// Serves `server` over stdio until stdin closes or SIGTERM arrives.
pub fn serve<S: Send + Sync + 'static>(info: &BinInfo, server: Server<S>) -> ExitCode {
    let runtime = match async_runtime(info, Some(2)) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    log::info(&format!("{} serving over stdio", server.name()));
    let outcome = runtime.block_on(stdio::serve(server.clone()));
    server.close();
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}: {e}", info.bin);
            ExitCode::FAILURE
        }
    }
}

/// Builds `info`'s server over `db`, bound as this process's environment says
/// ([`Binding::from_env`]), and serves it over stdio.
fn serve_from_env(info: &BinInfo, db: Db) -> ExitCode {
    let binding = Binding::from_env(info.server);
    match info.server {
        ServerKind::Tasks => serve(info, tasks::build(db, binding.tasks())),
        ServerKind::Memory => {
            let embedder = Embedder::resolve_in_background(EmbedConfig::from_env());
            serve(
                info,
                memory::build(Memory::new(db, embedder), binding.memory()),
            )
        }
        ServerKind::Tools => serve(info, tools::build(db, tools::ToolsConfig::from_env())),
        ServerKind::Teamchat => serve(info, teamchat::build(db, binding.teamchat())),
    }
}

/// The whole life of a simple bin: flags, database, binding, serve.
pub fn run(info: &BinInfo) -> ExitCode {
    run_with_commands(info, "", |_| None)
}

/// [`run`] for a bin that also has operator subcommands: `commands` sees the arguments first and
/// returns `Some(code)` when it ran one; `commands_usage` lines are added to `--help`.
pub fn run_with_commands<C>(info: &BinInfo, commands_usage: &str, commands: C) -> ExitCode
where
    C: FnOnce(&[String]) -> Option<ExitCode>,
{
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(code) = commands(&args) {
        return code;
    }
    if let Some(code) = handle_flags_with(info, commands_usage, &args) {
        return code;
    }
    match open_db(info) {
        Ok(db) => serve_from_env(info, db),
        Err(code) => code,
    }
}
