//! Signed bindings: an HMAC-SHA256 over the canonical binding, so a URL's `scopeTeamId` /
//! `roomTeamId` / … cannot be edited by whoever holds the URL.
//!
//! Owns: the canonical string (the reference's: `v1`, team, agent, tenant, delegate flag, joined
//! by U+001F), the signature (lowercase hex), its constant-time check, and the install's key: the
//! `CLAWBOO_BINDING_KEY` environment variable, else a file `clawboo-binding.key` beside the
//! database, created on first use with mode 0600 (64 random hex characters; the key is those
//! characters' bytes, as in the reference).
//!
//! Guarantees: the key file is written atomically and the first writer wins (a second process
//! reads the first one's key); verification never panics on any input.
//! Must never: print or log the key; put the key in a URL.

use std::io::Write;
use std::path::{Path, PathBuf};

use ring::hmac;

use crate::binding::{AUTHOR_AGENT, Binding, ROOM_TEAM, SCOPE_AGENT, SCOPE_TEAM, SCOPE_TENANT};

/// The environment variable that overrides the key file.
pub const KEY_ENV: &str = "CLAWBOO_BINDING_KEY";

/// The key file's name, beside the database.
pub const KEY_FILE: &str = "clawboo-binding.key";

/// The URL parameter that carries the signature.
pub const SIG_PARAM: &str = "sig";

/// The install's signing key.
#[derive(Clone)]
pub struct BindingKey(hmac::Key);

impl std::fmt::Debug for BindingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BindingKey(..)")
    }
}

/// Why the key could not be had.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The key file could not be read or written.
    #[error("binding key {path}: {source}")]
    Io {
        /// The key file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// The key file exists but holds nothing.
    #[error("binding key {path} is empty; delete it to have a new one made")]
    Empty {
        /// The key file.
        path: PathBuf,
    },
}

/// The binding a signature covers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Signed<'a> {
    /// The team (`""` for none).
    pub team: &'a str,
    /// The agent (`""` for none).
    pub agent: &'a str,
    /// The tenant (`""` for none).
    pub tenant: &'a str,
}

impl<'a> Signed<'a> {
    /// The fields of `binding` a signature covers: its team (scope or room), its agent (scope or
    /// author) and its tenant; absent fields are empty.
    pub fn of(binding: &'a Binding) -> Self {
        Self {
            team: binding
                .get(SCOPE_TEAM)
                .or_else(|| binding.get(ROOM_TEAM))
                .unwrap_or_default(),
            agent: binding
                .get(SCOPE_AGENT)
                .or_else(|| binding.get(AUTHOR_AGENT))
                .unwrap_or_default(),
            tenant: binding.get(SCOPE_TENANT).unwrap_or_default(),
        }
    }

    fn canonical(&self) -> String {
        format!(
            "v1\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}0",
            self.team, self.agent, self.tenant
        )
    }
}

impl BindingKey {
    /// A key from its text.
    pub fn from_secret(secret: &str) -> Self {
        Self(hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes()))
    }

    /// The key of the install whose database is `db_path`: `CLAWBOO_BINDING_KEY` when set (non-blank), else
    /// the key file beside the database, created on first use.
    pub fn load(db_path: &Path, env_key: Option<String>) -> Result<Self, KeyError> {
        if let Some(secret) = env_key {
            return Ok(Self::from_secret(&secret));
        }
        let path = db_path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .join(KEY_FILE);
        let io = |source| KeyError::Io {
            path: path.clone(),
            source,
        };
        if !path.exists() {
            create_key_file(&path).map_err(io)?;
        }
        let secret = std::fs::read_to_string(&path).map_err(io)?;
        let secret = secret.trim();
        if secret.is_empty() {
            return Err(KeyError::Empty { path });
        }
        Ok(Self::from_secret(secret))
    }

    /// The signature of `binding`: lowercase hex HMAC-SHA256 of the canonical string.
    pub(crate) fn sign(&self, binding: Signed<'_>) -> String {
        let tag = hmac::sign(&self.0, binding.canonical().as_bytes());
        tag.as_ref().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Whether `signature` (hex, either case) signs `binding`. Constant time in the signature.
    pub(crate) fn verify(&self, binding: Signed<'_>, signature: &str) -> bool {
        let Some(tag) = decode_hex(signature.trim()) else {
            return false;
        };
        hmac::verify(&self.0, binding.canonical().as_bytes(), &tag).is_ok()
    }
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Writes a fresh key to `path` with mode 0600: into a private temporary file first, then linked
/// into place, so no reader sees a half-written key and a concurrent writer's key wins if it was
/// first.
fn create_key_file(path: &Path) -> std::io::Result<()> {
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; 32];
    ring::rand::SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| std::io::Error::other("no system randomness"))?;
    let secret: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let temp = path.with_extension(format!("key.{}", uuid::Uuid::new_v4()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options.open(&temp).and_then(|mut file| {
        file.write_all(secret.as_bytes())?;
        file.sync_all()
    });
    let linked = written.and_then(|()| match std::fs::hard_link(&temp, path) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        other => other,
    });
    let _ = std::fs::remove_file(&temp);
    linked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a64() -> BindingKey {
        BindingKey::from_secret(&"a".repeat(64))
    }

    #[test]
    fn signatures_match_the_reference_vectors() {
        let key = a64();
        let plain = Signed {
            team: "tm1",
            agent: "boo-1",
            tenant: "",
        };
        assert_eq!(
            key.sign(plain),
            "a7908c8c40e1b1bce12318b725317c57d4d86404e0ff7c724abd09c3f1f2dff8"
        );
        let with_tenant = Signed {
            tenant: "ten",
            ..plain
        };
        assert_eq!(
            key.sign(with_tenant),
            "0e41e751d86b901ca04911642dfdf380f3ba9f852d8da253126792e6c8094001"
        );
    }

    #[test]
    fn hmac_sha256_matches_rfc_4231_case_2() {
        let key = hmac::Key::new(hmac::HMAC_SHA256, b"Jefe");
        let tag = hmac::sign(&key, b"what do ya want for nothing?");
        let hex: String = tag.as_ref().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn verification_refuses_edits_and_garbage() {
        let key = a64();
        let binding = Signed {
            team: "tm1",
            agent: "boo-1",
            tenant: "",
        };
        let sig = key.sign(binding);
        assert!(key.verify(binding, &sig));
        assert!(key.verify(binding, &sig.to_uppercase()));
        let other_team = Signed {
            team: "tm2",
            ..binding
        };
        assert!(!key.verify(other_team, &sig));
        for bad in [
            "",
            "zz",
            "deadbeef",
            "not hex",
            &sig[2..],
            "é",
            &format!("{sig}00"),
        ] {
            assert!(!key.verify(binding, bad), "{bad:?}");
        }
        assert!(!BindingKey::from_secret("other").verify(binding, &sig));
    }

    #[test]
    fn the_key_file_is_made_once_private_and_reused() {
        let dir = std::env::temp_dir().join(format!("clawboo-key-{}", crate::db::new_id()));
        let db = dir.join("clawboo.db");
        let first = BindingKey::load(&db, None).unwrap();
        let second = BindingKey::load(&db, None).unwrap();
        let binding = Signed::default();
        assert_eq!(first.sign(binding), second.sign(binding));
        let text = std::fs::read_to_string(dir.join(KEY_FILE)).unwrap();
        assert_eq!(text.len(), 64);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.join(KEY_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let from_env = BindingKey::load(&db, Some("a".repeat(64))).unwrap();
        assert_eq!(from_env.sign(binding), a64().sign(binding));
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "no temporary file is left"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
