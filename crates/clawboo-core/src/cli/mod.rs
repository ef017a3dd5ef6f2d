//! What every bin runs: its commands, each answering `--help`; opening the database named by the
//! environment; serving one server over stdio; `serve` over HTTP; `attach`.
//!
//! A bin is `cli::run(ServerKind::…)`. What it serves comes from the registry
//! (`servers::registry`): every server whose entry names the bin (the memory bin's own server, and
//! ClawBrain behind `clawbrain`). Its commands are one list, [`commands`]: serving over stdio,
//! `serve`, `attach`, and the commands of a server that has some (the tools bin's operator
//! commands, ClawBrain's `clawbrain feedback|decay|compact|digest`). Dispatch, the bin's `--help`,
//! each command's `--help` and the tests that run every command's `--help` all read that list.
//! Arguments are read with the one parser of every front door, [`crate::args`].
//!
//! Owns: exit codes and the one-line error a person sees. The error style of every bin command: a
//! usage error exits 2, a failure exits 1; the message is one line on stderr, prefixed with the
//! bin's name and the command's words once (`clawboo-mcp-tasks: serve: unexpected argument
//! '--bogus'; run `clawboo-mcp-tasks serve --help` for usage`), or, when the command was given
//! `--json`, `{"error": "…"}` on stdout (and nothing on stderr) so a script reading JSON always
//! gets JSON.
//! Guarantees: `--help` (or `-h`) anywhere in a command's arguments prints that command's usage on
//! stdout and exits 0 without opening anything; at start-up the bin logs, at `info`, the database
//! file it opened (and whether it came from `CLAWBOO_DB_PATH` or is the default) and the binding it
//! runs under: binding values are team / agent / tenant ids, never a secret.
//! Must never: panic on bad input or an unusable database; write anything but protocol to stdout
//! while serving.

pub mod clawbrain;
mod doctor;
mod maintain;
pub mod operator;

use std::process::ExitCode;
use std::time::Duration;

use crate::args::{Args, Usage, Word, wants_help};
use crate::attach::{self, AttachRequest, Transport};
use crate::binding::{Binding, DB_PATH_ENV, Scope, ServerKind, env_value, given};
use crate::db::{Clock, Db, DbError, default_db_path};
use crate::host;
use crate::log;
use crate::mcp::{McpServer, SERVER_VERSION};
use crate::servers::registry::{self, Context, Store};
use crate::signature::{self, BindingKey};

/// How long shutdown waits for in-flight handlers to finish their database work.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// What a bin says about itself, from its server's registry entry.
#[derive(Debug, Clone, Copy)]
pub struct BinInfo {
    /// The executable's name, e.g. `clawboo-mcp-tasks`.
    pub bin: &'static str,
    /// The server it serves with no arguments.
    pub server: ServerKind,
    /// One line: what the server is for.
    pub summary: &'static str,
}

impl BinInfo {
    /// The bin whose own server is `kind`.
    pub fn of(kind: ServerKind) -> Self {
        let entry = registry::entry(kind);
        Self {
            bin: entry.bin,
            server: kind,
            summary: entry.summary,
        }
    }
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

/// A usage error of the command named by `words` (none: the bin itself): the message once, after
/// the command's words, and where its help is; exit 2.
pub fn usage_error(bin: &str, words: &str, json: bool, usage: &Usage) -> ExitCode {
    let (prefix, help) = if words.is_empty() {
        (String::new(), format!("{bin} --help"))
    } else {
        (format!("{words}: "), format!("{bin} {words} --help"))
    };
    let message = format!("{prefix}{usage}; run `{help}` for usage");
    fail(bin, json, EXIT_USAGE, &message)
}

/// What a command does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    /// Serve this server over stdio.
    Stdio(ServerKind),
    /// `serve`: the HTTP host.
    Serve,
    /// `attach`: the config snippet of this server.
    Attach(ServerKind),
    /// One of the tools bin's operator commands.
    Operator,
    /// One of ClawBrain's commands.
    ClawBrain,
    /// One of the upkeep commands every bin has (`maintain`).
    Maintain,
}

/// One command of a bin, as its help shows it.
#[derive(Debug, Clone)]
pub struct Command {
    /// The words that name it after the bin (`serve`, `clawbrain feedback`); none for serving the
    /// bin's own server over stdio.
    pub words: Vec<&'static str>,
    /// Its arguments, as its usage line shows them.
    pub synopsis: String,
    /// What it does.
    pub about: String,
    action: Action,
}

impl Command {
    /// The command's words joined (`clawbrain feedback`).
    pub fn path(&self) -> String {
        self.words.join(" ")
    }

    fn usage_line(&self, bin: &str) -> String {
        [bin, &self.path(), &self.synopsis]
            .iter()
            .filter(|part| !part.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Every command of the bin whose own server is `kind`, in the order its help lists them.
pub fn commands(kind: ServerKind) -> Vec<Command> {
    let bin = registry::entry(kind).bin;
    let mut list = Vec::new();
    for entry in registry::of_bin(bin) {
        let mode = entry.mode_args().to_vec();
        if entry.is_bins_own() {
            list.push(Command {
                words: Vec::new(),
                synopsis: String::new(),
                about: "serve MCP over stdio (newline-delimited JSON-RPC)".into(),
                action: Action::Stdio(entry.kind),
            });
            list.push(Command {
                words: vec!["serve"],
                synopsis: synopsis_of(&host::SERVE_FLAGS),
                about: format!(
                    "serve over Streamable HTTP at /api/mcp/<server> (default 127.0.0.1:{}); --all hosts\n\
                     every server, the REST routes and the operator console at / on one port",
                    host::DEFAULT_PORT
                ),
                action: Action::Serve,
            });
            list.push(Command {
                words: vec!["attach"],
                synopsis: ATTACH_SYNOPSIS.into(),
                about: "print the config that plugs this server into a client (bound when --team/--agent\n\
                        are given; --auto-approve: Codex calls the tools without asking, which `codex exec` needs)"
                    .into(),
                action: Action::Attach(entry.kind),
            });
            for (words, synopsis, about) in maintain::commands() {
                list.push(Command {
                    words,
                    synopsis: synopsis.into(),
                    about: about.into(),
                    action: Action::Maintain,
                });
            }
        } else {
            list.push(Command {
                words: mode.clone(),
                synopsis: String::new(),
                about: format!(
                    "serve `{}` over stdio: {}",
                    entry.server_name, entry.summary
                ),
                action: Action::Stdio(entry.kind),
            });
        }
        // The commands of a server that has some beyond serving.
        let (extra, action) = match entry.kind {
            ServerKind::Tools => (operator::commands(), Action::Operator),
            ServerKind::ClawBrain => (clawbrain::commands(), Action::ClawBrain),
            _ => continue,
        };
        for (name, synopsis, about) in extra {
            let mut words = mode.clone();
            words.push(name);
            list.push(Command {
                words,
                synopsis,
                about,
                action,
            });
        }
    }
    list
}

/// A usage line of optional `flags` (`[--flag VALUE]`), four to a line.
fn synopsis_of(flags: &[(&str, &str)]) -> String {
    flags
        .chunks(4)
        .map(|line| {
            line.iter()
                .map(|(flag, _)| format!("[{flag}]"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n        ")
}

/// `attach`'s usage line.
const ATTACH_SYNOPSIS: &str = "--runtime claude-code|codex|openclaw [--transport stdio|http]\n        \
    [--db PATH] [--team T] [--agent A] [--tenant X] [--bin PATH] [--http-base URL]\n        \
    [--auto-approve] [--json]";

/// The bin's `--help`: every command, then the environment.
fn help_text(info: &BinInfo) -> String {
    let bin = info.bin;
    let mut out = format!(
        "{bin} {SERVER_VERSION}\n{summary}\n\nUSAGE:\n",
        summary = info.summary
    );
    for command in commands(info.server) {
        let line = command.usage_line(bin);
        if command.synopsis.is_empty() && !command.about.contains('\n') && line.len() < 24 {
            out.push_str(&format!("    {line:<22} {}\n", command.about));
        } else {
            out.push_str(&format!("    {line}\n"));
            for about in command.about.lines() {
                out.push_str(&format!("        {about}\n"));
            }
        }
    }
    let env_help: String = registry::of_bin(bin).map(|e| e.env_help).collect();
    out.push_str(&format!(
        "    {bin} COMMAND --help   print a command's usage\n    \
         {bin} --help       print this help\n    {bin} --version    print the version\n\n\
         ENVIRONMENT:\n    {DB_PATH_ENV}    the shared SQLite file (default ~/.openclaw/clawboo/clawboo.db)\n    \
         RUST_LOG           stderr log level: error, warn (default), info, debug\n    \
         {token_env} the bearer token `serve` requires, named `default` (a token is required off loopback)\n    \
         {tokens_env} a file of named tokens for `serve` (NAME:TOKEN a line, mode 0600)\n    \
         {key_env} the key that signs HTTP bindings (default: a file beside the database)\n    \
         CLAWBOO_RETAIN_{{AUDIT,POSTS,APPROVALS}}_DAYS  keep audit rows, posts, resolved approvals this many days\n    \
         (serve hourly, compact; default: forever)\n{env_help}",
        token_env = host::TOKEN_ENV,
        tokens_env = host::TOKENS_FILE_ENV,
        key_env = signature::KEY_ENV,
    ));
    out
}

/// One command's `--help`: its usage, what it does, its flags, and the commands under it.
fn command_help(info: &BinInfo, command: &Command, all: &[Command]) -> String {
    let mut out = format!(
        "usage: {}\n\n{}\n",
        command.usage_line(info.bin),
        command.about
    );
    if command.action == Action::Serve {
        out.push_str("\nFLAGS:\n");
        for (flag, meaning) in host::SERVE_FLAGS {
            out.push_str(&format!("    {flag:<22} {meaning}\n"));
        }
    }
    let under: Vec<&Command> = all
        .iter()
        .filter(|c| {
            !command.words.is_empty()
                && c.words.len() > command.words.len()
                && c.words.starts_with(&command.words)
        })
        .collect();
    if !under.is_empty() {
        out.push_str("\nCOMMANDS:\n");
        for c in under {
            out.push_str(&format!(
                "    {}\n        {}\n",
                c.usage_line(info.bin),
                c.about
            ));
        }
    }
    out
}

/// The whole life of a bin whose own server is `kind`: read its command line, run the command
/// (by default, serve over stdio) and return the exit code.
pub fn run(kind: ServerKind) -> ExitCode {
    let info = BinInfo::of(kind);
    let mut words = Vec::new();
    for word in std::env::args_os().skip(1) {
        match word.into_string() {
            Ok(word) => words.push(word),
            Err(raw) => {
                let usage = Usage(format!("argument {raw:?} is not valid UTF-8"));
                return usage_error(info.bin, "", false, &usage);
            }
        }
    }
    dispatch(&info, &words)
}

/// Runs the command `words` name (the bin's arguments).
fn dispatch(info: &BinInfo, words: &[String]) -> ExitCode {
    match words.first().map(String::as_str) {
        Some("-h" | "--help" | "help") => {
            print!("{}", help_text(info));
            return ExitCode::SUCCESS;
        }
        Some("-V" | "--version" | "version") => {
            println!("{} {SERVER_VERSION}", info.bin);
            return ExitCode::SUCCESS;
        }
        _ => {}
    }
    let all = commands(info.server);
    let Some(command) = all
        .iter()
        .filter(|c| c.words.len() <= words.len() && c.words.iter().zip(words).all(|(w, a)| w == a))
        .max_by_key(|c| c.words.len())
    else {
        return usage_error(info.bin, "", false, &Usage("no command".into()));
    };
    let rest = &words[command.words.len()..];
    let path = command.path();
    if wants_help(rest) {
        print!("{}", command_help(info, command, &all));
        return ExitCode::SUCCESS;
    }
    match command.action {
        Action::Stdio(kind) => match rest.first() {
            Some(word) => usage_error(info.bin, &path, false, &crate::args::unexpected(word)),
            None => serve_stdio(info, kind, &path),
        },
        Action::Serve => serve_command(info, rest),
        Action::Attach(kind) => {
            let json = rest.iter().any(|a| a == "--json");
            match attach_command(kind, rest) {
                Ok(text) => {
                    println!("{text}");
                    ExitCode::SUCCESS
                }
                Err(AttachError::Usage(usage)) => usage_error(info.bin, &path, json, &usage),
                Err(AttachError::Failed(message)) => {
                    fail(info.bin, json, EXIT_FAILURE, &format!("{path}: {message}"))
                }
            }
        }
        Action::Operator => operator::dispatch(info, &path, rest),
        Action::Maintain => maintain::dispatch(info, &command.words, rest),
        Action::ClawBrain => {
            let name = command.words.last().copied().unwrap_or_default();
            clawbrain::dispatch(info, &path, name.to_owned(), rest)
        }
    }
}

/// Why `attach` printed nothing.
enum AttachError {
    /// A bad flag or value (exit 2).
    Usage(Usage),
    /// Something it needed failed (exit 1).
    Failed(String),
}

impl From<Usage> for AttachError {
    fn from(usage: Usage) -> Self {
        Self::Usage(usage)
    }
}

/// `attach`: the snippet (and, with `--json`, the structured form) that plugs `server` into a
/// runtime. The bin path defaults to this executable and the database to the one this bin would
/// open, so the attached server shares the operator's file.
fn attach_command(server: ServerKind, words: &[String]) -> Result<String, AttachError> {
    let mut runtime = None;
    let mut json = false;
    let mut auto_approve = false;
    let mut request = AttachRequest {
        runtime: attach::Runtime::ClaudeCode,
        server,
        transport: Transport::Stdio,
        bin_path: String::new(),
        db_path: None,
        http_base: None,
        scope: Scope::default(),
        binding_key: None,
        auto_approve: false,
    };
    let mut bin_path = None;
    let named = |e: crate::binding::UnknownName| Usage(e.to_string());
    let mut args = Args::new(words);
    while let Some(word) = args.next_word()? {
        let Word::Flag(flag) = &word else {
            return Err(word.unexpected().into());
        };
        match flag.as_str() {
            "--json" => json = true,
            "--auto-approve" => auto_approve = true,
            "--runtime" => runtime = Some(args.value()?.parse().map_err(named)?),
            "--transport" => request.transport = args.value()?.parse().map_err(named)?,
            "--db" => request.db_path = Some(args.value()?),
            "--team" => request.scope.team_id = Some(args.value()?),
            "--agent" => request.scope.agent_id = Some(args.value()?),
            "--tenant" => request.scope.tenant_id = Some(args.value()?),
            "--bin" => bin_path = Some(args.value()?),
            "--http-base" => request.http_base = Some(args.value()?),
            _ => return Err(word.unexpected().into()),
        }
    }
    request.runtime = runtime
        .ok_or_else(|| Usage("--runtime is required (claude-code, codex or openclaw)".into()))?;
    if auto_approve && request.runtime != attach::Runtime::Codex {
        return Err(Usage("--auto-approve is for --runtime codex only".into()).into());
    }
    request.auto_approve = auto_approve;
    request.bin_path = match bin_path {
        Some(path) => path,
        None => std::env::current_exe()
            .map_err(|e| {
                AttachError::Failed(format!(
                    "cannot tell where this bin is ({e}); pass --bin PATH"
                ))
            })?
            .display()
            .to_string(),
    };
    // A relative --db would be resolved by the client against its own working folder; the
    // snippet names the file this shell means.
    let db = match given(request.db_path.take().as_deref()) {
        Some(path) => std::path::PathBuf::from(path),
        None => default_db_path().map_err(|e| AttachError::Failed(e.to_string()))?,
    };
    let absolute = std::path::absolute(&db)
        .map_err(|e| AttachError::Failed(format!("cannot make {} absolute: {e}", db.display())))?;
    request.db_path = Some(absolute.display().to_string());
    if request.transport == Transport::Http
        && let Some(db) = &request.db_path
    {
        let key = BindingKey::load(std::path::Path::new(db), env_value(signature::KEY_ENV))
            .map_err(|e| AttachError::Failed(e.to_string()))?;
        request.binding_key = Some(key);
    }
    let config = attach::attach_config(&request);
    if json {
        return serde_json::to_string_pretty(&config)
            .map_err(|e| AttachError::Failed(e.to_string()));
    }
    Ok(config.snippet)
}

/// `serve`: the HTTP host, until SIGTERM or Ctrl-C. Prints the bound address on stderr (so
/// `--listen 127.0.0.1:0` can be found), with the servers mounted.
fn serve_command(info: &BinInfo, words: &[String]) -> ExitCode {
    let db_path = match default_db_path() {
        Ok(path) => std::path::absolute(&path).unwrap_or(path),
        Err(e) => return fail(info.bin, false, EXIT_FAILURE, &format!("serve: {e}")),
    };
    let env = host::ServeEnv {
        token: env_value(host::TOKEN_ENV),
        tokens_file: env_value(host::TOKENS_FILE_ENV),
        binding_key: env_value(signature::KEY_ENV),
        vault: env_value(host::VAULT_ENV),
        retention: match crate::schema::retention::Policy::from_env() {
            Ok(policy) => policy,
            Err(e) => return usage_error(info.bin, "serve", false, &Usage(e)),
        },
    };
    let own: Vec<ServerKind> = registry::of_bin(info.bin).map(|e| e.kind).collect();
    let config = match host::parse_serve_args(&own, Args::new(words), env, db_path) {
        Ok(Some(config)) => config,
        Ok(None) => {
            let all = commands(info.server);
            let serve = all.iter().find(|c| c.action == Action::Serve);
            print!(
                "{}",
                serve
                    .map(|c| command_help(info, c, &all))
                    .unwrap_or_default()
            );
            return ExitCode::SUCCESS;
        }
        Err(usage) => return usage_error(info.bin, "serve", false, &usage),
    };
    let runtime = match async_runtime(info, host::ASYNC_WORKERS) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let outcome = runtime.block_on(async {
        let mut shown = config.clone();
        let host = host::bind(config).await?;
        shown.servers = host.mounted();
        let unmounted: String = host.unmounted().iter().map(|u| format!("; {u}")).collect();
        eprintln!(
            "{}: listening on http://{} ({shown}{unmounted})",
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

/// A multi-threaded tokio runtime of `workers` worker threads (and its blocking pool), or the
/// one-line reason it could not start.
fn async_runtime(info: &BinInfo, workers: usize) -> Result<tokio::runtime::Runtime, ExitCode> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.worker_threads(workers);
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
pub fn serve(info: &BinInfo, server: McpServer) -> ExitCode {
    let runtime = match async_runtime(info, 2) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    log::info(&format!("{} serving over stdio", server.name()));
    let outcome = runtime.block_on(crate::mcp::serve_stdio(server));
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(info.bin, false, EXIT_FAILURE, &e.to_string()),
    }
}

/// Builds `kind`'s server through the registry, bound as this process's environment says
/// ([`Binding::from_env`]), and serves it over stdio. A server over the shared database gets the
/// database the environment names ([`open_db`]); ClawBrain, the vault in `MEMORY_DIR` (default
/// `./memory`) and the session in `SESSION_ID`. `words` name the command, for errors.
fn serve_stdio(info: &BinInfo, kind: ServerKind, words: &str) -> ExitCode {
    let binding = Binding::from_env(kind);
    let context = match registry::entry(kind).store {
        Store::Shared(_) => match open_db(info, false) {
            Ok(db) => Context::over_db(db).with_embeddings_per_server(),
            Err(code) => return code,
        },
        Store::Vault => Context::without_db()
            .with_vault(Some(crate::clawbrain::root_from_env()))
            .with_session(crate::clawbrain::session_from_env()),
    };
    if !kind.fields().is_empty() {
        log::info(&format!("{}: {}", info.bin, binding_summary(&binding)));
    }
    match registry::build(kind, &context, &binding) {
        Ok(server) => serve(info, server),
        Err(e) => {
            let prefix = if words.is_empty() {
                String::new()
            } else {
                format!("{words}: ")
            };
            fail(info.bin, false, EXIT_FAILURE, &format!("{prefix}{e}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bin_lists_serve_attach_and_its_servers_commands_once() {
        for kind in ServerKind::ALL {
            let entry = registry::entry(kind);
            if !entry.is_bins_own() {
                continue;
            }
            let paths: Vec<String> = commands(kind).iter().map(Command::path).collect();
            let mut unique = paths.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), paths.len(), "{kind}: {paths:?}");
            for needed in ["", "serve", "attach"] {
                assert!(paths.iter().any(|p| p == needed), "{kind}: {paths:?}");
            }
        }
        let memory: Vec<String> = commands(ServerKind::Memory)
            .iter()
            .map(Command::path)
            .collect();
        assert!(memory.contains(&"clawbrain".to_owned()));
        assert!(memory.contains(&"clawbrain feedback".to_owned()));
        let tools: Vec<String> = commands(ServerKind::Tools)
            .iter()
            .map(Command::path)
            .collect();
        assert!(tools.contains(&"approve".to_owned()));
    }
}
