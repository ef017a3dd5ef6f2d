//! Tidy: the dependency arrows of ARCHITECTURE.md, checked on the source itself.
//!
//! Each rule names where a thing may appear; every code line of the workspace's Rust sources is
//! checked against every rule (comment lines are skipped, so docs may talk about anything). Two
//! rules read whole files: every module opens with its `//!` contract, and no file of the library
//! holds more than 700 lines of code. A rule's test below also feeds it a line or a file that
//! breaks it, so a rule that can no longer fail is noticed.

use std::path::{Path, PathBuf};

use clawboo_tests::workspace_root;

/// Where a source file sits in the architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layer {
    /// A bin's `main.rs`: reads nothing but `internal::cli` and `ServerKind`.
    Bin,
    /// clawboo-core's examples and integration tests: programs over the public API only.
    Client,
    /// `cli/`: what the bins run (arguments, printing, exit codes).
    FrontDoor,
    /// `servers/`: tools declared with `mcp` over repositories.
    Servers,
    /// `mcp/`: the only module that touches rmcp.
    Mcp,
    /// `db`, `schema` and the repositories that own tables.
    Repository,
    /// Modules every layer may use and that use only each other (`binding`, `blocking`, `args`,
    /// `scrub`, `log`, `http`, `signature`, `attach`: [`LEAVES`]).
    Leaf,
    /// `xtask` and the test crate: automation, free to print.
    Tooling,
    /// clawboo-core's `lib.rs`: declares the modules and re-exports the public API from any layer.
    Root,
}

/// The layer of `path` (relative to the workspace root), and whether it is test code.
fn classify(path: &str) -> (Layer, bool) {
    let test =
        path.ends_with("/tests.rs") || path.contains("/tests/") || path.starts_with("tests/");
    let layer = if path.starts_with("xtask/") || path.starts_with("tests/") {
        Layer::Tooling
    } else if path.starts_with("crates/clawboo-core/examples/")
        || path.starts_with("crates/clawboo-core/tests/")
    {
        Layer::Client
    } else if let Some(rest) = path.strip_prefix("crates/clawboo-core/src/") {
        let top = rest.split(['/', '.']).next().unwrap_or("");
        match top {
            "lib" => Layer::Root,
            "cli" | "host" => Layer::FrontDoor,
            "servers" => Layer::Servers,
            "mcp" => Layer::Mcp,
            "db" | "schema" | "board" | "memory" | "broker" | "teamchat" | "clawbrain" => {
                Layer::Repository
            }
            _ => Layer::Leaf,
        }
    } else {
        Layer::Bin
    };
    (layer, test)
}

/// One broken rule: where, and which rule.
#[derive(Debug, PartialEq, Eq)]
struct Violation {
    path: String,
    line: usize,
    rule: &'static str,
}

/// Whether `code` holds an SQL statement in a string (the statement keywords the repositories use).
fn has_sql(code: &str) -> bool {
    const STATEMENTS: [&str; 8] = [
        "SELECT ",
        "INSERT INTO",
        "INSERT OR",
        "DELETE FROM",
        "CREATE TABLE",
        "CREATE INDEX",
        "CREATE VIRTUAL",
        "ALTER TABLE",
    ];
    code.contains('"') && STATEMENTS.iter().any(|s| code.contains(s))
        || code.contains("UPDATE ") && code.contains(" SET ")
}

/// The top-level modules of clawboo-core that every layer may use. A leaf imports only other
/// leaves, so no chain of imports (`attach` → `signature` → `db`) can lead from a leaf to a layer
/// above it.
const LEAVES: [&str; 8] = [
    "binding",
    "blocking",
    "args",
    "scrub",
    "log",
    "http",
    "signature",
    "attach",
];

/// The top-level modules `code` names through `crate::` (`crate::db::new_id()` → `db`;
/// `crate::{scrub, log}` → both).
fn crate_modules(code: &str) -> Vec<&str> {
    let ident = |s: &str| -> usize {
        s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(s.len())
    };
    let mut found = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            for item in group.split(',').map(str::trim) {
                found.push(&item[..ident(item)]);
            }
        } else {
            found.push(&rest[..ident(rest)]);
        }
    }
    found.retain(|m| !m.is_empty() && *m != "self");
    found
}

fn imports(code: &str, module: &str) -> bool {
    let crate_path = format!("crate::{module}");
    code.contains(&crate_path) && !code.contains(&format!("{crate_path}_"))
}

/// The rules one code line of `path` breaks.
fn check_line(path: &str, code: &str) -> Vec<&'static str> {
    let (layer, test) = classify(path);
    let mut broken = Vec::new();
    let mut rule = |holds: bool, name: &'static str| {
        if !holds {
            broken.push(name);
        }
    };
    let uses_rmcp = code.contains("rmcp::") || code.contains("use rmcp");
    rule(
        !uses_rmcp || layer == Layer::Mcp,
        "rmcp only inside clawboo-core's mcp/",
    );
    rule(
        !has_sql(code) || layer == Layer::Repository || test || layer == Layer::Tooling,
        "SQL only in db, schema and the repositories",
    );
    let prints = ["print!(", "println!(", "eprint!(", "eprintln!("]
        .iter()
        .any(|m| code.contains(m));
    rule(
        !prints
            || matches!(
                layer,
                Layer::Bin | Layer::FrontDoor | Layer::Tooling | Layer::Client
            )
            || path.ends_with("src/log.rs")
            || test,
        "print! only in the front doors (bins, cli, xtask) and log",
    );
    if layer == Layer::Repository && !test {
        rule(
            !(imports(code, "cli") || imports(code, "servers") || imports(code, "mcp")),
            "repositories never import cli, servers or mcp",
        );
    }
    if path.starts_with("crates/clawboo-core/src/db/") {
        let repositories = ["board", "memory", "broker", "teamchat", "clawbrain"];
        rule(
            !repositories.iter().any(|r| imports(code, r)),
            "db imports no repository (the schema list lives outside db)",
        );
    }
    if layer == Layer::Leaf && !test {
        rule(
            crate_modules(code).iter().all(|m| LEAVES.contains(m)),
            "leaf modules (binding, scrub, log, http, signature, attach) import only other leaves",
        );
    }
    if layer == Layer::Servers && !test {
        rule(
            !code.contains("rusqlite"),
            "servers never touch rusqlite (repositories do)",
        );
    }
    if layer == Layer::Bin {
        let reaches_in = code.contains("clawboo_core::")
            && !code.contains("clawboo_core::internal::cli")
            && !code.contains("clawboo_core::ServerKind");
        rule(
            !reaches_in,
            "bins use only clawboo_core::internal::cli and ServerKind",
        );
    }
    if layer == Layer::Client {
        rule(
            !code.contains("clawboo_core::internal"),
            "examples and clawboo-core's tests use the public API only",
        );
    }
    broken
}

/// The rules broken anywhere in `text`, the contents of `path`. A `#[cfg(test)] mod … {` block
/// (the tree keeps inline test modules at the end of a file) is test code to the end of the file.
fn check_file(path: &str, text: &str) -> Vec<Violation> {
    let mut found = Vec::new();
    let mut in_test_module = false;
    let mut after_cfg_test = false;
    for (index, line) in text.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        if after_cfg_test && code.starts_with("mod ") && code.ends_with('{') {
            in_test_module = true;
        }
        after_cfg_test = code == "#[cfg(test)]";
        let effective_path = if in_test_module {
            format!("{path}/tests.rs")
        } else {
            path.to_owned()
        };
        for rule in check_line(&effective_path, code) {
            found.push(Violation {
                path: path.to_owned(),
                line: index + 1,
                rule,
            });
        }
    }
    found
}

/// Whether `path` holds errors a client reads (tool-errors, REST bodies, operator output).
fn client_facing(path: &str) -> bool {
    [
        "servers/",
        "board/",
        "memory/mod.rs",
        "teamchat/",
        "clawbrain/",
        "broker/",
    ]
    .iter()
    .any(|dir| path.contains(&format!("crates/clawboo-core/src/{dir}")))
        && !path.ends_with("tests.rs")
}

/// The `#[error(…)]` texts of `text` that carry no `Wire:` tag: neither in their variant's doc
/// comment nor in their enum's. A tag says whose contract the text is (`Wire: reference` — keep
/// it byte for byte, detail may only be appended — or `Wire: ours`).
fn untagged_errors(path: &str, text: &str) -> Vec<Violation> {
    let mut found = Vec::new();
    let mut doc_tagged = false;
    let mut enum_tagged = false;
    for (index, line) in text.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with("#[cfg(test)]") {
            break;
        }
        if code.starts_with("///") {
            doc_tagged |= code.contains("Wire:");
            continue;
        }
        if code.starts_with("pub enum")
            || code.starts_with("enum")
            || code.starts_with("pub(crate) enum")
        {
            enum_tagged = doc_tagged;
        }
        let is_error_text =
            code.starts_with("#[error(") && !code.starts_with("#[error(transparent)]");
        if is_error_text && !(doc_tagged || enum_tagged) {
            found.push(Violation {
                path: path.to_owned(),
                line: index + 1,
                rule: "a client-facing error text says whose contract it is (Wire: reference | ours)",
            });
        }
        if !code.starts_with("#[") {
            doc_tagged = false;
        }
    }
    found
}

fn rust_sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() && name != "target" && !name.to_string_lossy().starts_with('.') {
            rust_sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_tree_keeps_the_dependency_arrows() {
    let root = workspace_root();
    let mut files = Vec::new();
    for top in ["crates", "xtask", "tests"] {
        rust_sources(&root.join(top), &mut files);
    }
    assert!(files.len() > 50, "found only {} sources", files.len());
    let mut violations = Vec::new();
    for file in &files {
        let relative = file
            .strip_prefix(&root)
            .expect("under the root")
            .to_string_lossy()
            .replace('\\', "/");
        if relative == "tests/tests/tidy.rs" {
            continue;
        }
        let text = std::fs::read_to_string(file).expect("readable source");
        violations.extend(check_file(&relative, &text));
        if client_facing(&relative) {
            violations.extend(untagged_errors(&relative, &text));
        }
    }
    let report: Vec<String> = violations
        .iter()
        .map(|v| format!("{}:{}: {}", v.path, v.line, v.rule))
        .collect();
    assert!(
        report.is_empty(),
        "the arrows are broken:\n{}",
        report.join("\n")
    );
}

#[test]
fn an_error_text_without_a_wire_tag_is_reported() {
    let path = "crates/clawboo-core/src/servers/tasks.rs";
    let untagged = "/// A refusal.\n#[derive(thiserror::Error)]\npub enum E {\n    /// Gone.\n    #[error(\"gone\")]\n    Gone,\n}";
    assert_eq!(untagged_errors(path, untagged).len(), 1);
    let by_variant = untagged.replace("/// Gone.", "/// Gone. Wire: ours.");
    assert!(untagged_errors(path, &by_variant).is_empty());
    let by_enum = untagged.replace("/// A refusal.", "/// A refusal. Wire: reference.");
    assert!(untagged_errors(path, &by_enum).is_empty());
    assert!(!client_facing("crates/clawboo-core/src/db/mod.rs"));
}

/// Each rule, fed one line that breaks it, reports it; the same line where it belongs does not.
#[test]
fn every_rule_fails_on_a_line_that_breaks_it() {
    let cases: [(&str, &str, &str); 9] = [
        (
            "crates/clawboo-core/src/board/mod.rs",
            "use crate::cli::open_db;",
            "repositories never import cli, servers or mcp",
        ),
        (
            "crates/clawboo-core/src/servers/tasks.rs",
            "use rmcp::model::Tool;",
            "rmcp only inside clawboo-core's mcp/",
        ),
        (
            "crates/clawboo-core/src/servers/tasks.rs",
            r#"conn.execute("DELETE FROM tasks", [])"#,
            "SQL only in db, schema and the repositories",
        ),
        (
            "crates/clawboo-core/src/broker/operator.rs",
            r#"println!("{row}");"#,
            "print! only in the front doors (bins, cli, xtask) and log",
        ),
        (
            "crates/clawboo-core/src/db/watch.rs",
            "use crate::board::SCHEMA;",
            "db imports no repository (the schema list lives outside db)",
        ),
        (
            "crates/clawboo-core/src/scrub/mod.rs",
            "use crate::memory::Memory;",
            "leaf modules (binding, scrub, log, http, signature, attach) import only other leaves",
        ),
        (
            "crates/clawboo-core/src/servers/memory.rs",
            "use rusqlite::params;",
            "servers never touch rusqlite (repositories do)",
        ),
        (
            "crates/clawboo-mcp-memory/src/main.rs",
            "use clawboo_core::memory::Memory;",
            "bins use only clawboo_core::internal::cli and ServerKind",
        ),
        (
            "crates/clawboo-core/examples/supervisor.rs",
            "use clawboo_core::internal::scrub;",
            "examples and clawboo-core's tests use the public API only",
        ),
    ];
    for (path, line, rule) in cases {
        assert_eq!(check_line(path, line), [rule], "{path}: {line}");
    }
    let allowed = [
        (
            "crates/clawboo-core/src/mcp/stdio.rs",
            "use rmcp::ServiceExt;",
        ),
        (
            "crates/clawboo-core/src/board/mod.rs",
            r#"tx.execute("DELETE FROM tasks", [])"#,
        ),
        (
            "crates/clawboo-core/src/cli/mod.rs",
            r#"println!("{text}");"#,
        ),
        (
            "crates/clawboo-mcp-memory/src/main.rs",
            "use clawboo_core::internal::cli::{self, BinInfo};",
        ),
        (
            "crates/clawboo-core/examples/http_host.rs",
            r#"println!("listening on {addr}");"#,
        ),
        (
            "crates/clawboo-core/src/servers/memory.rs",
            "// rmcp is never named here",
        ),
    ];
    for (path, line) in allowed {
        assert!(
            check_file(path, line).is_empty(),
            "{path}: {line} should be allowed"
        );
    }
}

/// A leaf that imports a module which is not a leaf (the `db` in `attach` → `signature` → `db`)
/// is reported, whatever that module is; a leaf that imports another leaf is not.
#[test]
fn a_leaf_reaching_below_the_leaves_through_another_leaf_is_reported() {
    let rule =
        "leaf modules (binding, scrub, log, http, signature, attach) import only other leaves";
    for line in [
        "let temp = path.with_extension(format!(\"key.{}\", crate::db::new_id()));",
        "use crate::{binding::Binding, schema::open};",
        "use crate::clawbrain::Brain;",
    ] {
        assert_eq!(
            check_line("crates/clawboo-core/src/signature.rs", line),
            [rule],
            "{line}"
        );
    }
    for line in [
        "use crate::signature::{BindingKey, KEY_FILE};",
        "use crate::binding::Binding;",
        "let masked = crate::scrub::scrub_secrets(text);",
    ] {
        assert!(
            check_line("crates/clawboo-core/src/attach.rs", line).is_empty(),
            "{line}"
        );
    }
    assert_eq!(crate_modules("crate::{scrub, log::warn}"), ["scrub", "log"]);
}

/// Whether `path` is a unit-test file: the body of its parent's `#[cfg(test)] mod tests;`, which
/// the parent's contract covers.
fn unit_test_file(path: &str) -> bool {
    path.ends_with("/tests.rs")
}

/// A module that does not open with its `//!` contract (what it owns, guarantees, must never do).
fn missing_contract(path: &str, text: &str) -> Option<Violation> {
    (!unit_test_file(path) && !text.starts_with("//!")).then(|| Violation {
        path: path.to_owned(),
        line: 1,
        rule: "every module opens with its //! contract",
    })
}

/// The most lines of code one file of clawboo-core's `src` may hold.
const MAX_CODE_LINES: usize = 700;

/// The lines of code in `text`: not blank, not a comment, not in the inline test module that
/// closes a file (`#[cfg(test)]` then `mod … {`, to the end of the file, as [`check_file`] reads it).
fn code_lines(text: &str) -> usize {
    let mut count = 0;
    let mut after_cfg_test = false;
    for line in text.lines() {
        let code = line.trim();
        if after_cfg_test && code.starts_with("mod ") && code.ends_with('{') {
            // The attribute belongs to the test module too.
            return count - 1;
        }
        after_cfg_test = code == "#[cfg(test)]";
        if !code.is_empty() && !code.starts_with("//") {
            count += 1;
        }
    }
    count
}

/// A file of clawboo-core's `src` over [`MAX_CODE_LINES`] lines of code: more than one concern.
/// Unit-test files and generated corpora do not count.
fn oversized(path: &str, text: &str) -> Option<Violation> {
    let counted = path.starts_with("crates/clawboo-core/src/")
        && !unit_test_file(path)
        && !path.contains("/corpus/");
    let lines = code_lines(text);
    (counted && lines > MAX_CODE_LINES).then(|| Violation {
        path: path.to_owned(),
        line: lines,
        rule: "no file of clawboo-core's src holds over 700 lines of code (line = its count)",
    })
}

/// Every Rust source of the workspace with its path relative to the root.
fn workspace_sources() -> Vec<(String, String)> {
    let root = workspace_root();
    let mut files = Vec::new();
    for top in ["crates", "xtask", "tests"] {
        rust_sources(&root.join(top), &mut files);
    }
    assert!(files.len() > 50, "found only {} sources", files.len());
    files
        .iter()
        .map(|file| {
            let relative = file
                .strip_prefix(&root)
                .expect("under the root")
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(file).expect("readable source");
            (relative, text)
        })
        .collect()
}

fn report(violations: &[Violation]) -> String {
    violations
        .iter()
        .map(|v| format!("{}:{}: {}", v.path, v.line, v.rule))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_module_opens_with_its_contract() {
    let missing: Vec<Violation> = workspace_sources()
        .iter()
        .filter_map(|(path, text)| missing_contract(path, text))
        .collect();
    assert!(missing.is_empty(), "{}", report(&missing));
}

#[test]
fn no_file_of_the_library_holds_more_than_one_concern_by_size() {
    let oversized: Vec<Violation> = workspace_sources()
        .iter()
        .filter_map(|(path, text)| oversized(path, text))
        .collect();
    assert!(oversized.is_empty(), "{}", report(&oversized));
}

#[test]
fn a_module_without_a_contract_or_with_too_much_code_is_reported() {
    let path = "crates/clawboo-core/src/board/mod.rs";
    assert!(missing_contract(path, "use std::fmt;\n").is_some());
    assert!(missing_contract(path, "//! The board.\nuse std::fmt;\n").is_none());
    assert!(
        missing_contract("crates/clawboo-core/src/board/tests.rs", "use super::*;\n").is_none()
    );
    assert!(missing_contract("xtask/src/dist.rs", "\n//! Late.\n").is_some());

    let code = "let x = 1;\n".repeat(MAX_CODE_LINES);
    let padded =
        format!("//! Docs.\n\n// A comment.\n{code}#[cfg(test)]\nmod tests {{\n{code}}}\n");
    assert_eq!(code_lines(&padded), MAX_CODE_LINES);
    assert!(oversized(path, &padded).is_none());
    let over = format!("{code}let y = 2;\n");
    assert_eq!(
        oversized(path, &over).map(|v| v.line),
        Some(MAX_CODE_LINES + 1)
    );
    assert!(oversized("crates/clawboo-core/src/board/tests.rs", &over).is_none());
    assert!(oversized("xtask/src/dist.rs", &over).is_none());
}
