//! How the host is set up: [`HostConfig`], read from `serve`'s flags and the environment.
//!
//! Owns: the `serve` flags (their help lines, [`SERVE_FLAGS`], and their parsing over the one
//! argument parser, [`crate::args`]), the defaults, and the start-time refusals (a non-loopback
//! address without a token). Decisions: loopback `127.0.0.1:18790` by default; the tokens come from
//! `--tokens-file` or [`super::caller::TOKENS_FILE_ENV`] (named) and `--token` or [`TOKEN_ENV`]
//! (named `default`), both may be given; ClawBrain's vault from `--vault DIR` or `MEMORY_DIR`, and never a
//! default (over stdio ClawBrain defaults to `./memory`, but a long-lived host would then create a
//! vault in whatever folder it was started from): without one, ClawBrain is not mounted, by the
//! memory bin's `serve` or by `--all`, and the start-up line says so.
//!
//! Must never: show the token ([`HostConfig`]'s `Display` says only whether one is required).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::binding::SigningMode;
use super::caller::{DEFAULT_TOKEN_NAME, NamedToken, add_token, read_tokens_file};
use super::limits::Limits;
use crate::args::{Args, Usage, Word};
use crate::binding::ServerKind;
use crate::mcp::http as mcp_http;

/// The port the host listens on by default (the reference's web server port).
pub const DEFAULT_PORT: u16 = 18790;

/// The environment variable holding the bearer token.
pub const TOKEN_ENV: &str = "CLAWBOO_HTTP_TOKEN";

/// The environment variable naming ClawBrain's vault (the same one its stdio mode reads).
pub const VAULT_ENV: &str = "MEMORY_DIR";

/// How long a session may go without traffic before it ends, by default.
pub const DEFAULT_SESSION_IDLE: Duration = mcp_http::DEFAULT_SESSION_IDLE;

/// The most live sessions per server, by default.
pub const DEFAULT_MAX_SESSIONS: usize = mcp_http::DEFAULT_MAX_SESSIONS;

/// The `serve` flags, as its help shows them: `(flag, meaning)`.
pub const SERVE_FLAGS: [(&str, &str); 14] = [
    (
        "--all",
        "mount every server (ClawBrain only with a vault), the /api/tools REST routes and the approvals page",
    ),
    (
        "--listen ADDR",
        "where to listen (default 127.0.0.1:18790; port 0 picks one)",
    ),
    (
        "--token T",
        "a bearer token, named `default` (or CLAWBOO_HTTP_TOKEN; a token is required off loopback)",
    ),
    (
        "--tokens-file PATH",
        "named bearer tokens, NAME:TOKEN a line, mode 0600 (or CLAWBOO_HTTP_TOKENS_FILE; `token new NAME` prints a line)",
    ),
    (
        "--max-sessions N",
        "the most live sessions per server (default 256)",
    ),
    (
        "--session-idle SECS",
        "end a session idle this long (default 1800)",
    ),
    (
        "--max-connections N",
        "the most open connections; one more gets 503 (default 512)",
    ),
    (
        "--request-timeout SECS",
        "time to send a request's headers, then its body (default 30; streams out are not bounded)",
    ),
    (
        "--keep-alive SECS",
        "close a connection idle this long between requests (default 75)",
    ),
    (
        "--rate-limit N",
        "calls per second per token on /api/ (bursts of 2N; 429 with Retry-After; 0: off; default 100)",
    ),
    (
        "--shutdown-grace SECS",
        "at SIGTERM, how long in-flight calls may finish (default 10)",
    ),
    (
        "--allow-host NAME",
        "accept this Host name too (repeatable)",
    ),
    (
        "--unsigned-bindings",
        "accept URL bindings without a signature (a wrong one is still refused)",
    ),
    (
        "--vault DIR",
        "ClawBrain's vault, mounted at /api/mcp/clawbrain (or MEMORY_DIR; no default)",
    ),
];

/// How the host is set up.
#[derive(Debug, Clone)]
pub struct HostConfig {
    /// Where to listen.
    pub listen: SocketAddr,
    /// The named bearer tokens; when there is any, every request must carry one of them.
    pub tokens: Vec<NamedToken>,
    /// The servers asked for, mounted at `/api/mcp/<server>` when they can be built here.
    pub servers: Vec<ServerKind>,
    /// How long an idle session lives.
    pub session_idle: Duration,
    /// The most live sessions per server.
    pub max_sessions: usize,
    /// Extra `Host` names accepted (for a non-loopback deployment).
    pub extra_hosts: Vec<String>,
    /// Whether bindings in URLs must be signed.
    pub signing: SigningMode,
    /// The database file every session opens.
    pub db_path: PathBuf,
    /// The binding key from the environment ([`crate::signature::KEY_ENV`]), if set.
    pub binding_key: Option<String>,
    /// ClawBrain's vault, if the host names one.
    pub vault: Option<PathBuf>,
    /// What clients may cost the host.
    pub limits: Limits,
}

impl std::fmt::Display for HostConfig {
    /// A one-line description that never shows the token.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.servers.iter().map(|s| s.as_str()).collect();
        write!(
            f,
            "servers {}, token {}, bindings {}",
            names.join(", "),
            if !self.tokens.is_empty() {
                "required"
            } else {
                "off"
            },
            self.signing.as_str()
        )
    }
}

/// What `serve` reads from the environment (blank values already dropped).
#[derive(Debug, Clone, Default)]
pub struct ServeEnv {
    /// [`TOKEN_ENV`].
    pub token: Option<String>,
    /// [`TOKENS_FILE_ENV`].
    pub tokens_file: Option<String>,
    /// [`crate::signature::KEY_ENV`].
    pub binding_key: Option<String>,
    /// [`VAULT_ENV`].
    pub vault: Option<String>,
}

/// Reads the `serve` arguments. `own` are the bin's servers (`--all` mounts every one); the token
/// comes from `--token` or [`TOKEN_ENV`], the vault from `--vault` or [`VAULT_ENV`]. `Ok(None)`:
/// help was asked for.
pub fn parse_serve_args(
    own: &[ServerKind],
    mut args: Args,
    env: ServeEnv,
    db_path: PathBuf,
) -> Result<Option<HostConfig>, Usage> {
    let mut config = HostConfig {
        listen: SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT)),
        tokens: Vec::new(),
        servers: own.to_vec(),
        session_idle: DEFAULT_SESSION_IDLE,
        max_sessions: DEFAULT_MAX_SESSIONS,
        extra_hosts: Vec::new(),
        signing: SigningMode::Required,
        db_path,
        binding_key: env.binding_key,
        vault: env.vault.map(PathBuf::from),
        limits: Limits::default(),
    };
    let mut token = env.token;
    let mut tokens_file = env.tokens_file.map(PathBuf::from);
    while let Some(word) = args.next_word()? {
        let Word::Flag(flag) = &word else {
            if word == Word::Help {
                return Ok(None);
            }
            return Err(word.unexpected());
        };
        match flag.as_str() {
            "--all" => config.servers = ServerKind::ALL.to_vec(),
            "--unsigned-bindings" => config.signing = SigningMode::Optional,
            "--listen" => {
                config.listen = args.parsed(&format!("an address like 127.0.0.1:{DEFAULT_PORT}"))?
            }
            "--token" => token = Some(args.value()?),
            "--tokens-file" => tokens_file = Some(PathBuf::from(args.value()?)),
            "--max-sessions" => config.max_sessions = whole(&mut args, flag, 1)?,
            "--session-idle" => config.session_idle = secs(&mut args, flag)?,
            "--max-connections" => config.limits.max_connections = whole(&mut args, flag, 1)?,
            "--request-timeout" => config.limits.request_timeout = secs(&mut args, flag)?,
            "--keep-alive" => config.limits.keep_alive = secs(&mut args, flag)?,
            "--shutdown-grace" => config.limits.shutdown_grace = secs(&mut args, flag)?,
            "--rate-limit" => {
                config.limits.rate_per_sec = u32::try_from(whole(&mut args, flag, 0)?)
                    .map_err(|_| Usage(format!("{flag} is too large")))?
            }
            "--allow-host" => config.extra_hosts.push(args.value()?),
            "--vault" => config.vault = Some(PathBuf::from(args.value()?)),
            _ => return Err(word.unexpected()),
        }
    }
    if let Some(path) = tokens_file {
        config.tokens = read_tokens_file(&path).map_err(Usage)?;
    }
    if let Some(secret) = token.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty()) {
        let single = NamedToken {
            name: DEFAULT_TOKEN_NAME.to_owned(),
            secret,
        };
        add_token(&mut config.tokens, single).map_err(Usage)?;
    }
    if config.tokens.is_empty() && !config.listen.ip().is_loopback() {
        return Err(Usage(format!(
            "refusing to listen on {} without a token: anyone who can reach it could run and approve tool calls; pass --token or --tokens-file, or set {TOKEN_ENV}",
            config.listen
        )));
    }
    Ok(Some(config))
}

/// The value of `flag`: a whole number of at least `min`.
fn whole(args: &mut Args, flag: &str, min: usize) -> Result<usize, Usage> {
    let value = args.value()?;
    value.parse().ok().filter(|n| *n >= min).ok_or_else(|| {
        let what = if min == 0 {
            "a whole number"
        } else {
            "a positive whole number"
        };
        Usage(format!("{flag} needs {what}, got {value:?}"))
    })
}

/// The value of `flag`: a positive number of seconds.
fn secs(args: &mut Args, flag: &str) -> Result<Duration, Usage> {
    let value = args.value()?;
    value
        .parse()
        .ok()
        .filter(|n| *n > 0)
        .map(Duration::from_secs)
        .ok_or_else(|| {
            Usage(format!(
                "{flag} needs a positive number of seconds, got {value:?}"
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(words: &[&str], env: ServeEnv) -> Result<Option<HostConfig>, Usage> {
        parse_serve_args(
            &[ServerKind::Tasks],
            Args::new(words.iter().copied()),
            env,
            PathBuf::from("x.db"),
        )
    }

    #[test]
    fn a_non_loopback_listen_address_needs_a_token() {
        let err = parse(&["--listen", "0.0.0.0:18790"], ServeEnv::default()).unwrap_err();
        assert!(
            err.0
                .starts_with("refusing to listen on 0.0.0.0:18790 without a token"),
            "{err}"
        );
        let ok = parse(
            &["--listen", "0.0.0.0:18790", "--token", "t0k3n-for-tests"],
            ServeEnv::default(),
        )
        .unwrap()
        .unwrap();
        assert!(!ok.to_string().contains("t0k3n"), "{ok}");
        let blank_env = parse(
            &["--listen", "[::]:1"],
            ServeEnv {
                token: Some("  ".into()),
                ..ServeEnv::default()
            },
        );
        assert!(blank_env.is_err());
    }

    #[test]
    fn serve_flags_are_read_and_bad_values_named() {
        let config = parse(
            &[
                "--all",
                "--max-sessions",
                "3",
                "--session-idle=5",
                "--unsigned-bindings",
                "--vault",
                "brain",
            ],
            ServeEnv::default(),
        )
        .unwrap()
        .unwrap();
        assert_eq!(config.servers, ServerKind::ALL.to_vec());
        assert_eq!(config.max_sessions, 3);
        assert_eq!(config.session_idle, Duration::from_secs(5));
        assert_eq!(config.signing, SigningMode::Optional);
        assert_eq!(config.vault, Some(PathBuf::from("brain")));
        for (bad, message) in [
            (
                vec!["--max-sessions", "0"],
                "--max-sessions needs a positive whole number, got \"0\"",
            ),
            (
                vec!["--listen", "nowhere"],
                "--listen needs an address like 127.0.0.1:18790, got \"nowhere\"",
            ),
            (
                vec!["--session-idle", "x"],
                "--session-idle needs a positive number of seconds, got \"x\"",
            ),
            (vec!["--token"], "--token needs a value"),
            (vec!["--token", "--all"], "--token needs a value"),
            (vec!["--bogus"], "unexpected argument '--bogus'"),
            (vec!["extra"], "unexpected argument 'extra'"),
        ] {
            let err = parse(&bad, ServeEnv::default()).unwrap_err();
            assert_eq!(err.0, message, "{bad:?}");
        }
        assert!(parse(&["--listen", "x", "--help"], ServeEnv::default()).is_err());
        assert!(parse(&["--help"], ServeEnv::default()).unwrap().is_none());
    }

    #[test]
    fn the_vault_comes_from_the_flag_or_the_environment_and_has_no_default() {
        let none = parse(&[], ServeEnv::default()).unwrap().unwrap();
        assert_eq!(none.vault, None);
        let env = ServeEnv {
            vault: Some("from-env".into()),
            ..ServeEnv::default()
        };
        assert_eq!(
            parse(&[], env.clone()).unwrap().unwrap().vault,
            Some(PathBuf::from("from-env"))
        );
        assert_eq!(
            parse(&["--vault", "flag"], env).unwrap().unwrap().vault,
            Some(PathBuf::from("flag"))
        );
    }
}
