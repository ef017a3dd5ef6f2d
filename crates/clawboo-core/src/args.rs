//! The one argument parser of every front door: the bins' commands (`cli`), `serve`'s flags
//! (`host`), the operator and ClawBrain commands, and `cargo xtask`.
//!
//! Owns: the rules every command line follows, over [`lexopt`] (a small pedantic lexer with no
//! dependencies): `--flag VALUE` and `--flag=VALUE`; a flag's value may not itself start with `--`
//! (so `--token --all` is a missing value, not a token named `--all`); `-h`/`--help` anywhere asks
//! for the command's help; an argument nobody expects is a [`Usage`] error naming it,
//! `unexpected argument '--bogus'`. What each command accepts is its own; the texts of the errors
//! are these.
//!
//! Guarantees: never panics on input (arguments that are not UTF-8 are a usage error); never
//! prints (the front door decides where a message goes and which exit code it gets).
//! Must never: read anything but the words it is given.

use std::fmt;
use std::str::FromStr;

/// A mistake in how a command was called: the front door prints it and exits 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Usage(pub String);

impl fmt::Display for Usage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

impl From<String> for Usage {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<&str> for Usage {
    fn from(message: &str) -> Self {
        Self(message.to_owned())
    }
}

/// One word of a command line, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Word {
    /// A flag, spelled as typed: `--listen`, `-h`. `-h` and `--help` both read as [`Word::Help`].
    Flag(String),
    /// `-h` or `--help`.
    Help,
    /// A word that is not a flag (a positional argument).
    Plain(String),
}

impl Word {
    /// The usage error of a word nobody expected here.
    pub fn unexpected(&self) -> Usage {
        let shown = match self {
            Word::Flag(flag) => flag.as_str(),
            Word::Help => "--help",
            Word::Plain(word) => word.as_str(),
        };
        unexpected(shown)
    }
}

/// `unexpected argument '<word>'`.
pub fn unexpected(word: &str) -> Usage {
    Usage(format!("unexpected argument '{word}'"))
}

/// The words of one command line, read one at a time.
pub struct Args {
    parser: lexopt::Parser,
    /// The flag whose value is expected next, for messages.
    last_flag: Option<String>,
}

impl fmt::Debug for Args {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Args").finish_non_exhaustive()
    }
}

impl Args {
    /// The words `words` (the program's name already removed).
    pub fn new<I, S>(words: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<std::ffi::OsString>,
    {
        Self {
            parser: lexopt::Parser::from_args(words),
            last_flag: None,
        }
    }

    /// The next word, `None` at the end.
    pub fn next_word(&mut self) -> Result<Option<Word>, Usage> {
        let arg = match self.parser.next() {
            Ok(arg) => arg,
            Err(e) => return Err(lexopt_usage(e)),
        };
        let word = match arg {
            None => return Ok(None),
            Some(lexopt::Arg::Short('h')) | Some(lexopt::Arg::Long("help")) => Word::Help,
            Some(lexopt::Arg::Short(c)) => Word::Flag(format!("-{c}")),
            Some(lexopt::Arg::Long(name)) => Word::Flag(format!("--{name}")),
            Some(lexopt::Arg::Value(value)) => Word::Plain(utf8(value)?),
        };
        self.last_flag = match &word {
            Word::Flag(flag) => Some(flag.clone()),
            _ => None,
        };
        Ok(Some(word))
    }

    /// The value of the flag just read (`--flag VALUE` or `--flag=VALUE`): `<flag> needs a value`
    /// when there is none or the next word is another `--` flag.
    pub fn value(&mut self) -> Result<String, Usage> {
        let flag = self.last_flag.take().unwrap_or_else(|| "this flag".into());
        let missing = || Usage(format!("{flag} needs a value"));
        // An attached `--flag=--x` is a value as typed; a separate `--x` is the next flag.
        if let Some(raw) = self.parser.try_raw_args()
            && raw
                .peek()
                .is_some_and(|next| next.to_string_lossy().starts_with("--"))
        {
            return Err(missing());
        }
        match self.parser.value() {
            Ok(value) => utf8(value),
            Err(_) => Err(missing()),
        }
    }

    /// The value of the flag just read, parsed; `explain` says what was wanted:
    /// `<flag> needs <explain>, got "<value>"`.
    pub fn parsed<T: FromStr>(&mut self, explain: &str) -> Result<T, Usage> {
        let flag = self.last_flag.clone().unwrap_or_default();
        let value = self.value()?;
        value
            .parse()
            .map_err(|_| Usage(format!("{flag} needs {explain}, got {value:?}")))
    }

    /// Every remaining word: a command that takes no arguments calls it to refuse extras (and to
    /// honour `--help`, which it reports as `Ok(true)`).
    pub fn finish(&mut self) -> Result<bool, Usage> {
        match self.next_word()? {
            None => Ok(false),
            Some(Word::Help) => Ok(true),
            Some(other) => Err(other.unexpected()),
        }
    }
}

/// Whether `words` ask for help anywhere (`-h`, `--help`), before any `--`.
pub fn wants_help<S: AsRef<str>>(words: &[S]) -> bool {
    words
        .iter()
        .map(AsRef::as_ref)
        .take_while(|w| *w != "--")
        .any(|w| w == "-h" || w == "--help")
}

fn utf8(value: std::ffi::OsString) -> Result<String, Usage> {
    value
        .into_string()
        .map_err(|raw| Usage(format!("argument {raw:?} is not valid UTF-8")))
}

/// lexopt's own complaints, in this module's words.
fn lexopt_usage(error: lexopt::Error) -> Usage {
    match error {
        lexopt::Error::UnexpectedValue { option, .. } => Usage(format!("{option} takes no value")),
        lexopt::Error::NonUnicodeValue(raw) => {
            Usage(format!("argument {raw:?} is not valid UTF-8"))
        }
        other => Usage(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Args {
        Args::new(line.split_whitespace())
    }

    #[test]
    fn flags_values_and_words_are_read_in_order() {
        let mut a = args("--listen 127.0.0.1:0 --all word --token=abc -h");
        assert_eq!(a.next_word(), Ok(Some(Word::Flag("--listen".into()))));
        assert_eq!(a.value(), Ok("127.0.0.1:0".into()));
        assert_eq!(a.next_word(), Ok(Some(Word::Flag("--all".into()))));
        assert_eq!(a.next_word(), Ok(Some(Word::Plain("word".into()))));
        assert_eq!(a.next_word(), Ok(Some(Word::Flag("--token".into()))));
        assert_eq!(a.value(), Ok("abc".into()));
        assert_eq!(a.next_word(), Ok(Some(Word::Help)));
        assert_eq!(a.next_word(), Ok(None));
    }

    #[test]
    fn a_missing_value_and_a_flag_in_its_place_are_named() {
        let mut a = args("--token");
        a.next_word().unwrap();
        assert_eq!(a.value(), Err(Usage("--token needs a value".into())));
        let mut b = args("--token --all");
        b.next_word().unwrap();
        assert_eq!(b.value(), Err(Usage("--token needs a value".into())));
        let mut c = args("--limit -1");
        c.next_word().unwrap();
        assert_eq!(
            c.parsed::<u32>("a whole number of rows"),
            Err(Usage(
                "--limit needs a whole number of rows, got \"-1\"".into()
            ))
        );
    }

    #[test]
    fn unexpected_words_are_quoted_once_and_flags_without_values_refuse_one() {
        assert_eq!(
            Word::Flag("--bogus".into()).unexpected().to_string(),
            "unexpected argument '--bogus'"
        );
        let mut a = args("--all=yes");
        assert_eq!(a.next_word(), Ok(Some(Word::Flag("--all".into()))));
        assert_eq!(a.finish(), Err(Usage("--all takes no value".into())));
        assert_eq!(args("-h").finish(), Ok(true));
        assert!(wants_help(&["serve", "--listen", "x", "--help"]));
        assert!(!wants_help(&["--", "--help"]));
    }
}
