//! `MEMORY.md`: the digest a runtime loads at the start of a session (spec §1.5–§1.6).
//!
//! Owns the budget rule and the rendering. Guarantees: pinned memories come first, then by credit
//! score; an entry that would overflow the budget is skipped and scanning continues (a later,
//! smaller one can still fit); sections are People, Projects, Preferences, Recent Episodes, each
//! only when non-empty. Must never: touch SQL or the file system (the brain writes the file).

use super::MemoryType;
use super::engine::FileRow;

/// Picks, in the given priority order, the bodies that fit `max_tokens` (a token is 4 UTF-16
/// units, rounded up); empty bodies are never picked. Returns their indexes.
pub fn allocate_budget(bodies: &[&str], max_tokens: i64) -> Vec<usize> {
    if max_tokens <= 0 {
        return Vec::new();
    }
    let mut used = 0i64;
    let mut picked = Vec::new();
    for (index, body) in bodies.iter().enumerate() {
        let units = body.encode_utf16().count() as i64;
        let tokens = (units + 3) / 4;
        if tokens == 0 || used + tokens > max_tokens {
            continue;
        }
        used += tokens;
        picked.push(index);
    }
    picked
}

/// The sections, in order.
const SECTIONS: [&str; 4] = ["People", "Projects", "Preferences", "Recent Episodes"];

/// The index in [`SECTIONS`] a memory is rendered under; other entity categories are not rendered
/// (they still use budget), as in the reference.
fn section_of(row: &FileRow) -> Option<usize> {
    if row.fm.kind == MemoryType::Episode {
        return Some(3);
    }
    ["entity-people-", "entity-projects-", "entity-preferences-"]
        .iter()
        .position(|p| row.fm.id.starts_with(p))
}

/// The text of `MEMORY.md` for `rows` (already in priority order), within `budget` tokens.
pub fn render(rows: &[(FileRow, Option<f64>)], budget: i64, initial_score: f64) -> String {
    let bodies: Vec<&str> = rows.iter().map(|(r, _)| r.body.as_str()).collect();
    let picked = allocate_budget(&bodies, budget);
    let mut lines = vec!["# MEMORY".to_owned(), String::new()];
    let mut any = false;
    for (section, title) in SECTIONS.iter().enumerate() {
        let members: Vec<&(FileRow, Option<f64>)> = picked
            .iter()
            .map(|&i| &rows[i])
            .filter(|(r, _)| section_of(r) == Some(section))
            .collect();
        if members.is_empty() {
            continue;
        }
        any = true;
        lines.push(format!("## {title}"));
        lines.push(String::new());
        for (row, score) in members {
            lines.push(format!("### {}", row.name));
            lines.push(format!(
                "<!-- score: {:.3} -->",
                score.unwrap_or(initial_score)
            ));
            lines.push(row.body.trim().to_owned());
            lines.push(String::new());
        }
    }
    if !any {
        lines.push("No memories yet. I'll learn about you as we interact.".to_owned());
        lines.push(String::new());
    }
    lines.join("\n") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_skips_what_overflows_and_keeps_scanning() {
        let a = "a".repeat(200);
        let b = "b".repeat(120);
        let c = "c".repeat(160);
        // Priority (score) order a 0.9, c 0.8, b 0.7: c overflows (90 > 80), b fits exactly.
        assert_eq!(allocate_budget(&[&a, &c, &b], 80), [0, 2]);
        assert!(allocate_budget(&[&a], 0).is_empty());
        assert!(allocate_budget(&["", "x"], 10) == [1]);
    }

    #[test]
    fn empty_digest_is_the_reference_text() {
        assert_eq!(
            render(&[], 5000, 0.5),
            "# MEMORY\n\nNo memories yet. I'll learn about you as we interact.\n\n"
        );
    }
}
