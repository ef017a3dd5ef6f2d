//! A second corpus to tune on, built another way than the first (`corpus`): facts said as a
//! team's notes say them, in five registers, each a template around a piece of text of this
//! machine that neither the first tuning corpus nor the held-out corpus is documented to read
//! (`realistic` names the held-out corpus's sources: man pages and package docs):
//! - **chat lines** (`#ops`, `ana: fyi the lock is released before the callback runs`): the `#`
//!   comments of the Python installed under `/usr/lib` (`python3.*`, `python3/dist-packages`),
//!   consecutive lines joined;
//! - **runbook commands** (`run shutil.copytree to recursively copy a directory tree`): the first
//!   line of the docstring of a Python function or class, with its module and name;
//! - **issue reports** (`Expected: …`, `… Seen on arm64.`) and **docs prose**: the other sentences
//!   of those docstrings, every other one an issue;
//! - **config notes** (`pinned libc to 0.2.172 after: add bpf_program and bpf_insn`): the entries
//!   of the local cargo registry's crate changelogs, with the crate and its version;
//! - **README prose**: the sentences of those crates' READMEs.
//!
//! Its probes are of the first corpus's kinds, made by the same maker (`corpus::of_facts`), so
//! the same kind means the same change of words on other text: text that repeats its templates'
//! words across thousands of facts, short notes beside long sentences, and names (`copytree`,
//! `bpf_insn`) a dictionary does not hold.
//!
//! Why: the search was tuned on one corpus of sentences from docs, and measured from outside it
//! was weaker on text built otherwise. A change that gains on both tuning corpora is likelier to
//! generalise than one that fits one. It is `bench-tune --notes` only: `bench` reports the
//! first tuning corpus and the held-out one, and this corpus never stands in for the held-out.
//!
//! Owns: reading those files, the templates, the facts. Guarantees: offline and deterministic for
//! a given machine (files read in sorted order, templates drawn from a seeded generator), bounded
//! (reading stops at the facts asked for). Must never: fetch anything, or read what the held-out
//! corpus is made from (the machine's man pages and `/usr/share/doc`).

use std::path::{Path, PathBuf};

use anyhow::bail;
use clawboo_tests::Rng;

use super::corpus::{
    self, Corpus, HELD_BACK, Sentences, collect, read_dir_sorted, registry_crates, sentences_of,
    strip_markdown, words_of,
};

/// Who speaks in the chat lines and bumps crates in the config notes.
const PEOPLE: &[&str] = &[
    "ana", "bo", "chen", "dara", "eli", "femi", "gus", "hana", "ivo", "jun", "kai", "lena",
];
/// Where the chat lines are said (the facts' titles).
const CHANNELS: &[&str] = &["#dev", "#ops", "#release", "#infra", "#help"];
/// Where an issue was seen.
const PLATFORMS: &[&str] = &["linux", "macOS", "windows", "alpine", "arm64", "CI"];

/// Builds the corpus: at most `facts` facts (fewer when this machine holds less text, said in the
/// error when too little), `queries` natural queries and `probes` probes of each kind.
pub fn build(facts: usize, queries: usize, probes: usize) -> anyhow::Result<Corpus> {
    let mut notes = Notes::new(facts + HELD_BACK);
    for root in python_roots() {
        let mut files = Vec::new();
        collect(&root, "py", &mut files);
        for file in files {
            if notes.full() {
                break;
            }
            if let Ok(source) = std::fs::read_to_string(&file) {
                notes.add_python(&module_of(&root, &file), &source);
            }
        }
    }
    for krate in registry_crates()? {
        let (name, version) = name_and_version(&krate);
        for file in read_dir_sorted(&krate) {
            let file_name = file
                .file_name()
                .map(|n| n.to_string_lossy().to_lowercase())
                .unwrap_or_default();
            let changelog = file_name.starts_with("changelog");
            if notes.full()
                || !file_name.ends_with(".md")
                || !(changelog || file_name.starts_with("readme"))
            {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            if changelog {
                notes.add_changelog(&name, &version, &text);
            } else {
                notes.add_readme(&name, &text);
            }
        }
    }
    let found = notes.kept.found.len();
    let needed = queries.min(HELD_BACK) + 1_000;
    if found < needed {
        bail!(
            "only {found} notes made from this machine's Python sources and crate changelogs and \
             READMEs; {needed} needed"
        );
    }
    let stored = facts.min(found - HELD_BACK.min(found / 10));
    Ok(corpus::of_facts(notes.kept.found, stored, queries, probes))
}

/// The notes made so far, each content once, and the generator that picks their templates.
struct Notes {
    kept: Sentences,
    rng: Rng,
    /// The number the next issue report gets.
    issue: usize,
}

impl Notes {
    fn new(wanted: usize) -> Self {
        Self {
            kept: Sentences::new(wanted),
            rng: Rng::new(0x4E_07E5),
            issue: 1_000,
        }
    }

    fn full(&self) -> bool {
        self.kept.full()
    }

    fn push(&mut self, title: String, content: String) {
        self.kept.keep(&title, &content);
    }

    /// A chat line saying `said` (a comment, 5 to 40 words).
    fn chat(&mut self, said: &str) {
        let person = self.rng.pick(PEOPLE);
        let channel = self.rng.pick(CHANNELS);
        let content = match self.rng.below(4) {
            0 => format!("{person}: {said}"),
            1 => format!("{person}: fyi {}", lower_first(said)),
            2 => format!("{person}: heads up, {}", lower_first(said)),
            _ => format!("{person}: I think {}", lower_first(said)),
        };
        self.push((*channel).to_owned(), content);
    }

    /// A runbook command: `name` of `module` does what `summary` says.
    fn command(&mut self, module: &str, name: &str, summary: &str) {
        let content = match self.rng.below(3) {
            0 => format!("{module}.{name}: {summary}"),
            1 => format!("run {module}.{name} to {}", lower_first(summary)),
            _ => format!(
                "use {name} from {module} when you need to {}",
                lower_first(summary)
            ),
        };
        self.push(format!("runbook {module}"), content);
    }

    /// An issue report or a docs sentence of `module`, every other one an issue.
    fn docstring_sentence(&mut self, module: &str, sentence: &str) {
        if self.rng.below(2) == 0 {
            self.push(format!("{module} docs"), sentence.to_owned());
            return;
        }
        self.issue += 1 + self.rng.below(7);
        let content = match self.rng.below(4) {
            0 => sentence.to_owned(),
            1 => format!("Expected: {sentence}"),
            2 => format!("{sentence} Seen on {}.", self.rng.pick(PLATFORMS)),
            _ => format!("Docs for {module} say: {sentence}"),
        };
        self.push(format!("issue {} {module}", self.issue), content);
    }

    /// A config note: `entry` of the changelog of `krate` at `version`.
    fn config(&mut self, krate: &str, version: &str, entry: &str) {
        let content = match self.rng.below(4) {
            0 => format!("{krate} {version}: {entry}"),
            1 => format!("pinned {krate} to {version} after: {}", lower_first(entry)),
            2 => format!(
                "{} bumped {krate} to {version} for: {}",
                self.rng.pick(PEOPLE),
                lower_first(entry)
            ),
            _ => format!(
                "release notes of {krate} {version} say {}",
                lower_first(entry)
            ),
        };
        self.push(format!("config {krate}"), content);
    }

    /// The notes of one Python file of `module`: its comments as chat lines, the first lines of
    /// its functions' and classes' docstrings as commands, their other sentences as issues and
    /// docs.
    fn add_python(&mut self, module: &str, source: &str) {
        let mut comment = String::new();
        let mut last_def: Option<&str> = None;
        let mut lines = source.lines();
        while let Some(line) = lines.next() {
            let trimmed = line.trim();
            if let Some(text) = trimmed.strip_prefix("# ") {
                comment.push_str(text);
                comment.push(' ');
                continue;
            }
            if !comment.is_empty() {
                for said in sentences_of(&comment) {
                    if is_prose(said, 5, 40) {
                        self.chat(said);
                    }
                }
                comment.clear();
            }
            if let Some(name) = defined_name(trimmed) {
                last_def = Some(name);
                continue;
            }
            let Some(opening) = trimmed
                .strip_prefix("r\"\"\"")
                .or_else(|| trimmed.strip_prefix("\"\"\""))
            else {
                if !trimmed.is_empty() && !trimmed.ends_with(':') && !trimmed.ends_with(',') {
                    last_def = None;
                }
                continue;
            };
            let mut docstring = String::new();
            let mut rest = opening;
            loop {
                if let Some(end) = rest.find("\"\"\"") {
                    docstring.push_str(&rest[..end]);
                    break;
                }
                let kept = rest.trim();
                if kept.starts_with(">>>") || kept.starts_with("...") {
                    docstring.push('\n');
                } else {
                    docstring.push_str(kept);
                }
                docstring.push('\n');
                match lines.next() {
                    Some(next) => rest = next,
                    None => break,
                }
            }
            self.add_docstring(module, last_def.take(), &docstring);
        }
    }

    /// One docstring of `module`, of the function or class `name` when it follows one.
    fn add_docstring(&mut self, module: &str, name: Option<&str>, docstring: &str) {
        let text = strip_markdown(&without_roles(docstring));
        let mut paragraphs = text.split("\n\n").map(|p| p.replace('\n', " "));
        if let Some(name) = name
            && let Some(first) = paragraphs.next()
        {
            let first = first.trim();
            if is_prose(first, 4, 30) && sentences_of(first).len() == 1 {
                self.command(module, name, first);
            } else {
                self.docstring_sentences(module, first);
            }
        }
        for paragraph in paragraphs {
            self.docstring_sentences(module, &paragraph);
        }
    }

    fn docstring_sentences(&mut self, module: &str, paragraph: &str) {
        for sentence in sentences_of(paragraph) {
            if is_prose(sentence, 6, 60) {
                self.docstring_sentence(module, sentence);
            }
        }
    }

    /// The entries of a crate's changelog (list items, their wrapped lines joined) as config
    /// notes, pull-request links and authors left out.
    fn add_changelog(&mut self, krate: &str, version: &str, text: &str) {
        let mut entry = String::new();
        for line in text.lines().chain(std::iter::once("")) {
            let trimmed = line.trim();
            let item = trimmed
                .strip_prefix("- ")
                .or_else(|| trimmed.strip_prefix("* "));
            let continues = item.is_none() && !trimmed.is_empty() && !trimmed.starts_with('#');
            if continues && !entry.is_empty() {
                entry.push(' ');
                entry.push_str(trimmed);
                continue;
            }
            if !entry.is_empty() {
                let cleaned = changelog_entry(&entry);
                if is_prose(&cleaned, 4, 40) {
                    self.config(krate, version, &cleaned);
                }
                entry.clear();
            }
            if let Some(item) = item {
                entry.push_str(item);
            }
        }
    }

    /// The prose sentences of a crate's README (headings, tables, badges and code left out).
    fn add_readme(&mut self, krate: &str, text: &str) {
        let mut paragraph = String::new();
        let mut in_code = false;
        for line in text.lines().chain(std::iter::once("")) {
            let trimmed = line.trim();
            if trimmed.starts_with("```") {
                in_code = !in_code;
                continue;
            }
            let prose = !in_code
                && !trimmed.is_empty()
                && !trimmed.starts_with(['#', '|', '<', '!', '['])
                && !trimmed.starts_with("    ");
            if prose {
                paragraph.push_str(trimmed);
                paragraph.push(' ');
                continue;
            }
            for sentence in sentences_of(&strip_markdown(&paragraph)) {
                if is_prose(sentence, 6, 60) {
                    self.push(format!("{krate} README"), sentence.to_owned());
                }
            }
            paragraph.clear();
        }
    }
}

/// Whether `text` reads as prose of `least` to `most` words: most of its tokens are words.
fn is_prose(text: &str, least: usize, most: usize) -> bool {
    let words = words_of(text).len();
    let tokens = text.split_whitespace().count();
    (least..=most).contains(&words) && words * 10 >= tokens * 7 && text.is_ascii()
}

/// The name a Python line defines (`def name(`, `async def name(`, `class Name(` or `class
/// Name:`), public names only.
fn defined_name(line: &str) -> Option<&str> {
    let rest = line
        .strip_prefix("def ")
        .or_else(|| line.strip_prefix("async def "))
        .or_else(|| line.strip_prefix("class "))?;
    let end = rest.find(['(', ':'])?;
    let name = rest[..end].trim();
    (!name.is_empty() && !name.starts_with('_')).then_some(name)
}

/// A docstring without Sphinx roles (`:func:` of ``:func:`os.walk` ``).
fn without_roles(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(":`") {
        let role_start = rest[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == ':' || c == '_'))
            .map_or(0, |i| i + 1);
        out.push_str(&rest[..role_start]);
        rest = &rest[at + 1..];
    }
    out.push_str(rest);
    out
}

/// A changelog entry without its pull-request references, links and authors.
fn changelog_entry(entry: &str) -> String {
    let entry = entry.split(" by @").next().unwrap_or(entry);
    let plain = strip_markdown(entry);
    let kept: Vec<&str> = plain
        .split_whitespace()
        .filter(|token| {
            let bare = token.trim_matches(|c: char| "()[],.;".contains(c));
            !(bare.is_empty()
                || bare.starts_with('#')
                || bare.starts_with('@')
                || bare.starts_with("http"))
        })
        .collect();
    kept.join(" ")
}

/// `said` with its first letter in lower case, unless its first word is an acronym or a name in
/// capitals (`HTTP`, `FTS5`).
fn lower_first(said: &str) -> String {
    let mut chars = said.chars();
    match (chars.next(), chars.next()) {
        (Some(first), Some(second)) if first.is_uppercase() && !second.is_uppercase() => first
            .to_lowercase()
            .chain(said[first.len_utf8()..].chars())
            .collect(),
        _ => said.to_owned(),
    }
}

/// The Python source folders of this machine: `/usr/lib/python3*`, sorted.
fn python_roots() -> Vec<PathBuf> {
    read_dir_sorted(Path::new("/usr/lib"))
        .into_iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("python3"))
        })
        .collect()
}

/// `…/python3.11/email/mime/text.py` under `…/python3.11` → `email.mime.text`; a package's
/// `__init__.py` is the package, and `dist-packages` is not part of a name.
fn module_of(root: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(root).unwrap_or(file).with_extension("");
    relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .filter(|part| part != "__init__" && part != "dist-packages")
        .collect::<Vec<_>>()
        .join(".")
}

/// `…/serde_json-1.0.140` → (`serde_json`, `1.0.140`).
fn name_and_version(krate: &Path) -> (String, String) {
    let folder = krate
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match folder.rsplit_once('-') {
        Some((name, version)) => (name.to_owned(), version.to_owned()),
        None => (folder, String::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_comments_docstrings_and_names_become_chat_commands_and_issues() {
        let source = "# Keep the lock until the queue is drained, or readers see a torn write.\n\
                      def flush_pending(queue):\n    \
                      \"\"\"Write every pending record to the journal file.\n\n    \
                      The journal is synced before the function returns to its caller.\n    \
                      >>> flush_pending(q)\n    \"\"\"\n    return 1\n";
        let mut notes = Notes::new(100);
        notes.add_python("spool.journal", source);
        let contents: Vec<&str> = notes.kept.found.iter().map(|(_, c)| c.as_str()).collect();
        assert_eq!(contents.len(), 3, "{contents:?}");
        assert!(contents[0].contains("the queue is drained"), "{contents:?}");
        assert!(
            PEOPLE
                .iter()
                .any(|p| contents[0].starts_with(&format!("{p}: ")))
        );
        assert!(contents[1].contains("flush_pending"), "{contents:?}");
        assert!(
            contents[1]
                .to_lowercase()
                .contains("write every pending record")
        );
        assert!(
            contents[2].contains("The journal is synced before the function returns"),
            "{contents:?}"
        );
        assert!(!contents.iter().any(|c| c.contains(">>>")));
    }

    #[test]
    fn a_changelog_entry_loses_its_links_and_authors_and_names_its_crate() {
        let text = "## 1.2.0\n\
                    - Fix a panic when the buffer is empty ([#512](https://example.invalid/pull/512))\n\
                    - Add `try_reserve` to the\n  growable table by @someone in https://example.invalid/pull/9\n\
                    - Ok\n";
        let mut notes = Notes::new(100);
        notes.add_changelog("tablekit", "1.2.0", text);
        let contents: Vec<&str> = notes.kept.found.iter().map(|(_, c)| c.as_str()).collect();
        assert_eq!(contents.len(), 2, "{contents:?}");
        assert!(contents.iter().all(|c| c.contains("tablekit")));
        assert!(
            contents[0]
                .to_lowercase()
                .contains("fix a panic when the buffer is empty")
        );
        assert!(contents[1].contains("try_reserve to the growable table"));
        assert!(
            !contents
                .iter()
                .any(|c| c.contains("http") || c.contains('#') || c.contains('@'))
        );
        assert!(notes.kept.found.iter().all(|(t, _)| t == "config tablekit"));
    }

    #[test]
    fn a_readme_keeps_its_prose_and_leaves_code_and_headings_out() {
        let text = "# tablekit\n\n[![badge](x)](y)\n\nA growable table that keeps its rows in \
                    insertion order.\nIt never moves a row once written.\n\n```rust\nlet t = \
                    Table::new(); // it never moves a row once written anywhere\n```\n";
        let mut notes = Notes::new(100);
        notes.add_readme("tablekit", text);
        let contents: Vec<&str> = notes.kept.found.iter().map(|(_, c)| c.as_str()).collect();
        assert_eq!(
            contents,
            [
                "A growable table that keeps its rows in insertion order.",
                "It never moves a row once written."
            ]
        );
    }

    #[test]
    fn names_of_modules_and_crates_and_roles() {
        let root = Path::new("/usr/lib/python3.11");
        assert_eq!(
            module_of(root, &root.join("email/mime/text.py")),
            "email.mime.text"
        );
        assert_eq!(module_of(root, &root.join("json/__init__.py")), "json");
        assert_eq!(
            name_and_version(Path::new("x/serde_json-1.0.140")),
            ("serde_json".to_owned(), "1.0.140".to_owned())
        );
        assert_eq!(
            without_roles("see :func:`os.walk` and :py:class:`Path`"),
            "see `os.walk` and `Path`"
        );
        assert_eq!(lower_first("Return the path"), "return the path");
        assert_eq!(lower_first("HTTP headers"), "HTTP headers");
        assert_eq!(defined_name("def _private(x):"), None);
        assert_eq!(defined_name("class Reader(Base):"), Some("Reader"));
    }
}
