//! Tool annotations: what calling a tool does to the world, told to clients as MCP's
//! `ToolAnnotations` (`title`, `readOnlyHint`, `destructiveHint`, `idempotentHint`,
//! `openWorldHint`), so a client can tell `get_task` from `delete_path` without asking its user.
//!
//! Owns: the vocabulary a server declares a tool's effect with ([`Annotations`]) and how it goes on
//! the wire (every hint is always sent, never left to the spec's defaults, and the title also goes
//! in the tool's own `title`). What the words mean here, so that every declaration is judged the
//! same way:
//! - **read-only**: a call writes nothing at all (no row, no file, no counter): the tests run every
//!   read-only tool on a store and check that nothing in it changed.
//! - **destructive** (only for tools that write): a call may overwrite or remove what is already
//!   there — content someone wrote, a record moved to a state it cannot leave — as opposed to
//!   only adding (a new row, file, version or post) or making a move the same tools undo.
//! - **idempotent** (only for tools that write): repeating the call with the same arguments has
//!   no further effect, so a client may retry it after a lost answer.
//! - **open world**: a call reaches outside this install (the web, a third party's service);
//!   a store of this project, embeddings included, is a closed world.
//!
//! Must never: know any domain (servers say which words fit their tools).

use rmcp::model::ToolAnnotations;

/// What calling one tool does to the world: a title for people, and MCP's four hints.
///
/// Built from one of three starting points, [`read_only`](Self::read_only),
/// [`additive`](Self::additive) and [`destructive`](Self::destructive), refined with
/// [`idempotent`](Self::idempotent) and [`open_world`](Self::open_world).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Annotations {
    title: String,
    read_only: bool,
    destructive: bool,
    idempotent: bool,
    open_world: bool,
}

impl Annotations {
    /// A tool that writes nothing: read-only, hence not destructive and idempotent.
    pub fn read_only(title: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: false,
        }
    }

    /// A tool that writes, but only adds (or makes a move its siblings undo); each call adds again.
    pub fn additive(title: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            read_only: false,
            destructive: false,
            idempotent: false,
            open_world: false,
        }
    }

    /// A tool that may overwrite or remove what is already there.
    pub fn destructive(title: impl Into<String>) -> Self {
        Self {
            destructive: true,
            ..Self::additive(title)
        }
    }

    /// Repeating the call with the same arguments has no further effect.
    pub fn idempotent(mut self) -> Self {
        self.idempotent = true;
        self
    }

    /// The call reaches outside this install (the web, a third party).
    pub fn open_world(mut self) -> Self {
        self.open_world = true;
        self
    }

    /// The title people read.
    pub fn title(&self) -> &str {
        &self.title
    }

    /// The hints as MCP sends them, every one of them set.
    pub(super) fn to_rmcp(&self) -> ToolAnnotations {
        ToolAnnotations::from_raw(
            Some(self.title.clone()),
            Some(self.read_only),
            Some(self.destructive),
            Some(self.idempotent),
            Some(self.open_world),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_hint_is_on_the_wire() {
        let wire = |a: Annotations| serde_json::to_value(a.to_rmcp()).unwrap();
        assert_eq!(
            wire(Annotations::read_only("Get a task")),
            json!({"title": "Get a task", "readOnlyHint": true, "destructiveHint": false,
                   "idempotentHint": true, "openWorldHint": false})
        );
        assert_eq!(
            wire(Annotations::additive("Post").open_world()),
            json!({"title": "Post", "readOnlyHint": false, "destructiveHint": false,
                   "idempotentHint": false, "openWorldHint": true})
        );
        assert_eq!(
            wire(Annotations::destructive("Delete").idempotent()),
            json!({"title": "Delete", "readOnlyHint": false, "destructiveHint": true,
                   "idempotentHint": true, "openWorldHint": false})
        );
    }
}
