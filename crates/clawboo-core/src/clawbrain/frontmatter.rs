//! The memory file format: a frontmatter block of `key: value` lines between `---` fences, then
//! the markdown body. A hand-written subset of YAML, exactly the one the reference writes and
//! reads (spec §1.3–§1.4); no YAML crate.
//!
//! Owns: [`render`] (the 7 keys in the reference's order) and [`parse`]. Guarantees: whatever
//! [`render`] writes, [`parse`] reads back unchanged; tags survive commas, quotes and unicode.
//! Tolerates hand edits the reference refuses: CRLF line endings, a byte-order mark, the legacy
//! flow list `[a, b]`. Must never: panic on any text.

use super::{BrainError, MemoryType};

/// The frontmatter of one memory file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frontmatter {
    /// `id`.
    pub id: String,
    /// `type`.
    pub kind: MemoryType,
    /// `category` (`YYYY-MM` for an episode).
    pub category: String,
    /// `tags`, in order.
    pub tags: Vec<String>,
    /// `created`, as written.
    pub created: String,
    /// `updated`, as written.
    pub updated: String,
    /// `pinned`.
    pub pinned: bool,
}

/// `tags: [...]` as the reference writes it: each tag JSON-encoded, joined by `", "`.
fn render_tags(tags: &[String]) -> String {
    let items: Vec<String> = tags
        .iter()
        .map(|t| serde_json::to_string(t).unwrap_or_else(|_| "\"\"".into()))
        .collect();
    format!("[{}]", items.join(", "))
}

/// The whole file: frontmatter, a blank line, the trimmed body, one trailing newline.
pub fn render(fm: &Frontmatter, body: &str) -> String {
    format!(
        "---\nid: {}\ntype: {}\ncategory: {}\ntags: {}\ncreated: {}\nupdated: {}\npinned: {}\n---\n\n{}\n",
        fm.id,
        fm.kind.as_str(),
        fm.category,
        render_tags(&fm.tags),
        fm.created,
        fm.updated,
        fm.pinned,
        body.trim()
    )
}

/// Reads a `tags` value: a JSON array of strings, else the legacy flow list, else nothing.
fn parse_tags(value: &str) -> Vec<String> {
    let value = value.trim();
    let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) else {
        return Vec::new();
    };
    if let Ok(serde_json::Value::Array(items)) = serde_json::from_str(value) {
        return items
            .into_iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
    }
    inner
        .split(',')
        .map(|t| {
            let t = t.trim();
            let t = t.strip_prefix(['"', '\'']).unwrap_or(t);
            t.strip_suffix(['"', '\'']).unwrap_or(t).to_owned()
        })
        .filter(|t| !t.is_empty())
        .collect()
}

/// Splits a memory file into its frontmatter and trimmed body.
pub fn parse(text: &str) -> Result<(Frontmatter, String), BrainError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let normalised;
    let text = if text.contains('\r') {
        normalised = text.replace("\r\n", "\n");
        normalised.as_str()
    } else {
        text
    };
    let rest = text
        .strip_prefix("---\n")
        .ok_or(BrainError::Frontmatter("Missing frontmatter block"))?;
    // The header ends at the first fence line; an empty header is a fence right away.
    let (header, body) = if let Some(body) = rest.strip_prefix("---\n") {
        ("", body)
    } else if rest == "---" {
        ("", "")
    } else {
        match rest.split_once("\n---\n") {
            Some(parts) => parts,
            None => rest
                .strip_suffix("\n---")
                .map(|h| (h, ""))
                .ok_or(BrainError::Frontmatter("Invalid frontmatter format"))?,
        }
    };
    let mut get = std::collections::HashMap::new();
    for line in header.lines() {
        if let Some((key, value)) = line.split_once(':')
            && !key.is_empty()
        {
            get.insert(key.trim().to_owned(), value.trim().to_owned());
        }
    }
    let required = |k: &str| -> Result<String, BrainError> {
        get.get(k)
            .filter(|v| !v.is_empty())
            .cloned()
            .ok_or(BrainError::Frontmatter("Incomplete frontmatter metadata"))
    };
    let id = required("id")?;
    let kind_text = required("type")?;
    let category = required("category")?;
    let created = required("created")?;
    let updated = required("updated")?;
    let pinned = required("pinned")?.eq_ignore_ascii_case("true");
    let kind = MemoryType::parse(&kind_text).ok_or(BrainError::InvalidType(kind_text))?;
    let tags = get.get("tags").map(|t| parse_tags(t)).unwrap_or_default();
    Ok((
        Frontmatter {
            id,
            kind,
            category,
            tags,
            created,
            updated,
            pinned,
        },
        body.trim().to_owned(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(tags: &[&str]) -> Frontmatter {
        Frontmatter {
            id: "entity-people-alice-chen".into(),
            kind: MemoryType::Entity,
            category: "people".into(),
            tags: tags.iter().map(|t| (*t).to_owned()).collect(),
            created: "2026-02-25T10:00:00.000Z".into(),
            updated: "2026-02-25T10:00:00.000Z".into(),
            pinned: false,
        }
    }

    #[test]
    fn render_writes_the_reference_layout() {
        let text = render(
            &sample(&["colleague", "ml-team"]),
            "  # Alice\n\n- ML engineer\n\n",
        );
        assert_eq!(
            text,
            "---\nid: entity-people-alice-chen\ntype: entity\ncategory: people\ntags: [\"colleague\", \"ml-team\"]\ncreated: 2026-02-25T10:00:00.000Z\nupdated: 2026-02-25T10:00:00.000Z\npinned: false\n---\n\n# Alice\n\n- ML engineer\n"
        );
        assert!(render(&sample(&[]), "x").contains("\ntags: []\n"));
    }

    #[test]
    fn tags_round_trip_with_commas_quotes_and_unicode() {
        let tags = ["hello,world", "plain-tag", "say \"hi\"", "ünïcode", "a]b"];
        let (fm, body) = parse(&render(&sample(&tags), "body\n---\nmore")).unwrap();
        assert_eq!(fm.tags, tags);
        assert_eq!(body, "body\n---\nmore");
        assert!(
            render(&sample(&["hello,world", "plain-tag"]), "")
                .contains("tags: [\"hello,world\", \"plain-tag\"]")
        );
    }

    #[test]
    fn legacy_and_odd_tag_values() {
        assert_eq!(parse_tags("[colleague, ml-team]"), ["colleague", "ml-team"]);
        assert_eq!(parse_tags("['a', \"b\" , ]"), ["a", "b"]);
        assert!(parse_tags("colleague").is_empty());
        assert_eq!(parse_tags("[1, \"x\"]"), ["x"]);
    }

    #[test]
    fn reader_errors_are_the_reference_texts() {
        let err = |t: &str| parse(t).unwrap_err().to_string();
        assert_eq!(err("no fence"), "Missing frontmatter block");
        assert_eq!(err("---\nid: x\n"), "Invalid frontmatter format");
        assert_eq!(
            err("---\nid: x\ntype: entity\n---\nbody"),
            "Incomplete frontmatter metadata"
        );
        assert_eq!(
            err("---\nid: x\ntype: thing\ncategory: c\ncreated: a\nupdated: b\npinned: no\n---\n"),
            "Invalid memory type: thing"
        );
    }

    #[test]
    fn hand_edits_are_tolerated() {
        let text = "\u{feff}---\r\nid: e\r\ntype: episode\r\ncategory: 2026-02\r\ncreated: a\r\nupdated: b\r\npinned: TRUE\r\nnote without colon\r\n: leading colon\r\nid: e2\r\n---\r\nbody\r\n";
        let (fm, body) = parse(text).unwrap();
        assert_eq!(fm.id, "e2");
        assert!(fm.pinned);
        assert!(fm.tags.is_empty());
        assert_eq!(body, "body");
    }

    fn noise(rng: &mut clawboo_tests::Rng, len: usize) -> String {
        const ALPHABET: [char; 14] = [
            '-', '\n', ':', '[', ']', '"', 'a', ' ', '\r', 'é', ',', '\'', '\\', '火',
        ];
        (0..len)
            .map(|_| ALPHABET[rng.below(ALPHABET.len())])
            .collect()
    }

    #[test]
    fn parse_never_panics_on_noise() {
        let mut rng = clawboo_tests::Rng::new(11);
        for _ in 0..3000 {
            let _ = parse(&format!("---\n{}", noise(&mut rng, 40)));
        }
    }

    #[test]
    fn whatever_render_writes_parse_reads_back() {
        let mut rng = clawboo_tests::Rng::new(12);
        for _ in 0..2000 {
            let tags: Vec<String> = (0..rng.below(4))
                .map(|_| {
                    let len = 1 + rng.below(8);
                    noise(&mut rng, len)
                })
                .collect();
            let mut fm = sample(&[]);
            fm.tags = tags;
            fm.pinned = rng.below(2) == 1;
            let len = rng.below(60);
            let body = format!("x{}x", noise(&mut rng, len));
            let (back, back_body) = parse(&render(&fm, &body)).unwrap();
            assert_eq!(back, fm, "{body:?}");
            assert_eq!(back_body, body.replace("\r\n", "\n").trim(), "{body:?}");
        }
    }
}
