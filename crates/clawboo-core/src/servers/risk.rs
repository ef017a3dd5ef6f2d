//! How the broker's risk levels read as MCP tool annotations: the one mapping the tools server
//! declares its tools with, so a tool's hints can never disagree with the risk the broker acts on
//! (a destructive or external tool waits for a person; its hints say why).
//!
//! Owns: [`annotations`]. Guarantees: no brokered tool is read-only (every brokered call writes its
//! audit rows, whatever the tool does); only an external tool is open-world; only a destructive one
//! is destructive; none is idempotent (each call is audited, and may be approved, anew).
//!
//! Must never: look at anything but the tool's name and risk (the broker owns what a risk means).

use crate::broker::builtins::Risk;
use crate::mcp::Annotations;

/// The annotations of the brokered tool `name` of risk `risk`, titled after its name
/// (`delete_path` → `Delete path`).
pub(crate) fn annotations(name: &str, risk: Risk) -> Annotations {
    let title = title_of(name);
    match risk {
        // echo and note: the call adds audit rows (and note a note), never touches anything else.
        Risk::Safe => Annotations::additive(title),
        // delete_path: may remove what is there.
        Risk::Destructive => Annotations::destructive(title),
        // web_search: reaches a third party's service on the web.
        Risk::External => Annotations::additive(title).open_world(),
    }
}

/// `snake_case` as words, the first capitalised.
fn title_of(name: &str) -> String {
    let words = name.replace('_', " ");
    let mut chars = words.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::broker::builtins;

    #[test]
    fn every_builtin_reads_as_its_risk() {
        let read: Vec<(&str, Annotations)> = builtins::ALL
            .into_iter()
            .map(|info| (info.name, annotations(info.name, info.risk)))
            .collect();
        assert_eq!(
            read,
            [
                ("echo", Annotations::additive("Echo")),
                ("note", Annotations::additive("Note")),
                (
                    "web_search",
                    Annotations::additive("Web search").open_world()
                ),
                ("delete_path", Annotations::destructive("Delete path")),
            ]
        );
    }

    #[test]
    fn titles_are_the_name_in_words() {
        assert_eq!(title_of("delete_path"), "Delete path");
        assert_eq!(title_of("échange_x"), "Échange x");
        assert_eq!(title_of(""), "");
    }
}
