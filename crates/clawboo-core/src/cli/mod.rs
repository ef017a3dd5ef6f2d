//! What the four bins run: argument handling (`--help`, `--version`), opening the database named
//! by the environment, and serving one server over stdio.
//!
//! Owns: exit codes and the one-line error a person sees when start-up fails.
//! The error style of every bin subcommand: a usage error exits 2, a failure exits 1; the message
//! is one line on stderr prefixed with the bin's name (`clawboo-mcp-tasks: …`), or, when the
//! command was given `--json`, `{"error": "…"}` on stdout (and nothing on stderr) so a script
//! reading JSON always gets JSON.
//! Guarantees: at start-up the bin logs, at `info`, the database file it opened (and whether it
//! came from `CLAWBOO_DB_PATH` or is the default) and the binding it runs under: binding values are
//! team / agent / tenant ids, never a secret.
//! Must never: panic on bad input or an unusable database; write anything but protocol to stdout
//! while serving.

pub mod clawbrain;
pub mod operator;

use std::process::ExitCode;
use std::time::Duration;

use crate::attach::{self, AttachRequest, Transport};
use crate::binding::{Binding, DB_PATH_ENV, Scope, ServerKind, env_value, given};
use crate::db::{Clock, Db, DbError, default_db_path};
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

/// Exit code of a usage error (a bad flag or argument): nothing was attempted.
pub const EXIT_USAGE: u8 = 2;

/// Exit code of a command that was understood but failed.
pub const EXIT_FAILURE: u8 = 1;

/// Reports an error of `bin` in the one style of every bin subcommand (see the module docs) and
/// returns `code` as the exit code.
pub fn fail(bin: &str, json: bool, code: u8, message: &str) -> ExitCode {
    if json {
        println!("{}", serde_json::json!({ "error": message }));
    } else {
        eprintln!("{bin}: {message}");
    }
    ExitCode::from(code)
}

fn help_text(info: &BinInfo, commands_usage: &str) -> String {
    format!(
        "{bin} {SERVER_VERSION}\n{summary}\n\n\
         USAGE:\n    {bin}              serve MCP over stdio (newline-delimited JSON-RPC)\n{commands_usage}    \
         {bin} attach --runtime claude-code|codex|openclaw [--transport stdio|http]\n        \
         [--db PATH] [--team T] [--agent A] [--tenant X] [--bin PATH] [--http-base URL]\n        \
         [--auto-approve] [--json]\n        \
         print the config that plugs this server into a client (bound when --team/--agent are given;\n        \
         --auto-approve: Codex calls the tools without asking, which `codex exec` needs)\n    \
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
        Some("-V" | "--version" | "version") => {
            println!("{} {SERVER_VERSION}", info.bin);
            Some(ExitCode::SUCCESS)
        }
        Some("serve") => Some(serve_command(info, &args[1..])),
        Some("attach") => {
            let json = args.iter().any(|a| a == "--json");
            Some(match attach_command(info, &args[1..]) {
                Ok(text) => {
                    println!("{text}");
                    ExitCode::SUCCESS
                }
                Err(message) => fail(info.bin, json, EXIT_USAGE, &format!("attach: {message}")),
            })
        }
        Some(other) => Some(fail(
            info.bin,
            false,
            EXIT_USAGE,
            &format!(
                "unexpected argument {other:?}; run `{} --help` for usage",
                info.bin
            ),
        )),
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
    let mut auto_approve = false;
    let mut request = AttachRequest {
        runtime: attach::Runtime::ClaudeCode,
        server,
        transport,
        bin_path: String::new(),
        db_path: None,
        http_base: None,
        scope: Scope::default(),
        binding_key: None,
        auto_approve: false,
    };
    let mut bin_path = None;
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        if flag == "--json" {
            json = true;
            continue;
        }
        if flag == "--auto-approve" {
            auto_approve = true;
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
    if auto_approve && request.runtime != attach::Runtime::Codex {
        return Err("--auto-approve is for --runtime codex only".into());
    }
    request.auto_approve = auto_approve;
    request.transport = transport;
    request.bin_path = match bin_path {
        Some(path) => path,
        None => std::env::current_exe()
            .map_err(|e| format!("cannot tell where this bin is ({e}); pass --bin PATH"))?
            .display()
            .to_string(),
    };
    // A relative --db would be resolved by the client against its own working folder; the
    // snippet names the file this shell means.
    let db = match given(request.db_path.take().as_deref()) {
        Some(path) => std::path::PathBuf::from(path),
        None => default_db_path().map_err(|e| e.to_string())?,
    };
    let absolute = std::path::absolute(&db)
        .map_err(|e| format!("cannot make {} absolute: {e}", db.display()))?;
    request.db_path = Some(absolute.display().to_string());
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
        Err(e) => return fail(info.bin, false, EXIT_FAILURE, &e.to_string()),
    };
    let env = host::ServeEnv {
        token: env_value(host::TOKEN_ENV),
        binding_key: env_value(signature::KEY_ENV),
    };
    let config = match host::parse_serve_args(own, args, env, db_path) {
        Ok(config) => config,
        Err(message) => return fail(info.bin, false, EXIT_USAGE, &format!("serve: {message}")),
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
        Err(message) => fail(info.bin, false, EXIT_FAILURE, &format!("serve: {message}")),
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
        fail(
            info.bin,
            false,
            EXIT_FAILURE,
            &format!("cannot start the async runtime: {e}"),
        )
    })
}

/// Opens the database named by the environment, or explains in one line why it cannot. Logs, at
/// `info`, the file it opened. Its clock is the system's, except in a debug build given
/// `CLAWBOO_TEST_CLOCK_MS` (`Clock::from_env`).
/// Under `json` the failure is `{"error":…}` on stdout ([`fail`]).
pub fn open_db(info: &BinInfo, json: bool) -> Result<Db, ExitCode> {
    let opened = default_db_path().and_then(|path| Db::open(&path).map(|db| (db, path)));
    let (db, path) = opened.map_err(|e| open_failure(info.bin, json, &e))?;
    let shown = std::path::absolute(&path).unwrap_or(path);
    let source = if env_value(DB_PATH_ENV).is_some() {
        format!("from {DB_PATH_ENV}")
    } else {
        format!("the default: {DB_PATH_ENV} is unset or blank")
    };
    log::info(&format!(
        "{}: database {} ({source})",
        info.bin,
        shown.display()
    ));
    Ok(db.with_clock(Clock::from_env()))
}

/// The one-line report of a database that could not be opened: exit 1.
pub fn open_failure(bin: &str, json: bool, error: &DbError) -> ExitCode {
    fail(bin, json, EXIT_FAILURE, &error.to_string())
}

/// The binding a bin runs under, for its log: the variables that are set, or `unbound`.
fn binding_summary(binding: &Binding) -> String {
    if binding.is_unbound() {
        let names: Vec<&str> = binding.server().fields().iter().map(|f| f.env).collect();
        return format!(
            "unbound (scope comes from tool arguments; set {} to bind)",
            names.join(" / ")
        );
    }
    let set: Vec<String> = binding
        .env_pairs()
        .iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect();
    format!("bound: {}", set.join(", "))
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
        Err(e) => fail(info.bin, false, EXIT_FAILURE, &e.to_string()),
    }
}

/// Builds `info`'s server over `db`, bound as this process's environment says
/// ([`Binding::from_env`]), and serves it over stdio.
fn serve_from_env(info: &BinInfo, db: Db) -> ExitCode {
    let binding = Binding::from_env(info.server);
    log::info(&format!("{}: {}", info.bin, binding_summary(&binding)));
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
    match open_db(info, false) {
        Ok(db) => serve_from_env(info, db),
        Err(code) => code,
    }
}
