//! The vault on disk: where a memory's file lives, walking the live files, and writing files.
//!
//! Owns: name and category validation (spec §1.2 [REC]), every path built from an argument, the
//! walk that finds live memories, atomic writes and the archive move.
//!
//! Guarantees: a path built here never leaves the vault root: names and categories are
//! kebab-case (so no `..`, separator, NUL or drive letter can get in), and every folder between
//! the root and a file is checked to be a real folder, not a symlink, before anything is written
//! through it. Files are written to a temporary sibling and renamed into place, so a reader sees
//! the old file or the new one, never half of one; [`create_new`] never replaces an existing file.
//! The walk never follows a symlink and skips `archive/`, hidden entries and the two root files.
//!
//! Must never: derive a path from an id (ids are looked up, not parsed), or follow a symlink.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::BrainError;

/// The root files that are never memories.
pub const ROOT_FILES: [&str; 2] = ["MEMORY.md", "STRATEGY.md"];

/// The archive sub-tree.
pub const ARCHIVE: &str = "archive";

/// True when `s` is kebab-case: `^[a-z0-9]+(-[a-z0-9]+)*$`.
pub fn is_kebab(s: &str) -> bool {
    !s.is_empty()
        && s.split('-').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

/// Checks a `name` or `category` argument; the error names the field and shows the value.
pub fn check_segment(field: &'static str, value: &str) -> Result<(), BrainError> {
    if is_kebab(value) {
        return Ok(());
    }
    let shown: String = value.chars().take(80).collect();
    Err(BrainError::BadSegment {
        field,
        value: shown.escape_debug().to_string(),
    })
}

/// A stat of a memory file: what tells the index that a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: i64,
    /// Size in bytes.
    pub size: i64,
    /// Inode (0 where the platform has none): a rename-into-place always changes it.
    pub ino: i64,
}

impl Stamp {
    /// The stamp of already-read metadata.
    pub fn of(meta: &fs::Metadata) -> Self {
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i64);
        #[cfg(unix)]
        let ino = std::os::unix::fs::MetadataExt::ino(meta) as i64;
        #[cfg(not(unix))]
        let ino = 0;
        Self {
            mtime_ns,
            size: meta.len() as i64,
            ino,
        }
    }

    /// The stamp of the file at `path` (not following a symlink).
    pub fn read(path: &Path) -> io::Result<Self> {
        fs::symlink_metadata(path).map(|m| Self::of(&m))
    }
}

/// Every live memory file under `root`: `(relative path with '/', stamp)`, sorted by path.
/// `before_listing` is called with each folder before it is listed (the watch adds it there).
pub fn walk(root: &Path, before_listing: impl Fn(&Path)) -> io::Result<Vec<(String, Stamp)>> {
    let mut out = Vec::new();
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        before_listing(&dir);
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound && !rel.is_empty() => continue,
            Err(e) => return Err(e),
        };
        for entry in entries {
            let entry = entry?;
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            if name.starts_with('.') {
                continue;
            }
            let file_type = entry.file_type()?;
            let child_rel = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if file_type.is_dir() {
                if !(rel.is_empty() && name == ARCHIVE) {
                    stack.push((entry.path(), child_rel));
                }
            } else if file_type.is_file()
                && name.ends_with(".md")
                && !(rel.is_empty() && ROOT_FILES.contains(&name.as_str()))
            {
                match entry.metadata() {
                    Ok(meta) => out.push((child_rel, Stamp::of(&meta))),
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e),
                }
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// `root` joined with a relative `/` path whose segments were built here or found by [`walk`].
pub fn abs(root: &Path, rel: &str) -> PathBuf {
    rel.split('/').fold(root.to_path_buf(), |p, s| p.join(s))
}

/// Creates the folders of `rel`'s parent one at a time under `root`, refusing any that is a
/// symlink or not a folder, so nothing written below can land outside the root.
pub fn ensure_parent(root: &Path, rel: &str) -> Result<PathBuf, BrainError> {
    let mut dir = root.to_path_buf();
    let segments: Vec<&str> = rel.split('/').collect();
    for segment in &segments[..segments.len().saturating_sub(1)] {
        if segment.is_empty() || *segment == "." || *segment == ".." || segment.contains('\\') {
            return Err(BrainError::UnsafePath(rel.to_owned()));
        }
        dir.push(segment);
        match fs::symlink_metadata(&dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return Err(BrainError::UnsafePath(rel.to_owned())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => match fs::create_dir(&dir) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    if !fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
                        return Err(BrainError::UnsafePath(rel.to_owned()));
                    }
                }
                Err(e) => return Err(BrainError::io(&dir, e)),
            },
            Err(e) => return Err(BrainError::io(&dir, e)),
        }
    }
    Ok(dir)
}

/// A fresh temporary sibling of `target` holding `text`.
fn write_temp(target: &Path, text: &str) -> Result<PathBuf, BrainError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = target
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("memory");
    let temp = target.with_file_name(format!(
        ".{name}.{}-{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let written = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)
        .and_then(|mut f| f.write_all(text.as_bytes()));
    if let Err(e) = written {
        let _ = fs::remove_file(&temp);
        return Err(BrainError::io(target, e));
    }
    Ok(temp)
}

/// Writes `text` at `rel` (replacing any file there) atomically. Returns the new file's stamp.
pub fn replace(root: &Path, rel: &str, text: &str) -> Result<Stamp, BrainError> {
    ensure_parent(root, rel)?;
    let target = abs(root, rel);
    let temp = write_temp(&target, text)?;
    if let Err(e) = fs::rename(&temp, &target) {
        let _ = fs::remove_file(&temp);
        return Err(BrainError::io(&target, e));
    }
    Stamp::read(&target).map_err(|e| BrainError::io(&target, e))
}

/// Writes `text` at `rel` only if nothing is there (not even a dangling symlink), atomically (a
/// hard link of a complete temporary file, which fails rather than replace): `Ok(None)` when
/// something already is.
pub fn create_new(root: &Path, rel: &str, text: &str) -> Result<Option<Stamp>, BrainError> {
    ensure_parent(root, rel)?;
    let target = abs(root, rel);
    let temp = write_temp(&target, text)?;
    let placed = match fs::hard_link(&temp, &target) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        // A file system without hard links: the caller's `BEGIN IMMEDIATE` already keeps other
        // writers of this vault out, so check-then-rename is enough there.
        Err(_) if fs::symlink_metadata(&target).is_err() => {
            fs::rename(&temp, &target).map(|()| true)
        }
        Err(_) => Ok(false),
        Ok(()) => Ok(true),
    };
    let _ = fs::remove_file(&temp);
    match placed {
        Ok(true) => Stamp::read(&target)
            .map(Some)
            .map_err(|e| BrainError::io(&target, e)),
        Ok(false) => Ok(None),
        Err(e) => Err(BrainError::io(&target, e)),
    }
}

/// Moves the live file `rel` to `archive/<rel>` (replacing an older archived copy); returns the
/// archive's relative path.
pub fn archive(root: &Path, rel: &str) -> Result<String, BrainError> {
    let archived = format!("{ARCHIVE}/{rel}");
    ensure_parent(root, &archived)?;
    let from = abs(root, rel);
    let to = abs(root, &archived);
    fs::rename(&from, &to).map_err(|e| BrainError::io(&from, e))?;
    Ok(archived)
}

/// Reads a live file as text.
pub fn read(root: &Path, rel: &str) -> Result<String, BrainError> {
    let path = abs(root, rel);
    fs::read_to_string(&path).map_err(|e| BrainError::io(&path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kebab_accepts_names_the_reference_generates() {
        for ok in ["alice-chen", "a", "promoted-x-merged-1740000000000", "2026"] {
            assert!(is_kebab(ok), "{ok}");
        }
        for bad in [
            "", "-a", "a-", "a--b", "Alice", "a b", "../x", "a/b", "a\\b", "/etc", "a\0b", "c:x",
            "é", ".", "..",
        ] {
            assert!(!is_kebab(bad), "{bad:?}");
        }
    }
}
