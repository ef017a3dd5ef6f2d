//! Every bin against arguments a confused or hostile model might send: for every listed tool,
//! hundreds of argument objects made from the tool's own property names with values of every JSON
//! type (huge and negative numbers, floats, nulls, nested arrays and objects, long and odd
//! Unicode strings). Each call must come back as a result or a tool-error, never a dropped
//! connection, and the server must still answer afterwards.

use clawboo_tests::{BINS, Rng, Server, TempDir};
use serde_json::{Map, Value, json};

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
    for bin in BINS {
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
