//! The held-out search corpus (issue 25): facts made offline from this machine's own
//! documentation (English man pages under `/usr/share/man/man?/`, and per package under
//! `/usr/share/doc/`: Debian and upstream changelogs, READMEs, `copyright` files), written in
//! several registers, with queries of five kinds whose answer is one known fact.
//!
//! **Facts.** Each source yields snippets: a man page's NAME line, its options (`-k, --keep` and
//! what it does), a configuration page's settings (`PermitRootLogin` and what it does), prose
//! sentences; a changelog's entries (package, version, bug number); a copyright file's stanzas.
//! A snippet becomes a fact in one register: a short note (`gzip(1): compress or expand files`),
//! a command (`$ gzip --keep …  # Keep input files…`), a config fact (`In sshd_config, …`,
//! licence facts), prose, an issue-tracker line (`#1009168 (gzip): … — fixed in 1.12-1`), or a
//! chat line (`lena: heads up: …`). Sources are listed sorted, shuffled with a fixed seed and read
//! until there are enough facts, so a build is deterministic for a given machine and reads only
//! what it needs; when the sources run out, snippets are rendered again in their other registers
//! and then with a context suffix, so any count (a million included) can be built. No two facts
//! have the same content.
//!
//! **Queries**, each with the index of its target fact:
//! - [`QueryKind::Words`]: 3–5 consecutive words of the fact;
//! - [`QueryKind::WordForms`]: 3–5 of its content words, at least two in another inflection
//!   (plural/singular, -ing/-ed/-s, -tion), each new form a word some fact of the corpus uses;
//! - [`QueryKind::Paraphrase`]: 3–5 of its content words with one or two replaced from a table of
//!   technical synonyms; the synonym is not in the fact;
//! - [`QueryKind::Question`]: a question a person would ask, by register (`how do I keep input
//!   files with gzip?`), holding 2–3 of the fact's content words and what it is about (the command,
//!   file, package or page);
//! - [`QueryKind::Misspelling`]: 3–5 consecutive words with one or two typos (a swap, a dropped,
//!   doubled or neighbouring-key letter) in words of five letters or more; a typo is never a word
//!   of the corpus.
//!
//! **Unambiguous targets.** A query is kept only when (a) the fact's words it was made from occur
//! together in the target and in no other fact (tokens as FTS5's `unicode61` splits them:
//! alphanumeric runs, case-folded), (b) the words the query actually holds occur together in no
//! other fact (so a synonym or a new word form cannot make another fact the better answer), and
//! (c) at least one of those fact words is rare (in at most 1% of the facts, at least 50), so
//! the query never rests on common words alone. Each fact is the target of at most one query.
//!
//! Must never: touch the network, read outside the documentation folders, or be used to tune the
//! search (it is the held-out figure).

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::bail;

use crate::Rng;

/// A kind of query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QueryKind {
    /// A few consecutive words of the fact.
    Words,
    /// The fact's content words in other inflections.
    WordForms,
    /// The fact's content words with synonyms.
    Paraphrase,
    /// A question whose answer is the fact.
    Question,
    /// The fact's words with one or two typos.
    Misspelling,
}

impl QueryKind {
    /// Every kind, in report order.
    pub const ALL: [QueryKind; 5] = [
        QueryKind::Words,
        QueryKind::WordForms,
        QueryKind::Paraphrase,
        QueryKind::Question,
        QueryKind::Misspelling,
    ];

    /// The kind's name in reports.
    pub fn as_str(&self) -> &'static str {
        match self {
            QueryKind::Words => "words",
            QueryKind::WordForms => "word-forms",
            QueryKind::Paraphrase => "paraphrase",
            QueryKind::Question => "question",
            QueryKind::Misspelling => "misspelling",
        }
    }
}

impl fmt::Display for QueryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A query and the fact that answers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    /// What a person would type.
    pub text: String,
    /// How it was made.
    pub kind: QueryKind,
    /// The index of the target in [`Corpus::facts`].
    pub target: usize,
}

/// Facts to store and queries to run against them.
#[derive(Debug, Clone)]
pub struct Corpus {
    /// `(title, content)`, contents all different.
    pub facts: Vec<(String, String)>,
    /// `queries_per_kind` of each kind, kind after kind.
    pub queries: Vec<Query>,
}

/// The folders the corpus is read from, relative to the filesystem root of a Debian system.
const MAN_ROOT: &str = "/usr/share/man";
const DOC_ROOT: &str = "/usr/share/doc";

/// Builds `facts` facts from this machine's documentation and `queries_per_kind` queries of each
/// kind. Fails when the machine has no documentation to read, or when the facts cannot yield that
/// many unambiguous queries of some kind (ask for fewer queries or more facts).
pub fn build(facts: usize, queries_per_kind: usize) -> anyhow::Result<Corpus> {
    build_from(
        &list_sources(Path::new(MAN_ROOT), Path::new(DOC_ROOT)),
        facts,
        queries_per_kind,
    )
}

/// The seed of the source order, the registers and the queries.
const SEED: u64 = 0x00C0_FFEE_0025;

fn build_from(sources: &[Source], facts: usize, queries_per_kind: usize) -> anyhow::Result<Corpus> {
    if sources.is_empty() {
        bail!(
            "no documentation to build the held-out search corpus from: no man page under {MAN_ROOT}/man?/ and no changelog, README or copyright under {DOC_ROOT}/ (install a package's docs, e.g. `apt-get install man-db`)"
        );
    }
    let mut rng = Rng::new(SEED);
    let mut book = Book::default();
    for source in sources {
        if book.facts.len() >= facts {
            break;
        }
        for snippet in read_source(source) {
            book.snippets.push(snippet);
            book.add(book.snippets.len() - 1, 0, &mut rng);
        }
    }
    // Sources ran short: render the snippets again, in their other registers, then with context.
    let mut round = 1;
    while book.facts.len() < facts {
        if book.snippets.is_empty() {
            bail!("the documentation on this machine yielded no usable text");
        }
        let before = book.facts.len();
        for index in 0..book.snippets.len() {
            if book.facts.len() >= facts {
                break;
            }
            book.add(index, round, &mut rng);
        }
        if book.facts.len() == before && round > VARIANT_LIMIT {
            bail!("cannot make {facts} distinct facts from this machine's documentation");
        }
        round += 1;
    }
    book.facts.truncate(facts);
    book.meta.truncate(facts);
    let queries = make_queries(&book, queries_per_kind, &mut rng)?;
    Ok(Corpus {
        facts: book.facts,
        queries,
    })
}

/// Rounds after which a build that adds nothing gives up.
const VARIANT_LIMIT: usize = 64;

// ---------------------------------------------------------------------------------------------
// Sources.

/// One documentation file and how to read it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Source {
    path: PathBuf,
    kind: SourceKind,
    /// The package (doc folder) or the man page name.
    name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SourceKind {
    Man,
    Changelog,
    Readme,
    Copyright,
}

/// Every source under the two roots, sorted, then shuffled with a fixed seed so that any prefix
/// mixes kinds and packages. Symlinks are skipped (aliases of pages and packages already listed).
fn list_sources(man_root: &Path, doc_root: &Path) -> Vec<Source> {
    let mut out = Vec::new();
    for section in sorted_entries(man_root) {
        let is_section = section
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.len() == 4 && n.starts_with("man"));
        if !is_section || !section.is_dir() {
            continue;
        }
        for page in sorted_entries(&section) {
            let Some(file) = page.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            if !is_regular(&page) || !file.ends_with(".gz") {
                continue;
            }
            let stem = file.trim_end_matches(".gz");
            let name = stem.rsplit_once('.').map_or(stem, |(n, _)| n).to_owned();
            out.push(Source {
                path: page.clone(),
                kind: SourceKind::Man,
                name,
            });
        }
    }
    for package in sorted_entries(doc_root) {
        if !package.is_dir() || package.is_symlink() {
            continue;
        }
        let Some(name) = package.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        for file in sorted_entries(&package) {
            let Some(base) = file.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            if !is_regular(&file) {
                continue;
            }
            let kind = if base == "changelog.Debian.gz" || base == "changelog.gz" {
                SourceKind::Changelog
            } else if base == "copyright" {
                SourceKind::Copyright
            } else if base.starts_with("README")
                && (base.ends_with(".gz") || base.ends_with(".md") || !base.contains('.'))
                || base == "README.Debian"
            {
                SourceKind::Readme
            } else {
                continue;
            };
            out.push(Source {
                path: file.clone(),
                kind,
                name: name.to_owned(),
            });
        }
    }
    interleave_families(out, &mut Rng::new(SEED ^ 0x5A5A))
}

/// The family of a page or package: its name without a leading `lib`, up to the first character
/// that is not a letter (`gcloud_beta_…` and `gcloud`, `git-log` and `git`, `libllvm14` and
/// `llvm-14-tools` are one family each).
fn family(name: &str) -> String {
    let lower = name.to_lowercase();
    let bare = lower
        .strip_prefix("lib")
        .filter(|b| b.len() >= 2)
        .unwrap_or(&lower);
    bare.chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect()
}

/// Sources shuffled within their family, then taken one family at a time in a shuffled family
/// order, round after round: any prefix spreads over as many tools and packages as it can, so a
/// family with thousands of pages (a cloud CLI's subcommands) does not fill the corpus.
fn interleave_families(sources: Vec<Source>, rng: &mut Rng) -> Vec<Source> {
    let mut families: std::collections::BTreeMap<String, Vec<Source>> = Default::default();
    for source in sources {
        families
            .entry(family(&source.name))
            .or_default()
            .push(source);
    }
    let mut groups: Vec<Vec<Source>> = families.into_values().collect();
    rng.shuffle(&mut groups);
    for group in &mut groups {
        rng.shuffle(group);
        group.reverse();
    }
    let mut out = Vec::new();
    while !groups.is_empty() {
        for group in &mut groups {
            if let Some(source) = group.pop() {
                out.push(source);
            }
        }
        groups.retain(|g| !g.is_empty());
    }
    out
}

fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    entries.sort();
    entries
}

fn is_regular(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
}

/// The most text read from one source (decompressed): changelogs run to megabytes.
const READ_LIMIT: u64 = 384 * 1024;

/// A source's text (decompressed when it ends in `.gz`), lossily decoded; `None` when unreadable.
fn read_text(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::new();
    let gz = path.extension().is_some_and(|e| e == "gz");
    let read = if gz {
        flate2::read::GzDecoder::new(file)
            .take(READ_LIMIT)
            .read_to_end(&mut bytes)
    } else {
        file.take(READ_LIMIT).read_to_end(&mut bytes)
    };
    // A truncated stream still gave its first part; only nothing at all is a failure.
    if read.is_err() && bytes.is_empty() || bytes.contains(&0) {
        return None;
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// What one source offers, in order; nothing when it cannot be read or parsed.
fn read_source(source: &Source) -> Vec<Snippet> {
    let Some(text) = read_text(&source.path) else {
        return Vec::new();
    };
    match source.kind {
        SourceKind::Man => {
            let section = source
                .path
                .parent()
                .and_then(|p| p.file_name())
                .and_then(|n| n.to_str())
                .map_or("1", |n| n.trim_start_matches("man"));
            man_snippets(&source.name, section, &text)
        }
        SourceKind::Changelog => changelog_snippets(&source.name, &text),
        SourceKind::Readme => readme_snippets(&source.name, &text),
        SourceKind::Copyright => copyright_snippets(&source.name, &text),
    }
}

// ---------------------------------------------------------------------------------------------
// Snippets: what a source says, before it is written as a fact.

#[derive(Debug, Clone, PartialEq, Eq)]
enum Snippet {
    /// A man page's NAME line.
    Name {
        name: String,
        section: String,
        summary: String,
    },
    /// A command-line option and what it does.
    Option {
        command: String,
        flags: String,
        desc: String,
    },
    /// A configuration setting and what it does.
    Setting {
        file: String,
        key: String,
        desc: String,
    },
    /// One or two sentences of prose.
    Prose { source: String, text: String },
    /// A changelog entry.
    Change {
        package: String,
        version: String,
        text: String,
        bug: Option<String>,
    },
    /// A copyright stanza.
    License {
        package: String,
        files: String,
        holder: String,
        license: String,
    },
}

/// Sections of a man page that are not prose about the command.
const SKIPPED_SECTIONS: &[&str] = &[
    "SYNOPSIS",
    "SEE ALSO",
    "AUTHOR",
    "AUTHORS",
    "COPYRIGHT",
    "REPORTING BUGS",
    "COLOPHON",
    "LICENSE",
    "AVAILABILITY",
    "COPYRIGHT AND LICENSE",
    "TRANSLATION",
];

/// A paragraph of a man page: its section, its tag (`.TP`/`.IP`), its text.
#[derive(Debug, Default)]
struct Para {
    section: String,
    tag: Option<String>,
    text: String,
}

/// Parses roff `man(7)` into paragraphs; `None` for `mdoc(7)` pages and `.so` redirections.
fn man_paragraphs(src: &str) -> Option<Vec<Para>> {
    let mut paras = Vec::new();
    let mut cur = Para::default();
    let mut section = String::new();
    let (mut want_tag, mut nofill, mut in_def) = (false, false, false);
    let flush = |cur: &mut Para, paras: &mut Vec<Para>, section: &str| {
        let text = collapse(&cur.text);
        if !text.is_empty() || cur.tag.is_some() {
            paras.push(Para {
                section: section.to_owned(),
                tag: cur.tag.take(),
                text,
            });
        }
        *cur = Para::default();
    };
    for raw in src.lines() {
        if in_def {
            in_def = !raw.starts_with("..");
            continue;
        }
        let mut text = None;
        if let Some(rest) = raw.strip_prefix('.').or_else(|| raw.strip_prefix('\'')) {
            let rest = rest.trim_start();
            let (name, args) = rest
                .split_once(|c: char| c.is_whitespace())
                .unwrap_or((rest, ""));
            match name {
                "TH" => {}
                "Dd" | "so" => return None,
                "SH" | "SS" => {
                    flush(&mut cur, &mut paras, &section);
                    if name == "SH" {
                        section = collapse(&unescape(&macro_args(args).join(" "))).to_uppercase();
                    }
                    want_tag = false;
                }
                "PP" | "LP" | "P" | "sp" | "RS" | "RE" | "HP" => {
                    flush(&mut cur, &mut paras, &section);
                }
                "TP" | "TQ" => {
                    flush(&mut cur, &mut paras, &section);
                    want_tag = true;
                }
                "IP" => {
                    flush(&mut cur, &mut paras, &section);
                    let tag = macro_args(args).into_iter().next().unwrap_or_default();
                    let tag = collapse(&unescape(&tag));
                    if !tag.is_empty() && tag != "*" && tag != "-" {
                        cur.tag = Some(tag);
                    }
                }
                "B" | "I" | "SM" | "SB" => text = Some(macro_args(args).join(" ")),
                "BR" | "BI" | "IB" | "IR" | "RB" | "RI" => text = Some(macro_args(args).concat()),
                "nf" | "EX" | "TS" => {
                    flush(&mut cur, &mut paras, &section);
                    nofill = true;
                }
                "fi" | "EE" | "TE" => nofill = false,
                "de" | "de1" | "am" | "ig" => in_def = true,
                _ => {}
            }
        } else if !nofill {
            text = Some(raw.to_owned());
        }
        let Some(text) = text else { continue };
        if nofill {
            continue;
        }
        let text = unescape(&text);
        if want_tag {
            cur.tag = Some(collapse(&text));
            want_tag = false;
        } else {
            cur.text.push(' ');
            cur.text.push_str(&text);
        }
    }
    flush(&mut cur, &mut paras, &section);
    Some(paras)
}

/// A macro line's arguments: whitespace-separated, `"…"` quoting (with `""` for a quote).
fn macro_args(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = args.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let mut arg = String::new();
        if c == '"' {
            chars.next();
            while let Some(c) = chars.next() {
                if c == '"' {
                    if chars.peek() == Some(&'"') {
                        chars.next();
                        arg.push('"');
                    } else {
                        break;
                    }
                } else {
                    arg.push(c);
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                arg.push(c);
                chars.next();
            }
        }
        out.push(arg);
    }
    out
}

/// A roff special character by name, as plain text.
fn glyph(name: &str) -> &'static str {
    match name {
        "em" | "en" | "hy" | "mi" | "-" => "-",
        "aq" | "oq" | "cq" | "fm" => "'",
        "lq" | "rq" | "dq" | "Lq" | "Rq" => "\"",
        "bu" => "*",
        "co" => "(c)",
        "rg" | "R" => "(R)",
        "tm" | "Tm" => "(TM)",
        "mu" => "x",
        "ti" => "~",
        "ha" => "^",
        "rs" => "\\",
        "pl" => "+",
        "eq" => "=",
        "<=" => "<=",
        ">=" => ">=",
        "->" => "->",
        "<-" => "<-",
        "sl" => "/",
        "ba" | "br" => "|",
        _ => "",
    }
}

/// Roff escapes to plain text: fonts and sizes dropped, glyphs named, strings and registers
/// dropped, comments cut.
fn unescape(line: &str) -> String {
    if !line.contains('\\') {
        return line.to_owned();
    }
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    let name_after = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| -> String {
        match chars.next() {
            Some('(') => chars.by_ref().take(2).collect(),
            Some('[') => chars.by_ref().take_while(|&c| c != ']').collect(),
            Some(c) => c.to_string(),
            None => String::new(),
        }
    };
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else { break };
        match e {
            '"' | '#' => break,
            'f' | 'n' | 'g' | 'k' | 'm' | 'M' | 'F' | 'Y' => {
                name_after(&mut chars);
            }
            '*' => out.push_str(glyph(&name_after(&mut chars))),
            '(' => {
                let name: String = chars.by_ref().take(2).collect();
                out.push_str(glyph(&name));
            }
            '[' => {
                let name: String = chars.by_ref().take_while(|&c| c != ']').collect();
                out.push_str(glyph(&name));
            }
            's' => {
                if matches!(chars.peek(), Some('+' | '-')) {
                    chars.next();
                }
                match chars.peek() {
                    Some('(') | Some('[') => {
                        name_after(&mut chars);
                    }
                    Some(d) if d.is_ascii_digit() => {
                        chars.next();
                    }
                    _ => {}
                }
            }
            'h' | 'v' | 'w' | 'o' | 'l' | 'L' | 'D' | 'X' | 'Z' | 'b' | 'x' | 'H' | 'S' | 'N'
            | 'A' | 'B' | 'C' | 'R' | 'V' => {
                if let Some(delim) = chars.next() {
                    for c in chars.by_ref() {
                        if c == delim {
                            break;
                        }
                    }
                }
            }
            'z' => {
                chars.next();
            }
            '-' => out.push('-'),
            'e' | '\\' => out.push('\\'),
            ' ' | '~' | '0' | 't' => out.push(' '),
            '&' | '|' | '^' | ':' | '%' | ')' | 'c' | 'd' | 'u' | 'r' | 'p' | '{' | '}' | 'a' => {}
            other => out.push(other),
        }
    }
    out
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Sentences of `text`: cut after `.`, `?` or `!` followed by a space and a capital or digit,
/// not after a common abbreviation.
fn sentences(text: &str) -> Vec<String> {
    const ABBREVIATIONS: &[&str] = &[
        "e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "No.", "Dr.", "Mr.",
    ];
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if !matches!(b, b'.' | b'?' | b'!') || i + 2 >= bytes.len() || bytes[i + 1] != b' ' {
            continue;
        }
        let next = bytes[i + 2];
        if !(next.is_ascii_uppercase() || next.is_ascii_digit()) {
            continue;
        }
        let piece = &text[start..=i];
        if ABBREVIATIONS.iter().any(|a| piece.ends_with(a)) {
            continue;
        }
        out.push(piece.trim().to_owned());
        start = i + 2;
    }
    let rest = text[start..].trim();
    if !rest.is_empty() {
        out.push(rest.to_owned());
    }
    out
}

/// Whether a sentence reads as prose: 5–40 words, mostly letters, no markup left over.
fn is_prose(sentence: &str) -> bool {
    let words = sentence.split_whitespace().count();
    if !(5..=40).contains(&words) || sentence.contains('\\') || sentence.contains("http") {
        return false;
    }
    let visible = sentence.chars().filter(|c| !c.is_whitespace()).count();
    let letters = sentence.chars().filter(|c| c.is_alphabetic()).count();
    letters * 10 >= visible * 7
}

/// The first prose sentence of `text`, if any.
fn first_sentence(text: &str) -> Option<String> {
    sentences(text).into_iter().next().filter(|s| {
        let n = s.split_whitespace().count();
        (3..=40).contains(&n) && !s.contains('\\')
    })
}

fn man_snippets(page: &str, section: &str, src: &str) -> Vec<Snippet> {
    let Some(paras) = man_paragraphs(src) else {
        return Vec::new();
    };
    // A command's subcommand pages (`gcloud_compute_disks_create`) name the command as typed.
    let is_command = section.starts_with(['1', '6', '8']);
    let spaced;
    let name = if is_command && page.matches('_').count() >= 2 {
        spaced = page.replace('_', " ");
        spaced.as_str()
    } else {
        page
    };
    let config_page = section.starts_with('5');
    let mut out = Vec::new();
    for para in paras {
        if para.section == "NAME" {
            if let Some((names, summary)) = para.text.split_once(" - ") {
                let first = names.split(',').next().unwrap_or(names).trim();
                let summary = summary.trim().trim_end_matches('.');
                if !first.is_empty() && summary.split_whitespace().count() >= 2 {
                    out.push(Snippet::Name {
                        name: first.to_owned(),
                        section: section.to_owned(),
                        summary: summary.to_owned(),
                    });
                }
            }
            continue;
        }
        if SKIPPED_SECTIONS.contains(&para.section.as_str()) {
            continue;
        }
        match &para.tag {
            Some(tag) if tag.starts_with('-') && tag.len() <= 60 => {
                if let Some(desc) = first_sentence(&para.text) {
                    out.push(Snippet::Option {
                        command: name.to_owned(),
                        flags: tag.clone(),
                        desc,
                    });
                }
            }
            Some(tag) if config_page => {
                let key = tag
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
                    .trim_end_matches(['=', ':', ',']);
                let identifier = (2..=40).contains(&key.len())
                    && key.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                    && key
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
                if let (true, Some(desc)) = (identifier, first_sentence(&para.text)) {
                    out.push(Snippet::Setting {
                        file: name.to_owned(),
                        key: key.to_owned(),
                        desc,
                    });
                }
            }
            Some(tag) => {
                if let Some(desc) = first_sentence(&para.text)
                    && tag.len() <= 30
                    && tag.chars().any(char::is_alphanumeric)
                    && is_prose(&desc)
                {
                    out.push(Snippet::Prose {
                        source: name.to_owned(),
                        text: format!("{tag}: {desc}"),
                    });
                }
            }
            None => prose_snippets(name, &para.text, &mut out),
        }
    }
    out
}

/// Prose snippets of a paragraph: its prose sentences, a short one joined to the next.
fn prose_snippets(source: &str, text: &str, out: &mut Vec<Snippet>) {
    let mut pending: Option<String> = None;
    for sentence in sentences(text).into_iter().filter(|s| is_prose(s)) {
        let text = match pending.take() {
            Some(short) => format!("{short} {sentence}"),
            None if sentence.split_whitespace().count() < 10 => {
                pending = Some(sentence);
                continue;
            }
            None => sentence,
        };
        out.push(Snippet::Prose {
            source: source.to_owned(),
            text,
        });
    }
    if let Some(short) = pending {
        out.push(Snippet::Prose {
            source: source.to_owned(),
            text: short,
        });
    }
}

/// The most entries taken from one changelog.
const CHANGELOG_ENTRIES: usize = 300;

/// Entries of a Debian (`pkg (1.2-3) unstable; urgency=…`) or upstream changelog (bullets under
/// version headings).
fn changelog_snippets(package: &str, src: &str) -> Vec<Snippet> {
    let mut out = Vec::new();
    let mut version = String::new();
    let mut entry: Option<String> = None;
    let finish = |entry: &mut Option<String>, version: &str, out: &mut Vec<Snippet>| {
        if let Some(text) = entry.take()
            && let Some(snippet) = change(package, version, &text)
        {
            out.push(snippet);
        }
    };
    for line in src.lines() {
        if out.len() >= CHANGELOG_ENTRIES {
            break;
        }
        let trimmed = line.trim();
        let indent = line.len() - line.trim_start().len();
        if trimmed.is_empty() {
            finish(&mut entry, &version, &mut out);
            continue;
        }
        if indent == 0 {
            finish(&mut entry, &version, &mut out);
            if let Some(v) = version_in(trimmed) {
                version = v;
            }
            continue;
        }
        let bullet = ["* ", "- ", "+ "]
            .iter()
            .find_map(|b| trimmed.strip_prefix(b));
        if let Some(rest) = bullet {
            finish(&mut entry, &version, &mut out);
            entry = Some(rest.to_owned());
        } else if trimmed.starts_with("-- ") || trimmed.starts_with('[') {
            finish(&mut entry, &version, &mut out);
        } else if let Some(text) = entry.as_mut() {
            text.push(' ');
            text.push_str(trimmed);
        }
    }
    finish(&mut entry, &version, &mut out);
    out
}

/// The version a changelog heading names: `pkg (1.2-3) …`, or the first dotted number.
fn version_in(heading: &str) -> Option<String> {
    if let Some((_, rest)) = heading.split_once(" (")
        && let Some((v, _)) = rest.split_once(')')
        && v.chars().next().is_some_and(|c| c.is_ascii_digit())
    {
        return Some(v.to_owned());
    }
    heading
        .split(|c: char| c.is_whitespace() || c == ',' || c == ':')
        .map(|w| w.trim_start_matches(['v', 'V']).trim_end_matches('.'))
        .find(|w| {
            w.contains('.')
                && w.chars().next().is_some_and(|c| c.is_ascii_digit())
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || ".-+~".contains(c))
        })
        .map(str::to_owned)
}

/// A changelog entry, cleaned: its bug number taken out, `file.c (func):` prefixes dropped.
fn change(package: &str, version: &str, text: &str) -> Option<Snippet> {
    let mut text = collapse(text);
    let mut bug = None;
    let lower = text.to_lowercase();
    if let Some(at) = lower.find("closes: #") {
        let digits: String = text[at + 9..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if !digits.is_empty() {
            bug = Some(digits.clone());
            let mut end = at + 9 + digits.len();
            let open = text[..at].rfind('(').filter(|&p| text[p..at].trim() == "(");
            let start = match open {
                Some(p) if text[end..].starts_with(')') => {
                    end += 1;
                    p
                }
                _ => at,
            };
            text.replace_range(start..end, "");
            text = collapse(&text);
        }
    }
    if let Some((head, rest)) = text.split_once("): ")
        && head.contains(" (")
        && !head.contains(' ')
    {
        text = rest.to_owned();
    }
    let text = text.trim_end_matches(['.', ',', ';']).trim().to_owned();
    let words = text.split_whitespace().count();
    if !(4..=60).contains(&words) || text.contains('\u{fffd}') {
        return None;
    }
    Some(Snippet::Change {
        package: package.to_owned(),
        version: version.to_owned(),
        text,
        bug,
    })
}

/// Prose from a README: paragraphs that are not code, headings or lists of links.
fn readme_snippets(package: &str, src: &str) -> Vec<Snippet> {
    let mut out = Vec::new();
    let mut in_code = false;
    for block in src.split("\n\n") {
        if block.contains("```") {
            in_code ^= block.matches("```").count() % 2 == 1;
            continue;
        }
        if in_code
            || block.lines().any(|l| {
                l.starts_with("    ")
                    || l.starts_with('\t')
                    || l.starts_with('#')
                    || l.starts_with("==")
            })
        {
            continue;
        }
        let text: String = block
            .lines()
            .map(|l| l.trim().trim_start_matches(['*', '-', '>']).trim())
            .collect::<Vec<_>>()
            .join(" ");
        prose_snippets(package, &strip_markdown(&text), &mut out);
    }
    out
}

/// `[text](url)` to `text`, emphasis and code marks dropped.
fn strip_markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find("](") {
            Some(close) if !after[..close].contains('[') => {
                out.push_str(&after[..close]);
                let tail = &after[close + 2..];
                rest = tail.find(')').map_or("", |p| &tail[p + 1..]);
            }
            _ => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out.replace("**", "").replace('`', "")
}

/// Stanzas of a machine-readable (DEP-5) copyright file.
fn copyright_snippets(package: &str, src: &str) -> Vec<Snippet> {
    if !src.starts_with("Format:") {
        return Vec::new();
    }
    let mut out = Vec::new();
    for stanza in src.split("\n\n") {
        let field = |name: &str| {
            stanza
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .map(|v| v.trim().to_owned())
        };
        let (Some(files), Some(holder), Some(license)) =
            (field("Files:"), field("Copyright:"), field("License:"))
        else {
            continue;
        };
        let holder = without_emails(&holder);
        if files.len() > 60 || holder.len() < 3 || license.is_empty() {
            continue;
        }
        out.push(Snippet::License {
            package: package.to_owned(),
            files,
            holder,
            license,
        });
    }
    out
}

fn without_emails(text: &str) -> String {
    let mut out = String::new();
    let mut depth = 0;
    for c in text.chars() {
        match c {
            '<' => depth += 1,
            '>' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    collapse(&out).trim_end_matches(',').to_owned()
}

// ---------------------------------------------------------------------------------------------
// Facts: snippets written in registers.

/// How a fact is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Register {
    Note,
    Command,
    Config,
    Prose,
    Issue,
    Chat,
    License,
}

/// What a fact was written from and how: its snippet (in [`Book::snippets`]) and register.
#[derive(Debug, Clone, Copy)]
struct Meta {
    register: Register,
    snippet: usize,
}

#[derive(Default)]
struct Book {
    facts: Vec<(String, String)>,
    meta: Vec<Meta>,
    snippets: Vec<Snippet>,
    seen: HashSet<String>,
}

const NICKS: &[&str] = &[
    "ana", "bo", "chen", "dmitri", "eli", "fatima", "gus", "hana", "ivo", "jo", "kemal", "lena",
    "marco", "noor", "olu", "priya",
];
const CHANNELS: &[&str] = &[
    "#ops", "#infra", "#dev", "#build", "#support", "#sre", "#release",
];
const OPENERS: &[&str] = &[
    "fyi ",
    "heads up: ",
    "TIL ",
    "btw ",
    "turns out ",
    "PSA: ",
    "",
];
const HOSTS: &[&str] = &[
    "build-01",
    "ci-runner",
    "laptop",
    "staging",
    "prod-eu",
    "the nas",
];

/// Verbs a configuration description often opens with (`Specifies whether …`).
const SETTING_VERBS: &[&str] = &[
    "Specifies",
    "Sets",
    "Controls",
    "Enables",
    "Determines",
    "Defines",
    "Selects",
    "Causes",
    "Allows",
    "Indicates",
    "Limits",
    "Configures",
    "Disables",
    "Gives",
    "Changes",
];

fn lcfirst(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) if chars.clone().next().is_some_and(char::is_lowercase) => {
            c.to_lowercase().collect::<String>() + chars.as_str()
        }
        Some(c) => c.to_string() + chars.as_str(),
        None => String::new(),
    }
}

/// The flag a person would type: the first long one, else the first.
fn main_flag(flags: &str) -> String {
    let parts: Vec<&str> = flags
        .split([',', ' '])
        .map(|p| p.trim())
        .filter(|p| p.starts_with('-'))
        .collect();
    let pick = parts
        .iter()
        .find(|p| p.starts_with("--"))
        .or(parts.first())
        .copied()
        .unwrap_or(flags);
    pick.split(['=', '[']).next().unwrap_or(pick).to_owned()
}

impl Book {
    /// Writes snippet `index` as a fact: round 0 in its usual register (sometimes another one),
    /// later rounds in its other registers, then with a context suffix. Skips a content already
    /// present.
    fn add(&mut self, index: usize, round: usize, rng: &mut Rng) {
        let snippet = &self.snippets[index];
        let templates = templates(snippet);
        let pick = if round == 0 {
            // Mostly the usual register, sometimes another one.
            if rng.below(100) < 75 {
                0
            } else {
                rng.below(templates.len())
            }
        } else {
            round % templates.len()
        };
        let (register, title, mut content) = write(snippet, templates[pick], rng);
        if round >= templates.len() {
            let host = rng.pick(HOSTS);
            content = format!("{content} (seen on {host}, round {round})");
        }
        if content.split_whitespace().count() < 3 || !self.seen.insert(content.clone()) {
            return;
        }
        self.facts.push((title, content));
        self.meta.push(Meta {
            register,
            snippet: index,
        });
    }
}

/// One way of writing a snippet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Template {
    NameLine,
    NameNote,
    OptionColon,
    OptionPrompt,
    OptionUse,
    SettingDash,
    SettingInline,
    ProsePlain,
    ProseDocs,
    ProseNote,
    ProseIssue,
    ChangeLine,
    ChangeBug,
    ChangeFix,
    ChangeBracket,
    LicenseFiles,
    LicenseOf,
    Chat,
}

/// The ways `snippet` can be written, its usual one first.
fn templates(snippet: &Snippet) -> Vec<Template> {
    use Template::*;
    match snippet {
        Snippet::Name { .. } => vec![NameLine, NameNote, Chat],
        Snippet::Option { .. } => vec![OptionColon, OptionPrompt, OptionUse, Chat],
        Snippet::Setting { .. } => vec![SettingDash, SettingInline, Chat],
        Snippet::Prose { text, .. } => {
            let n = text.split_whitespace().count();
            let mut out = vec![ProsePlain, ProseDocs];
            if n <= 16 {
                out.push(ProseNote);
            }
            if n <= 30 {
                out.push(Chat);
            }
            let lower = text.to_lowercase();
            if ["fail", "error", "crash", "broken", "bug"]
                .iter()
                .any(|w| lower.contains(w))
            {
                out.push(ProseIssue);
            }
            out
        }
        Snippet::Change { text, bug, .. } => {
            let mut out = vec![ChangeLine];
            if bug.is_some() {
                out.push(ChangeBug);
            }
            if fix_rest(text).is_some() {
                out.push(ChangeFix);
            }
            out.extend([ChangeBracket, Chat]);
            out
        }
        Snippet::License { .. } => vec![LicenseFiles, LicenseOf],
    }
}

/// An entry's text after a leading "Fix"/"Fixes"/"Fixed", if it opens so.
fn fix_rest(text: &str) -> Option<&str> {
    ["fix ", "fixes ", "fixed "].iter().find_map(|p| {
        text.get(..p.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(p))
            .then(|| &text[p.len()..])
    })
}

/// The subject of a snippet (command, file, package, page), what it says, and its handle (a
/// flag, a setting, files), as questions name them.
fn about(snippet: &Snippet) -> (&str, &str, Option<String>) {
    match snippet {
        Snippet::Name { name, summary, .. } => (name, summary, None),
        Snippet::Option {
            command,
            flags,
            desc,
        } => (command, desc, Some(main_flag(flags))),
        Snippet::Setting { file, key, desc } => (file, desc, Some(key.clone())),
        Snippet::Prose { source, text } => (source, text, None),
        Snippet::Change { package, text, .. } => (package, text, None),
        Snippet::License {
            package,
            files,
            holder,
            ..
        } => (package, holder, Some(files.clone())),
    }
}

/// `snippet` written with `template`: its register, title and content.
fn write(snippet: &Snippet, template: Template, rng: &mut Rng) -> (Register, String, String) {
    use Template::*;
    if template == Chat {
        let (nick, channel, opener) = (*rng.pick(NICKS), *rng.pick(CHANNELS), *rng.pick(OPENERS));
        let text = match snippet {
            Snippet::Name { name, summary, .. } => format!("{name} is the thing to {summary}"),
            Snippet::Option {
                command,
                flags,
                desc,
            } => format!("{command} {} {}", main_flag(flags), lcfirst(desc)),
            Snippet::Setting { file, key, desc } => format!("{key} in {file}: {}", lcfirst(desc)),
            Snippet::Change {
                package,
                version,
                text,
                ..
            } => format!("{package}{}: {text}", in_version(version)),
            Snippet::Prose { text, .. } | Snippet::License { holder: text, .. } => text.clone(),
        };
        return (
            Register::Chat,
            format!("{channel} {nick}"),
            format!("{nick}: {opener}{}", lcfirst(&text)),
        );
    }
    match (snippet, template) {
        (
            Snippet::Name {
                name,
                section,
                summary,
            },
            NameLine,
        ) => (
            Register::Note,
            name.clone(),
            format!("{name}({section}): {summary}"),
        ),
        (Snippet::Name { name, summary, .. }, _) => (
            Register::Note,
            format!("what {name} is"),
            format!("Note to self: {name} = {summary}"),
        ),
        (
            Snippet::Option {
                command,
                flags,
                desc,
            },
            t,
        ) => {
            let flag = main_flag(flags);
            let (title, content) = match t {
                OptionColon => (
                    format!("{command} {flag}"),
                    format!("{command} {flags}: {desc}"),
                ),
                OptionPrompt => (
                    format!("{command} {flag}"),
                    format!("$ {command} {flag} …  # {desc}"),
                ),
                _ => (
                    format!("{command} tip"),
                    format!("Use `{command} {flag}`: {}", lcfirst(desc)),
                ),
            };
            (Register::Command, title, content)
        }
        (Snippet::Setting { file, key, desc }, SettingDash) => (
            Register::Config,
            format!("{file}: {key}"),
            format!("{file}: {key} - {desc}"),
        ),
        (Snippet::Setting { file, key, desc }, _) => {
            let first = desc.split_whitespace().next().unwrap_or("");
            let content = if SETTING_VERBS.contains(&first) {
                format!("In {file}, {key} {}", lcfirst(desc))
            } else {
                format!("In {file}, set {key}: {desc}")
            };
            (Register::Config, format!("{file} {key}"), content)
        }
        (Snippet::Prose { source, text }, t) => match t {
            ProseDocs => {
                let head: Vec<&str> = text.split_whitespace().take(4).collect();
                (
                    Register::Prose,
                    format!("{source}: {} …", head.join(" ")),
                    format!("From the {source} docs: {text}"),
                )
            }
            ProseNote => (
                Register::Note,
                format!("{source} note"),
                format!("{source}: {text}"),
            ),
            ProseIssue => (
                Register::Issue,
                format!("{source} issue"),
                format!("Issue ({source}): {text}"),
            ),
            _ => (Register::Prose, source.clone(), text.clone()),
        },
        (
            Snippet::Change {
                package,
                version,
                text,
                bug,
            },
            t,
        ) => {
            let v = in_version(version);
            let (title, content) = match (t, bug) {
                (ChangeBug, Some(bug)) => (
                    format!("bug #{bug}"),
                    format!("#{bug} ({package}): {text} - closed{v}"),
                ),
                (ChangeFix, _) => (
                    format!("{package} problem"),
                    format!(
                        "{package} problem: {}, fixed{v}",
                        fix_rest(text).unwrap_or(text)
                    ),
                ),
                (ChangeBracket, _) => (
                    format!("{package} changelog"),
                    format!("[{package}] {text}"),
                ),
                _ => (
                    format!("{package} {version}").trim().to_owned(),
                    format!("{package}{v}: {text}"),
                ),
            };
            (Register::Issue, title, content)
        }
        (
            Snippet::License {
                package,
                files,
                holder,
                license,
            },
            t,
        ) => {
            let (title, content) = if t == LicenseFiles {
                (
                    format!("{package} copyright"),
                    format!("{package}: files {files} are under {license}, copyright {holder}"),
                )
            } else {
                (
                    format!("{package} license"),
                    format!("License of {package} ({files}): {license}; (c) {holder}"),
                )
            };
            (Register::License, title, content)
        }
    }
}

/// ` (in 1.2-3)`, or nothing without a version.
fn in_version(version: &str) -> String {
    if version.is_empty() {
        String::new()
    } else {
        format!(" (in {version})")
    }
}

// ---------------------------------------------------------------------------------------------
// Queries.

/// Words too common to identify anything, and the words questions are framed with.
const STOPWORDS: &[&str] = &[
    "a", "about", "above", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as",
    "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by",
    "can", "could", "did", "do", "does", "doing", "down", "during", "each", "either", "else",
    "etc", "even", "every", "few", "for", "from", "further", "had", "has", "have", "having", "he",
    "her", "here", "hers", "him", "his", "how", "however", "i", "if", "in", "into", "is", "it",
    "its", "itself", "just", "may", "me", "might", "more", "most", "must", "my", "no", "nor",
    "not", "now", "of", "off", "on", "once", "one", "only", "or", "other", "our", "out", "over",
    "own", "same", "shall", "she", "should", "so", "some", "such", "than", "that", "the", "their",
    "them", "then", "there", "these", "they", "this", "those", "through", "thus", "to", "too",
    "under", "until", "up", "upon", "us", "use", "used", "uses", "using", "very", "via", "was",
    "we", "were", "what", "when", "where", "whether", "which", "while", "who", "whom", "why",
    "will", "with", "within", "without", "would", "yet", "you", "your", "note", "self", "fyi",
    "btw", "til", "psa", "heads", "turns", "seen", "round", "docs", "issue", "problem", "fixed",
    "closed", "files", "file", "see", "default", "set", "option", "options",
];

/// Groups of technical words that can stand for one another.
const SYNONYMS: &[&[&str]] = &[
    &["remove", "delete", "erase"],
    &["removes", "deletes", "erases"],
    &["removed", "deleted", "erased"],
    &["show", "display"],
    &["shows", "displays"],
    &["print", "output"],
    &["prints", "outputs"],
    &["create", "generate"],
    &["creates", "generates"],
    &["created", "generated"],
    &["directory", "folder"],
    &["directories", "folders"],
    &["start", "launch", "begin"],
    &["starts", "launches", "begins"],
    &["stop", "halt"],
    &["error", "failure", "fault"],
    &["errors", "failures", "faults"],
    &["fix", "repair"],
    &["change", "modify", "alter"],
    &["changes", "modifies", "alters"],
    &["changed", "modified", "altered"],
    &["run", "execute"],
    &["runs", "executes"],
    &["allow", "permit"],
    &["allows", "permits"],
    &["enable", "activate"],
    &["enables", "activates"],
    &["disable", "deactivate"],
    &["user", "account"],
    &["users", "accounts"],
    &["password", "passphrase"],
    &["size", "length"],
    &["fast", "quick"],
    &["large", "big", "huge"],
    &["small", "tiny"],
    &["read", "load"],
    &["reads", "loads"],
    &["write", "save", "store"],
    &["writes", "saves", "stores"],
    &["copy", "duplicate"],
    &["move", "relocate"],
    &["search", "find"],
    &["searches", "finds"],
    &["check", "verify", "validate"],
    &["checks", "verifies", "validates"],
    &["connect", "attach"],
    &["connection", "link"],
    &["send", "transmit"],
    &["sends", "transmits"],
    &["message", "notice"],
    &["messages", "notices"],
    &["warning", "alert"],
    &["warnings", "alerts"],
    &["bug", "defect"],
    &["bugs", "defects"],
    &["update", "upgrade", "refresh"],
    &["updated", "upgraded", "refreshed"],
    &["old", "previous", "legacy"],
    &["new", "fresh"],
    &["version", "release"],
    &["versions", "releases"],
    &["support", "handle"],
    &["ignore", "skip"],
    &["ignored", "skipped"],
    &["require", "need"],
    &["requires", "needs"],
    &["required", "needed"],
    &["contain", "include"],
    &["contains", "includes"],
    &["program", "application", "tool"],
    &["programs", "applications", "tools"],
    &["machine", "host", "computer"],
    &["disk", "drive"],
    &["compress", "pack", "shrink"],
    &["compressed", "packed", "shrunk"],
    &["expand", "decompress", "unpack"],
    &["describe", "explain"],
    &["describes", "explains"],
    &["behaviour", "behavior"],
    &["color", "colour"],
    &["wrong", "incorrect", "invalid"],
    &["missing", "absent"],
    &["empty", "blank"],
    &["entry", "record", "item"],
    &["entries", "records", "items"],
    &["limit", "maximum", "cap"],
    &["timeout", "deadline"],
    &["process", "task"],
    &["processes", "tasks"],
    &["kill", "terminate"],
    &["wait", "pause"],
    &["retry", "repeat"],
    &["value", "setting"],
    &["values", "settings"],
    &["name", "label"],
    &["names", "labels"],
    &["first", "initial"],
    &["last", "final"],
    &["list", "enumerate"],
    &["lists", "enumerates"],
    &["crash", "abort"],
    &["crashes", "aborts"],
    &["network", "net"],
    &["server", "daemon"],
    &["servers", "daemons"],
    &["library", "lib"],
    &["documentation", "docs", "manual"],
    &["install", "deploy"],
    &["installed", "deployed"],
    &["building", "compiling"],
    &["build", "compile"],
    &["builds", "compiles"],
    &["path", "location"],
    &["paths", "locations"],
    &["output", "result"],
];

/// Neighbouring keys on a QWERTY keyboard.
fn neighbour(c: char) -> Option<&'static str> {
    Some(match c {
        'q' => "wa",
        'w' => "qes",
        'e' => "wrd",
        'r' => "etf",
        't' => "ryg",
        'y' => "tuh",
        'u' => "yij",
        'i' => "uok",
        'o' => "ipl",
        'p' => "ol",
        'a' => "qsz",
        's' => "adwx",
        'd' => "sfe",
        'f' => "dgr",
        'g' => "fht",
        'h' => "gjy",
        'j' => "hku",
        'k' => "jli",
        'l' => "ko",
        'z' => "xa",
        'x' => "zcs",
        'c' => "xvd",
        'v' => "cbf",
        'b' => "vng",
        'n' => "bmh",
        'm' => "nj",
        _ => return None,
    })
}

/// The tokens of `text` as FTS5's `unicode61` tokenizer sees them: alphanumeric runs, lowercase.
pub fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Every fact holding a token, as a sorted list of fact indices.
struct Index {
    postings: HashMap<String, Vec<u32>>,
    rare: usize,
}

impl Index {
    fn new(facts: &[(String, String)]) -> Self {
        let mut postings: HashMap<String, Vec<u32>> = HashMap::new();
        let mut token = String::new();
        for (i, (title, content)) in facts.iter().enumerate() {
            let i = i as u32;
            // Facts are visited in order, so a list whose last entry is `i` already has it.
            let mut add = |token: &str| match postings.get_mut(token) {
                Some(list) if list.last() == Some(&i) => {}
                Some(list) => list.push(i),
                None => {
                    postings.insert(token.to_owned(), vec![i]);
                }
            };
            for c in title
                .chars()
                .chain(std::iter::once(' '))
                .chain(content.chars())
            {
                if c.is_alphanumeric() {
                    token.extend(c.to_lowercase());
                } else if !token.is_empty() {
                    add(&token);
                    token.clear();
                }
            }
            if !token.is_empty() {
                add(&token);
                token.clear();
            }
        }
        Self {
            postings,
            rare: (facts.len() / 100).max(50),
        }
    }

    fn df(&self, token: &str) -> usize {
        self.postings.get(token).map_or(0, Vec::len)
    }

    /// The facts holding every one of `tokens`.
    fn holding_all(&self, tokens: &[String]) -> Vec<u32> {
        let mut lists: Vec<&Vec<u32>> = Vec::new();
        for t in tokens {
            match self.postings.get(t) {
                Some(list) => lists.push(list),
                None => return Vec::new(),
            }
        }
        lists.sort_by_key(|l| l.len());
        let Some((first, rest)) = lists.split_first() else {
            return Vec::new();
        };
        first
            .iter()
            .copied()
            .filter(|f| rest.iter().all(|l| l.binary_search(f).is_ok()))
            .collect()
    }

    /// Whether `from` (the fact's words a query was made from) identify `target` alone, one of
    /// them is rare, and `query` (the words it holds) is in no other fact.
    fn pins(&self, target: usize, from: &[String], query: &[String]) -> bool {
        let content: Vec<String> = from.iter().filter(|t| is_content(t)).cloned().collect();
        if content.is_empty() || !content.iter().any(|t| self.df(t) <= self.rare) {
            return false;
        }
        if self.holding_all(&content) != [target as u32] {
            return false;
        }
        let asked: Vec<String> = query.iter().filter(|t| is_content(t)).cloned().collect();
        self.holding_all(&asked)
            .iter()
            .all(|&f| f as usize == target)
    }
}

fn is_content(token: &str) -> bool {
    token.chars().count() >= 3
        && token.chars().any(char::is_alphabetic)
        && !STOPWORDS.contains(&token)
}

/// The words of a text as a person would retype them: split on spaces, outer punctuation off.
fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| w.trim_matches(|c: char| "\"'.,;:()[]{}<>!?`…#$".contains(c)))
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .map(str::to_owned)
        .collect()
}

fn join_tokens(words: &[String]) -> Vec<String> {
    words.iter().flat_map(|w| tokens(w)).collect()
}

struct Maker<'a> {
    book: &'a Book,
    index: Index,
    synonyms: HashMap<&'static str, &'static [&'static str]>,
}

fn make_queries(book: &Book, per_kind: usize, rng: &mut Rng) -> anyhow::Result<Vec<Query>> {
    let mut synonyms = HashMap::new();
    for group in SYNONYMS {
        for w in *group {
            synonyms.entry(*w).or_insert(*group);
        }
    }
    let maker = Maker {
        book,
        index: Index::new(&book.facts),
        synonyms,
    };
    let mut order: Vec<usize> = (0..book.facts.len()).collect();
    rng.shuffle(&mut order);
    let mut used = vec![false; book.facts.len()];
    let mut queries = Vec::with_capacity(per_kind * QueryKind::ALL.len());
    for kind in QueryKind::ALL {
        let mut made = 0;
        for &target in &order {
            if made == per_kind {
                break;
            }
            if used[target] {
                continue;
            }
            if let Some(text) = maker.make(kind, target, rng) {
                used[target] = true;
                queries.push(Query { text, kind, target });
                made += 1;
            }
        }
        if made < per_kind {
            bail!(
                "only {made} of {per_kind} unambiguous {kind} queries could be made from {} facts; ask for fewer queries or more facts",
                book.facts.len()
            );
        }
    }
    Ok(queries)
}

/// Tries per target and kind before giving the target up.
const TRIES: usize = 6;

impl Maker<'_> {
    fn make(&self, kind: QueryKind, target: usize, rng: &mut Rng) -> Option<String> {
        let content = &self.book.facts[target].1;
        let all = words(content);
        (0..TRIES).find_map(|_| match kind {
            QueryKind::Words => self.words(target, &all, rng),
            QueryKind::WordForms => self.word_forms(target, &all, rng),
            QueryKind::Paraphrase => self.paraphrase(target, &all, rng),
            QueryKind::Question => self.question(target, rng),
            QueryKind::Misspelling => self.misspelling(target, &all, rng),
        })
    }

    /// A window of 3–5 consecutive words holding at least two content words.
    fn window(&self, all: &[String], rng: &mut Rng) -> Option<Vec<String>> {
        let len = 3 + rng.below(3);
        if all.len() < len {
            return None;
        }
        let start = rng.below(all.len() - len + 1);
        let window = all[start..start + len].to_vec();
        let content = join_tokens(&window)
            .iter()
            .filter(|t| is_content(t))
            .count();
        (content >= 2).then_some(window)
    }

    /// 3–5 consecutive content words (stopwords skipped), lowercase.
    fn content_run(&self, all: &[String], rng: &mut Rng) -> Option<Vec<String>> {
        let mut seen = HashSet::new();
        let content: Vec<String> = all
            .iter()
            .map(|w| w.to_lowercase())
            .filter(|w| w.chars().all(char::is_alphabetic) && is_content(w))
            .filter(|w| seen.insert(w.clone()))
            .collect();
        let len = 3 + rng.below(3);
        if content.len() < len {
            return None;
        }
        let start = rng.below(content.len() - len + 1);
        Some(content[start..start + len].to_vec())
    }

    fn words(&self, target: usize, all: &[String], rng: &mut Rng) -> Option<String> {
        let window = self.window(all, rng)?;
        let toks = join_tokens(&window);
        self.index
            .pins(target, &toks, &toks)
            .then(|| window.join(" "))
    }

    fn word_forms(&self, target: usize, all: &[String], rng: &mut Rng) -> Option<String> {
        let run = self.content_run(all, rng)?;
        let fact_tokens: HashSet<String> = tokens(&self.book.facts[target].1).into_iter().collect();
        let mut changed = 0;
        let query: Vec<String> = run
            .iter()
            .map(|w| match self.inflect(w, &fact_tokens, rng) {
                Some(form) => {
                    changed += 1;
                    form
                }
                None => w.clone(),
            })
            .collect();
        (changed >= 2 && self.index.pins(target, &run, &query)).then(|| query.join(" "))
    }

    /// Another inflection of `word` that the corpus uses and the fact does not.
    fn inflect(&self, word: &str, fact: &HashSet<String>, rng: &mut Rng) -> Option<String> {
        let mut forms = inflections(word);
        rng.shuffle(&mut forms);
        forms
            .into_iter()
            .find(|f| f != word && !fact.contains(f) && self.index.df(f) > 0)
    }

    fn paraphrase(&self, target: usize, all: &[String], rng: &mut Rng) -> Option<String> {
        let run = self.content_run(all, rng)?;
        let fact_tokens: HashSet<String> = tokens(&self.book.facts[target].1).into_iter().collect();
        let mut swapped = 0;
        let query: Vec<String> = run
            .iter()
            .map(|w| {
                let options: Vec<&str> = self
                    .synonyms
                    .get(w.as_str())
                    .map(|g| {
                        g.iter()
                            .copied()
                            .filter(|s| *s != w && !fact_tokens.contains(*s))
                            .collect()
                    })
                    .unwrap_or_default();
                if swapped < 2 && !options.is_empty() {
                    swapped += 1;
                    rng.pick(&options).to_string()
                } else {
                    w.clone()
                }
            })
            .collect();
        (swapped >= 1 && swapped < run.len() && self.index.pins(target, &run, &query))
            .then(|| query.join(" "))
    }

    fn question(&self, target: usize, rng: &mut Rng) -> Option<String> {
        let meta = self.book.meta[target];
        let (subject, said, handle) = about(&self.book.snippets[meta.snippet]);
        let about = self.content_run(&words(said), rng).or_else(|| {
            let w: Vec<String> = words(said)
                .into_iter()
                .map(|w| w.to_lowercase())
                .filter(|w| is_content(w))
                .take(3)
                .collect();
            (w.len() >= 2).then_some(w)
        })?;
        let about = &about[..about.len().min(3)];
        let a = about.join(" ");
        let handle = handle.as_deref().unwrap_or(subject);
        // "how do I …" reads well only from the start of what the option does.
        let from_start = words(said)
            .first()
            .is_some_and(|w| w.to_lowercase() == about[0]);
        let text = match (meta.register, rng.below(2)) {
            (Register::Command, _) if from_start => format!("how do I {a} with {subject}?"),
            (Register::Command, _) => format!("which {subject} flag is for {a}?"),
            (Register::Config, 0) => format!("what does {handle} in {subject} do about {a}?"),
            (Register::Config, _) => format!("which {subject} setting is about {a}?"),
            (Register::Note, 0) => format!("which command does {a}?"),
            (Register::Note, _) => format!("what is {subject} for, {a}?"),
            (Register::Issue, 0) => format!("was the {a} thing in {subject} fixed?"),
            (Register::Issue, _) => format!("which {subject} version changed {a}?"),
            (Register::Prose, 0) => format!("what do the {subject} docs say about {a}?"),
            (Register::Prose, _) => format!("how does {subject} deal with {a}?"),
            (Register::Chat, 0) => format!("who said something about {a} in chat?"),
            (Register::Chat, _) => format!("what was that about {subject} and {a}?"),
            (Register::License, 0) => format!("what license covers {handle} in {subject} ({a})?"),
            (Register::License, _) => {
                format!("who holds the copyright on {subject} {handle} ({a})?")
            }
        };
        let mut from: Vec<String> = about.to_vec();
        from.extend(tokens(subject).into_iter().filter(|t| {
            tokens(&self.book.facts[target].1).contains(t)
                || tokens(&self.book.facts[target].0).contains(t)
        }));
        let from: Vec<String> = from.iter().flat_map(|w| tokens(w)).collect();
        let asked = tokens(&text);
        self.index.pins(target, &from, &asked).then_some(text)
    }

    fn misspelling(&self, target: usize, all: &[String], rng: &mut Rng) -> Option<String> {
        let window = self.window(all, rng)?;
        let toks = join_tokens(&window);
        let candidates: Vec<usize> = window
            .iter()
            .enumerate()
            .filter(|(_, w)| {
                w.len() >= 5 && w.chars().all(|c| c.is_ascii_lowercase()) && is_content(w)
            })
            .map(|(i, _)| i)
            .collect();
        if candidates.is_empty() {
            return None;
        }
        let typos = 1 + rng.below(2).min(candidates.len() - 1);
        let mut picked = candidates;
        rng.shuffle(&mut picked);
        let mut query = window.clone();
        for &i in &picked[..typos] {
            query[i] = self.typo(&window[i], rng)?;
        }
        let asked = join_tokens(&query);
        (query != window && self.index.pins(target, &toks, &asked)).then(|| query.join(" "))
    }

    /// `word` with one typo that is no word of the corpus.
    fn typo(&self, word: &str, rng: &mut Rng) -> Option<String> {
        let chars: Vec<char> = word.chars().collect();
        for _ in 0..8 {
            // Never the first letter: people rarely get that one wrong.
            let at = 1 + rng.below(chars.len() - 1);
            let mut out = chars.clone();
            match rng.below(4) {
                0 if at + 1 < chars.len() => out.swap(at, at + 1),
                1 => {
                    out.remove(at);
                }
                2 => out.insert(at, chars[at]),
                _ => {
                    let keys: Vec<char> = neighbour(chars[at])?.chars().collect();
                    out[at] = *rng.pick(&keys);
                }
            }
            let typo: String = out.into_iter().collect();
            if typo != word && self.index.df(&typo) == 0 {
                return Some(typo);
            }
        }
        None
    }
}

/// Candidate inflections of a lowercase word: number, -ing/-ed/-s, -tion; the caller keeps the
/// ones the corpus uses.
fn inflections(word: &str) -> Vec<String> {
    let w = word;
    let n = w.len();
    if n < 4 || !w.chars().all(|c| c.is_ascii_lowercase()) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut push = |s: String| {
        if s.len() >= 3 {
            out.push(s);
        }
    };
    let consonant = |c: u8| !b"aeiou".contains(&c);
    let last = w.as_bytes()[n - 1];
    // Number (and third person).
    if let Some(stem) = w.strip_suffix("ies") {
        push(format!("{stem}y"));
    } else if ["sses", "shes", "ches", "xes"]
        .iter()
        .any(|s| w.ends_with(s))
    {
        push(w[..n - 2].to_owned());
    } else if w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") && !w.ends_with("is") {
        push(w[..n - 1].to_owned());
    } else if last == b'y' && consonant(w.as_bytes()[n - 2]) {
        push(format!("{}ies", &w[..n - 1]));
    } else if ["s", "x", "ch", "sh"].iter().any(|s| w.ends_with(s)) {
        push(format!("{w}es"));
    } else {
        push(format!("{w}s"));
    }
    // -ing / -ed.
    let stems: Vec<String> = if let Some(stem) = w.strip_suffix("ing") {
        vec![stem.to_owned(), format!("{stem}e"), undouble(stem)]
    } else if let Some(stem) = w.strip_suffix("ed") {
        vec![stem.to_owned(), format!("{stem}e"), undouble(stem)]
    } else {
        vec![w.to_owned()]
    };
    for stem in &stems {
        if stem.len() < 3 {
            continue;
        }
        let bare = stem.strip_suffix('e').unwrap_or(stem);
        push(stem.clone());
        push(format!("{bare}ing"));
        push(format!("{bare}ed"));
        push(format!("{stem}s"));
        let b = stem.as_bytes();
        if b.len() >= 3 && consonant(b[b.len() - 1]) && !consonant(b[b.len() - 2]) {
            let doubled = format!("{stem}{}", char::from(b[b.len() - 1]));
            push(format!("{doubled}ing"));
            push(format!("{doubled}ed"));
        }
    }
    // -tion.
    if let Some(stem) = w.strip_suffix("ation") {
        push(format!("{stem}e"));
        push(stem.to_owned());
        push(format!("{stem}ing"));
    } else if let Some(stem) = w.strip_suffix("ion") {
        push(stem.to_owned());
        push(format!("{stem}e"));
    } else {
        let bare = w.strip_suffix('e').unwrap_or(w);
        push(format!("{bare}ation"));
        push(format!("{bare}ion"));
        push(format!("{w}ion"));
    }
    out
}

fn undouble(stem: &str) -> String {
    let b = stem.as_bytes();
    if b.len() >= 2 && b[b.len() - 1] == b[b.len() - 2] {
        stem[..stem.len() - 1].to_owned()
    } else {
        stem.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small build over this machine's docs (the same path every caller takes).
    fn small() -> Corpus {
        build(3000, 20).expect("the machine has documentation to build from")
    }

    #[test]
    fn a_build_is_deterministic() {
        let (a, b) = (small(), small());
        assert_eq!(a.facts, b.facts);
        assert_eq!(a.queries, b.queries);
    }

    #[test]
    fn every_kind_is_there_with_valid_distinct_targets() {
        let corpus = small();
        assert_eq!(corpus.facts.len(), 3000);
        for kind in QueryKind::ALL {
            let n = corpus.queries.iter().filter(|q| q.kind == kind).count();
            assert_eq!(n, 20, "{kind}");
        }
        let mut targets = HashSet::new();
        for q in &corpus.queries {
            assert!(q.target < corpus.facts.len());
            assert!(
                targets.insert(q.target),
                "fact {} is targeted twice",
                q.target
            );
            assert!(!q.text.trim().is_empty());
        }
    }

    #[test]
    fn no_two_facts_share_a_content() {
        let corpus = small();
        let mut seen = HashSet::new();
        for (_, content) in &corpus.facts {
            assert!(seen.insert(content), "duplicate fact: {content}");
        }
    }

    #[test]
    fn words_queries_are_in_their_target_and_misspellings_are_not() {
        let corpus = small();
        for q in &corpus.queries {
            let fact = &corpus.facts[q.target].1;
            let fact_tokens: HashSet<String> = tokens(fact).into_iter().collect();
            let query_tokens = tokens(&q.text);
            match q.kind {
                QueryKind::Words => {
                    let fact_run = tokens(fact);
                    let in_order = fact_run
                        .windows(query_tokens.len())
                        .any(|w| w == query_tokens.as_slice());
                    assert!(in_order, "{q:?} is not a run of {fact}");
                }
                QueryKind::Misspelling => {
                    assert!(!fact.contains(&q.text), "{q:?} is spelt as in {fact}");
                    let wrong = query_tokens
                        .iter()
                        .filter(|t| !fact_tokens.contains(*t))
                        .count();
                    assert!((1..=2).contains(&wrong), "{q:?}: {wrong} typos");
                }
                QueryKind::WordForms | QueryKind::Paraphrase => {
                    let new = query_tokens
                        .iter()
                        .filter(|t| !fact_tokens.contains(*t))
                        .count();
                    assert!(new >= 1, "{q:?} only repeats {fact}");
                }
                QueryKind::Question => assert!(q.text.ends_with('?'), "{q:?}"),
            }
        }
    }

    #[test]
    fn no_documentation_is_a_clear_error() {
        let err = build_from(&[], 10, 1).expect_err("no sources");
        assert!(err.to_string().contains("/usr/share/man"), "{err}");
        let unreadable = Source {
            path: PathBuf::from("no-such-readme"),
            kind: SourceKind::Readme,
            name: "demo".into(),
        };
        let err = build_from(&[unreadable], 10, 1).expect_err("nothing to read");
        assert!(err.to_string().contains("no usable text"), "{err}");
    }

    #[test]
    fn sources_that_run_short_are_rendered_again_without_duplicates() {
        let dir = crate::TempDir::new("heldout-readme");
        let path = dir.path().join("README");
        let text = "The frobnicator rotates every widget log file once a week by default.\n\nSpindle daemons restart automatically whenever their configuration directory changes on disk.\n";
        std::fs::write(&path, text).expect("write a README");
        let source = Source {
            path,
            kind: SourceKind::Readme,
            name: "demo".into(),
        };
        let corpus = build_from(&[source], 40, 0).expect("variants fill the count");
        assert_eq!(corpus.facts.len(), 40);
        let distinct: HashSet<&String> = corpus.facts.iter().map(|(_, c)| c).collect();
        assert_eq!(distinct.len(), 40);
    }

    #[test]
    fn roff_is_read_as_text() {
        let page = ".TH DEMO 1\n.SH NAME\ndemo \\- frob the \\fBwidgets\\fR quickly\n.SH OPTIONS\n.TP\n\\fB\\-k\\fR, \\fB\\-\\-keep\\fR\nKeep (don't delete) input files during compression.\n.SH DESCRIPTION\nThe \\fIdemo\\fP tool frobs widgets in place\\(emit never copies them to another disk.\n";
        let snippets = man_snippets("demo", "1", page);
        assert_eq!(
            snippets,
            vec![
                Snippet::Name {
                    name: "demo".into(),
                    section: "1".into(),
                    summary: "frob the widgets quickly".into()
                },
                Snippet::Option {
                    command: "demo".into(),
                    flags: "-k, --keep".into(),
                    desc: "Keep (don't delete) input files during compression.".into()
                },
                Snippet::Prose {
                    source: "demo".into(),
                    text:
                        "The demo tool frobs widgets in place-it never copies them to another disk."
                            .into()
                },
            ]
        );
        assert_eq!(main_flag("-k, --keep"), "--keep");
        assert_eq!(main_flag("-S suf, --suffix=suf"), "--suffix");
    }

    #[test]
    fn changelog_entries_carry_package_version_and_bug() {
        let log = "gzip (1.12-1) sid; urgency=high\n\n  * new upstream release\n    - zgrep: fix arbitrary-file-write vulnerability\n      address CVE-2022-1271 (closes: #1009168)\n\n -- Someone <a@b.c>  Sat, 09 Apr 2022 22:22:26 -0400\n";
        let entries = changelog_snippets("gzip", log);
        assert_eq!(
            entries,
            vec![Snippet::Change {
                package: "gzip".into(),
                version: "1.12-1".into(),
                text: "zgrep: fix arbitrary-file-write vulnerability address CVE-2022-1271".into(),
                bug: Some("1009168".into()),
            }]
        );
    }

    #[test]
    fn inflections_cover_number_tense_and_tion() {
        let has = |w: &str, f: &str| inflections(w).iter().any(|x| x == f);
        assert!(has("files", "file"));
        assert!(has("file", "files"));
        assert!(has("compressing", "compressed"));
        assert!(has("configure", "configuration"));
        assert!(has("configuration", "configure"));
        assert!(has("running", "run"));
        assert!(has("entries", "entry"));
        assert!(has("stop", "stopped"));
    }
}
