//! The public surface is a deliberate choice: the names the crate exports, read from its source,
//! must equal the checked-in list `public-api.txt`, so widening (or narrowing) the API fails this
//! test until the list is edited in the same change.
//!
//! What counts: every name `lib.rs` re-exports or defines (`pub use`, `pub const`, `pub fn`, …;
//! a `#[doc(hidden)]` item is not API and is skipped), and for each exported struct and enum its
//! `pub` fields, its variants and the `pub` methods of its inherent `impl` blocks (again without
//! `#[doc(hidden)]` ones). Items a macro generates are not seen. The source is rustfmt'd, so
//! items and blocks are read by their indentation.
//!
//! `UPDATE_PUBLIC_API=1 cargo test -p clawboo-core --test public_api` rewrites the list from the
//! source; review the diff it makes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The file of module `path` (`mcp::http` → `src/mcp/http.rs` or `src/mcp/http/mod.rs`).
fn module_file(path: &[&str]) -> PathBuf {
    let src = crate_dir().join("src");
    let joined: PathBuf = path.iter().collect();
    let flat = src.join(&joined).with_extension("rs");
    if flat.exists() {
        flat
    } else {
        src.join(joined).join("mod.rs")
    }
}

/// Every `.rs` file under `src`, test files excluded.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("tests.rs") {
            out.push(path);
        }
    }
}

/// The `pub use` statements of `text` at the top level (column 0), each as (module path, names
/// with their exported spelling), reading `a::b::{C, d as e}` and `a::b::C`.
fn pub_uses(text: &str) -> Vec<(Vec<String>, Vec<String>)> {
    let mut found = Vec::new();
    let mut statement: Option<String> = None;
    for line in text.lines() {
        if let Some(current) = statement.as_mut() {
            current.push(' ');
            current.push_str(line.trim());
        } else if line.starts_with("pub use ") {
            statement = Some(line.trim_start_matches("pub use ").to_owned());
        }
        if let Some(done) = statement.take_if(|s| s.ends_with(';')) {
            let done = done
                .trim_end_matches(';')
                .replace("{ ", "{")
                .replace(" }", "}");
            let (path, names) = match done.split_once("::{") {
                Some((path, rest)) => (path.to_owned(), rest.trim_end_matches('}').to_owned()),
                None => {
                    let (path, name) = done.rsplit_once("::").unwrap_or(("", &done));
                    (path.to_owned(), name.to_owned())
                }
            };
            let names = names
                .split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty() && *n != "self")
                .map(|n| {
                    n.split_once(" as ")
                        .map_or(n, |(_, alias)| alias)
                        .to_owned()
                })
                .collect();
            found.push((path.split("::").map(str::to_owned).collect(), names));
        }
    }
    found
}

/// The kind of item `name` is in `text` (`struct`, `fn`, …), if `text` defines it at column 0.
fn defines(text: &str, name: &str) -> Option<&'static str> {
    const KINDS: [(&str, &str); 8] = [
        ("pub struct ", "struct"),
        ("pub enum ", "enum"),
        ("pub fn ", "fn"),
        ("pub async fn ", "fn"),
        ("pub const fn ", "fn"),
        ("pub type ", "type"),
        ("pub const ", "const"),
        ("pub trait ", "trait"),
    ];
    text.lines().find_map(|line| {
        KINDS.iter().find_map(|(prefix, kind)| {
            let rest = line.strip_prefix(prefix)?;
            let ident: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            (ident == name).then_some(*kind)
        })
    })
}

/// Where `name`, exported through module `path`, is defined: follows `pub use` chains.
fn resolve(path: &[String], name: &str) -> (PathBuf, &'static str) {
    let segments: Vec<&str> = path.iter().map(String::as_str).collect();
    let file = module_file(&segments);
    let text = read(&file);
    if let Some(kind) = defines(&text, name) {
        return (file, kind);
    }
    for (inner, names) in pub_uses(&text) {
        if names.iter().any(|n| n == name) {
            let mut next: Vec<String> = path.to_vec();
            next.extend(inner);
            return resolve(&next, name);
        }
    }
    panic!(
        "cannot find where {name} is defined (from {})",
        file.display()
    );
}

/// The lines of the block that opens at column 0 on a line for which `opens` holds, up to its
/// closing `}` at column 0, for every such block of `text`; each line with whether a
/// `#[doc(hidden)]` attribute precedes it.
fn blocks(text: &str, opens: impl Fn(&str) -> bool) -> Vec<(bool, &str)> {
    let mut out = Vec::new();
    let mut inside = false;
    let mut hidden = false;
    for line in text.lines() {
        if !inside {
            inside = opens(line) && line.ends_with('{');
            continue;
        }
        if line == "}" {
            inside = false;
            continue;
        }
        let code = line.trim();
        if code == "#[doc(hidden)]" {
            hidden = true;
            continue;
        }
        out.push((hidden, line));
        if !code.starts_with("#[") && !code.starts_with("///") {
            hidden = false;
        }
    }
    out
}

fn ident_after<'a>(line: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(prefix)?;
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    Some(&rest[..end]).filter(|i| !i.is_empty())
}

/// Whether `line` opens an inherent `impl` of `name` (`impl Name {`, `impl<…> Name<…> {`).
fn opens_impl(line: &str, name: &str) -> bool {
    let Some(rest) = line.strip_prefix("impl") else {
        return false;
    };
    let rest = if rest.starts_with('<') {
        let mut depth = 0;
        let mut end = 0;
        for (i, c) in rest.char_indices() {
            match c {
                '<' => depth += 1,
                '>' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                end = i + 1;
                break;
            }
        }
        &rest[end..]
    } else {
        rest
    };
    let rest = rest.trim_start();
    !rest.contains(" for ") && ident_after(rest, "") == Some(name)
}

/// The exported names, one per line: items, fields, variants and methods.
fn actual_surface() -> BTreeSet<String> {
    let lib = read(&crate_dir().join("src/lib.rs"));
    let mut files = Vec::new();
    sources(&crate_dir().join("src"), &mut files);
    let texts: Vec<(PathBuf, String)> = files
        .into_iter()
        .map(|f| {
            let t = read(&f);
            (f, t)
        })
        .collect();
    let mut surface = BTreeSet::new();
    let mut exported: Vec<(String, PathBuf, &'static str)> = Vec::new();
    for (path, names) in pub_uses(&lib) {
        for name in names {
            let (file, kind) = resolve(&path, &name);
            exported.push((name, file, kind));
        }
    }
    let mut hidden_next = false;
    for line in lib.lines() {
        if line == "#[doc(hidden)]" {
            hidden_next = true;
            continue;
        }
        for (prefix, kind) in [
            ("pub const ", "const"),
            ("pub fn ", "fn"),
            ("pub mod ", "mod"),
        ] {
            if let Some(name) = ident_after(line, prefix)
                && !hidden_next
            {
                surface.insert(format!("{kind} {name}"));
            }
        }
        if !line.starts_with("#[") {
            hidden_next = false;
        }
    }
    for (name, file, kind) in exported {
        surface.insert(format!("{kind} {name}"));
        let own = read(&file);
        if kind == "struct" || kind == "enum" {
            let opener = format!("pub {kind} {name}");
            for (hidden, line) in blocks(&own, |l| {
                ident_after(l, &format!("pub {kind} ")) == Some(&name) && l.starts_with(&opener)
            }) {
                if hidden {
                    continue;
                }
                if let Some(field) = ident_after(line, "    pub ") {
                    surface.insert(format!("field {name}.{field}"));
                } else if kind == "enum"
                    && let Some(variant) = ident_after(line, "    ")
                    && variant.starts_with(|c: char| c.is_ascii_uppercase())
                {
                    surface.insert(format!("variant {name}::{variant}"));
                }
            }
        }
        let defined_once = texts
            .iter()
            .filter(|(_, t)| defines(t, &name).is_some())
            .count()
            == 1;
        for (path, text) in &texts {
            if !defined_once && *path != file {
                continue;
            }
            for (hidden, line) in blocks(text, |l| opens_impl(l, &name)) {
                let member = [
                    ("    pub fn ", "method"),
                    ("    pub async fn ", "method"),
                    ("    pub const fn ", "method"),
                    ("    pub const ", "const"),
                ]
                .iter()
                .find_map(|(p, kind)| ident_after(line, p).map(|m| (kind, m)));
                if let Some((kind, member)) = member
                    && !hidden
                {
                    surface.insert(format!("{kind} {name}::{member}"));
                }
            }
        }
    }
    surface
}

#[test]
fn the_exported_names_are_exactly_the_checked_in_list() {
    let list_path = crate_dir().join("public-api.txt");
    let actual = actual_surface();
    let rendered: String = actual.iter().map(|l| format!("{l}\n")).collect();
    if std::env::var_os("UPDATE_PUBLIC_API").is_some() {
        std::fs::write(&list_path, &rendered).unwrap();
    }
    let listed: BTreeSet<String> = read(&list_path)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect();
    let added: Vec<&String> = actual.difference(&listed).collect();
    let removed: Vec<&String> = listed.difference(&actual).collect();
    assert!(
        added.is_empty() && removed.is_empty(),
        "the public API changed; if that is intended, edit public-api.txt (or run with \
         UPDATE_PUBLIC_API=1)\n  new: {added:?}\n  gone: {removed:?}"
    );
}

#[test]
fn the_reader_sees_what_it_must() {
    let surface = actual_surface();
    for expected in [
        "fn connect_in_memory",
        "struct McpHttpService",
        "method McpHttpService::handle",
        "field CallOutcome.denied",
        "variant ServerKind::Teamchat",
        "method Db::open",
        "const SERVER_NAMES",
    ] {
        assert!(
            surface.contains(expected),
            "{expected} missing from {surface:#?}"
        );
    }
    for hidden in [
        "mod internal",
        "method Db::conn",
        "method McpHttpService::handle_collected",
    ] {
        assert!(!surface.contains(hidden), "{hidden} is not API");
    }
    assert!(opens_impl("impl<S: Send> Server<S> {", "Server"));
    assert!(!opens_impl("impl Default for HttpOptions {", "HttpOptions"));
    assert_eq!(
        pub_uses("pub use a::b::{C, d as e};\npub use x::Y;\n"),
        [
            (
                vec!["a".to_owned(), "b".to_owned()],
                vec!["C".to_owned(), "e".to_owned()]
            ),
            (vec!["x".to_owned()], vec!["Y".to_owned()]),
        ]
    );
}
