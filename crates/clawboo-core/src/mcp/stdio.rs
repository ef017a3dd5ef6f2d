//! Serving a [`Server`] over stdio: newline-delimited JSON-RPC on stdin/stdout.
//!
//! Owns: the pumps between the process's standard streams and rmcp, and shutdown.
//! Guarantees: stdout carries only JSON-RPC messages, one per line, never interleaved; a line that
//! is not JSON gets a JSON-RPC parse error (`-32700`, id `null`) and a `tools/call` whose params
//! lack a tool name or carry non-object arguments gets invalid params (`-32602`, where rmcp would
//! answer "method not found"), and the session goes on; the
//! server returns cleanly on stdin EOF and on SIGTERM, after in-flight handlers have finished their
//! database work (each handler's writes are transactions, so none is left half-done).
//!
//! Must never: write anything but protocol messages to stdout.

use std::sync::Arc;

use rmcp::ServiceExt;
use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

use super::Server;
use crate::log;

/// Errors that end a stdio session abnormally.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The MCP session could not be set up (for example, the first message was not `initialize`).
    #[error("MCP session could not start: {0}")]
    Start(String),
    /// Reading stdin or writing stdout failed.
    #[error("stdio failed: {0}")]
    Io(#[from] std::io::Error),
}

type SharedOut = Arc<Mutex<Box<dyn AsyncWrite + Send + Unpin>>>;

async fn write_line(out: &SharedOut, line: &[u8]) -> std::io::Result<()> {
    let mut out = out.lock().await;
    out.write_all(line).await?;
    out.write_all(b"\n").await?;
    out.flush().await
}

/// The JSON-RPC answer to a line that is not JSON.
fn parse_error_line(detail: &serde_json::Error) -> Vec<u8> {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": -32700, "message": format!("Parse error: {detail}") }
    })
    .to_string()
    .into_bytes()
}

/// The JSON-RPC answer to a `tools/call` request whose params do not have its shape (`name` a
/// string, `arguments` an object if present), or `None` when the message is anything else.
fn invalid_call_params(message: &serde_json::Value) -> Option<Vec<u8>> {
    use serde_json::Value;
    if message.get("method")?.as_str()? != "tools/call" {
        return None;
    }
    let id = message.get("id")?;
    let problem = match message.get("params") {
        Some(Value::Object(params)) => match (params.get("name"), params.get("arguments")) {
            (Some(Value::String(_)), None | Some(Value::Object(_) | Value::Null)) => return None,
            (Some(Value::String(_)), Some(_)) => "arguments must be an object",
            _ => "name must be a string naming the tool to call",
        },
        _ => "params must be an object with the tool's name",
    };
    let answer = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": -32602, "message": format!("Invalid params: {problem}") }
    });
    Some(answer.to_string().into_bytes())
}

/// Serves `server` on this process's stdin and stdout until stdin closes or SIGTERM arrives.
///
/// Stdin is read on a plain thread of its own: a read that never returns cannot then hold up the
/// runtime's shutdown.
pub async fn serve<S: Send + Sync + 'static>(server: Server<S>) -> Result<(), ServeError> {
    let (lines_tx, lines_rx) = tokio::sync::mpsc::channel::<Vec<u8>>(64);
    std::thread::Builder::new()
        .name("stdin-reader".into())
        .spawn(move || {
            let mut stdin = std::io::stdin().lock();
            loop {
                let mut line = Vec::new();
                match std::io::BufRead::read_until(&mut stdin, b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if lines_tx.blocking_send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        })?;
    serve_lines(server, lines_rx, tokio::io::stdout()).await
}

/// Serves `server` on incoming lines and an output stream. The session ends when the line channel
/// closes (stdin EOF), or on SIGTERM.
pub async fn serve_lines<S, W>(
    server: Server<S>,
    mut input: tokio::sync::mpsc::Receiver<Vec<u8>>,
    output: W,
) -> Result<(), ServeError>
where
    S: Send + Sync + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let out: SharedOut = Arc::new(Mutex::new(Box::new(output)));
    let (rmcp_side, pump_side) = tokio::io::duplex(1 << 16);
    let (rmcp_read, rmcp_write) = tokio::io::split(rmcp_side);
    let (pump_read, mut pump_write) = tokio::io::split(pump_side);

    let inbound_out = Arc::clone(&out);
    let inbound = tokio::spawn(async move {
        while let Some(line) = input.recv().await {
            let text = line.trim_ascii();
            if text.is_empty() {
                continue;
            }
            let refusal = match serde_json::from_slice::<serde_json::Value>(text) {
                Ok(message) => invalid_call_params(&message),
                Err(e) => {
                    log::debug(&format!("unparsable input line: {e}"));
                    Some(parse_error_line(&e))
                }
            };
            if let Some(refusal) = refusal {
                if write_line(&inbound_out, &refusal).await.is_err() {
                    break;
                }
                continue;
            }
            let forwarded = async {
                pump_write.write_all(text).await?;
                pump_write.write_all(b"\n").await
            };
            if forwarded.await.is_err() {
                break;
            }
        }
        let _ = pump_write.shutdown().await;
    });

    let outbound_out = Arc::clone(&out);
    let outbound = tokio::spawn(async move {
        let mut lines = BufReader::new(pump_read);
        let mut line = Vec::new();
        loop {
            line.clear();
            match lines.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            if write_line(&outbound_out, line.trim_ascii_end())
                .await
                .is_err()
            {
                break;
            }
        }
    });

    let name = server.name();
    let session = async {
        match server.serve((rmcp_read, rmcp_write)).await {
            Ok(running) => {
                let _ = running.waiting().await;
                Ok(())
            }
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => {
                log::info(&format!("{name}: stdin closed before initialize"));
                Ok(())
            }
            Err(e) => Err(ServeError::Start(e.to_string())),
        }
    };
    let result = tokio::select! {
        r = session => r,
        _ = terminate_signal() => {
            log::info(&format!("{name}: SIGTERM received, shutting down"));
            Ok(())
        }
    };
    inbound.abort();
    let _ = outbound.await;
    log::info(&format!("{name}: stdio session ended"));
    result
}

#[cfg(unix)]
async fn terminate_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut s) => {
            s.recv().await;
        }
        Err(_) => std::future::pending().await,
    }
}

#[cfg(not(unix))]
async fn terminate_signal() {
    let _ = tokio::signal::ctrl_c().await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn answer(message: Value) -> Option<Value> {
        invalid_call_params(&message).map(|line| serde_json::from_slice(&line).unwrap())
    }

    #[test]
    fn a_tools_call_without_the_call_shape_is_invalid_params_naming_the_problem() {
        for (params, problem) in [
            (json!({"name": "x", "arguments": "str"}), "arguments"),
            (json!({"name": "x", "arguments": [1]}), "arguments"),
            (json!({"arguments": {}}), "name"),
            (json!({"name": 7}), "name"),
            (json!("params"), "params"),
        ] {
            let reply = answer(
                json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params}),
            )
            .unwrap_or_else(|| panic!("{params} passed"));
            assert_eq!(reply["error"]["code"], -32602);
            assert_eq!(reply["id"], 9);
            assert!(
                reply["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains(problem),
                "{reply}"
            );
        }
        let missing = answer(json!({"jsonrpc": "2.0", "id": "a", "method": "tools/call"})).unwrap();
        assert_eq!(missing["id"], "a");
    }

    #[test]
    fn well_formed_calls_and_other_messages_pass_through() {
        for message in [
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x", "arguments": {}}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x", "arguments": null}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": "odd"}),
            json!({"jsonrpc": "2.0", "method": "tools/call", "params": 3}),
            json!([1, 2]),
        ] {
            assert_eq!(answer(message.clone()), None, "{message}");
        }
    }
}
