//! Every registered server, built through the registry: a new entry is covered without an edit.

use std::collections::HashSet;

use super::*;
use crate::binding::{Binding, Scope};
use crate::db::new_id;

/// A scratch folder for one test (a database file and a vault), removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Self {
        let dir = std::env::temp_dir().join(format!("clawboo-registry-{}", new_id()));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn context(&self) -> Context {
        Context::over_file(self.0.join("clawboo.db")).with_vault(Some(self.0.join("vault")))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A scope naming every field, so each server takes exactly its own.
fn full_scope() -> Scope {
    Scope {
        team_id: Some("team-registry".into()),
        agent_id: Some("agent-registry".into()),
        tenant_id: Some("tenant-registry".into()),
    }
}

/// The tools `server` lists, without the optional ones this process may enable.
fn listed_without_optional(entry: &Entry, server: &McpServer) -> Vec<&'static str> {
    let optional: Vec<&str> = entry.optional_tools.iter().map(|(t, _)| *t).collect();
    server
        .tool_names()
        .into_iter()
        .filter(|t| !optional.contains(t))
        .collect()
}

#[test]
fn every_registered_server_builds_with_its_name_tools_and_binding_fields() {
    let scratch = Scratch::new();
    let context = scratch.context();
    for entry in entries() {
        let kind = entry.kind;
        assert_eq!(super::entry(kind).kind, kind, "entry({kind}) is its own");
        assert!(context.can_build(entry), "{kind}");
        let unbound = build(
            kind,
            &context,
            &Binding::from_scope(kind, &Scope::default()),
        )
        .unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert_eq!(unbound.name(), entry.server_name, "{kind}");
        assert_eq!(
            listed_without_optional(entry, &unbound),
            entry.tools,
            "{kind}: the tools it lists, in order"
        );
        for (tool, enabled_by) in entry.optional_tools {
            assert!(
                !enabled_by.is_empty(),
                "{kind}: {tool} names what enables it"
            );
            assert!(!entry.tools.contains(tool), "{kind}: {tool} listed twice");
        }
        unbound.close();

        // The binding fields: a scope naming every field binds exactly the kind's own, over the
        // environment and the URL alike, and the server builds bound.
        let bound = Binding::from_scope(kind, &full_scope());
        let params: Vec<&str> = bound.query_pairs().iter().map(|(k, _)| *k).collect();
        let wanted: Vec<&str> = kind.fields().iter().map(|f| f.param).collect();
        assert_eq!(params, wanted, "{kind}: binding fields");
        assert_eq!(
            Binding::from_query(kind, &bound.to_query()),
            bound,
            "{kind}"
        );
        let server = build(kind, &context, &bound).unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert_eq!(server.name(), entry.server_name, "{kind} bound");
        server.close();
    }
}

#[test]
fn names_bins_and_stores_are_consistent() {
    let mut names = HashSet::new();
    let mut server_names = HashSet::new();
    for entry in entries() {
        assert!(names.insert(entry.kind.as_str()), "{}", entry.kind);
        assert!(
            server_names.insert(entry.server_name),
            "{}",
            entry.server_name
        );
        assert!(entry.bin.starts_with("clawboo-mcp-"), "{}", entry.bin);
        assert!(
            bins().contains(&entry.bin),
            "{}: its bin {} serves a server of its own",
            entry.kind,
            entry.bin
        );
        assert!(!entry.summary.is_empty() && !entry.summary.contains('\n'));
        if let Store::Shared(part) = entry.store {
            assert!(
                crate::schema::COMPONENTS
                    .iter()
                    .any(|c| c.component == part.component),
                "{}: its schema part {} is listed in crate::schema",
                entry.kind,
                part.component
            );
        }
    }
    assert_eq!(
        bins(),
        [
            "clawboo-mcp-tasks",
            "clawboo-mcp-memory",
            "clawboo-mcp-tools",
            "clawboo-mcp-teamchat"
        ]
    );
    let memory_bin: Vec<ServerKind> = of_bin("clawboo-mcp-memory").map(|e| e.kind).collect();
    assert_eq!(memory_bin, [ServerKind::Memory, ServerKind::ClawBrain]);
}

#[test]
fn a_vault_server_needs_a_vault_and_a_stdio_context_gives_its_database_once() {
    let without = Context::without_db();
    assert!(!without.can_build(entry(ServerKind::ClawBrain)));
    assert!(!without.can_build(entry(ServerKind::Tasks)));
    let err = build(
        ServerKind::ClawBrain,
        &without,
        &Binding::from_scope(ServerKind::ClawBrain, &Scope::default()),
    )
    .unwrap_err();
    assert!(err.to_string().contains("--vault"), "{err}");

    let once = Context::over_db(Db::open_in_memory().unwrap());
    let unbound = Binding::from_scope(ServerKind::Tasks, &Scope::default());
    assert!(build(ServerKind::Tasks, &once, &unbound).is_ok());
    assert!(matches!(
        build(ServerKind::Tasks, &once, &unbound),
        Err(BuildError::NoDb)
    ));
}

/// README's table of servers may show counts only because this test holds them to the registry:
/// each row names a server, and its `(N tools…)` is the entry's, `N prompt` its prompts, and
/// `M with VAR` its tools with the optional ones.
#[test]
fn readme_table_counts_match_the_registry() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let mut seen = Vec::new();
    for row in readme.lines().filter(|l| l.starts_with("| ")) {
        let Some(entry) = entries()
            .find(|e| row.starts_with(&format!("| {} (`{}`)", e.kind.as_str(), e.server_name)))
        else {
            continue;
        };
        seen.push(entry.kind);
        let counts = row.rsplit_once('(').map(|(_, c)| c).unwrap_or_default();
        assert!(
            counts.starts_with(&format!("{} tools", entry.tools.len())),
            "{}: {row}",
            entry.kind
        );
        if entry.prompts.is_empty() {
            assert!(!counts.contains("prompt"), "{row}");
        } else {
            assert!(
                counts.contains(&format!("{} prompt", entry.prompts.len())),
                "{row}"
            );
        }
        for (_, enabled_by) in entry.optional_tools {
            let with = entry.tools.len() + entry.optional_tools.len();
            assert!(
                counts.contains(&format!("{with} with `{enabled_by}`")),
                "{row}"
            );
        }
    }
    assert_eq!(
        seen,
        ServerKind::ALL,
        "README's table has a row per server, in order"
    );
}
