use super::*;
use crate::binding::{Scope, ServerKind};

const BIN: &str = "/opt/clawboo/bin/clawboo-mcp-tasks";
const DB: &str = "/srv/team/clawboo.db";

fn request(runtime: Runtime, server: ServerKind, transport: Transport) -> AttachRequest {
    AttachRequest {
        binding_key: None,
        runtime,
        server,
        transport,
        bin_path: BIN.to_owned(),
        db_path: Some(DB.to_owned()),
        http_base: Some("http://127.0.0.1:18790/".to_owned()),
        scope: Scope::default(),
        auto_approve: false,
    }
}

fn bound() -> Scope {
    Scope {
        team_id: Some("tm1".into()),
        agent_id: Some("boo 1".into()),
        tenant_id: Some("acme".into()),
    }
}

/// Parses an OpenClaw snippet the way OpenClaw reads `openclaw.json`: as JSON5, here as the only
/// member of `mcp.servers`.
fn parse_openclaw(snippet: &str) -> Value {
    let file = format!("{{ \"mcp\": {{ \"servers\": {{\n{snippet}\n}} }} }}");
    json5::from_str(&file).unwrap_or_else(|e| panic!("not JSON5 ({e}):\n{file}"))
}

/// A path with everything that needs quoting somewhere: spaces, both quotes, a backslash, `$`, and
/// U+2028, which ends a JSON5 line.
const AWKWARD: &str = "/opt/it's a \"dir\"\\ $HOME \u{2028}/clawboo.db";

#[test]
fn six_runtime_and_transport_snapshots_for_tasks() {
    let url = "http://127.0.0.1:18790/api/mcp/tasks";
    let cases = [
        (
            Runtime::ClaudeCode,
            Transport::Stdio,
            format!("claude mcp add clawboo-tasks -e CLAWBOO_DB_PATH={DB} -- {BIN}"),
        ),
        (
            Runtime::Codex,
            Transport::Stdio,
            format!(
                "# ~/.codex/config.toml\n[mcp_servers.clawboo-tasks]\ncommand = \"{BIN}\"\nargs = []\n\
                 env = {{ CLAWBOO_DB_PATH = \"{DB}\" }}"
            ),
        ),
        (
            Runtime::OpenClaw,
            Transport::Stdio,
            format!(
                "// openclaw.json \u{2192} mcp.servers (or run the command on the next line instead)\n\
                 // openclaw mcp set clawboo-tasks '{{\"command\":\"{BIN}\",\"args\":[],\
                 \"env\":{{\"CLAWBOO_DB_PATH\":\"{DB}\"}}}}'\n\
                 \"clawboo-tasks\": {{ \"command\": \"{BIN}\", \
                 \"args\": [], \"env\": {{ \"CLAWBOO_DB_PATH\": \"{DB}\" }} }}"
            ),
        ),
        (
            Runtime::ClaudeCode,
            Transport::Http,
            format!("claude mcp add --transport http clawboo-tasks {url}"),
        ),
        (
            Runtime::Codex,
            Transport::Http,
            format!("# ~/.codex/config.toml\n[mcp_servers.clawboo-tasks]\nurl = \"{url}\""),
        ),
        (
            Runtime::OpenClaw,
            Transport::Http,
            format!(
                "// openclaw.json \u{2192} mcp.servers (or run the command on the next line instead)\n\
                 // openclaw mcp set clawboo-tasks '{{\"url\":\"{url}\",\"transport\":\"streamable-http\"}}'\n\
                 \"clawboo-tasks\": {{ \"url\": \"{url}\", \"transport\": \"streamable-http\" }}"
            ),
        ),
    ];
    for (runtime, transport, expected) in cases {
        let config = attach_config(&request(runtime, ServerKind::Tasks, transport));
        assert_eq!(config.id, "clawboo-tasks");
        assert_eq!(config.snippet, expected, "{runtime} {transport:?}");
    }
}

#[test]
fn structured_forms_match_each_runtime_config() {
    let stdio = |runtime| attach_config(&request(runtime, ServerKind::Tasks, Transport::Stdio));
    let server = json!({ "command": BIN, "args": [], "env": { "CLAWBOO_DB_PATH": DB } });
    assert_eq!(
        stdio(Runtime::ClaudeCode).structured,
        json!({ "clawboo-tasks": { "type": "stdio", "command": BIN, "args": [], "env": { "CLAWBOO_DB_PATH": DB } } })
    );
    assert_eq!(
        stdio(Runtime::Codex).structured,
        json!({ "mcp_servers": { "clawboo-tasks": server.clone() } })
    );
    assert_eq!(stdio(Runtime::OpenClaw).structured, server);
    let http = attach_config(&request(
        Runtime::OpenClaw,
        ServerKind::Tools,
        Transport::Http,
    ));
    assert_eq!(
        http.structured,
        json!({ "url": "http://127.0.0.1:18790/api/mcp/tools", "transport": "streamable-http" })
    );
}

#[test]
fn codex_snippets_are_valid_toml_with_the_structured_content() {
    for server in ServerKind::ALL {
        for transport in [Transport::Stdio, Transport::Http] {
            for auto_approve in [false, true] {
                let mut req = request(Runtime::Codex, server, transport);
                req.scope = bound();
                req.auto_approve = auto_approve;
                req.bin_path = r#"C:\Program Files\clawboo "mcp"\bin"#.to_owned();
                req.db_path = Some(AWKWARD.to_owned());
                let config = attach_config(&req);
                let parsed: toml::Value = toml::from_str(&config.snippet)
                    .unwrap_or_else(|e| panic!("not TOML ({e}):\n{}", config.snippet));
                let as_json = serde_json::to_value(&parsed).expect("TOML converts to JSON");
                assert_eq!(as_json, config.structured, "{server} {transport:?}");
                let entry = &as_json["mcp_servers"][config.id.as_str()];
                let approve = entry.get("default_tools_approval_mode");
                assert_eq!(approve, auto_approve.then(|| json!("approve")).as_ref());
                assert_eq!(config.command, None);
            }
        }
    }
}

#[test]
fn auto_approve_touches_only_codex() {
    for runtime in [Runtime::ClaudeCode, Runtime::OpenClaw] {
        let mut req = request(runtime, ServerKind::Tasks, Transport::Stdio);
        let plain = attach_config(&req);
        req.auto_approve = true;
        assert_eq!(attach_config(&req), plain, "{runtime}");
    }
}

#[test]
fn openclaw_snippets_are_json5_members_with_the_structured_content() {
    for server in ServerKind::ALL {
        for transport in [Transport::Stdio, Transport::Http] {
            let mut req = request(Runtime::OpenClaw, server, transport);
            req.scope = bound();
            req.db_path = Some(AWKWARD.to_owned());
            req.bin_path = AWKWARD.replace("clawboo.db", "clawboo-mcp-x");
            let config = attach_config(&req);
            assert!(
                config.snippet.lines().all(|l| !l.starts_with('#')),
                "a '#' line breaks openclaw.json:\n{}",
                config.snippet
            );
            let file = parse_openclaw(&config.snippet);
            let entry = &file["mcp"]["servers"][config.id.as_str()];
            assert_eq!(entry, &config.structured, "{server} {transport:?}");
            if transport == Transport::Stdio {
                assert_eq!(entry["env"]["CLAWBOO_DB_PATH"], AWKWARD);
            } else {
                assert_eq!(entry["transport"], "streamable-http");
            }
            let command = config
                .command
                .as_deref()
                .expect("an openclaw mcp set command");
            let offered = config
                .snippet
                .lines()
                .find_map(|l| l.strip_prefix("// openclaw mcp set "))
                .expect("the command is offered in a comment line");
            assert_eq!(format!("openclaw mcp set {offered}"), command);
        }
    }
}

#[test]
fn openclaw_set_command_carries_the_entry_as_one_shell_word() {
    let mut req = request(Runtime::OpenClaw, ServerKind::Memory, Transport::Stdio);
    req.db_path = Some(AWKWARD.to_owned());
    let config = attach_config(&req);
    let command = config.command.expect("command");
    let rest = command
        .strip_prefix("openclaw mcp set clawboo-memory '")
        .and_then(|r| r.strip_suffix('\''))
        .expect("one single-quoted argument");
    // Inside single quotes the only escape is '\'' for a quote.
    let json_text = rest.replace("'\\''", "'");
    let entry: Value = serde_json::from_str(&json_text).expect("the argument is JSON");
    assert_eq!(entry, config.structured);
}

#[test]
fn claude_structured_form_is_a_valid_mcp_json() {
    for transport in [Transport::Stdio, Transport::Http] {
        let mut req = request(Runtime::ClaudeCode, ServerKind::Teamchat, transport);
        req.scope = bound();
        req.db_path = Some(AWKWARD.to_owned());
        let config = attach_config(&req);
        let file = serde_json::to_string(&json!({ "mcpServers": config.structured })).unwrap();
        let parsed: Value = serde_json::from_str(&file).expect("JSON");
        let entry = &parsed["mcpServers"]["clawboo-teamchat"];
        let expected_type = if transport == Transport::Stdio {
            "stdio"
        } else {
            "http"
        };
        assert_eq!(entry["type"], expected_type);
        assert_eq!(config.command.as_deref(), Some(config.snippet.as_str()));
    }
}

#[test]
fn claude_stdio_snippet_is_shell_words_matching_the_structured_env() {
    let mut req = request(Runtime::ClaudeCode, ServerKind::Memory, Transport::Stdio);
    req.scope = bound();
    req.bin_path = "/opt/my tools/clawboo-mcp-memory".into();
    let config = attach_config(&req);
    assert_eq!(
        config.snippet,
        "claude mcp add clawboo-memory -e CLAWBOO_DB_PATH=/srv/team/clawboo.db \
         -e CLAWBOO_SCOPE_TEAM_ID=tm1 -e 'CLAWBOO_SCOPE_AGENT_ID=boo 1' \
         -e CLAWBOO_SCOPE_TENANT_ID=acme -- '/opt/my tools/clawboo-mcp-memory'"
    );
    let entry = &config.structured["clawboo-memory"];
    assert_eq!(entry["type"], "stdio");
    assert_eq!(entry["command"], "/opt/my tools/clawboo-mcp-memory");
    assert_eq!(entry["env"]["CLAWBOO_SCOPE_AGENT_ID"], "boo 1");
}

#[test]
fn http_urls_follow_the_reference() {
    let scope = Scope {
        team_id: Some("tm1".into()),
        agent_id: Some("boo-1".into()),
        tenant_id: None,
    };
    assert_eq!(
        http_url("http://localhost:18790", ServerKind::Teamchat, &scope),
        "http://localhost:18790/api/mcp/teamchat?roomTeamId=tm1&postAuthorAgentId=boo-1"
    );
    assert_eq!(
        http_url("http://h//", ServerKind::Tools, &Scope::default()),
        "http://h//api/mcp/tools",
        "unbound URLs are the reference's"
    );
    assert_eq!(
        http_url("http://h", ServerKind::Tools, &scope),
        "http://h/api/mcp/tools?scopeAgentId=boo-1",
        "ours also bind the tools caller, with the stdio binding's names"
    );
    let odd = Scope {
        team_id: Some("a b/c&d".into()),
        ..Scope::default()
    };
    assert_eq!(
        http_url("http://h", ServerKind::Memory, &odd),
        "http://h/api/mcp/memory?scopeTeamId=a+b%2Fc%26d"
    );
}

#[test]
fn names_parse_and_unknown_names_say_what_is_expected() {
    assert_eq!("codex".parse::<Runtime>(), Ok(Runtime::Codex));
    let err = "vscode".parse::<Runtime>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown runtime \"vscode\"; expected one of: claude-code, codex, openclaw"
    );
}

#[test]
fn signed_urls_carry_the_signature_of_exactly_the_bound_parameters() {
    let key = crate::signature::BindingKey::from_secret(&"a".repeat(64));
    let scope = Scope {
        team_id: Some("tm1".into()),
        agent_id: Some("boo-1".into()),
        tenant_id: None,
    };
    assert_eq!(
        signed_http_url("http://127.0.0.1:18790/", ServerKind::Memory, &scope, &key),
        "http://127.0.0.1:18790/api/mcp/memory?scopeTeamId=tm1&scopeAgentId=boo-1\
         &sig=a7908c8c40e1b1bce12318b725317c57d4d86404e0ff7c724abd09c3f1f2dff8"
    );
    assert_eq!(
        signed_http_url("http://h", ServerKind::Tools, &Scope::default(), &key),
        "http://h/api/mcp/tools"
    );
    let mut request = request(Runtime::ClaudeCode, ServerKind::Teamchat, Transport::Http);
    request.scope = scope;
    request.binding_key = Some(key);
    let config = attach_config(&request);
    assert!(
        config
            .snippet
            .contains("roomTeamId=tm1&postAuthorAgentId=boo-1&sig="),
        "{}",
        config.snippet
    );
}

#[test]
fn a_server_behind_a_mode_is_attached_with_its_mode_argument() {
    let claude = attach_config(&request(
        Runtime::ClaudeCode,
        ServerKind::ClawBrain,
        Transport::Stdio,
    ));
    assert!(
        claude.snippet.ends_with(&format!("-- {BIN} clawbrain")),
        "{}",
        claude.snippet
    );
    assert_eq!(
        claude.structured["clawboo-clawbrain"]["args"],
        json!(["clawbrain"])
    );
    let codex = attach_config(&request(
        Runtime::Codex,
        ServerKind::ClawBrain,
        Transport::Stdio,
    ));
    assert!(
        codex.snippet.contains("args = [\"clawbrain\"]"),
        "{}",
        codex.snippet
    );
    let own = attach_config(&request(
        Runtime::Codex,
        ServerKind::Tasks,
        Transport::Stdio,
    ));
    assert!(own.snippet.contains("args = []"), "{}", own.snippet);
    let http = attach_config(&request(
        Runtime::ClaudeCode,
        ServerKind::ClawBrain,
        Transport::Http,
    ));
    assert!(
        http.snippet
            .ends_with("http://127.0.0.1:18790/api/mcp/clawbrain"),
        "{}",
        http.snippet
    );
}
