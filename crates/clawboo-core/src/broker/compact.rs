//! Output compaction: a large tool output is shrunk before it reaches the model (and the audit),
//! by content-sniffing rules: version-control status to the changed files, test-runner output to
//! failures and summaries, HTML to text, otherwise runs of identical lines collapsed and the middle
//! of a long output elided; then long URLs shortened.
//!
//! Guarantees (the reference's): an output under 512 bytes passes unchanged; every line that looks
//! like a failure survives (trimmed, as a substring), else the original is returned; a compaction
//! that saves under 5 % returns the original; the result says which rule applied and the sizes, so
//! the caller can be told. Must never: add text that was not in the output (beyond the `(×N)` and
//! elision markers) or run anything.

use std::sync::LazyLock;

use regex::Regex;

/// Outputs smaller than this many UTF-8 bytes pass unchanged.
const MIN_BYTES: usize = 512;

/// A compaction saving less than this fraction is not worth it.
const MIN_SAVINGS: f64 = 0.05;

/// Lines kept at the start of an elided output.
const HEAD_LINES: usize = 40;

/// Lines kept at the end of an elided output.
const TAIL_LINES: usize = 20;

/// URLs longer than this many characters are shortened.
const MAX_URL_LEN: usize = 80;

fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a compaction pattern compiles")
}

static FAILURE: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)(\berror\b|err!|\bexception\b|traceback|\bfatal\b|\bfailure\b|\bfailed\b|\bpanic\b|✗|✘|✖|×)",
    )
});
static GIT_STATUS: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"On branch |Changes not staged for commit:|Untracked files:|nothing to commit|Changes to be committed:",
    )
});
static TEST_OUTPUT: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(✓|✗|\bPASS\b|\bFAIL\b|Test Files|\bTests:|\d+ (passing|failing))"));
static HTML: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?is)<!DOCTYPE|<html\b|<body\b|<div\b|(<[a-z]+[^>]*>.*</[a-z]+>)"));
static URL: LazyLock<Regex> = LazyLock::new(|| regex(r#"https?://[^\s)<>"']+"#));
static URL_HOST: LazyLock<Regex> = LazyLock::new(|| regex(r"^(https?://[^/]+)(/.*)?$"));
static GIT_KEEP: LazyLock<[Regex; 5]> = LazyLock::new(|| {
    [
        regex(r"^On branch "),
        regex(r"^Your branch "),
        regex(
            r"(Changes not staged|Changes to be committed|Untracked files|Changes not staged for commit):",
        ),
        regex(r"(?i)^\s+(modified|new file|deleted|renamed|copied|typechange|both modified):"),
        regex(r"^\s*[MADRCU?!]{1,2}\s+\S"),
    ]
});
static GIT_HINT: LazyLock<Regex> = LazyLock::new(|| regex(r"^\s*\(use "));
static TAB_FILE: LazyLock<Regex> = LazyLock::new(|| regex(r"^\t\S"));
static TEST_SUMMARY: LazyLock<Regex> = LazyLock::new(|| regex(r"(?i)(Tests?|Test Files|Suites?):"));
static TEST_COUNT: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?i)\b\d+\s+(passed|passing|failed|failing|skipped|pending)\b"));
static TAG_NAME: LazyLock<Regex> = LazyLock::new(|| regex(r"(?i)^<\s*(/?)\s*([a-z][a-z0-9]*)"));
static SPACE_BEFORE_NEWLINE: LazyLock<Regex> = LazyLock::new(|| regex(r"[ \t]+\n"));
static BLANK_RUN: LazyLock<Regex> = LazyLock::new(|| regex(r"\n{3,}"));

/// Closing tags that end a visual block.
const BLOCK_CLOSE_TAGS: &[&str] = &[
    "p", "div", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article",
];

/// Elements whose content is not prose and goes with the tag.
const OPAQUE_ELEMENTS: &[&str] = &["script", "style"];

/// What compaction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionStats {
    /// The rule that ran (`git-status`, `test-output`, `html-to-text`, `dedup-elide`), or why the
    /// output passed unchanged (`passthrough-small`, `passthrough-low-savings`,
    /// `failure-preserve-fallback`).
    pub rule: &'static str,
    /// The output's size in UTF-8 bytes.
    pub original_bytes: usize,
    /// The compacted size in UTF-8 bytes.
    pub compacted_bytes: usize,
    /// Whether the text was changed.
    pub applied: bool,
}

/// A compacted output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compacted {
    /// The text to hand on.
    pub text: String,
    /// What happened.
    pub stats: CompactionStats,
}

fn passthrough(text: &str, rule: &'static str) -> Compacted {
    Compacted {
        text: text.to_owned(),
        stats: CompactionStats {
            rule,
            original_bytes: text.len(),
            compacted_bytes: text.len(),
            applied: false,
        },
    }
}

/// Compacts one tool output (see the module documentation for the rules and guarantees).
pub fn compact(output: &str) -> Compacted {
    let original_bytes = output.len();
    if original_bytes < MIN_BYTES {
        return passthrough(output, "passthrough-small");
    }
    let (rule, body) = if GIT_STATUS.is_match(output) {
        ("git-status", compact_git_status(output))
    } else if TEST_OUTPUT.is_match(output) {
        ("test-output", compact_test_output(output))
    } else if HTML.is_match(output) {
        ("html-to-text", html_to_text(output))
    } else {
        ("dedup-elide", dedup_and_elide(output))
    };
    let compacted = shorten_urls(&body);
    if !preserves_failures(output, &compacted) {
        return passthrough(output, "failure-preserve-fallback");
    }
    let compacted_bytes = compacted.len();
    let savings = (original_bytes as f64 - compacted_bytes as f64) / original_bytes as f64;
    if savings < MIN_SAVINGS {
        return passthrough(output, "passthrough-low-savings");
    }
    Compacted {
        text: compacted,
        stats: CompactionStats {
            rule,
            original_bytes,
            compacted_bytes,
            applied: true,
        },
    }
}

fn preserves_failures(original: &str, compacted: &str) -> bool {
    original
        .split('\n')
        .filter(|l| FAILURE.is_match(l))
        .map(str::trim)
        .all(|needle| needle.is_empty() || compacted.contains(needle))
}

fn kept_or_original(kept: Vec<String>, output: &str) -> String {
    if kept.is_empty() {
        output.to_owned()
    } else {
        kept.join("\n")
    }
}

/// Version-control status: the branch, the section headers and the changed files.
fn compact_git_status(output: &str) -> String {
    let mut kept = Vec::new();
    for raw in output.split('\n') {
        let line = raw.trim_end();
        if line.trim().is_empty() || GIT_HINT.is_match(line) {
            continue;
        }
        let [branch, tracking, header, change, porcelain] = &*GIT_KEEP;
        if branch.is_match(line) || tracking.is_match(line) || header.is_match(line) {
            kept.push(line.to_owned());
        } else if change.is_match(line) || porcelain.is_match(line) || TAB_FILE.is_match(raw) {
            kept.push(line.trim().to_owned());
        }
    }
    kept_or_original(kept, output)
}

/// Test-runner output: failure lines and summaries; passing lines go.
fn compact_test_output(output: &str) -> String {
    let kept = output
        .split('\n')
        .map(str::trim_end)
        .filter(|line| !line.trim().is_empty())
        .filter(|line| {
            FAILURE.is_match(line) || TEST_SUMMARY.is_match(line) || TEST_COUNT.is_match(line)
        })
        .map(str::to_owned)
        .collect();
    kept_or_original(kept, output)
}

/// The index just past `</name …>` at or after `from`, if the element closes.
fn end_of_element(s: &str, from: usize, name: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut at = from;
    loop {
        at += s[at..].find("</")?;
        let name_at = at + 2;
        let name_end = name_at + name.len();
        let closes = bytes
            .get(name_at..name_end)
            .is_some_and(|n| n.eq_ignore_ascii_case(name.as_bytes()))
            && bytes
                .get(name_end)
                .is_some_and(|b| *b == b'>' || b.is_ascii_whitespace());
        if closes {
            return s[name_end..].find('>').map(|gt| name_end + gt + 1);
        }
        at = name_at;
    }
}

/// HTML to text in one forward pass that copies out the text between tags (so no removed tag can
/// splice a new one together), dropping comments, scripts and styles, breaking lines at block ends.
fn html_to_text(output: &str) -> String {
    let mut parts = String::with_capacity(output.len());
    let mut exhausted: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < output.len() {
        if !output[i..].starts_with('<') {
            let next = output[i..].find('<').map_or(output.len(), |n| i + n);
            parts.push_str(&output[i..next]);
            i = next;
            continue;
        }
        if output[i..].starts_with("<!--") {
            i = output[i + 4..]
                .find("-->")
                .map_or(output.len(), |end| i + 4 + end + 3);
            continue;
        }
        let Some(gt) = output[i + 1..].find('>').map(|n| i + 1 + n) else {
            parts.push_str(&output[i..]);
            break;
        };
        let tag = &output[i..=gt];
        let (is_close, name) = TAG_NAME
            .captures(tag)
            .map(|c| (&c[1] == "/", c[2].to_ascii_lowercase()))
            .unwrap_or((false, String::new()));
        if let Some(opaque) = OPAQUE_ELEMENTS
            .iter()
            .find(|o| !is_close && **o == name && !exhausted.contains(o))
        {
            match end_of_element(output, gt + 1, opaque) {
                Some(end) => i = end,
                None => {
                    exhausted.push(opaque);
                    i = gt + 1;
                }
            }
            continue;
        }
        if name == "br" || (is_close && BLOCK_CLOSE_TAGS.contains(&name.as_str())) {
            parts.push('\n');
        }
        i = gt + 1;
    }
    let decoded = parts
        .replace("&nbsp;", " ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    let tidy = SPACE_BEFORE_NEWLINE.replace_all(&decoded, "\n");
    BLANK_RUN.replace_all(&tidy, "\n\n").trim().to_owned()
}

/// URLs over 80 characters become `<scheme://host>/…[+N chars]`.
fn shorten_urls(output: &str) -> String {
    URL.replace_all(output, |c: &regex::Captures| {
        let url = &c[0];
        let len = url.chars().count();
        if len <= MAX_URL_LEN {
            return url.to_owned();
        }
        let host: String = URL_HOST
            .captures(url)
            .map(|h| h[1].to_owned())
            .unwrap_or_else(|| url.chars().take(32).collect());
        format!("{host}/\u{2026}[+{} chars]", len - host.chars().count())
    })
    .into_owned()
}

/// Runs of identical lines become `<line>  (×N)`; past 40 head + 20 tail lines, the middle is
/// elided except its failure lines.
fn dedup_and_elide(output: &str) -> String {
    let lines: Vec<&str> = output.split('\n').collect();
    let mut deduped: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let run = lines[i..].iter().take_while(|l| **l == lines[i]).count();
        deduped.push(if run > 1 {
            format!("{}  (\u{d7}{run})", lines[i])
        } else {
            lines[i].to_owned()
        });
        i += run;
    }
    if deduped.len() <= HEAD_LINES + TAIL_LINES + 1 {
        return deduped.join("\n");
    }
    let middle = &deduped[HEAD_LINES..deduped.len() - TAIL_LINES];
    let kept: Vec<&String> = middle.iter().filter(|l| FAILURE.is_match(l)).collect();
    let note = if kept.is_empty() {
        String::new()
    } else {
        format!(" (kept {} error line(s) below)", kept.len())
    };
    let marker = format!(
        "\u{2026} [{} lines elided]{note} \u{2026}",
        middle.len() - kept.len()
    );
    let mut out: Vec<&str> = deduped[..HEAD_LINES].iter().map(String::as_str).collect();
    out.push(&marker);
    out.extend(kept.iter().map(|l| l.as_str()));
    out.extend(
        deduped[deduped.len() - TAIL_LINES..]
            .iter()
            .map(String::as_str),
    );
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_output_passes_unchanged() {
        let out = compact("tiny output");
        assert_eq!(out.text, "tiny output");
        assert_eq!(out.stats.rule, "passthrough-small");
        assert!(!out.stats.applied);
    }

    #[test]
    fn identical_lines_collapse_into_one_with_a_count() {
        let text = vec!["Compiling crate foo v1.2.3 ..."; 300].join("\n");
        let out = compact(&text);
        assert_eq!(out.text, "Compiling crate foo v1.2.3 ...  (\u{d7}300)");
        assert_eq!(out.stats.rule, "dedup-elide");
        assert!(out.stats.applied);
        assert_eq!(out.stats.original_bytes, text.len());
        assert_eq!(out.stats.compacted_bytes, out.text.len());
    }

    #[test]
    fn a_long_output_keeps_head_tail_and_middle_errors() {
        let mut lines: Vec<String> = (0..200).map(|n| format!("line {n}")).collect();
        lines[100] = "error: linker failed".into();
        let out = compact(&lines.join("\n"));
        let got: Vec<&str> = out.text.split('\n').collect();
        assert_eq!(got.len(), 40 + 1 + 1 + 20);
        assert_eq!(got[39], "line 39");
        assert_eq!(
            got[40],
            "\u{2026} [139 lines elided] (kept 1 error line(s) below) \u{2026}"
        );
        assert_eq!(got[41], "error: linker failed");
        assert_eq!(got[42], "line 180");
        assert_eq!(got[61], "line 199");
    }

    #[test]
    fn git_status_keeps_branch_headers_and_files() {
        let mut text = String::from(
            "On branch main\nYour branch is up to date with 'origin/main'.\n\nChanges not staged for commit:\n  (use \"git add <file>...\" to update what will be committed)\n\tmodified:   src/lib.rs\n\nUntracked files:\n  (use \"git add <file>...\" to include in what will be committed)\n",
        );
        for n in 0..40 {
            text.push_str(&format!("\tnotes/draft-{n}.md\n"));
        }
        let out = compact(&text);
        assert_eq!(out.stats.rule, "git-status");
        assert!(out.text.starts_with(
            "On branch main\nYour branch is up to date with 'origin/main'.\nChanges not staged for commit:\nmodified:   src/lib.rs\nUntracked files:\nnotes/draft-0.md"
        ));
        assert!(!out.text.contains("(use"));
    }

    #[test]
    fn test_output_keeps_failures_and_summaries() {
        let mut text = String::new();
        for n in 0..30 {
            text.push_str(&format!(" \u{2713} suite > case number {n} passes\n"));
        }
        text.push_str(" \u{2717} suite > the broken one\n Tests: 1 failed, 30 passed\n");
        let out = compact(&text);
        assert_eq!(out.stats.rule, "test-output");
        assert_eq!(
            out.text,
            " \u{2717} suite > the broken one\n Tests: 1 failed, 30 passed"
        );
    }

    #[test]
    fn html_becomes_text_without_scripts_or_reassembled_tags() {
        let body = "<p>Hello &amp;lt; world</p>".repeat(30);
        let text = format!(
            "<!DOCTYPE html><html><head><style>p {{ color: red }}</style><script>alert(1)</script></head><body>{body}<scr<b>ipt>x</body></html>"
        );
        let out = compact(&text);
        assert_eq!(out.stats.rule, "html-to-text");
        assert!(
            out.text.starts_with("Hello &lt; world\nHello &lt; world"),
            "{}",
            out.text
        );
        assert!(!out.text.contains("alert"));
        assert!(!out.text.contains("color"));
        assert!(out.text.ends_with("ipt>x"), "{}", out.text);
    }

    #[test]
    fn long_urls_are_shortened_to_their_host() {
        let url = format!("https://example.test/{}", "a".repeat(100));
        let text = format!("{url}\n{}", "filler line\n".repeat(60));
        let out = compact(&text);
        assert!(
            out.text
                .starts_with("https://example.test/\u{2026}[+101 chars]"),
            "{}",
            out.text
        );
    }

    #[test]
    fn a_rule_that_would_drop_an_error_line_returns_the_original() {
        let mut text = String::from("On branch main\n");
        text.push_str("fatal: could not read from remote repository\n");
        text.push_str(&"\tsome/file.rs\n".repeat(60));
        let out = compact(&text);
        assert_eq!(out.stats.rule, "failure-preserve-fallback");
        assert_eq!(out.text, text);
    }

    #[test]
    fn low_savings_return_the_original() {
        let text: String = (0..60)
            .map(|n| format!("distinct line number {n}\n"))
            .collect();
        let out = compact(&text);
        assert_eq!(out.stats.rule, "passthrough-low-savings");
        assert_eq!(out.text, text);
    }
}
