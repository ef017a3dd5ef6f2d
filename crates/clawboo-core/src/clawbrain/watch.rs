//! Change notification for the vault, so a read can skip the walk of every file when nothing under
//! the vault changed since the last walk.
//!
//! Owns: one inotify instance per [`super::Brain`] (Linux), a watch on every folder the walk
//! visits, and the question "did anything change since I last asked?".
//!
//! Guarantees: [`Watch::changed`] is conservative. It answers `true` when any event arrived (an
//! edit, a creation, a removal, a rename, an attribute change, in any process, ours included),
//! when the kernel's queue overflowed, and always where inotify is unavailable (another system,
//! or `inotify_init1` failed), so a caller that walks on `true` never misses a change. The kernel
//! queues an event before the system call that caused it returns, so an edit finished before
//! `changed` is asked is seen. A folder is watched before it is listed (the walk calls
//! [`Watch::folder`] first), so a file created in a new folder cannot slip between the two.
//!
//! Must never: decide what changed (the walk compares stamps); block (the descriptor is
//! non-blocking).

use std::path::Path;

#[cfg(target_os = "linux")]
mod imp {
    use std::ffi::CString;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;

    /// What counts as a change of a watched folder or of a file in it.
    const MASK: u32 = libc::IN_MODIFY
        | libc::IN_CLOSE_WRITE
        | libc::IN_ATTRIB
        | libc::IN_CREATE
        | libc::IN_DELETE
        | libc::IN_MOVED_FROM
        | libc::IN_MOVED_TO
        | libc::IN_DELETE_SELF
        | libc::IN_MOVE_SELF;

    /// An inotify descriptor, or `None` where it could not be had.
    pub(super) struct Inotify(Option<OwnedFd>);

    impl Inotify {
        pub(super) fn new() -> Self {
            // SAFETY: inotify_init1 takes flags only and returns a new descriptor or -1.
            let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
            // SAFETY: a non-negative return is a descriptor we now own exclusively.
            Self((fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) }))
        }

        /// Watches `dir`; false when it cannot (the caller then walks every time).
        pub(super) fn add(&self, dir: &Path) -> bool {
            let (Some(fd), Ok(path)) = (&self.0, CString::new(dir.as_os_str().as_bytes())) else {
                return false;
            };
            // SAFETY: the descriptor is open for the life of `self`; `path` is NUL-terminated.
            let wd = unsafe {
                libc::inotify_add_watch(fd.as_raw_fd(), path.as_ptr(), MASK | libc::IN_ONLYDIR)
            };
            wd >= 0
        }

        /// Reads every queued event; true when one of them may concern a memory (see
        /// [`concerns_memories`]), or when there is no descriptor or the read failed for another
        /// reason than "none yet".
        pub(super) fn drain(&self) -> bool {
            let Some(fd) = &self.0 else {
                return true;
            };
            let mut buf = [0u8; 4096];
            let mut any = false;
            loop {
                // SAFETY: `buf` is valid for `buf.len()` bytes for the call.
                let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
                if n > 0 {
                    any |= events(&buf[..n as usize])
                        .any(|(mask, name)| concerns_memories(mask, name));
                    continue;
                }
                if n == 0 {
                    return any;
                }
                let err = std::io::Error::last_os_error();
                return match err.kind() {
                    std::io::ErrorKind::WouldBlock => any,
                    std::io::ErrorKind::Interrupted => continue,
                    _ => true,
                };
            }
        }
    }

    /// The `(mask, name)` of each `struct inotify_event` in `buf` (a whole number of them, as
    /// the kernel returns them).
    fn events(buf: &[u8]) -> impl Iterator<Item = (u32, &[u8])> {
        const HEAD: usize = 16;
        let mut at = 0;
        std::iter::from_fn(move || {
            let head = buf.get(at..at + HEAD)?;
            let word =
                |i: usize| u32::from_ne_bytes([head[i], head[i + 1], head[i + 2], head[i + 3]]);
            let (mask, len) = (word(4), word(12) as usize);
            let name = buf.get(at + HEAD..at + HEAD + len).unwrap_or(&[]);
            at += HEAD + len;
            let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
            Some((mask, &name[..end]))
        })
    }

    /// Whether an event may concern a memory file: anything on a folder, a lost-events overflow,
    /// a watched folder itself going away, or a `.md` file other than the two root files. Writes
    /// to `engine.db` and its journal (every operation makes some) and temporary files are not.
    pub(super) fn concerns_memories(mask: u32, name: &[u8]) -> bool {
        let structural = libc::IN_ISDIR
            | libc::IN_Q_OVERFLOW
            | libc::IN_DELETE_SELF
            | libc::IN_MOVE_SELF
            | libc::IN_IGNORED;
        mask & structural != 0
            || (name.ends_with(b".md") && name != b"MEMORY.md" && name != b"STRATEGY.md")
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::path::Path;

    /// No change notification here: every read walks.
    pub(super) struct Inotify;

    impl Inotify {
        pub(super) fn new() -> Self {
            Self
        }
        pub(super) fn add(&self, _dir: &Path) -> bool {
            false
        }
        pub(super) fn drain(&self) -> bool {
            true
        }
    }
}

/// Change notification for one vault.
pub struct Watch {
    inotify: imp::Inotify,
    /// False once a folder could not be watched: from then on every read walks.
    complete: std::sync::atomic::AtomicBool,
}

impl Watch {
    /// A watch with no folders yet (the first walk adds them).
    pub fn new() -> Self {
        Self {
            inotify: imp::Inotify::new(),
            complete: std::sync::atomic::AtomicBool::new(true),
        }
    }

    /// Watches `dir` (call it before listing `dir`).
    pub fn folder(&self, dir: &Path) {
        if !self.inotify.add(dir) {
            self.complete
                .store(false, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Whether anything under the watched folders may have changed since the last call.
    pub fn changed(&self) -> bool {
        let events = self.inotify.drain();
        events || !self.complete.load(std::sync::atomic::Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_a_creation_and_a_removal_are_each_seen_once() {
        let dir = std::env::temp_dir().join(format!("clawbrain-watch-{}", std::process::id()));
        let sub = dir.join("entities");
        std::fs::create_dir_all(&sub).unwrap();
        let file = sub.join("a.md");
        std::fs::write(&file, "one").unwrap();
        let watch = Watch::new();
        watch.folder(&dir);
        watch.folder(&sub);
        watch.changed();
        if cfg!(target_os = "linux") {
            assert!(!watch.changed(), "nothing happened since the last question");
        }
        std::fs::write(&file, "two").unwrap();
        assert!(watch.changed(), "an edit in place");
        if cfg!(target_os = "linux") {
            assert!(!watch.changed(), "each change is reported once");
        }
        std::fs::write(sub.join("b.md"), "new").unwrap();
        assert!(watch.changed(), "a creation");
        std::fs::remove_file(sub.join("b.md")).unwrap();
        assert!(watch.changed(), "a removal");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn only_events_that_may_concern_a_memory_count() {
        use imp::concerns_memories;
        assert!(concerns_memories(libc::IN_MODIFY, b"alice-chen.md"));
        assert!(concerns_memories(
            libc::IN_CREATE | libc::IN_ISDIR,
            b"projects"
        ));
        assert!(concerns_memories(libc::IN_Q_OVERFLOW, b""));
        assert!(!concerns_memories(libc::IN_MODIFY, b"engine.db-wal"));
        assert!(!concerns_memories(libc::IN_MODIFY, b"engine.db"));
        assert!(!concerns_memories(libc::IN_CLOSE_WRITE, b"MEMORY.md"));
        assert!(!concerns_memories(
            libc::IN_CREATE,
            b".tmp-alice-chen.md.1234"
        ));
    }

    #[test]
    fn a_folder_that_cannot_be_watched_makes_every_read_walk() {
        let watch = Watch::new();
        watch.folder(Path::new("/nonexistent/clawbrain/folder"));
        assert!(watch.changed());
        assert!(watch.changed());
    }
}
