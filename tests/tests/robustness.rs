//! Every bin against what a confused or hostile client might send. Arguments: for every listed
//! tool, hundreds of argument objects made from the tool's own property names with values of every
//! JSON type (huge and negative numbers, floats, nulls, nested arrays and objects, long and odd
//! Unicode strings); each call must come back as a result or a tool-error. The protocol: random
//! bytes, truncated messages, a wrong type in every field of a request, deep nesting, invalid
//! UTF-8, requests and notifications before `initialize`; each must get a JSON-RPC error (or, for
//! a notification, nothing), never a dropped connection, and the server must still answer
//! afterwards.

use clawboo_tests::{Rng, Server, TempDir, bins};
use serde_json::{Map, Value, json};
use std::time::Duration;

/// Calls per tool.
const CALLS_PER_TOOL: usize = 60;

fn odd_string(rng: &mut Rng) -> String {
    let pieces = [
        "",
        " ",
        "task",
        "team-a",
        "agent-1",
        "\u{0}",
        "\u{202e}rtl",
        "🦀",
        "\"quoted\"",
        "' OR 1=1 --",
        "NEAR(",
        "[Inter-session message · from=x]",
        "00000000-0000-4000-8000-000000000000",
        "sk-FAKEfakefakefake1234567890",
    ];
    match rng.below(4) {
        0 => "é".repeat(rng.below(5000)),
        _ => pieces[rng.below(pieces.len())].to_owned(),
    }
}

fn odd_value(rng: &mut Rng, depth: u32) -> Value {
    match rng.below(if depth > 1 { 6 } else { 8 }) {
        0 => Value::Null,
        1 => json!(rng.below(2) == 0),
        2 => json!([0, 1, -1, 5, 100, 501, i64::MAX, i64::MIN][rng.below(8)]),
        3 => json!([0.5, -0.0, 1e308, 2.0, -7.25][rng.below(5)]),
        4 | 5 => Value::String(odd_string(rng)),
        6 => Value::Array(
            (0..rng.below(4))
                .map(|_| odd_value(rng, depth + 1))
                .collect(),
        ),
        _ => {
            let mut object = Map::new();
            for i in 0..rng.below(3) {
                object.insert(format!("k{i}"), odd_value(rng, depth + 1));
            }
            Value::Object(object)
        }
    }
}

#[test]
fn no_argument_makes_a_server_drop_a_call_or_die() {
    let mut rng = Rng::new(0xBAD_A125);
    for bin in bins() {
        let dir = TempDir::new("robustness");
        let mut server = Server::spawn(
            bin,
            &dir.db_path(),
            &[
                ("CLAWBOO_TOOL_APPROVAL_TIMEOUT_MS", "20"),
                ("CLAWBOO_TOOL_APPROVAL_POLL_MS", "10"),
            ],
        );
        let tools = server.list_tools();
        for tool in &tools {
            let name = tool["name"].as_str().unwrap_or_default().to_owned();
            let properties: Vec<String> = tool["inputSchema"]["properties"]
                .as_object()
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
            let calls: Vec<Value> = (0..CALLS_PER_TOOL)
                .map(|_| {
                    let mut args = Map::new();
                    for property in &properties {
                        if rng.below(3) > 0 {
                            args.insert(property.clone(), odd_value(&mut rng, 0));
                        }
                    }
                    if rng.below(10) == 0 {
                        args.insert("unexpected".into(), odd_value(&mut rng, 0));
                    }
                    Value::Object(args)
                })
                .collect();
            let ids: Vec<u64> = calls
                .iter()
                .map(|args| {
                    server.send_request("tools/call", json!({"name": name, "arguments": args}))
                })
                .collect();
            for (response, args) in server.wait_responses(&ids).into_iter().zip(&calls) {
                let result = response.get("result").unwrap_or_else(|| {
                    panic!("{bin} {name} {args}: a JSON-RPC error instead of a result: {response}")
                });
                assert!(
                    result["isError"].is_boolean(),
                    "{bin} {name} {args}: {result}"
                );
            }
        }
        assert_eq!(
            server.list_tools().len(),
            tools.len(),
            "{bin} stopped answering"
        );
        assert_eq!(server.close().code(), Some(0), "{bin} did not exit cleanly");
    }
}

/// Sends `lines` (each without its newline) and then a `ping`; returns every message that came
/// back before the ping's answer, after checking the server answered it.
fn replies_before_ping(server: &mut Server, lines: &[Vec<u8>]) -> Vec<Value> {
    for line in lines {
        let mut bytes = line.clone();
        bytes.push(b'\n');
        server.send_bytes(&bytes);
    }
    let ping = server.send_request("ping", json!({}));
    let mut before = Vec::new();
    loop {
        let message = server.read_message();
        if message["id"] == json!(ping) {
            assert!(message.get("result").is_some(), "ping failed: {message}");
            return before;
        }
        before.push(message);
    }
}

/// `message` is a JSON-RPC error with one of `codes`.
fn assert_error(message: &Value, codes: &[i64], context: &str) {
    assert_eq!(message["jsonrpc"], "2.0", "{context}: {message}");
    let code = message["error"]["code"].as_i64();
    assert!(
        code.is_some_and(|c| codes.contains(&c)),
        "{context}: expected an error with a code in {codes:?}, got {message}"
    );
}

/// Whether the server ignores `line` without answering: blank once trimmed (and without a BOM).
fn is_blank(line: &[u8]) -> bool {
    let line = line.trim_ascii();
    line.strip_prefix(b"\xEF\xBB\xBF")
        .unwrap_or(line)
        .trim_ascii()
        .is_empty()
}

fn spawn(bin: &str, dir: &TempDir) -> Server {
    Server::spawn(bin, &dir.db_path(), &[])
}

#[test]
fn random_bytes_get_one_error_per_line_and_the_session_goes_on() {
    let mut rng = Rng::new(0x5EED_B17E);
    for bin in bins() {
        let dir = TempDir::new("fuzz-bytes");
        let mut server = spawn(bin, &dir);
        let lines: Vec<Vec<u8>> = (0..300)
            .map(|_| {
                (0..1 + rng.below(200))
                    .map(|_| rng.below(256) as u8)
                    .filter(|&b| b != b'\n')
                    .collect()
            })
            .collect();
        let replies = replies_before_ping(&mut server, &lines);
        let answered = lines.iter().filter(|l| !is_blank(l)).count();
        assert_eq!(
            replies.len(),
            answered,
            "{bin}: one answer per non-blank line"
        );
        for reply in &replies {
            assert_error(reply, &[-32700, -32600], bin);
            assert_eq!(reply["id"], Value::Null, "{bin}: {reply}");
        }
        assert!(!server.list_tools().is_empty(), "{bin}");
        assert_eq!(server.close().code(), Some(0), "{bin}");
    }
}

#[test]
fn every_truncation_of_a_request_is_a_parse_error() {
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}),
        json!({"jsonrpc": "2.0", "id": "s", "method": "tools/call", "params": {"name": "x", "arguments": {"a": [1, {"b": "é🦀"}]}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ];
    for bin in bins() {
        let dir = TempDir::new("fuzz-truncate");
        let mut server = spawn(bin, &dir);
        let mut lines = Vec::new();
        for request in &requests {
            let text = request.to_string().into_bytes();
            lines.extend((1..text.len()).map(|cut| text[..cut].to_vec()));
        }
        let replies = replies_before_ping(&mut server, &lines);
        let answered = lines.iter().filter(|l| !is_blank(l)).count();
        assert_eq!(replies.len(), answered, "{bin}");
        for reply in &replies {
            assert_error(reply, &[-32700], bin);
        }
        assert_eq!(server.close().code(), Some(0), "{bin}");
    }
}

#[test]
fn a_wrong_type_in_any_field_is_answered_and_never_ends_the_session() {
    let templates = [
        json!({"jsonrpc": "2.0", "id": 700_000, "method": "tools/call", "params": {"name": "x", "arguments": {}}}),
        json!({"jsonrpc": "2.0", "id": 700_000, "method": "tools/list", "params": {"cursor": "c"}}),
        json!({"jsonrpc": "2.0", "id": 700_000, "method": "prompts/get", "params": {"name": "p", "arguments": {}}}),
        json!({"jsonrpc": "2.0", "id": 700_000, "method": "ping"}),
    ];
    let wrong = [
        json!(null),
        json!(true),
        json!(-1.5),
        json!(i64::MIN),
        json!("s"),
        json!([1]),
        json!({"k": {}}),
    ];
    for bin in bins() {
        let dir = TempDir::new("fuzz-types");
        let mut server = spawn(bin, &dir);
        for template in &templates {
            let mut paths: Vec<Vec<&str>> = vec![vec!["jsonrpc"], vec!["id"], vec!["method"]];
            if let Some(params) = template["params"].as_object() {
                paths.push(vec!["params"]);
                paths.extend(params.keys().map(|k| vec!["params", k.as_str()]));
            }
            for path in &paths {
                for value in &wrong {
                    let mut message = template.clone();
                    let mut slot = &mut message;
                    for key in path {
                        slot = &mut slot[*key];
                    }
                    *slot = value.clone();
                    let context = format!("{bin} {message}");
                    let id = message["id"].clone();
                    let line = message.to_string().into_bytes();
                    if (id.is_i64() || id.is_string()) && message["method"].is_string() {
                        // A request is always answered (maybe after later ones: handlers run
                        // concurrently), with its own id.
                        server.send_line(&message.to_string());
                        let reply = server.read_message();
                        assert_eq!(reply["id"], id, "{context}: {reply}");
                        assert_eq!(reply["jsonrpc"], "2.0", "{context}: {reply}");
                        assert!(
                            reply.get("result").is_some() || reply["error"]["code"].is_i64(),
                            "{context}: {reply}"
                        );
                        assert!(
                            replies_before_ping(&mut server, &[]).is_empty(),
                            "{context}"
                        );
                    } else {
                        let replies = replies_before_ping(&mut server, &[line]);
                        assert!(replies.len() <= 1, "{context}: {replies:?}");
                        for reply in &replies {
                            assert_error(reply, &[-32700, -32600, -32602], &context);
                        }
                    }
                }
            }
        }
        assert_eq!(server.close().code(), Some(0), "{bin}");
    }
}

#[test]
fn deep_nesting_and_invalid_utf8_are_parse_errors() {
    let deep = 100_000;
    let mut lines = vec![
        format!("{}{}", "[".repeat(deep), "]".repeat(deep)).into_bytes(),
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x","arguments":{{"a":{}{}}}}}}}"#,
            "[".repeat(deep),
            "]".repeat(deep)
        )
        .into_bytes(),
        format!("{}1{}", r#"{"a":"#.repeat(deep), "}".repeat(deep)).into_bytes(),
    ];
    for bad in [
        &b"\xff"[..],
        b"\xc3\x28",
        b"\xed\xa0\x80",
        b"\xf4\x90\x80\x80",
        b"\xc0\xaf",
    ] {
        let mut inside =
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list"#.to_vec();
        inside.extend_from_slice(bad);
        inside.extend_from_slice(br#""}}"#);
        lines.push(inside);
        let mut outside = bad.to_vec();
        outside.extend_from_slice(br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#);
        lines.push(outside);
    }
    for bin in bins() {
        let dir = TempDir::new("fuzz-deep");
        let mut server = spawn(bin, &dir);
        let replies = replies_before_ping(&mut server, &lines);
        assert_eq!(replies.len(), lines.len(), "{bin}: {replies:?}");
        for reply in &replies {
            assert_error(reply, &[-32700], bin);
            assert_eq!(reply["id"], Value::Null, "{bin}: {reply}");
        }
        assert_eq!(server.close().code(), Some(0), "{bin}");
    }
}

#[test]
fn requests_before_initialize_get_errors_and_initialize_still_works() {
    for bin in bins() {
        let dir = TempDir::new("fuzz-preinit");
        let mut server = Server::spawn_raw(bin, &dir.db_path(), &[]);
        for method in ["tools/list", "tools/call", "prompts/list", "no/such/method"] {
            let reply = server.request(method, json!({"name": "x"}));
            assert_error(
                &reply,
                &[-32602, -32600, -32601],
                &format!("{bin} {method}"),
            );
        }
        let pong = server.request("ping", json!({}));
        assert!(pong.get("result").is_some(), "{bin}: {pong}");
        server.initialize();
        assert!(!server.list_tools().is_empty(), "{bin}");
        assert_eq!(server.close().code(), Some(0), "{bin}");
    }
}

#[test]
fn notifications_and_stray_answers_before_initialize_are_ignored() {
    let early = [
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
        json!({"jsonrpc": "2.0", "method": "notifications/whatever"}),
        json!({"jsonrpc": "2.0", "id": 99, "result": {}}),
        json!({"jsonrpc": "2.0", "id": 98, "error": {"code": -1, "message": "no"}}),
    ];
    for bin in bins() {
        let dir = TempDir::new("fuzz-early");
        let mut server = Server::spawn_raw(bin, &dir.db_path(), &[]);
        for message in &early {
            server.send_line(&message.to_string());
        }
        assert_eq!(
            server.read_message_within(Duration::from_millis(300)),
            None,
            "{bin}: a notification or a stray answer is never answered"
        );
        let init = server.initialize();
        assert!(init["serverInfo"]["name"].is_string(), "{bin}: {init}");
        assert!(!server.list_tools().is_empty(), "{bin}");
        assert_eq!(server.close().code(), Some(0), "{bin}");
    }
}
